"""Session 39, a new user's tour (issues 14 and 15).

1. One session in two files whose lines differ (``sample_logs/tools/session.jsonl`` is
   ``session-sample-tools`` written unpacked) is read from each file: only ``sessions`` said so,
   so ``usage sample_logs/`` counted the session twice in silence. Now every command that reads a
   folder says the note ``sessions`` says, once per session, on stderr, in the same words; from
   what discovery knows already (a home of the folders DSH makes is still not opened for ids).
   Session 41: those two files hold the same events, one session read once; the tests here use
   an export whose last answer differs (``_copy_log.other_answer``).
2. A path that does not exist was named without its trailing ``/`` and with no hint; now it is
   named as typed, with the hint a PATH that names nothing gets everywhere (one text).
"""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from dsh_audit.log import _copies as copies
from dsh_audit.log import discover

from _cli import invoke
from _copy_log import other_answer

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
TOOLS = SAMPLES / "sessions" / "--home-dev-projects-demo--" / "session-sample-tools" / "session.jsonl.zstd"
CHAT = (SAMPLES / "chat" / "session.jsonl").read_bytes().splitlines(keepends=True)

#: The hint of every PATH that names nothing (cli/_logs.py).
HINT = ("pass the path of a log or a session folder, or a session id or `latest`: looked up in $DSH_HOME/sessions; "
        "set DSH_HOME to the DSH home that holds sessions/")


def _two_files(tmp_path: Path) -> tuple[Path, str]:
    """A folder holding session-sample-tools where DSH keeps it and as the unpacked export of
    sample_logs with its last answer changed (other lines, other events): the folder, and the
    note every command says of it."""
    root = tmp_path / "logs"
    kept = root / "sessions" / "--p--" / "session-sample-tools" / "session.jsonl.zstd"
    kept.parent.mkdir(parents=True)
    shutil.copy(TOOLS, kept)
    other_answer(SAMPLES / "tools" / "session.jsonl", root / "tools" / "session.jsonl")
    return root, (f"note: session session-sample-tools is in 2 files, each listed: {kept}, "
                  f"{root / 'tools' / 'session.jsonl'}")


@pytest.mark.parametrize("argv", [["requests"], ["usage"], ["check"], ["breaks"], ["cache"], ["validate"],
                                  ["sessions"], ["index", "--db", "{T}/i.sqlite"], ["report", "-o", "{T}/r.html"]],
                         ids=lambda argv: argv[0])
