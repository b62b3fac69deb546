"""How a command prints its tables (``--format``) and the pager that shows them on a terminal.

:func:`listing` holds the choice for one command; :mod:`dsh_audit.report.terminal` reads it
when it prints. The pager (``$DSH_AUDIT_PAGER``, else ``$PAGER``, else ``less``) starts at the
first line written, takes stdout's descriptor until the listing ends, and the listing's end
waits for it, as ``git`` does.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess

__all__ = ["LISTING_FORMATS", "Listing", "current", "listing", "listing_format", "live", "pager_command",
           "paging", "start_pager"]

#: The ``--format`` of a command that prints a listing: the table, JSON, CSV or Markdown.
LISTING_FORMATS = ("table", "json", "csv", "markdown")
# The pager when neither DSH_AUDIT_PAGER nor PAGER is set, and its LESS when LESS is unset: quit
# at once when the text fits one screen (F), keep colours (R), leave the text on screen (X).
_DEFAULT_PAGER = "less"
_DEFAULT_LESS = "FRX"


class Listing:
    """How this command prints its listing (``--format``, ``--pager``), and its pager once started."""

    def __init__(self, fmt: str, *, pager: bool) -> None:
        self.format = fmt
        self.page = pager and fmt in ("table", "markdown")  # a pager is due at the first line written
        self.tables = 0  # tables printed: in CSV, a blank line goes before the next one
        self.written = False  # Markdown: a line or a caption went last: a blank line goes before the next block
        self.width: int | None = None  # the terminal's width while paging (stdout is the pager's pipe)
        self.process: subprocess.Popen[bytes] | None = None
        self.terminal: int | None = None  # stdout's own descriptor while paging


_CURRENT: ContextVar[Listing | None] = ContextVar("dsh_audit_listing", default=None)
# How to stop each progress bar on the terminal now: a pager about to own it stops them.
_LIVE_BARS: list[Callable[[], None]] = []


def current() -> Listing | None:
    """The running command's listing, if it prints one."""
    return _CURRENT.get()


@contextmanager
def listing(fmt: str = "table", *, pager: bool = True) -> Iterator[Listing]:
    """Print this block's tables as ``fmt`` (one of :data:`LISTING_FORMATS`), through a pager when
    ``pager``, stdout is a terminal and ``fmt`` is a table or Markdown.

    The pager starts at the first line written (:func:`start_pager`), after stopping any progress
    bar, and the block's end waits for it to exit. A pager that quit before the last line is a
    reader gone, as after ``| head``: under the console script what is written from then on is
    dropped and the command runs to its end, with the exit code it would have had
    (:func:`dsh_audit.cli._common.discard_stdout_when_gone`). Only a stdout left unwrapped (a
    library caller's) can see the pipe break here: the block's end then raises BrokenPipeError,
    which the CLI reports as a bug (exit 3), never as a pass.
    """
    state = Listing(fmt, pager=pager and sys.stdout.isatty())
    token = _CURRENT.set(state)
    try:
        yield state
    except BaseException:
        _CURRENT.reset(token)
        _end_pager(state)  # what stopped the command (Ctrl-C: exit 130) is what the CLI reports
        raise
    _CURRENT.reset(token)
    if _end_pager(state):
        raise BrokenPipeError


def listing_format() -> str:
    """The ``--format`` of the running command (``table`` outside :func:`listing`)."""
    state = _CURRENT.get()
    return "table" if state is None else state.format


@contextmanager
def live(stop: Callable[[], None]) -> Iterator[None]:
    """While the block runs, a pager about to own the terminal calls ``stop`` (a progress bar's)."""
    _LIVE_BARS.append(stop)
    try:
        yield
    finally:
        _LIVE_BARS.remove(stop)


def paging() -> bool:
    """A pager owns the terminal: no progress bar may draw on it."""
    state = _CURRENT.get()
    return state is not None and state.process is not None


def pager_command() -> tuple[list[str], bool] | None:
    """The pager to start, and whether the user chose it: ``DSH_AUDIT_PAGER``, else ``PAGER``, else
    ``less``; None for none (an empty value, or ``cat``).

    Raises:
        ValueError: the variable's quotes do not pair up.
    """
    for name in ("DSH_AUDIT_PAGER", "PAGER"):
        value = os.environ.get(name)
        if value is not None:
            argv = shlex.split(value)
            return None if not argv or argv == ["cat"] else (argv, True)
    return [_DEFAULT_PAGER], False


def start_pager(width: Callable[[], int]) -> str | None:
    """Before the first line of a listing: start the pager when one is due (:func:`listing`).

    The terminal's ``width()`` is kept for the tables, every progress bar is stopped, and stdout's
    descriptor becomes the pager's input until the listing ends. A pager that cannot start leaves
    stdout as it is: the result is then why (when the user chose that pager), to show as a warning.
    """
    state = _CURRENT.get()
    if state is None or not state.page:
        return None
    state.page = False  # once
    try:
        chosen = pager_command()
    except ValueError as exc:
        return f"cannot start the pager: {exc}"
    if chosen is None:
        return None
    argv, explicit = chosen
    columns = width()
    env = dict(os.environ)
    env.setdefault("LESS", _DEFAULT_LESS)
    import subprocess  # only a listing to a terminal starts a pager: `--json` to a pipe never loads it

    try:
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, env=env)
    except OSError as exc:
        return f"cannot start the pager {shlex.join(argv)!r}: {exc.strerror or exc}" if explicit else None
    state.process, state.width = process, columns  # from here on, the listing's end waits for it
    for stop in list(_LIVE_BARS):
        stop()
    assert process.stdin is not None
    sys.stdout.flush()
    state.terminal = os.dup(sys.stdout.fileno())
    os.dup2(process.stdin.fileno(), sys.stdout.fileno())
    process.stdin.close()  # stdout is now the pipe's only writer: the pager sees its end when we close it
    return None


def _end_pager(state: Listing) -> bool:
    """Give stdout back to the terminal and wait for the pager to exit (Ctrl-C meanwhile is the
    pager's: ``less`` uses it). True when the pager quit before the last line reached it."""
    process, terminal = state.process, state.terminal
    if process is None:
        return False
    state.process = state.terminal = None
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if main_thread else None
    broken = False
    try:
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            broken = True
        if terminal is not None:
            # The pager's pipe closes: it reads to its end. Once it has quit, what is left to write
            # (still in stdout's buffer) goes nowhere, as after ``| head``, not onto the terminal.
            target = os.open(os.devnull, os.O_WRONLY) if broken else terminal
            os.dup2(target, sys.stdout.fileno())
            os.close(terminal)
            if target != terminal:
                os.close(target)
        if process.stdin is not None:
            process.stdin.close()
        process.wait()
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return broken
