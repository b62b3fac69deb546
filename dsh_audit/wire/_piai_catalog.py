"""pi-ai's built-in catalog, as package data: every provider's models (:data:`PIAI_CATALOG`), the
routes DSH users pick most (:data:`BUILTIN_MODELS`), a provider's base URL and API, and a route/model
resolved to its facts, the caller's first (:func:`resolve_model`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from types import MappingProxyType
from typing import Any

from ..errors import RenderError
from ._piai_facts import PI_AI_VERSION, PiModel

__all__ = ["BUILTIN_MODELS", "CATALOG_FILE", "PIAI_CATALOG", "catalog_api", "catalog_base_url", "catalog_models",
           "catalog_source", "resolve_model"]

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
