"""``dsh-audit watch`` defects a CI run found, each against the real file watching.

A log truncated and written anew is read again from its start and the summary counts each of its
requests once; a torn tail that is completed later is noticed at once, not at the next rescan; what
a log holds when the watch starts is history even when a request of it is judged only once later
bytes arrive (or the file grows between the watch's look at it and its first read); Ctrl-C and
SIGTERM end a running ``--on-break`` command (and what it started) instead of waiting for it; the
history ``--since`` prints shows each request's send time; an unreadable log is reported on stderr
with ``--json`` too. The corpus session is c-change (8 requests, 5 breaks).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard
from _cli import invoke
from test_watch import PLAIN, ZSTD, _cli_stdout, _json_lines, _started

from dsh_audit.cache import usd_total
from dsh_audit.watch import TailStream, WatchItem, WatchNote, WatchRequest, WatchSummary, watch

needs_corpus = pytest.mark.skipif(not PLAIN or not ZSTD, reason="the DSH corpus is not present")
SAFETY = 20.0  # seconds after which a watch ends by itself: far more than any step takes


def _lines() -> list[bytes]:
    return PLAIN[0].read_bytes().splitlines(keepends=True)


def _target(tmp_path: Path, suffix: str = "") -> Path:
    target = tmp_path / "sessions" / "proj" / "session-1" / f"session.jsonl{suffix}"
    target.parent.mkdir(parents=True)
    return target


def _request_count(data: bytes, scratch: Path, suffix: str = "") -> int:
    """How many requests ``dsh-audit requests`` finds in a log holding ``data``."""
    prefix = scratch / f"prefix.jsonl{suffix}"
    prefix.write_bytes(data)
    return len(_cli_stdout("requests", "--json", str(prefix), code=0).splitlines())


def _drive(tmp_path: Path, steps: list[tuple[Callable[[WatchItem], bool], Callable[[], None]]],
           stop: threading.Event | None = None, **options: Any) -> list[WatchItem]:
    """Watch ``tmp_path/sessions`` in process: when an item passes a step's test, run its action
    (the first test sees the ``watching`` note); after the last step the watch is stopped (or when
    ``stop`` is set before it). Every item, in order."""
    stop = stop if stop is not None else threading.Event()
    items: list[WatchItem] = []
    pending = iter(steps)
    step = next(pending, None)
    for item in watch([tmp_path / "sessions"], stop=stop, exit_after=SAFETY, poll=0.02, **options):
        items.append(item)
        if step is not None and step[0](item):
            step[1]()
            step = next(pending, None)
            if step is None:
                stop.set()
    assert step is None, [item for item in items if isinstance(item, WatchNote)]  # not ended by SAFETY
    return items


def _watching(item: WatchItem) -> bool:
    return isinstance(item, WatchNote) and item.level == "watching"


def _request(index: int) -> Callable[[WatchItem], bool]:
    return lambda item: isinstance(item, WatchRequest) and item.index == index


def _note(level: str, text: str = "") -> Callable[[WatchItem], bool]:
    return lambda item: isinstance(item, WatchNote) and item.level == level and text in item.message


def _append(path: Path, data: bytes) -> Callable[[], None]:
    def append() -> None:
        with open(path, "ab") as handle:
            handle.write(data)
    return append


def _indexes(items: list[WatchItem]) -> list[int]:
    return [item.index for item in items if isinstance(item, WatchRequest)]


@needs_corpus
def test_a_truncated_and_rewritten_log_is_counted_once(tmp_path: Path) -> None:
    """The repro: 60 lines before the watch (4 requests, history), 40 more (request 4 new), the log
    truncated, then written whole: every request is printed again after the ``replaced`` note and
    the summary holds the session's own 8 requests and 5 breaks, not 11 and 7."""
    lines, target = _lines(), _target(tmp_path)
    target.write_bytes(b"".join(lines[:60]))

    def truncate() -> None:
        with open(target, "r+b") as handle:
            handle.truncate(0)

    items = _drive(tmp_path, [(_watching, _append(target, b"".join(lines[60:100]))), (_request(4), truncate),
                              (_note("replaced"), _append(target, b"".join(lines))),
                              (_request(7), lambda: None)])
    replaced = next(i for i, item in enumerate(items) if isinstance(item, WatchNote) and item.level == "replaced")
    assert _indexes(items[:replaced])[:1] == [4] and _indexes(items[replaced:]) == list(range(8))
    summary = WatchSummary()
    for item in items:
        summary.add(item)
    again = [item for item in items[replaced:] if isinstance(item, WatchRequest)]
    assert {**summary.to_json(), "cost_usd": summary.to_json()["cost_usd"]["total"]} == {
        "type": "summary", "sessions": 1, "requests": 8, "breaks": 5,
                                 "cost_usd": usd_total(item.cost for item in again if item.cost is not None),
                                 "errors": 0,
                                 "unpriced_requests": 1, "cost_complete": False}
    assert summary.to_json()["cost_usd"]["total"] == 0.01107667  # the session's own, exact (the repro summed 0.01314)


