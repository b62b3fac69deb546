"""Session 43's new-user tour: the cache timeline at 80 columns, Claude Code titles, the README's
list of the commands that take ``--jobs``."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from rich.cells import cell_len

from dsh_audit.cli import _cache, cli
from dsh_audit.importers._claude_code import _title
from dsh_audit.report import _table_draw
from dsh_audit.report import _tables as layout

from _golden import CORPUS

ROOT = Path(__file__).resolve().parent.parent
IMPORTED = ROOT / "tests" / "data" / "importers"
CLAUDE = IMPORTED / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"

# --- 1. the cache timeline at 80 columns: a row a line, lesser columns left out ---------------------

#: Every corpus log and the sample logs, each set one `cache` run (its tables share one header).
LOG_SETS = {"live": [CORPUS / "live"], "live-pi": [CORPUS / "live-pi"], "fixtures": [CORPUS / "fixtures"],
            "sample": [ROOT / "sample_logs"], "imported": [IMPORTED / "claude-code", IMPORTED / "codex"]}


def _counting(monkeypatch: pytest.MonkeyPatch, owner: object, name: str) -> list[int]:
    """Count the calls of ``owner.name`` (still made): how many tables left the fast path."""
    calls: list[int] = []
    real: Callable[..., Any] = getattr(owner, name)

    def counted(*args: Any, **options: Any) -> Any:
        calls.append(1)
        return real(*args, **options)

    monkeypatch.setattr(owner, name, counted)
    return calls


def _timelines(lines: list[str]) -> list[tuple[int, list[str], str]]:
    """Each session's request count (its summary's first line), its timeline's rows (as many
    lines after the header and its rule), and the line after them."""
    found = []
    for at, line in enumerate(lines):
        if line == "timeline":
            count = next(int(m.group(1)) for back in reversed(lines[:at])
                         if (m := re.match(r"requests (\d+) \(", back)))
            assert set(lines[at + 2]) == {"─"}, lines[at:at + 3]  # the compact table's header rule
            rows = lines[at + 3:at + 3 + count]
            found.append((count, rows, lines[at + 3 + count] if at + 3 + count < len(lines) else ""))
    return found


@pytest.mark.skipif(not (CORPUS / "live").is_dir(), reason="../shared/corpus is absent")
@pytest.mark.parametrize("name", LOG_SETS)
def test_cache_timeline_at_80_columns_is_a_row_a_line(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Before: a log with a compaction request and a long verdict (``break_unattributed``) needed
    82-84 columns and fell to a block of lines a request, and ``break_explained (header_change)``
    wrapped under its row. Now "reusable", then "prompt", then "kind" are left out (and named)
    first: every row of every timeline is one line, drawn by the fast path (no rich layout)."""
    rich = _counting(monkeypatch, _table_draw, "_draw_table_rich")
    blocks = _counting(monkeypatch, layout, "_draw_records")
    result = CliRunner().invoke(cli, ["cache", *map(str, LOG_SETS[name])], env={"COLUMNS": "80"},
                                catch_exceptions=False)
    assert result.exit_code in (0, 1), result.stderr
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    # a heading's log path stays whole, to be copied (the terminal wraps it)
    assert [line for line in lines if cell_len(line) > 80 and " " in line] == []
    timelines = _timelines(lines)
    assert timelines and (rich, blocks) == ([], [])
    for count, rows, after in timelines:
        assert [row.split()[0] for row in rows] == [str(index) for index in range(count)], rows
        assert not after.startswith(" "), (rows, after)  # no row's cell wrapped onto a line of its own


def test_cache_of_a_compaction_and_a_long_verdict_leaves_out_reusable() -> None:
    """The tour's log (fleet/codex): before, 4 blocks of 10 lines."""
    result = CliRunner().invoke(cli, ["cache", str(IMPORTED / "codex")], env={"COLUMNS": "80"})
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    at = lines.index("timeline")
    assert (result.exit_code, lines[at + 1:]) == (0, [
        "#  kind        t/s/a  prompt  expected  actual  classification      lost",
        "─" * 72,
        "0  loop        1/1/1    3000         0       0  as_expected",
        "1  loop        1/2/1    3100      2944    2944  as_expected",
        "2  compaction  1/3/1    3200      3072    2944  as_expected",
        "3  loop        2/1/1    1100         0     512  break_unattributed   512",
        "t/s/a: turn/step/attempt",
        "narrow terminal: reusable not shown (widen it, or use --json)"])


def test_a_run_of_timelines_shares_one_header() -> None:
    """The Claude Code timeline fits with "turn/step/attempt"; the Codex one after it needs
    "t/s/a": both say "t/s/a", as `requests` does (no run switches headers). The Claude Code one's
    "lost" (no values), left out for its long headers, stays out for "t/s/a" (fuzz 32 D5: no
    column comes back on a narrower terminal)."""
    result = CliRunner().invoke(cli, ["cache", str(IMPORTED / "claude-code"), str(IMPORTED / "codex")],
                                env={"COLUMNS": "80"})
    lines = [line.rstrip() for line in result.stdout.splitlines()]
    assert [lines[at + 1] for at, line in enumerate(lines) if line == "timeline"] == [
        "#  kind  t/s/a  prompt  reusable  expected  actual  classification",
        "#  kind        t/s/a  prompt  expected  actual  classification      lost"]



