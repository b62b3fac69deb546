"""``dsh-audit index`` and ``dsh-audit stats``: a SQLite index of many sessions and its answers."""

from __future__ import annotations

import errno
import os
from typing import TYPE_CHECKING

import click

from .. import cache, fleet
from .._paths import refuse_empty_paths
from ..errors import UnreadableError, UsageError
from ..fleet import SCHEMA_VERSION, fleet_stats
from ..log import open_regular
from ..report import dumps_line
from ..report.terminal import fit_lines, progress_callback, terminal_text
from ._common import EXIT_BAD_INPUT, EXIT_OK, echo, echo_error, echo_note, echo_price_warnings, echo_warning
from ._copy_notes import grouped_notes
from ._logs import guard_evidence, selected_logs, session_paths
from ._options import (accounting_option, adapter_option, attachments_option, attribution_option, capture_option,
                       engine_options, jobs_option, json_option, lenient_option, listing_options,
                       openai_zdr_option, prices_option, routes_option, stated_zdr)
from ._output import STDOUT
from ._output_guard import no_stdout
from ._stats_tables import print_stats
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


@click.command("index")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@click.option("--db", default="audit.sqlite", show_default=True, metavar="FILE", type=click.Path(), help=_DB_HELP)
@lenient_option
@jobs_option
@time_options
@engine_options
@attribution_option("the breaks table stays empty")
@accounting_option(default=True, gives="the expected cache reads and losses come from it", alias="--no-cache")
@prices_option
@openai_zdr_option
@capture_option
@adapter_option(expose=False)
@routes_option
@attachments_option
@json_option
def index_command(paths: tuple[str, ...], db: str, lenient: bool, max_version: int, jobs: int, since: float | None,
                  until: float | None, engine: str, scheduler: str | None, no_attribution: bool, accounting: bool,
                  prices_path: str | None, openai_zdr: bool | None, capture: str | None, routes: str | None,
                  as_json: bool) -> int:
    """Index session logs into a SQLite file: one row per session, request, priced request and
    cache break.

    Incremental: a log whose size and modification time are unchanged since it was indexed (with
    the same options, price table, route file, ZDR status, --capture, --adapter and --attachments)
    is skipped; a changed one is replaced.
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

    The summary line counts the logs given: "indexed N (R refused, stored with their error; U
    log(s) re-read: dsh-audit changed since they were indexed)" (an upgrade of dsh-audit re-reads
    every log, unchanged or not: --json counts them in `rebuilt` and says why in `notes`),
    "skipped N unchanged (R refused, reported again)", "N failed (not stored, tried again next
    run)" when a log's task failed, "N not stored (a session indexed from another file)", then
    "removed N log(s) no longer there" and "replaced N log(s) by another file of their session".
    --json prints them as one object (`refused`, `rebuilt`, `refused_unchanged`, `removed_paths`,
    `replaced_paths`, `copies`, `notes`; `failure_details` lists every log
    refused or failed, with its error).

    \b
    Example:
        dsh-audit index ~/.dsh/sessions --db audit.sqlite --jobs 4 --since 30d
    """
    no_stdout(db, option="--db", what="index")  # "-" is stdout everywhere else: no index file named "-"
    prices = cache.load_prices(prices_path)  # a bad price file is one error, before any log is read
    echo_price_warnings(prices)
    zdr = stated_zdr(openai_zdr)  # and so is a bad pyproject.toml value
    logs = selected_logs(paths, since, until)
    # nor a copy of a session not read again (index_logs guards the rest), nor where it cannot be written
    guard_evidence(paths, db, option="--db", what="index", report=False)
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
                  "every log given was read again to store its priced ledger and reusable cache reads (a "
                  "stored log not given has none until it is: stats counts them unknown)")
    for _, error in summary.failed:
        echo_error(error)
    if as_json:
        click.echo(dumps_line(summary.to_json()))
    else:
        # at spaces, to the terminal (COLUMNS when piped); the --db path escaped whole: its newline breaks no line
        for line in fit_lines(terminal_text(_index_line(summary))):
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
        >>> print(_index_line(fleet.IndexSummary(  # doctest: +NORMALIZE_WHITESPACE
        ...     db="a.sqlite", seen=2, indexed=2, skipped=0, failed=(), lost=0, seconds=0.04, rebuilt=2)))
        a.sqlite: indexed 2 (2 log(s) re-read: dsh-audit changed since they were indexed), skipped 0 unchanged,
        of 2 log(s) in 0.0 s
    """
    why = [*((f"{summary.refused} refused, stored with their error",) if summary.refused else ()),
           *((summary.rebuilt_note,) if summary.rebuilt_note else ())]
    refused = f" ({'; '.join(why)})" if why else ""
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


@click.command("stats")
@click.option("--db", default="audit.sqlite", show_default=True, type=click.Path(), help=_DB_HELP)  # see _index_input
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
    the --top sessions whose cache losses cost the most (with what each cost; a session whose
    losses cost nothing, no token lost or at $0, is left out of the table; --sort cost: the
    costliest sessions, --sort time: the latest, by their last request) and the --top costliest
    cache breaks of all sessions (session, request: the "#" of `dsh-audit requests`, model, cause,
    lost tokens and their cost; a break that cost nothing, no token lost or at $0, is left out);
    each ranking's caption counts the rows it leaves out ("N more (raise --top)", "N ... cost
    nothing ... left out"), and what the fleet cost (total, by bucket, at long-context tier
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

    Columns: the totals and the cost tables are a "measure" and its "value" a row ("a / b": two
    values of one measure, each a row of its own in --format csv); "breaks (attribution / cache)"
    and the "breaks by cause" table count breaks two ways: "attribution breaks" the prefix changes
    `breaks` attributes to a cause ("unexplained" when none explains it), "cache breaks" the
    requests the cache accounting classifies as a break (the `cache` timeline's "break": a request
    at such a prefix change, or, with no attribution, one whose predicted cache read fell below its
    cached prefix), whatever their cache reads: one whose reads met the prediction (an older cached
    prefix still served it) counts and lost nothing, and one whose reads were not logged counts
    with an unknown loss; its "tokens lost" are what the breaks lost (a break that also went cold
    lost the rest under "cold_ttl", a row with no break of its own), as the HTML report's breaks by
    cause says them; "what cache losses cost, by cause" says what every request's tokens lost cost,
    "of which breaks" the part of it owed by breaks (the rest by other shortfalls). "cost by model":
    "cache miss $", "cache read $", "cache write $" and "output $" what each bucket of a model's
    requests cost, "total $" their sum, "no cache $" and "off-peak $" what the same requests would
    have cost with no cache and all off-peak, "breaks $" what its cache breaks cost, "unpriced"
    its requests with no price. A row of "cost by model" and of "by model" is the model the price
    table bills, as `usage --by model` keys its rows (an alias or a dated snapshot in the row of the
    model it is billed as; an unpriced request, or one of a log indexed without a ledger, under the
    model it logged), with the other names its requests logged: "MODEL (also A)", or "MODEL (logged
    as A)" when none logged MODEL (a table too narrow for them says them in its caption; --json:
    "logged_models", every name logged; --format csv: the model alone and a "logged models"
    column). The rankings: "session" the session id, "path" its log. "reads known" (the totals:
    "requests (cache reads known)") the requests whose cache reads and prompt size are known, as
    `cache` counts them: logged, or, for a request whose log holds none (a title call), the
    capture's usage `index --capture` (or a wire.jsonl found beside the log) paired with it (`cache`
    says how many "by the capture"; the index does not tell the two apart); "prompt" their prompt
    tokens; "cache read" the tokens read from the cache; "hit ratio" cache read over
    prompt, "expected" what the provider's cache rules predict; "lost tokens" and "lost $" the
    cached tokens lost and what they cost, beside "reusable", the cache reads they are measured
    from (lost <= reusable - cache read: a drop counts only past the rule's tolerance, see
    docs/cache-accounting.md; summed over the requests whose cache reads were logged, as `cache`
    sums its "of N reusable"; by cause, the reusable of the requests that lost tokens to it (in
    "breaks by cause", of the breaks that did: 0 when its breaks lost nothing), a request that
    lost to two causes under both, so that column adds up to no total; "?" when
    no request logged its cache reads, "≥N" when a log an older dsh-audit indexed was not read
    again (by cause: "?"); the totals: "tokens lost N (of R reusable)"; --json:
    reusable_cache_read, and reusable_unknown_requests counts the requests without it);
    "breaks $" what the cache breaks cost; a "$" column
    is USD at the rates `index` priced with (list prices unless --prices or pyproject.toml's
    [tool.dsh-audit.prices] gave others: the cost table's title says which); a request whose
    model or day the log does not say is counted under "unknown", as `usage` counts it. An amount is "≥$x" (a lower bound) only when a request that owes it
    is unpriced (a lost or break cost is owed only by the requests that lost tokens), "$?" when
    it is unknown, and to two significant digits when too small for 4 decimals ("$0.000021").
    --format csv writes, as --json gives them, each amount exact and each hit ratio as the ratio
    from 0 to 1 with every digit (empty for n/a; the "expected" column is "expected hit ratio"
    there), and a row the table shows as "a / b" as one row per value. A narrow terminal leaves
    out a column with no value in any row, then the lesser columns (the caption names them), and
    shows session ids as their shortest unique prefix among those listed, as `sessions` shows them
    (session-86ef2d28, session-sample-co…: `show` takes either). A token sum is never a guess: "prompt"
    and "cache read" are "?" when no request logged them (--json: null), and "≥N", a lower bound,
    when a request that logged usage lacked them (--json: prompt_unknown_requests counts those);
    --json's cost.tokens and totals.tokens are null when no request logged usage.

    \b
    Example:
        dsh-audit stats --db audit.sqlite --json | jq .totals.actual_hit_ratio
        dsh-audit stats --db audit.sqlite --since yesterday --sort cost
    """
    _index_input(db)
    stats = fleet_stats(db, top=top, sort=sort, since=since, until=until)
    if as_json:
        click.echo(dumps_line(stats.to_json()))
    else:
        print_stats(stats, empty=not stats.totals["requests"])
    if not stats.totals["requests"]:  # nothing to read: say why, as `usage` does (README "Nothing to read")
        echo_note(_nothing_note(stats.db, since, until))
    for text in stats.caveats:  # after the output, on stderr in every mode, as `usage` says them
        echo_note(text)
    return EXIT_OK


