"""Running the CLI in process for tests, and the smallest valid log to run it on."""

from __future__ import annotations

import io
import os
import signal
import sys
import tempfile
from pathlib import Path

import pytest

from dsh_audit.cli import cli, main
from dsh_audit.cli._common import run_guarded
from dsh_audit.testing import LogBuilder


def invoke(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, list[str]]:
    """Run ``dsh-audit ARGS`` in process; returns exit code, stdout and stderr lines (never a traceback)."""
    monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
    # click names the program after ``python -m PACKAGE`` when __main__ is a package's (pytest's, in a
    # serial run: "Usage: python -m pytest.dsh-audit ..."); the console script's name is argv[0]
    monkeypatch.setattr(sys.modules["__main__"], "__package__", None, raising=False)
    code = run_guarded(cli)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err.splitlines()


#: Settings of the caller's that change what a command prints: none of them reaches a run.
CALLER_SETTINGS = ("DSH_AUDIT_", "FORCE_COLOR", "TTY_", "PYTHONUTF8")


def invoke_encoded(monkeypatch: pytest.MonkeyPatch, encoding: str, *args: str) -> tuple[int, bytes, bytes]:
    """``dsh-audit ARGS`` in process through the console entry point (``main``), its stdout and
    stderr built as Python builds a process's piped streams under ``PYTHONIOENCODING=encoding``
    (text over a real file; stdout ``strict``, stderr ``backslashreplace`` and line-buffered),
    80 columns wide, no setting of the caller's that changes what is printed: the exit code and
    the bytes written to each. ``test_stdout_encoding.py`` checks that a real process writes the same."""
    for name in [name for name in os.environ if name.startswith(CALLER_SETTINGS)]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        streams = (io.TextIOWrapper(out, encoding=encoding, errors="strict"),
                   io.TextIOWrapper(err, encoding=encoding, errors="backslashreplace", line_buffering=True))
        saved = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = streams
        try:
            main()
        except SystemExit as stop:
            code = stop.code
        finally:
            sys.stdout, sys.stderr = saved
            for stream in streams:
                stream.flush()
                stream.detach()
        out.seek(0)
        err.seek(0)
        written = out.read(), err.read()
    assert isinstance(code, int)
    assert b"Traceback" not in written[1]
    return code, *written


def chat_log(path: Path, session_id: str) -> Path:
    """A one-turn chat (one row per event) written to ``path``, its folder made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    b = LogBuilder(session_id=session_id)
    with b.turn("Hi"):
        with b.step():
            b.assistant("Hello")
    path.write_text("".join(line + "\n" for line in b.lines(packed=False)), encoding="utf-8")
    return path


def mixed_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *, columns: int = 200) -> Path:
    """A DSH home at ``tmp_path`` (``DSH_HOME``, and the current folder) holding ``s-mixed``:
    three deepseek-v4-flash requests in DeepSeek's peak window (the third a break after a
    system-prompt change), a title call with no usage logged, then local-coder (no price)."""

    def usage(miss: int, read: int) -> dict[str, int]:
        return {"inputTokens": miss, "outputTokens": 10, "cacheReadTokens": read}

    b = LogBuilder(session_id="s-mixed", created_at=1_800_000_000_000, model="deepseek-v4-flash", system="S" * 8000)
    for text, miss, read in (("one", 2000, 0), ("two", 100, 1920)):
        with b.turn(text), b.step():
            b.assistant(text, usage=usage(miss, read))
    b.configure(system="T" * 8000)
    with b.turn("three"), b.step():
        b.assistant("three", usage=usage(2100, 0))
    b.title("A title")
    b.configure(model="local-coder")
    with b.turn("four"), b.step():
        b.assistant("four", usage=usage(100, 2048))
    b.write_jsonl(tmp_path / "sessions" / "--p--" / "s-mixed" / "session.jsonl", packed=False)
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", str(columns))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def sigint_as_a_terminal_gives_it() -> None:
    """``preexec_fn`` of a Ctrl-C test's process: SIGINT's default action, as a shell in a terminal
    starts a command with, whatever pytest inherited: a shell without job control starts a
    background command (``cmd &``, e.g. a CI script's) with SIGINT ignored, an ignored signal is
    inherited across exec, and Python installs its KeyboardInterrupt handler only where SIGINT is not
    ignored, so such a run's Ctrl-C tests could not interrupt anything."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def short_salt(salt: str) -> str:
    """The warning ``redact`` ends with when a bundle is written with a given salt shorter than 16 characters
    (session 42b: the salt undoes every placeholder; review E: a short one is found by trying salts)."""
    return (f"warning: the salt given is {len(salt)} character(s) long: a short salt is recovered from any known text "
            "of the bundle by trying every salt of its length (one scrypt a guess), and undoes every "
            "placeholder: give a long random one, e.g. `openssl rand -hex 16`")
