"""``dsh-audit watch``: each request's cache verdict and cost while sessions run, breaks at once."""

from __future__ import annotations

import math
import shlex
import signal
import threading
from types import FrameType
from typing import Any

import click

from ..cache import Costs, iso_utc, load_prices
from ..errors import DshAuditError, UsageError
from ..report import dumps_line
from ..report.terminal import cell_len, fit_lines, output_width, terminal_text, value_cut
from ..session import routes_from
from ..watch import WatchNote, WatchRequest, WatchSummary, watch
from ._common import (EXIT_BAD_INPUT, EXIT_OK, echo, echo_error, echo_note, echo_price_warnings, echo_status,
                      echo_warning)
from ._logs import session_ref
from ._on_break import _Hooks
from ._options import capture_option, lenient_option, openai_zdr_option, prices_option, routes_option, stated_zdr
from ._output import CAPTURED_MARK, CAPTURED_NOTE
from ._when import _parse_when

__all__ = ["watch_command"]


class _Seconds(click.FloatRange):
    """A non-negative, finite number of seconds: ``inf`` or ``nan`` would wait forever (an option
    with no default is left out for that; the others have a finite default)."""

    name = "number of seconds"

    def __init__(self) -> None:
        super().__init__(min=0)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        seconds: float = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            default = getattr(param, "default", None)
            left_out = "to watch until Ctrl-C" if default is None else f"for its default, {default:g} s"
            self.fail(f"{value!r} is not a finite number of seconds (leave the option out {left_out})", param, ctx)
        return seconds


SECONDS = _Seconds()


def _tokens(value: int | None) -> str:
    return "?" if value is None else str(value)


def _loss(item: WatchRequest) -> str:
    """What a request lost of the cache and what that cost, as ``breaks --accounting`` shows it:
    ``lost 8927 ($0.0308)``, ``lost 0`` (nothing), ``?`` where it is not known."""
    if item.lost_tokens == 0:
        return "lost 0"
    cost = "$?" if item.lost_cost is None else Costs.text(item.lost_cost)
    return f"lost {_tokens(item.lost_tokens)} ({cost})"


def _cache(item: WatchRequest) -> str:
    """The cache reads of a request beside what it could have read (``reusable``: what its
    conversation's previous request left in the cache, which "lost" is measured from, as `cache`'s
    timeline shows it) and what the provider's rules predict: ``cache 4800 of 7680 reusable (512
    expected)``; ``cache 4800 (512 expected)`` where the reusable reads are not known."""
    of = f" of {item.potential} reusable" if item.potential is not None else ""
    return f"cache {_tokens(item.actual)}{of} ({_tokens(item.expected)} expected)"


def format_watch_line(item: WatchRequest, short_id: str | None = None, relation: str | None = None) -> str:
    """One request as one plain line: time (UTC, with the date), session id (``short_id`` shown
    instead when given, else whole, as the watch shows every id), a fork or subagent child's relation (``relation``: ``└
    fork``, as `sessions` leads such a child's title) and title, position, model, tokens, cost,
    verdict; a break adds its cause, what it lost and what that cost, the changed fields and the
    evidence seqs; an update of a request printed before ends ``(update)``. A request priced from the
    capture's usage (its log holds none) has its prompt tokens and cost marked ``*`` (:data:`CAPTURED_MARK`). The time is when the
    request was sent for the history ``--since`` prints, when the watch saw it for a new request
    (or one whose send time the log does not record)."""
    return "".join(space + field for space, field in _fields(item, short_id, relation))


