"""Money as values: tokens and USD by billing bucket, the rates a bucket is billed at, and the two
functions every amount goes through; no I/O and nothing of the pipeline (``dsh-audit stats`` sums
the ledger the index stored with these alone).

Money has one representation: USD as a float holding a whole number of nano-dollars. A bucket's
cost is worked out in decimal (tokens x the rate as the table writes it) and rounded to the nano-dollar
(:func:`usd_cost`); every sum goes through :func:`usd_total`, so a total is the same number
whichever way its requests are grouped (by session, turn, day, model, in ``stats``' SQL).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any, TypeGuard

__all__ = ["Costs", "Rates", "Tokens", "group_unpriced", "usd_cost", "usd_total", "write_rate"]

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


def _count(value: Any) -> TypeGuard[int]:
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
        if not isinstance(usage, dict) or not _count(usage.get("inputTokens")) or not _count(usage.get("outputTokens")):
            return None
        extra = {k: usage.get(name) for k, name in (("cache_read", "cacheReadTokens"), ("cache_write", "cacheWriteTokens"),
                                                     ("reasoning", "reasoningTokens"))}
        return cls(usage["inputTokens"], output=usage["outputTokens"],
                   **{k: v for k, v in extra.items() if _count(v)})

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
    def group_unpriced(counts: Mapping[str, int]) -> dict[str, int]:
        """:func:`group_unpriced`: why requests were not priced -> how many, one reason per model
        with no rate in force (for ``stats``, which sums the reasons the index stored)."""
        return group_unpriced(counts)

    @staticmethod
    def known(amount: float, *, requests: int, unpriced: int) -> float | None:
        """``amount``, the priced sum over ``requests`` requests of which ``unpriced`` have no
        price, as JSON gives it: None (unknown) when none of them was priced, else the sum (a
        lower bound when ``unpriced``: the view says so beside it, never a bare 0 for unknown).

        Example:
            >>> Costs.known(0.0, requests=2, unpriced=2), Costs.known(0.5, requests=2, unpriced=1)
            (None, 0.5)
        """
        return None if unpriced and unpriced >= requests else amount

    @staticmethod
    def shown(amount: float | None, *, requests: int, unpriced: int, digits: int = 4) -> str:
        """``amount`` (as :meth:`known`) for people, one rule in every view: ``$x`` when every
        request was priced, ``≥$x`` (a lower bound) when some were not, ``$?`` (unknown, never
        ``$0``) when none was or ``amount`` is None (``dsh-audit watch`` shows an unpriced request so).

        Example:
            >>> [Costs.shown(0.25, requests=2, unpriced=n) for n in (0, 1, 2)]
            ['$0.2500', '≥$0.2500', '$?']
        """
        if amount is None or (unpriced and unpriced >= requests):
            return "$?"
        return ("≥" if unpriced else "") + f"${amount:.{digits}f}"


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
