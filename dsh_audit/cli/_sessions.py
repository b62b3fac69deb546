"""``dsh-audit sessions``: one row per session, newest first, for finding one by name."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path

import click

from ..cache import Costs, SessionSummary, iso_utc, load_prices, newest_first, summary_group, usd_total
from ..errors import DshAuditError, UnreadableError
from ..log import copy_name, copy_notes, is_fixture_token, open_regular, preferred, read_once
from ..report import dumps_line
from ..report.terminal import Amount, listing_format, print_table, progress_callback
from ..session import Failure, routes_from, run_groups
from ._common import EXIT_BAD_INPUT, EXIT_OK, echo_caveats, echo_error, echo_note, echo_warning
from ._logs import selected_logs
from ._output import COUNT_SHORT
from ._options import (accounting_option, capture_option, jobs_option, lenient_option, listing_options,
                       openai_zdr_option, prices_option, routes_option, stated_zdr)
from ._priced import echo_capture_use, run_priced
from ._table_ids import widest
from ._sessions_fit import (DROPPABLE, LESSER, TITLE_MIN, WIDE_COLUMNS, boxed_lesser, empty_columns, id_room, id_text,
                            lesser_note, narrowed, short_headers, whole_fit, widened, without)
from ._views import sort_option
from ._when import time_options

__all__ = ["sessions_command"]

# In CSV the cost's unpriced count stands beside it (the cost a plain number, a lower bound when it is not 0),
# and "hit ratio" is the ratio itself, from 0 to 1 (as --json and `stats` CSV give it).
_CSV_COLUMNS = ("when (UTC)", "title", "project", "requests", "tokens", "hit ratio", "breaks", "cost", "unpriced",
                "first (UTC)", "format", "id")
# How far a child's title is indented below its parent's, at most (a deeper child: as deep as that).
_MAX_DEPTH = 8
# What is said of a log file that holds no byte, or blank lines only, in the place of its row.
_EMPTY_NOTE = "empty: DSH lists no session for it"
# How much of a log that could not be read is looked at, at a time, for a byte that is not blank.
_BLANK_CHUNK = 1 << 16


def _ratio(summary: SessionSummary) -> Amount:
    """A cache-hit ratio: ``48.0%`` in a table, the ratio itself from 0 to 1 in CSV (every digit,
    as --json gives it); when there is none (CSV: empty), ``?`` if it is unknown (accounting ran on
    requests none of which logged its prompt, as ``cache`` and ``stats`` count them unknown), ``-``
    where it does not apply (no accounting, no request, no prompt token)."""
    value = summary.hit_ratio
    unknown = summary.unpriced is not None and summary.requests > 0 and summary.prompt_tokens is None
    return Amount(value, ("?" if unknown else "-") if value is None else f"{value:.1%}")


def _tokens(summary: SessionSummary) -> Amount:
    """The session's tokens summed: ``?`` (CSV: empty, --json null) when none of its requests logged
    them, as every view shows an unknown sum (never 0); ``-`` for a session with no request."""
    value = (summary.tokens or {}).get("total")
    return Amount(value, ("?" if summary.requests else "-") if value is None else str(value))


def _count(value: int | None) -> Amount:
    """A count that was not measured (the breaks of an imported log, or without accounting): ``-``
    in a table, empty in CSV (never 0)."""
    return Amount(value, "-" if value is None else str(value))


def _cost(summary: SessionSummary) -> Amount:
    """The session's cost: ``$x``, ``≥$x`` when some requests are unpriced, ``$?`` when none was
    priced (:meth:`Costs.shown`), the exact amount in CSV (:class:`Amount`); ``-`` (CSV: empty,
    as every unknown amount) when cache accounting did not run."""
    if summary.unpriced is None:
        return Amount(summary.cost_usd, "-" if summary.cost_usd is None else Costs.text(summary.cost_usd))
    known = Costs.known(summary.cost_usd or 0.0, requests=summary.requests, unpriced=summary.unpriced)
    return Amount(known, Costs.shown(summary.cost_usd, requests=summary.requests, unpriced=summary.unpriced))


def _row(summary: SessionSummary, *, csv: bool = False, copies: bool = False, depth: int = 0) -> tuple[object, ...]:
    """A session's cells, of every wide column (:data:`WIDE_COLUMNS`); in CSV (``csv``) its unpriced count beside the cost (empty: no
    accounting) and its hit ratio from 0 to 1, a count or amount not measured (no accounting; the
    breaks of an imported log) empty, ``-`` in a table;
    the id as ``ID (PATH)`` when the session is listed from several files (``copies``); a child
    listed under its parent (``depth`` 1 and more) has its title led by its relation
    (:func:`_led`)."""
    unpriced = (Amount(summary.unpriced, str(summary.unpriced)),) if csv else ()
    title = _led(summary, depth) if depth else summary.title
    return (_minute(summary.last_activity), title, summary.project, summary.requests,
            _tokens(summary), _ratio(summary), _count(summary.breaks),
            _cost(summary), *unpriced, _minute(summary.first_activity), _format(summary),
            id_text(summary, copies=copies))


def _empty(path: str) -> bool:
    """Whether the log at ``path`` (one that could not be read) is empty: no byte, or blank lines
    only, as folder discovery takes it for a log all the same. DSH's session list passes such a file
    over (``session-persistence-jsonl`` ``listArtifacts``: "empty/half-written file"; a session DSH
    is creating), so `sessions` lists the others, where every other command refuses it. A file that
    cannot be opened is not empty: its error stands."""
    try:
        with open_regular(path) as handle:
            while chunk := handle.read(_BLANK_CHUNK):
                if chunk.strip():
                    return False
    except (OSError, UnreadableError):
        return False
    return True


def _minute(moment: float | None) -> str | None:
    """A log's own time as a table shows it, to the minute, UTC (``2026-12-05 19:46``)."""
    shown = iso_utc(moment)
    return shown[:16].replace("T", " ") if shown else None


