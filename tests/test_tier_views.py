"""Long-context price tiers in the views of the ledger: the index's ``costs.tier`` column (and the
upgrade of a schema-2 index that lacks it), ``stats``' tier line, and ``usage --by request``."""

from __future__ import annotations

import csv
import io
import sqlite3
import sys
from collections.abc import Callable
from pathlib import Path

import orjson
import pytest

from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded
from dsh_audit.fleet import SCHEMA_VERSION, index_logs
from dsh_audit.testing import LogBuilder

Runner = Callable[..., tuple[int, str, str]]
SENT = 1796209398000  # 2026-12-02T11:03:18Z, in milliseconds


def _usage(miss: int, read: int, output: int) -> dict[str, int]:
    return {"inputTokens": miss, "outputTokens": output, "cacheReadTokens": read}


def _log(path: Path, *usages: dict[str, int], session_id: str = "tiers") -> Path:
    b = LogBuilder(session_id=session_id, created_at=SENT, provider="openai", model="gpt-5.4", system="S" * 4000)
    for i, usage in enumerate(usages):
        with b.turn(f"turn {i} " + "x" * 4000):
            with b.step():
                b.assistant(f"answer {i}", usage=usage)
        b.clock.now += 5000
    path.parent.mkdir(parents=True, exist_ok=True)
    return b.write_jsonl(path)


def _tiered(tmp_path: Path) -> Path:
    # 20,000 + 252,000 = 272,000 prompt tokens: base rates ($0.128); 1,000 + 271,001 = 272,001:
    # above gpt-5.4's threshold, the whole request at the tier's rates ($0.1855005)
    return _log(tmp_path / "tiered" / "session.jsonl", _usage(20_000, 252_000, 1_000), _usage(1_000, 271_001, 2_000))


