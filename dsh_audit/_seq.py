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

    Example:
        >>> common_length("prefix-a", "prefix-b"), common_length(b"ab", b"abc"), common_length([1, 2], (1, 3))
        (7, 2, 1)
    """
    n = min(len(a), len(b)) if limit is None else min(limit, len(a), len(b))
    if type(a[:0]) is not type(b[:0]):  # a list and a tuple never compare equal: compare as tuples
        a, b = tuple(a[:n]), tuple(b[:n])
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # the first lo are shared, the first hi are not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo
