"""The HTML report tells the story (issue 14 Build 5, issue 13 Build 3), third round: a cache-safe
change is not drawn as a break; deep links name the session (``#<session id>/request-N``), so they
survive other logs on the page, and a link to nothing says so; a long session's breaks are
summarised by cause with the list collapsed; the session list shows project and short id; an
unreadable log shows its error only; the summary has the off-peak figure of ``usage --json``.

The browser tests use the run's headless Chromium (``tests/conftest.py``'s ``browser`` fixture,
one per worker). Screenshots at 1400 px and at 390 px are written to ``<tmp_path>/screenshots/``
(``pytest --basetemp=DIR`` keeps them in ``DIR``).
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import pytest
from _cli import invoke
from test_html_report import TEXT_JS, _detail_heading, _rows

from dsh_audit.gate import Policy, run_check
from dsh_audit.report import build_report_data, format_html
from dsh_audit.testing import LogBuilder, ToolCall

#: 2026-12-02T02:00:00Z, a Wednesday: DeepSeek's peak window (01:00-04:00 UTC), so the off-peak
#: figure differs from the cost
PEAK = 1_796_176_800_000
RED = "rgb(220, 38, 38)"
SAFE = "rgb(14, 116, 144)"
WARN = "rgb(217, 119, 6)"  # the legend's "break the policy allows"


@pytest.fixture
def chrome(browser):  # conftest.py's fixture: one headless Chromium per worker
    return browser


def _many_breaks(path: Path, *, session_id: str = "session-many-breaks", cwd: str = "/home/dev/work/shop") -> Path:
    """20 turns at peak time: a prune that loses nothing every third turn (7 breaks), a system
    change that loses 1152 tokens every third (6 breaks), and a cache-safe header change (an
    adapter default, not prompt content) every third (requests 4, 10, ...)."""
    b = LogBuilder(session_id=session_id, cwd=cwd, created_at=PEAK, system="S" * 4000)
    read = 0
    for k in range(20):
        with b.turn(f"turn {k}"):
            with b.step():
                reply = b.assistant(tool_calls=[ToolCall("read", {"path": f"f{k}.txt"})],
                                    usage={"inputTokens": 300 if read else 1200, "outputTokens": 20,
                                           "cacheReadTokens": read})
                result = b.tool_result(reply.call_ids[0], "x" * 400)
            with b.step():
                b.assistant(f"done {k}", usage={"inputTokens": 150, "outputTokens": 10, "cacheReadTokens": read + 1000})
        read = 1100
        if k % 3 == 0:
            b.prune(result)
            read = 2000
        elif k % 3 == 1:
            b.configure(adapter_defaults={"reasoningEffort": bool(k % 2)})
        else:
            b.configure(system=("S" if k % 2 else "T") * 4000)
            read = 0
    return b.write_jsonl(path)


def _chat(path: Path, session_id: str, *, turns: int, title: str | None = None, cwd: str = "/home/dev/project",
          created_at: int = 1_800_000_000_000) -> Path:
    b = LogBuilder(session_id=session_id, cwd=cwd, created_at=created_at)
    for k in range(turns):
        with b.turn(f"question {k} of {session_id}"):
            with b.step():
                b.assistant(f"answer {k}")
    if title is not None:
        b.title(title)
    return b.write_jsonl(path)


def _page(tmp_path: Path, name: str, logs: list[Path]) -> Path:
    out = tmp_path / name
    out.write_text(format_html(run_check(logs, policy=Policy())), encoding="utf-8")
    return out


def _text(chrome, selector: str) -> str:
    from selenium.webdriver.common.by import By

    return chrome.find_element(By.CSS_SELECTOR, selector).text


def _texts(chrome, selector: str) -> list[str]:
    """WebDriver's text of each element ``selector`` finds (a table row's: its cells joined by spaces,
    where ``TEXT_JS`` would join them by tabs)."""
    from selenium.webdriver.common.by import By

    return [e.text for e in chrome.find_elements(By.CSS_SELECTOR, selector)]


def _where(chrome) -> list[tuple[str, str]]:
    """Each session list entry's project and short id."""
    return [tuple(where) for where in chrome.execute_script(TEXT_JS + """
        return Array.from(document.querySelectorAll('#session-list .where'),
                          w => [text(w.querySelector('.project')), text(w.querySelector('.sid'))]);""")]


def _usd(value: float) -> str:
    return f"${value:.4f}"


def test_break_summary_groups_by_cause_and_lists_the_breaks_that_lost_nothing(tmp_path):
    data = build_report_data(run_check([_many_breaks(tmp_path / "m" / "session.jsonl")], policy=Policy()))
    overview = data["sessions"][0]["overview"]
    # by the cause each token was lost to, as stats' by_cause has them (review C of session 45, F5): the breaks'
    # prefix was cached again by requests sent at the same instant, so most of it was lost to write_not_landed
    assert overview["break_summary"] == [
        {"cause": "write_not_landed", "count": 0, "lost": 5760, "pot": 5760, "cost": 0.00169344, "nothing": [],
         "unknown": 0, "unpriced": 0},
        {"cause": "header_change", "count": 6, "lost": 1152, "pot": 1152, "cost": 0.000338688, "nothing": [],
         "unknown": 0, "unpriced": 0},
        {"cause": "prune", "count": 7, "lost": 0, "pot": 0, "cost": 0.0, "nothing": [2, 8, 14, 20, 26, 32, 38],
         "unknown": 0, "unpriced": 0}]
    assert round(sum(c["cost"] for c in overview["break_summary"]), 9) == overview["cost"]["break_cost_usd"]


def cold_break(path: Path, session_id: str) -> Path:
    """One request, reusable 4096, read 0 after 4 idle hours and a system change: 1024 lost to the
    change, 3072 to the cold cache (review C of session 45, F5)."""
    b = LogBuilder(session_id=session_id, created_at=1_800_000_000_000, model="deepseek-v4-flash",
                   system="S" * 16000)
    with b.turn("one"), b.step():
        b.assistant("one", usage={"inputTokens": 4100, "outputTokens": 10, "cacheReadTokens": 0})
    with b.turn("two"), b.step():
        b.assistant("two", usage={"inputTokens": 100, "outputTokens": 10, "cacheReadTokens": 4096})
    b.clock.now += 4 * 3600_000
    b.configure(system="S" * 12000 + "T" * 4000)
    with b.turn("three"), b.step():
        b.assistant("three", usage={"inputTokens": 4200, "outputTokens": 10, "cacheReadTokens": 0})
    return b.write_jsonl(path, packed=False)


def test_a_break_that_also_went_cold_says_by_cause_what_stats_says(tmp_path, monkeypatch, capsys):
    """Review C of session 45, F5: one request, reusable 4096, read 0, lost 1024 to its system change and
    3072 to the cold cache (4 h idle): the page's breaks by cause said header_change lost 4096, stats 1024.
    Both now give each cause its own tokens and cost, over the request's reusable 4096."""
    log = cold_break(tmp_path / "s" / "session.jsonl", "s-two")
    summary = build_report_data(run_check([log]))["sessions"][0]["overview"]["break_summary"]
    assert [(r["cause"], r["count"], r["pot"], r["lost"], r["cost"]) for r in summary] == [
        ("cold_ttl", 0, 4096, 3072, 0.000451584), ("header_change", 1, 4096, 1024, 0.000150528)]
    db = str(tmp_path / "i.sqlite")
    assert invoke(monkeypatch, capsys, "index", "--db", db, str(log))[0] == 0
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", db, "--json")
    stats = json.loads(out)
    assert [(r["cause"], r["reusable_cache_read"], r["lost_tokens"], r["break_cost_usd"])
            for r in stats["cost_by_cause"]] == [(r["cause"], r["pot"], r["lost"], r["cost"]) for r in summary]


