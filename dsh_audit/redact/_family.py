"""A fork or subagent child and its parent: the session ids a log's texts keep, and the parent logs a
child's verdicts are compared with.

A child's ``breaks`` and ``cache`` verdicts depend on its parent when the parent's log lies beside it
(where ``breaks`` finds it): :func:`family` finds the parent and its redaction beside the output, so
the child is compared with its parent on both sides (``docs/redact.md``, Forks and subagents). The
parent logs are read from the logs opened to read their headers, never opened again
(:class:`Identifiers`, :func:`parent_log`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

from ..errors import DshAuditError, UsageError
from ..log import SessionLog
from ..session import Headers, Session, find_parent, nearby_logs, open_session
from ..wire import PiRoutes
from ._derivation import KEY_DERIVATION
from ._manifest import Manifest, manifest_path, read_manifest
from ._placeholder import Placeholders

__all__ = ["Identifiers", "cause_hint", "family", "family_cause", "family_hint", "parent_log", "parent_session",
           "salt_cause"]


class Identifiers:
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
    through ``headers`` (which keeps the ids, for :func:`family`), none held open but the logs of
    session ``parent_id`` (the log's own parent, when it has one; :data:`_KEPT_PARENTS` at most), handed
    over open by real path, their events unread, to be read whole without opening them again
    (:func:`parent_session`)."""
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


def family(source: Path, target: Path, session: Session, *, alone: bool, headers: Headers,
           protect: Callable[[Path], object]) -> tuple[list[str], Path | None, Path | None, Manifest | None]:
    """A fork or subagent child whose parent log lies beside it (where ``breaks`` and ``cache`` find it
    and compare the child with it): the notes, the parent's log and its redacted log beside ``target``
    (where the recipient's ``breaks`` finds it), so the verdicts compared are the child's with its
    parent on both sides, and that redaction's manifest, read once (None: it cannot be read), for
    :func:`salt_cause` to ask too. Nothing when the parent is not beside the child (its verdicts are its own
    alone, there as in the bundle) or with ``alone`` (a note says the parent was left out). Each
    header is read once, through ``headers``. Each parent log found is an input of the run, handed to
    ``protect`` as soon as it is found (which refuses an output that would replace it), and so is a log
    of the parent's session at ``target`` (its redaction, which ``alone`` does not read).

    Raises:
        UsageError: the parent lies beside the child, but no redaction of it beside ``target`` (the log
            of the parent's id there has no redaction manifest beside it: a plain copy); or ``protect``'s.
    """
    parent_id = session.header.parent_session
    if not isinstance(parent_id, str) or not parent_id:
        return [], None, None, None
    parent = find_parent(source, parent_id, headers=headers)
    if parent is None:
        return [], None, None, None
    protect(parent)
    if os.path.lexists(target) and headers.ids(target)[0] == parent_id:
        protect(target)  # a log of the parent (its redaction, --alone) where the child's would go
    redacted = find_parent(target, parent_id, headers=headers) if not alone else None
    if redacted is not None:
        protect(redacted)
    if alone:
        note = (f"redacted alone: its verdicts were compared without its parent log {parent} (beside it, breaks "
                "compares the two); redact the parent too, with the same salt, to give the recipient both")
        return [note], None, None, None
    if redacted is not None and os.path.realpath(redacted) != os.path.realpath(parent) \
            and not os.path.isfile(manifest_path(redacted)):
        # a plain copy of the parent (a backup, another export), not its redaction: a redaction has its manifest
        raise UsageError(f"the parent session's log beside the output, {redacted}, is no redaction of it (no "
                         f"{manifest_path(redacted).name} beside it), and no redaction of the parent lies beside "
                         "the output", path=str(source),
                         hint="move that copy away and " + family_hint(beside=True))
    if redacted is None or os.path.realpath(redacted) == os.path.realpath(parent):
        raise UsageError(f"this log is a child of {parent}, beside it, which its breaks and cache verdicts there "
                         "compare it with, and no redaction of that parent lies beside the output", path=str(source),
                         hint=family_hint(beside=True))
    recorded = _parent_manifest(redacted)
    _refuse_derivation(source, redacted, recorded)
    return [f"verdicts compared with the parent session {parent_id} on both sides: {parent} and its redaction "
            f"{redacted}"], parent, redacted, recorded


def family_hint(*, again: bool = False, salt: bool = False, beside: bool = False, alone: bool = True) -> str:
    """How to redact a child so that its verdicts hold with its parent: the parent first (``again``: its
    redaction made again, replacing one of an older dsh-audit, "with this dsh-audit", or with ``salt``, one of
    another salt, which no dsh-audit mends), then the child, both with one salt given, as the default one is
    random and no run repeats it; ``beside``: the child's output where ``breaks`` finds a parent; ``alone``:
    the other way out. The one wording of redact's refusals of a child and of the lines the CLI prints when a
    child's verdicts moved (``redact`` and ``redact --check``: :func:`cause_hint`).

    Example:
        >>> family_hint(again=True, alone=False)
        'redact the parent again with this dsh-audit, then this child, both with --force and one salt ...'
        >>> family_hint(again=True, salt=True, alone=False)[:59]
        'redact the parent again, then this child, both with --force'
    """
    first = ("again" if salt else "again with this dsh-audit") if again else "first"
    salt_given = "--force and one salt" if again else "one salt"
    child = "this child with its -o beside the parent's (where breaks finds a parent)" if beside else "this child"
    words = (f"redact the parent {first}, then {child}, both with {salt_given} you give (--salt S or "
             "DSH_AUDIT_REDACT_SALT=S), not the default random one")
    return words + ("; or pass --alone to compare this child's verdicts without its parent" if alone else "")


