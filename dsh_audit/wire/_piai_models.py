"""The facts a pi-ai rendering needs beyond the log: model catalog entries and DSH's call options.

pi-ai resolves a route/model to a ``Model`` (context window, output capability, reasoning levels,
compat switches, model headers) that DSH never logs; :class:`PiModel` is that record,
:data:`PIAI_CATALOG` holds pi-ai's whole built-in catalog (every provider and model, shipped as
package data, :data:`CATALOG_FILE`, read on first use), :data:`BUILTIN_MODELS` the entries of the
catalog routes DSH users pick most, and callers pass their own for other routes.
:func:`request_call` applies DSH's side of ``llm-pi-ai/src/adapter.ts`` (spec §8.2): which
effort reaches pi-ai, which cap, and what the adapter refuses. Facts are those of pi-ai **0.82.1**
(its ``dist/providers/data/*.json``, ``dist/providers/*.js`` and ``models.js`` level rules) and
DSH 0.1.0-rc.8's ``llm-pi-ai/src/catalog.ts`` for hand-declared models. :class:`PiRenderer` holds
the route profile settings the pi-ai renderers take and the render steps they share.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from importlib import resources
from types import MappingProxyType
from typing import Any, ClassVar
from urllib.parse import urlsplit

from ..errors import RenderError
from ..jsjson import stringify_bytes
from ._types import WireRequest

__all__ = [
    "BUILTIN_MODELS",
    "CATALOG_FILE",
    "CONTEXT_SAFETY_TOKENS",
    "HARNESS_VERSION",
    "PI_AI_VERSION",
    "PIAI_CATALOG",
    "PI_MAX_REQUEST_IMAGE_BYTES",
    "SDK_PLATFORM",
    "THINKING_LEVELS",
    "PiCall",
    "PiModel",
    "PiRenderer",
    "RouteProfile",
    "catalog_api",
    "js_truthy",
    "catalog_base_url",
    "catalog_models",
    "catalog_source",
    "clamp_level",
    "compaction_messages",
    "credential_header",
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
            which pi-ai lays into the SDK client's ``defaultHeaders`` (:func:`merge_profile_headers`).
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


# --- pi-ai's built-in catalog, as package data ---------------------------------------------------

#: The catalog's file beside this module, written by ``scripts/gen_piai_catalog.py`` from the
#: published tarball of ``@earendil-works/pi-ai`` 0.82.1
#: (``https://registry.npmjs.org/@earendil-works/pi-ai/-/pi-ai-0.82.1.tgz``): every model of its
#: ``dist/providers/data/<provider>.json`` with the fields a request reads (``api``, ``baseUrl``,
#: ``reasoning``, ``input``, ``contextWindow``, ``maxTokens``, ``thinkingLevelMap``, ``compat``,
#: ``headers``), and each provider's own ``baseUrl`` from ``dist/providers/<provider>.js``. Its
#: ``source`` member names the package, version, tarball, integrity and files read.
CATALOG_FILE = "piai_catalog.json"
#: The catalog routes DSH users pick most, which :data:`BUILTIN_MODELS` lists.
_PICKED = ("anthropic", "deepseek", "openrouter", "openai")


@dataclass(frozen=True, slots=True)
class _Catalog:
    models: Mapping[str, Mapping[str, PiModel]]  # provider -> model id -> facts, in pi-ai's order
    base_urls: Mapping[str, str | None]  # provider -> the base URL its factory names
    source: Mapping[str, Any]


def _catalog_entry(provider: str, model_id: str, entry: Mapping[str, Any]) -> PiModel:
    levels = entry.get("thinkingLevelMap")
    return PiModel(provider=provider, id=model_id, api=entry["api"], base_url=entry["baseUrl"],
                   context_window=entry["contextWindow"], max_tokens=entry["maxTokens"],
                   reasoning=entry["reasoning"], thinking_level_map=levels, input=tuple(entry["input"]),
                   compat=entry.get("compat") or {}, headers=tuple((entry.get("headers") or {}).items()))


@functools.cache
def _catalog() -> _Catalog:
    """The packaged catalog, read once, on first use (start-up reads none of it)."""
    data = json.loads((resources.files(__package__) / CATALOG_FILE).read_text("utf-8"))
    models: dict[str, Mapping[str, PiModel]] = {}
    base_urls: dict[str, str | None] = {}
    for provider, facts in data["providers"].items():
        models[provider] = MappingProxyType({model_id: _catalog_entry(provider, model_id, entry)
                                             for model_id, entry in facts["models"].items()})
        base_urls[provider] = facts["baseUrl"]
    return _Catalog(MappingProxyType(models), MappingProxyType(base_urls), MappingProxyType(data["source"]))


class _CatalogView(Mapping[tuple[str, str], PiModel]):
    """A read-only ``(provider, model id) -> PiModel`` view of the packaged catalog, over the given
    providers (None: all), which reads the catalog file only when first looked into."""

    __slots__ = ("_providers",)

    def __init__(self, providers: tuple[str, ...] | None) -> None:
        self._providers = providers

    def _tables(self) -> list[tuple[str, Mapping[str, PiModel]]]:
        models = _catalog().models
        names = models if self._providers is None else [p for p in self._providers if p in models]
        return [(provider, models[provider]) for provider in names]

    def __getitem__(self, key: tuple[str, str]) -> PiModel:
        if isinstance(key, tuple) and len(key) == 2 and (self._providers is None or key[0] in self._providers):
            found = _catalog().models.get(key[0], {}).get(key[1])
            if found is not None:
                return found
        raise KeyError(key)

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return ((provider, model_id) for provider, table in self._tables() for model_id in table)

    def __len__(self) -> int:
        return sum(len(table) for _, table in self._tables())

    def __repr__(self) -> str:
        return f"<pi-ai {PI_AI_VERSION} catalog: {', '.join(self._providers) if self._providers else 'every provider'}>"


#: pi-ai 0.82.1's whole built-in catalog (37 providers, 1,109 models) by ``(provider, model id)``:
#: DSH's ``llm-pi-ai`` serves any pi-ai built-in provider as a catalog route
#: (``llm-pi-ai/src/catalog.ts`` ``resolveRouteModels``: ``catalogModels(provider)``), laying the
#: entry under each model the route declares. Some entries speak an API dsh-audit writes no bodies
#: for (``bedrock-converse-stream``, ``google-generative-ai``, ...): such a route is known, with no
#: wire format. Read from :data:`CATALOG_FILE` on first use.
PIAI_CATALOG: Mapping[tuple[str, str], PiModel] = _CatalogView(None)
#: The catalog entries of the catalog routes DSH users pick most: Claude through ``anthropic``;
#: DeepSeek's own ``deepseek`` route and all 276 of OpenRouter's models through
#: ``openai-completions``; OpenAI's own ``openai`` route, which speaks ``openai-responses``
#: (:mod:`dsh_audit.wire._responses`). Every other provider's are in :data:`PIAI_CATALOG`.
#: Hand-declared routes have no catalog entry: their facts come from DSH's route configuration
#: (``--routes``, :func:`dsh_audit.wire.load_routes`).
BUILTIN_MODELS: Mapping[tuple[str, str], PiModel] = _CatalogView(_PICKED)


def js_truthy(value: Any) -> bool:
    """JavaScript's truthiness of a parsed JSON or YAML value: every object and array is true;
    ``0``, ``NaN``, ``""``, ``false`` and ``null`` are false.

    Example:
        >>> [js_truthy(v) for v in ({}, [], 0, float("nan"), "", None, "0")]
        [True, True, False, False, False, False, True]
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return bool(value) and not (isinstance(value, float) and math.isnan(value))
    return True


