"""When each request was sent and answered: the times replay read from the log in its one pass.

A loop attempt is taken as sent at the time of the last event before its first chunk (the
header, context or message events DSH flushes just before dispatch, spec §7.2) and answered at its
``finish`` chunk. A compaction call is sent after the event before its ``compaction/summary`` and
answered at the summary; a title call at its ``session/title-llm-request`` event. Replay records
these on each :class:`~dsh_audit.replay.Request` (``time``); this module only maps them.
"""

from __future__ import annotations

from collections.abc import Iterable

from ..replay import Request, RequestTime

__all__ = ["RequestTime", "request_times"]


def request_times(requests: Iterable[Request]) -> dict[int, RequestTime]:
    """Map each request index to its :class:`RequestTime` (requests whose times are unknown omitted).

    Example:
        >>> request_times([])
        {}
    """
    return {r.index: r.time for r in requests if r.time is not None}
