"""Amounts and tokens tell one story in every view and format (issues 13 and 14).

- CSV (and JSON) carry the exact amount, to the nano-dollar, not a table's 4 decimals: the rows of
  a CSV sum to its total row; a combined cell (``lost tokens (cost)``, ``a / b / c``) is separate
  plain columns or rows in CSV, a money column a plain number with the row's unpriced count beside.
- An amount above 0 too small for 4 decimals shows its first two significant digits, never an
  exact-looking ``$0.0000``; an unknown amount is ``$?`` everywhere (never ``n/a``).
- A request with no usage logged (a title call) has unknown tokens: ``?`` in a table, null in
  JSON, empty in CSV, and the caption says the totals are over the requests with usage logged.
- The lost tokens stand beside the cache misses they are part of (issue 11 item 3).
- A lost or break cost is a lower bound only when a request that owes it (that lost tokens) is
  unpriced: an unknown model that lost nothing leaves it exact, in ``usage``, ``cache``, ``stats``
  (every table) and ``check``'s Markdown alike.
- ``cache`` prints the TTL the requests used (``cacheRetention: long``: 3600s), not the rule's.

Fixture ``s-mixed``, at 2027-01-15 08:00 UTC (DeepSeek peak: cache miss $0.30, cache read $0.006,
output $0.60 per million tokens): three deepseek-v4-flash requests (the third after a system-prompt
change, a break losing 1920 cached tokens), a title call (no usage logged), then local-coder (no
price) reading the whole new prefix from the cache (losing nothing).
"""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal
from pathlib import Path

import pytest

from _cli import invoke, mixed_home
from dsh_audit.cache import Costs, usd_total
from dsh_audit.report.terminal import Amount, listing, print_table
from dsh_audit.testing import LogBuilder

T0 = 1_800_000_000_000  # 2027-01-15T08:00:00Z: DeepSeek's peak window
LOST = 0.00056448  # 1920 tokens lost by deepseek-v4-flash at peak: 1920 x ($0.30 - $0.006) / 1M


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return mixed_home(tmp_path, monkeypatch)


def _csv(out: str) -> list[list[str]]:
    return [row for row in csv.reader(io.StringIO(out)) if row]


def _lines(out: str) -> list[str]:
    return [line.rstrip() for line in out.splitlines()]


def test_an_amount_cell_is_exact_in_csv_and_readable_in_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert [Costs.text(v) for v in (0.00021, 0.000021, 0.0000049, 1e-09, 0.0, 0.12345)] == [
        "$0.0002", "$0.000021", "$0.0000049", "$0.000000001", "$0.0000", "$0.1235"]
    assert Costs.shown(0.000021, requests=2, unpriced=1) == "≥$0.000021"
    rows = [("a", Amount(0.00021, "$0.0002"), Amount(3, "3")), ("b", Amount(None, "$?"), Amount(None, "?")),
            ("c", Amount(12345.000000001, "$12345.0000"), Amount(0, ""))]
    with listing("csv"):
        print_table("t", ("key", "cost", "tokens"), rows)
    assert capsys.readouterr().out == ("table,key,cost,tokens\r\n" "t,a,0.00021,3\r\n" "t,b,,\r\n"
                                       "t,c,12345.000000001,0\r\n")
    with listing("markdown"):
        print_table("t", ("key", "cost", "tokens"), rows)
    assert capsys.readouterr().out.splitlines()[4:] == [
        "| a | $0.0002 | 3 |", "| b | \\$? | ? |", "| c | $12345.0000 |  |", ""]  # a blank line ends the table


