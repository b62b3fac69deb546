"""The seq -> line map findings cite lines from: the same answers as a plain map, in runs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_audit.session import EventLines


def _plain(pairs: list[tuple[int, int]]) -> dict[int, int]:
    """What the map must answer: a seq's first line, except a seq read inside an earlier gap
    (or a negative one), which keeps the last line it was read at."""
    seen: dict[int, int] = {}
    aside: dict[int, int] = {}
    top = 0  # the seq after the highest one read in order
    for seq, line in pairs:
        if seq < 0 or (seq < top and seq not in seen):
            aside[seq] = line
        elif seq >= top:
            seen[seq] = line
            top = seq + 1
    return {**aside, **seen}


# steps of (seq increase, line increase): one event per line, a packed row, a gap, a repeat
_STEPS = st.lists(st.tuples(st.integers(-4, 6), st.integers(0, 3)), max_size=80)


@settings(max_examples=300, deadline=None)
@given(_STEPS, st.integers(0, 3))
def test_runs_answer_as_a_plain_map(steps: list[tuple[int, int]], first: int) -> None:
    seq, line, pairs = first, 2, []
    for dseq, dline in steps:
        seq, line = seq + dseq, line + dline
        pairs.append((seq, line))
    lines = EventLines()
    for pair in pairs:
        lines.add(*pair)
    expected = _plain(pairs)
    top = max([s for s, _ in pairs], default=0) + 2
    assert {q: lines.get(q) for q in range(-6, top)} == {q: expected.get(q) for q in range(-6, top)}
    assert lines.get(None) is None


def test_a_log_of_packed_rows_is_two_runs_a_row_not_one_entry_an_event() -> None:
    lines = EventLines()
    seq = 0
    for row in range(1000):  # a turn line, then a packed row of 20 chunks on the next line
        lines.add(seq, 2 + 2 * row)
        lines.add(seq + 1, 3 + 2 * row)
        for k in range(2, 21):
            lines.add(seq + k, 3 + 2 * row)
        seq += 21
    assert [lines.get(q) for q in (0, 1, 2, 20, 21, 22, 20999)] == [2, 3, 3, 3, 4, 5, 2001]
    assert lines.runs == 2000


def test_one_event_a_line_is_one_run() -> None:
    lines = EventLines()
    for seq in range(100_000):
        lines.add(seq, seq + 2)
    assert (lines.runs, lines.get(0), lines.get(99_999), lines.get(100_000)) == (1, 2, 100_001, None)


def test_packed_rows_collapsed_by_replay_leave_gaps_that_each_cost_one_run() -> None:
    """Replay collapses a packed row to one event and leaves a gap after it: the gap and the run after
    it are one append each, and the run after a gap goes on line by line (session 46's fast path; the
    same map as before it, checked against the tree before)."""
    lines = EventLines()
    for seq, line in [(0, 2), (1, 3), (5, 4), (6, 5)]:
        lines.add(seq, line)
    assert ([lines.get(seq) for seq in range(-1, 9)], lines.runs) == ([None, 2, 3, None, None, None, 4, 5, None, None],
                                                                       3)
    lines = EventLines()
    for seq, line in [(0, 2), (1, 3), (5, 4), (6, 4), (7, 5), (12, 6), (13, 7), (3, 9)]:  # a same-line run, a late 3
        lines.add(seq, line)
    assert ([lines.get(seq) for seq in range(-1, 15)], lines.runs) == (
        [None, 2, 3, None, 9, None, 4, 4, 5, None, None, None, None, 6, 7, None], 6)
