"""The captured body of each request of the sessions a capture was paired with: what attribution
compares (``captures=`` of :func:`dsh_audit.attribution.attribute_sessions`), the same for every view.

A capture that cannot be read is the error of the sessions compared with it, not of their
neighbours: :func:`session_captures` hands it over per session (``failed``), and
:func:`unreadable_capture` says, for a capture found beside a log, what settles it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..errors import CaptureError
from ..replay import Request
from ..session import Session, route_apis
from ._align import Pairing, align
from ._find import capture_for
from ._loaders import load_capture

__all__ = ["captured_bodies", "session_captures", "unreadable_capture"]

#: What a capture found beside a log (not named with ``--capture``) that cannot be read adds to
#: its error's hint: the file is what settles it, the same for every command that reads it.
_FOUND_HINT = "found beside the log, it is what the log is compared with: repair or remove it"


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


def unreadable_capture(error: CaptureError, *, found: bool) -> CaptureError:
    """The error of a capture that cannot be read, as each log compared with it carries it: ``error``
    itself for the capture the user named (``--capture``), else (``found``: the ``wire.jsonl`` found
    beside the logs) the same error whose hint says that the file is what settles it.

    Example:
        >>> print(unreadable_capture(CaptureError("is a FIFO", path="w.jsonl", hint="only files are read"),
        ...                          found=True))
        w.jsonl: is a FIFO (hint: only files are read; found beside the log, it is what the log is compared with: repair or remove it)
    """
    if not found:
        return error
    hint = f"{error.hint}; {_FOUND_HINT}" if error.hint else _FOUND_HINT
    return CaptureError(error.message, path=error.path, line=error.line, seq=error.seq, hint=hint)


def session_captures(sessions: Sequence[Session], capture: str | os.PathLike[str] | None = None, *,
                     failed: dict[str, CaptureError] | None = None,
                     ) -> tuple[dict[str, list[bytes | None]], dict[str, Path]]:
    """Per session id, the captured bodies of its requests (:func:`captured_bodies`), and the
    capture file each was paired from; ``capture`` (``--capture``) for every session, else the one
    found beside each log (:func:`find_capture`). The sessions sharing a capture are aligned with it
    together (a session id appears once among ``sessions``), as ``check`` aligns them; a session
    with no capture is in neither mapping. Each capture file is loaded once.

    ``failed``: where a capture that cannot be read (or aligned) is said, as the error of each
    session compared with it, by session id (:func:`unreadable_capture`); those sessions are in
    neither mapping, and every other capture is paired as usual. Without it, that error is raised.

    Raises:
        CaptureError: a capture cannot be read (without ``failed``).
    """
    by_capture: dict[Path, list[Session]] = {}
    for session in sessions:
        found = capture_for(session.path, capture)
        if found is not None:
            by_capture.setdefault(found, []).append(session)
    bodies: dict[str, list[bytes | None]] = {}
    files: dict[str, Path] = {}
    for path, members in by_capture.items():
        try:
            pairs = align([r for s in members for r in s.requests], load_capture(path), routes=route_apis(members))
        except CaptureError as exc:
            if failed is None:
                raise
            error = unreadable_capture(exc, found=capture is None)
            failed.update((session.id, error) for session in members)
            continue
        by_session: dict[str, list[Pairing]] = {}
        for pairing in pairs:
            if pairing.request is not None:
                by_session.setdefault(pairing.request.session_id, []).append(pairing)
        for session in members:
            bodies[session.id] = captured_bodies(session.requests, by_session.get(session.id, []))
            files[session.id] = path
    return bodies, files
