"""Prefix relations between two prompts from per-message digests.

Deciding whether request B extends request A must not re-serialise A's whole history for every
pair. Replay shares message objects between requests, and a log seq names one immutable event, so
the common prefix is found by identity or seq first; only a message that differs by both is
serialised (``JSON.stringify``, cached per object) and hashed. Byte offsets are computed only for
a break, from the cached fragment lengths.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from ..jsjson import stringify

__all__ = ["MessageDigests", "common_prefix", "lcp_bytes", "messages_offset"]


class MessageDigests:
    """``JSON.stringify`` digest and UTF-8 length of each message object, computed once.

    Keyed by object identity; the cache holds a reference to each object so an id is never reused
    while the cache lives.
    """

    # Bounded so that a streaming walk over a long log does not keep every message alive; an
    # evicted message is only serialised again if it is compared again.
    LIMIT = 8192

    def __init__(self) -> None:
        self._cache: dict[int, tuple[Any, bytes, int]] = {}

    def get(self, message: Any) -> tuple[bytes, int]:
        """``(sha256 digest, byte length)`` of ``JSON.stringify(message)``."""
        hit = self._cache.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1], hit[2]
        data = stringify(message).encode("utf-8", "surrogatepass")
        entry = (message, hashlib.sha256(data).digest(), len(data))
        if len(self._cache) >= self.LIMIT:
            del self._cache[next(iter(self._cache))]
        self._cache[id(message)] = entry
        return entry[1], entry[2]

    def same(self, a: Any, b: Any) -> bool:
        return a is b or self.get(a)[0] == self.get(b)[0]


def common_prefix(prev: Sequence[Any], cur: Sequence[Any], digests: MessageDigests, *,
                  prev_seqs: Sequence[int] = (), cur_seqs: Sequence[int] = ()) -> int:
    """How many leading messages ``prev`` and ``cur`` share.

    ``prev_seqs``/``cur_seqs`` are the log seqs behind the messages, when both lists come from the
    same log (then an equal seq means an equal message and nothing is serialised).
    """
    n = min(len(prev), len(cur))
    k = 0
    if prev_seqs and cur_seqs and len(prev_seqs) == len(prev) and len(cur_seqs) == len(cur):
        if tuple(cur_seqs[:n]) == tuple(prev_seqs[:n]):
            return n
        while k < n and prev_seqs[k] == cur_seqs[k]:
            k += 1
    while k < n and digests.same(prev[k], cur[k]):
        k += 1
    return k


def lcp_bytes(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of two byte strings (binary search on slices)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _encode(value: Any) -> bytes:
    return stringify(value).encode("utf-8", "surrogatepass")


def messages_offset(prev: Sequence[Any], cur: Sequence[Any], k: int, digests: MessageDigests) -> int:
    """Byte offset of the first difference between ``JSON.stringify(prev)`` and ``(cur)``.

    ``k`` is :func:`common_prefix` of the two lists.
    """
    offset = 1 + sum(digests.get(m)[1] + 1 for m in cur[:k])  # "[" then each shared fragment + ","
    if k < len(prev) and k < len(cur):
        return offset + lcp_bytes(_encode(prev[k]), _encode(cur[k]))
    return offset - 1 if k > 0 else 1  # one list ends where the other goes on
