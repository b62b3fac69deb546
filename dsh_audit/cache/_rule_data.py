"""The packaged provider cache rules (``cache/rules/*.json``, :func:`load_rules`) and the one that
covers a request's provider, model and route (:func:`rule_for`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache
from importlib import resources
from typing import Any

from ._rules import Breakpoints, CacheRule

__all__ = ["load_rules", "rule_for"]

_RULE_FILES = ("deepseek.json", "anthropic.json", "openai.json")


def _read(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((resources.files("dsh_audit.cache") / "rules" / name).read_text("utf-8"))
    return data


def _rule(data: dict[str, Any]) -> CacheRule:
    match = data.get("match") or {}
    retention = data.get("retention") or {}
    default = retention.get("default") or {}
    return CacheRule(
        family=data["family"], title=data["title"], source=data["source"], retrieved=data["retrieved"],
        providers=tuple(match.get("providers", ())), model_prefixes=tuple(match.get("model_prefixes", ())),
        wire_adapter=data["wire_adapter"], render_order=tuple(data["render_order"]),
        prompt_params=tuple(data.get("prompt_params", ())),
        strip_reasoning_without_tool_calls=bool(data.get("strip_reasoning_without_tool_calls")),
        unit_tokens=int(data["unit_tokens"]), unit_configurable=bool(data.get("unit_configurable")),
        min_cacheable_tokens=int(data["min_cacheable_tokens"]),
        min_by_model=tuple((e["model_prefix"], int(e["tokens"])) for e in data.get("min_cacheable_by_model", ())),
        ttl_seconds=float(data["ttl_seconds"]), ttl_refresh_on_hit=bool(data.get("ttl_refresh_on_hit", True)),
        best_effort=bool(data["best_effort"]), write_lag_seconds=float(data["write_lag_seconds"]),
        tolerance_units=int(data.get("tolerance_units", 1)), tolerance_ratio=float(data.get("tolerance_ratio", 0.0)),
        tokenizer=data.get("tokenizer", "estimate"),
        retention_marker=retention.get("marker"), marker_ttl_field=retention.get("marker_ttl_field"),
        retention_key=retention.get("body_key"),
        retention_ttls=tuple((name, float(ttl)) for name, ttl in (retention.get("ttl_seconds") or {}).items()),
        only_24h_models=tuple(default.get("only_24h", ())), both_models=tuple(default.get("both", ())),
        unknown_retention=default.get("unknown"),
        breakpoints=_breakpoints(data.get("breakpoints")),
    )


def _breakpoints(data: dict[str, Any] | None) -> Breakpoints | None:
    if not data:
        return None
    models, options = data["models"], data["options"]
    major, _, minor = str(models["from_version"]).partition(".")
    return Breakpoints(
        model_prefix=models["prefix"], from_version=(int(major), int(minor or 0)),
        min_tokens=int(data["min_cacheable_tokens"]), lookback=int(data["lookback_breakpoints"]),
        ttl_seconds=float(data["ttl_seconds"]), retention=data["retention"], options_key=options["body_key"],
        ttl_field=options["ttl_field"], mode_field=options["mode_field"], explicit_mode=options["explicit_mode"],
        ttls=tuple((name, float(ttl)) for name, ttl in options["ttl_seconds"].items()),
        marker=data["marker"], implicit_roles=tuple(data["implicit_roles"]))


@lru_cache(maxsize=1)
def load_rules() -> tuple[CacheRule, ...]:
    """Every packaged provider rule, DeepSeek first.

    Example:
        >>> [r.family for r in load_rules()]
        ['deepseek', 'anthropic', 'openai']
    """
    return tuple(_rule(_read(name)) for name in _RULE_FILES)


#: Wire adapters whose requests follow another adapter's provider rule. pi-ai's ``openai-responses``
#: renderer (``responses``) writes to OpenAI's Responses API: OpenAI's prompt caching is the same
#: for both of its APIs (provider-cache-rules.md section 3, ``prompt_cache_key`` and
#: ``prompt_cache_retention`` are the same body keys), so such a request takes the ``openai`` rule,
#: compared over its own rendered (Responses) body.
_ADAPTER_FAMILIES: dict[str, str] = {"responses": "openai"}


def rule_for(provider: str | None, model: str | None, *, unit: int | None = None,
             adapter: str | None = None, zero_data_retention: bool | None = None) -> CacheRule:
    """The rule covering a DSH ``provider``/``model`` pair; DeepSeek when nothing matches.

    With a route (``adapter``: the wire format the request went out in, see
    :meth:`dsh_audit.session.Session.route`), a provider id a rule names wins (the server that
    caches: DeepSeek's own API through pi-ai's ``openai-completions`` is DeepSeek's rule, measured
    over the route's body), else the route's family (``responses``, pi-ai's ``openai-responses``,
    takes the ``openai`` rule with its own body as the prompt; a gateway of any name speaking
    ``openai-completions`` the ``openai`` rule); without one the provider id (pi-ai routes a
    ``claude-*`` model through an ``anthropic`` provider), then the model name; an unknown pair falls back to
    DeepSeek, DSH's default route. ``zero_data_retention``: the organization's status, when the
    caller knows it (:meth:`CacheRule.with_zero_data_retention`). A model the rule's
    :attr:`~CacheRule.breakpoints` cover gets the breakpoint-based rule (:meth:`CacheRule.for_model`).
    """
    rules = load_rules()
    # a provider a rule names is the server that caches (DeepSeek's API through pi-ai's
    # openai-completions route caches as DeepSeek does, and is priced so); else the route's family
    chosen = next((r for r in rules if provider and provider in r.providers), None) if adapter else None
    if chosen is None:
        family_adapter = _ADAPTER_FAMILIES.get(adapter, adapter) if adapter else None
        chosen = next((r for r in rules if family_adapter and r.wire_adapter == family_adapter), None)
    if chosen is not None and adapter is not None and adapter != chosen.wire_adapter:
        chosen = replace(chosen, wire_adapter=adapter)  # the provider's rule, over the route's own body
    if chosen is None:
        chosen = next((r for r in rules if provider and provider in r.providers), None)
    if chosen is None:
        chosen = next((r for r in rules if model and any(model.startswith(p) for p in r.model_prefixes)), rules[0])
    return chosen.with_unit(unit).with_zero_data_retention(zero_data_retention).for_model(model)