#: The timeline's columns as the --help names them (a layout may say "t/s/a" for "turn/step/attempt").
_TIMELINE = ["#", "kind", "turn/step/attempt", "prompt", "reusable", "expected", "actual", "classification", "lost"]


def _shown_columns(monkeypatch: pytest.MonkeyPatch, log: Path, widths: range) -> dict[int, list[str]]:
    """The timeline's columns `cache` of ``log`` shows at each of ``widths`` (COLUMNS), as a table or
    a block of lines a request: the log accounted once (a `cache` run), then its timeline laid out
    at each width as cache_command lays it out (nothing drawn), fast enough for 81 widths."""
    reports: list[Any] = []
    real: Callable[..., list[Any]] = getattr(_cache, "run_priced")

    def accounted(*args: Any, **options: Any) -> list[Any]:
        reports.extend(real(*args, **options))
        return reports

    monkeypatch.setattr(_cache, "run_priced", accounted)
    tables: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    monkeypatch.setattr(_cache, "print_table", lambda *args, **options: tables.append((args, options)))
    result = CliRunner().invoke(cli, ["cache", str(log)], env={"COLUMNS": "80"}, catch_exceptions=False)
    assert (result.exit_code, len(reports), len(tables)) == (0, 1, 1), result.stderr
    drawn: list[list[str]] = []
    monkeypatch.setattr(layout, "_draw_table", lambda console, title, headers, *rest, **options: drawn.append(
        [{"t/s/a": "turn/step/attempt"}.get(header, header) for header in headers]))
    monkeypatch.setattr(layout, "_draw_records", lambda console, title, headers, *rest, **options: drawn.append(
        list(headers)))
    (title, columns, _), options = tables[0]
    for width in widths:
        monkeypatch.setenv("COLUMNS", str(width))
        timelines, options["in_short"] = _cache._tables(reports)  # the run's short form at this width
        layout.print_table(title, columns, timelines[id(reports[0])], **options)
    assert len(drawn) == len(widths)
    return dict(zip(widths, drawn))


@pytest.mark.skipif(not (CORPUS / "live").is_dir(), reason="../shared/corpus is absent")
@pytest.mark.parametrize("name, left_out", [
    ("live/c-change", {80: "reusable", 70: "reusable prompt kind", 64: "reusable prompt kind",
                       60: "reusable prompt kind"}),
    # "lost" has no value in any row: it goes first, and never comes back for "t/s/a"
    ("live/e-compaction", {80: "lost reusable", 70: "lost reusable prompt", 64: "lost reusable prompt kind",
                           60: "lost reusable prompt kind"}),
    ("live-pi/c1-anthropic-tools", {80: "reusable prompt", 70: "reusable prompt kind", 64: "reusable prompt kind",
                                    60: "reusable prompt kind"})])
def test_a_narrower_terminal_never_shows_a_column_a_wider_one_left_out(
        monkeypatch: pytest.MonkeyPatch, name: str, left_out: dict[int, str]) -> None:
    """Fuzz 32 D5: at 70 and 66 columns "kind", "prompt" and "reusable" were left out, at 64 "kind"
    and "prompt" came back (a classification wrapped for them), and "kind" at 60; "lost" (no
    values) came back at 97 for "t/s/a". Now, from 120 columns down to 40 (a block of lines a
    request too), each width shows the columns of the next wider one or fewer, left out in the
    --help's order (reusable, prompt, kind) before a classification wraps."""
    shown = _shown_columns(monkeypatch, CORPUS / name, range(120, 39, -1))
    assert [width for width in range(119, 39, -1) if not set(shown[width]) <= set(shown[width + 1])] == []
    assert {width: shown[width] for width in left_out} == {
        width: [column for column in _TIMELINE if column not in names.split()] for width, names in left_out.items()}

# --- 2. a Claude Code session's title: the summary of its conversation's leaf -----------------------

def _record(kind: str, uuid: str | None = None, parent: str | None = None, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "uuid": uuid, "parentUuid": parent, **fields}


def _summary(text: Any, leaf: str) -> dict[str, Any]:
    return {"type": "summary", "summary": text, "leafUuid": leaf}


_CHAIN = [_record("user", "u1"), _record("assistant", "a1", "u1"), _record("user", "u2", "a1"),
          _record("assistant", "a2", "u2")]
_BRANCH = [_record("user", "b1", "a1"), _record("assistant", "b2", "b1")]  # an edit of u2, before it


