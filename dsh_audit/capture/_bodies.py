"""The captured body of each request of the sessions a capture was paired with: what attribution
compares (``captures=`` of :func:`dsh_audit.attribution.attribute_sessions`), the same for every view.

A capture that cannot be read is the error of the sessions compared with it, not of their
neighbours: :func:`session_captures` hands it over per session (``failed``), and
:func:`unreadable_capture` says, for a capture found beside a log, what settles it.

A view that prices from the capture given with ``--capture`` and attributes with it too reads and
aligns it once (:func:`align_capture`), and hands that :class:`AlignedCapture` to both.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import CaptureError
from ..replay import Request
from ..session import Session, route_apis
from ._align import Pairing, align
from ._find import capture_for, held_sessions
from ._loaders import CaptureRead, load_capture, read_capture
from ._types import CapturedRequest

__all__ = ["AlignedCapture", "align_capture", "captured_bodies", "session_captures", "sessions_by_capture",
           "unreadable_capture", "usage_capture"]

#: What a capture found beside a log (not named with ``--capture``) that cannot be read adds to
#: its error's hint: the file is what settles it, the same for every command that reads it.
_FOUND_HINT = "found beside the log, it is what the log is compared with: repair or remove it"
#: What a capture found beside a log that cannot be read adds to the warning of a view that goes on
#: without it (a found capture is optional evidence: :func:`unreadable_capture` with ``left_out``).
_LEFT_OUT_HINT = ("found beside the log, it was left out: --capture FILE gives another, "
                  "--no-capture ignores found ones")


@dataclass(frozen=True, slots=True)
class AlignedCapture:
    """A capture read once (:func:`dsh_audit.capture.read_capture`: ``read``, what it said in
    ``said``) and aligned once with the requests of ``sessions`` (``pairings``, in
    :func:`align` order), for every job of a view that reads it (pricing, attribution): it stands
    for its file wherever a capture's path is taken (:func:`session_captures`, through
    :func:`dsh_audit.attribution.attribute_opened`), and is neither read nor aligned again there."""

    path: Path
    read: CaptureRead
    said: tuple[str, ...]
    sessions: tuple[Session, ...]
    pairings: tuple[Pairing, ...]
    found: bool = False  # found beside the logs (not --capture): the capture of the sessions it holds only

    @property
    def held(self) -> frozenset[str]:
        """The ids of the sessions this capture is the capture of: every session aligned with the
        capture given, the sessions it holds requests of when it was found (:func:`held_sessions`)."""
        return frozenset(held_sessions(self.pairings) if self.found else (s.id for s in self.sessions))

    def __fspath__(self) -> str:
        """The capture file: an aligned capture is handed where its path is (``--capture``)."""
        return os.fspath(self.path)

    def pairs(self, sessions: Sequence[Session]) -> Sequence[Pairing]:
        """The pairings of ``sessions`` with this capture: the ones made, when they are the very
        sessions aligned; else aligned here, with the requests read (not read again)."""
        if len(sessions) == len(self.sessions) and all(a is b for a, b in zip(sessions, self.sessions)):
            return self.pairings
        return align([r for s in sessions for r in s.requests], self.read.requests, routes=route_apis(sessions))


def align_capture(sessions: Sequence[Session], capture: str | os.PathLike[str], *,
                  keep: Callable[[Any], Any] | None = None) -> AlignedCapture:
    """The capture at ``capture`` read once (each record kept as ``keep`` makes it:
    :func:`dsh_audit.capture.read_capture`; a torn tail or a skipped record said in
    :attr:`AlignedCapture.said`) and aligned with every request of ``sessions`` (a session id once
    among them) together, as :func:`session_captures` aligns them.

    Raises:
        CaptureError: the capture cannot be read.
    """
    said: list[str] = []
    read = read_capture(capture, warnings=said, keep=keep)
    pairs = align([r for s in sessions for r in s.requests], read.requests, routes=route_apis(sessions))
    return AlignedCapture(Path(capture), read, tuple(said), tuple(sessions), tuple(pairs))


def usage_capture(sessions: Sequence[Session], capture: str | os.PathLike[str] | None, *,
                  keep: Callable[[Any], Any] | None = None) -> AlignedCapture | None:
    """The capture ``sessions`` are compared with, read and aligned once (:func:`align_capture`)
    for every job of a view (pricing, attribution): ``capture`` (``--capture``), else the one
    found beside them (:func:`find_capture`), then :attr:`AlignedCapture.found`, aligned with the
    sessions it was found beside. A found capture and a given one mean the same (a request whose
    log holds no usage is priced from either); None when there is none, or when the sessions were
    found beside different ones (each is then read where it is compared), or when the one found
    cannot be read: it is optional evidence, said among the sessions' warnings (:func:`_leave_out`).

    Raises:
        CaptureError: the capture given cannot be read.
    """
    if capture is not None:
        return align_capture(sessions, capture, keep=keep)
    beside = sessions_by_capture(sessions, None)
    if len(beside) != 1:
        return None
    [(path, members)] = beside.items()
    try:
        return replace(align_capture(members, path, keep=keep), found=True)
    except CaptureError as exc:  # optional evidence: the sessions go on without it, and say so
        _leave_out(exc, members)
        return None


def sessions_by_capture(sessions: Iterable[Session], given: str | os.PathLike[str] | None, *,
                        known: AlignedCapture | None = None) -> dict[Path, list[Session]]:
    """``sessions`` by the capture each is compared with (:func:`capture_for`): ``given`` for
    every one, else the one found beside each (a session with none is in no group), so that the
    sessions sharing a capture are read and aligned with it together (as ``check`` compares its
    logs: :class:`dsh_audit.gate.CaptureCompare`). A session of ``known``, a capture found beside the
    very sessions it was aligned with (:func:`usage_capture`), is that capture's without being
    looked up again (a search up four folders, a header read).

    Example:
        >>> sessions_by_capture([], None)
        {}
    """
    theirs = {id(s) for s in known.sessions} if known is not None and known.found else set()
    groups: dict[Path, list[Session]] = {}
    for session in sessions:
        found = known.path if known is not None and id(session) in theirs else capture_for(session.path, given)
        if found is not None:
            groups.setdefault(found, []).append(session)
    return groups


def captured_bodies(requests: Sequence[Request], pairings: Iterable[Pairing]) -> list[bytes | None]:
    """The bytes of the first captured send paired with each of ``requests`` (one session's), in
    their order, None where none was (a resend is never the first send).

    Example:
        >>> captured_bodies([], [])
        []
    """
    first: dict[int, bytes] = {}
    for pairing in pairings:
        request, capture = pairing.request, pairing.capture
        if capture is not None and request is not None and not pairing.retry and request.index not in first:
            first[request.index] = capture.body
    return [first.get(r.index) for r in requests]


def unreadable_capture(error: CaptureError, *, found: bool, left_out: bool = False) -> CaptureError:
    """The error of a capture that cannot be read, as each log compared with it carries it: ``error``
    itself for the capture the user named (``--capture``), else (``found``: the ``wire.jsonl`` found
    beside the logs) the same error whose hint says that the file is what settles it; with
    ``left_out``, said by a view that goes on without it (a found capture is optional evidence),
    the hint names the options that give another capture or ignore found ones.

    Example:
        >>> print(unreadable_capture(CaptureError("is a FIFO", path="w.jsonl", hint="only files are read"),
        ...                          found=True))
        w.jsonl: is a FIFO (hint: only files are read; found beside the log, it is what the log is compared with: repair or remove it)
        >>> print(unreadable_capture(CaptureError("body does not match its body_sha256", path="w.jsonl", line=6),
        ...                          found=True, left_out=True))
        w.jsonl:6: body does not match its body_sha256 (hint: found beside the log, it was left out: --capture FILE gives another, --no-capture ignores found ones)
    """
    if not found:
        return error
    said = _LEFT_OUT_HINT if left_out else _FOUND_HINT
    hint = f"{error.hint}; {said}" if error.hint else said
    return CaptureError(error.message, path=error.path, line=error.line, seq=error.seq, hint=hint)


def _leave_out(error: CaptureError, sessions: Iterable[Session]) -> None:
    """Say ``error`` (:func:`unreadable_capture`, left out) among the warnings of each of
    ``sessions``, once: every view prints a log's warnings (a capture is optional evidence)."""
    told = str(unreadable_capture(error, found=True, left_out=True))
    for session in sessions:
        if told not in session.warnings:
            session.warnings.append(told)


def session_captures(sessions: Sequence[Session], capture: str | os.PathLike[str] | None = None, *,
                     failed: dict[str, CaptureError] | None = None,
                     ) -> tuple[dict[str, list[bytes | None]], dict[str, Path]]:
    """Per session id, the captured bodies of its requests (:func:`captured_bodies`), and the
    capture file each was paired from; ``capture`` (``--capture``) for every session, else the one
    found beside each log (:func:`find_capture`). The sessions sharing a capture are aligned with it
    together (a session id appears once among ``sessions``), as ``check`` aligns them; a session
    with no capture, or whose found capture holds none of its requests (:func:`held_sessions`), is
    in neither mapping. Each capture file is loaded once.

    ``failed``: where a capture given that cannot be read (or aligned) is said, as the error of each
    session compared with it, by session id (:func:`unreadable_capture`); those sessions are in
    neither mapping, and every other capture is paired as usual. Without it, that error is raised.
    A capture found that cannot be read is optional evidence: left out, said among the warnings of
    the sessions found beside it (:func:`_leave_out`), which are then in neither mapping.

    ``capture`` may be that capture already read and aligned (an :class:`AlignedCapture`): it is
    then neither read nor aligned again (:meth:`AlignedCapture.pairs`), but one whose read said a
    torn tail or a skipped record is read again here, for the error this view gives it.

    Raises:
        CaptureError: a capture cannot be read (without ``failed``).
    """
    aligned = capture if isinstance(capture, AlignedCapture) else None
    if aligned is not None and aligned.found:  # found beside the logs: each log's is found (the same one, aligned)
        capture = None
    bodies: dict[str, list[bytes | None]] = {}
    files: dict[str, Path] = {}
    for path, members in sessions_by_capture(sessions, capture, known=aligned).items():
        try:
            pairs = _pairs(members, path, aligned, found=capture is None)
        except CaptureError as exc:
            if capture is None:  # found: optional evidence, left out with a warning (--no-capture ignores it)
                _leave_out(exc, members)
                continue
            if failed is None:
                raise
            failed.update((session.id, unreadable_capture(exc, found=False)) for session in members)
            continue
        if capture is None:  # found: the capture only of the sessions it holds requests of
            held = held_sessions(pairs)
            members = [session for session in members if session.id in held]
        by_session: dict[str, list[Pairing]] = {}
        for pairing in pairs:
            if pairing.request is not None:
                by_session.setdefault(pairing.request.session_id, []).append(pairing)
        for session in members:
            bodies[session.id] = captured_bodies(session.requests, by_session.get(session.id, []))
            files[session.id] = path
    return bodies, files


def _pairs(members: Sequence[Session], path: Path, aligned: AlignedCapture | None, *,
           found: bool = False) -> Sequence[Pairing]:
    """The pairings of ``members`` with the capture at ``path``: ``aligned``'s when it is that
    capture and its read said nothing, else the capture loaded (a torn tail is an error) and aligned.
    A capture ``found`` beside the logs is used as ``check`` uses it: its torn tail is said among
    the warnings of ``members`` (``wire.jsonl: torn tail: ...``, as a log's) and the rest compared,
    as it was priced from (:func:`usage_capture`)."""
    if aligned is not None and aligned.path == path and (found or not aligned.said):
        if found:
            _say(aligned.said, members)
        return aligned.pairs(members)
    said: list[str] | None = [] if found else None
    captures: list[CapturedRequest] = load_capture(path, warnings=said)
    _say(said or (), members)
    return align([r for s in members for r in s.requests], captures, routes=route_apis(members))


def _say(said: Iterable[str], sessions: Iterable[Session]) -> None:
    """Say each of ``said`` (what a found capture's read said: a torn tail) among the warnings of
    each of ``sessions``, once."""
    sessions = list(sessions)
    for told in said:
        for session in sessions:
            if told not in session.warnings:
                session.warnings.append(told)
