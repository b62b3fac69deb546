"""Issue 14 leftovers (session 35): a column is left out only when the table cannot fit otherwise
(a path in brackets beside an id is a path, cut to fit, not an id kept whole); every listing's CSV
gives the log and the session in columns of their own, named as `check` names them; a header is
never split inside a word ("turn/step/attempt": its short form "t/s/a", said in a caption)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from _cli import invoke
from _copy_log import samples_differing
from dsh_audit.report.terminal import About, listing, print_table

ROOT = Path(__file__).resolve().parent.parent
CHANGE = ROOT.parent / "shared" / "corpus" / "live" / "c-change"
SESSION = "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824"
LOG = CHANGE / "home" / "sessions" / "--home-dev-dsh-runs-a-c-change-ws--" / SESSION / "session.jsonl.zstd"
needs_corpus = pytest.mark.skipif(not LOG.is_file(), reason="../shared/corpus is absent")


def _lines(out: str) -> list[str]:
    return [line.rstrip() for line in out.splitlines()]


# -- 1. sessions: a column left out only when the table cannot fit otherwise -----------------------

def test_sessions_keeps_reqs_when_a_listed_path_beside_an_id_can_be_cut(monkeypatch, capsys, tmp_path) -> None:
    """Before: "(sample_logs/tools/session.jsonl)" was read as an id (kept whole, 33 columns), so
    "reqs" was left out too although the table fits with it (hit and breaks need 89 columns). The
    samples with session-sample-tools in two files that differ (:func:`samples_differing`)."""
    samples_differing(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = invoke(monkeypatch, capsys, "sessions", "sample_logs")
    assert code == 0
    assert _lines(out) == [  # session 40: ids cut to their unique prefixes keep "breaks" too
        "11 session(s), newest first",
        "when (UTC)        title        reqs  breaks       cost  id",
        "─" * 80,
        "2027-01-15 08:00  -               6       2   ≥$0.0006  generated-sample",
        "2027-01-15 08:00  └ fork          1       0    $0.0002  generated-sample-…",
        "2027-01-15 08:00  -               4       0    $0.0003  session-sample-t…",
        "                                                        (sample_log….jsonl.zstd)",
        "2027-01-15 08:00  -               4       0    $0.0003  session-sample-t…",
        "                                                        (sample_log…ssion.jsonl)",
        "2027-01-15 08:00  -               5       4    $0.0011  session-sample-chan…",
        "2027-01-15 08:00  -               4       0    $0.0002  session-sample-f…",
        "2027-01-15 08:00  └ fork          1       0  $0.000022  fork-chi…",
        "2027-01-15 08:00  -               4       2    $0.0003  session-sample-co…",
        "2027-01-15 08:00  -               3       1    $0.0004  session-sample-res…",
        "2027-01-15 08:00  Who are you     3       0   ≥$0.0001  session-sample-chat",
        "2027-01-15 08:00  -               4       1   ≥$0.0004  session-sample-ret…",
        "total                            39      10   ≥$0.0040",  # issue 14 B1
        "id: shortest unique prefix (--json for whole ids)",
        # a path beside an id is kept to 24 columns: no room for "hit ratio" beside a title; the lesser
        # columns (issue 14 B1) left out first
        "narrow terminal: format, first (UTC), tokens, project, hit not shown (widen it,",
        "or use --json)"]


# -- 2. CSV: the log and the session apart ----------------------------------------------------------

def test_requests_csv_gives_the_log_and_the_session_apart(monkeypatch, capsys) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = invoke(monkeypatch, capsys, "requests", "sample_logs/chat/session.jsonl", "--format", "csv")
    assert (code, err) == (0, [])
    assert out.splitlines() == [
        "table,log,session,#,turn/step/attempt,kind,header,msgs,input,cache read,output,finish",
        "requests,sample_logs/chat/session.jsonl,session-sample-chat,0,-,title,-,1,,,,",
        "requests,sample_logs/chat/session.jsonl,session-sample-chat,1,1/1/1,loop,6 initial,2,219,0,25,stop",
        "requests,sample_logs/chat/session.jsonl,session-sample-chat,2,2/1/1,loop,6 initial,4,128,128,10,stop"]


def test_cache_csv_gives_the_log_and_the_session_apart(monkeypatch, capsys) -> None:
    monkeypatch.chdir(ROOT)
    code, out, _ = invoke(monkeypatch, capsys, "cache", "sample_logs/chat/session.jsonl", "--format", "csv")
    assert code == 0
    assert out.splitlines()[:3] == [
        "table,log,session,#,kind,turn/step/attempt,prompt,prompt (estimated),reusable,expected,actual,classification,lost,"
        "usage source",
        "timeline,sample_logs/chat/session.jsonl,session-sample-chat,0,title,-,,64,0,0,,usage_unknown,0,",
        "timeline,sample_logs/chat/session.jsonl,session-sample-chat,1,loop,1/1/1,219,,0,0,0,as_expected,0,log"]


@needs_corpus
def test_diff_csv_gives_the_log_and_the_session_apart(monkeypatch, capsys) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "diff", str(CHANGE), "--format", "csv")
    assert code == 0
    rows = list(csv.reader(io.StringIO(out, newline="")))
    assert rows[:2] == [["table", "log", "session", "#", "kind", "turn/step/attempt", "verdict", "first offset", "capture",
                         "note"],
                        ["requests", str(LOG), SESSION, "0", "title", "-", "identical", "-", "1 (line 2)", ""]]
    assert {tuple(row[:3]) for row in rows[1:]} == {("requests", str(LOG), SESSION)}


def test_a_table_about_a_log_writes_it_apart_and_one_about_none_empty(capsys) -> None:
    with listing("csv"):
        print_table("a.jsonl  session s-1", ["#", "kind"], [[0, "loop"]], about=About("a.jsonl", "s-1", "requests"))
        print_table("captures no request explains", ["#", "kind"], [[1, "title"]],
                    about=About("", "", "captures no request explains"))
        print_table("plain", ["x"], [[2]])
    assert capsys.readouterr().out.split("\r\n") == [
        "table,log,session,#,kind", "requests,a.jsonl,s-1,0,loop", "",
        "table,log,session,#,kind", "captures no request explains,,,1,title", "",
        "table,x", "plain,2", ""]


# -- 3. a header never split inside a word ----------------------------------------------------------

@needs_corpus
def test_cache_at_80_columns_shows_t_s_a_and_says_what_it_means(monkeypatch, capsys) -> None:
    """Before: "turn/step/" on one line and "try" on the next."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(LOG), "--no-capture")  # the log alone
    lines = _lines(out)
    at = lines.index("timeline")
    assert code == 0
    assert lines[at + 1:at + 4] == [
        "#  kind   t/s/a  prompt  expected  actual  classification                   lost",
        "─" * 80,
        "0  title  -        ~140         0       ?  usage_unknown"]
    # "reusable" left out for the classification's one line (session 43), and named
    assert lines[-2:] == ["t/s/a: turn/step/attempt", "narrow terminal: reusable not shown (widen it, or use --json)"]


