"""pi-ai's ``getCompat`` for OpenAI chat completions: the switches an endpoint's provider and URL imply."""

from __future__ import annotations

from typing import Any

from ._piai_facts import PiModel

__all__ = ["detect_compat"]


def detect_compat(model: PiModel) -> dict[str, Any]:
    """pi-ai ``getCompat``: switches detected from provider and URL, overridden by ``model.compat``."""
    p, url = model.provider, model.base_url
    zai = p in ("zai", "zai-coding-cn") or "api.z.ai" in url or "open.bigmodel.cn" in url
    together = p == "together" or "api.together.ai" in url or "api.together.xyz" in url
    moonshot = p in ("moonshotai", "moonshotai-cn") or "api.moonshot." in url
    openrouter = p == "openrouter" or "openrouter.ai" in url
    cf_workers = p == "cloudflare-workers-ai" or "api.cloudflare.com" in url
    cf_gateway = p == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in url
    nvidia = p == "nvidia" or "integrate.api.nvidia.com" in url
    ant_ling = p == "ant-ling" or "api.ant-ling.com" in url
    grok = p == "xai" or "api.x.ai" in url
    deepseek = p == "deepseek" or "deepseek.com" in url
    non_standard = (nvidia or p == "cerebras" or "cerebras.ai" in url or grok or together or "chutes.ai" in url
                    or "deepseek.com" in url or zai or moonshot or p == "opencode" or "opencode.ai" in url
                    or cf_workers or cf_gateway or ant_ling)
    use_max_tokens = "chutes.ai" in url or moonshot or cf_gateway or together or nvidia or ant_ling
    dev_role_router = openrouter and (model.id.startswith("anthropic/") or model.id.startswith("openai/"))
    thinking = ("deepseek" if deepseek else "zai" if zai else "together" if together else "ant-ling" if ant_ling
                else "openrouter" if openrouter else "openai")
    detected: dict[str, Any] = {
        "supportsStore": not non_standard,
        "supportsDeveloperRole": dev_role_router or (not non_standard and not openrouter),
        "supportsReasoningEffort": not (grok or zai or moonshot or together or cf_gateway or nvidia or ant_ling),
        "supportsUsageInStreaming": True,
        "maxTokensField": "max_tokens" if use_max_tokens else "max_completion_tokens",
        "requiresToolResultName": False,
        "requiresAssistantAfterToolResult": False,
        "requiresThinkingAsText": False,
        "requiresReasoningContentOnAssistantMessages": deepseek,
        "thinkingFormat": thinking,
        "chatTemplateKwargs": {},
        "zaiToolStream": False,
        "supportsStrictMode": not (moonshot or together or cf_gateway or nvidia),
        "cacheControlFormat": "anthropic" if p == "openrouter" and model.id.startswith("anthropic/") else None,
        "sendSessionAffinityHeaders": False,
        "sessionAffinityFormat": "openrouter" if openrouter else "openai",
        "supportsLongCacheRetention": not (together or cf_workers or cf_gateway or nvidia or ant_ling),
    }
    detected.update((k, v) for k, v in model.compat.items() if v is not None)
    return detected
