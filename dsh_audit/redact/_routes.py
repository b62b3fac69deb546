"""The route configuration of a bundle, redacted: what its verdicts were rendered with, without secrets.

A log whose hand-declared pi-ai routes render only with DSH's route configuration was redacted with
one (``--routes``); the bundle carries it redacted, beside the log, so that anyone can check the
bundle without the original file (:func:`dsh_audit.redact.check_bundle` reads it). It is written from
the configuration as read (:class:`dsh_audit.wire.PiRoutes`), never from the file's text, and holds
only what a request's rendering reads:

- kept: the route keys (the log names them), each route's ``api``, and each model's ``id``,
  ``contextWindow``, ``maxTokens``, ``input``, ``reasoningEfforts`` and ``compat`` (no switch DSH's gate
  withholds: :func:`_compat`); the route's stream settings (``reasoning``, ``cacheRetention``,
  ``thinkingBudgets``, ``maxRequestImageBytes``, ``timeoutMs``); and the route's ``dshAudit: {keyType}``,
  the kind of key DSH gave pi-ai (a mode word, no secret: without it an OAuth session's bundle would
  render as an API key's), checked as the reader checks it;
- redacted: a ``baseURL`` as a captured URL is (:func:`._capture.redact_url`): its host and port (the
  placeholder the capture's ``host`` header gets) and anything before it (credentials in the URL), and
  in its path and query what is secret-shaped and every credential-named parameter's value; the rest
  of its path stays (it prefixes the request path). The host of a public endpoint stays: one that pi-ai's catalog names (``api.deepseek.com``,
  ``openrouter.ai``...), which identifies no one and which pi-ai's compat detection reads. A route that
  takes its models' own catalog base URLs (a catalog route with no ``baseURL``) writes none. The values of
  the route's ``headers`` become placeholders of their length in printable ASCII
  (:func:`._pseudonyms.redact_ascii`: a route file re-reads as written);
- left out: the key's variable (``apiKeyEnv``), a literal ``apiKey``, ``displayName``, a model's ``name``,
  and every field the configuration has that no request reads.

A model of pi-ai's catalog writes only the facts that differ from its catalog entry. The file is JSON,
which DSH's YAML readers and ``--routes`` read as YAML. :func:`dsh_audit.redact.redact` checks the
redacted copy's verdicts with the file as written, so a configuration it cannot carry over (a host
that pi-ai's compat detection reads) shows as a verdict that differs, never as a false match.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from ..errors import UsageError
from ..wire import PIAI_CATALOG, PiRoutes

__all__ = ["ROUTES_SUFFIX", "public_hosts", "redacted_routes"]

#: The name ending of a bundle's route file (``<log>.routes.yml`` beside the redacted log).
ROUTES_SUFFIX = ".routes.yml"


@functools.cache
def public_hosts() -> frozenset[str]:
    """The host names of the endpoints pi-ai's catalog names (its models' base URLs): public vendor APIs."""
    found = set()
    for model in PIAI_CATALOG.values():
        try:
            name = urlsplit(model.base_url).hostname
        except ValueError:
            continue
        if name:
            found.add(name)
    return frozenset(found)


def _efforts(levels: Mapping[str, str | None] | None) -> dict[str, str | None]:
    """The ``reasoningEfforts`` DSH resolves to ``levels`` (a hand-declared model's thinking level map:
    every level but a bare ``off``, an undeclared one pinned to None)."""
    efforts: dict[str, str | None] = {level: wire for level, wire in (levels or {}).items() if wire is not None}
    if "off" not in (levels or {}):
        efforts = {"off": None, **efforts}
    return efforts


def _profile(settings: Any, value: Callable[[str], str]) -> dict[str, Any]:
    """A route's stream settings (:class:`dsh_audit.wire.RouteProfile`) as the route file sets them."""
    out: dict[str, Any] = {}
    if settings is None:
        return out
    if settings.reasoning is not None:
        out["reasoning"] = settings.reasoning
    if settings.cache_retention is not None:
        out["cacheRetention"] = settings.cache_retention
    if settings.thinking_budgets is not None:
        out["thinkingBudgets"] = dict(settings.thinking_budgets)
    if settings.headers:
        out["headers"] = {name: value(text) for name, text in settings.headers}
    if settings.max_request_image_bytes is not None:
        out["maxRequestImageBytes"] = settings.max_request_image_bytes
    if settings.timeout_ms is not None:  # the x-stainless-timeout header
        out["timeoutMs"] = settings.timeout_ms
    return out