def catalog_models(provider: str) -> Mapping[str, PiModel]:
    """pi-ai's catalog entries of ``provider`` by model id, in pi-ai's order (empty when pi-ai has
    no such built-in provider): DSH's ``catalogModels`` (``llm-pi-ai/src/catalog.ts``)."""
    return _catalog().models.get(provider, MappingProxyType({}))


def catalog_base_url(provider: str) -> str | None:
    """The base URL pi-ai's factory gives ``provider`` (``createProvider({baseUrl})`` in
    ``dist/providers/<provider>.js``); None when it names none or pi-ai has no such provider.
    DSH's ``resolveRouteModels`` falls back to it for a model the route lists without a
    ``baseURL`` (``catalog.ts``: ``request.baseURL ?? base?.baseUrl ?? providerBaseUrl``)."""
    return _catalog().base_urls.get(provider)


@functools.lru_cache(maxsize=256)  # asked for each request's route; a log names few providers
def catalog_api(provider: str) -> str | None:
    """The one pi-ai API every catalog model of ``provider`` speaks (DSH ``sharedCatalogApi``);
    None when its models speak several or pi-ai has no such provider."""
    apis = {model.api for model in catalog_models(provider).values()}
    return apis.pop() if len(apis) == 1 else None


def catalog_source() -> Mapping[str, Any]:
    """Where the packaged catalog comes from: ``package``, ``version``, ``tarball``, ``integrity``,
    ``catalogGeneratedAt`` (pi-ai's ``data/.manifest.json``), the ``files`` read, the fields ``kept``."""
    return _catalog().source


