"""Whole outputs at 80 columns, as a new user reads them (issue 14): a date and a session id are
never split over lines, a column with no value in any row is the first left out, a row that fits
on one line is drawn on one, and the short id a narrow table shows is one `explain` accepts."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from _cli import invoke
from _terminal import in_terminal
from dsh_audit.report.terminal import short_ids
from dsh_audit.report.terminal import print_table
from dsh_audit.testing import LogBuilder

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
ROOT = SAMPLES.parent
# Three sessions as DSH names them: two share their UUID's first group, one has no prefix.
UUID_SESSIONS = (
    ("session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd", "Fix the flaky test", 1_800_000_000_000),
    ("session-86ef2d28-9b1c-4f00-a1b2-0123456789ab", None, 1_800_000_600_000),
    ("402a1ae8-7f85-40fc-b7cf-82cfc177dcd7", "Count the bullet lines in the README", 1_800_001_200_000),
)
# the samples' deepseek-official usages log no cacheReadTokens: hits unknown, so no request is priced
# and every cost is "$?" (docs/cache-accounting.md, "Unpriced requests"), never an exact guess
# The samples' replies log their cache reads (as DSH's DeepSeek adapter does): every session priced
# but the chat's title call and the retry's failed attempts (no usage logged: "≥$", a lower bound).
SAMPLE_SESSIONS = [  # every number kept: each id cut to its unique prefix ("…"), the one title to 8 columns
    "8 session(s), newest first",
    "when (UTC)        title     reqs    hit  breaks       cost  id",
    "─" * 80,
    "2027-01-15 08:00  -            4  46.1%       0    $0.0003  session-sample-t…",
    "2027-01-15 08:00  -            5  11.7%       4    $0.0011  session-sample-chan…",
    "2027-01-15 08:00  -            4  58.2%       0    $0.0002  session-sample-f…",
    "2027-01-15 08:00  └ fork       1  88.6%       0  $0.000022  fork-chi…",  # under its parent
    "2027-01-15 08:00  -            4  31.7%       2    $0.0003  session-sample-co…",
    "2027-01-15 08:00  -            3  19.1%       1    $0.0004  session-sample-res…",
    "2027-01-15 08:00  Who are…     3  26.9%       0   ≥$0.0001  session-sample-chat",
    "2027-01-15 08:00  -            4  28.3%       1   ≥$0.0004  session-sample-ret…",
    "total                         28  36.4%       8   ≥$0.0029",  # issue 14 B1: the totals row
    # before (session 40): ids are never cut unless they hold a UUID, so "hit ratio" and "breaks" went
    "id: shortest unique prefix; title: cut to fit (--json for whole ids and titles)",
    # the lesser columns (issue 14 B1) left out first
    "narrow terminal: format, first (UTC), tokens, project not shown (widen it, or",
    "use --json)"]


@pytest.fixture
def uuid_home(tmp_path: Path) -> Path:
    """A DSH home holding :data:`UUID_SESSIONS`, ten minutes apart, two of them titled."""
    for session_id, title, created in UUID_SESSIONS:
        builder = LogBuilder(session_id=session_id, created_at=created)
        with builder.turn("Hi"):
            with builder.step():
                # DeepSeek reports its cache hits, so DSH logs cacheReadTokens (a 0 here); without
                # it the hits are unknown and the request unpriced (docs/cache-accounting.md)
                builder.assistant("Hello", usage={"inputTokens": 131, "outputTokens": 8, "cacheReadTokens": 0})
        if title is not None:
            builder.title(title)
        builder.write_jsonl(tmp_path / "sessions" / "--home-dev-project--" / session_id / "session.jsonl", packed=False)
    return tmp_path


def at_80(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str,
          home: Path | None = None) -> tuple[int, list[str], list[str]]:
    """``dsh-audit ARGS`` piped at COLUMNS=80: exit code, stdout lines (trailing blanks cut) and stderr lines."""
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("DSH_HOME", str(home if home is not None else SAMPLES))
    code, out, err = invoke(monkeypatch, capsys, *args)
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    return code, [line.rstrip() for line in lines], err


def test_sessions_keep_the_date_whole_and_leave_out_the_empty_column_first(monkeypatch, capsys):
    """Before: "2027-01-15 08:00" was split into two lines on every row, while "hit" (no value:
    the samples log no cache reads) kept its place."""
    code, lines, err = at_80(monkeypatch, capsys, "sessions")
    assert (code, err) == (0, [])
    assert lines == SAMPLE_SESSIONS


def test_sessions_in_an_80_column_terminal_are_the_piped_table(monkeypatch, capsys, tmp_path: Path):
    """The same table in a real pseudo-terminal 80 columns wide (no COLUMNS, no pager)."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "PAGER", "DSH_AUDIT_PAGER")}
    env.update(DSH_HOME=str(SAMPLES), DSH_AUDIT_PAGER="", PYTHONPATH=str(ROOT), TERM="xterm")
    code, shown, err = in_terminal(["sessions"], columns=80, env=env, cwd=tmp_path)
    assert (code, err) == (0, b"")
    assert [line.rstrip() for line in shown.splitlines()] == SAMPLE_SESSIONS


