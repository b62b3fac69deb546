"""The chat-completions body fields beside the messages: tools, reasoning, cache markers, routing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._piai_facts import PiModel
from ._piai_js import js_truthy


def _tools(tools: list[dict[str, Any]], compat: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        function: dict[str, Any] = {"name": tool["name"]}
        for key in ("description", "parameters"):  # written as they are: null stays, absent is dropped
            if key in tool:
                function[key] = tool[key]
        if compat["supportsStrictMode"] is not False:
            function["strict"] = False
        out.append({"type": "function", "function": function})
    return out


def _mapped(model: PiModel, level: str) -> Any:
    levels = model.thinking_level_map or {}
    return levels[level] if level in levels and levels[level] is not None else level


def _reasoning_fields(body: dict[str, Any], model: PiModel, compat: Mapping[str, Any], effort: str | None) -> None:
    fmt, levels = compat["thinkingFormat"], model.thinking_level_map or {}
    off_pinned = model.pins("off")
    if not model.reasoning:
        return
    if fmt == "zai":
        body["thinking"] = {"type": "enabled", "clear_thinking": False} if effort else {"type": "disabled"}
        if effort and compat["supportsReasoningEffort"]:
            value = levels.get(effort, effort)
            if isinstance(value, str):
                body["reasoning_effort"] = value
    elif fmt == "qwen":
        body["enable_thinking"] = bool(effort)
    elif fmt == "qwen-chat-template":
        body["chat_template_kwargs"] = {"enable_thinking": bool(effort), "preserve_thinking": True}
    elif fmt in ("deepseek", "together"):
        if fmt == "together":
            body["reasoning"] = {"enabled": bool(effort)}
        elif effort:
            body["thinking"] = {"type": "enabled"}
        elif not off_pinned:
            body["thinking"] = {"type": "disabled"}
        if effort and compat["supportsReasoningEffort"]:
            body["reasoning_effort"] = _mapped(model, effort)
    elif fmt == "openrouter":
        if effort:
            body["reasoning"] = {"effort": _mapped(model, effort)}
        elif not off_pinned:
            body["reasoning"] = {"effort": levels["off"] if levels.get("off") is not None else "none"}
    elif fmt == "ant-ling" and effort:
        # openai-completions.js:610: the only branch whose test names the effort, so without one
        # an ant-ling route falls through to the plain ``reasoning_effort`` ``off`` branch (:636).
        if isinstance(levels.get(effort), str):
            body["reasoning"] = {"effort": levels[effort]}
    elif fmt == "string-thinking":
        if effort:
            body["thinking"] = _mapped(model, effort)
        elif not off_pinned:
            body["thinking"] = levels["off"] if levels.get("off") is not None else "none"
    elif fmt == "chat-template":
        kwargs = _chat_template_kwargs(model, compat, effort)
        if kwargs:
            body["chat_template_kwargs"] = kwargs
    elif effort and compat["supportsReasoningEffort"]:
        body["reasoning_effort"] = _mapped(model, effort)
    elif not effort and compat["supportsReasoningEffort"] and isinstance(levels.get("off"), str):
        body["reasoning_effort"] = levels["off"]


def _chat_template_kwargs(model: PiModel, compat: Mapping[str, Any], effort: str | None) -> dict[str, Any]:
    """pi-ai ``buildChatTemplateKwargs``: each ``compat.chatTemplateKwargs`` entry, a plain value
    as it is; an object (``{$var: "thinking.enabled"}``, ``omitWhenOff``) resolved from the
    effort and ``thinkingLevelMap``, an unresolved one left out."""
    levels = model.thinking_level_map or {}
    kwargs: dict[str, Any] = {}
    declared = compat.get("chatTemplateKwargs")
    for key, value in (declared.items() if isinstance(declared, Mapping) else ()):
        if not isinstance(value, (Mapping, list)):
            kwargs[key] = value
            continue
        spec = value if isinstance(value, Mapping) else {}
        if not effort and spec.get("omitWhenOff"):
            continue
        if spec.get("$var") == "thinking.enabled":
            kwargs[key] = bool(effort)
            continue
        level = effort or "off"
        if level not in levels:
            if effort:
                kwargs[key] = effort
        elif isinstance(levels[level], str):
            kwargs[key] = levels[level]
    return kwargs


def _cache_control(compat: Mapping[str, Any], retention: str) -> dict[str, str] | None:
    """pi-ai ``getCompatCacheControl``: Anthropic-style markers for a ``cacheControlFormat:
    anthropic`` endpoint (OpenRouter ``anthropic/`` models, or a route that declares it)."""
    if compat["cacheControlFormat"] != "anthropic" or retention == "none":
        return None
    if retention == "long" and compat["supportsLongCacheRetention"]:
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def _mark_text(message: dict[str, Any], cache: dict[str, str]) -> dict[str, Any] | None:
    """``message`` with ``cache`` on its text, as a new message (the old one may be another
    request's too): a non-empty string becomes a one-block array, else the last text part of an
    array takes it; None when there is no text to mark."""
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return None
        return {**message, "content": [{"type": "text", "text": content, "cache_control": cache}]}
    parts: list[dict[str, Any]] = content if isinstance(content, list) else []
    for at in range(len(parts) - 1, -1, -1):
        if parts[at].get("type") == "text":
            return {**message, "content": [*parts[:at], {**parts[at], "cache_control": cache}, *parts[at + 1:]]}
    return None


def _apply_cache_control(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                         cache: dict[str, str]) -> None:
    """pi-ai ``applyAnthropicCacheControl`` (``api/openai-completions.js``): the first system or
    developer message, the last tool, and the last user/assistant/tool message that has text
    (walking back past ones without). A marked message is replaced in ``messages`` by a marked
    copy."""
    at = next((i for i, m in enumerate(messages) if m["role"] in ("system", "developer")), None)
    if at is not None:
        messages[at] = _mark_text(messages[at], cache) or messages[at]
    if tools:
        tools[-1]["cache_control"] = cache
    for at in range(len(messages) - 1, -1, -1):
        if messages[at]["role"] in ("user", "assistant", "tool"):
            marked = _mark_text(messages[at], cache)
            if marked is not None:
                messages[at] = marked
                return


def _routing(body: dict[str, Any], model: PiModel) -> None:
    """pi-ai's provider-routing fields, read from the model's own ``compat``: OpenRouter's
    ``provider`` and the Vercel AI Gateway's ``providerOptions.gateway`` (``only``/``order``)."""
    openrouter = model.compat.get("openRouterRouting")
    if js_truthy(openrouter):
        body["provider"] = openrouter
    vercel = model.compat.get("vercelGatewayRouting")
    if isinstance(vercel, Mapping):
        gateway = {k: vercel[k] for k in ("only", "order") if js_truthy(vercel.get(k))}
        if gateway:
            body["providerOptions"] = {"gateway": gateway}
