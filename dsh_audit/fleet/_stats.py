"""Fleet questions over the index: totals, cache-hit ratios by model and by day, breaks by cause,
the sessions that lost the most cached tokens, and what it all cost.

Ratios follow ``dsh-audit cache``: cache-read tokens over the logged prompt (input + cache read +
cache write) of the requests whose usage is known. Costs are sums of the ``costs`` ledger the
index stored (the rows of ``dsh-audit usage``), added up with :func:`dsh_audit.cache.usd_total`
so they equal ``usage`` and ``cache`` to the nano-dollar; no log is read again.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from typing import Any

from ..cache import Costs, Tokens, usd_total
from ..errors import UsageError
from ._db import connect_index, index_error

__all__ = ["FleetStats", "fleet_stats"]

_BREAKS = "('break_explained', 'break_unattributed', 'break_unexplained')"
_KNOWN = "actual_cache_read IS NOT NULL"
# Per group: requests, cache reads logged ("usage known"), prompt, actual, expected, lost tokens, lost cost,
# requests that lost tokens, and those of them with no lost cost (unpriced).
_MEASURES = (f"COUNT(*), SUM({_KNOWN}), "
             f"COALESCE(SUM(CASE WHEN {_KNOWN} THEN prompt_tokens END), 0), "
             "COALESCE(SUM(actual_cache_read), 0), "
             f"COALESCE(SUM(CASE WHEN {_KNOWN} THEN expected_cache_read END), 0), "
             "COALESCE(SUM(lost_tokens), 0), SUM(lost_cost), COALESCE(SUM(lost_tokens > 0), 0), "
             "COALESCE(SUM(lost_tokens > 0 AND lost_cost IS NULL), 0)")


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _measures(row: tuple[Any, ...]) -> dict[str, Any]:
    """A group's measures; ``lost_cost_usd`` sums the priced losses (None when no loss was priced
    but some were not), ``lost_unpriced`` counts the requests whose lost tokens have no price."""
    requests, known, prompt, actual, expected, lost, cost, losing, unpriced = row
    return {"requests": requests, "usage_known": known or 0, "prompt_tokens": prompt,
            "actual_cache_read": actual, "expected_cache_read": expected,
            "hit_ratio": _ratio(actual, prompt), "expected_hit_ratio": _ratio(expected, prompt),
            "lost_tokens": lost, "lost_cost_usd": None if cost is None else Costs.known(
                usd_total([cost]), requests=losing, unpriced=unpriced),
            "lost_unpriced": unpriced, "lost_requests": losing}


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
        top_sessions: the sessions that lost the most tokens, most first, each with what it cost
            (``cost_usd``) and what its breaks cost (``break_cost_usd``); None without a ledger.
        cost: what the fleet cost (the sums of ``dsh-audit usage``): requests, priced and unpriced
            requests (and why), tokens and USD by bucket, with no cache, all off-peak, what cache
            losses and breaks cost, the requests billed at a long-context tier and what they cost
            (``tier_requests``, ``tier_cost_usd``), and logs indexed without a ledger
            (``sessions_unpriced``).
        cost_by_model: ``cost`` per model the requests went to, costliest first.
        cost_by_cause: per cause of lost cache reads: tokens lost, their cost, and the part lost
            in cache breaks.
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

    def to_json(self) -> dict[str, Any]:
        """The one object ``dsh-audit stats --json`` prints."""
        return {"db": self.db, "totals": self.totals, "by_model": list(self.by_model), "by_day": list(self.by_day),
                "by_cause": list(self.by_cause), "top_sessions": list(self.top_sessions), "cost": self.cost,
                "cost_by_model": list(self.cost_by_model), "cost_by_cause": list(self.cost_by_cause)}


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


#: The largest integer SQLite binds (a signed 64-bit integer).
_SQLITE_MAX_INT = (1 << 63) - 1


def _top(connection: sqlite3.Connection, top: int) -> tuple[dict[str, Any], ...]:
    rows = connection.execute(
        f"SELECT s.path, s.session_id, {_MEASURES} FROM requests JOIN sessions AS s USING (path) "
        "GROUP BY s.path ORDER BY COALESCE(SUM(lost_tokens), 0) DESC, s.path LIMIT ?",
        (min(top, _SQLITE_MAX_INT),))  # a larger --top is "every session"; SQLite cannot bind it
    return tuple({"path": row[0], "session_id": row[1], **_measures(row[2:]), **_session_cost(connection, row[0])}
                 for row in list(rows))


def _session_cost(connection: sqlite3.Connection, path: str) -> dict[str, Any]:
    """What one indexed session cost and what its breaks cost (None each: indexed without a ledger)."""
    sums = _ledger_sums(connection, "WHERE path = ?", (path,))
    if not sums["requests"]:
        return {"cost_usd": None, "break_cost_usd": None, "unpriced_requests": None, "cost_complete": None}
    return {"cost_usd": None if sums["cost_usd"] is None else sums["cost_usd"]["total"],
            "break_cost_usd": sums["break_cost_usd"], "unpriced_requests": sums["unpriced_requests"],
            "cost_complete": sums["cost_complete"]}


_AMOUNTS = ("cost_cache_miss", "cost_cache_read", "cost_cache_write", "cost_output", "no_cache_cost",
            "off_peak_cost", "lost_cost")
_TOKENS = ("cache_miss_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens", "reasoning_tokens")


def _ledger_sums(connection: sqlite3.Connection, where: str = "", params: tuple[Any, ...] = ()) -> dict[str, Any]:
    """The ledger's sums over the ``costs`` rows matching ``where``: every amount is summed in
    Python with :func:`usd_total` (SQLite's float ``SUM`` may round differently)."""
    columns = ("unpriced", "is_break", "tier", "cost_total", *_TOKENS, *_AMOUNTS)
    rows = connection.execute(f"SELECT {', '.join(columns)} FROM costs {where}", params).fetchall()
    unpriced: dict[str, int] = {}
    for row in rows:
        if row[0] is not None:
            unpriced[row[0]] = unpriced.get(row[0], 0) + 1
    first = columns.index(_TOKENS[0])
    tokens = Tokens(*(sum(r[first + i] or 0 for r in rows) for i in range(len(_TOKENS))))
    amounts = {name: [r[first + len(_TOKENS) + i] for r in rows if r[first + len(_TOKENS) + i] is not None]
               for i, name in enumerate(_AMOUNTS)}
    cost = Costs(*(usd_total(amounts[name]) for name in _AMOUNTS[:4]))
    breaks = [r[-1] for r in rows if r[1] and r[-1] is not None]
    tiered = [r for r in rows if r[2] is not None]
    # Amounts are sums over the priced requests: None when none was priced but some were not
    # (unknown, never $0), lower bounds when ``cost_complete`` is False.
    counts = {"requests": len(rows), "unpriced": sum(unpriced.values())}
    return {"requests": len(rows), "unpriced_requests": counts["unpriced"], "cost_complete": not counts["unpriced"],
            "tokens": tokens.to_json(), "cost_usd": None if Costs.known(0.0, **counts) is None else cost.to_json(),
            "no_cache_cost_usd": Costs.known(usd_total(amounts["no_cache_cost"]), **counts),
            "off_peak_cost_usd": Costs.known(usd_total(amounts["off_peak_cost"]), **counts),
            "lost_cost_usd": Costs.known(usd_total(amounts["lost_cost"]), **counts),
            "break_cost_usd": Costs.known(usd_total(breaks), **counts), "tier_requests": len(tiered),
            "tier_cost_usd": usd_total(r[3] for r in tiered if r[3] is not None),
            "unpriced": Costs.group_unpriced(unpriced)}


def _cost(connection: sqlite3.Connection) -> dict[str, Any]:
    missing = connection.execute(
        "SELECT COUNT(*) FROM sessions WHERE error IS NULL AND request_count > 0 "
        "AND NOT EXISTS (SELECT 1 FROM costs WHERE costs.path = sessions.path)").fetchone()[0]
    return {**_ledger_sums(connection), "sessions_unpriced": missing}


def _cost_by_model(connection: sqlite3.Connection) -> tuple[dict[str, Any], ...]:
    models = [row[0] for row in connection.execute("SELECT DISTINCT model FROM costs")]
    rows = [{"model": model, **_ledger_sums(connection, "WHERE model IS ?", (model,))} for model in models]
    return tuple(sorted(rows, key=lambda r: (-(r["cost_usd"] or {}).get("total", 0.0), -r["requests"],
                                             r["model"] or "")))


def _cost_by_cause(connection: sqlite3.Connection) -> tuple[dict[str, Any], ...]:
    causes: dict[str, dict[str, list[float]]] = {}
    for cause, cost, is_break in connection.execute(
            "SELECT item.key, item.value, costs.is_break FROM costs, json_each(costs.lost_cost_by_cause) AS item"):
        entry = causes.setdefault(cause, {"lost": [], "breaks": []})
        entry["lost"].append(cost)
        if is_break:
            entry["breaks"].append(cost)
    tokens = dict(connection.execute("SELECT item.key, SUM(item.value) FROM requests, json_each(requests.lost) AS item "
                                     "WHERE requests.lost IS NOT NULL GROUP BY 1").fetchall())
    rows = [{"cause": cause, "lost_tokens": tokens.get(cause, 0), "lost_cost_usd": usd_total(v["lost"]),
             "break_cost_usd": usd_total(v["breaks"])} for cause, v in causes.items()]
    return tuple(sorted(rows, key=lambda r: (-r["lost_cost_usd"], r["cause"])))


#: The SQLite storage classes each declared column type may hold (``NULL`` in all of them).
_STORED = {"TEXT": ("text",), "INTEGER": ("integer", "real"), "REAL": ("real", "integer")}
#: The largest number a column may hold: far past any count or cost, and summed over any number of
#: rows still a finite double (``math.fsum`` of 1e308s overflows).
_MAX_REAL = 1e200
#: The JSON columns ``stats`` sums the values of (``json_each``): objects of numbers.
_JSON_NUMBERS = (("requests", "lost"), ("costs", "lost_cost_by_cause"))


def _check_values(connection: sqlite3.Connection, location: str) -> None:
    """Refuse an index whose columns hold values of a type ``index`` never writes (a BLOB where
    text belongs, text where a count belongs, an infinite cost, a JSON cause map that is not
    numbers): the file was edited or damaged, and its sums would mean nothing. One scan per table.

    Raises:
        UsageError: naming the first such table and column.
    """
    bad: tuple[str, str] | None = None
    for table in ("sessions", "requests", "breaks", "costs"):
        columns = [(str(row[1]), str(row[2]).upper()) for row in connection.execute(f"PRAGMA table_info({table})")]
        tests = []
        for name, declared in columns:
            kinds = ", ".join(f"'{kind}'" for kind in _STORED.get(declared, ()))
            if kinds:
                bound = f" AND abs(\"{name}\") <= {_MAX_REAL}" if declared != "TEXT" else ""
                tests.append((name, f"(\"{name}\" IS NULL OR (typeof(\"{name}\") IN ({kinds}){bound}))"))
        if not tests:
            continue
        which = " ".join(f"WHEN NOT {test} THEN {index}" for index, (_, test) in enumerate(tests))
        sound = " AND ".join(test for _, test in tests)
        row = connection.execute(f"SELECT CASE {which} END FROM {table} WHERE NOT ({sound}) LIMIT 1").fetchone()
        if row is not None:
            bad = (table, tests[row[0]][0])
            break
    for table, column in () if bad else _JSON_NUMBERS:
        row = connection.execute(f"SELECT 1 FROM {table} WHERE json_type({column}) IS NOT 'object' "
                                 f"AND {column} IS NOT NULL LIMIT 1").fetchone() or connection.execute(
            f"SELECT 1 FROM {table}, json_each({table}.{column}) AS item WHERE {table}.{column} IS NOT NULL "
            f"AND (item.type NOT IN ('integer', 'real') OR abs(item.value) > {_MAX_REAL}) LIMIT 1").fetchone()
        if row is not None:
            bad = (table, column)
            break
    if bad is not None:
        raise UsageError(f"not a dsh-audit index: column {bad[0]}.{bad[1]} holds a value of a type or size "
                         "`dsh-audit index` never writes (the file was edited or damaged)", path=location,
                         hint="delete the file and build it again with `dsh-audit index PATH --db FILE`")


def fleet_stats(db: str | os.PathLike[str], *, top: int = 10) -> FleetStats:
    """Answer the fleet questions from the index at ``db``.

    Args:
        db: an index written by :func:`dsh_audit.fleet.index_logs`.
        top: how many sessions ``top_sessions`` lists.

    Raises:
        UsageError: ``db`` is missing or not an index.

    Example:
        >>> stats = fleet_stats("audit.sqlite")  # doctest: +SKIP
        >>> stats.totals["hit_ratio"]  # doctest: +SKIP
        0.8125
    """
    connection = connect_index(db, create=False)
    try:
        _check_values(connection, os.fspath(db))
        return FleetStats(db=os.fspath(db), totals=_totals(connection),
                          by_model=_grouped(connection, "model", "4 DESC, model"),
                          by_day=_grouped(connection, "day", "day"), by_cause=_by_cause(connection),
                          top_sessions=_top(connection, top), cost=_cost(connection),
                          cost_by_model=_cost_by_model(connection), cost_by_cause=_cost_by_cause(connection))
    except sqlite3.DatabaseError as exc:  # tables of another layout under the same schema version
        if str(exc) == "integer overflow":  # a sound index: SUM() of counts that add up past 2**63 - 1
            raise UsageError("the token counts of the index add up past SQLite's 64-bit integers: its logs "
                             "hold counts no model reports", path=os.fspath(db),
                             hint="find them with `dsh-audit sessions PATH` and index the other logs "
                                  "apart") from None
        raise index_error(exc, os.fspath(db), hint="delete the file and index again") from None
    finally:
        connection.close()
