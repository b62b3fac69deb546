"""What a listed request lost of the prefix cache, as ``dsh-audit cache`` judged it, and the total."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._lazy import LazyModule
from ..report.terminal import Amount

if TYPE_CHECKING:
    from .. import cache
    from ..cache import CacheVerdict


if not TYPE_CHECKING:
    # read only where a view needs cache accounting (``breaks --accounting``, ``explain``): ``breaks``
    # alone loads none (start-up, issue 11)
    cache = LazyModule("dsh_audit.cache")


@dataclass(frozen=True, slots=True)
class _Lost:
    """What a request lost of the prefix cache, as ``dsh-audit cache`` judged it (its
    :class:`~dsh_audit.cache.CacheVerdict`): the cache reads it should have had and did not
    (``tokens``, every cause: the timeline's "lost"), and what they cost over cache reads at the
    request's rate (``cost``, the verdict's ``lost_cost``; $0 when it lost none, whatever its
    price, by the one rule of every view). None when not known, ``unknown`` then says why: its
    cache reads were not logged (tokens and cost), or no rate prices it (cost). ``owed``: the
    requests the cost is summed over, as :meth:`Costs.known <dsh_audit.cache.Costs.known>` counts
    them (:data:`_OWED`), by which it is shown (:attr:`cost_text`); a sum of losses (:func:`_total`)
    over requests some of whose are not known is a lower bound (:attr:`bound`). ``reusable`` and
    ``actual``: the figures the tokens are measured from (the verdict's ``potential`` and ``actual``;
    issue 11: every lost figure beside its base), None when not known. lost <= reusable - actual: a
    step of the drop counts only past the rule's tolerance, and nothing counts under its minimum
    prompt (docs/cache-accounting.md, Classifications); ``uncounted`` is the rest of the drop and
    ``uncounted_reason`` why (:data:`_UNCOUNTED`; review C of session 45, F2)."""

    tokens: int | None
    cost: float | None
    unknown: str | None = None
    owed: tuple[int, int, int, int] = (1, 1, 1, 1)  # one request, which may owe it, at no known price
    reusable: int | None = None
    actual: int | None = None
    uncounted: int | None = None
    uncounted_reason: str | None = None

    @classmethod
    def of(cls, verdict: CacheVerdict | None, missing: str | None = None) -> _Lost:
        """The loss of the request ``verdict`` judged; ``missing``: why it has none."""
        if verdict is None:
            return cls(None, None, missing or "its cache was not accounted")
        if verdict.lost_unknown:  # a break whose cache reads were not logged: cache says why
            return cls(None, None, verdict.unpriced, reusable=verdict.potential)
        tokens = sum(verdict.lost.values())
        owes = int(tokens > 0)
        unpriced = int(verdict.lost_cost is None)
        owed = (1, unpriced, owes, owes * unpriced)
        cost = cache.Costs.known(verdict.lost_cost or 0.0, **_counts(owed))
        uncounted = max(0, verdict.potential - (verdict.actual or 0) - tokens) if verdict.actual is not None else None
        # the one reason: a prompt under the rule's minimum has nothing reusable (cache cuts every reusable
        # level to the prompt and counts 0 below the minimum), so no drop of its goes uncounted
        reason = "tolerance" if uncounted else None
        return cls(tokens, cost, None if cost is not None else verdict.unpriced or "no rate prices it", owed,
                   verdict.potential, verdict.actual, uncounted, reason)

    @property
    def bound(self) -> bool:
        """Whether the cost is a lower bound: a request that owes some has no price for it
        (:attr:`dsh_audit.cache.Priced.bound`)."""
        return self.owed[3] > 0

    @property
    def text(self) -> str:
        """``8927 ($0.0241)``; ``0`` when it lost none; ``?`` when the tokens are not known, ``$?``
        the cost."""
        if self.tokens is None:
            return "?"
        if not self.tokens and not self.bound:
            return "0"
        return f"{self.tokens} ({self.cost_text})"

    @property
    def cost_text(self) -> str:
        """The cost as people read it by the one rule (:meth:`Costs.shown <dsh_audit.cache.Costs.shown>`):
        ``$0.0241``, ``≥$0.0241`` (a lower bound), ``$?`` (unknown)."""
        return cache.Costs.shown(self.cost, **_counts(self.owed))

    def cells(self, *, csv: bool) -> tuple[object, ...]:
        """The base cells, reusable and actual cache read (``?`` when not known), then the table's
        one cell ``N ($x)``, or CSV's two exact ones (empty when not known)."""
        base = tuple(Amount.tokens(value, lacking=False) for value in (self.reusable, self.actual))
        if not csv:
            return (*base, self.text)
        return (*base, Amount.tokens(self.tokens, lacking=False),
                Amount(self.cost, self.cost_text))

    def to_json(self) -> dict[str, Any]:
        # "unpriced_reason": a sentence; "unpriced" is a cost's object of reasons -> counts elsewhere;
        # the base beside the loss under cache --json's names, and the drop not counted as lost (lost <=
        # reusable - actual) with why
        return {"reusable_cache_read": self.reusable, "actual_cache_read": self.actual,
                "uncounted_tokens": self.uncounted, "uncounted_reason": self.uncounted_reason,
                "lost_tokens": self.tokens, "lost_cost_usd": self.cost, "unpriced_reason": self.unknown}

    def sentence(self) -> str:
        """``explain``'s line: what the break cost."""
        base = self._base_text()
        if self.tokens is None:
            return f"  cost: unknown ({self.unknown}){base}"
        if not self.tokens:  # a drop the rule forgives is not "no cache read lost" (final read of session 45)
            lost = "" if self.uncounted else ", it lost no cache read it could have had"  # its base says why
            return f"  cost: $0{lost}{base} (as `cache` counts them)"
        why = f" ({self.unknown})" if self.cost is None else ""
        return (f"  cost: {self.tokens} token(s) it should have read from the cache and did not{base} (as "
                f"`cache` counts them), {self.cost_text}{why} over cache reads at its rate")

    def _base_text(self) -> str:
        """What the lost tokens are measured from, as ``cache`` says it: `` (of 7680 reusable, read
        4800)``, with the part of the drop not counted as lost and why (`` (of 128 reusable, read 0:
        128 within the rule's tolerance, not counted as lost)``); `` (of 1920 reusable, read ?)`` when
        the reads were not logged; empty when not known."""
        if self.reusable is None:
            return ""
        read = f", read {'?' if self.actual is None else self.actual}"
        why = f": {self.uncounted} {_UNCOUNTED[self.uncounted_reason]}, not counted as lost" \
            if self.uncounted and self.uncounted_reason else ""
        return f" (of {self.reusable} reusable{read}{why})"


