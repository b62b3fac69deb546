"""The sessions and the cache breaks ``dsh-audit stats`` ranks: by what their cache losses cost
(tokens do not compare across providers), by what they cost, or by time; each query holds only the
rows it keeps.
"""

from __future__ import annotations

import heapq
import sqlite3
from typing import Any

from ._costs import Ledger, session_cost
from ._measures import BREAKS, MEASURES, iso, measures
from ._stored import shown

__all__ = ["costliest_breaks", "top_sessions"]

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


def top_sessions(connection: sqlite3.Connection, top: int, ledgers: dict[str | None, Ledger],
         sort: str = "lost") -> tuple[dict[str, Any], ...]:
    """The ``top`` sessions by ``sort`` (:data:`~dsh_audit.fleet._stats._SORTS`): by default those whose cache losses cost
    the most (:func:`_loss_rank` of each one's ``lost_cost_usd``, as its row shows it), each with
    what it cost and when its last request was sent (``last_sent_at``: the latest of its
    requests' ``sent_at``, the log's own time); one pass over the sessions, holding ``top`` of them.
    Paths and ids are as the logs gave them (:func:`~dsh_audit.fleet._stored.shown`), not as stored."""
    rows = connection.execute(f"SELECT s.path, s.session_id, MAX(sent_at), {MEASURES} FROM requests "
                              "JOIN sessions AS s USING (path) GROUP BY s.path")
    measured = ({"path": shown(row[0]), "session_id": shown(row[1]), "last_sent_at": iso(row[2]), **measures(row[3:]),
                 **session_cost(ledgers.get(row[0])), "_last": row[2]} for row in rows)
    best = heapq.nsmallest(top, measured, key=lambda r: (_session_rank(r, sort), r["path"]))
    return tuple({key: value for key, value in r.items() if key != "_last"} for r in best)


def _session_rank(row: dict[str, Any], sort: str) -> tuple[Any, ...]:
    """The sort key of a session of :func:`top_sessions`: what its losses cost (``lost``,
    :func:`_loss_rank`), what it cost (``cost``: most first, a lower bound by its amount, unknown
    last) or its last request's time (``time``: newest first, none last)."""
    if sort == "cost":
        return row["cost_usd"] is None, -(row["cost_usd"] or {}).get("total", 0.0)
    if sort == "time":
        return row["_last"] is None, -(row["_last"] or 0.0)
    return _loss_rank(row["lost_cost_usd"], row["lost_tokens"], losing=row["lost_requests"] > 0)


def costliest_breaks(connection: sqlite3.Connection, top: int) -> tuple[tuple[dict[str, Any], ...], int]:
    """The ``top`` cache breaks of the whole index (requests the cache analysis classified as a
    break, as ``breaks (cache)`` counts them) whose lost tokens cost the most (:func:`_loss_rank`),
    read from the ``requests`` rows: what each lost and its cost, priced once when indexed (the
    ledger's ``breaks $`` sums the same amounts), and how many breaks cost nothing (they lost no
    token, or at a rate of $0), which are not listed. ``lost_tokens`` and ``lost_cost_usd`` are
    None for a break whose cache reads were not logged (it lost an unknown amount), ``lost_cost_usd``
    None for one that lost tokens at no known price."""
    rows = connection.execute(
        "SELECT r.path, s.session_id, r.idx, r.kind, r.turn, r.step, r.attempt, r.model, r.provider, r.cause, "
        "r.classification, r.reusable_cache_read, r.actual_cache_read, r.lost_tokens, r.lost_cost "
        "FROM requests AS r JOIN sessions AS s USING (path) "
        f"WHERE r.classification IN {BREAKS}")
    free = [0]

    def costly(row: dict[str, Any]) -> bool:
        if row["lost_cost_usd"] == 0:  # known to have cost nothing: not one of the costliest
            free[0] += 1
            return False
        return True

    best = heapq.nsmallest(top, filter(costly, map(_break, rows)), key=_break_key)  # holds ``top`` rows
    return tuple(best), free[0]


def _break(row: tuple[Any, ...]) -> dict[str, Any]:
    """A break of :func:`costliest_breaks`, of its query's row, its text as the log gave it
    (:func:`~dsh_audit.fleet._stored.shown`)."""
    (path, session_id, idx, kind, turn, step, attempt, model, provider, cause, classification, reusable, actual,
     tokens, cost) = map(shown, row)
    losing = tokens is None or tokens > 0  # None: its cache reads were not logged
    return {"path": path, "session_id": session_id, "request": idx, "kind": kind, "turn": turn, "step": step,
            "attempt": attempt, "model": model, "provider": provider, "cause": cause,
            "classification": classification, "reusable_cache_read": reusable, "actual_cache_read": actual,
            "lost_tokens": tokens,
            "lost_cost_usd": cost if cost is not None or losing else 0.0}  # it lost nothing: it owes $0


def _break_key(row: dict[str, Any]) -> tuple[tuple[int, float, int], str, int]:
    """The order of :func:`costliest_breaks` (:func:`_loss_rank`; then by log and request)."""
    losing = row["lost_tokens"] is None or row["lost_tokens"] > 0
    return _loss_rank(row["lost_cost_usd"], row["lost_tokens"], losing=losing), row["path"], row["request"]
