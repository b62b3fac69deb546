"""``dsh-audit watch`` follows one session once when it is present as several files (issue 14).

A scenario folder holds each session twice, as DSH's ``session.jsonl.zstd`` and as an export
``session-logs/<id>.jsonl``: the watch used to follow both and its summary counted every request
twice (132 requests on the live corpus where ``cache`` and ``usage`` count 66). Now, as every other
command, it reads the file the other commands read and says which in a note; a copy that appears
while watching is compared then; a copy that grows past the followed file (it is the one being
written), or that outlives it, takes its place from the request where the other stopped: each
request is shown and counted once. Real file watching, in process (as ``test_watch_fixes.py``) and
through the CLI; the corpus session is c-change (8 requests, 5 breaks).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import zstandard
from _cli import invoke
from test_watch import PLAIN, ZSTD
from test_watch_fixes import _append, _drive, _note, _request, _watching

from dsh_audit.log import discover
from dsh_audit.report import dumps_line
from dsh_audit.watch import WatchItem, WatchNote, WatchRequest, WatchSummary, watch

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live" / "c-change"
needs_corpus = pytest.mark.skipif(not PLAIN or not ZSTD, reason="the DSH corpus is not present")
WATCH = ("--since", "100000d", "--idle-exit", "0.3", "--polling")
SID = "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824"
HALF = 60  # lines of c-change: 4 whole requests


def _lines() -> list[bytes]:
    return PLAIN[0].read_bytes().splitlines(keepends=True)


def _layout(tmp_path: Path, name: str = "session.jsonl") -> Path:
    """Where DSH keeps the session: ``sessions/<project>/<id>/session.jsonl[.zstd]``."""
    path = tmp_path / "sessions" / "--p--" / SID / name
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _export(tmp_path: Path) -> Path:
    path = tmp_path / "sessions" / "exports" / f"{SID}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _requests(items: list[WatchItem]) -> list[tuple[int, str]]:
    return [(item.index, item.path) for item in items if isinstance(item, WatchRequest)]


def _notes(items: list[WatchItem]) -> list[str]:
    return [item.message for item in items if isinstance(item, WatchNote) and item.level == "note"]


def _summary(items: list[WatchItem]) -> dict[str, object]:
    summary = WatchSummary()
    for item in items:
        summary.add(item)
    found = summary.to_json()
    return {k: found[k] for k in ("sessions", "requests", "breaks", "errors")}


ONCE = {"sessions": 1, "requests": 8, "breaks": 5, "errors": 0}


@needs_corpus
def test_a_scenario_folder_is_watched_once_with_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The repro, through the CLI: the summary equals ``cache``'s (8 requests, the same cost to the
    nano-dollar), not twice it; one note says which file was followed, as ``cache`` says it."""
    shutil.copytree(CORPUS / "home", tmp_path / "c" / "home")
    shutil.copytree(CORPUS / "session-logs", tmp_path / "c" / "session-logs")
    monkeypatch.setenv("COLUMNS", "400")
    folder = str(tmp_path / "c")
    note = (f"note: one session in two files under {folder}/: read home/sessions/--home-dev-dsh-runs-a-c-change-ws--/"
            f"{SID}/session.jsonl.zstd, not session-logs/{SID}.jsonl (the same lines)")
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", folder)
    assert code == 0 and err == [note]
    cost = json.loads(out)["cost"]
    assert (cost["requests"], cost["cost_usd"]["total"]) == (8, 0.01107667)
    code, out, err = invoke(monkeypatch, capsys, "watch", folder, *WATCH, "--json")
    assert code == 0 and err == []
    lines = [json.loads(line) for line in out.splitlines()]
    assert [x["type"] for x in lines] == ["watching", "note", "started", "request", "request", "break", "break",
                                          "break", "request", "break", "break", "summary"]
    assert {k: lines[1][k] for k in ("path", "session_id", "message")} == {
        "path": f"{folder}/home/sessions/--home-dev-dsh-runs-a-c-change-ws--/{SID}/session.jsonl.zstd",
        "session_id": SID, "message": note.removeprefix("note: ")}
    assert {**lines[-1], "cost_usd": lines[-1]["cost_usd"]["total"]} == {
        "type": "summary", "sessions": 1, "requests": 8, "breaks": 5, "cost_usd": 0.01107667,
                         "errors": 0, "unpriced_requests": 1, "cost_complete": False}
    code, out, err = invoke(monkeypatch, capsys, "watch", folder, *WATCH)
    assert code == 0 and len(out.splitlines()) == 8
    assert err[1:] == [
        "each line: time (UTC; when sent, for the history; when seen, for a new request), session id (whole, "
        "for the life of the watch; a fork or subagent child's led by └ fork or └ subagent) and title, #request "
        "t/s/a (turn/step/attempt), model, prompt tokens, cache reads of the reusable ones (what the previous "
        "request left cached: lost is measured from it) and the expected ones, cost, verdict; a break:",
        "  BREAK, its cause, the tokens it lost (their cost), the changed fields and the evidence seqs",  # wrapped at 400 (tour39)
        note, "watched 1 session(s): 8 request(s), 5 break(s), ≥$0.0111 (1 unpriced)"]


