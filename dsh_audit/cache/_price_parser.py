"""The price document parser: a document's providers, windows, models, periods and tiers read
into values (:class:`_Provider`), every key checked (one-line errors naming the file and key).

Shape (USD per ``per_tokens`` tokens)::

    {"providers": {"deepseek": {
        "windows": [{"from": "2026-08-23T00:00:00Z", "utc_offset": "+08:00",
                     "peak_hours": ["09:00-12:00"], "days": ["mon", ...], "holidays": ["2026-10-01"]}],
        "models": {"deepseek-flash": [{"from": "...", "cache_miss": 0.3, "cache_read": 0.006,
                                       "output": 1.2, "off_peak": {...}, "source": "...", "retrieved": "..."}],
                   "deepseek-chat": [{"from": "...", "billed_as": "deepseek-v4-flash"}]}},
        "openai": {"models": {"gpt-5.4": [{"cache_miss": 2.5, "cache_read": 0.25, "output": 15.0, ...,
            "tiers": [{"prompt_tokens_above": 272000, "cache_miss": 5.0, "cache_read": 0.5,
                       "output": 22.5, "source": "..."}]}]}}}}

A model's value may be one rate object instead of a list (it then applies from any date on).
``tiers`` are request-wide long-context rates: a request whose prompt (cache-miss + cache-read +
cache-write tokens, the provider's own prompt count) exceeds a tier's ``prompt_tokens_above`` is
billed wholly at the rates of the highest such tier (pi-ai's ``calculateCost`` rule); a period
with ``off_peak`` rates needs them in each of its tiers too. ``verified`` and ``corroborated``
texts beside a rate are documentation: the parser does not read them. Any other key is refused
(one line naming the file and key: a misspelt ``cache_wirte_5m`` would otherwise leave the write
rate out, silently), and so is a rate beside ``billed_as`` (an alias has its model's rates), two
rates of one model or two windows of one provider from the same moment (the file's order would
decide which is in force), and a ``billed_as`` loop (``a`` billed as ``b``, ``b`` as ``a``, at any
one moment: no request of them could be priced). A loop-free chain of aliases is followed to its end.
"""

from __future__ import annotations

import bisect
import math
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from typing import Any

from .._listing import listed
from .._pyproject import dotted_key, key_line
from ..errors import UsageError, did_you_mean
from ._money import _BUCKETS, Rates
from ._price_files import _PRICES_HINT, _PYPROJECT_LAYER, _Constant, _is_toml, _shown
from ._price_window import _Window, _iso
from ._rule_data import load_rules

#: Keys a price table may hold beside the ones it reads: documentation of where a rate came from.
_NOTES = frozenset({"source", "retrieved", "verified", "corroborated"})
_RATE_KEYS = frozenset(_BUCKETS)
#: The keys each kind of table of a price document may hold.
_KEYS = {
    "document": frozenset({"providers", "per_tokens", "currency", "note", "schema", "gaps"}),
    "provider": frozenset({"models", "windows"}),
    "window": frozenset({"from", "utc_offset", "peak_hours", "days", "holidays"}) | _NOTES,
    "period": frozenset({"from", "billed_as", "off_peak", "tiers"}) | _RATE_KEYS | _NOTES,
    "alias": frozenset({"from", "billed_as"}) | _NOTES,
    "tier": frozenset({"prompt_tokens_above", "off_peak"}) | _RATE_KEYS | _NOTES,
    "off_peak": _RATE_KEYS | _NOTES,
}
_DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_REQUIRED = ("cache_miss", "cache_read", "output")
_HOURS = re.compile(r"(\d\d):([0-5]\d)-(\d\d):([0-5]\d)", re.ASCII)  # fullmatch: no trailing newline
_OFFSET = re.compile(r"([+-])(\d\d):([0-5]\d)", re.ASCII)
#: A holiday as the window compares it with a request's local date (``date.isoformat()``): a
#: ``2027-1-15`` that ``strptime`` takes would never match, so it is refused.
_DAY = re.compile(r"\d{4}-\d\d-\d\d", re.ASCII)  # fullmatch
#: A date written with fewer digits (``2027-1-15``), which an error spells out in full.
_SHORT_DAY = re.compile(r"(\d{1,4})-(\d{1,2})-(\d{1,2})", re.ASCII)  # fullmatch
#: Largest rate accepted, USD per ``per_tokens`` tokens (far above any list price; keeps costs finite).
_MAX_RATE = 1e9
#: The shape of price document this parser reads (the packaged table's ``schema``): a document that
#: names another was written for another dsh-audit; one that names none is read as this one.
_SCHEMA = 2


