"""Outputs that never harm the evidence: the inputs of a run, and the guard every output passes.

A session log is evidence. Every file dsh-audit writes (a report, an index, a step summary) is
first checked against the inputs of the run: the logs, the other logs and captures in their
folders, any capture, policy, route file or index named on the command line, and, for a command that
reads it, the nearest ``pyproject.toml`` (the settings every command that prices or judges reads;
``validate`` reads none, so its report may replace one). A path that is
one of them, or resolves to one (symlinks, ``..``, a hard link), is refused before any work is
done (:meth:`ProtectedInputs.guard`, one wording for every command).

An output that must be new (``redact``'s files, and the folder of a redacted body-folder capture:
refused when it exists, unless ``--force``) is checked by the same guard (``force=``, ``folder=``),
staged under a temporary name beside it (:meth:`ProtectedInputs.staged`) and renamed into place
(:meth:`ProtectedInputs.commit`) once the run has checked it, so nothing partial is left either.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .._capture_place import CAPTURE_NAME, capture_folders
from .._lazy import LazyModule
from ..errors import UsageError
from ._file_kind import special_kind

if TYPE_CHECKING:
    import tempfile
else:
    tempfile = LazyModule("tempfile")  # loaded by the first output staged: reading a log writes none

__all__ = ["ProtectedInputs"]

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
    """The files of a run that no output may replace or append to, and the outputs it claimed.

    Example:
        >>> evidence = ProtectedInputs.of(["/nonexistent/session.jsonl"], files=["/nonexistent/policy.toml"])
        >>> evidence.input_at("/nonexistent/x/../session.jsonl"), evidence.input_at("/nonexistent/r.json")
        ('/nonexistent/session.jsonl', None)
    """

    paths: dict[str, str] = field(default_factory=dict)  # real path -> the input as given
    inodes: dict[_Key, str] = field(default_factory=dict)
    folders: dict[str, str] = field(default_factory=dict)  # a capture folder: nothing inside it
    outputs: dict[str, tuple[str, str]] = field(default_factory=dict)  # real path -> (what, as given): claim()

    @classmethod
    def of(cls, logs: Iterable[str | os.PathLike[str]], *, files: Iterable[str | os.PathLike[str] | None] = (),
           settings: bool = True) -> ProtectedInputs:
        """The evidence of a run reading ``logs`` and ``files`` (captures, policies, indexes).

        Beside each log, every other log-like file of its folder (``*.jsonl[.zstd]``, ``*.har``:
        other generations, child logs, ``wire.jsonl``) is protected too, and so is every ``wire.jsonl``
        the views look in for its capture (:meth:`captures_near`: up to four folders above). With ``settings`` (a run
        that reads them), so is the nearest ``pyproject.toml`` (:func:`_nearest_pyproject`), table
        or none: check, report and index read it for their policy, prices and ZDR status, some only
        after an output is guarded (the price table). A run that reads no settings (``validate``)
        passes ``settings=False``: an output is refused over what the run reads, not over every
        file some other command might.
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
        for item in (*files, _nearest_pyproject() if settings else None):
            if item is not None and os.fspath(item) != "":
                evidence.add(os.fspath(item))
        for capture in (found for folder in sorted(folders) for found in cls.captures_near(folder)):
            evidence.add(capture)  # after ``files``: a capture given or found is named as the command names it
        return evidence

    @staticmethod
    def captures_near(log: str | os.PathLike[str], *, folder: bool = True) -> list[str]:
        """Every ``wire.jsonl`` where the views look for the capture of a log in the folder ``log`` (or of
        the log ``log``, ``folder`` False): beside it and up to four folders above
        (:func:`dsh_audit._capture_place.capture_folders`), whichever one :func:`~dsh_audit.capture.find_capture`
        takes, and with ``--no-capture`` too: evidence of the log, which no output may replace, read by
        the run or not. Only looked at (``lstat``), never opened.

        Example:
            >>> ProtectedInputs.captures_near("/nonexistent/logs")
            []
        """
        anchor = os.path.join(os.fspath(log), "log") if folder else os.fspath(log)
        return [os.fspath(path) for path in (above / CAPTURE_NAME for above in capture_folders(anchor))
                if os.path.lexists(path)]

    def add(self, path: str) -> None:
        real = _real(path)
        if os.path.isdir(real):
            self.folders.setdefault(real, path)
            return
        self.paths.setdefault(real, path)
        key = _inode(path)
        if key is not None:
            self.inodes.setdefault(key, path)

    def claim(self, target: str | os.PathLike[str], *, what: str) -> None:
        """Record ``target`` as the ``what`` this run writes: a later :meth:`guard`\\ ed output may not
        be it, lie inside it (a folder output) or hold it."""
        name = os.fspath(target)
        self.outputs.setdefault(_real(name), (what, name))

    def input_at(self, target: str | os.PathLike[str]) -> str | None:
        """The input ``target`` names or resolves to (or lies in: a protected folder), or None when
        writing there is harmless."""
        name = os.fspath(target)
        real = _real(name)
        if real in self.paths:
            return self.paths[real]
        key = _inode(name)
        if key is not None and key in self.inodes:
            return self.inodes[key]
        for folder, given in self.folders.items():
            if real == folder or real.startswith(folder.rstrip(os.sep) + os.sep):
                return given
        return None

    def _clash(self, name: str) -> tuple[str, str] | None:
        """What writing at ``name`` would overwrite: ``("input", path)`` or a claimed output's
        ``(what, path)``."""
        found = self.input_at(name)
        if found is not None:
            return "input", found
        real = _real(name)
        return next((claimed for folder, claimed in self.outputs.items()
                     if real == folder or real.startswith(folder.rstrip(os.sep) + os.sep)), None)

    def _held(self, name: str) -> tuple[str, str] | None:
        """An input or a claimed output inside the folder ``name`` (which a folder output replaces)."""
        inside = _real(name).rstrip(os.sep) + os.sep
        for real, given in [*self.paths.items(), *self.folders.items()]:
            if real.startswith(inside):
                return "input", given
        return next((claimed for real, claimed in self.outputs.items() if real.startswith(inside)), None)

    def guard(self, target: str | os.PathLike[str] | None, *, what: str, force: bool | None = None,
              folder: bool = False, replaces: tuple[str, ...] = (), hint: str | None = None) -> None:
        """Refuse, before any log is read, an output ``target`` (None: no output) that cannot be
        written: said then, not after the work (:func:`write_atomic` would refuse it then).

        Every output is refused when its path is empty, when it is (or resolves to, or lies inside
        the folder of) an input or an output :meth:`claim`\\ ed before (``hint``: how to choose
        another path; default ``write it to another path``), or when its folder does not exist or
        cannot be written to (a device or a FIFO, written to as it is, wherever it lies).

        A file output (the default, a report) replaces a file there and is written through to a
        device or a FIFO (:func:`write_atomic`), never to a folder. With ``force`` given (an output
        written whole and renamed into place: :meth:`staged`), one that exists is refused
        unless ``force``, and so is a device, a FIFO or a socket (the rename would replace it).

        With ``folder`` (an output that is a folder, :meth:`staged` ``folder=True``), it
        must not hold an input or a claimed output, nor be anything but a folder; one that exists
        is refused unless ``force``, which replaces only a folder of regular files whose names end
        with one of ``replaces`` (any name when empty): never a folder the run did not write.

        Raises:
            UsageError: one line naming the target, and what to do instead.
        """
        if target is None:
            return
        name = os.fspath(target)
        if name == "":
            raise UsageError(f"the {what} path is empty", hint=f"name a {'folder' if folder else 'file'}")
        for verb, found in (("would overwrite", self._clash(name)),
                            ("would replace the folder holding", self._held(name) if folder else None)):
            if found is not None:
                raise UsageError(f"the {what} {verb} the {found[0]} {found[1]}", path=name,
                                 hint=hint or "write it to another path")
        _check_kind(name, what=what, force=force, folder=folder, replaces=replaces)
        parent = os.path.dirname(name) or os.curdir
        if not os.path.isdir(parent):
            why = "is not a folder" if os.path.lexists(parent) else "does not exist"
            raise UsageError(f"cannot write the {what}: its folder {parent} {why}", path=name,
                             hint="create the folder first, or name a file in a folder that exists")
        # an output is made beside its target and renamed over it (a link's: beside the file it names);
        # a device or a FIFO is written to as it is, wherever it lies
        beside = os.path.dirname(_real(name)) if os.path.islink(name) else parent
        if special_kind(name) is None and not os.access(beside, os.W_OK | os.X_OK):
            raise UsageError(f"cannot write the {what}: its folder {beside} is not writable", path=name,
                             hint="name a file in a folder you can write to")

    @staticmethod
    @contextmanager
    def staged(path: str | os.PathLike[str], *, what: str, folder: bool = False,
               hint: str | None = None) -> Iterator[Path]:
        """A new, empty temporary file (or folder) beside ``path``, with the mode of an ordinary new
        one, removed when the block ends unless :meth:`commit` renamed it to ``path``: an output is
        written whole under that name, checked, and renamed into place, so a failure leaves nothing
        partial. An error inside the block that only writing fails with (a full disk, a quota, a
        file too large, a read-only file system) becomes the one line ``cannot write {what}: ...``.

        Raises:
            UsageError: ``cannot write {what}: <reason>`` (with ``hint``) when the folder of
                ``path`` takes no new file, or writing fails so.

        Example:
            >>> import tempfile; folder = tempfile.mkdtemp()
            >>> with ProtectedInputs.staged(f"{folder}/out.txt", what="the output") as temp:
            ...     _ = temp.write_text("whole")
            ...     ProtectedInputs.commit(temp, f"{folder}/out.txt")
            >>> os.listdir(folder), Path(f"{folder}/out.txt").read_text()
            (['out.txt'], 'whole')
        """
        name = os.fspath(path)
        parent, base = os.path.dirname(name) or os.curdir, os.path.basename(name)
        try:
            if folder:
                temp = Path(tempfile.mkdtemp(dir=parent, prefix=f".{base}.", suffix=".tmp"))
            else:
                fd, made = tempfile.mkstemp(dir=parent, prefix=f".{base}.", suffix=".tmp")
                os.close(fd)
                temp = Path(made)
        except OSError as exc:
            raise UsageError(f"cannot write {what}: {exc.strerror or exc}", path=name, hint=hint) from None
        try:
            os.chmod(temp, (0o777 if folder else 0o666) & ~_umask())  # as an ordinary new one, not mkstemp's 0600
            yield temp
        except OSError as exc:
            if exc.errno not in _WRITE_ERRORS:
                raise
            raise UsageError(f"cannot write {what}: {exc.strerror or exc}", path=name, hint=hint) from None
        finally:
            _remove(temp)

    @staticmethod
    def commit(temp: str | os.PathLike[str], path: str | os.PathLike[str]) -> None:
        """Rename ``temp`` (from :meth:`staged`) to ``path``. A folder replaces what is there (a
        folder, with ``--force``): that is moved aside, removed once the new one is in place, and
        put back if the rename fails."""
        name = os.fspath(path)
        if not os.path.isdir(temp) or not os.path.lexists(name):
            os.replace(temp, name)
            return
        aside = Path(tempfile.mkdtemp(dir=os.path.dirname(name) or os.curdir, prefix=f".{os.path.basename(name)}.",
                                      suffix=".old"))
        try:
            os.replace(name, aside / "old")
            try:
                os.replace(temp, name)
            except OSError:
                os.replace(aside / "old", name)
                raise
        finally:
            shutil.rmtree(aside, ignore_errors=True)


