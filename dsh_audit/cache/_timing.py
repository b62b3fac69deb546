"""When each request was sent and answered, from the log's event times (milliseconds).

A loop attempt is taken as sent at the time of the last event before its first chunk (the
header, context or message events DSH flushes just before dispatch, spec §7.2) and answered at its
``finish`` chunk. A compaction call is sent after the event before its ``compaction/summary`` and
answered at the summary; a title call at its ``session/title-llm-request`` event.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass

from ..log import Event
from ..replay import Request

__all__ = ["RequestTime", "request_times"]


@dataclass(frozen=True, slots=True)
class RequestTime:
    """Seconds since the epoch; ``done`` is ``None`` when the log holds no answer time."""

    sent: float
    done: float | None


def request_times(events: Iterable[Event], requests: list[Request]) -> dict[int, RequestTime]:
    """Map each request index to its :class:`RequestTime` (requests whose times are unknown omitted).

    Example:
        >>> request_times([], [])
        {}
    """
    wanted: set[int] = set()
    for request in requests:
        wanted.update((request.first_chunk_seq, request.first_chunk_seq - 1))
    times: dict[int, float] = {}
    finishes: dict[tuple[int, int], list[tuple[int, float]]] = {}
    for event in events:
        if event.seq in wanted:
            times[event.seq] = event.time / 1000
        if event.type == "assistant/chunk" and isinstance(event.data, dict):
            chunk = event.data.get("chunk")
            if isinstance(chunk, dict) and chunk.get("type") == "finish":
                key = (event.data.get("turn"), event.data.get("step"))
                if not _plain(key):
                    continue  # a chunk whose turn/step is an array or object matches no request
                finishes.setdefault(key, []).append((event.seq, event.time / 1000))  # type: ignore[arg-type]
    result: dict[int, RequestTime] = {}
    for request in requests:
        first = request.first_chunk_seq
        if request.kind == "title":
            if first in times:
                result[request.index] = RequestTime(times[first], times[first])
            continue
        sent = times.get(first - 1, times.get(first))
        if sent is None:
            continue
        done = times.get(first) if request.kind != "loop" else _finish_after(finishes, request)
        result[request.index] = RequestTime(sent, done)
    return result


def _finish_after(finishes: dict[tuple[int, int], list[tuple[int, float]]], request: Request) -> float | None:
    key = (request.turn, request.step)
    rows = finishes.get(key) if _plain(key) else None  # type: ignore[arg-type]
    if not rows:
        return None
    at = bisect.bisect_left(rows, (request.first_chunk_seq, float("-inf")))
    return rows[at][1] if at < len(rows) else None


def _plain(key: tuple[object, ...]) -> bool:
    """Whether a (turn, step) pair read from the log is made of scalars (so it can be a dict key)."""
    return all(part is None or isinstance(part, (int, float, str)) for part in key)
