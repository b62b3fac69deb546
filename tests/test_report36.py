"""Session 36 (issue 14 §4-5, issue 13): the report's page-wide cache figures, the legend's colours
for every break, check's rows told apart when logs share an id, and nothing measured never 0.

- F9: the totals atop a page of several logs give the hit ratio and the breaks by cause, equal to
  what ``stats`` and each log's ``cache --json`` give for the same logs (the README: "a summary
  (models, requests, breaks by cause, hit ratio, cost ...)").
- F13: a break the policy allows is orange wherever it is drawn (marker, break list, cause in the
  drill-down), a failing one red, as the page's legend says.
- F16: ``check`` at 80 columns keeps a short path when two logs listed share a session id.
- D3: ``usage --no-accounting`` measured no loss: CSV cells empty, JSON null, never 0;
  ``sessions --no-accounting`` CSV leaves its unmeasured breaks and cost empty, never ``-``.

The browser tests use the run's headless Chromium (``tests/conftest.py``'s ``browser`` fixture).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from _cli import invoke
from test_tables38 import named_logs
from test_html32 import _cells, _data
from test_html35 import _switch  # one explained (header_change) break at request 1
from test_html_report import _detail_heading, _rows

from dsh_audit.gate import GATE_RULES, Policy, run_check
from dsh_audit.report import format_html
from dsh_audit.report._html_sessions import _FAILED_AS
from dsh_audit.testing import LogBuilder

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
RED, ORANGE = "rgb(220, 38, 38)", "rgb(217, 119, 6)"  # the legend's "fails" and "break the policy allows"
C_CHANGE = CORPUS / "live" / "c-change" / "session-logs"


def _live() -> Path:
    if not (CORPUS / "live").is_dir():
        pytest.skip("shared corpus not present")
    return CORPUS / "live"


# -- F9: the page's hit ratio and breaks by cause ------------------------------------------------
def test_the_page_totals_give_the_hit_ratio_and_breaks_by_cause_of_stats_and_cache_json(
        tmp_path, monkeypatch, capsys, browser):
    from selenium.webdriver.common.by import By

    live = str(_live())
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the log alone, as pinned (a capture found prices: test_found38)
    code, out, _ = invoke(monkeypatch, capsys, "cache", live, "--json")
    assert code == 0
    logs = [json.loads(line) for line in out.splitlines()]
    db = tmp_path / "a.sqlite"
    assert invoke(monkeypatch, capsys, "index", live, "--db", str(db))[0] == 0
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", str(db), "--json")
    assert code == 0
    stats = json.loads(out)
    page = tmp_path / "r.html"
    assert invoke(monkeypatch, capsys, "report", live, "-o", str(page))[0] == 0
    cache = _data(page)["totals"]["cache"]

    prompt, read = sum(s["prompt_tokens"] for s in logs), sum(s["actual_cache_read"] for s in logs)
    by_cause = sum((Counter(s["breaks_by_cause"]) for s in logs), Counter())
    assert (len(logs), prompt, read, dict(by_cause)) == (
        11, 533149, 413312, {"header_change": 5, "resume": 1, "compaction": 2, "subagent": 1})
    assert (cache["prompt_tokens"], cache["cache_read"], cache["hit_ratio"]) == (prompt, read, read / prompt)
    assert (stats["totals"]["prompt_tokens"], stats["totals"]["actual_cache_read"], stats["totals"]["actual_hit_ratio"]) == (
        prompt, read, cache["hit_ratio"])
    assert cache["breaks_by_cause"] == dict(sorted(by_cause.items()))
    assert cache["breaks"] == stats["totals"]["attribution_breaks"] == 9
    assert {c["cause"]: (c["attribution_breaks"], c["reusable_cache_read"], c["lost_tokens"]) for c in stats["by_cause"]} \
        == {c["cause"]: (c["count"], c["pot"], c["lost"]) for c in cache["break_summary"]}  # lost beside its base
    lost = {c["cause"]: c["lost"] for c in cache["break_summary"]}
    assert lost == {"header_change": 11968, "resume": 8064, "subagent": 4672, "compaction": 3328}
    assert sum(lost.values()) == stats["totals"]["lost_tokens"]

    browser.get(page.as_uri())
    assert _rows(browser, "#totals table.cache-totals tr[data-key]") == {
        "hit": "77.5% (413312 of 533149 prompt tokens)",
        "breaks": "9 (compaction 2, header_change 5, resume 1, subagent 1)"}
    assert f"{100 * stats['totals']['actual_hit_ratio']:.1f}%" == "77.5%"
    assert _cells(browser, "#totals table.break-causes tr") == [
        ["break cause", "breaks", "reusable of breaks that lost", "tokens lost", "cost", "lost nothing"],
        ["header_change", "5", "23552", "11968", "$0.0076", "2"], ["resume", "1", "8064", "8064", "$0.0051", "0"],
        ["subagent", "1", "7936", "4672", "$0.0007", "0"], ["compaction", "2", "11136", "3328", "$0.0005", "1"]]
    assert all(e.is_displayed() for e in browser.find_elements(By.CSS_SELECTOR, "#totals table.cache-totals td"))


# -- F13: the legend's colours for every break ---------------------------------------------------
_COLOR = "return getComputedStyle(arguments[0])[arguments[1]]"


@pytest.mark.parametrize(("policy", "drawn", "colour"), [
    (Policy(), "allowed", ORANGE),  # header_change is a cause the default policy allows: the session passes
    (Policy(allowed_break_causes=()), "fails", RED),  # DSH822: the break fails the check
])
def test_a_break_is_drawn_in_the_legends_colour_everywhere(tmp_path, browser, policy, drawn, colour):
    from selenium.webdriver.common.by import By

    result = run_check([_switch(tmp_path / "s" / "session.jsonl")], policy=policy)
    assert result.passed is (drawn == "allowed")
    page = tmp_path / "r.html"
    page.write_text(format_html(result), "utf-8")
    browser.get(page.as_uri() + "#break-1")
    assert _detail_heading(browser, "Request 1 · loop 2/1/1") == "Request 1 · loop 2/1/1"
    legend = {i.find_element(By.XPATH, "..").text: browser.execute_script(_COLOR, i, "backgroundColor")
              for i in browser.find_elements(By.CSS_SELECTOR, "#legend i")}
    assert (legend["break the policy allows"], legend["break or request that fails"]) == (ORANGE, RED)
    marker = browser.find_element(By.ID, "break-1")
    link = browser.find_element(By.CSS_SELECTOR, "#overview .break-list a")
    cause = browser.find_element(By.CSS_SELECTOR, "#detail .cause")
    assert (link.text, cause.text) == ("break at request 1", "header_change")
    assert (marker.get_attribute("class"), link.get_attribute("class"), cause.get_attribute("class")) == (
        "break-marker" + (" allowed" if drawn == "allowed" else ""), drawn,
        "cause " + ("allowed" if drawn == "allowed" else "brk"))
    assert [browser.execute_script(_COLOR, marker, "backgroundColor"), browser.execute_script(_COLOR, link, "color"),
            browser.execute_script(_COLOR, cause, "color")] == [colour] * 3
    assert _data(page)["sessions"][0]["overview"]["break_details"] == [
        {"i": 1, "cause": "header_change", "lost": None, "cost": None, "pot": 128, "fails": drawn == "fails"}]  # no usage logged


# -- F16: check's rows told apart when ids repeat ------------------------------------------------
def _chat(path: Path, session_id: str, text: str = "one") -> Path:
    b = LogBuilder(session_id=session_id)
    with b.turn(text), b.step():
        b.assistant(text)
    return b.write_jsonl(path)


def test_check_at_80_columns_keeps_a_short_path_when_logs_share_an_id(tmp_path, cli80):
    """Session 38: a log's path is never cut (it was its distinguishing end, "first/session.jsonl")
    nor left out: each log is its number, its path whole on a line of its own under the table."""
    deep = tmp_path / "a-rather-long-folder-name-for-the-logs-of-this-test"
    logs = [_chat(deep / "first" / "session.jsonl", "session-shared36"),
            _chat(deep / "second" / "session.jsonl", "session-shared36", "two"),  # differs: each read
            _chat(deep / "third" / "session.jsonl", "session-other36")]
    code, out, _ = cli80("check", *map(str, logs))
    assert code == 0
    assert [line.rstrip() for line in out.splitlines()[:7]] + named_logs(logs) == [
        "dsh-audit check",
        "                                                          hit",  # (print_table: "hit ratio" wraps
        "status  log  session           requests  capture  breaks  ratio   cost  findings",  # before it goes)
        "─" * 80,
        "ok        1  session-shared36         1  none          0  n/a       $?         1",
        "ok        2  session-shared36         1  none          0  n/a       $?         1",
        "ok        3  session-other36          1  none          0  n/a       $?         1",
        *named_logs(logs)]
    # ids that tell every row apart: the same
    code, out, _ = cli80("check", str(logs[0]), str(logs[2]))
    assert code == 0
    assert [line.rstrip() for line in out.splitlines()[1:6 + len(named_logs(logs[::2]))]] == [  # compact below 100
        "                                                          hit",
        "status  log  session           requests  capture  breaks  ratio   cost  findings",
        "─" * 80,
        "ok        1  session-shared36         1  none          0  n/a       $?         1",
        "ok        2  session-other36          1  none          0  n/a       $?         1",
        *named_logs(logs[::2])]


# -- D3: nothing measured is never 0 -------------------------------------------------------------
def test_usage_no_accounting_leaves_the_losses_empty_in_csv_and_null_in_json(monkeypatch, capsys):
    if not C_CHANGE.is_dir():
        pytest.skip("shared corpus not present")
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the log alone, as pinned (a capture found prices: test_found38)
    row = ("session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824,8,21449,{lost},36160,0,96,0.01107667,0.01009521,0.00079552,0,"
           "0.00018594,0.03414675,0.01107667,1")
    header = ("table,session,requests,cache miss,reusable,lost tokens,lost cost,cache read,cache write,output,cost,cache miss cost,"
              "cache read cost,cache write cost,output cost,no cache,off-peak,unpriced")
    for option, lost in (("--accounting", "48256,11968,0.007635584"), ("--no-accounting", ",,"), ("--no-breaks", ",,")):
        code, out, _ = invoke(monkeypatch, capsys, "usage", option, "--format", "csv", str(C_CHANGE))
        assert code == 0
        assert out.splitlines() == [header, "usage by session," + row.format(lost=lost),
                                    "usage by session," + row.format(lost=lost).replace(
                                        "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824", "total")]
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--by", "model", "--no-accounting", "--format", "csv",
                          str(C_CHANGE))
    assert code == 0
    assert out.splitlines()[1:] == ["usage by model,deepseek-flash,deepseek-v4-flash,2,7963,,,,0,0,3,0.00119625,0.00119445,0,0,"
                                    "0.0000018,0.00119625,0.00119625,1",
                                    "usage by model,deepseek-v4-pro,deepseek-v4-pro,6,13486,,,,36160,0,93,0.00988042,0.00890076,"
                                    "0.00079552,0,0.00018414,0.0329505,0.00988042,0",
                                    "usage by model,total,,8,21449,,,,36160,0,96,0.01107667,0.01009521,0.00079552,0,0.00018594,"
                                    "0.03414675,0.01107667,1"]
    lost_keys = ("lost_tokens", "lost_cost_usd", "break_cost_usd", "lost_unknown_requests")
    for option, expected in (("--accounting", (11968, 0.007635584, 0.007635584, 0)),
                             ("--no-accounting", (None,) * 4)):
        code, out, _ = invoke(monkeypatch, capsys, "usage", option, "--by", "request", "--json", str(C_CHANGE))
        assert code == 0
        found = json.loads(out)
        assert tuple(found["totals"][k] for k in lost_keys) == expected
        if expected[0] is None:
            assert {tuple(r[k] for k in lost_keys) for r in found["rows"]} == {expected}


def test_sessions_no_accounting_csv_leaves_unmeasured_breaks_and_cost_empty(monkeypatch, capsys):
    if not C_CHANGE.is_dir():
        pytest.skip("shared corpus not present")
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the log alone, as pinned (a capture found prices: test_found38)
    code, out, _ = invoke(monkeypatch, capsys, "sessions", "--no-accounting", "--format", "csv", str(C_CHANGE))
    assert code == 0
    assert out.splitlines() == [
        "table,when (UTC),title,project,requests,tokens,hit ratio,breaks,cost,unpriced,first (UTC),format,id",
        '"1 session(s), newest first",2026-12-02 11:02,Fake session title,/home/dev/dsh-runs/a/c-change/ws,8,57705,,,,,'
        "2026-12-02 11:02,v0,session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824"]  # no total row: CSV holds the JSON's rows
    code, out, _ = invoke(monkeypatch, capsys, "sessions", "--format", "csv", str(C_CHANGE))
    assert code == 0
    assert out.splitlines()[1].split(",")[-7:] == [
        "0.6276797028242115", "5", "0.01107667", "1", "2026-12-02 11:02", "v0", "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824"]
    assert len(out.splitlines()) == 2


def test_every_gate_rule_has_its_words_on_the_page() -> None:
    """The page names each gate finding by cause; a gate rule it does not list would be counted as a
    "validation finding" (a second table of the rule ids must not fall behind the gate's)."""
    assert set(_FAILED_AS) == set(GATE_RULES)
