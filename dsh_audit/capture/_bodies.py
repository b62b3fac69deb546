"""The captured body of each request of the sessions a capture was paired with: what attribution
compares (``captures=`` of :func:`dsh_audit.attribution.attribute_sessions`), the same for every view.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..replay import Request
from ..session import Session, route_apis
from ._align import Pairing, align
from ._find import capture_for
from ._loaders import load_capture

__all__ = ["captured_bodies", "session_captures"]


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


def session_captures(sessions: Sequence[Session], capture: str | os.PathLike[str] | None = None,
                     ) -> tuple[dict[str, list[bytes | None]], dict[str, Path]]:
    """Per session id, the captured bodies of its requests (:func:`captured_bodies`), and the
    capture file each was paired from; ``capture`` (``--capture``) for every session, else the one
    found beside each log (:func:`find_capture`). The sessions sharing a capture are aligned with it
    together (a session id appears once among ``sessions``), as ``check`` aligns them; a session
    with no capture is in neither mapping. Each capture file is loaded once.

    Raises:
        CaptureError: a capture cannot be read.
    """
    by_capture: dict[Path, list[Session]] = {}
    for session in sessions:
        found = capture_for(session.path, capture)
        if found is not None:
            by_capture.setdefault(found, []).append(session)
    bodies: dict[str, list[bytes | None]] = {}
    files: dict[str, Path] = {}
    for path, members in by_capture.items():
        pairs = align([r for s in members for r in s.requests], load_capture(path), routes=route_apis(members))
        by_session: dict[str, list[Pairing]] = {}
        for pairing in pairs:
            if pairing.request is not None:
                by_session.setdefault(pairing.request.session_id, []).append(pairing)
        for session in members:
            bodies[session.id] = captured_bodies(session.requests, by_session.get(session.id, []))
            files[session.id] = path
    return bodies, files