@dataclass(frozen=True, slots=True)
class _Tier:
    above: int  # prompt tokens
    rates: Rates
    off_peak: Rates | None
    source: str


@dataclass(frozen=True, slots=True)
class _Period:
    start: float
    rates: Rates | None
    off_peak: Rates | None
    billed_as: str | None
    source: str
    retrieved: str
    tiers: tuple[_Tier, ...] = ()

    def tier(self, prompt_tokens: int | None) -> _Tier | None:
        """The tier that prices a request of ``prompt_tokens`` prompt tokens (None: base rates)."""
        if prompt_tokens is None or not self.tiers:
            return None
        return max((t for t in self.tiers if prompt_tokens > t.above), key=lambda t: t.above, default=None)


@dataclass
class _Provider:
    windows: list[_Window] = field(default_factory=list)
    models: dict[str, list[_Period]] = field(default_factory=dict)


class _Parser:
    """Reads one price document into ``providers``, raising one-line errors naming file and key,
    with the ``hint`` of the layer the document is (:data:`_PRICES_HINT` by default): an error in a
    user's file names that file, never the packaged table."""

    def __init__(self, path: str, providers: dict[str, _Provider], *, hint: str = _PRICES_HINT) -> None:
        self.path, self.providers, self.hint = path, providers, hint
        #: whether the document is TOML: a value an error quotes is spelt as the file writes it
        self.toml = _is_toml(path)
        #: this document's aliases, each with its key as written: (key, provider, model, period)
        self.aliases: list[tuple[str, str, str, _Period]] = []
        self.data: Any = None  # the document read (:meth:`units` first): where :meth:`line` finds a key

    def fail(self, key: str, problem: str) -> UsageError:
        """The one-line error of ``key``; in a ``pyproject.toml``'s table, at the line that writes the
        key (or, for one missing, the table's header) when one line does, as every other error in
        that file is (:func:`~dsh_audit._pyproject.key_line`): ``FILE:LINE: [tool.dsh-audit.prices] ...``."""
        line = self.line(key)
        if line is None:
            return UsageError(f"price table key {key}: {problem}", path=self.path, hint=self.hint)
        file = self.path.removesuffix(_PYPROJECT_LAYER)
        return UsageError(f"{_PYPROJECT_LAYER.strip()} price table key {key}: {problem}", path=file, line=line,
                          hint=self.hint)

    def line(self, key: str) -> int | None:
        """The line of the ``pyproject.toml`` whose ``[tool.dsh-audit.prices]`` table this document
        is that writes ``key`` (a dotted key as :meth:`fail` names it), or the header of the table
        that lacks it; None for any other document, or a key no one line writes (a list's item)."""
        if not self.path.endswith(_PYPROJECT_LAYER):
            return None
        try:
            parts = _key_parts(tomllib.loads(f"{key} = 0"))  # the key's parts, unquoted as TOML reads them
        except ValueError:  # "(top level)", an item of a list: no line
            return None
        table: tuple[str, ...] = ("tool", "dsh-audit", "prices")
        value = self.data
        for part in parts[:-1]:
            value = value.get(part) if isinstance(value, dict) else None
            table += (part,)
        if not isinstance(value, dict):
            return None
        file = self.path.removesuffix(_PYPROJECT_LAYER)
        if parts[-1] in value:
            return key_line(file, table, parts[-1], value[parts[-1]])
        return key_line(file, table, None)

    def shown(self, value: Any) -> str:
        """``value`` as this document's language writes it (:func:`_shown`)."""
        return _shown(value, toml=self.toml)

    def table(self, value: Any, key: str, kind: str | None = None) -> dict[str, Any]:
        """``value`` as a table; with ``kind`` (one of :data:`_KEYS`), refused when it holds a key
        that kind of table does not (a misspelt rate would be left out silently)."""
        if not isinstance(value, dict):
            raise self.fail(key, "must be a table/object")
        if kind is not None:
            unknown = sorted(str(k) for k in value if k not in _KEYS[kind])
            if unknown:
                name = unknown[0]
                where = dotted_key(name) if key == "(top level)" else f"{key}.{dotted_key(name)}"
                if kind == "alias" and name in _KEYS["period"]:
                    problem = "beside billed_as: an alias is billed at its model's rates (remove it, or the billed_as)"
                else:
                    problem = f"unknown key{did_you_mean(name, _KEYS[kind])}; known: {', '.join(sorted(_KEYS[kind]))}"
                raise self.fail(where, problem)
        return value

    def instant(self, value: Any, key: str) -> float:
        if value is None:
            return -math.inf
        if isinstance(value, datetime):  # TOML datetimes
            stamp = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
            return stamp.timestamp()
        try:
            stamp = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            raise self.fail(key, f"{self.shown(value)} is not an ISO date or date-time") from None
        return (stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)).timestamp()

    def rate(self, value: Any, key: str) -> float:
        # compared, not passed to math.isfinite: an integer past the double range would overflow
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= math.inf:
            raise self.fail(key, f"{self.shown(value)} is not a rate (a number >= 0)")
        if value > _MAX_RATE:
            raise self.fail(key, f"{self.shown(value)} is above {_MAX_RATE:g}, not a price")
        return float(value)

    def rates(self, data: dict[str, Any], key: str) -> Rates:
        for name in _REQUIRED:
            if name not in data:
                raise self.fail(f"{key}.{name}", "missing rate")
        values = {k: self.rate(data[k], f"{key}.{k}") for k in _BUCKETS if k in data}
        return Rates(**values)

    def off_peak(self, data: dict[str, Any], key: str) -> Rates | None:
        if "off_peak" not in data:
            return None
        return self.rates(self.table(data["off_peak"], f"{key}.off_peak", "off_peak"), f"{key}.off_peak")

    def tiers(self, data: dict[str, Any], key: str, source: str, off_peak: bool) -> tuple[_Tier, ...]:
        items = data.get("tiers", [])
        if not isinstance(items, list):
            raise self.fail(f"{key}.tiers", "must be a list")
        tiers: dict[int, _Tier] = {}
        for i, item in enumerate(items):
            where = f"{key}.tiers[{i}]"
            item = self.table(item, where, "tier")
            above = item.get("prompt_tokens_above")
            if isinstance(above, bool) or not isinstance(above, int) or above < 0:
                raise self.fail(f"{where}.prompt_tokens_above",
                                f"{self.shown(above)} is not a token count (a whole number >= 0)")
            if above in tiers:
                raise self.fail(f"{where}.prompt_tokens_above",
                                f"a tier above {self.shown(above)} tokens is already declared")
            if off_peak and "off_peak" not in item:
                raise self.fail(f"{where}.off_peak", "missing: the rate has off-peak rates, so each tier needs them")
            tiers[above] = _Tier(above, self.rates(item, where), self.off_peak(item, where),
                                 str(item.get("source") or source))
        return tuple(sorted(tiers.values(), key=lambda t: t.above))

    def period(self, data: Any, key: str) -> _Period:
        data = self.table(data, key, "alias" if "billed_as" in data else "period")
        billed_as = data.get("billed_as")
        if billed_as is not None and not isinstance(billed_as, str):
            raise self.fail(f"{key}.billed_as", "must be a model name")
        if billed_as is not None and "tiers" in data:
            raise self.fail(f"{key}.tiers", "an alias (billed_as) takes its model's tiers; declare them there")
        rates = None if billed_as is not None else self.rates(data, key)
        off_peak = None if billed_as is not None else self.off_peak(data, key)
        source = str(data.get("source") or self.path)
        tiers = () if billed_as is not None else self.tiers(data, key, source, off_peak is not None)
        return _Period(self.instant(data.get("from"), f"{key}.from"), rates, off_peak, billed_as,
                       source, str(data.get("retrieved") or ""), tiers)

    def window(self, data: Any, key: str) -> _Window:
        data = self.table(data, key, "window")
        match = _OFFSET.fullmatch(str(data.get("utc_offset", "+00:00")))
        if match is None or int(match[2]) > 23:
            raise self.fail(f"{key}.utc_offset",
                            f"{self.shown(data.get('utc_offset'))} is not +HH:MM (HH 00-23, MM 00-59)")
        offset = (1 if match[1] == "+" else -1) * (int(match[2]) * 60 + int(match[3]))
        hours = []
        spans = data.get("peak_hours")
        if not isinstance(spans, list):
            raise self.fail(f"{key}.peak_hours", "missing list of HH:MM-HH:MM spans")
        for i, span in enumerate(spans):
            found = _HOURS.fullmatch(span) if isinstance(span, str) else None
            a = int(found[1]) * 60 + int(found[2]) if found else -1
            b = int(found[3]) * 60 + int(found[4]) if found else -1
            if found is None or not 0 <= a < b <= 24 * 60:
                raise self.fail(f"{key}.peak_hours[{i}]", f"{self.shown(span)} is not HH:MM-HH:MM (start before end)")
            hours.append((a, b))
        days = data.get("days", list(_DAYS))
        if not isinstance(days, list) or any(d not in _DAYS for d in days):
            raise self.fail(f"{key}.days", f"{self.shown(days)} is not a list of {', '.join(_DAYS)}")
        holidays = data.get("holidays", [])
        if not isinstance(holidays, list):
            raise self.fail(f"{key}.holidays", "must be a list of YYYY-MM-DD dates")
        for i, day in enumerate(holidays):
            if not _holiday(day):
                raise self.fail(f"{key}.holidays[{i}]", _not_a_holiday(day, toml=self.toml))
        return _Window(self.instant(data.get("from"), f"{key}.from"), offset, tuple(hours),
                       frozenset(_DAYS.index(d) for d in days), frozenset(str(d) for d in holidays))

    def document(self, data: Any) -> None:
        document = self.table(data, "(top level)")
        self.schema(document)
        if "providers" not in document:
            raise self.fail("providers", "missing: a price table holds its rates under providers "
                                         "(providers.PROVIDER.models.MODEL)")
        providers = self.table(document["providers"], "providers")
        self.table(data, "(top level)", "document")  # then a key beside it the table does not know
        for name, body in providers.items():
            key = dotted_key("providers", name)  # quoted as TOML writes it, as its warnings name it
            body = self.table(body, key, "provider")
            target = self.providers.setdefault(name, _Provider())
            if "windows" in body:
                if not isinstance(body["windows"], list):
                    raise self.fail(f"{key}.windows", "must be a list")
                windows = [self.window(w, f"{key}.windows[{i}]") for i, w in enumerate(body["windows"])]
                self.distinct_starts([w.start for w in windows], [f"{key}.windows[{i}]" for i in range(len(windows))],
                                     "a window")
                target.windows = sorted(windows, key=lambda w: w.start)
            models = self.table(body.get("models", {}), f"{key}.models")
            for model, periods in models.items():
                items = periods if isinstance(periods, list) else [periods]
                if not items:
                    raise self.fail(f"{key}.models.{dotted_key(model)}", "has no rates")
                # a list's periods by index; one table (TOML's [providers.P.models.M]) by its own key
                where = [f"{key}.models.{dotted_key(model)}" + (f"[{i}]" if isinstance(periods, list) else "")
                         for i in range(len(items))]
                parsed = [self.period(p, where[i]) for i, p in enumerate(items)]
                self.distinct_starts([p.start for p in parsed], where, "a rate")
                self.aliases.extend((at, name, model, period) for at, period in zip(where, parsed)
                                    if period.billed_as is not None)
                target.models[model] = sorted(parsed, key=lambda p: p.start)

    def distinct_starts(self, starts: list[float], where: list[str], what: str) -> None:
        """Refuse two items of one list (a model's rates, a provider's windows) that take effect at
        the same moment (their ``from``, however written; none: from any date on): which one is in
        force would be decided by the order of the file, silently. The error names the later one."""
        seen: dict[float, str] = {}
        for start, key in zip(starts, where):
            if start in seen:
                since = f"from {_iso(start)}" if math.isfinite(start) else "from any date on (no from)"
                raise self.fail(f"{key}.from", f"{what} {since} is already declared ({seen[start]}): "
                                               "give each a different from, or drop one")
            seen[start] = key

    def schema(self, document: dict[str, Any]) -> None:
        """Refuse a ``schema`` other than :data:`_SCHEMA` (a whole number; absent: this one): a
        document of another shape would be read as this one, its keys taken for others'."""
        value = document.get("schema", _SCHEMA)
        if isinstance(value, bool) or not isinstance(value, int) or value != _SCHEMA:
            raise self.fail("schema", f"{self.shown(value)} is not {_SCHEMA}, the price table schema this dsh-audit "
                                      f"reads (leave it out, or write {_SCHEMA})")

    def units(self, data: Any, per: int, currency: str) -> None:
        """Refuse a ``per_tokens`` or ``currency`` other than the packaged table's: every rate of every
        layer is read as ``currency`` per ``per`` tokens, so a file of rates per thousand tokens would
        otherwise be priced a thousand times too low, silently."""
        self.data = data
        document = self.table(data, "(top level)")
        for key, packaged in (("per_tokens", per), ("currency", currency)):
            value = document.get(key, packaged)
            if isinstance(value, bool) or value != packaged:
                shown = self.shown(value)
                unit = f"per {per} tokens" if key == "per_tokens" else f"in {currency}"
                raise self.fail(key, f"{shown} is not the packaged table's {self.shown(packaged)}: every rate is read "
                                     f"{unit} (leave it out and give the rates {unit})")

    def constants(self, data: Any) -> None:
        """Refuse JSON's ``NaN``, ``Infinity`` or ``-Infinity`` (:class:`_Constant`) where reading
        the document left it (a rate refuses one first, by its key): a documentation key or
        ``gaps``, which the parser does not read, would otherwise take a file ``JSON.parse`` refuses.
        A loop, not recursion: the parser reads documents nested deeper than Python's stack."""
        stack: list[tuple[str, Any]] = [("", data)]
        while stack:
            key, item = stack.pop()
            if isinstance(item, _Constant):
                raise self.fail(key, f"{item.literal} is not JSON")
            if isinstance(item, dict):
                stack.extend((f"{key}.{dotted_key(str(k))}" if key else dotted_key(str(k)), v)
                             for k, v in reversed(item.items()))
            elif isinstance(item, list):
                stack.extend((f"{key}[{i}]", v) for i, v in reversed(list(enumerate(item))))

    def check_references(self) -> None:
        """Refuse an alias of this document whose model is in no layer read so far (this one's
        included), or is the alias itself, or that leads back to itself through other aliases in
        force at one moment (``a`` billed as ``b``, ``b`` as ``a``): every request of it would be
        unpriced. The error names this document, where it is written (a loop the layers read so
        far make always holds an alias of this one: the earlier ones were checked alone)."""
        for key, name, model, period in self.aliases:
            if period.billed_as not in self.providers[name].models:
                # a model of another provider: its rates are not this provider's (no alias across providers)
                others = [other for other, table in self.providers.items() if period.billed_as in table.models]
                raise self.fail(f"{key}.billed_as", (
                    f"{self.shown(period.billed_as)} is a model of provider {', '.join(others)}, not of {name}: "
                    f"billed_as names a model of the same provider ({name})") if others
                    else f"no model {self.shown(period.billed_as)} in the price table")
            if period.billed_as == model:  # never a price: every request of it would be unpriced
                raise self.fail(f"{key}.billed_as", "names the model itself; give its rates instead")
        for name in dict.fromkeys(name for _, name, _, _ in self.aliases):
            self.check_loops(name)

    def check_loops(self, name: str) -> None:
        """Refuse a ``billed_as`` loop among the models of provider ``name``. A loop, if any, is
        whole from the latest start among its periods on, an alias's: so each alias is followed
        from the moment it begins (before any ``from``, for one with none), and nowhere else."""
        models = self.providers[name].models
        keys = {id(period): (i, key) for i, (key, provider, _, period) in enumerate(self.aliases) if provider == name}
        begins: dict[float, list[str]] = {}
        for model, periods in models.items():
            for begun in periods:
                if begun.billed_as is not None:
                    begins.setdefault(begun.start, []).append(model)
        for when, starts in sorted(begins.items()):
            def alias(model: str) -> _Period | None:  # the period of ``model`` in force at ``when``, if an alias
                periods = models.get(model, [])
                count = bisect.bisect_right([p.start for p in periods], when)  # sorted by start: those begun
                found = periods[count - 1] if count else None
                return found if found is not None and found.billed_as is not None else None

            ends: set[str] = set()  # models whose chain at ``when`` ends at rates (or at no rate)
            for model in starts:
                chain: list[tuple[str, _Period]] = []
                seen: dict[str, int] = {}
                at: str | None = model
                while at is not None and at not in ends:
                    period = alias(at)
                    if period is None:
                        break
                    if at in seen:
                        self.refuse_loop(name, chain[seen[at]:], keys, when)
                    seen[at] = len(chain)
                    chain.append((at, period))
                    at = period.billed_as
                ends.update(seen)

    def refuse_loop(self, name: str, loop: list[tuple[str, _Period]], keys: dict[int, tuple[int, str]],
                    when: float) -> None:
        """Raise the error naming the ``billed_as`` loop ``loop`` of provider ``name`` (each model with
        its alias period), at the key of it written first in this document (``keys``: each alias's
        place and key), the loop read from there, its other keys in this document in the text."""
        mine = sorted((keys[id(period)], at) for at, (_, period) in enumerate(loop) if id(period) in keys)
        # (never without one of this document's: a loop of earlier layers alone was refused with them)
        (_, key), at = mine[0] if mine else ((0, dotted_key("providers", name, "models", loop[0][0])), 0)
        names = [m for m, _ in loop[at:] + loop[:at]] + [loop[at][0]]
        others = [f"{k}.billed_as" for (_, k), _ in mine[1:]]
        if len(loop) > len(mine):
            others.append("the aliases of an earlier price table")
        since = f" (in force from {_iso(when)})" if math.isfinite(when) else ""
        also = f", with {' and '.join(others)}" if others else ""
        raise self.fail(f"{key}.billed_as", f"a billed_as loop{since}: {' -> '.join(map(repr, names))}{also}; "
                                            "no rate ends it, so no request of them could be priced: give one "
                                            "of them its rates")


