"""``dsh-audit watch``: each request's cache verdict and cost while sessions run, breaks at once."""

from __future__ import annotations

import math
import shlex
import signal
import subprocess
import threading
import time
from types import FrameType
from typing import Any

import click

from ..cache import Costs, load_prices
from ..errors import DshAuditError
from ..report import dumps_line
from ..report.terminal import fit_lines
from ..session import routes_from
from ..watch import WatchNote, WatchRequest, WatchSummary, watch
from ._common import (EXIT_BAD_INPUT, EXIT_OK, _parse_since, echo, echo_error, echo_warning, lenient_option,
                      openai_zdr_option, prices_option, routes_option, stated_zdr)

__all__ = ["watch_command"]


class _Seconds(click.FloatRange):
    """A non-negative, finite number of seconds: ``inf`` or ``nan`` would wait forever (leave the
    option out for that)."""

    name = "number of seconds"

    def __init__(self) -> None:
        super().__init__(min=0)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        seconds: float = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a finite number of seconds (leave the option out to watch until Ctrl-C)",
                      param, ctx)
        return seconds


SECONDS = _Seconds()


def _tokens(value: int | None) -> str:
    return "?" if value is None else f"{value:,}"


def format_watch_line(item: WatchRequest) -> str:
    """One request as one plain line: time, session, position, model, tokens, cost, verdict."""
    when = time.strftime("%H:%M:%S", time.localtime(item.seen))
    who = item.title or item.session_id.removeprefix("session-")[:8]
    where = f"t{item.turn if item.turn is not None else '-'}/s{item.step if item.step is not None else '-'}" \
            f"/a{item.attempt}" if item.kind == "loop" else item.kind
    cost = Costs.shown(item.cost, requests=1, unpriced=item.cost is None)
    line = (f"{when}  {who}  #{item.index} {where}  {item.model or '?'}  prompt {_tokens(item.prompt_tokens)}  "
            f"cache {_tokens(item.actual)}/{_tokens(item.expected)} expected  {cost}  {item.classification}")
    if item.is_break:
        line += f"  BREAK {item.cause or 'unexplained'}"
        if item.fields:
            line += f" fields {','.join(item.fields)}"
        if item.evidence_seqs:
            line += f" evidence seqs {' '.join(map(str, item.evidence_seqs))}"
    return line


def _on_break(command: list[str], item: WatchRequest) -> None:
    """Run ``command`` with the break as JSON on stdin, in the background (never through a shell)."""
    def run() -> None:
        try:
            subprocess.run(command, input=dumps_line(item.to_json()).encode(), timeout=60, check=False)
        except (OSError, subprocess.SubprocessError) as exc:
            echo_warning(f"--on-break {command[0]}: {exc}")

    threading.Thread(target=run, name="on-break", daemon=True).start()


@click.command("watch")
@click.argument("path", required=False, type=click.Path())
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines (requests, breaks, notes, a summary).")
@click.option("--since", metavar="WHEN", default=None, callback=_parse_since,
              help="Also print the history of logs active at or after WHEN by their own timestamps (the "
                   "file's mtime only for a log that records none): a date, a date-time, or an age such as "
                   "30m or 2h; without it only what happens from now on is printed.")
@click.option("--on-break", metavar="CMD", default=None,
              help="Run CMD (split like a shell would, run without one) for every break, with the break "
                   "as one JSON line on its stdin.")
@click.option("--idle-exit", type=SECONDS, default=None, metavar="SECONDS",
              help="Stop once no followed log has grown for SECONDS.")
@click.option("--exit-after", type=SECONDS, default=None, metavar="SECONDS",
              help="Stop after SECONDS.")
@click.option("--settle", type=SECONDS, default=10.0, show_default=True, metavar="SECONDS",
              help="How long an unfinished last record may stay unchanged before it is reported as a "
                   "torn tail (a writer that stops also makes it one).")
@click.option("--polling", is_flag=True,
              help="Look at the files every 0.05-0.5 s instead of using file-system notifications "
                   "(used when the watchdog package is installed); the first line says which is used.")
@routes_option
@prices_option
@openai_zdr_option
@lenient_option
def watch_command(path: str | None, as_json: bool, since: float | None, on_break: str | None,
                  idle_exit: float | None, exit_after: float | None, settle: float, polling: bool,
                  routes: str | None, prices_path: str | None, openai_zdr: bool | None, lenient: bool,
                  max_version: int) -> int:
    """Follow running sessions: every new request's cache verdict and cost, every break at once.

    PATH is a log, a session folder or a sessions root (default $DSH_HOME/sessions); sessions
    that start later are followed too. Only new bytes are read: a line or zstd frame still being
    written is waited for. Each request prints its time, session, turn/step/attempt, model, prompt
    tokens, actual and expected cache reads, cost and verdict; a break adds its cause, the changed
    header fields and the evidence seqs. A fork or subagent child is compared with its parent
    log, as `breaks` does. A log that is truncated or replaced is followed again from its start.
    Ctrl-C stops with a summary and exit code 0.

    \b
    Example:
        dsh-audit watch
        dsh-audit watch --json --on-break 'notify-send "cache break"'
    """
    try:
        command = shlex.split(on_break) if on_break else None
    except ValueError as exc:  # unpaired quotes: a usage error, before any log is followed
        raise click.BadParameter(f"{on_break!r}: {exc}", param_hint="'--on-break'") from None
    try:
        config = routes_from(routes)  # a bad route, price or pyproject file is one error, before any log is followed
        prices = load_prices(prices_path)
        zdr = stated_zdr(openai_zdr)
    except DshAuditError as exc:
        echo_error(exc)
        return EXIT_BAD_INPUT
    stop = threading.Event()
    previous = signal.getsignal(signal.SIGINT)

    def interrupt(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGINT, interrupt)
    summary = WatchSummary()
    try:
        for item in watch([path] if path else [], stop=stop, since=since, settle=settle, idle_exit=idle_exit,
                          exit_after=exit_after, lenient=lenient, max_version=max_version,
                          notifications=not polling, routes=config, prices=prices, zero_data_retention=zdr):
            summary.add(item)
            if as_json:
                click.echo(dumps_line(item.to_json()))
            elif isinstance(item, WatchNote):
                if item.level == "error":
                    # a log's or folder's error names its place itself (path:line: ...)
                    echo_error(item.message if item.message.startswith(item.path) else f"{item.path}: {item.message}")
                elif item.level == "warning":
                    echo_warning(item.message)
                elif item.level == "replaced":
                    echo_warning(f"{item.path}: {item.message}; following it again from its start")
                elif item.level == "watching":
                    for line in fit_lines(f"watching {item.path}: {item.message}"):
                        echo(line, err=True)
            else:  # folded at spaces to the terminal's width (COLUMNS when piped), as every listing
                for line in fit_lines(format_watch_line(item)):
                    if item.is_break:
                        click.secho(line, fg="red", bold=True)
                    else:
                        echo(line)
            if command and isinstance(item, WatchRequest) and item.is_break:
                _on_break(command, item)
    finally:
        signal.signal(signal.SIGINT, previous)
    if as_json:
        click.echo(dumps_line(summary.to_json()))
    else:
        for line in fit_lines(summary.text()):
            echo(line, err=True)
    return EXIT_OK


COMMANDS = [watch_command]
