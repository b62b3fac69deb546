"""``check`` and ``report`` over a folder that holds a Claude Code or Codex log; ``check --format csv``
beside a report on stdout (session 43, issues 14/15).

A Claude Code transcript or Codex rollout found in a folder stopped ``check`` and ``report`` at
once: exit 2, no log checked, no report written, where ``validate`` and ``breaks`` name it in one
error line and go on over the DSH logs. Now check and report go on as they do: the log is named
(what imports it), left out of every report but the JSON report's notes, and the run exits 2
once every report is written. A log named itself as a PATH is still refused alone, no report.
Every report of such a run says it is incomplete (no "passed" beside exit 2) and names the logs
left out: the verdict line, the Markdown heading, the HTML page, the JSON report (``not_checked``),
SARIF (``executionSuccessful`` false) and JUnit (an ``<error>`` testcase each).
``--format csv`` with ``--sarif -`` dropped the CSV silently; it is refused as ``--json`` is.
"""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from _cli import chat_log, invoke

from dsh_audit.gate import load_policy, run_check
from dsh_audit.report import build_report_data, report_object

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data" / "importers"
HINT = ("sessions, requests, show, render, cache, usage, diff and index import it; validate, breaks, explain, "
        "check, report, redact and watch read DSH logs only")
CLAUDE = f"runs/claude/c.jsonl:1: this is a claude-code session, not a DSH log (hint: {HINT})"
CODEX = f"runs/codex/rollout-x.jsonl:1: this is a codex session, not a DSH log (hint: {HINT})"


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``runs/`` in the current folder: a DSH log, a Claude Code transcript and a Codex rollout."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    chat_log(tmp_path / "runs" / "a" / "session.jsonl", "s-a")
    for source, target in (("claude-code/7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl", "claude/c.jsonl"),
                           ("codex/rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl",
                            "codex/rollout-x.jsonl")):
        (tmp_path / "runs" / target).parent.mkdir()
        shutil.copy(DATA / source, tmp_path / "runs" / target)
    return tmp_path


def test_check_over_a_folder_names_another_agents_log_and_writes_every_report(
        runs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "check", "runs", "--sarif", "o.sarif", "--junit", "o.xml",
                            "--json-report", "o.json", "--markdown", "o.md")
    assert (code, err) == (2, [f"error: {CLAUDE}", f"error: {CODEX}"])
    assert out.splitlines()[-1] == ("INCOMPLETE: 1 log(s), 1 request(s), 0 error(s), 0 warning(s), 1 info, 0 failing "
                                    "(policy: defaults); 2 log(s) of another agent not checked (exit 2)")
    assert sorted(p.name for p in runs.iterdir()) == ["o.json", "o.md", "o.sarif", "o.xml", "runs"]
    report = json.loads((runs / "o.json").read_text("utf-8"))
    assert [s["path"] for s in report["sessions"]] == ["runs/a/session.jsonl"]
    assert [f["rule"] for f in report["findings"]] == ["DSH810"]
    assert (report["passed"], report["counts"]["logs_not_checked"], report["not_checked"]) == (True, 2, [
        {"path": "runs/claude/c.jsonl", "reason": f"this is a claude-code session, not a DSH log (hint: {HINT})"},
        {"path": "runs/codex/rollout-x.jsonl", "reason": f"this is a codex session, not a DSH log (hint: {HINT})"}])
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "report-schema.json").read_text("utf-8"))
    jsonschema.Draft202012Validator(schema).validate(report)
    assert [n for n in report["notes"] if "not checked" in n] == [
        f"runs/claude/c.jsonl: not checked: this is a claude-code session, not a DSH log (hint: {HINT})",
        f"runs/codex/rollout-x.jsonl: not checked: this is a codex session, not a DSH log (hint: {HINT})"]
    sarif = json.loads((runs / "o.sarif").read_text("utf-8"))
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["DSH810"]
    # the summary a PR shows, and SARIF's place for inputs not analysed, name what the verdict line names
    assert (runs / "o.md").read_text("utf-8").splitlines()[0] == (
        "## dsh-audit check: ⚠️ incomplete: no breaks; 2 log(s) of another agent not checked (exit 2)")
    assert sarif["runs"][0]["invocations"][0]["executionSuccessful"] is False
    assert [(n["level"], n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"], n["message"]["text"])
            for n in sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]] == [
        ("error", "runs/claude/c.jsonl", f"not checked: this is a claude-code session, not a DSH log (hint: {HINT})"),
        ("error", "runs/codex/rollout-x.jsonl", f"not checked: this is a codex session, not a DSH log (hint: {HINT})")]
    junit = ET.parse(runs / "o.xml").getroot()
    assert (junit.get("tests"), junit.get("failures"), junit.get("errors")) == ("4", "0", "2")
    assert [(c.get("name"), [(e.get("type"), e.get("message")) for e in c.iter("error")])
            for c in junit.iter("testcase") if c.get("classname") == "dsh-audit.not-checked"] == [
        ("not checked: runs/claude/c.jsonl", [("not checked", CLAUDE.split(":1: ")[1])]),
        ("not checked: runs/codex/rollout-x.jsonl", [("not checked", CODEX.split(":1: ")[1])])]
    xmlschema = pytest.importorskip("xmlschema")
    xmlschema.XMLSchema(str(ROOT / "tests" / "data" / "junit.xsd")).validate(str(runs / "o.xml"))