def test_usage_by_request_table(home: Path, monkeypatch: pytest.MonkeyPatch,
                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "usage", "--by", "request")
    assert code == 0 and err == ["warning: 1 request(s) unpriced: no price for model 'local-coder'"
                                 " (provider deepseek-official: give --prices FILE a [providers.deepseek.models."
                                 "local-coder] table of cache_miss, cache_read and output rates)",
                                 "warning: 1 request(s) unpriced: usage not logged"]
    # each request's model, window and send time after its amounts, as many as 200 columns hold
    # (issue 13: a request's row says what it was priced by; the whole of it in --json and CSV); the
    # caption wraps at the terminal, not the table; "reusable" beside the lost tokens (session 46)
    assert _lines(out) == [
        'usage by request',
        '┏━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┓',
        '┃ request    ┃ requests ┃ cache miss ┃ reusable ┃ lost tokens (cost) ┃ cache read ┃ cache write ┃ output ┃     cost ┃ no cache ┃  off-peak ┃ unpriced ┃ model             ┃ window   ┃',
        '┡━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━┩',
        '│ s-mixed #0 │        1 │       2000 │        0 │                    │          0 │           0 │     10 │  $0.0006 │  $0.0006 │   $0.0003 │          │ deepseek-v4-flash │ peak     │',
        '│ s-mixed #1 │        1 │        100 │     1920 │                    │       1920 │           0 │     10 │  $0.0001 │  $0.0006 │ $0.000027 │          │ deepseek-v4-flash │ peak     │',
        '│ s-mixed #2 │        1 │       2100 │     1920 │ 1920 ($0.0006)     │          0 │           0 │     10 │  $0.0006 │  $0.0006 │   $0.0003 │          │ deepseek-v4-flash │ peak     │',
        '│ s-mixed #3 │        1 │          ? │        ? │                    │          ? │           ? │      ? │       $? │       $? │        $? │        1 │ deepseek-v4-flash │ peak     │',
        '│ s-mixed #4 │        1 │        100 │     2048 │                    │       2048 │           0 │     10 │       $? │       $? │        $? │        1 │ local-coder       │ standard │',
        '│ total      │        5 │       4300 │     5888 │ 1920 ($0.0006)     │       3968 │           0 │     40 │ ≥$0.0013 │ ≥$0.0019 │  ≥$0.0007 │        2 │                   │          │',
        '└────────────┴──────────┴────────────┴──────────┴────────────────────┴────────────┴─────────────┴────────┴──────────┴──────────┴───────────┴──────────┴───────────────────┴──────────┘',
        '1 session(s); USD per 1,000,000 tokens from the price table (packaged); check your contract; ≥$: a lower bound (unpriced requests left out), $?: no request priced; tokens: sums over the 4 request(s)',
        'with usage logged (?: none logged)',
    ]


