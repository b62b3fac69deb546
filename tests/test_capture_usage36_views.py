"""Issue 13 leftover, the views: with ``--capture``, ``usage``, ``cache``, ``sessions``, ``check`` and ``report``
price a request whose log holds no usage (the live-pi title call) from the captured response's
usage, and say so; the capture found beside a log is compared with it but prices nothing, so every
view without ``--capture`` keeps today's numbers (``tests/test_cost_views.py`` sums them).
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
    assert (table["total"]["cost_usd"]["total"], table["total"]["cost_complete"], table["unpriced"]) == (PRICED, True, {})
    # the capture found beside the logs is compared with them, and prices nothing
    code, out, err = invoke(monkeypatch, capsys, "usage", "--by", "request", "--json", LOGS)
    table = json.loads(out)
    assert (code, err, table["rows"][0]["usage_source"], table["total"]["cost_usd"]["total"]) == (
        0, [], None, UNPRICED)
    code, out, err = invoke(monkeypatch, capsys, "usage", "--capture", WIRE, LOGS)
    total = next(line for line in out.splitlines() if line.startswith("│ total"))
    assert (code, err) == (0, [NOTE])
    assert total == ("│ total                                        │       11 │        110 │ 8927 ($0.0308)     │      "
                     "67968 │       18655 │    234 │ $0.0942 │  $0.2637 │  $0.0942 │          │")


@needs_c1
def test_cache_sessions_and_check(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--json", "--capture", WIRE, LOGS)
    cost = json.loads(out)["cost"]
    assert (code, cost["cost_usd"]["total"], cost["usage_from_capture_requests"], cost["usage_differs_requests"],
            cost["unpriced_requests"]) == (0, PRICED, 1, 0, 0)
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--json", LOGS)
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
    totals = [build_report_data(run_check([LOGS], captures=capture))["totals"]["total"] for capture in (WIRE, None)]
    assert [(t["cost_usd"]["total"], t["unpriced_requests"], t["usage_unknown_requests"]) for t in totals] == [
        (PRICED, 0, 0), (UNPRICED, 1, 1)]
