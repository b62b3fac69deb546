"""Prices as data: an effective-dated price table per provider and model, with peak windows.

The packaged table (``cache/rules/prices.json``) holds public list prices, every rate with the
URL it was read from and the date; ``[tool.dsh-audit.prices]`` in the nearest ``pyproject.toml``
and then ``--prices FILE`` (JSON or TOML, same shape: :mod:`dsh_audit.cache._price_parser`)
replace a provider's windows or a model's rates, or add new ones (their rates in the packaged
table's unit: a ``per_tokens`` or ``currency`` other than its own is refused). A model the table
does not know is *unpriced*, never priced at zero.

A request's window is ``peak`` or ``off-peak`` when its provider's table has a peak window in
force at its send time (DeepSeek's, holidays off-peak: :mod:`~dsh_audit.cache._price_window`),
else ``standard``: the provider bills one rate all day (Anthropic, OpenAI), or the request has no
send time, or its model is unpriced. A request of a year a window's holiday list does not cover is
priced by the weekday rule alone, and :meth:`PriceBook.caveats` says so of those priced at the
peak rate, once per provider table and year: give that year's holidays with ``--prices FILE``. A
book keeps the caveats its quotes met (:meth:`PriceBook.caveats_met`), which every command that
prints costs says once per run, as a ``note:`` on stderr. A price document is read into values by
:mod:`~dsh_audit.cache._price_parser`, from a file or ``pyproject.toml`` by
:mod:`~dsh_audit.cache._price_files`, once per version of those files
(:mod:`~dsh_audit.cache._price_memo`); a model's rates are found by :mod:`~dsh_audit.cache._price_span`.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from .._paths import refuse_empty_paths
from .._pyproject import find_pyproject
from .._stamp import file_stamps
from ._money import Rates
from ._price_files import _PRICES_HINT, _PYPROJECT_HINT, _layer_stamps, _named_layers, _pyproject, _read
from ._price_memo import _Packaged, _packaged_source, _remembered
from ._price_parser import _Parser, _Period, _Provider, unread_providers
from ._price_span import _Span, _listed, _resolved
from ._price_window import OFF_PEAK, PEAK, STANDARD, _Caveat, _Window, _caveat, _iso
from ._rule_data import rule_for

__all__ = ["PriceBook", "PricedRequest", "Quote", "load_price_files", "load_prices", "no_price"]

#: How many answers :meth:`PriceBook.quote` keeps of each kind (a session's few models and tiers
#: in a few windows is all it reuses).
_QUOTES_LIMIT = 1024


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


class PricedRequest(Protocol):
    """A priced request as :meth:`PriceBook.caveats` reads it (a ledger entry is one): the DSH
    provider id and model it went to, and its send time (epoch seconds)."""

    @property
    def provider(self) -> str | None: ...

    @property
    def model(self) -> str | None: ...

    @property
    def sent(self) -> float | None: ...


def no_price(model: str) -> str:
    """Why a request to ``model`` is unpriced when no price table holds the model: the reason
    :meth:`PriceBook.quote` gives, which a command matches to name the table that would price it.

    Example:
        >>> no_price("local-coder")
        "no price for model 'local-coder'"
    """
    return f"no price for model {model!r}"


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
    #: What the price files applied hold that a request through its provider is not priced from
    #: (:func:`unread_providers`: a model another table prices, a provider the price table calls
    #: otherwise), each a one-line warning a command says once per run.
    warnings: tuple[str, ...] = ()
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

    def quote(self, provider: str | None, model: str | None, when: float | None, *,
              prompt_tokens: int | None = None) -> Quote | str:
        """The price of a request to ``model`` through DSH provider ``provider`` sent at ``when``
        (epoch seconds), or why it is unpriced (unknown model, no timestamp, no rate in force).

        ``prompt_tokens`` (cache-miss + cache-read + cache-write, as logged) selects a long-context
        tier; None prices at the base rates."""
        if not model:
            return "no model"
        if when is None:
            return no_price(model) if self._table(provider, model) is None else \
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
        found = next(((p, k) for p in order
                      if p in self.providers and (k := _listed(self.providers[p].models, model))), None)
        if len(self._tables) >= _QUOTES_LIMIT:
            self._tables.clear()
        self._tables[key] = found
        return found

    def _span(self, provider: str | None, model: str, when: float) -> _Span | str:
        """The rates ``model`` through ``provider`` is priced from at ``when`` and the send times
        they hold for (:class:`~dsh_audit.cache._price_span._Span`, kept for the next request), or
        why it is unpriced."""
        found = self._table(provider, model)
        if found is None:
            return no_price(model)
        table, name = found
        span = _resolved(self.providers[table], table, name, model, when)
        if isinstance(span, _Span):
            if len(self._spans) >= _QUOTES_LIMIT:
                self._spans.clear()
            self._spans[(provider, model)] = span
        return span

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
        """What the table is: currency, note, the price files applied (``price_files``: ``files``
        would read as a count, as ``validate --json``'s is)."""
        return {"currency": self.currency, "per_tokens": self.per, "note": self.note, "price_files": list(self.files)}


def load_prices(path: str | os.PathLike[str] | None = None, *,
                search_from: str | os.PathLike[str] | None = None) -> PriceBook:
    """The packaged price table, then ``[tool.dsh-audit.prices]`` of the nearest ``pyproject.toml``
    (searched from ``search_from``, default the current folder), then the file at ``path``: read
    once per process while those files are unchanged (:mod:`~dsh_audit.cache._price_memo`), a book of its own
    each call.

    Raises:
        UsageError: a price file cannot be read, or a key in it is wrong (a bad rate, a missing
            rate or model, a window that does not parse); the message names the file and key. So
            is a table or key of the ``pyproject.toml``'s ``[tool.dsh-audit]`` that no command
            reads: a misspelt ``[tool.dsh_audit]`` would leave its prices out in silence.
    """
    packaged = _packaged_source()  # a damaged install is said first, before any user's file is looked for
    candidate = find_pyproject(search_from)
    named = None if path is None else os.fspath(path)
    files = [file for file in (candidate, named) if file is not None]
    return _remembered(packaged, _load_prices, (candidate, named), file_stamps(files))


def _load_prices(packaged: _Packaged, candidate: Path | None, path: str | None) -> PriceBook:
    """:func:`load_prices` read now, the nearest ``pyproject.toml`` found at ``candidate``."""
    layers: list[tuple[str, Any, str]] = []
    found = _pyproject(candidate)
    if found is not None:
        layers.append((*found, _PYPROJECT_HINT))
    if path is not None:
        refuse_empty_paths({"--prices": path})  # Path("") is the current folder
        layers.append((path, _read(Path(path)), _PRICES_HINT))
    return _layered(packaged, layers)


def load_price_files(files: Iterable[str]) -> PriceBook:
    """The price table made of ``files`` as :attr:`PriceBook.files` names them (``packaged``, a
    ``pyproject.toml``'s table as ``PATH [tool.dsh-audit.prices]``, a ``--prices`` file by the path
    given), as :func:`load_prices` reads it (read again once one of them changed): the table a
    ledger was priced with when its files are unchanged (the same :attr:`PriceBook.fingerprint`).

    Raises:
        UsageError: a file cannot be read, a ``pyproject.toml`` no longer holds the table, or a key
            is wrong; the message names the file.

    Example:
        >>> load_price_files(["packaged"]).fingerprint == load_prices(search_from="/").fingerprint
        True
    """
    names = tuple(files)
    return _remembered(_packaged_source(), _load_files, (names,), _layer_stamps(names))


def _load_files(packaged: _Packaged, names: tuple[str, ...]) -> PriceBook:
    """:func:`load_price_files` read now."""
    return _layered(packaged, _named_layers(names))


def _layered(packaged: _Packaged, layers: list[tuple[str, Any, str]]) -> PriceBook:
    """The packaged table (:func:`~dsh_audit.cache._price_memo._packaged`) with ``layers`` applied in turn: each its
    name (:attr:`PriceBook.files`), document and the hint of its errors."""
    document, providers = packaged
    files = ["packaged"]
    read: list[tuple[str, Any, list[str]]] = []  # each layer with the tables there were before it
    per, currency = int(document.get("per_tokens", 1_000_000)), str(document.get("currency", "USD"))
    for name, data, hint in layers:
        before = list(providers)
        parser = _Parser(name, providers, hint=hint)
        parser.units(data, per, currency)
        parser.document(data)
        parser.constants(data)
        parser.check_references()
        read.append((name, data, before))
        files.append(name)
    note = str(document.get("note", ""))
    book = PriceBook(providers, per=per, currency=currency, note=note, files=tuple(files))
    # asked of the whole table, as a quote asks it: a later layer's table may price an earlier one's model
    warnings = [text for name, data, before in read
                for text in unread_providers(name, data, before, providers, book._table)]
    return replace(book, warnings=tuple(warnings)) if warnings else book