def _format(summary: SessionSummary) -> str:
    """The log's format: a DSH log's version (``v0``), else the agent it was imported from (``codex``)."""
    return f"v{summary.format_version}" if summary.format == "dsh" else summary.format


def _total(summaries: Sequence[SessionSummary], *, csv: bool) -> tuple[object, ...]:
    """The totals row: requests, tokens, breaks and cost summed, the hit ratio over every session's
    prompt (cache reads over prompt tokens, of the sessions that logged both), ``total`` in the
    first column; a sum none of whose sessions measured it is unknown (``?``; breaks: ``-``), not 0."""
    def summed(values: Sequence[int | None]) -> int | None:
        known = [value for value in values if value is not None]
        return sum(known) if known else None

    read = [s for s in summaries if s.cache_read_tokens is not None and s.prompt_tokens]
    prompt = sum(s.prompt_tokens or 0 for s in read)
    costs = [s.cost_usd for s in summaries if s.cost_usd is not None]
    whole = SessionSummary("", "", None, None, None, None, "", 0, sum(s.requests for s in summaries),
                           tokens=None if (tokens := summed([(s.tokens or {}).get("total") for s in summaries])) is None
                           else {"total": tokens}, hit_ratio=sum(s.cache_read_tokens or 0 for s in read) / prompt if prompt else None,
                           breaks=summed([s.breaks for s in summaries]),
                           prompt_tokens=summed([s.prompt_tokens for s in summaries]),
                           cost_usd=usd_total(costs) if costs else None,  # to the nano-dollar, as --json
                           unpriced=summed([s.unpriced for s in summaries]))
    row = list(_row(whole, csv=csv))
    row[0], row[1:3], row[-3:] = "total", ["", ""], ["", "", ""]
    return tuple(row)


@click.command("sessions")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@listing_options
@lenient_option
@accounting_option(default=True, gives="the hit ratio, breaks and cost come from it", alias="--no-cost")
@prices_option
@capture_option
@routes_option
@openai_zdr_option
@jobs_option
@time_options
@sort_option(("time", "cost"), meaning="Order of the sessions: time newest first by the log's own last "
             "activity, cost the costliest first (\"$?\" and no cost last).")
