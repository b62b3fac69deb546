"""DeepSeek's 2027 holidays, the caveats of a year the price table does not cover, and one price
table a run (issue 13: prices as data; issue 11: each input read once).

The packaged DeepSeek window lists 2027's statutory holidays (State Council Order No. 795): a
request in the peak hours of one of them is off-peak. A request of 2028, a year the list does not
cover, is priced by the weekday rule alone, and every command that prints costs says so once per
run, as a ``note:`` on stderr, whatever ``--jobs`` (a worker's caveats come back with its result),
leaving the JSON on stdout as it was. Each command loads its price table once.
"""

from __future__ import annotations

import functools
import importlib
import json
import sys
from datetime import datetime
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from dsh_audit.cache import load_prices, session_ledger
from dsh_audit.testing import LogBuilder

ROOT = Path(__file__).resolve().parent.parent
#: 2027's statutory holidays (New Year's Day; lunar New Year's Eve and lunar 1/1-1/3; Qingming;
#: May 1-2; lunar 5/5; lunar 8/15; October 1-3), as lunar_python 1.4.8, lunardate 0.3.0 and sxtwl
#: 2.0.7 all date them.
HOLIDAYS_2027 = ["2027-01-01", "2027-02-05", "2027-02-06", "2027-02-07", "2027-02-08", "2027-04-05", "2027-05-01",
                 "2027-05-02", "2027-06-09", "2027-09-15", "2027-10-01", "2027-10-02", "2027-10-03"]
NOTE_2028 = ("note: the deepseek price table lists no holidays of 2028 (its holiday list covers 2026, 2027): requests "
             "of 2028 are priced by the weekday rule alone, a public holiday at the peak rate; give the holidays of "
             '2028 with --prices FILE (the "holidays" of the deepseek window)')


def _at(text: str) -> float:
    """Epoch seconds of an ISO date-time in UTC."""
    return datetime.fromisoformat(text + "+00:00").timestamp()


def _log(path: Path, session_id: str, when: str, *, model: str = "deepseek-v4-pro") -> Path:
    """A one-request session sent at ``when`` (UTC): a million cache-miss tokens, no output."""
    b = LogBuilder(session_id=session_id, created_at=int(_at(when) * 1000), model=model)
    with b.turn("one"), b.step():
        b.assistant("a", usage={"inputTokens": 1_000_000, "outputTokens": 0, "cacheReadTokens": 0})
    return b.write_jsonl(path, packed=False)


def test_the_packaged_window_lists_2027s_statutory_holidays() -> None:
    document = json.loads((resources.files("dsh_audit.cache") / "rules" / "prices.json").read_text("utf-8"))
    window = document["providers"]["deepseek"]["windows"][-1]
    assert [day for day in window["holidays"] if day.startswith("2027")] == HOLIDAYS_2027
    book = load_prices(search_from="/")
    # 11:00 in Beijing: off-peak on each holiday, peak on the weekdays around them
    assert {day: book.window("deepseek", _at(f"{day}T03:00:00")) for day in HOLIDAYS_2027} == dict.fromkeys(
        HOLIDAYS_2027, "off-peak")
    assert [book.window("deepseek", _at(f"{day}T03:00:00")) for day in (
        "2026-12-31", "2027-01-04", "2027-02-04", "2027-02-09", "2027-04-06", "2027-06-08", "2027-09-16",
        "2027-10-04")] == ["peak"] * 8


