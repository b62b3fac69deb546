"""Money as values: tokens and USD by billing bucket, the rates a bucket is billed at, and the two
functions every amount goes through; no I/O and nothing of the pipeline (``dsh-audit stats`` sums
the ledger the index stored with these alone).

Money has one representation: USD as a float holding a whole number of nano-dollars. A bucket's
cost is worked out in decimal (tokens x the rate as the table writes it) and rounded to the nano-dollar
(:func:`usd_cost`); every sum is kept as an integer count of nano-dollars (:func:`usd_nanos` in,
:func:`nanos_usd` out, once, when the sum is read: :func:`usd_total`, :class:`Priced`, the sums of
:mod:`._sums`), so a total is exact whatever its size and the same number whichever way its
requests are grouped (by session, turn, day, model, in ``stats``' SQL): a million requests sum to
what their tokens together are priced at.

An amount summed over requests some of which have no price follows one rule in every view, kept
in one place: :class:`Priced` (never ``$0`` for unknown: ``$?`` or a lower bound ``≥$x``). Sums of
priced requests by bucket and amount are :mod:`._sums`'.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any

from .._usage_rule import count_of

__all__ = ["Priced", "Rates", "Tokens", "cost_nanos", "group_unpriced", "nanos_usd", "usd_cost", "usd_nanos",
           "usd_text", "usd_total", "write_rate"]

_DIGITS = 9  # nano-dollars
_NANO = 1_000_000_000  # 10 ** _DIGITS
#: Below this many USD an amount times 1e9 is within 1/16 of its exact product (the fast path of :func:`usd_nanos`).
_FAST = 2.0**20
#: Each positive rate as the decimal :func:`usd_cost` reads it (``Decimal(repr(rate))``), made once:
#: a table has a few dozen; emptied whole past :data:`_RATES_LIMIT`.
_RATES: dict[float, Decimal] = {}
_RATES_LIMIT = 1024
#: (rate, per) -> :func:`cost_nanos`' integer form of it (:func:`_exact_rate`), made once; emptied as :data:`_RATES`.
_EXACT: dict[tuple[float, int], tuple[int, int, int, int] | None] = {}
_UNSEEN = (0, 0, 0, 0)  # not in _EXACT yet (compared by identity)
#: :func:`usd_cost`'s decimal product of tokens and a rate is exact below this (28 digits).
_PRODUCT = 10**28
#: Nano-dollar counts below this are what the float of their USD reads back as (:func:`usd_nanos`).
_WHOLE = 2**52
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


def cost_nanos(tokens: int, rate: float, per: int) -> int:
    """:func:`usd_cost` in whole nano-dollars (``usd_nanos(usd_cost(tokens, rate, per))``), worked out
    in integers where that is the same exact decimal (a table's rate, ``per`` a power of ten, a
    product of at most 28 digits, an amount a float holds to the nano-dollar), else as that.

    Example:
        >>> cost_nanos(3, 0.1, 1), cost_nanos(1000, 0.3, 1_000_000), cost_nanos(1, 2.5e-09, 1), cost_nanos(3, 1.0, 7)
        (300000000, 300000, 2, 428571429)
    """
    exact = _EXACT.get((rate, per), _UNSEEN) if type(rate) is float else None
    if exact is _UNSEEN:
        exact = _exact_rate(rate, per)
    if exact is None:
        return usd_nanos(usd_cost(tokens, rate, per))
    per_token, below, digits, shift = exact
    if 0 <= tokens < below:  # most counts: a whole number of nano-dollars per token, well in range
        return tokens * per_token
    product = tokens * digits
    if not -_PRODUCT < product < _PRODUCT:
        return usd_nanos(usd_cost(tokens, rate, per))
    if shift >= 0:
        nanos = product * 10**shift
    else:
        unit = 10**-shift
        nanos, rest = divmod(product, unit)
        nanos += 2 * rest > unit or (2 * rest == unit and nanos % 2 == 1)
    return nanos if -_WHOLE < nanos < _WHOLE else usd_nanos(nanos_usd(nanos))


def _exact_rate(rate: float, per: int) -> tuple[int, int, int, int] | None:
    """``rate`` per ``per`` tokens as ``(per_token, below, digits, shift)``: nano-dollars per token
    ``digits x 10**shift``, the decimal :func:`usd_cost` reads (``Decimal(repr(rate))``), and when
    that is a whole number (``shift`` not negative) that number and the token counts below which
    :func:`cost_nanos` is their product (0, 0 else); None where it does not use it (not a table's
    rate, ``per`` not a power of ten). Kept in :data:`_EXACT`."""
    found: tuple[int, int, int, int] | None = None
    places = len(str(per)) - 1 if type(per) is int and per > 0 else -1
    if 0.0 < rate < math.inf and places >= 0 and per == 10**places:
        _sign, digits, exponent = Decimal(repr(rate)).as_tuple()
        if isinstance(exponent, int):  # a finite rate (always, here): for mypy
            number, shift = int("".join(map(str, digits))), exponent + _DIGITS - places
            per_token = number * 10**shift if shift >= 0 else 0
            # the product within usd_cost's 28 digits and the amount within a float's nano-dollars
            below = min(-(-_PRODUCT // number), -(-_WHOLE // per_token)) if per_token else 0
            found = (per_token, below, number, shift)
    if len(_EXACT) >= _RATES_LIMIT:
        _EXACT.clear()
    _EXACT[(rate, per)] = found
    return found


def usd_nanos(usd: float) -> int:
    """``usd`` (a finite amount) in whole nano-dollars: the nearest, half to even, as ``round(usd, 9)``
    rounds; of an amount that is a whole number of nano-dollars (every amount :func:`usd_cost` gives),
    that number exactly. Every sum of money adds these (:func:`usd_total`).

    Example:
        >>> usd_nanos(0.1), usd_nanos(2703701.73), usd_nanos(2.0 ** -10), usd_nanos(-1e-9)
        (100000000, 2703701730000000, 976562, -1)
    """
    scaled = usd * 1e9
    whole = round(scaled)
    if -_FAST < usd < _FAST and -0.25 < scaled - whole < 0.25:  # no tie near: the exact product rounds alike
        return whole
    numerator, denominator = usd.as_integer_ratio()
    whole, rest = divmod(numerator * _NANO, denominator)
    return whole + (2 * rest > denominator or (2 * rest == denominator and whole % 2 == 1))


def nanos_usd(nanos: int) -> float:
    """``nanos`` nano-dollars in USD: the float nearest the exact amount (the one rounding a sum of
    money has, when it is read; :func:`usd_total`).

    Example:
        >>> nanos_usd(300000000), nanos_usd(12345678901234567)
        (0.3, 12345678.901234567)
    """
    return nanos / _NANO  # int / int: correctly rounded


def usd_total(values: Iterable[float]) -> float:
    """The sum of amounts in USD, each taken to the nano-dollar (:func:`usd_nanos`) and added exactly,
    rounded once (:func:`nanos_usd`): of amounts that are whole nano-dollars, the exact sum whatever
    their size, order or grouping.

    Example:
        >>> usd_total([0.1, 0.2]), 0.1 + 0.2
        (0.3, 0.30000000000000004)
    """
    return nanos_usd(sum(map(usd_nanos, values)))


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
        nanos: the sum in whole nano-dollars, kept exact as the sum grows (:func:`usd_nanos`; given
            alone, ``usd`` is made from it): ``usd`` is its one rounding.

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
    nanos: int | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.nanos is None:
            object.__setattr__(self, "nanos", usd_nanos(self.usd))
        else:
            object.__setattr__(self, "usd", nanos_usd(self.nanos))

    @property
    def _nanos(self) -> int:
        return self.nanos if self.nanos is not None else usd_nanos(self.usd)  # always set: for mypy

    def add(self, amount: float | None, *, priced: bool, owes: bool = True) -> Priced:
        """The sum with one more request: ``amount`` what it owes (None: no price for it),
        ``priced`` whether the request was priced, ``owes`` whether it owes anything here."""
        return Priced(0.0, self.requests + 1, self.unpriced + (not priced), self.owing + owes,
                      self.owing_unpriced + (owes and amount is None),
                      self._nanos + (0 if amount is None else usd_nanos(amount)))

    def __add__(self, other: Priced) -> Priced:
        return Priced(0.0, self.requests + other.requests, self.unpriced + other.unpriced, self.owing + other.owing,
                      self.owing_unpriced + other.owing_unpriced, self._nanos + other._nanos)

    @classmethod
    def of_many(cls, items: Iterable[Priced]) -> Priced:
        """The sum of ``items``, their amounts summed exactly (:attr:`nanos`).

        Example:
            >>> Priced.of_many([Priced(0.1, 1, 0, 1, 0), Priced(0.2, 2, 1, 1, 1)])
            Priced(usd=0.3, requests=3, unpriced=1, owing=2, owing_unpriced=1)
        """
        given = list(items)
        return cls(0.0, sum(p.requests for p in given), sum(p.unpriced for p in given), sum(p.owing for p in given),
                   sum(p.owing_unpriced for p in given), sum(p._nanos for p in given))

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

    def shown(self, digits: int = 4, *, failed: bool = False) -> str:
        """The amount for people: ``$x``, ``≥$x`` when a request that owes it is unpriced
        (:attr:`bound`), or ``failed`` (a log the sum could not read: the total of such a run, as
        ``usage`` and ``check`` show it, whatever was priced), ``$?`` when it is unknown (:func:`usd_text`).

        Example:
            >>> Priced(0.0).shown(), Priced(0.0).shown(failed=True), Priced(0.0, 1, 1, 1, 1).shown(failed=True)
            ('$0.0000', '≥$0.0000', '$?')
        """
        known = self.known
        if known is None:
            return "$?"
        return ("≥" if self.bound or failed else "") + usd_text(known, digits)


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
        return Tokens(self.cache_miss + other.cache_miss, self.cache_read + other.cache_read,
                      self.cache_write + other.cache_write, self.output + other.output, self.reasoning + other.reasoning)

    def _values(self) -> tuple[int, ...]:
        return (self.cache_miss, self.cache_read, self.cache_write, self.output, self.reasoning)

    @classmethod
    def of(cls, usage: Any) -> Tokens | None:
        """The buckets of a DSH ``TokenUsage``; None when it is absent or has no input/output count."""
        counts = {k: count_of(usage.get(name)) for k, name in (
            ("cache_miss", "inputTokens"), ("output", "outputTokens"), ("cache_read", "cacheReadTokens"),
            ("cache_write", "cacheWriteTokens"), ("reasoning", "reasoningTokens"))} if isinstance(usage, dict) else {}
        if counts.get("cache_miss") is None or counts.get("output") is None:
            return None
        return cls(**{k: v for k, v in counts.items() if v is not None})

    def to_json(self) -> dict[str, int]:
        return {"cache_miss": self.cache_miss, "cache_read": self.cache_read, "cache_write": self.cache_write,
                "output": self.output, "reasoning": self.reasoning, "total": self.total}


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
