"""``dsh-audit watch`` over many logs, and over a log written in small pieces (fuzz round 14, D5, D8).

D5: a watch over a root of a few thousand logs ran one thread per log, each polling its file; they
starved the loop that checks ``--exit-after`` and Ctrl-C (34 s at 3,000 logs, minutes at 5,000).
Now a bounded number of readers run (``readers``); of the logs found at the start only those
written last are read whole, the others' headers only, and a log no thread reads is looked at with
a ``stat`` until it changes, then read again from its start, silently up to where it stood.

D8: with ``--settle 0`` every pause of the writer is a torn tail; a request shown there before its
usage record was written was left out when the log was read again, so its cost never came (a
different summary each run), and a log empty (or half a header) when first read was an error. Now
such a request is ``provisional`` and comes again as an ``update`` that the summary counts in its
place, and a log that is not a log yet is no error.

Real file watching, in process (as ``test_watch_fixes.py``); the settle-0 case writes the corpus
session a-chat (3 requests: a title call with no usage logged, two priced) at chosen cuts.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log
from test_watch import LIVE
from test_watch_fixes import SAFETY, _append, _drive, _note

from dsh_audit.cli._watch import _Hooks, format_watch_line
from dsh_audit.testing import LogBuilder
from dsh_audit.watch import WatchItem, WatchNote, WatchRequest, WatchSummary, watch

CHAT = sorted(LIVE.glob("a-chat/session-logs/*.jsonl"))


def _turns(session_id: str, count: int) -> list[bytes]:
    """A chat of ``count`` turns (one request each) as the bytes each turn adds (the header with
    the first)."""
    builder, pieces, written = LogBuilder(session_id=session_id), [], 0
    for turn in range(count):
        with builder.turn(f"turn {turn}"), builder.step():
            builder.assistant(f"answer {turn}")
        lines = builder.lines(packed=False)
        pieces.append("".join(line + "\n" for line in lines[written:]).encode())
        written = len(lines)
    return pieces


def _log(root: Path, session_id: str, data: bytes, *, mtime: float) -> Path:
    path = root / "--p--" / session_id / "session.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))
    return path


def _shown(items: list[WatchItem]) -> list[tuple[str, int]]:
    return [(item.session_id, item.index) for item in items if isinstance(item, WatchRequest)]


def _counted(items: list[WatchItem]) -> dict[str, Any]:
    summary = WatchSummary()
    for item in items:
        summary.add(item)
    return summary.to_json()


def test_a_watch_over_hundreds_of_logs_runs_a_few_threads(tmp_path: Path) -> None:
    """300 sessions of a header each and one chat, the oldest: every header is read (a ``started``
    note each), yet never more than ``readers`` threads read at once (before: 301); the chat grows
    and its new request is shown (its first is history), an idle reader giving its place up."""
    root = tmp_path / "sessions"
    header = _turns("x", 1)[0].split(b"\n", 1)[0]
    for n in range(300):
        sid = f"s{n:03d}"
        _log(root, sid, header.replace(b'"id":"x"', f'"id":"{sid}"'.encode()) + b"\n", mtime=1_700_000_000 + n)
    first, second = _turns("grow", 2)
    grow = _log(root, "grow", first, mtime=1_600_000_000)  # the oldest: only its header is read at the start
    before, most = threading.active_count(), 0
    stop, items, started = threading.Event(), [], set()
    for item in watch([root], stop=stop, readers=4, poll=0.02, rescan=0.05, notifications=False, exit_after=SAFETY):
        most = max(most, threading.active_count())
        items.append(item)
        if isinstance(item, WatchNote) and item.level == "started":
            started.add(item.session_id)
            if len(started) == 301:
                _append(grow, second)()
        elif isinstance(item, WatchRequest):
            stop.set()
    assert len(started) == 301 and _shown(items) == [("grow", 1)]
    assert most <= before + 4 + 2  # the readers, the header reader, and one ending as another starts
    assert {k: _counted(items)[k] for k in ("sessions", "requests", "errors")} == {
        "sessions": 301, "requests": 1, "errors": 0}


def test_a_log_whose_reader_retired_is_read_again_from_where_it_stood(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """One reader for two chats: each time one grows the other's reader retires (the newer one at
    once: it never grew; then after it read nothing for a while), and the log that grows is read
    again from its start, showing only its new request; no ``started`` note is said twice."""
    monkeypatch.setattr("dsh_audit.watch._readers._HOLD", 0.1)
    root = tmp_path / "sessions"
    a_turns, b_turns = _turns("a", 3), _turns("b", 2)
    a = _log(root, "a", a_turns[0], mtime=1_600_000_000)
    b = _log(root, "b", b_turns[0], mtime=1_700_000_000)  # written last: read whole at the start

    def shown(sid: str, index: int) -> Any:
        return lambda item: isinstance(item, WatchRequest) and (item.session_id, item.index) == (sid, index)

    started = [0]

    def both_started(item: WatchItem) -> bool:
        started[0] += isinstance(item, WatchNote) and item.level == "started"
        return started[0] == 2

    items = _drive(tmp_path, [(both_started, _append(a, a_turns[1])), (shown("a", 1), _append(b, b_turns[1])),
                              (shown("b", 1), _append(a, a_turns[2])), (shown("a", 2), lambda: None)],
                   readers=1, rescan=0.05, notifications=False)
    assert _shown(items) == [("a", 1), ("b", 1), ("a", 2)]
    assert sorted(item.session_id or "" for item in items if isinstance(item, WatchNote) and item.level == "started") \
        == ["a", "b"]
    assert _counted(items)["requests"] == 3


@pytest.mark.skipif(not CHAT, reason="the DSH corpus is not present")
def test_settle_zero_prices_a_request_shown_before_its_usage(tmp_path: Path) -> None:
    """a-chat written in three pieces with --settle 0: half its header (there when the watch
    starts), then up to the middle of request 1's usage record, then all but the end of its last
    line. Request 1 is shown where its bytes stopped (provisional, unpriced), then as an update
    with its cost; the summary is the session's (3 requests, 1 unpriced, $0.001261008), and
    neither the half header nor a log still empty at the end is an error."""
    data = CHAT[0].read_bytes()
    lines = data.splitlines(keepends=True)
    usage = sum(map(len, lines[:21])) + 40  # inside line 22, request 1's usage chunk
    last = len(data) - 20  # inside line 44, the last (turn/end)
    root = tmp_path / "sessions"
    log = _log(root, "a-chat", data[:30], mtime=time.time())
    _log(root, "empty", b"", mtime=time.time())

    def written(start: int, end: int, *, pause: float = 0.0) -> Any:
        def write() -> None:
            time.sleep(pause)  # the half header is read first (what is asserted holds either way)
            with open(log, "ab") as handle:
                handle.write(data[start:end])
        return write

    def provisional(item: WatchItem) -> bool:
        return isinstance(item, WatchRequest) and item.index == 1 and item.provisional

    items = _drive(tmp_path, [(_note("watching"), written(30, usage, pause=0.3)),
                              (provisional, written(usage, last)),
                              (_note("warning", "torn tail: line 44 "), lambda: None)],
                   settle=0.0, rescan=0.05, notifications=False)
    assert [item.message for item in items if isinstance(item, WatchNote) and item.level == "error"] == []
    ones = [item for item in items if isinstance(item, WatchRequest) and item.index == 1]
    assert [(one.cost, one.update) for one in (ones[0], ones[-1])] == [(None, False), (0.00121275, True)]
    assert ones[0].provisional and all(one.update for one in ones[1:])  # shown once, then only updated
    assert sorted({item.index for item in items if isinstance(item, WatchRequest)}) == [0, 1, 2]
    counted = _counted(items)  # the cost's total (its buckets: tests/test_json_vocabulary.py)
    assert {**counted, "cost_usd": counted["cost_usd"]["total"]} == {
        "type": "summary", "sessions": 1, "requests": 3, "breaks": 0, "cost_usd": 0.001261008,
                               "errors": 0, "unpriced_requests": 1, "cost_complete": False}


def test_a_copy_written_anew_as_another_session_is_followed_as_that_session(tmp_path: Path) -> None:
    """DSH's log and a copy of it in another project: the copy is left out. Then the copy is
    written anew, in place (the same file), as another session: it is followed as that session
    (before, it kept the first session's id and stayed left out as a copy that differs)."""
    kept = chat_log(tmp_path / "sessions" / "--p--" / "X" / "session.jsonl", "X")
    copy = tmp_path / "sessions" / "--q--" / "X" / "session.jsonl"
    copy.parent.mkdir(parents=True)
    copy.write_bytes(kept.read_bytes())
    other = chat_log(tmp_path / "staged" / "session.jsonl", "Y").read_bytes()
    inode = copy.stat().st_ino

    def rewrite() -> None:
        with open(copy, "r+b") as handle:
            handle.truncate(0)
            handle.write(other)

    items = _drive(tmp_path, [(_note("note"), rewrite),
                              (lambda item: isinstance(item, WatchNote) and item.level == "started"
                               and item.path == str(copy), lambda: None)], rescan=0.02, notifications=False)
    assert copy.stat().st_ino == inode
    notes = [(item.level, item.path, item.session_id) for item in items if isinstance(item, WatchNote)]
    assert notes == [("watching", str(tmp_path / "sessions"), None), ("note", str(kept), "X"),
                     ("started", str(kept), "X"), ("started", str(copy), "Y")], items
    assert _counted(items)["sessions"] == 2


def _request(index: int, cost: float | None, *, verdict: str | None = None, provisional: bool = False,
             update: bool = False, path: str = "s.jsonl") -> WatchRequest:
    return WatchRequest(0, path, "s", None, index, "loop", 1, index, 1, None, None, None, None, None, None, cost,
                        verdict, None, None, None, provisional=provisional, update=update)


def test_an_update_takes_the_place_of_the_provisional_request() -> None:
    """Exact sums: the update replaces what the provisional request counted (its cost unknown,
    then known; not a break, then one), in whatever file of the session it comes; a provisional
    request never updated stays counted as shown; a log read again from its start keeps what it
    showed, its update taking the provisional one's place (fuzz round 26: it dropped both)."""
    summary = WatchSummary()
    items: list[WatchItem] = [WatchNote(0, "s.jsonl", "started", "", "s"), _request(0, 1e-7),
                              _request(1, None, provisional=True), _request(2, 2e-7, provisional=True),
                              _request(1, 3e-7, verdict="break", update=True, path="copy.jsonl")]
    for item in items:
        summary.add(item)
    assert {**summary.to_json(), "cost_usd": summary.to_json()["cost_usd"]["total"]} == {
        "type": "summary", "sessions": 1, "requests": 3, "breaks": 1, "cost_usd": 6e-07,
                                 "errors": 0, "unpriced_requests": 0, "cost_complete": True}
    for item in (WatchNote(0, "s.jsonl", "replaced", "", "s"), WatchNote(0, "s.jsonl", "started", "", "s"),
                 _request(2, 5e-7, update=True)):
        summary.add(item)  # read again from its start: what was shown stays, request 2 as updated
    assert (summary.requests, summary.breaks, summary.cost, summary.unpriced) == (3, 1, 9e-07, 0)


def test_an_update_is_marked_and_runs_no_on_break_command_twice(tmp_path: Path) -> None:
    """A provisional break runs the --on-break command; its update does not run it again, an
    update that first makes a request a break does; the line of an update ends "(update)"."""
    record = tmp_path / "breaks.jsonl"
    hooks = _Hooks([sys.executable, "-c", f"import sys; open({str(record)!r}, 'a').write(sys.stdin.read())"])
    for item in (_request(1, None, verdict="break", provisional=True), _request(1, 1e-7, verdict="break", update=True),
                 _request(2, 1e-7, verdict="break", update=True)):
        hooks.start(item)
    hooks.wait(threading.Event())
    hooks.end()
    assert sorted(json.loads(line)["index"] for line in record.read_text().splitlines()) == [1, 2]
    assert format_watch_line(_request(2, 1e-7, update=True), "s").endswith("  (update)")
    assert not format_watch_line(_request(2, 1e-7), "s").endswith("(update)")


def test_readers_is_at_least_one() -> None:
    with pytest.raises(ValueError, match="readers must be at least 1, not 0"):
        next(watch([], readers=0))
