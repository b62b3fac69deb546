"""Write a v0 log as a later format version (v1-v4), following DSH's adjacent migrations.

Used to test that dsh-audit reads every released version into the same requests: build a v0 log,
migrate it forward here (``dsh-format-versions.md`` §7), read both back, compare. Covers what
DSH-written logs contain: chunk streams folded into ``assistant/message.stream`` and
``assistant/attempt`` (v2), dense renumbering with every reference remapped, range-encoded
``sourceEventSeqs``, the inherited ``session/end-seed`` marker, the ``system/message`` head and
``startSeq``/``endSeq`` replace ops (v3), tool-role results and producer-owned sources (v4).
It does not reproduce the migrations' refusal audits.
"""

from __future__ import annotations

import hashlib
from typing import Any

from .._json import as_object
from ..jsjson import stringify

__all__ = ["migrate_events"]

Log = tuple[dict[str, Any], list[dict[str, Any]]]

_V4_KINDS = {"compact": "compact-checkpoint", "tools-ptc": "ptc-mode", "tools-code-mode": "ptc-mode",
             "dsh-compaction-basic": "compact-basic"}
# Plugin names v3->v4 keeps as the kind (LunFengChen/deepseek-harness@103e8703,
# packages/session/session-format-v3-to-v4/src/sources.ts); any other plugin X becomes "plugin:X".
_V4_SAME_NAME = {
    "agent-instructions", "session-reference", "team-message", "goal", "skill-invocation", "skill-catalog",
    "coordinator", "subagent-report", "subagent-settled", "webhook", "agent-message", "model-selection",
    "plan-mode", "time-context", "tmux-context", "user-approval", "repeat-tool-reminder", "tool-cordis",
    "cordis-host-runner", "tool-goal", "tool-jobs", "hooks-codex", "hooks-claude-code", "schedule",
    "dsh-session-title-llm",
}


def _ranges(seqs: list[int]) -> list[Any]:
    out: list[Any] = []
    i = 0
    while i < len(seqs):
        j = i
        while j + 1 < len(seqs) and seqs[j + 1] == seqs[j] + 1:
            j += 1
        if j - i + 1 >= 3:
            out.append([seqs[i], seqs[j]])
        else:
            out.extend(seqs[i:j + 1])
        i = j + 1
    return out


