"""Eager checks of the strategies' keyword arguments, with messages that say what to pass."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hypothesis.errors import InvalidArgument

from ..errors import UsageError, did_you_mean

__all__ = ["InvalidStrategyArgument", "check_bool", "check_count", "check_kinds", "check_range"]


class InvalidStrategyArgument(UsageError, InvalidArgument):
    """A strategy was called with an argument it cannot use.

    It is both a :class:`~dsh_audit.errors.UsageError` (the library's own family) and
    hypothesis' ``InvalidArgument``, so either ``except`` catches it. Raised when the strategy is
    created, not when it is drawn from.
    """


def _fail(name: str, value: Any, wanted: str) -> InvalidStrategyArgument:
    return InvalidStrategyArgument(f"{name}={value!r}: expected {wanted}",
                                   hint=f"see help(dsh_audit.strategies) for what {name} accepts")


def check_bool(name: str, value: Any, *, optional: bool = False) -> bool | None:
    """``value`` must be True or False (or None when ``optional``: "sometimes")."""
    if value is None and optional:
        return None
    if not isinstance(value, bool):
        raise _fail(name, value, "True or False" + (", or None for 'sometimes'" if optional else ""))
    return value


def check_range(name: str, value: Any, *, low: int = 0, high: int | None = None) -> tuple[int, int]:
    """An int ``n`` (exactly n) or a ``(min, max)`` pair, each within ``low..high``."""
    pair = (value, value) if isinstance(value, int) and not isinstance(value, bool) else value
    ok = (isinstance(pair, tuple) and len(pair) == 2
          and all(isinstance(v, int) and not isinstance(v, bool) for v in pair))
    bound = f"{low}..{high}" if high is not None else f">= {low}"
    if not ok:
        raise _fail(name, value, f"an int or a (min, max) pair of ints ({bound})")
    lo, hi = pair
    if lo > hi or lo < low or (high is not None and hi > high):
        raise _fail(name, value, f"min <= max, both {bound}")
    return lo, hi


def check_count(name: str, value: Any, *, high: int | None = None) -> tuple[int, int]:
    """A feature count: an int ``n`` means *at most* n; a ``(min, max)`` pair bounds both ends."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0 or (high is not None and value > high):
            raise _fail(name, value, f"a count 0..{high}" if high is not None else "a count >= 0")
        return 0, value
    if isinstance(value, bool):
        raise _fail(name, value, "an int (at most that many) or a (min, max) pair, not a bool")
    return check_range(name, value, high=high)


def check_kinds(name: str, value: Any, known: Iterable[str]) -> tuple[str, ...]:
    """A non-empty collection of names from ``known``; suggests the closest on a typo."""
    allowed = tuple(known)
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise _fail(name, value, f"a list of names from {list(allowed)}")
    kinds = tuple(value)
    if not kinds:
        raise _fail(name, value, f"at least one of {list(allowed)}")
    for kind in kinds:
        if kind not in allowed:
            suggestion = did_you_mean(str(kind), allowed)
            raise _fail(name, value, f"names from {list(allowed)}; {kind!r} is not one{suggestion}")
    return kinds
