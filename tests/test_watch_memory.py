"""What a watch keeps per request stays bounded (issue 16): the streamed attribution drops the
evidence no later comparison reads, and the token counter's memo keeps a bounded amount of text.
Counts of retained records, not timings; the streamed transitions still equal the whole ones."""

from __future__ import annotations

import gc
from pathlib import Path

from dsh_audit.attribution import attribute, iter_attribute
from dsh_audit.cache import make_counter
from dsh_audit.session import LogEvidence, open_session
from dsh_audit.testing import LogBuilder, ToolCall


def _long_session(session_id: str, turns: int, *, titles: tuple[int, ...] = ()) -> LogBuilder:
    """A session of ``turns`` tool rounds with a prune every 3 turns, a compaction every 10, a
    retry every 7 and title calls at the ``titles`` turns: every kind of evidence a window holds."""
    b = LogBuilder(session_id=session_id)
    results: list[int] = []
    for turn in range(1, turns + 1):
        b.start_turn(f"task {turn}")
        if turn in titles:
            b.title(f"title {turn}")
        if turn % 10 == 0:
            b.compaction(f"summary {turn}", keep=1)
            results = [s for s in results if s in b.surface]
        elif turn % 3 == 0 and any(s in b.surface for s in results):
            b.prune(next(s for s in results if s in b.surface))
        with b.step():
            if turn % 7 == 0:
                b.retry()
            reply = b.assistant("Reading.", tool_calls=[ToolCall("read", {"path": f"f{turn}.txt"})])
            results.append(b.tool_result(reply.call_ids[0], f"line {turn} " * 40))
        with b.step():
            b.assistant(f"Done {turn}.")
        b.end_turn()
    return b


def _live_evidence(session_id: str) -> list[LogEvidence]:
    gc.collect()
    return [o for o in gc.get_objects() if isinstance(o, LogEvidence) and o.session_id == session_id]


def test_streamed_attribution_keeps_only_the_window_it_still_compares(tmp_path: Path) -> None:
    b = _long_session("s-bounded", 70)
    path = b.write_jsonl(tmp_path / "session.jsonl")
    session = open_session(path)
    logged = len(session.evidence.records)
    whole = attribute(session)
    del session
    total = len(whole.transitions)
    kept: list[int] = []
    streamed = []
    for transition in iter_attribute(path):
        streamed.append(transition)
        if len(streamed) % 50 == 0:
            (evidence,) = _live_evidence("s-bounded")
            kept.append(len(evidence.records))
    assert sorted(streamed, key=lambda t: t.request) == list(whole.transitions)
    assert total == 70 * 2 + 70 // 7 + 70 // 10, total  # two steps a turn, the retries, the compaction calls
    assert len(kept) == total // 50
    # Whole, the log holds hundreds of evidence records; streamed, at most the records since the
    # last loop request's first chunk (a compaction's group, a prune pair, a retry, a header).
    assert logged >= 100 and max(kept) <= 12, (logged, kept)


def test_a_title_call_keeps_its_window_until_the_next_one_and_verdicts_stay_equal(tmp_path: Path) -> None:
    b = _long_session("s-titles", 40, titles=(2, 15, 30))
    path = b.write_jsonl(tmp_path / "session.jsonl")
    whole = attribute(path)
    streamed = sorted(iter_attribute(path), key=lambda t: t.request)
    assert streamed == list(whole.transitions)
    titles = [t for t in whole.transitions if t.kind == "title"]
    assert [t.relation for t in titles] == ["title_call", "title_call", "title_call"]
    assert titles[1].notes and titles[2].notes  # the window's replacements, quoted from far back


def test_token_counter_memo_is_bounded_and_counts_stay_exact() -> None:
    counter = make_counter("deepseek-v4", method="estimate")
    fresh = make_counter("deepseek-v4", method="estimate")
    texts = [f"{i:08d} " + "x" * 991 for i in range(3 * counter.LIMIT // 1000)]
    assert [counter(t) for t in texts] == [fresh(t) for t in texts] == [250] * len(texts)
    memo = counter._memo  # what the counter keeps alive is the point
    assert sum(map(len, memo)) <= counter.LIMIT
    assert len(memo) == counter.LIMIT // 1000
    assert next(iter(memo)) == texts[-len(memo)]  # the oldest went first
    assert counter(texts[0]) == 250  # counted again once forgotten
