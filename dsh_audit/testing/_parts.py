"""Small pure pieces of the log builder: values it returns, ids, clock, message and header shapes.

Shapes follow the format reference (spec §2, §4-§6) and the key order DSH writes (spec §1.5:
envelope ``type, seq, time, data, sourceEventSeqs, surfaceOp``; a user message
``content, source, role, id``; an assistant message ``role, content, source, id``; a tool result
message ``source, content, role, id``, as the live corpus logs show).
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from typing import Any

from ..jsjson import stringify

__all__ = [
    "Reply",
    "ToolCall",
    "canonical",
    "headers_equal",
    "request_config",
    "split",
    "text_blocks",
    "tool_schema",
    "user_message",
]

DEFAULT_PROVIDER = "deepseek-official"
DEFAULT_MODEL = "deepseek-v4-flash"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call an assistant reply makes.

    Attributes:
        name: the tool name.
        arguments: the raw argument text the model streamed; a dict is written as
            ``json.dumps(arguments)`` (spaces after separators, as DeepSeek models emit).
        id: the call id; the builder assigns ``call_NN_<hex>`` when None.
    """

    name: str
    arguments: str | dict[str, Any] = "{}"
    id: str | None = None

    def text(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass(frozen=True, slots=True)
class Reply:
    """What :meth:`LogBuilder.assistant` wrote.

    Attributes:
        seq: the ``assistant/message`` seq (None for a failed attempt).
        chunk_seqs: the attempt's ``assistant/chunk`` seqs, in order.
        call_ids: the ids of the tool calls the reply made, in model order.
        message_id: the assistant message id (None for a failed attempt).
    """

    seq: int | None
    chunk_seqs: tuple[int, ...]
    call_ids: tuple[str, ...] = ()
    message_id: str | None = None


@dataclass
class Ids:
    """Deterministic UUID-shaped ids: SHA-256 of ``seed:counter``, never random."""

    seed: str
    counter: int = 0
    calls: int = 0

    def next(self) -> str:
        self.counter += 1
        digest = hashlib.sha256(f"{self.seed}:{self.counter}".encode()).digest()
        return str(uuid.UUID(bytes=digest[:16], version=4))

    def call(self) -> str:
        self.calls += 1
        return f"call_{(self.calls - 1) % 100:02d}_{self.next().replace('-', '')[:20]}"


@dataclass
class Clock:
    """A fixed clock: each read moves ``step_ms`` forward."""

    now: int
    step_ms: int = 1

    def tick(self) -> int:
        self.now += self.step_ms
        return self.now


def text_blocks(value: str | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A string becomes one text block; a list of content blocks passes through."""
    return [{"type": "text", "text": value}] if isinstance(value, str) else list(value)


def user_message(content: str | list[dict[str, Any]], source: dict[str, Any], message_id: str) -> dict[str, Any]:
    return {"content": text_blocks(content), "source": source, "role": "user", "id": message_id}


def canonical(header: dict[str, Any]) -> dict[str, Any]:
    """The canonical header form (spec §6.2): ``config, adapterDefaults?, system?, tools?``."""
    out: dict[str, Any] = {"config": dict(header["config"])}
    defaults = header.get("adapterDefaults") or {}
    if any(v is True for v in defaults.values()):
        out["adapterDefaults"] = dict(defaults)
    if header.get("system"):
        out["system"] = header["system"]
    if header.get("tools"):
        out["tools"] = list(header["tools"])
    return out


def headers_equal(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """Header equality as the loop decides a ``change`` (spec §6.2), for canonical headers.

    Config fields compare by value regardless of key order; tools compare by their exact JSON text.
    """
    if a is None or b is None:
        return a is b
    fields = ("provider", "model", "reasoningEffort", "temperature", "maxTokens", "stop")
    if any(a["config"].get(f) != b["config"].get(f) for f in fields):
        return False
    da, db = a.get("adapterDefaults") or {}, b.get("adapterDefaults") or {}
    if any((da.get(k) is True) != (db.get(k) is True) for k in ("reasoningEffort", "maxTokens")):
        return False
    return (a.get("system") == b.get("system")
            and [stringify(t) for t in a.get("tools") or []] == [stringify(t) for t in b.get("tools") or []])


def tool_schema(name: str, description: str, properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """A ``ToolSchema`` ``{name, description, parameters}`` with a plain object schema."""
    props = properties or {}
    return {"name": name, "description": description,
            "parameters": {"type": "object", "properties": props, "required": sorted(props)}}


def split(text: str, size: int) -> list[str]:
    """Cut text into streamed deltas of ``size`` characters (token boundaries are data)."""
    return [text[i:i + size] for i in range(0, len(text), size)]


def request_config(provider: str, model: str, effort: str | None, temperature: float | None,
                   max_tokens: int | None, stop: list[str] | None) -> dict[str, Any]:
    """A header ``config`` in DSH's key order; a None option is left out."""
    config: dict[str, Any] = {"provider": provider, "model": model}
    for key, value in (("reasoningEffort", effort), ("temperature", temperature), ("maxTokens", max_tokens),
                       ("stop", stop)):
        if value is not None:
            config[key] = value
    return config