def _fields(item: WatchRequest, short_id: str | None, relation: str | None) -> list[tuple[str, str]]:
    """The fields of :func:`format_watch_line`, each with the spaces before it: what a narrow
    terminal's line folds between (:func:`_folded`), a label never parted from its value. Each is
    escaped on its own (:func:`terminal_text`): a newline in a title, model or cause is ``\\u000a``
    inside its field, never a line break that :func:`fit_lines` would split the line at."""
    moment = item.sent if item.history and item.sent is not None else item.seen
    fields = [("", (iso_utc(moment) or "?").replace("T", " ").removesuffix("Z")),
              ("  ", short_id or item.session_id)]
    led = f"└ {relation}" if relation else ""  # a child's relation leads its title, as `sessions` shows it
    if led or item.title:
        fields.append(("  ", " ".join(part for part in (led, item.title) if part)))
    where = f"t{item.turn if item.turn is not None else '-'}/s{item.step if item.step is not None else '-'}" \
            f"/a{item.attempt}" if item.kind == "loop" else item.kind
    mark = CAPTURED_MARK if item.usage_source == "capture" else ""  # the capture's usage: CAPTURED_NOTE
    cost = ("  ", Costs.shown(item.cost, requests=1, unpriced=item.cost is None) + mark)
    prompt = f"prompt {_tokens(item.prompt_tokens)}{mark if item.prompt_tokens is not None else ''}"
    fields += [("  ", f"#{item.index} {where}"), ("  ", item.model or "?"),
               ("  ", prompt), ("  ", _cache(item)), cost,
               ("  ", str(item.classification))]
    if item.is_break:
        fields.append(("  ", f"BREAK {item.cause or 'unexplained'} {_loss(item)}"))
        if item.fields:
            fields.append((" ", f"fields {','.join(item.fields)}"))
        if item.evidence_seqs:
            fields.append((" ", f"evidence seqs {' '.join(map(str, item.evidence_seqs))}"))
    elif item.lost_tokens != 0:  # a shortfall that is no break (an expired cache...): what it cost too
        fields.append(("  ", _loss(item)))
    if item.update:
        fields.append(("  ", "(update)"))
    return [(space, terminal_text(field)) for space, field in fields]


def _folded(item: WatchRequest, short_id: str | None, relation: str | None, width: int | None = None) -> list[str]:
    """:func:`format_watch_line` fitted to ``width`` (default the terminal's, COLUMNS when piped),
    shown as :func:`~dsh_audit.report.terminal.fit_lines` shows text: one line when it fits, else
    folded between fields, a label with its value (``fields model,system``, ``lost 8927
    ($0.0308)``), every field where the one-line form and the legend put it (the cost after the
    cache reads: one order for every line); a field longer than a line (a long title) wraps at its
    own spaces, and the session id, one token, is cut at its end with "…" (:func:`value_cut`), never
    split. The lines after the first are indented two spaces."""
    room = output_width() if width is None else width
    fields = _fields(item, short_id, relation)
    whole = fit_lines("".join(space + field for space, field in fields), room)  # format_watch_line's text
    if len(whole) == 1:
        return whole
    lines: list[str] = []
    for at, (space, field) in enumerate(fields):
        # escaped already: one line, wrapped at spaces; the session id (the second field) is one token,
        # never split: longer than a line, it is cut at its end with "…" (its prefix, which `show` takes)
        shown = [value_cut(field, room - 2)] if at == 1 else fit_lines(field, room - 2, hanging=0) or [""]
        if lines and len(shown) == 1 and cell_len(lines[-1] + space + shown[0]) <= room:
            lines[-1] += space + shown[0]
        else:
            indent = "  " if lines else ""
            lines += [indent + part if at == 0 else "  " + part for at, part in enumerate(shown)]
    return lines


#: The relations of a child session to its parent log (an attribution transition's ``relation``):
#: a session whose request says one is a child, and each of its lines says so.
_CHILD_RELATIONS = ("fork", "subagent")


class _Children:
    """Each child session's relation to its parent (``fork``, ``subagent``), as its first loop
    request's transition gives it: every line of that session says it from then on."""

    def __init__(self) -> None:
        self.relations: dict[str, str] = {}

    def __call__(self, item: WatchRequest) -> str | None:
        if item.relation in _CHILD_RELATIONS:
            self.relations[item.session_id] = item.relation
        return self.relations.get(item.session_id)


#: What each line of the text stream says, printed once under the first line, on stderr, wrapped at
#: spaces to the width a listing takes (:func:`~dsh_audit.report.terminal.fit_lines`).
_LEGEND = ("each line: time (UTC; when sent, for the history; when seen, for a new request), session id "
           "(whole, for the life of the watch; a fork or subagent child's led by └ fork or └ subagent) and title, "
           "#request t/s/a (turn/step/attempt), model, prompt tokens, cache reads of the reusable ones (what "
           "the previous request left cached: lost is measured from it) and the expected ones, cost, verdict; "
           "a break: BREAK, its cause, the tokens it lost (their cost), the changed fields and the evidence seqs")
