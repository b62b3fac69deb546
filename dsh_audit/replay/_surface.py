"""The surface fold (spec §3): append, positional inclusive replace, provenance checks.

Holds only the live surface: the events whose seqs are current nodes, each projected once.
Errors carry DSH's own diagnostic text so a refusal names the same cause DSH names.
"""

from __future__ import annotations

import hashlib
import weakref
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from operator import is_
from typing import Any, cast, overload

from ..errors import ReplayError
from ..jsjson import stringify_bytes
from ..log import SURFACE_TYPES, Event
from ._derive import derive_event_message

__all__ = ["MessageView", "PrefixDigest", "Replacement", "SurfaceFold"]


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
        return self.same_run(0, other, 0)

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


class _Serialised:
    """``JSON.stringify`` bytes of recently hashed messages, by identity, up to a byte budget
    (the oldest dropped first): after a replace, a digest re-hashes the history that follows the
    replaced node, and those messages are the same objects it hashed before."""

    BUDGET = 32 << 20

    def __init__(self) -> None:
        self._items: dict[int, tuple[Any, bytes]] = {}
        self._size = 0

    def __call__(self, item: Any) -> bytes:
        found = self._items.get(id(item))
        if found is not None and found[0] is item:
            return found[1]
        data = stringify_bytes(item)
        if found is not None:  # an id reused by a new object
            self._size -= len(found[1])
        self._items[id(item)] = (item, data)
        self._size += len(data)
        while self._size > self.BUDGET:
            _, old = self._items.pop(next(iter(self._items)))
            self._size -= len(old)
        return data

    def fill(self, parts: list[bytes | None], items: list[Any], at: int) -> list[bytes]:
        """``parts`` with each missing entry (None) replaced by the bytes of ``items[at + k]``."""
        return [self(items[at + k]) if part is None else part for k, part in enumerate(parts)]

    def forget(self, items: list[Any]) -> None:
        """Forget ``items``, the messages a replace took off the surface: they are never hashed
        again, and an entry would keep them alive (a compaction drops most of the history, which
        must not stay pinned up to the byte budget)."""
        entries = self._items
        for item in items:
            found = entries.get(id(item))
            if found is not None and found[0] is item:
                del entries[id(item)]
                self._size -= len(found[1])


