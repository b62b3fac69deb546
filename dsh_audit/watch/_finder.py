"""Which logs a watch follows: a cheap look at the folders under the watched paths, and the one
file read of each session present as several files.

:class:`Finder` runs discovery again only when the folders may have changed (an ``os.stat`` of each
folder and of each file discovery peeks at, no file opened while none changed); :class:`Sessions`
keeps the session each file holds and decides which file of each session is followed
(:func:`one_each`: the file the other commands read, :func:`~dsh_audit.log.discover`), reading a
header for its id only where a file may be another's copy (:func:`~dsh_audit.log.may_be_copies`).
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import DshAuditError
from ..log import canonical_generation, discover, may_be_copies, read_header
from ._copies import differs_note, listed_note, one_each
from ._model import WatchNote
from ._readers import Shown

__all__ = ["Finder", "Sessions", "identity", "session_id", "signature"]


def _find(paths: Sequence[str | os.PathLike[str]]) -> tuple[list[Path], dict[str, str]]:
    """The logs under ``paths`` now, and the folders under them that cannot be listed (each with
    why): the logs elsewhere are still found. A folder that holds no log yet is not an error (watch
    waits). Copies of a session are not compared here (:func:`one_each` does that, only when the
    files change): a poll must not re-read every file. A session folder's plain file beside the
    compressed one discovery picks (``session.jsonl`` beside ``session.jsonl.zstd``: DSH writes
    one of them, and the plain one is the one written when DSH's compression is off) is listed
    after it, as a copy to compare."""
    found: list[Path] = []
    refused: dict[str, str] = {}
    for path in paths:
        try:
            logs = discover([path], refused=refused, copies=False)
        except DshAuditError:
            continue
        for log in logs:
            found.append(log)
            # discovery yields one file of a folder's generation: the plain one beside it is hidden
            if log.name.endswith(".zstd") and canonical_generation(log.name) is not None:
                plain = log.with_name(log.name.removesuffix(".zstd"))
                if plain not in logs and os.path.isfile(plain):
                    found.append(plain)
    return found, refused


_LOG_SUFFIXES = (".jsonl", ".jsonl.zstd")
_FOLDER, _FILE, _ROOT = 0, 1, 2  # what a mark is of: a folder, a file discovery peeks at, a watched path
#: Seconds within which a folder's time may still be the time of a later change (a coarse
#: file-system clock): a folder changed that recently is listed again at each look until it is not.
_RACY = 2.0

_Mark = tuple[int, ...]


def _mark(path: str, kind: int) -> _Mark | None:
    """What changes when a folder's entries change (its mtime and ctime: a file created, removed or
    renamed in it, its permissions changed), when a file is written or replaced, or (a watched path
    that is a file) when another file takes the path; None when it cannot be looked at."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if kind == _FILE:
        return info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns
    if kind == _FOLDER or stat.S_ISDIR(info.st_mode):
        return info.st_ino, info.st_mode, info.st_mtime_ns, info.st_ctime_ns
    return info.st_ino, info.st_mode


def _names(folder: str) -> frozenset[str] | None:
    """The entries of a folder; None when it cannot be listed."""
    try:
        with os.scandir(folder) as entries:
            return frozenset(entry.name for entry in entries)
    except OSError:
        return None


@dataclass
class _Tree:
    """A look at the folders under the watched paths: a mark (:func:`_mark`) of each watched path,
    each folder under them (a symbolic link to a folder is not entered, as discovery does not enter
    one) and each file with a log's suffix (discovery may peek at its first bytes), and each
    folder's entries."""

    marks: dict[str, tuple[int, _Mark | None]]
    names: dict[str, frozenset[str]]