def cause_hint(cause: str) -> str:
    """The hint of a line saying why a child's verdicts moved (``cause``: :func:`family_cause`'s or
    :func:`salt_cause`'s words): the parent redacted again, "with this dsh-audit" only when an older one's
    key derivation is the cause (:func:`_derivation_words`); a salt's is mended by the salt alone."""
    return family_hint(again=True, salt=_OLDER not in cause, alone=False)


def _parent_manifest(redacted: Path) -> Manifest | None:
    """The manifest of a parent's redaction ``redacted``, read once for every question a run asks of it (its
    key derivation, its salt); None when it cannot be read, which refuses and explains nothing here
    (``redact --check`` of the parent says why)."""
    try:
        return read_manifest(redacted)
    except DshAuditError:
        return None


def _refuse_derivation(source: Path, redacted: Path, recorded: Manifest | None) -> None:
    """Refuse a child whose parent's redaction ``redacted`` (its manifest ``recorded``, None: unread, which
    refuses nothing) has placeholders of another key derivation than this run's
    (:data:`._derivation.KEY_DERIVATION`; a manifest of an older dsh-audit records none: 1): every text parent
    and child share (a fork's seed, a spawn's prompt) would differ, whatever the salt, and the verdicts moved
    or, worse, a bundle held two placeholders of one text. Refused before any verdict is compared, nothing
    written."""
    # an older one's derivation (read_manifest refuses any derivation it does not know)
    if recorded is not None and recorded.key_derivation != KEY_DERIVATION:
        raise UsageError(_derivation_words(f"the parent's redaction {redacted}", recorded.key_derivation,
                                           "this one's", KEY_DERIVATION), path=str(source),
                         hint=family_hint(again=True))


#: What :func:`_derivation_words` says of a redaction of another key derivation (:func:`cause_hint`).
_OLDER = "was made by an older dsh-audit"


def _derivation_words(older: str, recorded: int, newer: str, own: int) -> str:
    """Why ``older``'s placeholders (key derivation ``recorded``) are not ``newer``'s (``own``): the words redact
    refuses a child with and ``redact --check`` says of a child's moved verdicts (:func:`family_cause`)."""
    return (f"{older} {_OLDER}, whose placeholders (key derivation {recorded}) are not "
            f"{newer} (key derivation {own}) for any salt")


def family_cause(redacted: Path, *, salt_id: str | None, key_derivation: int) -> str | None:
    """Why a child bundle's verdicts moved on ``redact --check``, as the manifests of the child (``salt_id``,
    ``key_derivation``) and of its parent's redaction ``redacted`` (beside it) record them: placeholders of
    another key derivation (:func:`_refuse_derivation`'s refusal, which a parent redacted again after the child
    by a newer dsh-audit escapes) or of another salt (:func:`salt_cause`), its manifest read once. None when
    neither is known."""
    recorded = _parent_manifest(redacted)
    if recorded is None:
        return None
    if recorded.key_derivation < key_derivation:
        return _derivation_words(f"the parent's redaction {redacted}", recorded.key_derivation, "this child's",
                                 key_derivation)
    if recorded.key_derivation > key_derivation:
        return _derivation_words("this child's bundle", key_derivation, f"those of its parent's redaction {redacted}",
                                 recorded.key_derivation)
    return None if salt_id is None else salt_cause(redacted, recorded, salt_id, than="this child's bundle's")


def salt_cause(redacted: Path, recorded: Manifest | None, identity: str, *, than: str = "this run's") -> str | None:
    """Why a child's verdicts moved, when its parent's redaction ``redacted`` was made with another salt than
    the child's (whose :func:`._manifest.salt_id` is ``identity``), as the parent's manifest ``recorded`` (as
    :func:`family` read it) records it: its placeholders then differ from the child's for the texts they share
    (a fork's seed, a spawn's prompt), so ``breaks`` sees changed texts (``than``: whose salt ``identity`` is).
    None when the manifest records the same salt, or could not be read (None)."""
    if recorded is None or recorded.salt_id == identity:
        return None
    if recorded.salt_id is None:
        return (f"the parent's redaction {redacted} may have been made with another salt (its manifest, written by an "
                "older dsh-audit, does not record its salt's id)")
    kind = "a random one, which no run can repeat" if recorded.salt_random else "another given salt"
    return f"the parent's redaction {redacted} was made with another salt than {than} ({kind})"


def parent_log(path: Path | None, headers: Headers, kept: Identifiers | None = None) -> Path | SessionLog | None:
    """The parent log at ``path`` (None: none) open, its header read by the search that found it: kept
    open by ``kept`` (:func:`_children`), or by ``headers`` (:func:`dsh_audit.session.find_parent`); else
    ``path`` itself, opened by the caller (which then raises its error when it cannot be read)."""
    if path is None:
        return None
    log = kept.take_parent(path) if kept is not None else None
    if log is None:
        taken = headers.take(path)
        log = taken if isinstance(taken, SessionLog) else None
    return path if log is None else log


def parent_session(source: Path | SessionLog | None, child: Session, *, lenient: bool,
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
