"""``dsh-audit breaks`` and ``dsh-audit explain``: prefix-cache breaks and their causes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .._lazy import LazyModule
from ..attribution import Transition, format_transition
from ..capture import capture_for
from ..errors import DshAuditError
from ..report import dumps_line
from ..report.terminal import (About, fit_lines, listing_format, output_width, page_listing, print_table,
                               progress_callback, value_cut)
from ._break_reading import _attribute, _Attributed
from ._break_rows import _caption, _json_row, _row, _short_parents, _total_row
from ._common import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK, echo, echo_error, echo_warning
from ._logs import file_size, log_progress, newest_first, one_log, selected_logs, session_paths
from ._one_request import REQUEST_INDEX, RequestCommand, no_such_request, request_position
from ._options import (accounting_option, adapter_option, attachments_option, breaks_fail, capture_option,
                       engine_options, fail_on_option, jobs_option, json_option, lenient_option, listing_options,
                       openai_zdr_option, pager_option, prices_option, routes_option, stated_zdr)
from ._output import session_heading, session_title
from ._when import time_options

if TYPE_CHECKING:
    from .. import cache
    from ..cache import PriceBook

__all__ = ["breaks_command", "explain_command"]


if not TYPE_CHECKING:
    # ``breaks`` without --accounting reads no cache accounting and loads none (start-up, issue 11);
    # ``explain`` and ``breaks --accounting`` read it through this name
    cache = LazyModule("dsh_audit.cache")


#: ``breaks``'s columns without --accounting, and the ones it leaves out first on a narrow terminal.
_PLAIN_COLUMNS = ("#", "vs", "relation", "verdict", "cause", "fields", "evidence seqs", "first divergence")
_PLAIN_DROPPABLE = ("first divergence", "relation", "evidence seqs")

# With --accounting: "lost tokens (cost)", what the request lost of the cache, as `cache` judged it (usage's column),
# beside what it is measured from (issue 11): the "reusable" and "actual" cache reads, as `cache`'s timeline names them.
_COLUMNS = ("#", "vs", "relation", "verdict", "cause", "reusable", "actual", "lost tokens (cost)", "fields",
            "evidence seqs", "first divergence")
# In CSV the lost tokens and what they cost are two plain columns, as in `usage`.
_CSV_LOST = ("lost tokens", "lost cost")
# Left out, in this order, while a narrow terminal cannot show the table with whole words
# (`explain` shows them all for one request): what a break cost stays, beside its reusable base ("actual" goes
# first: lost <= reusable - actual, a drop within the rule's tolerance not counted).
_DROPPABLE = ("actual", "first divergence", "relation", "evidence seqs")


#: A --all table's caption when its log has no break (every log's table says it, none is silent).
_NO_BREAK = "no prefix-cache break in this log"


def _print_breaks(item: _Attributed, transitions: Iterable[Transition], *, cost: bool) -> None:
    """One log's table: a row per listed transition, then (``cost``) the total of what they lost;
    a table of transitions none of which is a break (--all) says so in its caption."""
    listed = list(transitions)
    attribution = item.attribution
    title = session_title(attribution.path or "-", attribution.session_id)
    about = About(attribution.path or "", attribution.session_id, "breaks")  # CSV: log and session columns
    none = None if any(t.verdict == "break" for t in listed) else _NO_BREAK
    if not cost:
        rows = [_row(t, None) for t in listed]
        names, short = _short_parents(listed, _PLAIN_COLUMNS, rows, _PLAIN_DROPPABLE)
        if names is not None:
            rows = [_row(t, None, names=names) for t in listed]
        print_table(title, _PLAIN_COLUMNS, rows, droppable=_PLAIN_DROPPABLE, about=about,
                    caption="; ".join(text for text in (none, short) if text) or None)
        return
    losses = [item.lost(t) for t in listed]
    csv = listing_format() == "csv"
    columns = list(_COLUMNS)
    if csv:
        at = columns.index("lost tokens (cost)")
        columns[at:at + 1] = _CSV_LOST
    rows = [_row(t, lost, csv=csv) for t, lost in zip(listed, losses)]
    names, short = _short_parents(listed, columns, rows, _DROPPABLE)
    if names is not None:
        rows = [_row(t, lost, csv=csv, names=names) for t, lost in zip(listed, losses)]
    if not csv:  # CSV holds the JSON's rows, and the JSON has no total
        rows.append(_total_row(losses))
    caption = "; ".join(text for text in (None if csv else none, None if csv else _caption(losses), short)
                        if text) or None
    print_table(title, columns, rows, droppable=_DROPPABLE, caption=caption, about=about)


def _list_breaks(attributed: Sequence[_Attributed], *, show_all: bool, as_json: bool, cost: bool,
                 fail_on: str) -> bool:
    """Each log's listed transitions (``show_all``: every one, else the breaks) as JSON lines or a
    table, then what no table said (:func:`_unlisted`); whether one of them fails ``--fail-on``."""
    failing = tables = False
    clean: list[_Attributed] = []  # the logs with no break
    for item in attributed:
        attribution = item.attribution
        rows = [t for t in attribution.transitions if show_all or t.verdict == "break"]
        if not any(t.verdict == "break" for t in rows):
            clean.append(item)
        failing = failing or breaks_fail(fail_on, breaks=sum(t.is_break for t in rows),
                                         unexplained=sum(t.is_unexplained for t in rows))
        if as_json:
            for t in rows:
                click.echo(dumps_line(_json_row(attribution.path, t, item.lost(t) if cost else None)))
        elif rows:
            _print_breaks(item, rows, cost=cost)
            tables = listing_format() != "csv"  # CSV writes no caption: the line says it
    if not as_json and not (show_all and tables):  # with --all each log's table says it has no break
        for line in _unlisted(attributed, clean, show_all=show_all):
            echo(line)
    return failing


def _unlisted(attributed: Sequence[_Attributed], clean: Sequence[_Attributed], *, show_all: bool) -> list[str]:
    """What the tables leave unsaid of the logs read (``attributed``; nothing when every log
    failed) with no break (``clean``): of one, the log and that it has none; of several, how many
    were read and how many had no break (without ``show_all``, no table of theirs is listed).

    Example:
        >>> _unlisted([], [], show_all=False)
        []
    """
    if not clean:
        return []
    if len(attributed) == 1:
        attribution = clean[0].attribution
        return [*session_heading(attribution.path or "-", attribution.session_id), "no prefix-cache breaks"]
    if len(clean) == len(attributed):
        return [f"no prefix-cache breaks in the {len(attributed)} sessions read"]
    unlisted = "" if show_all else ", not listed (--all lists them)"
    return [f"{len(attributed)} sessions read; {len(clean)} with no prefix-cache break{unlisted}"]


def _capture_size(capture: Path | None) -> int:
    """The bytes of a capture (a file, or a folder of body files: theirs); 0 for none or one that
    cannot be looked at (attribution says why)."""
    if capture is None:
        return 0
    try:
        if capture.is_dir():
            return sum(file_size(item) for item in capture.iterdir() if item.is_file())
    except OSError:
        return 0
    return file_size(capture)

@click.command("breaks")
@click.argument("paths", nargs=-1, type=click.Path(readable=False))
@click.option("--all", "show_all", is_flag=True,
              help="List every request's transition (extensions, cache-safe changes), not only breaks.")
@listing_options
@accounting_option(default=False, gives="what each break cost (the cache reads it lost, priced) and a total "
                   "row come from it; implied by --prices and --openai-zdr", alias="--cost")
@prices_option
@openai_zdr_option
@capture_option
@adapter_option(expose=False)
@routes_option
@attachments_option
@lenient_option
@fail_on_option
@jobs_option
@time_options
@engine_options
def breaks_command(paths: tuple[str, ...], show_all: bool, as_json: bool, accounting: bool, prices_path: str | None,
                   openai_zdr: bool | None, capture: str | None, fail_on: str, routes: str | None, lenient: bool,
                   max_version: int, jobs: int, since: float | None, until: float | None, engine: str,
                   scheduler: str | None) -> int:
    """List every prefix-cache break between consecutive requests, with its cause and evidence.

    PATHS may be log files, session folders, a sessions root (default $DSH_HOME/sessions), or a
    session id, a unique id prefix or `latest` (looked up there). The logs are listed newest first
    by the log file's modification time when no PATH is given (equal ones by path; ordering reads
    no log), else the PATHS in the order given, each one's logs by path (`sessions` orders by the
    logs' own timestamps). Each request is compared with the one whose cache it could reuse: the previous loop step, the
    attempt it retries, the parent request of a fork or subagent child (the parent log is found
    beside the child), the loop request a compaction call summarises, the previous title or
    web-search call. A break names its cause (header_change, compaction, prune, plugin_replace,
    resume, fork, subagent, retry, title_input, search_input, unexplained, unrecorded_mutation), the
    header fields that changed, the log seqs that prove it and where the prompts first differ.
    A log with a capture (--capture, or a wire.jsonl found beside it, as `check` finds it) is
    compared with what was sent too: captured bodies that break the prefix where the log records
    nothing are an unrecorded_mutation break.

    Columns: "#" the request (the INDEX of `requests`); "vs" the request it is compared with (with
    its session id when that is a parent's: its shortest unique prefix, which `show` and `explain`
    accept, when the table would not fit with the whole id, as the caption says); "relation" how the two relate (step, retry, resume,
    fork, subagent, compaction_call...); "verdict" break (with --all also first, extension,
    cache_safe_change);
    "cause" the cause (+ any other at the same request); "fields" the header fields that changed;
    "evidence seqs" the log seqs that prove it; "first divergence" where the prompts first differ
    (the segment, the message index, "@N" the byte offset in the segment, "body@N" in the
    rendered body). A narrow terminal leaves out a column with no value in any row, then "first
    divergence", then "relation", then "evidence seqs" (`explain` shows them all), and shows a
    parent's session id as its shortest unique prefix before it leaves out a column with a value;
    a run's tables share one style, and with --all a log's table whose requests hold no break says
    so in its caption; without --all such a log has no table: a last line names it (one log read)
    or counts them with the logs read. In --format csv each row's "log" and "session" columns name
    its log, as `requests` and `cache` do.

    With --accounting (implied by --prices and --openai-zdr), what each break cost too: it reads the
    log's cache accounting as well, so it takes as long as `cache`. Columns "reusable" and
    "actual" after "cause": the cache reads the request could have had (had the previous request's
    prefix been kept) and those it had, as `cache`'s timeline names them ("?" when not logged; a
    narrow terminal leaves "actual" out first); then "lost tokens (cost)":
    the cache reads the request should have had and did not, and what they cost
    over cache reads at its rate (the "lost" of its row in `cache`'s timeline, every cause, priced
    as `cache` prices it; "?" when its cache reads were not logged, "$?" when no rate prices it,
    never $0 for unknown; in --format csv two columns, "lost tokens" and "lost cost"). lost <=
    reusable - actual: a drop counts only past the rule's tolerance (DeepSeek: one 128-token unit or
    10 %) and nothing under its minimum prompt (docs/cache-accounting.md, Classifications). A last row,
    "total" (under "cause"), summing what the listed requests lost ("≥$": a lower bound, a
    request's cost unknown; not in --format csv, whose rows are the JSON's).

    With --json, one object per listed transition: "path" the log it is from, its session id,
    request, cause and evidence, and "unexplained" true for a break the log does not explain
    (cause unexplained or unrecorded_mutation, as --fail-on unexplained counts them); with --accounting
    also "reusable_cache_read" and "actual_cache_read" (what the loss is measured from, as `cache
    --json` names them), "uncounted_tokens" and "uncounted_reason" (the part of the drop from
    reusable to actual not counted as lost, and why: "tolerance", else null),
    "lost_tokens", "lost_cost_usd" (null when not known) and "unpriced_reason" (why they are not
    known, else null).

    Exit 0 when every break is explained, 1 when a break is unexplained (--fail-on any: when any
    break is listed; --fail-on never: not for a break), 2 on bad input; `cache --fail-on` exits
    alike on the same logs.

    \b
    Example:
        dsh-audit breaks --json | jq 'select(.unexplained)'
        dsh-audit breaks --since 7d --jobs 0
    """
    given = session_paths(paths)
    logs = newest_first(selected_logs(given, since, until), given if paths else ())  # the documented listing order (newest_first)
    if not logs:
        return EXIT_OK
    with_cost = accounting or prices_path is not None or openai_zdr is not None
    prices: PriceBook | None = None
    zdr: bool | None = None
    if with_cost:
        try:
            prices = cache.load_prices(prices_path)  # a bad price file is one error, before any log is read
            zdr = stated_zdr(openai_zdr)  # and so is a bad pyproject.toml value
        except DshAuditError as exc:
            echo_error(exc)
            return EXIT_BAD_INPUT
    with progress_callback(len(logs), label="breaks") as report_progress:
        attributed, failures = _attribute(logs, lenient=lenient, max_version=max_version, jobs=jobs,
                                          engine=engine, scheduler=scheduler, progress=report_progress,
                                          routes=routes, capture=capture, prices=prices, zero_data_retention=zdr,
                                          every=show_all)
    status = EXIT_OK
    for outcome in failures:
        for warning in outcome.warnings:
            echo_warning(warning)
        assert outcome.error is not None
        echo_error(outcome.error)
        status = EXIT_BAD_INPUT
    failing = _list_breaks(attributed, show_all=show_all, as_json=as_json, cost=with_cost, fail_on=fail_on)
    if status == EXIT_OK and failing:
        status = EXIT_FINDINGS
    return status


@click.command("explain", cls=RequestCommand)
@click.argument("path", type=click.Path(readable=False))
@click.argument("index", type=REQUEST_INDEX)
@json_option
@prices_option
@openai_zdr_option
@capture_option
@adapter_option(expose=False)
@routes_option
@attachments_option
@lenient_option
@pager_option("the answer")
def explain_command(path: str, index: int, as_json: bool, prices_path: str | None, openai_zdr: bool | None,
                    capture: str | None, routes: str | None, lenient: bool, max_version: int) -> int:
    """Say why request INDEX of one log did or did not reuse the previous request's cache.

    INDEX is the '#' column of `dsh-audit requests`; a negative INDEX counts from the end (-1 is
    the last request, -2 the one before) and may come before or after PATH. The answer names the
    request it is compared with, the verdict, the cause, the changed header fields and quotes the evidence events
    (type, seq and the data that matters). A log with a capture (--capture, or a wire.jsonl found
    beside it, as `check` finds it) is compared with what was sent too, as `breaks` compares it.
    A break says what it cost: the cache reads its request should have had and did not, of the
    reusable reads they are measured from and those it read ("of 7680 reusable, read 4800"; a drop
    within the rule's tolerance is said and not counted: "of 128 reusable, read 0: 128 within the
    rule's tolerance, not counted as lost"), and what they cost over cache reads at its rate, as
    `cache` counts them (--prices, --openai-zdr).
    --json prints the object `breaks --json --accounting` gives for the transition ("path",
    "request", "unexplained", ...), with "reusable_cache_read", "actual_cache_read",
    "uncounted_tokens", "uncounted_reason", "lost_tokens", "lost_cost_usd" (null when not known) and
    "unpriced_reason" (why, else null) for any request.

    \b
    Example:
        dsh-audit explain ~/.dsh/sessions/--home-me-proj--/session-1 3
        dsh-audit explain latest -1
    """
    logs = [one_log(path)]
    prices = cache.load_prices(prices_path)  # a bad price file is one error, before the log is read
    zdr = stated_zdr(openai_zdr)
    # The bar's work: the log's bytes, then, with a capture, loading it and comparing each request's
    # captured body with the one before (as much again as the capture, as `diff` weighs it). The
    # comparison reports nothing as it goes: the bar waits below 100% until it is done.
    compared = 2 * _capture_size(capture_for(logs[0], capture))
    with log_progress(logs, label="explain", extra=compared) as advance:
        attributed, failures = _attribute(logs, lenient=lenient, max_version=max_version, routes=routes,
                                          capture=capture, prices=prices, zero_data_retention=zdr, every=True)
        advance(compared)
    for outcome in failures:
        for warning in outcome.warnings:
            echo_warning(warning)
        assert outcome.error is not None
        raise outcome.error
    item = attributed[0]
    attribution = item.attribution
    requests = sorted(t.request for t in attribution.transitions)
    position = request_position(index, len(requests))
    try:
        transition = attribution.transition(index if position is None or index >= 0 else requests[position])
    except KeyError:
        raise no_such_request(index, len(requests), logs[0]) from None
    lost = item.lost(transition)
    if as_json:
        page_listing()
        click.echo(dumps_line(_json_row(attribution.path, transition, lost)))  # as `breaks --json` rows
    else:
        added = [lost.sentence()] if transition.is_break else []
        for line in fit_lines(format_transition(_ids_cut(transition), added=added)):  # the first line starts the pager
            echo(line)
    return EXIT_OK


def _ids_cut(transition: Transition) -> Transition:
    """``transition`` with its session ids as explain's text names them (:func:`value_cut`: a
    20,000-character id is one line, not hundreds; room for its indent and a ``:``, so that it is
    never folded); ``--json`` gives them whole."""
    room = output_width() - 4
    previous = transition.previous_session_id
    return replace(transition, session_id=value_cut(transition.session_id, room),
                   previous_session_id=None if previous is None else value_cut(previous, room))


COMMANDS = [breaks_command, explain_command]
