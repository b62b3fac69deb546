"""What a session cost: one priced :class:`LedgerEntry` per request, and what each break cost.

Every request the log implies is an entry: loop attempts (a retried step costs per attempt: each
attempt carries its own usage chunk), compaction, title and search calls. A fork or subagent
child's log replays only its own requests (steps below its ``seedLength`` are the parent's and
are not requests of the child), so a copied parent prefix is never counted twice.

Tokens are read from DSH's ``TokenUsage``, whose buckets are disjoint whatever the provider
(spec §5.6: DeepSeek's ``inputTokens`` is ``prompt_tokens - cache hits``, pi-ai's Anthropic and
OpenAI inputs exclude cache reads and writes): cache-miss input = ``inputTokens``, cache read =
``cacheReadTokens``, cache write = ``cacheWriteTokens``, output = ``outputTokens`` (which already
holds ``reasoningTokens``). One rule for a usage that is incomplete or malformed, the cache
report's (:func:`logged_tokens`): a count is a non-negative integer, anything else is not logged;
the cache read is :func:`dsh_audit.session.logged_cache_read` (unknown when DSH's native DeepSeek
adapter logged none: its ``inputTokens`` then holds the whole prompt); a request missing a bucket
keeps the buckets it logged but has no price (its cost is left out of every sum, which is then a
lower bound: never an exact figure made of a guessed 0). Each bucket is priced at the rate for the request's model and window
(:class:`~dsh_audit.cache.PriceBook`); a cache write at the 5-minute write rate, or at the 1-hour
one when the request's cache verdict found a ``ttl: "1h"`` marker in its rendered body (DSH's usage
does not split writes by TTL; pi-ai marks every breakpoint of a request alike). A request's lost
tokens (cache reads it should have had, :func:`lost_split`) were billed first as its cache writes,
up to the writes it logged, and the rest as cache misses: each at its bucket's rate minus the
cache-read rate (:func:`lost_costs`). A model with long-context tiers (GPT-5.4, GPT-5.5)
bills the whole request at a tier's rates when its prompt exceeds the tier's threshold; the prompt
is :attr:`Tokens.prompt`, cache-miss + cache-read + cache-write: with disjoint buckets that is the
provider's own prompt count (OpenAI's ``input_tokens``, which holds the cached tokens; DeepSeek's
``prompt_tokens``), and the count pi-ai's ``calculateCost`` tests a tier with.

Amounts are the money values of :mod:`dsh_audit.cache._money` (:class:`Tokens`, :func:`usd_cost`,
:func:`usd_total`) and their sums, :mod:`dsh_audit.cache._sums` (:class:`Costs`): USD as whole
nano-dollars, every sum exact. What a request owes of each amount a view sums (its cost, with no
cache, off-peak, what its lost cache reads and its break cost) is decided in one place,
:class:`~dsh_audit.cache._sums.CostSums`, and summed by one rule, :class:`~dsh_audit.cache._money.Priced`:
``usage``, ``cache``, ``stats`` (which feeds the index's ledger rows through the same sums),
``check`` and ``report`` agree.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from .._frozen import fast_frozen_init
from ..replay import Request
from ..session import Session, open_session
from ._logged_usage import entry_usage, logged_tokens, priced_prompt, request_route_model, unpriced_usage
from ._money import Tokens, cost_nanos, nanos_usd, usd_cost, usd_total, write_rate
from ._prices import PriceBook, Quote, load_prices
from ._report import BREAKS, CacheVerdict, SessionCacheReport
from ._sums import CostSums, Costs

__all__ = ["LedgerEntry", "LedgerTotals", "SessionLedger", "entry_usage", "logged_tokens", "lost_cost", "lost_split",
           "lost_costs", "price_entry", "priced_prompt", "request_route_model", "session_ledger"]

#: A request's logged usage (:func:`logged_tokens`), its quote, and the provider and model it is billed under
#: (:func:`request_route_model`), as its cache verdict was priced (:meth:`~dsh_audit.cache.CacheAccount.quoted`).
Quoted = tuple[Tokens | None, tuple[str, ...], Quote | str, str | None, str | None]


@fast_frozen_init  # one per request priced: its 30 fields set by plain assignment
@dataclass(frozen=True, slots=True)
class LedgerEntry:
    """One request, priced.

    Attributes:
        index, kind, turn, step, attempt: the request (:class:`dsh_audit.replay.Request`).
        sent: its send time (epoch seconds) from the log, None when the log has none.
        provider, model: the DSH provider id and model it went to; ``billed_as``: the price-table
            model it is billed as (an alias resolved), None when unpriced.
        window: ``peak``, ``off-peak`` or ``standard`` (the provider has no window then).
        tokens: tokens by bucket, None when the log holds no usage for it; ``unlogged``: the
            usage fields it holds no valid count of (:func:`logged_tokens`: ``tokens`` then has
            only the others, and the request is unpriced).
        cost: USD by bucket, None when unpriced or the usage is unknown; ``unpriced``: why.
        no_cache_cost: the same tokens with every cache read and write billed as a miss.
        off_peak_cost: the same tokens at the off-peak rates of the same day's table.
        classification, lost: the cache verdict and its lost tokens per cause (when accounted).
        lost_unknown: what it lost is unknown (a break whose cache reads were not logged:
            :attr:`CacheVerdict.lost_unknown`); ``lost`` and ``lost_cost`` are then empty, null in
            the JSON, and it owes an unknown lost and break cost, never $0.
        usage_source: where ``tokens`` came from: ``log`` (its logged usage), ``capture`` (the log
            holds none: the provider's usage in the captured response to its send,
            :mod:`dsh_audit.cache._captured_usage`), None (neither has it); ``usage_differs``: the
            log's usage and the capture's are both there and disagree (the log's is kept).
        reusable: the cache reads its lost tokens are measured from (the verdict's ``potential``)
            when its cache reads were logged, else None: ``usage`` says it beside the lost tokens
            (review C of session 45, F6); not in the JSON.
        lost_cost: what those tokens cost over cache reads (:func:`lost_costs`: billed first as
            the request's cache writes, the rest as misses), per cause (the causes add up to the
            cost of all of them).
        rate_source, rate_retrieved: where the rate was read, and when; ``rate_effective``: the
            ISO date-time it applies from (None: any date).
        tier: the ``prompt_tokens_above`` threshold of the long-context tier whose rates priced the
            whole request (its cost, no-cache, off-peak and lost cost alike); None: base rates.
        route: the wire API the request went out by (``anthropic-messages``, ...), when known.
        cache_retention: the retention its rendered body asked for when it is not the rule's
            default (the cache verdict's: ``1h``, ``24h``, ``none``), and ``cache_write_rate``
            the rate bucket its cache writes were billed at then (``cache_write_1h``, ...); both
            None otherwise, and then absent from the JSON.
    """

    index: int
    kind: str
    turn: int | None
    step: int | None
    attempt: int
    sent: float | None
    provider: str | None
    model: str | None
    window: str
    tokens: Tokens | None
    cost: Costs | None
    billed_as: str | None = None
    unpriced: str | None = None
    no_cache_cost: float | None = None
    off_peak_cost: float | None = None
    classification: str | None = None
    lost: dict[str, int] = field(default_factory=dict)
    lost_cost: dict[str, float] = field(default_factory=dict)
    rate_source: str | None = None
    rate_retrieved: str | None = None
    rate_effective: str | None = None
    route: str | None = None
    tier: int | None = None
    cache_retention: str | None = None
    cache_write_rate: str | None = None
    unlogged: tuple[str, ...] = ()
    lost_unknown: bool = False
    usage_source: str | None = None
    usage_differs: bool = False
    reusable: int | None = None

    @property
    def is_break(self) -> bool:
        return self.classification in BREAKS

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "kind": self.kind, "turn": self.turn, "step": self.step,
                "attempt": self.attempt, "sent": self.sent, "provider": self.provider, "model": self.model,
                "billed_as": self.billed_as, "window": self.window,
                "tokens": None if self.tokens is None else self.tokens.to_json(),
                "cost_usd": None if self.cost is None else self.cost.to_json(), "unpriced": self.unpriced,
                "no_cache_cost_usd": self.no_cache_cost,
                # what it would have cost off-peak: its cost where its provider bills one rate all day
                "off_peak_cost_usd": self.off_peak_cost,
                "classification": self.classification,
                "lost_tokens": None if self.lost_unknown else dict(self.lost),
                "lost_cost_usd": None if self.lost_unknown else dict(self.lost_cost), "rate_source": self.rate_source,
                "rate_retrieved": self.rate_retrieved, "rate_effective": self.rate_effective, "tier": self.tier,
                "route": self.route, **({} if self.cache_retention is None else {
                    "cache_retention": self.cache_retention, "cache_write_rate": self.cache_write_rate}),
                **({"unlogged": list(self.unlogged)} if self.unlogged else {}), "usage_source": self.usage_source,
                **({"usage_differs_from_capture": True} if self.usage_differs else {})}


def price_entry(request: Request, book: PriceBook, verdict: CacheVerdict | None = None, *,
                sent: float | None = None, route: str | None = None, captured: Tokens | None = None,
                quoted: Quoted | None = None) -> LedgerEntry:
    """Price one request (``verdict``: its cache verdict, whose lost tokens are priced too;
    ``sent``: its send time when the request carries none, as an importer's session gives;
    ``route``: the wire API it went out by; ``captured``: the tokens the captured response to its
    send reports, which price it when its log holds no usage: :func:`entry_usage`; ``quoted``: its
    logged usage (:func:`logged_tokens`), its quote from ``book`` at its send time and its provider
    and model (:func:`request_route_model`), as its cache verdict was priced
    (:meth:`~dsh_audit.cache.CacheAccount.quoted`; with no ``captured`` only), so they are read and
    quoted once a request).

    What the request lost is priced once, by its cache verdict (:attr:`CacheVerdict.lost_cost_by_cause`,
    :func:`lost_costs`), and taken from it when the verdict was priced at the rate this entry is
    (the same table, model, send time, window and tier: always, in the pipeline); else (a verdict
    judged without send times, or with another table) it is priced here at the entry's rate."""
    sent = request.time.sent if request.time is not None else sent
    quote: Quote | str
    if quoted is not None and captured is None:  # entry_usage's answer with nothing captured
        tokens, unlogged, quote, provider, model = quoted
        source, differs = None if tokens is None and not unlogged else "log", False
    else:
        provider, model = request_route_model(request)
        tokens, unlogged, source, differs = entry_usage(request, captured)
        quote = book.quote(provider, model, sent, prompt_tokens=priced_prompt(tokens, unlogged))
    whole = tokens is not None and not unlogged
    classification = verdict.classification if verdict else None
    lost = dict(verdict.lost) if verdict else {}
    lost_unknown = verdict.lost_unknown if verdict else False
    reusable = verdict.potential if verdict is not None and verdict.actual is not None else None
    retention = verdict.cache_retention if verdict else None
    if isinstance(quote, str):
        return LedgerEntry(index=request.index, kind=request.kind, turn=request.turn, step=request.step,
                           attempt=request.attempt, sent=sent, provider=provider, model=model,
                           window=book.window("", None), tokens=tokens, cost=None, route=route,
                           classification=classification, lost=lost, cache_retention=retention, unpriced=quote,
                           unlogged=unlogged, lost_unknown=lost_unknown, usage_source=source, usage_differs=differs,
                           reusable=reusable)
    # Made whole at once (not by a copy per field group): one entry per request.
    judged = verdict.lost_cost_by_cause if verdict is not None and (verdict.rate is quote or verdict.rate == quote) \
        else None  # the same quote object in the pipeline (CacheAccount.quoted): not compared field by field
    cost = no_cache_cost = off_peak_cost = None
    if tokens is not None and whole:
        rates, per = quote.rates, quote.per
        nanos = Costs.nanos_of(tokens, rates, per, retention=retention)
        cost = Costs(nanos=nanos)
        # every cache read and write billed as a miss
        prompt = tokens.prompt
        no_cache_cost = nanos_usd((cost_nanos(prompt, rates.cache_miss, per) if prompt else 0) + nanos[3])
        # off-peak rates that are the rates themselves (an off-peak request, a provider without
        # windows) cost what the request did
        off_peak_cost = cost.total if quote.off_peak is rates else \
            nanos_usd(sum(Costs.nanos_of(tokens, quote.off_peak, per, retention=retention)))
    return LedgerEntry(index=request.index, kind=request.kind, turn=request.turn, step=request.step,
                       attempt=request.attempt, sent=sent, provider=provider, model=model, window=quote.window,
                       tokens=tokens, cost=cost, route=route, classification=classification, lost=lost,
                       cache_retention=retention, billed_as=quote.billed_as, rate_source=quote.source,
                       rate_retrieved=quote.retrieved, rate_effective=quote.effective, tier=quote.tier,
                       lost_cost=dict(judged) if judged is not None else lost_costs(
                           lost, quote, written=tokens.cache_write if tokens else 0, retention=retention)[1],
                       cache_write_rate=write_rate(quote.rates, retention)[0] if retention is not None else None,
                       unpriced=unpriced_usage(request, tokens, unlogged, captured), unlogged=unlogged,
                       no_cache_cost=no_cache_cost, off_peak_cost=off_peak_cost, lost_unknown=lost_unknown,
                       usage_source=source, usage_differs=differs, reusable=reusable)


def lost_split(lost: int, written: int) -> tuple[int, int]:
    """How a request's ``lost`` tokens were billed, given the ``written`` cache writes its usage
    logged: ``(as cache writes, as cache misses)``.

    A provider bills a prompt in order: the cached prefix it read, then what it wrote to the cache
    up to the request's last breakpoint, then the uncached rest as input (Anthropic: "content
    after the last breakpoint is never cached; it appears as input_tokens", and a request writes
    ``|prefix(last breakpoint)| - read``: spec ``provider-cache-rules.md`` §2). The lost tokens
    follow the read prefix (they are the part of the expected read that was not read), so they are
    billed as writes first, up to the request's writes, and the rest as misses. A provider that
    writes nothing (DeepSeek, OpenAI) bills them all as misses.

    Example:
        >>> lost_split(8927, 8917), lost_split(100, 0), lost_split(100, 250)
        ((8917, 10), (0, 100), (100, 0))
    """
    as_writes = min(max(lost, 0), max(written, 0))
    return as_writes, lost - as_writes


def _lost_usd(lost: int, quote: Quote, written: int, retention: str | None) -> Decimal:
    """USD per ``quote.per`` tokens of what ``lost`` tokens cost over cache reads (:func:`lost_costs`), exact."""
    read = Decimal(repr(quote.rates.cache_read))
    as_writes, as_misses = lost_split(lost, written)
    usd = as_misses * (Decimal(repr(quote.rates.cache_miss)) - read)
    if as_writes:
        usd += as_writes * (Decimal(repr(write_rate(quote.rates, retention)[1])) - read)
    return usd


def lost_costs(lost: Mapping[str, int], quote: Quote, *, written: int = 0,
               retention: str | None = None) -> tuple[float, dict[str, float]]:
    """What all the ``lost`` tokens (cause -> tokens), prompt tokens a request should have read
    from the cache, cost over cache reads at ``quote``: those billed as its cache writes
    (:func:`lost_split`, ``written``: the writes its usage logged) at the write rate of
    ``retention`` minus the read rate (:func:`~dsh_audit.cache._money.write_rate`), the rest at
    the miss rate minus the read rate; and the same split by cause in proportion to their tokens,
    the rounding remainder on the biggest cause, so the causes add up to it: the one pricing of
    what a request lost (its cache verdict's, which its ledger entry takes).

    Example:
        >>> from dsh_audit.cache import Quote, Rates
        >>> rates = Rates(3.0, 0.3, 15.0, cache_write_5m=3.75, cache_write_1h=6.0)
        >>> sonnet = Quote("anthropic", "claude-sonnet-4-6", "claude-sonnet-4-6", "standard", rates, rates,
        ...                1_000_000, "example", "2026-12-06")
        >>> [lost_costs({"header_change": 8927}, sonnet, written=w, retention=r)[0]
        ...  for w, r in ((0, None), (8917, None), (8917, "1h"))]
        [0.0241029, 0.03079065, 0.0508539]

        >>> rates = Rates(0.3, 0.006, 1.2)
        >>> flash = Quote("deepseek", "deepseek-v4-flash", "deepseek-flash", "peak", rates, rates,
        ...               1_000_000, "example", "2026-12-06")
        >>> lost_costs({"prune": 1000, "cold_ttl": 333}, flash)
        (0.000391902, {'prune': 0.000294, 'cold_ttl': 9.7902e-05})
    """
    count = sum(lost.values())
    if not count and quote.rates.cache_miss >= quote.rates.cache_read:  # most requests: $0 (a signed 0 else)
        return 0.0, dict.fromkeys(lost, 0.0)
    whole = _lost_usd(count, quote, written, retention)
    total = usd_cost(1, whole, quote.per)
    costs = {cause: usd_cost(1, whole * n / count, quote.per) if count else 0.0 for cause, n in lost.items()}
    if len(costs) > 1:
        biggest = max(sorted(lost), key=lambda cause: lost[cause])
        rest = usd_total(v for k, v in costs.items() if k != biggest)
        costs[biggest] = usd_total([total, -rest])
    return total, costs


class LedgerTotals(CostSums):
    """A session ledger's totals, added to one priced entry at a time (:meth:`add`): what
    :meth:`SessionLedger.summary` reports, without keeping the entries; the sums of
    :class:`~dsh_audit.cache._sums.CostSums` (the one rule for money some requests have no price
    for), so they equal those of the entries kept and of ``usage`` and ``stats``."""

    __slots__ = ()

    def add(self, entry: LedgerEntry) -> None:
        """Add one priced request (:meth:`CostSums.add_request`)."""
        self.add_request(tokens=entry.tokens, cost=entry.cost, no_cache=entry.no_cache_cost,
                         off_peak=entry.off_peak_cost, lost=entry.lost,
                         lost_cost=entry.lost_cost if entry.billed_as is not None else None,
                         is_break=entry.is_break, unpriced=entry.unpriced, lost_unknown=entry.lost_unknown,
                         from_capture=entry.usage_source == "capture", usage_differs=entry.usage_differs,
                         window=entry.window)

    @classmethod
    def of(cls, entries: Iterable[LedgerEntry]) -> LedgerTotals:
        totals = cls()
        for entry in entries:
            totals.add(entry)
        return totals


@dataclass(frozen=True, slots=True)
class SessionLedger:
    """Every request of one session log, priced, with totals.

    ``cost`` counts the priced requests; ``unpriced`` lists the requests that are not (unknown
    model, usage not logged, no timestamp), so a total is never silently short. ``entries`` is
    empty when the ledger was made without keeping them (``totals`` then holds their sums).
    """

    path: str
    session_id: str
    entries: tuple[LedgerEntry, ...]
    prices: dict[str, Any] = field(default_factory=dict)
    totals: LedgerTotals = field(default=None, compare=False, repr=False)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.totals is None:  # summed when first read (__getattr__): a view of the entries alone never sums them
            object.__delattr__(self, "totals")

    if not TYPE_CHECKING:  # to the type checker, ``totals`` is the field it is

        def __getattr__(self, name: str) -> LedgerTotals:
            """``totals`` when the ledger was made without them: the entries' sums, made once.

            An AttributeError raised while summing is a fault in the sums, not a missing name: left
            as it is, Python would take it for ``totals`` (or the property that read it) being absent
            and report "no attribute 'tokens'", hiding the real one; it leaves as a RuntimeError.
            """
            if name != "totals":
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            try:
                totals = LedgerTotals.of(self.entries)
            except AttributeError as exc:
                raise RuntimeError(f"summing the totals of {self.path} failed: {exc}") from exc
            object.__setattr__(self, "totals", totals)
            return totals

    @property
    def tokens(self) -> Tokens:
        return self.totals.tokens

    @property
    def cost(self) -> Costs:
        return self.totals.cost

    @property
    def no_cache_cost(self) -> float:
        return self.totals.no_cache_cost

    @property
    def off_peak_cost(self) -> float:
        return self.totals.off_peak_cost

    @property
    def lost_tokens_by_cause(self) -> dict[str, int]:
        return self.totals.lost_tokens_by_cause

    @property
    def lost_cost_by_cause(self) -> dict[str, float]:
        return self.totals.lost_cost_by_cause

    @property
    def break_cost(self) -> float:
        """Cost of the tokens the breaks lost (requests classified as a break)."""
        return self.totals.break_cost

    @property
    def unpriced(self) -> dict[str, int]:
        """Reason -> number of requests not priced."""
        return self.totals.unpriced

    @property
    def captured_usage(self) -> dict[int, Tokens]:
        """Request index -> the tokens it was priced from when they are the capture's (its log holds
        no usage: ``usage_source`` ``capture``), as :attr:`SessionCacheReport.captured_usage` holds them."""
        return {e.index: e.tokens for e in self.entries if e.usage_source == "capture" and e.tokens is not None}

    def summary(self) -> dict[str, Any]:
        """The session's totals (the ``cost`` object of ``cache --json``: :meth:`LedgerTotals.summary`)."""
        return self.totals.summary()

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "session_id": self.session_id, **self.summary(), "prices": self.prices,
                "ledger": [e.to_json() for e in self.entries]}


def _route(session: Session, request: Request) -> str | None:
    route = session.route(request)
    return route.api or route.adapter


def session_ledger(source: Session | str | os.PathLike[str], *, prices: PriceBook | None = None,
                   cache: SessionCacheReport | None = None, lenient: bool = False,
                   captured: Mapping[int, Tokens] | None = None) -> SessionLedger:
    """Price every request of one session.

    Args:
        source: a :class:`~dsh_audit.session.Session` or a log file (opened here).
        prices: the price table (default :func:`load_prices`: packaged + pyproject).
        cache: the session's cache report, whose per-request lost tokens are priced too.
        captured: request index -> the tokens the captured response to its send reports
            (:func:`dsh_audit.cache.captured_usage`), which price a request whose log holds no usage
            (:func:`entry_usage`).

    Example:
        >>> ledger = session_ledger("sample_logs/chat/session.jsonl")
        >>> [e.kind for e in ledger.entries], ledger.tokens.total > 0
        (['title', 'loop', 'loop'], True)
    """
    session = source if isinstance(source, Session) else open_session(source, lenient=lenient)
    book = prices if prices is not None else load_prices()
    verdicts = {v.index: v for v in cache.verdicts} if cache is not None else {}
    times, captured = session.times, captured or {}
    entries = tuple(price_entry(r, book, verdicts.get(r.index), sent=t.sent if (t := times.get(r.index)) else None,
                                route=_route(session, r), captured=captured.get(r.index))
                    for r in session.requests)
    return SessionLedger(session.path, session.id, entries, book.to_json())
