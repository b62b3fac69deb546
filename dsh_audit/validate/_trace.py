"""The session trace: turns, steps, tool pairing, header reasons, usage (the stream grammar: ``_stream``).

These are DSH's runtime invariants rather than its load checks: the session trace
(``packages/core/session/src/invariant.ts``: numbering from 1, enclosure, same-step call/result
pairing), the LLM stream grammar (``packages/llm/llm/src/invariant.ts``), the header obligation of
the agent loop (spec §6.3) and the ``TokenUsage`` shape (spec §5.6). DSH loads a log that breaks
them, but the requests rebuilt from it would not be the ones a conforming loop sent.
Like DSH's trace, a failed check still applies the event's transition. Unlike it, one fault is
one finding: a turn/start or step/start while one is still open counts that one as ended (its end
is missing, or was refused), a number that is no integer opens the one owed, another number is
taken for the owed one when the turn's or step's first event names that (:meth:`Trace.settle`),
and a refused
record's events are not reported again (:attr:`Trace.lost`), so the numbers, the nesting and the
stream after a fault are checked as if it were mended.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._json import as_object, json_type
from ..log import Event, is_safe_int
from ..replay import canonical_header, header_equals
from .._show import MISSING, member, named, shown
from ._sink import Sink
from ._source import PackedRow
from ._spans import difference, span
from ._stream import DELTA_BLOCK, Step, StreamChecks, hashable

__all__ = ["Trace"]

_STEP_SCOPED = ("assistant/chunk", "assistant/attempt", "assistant/message", "tool/call", "step/end")
_TURN_SCOPED = ("todo/write", "request/header", "request/context")
_NOT_STARTED = "TOOL_NOT_STARTED"
_UNKNOWN_HEADER: dict[str, Any] = {"unknown": True}  # a refused request/header: content unknown


def _data(event: Event) -> dict[str, Any]:
    return as_object(event.data)


_number = named  # ``turn 3``, ``no turn`` (missing), ``turn null``, ``turn "3"``


def _call(call_id: Any) -> str:
    """A call id (:func:`hashable` of the field) in a message: its JSON, ``(no id)`` when missing."""
    return "(no id)" if call_id is MISSING else shown(call_id)


class Trace(StreamChecks):
    """Folds events in order and reports DSH109, DSH4xx, DSH22x, DSH31x, DSH6xx and DSH7xx findings."""

    def __init__(self, sink: Sink, *, version: int, seed_length: int | None, lost: Sequence[range] = ()) -> None:
        self.sink = sink
        #: the seqs of events refused with their record (DSH104, DSH105: :attr:`EventScan.lost`):
        #: the attempt lacks them, and a message that cites them is not reported for it again;
        #: the ranges known when the trace last looked (a new one lies before the next event)
        self.lost, self.lost_seen = lost, 0
        self.version = version
        self.seed_length = seed_length
        self.open_turn: Any = None
        self.open_step: Any = None
        self.next_turn = 1
        self.next_step = 1
        self.pending: set[Any] = set()
        self.step = Step()
        #: the calls of the open step that a TOOL_NOT_STARTED result resolved (DSH411's warning)
        self.not_started: set[Any] = set()
        self.header: dict[str, Any] | None = None
        self.new_instance = False
        self.end_seeds: list[int] = []  # a fork of a resumed log carries the parent's end-seeds too
        self.at: tuple[int, int] | None = None  # the current event's line and seq
        self.surface_ok = True  # whether the surface fold accepted the current event
        #: the last DSH405 mismatch (named turn and step, open turn and step) until a turn or step
        #: boundary: the events after it that name the same wrong step are one cause, one finding
        self.misplaced: tuple[Any, ...] | None = None
        #: the numbers a turn/start and a step/start owed when they named others (DSH401, DSH403),
        #: until the first event that names the turn (the step) settles which was wrong
        #: (:meth:`settle`): the start, when it names the owed one
        self.owed_turn: int | None = None
        self.owed_step: int | None = None

    # -- dispatch -------------------------------------------------------------------------------

    def apply(self, event: Event) -> None:
        etype = event.type
        data = _data(event)
        if etype == "assistant/chunk":  # notes lost seqs itself
            self.chunk(event.line, event.seq, data)
            return
        if self.lost and len(self.lost) != self.lost_seen:
            self.note_lost()
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
        if self.lost and len(self.lost) != self.lost_seen:
            self.note_lost()
        turn, step = data.get("turn"), data.get("step")
        if self.open_turn != turn or self.open_step != step or self.owed_step is not None:
            self.require_step("assistant/chunk", data)
        chunk = data.get("chunk")
        if not isinstance(chunk, dict):
            chunk = {}
        attempt = self.step.attempt
        if attempt is not None and attempt.finish is None and attempt.key == (turn, step):
            # the common case, a delta into the open block of its index in the step's unfinished
            # attempt: all :meth:`feed` would do is extend the attempt's seqs
            ctype, index = chunk.get("type"), chunk.get("index")
            if (type(ctype) is str and type(index) is int and ctype in DELTA_BLOCK
                    and attempt.open.get(index) == DELTA_BLOCK[ctype]):
                seqs = attempt.seqs
                if not seqs or seqs[-1] != seq:
                    seqs.append(seq)
                return
        self.feed(seq, (turn, step), chunk)

    def note_lost(self) -> None:
        """Events were refused with their record just before the event being applied: the open
        step's stream is not known whole (:attr:`Step.lost`)."""
        self.lost_seen = len(self.lost)
        self.step.lost = True

    def refused(self, value: dict[str, Any]) -> None:
        """An event the admission refused: what it would have told the trace is unknown, but a
        refused turn/end (a malformed legacy reason, DSH504) still ends its turn, so that the next
        turn/start does not report it never ended."""
        if value.get("type") == "assistant/message":
            self.step.known = False
        elif value.get("type") == "turn/end" and self.open_turn is not None:
            self.open_turn = self.misplaced = self.owed_step = self.owed_turn = None
            self.next_turn += 1
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

    def settle(self, turn: Any, step: Any = MISSING) -> None:
        """The first event naming the open turn (``turn``) or step (``step``) after a start that
        named another number than the one owed: when it names the owed one, the start's number
        was the fault, said once (DSH401, DSH403), and the owed one is open, so that the turn's or
        step's events are not each reported as misplaced; when not, the start's number stands."""
        if self.owed_turn is not None:
            if is_safe_int(turn) and turn == self.owed_turn:
                self.open_turn = self.owed_turn
            self.owed_turn = None
        if self.owed_step is not None and step is not MISSING:
            if turn == self.open_turn and is_safe_int(step) and step == self.owed_step:
                self.open_step = self.owed_step
            self.owed_step = None

    def require_step(self, kind: str, data: dict[str, Any]) -> None:
        turn, step = data.get("turn"), data.get("step")
        if self.owed_turn is not None or self.owed_step is not None:
            self.settle(turn, step)
        if self.open_turn == turn and self.open_step == step:
            return
        mismatch = (hashable(turn), hashable(step), hashable(self.open_turn), hashable(self.open_step))
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
        block = DELTA_BLOCK.get(ctype) if type(ctype) is str else None
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
        if self.open_turn is not None:
            self.next_turn += 1  # the open turn is counted as ended: this one is numbered after it
            self.add("DSH402", f"turn/start names {_number('turn', member(data, 'turn'))} while "
                     f"{_number('turn', self.open_turn)} is still open: {_number('turn', self.open_turn)} was never "
                     "ended", hint=f"write turn/end of {_number('turn', self.open_turn)} before the next turn/start")
        spec = "the spec's turn/start data is {turn}, the turn's number"
        turn = self._numbered("turn/start", "turn", data, self.next_turn, spec=spec, rule="DSH401")
        self.owed_turn = self.owed_step = None
        if turn is not None and turn != self.next_turn:
            self.add("DSH401", f"turn/start expected turn {self.next_turn}, got {_number('turn', turn)}")
            self.owed_turn = self.next_turn
        # a turn/start naming no turn that is an integer opens the turn it should have named, so
        # the turn's steps are not reported again as steps of another turn
        self.open_turn = self.next_turn if turn is None else turn
        self.next_step, self.misplaced = 1, None

    def _numbered(self, kind: str, field: str, data: dict[str, Any], expected: int, *, spec: str,
                  rule: str) -> int | None:
        """The number a ``kind`` event (turn/start, step/start) names in ``field``, or None when it
        names none that is an integer: then the ``rule`` finding says so once (missing, or the type
        the spec's ``spec`` gives it), and the ``expected`` number stands in for it."""
        value = member(data, field)
        if value is MISSING:
            self.add(rule, f"{kind} has no {field} field: {spec} ({field} {expected} is next)",
                     hint=f'write "{field}": {expected}')
            return None
        if not is_safe_int(value):
            hint = f'write "{field}": {expected}'
            if _integral(value):  # an integer all the same: say why it is refused, not that it is none
                what = f"an integer past {'-' if value < 0 else ''}2**53, not a safe integer, which DSH refuses"
            else:
                what = ("" if value is None else f"a JSON {json_type(value)}, ") + "not an integer"
                hint += ", a JSON number"
            self.add(rule, f"{kind} has {field} {shown(value)}, {what}: {spec} ({field} {expected} is next)",
                     hint=hint)
            return None
        return int(value)

    def on_turn_end(self, event: Event, data: dict[str, Any]) -> None:
        turn = data.get("turn")
        self.settle(turn)
        if self.open_turn is None:
            self.add("DSH402", f"turn/end names {_number('turn', member(data, 'turn'))} but no turn is open")
        elif "turn" not in data:
            self.add("DSH402", f"turn/end has no turn field: the spec's turn/end data is {{turn, reason}}, naming "
                     f"the open {_number('turn', self.open_turn)}",
                     hint=f'write "turn": {shown(self.open_turn)}')
        elif self.open_turn != turn:
            self.add("DSH402", f"turn/end names {_number('turn', turn)} but {_number('turn', self.open_turn)} is open")
        if self.open_step is not None:
            self.add("DSH402", f"turn/end names {_number('turn', member(data, 'turn'))} while "
                     f"{_number('step', self.open_step)} is still open")
        if _counts(self.open_turn, turn, self.next_turn):
            self.next_turn += 1
        self.open_turn = self.misplaced = self.owed_step = None

    def on_step_start(self, event: Event, data: dict[str, Any]) -> None:
        turn = data.get("turn")
        spec = "the spec's step/start data is {turn, step}"
        self.settle(turn)
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
            self.add("DSH404", f"step/start names {_number('turn', turn)} but no turn is open")
            self.open_turn = turn
        elif self.open_turn != turn:
            self.add("DSH404", f"step/start names {_number('turn', turn)} but {_number('turn', self.open_turn)} "
                     "is open")
        if self.open_step is not None:
            self.next_step += 1  # the open step is counted as ended (its step/end missing, or refused)
            self.add("DSH404", f"step/start names {_number('step', member(data, 'step'))} while "
                     f"{_number('step', self.open_step)} is still open")
        step = self._numbered("step/start", "step", data, self.next_step,
                              spec=f"{spec}, steps numbered from 1 in each turn", rule="DSH403")
        self.owed_step = None
        if step is not None and step != self.next_step:
            self.add("DSH403", f"step/start expected step {self.next_step} in "
                     f"{_number('turn', member(data, 'turn'))}, got {_number('step', step)}")
            self.owed_step = self.next_step
        self.open_step = self.next_step if step is None else step
        self.misplaced = None
        self._new_step()

    def on_step_end(self, event: Event, data: dict[str, Any]) -> None:
        self.end_attempt()
        step = self.step
        for call_id in step.advertised if step.known else ():
            if call_id not in step.calls:
                # only DSH's TOOL_NOT_STARTED repair result resolves a call never started (a fork
                # seed's, a crash repair's): v4 reads it; any other result DSH refuses (DSH410)
                self.add("DSH411", f"tool call {_call(call_id)} of the step's assistant message has no tool/call",
                         severity="warning" if call_id in self.not_started else None)
            if call_id not in step.results:
                self.add("DSH412", f"tool call {_call(call_id)} of the step's assistant message has no tool/result")
        self.pending.clear()
        if _counts(self.open_step, data.get("step"), self.next_step):
            self.next_step += 1
        self.open_step = self.misplaced = self.owed_step = None
        self._new_step()

    def _new_step(self) -> None:
        """Forget the step that ended, or that a step/start left open: what it advertised,
        started and resolved."""
        self.step = Step()
        self.not_started.clear()

    # -- tools ------------------------------------------------------------------------------------

    def on_tool_call(self, event: Event, data: dict[str, Any]) -> None:
        call_id = hashable(member(data, "callId"))
        if self.step.known and call_id not in self.step.advertised:
            self.add("DSH414", "tool/call has no callId, so it answers no tool-call block of the step's assistant "
                     "message" if call_id is MISSING else
                     f"tool/call {_call(call_id)} is not a tool-call block of the step's assistant message")
        arguments = member(data, "arguments")
        if type(arguments) is not str:
            self.add("DSH415", "tool/call has no arguments" if arguments is MISSING else
                     f"tool/call arguments is a JSON {json_type(arguments)}, not a string: {shown(arguments)}")
        self._repeated(call_id)
        self.pending.add(call_id)
        self.step.calls.setdefault(call_id, event.seq)

    def _repeated(self, call_id: Any) -> None:
        """DSH416 when a tool/call starts a call the step started already (more often than its
        assistant message advertises the id: a repeated id opens one call per block)."""
        step = self.step
        started = step.starts.get(call_id, 0)
        step.starts[call_id] = started + 1
        if call_id is MISSING or call_id not in step.calls:
            return
        if started >= (step.advertised.count(call_id) if step.known else 1):
            self.add("DSH416", f"tool/call {_call(call_id)} starts again the call started at seq "
                     f"{step.calls[call_id]}: a call is started once")

    def on_tool_result(self, event: Event, data: dict[str, Any]) -> None:
        if event.surface_op != "append":
            if self.open_turn is None:
                self.add("DSH406", "tool/result surface replacement appended outside any open turn")
            return
        message = data["message"]
        call_id = hashable(message["source"]["callId"])
        synthetic = (message["content"][0].get("isError") is True
                     and isinstance(data.get("error"), dict) and data["error"].get("code") == _NOT_STARTED)
        if synthetic:
            self.not_started.add(call_id)
        elif call_id not in self.pending:
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

    # -- messages, headers, usage -----------------------------------------------------------------

    def on_assistant_attempt(self, event: Event, data: dict[str, Any]) -> None:
        self.on_stream(event, data)

    def on_assistant_message(self, event: Event, data: dict[str, Any]) -> None:
        if self.version >= 2 and "stream" in data:
            self.on_stream(event, data)
        self.end_attempt()
        content = data["message"]["content"]
        self.step.advertised = [hashable(member(b, "id")) for b in content
                                if isinstance(b, dict) and b.get("type") == "tool-call"]
        attempt = self.step.last_attempt
        cited = event.source_event_seqs
        if self.lost and cited is not None:
            cited = [seq for seq in cited if not any(seq in seqs for seqs in self.lost)]
        if self.surface_ok and attempt is not None and cited is not None and cited != attempt.seqs:
            self.add("DSH310", f"sourceEventSeqs {span(cited)} are not the attempt's chunks "
                     f"{span(attempt.seqs)}{difference(cited, attempt.seqs)}")
        if "usage" in data:
            self.check_usage(data["usage"])
            if attempt is not None and attempt.usage_seen and attempt.usage != data["usage"]:
                self.add("DSH704", "assistant/message usage differs from its attempt's usage chunk")

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


def _integral(value: Any) -> bool:
    """Whether a JSON number ``value`` is an integer (:func:`is_safe_int` says whether it is a safe one)."""
    return (type(value) is int) or (type(value) is float and value.is_integer())


def _counts(opened: Any, named: Any, following: int) -> bool:
    """Whether a turn/end or step/end (naming ``named``) ends one more turn or step, as DSH's trace
    counts them: it closes the open one (``opened``), or none is open and it names no number
    before the next one, ``following`` (a turn or step whose start is missing; not one closed
    already, its end after another's: a swapped pair)."""
    return opened is not None or not (is_safe_int(named) and named < following)


_HANDLERS = {
    "turn/start": Trace.on_turn_start, "turn/end": Trace.on_turn_end,
    "step/start": Trace.on_step_start, "step/end": Trace.on_step_end,
    "tool/call": Trace.on_tool_call, "tool/result": Trace.on_tool_result,
    "assistant/message": Trace.on_assistant_message,
    "assistant/attempt": Trace.on_assistant_attempt,
    "compaction/summary": Trace.on_compaction_summary, "session/end-seed": Trace.on_end_seed,
    "request/header": Trace.on_request_header,
}
