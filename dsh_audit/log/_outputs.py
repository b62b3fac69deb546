"""Files in and out, safely: outputs that never harm the evidence, inputs that are regular files.

A session log is evidence. Every file dsh-audit writes (a report, an index, a step summary) is
first checked against the inputs of the run: the logs, the other logs and captures in their
folders, and any capture, policy, route file or index named on the command line. A path that is
one of them, or resolves to one (symlinks, ``..``, a hard link), is refused before any work is
done. Reports are then written to a temporary file beside the target and renamed over it, so a
failed run never leaves a half-written file; a target that is a device, a FIFO or a socket
(``/dev/null``, ``/dev/stdout``, a pipe) is written to as it is, never replaced by a file.

Inputs are opened with :func:`open_regular`: a FIFO, a device or a symlink loop named like a log
is refused in one line before it is read, instead of hanging or growing without limit.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from ..errors import UnreadableError, UsageError

__all__ = ["ProtectedInputs", "open_regular", "special_kind", "write_atomic"]

_LOG_LIKE = (".jsonl", ".jsonl.zstd", ".har")
_Key = tuple[int, int]


def _inode(path: str) -> _Key | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.abspath(path)


@dataclass(slots=True)
class ProtectedInputs:
    """The files of a run that no output may replace or append to.

    Example:
        >>> evidence = ProtectedInputs.of(["/nonexistent/session.jsonl"], files=["/nonexistent/policy.toml"])
        >>> evidence.input_at("/nonexistent/x/../session.jsonl"), evidence.input_at("/nonexistent/r.json")
        ('/nonexistent/session.jsonl', None)
    """

    paths: dict[str, str] = field(default_factory=dict)  # real path -> the input as given
    inodes: dict[_Key, str] = field(default_factory=dict)
    folders: dict[str, str] = field(default_factory=dict)  # a capture folder: nothing inside it

    @classmethod
    def of(cls, logs: Iterable[str | os.PathLike[str]], *,
           files: Iterable[str | os.PathLike[str] | None] = ()) -> ProtectedInputs:
        """The evidence of a run reading ``logs`` and ``files`` (captures, policies, indexes).

        Beside each log, every other log-like file of its folder (``*.jsonl[.zstd]``, ``*.har``:
        other generations, child logs, ``wire.jsonl``) is protected too.
        """
        evidence = cls()
        folders: set[str] = set()
        for log in logs:
            name = os.fspath(log)
            evidence.add(name)
            folders.add(os.path.dirname(_real(name)))
        for folder in sorted(folders):
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            for entry in names:
                if entry.endswith(_LOG_LIKE):
                    evidence.add(os.path.join(folder, entry))
        for item in files:
            if item is not None and os.fspath(item) != "":
                evidence.add(os.fspath(item))
        return evidence

    def add(self, path: str) -> None:
        real = _real(path)
        if os.path.isdir(real):
            self.folders.setdefault(real, path)
            return
        self.paths.setdefault(real, path)
        key = _inode(path)
        if key is not None:
            self.inodes.setdefault(key, path)

    def input_at(self, target: str | os.PathLike[str]) -> str | None:
        """The input ``target`` names or resolves to, or None when writing there is harmless."""
        name = os.fspath(target)
        real = _real(name)
        if real in self.paths:
            return self.paths[real]
        key = _inode(name)
        if key is not None and key in self.inodes:
            return self.inodes[key]
        for folder, given in self.folders.items():
            if real.startswith(folder.rstrip(os.sep) + os.sep):
                return given
        return None

    def guard(self, target: str | os.PathLike[str] | None, *, what: str) -> None:
        """Raise UsageError when ``target`` (None: no output) is empty, is one of the inputs, is a
        folder or is in a folder that does not exist: said before any log is read, not after
        the work (:func:`write_atomic` would refuse it then)."""
        if target is None:
            return
        name = os.fspath(target)
        if name == "":
            raise UsageError(f"the {what} path is empty", hint="name a file")
        found = self.input_at(name)
        if found is not None:
            raise UsageError(f"the {what} would overwrite the input {found}", path=name,
                             hint="write it to another path")
        folder = os.path.dirname(name) or os.curdir
        if os.path.isdir(name):
            raise UsageError(f"cannot write the {what}: it is a folder", path=name, hint="name a file in it")
        if not os.path.isdir(folder):
            why = "is not a folder" if os.path.lexists(folder) else "does not exist"
            raise UsageError(f"cannot write the {what}: its folder {folder} {why}", path=name,
                             hint="create the folder first, or name a file in a folder that exists")


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
    target = Path(name)
    temp: str | None = None
    try:
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            for piece in pieces:
                handle.write(piece.encode("utf-8", errors="backslashreplace") if isinstance(piece, str) else piece)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)  # as an ordinary new file, not mkstemp's 0600
        os.replace(temp, name)
        temp = None
    except OSError as exc:
        raise UsageError(f"cannot write {what}: {exc.strerror or exc}", path=name) from None
    finally:
        if temp is not None:
            try:
                os.unlink(temp)
            except OSError:
                pass


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


_FIFO = "a FIFO"
_KINDS = ((stat.S_ISFIFO, _FIFO), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    """What a file of ``mode`` that is neither a regular file nor a folder is, in words."""
    return next((label for test, label in _KINDS if test(mode)), "not a regular file")


def special_kind(path: str | os.PathLike[str]) -> str | None:
    """What an existing ``path`` is when it is neither a regular file nor a folder (``a FIFO``, ``a
    character device``...), following symlinks; None for a file, a folder or nothing there.

    Example:
        >>> special_kind("/dev/null"), special_kind("README.md"), special_kind("no/such/file")
        ('a character device', None, None)
    """
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else _kind(mode)


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
