"""``dsh-audit usage``: what sessions cost, by session, turn, day, model, peak window or request."""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

import click

from .._listing import billed_model_text
from ..cache import (USAGE_BUCKETS, USAGE_GROUPS, SessionLedger, UsageRow, UsageTable, from_capture, ledger_group,
                     load_prices, usage_table)
from ..errors import DshAuditError
from ..report import dumps_line
from ..report.terminal import Amount, listing_format, long_words_cut, progress_callback, rows_fit
from ..session import Failure, GroupResult, routes_from
from ..log import time_span
from ._common import EXIT_BAD_INPUT, EXIT_OK, echo_caveats, echo_error, echo_note, echo_warning
from ._logs import selected_logs
from ._options import (accounting_option, capture_option, engine_options, jobs_option, lenient_option, listing_options,
                       openai_zdr_option,
                       prices_option, routes_option, stated_zdr)
from ._priced import capture_notes, run_priced
from ._unpriced import unpriced_warnings
from ._table_ids import id_cell
from ._table_rules import logged_column, model_keyed
from ._usage_table import BUCKET_COSTS, BY_SESSION, REQUEST, REQUEST_TABLE, print_usage_table
from ._views import sort_option
from ._when import request_window_options, window_text

__all__ = ["usage_command"]

# "reusable": the cache reads "lost tokens (cost)" is measured from (lost <= reusable - cache read), beside it
# as `cache` and `stats` show it (--json: reusable_cache_read).
_COLUMNS = ("{by}", "requests", "cache miss", "reusable", "lost tokens (cost)", "cache read", "cache write", "output",
            "cost", "no cache", "off-peak", "unpriced")
# In CSV the lost tokens and what they cost are two plain columns (a number each a spreadsheet can sum),
# then (only when a break lost an unknown amount, as the tier column) the count of such breaks
# (--json: lost_unknown_requests).
_CSV_LOST = ("lost tokens", "lost cost")
_CSV_UNKNOWN = "lost unknown"
# The columns a narrow table may leave out (after what each bucket cost) with the logged names whole
# in each key by model (:func:`_model_keys`): the tokens, the what-ifs, "requests", and "unpriced"
# when no request is.
_LESSER = ("unpriced", "output", "cache read", "cache write", "cache miss", "off-peak", "no cache",
           "reusable", "requests")
# The token buckets of the table, in its order (:func:`_tokens`).
_BUCKETS = tuple(bucket for _, bucket in USAGE_BUCKETS)


def _amount(row: UsageRow, name: str, *, bound: bool = False) -> Amount:
    """An amount of ``row`` as a cell: its exact value (None: unknown) and how people read it, a
    lower bound (``≥$x``) or unknown (``$?``) by the one rule (:meth:`UsageRow.known`,
    :meth:`UsageRow.shown`; ``bound``: the total of a run some of whose logs could not be read)."""
    return Amount(row.known(name), row.shown(name, bound=bound))


def _tokens(row: UsageRow) -> tuple[object, ...]:
    """A row's cache miss, cache read, cache write and output cells: each bucket's sum, but unknown
    (``?``, empty in CSV) when none of its requests logged usage, or none that logged usage logged
    a count of that bucket (nor any other of them a token of it), and a lower bound ``≥N`` (CSV: N)
    when some did not (:attr:`UsageRow.tokens_unknown`: a DeepSeek usage without ``cacheReadTokens``
    holds neither its cache reads nor its misses), never a sum that reads as exact.

    Example:
        >>> from dsh_audit.cache import usage_table
        >>> _tokens(usage_table([]).total)
        (0, 0, 0, 0)
    """
    if not row.tokens_known:
        return (Amount(None, "?"),) * len(_BUCKETS)
    lacking = row.tokens_unknown
    logged = row.requests - row.usage_unknown  # the requests that logged usage: some logged a count of a bucket
    values = [getattr(row.tokens, bucket) for bucket in _BUCKETS]  # not all of them lack (a sum of 0 may be one)
    return tuple(Amount.tokens(value, lacking=bool(lacking.get(bucket)), logged=logged > lacking.get(bucket, 0))
                 for bucket, value in zip(_BUCKETS, values))


