"""What cache losses and breaks cost follows the one rule for money some requests have no price
for, in every view (issue 13): an amount is owed only by the requests that have something to price
in it (a lost or break cost only by a request that lost cache reads), and it is unknown (``$?``,
JSON null) when none of those was priced, never ``$0``; a lower bound (``≥$x``) when some request
was not priced. ``usage`` (by session, model, turn; table, CSV, JSON), ``cache``, ``check`` and
``stats`` on an index of the same sessions give the same numbers, and every total is the sum of the
rows shown.

Two sessions, at 2027-01-15 08:00 UTC (DeepSeek peak: cache miss $0.30, cache read $0.006 per
million tokens, so a lost token costs $0.294 per million): in ``s-both`` the priced
deepseek-v4-flash and the unknown local-coder both lose cache reads to system-prompt changes; in
``s-unknown`` only local-coder does. Before this rule ``usage``, ``cache`` and ``stats``' top
sessions read ``s-unknown``'s lost and break cost as $0 (``≥$0.0000``, JSON 0).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from _cli import invoke
from dsh_audit.cache import Costs, load_prices, session_ledger, usage_table, usd_total
from dsh_audit.testing import LogBuilder

#: 1920 tokens lost by deepseek-v4-flash at peak: 1920 x ($0.30 - $0.006) / 1M.
LOST = 0.00056448
PRICED_LOSS = usd_total([1920 * 0.294 / 1e6])


def _usage(miss: int, read: int) -> dict[str, int]:
    return {"inputTokens": miss, "outputTokens": 10, "cacheReadTokens": read}


def _session(root: Path, session_id: str, *, priced_break: bool) -> Path:
    """Two flash turns (the second reads the first's 1920 cached tokens), with ``priced_break`` a
    third after a system-prompt change (a break losing 1920 tokens), then local-coder (no price):
    a first turn (losing the flash prefix's tokens when no break came before), a cache hit, and a
    break after another system-prompt change."""
    b = LogBuilder(session_id=session_id, created_at=1_800_000_000_000, model="deepseek-v4-flash", system="S" * 8000)
    for text, miss, read in (("one", 2000, 0), ("two", 100, 1920)):
        with b.turn(text), b.step():
            b.assistant(text, usage=_usage(miss, read))
    if priced_break:
        b.configure(system="T" * 8000)
        with b.turn("three"), b.step():
            b.assistant("three", usage=_usage(2100, 0))
    b.configure(model="local-coder")
    for text, miss, read in (("four", 2200, 0), ("five", 100, 2176)):
        with b.turn(text), b.step():
            b.assistant(text, usage=_usage(miss, read))
    b.configure(system="U" * 8000)
    with b.turn("six"), b.step():
        b.assistant("six", usage=_usage(2300, 0))
    return b.write_jsonl(root / "sessions" / "--p--" / session_id / "session.jsonl", packed=False)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _session(tmp_path, "s-both", priced_break=True)
    _session(tmp_path, "s-unknown", priced_break=False)
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _csv(out: str) -> list[list[str]]:
    return [row for row in csv.reader(io.StringIO(out)) if row]


def _amounts(row: dict[str, Any]) -> tuple[Any, ...]:
    """A usage row's or a ledger summary's amounts: cost, no cache, off-peak, lost, break; the
    unpriced count and whether the amounts are complete."""
    return ((row["cost_usd"] or {}).get("total"), row["no_cache_cost_usd"], row["off_peak_cost_usd"],
            row.get("lost_cost_usd"), row["break_cost_usd"], row["unpriced_requests"], row["cost_complete"])


BOTH = (0.00130752, 0.001872, 0.00065376, LOST, LOST, 3, False)
UNKNOWN = (0.00066552, 0.00123, 0.00033276, None, None, 3, False)  # lost and break were 0.0
TOTAL = (0.00197304, 0.003102, 0.00098652, LOST, LOST, 6, False)


def test_the_rule() -> None:
    assert PRICED_LOSS == LOST
    # every request owes a cost: the group's counts are the ones that matter
    assert [Costs.shown(0.25, requests=2, unpriced=n) for n in (0, 1, 2)] == ["$0.2500", "≥$0.2500", "$?"]
    # a loss only unpriced requests had is unknown, though other requests were priced
    assert Costs.known(0.0, requests=5, unpriced=3, owing=2, owing_unpriced=2) is None
    assert Costs.shown(0.0, requests=5, unpriced=3, owing=2, owing_unpriced=2) == "$?"
    # some of the losing requests priced: a lower bound; none lost: nothing owed, $0
    assert Costs.shown(LOST, requests=6, unpriced=3, owing=3, owing_unpriced=2) == "≥$0.0006"
    assert Costs.known(0.0, requests=2, unpriced=1, owing=0, owing_unpriced=0) == 0.0
    assert Costs.known(0.0, requests=2, unpriced=0, owing=0, owing_unpriced=0) == 0.0


def test_the_ledger_and_usage_table(home: Path) -> None:
    book = load_prices(search_from=str(home))
    both, unknown = (session_ledger(home / "sessions" / "--p--" / s / "session.jsonl", prices=book)
                     for s in ("s-both", "s-unknown"))
    # without cache accounting no token was lost: nothing is owed, $0 (priced requests exist)
    assert (both.summary()["break_cost_usd"], unknown.summary()["break_cost_usd"]) == (0.0, 0.0)
    table = usage_table([both, unknown])
    assert [(r.lost_tokens, r.known("lost"), r.known("break")) for r in (*table.rows, table.total)] == [(0, 0.0, 0.0)] * 3
    assert [r.shown("cost") for r in (*table.rows, table.total)] == ["≥$0.0013", "≥$0.0007", "≥$0.0020"]


def test_usage_by_session(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "160")  # from 200, what each bucket cost is shown too (session 41)
    code, out, err = invoke(monkeypatch, capsys, "usage")
    assert code == 0 and err == ["warning: 6 request(s) unpriced: no price for model 'local-coder'"
                                 " (provider deepseek-official: give --prices FILE a [providers.deepseek.models."
                                 "local-coder] table of cache_miss, cache_read and output rates)"]
    assert [line.rstrip() for line in out.splitlines()][:8] == [
        "usage by session",
        "┏━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━┳"
        "━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┓",
        "┃ session   ┃ requests ┃ cache miss ┃ reusable ┃ lost tokens (cost) ┃ cache read ┃ cache write ┃ output ┃     cost ┃ "
        "no cache ┃ off-peak ┃ unpriced ┃",
        "┡━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━╇"
        "━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━┩",
        # lost tokens beside the cache misses they are part of and the reusable reads they are measured
        # from (issue 11 item 3; session 46: lost <= reusable - cache read)
        "│ s-both    │        6 │       8800 │    10240 │ 6144 (≥$0.0006)    │       4096 │           0 │     60 │ ≥$0.0013 │ "
        "≥$0.0019 │ ≥$0.0007 │        3 │",
        # was "4096 (≥$0.0000)"
        "│ s-unknown │        5 │       6700 │     8192 │ 4096 ($?)          │       4096 │           0 │     50 │ ≥$0.0007 │ "
        "≥$0.0012 │ ≥$0.0003 │        3 │",
        "│ total     │       11 │      15500 │    18432 │ 10240 (≥$0.0006)   │       8192 │           0 │    110 │ ≥$0.0020 │ "
        "≥$0.0031 │ ≥$0.0010 │        6 │",
        "└───────────┴──────────┴────────────┴──────────┴────────────────────┴────────────┴─────────────┴────────┴──────────┴"
        "──────────┴──────────┴──────────┘"]
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--format", "csv")
    # CSV: exact amounts (as the JSON), the lost tokens and their cost two plain columns, unknown empty;
    # what each bucket cost after "cost" (session 41: the cost of cache misses was in --json alone)
    assert _csv(out) == [
        ["table", "session", "requests", "cache miss", "reusable", "lost tokens", "lost cost", "cache read", "cache write",
         "output", "cost", "cache miss cost", "cache read cost", "cache write cost", "output cost", "no cache",
         "off-peak", "unpriced"],
        ["usage by session", "s-both", "6", "8800", "10240", "6144", "0.00056448", "4096", "0", "60", "0.00130752",
         "0.00126", "0.00001152", "0", "0.000036", "0.001872", "0.00065376", "3"],
        ["usage by session", "s-unknown", "5", "6700", "8192", "4096", "", "4096", "0", "50", "0.00066552",
         "0.00063", "0.00001152", "0", "0.000024", "0.00123", "0.00033276", "3"],
        ["usage by session", "total", "11", "15500", "18432", "10240", "0.00056448", "8192", "0", "110", "0.00197304",
         "0.00189", "0.00002304", "0", "0.00006", "0.003102", "0.00098652", "6"]]
    table = json.loads(invoke(monkeypatch, capsys, "usage", "--json")[1])
    assert [(r["key"], r["lost_tokens"], *_amounts(r)) for r in (*table["rows"], table["totals"])] == [
        ("s-both", 6144, *BOTH), ("s-unknown", 4096, *UNKNOWN), ("total", 10240, *TOTAL)]


def test_usage_by_model_and_turn(home: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--by", "model", "--format", "csv")
    assert code == 0 and _csv(out)[1:] == [
        ["usage by model", "deepseek-flash", "deepseek-v4-flash", "5", "6300", "5760", "1920", "0.00056448", "3840", "0", "50",
         "0.00197304", "0.00189", "0.00002304", "0", "0.00006", "0.003102", "0.00098652", "0"],
        ["usage by model", "local-coder", "local-coder", "6", "9200", "12672", "8320", "", "4352", "0", "60", "", "", "", "",
         "", "", "", "6"],
        ["usage by model", "total", "", "11", "15500", "18432", "10240", "0.00056448", "8192", "0", "110", "0.00197304",
         "0.00189", "0.00002304", "0", "0.00006", "0.003102", "0.00098652", "6"]]
    table = json.loads(invoke(monkeypatch, capsys, "usage", "--by", "model", "--json")[1])
    assert [(r["key"], r["lost_tokens"], *_amounts(r)) for r in (*table["rows"], table["totals"])] == [
        ("deepseek-flash", 1920, 0.00197304, 0.003102, 0.00098652, LOST, LOST, 0, True),  # billed so from 2026-09-10
        ("local-coder", 8320, None, None, None, None, None, 6, False), ("total", 10240, *TOTAL)]
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--by", "turn", "--format", "csv")
    # a turn whose only request is unpriced: its lost cost is unknown (empty) when it lost tokens, and
    # 0 when it lost nothing (docs/cache-accounting.md: "a loss with no lost token costs $0.0000",
    # 0 in JSON and CSV: an amount no request owes is 0, never unknown)
    assert [(r[1], r[10], r[5], r[6], r[17]) for r in _csv(out)[1:]] == [  # "reusable" at r[4] (session 46)
        ("s-both turn 1", "0.000612", "0", "0", "0"), ("s-both turn 2", "0.00005352", "0", "0", "0"),
        ("s-both turn 3", "0.000642", "1920", "0.00056448", "0"), ("s-both turn 4", "", "2048", "", "1"),
        ("s-both turn 5", "", "0", "0", "1"), ("s-both turn 6", "", "2176", "", "1"),
        ("s-unknown turn 1", "0.000612", "0", "0", "0"), ("s-unknown turn 2", "0.00005352", "0", "0", "0"),
        ("s-unknown turn 3", "", "1920", "", "1"), ("s-unknown turn 4", "", "0", "0", "1"),
        ("s-unknown turn 5", "", "2176", "", "1"), ("total", "0.00197304", "10240", "0.00056448", "6")]
    table = json.loads(invoke(monkeypatch, capsys, "usage", "--by", "turn", "--json")[1])
    assert [(r["key"], r["lost_tokens"], r["lost_cost_usd"], r["break_cost_usd"]) for r in table["rows"]
            if r["lost_tokens"]] == [("s-both turn 3", 1920, LOST, LOST), ("s-both turn 4", 2048, None, None),
                                     ("s-both turn 6", 2176, None, None), ("s-unknown turn 3", 1920, None, None),
                                     ("s-unknown turn 5", 2176, None, None)]


def test_cache(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    lines = {}
    for session in ("s-both", "s-unknown"):
        code, out, _ = invoke(monkeypatch, capsys, "cache", f"sessions/--p--/{session}/session.jsonl")
        assert code == 0
        lines[session] = [line for line in out.splitlines() if "cost" in line]
    assert lines == {
        "s-both": [
            "tokens lost (of 10240 reusable): header_change 6144; cost lost ≥$0.0006 (all causes: breaks and other "
            "shortfalls)",
            # an amount above 0 too small for 4 decimals: two significant digits, never $0.0000
            "session cost ≥$0.0013 (cache miss ≥$0.0013, cache read ≥$0.000012, cache write ≥$0.0000, "
            "output ≥$0.000036)",
            "with no cache ≥$0.0019; all off-peak ≥$0.0007; breaks cost ≥$0.0006 (the part of the cost lost that breaks "
            "caused); 3 request(s) unpriced (≥$: a sum over the priced ones only) (list prices, check your"],
        "s-unknown": [  # were "cost lost ≥$0.0000" and "breaks cost ≥$0.0000"
            "tokens lost (of 8192 reusable): header_change 4096; cost lost $? (all causes: breaks and other shortfalls)",
            "session cost ≥$0.0007 (cache miss ≥$0.0006, cache read ≥$0.000012, cache write ≥$0.0000, "
            "output ≥$0.000024)",
            "with no cache ≥$0.0012; all off-peak ≥$0.0003; breaks cost $? (the part of the cost lost that breaks "
            "caused); 3 request(s) unpriced (≥$: a sum over the priced ones only) (list prices, check your"]}
    code, out, _ = invoke(monkeypatch, capsys, "cache", "sessions", "--json")
    reports = {r["session_id"]: r for r in map(json.loads, out.splitlines())}
    assert {s: (r["lost_cost_usd"], r["lost_tokens_by_cause"], _amounts(r["cost"])) for s, r in reports.items()} == {
        "s-both": (LOST, {"header_change": 6144}, BOTH[:3] + (None,) + BOTH[4:]),
        "s-unknown": (None, {"header_change": 4096}, UNKNOWN)}  # were 0 and 0


def test_stats_on_an_index(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert invoke(monkeypatch, capsys, "index", "--db", "i.sqlite")[0] == 0
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", "i.sqlite", "--json")
    stats = json.loads(out)
    assert code == 0
    assert [(r["session_id"], r["lost_tokens"], r["lost_cost_usd"], r["lost_requests"], r["lost_unpriced"],
             r["cost_usd"] and r["cost_usd"]["total"], r["break_cost_usd"]) for r in stats["top_sessions"]] == [
        ("s-both", 6144, LOST, 3, 2, 0.00130752, LOST),
        ("s-unknown", 4096, None, 2, 2, 0.00066552, None)]  # break_cost_usd was 0
    assert _amounts(stats["cost"]) == TOTAL
    assert [(r["model"], *_amounts(r)) for r in stats["cost_by_model"]] == [
        ("deepseek-flash", 0.00197304, 0.003102, 0.00098652, LOST, LOST, 0, True),
        ("local-coder", None, None, None, None, None, 6, False)]
    assert stats["cost_by_cause"] == [
        {"cause": "header_change", "reusable_cache_read": 10240, "lost_tokens": 10240, "lost_cost_usd": LOST,
         "break_cost_usd": LOST,
         "lost_requests": 5, "lost_unpriced": 4, "break_requests": 5, "break_unpriced": 4}]
    assert [(r["model"], r["lost_tokens"], r["lost_cost_usd"]) for r in stats["by_model"]] == [
        ("local-coder", 8320, None), ("deepseek-flash", 1920, LOST)]  # the model billed (session 43)
    assert (stats["totals"]["lost_tokens"], stats["totals"]["lost_cost_usd"]) == (10240, LOST)
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", "i.sqlite", "--format", "csv")
    rows = _csv(out)
    assert [r[1:] for r in rows if r[0] == "sessions whose cache losses cost the most"] == [
        ["s-both", str(home / "sessions/--p--/s-both/session.jsonl"), "6", "6", "12896", "4096",
         "0.3176178660049628", "0.3176178660049628", "10240", "6144", "0.00056448", "0.00130752", "0.00056448"],
        ["s-unknown", str(home / "sessions/--p--/s-unknown/session.jsonl"), "5", "5", "10796", "4096",
         "0.37939977769544275", "0.37939977769544275", "8192", "4096", "", "0.00066552", ""]]  # reusable - read  # breaks $ was 0.0000
    # CSV: one plain amount a row (a table joins them "a / b"), the unpriced count a row of its own
    assert [r[1:] for r in rows if r[0] == "cost (list prices, check your contract)"] == [
        ["requests", "11"], ["unpriced requests", "6"], ["cost", "0.00197304"], ["cache miss", "0.00189"],
        ["cache read", "0.00002304"], ["cache write", "0"], ["output", "0.00006"], ["with no cache", "0.003102"],
        ["all off-peak", "0.00098652"], ["cache losses", "0.00056448"], ["of which breaks", "0.00056448"],
        ["unpriced: no price for model 'local-coder'", "6"]]


def test_check_and_the_report(home: Path, monkeypatch: pytest.MonkeyPatch,
                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "check", "sessions", "--json-report", "-")
    costs = {s["session_id"]: s["cost"] for s in json.loads(out)["sessions"]}
    assert {s: _amounts(c)[3:] for s, c in costs.items()} == {"s-both": (None, LOST, 3, False),
                                                            "s-unknown": (None, None, 3, False)}  # was 0
    code, out, _ = invoke(monkeypatch, capsys, "check", "sessions", "--markdown", "-")
    assert [line.split(" | ")[2:8:5] for line in out.splitlines() if line.startswith("| ✅")] == [
        # a break cost no break's request could price is "$?", not left out
        ["s-both", "≥$0.0013 (breaks ≥$0.0006) (3 unpriced)"], ["s-unknown", "≥$0.0007 (breaks \\$?) (3 unpriced)"]]
    page = home / "page.html"
    code, _, _ = invoke(monkeypatch, capsys, "report", "sessions/--p--/s-unknown/session.jsonl", "-o", str(page))
    assert code == 0 and '"break_cost_usd":null' in page.read_text(encoding="utf-8")  # the page: "$?"


def test_every_view_agrees_and_totals_are_the_sum_of_their_rows(
        home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    usage = {by: json.loads(invoke(monkeypatch, capsys, "usage", "--by", by, "--json")[1])
             for by in ("session", "model", "turn")}
    cache = {r["session_id"]: r for r in map(json.loads, invoke(monkeypatch, capsys, "cache", "sessions",
                                                                 "--json")[1].splitlines())}
    assert invoke(monkeypatch, capsys, "index", "--db", "i.sqlite")[0] == 0
    stats = json.loads(invoke(monkeypatch, capsys, "stats", "--db", "i.sqlite", "--json")[1])
    top = {r["session_id"]: r for r in stats["top_sessions"]}
    for row in usage["session"]["rows"]:
        session = row["key"]
        assert row["lost_cost_usd"] == cache[session]["lost_cost_usd"] == top[session]["lost_cost_usd"], session
        assert row["break_cost_usd"] == cache[session]["cost"]["break_cost_usd"] == top[session]["break_cost_usd"]
    for by, table in usage.items():
        rows, total = table["rows"], table["totals"]
        assert total["lost_tokens"] == sum(r["lost_tokens"] for r in rows) == stats["totals"]["lost_tokens"], by
        assert total["requests"] == sum(r["requests"] for r in rows) == stats["cost"]["requests"], by
        assert total["unpriced_requests"] == sum(r["unpriced_requests"] for r in rows), by
        for key in ("lost_cost_usd", "break_cost_usd", "no_cache_cost_usd", "off_peak_cost_usd"):
            assert total[key] == usd_total(r[key] or 0.0 for r in rows) == stats["cost"][key], (by, key)
    for key in ("lost_cost_usd", "break_cost_usd", "no_cache_cost_usd", "off_peak_cost_usd"):
        assert stats["cost"][key] == usd_total(r[key] or 0.0 for r in stats["cost_by_model"]), key
    assert stats["totals"]["lost_tokens"] == sum(r["lost_tokens"] for r in stats["cost_by_cause"]) \
        == sum(r["lost_tokens"] for r in stats["by_model"])
    assert stats["cost"]["lost_cost_usd"] == usd_total(r["lost_cost_usd"] or 0.0 for r in stats["cost_by_cause"])
