"""Issue 14 leftover: no line of a table ends with a space, in any layout (boxed, compact, one
block per row) and on every command that lists in tables (`validate` lists findings as lines):
a compact table's header, its rows' last text column and its captions were padded to the table's
width (rich pads each cell and caption)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from _cli import invoke
from _golden import CORPUS
from _terminal import in_terminal

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
CHAT, TOOLS = SAMPLES / "chat" / "session.jsonl", SAMPLES / "tools" / "session.jsonl"
CHANGE = SAMPLES / "sessions" / "--home-dev-projects-demo--" / "session-sample-change"  # its breaks
LIVE = CORPUS / "live" / "a-chat"
# A line that ends in a space, before the escapes that close its styles on a terminal.
_ENDS_IN_SPACE = re.compile(r" (?:\x1b\[[0-9;]*m)*\r?$")

COMMANDS = {
    "sessions": ("sessions", str(SAMPLES)),
    "usage": ("usage", str(SAMPLES / "sessions")),
    "usage by request": ("usage", "--by", "request", str(CHAT)),
    "cache": ("cache", str(TOOLS)),
    "requests": ("requests", str(TOOLS)),
    "breaks": ("breaks", str(CHANGE)),
    "check": ("check", str(CHAT)),
}


def _lines(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], columns: int,
           *args: str) -> list[str]:
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = invoke(monkeypatch, capsys, *args)
    assert code in (0, 1), out
    return out.splitlines()


def _padded(lines: list[str]) -> list[str]:
    return [line for line in lines if _ENDS_IN_SPACE.search(line)]


@pytest.mark.parametrize("columns", [80, 200])
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_table_line_ends_with_a_space(monkeypatch, capsys, name: str, columns: int) -> None:
    lines = _lines(monkeypatch, capsys, columns, *COMMANDS[name])
    assert any(set(line) <= set("─ ") and "─" in line or "┃" in line for line in lines), lines  # a table drawn
    assert _padded(lines) == []


def test_the_compact_sessions_table_at_80_columns_ends_each_line_at_its_last_character(monkeypatch, capsys) -> None:
    """The compact layout (issue 14's example): its header was padded to 80 columns, each row's id
    to its column's width, the caption to the table's."""
    lines = _lines(monkeypatch, capsys, 80, "sessions", str(SAMPLES / "sessions"))
    assert lines[1] == "when (UTC)        title     reqs    hit  breaks       cost  id"
    assert lines[3] == "2027-01-15 08:00  -            4  46.1%       0    $0.0003  session-sample-t…"
    assert _padded(lines) == []


def test_one_block_per_row_ends_no_line_with_a_space(monkeypatch, capsys) -> None:
    lines = _lines(monkeypatch, capsys, 1, "sessions", str(SAMPLES / "sessions"))
    # labels as wide as "when (UTC)": a block holds the essential fields alone (session 46)
    assert lines[1:3] == ["when (UTC)  2027-01-15 08:00", "title       -"]
    assert _padded(lines) == []


@pytest.mark.skipif(not (LIVE / "wire.jsonl").is_file(), reason="../shared/corpus is absent")
@pytest.mark.parametrize("columns", [80, 200])
def test_diff_ends_no_line_with_a_space(monkeypatch, capsys, columns: int) -> None:
    lines = _lines(monkeypatch, capsys, columns, "diff", str(LIVE), "--capture", str(LIVE / "wire.jsonl"))
    assert len(lines) > 3 and _padded(lines) == []


@pytest.mark.parametrize("columns", [80, 200])
def test_stats_ends_no_line_with_a_space(monkeypatch, capsys, tmp_path: Path, columns: int) -> None:
    db = str(tmp_path / "i.sqlite")
    monkeypatch.setenv("DSH_HOME", str(SAMPLES))
    assert invoke(monkeypatch, capsys, "index", "--db", db)[0] == 0
    lines = _lines(monkeypatch, capsys, columns, "stats", "--db", db)
    assert len(lines) > 3 and _padded(lines) == []


def test_a_terminal_gets_no_line_ending_in_a_space_inside_its_styles(tmp_path: Path) -> None:
    """On a terminal the header is styled: the spaces before the escapes that close it go too."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "PAGER", "DSH_AUDIT_PAGER")}
    env.update(DSH_HOME=str(SAMPLES), DSH_AUDIT_PAGER="", PYTHONPATH=str(ROOT), TERM="xterm")
    code, shown, err = in_terminal(["sessions"], columns=80, env=env, cwd=tmp_path)
    assert (code, err) == (0, b"")
    lines = shown.splitlines()
    assert any("reqs" in line for line in lines)
    assert _padded(lines) == []
