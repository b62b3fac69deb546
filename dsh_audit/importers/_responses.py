"""OpenAI Responses API items as DSH messages (the ``response_item`` records of a Codex rollout).

:class:`History` is the model-visible history: consecutive output items of one response form one
assistant message (``reasoning`` summary text → a ``reasoning`` block with its
``encryptedContent``; ``function_call`` → ``tool-call`` with ``call_id`` and the raw
``arguments``), ``function_call_output`` a tool-result message. The Responses API's
``input_tokens`` *includes* the cached tokens (``cached_input_tokens``), DSH's ``inputTokens`` not.
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..jsjson import stringify
from ._model import token_counts, tool_result_message

__all__ = ["History", "TOOL_CALLS", "is_output", "responses_usage"]

TOOL_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "web_search_call",
                        "image_generation_call", "tool_search_call"})
_OUTPUTS = TOOL_CALLS | {"reasoning"}
_TOOL_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "tool_search_output"})
_CONTEXT_TAGS = ("<environment_context>", "<user_instructions>", "# AGENTS.md instructions", "<permissions")


def is_output(payload: dict[str, Any]) -> bool:
    kind = payload.get("type")
    return (isinstance(kind, str) and kind in _OUTPUTS) or (kind == "message" and payload.get("role") == "assistant")


def _content(items: Any) -> list[dict[str, Any]]:
    """Responses API content items (or a plain string) as DSH blocks."""
    if isinstance(items, str):
        return [{"type": "text", "text": items}]
    out: list[dict[str, Any]] = []
    for item in items if isinstance(items, list) else []:
        kind = item.get("type") if isinstance(item, dict) else None
        if kind in ("input_text", "output_text", "text", "refusal"):
            out.append({"type": "text", "text": item.get("text", item.get("refusal", ""))})
        elif kind == "input_image":
            url = str(item.get("image_url", ""))
            media = url[5:].split(";", 1)[0] if url.startswith("data:") else None
            out.append({"type": "image", "attachment": {
                "attachmentId": "sha256:" + hashlib.sha256(url.encode()).hexdigest(), "mediaType": media}})
        else:
            out.append({"type": "text", "text": stringify(item), "importedType": kind})
    return out


def _call_block(payload: dict[str, Any], line: int) -> dict[str, Any]:
    kind = payload.get("type")
    call_id = payload.get("call_id") or payload.get("id") or f"line-{line}"
    if kind == "function_call":
        name, arguments = payload.get("name", ""), payload.get("arguments", "")
    elif kind == "custom_tool_call":
        name, arguments = payload.get("name", ""), payload.get("input", "")
    else:
        name = "local_shell" if kind == "local_shell_call" else str(kind).removesuffix("_call")
        rest = {k: v for k, v in payload.items() if k not in ("type", "id", "call_id", "status")}
        arguments = stringify(rest)
    return {"type": "tool-call", "id": call_id, "name": name,
            "arguments": arguments if isinstance(arguments, str) else stringify(arguments)}


def _reasoning_block(payload: dict[str, Any]) -> dict[str, Any]:
    items = [item for key in ("summary", "content") if isinstance(payload.get(key), list) for item in payload[key]]
    parts = [text for item in items if isinstance(item, dict) and isinstance(text := item.get("text", ""), str)]
    block: dict[str, Any] = {"type": "reasoning", "text": "\n\n".join(parts)}
    if payload.get("encrypted_content"):
        block["encryptedContent"] = payload["encrypted_content"]
    return block


def _tool_output(payload: dict[str, Any], message_id: str) -> dict[str, Any]:
    output = payload.get("output") if payload.get("type") != "tool_search_output" else payload.get("tools")
    failed = False
    if isinstance(output, dict):
        failed = output.get("success") is False
        output = output.get("content", output.get("body", stringify(output)))
    content = _content(output) if isinstance(output, (str, list)) else [{"type": "text", "text": stringify(output)}]
    call_id = str(payload.get("call_id", ""))
    return tool_result_message(message_id, call_id, content, is_error=failed)


class History:
    """The model-visible history as DSH messages; consecutive output items share one message."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        self.messages: list[dict[str, Any]] = []
        self.seqs: list[int] = []
        self.run: dict[str, Any] | None = None
        self.skipped: dict[str, None] = {}
        self._ids: dict[int, int] = {}

    def new_id(self, line: int) -> str:
        """``codex-<line>``, then ``codex-<line>.1``... for items replayed from one record."""
        count = self._ids.get(line, 0)
        self._ids[line] = count + 1
        return f"codex-{line}" if not count else f"codex-{line}.{count}"

    def _append(self, message: dict[str, Any], line: int) -> None:
        self.messages.append(message)
        self.seqs.append(line)

    def add(self, payload: dict[str, Any], line: int, model: str | None) -> None:
        kind = payload.get("type")
        if not isinstance(kind, str):
            self.run = None
            self.skipped[stringify(kind) if kind is not None else "(no type)"] = None
            return
        if is_output(payload):
            block = _reasoning_block(payload) if kind == "reasoning" else _call_block(payload, line) \
                if kind in TOOL_CALLS else None
            blocks = [block] if block is not None else _content(payload.get("content"))
            if self.run is None:
                self.run = {"id": self.new_id(line), "role": "assistant", "content": [],
                            "source": {"kind": "model", "provider": self.provider, "model": model}}
                self._append(self.run, line)
            self.run["content"].extend(blocks)
            return
        self.run = None
        if kind == "message":
            self._append(self._input_message(payload, self.new_id(line)), line)
        elif kind in _TOOL_OUTPUTS:
            self._append(_tool_output(payload, self.new_id(line)), line)
        elif kind in ("compaction", "compaction_summary"):
            self._append({"id": self.new_id(line), "role": "user", "content": [
                {"type": "text", "text": "", "encryptedContent": payload.get("encrypted_content", "")}],
                "source": {"kind": "plugin", "plugin": "compact"}}, line)
        else:
            self.skipped[str(kind)] = None

    @staticmethod
    def _input_message(payload: dict[str, Any], message_id: str) -> dict[str, Any]:
        role = payload.get("role")
        content = _content(payload.get("content"))
        source: dict[str, Any] = {"kind": "user"}
        if role in ("developer", "system"):
            source = {"kind": "plugin", "plugin": "codex", "form": "instructions", "role": role}
        elif content and str(content[0].get("text", "")).startswith(_CONTEXT_TAGS):
            source = {"kind": "plugin", "plugin": "codex", "form": "snapshot"}
        return {"id": message_id, "role": "user" if role == "user" else "system" if role else "user",
                "content": content, "source": source}


_FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")


def responses_usage(last: dict[str, Any]) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """A Responses API usage as DSH's, and the fields whose count is damaged (then the usage is
    None: not logged). ``input_tokens`` includes the cached tokens; more cached than input is
    damaged too (DSH's uncached ``inputTokens`` would be negative).

    Example:
        >>> responses_usage({"input_tokens": 100, "cached_input_tokens": 60, "output_tokens": 5})
        ({'inputTokens': 40, 'outputTokens': 5, 'cacheReadTokens': 60, 'reasoningTokens': 0}, ())
        >>> responses_usage({"input_tokens": 100, "cached_input_tokens": -5000, "output_tokens": 5})
        (None, ('cached_input_tokens',))
        >>> responses_usage({"input_tokens": 10, "cached_input_tokens": 60})
        (None, ('cached_input_tokens',))
    """
    counts, damaged = token_counts(last, _FIELDS)
    if not damaged and counts["cached_input_tokens"] > counts["input_tokens"]:
        damaged = ("cached_input_tokens",)
    if damaged:
        return None, damaged
    cached = counts["cached_input_tokens"]
    return {"inputTokens": counts["input_tokens"] - cached, "outputTokens": counts["output_tokens"],
            "cacheReadTokens": cached, "reasoningTokens": counts["reasoning_output_tokens"]}, ()
