"""Watch every session under some paths: one follower thread per log, results in one queue.

Each log found under the paths (at the start, and by a rescan after) gets a thread that runs
:func:`follow_log` over a :class:`TailStream`; the caller iterates :func:`watch` in its own thread
and gets every follower's items as they come. A rescan looks at the folders, not into the files
(:class:`_Finder`): discovery, which opens each log not named as DSH names its logs, runs again
only when a folder's entries changed or a file it did not take for a log was written, so a watch
over many sessions opens no file that did not change. Changes are noticed through file-system
notifications when the ``watchdog`` package is installed, else by polling (:class:`Notifier`);
the first item says which. A log that is truncated or replaced is followed again from its first
byte (:class:`~dsh_audit.watch.WatchSummary` then counts each of its requests once); a log that
ended in a torn tail is looked at every few tenths of a second and followed again as soon as it
grows past it, its requests already shown left out; a newer log generation in a session folder
takes the place of the older one; a log that ends in an error is not looked at again until
another file takes its path. One session present as several files (DSH's log and an export or a
copy of it, compressed or not, or a plain ``session.jsonl`` beside a folder's
``session.jsonl.zstd``) is followed once, in the file the other commands read
(:func:`~dsh_audit.log.discover`: of two with the same lines DSH's, else the one that holds the
other's lines and more, the one still being written), with a ``note`` saying which; the files are
compared only when one appears, goes, or a copy not followed changes, never at every look. A copy
that grows past the followed file (it is the one being written) takes its place from the request
where the other stopped, and so does a copy whose followed file goes: no request is shown or
counted twice. A copy that stops holding only the followed file's lines (it grows by a line the
other does not hold: garbage, another continuation) is not followed from its first byte as a log of
its own: the followed file stays the one read, and a ``note`` naming both says so once. A folder
that cannot be listed (no permission) is reported once, as an ``error`` note naming it, and the
rest of the tree is still watched (it is reported again only if it becomes readable and then
unreadable again). Setting ``stop`` ends the watch: each stream hands over what it holds and ends,
so torn tails are reported the way DSH would report them, and the iteration ends once every
follower has finished.
"""

from __future__ import annotations

import os
import queue
import stat
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..cache import PriceBook, load_prices
from ..errors import DshAuditError, UnreadableError
from ..log import canonical_generation, copy_name, default_sessions_root, discover, in_layout, read_log, time_span
from ..session import routes_from
from ..wire import PiRoutes
from ._follow import follow_log
from ._history import CaughtUp, History
from ._model import WatchItem, WatchNote, WatchRequest
from ._notify import Notifier, Wake
from ._tail import TailStream

__all__ = ["watch"]


@dataclass
class _Follower:
    stream: TailStream
    thread: threading.Thread
    wake: Wake


@dataclass(frozen=True)
class _Done:
    """A follower has finished; ``replaced``: its file was truncated or replaced; ``shown``: how
    many of its requests were printed or passed over as history, and whether its ``started`` note was."""

    path: str
    stream: TailStream
    replaced: bool
    shown: tuple[int, bool] = (0, False)


