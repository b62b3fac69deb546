"""Session 33's user tour (views33): which session cost the most, one meaning of --since per
command, watch lines tied to a session, one table style per run, fewer notes.

- ``usage`` lists sessions as ``sessions`` does, newest first by the log's own last activity;
  ``--sort cost`` on ``usage``, ``sessions`` and ``stats``' ranking (which also takes ``time``).
- ``stats --since/--until`` sums the requests sent in the window, as ``usage`` does: the same totals.
- ``sessions --since`` keeps the sessions active in the window, whole; ``usage --since`` the
  requests sent in it; ``today``/``yesterday`` are read as UTC days by every command's parser.
- ``watch``: UTC date and time, the session's short id beside its title, plain numbers, a break's
  lost tokens and cost (text and JSON), ISO times in JSON, the history in the order it was sent.
- ``breaks`` at 80 columns: every table of a run in one style, a parent's id as a unique prefix.
- ``diff``: one note a run for the captures found, one for the logs with none.
- ``stats``' costliest breaks leave out the breaks that cost nothing, and count them.

The home holds five corpus sessions (times and costs as ``sessions --json`` gives them):
c3 (11:24:01, $?), c1 (11:23:45, ≥$0.0935), d-resume (11:02:44, ≥$0.0068), c-change
(11:02:25, ≥$0.0111), a-chat (11:02:07, ≥$0.0013): newest first and costliest first differ.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from _cli import chat_log, invoke
from dsh_audit.cache import parse_instant
from dsh_audit.cli._watch import format_watch_line
from dsh_audit.report import _tables
from dsh_audit.report.terminal import listing, print_table
from dsh_audit.watch import WatchRequest, watch

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(not (CORPUS / "live-pi").is_dir(), reason="../shared/corpus is absent")
SCENARIOS = (CORPUS / "live" / "a-chat", CORPUS / "live" / "c-change", CORPUS / "live" / "d-resume",
             CORPUS / "live-pi" / "c1-anthropic-tools", CORPUS / "live-pi" / "c3-openai-compat")
C3, C1, D_RESUME, C_CHANGE, A_CHAT = ("session-e7611f7a", "session-514c4bc2", "session-3f28929d",
                                      "session-da27503b", "session-2b096b61")
NEWEST_FIRST = [C3, C1, D_RESUME, C_CHANGE, A_CHAT]
COSTLIEST_FIRST = [C1, C_CHANGE, D_RESUME, A_CHAT, C3]  # c3's local-coder has no price: $? last
ROUTE_NOTE = ("note: route configuration from {home}/cordis.patch.yml (the llm-pi-ai row of DSH's home patch "
              "layer; --routes FILE overrides it)")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A DSH home of the five scenarios, each capture one folder above its sessions (as DSH's
    project folder holds them), the pi-ai route layer beside ``sessions``, and ``audit.sqlite``."""
    if not (CORPUS / "live-pi").is_dir():
        pytest.skip("../shared/corpus is absent")
    root = tmp_path_factory.mktemp("views33") / "home"
    for scenario in SCENARIOS:
        for project in (scenario / "home" / "sessions").iterdir():
            shutil.copytree(project, root / "sessions" / project.name, dirs_exist_ok=True)
            shutil.copy(scenario / "wire.jsonl", root / "sessions" / project.name / "wire.jsonl")
    shutil.copy(CORPUS / "live-pi" / "c1-anthropic-tools" / "inputs" / "pi-ai-routes.patch.yml",
                root / "cordis.patch.yml")
    return root


