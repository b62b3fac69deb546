"""The measures of a group of indexed requests, in SQL and as JSON: cache reads against the
prompt, hit ratios, and the tokens and cost lost (``dsh-audit stats`` reads every group by them).
"""

from __future__ import annotations

import math
import sqlite3
from datetime import datetime, timezone
from typing import Any

from ..cache import Costs, ExactSum, usd_total

__all__ = ["BREAKS", "LOGGED", "MEASURES", "TOKEN_COLUMNS", "CauseLosses", "UsdSum", "iso", "lost_by_cause", "measures"]

BREAKS = "('break_explained', 'break_unattributed', 'break_unexplained')"
#: The index's token column of each billing bucket, as every command names the buckets (its
#: ``input_tokens`` column holds DSH's ``inputTokens``: the cache misses).
TOKEN_COLUMNS = (("cache_miss", "input_tokens"), ("cache_read", "cache_read_tokens"),
                 ("cache_write", "cache_write_tokens"), ("output", "output_tokens"))
#: A request that logged usage: a row of one that did not has every token column NULL.
LOGGED = "(" + " OR ".join(f"{column} IS NOT NULL" for _, column in TOKEN_COLUMNS) + ")"
_KNOWN = "actual_cache_read IS NOT NULL"
# The hit ratios are read over the same requests as `cache` reads them: those whose cache read and
# prompt size were both logged (a read without its prompt would make a ratio above 100 %).
_BOTH = f"{_KNOWN} AND prompt_tokens IS NOT NULL"
# A break whose cache reads were not logged: what it lost is unknown (NULL), never 0.
_LOST_UNKNOWN = f"lost_tokens IS NULL AND classification IN {BREAKS}"
# Per group: requests, those whose cache read and prompt size are known ("usage known", as `cache`
# counts them: logged, or, for a request whose log holds none, the capture's, which the index does
# not tell apart), prompt, actual, expected, lost tokens, lost cost, requests that lost tokens,
# those of them with no lost cost (unpriced), the requests with none, and the breaks that lost an
# unknown amount (they owe an unknown lost cost); then the requests the prompt and cache-read sums
# are over, and those that logged usage left out of them (the sums' lower bound); last the reusable
# cache reads the lost tokens are measured from, over the requests whose cache read was logged and
# whose row has them (as `cache` sums them; NULL when none has), and those of them with none stored
# (a row an index of schema 4 or older held, its log not read again since, or one indexed with
# --no-accounting): the sum's lower bound.
_REUSABLE = (f"SUM(CASE WHEN {_KNOWN} THEN reusable_cache_read END), "
             f"COALESCE(SUM({_KNOWN} AND reusable_cache_read IS NULL), 0)")
MEASURES = (f"COUNT(*), COALESCE(SUM({_BOTH}), 0), "
             f"COALESCE(SUM(CASE WHEN {_BOTH} THEN prompt_tokens END), 0), "
             f"COALESCE(SUM(CASE WHEN {_BOTH} THEN actual_cache_read END), 0), "
             f"COALESCE(SUM(CASE WHEN {_BOTH} THEN expected_cache_read END), 0), "
             "COALESCE(SUM(lost_tokens), 0), usd_sum(lost_cost), COALESCE(SUM(lost_tokens > 0), 0), "
             "COALESCE(SUM(lost_tokens > 0 AND lost_cost IS NULL), 0), COALESCE(SUM(lost_cost IS NULL), 0), "
             f"COALESCE(SUM({_LOST_UNKNOWN}), 0), COALESCE(SUM({_BOTH}), 0), "
             f"COALESCE(SUM({LOGGED} AND NOT ({_BOTH})), 0), {_REUSABLE}")


class UsdSum:
    """The SQL aggregate ``usd_sum(x)``: :func:`usd_total` of the amounts, as ``usage`` and ``cache``
    sum them (SQLite's ``SUM`` adds doubles one by one, which over many rows drifts past the
    nano-dollar); NULL when every amount is NULL, as ``SUM``. The sum is kept in whole nano-dollars
    (:class:`ExactSum`), so what is held is one integer however many rows are summed.

    Example:
        >>> total = UsdSum()
        >>> for value in (1e8, 1e-7, 1e-7, 1e-7, None, 0.0):
        ...     total.step(value)
        >>> total.finalize(), usd_total([1e8 + 1e-7 + 1e-7 + 1e-7])  # added one by one, the sum drifts
        (100000000.0000003, 100000000.00000031)
    """

    def __init__(self) -> None:
        self.total = ExactSum()
        self.seen = False

    def step(self, value: float | None) -> None:
        if value is not None:
            self.seen = True
            self.total.add(value)

    def finalize(self) -> float | None:
        return self.total.usd() if self.seen else None