#: What to give ``stats --db`` instead of a path no index can be read from.
_READ_HINT = "give --db the file `dsh-audit index PATH --db FILE` wrote"


def _index_input(db: str) -> None:
    """Refuse, before SQLite opens it, a ``stats --db`` no index can be read from, each in one line
    naming the path, with a hint naming ``--db`` and ``dsh-audit index --db``: ``-`` (stdin is no
    SQLite file), an empty path, a folder, a file that does not exist, a FIFO, device or socket
    (never opened for reading: :func:`dsh_audit.log.open_regular`), a file this user cannot read.
    A file that is not a dsh-audit index is refused as SQLite reads it (:func:`dsh_audit.fleet.fleet_stats`).

    Raises:
        UsageError: as above (exit 2).
    """
    if db == STDOUT:  # "-" is stdin or stdout everywhere else: no SQLite file named "-" is made or read
        raise UsageError("--db -: the index is read from a SQLite file, not from stdin", hint=_READ_HINT)
    refuse_empty_paths({"--db": db})
    try:
        with open_regular(db, what="file"):
            return
    except UnreadableError as exc:
        message = exc.message
    try:
        os.lstat(db)
    except FileNotFoundError:
        raise UsageError("no such index", path=db, hint="build one with `dsh-audit index PATH --db FILE`") from None
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise  # said as every command says it (cli/_common): a shorter path
    refused = (f"cannot read the index: {message.removeprefix('cannot open: ')}"
               if message.startswith("cannot open: ") else f"the index {message}")
    raise UsageError(refused, path=db, hint=_READ_HINT)


COMMANDS = [index_command, stats_command]
