"""Session 41: one session written with packed chunk rows and without (issue 15), and watch's
"each listed" note.

1. ``sample_logs/tools/session.jsonl`` is ``session-sample-tools`` written unpacked
   (``assistant/chunk`` events), DSH's ``session.jsonl.zstd`` packs them (``text-chunks``): other
   lines, the same events. Every command read both ("each listed") and ``usage sample_logs/``
   counted the session twice (39 requests for 35). Files of one id whose lines differ are now
   compared by the events the reader yields of them: the same events are one session, read from
   the file the rule of copies picks (DSH's), with a note; only those files are decoded.
2. ``watch`` followed both files with no note; now the pair is one session, and of files that
   truly differ (other events) it says the note every other command says, once.
3. Review 41: every field of an event is compared (``surfaceOp`` was not: two files of other
   requests were one session, and a log the surface fold refuses hid a good export); files are
   decoded only when packed and unpacked ones meet (200 exports of other lines were all decoded);
   an earlier export holding the first events of DSH's log is "the other's events and more"; an
   events print is remembered by the file's stamp (``_stamp.py``: ``cp -p`` in place was missed).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

import zstandard

from dsh_audit.log import _prints, discover, expand_row, read_once, without_copies

from _cli import invoke
from _copy_log import ANSWER, other_answer

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
PACKED = SAMPLES / "sessions" / "--home-dev-projects-demo--" / "session-sample-tools" / "session.jsonl.zstd"
UNPACKED = SAMPLES / "tools" / "session.jsonl"
WATCH = ("--since", "100000d", "--idle-exit", "0.3", "--polling", "--json")


def _pair(tmp_path: Path, *, differ: bool) -> tuple[Path, Path]:
    """DSH's packed log of session-sample-tools where DSH keeps it, and its unpacked export beside
    it (``differ``: with its last answer changed, other events)."""
    kept = tmp_path / "sessions" / "--p--" / "session-sample-tools" / "session.jsonl.zstd"
    kept.parent.mkdir(parents=True)
    shutil.copy(PACKED, kept)
    export = tmp_path / "tools" / "session.jsonl"
    if differ:
        other_answer(UNPACKED, export)
    else:
        export.parent.mkdir()
        shutil.copy(UNPACKED, export)
    for path in (kept, export):  # written a minute ago: a file of the last 2 s is never remembered
        os.utime(path, (path.stat().st_mtime - 60,) * 2)
    return kept, export


def _decoded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files whose events are read to compare them (a fresh cache: each test's own)."""
    seen: list[str] = []
    real = _prints.read_log
    _prints._remembered.cache_clear()
    monkeypatch.setattr(_prints, "read_log", lambda path, **kw: (seen.append(Path(path).name), real(path, **kw))[1])
    return seen