def test_report_over_a_folder_writes_the_page_and_counts_what_it_left_out(
        runs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "report", "runs", "-o", "r.html")
    assert (code, out, err) == (2, "wrote r.html: 1 log(s), 1 request(s), check incomplete: no breaks; "
                                   "2 log(s) of another agent not checked (exit 2)\n", [f"error: {CLAUDE}", f"error: {CODEX}"])
    page = (runs / "r.html").read_text("utf-8")
    assert re.findall(r'<p class="muted caveat">not checked: ([^:]*):', page) == [
        "runs/claude/c.jsonl", "runs/codex/rollout-x.jsonl"]
    data = json.loads(page.split('<script type="application/json" id="dsh-data">')[1].split("</script>")[0])
    assert (data["headline"], [n["path"] for n in data["not_checked"]]) == (
        {"state": "incomplete", "text": "check incomplete: no breaks; 2 log(s) of another agent not checked (exit 2)"},
        ["runs/claude/c.jsonl", "runs/codex/rollout-x.jsonl"])


@pytest.mark.parametrize(("command", "paths", "errors"), [
    (["check", "--sarif", "o.sarif"], ["runs/a", "./runs/claude/c.jsonl"], [CLAUDE]),
    (["report", "-o", "r.html"], ["runs/a", "./runs/claude/c.jsonl"], [CLAUDE]),
    (["check", "--sarif", "o.sarif"], ["runs/claude", "runs/codex"], [CLAUDE, CODEX])])  # no DSH log: nothing checked
def test_another_agents_log_named_as_a_path_is_refused_alone(
        runs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: list[str],
        paths: list[str], errors: list[str]) -> None:
    assert invoke(monkeypatch, capsys, *command, *paths) == (2, "", [f"error: {e}" for e in errors])
    assert sorted(p.name for p in runs.iterdir()) == ["runs"]


@pytest.mark.parametrize("flag", ["--json", "--format json", "--format markdown", "--format csv"])
@pytest.mark.parametrize("option", ["--json-report", "--junit", "--sarif", "--markdown"])
def test_a_report_file_of_dash_beside_a_stdout_format_is_refused_for_every_report(
        runs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], option: str,
        flag: str) -> None:
    """Every report FILE of '-' beside a format that prints on stdout is refused alike: before
    session 45, ``--json --json-report -`` (and ``--format markdown --markdown -``) printed the one
    report, the other asked for dropped with no word, while ``--json --sarif -`` was refused."""
    assert invoke(monkeypatch, capsys, "check", "runs/a", *flag.split(), option, "-") == (
        2, "", [f"error: only one output can go to stdout, not {option} -, {flag} (hint: give the others a FILE name)"])


