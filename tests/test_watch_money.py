"""``dsh-audit watch``'s money is ``usage``'s and ``cache``'s (issues 13 and 14).

- ``watch --json`` carries every amount exact, to the nano-dollar: each request's ``cost_usd`` is
  ``usage --by request``'s, and the summary's ``cost_usd`` the session's total in ``cache --json``
  and ``usage --json`` (it was rounded to the micro-dollar, so a session of $0.0000003 read as 0).
- Its lines show each amount as ``usage``'s table does (``$0.0001``, ``$0.00000030``, ``$?``); an
  unknown amount stays unknown (``$?``, null), never 0.
- The summary sums exactly also when a log is read again from its start.

Each watch runs once over what the log holds (``--since`` makes it history, ``--idle-exit`` ends
it): real file reading, no mocks.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from _cli import invoke, mixed_home
from dsh_audit.cache import usd_total
from dsh_audit.testing import LogBuilder
from dsh_audit.watch import WatchNote, WatchRequest, WatchSummary

T0 = 1_800_000_000_000  # 2027-01-15T08:00:00Z: DeepSeek's peak window
WATCH = ("--since", "100000d", "--idle-exit", "0.3", "--polling")
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live"
SCENARIOS = ("c-change", "f-fork", "g-subagent")
needs_corpus = pytest.mark.skipif(not all((CORPUS / s / "home" / "sessions").is_dir() for s in SCENARIOS),
                                  reason="../shared/corpus is absent")


def _usage(miss: int, read: int, output: int = 10) -> dict[str, int]:
    return {"inputTokens": miss, "outputTokens": output, "cacheReadTokens": read}


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, builder: LogBuilder, session_id: str) -> Path:
    builder.write_jsonl(tmp_path / "sessions" / "--p--" / session_id / "session.jsonl", packed=False)
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def mixed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``s-mixed`` (as in ``test_money_display.py``): three deepseek-v4-flash requests at peak (the
    third a break after a system-prompt change), a title call with no usage logged, then local-coder
    (no price)."""
    return mixed_home(tmp_path, monkeypatch)


def _json_lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def test_json_carries_the_exact_amounts_of_usage_and_cache(mixed: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "watch", *WATCH, "--json")
    assert code == 0
    lines = _json_lines(out)
    requests = [(line["index"], line["cost_usd"] and line["cost_usd"]["total"]) for line in lines
                if line["type"] in ("request", "break")]
    assert requests == [(0, 0.000612), (1, 0.00005352), (2, 0.000642), (3, None), (4, None)]
    assert {**lines[-1], "cost_usd": lines[-1]["cost_usd"]["total"]} == {
        "type": "summary", "sessions": 1, "requests": 5, "breaks": 2, "cost_usd": 0.00130752,
                         "errors": 0, "unpriced_requests": 2, "cost_complete": False}
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--json", "--by", "request")
    assert code == 0
    usage = json.loads(out)
    assert requests == [(int(row["key"].split("#")[1]), row["cost_usd"] and row["cost_usd"]["total"])
                        for row in usage["rows"]]
    assert (usage["totals"]["cost_usd"]["total"], usage["totals"]["unpriced_requests"]) == (0.00130752, 2)
    # a watch prices every request by bucket: its summary's buckets are usage's, to the nano-dollar
    assert lines[-1]["cost_usd"] == usage["totals"]["cost_usd"] and len(lines[-1]["cost_usd"]) == 5
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--json")
    assert code == 0
    cost = json.loads(out)["cost"]
    assert (cost["cost_usd"]["total"], cost["requests"], cost["unpriced_requests"]) == (0.00130752, 5, 2)


