"""SHA-256 of ``JSON.stringify`` of a growing message list's prefixes, carried over a replace."""

from __future__ import annotations

import hashlib
from typing import Any, cast

from ..jsjson import stringify_bytes
from ._message_view import _Generation

__all__ = ["PrefixDigest"]


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
