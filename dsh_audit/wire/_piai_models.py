"""The facts a pi-ai rendering needs beyond the log: model catalog entries and DSH's call options.

pi-ai resolves a route/model to a ``Model`` (context window, output capability, reasoning levels,
compat switches) that DSH never logs; :class:`PiModel` is that record, :data:`BUILTIN_MODELS`
holds pi-ai's catalog entries for the catalog routes DSH users pick (every Claude model, DeepSeek's
own route, every OpenRouter model, OpenAI's own models), and callers pass
their own for other routes. :func:`request_call` applies DSH's side of ``llm-pi-ai/src/adapter.ts`` (spec §8.2): which
effort reaches pi-ai, which cap, and what the adapter refuses. Facts are those of pi-ai **0.82.1**
(its ``dist/providers/data/{anthropic,deepseek,openrouter,openai}.json`` and ``models.js`` level rules) and
DSH 0.1.0-rc.8's ``llm-pi-ai/src/catalog.ts`` for hand-declared models. :class:`PiRenderer` holds
the route profile settings the pi-ai renderers take and the render steps they share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, ClassVar
from urllib.parse import urlsplit

from ..errors import RenderError
from ..jsjson import stringify_bytes
from ._types import WireRequest

__all__ = [
    "BUILTIN_MODELS",
    "CATALOG_BASE_URLS",
    "CONTEXT_SAFETY_TOKENS",
    "HARNESS_VERSION",
    "PI_AI_VERSION",
    "PI_MAX_REQUEST_IMAGE_BYTES",
    "SDK_PLATFORM",
    "THINKING_LEVELS",
    "PiCall",
    "PiModel",
    "PiRenderer",
    "RouteProfile",
    "clamp_level",
    "compaction_messages",
    "merge_profile_headers",
    "request_call",
    "resolve_model",
    "user_agent",
]

PI_AI_VERSION = "0.82.1"
#: DSH release whose attribution ``user-agent`` the pi-ai renderers write unless told otherwise.
HARNESS_VERSION = "0.1.0-rc.8"
#: The Stainless platform headers of the captures (``x-stainless-os/arch/runtime/runtime-version``).
SDK_PLATFORM: tuple[tuple[str, str], ...] = (
    ("x-stainless-os", "Linux"), ("x-stainless-arch", "x64"), ("x-stainless-runtime", "node"),
    ("x-stainless-runtime-version", "v24.19.0"))
#: pi-ai API -> the dsh-audit adapter that renders it (for a renderer's mismatch hint).
_API_ADAPTERS = {"anthropic-messages": "anthropic", "openai-completions": "openai", "openai-responses": "responses"}
THINKING_LEVELS = ("off", "minimal", "low", "medium", "high", "xhigh", "max")
CONTEXT_SAFETY_TOKENS = 4096
#: DSH's default ``maxRequestImageBytes`` of a pi-ai route (``llm-pi-ai/src/config.ts``, 20 MiB).
PI_MAX_REQUEST_IMAGE_BYTES = 20 * 1024 * 1024


def _frozen_map(value: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    return None if value is None else MappingProxyType(dict(value))


@dataclass(frozen=True, slots=True)
class RouteProfile:
    """A route's stream settings from DSH's route configuration (``providers.<id>``), which DSH's
    ``llm-pi-ai/src/adapter.ts`` (``profileOptions``, ``requestHeaders``) hands to pi-ai on every
    call of the route and the log does not record.

    Attributes:
        reasoning: ``reasoning``, the effort used when a call names none (title and compaction
            calls, a loop header without ``reasoningEffort``).
        cache_retention: ``cacheRetention`` (``none``, ``short``, ``long``); None: pi-ai's ``short``.
        thinking_budgets: ``thinkingBudgets`` by level (``minimal`` .. ``high``), laid over pi-ai's.
        headers: ``headers``, in file order, without DSH's reserved attribution names.
        max_request_image_bytes: ``maxRequestImageBytes``, the bound on a request's base64 image
            payload past which DSH replaces the oldest images; None: DSH's 20 MiB.
    """

    reasoning: str | None = None
    cache_retention: str | None = None
    thinking_budgets: Mapping[str, int] | None = None
    headers: tuple[tuple[str, str], ...] = ()
    max_request_image_bytes: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "thinking_budgets", _frozen_map(self.thinking_budgets))


@dataclass(frozen=True, slots=True)
class PiModel:
    """The facts pi-ai knows about one route/model and DSH never logs.

    Attributes:
        provider: the DSH route key (``anthropic``, ``local-openai``); pi-ai's ``model.provider``.
        id: the model id sent as ``model``.
        api: ``anthropic-messages`` or ``openai-completions``.
        base_url: the endpoint base; its path prefixes the request path, and for
            ``openai-completions`` its host drives pi-ai's compat detection.
        context_window: catalog or declared context window (for the ``max_tokens`` clamp).
        max_tokens: catalog or declared output capability (the cap when DSH passes none).
        reasoning: whether the model reasons at all.
        thinking_level_map: pi-ai's ``thinkingLevelMap`` (level -> wire value, ``None`` =
            unsupported); ``None`` when the model has none.
        input: input modalities.
        compat: pi-ai ``model.compat`` switches, by their pi-ai names.
        profile: the route's stream settings from the route file (:class:`RouteProfile`); None
            when it sets none.
    """

    provider: str
    id: str
    api: str
    base_url: str
    context_window: int
    max_tokens: int
    reasoning: bool
    thinking_level_map: Mapping[str, str | None] | None = None
    input: tuple[str, ...] = ("text",)
    compat: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    profile: RouteProfile | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "thinking_level_map", _frozen_map(self.thinking_level_map))
        object.__setattr__(self, "compat", _frozen_map(self.compat) or MappingProxyType({}))

    def pins(self, level: str) -> bool:
        """Whether ``thinking_level_map`` marks ``level`` unsupported (maps it to ``None``)."""
        levels = self.thinking_level_map or {}
        return level in levels and levels[level] is None

    def supported_levels(self) -> tuple[str, ...]:
        """pi-ai ``getSupportedThinkingLevels``: ``xhigh``/``max`` only when mapped."""
        if not self.reasoning:
            return ("off",)
        levels = self.thinking_level_map or {}
        out = []
        for level in THINKING_LEVELS:
            if self.pins(level):
                continue
            if level in ("xhigh", "max") and level not in levels:
                continue
            out.append(level)
        return tuple(out)


# Compat switches and thinking-level maps the catalog entries below share (pi-ai 0.82.1 JSON, verbatim).
_NO_OFF_XHIGH_MAX = {"off": None, "xhigh": "xhigh", "max": "max"}
_ADAPTIVE = {"forceAdaptiveThinking": True, "supportsStrictTools": True}
_STRICT = {"supportsStrictTools": True}
_MAX = {"max": "max"}
_XHIGH_MAX = {"xhigh": "xhigh", "max": "max"}
_ADAPTIVE_NO_TEMPERATURE = {"forceAdaptiveThinking": True, "supportsTemperature": False,
                            "supportsStrictTools": True}
_DEEPSEEK_LEVELS = {"minimal": None, "low": None, "medium": None, "high": "high", "max": "max"}
_DEEPSEEK = {"supportsStore": False, "supportsDeveloperRole": False,
             "requiresReasoningContentOnAssistantMessages": True, "thinkingFormat": "deepseek"}
_OPENROUTER_ANTHROPIC = {"thinkingFormat": "openrouter", "cacheControlFormat": "anthropic"}
_OPENROUTER_DEEPSEEK = {"supportsDeveloperRole": False, "thinkingFormat": "openrouter"}
_OPENROUTER_DEEPSEEK_LEVELS = {"minimal": None, "low": None, "medium": None, "high": "high", "max": None,
                               "xhigh": "xhigh"}
_OPENROUTER_DEEPSEEK_V4 = {"supportsDeveloperRole": False, "thinkingFormat": "openrouter",
                           "requiresReasoningContentOnAssistantMessages": True}
_OPENROUTER = {"thinkingFormat": "openrouter"}
_OPENROUTER_NO_DEVELOPER = {"supportsDeveloperRole": False, "thinkingFormat": "openrouter"}
_OPENROUTER_ANTHROPIC_NO_DEVELOPER = {"supportsDeveloperRole": False, "thinkingFormat": "openrouter",
                                      "cacheControlFormat": "anthropic"}
_XHIGH = {"xhigh": "xhigh"}
_XHIGH_FROM_MEDIUM = {"xhigh": "xhigh", "off": None, "minimal": None, "low": None}
# pi-ai 0.82.1 ``dist/providers/data/openai.json`` (every model ``openai-responses``): thinking-level
# maps and compat switches, verbatim.
_GPT5_LEVELS = {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": None,
                "max": None}
_NO_OFF = {"off": None}
_HIGH_ONLY = {"off": None, "minimal": None, "low": None, "medium": None, "high": "high", "xhigh": None, "max": None}
_NONE_TO_HIGH = {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None,
                 "max": None}
_NONE_TO_XHIGH = {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh",
                  "max": None}
_MEDIUM_XHIGH = {"off": None, "minimal": None, "low": None, "medium": "medium", "high": None, "xhigh": "xhigh",
                 "max": None}
_MEDIUM_TO_XHIGH = {"off": None, "minimal": None, "low": None, "medium": "medium", "high": "high", "xhigh": "xhigh",
                    "max": None}
_NO_OFF_XHIGH = {"off": None, "xhigh": "xhigh"}
_LOW_TO_XHIGH = {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh",
                 "max": None}
_NONE_TO_MAX = {"off": "none", "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh",
                "max": "max"}
_MINIMAL_TO_XHIGH = {"off": None, "minimal": "minimal", "low": "low", "medium": "medium", "high": "high",
                     "xhigh": "xhigh", "max": None}
_LOW_TO_HIGH = {"off": None, "minimal": None, "low": "low", "medium": "medium", "high": "high", "xhigh": None,
                "max": None}
_OAI_STRICT = {"supportsStrictMode": True}
_OAI_GRAMMAR = {"supportsStrictMode": True, "supportsOpenAIGrammarTools": True}
_OAI_TOOL_SEARCH = {"supportsStrictMode": True, "supportsOpenAIGrammarTools": True, "supportsToolSearch": True}
_OAI_EXPLICIT_CACHE = {"supportsStrictMode": True, "supportsOpenAIGrammarTools": True, "supportsToolSearch": True,
                       "supportsExplicitPromptCacheMode": True}
_T, _TI = ("text",), ("text", "image")
#: The base URL pi-ai 0.82.1's catalog gives each of these providers (``dist/providers/anthropic.js:38``,
#: ``deepseek.js:9``, ``openrouter.js:10``, ``openai.js:9``): DSH's ``resolveRouteModels`` falls back
#: to it for a model the route lists without a ``baseURL`` (``llm-pi-ai/src/catalog.ts:805, 863``).
CATALOG_BASE_URLS: Mapping[str, str] = MappingProxyType({
    "anthropic": "https://api.anthropic.com", "deepseek": "https://api.deepseek.com",
    "openrouter": "https://openrouter.ai/api/v1", "openai": "https://api.openai.com/v1"})
_APIS = {"anthropic": "anthropic-messages", "deepseek": "openai-completions", "openrouter": "openai-completions",
         "openai": "openai-responses"}

#: (provider, id, contextWindow, maxTokens, reasoning, input, thinkingLevelMap, compat), as pi-ai
#: 0.82.1 ships them in ``dist/providers/data/anthropic.json`` (every model), ``deepseek.json``
#: (every model), ``openrouter.json`` (every model, all 276 ``openai-completions``, base URL
#: ``https://openrouter.ai/api/v1``) and ``openai.json`` (every model, all 38 ``openai-responses``,
#: base URL ``https://api.openai.com/v1``). ``thinkingLevelMap`` is the entry's own (None where it
#: has none); pi-ai reads it as it is (``dist/models.js`` ``getSupportedThinkingLevels``,
#: :meth:`PiModel.supported_levels`).
_CATALOG: tuple[tuple[str, str, int, int, bool, tuple[str, ...], Mapping[str, str | None] | None,
                      Mapping[str, Any]], ...] = (
    ("anthropic", "claude-fable-5", 1_000_000, 128_000, True, _TI, _NO_OFF_XHIGH_MAX, _ADAPTIVE),
    ("anthropic", "claude-haiku-4-5", 200_000, 64_000, True, _TI, None, _STRICT),
    ("anthropic", "claude-haiku-4-5-20251001", 200_000, 64_000, True, _TI, None, _STRICT),
    ("anthropic", "claude-opus-4-1", 200_000, 32_000, True, _TI, None, _STRICT),
    ("anthropic", "claude-opus-4-1-20250805", 200_000, 32_000, True, _TI, None, _STRICT),
    ("anthropic", "claude-opus-4-5", 200_000, 64_000, True, _TI, None, _STRICT),
    ("anthropic", "claude-opus-4-5-20251101", 200_000, 64_000, True, _TI, None, _STRICT),
    ("anthropic", "claude-opus-4-6", 1_000_000, 128_000, True, _TI, _MAX, _ADAPTIVE),
    ("anthropic", "claude-opus-4-7", 1_000_000, 128_000, True, _TI, _XHIGH_MAX, _ADAPTIVE_NO_TEMPERATURE),
    ("anthropic", "claude-opus-4-8", 1_000_000, 128_000, True, _TI, _XHIGH_MAX, _ADAPTIVE_NO_TEMPERATURE),
    ("anthropic", "claude-opus-5", 1_000_000, 128_000, True, _TI, _XHIGH_MAX, _ADAPTIVE_NO_TEMPERATURE),
    ("anthropic", "claude-sonnet-4-5", 1_000_000, 64_000, True, _TI, None, _STRICT),
    ("anthropic", "claude-sonnet-4-5-20250929", 1_000_000, 64_000, True, _TI, None, _STRICT),
    ("anthropic", "claude-sonnet-4-6", 1_000_000, 128_000, True, _TI, _MAX, _ADAPTIVE),
    ("anthropic", "claude-sonnet-5", 1_000_000, 128_000, True, _TI, _XHIGH_MAX, _ADAPTIVE),
    ("deepseek", "deepseek-v4-flash", 1_000_000, 384_000, True, _T, _DEEPSEEK_LEVELS, _DEEPSEEK),
    ("deepseek", "deepseek-v4-pro", 1_000_000, 384_000, True, _T, _DEEPSEEK_LEVELS, _DEEPSEEK),
    ("openrouter", "ai21/jamba-large-1.7", 256_000, 4_096, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "aion-labs/aion-2.0", 131_072, 32_768, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "aion-labs/aion-3.0", 131_072, 32_768, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "aion-labs/aion-3.0-mini", 131_072, 32_768, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "amazon/nova-2-lite-v1", 1_000_000, 65_535, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "amazon/nova-lite-v1", 300_000, 5_120, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "amazon/nova-micro-v1", 128_000, 5_120, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "amazon/nova-premier-v1", 1_000_000, 32_000, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "amazon/nova-pro-v1", 300_000, 5_120, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "anthropic/claude-3-haiku", 200_000, 4_096, False, _TI, None, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-fable-5", 1_000_000, 128_000, True,
     _TI, _NO_OFF_XHIGH_MAX, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-haiku-4.5", 200_000, 64_000, True, _TI, None, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-opus-4", 200_000, 32_000, True, _TI, None, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-opus-4.1", 200_000, 32_000, True, _TI, None, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-opus-4.5", 200_000, 64_000, True, _TI, None, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-opus-4.6", 1_000_000, 128_000, True, _TI, _MAX, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-opus-4.7", 1_000_000, 128_000, True, _TI, _XHIGH_MAX, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-opus-4.7-fast", 1_000_000, 128_000, True,
     _TI, _XHIGH_MAX, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-opus-4.8", 1_000_000, 128_000, True, _TI, _XHIGH_MAX, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-opus-4.8-fast", 1_000_000, 128_000, True,
     _TI, _XHIGH_MAX, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-opus-5", 1_000_000, 128_000, True, _TI, _XHIGH_MAX, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-opus-5-fast", 1_000_000, 128_000, True, _TI, _XHIGH_MAX, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-sonnet-4", 200_000, 64_000, True, _TI, None, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-sonnet-4.5", 1_000_000, 64_000, True, _TI, None, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-sonnet-4.6", 1_000_000, 128_000, True, _TI, _MAX, _OPENROUTER_ANTHROPIC),
    ("openrouter", "anthropic/claude-sonnet-5", 1_000_000, 128_000, True, _TI, _XHIGH_MAX, _OPENROUTER_ANTHROPIC),
    ("openrouter", "arcee-ai/trinity-large-thinking", 262_144, 262_144, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "arcee-ai/virtuoso-large", 131_072, 64_000, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "auto", 2_000_000, 30_000, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "bytedance-seed/seed-1.6", 262_144, 32_768, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "bytedance-seed/seed-1.6-flash", 262_144, 32_768, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "bytedance-seed/seed-2.0-lite", 262_144, 131_072, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "bytedance-seed/seed-2.0-mini", 262_144, 131_072, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "cohere/command-r-08-2024", 128_000, 4_000, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "cohere/command-r-plus-08-2024", 128_000, 4_000, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "cohere/north-mini-code:free", 256_000, 64_000, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "deepseek/deepseek-chat", 128_000, 16_000, False, _T, None, _OPENROUTER_DEEPSEEK),
    ("openrouter", "deepseek/deepseek-chat-v3-0324", 163_840, 65_536, False, _T, None, _OPENROUTER_DEEPSEEK),
    ("openrouter", "deepseek/deepseek-chat-v3.1", 163_840, 32_768, True, _T, None, _OPENROUTER_DEEPSEEK),
    ("openrouter", "deepseek/deepseek-r1", 64_000, 16_000, True, _T, None, _OPENROUTER_DEEPSEEK),
    ("openrouter", "deepseek/deepseek-r1-0528", 163_840, 32_768, True, _T, None, _OPENROUTER_DEEPSEEK),
    ("openrouter", "deepseek/deepseek-v3.1-terminus", 131_072, 32_768, True, _T, None, _OPENROUTER_DEEPSEEK),
    ("openrouter", "deepseek/deepseek-v3.2", 163_840, 65_536, True, _T, None, _OPENROUTER_DEEPSEEK),
    ("openrouter", "deepseek/deepseek-v3.2-exp", 163_840, 65_536, True, _T, None, _OPENROUTER_DEEPSEEK),
    ("openrouter", "deepseek/deepseek-v4-flash", 1_048_575, 4_096, True,
     _T, _OPENROUTER_DEEPSEEK_LEVELS, _OPENROUTER_DEEPSEEK_V4),
    ("openrouter", "deepseek/deepseek-v4-pro", 1_048_576, 384_000, True,
     _T, _OPENROUTER_DEEPSEEK_LEVELS, _OPENROUTER_DEEPSEEK_V4),
    ("openrouter", "google/gemini-2.5-flash", 1_048_576, 65_535, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemini-2.5-flash-lite", 1_048_576, 65_535, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemini-2.5-pro", 1_048_576, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemini-2.5-pro-preview", 1_048_576, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemini-2.5-pro-preview-05-06", 1_048_576, 65_535, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemini-3-flash-preview", 1_048_576, 65_535, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemini-3-pro-image", 65_536, 32_768, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemini-3.1-flash-lite", 1_048_576, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemini-3.1-flash-lite-preview", 1_048_576, 65_536, True,
     _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemini-3.1-pro-preview", 1_048_576, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemini-3.1-pro-preview-customtools", 1_048_576, 65_536, True,
     _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemini-3.5-flash", 1_048_576, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemini-3.5-flash-lite", 1_048_576, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemini-3.6-flash", 1_048_576, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemma-3-12b-it", 131_072, 16_384, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemma-3-27b-it", 131_072, 131_072, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemma-4-26b-a4b-it", 262_144, 262_144, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemma-4-26b-a4b-it:free", 131_072, 32_768, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemma-4-31b-it", 262_144, 262_144, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "google/gemma-4-31b-it:free", 262_144, 32_768, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "ibm-granite/granite-4.1-8b", 131_072, 131_072, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "inception/mercury-2", 128_000, 50_000, True, _T, _NO_OFF, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "inclusionai/ling-2.6-1t", 262_144, 32_768, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "inclusionai/ling-2.6-flash", 262_144, 32_768, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "inclusionai/ling-3.0-flash:free", 262_144, 32_768, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "inclusionai/ring-2.6-1t", 262_144, 65_536, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "kwaipilot/kat-coder-air-v2.5", 256_000, 80_000, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "kwaipilot/kat-coder-pro-v2", 256_000, 80_000, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "kwaipilot/kat-coder-pro-v2.5", 256_000, 80_000, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "meituan/longcat-2.0", 1_048_756, 262_144, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "meta-llama/llama-3.1-70b-instruct", 131_072, 16_384, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "meta-llama/llama-3.1-8b-instruct", 131_072, 131_072, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "meta-llama/llama-3.3-70b-instruct", 131_072, 128_000, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "meta-llama/llama-4-maverick", 1_048_576, 16_384, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "meta-llama/llama-4-scout", 327_680, 16_384, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "meta/muse-spark-1.1", 1_048_576, 4_096, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "minimax/minimax-m1", 1_000_000, 40_000, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "minimax/minimax-m2", 204_800, 131_072, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "minimax/minimax-m2.1", 204_800, 131_072, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "minimax/minimax-m2.5", 196_608, 196_608, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "minimax/minimax-m2.7", 196_608, 131_072, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "minimax/minimax-m3", 524_288, 512_000, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/codestral-2508", 256_000, 4_096, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/devstral-2512", 262_144, 4_096, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/ministral-14b-2512", 262_144, 4_096, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/ministral-3b-2512", 131_072, 4_096, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/ministral-8b-2512", 262_144, 4_096, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/mistral-large", 128_000, 4_096, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/mistral-large-2407", 131_072, 4_096, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/mistral-large-2512", 262_144, 4_096, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/mistral-medium-3", 131_072, 4_096, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/mistral-medium-3-5", 262_144, 4_096, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/mistral-medium-3.1", 131_072, 4_096, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/mistral-nemo", 131_072, 16_384, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/mistral-saba", 32_768, 4_096, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/mistral-small-2603", 262_144, 4_096, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/mistral-small-3.2-24b-instruct", 131_072, 4_096, False,
     _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/mixtral-8x22b-instruct", 65_536, 4_096, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "mistralai/voxtral-small-24b-2507", 32_000, 4_096, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "moonshotai/kimi-k2", 131_072, 100_352, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "moonshotai/kimi-k2-0905", 262_144, 100_352, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "moonshotai/kimi-k2-thinking", 262_144, 100_352, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "moonshotai/kimi-k2.5", 262_144, 4_096, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "moonshotai/kimi-k2.6", 262_144, 262_144, True, _TI, None, _OPENROUTER_DEEPSEEK_V4),
    ("openrouter", "moonshotai/kimi-k2.7-code", 262_144, 262_144, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "moonshotai/kimi-k3", 1_048_576, 131_072, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "nex-agi/nex-n2-mini", 262_144, 262_144, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "nex-agi/nex-n2-pro", 262_144, 262_144, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "nvidia/nemotron-3-nano-30b-a3b", 262_144, 228_000, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "nvidia/nemotron-3-nano-30b-a3b:free", 256_000, 4_096, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "nvidia/nemotron-3-nano-omni-30b-a3b-reasoning:free", 256_000, 65_536, True,
     _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "nvidia/nemotron-3-super-120b-a12b", 262_144, 16_384, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "nvidia/nemotron-3-super-120b-a12b:free", 262_144, 262_144, True,
     _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "nvidia/nemotron-3-ultra-550b-a55b", 512_288, 4_096, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "nvidia/nemotron-3-ultra-550b-a55b:free", 1_000_000, 65_536, True,
     _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "nvidia/nemotron-nano-12b-v2-vl:free", 128_000, 128_000, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "nvidia/nemotron-nano-9b-v2:free", 128_000, 4_096, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "openai/gpt-3.5-turbo", 16_385, 4_096, False, _T, None, _OPENROUTER),
    ("openrouter", "openai/gpt-3.5-turbo-0613", 4_095, 4_096, False, _T, None, _OPENROUTER),
    ("openrouter", "openai/gpt-3.5-turbo-16k", 16_385, 4_096, False, _T, None, _OPENROUTER),
    ("openrouter", "openai/gpt-4", 8_191, 4_096, False, _T, None, _OPENROUTER),
    ("openrouter", "openai/gpt-4-turbo", 128_000, 4_096, False, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-4-turbo-preview", 128_000, 4_096, False, _T, None, _OPENROUTER),
    ("openrouter", "openai/gpt-4.1", 1_047_576, 32_768, False, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-4.1-mini", 1_047_576, 32_768, False, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-4.1-nano", 1_047_576, 32_768, False, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-4o", 128_000, 16_384, False, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-4o-2024-05-13", 128_000, 4_096, False, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-4o-2024-08-06", 128_000, 16_384, False, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-4o-2024-11-20", 128_000, 16_384, False, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-4o-mini", 128_000, 16_384, False, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-4o-mini-2024-07-18", 128_000, 16_384, False, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-5", 400_000, 128_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-5-codex", 400_000, 128_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-5-mini", 400_000, 128_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-5-nano", 400_000, 128_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-5-pro", 400_000, 128_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-5.1", 400_000, 128_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-5.1-chat", 128_000, 16_384, False, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-5.1-codex", 400_000, 128_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-5.1-codex-max", 400_000, 128_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-5.1-codex-mini", 400_000, 100_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-5.2", 400_000, 128_000, True, _TI, _XHIGH, _OPENROUTER),
    ("openrouter", "openai/gpt-5.2-chat", 128_000, 16_384, False, _TI, _XHIGH, _OPENROUTER),
    ("openrouter", "openai/gpt-5.2-codex", 400_000, 128_000, True, _TI, _XHIGH, _OPENROUTER),
    ("openrouter", "openai/gpt-5.2-pro", 400_000, 128_000, True, _TI, _XHIGH, _OPENROUTER),
    ("openrouter", "openai/gpt-5.3-chat", 128_000, 16_384, False, _TI, _XHIGH, _OPENROUTER),
    ("openrouter", "openai/gpt-5.3-codex", 400_000, 128_000, True, _TI, _XHIGH, _OPENROUTER),
    ("openrouter", "openai/gpt-5.4", 1_050_000, 128_000, True, _TI, _XHIGH, _OPENROUTER),
    ("openrouter", "openai/gpt-5.4-mini", 400_000, 128_000, True, _TI, _XHIGH, _OPENROUTER),
    ("openrouter", "openai/gpt-5.4-nano", 400_000, 128_000, True, _TI, _XHIGH, _OPENROUTER),
    ("openrouter", "openai/gpt-5.4-pro", 1_050_000, 128_000, True, _TI, _XHIGH, _OPENROUTER),
    ("openrouter", "openai/gpt-5.5", 1_050_000, 128_000, True, _TI, _XHIGH, _OPENROUTER),
    ("openrouter", "openai/gpt-5.5-pro", 1_050_000, 128_000, True, _TI, _XHIGH_FROM_MEDIUM, _OPENROUTER),
    ("openrouter", "openai/gpt-5.6-luna", 1_050_000, 128_000, True, _TI, _XHIGH_MAX, _OPENROUTER),
    ("openrouter", "openai/gpt-5.6-luna-pro", 1_050_000, 128_000, True, _TI, _XHIGH_MAX, _OPENROUTER),
    ("openrouter", "openai/gpt-5.6-sol", 1_050_000, 128_000, True, _TI, _XHIGH_MAX, _OPENROUTER),
    ("openrouter", "openai/gpt-5.6-sol-pro", 1_050_000, 128_000, True, _TI, _XHIGH_MAX, _OPENROUTER),
    ("openrouter", "openai/gpt-5.6-terra", 1_050_000, 128_000, True, _TI, _XHIGH_MAX, _OPENROUTER),
    ("openrouter", "openai/gpt-5.6-terra-pro", 1_050_000, 128_000, True, _TI, _XHIGH_MAX, _OPENROUTER),
    ("openrouter", "openai/gpt-audio", 128_000, 16_384, False, _T, None, _OPENROUTER),
    ("openrouter", "openai/gpt-audio-mini", 128_000, 16_384, False, _T, None, _OPENROUTER),
    ("openrouter", "openai/gpt-chat-latest", 400_000, 128_000, False, _TI, None, _OPENROUTER),
    ("openrouter", "openai/gpt-oss-120b", 131_072, 131_072, True, _T, None, _OPENROUTER),
    ("openrouter", "openai/gpt-oss-20b", 131_072, 131_072, True, _T, None, _OPENROUTER),
    ("openrouter", "openai/gpt-oss-20b:free", 131_072, 32_768, True, _T, None, _OPENROUTER),
    ("openrouter", "openai/gpt-oss-safeguard-20b", 131_072, 65_536, True, _T, None, _OPENROUTER),
    ("openrouter", "openai/o1", 200_000, 100_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openai/o3", 200_000, 100_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openai/o3-deep-research", 200_000, 100_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openai/o3-mini", 200_000, 100_000, True, _T, None, _OPENROUTER),
    ("openrouter", "openai/o3-mini-high", 200_000, 100_000, True, _T, None, _OPENROUTER),
    ("openrouter", "openai/o3-pro", 200_000, 100_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openai/o4-mini", 200_000, 100_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openai/o4-mini-deep-research", 200_000, 100_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openai/o4-mini-high", 200_000, 100_000, True, _TI, None, _OPENROUTER),
    ("openrouter", "openrouter/auto", 2_000_000, 4_096, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "openrouter/auto-beta", 2_000_000, 4_096, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "openrouter/free", 200_000, 4_096, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "openrouter/fusion", 1_000_000, 30_000, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "poolside/laguna-m.1", 262_144, 32_768, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "poolside/laguna-m.1:free", 262_144, 32_768, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "poolside/laguna-s-2.1", 1_048_576, 131_072, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "poolside/laguna-s-2.1:free", 262_144, 32_768, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "poolside/laguna-xs-2.1", 262_144, 32_768, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "poolside/laguna-xs-2.1:free", 262_144, 32_768, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen-2.5-72b-instruct", 32_768, 16_384, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen-2.5-7b-instruct", 32_768, 32_768, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen-plus", 1_000_000, 32_768, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen-plus-2025-07-28", 1_000_000, 32_768, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen-plus-2025-07-28:thinking", 1_000_000, 32_768, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-14b", 131_072, 8_192, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-235b-a22b", 131_072, 8_192, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-235b-a22b-2507", 262_144, 16_384, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-235b-a22b-thinking-2507", 131_072, 32_768, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-30b-a3b", 131_072, 8_192, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-30b-a3b-instruct-2507", 262_144, 4_096, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-30b-a3b-thinking-2507", 81_920, 32_768, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-32b", 40_960, 16_384, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-8b", 131_072, 8_192, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-coder", 262_144, 65_536, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-coder-30b-a3b-instruct", 160_000, 32_768, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-coder-flash", 1_000_000, 65_536, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-coder-next", 262_144, 262_144, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-coder-plus", 1_000_000, 65_536, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-max", 262_144, 32_768, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-max-thinking", 262_144, 32_768, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-next-80b-a3b-instruct", 262_144, 262_144, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-next-80b-a3b-thinking", 131_072, 32_768, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-vl-235b-a22b-instruct", 131_072, 32_768, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-vl-235b-a22b-thinking", 131_072, 32_768, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-vl-30b-a3b-instruct", 262_144, 16_384, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-vl-30b-a3b-thinking", 131_072, 32_768, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-vl-32b-instruct", 131_072, 32_768, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-vl-8b-instruct", 131_072, 32_768, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3-vl-8b-thinking", 131_072, 32_768, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3.5-122b-a10b", 262_144, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3.5-27b", 262_144, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3.5-35b-a3b", 262_144, 262_144, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3.5-397b-a17b", 262_144, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3.5-9b", 262_144, 262_144, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3.5-flash-02-23", 1_000_000, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3.5-plus-02-15", 1_000_000, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3.5-plus-20260420", 1_000_000, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3.6-27b", 131_072, 131_072, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3.6-35b-a3b", 262_144, 262_144, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3.6-flash", 1_000_000, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3.6-max-preview", 262_144, 65_536, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3.6-plus", 1_000_000, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3.7-max", 1_000_000, 65_536, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "qwen/qwen3.7-plus", 1_000_000, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "rekaai/reka-edge", 16_384, 16_384, False, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "relace/relace-search", 256_000, 128_000, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "sakana/fugu-ultra", 1_000_000, 128_000, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "sao10k/l3.1-euryale-70b", 131_072, 16_384, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "stepfun/step-3.5-flash", 262_144, 65_536, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "stepfun/step-3.7-flash", 256_000, 256_000, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "tencent/hy3", 262_144, 128_000, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "tencent/hy3-preview", 262_144, 4_096, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "thedrummer/unslopnemo-12b", 32_768, 32_768, False, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "thinkingmachines/inkling", 524_288, 4_096, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "upstage/solar-pro-3", 128_000, 4_096, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "x-ai/grok-4.20", 2_000_000, 4_096, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "x-ai/grok-4.3", 1_000_000, 4_096, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "x-ai/grok-4.5", 500_000, 4_096, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "x-ai/grok-build-0.1", 256_000, 4_096, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "xiaomi/mimo-v2.5", 1_048_576, 131_072, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "xiaomi/mimo-v2.5-pro", 1_048_576, 131_072, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "z-ai/glm-4.5", 131_072, 98_304, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "z-ai/glm-4.5-air", 131_072, 98_304, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "z-ai/glm-4.5v", 65_536, 16_384, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "z-ai/glm-4.6", 202_752, 131_072, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "z-ai/glm-4.6v", 131_072, 32_768, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "z-ai/glm-4.7", 202_752, 131_072, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "z-ai/glm-4.7-flash", 202_752, 16_384, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "z-ai/glm-5", 204_800, 131_072, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "z-ai/glm-5-turbo", 202_752, 131_072, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "z-ai/glm-5.1", 200_000, 128_000, True, _T, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "z-ai/glm-5.2", 1_048_576, 131_072, True, _T, _XHIGH, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "z-ai/glm-5v-turbo", 202_752, 131_072, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "~anthropic/claude-fable-latest", 1_000_000, 128_000, True,
     _TI, None, _OPENROUTER_ANTHROPIC_NO_DEVELOPER),
    ("openrouter", "~anthropic/claude-haiku-latest", 200_000, 64_000, True,
     _TI, None, _OPENROUTER_ANTHROPIC_NO_DEVELOPER),
    ("openrouter", "~anthropic/claude-opus-latest", 1_000_000, 128_000, True,
     _TI, None, _OPENROUTER_ANTHROPIC_NO_DEVELOPER),
    ("openrouter", "~anthropic/claude-sonnet-latest", 1_000_000, 128_000, True,
     _TI, None, _OPENROUTER_ANTHROPIC_NO_DEVELOPER),
    ("openrouter", "~google/gemini-flash-latest", 1_048_576, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "~google/gemini-pro-latest", 1_048_576, 65_536, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "~moonshotai/kimi-latest", 1_048_576, 131_072, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "~openai/gpt-latest", 1_050_000, 128_000, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "~openai/gpt-mini-latest", 400_000, 128_000, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openrouter", "~x-ai/grok-latest", 500_000, 4_096, True, _TI, None, _OPENROUTER_NO_DEVELOPER),
    ("openai", "gpt-4", 8_192, 8_192, False, _T, None, _OAI_STRICT),
    ("openai", "gpt-4-turbo", 128_000, 4_096, False, _TI, None, _OAI_STRICT),
    ("openai", "gpt-4.1", 1_047_576, 32_768, False, _TI, None, _OAI_STRICT),
    ("openai", "gpt-4.1-mini", 1_047_576, 32_768, False, _TI, None, _OAI_STRICT),
    ("openai", "gpt-4.1-nano", 1_047_576, 32_768, False, _TI, None, _OAI_STRICT),
    ("openai", "gpt-4o", 128_000, 16_384, False, _TI, None, _OAI_STRICT),
    ("openai", "gpt-4o-2024-05-13", 128_000, 4_096, False, _TI, None, _OAI_STRICT),
    ("openai", "gpt-4o-2024-08-06", 128_000, 16_384, False, _TI, None, _OAI_STRICT),
    ("openai", "gpt-4o-2024-11-20", 128_000, 16_384, False, _TI, None, _OAI_STRICT),
    ("openai", "gpt-4o-mini", 128_000, 16_384, False, _TI, None, _OAI_STRICT),
    ("openai", "gpt-5", 400_000, 128_000, True, _TI, _GPT5_LEVELS, _OAI_GRAMMAR),
    ("openai", "gpt-5-chat-latest", 128_000, 16_384, False, _TI, _NO_OFF, _OAI_GRAMMAR),
    ("openai", "gpt-5-mini", 400_000, 128_000, True, _TI, _GPT5_LEVELS, _OAI_GRAMMAR),
    ("openai", "gpt-5-nano", 400_000, 128_000, True, _TI, _GPT5_LEVELS, _OAI_GRAMMAR),
    ("openai", "gpt-5-pro", 400_000, 128_000, True, _TI, _HIGH_ONLY, _OAI_GRAMMAR),
    ("openai", "gpt-5.1", 400_000, 128_000, True, _TI, _NONE_TO_HIGH, _OAI_GRAMMAR),
    ("openai", "gpt-5.2", 400_000, 128_000, True, _TI, _NONE_TO_XHIGH, _OAI_GRAMMAR),
    ("openai", "gpt-5.2-chat-latest", 128_000, 16_384, True, _TI, _MEDIUM_XHIGH, _OAI_GRAMMAR),
    ("openai", "gpt-5.2-pro", 400_000, 128_000, True, _TI, _MEDIUM_TO_XHIGH, _OAI_GRAMMAR),
    ("openai", "gpt-5.3-chat-latest", 128_000, 16_384, False, _TI, _NO_OFF_XHIGH, _OAI_GRAMMAR),
    ("openai", "gpt-5.3-codex", 400_000, 128_000, True, _TI, _NONE_TO_XHIGH, _OAI_GRAMMAR),
    ("openai", "gpt-5.3-codex-spark", 128_000, 32_000, True, _TI, _LOW_TO_XHIGH, _OAI_GRAMMAR),
    ("openai", "gpt-5.4", 272_000, 128_000, True, _TI, _NONE_TO_XHIGH, _OAI_TOOL_SEARCH),
    ("openai", "gpt-5.4-mini", 400_000, 128_000, True, _TI, _NONE_TO_XHIGH, _OAI_TOOL_SEARCH),
    ("openai", "gpt-5.4-nano", 400_000, 128_000, True, _TI, _NONE_TO_XHIGH, _OAI_GRAMMAR),
    ("openai", "gpt-5.4-pro", 1_050_000, 128_000, True, _TI, _MEDIUM_TO_XHIGH, _OAI_TOOL_SEARCH),
    ("openai", "gpt-5.5", 272_000, 128_000, True, _TI, _NONE_TO_XHIGH, _OAI_TOOL_SEARCH),
    ("openai", "gpt-5.5-pro", 1_050_000, 128_000, True, _TI, _MEDIUM_TO_XHIGH, _OAI_GRAMMAR),
    ("openai", "gpt-5.6-luna", 272_000, 128_000, True, _TI, _NONE_TO_MAX, _OAI_EXPLICIT_CACHE),
    ("openai", "gpt-5.6-sol", 272_000, 128_000, True, _TI, _NONE_TO_MAX, _OAI_EXPLICIT_CACHE),
    ("openai", "gpt-5.6-terra", 272_000, 128_000, True, _TI, _NONE_TO_MAX, _OAI_EXPLICIT_CACHE),
    ("openai", "gpt-realtime-2.1", 128_000, 32_000, True, _TI, _MINIMAL_TO_XHIGH, _OAI_STRICT),
    ("openai", "o1", 200_000, 100_000, True, _TI, _LOW_TO_HIGH, _OAI_STRICT),
    ("openai", "o1-pro", 200_000, 100_000, True, _TI, _LOW_TO_HIGH, _OAI_STRICT),
    ("openai", "o3", 200_000, 100_000, True, _TI, _LOW_TO_HIGH, _OAI_STRICT),
    ("openai", "o3-mini", 200_000, 100_000, True, _T, _LOW_TO_HIGH, _OAI_STRICT),
    ("openai", "o3-pro", 200_000, 100_000, True, _TI, _LOW_TO_HIGH, _OAI_STRICT),
    ("openai", "o4-mini", 200_000, 100_000, True, _TI, _LOW_TO_HIGH, _OAI_STRICT),
)


def _catalog_model(provider: str, model_id: str, window: int, max_tokens: int, reasoning: bool,
                   modalities: tuple[str, ...], levels: Mapping[str, str | None] | None,
                   compat: Mapping[str, Any]) -> PiModel:
    return PiModel(provider=provider, id=model_id, api=_APIS[provider], base_url=CATALOG_BASE_URLS[provider],
                   context_window=window, max_tokens=max_tokens, reasoning=reasoning, thinking_level_map=levels,
                   input=modalities, compat=compat)


#: pi-ai 0.82.1's installed catalog entries for the models DSH users pick on its catalog routes
#: (Claude through ``anthropic``; DeepSeek's own ``deepseek`` route and all 276 of OpenRouter's
#: models through ``openai-completions``; OpenAI's own ``openai`` route, which
#: speaks ``openai-responses``, :mod:`dsh_audit.wire._responses`). Hand-declared routes have no catalog
#: entry: their facts come from DSH's route configuration (``--routes``,
#: :func:`dsh_audit.wire.load_routes`).
BUILTIN_MODELS: Mapping[tuple[str, str], PiModel] = MappingProxyType({
    (row[0], row[1]): _catalog_model(*row) for row in _CATALOG})


def resolve_model(provider: str | None, model_id: str | None,
                  models: Mapping[tuple[str, str], PiModel] | None = None) -> PiModel:
    """The :class:`PiModel` for a route/model pair: caller's ``models`` first, then built-ins.

    Raises:
        RenderError: neither knows the pair (catalog facts are not in the log): on a catalog route,
            a model pi-ai's catalog does not list; on another, a model no route file describes.
    """
    if isinstance(provider, str) and isinstance(model_id, str):
        for table in (models or {}, BUILTIN_MODELS):
            found = table.get((provider, model_id))
            if found is not None:
                return found
    if provider in _APIS:  # a catalog route: pi-ai's catalog, not the route configuration, lacks the model
        raise RenderError(f"no pi-ai model facts for {provider}/{model_id}: pi-ai {PI_AI_VERSION}'s catalog has no "
                          f"such {provider} model, and the log does not record a model's facts", dsh_code=None,
                          hint=f"declare the model with --routes FILE (DSH's llm-pi-ai route configuration: "
                               f"providers.{provider}.models, with its contextWindow, maxTokens and reasoningEfforts)")
    raise RenderError(f"no pi-ai model facts for {provider}/{model_id}: a hand-declared route's models are "
                      "described by DSH's route configuration, which the log does not record", dsh_code=None,
                      hint="pass --routes FILE (DSH's llm-pi-ai route configuration)")


# --- the call config DSH hands to pi-ai ---------------------------------------------------------


def _logged_window(request: Any, model: PiModel) -> PiModel:
    """``model`` with the context window DSH logged for this call, when the log has one.

    DSH's pi-ai adapter writes ``request/context {provider, model, contextWindow}`` from the model
    pi-ai resolved for the call (``llm-pi-ai/src/adapter.ts``: ``contextWindow:
    resolvedModel.contextWindow``), so a route that overrides a catalog model's window (a 16000-token
    route) is visible in the log even without the route configuration. Only a context that names
    the same route and model counts. It wins over a route file (``--routes``): the logged value is
    what DSH used at the time, the route file is the configuration as it is now (the session
    reports a conflict, :func:`dsh_audit.session.window_conflicts`). A title call logs no context
    of its own, and a compaction summarised on another route (``summarizationProvider``) has only
    the loop's; the latest one of its own route before it is lent to it (``extra["routeContext"]``,
    :meth:`dsh_audit.session.RouteEvidence.lend_context`).
    """
    extra = getattr(request, "extra", None)
    for context in (getattr(request, "context", None),
                    extra.get("routeContext") if isinstance(extra, Mapping) else None):
        if not isinstance(context, Mapping):
            continue
        if context.get("provider") != model.provider or context.get("model") != model.id:
            continue  # a compaction summarised on another route: its own route's context, if lent
        window = context.get("contextWindow")
        if not isinstance(window, int) or isinstance(window, bool) or window <= 0 or window == model.context_window:
            return model
        return replace(model, context_window=window)
    return model


@dataclass(frozen=True, slots=True)
class PiCall:
    """The stream options DSH passes to ``streamSimple`` (spec §8.2), for one request."""

    model: PiModel
    reasoning: str | None
    max_tokens: int | None
    temperature: float | None
    cache_retention: str
    session_id: str | None
    thinking_budgets: Mapping[str, int] | None
    headers: tuple[tuple[str, str], ...] = ()
    max_request_image_bytes: int = PI_MAX_REQUEST_IMAGE_BYTES


def request_call(request: Any, *, models: Mapping[tuple[str, str], PiModel] | None = None,
                 profile_reasoning: str | None = None, cache_retention: str | None = None,
                 thinking_budgets: Mapping[str, int] | None = None) -> PiCall:
    """Resolve the model and DSH's stream options for ``request`` (adapter.ts ``stream``).

    Each setting is taken, first match wins, from what the log records, then the caller's explicit
    choice (``profile_reasoning``, ``cache_retention``, ``thinking_budgets``), then the route
    file's profile (:attr:`PiModel.profile`), then pi-ai's default. The effort: the header's
    ``reasoningEffort``; for a title or compaction call (which names none, so DSH's
    ``resolveCallFor`` materialises the route's default) the default a header of the same route
    and model logged as ``adapterDefaults.reasoningEffort`` (``extra["routeDefaultEffort"]``, lent
    by :meth:`dsh_audit.session.RouteEvidence.lend_context`); then the profile's ``reasoning``.

    Raises:
        RenderError: ``stop`` is set (``UNSUPPORTED_OPTION``), or the effort is not one the
            model supports (``UNSUPPORTED_REASONING_EFFORT``), or the model is unknown.
    """
    header = request.header
    if not isinstance(header, Mapping) or not isinstance(header.get("config"), Mapping):
        raise RenderError("no request/header before this request, so there is no call config to render",
                          seq=request.first_chunk_seq)
    config: Mapping[str, Any] = header["config"]
    if request.kind == "compaction":
        # The summarizer builds its own options: the logged route and cap, no effort/temperature/stop.
        logged = request.extra
        config = {"provider": logged.get("provider") or config.get("provider"),
                  "model": logged.get("model") or config.get("model"),
                  **({"maxTokens": logged["maxTokens"]} if logged.get("maxTokens") is not None else {})}
    model = _logged_window(request, resolve_model(config.get("provider"), config.get("model"), models))
    if config.get("stop") is not None:
        raise RenderError("llm-pi-ai does not support a stop option", dsh_code="UNSUPPORTED_OPTION")
    profile = model.profile or RouteProfile()
    effort = config.get("reasoningEffort") or _logged_default_effort(request) or profile_reasoning \
        or profile.reasoning
    if effort is not None and effort not in model.supported_levels():
        raise RenderError(f"pi-ai model {model.provider}/{model.id} does not support reasoning effort "
                          f"{effort!r}", dsh_code="UNSUPPORTED_REASONING_EFFORT")
    # Loop, title and compaction calls all pass the session id (title-llm index.ts, summarizer.ts).
    session_id = request.session_id or None
    return PiCall(model=model, reasoning=None if effort in (None, "off") else effort,
                  max_tokens=config.get("maxTokens"), temperature=config.get("temperature"),
                  cache_retention=cache_retention or profile.cache_retention or "short", session_id=session_id,
                  thinking_budgets=thinking_budgets if thinking_budgets is not None else profile.thinking_budgets,
                  headers=profile.headers,
                  max_request_image_bytes=profile.max_request_image_bytes or PI_MAX_REQUEST_IMAGE_BYTES)


def clamp_level(model: PiModel, level: str) -> str:
    """pi-ai ``clampThinkingLevel`` (``models.js:404-422``), which ``streamSimple`` applies to the
    effort: the level when supported, else the nearest supported one, upwards first."""
    available = model.supported_levels()
    if level in available:
        return level
    if level not in THINKING_LEVELS:
        return available[0] if available else "off"
    index = THINKING_LEVELS.index(level)
    for candidate in (*THINKING_LEVELS[index:], *reversed(THINKING_LEVELS[:index])):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


def _logged_default_effort(request: Any) -> str | None:
    """The route's default effort as the log shows it, for a call that names no effort."""
    if getattr(request, "kind", None) not in ("title", "compaction"):
        return None  # a loop header without an effort is one DSH resolved no default for
    extra = getattr(request, "extra", None)
    found = extra.get("routeDefaultEffort") if isinstance(extra, Mapping) else None
    return found if isinstance(found, str) else None


def merge_profile_headers(headers: list[tuple[str, str]], call: PiCall, *,
                          client: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """``headers`` (the SDK's, in wire order, ending with DSH's ``user-agent`` and
    ``content-type``) with the route profile's ``headers`` (DSH ``requestHeaders``: deployment
    headers, attribution names removed, then the attribution) merged as pi-ai and its SDK merge them.

    ``client`` names the entries pi-ai itself puts in the SDK client's ``defaultHeaders`` object,
    which DSH's headers join: there a header of exactly the same name keeps its place and takes the
    profile's value (``Object.assign``). The SDK then builds the request's headers source by source
    (``internal/headers.js`` ``buildHeaders``: SDK defaults, then ``defaultHeaders``, then the body's
    ``content-type``), every name lower-cased, and each header a later source sets is removed from
    its earlier place and appended: so a profile header that overrides an SDK header (``accept``,
    ``anthropic-version``, ``x-stainless-*``) moves to the profile's place, before ``user-agent``.
    Checked against pi-ai 0.82.1's own requests (``tests/data/piai_oracle``)."""
    if not call.headers:
        return headers
    values = dict(headers)
    last = ("user-agent", "content-type")
    sdk = [(name, value) for name, value in headers if name not in client and name not in last]
    merged = {name: values[name] for name, _ in headers if name in client}
    merged.update(call.headers)
    merged["user-agent"] = values["user-agent"]
    out: dict[str, str] = {}
    for name, value in (*sdk, *merged.items(), ("content-type", values["content-type"])):
        out.pop(name.lower(), None)
        out[name.lower()] = value
    return list(out.items())


def user_agent(version: str) -> str:
    """DSH's attribution ``user-agent`` (``packages/llm/llm/src/attribution.ts``)."""
    return f"deepseek-harness/{version} (+https://github.com/deepseek-ai/deepseek-harness)"


def compaction_messages(request: Any, instruction: str | None) -> tuple[dict[str, Any], ...]:
    """The instruction message a compaction call appends to its region (empty for other kinds).

    Raises:
        RenderError: a compaction request without the instruction text (it is not logged).
    """
    if request.kind != "compaction":
        return ()
    if instruction is None:
        raise RenderError("a compaction request ends with DSH's fixed compaction instruction, which the log "
                          "does not record", seq=request.first_chunk_seq,
                          hint="give --compaction-instruction FILE, DSH's compaction instruction text (diff and "
                               "check take it from the captured body; from Python: compaction_instruction=)")
    return ({"role": "user", "content": [{"type": "text", "text": instruction}], "source": {"kind": "user"}},)


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class PiRenderer:
    """What the pi-ai renderers share: the route profile's settings and the render steps.

    A subclass names its pi-ai API, endpoint and adapter, and builds the body and the headers.
    The three profile settings, when given, win over the route file's (:class:`RouteProfile` on
    each model); what the log records wins over both (:func:`request_call`).

    Args:
        models: extra :class:`PiModel` facts by ``(route, model id)``; built-ins cover the corpus.
        owned_routes: the routes of the pi-ai adapter that serves the request (default: every route,
            as DSH's one ``llm-pi-ai`` adapter serves them all; see :func:`pi_context`).
        profile_reasoning: the route profile's ``reasoning``, used when a request names no effort
            (default: the route file's, :class:`~dsh_audit.wire.RouteProfile`).
        cache_retention: the profile's ``cacheRetention`` (``short``, ``long``, ``none``; default:
            the route file's, else ``short``).
        thinking_budgets: the profile's ``thinkingBudgets`` by level (default: the route file's).
        version: DSH version written in ``user-agent``.
        platform: the SDK's ``x-stainless-os/arch/runtime/runtime-version`` headers.
    """

    adapter: ClassVar[str]
    api: ClassVar[str]
    endpoint: ClassVar[str]
    other: ClassVar[tuple[str, str]]  # the other pi-ai API and its adapter, for a mismatch hint

    models: Mapping[tuple[str, str], PiModel] | None = None
    owned_routes: frozenset[str] | None = None
    profile_reasoning: str | None = None
    cache_retention: str | None = None
    thinking_budgets: Mapping[str, int] | None = None
    version: str = HARNESS_VERSION
    platform: tuple[tuple[str, str], ...] = SDK_PLATFORM
    #: what the renderer keeps between requests: the last loop request's folded conversion and
    #: each message's (see :func:`dsh_audit.wire._piai.folded_request_context`)
    state: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def call(self, request: Any) -> PiCall:
        """DSH's stream options for ``request`` under this renderer's profile."""
        return request_call(request, models=self.models, profile_reasoning=self.profile_reasoning,
                            cache_retention=self.cache_retention, thinking_budgets=self.thinking_budgets)

    def body(self, request: Any, call: PiCall, *, compaction_instruction: str | None,
             images: Mapping[str, bytes] | None = None, offloaded_image_text: str | None = None) -> dict[str, Any]:
        """The request body as a JSON value (keys in wire order)."""
        raise NotImplementedError

    def headers(self, call: PiCall, body: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
        """The request headers in wire order (credential withheld)."""
        raise NotImplementedError

    def _checked_call(self, request: Any) -> PiCall:
        call = self.call(request)
        if call.model.api != self.api:
            other_api, other_adapter = self.other
            adapter = _API_ADAPTERS.get(call.model.api)
            hint = f"render {call.model.api} routes with --adapter {adapter}" if adapter is not None \
                else f"render {other_api} routes with --adapter {other_adapter}"
            raise RenderError(f"{call.model.provider}/{call.model.id} speaks {call.model.api}, not {self.api}",
                              hint=hint)
        return call

    def body_value(self, request: Any, *, compaction_instruction: str | None = None,
                   images: Mapping[str, bytes] | None = None,
                   offloaded_image_text: str | None = None) -> dict[str, Any]:
        """The body :meth:`render` serialises, as a JSON value (keys in wire order): its texts are
        the log's own string objects, so a view that reads its parts (the prompt-cache accounting)
        neither parses the body back nor holds a second copy of a huge message.

        Raises:
            RenderError: as :meth:`render`.
        """
        return self.body(request, self._checked_call(request), compaction_instruction=compaction_instruction,
                         images=images, offloaded_image_text=offloaded_image_text)

    def render(self, request: Any, *, compaction_instruction: str | None = None,
               images: Mapping[str, bytes] | None = None, offloaded_image_text: str | None = None) -> WireRequest:
        """Render one request: exact body bytes and headers (credential withheld).

        Args:
            request: a request on a route of this renderer's pi-ai API (:attr:`api`).
            compaction_instruction: DSH's compaction instruction text; required for ``compaction``.
            images: attachment bytes by ``attachmentId``; required when a message holds an image
                (the log records only its reference).
            offloaded_image_text: DSH's stand-in text, needed only when images exceed the route's
                ``maxRequestImageBytes``.

        Raises:
            RenderError: DSH would refuse the request (``dsh_code``), or the log lacks a fact.
        """
        call = self._checked_call(request)
        body = self.body(request, call, compaction_instruction=compaction_instruction, images=images,
                         offloaded_image_text=offloaded_image_text)
        prefix = urlsplit(call.model.base_url).path.rstrip("/")
        return WireRequest(adapter=self.adapter, method="POST", path=prefix + self.endpoint,
                           headers=self.headers(call, body), body=stringify_bytes(body))