def test_requests_draw_a_row_a_line_when_the_compact_table_holds_it(monkeypatch, capsys):
    """Before: boxed, "6 initial" wrapped under every row, and "cache read" (all "?", a number
    not logged) left-aligned while "input" right-aligned its "?"."""
    monkeypatch.chdir(ROOT)
    code, lines, err = at_80(monkeypatch, capsys, "requests", "sample_logs/chat/session.jsonl")
    assert (code, err) == (0, [])
    assert lines == [
        "sample_logs/chat/session.jsonl  session session-sample-chat",
        "#  turn/step/attempt  kind   header     msgs  input  cache read  output  finish",
        "─" * 79,
        "0  -                  title  -             1      ?           ?       ?",
        "1  1/1/1              loop   6 initial     2    219           0      25  stop",
        "2  2/1/1              loop   6 initial     4    128         128      10  stop",
        "   total                                        347         128      35",
        "total: each count summed over the requests that logged it (?: not logged)"]


def test_sessions_show_short_ids_that_explain_accepts(monkeypatch, capsys, uuid_home: Path):
    """Before: every id was folded over two lines ("session-86ef2d28-6e7a-43ae-" / "ad66-...")."""
    code, lines, err = at_80(monkeypatch, capsys, "sessions", home=uuid_home)
    assert (code, err) == (0, [])
    assert lines == [
        "3 session(s), newest first",
        "when (UTC)        title          reqs  breaks        cost  id",
        "─" * 80,
        # a cost above 0 too small for 4 decimals: two significant digits (was "≥$0.0000"); "breaks" kept,
        # each title cut for it (session 46: was wrapped at a word, "breaks" and "hit" left out)
        "2027-01-15 08:20  Count the…        2       0  ≥$0.000049  402a1ae8",
        "2027-01-15 08:10  -                 1       0   $0.000049  session-86ef2d28-9b1c",
        "2027-01-15 08:00  Fix the flak…     2       0  ≥$0.000049  session-86ef2d28-6e7a",
        "total                               5       0    ≥$0.0001",  # issue 14 B1
        "id: shortest unique prefix; title: cut to fit (--json for whole ids and titles)",
        # "reqs": "requests" would take the title's room; the lesser columns (issue 14 B1) left out first make
        # the caption too wide in the headers' own words: it says "hit"
        "narrow terminal: format, first (UTC), tokens, project, hit not shown (widen it,",
        "or use --json)"]
    code, lines, err = at_80(monkeypatch, capsys, "explain", "session-86ef2d28-6e7a", "0", home=uuid_home)
    assert (code, err) == (0, [])
    assert lines[0] == "request 0 (loop, turn 1 step 1 attempt 1) of session"
    assert lines[1] == "  session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd: first"


def test_sessions_wide_enough_show_whole_ids(monkeypatch, capsys, uuid_home: Path):
    monkeypatch.setenv("COLUMNS", "150")  # was 120: whole ids there left the project out (session 41)
    monkeypatch.setenv("DSH_HOME", str(uuid_home))
    code, out, err = invoke(monkeypatch, capsys, "sessions")
    assert (code, err) == (0, [])
    lines = [line.rstrip() for line in out.splitlines()]
    assert [re.findall(r"\S*[0-9a-f]{8}-[0-9a-f-]{27}", line)[0] for line in lines if "2027" in line] == [
        "402a1ae8-7f85-40fc-b7cf-82cfc177dcd7", "session-86ef2d28-9b1c-4f00-a1b2-0123456789ab",
        "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd"]
    assert "shortest unique prefix" not in out and "/home/dev/project" in out  # the project too