#: The lookup a quote makes (``PriceBook._table``): the table and model name a request through a
#: provider for a model is priced from, or None.
_Lookup = Callable[[str, str], tuple[str, str] | None]


def _key_parts(document: dict[str, Any]) -> tuple[str, ...]:
    """The parts of the one dotted key ``document`` (``tomllib.loads("a.b = 0")``) holds."""
    parts: list[str] = []
    level: Any = document
    while isinstance(level, dict):
        name, level = next(iter(level.items()))
        parts.append(name)
    return tuple(parts)


def unread_providers(path: str, data: Any, before: Iterable[str], providers: Mapping[str, _Provider],
                     priced_from: _Lookup) -> list[str]:
    """A warning for each provider of the price document ``data`` (read from ``path``, already
    parsed) whose rates a request through it is not priced from, asked of the price table every
    layer made (its ``providers``, and ``priced_from``: the lookup a quote makes, a provider's
    family's table first, then every other by name, a dated snapshot as its model), ``before``
    naming the tables there were before this document: a model another table prices a request
    through the provider for (a later file's table too); a provider id a cache rule names as
    another table's (``deepseek-official``, whose rates are read without the ``deepseek`` table's
    peak window; ``DeepSeek-Official``, never a request's provider: ids are matched exactly); a
    provider with no model and no window. A new provider of new models (a gateway's
    ``local-openai``) is read: no warning.

    Example:
        >>> data = {"providers": {"deepseek-official": {"models": {}}, "local-openai": {"models": {"m": {}}}}}
        >>> found = unread_providers("p.json", data, ["deepseek"], {}, lambda p, m: (p, m))
        >>> [w.split(": ", 2)[2].split(" (hint")[0] for w in found]
        ["no provider table is named so: the price table calls it 'deepseek'"]
    """
    names = f"the price table's providers are {', '.join(dotted_key(table) for table in sorted(before))}"
    found = []
    for name, body in data["providers"].items():
        unread = _unread(name, body, providers, priced_from)
        if unread is not None:
            found.append(f"{path}: price table key {dotted_key('providers', name)}: {unread[0]} "
                         f"(hint: {unread[1]}; {names})")
    return found


