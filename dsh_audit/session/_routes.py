"""Which adapter sent each request: its route, read from the log.

DSH routes a request by the provider id its header names (``config.provider``); which adapter owns
that id is configuration the log does not record. The log does record what each adapter made of
it: an ``assistant/message`` whose ``source`` carries pi-ai's replay envelope
(``replayState.response``: ``kind: "pi-ai"``, ``api``, ``provider``, ``model``) came through
DSH's pi-ai adapter with that pi-ai API; a model message without one came through the native
DeepSeek adapter. A route is decided, per provider id, from (in order) the caller's explicit
choice, that evidence anywhere in the log, and DSH's own defaults (``deepseek-official`` is the
native adapter's provider; pi-ai's catalog provider ``anthropic`` speaks ``anthropic-messages``).
A provider none of these settles has no route, and its requests are reported ``unrendered`` with
the reason, never rendered with a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..log import Event

__all__ = ["ADAPTER_APIS", "Route", "RouteEvidence", "request_provider", "request_route", "route_for"]

#: pi-ai API name -> the dsh-audit renderer of that wire format.
ADAPTER_APIS: Mapping[str, str] = {"anthropic-messages": "anthropic", "openai-completions": "openai"}
#: Provider ids DSH's native DeepSeek adapter serves by default.
_NATIVE = frozenset({"deepseek-official"})
#: pi-ai catalog providers whose API is fixed by the catalog (pi-ai 0.82.1 ``providers/data``).
_CATALOG_APIS: Mapping[str, str] = {"anthropic": "anthropic-messages"}


@dataclass(frozen=True, slots=True)
class Route:
    """How requests to one provider id went out.

    Attributes:
        provider: the provider id the header names.
        adapter: the dsh-audit renderer (``deepseek``, ``anthropic``, ``openai``), or None when the
            route is unknown or its format has no renderer.
        api: pi-ai's API name for pi-ai routes, ``deepseek-chat-completions`` for the native adapter.
        because: what settled it (evidence seq, a default, the caller's choice) or, without an
            adapter, why not and what would settle it.
    """

    provider: str | None
    adapter: str | None
    api: str | None
    because: str


@dataclass
class RouteEvidence:
    """What the log says about each provider's adapter, collected during the session's one pass."""

    #: provider id -> (api, seq of the first message that shows it)
    seen: dict[str, tuple[str, int]] = field(default_factory=dict)

    def on_event(self, event: Event) -> None:
        if event.type != "assistant/message" or not isinstance(event.data, dict):
            return
        message = event.data.get("message")
        source = message.get("source") if isinstance(message, dict) else None
        if not isinstance(source, dict) or source.get("kind") != "model":
            return
        provider = source.get("provider")
        if not isinstance(provider, str) or provider in self.seen:
            return
        state = source.get("replayState")
        response = state.get("response") if isinstance(state, dict) else None
        if isinstance(response, dict) and response.get("kind") == "pi-ai":
            api = response.get("api")
            if isinstance(api, str):
                self.seen[provider] = (api, event.seq)
        elif state is None:
            self.seen[provider] = ("deepseek-chat-completions", event.seq)


def request_provider(request: Any) -> str | None:
    """The provider id a request was routed by (its header's, or its compaction event's)."""
    config = (getattr(request, "header", None) or {}).get("config") or {}
    provider = config.get("provider") if isinstance(config, dict) else None
    if not isinstance(provider, str):
        provider = (getattr(request, "extra", None) or {}).get("provider")
    return provider if isinstance(provider, str) else None


def _from_api(provider: str, api: str, because: str) -> Route:
    if api == "deepseek-chat-completions":
        return Route(provider, "deepseek", api, because)
    adapter = ADAPTER_APIS.get(api)
    if adapter is None:
        return Route(provider, None, api, f"{because}; dsh-audit renders no {api!r} bodies "
                     f"(it renders {', '.join(sorted(ADAPTER_APIS))} and DeepSeek chat completions)")
    return Route(provider, adapter, api, because)


def route_for(provider: str | None, evidence: RouteEvidence | None = None, *,
              forced: str | None = None, declared: Mapping[str, str] | None = None) -> Route:
    """The route of requests to ``provider``.

    Args:
        provider: the request's provider id (:func:`request_provider`).
        evidence: what the session's log showed (:class:`RouteEvidence`).
        forced: an adapter the caller chose for every request (``--adapter``).
        declared: provider id -> pi-ai API from a route configuration (``--routes``).

    Example:
        >>> route_for("anthropic").adapter
        'anthropic'
        >>> route_for("my-gateway").adapter is None
        True
    """
    if forced is not None:
        return Route(provider, forced, None, f"--adapter {forced}")
    if provider is None:
        return Route(None, None, None, "the request names no provider (no request/header before it)")
    if declared and provider in declared:
        return _from_api(provider, declared[provider], "the route configuration (--routes)")
    found = evidence.seen.get(provider) if evidence is not None else None
    if found is not None:
        api, seq = found
        kind = "pi-ai's replay envelope" if api != "deepseek-chat-completions" else "a native DeepSeek message"
        return _from_api(provider, api, f"{kind} at seq {seq}")
    if provider in _NATIVE:
        return Route(provider, "deepseek", "deepseek-chat-completions", "DSH's default DeepSeek provider")
    if provider in _CATALOG_APIS:
        return _from_api(provider, _CATALOG_APIS[provider], "pi-ai's catalog")
    return Route(provider, None, None, f"provider {provider!r}: the log shows no message from its adapter; "
                 "pass --routes FILE (DSH's llm-pi-ai route configuration) or --adapter")


def request_route(request: Any, evidence: RouteEvidence | None = None, *, forced: str | None = None,
                  declared: Mapping[str, str] | None = None) -> Route:
    """:func:`route_for` the request's provider; a web-search call's body is logged whole and sent
    as it is, whatever adapter the conversation uses."""
    if getattr(request, "kind", None) == "search":
        return Route(request_provider(request), forced or "deepseek", "web-search",
                     "a web-search call: its logged body is what was sent")
    return route_for(request_provider(request), evidence, forced=forced, declared=declared)