def sessions_command(paths: tuple[str, ...], as_json: bool, lenient: bool, max_version: int, accounting: bool,
                     prices_path: str | None, capture: str | None, routes: str | None, openai_zdr: bool | None,
                     jobs: int, since: float | None, until: float | None, sort: str) -> int:
    """List sessions, newest first: title, project, when, requests, tokens, cache hits, breaks, cost.

    PATHS may be log files, session folders or a sessions root; with none, $DSH_HOME/sessions
    (else ~/.dsh/sessions) is read. Columns: "when (UTC)" is the log's own latest
    timestamp (UTC, not the file's mtime); "title" the session's latest session/title (a Claude Code
    transcript's own title: its last custom-title, else the summary of its conversation's end; a Codex
    rollout has none); "project" the header's cwd; "requests" the LLM requests; "hit ratio" the share of prompt tokens read from the
    cache (cache reads over prompt tokens, of the requests that logged both; --format csv: the
    ratio from 0 to 1 with every digit);
    "breaks" prefix-cache breaks ("-" for an imported log: break attribution needs a DSH log);
    "cost" the list-price cost, "≥$0.0123" (a lower bound) when some requests could not be priced
    and "$?" when none could (--json: cost_usd null, with unpriced_requests and cost_complete;
    --format csv: the amount, with "unpriced", the count of requests that could not be priced,
    beside); "id" the session id that `show`,
    `explain` and `render` accept (or any unique prefix of it, or `latest`); "tokens" the tokens of
    every billing bucket summed, "first (UTC)" the log's earliest timestamp and "format" its DSH log
    version ("v0"; an imported log: claude-code or codex). An unknown value shows "?" (the
    tokens and hit ratio of a session none of whose requests logged them: --json's tokens,
    prompt_tokens and actual_cache_read null, never 0, as `cache` and `stats` give them); a cell
    that does not apply shows "-" (without accounting: the hit ratio, breaks and cost). A last
    row, "total", sums requests, tokens, breaks and cost, its hit ratio that of every session's prompt
    (table and Markdown; --json and --format csv stay a row per session, as `requests`'). A terminal too narrow for every cell
    whole on one line in boxes (a table's borders) leaves out a column with no value in any row, then "format",
    "first (UTC)" and "tokens", in this order, before it shortens or wraps any other cell, at every width (the
    caption names them; Markdown and CSV keep every column). Then it first shows each id as its shortest unique prefix of 8
    characters or more past "session-" (session-86ef2d28, a UUID's cut at a group's end;
    session-sample-co…, any other's with "…", or with no mark on a stdout that cannot write it),
    which the caption says, while that keeps "project" (20 columns of it at least, a path cut
    in its middle) and every header's own words; then heads "requests" and
    "hit ratio" "reqs" and "hit"
    where their words would take a column's room, and leaves out a column with no value in any
    row, then "project"; a title then gives way before a number: it wraps between its words in
    20 columns or more, else is cut at its end with "…" (the caption says so; --json and a wider
    terminal show it whole), down to 8 columns. Only a terminal that has no room for every number
    even so leaves out "hit ratio" too, and cuts a title down to its header's 5 columns; one with no
    room even so shows a block of lines a row of the essential fields alone: "when (UTC)", "title"
    (wrapped between its words), "requests", "breaks", "cost" and "id" ("requests" and "breaks" are
    never left out). A date, a number or an id is never split over lines. --json prints
    one object per session, with first_activity_at and the whole id. A session found in several
    files (an export and its DSH folder, a copy) is read once when they hold the same lines, or
    one holds the other's and more (the file DSH reads, else the longer); copies that differ are
    listed from each, their id shown "ID (PATH)" as `usage` shows it. A note says which. A fork
    or subagent child is listed right under its parent, its title led by its relation ("└ fork",
    "└ subagent"; a child of a child indented two spaces more); one whose parent is not listed
    stays in its own place. --json and --format csv stay flat: a row per session in the --sort
    order, a child in its own place (--json: "parent_session_id" the parent's id and "relation" fork
    or subagent, null for a session with no parent). Costs are priced as `usage` and `cache`
    price them (--prices, --routes, pyproject's [tool.dsh-audit.prices]) and the breaks are those
    `breaks` lists: a log with a capture (--capture, or a wire.jsonl found beside it, as `check`
    finds it) is compared with what was sent too, and OpenAI's default cache retention follows
    --openai-zdr; a note says what --capture did to the costs, in the words of `cache` and `usage`
    ("N request(s) priced from the capture's usage"). A price, route or capture file that cannot
    be used is one error, exit 2. A log file that is empty (no byte, or blank lines only: a session
    DSH is writing) has no row, as DSH's own list has none: a note names it ("empty: DSH lists no
    session for it"), and the others are listed.

    --since and --until keep the sessions active in that window, by the log's own timestamps (a
    session whose last activity is at or after --since and whose first is before --until), and
    list each one whole: its requests, hit ratio, breaks and cost are the whole session's (`usage
    --since` sums only the requests sent in the window). Newest first by the last of the log's own
    timestamps (equal ones by path); --sort cost puts the costliest first (a lower bound "≥$x" by
    its x; "$?" and a session with no cost last, newest first among them).

    \b
    Example:
        dsh-audit sessions
        dsh-audit sessions sample_logs/sessions --json | jq -r .cost_usd.total
    """
    try:
        # a bad price or route file is one error, before any log is read (as usage and cache do)
        prices = load_prices(prices_path) if accounting else None
        zdr = stated_zdr(openai_zdr) if accounting else None  # and so is a bad pyproject.toml value
        routes_from(routes)
        logs = selected_logs(paths, since, until)
    except DshAuditError as exc:
        echo_error(exc)
        return EXIT_BAD_INPUT
    task = partial(summary_group, lenient=lenient, max_version=max_version, accounting=accounting, prices=prices,
                   routes=routes, capture=capture, zero_data_retention=zdr)
    status = EXIT_OK
    summaries: list[SessionSummary] = []
    said: set[str] = set()
    # with accounting, a log is accounted as it is read and its bar moves with its bytes, but the bytes of a group
    # read whole (a child with its parent, a log with a capture) count a share of its work (summary_group): the bar
    # shows the percentage and the time alone
    with progress_callback(len(logs), label="sessions", share=accounting) as report:
        found = run_groups(logs, task, jobs=jobs, progress=report) if prices is None else \
            run_priced(logs, task, prices=prices, jobs=jobs, progress=report)
        for item in found:
            shared = [line for line in item.warnings if _is_note(line)]
            for note in shared:
                if note not in said:  # the home's route layers: every session of the home shares them
                    said.add(note)
                    echo_note(note)
            for warning in item.warnings:
                if not _is_note(warning):  # a log's own warnings (torn tail, skipped line) name it already
                    echo_warning(warning if warning.startswith(f"{item.path}:") else f"{item.path}: {warning}")
            for note in () if isinstance(item, Failure) else item.notes:
                echo_note(f"{item.path}: {note}")
            if isinstance(item, Failure) and _empty(item.path):  # passed over, as DSH's own list does
                echo_note(f"{item.path}: {_EMPTY_NOTE}")
            elif isinstance(item, Failure):
                echo_error(item.error)
                status = EXIT_BAD_INPUT
            else:
                summaries.append(replace(item, notes=(*item.notes, *shared),
                                         warnings=tuple(w for w in item.warnings if not _is_note(w))))
    ordered = newest_first(_read_once(summaries, logs))
    if sort == "cost":  # stable: equal costs stay newest first
        ordered.sort(key=_costliest)
    _note_copies(ordered)
    if as_json:
        for summary in ordered:
            click.echo(dumps_line(summary.to_json()))
    elif ordered:
        csv = listing_format() == "csv"
        files: dict[str, set[str]] = {}
        for summary in ordered:
            files.setdefault(summary.session_id, set()).add(summary.path)
        copies = {session_id for session_id, found in files.items() if len(found) > 1}
        # CSV holds the JSON's rows, flat; a table or Markdown lists each child under its parent
        listed = [(s, 0) for s in ordered] if csv else list(_nested(ordered))
        rows = [_row(s, csv=csv, copies=s.session_id in copies, depth=depth) for s, depth in listed]
        total = _total(ordered, csv=csv)
        columns: tuple[str, ...] = _CSV_COLUMNS if csv else WIDE_COLUMNS
        droppable: tuple[str, ...] = DROPPABLE
        least, captions = {"title": TITLE_MIN}, list[str]()
        short: dict[str, str] | None = COUNT_SHORT
        wrap_last = False
        if listing_format() == "table":
            wide = rows
            left_out: Sequence[str] = ()
            empty: Sequence[str] = ()
            if not whole_fit([*rows, total]):  # the lesser columns out, and the others' cells shortened
                rows, droppable, least, captions = narrowed(without(rows, LESSER)[1], [s for s, _ in listed], copies)
                short = short_headers(droppable)
                rows = widened(rows, wide)  # print_table leaves out what it must, the lesser columns first
                if not droppable:  # every column kept, its cells fitted to it: the lesser ones (and any with no
                    # value) out before, whatever room a style leaves (compact, where narrowed() measured boxed)
                    least = {**least, "project": widest(row[2] for row in rows)}  # as narrowed() cut it
                    empty = empty_columns([*rows, total])
                    left_out = [c for c in LESSER if c not in empty]
            else:  # every other cell whole on its line: a lesser column goes before a title or path wraps
                droppable, short = (), None
                least = {"title": widest(row[1] for row in rows), "project": widest(row[2] for row in rows)}
                left_out, empty = boxed_lesser([*rows, total])  # and before the table's boxes do
            if left_out or empty:  # out before print_table lays the table out, named in one caption
                gone = (*left_out, *empty)
                (columns, rows), total = without(rows, gone), without([total], gone)[1][0]
                captions = [*captions, lesser_note(left_out, empty)]
            # left out first, named in the caption, before any cell wraps: a narrower terminal never shows a
            # column a wider one left out, and a block of lines a row holds the essential fields alone
            droppable, wrap_last = (*LESSER, *droppable), True
            least = {**least, "id": id_room(rows, [s for s, _ in listed], copies)}  # never cut itself
        if not csv:  # CSV holds the JSON's rows, and the JSON has no total (as `requests`): a consumer sums
            rows = [*rows, total]
        print_table(f"{len(ordered)} session(s), {'costliest' if sort == 'cost' else 'newest'} first", columns,
                    rows, droppable=droppable, caption="; ".join(captions) or None, least=least,
                    short=short, short_first=True, ids=("id",), wrap_last=wrap_last)
    if prices is not None:
        echo_capture_use(s.cost_summary for s in summaries)  # as `cache` and `usage` say it
        echo_caveats(prices)  # the costs' caveats, once a run: no session's own note
    return status


