"""DSH's shape checks on records: safe integers, the event envelope, headers and message shapes.

Every check here returns a message string (the diagnostic DSH would give) or None; the reader
decides what a failure means for the whole log.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from .._show import missing_or, shown
from .._usage_rule import MAX_SAFE, js_integer

__all__ = ["MAX_SAFE", "adapter_defaults_error", "envelope_error", "envelope_fault", "is_plain_chunk", "is_safe_int",
           "message_shape_error"]


def is_safe_int(value: Any) -> TypeGuard[float]:
    """JavaScript's ``Number.isSafeInteger`` of a JSON number: an integer as DSH reads it
    (:func:`dsh_audit._usage_rule.js_integer`: ``100.0`` is 100, ``-0.0`` is 0; never a bool) within
    :data:`MAX_SAFE` either way. A non-negative one is a count as validate checks it (DSH701), the
    rule the ledger prices by up to its bound (:func:`dsh_audit._usage_rule.count_of`).

    Example:
        >>> is_safe_int(100.0), is_safe_int(-0.0), is_safe_int(2**53), is_safe_int(1.5), is_safe_int(True)
        (True, True, False, False, False)
    """
    if type(value) is int:  # the common case first (a bool is not one)
        return -MAX_SAFE <= value <= MAX_SAFE
    number = js_integer(value)
    return number is not None and -MAX_SAFE <= number <= MAX_SAFE


def is_plain_chunk(value: dict[str, Any]) -> bool:
    """Whether a stored event is an ``assistant/chunk`` as DSH writes the bulk of every log (and
    every event a packed row expands to): exactly the keys type, seq, time and data, an ``int`` seq,
    a safe ``int`` time and an object ``data``. Such a chunk has nothing to upgrade, no message
    shape and no surface metadata: the reader and the checker take it on their fast paths, and
    any other event takes every check.

    Example:
        >>> is_plain_chunk({"type": "assistant/chunk", "seq": 3, "time": 1, "data": {}})
        True
        >>> is_plain_chunk({"type": "assistant/chunk", "seq": 3, "time": 1.5, "data": {}})
        False
    """
    if len(value) != 4 or value.get("type") != "assistant/chunk":
        return False
    time = value.get("time")
    return (type(time) is int and -MAX_SAFE <= time <= MAX_SAFE and type(value.get("seq")) is int
            and type(value.get("data")) is dict)


_ENVELOPE_KEYS = frozenset({"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable"})


def _has_provider_model(value: Any) -> TypeGuard[dict[str, Any]]:
    return (isinstance(value, dict) and isinstance(value.get("provider"), str) and bool(value["provider"])
            and isinstance(value.get("model"), str) and bool(value["model"]))


def adapter_defaults_error(header: Any) -> str | None:
    """DSH's request/header check: provider/model, reasoningEffort, adapterDefaults markers.

    DSH tests presence with ``!== undefined``: a field written as null is present and invalid
    (``index.ts`` assertCurrentLlmShape), not absent.
    """
    config = header.get("config") if isinstance(header, dict) else None
    if not _has_provider_model(config):
        return "lacks provider/model"
    if "reasoningEffort" in config:
        effort = config["reasoningEffort"]
        if not isinstance(effort, str) or not effort:
            return "has an invalid reasoningEffort"
    if "adapterDefaults" not in header:
        return None
    defaults = header["adapterDefaults"]
    if (not isinstance(defaults, dict)
            or any(k not in ("reasoningEffort", "maxTokens") for k in defaults)
            or any(v is not True for v in defaults.values())
            or (defaults.get("reasoningEffort") is True and "reasoningEffort" not in config)
            or (defaults.get("maxTokens") is True and "maxTokens" not in config)):
        return "has invalid adapterDefaults"
    return None


def message_shape_error(event: dict[str, Any]) -> str | None:
    """DSH's identified-message check for the three surface types (no subject prefix)."""
    etype = event.get("type")
    if etype not in ("user/message", "assistant/message", "tool/result"):
        return None
    data = event.get("data")
    message = data if etype == "user/message" else (data.get("message") if isinstance(data, dict) else None)
    if not isinstance(message, dict) or not isinstance(message.get("id"), str) or not message["id"]:
        return "lacks an identified message"
    role = "assistant" if etype == "assistant/message" else "user"
    if message.get("role") != role:
        return f'message must have role "{role}"'
    source = message.get("source")
    if not isinstance(source, dict) or not isinstance(source.get("kind"), str) or not source["kind"]:
        return "message has invalid source"
    if not isinstance(message.get("content"), list):
        return "message has invalid content"
    if etype == "assistant/message":
        if source["kind"] != "model" or not _has_provider_model(source):
            return "message must have model source"
        return None
    if etype != "tool/result":
        return None
    if source["kind"] != "tool" or not isinstance(source.get("callId"), str) or not source["callId"]:
        return "message must have tool source"
    content = message["content"]
    block = content[0] if content else None
    if (len(content) != 1 or not isinstance(block, dict) or block.get("type") != "tool-result"
            or not isinstance(block.get("content"), list)):
        return "message must contain one tool-result block"
    if block.get("toolCallId") != source["callId"]:
        return "message has mismatched tool call ids"
    return None


