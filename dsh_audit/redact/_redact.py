"""Redact one session log (and its capture) into a bundle that still proves every verdict.

The bundle is the redacted log, optionally its redacted capture (``wire.jsonl``, HAR or a folder of
bodies) and its redacted route configuration (``<log>.routes.yml``, when one rendered the verdicts:
:mod:`._routes`), and a manifest
``<log>.manifest.json`` naming the dsh-audit version, the format version and a digest of every
verdict (never the salt). Each file (and a folder capture) is written to a temporary name and renamed
into place (:meth:`dsh_audit.log.ProtectedInputs.staged`), so a failure leaves nothing partial; no output
may be, or resolve to, an input or another output (checked by :meth:`dsh_audit.log.ProtectedInputs.guard`,
the guard of every command's outputs, before anything is read).
"""

from __future__ import annotations

import os
import secrets as _random
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from .._version import __version__
from ..capture import LOADERS, CapturedRequest, load_capture
from ..errors import DshAuditError, UnreadableError, UsageError
from ..log import ProtectedInputs, SessionLog, open_regular, parse_json, read_stream
from ..report import dumps_pretty
from ..session import Headers, Session, dsh_homes_of, find_parent, nearby_logs, open_session, routes_from
from ..wire import PiRoutes, home_route_files, load_routes
from ._capture import META_SUFFIX, LogRedactor, redact_body_folder, redact_capture_lines, redact_har
from ._hosts import redact_ascii, redact_url
from ._chunks import ChunkStreams
from ._log import LogRewriter, drain, teed
from ._placeholder import Placeholders
from ._redactor import KEEP_CHOICES
from ._routes import ROUTES_SUFFIX, redacted_routes
from ._verdicts import CATEGORIES, digest, session_verdicts

__all__ = ["BundleCheck", "Redaction", "check_bundle", "manifest_path", "redact", "routes_path"]

MANIFEST_SUFFIX = ".manifest.json"
_CAPTURE_FORMATS = ("wire-jsonl", "har", "body-folder")
_SNIFF_BYTES = 4096


def manifest_path(log: str | os.PathLike[str]) -> Path:
    """Where the manifest of the redacted log ``log`` lives: ``<log>.manifest.json``."""
    return Path(os.fspath(log) + MANIFEST_SUFFIX)


def routes_path(log: str | os.PathLike[str]) -> Path:
    """Where the redacted route configuration of the redacted log ``log`` lives: ``<log>.routes.yml``."""
    return Path(os.fspath(log) + ROUTES_SUFFIX)


@dataclass(frozen=True, slots=True)
class Redaction:
    """What :func:`redact` wrote and found.

    Attributes:
        output: the redacted log.
        manifest: its manifest.
        capture: the redacted capture, when one was given.
        format_version: the log's format version (kept).
        compressed: whether the log is zstd (kept, frame by frame).
        strings: content strings of the log replaced.
        capture_strings: content strings of the capture replaced (beyond the log's, which a rendered
            body takes from the redacted log).
        secrets: secrets found, by kind: occurrences and distinct values (never the values).
        dropped_headers: capture header names dropped.
        verdicts: digest of each verdict category, equal on the original and the redaction.
        mismatched: categories whose verdicts differ between original and redaction (should be
            empty; the bundle is written anyway and the CLI exits 1).
        notes: what could not be carried over (torn tails, damaged records).
        routes: whether a route configuration rendered the verdicts (``routes=``); the manifest says
            so, and :func:`check_bundle` then reads it from ``route_file``.
        route_file: the redacted route configuration written beside the log (``<log>.routes.yml``), with
            which the redacted copy's verdicts were checked; None without ``routes=``.
        unrendered: the captured requests that could not be rendered from the log (verdict
            ``unrendered``), as ``(request index, reason)``: their bodies were compared with nothing,
            so their diff verdicts prove nothing, and the manifest lists them (``"unrendered"``).
        parent: the session id of the parent a child's verdicts were compared with (its redacted log
            beside the redacted child, where ``breaks`` and :func:`check_bundle` find it), or None.
    """

    output: Path
    manifest: Path
    capture: Path | None
    format_version: int
    compressed: bool
    strings: int
    secrets: dict[str, dict[str, int]]
    dropped_headers: tuple[str, ...] = ()
    verdicts: dict[str, str] = field(default_factory=dict)
    mismatched: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    routes: bool = False
    unrendered: tuple[tuple[int | None, str], ...] = ()
    parent: str | None = None
    capture_strings: int = 0
    route_file: Path | None = None


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

    @property
    def mismatched(self) -> tuple[str, ...]:
        return tuple(c for c in self.recorded if self.found.get(c) != self.recorded[c])

    @property
    def ok(self) -> bool:
        return not self.mismatched


