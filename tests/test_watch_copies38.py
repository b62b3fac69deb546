"""``dsh-audit watch`` never shows or counts a request twice when a followed log is copied or moves
(fuzz round 20, defect 6).

A copy of a followed log written into another session folder (whose name, unlike an export's,
says another session: its session is known only once its header is read) used to be followed from
its first byte: its requests were shown again before the note saying it was not followed, and the
summary counted them twice; a log deleted here and written again there was shown whole again. Now
a log that appears while watching, whose session is not known, shows nothing past its ``started``
note until the watch has decided which file of that session it follows: a copy shows nothing, a
copy that grows past the followed log takes its place from the request where it stopped, and a
moved log goes on where it was. Real file watching, in process (as ``test_watch_copies.py``), by
polling and by notifications; the copy's folder sorts before the log's, so that discovery's order
does not decide which file is followed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_watch_copies import _notes, _requests, _summary
from test_watch_fixes import _append, _drive, _note, _request, _watching

from dsh_audit.testing import LogBuilder
from dsh_audit.watch import WatchItem, WatchNote
from dsh_audit.watch import _watch as _watch_module

SID = "session-c38"
MODES = pytest.mark.parametrize("notifications", [False, True], ids=["polling", "notifications"])


def _turns(count: int) -> list[bytes]:
    """A chat of ``count`` turns, one request each, as the bytes each turn adds (the header with the first)."""
    b = LogBuilder(session_id=SID, created_at=1_800_000_000_000)
    pieces, written = [], 0
    for turn in range(count):
        b.clock.now = 1_800_000_000_000 + turn * 600_000
        with b.turn(f"turn {turn}"), b.step():
            b.assistant(f"answer {turn}", usage={"inputTokens": 100, "outputTokens": 5, "cacheReadTokens": 0})
        lines = b.lines(packed=False)
        pieces.append("".join(line + "\n" for line in lines[written:]).encode())
        written = len(lines)
    return pieces


def _files(tmp_path: Path) -> tuple[Path, Path]:
    """The followed log, and where its copy goes: two session folders, the copy's listed first."""
    project = tmp_path / "sessions" / "--p--"
    log, copy = project / "x" / "session.jsonl", project / "a" / "session.jsonl"
    log.parent.mkdir(parents=True)
    copy.parent.mkdir()
    return log, copy


def _started(items: list[WatchItem]) -> list[str]:
    return [item.path for item in items if isinstance(item, WatchNote) and item.level == "started"]


def _errors(items: list[WatchItem]) -> list[str]:
    return [item.message for item in items if isinstance(item, WatchNote) and item.level == "error"]


def _note_text(tmp_path: Path, read: str, left: str, why: str) -> str:
    return (f"one session in two files under {tmp_path}/sessions/--p--/: read {read}/session.jsonl, "
            f"not {left}/session.jsonl ({why})")


ONCE = {"sessions": 1, "requests": 4, "breaks": 0, "errors": 0}


@MODES
def test_a_copy_in_another_session_folder_shows_nothing(tmp_path: Path, notifications: bool) -> None:
    """The repro (mode keep): the log is written while watching (4 requests shown), then an
    identical copy in another session folder: one note, and none of the copy's requests, nor its
    ``started`` note; the summary counts 4 requests, not 8."""
    pieces, (log, copy) = _turns(4), _files(tmp_path)
    items = _drive(tmp_path, [(_watching, lambda: log.write_bytes(b"".join(pieces))),
                              (_request(3), lambda: copy.write_bytes(b"".join(pieces))),
                              (_note("note"), lambda: None)],
                   rescan=0.1, notifications=notifications)
    assert _notes(items) == [_note_text(tmp_path, "x", "a", "the same lines")]
    assert _requests(items) == [(index, str(log)) for index in range(4)]
    assert _started(items) == [str(log)]
    assert _summary(items) == ONCE
    assert [item.level for item in items if isinstance(item, WatchNote)] == ["watching", "started", "note"]


