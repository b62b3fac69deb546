"""The one line that says the same of several requests: ``6 requests: #0, #1, ... are unrendered:
...``, as ``diff`` says it under its table and ``check`` of a log's findings that say it alike.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["LISTED", "requests_said"]

#: The most request numbers a line lists; the rest are counted.
LISTED = 20


def requests_said(indexes: Sequence[int], said: str) -> str:
    """What is ``said`` of the requests ``indexes`` (their numbers as ``dsh-audit requests`` gives
    them), in one line; past :data:`LISTED` numbers, the rest are counted.

    Example:
        >>> requests_said([1, 3], "unrendered: no facts")
        '2 requests: #1, #3 are unrendered: no facts'
        >>> requests_said([4], "unrendered: no facts")
        'request #4 is unrendered: no facts'
        >>> requests_said(range(22), "unrendered").endswith("#19 and 2 more are unrendered")
        True
    """
    if len(indexes) == 1:
        return f"request #{indexes[0]} is {said}"
    numbers = [f"#{i}" for i in indexes[:LISTED]]
    more = len(indexes) - len(numbers)
    listed = ", ".join(numbers) + (f" and {more} more" if more else "")
    return f"{len(indexes)} requests: {listed} are {said}"
