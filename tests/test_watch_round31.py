"""``dsh-audit watch`` over a copy of a session that stops being one (fuzz round 11).

DSH's log and a copy of it (an export holding the same lines, or its first part) are followed once,
in the log, with a note. When the copy then grows by a line that is not the log's (garbage, bytes
that are not UTF-8) it no longer holds only the log's lines, and discovery keeps both files: the
watch used to follow the copy as a second log of the session from its first byte, showing its
requests again (7 requests, 5 breaks for a session of 5 and 4). Now the copy stays left out, one
note naming both files says it differs, and each request is shown and counted once; a copy that
differs still takes the place of the log when the log goes, from the request where the log stopped.
Real file watching, in process (as ``test_watch_copies.py``); the corpus session is c-change (8
requests, 5 breaks).
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from test_watch import PLAIN, ZSTD
from test_watch_copies import HALF, ONCE, SID, _export, _layout, _lines, _notes, _requests, _summary
from test_watch_fixes import _append, _drive, _note, _request, _wait_for

from dsh_audit.watch import WatchNote

needs_corpus = pytest.mark.skipif(not PLAIN or not ZSTD, reason="the DSH corpus is not present")
TWO_TURNS = 45  # lines of c-change: its first two turns (2 requests)
DIFFERS = "it held the other's lines and now differs from them"


def _said(tmp_path: Path) -> list[str]:
    """The notes of the log read instead of its export: it holds the export's lines and more, then
    the export differs."""
    return [f"one session in two files under {tmp_path}/sessions/: read --p--/{SID}/session.jsonl, "
            f"not exports/{SID}.jsonl (the other's lines and more)",
            f"one session in two files under {tmp_path}/sessions/: read --p--/{SID}/session.jsonl, "
            f"not exports/{SID}.jsonl ({DIFFERS}: it is not followed, so no request is shown twice)"]


@needs_corpus
@pytest.mark.parametrize("extra", [b"not json\n", b"\xff\xfe\n"], ids=["garbage", "not-utf8"])
def test_a_copy_that_starts_to_differ_is_not_followed_from_its_start(tmp_path: Path, extra: bytes) -> None:
    """The repro: the export holds the log's first two turns, then grows by a line the log does not
    hold; it stays left out (one note naming both files, said once though it changes again), the
    log goes on being followed, each request shown and counted once."""
    lines, live, export = _lines(), _layout(tmp_path), _export(tmp_path)
    live.write_bytes(b"".join(lines[:HALF]))
    export.write_bytes(b"".join(lines[:TWO_TURNS]))
    items = _drive(tmp_path, [(_note("note"), _append(export, extra)),
                              (_note("note", DIFFERS), _append(live, b"".join(lines[HALF:]))),
                              (_request(5), _append(export, b"more garbage\n")), (_request(7), lambda: None)],
                   since=0.0, rescan=0.05)
    assert _notes(items) == _said(tmp_path)
    assert _requests(items) == [(index, str(live)) for index in range(8)]
    assert [item.level for item in items if isinstance(item, WatchNote)] == ["watching", "note", "started", "note"]
    assert _summary(items) == ONCE


@needs_corpus
def test_a_copy_that_differs_takes_the_place_of_the_log_that_goes(tmp_path: Path) -> None:
    """The export differs from the log, then the log is moved away: the export is followed in its
    place from the request where the log stopped, never from its first byte (its two turns were
    shown from the log; its odd line is reported as DSH would read it, once the watch ends)."""
    lines, live, export = _lines(), _layout(tmp_path), _export(tmp_path)
    live.write_bytes(b"".join(lines[:HALF]))
    export.write_bytes(b"".join(lines[:TWO_TURNS]))

    stop = threading.Event()

    def followed() -> None:
        """Once the export's follower has started (it shows nothing: its requests were shown from
        the log), the watch is stopped; the export's odd line is reported as it ends."""
        _wait_for(lambda: any(thread.name == f"watch {export.name}" for thread in threading.enumerate()))
        stop.set()

    def move() -> None:
        live.unlink()
        threading.Thread(target=followed, daemon=True).start()

    items = _drive(tmp_path, [(_note("note"), _append(export, b"not json\n")), (_note("note", DIFFERS), move),
                              (_note("warning"), lambda: None)], stop=stop, since=0.0, rescan=0.05)
    assert _notes(items) == [*_said(tmp_path), f"{live}: deleted; its session is now read from {export}, a copy "
                                               "of it, from where this file stopped"]
    assert _requests(items) == [(index, str(live)) for index in range(3)]
    assert [(item.level, item.path) for item in items if isinstance(item, WatchNote) and item.level != "note"] == [
        ("watching", str(tmp_path / "sessions")), ("started", str(live)), ("warning", str(export))]
    assert _summary(items) == {"sessions": 1, "requests": 3, "breaks": 1, "errors": 0}
