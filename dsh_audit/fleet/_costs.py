"""What the fleet cost, read back from the index's ``costs`` ledger: in all, per model, per session
and per cause of lost cache reads, each added up by the sums of ``dsh-audit usage``
(:meth:`dsh_audit.cache.Costs.sums`).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ..cache import Costs, ExactSum, Tokens
from ._stored import shown

__all__ = ["Ledger", "cost_by_cause", "cost_by_model", "fleet_cost", "ledgers", "session_cost"]

def session_cost(ledger: Ledger | None) -> dict[str, Any]:
    """What one indexed session cost (``cost_usd`` by billing bucket with its ``total``, as every
    command's ``--json`` gives a cost) and what its breaks cost (None each: indexed without a ledger)."""
    if ledger is None or not ledger.sums.requests:
        return {"cost_usd": None, "break_cost_usd": None, "unpriced_requests": None, "cost_complete": None,
                "break_requests": None, "break_unpriced": None}
    sums = ledger.to_json()
    return {"cost_usd": sums["cost_usd"],
            "break_cost_usd": sums["break_cost_usd"], "unpriced_requests": sums["unpriced_requests"],
            "cost_complete": sums["cost_complete"], "break_requests": sums["break_requests"],
            "break_unpriced": sums["break_unpriced"]}


#: The ``costs`` columns a request's amounts are read back from (``c``), with its lost tokens by
#: cause (``r``: the ``requests`` row of the same request).
_ROW = ("c.path", "c.model", "c.tier", "c.unpriced", "c.billed_as", "c.is_break", "c.cache_miss_tokens",
        "c.cache_read_tokens", "c.cache_write_tokens", "c.output_tokens", "c.reasoning_tokens", "c.cost_cache_miss",
        "c.cost_cache_read", "c.cost_cache_write", "c.cost_output", "c.no_cache_cost", "c.off_peak_cost", "c.window",
        "c.lost_tokens", "c.lost_cost_by_cause", "r.lost")


class Ledger:
    """The ledger sums of a group of ``costs`` rows (:meth:`Costs.sums`, as ``usage`` and ``cache``
    sum a session's ledger), with its requests billed at a long-context tier and what they cost,
    and the models its requests logged (``models``: in a group by the model the price table bills,
    a dated snapshot and its alias are one group)."""

    __slots__ = ("models", "sums", "tier_cost", "tier_requests")

    def __init__(self) -> None:
        self.models: set[str] = set()
        self.sums = Costs.sums()
        self.tier_requests = 0
        self.tier_cost = ExactSum()  # what they cost, summed exactly

    def add(self, row: tuple[Any, ...], lost: dict[str, int], lost_cost: dict[str, float] | None,
            lost_unknown: bool = False) -> None:
        """Add one ``costs`` row (columns :data:`_ROW` from ``c.tier``), its lost tokens and their
        cost by cause (None: no rate priced them), and whether what it lost is unknown (a break
        whose cache reads were not logged)."""
        (tier, unpriced, _, is_break, miss, read, write, output, reasoning, cost_miss, cost_read, cost_write,
         cost_output, no_cache, off_peak, window) = row[:16]
        tokens = None if miss is None else Tokens(miss, read or 0, write or 0, output or 0, reasoning or 0)
        cost = None if cost_miss is None else Costs(cost_miss, cost_read or 0.0, cost_write or 0.0, cost_output or 0.0)
        self.sums.add_request(tokens=tokens, cost=cost, no_cache=no_cache, off_peak=off_peak, lost=lost,
                              lost_cost=lost_cost, is_break=bool(is_break), unpriced=unpriced,
                              lost_unknown=lost_unknown, window=window)
        if tier is not None:
            self.tier_requests += 1
            if cost is not None:
                self.tier_cost.nanos += cost.total_nanos

    def to_json(self) -> dict[str, Any]:
        """The group's ``cost`` object: the ledger summary's amounts (sums over the priced
        requests: None when no request that owes one was priced, never $0 for unknown; lower
        bounds when ``cost_complete`` is False; the off-peak cost of one-rate requests is their
        cost, so the groups add up to the fleet's), what the cache losses cost, and the tier."""
        sums = self.sums
        summary = sums.summary()
        # a sum of no request's usage is unknown (null), as ``usage --json`` has it: never 0
        known = not sums.requests or sums.usage_unknown < sums.requests
        return {"requests": sums.requests, "unpriced_requests": summary["unpriced_requests"],
                "cost_complete": summary["cost_complete"], "tokens": summary["tokens"] if known else None,
                "cost_usd": summary["cost_usd"], "no_cache_cost_usd": summary["no_cache_cost_usd"],
                "off_peak_cost_usd": summary["off_peak_cost_usd"], "lost_cost_usd": sums.known("lost"),
                "break_cost_usd": summary["break_cost_usd"],
                **{k: summary[k] for k in ("lost_requests", "lost_unpriced", "break_requests", "break_unpriced",
                                           "lost_unknown_requests")},
                "tier_requests": self.tier_requests,
                "tier_cost_usd": self.tier_cost.usd(), "unpriced": summary["unpriced"]}


def ledgers(connection: sqlite3.Connection) -> tuple[Ledger, dict[str | None, Ledger], dict[str | None, Ledger]]:
    """The ledger sums of the whole index, of each model and of each session (by path), in one
    pass over the ``costs`` rows."""
    total = Ledger()
    by_model: dict[str | None, Ledger] = {}
    by_path: dict[str | None, Ledger] = {}
    for row in connection.execute(f"SELECT {', '.join(_ROW)} FROM costs AS c LEFT JOIN requests AS r "
                                  "ON r.path = c.path AND r.idx = c.idx"):
        path, model, *amounts, lost_tokens, lost_cost, lost = row
        billed = amounts[2] or model  # the model the price table bills (as ``usage --by model``); unpriced, the logged
        by_cause: dict[str, int] = json.loads(lost) if lost else {}
        if lost_tokens and not by_cause:  # a request row without its causes: its tokens still count
            by_cause = {"?": lost_tokens}
        # a break whose request row stored what it lost as unknown (NULL): its cache reads were not logged
        unknown = bool(amounts[3]) and lost is None
        # priced when a rate billed it (``billed_as``), as the ledger entry it was written from
        cause_cost = (json.loads(lost_cost) if lost_cost else {}) if amounts[2] is not None else None
        for ledger in (total, by_model.setdefault(billed, Ledger()), by_path.setdefault(path, Ledger())):
            ledger.add(tuple(amounts), by_cause, cause_cost, unknown)
        by_model[billed].models.add(model or "unknown")
    return total, by_model, by_path


def fleet_cost(connection: sqlite3.Connection, total: Ledger) -> dict[str, Any]:
    missing = connection.execute(
        "SELECT COUNT(*) FROM sessions WHERE error IS NULL AND request_count > 0 "
        "AND NOT EXISTS (SELECT 1 FROM costs WHERE costs.path = sessions.path)").fetchone()[0]
    return {**total.to_json(), "sessions_unpriced": missing}


def cost_by_model(by_model: dict[str | None, Ledger]) -> tuple[dict[str, Any], ...]:
    """``cost`` per model the price table bills (``logged_models``: the models its requests logged,
    as ``usage --by model --json`` has them), costliest first; each named as the log did, not as stored."""
    rows = [{"model": shown(model), "logged_models": sorted(map(shown, ledger.models)), **ledger.to_json()}
            for model, ledger in by_model.items()]
    return tuple(sorted(rows, key=lambda r: (-(r["cost_usd"] or {}).get("total", 0.0), -r["requests"],
                                             r["model"] or "")))


def cost_by_cause(total: Ledger, stored: dict[str, tuple[int, int | None]]) -> tuple[dict[str, Any], ...]:
    """Per cause of lost cache reads: the tokens lost (of every indexed request, so the rows add up
    to the fleet's tokens lost) beside the reusable cache reads of the requests that lost them
    (``stored``: :func:`~dsh_audit.fleet._measures.lost_by_cause`'s answer, read once for both cause
    tables), what the priced ones cost and the part lost
    in breaks, by the one rule (None: no request that lost tokens to the cause was priced, or none has a ledger)."""
    causes = total.sums.causes()
    owing = total.sums.cause_owing()
    rows = [{"cause": cause, "reusable_cache_read": stored.get(cause, (0, None))[1],
             "lost_tokens": stored.get(cause, (lost_tokens, None))[0], "lost_cost_usd": cost,
             "break_cost_usd": breaks, **owing[cause]} for cause, (lost_tokens, cost, breaks) in causes.items()]
    rows += [{"cause": cause, "reusable_cache_read": reusable, "lost_tokens": count, "lost_cost_usd": None,
              "break_cost_usd": None, "lost_requests": 0, "lost_unpriced": 0, "break_requests": 0, "break_unpriced": 0}
             for cause, (count, reusable) in stored.items() if cause not in causes]  # lost only by logs without a ledger
    return tuple(sorted(rows, key=lambda r: (-(r["lost_cost_usd"] or 0.0), r["cause"])))
