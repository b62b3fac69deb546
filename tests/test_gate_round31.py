"""Round 31, the gate's findings in its reports (a CI engineer's tour): one hint per finding, the
finding's own before its rule's, in every format (JSON, SARIF, JUnit, Markdown, the terminal);
DSH813/DSH814 say why alignment left a request or a capture alone and name the complete
``dsh-audit diff`` command; SARIF levels follow the policy, a ``.zstd`` log's results carry no
region, relative URIs have a base; JUnit testcases are unique per log and fail once."""

from __future__ import annotations

import json
import shlex
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from _cli import chat_log, invoke
from _copy_log import other_answer
from dsh_audit.cache import _session as cache_session
from dsh_audit.cache import load_prices
from dsh_audit.gate import CheckResult, Finding, Policy, SessionCheck, run_check
from dsh_audit.gate._run import check_group
from dsh_audit.report import build_sarif, format_junit, format_markdown
from dsh_audit.session import _session as session_session
from dsh_audit.testing import LogBuilder

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
COMPAT = CORPUS / "live-pi" / "c3-openai-compat"
TOOLS = CORPUS / "live" / "b-tools"
SAMPLES = ROOT / "sample_logs"
needs_pi = pytest.mark.skipif(not COMPAT.is_dir(), reason="shared corpus (live-pi) not present")
needs_live = pytest.mark.skipif(not TOOLS.is_dir(), reason="shared corpus (live) not present")

PI_LOG = ("c3/home/sessions/--home-dev-dsh-runs-c-c3-openai-compat-ws--/"
          "session-e7611f7a-95b5-4af3-83c0-7c6d07d82016/session.jsonl.zstd")
PI_REASON = ("title request 0 is unrendered vs c3/wire.jsonl line 2: cannot render: no pi-ai model facts for "
             "local-openai/local-coder: a hand-declared route's models are described by DSH's route "
             "configuration, which the log does not record")
PI_HINT = ("pass --routes FILE (DSH's llm-pi-ai route configuration), or declare the route in c3/home/cordis.patch.yml "
           "(the patch layer of the DSH home the log was recorded in, read when no --routes is given)")


# -- 1, 2, 4: DSH815's own hint, once, in every format; SARIF's level, region and base ------------

@needs_pi
def test_an_unrendered_request_shows_its_own_hint_once_in_every_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(COMPAT / "home", tmp_path / "c3" / "home")
    shutil.copy(COMPAT / "wire.jsonl", tmp_path / "c3" / "wire.jsonl")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", "c3", "--json-report", "out.json", "--sarif", "out.sarif",
                            "--junit", "out.xml", "--markdown", "out.md", "--format", "csv")
    assert code == 1

    finding = json.loads((tmp_path / "out.json").read_text("utf-8"))["findings"][0]
    assert (finding["rule"], finding["message"], finding["hint"], finding["fails"]) == (
        "DSH815", PI_REASON, PI_HINT, True)

    run = json.loads((tmp_path / "out.sarif").read_text("utf-8"))["runs"][0]
    result = run["results"][0]
    assert result["message"]["text"] == f"{PI_REASON} (hint: {PI_HINT})"
    assert result["level"] == "error"  # a warning rule, failed by the policy (capture-fail)
    # a .zstd log's lines are lines of its decompressed text: no region, the event as logical location
    assert result["locations"] == [{
        "physicalLocation": {"artifactLocation": {"uri": PI_LOG, "uriBaseId": "%SRCROOT%"}},
        "logicalLocations": [{"name": "seq 12", "kind": "object",
                              "fullyQualifiedName": "session-e7611f7a-95b5-4af3-83c0-7c6d07d82016 seq 12"}]}]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": tmp_path.as_uri() + "/"}}

    case = ET.parse(tmp_path / "out.xml").getroot()[0][1]  # request 0 (title)
    failures = case.findall("failure")
    assert len(failures) == 1
    assert failures[0].text == f"{PI_LOG}:14: seq 12: request 0: DSH815 warning (fails the gate: capture-fail): {PI_REASON}\nhint: {PI_HINT}"

    markdown = (tmp_path / "out.md").read_text("utf-8").splitlines()
    at = markdown.index("### Failing findings (6)") + 2
    assert markdown[at:at + 2] == [
        f"- **DSH815** warning: {PI_REASON} — {PI_LOG}:14 seq 12 request 0".replace("_", "\\_"),
        "  - hint: pass --routes FILE (DSH's llm-pi-ai route configuration), or declare the route in "
        "c3/home/cordis.patch.yml (the patch layer of the DSH home the log was recorded in, read when no --routes "
        "is given)"]
    assert sum(line.count("hint") for line in markdown) == 6  # one a finding


