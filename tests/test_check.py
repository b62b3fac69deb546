"""``dsh-audit check``: the gate passes on recorded sessions and fails on injected faults."""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest
from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded
from dsh_audit.errors import UsageError
from dsh_audit.gate import Policy, find_capture, load_policy, run_check
from dsh_audit.testing import LogBuilder

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
LIVE = CORPUS / "live"
SAMPLES = ROOT / "sample_logs"
needs_corpus = pytest.mark.skipif(not LIVE.is_dir(), reason="shared corpus not present")
SESSION = "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824"  # live/c-change


class _Run:
    def __init__(self, code: int, output: str, err: str) -> None:
        self.exit_code, self.output, self.err = code, output, err


@pytest.fixture
def _check(monkeypatch, capsys):
    """Run ``dsh-audit check ARGS`` through the real entry point (exit codes as a shell sees them)."""
    def run(*args):
        monkeypatch.setattr(sys, "argv", ["dsh-audit", "check", *map(str, args)])
        code = run_guarded(cli)
        out, err = capsys.readouterr()
        assert "Traceback" not in err
        return _Run(code, out, err)
    return run


@pytest.fixture(autouse=True)
def _no_project_policy(tmp_path, monkeypatch):
    """Run from a folder without a pyproject.toml, so the strict defaults apply."""
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def _scenario(tmp_path: Path, name: str = "c-change") -> Path:
    dst = tmp_path / name
    dst.mkdir()
    shutil.copytree(LIVE / name / "session-logs", dst / "session-logs")
    shutil.copy(LIVE / name / "wire.jsonl", dst / "wire.jsonl")
    return dst


def test_check_passes_on_the_curated_sample_logs(_check):
    result = _check(SAMPLES / "sessions", SAMPLES / "chat", SAMPLES / "tools")
    assert result.exit_code == 0, result.output
    assert "PASSED: 8 log(s), 28 request(s), 0 error(s), 0 warning(s), 8 info, 0 failing" in result.output


def test_check_passes_on_all_sample_logs(_check):
    result = _check(SAMPLES)
    assert result.exit_code == 0, result.output


@needs_corpus
@pytest.mark.parametrize("scenario", sorted(p.name for p in LIVE.iterdir()) if LIVE.is_dir() else [])
def test_check_passes_on_each_live_scenario_with_its_capture(scenario, _check):
    result = run_check([LIVE / scenario], policy=Policy())
    assert result.passed, [f.format() for f in result.failing]
    assert result.findings == ()
    for check in result.sessions:
        assert Path(check.capture_path).resolve() == (LIVE / scenario / "wire.jsonl").resolve()
        assert check.captures and {r.verdict for r in check.captures} == {"identical"}


@needs_corpus
def test_check_cli_passes_on_the_whole_live_corpus(tmp_path, _check):
    report = tmp_path / "r.json"
    result = _check(LIVE, "--json-report", report)
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    assert (data["passed"], data["counts"]["sessions"], data["counts"]["requests"], data["findings"]) == (True, 11, 66, [])


@needs_corpus
def test_find_capture_walks_up_to_the_scenario_folder():
    logs = sorted((LIVE / "f-fork").rglob("session.jsonl.zstd")) + sorted((LIVE / "f-fork" / "session-logs").iterdir())
    assert {find_capture(p).resolve() for p in logs} == {(LIVE / "f-fork" / "wire.jsonl").resolve()}
    assert find_capture(SAMPLES / "chat" / "session.jsonl") is None


