"""Shared CLI plumbing: error conversion at the edge, common options, output helpers."""

from __future__ import annotations

import codecs
import errno
import functools
import io
import os
import re
import sys
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import DshAuditError, InternalError, UsageError

if TYPE_CHECKING:
    from ..cache import PriceBook
    from ..replay import Request
    from ..session import RouteEvidence

__all__ = ["ADAPTER_CHOICES", "GATING_COMMANDS", "EXIT_BAD_INPUT", "EXIT_FINDINGS", "EXIT_INTERNAL", "EXIT_OK", "STDOUT", "RequestCommand",
           "place_text",
           "capture_option", "echo", "echo_caveats", "echo_error", "echo_lines", "echo_note", "echo_warning", "engine_options", "evidence_logs",
           "file_size", "guard_evidence", "jobs_option", "json_option", "lenient_option", "listing_options", "log_progress",
           "newest_first", "no_such_request", "one_log", "pager_option",
           "one_request", "output_help", "parse_when", "request_position", "routes_option", "run_guarded",
           "selected_logs", "check_window", "session_paths", "session_ref", "session_title", "since_option", "stdout_target", "time_options",
           "until_option", "window_text", "write_output"]

EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

#: The output path that means stdout, for every option that writes a machine format to a file.
STDOUT = "-"

# A negative request index (``-1``), which click would otherwise read as an option.
_NEGATIVE = re.compile(r"-\d+")

#: The ``--adapter`` choices of ``diff`` and ``render`` (DSH's wire formats).
ADAPTER_CHOICES = ("deepseek", "anthropic", "openai", "responses")


#: the longest message line on stderr: an error may quote an input (a 5,000-digit option value,
#: a log's text), and a message is for reading, not for carrying the input back
MESSAGE_MAX = 2000


def echo(text: object, *, err: bool = False) -> None:
    """One line on stdout (stderr with ``err``), shown with :func:`terminal_text`: text from a log
    never moves the cursor, never starts a CI workflow command, and stays on one line. A stderr
    line longer than :data:`MESSAGE_MAX` characters keeps its start and end, and says how much of
    its middle was cut."""
    from ..report.terminal import listing_line, terminal_text  # not at import: --version loads no library code

    line = terminal_text(text)
    if not err:
        line, err = listing_line(line)  # beside a CSV or Markdown listing (--format), as that shows it
    elif len(line) > MESSAGE_MAX:
        keep = MESSAGE_MAX // 2
        line = f"{line[:keep]} [... {len(line) - 2 * keep:,} characters cut ...] {line[-keep:]}"
    click.echo(line, err=err)


def echo_lines(text: str, *, err: bool = False) -> None:
    """Several lines (a library's ``format_*`` text), each shown with :func:`terminal_text`."""
    for line in text.removesuffix("\n").split("\n") if text else ():
        echo(line, err=err)


def place_text(turn: int | None, step: int | None, attempt: int | None) -> str:
    """Where a request was sent, as every table shows it: ``turn/step/attempt``; ``N/-`` for a
    compaction call (a turn, no step), ``-`` for a title call (neither).

    Example:
        >>> place_text(2, 1, 1), place_text(9, None, 1), place_text(None, None, None)
        ('2/1/1', '9/-', '-')
    """
    if turn is None:
        return "-"
    if step is None:
        return f"{turn}/-"
    return f"{turn}/{step}/{attempt}"


#: Whether this run has said an :class:`InternalError` (a dsh-audit bug in one log of many, the
#: others still reported): :func:`run_guarded` then exits 3 whatever the command returns.
_BUG_SAID: list[bool] = [False]


def echo_error(error: DshAuditError | str) -> None:
    """``error: TEXT`` on stderr; an :class:`InternalError` makes the run exit 3 (a bug)."""
    if isinstance(error, InternalError):
        _BUG_SAID[0] = True
    echo(f"error: {error}", err=True)


def echo_warning(text: str) -> None:
    """``warning: TEXT`` on stderr, once per command run (a warning every log of a run shares is said
    once; outside a run every warning is printed). A line that travels with warnings but is a note
    (its ``level`` is ``"note"``: :class:`dsh_audit.session.RouteNote`, which layers of its DSH home
    gave a log's route configuration) is said as ``note: TEXT``, once per run as well."""
    context = click.get_current_context(silent=True)
    if context is not None:
        said: set[str] = context.find_root().meta.setdefault("dsh_audit.warned", set())
        if text in said:
            return
        said.add(text)
    echo(f"{getattr(text, 'level', 'warning')}: {text}", err=True)


def echo_note(text: str) -> None:
    echo(f"note: {text}", err=True)


def echo_caveats(prices: PriceBook) -> None:
    """The caveats of the prices a run's costs were priced at (:meth:`PriceBook.caveats_met`: a
    year the table's holiday list does not cover), each a ``note:`` on stderr once per run, by
    :func:`echo_warning` (each text's ``level`` is ``"note"``), in text and JSON modes alike."""
    for text in prices.caveats_met():
        echo_warning(text)