def test_markdown_shows_the_hint_that_names_the_policy_key() -> None:
    b = Finding("DSH822", "error", "request 2 breaks the prefix cache of request 1: cause header_change (system)",
                "logs/a.jsonl", line=9, seq=7, session_id="s", request=2, fails=True,
                hint="add the cause to allowed-break-causes, or stop the behaviour that breaks the cache")
    check = SessionCheck(path="logs/a.jsonl", session_id="s", findings=(b,))
    text = format_markdown(CheckResult(sessions=(check,), findings=(b,), policy=Policy()))
    assert text.split("### Failing findings (1)\n\n", 1)[1] == (
        "- **DSH822** error: request 2 breaks the prefix cache of request 1: cause header\\_change (system) — "
        "logs/a.jsonl:9 seq 7 request 2\n"
        "  - hint: add the cause to allowed-break-causes, or stop the behaviour that breaks the cache\n")


def test_a_refusal_shows_its_errors_hint_once_not_the_rules_as_well(tmp_path: Path) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-unknown")
    lines = log.read_text("utf-8").splitlines()
    last = json.loads(lines[-1])
    for seq in (last["seq"] + 1, last["seq"] + 2):  # DSH refuses the first; validate lists both (DSH506)
        lines.append(json.dumps({"type": "myagent/note", "seq": seq, "time": last["time"], "data": {}}))
    log.write_text("\n".join(lines) + "\n", "utf-8")
    result = run_check([log], policy=Policy())
    refused = [f for f in result.findings if f.rule == "DSH801"]
    assert [(f.message, f.hint) for f in refused] == [(
        f'session "s-unknown" contains event type "myagent/note" (seq {last["seq"] + 1}) unknown to this harness '
        'and not marked ignorable',
        'a writer can mark plugin events "ignorable": true so readers may skip them')]
    assert [(f.rule, f.seq) for f in result.findings if f.rule == "DSH506"] == [("DSH506", last["seq"] + 2)]
    # JUnit: the log testcase fails once, its one <failure> lists the refusal and the second event's DSH506 (the
    # first's is the refusal: one fault, one finding)
    root = ET.fromstring(format_junit(result, base=str(tmp_path)))
    case = root.find("testsuite/testcase")
    assert case is not None
    assert [(f.get("type"), f.get("message")) for f in case.findall("failure")] == [(
        "DSH801 DSH506", f"DSH801: {refused[0].message} (and 1 more failing finding(s): DSH506)")]
    assert (root.get("tests"), root.get("failures"), root[0].get("failures")) == ("1", "1", "1")