@needs_corpus
def test_one_changed_character_in_a_captured_body_fails_with_dsh811(tmp_path, _check):
    scenario = _scenario(tmp_path)
    lines = (scenario / "wire.jsonl").read_text().splitlines()
    record = json.loads(lines[3])
    at = record["body"].index('"content":"') + len('"content":"')
    record["body"] = record["body"][:at] + "X" + record["body"][at + 1:]
    record["body_sha256"] = hashlib.sha256(record["body"].encode()).hexdigest()
    record["body_bytes"] = len(record["body"].encode())
    lines[3] = json.dumps(record)
    (scenario / "wire.jsonl").write_text("\n".join(lines) + "\n")

    sarif = tmp_path / "out.sarif"
    result = _check(scenario, "--sarif", sarif)
    assert result.exit_code == 1, result.output
    log = scenario / "session-logs" / f"{SESSION}.jsonl"
    failing = [line for line in result.output.splitlines() if " (fails the gate: " in line]
    assert failing == [f"{log}:52: seq 52: request 3: DSH811 error (fails the gate: capture-fail): loop request 3 "
                       f"is different vs "
                       f"{scenario / 'wire.jsonl'} line 4 at byte 67 (messages[0].content) (hint: run "
                       f"`dsh-audit diff {log} --capture {scenario / 'wire.jsonl'}` for the JSON paths that differ)"]
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    assert [(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]) for r in results] == [
        ("DSH811", "error", {"artifactLocation": {"uri": log.as_uri()}, "region": {"startLine": 52}})]


@needs_corpus
def test_a_dropped_header_change_is_an_unexplained_break(tmp_path, _check):
    scenario = _scenario(tmp_path)
    log = scenario / "session-logs" / f"{SESSION}.jsonl"
    out = []
    for line in log.read_text().splitlines():
        if line.startswith('{"type":"request/header","seq":51,'):
            event = json.loads(line)  # same seq, so the log stays valid: DSH skips an ignorable event
            line = json.dumps({"type": "x-test/dropped", "seq": 51, "time": event["time"], "data": {},
                               "ignorable": True}, separators=(",", ":"))
        out.append(line)
    log.write_text("\n".join(out) + "\n")

    result = run_check([scenario], policy=Policy())
    assert not result.passed
    assert [(f.rule, f.request, f.seq, f.line, f.fails) for f in result.findings] == [
        ("DSH507", None, 51, 51, False),
        ("DSH811", 3, 52, 52, True),
        ("DSH821", 3, 52, 52, True),
    ]
    assert result.findings[2].message.startswith("request 3 breaks the prefix cache of request 2: cause "
                                                 "unrecorded_mutation")
    assert _check(scenario).exit_code == 1


@needs_corpus
def test_policy_allow_list_and_cache_ratio(tmp_path, _check):
    policy_file = tmp_path / "policy.toml"
    policy_file.write_text('allowed-break-causes = ["compaction"]\nmin-cache-hit-ratio = 0.7\n')
    result = run_check([LIVE / "c-change" / "home"], policy=load_policy(policy_file))
    assert [(f.rule, f.request) for f in result.failing] == [
        ("DSH822", 2), ("DSH822", 3), ("DSH822", 4), ("DSH822", 6), ("DSH822", 7), ("DSH831", None)]
    assert result.failing[-1].message == ("actual cache-hit ratio 62.6% is below the policy bound 70.0% "
                                          "(36160 of 57743 prompt tokens read from cache)")  # the title call's, found
    assert _check(LIVE / "c-change" / "home", "--policy", policy_file).exit_code == 1


