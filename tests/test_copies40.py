"""Fuzz round 24: copies of one session, second pass; every command, ``watch`` too, reads the same file.

3. An export of DSH's log with a blank line at its end: a partial one was "each listed" beside the
   log (two sessions, 12 requests where there are 9; the watch showed #0-#2 twice), a whole one was
   read in place of DSH's own log ("the other's lines and more") and then warned of as corrupt.
   DSH's reader takes a blank line for an unparsable record and commits nothing from it on: the
   files are compared by the lines before their first blank one.
4. A session folder holding ``session.jsonl.zstd`` and a longer ``session.jsonl``: ``check`` and
   ``usage`` read the compressed one (4 requests), ``watch`` the plain one (9). The watch picks a
   folder's files as discovery does, and says discovery's note.
5. Two session folders with the same lines, one named by the id its header says and one by another
   id: discovery read the other (it sorts first), the watch the first, and it said two notes. Of
   files ranked alike, the one whose name says its header's id is read, by every command; the
   watch reads those headers at once and says one note.
12. The watch said a plain and compressed pair as "one session in 6 files" without the generation
   note, where the others said "5 files" and the note: the same words now, the reasons of copies in
   one order (the same lines first).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from dsh_audit.log import discover

from _cli import invoke

ROOT = Path(__file__).resolve().parent.parent
SID = "session-2b096b61-0a34-4da6-abec-4e87161c2c0b"
OTHER = "session-11111111-2222-4333-8444-555555555555"
#: The sample chat (40 lines, 3 requests) under an id DSH makes.
MADE = (ROOT / "sample_logs" / "chat" / "session.jsonl").read_bytes().replace(b'"session-sample-chat"',
                                                                                f'"{SID}"'.encode())
LINES = MADE.splitlines(keepends=True)
PART = b"".join(LINES[:20])  # its first 20 lines: 2 requests
WATCH = ("--since", "100000d", "--idle-exit", "0.3", "--polling", "--json")
SAME, LONGER = "(the same lines)", "(the other's lines and more)"


def _zstd(data: bytes) -> bytes:
    """``data`` as DSH compresses a log: its header alone in the first frame, the rest in one more."""
    head, _, rest = data.partition(b"\n")
    frames = zstandard.ZstdCompressor()
    return frames.compress(head + b"\n") + frames.compress(rest)


def _write(root: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)


def _usage(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
           root: Path) -> tuple[int, list[str], int, int]:
    """``usage --json``: exit code, stderr lines, sessions and requests."""
    code, out, err = invoke(monkeypatch, capsys, "usage", "--json", str(root))
    found = json.loads(out)
    return code, err, found["sessions"], found["totals"]["requests"]


def _watch(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
           root: Path) -> tuple[int, list[str], set[str], int, int]:
    """``watch --json`` to its idle end: exit code, its notes (``note: ...``, as the others say
    them), the files followed, and its summary's sessions and requests."""
    code, out, err = invoke(monkeypatch, capsys, "watch", str(root), *WATCH)
    lines = [json.loads(line) for line in out.splitlines()]
    assert err == [] and lines[-1]["type"] == "summary"
    return (code, [f"note: {line['message']}" for line in lines if line["type"] == "note"],
            {line["path"] for line in lines if line["type"] in ("started", "request")},
            lines[-1]["sessions"], lines[-1]["requests"])


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")
    monkeypatch.setenv("COLUMNS", "200")


# -- 3: blank lines ---------------------------------------------------------------------------------

BLANKS = {"partial-then-blank": (PART + b"\n", LONGER), "whole-then-blank": (MADE + b"\n", SAME),
          "whole-then-blanks": (MADE + b"\n\n\n", SAME), "blank-inside": (PART + b"\n" + b"".join(LINES[20:]), LONGER)}


@pytest.mark.parametrize(("export", "why"), list(BLANKS.values()), ids=list(BLANKS))
def test_an_export_with_blank_lines_is_a_copy_of_dshs_log(export: bytes, why: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    log = f"sessions/--p--/{SID}/session.jsonl.zstd"
    _write(tmp_path, {log: _zstd(MADE), "exp/x.jsonl": export})
    note = f"one session in two files under {tmp_path}/: read {log}, not exp/x.jsonl {why}"
    notes: list[str] = []
    assert (discover([tmp_path], notes=notes), notes) == ([tmp_path / log], [note])
    # no corrupt-log warning: the export is not read
    assert _usage(monkeypatch, capsys, tmp_path) == (0, [f"note: {note}"], 1, 3)
    assert _watch(monkeypatch, capsys, tmp_path) == (0, [f"note: {note}"], {str(tmp_path / log)}, 1, 3)


# -- 4 and 12: a session folder's files ------------------------------------------------------------


def test_a_longer_plain_log_beside_the_compressed_one_is_read_by_no_command(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "sessions" / "--p--" / SID
    _write(folder, {"session.jsonl.zstd": _zstd(PART), "session.jsonl": MADE})
    note = (f"note: {folder}: read session.jsonl.zstd (generation v0), the one DSH would read; also present: "
            "session.jsonl")
    assert _usage(monkeypatch, capsys, tmp_path) == (0, [note], 1, 2)
    assert _watch(monkeypatch, capsys, tmp_path) == (0, [note], {str(folder / "session.jsonl.zstd")}, 1, 2)


def test_the_watch_says_a_folders_pair_and_its_copies_in_the_others_words(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The fuzz case c1: a/ holds both encodings, backup/, old/ and x.bak/ whole copies, p/ a partial one."""
    _write(tmp_path, {"a/session.jsonl": MADE, "a/session.jsonl.zstd": _zstd(MADE),
                      "backup/session.jsonl.zstd": _zstd(MADE), "old/session.jsonl": MADE,
                      "p/session.jsonl": PART, "x.bak/session.jsonl": MADE})
    notes = [f"note: {tmp_path}/a: read session.jsonl.zstd (generation v0), the one DSH would read; also present: "
             "session.jsonl",
             f"note: one session in 5 files under {tmp_path}/: read a/session.jsonl.zstd, not "
             f"backup/session.jsonl.zstd, old/session.jsonl, x.bak/session.jsonl {SAME}, not p/session.jsonl {LONGER}"]
    assert _usage(monkeypatch, capsys, tmp_path) == (0, notes, 1, 3)
    assert _watch(monkeypatch, capsys, tmp_path) == (0, notes, {str(tmp_path / "a" / "session.jsonl.zstd")}, 1, 3)


# -- 5: a folder named by another id ----------------------------------------------------------------


def test_of_identical_folders_the_one_named_by_its_headers_id_is_read(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The fuzz case c6: ``--p--/<id>/`` and ``--p--/<another id>/`` with the same lines, and a
    partial plain copy in another project: every command reads the first, the watch says one note."""
    log = f"--p--/{SID}/session.jsonl.zstd"
    _write(tmp_path / "sessions", {f"--p--/{OTHER}/session.jsonl.zstd": _zstd(MADE), log: _zstd(MADE),
                                   f"--q--/{SID}/session.jsonl": PART})
    note = (f"note: one session in 3 files under {tmp_path}/sessions/: read {log}, not "
            f"--p--/{OTHER}/session.jsonl.zstd {SAME}, not --q--/{SID}/session.jsonl {LONGER}")
    assert _usage(monkeypatch, capsys, tmp_path) == (0, [note], 1, 3)
    assert _watch(monkeypatch, capsys, tmp_path) == (0, [note], {f"{tmp_path}/sessions/{log}"}, 1, 3)
