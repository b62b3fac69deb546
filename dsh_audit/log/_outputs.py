"""Files in and out by their kind: reports written whole, and inputs that are regular files.

Reports are written to a temporary file beside the target and renamed over it, so a failed run
never leaves a half-written file; a target that is a device, a FIFO or a socket (``/dev/null``,
``/dev/stdout``, a pipe) is written to as it is, never replaced by a file. Where a report may be
written at all is the guard's to say (:class:`~dsh_audit.log.ProtectedInputs`).

Inputs are opened with :func:`open_regular`: a FIFO, a device or a symlink loop named like a log
is refused in one line before it is read, instead of hanging or growing without limit.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from typing import BinaryIO

from ..errors import UnreadableError, UsageError
from ._file_kind import _FIFO, _kind, special_kind
from ._protected import ProtectedInputs

__all__ = ["open_regular", "write_atomic"]


def write_atomic(path: str | os.PathLike[str], data: str | bytes | Iterable[str], *, what: str = "report") -> None:
    """Write ``data`` to ``path`` through a temporary file beside it, renamed over it at the end.

    A failure leaves ``path`` as it was and no temporary file behind. Text is written as UTF-8
    (a lone surrogate, which UTF-8 cannot hold, is written as its ``\\udXXX`` escape); an iterable
    of strings is written piece by piece, never joined in memory.

    A target that exists and is neither a regular file nor a folder (``/dev/null``, ``/dev/stdout``,
    a FIFO) is written to directly: renaming over it would replace the device itself (as root,
    ``-o /dev/null`` left a regular file in place of /dev/null). A symlink to a regular file is
    followed: the file it names is replaced, not the link.

    Raises:
        UsageError: ``cannot write {what}: <reason>`` when the folder is missing or not writable.
    """
    name = os.fspath(path)
    pieces: Iterable[str | bytes] = [data] if isinstance(data, (str, bytes)) else data
    kind = special_kind(name)
    if kind is not None:
        _write_through(name, pieces, fifo=kind == _FIFO, what=what)
        return
    if os.path.islink(name):  # the file the link names is replaced, never the link (/dev/stdout)
        name = os.path.realpath(name)
    try:
        with ProtectedInputs.staged(name, what=what) as temp:
            with open(temp, "wb") as handle:
                for piece in pieces:
                    handle.write(piece.encode("utf-8", errors="backslashreplace") if isinstance(piece, str) else piece)
            ProtectedInputs.commit(temp, name)
    except OSError as exc:
        raise UsageError(f"cannot write {what}: {exc.strerror or exc}", path=name) from None


def _write_through(name: str, pieces: Iterable[str | bytes], *, fifo: bool, what: str) -> None:
    """Write to the device, FIFO or socket ``name`` as it is; a FIFO that no program reads is
    refused at once (opened without blocking), not waited on."""
    try:
        fd = os.open(name, os.O_WRONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        reason = ("no program is reading the FIFO" if fifo and exc.errno == errno.ENXIO
                  else exc.strerror or str(exc))
        raise UsageError(f"cannot write {what}: {reason}", path=name) from None
    try:
        os.set_blocking(fd, True)
        with os.fdopen(fd, "wb") as handle:
            for piece in pieces:
                handle.write(piece.encode("utf-8", errors="backslashreplace") if isinstance(piece, str) else piece)
    except OSError as exc:
        raise UsageError(f"cannot write {what}: {exc.strerror or exc}", path=name) from None


def open_regular(path: str | os.PathLike[str], *, what: str = "log file") -> BinaryIO:
    """Open ``path`` for reading when it is a regular file, without ever blocking on it.

    A FIFO, a device (``/dev/zero`` behind a symlink), a socket, a folder or a symlink loop is
    refused before a byte is read: opening uses ``O_NONBLOCK`` and the kind is checked on the
    open descriptor, so a FIFO with no writer cannot hang the run.

    Raises:
        UnreadableError: one line naming the file and why it is not readable as a ``what``.
    """
    name = os.fspath(path)
    if name == "":
        raise UnreadableError("empty path", hint=f"name a {what}")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags)
    except IsADirectoryError:
        raise UnreadableError(f"is a folder, not a {what}", path=name) from None
    except OSError as exc:
        reason = "symlink loop" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
        raise UnreadableError(f"cannot open: {reason}", path=name) from None
    except ValueError:
        raise UnreadableError("cannot open: the path holds a NUL byte", path=name) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise UnreadableError(f"is a folder, not a {what}", path=name)
        kind = _kind(mode)
        raise UnreadableError(f"is {kind}, not a {what}" if kind != "not a regular file" else
                              f"is not a regular file, not a {what}", path=name,
                              hint="only regular files are read")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")
