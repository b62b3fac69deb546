"""DSH's in-memory upgrades of legacy v0 event shapes (spec §1.7), applied to raw event dicts.

Each function returns the (possibly new) event dict, or raises ``_Malformed`` with DSH's
diagnostic when an event looks legacy but does not have the complete old shape. Upgrades never
mutate their input. Mirrors the behaviour of DSH's persistence coordinator (rc.8
``packages/session/session-persistence/src/coordinator.ts`` migrate* functions), re-derived from
the spec; the code is ours.
"""

from __future__ import annotations

from typing import Any, TypeGuard

__all__ = ["Malformed", "legacy_message_id", "upgrade_event"]


class Malformed(Exception):
    """A legacy-looking event without the complete legacy shape."""


def legacy_message_id(session_id: str, seq: int) -> str:
    return f"legacy-message:{session_id}:{seq}"


def _is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) <= 2**53 - 1


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


def _message(event: dict[str, Any], sid: str, message_ids: dict[int, str]) -> dict[str, Any]:
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


def upgrade_event(event: dict[str, Any], session_id: str, message_ids: dict[int, str]) -> tuple[dict[str, Any], str | None]:
    """Apply every legacy upgrade to one raw event dict; return it and the upgrade's name."""
    etype = event.get("type")
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
