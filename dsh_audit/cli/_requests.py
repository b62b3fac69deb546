"""``dsh-audit requests`` and ``dsh-audit show``."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import TYPE_CHECKING, Any

import click

from .._spool import LineSpool
from .._usage_rule import PRICED_FIELDS, count_of, is_count, logged_counts, reasoning_excess, usage_of
from ..capture import capture_for, captures_ignored
from ..errors import DshAuditError
from ..runner import TaskResult, in_process, iter_many
from ..replay import Request
from ..session import Failure, Session, read_session
from ..report import dumps_line, dumps_line_with, dumps_pretty
from ..report.terminal import About, Amount, listing_format, page_listing, print_table, progress_callback, short_needed
from ._common import EXIT_BAD_INPUT, EXIT_OK, echo_error, echo_note, echo_warning
from ._logs import log_progress, newest_first, one_log, selected_logs, session_paths
from ._one_request import REQUEST_INDEX, RequestCommand, one_request
from ._options import (capture_option, engine_options, jobs_option, json_option, listing_options, lenient_option,
                       pager_option)
from ._output import CAPTURED_MARK, CAPTURED_NOTE, PLACE_COLUMN, PLACE_LEGEND, PLACE_SHORT, captured_count, place_text, session_title
from ._priced import echo_capture_use
from ._when import time_options

if TYPE_CHECKING:
    from ..cache import Tokens
    from ..capture import CaptureRead

__all__ = ["requests_command", "show_command"]

# "cache write" only for a log with a request that logged cache writes (:func:`_writes`).
_COLUMNS: tuple[str, ...] = ("#", PLACE_COLUMN, "kind", "header", "msgs", "input", "cache read", "cache write",
                             "output", "finish")
# Left out, in this order, while a narrow terminal cannot show the table with whole words.
_DROPPABLE = ("finish", "header")


def _count(value: object) -> Amount:
    """A token count the log records: the number (CSV writes it plain) when it is one by the
    ledger's rule (:func:`~dsh_audit._usage_rule.is_count`), else ``?`` (CSV: an empty cell): it
    records none, or one that is no count (``"100"``, a JSON string, reads as a number but `usage`
    does not count it, nor may a total).

    Example:
        >>> [_count(v).text for v in (100, 100.0, "100", -1, True, None)]
        ['100', '100', '?', '?', '?', '?']
    """
    count = count_of(value)  # 100.0 is 100, as DSH reads it: never a float in a cell
    return Amount(None, "?") if count is None else Amount(count, str(count))


def _logged(counts: dict[str, int | None] | None) -> tuple[Amount, ...]:
    """The tokens a request's logged usage holds (``counts``), by :data:`~dsh_audit._usage_rule.PRICED_FIELDS`:
    the ledger's one rule (:func:`~dsh_audit._usage_rule.logged_counts`), so that a cell is ``?``
    where `usage` counts none: a usage of no valid count, an input whose cache reads DSH's native
    DeepSeek adapter did not log (its ``inputTokens`` is then the whole prompt, hits and misses
    unknown), a cache read that is no count (a pi-ai route's missing one is 0); a missing
    ``cacheWriteTokens`` is 0, as DSH's adapters write it only when above 0.

    Example:
        >>> from types import SimpleNamespace as R
        >>> native = {"config": {"provider": "deepseek-official"}}
        >>> made = [R(usage=u, message_usage=None, header=native, kind="loop", extra={})
        ...         for u in ({"inputTokens": 9, "outputTokens": 2}, {"outputTokens": 2, "cacheReadTokens": 7}, {})]
        >>> [[c.text for c in _logged(logged_counts(r))] for r in made]
        [['?', '?', '0', '2'], ['?', '7', '0', '2'], ['?', '?', '?', '?']]
    """
    return tuple(_count(None if counts is None else counts[name]) for name in PRICED_FIELDS)


def _row(request: Request, captured: Tokens | None, counts: dict[str, int | None] | None) -> tuple[object, ...]:
    """A request's row: the tokens its log records, or, when it records none, those the capture's
    response to its send reports (``captured``: :func:`_captured`), marked :data:`CAPTURED_MARK`."""
    where = place_text(request.turn, request.step, request.attempt)
    header = "-" if request.header_seq is None else f"{request.header_seq} {request.header_reason or ''}".strip()
    finish = (request.finish or {}).get("kind", "") if isinstance(request.finish, dict) else ""
    if captured is not None:
        shown: tuple[Amount, ...] = tuple(captured_count(n) for n in (captured.cache_miss, captured.cache_read,
                                                                        captured.cache_write, captured.output))
    else:
        shown = _logged(counts)  # the usage the ledger prices: an attempt's empty one too (its counts are "?")
    return (request.index, where, request.kind, header, request.message_count, *shown, finish)


def _writes(request: Request, captured: Tokens | None = None) -> bool:
    """Whether ``request``'s logged usage records cache writes, or the capture's (``captured``)
    counts some: a log with one shows the "cache write" column (DSH's DeepSeek adapter never logs one)."""
    if captured is not None:
        return captured.cache_write > 0
    usage = usage_of(request)
    return isinstance(usage, dict) and "cacheWriteTokens" in usage


def _captured(session: Session, capture: CaptureRead | None) -> tuple[dict[int, Tokens], dict[str, int]]:
    """Request index -> the tokens the capture (``capture``: the one given, read once for the run
    by :func:`_given`, the capture of every session; else the ``wire.jsonl`` found beside the log)
    reports for each request of ``session`` whose log holds no usage: the one source
    `usage`, `sessions` and `cache` price from (:func:`dsh_audit.cache.given_usage`,
    :func:`dsh_audit.cache.entry_usage`), never in place of a logged usage; and how many of those
    the capture leaves unpriced, by why (it matched no request of the session, or its usage is
    damaged), which `usage` warns of, as `requests` does (:func:`_report`). The capture is aligned
    with :func:`_lent_copies` of the requests, so that what alignment lends a title or compaction
    call to render it (its route's context) is not in its ``--json`` line: that line is the one
    ``--no-capture`` writes, but for its usage."""
    from ..cache import captured_usage, entry_usage, given_capture, given_usage

    copied = replace(session, requests=_lent_copies(session.requests))
    by_session = captured_usage([copied], capture) if capture is not None else \
        given_usage([copied], given_capture([copied], None))
    found = by_session.get(session.id, {})
    picked: dict[int, Tokens] = {}
    unpriced: dict[str, int] = {}
    for request in session.requests:
        tokens, _, source, _ = entry_usage(request, found.get(request.index))
        if source == "capture" and tokens is not None:
            picked[request.index] = tokens
        elif source is None and (why := getattr(found.get(request.index), "why", None)):  # an UnusableUsage's
            unpriced[why] = unpriced.get(why, 0) + 1
    return picked, unpriced


def _lent_copies(requests: Sequence[Request]) -> list[Request]:
    """``requests``, each title and compaction call a copy with its own ``extra`` (what rendering
    lends it goes there: :meth:`dsh_audit.session.RouteEvidence.lend_context`); the others as they are."""
    return [replace(r, extra=dict(r.extra)) if r.kind in ("title", "compaction") else r for r in requests]


def _usage_source(request: Request, captured: Tokens | None) -> str | None:
    """Where ``request``'s tokens come from, in the words of `usage --by request --json`
    (:func:`dsh_audit.cache.entry_usage`): ``capture`` (``captured``: the log holds none), ``log``
    when its logged usage holds a count, by the ledger's one rule (:func:`dsh_audit._usage_rule.logged_counts`,
    which loads no cache accounting for a log with no capture), else None.

    Example:
        >>> from types import SimpleNamespace as R
        >>> [_usage_source(R(usage=u, message_usage=None, header=None, kind="loop", extra={}), None)
        ...  for u in ({"inputTokens": 9}, {"inputTokens": -1}, {"inputTokens": 10**9 + 1}, None)]
        ['log', None, None, None]
    """
    if captured is not None:
        return "capture"
    return "log" if logged_counts(request) is not None else None


#: The columns the total row sums (each a count a request may not have logged).
_SUMMED = ("input", "cache read", "cache write", "output")


def _lacking(counts: dict[str, int | None] | None, row: tuple[Any, ...]) -> set[str]:
    """The columns of :data:`_SUMMED` whose count ``request``'s logged usage lacks (``row``, its
    :func:`_row`, shows ``?`` there: none, or one that is no count): a total over it is a lower
    bound, as `usage` sums a bucket (:meth:`Amount.tokens`); none for a request whose log holds no
    usage by the ledger's rule (:func:`~dsh_audit._usage_rule.logged_counts`: a title call, a usage
    of no valid count: ``counts`` None), which the total leaves out whole, as `usage` does."""
    unknown = {name for name, cell in zip(_COLUMNS, row)
               if name in _SUMMED and isinstance(cell, Amount) and cell.value is None}
    return unknown if unknown and counts is not None else set()


#: Why a cell of :data:`_SUMMED` shows ``?``, in the caption's words: the request's usage (or that
#: field of it) is not logged; it logged a value that is no count (``"100"``, -1, null, past
#: :data:`~dsh_audit._usage_rule.MAX_TOKENS`); or, "input" alone, DSH's native DeepSeek adapter
#: logged the whole prompt as its input but no count of its cache reads, so the uncached part is unknown;
#: or a count of a usage that holds none of input, cache read and output (`usage` leaves it unpriced);
#: or, "output" alone, one below its own reasoningTokens, a part of it (:func:`~dsh_audit._usage_rule.reasoning_excess`).
_WHY = {"unlogged": "not logged", "no count": "not a count",
        "below reasoning": "below its own reasoningTokens",
        "whole prompt": "the whole prompt logged, its cache reads unknown",
        "left out": "left out, its usage holding no count of input, cache read or output"}


def _why_unknown(request: Request, counts: dict[str, int | None] | None) -> set[tuple[str, str]]:
    """(column, reason: a key of :data:`_WHY`) of each cell of :data:`_SUMMED` that ``request``'s
    row (:func:`_row`, from its log) shows as ``?``, by the ledger's rule (``counts``, its
    :func:`~dsh_audit._usage_rule.logged_counts`), which the caption words (:func:`_legend`).

    Example:
        >>> from types import SimpleNamespace as R
        >>> native = {"config": {"provider": "deepseek-official"}}
        >>> made = [R(usage=u, message_usage=None, header=native, kind="loop", extra={}) for u in (
        ...     {"inputTokens": 9, "outputTokens": 2}, {"inputTokens": "9", "outputTokens": 2, "cacheReadTokens": 0})]
        >>> [sorted(_why_unknown(r, logged_counts(r))) for r in made]
        [[('cache read', 'unlogged'), ('input', 'whole prompt')], [('input', 'no count')]]
    """
    usage = usage_of(request)
    if not isinstance(usage, dict):
        return {(name, "unlogged") for name in _SUMMED}
    found: set[tuple[str, str]] = set()
    for name, field in zip(_SUMMED, PRICED_FIELDS):
        if counts is not None and counts[field] is not None:
            continue
        if field not in usage:
            found.add((name, "unlogged"))
        elif field == "outputTokens" and reasoning_excess(usage) is not None:  # its one count too: left out
            found.add((name, "below reasoning"))
        elif is_count(usage[field]):  # a count, yet unknown: a native input whose cache reads are not known
            found.add((name, "whole prompt" if counts is not None else "left out"))
        else:
            found.add((name, "no count"))
    return found


def _legend(unknown: Iterable[tuple[str, str]], columns: Sequence[str]) -> str:
    """What the caption says a ``?`` in ``columns`` is (``unknown``: :func:`_why_unknown`'s pairs):
    its one reason when every ``?`` has it (``not logged``), else each column's, columns of the same
    reasons together (``input: the whole prompt logged, its cache reads unknown; cache read: not logged``).

    Example:
        >>> _legend({("input", "unlogged"), ("output", "unlogged")}, _COLUMNS)
        '?: not logged'
        >>> _legend({("input", "whole prompt"), ("cache read", "unlogged"), ("output", "unlogged")}, _COLUMNS)
        '?: input: the whole prompt logged, its cache reads unknown; cache read, output: not logged'
    """
    shown = [(name, why) for name, why in unknown if name in columns]
    reasons = {why for _, why in shown} or {"unlogged"}
    if len(reasons) == 1 and reasons != {"whole prompt"}:
        return f"?: {_WHY[reasons.pop()]}"
    by_column = {name: [_WHY[why] for why in _WHY if (name, why) in shown] for name in _SUMMED}
    groups: dict[str, list[str]] = {}
    for name, said in by_column.items():
        if said:
            groups.setdefault(", or ".join(said), []).append(name)
    return "?: " + "; ".join(f"{', '.join(names)}: {said}" for said, names in groups.items())


def _total_row(rows: Sequence[tuple[Any, ...]], columns: Sequence[str] = _COLUMNS, lacking: Iterable[str] = (),
               unknown: Iterable[tuple[str, str]] = ()) -> tuple[tuple[object, ...], str | None]:
    """The table's last row, ``total`` (under "turn/step/attempt"): the tokens of :data:`_SUMMED`
    summed over the requests that logged each (``?`` when none did), as `usage` sums them, a lower
    bound ``≥N`` in a column some request's logged usage holds no count of (``lacking``:
    :func:`_lacking`); and the caption saying so when some did not (None when every request logged
    every one), and why each ``?`` is one (``unknown``: :func:`_why_unknown`'s pairs, worded by
    :func:`_legend`; a row of the capture's counts has none). ``columns``: those of ``rows``.

    Example:
        >>> rows = [("", "", Amount(None, "?"), Amount(5, "5")), ("", "", Amount(100, "100"), Amount(5, "5"))]
        >>> total, note = _total_row(rows, ("#", PLACE_COLUMN, "input", "output"), lacking={"input"},
        ...                       unknown={("input", "no count")})
        >>> [getattr(cell, "text", cell) for cell in total], note
        (['', 'total', '≥100', 10], 'total: each count summed over the requests that logged it (?: not a count; ≥N: a lower bound, a logged usage lacks it)')
    """
    total: list[object] = [""] * len(columns)
    total[columns.index(PLACE_COLUMN)] = "total"  # "#" stays a column of numbers, as narrow as they are
    lacking = set(lacking)
    short = False
    for name in (name for name in _SUMMED if name in columns):
        at = columns.index(name)
        known = [cell.value for row in rows
                 if isinstance(cell := row[at], Amount) and isinstance(cell.value, int)]
        short = short or len(known) < len(rows)
        total[at] = Amount.tokens(sum(known) if known else None, lacking=name in lacking, logged=bool(known))
    if not short:
        return tuple(total), None
    bound = any(isinstance(cell, Amount) and cell.text.startswith("≥") for cell in total)
    legend = _legend(unknown, columns) + ("; ≥N: a lower bound, a logged usage lacks it" if bound else "")
    return tuple(total), f"total: each count summed over the requests that logged it ({legend})"


@dataclass(frozen=True, slots=True)
class _View:
    """What `requests` prints for one log, made where the log is read (a worker, maybe)."""

    path: str
    warnings: tuple[str, ...]
    notes: tuple[str, ...] = ()
    error: DshAuditError | None = None
    lines: Iterable[str] = ()  # a tuple from a worker; made as they are written in this process
    session_id: str = ""
    rows: tuple[tuple[Any, ...], ...] = ()
    caption: str | None = None
    writes: bool = False  # a request logged cache writes: the "cache write" column is shown
    captured: bool = False  # a row holds the capture's counts (CAPTURED_MARK): the caption says so
    lacking: frozenset[str] = frozenset()  # the columns a logged usage holds no count of (_lacking)
    unknown: frozenset[tuple[str, str]] = frozenset()  # (column, why) of each "?" a logged usage gives (_why_unknown)
    unpriced: tuple[tuple[str, int], ...] = ()  # the requests the capture leaves unpriced, by why (_captured)


def _session_view(path: str, *, as_json: bool, lenient: bool, max_version: int, streamed: bool = False,
                  capture: CaptureRead | None = None, ignore_found: bool = False) -> _View:
    """Replay one log and pre-render its output; a top-level function so that workers can run it.

    Each request is turned into its line or row as it is replayed and not kept, so the session
    holds no request; ``streamed`` (in this process only) spools JSON lines (a
    :class:`~dsh_audit._spool.LineSpool`). A log with a capture (``capture``: the one given, read
    once for the run by :func:`_given`; else the ``wire.jsonl`` found beside it) is read whole
    first: the capture is aligned with its requests, and gives the tokens of those whose log holds none (:func:`_captured`). ``ignore_found``
    (``--no-capture``, passed, not read from the environment: a remote worker has another) looks
    for none beside it."""
    lines: LineSpool | list[str] = LineSpool() if streamed and as_json else []
    rows: list[tuple[Any, ...]] = []
    writes = False
    lacking: set[str] = set()
    unknown: set[tuple[str, str]] = set()
    name = os.fspath(path)
    write = _json_line(name)

    def take(request: Request, captured: Tokens | None = None) -> None:
        nonlocal writes
        if as_json:
            lines.append(write(request, captured))
        else:
            counts = logged_counts(request)  # once a request: its row's counts and why a cell is "?"
            rows.append(row := _row(request, captured, counts))
            writes = writes or _writes(request, captured)
            if captured is None:
                lacking.update(_lacking(counts, row))
                unknown.update(_why_unknown(request, counts))

    # its requests are aligned with the capture, once read
    whole = capture is not None or not ignore_found and capture_for(name, None) is not None
    try:
        session = read_session(path, lenient=lenient, max_version=max_version, on_request=None if whole else take,
                               keep=whole)
        captured, unpriced = _captured(session, capture) if whole and isinstance(session, Session) else ({}, {})
        for request in session.requests if whole and isinstance(session, Session) else ():
            take(request, captured.get(request.index))
    except BaseException:
        if isinstance(lines, LineSpool):
            lines.close()
        raise
    warnings = tuple(session.warnings)
    if isinstance(session, Failure):
        if isinstance(lines, LineSpool):
            lines.close()  # a log DSH refuses prints no request
        return _View(session.path, warnings, error=session.error)
    if as_json:
        return _View(session.path, warnings, lines=lines if isinstance(lines, LineSpool) else tuple(lines),
                     unpriced=tuple(unpriced.items()))
    notes = [f"{s['turn']}/{s['step']} at seq {s['step_start_seq']}: {s['note']}" for s in session.result.skipped_steps]
    caption = "; ".join(text for text in (("steps without a response: " + "; ".join(notes)) if notes else None,
                                          CAPTURED_NOTE if captured else None) if text) or None
    return _View(session.path, warnings, notes=tuple(f"{session.path}: {n}" for n in session.result.notes),
                 session_id=session.id, rows=tuple(rows), caption=caption, writes=writes,
                 unpriced=tuple(unpriced.items()), lacking=frozenset(lacking),
                 unknown=frozenset(unknown))


def _json_line(path: str) -> Callable[[Request, Tokens | None], str]:
    """The writer of a log's ``--json`` lines: a request's summary led by ``path`` (as in `cache`,
    `sessions` and `check`: two files may hold one session id), then where its tokens came from
    (:func:`_usage_source`); a request whose log holds no usage and the capture's does
    (``captured``) has those ``"tokens"``, by bucket, in the words of `usage --json`.

    The header (config, system prompt, tools: kilobytes) is written once for each header object
    the replay hands on, which every request of a run of steps under one header shares, and its
    text put in each line (:func:`~dsh_audit.report.dumps_line_with`). The object last
    written is held, so that its identity is not another's."""
    held: list[Any] = [None, ""]  # the header last written and its text

    def write(request: Request, captured: Tokens | None = None) -> str:
        row = {"path": path, **request.summary(), "usage_source": _usage_source(request, captured),
               **({"tokens": captured.to_json()} if captured is not None else {})}
        header = row["header"]
        if header is None:
            return dumps_line(row)
        if header is not held[0]:
            held[:] = [header, dumps_line(header)]
        return dumps_line_with(row, "header", held[1])

    return write


def _write_lines(lines: Iterable[str], batch: int = 1 << 20) -> None:
    """Echo ``lines``, one per line, in writes of about ``batch`` characters."""
    held: list[str] = []
    size = 0
    for line in lines:
        held.append(line)
        size += len(line) + 1
        if size >= batch:
            click.echo("\n".join(held))
            held, size = [], 0
    if held:
        click.echo("\n".join(held))


#: A log's table: its columns, rows and caption.
_Table = tuple[tuple[str, ...], list[tuple[Any, ...]], str | None]


def _table(view: _View) -> _Table:
    """The columns, rows and caption of a log's table (none of it for a log that failed)."""
    columns, rows, caption = _COLUMNS, list(view.rows), view.caption
    if not view.writes:  # no request logged a cache write (DeepSeek's adapter never does): no column
        write = _COLUMNS.index("cache write")
        columns = _COLUMNS[:write] + _COLUMNS[write + 1:]
        rows = [row[:write] + row[write + 1:] for row in rows]
    if rows and listing_format() != "csv":  # CSV holds the JSON's rows, and the JSON has no total; no rows, no total
        total, summed = _total_row(rows, columns, view.lacking, view.unknown)
        rows.append(total)
        caption = "; ".join(text for text in (caption, summed) if text) or None
    return columns, rows, caption


def _in_short(tables: Iterable[_Table]) -> bool:
    """Whether a run's tables are all drawn in their short form (``t/s/a``): one of them needs it
    (:func:`short_needed`), so that no run switches headers from one table to the next."""
    return any(short_needed(columns, rows, droppable=_DROPPABLE, short=PLACE_SHORT) for columns, rows, _ in tables)


def _report(view: _View, *, as_json: bool, in_short: bool | None = None, table: _Table | None = None) -> None:
    for warning in view.warnings:
        echo_warning(warning)
    if view.unpriced:  # in usage's words: a capture of another session prices none of this one's title call
        echo_capture_use([{"unpriced": dict(view.unpriced)}])
    if view.error is not None:
        echo_error(view.error)
        return
    if as_json:
        _write_lines(view.lines)
        return
    for note in view.notes:
        echo_note(note)
    columns, rows, caption = table or _table(view)
    print_table(session_title(view.path, view.session_id), columns, rows, caption=caption, droppable=_DROPPABLE,
                about=About(view.path, view.session_id, "requests"), short=PLACE_SHORT, legend=PLACE_LEGEND,
                in_short=in_short)


@click.command("requests")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@listing_options
@capture_option
@lenient_option
@jobs_option
@time_options
@engine_options
def requests_command(paths: tuple[str, ...], as_json: bool, capture: str | None, lenient: bool, max_version: int,
                     jobs: int, since: float | None, until: float | None, engine: str, scheduler: str | None) -> int:
    """List every LLM request each session log implies.

    PATHS may be log files (session.jsonl or session.jsonl.zstd), session folders, a sessions
    root, or a session id, a unique id prefix or `latest` (looked up under $DSH_HOME/sessions); with
    none, $DSH_HOME/sessions (else ~/.dsh/sessions) is read. The logs are listed newest first by
    the log file's modification time when no PATH is given (equal ones by path; ordering reads no
    log), else the PATHS in the order given, each one's logs by path (`sessions` orders by the
    logs' own timestamps). One row per dispatched
    attempt (retries included) plus compaction and title calls. With --jobs or --engine dask the
    logs are read in parallel and printed in the same order as a serial run.

    Columns: "#" the INDEX that `show`, `explain` and `render` take; "turn/step/attempt" where
    it was sent ("-" for a title call, "N/-" for a compaction call; "t/s/a" on a narrow
    terminal); "kind" loop, compaction or title;
    "header" the seq and reason of the request/header snapshot it used; "msgs" the messages it
    sent; "input", "cache read", "cache write" and "output" the tokens the log records for its
    response ("?" when none is logged, or the one logged is no count, as `usage` reads it: "100"
    written as a string, a negative one, one past 1,000,000,000; all four when its usage holds no count of
    input, cache read and output; an empty cell in --format csv; a request whose log holds
    none, a title call, shows the provider's usage in the captured response to its send, marked
    "*", when a capture is given with --capture or found beside the log as `check` finds it: the
    tokens `usage` and `cache` price it by; --format csv writes them plain, unmarked, its columns
    being the table's: --json's "usage_source" says which came from the capture). DSH logs the prompt in
    disjoint parts, prompt = input + cache read + cache write, each adapter from its provider's
    usage: DeepSeek (DSH's own adapter): input is prompt_tokens less the cache hits, "?" when no
    hits are logged (cache read "?": its logged input is then the whole prompt, whose split `usage`
    does not know either; `show` prints it), and no cache writes (DeepSeek bills none);
    pi-ai routes: Anthropic's input is its input_tokens, which leaves out both the cache reads
    and the cache writes (a request that wrote 8019 tokens may show input 10), and an
    OpenAI-compatible route's is prompt_tokens less cached_tokens and cache_write_tokens; pi-ai
    logs a cache read or write only when above 0 (none logged: 0). "cache write" is shown for a
    log with a request that logged one;
    "finish" why the response ended. The last row, "total", sums the tokens of each count over the
    requests that logged it ("?" when none did; "≥N", a lower bound, when a request that logged
    usage lacks that count; the caption says when some did not, and why each column's "?" is one:
    not logged, not a count, an output below its own reasoningTokens (a part of it), DeepSeek's
    whole prompt logged without its cache reads, or left out, the request's usage holding no
    count of input, cache read or output; not in --format csv, whose rows are the JSON's). A narrow
    terminal leaves out a column with no value in any row, then "finish", then "header". With
    --json, one object per request, led by "path", the log it is from (two files may hold one
    session id), and "usage_source", where its tokens came from, in the words of `usage --by
    request --json`: "log", "capture" (then "tokens", by bucket, as `usage --json` names them) or
    null (none logged nor captured); the lines are the same with or without a capture but for
    those two; no total. A --capture that cannot be read is an error (exit 2) before any log is read.

    \b
    Example:
        dsh-audit requests sample_logs/ --json | jq .messages_sha256
        dsh-audit requests ~/.dsh/sessions --since 7d --jobs 4 --json
    """
    try:
        read = None if capture is None else _given(capture)
    except DshAuditError as exc:
        echo_error(exc)  # as usage says it, once, before any log is read
        return EXIT_BAD_INPUT
    given = session_paths(paths)
    logs = newest_first(selected_logs(given, since, until), given if paths else ())  # the documented listing order (newest_first)
    task = partial(_session_view, as_json=as_json, lenient=lenient, max_version=max_version,
                   streamed=in_process(jobs, engine, len(logs)), capture=read,
                   ignore_found=captures_ignored())
    status = EXIT_OK
    # A table run is held until every log is read, so that its tables share one header for the
    # request's place (_in_short); JSON lines stream as each log is read.
    held = not as_json and listing_format() == "table"
    results: list[TaskResult[_View]] = []
    with progress_callback(len(logs), label="replaying") as report:
        for result in iter_many(logs, task, jobs=jobs, engine=engine, scheduler=scheduler, progress=report):
            if held:
                results.append(result)
            elif _reported(result, as_json=as_json):
                status = EXIT_BAD_INPUT
    tables = [_table(r.value) if r.value is not None and r.value.error is None else None for r in results]
    in_short = _in_short(table for table in tables if table is not None) if held else None
    for result, table in zip(results, tables):  # each table made once: for the header choice and to print
        if _reported(result, as_json=as_json, in_short=in_short, table=table):
            status = EXIT_BAD_INPUT
    return status


def _given(capture: str) -> CaptureRead:
    """The capture given with ``--capture``, read once, before any log, each response's usage kept
    as it is read (:func:`dsh_audit.cache.keep_usage`): every log's view aligns its session with
    this read (:func:`_captured`), in a worker too, and none opens the file again.

    Raises:
        CaptureError: it cannot be read (a torn tail is no error).
    """
    from ..cache import keep_usage  # only when one is given: its loaders and the usage it tells
    from ..capture import read_capture

    return read_capture(capture, warnings=[], keep=keep_usage)


def _reported(result: TaskResult[_View], *, as_json: bool, in_short: bool | None = None,
              table: _Table | None = None) -> bool:
    """Print one log's result (:func:`_report`); whether it failed."""
    if result.value is None:
        assert result.error is not None
        echo_error(result.error)
        return True
    _report(result.value, as_json=as_json, in_short=in_short, table=table)
    return result.value.error is not None


@click.command("show", cls=RequestCommand)
@click.argument("path", type=click.Path(readable=False))
@click.argument("index", type=REQUEST_INDEX)
@lenient_option
@click.option("--compact", is_flag=True, help="Exact JSON.stringify output instead of indented JSON.")
@json_option
@pager_option("the JSON")
def show_command(path: str, index: int, lenient: bool, max_version: int, compact: bool, as_json: bool) -> int:
    """Print request INDEX of one session log in full as JSON (messages, header, usage).

    INDEX is the '#' column of `dsh-audit requests`; a negative INDEX counts from the end (-1 is
    the last request, -2 the one before) and may come before or after PATH. The object holds
    what `requests --json` gives for the request ("index", "session_id", "kind", "turn",
    "step", "attempt", the seqs, "header", "usage", "finish", ..., "usage_source": "log" or null,
    as show reads no capture), then "message_seqs" and
    "messages", the messages it sent; indented for people, one line with --compact. With
    --json, the same object on one line, led by "path", the log it is from, as each line of
    `requests --json` is: that line (but for a capture's usage) with "message_seqs" and "messages"
    after it.

    \b
    Example:
        dsh-audit show sample_logs/tools/session.jsonl 2
        dsh-audit show latest -1 --json | jq '.messages | length'
    """
    log = one_log(path)
    with log_progress([log], label="show"):
        log_path, found, _ = one_request(str(log), index, lenient=lenient, max_version=max_version)
    request = found.to_json()
    sent = {key: request.pop(key) for key in ("message_seqs", "messages")}  # last, after the requests line
    request = {**request, "usage_source": _usage_source(found, None), **sent}  # no capture read: log or null
    page_listing()
    if as_json:  # the log's path first, as in `requests --json`: two files may hold one session id
        click.echo(dumps_line({"path": log_path, **request}))
    else:
        click.echo(dumps_line(request) if compact else dumps_pretty(request))
    return EXIT_OK
COMMANDS = [requests_command, show_command]
