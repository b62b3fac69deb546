"""The HTML report without JavaScript (session 41): a page read as text, or in a browser with
JavaScript off, says its headline, totals and session list as static HTML (a ``<noscript>`` block
before the data), from the values the script reads, every log text escaped and inert.

The browser is the run's headless Chromium (``tests/conftest.py``'s ``browser`` fixture); JavaScript
is switched off for one load through the DevTools protocol and on again in ``finally``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from dsh_audit import __version__
from dsh_audit.gate import Policy, run_check
from dsh_audit.report import format_html
from dsh_audit.testing import LogBuilder

HOSTILE = "</noscript><script>window.__pwned=1</script><img src=x onerror=window.__pwned=2>\u202e\x1b[31m &amp;"
SHOWN = ("&lt;/noscript&gt;&lt;script&gt;window.__pwned=1&lt;/script&gt;&lt;img src=x onerror=window.__pwned=2&gt;"
         "\\u202e\\u001b[31m &amp;amp;")


def _page(tmp_path: Path) -> tuple[str, Path]:
    """Three logs: a parent whose title and project are hostile text (one header-change break), its
    fork, and a file that is no log (failing first in the list, then the parent, its child under it)."""
    b = LogBuilder(session_id="session-41-parent", cwd="/home/dev/" + HOSTILE, system="You are a coding agent.")
    with b.turn("one"), b.step():
        b.assistant("one")
    b.title("Title " + HOSTILE)
    b.configure(system="You are a coding agent in plan mode.")
    with b.turn("two"), b.step():
        b.assistant("two")
    child = b.fork(session_id="session-41-child")
    with child.turn("three"), child.step():
        child.assistant("three")
    logs = [b.write_jsonl(tmp_path / "p" / "session.jsonl"), child.write_jsonl(tmp_path / "c" / "session.jsonl")]
    bad = tmp_path / "bad" / "session.jsonl"
    bad.parent.mkdir()
    bad.write_text("not json\n", encoding="utf-8")
    return format_html(run_check([*logs, bad], policy=Policy())), bad


def _static(page: str) -> str:
    start = page.index('<noscript><section id="static-summary"')
    return page[start:page.index("</noscript>\n", start) + len("</noscript>\n")]


def test_the_static_summary_says_headline_totals_and_sessions_escaped(tmp_path):
    page, bad = _page(tmp_path)
    project = f"/home/dev/{SHOWN}"
    row = '<tr data-key="{}"><th>{}</th><td>{}</td></tr>\n'
    assert _static(page) == "".join([
        '<noscript><section id="static-summary" aria-label="summary of the page without JavaScript">\n',
        '<p><span class="failed">check failed: 1 refused log(s) · 1 explained break(s)'
        '</span> <span class="muted">· 3 log(s) · 1 error(s), 0 warning(s), 2 info, 1 failing · policy defaults · '
        f"dsh-audit {__version__}</span></p>\n",
        "<p class=\"muted\">JavaScript is off: this is the page's summary. Its timelines and each request's drill-down "
        "need JavaScript; in a terminal, dsh-audit check, explain and show say the same.</p>\n",
        "<h2>Totals of the 2 session(s) read; 1 log(s) not read, left out of every sum (lower bounds)</h2>\n",
        '<table class="totals">\n',
        row.format("requests", "requests", "4"), row.format("cost", "cost", "$?"),
        row.format("no-cache", "without cache", "$?"), row.format("off-peak", "all off-peak", "$?"),
        row.format("lost", "lost tokens (cost)", "0+? of ? reusable ($?)"), row.format("break-cost", "breaks cost", "$?"),
        row.format("unpriced", "unpriced requests", "4 (3 cache reads not logged (deepseek-official logs "
                   "cacheReadTokens only when the API reported them: the prompt's split into hits and misses is "
                   "unknown), 1 usage not logged)"),
        row.format("hit", "hit ratio", "n/a (? of ? prompt tokens)"),
        row.format("breaks", "breaks", "1 (header_change 1)"), row.format("failing", "failing findings", "1"),
        "</table>\n",
        '<table class="break-causes">\n<tr><th>break cause</th><th>breaks</th><th>reusable of breaks that lost</th>'
        '<th>tokens lost</th>'
        "<th>cost</th><th>lost nothing</th></tr>\n",
        '<tr><td>header_change</td><td class="num">1</td><td class="num">0</td><td class="num">0 + ? (1 unknown)</td>'
        '<td class="num">$?</td><td class="num">0</td></tr>\n</table>\n',
        "<h2>Sessions (3)</h2>\n",
        '<table class="session-list">\n<tr><th>verdict</th><th>session</th><th>id</th><th>project</th>'
        "<th>requests</th><th>cost</th><th>breaks</th></tr>\n",
        '<tr><td><span class="failed">✖ failed: 1 refused log(s)</span></td>'
        f'<td>{bad}<br><span class="failed">refused: {bad}:1: corrupt session log: header line is not valid '
        "JSON (hint: this is not a DSH session log, or its first line is damaged)</span></td>"
        '<td class="key">no id</td><td>no project</td><td class="num">-</td><td class="num">n/a</td><td>-</td></tr>\n',
        f'<tr><td>✔ passed: 1 explained break(s)</td><td>Title {SHOWN}</td><td class="key">session-41-parent</td>'
        f'<td>{project}</td><td class="num">3</td><td class="num">$?</td><td>1 (header_change 1)</td></tr>\n',
        f'<tr><td>✔ passed: no breaks</td><td>↳ Title {SHOWN} <span class="muted">(fork at seq 31)</span></td>'
        f'<td class="key">session-41-child</td><td>{project}</td><td class="num">1</td><td class="num">$?</td>'
        "<td>0</td></tr>\n",
        "</table>\n</section></noscript>\n"])
    # the page holds no raw hostile text: the data is script JSON, the summary escaped text
    assert "</noscript><script>" not in page and "<img" not in page and "\x1b" not in page and "\u202e" not in page
    assert page.count("<noscript>") == 2 and page.count("<script") == 2
    # the summary comes before the data, and the data is what it was without it
    assert page.index('id="static-summary"') < page.index('id="dsh-data"')
    data = json.loads(re.search(r'<script type="application/json" id="dsh-data">(.*?)</script>', page, re.S).group(1))
    listed = [data["sessions"][k] for k, _ in data["order"]]
    assert [(s["overview"]["requests"], s["short_id"]) for s in listed] == [
        (0, None), (3, "session-41-parent"), (1, "session-41-child")]


def test_chromium_shows_the_summary_only_with_javascript_off_and_runs_no_log_text(tmp_path, browser):
    from selenium.webdriver.common.by import By

    page, bad = _page(tmp_path)
    out = tmp_path / "page.html"
    out.write_text(page, encoding="utf-8")
    browser.get(out.as_uri())
    assert browser.find_elements(By.ID, "static-summary") == []  # script on: the noscript block is text
    assert browser.find_element(By.ID, "headline").text.startswith("check failed: 1 refused log(s)")
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    # the script's breaks by cause say what the static summary says: an unknown loss costs $?, never $0
    causes = browser.find_elements(By.CSS_SELECTOR, "#totals table.break-causes tr")[1]
    assert [td.text for td in causes.find_elements(By.TAG_NAME, "td")] == [
        "header_change", "1", "0", "0 + ? (1 unknown)", "$?", "0"]
    # the script's cost of a log (costUsd, as the session list reads it) is the static summary's (Costs.shown) for
    # every total (known, none) and unpriced count (none, some, all), those the ledger never writes too
    from dsh_audit.report._html_assets import SCRIPT
    from dsh_audit.report._html_static import _cost

    functions = "\n".join(re.findall(r"^function (?:fixed|usd|costUsd)\(.*?(?=^\S)", SCRIPT, re.S | re.M))
    costs = [None, *({"requests": 2, "cost_usd": total, "unpriced_requests": n}
                     for total in ({"total": 0.25}, None) for n in (0, 1, 2)),
             {"requests": 0, "cost_usd": {"total": 0.0}, "unpriced_requests": 0}]
    scripted = browser.execute_script(functions + "\nreturn arguments[0].map(function(c){"
                                      "return costUsd(c&&c.cost_usd?c.cost_usd.total:null,c);});", costs)
    assert scripted == list(map(_cost, costs)) == [
        "n/a", "$0.2500", "≥$0.2500", "$?", "n/a", "$?", "$?", "$0.0000"]
    try:
        browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": True})
        browser.get(out.as_uri())
        summary = browser.find_element(By.ID, "static-summary")
        assert summary.is_displayed()
        assert not browser.find_element(By.TAG_NAME, "main").is_displayed()
        assert not browser.find_element(By.ID, "search-bar").is_displayed()
        assert browser.find_element(By.ID, "title").text == "dsh-audit report"
        rows = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")]
                for tr in summary.find_elements(By.CSS_SELECTOR, "table.session-list tr")[1:]]
        shown = HOSTILE.replace("\u202e", "\\u202e").replace("\x1b", "\\u001b")
        assert [r[1:] for r in rows[1:]] == [
            [f"Title {shown}", "session-41-parent", f"/home/dev/{shown}", "3", "$?", "1 (header_change 1)"],
            [f"↳ Title {shown} (fork at seq 31)", "session-41-child", f"/home/dev/{shown}", "1", "$?", "0"]]
        assert rows[0] == ["✖ failed: 1 refused log(s)",
                           f"{bad}\nrefused: {bad}:1: corrupt session log: header line is not valid JSON "
                           "(hint: this is not a DSH session log, or its first line is damaged)",
                           "no id", "no project", "-", "n/a", "-"]
        assert len(browser.find_elements(By.CSS_SELECTOR, "img, #static-summary script")) == 0
    finally:
        browser.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": False})


#: Hit ratios whose percentage at one decimal is a tie (1/16: 6.25 exactly), and others.
_RATIOS = [1 / 16, 3 / 16, 0.0375, 0.995, 1 / 3, 0.9995, 0.00049999, 1.0, 0.0]


@pytest.mark.skipif(shutil.which("node") is None, reason="no node to run the page's script with")
def test_the_script_the_static_summary_and_the_cli_show_a_tie_ratio_alike() -> None:
    """The page's script rounded a hit ratio with ``toFixed`` (a tie up: 1/16 "6.3%"), the static
    summary and the CLI as Python's format does (a tie to even: "6.2%"): the script's ``ratio`` is
    the page's ``fixed`` now, as its money is, and the three agree."""
    from dsh_audit.cli._stats_tables import _ratio as cli_ratio
    from dsh_audit.report._html_assets import SCRIPT
    from dsh_audit.report._html_static import _ratio as static_ratio

    functions = "\n".join(re.findall(r"^function (?:fixed|ratio)\(.*?(?=^\S)", SCRIPT, re.S | re.M))
    shown = subprocess.run(["node", "-e", functions + f"console.log(JSON.stringify({_RATIOS}.map(ratio)))"],
                           capture_output=True, text=True, timeout=30, check=True).stdout
    expected = ["6.2%", "18.8%", "3.8%", "99.5%", "33.3%", "100.0%", "0.0%", "100.0%", "0.0%"]
    assert json.loads(shown) == [static_ratio(v) for v in _RATIOS] == [cli_ratio(v).text for v in _RATIOS] == expected