def resolve_model(provider: str | None, model_id: str | None,
                  models: Mapping[tuple[str, str], PiModel] | None = None) -> PiModel:
    """The :class:`PiModel` for a route/model pair: caller's ``models`` first, then pi-ai's catalog.

    Raises:
        RenderError: neither knows the pair (catalog facts are not in the log): on a catalog route,
            a model pi-ai's catalog does not list; on another, a model no route file describes.
    """
    if isinstance(provider, str) and isinstance(model_id, str):
        for table in (models or {}, PIAI_CATALOG):
            found = table.get((provider, model_id))
            if found is not None:
                return found
    if isinstance(provider, str) and catalog_models(provider):
        # a catalog route: pi-ai's catalog, not the route configuration, lacks the model
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


def _logged_cap(header: Mapping[str, Any], model: PiModel) -> PiModel:
    """``model`` with the output cap a route configured for it, when the header proves it.

    DSH materialises a call's ``maxTokens`` from the route only when the route's model entry names
    one (``llm-pi-ai/src/catalog.ts:875-881``: that value is both ``model.maxTokens`` and the
    ``configuredMaxTokens`` default, ``adapter.ts:268-275``), and then logs
    ``adapterDefaults.maxTokens: true`` (``llm/src/index.ts`` ``resolveCallFor``). Such a header's
    ``maxTokens`` is therefore the model's cap, which pi-ai's budget clamp reads
    (``simple-options.js:46``), for every call on the same route and model, even without the route
    configuration.
    """
    defaults, config = header.get("adapterDefaults"), header["config"]
    cap = config.get("maxTokens")
    if not isinstance(defaults, Mapping) or defaults.get("maxTokens") is not True \
            or not isinstance(cap, int) or isinstance(cap, bool) or cap <= 0 or cap == model.max_tokens \
            or config.get("provider") != model.provider or config.get("model") != model.id:
        return model
    return replace(model, max_tokens=cap)


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
    model = _logged_cap(header, _logged_window(request, resolve_model(config.get("provider"), config.get("model"),
                                                                       models)))
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


def merge_profile_headers(headers: list[tuple[str, str]], call: PiCall, *, client: tuple[str, ...] = (),
                          dynamic: tuple[tuple[str, str], ...] = ()) -> list[tuple[str, str]]:
    """``headers`` (the SDK's, in wire order, ending with DSH's ``user-agent`` and
    ``content-type``) with the model's catalog ``headers`` (:attr:`PiModel.headers`) and the route
    profile's ``headers`` (DSH ``requestHeaders``: deployment headers, attribution names removed,
    then the attribution) merged as pi-ai and its SDK merge them.

    ``client`` names the entries pi-ai itself puts in the SDK client's ``defaultHeaders`` object,
    which the model's headers and DSH's join: the model's first for the OpenAI APIs
    (``openai-completions.js`` and ``openai-responses.js`` ``createClient``: ``{...model.headers}``,
    then the session headers), after pi-ai's own for Anthropic (``anthropic-messages.js``
    ``createClient``: ``mergeHeaders({accept, ...}, sessionAffinityHeaders, model.headers,
    optionsHeaders)``), DSH's last. There a header of exactly the same name keeps its place and
    takes the later value (``Object.assign``); names differing in case are two entries. The SDK then
    builds the request's headers source by source (``internal/headers.js`` ``buildHeaders``: SDK
    defaults, then ``defaultHeaders``, then the body's ``content-type``), every name lower-cased,
    and each header a later entry sets is removed from its earlier place and appended: so a profile
    header that overrides an SDK header (``accept``, ``anthropic-version``, ``x-stainless-*``) moves
    to the profile's place, before ``user-agent``, and a model's ``User-Agent`` gives way to DSH's.
    Checked against pi-ai 0.82.1's own requests (``tests/data/piai_oracle``,
    ``tests/test_piai_catalog_all.py``).

    A credential header (:func:`credential_header`) a route file's profile or model names is
    withheld, as the SDK's own ``authorization`` and ``x-api-key`` are: a deployment authenticates
    a gateway there (``cf-aig-authorization`` for an authenticated Cloudflare AI Gateway, which a
    hand-declared route can set nowhere else), and a rendered request never shows a credential.

    ``dynamic`` are the headers pi-ai computes per request and lays right after the model's
    (GitHub Copilot's, :func:`dsh_audit.wire._piai.copilot_headers`): the Anthropic client's
    ``mergeHeaders(own, model.headers, dynamicHeaders, optionsHeaders)`` and the OpenAI clients'
    ``Object.assign({...model.headers}, copilotHeaders)`` before their session headers."""
    model_headers = call.model.headers
    if not call.headers and not model_headers and not dynamic:
        return headers
    values = dict(headers)
    last = ("user-agent", "content-type")
    sdk = [(name, value) for name, value in headers if name not in client and name not in last]
    own = [(name, values[name]) for name, _ in headers if name in client]
    merged: dict[str, str] = {}
    sources = (own, model_headers, dynamic) if call.model.api == "anthropic-messages" \
        else (model_headers, dynamic, own)
    for source in (*sources, call.headers, (("user-agent", values["user-agent"]),)):
        merged.update(source)
    out: dict[str, str] = {}
    for name, value in (*sdk, *merged.items(), ("content-type", values["content-type"])):
        out.pop(name.lower(), None)
        out[name.lower()] = value
    return [(name, value) for name, value in out.items() if not credential_header(name)]


