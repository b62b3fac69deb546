"""``dsh-audit requests`` and ``dsh-audit show``."""

from __future__ import annotations

import click

from .._batch import SessionOutcome, discover_logs, replay_path
from ..errors import UsageError
from ..report import dumps_line, dumps_pretty
from ..report.terminal import print_table, progress
from ._common import EXIT_BAD_INPUT, EXIT_OK, echo_error, echo_warning, json_option, lenient_option

__all__ = ["requests_command", "show_command"]

_COLUMNS = ("#", "turn/step/try", "kind", "header", "msgs", "input", "cache read", "output", "finish")


def _tokens(usage: dict | None, key: str) -> str:
    if not usage or key not in usage:
        return "?"
    return str(usage[key])


def _row(request) -> tuple:
    if request.turn is None and request.step is None:
        where = "-"
    elif request.step is None:
        where = f"{request.turn}/-"
    else:
        where = f"{request.turn}/{request.step}/{request.attempt}"
    header = "-" if request.header_seq is None else f"{request.header_seq} {request.header_reason or ''}".strip()
    usage = request.usage or request.message_usage
    finish = (request.finish or {}).get("kind", "") if isinstance(request.finish, dict) else ""
    return (request.index, where, request.kind, header, request.message_count,
            _tokens(usage, "inputTokens"), _tokens(usage, "cacheReadTokens"), _tokens(usage, "outputTokens"), finish)


def _report(outcome: SessionOutcome, *, as_json: bool) -> None:
    for warning in outcome.warnings:
        echo_warning(warning)
    if outcome.error is not None:
        echo_error(outcome.error)
        return
    if as_json:
        for request in outcome.requests:
            click.echo(dumps_line(request.summary()))
        return
    assert outcome.log is not None and outcome.result is not None
    notes = [f"{s['turn']}/{s['step']} at seq {s['step_start_seq']}: {s['note']}" for s in outcome.result.skipped_steps]
    caption = ("steps without a response: " + "; ".join(notes)) if notes else None
    print_table(f"{outcome.path}  session {outcome.log.header.id}", _COLUMNS,
                (_row(r) for r in outcome.requests), caption=caption)


@click.command("requests")
@click.argument("paths", nargs=-1, type=click.Path())
@json_option
@lenient_option
def requests_command(paths: tuple[str, ...], as_json: bool, lenient: bool, max_version: int) -> int:
    """List every LLM request each session log implies.

    PATHS may be log files (session.jsonl or session.jsonl.zstd), session folders or a sessions
    root; with none, $DSH_HOME/sessions (else ~/.dsh/sessions) is read. One row per dispatched
    attempt (retries included) plus compaction and title calls.

    \b
    Example:
        dsh-audit requests sample_logs/ --json | jq .messages_sha256
    """
    notes: list[str] = []
    logs = discover_logs(paths, notes=notes)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    status = EXIT_OK
    with progress(logs, label="replaying") as items:
        for path in items:
            outcome = replay_path(path, lenient=lenient, max_version=max_version)
            _report(outcome, as_json=as_json)
            if outcome.error is not None:
                status = EXIT_BAD_INPUT
    return status


@click.command("show")
@click.argument("path", type=click.Path())
@click.argument("index", type=int)
@lenient_option
@click.option("--compact", is_flag=True, help="Exact JSON.stringify output instead of indented JSON.")
def show_command(path: str, index: int, lenient: bool, max_version: int, compact: bool) -> int:
    """Print request INDEX of one session log in full as JSON (messages, header, usage).

    INDEX is the '#' column of `dsh-audit requests`.

    \b
    Example:
        dsh-audit show sample_logs/tools/session.jsonl 2
    """
    logs = discover_logs([path])
    if len(logs) != 1:
        raise UsageError(f"expected one session log, found {len(logs)}", path=path,
                         hint="point at a single session.jsonl[.zstd] file")
    outcome = replay_path(logs[0], lenient=lenient, max_version=max_version)
    for warning in outcome.warnings:
        echo_warning(warning)
    if outcome.error is not None:
        raise outcome.error
    if not 0 <= index < len(outcome.requests):
        raise UsageError(f"request {index} does not exist: the log has {len(outcome.requests)} request(s)",
                         path=str(logs[0]), hint="run `dsh-audit requests` to see the indexes")
    request = outcome.requests[index].to_json()
    click.echo(dumps_line(request) if compact else dumps_pretty(request))
    return EXIT_OK
COMMANDS = [requests_command, show_command]
