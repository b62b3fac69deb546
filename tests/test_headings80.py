"""A table's heading is one whole line, no id, path, model name or number is ever folded inside a
word, and no Python ``None`` reaches a reader (issue 14).

Before: a session heading was the rich title of its table, wrapped at the table's width
("…/fork-child~003Areview/session.jsonl.zs" / "td  session fork-child:review", also when piped);
`diff` built its heading without the middle cut; a session id without a UUID was folded at a
hyphen ("session-sample-" / "compaction"); `explain` and the JUnit report said "step None";
`requests --json` and `breaks --json` rows did not say which file they came from, and nothing
marked an ``unrecorded_mutation`` break as unexplained.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from _cli import invoke
from _copy_log import samples_differing
from _golden import CORPUS
from _terminal import in_terminal as terminal_run
from dsh_audit.report.terminal import print_table
from dsh_audit.testing import LogBuilder

ROOT = Path(__file__).resolve().parent.parent
FOLDER = "--home-dev-projects-a-project-with-a-rather-long-name--"
UUID_ID = "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd"
CHAT = CORPUS / "live" / "a-chat"
needs_corpus = pytest.mark.skipif(not (CHAT / "wire.jsonl").is_file(), reason="../shared/corpus is absent")
TABLE_80 = ["#  turn/step/attempt  kind  header     msgs  input  cache read  output  finish",
            "─" * 78,
            "0  1/1/1              loop  5 initial     1      ?           ?       8  stop",
            "   total                                         ?           ?       8",
            "total: each count summed over the requests that logged it (?: input: the whole",
            "prompt logged, its cache reads unknown; cache read: not logged)"]


def _chat(path: Path, session_id: str) -> Path:
    builder = LogBuilder(session_id=session_id)
    with builder.turn("Hi"):
        with builder.step():
            builder.assistant("Hello")
    return builder.write_jsonl(path, packed=False)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """Two sessions in a long project folder: one with a UUID id, one with a short id."""
    for session_id in (UUID_ID, "s-short"):
        _chat(tmp_path / "sessions" / FOLDER / session_id / "session.jsonl", session_id)
    return tmp_path


def in_terminal(columns: int, *args: str, cwd: Path) -> list[str]:
    """``dsh-audit ARGS`` in a real pseudo-terminal ``columns`` wide (no COLUMNS, no pager): its
    lines, trailing blanks cut; it must exit 0 with nothing on stderr."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "PAGER", "DSH_AUDIT_PAGER")}
    env.update(DSH_AUDIT_PAGER="", PYTHONPATH=str(ROOT), TERM="xterm")
    code, shown, err = terminal_run(list(args), columns=columns, env=env, cwd=cwd)
    assert (code, err) == (0, b"")
    return [line.rstrip() for line in shown.splitlines()]


# -- headings ---------------------------------------------------------------------------------------

def test_an_80_column_terminal_shows_a_long_path_whole_on_its_line(home: Path) -> None:
    """A path too long to go beside its id takes the line, whole, "session ID" the next (session 37
    tour item 8: a path cut in its middle, "--home-dev-ds…009-b4bb-…/session.jsonl.zstd", could not
    be copied); the terminal wraps it."""
    lines = in_terminal(80, "requests", "sessions", cwd=home)
    paths = [f"sessions/{FOLDER}/s-short/session.jsonl", f"sessions/{FOLDER}/{UUID_ID}/session.jsonl"]
    assert lines == [paths[0], "session s-short", *TABLE_80, paths[1], f"session {UUID_ID}", *TABLE_80]
    assert max(len(line) for line in lines if line not in paths) <= 80  # a path: the terminal wraps it


def test_piped_without_columns_a_heading_is_the_whole_path_on_one_line(monkeypatch, capsys, home: Path) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.chdir(home)
    code, out, err = invoke(monkeypatch, capsys, "requests", "sessions")
    assert (code, err) == (0, [])
    headings = [line for line in out.splitlines() if "session.jsonl" in line]
    assert headings == [f"sessions/{FOLDER}/s-short/session.jsonl  session s-short",
                        f"sessions/{FOLDER}/{UUID_ID}/session.jsonl  session {UUID_ID}"]


