"""Fuzz round 17 (issue 15, /tmp/fuzz17.md D8): ``sessions`` said a log's path twice before its own
warnings (an importer's skipped line, a DSH log's torn tail), which name it already."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import chat_log, invoke

CLAUDE_CODE = Path(__file__).parent / "data" / "importers" / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"


def test_an_imported_logs_skipped_line_is_said_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    first, *rest = CLAUDE_CODE.read_text("utf-8").splitlines()
    (tmp_path / "cc.jsonl").write_text("\n".join([first, "{not json", *rest]) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, "sessions", "--format", "csv", "cc.jsonl")
    assert (code, err) == (0, ["warning: cc.jsonl:2: not JSON, skipped"])


def test_a_torn_tail_is_said_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "t.jsonl", "s-torn")
    log.write_bytes(log.read_bytes()[:-1])
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, "sessions", "--format", "csv", "t.jsonl")
    assert (code, err) == (0, ["warning: t.jsonl: torn tail: line 16 has no terminating newline (97 bytes ignored)"])
