"""Checking a bundle: re-derive the verdicts of a redacted log (with its capture and route file, which
its manifest names beside it) and compare each with the digest its manifest records.

A bundle comes from someone else: its manifest may make the check read only files inside the bundle's
folder (:func:`_inside`), and a capture that is another session's (another bundle's, written over this
one's) is said so (:func:`_foreign_capture`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..capture import CapturedRequest, load_capture
from ..errors import DshAuditError, UsageError
from ..log import is_zstd_head, open_regular
from ..session import Headers, Session, find_parent, open_session, routes_from
from ..wire import PiRoutes, load_routes
from ._family import family_cause, parent_log, parent_session
from ._manifest import _TAMPERED_HINT, Manifest, read_manifest
from ._notes import Unproven
from ._verdicts import digest, session_verdicts

__all__ = ["BundleCheck", "check_bundle"]


@dataclass(frozen=True, slots=True)
class BundleCheck:
    """What :func:`check_bundle` found: each category's recorded and recomputed digest, how many rows
    each holds (``counts``: for ``requests``, ``breaks`` and ``cache`` one per request; ``breaks``: how
    many of those are breaks), how many captured requests the manifest records as unrendered (their diff verdicts
    compared nothing), the bundle's route file read (``route_file``; None: none, or the caller's), and why the
    diff verdicts differ when the bundle's capture holds another session's requests (``capture_note``)."""

    path: Path
    recorded: dict[str, str]
    found: dict[str, str]
    counts: dict[str, int]
    unrendered: int = 0
    breaks: int = 0
    route_file: Path | None = None  # the bundle's route configuration the verdicts were rendered with
    capture_note: str | None = None  # the capture is another session's (another bundle's, written over this one's?)
    recorded_counts: dict[str, int] = field(default_factory=dict)  # each category's row count, as the manifest says
    found_unrendered: int = 0  # the captured requests no render was compared with, here
    other_log: str | None = None  # the manifest's log name, when it is not the file checked (a note: renamed?)
    family_note: str | None = None  # why a child's verdicts moved: its parent's redaction's derivation or salt

    @property
    def miscounted(self) -> tuple[str, ...]:
        """The categories whose row count the manifest records otherwise (the diff's also when its
        count of unrendered requests is not the one found)."""
        return tuple(c for c in self.recorded if self.recorded_counts.get(c, self.counts.get(c)) != self.counts.get(c)
                     or (c == "diff" and self.unrendered != self.found_unrendered))

    @property
    def mismatched(self) -> tuple[str, ...]:
        return tuple(c for c in self.recorded if self.found.get(c) != self.recorded[c] or c in self.miscounted)

    @property
    def ok(self) -> bool:
        return not self.mismatched

    @property
    def compared(self) -> int:
        """The diff rows whose captured request was compared with a rendered body (none without a capture)."""
        return self.counts.get("diff", 0) - self.found_unrendered

    @property
    def unproven(self) -> str | None:
        """Why the bundle's verdicts, matching or not, do not prove its capture whole: its captured
        requests that no rendered body was compared with (their diff verdicts match the manifest's,
        which compared nothing either), and what proves them; None when every one was compared.

        Example:
            >>> check = BundleCheck(Path("c3.jsonl"), {}, {}, {"diff": 6}, 6, found_unrendered=6)
            >>> check.compared, check.unproven.startswith("6 of the 6 captured request(s) of c3.jsonl unrendered")
            (0, True)
        """
        if not self.found_unrendered:
            return None
        with_routes = ("the bundle's route configuration does not render them: ask its sender to redact it again "
                       "with --routes FILE that does" if self.route_file is not None else
                       "the bundle carries no route configuration (redacted without --routes): ask its sender to "
                       "redact it again with --routes FILE (DSH's llm-pi-ai route configuration), which the bundle "
                       "then carries redacted")
        return Unproven(f"{self.found_unrendered} of the {self.counts.get('diff', 0)} captured request(s) of "
                        f"{self.path} unrendered: their diff verdicts compared no rendered body, so its capture is "
                        f"not proven to match its log; {with_routes}")


def _inside(log: Path, name: str, manifest_file: Path, *, what: str, hint: str) -> str:
    """The file a manifest names, only when it lies inside the bundle's folder: a bundle comes from
    someone else, and its manifest must not make a check read any other file (nor, through a
    symbolic link beside the log, the file it points to). A missing one whose name after this log's
    is there is refused (:func:`_not_renamed`)."""
    folder = os.path.realpath(log.parent)
    target = os.path.realpath(log.parent / name) if name and not os.path.isabs(name) else None
    if target is None or os.path.commonpath([folder, target]) != folder or target == folder:
        linked = _linked_out(log, name, target, what=what)
        if linked is not None:
            raise UsageError(linked, path=str(manifest_file), hint=f"put the {what} itself beside the log, not a "
                                                                   "link: the check of a bundle reads no file outside "
                                                                   "its folder")
        raise UsageError(f"the manifest names a {what} outside the bundle's folder: {name!r}",
                         path=str(manifest_file), hint=hint)
    _not_renamed(log, name, manifest_file, what=what)
    return target


def _linked_out(log: Path, name: str, target: str | None, *, what: str) -> str | None:
    """Why the ``what`` a manifest names inside the bundle's folder (``name``) resolves outside it
    (to ``target``): a symbolic link in the folder points out of it. None when the name itself
    lies outside."""
    folder = os.path.abspath(log.parent)
    named = os.path.normpath(os.path.join(folder, name)) if name and target is not None else folder
    if named == folder or os.path.commonpath([folder, named]) != folder:
        return None
    if os.path.islink(named):
        return f"the {what} {name!r} is a symbolic link to {target!r}, outside the bundle's folder"
    return f"the {what} {name!r} leads outside the bundle's folder through a symbolic link, to {target!r}"


def _not_renamed(log: Path, name: str, manifest_file: Path, *, what: str) -> None:
    """Refuse a bundle whose ``what`` the manifest names ``name`` (``A.jsonl.wire.jsonl``) is
    missing while the same name after this log's (``C.jsonl.wire.jsonl``, beside ``C.jsonl``) is
    there: the bundle was renamed, and its manifest still records the old names.

    Raises:
        UsageError: so; the message names both files and the name the bundle had.
    """
    if "/" in name or os.path.lexists(log.parent / name):
        return
    for at in (at for at, char in enumerate(name) if char == "." and at):
        old, renamed = name[:at], log.name + name[at:]
        if old != log.name and os.path.lexists(log.parent / renamed):
            raise UsageError(f"the manifest names the {what} {name!r}, which is missing, and {renamed!r} is beside "
                             f"the log: was the bundle renamed from {old!r}?", path=str(manifest_file),
                             hint=f"rename {renamed!r} back to {name!r}: the manifest records the name of each "
                                  "file of the bundle, and redact --check reads no other")


def _bundle_routes(log: Path, name: str, manifest_file: Path) -> PiRoutes:
    """The redacted route configuration a manifest names, read only from inside the bundle's folder."""
    target = _inside(log, name, manifest_file, what="route file",
                     hint="keep the redacted route file beside the redacted log, as redact wrote it")
    try:
        return load_routes(target)
    except DshAuditError as exc:
        exc.hint = ("the manifest's route file is the redacted route configuration `dsh-audit redact --routes` "
                    "wrote beside the log: restore it from the bundle (or pass the original with --routes)")
        raise