_UNREAD = ("runs/c/wire.jsonl: DSH802 error (fails the gate: fail-on-refusal): not a capture format dsh-audit knows "
           "(hint: expected a wire.jsonl file, a HAR 1.2 file or a folder of *.json bodies; found beside the log, it "
           "was left out: --capture FILE gives another, --no-capture ignores found ones)")
_IGNORED = ("runs/c/session.jsonl: DSH810 info: no capture compared: the capture found beside the log "
            "(runs/c/wire.jsonl) cannot be read (DSH802) (hint: repair or remove that file (its DSH802 says where it "
            "breaks), or pass --capture FILE)")
_NONE = ("no capture given or found beside the log (wire.jsonl) (hint: pass --capture FILE, or put a wire.jsonl "
         "holding the log's requests beside it or up to four folders above it)")


@pytest.mark.parametrize(("ignore", "expected"), [
    ("[]", (1, "FAIL,runs/c/session.jsonl,s-c,1,unreadable", [_UNREAD, f"DSH810 info: 4 logs (the capture column "
                                                                       f"says which): {_NONE}"],
            "failed: 1 unreadable capture(s)", "check failed: 1 unreadable capture(s)")),
    # ignored, it fails nothing, but the capture still cannot be read: the cell says so, as c's DSH810 does
    ('["DSH802"]', (0, "ok,runs/c/session.jsonl,s-c,1,unreadable", [_IGNORED, f"DSH810 info: 4 logs (the capture "
                                                                            f"column says which): {_NONE}"],
                    "passed: no breaks", "check passed: no breaks"))])
def test_a_found_capture_that_cannot_be_read_fails_as_its_capture_unless_ignored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], ignore: str,
        expected: tuple[object, ...]) -> None:
    """Its DSH802 passes the policy as every finding does (``ignore`` drops it); the logs with none
    are sent to the capture column, which says ``unreadable`` for it, not ``none``; the report's
    page counts it as the capture it is, not as a log that cannot be replayed (nor as no cause)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    for name in "abcde":
        chat_log(tmp_path / "runs" / name / "session.jsonl", f"s-{name}")
    (tmp_path / "runs" / "c" / "wire.jsonl").write_text("garbage\n")
    (tmp_path / "pol.toml").write_text(f"[tool.dsh-audit]\nignore = {ignore}\n")
    code, out, err = invoke(monkeypatch, capsys, "check", "runs", "--policy", "pol.toml", "--format", "csv",
                            "--markdown", "m.md")
    row = next(line for line in out.splitlines() if ",runs/c/" in line)
    summary = next(line for line in (tmp_path / "m.md").read_text("utf-8").splitlines() if " runs/c/" in line)
    assert summary.split(" | ")[4] == row.split(",")[5]  # one capture cell: "unreadable" in both
    said = [line for line in err if "DSH8" in line and (ignore != "[]" or not line.startswith("runs/c/session.jsonl"))]
    checked = run_check(["runs"], policy=load_policy("pol.toml"))
    data = build_report_data(checked)
    verdict = next(s["verdict"] for s in data["sessions"] if s["path"] == "runs/c/session.jsonl")
    # the JSON report says why a log with no capture failed (or that its capture was unreadable though ignored)
    c = next(s for s in report_object(checked)["sessions"] if s["path"] == "runs/c/session.jsonl")
    assert (c["failed"], c["capture"], c["capture_unreadable"]) == (ignore == "[]", None, True)
    assert (code, ",".join(row.split(",")[1:6]), said, verdict,
            data["headline"]["text"]) == expected