def _nested(ordered: Sequence[SessionSummary]) -> Iterator[tuple[SessionSummary, int]]:
    """``ordered`` as the table lists it, each with its depth: a fork or subagent child right under
    its parent (under the first row of a parent listed from several files), at depth 1, its own
    children under it at depth 2, and so on; siblings in the order of ``ordered``. A child whose
    parent is not listed (left out by --since, or never given) stays where ``ordered`` has it, at
    depth 0; so does the first listed of sessions whose parents form a loop (logs that name each
    other), the others under it."""
    listed = {s.session_id for s in ordered}
    children: dict[str, list[SessionSummary]] = {}
    for summary in ordered:
        parent = summary.parent_session
        if parent is not None and parent != summary.session_id and parent in listed:
            children.setdefault(parent, []).append(summary)
    nested = {id(child) for found in children.values() for child in found}
    reachable: set[int] = set()
    for top in ordered:
        if id(top) not in nested:
            for _ in _walk(top, children, reachable):
                pass
    placed: set[int] = set()
    for top in ordered:
        if id(top) not in placed and (id(top) not in nested or id(top) not in reachable):
            yield from _walk(top, children, placed)


def _walk(top: SessionSummary, children: dict[str, list[SessionSummary]],
          placed: set[int]) -> Iterator[tuple[SessionSummary, int]]:
    """``top`` at depth 0 and its descendants under it (``children``: by parent id), each at its
    depth, none of ``placed`` (which gets each one yielded). A loop, not recursion: a chain of
    subagents may be deeper than Python's stack."""
    stack = [(top, 0)]
    while stack:
        summary, depth = stack.pop()
        if id(summary) in placed:
            continue
        placed.add(id(summary))
        yield summary, depth
        stack.extend((child, depth + 1) for child in reversed(children.get(summary.session_id, [])))


