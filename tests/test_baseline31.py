"""``dsh-audit check --baseline FILE``: the findings of an earlier JSON report are accepted where
they are (``docs/ci.md``, Baseline), from the CLI option or ``[tool.dsh-audit.check] baseline``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dsh_audit.gate import Finding, apply_baseline, load_baseline, load_policy, run_check

from _cli import chat_log, invoke

ROOT = Path(__file__).resolve().parent.parent
LIVE = ROOT.parent / "shared" / "corpus" / "live"
needs_corpus = pytest.mark.skipif(not (LIVE / "a-chat").is_dir(), reason="../shared/corpus is absent")
_HINT = "(hint: write the baseline with `dsh-audit check PATHS --json-report FILE` and pass that FILE)"
_STRICT = "require-capture = true\n"  # DSH810 (no capture) fails: a failing finding with no corpus


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setenv("COLUMNS", "200")


def _two_logs(folder: Path) -> None:
    chat_log(folder / "logs" / "a.jsonl", "s-a")
    chat_log(folder / "logs" / "b.jsonl", "s-b")
    (folder / "policy.toml").write_text(_STRICT, "utf-8")


def _summary(out: str) -> str:
    return out.splitlines()[-1]


def test_a_baselined_finding_does_not_fail_and_every_report_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _two_logs(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", "--json-report", "b.json")
    assert code == 1
    assert _summary(out) == "FAILED: 2 log(s), 2 request(s), 0 error(s), 0 warning(s), 2 info, 2 failing (policy: policy.toml)"
    # accept s-a's finding only
    base = json.loads((tmp_path / "b.json").read_text("utf-8"))
    base["findings"] = [f for f in base["findings"] if f["session_id"] == "s-a"]
    (tmp_path / "b.json").write_text(json.dumps(base), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", "--baseline", "b.json",
                            "--json-report", "r.json", "--sarif", "r.sarif", "--junit", "r.xml", "--markdown", "r.md")
    assert code == 1
    # a baselined finding is listed as baselined, info too, as the Markdown summary lists it (session 42: the
    # table counted it, the text did not list it)
    lines = out.splitlines()
    assert [line + " " + lines[n + 1].strip() for n, line in enumerate(lines) if "DSH810" in line] == [  # failing first
        "logs/b.jsonl: DSH810 info (fails the gate: require-capture): no capture given or found beside the log (wire.jsonl) (hint: pass "
        "--capture FILE, or put a wire.jsonl holding the log's requests beside it or up to four folders above it)",
        "logs/a.jsonl: DSH810 info baselined: no capture given or found beside the log (wire.jsonl) (hint: pass "
        "--capture FILE, or put a wire.jsonl holding the log's requests beside it or up to four folders above it)"]
    assert _summary(out) == ("FAILED: 2 log(s), 2 request(s), 0 error(s), 0 warning(s), 2 info, 1 failing, "
                             "1 baselined (policy: policy.toml)")
    assert not [line for line in err if "no longer occur" in line]
    report = json.loads((tmp_path / "r.json").read_text("utf-8"))
    assert report["counts"] == {"error": 0, "warning": 0, "info": 2, "failing": 1, "baselined": 1, "sessions": 2,
                                "requests": 2, "logs_not_checked": 0}
    assert [(f["session_id"], f["fails"], f.get("baselined")) for f in report["findings"]] == [
        ("s-a", False, True), ("s-b", True, None)]
    assert report["notes"] == []
    sarif = json.loads((tmp_path / "r.sarif").read_text("utf-8"))
    assert [(r["properties"]["session_id"], r["level"], r["baselineState"]) for r in sarif["runs"][0]["results"]] == [
        ("s-a", "note", "unchanged"), ("s-b", "error", "new")]
    junit = (tmp_path / "r.xml").read_text("utf-8")
    assert junit.count("<failure ") == 1 and "DSH810 info baselined" in junit
    markdown = (tmp_path / "r.md").read_text("utf-8").splitlines()
    assert markdown[2] == ("2 log(s), 2 request(s); findings: 0 error(s), 0 warning(s), 2 info; 1 failing, "
                           "1 baselined (policy: policy.toml).")
    assert r"- **DSH810** info (baselined): no capture given or found beside the log (wire.jsonl) — logs/a.jsonl" in markdown


def test_the_baseline_matches_from_another_folder_and_a_changed_finding_is_new(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _two_logs(tmp_path / "one")
    monkeypatch.chdir(tmp_path / "one")
    assert invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", "--json-report",
                  str(tmp_path / "b.json"))[0] == 1
    shutil.copytree(tmp_path / "one", tmp_path / "two")  # another checkout, checked by its absolute path
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", str(tmp_path / "two" / "logs"), "--policy",
                            "two/policy.toml", "--baseline", "b.json")
    assert code == 0
    assert _summary(out) == ("PASSED: 2 log(s), 2 request(s), 0 error(s), 0 warning(s), 2 info, 0 failing, "
                             "2 baselined (policy: two/policy.toml)")
    # a baseline finding that says something else is no longer there, and the run's finding is new
    base = json.loads((tmp_path / "b.json").read_text("utf-8"))
    base["findings"][1]["message"] += " (changed)"
    base["findings"].append(dict(base["findings"][0], request=3))
    (tmp_path / "b.json").write_text(json.dumps(base), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", "two/logs", "--policy", "two/policy.toml",
                            "--baseline", "b.json", "--json")
    assert code == 1
    assert "note: 2 baseline entries no longer occur" in err
    report = json.loads(out)
    assert report["notes"] == ["2 baseline entries no longer occur"]
    assert [f.get("baselined", False) for f in report["findings"]] == [True, False]


def test_the_json_report_may_replace_the_baseline_it_was_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _two_logs(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.json").write_text(json.dumps({"schema_version": 1, "tool": {"name": "dsh-audit"},
                                                 "findings": []}), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", "--baseline", "b.json",
                            "--json-report", "b.json")
    assert code == 1
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", "--baseline", "b.json")
    assert code == 0


_REPORT = '{{"schema_version": {}, "message_wording": {}, "tool": {{"name": "dsh-audit"}}, "findings": []}}'


@pytest.mark.parametrize(("text", "said"), [
    (None, "b.json: cannot read the baseline: No such file or directory (hint: write the first baseline with "
           "`dsh-audit check PATHS --json-report b.json`)"),
    ("[1", "b.json:1: baseline is not valid JSON: Expecting ',' delimiter: line 1 column 3 (char 2)"),
    ('{"findings": []}', "b.json: the baseline is not a JSON report of dsh-audit check"),
    ('{"schema_version": 1, "tool": {"name": "dsh-audit"}, "findings": [{"rule": 1}]}',
     "b.json: the baseline is not a JSON report of dsh-audit check (a finding without rule or message)"),
    # session 45: each refusal a sentence, and a newer message_wording refused as a newer schema_version is
    (_REPORT.format(3, 2), "b.json: the baseline's schema_version is 3, written by a newer dsh-audit: this "
                           "dsh-audit reads schema_version 1 and 2"),
    (_REPORT.format('"2"', 2), "b.json: the baseline's schema_version is a string ('2'), not a whole number: this "
                               "dsh-audit reads schema_version 1 and 2"),
    (_REPORT.format(0, 2), "b.json: the baseline's schema_version is 0: this dsh-audit reads schema_version 1 and 2"),
    (_REPORT.format(2, 3), "b.json: the baseline's message_wording is 3, written by a newer dsh-audit: this "
                           "dsh-audit reads message_wording 1 and 2"),
    (_REPORT.format(2, 1.5), "b.json: the baseline's message_wording is a fraction, not a whole number: this "
                             "dsh-audit reads message_wording 1 and 2"),
    (_REPORT.format(2, "null"), "b.json: the baseline's message_wording is null, not a whole number: this "
                                "dsh-audit reads message_wording 1 and 2"),
    (_REPORT.format(2, 0), "b.json: the baseline's message_wording is 0: this dsh-audit reads message_wording 1 and 2"),
])
def test_a_bad_baseline_is_one_error_naming_json_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str | None,
        said: str) -> None:
    _two_logs(tmp_path)
    monkeypatch.chdir(tmp_path)
    if text is not None:
        (tmp_path / "b.json").write_text(text, "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", "--baseline", "b.json",
                            "--sarif", "r.sarif")
    assert (code, out, err) == (2, "", [f"error: {said}" + ("" if "(hint: " in said else f" {_HINT}")])
    assert not (tmp_path / "r.sarif").exists()


def test_the_policy_names_the_baseline_relative_to_its_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _two_logs(tmp_path)
    (tmp_path / "conf").mkdir()
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", "--json-report",
                  "conf/b.json")[0] == 1
    (tmp_path / "conf" / "pyproject.toml").write_text(
        '[tool.dsh-audit]\nrequire-capture = true\n\n[tool.dsh-audit.check]\nbaseline = "b.json"\n', "utf-8")
    policy = load_policy("conf/pyproject.toml")
    assert policy.baseline == "conf/b.json" and policy.to_json()["baseline"] == "conf/b.json"
    assert "baseline" not in load_policy("policy.toml").to_json()
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--policy", "conf/pyproject.toml")
    assert code == 0
    assert _summary(out).endswith("0 failing, 2 baselined (policy: conf/pyproject.toml)")
    # --baseline wins over the policy's
    (tmp_path / "other.json").write_text('{"schema_version": 1, "tool": {"name": "dsh-audit"}, "findings": []}', "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--policy", "conf/pyproject.toml",
                            "--baseline", "other.json")
    assert code == 1
    (tmp_path / "conf" / "pyproject.toml").write_text('[tool.dsh-audit.check]\nbaseline = 3\n', "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--policy", "conf/pyproject.toml")
    assert (code, err) == (2, ["error: conf/pyproject.toml:2: [tool.dsh-audit.check] key 'baseline' must be a file "
                               "name (hint: a JSON report written by `dsh-audit check --json-report FILE`)"])


def test_each_baseline_finding_accepts_one_finding(tmp_path: Path) -> None:
    chat_log(tmp_path / "a.jsonl", "s-a")
    (tmp_path / "p.toml").write_text(_STRICT, "utf-8")
    result = run_check([str(tmp_path / "a.jsonl")], policy=load_policy(tmp_path / "p.toml"))
    twice = Finding("DSH810", "info", "no capture given or found beside the log (wire.jsonl)", "elsewhere/a.jsonl",
                    session_id="s-a", fails=True)
    (tmp_path / "b.json").write_text(json.dumps({"schema_version": 1, "tool": {"name": "dsh-audit"},
                                                 "findings": [twice.to_json(), twice.to_json()]}), "utf-8")
    out = apply_baseline(result, load_baseline(tmp_path / "b.json"))
    assert (out.passed, out.counts()["baselined"], out.baseline_gone, out.notes[-1]) == (
        True, 1, 1, "1 baseline entry no longer occurs")
    assert out.findings[0].format() == (f"{tmp_path / 'a.jsonl'}: DSH810 info baselined: no capture given or found "
                                        "beside the log (wire.jsonl) (hint: pass --capture FILE, or put a "
                                        "wire.jsonl holding the log's requests beside it or up to four folders "
                                        "above it)")


def test_a_folded_run_counts_its_lines_baselined_and_one_baseline_entry_gone(tmp_path: Path) -> None:
    """Review A (session 45): a folded run of 6 junk lines is 6 baselined, yet the baseline keeps it
    as one entry: the gone note counts entries, in its own word, so the two counts do not read alike."""
    from dsh_audit.gate import CheckResult, Policy, SessionCheck
    from dsh_audit.report import format_markdown

    run = Finding("DSH111", "error", "lines 2-7: no integer seq", "a.jsonl", line=2, session_id="s-a", fails=True,
                  lines=6)
    gone = dict(run.to_json(), line=9, message="lines 9-12: no integer seq")
    (tmp_path / "b.json").write_text(json.dumps({"schema_version": 1, "tool": {"name": "dsh-audit"},
                                                 "findings": [run.to_json(), gone]}), "utf-8")
    check = SessionCheck("a.jsonl", "s-a", findings=(run,))
    out = apply_baseline(CheckResult((check,), (run,), Policy()), load_baseline(tmp_path / "b.json"))
    assert (out.counts()["baselined"], out.baseline_gone, out.notes) == (6, 1, ("1 baseline entry no longer occurs",))
    assert format_markdown(out).splitlines()[2:4] == [
        "1 log(s), 0 request(s); findings: 6 error(s), 0 warning(s), 0 info; 0 failing, 6 baselined (policy: "
        "defaults).", "1 baseline entry no longer occurs."]
    from dsh_audit.report._html_sessions import _headline, _verdict  # the page counts the run's lines too
    assert (_headline(out), _verdict(out.sessions[0])) == (
        {"state": "passed", "text": "check passed: 6 baselined finding(s)"}, "passed: 6 baselined finding(s)")


@needs_corpus
def test_a_capture_finding_naming_its_log_matches_from_another_checkout(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for checkout in ("one", "two"):
        shutil.copytree(LIVE / "a-chat", tmp_path / checkout / "a-chat")
        wire = tmp_path / checkout / "a-chat" / "wire.jsonl"
        wire.write_bytes(wire.read_bytes()[:-5000])  # request 2 has no captured send: DSH813
    monkeypatch.chdir(tmp_path / "one")
    code, out, err = invoke(monkeypatch, capsys, "check", "a-chat", "--json-report", str(tmp_path / "b.json"))
    assert code == 1
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", str(tmp_path / "two" / "a-chat"), "--baseline", "b.json",
                            "--sarif", "r.sarif")
    assert code == 0
    assert _summary(out) == ("PASSED: 1 log(s), 3 request(s), 1 error(s), 0 warning(s), 0 info, 0 failing, "
                             "1 baselined (policy: defaults)")
    results = json.loads((tmp_path / "r.sarif").read_text("utf-8"))["runs"][0]["results"]
    assert [(r["ruleId"], r["level"], r["baselineState"]) for r in results] == [("DSH813", "warning", "unchanged")]


@needs_corpus
def test_a_capture_finding_matches_when_the_capture_is_named_by_another_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A capture given with ``--capture`` from outside the log's folder is named by another path
    in another checkout (relative there, absolute here): the finding still matches."""
    for checkout in ("one", "two"):
        shutil.copytree(LIVE / "a-chat" / "session-logs", tmp_path / checkout / "logs")
        rows = (LIVE / "a-chat" / "wire.jsonl").read_text("utf-8").splitlines()
        first = json.loads(rows[0])
        first["body"] = first["body"].replace("You are an AI agent", "You are an IA agent", 1)
        del first["body_sha256"]  # edited on purpose (as long as it was)
        (tmp_path / checkout / "caps").mkdir()
        (tmp_path / checkout / "caps" / "wire.jsonl").write_text(
            "\n".join([json.dumps(first), *rows[1:]]) + "\n", "utf-8")
    monkeypatch.chdir(tmp_path / "one")
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--capture", "caps/wire.jsonl",
                            "--json-report", str(tmp_path / "b.json"))
    report = json.loads((tmp_path / "b.json").read_text("utf-8"))
    assert code == 1
    assert [(f["rule"], f["message"][:66]) for f in report["findings"]] == [
        ("DSH811", "loop request 1 is different vs caps/wire.jsonl line 1 at byte 80 ("),
        ("DSH821", "request 2 breaks the prefix cache of request 1: cause unrecorded_m")]
    monkeypatch.chdir(tmp_path)
    capture = str(tmp_path / "two" / "caps" / "wire.jsonl")
    code, out, err = invoke(monkeypatch, capsys, "check", "two/logs", "--capture", capture, "--baseline", "b.json")
    assert (code, err) == (0, ["note: 1 request(s) priced from the capture's usage (their log holds none)"])  # its title call is priced from the capture
    assert _summary(out) == ("PASSED: 1 log(s), 3 request(s), 2 error(s), 0 warning(s), 0 info, 0 failing, "
                             "2 baselined (policy: defaults)")


