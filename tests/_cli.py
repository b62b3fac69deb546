"""Running the CLI in process for tests, and the smallest valid log to run it on."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded
from dsh_audit.testing import LogBuilder


def invoke(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, list[str]]:
    """Run ``dsh-audit ARGS`` in process; returns exit code, stdout and stderr lines (never a traceback)."""
    monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
    code = run_guarded(cli)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err.splitlines()


def chat_log(path: Path, session_id: str) -> Path:
    """A one-turn chat (one row per event) written to ``path``, its folder made."""
    path.parent.mkdir(parents=True, exist_ok=True)
    b = LogBuilder(session_id=session_id)
    with b.turn("Hi"):
        with b.step():
            b.assistant("Hello")
    path.write_text("".join(line + "\n" for line in b.lines(packed=False)), encoding="utf-8")
    return path
