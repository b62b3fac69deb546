"""How ``dsh-audit usage``'s table fits a terminal: which columns a narrow one leaves out and in
which order (:func:`_droppable`), session ids shortened before a column that says something is
left out (:func:`_whole_ids_fit`), a request's details only where the amounts leave room
(:func:`_room_for_details`). The rows themselves: :mod:`dsh_audit.cli._usage`."""

from __future__ import annotations

from collections.abc import Sequence

from ..cache import Costs, SessionLedger, UsageRow
from ..report.terminal import (NO_VALUE, Amount, id_prefixes, listing_format, output_width, print_table, rows_fit,
                               table_cell)
from ._table_ids import id_caption, id_cell, id_names, widest
from ._table_rules import bucket_drop_order

__all__ = ["BUCKET_COSTS", "BY_SESSION", "REQUEST", "REQUEST_TABLE", "print_usage_table"]

# A row of one request (--by request) says when it was sent, what it was billed as and at which
# rate, after the amounts: every one in CSV, the first four in a table.
REQUEST = ("model", "window", "sent", "billed as", "rate source", "cache retention", "write rate")
REQUEST_TABLE = REQUEST[:4]
# The columns a narrow terminal may leave out (after a request's details, which --json and
# --format csv keep), in this order, but a column with no value in any row first and a what-if
# that says what "cost" says in every row next (:func:`_droppable`): the tokens, those
# that cost the least first (:data:`_TOKEN_COLUMNS`), then what the same requests would have cost
# all off-peak and with no cache, the README's headline figures, then "reusable" (what "lost tokens
# (cost)" is measured from: beside it while there is room), then the tokens that cost the most (an
# Anthropic session's cache writes, a DeepSeek one's misses: where the money went), and "requests"
# last: the count that tells an expensive session of many requests from one of a few large ones
# ("lost tokens (cost)", "cost" and "unpriced" while a request is unpriced are never left out). This
# tuple: the columns, and the tokens' order when they cost the same.
_DROPPABLE = ("unpriced", "output", "cache read", "cache write", "cache miss", "off-peak", "no cache", "reusable",
              "requests")
# Each token column and the bucket of :class:`Costs` that prices it (ties: in :data:`_DROPPABLE`'s order).
_TOKEN_COLUMNS = {"output": "output", "cache read": "cache_read", "cache write": "cache_write",
                  "cache miss": "cache_miss"}
_WHAT_IF = ("off-peak", "no cache")
_LOST = "lost tokens (cost)"
#: What each token bucket cost (``usage --json``'s ``cost_usd`` by bucket), after "cost": in CSV and
#: Markdown always, in a table only when it has the room (:func:`_bucket_costs_fit`): a narrow one
#: leaves them out first, before a request's details, a session id's tail or any other column.
BUCKET_COSTS = ("cache miss cost", "cache read cost", "cache write cost", "output cost")
# Groups whose key starts with a session id, which a narrow terminal shows shortened.
BY_SESSION = ("session", "turn", "request")
_SHORT_NOTE = id_caption("session ids")


def print_usage_table(columns: list[str], rows: list[tuple[object, ...]], *, by: str, caption: str,
                      ledgers: Sequence[SessionLedger], total: UsageRow, ids: Sequence[str | None]) -> None:
    """The table of ``usage --by by`` (any listing format), ``total``'s row last among ``rows``
    (``ids``: the session id each row's key starts with, None for the total's and for a row by
    day, model or window); on a terminal too narrow for it, each session id first as its shortest
    unique prefix (the caption says so), then as many of a request's details as there is room
    for, then columns left out in :func:`_droppable`'s order; an id is never cut in its middle (it
    would name no session): a column is left out for it first."""
    request = by == "request"
    table = listing_format() == "table"
    if table and not _bucket_costs_fit(columns, _bare_keys(rows, ledgers)):
        kept = [at for at, column in enumerate(columns) if column not in BUCKET_COSTS]
        columns, rows = [columns[at] for at in kept], [tuple(row[at] for at in kept) for row in rows]
    names: dict[str, str] | None = None
    if by in BY_SESSION and table and not _whole_ids_fit(columns, _bare_keys(rows, ledgers), total, request=request):
        names = id_names((ledger.session_id for ledger in ledgers), id_prefixes)
        shortened = [(_short_key(str(row[0]), found, names), *row[1:]) for row, found in zip(rows, ids)]
        if shortened != rows:
            rows, caption = shortened, f"{caption}; {_SHORT_NOTE}"
    if request and table:
        columns, rows = _room_for_details(columns, rows)
    # the room of the widest id as shown (a space in one is the id's, not its key's " turn N")
    shown = [id_cell(found, names) for found in ids if found is not None]
    least = {columns[0]: widest(shown)} if by in BY_SESSION and shown else None
    print_table(f"usage by {by}", columns, rows, droppable=_droppable(columns, rows, total, request=request),
                caption=caption, least=least, ids=columns[:1] if by in BY_SESSION else ())


