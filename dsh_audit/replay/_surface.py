"""The surface fold (spec §3): append, positional inclusive replace, provenance checks.

Holds only the live surface: the events whose seqs are current nodes, each projected once.
Errors carry DSH's own diagnostic text so a refusal names the same cause DSH names.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import Any

from ..errors import ReplayError
from ..log import MAX_SAFE, SURFACE_TYPES, Event
from ._derive import derive_event_message
from ._message_view import MessageView, _Generation
from ._prefix_digest import PrefixDigest

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
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_SAFE


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
        if set(map(type, raw)) <= {int} and (not raw or min(raw) >= 0):
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
        self._messages = _Generation()
        self._message_seqs: list[int] = []
        # The projected nodes without a message (ascending indices): few, so a replace shifts
        # them, and a node's message position is its index less those before it.
        self._bare_nodes: list[int] = []
        self._projected = 0  # nodes projected into _messages so far
        self._digests: dict[int, PrefixDigest] = {}  # by start, over this generation's _messages
        #: the last event :meth:`apply` was given, and what came of it (its replacement, or the
        #: message of the ReplayError it raised): a second consumer of the same fold (the
        #: validation rules of the same read) reads them instead of folding the event again
        self.last: Event | None = None
        self.last_replacement: Replacement | None = None
        self.last_refusal: str | None = None

    def apply(self, event: Event) -> Replacement | None:
        """Fold one event; raises ReplayError (DSH's text) and leaves the state unchanged on failure.
        Either outcome is kept (:attr:`last`, :attr:`last_replacement`, :attr:`last_refusal`)."""
        self.last, self.last_replacement, self.last_refusal = event, None, None
        try:
            op = _surface_op(event)
            if op is None:
                return None
            if op == "append":
                _check_provenance(event, [])
                self.nodes.append(event.seq)
                self.node_events[event.seq] = event
                return None
            self.last_replacement = self._replace(event, op)
        except ReplayError as exc:
            self.last_refusal = exc.message
            raise
        return self.last_replacement

    def _replace(self, event: Event, op: dict[str, Any]) -> Replacement:
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
        self._project()
        self.nodes[start_idx:end_idx + 1] = [event.seq]
        for seq in shadowed:
            self.node_events.pop(seq, None)
        self.node_events[event.seq] = event
        self.replace_generation += 1
        self._new_generation(start_idx, end_idx)
        return Replacement(event.seq, op["start"], op["end"], tuple(shadowed), event.type)

    def _check_tool_rewrite(self, event: Event, shadowed: list[int]) -> None:
        if len(shadowed) != 1:
            raise ReplayError("tool/result surface replacement must rewrite exactly one current node")
        original = self.node_events[shadowed[0]]
        if original.type != "tool/result":
            raise ReplayError("tool/result surface replacement must target a current tool/result")
        if _blank_result(original.data) != _blank_result(event.data):
            raise ReplayError("tool/result surface replacement may change only content")

    def _new_generation(self, start_idx: int, end_idx: int) -> None:
        """Nodes ``start_idx..end_idx`` (all projected) became one: a new message list (requests
        hold views of the old one) with the same message objects before and after the range, so
        every cache keyed by a message's identity (renderer fragments, prompt parts) still holds
        for them, and digests keep their hashes of the prefix before it. The new list records
        which of its runs are the old list's (:meth:`MessageView.runs_from`)."""
        bare = self._bare_nodes
        first, last = bisect_left(bare, start_idx), bisect_left(bare, end_idx + 1)
        kept, after = start_idx - first, end_idx + 1 - last
        shift = end_idx - start_idx
        middle = derive_event_message(self.node_events[self.nodes[start_idx]])
        old = self._messages
        added = 0 if middle is None else 1
        runs = tuple(run for run in ((0, 0, kept), (kept + added, after, len(old) - after)) if run[2])
        self._messages = _Generation(old[:kept], old, runs)
        if middle is not None:
            self._messages.append(middle)
        self._messages += old[after:]
        self._message_seqs = self._message_seqs[:kept] + ([self.nodes[start_idx]] if added else []) \
            + self._message_seqs[after:]
        self._bare_nodes = bare[:first] + ([] if added else [start_idx]) + [node - shift for node in bare[last:]]
        self._projected = len(self.nodes)
        gone = old[kept:after]
        self._digests = {start: digest.fork(self._messages, kept, gone) for start, digest in self._digests.items()}

    def _project(self) -> None:
        nodes, events = self.nodes, self.node_events
        for index in range(self._projected, len(nodes)):
            message = derive_event_message(events[nodes[index]])
            if message is not None:
                self._messages.append(message)
                self._message_seqs.append(nodes[index])
            else:
                self._bare_nodes.append(index)
        self._projected = len(nodes)

    def messages(self) -> MessageView:
        """The current request messages: every node projected, empty assistants dropped."""
        self._project()
        return MessageView(self._messages, len(self._messages))

    def message_seqs(self) -> MessageView:
        """The seq behind each entry of :meth:`messages`, in the same order."""
        self._project()
        return MessageView(self._message_seqs, len(self._message_seqs))

    def prefix_digest(self, start: int = 0) -> PrefixDigest:
        """The digest of this generation's messages from ``start`` on (see :class:`PrefixDigest`)."""
        digest = self._digests.get(start)
        if digest is None:
            digest = self._digests[start] = PrefixDigest(self._messages, start)
        return digest

    def messages_sha256(self, *, skip_head: bool = False) -> str:
        """SHA-256 of ``JSON.stringify(messages())`` (without the first message with ``skip_head``)."""
        self._project()
        return self.prefix_digest(1 if skip_head else 0).digest(len(self._messages))