#: The caption of :data:`CAPTURED_MARK`, in `requests`' words, printed once under the first line marked.


@click.command("watch")
@click.argument("path", required=False, type=click.Path(readable=False))
@click.option("--json", "as_json", is_flag=True, help="Print JSON lines (requests, breaks, notes, a summary).")
@click.option("--since", metavar="WHEN", default=None, callback=_parse_when,
              help="Also print the history of logs active at or after WHEN by their own timestamps (the "
                   "file's mtime only for a log that records none), in the order its requests were sent: a "
                   "date, today, yesterday, a date-time, or an age such as 30m or 2h; without it only what "
                   "happens from now on is printed.")
@click.option("--until", metavar="WHEN", default=None, callback=_parse_when,
              help="Leave out the requests sent at or after WHEN by their log's own timestamps (as `sessions` "
                   "and `usage` read --until; when the watch saw it, for a log that records none), history and "
                   "new alike, and their breaks: not printed, not counted in the summary, no --on-break run; "
                   "a date includes that whole day. Same forms as --since. The watch goes on (Ctrl-C, "
                   "--idle-exit or --exit-after ends it).")
@click.option("--on-break", metavar="CMD", default=None,
              help="Run CMD (split like a shell would, run without one) for every break, with the break "
                   "as one JSON line, ending in a newline, on its stdin (a `while read line` loop reads it); a run "
                   "is ended after 60 s, or at once by Ctrl-C or SIGTERM (when --idle-exit or --exit-after stops "
                   "the watch, the runs still going finish first). A run that exits non-zero, cannot be started "
                   "or is ended after 60 s is an error line on stderr naming CMD (with --json also a "
                   "{\"type\":\"error\"} line on stdout), counted in the summary's errors; the watch goes on "
                   "(exit 0). What CMD prints goes to the watch's stderr: stdout is the watch's own lines.")
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
@click.option("--rescan", type=SECONDS, default=1.0, show_default=True, metavar="SECONDS",
              help="When polling, seconds between looks for new, removed or renamed logs (with "
                   "notifications a new log is noticed at once, and the folders are looked at every ten "
                   "times SECONDS besides).")
