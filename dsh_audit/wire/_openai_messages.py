"""pi-ai's ``convertMessages`` for OpenAI chat completions: the system message, then the context's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import RenderError
from ..jsjson import stringify
from ._openai_compat import detect_compat
from ._piai_facts import PiModel
from ._piai_js import clean_id, js_blank, js_head, js_parse, js_truthy, sanitize_surrogates
from ._piai_transform import transform_messages

__all__ = ["short_hash"]


def _base36(value: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, rest = divmod(value, 36)
        out = digits[rest] + out
        if not value:
            return out


def short_hash(text: str) -> str:
    """pi-ai ``shortHash``: two 32-bit multiplicative hashes over UTF-16 units, in base 36."""
    mask = 0xFFFFFFFF
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    units = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(units), 2):
        unit = units[i] | units[i + 1] << 8
        h1 = ((h1 ^ unit) * 2654435761) & mask
        h2 = ((h2 ^ unit) * 1597334677) & mask
    h1 = (((h1 ^ (h1 >> 16)) * 2246822507) & mask) ^ (((h2 ^ (h2 >> 13)) * 3266489909) & mask)
    h2 = (((h2 ^ (h2 >> 16)) * 2246822507) & mask) ^ (((h1 ^ (h1 >> 13)) * 3266489909) & mask)
    return _base36(h2) + _base36(h1)


def _normalize_id(call_id: str, model: PiModel, _message: Any) -> str:
    if "|" in call_id:
        head, _, tail = call_id.partition("|")
        call, item = clean_id(head), clean_id(tail)
        combined = f"{call}_{item}" if item else call
        if len(combined) <= 40:
            return combined
        digest = short_hash(call_id)[:8]
        return f"{call[:max(1, 40 - len(digest) - 1)]}_{digest}"
    # openai-completions.js convertMessages: the 40 are UTF-16 units (a cut may split an astral pair).
    return js_head(call_id, 40) if model.provider == "openai" else call_id


def _part(block: Mapping[str, Any]) -> dict[str, Any]:
    """A user content block as a chat-completions part: text, or an image as a ``data:`` URL."""
    if block["type"] == "text":
        return {"type": "text", "text": sanitize_surrogates(block["text"])}
    return {"type": "image_url", "image_url": {"url": f"data:{block['mimeType']};base64,{block['data']}"}}


def _reasoning_details(calls: list[Any]) -> list[Any]:
    """The tool calls' thought signatures, each parsed, the falsy ones left out (pi-ai's ``reasoning_details``)."""
    details = []
    for call in calls:  # openai-completions.js:912-919: JSON.parse each, then .filter(Boolean)
        if call.get("thoughtSignature"):
            try:
                parsed = js_parse(call["thoughtSignature"])
            except ValueError:
                parsed = None
            except RecursionError:  # V8 parses it, but JSON.stringify of the body then overflows
                raise RenderError("a tool call's thought signature nests JSON objects or arrays too deep: "
                                  "pi-ai replays it parsed in reasoning_details, and JavaScript cannot "
                                  "serialise a body that deep, so DSH could not have sent this request",
                                  hint="the log was edited or damaged; `dsh-audit validate` lists what "
                                  "else is wrong in it") from None
            if js_truthy(parsed):
                details.append(parsed)
    return details


def _assistant(msg: Mapping[str, Any], model: PiModel, compat: Mapping[str, Any]) -> dict[str, Any] | None:
    out: dict[str, Any] = {"role": "assistant", "content": "" if compat["requiresAssistantAfterToolResult"] else None}
    texts = [sanitize_surrogates(b["text"]) for b in msg["content"] if b["type"] == "text" and not js_blank(b["text"])]
    text = "".join(texts)
    thinking = [b for b in msg["content"] if b["type"] == "thinking" and not js_blank(b["thinking"])]
    if thinking and compat["requiresThinkingAsText"]:
        joined = "\n\n".join(sanitize_surrogates(b["thinking"]) for b in thinking)
        out["content"] = [{"type": "text", "text": joined}, *({"type": "text", "text": t} for t in texts)]
    else:
        if text:
            out["content"] = text
        signature = thinking[0].get("thinkingSignature") if thinking else None
        if model.provider == "opencode-go" and signature == "reasoning":
            signature = "reasoning_content"
        if signature:
            out[signature] = "\n".join(b["thinking"] for b in thinking)
    calls = [b for b in msg["content"] if b["type"] == "toolCall"]
    if calls:
        out["tool_calls"] = [{"id": c["id"], "type": "function",
                              "function": {"name": c["name"], "arguments": stringify(c["arguments"])}}
                             for c in calls]
        details = _reasoning_details(calls)
        if details:
            out["reasoning_details"] = details
    if compat["requiresReasoningContentOnAssistantMessages"] and model.reasoning and "reasoning_content" not in out:
        out["reasoning_content"] = ""
    if not out["content"] and "tool_calls" not in out:
        return None
    return out


_FILLER = {"role": "assistant", "content": "I have processed the tool results."}


class _Converter:
    """``convertMessages``, one transformed message at a time (:class:`~dsh_audit.wire._piai.Sink`),
    without the system message: a run of tool results is closed (its images following it) by
    the next other message."""

    __slots__ = ("compat", "group", "images", "last_role", "model", "params")

    def __init__(self, model: PiModel) -> None:
        self.model = model
        self.compat: Mapping[str, Any] = detect_compat(model)
        self.params: list[dict[str, Any]] = []
        self.last_role: str | None = None
        self.group = False  # in a run of tool results
        self.images: list[dict[str, Any]] = []  # the run's images

    def add(self, msg: dict[str, Any]) -> None:
        compat = self.compat
        if msg["role"] == "toolResult":
            self.group = True
            text = "\n".join(b["text"] for b in msg["content"] if b["type"] == "text")
            found = [_part(b) for b in msg["content"] if b["type"] == "image"]
            entry = {"role": "tool", "content": sanitize_surrogates(text or ("(see attached image)" if found
                                                                             else "(no tool output)")),
                     "tool_call_id": msg["toolCallId"]}
            if compat["requiresToolResultName"] and msg.get("toolName"):
                entry["name"] = msg["toolName"]
            self.params.append(entry)
            if "image" in self.model.input:
                self.images = self.images + found
            return
        self._close()
        if compat["requiresAssistantAfterToolResult"] and self.last_role == "toolResult" and msg["role"] == "user":
            self.params.append(dict(_FILLER))
        if msg["role"] == "user":
            content = msg["content"]
            self.params.append({"role": "user", "content": [_part(b) for b in content] if isinstance(content, list)
                                else sanitize_surrogates(content)})  # a list: DSH's image path (never empty)
        else:
            converted = _assistant(msg, self.model, compat)
            if converted is None:
                return  # skipped messages leave last_role as it was
            self.params.append(converted)
        self.last_role = msg["role"]

    def _close(self) -> None:
        if not self.group:
            return
        self.group, self.last_role = False, "toolResult"
        if self.images:  # the run's images follow it in one user message
            if self.compat["requiresAssistantAfterToolResult"]:
                self.params.append(dict(_FILLER))
            self.params.append({"role": "user", "content": [
                {"type": "text", "text": "Attached image(s) from tool result:"}, *self.images]})
            self.last_role = "user"
        self.images = []

    def finish(self, extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
        end = _Converter.__new__(_Converter)
        end.model, end.compat, end.params = self.model, self.compat, list(self.params)
        end.last_role, end.group, end.images = self.last_role, self.group, self.images
        for msg in extra:
            end.add(msg)
        end._close()
        return end.params


def _system(context: Mapping[str, Any], model: PiModel, compat: Mapping[str, Any]) -> list[dict[str, Any]]:
    if not context.get("systemPrompt"):
        return []
    role = "developer" if model.reasoning and compat["supportsDeveloperRole"] else "system"
    return [{"role": role, "content": sanitize_surrogates(context["systemPrompt"])}]


def _convert_messages(context: Mapping[str, Any], model: PiModel, compat: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages = transform_messages(context["messages"], model, _normalize_id)
    converter = _Converter(model)
    converter.compat = compat
    for msg in messages:
        converter.add(msg)
    return _system(context, model, compat) + converter.finish([])
