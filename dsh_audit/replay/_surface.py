"""The surface fold (spec §3): append, positional inclusive replace, provenance checks.

Holds only the live surface: the events whose seqs are current nodes, each projected once.
Errors carry DSH's own diagnostic text so a refusal names the same cause DSH names.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any, overload

from ..errors import ReplayError
from ..jsjson import stringify_bytes
from ..log import SURFACE_TYPES, Event
from ._derive import derive_event_message

__all__ = ["MessageView", "Replacement", "SurfaceFold"]


class MessageView(Sequence[Any]):
    """An immutable view of ``items[start:n]`` of one fold generation's growing list.

    Requests share one growing list per surface generation instead of copying it, so listing
    every request of a log costs O(1) per request, not O(history). Appends never change a view
    (its bounds are fixed); a replace starts a new list.
    """

    __slots__ = ("_items", "_n", "_start")

    def __init__(self, items: list[Any], n: int, start: int = 0) -> None:
        self._items = items
        self._n = n
        self._start = min(start, n)

    def __len__(self) -> int:
        return self._n - self._start

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Any, ...]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return tuple(self._items[self._start: self._n][index])
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("index out of range")
        return self._items[self._start + index]

    def __iter__(self) -> Iterator[Any]:
        return islice(self._items, self._start, self._n)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    def __hash__(self) -> int:
        return hash(tuple(id(m) for m in self))

    def __repr__(self) -> str:
        return f"MessageView({list(self)!r})" if len(self) < 4 else f"MessageView({len(self)} items)"

    def shared_prefix(self, other: object) -> int:
        """How many leading items this view and ``other`` are known to share without comparing
        them: views of the same list from the same start share all of the shorter one's items
        (a fold generation only appends); otherwise 0."""
        if isinstance(other, MessageView) and other._items is self._items and other._start == self._start:
            return min(self._n, other._n) - self._start
        return 0

    def tail(self, start: int) -> "MessageView":
        """The same view without its first ``start`` items (no copy)."""
        return MessageView(self._items, self._n, self._start + start)


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
        if all(type(source) is int for source in raw) and (not raw or min(raw) >= 0):
            sources = set(raw)  # the common case, checked in C-speed passes
            if raw and max(raw) >= event.seq:
                later = next(source for source in raw if source >= event.seq)
        else:
            for source in raw:
                if not _is_seq(source):
                    raise ReplayError(f'session event "{event.type}" sourceEventSeqs must densely contain '
                                      "non-negative safe integers")
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
        # Projected messages of the current generation, in node order, grown on append.
        self._messages: list[dict[str, Any]] = []
        self._message_seqs: list[int] = []
        self._projected = 0  # nodes projected into _messages so far
        self._digest: tuple[Any, int, bool, bool] | None = None  # hasher, nodes fed, any fed, skip_head

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
        self.node_events[event.seq] = event
        self.replace_generation += 1
        self._messages, self._message_seqs, self._projected = [], [], 0
        self._digest = None
        return Replacement(event.seq, op["start"], op["end"], tuple(shadowed), event.type)

    def _check_tool_rewrite(self, event: Event, shadowed: list[int]) -> None:
        if len(shadowed) != 1:
            raise ReplayError("tool/result surface replacement must rewrite exactly one current node")
        original = self.node_events[shadowed[0]]
        if original.type != "tool/result":
            raise ReplayError("tool/result surface replacement must target a current tool/result")
        if _blank_result(original.data) != _blank_result(event.data):
            raise ReplayError("tool/result surface replacement may change only content")

    def _project(self) -> None:
        for seq in self.nodes[self._projected:]:
            message = derive_event_message(self.node_events[seq])
            if message is not None:
                self._messages.append(message)
                self._message_seqs.append(seq)
        self._projected = len(self.nodes)

    def messages(self) -> MessageView:
        """The current request messages: every node projected, empty assistants dropped."""
        self._project()
        return MessageView(self._messages, len(self._messages))

    def message_seqs(self) -> MessageView:
        """The seq behind each entry of :meth:`messages`, in the same order."""
        self._project()
        return MessageView(self._message_seqs, len(self._message_seqs))

    def messages_sha256(self, *, skip_head: bool = False) -> str:
        """SHA-256 of ``JSON.stringify(messages())``, fed incrementally while only appends happen."""
        state = self._digest
        if state is None or state[3] != skip_head:
            state = (hashlib.sha256(b"["), 1 if skip_head else 0, False, skip_head)
        hasher, fed, any_fed, _ = state
        for seq in self.nodes[fed:]:
            message = derive_event_message(self.node_events[seq])
            if message is not None:
                if any_fed:
                    hasher.update(b",")
                hasher.update(stringify_bytes(message))
                any_fed = True
        self._digest = (hasher, len(self.nodes), any_fed, skip_head)
        final = hasher.copy()
        final.update(b"]")
        return final.hexdigest()
