"""A ``note:`` or ``warning:`` longer than the terminal stderr is wraps at spaces to its width, each
further line indented two spaces, a path never cut (one longer than the width stays whole on a line
of its own); piped, each stays one line (scripts grep them); an ``error:`` is one line always.

Real processes, stderr a real pseudo-terminal of a known width (tests/_terminal.py).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import struct
import subprocess
import sys
import termios
from pathlib import Path

from _terminal import read_terminal

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "sample_logs" / "tools" / "session.jsonl"
CLAUDE = ROOT / "tests" / "data" / "importers" / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"

NOTE = ("note: one session in two files under a/: read home/sessions/--proj--/session-sample-tools/session.jsonl, "
        "not session-logs/session-sample-tools.jsonl (the same lines)")
WARNING = "warning: DSH_AUDIT_PAGERR is not a dsh-audit variable (did you mean DSH_AUDIT_PAGER?)"
SUMMARY = "0 error(s), 0 warning(s), 0 info in 1 file(s)"


def _home(tmp_path: Path) -> Path:
    """One session in two files, in a DSH home and in an export beside it: ``validate a`` reads one
    and says which in a note (164 characters)."""
    for path in (tmp_path / "a" / "home" / "sessions" / "--proj--" / "session-sample-tools" / "session.jsonl",
                 tmp_path / "a" / "session-logs" / "session-sample-tools.jsonl"):
        path.parent.mkdir(parents=True)
        shutil.copyfile(TOOLS, path)
    return tmp_path


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES") and not k.startswith("DSH_AUDIT_")}
    return {**env, "PYTHONPATH": str(ROOT), **extra}


def _stderr_on_terminal(args: list[str], *, columns: int, env: dict[str, str], cwd: Path) -> tuple[int, str, list[str]]:
    """Run dsh-audit with stderr a pseudo-terminal ``columns`` wide and stdout piped: its exit code,
    stdout, and the lines it wrote to the terminal."""
    main, child = os.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    with subprocess.Popen([sys.executable, "-m", "dsh_audit", *args], stdout=subprocess.PIPE, stderr=child,
                          stdin=subprocess.DEVNULL, env=env, cwd=cwd) as process:
        os.close(child)
        written = read_terminal(main)  # before stdout: the command writes little there, its pipe never fills
        out = process.stdout.read() if process.stdout else b""
        code = process.wait(60)
    os.close(main)
    return code, out.decode(), written.decode().replace("\r\n", "\n").splitlines()


def test_a_long_note_and_warning_wrap_at_spaces_on_a_terminal_a_path_whole(tmp_path: Path) -> None:
    cwd = _home(tmp_path)
    code, out, err = _stderr_on_terminal(["validate", "a"], columns=40, env=_env(DSH_AUDIT_PAGERR="1"), cwd=cwd)
    assert (code, out, err) == (0, "", [
        "warning: DSH_AUDIT_PAGERR is not a",
        "  dsh-audit variable (did you mean",
        "  DSH_AUDIT_PAGER?)",
        "note: one session in two files under a/:",  # 40 columns: fits exactly
        "  read",
        "  home/sessions/--proj--/session-sample-tools/session.jsonl,",  # longer than the terminal: whole
        "  not",
        "  session-logs/session-sample-tools.jsonl",
        "  (the same lines)",
        "0 error(s), 0 warning(s), 0 info in 1", "  file(s)"])  # SUMMARY wrapped as a note is (brief m14b)


def test_a_note_that_fits_the_terminal_is_one_line(tmp_path: Path) -> None:
    cwd = _home(tmp_path)
    code, out, err = _stderr_on_terminal(["validate", "a"], columns=len(NOTE), env=_env(), cwd=cwd)
    assert (code, out, err) == (0, "", [NOTE, SUMMARY])


def test_an_error_is_one_line_on_a_terminal_too(tmp_path: Path) -> None:
    code, out, err = _stderr_on_terminal(["validate", str(CLAUDE)], columns=40, env=_env(), cwd=tmp_path)
    assert (code, out, err) == (2, "", [
        f"error: {CLAUDE}:1: this is a claude-code session, not a DSH log (hint: sessions, requests, show, render, "
        "cache, usage, diff and index import it; validate, breaks, explain, check, report, redact and watch read "
        "DSH logs only)"])


def test_piped_each_note_and_warning_is_one_line(tmp_path: Path) -> None:
    cwd = _home(tmp_path)
    done = subprocess.run([sys.executable, "-m", "dsh_audit", "validate", "a"], capture_output=True, cwd=cwd,
                          env=_env(DSH_AUDIT_PAGERR="1", COLUMNS="40"), timeout=60)
    assert (done.returncode, done.stdout, done.stderr.decode().splitlines()) == (0, b"", [WARNING, NOTE, SUMMARY])
