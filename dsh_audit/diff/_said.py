"""The one line that says the same of several requests: ``6 requests: #0, #1, ... are unrendered:
...``, as ``diff`` says it under its table and ``check`` of a log's findings that say it alike.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._listing import listed

__all__ = ["LISTED", "captures_said", "requests_said"]

#: The most request numbers a line lists; the rest are counted.
LISTED = 20


def requests_said(indexes: Sequence[int], said: str, *, linked: bool = True) -> str:
    """What is ``said`` of the requests ``indexes`` (their numbers as ``dsh-audit requests`` gives
    them), in one line; past :data:`LISTED` numbers, the rest are counted. ``said`` follows "is" or
    "are" (``linked``: a state, "unrendered"), else stands as the verb ("cannot be rendered at ...").

    Example:
        >>> requests_said([1, 3], "unrendered: no facts")
        '2 requests: #1, #3 are unrendered: no facts'
        >>> requests_said([4], "unrendered: no facts")
        'request #4 is unrendered: no facts'
        >>> requests_said(range(22), "unrendered").endswith("#19 and 2 more are unrendered")
        True
        >>> requests_said([0], "cannot be rendered at seq 12", linked=False)
        'request #0 cannot be rendered at seq 12'
    """
    return _said_of([f"#{i}" for i in indexes], "request", said, linked=linked)


def captures_said(positions: Sequence[int], said: str) -> str:
    """What is ``said`` of the captured requests at ``positions`` (their place in the capture, as
    ``diff``'s "capture" column gives it), in one line, as :func:`requests_said` says it of requests.

    Example:
        >>> captures_said([0, 2], "foreign: session s-b is not among the logs given")
        '2 captures: 0, 2 are foreign: session s-b is not among the logs given'
        >>> captures_said([5], "not an LLM call (kind other)")
        'capture 5 is not an LLM call (kind other)'
    """
    return _said_of([str(p) for p in positions], "capture", said, linked=True)


def _said_of(labels: Sequence[str], noun: str, said: str, *, linked: bool) -> str:
    """``said`` of the things ``labels`` names (each a ``noun``): one by its label, several counted."""
    if len(labels) == 1:
        return f"{noun} {labels[0]} {'is ' if linked else ''}{said}"
    return f"{len(labels)} {noun}s: {listed(labels, shown=LISTED)} {'are ' if linked else ''}{said}"
