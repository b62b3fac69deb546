"""The HTML forensics page, opened in a real headless Chromium (Debian's ``chromium`` package).

Skips only when Chromium, its driver or Selenium is absent. Never downloads a browser: the driver
is Debian's ``chromium-driver`` at /usr/bin/chromedriver. The browser tests use the run's Chromium
(``tests/conftest.py``'s ``browser`` fixture, started by :func:`_driver` once per worker).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from dsh_audit.cli import cli
from dsh_audit.gate import Policy, run_check
from dsh_audit.report import build_report_data, format_html
from dsh_audit.testing import LogBuilder

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
SCRIPT_TEXT = "<script>window.__pwned=1</script>"
TEXTAREA_TEXT = "</textarea><img src=x onerror=window.__pwned=2>"
HOSTILE = f"Look at this: {SCRIPT_TEXT} and {TEXTAREA_TEXT} &amp; done"


def _hostile_log(tmp_path: Path) -> Path:
    """Turn 1 carries hostile text; a system prompt change before turn 2 breaks the prefix cache."""
    b = LogBuilder(session_id="session-hostile", cwd="/home/dev/project", system="You are a coding agent.")
    with b.turn(HOSTILE):
        with b.step():
            b.assistant(f"Echo: {TEXTAREA_TEXT}")
    b.configure(system="You are a coding agent in plan mode.")
    with b.turn("Second question"):
        with b.step():
            b.assistant("Second answer.")
    return b.write_jsonl(tmp_path / "hostile" / "session.jsonl")


def test_html_is_self_contained_and_embeds_log_text_only_as_escaped_json(tmp_path):
    log = _hostile_log(tmp_path)
    result = run_check([log], policy=Policy())
    page = format_html(result)
    assert SCRIPT_TEXT not in page and "</textarea>" not in page and "<img" not in page
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", page), "the page must load nothing"
    blob = re.search(r'<script type="application/json" id="dsh-data">(.*?)</script>', page, re.S).group(1)
    assert "<" not in blob and ">" not in blob and "&" not in blob
    assert json.loads(blob) == json.loads(json.dumps(build_report_data(result)))
    assert page.count("<script") == 2 and "innerHTML" not in page


def _driver(user_data: Path):
    if not CHROMIUM.exists() or not Path(CHROMEDRIVER).exists():
        pytest.skip("Chromium or chromedriver is not installed (apt-get install chromium chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={user_data}", "--window-size=1400,900"):
        options.add_argument(flag)
    service = webdriver.ChromeService(executable_path=CHROMEDRIVER)
    return webdriver.Chrome(options=options, service=service)


def _detail_heading(browser, expected: str) -> str:
    """The heading of the request the page opened, once it reads ``expected`` (or after 10 s, as it
    is then): the page fills it in after a click or a hash change, asynchronously in Chromium."""
    from selenium.common.exceptions import NoSuchElementException, TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def text() -> str:
        try:
            return browser.find_element(By.CSS_SELECTOR, "#detail h2").text
        except NoSuchElementException:
            return ""

    try:
        WebDriverWait(browser, 10).until(lambda _: text() == expected)
    except TimeoutException:
        pass
    return text()


def test_report_in_chromium_timeline_break_cause_and_inert_hostile_text(tmp_path, browser):
    from selenium.webdriver.common.by import By

    log = _hostile_log(tmp_path)
    out = tmp_path / "report.html"
    run = CliRunner().invoke(cli, ["report", str(log), "-o", str(out)], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    browser.get(out.as_uri())

    timeline = browser.find_element(By.ID, "timeline")
    columns = timeline.find_elements(By.CSS_SELECTOR, ".req")
    assert [c.get_attribute("data-request") for c in columns] == ["0", "1"]
    markers = timeline.find_elements(By.CSS_SELECTOR, ".break-marker")
    assert [m.get_attribute("data-request") for m in markers] == ["1"]

    markers[0].click()
    detail = browser.find_element(By.ID, "detail")
    assert detail.find_element(By.TAG_NAME, "h2").text == "Request 1 · loop 2/1/1"
    assert detail.find_element(By.CSS_SELECTOR, ".cause").text == "header_change"
    evidence = detail.find_elements(By.CSS_SELECTOR, ".evidence li b")
    assert evidence and all(e.text.endswith("request/header") for e in evidence)
    fields = [row.find_elements(By.TAG_NAME, "td")[0].text
              for row in detail.find_elements(By.CSS_SELECTOR, "table.fields tr")[1:]]
    assert fields == ["system"]

    columns[0].click()
    texts = [p.text for p in browser.find_elements(By.CSS_SELECTOR, "#detail .messages pre.text")]
    assert HOSTILE in texts and f"Echo: {TEXTAREA_TEXT}" not in texts  # request 0 has only the prompt
    columns[1].click()
    texts = [p.text for p in browser.find_elements(By.CSS_SELECTOR, "#detail .messages pre.text")]
    assert texts == [HOSTILE, f"Echo: {TEXTAREA_TEXT}", "Second question"]
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    assert browser.execute_script("return document.querySelectorAll('img, textarea').length") == 0
    assert browser.execute_script("return document.scripts.length") == 2

    # a finding a baseline accepts says "baselined", as check's Markdown summary words it
    finding = ("DSH810 info{}: no capture given or found beside the log (wire.jsonl) (hint: pass --capture FILE, or "
               "put a wire.jsonl holding the log's requests beside it or up to four folders above it)")
    assert [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#log-findings .finding-item")] == [finding.format("")]
    baseline, again = tmp_path / "b.json", tmp_path / "baselined.html"
    assert CliRunner().invoke(cli, ["check", str(log), "--json-report", str(baseline)]).exit_code == 0
    run = CliRunner().invoke(cli, ["report", str(log), "--baseline", str(baseline), "-o", str(again)])
    assert run.exit_code == 0, run.output
    browser.get(again.as_uri())
    assert [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#log-findings .finding-item")] == [
        finding.format(" (baselined)")]
    assert browser.get_screenshot_as_png()[:8] == b"\x89PNG\r\n\x1a\n"


def test_large_log_is_paged(tmp_path, browser):
    from selenium.webdriver.common.by import By

    b = LogBuilder(session_id="session-long")
    with b.turn("Count to 450, one step each."):
        for n in range(450):
            with b.step():
                b.assistant(f"{n}")
    log = b.write_jsonl(tmp_path / "long" / "session.jsonl")
    out = tmp_path / "long.html"
    out.write_text(format_html(run_check([log], policy=Policy())), encoding="utf-8")
    browser.get(out.as_uri())
    assert len(browser.find_elements(By.CSS_SELECTOR, "#timeline .req")) == 200
    browser.find_element(By.ID, "next-page").click()
    browser.find_element(By.ID, "next-page").click()
    columns = browser.find_elements(By.CSS_SELECTOR, "#timeline .req")
    assert [c.get_attribute("data-request") for c in columns] == [str(n) for n in range(400, 450)]
    columns[-1].click()
    assert _detail_heading(browser, "Request 449 · loop 1/450/1") == "Request 449 · loop 1/450/1"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#detail .messages pre.text")) == 30


CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _corpus_log(name: str) -> Path:
    found = sorted((CORPUS / "live" / name / "home" / "sessions").glob("*/*/session.jsonl.zstd"))
    if not found:
        pytest.skip("corpus absent")
    return found[0]


def _report(tmp_path: Path, log: Path) -> Path:
    out = tmp_path / "report.html"
    run = CliRunner().invoke(cli, ["report", str(log), "-o", str(out)], catch_exceptions=False)
    assert run.exit_code == 0, run.output
    return out


#: An element's text as WebDriver's ``.text`` gives it here: its rendered text, trimmed; none when it
#: is not rendered. In the page's JavaScript, so that a script reads a whole table or list in one
#: round trip: a WebDriver call per element (and Selenium's ``get_attribute``, a script per call) costs
#: 10-15 ms, a second or more per table (measured in session 41; the same values). Read cells, not
#: rows: a row's innerText joins its cells with tabs, WebDriver's with spaces.
TEXT_JS = "const text = e => e.getClientRects().length ? e.innerText.trim() : '';"


def _rows(browser, selector: str) -> dict[str, str]:
    """Each row ``selector`` finds, by its ``data-key``: the text of its first cell."""
    return dict(browser.execute_script(TEXT_JS + """
        return Array.from(document.querySelectorAll(arguments[0]),
                          row => [row.getAttribute('data-key'), text(row.querySelector('td'))]);""", selector))


def test_summary_and_break_costs_equal_the_cache_ledger_for_a_corpus_log(tmp_path, browser, monkeypatch):
    """c-change switches from flash to pro and has five header-change breaks."""
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the log alone, as pinned (a capture found prices: test_found38)
    from selenium.webdriver.common.by import By

    log = _corpus_log("c-change")
    cache = json.loads(CliRunner().invoke(cli, ["cache", str(log), "--json"]).output.splitlines()[0])
    assert (cache["breaks"], cache["cost"]["cost_usd"]["total"], cache["cost"]["break_cost_usd"]) == (
        5, 0.01107667, 0.007635584)
    browser.get(_report(tmp_path, log).as_uri())
    assert _rows(browser, "#overview tr[data-key]") == {
        "title": "Fake session title", "models": "deepseek-v4-flash, deepseek-v4-pro", "requests": "8",
        "breaks": "5 (header_change 5)",
        "hit": f"{100 * cache['actual_hit_ratio']:.1f}% ({cache['actual_cache_read']} of {cache['prompt_tokens']} "
               "prompt tokens)",
        # the title call logged no usage: the amounts it owes are lower bounds; it is no break, so the
        # break cost is exact, as cache, usage and check give it (Priced: owed only by the breaks that
        # lost tokens; before, the page bounded it by every unpriced request)
        "cost": "≥$0.0111 (unpriced: 1 usage not logged)", "break-cost": "$0.0076", "no-cache": "≥$0.0341",
        "span": "2026-12-02T11:02:21Z – 2026-12-02T11:02:25Z"}
    assert _rows(browser, "#overview tr[data-key=hit]") == {"hit": "62.8% (36160 of 57609 prompt tokens)"}
    items = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#overview .break-list li")]
    # each loss beside the reusable reads it is measured from (issue 11 item 3)
    assert items == ["break at request 2: header_change, lost 7936 of 7936 reusable token(s), $0.0051",
                     "break at request 3: header_change, lost 0 of 7936 reusable token(s), $0.0000",
                     "break at request 4: header_change, lost 1152 of 7936 reusable token(s), $0.0007",
                     "break at request 6: header_change, lost 0 of 8192 reusable token(s), $0.0000",
                     "break at request 7: header_change, lost 2880 of 7680 reusable token(s), $0.0018"]

    browser.find_element(By.CSS_SELECTOR, "#overview .break-list a[href='#break-2']").click()
    assert _detail_heading(browser, "Request 2 · loop 2/1/1") == "Request 2 · loop 2/1/1"
    assert _rows(browser, "#detail table.cost tr[data-key]") == {
        "model": "deepseek-v4-pro", "window": "off-peak", "sent": "2026-12-02T11:02:21Z", "cost": "$0.0053",
        "break-cost": "$0.0051 (7936 lost of 7936 reusable token(s))"}
    # every request's cost is the ledger's: they add up to cache --json's session total
    data = build_report_data(run_check([log], policy=Policy()))["sessions"][0]
    assert round(sum(r["cost"]["total"] for r in data["requests"] if r["cost"]), 9) == cache["cost"]["cost_usd"]["total"]
    assert [r["cost"]["total"] if r["cost"] else r["unpriced"] for r in data["requests"]] == [
        "usage not logged", 0.00119625, 0.00531102, 0.000270292, 0.001435588, 0.00035706, 0.00038192, 0.00212454]
    assert round(sum(b["cost"] for b in data["overview"]["break_details"]), 9) == cache["cost"]["break_cost_usd"]


def test_deep_links_open_the_request_or_break_and_opening_sets_the_link(tmp_path, browser):
    from selenium.webdriver.common.by import By

    uri = _report(tmp_path, _corpus_log("c-change")).as_uri()
    browser.get(uri + "#request-5")
    assert _detail_heading(browser, "Request 5 · loop 4/2/1") == "Request 5 · loop 4/2/1"
    assert "sel" in browser.find_element(By.ID, "request-5").get_attribute("class").split()
    assert [c.get_attribute("data-request") for c in browser.find_elements(By.CSS_SELECTOR, "#timeline .req.sel")] == ["5"]

    browser.get(uri + "#break-4")  # same document, new hash: the hashchange path
    assert _detail_heading(browser, "Request 4 · loop 4/1/1") == "Request 4 · loop 4/1/1"
    assert browser.find_element(By.CSS_SELECTOR, "#detail .cause").text == "header_change"
    browser.get("about:blank")
    browser.get(uri + "#break-7")  # a fresh load
    assert _detail_heading(browser, "Request 7 · loop 6/1/1") == "Request 7 · loop 6/1/1"
    browser.get(uri + "#break-5")  # request 5 is not a break
    assert browser.find_element(By.CSS_SELECTOR, "#detail p.failed").text == "no break 5 in this log"

    browser.find_element(By.ID, "request-3").click()
    assert browser.execute_script("return location.hash") == "#request-3"
    browser.find_element(By.ID, "break-6").click()
    assert browser.execute_script("return location.hash") == "#break-6"
    assert _detail_heading(browser, "Request 6 · loop 5/1/1") == "Request 6 · loop 5/1/1"


def _search_log(tmp_path: Path) -> Path:
    from dsh_audit.testing import ToolCall

    b = LogBuilder(session_id="session-search", cwd="/home/dev/project")
    with b.turn("alpha one"):
        with b.step():
            reply = b.assistant(tool_calls=[ToolCall("write", {"path": "notes.txt"})])
            b.tool_result(reply.call_ids[0], "written")
        with b.step():
            b.assistant("done alpha")
    with b.turn(HOSTILE):
        with b.step():
            b.assistant("Echo")
    with b.turn("charlie three"):
        with b.step():
            b.assistant("ok")
    return b.write_jsonl(tmp_path / "search" / "session.jsonl")


def test_search_filters_requests_by_message_text_and_stays_inert(tmp_path, browser):
    from selenium.webdriver.common.by import By

    browser.get(_report(tmp_path, _search_log(tmp_path)).as_uri())
    box = browser.find_element(By.ID, "search")

    def shown(query: str) -> tuple[list[str], str]:
        box.clear()
        if query:
            box.send_keys(query)
        else:
            browser.execute_script("arguments[0].dispatchEvent(new Event('input'))", box)
        return ([c.get_attribute("data-request") for c in browser.find_elements(By.CSS_SELECTOR, "#timeline .req")],
                browser.find_element(By.ID, "search-count").text)

    assert shown("charlie") == (["3"], "1 of 4 request(s) match")
    assert shown("NOTES.TXT") == (["1", "2", "3"], "3 of 4 request(s) match")
    assert shown("alpha") == (["0", "1", "2", "3"], "4 of 4 request(s) match")
    assert shown(SCRIPT_TEXT) == (["2", "3"], "2 of 4 request(s) match")
    assert shown("zzz-none") == ([], "0 of 4 request(s) match")
    assert shown("") == (["0", "1", "2", "3"], "")
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
    assert browser.execute_script("return document.querySelectorAll('img, textarea').length") == 0

    shown("charlie")
    browser.find_element(By.ID, "request-3").click()
    texts = [p.text for p in browser.find_elements(By.CSS_SELECTOR, "#detail .messages pre.text")]
    assert texts == ["alpha one", '[tool call write] {"path": "notes.txt"}', "[tool result] written", "done alpha",
                     HOSTILE, "Echo", "charlie three"]
    # the page assembles every request's history from its base request and delta
    assert [browser.execute_script(f"return window.dshReport.messages({k}).length") for k in range(4)] == [1, 3, 5, 7]


def _growing_log(tmp_path: Path, turns: int) -> Path:
    """History that grows without compaction; every 4th turn prunes an older tool result."""
    from dsh_audit.testing import ToolCall

    b = LogBuilder(session_id=f"session-grow-{turns}")
    results: list[int] = []
    filler = "lorem ipsum dolor sit amet " * 60
    for t in range(turns):
        with b.turn(f"prompt-{t}-marker {filler[:400]}"):
            with b.step():
                reply = b.assistant(tool_calls=[ToolCall("read", {"path": f"file-{t}.txt"})])
                results.append(b.tool_result(reply.call_ids[0], f"{filler[:800]} result-{t}-marker {filler[:800]}"))
            with b.step():
                b.assistant(f"answer-{t}-marker")
        if t % 4 == 3:
            b.prune(results[t - 2])
    return b.write_jsonl(tmp_path / f"grow-{turns}" / "session.jsonl")


def _blob(page: str) -> str:
    return re.search(r'<script type="application/json" id="dsh-data">(.*?)</script>', page, re.S).group(1)


def test_page_size_is_linear_in_a_growing_log_and_embeds_each_message_once(tmp_path):
    sizes = {}
    for turns in (24, 48):
        log = _growing_log(tmp_path, turns)
        result = run_check([log], policy=Policy())
        page = format_html(result)
        data = json.loads(_blob(page))["sessions"][0]
        prunes = turns // 4
        assert len(data["requests"]) == 2 * turns
        # prompt, call, result, answer per turn and a pruned result per prune, but no request
        # follows the last answer and the last prune
        assert len(data["messages"]) == 4 * turns - 1 + prunes - 1
        for t in range(turns):
            assert page.count(f"prompt-{t}-marker") == 1
            assert page.count(f"answer-{t}-marker") == (1 if t < turns - 1 else 0)
            assert page.count(f"result-{t}-marker") == 1  # the pruned copy keeps only head and tail
        # every message number is written once over all the requests' deltas
        written = [n for r in data["requests"] for _, run in r["d"] for n in run]
        assert sorted(written) == list(range(len(data["messages"])))
        assert [r["n"] for r in data["requests"][:4]] == [1, 3, 5, 7]
        sizes[turns] = (log.stat().st_size, len(_blob(page)))
    log_ratio = sizes[48][0] / sizes[24][0]
    page_ratio = sizes[48][1] / sizes[24][1]
    assert 0.9 < page_ratio / log_ratio < 1.1, (sizes, log_ratio, page_ratio)


def test_a_break_of_an_unpriced_model_costs_unknown_on_the_page(tmp_path, browser):
    """A model no price table knows loses cache reads to a break: its cost is unknown (``$?``),
    never ``n/a`` or ``$0`` (the terminal views' rule, cache._money.Priced)."""
    from selenium.webdriver.common.by import By

    b = LogBuilder(session_id="unpriced-break", created_at=1_800_000_000_000, model="local-coder", system="S" * 8000)
    for text, miss, read in (("one", 2000, 0), ("two", 100, 1920)):
        with b.turn(text), b.step():
            b.assistant(text, usage={"inputTokens": miss, "outputTokens": 10, "cacheReadTokens": read})
    b.configure(system="T" * 8000)
    with b.turn("three"), b.step():
        b.assistant("three", usage={"inputTokens": 2100, "outputTokens": 10, "cacheReadTokens": 0})
    log = b.write_jsonl(tmp_path / "s" / "session.jsonl")
    browser.get(_report(tmp_path, log).as_uri())
    items = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#overview .break-list li")]
    assert items == ["break at request 2: header_change, lost 1920 of 1920 reusable token(s), $?"]
    assert _rows(browser, "#overview tr[data-key=break-cost]") == {"break-cost": "$?"}