def test_baseline_findings_of_sessions_not_checked_are_not_gone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _two_logs(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, _, _ = invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", "--json-report", "b.json")
    assert code == 1
    code, out, err = invoke(monkeypatch, capsys, "check", "logs/b.jsonl", "--policy", "policy.toml",
                            "--baseline", "b.json", "--markdown", "s.md")
    assert (code, err) == (0, ["note: 1 baseline entry is of a session not checked"])
    assert "1 baseline entry is of a session not checked." in (tmp_path / "s.md").read_text("utf-8")
    result = run_check([str(tmp_path / "logs" / "b.jsonl")], policy=load_policy(tmp_path / "policy.toml"))
    gone = Finding("DSH810", "info", "another message", "logs/b.jsonl", session_id="s-b", fails=True)
    report = json.loads((tmp_path / "b.json").read_text("utf-8"))
    report["findings"].append(gone.to_json())
    (tmp_path / "b.json").write_text(json.dumps(report), "utf-8")
    out = apply_baseline(result, load_baseline(tmp_path / "b.json"))
    assert (out.counts()["baselined"], out.baseline_gone, out.baseline_unchecked, out.notes[-2:]) == (
        1, 1, 1, ("1 baseline entry no longer occurs", "1 baseline entry is of a session not checked"))


PI = ROOT.parent / "shared" / "corpus" / "live-pi" / "c3-openai-compat"


@pytest.mark.skipif(not PI.is_dir(), reason="../shared/corpus is absent")
def test_a_baseline_written_before_unrendered_findings_moved_to_their_refusal_still_matches(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """tests/data/baseline-before-session39.json is the JSON report of the release before DSH815
    was located at the refusal's own event (its findings' seqs are the requests': 12, 13, 34, ...),
    written on another machine (/home/ci/audit/): its six unrendered requests are still accepted,
    keyed by request (a capture verdict's seq says only where a report points)."""
    log = PI / "session-logs" / "session-e7611f7a-95b5-4af3-83c0-7c6d07d82016.jsonl"
    shutil.copy(log, tmp_path / log.name)
    shutil.copy(PI / "wire.jsonl", tmp_path / "wire.jsonl")
    baseline = ROOT / "tests" / "data" / "baseline-before-session39.json"
    monkeypatch.chdir(tmp_path)
    code, out, _err = invoke(monkeypatch, capsys, "check", log.name, "--capture", "wire.jsonl",
                             "--baseline", str(baseline))
    assert (code, _summary(out)) == (0, "PASSED: 1 log(s), 6 request(s), 0 error(s), 6 warning(s), 0 info, "
                                        "0 failing, 6 baselined (policy: defaults)")
    code, out, _err = invoke(monkeypatch, capsys, "check", log.name, "--capture", "wire.jsonl")
    assert (code, _summary(out)) == (1, "FAILED: 1 log(s), 6 request(s), 0 error(s), 6 warning(s), 0 info, "
                                        "6 failing (policy: defaults)")
