"""The tables ``dsh-audit stats`` prints (a terminal table, or ``--format csv``): the fleet
totals, the cost, the groups by model, day and cause, and the rankings of sessions and breaks,
each amount worded by the one rule of :meth:`Costs.shown`. ``--json`` and the command itself:
:mod:`dsh_audit.cli._fleet`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from ..cache import Costs
from ..fleet import FleetStats, connect_index, shown
from ..report.terminal import Amount, id_prefixes, listing_format, print_table, rows_fit, table_cell
from ._table_ids import id_caption, id_cell, id_names
from ._table_rules import bucket_drop_order, logged_column, model_keyed, whole_keyed

__all__ = ["print_stats"]

# "reusable": what "lost tokens" is measured from (lost <= reusable - cache read, a drop within the rule's
# tolerance not counted; issue 11), beside it.
# "reads known": the requests whose cache read and prompt size are known (logged, or the capture's for one
# whose log holds none: the index does not tell them apart), those "prompt" and "hit ratio" are over, as
# `cache` counts them.
_MEASURE_COLUMNS = ("requests", "reads known", "prompt", "cache read", "hit ratio", "expected", "reusable",
                    "lost tokens", "lost $")
# In CSV the expected ratio's column says what it is (a table's "expected" stands beside "hit ratio").
_CSV_MEASURE_COLUMNS = tuple("expected hit ratio" if c == "expected" else c for c in _MEASURE_COLUMNS)
_COST_COLUMNS = ("requests", "cache miss $", "cache read $", "cache write $", "output $", "total $", "no cache $",
                 "off-peak $", "breaks $", "unpriced")
# The cost columns of the token buckets, each with its key in a row's ``cost_usd``, in the order a
# narrow terminal leaves them out when they cost the same (:func:`_cost_droppable`: after a column
# with no value in any row, the one that cost the least first, the what-ifs before the costliest).
_BUCKET_COLUMNS = {"output $": "output", "cache read $": "cache_read", "cache write $": "cache_write",
                   "cache miss $": "cache_miss"}
_MEASURE_DROPPABLE = ("path", "reads known", "expected", "cache read")
# The session rankings leave out more, in this order, before a table too wide to be drawn in the run's
# style takes the other one (a run's tables share one style: docs/cli.md).
_RANK_DROPPABLE = (*_MEASURE_DROPPABLE, "prompt", "hit ratio", "requests", "lost tokens", "reusable")
# Then the amounts but the one the sessions are ranked by (--sort).
_RANKED_AMOUNT = {"lost": "lost $", "cost": "cost", "time": None}
# A group of requests whose model (or day) the log does not say: as `usage --by model|day` names it.
_UNKNOWN = "unknown"
_BOUND_NOTE = "≥$: a sum over the priced requests only; $?: no request priced"
# How the top sessions and the costliest breaks are ordered (tokens do not compare across
# providers): as :attr:`FleetStats.top_sessions` says.
_RANK_NOTE = "ranked by lost $, costliest first (≥$x by x); then lost $? by lost tokens"
# The sessions' ranking of each --sort: its table's title and caption.
_SESSION_RANKS = {
    "lost": ("sessions whose cache losses cost the most", _RANK_NOTE),
    "cost": ("costliest sessions", "ranked by cost, costliest first (≥$x by x); then $?"),
    "time": ("latest sessions", "ranked by their last request (UTC), newest first"),
}
_BREAK_COLUMNS = ("request", "model", "cause", "reusable", "lost tokens", "lost $")
_BREAK_DROPPABLE = ("path", "model")


def _rates(prices: Sequence[tuple[str, ...] | None]) -> tuple[str, str]:
    """Where the rates of the ledgers ``stats`` sums came from (:attr:`FleetStats.prices`), worded
    as ``cache`` words it: for the "cost lost" measure, and for the cost table's title.

    Example:
        >>> _rates([("packaged",)])
        ('list prices', 'list prices, check your contract')
        >>> _rates([("packaged", "contract.json")])
        ('rates from contract.json', 'rates from contract.json over the packaged list prices')
        >>> _rates([("packaged",), ("packaged", "a.json")])[1]
        'rates of 2 price tables (list prices; a.json), index again with one'
        >>> _rates([None])[1]
        'rates of a price table this index does not name (index again to record it)'
    """
    given = [None if files is None else [name for name in files if name != "packaged"] for files in prices]
    if not given or given == [[]]:
        return "list prices", "list prices, check your contract"
    if len(given) == 1 and given[0] is not None:
        files = ", ".join(given[0])
        return f"rates from {files}", f"rates from {files} over the packaged list prices"
    if len(given) == 1:
        return "rates not recorded", "rates of a price table this index does not name (index again to record it)"
    names = "; ".join("not recorded" if files is None else ", ".join(files) or "list prices" for files in given)
    return f"rates of {len(given)} price tables", f"rates of {len(given)} price tables ({names}), index again with one"


def _usd(value: float | None) -> Amount:
    """An amount with no unpriced request to count (a tier's cost): ``$?`` when unknown."""
    return Amount(value, "$?" if value is None else Costs.text(value))


def _priced(row: dict[str, Any], value: float | None, owed: str | None = None) -> Amount:
    """An amount of ledger sums ``row`` by the one rule (:meth:`Costs.shown`): ``≥$x`` when a
    request that owes it is unpriced, ``$?`` when none that owes it was priced; ``owed``
    (``lost``, ``break``) names an amount only the requests that lost tokens owe (``row``'s
    ``{owed}_requests``, ``{owed}_unpriced``), else every request owes it; ``$?`` for a session
    indexed without a ledger."""
    if row.get("unpriced_requests") is None:
        return _usd(value)
    owing = {} if owed is None else {"owing": row[f"{owed}_requests"], "owing_unpriced": row[f"{owed}_unpriced"]}
    return Amount(value, Costs.shown(value, requests=row["requests"], unpriced=row["unpriced_requests"], **owing))


def _costs(row: dict[str, Any]) -> tuple[Any, ...]:
    cost = row["cost_usd"] or {}
    return (row["requests"], *(_priced(row, cost.get(k)) for k in ("cache_miss", "cache_read", "cache_write", "output",
                                                                   "total")),
            _priced(row, row["no_cache_cost_usd"]), _priced(row, row["off_peak_cost_usd"]),
            _priced(row, row["break_cost_usd"], "break"),
            Amount(row["unpriced_requests"], str(row["unpriced_requests"] or "")))


def _fits_whole(models: Sequence[tuple[str, Sequence[str]]], columns: Sequence[str], rows: Sequence[tuple[Any, ...]],
                droppable: Sequence[str]) -> bool:
    """Whether a table by model fits ``rows`` (their key cell left out) keyed with the logged names
    too (:func:`whole_keyed`), leaving out only ``droppable`` columns."""
    return rows_fit(columns, whole_keyed(models, rows), droppable=droppable, spare=droppable)


def _keyed(models: Sequence[tuple[str, Sequence[str]]], rows: Sequence[tuple[Any, ...]],
           whole: bool) -> tuple[list[tuple[Any, ...]], str | None]:
    """``rows`` (their key cell left out) with the key cells of :func:`model_keyed`, the logged names
    in them when ``whole`` (every table by model of the run fits them: :func:`_fits_whole`, so one
    model is named alike in each); and the note."""
    return model_keyed(models, rows, lambda _: whole)


def _models(rows: Sequence[dict[str, Any]]) -> list[tuple[str, Sequence[str]]]:
    """Each row's billed model (``unknown`` for none) and the models its requests logged."""
    return [(r["model"] or _UNKNOWN, r.get("logged_models") or ()) for r in rows]


def _by_model(columns: Sequence[str], models: Sequence[tuple[str, Sequence[str]]], rows: Sequence[tuple[Any, ...]],
              whole: bool, *, csv: bool) -> tuple[tuple[str, ...], list[tuple[Any, ...]], str | None]:
    """A table by model's columns (``columns`` after its key), its rows (``rows``, their key cell left
    out) keyed as :func:`_keyed` keys them, and the caption's note; in CSV (``csv``) the key the billed
    model alone and the names its requests logged in a ``logged models`` column of their own
    (:func:`logged_column`, as ``--json``'s ``model`` and ``logged_models`` and ``usage --by model
    --format csv`` give them), not a table's one cell ``deepseek-flash (logged as ...)``.

    Example:
        >>> _by_model(("requests",), [("deepseek-flash", ["deepseek-v4-flash"])], [(2,)], True, csv=True)
        (('model', 'logged models', 'requests'), [('deepseek-flash', 'deepseek-v4-flash', 2)], None)
    """
    if csv:
        return (*logged_column("model", columns, models, rows), None)
    keyed, note = _keyed(models, rows, whole)
    return ("model", *columns), keyed, note


def _cost_droppable(columns: Sequence[str], rows: list[dict[str, Any]]) -> tuple[str, ...]:
    """The cost columns a narrow terminal may leave out, in order: the buckets, the one that cost
    the least over ``rows`` first (one all $0.0000 or $?, as a DeepSeek fleet's cache writes, the
    first of all), then the what-ifs, then the costliest bucket, so that where the money went stays
    in sight (an Anthropic fleet's cache writes, a DeepSeek one's misses), as `usage` orders its
    columns (:func:`bucket_drop_order`): never "unpriced" when a request is."""
    spent = {column: sum((r["cost_usd"] or {}).get(bucket) or 0.0 for r in rows)
             for column, bucket in _BUCKET_COLUMNS.items()}
    return tuple(c for c in ("unpriced", *bucket_drop_order(spent, ("off-peak $", "no cache $"))) if c in columns
                 and (c != "unpriced" or not any(r["unpriced_requests"] for r in rows)))


def _lost(row: dict[str, Any]) -> Amount:
    """What a group's cache losses cost, by the one rule (:meth:`Costs.shown`): owed only by its
    ``lost_requests`` (those that lost tokens, and the breaks whose cache reads were not logged,
    which lost an unknown amount), ``≥$x`` when one of them is unpriced or unknown, ``$?`` when
    it is unknown."""
    value = row["lost_cost_usd"]
    return Amount(value, Costs.shown(value, requests=row["requests"], unpriced=0, owing=row["lost_requests"],
                                     owing_unpriced=row["lost_unpriced"]))


def _unknown_lost(count: int) -> tuple[tuple[str, int], ...]:
    """The row that says how many breaks lost an unknown amount (their cache reads were not
    logged: left out of the tokens lost, and owing an unknown cost), when any did."""
    return (("breaks with unknown loss (reads not logged)", count),) if count else ()


def _measure(label: str, cells: tuple[Any, ...], *, csv: bool, names: tuple[str, ...] = (),
             form: str = "{} / {}") -> list[tuple[Any, ...]]:
    """A ``measure, value`` row of several values: one row ``label, a / b`` (``form``) in a table;
    in CSV (``csv``) a row per value, named by ``names`` (default: ``label`` split at `` / ``), each
    value a plain number (:class:`Amount`)."""
    if not csv:
        texts = [table_cell(cell) for cell in cells]
        return [(label, form.format(*texts) if form.count("{}") == len(texts) else " / ".join(texts))]
    return list(zip(names or tuple(label.split(" / ")), cells))


def _ratio(value: float | None) -> Amount:
    """A cache-hit ratio: ``48.0%`` in a table, the ratio itself from 0 to 1 in CSV (as ``--json``
    gives it, every digit); ``n/a`` (CSV: empty) for a ratio of no prompt tokens."""
    return Amount(value, "n/a" if value is None else f"{value:.1%}")


def _logged(row: dict[str, Any], key: str) -> int | Amount:
    """A group's prompt or cache-read sum (:func:`dsh_audit.fleet._measures.measures`) as ``usage``
    shows a token sum (:meth:`Amount.tokens`): ``?`` (CSV: empty) when no request logged it (null
    in ``--json``), never 0; ``≥N`` (CSV: N) when a request that logged usage lacks it."""
    value = row[key]
    return Amount.tokens(value, lacking=bool(row["prompt_unknown_requests"]), logged=value is not None)


def _output_tokens(totals: dict[str, Any]) -> int | Amount:
    """The fleet's output tokens as ``usage`` shows a token sum (:meth:`Amount.tokens`): ``?`` when no
    request logged a count of them (none logged usage: ``--json`` tokens null), ``≥N`` when some did not."""
    lacking = totals["tokens_unknown_requests"].get("output", 0)
    logged = totals["requests"] - totals["usage_unknown_requests"]  # the requests that logged usage
    return Amount.tokens((totals["tokens"] or {}).get("output", 0), logged=logged > lacking,
                         lacking=bool(lacking) or 0 < totals["requests"] == totals["usage_unknown_requests"])


def _reusable(row: dict[str, Any]) -> int | Amount:
    """A group's reusable cache reads (:func:`dsh_audit.fleet._measures.measures`) as ``usage`` shows a
    token sum (:meth:`Amount.tokens`): ``?`` when none of its requests has them (none logged its cache
    reads: no known 0), ``≥N`` when a row an older dsh-audit stored lacks them."""
    value = row["reusable_cache_read"]
    return Amount.tokens(value, lacking=bool(row["reusable_unknown_requests"]), logged=value is not None)


def _measures(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["requests"], row["usage_known"], _logged(row, "prompt_tokens"), _logged(row, "actual_cache_read"),
            _ratio(row["actual_hit_ratio"]), _ratio(row["expected_hit_ratio"]), _reusable(row),
            row["lost_tokens"], _lost(row))


def print_stats(stats: FleetStats, *, empty: bool = False) -> None:
    """The tables of ``stats``; ``empty`` (no request to answer about): the fleet totals alone, no
    empty table (a note says why: :func:`dsh_audit.cli._fleet._nothing_note`)."""
    totals = stats.totals
    lost_rates, rates = _rates(stats.prices)
    csv = listing_format() == "csv"
    print_table(f"{stats.db}: fleet totals", ("measure", "value"), [
        *_measure("sessions (refused)", (totals["sessions"], totals["sessions_refused"]), csv=csv,
                  names=("sessions", "sessions refused"), form="{} ({})"),
        # known: logged, or the capture's for a request whose log holds none (index --capture), as `cache` counts them
        *_measure("requests (cache reads known)", (totals["requests"], totals["usage_known"]), csv=csv,
                  names=("requests", "requests with cache reads known"), form="{} ({})"),
        ("prompt tokens", _logged(totals, "prompt_tokens")),
        *_measure("cache read actual / expected",
                  (_logged(totals, "actual_cache_read"), _logged(totals, "expected_cache_read")),
                  csv=csv, names=("cache read actual", "cache read expected")),
        *_measure("hit ratio actual / expected", (_ratio(totals["actual_hit_ratio"]), _ratio(totals["expected_hit_ratio"])),
                  csv=csv, names=("hit ratio actual", "hit ratio expected")),
        # "?" when no request logged usage at all (--json: tokens null), as usage shows it (a sum of none is no 0)
        ("output tokens", _output_tokens(totals)),
        *_measure("breaks (attribution / cache)", (totals["attribution_breaks"], totals["cache_breaks"]), csv=csv,
                  names=("breaks (attribution)", "breaks (cache)")),
        # beside what it is measured from (lost <= reusable - actual), as `cache` says it
        *_measure("tokens lost", (totals["lost_tokens"], _reusable(totals)), csv=csv,
                  names=("tokens lost", "reusable cache read"), form="{} (of {} reusable)"),
        *_unknown_lost(totals["lost_unknown_requests"]),
        (f"cost lost ({lost_rates})", _lost(totals)),
    ])
    if empty:
        return
    cost = stats.cost
    buckets = cost["cost_usd"] or {}
    print_table(f"cost ({rates})", ("measure", "value"), [
        *_measure("requests (unpriced)", (cost["requests"], cost["unpriced_requests"]), csv=csv,
                  names=("requests", "unpriced requests"), form="{} ({})"),
        ("cost", _priced(cost, buckets.get("total"))),
        *_measure("cache miss / cache read / cache write / output",
                  tuple(_priced(cost, buckets.get(k)) for k in ("cache_miss", "cache_read", "cache_write", "output")),
                  csv=csv),
        *(_measure("billed at long-context tier rates (requests)", (_usd(cost["tier_cost_usd"]), cost["tier_requests"]),
                   csv=csv, names=("billed at long-context tier rates", "requests at long-context tier rates"),
                   form="{} ({})") if cost["tier_requests"] else ()),
        ("with no cache", _priced(cost, cost["no_cache_cost_usd"])),
        ("all off-peak", _priced(cost, cost["off_peak_cost_usd"])),
        *_measure("cache losses / of which breaks",  # owed by the requests that lost tokens only
                  (_priced(cost, cost["lost_cost_usd"], "lost"), _priced(cost, cost["break_cost_usd"], "break")),
                  csv=csv),
        *_unknown_lost(cost["lost_unknown_requests"]),
        *((f"unpriced: {reason}", count) for reason, count in cost["unpriced"].items()),
        *((("logs indexed without a ledger", cost["sessions_unpriced"]),) if cost["sessions_unpriced"] else ()),
    ], caption=_BOUND_NOTE if cost["unpriced_requests"] else None)
    columns = ("model", *_COST_COLUMNS)
    # the model the price table bills, with the other names its requests logged (as usage --by model),
    # in both tables by model or in neither: one model is named alike in one run
    droppable = _cost_droppable(columns, list(stats.cost_by_model))
    costs, models = [_costs(r) for r in stats.cost_by_model], _models(stats.cost_by_model)
    measures = _CSV_MEASURE_COLUMNS if csv else _MEASURE_COLUMNS
    measured, measured_models = [_measures(r) for r in stats.by_model], _models(stats.by_model)
    whole = (_fits_whole(models, columns, costs, droppable)
             and _fits_whole(measured_models, ("model", *measures), measured, _MEASURE_DROPPABLE))
    keyed, rows, note = _by_model(_COST_COLUMNS, models, costs, whole, csv=csv)
    print_table("cost by model", keyed, rows, droppable=droppable, caption=note)
    # a cause's losses of unpriced requests have no cost: its amounts are lower bounds then
    print_table("what cache losses cost, by cause", ("cause", "reusable", "tokens lost", "cost", "of which breaks"),
                ((r["cause"], Amount.tokens(r["reusable_cache_read"], lacking=False), r["lost_tokens"],
                  _priced({**cost, **r}, r["lost_cost_usd"], "lost"), _priced({**cost, **r}, r["break_cost_usd"], "break"))
                 for r in stats.cost_by_cause))
    keyed, rows, note = _by_model(measures, measured_models, measured, whole, csv=csv)
    print_table("by model", keyed, rows, droppable=_MEASURE_DROPPABLE, caption=note)
    print_table("by day (UTC, request time)", ("day", *measures),
                ((r["day"] or _UNKNOWN, *_measures(r)) for r in stats.by_day), droppable=_MEASURE_DROPPABLE)
    # what the breaks lost to each cause (a break that went cold too: the rest under cold_ttl), beside the reusable
    # reads of the breaks that lost tokens to it, what the report's breaks by cause says (0: its breaks lost nothing)
    print_table("breaks by cause", ("cause", "cache breaks", "attribution breaks", "reusable", "tokens lost"),
                ((r["cause"], r["cache_breaks"], r["attribution_breaks"], Amount.tokens(r["reusable_cache_read"], lacking=False),
                  r["lost_tokens"]) for r in stats.by_cause))
    _print_rankings(stats, measures)


def _left_out(what: str, more: int, free: int, *, most: bool = False) -> str | None:
    """What a ranking's caption says of the rows it leaves out: ``more`` past ``--top`` (``most``:
    at most that many, some may have cost nothing) and ``free``, ``what`` (the rows' noun and what
    cost) cost nothing (the same words in both rankings); None when it leaves out none.

    Example:
        >>> _left_out("break(s) that", 2, 3)
        '2 more (raise --top); 3 break(s) that cost nothing (no token lost, or at $0) left out'
    """
    said = ([f"{'up to ' if most else ''}{more} more (raise --top)"] if more > 0 else []) + \
        ([f"{free} {what} cost nothing (no token lost, or at $0) left out"] if free > 0 else [])
    return "; ".join(said) or None


def _ranked_sessions(stats: FleetStats) -> tuple[list[dict[str, Any]], str | None]:
    """The sessions of the ranking (:attr:`FleetStats.top_sessions`), and what its caption says of
    those it leaves out (:func:`_left_out`): ranked by what their losses cost (``--sort lost``),
    those whose losses cost nothing (``lost_cost_usd`` 0: the costliest breaks' rule) are no
    "sessions whose cache losses cost the most" (in a table; CSV keeps the JSON's rows). They rank
    last: when one is among the rows, every session left out is one; else a count past --top may
    hold some (the index is not asked again)."""
    rows, ranked = list(stats.top_sessions), stats.totals.get("sessions", 0) - stats.totals.get("sessions_refused", 0)
    what = "session(s) whose cache losses"
    if stats.sort != "lost" or listing_format() == "csv":
        return rows, _left_out(what, ranked - len(rows), 0) if listing_format() != "csv" else None
    kept = [r for r in rows if r["lost_cost_usd"] != 0]
    if len(kept) < len(rows):  # the free ones rank last: every session not kept is one
        return kept, _left_out(what, 0, ranked - len(kept))
    return kept, _left_out(what, ranked - len(kept), 0, most=True)


def _print_rankings(stats: FleetStats, measures: Sequence[str]) -> None:
    """The sessions ranked by ``--sort`` (with when the last request was sent, by time) and the
    costliest breaks, sessions and breaks that cost nothing left out, and those past --top (the
    caption counts them)."""
    title, rank = _SESSION_RANKS[stats.sort]
    when = ("last request (UTC)",) if stats.sort == "time" else ()
    columns = ("session", "path", *when, *measures, "cost", "breaks $")
    ranked, left = _ranked_sessions(stats)
    rows = [(r["session_id"], r["path"], *((_when(r["last_sent_at"]),) if when else ()), *_measures(r),
             _priced(r, (r["cost_usd"] or {}).get("total")), _priced(r, r["break_cost_usd"], "break"))
            for r in ranked]
    droppable = (*_RANK_DROPPABLE, *(c for c in ("breaks $", "lost $", "cost") if c != _RANKED_AMOUNT[stats.sort]))
    # one cut per session in both rankings, unique among every session the index holds (`show` takes it):
    # the index is asked once, and only when an id must be cut
    @cache
    def among() -> list[str]:
        return [*_index_ids(stats.db), *(r["session_id"] for r in stats.top_sessions),
                *(r["session_id"] for r in stats.costliest_breaks)]

    rows, short = _short_sessions(columns, rows, droppable, among)
    print_table(title, columns, rows, droppable=droppable, ids=("session",),
                caption="; ".join(text for text in (rank if rows else None, short, left) if text) or None)
    columns = ("session", "path", *_BREAK_COLUMNS)
    rows = [(r["session_id"], r["path"], r["request"], r["model"] or _UNKNOWN, r["cause"] or "?",
             Amount.tokens(r["reusable_cache_read"], lacking=False), Amount.tokens(r["lost_tokens"], lacking=False),
             _usd(r["lost_cost_usd"])) for r in stats.costliest_breaks]
    rows, short = _short_sessions(columns, rows, _BREAK_DROPPABLE, among)
    more = stats.totals.get("cache_breaks", 0) - stats.free_breaks - len(rows)
    free = _left_out("break(s) that", more, stats.free_breaks) if listing_format() != "csv" else None
    print_table("costliest cache breaks", columns, rows, droppable=_BREAK_DROPPABLE, ids=("session",),
                caption="; ".join(text for text in (_RANK_NOTE if rows else None, short, free) if text) or None)


def _index_ids(db: str) -> list[str]:
    """Every session id the index at ``db`` holds (one query): a prefix unique among the rankings'
    few rows alone (``session-2b096b61``) may start three sessions of the index, which `show` refuses;
    each as the log gave it, as the rankings show it (:func:`~dsh_audit.fleet.shown`)."""
    connection = connect_index(db, create=False)
    try:
        query = "SELECT DISTINCT session_id FROM sessions WHERE session_id IS NOT NULL"
        return [shown(row[0]) for row in connection.execute(query)]
    finally:
        connection.close()


def _when(iso: str | None) -> str | None:
    """An ISO 8601 UTC time as the tables show one (``2026-12-02 11:24:01``; None: ``-``)."""
    return None if iso is None else iso.replace("T", " ").removesuffix("Z")


def _short_sessions(columns: tuple[str, ...], rows: list[tuple[Any, ...]], droppable: tuple[str, ...],
                    among: Callable[[], Sequence[str]]) -> tuple[list[tuple[Any, ...]], str | None]:
    """``rows`` (session id first) with each id as every table shows one (:func:`id_cell`: ``-``
    when there is none), shortened to its shortest unique prefix among the ids ``among()``
    (:func:`id_prefixes`, as every table shortens one; called only then: it may query the index),
    and the caption saying so, when a table of them would not fit the terminal with whole ids and
    every column but "path" (:func:`rows_fit`): both rankings, whatever columns they may leave out,
    shorten ids before they leave out a column with a value."""
    whole = [(id_cell(row[0]), *row[1:]) for row in rows]
    if listing_format() != "table" or rows_fit(columns, whole, droppable=droppable, spare=("path",)):
        return whole, None
    names = id_names([*among(), *(row[0] for row in rows)], id_prefixes)
    shortened = [(id_cell(row[0], names), *row[1:]) for row in rows]
    return (whole, None) if shortened == whole else (shortened, id_caption("session"))
