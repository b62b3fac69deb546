"""seq -> physical line of every event, in memory that grows with the log's lines, not its events."""

from __future__ import annotations

from array import array
from bisect import bisect_right

__all__ = ["EventLines"]

# How the line moves along a run of seqs: one line per event (also a run of one event so far, until
# an event says otherwise), every event on one line (a packed row), or seqs no event was read at (a gap).
_NEXT, _SAME, _GAP = 0, 1, 2


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
        self._kinds = bytearray()  # _NEXT, _SAME or _GAP
        self._next = 0  # the seq after the last run's
        self._sparse: dict[int, int] = {}  # seqs read out of order, and seqs read inside a gap
        # the line at which seq ``_next`` extends the last run (None: no run yet), and whether the
        # run moves one line a seq (1: the common case, which a new run expects) or none (0)
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
        starts, lines, kinds = self._starts, self._lines, self._kinds
        if seq != self._next or not starts:
            if seq < self._next or seq < 0:
                if seq < 0 or self._kind_at(seq) == _GAP:
                    self._sparse[seq] = line  # read inside a gap: the last one read
                return  # a repeated seq: the first line stays
            if seq > self._next:  # a gap (replay's collapsed packed rows leave one after every row)
                starts.append(self._next)
                lines.append(0)
                kinds.append(_GAP)
        else:
            last = len(starts) - 1
            if kinds[last] == _NEXT and seq == starts[last] + 1 and line == lines[last]:
                # a run of one event whose next event is on the same line: a packed row
                kinds[last] = _SAME
                self._next = seq + 1
                self._step = 0
                self._expect = line
                return
        # a new run at seq, of one event so far: taken as moving one line a seq (the common case,
        # which the first test above then extends) until its next event says otherwise
        starts.append(seq)
        lines.append(line)
        kinds.append(_NEXT)
        self._next = seq + 1
        self._step = 1
        self._expect = line + 1

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

    def _kind_at(self, seq: int) -> int:
        at = bisect_right(self._starts, seq) - 1
        return self._kinds[at] if at >= 0 else _GAP
