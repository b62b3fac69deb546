"""What DSH refuses in one event of a log, in its words, and the order it checks its rules in.

DSH validates a whole log before it uses any of it (spec §1.3-§1.8); the reader streams, so it
keeps every refusal it meets as a :class:`Candidate` and reports the one DSH would report first:
the lowest stage, and within a stage the earliest position.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import CorruptLogError, DshAuditError, UnsupportedFormatError, closest
from ._shapes import envelope_error, envelope_fault, is_safe_int, message_shape_error
from ._types import KNOWN_EVENT_TYPES
from .._json import json_type
from .._show import MISSING, member, missing_or, shown
from .._usage_rule import js_integer

__all__ = ["DAMAGED_HINT", "LEGACY_HINT", "META", "RETIRED_TYPES", "SEED", "UPGRADE", "Candidate", "event_refusal",
           "retired_refusal", "seq_refusal"]


# Failure stages in the order DSH checks them; a lower stage wins over a higher one anywhere.
SCAN, HEADER_DELTA, MODE_SET, FALLBACK, UPGRADE, UNKNOWN, META, SEED = range(8)


@dataclass(slots=True)
class Candidate:
    stage: int
    position: int
    error: DshAuditError

    def key(self) -> tuple[int, int]:
        return (self.stage, self.position)


#: The types of the events :func:`retired_refusal` may refuse: any other event is none of its shapes.
RETIRED_TYPES = frozenset({"request/header-delta", "mode/set", "request/header"})


def retired_refusal(raw: Any, *, sid: str, path: str, line: int) -> tuple[int, DshAuditError] | None:
    """The refusal of a legacy shape retired before format v0 was frozen (a header delta, a
    ``mode/set``, a fallback request header) that ``raw`` is, with its stage; None for any other."""
    seq = raw["seq"]
    etype = raw.get("type")
    data = raw.get("data")
    if etype == "request/header-delta":
        return HEADER_DELTA, UnsupportedFormatError(
            f'session "{sid}" contains unsupported legacy request/header-delta event at seq {seq}',
            path=path, line=line, seq=seq,
            hint="header deltas were retired before format v0 was frozen; DSH cannot load this log")
    if etype == "mode/set":
        return MODE_SET, UnsupportedFormatError(
            f'session "{sid}" contains unsupported legacy mode/set event at seq {seq}',
            path=path, line=line, seq=seq, hint="mode/set was retired; DSH cannot load this log")
    if etype == "request/header" and isinstance(data, dict) and data.get("reason") == "fallback":
        return FALLBACK, UnsupportedFormatError(
            f'session "{sid}" contains unsupported legacy request/header reason "fallback" at seq {seq}',
            path=path, line=line, seq=seq, hint="fallback headers were retired; DSH cannot load this log")
    return None


def event_refusal(event: dict[str, Any], seq: int, known: frozenset[str], *, sid: str, path: str,
                  line: int) -> tuple[int, DshAuditError] | None:
    """The first refusal, with its stage, of an upgraded ``event`` (at ``seq``), in DSH's order:
    its message shape, a type not in ``known`` and not marked ignorable, then its envelope."""
    shape = message_shape_error(event)
    if shape:
        return UPGRADE, CorruptLogError(f"session event at seq {seq} {shape}", path=path, line=line, seq=seq,
                                        hint=_refused_hint(_shape_requirement(event, shape), "DSH120"))
    etype = event.get("type")
    if isinstance(etype, str) and etype not in known and event.get("ignorable") is not True:
        return UNKNOWN, UnsupportedFormatError(
            f'session "{sid}" contains event type "{etype}" (seq {seq}) unknown to this harness and not marked ignorable',
            path=path, line=line, seq=seq, hint=_unknown_type_hint(etype))
    envelope = envelope_error(event)
    if envelope:
        subject, problem = envelope
        return SEED, CorruptLogError(f"seed {subject} at index {seq} {problem}", path=path, line=line, seq=seq,
                                     hint=_envelope_hint(event, problem))
    return None


#: What DSH requires, for a seed refusal whose words do not say it (DSH's
#: ``assertSessionEventEnvelope``, ``assertCurrentLlmShape`` and ``assertAdapterDefaults``,
#: packages/core/session/src/index.ts), with the ``dsh-audit validate`` rule that names it.
_ENVELOPE_HINTS = {
    "has invalid adapterDefaults": ('DSH accepts adapterDefaults only as an object whose keys are "reasoningEffort" '
                                    'or "maxTokens", each true and each set in the header\'s config', "DSH223"),
}

#: What DSH requires of a surface message (``assertMessageEventShape``), by the problem it reports.
_SHAPE_REQUIREMENTS = {
    "lacks an identified message": "DSH requires the message as an object with a non-empty string id",
    "message has invalid source": "DSH requires the message's source as an object with a non-empty string kind",
    "message must have model source": ('DSH requires an assistant message\'s source as {"kind":"model"} with a '
                                       "non-empty string provider and model"),
    "message must have tool source": 'DSH requires a tool result\'s source as {"kind":"tool"} with a non-empty callId',
    "message must contain one tool-result block": ('DSH requires a tool result\'s content to be exactly one '
                                                   '{"type":"tool-result"} block with a content array'),
    "message has mismatched tool call ids": "DSH requires the tool-result block's toolCallId to equal source.callId",
}


def _refused_hint(requires: str, rule: str) -> str:
    """The hint of a seed refusal: what DSH requires, that DSH refuses the log too, and where every
    problem is listed (no option reads such a log: --lenient adapts a session header only)."""
    return (f"{requires}; DSH refuses the log too (--lenient does not relax events); "
            f"`dsh-audit validate FILE` lists every problem (rule {rule})")


#: The hint of an event shaped like a pre-react-loop legacy event but not a complete one, which DSH
#: does not upgrade (``dsh_audit.log._upgrade``'s ``Malformed``).
LEGACY_HINT = _refused_hint("DSH upgrades a legacy turn/start, turn/end or steering/message only in its complete "
                            "legacy shape; write the current shape", "DSH504")


def _message(event: dict[str, Any]) -> Any:
    """The message a surface event carries (a user/message's data is its message)."""
    data = event.get("data")
    return data if event.get("type") == "user/message" else data.get("message") if isinstance(data, dict) else None


def _shape_requirement(event: dict[str, Any], problem: str) -> str:
    """What DSH requires of ``event``'s message, for its shape ``problem``, with the value it has."""
    message = _message(event)
    if problem.startswith("message must have role"):
        role = "assistant" if event.get("type") == "assistant/message" else "user"
        found = missing_or(message, "role", f'is not "{role}"', owner="the message", prefix="message.")
        return f'{found}: DSH requires role "{role}" in a {event.get("type")}'
    if problem == "message has invalid content":
        found = missing_or(message, "content", "is not an array", owner="the message", prefix="message.")
        return f"{found}: DSH requires content as an array of content blocks"
    return _SHAPE_REQUIREMENTS.get(problem, "DSH checks every surface message's shape when it loads a log")


def _envelope_hint(event: dict[str, Any], problem: str) -> str | None:
    """The hint of a seed envelope or request/header refusal: the field that breaks the rule and
    what DSH requires of it."""
    if problem == "has an invalid event envelope":
        fault = envelope_fault(event)
        return None if fault is None else _refused_hint(fault[1], fault[0])
    if problem in _ENVELOPE_HINTS:
        return _refused_hint(*_ENVELOPE_HINTS[problem])
    data = event.get("data")
    header = data.get("header") if isinstance(data, dict) else None
    config = header.get("config") if isinstance(header, dict) else None
    if problem == "lacks provider/model":
        if not isinstance(header, dict):
            found = missing_or(data, "header", "is not an object", owner="the event's data", prefix="data.")
        elif not isinstance(config, dict):
            found = missing_or(header, "config", "is not an object", owner="the header", prefix="header.")
        else:
            found = next((missing_or(config, key, "is not a non-empty string", owner="config", prefix="config.")
                          for key in ("provider", "model") if not isinstance(config.get(key), str) or not config[key]),
                         "config.provider or config.model is wrong")
        return _refused_hint(f"{found}: DSH requires config.provider and config.model, non-empty strings", "DSH221")
    if problem == "has an invalid reasoningEffort" and isinstance(config, dict):
        found = missing_or(config, "reasoningEffort", "is not a non-empty string", owner="config", prefix="config.")
        return _refused_hint(f"{found}: DSH requires a non-empty string or no reasoningEffort", "DSH222")
    return None


def _unskippable(record: str, fix: str, listed: str) -> str:
    """The hint of ``record`` that DSH refuses before the last turn/end (after it, it is a crash-damaged
    tail): no option of any command skips it, what fixes it, and what ``dsh-audit validate`` lists."""
    return (f"no option skips {record} before the last turn/end (--lenient adapts headers only; DSH refuses the "
            f"log too): {fix}; `dsh-audit validate FILE` lists {listed}")


#: The hint of a damaged record (not JSON, a packed row DSH's row validation refuses).
DAMAGED_HINT = _unskippable("a damaged record", "repair or remove the line", "every damaged line")
#: The hints of a record whose seq is not its place: a position (validate: DSH107 a gap, DSH108 a
#: repeat or two events in each other's place), an integer that is no position (negative or past
#: 2**53-1) or no integer (validate: DSH111 for both), or no event (DSH112). The rule a hint names is
#: the one check folds into the refusal (:func:`dsh_audit.gate.refusal_rules`).
_SEQ_HINT = _unskippable("a record out of seq", "seqs must run 0, 1, 2, … with no gap or repeat",
                         "every seq out of place (DSH107, DSH108)")
_SEQ_RANGE_HINT = _unskippable("a record out of seq", "write each seq as the record's place 0, 1, 2, …",
                               "every seq that is no non-negative safe integer (DSH111)")
_SEQ_TYPE_HINT = _unskippable("a record out of seq", "write each seq as an integer, the record's place 0, 1, 2, …",
                              "every seq that is no integer (DSH111)")
_NO_EVENT_HINT = _unskippable("a record out of seq", "write each event as a JSON object with its seq",
                              "every record that is no event (DSH112)")


def seq_refusal(record: Any, expected: int, line: int) -> tuple[str, int, str]:
    """DSH's refusal of ``record`` (physical ``line``) whose seq is not ``expected``, its place: the
    message, the seq the refusal is at and the hint.

    DSH's words (``SessionLogScanner``) name the line before (it counts event lines, the header
    not among them) and print the seq as JavaScript does, a string bare: the refusal is at the
    record's own seq when it is a position (a non-negative safe integer), else at its place, where
    validate's DSH111 is; a seq that is no position is said so, as validate says it (DSH111), not
    only as a gap ``(expected 31, got 31)``, and its hint names DSH111, the rule check folds into
    the refusal. DSH's line number is labelled as DSH's: the error's own location is the file's
    line, one more.

    Example:
        >>> message, seq, _ = seq_refusal({"seq": 34}, 33, 32)
        >>> message.split("; ")[0], seq
        ('corrupt session log: seq gap in committed region at line 31 (expected 33, got 34)', 34)
        >>> print(message.split("; ")[1])
        "line 31" is DSH's count of event lines (the header is not one)
        >>> message, seq, _ = seq_refusal({"seq": "31"}, 31, 30)
        >>> message.split("(")[1].split("; ")[0], seq
        ('expected 31, got "31"): seq is a string, not an integer', 31)
        >>> message, seq, hint = seq_refusal({"seq": -1}, 31, 30)
        >>> message.split("(")[1].split("; ")[0], seq
        ('expected 31, got -1): seq is not a non-negative safe integer', 31)
        >>> hint.rsplit("lists ", 1)[1]
        'every seq that is no non-negative safe integer (DSH111)'
        >>> seq_refusal({}, 2, 4)[0].split("; ")[0]
        'corrupt session log: seq gap in committed region at line 3 (expected 2, got undefined): the event has no seq'
    """
    seq = member(record, "seq")
    gap = f"corrupt session log: seq gap in committed region at line {line - 1} (expected {expected}, got "
    counted = f'; "line {line - 1}" is DSH\'s count of event lines (the header is not one)'
    if is_safe_int(seq) and seq >= 0:
        return f"{gap}{shown(seq)}){counted}", int(seq), _SEQ_HINT
    if js_integer(seq) is not None:
        return f"{gap}{shown(seq)}): seq is not a non-negative safe integer{counted}", expected, _SEQ_RANGE_HINT
    if not isinstance(record, dict):
        return f"{gap}undefined): the record is a JSON {json_type(record)}{counted}", expected, _NO_EVENT_HINT
    if seq is MISSING:
        return f"{gap}undefined): the event has no seq{counted}", expected, _SEQ_TYPE_HINT
    kind = "a number" if isinstance(seq, float) else f"a {json_type(seq)}" if seq is not None else "null"
    return f"{gap}{shown(seq)}): seq is {kind}, not an integer{counted}", expected, _SEQ_TYPE_HINT


def _unknown_type_hint(etype: str) -> str:
    near = closest(etype, KNOWN_EVENT_TYPES)
    if near is not None:
        return f"did you mean '{near}'? A writer can mark plugin events \"ignorable\": true"
    return 'a writer can mark plugin events "ignorable": true so readers may skip them'
