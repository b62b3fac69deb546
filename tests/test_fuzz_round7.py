"""Fuzz round 7 (the code that landed the same day: the attachment store, route files from the DSH
home, the ZDR status, GPT-5.6 breakpoints): the defects it found, each a one-line error or a
correct result now (docs/hostile-inputs.md, "Round 7").

- a ``$DSH_HOME`` (or ``--attachments``) whose attachment store cannot be looked at (no permission,
  a name too long) made every command fail on every log as a "dsh-audit bug", images or not;
- a model id with thousands of digits after ``gpt-`` was a "dsh-audit bug" (Python's digit limit),
  and full-width digits (``gpt-５.６``) read as GPT-5.6 (both: ``dsh_audit.cache._rules`` doctest);
- a huge ``pyproject.toml`` was read whole by ``check`` and ``report`` (8 GB for a 4 GiB file);
- a blank ``$DSH_AUDIT_ATTACHMENTS`` was a path, and its error did not name the variable.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from _cli import chat_log, invoke


def _long(tmp_path: Path) -> Path:
    return tmp_path / ("L" * 300)  # one name past NAME_MAX: looking at it raises ENAMETOOLONG


@pytest.mark.parametrize("command", ["requests", "cache", "check"])
def test_a_dsh_home_whose_store_cannot_be_looked_at_is_no_store(tmp_path, monkeypatch, capsys, command):
    log = chat_log(tmp_path / "s" / "session.jsonl", "no-store")
    monkeypatch.setenv("DSH_HOME", str(_long(tmp_path)))
    code, _, err = invoke(monkeypatch, capsys, command, str(log))
    assert (code, [line for line in err if "unexpected" in line or "bug" in line]) == (0, [])


def test_an_attachments_folder_that_cannot_be_looked_at_is_named(tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "s" / "session.jsonl", "no-store")
    folder = _long(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "cache", str(log), "--attachments", str(folder))
    assert (code, out) == (2, "")
    assert err == [f"error: {folder}/objects: cannot look in {folder}/objects: File name too long (hint: point "
                   "--attachments DIR at an intact copy of DSH's attachment store (<DSH_HOME>/attachments/v1))"]


def test_a_blank_attachments_variable_is_unset_and_a_bad_one_is_named(tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "s" / "session.jsonl", "no-store")
    monkeypatch.setenv("DSH_AUDIT_ATTACHMENTS", " ")
    assert invoke(monkeypatch, capsys, "cache", str(log))[0] == 0
    monkeypatch.setenv("DSH_AUDIT_ATTACHMENTS", str(tmp_path / "s"))
    code, out, err = invoke(monkeypatch, capsys, "cache", str(log), "--json")
    assert (code, out) == (2, "")
    assert err == [f"error: {tmp_path / 's'}: $DSH_AUDIT_ATTACHMENTS names no attachment store: no objects "
                   "folder in it, its v1 folder or its attachments/v1 folder (hint: point --attachments DIR at an "
                   "intact copy of DSH's attachment store (<DSH_HOME>/attachments/v1))"]


@pytest.mark.parametrize("command", ["check", "report"])
def test_a_huge_pyproject_is_refused_not_read(tmp_path, monkeypatch, capsys, command):
    log = chat_log(tmp_path / "s" / "session.jsonl", "huge-pyproject")
    pyproject = tmp_path / "pyproject.toml"
    with pyproject.open("wb") as handle:  # sparse: 17 MiB that take no disk
        handle.truncate(17 << 20)
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, command, str(log), "-o" if command == "report" else "--junit",
                            str(tmp_path / "out"))
    assert (code, out) == (2, "")
    assert err == [f"error: {pyproject.resolve()}: pyproject.toml is larger than 16 MiB (hint: fix or move this "
                   "pyproject.toml (the nearest to the current folder): dsh-audit reads its [tool.dsh-audit] table)"]


def test_a_broken_pyproject_is_not_blamed_on_prices(tmp_path, monkeypatch, capsys):
    log = chat_log(tmp_path / "s" / "session.jsonl", "bad-pyproject")
    (tmp_path / "pyproject.toml").write_text("not = = toml\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "cache", str(log))
    assert (code, out) == (2, "")
    assert err == [f"error: {(tmp_path / 'pyproject.toml').resolve()}:1: pyproject.toml is not valid TOML: Invalid value "
                   "(at line 1, column 7) (hint: fix or move this pyproject.toml (the nearest to the current folder): "
                   "dsh-audit reads its [tool.dsh-audit] table)"]
