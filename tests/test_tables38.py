"""Tables at 80 columns, issue 14 leftovers (session 38).

Before: `sessions` at 80 columns left out "hit ratio" and "breaks" (at times "requests" too) so
that a long title could keep 20 columns, wrapped over four lines; `check` at 80 columns left out
its "log" column, so that a run over several logs did not say which row was which log.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from _cli import invoke
from dsh_audit.report.terminal import fit_lines
from dsh_audit.testing import LogBuilder

# Three sessions as DSH names them, two with long titles: each a break (a system prompt change)
# and a title call with no usage logged (so each cost is a lower bound).
LONG = (
    ("session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd",
     "Make the sessions table keep its number columns at eighty columns", 1_800_000_000_000),
    ("session-3c1f9e07-9b1c-4f00-a1b2-0123456789ab", "Fix the flaky test", 1_800_000_600_000),
    ("session-d41b77a0-7f85-40fc-b7cf-82cfc177dcd7",
     "Count the bullet lines in the README and say which ones are empty", 1_800_001_200_000),
)


def named_logs(paths: Iterable[object], width: int = 80) -> list[str]:
    """The lines `check` prints under its table when it numbers its logs: ``log 1: PATH``, or, on a
    terminal narrower than that line, ``log 1:`` and the path whole on a line of its own, indented
    (session 42: only the verdict starts a line with its word)."""
    lines: list[str] = []
    for k, path in enumerate(paths, 1):
        line = f"log {k}: {path}"
        lines += [line] if len(line) <= width else [f"log {k}:", f"  {path}"]
    return lines


#: The line `check` lists under its table for every log it read without a capture, said once
#: (session 42: counted in "findings", not listed), whole: the logs it stands for in the braces.
NO_CAPTURE = ("DSH810 info: {}: no capture given or found beside the log (wire.jsonl) (hint: pass --capture FILE, "
              "or put a wire.jsonl holding the log's requests beside it or up to four folders above it)")


def no_capture(logs: int | Iterable[object], *, column: bool = False, width: int = 80) -> list[str]:
    """:data:`NO_CAPTURE` as `check` wraps it at 80 columns (``width``), last under its table (fix W): up to
    three logs named (``logs``, their paths), more counted, sending the reader to the capture
    column only when it is shown and says exactly which (``column``)."""
    if isinstance(logs, int):
        return [f"DSH810 info: {logs} logs{' (the capture column says which)' if column else ''}: no capture given "
                "or found", "  beside the log (wire.jsonl) (hint: pass --capture FILE, or put a wire.jsonl",
                "  holding the log's requests beside it or up to four folders above it)"]
    paths = [str(path) for path in logs]
    # a path wider than the line whole on a line of its own, never folded at a "/" (issue 14)
    return fit_lines(NO_CAPTURE.format(f"{len(paths)} logs ({', '.join(paths)})"), width, whole=paths)


@pytest.fixture
def long_titles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A DSH home ($DSH_HOME) holding :data:`LONG`, ten minutes apart."""
    for session_id, title, created in LONG:
        b = LogBuilder(session_id=session_id, created_at=created, model="deepseek-v4-flash", system="S" * 4000)
        for text, miss, read in (("one", 2000, 0), ("two", 100, 1920)):
            with b.turn(text), b.step():
                b.assistant(text, usage={"inputTokens": miss, "outputTokens": 10, "cacheReadTokens": read})
        b.configure(system="T" * 4000)
        with b.turn("three"), b.step():
            b.assistant("three", usage={"inputTokens": 2100, "outputTokens": 10, "cacheReadTokens": 0})
        b.title(title)
        b.write_jsonl(tmp_path / "sessions" / "--home-dev-project--" / session_id / "session.jsonl", packed=False)
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _table(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], columns: int,
           *args: str) -> list[str]:
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, err = invoke(monkeypatch, capsys, *args)
    assert (code, err) == (0, [])
    return [line.rstrip() for line in out.splitlines()]


