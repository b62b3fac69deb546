"""What a log's one pass folds besides requests: its title, its time span and each event's line."""

from __future__ import annotations

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
        created = header.created_at / 1000 if isinstance(header.created_at, (int, float)) and header.created_at > 0 else None
        self.first: float | None = created
        self.last: float | None = created
        self.title: str | None = None

    def on_event(self, event: Event) -> None:
        self.lines.add(event.seq, event.line)
        time = event.time
        if (type(time) is int or (isinstance(time, (int, float)) and not isinstance(time, bool))) and time > 0:
            when = time / 1000
            first, last = self.first, self.last
            if first is None or when < first:
                self.first = when
            if last is None or when > last:
                self.last = when
        if event.type == "session/title" and isinstance(event.data, dict):
            title = event.data.get("title")
            if isinstance(title, str) and title:
                self.title = title