def _led(summary: SessionSummary, depth: int) -> str:
    """The title cell of a child at ``depth`` under its parent: indented two spaces a level
    below the first (up to :data:`_MAX_DEPTH` levels) and led by its relation, ``└ fork`` or
    ``└ subagent``, then its title if it has one.

    Example:
        >>> from dsh_audit.cache import SessionSummary
        >>> child = SessionSummary("c.jsonl", "c", "review", None, None, None, "dsh", 0, 1, relation="fork")
        >>> _led(child, 1), _led(child, 2)
        ('└ fork review', '  └ fork review')
    """
    lead = "  " * (min(depth, _MAX_DEPTH) - 1) + f"└ {summary.relation or 'child'}"
    return f"{lead} {summary.title}" if summary.title else lead


def _costliest(summary: SessionSummary) -> tuple[bool, float]:
    """The order of ``--sort cost``: the session's cost, most first (a lower bound by its amount);
    an unknown cost, or none (no accounting), last."""
    value = _cost(summary).value
    return value is None, -float(value or 0.0)


def _is_note(line: str) -> bool:
    """Whether a line a session's warnings carry is a note (:class:`dsh_audit.session.RouteNote`:
    which layers of its DSH home gave the route configuration), said once per run on stderr and
    listed among its --json ``notes``."""
    return getattr(line, "level", "warning") == "note"


