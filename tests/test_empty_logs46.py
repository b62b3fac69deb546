"""Issue 15, session 46: an empty ``*.jsonl`` (no byte, or blank lines only) in a folder is never skipped
in silence. It is found as a log, as an empty ``session.jsonl`` is, and every command reports it as it
reports the file given alone: ``validate`` DSH201, ``check`` a DSH801 finding that fails. ``sessions``
lists the others and names it in a note, exit 0 (brief m17): DSH's own session list passes an empty
session file over as half-written (``session-persistence-jsonl`` ``listArtifacts``; opening it refuses
it: ``readFirstZstdLine``). A capture (``wire.jsonl``), empty or not, is still no log."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from dsh_audit.log import discover
from _cli import chat_log, invoke

FIX = '(start the file with {"type":"session","version":0,...})'
#: validate's words for each content: the file alone's and the folder's the same
DSH201 = {b"": f"DSH201 error: empty file: no session header line {FIX}",
          b"\n\n  \n": f"DSH201 error: header line is not valid JSON {FIX}"}
REFUSED = 'empty or header-less session log (hint: a DSH log starts with a {"type":"session",...} header line)'


def folder(tmp_path: Path, content: bytes) -> tuple[Path, Path]:
    logs = tmp_path / "logs"
    chat_log(logs / "a-session.jsonl", "session-full")
    empty = logs / "b-empty.jsonl"
    empty.write_bytes(content)
    (logs / "wire.jsonl").write_bytes(b"")  # a capture: never a log
    return logs, empty


CONTENTS = [b"", b"\n\n  \n"]


@pytest.mark.parametrize("content", CONTENTS)
def test_discovery_finds_an_empty_log(tmp_path, content):
    logs, empty = folder(tmp_path, content)
    assert discover([logs]) == [logs / "a-session.jsonl", empty]


@pytest.mark.parametrize("content", CONTENTS)
def test_validate_reports_it_as_for_the_file(tmp_path, monkeypatch, capsys, content):
    logs, empty = folder(tmp_path, content)
    alone = invoke(monkeypatch, capsys, "validate", str(empty))
    code, out, err = invoke(monkeypatch, capsys, "validate", str(logs))
    assert (code, out, err) == (1, f"{empty}:1: {DSH201[content]}\n",
                                ["1 error(s), 0 warning(s), 0 info in 2 file(s): DSH201 x1"])
    assert alone == (1, f"{empty}:1: {DSH201[content]}\n", ["1 error(s), 0 warning(s), 0 info in 1 file(s): DSH201 x1"])


def test_check_fails_on_it(tmp_path, monkeypatch, capsys):
    logs, empty = folder(tmp_path, b"")
    code, out, _ = invoke(monkeypatch, capsys, "check", str(logs), "--no-capture")
    lines = out.splitlines()
    assert code == 1
    assert (f"{empty}:1: DSH801 error (fails the gate: fail-on-refusal): {REFUSED}") in lines
    assert lines[-1] == "FAILED: 2 log(s), 1 request(s), 1 error(s), 0 warning(s), 1 info, 1 failing (policy: defaults)"


@pytest.mark.parametrize("content", CONTENTS)
def test_sessions_lists_the_others_and_notes_it_as_dsh_lists_none(tmp_path, monkeypatch, capsys, content):
    """Before (brief m15): one error line, exit 2, for a session DSH may be writing now. DSH's list passes
    an empty file over; `sessions` lists the others, a note names it, exit 0."""
    logs, empty = folder(tmp_path, content)
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(logs), "--json", "--no-cost")
    assert (code, err) == (0, [f"note: {empty}: empty: DSH lists no session for it"])
    assert [json.loads(line)["session_id"] for line in out.splitlines()] == ["session-full"]
    monkeypatch.setenv("COLUMNS", "200")
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(logs), "--format", "csv", "--no-cost")
    assert (code, err) == (0, [f"note: {empty}: empty: DSH lists no session for it"])
    assert [row[-1] for row in csv.reader(io.StringIO(out))] == ["id", "session-full"]


def test_sessions_of_an_empty_file_alone_lists_nothing_and_says_why(tmp_path, monkeypatch, capsys):
    _, empty = folder(tmp_path, b"")
    assert invoke(monkeypatch, capsys, "sessions", str(empty)) == (
        0, "", [f"note: {empty}: empty: DSH lists no session for it"])


def test_sessions_still_fails_on_a_log_that_is_not_empty(tmp_path, monkeypatch, capsys):
    """A file with a byte that is not blank (a header cut before its line's end) is refused as before."""
    logs, empty = folder(tmp_path, b"\n \n{")
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(logs / "a-session.jsonl"), str(empty), "--json",
                            "--no-cost")
    assert (code, len(out.splitlines())) == (2, 1)
    assert err == [f"error: {empty}:1: corrupt session log: header line is not valid JSON (hint: this is not a DSH "
                   "session log, or its first line is damaged; nor is it a session the claude-code or codex importer "
                   "recognises)"]
