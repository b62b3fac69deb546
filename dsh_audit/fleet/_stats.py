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

import json
import os
import sqlite3
from dataclasses import dataclass, replace
from typing import Any

from ..errors import UsageError
from ._caveats import stats_caveats
from ._costs import cost_by_cause, cost_by_model, fleet_cost, ledgers
from ._db import check_values, connect_index, index_error, window_views
from ._price_meta import price_sources
from ._measures import BREAKS, LOGGED, MEASURES, TOKEN_COLUMNS, CauseLosses, UsdSum, iso, lost_by_cause, measures
from ._ranks import costliest_breaks, top_sessions
from ._stored import shown

__all__ = ["FleetStats", "fleet_stats"]

# The orders of the sessions ``stats`` ranks (``--sort``): by what their cache losses cost, by what
# they cost, by their last request's time.
_SORTS = ("lost", "cost", "time")


@dataclass(frozen=True, slots=True)
class FleetStats:
    """The answers of ``dsh-audit stats``; each list is a JSON-ready row per group.

    Attributes:
        totals: sessions (and refused), requests (``usage_known``: those whose cache read and prompt
            size are known, logged or, for one whose log holds none, the capture's, as ``cache``
            counts them), the logged token sums of every indexed request
            by billing bucket (``tokens``: ``cache_miss``, ``cache_read``, ``cache_write``,
            ``output`` and their ``total``, as every command names them, over the requests that
            logged a count of each: ``usage_unknown_requests`` counts those that logged no usage,
            ``tokens_unknown_requests`` by bucket those that logged usage without a count of it, as
            ``usage --json`` does; ``cost``'s ``tokens`` sums the ledgers' requests), actual /
            expected cache reads (``actual_cache_read``, the logged reads, ``expected_cache_read``)
            and hit ratios (``actual_hit_ratio``,
            ``expected_hit_ratio``), attribution breaks, cache-classified breaks, tokens and cost lost,
            and the reusable cache reads the tokens lost are measured from (``reusable_cache_read``:
            lost <= reusable - actual, over the requests whose cache read was logged, as ``cache``
            sums it; null when a stored row has none: a log indexed by an older schema, not read again).
            The prompt and cache-read sums are null when no request logged them, and lower bounds
            when ``prompt_unknown_requests`` (requests that logged usage without them) is not 0
            (:func:`dsh_audit.fleet._measures.measures`), in every group.
        by_model: the measures of ``totals`` per model the price table bills the requests as (as
            ``cost_by_model`` keys them, with ``logged_models``), most prompt tokens first.
        by_day: per UTC day of the request's event time, oldest first (``null``: no time).
        by_cause: per break cause: breaks classified by the cache analysis, breaks found by
            attribution, and the tokens the breaks lost to that cause, beside the reusable cache
            reads of the breaks that lost them (``reusable_cache_read``: what they are measured
            from; 0 for a cause whose breaks lost nothing), as the HTML report's breaks by cause
            says them; a break that also went cold lost the rest to ``cold_ttl``, a row of no
            break of its own (``cost_by_cause`` gives every request's losses).
        top_sessions: the sessions ranked by ``sort``: by default those whose cache losses cost
            the most (``lost_cost_usd``), costliest first, then those whose losses have no known
            price (null), most lost tokens first (tokens do not compare across providers:
            :func:`~dsh_audit.fleet._ranks._loss_rank`); each with what it cost (``cost_usd``) and what its breaks cost
            (``break_cost_usd``), None without a ledger, and when its last request was sent
            (``last_sent_at``, ISO 8601 UTC; null when no request has a time).
        cost: what the fleet cost (the sums of ``dsh-audit usage``): requests, priced and unpriced
            requests (and why), tokens and USD by bucket, with no cache, all off-peak, what cache
            losses and breaks cost, the requests billed at a long-context tier and what they cost
            (``tier_requests``, ``tier_cost_usd``), and logs indexed without a ledger
            (``sessions_unpriced``).
        cost_by_model: ``cost`` per model the price table bills the requests as (an unpriced
            one's: the model it logged), with the models they logged (``logged_models``), costliest first.
        cost_by_cause: per cause of lost cache reads: tokens lost, their cost, and the part lost
            in cache breaks.
        prices: the files of each price table the stored ledgers were priced with
            (:attr:`dsh_audit.cache.PriceBook.files`: ``packaged`` alone for the list prices), None
            for one the index does not record (made by an older dsh-audit); ``price_files`` in JSON.
        costliest_breaks: the cache breaks of every session (as many as ``top_sessions`` lists)
            whose lost tokens cost the most, ranked by that cost whatever ``sort`` says: each one's
            log (``path``, ``session_id``), ``request`` (the ``#`` of ``dsh-audit requests``), kind,
            turn, step, attempt, model, provider, cause, classification, ``reusable_cache_read`` and
            ``actual_cache_read`` (what the loss is measured from), ``lost_tokens`` and
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
        return {"db": self.db, "since": iso(self.since), "until": iso(self.until), "sort": self.sort,
                "totals": self.totals, "by_model": list(self.by_model), "by_day": list(self.by_day),
                "by_cause": list(self.by_cause), "top_sessions": list(self.top_sessions), "cost": self.cost,
                "cost_by_model": list(self.cost_by_model), "cost_by_cause": list(self.cost_by_cause),
                "price_files": [None if files is None else list(files) for files in self.prices],
                "costliest_breaks": list(self.costliest_breaks), "breaks_costing_nothing": self.free_breaks,
                "caveats": list(self.caveats)}


def _tokens(connection: sqlite3.Connection) -> dict[str, Any]:
    """The logged tokens by billing bucket, as ``usage --json`` sums them: ``tokens`` over the
    requests that logged a count of each (a column holding no valid count is NULL, never 0), their
    ``total`` (None when there are requests and none logged usage: a sum of none is unknown, never
    0); ``usage_unknown_requests`` the requests that logged no usage, and
    ``tokens_unknown_requests`` by bucket those that logged usage without a valid count of it (the
    bucket's sum is then a lower bound; only the buckets some request lacks)."""
    sums = ", ".join(f"COALESCE(SUM({column}), 0)" for _, column in TOKEN_COLUMNS)
    lacking = ", ".join(f"COALESCE(SUM({LOGGED} AND {column} IS NULL), 0)" for _, column in TOKEN_COLUMNS)
    row = connection.execute(f"SELECT {sums}, {lacking}, COALESCE(SUM(NOT {LOGGED}), 0), COUNT(*) "
                             "FROM requests").fetchone()
    buckets = [bucket for bucket, _ in TOKEN_COLUMNS]
    tokens = dict(zip(buckets, row[:4]))
    known = row[8] < row[9] or not row[9]
    return {"tokens": {**tokens, "total": sum(tokens.values())} if known else None, "usage_unknown_requests": row[8],
            "tokens_unknown_requests": {bucket: count for bucket, count in zip(buckets, row[4:8]) if count}}


def _totals(connection: sqlite3.Connection) -> dict[str, Any]:
    sessions, refused = connection.execute("SELECT COUNT(*), COUNT(error) FROM sessions").fetchone()
    cache_breaks = connection.execute(f"SELECT COALESCE(SUM(classification IN {BREAKS}), 0) "
                                      "FROM requests").fetchone()[0]
    measured = measures(connection.execute(f"SELECT {MEASURES} FROM requests").fetchone())
    breaks = connection.execute("SELECT COUNT(*) FROM breaks").fetchone()[0]
    return {"sessions": sessions, "sessions_refused": refused, **measured, **_tokens(connection),
            "attribution_breaks": breaks, "cache_breaks": cache_breaks}


def _grouped(connection: sqlite3.Connection, column: str, order: str) -> tuple[dict[str, Any], ...]:
    rows = connection.execute(f"SELECT {column}, {MEASURES} FROM requests GROUP BY {column} ORDER BY {order}")
    return tuple({column: row[0], **measures(row[1:])} for row in rows)


def _by_model(connection: sqlite3.Connection) -> tuple[dict[str, Any], ...]:
    """The measures per model the price table bills the requests as (their ledger row's
    ``billed_as``; an unpriced request's, or one of a log indexed without a ledger: the model it
    logged), as ``usage --by model`` and the cost by model group them, so that the three tables have
    one key: a dated snapshot and its alias are one row, with the models they logged
    (``logged_models``), most prompt tokens first; each named as the log did, not as stored."""
    rows = connection.execute(
        f"SELECT billed, {MEASURES}, json_group_array(DISTINCT COALESCE(model, 'unknown')) FROM "
        "(SELECT r.*, COALESCE(c.billed_as, r.model) AS billed FROM requests AS r LEFT JOIN costs AS c "
        "ON c.path = r.path AND c.idx = r.idx) GROUP BY billed ORDER BY 4 DESC, billed")
    return tuple({"model": shown(row[0]), "logged_models": sorted(map(shown, json.loads(row[-1]))),
                  **measures(row[1:-1])}
                 for row in rows)


def _by_cause(connection: sqlite3.Connection, lost: CauseLosses) -> tuple[dict[str, Any], ...]:
    """The breaks by cause: how many the cache analysis and attribution count, and what the breaks
    lost to each cause (``lost``: :func:`lost_by_cause`'s over the breaks; a break that also went
    cold lost the rest to ``cold_ttl``, a row with no break of its own) beside the reusable cache
    reads of the breaks that lost tokens to it, what the report's breaks by cause says."""
    causes: dict[str, dict[str, Any]] = {}

    def entry(cause: str) -> dict[str, Any]:
        return causes.setdefault(cause, {"cause": cause, "cache_breaks": 0, "attribution_breaks": 0,
                                         "reusable_cache_read": 0, "lost_tokens": 0})

    for cause, count in connection.execute(f"SELECT COALESCE(cause, '?'), COUNT(*) FROM requests "
                                           f"WHERE classification IN {BREAKS} GROUP BY 1"):
        entry(cause)["cache_breaks"] = count
    for cause, count in connection.execute("SELECT COALESCE(cause, 'unexplained'), COUNT(*) FROM breaks GROUP BY 1"):
        entry(cause)["attribution_breaks"] = count
    for cause, (tokens, reusable) in lost.items():
        entry(cause).update(lost_tokens=tokens, reusable_cache_read=reusable)
    return tuple(sorted(causes.values(), key=lambda c: (-c["lost_tokens"], -c["cache_breaks"], c["cause"])))


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
        >>> stats.totals["actual_hit_ratio"]  # doctest: +SKIP
        0.8125
    """
    if sort not in _SORTS:
        raise UsageError(f"cannot rank sessions by {sort!r}", hint="use --sort " + ", ".join(_SORTS))
    connection = connect_index(db, create=False)
    try:
        # typeshed's aggregate protocol has finalize() return an int; SQLite takes any value it stores
        connection.create_aggregate("usd_sum", 1, UsdSum)  # type: ignore[arg-type]
        check_values(connection, os.fspath(db))
        window_views(connection, since, until)
        total, by_model, by_path = ledgers(connection)
        lost, break_lost = lost_by_cause(connection)  # one pass over every request's losses, for both cause tables
        stats = FleetStats(db=os.fspath(db), totals=_totals(connection),
                           by_model=_by_model(connection),
                           by_day=_grouped(connection, "day", "day"), by_cause=_by_cause(connection, break_lost),
                           top_sessions=top_sessions(connection, top, by_path, sort), cost=fleet_cost(connection, total),
                           cost_by_model=cost_by_model(by_model), cost_by_cause=cost_by_cause(total, lost),
                           prices=price_sources(connection), sort=sort, since=since, until=until,
                           caveats=stats_caveats(connection))
        breaks, free = costliest_breaks(connection, top)
        return replace(stats, costliest_breaks=breaks, free_breaks=free)
    except sqlite3.DatabaseError as exc:  # tables of another layout under the same schema version
        if str(exc) == "integer overflow":  # a sound index: SUM() of counts that add up past 2**63 - 1
            raise UsageError("the token counts of the index add up past SQLite's 64-bit integers: its logs "
                             "hold counts no model reports", path=os.fspath(db),
                             hint="find them with `dsh-audit sessions PATH` and index the other logs "
                                  "apart") from None
        raise index_error(exc, os.fspath(db), hint="give another --db file (keep this one: it may hold data), and build it with `dsh-audit index PATH --db FILE`") from None
    finally:
        connection.close()