@needs_corpus
def test_a_copy_made_while_watching_is_not_followed(tmp_path: Path) -> None:
    """DSH's log is being written; an export of it appears (the same lines so far): a note, and
    the log alone goes on being followed, every request once."""
    lines, live, export = _lines(), _layout(tmp_path), _export(tmp_path)
    live.write_bytes(b"".join(lines[:HALF]))
    items = _drive(tmp_path, [(_watching, lambda: export.write_bytes(b"".join(lines[:HALF]))),
                              (_note("note"), _append(live, b"".join(lines[HALF:]))), (_request(7), lambda: None)],
                   since=0.0, rescan=0.1)
    assert _notes(items) == [f"one session in two files under {tmp_path}/sessions/: read --p--/{SID}/session.jsonl, "
                             f"not exports/{SID}.jsonl (the same lines)"]
    assert _requests(items) == [(index, str(live)) for index in range(8)]
    assert _summary(items) == ONCE


@needs_corpus
@pytest.mark.parametrize("notifications", [True, False], ids=["notifications", "polling"])
def test_a_copy_that_grows_past_the_followed_file_takes_its_place(tmp_path: Path, notifications: bool) -> None:
    """DSH's log and an export with the same lines: the log is followed. Then the export is the
    one written to (a session resumed from it): it is followed from the request where the log
    stopped, with a note; no request is shown twice."""
    lines, live, export = _lines(), _layout(tmp_path), _export(tmp_path)
    live.write_bytes(b"".join(lines[:HALF]))
    export.write_bytes(b"".join(lines[:HALF]))
    items = _drive(tmp_path, [(_note("note"), _append(export, b"".join(lines[HALF:]))), (_request(7), lambda: None)],
                   since=0.0, rescan=0.1, notifications=notifications)
    assert _notes(items) == [
        f"one session in two files under {tmp_path}/sessions/: read --p--/{SID}/session.jsonl, not exports/{SID}.jsonl "
        "(the same lines)",
        f"one session in two files under {tmp_path}/sessions/: read exports/{SID}.jsonl, not --p--/{SID}/session.jsonl "
        "(the other's lines and more)"]
    assert _requests(items) == [(index, str(live if index < 4 else export)) for index in range(8)]
    assert _summary(items) == ONCE


@needs_corpus
def test_a_copy_outliving_the_followed_file_takes_its_place(tmp_path: Path) -> None:
    """The followed log is deleted (moved away) once it has shown three requests, its export stays
    and is written to: it is followed from where the log stopped, said as a note (its session
    was not lost: no error)."""
    lines, live, export = _lines(), _layout(tmp_path), _export(tmp_path)
    live.write_bytes(b"".join(lines[:HALF]))
    export.write_bytes(b"".join(lines[:HALF]))

    def move() -> None:
        live.unlink()
        _append(export, b"".join(lines[HALF:]))()

    items = _drive(tmp_path, [(_request(2), move), (_request(7), lambda: None)], since=0.0, rescan=0.1)
    # request 3 is judged once the bytes after it are read: the export's
    assert _requests(items) == [(index, str(live if index < 3 else export)) for index in range(8)]
    assert [item.message for item in items if isinstance(item, WatchNote) and item.level == "error"] == []
    assert _notes(items)[-1] == (f"{live}: deleted; its session is now read from {export}, a copy of it, from where "
                                 "this file stopped")
    # its JSON line (--json) names the session and the path it was read from (it said no session)
    note = [item for item in items if isinstance(item, WatchNote) and item.level == "note"][-1]
    assert dumps_line({**note.to_json(), "seen_at": "T"}) == (
        f'{{"type":"note","seen_at":"T","path":"{live}","session_id":"{SID}","message":"{note.message}"}}')
    assert _summary(items) == ONCE


