"""Property tests: every injected fault is detected with its code; clean logs produce no finding.

Faults come from :mod:`dsh_audit.strategies` (``mutated_logs``, ``mutated_bodies``,
``mutated_captures``); each carries the detection it expects (validator rule, load error, diff
change at a JSON path, attribution cause). See docs/property-testing.md for which property fails
when a detection is removed.
"""

from __future__ import annotations

import pytest
from hypothesis import Phase, given, settings

from dsh_audit.attribution import attribute
from dsh_audit.diff import diff_bodies
from dsh_audit.errors import DshAuditError
from dsh_audit.session import open_session
from dsh_audit.strategies import LOG_MUTATIONS, WIRE_MUTATIONS, mutated_bodies, mutated_captures, mutated_logs, sessions
from dsh_audit.wire import render

from _properties import examples, folder, replay_file, validate, validate_paths, written

# Each mutation kind by default: 10 examples (its full count with ``pytest -m slow``). A removed
# detection fails its kind's property at the first example drawn (log, wire and capture faults) or
# within the first 2-5 (attribution): docs/property-testing.md, "Detection removed, property fails".


def _matches(difference, expected):
    path = difference.path
    return difference.change == expected.code and (
        path == expected.where or path.startswith(f"{expected.where}[") or path.startswith(f"{expected.where}."))


@pytest.mark.slow
@pytest.mark.parametrize("kind", LOG_MUTATIONS)
def test_log_mutations_are_caught_by_the_validator_and_the_reader(kind):
    @settings(max_examples=examples(10))
    @given(mutated_logs(kinds=[kind]))
    def check(item):
        with folder() as where:
            path = item.write(where)
            findings = validate(path)
            for expected in item.mutation.expecting("validate"):
                assert (expected.code, expected.where) in {(f.rule, f.seq) for f in findings}, \
                    [f.format() for f in findings]
            for expected in item.mutation.expecting("load"):
                with pytest.raises(DshAuditError) as caught:
                    replay_file(path)
                assert type(caught.value).__name__ == expected.code

    check()


@pytest.mark.slow
@pytest.mark.parametrize("kind", WIRE_MUTATIONS)
def test_wire_mutations_are_caught_by_the_diff(kind):
    @settings(max_examples=examples(10))
    @given(mutated_bodies(kinds=[kind]))
    def check(item):
        result = diff_bodies(item.original, item.body)
        for expected in item.mutation.expecting("diff"):
            if expected.code == "key order":
                assert result.verdict == "equivalent" and result.equivalence == ("key order",)
            else:
                assert result.verdict == "different"
            assert any(_matches(d, expected) for d in result.differences), result.to_json()

    check()


@pytest.mark.slow
@pytest.mark.parametrize("kind", WIRE_MUTATIONS)
def test_mutated_captures_are_unrecorded_mutations(kind):
    @settings(max_examples=examples(10))
    @given(mutated_captures(kinds=[kind]))
    def check(item):
        with written(item.session) as paths:
            result = attribute(open_session(paths[0]), captures=list(item.captures))
        for expected in item.mutation.expecting("attribution"):
            transition = result.transition(expected.where)
            assert transition.cause == expected.code, transition.to_json()
            assert transition.verdict == "break"

    check()


@pytest.mark.slow
@settings(max_examples=examples(25))
@given(sessions(turns=(1, 4), retries=2, compactions=2, prunes=2, header_changes=3, resumes=2, forks=1))
def test_clean_logs_produce_no_finding_anywhere(session):
    with written(session) as paths:
        findings = list(validate_paths(paths))
        assert findings == [], [f.format() for f in findings]
        session = open_session(paths[0])
        requests = session.requests
        bodies = [render(r).body if r.kind != "compaction" else None for r in requests]
        result = attribute(session, captures=bodies)
    assert not [t for t in result.transitions if t.cause in ("unexplained", "unrecorded_mutation")]
    for request, body in zip(requests, bodies):
        if body is not None:
            assert diff_bodies(render(request).body, body).verdict == "identical"


@settings(max_examples=10, phases=[Phase.generate])  # was a strict xfail (DSH602): see docs/property-testing.md
@given(sessions(turns=(2, 3), resumes=(1, 1), forks=(1, 1), compactions=0, prunes=0, header_changes=0))
def test_fork_of_a_resumed_log_is_valid(session):
    with written(session) as paths:
        assert [f.format() for f in validate_paths(paths)] == []
