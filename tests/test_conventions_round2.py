"""Shared CLI conventions, second round (issue 14): the --since/--until window on imported logs and
when it is empty, what a run with nothing to read exits, diff's default PATH, --markdown naming
the step summary, SARIF URIs outside the current folder, check --json's help, and the capture a
log finds named as the log was."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from _cli import chat_log, invoke
from _copy_log import copy_as
from dsh_audit.capture import find_capture

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data" / "importers"
CLAUDE = DATA / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"  # 2026-01-05 10:00:00 to 10:06:04
CODEX = DATA / "codex" / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"  # to 10:03:02
CC_ID, CX_ID = "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11", "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
CHAT = ROOT / "sample_logs" / "chat" / "session.jsonl"  # 2027-01-15T08:00:00Z in the log
A_CHAT = ROOT.parent / "shared" / "corpus" / "live" / "a-chat"
needs_corpus = pytest.mark.skipif(not A_CHAT.is_dir(), reason="../shared/corpus is absent")

LEFT_OUT = "{window}: {n} of {of} log(s) with no activity in that window (by the logs' own timestamps) left out"


def _foreign(tmp_path: Path) -> Path:
    for source, folder in ((CLAUDE, "cc"), (CODEX, "cx")):
        (tmp_path / "fleet" / folder).mkdir(parents=True)
        shutil.copy(source, tmp_path / "fleet" / folder / source.name)
    return tmp_path / "fleet"


def _ids(out: str) -> list[str]:
    return [json.loads(line)["session_id"] for line in out.splitlines()]


# -- 1. --since/--until read an imported log's own times ------------------------------------------------

@pytest.mark.parametrize("command", ["sessions", "requests", "cache"])
def test_a_window_selects_claude_code_and_codex_logs_by_their_own_times(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    fleet = _foreign(tmp_path)
    monkeypatch.chdir(tmp_path)
    window = "--since 2026-06-01T00:00:00Z"
    assert invoke(monkeypatch, capsys, command, "fleet", "--json", "--since", "2026-06-01") == \
        (0, "", [f"note: {LEFT_OUT.format(window=window, n=2, of=2)}"])
    code, out, err = invoke(monkeypatch, capsys, command, str(fleet), "--json", "--since", "2026-01-05T10:05:00Z")
    assert (code, sorted(set(_ids(out))), err) == \
        (0, [CC_ID], [f"note: {LEFT_OUT.format(window='--since 2026-01-05T10:05:00Z', n=1, of=2)}"])
    code, out, err = invoke(monkeypatch, capsys, command, str(fleet), "--json", "--until", "2026-01-05")
    assert (code, sorted(set(_ids(out))), err) == (0, sorted([CC_ID, CX_ID]), [])  # that whole day: both


def test_index_leaves_out_an_imported_log_outside_the_window(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    _foreign(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "index", "fleet", "--db", "a.sqlite", "--json", "--since", "2026-06-01")
    assert (code, json.loads(out)["seen"], err) == \
        (0, 0, [f"note: {LEFT_OUT.format(window='--since 2026-06-01T00:00:00Z', n=2, of=2)}"])


def test_only_a_log_whose_times_cannot_be_read_is_kept_and_the_note_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _foreign(tmp_path)
    (tmp_path / "fleet" / "bad").mkdir()
    (tmp_path / "fleet" / "bad" / "session.jsonl").write_text("garbage\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    window = "--since 2026-06-01T00:00:00Z"
    assert invoke(monkeypatch, capsys, "sessions", "fleet", "--json", "--since", "2026-06-01") == (2, "", [
        f"note: {LEFT_OUT.format(window=window, n=2, of=3)}",
        f"note: {window}: 1 log(s) whose own timestamps cannot be read kept, so that the run says why",
        "error: fleet/bad/session.jsonl:1: corrupt session log: header line is not valid JSON (hint: this is not a "
        "DSH session log, or its first line is damaged; nor is it a session the claude-code or codex importer "
        "recognises)"])


# -- 2. an empty window is a usage error on every command ------------------------------------------------

EMPTY_WINDOW = ("error: --since must be before --until: --since 2026-12-03T00:00:00Z --until {until} is an empty "
                "window (hint: --until WHEN ends the window, and a date there includes that whole day: give a "
                "--since before it, or swap the two)")


@pytest.mark.parametrize("command", ["sessions", "requests", "breaks", "cache", "usage", "index", "validate",
                                     "check", "report"])
@pytest.mark.parametrize(("order", "until"), [("since first", "2026-12-02"), ("until first", "2026-12-02"),
                                              ("since first", "2026-12-01T12:00:00Z")])
def test_since_at_or_after_until_is_a_usage_error_naming_both(
        command: str, order: str, until: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    since = ["--since", "2026-12-03"]
    window = [*since, "--until", until] if order == "since first" else ["--until", until, *since]
    shown = "2026-12-03T00:00:00Z" if until == "2026-12-02" else "2026-12-01T12:00:00Z"  # a date: its day's end
    assert invoke(monkeypatch, capsys, command, str(CHAT), *window) == (2, "", [EMPTY_WINDOW.format(until=shown)])
    assert not os.listdir(tmp_path)  # refused before anything is written (report's page, index's database)


# -- 3./4. nothing to read: describing commands list nothing (0), gates exit 2 -----------------------------

@pytest.mark.parametrize("command", ["sessions", "requests", "breaks", "cache", "usage", "index", "report"])
def test_a_describing_command_lists_nothing_for_an_empty_window_or_folder(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "logs").mkdir()
    chat_log(tmp_path / "logs" / "a" / "session.jsonl", "session-a")
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path)
    extra = {"index": ["--db", "a.sqlite"], "report": ["-o", "page.html"]}.get(command, [])
    code, _, err = invoke(monkeypatch, capsys, command, "logs", "--since", "2030-01-01", *extra)
    assert (code, err) == (0, [f"note: {LEFT_OUT.format(window='--since 2030-01-01T00:00:00Z', n=1, of=1)}"])
    code, _, err = invoke(monkeypatch, capsys, command, "empty", *extra)
    assert (code, err) == (0, ["note: empty: folder holds no DSH session log: nothing to list there"])


def test_describing_output_of_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "sessions", "empty", "--json")[:2] == (0, "")
    assert invoke(monkeypatch, capsys, "requests", "empty", "--json")[:2] == (0, "")
    assert invoke(monkeypatch, capsys, "report", "empty", "-o", "page.html")[:2] == \
        (0, "wrote page.html: 0 log(s), 0 request(s), no log to check\n")


def test_sessions_on_an_empty_dsh_home_lists_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "home" / "sessions").mkdir(parents=True)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    root = tmp_path / "home" / "sessions"
    assert invoke(monkeypatch, capsys, "sessions") == \
        (0, "", [f"note: {root}: folder holds no DSH session log: nothing to list there"])


@pytest.mark.parametrize("command", ["check", "validate"])
def test_a_gate_given_nothing_to_check_exits_2(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "logs").mkdir()
    chat_log(tmp_path / "logs" / "a" / "session.jsonl", "session-a")
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, command, "logs", "--since", "2030-01-01") == (2, "", [
        f"note: {LEFT_OUT.format(window='--since 2030-01-01T00:00:00Z', n=1, of=1)}",
        "error: logs: no session log has activity in --since 2030-01-01T00:00:00Z (by the logs' own timestamps) "
        "(hint: widen or drop --since/--until)"])
    assert invoke(monkeypatch, capsys, command, "empty") == (2, "", [
        "error: empty: folder holds no DSH session log (hint: expected session.jsonl or session.jsonl.zstd files "
        "below it: pass PATH (a log, a session folder or a sessions root), or set DSH_HOME to the DSH home whose "
        "sessions/ holds them)"])


def test_readme_says_the_rule_for_nothing_to_read() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = " ".join(text[text.index("## Exit codes"):text.index("## Environment")].split())
    assert "a gate that checked nothing must not pass" in section
    assert "says why in a `note:` on stderr and exits `0`" in section
    assert "`--since` at or after `--until` is a window that holds no moment: a usage error (`2`)" in section


# -- 4. diff with no PATH reads $DSH_HOME/sessions ----------------------------------------------------------

@needs_corpus
def test_diff_with_no_path_reads_dsh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    sessions = tmp_path / "home" / "sessions" / "p"
    sessions.mkdir(parents=True)
    for log in (A_CHAT / "session-logs").glob("*.jsonl"):
        shutil.copy(log, sessions / log.name)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    capture = str(A_CHAT / "wire.jsonl")
    given = invoke(monkeypatch, capsys, "diff", str(tmp_path / "home" / "sessions"), "--capture", capture, "--json")
    assert given[0] == 0 and len(given[1].splitlines()) == 3
    assert invoke(monkeypatch, capsys, "diff", "--capture", capture, "--json") == given


def test_diff_with_no_path_and_no_sessions_folder_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    (tmp_path / "wire.jsonl").write_text("", encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "diff", "--capture", str(tmp_path / "wire.jsonl"))
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith(f"error: {tmp_path / 'sessions'}: no PATH given and no sessions folder at "
                             "$DSH_HOME/sessions")


# -- 5. --markdown naming GITHUB_STEP_SUMMARY ------------------------------------------------------------

def test_markdown_to_the_step_summary_file_appends_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    code, summary, _ = invoke(monkeypatch, capsys, "check", str(CHAT), "--markdown", "-")
    assert code == 0 and summary.startswith("## dsh-audit check")
    step = tmp_path / "gss.md"
    step.write_text("## previous step summary\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    code, _, err = invoke(monkeypatch, capsys, "check", str(CHAT), "--markdown", "gss.md")  # relative: same file
    assert code == 0
    assert step.read_text(encoding="utf-8") == "## previous step summary\n" + summary
    assert "note: --markdown gss.md is GITHUB_STEP_SUMMARY: the summary is appended to it once, after the earlier " \
           "steps' summaries" in err
    other = tmp_path / "other.md"  # another file: written whole, the step summary appended to
    other.write_text("old\n", encoding="utf-8")
    assert invoke(monkeypatch, capsys, "check", str(CHAT), "--markdown", str(other))[0] == 0
    assert other.read_text(encoding="utf-8") == summary
    assert step.read_text(encoding="utf-8") == "## previous step summary\n" + summary + summary


# -- 6. SARIF: a log outside the current folder is an absolute file URI ----------------------------------

def test_sarif_uri_of_a_log_outside_the_current_folder_is_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "f1" / "session.jsonl", "session-a")
    (tmp_path / "proj" / "sub").mkdir(parents=True)
    copy_as(log, tmp_path / "proj" / "f2" / "session.jsonl", "session-b")  # another session: a copy is read once
    monkeypatch.chdir(tmp_path / "proj" / "sub")

    def uris(*paths: str) -> list[str]:
        code, out, _ = invoke(monkeypatch, capsys, "check", *paths, "--sarif", "-", "--policy", str(policy))
        assert code == 1
        return sorted({r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                       for r in json.loads(out)["runs"][0]["results"]})

    policy = tmp_path / "policy.toml"
    policy.write_text('require-capture = true\n', encoding="utf-8")  # a finding at each log
    assert uris("../../f1") == [log.resolve().as_uri()]
    monkeypatch.chdir(tmp_path / "proj")
    assert uris("f2", "../f1") == ["f2/session.jsonl", log.resolve().as_uri()]


# -- 7. check --json's help says what it prints ------------------------------------------------------------

def test_check_json_help_is_true(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, help_text, _ = invoke(monkeypatch, capsys, "check", "--help")
    assert code == 0
    flat = " ".join(help_text.split())
    # one compact line since session 44 (issue 14 B3: stdout of every --json is JSON lines)
    assert ("--json The JSON report (docs/report-schema.json) on stdout as JSON lines, as every --json: one "
            "compact object on one line (--json-report - writes it indented) (the same as --format json).") in flat
    assert ("json (--json) prints the JSON report on one line (--json-report - indents it), markdown") in flat
    code, out, _ = invoke(monkeypatch, capsys, "check", str(CHAT), "--json")
    assert code == 0 and len(out.splitlines()) == 1 and out.endswith("}\n") and isinstance(json.loads(out), dict)
    code, indented, _ = invoke(monkeypatch, capsys, "check", str(CHAT), "--json-report", "-")
    assert code == 0 and len(indented.splitlines()) > 1 and json.loads(indented) == json.loads(out)
    for name in ("sessions", "requests"):  # the others' --json is one object per line
        assert "--json One JSON object per line on stdout" in " ".join(
            invoke(monkeypatch, capsys, name, "--help")[1].split())


# -- 8. the capture a log finds is named as the log was --------------------------------------------------

def test_find_capture_names_the_capture_from_the_log_as_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "scn" / "a" / "b").mkdir(parents=True)
    (tmp_path / "scn" / "wire.jsonl").write_text("", encoding="utf-8")
    (tmp_path / "scn" / "a" / "b" / "session.jsonl").write_text("", encoding="utf-8")
    assert find_capture("scn/a/b/session.jsonl") == Path("scn/wire.jsonl")
    assert find_capture(str(tmp_path / "scn" / "a" / "b" / "session.jsonl")) == tmp_path / "scn" / "wire.jsonl"
    os.chdir(tmp_path / "scn" / "a")
    assert find_capture("b/session.jsonl") == Path("../wire.jsonl")
    # through a symlinked folder the typed name would be another file: the resolved path is shown
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "link").symlink_to(tmp_path / "scn" / "a" / "b")
    os.chdir(tmp_path)
    assert find_capture("elsewhere/link/session.jsonl") == (tmp_path / "scn" / "wire.jsonl").resolve()


@needs_corpus
def test_check_shows_a_found_capture_relative_as_the_log_was_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "scn" / "logs").mkdir(parents=True)
    for log in (A_CHAT / "session-logs").glob("*.jsonl"):
        shutil.copy(log, tmp_path / "scn" / "logs" / log.name)
    shutil.copy(A_CHAT / "wire.jsonl", tmp_path / "scn" / "wire.jsonl")
    monkeypatch.chdir(tmp_path)
    code, out, _ = invoke(monkeypatch, capsys, "check", "scn/logs", "--json")
    report = json.loads(out)
    assert code == 0
    assert [s["capture"] for s in report["sessions"]] == ["scn/wire.jsonl"]
    assert [n for n in report["notes"] if ": capture " in n] == \
        [f"{report['sessions'][0]['path']}: capture scn/wire.jsonl"]
    assert [s["capture_verdicts"] for s in report["sessions"]] == [{"identical": 3}]

