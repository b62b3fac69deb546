"""The facts pi-ai knows about a route/model and DSH never logs (:class:`PiModel`), a route's
stream settings from DSH's route configuration (:class:`RouteProfile`), and pi-ai's constants they
are read with. :mod:`dsh_audit.wire._piai_models` says where they come from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..jsjson import js_number

__all__ = ["CONTEXT_SAFETY_TOKENS", "PI_AI_VERSION", "PI_MAX_REQUEST_IMAGE_BYTES", "THINKING_LEVELS", "PiModel",
           "RouteProfile", "timeout_header"]

PI_AI_VERSION = "0.82.1"
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
        timeout_ms: ``timeoutMs``, which pi-ai hands the SDK as the request ``timeout``: it changes
            no body, only the ``x-stainless-timeout`` header (:func:`timeout_header`); None: the SDK's.
    """

    reasoning: str | None = None
    cache_retention: str | None = None
    thinking_budgets: Mapping[str, int] | None = None
    headers: tuple[tuple[str, str], ...] = ()
    max_request_image_bytes: int | None = None
    timeout_ms: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "thinking_budgets", _frozen_map(self.thinking_budgets))


def timeout_header(profile: RouteProfile | None, default_ms: int | None = None) -> list[tuple[str, str]]:
    """The ``x-stainless-timeout`` header both SDKs write right after ``x-stainless-retry-count``,
    as a list of zero or one header.

    pi-ai passes a route's ``timeoutMs`` as the request option ``timeout``
    (``openai-completions.js:136``, ``anthropic-messages.js:370``, ``openai-responses.js:106``); the
    SDK's ``buildHeaders`` writes ``String(Math.trunc(timeout / 1000))`` only when that option is
    truthy (``openai`` 6.26.0 ``client.js:510``, ``@anthropic-ai/sdk`` 0.91.1 ``client.js:463``). With
    no ``timeoutMs`` only Anthropic's ``messages.create`` supplies one (``default_ms``: 600000,
    ``resources/messages/messages.js:37``), and ``0`` sends no header at all, that default included.
    The division is JavaScript's, on doubles, and so is the spelling (:func:`~dsh_audit.jsjson.js_number`):
    a timeout of ``1e24`` ms is ``1e+21`` seconds, and ``9007199254740993000`` (read as the nearest
    double) is ``9007199254740994``; one past the largest double reads as ``Infinity``.

    Example:
        >>> timeout_header(RouteProfile(timeout_ms=1500)), timeout_header(None, 600_000)
        ([('x-stainless-timeout', '1')], [('x-stainless-timeout', '600')])
        >>> timeout_header(RouteProfile(timeout_ms=0), 600_000)
        []
        >>> [timeout_header(RouteProfile(timeout_ms=ms)) for ms in (10**24, 9007199254740993000)]
        [[('x-stainless-timeout', '1e+21')], [('x-stainless-timeout', '9007199254740994')]]
    """
    timeout = profile.timeout_ms if profile is not None and profile.timeout_ms is not None else default_ms
    return [("x-stainless-timeout", _js_seconds(timeout))] if timeout else []


def _js_seconds(timeout_ms: int) -> str:
    """``String(Math.trunc(timeout_ms / 1000))`` as JavaScript computes it, on a double."""
    try:
        seconds = float(timeout_ms) / 1000
    except OverflowError:  # past the largest double: JavaScript's Infinity
        return "Infinity"
    return js_number(math.trunc(seconds))


@dataclass(frozen=True, slots=True)
class PiModel:
    """The facts pi-ai knows about one route/model and DSH never logs.

    Attributes:
        provider: the DSH route key (``anthropic``, ``local-openai``); pi-ai's ``model.provider``.
        id: the model id sent as ``model``.
        api: pi-ai's API name (``anthropic-messages``, ``openai-completions``, ``openai-responses``
            are rendered; a catalog entry may name another, which no renderer here writes).
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
        headers: pi-ai's ``model.headers`` (the catalog entry's, in its order: ``User-Agent`` of
            ``kimi-coding``, ``NVCF-POLL-SECONDS`` of ``nvidia``, GitHub Copilot's editor headers),
            which pi-ai lays into the SDK client's ``defaultHeaders``
            (:func:`~dsh_audit.wire._piai_models.merge_profile_headers`).
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
    headers: tuple[tuple[str, str], ...] = ()

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
