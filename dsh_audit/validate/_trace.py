"""The session trace: turns, steps, tool pairing, stream grammar, header reasons, usage.

These are DSH's runtime invariants rather than its load checks: the session trace
(``packages/core/session/src/invariant.ts``: numbering from 1, enclosure, same-step call/result
pairing), the LLM stream grammar (``packages/llm/llm/src/invariant.ts``), the header obligation of
the agent loop (spec §6.3) and the ``TokenUsage`` shape (spec §5.6). DSH loads a log that breaks
them, but the requests rebuilt from it would not be the ones a conforming loop sent.
Like DSH's trace, a failed check still applies the event's transition.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._json import as_object, json_type
from ..jsjson import stringify
from ..log import CHUNK_ROW_TYPES, Event, RowError, expand_row, is_safe_int
from ..replay import canonical_header, header_equals
from ._show import MISSING, Opaque, member, named, shown
from ._sink import Sink
from ._source import PackedRow

__all__ = ["Trace", "usage_problems"]

_DELTA_BLOCK = {"text-delta": "text", "reasoning-delta": "reasoning", "tool-call-delta": "tool-call"}
_USAGE_REQUIRED = ("inputTokens", "outputTokens")
_USAGE_OPTIONAL = ("cacheReadTokens", "cacheWriteTokens", "reasoningTokens")
_STEP_SCOPED = ("assistant/chunk", "assistant/attempt", "assistant/message", "tool/call", "step/end")
_TURN_SCOPED = ("todo/write", "request/header", "request/context")
_NOT_STARTED = "TOOL_NOT_STARTED"
_UNKNOWN_HEADER: dict[str, Any] = {"unknown": True}  # a refused request/header: content unknown


def usage_problems(usage: Any) -> list[tuple[str, str]]:
    """``(rule, message)`` for every way ``usage`` is not a TokenUsage (spec §5.6)."""
    if not isinstance(usage, dict):
        return [("DSH701", f"usage {shown(usage)} is not an object")]
    out = []
    for key in _USAGE_REQUIRED:
        if key not in usage:
            out.append(("DSH701", f"usage has no {key}"))
        elif not (is_safe_int(usage[key]) and usage[key] >= 0):
            out.append(("DSH701", f"usage {key} {shown(usage[key])} is not a non-negative integer"))
    for key in _USAGE_OPTIONAL:
        if key in usage and not (is_safe_int(usage[key]) and usage[key] >= 0):
            out.append(("DSH702", f"usage {key} {shown(usage[key])} is not a non-negative integer"))
    extra = sorted(k for k in usage if k not in _USAGE_REQUIRED + _USAGE_OPTIONAL)
    if extra:
        out.append(("DSH703", f"usage has unknown key(s) {', '.join(extra)}"))
    return out


def stream_record_chunks(record: Any) -> tuple[list[dict[str, Any]], str | None]:
    """The chunks one v2+ ``AssistantStreamRecord`` holds, or the reason it is malformed.

    A raw record is exactly ``{type:'chunk', time, chunk}``; a packed run is a v0 chunk row without
    ``seq0`` and with its ``data`` fields inline (``dsh-format-versions.md`` §6.3), so it is checked
    and expanded by the v0 row code (``expand_row``).
    """
    if not isinstance(record, dict):
        return [], f"record {shown(record)} is not an object"
    rec = record
    rtype = rec.get("type")
    if rtype == "chunk":
        if set(rec) != {"type", "time", "chunk"} or not is_safe_int(rec["time"]) or not isinstance(rec["chunk"], dict):
            return [], "a raw record is exactly {type, time, chunk} with a safe-integer time and an object chunk"
        return [rec["chunk"]], None
    if rtype not in CHUNK_ROW_TYPES:
        return [], f"unsupported stream record type {shown(rtype)}" if "type" in rec else "the record has no type"
    fields = {k: v for k, v in rec.items() if k not in ("type", "time0")}
    if "turn" in fields or "step" in fields:
        return [], f"{rtype} record has a turn or step field"
    try:
        events = expand_row({"type": rtype, "seq0": 0, "time0": rec.get("time0"),
                             "data": {"turn": 0, "step": 0, **fields}})
    except RowError as exc:
        return [], str(exc).replace("storage row", "stream record").replace("turn, step, ", "type, time0, ")
    return [e["data"]["chunk"] for e in events], None


@dataclass
class _Attempt:
    key: tuple[Any, Any] = (None, None)
    seqs: list[int] = field(default_factory=list)
    open: dict[Any, Any] = field(default_factory=dict)
    usage: Any = None
    usage_seen: bool = False
    finish: str | None = None
    #: (delta type, index) already reported as having no open block there (DSH421): the deltas
    #: after it at that index are one cause, one finding, until a block-start opens the index
    unopened: set[tuple[Any, Any]] = field(default_factory=set)


@dataclass
class _Step:
    advertised: list[str] = field(default_factory=list)
    known: bool = True  # False when the step's assistant/message was refused: pairing unknowable
    calls: dict[str, int] = field(default_factory=dict)
    results: list[str] = field(default_factory=list)
    attempt: _Attempt | None = None
    last_attempt: _Attempt | None = None


def _key(value: Any) -> Any:
    """A hashable stand-in for an id or index read from untrusted data (an array or object: its
    JSON text, as :func:`shown` shows it)."""
    if isinstance(value, (str, int, float, bool, type(None))) or value is MISSING:
        return value
    try:
        return Opaque(stringify(value))
    except (TypeError, ValueError, RecursionError):
        return Opaque(f"<{type(value).__name__}>")


def _data(event: Event) -> dict[str, Any]:
    return as_object(event.data)


_number = named  # ``turn 3``, ``no turn`` (missing), ``turn null``, ``turn "3"``


def _call(call_id: Any) -> str:
    """A call id (:func:`_key` of the field) in a message: its JSON, ``(no id)`` when missing."""
    return "(no id)" if call_id is MISSING else shown(call_id)


def _block_type(block: dict[str, Any]) -> str:
    """A block or chunk type in a message: the name itself (``text``), else its JSON or ``untyped``."""
    value = member(block, "type")
    return value if type(value) is str else "untyped" if value is MISSING else shown(value)


class Trace:
    """Folds events in order and reports DSH109, DSH4xx, DSH22x, DSH31x, DSH6xx and DSH7xx findings."""

    def __init__(self, sink: Sink, *, version: int, seed_length: int | None) -> None:
        self.sink = sink
        self.version = version
        self.seed_length = seed_length
        self.open_turn: Any = None
        self.open_step: Any = None
        self.next_turn = 1
        self.next_step = 1
        self.pending: set[Any] = set()
        self.step = _Step()
        self.header: dict[str, Any] | None = None
        self.new_instance = False
        self.end_seeds: list[int] = []  # a fork of a resumed log carries the parent's end-seeds too
        self.at: tuple[int, int] | None = None  # the current event's line and seq
        self.surface_ok = True  # whether the surface fold accepted the current event
        #: the last DSH405 mismatch (named turn and step, open turn and step) until a turn or step
        #: boundary: the events after it that name the same wrong step are one cause, one finding
        self.misplaced: tuple[Any, ...] | None = None

    def add(self, rule: str, message: str, *, hint: str | None = None) -> None:
        assert self.at is not None
        self.sink.add(rule, message, line=self.at[0], seq=self.at[1], hint=hint)

    # -- dispatch -------------------------------------------------------------------------------

    def apply(self, event: Event) -> None:
        etype = event.type
        data = _data(event)
        if etype == "assistant/chunk":
            self.chunk(event.line, event.seq, data)
            return
        self.at = (event.line, event.seq)
        if etype in _STEP_SCOPED or (etype == "tool/result" and event.surface_op == "append"):
            self.require_step(etype, data)
        if etype in _TURN_SCOPED and self.open_turn is None:
            self.add("DSH406", f"{etype} appended outside any open turn")
        handler = _HANDLERS.get(etype)
        if handler is not None:
            handler(self, event, data)

    def chunk(self, line: int, seq: int, data: dict[str, Any]) -> None:
        """One ``assistant/chunk`` event (at ``line``, with payload ``data``): its step, then its
        chunk through the stream grammar. :meth:`apply` of a chunk event, without the event."""
        self.at = (line, seq)
        turn, step = data.get("turn"), data.get("step")
        if self.open_turn != turn or self.open_step != step:
            self.require_step("assistant/chunk", data)
        chunk = data.get("chunk")
        self.feed(seq, (turn, step), chunk if isinstance(chunk, dict) else {})

    def refused(self, value: dict[str, Any]) -> None:
        """An event the admission refused: what it would have told the trace is unknown."""
        if value.get("type") == "assistant/message":
            self.step.known = False
        elif value.get("type") == "request/header":
            self.header, self.new_instance = _UNKNOWN_HEADER, False

    def finish(self) -> None:
        """End of the log: open-tail facts and seed lineage."""
        if self.open_turn is not None:
            line, seq = self.at if self.at is not None else (None, None)
            self.sink.add("DSH407", f"log ends inside open {_number('turn', self.open_turn)}"
                          + (f" ({_number('step', self.open_step)} open)" if self.open_step is not None else ""),
                          line=line, seq=seq)
        if self.version <= 1 and self.seed_length:
            if self.seed_length not in self.end_seeds:
                where = ", ".join(f"seq {s}" for s in self.end_seeds) or "none"
                self.sink.add("DSH602", f"seedLength {self.seed_length} but no session/end-seed stands at seq "
                              f"{self.seed_length} (end-seeds: {where})", line=1)

    def require_step(self, kind: str, data: dict[str, Any]) -> None:
        turn, step = data.get("turn"), data.get("step")
        if self.open_turn == turn and self.open_step == step:
            return
        mismatch = (_key(turn), _key(step), _key(self.open_turn), _key(self.open_step))
        if mismatch == self.misplaced:
            return  # reported at the first event naming this step
        self.misplaced = mismatch
        if self.open_turn is None:
            where = "no turn is open"
        elif self.open_step is None:
            where = f"no step of {_number('turn', self.open_turn)} is open"
        else:
            where = f"{_number('turn', self.open_turn)}/{_number('step', self.open_step)} is open"
        self.add("DSH405", f"{kind} names {_number('turn', member(data, 'turn'))}/"
                 f"{_number('step', member(data, 'step'))} but {where}")

    def chunk_row(self, line: int, row: PackedRow) -> None:
        """The ``assistant/chunk`` events of one packed row (:meth:`chunk` of each, in order).

        A row's deltas share turn, step, chunk type and index and follow each other, so after the
        first one each of the others meets the same step check and the same open-block check,
        leaving the state as it was but for the attempt's seqs: when neither check fails, the
        rest only extend those seqs (the row is not unpacked); when one fails, each event goes
        through :meth:`chunk`.
        """
        first = row.first
        data, seq0 = first["data"], first["seq"]
        self.chunk(line, seq0, data)
        if row.count == 1:
            return
        chunk = data.get("chunk")
        attempt = self.step.attempt
        ctype, index = (chunk.get("type"), chunk.get("index")) if isinstance(chunk, dict) else (None, None)
        block = _DELTA_BLOCK.get(ctype) if type(ctype) is str else None
        if (block is not None and type(index) is int and attempt is not None and attempt.finish is None
                and attempt.open.get(index) == block
                and self.open_turn == data.get("turn") and self.open_step == data.get("step")):
            attempt.seqs.extend(range(seq0 + 1, seq0 + row.count))
            self.at = (line, seq0 + row.count - 1)
            return
        for value in row.events()[1:]:
            self.chunk(line, value["seq"], value["data"])

    # -- turns and steps --------------------------------------------------------------------------

    def on_turn_start(self, event: Event, data: dict[str, Any]) -> None:
        turn, named_turn = data.get("turn"), _number("turn", member(data, "turn"))
        if self.open_turn is not None:
            self.add("DSH402", f"turn/start names {named_turn} while {_number('turn', self.open_turn)} is still open")
        if "turn" not in data:
            self.add("DSH401", f"turn/start has no turn field: the spec's turn/start data is {{turn}}, the turn's "
                     f"number (turn {self.next_turn} is next)", hint=f'write "turn": {self.next_turn}')
        elif turn != self.next_turn:
            self.add("DSH401", f"turn/start expected turn {self.next_turn}, got {named_turn}")
        # a turn/start naming no turn (missing or null) opens the turn it should have named, so the
        # turn's steps are not reported again as steps of no open turn
        self.open_turn = self.next_turn if turn is None else turn
        self.next_step, self.misplaced = 1, None

    def on_turn_end(self, event: Event, data: dict[str, Any]) -> None:
        turn, named_turn = data.get("turn"), _number("turn", member(data, "turn"))
        if self.open_turn is None:
            self.add("DSH402", f"turn/end names {named_turn} but no turn is open")
        elif "turn" not in data:
            self.add("DSH402", f"turn/end has no turn field: the spec's turn/end data is {{turn, reason}}, naming "
                     f"the open {_number('turn', self.open_turn)}",
                     hint=f'write "turn": {shown(self.open_turn)}')
        elif self.open_turn != turn:
            self.add("DSH402", f"turn/end names {named_turn} but {_number('turn', self.open_turn)} is open")
        if self.open_step is not None:
            self.add("DSH402", f"turn/end names {named_turn} while {_number('step', self.open_step)} is still open")
        self.open_turn = self.misplaced = None
        self.next_turn += 1

    def on_step_start(self, event: Event, data: dict[str, Any]) -> None:
        turn, step = data.get("turn"), data.get("step")
        named_turn, named_step = _number("turn", member(data, "turn")), _number("step", member(data, "step"))
        spec = "the spec's step/start data is {turn, step}"
        if "turn" not in data:
            # a missing field, not a wrong one: say what is missing, not how steps nest
            if self.open_turn is None:
                self.add("DSH404", f"step/start has no turn field, and no turn is open: {spec}, the open turn's "
                         "number and the step's", hint="write turn/start first, then its number as the step's turn")
            else:
                self.add("DSH404", f"step/start has no turn field: {spec}, naming the open "
                         f"{_number('turn', self.open_turn)}", hint=f'write "turn": {shown(self.open_turn)}')
        elif self.open_turn is None:
            # its turn/start is missing (or was not readable): the step's turn is taken as open,
            # so that the events of that turn are not each reported again as outside any turn
            self.add("DSH404", f"step/start names {named_turn} but no turn is open")
            self.open_turn = turn
        elif self.open_turn != turn:
            self.add("DSH404", f"step/start names {named_turn} but {_number('turn', self.open_turn)} is open")
        if self.open_step is not None:
            self.add("DSH404", f"step/start names {named_step} while {_number('step', self.open_step)} "
                     "is still open")
        if "step" not in data:
            self.add("DSH403", f"step/start has no step field: {spec}, steps numbered from 1 in each turn "
                     f"(step {self.next_step} is next)", hint=f'write "step": {self.next_step}')
        elif step != self.next_step:
            self.add("DSH403", f"step/start expected step {self.next_step} in {named_turn}, got {named_step}")
        self.open_step, self.misplaced = step, None
        self.step = _Step()

    def on_step_end(self, event: Event, data: dict[str, Any]) -> None:
        self.end_attempt()
        step = self.step
        for call_id in step.advertised if step.known else ():
            if call_id not in step.calls:
                self.add("DSH411", f"tool call {_call(call_id)} of the step's assistant message has no tool/call")
            if call_id not in step.results:
                self.add("DSH412", f"tool call {_call(call_id)} of the step's assistant message has no tool/result")
        self.pending.clear()
        self.open_step = self.misplaced = None
        self.next_step += 1
        self.step = _Step()

    # -- tools ------------------------------------------------------------------------------------

    def on_tool_call(self, event: Event, data: dict[str, Any]) -> None:
        call_id = _key(member(data, "callId"))
        if self.step.known and call_id not in self.step.advertised:
            self.add("DSH414", "tool/call has no callId, so it answers no tool-call block of the step's assistant "
                     "message" if call_id is MISSING else
                     f"tool/call {_call(call_id)} is not a tool-call block of the step's assistant message")
        arguments = member(data, "arguments")
        if type(arguments) is not str:
            self.add("DSH415", "tool/call has no arguments" if arguments is MISSING else
                     f"tool/call arguments is a JSON {json_type(arguments)}, not a string: {shown(arguments)}")
        self.pending.add(call_id)
        self.step.calls[call_id] = event.seq

    def on_tool_result(self, event: Event, data: dict[str, Any]) -> None:
        if event.surface_op != "append":
            if self.open_turn is None:
                self.add("DSH406", "tool/result surface replacement appended outside any open turn")
            return
        message = data["message"]
        call_id = _key(message["source"]["callId"])
        synthetic = (message["content"][0].get("isError") is True
                     and isinstance(data.get("error"), dict) and data["error"].get("code") == _NOT_STARTED)
        if call_id not in self.pending and not synthetic:
            self.add("DSH410", f"tool/result for {_call(call_id)} with no prior tool/call in this step")
        self.pending.discard(call_id)
        step = self.step
        if step.results and call_id in step.advertised and step.results[-1] in step.advertised:
            if step.advertised.index(call_id) < step.advertised.index(step.results[-1]):
                self.add("DSH413", f"tool/result {_call(call_id)} comes after {_call(step.results[-1])}, "
                         "against the model's call order")
        step.results.append(call_id)
        call_seq = step.calls.get(call_id)
        if self.surface_ok and call_seq is not None and event.source_event_seqs != [call_seq]:
            self.add("DSH311", f"sourceEventSeqs {shown(event.source_event_seqs)} should be [{call_seq}] "
                     "(its tool/call)")

    # -- the stream -------------------------------------------------------------------------------

    def end_attempt(self) -> None:
        attempt = self.step.attempt
        if attempt is not None and attempt.finish is None:
            self.add("DSH425", f"attempt starting at seq {attempt.seqs[0]} has no finish chunk")
        if attempt is not None:
            self.step.last_attempt = attempt
        self.step.attempt = None

    def on_stream(self, event: Event, data: dict[str, Any]) -> None:
        """v2+: an ``assistant/attempt`` or ``assistant/message`` stream is one attempt's chunks.

        The records are checked as DSH's ``expandAssistantStream`` does (DSH109), then their chunks go
        through the v0 chunk grammar (DSH420-DSH426) with the record's seq; a stream is its own
        attempt, so an unfinished one before it ends there (DSH425).
        """
        stream = data.get("stream")
        if not isinstance(stream, list):
            self.add("DSH109", f"{event.type} has no stream" if "stream" not in data
                     else f"{event.type} stream {shown(stream)} is not an array")
            return
        if not stream:
            return  # no model call of its own (v1->v2 writes [] for messages citing no chunk)
        if self.step.attempt is not None and self.step.attempt.finish is None:
            self.end_attempt()
        key = (data.get("turn"), data.get("step"))
        for position, record in enumerate(stream):
            chunks, problem = stream_record_chunks(record)
            if problem:
                self.add("DSH109", f"{event.type} stream record {position}: {problem}")
            for chunk in chunks:
                self.feed(event.seq, key, chunk)
        if event.type == "assistant/attempt" and self.step.attempt is not None and self.step.attempt.finish is None:
            self.end_attempt()

    def feed(self, seq: int, key: tuple[Any, Any], chunk: dict[str, Any]) -> None:
        """One chunk of the attempt of step ``key`` (stored at ``seq``) through the stream grammar."""
        step = self.step
        attempt = step.attempt
        if attempt is not None:
            if attempt.key != key:
                self.end_attempt()
                attempt = None
            elif attempt.finish is not None:
                if attempt.finish not in ("error", "aborted"):
                    self.add("DSH424", f"{_block_type(chunk)} chunk after a {attempt.finish} finish in the same step")
                step.last_attempt, attempt = attempt, None
        if attempt is None:
            attempt = step.attempt = _Attempt(key=key)
        seqs = attempt.seqs
        if not seqs or seqs[-1] != seq:
            seqs.append(seq)
        self.on_stream_chunk(attempt, chunk)

    def on_stream_chunk(self, attempt: _Attempt, chunk: dict[str, Any]) -> None:
        ctype, index = chunk.get("type"), chunk.get("index")
        if type(ctype) is not str:
            ctype = _key(member(chunk, "type"))
        if type(index) is not int:
            index = _key(member(chunk, "index"))
        needs = _DELTA_BLOCK.get(ctype)  # the most common chunks first
        if needs is not None:
            if attempt.open.get(index) != needs and (ctype, index) not in attempt.unopened:
                attempt.unopened.add((ctype, index))
                found = attempt.open.get(index)
                self.add("DSH421", f"{ctype} at index {shown(index)} needs an open {needs} block, "
                         + (f"but a {found if type(found) is str else shown(found)} block is open there"
                            if index in attempt.open else "but no block is open there"))
        elif ctype == "block-start":
            if index in attempt.open:
                self.add("DSH420", f"block-start repeats open block index {shown(index)}")
            attempt.open[index] = chunk.get("blockType")
            if attempt.unopened:  # the index's block changes: a delta there is a new cause
                attempt.unopened = {u for u in attempt.unopened if u[1] != index}
        elif ctype == "block-end":
            block = as_object(chunk.get("block"))
            if index not in attempt.open:
                self.add("DSH422", f"block-end index {shown(index)} has no open block")
            elif block.get("type") != attempt.open[index]:
                self.add("DSH422", f"block-end index {shown(index)} closes {_block_type(block)}, expected "
                         f"{_block_type({'type': attempt.open[index]})}")
            attempt.open.pop(index, None)
            if attempt.unopened:
                attempt.unopened = {u for u in attempt.unopened if u[1] != index}
        elif ctype == "usage":
            if attempt.usage_seen:
                self.add("DSH423", "usage chunk repeated in one attempt")
            attempt.usage_seen, attempt.usage = True, chunk.get("usage")
            self.check_usage(chunk.get("usage"))
        elif ctype == "finish":
            reason = as_object(chunk.get("reason"))
            kind = member(reason, "kind")
            attempt.finish = kind if type(kind) is str else "kind-less" if kind is MISSING else shown(kind)
            if attempt.open and attempt.finish in ("stop", "tool-calls"):
                self.add("DSH426", f"{attempt.finish} finish with {len(attempt.open)} open block(s)")

    # -- messages, headers, usage -----------------------------------------------------------------

    def on_assistant_attempt(self, event: Event, data: dict[str, Any]) -> None:
        self.on_stream(event, data)

    def on_assistant_message(self, event: Event, data: dict[str, Any]) -> None:
        if self.version >= 2 and "stream" in data:
            self.on_stream(event, data)
        self.end_attempt()
        content = data["message"]["content"]
        self.step.advertised = [_key(member(b, "id")) for b in content
                                if isinstance(b, dict) and b.get("type") == "tool-call"]
        attempt = self.step.last_attempt
        if (self.surface_ok and attempt is not None and event.source_event_seqs is not None
                and event.source_event_seqs != attempt.seqs):
            self.add("DSH310", f"sourceEventSeqs {_span(event.source_event_seqs)} are not the attempt's chunks "
                     f"{_span(attempt.seqs)}{_difference(event.source_event_seqs, attempt.seqs)}")
        if "usage" in data:
            self.check_usage(data["usage"])
            if attempt is not None and attempt.usage_seen and attempt.usage != data["usage"]:
                self.add("DSH704", "assistant/message usage differs from its attempt's usage chunk")

    def check_usage(self, usage: Any) -> None:
        for rule, message in usage_problems(usage):
            self.add(rule, message)

    def on_compaction_summary(self, event: Event, data: dict[str, Any]) -> None:
        if "usage" in data:
            self.check_usage(data["usage"])

    def on_end_seed(self, event: Event, data: dict[str, Any]) -> None:
        self.new_instance = True
        self.end_seeds.append(event.seq)

    def on_request_header(self, event: Event, data: dict[str, Any]) -> None:
        reason = data.get("reason")
        header = canonical_header(data.get("header") or {})
        expected = "initial" if self.header is None else "resume" if self.new_instance else "change"
        if reason not in ("initial", "resume", "change", "fallback"):
            self.add("DSH224", "request/header has no reason" if "reason" not in data
                     else f"request/header reason {shown(reason)} is not initial, resume or change")
        elif reason != "fallback" and reason != expected:
            why = {"initial": "the log has no header yet", "resume": "a new loop instance writes its first header",
                   "change": "this loop instance already wrote a header"}[expected]
            self.add("DSH225", f'reason "{reason}" where "{expected}" is owed ({why})')
        elif reason == "change" and self.header is not _UNKNOWN_HEADER and header_equals(self.header, header):
            self.add("DSH226", "change header equals the header in force")
        self.header, self.new_instance = header, False


def _span(seqs: Any) -> str:
    if _long(seqs):
        return f"[{seqs[0]}..{seqs[-1]}] ({len(seqs)})"
    return shown(seqs)


def _long(seqs: Any) -> bool:
    """Whether :func:`_span` abbreviates ``seqs`` (more than four integers) to its ends and length."""
    return isinstance(seqs, list) and len(seqs) > 4 and all(type(s) is int for s in seqs)


def _first(seqs: list[int], few: int = 5) -> str:
    more = f" (+{len(seqs) - few} more)" if len(seqs) > few else ""
    return ", ".join(str(s) for s in seqs[:few]) + more


def _difference(cited: Any, chunks: list[int]) -> str:
    """What two abbreviated :func:`_span` texts with the same ends hide (``[7..21] (15)`` against
    ``[7..21] (14)``): the cited seqs that are not chunks, the chunks not cited (the first few of
    each), or that the same seqs come in another order or repeat. Empty when the spans show the
    difference (different ends, or a list short enough to be shown whole).

    Example:
        >>> _difference([7, 8, 9, 10, 12, 11], [7, 8, 9, 10, 11])
        ': 12 is not a chunk of the attempt'
        >>> _difference([7, 8, 9, 10, 11, 13], [7, 8, 9, 10, 11, 12, 13])
        ': chunk 12 is not cited'
        >>> _difference([7, 9, 8, 10, 11], [7, 8, 9, 10, 11]), _difference([7, 8, 9, 10, 11], [8, 9, 10, 11, 12])
        (': the same seqs in another order', '')
    """
    if not (_long(cited) and _long(chunks) and cited[0] == chunks[0] and cited[-1] == chunks[-1]):
        return ""
    mine, theirs = set(cited), set(chunks)
    extra = [s for s in cited if s not in theirs]
    missing = [s for s in chunks if s not in mine]
    parts = []
    if extra:
        parts.append(f"{_first(extra)} {'is not a chunk' if len(extra) == 1 else 'are not chunks'} of the attempt")
    if missing:
        parts.append(f"{'chunk' if len(missing) == 1 else 'chunks'} {_first(missing)} "
                     f"{'is' if len(missing) == 1 else 'are'} not cited")
    if not parts:
        parts.append("the same seqs in another order" if len(cited) == len(mine) else "a seq is cited twice")
    return ": " + "; ".join(parts)


_HANDLERS = {
    "turn/start": Trace.on_turn_start, "turn/end": Trace.on_turn_end,
    "step/start": Trace.on_step_start, "step/end": Trace.on_step_end,
    "tool/call": Trace.on_tool_call, "tool/result": Trace.on_tool_result,
    "assistant/message": Trace.on_assistant_message,
    "assistant/attempt": Trace.on_assistant_attempt,
    "compaction/summary": Trace.on_compaction_summary, "session/end-seed": Trace.on_end_seed,
    "request/header": Trace.on_request_header,
}