@pytest.fixture()
def in_home(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("DSH_HOME", str(home))
    monkeypatch.setenv("COLUMNS", "200")
    return home


@pytest.fixture(scope="module")
def index(home: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The home indexed once (``stats`` reads it)."""
    from dsh_audit.cache import load_prices
    from dsh_audit.fleet import index_logs, select_logs

    db = str(tmp_path_factory.mktemp("views33-index") / "audit.sqlite")
    index_logs(select_logs([str(home / "sessions")]), db, prices=load_prices(search_from="/"))
    return db


def _json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    code, out, _ = invoke(monkeypatch, capsys, *args, "--json")
    assert code == 0
    return json.loads(out)


def _sessions(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> list[dict[str, Any]]:
    code, out, _ = invoke(monkeypatch, capsys, "sessions", *args, "--json")
    assert code == 0
    return [json.loads(line) for line in out.splitlines()]


# -- 1. which session cost the most --------------------------------------------------------------

@needs_corpus
def test_usage_lists_sessions_newest_first_as_sessions_does(in_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    listed = [s["session_id"][:16] for s in _sessions(monkeypatch, capsys)]
    usage = _json(monkeypatch, capsys, "usage")
    assert listed == [row["key"][:16] for row in usage["rows"]] == NEWEST_FIRST
    assert usage["sort"] == "time"
    # by request: the sessions in that order, each one's requests in theirs
    keys = [row["key"] for row in _json(monkeypatch, capsys, "usage", "--by", "request")["rows"]]
    assert [key[:16] for key in dict.fromkeys(key.split(" ")[0] for key in keys)] == NEWEST_FIRST
    assert [key.split(" #")[1] for key in keys if key.startswith(C3)] == ["0", "1", "2", "3", "4", "5"]


@needs_corpus
def test_sort_cost_puts_the_costliest_session_first(in_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the log alone, as pinned (a capture found prices: test_found38)
    usage = _json(monkeypatch, capsys, "usage", "--sort", "cost")
    assert [row["key"][:16] for row in usage["rows"]] == COSTLIEST_FIRST and usage["sort"] == "cost"
    assert [row["cost_usd"] and row["cost_usd"]["total"] for row in usage["rows"]] == [
        0.0934629, 0.01107667, 0.006783504, 0.001261008, None]
    assert [s["session_id"][:16] for s in _sessions(monkeypatch, capsys, "--sort", "cost")] == COSTLIEST_FIRST
    code, out, _ = invoke(monkeypatch, capsys, "sessions", "--sort", "cost")
    assert code == 0 and out.splitlines()[0] == "5 session(s), costliest first"
    unpriced = [s["session_id"][:16] for s in _sessions(monkeypatch, capsys, "--sort", "cost", "--no-cost")]
    assert unpriced == NEWEST_FIRST  # no cost known: newest first
    code, out, err = invoke(monkeypatch, capsys, "usage", "--sort", "size")
    assert code == 2 and "'size' is not one of 'time', 'cost'" in err[-1]


@needs_corpus
def test_stats_ranks_sessions_by_losses_cost_or_time(in_home: Path, index: str, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    ranks = {sort: _json(monkeypatch, capsys, "stats", "--db", index, "--sort", sort) for sort in ("lost", "cost", "time")}
    assert {sort: [r["session_id"][:16] for r in stats["top_sessions"]] for sort, stats in ranks.items()} == {
        "lost": [C1, C_CHANGE, D_RESUME, A_CHAT, C3], "cost": COSTLIEST_FIRST, "time": NEWEST_FIRST}
    assert [r["last_sent_at"] for r in ranks["time"]["top_sessions"]] == [
        "2026-12-02T11:24:01Z", "2026-12-02T11:23:45Z", "2026-12-02T11:02:44Z", "2026-12-02T11:02:25Z",
        "2026-12-02T11:02:07Z"]
    assert [ranks[s]["sort"] for s in ranks] == ["lost", "cost", "time"]
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", index, "--sort", "time", "--format", "csv")
    assert code == 0 and "table,session,path,last request (UTC),requests," in out
    assert [row.split(",")[3] for row in out.splitlines() if row.startswith("latest sessions,")] == [
        "2026-12-02 11:24:01", "2026-12-02 11:23:45", "2026-12-02 11:02:44", "2026-12-02 11:02:25",
        "2026-12-02 11:02:07"]


@needs_corpus
def test_stats_leaves_out_breaks_that_cost_nothing(in_home: Path, index: str, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    stats = _json(monkeypatch, capsys, "stats", "--db", index)
    assert [(b["session_id"][:16], b["request"], b["lost_tokens"], b["lost_cost_usd"])
            for b in stats["costliest_breaks"]] == [
        (C1, 9, 8927, 0.03079065), (D_RESUME, 5, 8064, 0.005144832), (C_CHANGE, 2, 7936, 0.005063168),
        (C_CHANGE, 7, 2880, 0.00183744), (C_CHANGE, 4, 1152, 0.000734976)]
    assert stats["breaks_costing_nothing"] == 2  # c-change #3 and #6 read all they could
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", index)
    assert code == 0 and out.rstrip().splitlines()[-1].rstrip() == (
        "ranked by lost $, costliest first (≥$x by x); then lost $? by lost tokens; 2 break(s) that cost nothing "
        "(no token lost, or at $0) left out")


# -- 2. one meaning of --since per command --------------------------------------------------------

@needs_corpus
def test_since_keeps_whole_sessions_in_sessions_and_requests_in_usage_and_stats(
        in_home: Path, index: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    window = ("--since", "2026-12-02T11:23:45")  # c1's last three requests, and all of c3's
    listed = {s["session_id"][:16]: s["requests"] for s in _sessions(monkeypatch, capsys, *window)}
    assert listed == {C3: 6, C1: 11}  # sessions active in the window, each whole
    usage = _json(monkeypatch, capsys, "usage", *window)
    assert {row["key"][:16]: row["requests"] for row in usage["rows"]} == {C3: 6, C1: 3}
    stats = _json(monkeypatch, capsys, "stats", "--db", index, *window)
    assert (stats["since"], stats["until"], stats["totals"]["sessions"], stats["totals"]["requests"]) == (
        "2026-12-02T11:23:45Z", None, 2, 9)
    assert stats["cost"]["cost_usd"] == usage["totals"]["cost_usd"] == {
        "cache_miss": 9e-05, "cache_read": 0.0053376, "cache_write": 0.0345675, "output": 0.00057, "total": 0.0405651}
    assert stats["cost"]["unpriced_requests"] == usage["totals"]["unpriced_requests"] == 6
    until = _json(monkeypatch, capsys, "stats", "--db", index, "--until", "2026-12-02T11:03")
    assert (until["totals"]["requests"], [r["session_id"][:16] for r in until["top_sessions"]]) == (
        17, [C_CHANGE, D_RESUME, A_CHAT])


@needs_corpus
def test_each_help_says_what_its_window_keeps(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "2000")  # one line a paragraph
    helps = {}
    for command in ("sessions", "usage", "stats"):
        code, out, _ = invoke(monkeypatch, capsys, command, "--help")
        assert code == 0
        helps[command] = " ".join(out.split())
    assert "--since WHEN Only sessions active at or after WHEN" in helps["sessions"]
    assert "list each one whole: its requests, hit ratio, breaks and cost are the whole session's" in helps["sessions"]
    for command in ("usage", "stats"):
        assert "--since WHEN Only requests sent at or after WHEN" in helps[command]
        assert "today or yesterday (UTC days)" in helps[command]
        assert "Only sessions active" not in helps[command]


def test_today_and_yesterday_are_utc_days_on_every_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    noon = parse_instant("2026-12-06T12:00:00Z")
    assert parse_instant("today", now=noon) == parse_instant("2026-12-06")
    assert parse_instant("yesterday", now=noon) == parse_instant("2026-12-05")
    assert parse_instant(" Yesterday ", end=True, now=noon) == parse_instant("2026-12-06")  # --until: the whole day
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-old")  # the builder's clock: January 2027
    for command in ("sessions", "usage", "requests"):
        code, out, err = invoke(monkeypatch, capsys, command, str(log), "--since", "yesterday", "--until", "today")
        assert code == 0 and err[-1].endswith("1 of 1 log(s) with no activity in that window (by the logs' own "
                                              "timestamps) left out"), (command, err)
    code, _, err = invoke(monkeypatch, capsys, "usage", str(log), "--since", "tomorrow")
    assert code == 2 and "cannot read --since 'tomorrow'" in err[0] and "an age such as" in err[0]


# -- 3. watch lines -----------------------------------------------------------------------------

def _request(**changes: Any) -> WatchRequest:
    fields: dict[str, Any] = dict(
        seen=1796212000.5, path="s.jsonl", session_id="session-514c4bc2-e0ec-419e-84d4-2f666d536239",
        title="Fake session title", index=9, kind="loop", turn=3, step=1, attempt=1, model="claude-sonnet-4-6",
        sent=1796210625.25, prompt_tokens=8927, expected=0, actual=0, classification="break_explained",
        cost=0.0337, verdict="break", cause="header_change", relation="step", previous=8,
        fields=("model",), evidence_seqs=(179,), history=True, lost_tokens=8927, lost_cost=0.03079065)
    fields.update(changes)
    return WatchRequest(**fields)


def test_a_watch_line_names_its_session_and_says_what_the_break_cost() -> None:
    assert format_watch_line(_request(), "session-514c4bc2") == (
        "2026-12-02 11:23:45  session-514c4bc2  Fake session title  #9 t3/s1/a1  claude-sonnet-4-6  prompt 8927  "
        "cache 0 (0 expected)  $0.0337  break_explained  BREAK header_change lost 8927 ($0.0308) fields model "
        "evidence seqs 179")
    unknown = _request(lost_tokens=None, lost_cost=None, title=None, history=False, prompt_tokens=12345)
    assert format_watch_line(unknown) == (
        "2026-12-02 11:46:40  session-514c4bc2-e0ec-419e-84d4-2f666d536239  #9 t3/s1/a1  claude-sonnet-4-6  "
        "prompt 12345  cache 0 (0 expected)  $0.0337  break_explained  BREAK header_change lost ? ($?) fields "
        "model evidence seqs 179")
    calm = _request(verdict=None, cause=None, classification="as_expected", lost_tokens=0, lost_cost=0.0)
    assert format_watch_line(calm, "session-514c4bc2").endswith("$0.0337  as_expected")
    row = _request().to_json()
    # the machine's clock to the millisecond, the log's time to the second; no epoch numbers beside them
    assert "seen" not in row and "sent" not in row
    assert {k: row[k] for k in ("seen_at", "sent_at", "lost_tokens", "lost_cost_usd")} == {
        "seen_at": "2026-12-02T11:46:40.500Z", "sent_at": "2026-12-02T11:23:45Z", "lost_tokens": 8927,
        "lost_cost_usd": 0.03079065}


@needs_corpus
def test_watch_shows_the_history_in_the_order_it_was_sent(home: Path) -> None:
    items = list(watch([str(home / "sessions")], since=0.0, exit_after=1.0, notifications=False))
    shown = [item for item in items if isinstance(item, WatchRequest)]
    assert len(shown) == 6 + 11 + 6 + 8 + 3 and all(item.history for item in shown)
    assert [(item.sent, item.path, item.index) for item in shown] == sorted(
        (item.sent or 0.0, item.path, item.index) for item in shown)
    breaks = {(item.session_id[:16], item.index): (item.lost_tokens, item.lost_cost) for item in shown if item.is_break}
    assert breaks == {(C1, 9): (8927, 0.03079065), (D_RESUME, 5): (8064, 0.005144832),
                      (C_CHANGE, 2): (7936, 0.005063168), (C_CHANGE, 3): (0, 0.0), (C_CHANGE, 4): (1152, 0.000734976),
                      (C_CHANGE, 6): (0, 0.0), (C_CHANGE, 7): (2880, 0.00183744)}


# -- 5. breaks at 80 columns: one style, ids a prefix --------------------------------------------

@needs_corpus
def test_breaks_tables_of_a_run_share_a_style_and_show_a_parent_as_a_prefix(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = invoke(monkeypatch, capsys, "breaks", str(CORPUS / "live-pi" / "c1-anthropic-tools" / "home"),
                          str(CORPUS / "live" / "c-change" / "home"), str(CORPUS / "live" / "g-subagent" / "home"))
    lines = [line.rstrip() for line in out.splitlines()]
    # compact below 100 columns, every table of the run
    assert code == 0 and [line[0] for line in lines if line.startswith(("┏", "#"))] == ["#", "#", "#"]
    # a field name is never cut: it wraps between the names
    assert lines[lines.index("session session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824") + 5:][:2] == [
        "3   2  break    header_change  reasoningEffort,                               51",
        " " * 31 + "adapterDefaults.reasoningEffort"]
    assert lines[-5:] == [
        "─" * 80,
        "0  1 (session-70444d8d)  subagent  break    subagent  system, tools  34 1 11",
        "vs: shortest unique prefix of a parent's session id (--json for whole ids)",
        "narrow terminal: first divergence not shown (widen it, or use --json)",
        "4 sessions read; 1 with no prefix-cache break, not listed (--all lists them)"]  # the parent has none
    code, out, _ = invoke(monkeypatch, capsys, "breaks", str(CORPUS / "live" / "g-subagent" / "home"), "--json")
    assert [row["previous_session_id"] for row in map(json.loads, out.splitlines())] == [
        "session-70444d8d-ee1d-43e9-8341-470b57f1019c"]  # whole in JSON


def test_a_runs_later_table_stays_boxed_when_squeezed(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "40")
    monkeypatch.setattr(_tables, "BOXED_FROM", 40)  # boxed from 40 columns: the run's first table is boxed
    with listing("table", pager=False):
        print_table("first", ("#", "name"), [("1", "short")])
        print_table("second", ("#", "name", "other"), [("2", "a rather long text that wraps", "more words here")])
    lines = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    assert [line[:1] for line in lines if line[:1] in ("┏", "#")] == ["┏", "┏"]
    assert max(map(len, lines)) <= 40


# -- 6. one note a run ---------------------------------------------------------------------------

@needs_corpus
def test_diff_says_each_kind_of_note_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(CORPUS / "live" / "a-chat" / "session-logs", tmp_path / "rec" / "a-chat" / "session-logs")
    shutil.copy(CORPUS / "live" / "a-chat" / "wire.jsonl", tmp_path / "rec" / "a-chat" / "wire.jsonl")
    for name in ("lone1", "lone2", "lone3"):
        chat_log(tmp_path / "rec" / name / "session.jsonl", f"s-{name}")
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, "diff", "rec", "--json")
    assert (code, err) == (0, [
        "note: 3 log(s) with no capture given or found beside them (wire.jsonl): not compared "
        "(rec/lone1/session.jsonl and 2 more)",
        "note: capture rec/a-chat/wire.jsonl found beside 1 log(s) (--capture FILE names another)"])


@needs_corpus
def test_a_home_s_route_note_is_said_once_a_run(in_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    note = ROUTE_NOTE.format(home=in_home)
    for args in (("sessions",), ("usage",), ("breaks",), ("diff",)):
        code, _, err = invoke(monkeypatch, capsys, *args)
        assert code in (0, 1) and err.count(note) == 1 and len(err) <= 4, (args, err)
