"""Two fuzz round 11 defects, fixed (docs/hostile-inputs.md, Round 11): a ``parentSession`` longer
than a file name may be broke every view of the child (``ENAMETOOLONG`` from the parent search,
"this is a dsh-audit bug", exit 2/3), and a log whose session id is "" crashed every command that
pairs a capture (``KeyError``: captures of no session were taken for the session "")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import invoke
from dsh_audit.testing import LogBuilder


def _chat(path: Path, session_id: str) -> Path:
    b = LogBuilder(session_id=session_id)
    with b.turn("Hi"):
        with b.step():
            b.assistant("Hello")
    return b.write_jsonl(path, packed=False)


def test_a_parent_id_longer_than_a_file_name_is_a_parent_not_found(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = _chat(tmp_path / "child.jsonl", "child")
    lines = log.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["parentSession"] = "p" * 300  # the search tries <id>.jsonl beside the child
    log.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    for command in ("breaks", "cache", "check"):
        code, _, err = invoke(monkeypatch, capsys, command, str(log))
        assert code in (0, 1) and not any("bug" in line for line in err), (command, err)


def test_an_empty_session_id_pairs_a_foreign_capture_as_foreign(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = _chat(tmp_path / "session.jsonl", "")
    body = {"model": "deepseek-v4-flash", "messages": [{"role": "user", "content": "Hi"}]}
    wire = tmp_path / "wire.jsonl"
    wire.write_text(json.dumps({"method": "POST", "path": "/chat/completions",
                                "headers": {"x-deepseek-harness-session-id": "session-other"},
                                "body": json.dumps(body)}) + "\n", encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(wire), "--json")
    assert code == 1 and not any("bug" in line for line in err), err
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row.get("verdict") for row in rows] == ["unmatched", "foreign"]
