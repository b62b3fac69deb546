"""Fuzz round 17 (issue 15, /tmp/fuzz17.md D2, D10): the PATH and INDEX arguments.

D2: click.Path() checks os.access(R_OK) itself: a log the user may not read stopped ``check`` with
a usage error (exit 2, "Path ... is not readable"), nothing checked and no report written. Every
PATH is read, and a log that cannot be read is refused as any other (``check``: DSH801, exit 1).

D10: INDEX was read by Python's int(): ``1_0`` meant 10, ``١`` (an Arabic-Indic one), `` 1`` and
``+1`` meant 1. It is ASCII digits, with a leading ``-`` to count from the end.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _cli import chat_log, invoke


@pytest.fixture
def denied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``a/session.jsonl``, a log os.access says may not be read (as root too: click's check alone
    asks it), and ``b/session.jsonl``; the current folder is ``tmp_path``."""
    chat_log(tmp_path / "a" / "session.jsonl", "s-a")
    chat_log(tmp_path / "b" / "session.jsonl", "s-b")
    monkeypatch.chdir(tmp_path)
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, *args, **kwargs: False if os.fspath(path) == "a/session.jsonl"
                        else real(path, mode, *args, **kwargs))
    return "a/session.jsonl"


@pytest.mark.parametrize("command", ["check", "sessions", "requests", "usage", "cache", "breaks", "validate"])
def test_a_path_is_read_not_refused_by_click(denied: str, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str], command: str) -> None:
    code, _, err = invoke(monkeypatch, capsys, command, denied, "b/session.jsonl")
    assert code == 0 and not any("not readable" in line for line in err), err


@pytest.mark.parametrize("command", ["show", "explain", "render"])
def test_a_log_path_is_read_not_refused_by_click(denied: str, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str], command: str) -> None:
    code, _, err = invoke(monkeypatch, capsys, command, denied, "0")
    assert (code, err) == (0, [])


@pytest.mark.parametrize("index", ["1_0", "\u0661", " 1", "+1", "0x1", ""])
def test_an_index_is_ascii_digits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                  index: str) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-index")
    assert invoke(monkeypatch, capsys, "show", str(log), index) == (2, "", [
        f"error: Invalid value for 'INDEX': {index!r} is not a request index: digits 0-9, with a leading - to count "
        "from the end (-1: the last request) (hint: see `dsh-audit show --help`)"])


def test_an_index_of_more_digits_than_int_reads_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-index")
    assert invoke(monkeypatch, capsys, "render", str(log), "9" * 5000) == (2, "", [
        "error: Invalid value for 'INDEX': a request index of 5,000 digits is larger than any log's (hint: see "
        "`dsh-audit render --help`)"])
    assert invoke(monkeypatch, capsys, "explain", str(log), "1" + "0" * 30) == (2, "", [
        f"error: {log}: request 1000000000000000000000000000000 does not exist: the log has 1 request(s) (hint: "
        "valid indexes are 0 to 0, or -1 to -1 from the end; run `dsh-audit requests LOG` to see the indexes)"])
