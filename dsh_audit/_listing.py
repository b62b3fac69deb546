"""How a message names some of many things: the first few, and how many more (a folder may hold
hundreds of logs, a note names a handful): one wording, written once, for every layer.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["listed"]


def listed(items: Sequence[str], *, shown: int = 3) -> str:
    """The first ``shown`` of ``items``, comma-separated, then ``and K more`` for the rest (nothing
    more when all are shown); the caller quotes or formats each item first.

    Example:
        >>> listed(["a", "b", "c", "d", "e"]), listed(["a", "b"]), listed(["x.jsonl", "y.jsonl"], shown=1)
        ('a, b, c and 2 more', 'a, b', 'x.jsonl and 1 more')
    """
    more = len(items) - shown
    return ", ".join(items[:shown]) + (f" and {more} more" if more > 0 else "")
