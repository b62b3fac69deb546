"""Fleet questions over the index: totals, cache-hit ratios by model and by day, breaks by cause,
the sessions and the breaks whose cache losses cost the most, and what it all cost.

Ratios follow ``dsh-audit cache``: cache-read tokens over the logged prompt (input + cache read +
cache write) of the requests whose usage is known. Costs are sums of the ``costs`` ledger the
index stored (the rows of ``dsh-audit usage``), each row added up by the same sums as ``usage``
and ``cache`` (:meth:`dsh_audit.cache.Costs.sums`): they agree to the nano-dollar, and an amount no
request that owes it was priced for is unknown (null), never $0. No log is read again, and nothing
of the pipeline is imported: the money values alone, and the price table that priced the ledgers
only when they hold a request priced at the peak rate, for the caveats of their prices
(:func:`dsh_audit.fleet._caveats.stats_caveats`). A window of send times (``--since/--until``)
makes every answer one over the requests sent in it, as ``dsh-audit usage`` sums them.
"""

from __future__ import annotations

import heapq
import json
import math
import os
import sqlite3
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from typing import Any

from ..cache import Costs, Tokens, usd_total
from ..errors import UsageError
from ._caveats import stats_caveats
from ._db import check_values, connect_index, index_error, price_sources, window_views

__all__ = ["FleetStats", "fleet_stats"]

# The orders of the sessions ``stats`` ranks (``--sort``): by what their cache losses cost, by what
# they cost, by their last request's time.
_SORTS = ("lost", "cost", "time")

_BREAKS = "('break_explained', 'break_unattributed', 'break_unexplained')"
_KNOWN = "actual_cache_read IS NOT NULL"
# The hit ratios are read over the same requests as `cache` reads them: those whose cache read and
# prompt size were both logged (a read without its prompt would make a ratio above 100 %).
_BOTH = f"{_KNOWN} AND prompt_tokens IS NOT NULL"
# A break whose cache reads were not logged: what it lost is unknown (NULL), never 0.
_LOST_UNKNOWN = f"lost_tokens IS NULL AND classification IN {_BREAKS}"
# Per group: requests, cache reads logged ("usage known"), prompt, actual, expected, lost tokens, lost cost,
# requests that lost tokens, those of them with no lost cost (unpriced), the requests with none, and
# the breaks that lost an unknown amount (they owe an unknown lost cost).
_MEASURES = (f"COUNT(*), SUM({_KNOWN}), "
             f"COALESCE(SUM(CASE WHEN {_BOTH} THEN prompt_tokens END), 0), "
             f"COALESCE(SUM(CASE WHEN {_BOTH} THEN actual_cache_read END), 0), "
             f"COALESCE(SUM(CASE WHEN {_BOTH} THEN expected_cache_read END), 0), "
             "COALESCE(SUM(lost_tokens), 0), usd_sum(lost_cost), COALESCE(SUM(lost_tokens > 0), 0), "
             "COALESCE(SUM(lost_tokens > 0 AND lost_cost IS NULL), 0), COALESCE(SUM(lost_cost IS NULL), 0), "
             f"COALESCE(SUM({_LOST_UNKNOWN}), 0)")


class _UsdSum:
    """The SQL aggregate ``usd_sum(x)``: :func:`usd_total` of the amounts, as ``usage`` and ``cache``
    sum them (SQLite's ``SUM`` adds doubles one by one, which over many rows drifts past the
    nano-dollar); NULL when every amount is NULL, as ``SUM``. Zeros are not kept (they add nothing),
    so what is held is one float per request that lost a priced token.

    Example:
        >>> total = _UsdSum()
        >>> for value in (1e8, 1e-7, 1e-7, 1e-7, None, 0.0):
        ...     total.step(value)
        >>> total.finalize(), usd_total([1e8 + 1e-7 + 1e-7 + 1e-7])  # added one by one, the sum drifts
        (100000000.0000003, 100000000.00000031)
    """

    def __init__(self) -> None:
        self.values: list[float] = []
        self.seen = False

    def step(self, value: float | None) -> None:
        if value is not None:
            self.seen = True
            if value:
                self.values.append(value)

    def finalize(self) -> float | None:
        return usd_total(self.values) if self.seen else None


