"""What a log's one pass folds besides requests: its title, its time span and each event's line."""

from __future__ import annotations

import math

from ..log import Event, SessionHeader
from ..replay import RequestTime
from ._lines import EventLines

__all__ = ["Activity", "RequestSpan"]


class RequestSpan:
    """The first send and the last answer (else send) of requests, folded as they come: the span
    of a log whose own timestamps say nothing (:meth:`Session.span`)."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.last: float | None = None

    def add(self, time: RequestTime | None) -> None:
        if time is None:
            return
        done = time.done if time.done is not None else time.sent
        self.first = time.sent if self.first is None else min(self.first, time.sent)
        self.last = done if self.last is None else max(self.last, done)


class Activity:
    """The session's title, the span of its own timestamps and each event's line, folded from the
    events of its one pass (:meth:`on_event`: an ``observe`` of :func:`dsh_audit.replay.iter_requests`)."""

    def __init__(self, header: SessionHeader) -> None:
        self.lines = EventLines()
        created = header.created_at
        # the least and the greatest positive time, in milliseconds as logged (``high`` 0: none yet):
        # divided once when read, not per event (x / 1000 keeps the order, so the least of the
        # quotients is the quotient of the least)
        valid = isinstance(created, (int, float)) and created > 0
        self._low: float = created if valid else math.inf
        self._high: float = created if valid else 0
        self.title: str | None = None

    @property
    def first(self) -> float | None:
        """The earliest positive time of the session (its header's creation or an event's), in seconds."""
        return self._low / 1000 if self._high else None

    @property
    def last(self) -> float | None:
        """The latest positive time of the session, in seconds."""
        return self._high / 1000 if self._high else None

    def on_event(self, event: Event) -> None:
        self.lines.add(event.seq, event.line)
        time = event.time
        if type(time) is int or (isinstance(time, (int, float)) and not isinstance(time, bool)):
            if time > self._high:  # (so time > 0)
                self._high = time
            if time < self._low and time > 0:
                self._low = time
        if event.type == "session/title" and isinstance(event.data, dict):
            title = event.data.get("title")
            if isinstance(title, str) and title:
                self.title = title