@needs_corpus
@pytest.mark.parametrize("notifications", [True, False])
def test_a_torn_tail_completed_later_is_noticed_at_once(tmp_path: Path, notifications: bool) -> None:
    """A line written in two parts with a pause longer than ``settle`` is a torn-tail warning; when
    its rest comes the log is followed again at once (a short re-poll while a tail is torn), not at
    the next rescan of the folders (30 s here; ten times that with notifications): its requests
    come within a few seconds, each once."""
    lines, target = _lines(), _target(tmp_path)
    target.write_bytes(b"".join(lines[:30]))
    completed: list[float] = []

    def complete() -> None:
        completed.append(time.monotonic())
        _append(target, lines[60][30:] + b"".join(lines[61:]))()

    items = _drive(tmp_path, [(_watching, _append(target, b"".join(lines[30:60]) + lines[60][:30])),
                              (_note("warning", "torn tail: line 61 has no terminating newline"), complete),
                              (_request(7), lambda: completed.append(time.monotonic()))],
                   settle=0.3, rescan=30.0, notifications=notifications)
    assert completed[1] - completed[0] < 5.0  # before: the next rescan, 10-30 s later
    assert _indexes(items) == list(range(2, 8))  # 0 and 1 were in the log before the watch


@needs_corpus
@pytest.mark.parametrize(("kind", "cut"), [("plain", 40), ("plain", 60), ("partial", 60), ("zstd", 10)])
def test_what_the_log_holds_at_start_is_history(tmp_path: Path, kind: str, cut: int) -> None:
    """A log cut after ``cut`` lines (``partial``: and 30 bytes of the next; zstd: ``cut`` frames)
    when the watch starts: its requests are history, left out without --since, even the last one,
    which is judged only once later bytes come (it was printed as new); the rest are printed."""
    if kind == "zstd":
        data = ZSTD[0].read_bytes()
        ends, start = [], 0
        while start < len(data):
            reader = zstandard.ZstdDecompressor().decompressobj()
            reader.decompress(data[start:])
            start = len(data) - len(reader.unused_data)
            ends.append(start)
        before, complete, suffix = data[:ends[cut]], data[:ends[cut]], ".zstd"
    else:
        lines = _lines()
        data = b"".join(lines)
        complete = b"".join(lines[:cut])
        before, suffix = complete + (lines[cut][:30] if kind == "partial" else b""), ""
    existing = _request_count(complete, tmp_path, suffix)
    target = _target(tmp_path, suffix)
    target.write_bytes(before)
    items = _drive(tmp_path, [(_watching, _append(target, data[len(before):])), (_request(7), lambda: None)])
    assert 0 < existing < 8
    assert _indexes(items) == list(range(existing, 8))


def test_a_tail_stream_never_hands_history_and_new_bytes_over_in_one_read(tmp_path: Path) -> None:
    """The file grew between the watch's look at its size and its first read: the bytes it held
    then are handed over first, alone, and only they count as history."""
    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"a":1}\n{"b":2}\n{"c":3}\n')
    stream = TailStream(str(path), stop=threading.Event(), history=16)
    assert stream.in_history
    assert stream.read(1 << 16) == b'{"a":1}\n{"b":2}\n' and stream.in_history
    assert stream.read(1 << 16) == b'{"c":3}\n' and not stream.in_history
    stream.close()


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie nobody reaped has ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        return True


def _wait_for(test: Callable[[], bool], timeout: float = SAFETY) -> None:
    deadline = time.monotonic() + timeout
    while not test():
        assert time.monotonic() < deadline
        time.sleep(0.02)


