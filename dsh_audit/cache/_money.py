"""Money as values: tokens and USD by billing bucket, the rates a bucket is billed at, and the two
functions every amount goes through; no I/O and nothing of the pipeline (``dsh-audit stats`` sums
the ledger the index stored with these alone).

Money has one representation: USD as a float holding a whole number of nano-dollars. A bucket's
cost is worked out in decimal (tokens x the rate as the table writes it) and rounded to the nano-dollar
(:func:`usd_cost`); every sum goes through :func:`usd_total`, so a total is the same number
whichever way its requests are grouped (by session, turn, day, model, in ``stats``' SQL).

An amount summed over requests some of which have no price follows one rule in every view, kept
in one place: :class:`Priced` (never ``$0`` for unknown: ``$?`` or a lower bound ``≥$x``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any, TypeGuard

__all__ = ["CostSums", "Costs", "ExactSum", "Priced", "Rates", "Tokens", "group_unpriced", "usd_cost", "usd_text",
           "usd_total", "write_rate"]

_DIGITS = 9  # nano-dollars
#: Each positive rate as the decimal :func:`usd_cost` reads it (``Decimal(repr(rate))``), made once:
#: a table has a few dozen; emptied whole past :data:`_RATES_LIMIT`.
_RATES: dict[float, Decimal] = {}
_RATES_LIMIT = 1024
_BUCKETS = ("cache_miss", "cache_read", "output", "cache_write_5m", "cache_write_1h")


@dataclass(frozen=True, slots=True)
class Rates:
    """USD per ``per`` tokens of each bucket; a write without its own rate is billed as input."""

    cache_miss: float
    cache_read: float
    output: float
    cache_write_5m: float | None = None
    cache_write_1h: float | None = None

    @property
    def cache_write(self) -> float:
        """The rate of a logged cache write (5-minute TTL: DSH's usage does not split them)."""
        return self.cache_write_5m if self.cache_write_5m is not None else self.cache_miss

    def to_json(self) -> dict[str, float]:
        return {k: v for k in _BUCKETS if (v := getattr(self, k)) is not None}


def usd_cost(tokens: int, rate: float | Decimal, per: int) -> float:
    """``tokens`` at ``rate`` USD per ``per`` tokens, exact in decimal, rounded to the nano-dollar.

    Example:
        >>> usd_cost(3, 0.1, 1), 3 * 0.1 / 1
        (0.3, 0.30000000000000004)
    """
    if type(rate) is float and 0.0 < rate < math.inf and per > 0:  # a table's rate (not a signed zero)
        if not tokens:
            return 0.0  # what the decimal product of 0 tokens rounds to, at any such rate
        exact_rate = _RATES.get(rate)
        if exact_rate is None:
            if len(_RATES) >= _RATES_LIMIT:
                _RATES.clear()
            exact_rate = _RATES[rate] = Decimal(repr(rate))
    else:
        exact_rate = rate if isinstance(rate, Decimal) else Decimal(repr(rate))
    exact = Decimal(tokens) * exact_rate / Decimal(per)
    try:
        return float(round(exact, _DIGITS))
    except InvalidOperation:  # past 28 significant digits down to the nano-dollar (a huge rate or count)
        with localcontext() as context:
            context.prec = exact.adjusted() + _DIGITS + 2
            return float(round(exact, _DIGITS))


def usd_total(values: Iterable[float]) -> float:
    """The sum of amounts in USD, rounded to the nano-dollar: of amounts that are whole nano-dollars,
    the exact sum whatever their order or grouping.

    Example:
        >>> usd_total([0.1, 0.2]), 0.1 + 0.2
        (0.3, 0.30000000000000004)
    """
    return round(math.fsum(values), _DIGITS)


def usd_text(usd: float, digits: int = 4) -> str:
    """``usd`` for people: ``$x`` to ``digits`` decimals, or, for an amount that is not 0 but would
    show as ``$0.0000``, to its first two significant digits (down to the nano-dollar): never an
    exact-looking zero for money that is not.

    Example:
        >>> usd_text(0.01234), usd_text(0.000021), usd_text(0.0), usd_text(1e-09)
        ('$0.0123', '$0.000021', '$0.0000', '$0.000000001')
    """
    text = f"{usd:.{digits}f}"
    if usd and not text.strip("-0."):
        places = min(1 - math.floor(math.log10(abs(usd))), _DIGITS)
        text = f"{usd:.{places}f}"
    return f"${text}"


@dataclass(frozen=True, slots=True)
class Priced:
    """An amount in USD summed over a group of requests of which some may have no price: the one
    rule every view (``usage``, ``cache``, ``stats``, ``check``, ``report``) shows money by.

    A request *owes* an amount when it has something to price in it: every request owes its cost,
    its cost with no cache and its cost off-peak; only a request that lost cache reads owes a lost
    cost, and only a break that lost them a break cost (a request that lost no token lost $0,
    whatever its price). The amount is

    - exactly 0 (``$0.0000``, JSON 0) when no request of the group owes it, whatever their prices
      (a loss with no lost token costs nothing);
    - unknown (JSON null, ``$?``) when none of the requests that owe it has a price for it: never
      ``$0`` for money no rate prices;
    - else the sum over the priced requests (:func:`usd_total`), shown ``$x`` when every request
      that owes it was priced and ``≥$x`` (a lower bound, beside the group's unpriced count and
      ``cost_complete``) when one that owes it was not (an unpriced request that lost nothing
      leaves the lost cost exact). An amount above 0 too small for ``digits`` decimals is shown to
      two significant digits (:func:`usd_text`), never as ``$0.0000``.

    Attributes:
        usd: the sum over the priced requests.
        requests, unpriced: the group's requests, and how many of them were not priced.
        owing, owing_unpriced: the requests that owe the amount, and how many of them have no price
            for it.

    Example:
        >>> lost = Priced().add(0.0, priced=True, owes=False).add(None, priced=False, owes=True)
        >>> lost.known, lost.shown(), lost.add(0.25, priced=True).shown()
        (None, '$?', '≥$0.2500')
        >>> Priced().add(None, priced=False, owes=False).known  # nothing lost, nothing priced: 0
        0.0
    """

    usd: float = 0.0
    requests: int = 0
    unpriced: int = 0
    owing: int = 0
    owing_unpriced: int = 0

    def add(self, amount: float | None, *, priced: bool, owes: bool = True) -> Priced:
        """The sum with one more request: ``amount`` what it owes (None: no price for it),
        ``priced`` whether the request was priced, ``owes`` whether it owes anything here."""
        return Priced(self.usd if amount is None else usd_total((self.usd, amount)), self.requests + 1,
                      self.unpriced + (not priced), self.owing + owes, self.owing_unpriced + (owes and amount is None))

    def __add__(self, other: Priced) -> Priced:
        return Priced(usd_total((self.usd, other.usd)), self.requests + other.requests, self.unpriced + other.unpriced,
                      self.owing + other.owing, self.owing_unpriced + other.owing_unpriced)

    @property
    def known(self) -> float | None:
        """The amount as JSON gives it: None when it is unknown (every request that owes it has no
        price for it), else the sum over the priced requests (a lower bound when :attr:`bound`; 0
        when no request owes it)."""
        if self.owing_unpriced and self.owing_unpriced >= self.owing:
            return None
        return self.usd + 0.0  # no -0.0

    @property
    def bound(self) -> bool:
        """Whether a known amount is a lower bound: a request that owes it has no price for it."""
        return self.owing_unpriced > 0

    def shown(self, digits: int = 4) -> str:
        """The amount for people: ``$x``, ``≥$x`` when a request that owes it is unpriced
        (:attr:`bound`), ``$?`` when it is unknown (:func:`usd_text`)."""
        known = self.known
        if known is None:
            return "$?"
        return ("≥" if self.bound else "") + usd_text(known, digits)


def is_count(value: Any) -> TypeGuard[int]:
    """A logged token count: a non-negative integer (a negative or wrong-typed one is none, as
    :func:`~dsh_audit.session.logged_cache_read` reads it): the one rule of the cache package."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


@dataclass(frozen=True, slots=True)
class Tokens:
    """Tokens by billing bucket (``reasoning`` is part of ``output``, shown apart)."""

    cache_miss: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    reasoning: int = 0

    @property
    def prompt(self) -> int:
        return self.cache_miss + self.cache_read + self.cache_write

    @property
    def total(self) -> int:
        return self.prompt + self.output

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(*(a + b for a, b in zip(self._values(), other._values())))

    def _values(self) -> tuple[int, ...]:
        return (self.cache_miss, self.cache_read, self.cache_write, self.output, self.reasoning)

    @classmethod
    def of(cls, usage: Any) -> Tokens | None:
        """The buckets of a DSH ``TokenUsage``; None when it is absent or has no input/output count."""
        if not isinstance(usage, dict) or not is_count(usage.get("inputTokens")) or not is_count(usage.get("outputTokens")):
            return None
        extra = {k: usage.get(name) for k, name in (("cache_read", "cacheReadTokens"), ("cache_write", "cacheWriteTokens"),
                                                     ("reasoning", "reasoningTokens"))}
        return cls(usage["inputTokens"], output=usage["outputTokens"],
                   **{k: v for k, v in extra.items() if is_count(v)})

    def to_json(self) -> dict[str, int]:
        return {"cache_miss": self.cache_miss, "cache_read": self.cache_read, "cache_write": self.cache_write,
                "output": self.output, "reasoning": self.reasoning, "total": self.total}


@dataclass(frozen=True, slots=True)
class Costs:
    """USD by billing bucket."""

    cache_miss: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    output: float = 0.0

    @property
    def total(self) -> float:
        return usd_total(self._values())

    def _values(self) -> tuple[float, float, float, float]:
        return (self.cache_miss, self.cache_read, self.cache_write, self.output)

    def __add__(self, other: Costs) -> Costs:
        return Costs(*(usd_total(pair) for pair in zip(self._values(), other._values())))

    @classmethod
    def of(cls, tokens: Tokens, rates: Rates, per: int, *, retention: str | None = None) -> Costs:
        """``tokens`` at ``rates``; cache writes at the rate of ``retention`` (:func:`write_rate`)."""
        return cls(usd_cost(tokens.cache_miss, rates.cache_miss, per), usd_cost(tokens.cache_read, rates.cache_read, per),
                   usd_cost(tokens.cache_write, write_rate(rates, retention)[1], per),
                   usd_cost(tokens.output, rates.output, per))

    @classmethod
    def of_many(cls, items: Iterable[Costs]) -> Costs:
        """The bucket-wise :func:`usd_total` of ``items``."""
        rows = [c._values() for c in items]
        return cls(*(usd_total(column) for column in zip(*rows))) if rows else cls()

    def to_json(self) -> dict[str, float]:
        return {"cache_miss": round(self.cache_miss, _DIGITS), "cache_read": round(self.cache_read, _DIGITS),
                "cache_write": round(self.cache_write, _DIGITS), "output": round(self.output, _DIGITS),
                "total": self.total}

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
    """A running sum of floats kept exact (as non-overlapping partial sums, Shewchuk's algorithm,
    which :func:`math.fsum` uses): :meth:`usd` is :func:`usd_total` of every value added, in any
    order, without keeping them.

    Example:
        >>> total = ExactSum()
        >>> for value in (0.1, 0.2, 1e-12):
        ...     total.add(value)
        >>> total.usd() == usd_total([0.1, 0.2, 1e-12])
        True
    """

    __slots__ = ("_partials",)

    def __init__(self) -> None:
        self._partials: list[float] = []

    def add(self, value: float) -> None:
        partials, at = self._partials, 0
        for other in partials:
            if abs(value) < abs(other):
                value, other = other, value
            high = value + other
            low = other - (high - value)
            if low:
                partials[at] = low
                at += 1
            value = high
        partials[at:] = [value]

    def usd(self) -> float:
        return usd_total(self._partials)


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

    __slots__ = ("_amounts", "_by_cause", "_costs", "_lost_tokens", "_priced_causes", "_unpriced", "lost_unknown",
                 "requests", "tokens", "usage_unknown")

    #: The amounts :meth:`known` and :meth:`shown` name: the cost, with no cache, all off-peak,
    #: what the lost cache reads cost and what the breaks' lost cache reads cost.
    AMOUNTS = ("cost", "no_cache", "off_peak", "lost", "break")

    def __init__(self) -> None:
        self.requests = 0
        self.tokens = Tokens()
        self.usage_unknown = 0  # requests with no usage logged: ``tokens`` sums the others
        self.lost_unknown = 0  # requests that lost an unknown amount (breaks whose cache reads were not logged)
        self._costs: list[ExactSum] | None = None  # by bucket, once a priced entry came
        self._amounts = dict.fromkeys(self.AMOUNTS, Priced())
        self._lost_tokens: Counter[str] = Counter()
        self._by_cause: dict[str, tuple[Priced, Priced]] = {}  # cause -> (lost, of which in breaks)
        self._priced_causes: set[str] = set()  # the causes a priced request lost tokens to
        self._unpriced: Counter[str] = Counter()

    def add_request(self, *, tokens: Tokens | None, cost: Costs | None, no_cache: float | None,
                    off_peak: float | None, lost: Mapping[str, int], lost_cost: Mapping[str, float] | None,
                    is_break: bool, unpriced: str | None, lost_unknown: bool = False) -> None:
        """Add one request: ``tokens`` and ``cost`` by bucket (None: no usage logged, unpriced),
        what it would have cost with ``no_cache`` and ``off_peak``, the tokens it ``lost`` per
        cause and their ``lost_cost`` per cause (None: no rate priced them), whether it
        ``is_break``, why it is ``unpriced`` (None: priced), and whether what it lost is unknown
        (``lost_unknown``: a break whose cache reads were not logged; ``lost`` is then empty).

        Every request owes its cost, its no-cache and off-peak cost; only one that lost tokens owes
        a lost cost (per cause: one that lost tokens to it), and only such a break a break cost. A
        request whose loss is unknown owes both (if a break) an unknown amount: a sum it is in is
        a lower bound, or unknown, never an exact figure made of a guessed 0."""
        self.requests += 1
        if tokens is not None:
            self.tokens = self.tokens + tokens
        else:
            self.usage_unknown += 1
        if cost is not None:
            if self._costs is None:
                self._costs = [ExactSum() for _ in cost._values()]
            for bucket, value in zip(self._costs, cost._values()):
                bucket.add(value)
        priced = unpriced is None
        lost_usd = None if lost_cost is None or lost_unknown else usd_total(lost_cost.values())
        losing = lost_unknown or any(lost.values())
        self.lost_unknown += lost_unknown
        amounts = self._amounts
        for name, amount, owes in (("cost", None if cost is None else cost.total, True), ("no_cache", no_cache, True),
                                   ("off_peak", off_peak, True), ("lost", lost_usd, losing),
                                   ("break", lost_usd if is_break else 0.0, is_break and losing)):
            amounts[name] = amounts[name].add(amount, priced=priced, owes=owes)
        self._lost_tokens.update(lost)
        if lost_cost is not None:
            self._priced_causes.update(lost_cost)
        for cause, count in lost.items():
            cause_cost = None if lost_cost is None else lost_cost.get(cause, 0.0)
            cause_lost, cause_breaks = self._by_cause.get(cause, (Priced(), Priced()))
            self._by_cause[cause] = (cause_lost.add(cause_cost, priced=priced, owes=count > 0),
                                     cause_breaks.add(cause_cost if is_break else 0.0, priced=priced,
                                                      owes=is_break and count > 0))
        if unpriced:
            self._unpriced[unpriced] += 1

    def known(self, amount: str) -> float | None:
        """``amount`` (one of :data:`AMOUNTS`) as JSON gives it: None when no request that owes it
        was priced, else the sum over the priced ones (a lower bound when ``unpriced_requests``)."""
        return self._amounts[amount].known

    def shown(self, amount: str, digits: int = 4) -> str:
        """``amount`` (one of :data:`AMOUNTS`) for people: ``$x``, ``≥$x`` (a request that owes it
        unpriced), ``$?`` (unknown)."""
        return self._amounts[amount].shown(digits)

    def priced(self, amount: str) -> Priced:
        """``amount`` (one of :data:`AMOUNTS`) as its :class:`Priced` sum: which requests owe it
        and how many of them have no price for it."""
        return self._amounts[amount]

    @property
    def cost(self) -> Costs:
        return Costs() if self._costs is None else Costs(*(bucket.usd() for bucket in self._costs))

    @property
    def no_cache_cost(self) -> float:
        return self._amounts["no_cache"].usd

    @property
    def off_peak_cost(self) -> float:
        return self._amounts["off_peak"].usd

    @property
    def lost_tokens(self) -> int:
        """The cache reads lost, all causes."""
        return sum(self._lost_tokens.values())

    @property
    def lost_cost(self) -> float:
        """Cost of the tokens lost, all causes, over the priced requests (:meth:`known`: ``lost``)."""
        return self._amounts["lost"].usd

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
        return self._amounts["break"].usd

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
        unknown (breaks whose cache reads were not logged), of the ``lost_unpriced``."""
        unpriced = self.unpriced_requests
        return {"requests": self.requests, "tokens": self.tokens.to_json(),
                "cost_usd": None if self.known("cost") is None else self.cost.to_json(),
                "no_cache_cost_usd": self.known("no_cache"), "off_peak_cost_usd": self.known("off_peak"),
                "lost_tokens_by_cause": self.lost_tokens_by_cause, "lost_cost_usd_by_cause": self.lost_cost_by_cause,
                "break_cost_usd": self.known("break"), "unpriced": self.unpriced, "unpriced_requests": unpriced,
                "cost_complete": not unpriced, **_owing(self._amounts["lost"], self._amounts["break"]),
                "lost_unknown_requests": self.lost_unknown}


def _owing(lost: Priced, breaks: Priced) -> dict[str, int]:
    """The requests that owe a lost and a break cost, and how many of them have no price for it."""
    return {"lost_requests": lost.owing, "lost_unpriced": lost.owing_unpriced, "break_requests": breaks.owing,
            "break_unpriced": breaks.owing_unpriced}


_NO_RATE_ON = re.compile(r"(no rate for .*) in force (?:at|on) (\d{4}-\d\d-\d\d)(?:T\S*)?", re.DOTALL)


def group_unpriced(counts: Mapping[str, int]) -> dict[str, int]:
    """Reasons requests were not priced -> how many, sorted, the days a model had no rate in
    force grouped into one reason per model and provider with their date range (``... in force on
    D`` or ``... in force between A and B``; an index written before said ``in force at`` an
    exact time, read alike).

    Example:
        >>> group_unpriced({"no rate for 'm' (provider p) in force on 2026-07-14": 2,
        ...                 "no rate for 'm' (provider p) in force at 2026-07-13T13:56:40Z": 1, "no model": 1})
        {'no model': 1, "no rate for 'm' (provider p) in force between 2026-07-13 and 2026-07-14": 3}
    """
    days: dict[str, list[str]] = {}
    found: dict[str, int] = {}
    for reason, count in counts.items():
        match = _NO_RATE_ON.fullmatch(reason)
        if match is None:
            found[reason] = found.get(reason, 0) + count
            continue
        head, day = match.groups()
        days.setdefault(head, []).append(day)
        found[head] = found.get(head, 0) + count
    for head, seen in days.items():
        first, last = min(seen), max(seen)
        span = f"on {first}" if first == last else f"between {first} and {last}"
        count = found.pop(head)
        key = f"{head} in force {span}"
        found[key] = found.get(key, 0) + count
    return dict(sorted(found.items()))


def write_rate(rates: Rates, retention: str | None) -> tuple[str, float]:
    """The bucket and rate a cache write is billed at: ``cache_write_1h`` for a request whose body
    asked for the 1-hour TTL (``retention`` ``1h``, :attr:`CacheVerdict.cache_retention`) when the
    table has that rate, else ``cache_write_5m``, else ``cache_miss`` (a write without its own rate
    is billed as input).

    Example:
        >>> rates = Rates(3.0, 0.3, 15.0, cache_write_5m=3.75, cache_write_1h=6.0)
        >>> write_rate(rates, None), write_rate(rates, "1h"), write_rate(Rates(1.0, 0.1, 2.0), "1h")
        (('cache_write_5m', 3.75), ('cache_write_1h', 6.0), ('cache_miss', 1.0))
    """
    if retention == "1h" and rates.cache_write_1h is not None:
        return "cache_write_1h", rates.cache_write_1h
    return ("cache_write_5m" if rates.cache_write_5m is not None else "cache_miss"), rates.cache_write
