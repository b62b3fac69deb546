"""Regressions found by fuzzing every command with mutated corpus logs (issue 15).

Each test builds the smallest log that showed the defect and checks exact exit codes and output.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from dsh_audit.cache import iso_utc
from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded
from dsh_audit.testing import LogBuilder

# 8e15 ms is a valid JavaScript date (year 255,479) and a safe integer, so DSH writes and reads
# it; Python's datetime stops at year 9999.
FAR = 8_000_000_000_000_000


def invoke(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
    code = run_guarded(cli)
    out, err = capsys.readouterr()
    return code, out, err


def far_future_log(tmp_path: Path) -> Path:
    b = LogBuilder(session_id="session-far", created_at=FAR)
    with b.turn("hi"):
        with b.step():
            b.assistant("hello")
    path = tmp_path / "session-far" / "session.jsonl"
    path.parent.mkdir()
    path.write_text("".join(line + "\n" for line in b.lines()), encoding="utf-8")
    return path


def test_iso_utc_outside_the_years_datetime_holds_is_none() -> None:
    assert iso_utc(253402300799.9) == "9999-12-31T23:59:59Z"
    assert iso_utc(253402300800) is None
    assert iso_utc(FAR / 1000) is None
    assert iso_utc(-62135596801) is None
    assert iso_utc(-0.5) == "1969-12-31T23:59:59Z"  # floored, not truncated toward zero


def test_times_past_year_9999_are_unknown_days_not_a_traceback(tmp_path, monkeypatch, capsys):
    log = far_future_log(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "sessions", "--json", str(log))
    assert (code, err) == (0, "")
    row = json.loads(out)
    assert (row["session_id"], row["first_activity_at"], row["last_activity_at"], row["requests"]) == \
        ("session-far", None, None, 1)

    code, out, err = invoke(monkeypatch, capsys, "sessions", "--no-pager", str(log))
    assert (code, err) == (0, "")
    assert "Traceback" not in out and out.count("session-far") == 1

    code, out, err = invoke(monkeypatch, capsys, "usage", "--by", "day", "--json", str(log))
    assert (code, err) == (0, "")
    assert [(r["key"], r["requests"]) for r in json.loads(out)["rows"]] == [("unknown", 1)]

    # DeepSeek's peak window cannot place such a time on its calendar: the standard rate applies (the
    # request is unpriced all the same: its deepseek-official usage logs no cacheReadTokens)
    code, out, err = invoke(monkeypatch, capsys, "usage", "--by", "window", "--json", str(log))
    assert (code, err) == (0, "")
    assert [(r["key"], r["requests"], r["unpriced_requests"]) for r in json.loads(out)["rows"]] == \
        [("standard", 1, 1)]
    assert json.loads(out)["unpriced"] == {
        "cache reads not logged (deepseek-official logs cacheReadTokens only when the API reported them: the "
        "prompt's split into hits and misses is unknown)": 1}


def test_index_stores_a_session_whose_times_are_past_year_9999(tmp_path, monkeypatch, capsys):
    log = far_future_log(tmp_path)
    db = tmp_path / "audit.sqlite"
    code, out, err = invoke(monkeypatch, capsys, "index", "--db", str(db), str(log.parent))
    assert (code, err) == (0, "")
    assert out.startswith(f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in ")


@pytest.mark.parametrize("command", [["show"], ["render"], ["explain"], ["explain", "--json"]])
def test_a_negative_index_beyond_any_size_is_a_usage_error(tmp_path, monkeypatch, capsys, command):
    log = far_future_log(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, *command, str(log), "-99999999999999999999")
    assert (code, out) == (2, "")
    assert err == (f"error: {log}: request -99999999999999999999 does not exist: the log has 1 request(s) "
                   "(hint: valid indexes are 0 to 0, or -1 to -1 from the end; run `dsh-audit requests LOG` "
                   "to see the indexes)\n")


def test_show_writes_a_number_past_the_double_range_as_null_like_show_compact(tmp_path, monkeypatch, capsys):
    b = LogBuilder(session_id="session-inf", max_tokens=65536)
    with b.turn("hi"):
        with b.step():
            b.assistant("hello")
    log = tmp_path / "session.jsonl"
    text = "".join(line + "\n" for line in b.lines())
    assert text.count('"maxTokens":65536') == 1
    log.write_text(text.replace('"maxTokens":65536', '"maxTokens":1e400'), encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "show", str(log), "0")
    assert (code, err) == (0, "")
    assert json.loads(out)["header"]["config"]["maxTokens"] is None  # strict JSON: no Infinity
    assert "Infinity" not in out and '"maxTokens": null' in out
    code, compact, err = invoke(monkeypatch, capsys, "show", "--compact", str(log), "0")
    assert (code, err) == (0, "")
    assert json.loads(compact) == json.loads(out)


def test_index_of_a_folder_whose_name_is_not_utf8_stores_it_once(tmp_path, monkeypatch, capsys):
    b = LogBuilder(session_id="session-bytes")
    with b.turn("hi"):
        with b.step():
            b.assistant("hello")
    folder = os.fsencode(tmp_path / "root") + b"/bad\xff\xfename"
    os.makedirs(folder)
    with open(folder + b"/session.jsonl", "w", encoding="utf-8") as file:
        file.write("".join(line + "\n" for line in b.lines()))
    db = tmp_path / "audit.sqlite"
    for indexed, skipped in ((1, 0), (0, 1)):  # the second run finds the stored row unchanged
        code, out, err = invoke(monkeypatch, capsys, "index", "--db", str(db), str(tmp_path / "root"))
        assert (code, err) == (0, "")
        assert out.startswith(f"{db}: indexed {indexed}, skipped {skipped} unchanged, of 1 log(s) in ")
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT path, session_id FROM sessions").fetchall() == \
            [(f"{tmp_path}/root/bad\\udcff\\udcfename/session.jsonl", "session-bytes")]


def _infinite_max_tokens_log(tmp_path: Path) -> Path:
    b = LogBuilder()
    with b.turn("hi"):
        with b.step():
            b.assistant("hello")
    text = "".join(line + "\n" for line in b.lines())
    assert text.count('"maxTokens":65536') == 1
    log = tmp_path / "session.jsonl"
    log.write_text(text.replace('"maxTokens":65536', '"maxTokens":1e400'), encoding="utf-8")
    return log


def test_report_page_data_holds_null_for_a_number_past_the_double_range(tmp_path, monkeypatch, capsys):
    log = _infinite_max_tokens_log(tmp_path)
    page = tmp_path / "page.html"
    code, out, err = invoke(monkeypatch, capsys, "report", str(log), "-o", str(page))
    assert (code, out, err) == (0, f"wrote {page}: 1 log(s), 1 request(s), check passed: no breaks\n", "")
    html = page.read_text(encoding="utf-8")
    data = html.split('<script type="application/json" id="dsh-data">', 1)[1].split("</script>", 1)[0]
    assert "Infinity" not in data  # JSON.parse refuses Infinity: the whole page would show nothing
    (header,) = json.loads(data)["sessions"][0]["headers"]
    assert header["config"]["maxTokens"] is None


@pytest.mark.parametrize("command", ["check", "report"])
def test_a_symlink_loop_is_one_line_not_a_traceback(tmp_path, monkeypatch, capsys, command):
    folder = tmp_path / "s2"
    folder.mkdir()
    (folder / "session.jsonl").symlink_to("../s2/session.jsonl")
    extra = ["-o", str(tmp_path / "page.html")] if command == "report" else []
    code, out, err = invoke(monkeypatch, capsys, command, str(folder / "session.jsonl"), *extra)
    lines = err.strip().splitlines()
    assert code == 2 and "Traceback" not in err, err  # check: a DSH801 finding too
    assert len(lines) == 1 and "symlink loop" in lines[0] and str(folder / "session.jsonl") in lines[0], err