def test_summary_numbers_equal_cache_and_usage_json_and_breaks_are_summarised(tmp_path, chrome, monkeypatch, capsys):
    from selenium.webdriver.common.by import By

    log = _many_breaks(tmp_path / "m" / "session.jsonl")
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(log), "--json")
    assert code == 0
    cache = json.loads(out.splitlines()[0])
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(log), "--json")
    assert code == 0
    usage = json.loads(out)["rows"][0]
    assert usage["key"] == "session-many-breaks"
    # the session ran in the peak window: off-peak it would have cost half
    assert (usage["cost_usd"]["total"], usage["off_peak_cost_usd"], cache["cost"]["off_peak_cost_usd"]) == (
        0.0056772, 0.0028386, 0.0028386)
    page = _page(tmp_path, "many.html", [log])
    chrome.get(page.as_uri())
    assert _rows(chrome, "#overview tr[data-key]") == {
        "title": "-", "models": "deepseek-v4-flash", "requests": "40", "breaks": "13 (header_change 6, prune 7)",
        "hit": f"{100 * cache['actual_hit_ratio']:.1f}% ({cache['actual_cache_read']} of {cache['prompt_tokens']} "
               "prompt tokens)",
        "cost": _usd(cache["cost"]["cost_usd"]["total"]), "break-cost": _usd(cache["cost"]["break_cost_usd"]),
        "no-cache": _usd(usage["no_cache_cost_usd"]), "span": "2026-12-02T02:00:00Z – 2026-12-02T02:00:00Z"}
    assert _text(chrome, "#overview tr[data-figure=off-peak]") == "all off-peak " + _usd(usage["off_peak_cost_usd"])
    assert _text(chrome, "#overview tr[data-figure=off-peak] td") == "$0.0028"
    # by cause: count, the reusable reads the tokens lost are measured from, the tokens lost, their cost
    # (adding up to the break cost), how many lost nothing
    assert _texts(chrome, "#overview table.break-causes tr") == [
        "break cause breaks reusable of breaks that lost tokens lost cost lost nothing",
        "write_not_landed 0 5760 5760 $0.0017 0",
        "header_change 6 1152 1152 $0.0003 0",
        "prune 7 0 0 $0.0000 7"]
    assert _usd(cache["cost"]["break_cost_usd"]) == "$0.0020"
    # the 13 breaks are listed collapsed: those that lost tokens one a line, the rest one line per cause
    details = chrome.find_element(By.CSS_SELECTOR, "#overview details.break-details")
    assert details.get_attribute("open") is None
    assert _texts(chrome, "#overview .break-list li") == [""] * 7
    assert details.find_element(By.TAG_NAME, "summary").text == (
        "all 13 breaks: 6 lost tokens, 7 lost nothing (one line per cause)")
    details.find_element(By.TAG_NAME, "summary").click()
    assert _texts(chrome, "#overview .break-list li") == [
        *(f"break at request {i}: header_change, lost 1152 of 1152 reusable token(s), $0.0003"
          for i in (6, 12, 18, 24, 30, 36)),
        "prune: 7 break(s) lost nothing, at request(s) 2, 8, 14, 20, 26, 32, 38"]
    # a break that lost nothing opens from its group, with its cause
    chrome.find_element(By.CSS_SELECTOR, "#overview li.nothing a[href='#break-8']").click()
    assert _detail_heading(chrome, "Request 8 · loop 5/1/1") == "Request 8 · loop 5/1/1"
    assert _text(chrome, "#detail .cause") == "prune"
    # the session passes: its break is one the policy allows, drawn in the legend's orange (issue 14 §5)
    assert "allowed" in chrome.find_element(By.CSS_SELECTOR, "#detail .cause").get_attribute("class").split()
    assert chrome.execute_script("return getComputedStyle(document.querySelector('#detail .cause')).color") == WARN