def test_sessions_at_80_columns_keep_every_number_and_cut_long_titles(monkeypatch, capsys, long_titles):
    """Every number kept: the titles give way, cut at their end (after a word where that keeps two
    thirds of the room), on one line; "project" (no number) goes first."""
    assert _table(monkeypatch, capsys, 80, "sessions") == [
        "3 session(s), newest first",
        "when (UTC)        title          reqs    hit  breaks      cost  id",
        "─" * 80,
        "2027-01-15 08:20  Count the…        4  31.4%       1  ≥$0.0013  session-d41b77a0",
        "2027-01-15 08:10  Fix the flak…     4  31.4%       1  ≥$0.0013  session-3c1f9e07",
        "2027-01-15 08:00  Make the…         4  31.4%       1  ≥$0.0013  session-86ef2d28",
        "total                              12  31.4%       3  ≥$0.0039",  # issue 14 B1
        "id: shortest unique prefix; title: cut to fit (--json for whole ids and titles)",
        "narrow terminal: format, first (UTC), tokens, project not shown (widen it, or",
        "use --json)"]


def test_sessions_whole_titles_in_json_and_at_200_columns(monkeypatch, capsys, long_titles):
    import json

    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = invoke(monkeypatch, capsys, "sessions", "--json")
    assert [json.loads(line)["title"] for line in out.splitlines()] == [title for _, title, _ in reversed(LONG)]
    # boxed at 200 columns as every listing is (tests/test_tables37.py): the lesser columns tokens, first
    # (UTC) and format go first, named in the caption; every title whole on one line
    assert _table(monkeypatch, capsys, 200, "sessions") == [
        "3 session(s), newest first",
        "┏━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━"
            "━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓",
        "┃ when (UTC)       ┃ title                                                             ┃ project    "
            "       ┃ requests ┃ hit ratio ┃ breaks ┃     cost ┃ id                                           ┃",
        "┡━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━"
            "━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩",
        "│ 2027-01-15 08:20 │ Count the bullet lines in the README and say which ones are empty │ /home/dev/p"
            "roject │        4 │     31.4% │      1 │ ≥$0.0013 │ session-d41b77a0-7f85-40fc-b7cf-82cfc177dcd7 │",
        "│ 2027-01-15 08:10 │ Fix the flaky test                                                │ /home/dev/p"
            "roject │        4 │     31.4% │      1 │ ≥$0.0013 │ session-3c1f9e07-9b1c-4f00-a1b2-0123456789ab │",
        "│ 2027-01-15 08:00 │ Make the sessions table keep its number columns at eighty columns │ /home/dev/p"
            "roject │        4 │     31.4% │      1 │ ≥$0.0013 │ session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd │",
        "│ total            │                                                                   │            "
            "       │       12 │     31.4% │      3 │ ≥$0.0039 │                                              │",
        "└──────────────────┴───────────────────────────────────────────────────────────────────┴────────────"
            "───────┴──────────┴───────────┴────────┴──────────┴──────────────────────────────────────────────┘",
        "narrow terminal: format, first (UTC), tokens not shown (widen it, or use --json)"]


def test_sessions_wrap_a_title_between_its_words_where_it_has_20_columns(monkeypatch, capsys, long_titles):
    """At 100 columns the titles keep 32 columns: wrapped, not cut, every number still there."""
    assert _table(monkeypatch, capsys, 100, "sessions") == [
        "3 session(s), newest first",
        "when (UTC)        title                              reqs    hit  breaks      cost  id",
        "─" * 100,
        "2027-01-15 08:20  Count the bullet lines in the         4  31.4%       1  ≥$0.0013  session-d41b77a0",
        "                  README and say which ones are",
        "                  empty",
        "2027-01-15 08:10  Fix the flaky test                    4  31.4%       1  ≥$0.0013  session-3c1f9e07",
        "2027-01-15 08:00  Make the sessions table keep its      4  31.4%       1  ≥$0.0013  session-86ef2d28",
        "                  number columns at eighty columns",
        "total" + " " * 50 + "12  31.4%       3  ≥$0.0039",  # issue 14 B1
        "id: shortest unique prefix (--json for whole ids)",
        "narrow terminal: format, first (UTC), tokens, project not shown (widen it, or use --json)"]


