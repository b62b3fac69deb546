"""A user tour of ``check`` and ``report`` as a CI gate (session 33, issues 13 and 14).

1. A baseline matches on what identifies a finding, not on the policy's own values: DSH831's and
   DSH832's messages state the bound, and loosening it turned a baselined finding into a new
   failure. Baselines written before (their messages state the bound) match the same way.
2. ``report`` judges as ``check`` does: the policy and its baseline, ``--baseline``, ``--no-baseline``.
3. The first baseline can be written: a missing baseline that ``--json-report`` writes is not
   read; the error's hint gives a command that works; ``--no-baseline``.
4. Every output of one run lists the logs in one order (the table's).
5. check's costs: the Markdown has no-cache and off-peak costs and a totals row; the table and
   CSV a cost column; the ratio is "hit ratio" as in ``sessions`` and ``stats``.
6. The JSON report spells numbers as every other ``--json`` does.
7. The JSON report lists the price table's caveats.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.gate import Policy, load_baseline, run_check
from dsh_audit.gate._baseline import finding_key
from dsh_audit.testing import LogBuilder

from _cli import chat_log, invoke
from test_tables38 import named_logs

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _plain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    for name in [name for name in os.environ if name.startswith("DSH_AUDIT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("COLUMNS", "200")


def _log(path: Path, session_id: str, reads: list[int], *, created_at: int = 1_800_000_000_000) -> Path:
    """A session of one request per entry of ``reads``: 1000 cache-miss tokens, ``reads`` read."""
    b = LogBuilder(session_id=session_id, created_at=created_at)
    for k, read in enumerate(reads):
        with b.turn(f"t{k}"), b.step():
            b.assistant(f"a{k}", usage={"inputTokens": 1000, "outputTokens": 10, "cacheReadTokens": read})
    return b.write_jsonl(path, packed=False)


@pytest.fixture
def ratios(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``logs/low`` (hit ratio 31.0%) and ``logs/mid`` (41.2%), the current folder."""
    _log(tmp_path / "logs" / "low" / "session.jsonl", "s-low", [0, 900])
    _log(tmp_path / "logs" / "mid" / "session.jsonl", "s-mid", [0, 1000, 1100])
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _policy(folder: Path, bound: float) -> None:
    (folder / "policy.toml").write_text(f"min-cache-hit-ratio = {bound}\n", "utf-8")


def _last(out: str) -> str:
    return out.splitlines()[-1]


# -- 1. the baseline key leaves out the policy's values --------------------------------------------

#: The DSH831 findings of ``ratios`` under a bound of 0.6, as dsh-audit 0.1.0 at 654155d (before
#: this change) wrote them with ``check logs --policy policy.toml --json-report head.json``.
HEAD_FINDINGS = [
    {"rule": "DSH831", "severity": "error",
     "message": "actual cache-hit ratio 31.0% is below the policy bound 60.0% (900 of 2900 prompt tokens read "
                "from cache)",
     "path": "logs/low/session.jsonl", "line": None, "seq": None, "session_id": "s-low", "request": None,
     "fails": True, "hint": "run `dsh-audit cache` for the requests that missed and why"},
    {"rule": "DSH831", "severity": "error",
     "message": "actual cache-hit ratio 41.2% is below the policy bound 60.0% (2100 of 5100 prompt tokens read "
                "from cache)",
     "path": "logs/mid/session.jsonl", "line": None, "seq": None, "session_id": "s-mid", "request": None,
     "fails": True, "hint": "run `dsh-audit cache` for the requests that missed and why"}]


