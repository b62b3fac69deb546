"""The history ``watch --since`` prints, in the order its requests were sent.

Each log whose history is printed is read by a thread of its own, so the requests of several logs'
history reach the watch interleaved as the threads happen to run. :class:`History` holds what comes
until every log whose history is printed has been read up to where it stood when the watch began,
then hands it over: the requests of the history merged by send time (the log's own clock), each
log's items in their own order (its notes where they came), and whatever else came meanwhile after
them, as it came. A log's stream marks that moment through its :class:`CaughtUp` wake: a stream
waits for bytes only once it has handed the decoder every complete record the file holds, so every
request of its history it could judge has been put in the queue before (one whose judgement waits
on later bytes comes when they do, as before).
"""

from __future__ import annotations

import heapq
import threading

from ._model import WatchItem, WatchRequest
from ._notify import Wake

__all__ = ["CaughtUp", "History"]


class CaughtUp(Wake):
    """A followed file's :class:`Wake` (``inner``, the notifier's: every call is passed to it) that
    sets ``caught_up`` (a new event unless one is given) the first time its stream waits for the
    file to grow."""

    def __init__(self, inner: Wake, caught_up: threading.Event | None = None) -> None:
        super().__init__(notified=inner.notified, fast=inner.fast, slow=inner.slow, safety=inner.safety)
        self.inner = inner
        self.caught_up = caught_up if caught_up is not None else threading.Event()

    def grew(self) -> None:
        self.inner.grew()

    def wait(self, at_most: float | None = None) -> None:
        self.caught_up.set()
        self.inner.wait(at_most)

    def set(self) -> None:
        self.inner.set()


def _merged(held: list[WatchItem]) -> list[WatchItem]:
    """``held`` (in the order it came) with each log's items in their own order, and the logs'
    requests merged by when they were sent (when seen, for one with no send time): the history
    first, then what came after it, as it came; a note stays after the item of its log it followed
    (a torn tail after the request before it), or first, when none did."""
    queues: dict[str, list[tuple[tuple[int, float], int, WatchItem]]] = {}
    for at, item in enumerate(held):
        queue = queues.setdefault(item.path, [])
        if isinstance(item, WatchRequest):
            key = (0, item.moment) if item.history else (1, float(at))
        else:
            key = queue[-1][0] if queue else (0, float("-inf"))
        queue.append((key, at, item))
    heads = [(queue[0][0], path, 0) for path, queue in queues.items()]
    heapq.heapify(heads)
    merged: list[WatchItem] = []
    while heads:
        _, path, at = heapq.heappop(heads)
        queue = queues[path]
        merged.append(queue[at][2])
        if at + 1 < len(queue):
            heapq.heappush(heads, (queue[at + 1][0], path, at + 1))
    return merged


class History:
    """What the watch produces while the history of the logs :meth:`expect` names is read
    (``holding``: only when the watch prints history); :meth:`tick` hands it over once it is."""

    def __init__(self, *, holding: bool) -> None:
        self.holding = holding
        self._expected: dict[str, threading.Event] = {}
        self._ended: set[str] = set()
        self._held: list[WatchItem] = []
        self._dropped: set[str] = set()  # copies of a file followed: their history is that file's
        self._closing = False

    def expect(self, path: str, caught_up: threading.Event) -> None:
        """Wait for the history of the log at ``path``: until ``caught_up`` is set or it ends."""
        if self.holding:
            self._expected[path] = caught_up

    def ended(self, path: str) -> None:
        """The follower of ``path`` has ended: all it produced is in the queue before this."""
        self._ended.add(path)

    def drop(self, path: str) -> None:
        """The log at ``path`` was found to be a copy of another file followed, whose history holds
        its requests: the requests of it held, and those it still hands over, are not shown."""
        if self.holding:
            self._dropped.add(path)
            self._held = [item for item in self._held if not (isinstance(item, WatchRequest) and item.path == path)]

    def hold(self, item: WatchItem) -> bool:
        """Keep ``item`` until the history is handed over; False when nothing is held any more."""
        if self.holding and not (isinstance(item, WatchRequest) and item.path in self._dropped):
            self._held.append(item)
        return self.holding

    def tick(self) -> list[WatchItem]:
        """Called when the queue was found empty: what was held (:func:`_merged`) once every
        expected log has caught up and the queue has since been found empty again (what it put
        before catching up has been taken by then); else nothing."""
        if not self.holding:
            return []
        if not self._closing:
            self._closing = all(event.is_set() or path in self._ended for path, event in self._expected.items())
            return []
        return self.release()

    def release(self) -> list[WatchItem]:
        """Everything held, in :func:`_merged`'s order, and nothing held from now on."""
        if not self.holding:
            return []
        self.holding = False
        held, self._held = self._held, []
        return _merged(held)