def _capture_format(path: Path) -> str:
    """The capture format of ``path`` (as :func:`dsh_audit.capture.load_capture` sniffs it), when
    redact can rewrite it: ``wire-jsonl``, ``har`` or ``body-folder``."""
    if not path.exists():
        load_capture(path)  # raises its one-line "capture not found"
    first = b""
    if path.is_file():
        with open_regular(path, what="capture") as handle:
            first = handle.read(_SNIFF_BYTES)
    name = next((name for name, loader in LOADERS.items() if loader.handles(path, first)), None)
    if name is None:
        load_capture(path)  # raises its one-line "not a capture format dsh-audit knows"
    if name not in _CAPTURE_FORMATS:
        raise UsageError(f"redact cannot rewrite a {name} capture yet", path=str(path),
                         hint="pass --capture a wire.jsonl or HAR file (diff still reads this capture as it is)")
    return str(name)


#: What to do when an output's folder takes no new file (or the disk fills while it is written).
_UNWRITABLE = "write the redacted files to a folder you can write to (-o, --capture-output)"


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise UnreadableError("is a folder, not a log file", path=str(path)) from None
    except OSError as exc:
        raise UnreadableError(f"cannot open: {exc.strerror}", path=str(path)) from None


def _read_log(source: Path, sink: Callable[[bytes], None], *, lenient: bool) -> Session:
    """The session of the log at ``source``, read once: every byte the reader reads is also handed
    to ``sink`` (the redacted copy is written in the same read)."""
    handle = open_regular(source)
    try:
        session = open_session(read_stream(teed(handle, sink), str(source), lenient=lenient), foreign=False)
        drain(handle, sink)  # the reader read to the end; anything it left is redacted too
    finally:
        handle.close()
    return session


class _Identifiers:
    """The records of a log on their way to ``record`` (the redaction), telling ``placeholders`` the
    session ids its texts keep verbatim (:meth:`Placeholders.keep_identifiers`) before the first text:
    ``identifiers`` (the caller's), and from the header, its first record, where DSH writes them
    (spec §1.6): its ``id``, its ``parentSession``, and the ids of the logs beside ``source`` whose
    header names it as their ``parentSession`` (its children, read through ``headers``).

    No other member names an id: a message's ``source.senderSessionId`` names the sender, a child
    (found beside its parent, as ``breaks`` finds them) or the parent (its ``parentSession``); a
    member of that name anywhere else (a tool call's arguments, a header's unknown member) is
    content. The ids are known before any text is redacted, so every text of the log, and of its
    capture after it, is redacted alike.

    The logs beside ``source`` of the session its header names as its ``parentSession`` (the parent,
    and its redaction when it lies there too) are kept open, their headers read and their events not
    (:meth:`take_parent`), so a child's parent is read whole later without opening it again;
    :meth:`close` closes those no one took.
    """

    def __init__(self, record: Callable[[object], object], placeholders: Placeholders, source: Path,
                 headers: Headers, identifiers: Iterable[str]) -> None:
        self._record, self._placeholders, self._source, self._headers = record, placeholders, source, headers
        self._extra = set(identifiers)
        self._first = True
        self._parents: dict[str, SessionLog] = {}
        placeholders.keep_identifiers(self._extra)

    def record(self, value: object) -> object:
        if self._first:
            self._first = False
            if isinstance(value, dict) and value.get("type") == "session" and "seq" not in value:
                own, parent = value.get("id"), value.get("parentSession")
                found = {i for i in (own, parent) if isinstance(i, str)}
                if isinstance(own, str) and own:
                    children, self._parents = _children(self._source, own, self._headers,
                                                        parent if isinstance(parent, str) and parent else None)
                    found |= children
                self._placeholders.keep_identifiers(found | self._extra)
        return self._record(value)

    def take_parent(self, path: Path) -> SessionLog | None:
        """The log at ``path`` when it is one of the parent's logs kept open, handed over; else None."""
        return self._parents.pop(os.path.realpath(path), None)

    def close(self) -> None:
        for log in self._parents.values():
            log.close()
        self._parents.clear()


#: The most logs of a child's parent session kept open by :func:`_children` (the parent and its redaction
#: beside it, a copy or two): any more are closed, and opened again if one of them is read.
_KEPT_PARENTS = 4