@needs_corpus
def test_diff_at_60_columns_keeps_turn_step_attempt_whole(monkeypatch, capsys) -> None:
    """"first offset" has no value in any row: it is left out before the header is shortened."""
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = invoke(monkeypatch, capsys, "diff", str(CHANGE))
    assert code == 0
    assert _lines(out)[2:5] == [
        "#  kind   turn/step/attempt  verdict    capture     note",
        "─" * 56,
        "0  title  -                  identical  1 (line 2)"]
    # the caption wraps at the terminal's 60 columns, not the table's 56, and so does the summary
    assert _lines(out)[-4:] == ["narrow terminal: first offset (no values) not shown (widen", "it, or use --json)",
                                "8 request(s): 8 identical; 0 capture(s) unexplained, 0", "  foreign: OK"]


@pytest.mark.parametrize("columns", range(40, 81, 4))
def test_a_header_is_never_split_inside_a_word(monkeypatch, capsys, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    print_table("t", ["#", "turn/step/attempt", "kind", "classification", "lost"],
                [[0, "1/1/1", "loop", "break_explained (header_change)", 7936]],
                short={"turn/step/attempt": "t/s/a"}, legend="t/s/a: turn/step/attempt")
    lines = _lines(capsys.readouterr().out)
    assert not [line for line in lines if line.endswith(("turn/", "step/", "turn/step/"))]
    assert ("turn/step/attempt" in lines[1] + lines[2]) != ("t/s/a: turn/step/attempt" in lines)