class PrefixDigest:
    """SHA-256 of ``JSON.stringify(items[start:n])`` for any ``n``, over one growing list.

    A fold generation's list only grows, so the digest of a longer prefix continues the hasher of
    a shorter one; a hasher copy is kept every :attr:`EVERY` items, so asking for an earlier
    prefix re-feeds at most that many. After a replace the next generation's list starts with the
    same item objects up to the replaced position: :meth:`fork` carries the checkpoints of that
    shared prefix over, so a replace re-hashes only what follows it, and only when a digest is
    asked for. Each fed item's bytes are kept by position, and a fork over the next fold
    generation carries them over along its runs of this list's items: the re-hash joins bytes
    already made, at C speed, with no per-item lookup.

    Example:
        >>> items = [{"role": "user", "content": []}]
        >>> PrefixDigest(items).digest(1) == PrefixDigest(items).digest(1)
        True
    """

    EVERY = 32
    __slots__ = ("_checkpoints", "_fed", "_hasher", "_items", "_parts", "_serialise", "_start")

    def __init__(self, items: list[Any], start: int = 0) -> None:
        self._items = items
        self._start = start
        self._serialise = _Serialised()
        self._hasher = hashlib.sha256(b"[")
        self._fed = 0  # items fed, counted from start
        self._checkpoints = [self._hasher.copy()]  # [i]: state after i * EVERY items
        self._parts: list[bytes | None] = []  # [i]: the bytes of items[start + i], None if not made

    def digest(self, n: int) -> str:
        """The hex digest of ``items[start:n]``."""
        wanted = max(n - self._start, 0)
        if wanted < self._fed:
            at = wanted // self.EVERY
            self._hasher, self._fed = self._checkpoints[at].copy(), at * self.EVERY
        hasher, fed, every, checkpoints = self._hasher, self._fed, self.EVERY, self._checkpoints
        serialise, parts = self._serialise, self._parts
        base = self._start
        while fed < wanted:
            # One block up to the next checkpoint, fed to the hasher in one call: after a replace
            # the whole history that follows is hashed again, and per-item calls cost more than
            # the hashing itself.
            stop = min(wanted, (fed // every + 1) * every)
            if len(parts) < stop:
                parts += [None] * (stop - len(parts))
            block = parts[fed:stop]
            if None in block:
                block[:] = serialise.fill(block, self._items, base + fed)
                parts[fed:stop] = block
            if fed:
                hasher.update(b",")
            hasher.update(b",".join(cast("list[bytes]", block)))  # no None left in it
            fed = stop
            if fed % every == 0 and fed // every == len(checkpoints):
                checkpoints.append(hasher.copy())
        self._fed = fed
        final = hasher.copy()
        final.update(b"]")
        return final.hexdigest()

    def fork(self, items: list[Any], shared: int, gone: list[Any]) -> "PrefixDigest":
        """A digest over ``items``, whose first ``shared`` entries are this list's; ``gone``: the
        entries of this list that ``items`` no longer holds."""
        other = PrefixDigest.__new__(PrefixDigest)
        other._items, other._start, other._serialise = items, self._start, self._serialise
        self._serialise.forget(gone)
        kept = max(shared - self._start, 0) // self.EVERY + 1
        other._checkpoints = self._checkpoints[:kept]
        other._hasher, other._fed = other._checkpoints[-1].copy(), (len(other._checkpoints) - 1) * self.EVERY
        other._parts = self._carried_parts(items, shared)
        return other

    def _carried_parts(self, items: list[Any], shared: int) -> list[bytes | None]:
        """This digest's item bytes placed where ``items`` holds the same items: along the runs
        of a fold generation that replaced this list, else for the ``shared`` prefix."""
        parts, start = self._parts, self._start
        if not (isinstance(items, _Generation) and items.parent is not None and items.parent() is self._items):
            return parts[:max(shared - start, 0)]
        carried: list[bytes | None] = [None] * max(len(items) - start, 0)
        for at, old_at, length in items.runs:
            low = max(0, start - at, start - old_at)
            high = min(length, len(parts) + start - old_at)
            if low < high:
                carried[at + low - start:at + high - start] = parts[old_at + low - start:old_at + high - start]
        return carried


@dataclass(frozen=True, slots=True)
class Replacement:
    """One committed replace: the new seq, the declared range, and what it shadowed."""

    seq: int
    start: int
    end: int
    shadowed_seqs: tuple[int, ...]
    type: str

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "start": self.start, "end": self.end, "shadowedSeqs": list(self.shadowed_seqs)}


def _is_seq(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**53 - 1


def _surface_op(event: Event) -> Any:
    if event.type not in SURFACE_TYPES:
        if event.surface_op is not None:
            raise ReplayError(f'session event "{event.type}" is not surface-eligible and cannot carry surfaceOp')
        if event.source_event_seqs is not None:
            raise ReplayError(f'session event "{event.type}" is not surface-eligible and cannot carry sourceEventSeqs')
        return None
    op = event.surface_op
    if op is None:
        raise ReplayError(f'session event "{event.type}" is surface-eligible and requires a surfaceOp marker')
    if op == "append":
        return op
    if not isinstance(op, dict):
        raise ReplayError(f'session event "{event.type}" carries an invalid surfaceOp')
    if not (len(op) == 3 and op.get("op") == "replace" and _is_seq(op.get("start")) and _is_seq(op.get("end"))):
        raise ReplayError(f'session event "{event.type}" carries an invalid replace surfaceOp')
    return op


def _check_provenance(event: Event, shadowed: list[int]) -> None:
    raw = event.source_event_seqs
    sources: set[int] = set()
    if raw is not None:
        if not isinstance(raw, list):
            raise ReplayError(f"sourceEventSeqs on event at seq {event.seq} must be an array when present")
        if not raw and event.type != "assistant/message":
            raise ReplayError("sourceEventSeqs must not be empty except on assistant/message")
        later = None
        if set(map(type, raw)) <= {int} and (not raw or min(raw) >= 0):
            sources = set(raw)  # the common case, checked in C-speed passes
            if raw and max(raw) >= event.seq:
                later = next(source for source in raw if source >= event.seq)
        else:
            for source in raw:
                if not _is_seq(source):
                    raise ReplayError(f'session event "{event.type}" sourceEventSeqs must densely contain '
                                      "non-negative safe integers")
                sources.add(source)
                if later is None and source >= event.seq:
                    later = source
        if len(sources) != len(raw):
            raise ReplayError("sourceEventSeqs must not contain duplicates")
        if later is not None:
            raise ReplayError(f"sourceEventSeqs must reference earlier events: {later} >= current seq {event.seq}")
    missing = [s for s in shadowed if s not in sources]
    if missing:
        raise ReplayError("surface replace: sourceEventSeqs must include every shadowed surface node; "
                          f"missing {', '.join(map(str, missing))}")


def _blank_result(data: Any) -> Any:
    message = data["message"]
    result = message["content"][0]
    return {**data, "message": {**message, "content": [{**result, "content": None}]}}


class SurfaceFold:
    """Incremental surface state: ``nodes`` (seqs in order) and the event behind each node.

    Example:
        >>> fold = SurfaceFold()
        >>> fold.nodes
        []
    """

    def __init__(self) -> None:
        self.nodes: list[int] = []
        self.node_events: dict[int, Event] = {}
        self.replace_generation = 0
        # Projected messages of the current generation, in node order, grown on append.
        self._messages = _Generation()
        self._message_seqs: list[int] = []
        # The projected nodes without a message (ascending indices): few, so a replace shifts
        # them, and a node's message position is its index less those before it.
        self._bare_nodes: list[int] = []
        self._projected = 0  # nodes projected into _messages so far
        self._digests: dict[int, PrefixDigest] = {}  # by start, over this generation's _messages

    def apply(self, event: Event) -> Replacement | None:
        """Fold one event; raises ReplayError (DSH's text) and leaves the state unchanged on failure."""
        op = _surface_op(event)
        if op is None:
            return None
        if op == "append":
            _check_provenance(event, [])
            self.nodes.append(event.seq)
            self.node_events[event.seq] = event
            return None
        try:
            start_idx = self.nodes.index(op["start"])
        except ValueError:
            raise ReplayError(f"surface replace: start seq {op['start']} not found in surface") from None
        try:
            end_idx = self.nodes.index(op["end"])
        except ValueError:
            raise ReplayError(f"surface replace: end seq {op['end']} not found in surface") from None
        if start_idx > end_idx:
            raise ReplayError(f"surface replace: start seq {op['start']} (index {start_idx}) is after "
                              f"end seq {op['end']} (index {end_idx})")
        shadowed = self.nodes[start_idx:end_idx + 1]
        _check_provenance(event, shadowed)
        if event.type == "tool/result":
            self._check_tool_rewrite(event, shadowed)
        self._project()
        self.nodes[start_idx:end_idx + 1] = [event.seq]
        for seq in shadowed:
            self.node_events.pop(seq, None)
        self.node_events[event.seq] = event
        self.replace_generation += 1
        self._new_generation(start_idx, end_idx)
        return Replacement(event.seq, op["start"], op["end"], tuple(shadowed), event.type)

    def _check_tool_rewrite(self, event: Event, shadowed: list[int]) -> None:
        if len(shadowed) != 1:
            raise ReplayError("tool/result surface replacement must rewrite exactly one current node")
        original = self.node_events[shadowed[0]]
        if original.type != "tool/result":
            raise ReplayError("tool/result surface replacement must target a current tool/result")
        if _blank_result(original.data) != _blank_result(event.data):
            raise ReplayError("tool/result surface replacement may change only content")

    def _new_generation(self, start_idx: int, end_idx: int) -> None:
        """Nodes ``start_idx..end_idx`` (all projected) became one: a new message list (requests
        hold views of the old one) with the same message objects before and after the range, so
        every cache keyed by a message's identity (renderer fragments, prompt parts) still holds
        for them, and digests keep their hashes of the prefix before it. The new list records
        which of its runs are the old list's (:meth:`MessageView.runs_from`)."""
        bare = self._bare_nodes
        first, last = bisect_left(bare, start_idx), bisect_left(bare, end_idx + 1)
        kept, after = start_idx - first, end_idx + 1 - last
        shift = end_idx - start_idx
        middle = derive_event_message(self.node_events[self.nodes[start_idx]])
        old = self._messages
        added = 0 if middle is None else 1
        runs = tuple(run for run in ((0, 0, kept), (kept + added, after, len(old) - after)) if run[2])
        self._messages = _Generation(old[:kept], old, runs)
        if middle is not None:
            self._messages.append(middle)
        self._messages += old[after:]
        self._message_seqs = self._message_seqs[:kept] + ([self.nodes[start_idx]] if added else []) \
            + self._message_seqs[after:]
        self._bare_nodes = bare[:first] + ([] if added else [start_idx]) + [node - shift for node in bare[last:]]
        self._projected = len(self.nodes)
        gone = old[kept:after]
        self._digests = {start: digest.fork(self._messages, kept, gone) for start, digest in self._digests.items()}

    def _project(self) -> None:
        nodes, events = self.nodes, self.node_events
        for index in range(self._projected, len(nodes)):
            message = derive_event_message(events[nodes[index]])
            if message is not None:
                self._messages.append(message)
                self._message_seqs.append(nodes[index])
            else:
                self._bare_nodes.append(index)
        self._projected = len(nodes)

    def messages(self) -> MessageView:
        """The current request messages: every node projected, empty assistants dropped."""
        self._project()
        return MessageView(self._messages, len(self._messages))

    def message_seqs(self) -> MessageView:
        """The seq behind each entry of :meth:`messages`, in the same order."""
        self._project()
        return MessageView(self._message_seqs, len(self._message_seqs))

    def prefix_digest(self, start: int = 0) -> PrefixDigest:
        """The digest of this generation's messages from ``start`` on (see :class:`PrefixDigest`)."""
        digest = self._digests.get(start)
        if digest is None:
            digest = self._digests[start] = PrefixDigest(self._messages, start)
        return digest

    def messages_sha256(self, *, skip_head: bool = False) -> str:
        """SHA-256 of ``JSON.stringify(messages())`` (without the first message with ``skip_head``)."""
        self._project()
        return self.prefix_digest(1 if skip_head else 0).digest(len(self._messages))