def test_lines_show_amounts_as_usage_does(mixed: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The whole output; each line's cost is the cost cell of ``usage --by request``'s table."""
    code, out, err = invoke(monkeypatch, capsys, "watch", *WATCH)
    assert code == 0
    # every request was sent within that second: UTC with the date, the session's id beside its title,
    # plain numbers, and what a break lost, as `usage` and `breaks --cost` count it (views33)
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(T0 / 1000))
    assert out.splitlines() == [
        f"{when}  s-mixed  #0 t1/s1/a1  deepseek-v4-flash  prompt 2000  cache 0 of 0 reusable (0 expected)  $0.0006  "
        "as_expected",
        f"{when}  s-mixed  #1 t2/s1/a1  deepseek-v4-flash  prompt 2020  cache 1920 of 1920 reusable (1920 expected)  "
        "$0.0001  as_expected",
        # folded at 200 columns between fields, none moved: its cost after the cache reads
        f"{when}  s-mixed  #2 t3/s1/a1  deepseek-v4-flash  prompt 2100  cache 0 of 1920 reusable (0 expected)  $0.0006  "
        "break_explained  BREAK header_change lost 1920 ($0.0006) fields system",
        "  evidence seqs 33",
        f"{when}  s-mixed  A title  #3 title  deepseek-v4-flash  prompt ?  cache ? of 0 reusable (0 expected)  $?  "
        "usage_unknown",
        f"{when}  s-mixed  A title  #4 t4/s1/a1  local-coder  prompt 2148  cache 2048 of 2048 reusable (0 expected)  $?  "
        "break_explained  BREAK header_change lost 0 fields model evidence seqs 49"]
    assert err[-1] == "watched 1 session(s): 5 request(s), 2 break(s), ≥$0.0013 (2 unpriced)"
    shown = [next(field for field in line.split("  ") if field.startswith(("$", "≥$"))) for line in out.splitlines()
             if not line.startswith("  ")]  # a folded line's rest
    code, table, _ = invoke(monkeypatch, capsys, "usage", "--by", "request", "--format", "markdown")
    assert code == 0
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| s-mixed \\#")]
    # a Markdown "$?" is "\\$?" (fix W: no "$" that could close math left bare), shown as "$?"
    assert shown == [row[8].replace("\\$", "$") for row in rows]  # after "reusable" (session 46) == ["$0.0006", "$0.0001", "$0.0006", "$?", "$?"]
    total = next(line.split(" | ") for line in table.splitlines() if line.startswith("| total |"))
    assert err[-1].split(", ")[-1].split(" ")[0] == total[8] == "≥$0.0013"


@pytest.mark.parametrize(("model", "json_cost", "shown"), [
    ("deepseek-v4-flash", 3e-07, "$0.00000030"),  # 1 cache-miss token at $0.30 per million: not 0
    ("local-coder", None, "$?"),  # no price: unknown, never $0
])
def test_a_tiny_or_unknown_amount_is_never_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str], model: str,
                                                json_cost: float | None, shown: str) -> None:
    b = LogBuilder(session_id="s-tiny", created_at=T0, model=model)
    with b.turn("one"), b.step():
        b.assistant("one", usage=_usage(1, 0, output=0))
    _home(tmp_path, monkeypatch, b, "s-tiny")
    code, out, _ = invoke(monkeypatch, capsys, "watch", *WATCH, "--json")
    assert code == 0
    lines = _json_lines(out)
    assert [line["cost_usd"] and line["cost_usd"]["total"] for line in lines if line["type"] == "request"] == [json_cost]
    assert {**lines[-1], "cost_usd": lines[-1]["cost_usd"] and lines[-1]["cost_usd"]["total"]} == {"type": "summary", "sessions": 1, "requests": 1, "breaks": 0, "cost_usd": json_cost,
                         "errors": 0, "unpriced_requests": int(json_cost is None),
                         "cost_complete": json_cost is not None}
    code, out, err = invoke(monkeypatch, capsys, "watch", *WATCH)
    assert code == 0
    assert out.split("  ")[-2:] == [shown, "below_minimum\n"]  # a 1-token prompt caches nothing
    assert err[-1] == f"watched 1 session(s): 1 request(s), 0 break(s), {shown}" + (
        "" if json_cost else " (1 unpriced)")
    code, table, _ = invoke(monkeypatch, capsys, "usage", "--format", "markdown")
    assert code == 0
    assert [line.split(" | ")[8].replace("\\$", "$") for line in table.splitlines()
            if line.startswith("| total |")] == [shown]  # "\\$?" in Markdown (fix W)


def _request(index: int, cost: float | None) -> WatchRequest:
    return WatchRequest(0, "s.jsonl", "s", None, index, "loop", 1, index, 1, None, None, None, None, None, None,
                        cost, None, None, None, None)


def test_the_summary_sums_exactly_when_a_log_is_read_again() -> None:
    """Three requests of $0.0000001 are $0.0000003 (not 0.0, nor 3.0000000000000004e-07); read again
    from its start with its first request at $0.1 and its second unpriced, each counted once as read
    last, the third (not read again: the log was cut) as shown: $0.1000001, exactly."""
    summary = WatchSummary()
    started = WatchNote(0, "s.jsonl", "started", "", "s")
    for item in (started, _request(0, 1e-7), _request(1, 1e-7), _request(2, 1e-7)):
        summary.add(item)
    assert summary.to_json()["cost_usd"]["total"] == 3e-07 and summary.text().endswith(", $0.00000030")
    for item in (WatchNote(0, "s.jsonl", "replaced", "", "s"), started, _request(0, 0.1), _request(1, None)):
        summary.add(item)
    assert {**summary.to_json(), "cost_usd": summary.to_json()["cost_usd"]["total"]} == {
        "type": "summary", "sessions": 1, "requests": 3, "breaks": 0, "cost_usd": 0.1000001,
                                 "errors": 0, "unpriced_requests": 1, "cost_complete": False}
    assert summary.text() == "watched 1 session(s): 3 request(s), 0 break(s), ≥$0.1000 (1 unpriced)"


@needs_corpus
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_the_summary_of_a_corpus_session_is_cache_and_usage_total(scenario: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A model switch, a fork and its parent, a subagent and its parent: watch's total is exact.
    The wire.jsonl beside the scenario's logs prices the title call the logs hold no usage for, in
    watch as in `usage` and `cache` (issue 13: watch read no capture, and its total was that of
    `usage --no-capture`, the title call unpriced; ``tests/test_watch41.py`` checks that pairing)."""
    monkeypatch.chdir(tmp_path)
    root = str(CORPUS / scenario / "home" / "sessions")
    code, out, _ = invoke(monkeypatch, capsys, "watch", root, *WATCH, "--json")
    assert code == 0
    summary = _json_lines(out)[-1]
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--json", root)
    assert code == 0
    total = json.loads(out)["totals"]
    expected = {"c-change": 0.01109977, "f-fork": 0.001458126, "g-subagent": 0.002186052}[scenario]
    assert (summary["cost_usd"], summary["requests"], summary["unpriced_requests"]) == (
        total["cost_usd"], total["requests"], total["unpriced_requests"])
    assert (summary["cost_usd"]["total"], summary["unpriced_requests"]) == (expected, 0)
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--json", root)
    assert code == 0
    costs = [json.loads(line)["cost"] for line in out.splitlines()]
    assert usd_total((c["cost_usd"] or {}).get("total", 0.0) for c in costs) == summary["cost_usd"]["total"]
    assert sum(c["requests"] for c in costs) == summary["requests"]
    assert sum(c["unpriced_requests"] for c in costs) == summary["unpriced_requests"]
