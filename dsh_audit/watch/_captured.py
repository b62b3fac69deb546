"""The capture's usage for a followed log's requests whose log holds none (a title call: DSH logs no
usage for it; a request shown at a torn tail), so that a watch prices them as ``usage``, ``cache``,
``sessions`` and ``requests`` do: by the one function they share
(:func:`dsh_audit.cache.given_usage` over :func:`dsh_audit.cache.given_capture`: ``--capture``, else
the ``wire.jsonl`` found beside the log, none with ``--no-capture``).

The capture is read only when a request whose log holds no usage is judged: aligned with the
session as the log holds it on disk, the log read whole once more only for a request the last
reading did not hold yet; on a change of the capture's file, the capture alone is read again and
aligned with the session read last, kept in memory. A watch that follows no log beside a capture
only looks for one (a few ``stat`` calls per such request).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..cache import Tokens, entry_usage, given_capture, given_usage
from ..capture import capture_for
from ..errors import DshAuditError
from ..session import Session, read_session

if TYPE_CHECKING:
    from ..replay import Request

__all__ = ["CapturedUsage"]


class CapturedUsage:
    """The tokens the capture reports for the requests of one followed log (``path``) whose log
    holds no usage (:meth:`__call__`). ``capture``: ``--capture`` (None: the ``wire.jsonl`` found
    beside the log, as every view finds it); ``lenient`` and ``max_version`` read the log as the
    watch does."""

    def __init__(self, path: str, capture: str | os.PathLike[str] | None, *, lenient: bool,
                 max_version: int) -> None:
        self.path, self.capture, self.lenient, self.max_version = path, capture, lenient, max_version
        self.mark: tuple[str, int, int] | None = None  # the capture file read last: path, size, mtime
        self.held = 0  # how many requests the log held when it was read last
        self.session: Session | None = None  # the log as read last, aligned again on a capture change
        self.tokens: dict[int, Tokens] = {}
        self.reads = 0  # how many times the capture was read (for how long a request waits for it)

    def __call__(self, request: Request) -> Tokens | None:
        """The capture's tokens for ``request`` when its log holds no usage and the capture reports
        some (None otherwise: a logged usage is never replaced, :func:`~dsh_audit.cache.entry_usage`);
        what :func:`~dsh_audit.cache.given_usage` gives, an
        :class:`~dsh_audit.cache.UnusableUsage` too (a damaged usage, a capture that matched no
        request of the session), which prices nothing and says why, as in ``usage``."""
        if entry_usage(request)[2] is not None:  # the log holds its usage, whole or in part
            return None
        found = capture_for(self.path, self.capture)
        if found is None:
            return None
        try:
            stat = os.stat(found)
        except OSError:
            return None
        mark = (os.fspath(found), stat.st_size, stat.st_mtime_ns)
        if request.index >= self.held or mark != self.mark:
            fresh = request.index >= self.held or self.session is None
            self.mark = mark
            self.reads += 1
            if fresh:
                self._read()
            else:
                self._align()
        return self.tokens.get(request.index)

    def _read(self) -> None:
        """Align the capture with the session as its log holds it now, as ``requests`` does for one
        log (the same two functions): the tokens of each request the capture reports."""
        try:
            session = read_session(self.path, lenient=self.lenient, max_version=self.max_version)
        except DshAuditError:
            session = None
        if not isinstance(session, Session):
            self.tokens, self.held, self.session = {}, 0, None
            return
        self.held, self.session = len(session.requests), session
        self._align()

    def _align(self) -> None:
        """Read the capture again and align it with the session read last (the log is not read again)."""
        session = self.session
        if session is not None:
            self.tokens = given_usage([session], given_capture([session], self.capture)).get(session.id, {})