@pytest.mark.parametrize("records, title", [
    ([_summary("Leaf", "a2"), *_CHAIN], "Leaf"),
    # the leaf has none yet (the conversation went on after it was titled): the nearest before it
    ([_summary("Earlier", "a1"), _summary("Older", "u1"), *_CHAIN], "Earlier"),
    # another branch's summary names another conversation; the file's last main record is the leaf
    ([_summary("Other branch", "b2"), *_BRANCH, *_CHAIN], None),
    ([_summary("Other branch", "b2"), _summary("This one", "u2"), *_BRANCH, *_CHAIN], "This one"),
    # a sidechain (subagent) record is no leaf of the session's conversation
    ([_summary("Leaf", "a2"), *_CHAIN, _record("assistant", "s1", "a2", isSidechain=True)], "Leaf"),
    # across a compaction boundary, by its logicalParentUuid
    ([_summary("Before compaction", "a2"), *_CHAIN,
      _record("system", "c1", None, subtype="compact_boundary", logicalParentUuid="a2"),
      _record("user", "u3", "c1")], "Before compaction"),
    # the last summary of a leaf wins; a blank or non-string one is none
    ([_summary("First", "a2"), _summary("Second", "a2"), *_CHAIN], "Second"),
    ([_summary("  ", "a2"), _summary(7, "a1"), *_CHAIN], None),
    # a /rename wins over every summary, its last one
    ([_summary("Leaf", "a2"), *_CHAIN, {"type": "custom-title", "customTitle": "mine", "sessionId": "s"},
      {"type": "custom-title", "customTitle": "renamed", "sessionId": "s"}], "renamed"),
    # a parent loop ends the walk
    ([_summary("Elsewhere", "zz"), _record("user", "l1", "l2"), _record("assistant", "l2", "l1")], None),
    (_CHAIN, None),
], ids=["leaf", "nearest", "other-branch", "branch-and-chain", "sidechain", "compaction", "last-wins", "blank",
        "rename", "loop", "none"])
def test_claude_code_title(records: list[dict[str, Any]], title: str | None) -> None:
    lines = list(enumerate(records, start=1))
    by_uuid = {record["uuid"]: (line, record) for line, record in lines if isinstance(record.get("uuid"), str)}
    assert _title(lines, by_uuid) == title


def test_a_claude_code_session_is_titled_by_its_summary_escaped_in_a_table(tmp_path: Path) -> None:
    """Before: no title ("-"; --json null). A hostile summary is escaped in the table, whole in JSON."""
    result = CliRunner().invoke(cli, ["sessions", str(CLAUDE), str(IMPORTED / "codex"), "--json"])
    assert [json.loads(line)["title"] for line in result.stdout.splitlines()] == [
        "YAML config loader for app.py", None]  # Codex logs no title
    lines = CLAUDE.read_text().splitlines()
    log = tmp_path / CLAUDE.name
    log.write_text("\n".join([json.dumps({**json.loads(lines[0]), "summary": "Fix \x1b[31m[bold]red[/bold] loader"}),
                              *lines[1:]]) + "\n")
    result = CliRunner().invoke(cli, ["sessions", str(log)], env={"COLUMNS": "200"})
    assert result.stdout.splitlines()[4:6] == [  # issue 14 B1: tokens, first activity, format, and the total row
        "│ 2026-01-05 10:06 │ Fix \\u001b[31m[bold]red[/bold] loader │ /work/proj │        4 │   5559 │     59.3% │ -      │"
        " $0.0134 │ 2026-01-05 10:00 │ claude-code │ 7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11 │",
        "│ total            │                                       │            │        4 │   5559 │     59.3% │ -      │"
        " $0.0134 │                  │             │                                      │"]
    result = CliRunner().invoke(cli, ["sessions", str(log), "--json"])
    assert json.loads(result.stdout)["title"] == "Fix \x1b[31m[bold]red[/bold] loader"


# --- 3. README: the commands that take --jobs -------------------------------------------------------

def test_readme_names_every_command_that_takes_jobs() -> None:
    text = " ".join((ROOT / "README.md").read_text().split())
    listed = re.search(r"; ((?:`[a-z]+`,? (?:and )?)+)take `-j/--jobs N`, all but ((?:`[a-z]+`(?: and )?)+) with "
                       r"`--engine dask --scheduler ADDRESS`", text)
    assert listed is not None
    context = click.Context(cli)
    commands = {name: cli.get_command(context, name) for name in cli.list_commands(context)}  # each loaded
    options = {name: {o for param in command.params for o in param.opts} for name, command in commands.items()
               if command is not None}
    with_jobs = {name for name, opts in options.items() if {"-j", "--jobs"} <= opts}
    assert set(re.findall(r"`([a-z]+)`", listed.group(1))) == with_jobs == {name for name, opts in options.items()
                                                                           if "--jobs" in opts}
    assert set(re.findall(r"`([a-z]+)`", listed.group(2))) == {"sessions", "diff"} == {
        name for name in with_jobs if "--engine" not in options[name]}