def test_usage_by_request_csv_and_json(home: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--by", "request", "--format", "csv")
    rows = _csv(out)
    # what each bucket cost, after "cost" (session 41), sums to it in every priced row; empty when unpriced
    buckets = [row[11:15] for row in rows]  # after "reusable" (session 46)
    assert buckets[0] == ["cache miss cost", "cache read cost", "cache write cost", "output cost"]
    assert [sum(map(Decimal, b)) == Decimal(row[10]) if row[10] else b == [""] * 4
            for row, b in zip(rows[1:], buckets[1:])] == [True] * 6
    rows = [row[:11] + row[15:] for row in rows]
    # each request's row ends with what it was priced by (issue 13); the rate source is the table's
    details = [row[14:] for row in rows]
    source = details[1][4]
    flash = ["deepseek-v4-flash", "peak", "2027-01-15T08:00:00Z", "deepseek-flash", source, "", ""]
    assert details == [["model", "window", "sent", "billed as", "rate source", "cache retention", "write rate"],
                       flash, flash, flash, flash,
                       ["local-coder", "standard", "2027-01-15T08:00:00Z", "", "", "", ""], [""] * 7]
    assert code == 0 and source.startswith("https://") and [row[:14] for row in rows] == [
        ["table", "request", "requests", "cache miss", "reusable", "lost tokens", "lost cost", "cache read",
         "cache write", "output", "cost", "no cache", "off-peak", "unpriced"],
        ["usage by request", "s-mixed #0", "1", "2000", "0", "0", "0", "0", "0", "10", "0.000612", "0.000612",
         "0.000306", "0"],
        ["usage by request", "s-mixed #1", "1", "100", "1920", "0", "0", "1920", "0", "10", "0.00005352", "0.000618",
         "0.00002676", "0"],
        ["usage by request", "s-mixed #2", "1", "2100", "1920", "1920", "0.00056448", "0", "0", "10", "0.000642",
         "0.000642", "0.000321", "0"],
        # no usage: tokens unknown; it lost no token (0, as --json says), so its lost cost is 0
        # (docs/cache-accounting.md: a loss with no lost token costs $0.0000, 0 in JSON and CSV)
        # and its reusable reads are unknown: empty, never 0 (session 46)
        ["usage by request", "s-mixed #3", "1", "", "", "0", "0", "", "", "", "", "", "", "1"],
        ["usage by request", "s-mixed #4", "1", "100", "2048", "0", "0", "2048", "0", "10", "", "", "", "1"],
        ["usage by request", "total", "5", "4300", "5888", "1920", "0.00056448", "3968", "0", "40", "0.00130752",
         "0.001872", "0.00065376", "2"]]
    # the rows sum to the total row, exactly (at 4 decimals they were 0.0006 + 0.0001 + 0.0006 = 0.0013)
    for column in (6, 10, 11, 12):
        assert Decimal(repr(usd_total(float(r[column]) for r in rows[1:-1] if r[column]))) == Decimal(
            rows[-1][column]), column
    table = json.loads(invoke(monkeypatch, capsys, "usage", "--by", "request", "--json")[1])
    assert [(r["key"], r["tokens"] and r["tokens"]["total"], r["usage_unknown_requests"], r["lost_cost_usd"])
            for r in (*table["rows"], table["totals"])] == [
        ("s-mixed #0", 2010, 0, 0.0), ("s-mixed #1", 2030, 0, 0.0), ("s-mixed #2", 2110, 0, LOST),
        ("s-mixed #3", None, 1, 0.0), ("s-mixed #4", 2158, 0, 0.0), ("total", 8308, 1, LOST)]  # no loss: 0
    # the CSV cells are the JSON's numbers
    assert [Decimal(r[10]) for r in rows[1:4]] == [Decimal(repr(r["cost_usd"]["total"])) for r in table["rows"][:3]]


def test_cache_and_check(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "cache", "sessions/--p--/s-mixed/session.jsonl")
    assert code == 0
    assert [line for line in _lines(out) if "cost" in line] == [
        "tokens lost (of 5888 reusable): header_change 1920; cost lost $0.0006 (all causes: breaks and other "
        "shortfalls)",
        "session cost ≥$0.0013 (cache miss ≥$0.0013, cache read ≥$0.000012, cache write ≥$0.0000, output "
        "≥$0.000036)",
        "with no cache ≥$0.0019; all off-peak ≥$0.0007; breaks cost $0.0006 (the part of the cost lost that breaks "
        "caused); 2 request(s) unpriced (≥$: a sum over the priced ones only) (list prices, check your"]
    code, out, _ = invoke(monkeypatch, capsys, "check", "sessions", "--markdown", "-")
    assert [line.split(" | ")[7] for line in out.splitlines() if line.startswith("| ✅")] == [
        "≥$0.0013 (breaks $0.0006) (2 unpriced)"]


def test_stats_tables_and_csv(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert invoke(monkeypatch, capsys, "index", "--db", "i.sqlite")[0] == 0
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", "i.sqlite")
    lines = _lines(out)
    assert code == 0
    # what the cache losses cost is the same in every table: exact, the unpriced requests lost nothing
    assert [line for line in lines if "cost lost" in line or "cache losses /" in line] == [
        "│ cost lost (list prices)      │ $0.0006                 │",
        "│ cache losses / of which breaks                 │ $0.0006 / $0.0006                             │"]
    assert "│ cache miss / cache read / cache write / output │ ≥$0.0013 / ≥$0.000012 / ≥$0.0000 / ≥$0.000036 │" in lines
    assert "│ header_change │     1920 │        1920 │ $0.0006 │         $0.0006 │" in lines
    assert ("│ deepseek-flash (logged as deepseek-v4-flash) │        4 │     ≥$0.0013 │   ≥$0.000012 │      ≥$0.0000 │"
            " ≥$0.000036 │ ≥$0.0013 │   ≥$0.0019 │   ≥$0.0007 │  $0.0006 │        1 │") in lines  # the model billed (session 43)
    # by model "lost $": a model that lost no token lost $0.0000, whatever was priced (it was "n/a", then
    # "$?"; docs/cache-accounting.md: a loss with no lost token costs $0.0000, 0 in JSON and CSV)
    assert ("│ local-coder                                  │        1 │           1 │   2148 │       2048 │     95.3% │"
            "     0.0% │     2048 │           0 │ $0.0000 │") in lines
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", "i.sqlite", "--format", "csv")
    rows = _csv(out)
    assert [r[1:] for r in rows if r[0] == "i.sqlite: fleet totals"] == [
        ["sessions", "1"], ["sessions refused", "0"], ["requests", "5"], ["requests with cache reads known", "4"],
        ["prompt tokens", "8268"], ["cache read actual", "3968"], ["cache read expected", "1920"],
        ["hit ratio actual", "0.4799225931301403"], ["hit ratio expected", "0.23222060957910015"], ["output tokens", "40"],
        ["breaks (attribution)", "2"], ["breaks (cache)", "2"], ["tokens lost", "1920"], ["reusable cache read", "5888"],
        ["cost lost (list prices)", "0.00056448"]]
    assert [r[1:] for r in rows if r[0] == "cost (list prices, check your contract)"] == [
        ["requests", "5"], ["unpriced requests", "2"], ["cost", "0.00130752"], ["cache miss", "0.00126"],
        ["cache read", "0.00001152"], ["cache write", "0"], ["output", "0.000036"], ["with no cache", "0.001872"],
        ["all off-peak", "0.00065376"], ["cache losses", "0.00056448"], ["of which breaks", "0.00056448"],
        ["unpriced: no price for model 'local-coder'", "1"], ["unpriced: usage not logged", "1"]]
    assert [r[1:] for r in rows if r[0] == "cost by model"] == [
        ["deepseek-flash", "deepseek-v4-flash", "4", "0.00126", "0.00001152", "0", "0.000036", "0.00130752", "0.001872", "0.00065376",
         "0.00056448", "1"],
        ["local-coder", "local-coder", "1", "", "", "", "", "", "", "", "0", "1"]]  # no break lost a token: 0
    # local-coder lost no token: 0 (docs/cache-accounting.md)
    assert [r[-1] for r in rows if r[0] == "by model"] == ["0.00056448", "0"]
    assert [r[-3:] for r in rows if r[0] == "sessions whose cache losses cost the most"] == [
        ["0.00056448", "0.00130752", "0.00056448"]]


def test_cache_prints_the_ttl_the_requests_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    b = LogBuilder(session_id="long", created_at=T0, provider="anthropic", model="claude-sonnet-4-5",
                   system="S" * 8000)
    for i, read in enumerate((0, 2000)):
        with b.turn(f"turn {i}"), b.step():
            b.assistant(f"answer {i}", usage={"inputTokens": 20, "outputTokens": 10, "cacheReadTokens": read,
                                              "cacheWriteTokens": 0 if read else 2000})
    log = b.write_jsonl(tmp_path / "claude.jsonl")
    routes = tmp_path / "routes.yml"
    routes.write_text("providers:\n  anthropic:\n    cacheRetention: long\n")
    monkeypatch.setenv("COLUMNS", "300")
    rules = [line for line in _lines(invoke(monkeypatch, capsys, "cache", str(log))[1]) if line.startswith("rules:")]
    assert rules == ["rules: anthropic unit 1 min 1024 ttl 300s (platform.claude.com/docs/en/build-with-claude/"
                     "prompt-caching, 2026-10)"]
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(log), "--routes", str(routes))
    rules = [line for line in _lines(out) if line.startswith("rules:")]
    assert rules == ["rules: anthropic unit 1 min 1024 ttl 3600s (1h) (platform.claude.com/docs/en/"
                     "build-with-claude/prompt-caching, 2026-10)"]