def test_a_ratio_bound_on_a_log_without_usage_is_a_warning_not_a_silent_pass(tmp_path, _check):
    """A chat whose replies record no usage: the bound cannot be checked, and check says so (DSH832).
    (The sample chat logs its cache reads, as DSH's DeepSeek adapter does: its ratio is measured.)"""
    policy_file = tmp_path / "policy.toml"
    policy_file.write_text("min-cache-hit-ratio = 0.5\n")
    b = LogBuilder(session_id="session-no-usage")
    with b.turn("Hi! Who are you?"):
        with b.step():
            b.title("Who are you")
            b.assistant("A coding agent.", usage=None)
    with b.turn("And what did I ask?"):
        with b.step():
            b.assistant("Who I am.", usage=None)
    log = b.write_jsonl(tmp_path / "session-no-usage" / "session.jsonl")
    result = run_check([log], policy=load_policy(policy_file))
    assert [(f.rule, f.severity, f.message) for f in result.failing] == [
        ("DSH832", "warning", "the cache-hit ratio cannot be measured (no usage in the log's 3 request(s)), so the "
                              "policy bound 50.0% was not checked")]
    assert _check(log, "--policy", policy_file).exit_code == 1
    assert [f.rule for f in run_check([log]).findings] == ["DSH810"]  # no bound, nothing to say
    measured = run_check([SAMPLES / "chat" / "session.jsonl"], policy=load_policy(policy_file))
    assert [(f.rule, f.message) for f in measured.failing] == [
        ("DSH831", "actual cache-hit ratio 26.9% is below the policy bound 50.0% (128 of 475 prompt tokens read "
                   "from cache)")]


def test_policy_from_pyproject_and_bad_keys(tmp_path, _check):
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.dsh-audit]\nrequire-capture = true\nignore = ["DSH4"]\n'
                                           '[tool.dsh-audit.cache]\nopenai-zero-data-retention = false\n')
    policy = load_policy(search_from=project / "sub")
    assert (policy.require_capture, policy.ignore, policy.source) == (True, ("DSH4",), str(project / "pyproject.toml"))
    assert policy.validation_fails("error") and not policy.validation_fails("warning")
    bad = tmp_path / "bad.toml"
    bad.write_text("requre-capture = true\n")
    with pytest.raises(UsageError, match="unknown policy key 'requre-capture' \\(did you mean 'require-capture'\\?\\)"):
        load_policy(bad)
    result = _check(SAMPLES, "--policy", bad)
    assert result.exit_code == 2


def test_require_capture_fails_sample_logs(tmp_path, _check):
    strict = tmp_path / "strict.toml"
    strict.write_text("[tool.dsh-audit]\nrequire-capture = true\n")
    result = _check(SAMPLES / "chat", "--policy", strict)
    assert result.exit_code == 1
    assert ("DSH810 info (fails the gate: require-capture): no capture given or found beside the log (wire.jsonl)"
            in result.output)


def test_bad_input_is_exit_2(tmp_path, _check):
    assert _check(tmp_path / "missing").exit_code == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _check(empty).exit_code == 2
    assert _check().exit_code == 2


def test_refused_log_is_a_failing_finding(tmp_path, _check):
    log = tmp_path / "broken" / "session.jsonl"
    log.parent.mkdir()
    log.write_text('{"type":"session","version":9,"id":"s1","createdAt":1800000000000,"cwd":"/w","delegationDepth":0}\n')
    result = run_check([log], policy=Policy())
    assert not result.passed
    assert result.failing[0].rule == "DSH801" and result.failing[0].line == 1
    assert result.sessions[0].error is not None


def test_step_summary_is_appended(tmp_path, monkeypatch, _check):
    summary = tmp_path / "summary.md"
    summary.write_text("before\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = _check(SAMPLES / "tools")
    assert result.exit_code == 0
    text = summary.read_text()
    assert text.startswith("before\n## dsh-audit check: ✅ passed: no breaks\n")


def test_ci_doc_lists_every_gate_rule_and_the_default_policy():
    from dsh_audit._config_read import tomllib

    from dsh_audit.gate import GATE_RULES

    doc = (ROOT / "docs" / "ci.md").read_text()
    rows = [line.split(" | ") for line in doc.splitlines() if line.startswith("| DSH8")]
    assert [(r[0][2:], r[1], r[2].rstrip(" |")) for r in rows] == [
        (g.id, g.name, g.severity) for g in GATE_RULES.values()]
    block = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    documented = Policy.from_mapping(tomllib.loads(block)["tool"]["dsh-audit"], source="defaults")
    assert documented == Policy()
