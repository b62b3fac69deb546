"""``dsh-audit watch`` (fuzz round 22): a log renamed or copied beside itself is counted once, and
a PATH that is a FIFO is refused as every command refuses it.

A log moved to another name in its own folder (``mv s.jsonl t.jsonl``) was followed again from its
first byte (its requests shown twice, and its deletion an error), and an identical copy beside it
(``cp s.jsonl copy.jsonl``) was followed instead of it, whole: a file appearing beside a followed
log was taken for that folder's own newer generation, never gated until its session was known, and
of two files with the same lines the first by name was read, not the one followed. Now a file
beside a followed log that DSH does not name so (an export) waits, as one in another folder does,
until the watch has decided which file of its session it follows. Real file watching, in process,
by polling and by notifications (both go through that one decision); the renamed and copied
files sort before the log, so that the order of names decides nothing.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from _cli import invoke
from test_watch_copies import _notes, _requests, _summary
from test_watch_copies38 import _errors, _started, _turns
from test_watch_fixes import _append, _drive, _note, _request, _watching

from dsh_audit.errors import UnreadableError
from dsh_audit.watch import WatchNote, watch

MODES = pytest.mark.parametrize("notifications", [False, True], ids=["polling", "notifications"])
ONCE = {"sessions": 1, "requests": 4, "breaks": 0, "errors": 0}


def _log(tmp_path: Path) -> Path:
    """The followed log: an export (a name DSH does not give) in the watched folder."""
    folder = tmp_path / "sessions"
    folder.mkdir(parents=True)
    return folder / "s.jsonl"


def _moved_note(before: Path, after: Path) -> str:
    return f"{before}: moved: now read from {after}, from where this file stopped"


@MODES
@pytest.mark.parametrize("later", [False, True], ids=["grown-at-once", "grown-later"])
def test_a_log_renamed_in_its_folder_goes_on_where_it_was(tmp_path: Path, notifications: bool,
                                                          later: bool) -> None:
    """The repro (move): two requests shown, the log renamed in its folder, then two more written
    to the new name (at once, or once the watch saw the new name, which holds the same lines):
    each request once, a ``moved`` note, no error, no second ``started`` note."""
    pieces, log = _turns(4), _log(tmp_path)
    moved = log.with_name("m.jsonl")

    def rename() -> None:
        os.rename(log, moved)
        if not later:
            _append(moved, b"".join(pieces[2:]))()

    steps = [(_watching, lambda: log.write_bytes(b"".join(pieces[:2]))), (_request(1), rename)]
    if later:
        steps.append((_note("note", "moved"), _append(moved, b"".join(pieces[2:]))))
    items = _drive(tmp_path, [*steps, (_request(3), lambda: None)], rescan=0.1, notifications=notifications)
    assert _requests(items) == [(0, str(log)), (1, str(log)), (2, str(moved)), (3, str(moved))]
    assert _notes(items) == [_moved_note(log, moved)]
    assert _errors(items) == []
    assert _started(items) == [str(log)]
    assert _summary(items) == ONCE


@MODES
def test_a_log_found_at_the_start_and_renamed_is_not_read_again(tmp_path: Path, notifications: bool) -> None:
    """The repro as run: the log holds two requests when the watch starts (history, printed by
    ``since``), is renamed, then grows by two: the history once, the new requests from the new name."""
    pieces, log = _turns(4), _log(tmp_path)
    log.write_bytes(b"".join(pieces[:2]))
    moved = log.with_name("m.jsonl")

    def rename() -> None:
        os.rename(log, moved)
        _append(moved, b"".join(pieces[2:]))()

    items = _drive(tmp_path, [(_request(1), rename), (_request(3), lambda: None)], since=0.0, rescan=0.1,
                   notifications=notifications)
    assert _requests(items) == [(0, str(log)), (1, str(log)), (2, str(moved)), (3, str(moved))]
    assert _notes(items) == [_moved_note(log, moved)]
    assert (_errors(items), _started(items), _summary(items)) == ([], [str(log)], ONCE)


@MODES
def test_a_copy_beside_the_log_shows_nothing(tmp_path: Path, notifications: bool) -> None:
    """The repro (copy): the whole log shown, then copied beside itself under a name that sorts
    first: one note saying the log is read, none of the copy's requests, 4 requests counted, not 8.
    Then the log grows: its requests, still from the log."""
    pieces, log = _turns(6), _log(tmp_path)
    copy = log.with_name("copy.jsonl")
    items = _drive(tmp_path, [(_watching, lambda: log.write_bytes(b"".join(pieces[:4]))),
                              (_request(3), lambda: shutil.copyfile(log, copy)),
                              (_note("note"), _append(log, b"".join(pieces[4:]))),
                              (_request(5), lambda: None)],
                   rescan=0.1, notifications=notifications)
    assert _notes(items) == [f"one session in two files under {tmp_path}/sessions/: read s.jsonl, not copy.jsonl "
                             "(the same lines)"]
    assert _requests(items) == [(index, str(log)) for index in range(6)]
    assert _started(items) == [str(log)]
    assert _summary(items) == {**ONCE, "requests": 6}


def test_moves_in_a_row_count_each_request_once(tmp_path: Path) -> None:
    """Several tries of the move by polling (the order in which the deletion and the new name are
    seen differs from one to the next): every time each request once and no error."""
    pieces = _turns(3)
    for attempt in range(3):
        root = tmp_path / str(attempt)
        log = _log(root)
        moved = log.with_name("m.jsonl")

        def rename(log: Path = log, moved: Path = moved) -> None:
            os.rename(log, moved)
            _append(moved, pieces[2])()

        items = _drive(root, [(_watching, lambda log=log: log.write_bytes(b"".join(pieces[:2]))),
                              (_request(1), rename), (_request(2), lambda: None)],
                       rescan=0.05, notifications=False)
        assert _requests(items) == [(0, str(log)), (1, str(log)), (2, str(moved))], attempt
        assert (_errors(items), _summary(items)) == ([], {**ONCE, "requests": 3}), attempt


# -- a PATH that is a FIFO -----------------------------------------------------------------------


def test_a_fifo_path_is_refused_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    """``watch ff.jsonl`` of a FIFO: what ``requests ff.jsonl`` says, exit 2 (it was "no watched
    folder exists yet", then an error without a hint, exit 0); nothing on stdout, with --json too."""
    monkeypatch.chdir(tmp_path)
    os.mkfifo("ff.jsonl")
    refusal = ["error: ff.jsonl: is a FIFO, not a log file (hint: only regular files are read)"]
    assert invoke(monkeypatch, capsys, "requests", "ff.jsonl") == (2, "", refusal)
    assert invoke(monkeypatch, capsys, "watch", "ff.jsonl", "--exit-after", "5") == (2, "", refusal)
    assert invoke(monkeypatch, capsys, "watch", "ff.jsonl", "--json", "--polling", "--exit-after", "5") == (
        2, "", refusal)


def test_a_fifo_under_a_folder_is_one_error_with_the_same_wording(tmp_path: Path) -> None:
    """A FIFO found under the watched folder is an ``error`` item worded as the refusal of a PATH
    (its kind and the hint); the watch goes on; the API raises for a FIFO given as a path."""
    folder = tmp_path / "sessions"
    folder.mkdir()
    os.mkfifo(folder / "p.jsonl")
    items = list(watch([folder], exit_after=0.5, poll=0.02, notifications=False))
    said = [(item.level, item.message) for item in items if isinstance(item, WatchNote) and item.level != "watching"]
    assert said == [("error", f"{folder / 'p.jsonl'}: is a FIFO, not a log file (hint: only regular files are read)")]
    with pytest.raises(UnreadableError) as caught:
        next(iter(watch([folder / "p.jsonl"], exit_after=0.5)))
    assert str(caught.value) == f"{folder / 'p.jsonl'}: is a FIFO, not a log file (hint: only regular files are read)"