def test_sessions_cut_ids_before_they_leave_the_project_out(monkeypatch, capsys, uuid_home: Path):
    """Session 41: from 120 to 140 columns whole ids left "project" out, and headed "requests" "reqs";
    an id is shortened first, as `check` shortens one before a header."""
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("DSH_HOME", str(uuid_home))
    code, out, err = invoke(monkeypatch, capsys, "sessions")
    assert (code, err) == (0, [])
    assert [line.rstrip() for line in out.splitlines()] == [
        "3 session(s), newest first",
        "                                                                          hit",
        "when (UTC)        title                    project            requests  ratio  breaks        cost  id",
        "─" * 120,
        "2027-01-15 08:20  Count the bullet lines   /home/dev/project         2   0.0%       0  ≥$0.000049  402a1ae8",
        "                  in the README",
        "2027-01-15 08:10  -                        /home/dev/project         1   0.0%       0   $0.000049  "
        "session-86ef2d28-9b1c",
        "2027-01-15 08:00  Fix the flaky test       /home/dev/project         2   0.0%       0  ≥$0.000049  "
        "session-86ef2d28-6e7a",
        "total" + " " * 64 + "5   0.0%       0    ≥$0.0001",  # issue 14 B1
        # the ids cut: the lesser columns left out before, whatever room is left (session 45), in one caption
        "id: shortest unique prefix (--json for whole ids); narrow terminal: format, first (UTC), tokens not shown "
        "(widen it, or",
        "use --json)"]


def test_usage_by_session_shows_short_ids_on_one_line(monkeypatch, capsys, uuid_home: Path):
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the log alone, as pinned (a capture found prices: test_found38)
    code, lines, err = at_80(monkeypatch, capsys, "usage", home=uuid_home)
    assert (code, err) == (0, ["warning: 2 request(s) unpriced: usage not logged"])
    # the title calls logged no usage: lower bounds, and "unpriced" is kept (never left out then);
    # the sessions newest first, as `sessions` lists them
    # "requests" kept at 80 columns (session 38: before, it went right after the empty columns);
    # "no cache" (the cost in every row: no cache read) goes first
    assert lines == [
        'usage by session',
        '                                 cache',
        'session                requests   miss  output        cost    off-peak  unpriced',
        "─" * 80,
        '402a1ae8                      2    131       8  ≥$0.000049  ≥$0.000024         1',
        'session-86ef2d28-9b1c         1    131       8   $0.000049   $0.000024',
        'session-86ef2d28-6e7a         2    131       8  ≥$0.000049  ≥$0.000024         1',
        'total                         5    393      24    ≥$0.0001    ≥$0.0001         2',
        '3 session(s); USD per 1,000,000 tokens from the price table (packaged); check',
        'your contract; ≥$: a lower bound (unpriced requests left out), $?: no request',
        'priced; tokens: sums over the 3 request(s) with usage logged (?: none logged);',
        'session ids: shortest unique prefix (--json for whole ids)',
        'narrow terminal: lost tokens (cost) (no values), reusable, cache read, cache',
        'write, no cache not shown (widen it, or use --json)',
    ]


def test_usage_csv_keeps_whole_ids(monkeypatch, capsys, uuid_home: Path):
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("DSH_HOME", str(uuid_home))
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--format", "csv")
    assert code == 0
    assert [line.split(",")[1] for line in out.splitlines()[1:]] == [
        "402a1ae8-7f85-40fc-b7cf-82cfc177dcd7", "session-86ef2d28-9b1c-4f00-a1b2-0123456789ab",
        "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd", "total"]


def test_short_ids_cut_in_whole_uuid_groups():
    ids = ["session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd", "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3de",
           "session-86ef2d28-9b1c-4f00-a1b2-0123456789ab", "402a1ae8-7f85-40fc-b7cf-82cfc177dcd7",
           "session-sample-chat"]
    assert [short_ids(ids)[i] for i in ids] == [
        "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd", "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3de",
        "session-86ef2d28-9b1c", "402a1ae8", "session-sample-chat"]


def test_a_table_keeps_dates_and_ids_whole_and_drops_an_empty_column_first(monkeypatch, capsys):
    """"note" (no value in any row) goes before the droppable "extra"; the date and the id stay whole."""
    monkeypatch.setenv("COLUMNS", "70")
    print_table("t", ["when", "note", "id", "extra"],
                [["2027-01-15 08:00", None, "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd", "a b c"],
                 ["2027-01-16 09:30", "?", "x", "d"]], droppable=["extra"])
    assert [line.rstrip() for line in capsys.readouterr().out.splitlines()] == [
        "t",
        "when              id                                            extra",
        "─" * 69,
        "2027-01-15 08:00  session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd  a b c",
        "2027-01-16 09:30  x                                             d",
        "narrow terminal: note (no values) not shown (widen it, or use --json)"]
