"""dsh_audit.strategies itself: argument checks, ground truth, docstring examples, the docs example,
and the generated sample in sample_logs/generated (fresh, strictly readable, valid)."""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis.errors import InvalidArgument

import dsh_audit
import dsh_audit.strategies as strategies
from dsh_audit.attribution import attribute_sessions
from dsh_audit.errors import UsageError
from dsh_audit.session import open_group
from dsh_audit.strategies import (
    InvalidStrategyArgument,
    body_mutations,
    log_mutations,
    mutated_bodies,
    mutated_logs,
    sessions,
)

from _properties import examples, validate_paths, written

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ROOT / "sample_logs" / "generated"


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("call, message", [
    (lambda: sessions(turns=0), r"turns=0: expected min <= max, both 1\.\.50"),
    (lambda: sessions(turns=(3, 2)), r"turns=\(3, 2\): expected min <= max"),
    (lambda: sessions(max_steps=True), r"max_steps=True: expected an int or a \(min, max\) pair"),
    (lambda: sessions(retries=-1), r"retries=-1: expected a count >= 0"),
    (lambda: sessions(retries=True), r"retries=True: expected an int .* not a bool"),
    (lambda: sessions(reasoning="yes"), r"reasoning='yes': expected True or False, or None for 'sometimes'"),
    (lambda: sessions(packed=1), r"packed=1: expected True or False"),
    (lambda: sessions(tools=6), r"tools=6: expected min <= max, both 0\.\.5"),
    (lambda: sessions(turns=1, max_steps=2, compactions=(2, 2)), r"compactions=\(2, 2\): at most 1 fit in 1 turn"),
    (lambda: sessions(tools=0, prunes=(1, 1)), r"prunes=\(1, 1\): pruning needs tool results"),
    (lambda: sessions(turns=2, resumes=(2, 2)), r"resumes=\(2, 2\): resumes happen between turns, at most 1"),
    (lambda: sessions(session_id=""), r"session_id='': expected a non-empty string"),
    (lambda: mutated_logs(kinds=["seq-gapp"]), r"'seq-gapp' is not one \(did you mean 'seq-gap'\?\)"),
    (lambda: mutated_bodies(kinds=[]), r"kinds=\[\]: expected at least one of"),
    (lambda: mutated_bodies(kinds="edit-message"), r"expected a list of names"),
    (lambda: body_mutations(b"[1]"), r"body has no messages array"),
    (lambda: body_mutations(b'{"messages": []}'), r"not in JSON.stringify form"),
    (lambda: body_mutations(b'{"messages":[{"role":"user","content":"x"}]}', kinds=["reorder-tools"]),
     r"none of kinds=\['reorder-tools'\] applies to this body"),
])
def test_arguments_are_checked_when_the_strategy_is_created(call, message):
    with pytest.raises(InvalidStrategyArgument, match=message) as caught:
        call()
    assert isinstance(caught.value, UsageError) and isinstance(caught.value, InvalidArgument)


def test_log_mutations_need_an_applicable_fault():
    from hypothesis import Phase, find

    # The first example drawn is already the simplest one: nothing to shrink (shrinking took 1-2 s).
    plain = find(sessions(turns=1, max_steps=1, compactions=0, prunes=0, header_changes=0, resumes=0, retries=0),
                 lambda s: True, settings=settings(phases=[Phase.generate], max_examples=1))
    with pytest.raises(InvalidStrategyArgument, match=r"none of kinds=\['bad-replace-range'\] applies"):
        log_mutations(plain, kinds=["bad-replace-range"])


@pytest.mark.slow
@settings(max_examples=examples(25))
@given(sessions(turns=(2, 4), compactions=(1, 2), prunes=(1, 2), header_changes=(1, 3), resumes=(1, 2),
                retries=(1, 2), forks=(1, 1), runtime_context=True, reasoning=True))
