"""Two leftovers of session 31.

Issue 13: ``usage`` counts the breaks whose cache reads were not logged, which lost an unknown
amount, as ``cache --json`` does (``lost_unknown_requests`` in every JSON row and the total; ``+?``
beside the lost tokens and a caption note in a table and in Markdown; a ``lost unknown`` column in
CSV), never a silent 0.

Issue 14: the HTML report's session list links to each log by its stable anchor (its session id,
URL-escaped; two files of one session ``ID~1`` and ``ID~2`` by path), not by its position, so a link
copied from one report opens the same session in another; the older ``#session-K`` still opens
the K-th log. The browser check uses the run's headless Chromium (``tests/conftest.py``'s ``browser``) and skips
as the other browser tests do when Chromium is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_unknown_lost31 import _unknown_log

from dsh_audit.gate import Policy, run_check
from dsh_audit.report import build_report_data, format_html
from dsh_audit.testing import LogBuilder

#: A session id no URL fragment or HTML id may hold as it is: a slash, a space, a quote, markup,
#: a hash and a percent sign (":" and "@" a fragment holds).
HOSTILE = 'a/b c"<x>#%:@'


@pytest.fixture
def run(cli80: Any) -> Any:
    """``dsh-audit ARGS`` from ``tmp_path`` at 80 columns (conftest's ``cli80``)."""
    return cli80


def _lines(out: str) -> list[str]:
    return [line.rstrip() for line in out.splitlines()]


_UNPRICED = ("cache reads not logged (deepseek-official logs cacheReadTokens only when the API reported them: "
             "the prompt's split into hits and misses is unknown)")


def _usage_row(key: str) -> dict[str, Any]:
    return {"key": key, "requests": 3,
            "tokens": {"cache_miss": 2100, "cache_read": 1920, "cache_write": 0, "output": 30, "reasoning": 0,
                       "total": 4050},
            "usage_unknown_requests": 0, "tokens_unknown_requests": {"cache_miss": 1, "cache_read": 1},  # tour39
            "cost_usd": {"cache_miss": 0.00063, "cache_read": 1.152e-05, "cache_write": 0, "output": 2.4e-05,
                         "total": 0.00066552},
            "no_cache_cost_usd": 0.00123, "off_peak_cost_usd": 0.00033276, "reusable_cache_read": 1920, "lost_tokens": 0,
            "lost_cost_usd": None,
            "break_cost_usd": None, "lost_unknown_requests": 1, "unpriced_requests": 1, "cost_complete": False}


def test_usage_json_counts_the_breaks_that_lost_an_unknown_amount_as_cache_does(tmp_path: Path, run: Any) -> None:
    _unknown_log(tmp_path)
    code, out, err = run("usage", "s-unknown/session.jsonl", "--json")
    assert code == 0
    assert err == []  # --json: the unpriced reason is in the JSON
    table = json.loads(out)
    assert (table["by"], table["sessions"], table["rows"], table["totals"], table["unpriced"]) == (
        "session", 1, [{"key": "s-unknown", "session_id": "s-unknown", "path": "s-unknown/session.jsonl",
                        **_usage_row("s-unknown")}], _usage_row("total"), {_UNPRICED: 1})
    # the same word and count as cache --json
    code, out, _ = run("cache", "s-unknown/session.jsonl", "--json")
    assert (code, json.loads(out)["cost"]["lost_unknown_requests"]) == (0, table["totals"]["lost_unknown_requests"])
    # by request: only the break's row counts it
    code, out, _ = run("usage", "s-unknown/session.jsonl", "--json", "--by", "request")
    assert code == 0
    assert [(r["key"], r["lost_unknown_requests"], r["break_cost_usd"]) for r in json.loads(out)["rows"]] == [
        ("s-unknown #0", 0, 0), ("s-unknown #1", 0, 0), ("s-unknown #2", 1, None)]


def test_usage_table_csv_and_markdown_say_the_loss_is_unknown(tmp_path: Path, run: Any) -> None:
    _unknown_log(tmp_path)
    code, out, err = run("usage", "s-unknown/session.jsonl")
    assert (code, err) == (0, [f"warning: 1 request(s) unpriced: {_UNPRICED}"])
    # "requests" kept at 80 columns, the tokens left out first (session 38); "reusable", what the lost
    # tokens are measured from, beside them before off-peak (session 46)
    assert _lines(out) == [
        'usage by session',
        '                                        lost',
        '                       cache            tokens',
        'session    requests     miss  reusable  (cost)          cost  no cache  unpriced',
        '────────────────────────────────────────────────────────────────────────────────',
        's-unknown         3    ≥2100      1920  0+? ($?)    ≥$0.0007  ≥$0.0012         1',
        'total             3    ≥2100      1920  0+? ($?)    ≥$0.0007  ≥$0.0012         1',
        '1 session(s); USD per 1,000,000 tokens from the price table (packaged); check',
        'your contract; ≥$: a lower bound (unpriced requests left out), $?: no request',
        'priced; cache miss, cache read: ≥N sums the requests that logged a count, ? when',
        'none did (1 request(s) logged none: unpriced); lost tokens: +?: 1 break(s) lost',
        'an unknown amount (cache reads not logged)',
        'narrow terminal: cache write, cache read, output, off-peak not shown (widen it,',
        'or use --json)']
    code, out, _ = run("usage", "s-unknown/session.jsonl", "--format", "csv")
    assert code == 0
    assert _lines(out) == [
        "table,session,requests,cache miss,reusable,lost tokens,lost cost,lost unknown,cache read,cache write,output,cost,"
        "cache miss cost,cache read cost,cache write cost,output cost,no cache,off-peak,unpriced",
        "usage by session,s-unknown,3,2100,1920,0,,1,1920,0,30,0.00066552,0.00063,0.00001152,0,0.000024,0.00123,0.00033276,1",
        "usage by session,total,3,2100,1920,0,,1,1920,0,30,0.00066552,0.00063,0.00001152,0,0.000024,0.00123,0.00033276,1"]
    code, out, _ = run("usage", "s-unknown/session.jsonl", "--format", "markdown")
    assert code == 0
    assert _lines(out) == [
        "### usage by session",
        "",
        "| session | requests | cache miss | reusable | lost tokens (cost) | cache read | cache write | output | cost "
        "| cache miss cost | cache read cost | cache write cost | output cost | no cache | off-peak | unpriced |",
        "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        "| s-unknown | 3 | ≥2100 | 1920 | 0+? (\\$?) | ≥1920 | 0 | 30 | ≥$0.0007 | ≥$0.0006 | ≥$0.000012 | ≥$0.0000 "
        "| ≥$0.000024 | ≥$0.0012 | ≥$0.0003 | 1 |",
        "| total | 3 | ≥2100 | 1920 | 0+? (\\$?) | ≥1920 | 0 | 30 | ≥$0.0007 | ≥$0.0006 | ≥$0.000012 | ≥$0.0000 "
        "| ≥$0.000024 | ≥$0.0012 | ≥$0.0003 | 1 |",
        "",
        "1 session(s); USD per 1,000,000 tokens from the price table (packaged); check your contract; ≥\\$: a lower "
        "bound (unpriced requests left out), \\$?: no request priced; cache miss, cache read: ≥N sums the requests "
        "that logged a count, ? when none did (1 request(s) logged none: unpriced); lost tokens: +?: 1 break(s) "
        "lost an unknown amount (cache reads not logged)"]


def test_usage_csv_has_no_lost_unknown_column_when_every_loss_is_known(tmp_path: Path, run: Any) -> None:
    b = LogBuilder(session_id="s-known", created_at=1_800_000_000_000, model="deepseek-v4-flash")
    with b.turn("one"), b.step():
        b.assistant("one", usage={"inputTokens": 100, "outputTokens": 10, "cacheReadTokens": 0})
    b.write_jsonl(tmp_path / "s-known" / "session.jsonl", packed=False)
    code, out, _ = run("usage", "s-known/session.jsonl", "--format", "csv")
    assert code == 0
    assert _lines(out)[0] == ("table,session,requests,cache miss,reusable,lost tokens,lost cost,cache read,cache write,output,"
                              "cost,cache miss cost,cache read cost,cache write cost,output cost,no cache,off-peak,"
                              "unpriced")
    code, out, _ = run("usage", "s-known/session.jsonl", "--json")
    assert (code, json.loads(out)["totals"]["lost_unknown_requests"]) == (0, 0)


def _log(path: Path, session_id: str, answer: str = "hello") -> Path:
    b = LogBuilder(session_id=session_id, created_at=1_800_000_000_000)
    with b.turn("hi"), b.step():
        b.assistant(answer, usage={"inputTokens": 100, "outputTokens": 5, "cacheReadTokens": 0})
    return b.write_jsonl(path, packed=False)


def _report(tmp_path: Path) -> tuple[list[Path], str]:
    """Two files of one session that differ (each read: identical ones are one session), a session
    whose id is hostile to URLs and HTML, and one whose id looks like the older positional link
    ``#session-0``."""
    paths = [_log(tmp_path / "a" / "session.jsonl", "s-copy"),
             _log(tmp_path / "b" / "session.jsonl", "s-copy", "hello again"),
             _log(tmp_path / "c" / "session.jsonl", HOSTILE), _log(tmp_path / "d" / "session.jsonl", "session-0")]
    return paths, format_html(run_check(paths, policy=Policy()))


def test_each_log_has_a_stable_anchor_in_the_page(tmp_path: Path) -> None:
    paths, page = _report(tmp_path)
    data = build_report_data(run_check(paths, policy=Policy()))
    assert [s["anchor"] for s in data["sessions"]] == ["s-copy~1", "s-copy~2", HOSTILE, "session-0"]
    # in the page's data, escaped: no quote or markup of the id leaves its JSON string
    for text in ('"anchor":"s-copy~1"', '"anchor":"s-copy~2"', '"anchor":"a/b c\\"\\u003cx\\u003e#%:@"',
                 '"anchor":"session-0"'):
        assert page.count(text) == 1, text
    assert "<x>" not in page
    # the session list and a parent link name the log by its anchor; #session-K is only a fallback
    assert 'el("a",{cls:"name",href:sessionHash(k),' in page
    assert 'add(p,el("a",{href:sessionHash(f.parent)},' in page
    # the same anchors in a report of the same logs in another order
    other = build_report_data(run_check(list(reversed(paths)), policy=Policy()))
    assert [(s["anchor"], s["path"]) for s in other["sessions"]] == [
        ("session-0", str(paths[3])), (HOSTILE, str(paths[2])), ("s-copy~2", str(paths[1])),
        ("s-copy~1", str(paths[0]))]


def _shown(chrome: Any, expected: str) -> str | None:
    """The position of the log the page shows (its section's ``data-session``), once it is
    ``expected`` (or after 10 s, as it is then): a hash change is handled asynchronously."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def shown() -> str | None:
        value: str | None = chrome.find_element(By.ID, "session").get_attribute("data-session")
        return value

    try:
        WebDriverWait(chrome, 10).until(lambda _: shown() == expected)
    except TimeoutException:
        pass
    return shown()


def test_session_links_open_the_same_log_in_any_report(tmp_path: Path, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    paths, page = _report(tmp_path)
    out = tmp_path / "report.html"
    out.write_text(page, encoding="utf-8")
    uri = out.as_uri()
    browser.get(uri)
    links = {li.get_attribute("data-session"): li.find_element(By.CSS_SELECTOR, ".name").get_attribute("href")
             .partition("#")[2] for li in browser.find_elements(By.CSS_SELECTOR, "#session-list > li")}
    assert links == {"0": "s-copy~1", "1": "s-copy~2", "2": "a%2Fb%20c%22%3Cx%3E%23%25:@", "3": "session-0"}
    browser.find_element(By.CSS_SELECTOR, "#session-list li[data-session='1'] .name").click()
    assert _shown(browser, "1") == "1"
    assert browser.execute_script("return location.hash") == "#s-copy~2"
    browser.get(uri + "#a%2Fb%20c%22%3Cx%3E%23%25:@")
    assert _shown(browser, "2") == "2"
    assert browser.find_element(By.ID, "session-title").text == HOSTILE
    # an id that looks like the older positional link wins; other older links still open the K-th log
    browser.get(uri + "#session-0")
    assert _shown(browser, "3") == "3"
    browser.get(uri + "#session-1")
    assert _shown(browser, "1") == "1"
    # a report of the same logs in another order: the link opens the same file there
    again = tmp_path / "again.html"
    again.write_text(format_html(run_check(list(reversed(paths)), policy=Policy())), encoding="utf-8")
    browser.get(again.as_uri() + "#s-copy~2")
    assert _shown(browser, "2") == "2"  # b/session.jsonl, the third log given there
    assert browser.find_element(By.CSS_SELECTOR, "#session-info .anchor").get_attribute("data-anchor") == "s-copy~2"
    assert browser.execute_script("return typeof window.__pwned") == "undefined"