@needs_corpus
def test_the_plain_log_beside_the_compressed_one_is_never_followed(tmp_path: Path) -> None:
    """A session folder holding ``session.jsonl.zstd`` and a longer ``session.jsonl`` (DSH refuses
    a folder holding both): the compressed one is followed, as every other command reads it
    (discovery's pick of a folder's files, said in its words; fuzz round 24: the watch followed the
    plain one, 8 requests where ``check`` read 4); the plain one's lines are never shown."""
    lines, plain, packed = _lines(), _layout(tmp_path), _layout(tmp_path, "session.jsonl.zstd")
    plain.write_bytes(b"".join(lines))
    packed.write_bytes(b"".join(zstandard.ZstdCompressor().compress(line) for line in lines[:HALF]))
    items = list(watch([tmp_path / "sessions"], since=0.0, poll=0.02, idle_exit=0.3))  # its last request shown at exit
    assert _notes(items) == [f"{tmp_path}/sessions/--p--/{SID}: read session.jsonl.zstd (generation v0), the one "
                             "DSH would read; also present: session.jsonl"]
    assert _requests(items) == [(index, str(packed)) for index in range(4)]
    assert _summary(items) == {**ONCE, "requests": 4, "breaks": 2}
    notes: list[str] = []
    assert (discover([tmp_path], notes=notes), notes) == ([packed], _notes(items))


def _frames(lines: list[bytes]) -> bytes:
    """``lines`` as DSH compresses them: the header alone in the first frame."""
    frames = zstandard.ZstdCompressor()
    return frames.compress(lines[0]) + frames.compress(b"".join(lines[1:]))


@needs_corpus
def test_a_renamed_partial_export_is_not_followed(tmp_path: Path) -> None:
    """Issue 15: two exports of one session under names of their own, one (zstd) whole, the other
    (plain) taken earlier: the whole one is followed, every request once, with one note."""
    lines, folder = _lines(), tmp_path / "sessions" / "exports"
    folder.mkdir(parents=True)
    (folder / "mine.jsonl.zstd").write_bytes(_frames(lines))
    (folder / "taken-early.jsonl").write_bytes(b"".join(lines[:HALF]))
    items = _drive(tmp_path, [(_request(7), lambda: None)], since=0.0, rescan=0.1)
    assert _notes(items) == [f"one session in two files under {folder}/: read mine.jsonl.zstd, not taken-early.jsonl "
                             "(the other's lines and more)"]
    assert _requests(items) == [(index, str(folder / "mine.jsonl.zstd")) for index in range(8)]
    assert _summary(items) == ONCE


@needs_corpus
def test_many_copies_of_one_session_are_said_in_one_note(tmp_path: Path) -> None:
    """DSH's log, two whole copies and a partial one, each named otherwise: one note for the
    session, naming each copy and why it is not followed."""
    lines, live, folder = _lines(), _layout(tmp_path), tmp_path / "sessions" / "exports"
    live.write_bytes(b"".join(lines))
    folder.mkdir()
    (folder / "x.jsonl").write_bytes(b"".join(lines))
    (folder / "y.jsonl.zstd").write_bytes(_frames(lines))
    (folder / "z.jsonl").write_bytes(b"".join(lines[:HALF]))
    items = _drive(tmp_path, [(_request(7), lambda: None)], since=0.0, rescan=0.1)
    assert _notes(items) == [
        f"one session in 4 files under {tmp_path}/sessions/: read --p--/{SID}/session.jsonl, not exports/x.jsonl, "
        "exports/y.jsonl.zstd (the same lines), not exports/z.jsonl (the other's lines and more)"]  # one reason once
    assert _requests(items) == [(index, str(live)) for index in range(8)]
    assert _summary(items) == ONCE