def _bucket_costs(row: UsageRow, *, bound: bool = False) -> tuple[Amount, ...]:
    """What each token bucket of ``row`` cost (:data:`BUCKET_COSTS`; ``usage --json``'s
    ``cost_usd``), each by the one rule of its "cost" (:meth:`UsageRow.shown`: ``≥$x`` when a
    request is unpriced, ``$?`` when none was priced; ``bound`` as :func:`_amount`'s).

    Example:
        >>> from dsh_audit.cache import usage_table
        >>> [cell.text for cell in _bucket_costs(usage_table([]).total)]
        ['$0.0000', '$0.0000', '$0.0000', '$0.0000']
    """
    return tuple(_amount(row, bucket, bound=bound) for bucket in _BUCKETS)


def _lacking_caption(total: UsageRow) -> str:
    """The caption's words on the token buckets some request logged no count of (:func:`_tokens`),
    empty when every request that logged usage logged every bucket.

    Example:
        >>> from collections import Counter
        >>> _lacking_caption(UsageRow("total", unlogged=Counter(cache_miss=2, output=3, requests=5)))
        '; cache miss, output: ≥N sums the requests that logged a count, ? when none did (5 request(s) logged none: unpriced)'
    """
    lacking = total.tokens_unknown
    if not lacking:
        return ""
    names = ", ".join(bucket.replace("_", " ") for bucket in lacking)
    return (f"; {names}: ≥N sums the requests that logged a count, ? when none did ({total.usage_partial} "
            "request(s) logged none: unpriced)")


def _details(row: UsageRow, *, csv: bool) -> tuple[object, ...]:
    """The cells of a row of one request after its amounts (:meth:`UsageRow.request_details`):
    all of :data:`REQUEST` in CSV (``csv``), :data:`REQUEST_TABLE` in a table; empty in the
    total row."""
    found = row.request_details()
    cells = tuple("" if (cell := found.get(key)) is None else cell for key in (
        "model", "window", "sent_at", "billed_as", "rate_source", "cache_retention", "cache_write_rate"))
    return cells if csv else cells[:len(REQUEST_TABLE)]


def _session_id(row: UsageRow) -> str | None:
    """The session id of a row by session, turn or request (its key starts with it); None in
    any other row (by day, model or window, the total)."""
    return dict(row.joins).get("session_id")


def _key(row: UsageRow) -> str:
    """A row's key as every table shows it (a table, CSV, Markdown; ``--json`` has the library's
    own): a session's empty id the cell of a log with no id (:func:`id_cell`), its turn, request
    or path after it (``- turn 1``); a model the price table bills, with the other names its
    requests logged (:func:`billed_model_text`).

    Example:
        >>> _key(UsageRow("claude-sonnet-4-5", models={"claude-sonnet-4-5-20250929", "claude-sonnet-4-5"}))
        'claude-sonnet-4-5 (also claude-sonnet-4-5-20250929)'
    """
    if row.logged_models:
        return billed_model_text(row.key, row.logged_models)
    session_id = _session_id(row)
    return row.key if session_id is None or session_id else id_cell(session_id) + row.key


def _model_keys(columns: list[str], rows: list[tuple[object, ...]], table: UsageTable
                ) -> tuple[list[tuple[object, ...]], str | None]:
    """``rows`` by model (the total's last) with the key cells :func:`model_keyed` gives, and the
    caption's note on them: the logged names in a key only when the table draws each key on one
    line, leaving out no column but those a narrow one may (:data:`_LESSER`: not "lost tokens
    (cost)", "cost", nor "unpriced" while a request is unpriced) and what each bucket cost, which
    a table leaves out first, unsaid (:func:`print_usage_table`); else the caption names them."""
    lesser = [c for c in _LESSER if c in columns and (c != "unpriced" or not table.total.unpriced)]
    kept = [at for at, column in enumerate(columns) if column not in BUCKET_COSTS]

    def fits(whole: list[tuple[object, ...]]) -> bool:
        shown = [tuple(row[at] for at in kept) for row in whole]
        return rows_fit([columns[at] for at in kept], shown, droppable=lesser, spare=lesser)

    return model_keyed(_models(table), [row[1:] for row in rows], fits)


def _models(table: UsageTable) -> list[tuple[str, tuple[str, ...]]]:
    """By model, each row's key (the model billed) and the models its requests logged, the total's last."""
    return [*((r.key, r.logged_models) for r in table.rows), (table.total.key, ())]


