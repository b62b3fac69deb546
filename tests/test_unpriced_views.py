"""One rule for a cost over unpriced requests, in every view (issue 13: "an unknown model is
reported as unpriced, never priced at zero"): nothing priced is unknown (``$?``, JSON null), partly
priced is a lower bound (``≥$x``, JSON the priced sum with ``unpriced_requests`` and
``cost_complete``), and the ``unpriced`` column is never left out while a request is unpriced.

Also: ``usage --since`` counts only the sessions the window keeps, ``usage`` keeps two files of one
session apart, unpriced reasons are grouped by model with their dates, an imported log's breaks
are not applicable, ``cache``'s CSV names each timeline's session, and a compaction is ``N/-``.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from _cli import invoke
from dsh_audit.cache import Costs, load_prices, session_ledger, usage_table
from dsh_audit.testing import LogBuilder

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
CORPUS = ROOT.parent / "shared" / "corpus"
CLAUDE_CODE = ROOT / "tests" / "data" / "importers" / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
USAGE = {"inputTokens": 1000, "outputTokens": 100, "cacheReadTokens": 0}
# 1000 cache-miss and 100 output tokens of deepseek-v4-flash at its off-peak-free list price
PRICED = "$0.0004"


def _session(root: Path, session_id: str, *, model: str | None = None, title: bool = False,
             created: int = 1_800_000_000_000) -> Path:
    """One turn of one step with :data:`USAGE`; ``model`` one the table does not price; ``title``
    adds a title call, whose log holds no usage (unpriced)."""
    builder = LogBuilder(session_id=session_id, created_at=created)
    if model is not None:
        builder.configure(model=model)
    with builder.turn("Hi"):
        with builder.step():
            builder.assistant("Hello", usage=USAGE)
    if title:
        builder.title("A title")
    path = root / "sessions" / "--p--" / session_id / "session.jsonl"
    builder.write_jsonl(path, packed=False)
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """$DSH_HOME with three sessions a minute apart: all priced, partly priced, none priced."""
    _session(tmp_path, "session-priced")
    _session(tmp_path, "session-partial", title=True, created=1_800_000_060_000)
    _session(tmp_path, "session-unknown", model="local-coder", created=1_800_000_120_000)
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _lines(out: str) -> list[str]:
    return [line.rstrip() for line in out.splitlines()]


def test_the_rule() -> None:
    assert [Costs.shown(0.25, requests=2, unpriced=n) for n in (0, 1, 2)] == ["$0.2500", "≥$0.2500", "$?"]
    assert Costs.shown(None, requests=1, unpriced=0) == "$?"
    assert Costs.shown(0.0, requests=0, unpriced=0) == "$0.0000"  # no request: nothing to price
    assert [Costs.known(0.25, requests=2, unpriced=n) for n in (0, 1, 2)] == [0.25, 0.25, None]


def test_sessions_table_and_json(home: Path, monkeypatch, capsys) -> None:
    code, out, err = invoke(monkeypatch, capsys, "sessions")
    assert (code, err) == (0, [])
    assert _lines(out) == [
        "3 session(s), newest first",
        "when (UTC)        title    requests   hit  breaks      cost  id",
        "─" * 76,
        "2027-01-15 08:02  -               1  0.0%       0        $?  session-unknown",
        "2027-01-15 08:01  A title         2  0.0%       0  ≥$0.0004  session-partial",
        "2027-01-15 08:00  -               1  0.0%       0   $0.0004  session-priced",
        "total                             4  0.0%       0  ≥$0.0008",  # issue 14 B1
        "narrow terminal: format, first (UTC), tokens, project not shown (widen it, or",
        "use --json)"]
    code, out, _ = invoke(monkeypatch, capsys, "sessions", "--json")
    assert [(s["session_id"], s["cost_usd"] and s["cost_usd"]["total"], s["unpriced_requests"], s["cost_complete"])
            for s in map(json.loads, out.splitlines())] == [
        ("session-unknown", None, 1, False), ("session-partial", 0.00042, 1, False),
        ("session-priced", 0.00042, 0, True)]


def test_usage_keeps_the_unpriced_column_and_marks_every_amount(home: Path, monkeypatch, capsys) -> None:
    code, out, err = invoke(monkeypatch, capsys, "usage")  # the sessions in the order `sessions` lists them
    assert code == 0 and err == ["warning: 1 request(s) unpriced: no price for model 'local-coder'"
                                 " (provider deepseek-official: give --prices FILE a [providers.deepseek.models."
                                 "local-coder] table of cache_miss, cache_read and output rates)",
                                 "warning: 1 request(s) unpriced: usage not logged"]
    assert _lines(out) == [
        'usage by session',
        '                           cache',
        'session          requests   miss  output      cost  no cache  off-peak  unpriced',
        "─" * 80,
        'session-unknown         1   1000     100        $?        $?        $?         1',
        'session-partial         2   1000     100  ≥$0.0004  ≥$0.0004  ≥$0.0002         1',
        'session-priced          1   1000     100   $0.0004   $0.0004   $0.0002',
        'total                   4   3000     300  ≥$0.0008  ≥$0.0008  ≥$0.0004         2',
        '3 session(s); USD per 1,000,000 tokens from the price table (packaged); check',
        'your contract; ≥$: a lower bound (unpriced requests left out), $?: no request',
        'priced; tokens: sums over the 3 request(s) with usage logged (?: none logged)',
        'narrow terminal: lost tokens (cost) (no values), reusable, cache read, cache',
        'write not shown (widen it, or use --json)',
    ]
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--json")
    table = json.loads(out)
    assert [(r["key"], r["cost_usd"] and r["cost_usd"]["total"], r["no_cache_cost_usd"], r["off_peak_cost_usd"],
             r["lost_cost_usd"], r["break_cost_usd"], r["unpriced_requests"], r["cost_complete"])
            for r in [*table["rows"], table["totals"]]] == [
        # it lost no token: its lost and break costs are 0, not unknown (docs/cache-accounting.md: a loss
        # with no lost token costs $0.0000, 0 in JSON; an amount no request owes is 0)
        ("session-unknown", None, None, None, 0.0, 0.0, 1, False),
        ("session-partial", 0.00042, 0.00042, 0.00021, 0.0, 0.0, 1, False),
        ("session-priced", 0.00042, 0.00042, 0.00021, 0.0, 0.0, 0, True),
        ("total", 0.00084, 0.00084, 0.00042, 0.0, 0.0, 2, False)]


@pytest.mark.parametrize("by", ["model", "day", "window", "turn", "request"])
def test_usage_by_every_group_marks_the_unpriced(home: Path, monkeypatch, capsys, by: str) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--by", by, "--format", "csv")
    assert code == 0
    rows = list(csv.reader(io.StringIO(out)))
    header = rows[0]
    cost, unpriced = header.index("cost"), header.index("unpriced")
    shown = {(r[cost], r[unpriced]) for r in rows[1:]}
    # CSV: exact amounts a spreadsheet can sum (as the JSON has them, not rounded to 4 decimals), a
    # lower bound beside its unpriced count (0 when none), an unknown empty
    assert ("0.00084", "2") in shown and not {c for c, u in shown if c == "0.0000" or (c == "" and u == "0")}
    for c, u in shown:  # a row with no unpriced request is priced whole; one with any, a bound or unknown
        assert float(c) >= 0 if u == "0" else (c == "" or float(c) >= 0), (c, u)
    if by == "model":
        assert shown == {("0.00084", "1"), ("", "1"), ("0.00084", "2")}
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--by", by, "--format", "markdown")
    # no bare $0.0000 in a row with unpriced requests: a bucket's amount is a bound too, "≥$0.0000" (session 41)
    cells = [line.strip("|").split(" | ") for line in out.splitlines() if line.startswith("| ")]
    at = [cell.strip() for cell in cells[0]].index("unpriced")
    unpriced = [row for row in cells[2:] if row[at].strip()]
    assert "| ≥$0.0008 |" in out and "| ≥$0.0000 |" in out and unpriced
    assert not [row for row in unpriced if "$0.0000" in row]


def test_cache_summary_lines(home: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    unknown = home / "sessions" / "--p--" / "session-unknown" / "session.jsonl"
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(unknown))
    assert code == 0
    lines = _lines(out)  # the heading takes one line or two (the id under a long tmp_path): found by its words
    at = next(k for k, line in enumerate(lines) if line.startswith("tokens lost"))
    assert lines[at - 4].endswith("session-unknown/session.jsonl") or lines[at - 4] == "session session-unknown"
    assert lines[at:at + 3] == [
        "tokens lost (of 0 reusable): none; cost lost $0.0000 (all causes: breaks and other shortfalls)",
        "session cost $?",
        "with no cache $?; all off-peak $?; breaks cost $0.0000 (the part of the cost lost that breaks caused); 1 "
        "request(s)"]
    partial = home / "sessions" / "--p--" / "session-partial" / "session.jsonl"
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(partial))
    lines = _lines(out)
    at = next(k for k, line in enumerate(lines) if line.startswith("session cost"))
    assert lines[at:at + 3] == [
        "session cost ≥$0.0004 (cache miss ≥$0.0003, cache read ≥$0.0000, cache write ≥$0.0000, output ≥$0.0001)",
        "with no cache ≥$0.0004; all off-peak ≥$0.0002; breaks cost $0.0000 (the part of the cost lost that breaks "
        "caused); 1",
        "  request(s) unpriced (≥$: a sum over the priced ones only) (list prices, check your contract)"]
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(unknown), "--json")
    cost = json.loads(out)["cost"]
    # no break lost a token: the break cost is 0 (an amount no request owes), the rest unknown
    assert (cost["cost_usd"], cost["no_cache_cost_usd"], cost["break_cost_usd"], cost["unpriced_requests"],
            cost["cost_complete"]) == (None, None, 0.0, 1, False)


def test_stats_on_the_index(home: Path, monkeypatch, capsys) -> None:
    db = str(home / "i.sqlite")
    assert invoke(monkeypatch, capsys, "index", "--db", db)[0] == 0
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", db)
    lines = _lines(out)
    assert code == 0
    assert [line for line in lines if line.startswith("│ ") and ("$" in line or "unpriced" in line)][:7] == [
        "│ cost lost (list prices)      │ $0.0000           │",  # beside "requests (cache reads known)" (session 46)
        "│ requests (unpriced)                            │ 4 (2)                                     │",
        "│ cost                                           │ ≥$0.0008                                  │",
        "│ cache miss / cache read / cache write / output │ ≥$0.0006 / ≥$0.0000 / ≥$0.0000 / ≥$0.0002 │",
        "│ with no cache                                  │ ≥$0.0008                                  │",
        "│ all off-peak                                   │ ≥$0.0004                                  │",
        "│ cache losses / of which breaks                 │ $0.0000 / $0.0000                         │"]
    # one table style a run (boxed, as the first table); a loss of no token costs $0.0000 even unpriced
    # (session 40: the cheapest buckets left out first, the costliest, cache miss, kept with the what-ifs)
    # (session 43: by the model billed, deepseek-flash, a narrower model column)
    assert "│ local-coder    │        1 │         $? │       $? │         $? │        $? │  $0.0000 │        1 │" \
        in lines
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", db, "--json")
    stats = json.loads(out)
    assert (stats["cost"]["cost_usd"]["total"], stats["cost"]["unpriced_requests"], stats["cost"]["cost_complete"]) \
        == (0.00084, 2, False)
    assert [(r["model"], r["cost_usd"], r["unpriced_requests"]) for r in stats["cost_by_model"]][1] == (
        "local-coder", None, 1)


def test_check_markdown_and_the_html_page_data(home: Path, monkeypatch, capsys) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "check", "sessions", "--markdown", "-")
    rows = [line.split(" | ")[1:8:6] for line in out.splitlines() if line.startswith("| ✅")]
    assert rows == [["sessions/--p--/session-partial/session.jsonl", "≥$0.0004 (1 unpriced)"],
                    ["sessions/--p--/session-priced/session.jsonl", PRICED],
                    ["sessions/--p--/session-unknown/session.jsonl", "\\$? (1 unpriced)"]]  # escaped
    page = home / "page.html"
    code, _, _ = invoke(monkeypatch, capsys, "report", "sessions/--p--/session-unknown/session.jsonl", "-o", str(page))
    text = page.read_text(encoding="utf-8")
    assert code == 0 and '"cost_usd":null,"no_cache_cost_usd":null' in text and '"unpriced_requests":1' in text
    # the page prints a cost through costUsd: "$?" for null with unpriced requests, "≥" before a lower bound
    assert 'return u?"$?":"n/a";' in text and 'return (u?"\\u2265":"")+usd(v);' in text


def test_usage_since_counts_the_sessions_it_keeps(tmp_path: Path, monkeypatch, capsys) -> None:
    _session(tmp_path, "session-early", created=1_800_000_000_000)  # 2027-01-15
    _session(tmp_path, "session-late", created=1_800_259_200_000)  # 2027-01-18
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    code, out, err = invoke(monkeypatch, capsys, "usage", "--since", "2027-01-17", "--json")
    table = json.loads(out)
    assert (code, table["sessions"], [r["key"] for r in table["rows"]]) == (0, 1, ["session-late"])
    assert err == ["note: --since 2027-01-17T00:00:00Z: 1 of 2 log(s) with no activity in that window (by the "
                   "logs' own timestamps) left out"]


def test_usage_keeps_two_files_of_one_session_apart(tmp_path: Path, monkeypatch, capsys) -> None:
    first = _session(tmp_path / "a", "session-twice")
    second = _session(tmp_path / "b", "session-twice", model="local-coder", title=True)  # other lines: both read
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(first), str(second), "--json")
    assert code == 0
    assert [(r["key"], r["requests"]) for r in json.loads(out)["rows"]] == [  # newest first, as `sessions`
        (f"session-twice ({second})", 2), (f"session-twice ({first})", 1)]
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(first), "--by", "turn", "--json")
    assert [r["key"] for r in json.loads(out)["rows"]] == ["session-twice turn 1"]


def test_unpriced_reasons_are_grouped_by_model_with_their_dates(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"  # a model priced only from 2027-02-01
    prices.write_text(json.dumps({"providers": {"deepseek": {"models": {"later-model": [
        {"from": "2027-02-01T00:00:00Z", "cache_miss": 1.0, "cache_read": 0.1, "output": 2.0,
         "source": "https://example.com/prices", "retrieved": "2027-01-01"}]}}}}))
    book = load_prices(str(prices))
    ledgers = [session_ledger(_session(tmp_path / str(n), f"session-{n}", model="later-model",
                                       created=1_800_000_000_000 + n * 86_400_000), prices=book) for n in range(3)]
    assert usage_table(ledgers).unpriced == {
        "no rate for 'later-model' (provider deepseek) in force between 2027-01-15 and 2027-01-17": 3}
    assert usage_table(ledgers[:1]).unpriced == ledgers[0].summary()["unpriced"] == {
        "no rate for 'later-model' (provider deepseek) in force on 2027-01-15": 1}


@needs_corpus
def test_corpus_reasons_are_one_row_per_model(monkeypatch, capsys) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--lenient", str(CORPUS / "fixtures" / "acp-snapshots"),
                          "--json")
    assert json.loads(out)["unpriced"] == {
        # the mock servers' usages without cacheReadTokens on deepseek-official: hits unknown
        # (docs/cache-accounting.md, "Unpriced requests": the rule of cache's logged_cache_read)
        "cache reads not logged (deepseek-official logs cacheReadTokens only when the API reported them: the "
        "prompt's split into hits and misses is unknown)": 106,
        "no price for model 'title-model'": 1,
        "no rate for 'deepseek-v4-flash-vision-exp' (provider deepseek) in force between 2026-07-13 and 2026-08-11": 7,
        "usage not logged": 6}


def test_an_imported_log_has_no_break_count(monkeypatch, capsys) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "sessions", str(CLAUDE_CODE), "--json")
    assert (code, json.loads(out)["breaks"]) == (0, None)
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(CLAUDE_CODE), "--json")
    report = json.loads(out)
    assert (report["breaks"], report["breaks_by_cause"]) == (None, None)
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(CLAUDE_CODE))
    assert "breaks n/a (an imported log: break attribution needs a DSH log)" in _lines(out)
    code, out, _ = invoke(monkeypatch, capsys, "sessions", str(CLAUDE_CODE))
    # session 43: Claude Code's own title (its summary record); the total's breaks unknown too, never 0.
    # Session 45: the id cut, so "tokens" (a lesser column) is left out before, with the empty "breaks"
    assert ("2026-01-05 10:06  YAML config loader for app.py  /work/proj         4      59.3%  $0.0134  7d3c6a52\n"
            "total                                                               4      59.3%  $0.0134\n"
            "id: shortest unique prefix (--json for whole ids); narrow terminal: breaks (no values), format,\n"
            "first (UTC), tokens not shown (widen it, or use --json)\n") in out
    monkeypatch.setenv("COLUMNS", "200")  # a cache drop of an imported log is counted beside "n/a"
    codex = next((CLAUDE_CODE.parent.parent / "codex").glob("*.jsonl"))
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(codex))
    assert ("breaks n/a (an imported log: break attribution needs a DSH log); 1 cache drop(s) with no cause known "
            "(break_unattributed below)") in _lines(out)


def test_cache_csv_and_markdown_name_each_timelines_session(monkeypatch, capsys) -> None:
    chat, tools = SAMPLES / "chat" / "session.jsonl", SAMPLES / "tools" / "session.jsonl"
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(chat), str(tools), "--format", "csv")
    named = [tuple(row[:3]) for row in csv.reader(io.StringIO(out)) if row and row[0] != "table"]
    assert sorted(set(named)) == [("timeline", str(chat), "session-sample-chat"),  # the log and the session apart
                                  ("timeline", str(tools), "session-sample-tools")]
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(chat), "--format", "markdown")
    assert "timeline of session session\\-sample\\-chat" in out or "timeline of session session-sample-chat" in out


def test_a_compaction_is_turn_slash_dash(monkeypatch, capsys) -> None:
    log = next((SAMPLES / "sessions").glob("*/session-sample-compaction/session.jsonl.zstd"))
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(log), "--format", "csv")
    rows = [row for row in csv.reader(io.StringIO(out)) if len(row) > 5 and row[4] == "compaction"]
    assert [row[5] for row in rows] == ["2/-"] and "None" not in out