def test_sarif_level_follows_the_policy_and_only_plain_logs_have_regions(tmp_path: Path) -> None:
    findings = [Finding("DSH812", "warning", "m", str(tmp_path / "a.jsonl"), line=3, seq=2, fails=True),
                Finding("DSH812", "warning", "m", str(tmp_path / "a.jsonl.zstd"), line=3, seq=2, fails=False),
                Finding("DSH810", "info", "m", "/elsewhere/b.jsonl", line=1),
                Finding("DSH811", "error", "m", "/elsewhere/b.jsonl", line=2)]  # let pass by the policy
    run = build_sarif(findings, rules=[], tool_version="0", base=str(tmp_path))["runs"][0]
    assert [(r["level"], r["locations"][0]["physicalLocation"]) for r in run["results"]] == [
        ("error", {"artifactLocation": {"uri": "a.jsonl", "uriBaseId": "%SRCROOT%"}, "region": {"startLine": 3}}),
        ("warning", {"artifactLocation": {"uri": "a.jsonl.zstd", "uriBaseId": "%SRCROOT%"}}),
        ("note", {"artifactLocation": {"uri": "file:///elsewhere/b.jsonl"}, "region": {"startLine": 1}}),
        ("warning", {"artifactLocation": {"uri": "file:///elsewhere/b.jsonl"}, "region": {"startLine": 2}})]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": tmp_path.as_uri() + "/"}}
    outside = build_sarif(findings[2:], rules=[], tool_version="0", base=str(tmp_path))["runs"][0]
    assert "originalUriBaseIds" not in outside  # no URI is relative to it


# -- 3: DSH813/DSH814 say why, and their hint is a command that runs as typed --------------------

def _unmatched(folder: Path) -> str:
    """A live log copied into ``folder`` with a capture beside it whose third send names another
    model (request 2 unmatched, DSH813; the send unexplained, DSH814); the log's file name."""
    folder.mkdir()
    log = shutil.copy(next((TOOLS / "session-logs").glob("session-*.jsonl")), folder)
    records = (TOOLS / "wire.jsonl").read_text("utf-8").splitlines()
    third = json.loads(records[2])
    third["body"] = third["body"].replace('"model":"deepseek-v4-flash"', '"model":"deepseek-v4-flasH"', 1)
    third.pop("body_sha256", None)
    records[2] = json.dumps(third)
    (folder / "wire.jsonl").write_text("\n".join(records) + "\n", "utf-8")
    return Path(log).name


@needs_live
def test_an_unmatched_request_says_why_and_its_diff_command_runs_as_typed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    name = _unmatched(tmp_path / "sp ace")  # the command quotes it
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, "check", "sp ace", "--format", "csv")
    assert code == 1
    command = f"dsh-audit diff 'sp ace/{name}' --capture 'sp ace/wire.jsonl'"
    assert [line for line in err if " (fails the gate: " in line] == [
        f"sp ace/{name}:35: seq 36: request 2: DSH813 error (fails the gate: capture-fail): loop request 2 is unmatched: no captured loop "
        "send of this session left on its route (deepseek-chat-completions, model deepseek-v4-flash) (hint: run "
        f"`{command}` for the alignment (check that the capture covers the whole session))",
        "sp ace/wire.jsonl:3: DSH814 error (fails the gate: capture-fail): captured loop request 2 (sp ace/wire.jsonl line 3) is explained by "
        f"no request of the checked logs: no rebuilt loop request of session {name[:-6]} left for POST "
        f"/chat/completions, model deepseek-v4-flasH (hint: run `{command}` for the alignment (the log is missing "
        "events for a call that was sent))"]
    words = shlex.split(command)
    code, out, err = invoke(monkeypatch, capsys, *words[1:], "--format", "csv")
    # diff's verdict on the mismatch, not a usage error
    assert (code, err) == (1, ["9 request(s): 8 identical, 1 unmatched; 1 capture(s) unexplained, 0 foreign: FAILED"])
    assert "deepseek-v4-flasH" in out


