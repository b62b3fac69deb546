"""The HTML report of a team (issues 13/14, session 32): a page of several logs opens with their
totals, the numbers ``dsh-audit usage --json`` gives for the same logs (total, by model, by day,
lower bounds and unknowns as usage shows them); a header change's drill-down shows what changed
(``dsh-audit explain``'s lines, a system prompt's changed lines, not only "4141 → 4141"), as inert
text; and every amount on the page has the CLI's one money format (4 decimals, :func:`usd_text`).

Two corpus sessions (pi-ai Anthropic with a model switch, DeepSeek flash to pro) and a generated
DeepSeek log whose system prompt change carries hostile text. The browser is the run's headless Chromium
(``tests/conftest.py``'s ``browser`` fixture, one per worker).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote

import pytest
from _cli import invoke
from test_html_report import HOSTILE, SCRIPT_TEXT, TEXT_JS, TEXTAREA_TEXT, _detail_heading, _rows

from dsh_audit.cache import Costs
from dsh_audit.report._html_assets import SCRIPT
from dsh_audit.testing import LogBuilder

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
ANTHROPIC = "live-pi/c1-anthropic-tools"  # claude-sonnet-4-5 -> 4-6 at request 9: system 4141 -> 4141
DEEPSEEK = "live/c-change"  # deepseek-v4-flash -> pro, five header-change breaks
HOSTILE_ID = "session-hostile32"


@pytest.fixture
def chrome(browser):  # conftest.py's fixture: one headless Chromium per worker
    return browser


def _corpus(name: str) -> Path:
    found = sorted((CORPUS / name / "home" / "sessions").glob("*/*/session.jsonl.zstd"))
    if not found:
        pytest.skip("shared corpus not present")
    return found[0]


def _hostile(tmp_path: Path, model: str = "deepseek-v4-flash") -> Path:
    """Two turns (priced deepseek-v4-flash by default); the system prompt's second line changes to
    hostile text between them, which breaks the cache (1920 tokens lost)."""
    usage = {"inputTokens": 2000, "outputTokens": 10, "cacheReadTokens": 0}
    b = LogBuilder(session_id=HOSTILE_ID, model=model, system="You are a coding agent.\nmode: plain")
    with b.turn("one"), b.step():
        b.assistant("one", usage=usage)
    b.configure(system=f"You are a coding agent.\nmode: {HOSTILE}")
    with b.turn("two"), b.step():
        b.assistant("two", usage={**usage, "inputTokens": 2100})
    return b.write_jsonl(tmp_path / "hostile" / "session.jsonl")


def _data(page: Path) -> dict:
    blob = re.search(r'<script type="application/json" id="dsh-data">(.*?)</script>', page.read_text("utf-8"), re.S)
    assert blob is not None
    return json.loads(blob.group(1))


def _cells(chrome, selector: str) -> list[list[str]]:
    """The text of each cell of each row ``selector`` finds, in one script (``TEXT_JS``)."""
    return chrome.execute_script(TEXT_JS + """
        return Array.from(document.querySelectorAll(arguments[0]),
                          row => Array.from(row.querySelectorAll('th, td'), text));""", selector)


def test_team_totals_equal_usage_and_a_header_change_shows_its_diff_inertly(tmp_path, monkeypatch, capsys, chrome):
    from selenium.webdriver.common.by import By

    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the log alone, as pinned (a capture found prices: test_found38)
    logs = [str(_corpus(ANTHROPIC)), str(_corpus(DEEPSEEK)), str(_hostile(tmp_path))]
    usage = {}
    for by in ("model", "day"):
        code, out, _ = invoke(monkeypatch, capsys, "usage", *logs, "--by", by, "--json")
        assert code == 0
        usage[by] = json.loads(out)
    page = tmp_path / "team.html"
    code, out, _ = invoke(monkeypatch, capsys, "report", *logs, "-o", str(page))
    assert code == 0, out

    # the data: usage --json's total and rows, each with the amounts as usage shows them
    totals = _data(page)["totals"]
    assert totals["sessions"] == usage["model"]["sessions"] == 3
    shown = {k: [row.pop("shown") for row in rows] for k, rows in (("by_model", totals["by_model"]),
                                                                   ("by_day", totals["by_day"]))}
    total_shown = totals["total"].pop("shown")
    assert totals["total"] == usage["model"]["totals"] == usage["day"]["totals"]
    assert totals["by_model"] == usage["model"]["rows"]
    assert totals["by_day"] == usage["day"]["rows"]
    assert totals["unpriced"] == usage["model"]["unpriced"] == {"usage not logged": 2}
    assert (usage["model"]["totals"]["cost_usd"]["total"], usage["model"]["totals"]["break_cost_usd"],
            usage["model"]["totals"]["off_peak_cost_usd"], usage["model"]["totals"]["no_cache_cost_usd"]) == (
        0.10579357, 0.038990714, 0.10516657, 0.29850975)
    assert total_shown == {"key": "total", "cost": "≥$0.1058", "no_cache": "≥$0.2985", "off_peak": "≥$0.1052",
                           "lost": "$0.0390", "break": "$0.0390"}
    assert [r["key"] for r in usage["model"]["rows"]] == [
        "claude-sonnet-4-5", "claude-sonnet-4-6", "deepseek-flash", "deepseek-v4-pro"]  # the model billed (session 43)
    assert shown["by_day"] == [{"key": "2026-12-02", "cost": "≥$0.1045", "no_cache": "≥$0.2973",
                                "off_peak": "≥$0.1045", "lost": "$0.0384", "break": "$0.0384"},
                               {"key": "2027-01-15", "cost": "$0.0013", "no_cache": "$0.0013", "off_peak": "$0.0006",
                                "lost": "$0.0006", "break": "$0.0006"}]
    assert [row["key"] for row in shown["by_model"]] == [  # each row's key cell: usage's (its logged names beside)
        "claude-sonnet-4-5", "claude-sonnet-4-6", "deepseek-flash (logged as deepseek-v4-flash)", "deepseek-v4-pro"]

    # the page: the totals at the top, as usage shows them
    chrome.get(page.as_uri())
    assert chrome.find_element(By.CSS_SELECTOR, "#totals h2").text == "Totals of the 3 session(s) read"
    assert _rows(chrome, "#totals table.totals tr[data-key]") == {
        "requests": "21", "cost": "≥$0.1058", "no-cache": "≥$0.2985", "off-peak": "≥$0.1052",
        "lost": "22815 of 127548 reusable ($0.0390)", "break-cost": "$0.0390", "unpriced": "2 (2 usage not logged)"}
    assert _cells(chrome, "#totals table.by_model tr") == [
        ["model", "requests", "cost", "without cache", "all off-peak", "lost tokens (cost)", "breaks cost", "unpriced"],
        # Anthropic bills one rate all day: off-peak it costs what it cost, as the total counts it (session 43)
        ["claude-sonnet-4-5", "9", "≥$0.0562", "≥$0.2087", "≥$0.0562", "0 of 59518 reusable ($0.0000)", "$0.0000",
         "1"],
        ["claude-sonnet-4-6", "2", "$0.0373", "$0.0545", "$0.0373", "8927 of 17854 reusable ($0.0308)", "$0.0308", ""],
        ["deepseek-flash (logged as deepseek-v4-flash)", "4", "≥$0.0025", "≥$0.0025", "≥$0.0018",
         "1920 of 1920 reusable ($0.0006)", "$0.0006", "1"],
        ["deepseek-v4-pro", "6", "$0.0099", "$0.0330", "$0.0099", "11968 of 48256 reusable ($0.0076)", "$0.0076", ""]]
    assert [row[0] for row in _cells(chrome, "#totals table.by_day tr")] == ["day (UTC)", "2026-12-02", "2027-01-15"]

    # the Anthropic model switch: the system prompt kept its length, the page shows the changed line;
    # the break's cost in the page's one format (4 decimals), no longer $0.030791
    data = _data(page)
    anchor = next(s["anchor"] for s in data["sessions"] if s["path"] == logs[0])
    chrome.get(f"{page.as_uri()}#{quote(anchor, safe='')}/break-9")
    assert _detail_heading(chrome, "Request 9 · loop 3/1/1") == "Request 9 · loop 3/1/1"
    diff = chrome.find_element(By.CSS_SELECTOR, "#detail pre.field-diff").text.splitlines()
    assert diff[2:] == [
        "  system: 4141 → 4141 chars (prompt)", "      @@ -3 +3 @@",
        "      -You are a coding agent powered by the claude-sonnet-4-5 model. Your working directory is "
        "/home/dev/dsh-runs/c/c1-anthropic-tools/ws.",
        "      +You are a coding agent powered by the claude-sonnet-4-6 model. Your working directory is "
        "/home/dev/dsh-runs/c/c1-anthropic-tools/ws."]
    costs = _rows(chrome, "#detail table.cost tr[data-key]")
    assert (costs["cost"], costs["break-cost"]) == ("$0.0337", "$0.0308 (8927 lost of 8927 reusable token(s))")

    # the hostile system line: shown as the text it is, nothing of it runs or becomes markup
    anchor = next(s["anchor"] for s in data["sessions"] if s["path"] == logs[2])
    chrome.get(f"{page.as_uri()}#{quote(anchor, safe='')}/break-1")
    assert _detail_heading(chrome, "Request 1 · loop 2/1/1") == "Request 1 · loop 2/1/1"
    assert chrome.find_element(By.CSS_SELECTOR, "#detail pre.field-diff").text.splitlines() == [
        "  system: 35 → 140 chars (prompt)", "      @@ -2 +2 @@", "      -mode: plain", f"      +mode: {HOSTILE}"]
    assert _rows(chrome, "#detail table.cost tr[data-key=break-cost]") == {
        "break-cost": "$0.0006 (1920 lost of 1920 reusable token(s))"}
    assert chrome.execute_script("return typeof window.__pwned") == "undefined"
    assert chrome.execute_script("return document.querySelectorAll('img, textarea').length") == 0
    assert chrome.execute_script("return document.scripts.length") == 2
    assert SCRIPT_TEXT not in page.read_text("utf-8") and TEXTAREA_TEXT not in page.read_text("utf-8")


def test_a_page_of_one_log_has_no_team_totals_and_money_reads_as_the_cli_writes_it(tmp_path, monkeypatch, capsys,
                                                                                    chrome):
    from selenium.webdriver.common.by import By

    page = tmp_path / "one.html"
    code, out, _ = invoke(monkeypatch, capsys, "report", str(_hostile(tmp_path, "local-coder")), "-o", str(page))
    assert code == 0, out
    chrome.get(page.as_uri() + "#break-1")
    assert chrome.find_element(By.ID, "totals").get_attribute("hidden") == "true"
    assert chrome.execute_script("return document.getElementById('totals').childElementCount") == 0
    # a break no rate prices: what it lost is known, what that cost is not ($?, never hidden or $0)
    assert _detail_heading(chrome, "Request 1 · loop 2/1/1") == "Request 1 · loop 2/1/1"
    assert _rows(chrome, "#detail table.cost tr[data-key]") == {
        "model": "local-coder", "window": "standard", "sent": "2027-01-15T08:00:00Z",
        "cost": "unpriced: no price for model 'local-coder'",
        "break-cost": "$? (1920 lost of 1920 reusable token(s), unpriced: no price for model 'local-coder')"}
    # the page's money function (its source, run in the browser) against the CLI's Costs.text (usd_text): ties
    # round to even as Python's format does (toFixed alone writes $0.0313 for $0.03125)
    functions = "".join(re.search(rf"^function {name}\(.*?\n(?=\S)", SCRIPT, re.S | re.M).group(0)
                        for name in ("fixed", "usd"))
    values = [0.03125, 0.09375, 0.00005, 0.000021, 0.0, 1e-9, 0.030791, 0.99995, 9.99995, 1234.56785, 0.5,
              2.5e-5, 0.00015, 1.00005, 123456.78905, 0.038426234, 0.00119625]
    assert chrome.execute_script(functions + "return arguments[0].map(function(v){return usd(v);});", values) == [
        Costs.text(v) for v in values]
    assert [Costs.text(v) for v in values[:2]] == ["$0.0312", "$0.0938"]