@routes_option
@prices_option
@capture_option
@openai_zdr_option
@lenient_option
def watch_command(path: str | None, as_json: bool, since: float | None, until: float | None, on_break: str | None,
                  idle_exit: float | None, exit_after: float | None, settle: float, polling: bool,
                  rescan: float, routes: str | None, prices_path: str | None, capture: str | None,
                  openai_zdr: bool | None, lenient: bool, max_version: int) -> int:
    """Follow running sessions: every new request's cache verdict and cost, every break at once.

    PATH is a log, a session folder or a sessions root (default $DSH_HOME/sessions), or `latest`, a
    session id or a unique id prefix, looked up there as every command looks it up (one that names
    no session is an error, exit 2); a path that does not exist yet (one with a folder separator or
    a log's suffix) is waited for. Sessions that start later are followed too. Only new bytes are
    read: a line or zstd frame still being written is waited for; what a log holds when the watch
    starts is history. Each request prints its time in UTC with the date (when it was sent, for
    the history --since prints; when the watch saw it, for a new request), its session's id whole,
    the same for the life of the watch (a prefix unique among the sessions shown so far could
    name a session that starts later too, which `show` refuses) and title, turn/step/attempt, model, prompt tokens, actual and expected cache reads,
    cost and verdict; a break adds its cause, the tokens it lost and what they cost ("lost 8927
    ($0.0308)", as `breaks --accounting` counts them; "?" when not known), the changed header fields and
    the evidence seqs (a request that lost tokens without a break says "lost" too). Numbers have no
    thousands separators. A legend under the first line says so. The history is printed in the
    order its requests were sent (by the logs' own times, whatever log they are in), once every
    log's history has been read; what happens meanwhile follows it. --json prints each request as
    one object with "seen_at", when the watch saw it by this machine's clock (ISO 8601 UTC to the
    millisecond), and "sent_at", when it was sent by the log's own time (ISO 8601 UTC, as
    `sessions --json` gives times), "lost_tokens" and "lost_cost_usd" (the object an
    --on-break command reads on its stdin). A fork or subagent child is compared with its parent log,
    as `breaks` does. A log that is truncated or replaced is read again from its start: the requests
    it holds again are printed again (not when it became a copy of a log already followed: a note says
    which file is read), and the summary counts each request of a session once. A
    request printed where a log's bytes stopped (a torn tail: its usage may not be logged yet) is
    "provisional" in JSON; once the log holds what follows it, it is printed again if that changes
    it, as an "update" (a line ending "(update)"), and counted once. Sessions that do not change are
    looked at, not read: the logs written last are read at once, the others' headers only, and each
    is read whole once it changes; a few threads read, however many logs there are. A log
    or folder that cannot be read (a FIFO, a symlink loop or a link to nothing too) is one error line
    on stderr (with --json also a {"type":"error"} line on stdout), counted in the summary; the watch
    goes on (a PATH that is a FIFO, a device, a symlink loop or a link to nothing is an error, exit 2).
    Ctrl-C or SIGTERM stops at once (ending a running --on-break command and what it started) with a
    summary and exit code 0.

    One session present as several files (DSH's log and an export or copy of it, compressed or
    not) is followed once, in the file the other commands read, with their notes in their words
    saying which: of a session folder's session.jsonl.zstd and session.jsonl the compressed one,
    whatever their lengths; of files with the same lines (those before a first blank line: DSH
    reads no further) DSH's, then one whose folder or name says the id its header names (else the
    first they list); else the one that holds the others' lines and more (the one being written).
    So is one session in two session
    folders (a log replaced by a copy of another), which the other commands list twice: of the same
    lines, the file already followed. A copy that appears later is compared then: one with the
    same lines leaves the followed file followed (the one exception: the other commands may read
    the new copy, DSH's or listed first); one that grows past the followed file, or outlives it, is
    followed from the request where the other stopped: no request is printed or counted twice.

    A request whose log holds no usage (a title call, a torn tail) is priced from the provider's
    usage in the captured response to its send, as `usage`, `cache`, `sessions` and `requests`
    price it, when a capture is given with --capture or a wire.jsonl is found beside the log
    (--no-capture: none; it costs "$?" and the summary's cost is a lower bound, "≥$"): its prompt
    tokens and cost are marked "*", a caption under the first such line says so, and --json has
    "usage_source": "capture" ("log" for a logged usage, null for neither). One the capture does
    not report yet (a proxy that writes the response after DSH logged the request) is
    "provisional", and printed again as an "update", priced, once the capture reports it: looked
    at whenever the log shows more and when the watch ends, so the summary counts it. Its update
    is judged again with the capture's usage, from the cache state it was first judged from: its
    prompt tokens, cache reads (actual, expected, reusable), verdict and price as `cache --json`
    and `usage --json` state them on the finished log and capture. The requests judged between its
    first line and its update keep their verdicts (compared with its estimated prompt size); those
    judged after compare with the capture's. A request judged while no capture was given or found
    (one found later), or the oldest beyond 256 waiting at once (a capture missing for long), is
    priced only, its verdict kept. A capture that cannot be read is said in `usage`'s words when the watch reads it, each distinct message
    once: a found one as a warning (left out), a --capture one as an error line (with --json also
    a {"type":"error"} line; the summary's errors count each such capture once, however many
    messages, as "N unreadable capture(s)" in text, where `usage` exits 2), and a line of either
    that is no capture record as a warning (skipped, the rest read). The watch goes on: the
    requests an unreadable capture would price are unpriced (not "provisional") until it can be
    read again, which a note says (the text summary then says "N capture(s) unreadable for a
    while, read again"), and a price given before it turned unreadable is kept.

    \b
    Example:
        dsh-audit watch
        dsh-audit watch --json --on-break 'notify-send "cache break"'
    """
    if path == "":  # not the default root: a path left empty by mistake (as on every command)
        raise UsageError("empty path", hint="name a log, a session folder or a sessions root, or give none")
    try:
        command = shlex.split(on_break) if on_break else None
    except ValueError as exc:  # unpaired quotes: a usage error, before any log is followed
        raise click.BadParameter(f"{on_break!r}: {exc}", param_hint="'--on-break'") from None
    try:
        # ``latest``, a session id or a unique prefix names its log, as on every command (an unknown
        # one is a usage error); a path is kept, one that does not exist yet too (DSH may create it)
        path = session_ref(path) if path else None
        config = routes_from(routes)  # a bad route, price or pyproject file is one error, before any log is followed
        prices = load_prices(prices_path)
        zdr = stated_zdr(openai_zdr)
    except DshAuditError as exc:
        echo_error(exc)
        return EXIT_BAD_INPUT
    echo_price_warnings(prices)
    stop, interrupted = threading.Event(), threading.Event()
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}

    def interrupt(signum: int, frame: FrameType | None) -> None:
        interrupted.set()
        stop.set()

    for signum in previous:
        signal.signal(signum, interrupt)
    summary = WatchSummary()
    children = _Children()
    captured = [False]  # the caption of CAPTURED_MARK is said once, under the first line marked
    hooks = _Hooks(command, as_json=as_json) if command else None
    try:
        for item in watch([path] if path else [], stop=stop, since=since, until=until, settle=settle,
                          idle_exit=idle_exit, exit_after=exit_after, lenient=lenient, max_version=max_version,
                          rescan=rescan, notifications=not polling, routes=config, prices=prices,
                          zero_data_retention=zdr, capture=capture):
            summary.add(item)
            if isinstance(item, WatchNote) and item.level == "error":
                # on stderr in both modes (with --json also in the stream, for its consumers), each
                # time the watch gives it: it says each once per breakage (not echo_error's once per run:
                # a capture or folder that breaks again after it was read again is said again, fuzz 33 D4)
                echo(f"error: {_said_error(item)}", err=True)
            if as_json:
                click.echo(dumps_line(item.to_json()))
                if isinstance(item, WatchNote) and item.level == "note" and item.message in prices.caveats_met():
                    echo_warning(item.message)  # a price caveat: on stderr too, "note:", as every command says it
            elif isinstance(item, WatchNote):
                if item.level == "warning" or getattr(item.message, "level", None) == "note":
                    echo_warning(item.message)  # a route note too: "note:", once per run
                elif item.level == "note":  # which file of a session is followed, as the other commands say it
                    echo_note(item.message)  # wrapped at spaces on a terminal, a path never cut
                elif item.level == "replaced":
                    echo_warning(f"{item.path}: {item.message}; reading it again from its start (what it holds "
                                 "again is printed again, unless it is a copy of a log already followed; the "
                                 "summary counts each request once)")
                elif item.level == "watching":
                    echo_status(f"watching {item.path}: {item.message}")
                    for line in fit_lines(_LEGEND):  # at spaces to the width (COLUMNS when piped): no token cut
                        echo(line, err=True)
            else:  # folded between fields to the terminal's width (COLUMNS when piped), none moved
                for line in _folded(item, item.session_id, children(item)):
                    if item.is_break:
                        click.secho(line, fg="red", bold=True)
                    else:
                        echo(line)
                if item.usage_source == "capture" and not captured[0]:
                    captured[0] = True
                    for line in fit_lines(CAPTURED_NOTE):
                        echo(line, err=True)
            if hooks is not None and isinstance(item, WatchRequest) and item.is_break:
                hooks.start(item)
    finally:
        if hooks is not None:
            hooks.wait(interrupted)  # --idle-exit, --exit-after: the last breaks' runs finish
            hooks.end()  # Ctrl-C or SIGTERM ends the watch at once: a running hook does not hold it
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    summary.failed_runs = hooks.failures if hooks is not None else 0
    if as_json:
        click.echo(dumps_line(summary.to_json()))
    else:
        echo_status(summary.text())
    return EXIT_OK


def _said_error(item: WatchNote) -> str:
    """The error line's text of ``item``: a log's or folder's error names its place itself (path:line: ...)."""
    return item.message if item.message.startswith(item.path) else f"{item.path}: {item.message}"


COMMANDS = [watch_command]
