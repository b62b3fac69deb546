"""Fuzz round 23: copies of one session are counted once, and said in one note, by every command.

1. Three exports of one session, two whole and one holding their lines and one more: ``sessions``
   listed one session, but ``usage`` two (six requests, cost and tokens twice), ``index`` and
   ``report`` two logs, ``check`` each file: discovery grouped the two of one size by their headers
   and never opened the third (a size of its own). Now each export beside exports of one size says
   its session in its header, and every command reads the longest once.
2. The notes said one file left out each, and contradicted each other ("read one.jsonl, not
   two.jsonl" beside "read three.jsonl, not one.jsonl"): now one note per session names the file
   read and every copy left out, its copies of one reason together, in the same words everywhere.
3. The a-chat corpus folder (DSH's log and its export) with a longer copy beside it was said as
   "2 sessions found in two files each": it is one session in 3 files.
4. Seven identical exports: ``check`` said six notes (in its JSON report too) where the others said
   one, and nothing of a partial copy.
5. ``watch`` followed the copy whose header its followers read first (not the one the others read)
   and said a note each time it learnt another copy's id ("two files", "3 files" ... "7 files").
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from dsh_audit.log import copy_notes, discover

from _cli import invoke

ROOT = Path(__file__).resolve().parent.parent
CHAT = (ROOT / "sample_logs" / "chat" / "session.jsonl").read_bytes()
A_CHAT = ROOT.parent / "shared" / "corpus" / "live" / "a-chat"
A_SID = "session-2b096b61-0a34-4da6-abec-4e87161c2c0b"
needs_corpus = pytest.mark.skipif(not A_CHAT.is_dir(), reason="needs the shared corpus")
#: One more valid line after the sample chat's last one (the next turn starts).
MORE = b'{"type":"turn/start","seq":44,"time":1800000000045,"data":{"turn":3}}\n'
WATCH = ("--since", "100000d", "--idle-exit", "0.3", "--polling", "--json")


def _prefix(root: Path) -> tuple[Path, str]:
    """Case 1: x/one.jsonl and x/two.jsonl the sample chat, x/three.jsonl it and one line more."""
    folder = root / "x"
    folder.mkdir(parents=True)
    for name in ("one", "two"):
        (folder / f"{name}.jsonl").write_bytes(CHAT)
    (folder / "three.jsonl").write_bytes(CHAT + MORE)
    return folder / "three.jsonl", (f"one session in 3 files under {folder}/: read three.jsonl, not one.jsonl, "
                                    "two.jsonl (the other's lines and more)")


def _seven(root: Path) -> tuple[Path, str]:
    """Case 4: x/one.jsonl and six identical copies x/same0.jsonl ... x/same5.jsonl."""
    folder = root / "x"
    folder.mkdir(parents=True)
    for name in ("one", *(f"same{n}" for n in range(6))):
        (folder / f"{name}.jsonl").write_bytes(CHAT)
    return folder / "one.jsonl", (f"one session in 7 files under {folder}/: read one.jsonl, not "
                                  + ", ".join(f"same{n}.jsonl" for n in range(6)) + " (the same lines)")


def _a_chat(root: Path) -> tuple[Path, str]:
    """Case 3: the a-chat corpus folder (DSH's log, its export) and a longer copy of the export."""
    shutil.copytree(A_CHAT / "home", root / "home")
    shutil.copytree(A_CHAT / "session-logs", root / "session-logs")
    export = root / "session-logs" / f"{A_SID}.jsonl"
    copy = root / "session-logs" / "copy.jsonl"
    copy.write_bytes(export.read_bytes() + b'{"type":"turn/start","seq":51,"time":1796209327999,"data":{"turn":3}}\n')
    return copy, (f"one session in 3 files under {root}/: read session-logs/copy.jsonl, not home/sessions/"
                  f"--home-dev-dsh-runs-a-a-chat-ws--/{A_SID}/session.jsonl.zstd, session-logs/{A_SID}.jsonl "
                  "(the other's lines and more)")


CASES = {"prefix": _prefix, "seven": _seven, "a-chat": pytest.param(_a_chat, marks=needs_corpus)}


@pytest.fixture(params=list(CASES.values()), ids=list(CASES))
def case(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, str]:
    """A folder holding one session in 3 or 7 files: the folder, the file every command reads, the note."""
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the logs alone (a-chat's wire.jsonl is not copied anyway)
    monkeypatch.setenv("COLUMNS", "200")
    root = tmp_path / "g"
    read, note = request.param(root)
    return root, read, note


def test_discovery_reads_the_longest_once_with_one_note(case: tuple[Path, Path, str]) -> None:
    root, read, note = case
    notes: list[str] = []
    assert (discover([root], notes=notes), notes) == ([read], [note])


def test_sessions_and_usage_count_the_session_once(case: tuple[Path, Path, str], monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    root, read, note = case
    code, out, err = invoke(monkeypatch, capsys, "sessions", "--json", str(root))
    assert (code, [json.loads(line)["path"] for line in out.splitlines()], err) == (0, [str(read)], [f"note: {note}"])
    code, out, err = invoke(monkeypatch, capsys, "usage", "--json", str(root))
    found = json.loads(out)
    alone = json.loads(invoke(monkeypatch, capsys, "usage", "--json", str(read))[1])  # the file read, given alone
    assert (code, found["sessions"], [row["path"] for row in found["rows"]], err) == (
        0, 1, [str(read)], [f"note: {note}"])
    assert found["totals"] == alone["totals"]
    if read.name != "copy.jsonl":  # the sample chat: 3 requests, 510 tokens (they were 6 and 1020)
        assert (found["totals"]["requests"], found["totals"]["tokens"]["total"]) == (3, 510)


def test_index_and_report_store_one_log(case: tuple[Path, Path, str], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root, _read, note = case
    db = tmp_path / "i.sqlite"
    code, out, err = invoke(monkeypatch, capsys, "index", "--db", str(db), str(root))
    said = [re.sub(r" in \d+\.\d s$", " in N s", line) for line in [*out.splitlines(), *err]]
    assert (code, sorted(said)) == (0, sorted([f"note: {note}", f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) "
                                                                "in N s"]))
    code, out, err = invoke(monkeypatch, capsys, "report", "-o", str(tmp_path / "r.html"), str(root))
    wrote = [line.split(": ", 1)[1].split(",")[0] for line in [*out.splitlines(), *err] if line.startswith("wrote ")]
    assert (code, [line for line in err if line.startswith("note:")], wrote) == (0, [f"note: {note}"], ["1 log(s)"])


def test_check_says_the_one_note_in_its_json_too(case: tuple[Path, Path, str], monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    root, read, note = case
    code, out, err = invoke(monkeypatch, capsys, "check", "--no-baseline", "--json", str(root))
    report = json.loads(out)
    assert (code, [s["path"] for s in report["sessions"]], report["notes"], err) == (
        0, [str(read)], [note], [f"note: {note}"])


def test_watch_follows_the_file_the_others_read_with_one_note(case: tuple[Path, Path, str],
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    watch_follows_one(*case, monkeypatch, capsys)


def watch_follows_one(root: Path, read: Path, note: str, monkeypatch: pytest.MonkeyPatch,
                      capsys: pytest.CaptureFixture[str]) -> None:
    """``watch`` of ``root`` follows ``read`` alone, one session, and says ``note`` once (also
    tests/test_copies39c.py)."""
    code, out, err = invoke(monkeypatch, capsys, "watch", str(root), *WATCH)
    lines = [json.loads(line) for line in out.splitlines()]
    assert (code, err) == (0, [])
    assert [(line["path"], line["message"]) for line in lines if line["type"] == "note"] == [(str(read), note)]
    assert {line["path"] for line in lines if line["type"] in ("started", "request")} == {str(read)}
    assert lines[-1]["type"] == "summary" and lines[-1]["sessions"] == 1


# -- the notes of several sessions -----------------------------------------------------------------


def test_two_sessions_each_in_three_files_are_one_note_and_other_reasons_their_own(tmp_path: Path) -> None:
    """Copies of several sessions left out for the same reasons are said once (how many sessions in
    how many files, the first one's file read and a copy); a session whose copies were left out for
    other reasons keeps its own note."""
    other = CHAT.replace(b"session-sample-chat", b"session-sample-talk")
    for folder, data in (("a", CHAT), ("b", other)):
        (tmp_path / folder).mkdir()
        for name in ("one", "two"):
            (tmp_path / folder / f"{name}.jsonl").write_bytes(data)
        (tmp_path / folder / "three.jsonl").write_bytes(data + MORE)
    (tmp_path / "c").mkdir()
    for name in ("p", "q"):
        (tmp_path / "c" / f"{name}.jsonl").write_bytes(CHAT.replace(b"session-sample-chat", b"session-sample-walk"))
    notes: list[str] = []
    assert discover([tmp_path], notes=notes) == [tmp_path / "a" / "three.jsonl", tmp_path / "b" / "three.jsonl",
                                                 tmp_path / "c" / "p.jsonl"]
    assert notes == [
        f"2 sessions found in 6 files (the other's lines and more): each read once, from the file DSH reads; e.g. "
        f"under {tmp_path}/a/: read three.jsonl, skipped one.jsonl",
        f"one session in two files under {tmp_path}/c/: read p.jsonl, not q.jsonl (the same lines)"]


def test_a_copy_of_a_copy_is_said_as_the_file_read_holds_it() -> None:
    """Left out in two steps (a copy of a file that was itself left out for a longer one): the
    note says each copy once, against the file read in the end, with the reason it holds for it."""
    left = [("d/a.jsonl", "d/b.jsonl", "the same lines"), ("d/c.jsonl", "d/a.jsonl", "the other's lines and more")]
    assert copy_notes(left) == ["one session in 3 files under d/: read c.jsonl, not b.jsonl, a.jsonl (the other's "
                                "lines and more)"]
    assert copy_notes(left, files=4) == ["one session in 4 files under d/: read c.jsonl, not b.jsonl, a.jsonl (the "
                                         "other's lines and more)"]


def test_a_renamed_partial_export_alone_beside_its_whole_one_is_one_session(tmp_path: Path) -> None:
    """A partial export beside one whole export (sizes of their own) was read as its own session,
    no header opened (issue 11), and counted twice by ``usage`` while ``sessions`` counted one: each
    name not DSH's has its header read now, and the longer is read (``test_copies39c.py``)."""
    (tmp_path / "one.jsonl").write_bytes(CHAT)
    (tmp_path / "three.jsonl").write_bytes(CHAT + MORE)
    notes: list[str] = []
    assert (discover([tmp_path], notes=notes), notes) == ([tmp_path / "three.jsonl"], [
        f"one session in two files under {tmp_path}/: read three.jsonl, not one.jsonl (the other's lines and more)"])
