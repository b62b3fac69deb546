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
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from _terminal import in_terminal
from dsh_audit.cache import SessionSummary, cache_group, load_prices, summary_group
from dsh_audit.cache._session import lone_roots
from dsh_audit.cache._summary import _read_whole
from dsh_audit.cli import _sessions_fit, cli
from dsh_audit.session import GroupResult, Headers

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


# Brief f14: `sessions` summarises a log that is no fork or subagent child, nor parent of one, and has no capture
# while it is accounted in one pass, as `cache` accounts a lone log (its report keeps no verdict); a group with a
# child is still read whole. Before: every log was read whole (each request kept), then accounted.

HOME = SAMPLES / "sessions" / "--home-dev-projects-demo--"
HOME_LOGS = sorted(HOME.glob("*/session.jsonl.zstd"))
CHILD = HOME / "fork-child~003Areview" / "session.jsonl.zstd"


def _whole(paths: list[Path]) -> GroupResult[SessionSummary]:
    """The summaries of ``paths`` each read whole, then accounted (the way every log was summarised before)."""
    return _read_whole(paths, Headers(), lenient=False, max_version=4, tokenizer="auto", prices=None, routes=None,
                       capture=None, zero_data_retention=None)


def _same(found: GroupResult[SessionSummary], whole: GroupResult[SessionSummary]) -> None:
    assert found.items == whole.items
    assert [getattr(item, "cost_summary", None) for item in found.items] == \
        [getattr(item, "cost_summary", None) for item in whole.items]  # (not compared by ==)
    assert (found.ids, found.orphans, found.route_warnings) == (whole.ids, whole.orphans, whole.route_warnings)


SAMPLE_LOGS = sorted(SAMPLES.rglob("*.jsonl*"))


def test_every_sample_log_but_the_fork_children_is_accounted_as_it_is_read() -> None:
    assert [path.parent.name for path in SAMPLE_LOGS if not lone_roots([path], Headers())] == [
        "generated-sample-fork-1", "fork-child~003Areview"]


@pytest.mark.parametrize("path", SAMPLE_LOGS, ids=lambda p: p.parent.name)
def test_a_log_summarised_in_one_pass_is_summarised_as_read_whole(path: Path) -> None:
    _same(summary_group([path]), _whole([path]))


def test_a_home_accounts_its_lone_logs_as_they_are_read_and_a_fork_with_its_parent_read_whole() -> None:
    assert [Path(path).parent.name for path in lone_roots(HOME_LOGS, Headers())] == [
        "session-sample-change", "session-sample-chat", "session-sample-compaction", "session-sample-resume",
        "session-sample-retry", "session-sample-tools"]
    assert lone_roots([CHILD, HOME_LOGS[-1]], Headers()) == []  # a child whose parent is not given: read whole
    found = summary_group(HOME_LOGS)
    assert [Path(item.path).parent.name for item in found.items] == [path.parent.name for path in HOME_LOGS]
    _same(found, _whole(HOME_LOGS))


def _calls(task: Callable[[], object]) -> int:
    """The Python function calls ``task`` makes (after a first run: imports and memos made)."""
    task()
    count = 0

    def profile(_frame: object, event: str, _arg: object) -> None:
        nonlocal count
        count += event == "call"

    sys.setprofile(profile)
    try:
        task()
    finally:
        sys.setprofile(None)
    return count


def test_sessions_does_about_the_work_cache_does() -> None:
    """Before: 5348 calls for `sessions`' row against `cache`'s 4713 (1.135×; 1.17× on a 2 MB generated log):
    the log read whole, then accounted. Now 5022 (1.064×): the row's extra work is its title, span and tokens."""
    path = HOME / "session-sample-change" / "session.jsonl.zstd"
    prices = load_prices(None)
    ratio = _calls(lambda: summary_group([path], prices=prices)) / _calls(lambda: cache_group([path], prices=prices))
    assert ratio < 1.1
