"""Fuzz round 19, finding 6: ``watch``'s last line counts the logs that could not be read at the
end, and says apart those that could not be read for a while and were read again (a log overwritten
with garbage, then replaced by a whole log), instead of calling every log an error was said of
"unreadable"."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from _cli import chat_log

WAIT = 60.0  # seconds for a line to come: far more than it takes, for a loaded machine


def _until(pipe: IO[str], *needles: str) -> str:
    """Read ``pipe`` byte by byte (so that ``communicate()`` gets every later byte) up to the end of
    the first line holding each of ``needles``, in any order; what was read."""
    read, line, wanted = b"", b"", {needle.encode() for needle in needles}
    deadline = time.monotonic() + WAIT
    while wanted:
        ready, _, _ = select.select([pipe.fileno()], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no line holding each of {needles!r} within {WAIT} s: {read!r}"
        byte = os.read(pipe.fileno(), 1)
        assert byte, read  # the watch ended
        read, line = read + byte, line + byte
        if line.endswith(b"\n"):
            wanted -= {needle for needle in wanted if needle in line}
            line = b""
    return read.decode("utf-8")


def _write(log: Path, session_id: str) -> Path:
    """A whole chat log put at ``log`` at once (written beside it, then renamed), as a copy is."""
    staged = chat_log(log.parent.parent / f".{session_id}.jsonl", session_id)
    log.parent.mkdir(parents=True, exist_ok=True)
    os.replace(staged, log)
    return log


def test_a_log_read_again_after_garbage_is_not_counted_unreadable(tmp_path: Path) -> None:
    sessions = tmp_path / "sessions"
    chat_log(sessions / "p" / "session-0" / "session.jsonl", "s0")  # history: followed, not printed
    healed, broken = (sessions / "p" / f"session-{n}" / "session.jsonl" for n in (1, 2))
    watcher = subprocess.Popen([sys.executable, "-m", "dsh_audit", "watch", str(sessions)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert watcher.stdout is not None and watcher.stderr is not None
    try:
        said = _until(watcher.stderr, "watching ")
        _write(healed, "s1"), _write(broken, "s2")
        shown = _until(watcher.stdout, " s1 ", " s2 ")
        for log in (healed, broken):  # overwritten in place: the watch reads each again, and cannot
            log.write_bytes(b"garbage\n")
            said += _until(watcher.stderr, f"error: {log}:1: ")
        _write(healed, "s1")  # a whole log in its place: read again, its request printed again
        shown += _until(watcher.stdout, " s1 ")
    finally:
        watcher.send_signal(signal.SIGINT)
        out, err = watcher.communicate(timeout=WAIT)
    assert watcher.returncode == 0 and "Traceback" not in err, err
    assert out == "" and sorted(line.split("  ")[1:3] for line in shown.splitlines()) == [
        ["s1", "#0 t1/s1/a1"], ["s1", "#0 t1/s1/a1"], ["s2", "#0 t1/s1/a1"]], shown
    assert [line for line in (said + err).splitlines() if line.startswith("error:")] == [
        f"error: {log}:1: corrupt session log: header line is not valid JSON (hint: this is not a DSH session log, "
        "or its first line is damaged)" for log in (healed, broken)]
    assert (said + err).splitlines()[-1] == (
        "watched 3 session(s): 2 request(s), 0 break(s), $? (2 unpriced), 1 unreadable log(s) or folder(s), "
        "1 log(s) or folder(s) unreadable for a while, read again")