def _look(roots: Sequence[str]) -> _Tree | None:
    """The folders under ``roots`` now (:class:`_Tree`); None when one cannot be listed (the tree
    is then looked at whole every time, so that it is reported, or found again once it can be)."""
    tree = _Tree({}, {})
    for root in roots:
        tree.marks[root] = (_ROOT, _mark(root, _ROOT))
        stack = [root] if os.path.isdir(root) else []
        while stack:
            folder = stack.pop()
            names: list[str] = []
            try:
                with os.scandir(folder) as entries:
                    for entry in entries:
                        names.append(entry.name)
                        if entry.is_dir(follow_symlinks=False):
                            tree.marks[entry.path] = (_FOLDER, _mark(entry.path, _FOLDER))
                            stack.append(entry.path)
                        elif entry.name.endswith(_LOG_SUFFIXES):
                            tree.marks[str(Path(entry.path))] = (_FILE, _mark(entry.path, _FILE))
            except OSError:
                return None
            tree.names[folder] = frozenset(names)
    return tree


class Finder:
    """:func:`_find`, looked at whole only when the tree may have changed.

    Each whole look marks the folders under the watched paths (:func:`_look`); a later look only
    looks at those marks (an ``os.stat`` each, no file opened): while none changed (no file was
    created, removed or renamed in any folder, no file that discovery peeks at and did not take for
    a log was written), the logs found are the same, and no file is opened to learn them. A folder
    changed within :data:`_RACY` seconds of a look is listed again at each look until then (a
    change in the same tick of a coarse clock leaves its time as it was); a folder that cannot be
    listed, and ``whole`` seconds since the last whole look, make the next look a whole one."""

    def __init__(self, roots: Sequence[str], *, whole: float) -> None:
        self.roots = list(roots)
        self.whole = whole
        self._tree: _Tree | None = None
        self._racy: set[str] = set()  # folders whose time was recent when they were last listed
        self._found: list[Path] = []
        self._at = 0.0

    def _unchanged(self) -> bool:
        tree = self._tree
        if tree is None or time.monotonic() - self._at >= self.whole:
            return False
        if not all(_mark(path, kind) == mark for path, (kind, mark) in tree.marks.items()):
            return False
        listed = time.time()
        for folder in list(self._racy):
            if _names(folder) != tree.names.get(folder):
                return False
            if not _recent(tree.marks[folder][1], listed):
                self._racy.discard(folder)  # a later change cannot have its time any more
        return True

    def find(self) -> tuple[list[Path], dict[str, str], bool]:
        """The logs under the roots now, the folders that cannot be listed (each with why), and
        whether they were looked at whole (else the logs are those the last whole look found)."""
        if self._unchanged():
            return list(self._found), {}, False
        listed = time.time()
        tree = _look(self.roots)
        found, refused = _find(self.roots)
        if tree is None or refused:
            self._tree = None
        else:
            logs = {str(p) for p in found}
            # a log found is followed (its growth is its follower's); a file not taken for a log
            # may become one as it is written
            tree.marks = {path: (kind, mark) for path, (kind, mark) in tree.marks.items()
                          if not (kind == _FILE and path in logs)}
            self._tree = tree
            self._racy = {folder for folder in tree.names if _recent(tree.marks[folder][1], listed)}
        self._found, self._at = list(found), time.monotonic()
        return found, refused, True


def _recent(mark: _Mark | None, listed: float) -> bool:
    """Whether a folder's mark has a time within :data:`_RACY` seconds before ``listed``."""
    return mark is not None and len(mark) == 4 and max(mark[2], mark[3]) >= (listed - _RACY) * 1e9


def session_id(path: str) -> str | None:
    """The session id in a log's header; None when it cannot be read yet (or at all: following it
    says why)."""
    header = read_header(path)
    return None if header is None else header.id


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _signature(info: os.stat_result | None) -> tuple[int, int, int] | None:
    return None if info is None else (info.st_size, info.st_mtime_ns, info.st_ino)


def _identity(info: os.stat_result | None) -> tuple[int, int] | None:
    return None if info is None else (info.st_dev, info.st_ino)


def signature(path: str) -> tuple[int, int, int] | None:
    """What changes when a file is written or replaced: its size, mtime and inode."""
    return _signature(_stat(path))


def identity(path: str) -> tuple[int, int] | None:
    """The file at ``path`` (its device and inode); None when it cannot be looked at."""
    return _identity(_stat(path))


