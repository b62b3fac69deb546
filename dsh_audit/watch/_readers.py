"""The logs a watch follows, and the few threads that read them: however many logs it follows, a
watch runs a bounded number of threads and its work is what changes.

A log is read by a thread of its own (:func:`read`) only while it may grow: a log that appears
while watching, one whose history ``--since`` prints, one whose file changed, and, at the start,
the ``limit`` logs written last (their history is read at once, so a session that goes on is shown
without reading it again). Every other log found at the start only has its header read (its
``started`` note, or its error), one log after another by one thread. A log no thread reads is
looked at by :meth:`Readers.look`: an ``os.stat`` of each (every ``slow`` seconds when polling, and
less often when a look takes long; at once when a file-system notification names it, and every
``safety`` seconds besides; a log that ended in a torn tail every few tenths of a second); it
waits for a reader once its file changed. At most ``limit`` readers run at once: a log waiting for
one when none is free takes the place of the reader idle longest (one that waited with nothing to
read for :data:`_HOLD` seconds or more, or whose log has not grown since the watch began), which
retires (:meth:`~dsh_audit.watch.TailStream.retire`) without showing what only the end of its bytes
made it conclude.

A log read again (its reader retired, or its torn tail grew) is read from its first byte, silently
up to the requests already shown (:class:`Shown`). A request shown as ``provisional`` (at a torn
tail: its usage record had not come yet; or awaiting the capture's usage,
:func:`~dsh_audit.watch.follow_log`) comes again, as an ``update``, once what it says differs;
a warning or note already said is not said again; a header that now names another session makes
the log that session's, shown whole. A log that is empty, or whose first line is not whole yet,
when its bytes stop is no error: it is not a log yet, and it is read again once it grows.
"""

from __future__ import annotations

import heapq
import itertools
import os
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace

from ._history import CaughtUp
from ._model import WatchItem, WatchNote, WatchRequest
from ._notify import Notifier, Wake
from ._tail import TailStream

__all__ = ["Done", "Entry", "Follow", "Readers", "Shown", "read"]

#: Seconds a reader must have read nothing before another log may take its place (unless its log
#: has not grown since the watch began).
_HOLD = 2.0
#: The next look at the logs no thread reads waits at least this many times as long as the last
#: one took (a watch over a great many logs spends at most a few percent of its time looking).
_LOOK_SHARE = 20

#: What a reader runs over its stream: everything the log shows (:func:`~dsh_audit.watch.follow_log`).
Follow = Callable[[TailStream], Generator[WatchItem, None, None]]


@dataclass(frozen=True, slots=True)
class Shown:
    """What was shown of a log, for the next reading of it: how many of its requests were shown or
    passed over as history, whether its ``started`` note was, the session it held, the requests
    shown as provisional, and the warnings and notes said."""

    requests: int = 0
    started: bool = False
    session_id: str | None = None
    provisional: tuple[WatchRequest, ...] = ()
    said: frozenset[str] = frozenset()


@dataclass(eq=False)
class Entry:
    """One followed log. ``history``: the bytes it held when watching began (0: a new log);
    ``recent``: its history is printed; ``shown``: what readings of it showed (None: none yet);
    ``caught_up``: set once its history has been read (for the order the history is printed in);
    ``header_only``: its next reading reads only its header. ``state`` is ``queued`` (waiting for a
    reader), ``reading`` or ``idle`` (no thread reads it: ``mark`` holds the file read, as its
    device and inode, and how many of its bytes; ``torn``: its bytes ended in a torn tail);
    ``ending``: the watch stops following it once its reader has ended; ``gate``: a log that
    appeared while watching, whose session was not known: its reader waits, once its ``started``
    note is out, until the watch has decided which file of that session it follows (set), and
    then goes on from ``handover`` when it continues another file of the session (a log moved, a
    copy that took its place), so that no request of the session is shown twice."""

    path: str
    history: int = 0
    recent: bool = False
    shown: Shown | None = None
    caught_up: threading.Event | None = None
    header_only: bool = False
    state: str = "queued"
    stream: TailStream | None = None
    wake: Wake | None = None
    mark: tuple[tuple[int, int] | None, int] | None = None
    torn: bool = False
    ending: bool = False
    key: str = ""  # its absolute path, as notifications name it
    gate: threading.Event | None = None
    handover: Shown | None = None


@dataclass(frozen=True)
class Done:
    """A reading of ``entry`` has ended (its last item in the watch's queue). ``replaced``: its
    file was truncated or replaced; ``failed``: it showed an error; ``rest``: it ended only to free
    its reader, or read only the header (the log is looked at until it changes); ``shown``: what
    has been shown of the log."""

    entry: Entry
    stream: TailStream
    replaced: bool
    failed: bool
    rest: bool
    shown: Shown