def iso(seconds: float | None) -> str | None:
    """An epoch time as ISO 8601 UTC to the second (``2026-12-02T11:24:01Z``), as the other
    commands' JSON gives times; None for None or a time outside the years 1-9999."""
    try:
        return None if seconds is None else datetime.fromtimestamp(math.floor(seconds), timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return None


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def measures(row: tuple[Any, ...]) -> dict[str, Any]:
    """A group's measures; ``usage_known`` counts the requests whose cache read and prompt size are
    known, those the hit ratios are measured over, as ``cache --json``'s ``usage_known`` counts
    them: logged, or the capture's for a request whose log holds none (``index --capture``; the
    index does not tell the two apart, so ``stats`` says "known", never "logged");
    ``lost_cost_usd`` sums the priced losses by the one rule
    (:meth:`Costs.known`, as ``cache`` sums its verdicts): None when no request that lost tokens
    was priced, or no request was; ``lost_unpriced`` counts the requests whose lost tokens have no
    known cost, of the ``lost_requests`` that lost any; ``lost_unknown_requests`` the breaks whose
    cache reads were not logged, which lost an unknown amount (``lost_tokens`` is a sum over the
    others): they owe a lost cost no one knows, as an unpriced request does (of both counts);
    ``reusable_cache_read`` what the lost tokens are measured from (lost <= reusable - actual), by
    ``usage``'s rule of a token sum as the lost tokens are summed: over the requests whose cache read
    was logged and whose row has it stored, as ``cache`` sums it; None (unknown, never 0) when no
    such request has it (none logged its cache reads, review C of session 45, F7), and a lower bound
    when a row an older dsh-audit stored lacks it (``reusable_unknown_requests`` counts those).

    The prompt and cache-read sums are over the requests that logged both counts, by ``usage``'s
    rule of a token sum: None (unknown, never 0) when the group has requests and none of them did
    (no usage logged, or a usage without them), and a lower bound when a request that logged usage
    lacks one (``prompt_unknown_requests`` counts those; a request that logged no usage is no part
    of any sum)."""
    (requests, known, prompt, actual, expected, lost, cost, losing, unpriced, no_cost, unknown, both, lacking,
     reusable, reusable_lacking) = row
    losing, unpriced = losing + unknown, unpriced + unknown
    if requests and not both:
        prompt = actual = expected = None
    return {"requests": requests, "usage_known": known or 0, "prompt_tokens": prompt,
            "actual_cache_read": actual, "expected_cache_read": expected, "prompt_unknown_requests": lacking,
            "actual_hit_ratio": _ratio(actual, prompt), "expected_hit_ratio": _ratio(expected, prompt),
            "reusable_cache_read": reusable, "reusable_unknown_requests": reusable_lacking, "lost_tokens": lost, "lost_cost_usd": Costs.known(usd_total([cost or 0.0]), requests=requests,
                                                              unpriced=no_cost, owing=losing, owing_unpriced=unpriced),
            "lost_unpriced": unpriced, "lost_requests": losing, "lost_unknown_requests": unknown}


#: The tokens lost to each cause and the reusable cache reads of the requests that lost them, over a
#: group of requests (:func:`lost_by_cause`): the reads are unknown once one of them has none stored.
CauseLosses = dict[str, tuple[int, int | None]]


def lost_by_cause(connection: sqlite3.Connection) -> tuple[CauseLosses, CauseLosses]:
    """The tokens lost to each cause (of every request's ``lost`` object, so the causes add up to
    the tokens lost) and the reusable cache reads of the requests that lost tokens to it, what they
    are measured from (None when one of them has none stored: :data:`_REUSABLE`'s rule): a cause's
    base is the whole base of each request that lost to it (a request that lost to two causes, a
    break that also went cold, counts under both). First over every request (``stats``' cost by
    cause), then over the breaks alone (``stats``' breaks by cause, and the report's: its
    ``cold_ttl`` row the part of a break's loss the cold cache took, measured from that break's
    base; a shortfall of a request that is no break is none of it). One pass over the losses.

    Example:
        >>> connection = sqlite3.connect(":memory:")
        >>> _ = connection.execute("CREATE TABLE requests (classification TEXT, reusable_cache_read INT, lost TEXT)")
        >>> _ = connection.executemany("INSERT INTO requests VALUES (?, ?, ?)", [
        ...     ("break_explained", 4096, '{"cold_ttl": 3072, "header_change": 1024}'),
        ...     ("cold_ttl", 2048, '{"cold_ttl": 2048}'), ("as_expected", 900, None)])
        >>> every, breaks = lost_by_cause(connection)
        >>> every
        {'cold_ttl': (5120, 6144), 'header_change': (1024, 4096)}
        >>> breaks
        {'cold_ttl': (3072, 4096), 'header_change': (1024, 4096)}
    """
    rows = connection.execute(
        f"SELECT item.key, requests.classification IN {BREAKS}, SUM(item.value), "
        "CASE WHEN SUM(requests.reusable_cache_read IS NULL) THEN NULL ELSE SUM(requests.reusable_cache_read) END "
        "FROM requests, json_each(requests.lost) AS item WHERE requests.lost IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2")
    every: CauseLosses = {}
    breaks: CauseLosses = {}
    for cause, is_break, tokens, reusable in rows:
        if is_break:
            breaks[cause] = (tokens, reusable)
        known = every.get(cause, (0, 0))
        every[cause] = (known[0] + tokens, None if known[1] is None or reusable is None else known[1] + reusable)
    return every, breaks
