"""Never harm the evidence (issue 15): an output path that is, or resolves to, an input is refused
with one error line and exit 2 before any work, and the input stays byte for byte the same."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from dsh_audit.errors import UsageError
from dsh_audit.fleet import index_logs
from dsh_audit.log import ProtectedInputs, write_atomic
from _cli import chat_log, invoke

#: The hint of a refused output names the option that was given (session 45: before, "write it to another path").
SUMMARY_HINT = "(hint: point GITHUB_STEP_SUMMARY at another file)"


def hint(option: str) -> str:
    return f"(hint: give {option} another path)"


def dsh_log(path: Path) -> Path:
    return chat_log(path, "session-outputs")


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


CHECK_OUTPUTS = [("--json-report", "JSON report"), ("--junit", "JUnit report"), ("--sarif", "SARIF report"),
                 ("--markdown", "Markdown summary")]


@pytest.mark.parametrize(("option", "what"), CHECK_OUTPUTS)
@pytest.mark.parametrize("shape", ["same", "symlink", "dotdot"])
def test_check_output_over_its_input_log_is_refused(tmp_path, monkeypatch, capsys, option, what, shape):
    log = dsh_log(tmp_path / "s" / "session.jsonl")
    before, files = digest(log), listing(tmp_path)
    if shape == "same":
        target = str(log)
    elif shape == "symlink":
        (tmp_path / "link.json").symlink_to(log)
        files = listing(tmp_path)
        target = str(tmp_path / "link.json")
    else:
        (tmp_path / "other").mkdir()
        files = listing(tmp_path)
        target = str(tmp_path / "other" / ".." / "s" / "session.jsonl")
    result = invoke(monkeypatch, capsys, "check", str(log), option, target)
    assert result == (2, "", [f"error: {target}: the {what} would overwrite the input {log} {hint(option)}"])
    assert digest(log) == before
    assert listing(tmp_path) == files


def test_check_given_a_folder_refuses_every_log_and_capture_in_it(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "s" / "session.jsonl")
    other = tmp_path / "s" / "session.v4.jsonl.zstd"
    other.write_bytes(b"\x28\xb5\x2f\xfd not really")
    wire = tmp_path / "s" / "wire.jsonl"
    wire.write_bytes(b"")
    # session.v4.jsonl.zstd is not the generation read, but it is a log of the folder: still evidence
    for target in (log, other, wire):
        before = target.read_bytes()
        code, out, err = invoke(monkeypatch, capsys, "check", str(tmp_path / "s"), "--json-report", str(target))
        assert (code, out, len(err)) == (2, "", 1)
        assert err[0].startswith(f"error: {target}: the JSON report would overwrite the input ")
        assert target.read_bytes() == before


def test_check_output_over_the_policy_and_the_capture_is_refused(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "s" / "session.jsonl")
    policy = tmp_path / "policy.toml"
    policy.write_text('adapter = "auto"\n', encoding="utf-8")
    capture = tmp_path / "elsewhere" / "capture.jsonl"
    capture.parent.mkdir()
    capture.write_text("", encoding="utf-8")
    assert invoke(monkeypatch, capsys, "check", str(log), "--policy", str(policy), "--sarif", str(policy)) == (
        2, "", [f"error: {policy}: the SARIF report would overwrite the input {policy} {hint('--sarif')}"])
    assert invoke(monkeypatch, capsys, "check", str(log), "--capture", str(capture), "--junit", str(capture)) == (
        2, "", [f"error: {capture}: the JUnit report would overwrite the input {capture} {hint('--junit')}"])
    assert policy.read_text("utf-8") == 'adapter = "auto"\n'
    assert capture.read_bytes() == b""


def test_step_summary_pointing_at_the_log_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "session.jsonl")
    before = digest(log)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(log))
    json_out = tmp_path / "r.json"
    assert invoke(monkeypatch, capsys, "check", str(log), "--json-report", str(json_out)) == (
        2, "", [f"error: {log}: the GITHUB_STEP_SUMMARY would overwrite the input {log} {SUMMARY_HINT}"])
    assert digest(log) == before
    assert not json_out.exists()  # refused before the work: no report either


def test_report_output_over_its_input_log_is_refused(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "session.jsonl")
    before = digest(log)
    assert invoke(monkeypatch, capsys, "report", str(log), "-o", str(log)) == (
        2, "", [f"error: {log}: the HTML report would overwrite the input {log} {hint('-o')}"])
    assert digest(log) == before
    assert listing(tmp_path) == ["session.jsonl"]


def test_validate_sarif_over_its_input_log_is_refused(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "session.jsonl")
    before = digest(log)
    assert invoke(monkeypatch, capsys, "validate", str(tmp_path), "--sarif", str(log)) == (
        2, "", [f"error: {log}: the SARIF report would overwrite the input {log} {hint('--sarif')}"])
    assert digest(log) == before


def test_index_db_over_its_input_log_is_refused(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "session.jsonl")
    before = digest(log)
    link = tmp_path / "audit.sqlite"
    link.symlink_to(log)
    for db in (log, link):
        assert invoke(monkeypatch, capsys, "index", str(log), "--db", str(db)) == (
            2, "", [f"error: {db}: the index would overwrite the input {log} {hint('--db')}"])
    with pytest.raises(UsageError, match="the index would overwrite the input"):
        index_logs([log], log)
    assert digest(log) == before
    assert listing(tmp_path) == ["audit.sqlite", "session.jsonl"]


def test_hard_link_to_the_log_is_refused(tmp_path):
    log = dsh_log(tmp_path / "session.jsonl")
    twin = tmp_path / "twin.json"
    os.link(log, twin)
    assert ProtectedInputs.of([log]).input_at(twin) == str(log)
    assert ProtectedInputs.of([log]).input_at(tmp_path / "report.json") is None


def test_outputs_elsewhere_are_written(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "s" / "session.jsonl")
    summary = tmp_path / "summary.md"
    summary.write_text("# before\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, _, err = invoke(monkeypatch, capsys, "check", str(log), "--json-report", str(tmp_path / "r.json"),
                          "--markdown", str(tmp_path / "s" / "summary.md"))
    assert (code, err) == (0, [])
    assert (tmp_path / "r.json").read_text("utf-8").startswith("{")
    assert summary.read_text("utf-8").startswith("# before\n")
    assert not [p for p in tmp_path.rglob("*.tmp")]


def test_write_atomic_failure_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "report.json"
    target.mkdir()  # renaming a file over a folder fails after the temporary is written
    with pytest.raises(UsageError) as caught:
        write_atomic(target, "x" * 100_000, what="report")
    assert str(caught.value) == f"{target}: cannot write report: Is a directory"
    assert listing(tmp_path) == ["report.json"]


def test_write_atomic_replaces_and_keeps_lone_surrogates_writable(tmp_path):
    target = tmp_path / "r.md"
    target.write_text("old", encoding="utf-8")
    write_atomic(target, "a\ud800b")
    assert target.read_bytes() == b"a\\ud800b"
    assert listing(tmp_path) == ["r.md"]


def test_index_db_over_a_capture_or_the_route_file_is_refused(tmp_path, monkeypatch, capsys):
    """The captures a log is compared with (given, or found folders above it) and the route file
    are inputs too."""
    log = dsh_log(tmp_path / "a" / "b" / "c" / "session.jsonl")
    found = tmp_path / "a" / "wire.jsonl"  # two folders above the log: find_capture's reach
    found.write_text("")
    given, routes = tmp_path / "given.jsonl", tmp_path / "routes.yaml"
    given.write_text("")
    routes.write_text("- id: llm-pi-ai\n  config:\n    providers:\n      anthropic:\n"
                      "        baseURL: http://127.0.0.1:1\n        models:\n          - id: claude-sonnet-4-5\n")
    for db, extra in ((found, []), (given, ["--capture", str(given)]), (routes, ["--routes", str(routes)])):
        before = digest(db)
        assert invoke(monkeypatch, capsys, "index", str(log), *extra, "--db", str(db)) == (
            2, "", [f"error: {db}: the index would overwrite the input {db} {hint('--db')}"]), db
        assert digest(db) == before


# -- every option that writes a file, refused one way (issue 15) ------------------------------------
# (the command and its option, what its refusals call the output, whether it is a report: written
# whole to a file, to stdout with -, through to a FIFO a program reads)
OUTPUT_OPTIONS = [(["check", "--json-report"], "JSON report", True), (["check", "--junit"], "JUnit report", True),
                  (["check", "--sarif"], "SARIF report", True), (["check", "--markdown"], "Markdown summary", True),
                  (["report", "-o"], "HTML report", True), (["validate", "--sarif"], "SARIF report", True),
                  (["index", "--db"], "index", False), (["redact", "-o"], "output", False)]
OUTPUT_IDS = [" ".join(args) for args, _, _ in OUTPUT_OPTIONS]
MISSING_HINT = "(hint: create the folder first, or name a file in a folder that exists)"


def _refused(tmp_path, monkeypatch, capsys, args, target):
    """Run ``args`` (a command and its output option) on a log with ``target``: exit, stdout, stderr,
    and the files the run left in ``tmp_path`` besides the log (none: refused before any work)."""
    log = dsh_log(tmp_path / "s" / "session.jsonl")
    before = listing(tmp_path)
    result = invoke(monkeypatch, capsys, args[0], str(log), *args[1:], str(target))
    return (*result, sorted(set(listing(tmp_path)) - set(before)))


@pytest.mark.parametrize(("args", "what", "report"), OUTPUT_OPTIONS, ids=OUTPUT_IDS)
def test_an_output_that_is_a_folder_is_refused_in_the_projects_words(tmp_path, monkeypatch, capsys, args, what,
                                                                    report):
    """Not click's "Invalid value for '--sarif': File 'x' is a directory."."""
    target = tmp_path / "adir"
    target.mkdir()
    assert _refused(tmp_path, monkeypatch, capsys, args, target) == (
        2, "", [f"error: {target}: cannot write the {what}: it is a folder (hint: name a file in it)"], [])