def _bundle_capture(log: Path, name: str, manifest_file: Path) -> list[CapturedRequest]:
    """The redacted capture a manifest names, read only from inside the bundle's folder."""
    target = _inside(log, name, manifest_file, what="capture",
                     hint="keep the redacted capture beside the redacted log (redact --capture-output into "
                          "the folder of -o)")
    try:
        return load_capture(target)
    except DshAuditError as exc:
        exc.hint = ("the manifest's capture is the redacted capture `dsh-audit redact` wrote beside the log: "
                    "restore it from the bundle")
        raise



def check_bundle(path: str | os.PathLike[str], *, lenient: bool = False,
                 routes: str | os.PathLike[str] | PiRoutes | None = None) -> BundleCheck:
    """Re-run requests, breaks, cache (and diff, when the bundle has a capture) on a redacted log
    and compare each verdict digest with its manifest's. ``routes``: a route configuration to render
    with instead of the bundle's (a bundle made with one carries it redacted, ``<log>.routes.yml``,
    which is read by default: :func:`redact` ``routes=``).

    Raises:
        UsageError: the manifest is missing or not a dsh-audit redaction manifest; it records
            verdicts made with a route configuration, and neither the bundle (made by an older
            dsh-audit) nor ``routes`` gives one; or ``routes`` is given for verdicts made without.
        DshAuditError: the log or its capture cannot be read.
    """
    log = Path(path)
    manifest = read_manifest(log)
    manifest_file, recorded, capture_name = manifest.path, manifest.recorded, manifest.capture
    routed, route_name = manifest.routed, manifest.route_file
    if not routed and routes is not None:
        raise UsageError("the manifest's verdicts were made without a route configuration", path=str(manifest_file),
                         hint="check the bundle without --routes, as it was redacted")
    if routed and routes is None and route_name is None:
        raise UsageError("the manifest's verdicts were made with a route configuration, and the bundle (made by an "
                         "older dsh-audit) holds none", path=str(manifest_file),
                         hint="ask its sender for the route file they gave redact --routes (DSH's llm-pi-ai route "
                              "configuration; its credentials and baseURL hosts may be replaced, its routes' api "
                              "and models' contextWindow, maxTokens, reasoningEfforts and compat must stay) and pass "
                              "it with --routes FILE; or ask for the bundle redacted again by this dsh-audit, which "
                              "carries it")
    session: Session = open_session(log, lenient=lenient, foreign=False)
    _same_log(manifest, session)
    route_file = None
    if routes is None and isinstance(route_name, str):
        route_file = log.parent / route_name
        config: PiRoutes | None = _bundle_routes(log, route_name, manifest_file)
    else:
        config = routes if isinstance(routes, PiRoutes) or routes is None else routes_from(os.fspath(routes))
    if config is not None:
        session.use_routes(config)
    captures: list[CapturedRequest] | None = None
    if capture_name is not None:  # named exactly when there are diff verdicts (read_manifest)
        captures = _bundle_capture(log, capture_name, manifest_file)
    parent, parent_path = (None, None) if manifest.parent is None else _bundle_parent(
        log, manifest_file, session, manifest.parent, lenient=lenient, config=config)
    found = session_verdicts(session, captures, parent=parent)
    breaks = sum(1 for row in found["breaks"] if len(row) > 8 and row[8] == "break")
    digests = {c: digest(found[c]) for c in recorded if c in found}
    note = None
    if captures is not None and capture_name is not None and digests.get("diff") != recorded["diff"]:
        note = _foreign_capture(capture_name, captures, session.id, found["diff"])
    unrendered = sum(1 for row in found.get("diff", ()) if row[3] == "unrendered")
    moved = any(digests.get(c) != recorded.get(c) for c in ("breaks", "cache"))
    return BundleCheck(log, recorded, digests, {c: len(found[c]) for c in found}, manifest.unrendered, breaks,
                       route_file, note, manifest.counts, unrendered, _other_log(log, manifest.log),
                       family_cause(parent_path, salt_id=manifest.salt_id, key_derivation=manifest.key_derivation)
                       if moved and parent_path is not None else None)


