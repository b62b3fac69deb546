"""The LLM stream grammar of one step's attempts, and the ``TokenUsage`` shape.

DSH's stream invariant (``packages/llm/llm/src/invariant.ts``): blocks open before their deltas and
close once, one usage chunk and one finish per attempt (DSH420-DSH426); a v2+ stream record's shape
(DSH109); the ``TokenUsage`` shape of spec §5.6 (DSH701-DSH703). :class:`StreamChecks` is the part of
:class:`~dsh_audit.validate._trace.Trace` that folds chunks; the trace adds turns, steps and tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._json import as_object
from .._usage_rule import MAX_SAFE, reasoning_excess
from ..jsjson import stringify
from ..log import CHUNK_ROW_TYPES, Event, RowError, expand_row, is_safe_int
from .._show import MISSING, Opaque, member, shown
from ._sink import Sink
from ._model import Severity

__all__ = ["Attempt", "DELTA_BLOCK", "Step", "StreamChecks", "block_type", "hashable", "stream_record_chunks",
           "usage_problems"]

DELTA_BLOCK = {"text-delta": "text", "reasoning-delta": "reasoning", "tool-call-delta": "tool-call"}
_USAGE_REQUIRED = ("inputTokens", "outputTokens")
_USAGE_OPTIONAL = ("cacheReadTokens", "cacheWriteTokens", "reasoningTokens")
_USAGE_KEYS = frozenset(_USAGE_REQUIRED + _USAGE_OPTIONAL)
# What a usage count that DSH701/702 flag is not: 2^53 is an integer, but not one JSON holds exactly.
_NOT_COUNT = "is not a non-negative safe integer (≤ 2^53 − 1)"


def usage_problems(usage: Any) -> list[tuple[str, str]]:
    """``(rule, message)`` for every way ``usage`` is not a TokenUsage (spec §5.6). Only a usage the
    log holds is checked: DSH writes none when the provider reported none (``assistant/message``'s
    ``usage?``, spec §7.4), so a step without one is no finding of DSH701. A ``reasoningTokens``
    above its ``outputTokens``, which holds it on every route (:func:`~dsh_audit._usage_rule.reasoning_excess`),
    is DSH702: no count the ledger prices."""
    if not isinstance(usage, dict):
        return [("DSH701", f"usage {shown(usage)} is not an object")]
    out = []
    for key in _USAGE_REQUIRED:
        if key not in usage:
            out.append(("DSH701", f"usage has no {key}"))
        elif not (is_safe_int(usage[key]) and usage[key] >= 0):
            out.append(("DSH701", f"usage {key} {shown(usage[key])} {_NOT_COUNT}"))
    for key in _USAGE_OPTIONAL:
        if key in usage and not (is_safe_int(usage[key]) and usage[key] >= 0):
            out.append(("DSH702", f"usage {key} {shown(usage[key])} {_NOT_COUNT}"))
    if (excess := reasoning_excess(usage, most=MAX_SAFE)) is not None:
        out.append(("DSH702", f"usage reasoningTokens {excess[0]} is above outputTokens {excess[1]}, which holds it"))
    if not _USAGE_KEYS.issuperset(usage):  # a set pass; the names only for the finding
        extra = sorted(k for k in usage if k not in _USAGE_KEYS)
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
class Attempt:
    key: tuple[Any, Any] = (None, None)
    seqs: list[int] = field(default_factory=list)
    open: dict[Any, Any] = field(default_factory=dict)
    usage: Any = None
    usage_seen: bool = False
    finish: str | None = None
    #: (delta type, index) already reported as having no open block there (DSH421): the deltas
    #: after it at that index are one cause, one finding, until a block-start opens the index
    unopened: set[tuple[Any, Any]] = field(default_factory=set)


#: the stream grammar's rules, which a step that lost chunks (:attr:`Step.lost`) does not report
_GRAMMAR_RULES = frozenset(f"DSH{n}" for n in range(420, 427))


@dataclass
class Step:
    advertised: list[str] = field(default_factory=list)
    known: bool = True  # False when the step's assistant/message was refused: pairing unknowable
    calls: dict[str, int] = field(default_factory=dict)  # each call's first tool/call seq
    starts: dict[str, int] = field(default_factory=dict)  # how many tool/calls started each call
    results: list[str] = field(default_factory=list)
    attempt: Attempt | None = None
    last_attempt: Attempt | None = None
    #: events of the step were refused with their record (a bad packed row, a line that is no
    #: JSON): its stream is not known whole, and the grammar's findings would be about the loss
    lost: bool = False


def hashable(value: Any) -> Any:
    """A hashable stand-in for an id or index read from untrusted data (an array or object: its
    JSON text, as :func:`shown` shows it)."""
    if isinstance(value, (str, int, float, bool, type(None))) or value is MISSING:
        return value
    try:
        return Opaque(stringify(value))
    except (TypeError, ValueError, RecursionError):
        return Opaque(f"<{type(value).__name__}>")


def block_type(block: dict[str, Any]) -> str:
    """A block or chunk type in a message: the name itself (``text``), else its JSON or ``untyped``."""
    value = member(block, "type")
    return value if type(value) is str else "untyped" if value is MISSING else shown(value)


class StreamChecks:
    """Folds one step's chunks through the stream grammar and reports DSH109, DSH42x and DSH7xx findings."""

    sink: Sink
    at: tuple[int, int] | None  # the current event's line and seq
    step: Step

    def add(self, rule: str, message: str, *, hint: str | None = None, severity: Severity | None = None) -> None:
        assert self.at is not None
        if self.step.lost and rule in _GRAMMAR_RULES:
            return  # the refused record's finding (DSH104, DSH105) stands for what it held
        self.sink.add(rule, message, line=self.at[0], seq=self.at[1], hint=hint, severity=severity)

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
                    self.add("DSH424", f"{block_type(chunk)} chunk after a {attempt.finish} finish in the same step")
                step.last_attempt, attempt = attempt, None
        if attempt is None:
            attempt = step.attempt = Attempt(key=key)
        seqs = attempt.seqs
        if not seqs or seqs[-1] != seq:
            seqs.append(seq)
        self.on_stream_chunk(attempt, chunk)

    def on_stream_chunk(self, attempt: Attempt, chunk: dict[str, Any]) -> None:
        ctype, index = chunk.get("type"), chunk.get("index")
        if type(ctype) is not str:
            ctype = hashable(member(chunk, "type"))
        if type(index) is not int:
            index = hashable(member(chunk, "index"))
        needs = DELTA_BLOCK.get(ctype)  # the most common chunks first
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
                self.add("DSH422", f"block-end index {shown(index)} closes {block_type(block)}, expected "
                         f"{block_type({'type': attempt.open[index]})}")
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

    def check_usage(self, usage: Any) -> None:
        for rule, message in usage_problems(usage):
            self.add(rule, message)