@needs_live
def test_markdown_shows_the_diff_command_the_finding_carries_as_code_and_no_span_of_a_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The command is the finding's own (``Finding.commands``), never read back out of its hint: a
    folder named like a command opens no span, a backtick in the quoted path closes none."""
    name = _unmatched(tmp_path / "a`b `dsh-audit x` c")
    monkeypatch.chdir(tmp_path)
    code, _, _ = invoke(monkeypatch, capsys, "check", "a`b `dsh-audit x` c", "--markdown", "out.md")
    markdown = (tmp_path / "out.md").read_text("utf-8").split("### Failing findings (2)\n\n", 1)[1]
    command = f"dsh-audit diff 'a`b `dsh-audit x` c/{name}' --capture 'a`b `dsh-audit x` c/wire.jsonl'"
    assert (code, markdown) == (1, (
        "- **DSH813** error: loop request 2 is unmatched: no captured loop send of this session left on its route "
        f"(deepseek-chat-completions, model deepseek-v4-flash) — a\\`b \\`dsh-audit x\\` c/{name}:35 seq 36 request 2\n"
        f"  - hint: run ``{command}`` for the alignment (check that the capture covers the whole session)\n"
        "- **DSH814** error: captured loop request 2 (a\\`b \\`dsh-audit x\\` c/wire.jsonl line 3) is explained by no "
        f"request of the checked logs: no rebuilt loop request of session {name[:-6]} left for POST /chat/completions, "
        "model deepseek-v4-flasH — a\\`b \\`dsh-audit x\\` c/wire.jsonl:3\n"
        f"  - hint: run ``{command}`` for the alignment (the log is missing events for a call that was sent)\n"))


# -- 5: JUnit testcases are unique per log --------------------------------------------------------

def test_junit_names_each_log_by_its_path_so_copies_of_a_session_stay_apart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("one", "two", "three"):  # one session id, three different logs
        b = LogBuilder(session_id="s-same")
        with b.turn(name), b.step():
            b.assistant(name)
        b.write_jsonl(tmp_path / "ref" / f"{name}.jsonl", packed=False)
    monkeypatch.chdir(tmp_path)
    other_answer(SAMPLES / "tools" / "session.jsonl", tmp_path / "tools" / "session.jsonl")  # differs: each read
    result = run_check([tmp_path / "ref", tmp_path / "tools", SAMPLES / "sessions"], policy=Policy())
    root = ET.fromstring(format_junit(result))
    cases = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert len(cases) == len(set(cases)) == int(root.get("tests") or 0)
    suites = [s.get("name") for s in root.iter("testsuite")]
    assert suites[:3] == ["ref/one.jsonl (s-same)", "ref/three.jsonl (s-same)", "ref/two.jsonl (s-same)"]
    assert cases[:2] == [("dsh-audit.ref/one.jsonl", "log"),
                         ("dsh-audit.ref/one.jsonl", "request 0 (loop turn 1 step 1 attempt 1)")]
    tools = [s for s in suites if s is not None and "session-sample-tools" in s]
    assert len(tools) == 2 and tools[0] != tools[1]  # tools/ and sample_logs/sessions/.../session-sample-tools
    assert root.get("failures") == "0"


@pytest.mark.parametrize("outline", [True, False], ids=["streamed", "whole"])
def test_a_route_warning_in_the_words_of_a_log_warning_is_still_said(
        outline: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """check leaves a log's own warnings to its findings (DSH103) by asking for the route file's
    alone, streamed or read whole: never by comparing words, which dropped a route warning that
    says what the log's own one says (session 40)."""
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-words")
    words = f"{log}: the same words"
    attribute = cache_session.attribute_log

    def worded(opened: Any, **options: Any) -> Any:  # the log's own warning, as a torn tail's would be said
        opened.warnings.append(words)
        return attribute(opened, **options)

    monkeypatch.setattr(cache_session, "attribute_log", worded)
    monkeypatch.setattr(cache_session, "attachment_warnings", lambda images: [words])
    monkeypatch.setattr(session_session, "attachment_warnings", lambda images: [words])
    group = check_group([str(log)], policy=Policy(), prices=load_prices(search_from="/"), outline=outline)
    assert (group.route_warnings, group.notes) == ({str(log): (words,)}, [f"{log}: {words}"])
