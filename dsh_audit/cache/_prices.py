"""Prices as data: an effective-dated price table per provider and model, with peak windows.

The packaged table (``cache/rules/prices.json``) holds public list prices, every rate with the
URL it was read from and the date; ``[tool.dsh-audit.prices]`` in the nearest ``pyproject.toml``
and then ``--prices FILE`` (JSON or TOML, same shape) replace a provider's windows or a model's
rates, or add new ones (their rates in the packaged table's unit: a ``per_tokens`` or ``currency``
other than its own is refused). A model the table does not know is *unpriced*, never priced at zero.

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
rate out, silently), and so is a rate beside ``billed_as`` (an alias has its model's rates).

A request's window is ``peak`` or ``off-peak`` when its provider's table has a peak window in
force at its send time (DeepSeek's), else ``standard``: the provider bills one rate all day
(Anthropic, OpenAI), or the request has no send time, or its model is unpriced. A window's
``holidays`` (each exactly ``YYYY-MM-DD``, a date of the window's own wall clock) are off-peak all
day; the list covers the years its dates fall in. A request in another year is still priced, by
the weekday rule alone (a holiday of that year at the peak rate), and :meth:`PriceBook.caveats`
says so of those priced at the peak rate, once per provider table and year: give that year's
holidays with ``--prices FILE``. A book keeps the caveats its quotes met
(:meth:`PriceBook.caveats_met`), which every command that prints costs says once per run, as a
``note:`` on stderr.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import os
import re
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar, Protocol

from .._paths import refuse_empty_paths
from .._pyproject import ConfigFileError, find_pyproject, read_bytes, read_json, read_toml
from ..errors import UsageError
from ._money import _BUCKETS, Rates
from ._rules import rule_for

__all__ = ["OFF_PEAK", "PEAK", "STANDARD", "PriceBook", "PricedRequest", "Quote", "load_prices"]

#: The windows a request is priced in: ``standard`` when its provider has no peak window in force
#: (one rate all day), no send time is logged, or the request is unpriced.
PEAK, OFF_PEAK, STANDARD = "peak", "off-peak", "standard"
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
# the suffix of a dated snapshot of a listed model (Anthropic -20250929, OpenAI -2024-08-06): billed
# as that model. Any other suffix names another model (gpt-5-codex, o3-deep-research, gpt-4o-audio-preview:
# other rates or none listed), which stays unpriced rather than priced as the shorter name.
#: Largest rate accepted, USD per ``per_tokens`` tokens (far above any list price; keeps costs finite).
_MAX_RATE = 1e9
_SNAPSHOT = re.compile(r"-(?:\d{8}|\d{4}-\d\d-\d\d)$")
#: How many answers :meth:`PriceBook.quote` keeps of each kind (a session's few models and tiers
#: in a few windows is all it reuses).
_QUOTES_LIMIT = 1024
#: Seconds a memoised peak-window answer keeps clear of the edges of the span it holds over
#: (:meth:`_Window.span`): a send time that near an edge is judged afresh.
_EDGE = 1e-3
_EPOCH_DAY = date(1970, 1, 1)
#: The days of 400 Gregorian years: the calendar, weekdays too, repeats after them.
_CYCLE_DAYS = 146_097


@dataclass(frozen=True, slots=True)
class _Clock:
    """A send time's wall clock at a window's offset (:func:`_wall_clock`): its local day (days
    since 1970-01-01), the minute of that day, the weekday (Monday 0), the date as a holiday is
    written (``YYYY-MM-DD``; ``10000-01-01`` past year 9999) and its year."""

    day: int
    minute: int
    weekday: int
    date: str
    year: int


def _wall_clock(when: float, offset: int) -> _Clock | None:
    """The wall clock ``offset`` minutes east of UTC at the send time ``when``; None when ``when``
    is outside the years 1-9999 in UTC (:func:`utc_moment`: a time no command can show, which no
    window's calendar places). The clock is counted in seconds, not read from a ``datetime``, so a
    local date past year 9999 or before year 1 (9999-12-31T23:59:59Z at +08:00 is 10000-01-01 at
    07:59:59) is placed like any other; rounded to the microsecond, half to even, as
    ``datetime.fromtimestamp`` reads a time.

    Example:
        >>> _wall_clock(253402300799.0, 480)  # 9999-12-31T23:59:59Z at +08:00: a Saturday
        _Clock(day=2932897, minute=479, weekday=5, date='10000-01-01', year=10000)
        >>> _wall_clock(-62135596800.0, -300).date, _wall_clock(253402300800.0, 0)  # year 0 local; past 9999 UTC
        ('0000-12-31', None)
    """
    if utc_moment(when) is None:
        return None
    fraction, whole = math.modf(when + offset * 60)
    micro = round(fraction * 1e6)
    seconds = int(whole) + (micro >= 1_000_000) - (micro < 0)
    day, second = divmod(seconds, 86400)
    cycles, inside = divmod(day, _CYCLE_DAYS)
    local = _EPOCH_DAY + timedelta(days=inside)
    year = local.year + 400 * cycles
    return _Clock(day, second // 60, local.weekday(), f"{year:04d}-{local.month:02d}-{local.day:02d}", year)


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


@dataclass(frozen=True, slots=True)
class _Window:
    start: float
    offset: int  # minutes east of UTC
    hours: tuple[tuple[int, int], ...]  # [start, end) minutes of the local day
    days: frozenset[int]
    holidays: frozenset[str]
    #: The years the holiday list covers: those its dates fall in (none without holidays).
    years: frozenset[int] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "years", frozenset(int(day[:4]) for day in self.holidays))

    def at(self, when: float) -> str:
        clock = _wall_clock(when, self.offset)
        if clock is None:  # a log time past year 9999 in UTC (JavaScript dates reach year 275760)
            return STANDARD
        if clock.weekday not in self.days or clock.date in self.holidays:
            return OFF_PEAK
        return PEAK if any(a <= clock.minute < b for a, b in self.hours) else OFF_PEAK

    def span(self, when: float) -> tuple[float, float]:
        """Send times around ``when`` that :meth:`at` answers alike for (``start <= t < end``):
        ``when``'s local day between the two peak-hour edges around it, less :data:`_EDGE` at
        each end (the wall clock is read rounded to the microsecond); empty when it cannot be read.

        Example:
            >>> w = _Window(0.0, 480, ((540, 720),), frozenset(range(5)), frozenset())
            >>> w.at(1796209398.0), w.span(1796209398.0)  # a Wednesday, 19:03 at +08:00: from 12:00 to midnight
            ('off-peak', (1796184000.001, 1796227199.999))
        """
        clock = _wall_clock(when, self.offset)
        if clock is None:
            return 0.0, 0.0
        midnight = clock.day * 86400 - self.offset * 60  # the local day's start, as a send time
        edges = (0, 24 * 60, *(edge for hours in self.hours for edge in hours))
        start = max(edge for edge in edges if edge <= clock.minute)
        end = min(edge for edge in edges if edge > clock.minute)
        return midnight + start * 60 + _EDGE, midnight + end * 60 - _EDGE

    def unknown_year(self, when: float) -> int | None:
        """The year of ``when``'s local date when the window has holidays and their list does not
        cover that year (:meth:`at` then prices it by the weekday rule alone), else None.

        Example:
            >>> w = _Window(0.0, 480, ((540, 720),), frozenset(range(5)), frozenset({"2026-10-01"}))
            >>> w.years, w.unknown_year(1798732799.0), w.unknown_year(1798732800.0)  # 2026-12-31 15:59:59, 16:00 UTC
            (frozenset({2026}), None, 2027)
        """
        if not self.holidays:
            return None
        clock = _wall_clock(when, self.offset)
        return None if clock is None or clock.year in self.years else clock.year


@dataclass(frozen=True, slots=True)
class Quote:
    """The price of one request: its provider table, the model it is billed as, its window and rates.

    ``off_peak`` is what the same tokens would cost in the off-peak window (the rates themselves
    when the provider has no window). ``effective`` is the ISO date-time the rate applies from
    (None: from any date on). ``tier``: the ``prompt_tokens_above`` of the long-context tier whose
    rates these are (None: the base rates).
    """

    provider: str
    model: str
    billed_as: str
    window: str
    rates: Rates
    off_peak: Rates
    per: int
    source: str
    retrieved: str
    effective: str | None = None
    tier: int | None = None


@dataclass(frozen=True, slots=True)
class _Span:
    """What a (provider, model) is priced from at send times ``start <= t < end``: the provider
    table and model name it is billed as (an alias resolved) and the period of rates in force,
    the same for every such time (no period of the alias chain begins or ends inside)."""

    start: float
    end: float
    table: str
    name: str
    period: _Period


class PricedRequest(Protocol):
    """A priced request as :meth:`PriceBook.caveats` reads it (a ledger entry is one): the DSH
    provider id and model it went to, and its send time (epoch seconds)."""

    @property
    def provider(self) -> str | None: ...

    @property
    def model(self) -> str | None: ...

    @property
    def sent(self) -> float | None: ...


class _Caveat(str):
    """A caveat's text (:meth:`PriceBook.caveat`): a note, not a warning. Its ``level`` is
    ``"note"``, as :class:`dsh_audit.session.RouteNote`'s, so a command that says warnings once per
    run (the CLI's ``echo_warning``) says it as ``note: TEXT``, once.

    Example:
        >>> text = _Caveat("the deepseek price table lists no holidays of 2028")
        >>> text.level, text == str(text)
        ('note', True)
    """

    __slots__ = ()
    level: ClassVar[str] = "note"


def _caveat(table: str, window: _Window, year: int) -> _Caveat:
    """What a request of ``year`` priced at the peak rate by ``window`` of ``table`` could not know."""
    covered = ", ".join(str(y) for y in sorted(window.years))
    return _Caveat(f"the {table} price table lists no holidays of {year} (its holiday list covers {covered}): "
                   f"requests of {year} are priced by the weekday rule alone, a public holiday at the peak rate; "
                   f'give the holidays of {year} with --prices FILE (the "holidays" of the {table} window)')


@dataclass
class _Provider:
    windows: list[_Window] = field(default_factory=list)
    models: dict[str, list[_Period]] = field(default_factory=dict)


@dataclass(frozen=True)
class PriceBook:
    """An effective-dated price table (see the module docstring); :meth:`quote` prices a request.

    Example:
        >>> book = load_prices(search_from="/")
        >>> quote = book.quote("deepseek-official", "deepseek-v4-pro", 1796209398.0)
        >>> (quote.billed_as, quote.window, quote.rates.cache_miss)
        ('deepseek-v4-pro', 'off-peak', 0.66)
        >>> book.quote("local-openai", "local-coder", 1796209398.0)
        "no price for model 'local-coder'"
    """

    providers: dict[str, _Provider]
    per: int = 1_000_000
    currency: str = "USD"
    note: str = ""
    files: tuple[str, ...] = ()
    # What :meth:`quote` resolved, memoised (each emptied whole past :data:`_QUOTES_LIMIT`): the
    # table and model name each (provider, model) pair is priced from; the span of send times its
    # rates were last resolved for (a session's requests run forward in time, mostly inside one
    # period); each provider's last peak-window answer with the send times it holds for; and the
    # quotes made, by (period, model, window, tier). Effective dates and windows are still
    # judged at each request's send time: a memo answers only for times it holds for.
    _tables: dict[tuple[str | None, str], tuple[str, str] | None] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    _spans: dict[tuple[str | None, str], _Span] = field(default_factory=dict, init=False, repr=False, compare=False)
    _windows: dict[str, tuple[float, float, str]] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    _quotes: dict[tuple[int, str, str, int | None], tuple[_Period, Quote]] = field(
        default_factory=dict, init=False, repr=False, compare=False)
    # The caveats the peak-window answers met (:meth:`caveats_met`), in the order first met: kept
    # whole (one per provider table and year), never emptied with the memos.
    _met: dict[str, None] = field(default_factory=dict, init=False, repr=False, compare=False)

    def window(self, provider: str, when: float | None) -> str:
        """``peak``, ``off-peak``, or ``standard`` (no window in force), by the send time."""
        table = self.providers.get(provider)
        if when is None or table is None:
            return STANDARD
        memo = self._windows.get(provider)
        if memo is not None and memo[0] <= when < memo[1]:
            return memo[2]
        windows = table.windows
        count = sum(1 for w in windows if w.start <= when)  # sorted by start: those in force so far
        end = windows[count].start if count < len(windows) else math.inf
        if not count:
            found, start = STANDARD, -math.inf
        else:
            current = windows[count - 1]
            found = current.at(when)
            start, until = current.span(when)
            start, end = max(start, current.start), min(end, until)
            year = current.unknown_year(when) if found == PEAK else None
            if year is not None:  # the span is one local day's: one year, met once per span
                self._met.setdefault(_caveat(provider, current, year))
        if len(self._windows) >= _QUOTES_LIMIT:
            self._windows.clear()
        self._windows[provider] = (start, end, found)
        return found

    def caveat(self, provider: str | None, model: str | None, when: float | None) -> str | None:
        """What the price of a request to ``model`` through ``provider`` at ``when`` could not
        know, or None: the year's holidays, when the request is priced at the peak rate by a window
        whose holiday list does not cover the year of its local date (:meth:`_Window.unknown_year`;
        a request off-peak by the hour or the weekday is off-peak on a holiday too). It is priced
        all the same, by the weekday rule alone: a public holiday of that year at the peak rate.
        One text per provider table and year.

        Example:
            >>> book = load_prices(search_from="/")
            >>> book.caveat("deepseek-official", "deepseek-v4-pro", 1830481200.0)  # 2028-01-03 03:00 UTC
            'the deepseek price table lists no holidays of 2028 (its holiday list covers 2026, 2027): \
requests of 2028 are priced by the weekday rule alone, a public holiday at the peak rate; give the \
holidays of 2028 with --prices FILE (the "holidays" of the deepseek window)'
            >>> book.caveat("deepseek-official", "deepseek-v4-pro", 1830488400.0) is None  # 05:00 UTC: off-peak
            True
            >>> book.caveat("deepseek-official", "deepseek-v4-pro", 1798772400.0) is None  # 2027-01-01: a holiday
            True
            >>> book.caveat("deepseek-official", "deepseek-v4-pro", 1796180400.0) is None  # 2026-12-02 03:00 UTC
            True
        """
        quote = self.quote(provider, model, when)
        if isinstance(quote, str) or quote.window != PEAK or when is None:  # a holiday would not change it
            return None
        table = quote.provider
        windows = self.providers[table].windows
        count = sum(1 for w in windows if w.start <= when)  # sorted by start: the last begun is in force
        year = windows[count - 1].unknown_year(when) if count else None
        return None if year is None else _caveat(table, windows[count - 1], year)

    def caveats(self, requests: Iterable[PricedRequest]) -> list[str]:
        """The :meth:`caveat` texts of ``requests`` (ledger entries: their provider, model and send
        time), each once, in the order first met: what a command prints once per run, beside the
        costs they qualify."""
        found: dict[str, None] = {}
        for request in requests:
            text = self.caveat(request.provider, request.model, request.sent)
            if text is not None:
                found.setdefault(text)
        return list(found)

    def caveats_met(self) -> list[str]:
        """The :meth:`caveat` texts of every request this book has priced at the peak rate so far
        (each :meth:`quote`, :meth:`caveat` or :meth:`window` answer), each once, in the order first
        met, with those :meth:`add_caveats` added: what a command that priced a run's requests with
        it says once, beside the costs they qualify. Each text is a note (its ``level`` is
        ``"note"``).

        Example:
            >>> book = load_prices(search_from="/")
            >>> book.caveats_met()
            []
            >>> _ = book.quote("deepseek-official", "deepseek-v4-pro", 1830481200.0)  # 2028-01-03 03:00 UTC
            >>> [text[:62] for text in book.caveats_met()], book.caveats_met()[0].level
            (['the deepseek price table lists no holidays of 2028 (its holida'], 'note')
        """
        return list(self._met)

    def add_caveats(self, texts: Iterable[str]) -> None:
        """Count ``texts`` among :meth:`caveats_met`: those a copy of this book met (a worker
        process prices with its own copy and hands them back)."""
        for text in texts:
            self._met.setdefault(text if isinstance(text, _Caveat) else _Caveat(text))

    def _find(self, provider: str, model: str) -> str | None:
        models = self.providers[provider].models
        if model in models:
            return model
        # dated snapshots: claude-sonnet-4-5-20250929 is billed as claude-sonnet-4-5
        match = _SNAPSHOT.search(model)
        return model[: match.start()] if match and model[: match.start()] in models else None

    def quote(self, provider: str | None, model: str | None, when: float | None, *,
              prompt_tokens: int | None = None) -> Quote | str:
        """The price of a request to ``model`` through DSH provider ``provider`` sent at ``when``
        (epoch seconds), or why it is unpriced (unknown model, no timestamp, no rate in force).

        ``prompt_tokens`` (cache-miss + cache-read + cache-write, as logged) selects a long-context
        tier; None prices at the base rates."""
        if not model:
            return "no model"
        if when is None:
            return f"no price for model {model!r}" if self._table(provider, model) is None else \
                "no timestamp to date the rate"
        span = self._spans.get((provider, model))
        if span is None or not span.start <= when < span.end:
            found = self._span(provider, model, when)
            if isinstance(found, str):
                return found
            span = found
        return self._quote(span, model, when, prompt_tokens)

    def _table(self, provider: str | None, model: str) -> tuple[str, str] | None:
        """The provider table and model name ``model`` through ``provider`` is priced from, if any:
        its rule's family's table first, then every other in name order."""
        key = (provider, model)
        if key in self._tables:
            return self._tables[key]
        family = rule_for(provider, model).family
        order = [family, *sorted(p for p in self.providers if p != family)]
        found = next(((p, k) for p in order if p in self.providers and (k := self._find(p, model))), None)
        if len(self._tables) >= _QUOTES_LIMIT:
            self._tables.clear()
        self._tables[key] = found
        return found

    def _span(self, provider: str | None, model: str, when: float) -> _Span | str:
        """The rates ``model`` through ``provider`` is priced from at ``when`` and the send times
        they hold for (:class:`_Span`, kept for the next request), or why it is unpriced."""
        found = self._table(provider, model)
        if found is None:
            return f"no price for model {model!r}"
        table, name = found
        start, end = -math.inf, math.inf
        for _ in range(8):
            periods = self.providers[table].models[name]
            count = sum(1 for p in periods if p.start <= when)  # sorted by start: those begun by then
            if not count:
                return f"no rate for {name!r} (provider {table}) in force on {_iso(when)[:10]}"
            period = periods[count - 1]
            start = max(start, period.start)
            if count < len(periods):
                end = min(end, periods[count].start)
            if period.billed_as is not None or period.rates is None:
                name = period.billed_as or name
                continue
            span = _Span(start, end, table, name, period)
            if len(self._spans) >= _QUOTES_LIMIT:
                self._spans.clear()
            self._spans[(provider, model)] = span
            return span
        return f"'billed_as' loops from {model!r}"

    def _quote(self, span: _Span, model: str, when: float, prompt_tokens: int | None) -> Quote:
        """The quote of a request to ``model`` priced from ``span`` at ``when``: its window and tier."""
        period = span.period
        window = self.window(span.table, when)
        tier = period.tier(prompt_tokens)
        key = (id(period), model, window, tier.above if tier else None)
        made = self._quotes.get(key)
        if made is not None and made[0] is period:
            return made[1]
        assert period.rates is not None  # a period with no rates is an alias, resolved by _span
        base, off_peak = (tier.rates, tier.off_peak) if tier else (period.rates, period.off_peak)
        rates = off_peak if window == OFF_PEAK and off_peak else base
        quote = Quote(span.table, model, span.name, window, rates, off_peak or base, self.per,
                      tier.source if tier else period.source, period.retrieved,
                      _iso(period.start) if math.isfinite(period.start) else None, tier.above if tier else None)
        if len(self._quotes) >= _QUOTES_LIMIT:
            self._quotes.clear()
        self._quotes[key] = (period, quote)
        return quote

    @property
    def fingerprint(self) -> str:
        """A digest of every rate and window in force: two tables price alike when theirs match
        (the fleet index re-prices its logs when it changes)."""
        def window(w: _Window) -> tuple[Any, ...]:  # sets sorted: str hashes vary by process
            return (w.start, w.offset, w.hours, sorted(w.days), sorted(w.holidays))

        text = repr((self.per, self.currency, sorted(
            (name, [window(w) for w in p.windows], sorted(p.models.items())) for name, p in self.providers.items())))
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]

    def to_json(self) -> dict[str, Any]:
        """What the table is: files applied, currency, note."""
        return {"currency": self.currency, "per_tokens": self.per, "note": self.note, "files": list(self.files)}


def utc_moment(seconds: float) -> datetime | None:
    """``seconds`` since the epoch as an aware UTC datetime, or None outside the years 1-9999
    that ``datetime`` holds (a log's time may be any JavaScript date, up to year 275760)."""
    try:
        return datetime.fromtimestamp(seconds, timezone.utc)
    except (OverflowError, OSError, ValueError):
        return None


def _iso(when: float) -> str:
    moment = utc_moment(when)
    return f"{when:g} s after the epoch" if moment is None else moment.isoformat().replace("+00:00", "Z")


#: Where a price table's shape is described, for the hint of an error in a user's price file
#: (the packaged table's own path means nothing to a user of an installed dsh-audit).
_SHAPE = "the Price files section of docs/cache-accounting.md gives the shape"
#: The hint of an error in each layer of the table: the packaged table (a damaged install), the
#: nearest pyproject.toml's [tool.dsh-audit.prices] (the user did not name it), a --prices file.
_PACKAGED_HINT = "the packaged price table is damaged: reinstall dsh-audit"
_PYPROJECT_HINT = (f"fix this key under [tool.dsh-audit.prices] of this pyproject.toml, the nearest to the current "
                   f"folder; {_SHAPE}")
_PRICES_HINT = f"fix this key in the --prices file; {_SHAPE}"


class _Parser:
    """Reads one price document into ``providers``, raising one-line errors naming file and key,
    with the ``hint`` of the layer the document is (:data:`_PRICES_HINT` by default): an error in a
    user's file names that file, never the packaged table."""

    def __init__(self, path: str, providers: dict[str, _Provider], *, hint: str = _PRICES_HINT) -> None:
        self.path, self.providers, self.hint = path, providers, hint
        #: this document's aliases, each with its key as written: (key, provider, model, billed_as)
        self.aliases: list[tuple[str, str, str, str]] = []

    def fail(self, key: str, problem: str) -> UsageError:
        return UsageError(f"price table key {key}: {problem}", path=self.path, hint=self.hint)

    def table(self, value: Any, key: str, kind: str | None = None) -> dict[str, Any]:
        """``value`` as a table; with ``kind`` (one of :data:`_KEYS`), refused when it holds a key
        that kind of table does not (a misspelt rate would be left out silently)."""
        if not isinstance(value, dict):
            raise self.fail(key, "must be a table/object")
        if kind is not None:
            unknown = sorted(str(k) for k in value if k not in _KEYS[kind])
            if unknown:
                name = unknown[0]
                where = name if key == "(top level)" else f"{key}.{name}"
                close = difflib.get_close_matches(name, sorted(_KEYS[kind]), n=1)
                if kind == "alias" and name in _KEYS["period"]:
                    problem = "beside billed_as: an alias is billed at its model's rates (remove it, or the billed_as)"
                else:
                    problem = "unknown key" + (f" (did you mean {close[0]!r}?)" if close else "") + \
                        f"; known: {', '.join(sorted(_KEYS[kind]))}"
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
            raise self.fail(key, f"{_shown(value)} is not an ISO date or date-time") from None
        return (stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)).timestamp()

    def rate(self, value: Any, key: str) -> float:
        # compared, not passed to math.isfinite: an integer past the double range would overflow
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= math.inf:
            raise self.fail(key, f"{_shown(value)} is not a rate (a number >= 0)")
        if value > _MAX_RATE:
            raise self.fail(key, f"{_shown(value)} is above {_MAX_RATE:g}, not a price")
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
                                f"{_shown(above)} is not a token count (a whole number >= 0)")
            if above in tiers:
                raise self.fail(f"{where}.prompt_tokens_above",
                                f"a tier above {_shown(above)} tokens is already declared")
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
            raise self.fail(f"{key}.utc_offset", f"{_shown(data.get('utc_offset'))} is not +HH:MM (HH 00-23, MM 00-59)")
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
                raise self.fail(f"{key}.peak_hours[{i}]", f"{_shown(span)} is not HH:MM-HH:MM (start before end)")
            hours.append((a, b))
        days = data.get("days", list(_DAYS))
        if not isinstance(days, list) or any(d not in _DAYS for d in days):
            raise self.fail(f"{key}.days", f"{_shown(days)} is not a list of {', '.join(_DAYS)}")
        holidays = data.get("holidays", [])
        if not isinstance(holidays, list):
            raise self.fail(f"{key}.holidays", "must be a list of YYYY-MM-DD dates")
        for i, day in enumerate(holidays):
            if not _holiday(day):
                raise self.fail(f"{key}.holidays[{i}]", _not_a_holiday(day))
        return _Window(self.instant(data.get("from"), f"{key}.from"), offset, tuple(hours),
                       frozenset(_DAYS.index(d) for d in days), frozenset(str(d) for d in holidays))

    def document(self, data: Any) -> None:
        providers = self.table(self.table(data, "(top level)").get("providers"), "providers")
        self.table(data, "(top level)", "document")  # then a key beside it the table does not know
        for name, body in providers.items():
            key = f"providers.{name}"
            body = self.table(body, key, "provider")
            target = self.providers.setdefault(name, _Provider())
            if "windows" in body:
                if not isinstance(body["windows"], list):
                    raise self.fail(f"{key}.windows", "must be a list")
                target.windows = sorted((self.window(w, f"{key}.windows[{i}]") for i, w in enumerate(body["windows"])),
                                        key=lambda w: w.start)
            models = self.table(body.get("models", {}), f"{key}.models")
            for model, periods in models.items():
                items = periods if isinstance(periods, list) else [periods]
                if not items:
                    raise self.fail(f"{key}.models.{model}", "has no rates")
                # a list's periods by index; one table (TOML's [providers.P.models.M]) by its own key
                where = [f"{key}.models.{model}" + (f"[{i}]" if isinstance(periods, list) else "")
                         for i in range(len(items))]
                parsed = [self.period(p, where[i]) for i, p in enumerate(items)]
                self.aliases.extend((at, name, model, period.billed_as) for at, period in zip(where, parsed)
                                    if period.billed_as is not None)
                target.models[model] = sorted(parsed, key=lambda p: p.start)

    def units(self, data: Any, per: int, currency: str) -> None:
        """Refuse a ``per_tokens`` or ``currency`` other than the packaged table's: every rate of every
        layer is read as ``currency`` per ``per`` tokens, so a file of rates per thousand tokens would
        otherwise be priced a thousand times too low, silently."""
        document = self.table(data, "(top level)")
        for key, packaged in (("per_tokens", per), ("currency", currency)):
            value = document.get(key, packaged)
            if isinstance(value, bool) or value != packaged:
                shown = _shown(value)
                unit = f"per {per} tokens" if key == "per_tokens" else f"in {currency}"
                raise self.fail(key, f"{shown} is not the packaged table's {packaged!r}: every rate is read "
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
                stack.extend((f"{key}.{k}" if key else str(k), v) for k, v in reversed(item.items()))
            elif isinstance(item, list):
                stack.extend((f"{key}[{i}]", v) for i, v in reversed(list(enumerate(item))))

    def check_references(self) -> None:
        """Refuse an alias of this document whose model is in no layer read so far (this one's
        included), or is the alias itself: the error names this document, where it is written."""
        for key, name, model, billed_as in self.aliases:
            if billed_as not in self.providers[name].models:
                raise self.fail(f"{key}.billed_as", f"no model {billed_as!r} in the price table")
            if billed_as == model:  # never a price: every request of it would be unpriced
                raise self.fail(f"{key}.billed_as", "names the model itself; give its rates instead")


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


def _not_a_holiday(day: Any) -> str:
    """Why ``day`` is no holiday (:func:`_holiday`), for the error that refuses it, the value as
    the file wrote it: a TOML date-time or time in its ISO form (a date-time names the date to
    write), a text in the form of a date that no calendar has (``2027-02-30``) not a real date,
    anything else not ``YYYY-MM-DD`` (spelt out when it has fewer digits: :func:`_spelt`).

    Example:
        >>> _not_a_holiday("2027-02-30"), _not_a_holiday("2027-1-5")
        ("'2027-02-30' is not a real date", "'2027-1-5' is not YYYY-MM-DD (write '2027-01-05')")
        >>> _not_a_holiday(datetime(2027, 1, 15, tzinfo=timezone.utc))
        "2027-01-15T00:00:00+00:00 is a date-time, not a YYYY-MM-DD date (write '2027-01-15')"
    """
    if isinstance(day, datetime):
        return f"{day.isoformat()} is a date-time, not a YYYY-MM-DD date (write {day.date().isoformat()!r})"
    if isinstance(day, time):
        return f"{day.isoformat()} is a time, not a YYYY-MM-DD date"
    found = _SHORT_DAY.fullmatch(day) if isinstance(day, str) else None
    if found is not None and not _spelt(day):
        return f"{_shown(day)} is not a real date"
    return f"{_shown(day)} is not YYYY-MM-DD{_spelt(day)}"


def _spelt(day: Any) -> str:
    """How a holiday written with fewer digits is spelt out (`` (write '2027-01-15')``), for the
    error that refuses it; empty for anything else.

    Example:
        >>> _spelt("2027-1-5"), _spelt(" 2027-01-15"), _spelt("2027-13-01")
        (" (write '2027-01-05')", '', '')
    """
    found = _SHORT_DAY.fullmatch(day) if isinstance(day, str) else None
    if found is None:
        return ""
    try:
        spelt = date(int(found[1]), int(found[2]), int(found[3])).isoformat()
    except ValueError:
        return ""
    return f" (write {spelt!r})"


def _read(path: Path, *, found: bool = False) -> Any:
    """The price table at ``path`` (``found``: the nearest ``pyproject.toml``, which the user did
    not name: its errors say so)."""
    kind = "TOML" if path.suffix == ".toml" else "JSON"
    hint = (f"give --prices a {kind} price table; {_SHAPE}" if not found
            else "fix or move this pyproject.toml (the nearest to the current folder): dsh-audit reads its "
                 "[tool.dsh-audit.prices] table")
    try:
        data = read_toml(path, what="price table") if kind == "TOML" else read_json(path, what="price table")
    except ConfigFileError as exc:  # "objects": a price table may be JSON
        message = "price table nests arrays or objects too deeply" if exc.reason == "nesting" else exc.message
        if kind == "JSON" and exc.reason == "syntax":
            # Python's parser refuses an integer past its digit limit, which JSON.parse reads (as
            # infinity): read so, the file is a price table or fails where it is not valid JSON
            try:
                return _as_written(path, kind)
            except ValueError as again:  # a JSONDecodeError: bytes that are not UTF-8 were refused first
                message = f"price table is not valid JSON: {str(again).splitlines()[0]}"
            except RecursionError:
                message = "price table nests arrays or objects too deeply"
        elif kind == "TOML" and exc.reason == "syntax" and "integer string conversion" in exc.message:
            # the same integer in TOML (tomllib has no integer hook): read as JSON reads it, so the
            # rate's key says it is no price (``a N-digit number is above 1e+09``)
            try:
                return _as_written(path, kind)
            except ValueError as again:  # another syntax error, in tomllib's words
                message = f"price table is not valid TOML: {str(again).splitlines()[0]}"
        raise UsageError(message, path=exc.path, hint=exc.hint or hint) from None
    return _as_written(path, kind) if _unbounded(data) else data


class _Written(float):
    """A number a price file writes past the double range (``1e400``, read as infinity), with
    its text, so an error can say it as written."""

    written: str

    def __new__(cls, text: str) -> _Written:
        number = super().__new__(cls, text)
        number.written = text
        return number


class _Constant(_Written):
    """JSON's ``NaN``, ``Infinity`` or ``-Infinity`` in a price file: not JSON (``JSON.parse``
    refuses them; Python's parser reads them). A rate that is one is refused by its key as the
    number it reads as (``nan is not a rate``); one anywhere else by :meth:`_Parser.constants`,
    in its own spelling (:attr:`literal`).

    Example:
        >>> number = _Constant("-Infinity")
        >>> number, _shown(number), number.literal
        (-inf, '-inf', '-Infinity')
    """

    literal: str

    def __new__(cls, text: str) -> _Constant:
        number = float.__new__(cls, text)
        number.written, number.literal = f"{number:.6g}", text
        return number


def _whole(text: str) -> int | float:
    """A JSON integer literal: an ``int``, or past Python's digit limit for ``int()`` (4,300
    digits, far past the double range) the number ``JSON.parse`` reads, infinity, with its text
    (:class:`_Written`), where Python's parser would refuse the file in its own words.

    Example:
        >>> _whole("12"), _whole("1" + "0" * 5000), len(_whole("1" + "0" * 5000).written)
        (12, inf, 5001)
    """
    try:
        return int(text)
    except ValueError:  # the digit limit: the scanner hands over only well-formed literals
        return _Written(text)


def _shown(value: Any) -> str:
    """``value`` as an error quotes it. A number as the file writes it, up to 40 characters (one
    past the double range, read as infinity, by its text: :class:`_Written`; a float in 6
    significant digits), a longer integer by its size; anything else its repr, cut to 60
    characters (a file's whole nested array is no message).

    Example:
        >>> _shown(1000), _shown(1e308), _shown(_Written("1e400")), _shown(_whole("9" * 5000))
        ('1000', '1e+308', '1e400', 'a 5000-digit number')
        >>> _shown(-10**999), _shown(_Written("1" * 50 + ".5")), _shown(True), _shown("x" * 70)[-4:]
        ('a negative 1000-digit number', '1111111111111111111111111111111111111...', 'True', 'x...')
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        text = repr(value)
        return text if len(text) <= 60 else text[:57] + "..."
    written = getattr(value, "written", None)
    text = written if isinstance(written, str) else f"{value:.6g}" if isinstance(value, float) else str(value)
    if len(text) <= 40:
        return text
    digits = text.lstrip("+-")
    if digits.isdigit():
        return f"a {'negative ' if text.startswith('-') else ''}{len(digits)}-digit number"
    return text[:37] + "..."


def _unbounded(value: Any) -> bool:
    """Whether a parsed document holds an infinite number or a NaN anywhere (a loop, not
    recursion: the parser reads documents nested deeper than Python's stack)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


#: A TOML decimal integer past Python's digit limit for ``int()`` (4,300 digits), which tomllib
#: refuses in Python's words: digits and underscores, not part of a float, a key or a date.
_LONG_INT = re.compile(rb"(?<![\w.+-])[+-]?[0-9][0-9_]{4299,}(?![\w.:-])")
_MARK = "e0"  # appended to such an integer so that tomllib hands it to ``parse_float``


def _toml_number(text: str) -> float:
    """A TOML float as :class:`_Written`; an integer :data:`_LONG_INT` marked as a float, as
    :func:`_whole` reads it (its text without the mark)."""
    whole = text.removesuffix(_MARK).replace("_", "")
    if text.endswith(_MARK) and whole.lstrip("+-").isdigit():
        number = _whole(whole)
        if isinstance(number, _Written):
            return number
    return _Written(text)


def _as_written(path: Path, kind: str) -> Any:
    """The document at ``path``, parsed again with every decimal number a float that keeps its
    text (:class:`_Written`), for the error that refuses one past the double range; an integer
    past Python's digit limit is read as ``JSON.parse`` reads it (:func:`_whole`: in TOML, marked
    as a float first, :data:`_LONG_INT`); JSON's ``NaN``, ``Infinity`` and ``-Infinity`` are each
    a :class:`_Constant`, which a rate refuses by its key and :meth:`_Parser.constants` anywhere else."""
    raw = read_bytes(path, what="price table")
    if kind == "TOML":
        text = _LONG_INT.sub(lambda found: found.group(0) + _MARK.encode(), raw).decode("utf-8")
        return tomllib.loads(text, parse_float=_toml_number)
    return json.loads(raw, parse_float=_Written, parse_int=_whole, parse_constant=_Constant)


def _pyproject(start: str | os.PathLike[str] | None) -> tuple[str, Any] | None:
    """The ``[tool.dsh-audit.prices]`` table of the nearest ``pyproject.toml``, if any."""
    candidate = find_pyproject(start)
    if candidate is None:
        return None
    tool = _read(candidate, found=True).get("tool")
    table = tool.get("dsh-audit") if isinstance(tool, dict) else None
    prices = table.get("prices") if isinstance(table, dict) else None
    return None if prices is None else (f"{candidate} [tool.dsh-audit.prices]", prices)


def load_prices(path: str | os.PathLike[str] | None = None, *,
                search_from: str | os.PathLike[str] | None = None) -> PriceBook:
    """The packaged price table, then ``[tool.dsh-audit.prices]`` of the nearest ``pyproject.toml``
    (searched from ``search_from``, default the current folder), then the file at ``path``.

    Raises:
        UsageError: a price file cannot be read, or a key in it is wrong (a bad rate, a missing
            rate or model, a window that does not parse); the message names the file and key.
    """
    source = resources.files("dsh_audit.cache") / "rules" / "prices.json"
    packaged = json.loads(source.read_text("utf-8"))
    providers: dict[str, _Provider] = {}
    files = ["packaged"]
    # an error here is the packaged table's own (a damaged install): named by its path, never a user's file's
    parser = _Parser(str(source), providers, hint=_PACKAGED_HINT)
    parser.document(packaged)
    parser.check_references()
    layers: list[tuple[str, Any, str]] = []
    found = _pyproject(search_from)
    if found is not None:
        layers.append((*found, _PYPROJECT_HINT))
    if path is not None:
        refuse_empty_paths({"--prices": path})  # Path("") is the current folder
        layers.append((os.fspath(path), _read(Path(path)), _PRICES_HINT))
    per, currency = int(packaged.get("per_tokens", 1_000_000)), str(packaged.get("currency", "USD"))
    for name, data, hint in layers:
        parser = _Parser(name, providers, hint=hint)
        parser.units(data, per, currency)
        parser.document(data)
        parser.constants(data)
        parser.check_references()
        files.append(name)
    note = str(packaged.get("note", ""))
    return PriceBook(providers, per=per, currency=currency, note=note, files=tuple(files))
