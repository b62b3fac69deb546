"""What a watch reports: one :class:`WatchRequest` per new request, :class:`WatchNote` for what
happened to a log, and a :class:`WatchSummary` at the end."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["WatchItem", "WatchNote", "WatchRequest", "WatchSummary"]


@dataclass(frozen=True, slots=True)
class WatchRequest:
    """One request of a followed session, judged the moment it was replayed.

    Attributes:
        seen: when the watch produced it (epoch seconds, wall clock).
        path, session_id, title: the session (``title`` once the log has named it).
        index, kind, turn, step, attempt, model: the request (``dsh-audit requests`` numbering).
        sent: its send time from the log (epoch seconds), None when unknown.
        prompt_tokens: the logged prompt size; ``expected`` and ``actual``: cache reads predicted
            and logged (``actual`` None while the usage is unknown).
        classification: the cache verdict (:data:`dsh_audit.cache.CLASSIFICATIONS`).
        cost: what the request cost in USD, None when the price table cannot price it.
        verdict, cause, relation, previous: the attribution transition (``break`` for a break).
        fields: the header fields that changed; evidence_seqs: the log events that prove it.
        transition: the whole transition as ``dsh-audit breaks --json`` prints it.
        history: produced while catching up with what was written before the watch began.
    """

    seen: float
    path: str
    session_id: str
    title: str | None
    index: int
    kind: str
    turn: int | None
    step: int | None
    attempt: int
    model: str | None
    sent: float | None
    prompt_tokens: int | None
    expected: int | None
    actual: int | None
    classification: str | None
    cost: float | None
    verdict: str | None
    cause: str | None
    relation: str | None
    previous: int | None
    fields: tuple[str, ...] = ()
    evidence_seqs: tuple[int, ...] = ()
    transition: dict[str, Any] | None = field(default=None, repr=False)
    history: bool = False

    @property
    def is_break(self) -> bool:
        return self.verdict == "break"

    def to_json(self) -> dict[str, Any]:
        return {"type": "break" if self.is_break else "request", "seen": round(self.seen, 3), "path": self.path,
                "session_id": self.session_id, "title": self.title, "index": self.index, "kind": self.kind,
                "turn": self.turn, "step": self.step, "attempt": self.attempt, "model": self.model,
                "sent": self.sent, "prompt_tokens": self.prompt_tokens, "expected_cache_read": self.expected,
                "actual_cache_read": self.actual, "classification": self.classification, "cost_usd": self.cost,
                "verdict": self.verdict, "cause": self.cause, "relation": self.relation, "previous": self.previous,
                "fields": list(self.fields), "evidence_seqs": list(self.evidence_seqs),
                "transition": self.transition, "history": self.history}


@dataclass(frozen=True, slots=True)
class WatchNote:
    """Something that happened: ``watching`` (the first item: what is followed and how changes
    are noticed; ``path`` holds the watched paths), ``started`` (a new session is followed),
    ``replaced`` (the log was truncated or replaced: it is followed again from its first byte),
    ``warning`` (a torn tail, dropped records) or ``error`` (the log cannot be read any more, or
    ``path`` is a folder that cannot be listed; each is reported once and the watch goes on with
    the others)."""

    seen: float
    path: str
    level: str
    message: str
    session_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"type": self.level, "seen": round(self.seen, 3), "path": self.path,
                "session_id": self.session_id, "message": self.message}


WatchItem = WatchRequest | WatchNote


@dataclass(slots=True)
class WatchSummary:
    """What a watch saw, for its last line."""

    sessions: int = 0
    requests: int = 0
    breaks: int = 0
    cost: float = 0.0
    errors: int = 0
    ids: set[str] = field(default_factory=set, repr=False)  # a log followed again is one session

    def add(self, item: WatchItem) -> None:
        if isinstance(item, WatchNote):
            if item.level == "started" and item.session_id not in self.ids:
                self.ids.add(item.session_id or item.path)
                self.sessions += 1
            self.errors += item.level == "error"
            return
        self.requests += 1
        self.breaks += item.is_break
        self.cost += item.cost or 0.0

    def to_json(self) -> dict[str, Any]:
        return {"type": "summary", "sessions": self.sessions, "requests": self.requests, "breaks": self.breaks,
                "cost_usd": round(self.cost, 6), "errors": self.errors}

    def text(self) -> str:
        return (f"watched {self.sessions} session(s): {self.requests} request(s), {self.breaks} break(s), "
                f"${self.cost:.4f}" + (f", {self.errors} unreadable log(s) or folder(s)" if self.errors else ""))