#: Why a drop from the reusable cache reads to the actual ones is not counted as lost, in words
#: (:attr:`_Lost.uncounted_reason`; docs/cache-accounting.md, Classifications).
_UNCOUNTED = {"tolerance": "within the rule's tolerance"}


def _total(losses: Sequence[_Lost]) -> _Lost:
    """The listed requests' losses summed by the one rule for money some have no price for
    (:meth:`Costs.known`): the tokens over those that know theirs (None when none does); the cost
    over the priced ones, a lower bound (``bound``) when one that lost tokens, or may have, has no
    price for them, None when none of those has."""
    known = [lost for lost in losses if lost.tokens is not None]
    owing = [lost for lost in losses if lost.tokens is None or lost.tokens > 0]
    unpriced = sum(lost.cost is None for lost in owing)
    owed = (len(losses), sum(lost.cost is None for lost in losses), len(owing), unpriced)
    cost = cache.Costs.known(cache.usd_total(lost.cost or 0.0 for lost in losses), **_counts(owed))
    tokens = sum(lost.tokens or 0 for lost in known) if known else None
    # the sum's base, over the same requests (those whose loss is known): unknown when one of them has none
    reusable, actual = (None if not known or any(value is None for value in values) else sum(v or 0 for v in values)
                        for values in ([lost.reusable for lost in known], [lost.actual for lost in known]))
    return _Lost(tokens, cost, "a listed request's loss is not known" if unpriced else None, owed, reusable, actual)


#: What :attr:`_Lost.owed` holds, in order: the arguments :meth:`Costs.known
#: <dsh_audit.cache.Costs.known>` and :meth:`~dsh_audit.cache.Costs.shown` count a cost's requests by.
_OWED = ("requests", "unpriced", "owing", "owing_unpriced")


def _counts(owed: tuple[int, int, int, int]) -> dict[str, int]:
    """``owed`` (:attr:`_Lost.owed`) as the arguments of :data:`_OWED`."""
    return dict(zip(_OWED, owed))
