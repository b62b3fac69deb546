"""A request's prompt as the provider caches it: ordered text segments, and common prefixes.

The provider caches its *rendered* prompt, whose template is not public. dsh-audit approximates it
with segments in the rule's ``render_order`` (prompt-affecting parameters, system, each tool, each
message), each segment the ``JSON.stringify`` of that part. When a ``dsh_audit.wire`` renderer is
available the parts come from the rendered body (so adapter transforms count); otherwise from the
request's header and messages. Two requests share a prefix as far as their segments are equal,
plus the common characters of the first differing segment.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from ..jsjson import stringify
from ..replay import Request
from ._rules import CacheRule
from ._tokens import TokenCounter

__all__ = ["Prompt", "PromptBuilder", "common_chars", "common_prefix", "prefix_tokens"]


@dataclass(frozen=True, slots=True)
class Prompt:
    """One request's prompt segments and where they came from (``wire:<adapter>`` or ``json``).

    ``json`` is the log-JSON projection of a wire-projected prompt, used to compare it with a
    request whose body could not be rendered (like is compared with like).
    """

    segments: tuple[str, ...]
    source: str
    json: Prompt | None = None

    def view(self, other: Prompt) -> tuple[Prompt, Prompt]:
        """``(self, other)`` in a common projection (both rendered, or both log JSON)."""
        if self.source == other.source:
            return self, other
        return self.json or self, other.json or other


def common_chars(a: str, b: str) -> int:
    """Length of the common leading substring of ``a`` and ``b`` (binary search on slices)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def common_prefix(a: Prompt, b: Prompt) -> tuple[int, int]:
    """``(whole segments, extra characters)`` that ``a`` and ``b`` share from the start."""
    k = 0
    for left, right in zip(a.segments, b.segments):
        if left != right:
            return k, common_chars(left, right)
        k += 1
    return k, 0


def prefix_tokens(prompt: Prompt, shared: tuple[int, int], count: TokenCounter) -> int:
    """Tokens of the first ``shared`` segments/characters of ``prompt``."""
    whole, chars = shared
    total = sum(count(s) for s in prompt.segments[:whole])
    if chars and whole < len(prompt.segments):
        total += count(prompt.segments[whole][:chars])
    return total


def _strip_cache_control(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_strip_cache_control(v) for v in value]
    return value


def _plain_text(message: dict[str, Any]) -> dict[str, Any]:
    # pi-ai turns the last user message's string into one text block to carry cache_control;
    # the provider renders both the same way, so fold it back.
    content = message.get("content")
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) \
            and set(content[0]) == {"type", "text"} and content[0]["type"] == "text":
        return {**message, "content": content[0]["text"]}
    return message


class PromptBuilder:
    """Builds :class:`Prompt` values for one session under one rule.

    Args:
        rule: the provider rule (render order, prompt parameters, reasoning rule).
        render: optional ``request -> body bytes`` (a wire renderer); ``None`` or a failure
            falls back to the request's own header and messages.
    """

    def __init__(self, rule: CacheRule, *, render: Callable[[Request], bytes | None] | None = None) -> None:
        self.rule = rule
        self.render = render

    def build(self, request: Request) -> Prompt:
        fallback = Prompt(self._order(self._from_request(request)), "json")
        if self.render is not None:
            rendered = self.render(request)  # None: a refused render (tokenised header, image) falls back
            try:
                body = orjson.loads(rendered) if rendered is not None else None
            except ValueError:
                body = None
            if isinstance(body, dict):
                return Prompt(self._order(self._from_body(body)), f"wire:{self.rule.wire_adapter}", fallback)
        return fallback

    def _order(self, parts: dict[str, list[Any]]) -> tuple[str, ...]:
        segments: list[str] = []
        for name in self.rule.render_order:
            segments.extend(stringify(part) for part in parts.get(name, ()))
        return tuple(segments)

    def _params(self, source: dict[str, Any]) -> list[Any]:
        params = {k: source[k] for k in self.rule.prompt_params if k in source}
        return [params] if params else []

    def _from_body(self, body: dict[str, Any]) -> dict[str, list[Any]]:
        if self.rule.family == "anthropic":
            body = _strip_cache_control(body)
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        system: list[Any] = []
        while messages and messages[0].get("role") in ("system", "developer"):
            system.append(messages.pop(0))
        if "system" in body:
            system.insert(0, body["system"])
        if self.rule.strip_reasoning_without_tool_calls:
            messages = [{k: v for k, v in m.items() if k != "reasoning_content"}
                        if m.get("role") == "assistant" and not m.get("tool_calls") else m for m in messages]
        if self.rule.family == "anthropic":
            messages = [_plain_text(m) for m in messages]
        return {"params": self._params(body), "system": system, "tools": list(body.get("tools") or []),
                "messages": messages}

    def _from_request(self, request: Request) -> dict[str, list[Any]]:
        header = request.header or {}
        config = header.get("config") or {}
        params = {"reasoningEffort": config.get("reasoningEffort")} if "reasoningEffort" in config else None
        system = header.get("system")
        tools = header.get("tools")
        messages = list(request.messages)
        if self.rule.strip_reasoning_without_tool_calls:
            messages = [_drop_reasoning(m) for m in messages]
        return {"params": [params] if params else [], "system": [system] if system is not None else [],
                "tools": list(tools) if isinstance(tools, list) else ([tools] if tools is not None else []),
                "messages": messages}


def _drop_reasoning(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return message
    if any(isinstance(b, dict) and b.get("type") == "tool-call" for b in content):
        return message
    return {**message, "content": [b for b in content if not (isinstance(b, dict) and b.get("type") == "reasoning")]}