@pytest.mark.parametrize(("args", "what", "report"), OUTPUT_OPTIONS, ids=OUTPUT_IDS)
def test_an_output_in_a_missing_folder_is_refused(tmp_path, monkeypatch, capsys, args, what, report):
    target = tmp_path / "missing" / "out"
    assert _refused(tmp_path, monkeypatch, capsys, args, target) == (
        2, "", [f"error: {target}: cannot write the {what}: its folder {target.parent} does not exist {MISSING_HINT}"],
        [])


@pytest.mark.parametrize(("args", "what", "report"), OUTPUT_OPTIONS, ids=OUTPUT_IDS)
def test_an_output_in_a_folder_that_cannot_be_written_is_refused_before_any_work(tmp_path, monkeypatch, capsys, args,
                                                                                 what, report):
    """Said at once, not after the check (os.access says so for the folder: tests may run as root)."""
    folder = tmp_path / "locked"
    folder.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: False if os.fspath(path) == str(folder)
                        else real(path, mode, **kw))
    target = folder / "out"
    assert _refused(tmp_path, monkeypatch, capsys, args, target) == (
        2, "", [f"error: {target}: cannot write the {what}: its folder {folder} is not writable (hint: name a file in a "
                "folder you can write to)"], [])


@pytest.mark.parametrize(("args", "what", "report"), OUTPUT_OPTIONS, ids=OUTPUT_IDS)
def test_a_fifo_no_program_reads_is_refused_before_any_work(tmp_path, monkeypatch, capsys, args, what, report):
    """A report is written through to a FIFO a program reads: one that none reads is said at once
    (not after the work, nor by a hang); an index and a redacted log are never written to a FIFO."""
    target = tmp_path / "fifo"
    os.mkfifo(target)
    said = {"index": "the index is a FIFO, not a file (hint: give --db a file name)",
            "output": "cannot write the output: it is a FIFO (hint: name a file)"}.get(
        what, f"cannot write the {what}: no program is reading the FIFO (hint: start the program that reads it "
              f"first, or give {args[1]} a file or -)")
    assert _refused(tmp_path, monkeypatch, capsys, args, target) == (2, "", [f"error: {target}: {said}"], [])


