"""Anthropic Messages content blocks and usage as DSH's (the records of a Claude Code transcript).

``thinking`` becomes ``reasoning``, ``tool_use`` a ``tool-call`` with ``JSON.stringify(input)`` as
``arguments``, an image an attachment named by the SHA-256 of its bytes; a kind DSH has no block
for is kept as JSON text with its ``importedType``. Anthropic's ``input_tokens`` excludes the
cache reads and writes (Anthropic prompt-caching docs; spec §5.6), as DSH's buckets do.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from .._json import as_object
from ..jsjson import stringify
from ._model import token_counts

__all__ = ["anthropic_usage", "content_block", "result_content"]


def _text(text: Any) -> dict[str, Any]:
    return {"type": "text", "text": text if isinstance(text, str) else stringify(text)}


def _image(block: dict[str, Any]) -> dict[str, Any]:
    source = as_object(block.get("source"))
    data: str = source["data"] if isinstance(source.get("data"), str) else ""
    try:
        raw = base64.b64decode(data, validate=False)
    except ValueError:
        raw = data.encode()
    attachment = {"attachmentId": "sha256:" + hashlib.sha256(raw).hexdigest(),
                  "mediaType": source.get("media_type"), "bytes": len(raw)}
    return {"type": "image", "attachment": attachment}


def content_block(block: Any) -> dict[str, Any]:
    """One Anthropic content block as a DSH content block (unknown kinds as JSON text)."""
    if not isinstance(block, dict):
        return _text(block)
    kind = block.get("type")
    if kind == "text":
        return _text(block.get("text", ""))
    if kind == "thinking":
        return {"type": "reasoning", "text": block.get("thinking", "")}
    if kind == "redacted_thinking":
        return {"type": "reasoning", "text": "", "redacted": True}
    if kind == "tool_use":
        return {"type": "tool-call", "id": block.get("id", ""), "name": block.get("name", ""),
                "arguments": stringify(block.get("input", {}))}
    if kind == "image":
        return _image(block)
    return {**_text(block), "importedType": kind}


def result_content(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return [content_block(b) for b in content]
    return [_text("" if content is None else content)]


_FIELDS = (("inputTokens", "input_tokens"), ("outputTokens", "output_tokens"),
           ("cacheReadTokens", "cache_read_input_tokens"), ("cacheWriteTokens", "cache_creation_input_tokens"))


def anthropic_usage(raw: Any) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
    """An Anthropic ``usage`` as DSH's, and the fields whose count is damaged (then the usage is
    None: not logged, as every view reads a request without one). The cache buckets appear only
    when the record holds them.

    Example:
        >>> anthropic_usage({"input_tokens": 3, "output_tokens": 2, "cache_read_input_tokens": 9})
        ({'inputTokens': 3, 'outputTokens': 2, 'cacheReadTokens': 9}, ())
        >>> anthropic_usage({"input_tokens": 3, "output_tokens": -2})
        (None, ('output_tokens',))
    """
    if not isinstance(raw, dict):
        return None, ()
    fields = tuple(name for key, name in _FIELDS if key in ("inputTokens", "outputTokens") or name in raw)
    counts, damaged = token_counts(raw, fields)
    if damaged:
        return None, damaged
    return {key: counts[name] for key, name in _FIELDS if name in counts}, ()
