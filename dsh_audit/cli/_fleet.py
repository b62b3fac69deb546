"""``dsh-audit index`` and ``dsh-audit stats``: a SQLite index of many sessions and its answers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from .. import cache, fleet
from ..cache import Costs
from ..fleet import SCHEMA_VERSION, FleetStats, fleet_stats
from ..report import dumps_line
from ..report.terminal import (Amount, fit_lines, listing_format, print_table, progress_callback, rows_fit,
                               short_ids, table_cell)
from ._common import EXIT_BAD_INPUT, EXIT_OK, echo, echo_error, echo_note, echo_warning
from ._logs import grouped_notes, guard_evidence, selected_logs, session_paths
from ._options import (accounting_option, attribution_option, capture_option, engine_options, jobs_option, json_option,
                       lenient_option, listing_options,
                       openai_zdr_option, prices_option, routes_option, stated_zdr)
from ._views import sort_option
from ._when import request_window_options, time_options, window_text

if TYPE_CHECKING:
    from ..fleet import IndexSummary

# ``stats`` imports only the index's schema and its sums (issue 11): the price table and the
# indexing pipeline are read through the packages' lazy names (``cache.load_prices``,
# ``fleet.index_logs``) when ``index`` runs (``stats`` loads a price table only for the caveats of
# requests priced at the peak rate: :mod:`dsh_audit.fleet._caveats`).
__all__ = ["index_command", "stats_command"]

_DB_HELP = "The SQLite index file."
_MEASURE_COLUMNS = ("requests", "reads logged", "prompt", "cache read", "hit ratio", "expected", "lost tokens",
                    "lost $")
# In CSV the expected ratio's column says what it is (a table's "expected" stands beside "hit ratio").
_CSV_MEASURE_COLUMNS = tuple("expected hit ratio" if c == "expected" else c for c in _MEASURE_COLUMNS)
_COST_COLUMNS = ("requests", "cache miss $", "cache read $", "cache write $", "output $", "total $", "no cache $",
                 "off-peak $", "breaks $", "unpriced")
# Left out, in this order, while a narrow terminal cannot show a table with whole words (after a
# column with no value in any row).
_COST_DROPPABLE = ("unpriced", "cache write $", "off-peak $", "no cache $", "output $", "cache read $", "cache miss $")
_MEASURE_DROPPABLE = ("path", "reads logged", "expected", "cache read")
# The session rankings leave out more, in this order, before a table too wide to be drawn in the run's
# style takes the other one (a run's tables share one style: docs/cli.md).
_RANK_DROPPABLE = (*_MEASURE_DROPPABLE, "prompt", "hit ratio", "requests", "lost tokens")
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
_BREAK_COLUMNS = ("request", "model", "cause", "lost tokens", "lost $")
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


def _cost_droppable(rows: list[dict[str, Any]]) -> tuple[str, ...]:
    """The cost columns a narrow terminal may leave out: never "unpriced" when a request is."""
    return tuple(c for c in _COST_DROPPABLE if c != "unpriced" or not any(r["unpriced_requests"] for r in rows))


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


def _measures(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["requests"], row["usage_known"], row["prompt_tokens"], row["actual_cache_read"],
            _ratio(row["actual_hit_ratio"]), _ratio(row["expected_hit_ratio"]), row["lost_tokens"], _lost(row))


@click.command("index")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@click.option("--db", default="audit.sqlite", show_default=True, type=click.Path(dir_okay=False), help=_DB_HELP)
@lenient_option
@jobs_option
@time_options
@engine_options
@attribution_option("the breaks table stays empty")
@accounting_option(default=True, gives="the expected cache reads and losses come from it", alias="--no-cache")
@prices_option
@openai_zdr_option
@capture_option
@routes_option
@json_option
def index_command(paths: tuple[str, ...], db: str, lenient: bool, max_version: int, jobs: int, since: float | None,
                  until: float | None, engine: str, scheduler: str | None, no_attribution: bool, accounting: bool,
                  prices_path: str | None, openai_zdr: bool | None, capture: str | None, routes: str | None,
                  as_json: bool) -> int:
    """Index session logs into a SQLite file: one row per session, request, priced request and
    cache break.

    Incremental: a log whose size and modification time are unchanged since it was indexed (with
    the same options, price table, route file, ZDR status and --capture) is skipped; a changed one is replaced.
    Breaks are those `breaks` lists: a log with a capture (--capture, or a wire.jsonl found beside
    it, as `check` finds it) is compared with what was sent too. Every request is priced as `dsh-audit usage` prices it (table `costs`). Logs DSH would refuse are
    stored with their error (`stats` counts them as refused) and reported on stderr (exit 2) on
    every run that covers them, read again or unchanged. A log indexed before under PATHS that is
    no longer on disk is removed from the index, all its rows; one elsewhere stays (a disk not
    mounted now is no deleted log), and so does a log still there but left out by --since/--until.

    A session is stored once, as the other commands read it once: when a log read holds a
    session id the index has from another file (a plain and a compressed copy, an older
    generation, an export and DSH's log, a home moved away), the file the other commands would
    read, or the one still on disk, is kept and the other's rows removed, with a note naming both; files that hold different lines
    under one id are two sessions, both kept (a fork or subagent child has its own id). An index
    of an older schema is upgraded in place (every log is read again). With no PATHS,
    $DSH_HOME/sessions is indexed. Query the file with `dsh-audit stats` or any SQLite client.

    The summary line counts the logs given: "indexed N (R refused, stored with their error)",
    "skipped N unchanged (R refused, reported again)", "N failed (not stored, tried again next
    run)" when a log's task failed, "N not stored (a session indexed from another file)", then
    "removed N log(s) no longer there" and "replaced N log(s) by another file of their session".
    --json prints them as one object (`refused`, `refused_unchanged`, `removed_paths`,
    `replaced_paths`, `copies`, `notes`; `failure_details` lists every log
    refused or failed, with its error).

    \b
    Example:
        dsh-audit index ~/.dsh/sessions --db audit.sqlite --jobs 4 --since 30d
    """
    prices = cache.load_prices(prices_path)  # a bad price file is one error, before any log is read
    zdr = stated_zdr(openai_zdr)  # and so is a bad pyproject.toml value
    logs = selected_logs(paths, since, until)
    guard_evidence(paths, db, what="index")  # nor a copy of a session not read again (index_logs guards the rest)
    with progress_callback(len(logs), label="indexing") as report:
        summary = fleet.index_logs(logs, db, lenient=lenient, max_version=max_version,
                                   attribution=not no_attribution, cache=accounting, jobs=jobs, engine=engine,
                                   scheduler=scheduler, prices=prices, progress=report, routes=routes,
                                   capture=capture, zero_data_retention=zdr, roots=session_paths(paths))
    for warning in summary.warnings:
        echo_warning(warning)
    for note in grouped_notes(summary.notes):
        echo_note(note)
    if summary.upgraded_from is not None:
        echo_note(f"{summary.db}: index schema {summary.upgraded_from} upgraded to {SCHEMA_VERSION} in place; "
                  "every log given was read again to store its priced ledger")
    for _, error in summary.failed:
        echo_error(error)
    if as_json:
        click.echo(dumps_line(summary.to_json()))
    else:
        for line in fit_lines(_index_line(summary)):  # at spaces, to the terminal (COLUMNS when piped)
            echo(line)
    return EXIT_BAD_INPUT if summary.failed else EXIT_OK


def _index_line(summary: IndexSummary) -> str:
    """The summary line of ``index``: its counts add up to the logs given (``seen``); the logs
    removed as no longer on disk, or replaced by another file of their session, are not among them.

    Example:
        >>> print(_index_line(fleet.IndexSummary(  # doctest: +NORMALIZE_WHITESPACE
        ...     db="a.sqlite", seen=4, indexed=2, skipped=1, failed=(("x", "x: refused"), ("y", "y: task failed")),
        ...     lost=1, seconds=0.04, removed=("z",))))
        a.sqlite: indexed 2 (1 refused, stored with their error), skipped 1 unchanged,
        1 failed (not stored, tried again next run), of 4 log(s) in 0.0 s; removed 1 log(s) no longer there
        >>> print(_index_line(fleet.IndexSummary(  # doctest: +NORMALIZE_WHITESPACE
        ...     db="a.sqlite", seen=3, indexed=1, skipped=1, failed=(("x", "x: refused"),), lost=0, seconds=0.04,
        ...     refused_unchanged=1, replaced=("v",), copies=("w",))))
        a.sqlite: indexed 1, skipped 1 unchanged (1 refused, reported again), 1 not stored (a session indexed
        from another file), of 3 log(s) in 0.0 s; replaced 1 log(s) by another file of their session
    """
    refused = f" ({summary.refused} refused, stored with their error)" if summary.refused else ""
    again = f" ({summary.refused_unchanged} refused, reported again)" if summary.refused_unchanged else ""
    lost = f", {summary.lost} failed (not stored, tried again next run)" if summary.lost else ""
    copies = f", {len(summary.copies)} not stored (a session indexed from another file)" if summary.copies else ""
    removed = f"; removed {len(summary.removed)} log(s) no longer there" if summary.removed else ""
    replaced = f"; replaced {len(summary.replaced)} log(s) by another file of their session" if summary.replaced else ""
    return (f"{summary.db}: indexed {summary.indexed}{refused}, skipped {summary.skipped} unchanged{again}{lost}"
            f"{copies}, of {summary.seen} log(s) in {summary.seconds:.1f} s{removed}{replaced}")


def _nothing_note(db: str, since: float | None, until: float | None) -> str:
    """Why ``stats`` has no request to answer about: none sent in the window, or none indexed.

    Example:
        >>> _nothing_note("a.sqlite", None, None)
        'a.sqlite: the index holds no request: nothing to rank (index logs with `dsh-audit index PATH --db FILE`)'
    """
    if since is None and until is None:
        return f"{db}: the index holds no request: nothing to rank (index logs with `dsh-audit index PATH --db FILE`)"
    return (f"{window_text(since, until)}: no request of {db} was sent in that window (by the logs' own "
            "timestamps): nothing to rank (widen or drop --since/--until)")


def _print_stats(stats: FleetStats, *, empty: bool = False) -> None:
    """The tables of ``stats``; ``empty`` (no request to answer about): the fleet totals alone, no
    empty table (a note says why: :func:`_nothing_note`)."""
    totals = stats.totals
    lost_rates, rates = _rates(stats.prices)
    csv = listing_format() == "csv"
    print_table(f"{stats.db}: fleet totals", ("measure", "value"), [
        *_measure("sessions (refused)", (totals["sessions"], totals["sessions_refused"]), csv=csv,
                  names=("sessions", "sessions refused"), form="{} ({})"),
        *_measure("requests (cache reads logged)", (totals["requests"], totals["usage_known"]), csv=csv,
                  names=("requests", "requests with cache reads logged"), form="{} ({})"),
        ("prompt tokens", totals["prompt_tokens"]),
        *_measure("cache read actual / expected", (totals["actual_cache_read"], totals["expected_cache_read"]),
                  csv=csv, names=("cache read actual", "cache read expected")),
        *_measure("hit ratio actual / expected", (_ratio(totals["actual_hit_ratio"]), _ratio(totals["expected_hit_ratio"])),
                  csv=csv, names=("hit ratio actual", "hit ratio expected")),
        ("output tokens", totals["output_tokens"]),
        *_measure("breaks (attribution / cache)", (totals["attribution_breaks"], totals["cache_breaks"]), csv=csv,
                  names=("breaks (attribution)", "breaks (cache)")),
        ("tokens lost", totals["lost_tokens"]),
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
    print_table("cost by model", ("model", *_COST_COLUMNS),
                ((r["model"] or _UNKNOWN, *_costs(r)) for r in stats.cost_by_model),
                droppable=_cost_droppable(list(stats.cost_by_model)))
    # a cause's losses of unpriced requests have no cost: its amounts are lower bounds then
    print_table("what cache losses cost, by cause", ("cause", "tokens lost", "cost", "of which breaks"),
                ((r["cause"], r["lost_tokens"], _priced({**cost, **r}, r["lost_cost_usd"], "lost"),
                  _priced({**cost, **r}, r["break_cost_usd"], "break")) for r in stats.cost_by_cause))
    measures = _CSV_MEASURE_COLUMNS if csv else _MEASURE_COLUMNS
    print_table("by model", ("model", *measures),
                ((r["model"] or _UNKNOWN, *_measures(r)) for r in stats.by_model), droppable=_MEASURE_DROPPABLE)
    print_table("by day (UTC, request time)", ("day", *measures),
                ((r["day"] or _UNKNOWN, *_measures(r)) for r in stats.by_day), droppable=_MEASURE_DROPPABLE)
    print_table("breaks by cause", ("cause", "cache breaks", "attribution breaks", "tokens lost"),
                ((r["cause"], r["cache_breaks"], r["attribution_breaks"], r["lost_tokens"]) for r in stats.by_cause))
    _print_rankings(stats, measures)


def _print_rankings(stats: FleetStats, measures: Sequence[str]) -> None:
    """The sessions ranked by ``--sort`` (with when the last request was sent, by time) and the
    costliest breaks, breaks that cost nothing left out (the caption counts them)."""
    title, rank = _SESSION_RANKS[stats.sort]
    when = ("last request (UTC)",) if stats.sort == "time" else ()
    columns = ("session", "path", *when, *measures, "cost", "breaks $")
    rows = [(r["session_id"], r["path"], *((_when(r["last_request_at"]),) if when else ()), *_measures(r),
             _priced(r, (r["cost_usd"] or {}).get("total")), _priced(r, r["break_cost_usd"], "break"))
            for r in stats.top_sessions]
    droppable = (*_RANK_DROPPABLE, *(c for c in ("breaks $", "lost $", "cost") if c != _RANKED_AMOUNT[stats.sort]))
    rows, short = _short_sessions(columns, rows, droppable)
    print_table(title, columns, rows, droppable=droppable,
                caption="; ".join(text for text in (rank if rows else None, short) if text) or None)
    columns = ("session", "path", *_BREAK_COLUMNS)
    rows = [(r["session_id"], r["path"], r["request"], r["model"] or _UNKNOWN, r["cause"] or "?",
             Amount(r["lost_tokens"], "?" if r["lost_tokens"] is None else str(r["lost_tokens"])),
             _usd(r["lost_cost_usd"])) for r in stats.costliest_breaks]
    rows, short = _short_sessions(columns, rows, _BREAK_DROPPABLE)
    free = (f"{stats.free_breaks} break(s) that cost nothing (no token lost, or at $0) left out"
            if stats.free_breaks and listing_format() != "csv" else None)
    print_table("costliest cache breaks", columns, rows, droppable=_BREAK_DROPPABLE,
                caption="; ".join(text for text in (_RANK_NOTE if rows else None, short, free) if text) or None)


def _when(iso: str | None) -> str | None:
    """An ISO 8601 UTC time as the tables show one (``2026-12-02 11:24:01``; None: ``-``)."""
    return None if iso is None else iso.replace("T", " ").removesuffix("Z")


def _short_sessions(columns: tuple[str, ...], rows: list[tuple[Any, ...]],
                    droppable: tuple[str, ...]) -> tuple[list[tuple[Any, ...]], str | None]:
    """``rows`` (session id first) with each id shortened to its shortest unique prefix among them,
    and the caption saying so, when a table of them would not fit the terminal with whole ids and
    every column but "path" (:func:`rows_fit`): both rankings, whatever columns they may leave out,
    shorten ids before they leave out a column with a value."""
    if listing_format() != "table" or rows_fit(columns, rows, droppable=droppable, spare=("path",)):
        return rows, None
    names = short_ids(str(row[0]) for row in rows)
    shortened = [(names[str(row[0])], *row[1:]) for row in rows]
    if shortened == rows:
        return rows, None
    return shortened, "session: shortest unique prefix (--json for whole ids)"


@click.command("stats")
@click.option("--db", default="audit.sqlite", show_default=True, type=click.Path(dir_okay=False), help=_DB_HELP)
@click.option("--top", type=click.IntRange(min=0), default=10, show_default=True,
              help="How many sessions, and how many breaks, the rankings show.")
@sort_option(("lost", "cost", "time"), meaning="How the sessions are ranked: lost by what their cache losses "
             "cost, cost by what they cost, time by their last request, newest first (breaks are always "
             "ranked by what they lost).")
@request_window_options
@listing_options
def stats_command(db: str, top: int, sort: str, since: float | None, until: float | None, as_json: bool) -> int:
    """Answer fleet questions from an index made by `dsh-audit index`.

    Totals, the cache-hit ratio (cache-read over prompt tokens of requests with logged usage, as
    `dsh-audit cache` counts it) overall, by model and by day, breaks and tokens lost by cause,
    the --top sessions whose cache losses cost the most (with what each cost; --sort cost: the
    costliest sessions, --sort time: the latest, by their last request) and the --top costliest
    cache breaks of all sessions (session, request: the "#" of `dsh-audit requests`, model, cause,
    lost tokens and their cost; a break that cost nothing, no token lost or at $0, is left out and
    the caption counts them), and what the fleet cost (total, by bucket, at long-context tier
    rates, per model, with no cache, off-peak, and what cache losses and breaks cost) from the
    priced ledger `index` stored, without reading the logs again. --json prints one object (the
    breaks as "costliest_breaks", with "breaks_costing_nothing"; "sort", "since" and "until").

    --since and --until sum only the requests sent in that window, by the logs' own timestamps as
    `index` stored them, as `usage --since` does: every total, group, ranking and break is over
    those requests (a request with no time is left out; a refused log, whose times were never
    read, is counted whatever the window). The index keeps what `index` read: index again to add
    newer logs. A window in which no request was sent prints the fleet totals alone, no empty
    table, and a note saying why (exit 0).

    Sessions and breaks are ranked by what their lost tokens cost, not by the tokens: a cached
    token of one model can cost many times one of another. First those whose loss was priced,
    costliest first (a lower bound "≥$x" by its x); then those whose loss has no known price
    ("$?": a model the price table does not know, or a break whose cache reads were not logged),
    most lost tokens first; then those that lost nothing. --sort cost ranks the sessions by what
    they cost instead (a lower bound by its x, "$?" last), --sort time by their last request,
    newest first (a "last request (UTC)" column). The tables' captions say so.

    Columns: "reads logged" the requests whose usage records cache reads, and "prompt" their
    prompt tokens; "cache read" the tokens read from the cache; "hit ratio" cache read over
    prompt, "expected" what the provider's cache rules predict; "lost tokens" and "lost $" the
    cached tokens lost and what they cost; "breaks $" what the cache breaks cost; a "$" column
    is USD at the rates `index` priced with (list prices unless --prices or pyproject.toml's
    [tool.dsh-audit.prices] gave others: the cost table's title says which); a request whose
    model or day the log does not say is counted under "unknown", as `usage` counts it. An amount is "≥$x" (a lower bound) only when a request that owes it
    is unpriced (a lost or break cost is owed only by the requests that lost tokens), "$?" when
    it is unknown, and to two significant digits when too small for 4 decimals ("$0.000021").
    --format csv writes, as --json gives them, each amount exact and each hit ratio as the ratio
    from 0 to 1 with every digit (empty for n/a; the "expected" column is "expected hit ratio"
    there), and a row the table shows as "a / b" as one row per value. A narrow terminal leaves
    out a column with no value in any row, then the lesser columns (the caption names them), and
    shows session ids as their shortest unique prefix among those listed.

    \b
    Example:
        dsh-audit stats --db audit.sqlite --json | jq .totals.actual_hit_ratio
        dsh-audit stats --db audit.sqlite --since yesterday --sort cost
    """
    stats = fleet_stats(db, top=top, sort=sort, since=since, until=until)
    if as_json:
        click.echo(dumps_line(stats.to_json()))
    else:
        _print_stats(stats, empty=not stats.totals["requests"])
    if not stats.totals["requests"]:  # nothing to read: say why, as `usage` does (README "Nothing to read")
        echo_note(_nothing_note(stats.db, since, until))
    for text in stats.caveats:  # after the output, on stderr in every mode, as `usage` says them
        echo_note(text)
    return EXIT_OK


COMMANDS = [index_command, stats_command]