def _check_kind(name: str, *, what: str, force: bool | None, folder: bool, replaces: tuple[str, ...]) -> None:
    """Refuse an output at ``name`` that is a folder (for a file), is not one (for a folder), is a
    device, a FIFO or a socket (for an output renamed into place), or exists without ``force``."""
    kind = special_kind(name)
    if folder and os.path.lexists(name) and not os.path.isdir(name):
        raise UsageError(f"cannot write the {what}: it is {kind or 'a file'}", path=name, hint="name a folder")
    if not folder and os.path.isdir(name):
        raise UsageError(f"cannot write the {what}: it is a folder", path=name, hint="name a file in it")
    if force is None or not os.path.lexists(name):
        return
    if kind is not None:  # renaming the output over it would replace the FIFO or the device itself
        raise UsageError(f"cannot write the {what}: it is {kind}", path=name, hint="name a file")
    if not force:
        raise UsageError(f"the {what} already exists", path=name, hint="pass --force to replace it")
    if folder:
        other = next((entry.name for entry in sorted(Path(name).iterdir(), key=lambda p: p.name)
                      if entry.is_symlink() or not entry.is_file() or not entry.name.endswith(replaces or ("",))),
                     None)
        if other is not None:
            kinds = " or ".join(f"*{suffix}" for suffix in replaces) or "regular"
            raise UsageError(f"the {what} holds {other!r}: --force replaces only a folder of {kinds} files",
                             path=name, hint="name another folder, or move that entry away")


#: What only writing a file fails with (a full disk, a quota, a file too large, a read-only file system).
_WRITE_ERRORS = frozenset(getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EFBIG", "EROFS")
                          if hasattr(errno, name))


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _remove(path: Path) -> None:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        pass


def _nearest_pyproject() -> str | None:
    """The nearest ``pyproject.toml`` at or above the current folder that is not a folder, of any
    kind (the one :func:`dsh_audit._pyproject.find_pyproject` reads, or refuses for its kind: either
    way no output may replace it); None when there is none. Only ``lstat``: nothing is opened."""
    folder = os.path.realpath(os.getcwd())
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        try:
            if not stat.S_ISDIR(os.stat(candidate).st_mode):
                return candidate
        except OSError:
            if os.path.islink(candidate):
                return candidate  # a dangling or looping link: refused by the reader, kept by the guard
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