#: What DSH requires of each envelope field :func:`_unsound_field` may name: the ``dsh-audit
#: validate`` rule, what is wrong with the value, and what DSH requires of it.
_FIELD_FAULTS = {
    "type": ("DSH112", "is not a string", "DSH requires a string type"),
    "seq": ("DSH111", "is not a non-negative safe integer", "DSH requires the event's position, an integer from 0"),
    "time": ("DSH111", "is not a safe integer", "DSH requires Date.now() milliseconds, an integer"),
    "data": ("DSH112", "", "DSH requires data; it may be {}"),
    "ignorable": ("DSH113", "is not true", "DSH allows only true; omit the key otherwise"),
}


def _unsound_field(event: dict[str, Any]) -> str | None:
    """The first field of ``event`` (an object of envelope keys only) that breaks DSH's envelope
    rule, in its order, or None: the rule written once, for the seed check (:func:`envelope_error`,
    on every event read: no message is built) and the field its hint names (:func:`envelope_fault`)."""
    if not isinstance(event.get("type"), str):
        return "type"
    seq, time = event.get("seq"), event.get("time")
    if not (type(seq) is int and 0 <= seq <= MAX_SAFE) and (not is_safe_int(seq) or seq < 0):  # int: no call
        return "seq"
    if not (type(time) is int and -MAX_SAFE <= time <= MAX_SAFE) and not is_safe_int(time):
        return "time"
    if "data" not in event:
        return "data"
    return None if event.get("ignorable", True) is True else "ignorable"


def envelope_fault(event: Any) -> tuple[str, str] | None:
    """Which field of ``event`` breaks DSH's envelope rule (``assertSessionEventEnvelope``, checked
    in its order), as ``(rule, what)``: the ``dsh-audit validate`` rule id and what is wrong, the
    value shown as the log spells it; None when the envelope is sound.

    Example:
        >>> envelope_fault({"type": "turn/start", "seq": 1, "time": 1800000000000.5, "data": {}})
        ('DSH111', 'time 1800000000000.5 is not a safe integer: DSH requires Date.now() milliseconds, an integer')
        >>> envelope_fault({"type": "turn/start", "seq": 1, "time": 5, "data": {}, "meta": 1})[1].split(":")[0]
        'key "meta" is not an envelope key'
    """
    if not isinstance(event, dict):
        return ("DSH112", f"the record {shown(event)} is not a JSON object: DSH requires an event object")
    if not _ENVELOPE_KEYS.issuperset(event):
        extra = next(k for k in event if k not in _ENVELOPE_KEYS)
        return ("DSH110", f"key {shown(extra)} is not an envelope key: DSH allows type, seq, time, data, surfaceOp, "
                          "sourceEventSeqs, ignorable")
    key = _unsound_field(event)
    if key is None:
        return None
    rule, complaint, requires = _FIELD_FAULTS[key]
    return (rule, f"{missing_or(event, key, complaint, owner='the event')}: {requires}")


def envelope_error(event: Any) -> tuple[str, str] | None:
    """DSH's seed envelope check: ``(subject, problem)`` as in ``seed <subject> at index N <problem>``.

    Message shapes are :func:`message_shape_error`'s job; the reader runs it first, as DSH does.
    """
    if isinstance(event, dict) and event.get("type") == "request/header-delta":
        return ("event", "uses unsupported legacy request/header-delta format")
    # the one envelope rule (its field is the refusal's hint); an exact dict, as every JSON object
    # is, is tested without building the fault's message: every event read is tested
    sound = (_ENVELOPE_KEYS.issuperset(event) and _unsound_field(event) is None) if type(event) is dict \
        else envelope_fault(event) is None
    if not sound:
        return ("event", "has an invalid event envelope")
    etype = event["type"]
    if etype == "request/header":
        data = event["data"]
        header = data.get("header") if isinstance(data, dict) else None
        problem = adapter_defaults_error(header if isinstance(header, dict) else {})
        if problem:
            return ("request/header", problem)
        if isinstance(data, dict) and data.get("reason") == "fallback":
            return ("event", 'uses unsupported legacy request/header reason "fallback"')
    return None