class Sessions:
    """Which file of each session is followed (see the module docstring). One session in several
    files: the session each log holds (its header's id; a followed log's from its ``started`` note)
    with the file it was read in (device, inode), the files of each session as last decided, the
    copies not followed (each with its signature: one that changes is compared again), the file
    followed for each session, a file to follow in place of one whose reader is still ending
    (``waiting``: the ending one -> the new one) or has ended (``instead``: new -> old), and the
    requests each ended reading showed (``shown_at``: the file that takes its place leaves them out)."""

    def __init__(self) -> None:
        self.ids: dict[str, tuple[tuple[int, int] | None, str]] = {}
        # logs whose header could not be read, at which signature
        self.unread: dict[str, tuple[int, int, int] | None] = {}
        self.members: dict[str, list[str]] = {}
        self.copies: dict[str, tuple[int, int, int] | None] = {}
        self.chosen_for: dict[str, str] = {}
        self.waiting: dict[str, str] = {}
        self.instead: dict[str, str] = {}
        self.shown_at: dict[str, Shown] = {}
        # copies left out that now differ from the file read (noted once): copy -> that file
        self.diverged: dict[str, str] = {}
        self.listed: dict[str, list[str]] = {}  # sessions whose files differ, each followed (noted once)
        self._wanted: tuple[list[str], set[str]] = ([], set())  # the files found last, and which may be copies
        self.recheck: set[str] = set()  # files replaced while followed: their header is read at the next look
        self._looked: dict[str, os.stat_result | None] = {}  # each file's one os.stat of this look

    def _info(self, path: str) -> os.stat_result | None:
        """The file at ``path`` as this look saw it: one ``os.stat`` per file per look (:meth:`group`
        starts a look), shared by its identity and its signature."""
        if path not in self._looked:
            self._looked[path] = _stat(path)
        return self._looked[path]

    def _signature(self, path: str) -> tuple[int, int, int] | None:
        return _signature(self._info(path))

    def group(self, found: list[str], fresh: bool) -> dict[str, list[str]]:
        """The files found, by the session each holds (those whose session is known or can be read
        now). A session id is read once per file: again only when another file took its path
        (looked at when the folders were looked at whole, ``fresh``: a file moved into place
        changes its folder); a copy left out that was written is read again (it may hold another
        session now)."""
        self._looked = {}  # a new look: each file is looked at once, when it is first needed
        present = set(found)
        for gone in [p for p in self.ids if p not in present]:
            del self.ids[gone]
        for gone in [p for p in self.unread if p not in present]:
            del self.unread[gone]
        self.recheck &= present
        grouped: dict[str, list[str]] = {}
        if found != self._wanted[0]:  # worked out again only when other files are found
            self._wanted = (found, may_be_copies(found))
        wanted = self._wanted[1]
        for path in found:
            known = self.ids.get(path)
            if known is not None and fresh and known[0] != _identity(self._info(path)):
                del self.ids[path]  # another file took its path
                known = None
            elif known is not None and path in self.copies and self.copies[path] != self._signature(path):
                again = session_id(path)  # a copy left out was written: it may hold another session now
                if again is not None:
                    known = self.ids[path] = (_identity(self._info(path)), again)
            sid = known[1] if known is not None else None
            if sid is None and (path in wanted or path in self.recheck) and (
                    path not in self.unread or self.unread[path] != self._signature(path)):
                self.recheck.discard(path)
                held_in = _identity(self._info(path))  # looked at before its header is read
                sid = session_id(path)  # read once per file that may have a copy (else its reader says it)
                if sid is None:
                    self.unread[path] = self._signature(path)  # tried again once it changes
                else:
                    self.ids[path] = (held_in, sid)
                    self.unread.pop(path, None)
            if sid is not None:
                grouped.setdefault(sid, []).append(path)
        return grouped

    def again(self, path: str) -> None:
        """Another file replaced ``path`` while it was followed: the session it holds is read from
        its header at the next look (:meth:`group`), before it is followed again, so that a copy of
        another followed file is not followed twice."""
        self.ids.pop(path, None)
        self.unread.pop(path, None)
        self.recheck.add(path)

    def decide(self, sid: str, group: list[str], *, followed: Container[str],
               end: Callable[[str], None], leaving: Container[str] = ()) -> list[WatchNote] | None:
        """Decide which file of session ``sid`` to follow (:func:`one_each`); None when one file
        could not be looked at (decided at a later look). A followed file left out (a copy now holds
        its lines and more) is ended (``end``), and the file chosen instead takes its place
        (``instead``). A file of ``followed`` whose reader is still ending (``leaving``: a copy
        left out) takes the place of the file that went once it has ended: else, found ended, it
        would never be followed again (session 41: a copy that grew after the log was deleted,
        looked at before its reader's end was taken). A ``note`` for each copy newly left out."""
        before = self.chosen_for.get(sid)
        # of two followed files with the same lines, the one followed first (it showed the requests)
        decided = one_each(group, followed=[before] if before is not None and before in followed else followed)
        if decided is None:
            return None
        kept, said = decided
        self.members[sid] = group
        # A copy left out before that now differs from the file read (it grew by other lines)
        # stays left out: its requests so far were shown from that file. The file read stays
        # the same; when it went, a copy left out takes its place (``instead``), not every one.
        was_copy = {path for path in group if path in self.copies}
        chosen = before if before in kept else next((p for p in kept if p in was_copy), kept[0])
        differ = [p for p in kept if p != chosen and p in was_copy and before is not None]
        notes: list[WatchNote] = []
        ended: list[str] = []
        for path in group:
            if path not in kept or path in differ:
                self.copies[path] = self._signature(path)
                if path in followed:
                    end(path)  # a copy of what is followed now; it hands over and ends
                    ended.append(path)
            else:
                self.copies.pop(path, None)
            if path not in differ:
                self.diverged.pop(path, None)
            elif self.diverged.get(path) != chosen:
                self.diverged[path] = chosen  # said once, until it is a copy again or another file is read
                notes.append(WatchNote(time.time(), chosen, "note", differs_note(chosen, path), sid))
        listed = self._each_listed(sid, group, kept, differ)
        notes.extend(WatchNote(time.time(), chosen, "note", note, sid) for note in [*said, *listed])
        self.chosen_for[sid] = chosen
        free = chosen not in followed or chosen in leaving  # no reader shows it from now on
        if before is None and ended and chosen not in followed:
            self.instead[chosen] = ended[0]  # the first decision: the file followed so far hands over
        elif (before is not None and before not in kept and (len(kept) == 1 or chosen in was_copy)
                and free and not self._moved_on(before, sid, followed)):
            self.instead[chosen] = before  # its requests shown in ``before`` are not shown again
        return notes

    def _each_listed(self, sid: str, group: list[str], kept: list[str], differ: list[str]) -> list[str]:
        """The note every other command says of a session whose files differ, each read
        (:func:`listed_note`), when the files it follows of ``sid`` (``kept``, in discovery's order)
        are others than when it was said: once, at the look that finds them, not at each change of
        a file. A copy that came to differ while left out (``differ``) is not one of them: it is not
        followed, and :func:`differs_note` says so."""
        listed = [path for path in group if path in kept and path not in differ]
        if len(listed) < 2:
            self.listed.pop(sid, None)
            return []
        if self.listed.get(sid) == listed:
            return []
        self.listed[sid] = listed
        return [listed_note(sid, listed)]

    def _moved_on(self, path: str, sid: str, followed: Container[str]) -> bool:
        """Whether ``path`` is still followed but holds another session now (replaced by another
        file): it has no requests of ``sid`` to hand over."""
        held = self.ids.get(path)
        return path in followed and held is not None and held[1] != sid

    def changed(self, sid: str, group: list[str]) -> bool:
        """Whether the files of a session changed since they were last compared."""
        return group != self.members.get(sid) or any(self.copies[p] != self._signature(p)
                                                      for p in group if p in self.copies)