def _unread(name: str, body: dict[str, Any], providers: Mapping[str, _Provider],
            priced_from: _Lookup) -> tuple[str, str] | None:
    """Why a request through the provider ``name`` of a price document (its table ``body``) is
    not priced from the rates it gives, and what to do, or None (:func:`unread_providers`)."""
    models = body.get("models") or {}
    elsewhere: dict[str, list[str]] = {}  # table -> the models of ``name`` a request through it is priced from there
    for model in sorted(models):
        table = (priced_from(name, model) or (name, model))[0]
        if table != name:
            elsewhere.setdefault(table, []).append(model)
    families = {provider: rule.family for rule in load_rules() for provider in (*rule.providers, rule.family)}
    family = families.get(name, families.get(name.lower()))
    if family is not None and family != name:
        # another spelling of a provider id is never a request's provider
        if name not in families or elsewhere or not models:
            return (f"no provider table is named so: the price table calls it {family!r}",
                    f"write its models and windows under {dotted_key('providers', family)}")
        own, theirs = providers.get(name), providers.get(family)
        if theirs is not None and theirs.windows and (own is None or not own.windows):
            return (f"its rates are read without the peak window of the table the price table calls {family!r}",
                    f"write its models under {dotted_key('providers', family)} to price them in that window")
    if not models and "windows" not in body:  # an empty list of windows replaces a table's: not nothing
        return "holds no model and no window: it prices nothing", "give it its models, or remove it"
    if elsewhere:
        tables = ", ".join(f"from {dotted_key(table)} for {listed([_shown(model) for model in shadowed])}"
                           for table, shadowed in sorted(elsewhere.items()))
        return (f"a request through provider {dotted_key(name)} is priced {tables}, never from this table",
                "a request is priced from its provider's family's table, then from the first other table by "
                "name that holds the model: give the rates there, or remove them here")
    return None