def test_the_readme_quick_start_names_the_fork_child_on_one_line(monkeypatch, capsys) -> None:
    """`dsh-audit requests sample_logs/ | grep -A1 fork-child` printed "...session.jsonl.zs" / "td  session ..."."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.chdir(ROOT)
    code, out, _ = invoke(monkeypatch, capsys, "requests", "sample_logs/")
    assert code == 0
    lines = out.splitlines()
    at = next(n for n, line in enumerate(lines) if "fork-child" in line)
    assert lines[at] == ("sample_logs/sessions/--home-dev-projects-demo--/fork-child~003Areview/session.jsonl.zstd"
                         "  session fork-child:review")
    assert lines[at + 1].startswith("┏━━━┳")


def test_a_title_is_cut_to_columns_when_set_and_whole_when_not(monkeypatch, capsys) -> None:
    title = "t" * 30 + "/" + "u" * 30
    monkeypatch.setenv("COLUMNS", "40")
    print_table(title, ["a"], [["1"]])
    assert [line.rstrip() for line in capsys.readouterr().out.splitlines()] == [
        "t" * 19 + "…" + "u" * 20, "a", "─", "1"]  # not a path: cut; compact below 100 columns
    monkeypatch.delenv("COLUMNS")
    print_table(title, ["a"], [["1"]])
    assert capsys.readouterr().out.splitlines()[0] == title


@needs_corpus
def test_diff_cuts_its_heading_like_every_other_command(monkeypatch, capsys) -> None:
    """Before: "...-a-cha" / "t-ws--/session-2b09..." (no middle cut, wrapped at the table's width)."""
    monkeypatch.chdir(CORPUS.parent)
    monkeypatch.setenv("COLUMNS", "80")
    live = Path("corpus") / "live" / "a-chat"
    code, out, _ = invoke(monkeypatch, capsys, "diff", str(live), "--capture", str(live / "wire.jsonl"))
    assert code == 0
    assert out.splitlines()[:2] == [  # the path whole on its line, never cut: it is there to be copied
        "corpus/live/a-chat/home/sessions/--home-dev-dsh-runs-a-a-chat-ws--/session-2b096b61-0a34-4da6-abec-4e87161c2c0b/"
        "session.jsonl.zstd",
        "session session-2b096b61-0a34-4da6-abec-4e87161c2c0b"]


# -- cells ------------------------------------------------------------------------------------------

WHOLE_IDS = ["generated-sample", "session-sample-tools", "session-sample-change",
             "generated-sample-fork-1", "session-sample-fork-parent", "session-sample-compaction", "fork-child:review",
             "session-sample-resume", "session-sample-chat", "session-sample-retry"]
# Session 40: as `sessions` cuts them (a unique prefix and "…", never in the middle), while whole ids
# would leave out a column with a value.
SHORT_IDS = ["generated-sample", "session-sample-t…", "session-sample-chan…",
             "generated-sample-…", "session-sample-f…", "session-sample-co…", "fork-chi…", "session-sample-res…",
             "session-sample-chat", "session-sample-ret…"]


@pytest.mark.parametrize(("columns", "ids"), [(80, SHORT_IDS), (100, SHORT_IDS), (110, SHORT_IDS),
                                              (120, SHORT_IDS), (125, WHOLE_IDS)])  # 120: "reusable" (session 46)
def test_usage_keeps_every_session_id_whole_or_a_prefix(monkeypatch, capsys, columns: int,
                                                       ids: list[str]) -> None:
    """Before, at 90-110 columns: "session-sample-" / "compaction" (only ids holding a UUID were kept
    whole); then, at 56: "session-sam…e-compaction", a middle cut no command takes."""
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(ROOT / "sample_logs"))
    assert code == 0
    lines = out.splitlines()
    assert max(map(len, lines)) <= columns
    # newest first by the logs' own last activity, equal ones by path, as `sessions` lists them
    assert [line.split()[0] for line in lines if re.match(r"(session-|fork-|generated)", line)] == ids


def test_a_long_id_leaves_out_a_droppable_column_before_it_is_folded(monkeypatch, capsys) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    print_table("t", ["id", "note", "n"], [["session-sample-compaction", "a b c d e f g", "1"]], droppable=["note"])
    assert [line.rstrip() for line in capsys.readouterr().out.splitlines()] == [
        "t",
        "id                         n",
        "─" * 28,
        "session-sample-compaction  1",
        "narrow terminal: note not shown (widen",  # wrapped at the terminal's 40 columns
        "it, or use --json)"]