def _iso(seconds: float | None) -> str | None:
    """An epoch time as ISO 8601 UTC to the second (``2026-12-02T11:24:01Z``), as the other
    commands' JSON gives times; None for None or a time outside the years 1-9999."""
    try:
        return None if seconds is None else datetime.fromtimestamp(math.floor(seconds), timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return None


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _measures(row: tuple[Any, ...]) -> dict[str, Any]:
    """A group's measures; ``lost_cost_usd`` sums the priced losses by the one rule
    (:meth:`Costs.known`, as ``cache`` sums its verdicts): None when no request that lost tokens
    was priced, or no request was; ``lost_unpriced`` counts the requests whose lost tokens have no
    known cost, of the ``lost_requests`` that lost any; ``lost_unknown_requests`` the breaks whose
    cache reads were not logged, which lost an unknown amount (``lost_tokens`` is a sum over the
    others): they owe a lost cost no one knows, as an unpriced request does (of both counts)."""
    requests, known, prompt, actual, expected, lost, cost, losing, unpriced, no_cost, unknown = row
    losing, unpriced = losing + unknown, unpriced + unknown
    return {"requests": requests, "usage_known": known or 0, "prompt_tokens": prompt,
            "actual_cache_read": actual, "expected_cache_read": expected,
            "hit_ratio": _ratio(actual, prompt), "expected_hit_ratio": _ratio(expected, prompt),
            "lost_tokens": lost, "lost_cost_usd": Costs.known(usd_total([cost or 0.0]), requests=requests,
                                                              unpriced=no_cost, owing=losing, owing_unpriced=unpriced),
            "lost_unpriced": unpriced, "lost_requests": losing, "lost_unknown_requests": unknown}


@dataclass(frozen=True, slots=True)
class FleetStats:
    """The answers of ``dsh-audit stats``; each list is a JSON-ready row per group.

    Attributes:
        totals: sessions (and refused), requests, raw token sums, prompt / actual / expected
            cache reads, hit ratios, attribution breaks, cache-classified breaks, tokens and cost lost.
        by_model: the measures of ``totals`` per model, most prompt tokens first.
        by_day: per UTC day of the request's event time, oldest first (``null``: no time).
        by_cause: per break cause: breaks classified by the cache analysis, breaks found by
            attribution, and tokens lost to that cause.
        top_sessions: the sessions ranked by ``sort``: by default those whose cache losses cost
            the most (``lost_cost_usd``), costliest first, then those whose losses have no known
            price (null), most lost tokens first (tokens do not compare across providers:
            :func:`_loss_rank`); each with what it cost (``cost_usd``) and what its breaks cost
            (``break_cost_usd``), None without a ledger, and when its last request was sent
            (``last_request_at``, ISO 8601 UTC; null when no request has a time).
        cost: what the fleet cost (the sums of ``dsh-audit usage``): requests, priced and unpriced
            requests (and why), tokens and USD by bucket, with no cache, all off-peak, what cache
            losses and breaks cost, the requests billed at a long-context tier and what they cost
            (``tier_requests``, ``tier_cost_usd``), and logs indexed without a ledger
            (``sessions_unpriced``).
        cost_by_model: ``cost`` per model the requests went to, costliest first.
        cost_by_cause: per cause of lost cache reads: tokens lost, their cost, and the part lost
            in cache breaks.
        prices: the files of each price table the stored ledgers were priced with
            (:attr:`dsh_audit.cache.PriceBook.files`: ``packaged`` alone for the list prices), None
            for one the index does not record (made by an older dsh-audit); ``price_files`` in JSON.
        costliest_breaks: the cache breaks of every session (as many as ``top_sessions`` lists)
            whose lost tokens cost the most, ranked by that cost whatever ``sort`` says: each one's
            log (``path``, ``session_id``), ``request`` (the ``#`` of ``dsh-audit requests``), kind,
            turn, step, attempt, model, provider, cause, classification, ``lost_tokens`` and
            ``lost_cost_usd`` (null: unknown; a break whose cache reads were not logged has both
            null). A break that cost nothing (it lost no token, or at a rate of $0) is not listed:
            ``free_breaks`` counts them (``breaks_costing_nothing`` in JSON).
        sort: how ``top_sessions`` is ranked: ``lost`` (what their cache losses cost), ``cost``
            (what they cost, costliest first, a lower bound by its amount, an unknown cost last)
            or ``time`` (their last request, newest first; none last).
        since, until: the window of send times every sum and ranking is over (epoch seconds;
            None: unbounded), as ``dsh-audit usage --since/--until`` sums requests; ISO 8601 UTC
            in JSON.
        caveats: what the price tables could not know of the requests summed (a year a holiday
            list does not cover: :meth:`dsh_audit.cache.PriceBook.caveats`, as ``usage`` says
            them), or that a table's caveats are unknown (its files cannot be read now).
    """

    db: str
    totals: dict[str, Any]
    by_model: tuple[dict[str, Any], ...]
    by_day: tuple[dict[str, Any], ...]
    by_cause: tuple[dict[str, Any], ...]
    top_sessions: tuple[dict[str, Any], ...]
    cost: dict[str, Any]
    cost_by_model: tuple[dict[str, Any], ...]
    cost_by_cause: tuple[dict[str, Any], ...]
    prices: tuple[tuple[str, ...] | None, ...] = ()
    costliest_breaks: tuple[dict[str, Any], ...] = ()
    free_breaks: int = 0
    sort: str = "lost"
    since: float | None = None
    until: float | None = None
    caveats: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The one object ``dsh-audit stats --json`` prints."""
        return {"db": self.db, "since": _iso(self.since), "until": _iso(self.until), "sort": self.sort,
                "totals": self.totals, "by_model": list(self.by_model), "by_day": list(self.by_day),
                "by_cause": list(self.by_cause), "top_sessions": list(self.top_sessions), "cost": self.cost,
                "cost_by_model": list(self.cost_by_model), "cost_by_cause": list(self.cost_by_cause),
                "price_files": [None if files is None else list(files) for files in self.prices],
                "costliest_breaks": list(self.costliest_breaks), "breaks_costing_nothing": self.free_breaks,
                "caveats": list(self.caveats)}


def _totals(connection: sqlite3.Connection) -> dict[str, Any]:
    sessions, refused = connection.execute("SELECT COUNT(*), COUNT(error) FROM sessions").fetchone()
    raw = connection.execute("SELECT COALESCE(SUM(input_tokens), 0), COALESCE(SUM(cache_read_tokens), 0), "
                             "COALESCE(SUM(cache_write_tokens), 0), COALESCE(SUM(output_tokens), 0), "
                             f"COALESCE(SUM(classification IN {_BREAKS}), 0) FROM requests").fetchone()
    measured = _measures(connection.execute(f"SELECT {_MEASURES} FROM requests").fetchone())
    breaks = connection.execute("SELECT COUNT(*) FROM breaks").fetchone()[0]
    return {"sessions": sessions, "sessions_refused": refused, **measured,
            "input_tokens": raw[0], "cache_read_tokens": raw[1], "cache_write_tokens": raw[2],
            "output_tokens": raw[3], "attribution_breaks": breaks, "cache_breaks": raw[4]}


def _grouped(connection: sqlite3.Connection, column: str, order: str) -> tuple[dict[str, Any], ...]:
    rows = connection.execute(f"SELECT {column}, {_MEASURES} FROM requests GROUP BY {column} ORDER BY {order}")
    return tuple({column: row[0], **_measures(row[1:])} for row in rows)


def _by_cause(connection: sqlite3.Connection) -> tuple[dict[str, Any], ...]:
    causes: dict[str, dict[str, Any]] = {}

    def entry(cause: str) -> dict[str, Any]:
        return causes.setdefault(cause, {"cause": cause, "cache_breaks": 0, "attribution_breaks": 0,
                                         "lost_tokens": 0})

    for cause, count in connection.execute(f"SELECT COALESCE(cause, '?'), COUNT(*) FROM requests "
                                           f"WHERE classification IN {_BREAKS} GROUP BY 1"):
        entry(cause)["cache_breaks"] = count
    for cause, count in connection.execute("SELECT COALESCE(cause, 'unexplained'), COUNT(*) FROM breaks GROUP BY 1"):
        entry(cause)["attribution_breaks"] = count
    for cause, tokens in connection.execute("SELECT item.key, SUM(item.value) FROM requests, json_each(requests.lost) "
                                            "AS item WHERE requests.lost IS NOT NULL GROUP BY 1"):
        entry(cause)["lost_tokens"] = tokens
    return tuple(sorted(causes.values(), key=lambda c: (-c["lost_tokens"], -c["cache_breaks"], c["cause"])))


def _loss_rank(lost_cost: float | None, lost_tokens: int | None, *, losing: bool) -> tuple[int, float, int]:
    """The sort key of a session or a break by what its cache losses cost, costliest first: tokens
    do not compare across providers (a DeepSeek cache miss costs a fraction of a Claude one).
    First those whose loss was priced above $0, by dollars (a lower bound ``≥$x`` by its ``x``),
    then those that lost tokens (``losing``, or an unknown amount) at no known price (``$?``),
    then the rest (nothing lost, or a loss priced $0); within each, most lost tokens first.

    Example:
        >>> ranked = sorted([(0.0076, 11968, True), (0.0308, 8927, True), (None, 50000, True), (0.0, 0, False)],
        ...                 key=lambda r: _loss_rank(r[0], r[1], losing=r[2]))
        >>> [r[0] for r in ranked]
        [0.0308, 0.0076, None, 0.0]
    """
    if lost_cost is not None and lost_cost > 0:
        return 0, -lost_cost, -(lost_tokens or 0)
    return (1 if lost_cost is None and losing else 2), 0.0, -(lost_tokens or 0)


def _top(connection: sqlite3.Connection, top: int, ledgers: dict[str | None, _Ledger],
         sort: str = "lost") -> tuple[dict[str, Any], ...]:
    """The ``top`` sessions by ``sort`` (:data:`_SORTS`): by default those whose cache losses cost
    the most (:func:`_loss_rank` of each one's ``lost_cost_usd``, as its row shows it), each with
    what it cost and when its last request was sent; one pass over the sessions, holding ``top``
    of them."""
    rows = connection.execute(f"SELECT s.path, s.session_id, MAX(sent_at), {_MEASURES} FROM requests "
                              "JOIN sessions AS s USING (path) GROUP BY s.path")
    measured = ({"path": row[0], "session_id": row[1], "last_request_at": _iso(row[2]), **_measures(row[3:]),
                 **_session_cost(ledgers.get(row[0])), "_last": row[2]} for row in rows)
    best = heapq.nsmallest(top, measured, key=lambda r: (_session_rank(r, sort), r["path"]))
    return tuple({key: value for key, value in r.items() if key != "_last"} for r in best)


def _session_rank(row: dict[str, Any], sort: str) -> tuple[Any, ...]:
    """The sort key of a session of :func:`_top`: what its losses cost (``lost``,
    :func:`_loss_rank`), what it cost (``cost``: most first, a lower bound by its amount, unknown
    last) or its last request's time (``time``: newest first, none last)."""
    if sort == "cost":
        return row["cost_usd"] is None, -(row["cost_usd"] or 0.0)
    if sort == "time":
        return row["_last"] is None, -(row["_last"] or 0.0)
    return _loss_rank(row["lost_cost_usd"], row["lost_tokens"], losing=row["lost_requests"] > 0)


def _costliest_breaks(connection: sqlite3.Connection, top: int) -> tuple[tuple[dict[str, Any], ...], int]:
    """The ``top`` cache breaks of the whole index (requests the cache analysis classified as a
    break, as ``breaks (cache)`` counts them) whose lost tokens cost the most (:func:`_loss_rank`),
    read from the ``requests`` rows: what each lost and its cost, priced once when indexed (the
    ledger's ``breaks $`` sums the same amounts), and how many breaks cost nothing (they lost no
    token, or at a rate of $0), which are not listed. ``lost_tokens`` and ``lost_cost_usd`` are
    None for a break whose cache reads were not logged (it lost an unknown amount), ``lost_cost_usd``
    None for one that lost tokens at no known price."""
    rows = connection.execute(
        "SELECT r.path, s.session_id, r.idx, r.kind, r.turn, r.step, r.attempt, r.model, r.provider, r.cause, "
        "r.classification, r.lost_tokens, r.lost_cost FROM requests AS r JOIN sessions AS s USING (path) "
        f"WHERE r.classification IN {_BREAKS}")
    free = [0]

    def costly(row: dict[str, Any]) -> bool:
        if row["lost_cost_usd"] == 0:  # known to have cost nothing: not one of the costliest
            free[0] += 1
            return False
        return True

    best = heapq.nsmallest(top, filter(costly, map(_break, rows)), key=_break_key)  # holds ``top`` rows
    return tuple(best), free[0]


def _break(row: tuple[Any, ...]) -> dict[str, Any]:
    """A break of :func:`_costliest_breaks`, of its query's row."""
    path, session_id, idx, kind, turn, step, attempt, model, provider, cause, classification, tokens, cost = row
    losing = tokens is None or tokens > 0  # None: its cache reads were not logged
    return {"path": path, "session_id": session_id, "request": idx, "kind": kind, "turn": turn, "step": step,
            "attempt": attempt, "model": model, "provider": provider, "cause": cause,
            "classification": classification, "lost_tokens": tokens,
            "lost_cost_usd": cost if cost is not None or losing else 0.0}  # it lost nothing: it owes $0


def _break_key(row: dict[str, Any]) -> tuple[tuple[int, float, int], str, int]:
    """The order of :func:`_costliest_breaks` (:func:`_loss_rank`; then by log and request)."""
    losing = row["lost_tokens"] is None or row["lost_tokens"] > 0
    return _loss_rank(row["lost_cost_usd"], row["lost_tokens"], losing=losing), row["path"], row["request"]


def _session_cost(ledger: _Ledger | None) -> dict[str, Any]:
    """What one indexed session cost and what its breaks cost (None each: indexed without a ledger)."""
    if ledger is None or not ledger.sums.requests:
        return {"cost_usd": None, "break_cost_usd": None, "unpriced_requests": None, "cost_complete": None,
                "break_requests": None, "break_unpriced": None, "break_unknown": None}
    sums = ledger.to_json()
    return {"cost_usd": None if sums["cost_usd"] is None else sums["cost_usd"]["total"],
            "break_cost_usd": sums["break_cost_usd"], "unpriced_requests": sums["unpriced_requests"],
            "cost_complete": sums["cost_complete"], "break_requests": sums["break_requests"],
            "break_unpriced": sums["break_unpriced"], "break_unknown": sums["lost_unknown_requests"]}


#: The ``costs`` columns a request's amounts are read back from (``c``), with its lost tokens by
#: cause (``r``: the ``requests`` row of the same request).
_ROW = ("c.path", "c.model", "c.tier", "c.unpriced", "c.billed_as", "c.is_break", "c.cache_miss_tokens",
        "c.cache_read_tokens", "c.cache_write_tokens", "c.output_tokens", "c.reasoning_tokens", "c.cost_cache_miss",
        "c.cost_cache_read", "c.cost_cache_write", "c.cost_output", "c.no_cache_cost", "c.off_peak_cost",
        "c.lost_tokens", "c.lost_cost_by_cause", "r.lost")


class _Ledger:
    """The ledger sums of a group of ``costs`` rows (:meth:`Costs.sums`, as ``usage`` and ``cache``
    sum a session's ledger), with its requests billed at a long-context tier and what they cost."""

    __slots__ = ("sums", "tier_costs", "tier_requests")

    def __init__(self) -> None:
        self.sums = Costs.sums()
        self.tier_requests = 0
        self.tier_costs: list[float] = []

    def add(self, row: tuple[Any, ...], lost: dict[str, int], lost_cost: dict[str, float] | None,
            lost_unknown: bool = False) -> None:
        """Add one ``costs`` row (columns :data:`_ROW` from ``c.tier``), its lost tokens and their
        cost by cause (None: no rate priced them), and whether what it lost is unknown (a break
        whose cache reads were not logged)."""
        (tier, unpriced, _, is_break, miss, read, write, output, reasoning, cost_miss, cost_read, cost_write,
         cost_output, no_cache, off_peak) = row[:15]
        tokens = None if miss is None else Tokens(miss, read or 0, write or 0, output or 0, reasoning or 0)
        cost = None if cost_miss is None else Costs(cost_miss, cost_read or 0.0, cost_write or 0.0, cost_output or 0.0)
        self.sums.add_request(tokens=tokens, cost=cost, no_cache=no_cache, off_peak=off_peak, lost=lost,
                              lost_cost=lost_cost, is_break=bool(is_break), unpriced=unpriced,
                              lost_unknown=lost_unknown)
        if tier is not None:
            self.tier_requests += 1
            if cost is not None:
                self.tier_costs.append(cost.total)

    def to_json(self) -> dict[str, Any]:
        """The group's ``cost`` object: the ledger summary's amounts (sums over the priced
        requests: None when no request that owes one was priced, never $0 for unknown; lower
        bounds when ``cost_complete`` is False), what the cache losses cost, and the tier."""
        sums = self.sums
        summary = sums.summary()
        return {"requests": sums.requests, "unpriced_requests": summary["unpriced_requests"],
                "cost_complete": summary["cost_complete"], "tokens": summary["tokens"],
                "cost_usd": summary["cost_usd"], "no_cache_cost_usd": summary["no_cache_cost_usd"],
                "off_peak_cost_usd": summary["off_peak_cost_usd"], "lost_cost_usd": sums.known("lost"),
                "break_cost_usd": summary["break_cost_usd"],
                **{k: summary[k] for k in ("lost_requests", "lost_unpriced", "break_requests", "break_unpriced",
                                           "lost_unknown_requests")},
                "tier_requests": self.tier_requests,
                "tier_cost_usd": usd_total(self.tier_costs), "unpriced": summary["unpriced"]}


def _ledgers(connection: sqlite3.Connection) -> tuple[_Ledger, dict[str | None, _Ledger], dict[str | None, _Ledger]]:
    """The ledger sums of the whole index, of each model and of each session (by path), in one
    pass over the ``costs`` rows."""
    total = _Ledger()
    by_model: dict[str | None, _Ledger] = {}
    by_path: dict[str | None, _Ledger] = {}
    for row in connection.execute(f"SELECT {', '.join(_ROW)} FROM costs AS c LEFT JOIN requests AS r "
                                  "ON r.path = c.path AND r.idx = c.idx"):
        path, model, *amounts, lost_tokens, lost_cost, lost = row
        by_cause: dict[str, int] = json.loads(lost) if lost else {}
        if lost_tokens and not by_cause:  # a request row without its causes: its tokens still count
            by_cause = {"?": lost_tokens}
        # a break whose request row stored what it lost as unknown (NULL): its cache reads were not logged
        unknown = bool(amounts[3]) and lost is None
        # priced when a rate billed it (``billed_as``), as the ledger entry it was written from
        cause_cost = (json.loads(lost_cost) if lost_cost else {}) if amounts[2] is not None else None
        for ledger in (total, by_model.setdefault(model, _Ledger()), by_path.setdefault(path, _Ledger())):
            ledger.add(tuple(amounts), by_cause, cause_cost, unknown)
    return total, by_model, by_path


def _cost(connection: sqlite3.Connection, total: _Ledger) -> dict[str, Any]:
    missing = connection.execute(
        "SELECT COUNT(*) FROM sessions WHERE error IS NULL AND request_count > 0 "
        "AND NOT EXISTS (SELECT 1 FROM costs WHERE costs.path = sessions.path)").fetchone()[0]
    return {**total.to_json(), "sessions_unpriced": missing}


def _cost_by_model(by_model: dict[str | None, _Ledger]) -> tuple[dict[str, Any], ...]:
    rows = [{"model": model, **ledger.to_json()} for model, ledger in by_model.items()]
    return tuple(sorted(rows, key=lambda r: (-(r["cost_usd"] or {}).get("total", 0.0), -r["requests"],
                                             r["model"] or "")))


def _cost_by_cause(connection: sqlite3.Connection, total: _Ledger) -> tuple[dict[str, Any], ...]:
    """Per cause of lost cache reads: the tokens lost (of every indexed request, so the rows add up
    to the fleet's tokens lost), what the priced ones cost and the part lost in breaks, by the one
    rule (None: no request that lost tokens to the cause was priced, or none has a ledger)."""
    tokens = dict(connection.execute("SELECT item.key, SUM(item.value) FROM requests, json_each(requests.lost) AS item "
                                     "WHERE requests.lost IS NOT NULL GROUP BY 1").fetchall())
    causes = total.sums.causes()
    owing = total.sums.cause_owing()
    rows = [{"cause": cause, "lost_tokens": tokens.get(cause, lost_tokens), "lost_cost_usd": cost,
             "break_cost_usd": breaks, **owing[cause]} for cause, (lost_tokens, cost, breaks) in causes.items()]
    rows += [{"cause": cause, "lost_tokens": count, "lost_cost_usd": None, "break_cost_usd": None,
              "lost_requests": 0, "lost_unpriced": 0, "break_requests": 0, "break_unpriced": 0}
             for cause, count in tokens.items() if cause not in causes]  # lost only by logs without a ledger
    return tuple(sorted(rows, key=lambda r: (-(r["lost_cost_usd"] or 0.0), r["cause"])))


def fleet_stats(db: str | os.PathLike[str], *, top: int = 10, sort: str = "lost", since: float | None = None,
                until: float | None = None) -> FleetStats:
    """Answer the fleet questions from the index at ``db``.

    Args:
        db: an index written by :func:`dsh_audit.fleet.index_logs`.
        top: how many sessions ``top_sessions`` lists, and breaks ``costliest_breaks``.
        sort: how ``top_sessions`` is ranked: ``lost`` (what their cache losses cost), ``cost``
            (what they cost) or ``time`` (their last request, newest first).
        since, until: sum only the requests sent in ``[since, until)`` (epoch seconds, by the
            logs' own times, as ``dsh-audit usage`` does; None: unbounded).

    Raises:
        UsageError: ``db`` is missing or not an index, or ``sort`` is not one of its choices.

    Example:
        >>> stats = fleet_stats("audit.sqlite")  # doctest: +SKIP
        >>> stats.totals["hit_ratio"]  # doctest: +SKIP
        0.8125
    """
    if sort not in _SORTS:
        raise UsageError(f"cannot rank sessions by {sort!r}", hint="use --sort " + ", ".join(_SORTS))
    connection = connect_index(db, create=False)
    try:
        # typeshed's aggregate protocol has finalize() return an int; SQLite takes any value it stores
        connection.create_aggregate("usd_sum", 1, _UsdSum)  # type: ignore[arg-type]
        check_values(connection, os.fspath(db))
        window_views(connection, since, until)
        total, by_model, by_path = _ledgers(connection)
        stats = FleetStats(db=os.fspath(db), totals=_totals(connection),
                           by_model=_grouped(connection, "model", "4 DESC, model"),
                           by_day=_grouped(connection, "day", "day"), by_cause=_by_cause(connection),
                           top_sessions=_top(connection, top, by_path, sort), cost=_cost(connection, total),
                           cost_by_model=_cost_by_model(by_model), cost_by_cause=_cost_by_cause(connection, total),
                           prices=price_sources(connection), sort=sort, since=since, until=until,
                           caveats=stats_caveats(connection))
        breaks, free = _costliest_breaks(connection, top)
        return replace(stats, costliest_breaks=breaks, free_breaks=free)
    except sqlite3.DatabaseError as exc:  # tables of another layout under the same schema version
        if str(exc) == "integer overflow":  # a sound index: SUM() of counts that add up past 2**63 - 1
            raise UsageError("the token counts of the index add up past SQLite's 64-bit integers: its logs "
                             "hold counts no model reports", path=os.fspath(db),
                             hint="find them with `dsh-audit sessions PATH` and index the other logs "
                                  "apart") from None
        raise index_error(exc, os.fspath(db), hint="delete the file and index again") from None
    finally:
        connection.close()