def _holiday(day: Any) -> bool:
    """Whether ``day`` is a holiday as a window compares it: a date exactly ``YYYY-MM-DD`` (its
    text, or a TOML date, whose text is that), as ``date.isoformat()`` writes a request's day.

    Example:
        >>> _holiday("2027-01-15"), _holiday(date(2027, 1, 15)), _holiday("2027-1-15"), _holiday("2027-02-30")
        (True, True, False, False)
    """
    text = str(day) if isinstance(day, (str, date)) and not isinstance(day, datetime) else ""
    if _DAY.fullmatch(text) is None:
        return False
    try:
        datetime.strptime(text, "%Y-%m-%d")
    except ValueError:
        return False
    return True


def _not_a_holiday(day: Any, *, toml: bool = False) -> str:
    """Why ``day`` is no holiday (:func:`_holiday`), for the error that refuses it, the value as
    the file wrote it (in its language: JSON, or TOML with ``toml``): a TOML date-time or time in
    its ISO form (a date-time names the date to write), a text in the form of a date that no
    calendar has (``2027-02-30``) not a real date, anything else not ``YYYY-MM-DD`` (spelt out
    when it has fewer digits: :func:`_spelt`).

    Example:
        >>> _not_a_holiday("2027-02-30"), _not_a_holiday("2027-1-5")
        ('"2027-02-30" is not a real date', '"2027-1-5" is not YYYY-MM-DD (write "2027-01-05")')
        >>> _not_a_holiday(datetime(2027, 1, 15, tzinfo=timezone.utc), toml=True)
        '2027-01-15T00:00:00+00:00 is a date-time, not a YYYY-MM-DD date (write 2027-01-15)'
        >>> _not_a_holiday(True, toml=True), _not_a_holiday(float("nan"))
        ('true is not YYYY-MM-DD', 'NaN is not YYYY-MM-DD')
    """
    if isinstance(day, datetime):
        return f"{day.isoformat()} is a date-time, not a YYYY-MM-DD date (write {_shown(day.date(), toml=toml)})"
    if isinstance(day, time):
        return f"{day.isoformat()} is a time, not a YYYY-MM-DD date"
    found = _SHORT_DAY.fullmatch(day) if isinstance(day, str) else None
    if found is not None and not _spelt(day):
        return f"{_shown(day, toml=toml)} is not a real date"
    return f"{_shown(day, toml=toml)} is not YYYY-MM-DD{_spelt(day, toml=toml)}"


def _spelt(day: Any, *, toml: bool = False) -> str:
    """How a holiday written with fewer digits is spelt out (`` (write "2027-01-15")``, a string
    as the file's language writes one), for the error that refuses it; empty for anything else.

    Example:
        >>> _spelt("2027-1-5"), _spelt(" 2027-01-15"), _spelt("2027-13-01")
        (' (write "2027-01-05")', '', '')
    """
    found = _SHORT_DAY.fullmatch(day) if isinstance(day, str) else None
    if found is None:
        return ""
    try:
        spelt = date(int(found[1]), int(found[2]), int(found[3])).isoformat()
    except ValueError:
        return ""
    return f" (write {_shown(spelt, toml=toml)})"
