"""Sums of priced requests: USD by billing bucket (:class:`Costs`), a running exact sum
(:class:`ExactSum`), and what a group of requests adds up to (:class:`CostSums`), every amount by
the one rule of :class:`~dsh_audit.cache._money.Priced`; no I/O and nothing of the pipeline
(``dsh-audit stats`` sums the ledger the index stored with these alone).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ._money import (Priced, Rates, Tokens, cost_nanos, group_unpriced, nanos_usd, usd_nanos, usd_text, usd_total,
                     write_rate)

__all__ = ["CostSums", "Costs", "ExactSum"]

#: How a view shows an amount that does not apply (``check``'s reports of an amount a session's
#: summary lacks). Every amount of :class:`CostSums` applies to every request: the off-peak cost
#: of a request with one rate all day is what it cost.
NOT_APPLICABLE = "n/a"
#: The billing buckets of :class:`Costs`, in its order: amounts :meth:`CostSums.priced` names too.
_BUCKETS = ("cache_miss", "cache_read", "cache_write", "output")
#: The windows of a request priced where its provider has a peak window in force (``peak`` and
#: ``off-peak``, :mod:`~dsh_audit.cache._price_window`; ``standard``: one rate all day, or no time).
_WINDOWED = frozenset({"peak", "off-peak"})


@dataclass(frozen=True, slots=True)
class Costs:
    """USD by billing bucket; ``nanos``: each in whole nano-dollars (:func:`usd_nanos`; given alone,
    the amounts are made from them), which its total and every sum of costs add exactly."""

    #: How a view shows an amount that does not apply (:data:`NOT_APPLICABLE`, for ``stats``).
    NOT_APPLICABLE = NOT_APPLICABLE

    cache_miss: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    output: float = 0.0
    nanos: tuple[int, int, int, int] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        nanos = self.nanos
        if nanos is None:
            object.__setattr__(self, "nanos", tuple(map(usd_nanos, self._values())))
        else:  # one request's costs are made so (:meth:`of`): unrolled
            miss, read, write, output = nanos
            object.__setattr__(self, "cache_miss", nanos_usd(miss))
            object.__setattr__(self, "cache_read", nanos_usd(read))
            object.__setattr__(self, "cache_write", nanos_usd(write))
            object.__setattr__(self, "output", nanos_usd(output))

    @property
    def total(self) -> float:
        return nanos_usd(self.total_nanos)

    @property
    def total_nanos(self) -> int:
        """The total in whole nano-dollars, exact (what a sum of costs adds: :class:`ExactSum`)."""
        return sum(self._nanos())

    def _values(self) -> tuple[float, float, float, float]:
        return (self.cache_miss, self.cache_read, self.cache_write, self.output)

    def _nanos(self) -> tuple[int, int, int, int]:
        return self.nanos if self.nanos is not None else (0, 0, 0, 0)  # always set (__post_init__): for mypy

    def __add__(self, other: Costs) -> Costs:
        mine, theirs = self._nanos(), other._nanos()
        return Costs(nanos=(mine[0] + theirs[0], mine[1] + theirs[1], mine[2] + theirs[2], mine[3] + theirs[3]))

    @classmethod
    def of(cls, tokens: Tokens, rates: Rates, per: int, *, retention: str | None = None) -> Costs:
        """``tokens`` at ``rates``; cache writes at the rate of ``retention`` (:func:`write_rate`):
        each bucket :func:`~dsh_audit.cache._money.usd_cost`, to the nano-dollar (:meth:`nanos_of`).

        Example:
            >>> Costs.of(Tokens(1000, 2000, 300, 40), Rates(3.0, 0.3, 15.0, cache_write_5m=3.75), 1_000_000)
            Costs(cache_miss=0.003, cache_read=0.0006, cache_write=0.001125, output=0.0006)
        """
        return cls(nanos=cls.nanos_of(tokens, rates, per, retention=retention))

    @staticmethod
    def nanos_of(tokens: Tokens, rates: Rates, per: int, *, retention: str | None = None
                 ) -> tuple[int, int, int, int]:
        """The buckets of :meth:`of` in whole nano-dollars (:func:`cost_nanos`), with no :class:`Costs`
        made: what a total adds (``sum(Costs.nanos_of(...))`` is ``Costs.of(...).total_nanos``)."""
        miss, read, write, output = tokens.cache_miss, tokens.cache_read, tokens.cache_write, tokens.output
        return (cost_nanos(miss, rates.cache_miss, per) if miss else 0,
                cost_nanos(read, rates.cache_read, per) if read else 0,
                cost_nanos(write, write_rate(rates, retention)[1], per) if write else 0,
                cost_nanos(output, rates.output, per) if output else 0)

    @classmethod
    def of_many(cls, items: Iterable[Costs]) -> Costs:
        """The bucket-wise exact sum of ``items`` (:func:`~dsh_audit.cache._money.usd_total`)."""
        miss = read = write = output = 0
        for costs in items:
            nanos = costs._nanos()
            miss, read, write, output = miss + nanos[0], read + nanos[1], write + nanos[2], output + nanos[3]
        return cls(nanos=(miss, read, write, output))

    def to_json(self) -> dict[str, float]:
        """The buckets and their ``total``, each to the nano-dollar."""
        return {**{bucket: nanos_usd(nanos) for bucket, nanos in zip(_BUCKETS, self._nanos())}, "total": self.total}

    @staticmethod
    def sums() -> CostSums:
        """An empty :class:`CostSums`, the one place requests' amounts are summed (for ``stats``,
        which reaches the money values alone, without the pipeline)."""
        return CostSums()

    @staticmethod
    def text(usd: float, digits: int = 4) -> str:
        """:func:`usd_text`: a known amount for people, never ``$0.0000`` for one that is not 0."""
        return usd_text(usd, digits)

    @staticmethod
    def group_unpriced(counts: Mapping[str, int]) -> dict[str, int]:
        """:func:`group_unpriced`: why requests were not priced -> how many, one reason per model
        with no rate in force (for ``stats``, which sums the reasons the index stored)."""
        return group_unpriced(counts)

    @staticmethod
    def known(amount: float, *, requests: int, unpriced: int, owing: int | None = None,
              owing_unpriced: int | None = None) -> float | None:
        """``amount``, the priced sum over ``requests`` requests of which ``unpriced`` have no
        price, as JSON gives it (:attr:`Priced.known`, for sums made elsewhere, as ``stats``' SQL):
        None (unknown) when none of them was priced, or none of the ``owing`` requests that owe it
        (default: every one) was (``owing_unpriced`` of them have no price for it), else the sum (a
        lower bound when ``unpriced``: the view says so beside it, never a bare 0 for unknown).

        Example:
            >>> Costs.known(0.0, requests=2, unpriced=2), Costs.known(0.5, requests=2, unpriced=1)
            (None, 0.5)
            >>> Costs.known(0.0, requests=2, unpriced=1, owing=1, owing_unpriced=1) is None  # lost unpriced
            True
        """
        return Priced(amount, requests, unpriced, requests if owing is None else owing,
                      unpriced if owing_unpriced is None else owing_unpriced).known

    @staticmethod
    def shown(amount: float | None, *, requests: int, unpriced: int, digits: int = 4, owing: int | None = None,
              owing_unpriced: int | None = None) -> str:
        """``amount`` (as :meth:`known`) for people, one rule in every view (:meth:`Priced.shown`):
        ``$x`` when every request was priced, ``≥$x`` (a lower bound) when some were not, ``$?``
        (unknown, never ``$0``) when none was, or none of the ``owing`` that owe it (as :meth:`known`),
        or ``amount`` is None (``dsh-audit watch`` shows an unpriced request so).

        Example:
            >>> [Costs.shown(0.25, requests=2, unpriced=n) for n in (0, 1, 2)]
            ['$0.2500', '≥$0.2500', '$?']
        """
        if amount is None:
            return "$?"
        return Priced(amount, requests, unpriced, requests if owing is None else owing,
                      unpriced if owing_unpriced is None else owing_unpriced).shown(digits)


class ExactSum:
    """A running sum of amounts in USD kept exact, as whole nano-dollars (:func:`usd_nanos`, the
    one representation of a sum of money): :meth:`usd` is
    :func:`~dsh_audit.cache._money.usd_total` of every value added, in any order, without keeping them.

    Example:
        >>> total = ExactSum()
        >>> for value in (0.1, 0.2, 1e-12):
        ...     total.add(value)
        >>> total.usd() == usd_total([0.1, 0.2, 1e-12])
        True
    """

    __slots__ = ("nanos",)

    def __init__(self) -> None:
        self.nanos = 0

    def add(self, value: float) -> None:
        self.nanos += usd_nanos(value)

    def usd(self) -> float:
        return nanos_usd(self.nanos)


class CostSums:
    """What a group of priced requests adds up to, one request at a time (:meth:`add_request`):
    tokens and USD by bucket, what they would have cost with no cache and all off-peak, the cache
    reads they lost and what that cost, by cause and in breaks, and why some were not priced.

    The one place that says what a request owes of each amount, summed by the one rule of
    :class:`Priced` (:meth:`known`, :meth:`shown`): a session's ledger
    (:class:`~dsh_audit.cache.LedgerTotals`), every ``usage`` row and ``stats``' sums of the
    index's ledger rows (:meth:`Costs.sums`) all add up through it, so they agree. Every amount is
    summed exactly (:class:`ExactSum`, :func:`usd_total`), whichever way the requests are grouped.

    Example:
        >>> sums = Costs.sums()
        >>> sums.add_request(tokens=Tokens(10), cost=Costs(0.5), no_cache=0.5, off_peak=0.25, lost={},
        ...                  lost_cost={}, is_break=False, unpriced=None)
        >>> sums.add_request(tokens=Tokens(10, 90), cost=None, no_cache=None, off_peak=None,
        ...                  lost={"header_change": 80}, lost_cost=None, is_break=True, unpriced="no price")
        >>> sums.shown("cost"), sums.shown("lost"), sums.known("break"), sums.summary()["unpriced"]
        ('≥$0.5000', '$?', None, {'no price': 1})
    """

    __slots__ = ("_amounts", "_by_cause", "_costs", "_lost_tokens", "_priced_causes", "_tokens", "_unpriced",
                 "lost_unknown", "requests", "usage_differs", "usage_from_capture", "usage_unknown", "windowed")

    #: The amounts :meth:`known` and :meth:`shown` name: the cost, with no cache, all off-peak,
    #: what the lost cache reads cost and what the breaks' lost cache reads cost.
    AMOUNTS = ("cost", "no_cache", "off_peak", "lost", "break")

    def __init__(self) -> None:
        self.requests = 0
        self._tokens = [0, 0, 0, 0, 0]  # by bucket, as Tokens orders them: summed in place (:attr:`tokens`)
        self.usage_unknown = 0  # requests with no usage logged: ``tokens`` sums the others
        self.lost_unknown = 0  # requests that lost an unknown amount (breaks whose cache reads were not logged)
        self.usage_from_capture = 0  # requests whose log holds no usage, priced from a captured response's
        self.usage_differs = 0  # requests whose logged usage a captured response contradicts (the log's kept)
        self.windowed = 0  # requests priced where their provider has a peak window in force (peak, off-peak)
        self._costs: list[ExactSum] | None = None  # by bucket, once a priced entry came
        # name -> [nano-dollars, requests, unpriced, owing, owing_unpriced]: a :class:`Priced` summed in
        # place (:meth:`priced`), not a new value per request and amount
        self._amounts: dict[str, list[int]] = {name: [0, 0, 0, 0, 0] for name in self.AMOUNTS}
        self._lost_tokens: Counter[str] = Counter()
        self._by_cause: dict[str, tuple[Priced, Priced]] = {}  # cause -> (lost, of which in breaks)
        self._priced_causes: set[str] = set()  # the causes a priced request lost tokens to
        self._unpriced: Counter[str] = Counter()

    def add_request(self, *, tokens: Tokens | None, cost: Costs | None, no_cache: float | None,
                    off_peak: float | None, lost: Mapping[str, int], lost_cost: Mapping[str, float] | None,
                    is_break: bool, unpriced: str | None, lost_unknown: bool = False, from_capture: bool = False,
                    usage_differs: bool = False, window: str | None = None) -> None:
        """Add one request: ``tokens`` and ``cost`` by bucket (None: no usage logged, unpriced),
        what it would have cost with ``no_cache`` and ``off_peak``, the tokens it ``lost`` per
        cause and their ``lost_cost`` per cause (None: no rate priced them), whether it
        ``is_break``, why it is ``unpriced`` (None: priced), and whether what it lost is unknown
        (``lost_unknown``: a break whose cache reads were not logged; ``lost`` is then empty);
        ``from_capture``: its ``tokens`` are a captured response's (its log holds no usage);
        ``usage_differs``: its logged usage and a captured response's disagree (the log's is kept);
        ``window``: the window it was priced in (``peak``, ``off-peak``: its provider has a peak
        window in force then; ``standard`` or None: one rate all day, no time, or unpriced): one
        priced with one rate all day would have cost off-peak what it cost, so its off-peak cost is
        its cost, and every view shows the off-peak cost of any requests (a window, a folder, one
        log) as the same sum, splits adding up to the whole (:attr:`windowed` counts the others).

        Every request owes its cost, its no-cache and off-peak cost; only one that lost tokens owes
        a lost cost (per cause: one that lost tokens to it), and only such a break a break cost. A
        request whose loss is unknown owes both (if a break) an unknown amount: a sum it is in is
        a lower bound, or unknown, never an exact figure made of a guessed 0.

        Example:
            >>> sums = Costs.sums()
            >>> sums.add_request(tokens=Tokens(10), cost=Costs(0.5), no_cache=0.5, off_peak=None, lost={},
            ...                  lost_cost={}, is_break=False, unpriced=None, window="standard")
            >>> sums.known("off_peak"), sums.shown("off_peak"), sums.windowed
            (0.5, '$0.5000', 0)
        """
        self.requests += 1
        self.windowed += window in _WINDOWED
        if window is not None and window not in _WINDOWED:  # one rate all day: off-peak costs what it cost
            off_peak = None if cost is None else cost.total
        self.usage_from_capture += from_capture
        self.usage_differs += usage_differs
        if tokens is not None:
            counts = self._tokens
            counts[0] += tokens.cache_miss
            counts[1] += tokens.cache_read
            counts[2] += tokens.cache_write
            counts[3] += tokens.output
            counts[4] += tokens.reasoning
        else:
            self.usage_unknown += 1
        total_nanos = None
        if cost is not None:
            buckets = self._costs
            if buckets is None:
                buckets = self._costs = [ExactSum() for _ in _BUCKETS]
            miss, read, write, output = cost._nanos()
            buckets[0].nanos += miss
            buckets[1].nanos += read
            buckets[2].nanos += write
            buckets[3].nanos += output
            total_nanos = miss + read + write + output
        unpriced_one = unpriced is not None
        lost_nanos = None if lost_cost is None or lost_unknown else \
            sum(map(usd_nanos, lost_cost.values())) if lost_cost else 0
        losing = lost_unknown or (any(lost.values()) if lost else False)
        self.lost_unknown += lost_unknown
        # each amount as Priced.add sums it, in nano-dollars, in place: [nanos, requests, unpriced,
        # owing, owing_unpriced]; every request owes the first three
        amounts = self._amounts
        for sums, amount in ((amounts["cost"], total_nanos),
                             (amounts["no_cache"], None if no_cache is None else usd_nanos(no_cache)),
                             (amounts["off_peak"], None if off_peak is None else usd_nanos(off_peak))):
            if amount is None:
                sums[4] += 1
            else:
                sums[0] += amount
            sums[1] += 1
            sums[2] += unpriced_one
            sums[3] += 1
        sums = amounts["lost"]
        if lost_nanos is not None:
            sums[0] += lost_nanos
        sums[1] += 1
        sums[2] += unpriced_one
        if losing:
            sums[3] += 1
            sums[4] += lost_nanos is None
        sums = amounts["break"]
        if is_break and lost_nanos is not None:
            sums[0] += lost_nanos
        sums[1] += 1
        sums[2] += unpriced_one
        if is_break and losing:
            sums[3] += 1
            sums[4] += lost_nanos is None
        if lost:
            self._lost_tokens.update(lost)
        if lost_cost is not None:
            self._priced_causes.update(lost_cost)
        priced = not unpriced_one
        for cause, count in lost.items():
            cause_cost = None if lost_cost is None else lost_cost.get(cause, 0.0)
            cause_lost, cause_breaks = self._by_cause.get(cause, (Priced(), Priced()))
            self._by_cause[cause] = (cause_lost.add(cause_cost, priced=priced, owes=count > 0),
                                     cause_breaks.add(cause_cost if is_break else 0.0, priced=priced,
                                                      owes=is_break and count > 0))
        if unpriced:
            self._unpriced[unpriced] += 1

    def merge(self, other: CostSums) -> None:
        """Add every request ``other`` summed, as if each had been added here (:meth:`add_request`):
        a request's amounts are summed once, in the group that holds it, and groups made of such
        groups (``usage``'s rows and its total) take their sums. Whole nano-dollar amounts sum
        exactly whatever their grouping (:func:`usd_total`, :class:`ExactSum`), so the result is
        the same as adding the requests one by one.

        Example:
            >>> one, two, both = Costs.sums(), Costs.sums(), Costs.sums()
            >>> for sums, cost in ((one, 0.1), (two, 0.2), (both, 0.1), (both, 0.2)):
            ...     sums.add_request(tokens=Tokens(1), cost=Costs(cost), no_cache=cost, off_peak=cost,
            ...                      lost={"prune": 1}, lost_cost={"prune": cost}, is_break=True, unpriced=None)
            >>> one.merge(two)
            >>> one.summary() == both.summary(), one.causes() == both.causes()
            (True, True)
        """
        self.requests += other.requests
        self.windowed += other.windowed
        self.usage_from_capture += other.usage_from_capture
        self.usage_differs += other.usage_differs
        self.usage_unknown += other.usage_unknown
        self.lost_unknown += other.lost_unknown
        self._tokens = [mine + theirs for mine, theirs in zip(self._tokens, other._tokens)]
        if other._costs is not None:
            if self._costs is None:
                self._costs = [ExactSum() for _ in other._costs]
            for bucket, given in zip(self._costs, other._costs):
                bucket.nanos += given.nanos
        for name, sums in self._amounts.items():
            given_sums = other._amounts[name]
            for at in range(5):
                sums[at] += given_sums[at]
        self._lost_tokens.update(other._lost_tokens)
        self._priced_causes.update(other._priced_causes)
        for cause, (lost, breaks) in other._by_cause.items():
            mine = self._by_cause.get(cause)
            self._by_cause[cause] = (lost, breaks) if mine is None else (mine[0] + lost, mine[1] + breaks)
        self._unpriced.update(other._unpriced)

    def known(self, amount: str) -> float | None:
        """``amount`` (one of :data:`AMOUNTS` or a bucket, :meth:`priced`) as JSON gives it: None
        when no request that owes it was priced, else the sum over the priced ones (a lower bound
        when ``unpriced_requests``)."""
        return self.priced(amount).known

    def shown(self, amount: str, digits: int = 4, *, failed: bool = False) -> str:
        """``amount`` (one of :data:`AMOUNTS` or a bucket, :meth:`priced`) for people: ``$x``,
        ``≥$x`` (a request that owes it unpriced, or ``failed``: :meth:`Priced.shown`), ``$?``
        (unknown)."""
        return self.priced(amount).shown(digits, failed=failed)

    def priced(self, amount: str) -> Priced:
        """``amount`` (one of :data:`AMOUNTS`, or a bucket of :class:`Costs`: ``cache_miss``, ...)
        as its :class:`Priced` sum: which requests owe it and how many of them have no price for it.
        A bucket is owed as the cost is (every request, and one with no cost has none of it), so
        ``usage``'s cost by bucket is ``≥$x`` or ``$?`` exactly when its "cost" is.

        Example:
            >>> sums = Costs.sums()
            >>> sums.add_request(tokens=Tokens(10), cost=Costs(0.5, output=0.25), no_cache=0.75, off_peak=0.75,
            ...                  lost={}, lost_cost={}, is_break=False, unpriced=None)
            >>> sums.add_request(tokens=None, cost=None, no_cache=None, off_peak=None, lost={}, lost_cost=None,
            ...                  is_break=False, unpriced="usage not logged")
            >>> sums.shown("output"), sums.known("cache_write"), sums.shown("cost")
            ('≥$0.2500', 0.0, '≥$0.7500')
        """
        if amount in _BUCKETS:
            cost = self.priced("cost")
            bucket = 0 if self._costs is None else self._costs[_BUCKETS.index(amount)].nanos
            return Priced(0.0, cost.requests, cost.unpriced, cost.owing, cost.owing_unpriced, bucket)
        nanos, requests, unpriced, owing, owing_unpriced = self._amounts[amount]
        return Priced(0.0, requests, unpriced, owing, owing_unpriced, nanos)

    @property
    def tokens(self) -> Tokens:
        """The tokens of the requests with a usage, by bucket."""
        return Tokens(*self._tokens)

    @property
    def cost(self) -> Costs:
        if self._costs is None:
            return Costs()
        miss, read, write, output = (bucket.nanos for bucket in self._costs)
        return Costs(nanos=(miss, read, write, output))

    @property
    def no_cache_cost(self) -> float:
        return nanos_usd(self._amounts["no_cache"][0])

    @property
    def off_peak_cost(self) -> float:
        return nanos_usd(self._amounts["off_peak"][0])

    @property
    def lost_tokens(self) -> int:
        """The cache reads lost, all causes."""
        return sum(self._lost_tokens.values())

    @property
    def lost_cost(self) -> float:
        """Cost of the tokens lost, all causes, over the priced requests (:meth:`known`: ``lost``)."""
        return nanos_usd(self._amounts["lost"][0])

    @property
    def lost_tokens_by_cause(self) -> dict[str, int]:
        return dict(sorted(self._lost_tokens.items()))

    @property
    def lost_cost_by_cause(self) -> dict[str, float]:
        """Cause -> what its lost tokens cost over the priced requests (a cause lost only by
        unpriced requests is left out: :meth:`causes` says it is unknown)."""
        return {cause: lost.usd for cause, (lost, _) in sorted(self._by_cause.items()) if cause in self._priced_causes}

    def causes(self) -> dict[str, tuple[int, float | None, float | None]]:
        """Cause -> tokens lost, what they cost and the part lost in breaks, each as JSON gives it
        (:meth:`known`: None when no request that lost them was priced)."""
        return {cause: (self._lost_tokens[cause], lost.known, breaks.known)
                for cause, (lost, breaks) in sorted(self._by_cause.items())}

    def cause_owing(self) -> dict[str, dict[str, int]]:
        """Cause -> the requests that owe what its lost tokens cost and the part lost in breaks
        (``lost_requests``, ``break_requests``), and how many of them have no price for it
        (``lost_unpriced``, ``break_unpriced``): what a view needs to show them by :class:`Priced`."""
        return {cause: _owing(lost, breaks) for cause, (lost, breaks) in sorted(self._by_cause.items())}

    @property
    def break_cost(self) -> float:
        """Cost of the tokens the breaks lost (requests classified as a break)."""
        return nanos_usd(self._amounts["break"][0])

    @property
    def unpriced(self) -> dict[str, int]:
        """Reason -> number of requests not priced (reasons of one model grouped: :func:`group_unpriced`)."""
        return group_unpriced(self._unpriced)

    @property
    def unpriced_requests(self) -> int:
        """The requests not priced."""
        return sum(self._unpriced.values())

    def summary(self) -> dict[str, Any]:
        """The sums as JSON (the ``cost`` object of ``cache --json``).
        Amounts are sums over the priced requests, by the one rule (:meth:`known`): None (unknown)
        when no request that owes one was priced; ``unpriced_requests`` counts the requests not
        priced and ``cost_complete`` is False when there are any (the amounts are then lower bounds).
        ``lost_requests`` and ``break_requests`` count the requests that owe a lost and a break
        cost (they lost tokens, or lost an unknown amount), ``lost_unpriced`` and ``break_unpriced``
        those of them with no known cost for it: an amount is a lower bound only when the latter
        is not 0 (:class:`Priced`); ``lost_unknown_requests`` counts the requests whose loss is
        unknown (breaks whose cache reads were not logged), of the ``lost_unpriced``;
        ``usage_from_capture_requests`` counts the requests whose log holds no usage that were priced
        from the capture's (``--capture``), ``usage_differs_requests`` those whose logged usage the
        capture's contradicts (the log's is kept); ``tokens`` null when there are requests and none
        of them has a usage (logged or captured). ``off_peak_cost_usd`` is always there (a request
        with one rate all day at its cost: :meth:`add_request`)."""
        unpriced = self.unpriced_requests
        # a sum of no request's usage is unknown (null), as ``usage --json`` and ``stats --json`` have it: never 0
        known = not self.requests or self.usage_unknown < self.requests
        return {"requests": self.requests, "tokens": self.tokens.to_json() if known else None,
                "cost_usd": None if self.known("cost") is None else self.cost.to_json(),
                "no_cache_cost_usd": self.known("no_cache"), "off_peak_cost_usd": self.known("off_peak"),
                "lost_tokens_by_cause": self.lost_tokens_by_cause, "lost_cost_usd_by_cause": self.lost_cost_by_cause,
                "break_cost_usd": self.known("break"), "unpriced": self.unpriced, "unpriced_requests": unpriced,
                "cost_complete": not unpriced, **_owing(self.priced("lost"), self.priced("break")),
                "lost_unknown_requests": self.lost_unknown, "usage_from_capture_requests": self.usage_from_capture,
                "usage_differs_requests": self.usage_differs}


def _owing(lost: Priced, breaks: Priced) -> dict[str, int]:
    """The requests that owe a lost and a break cost, and how many of them have no price for it."""
    return {"lost_requests": lost.owing, "lost_unpriced": lost.owing_unpriced, "break_requests": breaks.owing,
            "break_unpriced": breaks.owing_unpriced}
