"""Where a command's output options may write, said before any log is read.

Every option that writes a file (``check --json-report/--junit/--sarif/--markdown``, ``report -o``,
``validate --sarif``; ``index --db`` and ``redact -o`` through the library's own guard) is refused
one way, by :meth:`dsh_audit.log.ProtectedInputs.guard`: an input of the run (a log, a capture, a
policy, an index), a folder, a device or FIFO an output would be renamed over, a folder that does
not exist or cannot be written to, each in one line naming the path, the output and why. click's
own path checks (``dir_okay=False``, ``writable=True``) are not used on them: they would say it in
click's words instead. ``-`` is stdout for every option that can write there.

A FIFO is written to as it is, when a program reads it: one that no program reads is refused here,
at once, not after the work; one that is read is held open for writing until the command ends, so
that the reader does not see the end of its input before the report is written.
"""

from __future__ import annotations

import errno
import os
from functools import partial

import click

from ..errors import UsageError
from ..log import ProtectedInputs, special_kind
from ._output import STDOUT

__all__ = ["guard_output", "no_stdout"]

#: The FIFOs found read (:func:`_read_fifo`) outside a click command, held open for writing while
#: the process lasts.
_HELD: list[int] = []


def guard_output(protected: ProtectedInputs, path: str | None, *, option: str, what: str,
                 report: bool = True) -> None:
    """Refuse, before any log is read, the ``path`` given to ``option`` for the ``what`` it writes
    (None: not given). A ``report`` (the default) is written whole: ``-`` is stdout, and a FIFO is
    written through when a program reads it (:func:`_read_fifo`); an output that is not one (an
    index) refuses ``-`` (:func:`no_stdout`) and says itself what it makes of a FIFO.

    Raises:
        UsageError: one line naming ``path``, the ``what`` and why it cannot be written there; one
            that would overwrite an input or another output says to give ``option`` another path.
    """
    if path is None or path == STDOUT and report:
        return
    no_stdout(path, option=option, what=what)
    protected.guard(path, what=what, hint=f"give {option} another path")
    if report:
        _read_fifo(path, option=option, what=what)


def no_stdout(path: str | None, *, option: str, what: str) -> None:
    """Refuse ``-`` (stdout) given to ``option``, whose ``what`` is kept as a file (a SQLite index,
    a redacted capture beside its bundle), never printed: ``-`` is no file's name.

    Raises:
        UsageError: ``path`` is ``-``.
    """
    if path == STDOUT:
        raise UsageError(f"{option} -: the {what} cannot be written to stdout", hint=f"give {option} a path instead")


def _read_fifo(path: str, *, option: str, what: str) -> None:
    """Refuse a FIFO at ``path`` that no program reads; hold one that is read open for writing.

    Raises:
        UsageError: no program reads the FIFO (the hint names ``option``).
    """
    if special_kind(path) != "a FIFO":
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno != errno.ENXIO:
            return  # said when it is written, as every other write error is
        raise UsageError(f"cannot write the {what}: no program is reading the FIFO", path=path,
                         hint=f"start the program that reads it first, or give {option} a file or -") from None
    context = click.get_current_context(silent=True)
    if context is None:
        _HELD.append(fd)
    else:  # closed as the command ends: its report is written by then (or never will be)
        context.call_on_close(partial(os.close, fd))
