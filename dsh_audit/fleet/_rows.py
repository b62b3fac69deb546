"""The rows of the fleet index, as plain data: a :class:`SessionRecord` per log file with its
:class:`RequestRow`, :class:`CostRow` and :class:`BreakRow` rows (their fields are the columns of
the index's tables, :mod:`dsh_audit.fleet._db`). Nothing here reads a log: ``stats`` and the
schema need these alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .._frozen import fast_frozen_init

__all__ = ["BreakRow", "CostRow", "RequestRow", "SessionRecord"]


@fast_frozen_init  # one per request, made by the thousand when a log is indexed
@dataclass(frozen=True, slots=True)
class RequestRow:
    """One request of the index (``requests`` table); token columns are None when not logged.

    ``prompt_tokens`` is the logged prompt (input + cache read + cache write); ``actual_cache_read``,
    ``expected_cache_read``, ``reusable_cache_read`` (what the lost tokens are measured from: lost <=
    reusable - actual, schema 5), ``classification``, ``cause`` and ``lost_*`` come from the cache
    analysis (``actual_cache_read`` falls back to the logged cache reads without it; ``lost`` is
    the JSON object of tokens lost per cause). ``day`` is
    the UTC date of the event time the request was sent at.
    """

    path: str
    idx: int
    session_id: str
    kind: str
    turn: int | None
    step: int | None
    attempt: int
    model: str | None
    provider: str | None
    input_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    output_tokens: int | None
    message_count: int
    messages_sha256: str
    sent_at: float | None = None
    day: str | None = None
    prompt_tokens: int | None = None
    actual_cache_read: int | None = None
    expected_cache_read: int | None = None
    reusable_cache_read: int | None = None
    classification: str | None = None
    cause: str | None = None
    lost_tokens: int | None = None
    lost_cost: float | None = None
    lost: str | None = None


@dataclass(frozen=True, slots=True)
class BreakRow:
    """One prefix-cache break found by attribution (``breaks`` table); lists are JSON text."""

    path: str
    request: int
    session_id: str
    previous: int | None
    previous_session_id: str | None
    relation: str
    cause: str | None
    other_causes: str
    fields: str
    evidence_seqs: str
    detail: str
    classification: str | None = None
    lost_tokens: int | None = None
    lost_cost: float | None = None


@fast_frozen_init  # one per request, as RequestRow
@dataclass(frozen=True, slots=True)
class CostRow:
    """One request of the priced ledger (``costs`` table; :class:`dsh_audit.cache.LedgerEntry`).

    Token columns are None when the log holds no usage; cost columns (USD, whole nano-dollars) are
    None when the request is unpriced, and ``unpriced`` says why. ``billed_as`` is the price-table
    model, ``window`` peak / off-peak / standard, ``tier`` the ``prompt_tokens_above`` threshold of
    the long-context tier whose rates priced the whole request (None: base rates), ``route`` the
    wire API. ``lost_cost`` prices the cache-miss tokens the cache analysis says were lost
    (``lost_cost_by_cause``: JSON object per cause); ``is_break``: the request is a cache break, so
    that cost is the break's.
    ``rate_source``, ``rate_effective`` and ``rate_retrieved``: where the rate was read, the date it
    applies from, and when it was read.
    """

    path: str
    idx: int
    session_id: str
    kind: str
    turn: int | None
    sent_at: float | None
    day: str | None
    model: str | None
    provider: str | None
    route: str | None
    billed_as: str | None
    window: str
    tier: int | None
    cache_miss_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    output_tokens: int | None
    reasoning_tokens: int | None
    cost_cache_miss: float | None
    cost_cache_read: float | None
    cost_cache_write: float | None
    cost_output: float | None
    cost_total: float | None
    no_cache_cost: float | None
    off_peak_cost: float | None
    classification: str | None
    is_break: bool
    lost_tokens: int | None
    lost_cost: float | None
    lost_cost_by_cause: str
    unpriced: str | None
    rate_source: str | None
    rate_effective: str | None
    rate_retrieved: str | None


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """Everything the index keeps about one log file (``sessions`` table plus its rows).

    The rows are a tuple, or a :class:`~dsh_audit._spool.RowSpool` for a log turned into rows as
    it is replayed (a long log's rows are not held in memory); either compares equal to the tuple
    of the same rows."""

    path: str
    size: int
    mtime_ns: int
    options: str
    session_id: str | None = None
    parent_session: str | None = None
    format_version: int | None = None
    event_count: int | None = None
    request_count: int = 0
    error: str | None = None
    error_code: str | None = None
    notes: tuple[str, ...] = ()
    attribution: bool = False
    cache: bool = False
    token_method: str | None = None
    requests: Sequence[RequestRow] = field(default=(), repr=False)
    breaks: Sequence[BreakRow] = field(default=(), repr=False)
    costs: Sequence[CostRow] = field(default=(), repr=False)
