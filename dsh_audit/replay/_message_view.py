"""Views of a fold generation's message list, and where one generation's messages are another's."""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from operator import is_
from typing import Any, overload

__all__ = ["MessageView"]


_Run = tuple[int, int, int]  # (start, old_start, length): items[start + k] is old[old_start + k]


class _Generation(list[Any]):
    """One fold generation's message list, with where its first items came from: the list it
    replaced (held weakly: a view of it is alive whenever someone asks) and the runs of that
    list's objects it starts with. A replace copies the items before and after the replaced range,
    so :meth:`MessageView.runs_from` between two generations needs no search."""

    __slots__ = ("__weakref__", "parent", "runs")

    def __init__(self, items: Iterable[Any] = (), parent: "_Generation | None" = None,
                 runs: tuple[_Run, ...] = ()) -> None:
        super().__init__(items)
        self.parent = None if parent is None else weakref.ref(parent)
        self.runs = runs

    def __reduce__(self) -> tuple[type[_Generation], tuple[list[Any]]]:
        """Pickled (a worker's result) as its items alone: a weak reference does not pickle, and
        the lineage only spares a search, which :meth:`MessageView.runs_from` falls back to."""
        return _Generation, (list(self),)


def _compose(outer: Sequence[_Run], inner: Sequence[_Run]) -> list[_Run]:
    """Runs of ``c`` in ``a`` from runs of ``b`` in ``a`` (``outer``) and of ``c`` in ``b`` (``inner``)."""
    composed: list[_Run] = []
    for start, mid, length in outer:
        for inner_start, old_start, inner_length in inner:
            low, high = max(mid, inner_start), min(mid + length, inner_start + inner_length)
            if low < high:
                composed.append((start + low - mid, old_start + low - inner_start, high - low))
    return composed


def _lineage(items: list[Any], old: list[Any]) -> list[_Run] | None:
    """Where ``items``' objects are ``old``'s, in whole-list positions, when ``items`` is ``old``
    or descends from it through a few replaces; None when that is not known."""
    runs: list[_Run] = [(0, 0, len(items))]
    current = items
    for _ in range(16):
        if current is old:
            return runs
        if not isinstance(current, _Generation) or current.parent is None:
            return None
        parent = current.parent()
        if parent is None:
            return None
        runs, current = _compose(runs, current.runs), parent
    return None