@needs_corpus
@pytest.mark.skipif(not os.path.isdir("/proc") or sys.platform == "win32", reason="needs /proc and process groups")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_stopping_the_watch_ends_a_running_on_break_command(tmp_path: Path, signum: int) -> None:
    """Each of the 5 history breaks starts a hook that starts a 30 s sleep and waits for it; the
    watch stopped then exits 0 with its summary within seconds (it waited for the hooks: 31 s),
    and no hook's sleep survives it."""
    target = _target(tmp_path)
    target.write_bytes(PLAIN[0].read_bytes())
    pids = tmp_path / "pids"
    hook = f"sh -c 'sleep 30 & echo $! >> {pids}; wait'"
    watcher = subprocess.Popen([sys.executable, "-m", "dsh_audit", "watch", str(tmp_path / "sessions"), "--json",
                                "--since", "100000d", "--polling", "--on-break", hook],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        opening = _started(watcher.stdout, '{"type":"watching"')
        _wait_for(lambda: pids.exists() and len(pids.read_text().split()) == 5)
        sleeping = [int(pid) for pid in pids.read_text().split()]
        assert all(map(_alive, sleeping))
    finally:
        stopped = time.monotonic()
        watcher.send_signal(signum)
        out, err = watcher.communicate(timeout=SAFETY)
    assert time.monotonic() - stopped < 10.0  # before: 30 s, the hooks' sleep
    assert watcher.returncode == 0, err
    assert "Traceback" not in err
    lines = _json_lines(opening + out)
    assert {**lines[-1], "cost_usd": lines[-1]["cost_usd"]["total"]} == {
        "type": "summary", "sessions": 1, "requests": 8, "breaks": 5, "cost_usd": 0.01107667,
                         "errors": 0, "unpriced_requests": 1, "cost_complete": False}
    _wait_for(lambda: not any(map(_alive, sleeping)), timeout=5.0)


@needs_corpus
def test_a_watch_that_ends_by_itself_lets_the_running_on_break_commands_finish(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """--idle-exit is no interruption: each of the 5 hooks started for the history's breaks gets to
    finish its work (here half a second) before the watch exits."""
    target = _target(tmp_path)
    target.write_bytes(PLAIN[0].read_bytes())
    done = tmp_path / "done"
    code, out, _ = invoke(monkeypatch, capsys, "watch", str(tmp_path / "sessions"), "--json", "--since", "100000d",
                          "--idle-exit", "0.1", "--polling", "--on-break", f"sh -c 'sleep 0.5; echo done >> {done}'")
    assert code == 0 and _json_lines(out)[-1]["breaks"] == 5
    assert done.read_text() == "done\n" * 5


@needs_corpus
def test_the_history_shows_each_requests_send_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """``--since`` in table mode: each history line's time is its request's send time (as the
    JSON's ``sent_at``), not when the line was printed, and a line on stderr says which time it is."""
    monkeypatch.setenv("COLUMNS", "1000")
    target = _target(tmp_path)
    target.write_bytes(PLAIN[0].read_bytes())
    args = ("watch", str(tmp_path / "sessions"), "--since", "100000d", "--idle-exit", "0.3", "--polling")
    code, out, _ = invoke(monkeypatch, capsys, *args, "--json")
    assert code == 0
    history = [line for line in _json_lines(out) if line["type"] in ("request", "break")]
    assert len(history) == 8 and all(line["history"] and line["sent_at"] for line in history)
    code, out, err = invoke(monkeypatch, capsys, *args)
    assert code == 0
    # in UTC with the date, as every other command prints a time, and as the JSON's sent_at (views33)
    assert [" ".join(line.split()[:2]) for line in out.splitlines()] == [
        line["sent_at"].replace("T", " ").removesuffix("Z") for line in history]
    assert err[1] == ("each line: time (UTC; when sent, for the history; when seen, for a new request), session id "
                      "(whole, for the life of the watch; a fork or subagent child's led by └ fork or └ subagent) and title, "
                      "#request t/s/a (turn/step/attempt), model, prompt tokens, cache reads of the reusable ones "
                      "(what the previous request left cached: lost is measured from it) and the expected ones, "
                      "cost, verdict; a break: BREAK, its cause, the tokens it lost (their cost), the changed fields "
                      "and the evidence seqs")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO")
def test_json_mode_reports_an_unreadable_log_on_stderr_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """With --json an unreadable log is an ``error`` line in the stream and one ``error:`` line on
    stderr, as README's exit-code table says."""
    fifo = _target(tmp_path)
    os.mkfifo(fifo)
    code, out, err = invoke(monkeypatch, capsys, "watch", str(tmp_path / "sessions"), "--json", "--exit-after", "0.5",
                            "--polling")
    assert code == 0
    errors = [line for line in _json_lines(out) if line["type"] == "error"]
    refusal = f"{fifo}: is a FIFO, not a log file (hint: only regular files are read)"
    assert [(line["path"], line["message"]) for line in errors] == [(str(fifo), refusal)]
    assert err == [f"error: {refusal}"]
    assert _json_lines(out)[-1]["errors"] == 1
