"""seq -> physical line of every event, in memory that grows with the log's lines, not its events."""

from __future__ import annotations

from array import array
from bisect import bisect_right

__all__ = ["EventLines"]

# How the line moves along a run of seqs: one line per event, every event on one line (a packed
# row), a run of one event so far (either), or seqs no event was read at (a gap).
_NEXT, _SAME, _ONE, _GAP = 0, 1, 2, 3


class EventLines:
    """seq -> physical line of every event, so that findings cite lines without reading the log
    again.

    DSH's seqs run 0, 1, 2, ... and its lines carry one event each or a packed row of many, so
    the map is kept as runs: a run starts at a seq and a line and either moves one line per seq or
    stays on one line. A log of one event per line is one run; a packed row adds at most two.
    A seq read again keeps the line it was first read at; a seq read inside an earlier gap (or a
    negative one) is kept aside, the last line it was read at.

    Example:
        >>> lines = EventLines()
        >>> for seq, line in [(0, 2), (1, 3), (2, 4), (3, 4), (4, 4), (5, 5)]:
        ...     lines.add(seq, line)
        >>> [lines.get(seq) for seq in range(7)], lines.runs
        ([2, 3, 4, 4, 4, 5, None], 3)
    """

    def __init__(self) -> None:
        self._starts = array("q")  # each run's first seq
        self._lines = array("q")  # the line of its first seq
        self._kinds = bytearray()  # _NEXT, _SAME, _ONE or _GAP
        self._next = 0  # the seq after the last run's
        self._sparse: dict[int, int] = {}  # seqs read out of order, and seqs read inside a gap
        # the line at which seq ``_next`` extends the last run (None: the run is of one event so far,
        # or a gap), and whether the run moves one line a seq: the common case, decided at once
        self._expect: int | None = None
        self._step = 0

    @property
    def runs(self) -> int:
        """How many runs the map holds (its size)."""
        return len(self._starts)

    def add(self, seq: int, line: int) -> None:
        if line == self._expect and seq == self._next:  # the last run goes on
            self._next = seq + 1
            self._expect = line + self._step
            return
        if seq != self._next or not self._starts:
            if seq < self._next or seq < 0:
                if seq < 0 or self._kind_at(seq) == _GAP:
                    self._sparse[seq] = line  # read inside a gap: the last one read
                return  # a repeated seq: the first line stays
            if seq > self._next:
                self._start(self._next, 0, _GAP)
            self._start(seq, line, _ONE)
            return
        last = len(self._starts) - 1
        kind, first = self._kinds[last], self._lines[last]
        if kind == _ONE and line in (first, first + 1):
            self._kinds[last] = _SAME if line == first else _NEXT
            self._step = line - first
            self._expect = line + self._step
        elif not ((kind == _SAME and line == first)
                  or (kind == _NEXT and line == first + (seq - self._starts[last]))):
            self._start(seq, line, _ONE)
            return
        self._next = seq + 1

    def get(self, seq: int | None) -> int | None:
        if seq is None:
            return None
        at = bisect_right(self._starts, seq) - 1
        if at < 0 or seq >= self._next:
            return self._sparse.get(seq)
        kind = self._kinds[at]
        if kind == _GAP:
            return self._sparse.get(seq)
        return self._lines[at] + (seq - self._starts[at] if kind == _NEXT else 0)

    def _start(self, seq: int, line: int, kind: int) -> None:
        self._starts.append(seq)
        self._lines.append(line)
        self._kinds.append(kind)
        self._next = seq + 1
        self._expect = None  # a new run is of one event, or a gap

    def _kind_at(self, seq: int) -> int:
        at = bisect_right(self._starts, seq) - 1
        return self._kinds[at] if at >= 0 else _GAP