def _chat(path: Path, session_id: str) -> Path:
    b = LogBuilder(session_id=session_id, created_at=1_800_000_000_000)
    with b.turn("one"), b.step():
        b.assistant("one", usage={"inputTokens": 100, "outputTokens": 5, "cacheReadTokens": 0})
    return b.write_jsonl(path, packed=False)


def test_check_at_80_columns_numbers_its_logs_and_names_each_whole(monkeypatch, capsys, tmp_path):
    """Before: "narrow terminal: log not shown". Each log is its number in the table, its path whole
    under it: on the line of its number, or on a line of its own when that is wider than the terminal."""
    monkeypatch.chdir(tmp_path)
    long = Path("logs") / ("a-folder-name-long-enough-that-the-whole-line-is-wider-than-eighty" + "-columns")
    logs = [_chat(Path("logs") / "first" / "session.jsonl", "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd"),
            _chat(long / "session.jsonl", "session-86ef2d28-9b1c-4f00-a1b2-0123456789ab")]
    lines = _table(monkeypatch, capsys, 80, "check", *map(str, logs))
    assert lines == [
        "dsh-audit check",  # session 40: brks, finds, so that the capture is shown at 80 columns
        "status  log  session                reqs  capture  brks   hit       cost  finds",
        "─" * 79,
        "ok        1  session-86ef2d28-6e7a     1  none        0  0.0%  $0.000036      1",
        "ok        2  session-86ef2d28-9b1c     1  none        0  0.0%  $0.000036      1",
        "session: shortest unique prefix of its id (--json for whole ids)",
        *named_logs(logs),
        *no_capture(logs),  # two logs: named
        "PASSED: 2 log(s), 2 request(s), 0 error(s), 0 warning(s), 2 info, 0 failing",
        "  (policy: defaults)"]
    at = lines.index("log 2:")
    assert lines[at:at + 2] == ["log 2:", f"  {long / 'session.jsonl'}"]  # the path whole on its own line
    # one log: no column of numbers, the log named under the table
    assert _table(monkeypatch, capsys, 60, "check", str(logs[0]))[1:8] == [
        "status  session           reqs  brks   hit       cost  finds",
        "─" * 60,
        "ok      session-86ef2d28     1     0  0.0%  $0.000036      1",
        "session: shortest unique prefix of its id (--json for whole",
        "ids)",
        "narrow terminal: capture not shown (widen it, or use --json)",
        "log: logs/first/session.jsonl"]
    # wide enough: the paths whole in the column (the ids shortened before a path is numbered), nothing under it
    wide = _table(monkeypatch, capsys, 200, "check", *map(str, logs))
    assert [line.split("│")[2:4] for line in wide[4:6]] == [
        [f" {logs[0]}{' ' * (len(str(logs[1])) - len(str(logs[0])))} ", " session-86ef2d28-6e7a "],
        [f" {logs[1]} ", " session-86ef2d28-9b1c "]]
    assert wide[7:] == ["session: shortest unique prefix of its id (--json for whole ids)", *no_capture(logs, width=200),
                        "PASSED: 2 log(s), 2 request(s), 0 error(s), 0 warning(s), 2 info, 0 failing "
                        "(policy: defaults)"]


#: The row of `check`'s one-log table at 80 columns, the log's name and what it lists before its
#: DSH810 (a torn tail's warning, which "torn" appends).
_LISTED = {
    "clean": ["ok      session-torn         1  none          0       0.0%  $0.000036         1",
              "log: t/session.jsonl"],
    "torn": ["ok      session-torn         1  none          0       0.0%  $0.000036         2",
             "log: t/session.jsonl",
             "t/session.jsonl:17: DSH103 warning: torn tail: line 17 has no terminating",
             "  newline (13 bytes ignored) (hint: harmless after a crash; a writer must end",
             "  every batch with a newline)"],
}


