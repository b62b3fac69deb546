"""Session 39: a partial export beside ONE whole export of its session is one session for every command.

A partial export (the first lines of the log, another size, a name of its own such as ``x.jsonl``)
beside one whole export, alone in its folder or in another folder: ``sessions`` and ``watch``
(which read every header) counted one session, ``usage``, ``requests``, ``index``, ``check`` and
``report`` two, since discovery opened an export for its session id only when another had its
size. Now an export whose name is not one DSH makes of an id has its header read (its first line
or first frame); one named as DSH names it (``session-<uuid>.jsonl``), or a log of a DSH home of
such folders, is still not opened: its name says its session.

Session 40 (issue 15's leftover): a session folder copied out under a name DSH does not make
(``old/session.jsonl`` beside ``new/session.jsonl``, outside a home) was read as the session its
folder's name says, so one session was two (its cost doubled in ``usage``) everywhere but in
``sessions``. Now its header is read too (folders DSH names, ``session-<uuid>``, stay unopened).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from dsh_audit.log import _copies, _prints, discover

from _cli import invoke
from test_copies39b import watch_follows_one

ROOT = Path(__file__).resolve().parent.parent
CHAT = (ROOT / "sample_logs" / "chat" / "session.jsonl").read_bytes()
SID = "session-2b096b61-0a34-4da6-abec-4e87161c2c0b"
#: The sample chat under an id DSH makes (its name says it as DSH names exports).
MADE = CHAT.replace(b'"session-sample-chat"', f'"{SID}"'.encode())
#: One more valid line after the sample chat's last one (the next turn starts).
MORE = b'{"type":"turn/start","seq":44,"time":1800000000045,"data":{"turn":3}}\n'
LONGER = "(the other's lines and more)"


def _beside(root: Path) -> tuple[Path, str]:
    """x/one.jsonl the sample chat, x/x.jsonl it and one line more: nothing else in the folder."""
    (root / "x").mkdir(parents=True)
    (root / "x" / "one.jsonl").write_bytes(CHAT)
    (root / "x" / "x.jsonl").write_bytes(CHAT + MORE)
    return root / "x" / "x.jsonl", f"one session in two files under {root}/x/: read x.jsonl, not one.jsonl {LONGER}"


def _apart(root: Path) -> tuple[Path, str]:
    """The same two exports in two folders: a/one.jsonl (the partial one), b/x.jsonl."""
    for folder, data, name in (("a", CHAT, "one"), ("b", CHAT + MORE, "x")):
        (root / folder).mkdir(parents=True)
        (root / folder / f"{name}.jsonl").write_bytes(data)
    return root / "b" / "x.jsonl", f"one session in two files under {root}/: read b/x.jsonl, not a/one.jsonl {LONGER}"


def _named(root: Path) -> tuple[Path, str]:
    """An export named as DSH names it (``session-<uuid>.jsonl``, whole) and a renamed partial one."""
    root.mkdir(parents=True)
    (root / f"{SID}.jsonl").write_bytes(MADE + MORE)
    (root / "backup.jsonl").write_bytes(MADE)
    return root / f"{SID}.jsonl", f"one session in two files under {root}/: read {SID}.jsonl, not backup.jsonl {LONGER}"


def _folders(root: Path, *, partial: bool) -> tuple[Path, str]:
    """A session folder copied out twice under names DSH does not make: old/ (the sample chat) and
    new/ (it, or it and one line more)."""
    for folder, data in (("old", CHAT), ("new", CHAT + MORE if partial else CHAT)):
        (root / folder).mkdir(parents=True)
        (root / folder / "session.jsonl").write_bytes(data)
    why = LONGER if partial else "(the same lines)"
    return root / "new" / "session.jsonl", f"one session in two files under {root}/: read new/session.jsonl, not " \
                                           f"old/session.jsonl {why}"


CASES = {"beside": _beside, "apart": _apart, "dsh-named": _named,
         "folders-copied-out": lambda root: _folders(root, partial=False),
         "folders-copied-out-partial": lambda root: _folders(root, partial=True)}


@pytest.fixture(params=list(CASES.values()), ids=list(CASES))
def case(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, str]:
    """A folder holding one session as a whole and a partial export: the folder, the file read, the note."""
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")
    monkeypatch.setenv("COLUMNS", "200")
    root = tmp_path / "g"
    read, note = request.param(root)
    return root, read, note


def test_discovery_reads_the_longer_once_opening_only_the_headers_names_do_not_say(
        case: tuple[Path, Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    root, read, note = case
    seen: Counter[str] = Counter()
    real = _copies._header_id
    monkeypatch.setattr(_copies, "_header_id", lambda path: (seen.update([path.name]), real(path))[1])
    notes: list[str] = []
    assert (discover([root], notes=notes), notes) == ([read], [note])
    # each log whose name is not DSH's opened once; session-<uuid>.jsonl never
    assert seen == Counter(path.name for path in root.rglob("*.jsonl") if SID not in path.name)
    assert sum(seen.values()) == (1 if SID in read.name else 2)


@pytest.mark.parametrize("command", [["usage", "--json"], ["requests", "--json"], ["sessions", "--json"],
                                     ["check", "--no-baseline", "--json"]], ids=lambda args: args[0])
def test_every_command_counts_one_session_with_the_one_note(case: tuple[Path, Path, str], command: list[str],
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    root, read, note = case
    code, out, err = invoke(monkeypatch, capsys, *command, str(root))
    alone = invoke(monkeypatch, capsys, *command, str(read))
    assert (code, err) == (0, [f"note: {note}"])
    if command[0] == "check":  # its JSON report lists the note too
        found, expected = json.loads(out), json.loads(alone[1])
        assert (found.pop("notes"), expected.pop("notes")) == ([note], [])
        out, alone = json.dumps(found), (0, json.dumps(expected), [])
    assert (alone[0], alone[1]) == (0, out)  # the same output as the file read, given alone
    if command[0] == "usage":
        assert (json.loads(out)["sessions"], json.loads(out)["totals"]["requests"]) == (1, 3)


def test_index_and_report_store_one_log(case: tuple[Path, Path, str], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    root, _read, note = case
    db = tmp_path / "i.sqlite"
    code, out, err = invoke(monkeypatch, capsys, "index", "--db", str(db), str(root))
    said = sorted(re.sub(r" in \d+\.\d s$", " in N s", line) for line in [*out.splitlines(), *err])
    assert (code, said) == (0, sorted([f"note: {note}", f"{db}: indexed 1, skipped 0 unchanged, of 1 log(s) in N s"]))
    totals = json.loads(invoke(monkeypatch, capsys, "stats", "--db", str(db), "--json")[1])["totals"]
    assert (totals["sessions"], totals["requests"]) == (1, 3)
    code, out, err = invoke(monkeypatch, capsys, "report", "-o", str(tmp_path / "r.html"), str(root))
    assert (code, err, out) == (0, [f"note: {note}"], f"wrote {tmp_path / 'r.html'}: 1 log(s), 3 request(s), "
                                                       "check passed: no breaks\n")


def test_watch_follows_the_file_the_others_read_with_the_one_note(case: tuple[Path, Path, str],
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    watch_follows_one(*case, monkeypatch, capsys)


# -- what discovery opens ---------------------------------------------------------------------------


def _home(root: Path, count: int) -> list[Path]:
    """A DSH home of ``count`` sessions, each in the folder DSH names by its id (sizes all differ)."""
    logs = []
    for n in range(count):
        sid = f"session-{n:08x}-0000-4000-8000-000000000000"
        log = root / "sessions" / "--p--" / sid / "session.jsonl"
        log.parent.mkdir(parents=True)
        log.write_bytes(CHAT.replace(b'"session-sample-chat"', f'"{sid}"'.encode()) + MORE * n)
        logs.append(log)
    return logs


def _copied_out(root: Path, count: int, *, dsh_names: bool) -> list[Path]:
    """``count`` session folders of as many sessions copied out of a home into one folder (sizes all
    differ): named as DSH names them (``session-<uuid>/``), else ``log-N/``."""
    logs = []
    for n in range(count):
        sid = f"session-{n:08x}-0000-4000-8000-000000000000"
        log = root / (sid if dsh_names else f"log-{n:03d}") / "session.jsonl"
        log.parent.mkdir(parents=True)
        log.write_bytes(CHAT.replace(b'"session-sample-chat"', f'"{sid}"'.encode()) + MORE * n)
        logs.append(log)
    return logs


def _exports(root: Path, count: int, *, dsh_names: bool) -> list[Path]:
    """``count`` exports of as many sessions in one folder (sizes all differ): named as DSH names
    them (``session-<uuid>.jsonl``), else ``log-N.jsonl``."""
    root.mkdir(parents=True)
    logs = []
    for n in range(count):
        sid = f"session-{n:08x}-0000-4000-8000-000000000000"
        log = root / (f"{sid}.jsonl" if dsh_names else f"log-{n:03d}.jsonl")
        log.write_bytes(CHAT.replace(b'"session-sample-chat"', f'"{sid}"'.encode()) + MORE * n)
        logs.append(log)
    return logs


@pytest.mark.parametrize(("make", "opened"), [(lambda root: _home(root, 40), 0),
                                              (lambda root: _exports(root, 40, dsh_names=True), 0),
                                              (lambda root: _exports(root, 40, dsh_names=False), 40),
                                              (lambda root: _copied_out(root, 40, dsh_names=True), 0),
                                              (lambda root: _copied_out(root, 40, dsh_names=False), 40)],
                         ids=["home", "dsh-named-exports", "other-exports", "dsh-named-folders", "other-folders"])
def test_discovery_opens_a_header_only_where_a_name_does_not_say_its_session(make, opened: int, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    logs = make(tmp_path / "f")
    seen: Counter[Path] = Counter()
    real = _copies._header_id
    monkeypatch.setattr(_copies, "_header_id", lambda path: (seen.update([path]), real(path))[1])
    compared: list[Path] = []  # 40 sessions, none in two files: no file's lines are read for digests
    monkeypatch.setattr(_prints, "_digests", lambda path, at: compared.append(path))
    notes: list[str] = []
    assert (sorted(discover([tmp_path / "f"], notes=notes)), notes, compared) == (sorted(logs), [], [])
    assert (sum(seen.values()), max(seen.values(), default=1)) == (opened, 1)


def test_a_dsh_name_is_trusted_unopened_and_a_header_read_wins_over_it(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A DSH-named export is not opened (of a size no other has): a renamed one that lies about its
    session is read as the session its name says. Of one whose header is read (its size is
    another's), the header wins: a whole copy under another DSH name is the copy it is, and of the
    two, the file whose name says its header's id is read (fuzz round 24)."""
    other = "session-00000000-1111-4222-8333-444444444444"
    (tmp_path / f"{other}.jsonl").write_bytes(MADE)  # SID's lines under another id's name
    (tmp_path / "x.jsonl").write_bytes(MADE + MORE)
    seen: list[str] = []
    real = _copies._header_id
    monkeypatch.setattr(_copies, "_header_id", lambda path: (seen.append(path.name), real(path))[1])
    notes: list[str] = []
    assert (discover([tmp_path], notes=notes), notes, seen) == (
        [tmp_path / f"{other}.jsonl", tmp_path / "x.jsonl"], [], ["x.jsonl"])
    (tmp_path / "x.jsonl").unlink()
    (tmp_path / f"{SID}.jsonl").write_bytes(MADE)  # its size is the liar's: both headers read
    assert (discover([tmp_path], notes=notes), notes) == ([tmp_path / f"{SID}.jsonl"], [  # the name its header says
        f"one session in two files under {tmp_path}/: read {SID}.jsonl, not {other}.jsonl (the same lines)"])


def test_session_folders_copied_out_that_differ_are_each_read_and_listed(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Of one session id, old/ and new/ whose lines differ otherwise (neither holds the other's):
    each read, the session listed in every command's words, as ``sessions`` lists it."""
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")
    for folder, data in (("old", CHAT), ("new", CHAT.replace(b"in one sentence", b"in two words"))):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "session.jsonl").write_bytes(data)
    both = [tmp_path / "new" / "session.jsonl", tmp_path / "old" / "session.jsonl"]
    note = f"session session-sample-chat is in 2 files, each listed: {both[0]}, {both[1]}"
    notes: list[str] = []
    assert (discover([tmp_path], notes=notes), notes) == (both, [note])
    code, out, err = invoke(monkeypatch, capsys, "usage", "--json", str(tmp_path))
    usage = json.loads(out)
    assert (code, err, usage["sessions"], usage["totals"]["requests"]) == (0, [f"note: {note}"], 2, 6)
