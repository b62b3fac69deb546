"""Session 46 (issue 14 item 4): `sessions` on a narrow terminal keeps its essential fields.

From 40 to 70 columns, piped (``COLUMNS``) and in a pseudo-terminal, the narrow layout leaves out the
lesser fields ("format", "first (UTC)", "tokens", then "project" and "hit ratio") and keeps the
essential ones: the last activity, the title, "requests", "breaks", "cost" and the id, no token split
over lines. Before: a block of lines a row listed every field (the lesser ones too), and a table from
66 to 79 columns left out "breaks" (and "requests") to keep a title 20 columns wide.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from _terminal import in_terminal
from dsh_audit.cli import _sessions_fit, cli

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
LESSER = ("format", "first (UTC)", "tokens", "project", "hit ratio", "hit")
#: The block of lines of the newest sample session, and the total's, at any width that draws blocks.
BLOCK = ["when (UTC)  2027-01-15 08:00", "title       -", "requests    4", "breaks      0", "cost        $0.0003",
         "id          session-sample-tools"]
TOTAL = ["when (UTC)  total", "title", "requests    28", "breaks      8", "cost        ≥$0.0029", "id"]


def _sessions(columns: int) -> list[str]:
    result = CliRunner().invoke(cli, ["sessions"], env={"DSH_HOME": str(SAMPLES), "COLUMNS": str(columns)},
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return [line.rstrip() for line in result.output.splitlines() if not line.startswith("note: ")]


def _fields(lines: list[str]) -> list[str]:
    """The fields a layout shows: a table's header words, else a block's labels (its first block)."""
    header = next((line for line in lines if line.startswith("when (UTC)  ") and "title" in line.split("  ")[1:]
                   and not line.startswith("when (UTC)  2")), None)
    if header is not None:
        return [cell for cell in re.split(r"\s{2,}", header.strip())]
    block = lines[1:lines.index("")]
    return [line.split("  ")[0] for line in block if line[:1].isalpha()]


@pytest.mark.parametrize("columns", [40, 48, 55, 62, 66, 70])
def test_a_narrow_terminal_shows_the_essential_fields_alone(columns: int) -> None:
    lines = _sessions(columns)
    assert [line for line in lines if len(line) > columns] == []
    fields = _fields(lines)
    assert [field for field in fields if field in LESSER] == []
    assert [field for field in ("when (UTC)", "title", "breaks", "cost", "id") if field not in fields] == []
    assert "requests" in fields or "reqs" in fields
    assert re.search(r"narrow terminal: format, first \(UTC\), tokens, project, hit(?: ratio)? not shown",
                     " ".join(lines)), lines


@pytest.mark.parametrize("columns", [40, 55, 66])
def test_a_block_of_lines_a_row_holds_the_essential_fields(columns: int) -> None:
    lines = _sessions(columns)
    assert lines[0] == "8 session(s), newest first"
    assert lines[1:7] == BLOCK
    assert lines[lines.index(TOTAL[0]):lines.index(TOTAL[0]) + 6] == TOTAL


def test_seventy_columns_keep_breaks_and_requests_in_a_table() -> None:
    """Before: "hit" and "breaks" left out for a title 20 columns wide."""
    lines = _sessions(70)
    assert lines[1:4] == ["when (UTC)        title  reqs  breaks       cost  id", "─" * 70,
                          "2027-01-15 08:00  -         4       0    $0.0003  session-sample-t…"]
    assert lines[9] == "2027-01-15 08:00  Who…      3       0   ≥$0.0001  session-sample-chat"  # cut, one line
    assert lines[11:] == ["total                      28       8   ≥$0.0029",
                          "id: shortest unique prefix; title: cut to fit (--json for whole ids",
                          "and titles)",
                          "narrow terminal: format, first (UTC), tokens, project, hit not shown",
                          "(widen it, or use --json)"]


@pytest.mark.parametrize("columns", [40, 70])
def test_in_a_terminal_too(tmp_path: Path, columns: int) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("COLUMNS", "LINES", "PAGER", "LESS") and not k.startswith("DSH_AUDIT_")}
    env.update(DSH_HOME=str(SAMPLES), PYTHONPATH=str(ROOT), TERM="xterm")
    code, shown, _ = in_terminal(["sessions", "--no-pager"], columns=columns, env=env, cwd=tmp_path)
    lines = [line.rstrip() for line in shown.splitlines()]
    assert (code, [line for line in lines if len(line) > columns]) == (0, [])
    fields = _fields(lines)
    assert ([field for field in fields if field in LESSER], "breaks" in fields) == ([], True), shown
    if columns == 40:
        assert lines[1:7] == BLOCK


def test_requests_and_breaks_are_never_left_out_for_a_title() -> None:
    assert [column for column in ("requests", "breaks", "cost", "id", "when (UTC)", "title")
            if column in _sessions_fit.DROPPABLE or column in _sessions_fit.LESSER] == []
    assert _sessions_fit.DROPPABLE == ("project", "hit ratio")
