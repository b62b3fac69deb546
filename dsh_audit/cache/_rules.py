"""Provider cache rules, kept as versioned data in ``cache/rules/*.json`` (prices: ``_prices.py``).

Each rule file describes one provider family (DeepSeek, Anthropic, OpenAI) with the ``source`` and
``retrieved`` date of the claims it encodes (see the project's ``docs/cache-accounting.md`` and the
shared ``provider-cache-rules.md``). Nothing here hard-codes a provider figure: code reads the data.
JSON rather than TOML so the package needs no ``tomli`` on Python 3.10.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from typing import Any

import orjson

from .._pyproject import ConfigFileError, check_tool_tables, find_pyproject, read_toml
from ..errors import UsageError
from ..log import ensure_room

__all__ = ["Breakpoints", "CacheRule", "Retention", "key_objects", "load_rules", "pyproject_zero_data_retention",
           "rule_for"]

#: The table and key of ``pyproject.toml`` that state the organization's OpenAI Zero Data Retention.
ZDR_TABLE, ZDR_KEY = "[tool.dsh-audit.cache]", "openai-zero-data-retention"

_RULE_FILES = ("deepseek.json", "anthropic.json", "openai.json")


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


#: A compact JSON body's leading ``"model"`` member (pi-ai writes it first), as a JSON string.
_LEADING_MODEL = re.compile(rb'\{"model":("[^"\\]*(?:\\.[^"\\]*)*")')


def _body_model(body: bytes) -> str | None:
    """The ``model`` of a body that starts with it (pi-ai's bodies do), without parsing the rest."""
    found = _LEADING_MODEL.match(body)
    if found is None:
        return None
    try:
        model = orjson.loads(found.group(1))
    except ValueError:
        return None
    return model if isinstance(model, str) else None


def _listed(model: str, ids: tuple[str, ...]) -> bool:
    """Whether ``model`` is one of ``ids`` or a dated snapshot of one (``gpt-5.5-2026-04-23``)."""
    return any(model == i or (model.startswith(i + "-") and model[len(i) + 1:len(i) + 2].isdigit()) for i in ids)


def _retention(name: Any, ttls: dict[str, float], default: float) -> Retention | None:
    ttl = ttls.get(name) if isinstance(name, str) else None
    return None if ttl is None or ttl == default else Retention(str(name), ttl)


def key_objects(body: bytes, key: str) -> Iterator[tuple[bytes, dict[str, Any]]]:
    """Every ``key`` object of a compact JSON ``body``, as its text (from its ``{`` to the first
    ``}`` after it) and its value; ``b"{}"`` and ``{}`` for one that does not parse alone.

    Found by bytes, not by parsing the body: inside a JSON string a quote is escaped, so
    ``"key":{`` is a ``key`` member wherever it occurs; as :func:`dsh_audit.wire.without_cache_markers`
    drops every such member, every one counts, at any depth. Each search starts at the last
    one's end.

    A slice holds no ``}`` but its last, yet may be as long as the body (a member whose value
    runs on in strings and arrays): its size is checked before orjson parses it
    (:func:`dsh_audit.log.ensure_room`, as :func:`body_object` checks the body: orjson crashes
    when it runs out of memory under a limit; a ``MemoryError`` then says so in one line).

    Example:
        >>> [v for _, v in key_objects(b'{"a":{"cache_control":{"ttl":"1h"}},"cache_control":{"x":{}}}',
        ...                            "cache_control")]
        [{'ttl': '1h'}, {}]
    """
    opening = f'"{key}":{{'.encode()
    at = body.find(opening)
    while at >= 0:
        start = at + len(opening) - 1
        end = body.find(b"}", start)
        if end < 0:
            return
        text = body[start:end + 1]
        ensure_room(text)  # a memory limit that cannot hold its parse: MemoryError, never a crash
        try:
            value = orjson.loads(text)
        except ValueError:  # a nested object: no TTL field read
            text, value = b"{}", {}
        yield text, value
        at = body.find(opening, end)


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


def pyproject_zero_data_retention(search_from: str | os.PathLike[str] | None = None) -> bool | None:
    """The organization's OpenAI Zero Data Retention status as the nearest ``pyproject.toml``
    (searched from ``search_from``, default the current folder; the search stops at the first one
    found) states it: ``openai-zero-data-retention = true|false`` in ``[tool.dsh-audit.cache]``;
    None when there is no such file, table or key.

    Raises:
        UsageError: the file cannot be read or is not TOML, the key is not a boolean, or
            ``[tool.dsh-audit]`` holds a table or key no command reads (a misspelt
            ``openai-zero-data-retenton``: :func:`~dsh_audit._pyproject.check_tool_tables`, worded
            as ``check``'s policy words it); the message names the file and the key.

    Example:
        >>> pyproject_zero_data_retention(search_from="/") in (None, True, False)
        True
    """
    candidate = find_pyproject(search_from)
    if candidate is None:
        return None
    try:
        version = candidate.stat()
    except OSError:  # gone since the search: the reader says why
        return _stated_zdr(str(candidate), 0, -1)
    return _stated_zdr(str(candidate), version.st_mtime_ns, version.st_size)


@lru_cache(maxsize=8)
def _stated_zdr(path: str, _mtime_ns: int, _size: int) -> bool | None:
    """:func:`pyproject_zero_data_retention` of one file version (read once per version)."""
    hint = f"write {ZDR_KEY} = true or false under {ZDR_TABLE}"
    try:
        document = read_toml(path)
    except ConfigFileError as exc:  # only a file that cannot be opened gets the hint about the key
        raise UsageError(exc.message, path=path, hint=(exc.hint or hint) if exc.reason == "open" else None) from None
    tool = document.get("tool")
    table = tool.get("dsh-audit") if isinstance(tool, dict) else None
    if not isinstance(table, dict):
        return None
    check_tool_tables(table, source=path)  # a misspelt table or key would be ignored in silence
    cache = table.get("cache")
    if cache is None:
        return None
    value = cache.get(ZDR_KEY)
    if value is None or isinstance(value, bool):
        return value
    raise UsageError(f"{ZDR_TABLE} {ZDR_KEY} must be true or false, not {_shown(value)}", path=path, hint=hint)


def _shown(value: Any) -> str:
    """A TOML value, briefly and on one line (its text is the user's own file, never a log's)."""
    text = json.dumps(value, ensure_ascii=True, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def body_object(raw: bytes | None) -> dict[str, Any] | None:
    """The JSON object a request body holds; None for no body, a body that is not JSON or not an
    object. A rendered body is as long as the log's prompt: its size is checked first
    (:func:`dsh_audit.log.ensure_room`: orjson crashes when it runs out of memory under a limit).

    Example:
        >>> body_object(b'{"model": "m"}'), body_object(b"[1]"), body_object(b"{"), body_object(None)
        ({'model': 'm'}, None, None, None)
    """
    if raw is None:
        return None
    ensure_room(raw)
    try:
        value = orjson.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
