"""pi-ai's own steps over a DSH context (steps 3 and 4 of :mod:`dsh_audit.wire._piai`): its token
estimate and the output cap clamped to the context window, and ``transformMessages``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..jsjson import stringify
from ._piai_facts import CONTEXT_SAFETY_TOKENS, PiModel
from ._piai_js import js_blank, js_len

__all__ = ["Transform", "clamp_max_tokens", "estimate_context_tokens", "transform_messages"]

# --- pi-ai estimateContextTokens and the output cap ---------------------------------------------


def _message_tokens(message: Mapping[str, Any]) -> int:
    content = message["content"]
    if message["role"] in ("user", "toolResult"):
        chars = js_len(content) if isinstance(content, str) else sum(
            js_len(b["text"]) if b["type"] == "text" else 4800 for b in content)
        return math.ceil(chars / 4)
    chars = 0
    for block in content:
        if block["type"] == "text":
            chars += js_len(block["text"])
        elif block["type"] == "thinking":
            chars += js_len(block["thinking"])
        else:
            chars += js_len(block["name"]) + js_len(stringify(block["arguments"]))
    return math.ceil(chars / 4)


def estimate_context_tokens(context: Mapping[str, Any]) -> int:
    """pi-ai ``estimateContextTokens`` for a DSH-built context (historical usage is always zero)."""
    return sum(_message_tokens(m) for m in context["messages"]) + _head_tokens(context)


def _head_tokens(context: Mapping[str, Any]) -> int:
    """The system prompt's and the tools' share of :func:`estimate_context_tokens`."""
    tokens = 0
    system = context.get("systemPrompt")
    if system:
        tokens += math.ceil(js_len(system) / 4)
    if context.get("tools"):
        tokens += math.ceil(js_len(stringify(context["tools"])) / 4)
    return tokens


def clamp_max_tokens(model: PiModel, estimate: int, max_tokens: int) -> int:
    """pi-ai ``clampMaxTokensToContext`` given the context estimate."""
    if model.context_window <= 0:
        return max(1, max_tokens)
    return min(max_tokens, max(1, model.context_window - estimate - CONTEXT_SAFETY_TOKENS))


# --- pi-ai transformMessages --------------------------------------------------------------------


def _transform_block(block: dict[str, Any], same: bool, normalize: Any, model: PiModel,
                     ids: dict[str, str], message: Mapping[str, Any]) -> list[dict[str, Any]]:
    kind = block["type"]
    if kind == "thinking":
        if block.get("redacted"):
            return [block] if same else []
        if same and block.get("thinkingSignature"):
            return [block]
        if js_blank(block["thinking"]):
            return []
        return [block] if same else [{"type": "text", "text": block["thinking"]}]
    if kind == "text":
        return [block] if same else [{"type": "text", "text": block["text"]}]
    if kind == "toolCall":
        call = block
        if not same and "thoughtSignature" in call:
            call = {k: v for k, v in call.items() if k != "thoughtSignature"}
        if not same and normalize is not None:
            new_id = normalize(call["id"], model, message)
            if new_id != call["id"]:
                ids[call["id"]] = new_id
                call = {**call, "id": new_id}
        return [call]
    return [block]


class Transform:
    """pi-ai ``transformMessages``, one context message at a time.

    :meth:`add` each message in order; :attr:`result` holds the messages settled so far, and
    :meth:`tail` the synthetic results the end of the list adds for orphaned tool calls, without
    changing the state (so a later request of the same conversation can add its new messages).
    Both passes of pi-ai's function look only backwards except that orphan check, so the messages
    settled for a list are those settled for any list it starts.
    """

    __slots__ = ("ids", "model", "normalize", "pending", "result", "seen")

    def __init__(self, model: PiModel, normalize: Any = None) -> None:
        self.model, self.normalize = model, normalize
        self.ids: dict[str, str] = {}
        self.result: list[dict[str, Any]] = []
        self.pending: list[dict[str, Any]] = []
        self.seen: set[str] = set()

    def add(self, msg: dict[str, Any]) -> None:
        """Transform ``msg`` (the first pass) and settle it (the second)."""
        model = self.model
        if msg["role"] == "toolResult":
            new_id = self.ids.get(msg["toolCallId"])
            if new_id and new_id != msg["toolCallId"]:
                msg = {**msg, "toolCallId": new_id}
        elif msg["role"] == "assistant":
            same = (msg["provider"], msg["api"], msg["model"]) == (model.provider, model.api, model.id)
            content = [out for b in msg["content"]
                       for out in _transform_block(b, same, self.normalize, model, self.ids, msg)]
            msg = {**msg, "content": content}
        if msg["role"] == "assistant":
            self._flush()
            if msg["stopReason"] in ("error", "aborted"):
                return
            calls = [b for b in msg["content"] if b["type"] == "toolCall"]
            if calls:
                self.pending, self.seen = calls, set()
            self.result.append(msg)
        elif msg["role"] == "toolResult":
            self.seen.add(msg["toolCallId"])
            self.result.append(msg)
        else:
            self._flush()
            self.result.append(msg)

    def tail(self) -> list[dict[str, Any]]:
        """The ``"No result provided"`` results the list's end adds for the pending calls."""
        return [{"role": "toolResult", "toolCallId": call["id"], "toolName": call["name"],
                 "content": [{"type": "text", "text": "No result provided"}], "isError": True}
                for call in self.pending if call["id"] not in self.seen]

    def _flush(self) -> None:
        self.result += self.tail()
        self.pending, self.seen = [], set()


def transform_messages(messages: list[dict[str, Any]], model: PiModel, normalize: Any = None) -> list[dict[str, Any]]:
    """pi-ai ``transformMessages``. Its downgrade of images for a model without image input
    (``downgradeUnsupportedImages``) never acts on a DSH request: DSH's adapter refuses such a
    request before pi-ai sees it (:func:`~dsh_audit.wire._piai_context.pi_context`)."""
    transform = Transform(model, normalize)
    for msg in messages:
        transform.add(msg)
    return transform.result + transform.tail()
