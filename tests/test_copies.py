"""One session found as several files is read once: DSH's log and an export of it (compressed or
not), or an earlier copy, and a note names the file read; files that differ otherwise are all read."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
import zstandard

from dsh_audit.log import _copies, _prints, discover

from _cli import invoke

ROOT = Path(__file__).resolve().parent.parent
CHANGE = ROOT / "sample_logs" / "sessions" / "--home-dev-projects-demo--" / "session-sample-change" / "session.jsonl.zstd"
CORPUS = ROOT.parent / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")


def _lines() -> bytes:
    return zstandard.ZstdDecompressor().stream_reader(CHANGE.read_bytes(), read_across_frames=True).read()


def _scenario(tmp_path: Path, export: bytes) -> tuple[Path, Path]:
    """A scenario folder as the corpus lays it out: DSH's home, and an export beside it."""
    dsh = tmp_path / "home" / "sessions" / "--p--" / "session-sample-change" / "session.jsonl.zstd"
    dsh.parent.mkdir(parents=True)
    shutil.copy(CHANGE, dsh)
    plain = tmp_path / "session-logs" / "session-sample-change.jsonl"
    plain.parent.mkdir()
    plain.write_bytes(export)
    return dsh, plain


def test_an_export_with_the_same_lines_is_not_read_again(tmp_path: Path) -> None:
    dsh, plain = _scenario(tmp_path, _lines())
    notes: list[str] = []
    assert discover([tmp_path], notes=notes) == [dsh]
    assert notes == [f"one session in two files under {tmp_path}/: read {dsh.relative_to(tmp_path)}, not {plain.relative_to(tmp_path)} (the same lines)"]
    # The file DSH reads is kept whichever comes first.
    assert discover([plain, dsh]) == [dsh]


def test_of_a_copy_and_the_log_it_was_taken_from_the_longer_is_read(tmp_path: Path) -> None:
    lines = _lines().splitlines(keepends=True)
    dsh, plain = _scenario(tmp_path, b"".join(lines))
    frames = zstandard.ZstdCompressor()  # as DSH writes: the header alone in the first frame
    dsh.write_bytes(frames.compress(lines[0]) + frames.compress(b"".join(lines[1:10])))  # an older state
    notes: list[str] = []
    assert discover([tmp_path], notes=notes) == [plain]
    assert notes == [f"one session in two files under {tmp_path}/: read {plain.relative_to(tmp_path)}, not {dsh.relative_to(tmp_path)} (the other's lines and more)"]


def test_copies_that_differ_are_both_read(tmp_path: Path) -> None:
    lines = _lines().splitlines(keepends=True)
    record = json.loads(lines[-1])
    record["time"] += 1
    dsh, plain = _scenario(tmp_path, b"".join(lines[:-1]) + json.dumps(record).encode() + b"\n")
    notes: list[str] = []
    assert discover([tmp_path], notes=notes) == [dsh, plain]
    assert notes == [f"session session-sample-change is in 2 files, each listed: {dsh}, {plain}"]  # session 39


def test_a_child_snapshot_beside_its_parent_is_not_a_copy(tmp_path: Path) -> None:
    folder = tmp_path / "snap"
    folder.mkdir()
    (folder / "session.jsonl").write_bytes(_lines())
    (folder / "session.1.jsonl").write_bytes(_lines())
    assert discover([folder]) == [folder / "session.1.jsonl", folder / "session.jsonl"]


def test_an_unreadable_copy_is_kept_for_its_reading_to_report(tmp_path: Path) -> None:
    dsh, plain = _scenario(tmp_path, b"")
    plain.unlink()
    plain.mkdir()  # a folder named like a log: not a copy, and no log is found in it
    assert discover([tmp_path]) == [dsh]
    plain.rmdir()
    plain.write_bytes(b"\x28\xb5\x2f\xfd not zstd")  # corrupt: its own reading says so
    assert discover([tmp_path]) == [dsh, plain]


def test_every_command_reads_the_session_once_and_says_which_file(tmp_path: Path, monkeypatch, capsys) -> None:
    dsh, plain = _scenario(tmp_path, _lines())
    note = (f"note: one session in two files under {tmp_path}/: read {dsh.relative_to(tmp_path)}, "
            f"not {plain.relative_to(tmp_path)} (the same lines)")
    for command in (["requests", "--json"], ["breaks", "--json"], ["cache", "--json"], ["validate"],
                    ["sessions", "--json"], ["usage", "--json"], ["check"]):
        code, out, err = invoke(monkeypatch, capsys, *command, str(tmp_path))
        assert (command[0], code, note in err) == (command[0], 0 if command[0] != "breaks" else code, True), err
        assert str(plain) not in out, command


