"""``dsh-audit watch`` when a session folder or a log becomes unreadable while it runs.

Each (and a FIFO in a log's place) is reported once, as one ``error`` item naming the path (never
a traceback), the watch goes on (a session written afterwards is still followed), and Ctrl-C ends
it with exit 0 and a summary that counts the errors. A chmod 000 refuses nothing to root, and CI
runs as root, so the watcher also runs under a small wrapper (:data:`REFUSING`) that makes the
system refuse the paths the test names, as a mode 000 folder or file refuses any other user:
listing the folder or opening the file fails with EACCES; the chmod 000 variant runs for a user
that is not root.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log
from test_watch import _ended_cleanly, _interrupt, _Lines

REFUSING = textwrap.dedent("""
    import builtins, errno, os, sys

    control = sys.argv.pop(1)  # a file naming one absolute path a line: the paths to refuse now
    real_open, real_os_open, real_scandir = builtins.open, os.open, os.scandir

    def refused(path):
        if not isinstance(path, (str, bytes, os.PathLike)):
            return False
        try:
            with real_open(control, encoding="utf-8") as handle:
                names = handle.read().splitlines()
        except FileNotFoundError:
            return False
        return os.path.abspath(os.fsdecode(path)) in names

    def deny(path):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), os.fsdecode(path))

    def refusing_open(file, *args, **kwargs):
        if refused(file):
            deny(file)
        return real_open(file, *args, **kwargs)

    def refusing_os_open(path, *args, **kwargs):
        if refused(path):
            deny(path)
        return real_os_open(path, *args, **kwargs)

    def refusing_scandir(path="."):
        if refused(path):
            deny(path)
        return real_scandir(path)

    # os.walk lists a folder with os.scandir; the log readers open with open() or os.open()
    builtins.open, os.open, os.scandir = refusing_open, refusing_os_open, refusing_scandir
    sys.argv[0] = "dsh-audit"
    from dsh_audit.cli import main
    main()
