"""Fuzz round 17 (issue 15, /tmp/fuzz17.md D8): a Codex rollout none of whose lines is JSON was
called a corrupt DSH log; the error says also that no importer recognises it."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import invoke

NAME = "rollout-2026-01-05T10-00-00-x.jsonl"


@pytest.mark.parametrize("args", [["sessions"], ["requests"], ["cache"], ["show", "0"], ["render", "0"]])
def test_a_file_no_reader_recognises_says_which_were_tried(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str], args: list[str]) -> None:
    (tmp_path / NAME).write_text('{"timestamp": NaN, "type": "session_meta"}\n{"timestamp": NaN}\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, args[0], NAME, *args[1:]) == (2, "", [
        f"error: {NAME}:1: corrupt session log: header line is not valid JSON (hint: this is not a DSH session log, "
        "or its first line is damaged; nor is it a session the claude-code or codex importer recognises)"])