@needs_corpus
@pytest.mark.parametrize("scenario", ["live/b-tools", "live/f-fork", "live-pi/c1-anthropic-tools"])
def test_diff_of_a_whole_scenario_folder_matches_every_capture(scenario: str, monkeypatch, capsys) -> None:
    """The done-when of route selection: ``diff ROOT --capture wire.jsonl`` with no flag, on the
    scenario folder (DSH's home and the exports beside it)."""
    root = CORPUS / scenario
    code, out, err = invoke(monkeypatch, capsys, "diff", str(root), "--capture", str(root / "wire.jsonl"), "--json")
    verdicts = {json.loads(line)["verdict"] for line in out.splitlines()}
    assert (code, verdicts) == (0, {"identical"}), err
    assert all(line.startswith((f"note: one session in two files under {root}/: read home/",
                                f"note: 2 sessions found in two files each (the same lines): each read once, from the "
                                f"file DSH reads; e.g. under {root}/: read home/")) for line in err), err


def test_a_copy_named_otherwise_beside_a_dsh_home_is_found_by_its_header(tmp_path: Path) -> None:
    dsh, _ = _scenario(tmp_path, _lines())
    (tmp_path / "session-logs" / "session-sample-change.jsonl").unlink()
    plain = tmp_path / "change" / "session.jsonl"  # a session folder copied out and renamed
    plain.parent.mkdir()
    plain.write_bytes(_lines())
    notes: list[str] = []
    assert discover([tmp_path], notes=notes) == [dsh]
    assert notes == [f"one session in two files under {tmp_path}/: read {dsh.relative_to(tmp_path)}, not {plain.relative_to(tmp_path)} (the same lines)"]


def test_a_dsh_home_alone_is_not_read_to_find_copies(tmp_path: Path, monkeypatch) -> None:
    """Where every log is where DSH keeps it, the folder names say which session each holds."""
    dsh, plain = _scenario(tmp_path, _lines())
    plain.unlink()
    seen: list[Path] = []
    monkeypatch.setattr("dsh_audit.log._copies._header_id", seen.append)
    assert (discover([tmp_path]), seen) == ([dsh], [])


def test_snapshot_fixtures_sharing_the_token_id_are_not_copies(tmp_path: Path) -> None:
    """DSH's snapshot normaliser writes ``{{sessionId}}`` into every fixture: it names no session."""
    dsh, _ = _scenario(tmp_path, b"")
    (tmp_path / "session-logs" / "session-sample-change.jsonl").unlink()
    header = b'{"type":"session","version":0,"id":"{{sessionId}}","createdAt":0,"cwd":"/w","delegationDepth":0}\n'
    for name in ("a", "b"):
        (tmp_path / "fixtures" / name).mkdir(parents=True)
        (tmp_path / "fixtures" / name / "session.jsonl").write_bytes(header)
    assert discover([tmp_path]) == [tmp_path / "fixtures" / "a" / "session.jsonl",
                                    tmp_path / "fixtures" / "b" / "session.jsonl", dsh]


def test_many_files_of_one_session_name_are_read_once_without_comparing_them_two_by_two(tmp_path: Path,
                                                                                       monkeypatch) -> None:
    """Comparing them two by two would read each as often as there are others (fuzz round 8: 200
    logs of one id took 159 s): they are compared by digests of their lines (session 38,
    ``test_copies38.py``), never two by two, and six copies are one log."""
    dsh, plain = _scenario(tmp_path, _lines())
    for n in range(4):
        (tmp_path / "session-logs" / f"copy{n}").mkdir()
        shutil.copy(plain, tmp_path / "session-logs" / f"copy{n}" / plain.name)
    read: Counter[Path] = Counter()  # each file's reads for its digests: at most twice, however many copies
    real = _prints._digests
    monkeypatch.setattr(_prints, "_digests", lambda path, at: (read.update([Path(path)]), real(path, at))[1])
    assert discover([tmp_path]) == [dsh]
    assert len(read) == 6 and max(read.values()) <= 2


def test_a_copy_not_read_again_is_still_never_written(tmp_path: Path, monkeypatch, capsys) -> None:
    """It is evidence like the log read: an output pointed at it is refused, the file unchanged."""
    _, plain = _scenario(tmp_path, _lines())
    before = plain.read_bytes()
    for argv, what in ((["check", str(tmp_path), "--json-report", str(plain)], "the JSON report"),
                       (["report", str(tmp_path), "-o", str(plain)], "the HTML report"),
                       (["validate", str(tmp_path), "--sarif", str(plain)], "the SARIF report"),
                       (["index", str(tmp_path), "--db", str(plain)], "the index")):
        code, out, err = invoke(monkeypatch, capsys, *argv)
        assert (code, out, err[-1].startswith(f"error: {plain}: {what} would overwrite the input ")) == (
            2, "", True), (argv, err)
        assert plain.read_bytes() == before


