"""Session 39, issue 15's leftover: a copy of a session in a DSH home under another folder name, of
another size (a partial copy taken while the session ran, or the log compressed), was read once by
``sessions`` and ``latest`` (which read every header) but listed twice by ``requests`` and every
other command given no PATH (discovery opened only logs whose size another has). Now discovery
opens the header of each log of the home whose folder's name DSH does not make (``backup``,
``<id>.bak``): every command reads the session from the file ``sessions`` and ``latest`` read, with
their note; a home of the folders DSH makes (``session-<uuid>``) is still not opened for ids.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from dsh_audit.log import _copies as copies
from dsh_audit.log import discover

from _cli import invoke
from test_copies38 import _home, _zstd  # a DSH home of given files, DSH's zstd framing

ROOT = Path(__file__).resolve().parent.parent
CHAT = (ROOT / "sample_logs" / "chat" / "session.jsonl").read_bytes()
LINES = CHAT.splitlines(keepends=True)
READ = "session-sample-chat/session.jsonl"


#: The session's log where DSH keeps it, and beside it a copy of another size under another name.
HOMES = {
    "partial": ({READ: CHAT, "backup/session.jsonl": b"".join(LINES[:4])},
                "backup/session.jsonl", "the other's lines and more"),
    "zstd": ({READ: CHAT, "session-sample-chat.bak/session.jsonl.zstd": _zstd(CHAT)},
             "session-sample-chat.bak/session.jsonl.zstd", "the same lines"),
}


def _note(project: Path, copy: str, why: str) -> str:
    """The note ``sessions``, ``latest`` and now every listing give for the copy left out."""
    return f"note: one session in two files under {project}/: read {READ}, not {copy} ({why})"


@pytest.mark.parametrize("kind", sorted(HOMES))
def test_requests_with_no_path_lists_the_session_once_as_sessions_and_latest_read_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    files, copy, why = HOMES[kind]
    project = _home(tmp_path, monkeypatch, files)
    assert len({len(data) for data in files.values()}) == 2  # sizes differ: not found by size
    note = _note(project, copy, why)
    direct = invoke(monkeypatch, capsys, "requests", str(project / READ))
    assert direct[0] == 0 and direct[2] == []
    assert invoke(monkeypatch, capsys, "requests") == (0, direct[1], [note])
    assert direct[1].count(f"{project / READ}  session session-sample-chat\n") == 1
    assert str(project / copy) not in direct[1]
    code, out, err = invoke(monkeypatch, capsys, "requests", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert (code, len(rows), {row["path"] for row in rows}, err) == (0, 3, {str(project / READ)}, [note])
    # the same file, and the same note, as `sessions` and `latest`
    code, out, err = invoke(monkeypatch, capsys, "sessions", "--json")
    assert (code, [json.loads(line)["path"] for line in out.splitlines()], err) == (0, [str(project / READ)], [note])
    shown = invoke(monkeypatch, capsys, "show", str(project / READ), "0")
    assert invoke(monkeypatch, capsys, "show", "latest", "0") == (0, shown[1], [note])


@pytest.mark.parametrize("argv", [["breaks", "--json"], ["cache", "--json"], ["usage", "--json"], ["validate"],
                                  ["check"], ["report", "-o", "{T}/r.html"], ["index", "--db", "{T}/i.sqlite"]],
                         ids=lambda argv: argv[0])
def test_every_command_given_no_path_reads_the_session_once_with_the_note(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    files, copy, why = HOMES["partial"]
    project = _home(tmp_path / "home", monkeypatch, files)
    code, out, err = invoke(monkeypatch, capsys, *(arg.replace("{T}", str(tmp_path)) for arg in argv))
    assert (code, err[:1]) == (0, [_note(project, copy, why)])
    assert str(project / copy) not in out + "\n".join(err[1:])  # the copy is never read
    if argv[0] == "validate":
        assert err[1:] == ["0 error(s), 0 warning(s), 0 info in 1 file(s)"]
    else:
        assert err[1:] == []


def test_of_the_same_lines_the_file_in_the_folder_dsh_made_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A compressed copy under a name before it (``backup``) holds the same lines: every command,
    ``sessions`` and ``latest`` read the file in the folder DSH made for the session's id."""
    sid = f"session-{uuid.UUID(int=7)}"
    log = LINES[0].replace(b"session-sample-chat", sid.encode()) + b"".join(LINES[1:])
    project = _home(tmp_path, monkeypatch, {f"{sid}/session.jsonl": log, "backup/session.jsonl.zstd": _zstd(log)})
    note = (f"note: one session in two files under {project}/: read {sid}/session.jsonl, "
            "not backup/session.jsonl.zstd (the same lines)")
    direct = invoke(monkeypatch, capsys, "requests", str(project / sid / "session.jsonl"))
    assert invoke(monkeypatch, capsys, "requests") == (0, direct[1], [note])
    code, out, err = invoke(monkeypatch, capsys, "sessions", "--json")
    assert (code, [json.loads(line)["path"] for line in out.splitlines()], err) == (
        0, [str(project / sid / "session.jsonl")], [note])
    assert invoke(monkeypatch, capsys, "show", "latest", "0")[2] == [note]


def _dsh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int) -> list[Path]:
    """A home of ``count`` sessions in the folders DSH makes (``session-<uuid>``), each of a size of
    its own; their logs, in discovery's order."""
    logs = []
    for n in range(count):
        sid = f"session-{uuid.UUID(int=n + 1)}"
        title = b'{"type":"session/title","seq":44,"time":1800000000045,"data":{"title":"%s"}}\n' % (b"t" * n)
        log = tmp_path / "sessions" / "p" / sid / "session.jsonl"
        log.parent.mkdir(parents=True)
        log.write_bytes(LINES[0].replace(b"session-sample-chat", sid.encode()) + b"".join(LINES[1:]) + title)
        logs.append(log)
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    return logs


def test_a_home_of_the_folders_dsh_makes_opens_only_the_folder_of_another_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = _dsh_home(tmp_path, monkeypatch, 30)
    seen: list[Path] = []
    real = copies._header_id
    monkeypatch.setattr(copies, "_header_id", lambda path: (seen.append(path), real(path))[1])
    notes: list[str] = []
    assert (discover(None, notes=notes), seen, notes) == (logs, [], [])
    backup = logs[0].parent.parent / "backup" / "session.jsonl"  # the first session, copied early
    backup.parent.mkdir()
    backup.write_bytes(b"".join(logs[0].read_bytes().splitlines(keepends=True)[:4]))
    assert (discover(None, notes=notes), seen) == (logs, [backup])
    assert notes == [f"one session in two files under {backup.parent.parent}/: read "
                     f"{logs[0].parent.name}/session.jsonl, not backup/session.jsonl (the other's lines and more)"]


@pytest.mark.parametrize(("name", "made"), [
    ("session-2b096b61-0a34-4da6-abec-4e87161c2c0b", True), ("718aabf5-ac98-48d9-87ec-fa18653fd4d4", True),
    ("session-" + "0123456789abcdef" * 2, True), ("session-sample-chat", False), ("backup", False),
    ("session-2b096b61-0a34-4da6-abec-4e87161c2c0b.bak", False),
    ("session-2b096b61-0a34-4da6-abec-4e87161c2c0b (copy)", False), ("SESSION-" + "0123456789ABCDEF" * 2, False),
    ("session-" + "0123456789abcdef" * 2 + "0", False)])
def test_the_folder_names_dsh_makes(name: str, made: bool) -> None:
    assert copies.dsh_made(name) is made
