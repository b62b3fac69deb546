"""How a message shows a list of seqs: whole when short, its ends and length when long.

A DSH310 finding compares the seqs an ``assistant/message`` cites with its attempt's chunks; when
both abbreviate to the same text, :func:`difference` says what the abbreviation hides.
"""

from __future__ import annotations

from typing import Any

from .._show import shown

__all__ = ["difference", "span"]


def span(seqs: Any) -> str:
    if _long(seqs):
        return f"[{seqs[0]}..{seqs[-1]}] ({len(seqs)})"
    return shown(seqs)


def _long(seqs: Any) -> bool:
    """Whether :func:`span` abbreviates ``seqs`` (more than four integers) to its ends and length."""
    return isinstance(seqs, list) and len(seqs) > 4 and all(type(s) is int for s in seqs)


def _first(seqs: list[int], few: int = 5) -> str:
    more = f" (+{len(seqs) - few} more)" if len(seqs) > few else ""
    return ", ".join(str(s) for s in seqs[:few]) + more


def difference(cited: Any, chunks: list[int]) -> str:
    """What two abbreviated :func:`span` texts with the same ends hide (``[7..21] (15)`` against
    ``[7..21] (14)``): the cited seqs that are not chunks, the chunks not cited (the first few of
    each), or that the same seqs come in another order or repeat. Empty when the spans show the
    difference (different ends, or a list short enough to be shown whole).

    Example:
        >>> difference([7, 8, 9, 10, 12, 11], [7, 8, 9, 10, 11])
        ': 12 is not a chunk of the attempt'
        >>> difference([7, 8, 9, 10, 11, 13], [7, 8, 9, 10, 11, 12, 13])
        ': chunk 12 is not cited'
        >>> difference([7, 9, 8, 10, 11], [7, 8, 9, 10, 11]), difference([7, 8, 9, 10, 11], [8, 9, 10, 11, 12])
        (': the same seqs in another order', '')
    """
    if not (_long(cited) and _long(chunks) and cited[0] == chunks[0] and cited[-1] == chunks[-1]):
        return ""
    mine, theirs = set(cited), set(chunks)
    extra = [s for s in cited if s not in theirs]
    missing = [s for s in chunks if s not in mine]
    parts = []
    if extra:
        parts.append(f"{_first(extra)} {'is not a chunk' if len(extra) == 1 else 'are not chunks'} of the attempt")
    if missing:
        parts.append(f"{'chunk' if len(missing) == 1 else 'chunks'} {_first(missing)} "
                     f"{'is' if len(missing) == 1 else 'are'} not cited")
    if not parts:
        parts.append("the same seqs in another order" if len(cited) == len(mine) else "a seq is cited twice")
    return ": " + "; ".join(parts)