# -- issue 15: a renamed, partial copy of an export is a copy too ----------------------------------


def _exports(folder: Path, *, full: str, partial: str, upto: int) -> tuple[Path, Path]:
    """Two exports of one session under names of their own: ``full`` holds every line (zstd when
    its name says so, in frames as DSH writes them), ``partial`` (plain) the first ``upto``."""
    lines = _lines().splitlines(keepends=True)
    folder.mkdir(parents=True, exist_ok=True)
    whole, part = folder / full, folder / partial
    frames = zstandard.ZstdCompressor()
    whole.write_bytes(frames.compress(lines[0]) + frames.compress(b"".join(lines[1:]))
                      if full.endswith(".zstd") else b"".join(lines))
    part.write_bytes(b"".join(lines[:upto]))
    return whole, part


def test_a_renamed_partial_export_of_another_size_is_read_once_as_the_longer(tmp_path: Path, monkeypatch) -> None:
    """An export taken earlier under another name has a size no other export has. It was read as a
    session of its own, its header not opened (issue 11); but ``sessions`` and ``watch``, which read
    every header, counted one session where ``usage`` and ``index`` counted two (fuzz round 23). A
    name that does not say its session as DSH names it has its header read now: one session, the
    longer file read, the one note (``test_copies39c.py``)."""
    whole, part = _exports(tmp_path / "x", full="mine.jsonl.zstd", partial="taken-early.jsonl", upto=10)
    seen: list[Path] = []
    real = _copies._header_id
    monkeypatch.setattr(_copies, "_header_id", lambda path: (seen.append(path), real(path))[1])
    notes: list[str] = []
    assert (discover([tmp_path], notes=notes), notes, sorted(seen)) == (
        [whole], [f"one session in two files under {tmp_path}/x/: read mine.jsonl.zstd, not taken-early.jsonl "
                  "(the other's lines and more)"], [whole, part])


def test_exports_of_other_sessions_or_other_lines_are_each_read(tmp_path: Path, monkeypatch) -> None:
    lines = _lines().splitlines(keepends=True)
    whole, part = _exports(tmp_path, full="a.jsonl", partial="b.jsonl", upto=10)
    record = json.loads(lines[5])
    record["time"] += 1  # the same session, a line that differs: not a copy
    part.write_bytes(b"".join(lines[:5]) + json.dumps(record).encode() + b"\n")
    notes: list[str] = []
    # Both headers are read (their names are not DSH's): one session whose lines differ, listed
    # twice with the note ``sessions`` says of it (fuzz round 23; it was no note, neither opened).
    assert (discover([tmp_path], notes=notes), notes) == ([whole, part], [
        f"session session-sample-change is in 2 files, each listed: {whole}, {part}"])
    notes.clear()
    header = json.loads(lines[0])
    header["id"] = "another"  # another session whose lines are otherwise the first ones: never compared
    part.write_bytes(json.dumps(header, separators=(",", ":")).encode() + b"\n" + b"".join(lines[1:10]))
    compared: list[Path] = []  # another session: no file's lines are read for digests
    monkeypatch.setattr(_prints, "_digests", lambda path, at: compared.append(path))
    assert (discover([tmp_path], notes=notes), notes, compared) == ([whole, part], [], [])


def test_an_export_alone_is_not_opened_to_find_copies(tmp_path: Path, monkeypatch) -> None:
    """One export among DSH's logs, or alone: its name says nothing of a copy, its header is not read."""
    whole, _ = _exports(tmp_path, full="a.jsonl", partial="b.jsonl", upto=3)
    (tmp_path / "b.jsonl").unlink()
    seen: list[Path] = []
    monkeypatch.setattr("dsh_audit.log._copies._header_id", seen.append)
    assert (discover([tmp_path]), seen) == ([whole], [])


def test_the_cli_reads_a_renamed_whole_export_once_and_says_so(tmp_path: Path, monkeypatch, capsys) -> None:
    whole, part = _exports(tmp_path, full="s.jsonl", partial="s-copy.jsonl", upto=10**6)
    code, out, err = invoke(monkeypatch, capsys, "requests", "--json", str(tmp_path))
    assert (code, err) == (0, [f"note: one session in two files under {tmp_path}/: read s-copy.jsonl, "
                               "not s.jsonl (the same lines)"])
    alone = invoke(monkeypatch, capsys, "requests", "--json", str(part))
    assert alone[:2] == (0, out)