def _bucket_costs_fit(columns: Sequence[str], rows: Sequence[tuple[object, ...]]) -> bool:
    """Whether the table has the room for what each bucket cost (:data:`BUCKET_COSTS`): the boxed
    table on one line a row with every header and cell whole (but a column with no value at all,
    which every table leaves out, and, when a bucket cost something, each other column that says
    nothing, :func:`_blank`, which a table leaves out before them: :func:`_droppable`), a request's
    details and whole session ids too, as
    :func:`_room_for_details` measures it; when not, they are the first left out, before any id is
    shortened or any other column left out, and as a request's details are, unsaid (the help says
    where they are: --format csv, --json)."""
    if not any(column in BUCKET_COSTS for column in columns):
        return True
    blank = set(_blank(columns, rows))
    said = any(column in BUCKET_COSTS and column not in blank for column in columns)
    widths = [max([len(column), *(len(table_cell(row[at])) for row in rows)]) for at, column in enumerate(columns)
              if not (said and column in blank and column not in BUCKET_COSTS)
              and not all(table_cell(row[at]) in NO_VALUE for row in rows)]
    return sum(widths) + 3 * len(widths) + 1 <= output_width()


def _carries(cell: object) -> bool:
    """Whether a cell says something: a count or an amount other than 0, unknown or none (``?``,
    ``$?``, empty), or any other text.

    Example:
        >>> [_carries(c) for c in (0, 3, Amount(0.0, "$0.0000"), Amount(None, "$?"), Amount(None, "?"), "", "7 ($0.1)")]
        [False, True, False, False, False, False, True]
    """
    if isinstance(cell, Amount):
        return cell.value is not None and cell.value != 0
    if isinstance(cell, (int, float)) and not isinstance(cell, bool):
        return cell != 0
    return table_cell(cell) not in NO_VALUE


def _blank(columns: Sequence[str], rows: Sequence[tuple[object, ...]]) -> list[str]:
    """The columns no cell of which says something (:func:`_carries`): every value 0, unknown or none;
    and "reusable" when "lost tokens (cost)" is such a column (no break lost a token: the base of no
    lost figure, which a narrow terminal leaves out with the columns that say nothing)."""
    blank = [column for at, column in enumerate(columns) if not any(_carries(row[at]) for row in rows if at < len(row))]
    return [*blank, "reusable"] if _LOST in blank and "reusable" in columns and "reusable" not in blank else blank


def _droppable(columns: Sequence[str], rows: Sequence[tuple[object, ...]], total: UsageRow, *,
               request: bool = False) -> tuple[str, ...]:
    """The columns a narrow terminal may leave out, in order: a request's details first
    (``request``), then those of :data:`_DROPPABLE` with no value in any row (:func:`_blank`: a
    DeepSeek fleet's cache writes, "unpriced" when every request was priced), then a what-if
    (:data:`_WHAT_IF`) that says what "cost" says in every row (one rate all day: off-peak is the
    cost), then the others in :data:`_DROPPABLE`'s order: no column that
    carries money is left out before one that says nothing, the tokens go before the money, those
    whose tokens cost the least over all the rows (``total``'s costs) first, but the costliest
    bucket only after the what-ifs and "reusable" (what the lost tokens are measured from, first
    among the columns that say nothing when nothing was lost), so that where the money went stays in
    sight (an Anthropic session's cache writes, a DeepSeek one's cache misses), and "requests" last (by request, with
    the what-ifs: 1 in every row). Never "unpriced" when a request is, since it says which amounts
    are lower bounds or unknown. What each bucket cost (:data:`BUCKET_COSTS`) goes before all of them
    (the cost and the token columns say the same in sum), but after every other column that says
    nothing, as :func:`_bucket_costs_fit` measures the room."""
    blank = set(_blank(columns, rows))
    cost = [table_cell(row[columns.index("cost")]) for row in rows]
    same = {c for c in _WHAT_IF if c in columns and all(
        table_cell(row[columns.index(c)]) == shown for row, shown in zip(rows, cost))}
    spent = {column: getattr(total.cost, bucket) for column, bucket in _TOKEN_COLUMNS.items()}
    # "reusable" after the what-ifs, before the costliest bucket: beside the lost tokens, where the money went kept
    order = ("unpriced", *bucket_drop_order(spent, (*_WHAT_IF, "reusable")), "requests")
    kept = [c for c in order if c in columns and (c != "unpriced" or not total.unpriced)]
    # by request, "requests" is 1 in every row but the total's: it goes with the what-ifs that repeat "cost"
    same |= {"requests"} if request else set()
    # "reusable" with nothing lost beside it first: the base of no lost figure says less than a 0 does
    ordered = sorted(kept, key=lambda c: -1 if c == "reusable" and c in blank else 0 if c in blank else 1 if c in same
                     else 2)
    buckets = [c for c in BUCKET_COSTS if c in columns]
    return (*(c for c in ordered if c in blank), *buckets, *(reversed(REQUEST_TABLE) if request else ()),
            *(c for c in ordered if c not in blank))


