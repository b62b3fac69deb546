"""Session 38, fuzz round 20: one session present as any number of files is one session everywhere.

Seven identical copies of one session under ``$DSH_HOME/sessions`` (session folders of other
names) were listed seven times by ``sessions`` ("each listed"), while ``show latest 0`` refused
them as "too many to compare (more than 4)". Now discovery (every command given no path or a
folder), ``sessions`` and a session id or ``latest`` read one file of them, with one note naming
the copies; files of one session that differ are listed each (``sessions``) and refused by an id
(exit 2), naming them. Comparing reads each file at most twice, however many there are.

And an index whose schema-version row was deleted is refused, not read as the current version.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import zstandard

from dsh_audit.log import _copies as copies
from dsh_audit.log import _prints
from dsh_audit.log import discover, read_once

from _cli import invoke

ROOT = Path(__file__).resolve().parent.parent
CHAT = ROOT / "sample_logs" / "chat" / "session.jsonl"
SID = "session-sample-chat"


def _zstd(data: bytes) -> bytes:
    """``data`` as DSH compresses a log: the header alone in the first frame."""
    lines = data.splitlines(keepends=True)
    frames = zstandard.ZstdCompressor()
    return frames.compress(lines[0]) + frames.compress(b"".join(lines[1:]))


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, bytes]) -> Path:
    """A DSH home whose project folder holds ``files`` (``<folder>/session.jsonl[.zstd]``)."""
    project = tmp_path / "sessions" / "p"
    for name, data in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_bytes(data)
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "200")
    return project


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, list[str]]:
    return invoke(monkeypatch, capsys, *args)


SEVEN = {f"c{n}/session.jsonl": CHAT.read_bytes() for n in range(1, 8)}
MIXED = {f"c{n}/session.jsonl" + (".zstd" if n % 2 else ""): _zstd(CHAT.read_bytes()) if n % 2 else CHAT.read_bytes()
         for n in range(1, 7)}


TABLE = """\
1 session(s), newest first
┏━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━┓
┃ when (UTC)       ┃ title       ┃ project                 ┃ requests ┃ tokens ┃ hit ratio ┃ breaks ┃     cost ┃ first (UTC)      ┃ format ┃ id                  ┃
┡━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━┩
│ 2027-01-15 08:00 │ Who are you │ /home/dev/projects/demo │        3 │    510 │     26.9% │      0 │ ≥$0.0001 │ 2027-01-15 08:00 │ v0     │ session-sample-chat │
│ total            │             │                         │        3 │    510 │     26.9% │      0 │ ≥$0.0001 │                  │        │                     │
└──────────────────┴─────────────┴─────────────────────────┴──────────┴────────┴───────────┴────────┴──────────┴──────────────────┴────────┴─────────────────────┘
"""  # tokens, first (UTC), format and the totals row: issue 14 B1


@pytest.mark.parametrize(("files", "read", "second"), [(SEVEN, "c1/session.jsonl", "c2/session.jsonl"),
                                                       (MIXED, "c1/session.jsonl.zstd", "c2/session.jsonl")],
                         ids=["7-plain", "3-plain-3-zstd"])
def test_identical_copies_are_one_session_in_every_view(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str], files: dict[str, bytes],
                                                        read: str, second: str) -> None:
    project = _home(tmp_path, monkeypatch, files)
    count = len(files)
    one_note = (f"note: one session in {count} files under {project}/: read {read}, not "
                + ", ".join(name for name in files if name != read) + " (the same lines)")
    assert second in one_note
    listing_note = one_note  # every command's words, since fuzz round 23 (it said "1 session(s) found in 7 files")
    assert _run(monkeypatch, capsys, "sessions") == (0, TABLE, [listing_note])
    direct = {argv[0]: _run(monkeypatch, capsys, *argv) for argv in (["show", str(project / read), "0"],
                                                                     ["requests", str(project / read)],
                                                                     ["breaks", str(project / read)])}
    assert direct["breaks"] == (0, f"{project / read}  session {SID}\nno prefix-cache breaks\n", [])
    assert _run(monkeypatch, capsys, "show", "latest", "0") == (0, direct["show"][1], [one_note])
    assert _run(monkeypatch, capsys, "show", "sample-ch", "0") == (0, direct["show"][1], [one_note])
    assert _run(monkeypatch, capsys, "requests") == (0, direct["requests"][1], [listing_note])
    assert _run(monkeypatch, capsys, "breaks", "latest") == (0, direct["breaks"][1], [one_note])


def test_copies_that_differ_are_listed_each_and_refused_by_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Five copies, a partial one (its first four lines) and one that differs: ``sessions`` lists
    the file of the copies and the one that differs, each with its path; ``latest`` refuses both,
    naming them. The partial copy (a size of its own, in a folder of a name DSH does not make: its
    header is opened by discovery, session 39) is left out by discovery, so by ``sessions`` and
    every listing, and by ``latest`` alike, for the file that holds its lines and more."""
    lines = CHAT.read_bytes().splitlines(keepends=True)
    # its third event other (a seq gap would be a torn tail: the first events of the others, review 41)
    other = b"".join(lines[:3]) + b'{"type":"session/title","seq":2,"time":1800000000009,"data":{"title":"x"}}\n'
    project = _home(tmp_path, monkeypatch, {**{f"same{n}/session.jsonl": CHAT.read_bytes() for n in range(5)},
                                            "early/session.jsonl": b"".join(lines[:4]), "other/session.jsonl": other})
    code, out, err = _run(monkeypatch, capsys, "sessions", "--format", "csv")
    assert (code, out.splitlines()[1:]) == (0, [
        f'"2 session(s), newest first",2027-01-15 08:00,Who are you,/home/dev/projects/demo,3,510,0.2694736842105263,0,'
        f"0.000146868,1,2027-01-15 08:00,v0,{SID} ({project}/same0/session.jsonl)",
        f'"2 session(s), newest first",2027-01-15 08:00,x,/home/dev/projects/demo,0,0,,0,0,0,2027-01-15 08:00,v0,'
        f"{SID} ({project}/other/session.jsonl)"])  # no total row: CSV holds the JSON's rows alone
    assert err == [  # one note for the session's copies (fuzz round 23: one a copy, then one of 5)
        f"note: one session in 7 files under {project}/: read same0/session.jsonl, not same1/session.jsonl, "
        "same2/session.jsonl, same3/session.jsonl, same4/session.jsonl (the same lines), not early/session.jsonl "
        "(the other's lines and more)",  # the same lines first, as a watch says them (fuzz round 24)
        f"note: session {SID} is in 2 files, each listed: {project}/same0/session.jsonl, {project}/other/session.jsonl"]
    refusal = (f"error: session {SID} is in 2 files that differ (neither holds the other's lines): "
               f"{project}/other/session.jsonl, {project}/same0/session.jsonl (hint: pass the path of the log you "
               "mean; `dsh-audit sessions` lists each file)")
    assert _run(monkeypatch, capsys, "show", "latest", "0") == (2, "", [refusal])
    assert _run(monkeypatch, capsys, "breaks", SID) == (2, "", [refusal])