def _renumber(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Dense seqs from 0; remap every reference (old seq stored in ``_old``)."""
    mapping = {e["_old"]: new for new, e in enumerate(events) if "_old" in e}

    def m(seq: Any) -> Any:
        return mapping.get(seq, seq)

    out = []
    for new, event in enumerate(events):
        event = {k: v for k, v in event.items() if k != "_old"}
        event["seq"] = new
        if isinstance(event.get("sourceEventSeqs"), list):
            cited = event["sourceEventSeqs"]
            if any(isinstance(s, list) for s in cited):  # v2+ ranges [a, b]: expand, remap, encode again
                flat = [x for s in cited for x in (range(s[0], s[1] + 1) if isinstance(s, list) else [s])]
                event["sourceEventSeqs"] = _ranges([m(s) for s in flat])
            else:
                event["sourceEventSeqs"] = [m(s) for s in cited]
        op = event.get("surfaceOp")
        if isinstance(op, dict):
            event["surfaceOp"] = {k: (m(v) if k in ("start", "end", "startSeq", "endSeq") else v) for k, v in op.items()}
        data = event.get("data")
        if isinstance(data, dict):
            data = dict(data)
            if event["type"] == "command/done" and "sourceEventSeq" in data:
                data["sourceEventSeq"] = m(data["sourceEventSeq"])
            if event["type"] in ("compaction/summary", "compaction/prune"):
                rng = data.get("shadowedRange")
                if isinstance(rng, dict):
                    data["shadowedRange"] = {k: m(v) for k, v in rng.items()}
                data["shadowedSeqs"] = [m(s) for s in data.get("shadowedSeqs", [])]
            if event["type"] in ("session/title", "session/title-llm-request") and "messageSeqs" in data:
                data["messageSeqs"] = [m(s) for s in data["messageSeqs"]]
            event["data"] = data
        out.append(event)
    return out


def _to_v2(header: dict[str, Any], events: list[dict[str, Any]]) -> Log:
    seed = header.get("seedLength")
    new_header: dict[str, Any] = {"type": "session", "version": 2, "id": header["id"], "createdAt": header["createdAt"]}
    if "cwd" in header:
        new_header["cwd"] = header["cwd"]
    new_header["isSeeded"] = seed is not None
    for key in ("parentSession", "origin", "delegationDepth", "agentPreset"):
        if key in header:
            new_header[key] = header[key]
    chunks: dict[int, dict[str, Any]] = {}
    claimed: set[int] = set()
    for event in events:
        if event["type"] == "assistant/chunk":
            chunks[event["seq"]] = event
        elif event["type"] == "assistant/message":
            claimed.update(event.get("sourceEventSeqs") or [])
    out: list[dict[str, Any]] = []
    attempt: list[dict[str, Any]] = []

    def close_attempt() -> None:
        if attempt and attempt[0]["seq"] not in claimed:
            last = attempt[-1]
            out.append({"type": "assistant/attempt", "seq": -1, "time": last["time"],
                        "data": {"turn": last["data"]["turn"], "step": last["data"]["step"],
                                 "stream": [{"type": "chunk", "time": c["time"], "chunk": c["data"]["chunk"]} for c in attempt]}})
        attempt.clear()

    for event in events:
        if event["type"] == "assistant/chunk":
            attempt.append(event)
            if event["data"]["chunk"].get("type") == "finish":
                close_attempt()
            continue
        if event["type"] in ("step/end", "turn/end", "llm/retry", "llm/retry-started"):
            close_attempt()
        event = {**event, "_old": event["seq"]}
        if event["type"] == "assistant/message":
            cited = event.get("sourceEventSeqs") or []
            stream = [{"type": "chunk", "time": chunks[s]["time"], "chunk": chunks[s]["data"]["chunk"]} for s in cited if s in chunks]
            data = {**event["data"], "stream": stream}
            event = {k: v for k, v in event.items() if k != "sourceEventSeqs"}
            event["data"] = data
        if event["type"] == "session/end-seed" and seed is not None and event["_old"] == seed:
            event["data"] = {"inherited": True}
        out.append(event)
    close_attempt()
    renumbered = _renumber(out)
    for event in renumbered:
        if isinstance(event.get("sourceEventSeqs"), list):
            event["sourceEventSeqs"] = _ranges(event["sourceEventSeqs"])
    return new_header, renumbered


def _system_id(header_id: str, seq: int, etype: str) -> str:
    digest = hashlib.sha256(stringify(["session-format-v2-to-v3", header_id, seq, etype]).encode()).hexdigest()
    return f"v2-to-v3-system-{digest}"


def _to_v3(header: dict[str, Any], events: list[dict[str, Any]]) -> Log:
    out: list[dict[str, Any]] = []
    head: int | None = None  # old seq of the current head (a synthetic marker)
    current = ""
    step: tuple[Any, Any] = (None, None)
    for event in events:
        etype = event["type"]
        if etype == "step/start":
            step = (event["data"]["turn"], event["data"]["step"])
        if etype == "request/header":
            system = event["data"]["header"].get("system") or ""
            if system != current and head is not None:
                marker = f"sys-{event['seq']}"
                out.append(_system_event(header, event, step, system, head_ref=head, marker=marker))
                head, current = marker, system  # type: ignore[assignment]
            hdr = {k: v for k, v in event["data"]["header"].items() if k != "system"}
            if hdr.get("tools") == []:
                del hdr["tools"]
            if hdr.get("adapterDefaults") == {}:
                del hdr["adapterDefaults"]
            event = {**event, "data": {**event["data"], "header": hdr}}
        op = event.get("surfaceOp")
        if isinstance(op, dict):
            event = {**event, "surfaceOp": {"op": op["op"], "startSeq": op["start"], "endSeq": op["end"]}}
        out.append({**event, "_old": event["seq"]})
        if etype == "step/start" and head is None:
            marker = "sys-head"
            out.append(_system_event(header, event, step, "", head_ref=None, marker=marker))
            head = marker  # type: ignore[assignment]
    # resolve markers to positions, then renumber
    for event in out:
        if event.get("_marker"):
            event["_old"] = event.pop("_marker")
    renumbered = _renumber(out)
    return {**header, "version": 3}, renumbered


def _system_event(header: dict[str, Any], anchor: dict[str, Any], step: tuple[Any, Any], text: str, *,
                  head_ref: Any, marker: str) -> dict[str, Any]:
    content = [{"type": "text", "text": text}] if text else []
    event: dict[str, Any] = {
        "type": "system/message", "seq": -1, "time": anchor["time"],
        "data": {"turn": step[0], "step": step[1], "message": {
            "id": _system_id(header["id"], anchor["seq"], anchor["type"]), "role": "system", "content": content,
            "source": {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"}}},
        "_marker": marker,
    }
    if head_ref is None:
        event["surfaceOp"] = "append"
    else:
        event["sourceEventSeqs"] = [head_ref]
        event["surfaceOp"] = {"op": "replace", "startSeq": head_ref, "endSeq": head_ref}
    return event


def _source_v4(source: Any, role: str) -> Any:
    if not isinstance(source, dict) or source.get("kind") != "plugin":
        return source
    plugin = source.get("plugin")
    if plugin == "@deepseek-ai/dsh-system-prompt":
        kind = "system-prompt" if role == "system" else "runtime-context"
    elif plugin in _V4_SAME_NAME:
        kind = plugin
    else:
        kind = _V4_KINDS.get(plugin, f"plugin:{plugin}") if isinstance(plugin, str) else f"plugin:{plugin}"
    return {"kind": kind, **{k: v for k, v in source.items() if k not in ("kind", "plugin")}}


def _to_v4(header: dict[str, Any], events: list[dict[str, Any]]) -> Log:
    out = []
    for event in events:
        data = as_object(event.get("data"))
        if event["type"] == "tool/result":
            message = data["message"]
            block = message["content"][0]
            new_message: dict[str, Any] = {}
            for key, value in message.items():
                if key == "role":
                    new_message["role"] = "tool"
                    new_message["toolCallId"] = block["toolCallId"]
                elif key == "content":
                    new_message["content"] = block["content"]
                    if "isError" in block:
                        new_message["isError"] = block["isError"]
                else:
                    new_message[key] = value
            event = {**event, "data": {**data, "message": new_message}}
        elif event["type"] == "user/message":
            event = {**event, "data": {**data, "source": _source_v4(data.get("source"), "user")}}
        elif event["type"] == "session/title-llm-request" and isinstance(data.get("messages"), list):
            messages = [{**m, "source": _source_v4(m.get("source"), str(m.get("role")))}
                        if isinstance(m, dict) and "source" in m else m for m in data["messages"]]
            event = {**event, "data": {**data, "messages": messages}}
        elif event["type"] == "system/message":
            message = data["message"]
            event = {**event, "data": {**data, "message": {**message, "source": _source_v4(message.get("source"), "system")}}}
        out.append(event)
    return {**header, "version": 4}, out


def migrate_events(header: dict[str, Any], events: list[dict[str, Any]], version: int) -> Log:
    """Return ``(header, events)`` of a v0 log (unpacked events) written as ``version`` (0-4)."""
    if version == 0:
        return header, events
    current: Log = ({**header, "version": 1}, [dict(e) for e in events])
    if version >= 2:
        current = _to_v2(*current)
    if version >= 3:
        current = _to_v3(*current)
    if version >= 4:
        current = _to_v4(*current)
    return current
