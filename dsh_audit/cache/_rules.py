"""Provider cache rules, kept as versioned data in ``cache/rules/*.json`` (prices: ``_prices.py``).

Each rule file describes one provider family (DeepSeek, Anthropic, OpenAI) with the ``source`` and
``retrieved`` date of the claims it encodes (see the project's ``docs/cache-accounting.md`` and the
shared ``provider-cache-rules.md``). Nothing here hard-codes a provider figure: code reads the data.
JSON rather than TOML so the package needs no ``tomli`` on Python 3.10.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from ..errors import UsageError
from ._body_json import _body_model, body_object, key_objects

__all__ = ["Breakpoints", "CacheRule", "Retention"]


@dataclass(frozen=True, slots=True)
class Retention:
    """The cache retention a request's rendered body asks for, when it is not its rule's default.

    Attributes:
        name: the body's own word for it: an Anthropic marker's ``ttl`` (``1h``), OpenAI's
            ``prompt_cache_retention`` (``24h``), or ``none`` (a body with no cache marker at all);
            for an OpenAI body without the key, OpenAI's default for its model (``24h``), or
            ``in_memory_or_24h`` when that default depends on what is not known (the
            organization's Zero Data Retention status, whether the model offers ``24h``).
        ttl_seconds: the idle lifetime of what the request reads and writes (the longer one when
            unknown: a miss within it is a best-effort miss); None: it caches nothing.
    """

    name: str
    ttl_seconds: float | None


@dataclass(frozen=True, slots=True)
class Breakpoints:
    """A family's breakpoint-based caching, for the models it covers (OpenAI GPT-5.6 and later).

    A read happens only at an eligible breakpoint an earlier request wrote: the whole prefix up to
    it must match exactly (no fallback to the longest unmarked prefix, no unit rounding), it must
    hold at least ``min_tokens``, and reads consider the latest ``lookback`` breakpoints.

    Attributes:
        model_prefix / from_version: the model ids it covers: ``gpt-<major>[.<minor>]...`` from
            ``(major, minor)`` on (``gpt-5.6``, ``gpt-5.6-luna``, a dated snapshot, ``gpt-5.10``,
            ``gpt-6``), compared as numbers.
        min_tokens: the strict minimum up to the breakpoint; ``lookback``: breakpoints considered.
        ttl_seconds / retention: the idle lifetime, refreshed on reuse, and its name.
        options_key: the body key holding the cache options (``prompt_cache_options``), with
            ``ttl_field`` (its TTL, one of ``ttls``) and ``mode_field``; ``explicit_mode``, its
            value that turns the implicit breakpoint off.
        marker: the content-block key of an explicit breakpoint (``prompt_cache_breakpoint``).
        implicit_roles: the roles of the message the implicit breakpoint follows (the latest one).
    """

    model_prefix: str
    from_version: tuple[int, int]
    min_tokens: int
    lookback: int
    ttl_seconds: float
    retention: str
    options_key: str
    ttl_field: str
    mode_field: str
    explicit_mode: str
    ttls: tuple[tuple[str, float], ...]
    marker: str
    implicit_roles: tuple[str, ...]

    def covers(self, model: str | None) -> bool:
        """Whether ``model`` is breakpoint based: its version, read as numbers, is ``from_version`` or later.

        Example:
            >>> from dsh_audit.cache import rule_for
            >>> bp = rule_for("openai", "gpt-5.6").breakpoints
            >>> [bp.covers(m) for m in ("gpt-5.6", "gpt-5.6-luna-2026-06-01", "gpt-5.10", "gpt-6", "gpt-5.5", "gpt-5")]
            [True, True, True, True, False, False]
            >>> [bp.covers(m) for m in ("gpt-\uff15.\uff16", "gpt-" + "9" * 5000, "gpt-5." + "9" * 5000)]
            [False, False, False]
        """
        if not model or not model.startswith(self.model_prefix):
            return False
        found = _VERSION.match(model, len(self.model_prefix))
        if found is None:
            return False
        return (int(found.group(1)), int(found.group(2) or 0)) >= self.from_version


#: ``<major>[.<minor>]`` after a model prefix, each a whole run of ASCII digits ("５" is no version
#: digit), at most 9 long (a model id is log text: a run of thousands of digits is no version).
_VERSION = re.compile(r"([0-9]{1,9})(?![0-9])(?:\.([0-9]{1,9})(?![0-9]))?")


@dataclass(frozen=True, slots=True)
class CacheRule:
    """One provider family's prefix-cache behaviour.

    Attributes:
        family: ``deepseek``, ``anthropic`` or ``openai``.
        source: where the claims come from; ``retrieved``: when.
        providers / model_prefixes: which DSH ``config.provider`` / ``config.model`` values it covers.
        wire_adapter: the ``dsh_audit.wire`` renderer whose body is the request's prompt.
        render_order: order of the prompt segments (``params``, ``system``, ``tools``, ``messages``).
        prompt_params: body keys that change the rendered prompt (thinking, effort, ...).
        strip_reasoning_without_tool_calls: DeepSeek ignores ``reasoning_content`` of an assistant
            message without tool calls, so it is not part of the cached prefix.
        unit_tokens: hits count in whole units (rounded down); ``unit_configurable`` allows ``--unit``.
        min_cacheable_tokens: below this nothing is cached (``min_by_model`` refines it per model).
        ttl_seconds: idle lifetime (lower bound for best-effort providers); refreshed on a hit.
        best_effort: whether a miss with an intact warm prefix is a documented possibility.
        write_lag_seconds: how long after dispatch a prompt is assumed readable by the next request.
        tolerance_units / tolerance_ratio: how far actual may fall below a level before it counts.
        retention_marker: the key that marks a cache breakpoint in a body (Anthropic
            ``cache_control``): a body without one caches nothing; ``marker_ttl_field`` names the
            marker's TTL field (``ttl``).
        retention_key: a top-level body key naming the retention (OpenAI ``prompt_cache_retention``).
        retention_ttls: retention name (a marker's TTL or the key's value) -> idle lifetime in seconds.
        only_24h_models / both_models: OpenAI model ids (and their dated snapshots) whose default
            retention, for a body without ``retention_key``, is ``24h`` whatever the organization
            (only 24h offered), or ``24h`` without Zero Data Retention and ``in_memory`` with it.
        unknown_retention: the name of a default retention that is not known (None: the rule has
            no retention default; a body without the key keeps ``ttl_seconds``).
        zero_data_retention: the organization's Zero Data Retention status (None: not stated, as
            the log does not record it); see :meth:`default_retention`.
        breakpoints: the family's breakpoint-based caching for the models it covers (OpenAI
            GPT-5.6 and later); ``breakpoint_based``: this rule is the one for such a model
            (:func:`rule_for` picks it by model id: :meth:`for_model`).
    """

    family: str
    title: str
    source: str
    retrieved: str
    providers: tuple[str, ...]
    model_prefixes: tuple[str, ...]
    wire_adapter: str
    render_order: tuple[str, ...]
    prompt_params: tuple[str, ...]
    strip_reasoning_without_tool_calls: bool
    unit_tokens: int
    unit_configurable: bool
    min_cacheable_tokens: int
    min_by_model: tuple[tuple[str, int], ...]
    ttl_seconds: float
    ttl_refresh_on_hit: bool
    best_effort: bool
    write_lag_seconds: float
    tolerance_units: int
    tolerance_ratio: float
    tokenizer: str
    retention_marker: str | None = None
    marker_ttl_field: str | None = None
    retention_key: str | None = None
    retention_ttls: tuple[tuple[str, float], ...] = ()
    only_24h_models: tuple[str, ...] = ()
    both_models: tuple[str, ...] = ()
    unknown_retention: str | None = None
    zero_data_retention: bool | None = None
    breakpoints: Breakpoints | None = None
    breakpoint_based: bool = False

    def min_tokens(self, model: str | None) -> int:
        """The minimum cacheable prefix for ``model`` (first matching ``min_by_model`` entry)."""
        for prefix, tokens in self.min_by_model:
            if model and model.startswith(prefix):
                return tokens
        return self.min_cacheable_tokens

    def tolerance(self, level: int) -> int:
        """Tokens ``actual`` may fall short of ``level`` and still count as meeting it."""
        return max(self.unit_tokens * self.tolerance_units, int(level * self.tolerance_ratio))

    def with_unit(self, unit: int | None) -> CacheRule:
        """This rule with ``unit_tokens`` overridden when the rule allows it."""
        if unit is None or not self.unit_configurable:
            return self
        if unit < 1:
            raise UsageError(f"cache unit must be a positive token count, got {unit}", hint="try --unit 64")
        return replace(self, unit_tokens=unit)

    def with_zero_data_retention(self, zdr: bool | None) -> CacheRule:
        """This rule judging for an organization with (``True``) or without (``False``) Zero Data
        Retention; None, or a rule without a retention default, leaves it as it is."""
        if zdr is None or self.unknown_retention is None:
            return self
        return replace(self, zero_data_retention=zdr)

    def for_model(self, model: str | None) -> CacheRule:
        """This rule as it judges ``model``: for a model :attr:`breakpoints` covers, breakpoint
        based (hits in whole tokens, its minimum and TTL); for any other, this rule itself.

        Example:
            >>> from dsh_audit.cache import rule_for
            >>> rule = rule_for("openai", "gpt-5.6-luna")
            >>> rule.breakpoint_based, rule.unit_tokens, rule.min_tokens("gpt-5.6-luna"), rule.ttl_seconds
            (True, 1, 1024, 1800.0)
            >>> rule_for("openai", "gpt-5.5").breakpoint_based
            False
        """
        bp = self.breakpoints
        if bp is None or self.breakpoint_based or not bp.covers(model):
            return self
        return replace(self, breakpoint_based=True, unit_tokens=1, min_cacheable_tokens=bp.min_tokens,
                       min_by_model=(), ttl_seconds=bp.ttl_seconds)

    def default_retention(self, model: str | None) -> Retention | None:
        """The retention of a body that names none (no ``retention_key``), or None when it is
        ``ttl_seconds``: OpenAI's default, by model and Zero Data Retention status (spec §3).

        ``only_24h_models`` get ``24h``. A model OpenAI does not serve (no ``model_prefixes``
        match: a gateway's own) keeps ``ttl_seconds``. For an organization with Zero Data
        Retention every other model gets ``in_memory`` (``ttl_seconds``); without it a
        ``both_models`` model gets ``24h``. Anything else is not known: ``unknown_retention``,
        judged with the longest TTL the rule lists, so that a miss within it is a best-effort
        miss (never ``cold_ttl``, never ``as_expected``) and a miss after it is ``cold_ttl``.

        Example:
            >>> from dsh_audit.cache import rule_for
            >>> rule = rule_for("openai", "gpt-5.4")
            >>> rule.default_retention("gpt-5.5"), rule.default_retention("gpt-5.4")
            (Retention(name='24h', ttl_seconds=86400.0), Retention(name='in_memory_or_24h', ttl_seconds=86400.0))
            >>> rule.with_zero_data_retention(True).default_retention("gpt-5.4") is None
            True
            >>> rule.default_retention("local-coder") is None
            True
        """
        if self.unknown_retention is None or not model:
            return None
        ttls = dict(self.retention_ttls)
        if _listed(model, self.only_24h_models):
            return _retention("24h", ttls, self.ttl_seconds)
        if not any(model.startswith(p) for p in self.model_prefixes):
            return None
        if self.zero_data_retention is True:
            return None
        if self.zero_data_retention is False and _listed(model, self.both_models):
            return _retention("24h", ttls, self.ttl_seconds)
        return self._unknown()

    def _unknown(self) -> Retention | None:
        """The unknown retention, judged with the longest TTL the rule lists."""
        longest = max((ttl for _, ttl in self.retention_ttls), default=self.ttl_seconds)
        if self.unknown_retention is None or longest == self.ttl_seconds:
            return None
        return Retention(self.unknown_retention, longest)

    def retention(self, body: bytes | None, *, model: str | None = None) -> Retention | None:
        """The retention a rendered wire ``body`` asks for, or None when it is ``ttl_seconds``
        (or the body is unknown, or the rule reads no retention from bodies).

        Anthropic (``retention_marker``): a body with no marker caches nothing (``none``); else the
        longest TTL any marker names (a prefix written at a 1-hour breakpoint lives an hour).
        OpenAI (``retention_key``): the key's value (``in_memory`` is ``ttl_seconds``); a body
        without the key, or with a value the rule does not list, gets :meth:`default_retention`
        for the body's ``model``. Without a body, an OpenAI request of ``model`` gets what both
        a body without the key and one with ``24h`` (a route's ``cacheRetention: long``) agree
        on: ``24h`` when both are ``24h``, else unknown (or ``ttl_seconds`` for a model OpenAI does
        not serve).

        Example:
            >>> from dsh_audit.cache import rule_for
            >>> rule = rule_for("anthropic", "claude-sonnet-4-5")
            >>> rule.retention(b'{"system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral","ttl":"1h"}}]}')
            Retention(name='1h', ttl_seconds=3600.0)
            >>> rule.retention(b'{"system":[{"type":"text","text":"S"}]}'), rule.retention(None)
            (Retention(name='none', ttl_seconds=None), None)
        """
        if self.breakpoints is not None and self.breakpoint_based:
            return _breakpoint_retention(self.breakpoints, body)
        ttls = dict(self.retention_ttls)
        if body is None:
            if self.retention_key is None or self.unknown_retention is None:
                return None
            default = self.default_retention(model)
            if default is None and model and any(model.startswith(p) for p in self.model_prefixes):
                return self._unknown()  # in_memory, or 24h if the route asked for it
            return default
        if self.retention_marker is not None:
            names = [m.get(self.marker_ttl_field) if self.marker_ttl_field else None
                     for _, m in key_objects(body, self.retention_marker)]
            if not names:
                return Retention("none", None)
            longest = max(names, key=lambda name: ttls.get(name, self.ttl_seconds) if isinstance(name, str)
                          else self.ttl_seconds)
            return _retention(longest, ttls, self.ttl_seconds)
        if self.retention_key is None:
            return None
        if f'"{self.retention_key}"'.encode() in body:
            top = body_object(body)  # only a body that names the key: usually none is
            if top is None:
                return None
            name = top.get(self.retention_key)
            if isinstance(name, str) and name in ttls:
                return _retention(name, ttls, self.ttl_seconds)
            found = top.get("model")
            return self.default_retention(found if isinstance(found, str) else None)
        return self.default_retention(_body_model(body))

    def implicit_breakpoint(self, body: dict[str, Any] | None) -> bool:
        """Whether a breakpoint-based request's ``body`` (None: not known) has the implicit
        breakpoint: its cache options do not ask for explicit breakpoints only."""
        bp = self.breakpoints
        if bp is None or body is None:
            return True
        options = body.get(bp.options_key)
        return not (isinstance(options, dict) and options.get(bp.mode_field) == bp.explicit_mode)

    def to_json(self) -> dict[str, Any]:
        found = {"family": self.family, "source": self.source, "retrieved": self.retrieved,
                 "unit_tokens": self.unit_tokens, "min_cacheable_tokens": self.min_cacheable_tokens,
                 "ttl_seconds": self.ttl_seconds, "best_effort": self.best_effort,
                 "write_lag_seconds": self.write_lag_seconds}
        if self.breakpoint_based and self.breakpoints is not None:
            found["breakpoint_lookback"] = self.breakpoints.lookback  # a breakpoint-based model's rule
        return found


def _breakpoint_retention(bp: Breakpoints, body: bytes | None) -> Retention:
    """A breakpoint-based request's retention: its body's cache options' TTL when ``bp`` lists
    it, else ``bp``'s own (``30m``), named either way."""
    ttls = dict(bp.ttls)
    if body is not None and f'"{bp.options_key}"'.encode() in body:
        top = body_object(body)  # only a body that names the key: pi-ai sends it for none of DSH's routes
        options = top.get(bp.options_key) if top is not None else None
        name = options.get(bp.ttl_field) if isinstance(options, dict) else None
        if isinstance(name, str) and name in ttls:
            return Retention(name, ttls[name])
    return Retention(bp.retention, bp.ttl_seconds)


def _listed(model: str, ids: tuple[str, ...]) -> bool:
    """Whether ``model`` is one of ``ids`` or a dated snapshot of one (``gpt-5.5-2026-04-23``)."""
    return any(model == i or (model.startswith(i + "-") and model[len(i) + 1:len(i) + 2].isdigit()) for i in ids)


def _retention(name: Any, ttls: dict[str, float], default: float) -> Retention | None:
    ttl = ttls.get(name) if isinstance(name, str) else None
    return None if ttl is None or ttl == default else Retention(str(name), ttl)