def test_minimum_counts_are_honoured_and_truth_matches_the_log(session):
    events = session.events
    kinds = [h.kind for h in session.truth]
    assert kinds.count("compaction") >= 1 and kinds.count("prune") >= 1 and kinds.count("retry") >= 1
    assert kinds.count("resume") >= 1 and kinds.count("fork") == 1 and len(session.children) == 1
    headers = [e for e in events if e["type"] == "request/header"]
    assert [(h.seq, h.reason) for h in session.happenings("header")] == [(e["seq"], e["data"]["reason"])
                                                                         for e in headers]
    assert sum(1 for h in session.happenings("header") if h.reason == "change") >= 1 or \
        any(h.fields for h in session.happenings("header") if h.reason == "resume")
    for h in session.happenings("compaction", "prune"):
        assert isinstance(events[h.seq]["surfaceOp"], dict)
    for h in session.happenings("resume"):
        assert events[h.seq]["type"] == "session/end-seed"
    steps = [e for e in events if e["type"] == "step/start"]
    contexts = session.happenings("runtime-context")
    assert len(contexts) == len(steps)
    assert all(events[h.seq]["data"]["source"]["plugin"] == "@deepseek-ai/dsh-system-prompt" for h in contexts)
    assert all(any(b["type"] == "reasoning" for b in e["data"]["message"]["content"])
               for e in events if e["type"] == "assistant/message")


def test_docstring_examples_run():
    failures = 0
    for name in ["dsh_audit.strategies", "dsh_audit.strategies._sessions", "dsh_audit.strategies._log_mutations",
                 "dsh_audit.strategies._wire_mutations"]:
        result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
        assert result.attempted > 0, name
        failures += result.failed
    assert failures == 0


def test_every_public_strategy_documents_an_example():
    for name in strategies.__all__:
        value = getattr(strategies, name)
        if callable(value) and not isinstance(value, type) and name != "log_file_name":
            assert "Example:" in (value.__doc__ or ""), name


def test_docs_example_runs():
    module = _load("docs_example_test_my_dsh_code", ROOT / "docs" / "examples" / "test_my_dsh_code.py")
    tests = [getattr(module, n) for n in dir(module) if n.startswith("test_")]
    assert len(tests) == 2
    for test in tests:
        test()


# -- sample_logs/generated ----------------------------------------------------------------------

SCRIPT = _load("make_strategy_sample", ROOT / "scripts" / "make_strategy_sample.py")


def test_generated_sample_is_what_the_script_writes(tmp_path):
    written_files = SCRIPT.write_sample(tmp_path)
    assert len(written_files) == 3
    fresh = sorted(p.relative_to(tmp_path / "generated") for p in written_files)
    committed = sorted(p.relative_to(GENERATED) for p in GENERATED.rglob("*") if p.is_file())
    assert committed == fresh
    for path in written_files:
        assert (GENERATED / path.relative_to(tmp_path / "generated")).read_bytes() == path.read_bytes(), path


def _sample_paths():
    return sorted(GENERATED.rglob("session.jsonl.zstd"))


def test_generated_sample_reads_strictly_and_has_no_error_finding():
    paths = _sample_paths()
    assert [p.parent.name for p in paths] == ["generated-sample", "generated-sample-fork-1"]
    for path in paths:
        log = dsh_audit.load(path)  # not lenient
        assert dsh_audit.requests(log) and not log.adaptations and not log.warnings
    findings = validate_paths(paths)
    assert [f.format() for f in findings if f.severity == "error"] == []
    assert findings == []


def test_generated_sample_attribution_matches_its_ground_truth():
    session = SCRIPT.draw_sample()
    truth = {(h.kind, h.reason): h for h in session.truth}
    paths = _sample_paths()
    parent, child = attribute_sessions(open_group(paths).sessions)
    rows = [(t.relation, t.verdict, t.cause, t.other_causes) for t in parent.transitions]
    assert rows == [("first", "first", None, ()), ("retry", "cache_safe_change", "retry", ()),
                    ("compaction_call", "extension", None, ()),
                    ("step", "break", "header_change", ("compaction",)), ("resume", "break", "resume", ()),
                    ("step", "extension", None, ())]
    change, compaction = truth[("header", "change")], truth[("compaction", "auto")]
    assert set(change.evidence) | set(compaction.evidence) <= set(parent.transition(3).evidence_seqs)
    assert truth[("prune", None)].detail["sent"] is False  # pruned before it was ever sent: no break of its own
    assert {truth[("resume", None)].seq, truth[("header", "resume")].seq} == set(parent.transition(4).evidence_seqs)
    assert [(t.relation, t.verdict, t.cause) for t in child.transitions] == [("fork", "cache_safe_change", "fork")]
    with written(session, compressed=True) as again:
        assert [p.read_bytes() for p in again] == [p.read_bytes() for p in paths]