def _children(source: Path, own: str, headers: Headers,
              parent_id: str | None = None) -> tuple[set[str], dict[str, SessionLog]]:
    """The session ids of the logs beside ``source`` (where ``breaks`` finds a child's parent) whose
    header names ``own`` as their ``parentSession``: the parent's text may name them before any
    structural member does (a tool result saying a subagent started). Each header is read once
    through ``headers`` (which keeps the ids, for :func:`_family`), none held open but the logs of
    session ``parent_id`` (the log's own parent, when it has one; :data:`_KEPT_PARENTS` at most), handed
    over open by real path, their events unread, to be read whole without opening them again
    (:func:`_parent`)."""
    found: set[str] = set()
    kept: dict[str, SessionLog] = {}
    seen = {os.path.realpath(source)}
    try:
        for folder in dict.fromkeys((source.parent, source.parent.parent)):
            for log in nearby_logs(folder):
                real = os.path.realpath(log)
                if real in seen:  # each log once (the two searches overlap)
                    continue
                seen.add(real)
                sid, parent = headers.ids(log)
                if parent_id is not None and sid == parent_id and len(kept) < _KEPT_PARENTS:
                    taken = headers.take(log)
                    if isinstance(taken, SessionLog):
                        kept[real] = taken
                headers.release()
                if sid and parent == own:
                    found.add(sid)
    except BaseException:
        for taken in kept.values():
            taken.close()
        raise
    finally:
        headers.release()
    return found, kept


def _compare(before: dict[str, list[Any]], after: dict[str, list[Any]]) -> tuple[dict[str, str], tuple[str, ...]]:
    digests = {c: digest(before[c]) for c in CATEGORIES if c in before}
    return digests, tuple(c for c in digests if digest(after.get(c, [])) != digests[c])


def _salt_bytes(salt: str) -> bytes:
    """The bytes of a text salt: the very bytes given in argv or the environment, also when they are
    not UTF-8 (Python carries those as lone surrogates U+DC80-U+DCFF); any other lone surrogate
    (from a caller of :func:`redact`) as its UTF-8 form."""
    try:
        return salt.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return salt.encode("utf-8", "surrogatepass")


def redact(path: str | os.PathLike[str], output: str | os.PathLike[str], *, salt: str | bytes | None = None,
           keep: Iterable[str] = (), tool_names: bool = True, capture: str | os.PathLike[str] | None = None,
           capture_output: str | os.PathLike[str] | None = None, force: bool = False,
           lenient: bool = False, routes: str | os.PathLike[str] | PiRoutes | None = None,
           identifiers: Iterable[str] = (), alone: bool = False, any_capture: bool = False) -> Redaction:
    """Write a redacted copy of one session log (and its capture) with a verdict manifest.

    Args:
        path: the session log (plain or zstd, v0-v4).
        output: the redacted log to write (same format version and compression).
        salt: the placeholder salt; equal salts give equal placeholders across runs. Default: a
            random one (never written anywhere).
        keep: parts kept verbatim (secrets still go): ``paths``, ``system``, ``titles``, ``tools``.
        tool_names: keep tool names (default) or replace them too.
        capture: a ``wire.jsonl`` or HAR capture, or a folder of JSON bodies, of the log's requests,
            redacted with the same placeholders (a folder to a new folder, file names kept).
        capture_output: where the redacted capture goes (default: ``<output>.<the capture's file or
            folder name>``, ``<output>.wire.jsonl`` for a ``wire.jsonl``, beside ``<output>.manifest.json``).
        force: replace existing output files (never an input).
        lenient: read tokenised test fixtures (see :func:`dsh_audit.log.read_log`).
        routes: DSH's ``llm-pi-ai`` route configuration (a file, as ``--routes`` takes, or one
            read already), with which both logs' requests are routed and rendered (a hand-declared
            pi-ai route's requests are rendered only with it); the redacted copy's verdicts are then
            checked with it too (:func:`check_bundle` ``routes=``). Default: none (not even the DSH
            home's, which a check of the bundle elsewhere would not find).
        identifiers: more session ids to keep verbatim in every text (the ids of the log's family
            that do not lie beside it). The ids its header names (its own, its ``parentSession``) and
            those of its children beside it (the logs whose header names it as their
            ``parentSession``, where ``breaks`` finds them) are always kept: ``breaks`` dates a
            child's spawn by the first mention of its id in the parent, often a tool result's text.
            Only a string of the shape of a session id is kept (a UUID, after an optional prefix
            such as ``session-``: :meth:`Placeholders.keep_identifiers`).
        alone: redact a fork or subagent child whose parent log lies beside it (where ``breaks``
            finds it and compares the child with it) alone, its verdicts compared without the parent
            on both sides, as the recipient sees them without it. Default: refused (a usage error
            naming the parent), since the bundle would not prove the verdicts seen beside the parent.
        any_capture: redact a capture none of whose requests is one of the log's (another
            session's). Default: refused (a usage error); a capture some of whose requests match none
            of the log's is redacted with a note saying how many.

    Raises:
        UsageError: an empty salt, an unknown ``keep`` part, ``tools`` kept with ``tool_names=False``
            (``--keep tools`` keeps the tool names ``--redact-tool-names`` would replace: the two
            contradict each other), an output that exists without
            ``force``, an output (log, manifest, route file or capture) that is or resolves to an input
            or another of its outputs (or, for a folder capture, lies inside it or holds it), that
            is a folder, a FIFO or a device, or whose folder does not exist or takes no new file (all in
            the words of :meth:`dsh_audit.log.ProtectedInputs.guard`, as every command's), a capture
            format redact cannot rewrite.
        DshAuditError: the log or the capture cannot be read.

    Example:
        >>> result = redact("session.jsonl", "shared/session.jsonl", salt="s3cret")  # doctest: +SKIP
        >>> result.mismatched, sorted(result.secrets)  # doctest: +SKIP
        ((), ['openai_api_key'])
    """
    if os.fspath(output) == "" or (capture_output is not None and os.fspath(capture_output) == ""):
        raise UsageError("the output path is empty", hint="name a file with -o (and --capture-output)")
    source, target = Path(path), Path(output)
    kept = frozenset(keep)
    unknown = sorted(kept - set(KEEP_CHOICES))
    if unknown:
        raise UsageError(f"unknown --keep part {unknown[0]!r}", hint=f"choose from {', '.join(KEEP_CHOICES)}")
    if "tools" in kept and not tool_names:
        raise UsageError("--keep tools and --redact-tool-names contradict each other (the tools kept verbatim "
                         "hold their names)", hint="drop one of them")
    if salt is not None and not salt:
        raise UsageError("the salt is empty", hint="give a non-empty --salt, or none for a random one")
    key = _salt_bytes(salt) if isinstance(salt, str) else salt if salt is not None else _random.token_bytes(32)
    capture_source = Path(capture) if capture is not None else None
    inputs = (source, capture_source, None if routes is None or isinstance(routes, PiRoutes) else Path(routes))
    manifest, route_target, capture_target = _targets(inputs, target, capture_output, force=force,
                                                      routed=routes is not None)
    config = routes if isinstance(routes, PiRoutes) or routes is None else routes_from(os.fspath(routes))
    redactor = LogRedactor(Placeholders(key), keep=kept, tool_names=tool_names)
    return _write(source, target, manifest, capture_source, capture_target, redactor, config, kept, tool_names,
                  lenient=lenient, identifiers=identifiers, alone=alone, any_capture=any_capture,
                  route_target=route_target)


