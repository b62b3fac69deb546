"""A request's prompt as the provider caches it: ordered text segments with their token counts,
on a track (one growing list of segments shared by consecutive prompts), and the common prefix of
two prompts. :class:`~._prefix.PromptBuilder` makes them.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, compress, count, islice
from operator import is_not, itemgetter
from typing import Any
from weakref import WeakKeyDictionary, ref

from .._seq import common_length
from ..replay import MessageView
from ._tokens import TokenCounter

__all__ = ["Prompt", "common_chars", "common_prefix", "prefix_tokens"]


@dataclass(frozen=True, slots=True, eq=False)
class Prompt:
    """One request's prompt segments, their token counts, and where they came from.

    Consecutive prompts of one conversation share one growing list of segments (a *track*); a
    prompt is its track's first :attr:`size` segments. A track only grows, so a prompt never
    changes, and two prompts of one track share ``min(size)`` segments without comparing any.

    Attributes:
        segments: the segments in the rule's render order (read up to ``size``).
        source: ``wire:<adapter>`` or ``json``.
        json: the log-JSON projection of a wire-projected prompt, used to compare it with a
            request whose body could not be rendered (like is compared with like). Built when
            first read (:attr:`projection`): most sessions render every request and never read it.
        cumulative: tokens of the first ``k + 1`` segments at ``k`` (empty when not counted).
        size: how many segments are this prompt's.
        track: the track the lists belong to (compared once with another track, then cached).
    """

    segments: list[str]
    source: str
    projection: Prompt | Callable[[], Prompt] | None  # :attr:`json`, or how to build it
    cumulative: list[int]
    size: int
    track: _Track

    @property
    def json(self) -> Prompt | None:
        """The log-JSON projection (None: this prompt is log JSON), built the first time it is
        read: a request's prompt is compared as log JSON only beside one whose body could not be
        rendered, so building it for every request would be work nearly always thrown away."""
        projection = self.projection
        if callable(projection):
            projection = projection()
            object.__setattr__(self, "projection", projection)  # frozen: set once, as if at creation
        return projection

    @property
    def tokens(self) -> int:
        """Tokens of the whole prompt (0 when not counted)."""
        return self.cumulative[self.size - 1] if self.cumulative and self.size else 0

    def view(self, other: Prompt) -> tuple[Prompt, Prompt]:
        """``(self, other)`` in a common projection (both rendered, or both log JSON)."""
        if self.source == other.source:
            return self, other
        return self.json or self, other.json or other


def common_chars(a: str, b: str) -> int:
    """Length of the common leading substring of ``a`` and ``b``."""
    return common_length(a, b)


def common_prefix(a: Prompt, b: Prompt) -> tuple[int, int]:
    """``(whole segments, extra characters)`` that ``a`` and ``b`` share from the start."""
    n = min(a.size, b.size)
    if a.track is b.track:
        return n, 0
    whole, chars = a.track.common(b.track)
    return (n, 0) if whole >= n else (whole, chars)


def prefix_tokens(prompt: Prompt, shared: tuple[int, int], count: TokenCounter) -> int:
    """Tokens of the first ``shared`` segments/characters of ``prompt``."""
    whole, chars = shared
    if prompt.cumulative:
        total = prompt.cumulative[whole - 1] if whole else 0
    else:
        total = sum(count(s) for s in prompt.segments[:whole])
    if chars and whole < prompt.size:
        total += count.head(prompt.segments[whole], chars)
    return total


_Part = tuple[tuple[str, ...], tuple[int, ...]]  # segments and their token counts


class _Memo:
    """Values made for recently used parts, least recently used dropped past :attr:`LIMIT`
    characters of segments (weighed by size, not counted: a few huge tool results must not pin
    hundreds of megabytes, nor many small ones evict each other early).

    A prompt's message parts live in its track; this keeps what is made outside one (the head's
    parts, a title or compaction call's messages) for the next request that needs it, without
    growing with the log.
    """

    LIMIT = 4_000_000
    ENTRY = 64  # weight of an entry besides its text: many tiny parts must not grow without bound

    def __init__(self) -> None:
        self.old: dict[Hashable, tuple[Any, _Part, int]] = {}
        self.new: dict[Hashable, tuple[Any, _Part, int]] = {}
        self.weight = 0  # of ``old`` and ``new`` (an entry moves from one to the other when used)

    def get(self, key: Hashable, owner: Any, make: Callable[[], _Part]) -> _Part:
        """The value for ``key`` (``owner`` is kept alive with it and must be the same object, or
        a tuple of the same objects)."""
        found = self.new.get(key)
        if found is None or not _same(found[0], owner):
            if found is not None:
                self.weight -= found[2]  # replaced
            found = self.old.pop(key, None)  # used now: the most recent, or replaced
            if found is None or not _same(found[0], owner):
                if found is not None:
                    self.weight -= found[2]
                value = make()
                found = (owner, value, sum(map(len, value[0])) + self.ENTRY)
                self.weight += found[2]
            self.new[key] = found
        return found[1]

    def roll(self) -> None:
        """End a request: what it used becomes the most recently used, and stays however large
        it is (that request's prompt holds it anyway: dropping a huge part would only make the
        next request serialise it again, a second copy of it)."""
        old, used = self.old, len(self.new)
        old.update(self.new)  # none of its keys is in ``old`` (:meth:`get` took them out)
        self.new = {}
        while self.weight > self.LIMIT and len(old) > used:
            self.weight -= old.pop(next(iter(old)))[2]




@dataclass(frozen=True, slots=True)
class _Messages:
    view: Sequence[Any]
    part_for: Callable[[int], _Part]
    runs: bool = True  # whether a fork looks for the previous track's runs after the shared start


def _flat(messages: _Messages | tuple[list[str], list[int]]) -> tuple[list[str], list[int]]:
    if not isinstance(messages, _Messages):
        return messages
    segments: list[str] = []
    counts: list[int] = []
    for i in range(len(messages.view)):
        part_segments, part_counts = messages.part_for(i)
        segments += part_segments
        counts += part_counts
    return segments, counts


class _Track:
    """A growing prompt: the head's segments, then each message's, with the running sums of their
    token counts (one list of ints, not two: a fork copies what it keeps of each). Prompts are
    prefixes of it; its lists only grow.

    Where each message's segments start is not listed per message (a fork would shift every later
    one: a new int per message of the history after each prune). Nearly every part is one segment,
    so only the messages whose part is not are listed (:attr:`wide`), with the segments they add
    beyond one each, summed (:attr:`spread`); :meth:`_offset` reads a message's start from them.

    A forked track remembers the track it was forked from and how many segments it took from it
    as the same objects (:attr:`base`): two tracks of one line of forks share at least the least
    of the cuts between them, so their common prefix is compared from there, not from the start
    (after each prune of a long history, a walk over everything before the pruned message).
    """

    __slots__ = ("__weakref__", "_common", "base", "cumulative", "head", "parts", "segments", "spread", "view",
                 "wide")

    #: how many forks back :meth:`common` looks for a track both tracks were forked from
    DEPTH = 8

    def __init__(self, head: tuple[str, ...], head_counts: list[int]) -> None:
        self.head = head
        self.segments: list[str] = list(head)
        self.cumulative: list[int] = list(accumulate(head_counts))
        self.parts: list[_Part] = []  # one per message of view
        self.wide: list[int] = []  # the messages whose part is not one segment (ascending)
        self.spread: list[int] = []  # [j]: segments beyond one per part, summed over wide[:j + 1]
        self.view: Sequence[Any] = ()
        self.base: tuple[ref[_Track], int] | None = None  # forked from: that track, segments taken from it
        # Weak: a track must not keep alive every track it was ever compared with (and, through
        # theirs, every track of the log with all their messages).
        self._common: WeakKeyDictionary[_Track, tuple[int, int]] = WeakKeyDictionary()

    def common(self, other: _Track) -> tuple[int, int]:
        """``(segments, characters)`` this track and ``other`` share from the start, cached once
        they differ (a later append to either cannot change it then; until then, the characters
        are 0 and the segments all of the shorter one's, and the next call compares only the
        segments appended since)."""
        found = self._common.get(other)
        if found is not None and found[1] >= 0:
            return found
        # Until they differ, the segments both had when last compared are known to be shared
        # (tracks only grow): compare only what was appended since.
        mine, theirs = self.segments, other.segments
        if found is not None:
            start = found[0]
            whole = start + common_length(mine[start:], theirs[start:]) if start else common_length(mine, theirs)
        else:
            whole = _common_from(mine, theirs, self._forked_alike(other))
        if whole >= min(len(mine), len(theirs)):
            self._common[other] = other._common[self] = (whole, -1)  # -1: no difference yet
            return whole, 0
        shared = (whole, common_chars(mine[whole], theirs[whole]))
        self._common[other] = shared
        other._common[self] = shared
        return shared

    def _lineage(self) -> dict[_Track, int]:
        """This track and the tracks it was forked from (up to :attr:`DEPTH` forks back), each with
        how many leading segments it shares with this one as the same objects."""
        found: dict[_Track, int] = {self: len(self.segments)}
        track, shared = self, len(self.segments)
        for _ in range(self.DEPTH):
            base = track.base
            parent = base[0]() if base is not None else None
            if base is None or parent is None:
                break
            track, shared = parent, min(shared, base[1])
            found[track] = shared
        return found

    def _forked_alike(self, other: _Track) -> int:
        """How many leading segments this track and ``other`` are known to share as the same
        objects, from the forks that made them (0: no track both come from)."""
        mine = self._lineage()
        track, shared = other, len(other.segments)
        for _ in range(self.DEPTH + 1):  # ``other``'s lineage, walked only as far as the first track of this one's
            if track in mine:
                return min(shared, mine[track])
            base = track.base
            parent = base[0]() if base is not None else None
            if base is None or parent is None:
                break
            track, shared = parent, min(shared, base[1])
        return 0

    def _offset(self, message: int) -> int:
        """Where message ``message``'s segments start (``len(parts)``: the end of the segments)."""
        j = bisect_left(self.wide, message)
        return len(self.head) + message + (self.spread[j - 1] if j else 0)

    def _add(self, segments: Sequence[str], counts: Sequence[int]) -> None:
        total = self.cumulative[-1] if self.cumulative else 0
        self.segments += segments
        self.cumulative += islice(accumulate(counts, initial=total), 1, None)

    def extend(self, messages: _Messages, start: int, stop: int | None = None) -> None:
        """Add the parts of ``messages.view[start:stop]`` (made in order, added at once; those
        made before a part that fails are added all the same)."""
        made: list[_Part] = []
        try:
            for i in range(start, len(messages.view) if stop is None else stop):
                made.append(messages.part_for(i))
        finally:
            self._add_parts(made)
        self.view = messages.view

    def _add_parts(self, made: list[_Part]) -> None:
        if not made:
            return
        first = len(self.parts)
        segments = list(map(itemgetter(0), made))  # each part's segments
        sizes = list(map(len, segments))
        if sizes.count(1) != len(sizes):  # the few parts of more or fewer segments than one, found at C speed
            for k in compress(count(), map((1).__ne__, sizes)):
                self.wide.append(first + k)
                self.spread.append((self.spread[-1] if self.spread else 0) + sizes[k] - 1)
        self.parts += made
        self._add(list(chain.from_iterable(segments)), list(chain.from_iterable(map(itemgetter(1), made))))

    def _copy(self, source: _Track, start: int, stop: int) -> None:
        """Add ``source``'s messages ``start:stop`` as they are (a C-speed copy; only the few
        messages of more or fewer segments than one are renumbered, and the running sums are
        ``source``'s shifted by where the two tracks' sums stand)."""
        first, last = source._offset(start), source._offset(stop)
        low, high = bisect_left(source.wide, start), bisect_left(source.wide, stop)
        if low < high:
            before = (self.spread[-1] if self.spread else 0) - (source.spread[low - 1] if low else 0)
            self.wide += map((len(self.parts) - start).__add__, source.wide[low:high])
            self.spread += map(before.__add__, source.spread[low:high])
        self.parts += source.parts[start:stop]
        shift = (self.cumulative[-1] if self.cumulative else 0) - (source.cumulative[first - 1] if first else 0)
        self.segments += source.segments[first:last]
        self.cumulative += map(shift.__add__, source.cumulative[first:last]) if shift else source.cumulative[first:last]

    def fork(self, messages: _Messages, kept: int) -> _Track:
        """A new track for ``messages`` (after a replace), whose first ``kept`` messages are this
        track's: they are copied, and so is every later run of this track's message objects
        (what followed the replaced range, :meth:`MessageView.runs_from`); only the messages
        new to it get their parts made."""
        track = _Track.__new__(_Track)
        cut, wide = self._offset(kept), bisect_left(self.wide, kept)
        track.head, track._common, track.view = self.head, WeakKeyDictionary(), ()
        track.base = (ref(self), cut)
        track.segments, track.cumulative = self.segments[:cut], self.cumulative[:cut]
        track.parts, track.wide, track.spread = self.parts[:kept], self.wide[:wide], self.spread[:wide]
        at = kept
        if isinstance(messages.view, MessageView) and messages.runs:
            for start, old_start, length in messages.view.runs_from(self.view):
                if start + length <= kept:
                    continue
                skip = max(kept - start, 0)
                track.extend(messages, at, start + skip)
                track._copy(self, old_start + skip, old_start + length)
                at = start + length
        track.extend(messages, at)
        return track

    def prompt(self, source: str, fallback: Prompt | Callable[[], Prompt] | None) -> Prompt:
        return Prompt(self.segments, source, fallback, self.cumulative, len(self.segments), self)


def _common_from(a: list[str], b: list[str], start: int) -> int:
    """:func:`common_length` of ``a`` and ``b``, whose first ``start`` items are known to be the
    same objects: the item after them is compared first, and usually differs (a fork's first
    segment of its own), so nothing before it is read again."""
    n = min(len(a), len(b))
    if start >= n:
        return n
    if start and a[start] != b[start]:
        return start
    return start + common_length(a[start:], b[start:]) if start else common_length(a, b)


def _same_start(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many leading items ``a`` and ``b`` share as the same objects (found at C speed)."""
    return next(compress(count(), map(is_not, a, b)), min(len(a), len(b)))


def _same(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are one object, or tuples of the same objects (a key made of ids
    is only valid while the objects it names are alive and the same: the owner keeps them)."""
    if a is b:
        return True
    return type(a) is tuple and type(b) is tuple and len(a) == len(b) and all(x is y for x, y in zip(a, b))
