"""Property tests: reconstruction is deterministic and prefix-stable (spec §7.3, §10.2).

Logs come from :func:`dsh_audit.strategies.sessions`; profiles are in conftest.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dsh_audit
from dsh_audit.jsjson import stringify
from dsh_audit.strategies import sessions
from dsh_audit.testing import pack_chunk_runs
from dsh_audit.wire import render

from _properties import examples, folder, identity, replay_file, row, written

RICH = sessions(turns=(1, 3), max_steps=3, retries=2, compactions=2, prunes=2, header_changes=2, resumes=1)


def _steps_closed(events, cut):
    """(turn, step) of every step whose step/end lies before ``cut``."""
    return {(e["data"]["turn"], e["data"]["step"]) for e in events[:cut] if e["type"] == "step/end"}


def _prefix_file(where, session, cut, *, packed):
    events = session.events[:cut]
    records = pack_chunk_runs(events) if packed else events
    path = where / f"prefix-{cut}.jsonl"
    path.write_text("".join(stringify(r) + "\n" for r in [session.header_record, *records]), encoding="utf-8")
    return path


@pytest.mark.slow
@settings(max_examples=examples(25))
@given(RICH)
def test_reconstruction_is_deterministic(session):
    with written(session) as paths:
        first = [row(r) for r in replay_file(paths[0])]
        again = [row(r) for r in replay_file(paths[0])]
        lazily = [row(r) for r in dsh_audit.iter_requests(dsh_audit.load(paths[0]))]
    assert first == again == lazily
    loops = sum(1 for e in session.events if e["type"] == "assistant/chunk" and e["data"]["chunk"]["type"] == "finish")
    assert sum(1 for r in first if '"kind":"loop"' in r) == loops  # one request per attempt


@pytest.mark.slow
@settings(max_examples=examples(25))
@given(RICH, st.data())
def test_any_prefix_gives_the_requests_of_the_whole_log_before_the_cut(session, data):
    events = session.events
    cut = data.draw(st.integers(1, len(events)), label="cut")
    packed = data.draw(st.booleans(), label="packed")
    with folder() as where:
        whole = replay_file(session.write(where))
        got = replay_file(_prefix_file(where, session, cut, packed=packed))
    expected = [r for r in whole if r.first_chunk_seq < cut]
    assert [identity(r) for r in got] == [identity(r) for r in expected]
    closed = _steps_closed(events, cut)
    for mine, theirs in zip(got, expected):
        if mine.kind != "loop" or (mine.turn, mine.step) in closed:  # modulo the last open step
            assert row(mine) == row(theirs)


@pytest.mark.slow
@settings(max_examples=examples(3, full=8))
@given(sessions(turns=(2, 3), retries=1, compactions=1, prunes=1, header_changes=1, resumes=1))
def test_every_prefix_folds_consistently(session):
    events = session.events
    with folder() as where:
        whole = replay_file(session.write(where))
        for cut in range(1, len(events) + 1):
            got = replay_file(_prefix_file(where, session, cut, packed=True))
            assert [identity(r) for r in got] == [identity(r) for r in whole if r.first_chunk_seq < cut], cut


@pytest.mark.slow
@settings(max_examples=examples(25))
@given(RICH, st.integers(1, 7), st.booleans())
def test_folding_in_chunks_gives_the_same_requests(session, frame_size, packed):
    with folder() as where:
        whole = [row(r) for r in replay_file(session.write(where / "a", packed=True))]
        framed = [row(r) for r in replay_file(session.write(where / "b", compressed=True, packed=packed,
                                                             frames=frame_size))]
        plain = [row(r) for r in replay_file(session.write(where / "c", packed=not packed))]
    assert framed == whole == plain


def _window(events, low, high):
    return events[low + 1:high]


def _message_array(body):
    start = body.index(b',"messages":[') + len(b',"messages":[')
    end = body.index(b'],"stream":true')
    return body[:start], body[start:end], body[end:]


@pytest.mark.slow
@settings(max_examples=examples(25))
@given(RICH)
def test_loop_requests_extend_each_other_between_header_changes_and_replaces(session):
    events = session.events
    with written(session) as paths:
        requests = replay_file(paths[0])
    loops = sorted((r for r in requests if r.kind == "loop"), key=lambda r: r.first_chunk_seq)
    cache: dict = {}
    for prev, cur in zip(loops, loops[1:]):
        window = _window(events, prev.first_chunk_seq, cur.first_chunk_seq)
        replaced = any(isinstance(e.get("surfaceOp"), dict) for e in window)
        header = any(e["type"] == "request/header" for e in window)
        retry = cur.step_start_seq == prev.step_start_seq
        if not replaced:  # messages extend across header changes too
            n = len(prev.messages)
            assert [stringify(m) for m in cur.messages[:n]] == [stringify(m) for m in prev.messages]
            assert list(cur.message_seqs[:n]) == list(prev.message_seqs)
            assert len(cur.messages) == n if retry else len(cur.messages) > n
        if replaced or header:
            continue
        head_p, array_p, tail_p = _message_array(render(prev, renderer_cache=cache).body)
        head_c, array_c, tail_c = _message_array(render(cur, renderer_cache=cache).body)
        assert (head_c, tail_c) == (head_p, tail_p)
        assert array_c == array_p if retry else array_c.startswith(array_p + b",")
