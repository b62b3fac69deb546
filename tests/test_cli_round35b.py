"""Session 35's new-user tour (issue 14), second round: `diff` takes several PATHs; `validate` takes
--format and --pager; a run of `stats` draws every table in one style; a folder of several logs, a
missing sessions folder and a bad DSH_AUDIT_MAX_* variable are one line saying what is wrong.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded

ROOT = Path(__file__).resolve().parent.parent
CHAT = ROOT / "sample_logs" / "chat" / "session.jsonl"
SESSIONS = ROOT / "sample_logs" / "sessions"
LIVE = ROOT.parent / "shared" / "corpus" / "live"
needs_corpus = pytest.mark.skipif(not LIVE.is_dir(), reason="../shared/corpus is absent")


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False, standalone_mode=False)
    return result.return_value, result.stdout, result.stderr


def _main(monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes], *args: str) -> tuple[int, str, str]:
    """The console entry point: a usage error is exit 2 and one `error:` line."""
    monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
    code = run_guarded(cli)
    out = capsysbinary.readouterr()
    return code, out.out.decode(), out.err.decode()


# -- F9: diff reads a set of logs, as requests and breaks do ------------------------------------------

@needs_corpus
def test_diff_takes_several_paths_each_with_its_capture() -> None:
    chat, tools = str(LIVE / "a-chat"), str(LIVE / "b-tools")
    both = _run("diff", chat, tools, "--json")
    alone = [_run("diff", path, "--json") for path in (chat, tools)]
    assert (both[0], [code for code, _, _ in alone]) == (0, [0, 0])
    assert both[1] == alone[0][1] + alone[1][1] and len(both[1].splitlines()) == 12
    assert ("note: capture found beside 2 log(s): 2 files (wire.jsonl), each compared with the logs beside or "
            "below it (--capture FILE names one for all)\n") in both[2]
    code, out, _ = _run("diff", chat, tools, "--capture", str(LIVE / "a-chat" / "wire.jsonl"))
    assert (code, out.splitlines()[-1]) == (1, "12 request(s): 3 identical, 9 unmatched; 0 capture(s) "
                                               "unexplained, 0 foreign: FAILED")


# -- F10: validate lists its findings in any format, and pages them ----------------------------------

def test_validate_takes_format_and_pager(tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    lines = CHAT.read_text(encoding="utf-8").splitlines(keepends=True)
    log.write_text(lines[0].replace(',"delegationDepth":0', ""), encoding="utf-8")
    assert '"delegationDepth"' not in log.read_text(encoding="utf-8")
    table = _run("validate", str(log), "--no-pager")
    assert table == (1, f"{log}:1: DSH209 error: header has no delegationDepth (write 0 for a top-level session; "
                        "--lenient reads a tokenised fixture's missing delegationDepth as a warning)\n",
                     "1 error(s), 0 warning(s), 0 info in 1 file(s): DSH209 x1\n")
    assert _run("validate", str(log), "--format", "csv") == (1, (
        "table,path,line,seq,rule,severity,message,hint\n"
        f"findings,{log},1,-,DSH209,error,header has no delegationDepth,write 0 for a top-level session; "
        "--lenient reads a tokenised fixture's missing delegationDepth as a warning\n"), table[2])
    code, out, _ = _run("validate", str(log), "--format", "markdown")
    assert (code, out.splitlines()[:3]) == (1, ["### findings", "", "| path | line | seq | rule | severity | "
                                                                    "message | hint |"])
    assert _run("validate", str(log), "--format", "json")[:2] == _run("validate", str(log), "--json")[:2]


def test_validate_csv_and_sarif_cannot_share_stdout(monkeypatch: pytest.MonkeyPatch,
                                                    capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert _main(monkeypatch, capsysbinary, "validate", str(CHAT), "--format", "csv", "--sarif", "-") == (
        2, "", "error: only one output can go to stdout, not --format csv and --sarif - (hint: give --sarif a FILE "
               "name, or leave out --format csv)\n")


# -- F5: a run of stats draws its tables in one style ---------------------------------------------------

@pytest.mark.parametrize("sort", ["lost", "time"])
def test_stats_at_80_columns_draws_every_table_compact(sort: str, tmp_path: Path) -> None:
    db = str(tmp_path / "audit.sqlite")
    assert _run("index", str(SESSIONS), str(CHAT), "--db", db)[0] == 0
    code, out, _ = _run("stats", "--db", db, "--sort", sort, env={"COLUMNS": "80"})
    starts = [line[:1] for line in out.splitlines()]
    # 9 tables, all compact below 100 columns (a rule alone), as every other command's (session 37)
    assert (code, starts.count("┏"), starts.count("─")) == (0, 0, 9)
    assert max(map(len, out.splitlines())) <= 80


# -- F13: a folder of several logs names them ---------------------------------------------------------

def test_a_folder_of_several_logs_names_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    shutil.copytree(SESSIONS, tmp_path / "my logs")
    folder = tmp_path / "my logs" / "--home-dev-projects-demo--"
    logs = sorted(folder.glob("*/session.jsonl.zstd"))
    assert len(logs) == 8
    quoted = ", ".join(f"'{log}'" for log in logs[:5])  # shell-quoted: a space in the path
    assert _main(monkeypatch, capsysbinary, "explain", str(folder), "1") == (
        2, "", f"error: {folder}: expected one session log, found 8: {quoted} and 3 more (hint: pass one of those "
               "files, or its session id (`dsh-audit sessions PATH` lists them))\n")


# -- F14: no sessions folder to look a reference up in ---------------------------------------------------

@pytest.mark.parametrize("dsh_home", [None, "home"])
def test_a_reference_with_no_sessions_folder_says_which_folder(dsh_home: str | None, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    if dsh_home is None:
        monkeypatch.delenv("DSH_HOME", raising=False)
        where = f"{tmp_path / '.dsh' / 'sessions'} (~/.dsh/sessions: DSH_HOME is not set)"
    else:
        monkeypatch.setenv("DSH_HOME", str(tmp_path / dsh_home))
        where = f"{tmp_path / dsh_home / 'sessions'} ($DSH_HOME/sessions)"
    assert _main(monkeypatch, capsysbinary, "show", "latest", "0") == (
        2, "", f"error: latest: no such file or folder, and not a session id: the sessions folder {where} does not "
               "exist (hint: pass the path of a log or a session folder, or a session id or `latest`: looked up in "
               "$DSH_HOME/sessions; set DSH_HOME to the DSH home that holds sessions/)\n")


# -- D8: a bad DSH_AUDIT_MAX_* is the variable's error, said once, before any log is read ---------------

@pytest.mark.parametrize(("variable", "value", "said"), [
    ("DSH_AUDIT_MAX_RATIO", "-1", "DSH_AUDIT_MAX_RATIO='-1' is not a whole number (hint: give decoded bytes per "
                                  "compressed byte, e.g. 1000; 0 means no limit)"),
    ("DSH_AUDIT_MAX_DECODED", "1\x1b[31mG", "DSH_AUDIT_MAX_DECODED='1\\x1b[31mG' is not a size (hint: give bytes "
                                           "with an optional K, M, G or T suffix, e.g. 16G; 0 means no limit)")])
@pytest.mark.parametrize("args", [["usage", str(CHAT)], ["requests", str(SESSIONS)], ["show", str(CHAT), "0"],
                                  ["validate"]])
def test_a_bad_decode_limit_is_one_error_naming_the_variable(variable: str, value: str, said: str, args: list[str],
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    monkeypatch.setenv(variable, value)
    monkeypatch.setenv("DSH_HOME", str(ROOT / "sample_logs"))
    assert _main(monkeypatch, capsysbinary, *args) == (2, "", f"error: {said}\n")


def test_diff_with_no_capture_for_any_path_is_one_error(monkeypatch: pytest.MonkeyPatch,
                                                        capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    change = SESSIONS / "--home-dev-projects-demo--" / "session-sample-change"
    assert _main(monkeypatch, capsysbinary, "diff", str(CHAT), str(change)) == (
        2, "", f"error: {CHAT}: no capture given or found beside the log (wire.jsonl) (hint: pass --capture FILE: a "
               "wire.jsonl, a HAR 1.2 file or a folder of JSON bodies)\n")


# -- F12: a path is never cut: whole beside its id when the line holds both, else alone on its line ----

@needs_corpus
@pytest.mark.parametrize("room", ["whole", "path alone", "less than the path"])
def test_cache_cuts_a_path_only_when_the_line_cannot_hold_it(room: str) -> None:
    """The widths are measured from the log's own path, so the test holds wherever the corpus is."""
    session = "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824"
    log = LIVE / "c-change" / "home" / "sessions" / "--home-dev-dsh-runs-a-c-change-ws--" / session / "session.jsonl.zstd"
    whole = f"{log}  session {session}"
    columns = {"whole": len(whole) + 1, "path alone": len(whole) - 1, "less than the path": len(str(log)) - 10}[room]
    code, out, _ = _run("cache", str(log), env={"COLUMNS": str(columns)})
    lines = out.splitlines()
    if room == "whole":
        assert (code, lines[0]) == (0, whole)
    elif room == "path alone":
        assert (code, lines[:2]) == (0, [str(log), f"session {session}"])
    else:  # never cut (session 37: a cut path cannot be copied): whole on its line, the terminal wraps it
        assert (code, lines[:2]) == (0, [str(log), f"session {session}"])
    # the title call's cache reads are the wire.jsonl's, found beside the log
    assert lines[2 if room != "whole" else 1].startswith(
        "requests 8 (8 with cache reads and prompt logged (1 of them by the capture, * below)); prompt tokens of "
        "those 57743")
    csv = _run("cache", str(log), "--format", "csv", env={"COLUMNS": "60"})[1]
    assert f"\ntimeline,{log},{session},0,title," in csv  # never cut in CSV, the log and the session apart