def _off_peak_caption(total: UsageRow) -> str:
    """The caption's words on the off-peak column when some priced requests had a peak window and
    some had none (a provider with one rate all day): the latter count at what they cost, in every
    row, total, window and view alike (:meth:`dsh_audit.cache.CostSums.add_request`); empty when
    none had one (off-peak is then the cost in every row, which says so itself) or every one had."""
    sums = total.totals
    return ("; off-peak: one-rate providers' requests at their cost"
            if 0 < sums.windowed < sums.requests - sums.unpriced_requests else "")


def _row(row: UsageRow, *, tier: bool, csv: bool = False, request: bool = False,
         unknown: bool = False, bound: bool = False, losses: bool = True) -> tuple[object, ...]:
    """A row's cells. Tokens of a row none of whose requests logged usage are unknown (``?``, empty
    in CSV), never 0 (a total of no request at all, an empty window, sent none: 0); the lost
    tokens and their cost are one cell ``N ($x)`` in a table, two plain columns in CSV (``csv``),
    then, when some break lost an unknown amount (cache reads not logged: ``unknown``), the count
    of such breaks, which a table's cell shows as ``+?`` after the tokens (``N+? ($x)``); the
    unpriced count is empty in a table when 0; rows by request (``request``) end with the
    request's details (:func:`_details`); ``bound``: every amount is a lower bound
    (:meth:`UsageRow.shown`); the reusable cache reads the lost tokens are measured from stand
    before them (``?``, empty in CSV, when no request of the row logged its cache reads: --json's
    ``reusable_cache_read`` null); without ``losses`` (--no-accounting: nothing lost was measured) the
    reusable and lost cells are empty, in CSV too, never 0 (:attr:`dsh_audit.cache.UsageTable.losses`)."""
    miss, read, write, output = _tokens(row)
    tiers = (f">{row.tier:,}" if row.tier is not None else "",) if tier else ()
    # lost tokens as --json gives them: a request with no usage measured no loss (0, at $0)
    # and a break whose cache reads were not logged lost an unknown amount: "+?", never 0
    unknowns = (row.lost_unknown,) if unknown else ()
    reusable = Amount.tokens(row.reusable_cache_read, lacking=False)  # --json's, by its one rule
    lost: tuple[object, ...] = ((reusable, row.lost_tokens, _amount(row, "lost", bound=bound), *unknowns) if csv else
                                (reusable, f"{row.lost_tokens}{'+?' if row.lost_unknown else ''} "
                                 f"({row.shown('lost', bound=bound)})" if row.lost_tokens or row.lost_unknown
                                 else ""))
    if not losses:  # not measured: unknown, an empty cell
        lost = (Amount(None, ""),) * len(lost)
    details = _details(row, csv=csv) if request else ()
    return (_key(row), row.requests, miss, *lost, read, write, output, _amount(row, "cost", bound=bound), *tiers,
            *_bucket_costs(row, bound=bound), _amount(row, "no_cache", bound=bound), _amount(row, "off_peak", bound=bound),
            Amount(row.unpriced, str(row.unpriced or "")), *details)


@click.command("usage")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@click.option("--by", type=click.Choice(USAGE_GROUPS), default="session", show_default=True,
              help="Group requests by session, turn, day (UTC), model, peak window or request.")
@sort_option(("time", "cost"), meaning="Order of the rows: time puts sessions newest first by their log's last "
             "activity (as `sessions` lists them; by turn or request, each session's in order; by day, model "
             "or window: by key), cost the costliest row first.")