class RequestCommand(click.Command):
    """A command whose last argument is a request INDEX that may be negative (``-1``: the last request).

    A negative number before ``--`` that is not an option's value is moved after ``--``, so that
    ``show LOG -1``, ``show -1 LOG`` and ``show LOG -1 --compact`` all mean the last request.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        valued = {name for param in self.params if isinstance(param, click.Option) and not param.is_flag
                  and not param.count for name in param.opts}
        kept: list[str] = []
        moved: list[str] = []
        for at, arg in enumerate(args):
            if arg == "--":
                kept.extend(args[at:])
                break
            if _NEGATIVE.fullmatch(arg) and not (kept and kept[-1] in valued):
                moved.append(arg)
            else:
                kept.append(arg)
        if moved:
            args = kept + ([] if "--" in kept else ["--"]) + moved
        return super().parse_args(ctx, args)


def request_position(index: int, count: int) -> int | None:
    """The position (0 to ``count - 1``) of request ``index`` of ``count``, negative from the end;
    None when there is no such request.

    Example:
        >>> request_position(-1, 8), request_position(7, 8), request_position(-9, 8), request_position(8, 8)
        (7, 7, None, None)
    """
    position = index + count if index < 0 else index
    return position if 0 <= position < count else None


def session_title(path: str, session_id: str) -> str:
    """A heading naming a session log, ``PATH  session ID``, its path cut in the middle to fit the
    terminal (:func:`dsh_audit.report.terminal.middle_cut`, at
    :func:`~dsh_audit.report.terminal.title_width`); when that would leave less than half of the
    line to the path, the path takes the whole line and ``session ID`` goes to the next (a table
    breaks its title there, never inside a word). The whole path when piped with no ``COLUMNS``,
    and in CSV or Markdown."""
    from ..report.terminal import listing_format, middle_cut, terminal_text, title_width

    suffix = f"  session {terminal_text(session_id)}"
    width = title_width()
    if listing_format() != "table" or width is None:  # CSV, Markdown, a pipe: the whole path
        return terminal_text(path) + suffix
    room = width - len(suffix)
    return middle_cut(terminal_text(path), room if room >= width // 2 else width) + suffix


#: A PATH that names a file by its form (a folder separator, a log's or capture's suffix) is a
#: path, never a session id: when it does not exist, discovery says so.
_PATH_FORM = re.compile(r"[/\\]|\.(?:jsonl|zstd|zst|json|har)$", re.IGNORECASE)


def session_ref(path: str) -> str:
    """A PATH argument as every command reads it: ``path`` itself when it exists (a file or folder
    always wins over an id) or has a path's form (:data:`_PATH_FORM`: one that does not exist is
    then discovery's error); else ``latest``, a session id or a unique id prefix, looked up under
    $DSH_HOME/sessions (else ~/.dsh/sessions) and given as that session's log
    (:func:`dsh_audit.log.resolve_session`). The one reader of session references: the PATHS of a
    command that reads a set of logs (:func:`session_paths`) and the PATH of one that reads one
    (:func:`one_log`).

    Raises:
        UsageError: ``path`` names no session, or several (the message lists up to five).
        UnreadableError: there is no sessions folder to look it up in.
    """
    if path == "" or os.path.lexists(path) or _PATH_FORM.search(path):
        return path
    from ..log import resolve_session

    return str(resolve_session(path))


def one_log(path: str) -> Path:
    """The one session log ``path`` names: a file, a folder holding exactly one session log,
    ``latest``, a session id or a unique id prefix under $DSH_HOME/sessions (:func:`session_ref`)."""
    from ..log import discover, resolve_session

    named = session_ref(path)
    if named == path and path and not os.path.lexists(path):
        discover([path])  # a missing path: "no such file or folder", as every command says it
    return resolve_session(named)


def one_request(path: str, index: int, *, lenient: bool, max_version: int) -> tuple[str, Request, RouteEvidence]:
    """Replay the one session log at ``path``: its file, its request ``index``, and what the log
    shows of each provider's adapter (for the request's route).

    The log's warnings go to stderr. Raises the log's own error when it cannot be replayed, and
    UsageError when ``path`` is not exactly one log or ``index`` is not one of its requests. A
    negative ``index`` counts from the end (-1: the last request).
    """
    from ..errors import MalformedRecordError
    from ..log import read_log
    from ..replay import iter_requests
    from ..session import RouteEvidence, open_foreign

    log = one_log(path)
    try:
        opened = read_log(log, lenient=lenient, max_version=max_version)
    except MalformedRecordError as exc:
        imported = open_foreign(str(log), lenient=lenient) if exc.line == 1 else None  # another agent's log?
        if imported is None:
            raise
        requests: list[Request] = imported.requests
        count = len(requests)
        position = request_position(index, count)
        found = None if position is None else requests[position]
        routes = imported.routes
    else:
        # Stream: keep only request ``index`` (a long log's requests would keep all of it alive), or
        # the last ``-index`` ones; but read to the end, so a log DSH refuses is still refused.
        found, count = None, 0
        last: deque[Request] = deque(maxlen=min(max(-index, 1), sys.maxsize))  # no log has more
        routes = RouteEvidence()
        try:
            for request in iter_requests(opened, observe=routes.on_event):
                if request.index == index:
                    found = request
                last.append(request)
                count += 1
        finally:
            for warning in opened.warnings:
                echo_warning(warning)
        if index < 0 and len(last) == -index:
            found = last[0]
    if found is None:
        raise no_such_request(index, count, log)
    return str(log), found, routes


def file_size(path: str | os.PathLike[str]) -> int:
    """The size on disk of the file at ``path`` (0 when it cannot be looked at: the command says why)."""
    try:
        return os.stat(path).st_size
    except (OSError, ValueError):
        return 0


def _no_progress(size: int) -> None:
    """What ``advance`` is when no bar is drawn (:func:`log_progress`)."""


@contextmanager
def log_progress(paths: Iterable[str | os.PathLike[str]], *, label: str, passes: int = 1,
                 extra: int = 0) -> Iterator[Callable[[int], None]]:
    """A progress bar on an interactive stderr (:func:`dsh_audit.report.terminal.progress_callback`:
    after ``DSH_AUDIT_PROGRESS_DELAY`` seconds, cleared when the block ends) for a command that
    reads the logs at ``paths`` in this process: it moves with the bytes read of any log in the
    block (:func:`dsh_audit.log.read_progress`; size on disk, compressed bytes for zstd), out of
    their sizes times ``passes`` (a command that reads a log again, or does as much work after
    reading it) plus ``extra`` bytes of other work. Yields ``advance(size)``, for work done in the
    block that reads no log (``size`` bytes' worth); it does nothing when no bar is drawn. Done
    never passes the total.
    """
    from ..log import read_progress
    from ..report.terminal import progress_callback

    total = passes * sum(map(file_size, paths)) + extra
    with progress_callback(total, label=label) as report:
        if report is None:
            yield _no_progress
            return
        done = 0

        def advance(size: int) -> None:
            nonlocal done
            done = min(done + size, total)
            report(done, total)

        report(0, total)
        with read_progress(advance):
            yield advance


def no_such_request(index: int, count: int, log: Path) -> UsageError:
    """The error for a request ``index`` the log at ``log`` (with ``count`` requests) does not have."""
    valid = f"valid indexes are 0 to {count - 1}, or -{count} to -1 from the end; " if count else ""
    return UsageError(f"request {index} does not exist: the log has {count} request(s)", path=str(log),
                      hint=f"{valid}run `dsh-audit requests LOG` to see the indexes")


def session_paths(paths: Sequence[str]) -> tuple[str, ...]:
    """``paths``, each a path or a session reference (:func:`session_ref`: ``latest``, a session
    id or a unique id prefix, given as its log), or the sessions root (``$DSH_HOME/sessions``, else
    ``~/.dsh/sessions``) when none is given: the default of every command that takes session paths.

    Raises:
        UnreadableError: no path is given and the sessions root is not a folder, or a reference
            has no sessions folder to be looked up in.
        UsageError: a reference names no session, or several.
    """
    if paths:
        return tuple(map(session_ref, paths))
    from ..errors import UnreadableError
    from ..log import default_sessions_root, is_folder

    root = default_sessions_root()
    if not is_folder(root):  # a root that cannot be looked at (a name too long, no permission) raises
        where = "$DSH_HOME/sessions" if os.environ.get("DSH_HOME") else "~/.dsh/sessions (DSH_HOME is not set)"
        raise UnreadableError(f"no PATH given and no sessions folder at {where}", path=str(root),
                              hint="pass PATH (a log, a session folder or a sessions root), or set DSH_HOME "
                                   "to the DSH home that holds sessions/")
    return (str(root),)


def evidence_logs(paths: Sequence[str]) -> list[Path]:
    """The logs no output of a command may overwrite: every log under ``paths``
    (:func:`session_paths`), a copy of a session that is not read again included (it is evidence);
    a folder that holds none has none (the command says whether that is an error)."""
    from ..log import discover

    return _discover(list(session_paths(paths)), partial(discover, copies=False), skip_empty=True)[0]


def guard_evidence(paths: Sequence[str], target: str | None, *, what: str) -> None:
    """Refuse to write ``target`` (the ``what`` of a command; None or empty: nothing is written)
    over any of :func:`evidence_logs`.

    Raises:
        UsageError: it is one of them.
    """
    from ..log import ProtectedInputs

    if not target:
        return
    ProtectedInputs.of(evidence_logs(paths)).guard(target, what=what)


def window_text(since: float | None, until: float | None) -> str:
    from ..cache import iso_utc

    def iso(moment: float) -> str:
        return iso_utc(moment) or f"{moment:.6g} s after the epoch (outside the years 1-9999)"

    return " ".join(f"{name} {iso(moment)}" for name, moment in (("--since", since), ("--until", until))
                    if moment is not None)


#: The commands that gate a build (``1`` when a finding fails): given nothing to check (no log
#: under PATH, or none in the ``--since/--until`` window) they exit ``2``, since a gate that checked
#: nothing must not pass; every other command lists nothing, says why in a note and exits ``0``.
GATING_COMMANDS = frozenset({"check", "validate"})

#: discovery's error for a folder with no session log below it (:func:`dsh_audit.log.discover`)
_NO_LOG = "folder holds no DSH session log"


def _gating() -> bool:
    """Whether the running command is one of :data:`GATING_COMMANDS`."""
    context = click.get_current_context(silent=True)
    return context is not None and context.command.name in GATING_COMMANDS


_WINDOW_HINT = ("--until WHEN ends the window, and a date there includes that whole day: give a --since before it, "
                "or swap the two")


def check_window(since: float | None, until: float | None) -> None:
    """Refuse a ``--since/--until`` window that holds no moment: the one check of every command.

    Raises:
        UsageError: ``since`` is at or after ``until``.
    """
    if since is not None and until is not None and since >= until:
        raise UsageError(_empty_window(since, until)("--since", "--until"), hint=_WINDOW_HINT)


def _empty_window(since: float, until: float) -> Callable[[str, str], str]:
    """The sentence refusing the empty window ``[since, until)``, given how each bound was given."""
    return lambda first, second: f"{first} must be before {second}: {window_text(since, until)} is an empty window"


def _log_span(log: Path) -> tuple[float, float] | None:
    """The first and last of a log's own timestamps (:func:`dsh_audit.log.time_span`; for another
    agent's log, Claude Code or Codex, its imported session's :meth:`~dsh_audit.session.Session.span`);
    None when its times cannot be read."""
    from ..log import time_span
    from ..session import open_foreign

    span = time_span(log)
    if span is not None:
        return span
    try:
        imported = open_foreign(str(log))
    except (DshAuditError, OSError, ValueError):
        return None  # the run reads it again and says why
    if imported is None:
        return None
    first, last = imported.span()
    return None if first is None or last is None else (first, last)


def newest_first(logs: Iterable[Path], given: Sequence[str] = ()) -> list[Path]:
    """``logs`` in the order a listing of ``requests``, ``breaks``, ``cache`` and ``check`` shows
    them (the rule README.md and each command's help state in the same words). With no PATHS
    (``given`` empty: the default sessions root), newest first by the log file's modification
    time (DSH appends to a log while its session runs, so a fork or subagent child that ended
    before its parent comes after it), equal ones by path. The time is the file's, not the log's
    own timestamps, so ordering never reads a log: every command opens each log once
    (`sessions`, which reads every log whole before it lists, orders by the logs' own last
    activity instead: where the files' times say nothing, as in a fresh copy, the orders differ).

    With PATHS (``given``, as :func:`session_paths` gives them), the order is the one they were
    given in, each one's logs in discovery's order (by path): the same on every machine and every
    checkout (a copied or freshly cloned folder's modification times say nothing), so CI output
    can be compared.

    Example:
        >>> [log.name for log in newest_first([Path("b/none.jsonl"), Path("a/no.jsonl")])]  # no file: by path
        ['no.jsonl', 'none.jsonl']
        >>> [str(log) for log in newest_first([Path("a/no.jsonl"), Path("b/none.jsonl")], given=["b", "a"])]
        ['b/none.jsonl', 'a/no.jsonl']
    """
    if given:
        roots = [Path(path) for path in given]

        def root(log: Path) -> int:
            """The first of ``given`` that is ``log`` or a folder above it (none: after them all)."""
            return next((at for at, path in enumerate(roots) if path == log or path in log.parents), len(roots))

        return sorted(logs, key=root)  # stable: discovery's order within each
    by_path = sorted(logs, key=str)

    def age(log: Path) -> float:
        try:
            return -os.stat(log).st_mtime
        except OSError:
            return float("inf")

    return sorted(by_path, key=age)


def _discover(given: list[str], find: Callable[[list[str]], list[Path]], *, skip_empty: bool) -> tuple[list[Path], list[str]]:
    """``find(given)`` (a discovery of the logs under paths ``given``), and with ``skip_empty`` the
    given folders that hold no log, left out (else such a folder is discovery's error). No path
    left: no log (never the default sessions root)."""
    from ..errors import UnreadableError

    remaining = list(given)
    empty: list[str] = []
    while remaining:
        try:
            return find(remaining), empty
        except UnreadableError as exc:
            named = [p for p in remaining if str(Path(p)) == exc.path]
            if not skip_empty or exc.message != _NO_LOG or not named:
                raise
            remaining = [p for p in remaining if p not in named]
            empty.append(named[0])
    return [], empty


def selected_logs(paths: Sequence[str], since: float | None, until: float | None = None, *,
                  gate: bool | None = None) -> list[Path]:
    """The session logs under ``paths`` (default: :func:`session_paths`) whose own timestamps fall
    in ``[since, until)``: a log is kept when its latest timestamp is at or after ``since`` and its
    earliest is before ``until`` (the log's times, never the file's mtime, so a copied folder
    selects the same sessions; :func:`dsh_audit.log.time_span` reads only each log's two ends, and
    another agent's log, Claude Code or Codex, is imported for its times). A log whose times
    cannot be read at all is kept, so that the run says why.
    Discovery's notes (which file of a session was read), what the window left out and a folder
    that holds no log are printed on stderr as ``note: ...``.

    ``gate`` (default: whether the running command is one of :data:`GATING_COMMANDS`): nothing to
    check is an error; else an empty list, with the notes saying why.

    Raises:
        UsageError: ``since`` is not before ``until`` (:func:`check_window`); or, with ``gate``, no
            log is in the window.
        UnreadableError: a path does not exist or cannot be read; with ``gate``, a folder holds no log.
    """
    gate = _gating() if gate is None else gate
    check_window(since, until)
    windowed = since is not None or until is not None
    from ..fleet import select_logs

    notes: list[str] = []
    given = list(session_paths(paths))
    logs, empty = _discover(given, partial(select_logs, notes=notes), skip_empty=not gate)
    notes.extend(f"{path}: {_NO_LOG}: nothing to list there" for path in empty)
    if windowed:
        kept, unknown = [], 0
        for log in logs:
            span = _log_span(log)
            if span is None:
                unknown += 1
            if span is None or ((since is None or span[1] >= since) and (until is None or span[0] < until)):
                kept.append(log)
        if len(kept) < len(logs):
            notes.append(f"{window_text(since, until)}: {len(logs) - len(kept)} of {len(logs)} log(s) with no "
                         "activity in that window (by the logs' own timestamps) left out")
        if unknown:
            notes.append(f"{window_text(since, until)}: {unknown} log(s) whose own timestamps cannot be read kept, "
                         "so that the run says why")
        logs = kept
    for note in dict.fromkeys(notes):  # a discovery retried past an empty folder says its notes again
        echo_note(note)
    if gate and windowed and not logs:
        raise UsageError(f"no session log has activity in {window_text(since, until)} (by the logs' own timestamps)",
                         path=", ".join(given), hint="widen or drop --since/--until")
    return logs


def stdout_target(targets: Mapping[str, str | None]) -> str | None:
    """The one option of ``targets`` (the option as the user typed it, ``--sarif -`` or ``--json``
    -> path) that writes to stdout (``-``), or None.

    Raises:
        UsageError: several do: their outputs would be mixed (the message names them as typed).

    Example:
        >>> stdout_target({"--sarif -": "-", "--junit": "j.xml"})
        '--sarif -'
    """
    chosen = [name for name, path in targets.items() if path == STDOUT]
    if len(chosen) > 1:
        raise UsageError(f"only one output can go to stdout, not {', '.join(chosen)}", hint="give the others a FILE name")
    return chosen[0] if chosen else None


def write_output(path: str | None, data: str | bytes | Iterable[str], *, what: str) -> None:
    """Write a machine format to ``path``: stdout when it is ``-`` (bytes as they are, text as
    UTF-8), else the file, atomically (:func:`dsh_audit.log.write_atomic`); nothing when None."""
    if path is None:
        return
    if path != STDOUT:
        from ..log import write_atomic

        write_atomic(path, data, what=what)
        return
    if isinstance(data, bytes):
        click.echo(data, nl=False)  # bytes go to the binary stream untouched
    else:
        for piece in [data] if isinstance(data, str) else data:
            click.echo(piece.encode("utf-8", errors="backslashreplace"), nl=False)


def output_help(what: str) -> str:
    """The help of an option that writes ``what`` to a file: the same convention on every command."""
    return f"Write {what} to FILE; '-' writes it to stdout (and nothing else goes there)."


def _usage_context(group: click.Group) -> click.Context | None:
    """The context of the command a usage error with none came from: click raises some errors of
    an option's value before the command's context holds it (a bare ``--prices`` at the end:
    ``BadOptionUsage`` from its parser, with no context), so that the hint would name the group's
    help instead of the command's. The command line (``sys.argv``) is read again resiliently
    (no callback runs, no error is raised) for the command's name; None when it cannot be."""
    try:
        root = group.make_context("dsh-audit", sys.argv[1:], resilient_parsing=True)
        # the command's name and its arguments (click 8.1 names the first ``protected_args``)
        protected = getattr(root, "_protected_args", None)
        given = [*(root.protected_args if protected is None else protected), *root.args]
        name, command, _ = group.resolve_command(root, given) if given else (None, None, [])
    except (click.ClickException, click.exceptions.Exit, IndexError):
        return None
    if command is None or name is None:
        return root
    return click.Context(command, info_name=name, parent=root)


def run_guarded(command: click.Group) -> int:
    """Run the click group; a DshAuditError becomes one line on stderr and exit 2, a bug (an
    :class:`InternalError`, or any other exception) exit 3, also when the command went on past
    it to report the other logs (the README's exit codes)."""
    _BUG_SAID[0] = False
    code = _run_guarded(command)
    return EXIT_INTERNAL if _BUG_SAID[0] and code != 130 else code


def _run_guarded(command: click.Group) -> int:
    try:
        result = command.main(standalone_mode=False)
    except DshAuditError as exc:
        echo_error(exc)
        return EXIT_INTERNAL if isinstance(exc, InternalError) else EXIT_BAD_INPUT
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except click.UsageError as exc:
        # One line, like every other error: the message (escaped like log text: it may quote an
        # argument) and where the usage is, instead of click's three-line block.
        names, ctx = [], exc.ctx or _usage_context(command)
        while ctx is not None:
            names.append(ctx.info_name or "")
            ctx = ctx.parent
        where = " ".join(["dsh-audit", *reversed(names[:-1])])  # the root's name is however it was started
        echo_error(f"{_from_variable(exc)}{exc.format_message()} (hint: see `{where} --help`)")
        return EXIT_BAD_INPUT
    except click.ClickException as exc:
        shown = io.StringIO()
        exc.show(file=shown)  # the message may quote an argument: escape it like log text
        echo_lines(shown.getvalue(), err=True)
        return EXIT_BAD_INPUT if exc.exit_code == 2 else exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except BrokenPipeError:  # outside a command (the group turns a command's into exit 0)
        silence_stdout()
        return EXIT_OK
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG and isinstance(exc.filename, str):  # a path given, not a bug
            echo_error(UsageError("file name too long", path=exc.filename, hint="name a shorter path"))
            return EXIT_BAD_INPUT
        return _unexpected(exc)
    except Exception as exc:  # noqa: BLE001 - a bug still ends in one line, never a traceback
        return _unexpected(exc)
    return result if isinstance(result, int) else EXIT_OK


def _from_variable(exc: click.UsageError) -> str:
    """``VARIABLE=value: `` when ``exc`` is about the value of an option read from its environment
    variable (:func:`option_variable`), which click's message names only as the option; else ``""``."""
    param = getattr(exc, "param", None)
    if exc.ctx is None or not isinstance(param, click.Option) or param.name is None:
        return ""
    found = option_variable(param.name, exc.ctx)
    return "" if found is None else f"{'='.join(found)}: "


def _unexpected(exc: Exception) -> int:
    """A bug: one line and exit 3 (the traceback with DSH_AUDIT_TRACEBACK set)."""
    if os.environ.get("DSH_AUDIT_TRACEBACK"):
        raise exc
    echo_error(InternalError.unexpected(exc))
    return EXIT_INTERNAL


#: The codecs that write every character: stdout in any of them needs no escapes.
_EVERY_CHARACTER = frozenset({"utf-8", "utf-16", "utf-32", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be",
                              "gb18030"})
_ESCAPES = "dsh-audit-escape"
#: ASCII under another name. click writes UTF-8 to a stream whose codec is named ``ascii`` (a
#: "misconfigured" one, to click) rather than through it, past its error handler: a stream
#: reconfigured to this codec is written to as it is, so every line takes the escapes.
_ASCII = "dsh_audit_ascii"


def _escape(exc: UnicodeError) -> tuple[str, int]:
    """A codec error handler: each character the codec cannot write as the JSON escape of its
    UTF-16 code units (``\\u00e9``; an astral character as its surrogate pair), which is also
    how a JSON line would spell it."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    units = exc.object[exc.start:exc.end].encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2)), exc.end


def _find_codec(name: str) -> codecs.CodecInfo | None:
    """A codec search function that knows :data:`_ASCII` only: the ``ascii`` codec by that name."""
    if name != _ASCII:
        return None
    ascii_codec = codecs.lookup("ascii")
    return codecs.CodecInfo(ascii_codec.encode, ascii_codec.decode, name=_ASCII,
                            incrementalencoder=ascii_codec.incrementalencoder,
                            incrementaldecoder=ascii_codec.incrementaldecoder,
                            streamreader=ascii_codec.streamreader, streamwriter=ascii_codec.streamwriter)


codecs.register_error(_ESCAPES, _escape)
codecs.register(_find_codec)


def escape_unencodable_stdout() -> None:
    """When stdout's encoding cannot write every character (``PYTHONIOENCODING=ascii``, a C locale
    with UTF-8 mode off), write the characters it cannot as JSON escapes (``caf\\u00e9``) instead
    of failing on the first log text outside it (exit 3); stderr likewise. UTF-8 output is left alone.

    Every line then takes the same escapes: a table's text (escaped before it is measured, by
    :func:`dsh_audit.report.terminal.stdout_text`, so that its columns line up), an echoed line,
    and a JSON line, which stays valid JSON of the same values (a ``\\uXXXX`` escape is one in a
    JSON string, the only place such a character can be). A machine format written whole to
    stdout (``report -o -``, ``check --format json``: :func:`write_output`) is UTF-8 bytes, as in a
    file.
    """
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        if not isinstance(stream, io.TextIOWrapper) or not encoding:
            continue
        try:
            name = codecs.lookup(encoding).name
        except LookupError:
            continue
        if name == "ascii":
            stream.reconfigure(encoding=_ASCII, errors=_ESCAPES)
        elif name not in _EVERY_CHARACTER:
            stream.reconfigure(errors=_ESCAPES)


def silence_stdout() -> None:
    """After a reader closed stdout early (``| head``): point it at /dev/null, so that no later
    write or the interpreter's last flush fails again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True,
                        help="One JSON object per line on stdout, for other tools.")(func)


def option_variable(name: str, ctx: click.Context | None = None) -> tuple[str, str] | None:
    """The environment variable the value of parameter ``name`` of the running command (``ctx``)
    was read from, and that variable's value as set: its ``DSH_AUDIT_<COMMAND>_<OPTION>``, or the
    older spelling after the parameter, whichever click read (the first set and not empty). None
    when the value was typed, or is the option's default."""
    ctx = ctx or click.get_current_context(silent=True)
    if ctx is None or ctx.get_parameter_source(name) is not click.core.ParameterSource.ENVIRONMENT:
        return None
    param = next((p for p in ctx.command.params if p.name == name and isinstance(p, click.Option)), None)
    if param is None:
        return None
    names = [param.envvar] if isinstance(param.envvar, str) else list(param.envvar or ())
    if param.allow_from_autoenv and ctx.auto_envvar_prefix:
        names.append(f"{ctx.auto_envvar_prefix}_{name.upper()}")
    return next(((variable, os.environ[variable]) for variable in names if os.environ.get(variable)), None)


def given_as(name: str, typed: str, ctx: click.Context | None = None) -> str:
    """How the user gave parameter ``name`` of the running command, for a message: ``typed`` (the
    option as typed: ``--format csv``), or ``VARIABLE=value`` when it was read from its
    environment variable (:func:`option_variable`)."""
    found = option_variable(name, ctx)
    return typed if found is None else "=".join(found)


#: The hint of two options that ask for two things, both read from environment variables.
_VARIABLES_HINT = ("a DSH_AUDIT_<COMMAND>_<OPTION> variable is that option's default: unset one of them, or "
                   "give the option you mean on the command line")


def _explicitness(ctx: click.Context, name: str) -> int:
    """How directly parameter ``name`` was given: 0 typed, 1 from its environment variable, 2 a default."""
    source = ctx.get_parameter_source(name)
    ranks = {click.core.ParameterSource.COMMANDLINE: 0, click.core.ParameterSource.PROMPT: 0,
             click.core.ParameterSource.ENVIRONMENT: 1}
    return 2 if source is None else ranks.get(source, 2)


def give_way(first: str, second: str, *, typed: tuple[str, str], clash: Callable[[str, str], str],
             hint: str) -> str:
    """Of parameters ``first`` and ``second`` of the running command, which ask for two things
    together, the one that gives way (the caller drops its value): the less directly given one.
    An option typed on the command line wins over one read from its environment variable
    (``DSH_AUDIT_<COMMAND>_<OPTION>`` is that option's default), which wins over a default. The one
    decider of every pair of options that conflict (``--json`` and ``--format``, ``--since`` and
    ``--until``, ``--baseline`` and ``--no-baseline``).

    Raises:
        UsageError: both were given alike: the message is ``clash(A, B)``, A and B each option as
            typed (``typed``), or ``VARIABLE=value`` when both came from variables (then the hint
            says so; else it is ``hint``).
    """
    ctx = click.get_current_context()
    ranks = (_explicitness(ctx, first), _explicitness(ctx, second))
    if ranks[0] != ranks[1]:
        return first if ranks[0] > ranks[1] else second
    shown = (given_as(first, typed[0], ctx), given_as(second, typed[1], ctx))
    raise UsageError(clash(*shown), hint=_VARIABLES_HINT if ranks[0] == 1 else hint)


__all__ += ["give_way", "given_as", "option_variable"]


#: The ``--format`` choices (:data:`dsh_audit.report.terminal.LISTING_FORMATS`; not imported here:
#: --version loads no library code).
_FORMATS = ("table", "json", "csv", "markdown")


def listing_options(func: Callable[..., Any] | None = None, *, json_flag: bool = True,
                    formats_help: str = "json is what --json prints",
                    json_help: str = "One JSON object per line on stdout, for other tools") -> Callable[..., Any]:
    """``--format table|json|csv|markdown``, ``--pager/--no-pager`` and (``json_flag``) ``--json``:
    how a command that prints tables prints them, the same on every such command.

    The command runs inside :func:`dsh_audit.report.terminal.listing`, so that its
    :func:`~dsh_audit.report.terminal.print_table` calls write the format chosen. With
    ``json_flag`` the command gets ``as_json`` (``--json``, or ``--format json``); without it it
    reads :func:`~dsh_audit.report.terminal.listing_format`. ``json_help`` says what ``--json`` prints.
    """
    if func is None:
        return functools.partial(listing_options, json_flag=json_flag, formats_help=formats_help,
                                 json_help=json_help)
    command = func

    @functools.wraps(command)
    def run(*args: Any, output_format: str, pager: bool, **kwargs: Any) -> Any:
        from ..report.terminal import listing

        chosen = output_format
        if json_flag:
            if kwargs["as_json"] and output_format != "json":
                dropped = give_way("as_json", "output_format", typed=("--json", f"--format {output_format}"),
                                   clash=lambda first, second: f"{first} and {second} ask for two formats",
                                   hint="--json is --format json: give one of them")
                chosen = output_format if dropped == "as_json" else "json"
            elif kwargs["as_json"]:
                chosen = "json"
            kwargs["as_json"] = chosen == "json"
        with listing(chosen, pager=pager):
            return command(*args, **kwargs)

    options = [click.option("--format", "output_format", type=click.Choice(_FORMATS), default="table",
                            show_default=True,
                            help="How tables are printed: a table for people, json, csv (RFC 4180: a header "
                                 "row and every column per table, each row led by a table column naming its "
                                 "table, tables apart by a blank line; an amount in a money column or a token count a "
                                 "plain number, empty when unknown; a text cell a "
                                 "spreadsheet would read as a formula starts with ') or markdown (a heading "
                                 f"and a GitHub table per table, log text escaped); {formats_help}."),
               click.option("--pager/--no-pager", default=True, help=_pager_help("a table or Markdown"))]
    if json_flag:
        options.insert(0, click.option("--json", "as_json", is_flag=True,
                                       help=f"{json_help} (the same as --format json)."))
    wrapped: Callable[..., Any] = run
    for option in reversed(options):
        wrapped = option(wrapped)
    return wrapped


def _pager_help(what: str) -> str:
    """The help of ``--pager/--no-pager`` (``pager``) on a command that shows ``what`` on a terminal."""
    return (f"On a terminal, show {what} through $DSH_AUDIT_PAGER, else $PAGER, else less (LESS=FRX when "
            "LESS is unset: output that fits the screen is not paged); an empty value or cat means no pager. "
            "--no-pager prints directly.")


def pager_option(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--pager/--no-pager`` on a command that prints no table but may print a screenful or more
    (``show``, ``explain``, ``render``): the same option, the same pager as :func:`listing_options`.
    The command runs inside :func:`dsh_audit.report.terminal.listing`; its first line on stdout
    starts the pager (:func:`echo`, or :func:`dsh_audit.report.terminal.page_listing` before
    output written otherwise)."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        command = func

        @functools.wraps(command)
        def run(*args: Any, pager: bool, **kwargs: Any) -> Any:
            from ..report.terminal import listing

            with listing("table", pager=pager):
                return command(*args, **kwargs)

        wrapped: Callable[..., Any] = click.option("--pager/--no-pager", default=True, help=_pager_help(what))(run)
        return wrapped

    return decorate


def lenient_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--lenient`` and ``--max-version``: how strictly a log is read (passed as ``read_options``)."""
    func = click.option("--max-version", type=click.IntRange(0, 4), default=4, show_default=True,
                        help="Newest log format version to read; 0 reproduces DSH 0.1.0-rc.8, "
                             "which reads only v0.")(func)
    return click.option("--lenient", is_flag=True,
                        help="Accept headers DSH refuses only for metadata (missing version or "
                             "delegationDepth, non-absolute cwd), as for tokenised test fixtures.")(func)


def capture_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--capture PATH`` (``capture``): what was sent, compared with every log as ``check`` compares
    it (default: the ``wire.jsonl`` :func:`dsh_audit.capture.find_capture` finds beside each log)."""
    return click.option("--capture", "capture", type=click.Path(exists=True),
                        help="What was sent, for every log: wire.jsonl, HAR 1.2 or a folder of bodies. "
                             "Default: a wire.jsonl beside each log or up to four folders above it.")(func)


def _use_profile(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """Make ``value`` the DSH profile of every log for this command (``$DSH_AUDIT_PROFILE``)."""
    from ..session import PROFILE_ENV
    from ..wire import check_profile

    if value is not None:
        try:
            check_profile(value)
        except DshAuditError as exc:
            raise click.BadParameter(exc.message, ctx=ctx, param=param) from None
        _set_for_command(ctx, PROFILE_ENV, value)


def routes_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--routes FILE`` (``routes``): DSH's llm-pi-ai route configuration, for facts a log lacks;
    and ``--profile NAME``, the DSH profile whose layers give it when no file is given (read from
    the environment by :func:`dsh_audit.session.routes_from`, so it takes no parameter)."""
    func = click.option("--profile", metavar="NAME", default=None, expose_value=False, callback=_use_profile,
                        help="The DSH profile the sessions ran under (the log does not record it): its "
                             "<DSH_HOME>/profiles/NAME/cordis.patch.yml is read under the home's own layers "
                             "when no --routes is given. Default: $DSH_AUDIT_PROFILE, else the home's only "
                             "profile, else the home's layers alone.")(func)
    return click.option("--routes", metavar="FILE", type=click.Path(dir_okay=False), default=None,
                        help="DSH's llm-pi-ai route configuration (YAML: the llm-pi-ai row, its config, or "
                             "its providers): routes and model facts of hand-declared pi-ai providers, "
                             "which a log does not record. Default: the layers of the DSH home the log is "
                             "in (its profile's and its own cordis.patch.yml, its settings.yaml).")(func)


def prices_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--prices FILE`` (``prices_path``): the price file of every command that prices requests."""
    return click.option("--prices", "prices_path", type=click.Path(dir_okay=False), default=None,
                        help="A price file (JSON or TOML) overriding or extending the packaged table and "
                             "pyproject's [tool.dsh-audit.prices].")(func)


def openai_zdr_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--openai-zdr/--no-openai-zdr`` (``openai_zdr``): the organization's OpenAI Zero Data
    Retention status, on every command that judges the prefix cache (:func:`stated_zdr`)."""
    return click.option(
        "--openai-zdr/--no-openai-zdr", "openai_zdr", default=None,
        help="Whether the OpenAI organization has Zero Data Retention, which decides OpenAI's default "
             "prompt-cache retention (docs/cache-accounting.md). Default: as the nearest pyproject.toml's "
             "[tool.dsh-audit.cache] openai-zero-data-retention states it, else not stated.")(func)


def stated_zdr(flag: bool | None) -> bool | None:
    """The organization's Zero Data Retention status: ``flag`` when given, else the nearest
    ``pyproject.toml``'s (raises :class:`~dsh_audit.errors.UsageError` on a bad value)."""
    from ..cache import pyproject_zero_data_retention

    return flag if flag is not None else pyproject_zero_data_retention()


def jobs_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--jobs/-j N`` (``jobs``): worker processes, one session log per task (0: every CPU)."""
    return click.option("--jobs", "-j", type=click.IntRange(min=0), default=1, show_default=True,
                        help="Worker processes, one session log each; 0 uses every CPU. "
                             "Output is identical to a serial run.")(func)


_RELATIVE = re.compile(r"\s*\d+(?:\.\d+)?\s*[smhdw]\s*")
_WHEN_HINT = ("give a date (2026-11-01), today or yesterday (UTC days), a date-time (2026-11-01T08:30, or with an "
              "offset such as +01:00 or Z; UTC when none) or an age such as 90s, 30m, 12h, 7d or 2w")


def parse_when(text: str, *, option: str = "--since", end: bool = False) -> float:
    """The moment ``text`` names, in seconds since the epoch: the one reader of ``--since`` and
    ``--until`` on every command. An age back from now (``90s``, ``30m``, ``12h``, ``7d``, ``2w``), a
    date (UTC midnight; with ``end``, the next midnight, so ``--until 2026-12-01`` includes that
    day) or an ISO date-time (UTC unless it has an offset).

    Raises:
        UsageError: ``text`` is none of these, or names a moment out of range.

    Example:
        >>> parse_when("2026-12-01"), parse_when("2026-12-01", end=True) - parse_when("2026-12-01")
        (1796083200.0, 86400.0)
    """
    from ..cache import parse_instant
    from ..fleet import parse_since

    try:
        return parse_since(text) if _RELATIVE.fullmatch(text) else parse_instant(text.strip(), end=end)
    except (DshAuditError, OverflowError, OSError, ValueError):
        raise UsageError(f"cannot read {option} {text!r}", hint=_WHEN_HINT) from None


def _parse_when(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    if value is None:
        return None
    option = f"--{param.name}"
    try:
        moment = parse_when(value, option=option, end=param.name == "until")
    except DshAuditError as exc:
        raise click.BadParameter(f"{exc.message} ({exc.hint})", ctx=ctx, param=param) from None
    other_name = "until" if param.name == "since" else "since"
    other = ctx.params.get(other_name)
    if not isinstance(other, float):
        return moment
    # the other bound, read first: an empty window is refused here, unless one bound came from its
    # variable and the other was typed (the typed one wins: give_way)
    since, until = (moment, other) if param.name == "since" else (other, moment)
    if since >= until:
        dropped = give_way("since", "until", typed=("--since", "--until"), clash=_empty_window(since, until),
                           hint=_WINDOW_HINT)
        if dropped == param.name:
            return None
        ctx.params[other_name] = None
    return moment


#: The ``--since`` callback (``watch`` uses it too).
_parse_since = _parse_when


def since_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--since WHEN`` (``since``: seconds since the epoch, or None)."""
    return click.option("--since", metavar="WHEN", default=None, callback=_parse_when,
                        help="Only sessions active at or after WHEN, by the log's own timestamps (not the "
                             "file's mtime): a date (2026-11-01, UTC), today or yesterday (UTC days), a date-time "
                             "(2026-11-01T08:30, UTC unless it has an offset), or an age such as 12h, 7d or 2w.")(func)


def until_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--until WHEN`` (``until``: seconds since the epoch, or None)."""
    return click.option("--until", metavar="WHEN", default=None, callback=_parse_when,
                        help="Only sessions active before WHEN, by the log's own timestamps; same formats as "
                             "--since (a date includes that whole day).")(func)


def time_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--since WHEN`` and ``--until WHEN`` (``since``, ``until``)."""
    return since_option(until_option(func))


def engine_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--engine local|dask`` and ``--scheduler ADDRESS`` (``engine``, ``scheduler``)."""
    func = click.option("--scheduler", metavar="ADDRESS", default=None,
                        help="Dask scheduler address (tcp://host:8786) for --engine dask.")(func)
    return click.option("--engine", type=click.Choice(["local", "dask"]), default="local", show_default=True,
                        help="Where sessions run: local processes (--jobs) or a Dask cluster "
                             "(needs pip install 'dsh-audit[dask]').")(func)


def _use_attachments(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
    """Make the store ``value`` names every log's for this command (``$DSH_AUDIT_ATTACHMENTS``, which
    worker processes inherit), restoring the environment when the command ends."""
    from ..session import ATTACHMENTS_ENV, attachment_root

    if value is None:
        return
    root = attachment_root(value)
    if root is None:
        raise click.BadParameter(f"no attachment store in {value!r}: none of it, its v1 folder or its "
                                 "attachments/v1 folder holds an objects folder", ctx=ctx, param=param)
    _set_for_command(ctx, ATTACHMENTS_ENV, os.path.abspath(root))


def _set_for_command(ctx: click.Context, name: str, value: str) -> None:
    """Set environment variable ``name`` (which worker processes inherit) until the command ends."""
    before = os.environ.get(name)
    os.environ[name] = value

    def restore() -> None:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before

    ctx.call_on_close(restore)


def attachments_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """``--attachments DIR``: the attachment store image requests are rendered from, for every log
    (default: the store of the DSH home a log sits in, else ``$DSH_HOME``'s). The command reads it
    from the environment (:func:`dsh_audit.session.attachment_store`), so it takes no parameter."""
    return click.option("--attachments", metavar="DIR", type=click.Path(file_okay=False), default=None,
                        expose_value=False, callback=_use_attachments,
                        help="DSH's attachment store (<DSH_HOME>/attachments/v1, that folder's parent or the "
                             "DSH home), where the bytes of a logged image are read from. Default: the store "
                             "of the DSH home the log is in, else $DSH_HOME's (else ~/.dsh's). A capture's "
                             "image bytes win.")(func)


__all__ += ["attachments_option"]
