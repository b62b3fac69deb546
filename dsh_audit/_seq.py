"""How long a prefix two sequences share: the one binary search on slices every layer uses.

Slices compare at C speed, and shared entries are usually the same objects (compared by identity
first), so finding where two long histories, prompts or bodies part costs O(n) in C and O(log n)
Python steps, never a walk item by item.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["common_length"]


def common_length(a: Sequence[Any], b: Sequence[Any], limit: int | None = None) -> int:
    """How many leading items (characters, bytes) ``a`` and ``b`` share, at most ``limit``.

    When ``a`` has a ``shared_prefix(b)`` method (:class:`dsh_audit.replay.MessageView`: two
    views of one growing list), the items it vouches for are not compared again: two requests
    of one fold generation share their history in O(1).

    Example:
        >>> common_length("prefix-a", "prefix-b"), common_length(b"ab", b"abc"), common_length([1, 2], (1, 3))
        (7, 2, 1)
    """
    n = min(len(a), len(b)) if limit is None else min(limit, len(a), len(b))
    known = getattr(a, "shared_prefix", None)  # a view that knows what it shares without comparing
    lo = min(known(b), n) if known is not None else 0
    if lo == n:
        return n
    if type(a[:0]) is not type(b[:0]):  # a list and a tuple never compare equal: compare as tuples
        a, b = tuple(a[lo:n]), tuple(b[lo:n])
        return lo + common_length(a, b)
    if a[lo:n] == b[lo:n]:
        return n
    hi = n  # the first lo are shared, the first hi are not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo
