"""``index`` stores a session once across runs, reports a refused log on every run, and tells
what to do with an index of a newer schema (issues 13 and 14, found on a user tour).

A session indexed from one file and, in a later run, from another file that holds it (DSH's
multi-frame ``session.jsonl.zstd`` beside a plain ``session.jsonl``, DSH's log after its export,
the same home moved) is stored once, from the file the other commands read, so that ``stats``
gives the totals ``usage`` gives; a file that is gone is removed whatever paths are given. Two
sessions that share an id but not their lines, and a fork's parent and child, are never merged.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.fleet import SCHEMA_VERSION
from dsh_audit.testing import LogBuilder

from _cli import chat_log, invoke

LIVE = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "live"
needs_corpus = pytest.mark.skipif(not LIVE.is_dir(), reason="../shared/corpus is absent")

CHAT = "session-2b096b61-0a34-4da6-abec-4e87161c2c0b"  # live/a-chat: 3 requests
#: ``stats`` of a-chat stored once: (sessions, refused, requests, cost in USD), as `usage` prices it.
CHAT_ONCE = (1, 0, 3, 0.001261008)


def _index(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
           *args: str) -> tuple[int, str, list[str]]:
    """``index ARGS``: exit code, the summary line with its wall time as ``T``, stderr lines."""
    code, out, err = invoke(monkeypatch, capsys, "index", *args)
    return code, re.sub(r" in \d+\.\d s", " in T s", out.rstrip("\n")), err


def _stats(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
           db: Path) -> tuple[int, int, int, float | None]:
    code, out, err = invoke(monkeypatch, capsys, "stats", "--db", str(db), "--json")
    assert (code, err) == (0, [])
    stats = json.loads(out)
    totals = stats["totals"]
    # a log built here logs deepseek-official usage without cacheReadTokens: unpriced, its cost null
    # (docs/cache-accounting.md, "Unpriced requests")
    return (totals["sessions"], totals["sessions_refused"], totals["requests"],
            (stats["cost"]["cost_usd"] or {}).get("total"))


def _usage(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, int, float]:
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(path), "--json")
    assert code == 0
    usage = json.loads(out)
    return usage["sessions"], usage["totals"]["requests"], usage["totals"]["cost_usd"]["total"]


def _paths(db: Path) -> list[str]:
    """The logs stored, each with the number of its rows in every table (a session stored once
    has no rows left under another path)."""
    with closing(sqlite3.connect(db)) as connection:
        stored = [row[0] for row in connection.execute("SELECT path FROM sessions ORDER BY path")]
        for table in ("requests", "costs", "breaks"):
            assert {row[0] for row in connection.execute(f"SELECT DISTINCT path FROM {table}")} <= set(stored)
    return stored


def _note(kept: Path, other: Path, sid: str = CHAT) -> str:
    return f"note: one session ({sid}) in two files: {kept} replaces {other} in the index, the file the other " \
           "commands read"


@needs_corpus
def test_a_compressed_copy_added_beside_a_plain_log_replaces_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Repro A: before, stats said 2 sessions, 6 requests, $0.002522016 while usage said 1, 3, $0.001261008."""
    folder = tmp_path / "h9" / "sessions" / "--p--" / CHAT
    folder.mkdir(parents=True)
    shutil.copy(LIVE / "a-chat" / "session-logs" / f"{CHAT}.jsonl", folder / "session.jsonl")
    root, db = tmp_path / "h9" / "sessions", tmp_path / "e3.sqlite"
    assert _index(monkeypatch, capsys, str(root), "--db", str(db)) == \
        (0, f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in T s", [])
    assert _stats(monkeypatch, capsys, db) == CHAT_ONCE
    shutil.copy(next((LIVE / "a-chat" / "home" / "sessions").glob(f"*/{CHAT}/session.jsonl.zstd")), folder)
    plain, packed = (folder / "session.jsonl").resolve(), (folder / "session.jsonl.zstd").resolve()
    assert _index(monkeypatch, capsys, str(root), "--db", str(db)) == \
        (0, f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in T s; replaced 1 log(s) by another file of "
            "their session",
         [f"note: {folder}: read session.jsonl.zstd (generation v0), the one DSH would read; also present: "
          "session.jsonl", _note(packed, plain)])
    assert _stats(monkeypatch, capsys, db) == CHAT_ONCE
    assert _usage(monkeypatch, capsys, root) == (1, 3, 0.001261008)
    assert _paths(db) == [str(packed)]
    code, line, _ = _index(monkeypatch, capsys, str(root), "--db", str(db))  # warm: nothing to say
    assert (code, line) == (0, f"{db}: indexed 0, skipped 1 unchanged, of 1 log(s) in T s")
    assert _stats(monkeypatch, capsys, db) == CHAT_ONCE
    # the plain file given alone: the index keeps the file DSH reads, the plain one is not stored
    code, line, err = _index(monkeypatch, capsys, str(folder / "session.jsonl"), "--db", str(db), "--json")
    summary = json.loads(line)
    assert (code, summary["indexed"], summary["skipped"], summary["copies"], summary["replaced_paths"]) == \
        (0, 0, 0, [str(plain)], [])
    assert err == [f"note: {n}" for n in summary["notes"]]
    assert summary["notes"] == [f"one session ({CHAT}) in two files: the index keeps {packed}, the file the "
                                f"other commands read; {plain} not stored"]
    assert _stats(monkeypatch, capsys, db) == CHAT_ONCE


@needs_corpus
def test_an_export_then_the_dsh_log_is_one_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """An export indexed in one run, DSH's folder in a later one: before, 2 sessions and 6 requests."""
    exports = tmp_path / "ex" / "session-logs"
    exports.mkdir(parents=True)
    export = Path(shutil.copy(LIVE / "a-chat" / "session-logs" / f"{CHAT}.jsonl", exports)).resolve()
    home = tmp_path / "home"
    shutil.copytree(LIVE / "a-chat" / "home", home)
    log = next(home.rglob("session.jsonl.zstd")).resolve()
    db = tmp_path / "x.sqlite"
    assert _index(monkeypatch, capsys, str(exports), "--db", str(db))[0] == 0
    assert _index(monkeypatch, capsys, str(home), "--db", str(db)) == \
        (0, f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in T s; replaced 1 log(s) by another file of "
            "their session", [_note(log, export)])
    assert _stats(monkeypatch, capsys, db) == CHAT_ONCE
    assert _paths(db) == [str(log)]
    code, line, err = _index(monkeypatch, capsys, str(exports), "--db", str(db))  # the export again: not stored
    assert (code, line) == (0, f"{db}: indexed 0, skipped 0 unchanged, 1 not stored (a session indexed from "
                               "another file), of 1 log(s) in T s")
    assert err == [f"note: one session ({CHAT}) in two files: the index keeps {log}, the file the other commands "
                   f"read; {export} not stored"]
    assert _stats(monkeypatch, capsys, db) == CHAT_ONCE
    assert _paths(db) == [str(log)]


@needs_corpus
def test_a_moved_home_is_one_session_and_the_old_path_needs_no_naming(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Repro B: before, stats said 2 sessions after the move, and `index mv1 mv2` failed on mv1."""
    shutil.copytree(LIVE / "a-chat" / "home", tmp_path / "mv1")
    db = tmp_path / "m.sqlite"
    assert _index(monkeypatch, capsys, str(tmp_path / "mv1"), "--db", str(db))[:2] == \
        (0, f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in T s")
    (tmp_path / "mv1").rename(tmp_path / "mv2")
    moved = next((tmp_path / "mv2").rglob("session.jsonl.zstd")).relative_to(tmp_path / "mv2")
    old = tmp_path.resolve() / "mv1" / moved  # as stored: gone
    code, line, err = _index(monkeypatch, capsys, str(tmp_path / "mv2"), "--db", str(db))
    assert (code, line) == (0, f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in T s; replaced 1 log(s) by "
                               "another file of their session")
    assert len(err) == 1 and err[0].endswith(f"replaces {old} in the index, which is no longer there")
    assert _stats(monkeypatch, capsys, db) == CHAT_ONCE
    assert _paths(db) == [str(next((tmp_path / "mv2").rglob("session.jsonl.zstd")).resolve())]


@needs_corpus
def test_a_fork_parent_and_child_stay_two_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Exports first, then DSH's home: each of the two sessions is replaced by its own DSH log; the
    child, which holds its parent's events under its own id, never replaces its parent."""
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the log alone, as pinned (a capture found prices: test_found38)
    scenario = LIVE / "f-fork"
    db = tmp_path / "f.sqlite"
    assert _index(monkeypatch, capsys, str(scenario / "session-logs"), "--db", str(db))[:2] == \
        (0, f"{db}: indexed 2, skipped 0 unchanged, of 2 log(s) in T s")
    once = (2, 0, 6, 0.001434726)
    assert _stats(monkeypatch, capsys, db) == once
    code, line, err = _index(monkeypatch, capsys, str(scenario / "home"), "--db", str(db))
    assert (code, line, len(err)) == (0, f"{db}: indexed 2, skipped 0 unchanged, of 2 log(s) in T s; replaced 2 "
                                         "log(s) by another file of their session", 2)
    assert _stats(monkeypatch, capsys, db) == once
    assert _usage(monkeypatch, capsys, scenario) == (2, 6, 0.001434726)
    assert _paths(db) == sorted(str(p.resolve()) for p in (scenario / "home").rglob("session.jsonl.zstd"))


def _builder(session_id: str, prompt: str) -> LogBuilder:
    b = LogBuilder(session_id=session_id)
    with b.turn(prompt):
        with b.step():
            b.assistant("Hello")
    return b


def _write(path: Path, lines: list[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path.resolve()


def test_two_sessions_sharing_an_id_are_never_merged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Two logs with one id whose lines differ (neither holds the other) are two sessions: both stay."""
    first = _write(tmp_path / "r1" / "sessions" / "--p--" / "s" / "session.jsonl", _builder("s", "Hi").lines())
    second = _write(tmp_path / "r2" / "sessions" / "--p--" / "s" / "session.jsonl", _builder("s", "Bye").lines())
    db = tmp_path / "i.sqlite"
    assert _index(monkeypatch, capsys, str(tmp_path / "r1"), "--db", str(db))[:2] == \
        (0, f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in T s")
    assert _index(monkeypatch, capsys, str(tmp_path / "r2"), "--db", str(db)) == \
        (0, f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in T s", [])
    assert _paths(db) == [str(first), str(second)]
    assert _stats(monkeypatch, capsys, db)[:3] == (2, 0, 2)


def test_an_earlier_copy_never_replaces_the_longer_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """A copy taken earlier (the log's first lines only) indexed after the log: the log, which holds
    its lines and more, stays; indexed before it, the copy is replaced by it."""
    b = _builder("s", "Hi")
    lines = b.lines(packed=False)
    with b.turn("Again"):
        with b.step():
            b.assistant("Still here")
    longer = b.lines(packed=False)
    assert longer[:len(lines)] == lines
    log = _write(tmp_path / "home" / "sessions" / "--p--" / "s" / "session.jsonl", longer)
    copy = _write(tmp_path / "copy" / "sessions" / "--p--" / "s" / "session.jsonl", lines)
    db = tmp_path / "i.sqlite"
    assert _index(monkeypatch, capsys, str(tmp_path / "home"), "--db", str(db))[0] == 0
    assert _index(monkeypatch, capsys, str(tmp_path / "copy"), "--db", str(db)) == \
        (0, f"{db}: indexed 0, skipped 0 unchanged, 1 not stored (a session indexed from another file), of 1 "
            "log(s) in T s", [f"note: one session (s) in two files: the index keeps {log}, the file the other "
                              f"commands read; {copy} not stored"])
    assert _paths(db) == [str(log)] and _stats(monkeypatch, capsys, db)[:3] == (1, 0, 2)
    other = tmp_path / "j.sqlite"
    assert _index(monkeypatch, capsys, str(tmp_path / "copy"), "--db", str(other))[0] == 0
    assert _index(monkeypatch, capsys, str(tmp_path / "home"), "--db", str(other)) == \
        (0, f"{other}: indexed 1, skipped 0 unchanged, of 1 log(s) in T s; replaced 1 log(s) by another file of "
            "their session", [_note(log, copy, "s")])
    assert _paths(other) == [str(log)] and _stats(monkeypatch, capsys, other)[:3] == (1, 0, 2)


def test_a_refused_log_is_reported_on_every_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Before, the warm run exited 0 with nothing on stderr while stats still counted the log refused."""
    chat_log(tmp_path / "logs" / "good" / "session.jsonl", "good")
    broken = tmp_path / "logs" / "broken" / "session.jsonl"
    broken.parent.mkdir()
    broken.write_text('{"type":"session","version":9}\n')
    db = tmp_path / "i.sqlite"
    code, line, err = _index(monkeypatch, capsys, str(tmp_path / "logs"), "--db", str(db))
    assert (code, line) == (2, f"{db}: indexed 2 (1 refused, stored with their error), skipped 0 unchanged, "
                               "of 2 log(s) in T s")
    assert len(err) == 1 and err[0].startswith(f"error: {broken.resolve()}:1: ") and "v9" in err[0]
    for _ in range(2):  # warm: the stored reason is said again, the file not read
        assert _index(monkeypatch, capsys, str(tmp_path / "logs"), "--db", str(db)) == \
            (2, f"{db}: indexed 0, skipped 2 unchanged (1 refused, reported again), of 2 log(s) in T s", err)
    code, out, again = invoke(monkeypatch, capsys, "index", str(tmp_path / "logs"), "--db", str(db), "--json")
    summary: dict[str, Any] = json.loads(out)
    assert (code, again, summary["refused"], summary["refused_unchanged"], summary["failure_details"]) == \
        (2, err, 0, 1, [{"path": str(broken.resolve()), "error": err[0].removeprefix("error: ")}])
    assert _stats(monkeypatch, capsys, db)[:3] == (2, 1, 1)
    # a run that does not cover it says nothing of it
    assert _index(monkeypatch, capsys, str(tmp_path / "logs" / "good"), "--db", str(db)) == \
        (0, f"{db}: indexed 0, skipped 1 unchanged, of 1 log(s) in T s", [])


def test_a_newer_index_says_upgrade_dsh_audit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    chat_log(tmp_path / "logs" / "a" / "session.jsonl", "a")
    db = tmp_path / "i.sqlite"
    assert _index(monkeypatch, capsys, str(tmp_path / "logs"), "--db", str(db))[0] == 0
    with closing(sqlite3.connect(db)) as connection, connection:
        connection.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    said = [f"error: {db}: index schema version {SCHEMA_VERSION + 1}, this dsh-audit reads {SCHEMA_VERSION} (hint: "
            "it was written by a newer dsh-audit: upgrade dsh-audit (pip install -U dsh-audit) to read it)"]
    assert invoke(monkeypatch, capsys, "stats", "--db", str(db)) == (2, "", said)
    assert invoke(monkeypatch, capsys, "index", str(tmp_path / "logs"), "--db", str(db)) == (2, "", said)
    with closing(sqlite3.connect(db)) as connection, connection:
        connection.execute("UPDATE meta SET value = 'x' WHERE key = 'schema_version'")
    assert invoke(monkeypatch, capsys, "stats", "--db", str(db))[2] == \
        [f"error: {db}: index schema version x, this dsh-audit reads {SCHEMA_VERSION} (hint: give another --db file "
         "(keep this one: it may hold data), and build it with `dsh-audit index PATH --db FILE`)"]


def test_a_stored_log_that_becomes_a_copy_of_the_kept_file_leaves_the_index(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """An export first held other lines (two sessions under one id, both stored); rewritten as a
    copy of DSH's log, it is not stored, and its earlier rows go: the session is counted once."""
    home = tmp_path / "home" / "sessions" / "--p--" / "session-ident"
    dsh_log = chat_log(home / "session.jsonl", "ident")
    export = tmp_path / "exp" / "session-ident.jsonl"
    export.parent.mkdir(parents=True)
    export.write_text(dsh_log.read_text("utf-8").replace("Hello", "Hullo"), encoding="utf-8")
    db = tmp_path / "i.sqlite"
    assert _index(monkeypatch, capsys, str(tmp_path / "home"), "--db", str(db))[0] == 0
    assert _index(monkeypatch, capsys, str(tmp_path / "exp"), "--db", str(db))[0] == 0
    assert _stats(monkeypatch, capsys, db)[0] == 2  # different lines: two sessions
    shutil.copyfile(dsh_log, export)
    code, line, _ = _index(monkeypatch, capsys, str(tmp_path / "exp"), "--db", str(db))
    assert (code, line) == (0, f"{db}: indexed 0, skipped 0 unchanged, 1 not stored (a session indexed from "
                                "another file), of 1 log(s) in T s")
    assert _stats(monkeypatch, capsys, db)[0] == 1
    assert _paths(db) == [str(dsh_log.resolve())]
