"""Property tests: every prefix-cache break in a generated log is attributed to the event that made it.

The ground truth is what :func:`dsh_audit.strategies.sessions` generated (``session.truth``), not
what attribution computes: a prompt-affecting header change, a compaction, a prune of a result
that was sent, a resume with a changed header. Each must be the cause (or a further cause) of a
break with its seqs among the evidence; with none of them, there is no break.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from dsh_audit.attribution import attribute_sessions
from dsh_audit.session import open_group
from dsh_audit.strategies import sessions

from _properties import examples, written

GENERATED = sessions(turns=(1, 4), max_steps=3, retries=2, compactions=2, prunes=2, header_changes=3, resumes=2,
                     forks=1)


def _attributed(session):
    with written(session) as paths:
        sessions = open_group(paths).sessions
        results = attribute_sessions(sessions)
    return {a.session_id: (a, {r.index: r for r in s.requests}) for a, s in zip(results, sessions)}


def _expected(session, low, high):
    """seq -> (cause, evidence seqs) of every generated happening that must break the prefix."""
    out = {}
    for h in session.truth:
        if not low < h.seq < high:
            continue
        if h.kind == "header" and h.prompt_affecting:
            out[h.seq] = ("resume" if h.reason == "resume" else "header_change", h.evidence)
        elif h.kind == "compaction" or (h.kind == "prune" and h.detail["sent"]):
            out[h.seq] = (h.kind, h.evidence)
    return out


def _relation(session, prev, cur):
    if cur.step_start_seq == prev.step_start_seq:
        return "retry"
    if any(h.kind == "resume" and prev.first_chunk_seq < h.seq < cur.first_chunk_seq for h in session.truth):
        return "resume"
    return "step"


def _check_loop_pair(session, transition, prev, cur):
    expected = _expected(session, prev.first_chunk_seq, cur.first_chunk_seq)
    relation = _relation(session, prev, cur)
    assert transition.relation == relation
    causes = {transition.cause, *transition.other_causes}
    if expected:
        assert transition.verdict == "break"
        assert transition.cause in {cause for cause, _ in expected.values()}
        for seq, (cause, evidence) in expected.items():
            assert cause in causes, (seq, cause)
            assert set(evidence) <= set(transition.evidence_seqs), (seq, cause)
        return
    assert transition.verdict != "break", transition.detail
    changes = [h for h in session.truth if h.kind == "header" and h.fields
               and prev.first_chunk_seq < h.seq < cur.first_chunk_seq]
    if relation in ("retry", "resume"):
        assert (transition.verdict, transition.cause) == ("cache_safe_change", relation)
    elif changes:
        assert (transition.verdict, transition.cause) == ("cache_safe_change", "header_change")
        assert {h.seq for h in changes} <= set(transition.evidence_seqs)
    else:
        assert (transition.verdict, transition.cause) == ("extension", None)


@pytest.mark.slow
@settings(max_examples=examples(25))
@given(GENERATED)
def test_every_break_is_attributed_to_the_event_that_generated_it(session):
    results = _attributed(session)
    attribution, requests = results[session.session_id]
    loops = sorted((r for r in requests.values() if r.kind == "loop"), key=lambda r: r.first_chunk_seq)
    for prev, cur in zip(loops, loops[1:]):
        _check_loop_pair(session, attribution.transition(cur.index), prev, cur)
    for child in session.children:
        child_attribution, child_requests = results[child.session_id]
        first = min((r for r in child_requests.values() if r.kind == "loop"), key=lambda r: r.first_chunk_seq)
        transition = child_attribution.transition(first.index)
        assert (transition.relation, transition.verdict, transition.cause) == ("fork", "cache_safe_change", "fork")
        assert transition.previous_session_id == session.session_id


@settings(max_examples=25)
@given(sessions(turns=(2, 3), compactions=(1, 2), prunes=1, header_changes=0, resumes=0))
def test_compaction_calls_extend_the_loop_request_before_them(session):
    attribution, requests = _attributed(session)[session.session_id]
    for request in requests.values():
        if request.kind != "compaction":
            continue
        transition = attribution.transition(request.index)
        expected = _expected(session, -1 if transition.previous is None else
                             requests[transition.previous].first_chunk_seq, request.first_chunk_seq)
        # A compaction call resends only its region: a prune breaks it only when the pruned
        # result (its replacement seq) lies inside that region.
        expected = {seq: v for seq, v in expected.items() if v[0] == "prune" and seq in request.message_seqs}
        if expected:
            assert (transition.verdict, transition.cause) == ("break", "prune")
        else:
            assert transition.verdict in ("first", "extension"), transition.detail