def test_the_sample_logs_read_session_sample_tools_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Discovery of sample_logs/: 10 logs (11 before), each copy said in one note, its reason its own;
    only the two files of session-sample-tools are decoded (the chat copy has the same lines)."""
    decoded = _decoded(monkeypatch)
    notes: list[str] = []
    found = discover([SAMPLES], notes=notes)
    assert (len(found), PACKED in found, UNPACKED in found) == (10, True, False)
    assert notes == [f"one session in two files under {SAMPLES}/: read sessions/--home-dev-projects-demo--/"
                     f"session-sample-{name}/session.jsonl.zstd, not {name}/session.jsonl (the same {what})"
                     for name, what in (("chat", "lines"), ("tools", "events"))]
    assert sorted(decoded) == ["session.jsonl", "session.jsonl.zstd"]


@pytest.mark.parametrize("order", [0, 1], ids=["dsh-first", "export-first"])
def test_the_same_events_are_read_from_dsh_s_file_whatever_the_order(tmp_path: Path, order: int,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    kept, export = _pair(tmp_path, differ=False)
    decoded = _decoded(monkeypatch)
    logs = [kept, export][::1 - 2 * order]
    listed: dict[str, list[Path]] = {}
    assert without_copies(logs, listed=listed) == ([kept], [(kept, export, "the same events")])
    assert (listed, len(decoded)) == ({}, 2)
    # read again unchanged: the events' digests are kept, no file is decoded twice
    assert read_once(logs, rank=lambda _path: 0) == ([logs[0]], [(logs[0], logs[1], "the same events")])
    assert len(decoded) == 2


def test_a_partial_unpacked_copy_is_said_with_the_file_read_in_the_end(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The unpacked export, and an earlier export holding its first 30 lines: the earlier is left
    for the longer, the longer for DSH's file (the same events); one note says both, each as the
    file read holds it (the earlier holds the first events of DSH's file, not its lines: review
    41). Only the two whose lines are no other's first lines are decoded."""
    kept, export = _pair(tmp_path, differ=False)
    part = tmp_path / "early" / "session-sample-tools.jsonl"
    part.parent.mkdir()
    part.write_bytes(b"".join(UNPACKED.read_bytes().splitlines(keepends=True)[:30]))
    decoded = _decoded(monkeypatch)
    notes: list[str] = []
    assert discover([tmp_path], notes=notes) == [kept]
    assert notes == [f"one session in 3 files under {tmp_path}/: read sessions/--p--/session-sample-tools/"
                     "session.jsonl.zstd, not tools/session.jsonl (the same events), "
                     "not early/session-sample-tools.jsonl (the other's events and more)"]
    assert sorted(decoded) == ["session.jsonl", "session.jsonl.zstd"]