def test_comparing_many_copies_reads_each_file_at_most_twice(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two by two, 40 files would be read 40 times each (fuzz round 8: 200 took 159 s); by their
    digests, each is read once, and again only when it may hold a shorter one's lines: here the
    longest (holding the partial copies) and nothing else, whichever file they are read in place of."""
    lines = CHAT.read_bytes().splitlines(keepends=True)
    files = []
    for n in range(40):
        path = tmp_path / f"s{n:02d}" / "session.jsonl"
        path.parent.mkdir()
        path.write_bytes(b"".join(lines[:10 + n % 4]) if n % 10 else CHAT.read_bytes())  # 4 whole, 36 partial
        files.append(path)
    opened: list[Path] = []
    real = _prints.open_regular
    monkeypatch.setattr(_prints, "open_regular", lambda path: opened.append(Path(path)) or real(path))
    kept, left = read_once(files, rank=lambda path: 0)
    assert (kept, len(left)) == ([files[0]], 39)
    assert {(read, why) for read, _copy, why in left} == {
        (files[0], "the same lines"), (files[0], "the other's lines and more")}
    assert sorted(opened.count(path) for path in files) == [1] * 39 + [2]
    assert opened.count(files[0]) == 2


def test_discovery_reads_copies_in_folders_of_other_names_once(tmp_path: Path) -> None:
    """The one rule of copies, without a limit: seven session folders holding one session's log
    (the same size: their headers say the session) are found as one log."""
    for n in range(7):
        (tmp_path / "sessions" / "p" / f"c{n}").mkdir(parents=True)
        (tmp_path / "sessions" / "p" / f"c{n}" / "session.jsonl").write_bytes(CHAT.read_bytes())
    notes: list[str] = []
    assert discover([tmp_path / "sessions"], notes=notes) == [tmp_path / "sessions" / "p" / "c0" / "session.jsonl"]
    assert notes == [f"one session in 7 files under {tmp_path}/sessions/p/: read c0/session.jsonl, not "
                     + ", ".join(f"c{n}/session.jsonl" for n in range(1, 7)) + " (the same lines)"]


# -- an index whose schema version row was deleted ---------------------------------------------------

def test_an_index_without_its_schema_version_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "audit.sqlite"
    assert _run(monkeypatch, capsys, "index", str(CHAT), "--db", str(db))[0] == 0
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM meta WHERE key = 'schema_version'")
    connection.close()
    error = (f"error: {db}: not a dsh-audit index of a version this release reads: its meta table holds no "
             "schema_version (hint: give another --db file (keep this one: it may hold data), and build it with "
             "`dsh-audit index PATH --db FILE`)")
    before = db.read_bytes()
    assert _run(monkeypatch, capsys, "stats", "--db", str(db)) == (2, "", [error])
    assert _run(monkeypatch, capsys, "index", str(CHAT), "--db", str(db)) == (2, "", [error])
    assert db.read_bytes() == before


def test_an_index_with_no_row_and_no_version_is_made_anew(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A first ``index`` run stopped before it wrote the version: nothing to lose, so it is built."""
    db = tmp_path / "audit.sqlite"
    with sqlite3.connect(db) as connection:
        connection.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    connection.close()
    code, out, err = _run(monkeypatch, capsys, "index", str(CHAT), "--db", str(db))
    assert (code, (out + "\n".join(err)).count(f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in ")) == (0, 1)
    with sqlite3.connect(db) as connection:
        assert connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall() == [("5",)]
    connection.close()