def test_loosening_the_bound_keeps_a_baselined_finding_baselined(
        ratios: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _policy(ratios, 0.6)
    code, out, _ = invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", "--json-report", "b.json")
    assert (code, _last(out)) == (1, "FAILED: 2 log(s), 5 request(s), 2 error(s), 0 warning(s), 2 info, 2 failing "
                                     "(policy: policy.toml)")
    _policy(ratios, 0.35)  # looser: s-mid's 41.2% passes it, s-low's 31.0% does not
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", "--baseline", "b.json")
    assert (code, _last(out)) == (0, "PASSED: 2 log(s), 5 request(s), 1 error(s), 0 warning(s), 2 info, 0 failing, "
                                     "3 baselined (policy: policy.toml)")  # and both logs' DSH810 (no capture)
    # the message printed still states the bound the run judged by (fit to COLUMNS=200)
    lines = out.splitlines()
    at = lines.index("logs/low/session.jsonl: DSH831 error baselined: actual cache-hit ratio 31.0% is below the policy "
                     "bound 35.0% (900 of 2900 prompt tokens read from cache) (hint: run `dsh-audit cache` for the "
                     "requests")
    assert lines[at + 1] == "  that missed and why)"
    assert err == ["note: 1 baseline entry no longer occurs"]
    _policy(ratios, 0.9)  # tighter: the same two findings, still the baseline's
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", "--baseline", "b.json")
    assert (code, err) == (0, [])
    assert _last(out).endswith("0 failing, 4 baselined (policy: policy.toml)")


def test_a_finding_the_looser_bound_does_not_hold_is_still_new(
        ratios: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _policy(ratios, 0.35)
    assert invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", "--json-report", "b.json")[0] == 1
    _policy(ratios, 0.6)  # tighter: s-mid's finding is new
    code, out, _ = invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", "--baseline", "b.json")
    assert (code, _last(out)) == (1, "FAILED: 2 log(s), 5 request(s), 2 error(s), 0 warning(s), 2 info, 1 failing, "
                                     "3 baselined (policy: policy.toml)")
    assert [line.split(": DSH831 ")[0] for line in out.splitlines()
            if "DSH831 error (fails the gate: min-cache-hit-ratio)" in line] == ["logs/mid/session.jsonl"]


@pytest.mark.parametrize(("bound", "said"), [
    (0.6, "0 failing, 2 baselined"),  # the policy it was written under
    (0.35, "0 failing, 1 baselined"),  # looser: still matches, the other one is gone
])
def test_a_baseline_written_before_this_change_matches(
        ratios: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], bound: float,
        said: str) -> None:
    (ratios / "head.json").write_text(json.dumps({
        "schema_version": 1, "tool": {"name": "dsh-audit", "version": "0.1.0"}, "passed": False,
        "sessions": [{"path": "logs/low/session.jsonl", "capture": None}, {"path": "logs/mid/session.jsonl",
                                                                           "capture": None}],
        "findings": HEAD_FINDINGS, "notes": []}), "utf-8")
    _policy(ratios, bound)
    code, out, _ = invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", "--baseline", "head.json")
    assert (code, _last(out)) == (0, f"PASSED: 2 log(s), 5 request(s), {2 if bound == 0.6 else 1} error(s), "
                                     f"0 warning(s), 2 info, {said} (policy: policy.toml)")


def test_every_gate_message_that_states_a_policy_value_is_keyed_without_it(tmp_path: Path) -> None:
    """DSH831 and DSH832 state the bound; a break's cause (DSH822) is the log's, not the allowed list."""
    unmeasured = chat_log(tmp_path / "u" / "session.jsonl", "s-u")  # no usage logged: DSH832
    low = _log(tmp_path / "l" / "session.jsonl", "s-l", [0, 900])
    keys = []
    for bound in (0.5, 0.9):
        result = run_check([str(unmeasured), str(low)], policy=Policy(min_cache_hit_ratio=bound))
        found = [f for f in result.findings if f.rule in ("DSH831", "DSH832")]
        assert [f.rule for f in found] == ["DSH832", "DSH831"]
        assert all(f"the policy bound {bound:.1%}" in f.message for f in found)  # what people read
        keys.append([finding_key(f.rule, f.session_id, f.request, f.seq, f.message, f.path) for f in found])
    assert keys[0] == keys[1]
    assert keys[0][0][4] == ("the cache-hit ratio cannot be measured (no usage in the log's 1 request(s)), so the "
                             "policy bound was not checked")


# -- 2. report applies the baseline --------------------------------------------------------------

def _page_data(page: Path) -> str:
    return page.read_text("utf-8")


def test_report_judges_with_the_policys_baseline_as_check_does(
        ratios: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (ratios / "pyproject.toml").write_text('[tool.dsh-audit]\nmin-cache-hit-ratio = 0.6\n\n'
                                           '[tool.dsh-audit.check]\nbaseline = "b.json"\n', "utf-8")
    code, _, err = invoke(monkeypatch, capsys, "check", "logs", "--json-report", "b.json")  # the first baseline
    assert code == 1 and err == ["note: the baseline " + str(ratios / "b.json") + " does not exist yet: checked "
                                 "without one, and --json-report b.json writes it"]
    code, out, _ = invoke(monkeypatch, capsys, "check", "logs")
    assert (code, _last(out)) == (0, "PASSED: 2 log(s), 5 request(s), 2 error(s), 0 warning(s), 2 info, 0 failing, "
                                     f"4 baselined (policy: {ratios / 'pyproject.toml'})")
    code, out, err = invoke(monkeypatch, capsys, "report", "logs", "-o", "page.html")
    assert (code, out, err) == (
        0, "wrote page.html: 2 log(s), 5 request(s), check passed: 4 baselined finding(s)\n", [])
    page = _page_data(ratios / "page.html")
    assert re.findall(r'"verdict":"((?:passed|failed): [^"]*)"', page) == ["passed: 2 baselined finding(s)"] * 2
    assert f'"policy":"{ratios / "pyproject.toml"}; baseline {ratios / "b.json"}: 4 baselined"' in page
    assert '"baselined":true' in page and '"fails":true' not in page
    # --no-baseline: every finding as it is; --baseline FILE: that one
    code, out, _ = invoke(monkeypatch, capsys, "report", "logs", "-o", "page.html", "--no-baseline")
    assert (code, out) == (
        0, "wrote page.html: 2 log(s), 5 request(s), check failed: 2 log(s) below the cache-hit ratio bound\n")
    assert re.findall(r'"verdict":"((?:passed|failed): [^"]*)"', _page_data(ratios / "page.html")) == [
        "failed: 1 log(s) below the cache-hit ratio bound"] * 2  # by cause, as the page's headline
    (ratios / "one.json").write_text(json.dumps({"schema_version": 1, "tool": {"name": "dsh-audit"},
                                                 "findings": HEAD_FINDINGS[:1]}), "utf-8")
    code, out, _ = invoke(monkeypatch, capsys, "report", "logs", "-o", "page.html", "--baseline", "one.json")
    assert (code, out) == (0, ("wrote page.html: 2 log(s), 5 request(s), check failed: 1 log(s) below the "
                          "cache-hit ratio bound \u00b7 1 baselined finding(s)\n"))


# -- 3. the first baseline -----------------------------------------------------------------------

def test_the_first_baseline_can_be_written_and_the_hint_says_how(
        ratios: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (ratios / "ci").mkdir()
    (ratios / "ci" / "pyproject.toml").write_text('[tool.dsh-audit]\nmin-cache-hit-ratio = 0.6\n\n'
                                                  '[tool.dsh-audit.check]\nbaseline = "dsh-baseline.json"\n', "utf-8")
    missing = "ci/dsh-baseline.json: cannot read the baseline: No such file or directory (hint: write the first " \
              "baseline with `dsh-audit check PATHS --json-report ci/dsh-baseline.json`, or check without it with " \
              "--no-baseline)"
    for command in ("check", "report"):
        code, out, err = invoke(monkeypatch, capsys, command, "logs", "--policy", "ci/pyproject.toml")
        assert (code, out, err) == (2, "", [f"error: {missing}"]), command
    # the hint's command works: the baseline it writes is not read
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--policy", "ci/pyproject.toml",
                            "--json-report", "ci/dsh-baseline.json")
    assert (code, err) == (1, ["note: the baseline ci/dsh-baseline.json does not exist yet: checked without one, and "
                               "--json-report ci/dsh-baseline.json writes it"])
    assert "baselined" not in out and len(load_baseline("ci/dsh-baseline.json").keys) == 4
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--policy", "ci/pyproject.toml")
    assert (code, err) == (0, []) and _last(out).endswith("0 failing, 4 baselined (policy: ci/pyproject.toml)")
    # --no-baseline ignores the policy's; with --baseline it is a usage error
    code, out, _ = invoke(monkeypatch, capsys, "check", "logs", "--policy", "ci/pyproject.toml", "--no-baseline")
    assert (code, _last(out)) == (1, "FAILED: 2 log(s), 5 request(s), 2 error(s), 0 warning(s), 2 info, 2 failing "
                                     "(policy: ci/pyproject.toml)")
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--baseline", "x.json", "--no-baseline")
    assert (code, out, err) == (2, "", ["error: --baseline FILE and --no-baseline ask for two things (hint: give one "
                                        "of them)"])


def test_a_broken_policy_baseline_hint_writes_a_new_one(
        ratios: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (ratios / "pyproject.toml").write_text('[tool.dsh-audit.check]\nbaseline = "b.json"\n', "utf-8")
    (ratios / "b.json").write_text("{", "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", "logs")
    hint = f"write a new one with `dsh-audit check PATHS --no-baseline --json-report {ratios / 'b.json'}`"
    assert (code, len(err)) == (2, 1) and err[0].endswith(f"(hint: {hint} (the policy's [tool.dsh-audit.check] "
                                                          "baseline))")
    assert invoke(monkeypatch, capsys, "check", "logs", "--no-baseline", "--json-report", str(ratios / "b.json"))[0] == 0
    assert invoke(monkeypatch, capsys, "check", "logs")[0] == 0


# -- 4. one order for every output of a run ------------------------------------------------------

def test_every_output_of_a_run_lists_the_logs_in_the_tables_order(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "sessions" / "--p--"
    older = chat_log(root / "s-b" / "session.jsonl", "s-b")
    newer = chat_log(root / "s-a" / "session.jsonl", "s-a")  # first by path, last by modification time
    os.utime(older, (1_600_000_000, 1_600_000_000))
    os.utime(newer, (1_700_000_000, 1_700_000_000))
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    code, out, _ = invoke(monkeypatch, capsys, "check", "--format", "csv", "--json-report", "r.json", "--markdown",
                          "r.md", "--junit", "r.xml", "--sarif", "r.sarif")
    assert code == 0
    expected = ["s-a", "s-b"]  # newest first
    assert [row["session"] for row in csv.DictReader(io.StringIO(out))] == expected
    report = json.loads((tmp_path / "r.json").read_text("utf-8"))
    assert [s["session_id"] for s in report["sessions"]] == [f["session_id"] for f in report["findings"]] == expected
    assert re.findall(r"^\| ✅ pass \| .* \| (s-[ab]) \|", (tmp_path / "r.md").read_text("utf-8"), re.M) == expected
    assert re.findall(r'<testsuite name="[^"]*\((s-[ab])\)', (tmp_path / "r.xml").read_text("utf-8")) == expected
    sarif = json.loads((tmp_path / "r.sarif").read_text("utf-8"))
    assert [r["properties"]["session_id"] for r in sarif["runs"][0]["results"]] == expected
    # PATHS given: their order, each one's logs by path (the same on every checkout), for every output too
    code, out, _ = invoke(monkeypatch, capsys, "check", str(older), str(tmp_path / "sessions"), "--json")
    assert [s["session_id"] for s in json.loads(out)["sessions"]] == ["s-b", "s-a"]


# -- 5. costs in check's table, CSV and Markdown -----------------------------------------------------

@pytest.fixture
def priced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two priced sessions (deepseek, 2027-01-15 08:00 UTC: 16:00 in Beijing, peak) and a third of
    an unpriced model, under $DSH_HOME/sessions, newest first s-one, s-two, s-three."""
    root = tmp_path / "sessions"
    for at, name, reads in ((3, "s-one", [0, 900]), (2, "s-two", [0, 500, 800])):
        log = _log(root / "--p--" / name / "session.jsonl", name, reads)
        os.utime(log, (1_700_000_000 + at, 1_700_000_000 + at))
    b = LogBuilder(session_id="s-three", model="local-coder")
    with b.turn("x"), b.step():
        b.assistant("y", usage={"inputTokens": 100, "outputTokens": 1, "cacheReadTokens": 0})
    log = b.write_jsonl(root / "--p--" / "s-three" / "session.jsonl", packed=False)
    os.utime(log, (1_700_000_001, 1_700_000_001))
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_check_markdown_shows_each_cost_and_their_totals(
        priced: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "check", "--markdown", "-")
    table = [line for line in out.splitlines() if line.startswith("| ")]
    assert code == 0
    assert table[0] == ("| status | log | session | requests | capture | breaks | hit ratio | cost | no cache "
                        "| off-peak | findings |")
    assert [line.split(" | ", 3)[2:] for line in table[1:-1]] == [
        ["s-one", "2 | none | 0 | 31.0% | $0.0006 | $0.0009 | $0.0003 | 1 |"],
        ["s-two", "3 | none | 0 | 30.2% | $0.0009 | $0.0013 | $0.0005 | 1 |"],
        ["s-three", "1 | none | 0 | 0.0% | \\$? (1 unpriced) | \\$? | \\$? | 1 |"]]
    assert table[-1] == "| **total** | 3 log(s) | | 6 | | 0 | | ≥$0.0016 (1 unpriced) | ≥$0.0022 | ≥$0.0008 | 3 |"
    # the same sums as usage's total, shown by the same money rule
    total = json.loads(invoke(monkeypatch, capsys, "usage", "--json")[1])["totals"]
    assert (total["cost_usd"]["total"], total["no_cache_cost_usd"], total["off_peak_cost_usd"]) == (
        0.0015732, 0.00222, 0.0007866)


def test_check_table_and_csv_show_the_cost_and_name_the_ratio_as_sessions_does(
        priced: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "check", "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["table", "status", "log", "session", "requests", "capture", "breaks", "hit ratio", "cost",
                       "unpriced", "findings"]
    assert [row[3:] for row in rows[1:]] == [
        ["s-one", "2", "none", "0", "0.3103448275862069", "0.0006294", "0", "1"],
        ["s-two", "3", "none", "0", "0.3023255813953488", "0.0009438", "0", "1"],
        ["s-three", "1", "none", "0", "0", "", "1", "1"]]
    assert "hit ratio" in invoke(monkeypatch, capsys, "sessions", "--format", "csv")[1].splitlines()[0].split(",")
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = invoke(monkeypatch, capsys, "check")
    lines = out.splitlines()
    # each log's path whole on a line of its own (session 38: never cut, nor left out), wider or not
    logs = named_logs(priced / "sessions" / "--p--" / name / "session.jsonl" for name in ("s-one", "s-two", "s-three"))
    assert lines[6:6 + len(logs)] == logs
    # and a finding's paths: each whole on a line of its own ("PATH:", "(PATH,"), never folded at a "/"
    assert max(len(line) for line in lines if line not in logs and not re.fullmatch(r" *\(?\S+\.jsonl\)?[,:]?", line)) <= 80
    assert [re.sub(r"\s+", " ", line) for line in lines[3:6]] == [
        "ok 1 s-one 2 none 0 31.0% $0.0006 1",
        "ok 2 s-two 3 none 0 30.2% $0.0009 1",
        "ok 3 s-three 1 none 0 0.0% $? 1"]
    # every header whole on one line ("hit ratio" not wrapped): the compact table holds them
    assert lines[1] == "status  log  session  requests  capture  breaks  hit ratio     cost  findings"


def test_a_narrow_check_table_leaves_out_the_ratio_then_the_cost(
        priced: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # the short headers (reqs, brks, hit, finds: session 40) keep the ratio and the cost at 60 columns,
    # the cost at 52; each log
    # its number, its path whole under the table (session 38: "log" is never left out)
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = invoke(monkeypatch, capsys, "check")
    lines = [line.rstrip() for line in out.splitlines()]
    assert lines[1:4] == ["status  log  session  reqs  brks    hit     cost  finds",
                          "─" * 55,
                          "ok        1  s-one       2     0  31.0%  $0.0006      1"]
    assert "narrow terminal: capture not shown (widen it, or use --json)" in " ".join(lines)
    monkeypatch.setenv("COLUMNS", "52")
    code, out, _ = invoke(monkeypatch, capsys, "check")
    lines = [line.rstrip() for line in out.splitlines()]
    assert lines[1] == "status  log  session  reqs  brks     cost  finds"
    assert "narrow terminal: capture, hit ratio not shown (widen it, or use --json)" in " ".join(lines)


# -- 6. and 7. the JSON report: numbers as every --json spells them, and the price caveats --------

def test_the_json_report_spells_numbers_as_every_json_output(
        priced: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "check", "--json")
    # --json: JSON lines (issue 14 B3), the report's one compact line
    assert code == 0 and out.count("\n") == 1 and not re.search(r"\de[-+]?\d|:-?\d+\.0[,}]", out)  # no 5.4e-06, no 0.0
    assert ('"cost_usd":{"cache_miss":0.0006,"cache_read":0.0000054,"cache_write":0,"output":0.000024,'
            '"total":0.0006294},') in out
    # each session's cost object spelt as cache --json spells it, number for number
    cache = {line["session_id"]: line["cost"] for line in map(
        _spelt, invoke(monkeypatch, capsys, "cache", "--json")[1].splitlines())}
    sessions = _spelt(out)["sessions"]
    assert len(sessions) == 3 and all(s["cost"] == cache[s["session_id"]] for s in sessions)


def _spelt(text: str) -> Any:
    """The JSON value of ``text`` with each number as it is spelt there."""
    return json.loads(text, parse_float=lambda t: ("number", t), parse_int=lambda t: ("number", t))


def _validate(report: dict[str, Any]) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROOT / "docs" / "report-schema.json").read_text("utf-8"))
    jsonschema.validate(report, schema)


def test_the_totals_of_a_run_with_a_refused_log_are_lower_bounds(tmp_path: Path) -> None:
    good = _log(tmp_path / "a" / "session.jsonl", "s-one", [0, 900])
    bad = tmp_path / "b" / "session.jsonl"
    bad.parent.mkdir()
    bad.write_text("not a log\n", "utf-8")
    result = run_check([str(good), str(bad)])
    assert [s.error is None for s in result.sessions] == [True, False]
    assert (result.sessions[0].amount(), result.sessions[1].amount()) == ((0.0006294, "$0.0006"), None)
    assert [result.total(name) for name in ("cost", "no_cache", "off_peak", "break")] == [
        (0.0006294, "≥$0.0006"), (0.000894, "≥$0.0009"), (0.0003147, "≥$0.0003"), (0.0, "≥$0.0000")]


def test_the_json_report_lists_the_price_caveats_the_run_met(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _log(tmp_path / "a" / "session.jsonl", "s-2028", [0], created_at=1_830_481_200_000)  # 2028-01-03 03:00 UTC: peak
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", "a", "--json")
    report = json.loads(out)
    assert (code, report["caveats"]) == (0, [
        "the deepseek price table lists no holidays of 2028 (its holiday list covers 2026, 2027): requests of 2028 "
        "are priced by the weekday rule alone, a public holiday at the peak rate; give the holidays of 2028 with "
        '--prices FILE (the "holidays" of the deepseek window)'])
    assert err == ["note: " + report["caveats"][0]]  # the note the run printed
    assert report["schema_version"] == 2
    _validate(report)
    del report["caveats"]  # optional: a report written before it existed is still a report of its version
    _validate(report)
    _log(tmp_path / "b" / "session.jsonl", "s-2027", [0])
    assert json.loads(invoke(monkeypatch, capsys, "check", "b", "--json")[1])["caveats"] == []