def test_new_years_day_2027_at_a_peak_hour_is_off_peak_and_said_nothing_of(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """2027-01-01 at 11:00 in Beijing (a Friday): off-peak, $0.66 per million cache-miss tokens of
    deepseek-v4-pro (it was priced at the peak rate, $1.32, while the table listed 2026 alone)."""
    log = _log(tmp_path / "s" / "session.jsonl", "s-new-year", "2027-01-01T03:00:00")
    monkeypatch.chdir(tmp_path)
    entry = session_ledger(log, prices=load_prices(search_from=tmp_path)).entries[0]
    assert (entry.window, entry.cost.total if entry.cost else None, entry.off_peak_cost) == ("off-peak", 0.66, 0.66)
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--by", "request", "--json")
    row = json.loads(out)["rows"][0]
    assert (code, err) == (0, [])
    assert (row["window"], row["cost_usd"], row["off_peak_cost_usd"], row["no_cache_cost_usd"]) == (
        "off-peak", {"cache_miss": 0.66, "cache_read": 0.0, "cache_write": 0.0, "output": 0.0, "total": 0.66},
        0.66, 0.66)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two sessions of 2028 in two project folders (two groups: a worker each with --jobs 2), each
    a request at 11:00 in Beijing on Monday 2028-01-03, peak by the weekday rule."""
    _log(tmp_path / "logs" / "p" / "a" / "session.jsonl", "s-2028-a", "2028-01-03T03:00:00")
    _log(tmp_path / "logs" / "q" / "b" / "session.jsonl", "s-2028-b", "2028-01-03T03:10:00", model="deepseek-v4-flash")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path / "logs"


@pytest.mark.parametrize("command", [
    ["usage"], ["usage", "--json"], ["cache"], ["cache", "--json"], ["sessions"], ["breaks", "--cost"],
    ["check", "--markdown", "summary.md"], ["check", "--json-report", "-"],
    # in worker processes (a group each): their caveats come back with their results
    ["usage", "--json", "--jobs", "2"], ["cache", "--jobs", "2"], ["check", "--markdown", "summary.md", "--jobs", "2"]])
def test_a_2028_session_says_the_caveat_once_on_stderr(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, command[0], str(home), *command[1:])
    # once: beside a report on stdout, check's table and verdict follow it on stderr (session 40)
    people = ["dsh-audit check"] if command[-1] == "-" else []
    assert (code, err[:2] if people else err) == (0, [NOTE_2028, *people])
    assert [line for line in err if "holidays" in line] == [NOTE_2028]
    if command[:2] == ["check", "--json-report"]:  # the JSON report's place for it: its caveats
        assert json.loads(out)["caveats"] == [NOTE_2028.removeprefix("note: ")]
    else:
        assert "holidays" not in out  # not in a table, nor in the JSON on stdout
    if command[:2] == ["usage", "--json"]:
        assert sorted(json.loads(out)) == ["by", "logs_failed", "prices", "rows", "sessions", "sort", "totals",
                                           "unpriced"]
    if command[0] == "check" and command[1] == "--markdown":
        lines = Path("summary.md").read_text("utf-8").splitlines()
        note = [k for k, line in enumerate(lines) if line.startswith("Note:")]
        assert [lines[k] for k in note] == [
            "Note: the deepseek price table lists no holidays of 2028 (its holiday list covers 2026, 2027): "
            "requests of 2028 are priced by the weekday rule alone, a public holiday at the peak rate; give the "
            'holidays of 2028 with --prices FILE (the "holidays" of the deepseek window)']
        # under the sessions' table and its totals row
        assert lines[note[0] - 3].startswith("| ✅ pass |") and lines[note[0] - 2].startswith("| **total** |")
        assert lines[note[0] - 1] == ""


def test_explain_and_report_say_it_too(home: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "explain", str(home / "p" / "a" / "session.jsonl"), "0")
    assert (code, err) == (0, [NOTE_2028])
    code, out, err = invoke(monkeypatch, capsys, "report", str(home), "-o", "page.html")
    assert (code, out, err) == (0, "wrote page.html: 2 log(s), 2 request(s), check passed: no breaks\n", [NOTE_2028])
    page = Path("page.html").read_text("utf-8")
    line = f'<p class="muted caveat">{NOTE_2028}</p>'
    assert page.count(line) == 1 and page.index(line) < page.index('<section id="totals"')


def test_watch_says_it_once_when_first_met(home: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """After the first request shown that met it: a note item of the --json stream (its place for
    notes) and a note on stderr; in text, the note alone."""
    args = ("--since", "2028-01-01", "--exit-after", "0.3", "--polling")
    code, out, err = invoke(monkeypatch, capsys, "watch", str(home / "p"), "--json", *args)
    items = [json.loads(line) for line in out.splitlines()]
    assert (code, err) == (0, [NOTE_2028])
    assert [(x["type"], x.get("message")) for x in items if x["type"] in ("request", "note")] == [
        ("request", None), ("note", NOTE_2028.removeprefix("note: "))]
    code, out, err = invoke(monkeypatch, capsys, "watch", str(home / "p"), *args)
    assert (code, err.count(NOTE_2028), len(out.splitlines())) == (0, 1, 1)


def test_a_covered_year_says_nothing(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """With 2028's holidays given (--prices), the same sessions are priced the same (a Monday is no
    holiday) and nothing is said; the JSON is the same but for the price file it names."""
    document = json.loads((resources.files("dsh_audit.cache") / "rules" / "prices.json").read_text("utf-8"))
    windows = document["providers"]["deepseek"]["windows"]
    windows[-1]["holidays"].append("2028-01-01")
    (tmp_path / "p.json").write_text(json.dumps({"providers": {"deepseek": {"windows": windows}}}), "utf-8")
    code, covered, err = invoke(monkeypatch, capsys, "usage", str(home), "--json", "--prices", "p.json")
    assert (code, err) == (0, [])
    code, uncovered, err = invoke(monkeypatch, capsys, "usage", str(home), "--json")
    assert (code, err) == (0, [NOTE_2028])
    first, second = json.loads(covered), json.loads(uncovered)
    assert first["prices"]["price_files"] == ["packaged", "p.json"] and second["prices"]["price_files"] == ["packaged"]
    assert {**first, "prices": None} == {**second, "prices": None}
    assert first["totals"]["cost_usd"]["total"] == 1.62  # at the peak rate: $1.32 (deepseek-v4-pro) + $0.30 (-flash)


def _count_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every call of ``load_prices`` from now on, wherever a module bound it (``from ..cache
    import load_prices``), as the command name that made it: a list that grows."""
    from dsh_audit.cache import _prices

    for name in ("dsh_audit.cli._check", "dsh_audit.cli._usage", "dsh_audit.cli._cache", "dsh_audit.gate._run",
                 "dsh_audit.report._html", "dsh_audit.cache._session", "dsh_audit.cache._account",
                 "dsh_audit.cache._ledger"):
        importlib.import_module(name)
    original = _prices.load_prices
    calls: list[str] = []

    @functools.wraps(original)
    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(sys.argv[1])
        return original(*args, **kwargs)

    for module in list(sys.modules.values()):
        if module.__name__.startswith("dsh_audit") and getattr(module, "__dict__", {}).get("load_prices") is original:
            monkeypatch.setattr(module, "load_prices", counting)
    return calls


@pytest.mark.parametrize("command", [
    ["check", "--markdown", "summary.md", "--json-report", "report.json", "--junit", "junit.xml"],
    ["report", "-o", "page.html"], ["usage"], ["usage", "--by", "request", "--json"], ["cache"]])
def test_each_command_loads_its_price_table_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    """On the sample logs (several groups, each a task, in this process): the price table is read
    once, by the command, and handed to every task (``check`` read it 4 times, ``report`` 5)."""
    monkeypatch.chdir(tmp_path)
    calls = _count_loads(monkeypatch)
    code, _, _ = invoke(monkeypatch, capsys, command[0], str(ROOT / "sample_logs"), *command[1:])
    assert (code, calls) == (0, [command[0]])


def test_the_counter_sees_a_load_made_anywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The counter counts a library function's own load (``session_ledger`` with no table)."""
    calls = _count_loads(monkeypatch)
    monkeypatch.setattr(sys, "argv", ["dsh-audit", "library"])
    session_ledger(_log(tmp_path / "session.jsonl", "s", "2027-01-04T03:00:00"))
    assert calls == ["library"]