#: A header name that says its value is a credential: an authorization, an API key, a token, a secret,
#: a cookie, as a whole dash-, dot- or underscore-separated part of the name.
_CREDENTIAL_HEADER = re.compile(r"(?i)(?:^|[-_.])(?:auth|authorization|authentication|token|secret|password|"
                                r"api[-_]?key|access[-_]?key|subscription[-_]?key|functions[-_]key|cookie|"
                                r"signature)(?:$|[-_.])")


def credential_header(name: str) -> bool:
    """Whether a header named ``name`` carries a credential, so that a rendered request withholds
    it: the SDKs' ``authorization`` and ``x-api-key``; pi-ai 0.82.1's ``cf-aig-authorization``,
    the only header its ``cloudflare-ai-gateway`` auth sends the key in, with ``Authorization`` and
    ``x-api-key`` set to null so that the SDKs send neither (``dist/providers/cloudflare-auth.js:
    63-78``); a gateway's own (``x-portkey-api-key``, ``helicone-auth``, ``x-auth-token``).

    Example:
        >>> [credential_header(n) for n in ("Authorization", "cf-aig-authorization", "x-api-key",
        ...                                  "x-goog-api-key", "helicone-auth", "Cookie")]
        [True, True, True, True, True, True]
        >>> [credential_header(n) for n in ("api_key", "x_api_key", "X-Access_Key", "Ocp-Apim-Subscription-Key",
        ...                                  "x-functions-key", "authentication")]
        [True, True, True, True, True, True]
        >>> [credential_header(n) for n in ("x-session-affinity", "session_id", "anthropic-beta", "x-team",
        ...                                  "user-agent", "nvcf-poll-seconds")]
        [False, False, False, False, False, False]
    """
    return _CREDENTIAL_HEADER.search(name) is not None


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
    other: ClassVar[tuple[str, str]]  # the other pi-ai API and its adapter (no longer read: the hint names the
    # request's own API's adapter, or says no wire format has one)

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

    def headers(self, call: PiCall, body: Mapping[str, Any],
                dynamic: tuple[tuple[str, str], ...] = ()) -> tuple[tuple[str, str], ...]:
        """The request headers in wire order (credential withheld); ``dynamic``: the ones pi-ai
        computes from the request's context (:meth:`dynamic_headers`)."""
        raise NotImplementedError

    def dynamic_headers(self, request: Any, call: PiCall, *, compaction_instruction: str | None,
                        images: Mapping[str, bytes] | None, offloaded_image_text: str | None
                        ) -> tuple[tuple[str, str], ...]:
        """The headers pi-ai derives from the request's context, in its order (none here)."""
        return ()

    def _checked_call(self, request: Any) -> PiCall:
        call = self.call(request)
        if call.model.api != self.api:
            adapter = _API_ADAPTERS.get(call.model.api)
            # a catalog model may speak an API no renderer here writes (bedrock-converse-stream, ...)
            hint = f"render {call.model.api} routes with --adapter {adapter}" if adapter is not None else \
                f"a known route with no wire format: dsh-audit writes no {call.model.api} bodies, and no " \
                "--adapter renders it"
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
        dynamic = self.dynamic_headers(request, call, compaction_instruction=compaction_instruction, images=images,
                                       offloaded_image_text=offloaded_image_text)
        return WireRequest(adapter=self.adapter, method="POST", path=prefix + self.endpoint,
                           headers=self.headers(call, body, dynamic), body=stringify_bytes(body))
