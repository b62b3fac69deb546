"""Outputs never touch the settings a run reads, and a log that cannot be read is bad input (issue
15, session 44): the nearest pyproject.toml, read by check, report and index for their policy,
prices and ZDR status (with a [tool.dsh-audit] table or without), is an input every output option
is refused over (exit 2, one line, the file unchanged). check on a log it cannot read exits 2, as on
a folder it cannot read: tests/test_check35.py and tests/test_hostile_files.py."""

from __future__ import annotations

import os

import pytest

from test_hostile_outputs import HINT, OUTPUT_OPTIONS, digest, dsh_log, invoke

#: redact reads no pyproject.toml, and refuses an output that exists but with --force
WRITERS = [option for option in OUTPUT_OPTIONS if option[0][0] != "redact"]
SETTINGS = ['[tool.dsh-audit]\nfail-on-refusal = true\n', '[project]\nname = "no-table"\n']


@pytest.mark.parametrize(("args", "what", "report"), WRITERS, ids=[" ".join(args) for args, _, _ in WRITERS])
def test_an_output_over_the_nearest_pyproject_toml_is_refused(tmp_path, monkeypatch, capsys, args, what, report):
    """Named, through a symlink or a hard link, from a folder below it: the one it reads."""
    project = tmp_path / "project"
    log = dsh_log(project / "logs" / "session.jsonl")
    pyproject = project / "pyproject.toml"
    pyproject.write_text(SETTINGS[0], encoding="utf-8")
    (project / "link.toml").symlink_to(pyproject)
    os.link(pyproject, project / "twin.toml")
    monkeypatch.chdir(project / "logs")
    read = project.resolve() / "pyproject.toml"  # as find_pyproject names it
    for text in SETTINGS:
        pyproject.write_text(text, encoding="utf-8")
        for target in ("../pyproject.toml", "../link.toml", "../twin.toml"):
            assert invoke(monkeypatch, capsys, args[0], str(log), *args[1:], target) == (
                2, "", [f"error: {target}: the {what} would overwrite the input {read} {HINT}"]), (text, target)
            assert pyproject.read_text("utf-8") == text
    assert sorted(p.name for p in project.iterdir()) == ["link.toml", "logs", "pyproject.toml", "twin.toml"]


def test_the_step_summary_over_the_nearest_pyproject_toml_is_refused(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "logs" / "session.jsonl")
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(SETTINGS[1], encoding="utf-8")
    (tmp_path / "summary.md").symlink_to(pyproject)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "summary.md"))
    before = digest(pyproject)
    assert invoke(monkeypatch, capsys, "check", str(log)) == (
        2, "", [f"error: {tmp_path / 'summary.md'}: the GITHUB_STEP_SUMMARY would overwrite the input "
                f"{tmp_path.resolve() / 'pyproject.toml'} {HINT}"])
    assert digest(pyproject) == before

