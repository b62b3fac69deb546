"""Session 35's lead fixes: an index is read again when ``$DSH_AUDIT_ADAPTER`` forces another wire
format (its rows were rendered in the old one), as for any other option a record was made with."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from _cli import chat_log, invoke


def _index(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code, out, _ = invoke(monkeypatch, capsys, "index", *args)
    return code, re.sub(r" in \d+\.\d s", " in T s", out.rstrip("\n"))


def test_a_forced_adapter_reindexes_and_the_same_one_does_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "logs" / "session.jsonl", "s-adapter")
    db = tmp_path / "fleet.sqlite"
    monkeypatch.delenv("DSH_AUDIT_ADAPTER", raising=False)
    assert _index(monkeypatch, capsys, str(log), "--db", str(db)) == \
        (0, f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in T s")
    monkeypatch.setenv("DSH_AUDIT_ADAPTER", "openai")
    assert _index(monkeypatch, capsys, str(log), "--db", str(db)) == \
        (0, f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in T s")
    assert _index(monkeypatch, capsys, str(log), "--db", str(db)) == \
        (0, f"{db}: indexed 0, skipped 1 unchanged, of 1 log(s) in T s")
    monkeypatch.setenv("DSH_AUDIT_ADAPTER", "auto")  # each request's own route: the first records' options
    assert _index(monkeypatch, capsys, str(log), "--db", str(db)) == \
        (0, f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in T s")
