"""Session 46 (issues 11 item 3, 14 item 4): `usage` shows "reusable" beside "lost tokens (cost)".

``usage --json`` had ``reusable_cache_read`` (the cache reads the lost tokens are measured from:
lost <= reusable - cache read) while its table, CSV and Markdown had no such column. Now each has
"reusable" right before the lost tokens, named as `cache` and `stats` name it, "?" (CSV: empty) when
no request of the row logged its cache reads (never 0), empty without accounting; a narrow terminal
keeps it beside the lost tokens after the what-ifs go, and leaves it out first when nothing was lost.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from _cli import invoke, mixed_home
from dsh_audit.testing import LogBuilder

HEADER = ["table", "request", "requests", "cache miss", "reusable", "lost tokens", "lost cost", "cache read"]


def _csv(out: str) -> list[list[str]]:
    return [row for row in csv.reader(io.StringIO(out)) if row]


def test_csv_and_markdown_have_the_json_reusable_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    mixed_home(tmp_path, monkeypatch)
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--by", "request", "--json")
    table = json.loads(out)
    reusable = [row["reusable_cache_read"] for row in (*table["rows"], table["totals"])]
    # the title call (#3) logged no usage: its reusable reads are unknown, null, never 0
    assert (code, reusable) == (0, [0, 1920, 1920, None, 2048, 5888])
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--by", "request", "--format", "csv")
    rows = _csv(out)
    assert (code, rows[0][:8]) == (0, HEADER)
    assert [row[1:8] for row in rows[1:]] == [
        ["s-mixed #0", "1", "2000", "0", "0", "0", "0"],
        ["s-mixed #1", "1", "100", "1920", "0", "0", "1920"],
        ["s-mixed #2", "1", "2100", "1920", "1920", "0.00056448", "0"],
        ["s-mixed #3", "1", "", "", "0", "0", ""],
        ["s-mixed #4", "1", "100", "2048", "0", "0", "2048"],
        ["total", "5", "4300", "5888", "1920", "0.00056448", "3968"]]
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--by", "request", "--format", "markdown")
    lines = out.splitlines()
    assert (code, lines[2].split(" | ")[:6]) == (0, ["| request", "requests", "cache miss", "reusable",
                                                     "lost tokens (cost)", "cache read"])
    assert [line.split(" | ")[3:5] for line in lines[4:10]] == [
        ["0", ""], ["1920", ""], ["1920", "1920 ($0.0006)"], ["?", ""], ["2048", ""], ["5888", "1920 ($0.0006)"]]


def test_the_table_shows_it_beside_the_lost_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    mixed_home(tmp_path, monkeypatch, columns=80)
    code, out, _ = invoke(monkeypatch, capsys, "usage")
    lines = [line.rstrip() for line in out.splitlines()]
    # a break lost tokens: "reusable" is kept beside them, after off-peak, before the costliest bucket (cache
    # miss) and "requests"
    assert (code, lines[:6]) == (0, [
        "usage by session",
        "                   cache            lost tokens",
        "session  requests   miss  reusable  (cost)              cost  no cache  unpriced",
        "─" * 80,
        "s-mixed         5   4300      5888  1920 ($0.0006)  ≥$0.0013  ≥$0.0019         2",
        "total           5   4300      5888  1920 ($0.0006)  ≥$0.0013  ≥$0.0019         2"])
    assert " ".join(lines[-2:]) == ("narrow terminal: cache write, cache read, output, off-peak not shown (widen "
                                    "it, or use --json)")


def test_nothing_lost_leaves_it_out_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    b = LogBuilder(session_id="s-kept", created_at=1_800_000_000_000, model="deepseek-v4-flash", system="S" * 8000)
    for text, miss, read in (("one", 2000, 0), ("two", 100, 1920)):
        with b.turn(text), b.step():
            b.assistant(text, usage={"inputTokens": miss, "outputTokens": 10, "cacheReadTokens": read})
    b.write_jsonl(tmp_path / "sessions" / "--p--" / "s-kept" / "session.jsonl", packed=False)
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = invoke(monkeypatch, capsys, "usage")
    lines = [line.rstrip() for line in out.splitlines()]
    # no break lost a token: the base of no lost figure goes with the columns that say nothing, before a
    # column with a value (cache read, the what-ifs) is left out
    assert (code, lines[1:5]) == (0, [
        "                     cache    cache   cache",
        "session  requests     miss     read   write  output     cost  no cache  off-peak",
        "─" * 80,
        "s-kept          2     2100     1920       0      20  $0.0007   $0.0012   $0.0003"]), out
    assert " ".join(lines[-2:]) == ("narrow terminal: lost tokens (cost), unpriced (no values), reusable not shown "
                                    "(widen it, or use --json)")


def test_no_accounting_leaves_it_empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    mixed_home(tmp_path, monkeypatch)
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--no-accounting", "--format", "csv")
    rows = _csv(out)
    assert (code, [row[4:7] for row in rows]) == (0, [["reusable", "lost tokens", "lost cost"], ["", "", ""],
                                                      ["", "", ""]])
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--no-accounting", "--json")
    assert json.loads(out)["totals"]["reusable_cache_read"] is None