""")

FOLDER_HINT = "its sessions are not followed until dsh-audit can read it; the watch goes on"


class _Refuser:
    """Makes paths unreadable for the watcher: through :data:`REFUSING`, or by chmod 000."""

    def __init__(self, tmp_path: Path, how: str) -> None:
        self.how = how
        self.control = tmp_path / "refused.txt"
        self.names: list[str] = []
        self.chmodded: list[Path] = []

    def command(self, folder: Path, *extra: str) -> list[str]:
        if self.how == "chmod":
            return [sys.executable, "-m", "dsh_audit", "watch", str(folder), "--json", *extra]
        return [sys.executable, "-c", REFUSING, str(self.control), "watch", str(folder), "--json", *extra]

    def refuse(self, path: Path) -> None:
        """The watcher can no longer list or open ``path``: under the wrapper, by its name (it need
        not exist yet); by chmod, the folder or file itself (a file keeps its mode when moved)."""
        if self.how == "chmod":
            path.chmod(0)
            self.chmodded.append(path)
            return
        self.names.append(str(path.absolute()))
        staged = self.control.with_suffix(".new")  # replaced whole: the watcher never reads half a list
        staged.write_text("".join(name + "\n" for name in self.names), encoding="utf-8")
        os.replace(staged, self.control)

    def restore(self) -> None:
        for path in self.chmodded:
            if path.exists():  # a refused file was moved into its place: the tmp folder goes whole
                path.chmod(0o700)


WAIT = 30.0  # seconds for an item to come: far more than it takes, for a loaded machine


def _error(got: list[dict[str, Any]]) -> dict[str, Any]:
    """The one error among ``got``, without its time."""
    errors = [x for x in got if x["type"] == "error"]
    assert len(errors) == 1, got
    return {k: v for k, v in errors[0].items() if k != "seen_at"}


@pytest.mark.parametrize("mode", ["notifications", "polling"])
@pytest.mark.parametrize("how", [
    "refused",
    pytest.param("chmod", marks=pytest.mark.skipif(os.geteuid() == 0, reason="chmod 000 refuses nothing to root")),
])
def test_watch_reports_an_unreadable_folder_and_log_once_and_goes_on(tmp_path: Path, how: str, mode: str) -> None:
    sessions = tmp_path / "sessions"
    chat_log(sessions / "proj" / "session-1" / "session.jsonl", "s1")
    folder = sessions / "proj" / "session-2"  # a session folder DSH made, its log not yet written
    folder.mkdir()
    refuser = _Refuser(tmp_path, how)
    # new logs (and refused folders) are looked for every 0.05 s when polling, not every second
    options = ["--rescan", "0.05", *(["--polling"] if mode == "polling" else [])]
    watcher = subprocess.Popen(refuser.command(sessions, *options), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True)
    lines = _Lines(watcher)
    try:
        got = lines.until(lambda x: x["type"] == "started", timeout=60)
        assert [x["type"] for x in got] == ["watching", "started"]
        assert got[0]["message"].startswith("following 1 log(s)")

        # A session folder becomes unreadable; a log appears that cannot be opened. The folder is
        # noticed at the next look for new logs (with notifications: the one the new log causes).
        refuser.refuse(folder)
        log = sessions / "proj" / "session-3" / "session.jsonl"
        staged = chat_log(tmp_path / "staged" / "session.jsonl", "s3")
        refuser.refuse(staged if how == "chmod" else log)
        log.parent.mkdir()
        os.replace(staged, log)
        got = lines.until(lambda x: x["type"] == "error" and x["path"] == str(log), WAIT)
        assert [{k: v for k, v in x.items() if k != "seen_at"} for x in got] == [
            {"type": "error", "path": str(folder), "session_id": None,
             "message": f"{folder}: cannot read folder: Permission denied (hint: {FOLDER_HINT})"},
            {"type": "error", "path": str(log), "session_id": None,
             "message": f"{log}: cannot open the log: Permission denied"}]

        fifo = sessions / "proj" / "session-4" / "session.jsonl"  # never read: it would block
        fifo.parent.mkdir()
        os.mkfifo(fifo)
        assert _error(lines.until(lambda x: x["type"] == "error", WAIT)) == {
            "type": "error", "path": str(fifo), "session_id": None,
            "message": f"{fifo}: is a FIFO, not a log file (hint: only regular files are read)"}

        # A session written afterwards is followed; the looks that found it (at least one after
        # each refusal) reported none of them again.
        chat_log(sessions / "proj" / "session-5" / "session.jsonl", "s5")
        got = lines.until(lambda x: x["type"] == "request" and x["session_id"] == "s5", WAIT)
        assert [(x["type"], x["path"]) for x in got] == [
            ("started", str(sessions / "proj" / "session-5" / "session.jsonl")),
            ("request", str(sessions / "proj" / "session-5" / "session.jsonl"))]
    finally:
        _interrupt(watcher)
        refuser.restore()
    _ended_cleanly(watcher, lines)
    summary = lines.until(lambda x: x["type"] == "summary", WAIT)
    assert [x["type"] for x in summary] == ["summary"]  # nothing more was reported before it
    # chat_log's deepseek-official usage logs no cacheReadTokens: hits unknown, the request unpriced
    # (docs/cache-accounting.md, "Unpriced requests")
    assert summary[0] == {"type": "summary", "sessions": 2, "requests": 1, "breaks": 0,
                          "cost_usd": summary[0]["cost_usd"], "errors": 3, "unpriced_requests": 1,
                          "cost_complete": False}


def test_text_mode_names_an_unreadable_log_once_per_line(tmp_path: Path) -> None:
    """Without --json an error is one ``error:`` line naming the log once (its message already
    begins with its place; the path was printed twice)."""
    from test_watch import _started

    fifo = tmp_path / "sessions" / "proj" / "session-1" / "session.jsonl"
    fifo.parent.mkdir(parents=True)
    os.mkfifo(fifo)
    watcher = subprocess.Popen([sys.executable, "-m", "dsh_audit", "watch", str(tmp_path / "sessions"), "--polling"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        opening = _started(watcher.stderr, "watching")
        opening += _started(watcher.stderr, "error:", timeout=WAIT)
    finally:
        watcher.send_signal(signal.SIGINT)
        out, err = watcher.communicate(timeout=WAIT)
    assert watcher.returncode == 0, err
    said = (opening + err).splitlines()
    assert said[1].startswith("each line: time (UTC;")  # the legend, folded to the width: then the error
    assert [line for line in said[2:] if not line.startswith("  ")] == [
        f"error: {fifo}: is a FIFO, not a log file (hint: only regular files are read)",
        "watched 0 session(s): 0 request(s), 0 break(s), $0.0000, 1 unreadable log(s) or folder(s)"], opening + err
    assert out == ""
