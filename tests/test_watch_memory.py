"""What a watch keeps per request stays bounded (issue 16): the streamed attribution drops the
evidence and the message digests no later comparison reads, the token counter's memo keeps a
bounded amount of text, and the route context lent to title and compaction calls is dropped once
they are judged. Counts of retained records, not timings; the streamed transitions still equal
the whole ones."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsh_audit.attribution import MessageDigests, attribute, iter_attribute
from dsh_audit.cache import make_counter
from dsh_audit.session import LogEvidence, RouteEvidence, open_session
from dsh_audit.testing import LogBuilder, ToolCall
from dsh_audit.watch import TailStream, WatchRequest, follow_log


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


@pytest.fixture(autouse=True)
def _own_heap() -> Iterator[None]:
    """Only what a test makes is looked at: every object alive before it is frozen (``gc.freeze``),
    so the collections and ``gc.get_objects`` below walk the test's own objects, not the whole
    heap of a worker that ran hundreds of tests before (about half a second per walk there).
    What conftest.py froze stays frozen after the test."""
    frozen = gc.get_freeze_count() > 0
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
        if frozen:
            gc.freeze()


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
    # not ASCII: the estimate counts ASCII text by its length alone, with no memo entry
    texts = [f"{i:08d} " + "\u00e9" * 991 for i in range(3 * counter.LIMIT // 1000)]
    each = fresh(texts[0])
    assert [counter(t) for t in texts] == [fresh(t) for t in texts] == [each] * len(texts)
    memo = counter._memo  # what the counter keeps alive is the point
    assert sum(map(len, memo)) <= counter.LIMIT
    assert len(memo) == counter.LIMIT // 1000
    assert next(iter(memo)) == texts[-len(memo)]  # the oldest went first
    assert counter("x" * 1000) == 250 and len(memo) == counter.LIMIT // 1000  # ASCII: no entry
    assert counter(texts[0]) == each  # counted again once forgotten


def _new_objects(kind: type, old: list[object]) -> list[object]:
    gc.collect()
    return [o for o in gc.get_objects() if isinstance(o, kind) and not any(o is x for x in old)]


def test_streamed_attribution_keeps_only_the_digests_of_held_messages(tmp_path: Path) -> None:
    b = _long_session("s-digests", 70, titles=(2, 15, 30, 45, 60))
    path = b.write_jsonl(tmp_path / "session.jsonl")
    session = open_session(path)
    whole = attribute(session)
    most = max(len(r.messages) for r in session.requests)  # the longest prompt of the session
    titled = max(len(r.messages) for r in session.requests if r.kind == "title")
    del session
    old = _new_objects(MessageDigests, [])
    kept: list[tuple[int, int]] = []
    streamed = []
    digests: object = None
    for transition in iter_attribute(path):
        streamed.append(transition)
        if digests is None:
            (digests,) = _new_objects(MessageDigests, old)  # the walk's own, kept for the whole log
        assert isinstance(digests, MessageDigests)
        kept.append((len(digests), digests.size))
    assert sorted(streamed, key=lambda t: t.request) == list(whole.transitions)
    assert len(streamed) == 70 * 2 + 70 // 7 + 70 // 10 + 5, len(streamed)
    breaks = [t for t in whole.transitions if t.verdict == "break" and t.relation in ("step", "retry")]
    assert len(breaks) >= 15, len(breaks)  # each digests the whole shared prefix of its request
    # At most the messages of the requests still held (the last loop request, the last title
    # call): 14 entries and 3.9 KB at most here; kept for every request, 116 entries and 37 KB.
    assert 0 < max(n for n, _ in kept) <= most + titled == 42, (max(kept), most, titled)
    assert max(size for _, size in kept) < 10_000, max(kept)


def test_a_followed_log_drops_the_route_context_of_judged_calls(tmp_path: Path) -> None:
    b = _long_session("s-aux", 60, titles=(2, 15, 30, 45))
    path = b.write_jsonl(tmp_path / "session.jsonl")
    whole = open_session(path).routes
    assert len(whole.aux_contexts) == 4 + 6  # a whole session keeps each title and compaction call's
    stop = threading.Event()
    stop.set()  # read what the file holds, then end
    old = _new_objects(RouteEvidence, [])
    kinds: list[str] = []
    held: list[int] = []
    routes: object = None
    for item in follow_log(TailStream(str(path), stop=stop, settle=0.2, poll=0.01)):
        if not isinstance(item, WatchRequest):
            continue
        kinds.append(item.kind)
        if routes is None:
            (routes,) = _new_objects(RouteEvidence, old)  # the followed log's own
        assert isinstance(routes, RouteEvidence)
        assert set(routes.aux_efforts) <= set(routes.aux_contexts)
        held.append(len(routes.aux_contexts))
    assert kinds.count("title") == 4 and kinds.count("compaction") == 6, kinds
    # Once judged, only the last title call's stays (the next title call's transition may render
    # it), besides a call logged but not yet judged: at most 2, never 10; at the end 1.
    assert max(held) == 2 and held[-1] == 1, held