def _targets(inputs: tuple[Path | None, ...], target: Path, capture_output: str | os.PathLike[str] | None, *,
             force: bool, routed: bool) -> tuple[Path, Path | None, Path | None]:
    """Where the redacted files go: the manifest, the route file (when ``routed``) and the capture
    output (when ``inputs`` has a capture, its second item), each refused by
    :meth:`dsh_audit.log.ProtectedInputs.guard` (in its one wording for every command) when it is, or
    resolves to, an input or another of these outputs, exists without ``force``, or cannot be written;
    a body folder's capture output is a folder (never one that holds an input or another output)."""
    capture_source = inputs[1]
    evidence = ProtectedInputs()
    for item in inputs:
        if item is not None:
            evidence.add(str(item))
    manifest = manifest_path(target)
    route_target = routes_path(target) if routed else None
    for path, what, hint in ((target, "output", None),
                             (manifest, "manifest", "choose another -o path (the manifest is OUTPUT.manifest.json)"),
                             (route_target, "route file",
                              "choose another -o path (the redacted route file is OUTPUT.routes.yml)")):
        if path is not None:
            evidence.guard(path, what=what, force=force, hint=hint)
            evidence.claim(path, what=what)
    if capture_source is None:
        return manifest, route_target, None
    hint = None
    if capture_output is None:  # OUTPUT.<the capture's name>, as the manifest and the route file are named
        name = capture_source.name or Path(os.path.abspath(capture_source)).name
        capture_target = Path(f"{os.fspath(target)}.{name}")
        hint = "pass --capture-output (the default is OUTPUT.<the capture's name>)"
    else:
        capture_target = Path(capture_output)
    evidence.guard(capture_target, what="capture output", force=force, folder=capture_source.is_dir(),
                   replaces=(".json",), hint=hint)
    return manifest, route_target, capture_target


