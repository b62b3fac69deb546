"""``report`` on a folder where DSH refuses one log (its header): the page is written with that log's
error entry, the error is printed as every describing command prints it, and the exit code is 1, as
check's for that DSH801 (README "Exit codes", session 46: 2 is for a log that cannot be opened or
read at all, ``tests/test_exit46.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _cli import chat_log, invoke

REFUSAL = ("corrupt session log: first line is not a session header: no version; no string id; no createdAt; "
           "no delegationDepth (hint: the header needs type \"session\", "
           "version, id, createdAt and delegationDepth (v2+: isSeeded); --lenient fills a missing v0 "
           "version/delegationDepth)")


def test_a_log_dsh_refuses_is_printed_and_exits_1_beside_the_written_page(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    chat_log(tmp_path / "logs" / "good" / "session.jsonl", "session-good")
    bad = tmp_path / "logs" / "bad" / "session.jsonl"
    bad.parent.mkdir()
    bad.write_text('{"type":"session","garbage":1}\n', encoding="utf-8")
    page = tmp_path / "page.html"
    code, out, err = invoke(monkeypatch, capsys, "report", str(tmp_path / "logs"), "-o", str(page))
    assert (code, err) == (1, [f"error: {bad}:1: {REFUSAL}"])
    assert out.startswith(f"wrote {page}: 2 log(s), 1 request(s), ")
    assert "session-good" in page.read_text(encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "report", str(tmp_path / "logs" / "good"), "-o", str(page))
    assert (code, err) == (0, [])
