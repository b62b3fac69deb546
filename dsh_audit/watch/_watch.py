"""Watch every session under some paths: a few reader threads, results in one queue.

Every log found under the paths (at the start, and by a rescan after) is followed
(:class:`~dsh_audit.watch._readers.Readers`): read by a thread of its own, running
:func:`follow_log` over a :class:`TailStream`, while it may grow, and otherwise looked at with an
``os.stat`` (or a file-system notification) until it changes; a bounded number of readers run at
once, so a watch over thousands of logs stays as quick to answer, and to stop, as over one. The
caller iterates :func:`watch` in its own thread and gets every reader's items as they come. A
rescan looks at the folders, not into the files (:class:`~dsh_audit.watch._finder.Finder`):
discovery, which opens each log not named as DSH names its logs, runs again only when a folder's
entries changed or a file it did not take for a log was written, so a watch over many sessions
opens no file that did not change. Changes are noticed through file-system notifications when the
``watchdog`` package is installed, else by polling (:class:`Notifier`); the first item says which.
A log that is truncated or replaced is followed again from its first byte
(:class:`~dsh_audit.watch.WatchSummary` then counts each of its requests once); a log that ended in
a torn tail is looked at every few tenths of a second and read again as soon as it grows past it,
its requests already shown left out (one shown as ``provisional`` comes again as an ``update``);
a newer log generation in a session folder takes the place of the older one; a log that ends in
an error is not looked at again until another file takes its path. One session present as several
files (DSH's log and an export or a copy of it, compressed or not, or a plain ``session.jsonl``
beside a folder's ``session.jsonl.zstd``) is followed once, in the file the other commands read
(:func:`~dsh_audit.log.discover`: of two with the same lines DSH's, else the one that holds the
other's lines and more, the one still being written), with a ``note`` saying which; the files are
compared only when one appears, goes, or a copy not followed changes, never at every look. A copy
that grows past the followed file (it is the one being written) takes its place from the request
where the other stopped, and so do a copy whose followed file goes, a log deleted here and written
again there (moved) and one rotated to its ``.zstd``: no request is shown or counted twice; the
deletion is then a ``note`` naming the file read now, and an ``error`` only when no file of its
session went on from it within a few seconds (three rescans, two seconds at least). A log that
appears while watching and whose name says no session another file's says (an export beside a
followed log too: a log renamed or copied in its folder) shows nothing past its ``started`` note
until that is decided (its header says its session), so that a copy of a followed log in another
session folder shows none of its requests. A copy that stops holding only the followed file's lines
(it grows by a line the other does not hold: garbage, another continuation) is not followed from
its first byte as a log of its own: the followed file stays the one read, and a ``note`` naming
both says so once; a copy written anew as another session (its header's id changed) is followed as
that session. A folder that cannot be listed (no permission) is reported once, as an ``error`` note
naming it, and the rest of the tree is still watched (it is reported again only if it becomes
readable and then unreadable again). Setting ``stop`` ends the watch: each stream hands over what
it holds and ends, so torn tails are reported the way DSH would report them, and the iteration ends
once every reader has finished.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path

from ..cache import PriceBook, load_prices
from ..errors import DshAuditError, UnreadableError
from ..log import default_sessions_root, open_regular, preferred, special_kind, time_span
from ..session import routes_from
from ..wire import PiRoutes
from ._finder import Finder, Sessions, identity
from ._follow import follow_log
from ._history import History
from ._model import CaptureNote, WatchItem, WatchNote, WatchRequest
from ._notify import Notifier
from ._readers import Done, Entry, Follow, Readers, Shown
from ._tail import TailStream

__all__ = ["watch"]


def _last_active(path: str, mtime: float) -> float:
    """When a log was last active: its latest own timestamp (:func:`dsh_audit.log.time_span`, which
    reads only the file's two ends), else ``mtime`` for a log that records no time."""
    span = time_span(path)
    return mtime if span is None else span[1]


def _rotated(path: str) -> str:
    """The log ``path`` is the compressed form of (``session.jsonl`` of ``session.jsonl.zstd``:
    DSH's rotation writes it, then removes the plain log); ``""`` for a file of another name."""
    return path.removesuffix(".zstd") if path.endswith(".jsonl.zstd") else ""


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


class _Watch:
    """One watch (see :func:`watch`): its state, and the loop that hands over what its readers show."""

    def __init__(self, roots: list[str], *, stop: threading.Event, since: float | None, rescan: float,
                 poll: float, notifications: bool, limit: int, follow: Follow, settle: float) -> None:
        self.stop, self.since, self.rescan, self.poll = stop, since, rescan, poll
        self.out: queue.Queue[WatchItem | Done] = queue.Queue()
        self.ended: dict[str, tuple[int, int] | None] = {}  # logs no longer followed: the file each was (None: deleted)
        self.unreadable: set[str] = set()  # folders that could not be listed at the last look (reported once)
        self.files = Sessions()
        self.held_in: dict[str, str] = {}  # the followed file that last said it holds each session
        self.muted: set[str] = set()  # copies left out as their reader began: nothing more of it is shown
        self.adopting: dict[str, Entry] = {}  # a file ending -> the new file of its session that goes on from it
        # a followed log deleted -> its error and until when (time.monotonic) it is held: a file of its
        # session going on from it by then (the log moved) makes it a note, else it is shown
        self.vanished: dict[str, tuple[WatchNote, float]] = {}
        # a followed file -> the note saying which file goes on from it, should its reader then find it deleted
        self.successor: dict[str, WatchNote] = {}
        self.grace = max(rescan * 3, 2.0)  # a rescan at once, then the moved file's header read
        self.notifier = Notifier(roots, use_notifications=notifications, fast=poll, slow=poll * 10,
                                 safety=max(poll * 40, 2.0))
        self.finder = Finder(roots, whole=max(rescan * 30, 30.0))
        self.readers = Readers(self.out, stop=stop, notifier=self.notifier, follow=follow, settle=settle, poll=poll,
                               limit=limit)
        # The history --since prints is held until every log's is read, then shown in time order.
        self.history = History(holding=since is not None)

    def start(self, path: str, *, existing: bool, skip: Shown | None = None, quiet: bool = False,
              eager: bool = True, gate: bool = False) -> None:
        """Follow ``path``: what it holds now is history when ``existing`` (printed only when it
        was active since ``since``, never when ``quiet``: another file of its session showed it);
        an existing log not ``eager`` has only its header read until it changes; a ``gate``d one
        shows nothing after its ``started`` note until :meth:`note_session` has decided."""
        try:
            info: os.stat_result | None = os.stat(path)
        except OSError:
            if not os.path.islink(path):
                return  # gone already
            info = None  # a symbolic link to nothing, or a loop: its reader says so (an error), as for a FIFO
        recent = (self.since is not None and existing and not quiet and info is not None
                  and _last_active(path, info.st_mtime) >= self.since)
        caught_up = threading.Event() if recent else None
        catching_up = existing and not recent and not quiet  # a log found at the start: no hurry
        self.readers.add(path, history=info.st_size if existing and info is not None else 0,
                         recent=recent or not existing, shown=skip, caught_up=caught_up,
                         priority=1 if catching_up else 0, header_only=catching_up and not eager, gate=gate)
        if caught_up is not None:
            self.history.expect(path, caught_up)

    def end(self, path: str) -> None:
        """Stop following ``path`` (a copy of what is followed now, an older generation): a reader
        hands over what it holds and ends; a log no thread reads ends now."""
        shown = self.readers.end(path)
        if shown is not None:
            self.files.shown_at[path] = shown
            self.ended[path] = identity(path)
            self.history.ended(path)

    def take_over(self, path: str, before: str) -> None:
        """Follow ``path`` in place of ``before``, another file of its session: from the request
        where ``before`` stopped once its reader has ended."""
        self.ended.pop(path, None)
        if before in self.readers.entries:
            self.files.waiting[before] = path
        elif before in self.files.shown_at:
            self.start(path, existing=False, skip=self.files.shown_at[before])
        else:
            self.start(path, existing=True, quiet=True)

    def sessions(self, found: list[str], fresh: bool) -> list[WatchNote]:
        """Decide which file of each session to follow where its files changed since the last look
        (one appeared or went, a copy not followed was written): a ``note`` for each copy newly
        left out."""
        files = self.files
        grouped = files.group(found, fresh)
        notes: list[WatchNote] = []
        for sid in [s for s in files.members if s not in grouped]:  # no file of it left
            del files.members[sid]
        for sid, group in grouped.items():
            if files.changed(sid, group):  # else nothing is read again
                following = [path for path in group if path in self.readers.entries]
                leaving = [path for path in following if self.readers.entries[path].ending]
                notes += files.decide(sid, group, followed=self.readers.entries, end=self.end,
                                      leaving=leaving) or []
                if files.chosen_for.get(sid) in following:  # its own history holds what a copy followed held
                    for path in following:
                        if path in files.copies:
                            self.history.drop(path)
        present = set(found)
        for path in [p for p in files.diverged if p not in present]:
            del files.diverged[path]
        return notes

    def scan(self, *, existing: bool) -> list[WatchNote]:
        """Start following the logs found now (one file of each session; at the start, the logs
        written last whole, the others' headers only); an ``error`` note for each folder newly
        refused, a ``note`` for each copy of a session left out."""
        logs, refused, fresh = self.finder.find()
        found = [str(p) for p in logs]
        told = self.sessions(found, fresh)
        files, new = self.files, []
        for path in found:
            if path in self.readers.entries or path in files.copies or path in files.waiting.values():
                continue
            if path in files.instead:
                before = files.instead.pop(path)
                self.take_over(path, before)
                # the session the copy holds: ``before``'s is forgotten, it being gone (its note said none)
                told += self.moved(before, path, files.ids.get(path, files.ids.get(before, (None, None)))[1], copy=True)
                continue
            if path in self.ended:
                if identity(path) == self.ended[path]:
                    continue  # the same file: its error was reported once
                del self.ended[path]
            new.append(path)
        if existing:
            new.sort(key=_mtime, reverse=True)
        # a log appearing while watching whose session is not known yet (its name says none another
        # file's says) may be a copy or a moved log: decided once its header is read; so is an export
        # beside a followed log (a log renamed or copied in its folder). A file DSH names (a newer
        # generation, a child snapshot) beside a followed log is its folder's own: not gated (a newer
        # generation takes the older one's place, below); the compressed form of a followed log is
        # gated (DSH's rotation: it goes on from where that log stopped, :meth:`gated`)
        beside = {os.path.dirname(p) for p in self.readers.entries}
        for rank, path in enumerate(new):
            own = (os.path.dirname(path) in beside and preferred(Path(path)) > 0
                   and _rotated(path) not in self.readers.entries)
            self.start(path, existing=existing, eager=rank < self.readers.limit,
                       gate=not existing and path not in files.ids and not own)
        # A session folder's newer log generation takes the place of the older one (discover
        # yields only the newest of a folder's generations).
        folders, chosen = {os.path.dirname(p) for p in found}, set(found)
        for path in [p for p in self.readers.entries if p not in chosen and os.path.dirname(p) in folders]:
            if os.path.exists(path):
                self.end(path)
        notes = told + [WatchNote(time.time(), folder, "error", str(UnreadableError(
                     f"cannot read folder: {why}", path=folder,
                     hint="its sessions are not followed until dsh-audit can read it; the watch goes on")))
                 for folder, why in refused.items() if folder not in self.unreadable]
        self.unreadable.clear()  # a folder readable again is reported again if it is refused again
        self.unreadable.update(refused)
        return notes

    def finished(self, item: Done) -> None:
        """A reading has ended: what follows for its log (another file of its session in its place,
        its new content from the first byte, a look at it until it changes, or nothing more)."""
        path = item.entry.path
        self.history.ended(path)
        self.successor.pop(path, None)  # its reader has said all it would
        self.muted.discard(path)
        entry = self.readers.done(item)
        self.files.shown_at[path] = item.shown
        taking = self.adopting.pop(path, None)
        if taking is not None and taking.gate is not None:  # it goes on where this one stopped
            taking.handover = item.shown
            taking.gate.set()
        after = self.files.waiting.pop(path, None)
        if entry is None or self.stop.is_set():
            return
        if path in self.files.instead:
            self.notifier.rescan.set()  # it takes another file's place now that its reader has ended
        gone = None if item.stream.gone else item.stream.identity
        if after is not None:
            self.readers.forget(path)
            self.ended[path] = gone
            self.start(after, existing=False, skip=item.shown)  # another file of its session, where it stopped
        elif item.replaced and path not in self.files.copies:
            # its new content, from the first byte, once the next look (at once) has read which
            # session it holds: a copy of another followed file is not followed twice
            self.readers.forget(path)
            self.files.again(path)
            self.notifier.rescan.set()
        elif not entry.ending and path not in self.files.copies and (item.rest or item.stream.torn):
            self.readers.rest(entry, item.stream)
        else:
            self.readers.forget(path)
            self.ended[path] = gone

    def note_session(self, item: WatchItem) -> tuple[list[WatchNote], bool]:
        """Keep the session a followed log holds, read by its reader (its ``started`` note); a
        session another followed file holds too (two session folders holding one session, whose
        names discovery does not compare) makes the next look, at once, decide which is followed.
        The notes to show first, and whether ``item`` is shown."""
        if not (isinstance(item, WatchNote) and item.level == "started" and item.session_id is not None):
            return [], True
        sid, path = item.session_id, item.path
        entry = self.readers.entries.get(path)
        stream = entry.stream if entry is not None else None  # the reader that said it: its Done comes after
        self.files.ids[path] = (stream.identity if stream is not None else identity(path), sid)
        if entry is not None and entry.gate is not None and not entry.gate.is_set():
            return self.gated(entry, entry.gate, sid)
        held_in = self.held_in.setdefault(sid, path)
        if held_in != path and held_in in self.readers.entries:
            self.notifier.rescan.set()
        self.held_in[sid] = path
        return [], True

    def gated(self, entry: Entry, gate: threading.Event, sid: str) -> tuple[list[WatchNote], bool]:
        """A log that appeared while watching has said its session (its reader waits): when another
        file holds or held that session, decide now, before it shows any request, which file is
        followed. A copy of the followed file is left out (nothing more of it is shown); a file
        that takes the place of the followed one (it holds its lines and more), or of one that went
        (a log moved: deleted here, written there), goes on from the request where that one
        stopped. Its ``started`` note is shown only when it shows its session first."""
        path, files = entry.path, self.files
        prior = files.chosen_for.get(sid, self.held_in.get(sid))
        held = files.ids.get(prior) if prior is not None else None
        if held is not None and held[1] != sid:
            prior = None  # another file took its path: it holds another session now, and hands over nothing
        notes: list[WatchNote] = []
        if prior is not None and prior != path:
            if prior in self.readers.entries:
                files.chosen_for.setdefault(sid, prior)  # the file followed first keeps its place
            notes = self.scan(existing=False)
        chosen = files.chosen_for.get(sid, path)
        if path in files.copies:
            self.muted.add(path)  # left out: its reader ends, showing nothing more
            gate.set()
            return notes, False
        self.held_in[sid] = path
        if prior is None or prior == path or chosen != path:
            gate.set()
            return notes, True
        notes += self.moved(prior, path, sid)
        if prior in self.readers.entries:
            self.end(prior)
        if prior in self.readers.entries:  # its reader hands over what it holds, then this one goes on
            self.adopting[prior] = entry
            return notes, False
        entry.handover = shown = files.shown_at.get(prior)
        gate.set()
        return notes, shown is None or not shown.started

    def deleted(self, item: WatchItem) -> list[WatchNote] | None:
        """None unless ``item`` is the error of a followed log deleted (no file at its path); then
        what to show in its place: the note of the file that went on from it already (:meth:`moved`),
        else nothing for now (held a while, :meth:`held`: its session may go on in another file)."""
        if not (isinstance(item, WatchNote) and item.level == "error"):
            return None
        entry = self.readers.entries.get(item.path)
        stream = entry.stream if entry is not None else None
        if stream is None or not stream.gone or os.path.lexists(item.path):
            return None
        went_on = self.successor.pop(item.path, None)
        if went_on is not None:
            return [went_on]
        self.vanished[item.path] = (item, time.monotonic() + self.grace)
        self.notifier.rescan.set()  # where it went, at once
        return []

    def moved(self, before: str, path: str, sid: str | None, *, copy: bool = False) -> list[WatchNote]:
        """A ``note`` in place of the held error of ``before``, deleted, when ``path`` (another file
        of its session) goes on from where it stopped: the session was not lost. Its reader may
        find it deleted only later (the new file was read first): the note is then kept for it. A
        log that went for its compressed form (``session.jsonl`` -> ``session.jsonl.zstd``, DSH's
        rotation) was rotated, not deleted (fuzz round 26: the error counted it unreadable)."""
        if _rotated(path) == before:
            how = f"rotated to {os.path.basename(path)}: read on"
        elif copy:
            how = f"deleted; its session is now read from {path}, a copy of it,"
        else:
            how = f"moved: now read from {path},"
        note = WatchNote(time.time(), before, "note", f"{before}: {how} from where this file stopped", sid)
        if self.vanished.pop(before, None) is None:
            if before in self.readers.entries:  # its reader has not ended yet
                self.successor[before] = note
            return []
        return [note]

    def held(self, now: float, *, every: bool = False) -> list[WatchNote]:
        """The errors of deleted logs whose session went on in no other file in time (``every``:
        all of them, the watch ending)."""
        due = [path for path, (_, until) in self.vanished.items() if every or until <= now]
        return [self.vanished.pop(path)[0] for path in due]

    def unheld(self, notes: Sequence[WatchNote]) -> Iterator[WatchNote]:
        """Those of ``notes`` to show now, each in turn; while the history is held back, each is held
        with it instead (:meth:`History.hold`), to come in the history's order."""
        return (note for note in notes if not self.history.hold(note))

    def items(self, *, began: float, exit_after: float | None, idle_exit: float | None) -> Iterator[WatchItem]:
        """Everything the readers show (and the folders refused, the copies left out), until the
        watch stops and every reader has ended; the history held until it has all been read."""
        last_scan = last_growth = time.monotonic()
        grown = self.readers.activity()
        woken = False
        while True:
            now = time.monotonic()
            if not self.stop.is_set():
                if exit_after is not None and now - began >= exit_after:
                    self.stop.set()
                elif self.notifier.rescan.is_set() or now - last_scan >= self.rescan * (10 if self.notifier.notified
                                                                                         else 1):
                    self.notifier.rescan.clear()
                    yield from self.scan(existing=False)
                    last_scan = now
                self.readers.look(now)
                self.readers.fill(now)
                yield from self.unheld(self.held(now))
                activity = self.readers.activity()
                if activity > grown:
                    grown, last_growth = activity, now
                elif idle_exit is not None and now - last_growth >= idle_exit:
                    self.stop.set()
            if self.stop.is_set():
                if not woken:
                    self.notifier.wake_all()  # every waiting stream ends now, not at its next look
                    woken = True
                if not self.readers.busy():
                    yield from self.unheld(self.held(now, every=True))
                    yield from self.history.release()
                    return
            try:
                item = self.out.get(timeout=self.poll)
            except queue.Empty:
                yield from self.history.tick()
                continue
            if isinstance(item, Done):
                self.finished(item)
                continue
            if item.path in self.muted:
                continue
            instead = self.deleted(item)
            if instead is not None:
                yield from self.unheld(instead)
                continue
            told, shown = self.note_session(item)
            yield from told
            if shown and not self.history.hold(item):
                yield item


def watch(paths: Sequence[str | os.PathLike[str]] = (), *, stop: threading.Event | None = None,
          since: float | None = None, until: float | None = None, rescan: float = 1.0, settle: float = 10.0,
          poll: float = 0.05, idle_exit: float | None = None, exit_after: float | None = None, lenient: bool = False,
          max_version: int | None = None, prices: PriceBook | None = None,
          notifications: bool = True, routes: PiRoutes | None = None,
          zero_data_retention: bool | None = None, readers: int = 32,
          capture: str | os.PathLike[str] | None = None) -> Iterator[WatchItem]:
    """Follow every session log under ``paths`` (default ``$DSH_HOME/sessions``) until ``stop``.

    Logs that exist when watching begins are replayed silently up to their current end (their
    requests, each whose first chunk was in the log then, are left out unless the log was active
    at or after ``since`` by its own latest timestamp, the file's mtime only when it records none,
    and then come with ``history`` set); logs that appear later are followed and reported from
    their first byte. Of the logs that exist when watching begins, the ``readers`` written last are
    replayed at once; every other one has only its header read (its ``started`` note) until it
    changes, and is then replayed, silently up to where it stood. The history's requests come in
    the order they were sent (by the logs' own times, :class:`~dsh_audit.watch._history.History`),
    once every log's history has been read; what happens meanwhile comes after them. The first item
    is a ``watching`` note that says how many logs are followed and how changes are noticed. A
    caveat of the prices (:meth:`dsh_audit.cache.PriceBook.caveats_met`: a year the price table's
    holiday list does not cover) is a ``note`` item, once, after the first request shown once it
    was met; its message's ``level`` is ``"note"``.

    Args:
        paths: log files, session folders or a sessions root.
        stop: set it (from another thread or a signal handler) to end the watch.
        since: seconds since the epoch: also report the history of logs active since then (by the
            latest time the log records, so a copied folder selects the same sessions).
        until: seconds since the epoch: leave out every request sent at or after it, by the log's
            own time (:attr:`WatchRequest.sent`; when the watch saw it, for a request whose log
            records no time), history or new, and its updates; the watch goes on (``stop``,
            ``idle_exit``, ``exit_after`` end it).
        rescan: seconds between looks for new logs when polling (with notifications a new file is
            noticed at once, and the folders are looked at every ten times ``rescan`` besides).
        settle: seconds an incomplete record may stay unchanged before it is a torn tail.
        poll: the shortest time between looks at a followed file when polling; the interval
            doubles while the file does not grow, up to ten times ``poll`` (a log no thread reads is
            looked at every ten times ``poll``, or less often when there are very many).
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
        readers: the most logs read at once, each by a thread of its own (at least 1); a log that
            changes while all are taken takes the place of the one idle longest.
        capture: what was sent, for every log (``--capture``; None: the ``wire.jsonl`` found beside
            each log, none with ``--no-capture``): a request whose log holds no usage (a title
            call) is priced and judged from the provider's usage in the captured response to its
            send, as ``usage`` and ``cache`` price it (:func:`follow_log`).

    Raises:
        UnreadableError: a path is a symbolic link that leads nowhere (a loop, a missing target),
            or a FIFO, a socket or a device, raised as the first item is asked for: what it names
            can never be waited for, nor read as a log. Such a file found under a path is an
            ``error`` item.

    Example:
        >>> for item in watch(["~/.dsh/sessions"], exit_after=60):  # doctest: +SKIP
        ...     print(item.to_json())
    """
    if readers < 1:
        raise ValueError(f"readers must be at least 1, not {readers}")
    stop = stop if stop is not None else threading.Event()
    roots = [os.fspath(p) for p in paths] or [str(default_sessions_root())]
    for root in roots:
        # a loop, a link to nothing, a FIFO or a device: never a log, so not waited for; its error
        # (and hint) as every command says it
        if os.path.islink(root) and not os.path.exists(root) or special_kind(root) is not None:
            open_regular(root).close()
    book = prices if prices is not None else load_prices()

    def follow(stream: TailStream) -> Generator[WatchItem, None, None]:
        try:
            # without --routes, the route file of the DSH home the log sits in (a bad one is this log's error)
            config = routes if routes is not None else routes_from(None, log=stream.path)
        except DshAuditError as exc:
            yield WatchNote(time.time(), stream.path, "error", exc.message)
            return
        yield from follow_log(stream, prices=book, lenient=lenient, max_version=max_version, config=config,
                              zero_data_retention=zero_data_retention, capture=capture)

    began = time.monotonic()
    state = _Watch(roots, stop=stop, since=since, rescan=rescan, poll=poll, notifications=notifications,
                   limit=readers, follow=follow, settle=settle)
    caveats = 0  # the price caveats said so far (each once, when first met)
    told: dict[tuple[str, str], str] = {}  # what the captures could not be read for, said so far: whose
    try:
        refused_at_start = state.scan(existing=True)
        followed, method = len(state.readers.entries), state.notifier.method
        yield WatchNote(time.time(), ", ".join(roots), "watching",
                        f"following {followed} log(s); changes are noticed by {method}")
        yield from refused_at_start
        for item in state.items(began=began, exit_after=exit_after, idle_exit=idle_exit):
            if until is not None and isinstance(item, WatchRequest) and item.moment >= until:
                continue  # after the window, by the log's own time
            if _told_before(item, told):
                continue
            yield item
            # a note for each price caveat first met by the price of a request shown (what it could not know)
            met = book.caveats_met() if isinstance(item, WatchRequest) else []
            for text in met[caveats:]:
                yield WatchNote(time.time(), item.path, "note", text, item.session_id)
            caveats = max(caveats, len(met))
    finally:
        stop.set()
        state.notifier.wake_all()
        state.notifier.close()


def _told_before(item: WatchItem, told: dict[tuple[str, str], str]) -> bool:
    """Whether ``item`` says what a capture could not be read for (:class:`CaptureNote`) that was
    said already: the one place that decides what of a capture is said (each followed log's
    :class:`~dsh_audit.watch._captured.CapturedUsage` says what each reading found; the command
    prints what it is given). Each log prices its requests from the capture on its own, and a
    capture several logs share (``--capture``, a ``wire.jsonl`` beside a folder of logs), a log
    followed again (replaced) or a capture read again as it changes said it once per log and per
    reading, in ``--json`` and in the summary's errors (issue 15). Each distinct text once (its text
    names the capture file; ``told``: each said, with its path), in both modes; the summary counts
    a capture's errors as one (:class:`WatchSummary`). A note that a capture is read again is said
    only after an error of it (``item.path``), once, and forgets its errors: each is said again
    when it turns unreadable again (fuzz round 33 D4)."""
    if not isinstance(item, CaptureNote):
        return False
    if item.again:
        errors = [key for key, path in told.items() if key[0] == "error" and path == item.path]
        for key in errors:
            del told[key]
        return not errors
    key = (item.level, item.message)
    if key in told:
        return True
    told[key] = item.path
    return False
