"""Prefix relations between two prompts from per-message digests.

Deciding whether request B extends request A must not re-serialise A's whole history for every
pair. Replay shares message objects between requests, and a log seq names one immutable event, so
the common prefix is found by identity or seq first; only a message that differs by both is
serialised (``JSON.stringify``, cached per object) and hashed. Byte offsets are computed only for
a break, from the cached fragment lengths.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import chain, compress
from operator import itemgetter, not_
from typing import TYPE_CHECKING, Any

from .._lazy import LazyModule
from .._seq import common_length
from ..jsjson import stringify
from ..replay import MessageView

if TYPE_CHECKING:
    from .. import wire
    from ..wire import PromptPieces
else:
    wire = LazyModule("dsh_audit.wire")  # loaded by the first break whose bodies are compared

__all__ = ["MessageDigests", "common_prefix", "lcp_bytes", "messages_offset", "pieces_offset"]


class MessageDigests:
    """``JSON.stringify`` digest and UTF-8 length of each message object, computed once.

    Keyed by object identity; the cache holds a reference to each object so an id is never reused
    while the cache lives.

    :meth:`keep_only` follows the held lists from call to call by what changed in them (a
    replace's runs, :meth:`~dsh_audit.replay.MessageView.runs_from`): how many times they hold
    each object, and which objects they let go of since the last drop. Only those and the digests
    taken since are then looked at, not the whole history.
    """

    # Bounded by the bytes of the messages it keeps alive, so that a whole-session walk over a
    # long log does not keep every message alive (nor a few huge tool results hundreds of
    # megabytes); an evicted message is only serialised again if it is compared again. A streamed
    # walk also keeps only the messages of the requests it still holds (:meth:`keep_only`).
    LIMIT = 16_000_000

    def __init__(self) -> None:
        self._cache: dict[int, tuple[Any, bytes, int]] = {}
        self._bytes = 0
        self._added = False  # an entry came in since the last keep_only
        self._held: list[Sequence[Any]] = []  # the lists of the last keep_only
        self._holds: Counter[int] | None = None  # id -> times the held lists hold it (None: not followed)
        self._whole = True  # the next drop compares every digest with the held lists
        self._fresh: list[int] = []  # ids digested since the last drop (while followed)
        self._left: list[int] = []  # ids the held lists let go of since the last drop

    def __len__(self) -> int:
        return len(self._cache)

    @property
    def size(self) -> int:
        """UTF-8 bytes of the serialised messages held."""
        return self._bytes

    def keep_only(self, held: Iterable[Sequence[Any]]) -> None:
        """Drop the digests of every message but those of the ``held`` message lists (a streamed
        walk's: what its next comparisons can still read; anything else is serialised again if it
        ever comes back). Nothing is scanned when no digest was taken since the last call: what
        is left then is at most the previous held lists' messages.

        When each held list is the last call's or a view that shares its start with it, only what
        changed is read (what a replace took out and put in, what was appended); otherwise every
        held message is, as it is when the lists are not views."""
        lists = list(held)
        followed = self._follow(lists)
        if not self._added:
            return
        self._added = False
        cache = self._cache
        if followed and not self._whole and self._holds is not None:
            holds = self._holds
            gone: Iterable[int] = {key for key in chain(self._fresh, self._left) if key in cache and key not in holds}
        else:
            gone = cache.keys() - set(map(id, chain.from_iterable(lists)))  # set passes at C speed
        self._whole = not followed
        self._fresh, self._left = [], []
        for key in gone:
            self._bytes -= cache.pop(key)[2]

    def _follow(self, lists: list[Sequence[Any]]) -> bool:
        """Bring the hold counts from the last call's lists to ``lists``; False when they are not
        followed (the next drop then compares every digest)."""
        prior, self._held, holds = self._held, lists, self._holds
        if holds is not None and len(prior) == len(lists) and len(self._left) <= len(holds):
            for new, old in zip(lists, prior):
                if new is old:
                    continue
                if not (isinstance(new, MessageView) and isinstance(old, MessageView)):
                    break  # a list that is not a view: counted again
                shared = new.common_items(old)
                if shared == len(old):  # grown: only the appended items are new
                    holds.update(map(id, new[shared:]))
                elif shared:
                    self._move(holds, old, new)
                else:
                    break  # another conversation, or a replace at its start: counted again
            else:
                return True
        self._whole = True
        if not all(isinstance(items, MessageView) for items in lists):
            self._holds = None
            return False
        self._holds = Counter(map(id, chain.from_iterable(lists)))  # counted at C speed
        self._fresh, self._left = [], []
        return True

    def _move(self, holds: Counter[int], old: MessageView, new: MessageView) -> None:
        """Count ``new``'s items instead of ``old``'s: only those outside their shared runs."""
        runs = new.runs_from(old)
        at = 0
        for start, _, length in runs:  # put in: new's items outside the runs
            for message in new[at:start]:
                holds[id(message)] += 1
            at = start + length
        for message in new[at:]:
            holds[id(message)] += 1
        at = 0
        for _, old_start, length in sorted(runs, key=itemgetter(1)):  # taken out: old's outside them
            self._take(holds, old[at:old_start])
            at = old_start + length
        self._take(holds, old[at:])

    def _take(self, holds: Counter[int], messages: Iterable[Any]) -> None:
        """Count ``messages`` out; those no held list holds any more are noted as let go of."""
        for message in messages:
            key = id(message)
            holds[key] -= 1
            if holds[key] <= 0:
                del holds[key]
                self._left.append(key)

    def get(self, message: Any) -> tuple[bytes, int]:
        """``(sha256 digest, byte length)`` of ``JSON.stringify(message)``."""
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1], hit[2]
        data = stringify(message).encode("utf-8", "surrogatepass")
        entry = (message, hashlib.sha256(data).digest(), len(data))
        gone = self._cache.pop(id(message), None)  # a dead object's id, reused
        if gone is not None:
            self._bytes -= gone[2]
        while self._cache and self._bytes + entry[2] > self.LIMIT:
            self._bytes -= self._cache.pop(next(iter(self._cache)))[2]
        self._cache[id(message)] = entry
        self._bytes += entry[2]
        self._added = True
        if self._holds is not None:
            self._fresh.append(id(message))
            if len(self._fresh) > len(self._cache) + 1024:  # digests taken with no keep_only to drop them
                self._holds, self._held, self._fresh, self._left = None, [], [], []
        return entry[1], entry[2]

    def same(self, a: Any, b: Any) -> bool:
        return a is b or self.get(a)[0] == self.get(b)[0]

    def total_length(self, messages: Sequence[Any]) -> int:
        """The summed byte lengths of ``messages``' serialisations (each as :meth:`get`'s): those
        held are looked up and summed at C speed, so a long shared history costs no Python step per
        message (an entry's object is alive, so its id names no other message); only the others are
        serialised."""
        hits = list(map(self._cache.get, map(id, messages)))
        total: int = sum(map(itemgetter(2), filter(None, hits)))
        if None in hits:
            total += sum(self.get(message)[1] for message in compress(messages, map(not_, hits)))
        return total


def common_prefix(prev: Sequence[Any], cur: Sequence[Any], digests: MessageDigests, *,
                  prev_seqs: Sequence[int] = (), cur_seqs: Sequence[int] = ()) -> int:
    """How many leading messages ``prev`` and ``cur`` share.

    ``prev_seqs``/``cur_seqs`` are the log seqs behind the messages, when both lists come from the
    same log (then an equal seq means an equal message and nothing is serialised).
    """
    n = min(len(prev), len(cur))
    k = 0
    if prev_seqs and cur_seqs and len(prev_seqs) == len(prev) and len(cur_seqs) == len(cur):
        k = common_length(prev_seqs, cur_seqs, n)
        if k == n:
            return n
    while k < n and digests.same(prev[k], cur[k]):
        k += 1
    return k


def lcp_bytes(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of two byte strings."""
    return common_length(a, b)


def _encode(value: Any) -> bytes:
    return stringify(value).encode("utf-8", "surrogatepass")


def messages_offset(prev: Sequence[Any], cur: Sequence[Any], k: int, digests: MessageDigests) -> int:
    """Byte offset of the first difference between ``JSON.stringify(prev)`` and ``(cur)``.

    ``k`` is :func:`common_prefix` of the two lists.
    """
    offset = 1 + digests.total_length(cur[:k]) + k  # "[" then each shared fragment + ","
    if k < len(prev) and k < len(cur):
        return offset + lcp_bytes(_encode(prev[k]), _encode(cur[k]))
    return offset - 1 if k > 0 else 1  # one list ends where the other goes on


def pieces_offset(a: PromptPieces, model_a: Any, b: PromptPieces, model_b: Any) -> int | None:
    """Byte offset where two DeepSeek loop bodies first differ, told from their unjoined pieces
    (``{"model":M,"messages":[`` + system and fragments comma-joined + tail) without joining
    them: the shared fragments count by their UTF-8 sizes, only the two elements where the bodies
    part are compared. None when the pieces cannot tell (a different model or system prompt, a
    fragment that cannot be sent, or a difference past the compared stretch): render the bodies.
    """
    head = '{"model":' + stringify(model_a) + ',"messages":['
    if head != '{"model":' + stringify(model_b) + ',"messages":[' or a.system != b.system:
        return None
    fa, fb, sa, sb = a.fragments, b.fragments, a.sizes, b.sizes
    if len(sa) != len(fa) or len(sb) != len(fb) or min(sa, default=0) < 0 or min(sb, default=0) < 0:
        return None
    shared = common_length(fa, fb)
    lead = 0 if a.system is None else 1  # elements before the fragments
    sizes = [wire.utf8_size(head)] + ([wire.utf8_size(a.system)] if a.system is not None else [])
    if min(sizes) < 0:
        return None
    elements = lead + shared
    offset = sum(sizes) + sum(sa[:shared]) + max(elements - 1, 0)  # commas between the shared elements

    def rest(pieces: PromptPieces) -> bytes:
        total = lead + len(pieces.fragments)
        out = []
        if elements < total:
            out.append(("," if elements else "") + pieces.fragments[shared])
            out.append("," + pieces.fragments[shared + 1] if elements + 1 < total else pieces.tail)
        else:
            out.append(pieces.tail)
        return "".join(out).encode("utf-8")

    ra, rb = rest(a), rest(b)
    common = lcp_bytes(ra, rb)
    return None if common >= min(len(ra), len(rb)) else offset + common
