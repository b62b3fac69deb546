"""Lead's fixes of session 32: a dsh-audit bug met in one log of many exits 3 (the README's exit
codes), after the other logs are reported."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke

import dsh_audit.cli._requests as requests_cli
from dsh_audit.errors import InternalError
from dsh_audit.runner import SessionTaskError


def test_a_bug_in_one_log_of_two_exits_3_after_the_other_is_listed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = chat_log(tmp_path / "a" / "session.jsonl", "s-good"), chat_log(tmp_path / "b" / "session.jsonl", "s-bad")
    view = requests_cli._session_view

    def broken(path: str, **options: Any) -> Any:
        if path == str(bad):
            raise KeyError("planted")
        return view(path, **options)

    monkeypatch.setattr(requests_cli, "_session_view", broken)
    code, out, err = invoke(monkeypatch, capsys, "requests", "--json", str(good), str(bad))
    assert code == 3
    assert [line.split('"path":')[1].split(",")[0] for line in out.splitlines()] == [f'"{good}"']
    assert len(err) == 1 and err[0].startswith(f"error: {bad}: unexpected KeyError: 'planted'")
    # a log the command refuses is still bad input (2), not a bug
    monkeypatch.setattr(requests_cli, "_session_view", view)
    bad.write_text("not json\n", "utf-8")
    assert invoke(monkeypatch, capsys, "requests", "--json", str(good), str(bad))[0] == 2


def test_a_task_error_is_a_bug() -> None:
    assert issubclass(SessionTaskError, InternalError)