def test_a_cache_safe_change_is_not_drawn_as_a_break(tmp_path, chrome):
    from selenium.webdriver.common.by import By

    page = _page(tmp_path, "safe.html", [_many_breaks(tmp_path / "m" / "session.jsonl")])
    chrome.get(page.as_uri() + "#request-4")
    assert _detail_heading(chrome, "Request 4 · loop 3/1/1") == "Request 4 · loop 3/1/1"
    assert _text(chrome, "#detail p.transition") == (
        "cache-safe change (step) · header_change · the prompt prefix is intact: no cache read lost")
    cause = chrome.find_element(By.CSS_SELECTOR, "#detail .cause")
    assert cause.get_attribute("class").split() == ["cause", "safe"]
    style = "return getComputedStyle(document.querySelector(arguments[0])).color"
    assert chrome.execute_script(style, "#detail .cause") == SAFE
    assert chrome.execute_script(style, "#detail p.transition") == SAFE
    # no break marker on it, and its column is no failing one
    assert chrome.find_elements(By.ID, "break-4") == []
    assert chrome.find_element(By.ID, "request-4").get_attribute("class").split() == ["req", "sel"]
    chrome.get(page.as_uri() + "#break-6")  # a real break keeps the break style
    assert _detail_heading(chrome, "Request 6 · loop 4/1/1") == "Request 6 · loop 4/1/1"
    assert _text(chrome, "#detail p.transition") == "cache break (step) · cause header_change"
    assert chrome.execute_script(style, "#detail .cause") == WARN  # a break the policy allows: the legend's orange


ODD_ID = "sess ion/β#1?&x"


def test_deep_links_name_the_session_and_survive_other_logs_on_the_page(tmp_path, chrome):
    from selenium.webdriver.common.by import By

    alpha = _chat(tmp_path / "a" / "session.jsonl", "session-alpha", turns=5, title="Alpha")
    odd = _chat(tmp_path / "b" / "session.jsonl", ODD_ID, turns=3, title="Odd one", created_at=1_800_000_100_000)
    gamma = _chat(tmp_path / "c" / "session.jsonl", "session-gamma", turns=3, created_at=1_800_000_200_000)
    first = _page(tmp_path, "first.html", [alpha, odd]).as_uri()
    second = _page(tmp_path, "second.html", [gamma, odd, alpha]).as_uri()  # other logs, another order
    link = "#" + quote(ODD_ID, safe="-_.!~*'()") + "/request-2"
    assert link == "#sess%20ion%2F%CE%B2%231%3F%26x/request-2"

    for uri in (first, second):
        chrome.get(uri + link)
        assert _detail_heading(chrome, "Request 2 · loop 3/1/1") == "Request 2 · loop 3/1/1"
        assert _text(chrome, "#session-title") == "Odd one"
        assert _texts(chrome, "#detail .messages pre.text")[-1] == f"question 2 of {ODD_ID}"
    # opening a request sets that link
    chrome.find_element(By.ID, chrome.execute_script(
        "return document.querySelector('#timeline .req[data-request=\"1\"]').id")).click()
    assert chrome.execute_script("return location.hash") == "#sess%20ion%2F%CE%B2%231%3F%26x/request-1"
    chrome.get(second + "#session-alpha/break-0")  # request 0 is no break
    assert _text(chrome, "#detail p.failed") == "no break 0 in this log"
    assert _text(chrome, "#session-title") == "Alpha"

    # a link to nothing says so and opens nothing else
    chrome.get(second + "#session-gone/request-1")
    assert _text(chrome, "#detail p.link-error") == (
        "no session “session-gone” in this report: the link #session-gone/request-1 opens nothing here.")
    chrome.get(first + "#session-alpha/request-9")
    assert _text(chrome, "#detail p.link-error") == "no request 9 in this log"
    chrome.get(first + "#nowhere")
    assert _text(chrome, "#detail p.link-error") == "the link #nowhere names no session or request of this report."
    # the old form: request 4 is only alpha's, so it is unambiguous; request 1 is in every log
    chrome.get(second + "#request-4")
    assert _detail_heading(chrome, "Request 4 · loop 5/1/1") == "Request 4 · loop 5/1/1"
    assert _text(chrome, "#session-title") == "Alpha"
    chrome.get(second + "#request-1")
    assert _text(chrome, "#detail p.link-error") == (
        "the link #request-1 names no session, and 3 sessions of this report have request 1. Open it in: "
        "session-gamma (/home/dev/project, session-gamma), Odd one (/home/dev/project, sess ion/β#1?&x), "
        "Alpha (/home/dev/project, session-alpha)")
    chrome.find_element(By.CSS_SELECTOR, "#detail p.link-error a:nth-of-type(3)").click()
    assert _detail_heading(chrome, "Request 1 · loop 2/1/1") == "Request 1 · loop 2/1/1"
    assert _text(chrome, "#session-title") == "Alpha"
    assert chrome.execute_script("return location.hash") == "#session-alpha/request-1"
    chrome.get(second + "#session-alpha")  # a session by its id
    assert _text(chrome, "#session-title") == "Alpha"
    chrome.get(second + "#s9-request-1")
    assert _text(chrome, "#detail p.link-error") == "no session 9 in this report."


