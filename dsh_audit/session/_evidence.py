"""One pass over a log that keeps only the events attribution quotes as evidence.

Replay keeps the requests; the events between two requests that explain a difference (header
snapshots, surface replacements and the compaction or prune records beside them, lifecycle
boundaries, retries, failed attempts) are collected here, each reduced to the data a reader needs,
so a report can quote them without holding the log. A small node fold (seqs only) gives each
replacement the nodes it shadowed.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .._json import as_object
from ..jsjson import stringify
from ..log import Event, SessionLog

__all__ = ["CONTEXT_TYPES", "Evidence", "EvidenceCollector", "LogEvidence", "collect_evidence"]

#: Events that can change what the model sees or how the loop is configured, quoted as context
#: for a header change (they are not causes on their own: the header is).
CONTEXT_TYPES = frozenset({"command/run", "command/done", "plan/mode", "agent-preset/selected",
                           "permission/preset", "sandbox/mode", "approval/policy", "subagent/descriptor"})


def _pick(data: Any, *keys: str) -> dict[str, Any]:
    if not isinstance(data, dict):
        return {}
    return {k: data[k] for k in keys if k in data}


def _header_data(data: dict[str, Any]) -> dict[str, Any]:
    header = as_object(data.get("header"))
    tools = header.get("tools")
    return {
        "reason": data.get("reason"),
        "config": header.get("config"),
        "adapterDefaults": header.get("adapterDefaults"),
        "system_chars": len(header["system"]) if isinstance(header.get("system"), str) else 0,
        "tools": len(tools) if isinstance(tools, list) else tools,
    }


@dataclass(frozen=True, slots=True)
class Evidence:
    """One log event quoted as evidence: its seq, type and the data that matters."""

    seq: int
    type: str
    data: dict[str, Any] = field(default_factory=dict)
    session_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": self.seq, "type": self.type, "data": self.data}
        if self.session_id is not None:
            out["session_id"] = self.session_id
        return out



def _failure(chunk: dict[str, Any]) -> dict[str, Any] | None:
    reason = as_object(chunk.get("reason"))
    if reason.get("kind") not in ("error", "aborted"):
        return None
    failure = as_object(reason.get("failure"))
    return {"kind": reason.get("kind"), **_pick(failure, "code", "message")}


@dataclass
class LogEvidence:
    """The evidence events of one log, in seq order, and lookups over them.

    Attributes:
        session_id: the log's session id.
        records: every kept event as :class:`Evidence`, in seq order.
        mentions: for each watched id (a child session), the first event (seq, type) that mentions it.
    """

    session_id: str
    records: list[Evidence] = field(default_factory=list)
    mentions: dict[str, tuple[int, str]] = field(default_factory=dict)
    _seqs: list[int] = field(default_factory=list, repr=False)

    def add(self, seq: int, etype: str, data: dict[str, Any]) -> None:
        self.records.append(Evidence(seq, etype, data))
        self._seqs.append(seq)

    def between(self, low: int, high: int) -> list[Evidence]:
        """Records with ``low < seq < high``."""
        start = bisect.bisect_right(self._seqs, low)
        stop = bisect.bisect_left(self._seqs, high)
        return self.records[start:stop]

    def forget_before(self, seq: int) -> None:
        """Drop the records below ``seq``: a streamed walk's later lookups all start at or above it
        (:func:`dsh_audit.attribution.attribute_log` keeps the window of the requests it still
        compares with, not the whole log)."""
        cut = bisect.bisect_left(self._seqs, seq)
        if cut:
            del self.records[:cut]
            del self._seqs[:cut]

    def at(self, seq: int) -> Evidence | None:
        i = bisect.bisect_left(self._seqs, seq)
        return self.records[i] if i < len(self._seqs) and self._seqs[i] == seq else None


class EvidenceCollector:
    """Keeps the evidence events of one log as they stream by (:meth:`on_event`, one event at a time)."""

    #: the event types :meth:`on_event` keeps, besides ``assistant/chunk`` (a failed ``finish``),
    #: any event with a surface operation and, while it watches, the mentions of a child
    TYPES: ClassVar[frozenset[str]] = frozenset({
        "request/header", "session/end-seed", "compaction/start", "compaction/end", "compaction/summary",
        "compaction/prune", "llm/retry", "llm/retry-started"}) | CONTEXT_TYPES

    def __init__(self, out: LogEvidence, watch: frozenset[str]) -> None:
        self.out = out
        self.watch = watch
        self.nodes: list[int] = []

    def surface(self, event: Event) -> None:
        op = event.surface_op
        if op == "append":
            self.nodes.append(event.seq)
            return
        if not isinstance(op, dict):
            return
        try:
            start, end = self.nodes.index(op["start"]), self.nodes.index(op["end"])
        except (KeyError, ValueError):
            shadowed: list[int] = []
        else:
            shadowed = self.nodes[start:end + 1]
            self.nodes[start:end + 1] = [event.seq]
        data = as_object(event.data)
        message = data.get("message") if event.type != "user/message" else data
        source = message.get("source") if isinstance(message, dict) else None
        self.out.add(event.seq, event.type, {
            "surfaceOp": op, "sourceEventSeqs": event.source_event_seqs, "shadowedSeqs": shadowed,
            "source": source})

    def watch_mentions(self, event: Event) -> None:
        if not self.watch or event.type not in ("tool/result", "subagent/descriptor", "agent/inbox/spliced"):
            return
        text = stringify(event.data)
        for sid in self.watch:
            if sid not in self.out.mentions and sid in text:
                self.out.mentions[sid] = (event.seq, event.type)

    def on_event(self, event: Event) -> None:  # noqa: C901 - a flat dispatch
        etype, data = event.type, event.data
        if event.surface_op is not None:
            self.surface(event)
        if self.watch:
            self.watch_mentions(event)
        if etype == "assistant/chunk":
            chunk = data.get("chunk") if isinstance(data, dict) else None
            if isinstance(chunk, dict) and chunk.get("type") == "finish":
                failure = _failure(chunk)
                if failure is not None:
                    self.out.add(event.seq, etype, {"turn": data.get("turn"), "step": data.get("step"),
                                                    "finish": failure})
        elif etype == "request/header" and isinstance(data, dict):
            self.out.add(event.seq, etype, _header_data(data))
        elif etype == "session/end-seed":
            self.out.add(event.seq, etype, {})
        elif etype in ("compaction/start", "compaction/end"):
            self.out.add(event.seq, etype, _pick(data, "compactionId", "sourceCommandId", "turn", "error"))
        elif etype == "compaction/summary":
            self.out.add(event.seq, etype, _pick(data, "compactionId", "sourceCommandId", "shadowedRange",
                                                 "shadowedSeqs", "shadowedTokenCount", "provider", "model",
                                                 "maxTokens", "llmStreamCall"))
        elif etype == "compaction/prune":
            self.out.add(event.seq, etype, _pick(data, "shadowedRange", "shadowedSeqs", "shadowedTokenCount"))
        elif etype in ("llm/retry", "llm/retry-started"):
            picked = _pick(data, "retryId", "turn", "step", "retry", "mode", "delayMs")
            if isinstance(data, dict) and isinstance(data.get("failure"), dict):
                picked["failure"] = _pick(data["failure"], "code", "message")
            self.out.add(event.seq, etype, picked)
        elif etype in CONTEXT_TYPES:
            self.out.add(event.seq, etype, dict(data) if isinstance(data, dict) else {"data": data})


def collect_evidence(log: SessionLog, *, watch: frozenset[str] = frozenset()) -> LogEvidence:
    """Read ``log`` once (a freshly opened :class:`SessionLog`) and keep its evidence events.

    Args:
        log: an opened, not yet iterated log.
        watch: session ids to look for in tool results, subagent descriptors and inbox splices
            (the first mention of a child session in its parent dates the spawn).
    """
    out = LogEvidence(log.header.id)
    collector = EvidenceCollector(out, watch)
    for event in log.events():
        collector.on_event(event)
    return out