def _write(source: Path, target: Path, manifest: Path, capture_source: Path | None, capture_target: Path | None,
           redactor: LogRedactor, config: PiRoutes | None, kept: frozenset[str], tool_names: bool, *,
           lenient: bool, identifiers: Iterable[str] = (), alone: bool = False,
           any_capture: bool = False, route_target: Path | None = None) -> Redaction:
    """Redact the log at ``source`` (and its capture) to temporary files, check the copy's verdicts
    (with the redacted route configuration written to ``route_target``, when ``config`` is given) and
    rename the files into place (the outputs were checked by :func:`redact`)."""
    streams = ChunkStreams(redactor)
    # the headers of the logs beside the source, each read once: for its children's ids, and its parent
    with _staged_file(target, what="output") as (log_out, log_temp), closing(Headers(lenient=lenient)) as headers, \
            closing(_Identifiers(streams.record, redactor.placeholders, source, headers, identifiers)) as learn, \
            ExitStack() as parent_logs:
        rewriter = LogRewriter(log_out, learn.record, path=str(source))
        original = _read_log(source, rewriter.feed, lenient=lenient)
        if config is not None:
            original.use_routes(config)
        streams.end()
        notes = rewriter.finish()
        family, parent_path, redacted_parent = _family(source, target, original, alone=alone, headers=headers)
        # each parent log read whole from the open log whose header was read to find it, never opened again
        parent_log = _opened(parent_path, headers, learn)
        redacted_parent_log = _opened(redacted_parent, headers, learn)
        for opened in (parent_log, redacted_parent_log):
            if isinstance(opened, SessionLog):  # read and closed by _parent; closed here on an error before
                parent_logs.callback(opened.close)
        learn.close()  # the other logs of the parent's session it kept open
        headers.close()
        notes.extend(family)
        redactor.reading_log = False  # what the log replaced is known; the capture's strings follow it
        log_strings = redactor.strings
        capture_format = _capture_format(capture_source) if capture_source is not None else None
        captures = load_capture(capture_source, format=capture_format) if capture_source is not None else None
        reasons: list[str] = []
        parent = _parent(parent_log, original, lenient=lenient, config=config)
        before = session_verdicts(original, captures, unrendered=reasons, parent=parent)
        unrendered = tuple(zip((row[0] for row in before.get("diff", ()) if row[3] == "unrendered"), reasons))
        if unrendered:  # their diff verdicts compared nothing: said, never claimed unchanged
            homes = [] if config is not None else [f for home in dsh_homes_of(source) for f in home_route_files(home)]
            notes.append(_unrendered_note(unrendered, routed=config is not None, home_files=homes))
        log_out.flush()
        redacted = open_session(log_temp, lenient=lenient, foreign=False)
        # the copy's verdicts are rendered with the route file the bundle carries, as check_bundle renders them
        route_temp, bundle_config = None, None
        if config is not None and route_target is not None:
            route_out, route_temp = parent_logs.enter_context(_staged_file(route_target, what="route file"))
            document = redacted_routes(config, url=lambda url: redact_url(url, redactor),
                                       value=lambda text: redact_ascii(text, redactor))
            route_out.write(dumps_pretty(document).encode("utf-8") + b"\n")
            route_out.flush()
            bundle_config = load_routes(route_temp)
        if bundle_config is not None:
            redacted.use_routes(bundle_config)
        capture_data = b""
        capture_files: dict[str, bytes] | None = None
        dropped: list[str] = []
        if captures is not None and capture_source is not None and capture_format == "body-folder":
            capture_files, dropped = redact_body_folder(captures, original, redacted, redactor)
            notes.extend(_left_out(capture_source, capture_files))
        elif captures is not None and capture_source is not None:
            raw = _read(capture_source)
            if capture_format == "har":
                capture_data, dropped = redact_har(parse_json(raw), captures, original, redacted, redactor,
                                                   path=str(capture_source))
            else:
                lines, dropped = redact_capture_lines(raw.splitlines(), captures, original, redacted, redactor,
                                                      path=str(capture_source))
                capture_data = b"".join(lines)
        with _staged_capture(capture_target, capture_data, capture_files) as capture_temp:
            after_captures = None if capture_temp is None else load_capture(capture_temp, format=capture_format)
            after = session_verdicts(redacted, after_captures,
                                     parent=_parent(redacted_parent_log, redacted, lenient=lenient,
                                                    config=bundle_config))
            if captures is not None and capture_source is not None:  # refused here: nothing is renamed yet
                notes.extend(_unmatched(before["diff"], captures, capture_source, any_capture=any_capture))
            digests, mismatched = _compare(before, after)
            if mismatched and bundle_config is not None:
                notes.append(f"the copy's verdicts were rendered with the bundle's redacted route file "
                             f"{route_target.name if route_target is not None else ''}: a route whose internal "
                             "baseURL host names a vendor that pi-ai's compat detection reads (deepseek.com, "
                             "openrouter.ai...) renders otherwise once its host is replaced")
            result = Redaction(
                output=target, manifest=manifest, capture=capture_target, format_version=original.format_version,
                compressed=rewriter.compressed, strings=log_strings, capture_strings=redactor.strings - log_strings,
                secrets={k: {"occurrences": n, "distinct": len(redactor.secret_values.get(k, ()))}
                         for k, n in sorted(redactor.secrets.items())},
                dropped_headers=tuple(dropped), verdicts=digests, mismatched=mismatched, notes=tuple(notes),
                routes=config is not None, unrendered=unrendered,
                parent=None if parent is None else parent.id, route_file=route_target)
            with _staged_file(manifest, what="manifest") as (manifest_out, manifest_temp):
                # written as every JSON output is: a parent id's lone surrogate, C1 control or bidi
                # character as its \uXXXX escape (orjson refuses the first, and would write the others raw)
                manifest_out.write(dumps_pretty(_manifest(result, before, kept, tool_names)).encode("utf-8"))
                manifest_out.write(b"\n")
                manifest_out.flush()
                for temp, path in ((log_temp, target), (route_temp, route_target), (capture_temp, capture_target),
                                   (manifest_temp, manifest)):
                    if temp is not None and path is not None:
                        ProtectedInputs.commit(temp, path)  # a body folder replaces the folder there (--force)
    return result