def test_session_list_shows_project_and_short_id(tmp_path, chrome):
    ids = ["session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd", "session-86ef2d28-6e7b-43ae-ad66-0aa63a88c3dd",
           "402a1ae8-7f85-40fc-b7cf-82cfc177dcd7"]
    cwds = ["/home/dev/work/shop", "/home/dev/work/blog", "G:\\src\\app"]
    logs = [_chat(tmp_path / str(k) / "session.jsonl", sid, turns=1, title="Same title", cwd=cwd,
                  created_at=1_800_000_000_000 + 1000 * k) for k, (sid, cwd) in enumerate(zip(ids, cwds, strict=True))]
    result = run_check(logs, policy=Policy())
    data = build_report_data(result)
    assert [(s["project"], s["short_id"], s["anchor"]) for s in data["sessions"]] == [
        ("/home/dev/work/shop", "session-86ef2d28-6e7a", ids[0]),
        ("/home/dev/work/blog", "session-86ef2d28-6e7b", ids[1]), ("G:\\src\\app", "402a1ae8", ids[2])]
    out = tmp_path / "list.html"
    out.write_text(format_html(result), encoding="utf-8")
    chrome.get(out.as_uri())
    assert _where(chrome) == [  # newest first
        ("G:\\src\\app", "402a1ae8"), ("/home/dev/work/blog", "session-86ef2d28-6e7b"),
        ("/home/dev/work/shop", "session-86ef2d28-6e7a")]
    assert _text(chrome, "#session-info .ident") == f"project G:\\src\\app · {ids[2]} · {logs[2]}"
    chrome.find_element("id", "search").send_keys("work/blog")
    assert _where(chrome) == [("/home/dev/work/blog", "session-86ef2d28-6e7b")]