def _read_once(summaries: list[SessionSummary], logs: Sequence[object]) -> list[SessionSummary]:
    """``summaries`` with a session found in several files listed once, as ``latest`` and a
    session id read it (the one rule of copies, :func:`~dsh_audit.log.read_once`, over the files
    whose header names the session, in discovery's order): the file read, with the note naming the
    copies left out. Files of one session that differ otherwise stay, each listed (:func:`_note_copies`)."""
    place = {str(log): at for at, log in enumerate(logs)}
    files: dict[str, list[str]] = {}
    for summary in summaries:
        sid = summary.session_id
        if sid and not is_fixture_token(sid) and copy_name(Path(summary.path)) is not None:
            files.setdefault(sid, []).append(summary.path)
    dropped: set[str] = set()
    for paths in files.values():
        if len(paths) > 1:
            paths.sort(key=lambda path: place.get(path, len(place)))
            _read, left = read_once(paths, rank=lambda path: preferred(Path(path)))
            dropped.update(copy for _, copy, _why in left)
            for note in copy_notes(left, files=len(paths)):
                echo_note(note)
    return [summary for summary in summaries if summary.path not in dropped]


def _note_copies(summaries: list[SessionSummary]) -> None:
    """A note for each session found in more than one file (an export beside its DSH folder, a
    copy): each file is listed, since copies may differ, and the note says which they are."""
    files: dict[str, list[str]] = {}
    for summary in summaries:
        files.setdefault(summary.session_id, []).append(summary.path)
    # the words every command says of such a session (discovery's note, log/_copies.py)
    for note in copy_notes([], listed={session_id: paths for session_id, paths in files.items() if len(paths) > 1}):
        echo_note(note)


COMMANDS = [sessions_command]
