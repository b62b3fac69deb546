"""``dsh-audit sessions``, session references (id, id prefix, ``latest``) and 80-column tables."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dsh_audit.cache import iso_utc, summarize_session
from dsh_audit.cli import _sessions_fit, cli
from dsh_audit.cli._common import run_guarded
from dsh_audit.errors import UsageError
from dsh_audit.log import resolve_session
from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder

from _copy_log import samples_differing
from _golden import CORPUS
from test_tour80 import SAMPLE_SESSIONS

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
HOME = {"DSH_HOME": str(SAMPLES)}  # sample_logs/sessions is a DSH sessions root


def invoke(*args: str, columns: int | None = None) -> tuple[int, str]:
    env = dict(HOME, **({"COLUMNS": str(columns)} if columns else {}))
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.output


def guarded(monkeypatch, capsys, *args: str) -> tuple[int, str, str]:
    """Through the real CLI edge (errors become one line and an exit code)."""
    monkeypatch.setenv("DSH_HOME", str(SAMPLES))
    monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
    code = run_guarded(cli)
    out = capsys.readouterr()
    return code, out.out, out.err


# --- the library ---------------------------------------------------------------------------------

def test_summary_of_the_chat_sample():
    summary = summarize_session(open_session(SAMPLES / "chat" / "session.jsonl"))
    assert (summary.title, summary.project, summary.requests) == ("Who are you", "/home/dev/projects/demo", 3)
    assert (iso_utc(summary.first_activity), iso_utc(summary.last_activity)) == (
        "2027-01-15T08:00:00Z", "2027-01-15T08:00:00Z")
    assert summary.first_activity == 1800000000.0 and summary.last_activity > summary.first_activity
    assert summary.tokens is not None and summary.tokens["output"] == 35 and summary.breaks is None and summary.cost_usd is None


@pytest.mark.skipif(not (CORPUS / "live" / "a-chat").is_dir(), reason="../shared/corpus is absent")
def test_title_is_the_latest_session_title_event():
    log = next((CORPUS / "live" / "a-chat" / "session-logs").glob("*.jsonl"))
    assert open_session(log).title == "Fake session title"  # the provider's title replaces the fallback


def test_resolve_session_by_id_prefix_and_latest():
    root = SAMPLES / "sessions"
    assert resolve_session("session-sample-chat", root=root).parent.name == "session-sample-chat"
    assert resolve_session("sample-retry", root=root).parent.name == "session-sample-retry"
    # the session `sessions` lists first: the newest last activity (its last event, by ms)
    assert resolve_session("latest", root=root).parent.name == "session-sample-tools"


def test_latest_is_the_last_active_session_not_the_last_created(tmp_path):
    """A session created on the 1st and resumed on the 4th is later than one created on the 3rd."""
    root = tmp_path / "sessions" / "--p--"
    for name, created, last in (("session-long", 1_796_083_200_000, 1_796_342_400_000),
                                ("session-short", 1_796_256_000_000, 1_796_256_060_000)):
        b = LogBuilder(session_id=name, created_at=created)
        b.clock.now = last - 1000  # resumed: its events come later than its header
        with b.turn("hi"):
            with b.step():
                b.assistant("Sure.")
        b.write_jsonl(root / name / "session.jsonl")
    assert resolve_session("latest", root=tmp_path / "sessions").parent.name == "session-long"
    code, out = invoke("sessions", "--json", str(tmp_path / "sessions"))
    assert [json.loads(line)["session_id"] for line in out.splitlines()] == ["session-long", "session-short"]


# --- sessions -----------------------------------------------------------------------------------

def test_sessions_json_one_object_per_session_newest_first():
    code, out = invoke("sessions", "--json", str(SAMPLES / "sessions"))
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(rows) == 8
    assert rows[0]["session_id"] == "session-sample-tools"  # its last event is the newest (by ms)
    chat = next(r for r in rows if r["session_id"] == "session-sample-chat")
    # the replies log cacheReadTokens as DSH's DeepSeek adapter does: priced; the title call logs no
    # usage (DSH has no field for it): one request unpriced, the cost a lower bound
    assert chat == {**chat, "title": "Who are you", "project": "/home/dev/projects/demo", "requests": 3,
                    "first_activity_at": "2027-01-15T08:00:00Z", "format": "dsh", "format_version": 0,
                    "breaks": 0, "unpriced_requests": 1, "cost_complete": False,
                    "cost_usd": {"cache_miss": 0.0001041, "cache_read": 0.000000768, "cache_write": 0,
                                 "output": 0.000042, "total": 0.000146868}}
    change = next(r for r in rows if r["session_id"] == "session-sample-change")
    assert change["breaks"] == 4


def test_sessions_defaults_to_dsh_home_and_fits_80_columns():
    """The compact layout at 80 columns: the date kept whole, every number kept (session 40: each id
    cut to its shortest unique prefix and "…", the title "Who are you" to 8 columns), only project
    left out. The samples' replies log
    cacheReadTokens (as DSH's DeepSeek adapter does): priced; the retry sample's two failed
    attempts log no usage, so its cost is a lower bound."""
    code, out = invoke("sessions", columns=80)
    assert code == 0 and [line.rstrip() for line in out.splitlines()] == SAMPLE_SESSIONS  # as test_tour80 pins it


def test_sessions_wide_shows_every_column():
    """Issue 14 B1: tokens, first activity and format version too, where every cell fits whole in
    the boxes (a lesser column never costs the table its boxes: session 44, 160 columns)."""
    code, out = invoke("sessions", "--no-cost", columns=200)
    lines = [line.rstrip() for line in out.splitlines()]
    assert code == 0 and [line for line in lines if "when (UTC)" in line or "Who are you" in line
                          or line.startswith("│ total")] == [
        "┃ when (UTC)       ┃ title       ┃ project                 ┃ requests ┃ tokens ┃ hit ratio ┃ breaks ┃ cost ┃"
        " first (UTC)      ┃ format ┃ id                         ┃",
        "│ 2027-01-15 08:00 │ Who are you │ /home/dev/projects/demo │        3 │    510 │ -         │ -      │ -    │"
        " 2027-01-15 08:00 │ v0     │ session-sample-chat        │",
        "│ total            │             │                         │       28 │   6887 │ -         │ -      │ -    │"
        "                  │        │                            │"]
    code, out = invoke("sessions", "--no-cost", columns=160)  # boxed still: an empty column left out first
    assert code == 0 and out.splitlines()[1].startswith("┏") and out.splitlines()[-1] == (
        "narrow terminal: hit ratio (no values) not shown (widen it, or use --json)")


# --- session references -------------------------------------------------------------------------

def test_show_latest_and_id_prefix(monkeypatch, capsys):
    code, out, err = guarded(monkeypatch, capsys, "show", "latest", "0", "--compact")
    assert (code, err) == (0, "") and json.loads(out)["session_id"] == "session-sample-tools"
    code, out, err = guarded(monkeypatch, capsys, "show", "sample-chat", "1", "--compact")
    assert (code, err) == (0, "") and json.loads(out)["session_id"] == "session-sample-chat"


def test_explain_and_render_take_a_session_id(monkeypatch, capsys):
    code, out, err = guarded(monkeypatch, capsys, "explain", "session-sample-chat", "1")
    assert code == 0 and out.startswith("request 1 (loop, turn 1 step 1 attempt 1) of session session-sample-chat")
    code, out, err = guarded(monkeypatch, capsys, "render", "session-sample-chat", "1")
    assert code == 0 and json.loads(out)["model"] == "deepseek-v4-flash"


def test_ambiguous_prefix_is_one_line_and_exit_2(monkeypatch, capsys):
    code, out, err = guarded(monkeypatch, capsys, "show", "session-sample-c", "1")
    assert (code, out) == (2, "")
    assert err == (f"error: {SAMPLES / 'sessions'}: session id prefix 'session-sample-c' is ambiguous: "
                   "session-sample-change, session-sample-chat, session-sample-compaction "
                   "(hint: type more of the id)\n")


def test_ambiguous_prefix_lists_at_most_five(monkeypatch, capsys):
    code, _, err = guarded(monkeypatch, capsys, "explain", "session-", "1")
    assert code == 2 and err.count("\n") == 1
    assert "session-sample-change, session-sample-chat, session-sample-compaction, session-sample-fork-parent, " \
           "session-sample-resume and 2 more" in err


def test_unknown_reference_exit_2(monkeypatch, capsys):
    code, out, err = guarded(monkeypatch, capsys, "render", "nosuch", "1")
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {SAMPLES / 'sessions'}: no session log, session id or id prefix 'nosuch' here")


# --- tables at 80 columns -----------------------------------------------------------------------

@pytest.mark.parametrize("columns", [80, 60])
def test_cache_timeline_never_splits_a_number(columns):
    code, out = invoke("cache", str(SAMPLES / "sessions" / "--home-dev-projects-demo--" / "session-sample-change"),
                       columns=columns)
    table = out[out.index("timeline"):].splitlines()
    assert code == 0 and max(len(line) for line in table) <= columns
    # the compact layout, a row a line: the lesser columns left out (and named) before a
    # classification wraps or a request becomes a block of lines (session 43)
    if columns == 80:
        assert table[-3:] == ["4  loop  5/1/1     237         0       0  break_explained (header_change)",
                              "t/s/a: turn/step/attempt",
                              "narrow terminal: lost (no values), reusable not shown (widen it, or use --json)"]
    else:
        assert table[-4:] == ["4  5/1/1         0       0  break_explained (header_change)",
                              "t/s/a: turn/step/attempt", "narrow terminal: lost (no values), reusable, prompt, kind",
                              "not shown (widen it, or use --json)"]


def test_requests_at_80_columns_keeps_token_counts_whole():
    code, out = invoke("requests", str(SAMPLES / "chat"), columns=80)
    lines = out.splitlines()
    assert code == 0 and max(len(line) for line in lines) <= 80
    assert "2  2/1/1              loop   6 initial     4    128         128      10  stop" in [
        line.rstrip() for line in lines]


def test_piped_output_is_200_wide_without_columns():
    code, out = invoke("requests", str(SAMPLES / "chat"))
    assert code == 0 and any("│ 1 │ 1/1/1             │ loop  │ 6 initial │" in line for line in out.splitlines())


def test_a_session_in_two_files_is_listed_from_each_with_a_note(monkeypatch, capsys, tmp_path):
    """sample_logs keeps the chat and tools sessions both as copies and in a DSH sessions root: the
    chat copy holds the same lines and is not read again; here the tools copy differs (its last
    answer changed: other lines, other events), so each of its files is a row, and one note per
    session names its files."""
    samples = samples_differing(tmp_path)
    code, out, err = guarded(monkeypatch, capsys, "sessions", str(samples), "--json")
    assert code == 0
    ids = [json.loads(line)["session_id"] for line in out.splitlines()]
    assert (ids.count("session-sample-chat"), ids.count("session-sample-tools")) == (1, 2)
    root = samples / "sessions" / "--home-dev-projects-demo--"
    assert sorted(line for line in err.splitlines() if " is in 2 files" in line or "two files" in line) == [
        f"note: one session in two files under {samples}/: read sessions/--home-dev-projects-demo--/"
        "session-sample-chat/session.jsonl.zstd, not chat/session.jsonl (the same lines)",
        f"note: session session-sample-tools is in 2 files, each listed: "
        f"{root / 'session-sample-tools' / 'session.jsonl.zstd'}, {samples / 'tools' / 'session.jsonl'}"]


# --- a session id whose session is in several files (fuzz round 19, 5) ---------------------------

def _two_files(tmp_path: Path, *, copy: str) -> tuple[Path, Path, Path]:
    """A DSH home at ``tmp_path`` holding session-x as DSH's zstd log under ``--p--`` and as a plain
    file under ``--q--``: its first lines (``copy="partial"``), all of them (``"whole"``), or the
    lines of another conversation of the same id (``"other"``). Returns the sessions root and the
    two files."""
    def chat(words: tuple[str, ...]) -> LogBuilder:
        b = LogBuilder(session_id="session-x")
        for word in words:
            with b.turn(word):
                with b.step():
                    b.assistant(f"{word}!")
        return b

    root = tmp_path / "sessions"
    kept = chat(("Hi", "More")).write_zstd(root / "--p--" / "session-x" / "session.jsonl.zstd", packed=False)
    lines = chat(("Hi", "Other") if copy == "other" else ("Hi", "More")).lines(packed=False)
    plain = root / "--q--" / "session-x" / "session.jsonl"
    plain.parent.mkdir(parents=True)
    plain.write_text("".join(line + "\n" for line in (lines[:4] if copy == "partial" else lines)), encoding="utf-8")
    return root, kept, plain


@pytest.mark.parametrize(("copy", "why"), [("partial", "the other's lines and more"), ("whole", "the same lines")])
def test_a_session_id_in_a_log_and_its_copy_is_read_from_one_with_discoverys_note(tmp_path, monkeypatch, capsys,
                                                                                  copy, why):
    root, kept, plain = _two_files(tmp_path, copy=copy)
    note = (f"one session in two files under {root}/: read --p--/session-x/session.jsonl.zstd, "
            f"not --q--/session-x/session.jsonl ({why})")
    notes: list[str] = []
    assert resolve_session("session-x", root=root, notes=notes) == kept and notes == [note]
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    for args in (["requests", "session-x", "--json"], ["show", "x", "1", "--json"], ["requests", "latest", "--json"]):
        monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
        code = run_guarded(cli)
        out, err = capsys.readouterr()
        assert (code, err) == (0, f"note: {note}\n"), args
        assert str(kept) in out and str(plain) not in out, args


def test_a_session_id_in_two_differing_files_is_refused_naming_both(tmp_path, monkeypatch, capsys):
    root, kept, plain = _two_files(tmp_path, copy="other")
    error = (f"error: session session-x is in 2 files that differ (neither holds the other's lines): {kept}, {plain} "
             "(hint: pass the path of the log you mean; `dsh-audit sessions` lists each file)\n")
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    for args in (["requests", "session-x"], ["show", "x", "1"], ["explain", "session-x", "1"], ["cache", "latest"]):
        monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
        code = run_guarded(cli)
        out, err = capsys.readouterr()
        assert (code, out, err) == (2, "", error), args
    with pytest.raises(UsageError):
        resolve_session("latest", root=root)
    assert resolve_session(str(plain), root=root) == plain  # the path the hint asks for is read


#: The table of a 1 MB title of newlines, as it was before only its start was measured (fuzz 32's D4).
LONG_TITLE = {
    80: ["1 session(s), newest first",
         "when (UTC)        title         reqs    hit  breaks      cost  id",
         "─" * 80,
         "2027-01-15 08:00  line\\u000al…     3  26.9%       0  ≥$0.0001  session-sample-c…",
         "total                              3  26.9%       0  ≥$0.0001",
         "id: shortest unique prefix; title: cut to fit (--json for whole ids and titles)",
         "narrow terminal: format, first (UTC), tokens, project not shown (widen it, or",
         "use --json)"],
    200: ["1 session(s), newest first",
          "when (UTC)        title" + " " * 92 + "project                  requests  hit ratio  breaks      cost  id",
          "─" * 198,
          "2027-01-15 08:00  " + "line\\u000a" * 9 + "line…  /home/dev/projects/demo         3      26.9%       0  "
          "≥$0.0001  session-sample-chat",
          "total" + " " * 142 + "3      26.9%       0  ≥$0.0001",
          # the table's cells fitted to its columns: the lesser ones left out first, said in one caption
          "title: cut to fit (--json for whole titles); narrow terminal: format, first (UTC), tokens not shown "
          "(widen it, or use --json)"],
}


@pytest.mark.parametrize("columns", [80, 200])
def test_a_1_mb_title_of_newlines_is_cut_as_before_from_its_start(tmp_path, monkeypatch, columns):
    """200k newlines (a Claude Code summary or a DSH session/title alike) took 8-16 s: the 2 MB
    escaped title was measured and cut at each width tried (fuzz 32's D4). Only a start of it is
    cut now, and the table is the one it was, line for line."""
    lines = (SAMPLES / "chat" / "session.jsonl").read_text("utf-8").splitlines()
    log = tmp_path / "session.jsonl"
    log.write_text("\n".join(line.replace('"title":"Who are you"', '"title":"' + "line\\n" * 200_000 + '"')
                             for line in lines) + "\n", "utf-8")
    cut, longest = _sessions_fit._title_cut, [0]

    def measured(title: str, width: int) -> str:
        longest[0] = max(longest[0], len(title))
        return cut(title, width)

    monkeypatch.setattr(_sessions_fit, "_title_cut", measured)
    code, out = invoke("sessions", str(log), columns=columns)
    # cut: its first 4 * columns characters, "line\\n" shown as 10 cells ("line\\u000a") for 5
    assert (code, [line.rstrip() for line in out.splitlines()], longest) == (0, LONG_TITLE[columns], [2 * 4 * columns])


def test_a_title_of_200k_combining_marks_is_cut_at_a_bounded_start(tmp_path):
    """Fuzz 33's D1: "a" and 200,000 combining marks (one cell wide) hung every layout's measure, as
    the start measured was taken longer until wider than the terminal: it is taken at most
    4 x 4 terminal widths long, and the marks left out are said by "…" (the cell stays one line)."""
    lines = (SAMPLES / "chat" / "session.jsonl").read_text("utf-8").splitlines()
    log = tmp_path / "session.jsonl"
    log.write_text("\n".join(line.replace('"title":"Who are you"', '"title":"a' + "\\u0301" * 200_000 + '"')
                             for line in lines) + "\n", "utf-8")
    code, out = invoke("sessions", str(log), "--json", columns=80)
    assert (code, len(json.loads(out)["title"])) == (0, 200_001)  # --json keeps it whole
    code, out = invoke("sessions", str(log), columns=80)
    row = out.splitlines()[3]
    assert (code, row.count("\u0301"), "…" in row) == (0, 4 * 4 * 80 - 1, True)


# --- issue 14: one rule at every width: the lesser columns go before a cell is cut -------------------

#: Titles and projects longer than a table's room, ids that are UUIDs (two sharing their first group).
LONG_CELLS = (
    ("session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd", "Refactor the replay engine so that forks share their parent's cache",
     "/home/dev/projects/a-rather-long-project-name/services/api", 1_800_000_000_000),
    ("session-86ef2d28-9b1c-4f00-a1b2-0123456789ab", "Fix the flaky test",
     "/home/dev/projects/another-quite-long-project/frontend", 1_800_000_600_000),
    ("402a1ae8-7f85-40fc-b7cf-82cfc177dcd7", "Count the bullet lines in the README and report them",
     "/home/dev/short", 1_800_001_200_000),
)
_ROWS = ["2027-01-15 08:20", "2027-01-15 08:10", "2027-01-15 08:00"]
#: Whole tables at three widths: one that leaves numbers out (80), one that shortens ids and cuts
#: paths (130: it kept "tokens" while it cut "project", session 44), a boxed one (220: it kept
#: "tokens" and "first (UTC)" while it cut "project").
LONG_TABLES = {
    # "requests" and "breaks" kept (session 46): "hit ratio" out and each title cut, where they went before
    80: ["3 session(s), newest first",
         "when (UTC)        title          reqs  breaks        cost  id",
         "─" * 80,
         f"{_ROWS[0]}  Count the…        2       0  ≥$0.000049  402a1ae8",
         f"{_ROWS[1]}  Fix the flak…     2       0  ≥$0.000049  session-86ef2d28-9b1c",
         f"{_ROWS[2]}  Refactor…         2       0  ≥$0.000049  session-86ef2d28-6e7a",
         "total                               6       0    ≥$0.0001",
         "id: shortest unique prefix; title: cut to fit (--json for whole ids and titles)",
         "narrow terminal: format, first (UTC), tokens, project, hit not shown (widen it,",
         "or use --json)"],
    130: ["3 session(s), newest first",
          " " * 84 + "hit",
          "when (UTC)        title                         project               requests    ratio  breaks        cost  id",
          "─" * 130,
          f"{_ROWS[0]}  Count the bullet lines in     /home/dev/short              2     0.0%       0  ≥$0.000049  402a1ae8",
          "                  the README and report them",
          f"{_ROWS[1]}  Fix the flaky test            /home/dev…t/frontend         2     0.0%       0  ≥$0.000049  "
          "session-86ef2d28-9b1c",
          f"{_ROWS[2]}  Refactor the replay engine    /home/dev…rvices/api         2     0.0%       0  ≥$0.000049  "
          "session-86ef2d28-6e7a",
          "                  so that forks share their",
          "                  parent's cache",
          "total" + " " * 72 + "6     0.0%       0    ≥$0.0001",
          "id: shortest unique prefix (--json for whole ids); narrow terminal: format, first (UTC), tokens not shown "
          "(widen it, or use",
          "--json)"],
}


@pytest.fixture(scope="module")
def long_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DSH home holding :data:`LONG_CELLS`, ten minutes apart."""
    home = tmp_path_factory.mktemp("long")
    for session_id, title, cwd, created in LONG_CELLS:
        builder = LogBuilder(session_id=session_id, created_at=created, cwd=cwd)
        with builder.turn("Hi"):
            with builder.step():
                builder.assistant("Hello", usage={"inputTokens": 131, "outputTokens": 8, "cacheReadTokens": 0})
        builder.title(title)
        builder.write_jsonl(home / "sessions" / "--home-dev-project--" / session_id / "session.jsonl", packed=False)
    return home


@pytest.mark.parametrize("columns", range(60, 230, 10))
def test_sessions_leave_the_lesser_columns_out_before_they_cut_a_cell(long_home: Path, columns: int):
    """One rule at every width (issue 14, session 45): "format", "first (UTC)" and "tokens" are left
    out before a title, a path or an id is cut, said in the caption; no line is wider than the
    terminal. Before: 130 to 170 columns kept "tokens" while "project" was cut, 210 and 220 kept
    "first (UTC)" too (a compact table's room, where the cut was measured boxed)."""
    result = CliRunner().invoke(cli, ["sessions"], env={"DSH_HOME": str(long_home), "COLUMNS": str(columns)},
                                catch_exceptions=False)
    lines = [line.rstrip() for line in result.output.splitlines()]
    assert (result.exit_code, [line for line in lines if len(line) > columns]) == (0, [])
    header = next((line for line in lines if re.match(r"[┃ ]*when \(UTC\)[┃ ]+title", line)), None)
    if header is None:  # a block of lines a row (60, 70 columns): the essential fields alone, a line each
        title = "Count the bullet lines in the README and report" + (" them" if columns == 70 else "")
        assert (lines[1:3], [line.split()[0] for line in lines[1:lines.index('')] if line[:1].isalpha()]) == \
            (["when (UTC)  2027-01-15 08:20", f"title       {title}"], ["when", "title", "requests", "breaks", "cost", "id"])
        return
    table = "\n".join(lines[:lines.index(next(line for line in lines if line.startswith(("total", "│ total"))))])
    cut = "…" in table or "shortest unique prefix" in result.output  # a title, a path, an id (a UUID's: no "…")
    assert (cut, [column for column in ("tokens", "first (UTC)", "format") if column in header]) == (True, []), \
        result.output  # the longest project is cut up to 220 columns: the rule is looked at every time
    assert ("narrow terminal: format, first (UTC), tokens not shown" in result.output.replace("\n", " ")
            or "format, first (UTC), tokens, project" in result.output), result.output
    if columns in LONG_TABLES:
        assert lines == LONG_TABLES[columns]