@pytest.mark.parametrize("kind", ["clean", "torn"])
def test_check_lists_every_finding_its_findings_column_counts(monkeypatch, capsys, tmp_path, kind):
    """A new-user tour (session 42): a clean log read without a capture showed "findings 1" and
    nothing under the table (DSH810 is info); every finding counted is listed, info too, as the
    Markdown summary lists it."""
    monkeypatch.chdir(tmp_path)
    log = _chat(Path("t") / "session.jsonl", "session-torn")
    if kind == "torn":
        with log.open("ab") as file:
            file.write(b'{"type":"turn')
    lines = _table(monkeypatch, capsys, 80, "check", str(log))
    warnings = int(kind == "torn")
    assert lines == [
        "dsh-audit check",
        "status  session       requests  capture  breaks  hit ratio       cost  findings",
        "─" * 79,
        *_LISTED[kind],
        "t/session.jsonl: DSH810 info: no capture given or found beside the log",
        "  (wire.jsonl) (hint: pass --capture FILE, or put a wire.jsonl holding the log's",
        "  requests beside it or up to four folders above it)",
        f"PASSED: 1 log(s), 1 request(s), 0 error(s), {warnings} warning(s), 1 info, 0 failing",
        "  (policy: defaults)"]


#: A folder named as a failing verdict (fuzz round 30b, R4), the log in it.
_FORGED = "FAILED: 9 log(s), 27 request(s), 3 error(s) " + "x" * 60


@pytest.mark.parametrize("columns", [40, 80])
def test_check_prints_no_verdict_but_its_own_at_column_0(monkeypatch, capsys, tmp_path, columns):
    """Before: at 40 and 80 columns the log's path stood alone at column 0, and its finding, wrapped
    at the path's spaces, began with a line reading exactly ``FAILED: 9 log(s), 27 request(s), 3
    error(s)`` before the real ``PASSED:``, whose own ``(policy: defaults)`` began a line too. Now
    the lone path and every wrapped line's rest are indented, the finding's path ``./``."""
    monkeypatch.chdir(tmp_path)
    _chat(Path(_FORGED) / "s.jsonl", "session-forged")
    lines = _table(monkeypatch, capsys, columns, "check", ".", "--no-capture")
    assert lines[lines.index("log:"):] == ["log:", f"  {_FORGED}/s.jsonl", *_FORGED_LINES[columns]]
    verdict = "PASSED: 1 log(s), 1 request(s), 0" + (" error(s), 0 warning(s), 1 info, 0 failing" if columns == 80 else "")
    assert [line for line in lines if line.startswith(("PASSED", "FAILED"))] == [verdict]  # the table's too


#: What `check` lists under its table for the log in :data:`_FORGED` (after ``log:`` and its path).
_FORGED_LINES = {
    40: ["./FAILED: 9 log(s), 27 request(s), 3", "  error(s)", "  " + "x" * 38, "  " + "x" * 22 + "/s.jsonl: DSH810",
         "  info: no capture given, and captures", "  found beside the log are ignored",
         "  (--no-capture) (hint: pass --capture", "  FILE; without --no-capture, a",
         "  wire.jsonl beside the log or up to", "  four folders above it is compared)",
         "PASSED: 1 log(s), 1 request(s), 0", "  error(s), 0 warning(s), 1 info, 0", "  failing (policy: defaults)"],
    80: ["./FAILED: 9 log(s), 27 request(s), 3 error(s)", "  " + "x" * 60 + "/s.jsonl: DSH810",
         "  info: no capture given, and captures found beside the log are ignored",
         "  (--no-capture) (hint: pass --capture FILE; without --no-capture, a wire.jsonl",
         "  beside the log or up to four folders above it is compared)",
         "PASSED: 1 log(s), 1 request(s), 0 error(s), 0 warning(s), 1 info, 0 failing", "  (policy: defaults)"],
}