@contextmanager
def _staged_file(target: Path, *, what: str) -> Iterator[tuple[IO[bytes], Path]]:
    """A new temporary file beside ``target``, open for writing, removed unless renamed into place
    (:meth:`dsh_audit.log.ProtectedInputs.staged`; ``what``: the output, for its errors)."""
    with ProtectedInputs.staged(target, what=f"the {what}", hint=_UNWRITABLE) as temp, open(temp, "wb") as handle:
        yield handle, temp


@contextmanager
def _staged_capture(target: Path | None, data: bytes, files: dict[str, bytes] | None) -> Iterator[Path | None]:
    """The redacted capture under a temporary name beside ``target`` (None: no capture): a file of
    ``data``, or a folder of ``files`` when given."""
    if target is None:
        yield None
    elif files is not None:
        with ProtectedInputs.staged(target, what="the capture output", folder=True, hint=_UNWRITABLE) as folder:
            for name, body in files.items():
                with open(folder / name, "xb") as handle:
                    handle.write(body)
            yield folder
    else:
        with _staged_file(target, what="capture output") as (out, temp):
            out.write(data)
            out.flush()
            yield temp


def _family(source: Path, target: Path, session: Session, *, alone: bool,
            headers: Headers) -> tuple[list[str], Path | None, Path | None]:
    """A fork or subagent child whose parent log lies beside it (where ``breaks`` and ``cache`` find it
    and compare the child with it): the notes, the parent's log and its redacted log beside ``target``
    (where the recipient's ``breaks`` finds it), so the verdicts compared are the child's with its
    parent on both sides. Nothing when the parent is not beside the child (its verdicts are its own
    alone, there as in the bundle) or with ``alone`` (a note says the parent was left out). Each
    header is read once, through ``headers``.

    Raises:
        UsageError: the parent lies beside the child, but no redaction of it beside ``target`` (the log
            of the parent's id there has no redaction manifest beside it: a plain copy).
    """
    parent_id = session.header.parent_session
    if not isinstance(parent_id, str) or not parent_id:
        return [], None, None
    parent = find_parent(source, parent_id, headers=headers)
    redacted = find_parent(target, parent_id, headers=headers) if parent is not None and not alone else None
    if parent is None:
        return [], None, None
    if alone:
        return [f"redacted alone: its verdicts were compared without its parent log {parent} (beside it, breaks "
                "compares the two); redact the parent too, with the same salt, to give the recipient both"], None, None
    if redacted is not None and os.path.realpath(redacted) != os.path.realpath(parent) \
            and not os.path.isfile(manifest_path(redacted)):
        # a plain copy of the parent (a backup, another export), not its redaction: a redaction has its manifest
        raise UsageError(f"the parent session's log beside the output, {redacted}, is no redaction of it (no "
                         f"{manifest_path(redacted).name} beside it), and no redaction of the parent lies beside "
                         "the output", path=str(source),
                         hint="move that copy away and redact the parent first, with the same --salt, with -o "
                              "beside this child's -o (as breaks finds a parent); or pass --alone to compare this "
                              "child's verdicts without its parent")
    if redacted is None or os.path.realpath(redacted) == os.path.realpath(parent):
        raise UsageError(f"this log is a child of {parent}, beside it, which its breaks and cache verdicts there "
                         "compare it with, and no redaction of that parent lies beside the output", path=str(source),
                         hint="redact the parent first, with the same salt, into the layout the logs have (the "
                              "child's -o beside it, as breaks finds a parent); or pass --alone to compare this "
                              "child's verdicts without its parent")
    return [f"verdicts compared with the parent session {parent_id} on both sides: {parent} and its redaction "
            f"{redacted}"], parent, redacted


def _opened(path: Path | None, headers: Headers, kept: _Identifiers | None = None) -> Path | SessionLog | None:
    """The parent log at ``path`` (None: none) open, its header read by the search that found it: kept
    open by ``kept`` (:func:`_children`), or by ``headers`` (:func:`dsh_audit.session.find_parent`), or
    opened here; ``path`` itself when it cannot be read (read again then, to raise its error)."""
    if path is None:
        return None
    log = kept.take_parent(path) if kept is not None else None
    if log is None:
        taken = headers.take(path)
        log = taken if isinstance(taken, SessionLog) else None
    return path if log is None else log


