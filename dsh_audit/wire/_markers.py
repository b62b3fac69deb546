"""pi-ai's moving prompt-cache markers, taken out so two Anthropic-style bodies compare as prompts.

pi-ai puts ``cache_control`` on the last user message's last block (turning a string content into
a one-block array) and on the last tool, so the markers move with every request without changing
what the provider caches (spec §8.3, §9.7).
"""

from __future__ import annotations

from typing import Any

from .._json import rebuild_json

__all__ = ["fold_text_block", "without_cache_markers"]


def without_cache_markers(value: Any) -> Any:
    """``value`` (a body or any part of it) with every ``cache_control`` key dropped, as a copy.

    Walked with a stack, not by recursion: a tool schema nested as deep as the log reader
    allows is copied like any other.

    Example:
        >>> without_cache_markers({"tools": [{"name": "t", "cache_control": {"type": "ephemeral"}}]})
        {'tools': [{'name': 't'}]}
    """
    return rebuild_json(value, drop_key="cache_control")


def fold_text_block(message: dict[str, Any]) -> dict[str, Any]:
    """A message whose content is one plain text block, with that block folded back into the
    string it was (the provider renders both the same way); any other message as it is.

    Example:
        >>> fold_text_block({"role": "user", "content": [{"type": "text", "text": "hi"}]})
        {'role': 'user', 'content': 'hi'}
    """
    content = message.get("content")
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) \
            and set(content[0]) == {"type", "text"} and content[0]["type"] == "text":
        return {**message, "content": content[0]["text"]}
    return message
