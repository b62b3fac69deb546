"""A break whose cache reads were not logged (DSH's native DeepSeek adapter logs no cacheReadTokens
when the API reported none) lost an unknown amount: ``cache``'s timeline, totals and ledger, the
index and ``stats``, and the HTML report say so (``?``, null, ``$?``, ``≥$`` beside the count of
such breaks), as ``breaks --cost`` and ``explain`` do; never 0 (issues 11 and 13)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log

from dsh_audit.fleet import SCHEMA_VERSION, index_logs
from dsh_audit.testing import LogBuilder

_NOT_LOGGED = "cache reads not logged: what it lost of the cache is unknown"


def _usage(miss: int, read: int | None = None) -> dict[str, int]:
    usage = {"inputTokens": miss, "outputTokens": 10}
    if read is not None:
        usage["cacheReadTokens"] = read
    return usage


def _unknown_log(tmp_path: Path) -> Path:
    """s-unknown: two requests, then a system-prompt change whose request logged no cache read."""
    b = LogBuilder(session_id="s-unknown", created_at=1_800_000_000_000, model="deepseek-v4-flash",
                   system="S" * 8000)
    for text, miss, read in (("one", 2000, 0), ("two", 100, 1920)):
        with b.turn(text), b.step():
            b.assistant(text, usage=_usage(miss, read))
    b.configure(system="T" * 8000)
    with b.turn("three"), b.step():
        b.assistant("three", usage=_usage(2100))
    return b.write_jsonl(tmp_path / "s-unknown" / "session.jsonl", packed=False)


def _both_log(tmp_path: Path) -> Path:
    """s-both: a break that lost 1920 tokens (request 2), then one whose cache read was not logged (4)."""
    b = LogBuilder(session_id="s-both", created_at=1_800_000_000_000, model="deepseek-v4-flash", system="S" * 8000)
    for text, miss, read in (("one", 2000, 0), ("two", 100, 1920)):
        with b.turn(text), b.step():
            b.assistant(text, usage=_usage(miss, read))
    b.configure(system="T" * 8000)
    for text, miss, read in (("three", 2100, 0), ("four", 100, 2048)):
        with b.turn(text), b.step():
            b.assistant(text, usage=_usage(miss, read))
    b.configure(system="U" * 8000)
    with b.turn("five"), b.step():
        b.assistant("five", usage=_usage(2300))
    return b.write_jsonl(tmp_path / "s-both" / "session.jsonl", packed=False)


@pytest.fixture
def run(cli80: Any) -> Any:
    """``dsh-audit ARGS`` from ``tmp_path`` at 80 columns (conftest's ``cli80``)."""
    return cli80


def _lines(out: str) -> list[str]:
    return [line.rstrip() for line in out.splitlines()]


def test_cache_says_the_break_lost_an_unknown_amount(tmp_path: Path, run: Any) -> None:
    _unknown_log(tmp_path)
    code, out, err = run("cache", "s-unknown/session.jsonl")
    assert (code, err) == (0, [])
    assert _lines(out) == [
        "s-unknown/session.jsonl  session s-unknown",
        "requests 3 (2 with cache reads and prompt logged); prompt tokens of those 4020",
        "cache read actual 1920 (47.8%) vs expected 1920 (47.8%)",
        "breaks 1 by cause: header_change 1",
        "tokens lost (of 1920 reusable): none; ? in 1 break(s) whose cache reads were not",
        "  logged; cost lost $? (all causes: breaks and other shortfalls)",
        "session cost ≥$0.0007 (cache miss ≥$0.0006, cache read ≥$0.000012, cache write",
        "  ≥$0.0000, output ≥$0.000024)",
        "with no cache ≥$0.0012; all off-peak ≥$0.0003; breaks cost $? (the part of the",
        "  cost lost that breaks caused); 1 break(s) lost an unknown amount; 1 request(s)",
        "  unpriced (≥$: a sum over the priced ones only) (list prices, check your",
        "  contract)",
        "tokens: estimate-utf8-bytes/4",
        "rules: deepseek unit 128 min 64 ttl 10800s",
        "  (api-docs.deepseek.com/guides/kv_cache, 2026-08-13)",
        "timeline",  # "lost" (only "?") is left out first, then "reusable" for a row a line (session 43)
        "#  kind  t/s/a  prompt  expected  actual  classification",
        "─" * 73,
        "0  loop  1/1/1    2000         0       0  as_expected",
        "1  loop  2/1/1    2020      1920    1920  as_expected",
        "2  loop  3/1/1    2100         0       ?  break_explained (header_change)",
        "t/s/a: turn/step/attempt",
        "narrow terminal: lost (no values), reusable not shown (widen it, or use --json)"]


def test_cache_json_gives_null_and_counts_the_unknown_break(tmp_path: Path, run: Any) -> None:
    _unknown_log(tmp_path)
    code, out, err = run("cache", "s-unknown/session.jsonl", "--json")
    assert (code, err) == (0, [])
    report = json.loads(out)
    assert [(v["index"], v["classification"], v["actual_cache_read"], v["lost_tokens_by_cause"], v["lost_cost_usd"])
            for v in report["timeline"]] == [
        (0, "as_expected", 0, {}, 0), (1, "as_expected", 1920, {}, 0), (2, "break_explained", None, None, None)]
    assert {k: report[k] for k in ("breaks", "lost_tokens_by_cause", "lost_cost_usd", "lost_unknown_requests")} == {
        "breaks": 1, "lost_tokens_by_cause": {}, "lost_cost_usd": None, "lost_unknown_requests": 1}
    cost = report["cost"]
    assert {k: v for k, v in cost.items() if "lost" in k or "break" in k} == {
        "lost_tokens_by_cause": {}, "lost_cost_usd_by_cause": {}, "break_cost_usd": None, "lost_requests": 1,
        "lost_unpriced": 1, "break_requests": 1, "break_unpriced": 1, "lost_unknown_requests": 1}
    # the request was already unpriced for the ledger, for the same reason
    assert cost["unpriced"] == {"cache reads not logged (deepseek-official logs cacheReadTokens only when the API "
                                "reported them: the prompt's split into hits and misses is unknown)": 1}
    # breaks --cost and explain say the same of it
    code, out, err = run("breaks", "--json", "--cost", "s-unknown/session.jsonl")
    (row,) = map(json.loads, out.splitlines())
    assert (code, row["request"], row["lost_tokens"], row["lost_cost_usd"], row["unpriced_reason"]) == (
        0, 2, None, None, _NOT_LOGGED)
    code, out, err = run("usage", "s-unknown/session.jsonl", "--json")
    assert (code, json.loads(out)["totals"]["break_cost_usd"]) == (0, None)


def test_a_known_loss_beside_an_unknown_one_is_a_lower_bound(tmp_path: Path, run: Any) -> None:
    _both_log(tmp_path)
    code, out, err = run("cache", "s-both/session.jsonl")
    assert (code, err) == (0, [])
    assert _lines(out)[4:13] == [
        "tokens lost (of 5888 reusable): header_change 1920; ? in 1 break(s) whose cache",
        "  reads were not logged; cost lost ≥$0.0006 (all causes: breaks and other",
        "  shortfalls)",
        "session cost ≥$0.0014 (cache miss ≥$0.0013, cache read ≥$0.000024, cache write",
        "  ≥$0.0000, output ≥$0.000048)",
        "with no cache ≥$0.0025; all off-peak ≥$0.0007; breaks cost ≥$0.0006 (the part of",
        "  the cost lost that breaks caused); 1 break(s) lost an unknown amount; 1",
        "  request(s) unpriced (≥$: a sum over the priced ones only) (list prices, check",
        "  your contract)"]
    assert _lines(out)[-5:] == [  # "turn/step/attempt" never split: its short form, said below
        "2  loop  3/1/1    2100         0       0  break_explained (header_change)  1920",
        "3  loop  4/1/1    2148      2048    2048  as_expected",
        "4  loop  5/1/1    2300         0       ?  break_explained (header_change)     ?",
        "t/s/a: turn/step/attempt",
        "narrow terminal: reusable not shown (widen it, or use --json)"]
    code, out, err = run("cache", "s-both/session.jsonl", "--json")
    report = json.loads(out)
    assert (report["lost_cost_usd"], report["lost_unknown_requests"]) == (0.00056448, 1)
    assert (report["cost"]["break_cost_usd"], report["cost"]["break_requests"], report["cost"]["break_unpriced"]) == (
        0.00056448, 2, 1)
    code, out, err = run("breaks", "--cost", "s-both/session.jsonl")  # the same lower bound
    assert (code, err) == (0, [])
    assert _lines(out)[4:8] == [
        "2   1  break    header_change      1920  1920 ($0.0006)      system           33",
        "4   3  break    header_change      2048  ?                   system           60",
        "                total              1920  1920 (≥$0.0006)",  # the reusable of the known losses
        "?: 1 request(s) logged no cache reads, left out of the total"]


def _stats_json(run: Any, db: str, *, notes: tuple[str, ...] = ()) -> dict[str, Any]:
    code, out, err = run("stats", "--db", db, "--json")
    assert (code, err) == (0, [f"note: {note}" for note in notes])
    return dict(json.loads(out))


def test_index_stores_the_loss_unknown_and_stats_counts_it(tmp_path: Path, run: Any) -> None:
    log = _unknown_log(tmp_path)
    code, out, err = run("index", "s-unknown", "--db", "index.sqlite")
    assert (code, err) == (0, [])
    connection = sqlite3.connect(tmp_path / "index.sqlite")
    rows = connection.execute("SELECT idx, actual_cache_read, classification, lost_tokens, lost_cost, lost "
                              "FROM requests ORDER BY idx").fetchall()
    breaks = connection.execute("SELECT request, classification, lost_tokens, lost_cost FROM breaks").fetchall()
    costs = connection.execute("SELECT idx, is_break, lost_cost FROM costs ORDER BY idx").fetchall()
    connection.close()
    assert rows == [(0, 0, "as_expected", 0, 0.0, "{}"), (1, 1920, "as_expected", 0, 0.0, "{}"),
                    (2, None, "break_explained", None, None, None)]
    assert breaks == [(2, "break_explained", None, None)]
    assert costs == [(0, 0, 0.0), (1, 0, 0.0), (2, 1, None)]
    stats = _stats_json(run, "index.sqlite")
    assert {k: stats["totals"][k] for k in ("lost_tokens", "lost_cost_usd", "lost_requests", "lost_unpriced",
                                            "lost_unknown_requests")} == {
        "lost_tokens": 0, "lost_cost_usd": None, "lost_requests": 1, "lost_unpriced": 1, "lost_unknown_requests": 1}
    assert {k: stats["cost"][k] for k in ("lost_cost_usd", "break_cost_usd", "break_requests", "break_unpriced",
                                          "lost_unknown_requests")} == {
        "lost_cost_usd": None, "break_cost_usd": None, "break_requests": 1, "break_unpriced": 1,
        "lost_unknown_requests": 1}
    (top,) = stats["top_sessions"]
    assert (top["lost_cost_usd"], top["break_cost_usd"], top["lost_unknown_requests"]) == (None, None, 1)
    code, out, err = run("stats", "--db", "index.sqlite")
    assert (code, err) == (0, [])
    assert _lines(out)[:30] == [  # compact below 100 columns
        "index.sqlite: fleet totals",
        "measure                                      value",
        "─" * 65,
        "sessions (refused)                           1 (0)",
        "requests (cache reads known)                 3 (2)",
        "prompt tokens                                ≥4020",  # a request logged no cache read
        "cache read actual / expected                 ≥1920 / ≥1920",  # over the requests that logged reads
        "hit ratio actual / expected                  47.8% / 47.8%",
        "output tokens                                30",
        "breaks (attribution / cache)                 1 / 1",
        "tokens lost                                  0 (of 1920 reusable)",  # of the requests that logged reads
        "breaks with unknown loss (reads not logged)  1",
        "cost lost (list prices)                      $?",
        "cost (list prices, check your contract)",
        "measure                                       value",
        "─" * 80,
        "requests (unpriced)                           3 (1)",
        "cost                                          ≥$0.0007",
        "cache miss / cache read / cache write /       ≥$0.0006 / ≥$0.000012 / ≥$0.0000 /",
        "output                                        ≥$0.000024",
        "with no cache                                 ≥$0.0012",
        "all off-peak                                  ≥$0.0003",
        "cache losses / of which breaks                $? / $?",
        "breaks with unknown loss (reads not logged)   1",
        "unpriced: cache reads not logged              1",
        "(deepseek-official logs cacheReadTokens only",
        "when the API reported them: the prompt's",
        "split into hits and misses is unknown)",
        "≥$: a sum over the priced requests only; $?: no request priced",
        "cost by model"]
    # stats sums what cache --json says of the session
    code, out, err = run("cache", str(log), "--json")
    cache_cost = json.loads(out)["cost"]
    assert {k: stats["cost"][k] for k in ("break_cost_usd", "lost_unknown_requests", "cost_usd")} == {
        k: cache_cost[k] for k in ("break_cost_usd", "lost_unknown_requests", "cost_usd")}


def test_an_index_of_version_3_is_upgraded_and_its_stored_zeros_made_unknown(tmp_path: Path, run: Any) -> None:
    """Version 3 stored 0 lost for such a break: upgrading sets its rows unknown in place, for a log
    not given too (its rows are kept, and read as version 4 writes them)."""
    _unknown_log(tmp_path)
    other = chat_log(tmp_path / "other" / "session.jsonl", "s-other")
    db = tmp_path / "index.sqlite"
    index_logs([tmp_path / "s-unknown" / "session.jsonl", other], db)
    connection = sqlite3.connect(db)  # what dsh-audit's schema 3 stored for the break
    with connection:
        connection.execute("UPDATE requests SET lost_tokens = 0, lost_cost = 0.0, lost = '{}' WHERE idx = 2")
        connection.execute("UPDATE breaks SET lost_tokens = 0, lost_cost = 0.0")
        connection.execute("UPDATE costs SET lost_cost = 0.0 WHERE is_break")
        connection.execute("UPDATE meta SET value = '3' WHERE key = 'schema_version'")
        connection.execute("ALTER TABLE requests DROP COLUMN reusable_cache_read")  # schema 5's
    connection.close()
    code, _, err = run("stats", "--db", "index.sqlite")
    assert (code, err) == (2, [f"error: index.sqlite: index schema version 3, this dsh-audit reads {SCHEMA_VERSION} "
                               "(hint: run `dsh-audit index PATH --db FILE` on the logs to upgrade it in place)"])
    code, out, err = run("index", "other", "--db", "index.sqlite", "--json")
    assert (code, err) == (0, [f"note: index.sqlite: index schema 3 upgraded to {SCHEMA_VERSION} in place; every log "
                               "given was read again to store its priced ledger and reusable cache reads (a stored "
                               "log not given has none until it is: stats counts them unknown)"])
    assert (json.loads(out)["indexed"], json.loads(out)["upgraded_from"]) == (1, 3)
    connection = sqlite3.connect(db)
    stored = (connection.execute("SELECT lost_tokens, lost_cost, lost FROM requests WHERE idx = 2").fetchall(),
              connection.execute("SELECT lost_tokens, lost_cost FROM breaks").fetchall(),
              connection.execute("SELECT lost_cost FROM costs WHERE is_break").fetchall())
    connection.close()
    assert stored == ([(None, None, None)], [(None, None)], [(None,)])
    # the kept log's rows were priced by a table the upgraded index no longer names (session 34's stats caveats)
    stats = _stats_json(run, "index.sqlite", notes=(
        "the index does not record which price table priced some of its requests: whether it lists the holidays "
        "of the years of those it priced at the peak rate is unknown; index them again to record it",))
    assert (stats["totals"]["lost_unknown_requests"], stats["cost"]["break_cost_usd"],
            stats["cost"]["lost_unknown_requests"]) == (1, None, 1)
    # the column schema 5 added is NULL in the kept log's rows until it is read again: the sum is unknown, never 0
    assert (stats["totals"]["reusable_cache_read"], stats["totals"]["reusable_unknown_requests"]) == (None, 2)
    # s-unknown kept (its rows lack it); s-other read, but none of its requests logged a cache read: unknown, not a
    # known 0 (review C of session 45, F7)
    assert [(s["reusable_cache_read"], s["reusable_unknown_requests"]) for s in stats["top_sessions"]] == [
        (None, 2), (None, 0)]


def test_the_report_says_the_break_lost_an_unknown_amount(tmp_path: Path, run: Any, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from test_html_report import _detail_heading

    _unknown_log(tmp_path)
    page = tmp_path / "report.html"
    code, _, _ = run("report", "s-unknown/session.jsonl", "-o", str(page))
    assert code in (0, 1)
    browser.get(page.as_uri())
    shown = {row.get_attribute("data-key"): row.find_element(By.TAG_NAME, "td").text
             for row in browser.find_elements(By.CSS_SELECTOR, "#overview tr[data-key]")}
    assert shown["break-cost"] == "$? (1 break(s) lost an unknown amount: cache reads not logged)"
    items = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#overview .break-list li")]
    assert items == ["break at request 2: header_change, lost ? of 1920 reusable token(s), $?"]
    browser.find_element(By.CSS_SELECTOR, "#overview .break-list a[href='#break-2']").click()
    assert _detail_heading(browser, "Request 2 · loop 3/1/1") == "Request 2 · loop 3/1/1"
    cost = {row.get_attribute("data-key"): row.find_element(By.TAG_NAME, "td").text
            for row in browser.find_elements(By.CSS_SELECTOR, "#detail table.cost tr[data-key]")}
    assert cost["break-cost"] == f"$? ({_NOT_LOGGED})"
    cache = {row.find_element(By.TAG_NAME, "th").text: row.find_element(By.TAG_NAME, "td").text
             for row in browser.find_elements(By.CSS_SELECTOR, "#detail table:not(.cost) tr")
             if row.find_elements(By.TAG_NAME, "th") and row.find_elements(By.TAG_NAME, "td")}
    assert (cache["actual cache read"], cache["lost"]) == ("-", "?")
