"""DSH's compat gates: which pi-ai compat switches each API's compat type declares, and which of them
a route may set (:func:`~dsh_audit.wire._piai_routes.parse_routes` applies them to each model).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["COMPAT_GATES", "compat_apis"]

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
