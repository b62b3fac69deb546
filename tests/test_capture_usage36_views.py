"""Issue 13 leftover, the views: with ``--capture``, ``usage``, ``cache``, ``sessions``, ``check`` and ``report``
price a request whose log holds no usage (the live-pi title call) from the captured response's
usage, and say so; the capture found beside a log prices alike (tour 38: found or given, one capture
means one thing), and ``--no-capture`` leaves it out.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import invoke
from dsh_audit.gate import run_check
from dsh_audit.report import build_report_data

ROOT = Path(__file__).resolve().parent.parent
C1 = ROOT.parent / "shared" / "corpus" / "live-pi" / "c1-anthropic-tools"
needs_c1 = pytest.mark.skipif(not C1.is_dir(), reason="../shared/corpus/live-pi is absent")
LOGS, WIRE = str(C1 / "home" / "sessions"), str(C1 / "wire.jsonl")
NOTE = "note: 1 request(s) priced from the capture's usage (their log holds none)"
# claude-sonnet-4-5's title call (input 10, cache writes 165, output 5) is $0.00072375 of it
PRICED, UNPRICED = 0.09418665, 0.0934629


@pytest.fixture(autouse=True)
def _columns(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")


@needs_c1
def test_usage_by_request(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "usage", "--by", "request", "--json", "--capture", WIRE, LOGS)
    table = json.loads(out)
    assert (code, err) == (0, [NOTE])
    assert [(r["key"].split()[-1], r["usage_source"]) for r in table["rows"][:2]] == [("#0", "capture"), ("#1", "log")]
    assert table["rows"][0]["tokens"] == {"cache_miss": 10, "cache_read": 0, "cache_write": 165, "output": 5,
                                          "reasoning": 0, "total": 180}
    assert (table["totals"]["cost_usd"]["total"], table["totals"]["cost_complete"], table["unpriced"]) == (PRICED, True, {})
    # --no-capture: the capture beside the logs is not looked for, and nothing prices the title call
    code, out, err = invoke(monkeypatch, capsys, "usage", "--by", "request", "--json", "--no-capture", LOGS)
    table = json.loads(out)
    assert (code, err, table["rows"][0]["usage_source"], table["totals"]["cost_usd"]["total"]) == (
        0, [], None, UNPRICED)
    code, out, err = invoke(monkeypatch, capsys, "usage", "--capture", WIRE, LOGS)
    total = next(line for line in out.splitlines() if line.startswith("│ total"))
    assert (code, err) == (0, [NOTE])
    # off-peak is the cost: Anthropic bills one rate all day (session 43, issue 13)
    assert total == ("│ total                                        │       11 │        110 │    77372 │ 8927 ($0.0308)     │"
                     "      67968 │       18655 │    234 │ $0.0942 │  $0.2637 │  $0.0942 │          │")  # reusable: session 46


@needs_c1
def test_cache_sessions_and_check(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--json", "--capture", WIRE, LOGS)
    cost = json.loads(out)["cost"]
    assert (code, cost["cost_usd"]["total"], cost["usage_from_capture_requests"], cost["usage_differs_requests"],
            cost["unpriced_requests"]) == (0, PRICED, 1, 0, 0)
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--json", "--no-capture", LOGS)
    cost = json.loads(out)["cost"]
    assert (cost["cost_usd"]["total"], cost["usage_from_capture_requests"], cost["unpriced_requests"]) == (UNPRICED, 0, 1)
    code, out, _ = invoke(monkeypatch, capsys, "sessions", "--json", "--capture", WIRE, LOGS)
    (row,) = map(json.loads, out.splitlines())
    assert (code, row["unpriced_requests"], row["cost_complete"]) == (0, 0, True)
    code, out, _ = invoke(monkeypatch, capsys, "check", "--json-report", "-", "--capture", WIRE, LOGS)
    (session,) = json.loads(out)["sessions"]
    assert (session["cost"]["cost_usd"]["total"], session["cost"]["usage_from_capture_requests"]) == (PRICED, 1)


@needs_c1
def test_the_html_report_prices_as_check_does() -> None:
    """Given, or found beside the logs: the same capture, the same prices (tour 38)."""
    totals = [build_report_data(run_check([LOGS], captures=capture))["totals"]["total"] for capture in (WIRE, None)]
    assert [(t["cost_usd"]["total"], t["unpriced_requests"], t["usage_unknown_requests"]) for t in totals] == [
        (PRICED, 0, 0), (PRICED, 0, 0)]


@needs_c1
def test_sessions_says_what_the_capture_did_as_cache_and_usage_say_it(monkeypatch: pytest.MonkeyPatch,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 13 leftover: `sessions --capture` priced the title call and said nothing of it."""
    for command in ("sessions", "cache", "usage"):
        code, _, err = invoke(monkeypatch, capsys, command, "--capture", WIRE, LOGS)
        assert (command, code, err) == (command, 0, [NOTE])
        code, _, err = invoke(monkeypatch, capsys, command, LOGS)  # the capture beside the logs: the same (tour 38)
        assert (command, code, err) == (command, 0, [NOTE])
        code, _, err = invoke(monkeypatch, capsys, command, "--no-capture", LOGS)  # none looked for
        assert (command, code, [line for line in err if "capture" in line]) == (command, 0, [])
    code, out, err = invoke(monkeypatch, capsys, "sessions", "--json", "--capture", WIRE, LOGS)
    (row,) = map(json.loads, out.splitlines())
    assert (code, err, row["cost_usd"]["total"]) == (0, [NOTE], PRICED)
    assert "cost_summary" not in row  # what the note is said from is no key of the JSON


