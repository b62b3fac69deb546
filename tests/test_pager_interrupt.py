"""Ctrl-C while a table is being paged belongs to the pager (``less`` uses it to stop a search):
dsh-audit waits for the pager, then exits as it would have, with nothing on stderr.

Real processes on a real pseudo-terminal: a pager that ignores SIGINT as ``less`` does, and the
signal sent to the whole foreground process group, as a terminal's Ctrl-C is.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from _cli import sigint_as_a_terminal_gives_it
from _terminal import read_terminal

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "sample_logs" / "tools" / "session.jsonl"

# Ignores SIGINT, copies its input to argv[1], says so in argv[2], then waits for argv[3] to exist.
PAGER = """\
import os, shutil, signal, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
with open(sys.argv[1], 'wb') as out:
    shutil.copyfileobj(sys.stdin.buffer, out)
open(sys.argv[2], 'w').close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.02)
"""


def _wait_for(path: Path, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def test_ctrl_c_while_paging_is_the_pagers_and_the_command_ends_normally(tmp_path: Path) -> None:
    import pty

    script, paged, ready, quit_ = (tmp_path / name for name in ("pager.py", "paged.txt", "ready", "quit"))
    script.write_text(PAGER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PAGER", "COLUMNS", "LINES")}
    env["DSH_AUDIT_PAGER"] = shlex.join([sys.executable, str(script), str(paged), str(ready), str(quit_)])
    main, child = pty.openpty()
    with subprocess.Popen([sys.executable, "-m", "dsh_audit", "requests", str(TOOLS)], stdout=child,
                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, env=env, cwd=ROOT,
                          start_new_session=True, preexec_fn=sigint_as_a_terminal_gives_it) as process:
        os.close(child)
        shown: list[bytes] = []
        reader = threading.Thread(target=lambda: shown.append(read_terminal(main)))
        reader.start()
        try:
            _wait_for(ready)  # the table is written and the command is waiting for its pager
            os.killpg(process.pid, signal.SIGINT)  # Ctrl-C reaches the whole foreground group
            time.sleep(0.3)
            assert process.poll() is None, "the command did not wait for its pager"
            quit_.touch()
            code = process.wait(30)
            err = process.stderr.read() if process.stderr else b""
        finally:
            quit_.touch()
            reader.join(30)
    os.close(main)
    assert (code, err) == (0, b"")
    table = paged.read_text(encoding="utf-8")
    assert "session session-sample-tools" in table and table.endswith("\n")
    assert b"aborted" not in b"".join(shown)