def _plain(request: WatchRequest) -> WatchRequest:
    """What a reading of a request says of it: not when, where or how it was shown, nor the
    session's title then."""
    return replace(request, seen=0.0, path="", title=None, history=False, provisional=False, update=False)


class _Reading:
    """What one reading of a log shows, given what the readings before it showed (``before``)."""

    def __init__(self, stream: TailStream, before: Shown | None, *, replay_history: bool) -> None:
        before = before if before is not None else Shown()
        self.stream, self.replay_history = stream, replay_history
        self.skip = self.requests = before.requests
        self.started, self.session_id = before.started, before.session_id
        self.open = {request.index: request for request in before.provisional}
        self.said = set(before.said)
        self.header = self.replaced = self.failed = False
        self.ended: set[int] = set()  # the requests this reading read once its stream had ended

    def adopt(self, before: Shown) -> None:
        """Go on from what another file of the session showed (``before``): its requests, its
        provisional ones and what it said are not shown again."""
        self.skip = self.requests = max(self.requests, before.requests)
        self.started = self.started or before.started
        self.open = {**{request.index: request for request in before.provisional}, **self.open}
        self.said |= before.said

    def shown(self) -> Shown:
        return Shown(self.requests, self.started, self.session_id, tuple(self.open.values()), frozenset(self.said))

    def take(self, item: WatchItem) -> WatchItem | None:
        """``item`` as it is shown, or None when it is not. What the decoder concluded once the
        stream ended (``late``) depends on where the bytes stopped; an update pricing a request
        from the capture once it ended only re-prices what was read before, and is provisional
        only as that reading was (a priced final line is not: nothing follows it)."""
        if isinstance(item, WatchRequest):
            return self._request(item, late=self.stream.finished)
        return self._note(item, late=self.stream.finished)

    def _note(self, item: WatchNote, *, late: bool) -> WatchNote | None:
        if item.level == "started":
            self.header = True
            if self.session_id not in (None, item.session_id):  # another session holds the file now
                self.skip = self.requests = 0
                self.started, self.open, self.said, self.replay_history = False, {}, set(), True
                self.ended = set()
            self.session_id = item.session_id
            said, self.started = self.started, True
            return None if said else item
        if item.level == "error":
            stream = self.stream
            if late and (stream.retiring or not self.header and (stream.torn or not stream.offset)):
                return None  # what the end of the bytes made of it; or not a log yet (empty, a header half written)
            self.failed = True
        elif item.level == "replaced":
            self.replaced = True
        elif item.level in ("warning", "note"):
            if str(item.message) in self.said:
                return None
            self.said.add(str(item.message))
        return item

    def _request(self, item: WatchRequest, *, late: bool) -> WatchRequest | None:
        if late and self.stream.retiring:
            return None  # the next reading shows it, with what follows it in the log
        if item.update:  # the capture priced a request read before: as final as that reading was
            late = item.index in self.ended
        elif late:
            self.ended.add(item.index)
        if item.index < self.skip:  # shown before: again only as the update of a provisional one
            before = self.open.get(item.index)
            if before is None or _plain(before) == _plain(item):
                if before is not None and not late and not item.provisional:
                    del self.open[item.index]  # it is what was shown: nothing more will come
                return None
            return self._opened(replace(item, provisional=late or item.provisional, update=True))
        self.requests = max(self.requests, item.index + 1)
        if item.history and not self.replay_history:
            return None
        return self._opened(replace(item, provisional=True) if late else item)

    def _opened(self, item: WatchRequest) -> WatchRequest:
        """``item`` as shown, kept while it is provisional (at a torn tail, or awaiting the
        capture's usage: :func:`~dsh_audit.watch.follow_log`'s) for the update that may follow it."""
        if item.provisional:
            self.open[item.index] = item
        else:
            self.open.pop(item.index, None)
        return item


def read(entry: Entry, stream: TailStream, follow: Follow, out: queue.Queue[WatchItem | Done], *,
         header_only: bool = False) -> None:
    """Read ``entry``'s log through ``stream`` and put what it shows in ``out``, then a
    :class:`Done`. ``header_only``: stop once the header has been read. Once the watch stops, a
    reading still in the history it does not print stops too (nothing more of it would be shown)."""
    reading = _Reading(stream, entry.shown, replay_history=entry.recent)
    items = follow(stream)
    gate = entry.gate
    try:
        for item in items:
            shown = reading.take(item)
            if shown is not None:
                out.put(shown)
            if gate is not None and reading.header:  # which file of its session is followed: decided first
                while not gate.wait(0.05) and not stream.stop.is_set():
                    pass
                if not gate.is_set():
                    break  # the watch ended first: what follows may be another file's requests
                gate = entry.gate = None  # decided once: a later reading of the file starts from its own
                if entry.handover is not None:
                    reading.adopt(entry.handover)
            if (header_only and reading.header) or (stream.stop.is_set() and not stream.finished
                                                    and stream.in_history and not reading.replay_history):
                break  # the rest would not be shown: only the header was wanted, or history as the watch ends
    except Exception as exc:  # noqa: BLE001 - one log's failure must not end the watch
        out.put(WatchNote(time.time(), stream.path, "error", f"{type(exc).__name__}: {exc}"))
        reading.failed = True
    finally:
        items.close()
        stream.close()
        rest = (header_only or stream.retiring) and not reading.failed
        out.put(Done(entry, stream, reading.replaced, reading.failed, rest, reading.shown()))