def _whole_ids_fit(columns: Sequence[str], rows: Sequence[tuple[object, ...]], total: UsageRow, *,
                   request: bool) -> bool:
    """Whether the table fits the terminal with whole session ids and every column that says
    something (a request's details aside, which take only the room left: :func:`_room_for_details`),
    every row on one line as :func:`print_table` lays it out (:func:`rows_fit`). When not, the ids
    are shortened before any such column is left out, as ``sessions`` does (the README: a narrow
    table shows an id as its shortest unique prefix); a column with no value in any row goes first
    all the same (:func:`_droppable`, and :func:`print_table`'s empty columns)."""
    amounts = len(columns) - (len(REQUEST_TABLE) if request else 0)
    columns, rows = columns[:amounts], [row[:amounts] for row in rows]
    unseen = [c for c in _blank(columns, rows)
              if c in _DROPPABLE or all(table_cell(row[columns.index(c)]) in NO_VALUE for row in rows)]
    unseen += [c for c in BUCKET_COSTS if c in columns and c not in unseen]  # they go first: no id is cut for them
    return rows_fit(columns, rows, droppable=_droppable(columns, rows, total), spare=unseen)


def _bare_keys(rows: Sequence[tuple[object, ...]], ledgers: Sequence[SessionLedger]) -> list[tuple[object, ...]]:
    """``rows`` with no copy's `` (PATH)`` in their keys (``ID (PATH)``, a session found in two
    files whose lines differ): a path wraps, cut in its middle, however short the ids are, so it
    is no reason to shorten them (:func:`_whole_ids_fit`)."""
    paths = [f" ({ledger.path})" for ledger in ledgers]
    bare = []
    for row in rows:
        key = str(row[0])
        for path in (p for p in paths if p in key):
            key = key.replace(path, "")
        bare.append((key, *row[1:]))
    return bare


def _room_for_details(columns: list[str], rows: list[tuple[object, ...]]
                      ) -> tuple[list[str], list[tuple[object, ...]]]:
    """The table's columns and rows with as many of a request's details (the last columns,
    :data:`REQUEST_TABLE`) as leave the boxed table on one line a row (every cell whole): the
    amounts are never squeezed for them, and a narrow terminal shows none (--json and --format
    csv have them all)."""
    widths = [0 if column in BUCKET_COSTS else max([len(column), *(len(table_cell(row[at])) for row in rows)])
              for at, column in enumerate(columns)]  # what each bucket cost is left out before any detail
    shown = len(columns) - sum(column in BUCKET_COSTS for column in columns)
    keep = len(columns)
    while keep > len(columns) - len(REQUEST_TABLE) and sum(widths[:keep]) + 3 * (shown - len(columns) + keep) + 1 \
            > output_width():
        keep -= 1
    return columns[:keep], [row[:keep] for row in rows]


def _short_key(key: str, session_id: str | None, names: dict[str, str]) -> str:
    """``key`` (``ID``, ``ID turn N``, ``ID #N``, ``ID (PATH)``) with its ``session_id`` (which it
    starts with: a space in it is its own) as ``names`` shows it (:func:`id_prefixes`)."""
    if not session_id or not key.startswith(session_id):
        return key
    return names.get(session_id, session_id) + key[len(session_id):]
