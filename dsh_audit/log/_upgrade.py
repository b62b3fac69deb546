"""DSH's in-memory upgrades of legacy v0 event shapes (spec §1.7), applied to raw event dicts.

Each function returns the (possibly new) event dict, or raises ``_Malformed`` with DSH's
diagnostic when an event looks legacy but does not have the complete old shape. Upgrades never
mutate their input. Mirrors the behaviour of DSH's persistence coordinator (rc.8
``packages/session/session-persistence/src/coordinator.ts`` migrate* functions), re-derived from
the spec; the code is ours.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from typing import Any, TypeGuard

from ._shapes import MAX_SAFE

__all__ = ["Malformed", "MessageIds", "legacy_message_id", "upgrade_event"]


class Malformed(Exception):
    """A legacy-looking event without the complete legacy shape."""


def legacy_message_id(session_id: str, seq: int) -> str:
    return f"legacy-message:{session_id}:{seq}"


class MessageIds:
    """The id of each message event read so far, by seq (DSH's ``messageIds`` map in its
    persistence coordinator): what a legacy tool-result replacement inherits from the message
    it replaces. A long log holds hundreds of thousands, each needed at most once, so they are
    kept as one buffer of UTF-8 text with arrays of seqs and offsets, not as one string object
    each: no per-id objects pinning the allocator's pools between a line's short-lived parse
    objects. An id that is not a string, or a seq that is not above every seq kept so far (a
    log that repeats or reorders seqs is refused elsewhere), is kept as given.

    Example:
        >>> ids = MessageIds()
        >>> ids[3] = "a"; ids[7] = "\\u00e9\\ud800"; ids[5] = None
        >>> ids.get(3), ids.get(7), ids.get(5), ids.get(4)
        ('a', '\\xe9\\ud800', None, None)
    """

    __slots__ = ("_seqs", "_ends", "_data", "_other")

    def __init__(self) -> None:
        self._seqs = array("q")
        self._ends = array("q")
        self._data = bytearray()
        self._other: dict[int, Any] = {}

    def __setitem__(self, seq: int, value: Any) -> None:
        if type(value) is str and type(seq) is int and -2**63 <= seq < 2**63 and (
                not self._seqs or seq > self._seqs[-1]):
            self._data += value.encode("utf-8", "surrogatepass")
            self._seqs.append(seq)
            self._ends.append(len(self._data))
            self._other.pop(seq, None)
        else:
            self._other[seq] = value

    def get(self, seq: int) -> Any:
        """The id of the message at ``seq``, or None."""
        if seq in self._other:
            return self._other[seq]
        at = bisect_left(self._seqs, seq)
        if at == len(self._seqs) or self._seqs[at] != seq:
            return None
        start = self._ends[at - 1] if at else 0
        return self._data[start:self._ends[at]].decode("utf-8", "surrogatepass")


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= MAX_SAFE


def _only_keys(record: dict[str, Any], required: tuple[str, ...], optional: tuple[str, ...] = ()) -> bool:
    allowed = set(required) | set(optional)
    return all(k in allowed for k in record) and all(k in record for k in required)


def _turn_start(event: dict[str, Any], sid: str) -> dict[str, Any]:
    data = event.get("data")
    if not isinstance(data, dict) or "trigger" not in data:
        return event
    trigger = data.get("trigger")
    turn = data.get("turn")
    if not (_is_int(turn) and turn >= 1 and _only_keys(data, ("turn", "trigger"))
            and isinstance(trigger, dict) and isinstance(trigger.get("kind"), str) and trigger["kind"]):
        raise Malformed(f'session "{sid}" contains malformed pre-react-loop turn/start at seq {event.get("seq")}')
    return {**event, "data": {"turn": turn}}


def _legacy_error_reason(reason: dict[str, Any]) -> dict[str, Any] | None:
    failure = reason.get("failure")
    if (isinstance(failure, dict) and _only_keys(reason, ("kind", "step", "failure"))
            and _only_keys(failure, ("message", "code"), ("status", "providerRetryAfterMs", "requestId"))
            and isinstance(failure.get("message"), str) and isinstance(failure.get("code"), str)
            and (failure.get("status") is None or isinstance(failure.get("status"), (int, float)))
            and (failure.get("providerRetryAfterMs") is None
                 or isinstance(failure.get("providerRetryAfterMs"), (int, float)))
            and (failure.get("requestId") is None or isinstance(failure.get("requestId"), str))):
        return {"kind": "error", "error": failure}
    keys = ("kind", "step", "message") if "code" not in reason else ("kind", "step", "message", "code")
    code = reason.get("code")
    if not _only_keys(reason, keys) or not isinstance(reason.get("message"), str) or (
        "code" in reason and not isinstance(code, str)
    ):
        return None
    return {"kind": "error", "error": {"message": reason["message"],
                                       "code": code if isinstance(code, str) else "UNKNOWN"}}


def _turn_end(event: dict[str, Any], sid: str) -> dict[str, Any]:
    data = event.get("data")
    if not isinstance(data, dict):
        return event
    bad = Malformed(f'session "{sid}" contains malformed pre-react-loop turn/end at seq {event.get("seq")}')
    reason = data.get("reason")
    turn = data.get("turn")
    if not (_is_int(turn) and turn >= 1 and _only_keys(data, ("turn", "reason"))
            and isinstance(reason, dict) and isinstance(reason.get("kind"), str)):
        raise bad
    kind = reason["kind"]
    new_reason: dict[str, Any] | None
    if kind in ("completed", "blocked", "max-tokens", "interrupted"):
        if not _only_keys(reason, ("kind",)):
            raise bad
        return event
    if kind == "aborted":
        if "reason" in reason:
            return event
        if not _only_keys(reason, ("kind",)):
            raise bad
        new_reason = {"kind": "aborted", "reason": {"kind": "legacy"}}
    elif kind == "disposed":
        if not _only_keys(reason, ("kind",)):
            raise bad
        new_reason = {"kind": "aborted", "reason": {"kind": "disposed"}}
    elif kind == "error":
        if "error" in reason:
            return event
        step = reason.get("step")
        if not (_is_int(step) and step >= 0):
            raise bad
        new_reason = _legacy_error_reason(reason)
        if new_reason is None:
            raise bad
    else:
        return event
    return {**event, "data": {**data, "reason": new_reason}}


def _steering(event: dict[str, Any], sid: str) -> dict[str, Any]:
    bad = Malformed(f'session "{sid}" contains malformed pre-react-loop steering/message at seq {event.get("seq")}')
    data = event.get("data")
    if not isinstance(data, dict):
        raise bad
    wrapped = data.get("message")
    if isinstance(wrapped, dict) and _is_int(data.get("turn")) and _only_keys(data, ("turn", "message")):
        return {**event, "type": "user/message", "data": wrapped}
    if not _is_int(data.get("turn")) or not _only_keys(data, ("turn", "content", "source")):
        raise bad
    message = {k: v for k, v in data.items() if k != "turn"}
    message["id"] = legacy_message_id(sid, event.get("seq"))  # type: ignore[arg-type]
    message["role"] = "user"
    return {**event, "type": "user/message", "data": message}


def _message(event: dict[str, Any], sid: str, message_ids: MessageIds) -> dict[str, Any]:
    data = event.get("data")
    if not isinstance(data, dict):
        return event
    etype = event.get("type")
    seq = event.get("seq")
    if etype == "user/message":
        if any(k in data for k in ("id", "role", "message")) or "content" not in data or "source" not in data:
            return event
        return {**event, "data": {**data, "id": legacy_message_id(sid, seq), "role": "user"}}  # type: ignore[arg-type]
    if etype == "assistant/message":
        if "message" in data or "content" not in data or "provenance" not in data:
            return event
        rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
        provenance = data["provenance"] if isinstance(data["provenance"], dict) else {}
        rest["message"] = {
            "id": legacy_message_id(sid, seq),  # type: ignore[arg-type]
            "role": "assistant",
            "content": data["content"],
            "source": {**provenance, "kind": "model"},
        }
        return {**event, "data": rest}
    if etype == "tool/result":
        if "message" in data or "callId" not in data or "content" not in data or "isError" not in data:
            return event
        rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
        op = event.get("surfaceOp")
        start = op.get("start") if isinstance(op, dict) and op.get("op") == "replace" else None
        inherited = message_ids.get(start) if isinstance(start, int) else None
        message: dict[str, Any] = {
            "id": legacy_message_id(sid, seq) if start is None else inherited,  # type: ignore[arg-type]
            "role": "user",
            "content": [{"type": "tool-result", "toolCallId": data["callId"],
                         "content": data["content"], "isError": data["isError"]}],
            "source": {"kind": "tool", "callId": data["callId"]},
        }
        if message["id"] is None:
            del message["id"]  # DSH would write undefined: validation then rejects the event
        rest["message"] = message
        return {**event, "data": rest}
    return event


#: the types of the events an upgrade may change (the three legacy shapes and the message events)
_UPGRADED_TYPES = frozenset({"turn/start", "turn/end", "steering/message", "user/message", "assistant/message",
                             "tool/result"})


def upgrade_event(event: dict[str, Any], session_id: str,
                  message_ids: MessageIds) -> tuple[dict[str, Any], str | None]:
    """Apply every legacy upgrade to one raw event dict; return it and the upgrade's name."""
    etype = event.get("type")
    if type(etype) is not str or etype not in _UPGRADED_TYPES:  # most events: nothing to upgrade
        return event, None
    out = event
    if etype == "turn/start":
        out = _turn_start(event, session_id)
    elif etype == "turn/end":
        out = _turn_end(event, session_id)
    elif etype == "steering/message":
        out = _steering(event, session_id)
    out = _message(out, session_id, message_ids)
    if out is event:
        return event, None
    name = f"{etype} legacy shape" if out.get("type") == etype else f"{etype} -> {out.get('type')}"
    return out, name
