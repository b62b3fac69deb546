"""DSH's compat gates: which pi-ai compat switches each API's compat type declares, and which of them
a route may set (:func:`~dsh_audit.wire._piai_routes.parse_routes` applies them to each model).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["COMPAT_GATES", "compat_apis", "compat_value_problem"]

#: DSH's compat gates (``llm-pi-ai/src/catalog.ts:235-320``, ``COMPAT_GATES``): the compat fields
#: pi-ai's compat type of each API declares, ``True`` where a route may set it ("offer"), ``False``
#: where pi-ai's catalog sets it for the vendors that need it ("withhold"). The three Responses
#: APIs share one type; an API missing here (Google's, Mistral's) takes no compat at all.
_COMPLETIONS_COMPAT: Mapping[str, bool] = MappingProxyType({
    **dict.fromkeys(("supportsStore", "supportsDeveloperRole", "supportsReasoningEffort", "supportsUsageInStreaming",
                     "maxTokensField", "requiresToolResultName", "requiresAssistantAfterToolResult",
                     "requiresThinkingAsText", "requiresReasoningContentOnAssistantMessages", "thinkingFormat",
                     "chatTemplateKwargs", "supportsStrictMode", "cacheControlFormat",
                     "supportsLongCacheRetention"), True),
    **dict.fromkeys(("openRouterRouting", "vercelGatewayRouting", "zaiToolStream", "supportsOpenAIGrammarTools",
                     "sendSessionAffinityHeaders", "deferredToolsMode", "sessionAffinityFormat"), False)})
_RESPONSES_COMPAT: Mapping[str, bool] = MappingProxyType({
    **dict.fromkeys(("supportsDeveloperRole", "supportsStrictMode", "supportsLongCacheRetention"), True),
    **dict.fromkeys(("sessionAffinityFormat", "supportsOpenAIGrammarTools", "supportsToolSearch",
                     "supportsExplicitPromptCacheMode"), False)})
_ANTHROPIC_COMPAT: Mapping[str, bool] = MappingProxyType({
    **dict.fromkeys(("supportsEagerToolInputStreaming", "supportsLongCacheRetention", "supportsCacheControlOnTools",
                     "supportsTemperature", "forceAdaptiveThinking", "allowEmptySignature", "supportsStrictTools"),
                    True),
    **dict.fromkeys(("sendSessionAffinityHeaders", "supportsToolReferences"), False)})
COMPAT_GATES: Mapping[str, Mapping[str, bool]] = MappingProxyType({
    "openai-completions": _COMPLETIONS_COMPAT, "openai-responses": _RESPONSES_COMPAT,
    "azure-openai-responses": _RESPONSES_COMPAT, "openai-codex-responses": _RESPONSES_COMPAT,
    "anthropic-messages": _ANTHROPIC_COMPAT,
    "bedrock-converse-stream": MappingProxyType({"supportsStrictMode": True})})


def compat_apis(field: str) -> tuple[str, ...]:
    """The APIs whose compat type declares ``field``, in DSH's gate order (empty: no API's does).

    Example:
        >>> compat_apis("supportsTemperature")
        ('anthropic-messages',)
        >>> compat_apis("supportsDeveloperRole")
        ('openai-completions', 'openai-responses', 'azure-openai-responses', 'openai-codex-responses')
    """
    return tuple(api for api, gate in COMPAT_GATES.items() if field in gate)


#: The string values DSH's compat schema takes for a switch (``config.ts`` ``compatProfile``: ``z.union`` of
#: ``catalog.ts`` ``MAX_TOKENS_FIELDS``, ``SUPPORTED_THINKING_FORMATS``, ``CACHE_CONTROL_FORMATS``); every other
#: offered switch but ``chatTemplateKwargs`` is a ``z.boolean()``.
_COMPAT_CHOICES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "maxTokensField": ("max_completion_tokens", "max_tokens"),
    "thinkingFormat": ("openai", "deepseek", "openrouter", "together", "zai", "qwen", "chat-template",
                       "qwen-chat-template", "string-thinking", "ant-ling"),
    "cacheControlFormat": ("anthropic",)})
#: The request-state placeholders a ``chat_template_kwargs`` value may name (``catalog.ts`` ``CHAT_TEMPLATE_VARS``).
_CHAT_TEMPLATE_VARS = ("thinking.enabled", "thinking.effort")
_KWARG_VALUE = ("a string, number, boolean or null, or {$var: thinking.enabled | thinking.effort, "
                "omitWhenOff?: boolean}")


def compat_value_problem(field: str, value: object) -> tuple[str, str] | None:
    """What DSH's schema (``config.ts`` ``compatProfile``, ``chatTemplateKwarg``) refuses in the value
    of the offered switch ``field``: (the key path under the switch, "" for the switch itself, and the
    problem); None when it takes it. A null passes the schema (schemastery lets nullable data through),
    so it is not judged here. Schemastery's object keeps keys it does not name, so
    ``{$var: thinking.effort, other: 1}`` is a kwarg value.

    Example:
        >>> compat_value_problem("chatTemplateKwargs", {"effort": {"omitWhenOff": True}})[0]
        '.effort'
        >>> compat_value_problem("thinkingFormat", "qwen") is None
        True
    """
    if value is None:
        return None
    if field == "chatTemplateKwargs":
        if not isinstance(value, dict):
            return "", "must be a mapping of chat_template_kwargs names to values"
        for key, kwarg in value.items():
            if not _kwarg_ok(kwarg):
                return f".{key}", f"is not a chat_template_kwargs value: {_KWARG_VALUE}"
        return None
    choices = _COMPAT_CHOICES.get(field)
    if choices is not None:
        return None if isinstance(value, str) and value in choices else ("", f"must be one of {', '.join(choices)}")
    return None if isinstance(value, bool) else ("", "must be true or false")


def _kwarg_ok(value: object) -> bool:
    """A ``chatTemplateKwarg`` of DSH's schema: a scalar, null, or a ``$var`` object."""
    if value is None or isinstance(value, (str, int, float)):  # bool is an int
        return True
    if not isinstance(value, dict):
        return False
    omit = value.get("omitWhenOff")
    return value.get("$var") in _CHAT_TEMPLATE_VARS and (omit is None or isinstance(omit, bool))
