"""Finding session logs: a file, a session folder, a project folder, a sessions root, or the
default ``$DSH_HOME/sessions`` (else ``~/.dsh/sessions``), DSH's layout (spec §1.1)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from ..errors import DshAuditError, UnreadableError, UsageError
from ._copies import LOG_SUFFIXES, SESSION_NAME, without_copies
from .._capture_place import CAPTURE_NAME  # a redacted bundle's is <log>.wire.jsonl: never a log
from ._copy_notes import copy_notes
from ._decode import ZSTD_MAGIC
from ._format import begins_as_header, detect_format
from ._outputs import open_regular
from ._versions import canonical_generation

__all__ = ["default_sessions_root", "discover", "is_folder", "looks_like_log"]


def default_sessions_root() -> Path:
    """``$DSH_HOME/sessions`` when DSH_HOME is set, else ``~/.dsh/sessions`` (DSH's order)."""
    home = os.environ.get("DSH_HOME")
    return (Path(home) if home else Path.home() / ".dsh") / "sessions"


def looks_like_log(path: Path) -> bool:
    """Whether a file's first bytes are a DSH header line (plain) or a zstd frame."""
    try:
        with open_regular(path) as handle:  # a FIFO or device is not a log: never read it
            head = _first_line(handle)
    except (OSError, UnreadableError):
        return False
    return begins_as_header(head)


#: How much of a file's first line is read to tell a DSH header (:func:`begins_as_header`).
_FIRST_LINE = 1 << 16


def _first_line(handle: BinaryIO) -> bytes:
    """A file's first bytes: a zstd frame's magic, or its first line (after blank ones), up to
    :data:`_FIRST_LINE` bytes: a header spaced as ``JSON.parse`` reads it is told from its fields."""
    head = handle.read(64)
    if head[:4] != ZSTD_MAGIC and b"\n" not in head.lstrip():
        head += handle.readline(_FIRST_LINE)
    return head


def _pick_generation(folder: Path, names: list[str], notes: list[str] | None) -> list[str]:
    """Keep the highest canonical generation of a session folder, as DSH reads it (§3.2); of one
    generation, compressed and plain (DSH refuses a folder holding both: its encodings differ),
    the compressed one. Every command picks so, a watch too (``watch/_copies.py``: fuzz round 24,
    it read a longer plain ``session.jsonl`` where the others read ``session.jsonl.zstd``)."""
    generations = {name: canonical_generation(name) for name in names}
    canonical = [n for n, g in generations.items() if g is not None]
    if len(canonical) <= 1:
        return names
    best = max(canonical, key=lambda n: (generations[n], n.endswith(".zstd")))
    if notes is not None:
        others = ", ".join(sorted(n for n in canonical if n != best))
        notes.append(f"{folder}: read {best} (generation v{generations[best]}), the one DSH would read; "
                     f"also present: {others}")
    return [n for n in names if generations[n] is None or n == best]


def _given_generations(found: list[Path], notes: list[str] | None) -> list[Path]:
    """``found`` with the files of each session folder picked as :func:`_pick_generation` picks a
    folder's files (``notes`` says so in its words): the rule of every command, a watch's too."""
    folders: dict[Path, list[str]] = {}
    for log in found:
        if SESSION_NAME.match(log.name):
            folders.setdefault(log.parent, []).append(log.name)
    picked = {folder / name for folder, names in folders.items()
              for name in _pick_generation(folder, sorted(names), notes)}
    return [log for log in found if log in picked or not SESSION_NAME.match(log.name)]


def _unreadable(refused: dict[str, str] | None) -> Callable[[OSError], None]:
    """os.walk's error handler: a folder we cannot list is reported (raised, or recorded in
    ``refused``), never skipped silently. A folder gone since it was listed is no longer there."""

    def handle(error: OSError) -> None:
        if refused is None:
            raise UnreadableError(f"cannot read folder: {error.strerror or error}", path=error.filename,
                                  hint="give dsh-audit read access to it, or leave it out")
        if error.filename is not None and not isinstance(error, (FileNotFoundError, NotADirectoryError)):
            refused[os.fsdecode(error.filename)] = error.strerror or str(error)

    return handle


def _tree(folder: Path, onerror: Callable[[OSError], None]) -> Iterator[tuple[str, list[str], list[str]]]:
    """:func:`os.walk` top down (a symlinked folder listed, not entered; the order of ``dirs`` as
    the caller leaves it), one folder per :func:`os.walk` and a stack of folders to go down, where
    :func:`os.walk` recurses once per level: a tree nested deeper than Python's recursion limit is
    searched too, not a ``RecursionError``."""
    stack = [os.fspath(folder)]
    while stack:
        for root, dirs, files in os.walk(stack.pop(), onerror=onerror):
            yield root, dirs, files
            below = [os.path.join(root, name) for name in dirs]
            dirs.clear()  # this os.walk lists its folder only; the stack goes down
            stack.extend(path for path in reversed(below) if not os.path.islink(path))


def _walk(folder: Path, notes: list[str] | None = None, refused: dict[str, str] | None = None) -> list[Path]:
    """The logs below ``folder`` by path, as README defines it: a folder's own logs first, then each
    subfolder's, in turn; names in the byte order of their file names (:func:`os.fsencode`: ``LC_ALL=C
    ls``'s order, so ``B`` before ``a`` and ``10`` before ``9``; no Unicode normalisation, so an NFD
    ``é``, ``e`` and a combining accent, sorts beside ``e``, an NFC one after ``z``; an undecodable
    name by its own bytes, review C of session 45, F8). The tour of session 45 found every
    ``session.jsonl`` listed before every other log. A folder's picked generation of its session log, and each other
    ``*.jsonl[.zstd]`` file that is a log (:func:`_log_like`) unless it is a link to one of those
    session logs, which is read under the name DSH gave it (as when they were listed first)."""
    found: list[tuple[Path, bool]] = []  # (path, a session log DSH named)
    for root, dirs, files in _tree(folder, _unreadable(refused)):
        dirs.sort(key=os.fsencode)
        picked = set(_pick_generation(Path(root), sorted(f for f in files if SESSION_NAME.match(f)), notes))
        for name in sorted(files, key=os.fsencode):
            if name in picked:
                found.append((Path(root) / name, True))
            elif not SESSION_NAME.match(name) and name.endswith(LOG_SUFFIXES) and not name.endswith(".tmp"):
                found.append((Path(root) / name, False))
    named = {_key(path) for path, dsh in found if dsh} if not all(dsh for _, dsh in found) else set()
    return [path for path, dsh in found if dsh or _key(path) not in named and _log_like(path)]


def _log_like(path: Path) -> bool:
    """Whether a ``*.jsonl[.zstd]`` file found in a folder is taken as a log: its first bytes are a
    DSH log's (:func:`looks_like_log`) or another agent's session (:func:`_foreign`); or it cannot
    be opened to look (no permission, a FIFO, a dangling link, a symlink loop), or is empty (no byte, or
    blank lines only: a log emptied or never written), and then reading it is refused in one line by every
    command (``DSH201`` in ``validate``, ``DSH801`` in ``check``, an error in the others), as a
    ``session.jsonl`` that cannot be opened or is empty is: never dropped unseen. (DSH's session list
    passes an empty session file over, ``session-persistence-jsonl`` ``listArtifacts``: "empty/half-written
    file"; opening it refuses it, "empty or header-less session log", as dsh-audit does the file given.)
    A capture (``wire.jsonl``) is never a log."""
    if path.name == CAPTURE_NAME or path.name.endswith("." + CAPTURE_NAME):
        return False
    try:
        with open_regular(path) as handle:  # a FIFO or device is never read
            head = _first_line(handle)
    except (OSError, UnreadableError):
        return True
    return not head.strip() or begins_as_header(head) or _foreign(path)


def _foreign(path: Path) -> bool:
    """Another agent's session (Claude Code, Codex) that an importer reads."""
    try:
        return detect_format(path) not in (None, "dsh")
    except UnreadableError:
        return False


def is_folder(path: Path) -> bool:
    """Whether ``path`` is a folder, like :meth:`Path.is_dir`; but a path that cannot be looked at
    (no permission on a folder above it, a name too long) raises instead of passing for absent.

    Raises:
        UnreadableError: ``path`` cannot be looked at; the message says why.
    """
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except OSError as exc:
        # absent, below a file, a symlink loop (read_log names a loop when it is read): no folder
        if isinstance(exc, (FileNotFoundError, NotADirectoryError)) or exc.errno in (errno.ELOOP, errno.EBADF):
            return False
        raise UnreadableError(f"cannot look at this path: {exc.strerror or exc}", path=str(path),
                              hint="give dsh-audit access to it (and to the folders above it), or pass "
                                   "another path or DSH_HOME") from None


def _key(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: keep the path as given
        return Path(os.path.abspath(path))


def discover(paths: Iterable[str | os.PathLike[str]] | None = None, *,
             notes: list[str] | None = None, refused: dict[str, str] | None = None,
             copies: bool = True, generations: bool = False) -> list[Path]:
    """Expand paths to the session log files they hold, in a stable order.

    A file is taken as given; a folder is searched recursively, its logs listed by path
    (:func:`_walk`), for ``session.jsonl[.zstd]`` (and ``session.N.jsonl`` child logs of test
    snapshots) and for other ``*.jsonl[.zstd]`` files whose first line is a session header or that cannot be opened to look (no permission, a FIFO,
    a dangling link, a symlink loop: reading it is refused, never skipped). With no paths, the default sessions root is used. A
    session folder holding several generations (``session.jsonl.zstd`` and
    ``session.v4.jsonl.zstd``) yields the highest one, as DSH reads it; ``notes`` says so. With
    ``copies`` (the default), one session found as several files (DSH's log and an export or a
    copy of it, compressed or not, or an earlier, partial one under another name: an export whose
    name is not one DSH makes of an id is opened for its header's id, whatever its size; or a session
    folder copied under another name: in a DSH home or outside one, ``old/session.jsonl`` beside
    ``new/session.jsonl``, a folder of a name DSH does not make is opened for its header's id,
    whole, partial or compressed, :func:`~dsh_audit.log._copies.dsh_made`) is
    read once (:func:`~dsh_audit.log._copies.without_copies`, the one rule of copies, as
    ``sessions`` and ``latest`` read it); ``notes`` says which, one note per session (the copies of
    many sessions in one note: :func:`~dsh_audit.log.copy_notes`, the words of every command), and
    names each session whose files it grouped so but found to differ otherwise (neither holds
    the other's lines, nor, one with packed chunk rows and one without, its events: a log written
    so and an earlier export of it are one session), each read
    (``session ID is in N files, each listed: ...``, as ``sessions`` says it: a total over them
    counts the session twice). With ``generations``, files given of one session folder are picked
    from as a folder's are (a watch, which lists a folder's plain file beside its compressed one:
    :func:`_given_generations`); else a file given is read as given.

    A path that exists but is not a folder is taken as a log even when it is not a regular file
    (a FIFO, a device, a symlink loop): reading it is refused in one line, it is never skipped.
    A folder below that cannot be listed, or a given path that cannot be looked at (no
    permission on a folder above it, a name too long), is an error, unless ``refused`` is given:
    then it is recorded there (its path, as :func:`os.walk` names it, and why) and the rest is
    searched (a watch reports it and goes on).

    Raises:
        UsageError: a path is the empty string.
        UnreadableError: a path does not exist or cannot be looked at, a folder cannot be listed
            (``refused`` not given), or holds no session log.
    """
    given = list(paths or [])
    if not given:
        root = default_sessions_root()
        if not is_folder(root):
            raise UnreadableError("no sessions folder", path=str(root),
                                  hint="pass a log, a session folder or a sessions root, or set DSH_HOME")
        given = [root]
    found: list[Path] = []
    seen: set[Path] = set()
    for item in given:
        if os.fspath(item) == "":
            raise UsageError("empty path", hint="name a log, a session folder or a sessions root")
        path = Path(item)
        try:
            folder = is_folder(path)
        except UnreadableError as exc:
            if refused is None:
                raise
            refused[str(path)] = exc.message.removeprefix("cannot look at this path: ")
            continue
        if folder:
            logs = _walk(path, notes, refused)
            if not logs:
                raise UnreadableError("folder holds no DSH session log", path=str(path),
                                      hint="expected session.jsonl or session.jsonl.zstd files below it: pass PATH "
                                           "(a log, a session folder or a sessions root), or set DSH_HOME to the "
                                           "DSH home whose sessions/ holds them")
        elif os.path.lexists(path):
            logs = [path]  # a file, or a FIFO, device or symlink loop: read_log says which, in one line
        else:
            raise UnreadableError("no such file or folder", path=os.fspath(item))  # as typed: "nope/" too
        for log in logs:
            key = _key(log)
            if key not in seen:
                seen.add(key)
                found.append(log)
    if generations:
        found = _given_generations(found, notes)
    if not copies:
        return found
    listed: dict[str, list[Path]] = {}
    kept, left = without_copies(found, renamed=True, listed=None if notes is None else listed)
    if notes is not None:
        notes.extend(copy_notes(left, listed=listed))
    return kept