@needs_c1
def test_the_cache_timeline_shows_the_captured_usage_marked(monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 13 leftover: the title call priced from the capture showed "~157" and "?" (unknown);
    now the capture's prompt (10 input + 165 cache writes) and cache reads (0), marked "*" as "~"
    marks an estimate, and a caption says what the mark means. Session 38: its verdict is judged from
    them as any other's (below Anthropic's minimum of 1024 tokens), not the log's usage_unknown."""
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--capture", WIRE, LOGS)
    lines = out.splitlines()
    at = lines.index("timeline")
    assert code == 0
    assert lines[at + 2] == ("┃  # ┃ kind  ┃ turn/step/attempt ┃ prompt ┃ reusable ┃ expected ┃ actual ┃ "
                             "classification                  ┃ lost ┃")
    assert lines[at + 4:at + 6] == [
        "│  0 │ title │ -                 │   175* │        0 │        0 │     0* │ below_minimum                   │      │",
        "│  1 │ loop  │ 1/1/1             │   8029 │        0 │        0 │      0 │ as_expected                     │      │"]
    assert lines[-1] == "*: the capture's usage (the log holds none), which priced the request and judged its cache"
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--no-capture", LOGS)  # not priced: the log's unknown
    lines = out.splitlines()
    assert lines[lines.index("timeline") + 4] == (
        "│  0 │ title │ -                 │   ~157 │        0 │        0 │      ? │ usage_unknown                   │      │")
    assert not lines[-1].startswith("*")


@needs_c1
def test_the_cache_timeline_csv_names_whose_usage_each_request_has(monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--format", "csv", "--capture", WIRE, LOGS)
    rows = [line.split(",") for line in out.splitlines() if line.startswith(("table,", "timeline,"))]
    assert code == 0
    assert rows[0][3:] == ["#", "kind", "turn/step/attempt", "prompt", "prompt (estimated)", "reusable", "expected",
                           "actual", "classification", "lost", "usage source"]
    assert [row[3:] for row in rows[1:3]] == [
        ["0", "title", "-", "175", "", "0", "0", "0", "below_minimum", "0", "capture"],
        ["1", "loop", "1/1/1", "8029", "", "0", "0", "0", "as_expected", "0", "log"]]
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--format", "csv", "--no-capture", LOGS)
    row = next(line.split(",") for line in out.splitlines() if line.startswith("timeline,"))
    assert row[3:] == ["0", "title", "-", "", "157", "0", "0", "", "usage_unknown", "0", ""]