@MODES
def test_a_copy_that_is_written_to_goes_on_where_the_log_stopped(tmp_path: Path, notifications: bool) -> None:
    """The copy (the same two requests) is then the file written to: it takes the log's place
    from request 2, with a second note; every request once."""
    pieces, (log, copy) = _turns(4), _files(tmp_path)
    items = _drive(tmp_path, [(_watching, lambda: log.write_bytes(b"".join(pieces[:2]))),
                              (_request(1), lambda: copy.write_bytes(b"".join(pieces[:2]))),
                              (_note("note"), _append(copy, b"".join(pieces[2:]))),
                              (_request(3), lambda: None)],
                   rescan=0.1, notifications=notifications)
    assert _notes(items) == [_note_text(tmp_path, "x", "a", "the same lines"),
                             _note_text(tmp_path, "a", "x", "the other's lines and more")]
    assert _requests(items) == [(0, str(log)), (1, str(log)), (2, str(copy)), (3, str(copy))]
    assert _started(items) == [str(log)]
    assert _summary(items) == ONCE


@MODES
def test_a_longer_copy_takes_the_place_of_the_log_at_once(tmp_path: Path, notifications: bool) -> None:
    """The copy holds the log's two requests and two more when it appears: it is followed from
    request 2 on, the log left out, with one note; its ``started`` note is not shown again."""
    pieces, (log, copy) = _turns(4), _files(tmp_path)
    items = _drive(tmp_path, [(_watching, lambda: log.write_bytes(b"".join(pieces[:2]))),
                              (_request(1), lambda: copy.write_bytes(b"".join(pieces))),
                              (_request(3), lambda: None)],
                   rescan=0.1, notifications=notifications)
    assert _notes(items) == [_note_text(tmp_path, "a", "x", "the other's lines and more")]
    assert _requests(items) == [(0, str(log)), (1, str(log)), (2, str(copy)), (3, str(copy))]
    assert _started(items) == [str(log)]
    assert _summary(items) == ONCE


@pytest.fixture
def short_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    """A deleted log's error held 0.3 s, not the 2 s floor (``_Watch.grace``): the test below waits
    for the error before it writes the log again, so the wait was the whole 2 s each time; the order
    of events, and what is asserted of it, is the same."""
    init = _watch_module._Watch.__init__

    def shorter(self: _watch_module._Watch, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        self.grace = 0.3

    monkeypatch.setattr(_watch_module._Watch, "__init__", shorter)


@MODES
@pytest.mark.parametrize("more", [False, True], ids=["same-lines", "and-more"])
@pytest.mark.usefixtures("short_grace")
def test_a_moved_log_goes_on_where_it_was(tmp_path: Path, notifications: bool, more: bool) -> None:
    """The repro (mode delete-then-new): the log is deleted once it has shown two requests, then
    written in another session folder (the same lines, then two more, at once or later): it goes
    on from request 2. Written only once the deletion was reported (an error: no file of the session
    went on from it in time), it still goes on where the log was (a move in time is a note:
    test_fuzz21_fixes.py)."""
    pieces, (log, copy) = _turns(4), _files(tmp_path)

    def moved() -> None:
        copy.write_bytes(b"".join(pieces if more else pieces[:2]))
        if not more:
            _append(copy, b"".join(pieces[2:]))()

    items = _drive(tmp_path, [(_watching, lambda: log.write_bytes(b"".join(pieces[:2]))),
                              (_request(1), log.unlink),
                              (_note("error", "deleted"), moved),
                              (_request(3), lambda: None)],
                   rescan=0.1, notifications=notifications)
    assert _errors(items) == [f"{log}:30: the log was deleted while it was watched (hint: its requests shown stay "
                              "counted; a file written at its path is read from its first byte, and its session "
                              "written again elsewhere under the watched paths goes on where it stopped; with "
                              "--polling, --rescan sets how often it is looked for)"]  # written again too late
    assert _requests(items) == [(0, str(log)), (1, str(log)), (2, str(copy)), (3, str(copy))]
    assert _started(items) == [str(log)]
    assert _notes(items) == []
    assert _summary(items) == {**ONCE, "errors": 1}