@request_window_options
@prices_option
@accounting_option(default=True, gives="the lost tokens (cost) column comes from it", alias="--no-breaks")
@capture_option
@openai_zdr_option
@listing_options
@routes_option
@lenient_option
@jobs_option
@engine_options
def usage_command(paths: tuple[str, ...], by: str, sort: str, since: float | None, until: float | None,
                  prices_path: str | None, accounting: bool, capture: str | None, openai_zdr: bool | None,
                  as_json: bool, routes: str | None, lenient: bool, max_version: int, jobs: int, engine: str,
                  scheduler: str | None) -> int:
    """What sessions cost: tokens and USD by session, turn, day, model, window or request.

    Every request is priced at the rate for its model on its date and in its window (DeepSeek's
    peak / off-peak hours), with what it would have cost with no cache, what it would have cost
    off-peak, and what the cache breaks lost (the prompt tokens they did not read from the cache,
    billed as the provider bills them: see "lost tokens (cost)" below).
    A model the price table does not know is counted as unpriced, never as free. With no PATHS,
    the sessions under $DSH_HOME/sessions are read. --since and --until sum only the requests sent
    in that window, by the log's own timestamps (a session active in it counts with only those of
    its requests: `sessions --since` lists each session active in the window whole; a request with
    no time is left out; a note says how many logs had no activity in it). Rows of sessions (by
    session, turn or request) are newest first, by the last of each log's own timestamps as
    `sessions` orders them (equal ones by path), a session's turns and requests in order; by day,
    model or window by key (days oldest first); --sort cost puts the costliest row first (a lower
    bound "≥$x" by its x, "$?" last), the total last (--json: "sort" names the order). By request, a `tier` column shows the prompt size above which a
    long-context tier's rates priced the whole request (only when one did). By turn, a row is
    "SESSION turn N", and "SESSION turn -" sums the requests of no turn: session-title and
    web-search calls, whose log records name no turn, and compactions run between turns (manual
    ones, logged with turn null); a compaction inside a turn counts in that turn.

    Columns: "requests" the LLM requests; "cache miss" (prompt tokens not read from the cache,
    nor written to it); "reusable" the cache reads the conversation's previous requests left in the
    cache, what the lost tokens are measured from (lost <= reusable - cache read; "?" when no request
    of the row logged its cache reads, never 0; --json: reusable_cache_read; as `cache` and `stats`
    show it); "lost tokens (cost)" the prompt tokens the cache analysis expected to be
    read from the cache and were not (breaks and other shortfalls: the breaks `breaks` lists, a
    log compared with its capture too, --capture or the wire.jsonl found beside it as `check`
    finds it; none with --no-accounting), and what that cost over cache reads: a provider that
    writes the cache bills a lost prefix as the request's cache writes (Anthropic: up to the writes
    it logged, at the write rate of its TTL, 5-minute or 1-hour; any rest as cache misses), one
    that bills no writes as cache misses (DeepSeek); "cache read", "cache write" and "output"
    tokens; "cost" the USD at the table's rates, and what each of those buckets cost ("cache miss
    cost", "cache read cost", "cache write cost", "output cost"; --json: cost_usd by bucket;
    a table shows them only when it has the room for every other column too, and leaves them out
    first, as it leaves out a request's details, unsaid); "no cache" and "off-peak" what the same requests
    would have cost with no cache and all off-peak (a request with one rate all day, Anthropic's
    and OpenAI's, at its cost, in every row, window and command alike, so rows, --since and
    --until splits add up to the whole; "$?" only when no request of the row was priced);
    "unpriced" the requests with no price (no usage logged, a usage missing a count, or a model
    the table does not know). Tokens a request
    did not log (a title call) are "?" (--json: tokens null, counted in usage_unknown_requests),
    and a sum counts the requests that logged them; a request whose usage lacks a count (a
    DeepSeek usage without cacheReadTokens: its hits are unknown) is unpriced, its other tokens
    counted, but the buckets it lacks are not known: "≥N" (--format csv: N), the sum over the
    requests that logged a count, or "?" when none did (--json: tokens_unknown_requests counts, by
    bucket, the requests that logged none). By request, each row also says its model, its window
    ("peak" or "off-peak" by
    DeepSeek's hours; "standard": the provider bills one rate all day, or the request has no time
    or no price), when it was sent (UTC, "sent") and the model the table bills it as ("billed as"), as many of them as
    the terminal has room for beside the amounts; --json and --format csv have them all, and
    where its rate was read ("rate source"), its cache retention ("1h": cacheRetention long; OpenAI's default as --openai-zdr states it) and the rate its
    cache writes were billed at. An amount too small for 4 decimals shows two
    significant digits ("$0.000021"). --format csv writes each amount exact (as --json does),
    "lost tokens" and "lost cost" as two columns, an unknown as an empty cell. An amount over
    unpriced requests is a lower bound, "≥$0.0123", or "$?" when none of the requests that owe it
    was priced (a lost cost is owed only by the requests that lost tokens: a loss only unpriced
    requests had is "$?", never $0; --json: null, with "unpriced_requests" and "cost_complete"),
    as in cache, stats, check and report. A break whose cache reads were not logged lost an
    unknown amount: its lost tokens are "+?" ("0+? ($?)"; --json: lost_unknown_requests counts
    such breaks, as cache --json does; --format csv: a "lost unknown" column, when one did). A
    log that cannot be read (an error line, exit 2; a bug: exit 3) is left out of every sum: the
    total's amounts are then lower bounds, "≥$" (--json: "logs_failed" counts such logs and the
    total's "cost_complete" is false). A window with no request sent in it sums to 0 tokens and
    $0.0000. The warning for a model the price table does not know names the provider its
    requests went through and the --prices table that would price it. A narrow terminal first
    shows session ids as their shortest unique prefix, as `sessions` shows them (session-86ef2d28,
    session-sample-co…: `show` takes either; --json and --format csv keep them whole),
    then leaves out, as few as it needs (the caption names them): a column with no value in any row
    (every cell 0, ? or empty: a DeepSeek fleet's cache writes; reusable first where nothing was
    lost), then off-peak or no cache where it equals cost in every row (by request, requests too), then the token columns
    whose tokens cost the least (output, cache read, cache write, cache miss: the cheapest first), then
    off-peak and no cache, then reusable, then the costliest token column (where the money went: an
    Anthropic session's cache writes, a DeepSeek one's misses), and last requests (lost tokens (cost), cost, and
    unpriced while a request is unpriced, are never left out for room). A session found in two files whose
    lines differ is a row of each, "ID (PATH)". With --capture, a request whose log holds no usage
    (a title call) is priced from the provider's usage in the captured response to its send (each
    provider's convention read: DeepSeek's hits and misses, OpenAI's cached tokens inside the prompt,
    Anthropic's cache reads and writes apart), and a note says how many were; a logged usage is never
    replaced (a note counts those the capture's contradicts). By request, --json names where each
    request's tokens came from ("usage_source": "log", "capture", or null). --json gives each row
    its "key" (the table's first cell) and, by session, turn or request, the fields to join it with
    other commands' JSON: "session_id", "path", "turn" and a request's "request", "step" and
    "attempt" (as breaks and explain --json name them). By model, a row is the model the price table
    bills (an alias or dated snapshot in the row of the model it is billed as; an unpriced request
    under the model it logged), with the other names its requests logged: "MODEL (also A)", or
    "MODEL (logged as A)" when none logged MODEL (a table too narrow for them says them in its
    caption; --json: "logged_models", every name logged; --format csv: the model alone and a
    "logged models" column).

    \b
    Example:
        dsh-audit usage ~/.dsh/sessions --by day
        dsh-audit usage --by request --json | jq .totals.cost_usd.total
    """
    try:
        prices = load_prices(prices_path)
        zdr = stated_zdr(openai_zdr)  # a bad pyproject.toml value is one error, before any log is read
        routes_from(routes)  # and so is a bad route file
        logs = selected_logs(paths, since, until)  # a note says how many logs the window left out
    except DshAuditError as exc:
        echo_error(exc)
        return EXIT_BAD_INPUT
    status = EXIT_OK
    task = partial(ledger_group, prices=prices, lenient=lenient, max_version=max_version, breaks=accounting,
                   routes=routes, capture=capture, zero_data_retention=zdr)
    ledgers: list[SessionLedger] = []
    failed = 0  # logs that could not be read, or whose reading hit a bug: left out of every sum
    warnings: dict[str, tuple[str, ...]] = {}

    def keep_warnings(result: GroupResult[SessionLedger]) -> None:
        warnings.update(result.route_warnings)

    with progress_callback(len(logs), label="usage") as report_progress:
        found = run_priced(logs, task, prices=prices, jobs=jobs, engine=engine, scheduler=scheduler,
                           progress=report_progress, on_group=keep_warnings)
        for log, item in zip(logs, found):
            for warning in warnings.get(str(log), ()):
                echo_warning(warning)
            if isinstance(item, Failure):
                echo_error(item.error)  # a bug (InternalError) makes the run's exit 3 (run_guarded)
                status = EXIT_BAD_INPUT
                failed += 1
            else:
                ledgers.append(item)
    table = usage_table(ledgers, by=by, since=since, until=until, prices=prices.to_json(), sort=sort,
                        activity=_last_activity(ledgers) if by in BY_SESSION else None, losses=accounting)
    if as_json:
        click.echo(dumps_line(table.to_json(failed=failed)))
        for reason, count in table.unpriced.items():  # the capture's, on stderr as cache and sessions --json
            if from_capture(reason):                   # say them (the JSON holds every reason)
                echo_warning(long_words_cut(f"{count} request(s) unpriced: {reason}"))
        _echo_window_note(len(ledgers), table.total, since, until)
        _echo_capture_notes(table.total)
        echo_caveats(prices)  # stderr: the JSON has no place for notes
        return status
    # A request billed at a long-context tier shows its threshold; no such request, no column.
    tier = any(r.tier is not None for r in table.rows)
    csv = listing_format() == "csv"
    unknown = bool(table.total.lost_unknown)  # a break lost an unknown amount: CSV counts them in a column
    columns = [c.format(by=by) for c in _COLUMNS]
    if csv:
        at = columns.index("lost tokens (cost)")
        columns[at:at + 1] = (*_CSV_LOST, _CSV_UNKNOWN) if unknown else _CSV_LOST
    if tier:
        columns.insert(columns.index("cost") + 1, "tier")
    at = columns.index("tier" if tier else "cost") + 1
    columns[at:at] = BUCKET_COSTS
    request = by == "request"
    if request:
        columns.extend(REQUEST if csv else REQUEST_TABLE)
    cells = partial(_row, tier=tier, csv=csv, request=request, unknown=unknown, losses=accounting)
    rows = [*(cells(r) for r in table.rows), cells(table.total, bound=bool(failed))]
    caption = (f"{table.sessions} session(s); USD per {prices.per:,} tokens from the price table "
               f"({', '.join(prices.files)}); check your contract"
               + ("; tier: prompt tokens above which long-context rates priced the whole request" if tier else ""))
    caption += _off_peak_caption(table.total)
    if table.total.unpriced:
        caption += "; ≥$: a lower bound (unpriced requests left out), $?: no request priced"
    if table.total.usage_unknown:
        caption += (f"; tokens: sums over the {table.total.requests - table.total.usage_unknown} request(s) with "
                    "usage logged (?: none logged)")
    caption += _lacking_caption(table.total)
    if table.total.lost_unknown:
        caption += (f"; lost tokens: +?: {table.total.lost_unknown} break(s) lost an unknown amount "
                    "(cache reads not logged)")
    if failed:
        caption += (f"; {failed} log(s) not read (error above): left out of every sum, the total's "
                    "amounts are lower bounds (≥$)")
    if by == "model" and csv:  # the model billed alone, the names logged in a column of their own
        keyed, rows = logged_column(columns[0], columns[1:], _models(table), [row[1:] for row in rows])
        columns = list(keyed)
    elif by == "model":  # a key that would wrap: the billed model alone, and the caption says what was logged
        rows, note = _model_keys(columns, rows, table)
        caption += f"; {note}" if note else ""
    print_usage_table(columns, rows, by=by, caption=caption, ledgers=ledgers, total=table.total,
                      ids=[*map(_session_id, table.rows), None])
    for warning in unpriced_warnings(table, ledgers, since, until):
        echo_warning(long_words_cut(warning))  # a 20,000-character model is one word of a line, not 250
    _echo_window_note(len(ledgers), table.total, since, until)
    _echo_capture_notes(table.total)
    echo_caveats(prices)
    return status


def _echo_window_note(sessions: int, total: UsageRow, since: float | None, until: float | None) -> None:
    """Say why a ``--since/--until`` window sums to nothing though ``sessions`` logs were active in
    it (the selection's own note says so of logs with no activity there), as ``stats`` does."""
    if sessions and not total.requests and (since is not None or until is not None):
        echo_note(f"{window_text(since, until)}: no request of the {sessions} log(s) active in that window was "
                  "sent in it (by the logs' own timestamps): nothing to sum (widen or drop --since/--until)")


def _echo_capture_notes(total: UsageRow) -> None:
    for note in capture_notes(total.usage_from_capture, total.usage_differs):
        echo_note(note)


def _last_activity(ledgers: Iterable[SessionLedger]) -> dict[str, float | None]:
    """Each ledger's log's last own timestamp (:func:`dsh_audit.log.time_span`, which reads only
    the log's two ends), the order `sessions` lists them in; None where the log records none (an
    imported log: :func:`usage_table` then takes its requests' latest send time)."""
    found: dict[str, float | None] = {}
    for ledger in ledgers:
        span = time_span(ledger.path)
        found[ledger.path] = None if span is None else span[1]
    return found


COMMANDS = [usage_command]
