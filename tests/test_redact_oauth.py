"""Redacting a session whose capture was sent with an Anthropic OAuth key (issue 12).

The capture's bodies carry pi-ai's Claude Code identity block, a constant no log holds: ``redact``
renders each request for the capture's key type, as ``diff`` does, so the block stays itself and the
redacted copy keeps its verdicts (``tests/data/piai_oracle/oauth``: pi-ai 0.82.1's own requests).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import invoke
from test_capture_oauth import _write

IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude."


def test_an_oauth_capture_redacts_with_its_verdicts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    log, wire, _ = _write(tmp_path)
    out = tmp_path / "out"
    code, _, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--capture", str(wire))
    assert code == 0, err
    records = (tmp_path / "out.wire.jsonl").read_text("utf-8").splitlines()
    bodies = [json.loads(json.loads(line)["body"]) for line in records]
    assert [b["system"][0]["text"] for b in bodies] == [IDENTITY] * 5
    assert all(b["system"][1]["text"] != "You are a helpful coding agent." for b in bodies)
    code, out_text, _ = invoke(monkeypatch, capsys, "diff", str(out), "--capture", str(tmp_path / "out.wire.jsonl"),
                               "--json")
    rows = [json.loads(line) for line in out_text.splitlines() if line.startswith("{")]
    assert code == 0
    assert [(r["index"], r["verdict"]) for r in rows if r["kind"] == "loop"] == [
        (i, "identical") for i in (0, 1, 2, 4, 6)]
