"""Issue 14, second user tour: every command takes a session reference (id, id prefix, ``latest``)
resolved in one place; ``redact`` takes a session folder; CSV writes numbers plain and unknowns
empty; listings order logs as ``sessions`` does; ``check`` fits 80 columns as a table; a run's
tables share one style; ``validate --json`` ends with a summary; help examples use DSH's project
folder names; docs/cli.md carries the conventions, the environment and completion; ``show``,
``explain`` and ``render`` take ``--no-pager``."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import click
import pytest

from dsh_audit.cli import cli
from dsh_audit.report.terminal import listing, print_table
from dsh_audit.testing import LogBuilder

from _cli import invoke, short_salt
from test_tables38 import named_logs, no_capture
from _golden import CORPUS

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
B_TOOLS = CORPUS / "live" / "b-tools"
needs_corpus = pytest.mark.skipif(not (B_TOOLS / "wire.jsonl").is_file(), reason="../shared/corpus is absent")

# Three sessions, in path order a, b, c; by their own times b is the newest, then c, then a.
SESSIONS = (("a", "session-aaa1", 1_800_000_000_000), ("b", "session-bbb2", 1_800_000_900_000),
            ("c", "session-ccc3", 1_800_000_500_000))


def _log(path: Path, session_id: str, created: int) -> Path:
    """A one-turn chat of ``session_id`` whose clock starts at ``created`` (ms), written to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    b = LogBuilder(session_id=session_id, created_at=created)
    with b.turn("Hi"):
        with b.step():
            b.assistant("Hello")
    path.write_text("".join(line + "\n" for line in b.lines(packed=False)), encoding="utf-8")
    os.utime(path, (created / 1000 + 60, created / 1000 + 60))  # last written as DSH would: after its session
    return path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A DSH home holding :data:`SESSIONS` as DSH lays them out; DSH_HOME names it."""
    for project, session_id, created in SESSIONS:
        _log(tmp_path / "home" / "sessions" / f"--home-me-{project}--" / session_id / "session.jsonl",
             session_id, created)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path / "home"


def _log_of(home: Path, project: str, session_id: str) -> str:
    return str(home / "sessions" / f"--home-me-{project}--" / session_id / "session.jsonl")


def _paths(out: str) -> list[str]:
    """The ``path`` of each JSON line, each once, in order."""
    return list(dict.fromkeys(json.loads(line)["path"] for line in out.splitlines()))


# -- 1. a session reference wherever a session is taken ---------------------------------------------

@pytest.mark.parametrize("args", [["requests", "--json"], ["breaks", "--all", "--json"], ["cache", "--json"]])
@pytest.mark.parametrize("ref", ["latest", "session-bbb2", "bbb", "session-bb"])
def test_listing_commands_take_latest_an_id_and_a_prefix(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], args: list[str],
                                                          ref: str) -> None:
    code, out, err = invoke(monkeypatch, capsys, *args, ref)
    assert (code, err, _paths(out)) == (0, [], [_log_of(home, "b", "session-bbb2")])


def test_every_session_command_takes_a_reference(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    newest = _log_of(home, "b", "session-bbb2")
    code, out, err = invoke(monkeypatch, capsys, "usage", "ccc", "--json")
    assert (code, err, [row["key"] for row in json.loads(out)["rows"]]) == (0, [], ["session-ccc3"])
    code, out, err = invoke(monkeypatch, capsys, "sessions", "latest", "--json")
    assert (code, err, _paths(out)) == (0, [], [newest])
    code, out, err = invoke(monkeypatch, capsys, "validate", "latest", "--json")
    assert (code, out, err) == (0, '{"type":"summary","passed":true,"counts":{"error":0,"warning":0,"info":0},'
                                   '"files":1,"rules":{}}\n', [])
    code, out, _ = invoke(monkeypatch, capsys, "check", "aaa", "--json")
    assert code == 0 and [s["path"] for s in json.loads(out)["sessions"]] == [_log_of(home, "a", "session-aaa1")]
    page = tmp_path / "page.html"
    code, out, err = invoke(monkeypatch, capsys, "report", "latest", "-o", str(page))
    assert (code, out, err) == (0, f"wrote {page}: 1 log(s), 1 request(s), check passed: no breaks\n", [])
    code, out, err = invoke(monkeypatch, capsys, "show", "latest", "0", "--compact")
    assert (code, err, json.loads(out)["session_id"]) == (0, [], "session-bbb2")


@needs_corpus
def test_diff_takes_a_session_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_HOME", str(B_TOOLS / "home"))
    code, out, err = invoke(monkeypatch, capsys, "diff", "session-86ef", "--capture", str(B_TOOLS / "wire.jsonl"),
                            "--json")
    assert code == 0 and {json.loads(line)["verdict"] for line in out.splitlines()} == {"identical"}


def test_an_existing_path_wins_over_an_id(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    here = tmp_path / "cwd"
    _log(here / "latest", "session-file", 1_700_000_000_000)  # a file named latest, older than every session
    monkeypatch.chdir(here)
    code, out, err = invoke(monkeypatch, capsys, "requests", "latest", "--json")
    assert (code, err, _paths(out)) == (0, [], ["latest"])


def test_an_ambiguous_prefix_lists_the_candidates_and_exits_2(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("requests", "breaks", "cache", "validate", "check", "redact"):
        code, out, err = invoke(monkeypatch, capsys, command, "session-", *(("-o", "x") if command == "redact" else ()))
        assert (code, out, err) == (2, "", [
            f"error: {home / 'sessions'}: session id prefix 'session-' is ambiguous: session-aaa1, session-bbb2, "
            "session-ccc3 (hint: type more of the id)"]), command


def test_unknown_references_and_missing_paths(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "breaks", "nosuch")
    assert (code, out, err) == (2, "", [
        f"error: {home / 'sessions'}: no session log, session id or id prefix 'nosuch' here (hint: run "
        "`dsh-audit sessions` to see the ids, or pass a path)"])
    for command in (["requests"], ["show", "0"]):  # a path's form is a path: never looked up as an id
        missing = str(tmp_path / "none.jsonl")
        code, out, err = invoke(monkeypatch, capsys, command[0], missing, *command[1:])
        assert (code, out, err) == (2, "", [f"error: {missing}: no such file or folder (hint: {_MISSING_HINT})"]), command
    code, out, err = invoke(monkeypatch, capsys, "requests", "other.jsonl")
    assert (code, out, err) == (2, "", [f"error: other.jsonl: no such file or folder (hint: {_MISSING_HINT})"])


#: The hint of a PATH that names nothing (cli/_logs.py; session 39).
_MISSING_HINT = ("pass the path of a log or a session folder, or a session id or `latest`: looked up in "
                 "$DSH_HOME/sessions; set DSH_HOME to the DSH home that holds sessions/")


def test_redact_takes_a_session_folder_and_a_reference(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    folder = Path(_log_of(home, "a", "session-aaa1")).parent
    for given, target in ((str(folder), tmp_path / "r1.jsonl"), ("latest", tmp_path / "r2.jsonl")):
        code, out, err = invoke(monkeypatch, capsys, "redact", given, "-o", str(target), "--salt", "s")
        assert (code, err) == (0, [short_salt("s")]) and out.splitlines()[0].startswith(f"wrote {target} (format v"), given
        assert target.is_file()
    project = folder.parent.parent  # two sessions below: not one log
    _log(project / "--home-me-a--" / "session-aaa9" / "session.jsonl", "session-aaa9", 1_800_000_000_000)
    code, out, err = invoke(monkeypatch, capsys, "redact", str(project / "--home-me-a--"), "-o", str(tmp_path / "r3"))
    logs = sorted(str(log) for log in (project / "--home-me-a--").glob("*/session.jsonl"))
    assert (code, out, err) == (2, "", [
        f"error: {project / '--home-me-a--'}: expected one session log, found 2: {logs[0]}, {logs[1]} (hint: pass "
        "one of those files, or its session id (`dsh-audit sessions PATH` lists them))"])


# -- 2. CSV: numbers plain, unknown empty ---------------------------------------------------------

def test_requests_csv_writes_unknown_tokens_empty(monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = invoke(monkeypatch, capsys, "requests", "sample_logs/chat/session.jsonl", "--format", "csv")
    title = "requests,sample_logs/chat/session.jsonl,session-sample-chat"  # the log and the session apart
    assert (code, err) == (0, [])
    assert out.splitlines() == [
        "table,log,session,#,turn/step/attempt,kind,header,msgs,input,cache read,output,finish",
        f"{title},0,-,title,-,1,,,,",
        f"{title},1,1/1/1,loop,6 initial,2,219,0,25,stop",
        f"{title},2,2/1/1,loop,6 initial,4,128,128,10,stop"]
    code, out, _ = invoke(monkeypatch, capsys, "requests", "sample_logs/chat/session.jsonl")
    assert code == 0 and out.splitlines()[4] == "│ 0 │ -                 │ title │ -         │    1 │     ? │          ? │      ? │        │"


def test_breaks_csv_writes_no_previous_request_empty(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "breaks", "aaa", "--all", "--format", "csv")
    log = _log_of(home, "a", "session-aaa1")
    assert (code, err) == (0, [f"{log}  session session-aaa1", "no prefix-cache breaks"])
    assert out.splitlines() == ["table,log,session,#,vs,relation,verdict,cause,fields,evidence seqs,first divergence",
                                f"breaks,{log},session-aaa1,0,,first,first,,,,"]


@needs_corpus
def test_check_csv_writes_the_hit_ratio_as_a_number(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "check", str(B_TOOLS / "home"), "--format", "csv")
    assert code == 0 and out.splitlines()[0].split(",")[4:] == ["requests", "capture", "breaks", "hit ratio", "cost",
                                                                "unpriced", "findings"]
    # the title call logged no usage: the capture found beside the home prices it (tour 38), none unpriced
    assert out.splitlines()[1].split(",")[4:] == ["9", "9/9 identical", "0", "0.8624416277518345", "0.001686378", "0",
                                                  "0"]
    code, out, _ = invoke(monkeypatch, capsys, "check", str(B_TOOLS / "home"), "--json")
    assert json.loads(out)["sessions"][0]["cache"]["actual_hit_ratio"] == 0.8624416277518345  # the same number
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = invoke(monkeypatch, capsys, "check", str(B_TOOLS / "home"))
    assert code == 0 and "│ 9/9 identical │      0 │     86.2% │ $0.0017 │        0 │" in out


# -- 3. one order: newest first ---------------------------------------------------------------------

def test_listings_order_logs_as_sessions_does(home: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    newest_first = [_log_of(home, p, s) for p, s in (("b", "session-bbb2"), ("c", "session-ccc3"), ("a", "session-aaa1"))]
    for args in (["sessions", "--json"], ["requests", "--json"], ["breaks", "--all", "--json"]):
        code, out, _ = invoke(monkeypatch, capsys, *args)
        assert (code, _paths(out)) == (0, newest_first), args
    code, out, _ = invoke(monkeypatch, capsys, "check", "--format", "csv")
    assert code == 0 and [line.split(",")[2] for line in out.splitlines()[1:]] == newest_first
    # PATHS keep the order given, each one's logs by path (the same on every checkout)
    oldest, folder = _log_of(home, "a", "session-aaa1"), str(home / "sessions")
    by_path = sorted(newest_first)
    for args in (["requests", "--json"], ["breaks", "--all", "--json"]):
        code, out, _ = invoke(monkeypatch, capsys, *args, oldest, newest_first[0])
        assert (code, _paths(out)) == (0, [oldest, newest_first[0]]), args
        code, out, _ = invoke(monkeypatch, capsys, *args, "ccc", folder)
        assert (code, _paths(out)) == (0, [newest_first[1], by_path[0], by_path[1]]), args
    code, out, _ = invoke(monkeypatch, capsys, "check", oldest, folder, "--format", "csv")
    assert code == 0 and [line.split(",")[2] for line in out.splitlines()[1:]] == by_path


# -- 4. check at 80 columns; one table style per run ---------------------------------------------

def test_check_at_80_columns_is_a_table(home: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = invoke(monkeypatch, capsys, "check")
    # session 38: "log" is never left out; each log its number, its path whole on its own line under the table
    assert code == 0 and [line.rstrip() for line in out.splitlines()] == [  # compact below 100 columns
        "dsh-audit check",
        "status  log  session       requests  capture  breaks  hit ratio  cost  findings",
        "─" * 79,
        "ok        1  session-bbb2         1  none          0  n/a          $?         1",
        "ok        2  session-ccc3         1  none          0  n/a          $?         1",
        "ok        3  session-aaa1         1  none          0  n/a          $?         1",
        *named_logs(logs := [_log_of(home, p, s) for p, s in (("b", "session-bbb2"), ("c", "session-ccc3"),
                                                               ("a", "session-aaa1"))]),
        *no_capture(logs),
        "PASSED: 3 log(s), 3 request(s), 0 error(s), 0 warning(s), 3 info, 0 failing",
        "  (policy: defaults)"]


def test_check_shows_uuid_ids_as_short_prefixes_when_narrow(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    ids = ("session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd", "session-86ef2d28-6e7b-43ae-ad66-0aa63a88c3dd")
    for at, session_id in enumerate(ids):
        _log(tmp_path / "s" / "--p--" / session_id / "session.jsonl", session_id, 1_800_000_000_000 + at)
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = invoke(monkeypatch, capsys, "check", str(tmp_path / "s"))
    lines = [line.rstrip() for line in out.splitlines()]
    # boxed, the cost column would not fit 80 columns: the compact layout keeps it
    assert code == 0 and lines[1:] == [
        "status  log  session                requests  capture  breaks  cost  findings",
        "─" * 77,
        "ok        1  session-86ef2d28-6e7a         1  none          0    $?         1",
        "ok        2  session-86ef2d28-6e7b         1  none          0    $?         1",
        "session: shortest unique prefix of its id (--json for whole ids)",
        "narrow terminal: hit ratio (no values) not shown (widen it, or use --json)",
        *named_logs(logs := [tmp_path / "s" / "--p--" / session_id / "session.jsonl" for session_id in ids]),
        *no_capture(logs),
        "PASSED: 2 log(s), 2 request(s), 0 error(s), 0 warning(s), 2 info, 0 failing", "  (policy: defaults)"]


def _tables(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *, in_listing: bool) -> str:
    """A wide table, then a narrow one, at 60 columns: in one listing (a run) or not."""
    monkeypatch.setenv("COLUMNS", "60")
    wide = [("1", "a fairly long piece of text", "another long text", "x")]  # compact fits, boxed does not
    narrow = [("2", "short", "text", "y")]

    def draw() -> None:
        print_table("wide", ("#", "first", "second", "third"), wide)
        print_table("narrow", ("#", "first", "second", "third"), narrow)

    if in_listing:
        with listing("table", pager=False):
            draw()
    else:
        draw()
    return capsys.readouterr().out


def test_a_runs_tables_share_one_style(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    alone = _tables(capsys, monkeypatch, in_listing=False).splitlines()
    assert alone[1].startswith("#  first") and alone[5].startswith("#  first")  # compact below 100 columns
    run = [line.rstrip() for line in _tables(capsys, monkeypatch, in_listing=True).splitlines()]
    assert run == ["wide",
                   "#  first                        second             third",
                   "─" * 56,
                   "1  a fairly long piece of text  another long text  x",
                   "narrow",
                   "#  first  second  third",
                   "─" * 23,
                   "2  short  text    y"]


# -- 5. validate --json says what it found, even nothing --------------------------------------------

def test_validate_json_ends_with_a_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    lines = (SAMPLES / "chat" / "session.jsonl").read_text(encoding="utf-8").splitlines()
    bad.write_text("\n".join([lines[0].replace('"cwd":"/home/dev/projects/demo"', '"cwd":"relative"'), *lines[1:]])
                   + "\n", encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "validate", str(bad), "--json")
    objects = [json.loads(line) for line in out.splitlines()]
    assert (code, err) == (1, []) and [o.get("rule") for o in objects[:-1]] == ["DSH212"]
    assert objects[-1] == {"type": "summary", "passed": False, "counts": {"error": 1, "warning": 0, "info": 0},
                           "files": 1, "rules": {"DSH212": 1}}


# -- 6. help examples use the project folders DSH writes ---------------------------------------------

def test_help_examples_use_dsh_project_folder_names() -> None:
    context = click.Context(cli)
    for name in cli.list_commands(context):
        command = cli.get_command(context, name)
        assert command is not None
        # DSH's projectKey (session-persistence-jsonl/src/format.ts) writes --home-me-proj--, never -home-me-proj-
        assert not re.search(r"sessions/-[^-]", command.help or ""), name
    assert "dsh-audit explain ~/.dsh/sessions/--home-me-proj--/session-1 3" in (cli.get_command(
        context, "explain").help or "")  # type: ignore[union-attr]


# -- 7. docs/cli.md: conventions, environment, completion --------------------------------------------

def test_cli_reference_has_conventions_environment_and_completion() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[:4] == ["## Conventions", "## Environment variables", "## Shell completion", "## dsh-audit"]
    assert 'eval "$(_DSH_AUDIT_COMPLETE=bash_source dsh-audit)"' in text
    assert "takes a path only" not in text  # every command that takes a PATH takes a session reference too
    source = "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "dsh_audit").rglob("*.py"))
    named = set(re.findall(r"\b(DSH_AUDIT_[A-Z_]*[A-Z]|DSH_HOME|GITHUB_STEP_SUMMARY)\b", source))
    environment = text[text.index("## Environment variables"):text.index("## Shell completion")]
    assert "DSH_AUDIT_PAGER" in named and {name for name in named if f"`{name}`" not in environment} == set()


# -- 8. --no-pager on show, explain and render -------------------------------------------------------

@pytest.mark.parametrize("command", ["show", "explain", "render"])
def test_one_request_commands_take_no_pager(command: str, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    log = str(SAMPLES / "chat" / "session.jsonl")
    paged = invoke(monkeypatch, capsys, command, log, "1")
    direct = invoke(monkeypatch, capsys, command, log, "1", "--no-pager")
    assert paged == direct and direct[0] == 0 and direct[1]