def _parent(source: Path | SessionLog | None, child: Session, *, lenient: bool,
            config: PiRoutes | None) -> Session | None:
    """The parent session at ``source`` (None: none; an open log whose header is read: read on from there,
    not opened again), read watching for a subagent child's id (its first mention in the parent dates
    the spawn), with the route configuration the child takes."""
    if source is None:
        return None
    watch = frozenset() if child.header.seed_length else frozenset({child.id})
    parent = open_session(source, lenient=lenient, watch=watch, foreign=False)
    if config is not None:
        parent.use_routes(config)
    return parent


def _unmatched(rows: list[Any], captures: Sequence[CapturedRequest], capture: Path, *,
               any_capture: bool) -> list[str]:
    """A note on the captured requests that match none of the log's (``rows``: the diff verdicts);
    refused when none matches at all, unless ``any_capture``.

    Raises:
        UsageError: a capture of one or more requests, none of them one of the log's.
    """
    captured = len(captures)
    matched = sum(1 for row in rows if row[0] is not None and row[1] is not None)
    strays = [row for row in rows if row[0] is None and row[1] is not None]
    if not strays:
        return []
    # a foreign row is a capture naming another session in DSH's header, or one without it that is not an LLM call
    named = {c.position for c in captures if c.session_id is not None}
    foreign = sum(1 for row in strays if row[3] == "foreign" and row[1] in named)
    other = sum(1 for row in strays if row[3] == "foreign") - foreign
    counts = [f"{foreign} of another session"] * bool(foreign) + [f"{other} not LLM call(s)"] * bool(other)
    whose = f" ({', '.join(counts)})" if counts else ""
    if not matched and captured and not any_capture:
        raise UsageError(f"none of the {captured} captured request(s) is one of this log's{whose}: is it the "
                         "capture of another session?", path=str(capture),
                         hint="pass the capture of this session (or --any-capture to redact it anyway)")
    return [f"{len(strays)} of {captured} captured request(s) match none of the log's requests{whose}: they are "
            "redacted as content, and prove nothing about this log"]


def _unrendered_note(unrendered: tuple[tuple[int | None, str], ...], *, routed: bool,
                     home_files: Sequence[str] = ()) -> str:
    """What :func:`redact` says of the captured requests it could not render: how many, why (each
    reason once, with how many it holds for) and what settles it: ``home_files``, the route files of
    the DSH home the log sits in, which redact does not read by itself, named."""
    counts: dict[str, int] = {}
    for _, reason in unrendered:
        counts[reason] = counts.get(reason, 0) + 1
    why = "; ".join(reason if n == 1 else f"{n} x {reason}" for reason, n in counts.items())
    settle = ""
    if not routed and any("--routes" in reason for reason in counts):
        home = ""
        if len(home_files) == 1:
            home = (f" (this log's DSH home holds it in {home_files[0]}, which redact does not read by itself: "
                    f"--routes {home_files[0]})")
        elif home_files:
            home = (f" (this log's DSH home composes it from {', '.join(home_files)}, which redact does not read "
                    "by itself)")
        settle = f"; redact again with --routes FILE{home}: the bundle then carries it, redacted, for --check"
    return (f"{len(unrendered)} captured request(s) unrendered ({why}): their diff verdicts compared nothing, so "
            f"the redacted capture is not proven to match the redacted log{settle}")


def _left_out(folder: Path, written: dict[str, bytes]) -> list[str]:
    """A note on what a body folder holds beside its bodies and their sidecars (not copied)."""
    others = sorted(p.name for p in folder.iterdir() if p.name not in written)
    if not others:
        return []
    orphans = sum(name.endswith(META_SUFFIX) for name in others)
    one = len(others) == 1
    return [f"left out {len(others)} entr{'y' if one else 'ies'} of the capture folder that {'is' if one else 'are'} "
            f"neither a body nor a body's sidecar ({orphans} sidecar(s) without a body)"]


def _manifest(result: Redaction, before: dict[str, list[Any]], keep: frozenset[str], tool_names: bool) -> dict[str, Any]:
    return {
        "tool": "dsh-audit",
        "version": __version__,
        "format_version": result.format_version,
        "compression": "zstd" if result.compressed else "none",
        "log": result.output.name,
        "capture": None if result.capture is None else os.path.relpath(result.capture, result.output.parent),
        "kept": sorted(keep) + (["tool names"] if tool_names else []),
        "secrets": result.secrets,
        "routes": result.routes,
        # the redacted route configuration the verdicts were rendered with, beside the log
        "route_file": None if result.route_file is None else result.route_file.name,
        # the captured requests no render was compared with (their diff verdicts are "unrendered")
        "unrendered": {"count": len(result.unrendered), "requests": [index for index, _ in result.unrendered]},
        # a child's verdicts compared with its parent: its redacted log beside this one (as breaks finds it)
        "parent": result.parent,
        "verdicts": {c: {"count": len(before[c]), "digest": result.verdicts[c]} for c in result.verdicts},
    }