def _other_log(log: Path, name: str) -> str | None:
    """The log name a manifest records, when it names another file than ``log`` (the file checked,
    which the manifest lies beside): the bundle's log is not found under that name (a file renamed
    after redact, or a manifest written for another log); None when it is ``log`` (or the same file
    under that name: a link)."""
    if not name or name == log.name:
        return None
    try:
        return None if os.path.samefile(log.parent / name, log) else name
    except (OSError, ValueError):  # no such file (or a name no file system holds)
        return name


def _kind(version: int, zstd: bool) -> str:
    return f"format v{version}, {'zstd' if zstd else 'plain'}"


def _same_log(manifest: Manifest, session: Session) -> None:
    """Refuse a manifest that records another format version or compression than its log's: redact
    records the copy's (the compression its name gave it), so the manifest was not written with this log.

    Raises:
        UsageError: one line naming both.
    """
    with open_regular(session.path) as handle:
        compressed = is_zstd_head(handle.read(4))
    recorded, found = (manifest.format_version, manifest.compressed), (session.format_version, compressed)
    if recorded != found:
        raise UsageError(f"the manifest records a log of {_kind(*recorded)}, and the log is {_kind(*found)}",
                         path=str(manifest.path), hint="check the log the manifest was written with: redact records "
                                                       "the format version and compression of the copy it writes")


def _bundle_parent(log: Path, manifest_file: Path, session: Session, parent_id: str, *, lenient: bool,
                   config: PiRoutes | None) -> tuple[Session | None, Path]:
    """The redacted parent session ``parent_id`` a child bundle's manifest compares it with, beside the
    child (as ``breaks`` finds a parent), and its log's path (whose manifest says why the child's verdicts
    moved, when they did: :func:`._family.family_cause`).

    Raises:
        UsageError: the child's header names another parent, or the parent's redacted log is not beside it.
    """
    if session.header.parent_session != parent_id:
        raise UsageError(f"the manifest compares this log with the parent session {parent_id}, which its header "
                         "does not name", path=str(manifest_file), hint=_TAMPERED_HINT)
    headers = Headers(lenient=lenient)
    try:
        parent_path = find_parent(log, parent_id, headers=headers)
        opened = parent_log(parent_path, headers)  # its header read to find it: read on, not opened again
    finally:
        headers.close()
    if parent_path is None:
        raise UsageError(f"the manifest's verdicts compare this child with its parent session {parent_id}, whose "
                         "redacted log is not beside it", path=str(log),
                         hint="keep the redacted parent log where redact found it (beside the child, as breaks "
                              "finds a parent)")
    return parent_session(opened, session, lenient=lenient, config=config), parent_path


def _foreign_capture(name: str, captures: Sequence[CapturedRequest], own: str, rows: list[Any]) -> str | None:
    """Why a bundle's diff verdicts differ, when its capture ``name`` is another session's: its requests
    name other sessions than ``own`` (DSH's session header), or none of them is one of the log's (``rows``:
    the diff verdicts; a pi-ai capture names no session). None when some are the log's."""
    sessions = sorted({c.session_id for c in captures if c.session_id is not None})
    if sessions and own not in sessions:
        whose = f"session {sessions[0]}'s" if len(sessions) == 1 else f"sessions {', '.join(sessions)}'"
        return f"the capture {name} holds {whose} requests, not {own}'s"
    if captures and not any(row[0] is not None and row[1] is not None for row in rows):
        return (f"none of the {len(captures)} request(s) of the capture {name} is one of {own}'s: it holds "
                "another session's")
    return None
