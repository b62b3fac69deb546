"""``index`` counts that add up, and logs no longer on disk removed from the index (issue 14).

A refused log is among the indexed ones (stored with its error, as ``stats`` counts it), so the
summary line says so instead of a separate "unreadable" count; a stored log under a path given
that is gone from disk is removed, all its rows, and the line says how many. Logs under other
roots, logs left out by a time window and logs still there but unreadable stay.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path

import pytest

from dsh_audit.fleet import fleet_stats, index_logs

from _cli import chat_log, invoke

TABLES = ("sessions", "requests", "costs", "breaks")


def _line(out: str) -> str:
    """The summary line with its wall time as ``T``."""
    return re.sub(r" in \d+\.\d s", " in T s", out.rstrip("\n"))


def _index(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code, out, err = invoke(monkeypatch, capsys, "index", *args)
    assert all(line.startswith("error: ") for line in err)
    return code, _line(out)


def _rows(db: Path) -> dict[str, dict[str, int]]:
    """Per table, the number of rows of each log (by its folder's name)."""
    counts: dict[str, dict[str, int]] = {}
    with closing(sqlite3.connect(db)) as connection:
        for table in TABLES:
            counts[table] = {Path(path).parent.name: n for path, n in
                             connection.execute(f"SELECT path, COUNT(*) FROM {table} GROUP BY path ORDER BY path")}
    return counts


def _sessions(db: Path) -> tuple[int, int, int]:
    totals = fleet_stats(db).totals
    return totals["sessions"], totals["sessions_refused"], totals["requests"]


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    """Two roots of two sessions each: ``a/{one,two}`` and ``b/{three,four}``."""
    for root, names in (("a", ("one", "two")), ("b", ("three", "four"))):
        for name in names:
            chat_log(tmp_path / root / name / "session.jsonl", name)
    return tmp_path / "a", tmp_path / "b"


def test_a_deleted_log_is_removed_and_the_line_says_so(tmp_path: Path, roots: tuple[Path, Path],
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = roots
    db = tmp_path / "i.sqlite"
    assert _index(monkeypatch, capsys, str(a), "--db", str(db)) == \
        (0, f"{db}: indexed 2, skipped 0 unchanged, of 2 log(s) in T s")
    before = _rows(db)
    assert before["sessions"] == {"one": 1, "two": 1} and before["requests"] == before["costs"] == {"one": 1, "two": 1}
    assert _sessions(db) == (2, 0, 2)
    shutil.rmtree(a / "two")
    assert _index(monkeypatch, capsys, str(a), "--db", str(db)) == \
        (0, f"{db}: indexed 0, skipped 1 unchanged, of 1 log(s) in T s; removed 1 log(s) no longer there")
    assert _rows(db) == {table: {name: n for name, n in rows.items() if name != "two"} for table, rows in before.items()}
    assert _sessions(db) == (1, 0, 1)
    assert _index(monkeypatch, capsys, str(a), "--db", str(db)) == \
        (0, f"{db}: indexed 0, skipped 1 unchanged, of 1 log(s) in T s")  # nothing left to remove


def test_logs_under_another_root_are_kept(tmp_path: Path, roots: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    a, b = roots
    db = tmp_path / "i.sqlite"
    assert _index(monkeypatch, capsys, str(a), str(b), "--db", str(db))[1] == \
        f"{db}: indexed 4, skipped 0 unchanged, of 4 log(s) in T s"
    shutil.rmtree(a / "one")
    shutil.rmtree(b / "four")  # gone too, but b is not given below
    assert _index(monkeypatch, capsys, str(a), "--db", str(db))[1] == \
        f"{db}: indexed 0, skipped 1 unchanged, of 1 log(s) in T s; removed 1 log(s) no longer there"
    assert sorted(_rows(db)["sessions"]) == ["four", "three", "two"]
    assert _sessions(db) == (3, 0, 3)
    assert _index(monkeypatch, capsys, str(b), "--db", str(db))[1] == \
        f"{db}: indexed 0, skipped 1 unchanged, of 1 log(s) in T s; removed 1 log(s) no longer there"
    assert sorted(_rows(db)["sessions"]) == ["three", "two"]
    assert _sessions(db) == (2, 0, 2)


def test_a_window_removes_only_what_is_gone(tmp_path: Path, roots: tuple[Path, Path],
                                            monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    a, b = roots
    db = tmp_path / "i.sqlite"
    _index(monkeypatch, capsys, str(a), str(b), "--db", str(db))
    code, out, err = invoke(monkeypatch, capsys, "index", str(a), str(b), "--db", str(db), "--until", "2000-01-01")
    assert (code, _line(out)) == (0, f"{db}: indexed 0, skipped 0 unchanged, of 0 log(s) in T s")  # none removed
    assert len(err) == 1 and err[0].endswith(": 4 of 4 log(s) with no activity in that window (by the logs' own "
                                             "timestamps) left out")
    assert _sessions(db) == (4, 0, 4)
    shutil.rmtree(b / "three")
    code, out, err = invoke(monkeypatch, capsys, "index", str(a), str(b), "--db", str(db), "--until", "2000-01-01")
    assert (code, _line(out)) == \
        (0, f"{db}: indexed 0, skipped 0 unchanged, of 0 log(s) in T s; removed 1 log(s) no longer there")
    assert len(err) == 1 and err[0].endswith(": 3 of 3 log(s) with no activity in that window (by the logs' own "
                                             "timestamps) left out")
    assert sorted(_rows(db)["sessions"]) == ["four", "one", "two"]


def test_an_unreadable_log_is_refused_not_removed(tmp_path: Path, roots: tuple[Path, Path],
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = roots
    db = tmp_path / "i.sqlite"
    _index(monkeypatch, capsys, str(a), "--db", str(db))
    (a / "one" / "session.jsonl").write_text('{"type":"session","version":9}\n')
    assert _index(monkeypatch, capsys, str(a), "--db", str(db)) == \
        (2, f"{db}: indexed 1 (1 refused, stored with their error), skipped 1 unchanged, of 2 log(s) in T s")
    assert _sessions(db) == (2, 1, 1)  # stats says "refused" of the same log
    assert _rows(db)["sessions"] == {"one": 1, "two": 1}


def test_json_keeps_its_keys_and_adds_refused_and_removed(tmp_path: Path, roots: tuple[Path, Path],
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    a, _ = roots
    db = tmp_path / "i.sqlite"
    _index(monkeypatch, capsys, str(a), "--db", str(db))
    gone = str((a / "two" / "session.jsonl").resolve())
    shutil.rmtree(a / "two")
    broken = a / "one" / "session.jsonl"
    broken.write_text('{"type":"session","version":9}\n')
    code, out, err = invoke(monkeypatch, capsys, "index", str(a), "--db", str(db), "--json")
    summary = json.loads(out)
    assert code == 2 and len(err) == 1 and isinstance(summary.pop("seconds"), float)
    assert summary == {"db": str(db), "seen": 1, "indexed": 1, "refused": 1, "rebuilt": 0, "skipped": 0,
                       "failure_details": [{"path": str(broken.resolve()), "error": err[0].removeprefix("error: ")}],
                       "lost": 0, "removed_paths": [gone], "upgraded_from": None, "warnings": [],
                       "refused_unchanged": 0, "replaced_paths": [], "copies": [], "notes": []}


def test_a_root_is_a_folder_or_the_file_itself(tmp_path: Path) -> None:
    """Through the API (the CLI refuses a PATH that is gone): a sibling whose name starts with the
    root's is not under it; a file given as the root is removed once gone."""
    logs = [chat_log(tmp_path / name / "session.jsonl", name) for name in ("a", "ab", "c")]
    db = tmp_path / "i.sqlite"
    assert index_logs(logs, db).indexed == 3
    for log in logs:
        shutil.rmtree(log.parent)
    kept = index_logs([], db, roots=[tmp_path / "a"])
    assert (kept.seen, kept.indexed, kept.removed) == (0, 0, (str(tmp_path.resolve() / "a" / "session.jsonl"),))
    assert sorted(_rows(db)["sessions"]) == ["ab", "c"]
    assert index_logs([], db, roots=[logs[2]]).removed == (str(logs[2].resolve()),)
    assert sorted(_rows(db)["sessions"]) == ["ab"]
    assert index_logs([], db).removed == ()  # no root given: nothing is removed
    assert sorted(_rows(db)["sessions"]) == ["ab"]


def test_removal_waits_for_another_writer(tmp_path: Path, roots: tuple[Path, Path]) -> None:
    """The removal takes the write lock: while another writer holds it, index waits; once that one
    commits, the removal goes through whole and the other's change stays."""
    a, _ = roots
    db = tmp_path / "i.sqlite"
    index_logs(sorted(a.rglob("session.jsonl")), db)
    shutil.rmtree(a / "one")
    held = threading.Event()

    def hold() -> None:
        with closing(sqlite3.connect(db, isolation_level=None)) as other:
            other.execute("BEGIN IMMEDIATE")
            other.execute("UPDATE sessions SET notes = 'held' WHERE path LIKE '%two%'")
            held.set()
            time.sleep(0.5)
            other.execute("COMMIT")

    writer = threading.Thread(target=hold)
    writer.start()
    assert held.wait(5)
    started = time.monotonic()
    summary = index_logs([], db, roots=[a])
    waited = time.monotonic() - started
    writer.join()
    assert summary.removed == (str(tmp_path.resolve() / "a" / "one" / "session.jsonl"),) and waited > 0.3
    assert _rows(db) == {table: {} if table == "breaks" else {"two": 1} for table in TABLES}
    with closing(sqlite3.connect(db)) as connection:
        assert connection.execute("SELECT notes FROM sessions").fetchall() == [("held",)]


def test_a_name_not_utf8_is_found_through_its_stored_escape(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A log in a folder whose name is not UTF-8 is stored under its ``\\udcXX`` escape: left out by
    a window it is still there, not removed; once deleted it is."""
    root = tmp_path / "logs"
    log = chat_log(root / os.fsdecode(b"x\xff") / "session.jsonl", "s")
    db = tmp_path / "i.sqlite"
    assert _index(monkeypatch, capsys, str(root), "--db", str(db))[1] == \
        f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in T s"
    with closing(sqlite3.connect(db)) as connection:
        assert connection.execute("SELECT path FROM sessions").fetchall() == \
            [(str(log.resolve()).replace("\udcff", "\\udcff"),)]
    code, out, _ = invoke(monkeypatch, capsys, "index", str(root), "--db", str(db), "--until", "2000-01-01")
    assert (code, _line(out), _sessions(db)) == (0, f"{db}: indexed 0, skipped 0 unchanged, of 0 log(s) in T s",
                                                 (1, 0, 1))
    chat_log(root / "y" / "session.jsonl", "t")  # the folder must still hold a log to be given
    shutil.rmtree(log.parent)
    assert _index(monkeypatch, capsys, str(root), "--db", str(db))[1] == \
        f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in T s; removed 1 log(s) no longer there"
    assert _rows(db)["sessions"] == {"y": 1}
