"""Usage and cost of many sessions grouped by session, turn, day, model, window or request.

The rows are sums of :class:`~dsh_audit.cache.LedgerEntry` values, so a ``usage`` total is the
sum of the per-session ledgers whatever the grouping. Days are UTC dates of the requests' send
times; ``--since``/``--until`` filter requests on those times (the log's own clock).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ..errors import UsageError
from ._ledger import LedgerEntry, SessionLedger
from ._money import Costs, Tokens, group_unpriced
from ._prices import utc_moment

__all__ = ["USAGE_GROUPS", "UsageRow", "UsageTable", "parse_instant", "usage_table"]

#: The ``--by`` choices of ``dsh-audit usage``.
USAGE_GROUPS = ("session", "turn", "day", "model", "window", "request")


@dataclass(frozen=True, slots=True)
class UsageRow:
    """Sums over the requests of one group (or all of them: :attr:`UsageTable.total`).

    ``tier``: in a row of one request (``by="request"``), the ``prompt_tokens_above`` threshold of
    the long-context tier whose rates priced it (:attr:`LedgerEntry.tier`); None for the base
    rates and in every other row.
    """

    key: str
    requests: int = 0
    tokens: Tokens = field(default_factory=Tokens)
    cost: Costs = field(default_factory=Costs)
    no_cache_cost: float = 0.0
    off_peak_cost: float = 0.0
    lost_tokens: int = 0
    lost_cost: float = 0.0
    break_cost: float = 0.0
    unpriced: int = 0
    tier: int | None = None

    def add(self, entry: LedgerEntry) -> UsageRow:
        return UsageRow(
            self.key, self.requests + 1, self.tokens + (entry.tokens or Tokens()), self.cost + (entry.cost or Costs()),
            self.no_cache_cost + (entry.no_cache_cost or 0.0), self.off_peak_cost + (entry.off_peak_cost or 0.0),
            self.lost_tokens + sum(entry.lost.values()), self.lost_cost + sum(entry.lost_cost.values()),
            self.break_cost + (sum(entry.lost_cost.values()) if entry.is_break else 0.0),
            self.unpriced + (entry.unpriced is not None), self.tier)

    def known(self, amount: float) -> float | None:
        """``amount`` of this row as JSON gives it: None when none of its requests was priced
        but some were not (:meth:`Costs.known`), else the sum over the priced ones."""
        return Costs.known(round(amount, 9), requests=self.requests, unpriced=self.unpriced)

    def shown(self, amount: float) -> str:
        """``amount`` of this row for people: ``$x``, ``≥$x`` when some requests are unpriced,
        ``$?`` when none was priced (:meth:`Costs.shown`)."""
        return Costs.shown(amount, requests=self.requests, unpriced=self.unpriced)

    def to_json(self, *, tier: bool = False) -> dict[str, Any]:
        """The row's JSON; with ``tier`` (rows by request), its ``tier`` too. Amounts are None when
        no request of the row was priced; ``cost_complete`` is False when any was not (they are
        then sums over the priced ones: lower bounds)."""
        return {"key": self.key, "requests": self.requests, "tokens": self.tokens.to_json(),
                "cost_usd": None if self.known(0.0) is None else self.cost.to_json(),
                "no_cache_cost_usd": self.known(self.no_cache_cost),
                "off_peak_cost_usd": self.known(self.off_peak_cost), "lost_tokens": self.lost_tokens,
                "lost_cost_usd": self.known(self.lost_cost), "break_cost_usd": self.known(self.break_cost),
                "unpriced_requests": self.unpriced, "cost_complete": not self.unpriced,
                **({"tier": self.tier} if tier else {})}


@dataclass(frozen=True, slots=True)
class UsageTable:
    """``dsh-audit usage``: one row per group, the total, and what could not be priced."""

    by: str
    rows: tuple[UsageRow, ...]
    total: UsageRow
    sessions: int
    unpriced: dict[str, int]
    prices: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        return {"by": self.by, "sessions": self.sessions,
                "rows": [r.to_json(tier=self.by == "request") for r in self.rows],
                "total": self.total.to_json(), "unpriced": self.unpriced, "prices": self.prices}


def _day(entry: LedgerEntry) -> str:
    moment = None if entry.sent is None else utc_moment(entry.sent)
    return "unknown" if moment is None else moment.date().isoformat()


def _keys(by: str, names: dict[int, str]) -> Callable[[SessionLedger, LedgerEntry], str]:
    """The row key of an entry of a ledger; ``names``: ``id(ledger)`` -> how its session is named."""
    keys: dict[str, Callable[[SessionLedger, LedgerEntry], str]] = {
        "session": lambda s, e: names[id(s)],
        "turn": lambda s, e: f"{names[id(s)]} turn {'-' if e.turn is None else e.turn}",
        "day": lambda s, e: _day(e),
        "model": lambda s, e: e.model or "unknown",
        "window": lambda s, e: e.window,
        "request": lambda s, e: f"{names[id(s)]} #{e.index}",
    }
    if by not in keys:
        raise UsageError(f"cannot group usage by {by!r}", hint="use one of " + ", ".join(USAGE_GROUPS))
    return keys[by]


def _session_names(ledgers: Iterable[SessionLedger]) -> dict[int, str]:
    """``id(ledger)`` -> the name of its session in a row key: the session id when no other file
    of ``ledgers`` has it, else the id and the file (``ID (PATH)``): two files of one session whose
    lines differ are listed apart, as ``dsh-audit sessions`` lists them."""
    given = list(ledgers)
    files: dict[str, set[str]] = {}
    for ledger in given:
        files.setdefault(ledger.session_id, set()).add(ledger.path)
    return {id(ledger): ledger.session_id if len(files[ledger.session_id]) == 1
            else f"{ledger.session_id} ({ledger.path})" for ledger in given}


def usage_table(ledgers: Iterable[SessionLedger], *, by: str = "session", since: float | None = None,
                until: float | None = None) -> UsageTable:
    """Group the requests of ``ledgers`` by ``by`` (one of :data:`USAGE_GROUPS`), keeping those
    sent in ``[since, until)`` (epoch seconds; a request without a time is dropped by a filter).

    Rows by day, model and window are sorted by key; by session, turn and request they keep the
    order of the logs. A row by request has its request's long-context ``tier``.

    Example:
        >>> usage_table([], by="day").total.requests
        0
    """
    given = list(ledgers)
    key = _keys(by, _session_names(given))
    rows: dict[str, UsageRow] = {}
    total = UsageRow("total")
    unpriced: dict[str, int] = {}
    sessions = 0
    prices: dict[str, Any] = {}
    windowed = since is not None or until is not None
    for ledger in given:
        # a session counts when the window keeps one of its requests (or, with no window, always)
        sessions += not windowed or any(
            e.sent is not None and (since is None or e.sent >= since) and (until is None or e.sent < until)
            for e in ledger.entries)
        prices = prices or ledger.prices
        for entry in ledger.entries:
            if (since is not None or until is not None) and entry.sent is None:
                continue
            if (since is not None and entry.sent is not None and entry.sent < since) or (
                    until is not None and entry.sent is not None and entry.sent >= until):
                continue
            name = key(ledger, entry)
            rows[name] = rows.get(name, UsageRow(name, tier=entry.tier if by == "request" else None)).add(entry)
            total = total.add(entry)
            if entry.unpriced:
                reason = entry.unpriced
                unpriced[reason] = unpriced.get(reason, 0) + 1
    ordered = sorted(rows.values(), key=lambda r: r.key) if by in ("day", "model", "window") else list(rows.values())
    return UsageTable(by, tuple(ordered), total, sessions, group_unpriced(unpriced), prices)


def parse_instant(text: str, *, end: bool = False) -> float:
    """Epoch seconds of ``text``: ``YYYY-MM-DD`` (UTC midnight; with ``end``, the next midnight, so
    ``--until 2026-12-01`` includes that day) or an ISO date-time (UTC unless it has an offset).

    Example:
        >>> parse_instant("2026-12-01"), parse_instant("2026-12-01", end=True) - parse_instant("2026-12-01")
        (1796083200.0, 86400.0)
    """
    try:
        if len(text) == 10:
            day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=timezone.utc)
            return (day + timedelta(days=1) if end else day).timestamp()
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"{text!r} is not a date or date-time",
                         hint="give YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS][+HH:MM] (UTC when no offset)") from None
    return (stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)).timestamp()