def _find(paths: Sequence[str | os.PathLike[str]]) -> tuple[list[Path], dict[str, str]]:
    """The logs under ``paths`` now, and the folders under them that cannot be listed (each with
    why): the logs elsewhere are still found. A folder that holds no log yet is not an error (watch
    waits). Copies of a session are not compared here (:func:`_one_each` does that, only when the
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


class _Finder:
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


def _session_id(path: str) -> str | None:
    """The session id in a log's header; None when it cannot be read yet (or at all: following it
    says why)."""
    try:
        log = read_log(path, lenient=True)
    except (DshAuditError, OSError):
        return None
    log.close()
    return log.header.id


def _may_be_copies(found: Sequence[str]) -> set[str]:
    """The logs of ``found`` that :func:`discover` could take for copies of another of them, so
    whose header's session id is worth a read: every one when logs DSH keeps and logs outside its
    home are found together (discovery then compares files by their headers' ids), else those
    whose name says the session another's name says (it compares files by their names). A log
    alone in its folder and in its name (one session's file, an export) is never opened for its
    id: its follower reads it (its ``started`` note)."""
    named = {path: (in_layout(Path(path)), copy_name(Path(path))) for path in found}
    if len({kept for kept, _name in named.values()}) > 1:
        return set(found)
    counts: dict[str, int] = {}
    for _kept, name in named.values():
        if name is not None:
            counts[name] = counts.get(name, 0) + 1
    return {path for path, (_kept, name) in named.items() if name is not None and counts[name] > 1}


def _one_each(group: list[str]) -> tuple[list[str], list[str]] | None:
    """Of the files of one session (in the order discovery lists them), those the other commands
    read (:func:`discover`, which compares them line by line) and its notes saying which file was
    read instead of which; None when one cannot be looked at now (decided at a later look)."""
    if len(group) == 1:
        return group, []
    notes: list[str] = []
    try:
        kept = {str(p) for p in discover(group, notes=notes, copies=True)}
    except DshAuditError:
        return None
    return [p for p in group if p in kept], notes


def _differs_note(read: str, copy: str) -> str:
    """The note for a copy left out that stopped holding only the lines of the file read (it grew
    by other lines: garbage, another continuation): both paths whole, the folder they share said
    once, as discovery's notes say them."""
    try:
        shared = os.path.commonpath([os.path.dirname(read), os.path.dirname(copy)])
    except ValueError:  # one absolute, one relative: nothing to say once
        shared = ""
    if shared not in ("", os.curdir, os.sep):
        prefix = f"under {shared}{os.sep}: "
        read, copy = os.path.relpath(read, shared), os.path.relpath(copy, shared)
    else:
        prefix = ""
    return (f"one session in two files {prefix}read {read}, not {copy} (it held the other's lines and now "
            "differs from them: it is not followed, so no request is shown twice)")


def _signature(path: str) -> tuple[int, int, int] | None:
    """What changes when a file is written or replaced: its size, mtime and inode."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_size, info.st_mtime_ns, info.st_ino


def _last_active(path: str, mtime: float) -> float:
    """When a log was last active: its latest own timestamp (:func:`dsh_audit.log.time_span`, which
    reads only the file's two ends), else ``mtime`` for a log that records no time."""
    span = time_span(path)
    return mtime if span is None else span[1]


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


def _identity(path: str) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_dev, info.st_ino


def watch(paths: Sequence[str | os.PathLike[str]] = (), *, stop: threading.Event | None = None,
          since: float | None = None, rescan: float = 1.0, settle: float = 10.0, poll: float = 0.05,
          idle_exit: float | None = None, exit_after: float | None = None, lenient: bool = False,
          max_version: int | None = None, prices: PriceBook | None = None,
          notifications: bool = True, routes: PiRoutes | None = None,
          zero_data_retention: bool | None = None) -> Iterator[WatchItem]:
    """Follow every session log under ``paths`` (default ``$DSH_HOME/sessions``) until ``stop``.

    Logs that exist when watching begins are replayed silently up to their current end (their
    requests, each whose first chunk was in the log then, are left out unless the log was active
    at or after ``since`` by its own latest timestamp, the file's mtime only when it records none,
    and then come with ``history`` set); logs that appear later are followed and reported from
    their first byte. The history's requests come in the order they were sent (by the logs' own
    times, :class:`~dsh_audit.watch._history.History`), once every log's history has been read;
    what happens meanwhile comes after them. The first item is a ``watching`` note that says how
    many logs are followed and how changes are noticed. A caveat of the prices (:meth:`dsh_audit.cache.PriceBook.caveats_met`: a year the price
    table's holiday list does not cover) is a ``note`` item, once, after the first request shown
    once it was met; its message's ``level`` is ``"note"``.

    Args:
        paths: log files, session folders or a sessions root.
        stop: set it (from another thread or a signal handler) to end the watch.
        since: seconds since the epoch: also report the history of logs active since then (by the
            latest time the log records, so a copied folder selects the same sessions).
        rescan: seconds between looks for new logs when polling (with notifications a new file is
            noticed at once, and the folders are looked at every ten times ``rescan`` besides).
        settle: seconds an incomplete record may stay unchanged before it is a torn tail.
        poll: the shortest time between looks at a followed file when polling; the interval
            doubles while the file does not grow, up to ten times ``poll``.
        idle_exit: end the watch once no followed log has grown for this many seconds.
        exit_after: end the watch after this many seconds.
        lenient: header leniency (tokenised test fixtures).
        max_version: the newest log format version to read (default: every released one).
        prices: the price table (default: :func:`dsh_audit.cache.load_prices`).
        notifications: use file-system notifications when the ``watchdog`` package is installed
            (False: always poll).
        routes: a route configuration (``--routes``, :func:`dsh_audit.wire.load_routes`) every
            followed log is routed and accounted with (:func:`follow_log`).
        zero_data_retention: the OpenAI organization's Zero Data Retention status (``--openai-zdr``;
            None: as the nearest ``pyproject.toml`` states it, else not stated).

    Example:
        >>> for item in watch(["~/.dsh/sessions"], exit_after=60):  # doctest: +SKIP
        ...     print(item.to_json())
    """
    stop = stop if stop is not None else threading.Event()
    roots = [os.fspath(p) for p in paths] or [str(default_sessions_root())]
    prices = prices if prices is not None else load_prices()
    out: queue.Queue[WatchItem | _Done] = queue.Queue()
    followers: dict[str, _Follower] = {}
    ended: dict[str, tuple[int, int] | None] = {}  # logs no longer followed: the file each was (None: deleted)
    # Logs that ended in a torn tail: the bytes read and the requests shown. One that grows past
    # them (a writer slower than --settle, a session resumed) is followed again from its start,
    # its requests already shown left out, instead of never being read again.
    torn: dict[str, tuple[int, tuple[int, bool]]] = {}
    unreadable: set[str] = set()  # folders that could not be listed at the last look (reported once)
    # One session in several files: the session each log holds (its header's id; a followed log's
    # from its ``started`` note) with the file it was read in (device, inode), the files of each
    # session as last decided, the copies not followed (each with its signature: one that changes
    # is compared again), the file followed for each session, a file to follow in place of one
    # whose follower is still ending (``waiting``: the ending one -> the new one) or has ended
    # (``instead``: new -> old), and the requests each ended follower showed (the file that takes
    # its place leaves them out).
    ids: dict[str, tuple[tuple[int, int] | None, str]] = {}
    unread: dict[str, tuple[int, int, int] | None] = {}  # logs whose header could not be read, at which signature
    members: dict[str, list[str]] = {}
    copies: dict[str, tuple[int, int, int] | None] = {}
    chosen_for: dict[str, str] = {}
    waiting: dict[str, str] = {}
    instead: dict[str, str] = {}
    shown_at: dict[str, tuple[int, bool]] = {}
    diverged: dict[str, str] = {}  # copies left out that now differ from the file read (noted once): copy -> that file
    began = time.monotonic()
    notifier = Notifier(roots, use_notifications=notifications, fast=poll, slow=poll * 10,
                        safety=max(poll * 40, 2.0))
    finder = _Finder(roots, whole=max(rescan * 30, 30.0))

    def run(stream: TailStream, replay_history: bool, skip: tuple[int, bool] | None) -> None:
        replaced = False
        requests, started = skip or (0, False)
        try:
            # without --routes, the route file of the DSH home the log sits in (a bad one is this log's error)
            config = routes if routes is not None else routes_from(None, log=stream.path)
        except DshAuditError as exc:
            out.put(WatchNote(time.time(), stream.path, "error", exc.message))
            stream.close()
            out.put(_Done(stream.path, stream, replaced, (requests, started)))
            return
        try:
            for item in follow_log(stream, prices=prices, lenient=lenient, max_version=max_version,
                                   config=config, zero_data_retention=zero_data_retention):
                replaced = replaced or (isinstance(item, WatchNote) and item.level == "replaced")
                if skip is not None and (item.index < skip[0] if isinstance(item, WatchRequest) else
                                         isinstance(item, WatchNote) and item.level == "started" and skip[1]):
                    continue  # shown before its torn tail grew and the log was followed again
                if isinstance(item, WatchRequest):
                    requests = item.index + 1
                started = started or (isinstance(item, WatchNote) and item.level == "started")
                if replay_history or not getattr(item, "history", False):
                    out.put(item)
        except Exception as exc:  # noqa: BLE001 - one log's failure must not end the watch
            out.put(WatchNote(time.time(), stream.path, "error", f"{type(exc).__name__}: {exc}"))
        finally:
            stream.close()
            out.put(_Done(stream.path, stream, replaced, (requests, started)))

    def start(path: str, *, existing: bool, skip: tuple[int, bool] | None = None, quiet: bool = False) -> None:
        """Follow ``path``: what it holds now is history when ``existing`` (printed only when it
        was active since ``since``, never when ``quiet``: another file of its session showed it)."""
        try:
            info = os.stat(path)
        except OSError:
            return
        size = info.st_size if existing else 0
        recent = since is not None and existing and not quiet and _last_active(path, info.st_mtime) >= since
        wake = notifier.wake_for(path)
        marked = CaughtUp(wake)  # the moment its history has been read, for the history's order
        stream = TailStream(path, stop=stop, settle=settle, poll=poll, wake=marked, history=size)
        thread = threading.Thread(target=run, args=(stream, recent or not existing, skip),
                                  name=f"watch {os.path.basename(path)}", daemon=True)
        followers[path] = _Follower(stream, thread, wake)
        if recent:
            history.expect(path, marked.caught_up)
        thread.start()

    def resume(path: str) -> bool:
        """Follow a log that ended in a torn tail again if it grew past it (the writer was slower
        than ``settle``, or the session resumed), its requests already shown left out; True if so."""
        if path not in torn or _identity(path) != ended.get(path) or _size(path) <= torn[path][0]:
            return False
        skip = torn.pop(path)[1]
        del ended[path]
        start(path, existing=False, skip=skip)
        return True

    def sessions(found: list[str], fresh: bool) -> list[WatchNote]:
        """Decide which file of each session to follow (:func:`_one_each`) where its files changed
        since the last look (one appeared or went, a copy not followed was written): a ``note`` for
        each copy newly left out. A followed file left out (a copy now holds its lines and more) is
        ended, and the file chosen instead takes its place (``instead``). A session id is read
        once per file: again only when another file took its path (looked at when the folders
        were looked at whole, ``fresh``: a file moved into place changes its folder)."""
        present = set(found)
        for gone in [p for p in ids if p not in present]:
            del ids[gone]
        for gone in [p for p in unread if p not in present]:
            del unread[gone]
        grouped: dict[str, list[str]] = {}
        wanted = _may_be_copies(found)
        for path in found:
            known = ids.get(path)
            if known is not None and fresh and known[0] != _identity(path):
                del ids[path]  # another file took its path
                known = None
            sid = known[1] if known is not None else None
            if sid is None and path in wanted and (path not in unread or unread[path] != _signature(path)):
                identity = _identity(path)
                sid = _session_id(path)  # read once per file that may have a copy (else its follower says it)
                if sid is None:
                    unread[path] = _signature(path)  # tried again once it changes
                else:
                    ids[path] = (identity, sid)
                    unread.pop(path, None)
            if sid is not None:
                grouped.setdefault(sid, []).append(path)
        notes: list[WatchNote] = []
        for sid in [s for s in members if s not in grouped]:  # no file of it left
            del members[sid]
        for sid, group in grouped.items():
            if group == members.get(sid) and all(copies[p] == _signature(p) for p in group if p in copies):
                continue  # nothing changed: nothing is read again
            decided = _one_each(group)
            if decided is None:
                continue  # one could not be looked at: decided at a later look
            kept, said = decided
            members[sid] = group
            before = chosen_for.get(sid)
            # A copy left out before that now differs from the file read (it grew by other lines)
            # stays left out: its requests so far were shown from that file. The file read stays
            # the same; when it went, a copy left out takes its place (``instead``), not every one.
            was_copy = {path for path in group if path in copies}
            chosen = before if before in kept else next((p for p in kept if p in was_copy), kept[0])
            differ = [p for p in kept if p != chosen and p in was_copy and before is not None]
            for path in group:
                if path not in kept or path in differ:
                    copies[path] = _signature(path)
                    follower = followers.get(path)
                    if follower is not None:
                        follower.stream.end()  # a copy of what is followed now; it hands over and ends
                else:
                    copies.pop(path, None)
                if path not in differ:
                    diverged.pop(path, None)
                elif diverged.get(path) != chosen:
                    diverged[path] = chosen  # said once, until it is a copy again or another file is read
                    notes.append(WatchNote(time.time(), chosen, "note", _differs_note(chosen, path), sid))
            notes.extend(WatchNote(time.time(), chosen, "note", note, sid) for note in said)
            chosen_for[sid] = chosen
            if (before is not None and before not in kept and (len(kept) == 1 or chosen in was_copy)
                    and chosen not in followers):
                instead[chosen] = before  # its requests shown in ``before`` are not shown again
        for path in [p for p in diverged if p not in present]:
            del diverged[path]
        return notes

    def take_over(path: str, before: str) -> None:
        """Follow ``path`` in place of ``before``, another file of its session: from the request
        where ``before`` stopped once its follower has ended."""
        ended.pop(path, None)
        torn.pop(path, None)
        if before in followers:
            waiting[before] = path
        elif before in shown_at:
            start(path, existing=False, skip=shown_at[before])
        else:
            start(path, existing=True, quiet=True)

    def scan(*, existing: bool) -> list[WatchNote]:
        """Start following the logs found now (one file of each session); an ``error`` note for each
        folder newly refused, a ``note`` for each copy of a session left out."""
        logs, refused, fresh = finder.find()
        found = [str(p) for p in logs]
        told = sessions(found, fresh)
        for path in found:
            if path in followers or path in copies or path in waiting.values():
                continue
            if path in instead:
                take_over(path, instead.pop(path))
                continue
            if path in ended:
                if resume(path) or _identity(path) == ended[path]:
                    continue  # followed again past its torn tail, or the same file: its error was reported once
                del ended[path]
                torn.pop(path, None)
            start(path, existing=existing)
        # A session folder's newer log generation takes the place of the older one (discover
        # yields only the newest of a folder's generations).
        folders = {os.path.dirname(p) for p in found}
        chosen = set(found)
        for path, follower in followers.items():
            if path not in chosen and os.path.dirname(path) in folders and os.path.exists(path):
                follower.stream.end()
        notes = told + [WatchNote(time.time(), folder, "error", str(UnreadableError(
                     f"cannot read folder: {why}", path=folder,
                     hint="its sessions are not followed until dsh-audit can read it; the watch goes on")))
                 for folder, why in refused.items() if folder not in unreadable]
        unreadable.clear()  # a folder readable again is reported again if it is refused again
        unreadable.update(refused)
        return notes

    # The history --since prints is held until every log's is read, then shown in time order.
    history = History(holding=since is not None)
    caveats = 0  # the price caveats said so far (each once, when first met)

    def shown(item: WatchItem) -> Iterator[WatchItem]:
        """``item``, then a note for each price caveat first met by its price (what the price of a
        request shown could not know)."""
        nonlocal caveats
        yield item
        met = prices.caveats_met() if isinstance(item, WatchRequest) else []
        for text in met[caveats:]:
            yield WatchNote(time.time(), item.path, "note", text, item.session_id)
        caveats = max(caveats, len(met))

    refused_at_start = scan(existing=True)
    yield WatchNote(time.time(), ", ".join(roots), "watching",
                    f"following {len(followers)} log(s); changes are noticed by {notifier.method}")
    yield from refused_at_start
    last_scan = last_growth = last_torn = time.monotonic()
    grown = sum(f.stream.offset for f in followers.values())
    woken = False
    try:
        while True:
            now = time.monotonic()
            if not stop.is_set():
                if exit_after is not None and now - began >= exit_after:
                    stop.set()
                elif notifier.rescan.is_set() or now - last_scan >= (rescan * 10 if notifier.notified else rescan):
                    notifier.rescan.clear()
                    yield from scan(existing=False)
                    last_scan = now
                elif torn and now - last_torn >= poll * 4:  # a torn tail completed is noticed at once
                    last_torn = now
                    for path in list(torn):
                        resume(path)
                offsets = sum(f.stream.offset for f in followers.values())
                if offsets != grown:
                    grown, last_growth = offsets, now
                elif idle_exit is not None and now - last_growth >= idle_exit:
                    stop.set()
            if stop.is_set():
                if not woken:
                    notifier.wake_all()  # every waiting stream ends now, not at its next look
                    woken = True
                if not followers:
                    for held in history.release():
                        yield from shown(held)
                    return
            try:
                item = out.get(timeout=poll)
            except queue.Empty:
                for held in history.tick():
                    yield from shown(held)
                continue
            if not isinstance(item, _Done):
                if isinstance(item, WatchNote) and item.level == "started" and item.session_id is not None:
                    own = followers.get(item.path)  # the follower that said it: its _Done comes after
                    ids[item.path] = (own.stream.identity if own is not None else _identity(item.path),
                                      item.session_id)  # the session it holds, read by its follower
                if not history.hold(item):
                    yield from shown(item)
                continue
            history.ended(item.path)
            follower = followers.get(item.path)
            if follower is not None and follower.stream is item.stream:
                del followers[item.path]
                notifier.forget(item.path, follower.wake)
            shown_at[item.path] = item.shown
            after = waiting.pop(item.path, None)
            if after is not None and not stop.is_set():
                ended[item.path] = None if item.stream.gone else item.stream.identity
                start(after, existing=False, skip=item.shown)  # another file of its session, where it stopped
            elif item.replaced and not stop.is_set() and item.path not in copies:
                start(item.path, existing=False)  # its new content, from the first byte
            elif not stop.is_set():
                ended[item.path] = None if item.stream.gone else item.stream.identity
                if item.stream.torn:
                    torn[item.path] = (item.stream.offset, item.shown)
    finally:
        stop.set()
        notifier.wake_all()
        notifier.close()
