"""Fleet questions over the index: totals, cache-hit ratios by model and by day, breaks by cause,
and the sessions that lost the most cached tokens.

Ratios follow ``dsh-audit cache``: cache-read tokens over the logged prompt (input + cache read +
cache write) of the requests whose usage is known.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from typing import Any

from ..errors import UsageError
from ._index import connect_index

__all__ = ["FleetStats", "fleet_stats"]

_BREAKS = "('break_explained', 'break_unattributed', 'break_unexplained')"
_KNOWN = "actual_cache_read IS NOT NULL"
# Per group: requests, usage known, prompt, actual, expected, lost tokens, lost cost.
_MEASURES = (f"COUNT(*), SUM({_KNOWN}), "
             f"COALESCE(SUM(CASE WHEN {_KNOWN} THEN prompt_tokens END), 0), "
             "COALESCE(SUM(actual_cache_read), 0), "
             f"COALESCE(SUM(CASE WHEN {_KNOWN} THEN expected_cache_read END), 0), "
             "COALESCE(SUM(lost_tokens), 0), SUM(lost_cost)")


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def _measures(row: tuple[Any, ...]) -> dict[str, Any]:
    requests, known, prompt, actual, expected, lost, cost = row
    return {"requests": requests, "usage_known": known or 0, "prompt_tokens": prompt,
            "actual_cache_read": actual, "expected_cache_read": expected,
            "hit_ratio": _ratio(actual, prompt), "expected_hit_ratio": _ratio(expected, prompt),
            "lost_tokens": lost, "lost_cost_usd": None if cost is None else round(cost, 6)}


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
        top_sessions: the sessions that lost the most tokens, most first.
    """

    db: str
    totals: dict[str, Any]
    by_model: tuple[dict[str, Any], ...]
    by_day: tuple[dict[str, Any], ...]
    by_cause: tuple[dict[str, Any], ...]
    top_sessions: tuple[dict[str, Any], ...]

    def to_json(self) -> dict[str, Any]:
        """The one object ``dsh-audit stats --json`` prints."""
        return {"db": self.db, "totals": self.totals, "by_model": list(self.by_model), "by_day": list(self.by_day),
                "by_cause": list(self.by_cause), "top_sessions": list(self.top_sessions)}


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


def _top(connection: sqlite3.Connection, top: int) -> tuple[dict[str, Any], ...]:
    rows = connection.execute(
        f"SELECT s.path, s.session_id, {_MEASURES} FROM requests JOIN sessions AS s USING (path) "
        "GROUP BY s.path ORDER BY COALESCE(SUM(lost_tokens), 0) DESC, s.path LIMIT ?", (top,))
    return tuple({"path": row[0], "session_id": row[1], **_measures(row[2:])} for row in rows)


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
        return FleetStats(db=os.fspath(db), totals=_totals(connection),
                          by_model=_grouped(connection, "model", "4 DESC, model"),
                          by_day=_grouped(connection, "day", "day"), by_cause=_by_cause(connection),
                          top_sessions=_top(connection, top))
    except sqlite3.DatabaseError as exc:  # tables of another layout under the same schema version
        raise UsageError(f"not a dsh-audit index: {exc}", path=os.fspath(db),
                         hint="delete the file and index again") from None
    finally:
        connection.close()
