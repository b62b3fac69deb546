"""Which adapter sent each request: its route, read from the log.

DSH routes a request by the provider id its header names (``config.provider``); which adapter owns
that id is configuration the log does not record. The log does record what each adapter made of
it: an ``assistant/message`` whose ``source`` carries pi-ai's replay envelope
(``replayState.response``: ``kind: "pi-ai"``, ``api``, ``provider``, ``model``) came through
DSH's pi-ai adapter with that pi-ai API; a model message without one came through the native
DeepSeek adapter. A route is decided, per provider id, from (in order) the caller's explicit
choice, the route configuration (``--routes``), that evidence anywhere in the log, and DSH's own
defaults (``deepseek-official`` is the native adapter's provider; pi-ai's catalog provider
``anthropic`` speaks ``anthropic-messages``). On a catalog provider whose models speak several
APIs (``github-copilot``, ``fireworks``, ...) it is decided per model: by the model's own catalog
entry, as DSH resolves it, else by that model's own envelope. When the log's evidence contradicts the route
configuration or the catalog (an envelope with ``api: openai-completions`` on the ``anthropic``
route), the log shows what DSH sent and the model facts at hand describe something else: the
route is unknown, with both named, rather than rendered into a false ``different``. A provider
none of these settles has no route, and its requests are reported ``unrendered`` with the reason,
never rendered with a guess.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._lazy import LazyModule
from .._usage_rule import NATIVE_DEEPSEEK, logged_cache_read, request_provider, usage_of
from ._route_evidence import RouteEvidence
from ._route_notes import _home_layers

if TYPE_CHECKING:
    from .. import wire
    from ..wire import PiRoutes
else:
    wire = LazyModule("dsh_audit.wire")  # pi-ai's catalog and routes: loaded by the first route asked for

__all__ = ["ADAPTER_APIS", "ADAPTER_ENV", "Route", "forced_adapter", "request_model", "request_route", "route_for"]

#: pi-ai API name -> the dsh-audit renderer of that wire format.
ADAPTER_APIS: Mapping[str, str] = {"anthropic-messages": "anthropic", "openai-completions": "openai",
                                   "openai-responses": "responses"}
_PI_ADAPTERS = frozenset(ADAPTER_APIS.values())
#: The environment variable that forces one adapter on every request whose caller forces none
#: (``--adapter`` sets it for its command, so that worker processes and every view see it).
ADAPTER_ENV = "DSH_AUDIT_ADAPTER"
#: Provider ids DSH's native DeepSeek adapter serves by default.
_NATIVE = frozenset({NATIVE_DEEPSEEK})


@dataclass(frozen=True, slots=True)
class Route:
    """How requests to one provider id went out.

    Attributes:
        provider: the provider id the header names.
        adapter: the dsh-audit renderer (``deepseek``, ``anthropic``, ``openai``, ``responses``), or None when the
            route is unknown or its format has no renderer.
        api: pi-ai's API name for pi-ai routes, ``deepseek-chat-completions`` for the native adapter.
        because: what settled it (evidence seq, a default, the caller's choice) or, without an
            adapter, why not and what would settle it.
        contradicted: the log shows ``api`` but the model facts at hand (a route file, pi-ai's catalog)
            say another: an unknown route whatever ``api`` is, which ``--routes FILE`` or ``--adapter``
            settles.
    """

    provider: str | None
    adapter: str | None
    api: str | None
    because: str
    contradicted: bool = field(default=False, compare=False)  # what `because` says already: equal routes stay equal

    @property
    def no_wire_format(self) -> bool:
        """Whether the route is known but speaks an API dsh-audit writes no bodies for
        (``google-generative-ai``, ``google-vertex``, ...): no option renders its requests, since
        ``--adapter`` would write a format DSH did not send. A route the log contradicts is not one,
        whatever API its envelope names: which format DSH sent is open (:attr:`contradicted`).

        Example:
            >>> route_for("gemini", declared={"gemini": "google-generative-ai"}).no_wire_format
            True
            >>> route_for("my-gateway").no_wire_format
            False
        """
        return self.adapter is None and self.api is not None and self.api != "deepseek-chat-completions" \
            and self.api not in ADAPTER_APIS and not self.contradicted


def _from_api(provider: str, api: str, because: str) -> Route:
    if api == "deepseek-chat-completions":
        return Route(provider, "deepseek", api, because)
    adapter = ADAPTER_APIS.get(api)
    if adapter is None:
        return Route(provider, None, api, f"{because}; dsh-audit renders no {api!r} bodies "
                     f"(it renders {', '.join(sorted(ADAPTER_APIS))} and DeepSeek chat completions)")
    return Route(provider, adapter, api, because)


#: How a route decision names a route configuration given as a bare mapping, or read from a
#: ``--routes`` file.
_ROUTES_OPTION = "the route configuration (--routes)"


def _config_source(routes: PiRoutes) -> str:
    """How a message names where ``routes`` came from: the layer file(s) of the DSH home it was
    composed from (as :func:`window_conflicts` names them), else the ``--routes`` file.

    Example:
        >>> from dsh_audit.wire import PiRoutes
        >>> _config_source(PiRoutes({}, {}, layers=("/h/cordis.patch.yml",)))
        "DSH's home patch layer /h/cordis.patch.yml"
        >>> _config_source(PiRoutes({}, {}, source="routes.yml"))
        'the route configuration (--routes)'
    """
    return _home_layers(routes)[2] if routes.layers else _ROUTES_OPTION


@functools.lru_cache(maxsize=64)  # asked per request; a log names few providers
def _catalog_apis(provider: str) -> tuple[str, ...]:
    """Every pi-ai API a catalog model of ``provider`` speaks, sorted (empty: no catalog provider)."""
    return tuple(sorted({wire.PIAI_CATALOG[key].api for key in wire.PIAI_CATALOG if key[0] == provider}))


def _catalog_model_api(provider: str, model: str | None) -> str | None:
    """The API of pi-ai's catalog entry ``provider``/``model``: DSH resolves a catalog route's
    model to ``request.api ?? base?.api ?? routeApi`` (``llm-pi-ai/src/catalog.ts:858``), so with
    no route ``api`` the model's own entry decides, whatever its siblings speak."""
    entry = wire.PIAI_CATALOG.get((provider, model)) if model is not None else None
    return entry.api if entry is not None else None


def route_for(provider: str | None, evidence: RouteEvidence | None = None, *,
              forced: str | None = None, declared: Mapping[str, str] | PiRoutes | None = None,
              model: str | None = None) -> Route:
    """The route of requests to ``provider`` (and ``model``).

    Args:
        provider: the request's provider id (:func:`request_provider`).
        evidence: what the session's log showed (:class:`RouteEvidence`).
        forced: an adapter the caller chose for every request (``--adapter``).
        declared: provider id -> pi-ai API from a route configuration (``--routes``), or that
            configuration itself (:class:`~dsh_audit.wire.PiRoutes`), whose messages then name
            where it came from (:func:`_config_source`: the DSH home's layer file, or ``--routes``).
        model: the request's model id (:func:`request_model`). It matters on a catalog route whose
            models speak several APIs (``fireworks``, ``github-copilot``, ``opencode``, ...): DSH
            gives each model its own catalog entry's API (``catalog.ts:858``), and only that model's
            replay envelopes show which one it took.

    Example:
        >>> route_for("anthropic").adapter
        'anthropic'
        >>> route_for("my-gateway").adapter is None
        True
        >>> from dsh_audit.wire import PiRoutes
        >>> home = PiRoutes({"my-gateway": "openai-completions"}, {}, layers=("/h/cordis.patch.yml",))
        >>> route_for("my-gateway", declared=home).because
        "DSH's home patch layer /h/cordis.patch.yml"
        >>> route_for("github-copilot", model="gpt-4.1").api
        'openai-completions'
    """
    if forced is not None:
        return Route(provider, forced, None, f"--adapter {forced}")
    if provider is None:
        return Route(None, None, None, "the request names no provider (no request/header before it)")
    if declared is not None and isinstance(declared, wire.PiRoutes):  # asked per request: no routes, no wire read
        named, apis = _config_source(declared), declared.apis
        file_model = declared.models.get((provider, model)) if model is not None else None
    else:
        named, apis, file_model = _ROUTES_OPTION, declared or {}, None
    is_declared = provider in apis or file_model is not None
    # A catalog route's API is pi-ai's: the one every model of the provider speaks (DSH's
    # ``sharedCatalogApi``), else the request's model's own catalog entry; DSH's own DeepSeek
    # provider is no pi-ai route. A route file's api wins (``request.api ?? base?.api``).
    several = provider not in apis and provider not in _NATIVE and len(_catalog_apis(provider)) > 1
    if provider in apis:
        configured: str | None = apis[provider]
    elif file_model is not None:
        configured = file_model.api
    else:
        configured = None if provider in _NATIVE else wire.catalog_api(provider) or _catalog_model_api(provider, model)
    own, any_model = evidence.shown(provider, model) if evidence is not None else (None, None)
    # On a route whose models speak one API, any model's message shows the route's. On a catalog
    # route of several, only the model's own envelope shows its API (another model's shows only
    # that pi-ai's adapter serves the id); a native message shows the native adapter serves it all.
    # Asked without a model, the provider's first message answers, as for a one-API route.
    per_model = several and model is not None
    found = own if per_model else any_model
    if per_model and found is None and any_model is not None and any_model[0] == "deepseek-chat-completions":
        found = any_model
    if found is not None:
        api, seq = found
        kind = "pi-ai's replay envelope" if api != "deepseek-chat-completions" else "a native DeepSeek message"
        if configured is not None and configured != api:
            # The log shows what DSH sent; the model facts at hand describe another API, so a body
            # rendered either way would be a false 'different'.
            source = named if is_declared else "pi-ai's catalog"
            return Route(provider, None, api, f"provider {provider!r}: {kind} at seq {seq} shows api {api!r} but "
                         f"{source} says {configured!r}; pass --routes FILE with the route configuration DSH had, "
                         "or --adapter", contradicted=True)
        if not is_declared:
            return _from_api(provider, api, f"{kind} at seq {seq}")
    if is_declared and configured is not None:
        return _from_api(provider, configured, named)
    if configured is not None:
        return _from_api(provider, configured, "pi-ai's catalog" if not several
                         else f"pi-ai's catalog entry of {provider}/{model}")
    if provider in _NATIVE:
        return Route(provider, "deepseek", "deepseek-chat-completions", "DSH's default DeepSeek provider")
    if per_model:
        other = f" (pi-ai's replay envelope at seq {any_model[1]} is another model's)" if any_model is not None else ""
        return Route(provider, None, None, f"provider {provider!r}: its pi-ai catalog models speak several APIs "
                     f"({', '.join(_catalog_apis(provider))}), pi-ai's catalog has no {provider} model {model!r}, "
                     f"and the log shows no message of that model from its adapter{other}; pass --routes FILE "
                     "(DSH's llm-pi-ai route configuration) or --adapter")
    return Route(provider, None, None, f"provider {provider!r}: the log shows no message from its adapter; "
                 "pass --routes FILE (DSH's llm-pi-ai route configuration) or --adapter")


def request_model(request: Any) -> str | None:
    """The model id a request was routed with: a compaction call's is the one its
    ``compaction/summary`` names (as :func:`request_provider`), any other request's its header's."""
    extra = getattr(request, "extra", None) or {}
    logged = extra.get("model") if getattr(request, "kind", None) == "compaction" else None
    if isinstance(logged, str) and logged:
        return logged
    config = (getattr(request, "header", None) or {}).get("config") or {}
    model = config.get("model") if isinstance(config, dict) else None
    if not isinstance(model, str):
        model = extra.get("model")
    return model if isinstance(model, str) else None


def forced_adapter() -> str | None:
    """The adapter ``$DSH_AUDIT_ADAPTER`` forces (``--adapter``), None for none or ``auto``; a value
    that names no adapter forces none (the option refuses it).

    Example:
        >>> import os
        >>> os.environ[ADAPTER_ENV] = "openai"; forced_adapter()
        'openai'
        >>> os.environ[ADAPTER_ENV] = "auto"; print(forced_adapter()); del os.environ[ADAPTER_ENV]
        None
    """
    value = os.environ.get(ADAPTER_ENV)
    return value if value == "deepseek" or value in _PI_ADAPTERS else None


def request_route(request: Any, evidence: RouteEvidence | None = None, *, forced: str | None = None,
                  declared: Mapping[str, str] | PiRoutes | None = None) -> Route:
    """:func:`route_for` the request's provider, or the adapter ``forced`` (default: the one
    ``$DSH_AUDIT_ADAPTER`` forces, :func:`forced_adapter`); a web-search call's body is logged whole and sent
    as it is, whatever adapter the conversation uses. A title or compaction call is lent its
    route's logged context and default effort (:meth:`RouteEvidence.lend_context`) on the way, so
    the body rendered by the route has the window and effort DSH used."""
    if forced is None:
        forced = forced_adapter()
    if getattr(request, "kind", None) == "search":
        return Route(request_provider(request), forced or "deepseek", "web-search",
                     "a web-search call: its logged body is what was sent")
    route = route_for(request_provider(request), evidence, forced=forced, declared=declared,
                      model=request_model(request))
    if evidence is not None and route.adapter in _PI_ADAPTERS:
        evidence.lend_context(request)
    return route