class MessageView(Sequence[Any]):
    """An immutable view of ``items[start:n]`` of one fold generation's growing list.

    Requests share one growing list per surface generation instead of copying it, so listing
    every request of a log costs O(1) per request, not O(history). Appends never change a view
    (its bounds are fixed); a replace starts a new list.
    """

    __slots__ = ("_items", "_n", "_start")

    def __init__(self, items: list[Any], n: int, start: int = 0) -> None:
        self._items = items
        self._n = n
        self._start = min(start, n)

    def __len__(self) -> int:
        return self._n - self._start

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Any, ...]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:  # copy only the slice, not the whole view first
                return tuple(self._items[self._start + start: self._start + max(start, stop)])
            return tuple(self._items[self._start: self._n][index])
        size = self._n - self._start  # not len(self): a Python call per item read
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise IndexError("index out of range")
        return self._items[self._start + index]

    def __iter__(self) -> Iterator[Any]:
        return islice(self._items, self._start, self._n)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    def __hash__(self) -> int:
        return hash(tuple(id(m) for m in self))

    def __repr__(self) -> str:
        return f"MessageView({list(self)!r})" if len(self) < 4 else f"MessageView({len(self)} items)"

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        """The first index of ``value`` (searched at C speed); ValueError when absent."""
        size = len(self)
        stop = size if stop is None else min(stop, size)
        return self._items.index(value, self._start + max(start, 0), self._start + max(stop, 0)) - self._start

    def shared_prefix(self, other: object) -> int:
        """How many leading items this view and ``other`` are known to share without comparing
        them: views of the same list from the same start share all of the shorter one's items
        (a fold generation only appends); otherwise 0."""
        if isinstance(other, MessageView) and other._items is self._items and other._start == self._start:
            return min(self._n, other._n) - self._start
        return 0

    def common_items(self, other: Sequence[Any]) -> int:
        """How many leading items this view and ``other`` share as the same objects: O(1) for
        views of one generation, else a binary search at C speed (a replace's next generation
        starts with the previous one's objects)."""
        shared = self.shared_prefix(other)
        if shared or not isinstance(other, MessageView):
            return shared
        known = self._kept_start(other)
        if known >= min(len(self), len(other)) or self[known] is not other[known]:
            return known  # the replaced item's place, found without reading the history before it
        return known + self.same_run(known, other, known)

    def _kept_start(self, other: "MessageView") -> int:
        """How many leading items of this view a replace (or several) kept as ``other``'s same
        objects, from the generations' lineage (0 when it does not say): after a prune of an old
        message of a long history, the items before it are not compared again."""
        known = _lineage(self._items, other._items) if self._start == other._start else None
        if not known or known[0][0] != 0 or known[0][1] != 0:
            return 0
        return max(min(known[0][2], self._n, other._n) - self._start, 0)

    def same_run(self, at: int, other: "MessageView", other_at: int) -> int:
        """How many items from ``self[at]`` on are the same objects as from ``other[other_at]``
        on (a binary search on slices, compared by identity at C speed)."""
        x, y = self._items, other._items
        a, b = self._start + at, other._start + other_at
        lo, hi = 0, min(len(self) - at, len(other) - other_at) + 1  # first lo shared, first hi not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if all(map(is_, x[a + lo:a + mid], y[b + lo:b + mid])):
                lo = mid
            else:
                hi = mid
        return max(lo, 0)

    def runs_from(self, old: Sequence[Any]) -> list[_Run]:
        """Where this view's items are ``old``'s own objects: ``(start, old_start, length)`` runs
        in order, each as long as it goes (the rest of this view is new). After a replace the next
        generation keeps the message objects before and after the replaced range, so a cache of
        per-message work can copy those runs at C speed and do the work only for the new items.

        Between fold generations the runs are known from the replaces themselves (O(1) per
        replace); other views are searched by identity, with the same result.

        Example:
            >>> from dsh_audit.log import Event
            >>> from dsh_audit.replay import SurfaceFold
            >>> def user(seq, op="append", sources=None):
            ...     return Event(seq=seq, type="user/message", time=0, data={"role": "user", "content": []},
            ...                  line=seq + 1, surface_op=op, source_event_seqs=sources)
            >>> fold = SurfaceFold()
            >>> for seq in range(6):
            ...     _ = fold.apply(user(seq))
            >>> before = fold.messages()
            >>> _ = fold.apply(user(6, {"op": "replace", "start": 2, "end": 3}, [2, 3]))
            >>> after = fold.messages()
            >>> after.runs_from(before), after.tail(1).runs_from(before.tail(3))
            ([(0, 0, 2), (3, 4, 2)], [(2, 1, 2)])
            >>> after.runs_from(before) == after._searched_runs(before)
            True
            >>> after._kept_start(before), after.common_items(before) == after.same_run(0, before, 0) == 2
            (2, True)
        """
        if not isinstance(old, MessageView):
            return []
        known = _lineage(self._items, old._items)
        if known is None:
            return self._searched_runs(old)
        runs: list[_Run] = []
        start, old_start = self._start, old._start
        for at, old_at, length in known:  # clip each run to both views' bounds
            low = max(0, start - at, old_start - old_at)
            high = min(length, self._n - at, old._n - old_at)
            if low >= high:
                continue
            run = (at + low - start, old_at + low - old_start, high - low)
            if runs and runs[-1][0] + runs[-1][2] == run[0] and runs[-1][1] + runs[-1][2] == run[1]:
                last = runs.pop()
                run = (last[0], last[1], last[2] + run[2])
            runs.append(run)
        return runs

    def _searched_runs(self, old: "MessageView") -> list[_Run]:
        """:meth:`runs_from` by search: each next item's object looked up in ``old`` by id."""
        runs: list[_Run] = []
        i, j, n = 0, 0, len(self)
        ids = list(map(id, old))  # where an object is in old: an int search at C speed
        while i < n and j < len(ids):
            try:
                found = ids.index(id(self[i]), j)
            except ValueError:
                i += 1
                continue
            length = self.same_run(i, old, found)
            runs.append((i, found, length))
            i, j = i + length, found + length
        return runs

    def tail(self, start: int) -> "MessageView":
        """The same view without its first ``start`` items (no copy)."""
        return MessageView(self._items, self._n, self._start + start)