def test_a_word_wider_than_any_layout_is_cut_in_its_middle_never_folded(monkeypatch, capsys) -> None:
    """A path in a narrow column is cut with "…"; so is an id that no layout can hold whole (52
    columns), else it is whole (53); narrower still (40, the narrowest layout), one block per row, the
    path cut to its line, the id whole."""
    row = ["/home/me/sessions/session-1/session.jsonl", "x" * 12 + "-" + "y" * 14]
    shown = {}
    for columns in (53, 52, 40):
        monkeypatch.setenv("COLUMNS", str(columns))
        print_table("t", ["log", "id"], [row])
        shown[columns] = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    assert shown == {
        53: ["t", "log                       id", "─" * 53, "/home/me/se…ession.jsonl  xxxxxxxxxxxx-yyyyyyyyyyyyyy"],
        # the path at its floor, the id cut only as far as the room needs (views33)
        52: ["t", "log                       id", "─" * 52, "/home/me/se…ession.jsonl  xxxxxxxxxxxx…yyyyyyyyyyyyy"],
        40: ["t", "log  /home/me/sessions…n-1/session.jsonl", "id   xxxxxxxxxxxx-yyyyyyyyyyyyyy"]}


# -- no None, and rows that say where they are from -------------------------------------------------

@pytest.fixture
def compacting(tmp_path: Path) -> Path:
    """A log whose second turn compacts automatically before its step: request 1 is a compaction call."""
    builder = LogBuilder(session_id="session-compacting")
    with builder.turn("one"):
        with builder.step():
            builder.assistant("First.")
    with builder.turn("two"):
        builder.compaction("Summary of one.")
        with builder.step():
            builder.assistant("Second.")
    return builder.write_jsonl(tmp_path / "c" / "session.jsonl", packed=False)


def test_a_compaction_call_has_no_step_rather_than_step_none(monkeypatch, capsys, compacting: Path) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "explain", str(compacting), "1")
    assert code == 0
    assert out.splitlines()[0] == "request 1 (compaction, turn 2, no step) of session session-compacting: extension"
    code, out, _ = invoke(monkeypatch, capsys, "check", str(compacting), "--junit", "-")
    assert re.findall(r'testcase name="([^"]*)"', out) == [
        "log", "request 0 (loop turn 1 step 1 attempt 1)", "request 1 (compaction turn 2, no step)",
        "request 2 (loop turn 2 step 1 attempt 1)"]
    assert "None" not in out


def test_requests_json_rows_lead_with_their_path(monkeypatch, capsys, tmp_path: Path) -> None:
    """session-sample-tools in two files that differ (its export's last answer changed): the rows
    say which is which."""
    code, out, _ = invoke(monkeypatch, capsys, "requests", str(samples_differing(tmp_path)), "--json")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert all(list(row)[:3] == ["path", "index", "session_id"] for row in rows)
    tools = sorted((Path(row["path"]).relative_to(tmp_path).as_posix(), row["index"]) for row in rows
                   if row["session_id"] == "session-sample-tools")  # the files' order is their mtimes
    packed = "sample_logs/sessions/--home-dev-projects-demo--/session-sample-tools/session.jsonl.zstd"
    assert tools == [(packed, 0), (packed, 1), (packed, 2), (packed, 3),
                     ("sample_logs/tools/session.jsonl", 0), ("sample_logs/tools/session.jsonl", 1),
                     ("sample_logs/tools/session.jsonl", 2), ("sample_logs/tools/session.jsonl", 3)]


def test_breaks_json_rows_say_their_path_and_whether_they_are_unexplained(monkeypatch, capsys, tmp_path: Path) -> None:
    """A fork child whose seed copy of the parent's prompt differs with nothing logged: an
    unexplained break, which `jq 'select(.unexplained)'` finds."""
    parent = LogBuilder(session_id="p-fork")
    with parent.turn("one"):
        with parent.step():
            parent.assistant("First answer.")
    child = parent.fork(session_id="c-fork")
    with child.turn("review"):
        with child.step():
            child.assistant("Sure.")
    child_log = child.write_jsonl(tmp_path / "c-fork" / "session.jsonl", packed=False)
    child_log.write_text(child_log.read_text().replace('"text":"one"', '"text":"ONE"'))
    parent.write_jsonl(tmp_path / "p-fork" / "session.jsonl", packed=False)
    code, out, _ = invoke(monkeypatch, capsys, "breaks", str(tmp_path), "--json", "--all")
    assert code == 1
    rows = [json.loads(line) for line in out.splitlines()]
    assert sorted((Path(r["path"]).parent.name, r["session_id"], r["request"], r["cause"], r["unexplained"])
                  for r in rows) == [("c-fork", "c-fork", 0, "unexplained", True), ("p-fork", "p-fork", 0, None, False)]
    keys = list(rows[0])
    assert keys[:2] == ["path", "session_id"]
    assert keys[keys.index("other_causes") + 1] == "unexplained"