@pytest.mark.parametrize("differ", [False, True], ids=["same-events", "other-events"])
def test_watch_says_what_every_command_says_once(tmp_path: Path, differ: bool, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The same events: one session followed in DSH's file, 4 requests, the note of a copy; other
    events: both followed (8 requests, as ``usage`` counts them) and the "each listed" note, once."""
    kept, export = _pair(tmp_path, differ=differ)
    code, out, err = invoke(monkeypatch, capsys, "watch", str(tmp_path), *WATCH)
    lines = [json.loads(line) for line in out.splitlines()]
    notes = [line["message"] for line in lines if line["type"] == "note"]
    requests = sorted((line["path"], line["index"]) for line in lines if line["type"] == "request")
    if differ:
        assert notes == [f"session session-sample-tools is in 2 files, each listed: {kept}, {export}"]
        assert requests == sorted((str(path), n) for path in (kept, export) for n in range(4))
    else:
        assert notes == [f"one session in two files under {tmp_path}/: read sessions/--p--/session-sample-tools/"
                         "session.jsonl.zstd, not tools/session.jsonl (the same events)"]
        assert requests == [(str(kept), n) for n in range(4)]
    assert (code, err, lines[-1]["requests"]) == (0, [], 8 if differ else 4)


CLAUDE = ROOT / "tests" / "data" / "importers" / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"


@pytest.mark.parametrize("damage", ["bad-utf8", "same-lines"])
def test_claude_code_files_are_not_compared_by_dsh_s_lines(tmp_path: Path, damage: str,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Fuzz round 26 (D4): a transcript with blank lines after its first line beside one whose line
    2 is not UTF-8 (or a whole copy): ``sessions`` read the damaged one by DSH's rule of lines ("the
    other's lines and more") and listed 4 requests where ``usage`` counted 8. Discovery groups no
    imported files, so neither does ``sessions``: each file listed, with the note every command says."""
    lines = CLAUDE.read_bytes().splitlines(keepends=True)
    (tmp_path / "blank.jsonl").write_bytes(lines[0] + b"\n   \n" + b"".join(lines[1:]))
    second = b"{\"type\":\"user\",\"bad\":\"\xff\xfe\"}\n" if damage == "bad-utf8" else lines[1]
    (tmp_path / "other.jsonl").write_bytes(lines[0] + second + b"".join(lines[2:]))
    code, out, err = invoke(monkeypatch, capsys, "sessions", "--json", str(tmp_path))
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and sorted((Path(row["path"]).name, row["requests"]) for row in rows) == [
        ("blank.jsonl", 4), ("other.jsonl", 4)]
    assert [line for line in err if line.startswith("note: ") and "files" in line] == [
        f"note: session 7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11 is in 2 files, each listed: {tmp_path}/blank.jsonl, "
        f"{tmp_path}/other.jsonl"]
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--json", str(tmp_path))
    assert code == 0 and json.loads(out)["totals"]["requests"] == sum(row["requests"] for row in rows) == 8


# -- review 41: every field compared, decoded only when packed and unpacked meet, event prefixes --------

COMPACTION = SAMPLES / "sessions" / "--home-dev-projects-demo--" / "session-sample-compaction" / "session.jsonl.zstd"
REPLACE = (b'"surfaceOp":{"op":"replace","start":4,"end":33}', b'"surfaceOp":{"op":"replace","start":14,"end":33}')


def _lines(*, packed: bool, upto: int | None = None, edit: tuple[bytes, bytes] = (b"", b"")) -> bytes:
    """session-sample-compaction's lines as DSH writes them (``packed``) or with each chunk row
    written as its events, its first ``upto`` lines, each ``edit[0]`` made ``edit[1]``."""
    lines = zstandard.ZstdDecompressor().stream_reader(COMPACTION.read_bytes()).read().splitlines()[:upto]
    if not packed:
        rows = [expand_row(json.loads(line)) if b"-chunks" in line else None for line in lines]
        lines = [b"\n".join(json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode() for event in row)
                 if row else line for row, line in zip(rows, lines)]
    text = b"\n".join(lines) + b"\n"
    assert not edit[0] or edit[0] in text
    return text.replace(*edit) if edit[0] else text


_UNPACKED = {"packed": False}
_REFUSED = (b',"surfaceOp":"append"}\n{"type":"assistant/chunk","seq":40', b'}\n{"type":"assistant/chunk","seq":40')
#: (DSH's file, the export, files found, each listed, the note of a copy, files decoded)
CASES = {
    # DSH's log, and an export whose one replace range differs: other requests, each read (they were
    # "the same events", usage counted DSH's alone)
    "surface-op": ({}, {**_UNPACKED, "edit": REPLACE}, 2, True, None, 2),
    # both packed: other lines, never the same events; not decoded (all 200 were, big/diff: 8 s)
    "both-packed": ({}, {"packed": True, "edit": REPLACE}, 2, True, None, 0),
    # DSH's log refused by the surface fold (seq 39 has no surfaceOp): it was "the same events" as
    # the good export, which was not read (usage: 0 sessions)
    "refused": ({"packed": True, "edit": _REFUSED}, _UNPACKED, 2, True, None, 2),
    # an earlier unpacked export (its first 20 lines): counted twice; DSH's file decoded again for
    # its first 20 events
    "earlier": ({}, {**_UNPACKED, "upto": 20}, 1, False, "the other's events and more", 3),
    # DSH's log with its rows' types written with an escape: packed all the same, the same events
    "escaped-rows": ({"packed": True, "edit": (b'-chunks"', b'\\u002Dchunks"')}, _UNPACKED, 1, False,
                     "the same events", 2),
}


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
def test_files_of_other_lines_are_one_session_only_by_all_their_events(
        tmp_path: Path, case: tuple[dict[str, object], dict[str, object], int, bool, str | None, int],
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    kept_as, export_as, count, listed, why, decodes = case
    folder = tmp_path / "sessions" / "--p--" / "session-sample-compaction"
    folder.mkdir(parents=True)
    kept = folder / "session.jsonl"
    if kept_as:
        kept.write_bytes(_lines(**kept_as))  # type: ignore[arg-type]
    else:
        kept = folder / COMPACTION.name
        shutil.copy(COMPACTION, kept)
    export = tmp_path / "x.jsonl"
    export.write_bytes(_lines(**export_as))  # type: ignore[arg-type]
    decoded = _decoded(monkeypatch)
    notes: list[str] = []
    found = discover([tmp_path], notes=notes)
    assert (len(found), len(decoded)) == (count, decodes)
    assert notes == ([f"session session-sample-compaction is in 2 files, each listed: {export}, {kept}"] if listed else
                     [f"one session in two files under {tmp_path}/: read {kept.relative_to(tmp_path)}, "
                      f"not x.jsonl ({why})"])
    if kept_as:  # refused: the good export is read, DSH's refused file said (exit 2), HEAD's count; escaped: one
        code, out, err = invoke(monkeypatch, capsys, "usage", "--json", str(tmp_path))
        said = json.loads(out)
        assert (code, said["sessions"], said["totals"]["requests"]) == (2 if listed else 0, 1, 4)
        assert err[-1].startswith(f"error: {kept}:37 seq 39: invalid seed event at index 39: " if listed else "note: ")


def test_an_events_print_is_remembered_by_the_file_s_stamp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file written in the last 2 s is decoded each time; an older one once, until it changes,
    even rewritten in place to its size and time (``cp -p`` onto the same inode): its change time
    says so (the cache was keyed by size, mtime and inode)."""
    log = tmp_path / "x.jsonl"
    log.write_bytes(UNPACKED.read_bytes())
    decoded = _decoded(monkeypatch)
    first = _prints.events_print(log)
    assert (_prints.events_print(log), len(decoded)) == (first, 2)
    times = (log.stat().st_atime_ns, log.stat().st_mtime_ns - 60 * 10**9)
    os.utime(log, ns=times)
    assert (_prints.events_print(log), _prints.events_print(log), len(decoded)) == (first, first, 3)
    inode = log.stat().st_ino
    with log.open("r+b") as stream:  # one letter of the last answer, in place
        stream.write(UNPACKED.read_bytes().replace(ANSWER[0], ANSWER[0].upper()))
    os.utime(log, ns=times)
    assert (log.stat().st_ino, log.stat().st_size, log.stat().st_mtime_ns) == (inode, UNPACKED.stat().st_size, times[1])
    again = _prints.events_print(log)
    assert first is not None and again is not None and (again[0], len(decoded)) == (first[0], 4)
    assert again[1].digest != first[1].digest


def test_a_folder_lists_its_logs_by_path_whatever_their_names(tmp_path: Path) -> None:
    """Tour of session 45: every ``session.jsonl`` was listed before every other log (``a-chat/<id>.jsonl``
    after ``c-change/session.jsonl``), where README says "each one's logs by path"; a link to a session
    log under another name is still read under DSH's name."""
    for folder, source in (("a-chat", SAMPLES / "chat" / "session.jsonl"), ("c-change", UNPACKED)):
        (tmp_path / folder).mkdir()
        shutil.copy(source, tmp_path / folder / ("session.jsonl" if folder == "c-change" else "one.jsonl"))
    (tmp_path / "b-tools").mkdir()
    (tmp_path / "b-tools" / "link.jsonl").symlink_to(tmp_path / "c-change" / "session.jsonl")
    shutil.copy(SAMPLES / "chat" / "session.jsonl", tmp_path / "top.jsonl")  # the same session as a-chat's: a copy
    # review C of session 45, F8: a folder's own logs, then its subfolders', names in byte order (case, digits, and
    # an NFD "e" + accent beside "e", an NFC "é" after every ASCII name: no normalisation)
    shutil.copy(SAMPLES / "chat" / "session.jsonl", tmp_path / "Z.jsonl")
    for folder in ("9", "10", "B", "e\u0301x", "\u00e9"):
        (tmp_path / folder).mkdir()
        shutil.copy(SAMPLES / "chat" / "session.jsonl", tmp_path / folder / "session.jsonl")
    notes: list[str] = []
    assert [path.relative_to(tmp_path).as_posix() for path in discover([tmp_path], notes=notes, copies=False)] == [
        "Z.jsonl", "top.jsonl", "10/session.jsonl", "9/session.jsonl", "B/session.jsonl", "a-chat/one.jsonl",
        "c-change/session.jsonl", "e\u0301x/session.jsonl", "\u00e9/session.jsonl"]
