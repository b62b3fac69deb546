"""Usage and cost of many sessions grouped by session, turn, day, model, window or request.

The rows are sums of :class:`~dsh_audit.cache.LedgerEntry` values, so a ``usage`` total is the
sum of the per-session ledgers whatever the grouping. Days are UTC dates of the requests' send
times; ``--since``/``--until`` filter requests on those times (the log's own clock).
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ..errors import UsageError
from ._ledger import LedgerEntry, LedgerTotals, SessionLedger
from ._logged_usage import USAGE_BUCKETS
from ._money import Tokens
from ._sums import Costs
from ._price_window import utc_moment
from ._summary import iso_utc

__all__ = ["USAGE_GROUPS", "UsageRow", "UsageTable", "parse_instant", "sent_in_window", "usage_table", "usage_tables"]

#: The ``--by`` choices of ``dsh-audit usage``.
USAGE_GROUPS = ("session", "turn", "day", "model", "window", "request")
# The orders of :func:`usage_table`'s rows (``usage --sort``).
_SORTS = ("time", "cost")
# The groups whose rows are a session's (their key starts with its id): ordered by session.
_BY_SESSION = ("session", "turn", "request")
# The words :func:`parse_instant` reads as a UTC day, by how many days before today.
_DAYS = {"today": 0, "yesterday": 1}
# The only spellings :func:`parse_instant` reads (fullmatch, ASCII digits): a date, and a date-time
# to the minute, second or fraction of one, with Z or an offset or neither. Other ISO 8601 spellings
# (20261101, 2026-W45, 2026-305) would be read as date-times, not days: refused, as digit strings are.
_DATE = re.compile(r"\d{4}-\d\d-\d\d", re.ASCII)
_DATE_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d{1,9})?)?(?:Z|[+-]\d\d:\d\d)?", re.ASCII)
#: The end of the year 9999 in seconds since the epoch, past ``datetime``'s range; the float below
#: it is where a time of its last microseconds is read (the nearest float would round it out of 9999).
_END_OF_9999 = 253402300800.0
_INSTANT_HINT = ("give YYYY-MM-DD, today, yesterday or YYYY-MM-DDTHH:MM[:SS[.fff]] with Z or +HH:MM or neither "
                 "(UTC when none)")


@dataclass(frozen=True, slots=True)
class UsageRow:
    """Sums over the requests of one group (or all of them: :attr:`UsageTable.total`): the
    :class:`~dsh_audit.cache.LedgerTotals` of its requests, so a row's amounts follow the same rule
    as ``cache`` and ``stats`` (:meth:`known`, :meth:`shown`).

    ``tier``: in a row of one request (``by="request"``), the ``prompt_tokens_above`` threshold of
    the long-context tier whose rates priced it (:attr:`LedgerEntry.tier`); None for the base
    rates and in every other row. ``entry``: in such a row, the request's ledger entry (its send
    time, model, window, the model it is billed as, where its rate was read, its cache retention
    and write rate: :meth:`request_details`); None in every other row. ``joins``: in a row of a
    session, a turn or a request, the fields that name it as other commands' JSON does
    (``session_id``, ``path``, ``turn``; a request's ``request``, ``step``, ``attempt``): its
    JSON has them after ``key``, to join with ``requests``, ``cache`` or ``breaks --json``.
    ``unlogged``: by token bucket, how many of its requests logged usage without a valid count of
    it (:attr:`tokens_unknown`), and under ``requests`` how many lacked one or more, each once
    (:attr:`usage_partial`). ``models``: in a row by model (keyed by the model the price table bills),
    the models its requests logged (a dated snapshot and its alias in one row); None in any other.
    """

    key: str
    totals: LedgerTotals = field(default_factory=LedgerTotals, compare=False)
    tier: int | None = None
    entry: LedgerEntry | None = field(default=None, compare=False)
    joins: tuple[tuple[str, Any], ...] = field(default=(), compare=False)
    unlogged: Counter[str] = field(default_factory=Counter, compare=False)
    models: set[str] | None = field(default=None, compare=False)
    #: the reusable cache reads the lost tokens are measured from (``tokens``) over the requests that
    #: have them (``requests``: those whose cache reads were logged, :attr:`LedgerEntry.reusable`)
    reusable: Counter[str] = field(default_factory=Counter, compare=False)

    def add(self, entry: LedgerEntry) -> None:
        """Add one request to the row's sums, and count the token buckets its usage holds no valid
        count of (:attr:`LedgerEntry.unlogged`: a DeepSeek usage without ``cacheReadTokens`` has
        neither its cache reads nor its misses), and the request once when it lacks any
        (:attr:`usage_partial`)."""
        self.totals.add(entry)
        if entry.reusable is not None:
            self.reusable.update(tokens=entry.reusable, requests=1)
        if self.models is not None:
            self.models.add(entry.model or "unknown")
        lacking = [bucket for name, bucket in USAGE_BUCKETS if name in entry.unlogged]
        if lacking and entry.tokens is not None:
            self.unlogged.update([*lacking, "requests"])

    def merge(self, other: UsageRow) -> None:
        """Add every request of ``other`` (a part of this row: :func:`usage_tables` sums each request
        once, in the part that holds it), as :meth:`add` would have added them one by one."""
        self.totals.merge(other.totals)
        self.reusable.update(other.reusable)
        if self.models is not None and other.models is not None:
            self.models.update(other.models)
        self.unlogged.update(other.unlogged)

    @property
    def requests(self) -> int:
        return self.totals.requests

    @property
    def tokens(self) -> Tokens:
        return self.totals.tokens

    @property
    def cost(self) -> Costs:
        return self.totals.cost

    @property
    def lost_tokens(self) -> int:
        return self.totals.lost_tokens

    @property
    def lost_unknown(self) -> int:
        """The requests of the row that lost an unknown amount (breaks whose cache reads were not
        logged): :attr:`lost_tokens` sums the others', and the lost and break costs owed are unknown."""
        return self.totals.lost_unknown

    @property
    def reusable_cache_read(self) -> int | None:
        """The reusable cache reads the row's lost tokens are measured from (``--json``'s
        ``reusable_cache_read``), by ``stats``' rule: summed over the requests that have them, None
        (unknown, never 0) when none of the row's requests logged its cache reads; 0 for a row of no
        request (a total of an empty window).

        Example:
            >>> usage_table([]).total.reusable_cache_read
            0
        """
        return self.reusable["tokens"] if self.reusable["requests"] or not self.requests else None

    @property
    def unpriced(self) -> int:
        """The requests of the row not priced."""
        return self.totals.unpriced_requests

    @property
    def usage_unknown(self) -> int:
        """The requests of the row with no usage logged: :attr:`tokens` sums the others'."""
        return self.totals.usage_unknown

    def known(self, amount: str) -> float | None:
        """``amount`` of this row (``cost``, ``no_cache``, ``off_peak``, ``lost``, ``break``, or what a
        token bucket cost: ``cache_miss``, ``cache_read``, ``cache_write``, ``output``) as JSON gives
        it: None when no request that owes it was priced, else the sum over the priced ones
        (:meth:`LedgerTotals.known`)."""
        value = self.totals.known(amount)
        return None if value is None else round(value, 9)

    def shown(self, amount: str, *, bound: bool = False) -> str:
        """``amount`` of this row for people: ``$x``, ``≥$x`` when some requests are unpriced,
        ``$?`` when it is unknown (:meth:`LedgerTotals.shown`; ``amount`` as :meth:`known`'s); with
        ``bound`` (the total of a run some of whose logs could not be read: :meth:`to_json`'s
        ``failed``) a known amount is a lower bound, ``≥$x``, whatever was priced.

        Example:
            >>> total = usage_table([]).total
            >>> total.shown("cost"), total.shown("cost", bound=True), total.shown("lost", bound=True)
            ('$0.0000', '≥$0.0000', '≥$0.0000')
        """
        return self.totals.shown(amount, failed=bound)

    @property
    def usage_from_capture(self) -> int:
        """The requests of the row whose log holds no usage, priced from the capture's (``--capture``)."""
        return self.totals.usage_from_capture

    @property
    def usage_differs(self) -> int:
        """The requests of the row whose logged usage the capture's contradicts (the log's is kept)."""
        return self.totals.usage_differs

    @property
    def tokens_unknown(self) -> dict[str, int]:
        """By token bucket (``cache_miss``, ``cache_read``, ``cache_write``, ``output``), how many of
        the row's requests logged usage without a valid count of it: the bucket's sum in
        :attr:`tokens` is over the others, a lower bound (unknown when none of them logged it), never
        an exact figure made of a guessed 0; only the buckets some request lacks, in that order.

        Example:
            >>> usage_table([]).total.tokens_unknown
            {}
        """
        return {bucket: self.unlogged[bucket] for _, bucket in USAGE_BUCKETS if self.unlogged[bucket]}

    @property
    def usage_partial(self) -> int:
        """The requests of the row that logged usage without a valid count of some token bucket,
        each once however many it lacks (:attr:`tokens_unknown` counts them by bucket)."""
        return self.unlogged["requests"]

    @property
    def tokens_known(self) -> bool:
        """Whether the row's tokens are known: some request of it logged its usage, or it has none
        (a total of no request, an empty window: 0 tokens, never unknown)."""
        return not self.requests or self.requests > self.usage_unknown

    @property
    def logged_models(self) -> tuple[str, ...]:
        """In a row by model, the models its requests logged, sorted (``usage --json``'s
        ``logged_models``: the row's key is the model they are billed as); empty in any other row."""
        return () if self.models is None else tuple(sorted(self.models))

    def request_details(self) -> dict[str, Any]:
        """A row of one request: when it was sent (ISO 8601 UTC), its provider and model, the
        window it was priced in (``peak``, ``off-peak``, ``standard``: no window), the price-table
        model it is billed as, where its rate was read and when, the cache retention its body
        asked for (``1h``, ``24h``, ``none``; None: the provider's default) and the rate its
        cache writes were billed at (``cache_write_1h``, ...; None: the default 5-minute rate or
        no retention asked), the usage fields it logged no valid count of, and where its tokens came
        from (``usage_source``: ``log``, ``capture``: the log holds none and the captured response
        to its send does, ``--capture``; None: neither); empty for any other row."""
        e = self.entry
        if e is None:
            return {}
        return {"sent_at": iso_utc(e.sent), "provider": e.provider, "model": e.model, "window": e.window,
                "billed_as": e.billed_as, "rate_source": e.rate_source, "rate_retrieved": e.rate_retrieved,
                "rate_effective": e.rate_effective, "cache_retention": e.cache_retention,
                "cache_write_rate": e.cache_write_rate, "usage_unlogged": list(e.unlogged),
                "usage_source": e.usage_source}

    def to_json(self, *, tier: bool = False, failed: int = 0, losses: bool = True) -> dict[str, Any]:
        """The row's JSON; with ``tier`` (rows by request), its ``tier`` too, and a row of one
        request has its :meth:`request_details`. Without ``losses`` (no cache accounting ran:
        ``usage --no-accounting``) what the cache lost was not measured: ``lost_tokens``,
        ``lost_cost_usd``, ``break_cost_usd`` and ``lost_unknown_requests`` are None, never 0. Amounts are None when
        they are unknown (no request that owes one was priced); ``cost_complete`` is False when any
        request was not priced (they are then sums over the priced ones: lower bounds), or when
        ``failed`` logs could not be read (a total they are left out of: its amounts are lower
        bounds too). ``tokens`` sums the requests with usage logged, None when none of the row's
        did (``usage_unknown_requests`` counts those that did not), 0 for a total of no request
        (:attr:`tokens_known`); ``tokens_unknown_requests`` counts, by bucket, the requests whose
        logged usage has no count of it (:attr:`tokens_unknown`: that bucket, and ``total``, then sum
        the others', lower bounds; ``{}`` when every request that logged usage logged every bucket);
        ``lost_unknown_requests`` counts the breaks whose cache reads were
        not logged, which lost an unknown amount (as ``cache --json`` counts them): ``lost_tokens``
        sums the others'.

        Example:
            >>> total = usage_table([]).total.to_json(failed=1)
            >>> total["tokens"]["total"], total["cost_complete"]
            (0, False)
            >>> usage_table([]).total.to_json(losses=False)["lost_tokens"] is None
            True
        """
        lost = {"reusable_cache_read": self.reusable_cache_read, "lost_tokens": self.lost_tokens, "lost_cost_usd": self.known("lost"),
                "break_cost_usd": self.known("break"), "lost_unknown_requests": self.lost_unknown}
        models = {"logged_models": list(self.logged_models)} if self.models is not None else {}
        return {"key": self.key, **dict(self.joins), **models, "requests": self.requests,
                "tokens": self.tokens.to_json() if self.tokens_known else None,
                "usage_unknown_requests": self.usage_unknown, "tokens_unknown_requests": self.tokens_unknown,
                "cost_usd": None if self.known("cost") is None else self.cost.to_json(),
                "no_cache_cost_usd": self.known("no_cache"), "off_peak_cost_usd": self.known("off_peak"),
                **(lost if losses else dict.fromkeys(lost)), "unpriced_requests": self.unpriced,
                "cost_complete": not self.unpriced and not failed, **({"tier": self.tier} if tier else {}),
                **self.request_details()}


@dataclass(frozen=True, slots=True)
class UsageTable:
    """``dsh-audit usage``: one row per group, the total, and what could not be priced; ``prices``
    the price table's JSON (:meth:`~dsh_audit.cache.PriceBook.to_json`); ``sort`` the rows' order;
    ``losses``: whether what the cache lost was measured (False: the ledgers were priced with no
    cache accounting, ``usage --no-accounting``: no lost tokens nor lost or break cost is known)."""

    by: str
    rows: tuple[UsageRow, ...]
    total: UsageRow
    sessions: int
    unpriced: dict[str, int]
    prices: dict[str, Any]
    sort: str = "time"
    losses: bool = True

    def to_json(self, *, failed: int = 0) -> dict[str, Any]:
        """``usage --json``: its row of totals is ``totals``, as every command's (``stats --json``;
        before, ``total``); with ``logs_failed``, the ``failed`` logs that could not be read, left
        out of every sum (the total's ``cost_complete`` is then false, its amounts lower bounds:
        :meth:`UsageRow.to_json`); ``sort``: the rows' order (:func:`usage_table`); without
        :attr:`losses`, every row's lost amounts null (:meth:`UsageRow.to_json`)."""
        return {"by": self.by, "sort": self.sort, "sessions": self.sessions, "logs_failed": failed,
                "rows": [r.to_json(tier=self.by == "request", losses=self.losses) for r in self.rows],
                "totals": self.total.to_json(failed=failed, losses=self.losses), "unpriced": self.unpriced,
                "prices": self.prices}


def _day(entry: LedgerEntry) -> str:
    moment = None if entry.sent is None else utc_moment(entry.sent)
    return "unknown" if moment is None else moment.date().isoformat()


def _keys(by: str, names: dict[int, str]) -> Callable[[SessionLedger, LedgerEntry], str]:
    """The row key of an entry of a ledger; ``names``: ``id(ledger)`` -> how its session is named."""
    keys: dict[str, Callable[[SessionLedger, LedgerEntry], str]] = {
        "session": lambda s, e: names[id(s)],
        "turn": lambda s, e: f"{names[id(s)]} turn {'-' if e.turn is None else e.turn}",
        "day": lambda s, e: _day(e),
        # the model the price table bills (an alias, a dated snapshot: one row); unpriced, the logged one
        "model": lambda s, e: e.billed_as or e.model or "unknown",
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


def sent_in_window(entry: LedgerEntry, since: float | None = None, until: float | None = None) -> bool:
    """Whether ``entry`` was sent in the window ``[since, until)`` (epoch seconds): always with no
    window, never with one when its send time is unknown; what :func:`usage_table` sums.

    Example:
        >>> entry = LedgerEntry(0, "loop", 1, 1, 0, 100.0, "deepseek", "deepseek-v4-flash", "off-peak", None, None)
        >>> sent_in_window(entry), sent_in_window(entry, 100.0), sent_in_window(entry, until=100.0)
        (True, True, False)
        >>> from dataclasses import replace
        >>> sent_in_window(replace(entry, sent=None)), sent_in_window(replace(entry, sent=None), 0.0)
        (True, False)
    """
    if since is None and until is None:
        return True
    return entry.sent is not None and (since is None or entry.sent >= since) and (until is None or entry.sent < until)


def usage_table(ledgers: Iterable[SessionLedger], *, by: str = "session", since: float | None = None,
                until: float | None = None, prices: dict[str, Any] | None = None, sort: str = "time",
                activity: Mapping[str, float | None] | None = None, losses: bool = True) -> UsageTable:
    """Group the requests of ``ledgers`` by ``by`` (one of :data:`USAGE_GROUPS`), keeping those
    sent in ``[since, until)`` (epoch seconds; a request without a time is dropped by a filter:
    :func:`sent_in_window`). ``prices``: the JSON of the price table the ledgers were priced with
    (:meth:`~dsh_audit.cache.PriceBook.to_json`), the table's ``prices`` when no ledger says (none
    read: an empty window); default: the first ledger's.

    ``sort`` ``time`` (the default): rows by session, turn and request put the sessions newest
    first by their log's last activity (``activity``: a ledger's path -> the latest of its log's
    own timestamps; default, or for a path it lacks, the latest send time of its requests), as
    ``dsh-audit sessions`` lists them, equal ones (and those with no time, last) by path, a
    session's turns and requests in their order; rows by day, model and window by key (days
    oldest first). ``cost``: the costliest row first (a lower bound by its amount, an unknown
    cost last), equal ones in the ``time`` order. The total is never a row. A row by request has
    its request's long-context ``tier``. ``losses``: whether the ledgers' cache losses were
    measured (False: priced with no cache accounting; :attr:`UsageTable.losses`).

    Raises:
        UsageError: ``by`` or ``sort`` is not one of its choices.

    Example:
        >>> usage_table([], by="day").total.requests
        0
    """
    return usage_tables(ledgers, by=(by,), since=since, until=until, prices=prices, sort=sort, activity=activity,
                        losses=losses)[0]


def usage_tables(ledgers: Iterable[SessionLedger], *, by: Sequence[str], since: float | None = None,
                 until: float | None = None, prices: dict[str, Any] | None = None, sort: str = "time",
                 activity: Mapping[str, float | None] | None = None, losses: bool = True) -> tuple[UsageTable, ...]:
    """:func:`usage_table` of ``ledgers`` for each grouping of ``by``, in one pass over their
    entries: the tables share one total (a request is in it once, whatever the grouping).

    Raises:
        UsageError: a grouping of ``by``, or ``sort``, is not one of its choices.

    Example:
        >>> model, day = usage_tables([], by=("model", "day"))
        >>> model.total is day.total, day.by
        (True, 'day')
    """
    if sort not in _SORTS:
        raise UsageError(f"cannot sort usage by {sort!r}", hint="use --sort " + " or --sort ".join(_SORTS))
    given = _newest_first(ledgers, activity or {}) if set(by) & set(_BY_SESSION) else list(ledgers)
    names = _session_names(given)
    groupings: list[tuple[str, Callable[[SessionLedger, LedgerEntry], str], dict[str, UsageRow]]] = [
        (name, _keys(name, names), {}) for name in by]  # (by, key, rows)
    total = UsageRow("total")  # the sum of the rows: every request a row holds
    # Each request is summed once, in its part (the rows of every grouping it falls in), whose sums
    # the rows and the total then take (:meth:`UsageRow.merge`): one grouping's rows are the parts.
    parts: dict[tuple[int, ...], tuple[tuple[UsageRow, ...], UsageRow]] = {}  # rows' ids -> (rows, part)
    sessions = 0
    found: dict[str, Any] = {}
    windowed = since is not None or until is not None
    for ledger in given:
        # a session counts when the window keeps one of its requests (or, with no window, always)
        sessions += not windowed or any(sent_in_window(e, since, until) for e in ledger.entries)
        found = found or ledger.prices
        for entry in ledger.entries:
            if not sent_in_window(entry, since, until):
                continue
            rows_of = tuple(_row(rows, key(ledger, entry), group, entry, ledger) for group, key, rows in groupings)
            _part(parts, rows_of).add(entry)
    for rows_of, part in parts.values():
        total.merge(part)
        if len(rows_of) > 1:
            for row in rows_of:
                row.merge(part)
    return tuple(_table(group, rows, total, sessions, found or prices or {}, sort, losses)
                 for group, _, rows in groupings)


def _part(parts: dict[tuple[int, ...], tuple[tuple[UsageRow, ...], UsageRow]],
          rows_of: tuple[UsageRow, ...]) -> UsageRow:
    """The part of the requests that fall in the rows ``rows_of`` (one of each grouping): the row
    itself when there is one grouping, else a part made for them (the rows take its sums)."""
    key = tuple(map(id, rows_of))  # the rows live as long as the table: their ids name them
    found = parts.get(key)
    if found is None:
        found = parts[key] = (rows_of, rows_of[0] if len(rows_of) == 1 else UsageRow("", models=set()))
    return found[1]


def _row(rows: dict[str, UsageRow], name: str, by: str, entry: LedgerEntry, ledger: SessionLedger) -> UsageRow:
    """The row ``name`` of ``rows``, made for ``entry`` of ``ledger`` when it is the first of it."""
    row = rows.get(name)
    if row is None:
        row = rows[name] = UsageRow(name, tier=entry.tier if by == "request" else None,
                                    entry=entry if by == "request" else None, joins=_joins(by, entry, ledger),
                                    models=set() if by == "model" else None)
    return row


def _joins(by: str, entry: LedgerEntry, ledger: SessionLedger) -> tuple[tuple[str, Any], ...]:
    """The fields naming a row by ``by`` of ``entry`` as other commands' JSON does (``requests``,
    ``cache``, ``breaks``): none for a row by day, model or window."""
    if by not in _BY_SESSION:
        return ()
    joins: tuple[tuple[str, Any], ...] = (("session_id", ledger.session_id), ("path", ledger.path))
    if by == "turn":
        return (*joins, ("turn", entry.turn))
    if by == "request":
        return (*joins, ("request", entry.index), ("turn", entry.turn), ("step", entry.step),
                ("attempt", entry.attempt))
    return joins


def _table(by: str, rows: dict[str, UsageRow], total: UsageRow, sessions: int, prices: dict[str, Any],
           sort: str, losses: bool = True) -> UsageTable:
    """The table of ``rows`` by ``by``, in the order of ``sort``."""
    ordered = list(rows.values()) if by in _BY_SESSION else sorted(rows.values(), key=lambda r: r.key)
    if sort == "cost":  # stable: equal costs keep the time order
        ordered.sort(key=_costliest)
    return UsageTable(by, tuple(ordered), total, sessions, total.totals.unpriced, prices, sort, losses)


def _newest_first(ledgers: Iterable[SessionLedger], activity: Mapping[str, float | None]) -> list[SessionLedger]:
    """``ledgers`` newest first by their log's last activity (``activity``, else their requests'
    latest send time), equal ones and those with no time (last) by path: ``sessions``' order."""

    def last(ledger: SessionLedger) -> float:
        moment = activity.get(ledger.path)
        if moment is None:
            moment = max((e.sent for e in ledger.entries if e.sent is not None), default=None)
        return float("inf") if moment is None else -moment

    return sorted(sorted(ledgers, key=lambda ledger: ledger.path), key=last)


def _costliest(row: UsageRow) -> tuple[bool, float]:
    """The order of ``--sort cost``: what the row cost, most first (``≥$x`` by ``x``), unknown last."""
    cost = row.known("cost")
    return cost is None, -(cost or 0.0)


def parse_instant(text: str, *, end: bool = False, now: float | None = None) -> float:
    """Epoch seconds of ``text``: ``YYYY-MM-DD`` (UTC midnight; with ``end``, the next midnight, so
    ``--until 2026-12-01`` includes that day), ``today`` or ``yesterday`` (that UTC day, as a date:
    the day of ``now``, default the clock, or the one before) or a date-time
    ``YYYY-MM-DDTHH:MM[:SS[.fff]]`` (UTC unless it ends in ``Z`` or an offset ``+HH:MM``). Nothing
    else: another ISO spelling of a day (``20261101``, ``2026-W45``) would be a midnight, not the day.

    Raises:
        UsageError: ``text`` is none of these, or no such day or time (``2026-02-30``, ``24:00``).

    Example:
        >>> parse_instant("2026-12-01"), parse_instant("2026-12-01", end=True) - parse_instant("2026-12-01")
        (1796083200.0, 86400.0)
        >>> parse_instant("yesterday", now=1796083200.0 + 3600), parse_instant("today", end=True, now=1796083200.0)
        (1795996800.0, 1796169600.0)
        >>> parse_instant("9999-12-31T23:59:59.999999Z") < _END_OF_9999  # not rounded out of the year 9999
        True
    """
    text = text.strip()
    back = _DAYS.get(text.lower())
    if back is not None:
        day = datetime.fromtimestamp(time.time() if now is None else now, timezone.utc).date() - timedelta(days=back)
        text = day.isoformat()
    try:
        if _DATE.fullmatch(text):
            day = datetime.strptime(text, "%Y-%m-%d").replace(tzinfo=timezone.utc)
            return day.timestamp() + (86400.0 if end else 0.0)  # the end of 9999-12-31 is past datetime's range
        if not _DATE_TIME.fullmatch(text):
            raise ValueError(text)
        stamp = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(f"{text[:40]!r}{'...' if len(text) > 40 else ''} is not a date or date-time",
                         hint=_INSTANT_HINT) from None
    stamp = stamp if stamp.tzinfo else stamp.replace(tzinfo=timezone.utc)
    moment = stamp.timestamp()
    if moment >= _END_OF_9999 and stamp <= datetime.max.replace(tzinfo=timezone.utc):
        return math.nextafter(_END_OF_9999, 0.0)  # its last microseconds: still 9999, not 10000-01-01
    return moment
