"""``dsh-audit breaks`` and ``dsh-audit explain``: prefix-cache breaks and their causes."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from ..attribution import SessionAttribution, Transition, attribute_paths, format_transition
from ..capture import capture_for
from ..session import Failure, GroupResult
from ..report import dumps_line
from ..report.terminal import Amount, fit_lines, page_listing, print_table, progress_callback
from ._common import (EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_OK, RequestCommand, attachments_option, capture_option, echo,
                      echo_error, echo_warning, engine_options, file_size, jobs_option, json_option, lenient_option,
                      listing_options, log_progress, newest_first, no_such_request, one_log, pager_option, request_position, routes_option,
                      selected_logs, session_paths, session_title, time_options)

__all__ = ["breaks_command", "explain_command"]

_COLUMNS = ("#", "vs", "relation", "verdict", "cause", "fields", "evidence seqs", "first divergence")
# Left out, in this order, while a narrow terminal cannot show the table with whole words
# (`explain` shows both for one request).
_DROPPABLE = ("first divergence", "relation")


def _attribute(logs: Sequence[Path | str], *, lenient: bool, max_version: int, routes: str | None,
               capture: str | None, jobs: int = 1, engine: str = "local", scheduler: str | None = None,
               progress: Callable[[int, int], None] | None = None) -> tuple[list[SessionAttribution], list[Failure]]:
    """:func:`dsh_audit.attribution.attribute_paths` of the logs, each log's route-file warnings
    printed once (before its results: they say which window the bodies were rendered with)."""
    warnings: dict[str, tuple[str, ...]] = {}

    def keep_warnings(result: GroupResult[SessionAttribution]) -> None:
        warnings.update(result.route_warnings)

    found = attribute_paths(logs, lenient=lenient, max_version=max_version, jobs=jobs, engine=engine,
                            scheduler=scheduler, progress=progress, routes=routes, on_group=keep_warnings,
                            capture=capture)
    for path in logs:
        for warning in warnings.get(os.fspath(path), ()):
            echo_warning(warning)
    return found


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


def _divergence(t: Transition) -> str:
    d = t.first_divergence
    if d is None:
        return ""
    text = d.segment + (f" msg {d.message_index}" if d.message_index is not None else "")
    if d.offset is not None:
        text += f" @{d.offset}"
    if d.body_offset is not None:
        text += f" body@{d.body_offset}"
    return text


def _row(t: Transition) -> tuple[object, ...]:
    # a number (CSV: plain, empty when there is none), or text when it is a parent's request
    previous: object = Amount(t.previous, "-" if t.previous is None else str(t.previous))
    if t.previous is not None and t.previous_session_id not in (None, t.session_id):
        previous = f"{t.previous} ({t.previous_session_id})"
    cause = (t.cause or "") + (f" +{','.join(t.other_causes)}" if t.other_causes else "")
    return (t.request, previous, t.relation, t.verdict, cause, ", ".join(t.field_names),
            " ".join(map(str, t.evidence_seqs)), _divergence(t))


def _json_row(path: str | None, t: Transition) -> dict[str, Any]:
    """A ``breaks --json`` row: the log's path first (as in `cache`, `sessions` and `check`: two
    files may hold one session id), the transition's JSON, and ``unexplained`` after its causes:
    whether it is a break the log does not explain (:attr:`Transition.is_unexplained`, as
    ``--fail-on unexplained``, `cache` and `check` count them)."""
    row: dict[str, Any] = {"path": path}
    for key, value in t.to_json().items():
        row[key] = value
        if key == "other_causes":
            row["unexplained"] = t.is_unexplained
    row.setdefault("unexplained", t.is_unexplained)
    return row


@click.command("breaks")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--all", "show_all", is_flag=True,
              help="List every request's transition (extensions, cache-safe changes), not only breaks.")
@listing_options
@capture_option
@routes_option
@attachments_option
@lenient_option
@click.option("--fail-on", type=click.Choice(["unexplained", "any", "never"]), default="unexplained",
              show_default=True,
              help="Which listed breaks make the exit code 1: those without an explanation (as `cache` "
                   "and `check` count them), any break, or none.")
@jobs_option
@time_options
@engine_options
def breaks_command(paths: tuple[str, ...], show_all: bool, as_json: bool, capture: str | None, fail_on: str,
                   routes: str | None, lenient: bool, max_version: int, jobs: int, since: float | None, until: float | None, engine: str,
                   scheduler: str | None) -> int:
    """List every prefix-cache break between consecutive requests, with its cause and evidence.

    PATHS may be log files, session folders, a sessions root (default $DSH_HOME/sessions), or a
    session id, a unique id prefix or `latest` (looked up there). Each PATH's logs are listed as
    `sessions` lists them, the newest last activity first by the logs' own timestamps; the PATHS in
    the order given. Each request is compared with the one whose cache it could reuse: the previous loop step, the
    attempt it retries, the parent request of a fork or subagent child (the parent log is found
    beside the child), the loop request a compaction call summarises, the previous title or
    web-search call. A break names its cause (header_change, compaction, prune, plugin_replace,
    resume, fork, subagent, retry, title_input, search_input, unexplained, unrecorded_mutation), the
    header fields that changed, the log seqs that prove it and where the prompts first differ.
    A log with a capture (--capture, or a wire.jsonl found beside it, as `check` finds it) is
    compared with what was sent too: captured bodies that break the prefix where the log records
    nothing are an unrecorded_mutation break.

    Columns: "#" the request (the INDEX of `requests`); "vs" the request it is compared with (with
    its session id when that is a parent's); "relation" how the two relate (step, retry, resume,
    fork, subagent, compaction_call...); "verdict" break (with --all also first, extension,
    cache_safe_change);
    "cause" the cause (+ any other at the same request); "fields" the header fields that changed;
    "evidence seqs" the log seqs that prove it; "first divergence" where the prompts first differ
    (the segment, the message index, "@N" the byte offset in the segment, "body@N" in the
    rendered body). A narrow terminal leaves out a column with no value in any row, then "first
    divergence", then "relation".

    With --json, one object per listed transition: "path" the log it is from, its session id,
    request, cause and evidence, and "unexplained" true for a break the log does not explain
    (cause unexplained or unrecorded_mutation, as --fail-on unexplained counts them).

    Exit 0 when every break is explained, 1 when a break is unexplained (--fail-on any: when any
    break is listed), 2 on bad input.

    \b
    Example:
        dsh-audit breaks --json | jq 'select(.unexplained)'
        dsh-audit breaks --since 7d --jobs 0
    """
    given = session_paths(paths)
    logs = newest_first(selected_logs(given, since, until), given if paths else ())  # as `sessions` lists them
    if not logs:
        return EXIT_OK
    with progress_callback(len(logs), label="breaks") as report_progress:
        attributions, failures = _attribute(logs, lenient=lenient, max_version=max_version, jobs=jobs,
                                            engine=engine, scheduler=scheduler, progress=report_progress,
                                            routes=routes, capture=capture)
    status = EXIT_OK
    for outcome in failures:
        for warning in outcome.warnings:
            echo_warning(warning)
        assert outcome.error is not None
        echo_error(outcome.error)
        status = EXIT_BAD_INPUT
    found = failing = False
    for attribution in attributions:
        rows = [t for t in attribution.transitions if show_all or t.verdict == "break"]
        found = found or any(t.verdict == "break" for t in rows)
        failing = failing or any(t.is_break and (fail_on == "any" or t.is_unexplained)
                                 for t in rows if fail_on != "never")
        if as_json:
            for t in rows:
                click.echo(dumps_line(_json_row(attribution.path, t)))
        elif rows:
            title = session_title(attribution.path or "-", attribution.session_id)
            print_table(title, _COLUMNS, (_row(t) for t in rows), droppable=_DROPPABLE)
    if not as_json and not found and attributions:  # nothing to say when every log failed
        echo("no prefix-cache breaks")
    if status == EXIT_OK and failing:
        status = EXIT_FINDINGS
    return status


@click.command("explain", cls=RequestCommand)
@click.argument("path", type=click.Path())
@click.argument("index", type=int)
@json_option
@capture_option
@routes_option
@attachments_option
@lenient_option
@pager_option("the answer")
def explain_command(path: str, index: int, as_json: bool, capture: str | None, routes: str | None, lenient: bool,
                    max_version: int) -> int:
    """Say why request INDEX of one log did or did not reuse the previous request's cache.

    INDEX is the '#' column of `dsh-audit requests`; a negative INDEX counts from the end (-1 is
    the last request, -2 the one before) and may come before or after PATH. The answer names the
    request it is compared with, the verdict, the cause, the changed header fields and quotes the evidence events
    (type, seq and the data that matters). A log with a capture (--capture, or a wire.jsonl found
    beside it, as `check` finds it) is compared with what was sent too, as `breaks` compares it.

    \b
    Example:
        dsh-audit explain ~/.dsh/sessions/--home-me-proj--/session-1 8
        dsh-audit explain latest -1
    """
    logs = [one_log(path)]
    # The bar's work: the log's bytes, then, with a capture, loading it and comparing each request's
    # captured body with the one before (as much again as the capture, as `diff` weighs it). The
    # comparison reports nothing as it goes: the bar waits below 100% until it is done.
    compared = 2 * _capture_size(capture_for(logs[0], capture))
    with log_progress(logs, label="explain", extra=compared) as advance:
        attributions, failures = _attribute(logs, lenient=lenient, max_version=max_version, routes=routes,
                                            capture=capture)
        advance(compared)
    for outcome in failures:
        for warning in outcome.warnings:
            echo_warning(warning)
        assert outcome.error is not None
        raise outcome.error
    attribution = attributions[0]
    requests = sorted(t.request for t in attribution.transitions)
    position = request_position(index, len(requests))
    try:
        transition = attribution.transition(index if position is None or index >= 0 else requests[position])
    except KeyError:
        raise no_such_request(index, len(requests), logs[0]) from None
    if as_json:
        page_listing()
        click.echo(dumps_line(transition.to_json()))
    else:
        for line in fit_lines(format_transition(transition)):  # the first line starts the pager
            echo(line)
    return EXIT_OK


COMMANDS = [breaks_command, explain_command]
