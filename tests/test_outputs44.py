"""Outputs never touch the settings a run reads, and a log that cannot be read is bad input (issue
15, session 44): the nearest pyproject.toml, read by check, report and index for their policy,
prices and ZDR status (with a [tool.dsh-audit] table or without), is an input every output option
of theirs is refused over (exit 2, one line, the file unchanged); validate reads none, so its report
may replace one (session 45). check on a log it cannot read exits 2, as on a folder it cannot read:
tests/test_check35.py and tests/test_hostile_files.py."""

from __future__ import annotations

import json
import os

import pytest

from test_hostile_outputs import OUTPUT_IDS, OUTPUT_OPTIONS, SUMMARY_HINT, digest, dsh_log, hint, invoke

#: the commands that read the nearest pyproject.toml (redact and validate read none: tested below)
WRITERS = [option for option in OUTPUT_OPTIONS if option[0][0] not in ("redact", "validate")]
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
            said = f"error: {target}: the {what} would overwrite the input {read} {hint(args[1])}"
            assert invoke(monkeypatch, capsys, args[0], str(log), *args[1:], target) == (2, "", [said]), (text, target)
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
                f"{tmp_path.resolve() / 'pyproject.toml'} {SUMMARY_HINT}"])
    assert digest(pyproject) == before



@pytest.mark.parametrize("command", ["validate", "check"])
def test_only_a_command_that_reads_the_pyproject_toml_refuses_an_output_over_it(tmp_path, monkeypatch, capsys,
                                                                                command):
    """Issue 15, session 45: an output is refused over what its command reads. validate reads no
    settings, so its SARIF report replaces a pyproject.toml (a copy here); check reads it: refused,
    the file byte for byte as it was."""
    log = dsh_log(tmp_path / "logs" / "session.jsonl")
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(SETTINGS[0], encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    before = digest(pyproject)
    code, out, err = invoke(monkeypatch, capsys, command, str(log), "--sarif", "pyproject.toml")
    if command == "check":
        assert (code, out, err) == (2, "", [f"error: pyproject.toml: the SARIF report would overwrite the input "
                                            f"{tmp_path.resolve() / 'pyproject.toml'} {hint('--sarif')}"])
        assert digest(pyproject) == before
    else:
        assert (code, out, err) == (0, "", ["0 error(s), 0 warning(s), 0 info in 1 file(s)"])
        sarif = json.loads(pyproject.read_text("utf-8"))
        assert (sarif["version"], sarif["runs"][0]["results"]) == ("2.1.0", [])


@pytest.mark.parametrize(("args", "what", "report"), OUTPUT_OPTIONS, ids=OUTPUT_IDS)
def test_an_output_over_its_input_log_names_the_option_to_change(tmp_path, monkeypatch, capsys, args, what, report):
    """Session 45's tour: "would overwrite the input" said "(hint: write it to another path)", not
    which option to give another path; now every command's hint names the option given."""
    log = dsh_log(tmp_path / "s" / "session.jsonl")
    before = digest(log)
    assert invoke(monkeypatch, capsys, args[0], str(log), *args[1:], str(log)) == (
        2, "", [f"error: {log}: the {what} would overwrite the input {log} {hint(args[1])}"])
    assert digest(log) == before
