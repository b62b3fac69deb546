"""What a worker process returns is pickled: a session whose history was replaced (a compaction,
a prune) keeps the replaced list's lineage as a weak reference, which does not pickle. A regression
test for ``check --jobs 2`` failing with "cannot pickle 'weakref.ReferenceType' object" on every
folder holding a compacted session beside its capture."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

import pytest

from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder

from _cli import invoke

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")


def _chat_turn(b: LogBuilder, prompt: str) -> None:
    with b.turn(prompt):
        with b.step():
            b.assistant("Sure.")


def test_requests_after_a_compaction_pickle_and_keep_their_messages(tmp_path: Path) -> None:
    b = LogBuilder(session_id="s-pickle")
    _chat_turn(b, "one")
    _chat_turn(b, "two")
    b.start_turn("three")
    b.compaction("summary", keep=1)
    with b.step():
        b.assistant("Done.")
    b.end_turn()
    requests = open_session(b.write_jsonl(tmp_path / "session.jsonl")).requests
    back = pickle.loads(pickle.dumps(requests))
    assert [list(r.messages) for r in back] == [list(r.messages) for r in requests]
    assert len(back) == len(requests) >= 4


@needs_corpus
def test_check_with_jobs_equals_a_serial_run_on_a_compacted_session_and_its_capture(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for scenario in ("e-compaction", "a-chat"):
        shutil.copytree(CORPUS / "live" / scenario / "session-logs", tmp_path / scenario)
    shutil.copy(CORPUS / "live" / "e-compaction" / "wire.jsonl", tmp_path / "e-compaction")
    serial = invoke(monkeypatch, capsys, "check", str(tmp_path))
    assert serial[0] == 0 and serial[1].endswith("PASSED: 2 log(s), 12 request(s), 0 error(s), 0 warning(s), "
                                                 "1 info, 0 failing (policy: defaults)\n"), serial
    assert invoke(monkeypatch, capsys, "check", str(tmp_path), "--jobs", "2") == serial