def _changed(entry: Entry) -> bool:
    """Whether the file of a log no thread reads changed since it was read: it grew or shrank,
    another file took its path, or it cannot be looked at (its reader says why)."""
    try:
        info = os.stat(entry.path)
    except OSError:
        return True
    identity, size = entry.mark if entry.mark is not None else (None, -1)
    return (identity is not None and (info.st_dev, info.st_ino) != identity) or info.st_size != size


class Readers:
    """The followed logs (:attr:`entries`, by path) and their readers; see the module docstring.

    Args:
        out: where readers put what they show, each reading's :class:`Done` last.
        stop: set when the watch ends.
        notifier: the wakes of the logs being read, and the files notifications said changed.
        follow: what a reader runs over its stream.
        settle, poll: as :class:`~dsh_audit.watch.TailStream` takes them.
        limit: the most readers running at once (each a thread), and how many logs found at the
            start are read whole at once.
    """

    def __init__(self, out: queue.Queue[WatchItem | Done], *, stop: threading.Event, notifier: Notifier,
                 follow: Follow, settle: float, poll: float, limit: int) -> None:
        self.out, self.stop, self.notifier, self.follow = out, stop, notifier, follow
        self.settle, self.poll, self.limit = settle, poll, limit
        self.entries: dict[str, Entry] = {}
        self.woke_at = time.monotonic()  # when a log no thread read was last seen to change
        self._idle: dict[str, Entry] = {}  # the logs no thread reads, by absolute path
        self._queue: list[tuple[int, int, Entry]] = []  # waiting for a reader: (priority, order, entry)
        self._order = itertools.count()
        self._live: set[Entry] = set()  # read by a thread of their own
        self._pending: set[Entry] = set()  # handed to a reader whose Done has not been taken
        self._headers: deque[Entry] = deque()
        self._header_thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._look_at = self._torn_at = 0.0

    def add(self, path: str, *, history: int = 0, recent: bool = False, shown: Shown | None = None,
            caught_up: threading.Event | None = None, priority: int = 0, header_only: bool = False,
            gate: bool = False) -> None:
        """Follow ``path`` (see :class:`Entry`): its header is read by the header reader
        (``header_only``), else it waits for a reader of its own; a queued log of ``priority`` 0 (a
        new log, one that changed, one whose history is printed) may take an idle reader's place.
        ``gate``: its reader waits after the ``started`` note until the entry's gate is set."""
        entry = Entry(path, history, recent, shown, caught_up, header_only, key=os.path.abspath(path),
                      gate=threading.Event() if gate else None)
        self.entries[path] = entry
        if header_only:
            self._read_header(entry)
        else:
            self._enqueue(entry, priority)

    def _enqueue(self, entry: Entry, priority: int) -> None:
        entry.state = "queued"
        heapq.heappush(self._queue, (priority, next(self._order), entry))

    def _waiting(self, entry: Entry) -> bool:
        return entry.state == "queued" and self.entries.get(entry.path) is entry

    def fill(self, now: float) -> None:
        """Start a reader for each queued log while fewer than ``limit`` run; when none is free,
        ask as many of the readers idle longest to retire as logs of priority 0 wait."""
        while self._queue and len(self._live) < self.limit:
            entry = heapq.heappop(self._queue)[2]
            if self._waiting(entry):
                self._start(entry)
        urgent = sum(1 for priority, _, entry in self._queue if priority == 0 and self._waiting(entry))
        retiring = sum(1 for entry in self._live if entry.stream is not None and entry.stream.retiring)
        if urgent > retiring:
            idle = [entry for entry in self._live if self._may_retire(entry, now)]
            idle.sort(key=lambda entry: entry.stream.grown_at if entry.stream is not None else 0.0)
            for entry in idle[:urgent - retiring]:
                if entry.stream is not None:
                    entry.stream.retire()

    @staticmethod
    def _may_retire(entry: Entry, now: float) -> bool:
        stream = entry.stream
        return (stream is not None and not stream.retiring and not entry.ending and stream.idle_since is not None
                and (now - stream.grown_at >= _HOLD or stream.offset <= stream.history))

    def _start(self, entry: Entry) -> None:
        wake = self.notifier.wake_for(entry.path)
        # the moment its history has been read, for the order the history is printed in
        marked: Wake = CaughtUp(wake, entry.caught_up) if entry.caught_up is not None else wake
        stream = TailStream(entry.path, stop=self.stop, settle=self.settle, poll=self.poll, wake=marked,
                            history=entry.history, expect=entry.mark)
        entry.state, entry.stream, entry.wake, entry.mark = "reading", stream, wake, None
        self._live.add(entry)
        self._pending.add(entry)
        threading.Thread(target=read, args=(entry, stream, self.follow, self.out),
                         name=f"watch {os.path.basename(entry.path)}", daemon=True).start()

    def _read_header(self, entry: Entry) -> None:
        entry.state = "reading"
        self._pending.add(entry)
        with self._lock:
            self._headers.append(entry)
            if self._header_thread is None:
                self._header_thread = threading.Thread(target=self._read_headers, name="watch headers", daemon=True)
                self._header_thread.start()

    def _read_headers(self) -> None:
        """Read the header of each log handed over, one after another, only what its file holds
        (nothing is waited for); once the watch stops, or for a log no longer followed, only the
        :class:`Done` is put."""
        while True:
            with self._lock:
                if not self._headers:
                    self._header_thread = None
                    return
                entry = self._headers.popleft()
            stream = TailStream(entry.path, stop=self.stop, settle=self.settle, poll=self.poll, history=entry.history)
            entry.stream = stream
            stream.retire()  # what the file holds now; an incomplete first line is read again later
            if self.stop.is_set() or entry.ending:
                stream.close()
                self.out.put(Done(entry, stream, False, False, False, entry.shown or Shown()))
            else:
                read(entry, stream, self.follow, self.out, header_only=True)

    def done(self, item: Done) -> Entry | None:
        """A reading has ended and its reader is free; its entry, when the log is still followed
        (the caller then decides: :meth:`rest`, :meth:`forget`)."""
        entry = item.entry
        self._live.discard(entry)
        self._pending.discard(entry)
        if entry.wake is not None:
            self.notifier.forget(entry.path, entry.wake)
            entry.wake = None
        if self.entries.get(entry.path) is not entry:
            return None
        entry.shown = item.shown
        return entry

    def rest(self, entry: Entry, stream: TailStream) -> None:
        """No thread reads ``entry`` from now on: its file is looked at until it changes."""
        entry.mark = (stream.identity, entry.history if entry.header_only else stream.offset)
        entry.state, entry.stream, entry.torn, entry.header_only = "idle", None, stream.torn, False
        self._idle[entry.key] = entry

    def forget(self, path: str) -> None:
        """Follow ``path`` no more."""
        entry = self.entries.pop(path, None)
        if entry is not None:
            self._idle.pop(entry.key, None)

    def end(self, path: str) -> Shown | None:
        """Stop following ``path``: a reader hands over what it holds and ends (its :class:`Done`
        follows; None); a log no thread reads ends now: what was shown of it."""
        entry = self.entries.get(path)
        if entry is None:
            return None
        if entry.state == "reading":
            entry.ending = True
            if entry.stream is not None:
                entry.stream.end()
            return None
        self.forget(path)
        return entry.shown if entry.shown is not None else Shown()

    def look(self, now: float) -> None:
        """Look at the logs no thread reads (see the module docstring): each whose file changed
        waits for a reader."""
        looked: list[Entry] = [self._idle[key] for key in self.notifier.touched() if key in self._idle]
        if now >= self._look_at:
            began = time.monotonic()
            changed = [entry for entry in list(self._idle.values()) if _changed(entry)]
            interval = self.notifier.safety if self.notifier.notified else self.notifier.slow
            self._look_at = now + max(interval, (time.monotonic() - began) * _LOOK_SHARE)
        else:
            if now >= self._torn_at:  # a torn tail completed is noticed at once
                self._torn_at = now + self.poll * 4
                looked += [entry for entry in self._idle.values() if entry.torn]
            changed = [entry for entry in looked if _changed(entry)]
        for entry in changed:
            if self._idle.pop(entry.key, None) is entry:
                self.woke_at = now
                self._enqueue(entry, 0)

    def activity(self) -> float:
        """When (``time.monotonic``) a followed log last grew: a reader read bytes (or was made),
        or the file of a log no thread read changed."""
        return max([self.woke_at, *(entry.stream.grown_at for entry in self._live if entry.stream is not None)])

    def busy(self) -> bool:
        """Whether a reading has not ended yet (its :class:`Done` not taken)."""
        return bool(self._pending)