def _compat(model: Any, base: Any) -> dict[str, Any]:
    """The ``compat`` a model's entry writes so that the file resolves ``model.compat`` again
    (:func:`dsh_audit.wire.parse_routes`, DSH ``catalog.ts`` ``resolveModelCompat``), never a switch DSH's
    gate withholds (the loader refuses those): a hand-declared model's whole compat (its configured
    switches, every one offered by its API's gate); a catalog model that keeps its entry's api, the
    switches that differ from its catalog entry's (the rest, withheld ones included, it inherits); a
    catalog model repointed to another api, nothing when it kept its entry's compat whole (configured
    none), else its whole compat (what was configured: the entry's was dropped)."""
    if base is None:
        return dict(model.compat)
    if base.api == model.api:
        missing = object()
        return {k: v for k, v in model.compat.items() if base.compat.get(k, missing) != v}
    return {} if dict(model.compat) == dict(base.compat) else dict(model.compat)


def redacted_routes(config: PiRoutes, *, url: Callable[[str], str], value: Callable[[str], str]) -> dict[str, Any]:
    """The route configuration ``config`` as a route file's ``providers`` document, redacted (see the
    module): ``url`` gives a ``baseURL`` as redacted (a captured URL's redaction: its host, and the
    secrets of its path and query), ``value`` a header value's placeholder.

    Example:
        >>> from dsh_audit.wire import load_routes  # doctest: +SKIP
        >>> redacted_routes(load_routes("routes.yml"), url=str.upper, value=str.upper)  # doctest: +SKIP
        {'providers': {'local-openai': {'api': 'openai-completions', 'baseURL': 'http://GW.LAN:8080/v1', ...}}}
    """
    routes: dict[str, dict[str, Any]] = {}
    for (provider, _), model in config.models.items():
        route = routes.setdefault(provider, {"models": []})
        base = PIAI_CATALOG.get((provider, model.id))
        entry: dict[str, Any] = {"id": model.id}
        if base is None or model.context_window != base.context_window:
            entry["contextWindow"] = model.context_window
        if base is None or model.max_tokens != base.max_tokens:
            entry["maxTokens"] = model.max_tokens
        if base is None or tuple(model.input) != tuple(base.input):
            entry["input"] = list(model.input)
        if base is None or (model.reasoning, model.thinking_level_map) != (base.reasoning, base.thinking_level_map):
            entry["reasoningEfforts"] = _efforts(model.thinking_level_map) if model.reasoning else False
        compat = _compat(model, base)
        if compat:
            entry["compat"] = compat
        route["models"].append(entry)
        route.setdefault("_apis", set()).add(model.api)
        if base is None or model.base_url != base.base_url:
            route["baseURL"] = url(model.base_url)
        route.update(_profile(model.profile, value))
    for provider, route in routes.items():
        apis = route.pop("_apis")
        if len(apis) == 1:
            route["api"] = next(iter(apis))
        try:
            key_type = config.key_type(provider)
        except ValueError as exc:  # a configuration built in Python: what the reader refuses is refused here
            raise UsageError(f"route {provider!r}: dshAudit.keyType {exc}",
                             hint="key the route's models with one of the key types, alike") from None
        if key_type is not None:
            route["dshAudit"] = {"keyType": key_type}
    ordered = ("api", "baseURL", "reasoning", "cacheRetention", "thinkingBudgets", "headers", "maxRequestImageBytes",
               "timeoutMs", "dshAudit", "models")
    return {"providers": {provider: {key: route[key] for key in ordered if key in route}
                          for provider, route in routes.items()}}