#: The largest manifest read: one holds a digest and a count per verdict category.
MANIFEST_LIMIT = 16 << 20


def _inside(log: Path, name: str, manifest_file: Path, *, what: str, hint: str) -> str:
    """The file a manifest names, only when it lies inside the bundle's folder: a bundle comes from
    someone else, and its manifest must not make a check read any other file."""
    folder = os.path.realpath(log.parent)
    target = os.path.realpath(log.parent / name) if name and not os.path.isabs(name) else None
    if target is None or os.path.commonpath([folder, target]) != folder or target == folder:
        raise UsageError(f"the manifest names a {what} outside the bundle's folder: {name!r}",
                         path=str(manifest_file), hint=hint)
    return target


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


def _bundle_name(name: object) -> object:
    """``name``, a file name a manifest gives (its capture, its route file), when a file system
    could hold it: no NUL, no lone surrogate, no part longer than 255 bytes (else ValueError: the
    manifest is not one redact wrote). A value that is not a string is left to its reader."""
    if isinstance(name, str) and ("\x00" in name or any(len(part.encode("utf-8")) > 255
                                                         for part in name.split("/"))):
        raise ValueError("name")
    return name


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
    manifest_file = manifest_path(log)
    if not os.path.lexists(manifest_file):
        raise UsageError("no redaction manifest beside the log", path=str(manifest_file),
                         hint="check the log `dsh-audit redact` wrote, with its .manifest.json")
    with open_regular(manifest_file, what="redaction manifest") as handle:  # never a FIFO or a device
        data = handle.read(MANIFEST_LIMIT + 1)
    try:
        if len(data) > MANIFEST_LIMIT:
            raise ValueError("too large")
        manifest = parse_json(data)  # as JSON.parse reads it: a lone surrogate's escape too
        recorded = {c: str(v["digest"]) for c, v in manifest["verdicts"].items()}
        if not {"requests", "breaks", "cache"} <= recorded.keys():  # what every redaction records
            raise ValueError("verdicts")
        capture_name = _bundle_name(manifest.get("capture"))
        routed = manifest.get("routes", False)
        if not isinstance(routed, bool):
            raise ValueError("routes")
        unrendered = manifest.get("unrendered", {"count": 0})["count"]  # absent from older manifests
        if type(unrendered) is not int or unrendered < 0:
            raise ValueError("unrendered")
        parent_id = manifest.get("parent")  # absent from older manifests
        if parent_id is not None and (not isinstance(parent_id, str) or not parent_id):
            raise ValueError("parent")
        route_name = _bundle_name(manifest.get("route_file"))  # absent from older manifests
        if route_name is not None and (not routed or not isinstance(route_name, str)):
            raise ValueError("route_file")
    except (ValueError, KeyError, TypeError, AttributeError):
        raise UsageError("not a dsh-audit redaction manifest", path=str(manifest_file)) from None
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
    route_file = None
    if routes is None and isinstance(route_name, str):
        route_file = log.parent / route_name
        config: PiRoutes | None = _bundle_routes(log, route_name, manifest_file)
    else:
        config = routes if isinstance(routes, PiRoutes) or routes is None else routes_from(os.fspath(routes))
    if config is not None:
        session.use_routes(config)
    captures: list[CapturedRequest] | None = None
    if "diff" in recorded:
        if not isinstance(capture_name, str):
            raise UsageError("the manifest records diff verdicts but names no capture", path=str(manifest_file))
        captures = _bundle_capture(log, capture_name, manifest_file)
    parent = None
    if parent_id is not None:
        if session.header.parent_session != parent_id:
            raise UsageError(f"the manifest compares this log with the parent session {parent_id}, which its header "
                             "does not name", path=str(manifest_file))
        headers = Headers(lenient=lenient)
        try:
            parent_path = find_parent(log, parent_id, headers=headers)
            parent_log = _opened(parent_path, headers)  # its header read to find it: read on, not opened again
        finally:
            headers.close()
        if parent_path is None:
            raise UsageError(f"the manifest's verdicts compare this child with its parent session {parent_id}, whose "
                             "redacted log is not beside it", path=str(log),
                             hint="keep the redacted parent log where redact found it (beside the child, as breaks "
                                  "finds a parent)")
        parent = _parent(parent_log, session, lenient=lenient, config=config)
    found = session_verdicts(session, captures, parent=parent)
    breaks = sum(1 for row in found["breaks"] if len(row) > 8 and row[8] == "break")
    digests = {c: digest(found[c]) for c in recorded if c in found}
    note = None
    if captures is not None and isinstance(capture_name, str) and digests.get("diff") != recorded["diff"]:
        note = _foreign_capture(capture_name, captures, session.id, found["diff"])
    return BundleCheck(log, recorded, digests, {c: len(found[c]) for c in found}, unrendered, breaks, route_file,
                       note)


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



