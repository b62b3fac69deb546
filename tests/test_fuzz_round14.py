"""Fuzz round 14 (docs/hostile-inputs.md): an option that takes a path refuses an empty one, a
usage error naming the option, before any log is read (``--capture ""`` read the current folder,
``validate --sarif ""`` ran the whole check before failing to write)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import chat_log, invoke


@pytest.mark.parametrize(("command", "option"), [
    ("diff", "--capture"), ("redact", "--capture"), ("validate", "--sarif"), ("check", "--junit"),
    ("check", "--baseline"), ("cache", "--prices"), ("check", "--routes")])
def test_an_empty_path_option_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str], command: str, option: str) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-empty")
    monkeypatch.chdir(tmp_path)
    extra = ["-o", "out.jsonl", "--salt", "x"] if command == "redact" else []
    code, out, err = invoke(monkeypatch, capsys, command, str(log), *extra, option, "")
    assert (code, out, err) == (2, "", [f"error: Invalid value for '{option}': empty path (name a file or folder) "
                                        f"(hint: see `dsh-audit {command} --help`)"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s"]  # nothing written


def test_an_empty_variable_is_unset_not_an_empty_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-empty")
    monkeypatch.setenv("DSH_AUDIT_CACHE_PRICES", "")  # click reads an empty variable as not set
    code, _, err = invoke(monkeypatch, capsys, "cache", str(log))
    assert (code, err) == (0, [])
