"""The surface fold (spec §3): append, positional inclusive replace, provenance checks.

Holds only the live surface: the events whose seqs are current nodes, each projected once.
Errors carry DSH's own diagnostic text so a refusal names the same cause DSH names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import ReplayError
from ..jsjson import stringify
from ..log import SURFACE_TYPES, Event
from ._derive import derive_event_message

__all__ = ["Replacement", "SurfaceFold"]


@dataclass(frozen=True, slots=True)
class Replacement:
    """One committed replace: the new seq, the declared range, and what it shadowed."""

    seq: int
    start: int
    end: int
    shadowed_seqs: tuple[int, ...]
    type: str

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "start": self.start, "end": self.end, "shadowedSeqs": list(self.shadowed_seqs)}


def _is_seq(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**53 - 1


def _surface_op(event: Event) -> Any:
    if event.type not in SURFACE_TYPES:
        if event.surface_op is not None:
            raise ReplayError(f'session event "{event.type}" is not surface-eligible and cannot carry surfaceOp')
        if event.source_event_seqs is not None:
            raise ReplayError(f'session event "{event.type}" is not surface-eligible and cannot carry sourceEventSeqs')
        return None
    op = event.surface_op
    if op is None:
        raise ReplayError(f'session event "{event.type}" is surface-eligible and requires a surfaceOp marker')
    if op == "append":
        return op
    if not isinstance(op, dict):
        raise ReplayError(f'session event "{event.type}" carries an invalid surfaceOp')
    if not (len(op) == 3 and op.get("op") == "replace" and _is_seq(op.get("start")) and _is_seq(op.get("end"))):
        raise ReplayError(f'session event "{event.type}" carries an invalid replace surfaceOp')
    return op


def _check_provenance(event: Event, shadowed: list[int]) -> None:
    raw = event.source_event_seqs
    sources: set[int] = set()
    if raw is not None:
        if not isinstance(raw, list):
            raise ReplayError(f"sourceEventSeqs on event at seq {event.seq} must be an array when present")
        if not raw and event.type != "assistant/message":
            raise ReplayError("sourceEventSeqs must not be empty except on assistant/message")
        later = None
        for source in raw:
            if not _is_seq(source):
                raise ReplayError(f'session event "{event.type}" sourceEventSeqs must densely contain non-negative safe integers')
            sources.add(source)
            if later is None and source >= event.seq:
                later = source
        if len(sources) != len(raw):
            raise ReplayError("sourceEventSeqs must not contain duplicates")
        if later is not None:
            raise ReplayError(f"sourceEventSeqs must reference earlier events: {later} >= current seq {event.seq}")
    missing = [s for s in shadowed if s not in sources]
    if missing:
        raise ReplayError("surface replace: sourceEventSeqs must include every shadowed surface node; "
                          f"missing {', '.join(map(str, missing))}")


def _blank_result(data: Any) -> Any:
    message = data["message"]
    result = message["content"][0]
    return {**data, "message": {**message, "content": [{**result, "content": None}]}}


class SurfaceFold:
    """Incremental surface state: ``nodes`` (seqs in order) and the event behind each node.

    Example:
        >>> fold = SurfaceFold()
        >>> fold.nodes
        []
    """

    def __init__(self) -> None:
        self.nodes: list[int] = []
        self.node_events: dict[int, Event] = {}
        self.replace_generation = 0
        self._fragments: dict[int, str] = {}

    def apply(self, event: Event) -> Replacement | None:
        """Fold one event; raises ReplayError (DSH's text) and leaves the state unchanged on failure."""
        op = _surface_op(event)
        if op is None:
            return None
        if op == "append":
            _check_provenance(event, [])
            self.nodes.append(event.seq)
            self.node_events[event.seq] = event
            return None
        try:
            start_idx = self.nodes.index(op["start"])
        except ValueError:
            raise ReplayError(f"surface replace: start seq {op['start']} not found in surface") from None
        try:
            end_idx = self.nodes.index(op["end"])
        except ValueError:
            raise ReplayError(f"surface replace: end seq {op['end']} not found in surface") from None
        if start_idx > end_idx:
            raise ReplayError(f"surface replace: start seq {op['start']} (index {start_idx}) is after "
                              f"end seq {op['end']} (index {end_idx})")
        shadowed = self.nodes[start_idx:end_idx + 1]
        _check_provenance(event, shadowed)
        if event.type == "tool/result":
            self._check_tool_rewrite(event, shadowed)
        self.nodes[start_idx:end_idx + 1] = [event.seq]
        for seq in shadowed:
            self.node_events.pop(seq, None)
            self._fragments.pop(seq, None)
        self.node_events[event.seq] = event
        self.replace_generation += 1
        return Replacement(event.seq, op["start"], op["end"], tuple(shadowed), event.type)

    def _check_tool_rewrite(self, event: Event, shadowed: list[int]) -> None:
        if len(shadowed) != 1:
            raise ReplayError("tool/result surface replacement must rewrite exactly one current node")
        original = self.node_events[shadowed[0]]
        if original.type != "tool/result":
            raise ReplayError("tool/result surface replacement must target a current tool/result")
        if _blank_result(original.data) != _blank_result(event.data):
            raise ReplayError("tool/result surface replacement may change only content")

    def messages(self) -> tuple[dict[str, Any], ...]:
        """The current request messages: every node projected, empty assistants dropped."""
        out = []
        for seq in self.nodes:
            message = derive_event_message(self.node_events[seq])
            if message is not None:
                out.append(message)
        return tuple(out)

    def message_seqs(self) -> tuple[int, ...]:
        """The seq behind each entry of :meth:`messages`, in the same order."""
        return tuple(s for s in self.nodes if derive_event_message(self.node_events[s]) is not None)

    def messages_json(self, *, skip_head: bool = False) -> str:
        """``JSON.stringify(messages())``, built from per-node fragments serialised once."""
        parts = []
        for seq in self.nodes[1:] if skip_head else self.nodes:
            fragment = self._fragments.get(seq)
            if fragment is None:
                message = derive_event_message(self.node_events[seq])
                fragment = "" if message is None else stringify(message)
                self._fragments[seq] = fragment
            if fragment:
                parts.append(fragment)
        return "[" + ",".join(parts) + "]"
