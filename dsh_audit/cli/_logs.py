"""The session logs a command reads: its PATH arguments (a path, ``latest``, a session id or a
unique prefix of one, or the default sessions root), the logs under them in the ``--since/--until``
window and in listing order, the logs no output may overwrite, and the progress bar of reading them.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import click

from .._listing import listed
from ..errors import DshAuditError, UnreadableError, UsageError
from ._common import echo_note
from ._copy_notes import grouped_notes as grouped_notes  # re-exported: cli._fleet reads it from here
from ._when import check_window, window_text

__all__ = ["GATING_COMMANDS", "evidence_logs", "file_size", "guard_evidence", "log_progress", "newest_first", "one_log",
           "selected_logs", "session_paths", "session_ref"]

#: A PATH that names a file by its form (a folder separator, a log's or capture's suffix) is a
#: path, never a session id: when it does not exist, discovery says so.
_PATH_FORM = re.compile(r"[/\\]|\.(?:jsonl|zstd|zst|json|har)$", re.IGNORECASE)


#: The hint of a PATH that names nothing: a path that does not exist (:func:`_existing`), or a
#: session reference with no sessions folder to look it up in (:func:`session_ref`).
_REF_HINT = ("pass the path of a log or a session folder, or a session id or `latest`: looked up in "
             "$DSH_HOME/sessions; set DSH_HOME to the DSH home that holds sessions/")


def session_ref(path: str) -> str:
    """A PATH argument as every command reads it: ``path`` itself when it exists (a file or folder
    always wins over an id) or has a path's form and is no session id as `sessions` shows it
    (:data:`_PATH_FORM`, :func:`dsh_audit.log.names_session`: one that does not exist is
    refused by :func:`_existing` in :func:`one_log` and :func:`session_paths`, with
    :data:`_REF_HINT`; ``watch``, which waits for it, and library callers get discovery's error); else ``latest``, a session id or a unique id prefix, looked up under
    $DSH_HOME/sessions (else ~/.dsh/sessions) and given as that session's log
    (:func:`dsh_audit.log.resolve_session`). The one reader of session references: the PATHS of a
    command that reads a set of logs (:func:`session_paths`) and the PATH of one that reads one
    (:func:`one_log`). A session in several files is read from the one the rule of copies reads,
    and a note names the copies left out.

    Raises:
        UsageError: ``path`` names no session, or several (the message lists up to five), or one in
            several files that differ.
        UnreadableError: there is no sessions folder to look it up in.
    """
    _check_limits()
    if path == "" or os.path.lexists(path):
        return path
    from ..log import default_sessions_root, is_folder, names_session, resolve_session

    if _PATH_FORM.search(path) and not names_session(path):  # a header id shown so: `../../etc`, `a\u001b…`
        return path

    root = default_sessions_root()
    if not is_folder(root):  # said here, naming the folder and what picks another (not "set DSH_HOME so that")
        where = "$DSH_HOME/sessions" if os.environ.get("DSH_HOME") else "~/.dsh/sessions: DSH_HOME is not set"
        state = "is not a folder" if os.path.lexists(root) else "does not exist"
        raise UnreadableError(f"no such file or folder, and not a session id: the sessions folder {root} ({where}) "
                              f"{state}", path=path, hint=_REF_HINT)
    notes: list[str] = []
    named = str(resolve_session(path, notes=notes))
    _note_once(notes)
    return named


def _existing(path: str) -> str:
    """``path`` (a PATH as :func:`session_ref` gives it), when something is there.

    Raises:
        UnreadableError: nothing is at ``path``: named as typed (a trailing ``/`` kept), with the
            ways a PATH names a session (:data:`_REF_HINT`).
    """
    if path and not os.path.lexists(path):
        raise UnreadableError("no such file or folder", path=path, hint=_REF_HINT)
    return path


def _note_once(notes: Iterable[str]) -> None:
    """Each of ``notes`` as ``note: ...`` on stderr, once per command run: a command that looks its
    PATHs up twice (the logs it reads, the logs its output may not overwrite) says a note once."""
    context = click.get_current_context(silent=True)
    said: set[str] = context.find_root().meta.setdefault("dsh_audit.refs_noted", set()) if context else set()
    for note in notes:
        if note not in said:
            said.add(note)
            echo_note(note)


def _check_limits() -> None:
    """Refuse a bad ``DSH_AUDIT_MAX_DECODED`` or ``DSH_AUDIT_MAX_RATIO`` once, naming the variable,
    before any log is read (each log's reader would otherwise say it at that log's path, as if
    the log were at fault): the first thing every command that reads logs does with its PATHs.

    Raises:
        UsageError: a value that is not a size or a whole number (:func:`dsh_audit.log.decode_limits`).
    """
    from ..log import decode_limits

    decode_limits()


def one_log(path: str) -> Path:
    """The one session log ``path`` names: a file, a folder holding exactly one session log,
    ``latest``, a session id or a unique id prefix under $DSH_HOME/sessions (:func:`session_ref`)."""
    from ..log import discover, resolve_session

    named = _existing(session_ref(path))  # a missing path: "no such file or folder", as every command says it
    if os.path.isdir(named):
        _one_of(named, discover([named]))
    return resolve_session(named)


#: How many logs an error naming several lists (as an ambiguous id prefix lists its ids).
_LISTED = 5


def _one_of(folder: str, logs: Sequence[Path]) -> None:
    """Raise when ``folder`` holds several session logs, naming them (shell-quoted, up to
    :data:`_LISTED`) and how to pick one.

    Raises:
        UsageError: ``logs`` holds more than one log.
    """
    if len(logs) < 2:
        return
    shown = listed([shlex.quote(str(log)) for log in logs], shown=_LISTED)
    raise UsageError(f"expected one session log, found {len(logs)}: {shown}", path=folder,
                     hint="pass one of those files, or its session id (`dsh-audit sessions PATH` lists them)")


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


def session_paths(paths: Sequence[str]) -> tuple[str, ...]:
    """``paths``, each a path or a session reference (:func:`session_ref`: ``latest``, a session
    id or a unique id prefix, given as its log), or the sessions root (``$DSH_HOME/sessions``, else
    ``~/.dsh/sessions``) when none is given: the default of every command that takes session paths.

    Raises:
        UnreadableError: a path does not exist; no path is given and the sessions root is not a
            folder, or a reference has no sessions folder to be looked up in.
        UsageError: a reference names no session, or several.
    """
    if paths:
        return tuple(_existing(session_ref(path)) for path in paths)
    _check_limits()
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


def guard_evidence(paths: Sequence[str], target: str | None, *, what: str, option: str | None = None,
                   report: bool = True, settings: bool = True) -> None:
    """Refuse to write ``target`` (the ``what`` a command's ``option`` writes, a ``report`` or
    not; None or empty: nothing is written) over any of :func:`evidence_logs`, or where it cannot
    be written (:func:`~dsh_audit.cli._output_guard.guard_output`); with no ``option``, only where
    :meth:`~dsh_audit.log.ProtectedInputs.guard` refuses it. ``settings``: as
    :meth:`~dsh_audit.log.ProtectedInputs.of` takes it (False: a command that reads no ``pyproject.toml``).

    Raises:
        UsageError: it is one of them, or cannot be written.
    """
    from ..log import ProtectedInputs
    from ._output_guard import guard_output

    if not target:
        return
    protected = ProtectedInputs.of(evidence_logs(paths), settings=settings)
    if option is None:
        protected.guard(target, what=what)
    else:
        guard_output(protected, target, option=option, what=what, report=report)


#: The commands that gate a build (``1`` when a finding fails): given nothing to check (no log
#: under PATH, or none in the ``--since/--until`` window) they exit ``2``, since a gate that checked
#: nothing must not pass; every other command lists nothing, says why in a note and exits ``0``.
GATING_COMMANDS = frozenset({"check", "validate"})

#: discovery's error for a folder with no session log below it (:func:`dsh_audit.log.discover`)
_NO_LOG = "folder holds no DSH session log"


def _command() -> str | None:
    """The name of the running command (None outside one)."""
    context = click.get_current_context(silent=True)
    return None if context is None else context.command.name


def _gating() -> bool:
    """Whether the running command is one of :data:`GATING_COMMANDS`."""
    return _command() in GATING_COMMANDS


def _log_span(log: Path) -> tuple[float, float] | None:
    """The first and last of a log's own timestamps (:func:`dsh_audit.log.time_span`; for another
    agent's log, Claude Code or Codex, the ``timestamp`` of its first and last records,
    :func:`dsh_audit.importers.record_span`, else its imported session's
    :meth:`~dsh_audit.session.Session.span`);
    None when its times cannot be read. Another agent's log is imported once, by the run: selecting
    it reads its two ends."""
    from ..importers import record_span
    from ..log import detect_format, time_span
    from ..session import open_foreign

    span = time_span(log)
    if span is not None:
        return span
    try:
        if detect_format(log) not in _FOREIGN:
            return None
        span = record_span(log)
        imported = None if span is not None else open_foreign(str(log))
    except (DshAuditError, OSError, ValueError):
        return None  # the run reads it again and says why
    if imported is None:
        return span
    first, last = imported.span()
    return None if first is None or last is None else (first, last)


#: The formats of another agent's log (:func:`dsh_audit.log.detect_format`): plain JSON lines, each
#: record with its ``timestamp`` (ISO 8601), appended as they happen.
_FOREIGN = ("claude-code", "codex")


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
    found = len(logs)
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
            notes.extend(_named_foreign([log for log in logs if log not in kept], given, window_text(since, until)))
        if unknown:
            notes.append(f"{window_text(since, until)}: {unknown} log(s) whose own timestamps cannot be read kept, "
                         "so that the run says why")
        logs = kept
    # a discovery retried past an empty folder says its notes again; `sessions`, which reads every
    # log's header, says each session in several files that differ ("each listed") itself
    for note in grouped_notes(dict.fromkeys(notes), listed=_command() != "sessions"):
        echo_note(note)
    if gate and windowed and not logs:
        raise _empty_window_error(given, found, window_text(since, until))
    return logs


def _named_foreign(left: Sequence[Path], given: Sequence[str], window: str) -> list[str]:
    """The one note on the logs of another agent (Claude Code, Codex) that are themselves PATHS
    ``given`` (not found in a folder) and the window left out (``left``), when the running command
    reads DSH logs only and so refuses such a file in the window: the window leaves it out as it
    leaves out a DSH log named so, and this says it, never silently; none otherwise.

    Example:
        >>> _named_foreign([], ["a.jsonl"], "--since 2030-01-01T00:00:00Z")
        []
    """
    from ..log import detect_format, foreign_refusal

    named = {Path(path) for path in given}
    try:
        kinds = {log: detect_format(log) for log in left if log in named}
    except (DshAuditError, OSError, ValueError):
        return []  # unreadable now: it was left out by its times, which were read
    foreign = {log: kind for log, kind in kinds.items() if kind in _FOREIGN}
    command = _command()
    if not foreign or command not in foreign_refusal("")[1].rpartition("; ")[2].replace(",", "").split():
        return []
    if len(foreign) == 1:
        log, kind = next(iter(foreign.items()))
        return [f"{window}: {log}, a {kind} session named as a PATH, is left out by the window as a DSH log with no "
                f"activity in it is (in the window, {command} refuses it: it reads DSH logs only)"]
    return [f"{window}: {len(foreign)} logs of another agent named as PATHS "
            f"({listed([os.fspath(log) for log in foreign])}) are left out by the window as DSH logs with no activity "
            f"in it are (in the window, {command} refuses them: it reads DSH logs only)"]


def _empty_window_error(given: Sequence[str], found: int, window: str) -> UsageError:
    """The error of a gating command whose window leaves none of the ``found`` logs under the
    ``given`` PATHS: one PATH names itself; several are counted, as the note before it counts the
    logs left out (a line as short for thousands of PATHS as for two).

    Example:
        >>> print(_empty_window_error(["a", "b"], 11, "--since 2030-01-01T00:00:00Z"))
        none of the 11 log(s) under PATHS has activity in --since 2030-01-01T00:00:00Z (by the logs' own timestamps) (hint: widen or drop --since/--until)
    """
    said = "(by the logs' own timestamps)"
    if len(given) == 1:
        return UsageError(f"no session log has activity in {window} {said}", path=given[0],
                          hint="widen or drop --since/--until")
    return UsageError(f"none of the {found} log(s) under PATHS has activity in {window} {said}",
                      hint="widen or drop --since/--until")