def test_an_unreadable_log_shows_its_error_only(tmp_path, chrome):
    from selenium.webdriver.common.by import By

    bad = _chat(tmp_path / "bad" / "session.jsonl", "session-bad", turns=1, cwd="relative/path")
    good = _chat(tmp_path / "good" / "session.jsonl", "session-good", turns=2)
    chrome.get(_page(tmp_path, "bad.html", [bad, good]).as_uri())
    assert _text(chrome, "#session-title") == "session-bad"  # failing first
    assert _texts(chrome, "#session-list li[data-session='0'] .meta > span") == [
        "refused", "failed: 1 refused log(s)"]  # by cause, as the headline (its DSH212 is the refusal)
    assert _text(chrome, "#session-info .error") == (
        f'{bad}:1: stored session "session-bad" failed validation: session header cwd must be an absolute '
        'path, got "relative/path" (hint: tokenised test fixtures need --lenient)')
    assert _text(chrome, "#overview") == "" and _text(chrome, "#legend") == ""
    assert chrome.find_element(By.ID, "timeline").is_displayed() is False
    assert chrome.find_elements(By.CSS_SELECTOR, "#timeline .req, #overview table, #overview td") == []
    assert _text(chrome, "#detail") == "DSH refuses this log: no request to show."
    chrome.find_element(By.CSS_SELECTOR, "#session-list li[data-session='1'] .name").click()
    assert _text(chrome, "#session-title") == "session-good"
    assert chrome.find_element(By.ID, "timeline").is_displayed() is True
    assert len(chrome.find_elements(By.CSS_SELECTOR, "#timeline .req")) == 2


def test_screenshots_at_1400_and_390_px(tmp_path, chrome):
    from selenium.webdriver.common.by import By

    shots = tmp_path / "screenshots"
    shots.mkdir()
    logs = [_many_breaks(tmp_path / "m" / "session.jsonl"),
            _many_breaks(tmp_path / "n" / "session.jsonl", session_id="session-many-2", cwd="/srv/other/site"),
            _chat(tmp_path / "bad" / "session.jsonl", "session-bad", turns=1, cwd="relative/path")]
    uri = _page(tmp_path, "shots.html", logs).as_uri()
    chrome.get(uri + "#session-many-breaks/break-6")
    assert _detail_heading(chrome, "Request 6 · loop 4/1/1") == "Request 6 · loop 4/1/1"
    chrome.find_element(By.CSS_SELECTOR, "#overview details.break-details summary").click()
    chrome.save_screenshot(str(shots / "round3-1400.png"))
    chrome.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                            {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
    try:
        chrome.get(uri + "#session-many-2/request-4")
        assert chrome.execute_script("return window.innerWidth") == 390
        assert _detail_heading(chrome, "Request 4 · loop 3/1/1") == "Request 4 · loop 3/1/1"
        chrome.find_element(By.CSS_SELECTOR, "#overview details.break-details summary").click()
        width, inner = chrome.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width <= inner, (width, inner)
        chrome.execute_script("window.scrollTo(0, 0)")
        chrome.save_screenshot(str(shots / "round3-390.png"))
    finally:
        chrome.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    assert sorted(p.name for p in shots.iterdir()) == ["round3-1400.png", "round3-390.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in shots.iterdir())


def test_an_id_no_url_can_hold_falls_back_to_the_pages_own_link(tmp_path, chrome):
    """A session id with a lone surrogate (JSON allows it) has no URL escape: its links use the id
    with the surrogate written as ``\\ud800`` (ranked, so no other log's id is it), and the page
    still opens the page's positional form."""
    b = LogBuilder(session_id="session-LONE-lone")  # the surrogate is written into the JSON text below
    for k in range(2):
        with b.turn(f"question {k}"), b.step():
            b.assistant(f"answer {k}")
    b.title("Lone")
    lone = tmp_path / "s" / "session.jsonl"
    lone.parent.mkdir()
    lone.write_text("".join(line.replace("LONE", "\\ud800") + "\n" for line in b.lines(packed=False)),
                    encoding="ascii")
    other = _chat(tmp_path / "o" / "session.jsonl", "session-other", turns=2, created_at=1_800_000_100_000)
    uri = _page(tmp_path, "lone.html", [lone, other]).as_uri()
    chrome.get(uri + "#s0-request-1")
    assert _detail_heading(chrome, "Request 1 · loop 2/1/1") == "Request 1 · loop 2/1/1"
    assert _text(chrome, "#session-title") == "Lone"
    assert chrome.execute_script("return location.hash") == "#session-%5Cud800-lone~1/request-1"
