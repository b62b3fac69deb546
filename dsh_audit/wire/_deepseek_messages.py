"""DeepSeek chat-completions wire messages for DSH messages (text path and image path).

Written from DSH 0.1.0-rc.8 ``packages/llm/llm-deepseek/src/serialize.ts`` (``serializeMessages``,
``serializeMessagesWithImages``) and ``packages/llm/llm/src/content.ts`` (``offloadRequestImages``);
spec §8.1. The image walk, the request image bound and the attachment lookup are the ones both
DSH adapters share (:mod:`dsh_audit.wire._images`). JavaScript drops object keys whose value is
``undefined``: a key absent from the log's block is absent from the wire object here too
(``_copy``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._json import json_objects
from ..errors import RenderError
from ._images import attachment_bytes, has_image, image_attachment, offload_images, to_base64

__all__ = ["image_path_messages", "text_path_messages"]

Message = Mapping[str, Any]
Block = Mapping[str, Any]

_NO_OUTPUT = "(no output)"
_SEE_IMAGE = "(see attached image)"
_TOOL_IMAGES_LEAD = "Attached image(s) from tool result:"


def _text_of(blocks: Sequence[Block]) -> str:
    """Direct ``text`` blocks joined with ``""`` (DSH ``flattenText``; not recursive)."""
    return "".join(b["text"] for b in blocks if b.get("type") == "text" and isinstance(b.get("text"), str))


def _copy(target: dict[str, Any], key: str, source: Mapping[str, Any], source_key: str) -> None:
    if source_key in source:
        target[key] = source[source_key]


def _assistant(blocks: Sequence[Block]) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": "assistant", "content": _text_of(blocks)}
    reasoning = "".join(b["text"] for b in blocks
                        if b.get("type") == "reasoning" and isinstance(b.get("text"), str))
    if reasoning:
        wire["reasoning_content"] = reasoning
    calls = []
    for block in blocks:
        if block.get("type") == "tool-call":
            call: dict[str, Any] = {}
            _copy(call, "id", block, "id")
            call["type"] = "function"
            function: dict[str, Any] = {}
            _copy(function, "name", block, "name")
            _copy(function, "arguments", block, "arguments")
            call["function"] = function
            calls.append(call)
    if calls:
        wire["tool_calls"] = calls
    return wire


def _tool(result: Block, content: str) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": "tool"}
    _copy(wire, "tool_call_id", result, "toolCallId")
    wire["content"] = content
    return wire


def text_path_messages(message: Message) -> list[dict[str, Any]]:
    """The wire messages of one DSH message on the text-only path (no image anywhere).

    System -> one ``system`` message; assistant -> one ``assistant`` message (``content`` always a
    string, ``reasoning_content`` iff non-empty, ``tool_calls`` in block order); any other role ->
    a ``user`` message when its direct text is non-empty or it has no tool results, then one
    ``tool`` message per tool result (``"(no output)"`` for an empty one).
    """
    role = message.get("role")
    blocks = json_objects(message.get("content"))
    if role == "system":
        return [{"role": "system", "content": _text_of(blocks)}]
    if role == "assistant":
        return [_assistant(blocks)]
    results = [b for b in blocks if b.get("type") == "tool-result"]
    text = _text_of(blocks)
    wire: list[dict[str, Any]] = []
    if text or not results:
        wire.append({"role": "user", "content": text})
    for result in results:
        wire.append(_tool(result, _text_of(json_objects(result.get("content"))) or _NO_OUTPUT))
    return wire


# --- image path -------------------------------------------------------------------------------


def _image_part(block: Block, images: Mapping[str, bytes]) -> dict[str, Any]:
    data = attachment_bytes(block, images)
    url = f"data:{image_attachment(block).get('mediaType')};base64,{to_base64(data)}"
    return {"type": "image_url", "image_url": {"url": url}}


def _parts(blocks: Sequence[Block], images: Mapping[str, bytes]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str) and block["text"]:
            parts.append({"type": "text", "text": block["text"]})
        elif kind == "image":
            parts.append(_image_part(block, images))
        elif kind == "tool-result":
            parts.extend(_parts(json_objects(block.get("content")), images))
    return parts


def image_path_messages(messages: Sequence[Message], images: Mapping[str, bytes], *,
                        max_request_image_bytes: int | None,
                        offloaded_image_text: str | None = None) -> list[dict[str, Any]]:
    """The wire messages of a whole request that carries images (``serializeRequestWithImages``).

    User content with an image becomes an ordered part array with ``data:`` URLs; tool messages
    keep string content and their images follow in one ``user`` message, flushed before the next
    system, assistant or user message. Raises :class:`RenderError` for an image outside a user
    message (DSH ``UNSUPPORTED_CONTENT``) or an attachment whose bytes were not supplied.
    """
    for message in messages:
        if message.get("role") != "user" and has_image(message.get("content")):
            raise RenderError(f"DeepSeek cannot carry image content in a {message.get('role')} message",
                              dsh_code="UNSUPPORTED_CONTENT")
    wire: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []

    def flush() -> None:
        if pending:
            wire.append({"role": "user", "content": [{"type": "text", "text": _TOOL_IMAGES_LEAD}, *pending]})
            pending.clear()

    for message in offload_images(messages, max_request_image_bytes, offloaded_image_text):
        role = message.get("role")
        blocks = json_objects(message.get("content"))
        if role in ("system", "assistant"):
            flush()
            wire.extend(text_path_messages(message))
            continue
        results = [b for b in blocks if b.get("type") == "tool-result"]
        parts = _parts([b for b in blocks if b.get("type") != "tool-result"], images)
        content: Any = parts if any(p["type"] == "image_url" for p in parts) else "".join(p["text"] for p in parts)
        if len(content) > 0 or not results:
            flush()
            wire.append({"role": "user", "content": content})
        for result in results:
            inner = _parts(json_objects(result.get("content")), images)
            found = [p for p in inner if p["type"] == "image_url"]
            text = "".join(p["text"] for p in inner if p["type"] == "text")
            wire.append(_tool(result, text or (_SEE_IMAGE if found else _NO_OUTPUT)))
            pending.extend(found)
    flush()
    return wire