@pytest.mark.parametrize(("args", "what", "report"), OUTPUT_OPTIONS, ids=OUTPUT_IDS)
def test_a_dash_is_stdout_or_refused(tmp_path, monkeypatch, capsys, args, what, report):
    """``-`` is stdout for every report (and redact's log); an index, a SQLite file, cannot go there,
    and no option makes a file named ``-``."""
    code, out, err, made = _refused(tmp_path, monkeypatch, capsys, args, "-")
    assert "-" not in made and not (Path.cwd() / "-").exists()
    if args[0] == "index":
        assert (code, out, err, made) == (
            2, "", ["error: --db -: the index cannot be written to stdout (hint: give --db a path instead)"], [])
        return
    starts = {"--json-report": "{", "--junit": "<?xml", "--sarif": "{", "--markdown": "#", "-o": "<!DOCTYPE html>"}
    assert (code, made) == (0, [])
    assert out.startswith('{"type":"session"' if args[0] == "redact" else starts[args[1]]), out[:80]


def test_redact_capture_output_dash_is_refused(tmp_path, monkeypatch, capsys):
    log = dsh_log(tmp_path / "session.jsonl")
    assert invoke(monkeypatch, capsys, "redact", str(log), "-o", str(tmp_path / "r.jsonl"), "--capture-output", "-") == (
        2, "", ["error: --capture-output -: the redacted capture cannot be written to stdout (hint: give "
                "--capture-output a path instead)"])
    assert listing(tmp_path) == ["session.jsonl"]
