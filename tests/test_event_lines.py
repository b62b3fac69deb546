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