def _base(tmp_path: Path) -> Path:
    return _log(tmp_path / "base" / "session.jsonl", _usage(20_000, 252_000, 1_000), session_id="base")


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Runner:
    """``dsh-audit ARGS`` as the entry point runs it (an error is one line, exit 2), 200 columns wide."""
    monkeypatch.setenv("COLUMNS", "200")

    def invoke(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
        code = run_guarded(cli)
        out, err = capsys.readouterr()
        assert "Traceback" not in err
        return code, out, err

    return invoke


def _costs(db: Path) -> list[tuple[object, ...]]:
    connection = sqlite3.connect(db)
    try:
        return connection.execute("SELECT session_id, idx, tier, cost_total FROM costs ORDER BY session_id, idx")\
            .fetchall()
    finally:
        connection.close()


def test_index_stores_each_requests_tier_and_stats_sums_it(tmp_path: Path, run: Runner) -> None:
    db = tmp_path / "i.sqlite"
    summary = index_logs([_tiered(tmp_path), _base(tmp_path)], db)
    assert (summary.indexed, summary.failed) == (2, ())
    assert _costs(db) == [("base", 0, None, 0.128), ("tiers", 0, None, 0.128), ("tiers", 1, 272_000, 0.1855005)]
    code, out, _ = run("stats", "--db", str(db), "--json")
    stats = orjson.loads(out)
    assert code == 0 and (stats["cost"]["tier_requests"], stats["cost"]["tier_cost_usd"]) == (1, 0.1855005)
    assert stats["cost"]["cost_usd"]["total"] == 0.4415005
    assert [(r["model"], r["tier_requests"], r["tier_cost_usd"]) for r in stats["cost_by_model"]] == [
        ("gpt-5.4", 1, 0.1855005)]
    code, out, _ = run("stats", "--db", str(db))
    lines = [line for line in out.splitlines() if "long-context" in line]
    assert code == 0 and [[cell.strip() for cell in line.split("│")[1:3]] for line in lines] == [
        ["billed at long-context tier rates (requests)", "$0.1855 (1)"]]


def test_stats_without_a_tiered_request_has_no_tier_line(tmp_path: Path, run: Runner) -> None:
    db = tmp_path / "i.sqlite"
    index_logs([_base(tmp_path)], db)
    code, out, _ = run("stats", "--db", str(db), "--json")
    assert code == 0 and (orjson.loads(out)["cost"]["tier_requests"], orjson.loads(out)["cost"]["tier_cost_usd"]) == (
        0, 0.0)
    code, out, _ = run("stats", "--db", str(db))
    assert code == 0 and "cost (list prices" in out and "long-context" not in out


def test_a_version_2_index_is_upgraded_and_gets_the_tier_column(tmp_path: Path, run: Runner) -> None:
    tiered, base = _tiered(tmp_path), _base(tmp_path)
    db = tmp_path / "old.sqlite"
    index_logs([tiered, base], db)
    connection = sqlite3.connect(db)  # what dsh-audit's schema 2 left: costs without tier
    with connection:
        connection.execute("ALTER TABLE costs DROP COLUMN tier")
        connection.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
    connection.close()
    code, _, err = run("stats", "--db", str(db))
    assert code == 2 and err == (f"error: {db}: index schema version 2, this dsh-audit reads {SCHEMA_VERSION} "
                                 "(hint: run `dsh-audit index PATH --db FILE` on the logs to upgrade it in place)\n")
    code, out, err = run("index", str(tiered), "--db", str(db), "--json")
    assert code == 0 and err == (f"note: {db}: index schema 2 upgraded to {SCHEMA_VERSION} in place; every log "
                                 "given was read again to store its priced ledger and reusable cache reads (a "
                                 "stored log not given has none until it is: stats counts them unknown)\n")
    assert (orjson.loads(out)["indexed"], orjson.loads(out)["skipped"], orjson.loads(out)["upgraded_from"]) == (
        1, 0, 2)
    connection = sqlite3.connect(db)
    columns = [row[1] for row in connection.execute("PRAGMA table_info(costs)")]
    version = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    connection.close()
    assert "tier" in columns and version == (str(SCHEMA_VERSION),)
    # the log not given keeps its session row, without a ledger until it is indexed again
    assert _costs(db) == [("tiers", 0, None, 0.128), ("tiers", 1, 272_000, 0.1855005)]
    code, out, _ = run("stats", "--db", str(db), "--json")
    cost = orjson.loads(out)["cost"]
    assert code == 0 and (cost["sessions_unpriced"], cost["tier_requests"], cost["tier_cost_usd"]) == (1, 1, 0.1855005)
    code, out, err = run("index", str(tiered), str(base), "--db", str(db), "--json")
    assert code == 0 and err == ""
    assert (orjson.loads(out)["indexed"], orjson.loads(out)["skipped"], orjson.loads(out)["upgraded_from"]) == (
        1, 1, None)
    assert _costs(db) == [("base", 0, None, 0.128), ("tiers", 0, None, 0.128), ("tiers", 1, 272_000, 0.1855005)]


def test_usage_by_request_json_shows_each_requests_tier(tmp_path: Path, run: Runner) -> None:
    log = str(_tiered(tmp_path))
    code, out, _ = run("usage", log, "--by", "request", "--json", "--no-breaks")
    table = orjson.loads(out)
    assert code == 0 and [(r["key"], r["tier"], r["cost_usd"]["total"]) for r in table["rows"]] == [
        ("tiers #0", None, 0.128), ("tiers #1", 272_000, 0.1855005)]
    assert "tier" not in table["totals"]
    code, out, _ = run("usage", log, "--by", "session", "--json", "--no-breaks")
    # off_peak_cost_usd always (session 43, issue 13): OpenAI bills one rate all day, so it is the cost
    rows = orjson.loads(out)["rows"]
    assert code == 0 and [sorted(r) for r in rows] == [[
        "break_cost_usd", "cost_complete", "cost_usd", "key", "lost_cost_usd", "lost_tokens", "lost_unknown_requests",
        "no_cache_cost_usd", "off_peak_cost_usd", "path", "requests", "reusable_cache_read", "session_id", "tokens",
        "tokens_unknown_requests", "unpriced_requests", "usage_unknown_requests"]]
    assert [r["off_peak_cost_usd"] for r in rows] == [0.3135005]


def test_usage_by_request_table_has_a_tier_column_only_when_a_request_has_a_tier(tmp_path: Path, run: Runner) -> None:
    code, out, _ = run("usage", str(_tiered(tmp_path)), "--by", "request", "--no-breaks", "--format", "csv")
    # a request's row ends with what it was priced by (issue 13: model, window, send time, billed-as
    # model, rate source, cache retention, write rate): the columns before it are compared here
    out = _without_details(out)
    # --no-breaks measured no loss: the reusable and lost cells are empty, never 0 (session 36, D3); off-peak is
    # the cost (OpenAI has no peak window: session 43, issue 13)
    assert code == 0 and out == (
        "table,request,requests,cache miss,reusable,lost tokens,lost cost,cache read,cache write,output,cost,tier,"
        "cache miss cost,cache read cost,cache write cost,output cost,no cache,off-peak,unpriced\r\n"
        "usage by request,tiers #0,1,20000,,,,252000,0,1000,0.128,,0.05,0.063,0,0.015,0.695,0.128,0\r\n"
        'usage by request,tiers #1,1,1000,,,,271001,0,2000,0.1855005,">272,000",0.005,0.1355005,0,0.045,1.405005,'
        '0.1855005,0\r\n'
        "usage by request,total,2,21000,,,,523001,0,3000,0.3135005,,0.055,0.1985005,0,0.06,2.100005,0.3135005,0\r\n")
    code, out, _ = run("usage", str(_base(tmp_path)), "--by", "request", "--no-breaks", "--format", "csv")
    out = _without_details(out)
    assert code == 0 and out == (
        "table,request,requests,cache miss,reusable,lost tokens,lost cost,cache read,cache write,output,cost,"
        "cache miss cost,cache read cost,cache write cost,output cost,no cache,off-peak,unpriced\r\n"
        "usage by request,base #0,1,20000,,,,252000,0,1000,0.128,0.05,0.063,0,0.015,0.695,0.128,0\r\n"
        "usage by request,total,1,20000,,,,252000,0,1000,0.128,0.05,0.063,0,0.015,0.695,0.128,0\r\n")


def _without_details(out: str) -> str:
    """CSV of ``usage --by request`` without each row's last 7 columns (the request's details)."""
    text = io.StringIO()
    csv.writer(text, lineterminator="\r\n").writerows(row[:-7] for row in csv.reader(io.StringIO(out)))
    return text.getvalue()


def test_usage_by_request_terminal_table_and_caption_name_the_tier(tmp_path: Path, run: Runner) -> None:
    code, tiered, _ = run("usage", str(_tiered(tmp_path)), "--by", "request", "--no-breaks")
    header = [cell.strip() for cell in tiered.splitlines()[2].split("┃")[1:-1]]
    # then each request's details, as many as the terminal holds (issue 13): model, window, sent, billed
    # as, for the room off-peak leaves (OpenAI bills one rate all day: off-peak is the cost, session 43)
    assert code == 0 and header == ["request", "requests", "cache miss", "reusable", "lost tokens (cost)",
                                    "cache read", "cache write", "output", "cost", "tier", "no cache", "off-peak",
                                    "unpriced", "model", "window"]  # "reusable" (session 46): no room for "sent"
    assert [line.split("│")[10].strip() for line in tiered.splitlines()[4:7]] == ["", ">272,000", ""]
    caption = " ".join(line.strip() for line in tiered.splitlines()[8:])
    assert caption.endswith("check your contract; tier: prompt tokens above which long-context rates priced the "
                            "whole request")
    code, base, _ = run("usage", str(_base(tmp_path)), "--by", "request", "--no-breaks")
    assert code == 0 and "tier" not in base and base.splitlines()[-1].rstrip().endswith("check your contract")