def test_every_command_that_reads_a_folder_says_the_session_is_in_two_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    root, note = _two_files(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    code, _out, err = invoke(monkeypatch, capsys, *(arg.replace("{T}", str(tmp_path)) for arg in argv), str(root))
    rest = ["0 error(s), 0 warning(s), 0 info in 2 file(s)"] if argv == ["validate"] else []
    assert (code, err) == (0, [note, *rest])  # once, the words `sessions` says


def test_sample_logs_say_both_notes_once_in_every_listing(monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The tour's case: `usage sample_logs/` reads session-sample-tools once (its unpacked export
    holds the same events: session 41), from DSH's file, and says so, as it says the chat copy."""
    notes = [f"note: one session in two files under {SAMPLES}/: read sessions/--home-dev-projects-demo--/"
             f"session-sample-{name}/session.jsonl.zstd, not {name}/session.jsonl (the same {what})"
             for name, what in (("chat", "lines"), ("tools", "events"))]
    for command in ("requests", "sessions"):
        code, _out, err = invoke(monkeypatch, capsys, command, f"{SAMPLES}/", "--json")
        assert (code, [line for line in err if line.startswith("note:")]) == (0, notes), command


def test_files_of_one_name_whose_headers_name_other_sessions_get_no_note(tmp_path: Path) -> None:
    """Two exports named alike (two homes' ``x.jsonl``), of other sizes and sessions: each read; the
    name was a guess, the headers say two sessions, so no note (``sessions`` lists two sessions)."""
    for folder, sid in (("a", b"session-one"), ("b", b"session-two-longer")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.jsonl").write_bytes(CHAT[0].replace(b"session-sample-chat", sid) + b"".join(CHAT[1:]))
    notes: list[str] = []
    assert discover([tmp_path], notes=notes) == [tmp_path / "a" / "x.jsonl", tmp_path / "b" / "x.jsonl"]
    assert notes == []
    # the same session in both, lines that differ: the note, from the headers read for it
    (tmp_path / "b" / "x.jsonl").write_bytes(b"".join(CHAT) + CHAT[-1])
    (tmp_path / "a" / "x.jsonl").write_bytes(b"".join(CHAT[:-1]) + CHAT[-1].replace(b'"seq"', b'"seq" '))
    assert discover([tmp_path], notes=notes) == [tmp_path / "a" / "x.jsonl", tmp_path / "b" / "x.jsonl"]
    assert notes == [f"session session-sample-chat is in 2 files, each listed: {tmp_path / 'a' / 'x.jsonl'}, "
                     f"{tmp_path / 'b' / 'x.jsonl'}"]


def test_a_home_of_the_folders_dsh_makes_is_not_opened_for_the_note(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Discovery says the note from what it knows: a home of sessions in the folders DSH makes
    (each log of a size of its own) opens no header, as before."""
    logs = []
    for n in range(20):
        sid = f"session-{uuid.UUID(int=n + 1)}"
        log = tmp_path / "sessions" / "p" / sid / "session.jsonl"
        log.parent.mkdir(parents=True)
        log.write_bytes(CHAT[0].replace(b"session-sample-chat", sid.encode()) + b"".join(CHAT[1:]) + b"\n" * n)
        logs.append(log)
    seen: list[Path] = []
    real = copies.read_header
    monkeypatch.setattr(copies, "read_header", lambda path: (seen.append(path), real(path))[1])
    notes: list[str] = []
    assert (discover([tmp_path / "sessions"], notes=notes), seen, notes) == (logs, [], [])


@pytest.mark.parametrize("argv, named", [
    (["requests", "nope/"], "nope/"), (["check", "nope/"], "nope/"), (["usage", "nope/"], "nope/"),
    (["sessions", "nope/"], "nope/"), (["index", "/nonexistent"], "/nonexistent"),
    (["render", "nope/x.jsonl", "0"], "nope/x.jsonl"), (["show", "nope/x.jsonl", "0"], "nope/x.jsonl"),
], ids=lambda value: " ".join(value) if isinstance(value, list) else "")
def test_a_missing_path_is_named_as_typed_with_the_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str], argv: list[str],
                                                        named: str) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    assert invoke(monkeypatch, capsys, *argv) == (2, "", [f"error: {named}: no such file or folder (hint: {HINT})"])


def test_an_id_shaped_name_with_no_sessions_folder_gets_the_same_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    assert invoke(monkeypatch, capsys, "requests", "nope") == (2, "", [
        f"error: nope: no such file or folder, and not a session id: the sessions folder {tmp_path / 'sessions'} "
        f"($DSH_HOME/sessions) does not exist (hint: {HINT})"])


def test_a_note_of_a_session_id_holding_a_newline_is_said_once_by_sessions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # the recogniser of discovery's "each listed" note read one line: a session id holding a
    # newline made `sessions` say the note twice (discovery's and its own)
    header = json.loads(CHAT[0])
    header["id"] = "session-\u001b[31mred\nx"
    other = [line.replace(b"Hi!", b"Ho!") for line in CHAT[1:]]
    for folder, lines in (("a", CHAT[1:]), ("b", other)):  # the same session, differing lines
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.jsonl").write_bytes(json.dumps(header).encode() + b"\n" + b"".join(lines))
    code, _, err = invoke(monkeypatch, capsys, "sessions", str(tmp_path), "--json")
    assert code == 0 and len([line for line in err if "each listed" in line]) == 1, err
