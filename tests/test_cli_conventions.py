"""One set of CLI conventions on every command (issue 14): `-` is stdout for every report FILE and
nothing else goes there then; a bare `--json` prints JSON on stdout; with no PATH the sessions root
($DSH_HOME/sessions) is read; `--since/--until` read the logs' own timestamps with one parser; exit
codes as README.md says. And issue 13's leftovers: check's JSON carries the cost its Markdown shows,
`stats` lists each top session's cost, `dsh_audit.fleet` exports `CostRow`.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from dsh_audit.cli import cli

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
CHAT = SAMPLES / "chat" / "session.jsonl"
LIVE = ROOT.parent / "shared" / "corpus" / "live"
needs_corpus = pytest.mark.skipif(not LIVE.is_dir(), reason="../shared/corpus is absent")

# Every option that writes a machine format to a FILE, by command.
FILE_OUTPUTS = {"check": ["--junit", "--sarif", "--json-report", "--markdown"], "validate": ["--sarif"],
                "report": ["--output"], "redact": ["--output"]}
# The commands that read sessions and default to $DSH_HOME/sessions with no PATH.
DEFAULT_ROOT = ["breaks", "cache", "check", "diff", "index", "report", "requests", "sessions", "usage", "validate"]
TIMED = ["breaks", "cache", "check", "diff", "index", "report", "requests", "sessions", "usage", "validate"]


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False, standalone_mode=False)
    return result.return_value, result.stdout, result.stderr


def _main(monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes], *args: str) -> tuple[int, bytes, str]:
    """The console entry point (usage errors become exit 2 and one `error:` line)."""
    import sys

    from dsh_audit.cli._common import run_guarded

    monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
    code = run_guarded(cli)
    out = capsysbinary.readouterr()
    return code, out.out, out.err.decode()


def _command(name: str) -> click.Command:
    command = cli.get_command(click.Context(cli), name)
    assert command is not None
    return command


def _options(name: str) -> dict[str, click.Option]:
    return {opt: p for p in _command(name).params if isinstance(p, click.Option) for opt in p.opts}


# -- help: the conventions are written down on every command -------------------------------------

def test_every_json_flag_prints_json_and_every_file_output_says_dash_is_stdout() -> None:
    commands = cli.list_commands(click.Context(cli))
    assert len(commands) == 16
    for name in commands:
        options = _options(name)
        if "--json" in options:  # a flag everywhere, check included: JSON on stdout
            assert options["--json"].is_flag and "JSON" in (options["--json"].help or ""), name
        for flag in FILE_OUTPUTS.get(name, []):
            assert "'-' writes it to stdout (and nothing else goes there)" in (options[flag].help or ""), (name, flag)
    for name in DEFAULT_ROOT:
        argument = next(p for p in _command(name).params if isinstance(p, click.Argument))
        assert (argument.name, argument.required, argument.nargs) == ("paths", False, -1), name
    for name in TIMED:
        options = _options(name)
        assert options["--since"].help is not None and "--until" in options, name
        assert "own timestamps" in options["--since"].help or name == "usage", name


def test_docs_cli_md_documents_the_conventions() -> None:
    text = " ".join((ROOT / "docs" / "cli.md").read_text(encoding="utf-8").split())
    assert text.count("'-' writes it to stdout (and nothing else goes there)") == 7
    assert "--json-report FILE" in text and "--json FILE" not in text


# -- `-` is stdout -------------------------------------------------------------------------------

def test_check_json_report_to_stdout_is_the_report_alone(tmp_path: Path) -> None:
    flag = "--json-report"
    code, out, err = _run("check", str(CHAT), flag, "-")
    report = json.loads(out)  # stdout holds the report and nothing else
    assert (code, report["passed"], report["counts"]["sessions"], report["counts"]["requests"]) == (0, True, 1, 3)
    written = tmp_path / "report.json"
    assert _run("check", str(CHAT), flag, str(written))[0] == 0
    saved = json.loads(written.read_text(encoding="utf-8"))
    assert [s["path"] for s in saved["sessions"]] == [s["path"] for s in report["sessions"]] == [str(CHAT)]


@pytest.mark.parametrize(("flag", "start"), [("--sarif", '{\n  "$schema"'), ("--junit", "<?xml"),
                                              ("--markdown", "## dsh-audit check")])
def test_check_other_reports_to_stdout(flag: str, start: str) -> None:
    code, out, err = _run("check", str(CHAT), flag, "-")
    assert code == 0 and out.startswith(start), out[:80]
    assert "PASSED" not in out and "dsh-audit check\n" not in out  # no table, no status line


def test_two_outputs_cannot_share_stdout(monkeypatch: pytest.MonkeyPatch,
                                         capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code, out, err = _main(monkeypatch, capsysbinary, "check", str(CHAT), "--json-report", "-", "--sarif", "-")
    assert (code, out) == (2, b"")
    assert err == ("error: only one output can go to stdout, not --sarif -, --json-report - "
                   "(hint: give the others a FILE name)\n")
    code, out, err = _main(monkeypatch, capsysbinary, "validate", str(CHAT), "--json", "--sarif", "-")
    assert (code, out) == (2, b"")
    assert err == ("error: only one output can go to stdout, not --json and --sarif - "
                   "(hint: give --sarif a FILE name, or leave out --json)\n")


def test_validate_sarif_to_stdout_is_the_sarif_alone() -> None:
    code, out, err = _run("validate", str(CHAT), "--sarif", "-")
    sarif = json.loads(out)
    assert (code, sarif["version"], sarif["runs"][0]["results"]) == (0, "2.1.0", [])
    assert err == "0 error(s), 0 warning(s), 0 info in 1 file(s)\n"


def test_report_to_stdout_is_the_page_alone() -> None:
    code, out, err = _run("report", str(CHAT), "-o", "-")
    assert code == 0 and out.startswith("<!DOCTYPE html>") and out.rstrip().endswith("</html>")
    assert err == "wrote stdout: 1 log(s), 3 request(s), check passed: no breaks\n"
    assert not Path("-").exists()


def test_redact_to_stdout_is_the_log_alone(tmp_path: Path) -> None:
    code, out, err = _run("redact", str(CHAT), "-o", "-", "--salt", "s")
    assert code == 0 and out.startswith('{"type":"session"')
    assert out.count("\n") == CHAT.read_text(encoding="utf-8").count("\n")
    assert "note: no manifest is kept with -o -" in err and err.endswith(": unchanged\n")
    copy = tmp_path / "session.jsonl"
    assert _run("redact", str(CHAT), "-o", str(copy), "--salt", "s")[0] == 0
    assert copy.read_text(encoding="utf-8") == out  # the same salt: the same bytes


# -- $DSH_HOME: the default of every command that reads sessions ----------------------------------

@pytest.mark.parametrize("command", DEFAULT_ROOT)
def test_no_path_and_no_sessions_root_is_one_line_naming_dsh_home_and_path(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    code, out, err = _main(monkeypatch, capsysbinary, command)
    assert (code, out) == (2, b"")
    assert err == (f"error: {tmp_path / 'sessions'}: no PATH given and no sessions folder at $DSH_HOME/sessions "
                   "(hint: pass PATH (a log, a session folder or a sessions root), or set DSH_HOME to the DSH "
                   "home that holds sessions/)\n")


@pytest.mark.parametrize("command", ["validate", "check", "report"])
def test_validate_check_and_report_read_dsh_home(command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    shutil.copytree(SAMPLES / "sessions", home / "sessions")
    for age, log in enumerate(sorted((home / "sessions").rglob("session.jsonl*"))):  # newest first = by path:
        os.utime(log, (1_800_000_000 - age, 1_800_000_000 - age))  # check numbers its logs in its one order
    monkeypatch.chdir(tmp_path)
    given = _run(command, str(home / "sessions"), *(["-o", str(tmp_path / "a.html")] if command == "report" else []))
    default = _run(command, *(["-o", str(tmp_path / "b.html")] if command == "report" else []),
                   env={"DSH_HOME": str(home)})
    assert default[0] == given[0] == 0
    if command == "report":
        assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b.html").read_bytes()
    elif command == "validate":  # no finding: the summary on stderr
        assert default[1:] == given[1:] == ("", "0 error(s), 0 warning(s), 0 info in 8 file(s)\n")
    else:  # the same logs; the home's newest first, given PATHS' by path (docs/cli.md)
        assert sorted(default[1].splitlines()) == sorted(given[1].splitlines()) and given[1]


# -- --since / --until: one parser, the logs' own timestamps ------------------------------------

@pytest.mark.parametrize("command", TIMED)
@pytest.mark.parametrize(("option", "value"), [("--since", "tomorrow"), ("--until", "10000-01-01"),
                                               ("--since", "2026-13-01"), ("--until", "last week")])
def test_a_bad_time_is_a_usage_error(command: str, option: str, value: str, monkeypatch: pytest.MonkeyPatch,
                                     capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    code, out, err = _main(monkeypatch, capsysbinary, command, str(CHAT), option, value)
    assert (code, out) == (2, b"")
    assert "Traceback" not in err
    assert err == (f"error: Invalid value for '{option}': cannot read {option} '{value}' (give a date "
                   "(2026-11-01), today or yesterday (UTC days), a date-time (2026-11-01T08:30, or with an offset such as +01:00 or Z; UTC "
                   f"when none) or an age such as 90s, 30m, 12h, 7d or 2w) (hint: see `dsh-audit {command} --help`)\n")


@pytest.mark.parametrize("command", ["breaks", "requests", "sessions", "validate", "cache"])
def test_since_and_until_select_by_the_logs_timestamps(command: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    log = tmp_path / "chat" / "session.jsonl"  # 2027-01-15T08:00:00Z in the log; the copy's mtime is now
    log.parent.mkdir()
    shutil.copy(CHAT, log)
    monkeypatch.chdir(tmp_path)
    everything = _run(command, "--json", str(log))
    for args in (["--since", "0001-01-01"], ["--since", "2027-01-15T08:00:00Z"], ["--until", "2027-01-15"],
                 ["--since", "2027-01-15T09:00:00+01:00", "--until", "2027-01-16"]):
        assert _run(command, "--json", str(log), *args)[:2] == everything[:2], args
    for args, window in ((["--since", "2027-01-16"], "--since 2027-01-16T00:00:00Z"),
                         (["--until", "2027-01-14"], "--until 2027-01-15T00:00:00Z"),
                         (["--since", "2027-01-15T08:00:01Z"], "--since 2027-01-15T08:00:01Z")):
        left_out = (f"note: {window}: 1 of 1 log(s) with no activity in that window (by the logs' own "
                    "timestamps) left out\n")
        if command == "validate":  # a gate given nothing to check exits 2 (README: Exit codes)
            code, out, err = _main(monkeypatch, capsysbinary, command, "--json", str(log), *args)
            assert (code, out) == (2, b""), args
            assert err == (f"{left_out}error: {log}: no session log has activity in {window} (by the logs' own "
                           "timestamps) (hint: widen or drop --since/--until)\n")
            continue
        code, out, err = _run(command, "--json", str(log), *args)
        assert (code, out) == (0, ""), args
        assert left_out in err


def test_usage_since_and_until_share_the_parser() -> None:
    whole = json.loads(_run("usage", "--json", str(CHAT))[1])
    assert whole["totals"]["requests"] == 3
    assert json.loads(_run("usage", "--json", str(CHAT), "--since", "7d")[1])["totals"]["requests"] == 3  # 2027
    assert json.loads(_run("usage", "--json", str(CHAT), "--until", "2027-01-14")[1])["totals"]["requests"] == 0
    assert json.loads(_run("usage", "--json", str(CHAT), "--until", "2027-01-15")[1]) == whole


# -- exit codes as README.md says ---------------------------------------------------------------

def test_readme_exit_codes_name_every_command() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Exit codes"):text.index("## Fidelity")]
    for name in cli.list_commands(click.Context(cli)):
        assert f"`{name}`" in section, name


@needs_corpus
def test_breaks_exits_1_only_for_an_unexplained_break() -> None:
    resume = str(LIVE / "d-resume" / "session-logs")  # one break, explained (resume)
    assert _run("breaks", resume)[0] == 0
    assert _run("breaks", resume, "--fail-on", "any")[0] == 1
    assert _run("breaks", resume, "--fail-on", "never")[0] == 0
    cache = _run("cache", resume)
    assert cache[0] == 0


@pytest.mark.parametrize(("args", "code"), [
    (["requests", str(CHAT)], 0), (["sessions", str(CHAT)], 0), (["usage", str(CHAT)], 0),
    (["cache", str(CHAT)], 0), (["breaks", str(CHAT)], 0), (["explain", str(CHAT), "1"], 0),
    (["validate", str(CHAT)], 0), (["show", str(CHAT), "-1"], 0),
    (["requests", str(CHAT), "--bogus"], 2), (["explain", str(CHAT), "9"], 2),
])
def test_describing_commands_exit_0_and_bad_usage_2(args: list[str], code: int, monkeypatch: pytest.MonkeyPatch,
                                                    capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert _main(monkeypatch, capsysbinary, *args)[0] == code


# -- issue 13: cost in check's JSON, stats' top sessions, CostRow ----------------------------------

def _usd(amount: float) -> str:
    """An amount as people see it: 4 decimals, or 2 significant digits when those would show 0."""
    text = f"{amount:.4f}"
    if amount and float(text) == 0:
        text = f"{amount:.{1 - math.floor(math.log10(amount))}f}"
    return f"${text}"


def test_check_json_cost_is_the_markdowns(tmp_path: Path) -> None:
    code, out, _ = _run("check", str(SAMPLES / "sessions"), "--json-report", "-")
    report = json.loads(out)
    markdown = _run("check", str(SAMPLES / "sessions"), "--markdown", "-")[1]
    assert code == 0 and report["sessions"]
    for session in report["sessions"]:
        cost: dict[str, Any] = session["cost"]
        total, breaks, unpriced = (cost["cost_usd"] or {}).get("total"), cost["break_cost_usd"], \
            cost["unpriced_requests"]
        bound = "≥" if unpriced else ""  # a sum over the priced requests only: a lower bound
        if total is None:  # no request priced (docs/cache-accounting.md, "Unpriced requests")
            shown = f"$? ({unpriced} unpriced)"
        else:  # the samples' replies log cacheReadTokens (as DSH's DeepSeek adapter does): priced
            breaks_bound = "≥" if cost["break_unpriced"] else ""  # owed by the requests that lost tokens
            shown = (f"{bound}{_usd(total)}" + (f" (breaks {breaks_bound}{_usd(breaks)})" if breaks else "")
                     + (f" ({unpriced} unpriced)" if unpriced else ""))
        assert f"| {shown} |" in markdown, session["path"]
        assert set(cost) >= {"requests", "tokens", "cost_usd", "no_cache_cost_usd", "off_peak_cost_usd",
                             "break_cost_usd", "unpriced"}


def test_report_schema_describes_the_cost() -> None:
    schema = json.loads((ROOT / "docs" / "report-schema.json").read_text(encoding="utf-8"))
    cost = schema["$defs"]["session"]["properties"]["cost"]
    assert cost["oneOf"][0] == {"type": "null"}
    assert cost["oneOf"][1]["required"] == ["requests", "tokens", "cost_usd", "no_cache_cost_usd",
                                            "break_cost_usd", "unpriced"]
    # absent where no priced request's provider has a peak window (DeepSeek's alone has one)
    off_peak = cost["oneOf"][1]["properties"]["off_peak_cost_usd"]
    assert (off_peak["type"], "Absent when it does not apply" in off_peak["description"]) == (["number", "null"], True)


def test_stats_top_sessions_show_cost(tmp_path: Path) -> None:
    db = str(tmp_path / "audit.sqlite")
    assert _run("index", str(SAMPLES / "sessions"), str(CHAT), "--db", db)[0] == 0
    stats = json.loads(_run("stats", "--db", db, "--json")[1])
    cache = {str(Path(r["path"]).resolve()): r["cost"] for r in
             map(json.loads, _run("cache", "--json", str(SAMPLES / "sessions"), str(CHAT))[1].splitlines())}
    assert len(stats["top_sessions"]) == len(cache) > 2
    for row in stats["top_sessions"]:
        assert row["cost_usd"] == cache[row["path"]]["cost_usd"], row["path"]  # the buckets and their total
        assert row["break_cost_usd"] == cache[row["path"]]["break_cost_usd"], row["path"]
    table = _run("stats", "--db", db, env={"COLUMNS": "250"})[1]
    # the samples log no cacheReadTokens on deepseek-official: unpriced, "$?" (docs/cache-accounting.md)
    priced = [row["cost_usd"]["total"] for row in stats["top_sessions"] if row["cost_usd"] is not None]
    assert "breaks $" in table and (f"${priced[0]:.4f}" in table if priced else "$?" in table)


def test_fleet_exports_cost_row() -> None:
    import dsh_audit.fleet as fleet

    assert "CostRow" in fleet.__all__ and fleet.CostRow.__module__ == "dsh_audit.fleet._rows"
    assert fleet.SessionRecord.__dataclass_fields__["costs"].type == "Sequence[CostRow]"


def test_a_click_usage_error_is_one_line_naming_the_help(monkeypatch: pytest.MonkeyPatch,
                                                         capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert _main(monkeypatch, capsysbinary, "cache", "--nope", str(CHAT)) == (
        2, b"", "error: No such option '--nope'. (Did you mean one of: '--no-capture', '--no-pager', '--no-wire'?) "
                "(hint: see `dsh-audit cache --help`)\n")
    assert _main(monkeypatch, capsysbinary, "nosuch") == (
        2, b"", "error: No such command 'nosuch'. (hint: see `dsh-audit --help`)\n")


@pytest.mark.parametrize("argv", [["requests", "sample_logs/sessions/"], ["requests", "sample_logs/sessions/", "--json"]])
def test_a_reader_that_stops_early_is_not_a_failure(argv: list[str]) -> None:
    """``dsh-audit requests | head``: exit 0 and nothing on stderr (rich and click both exit 1 on a
    broken pipe by themselves)."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    with subprocess.Popen([sys.executable, "-m", "dsh_audit", *argv], cwd=root, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as process:
        assert process.stdout is not None and process.stderr is not None
        process.stdout.read(100)
        process.stdout.close()
        assert (process.wait(timeout=60), process.stderr.read()) == (0, b"")


# -- a bug, a long value, an endless wait: still one line --------------------------------------------

def _broken(*_args: Any, **_kwargs: Any) -> Any:
    raise RuntimeError("boom \x1b]0;title\x07")


def test_an_unexpected_exception_is_one_line_and_exit_3(monkeypatch: pytest.MonkeyPatch,
                                                         capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    import dsh_audit.cli._requests as requests_cli

    monkeypatch.delenv("DSH_AUDIT_TRACEBACK", raising=False)
    monkeypatch.setattr(requests_cli, "iter_many", _broken)
    code, out, err = _main(monkeypatch, capsysbinary, "requests", str(CHAT))
    assert (code, out) == (3, b"")
    assert err.count("\n") == 1 and "Traceback" not in err and "\x1b" not in err
    assert err.startswith("error: unexpected RuntimeError: boom \\u001b]0;title\\u0007 at ")
    assert err.endswith("(hint: this is a dsh-audit bug; please report it with the log if you can share it "
                        "(DSH_AUDIT_TRACEBACK=1 shows the traceback))\n")

    monkeypatch.setenv("DSH_AUDIT_TRACEBACK", "1")
    with pytest.raises(RuntimeError, match="boom"):
        _main(monkeypatch, capsysbinary, "requests", str(CHAT))


def test_running_out_of_memory_is_one_line_naming_the_limits(monkeypatch: pytest.MonkeyPatch,
                                                              capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    import dsh_audit.cli._requests as requests_cli

    def exhausted(*_args: Any, **_kwargs: Any) -> Any:
        raise MemoryError

    monkeypatch.delenv("DSH_AUDIT_TRACEBACK", raising=False)
    monkeypatch.setattr(requests_cli, "iter_many", exhausted)
    code, out, err = _main(monkeypatch, capsysbinary, "requests", str(CHAT))
    assert (code, out) == (3, b"")
    assert err.startswith("error: ran out of memory at ") and err.count("\n") == 1
    assert "docs/hostile-inputs.md" in err and "--jobs 1" in err


def test_an_error_quoting_a_huge_value_is_cut_in_the_middle(monkeypatch: pytest.MonkeyPatch,
                                                            capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    from dsh_audit.cli._common import MESSAGE_MAX

    code, out, err = _main(monkeypatch, capsysbinary, "cache", str(CHAT), "--jobs", "9" * 5000)
    assert (code, out) == (2, b"") and err.count("\n") == 1
    assert err.startswith("error: Invalid value for '--jobs' / '-j': '999")
    head, cut = err.split(" [... ", 1)
    number, tail = cut.split(" characters cut ...] ")
    assert len(head) == len(tail.removesuffix("\n")) == MESSAGE_MAX // 2
    assert len(head) + int(number.replace(",", "")) + len(tail) - 1 > 5000
    assert tail.endswith("(hint: see `dsh-audit cache --help`)\n")


@pytest.mark.parametrize("value", ["inf", "nan", "1e400", "-inf"])
@pytest.mark.parametrize("option", ["--exit-after", "--idle-exit", "--settle"])
def test_watch_waits_only_a_finite_time(option: str, value: str, monkeypatch: pytest.MonkeyPatch,
                                        capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path) -> None:
    code, out, err = _main(monkeypatch, capsysbinary, "watch", str(tmp_path), option, value)
    assert (code, out) == (2, b"") and err.count("\n") == 1
    assert err.startswith(f"error: Invalid value for '{option}': ")


def test_check_json_is_the_flag_and_an_old_json_file_is_refused_with_the_option_to_use(
        monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path) -> None:
    """``check --json`` prints the JSON report on stdout as JSON lines, as every --json (issue 14
    B3): one compact line, the very object ``--json-report -`` writes indented; the older
    ``check --json FILE`` names a .json file as a log, and is told the option that writes one."""
    flag = _main(monkeypatch, capsysbinary, "check", str(CHAT), "--json")
    dash = _main(monkeypatch, capsysbinary, "check", str(CHAT), "--json-report", "-")
    lines = flag[1].splitlines()
    assert (flag[0], dash[0], len(lines), flag[1].endswith(b"}\n"), len(dash[1].splitlines()) > 20) == (0, 0, 1, True, True)
    assert json.loads(lines[0]) == json.loads(dash[1]) and json.loads(lines[0])["passed"] is True
    # --json says nothing else; a report FILE of '-' leaves the table and the verdict on stderr (session 40)
    assert (flag[2], dash[2].splitlines()[0], dash[2].splitlines()[-1].startswith("PASSED: ")) == (
        "", "dsh-audit check", True)
    report = tmp_path / "out.json"
    code, out, err = _main(monkeypatch, capsysbinary, "check", "--json", str(report), str(CHAT))
    assert (code, out, err) == (2, b"", f"error: {report}: a .json file is no session log: --json prints the JSON "
                                        "report on stdout and takes no FILE (hint: write the JSON report to a file "
                                        "with --json-report FILE)\n")
    assert not report.exists()


# -- one spelling for each shared switch (session 35) ------------------------------------------------

#: Every "--no-X" switch a command may show, and what it means: a new command reuses one of these
#: (cli/_options.py) rather than a second spelling of the same meaning.
NO_SWITCHES = {"--no-accounting": "skip the cache accounting (expected reads, losses and their cost)",
               "--no-attribution": "skip break attribution", "--no-wire": "cache: compare the log's JSON",
               "--no-pager": "print directly", "--no-openai-zdr": "OpenAI ZDR stated off",
               "--no-baseline": "check, report: no baseline",
               "--no-capture": "look for no wire.jsonl beside the logs"}
#: The older spellings each command still reads, hidden (RETIRED_SPELLINGS says what they mean now).
ALIASES = {"sessions": "--no-cost", "usage": "--no-breaks", "index": "--no-cache", "breaks": "--cost"}
#: A sample session with prefix-cache breaks (what --accounting prices).
CHANGE = SAMPLES / "sessions" / "--home-dev-projects-demo--" / "session-sample-change" / "session.jsonl.zstd"
#: The commands that render a request's wire body, each taking --adapter (index too: stats sums what it judged).
RENDERING = ["breaks", "cache", "check", "diff", "explain", "index", "render", "report"]


def _every_option() -> list[tuple[str, click.Option]]:
    return [(name, param) for name in cli.list_commands(click.Context(cli))
            for param in _command(name).params if isinstance(param, click.Option)]


def test_one_spelling_for_each_shared_switch_on_every_command() -> None:
    from dsh_audit.cli._options import RETIRED_SPELLINGS

    shown = {(name, flag) for name, p in _every_option() if not p.hidden for flag in (*p.opts, *p.secondary_opts)}
    assert {flag for _, flag in shown if flag.startswith("--no-")} <= set(NO_SWITCHES)
    assert not {flag for _, flag in shown} & set(RETIRED_SPELLINGS)  # an old spelling is never shown
    hidden = {(name, flag) for name, p in _every_option() if p.hidden for flag in p.opts}
    # read only where it was read before; and --pager/--no-pager, doing nothing, on each QUIET command
    assert hidden == set(ALIASES.items()) | {(name, "--pager") for name in QUIET}
    assert set(ALIASES.values()) == set(RETIRED_SPELLINGS)
    # one declaration each: the same flags, choices and help wherever they are taken
    for flag in ("--accounting", "--no-attribution", "--adapter"):
        found = {name: p for name, p in _every_option() if flag in p.opts}
        assert len({(tuple(p.opts), tuple(p.secondary_opts), str(p.type)) for p in found.values()}) == 1, flag
    # a flag that skips some of the work under another name is a second spelling of one of these
    skipping = re.compile(r"(?i)\b(skip|skips|do not|without)\b.*\b(accounting|attribution|cost|price|break)")
    assert {p.opts[0] for _, p in _every_option() if p.is_flag and not p.hidden and skipping.search(p.help or "")
            } <= {"--accounting", "--no-attribution"}
    accounting = {name: p.default for name, p in _every_option() if "--accounting" in p.opts}
    assert accounting == {"breaks": False, "index": True, "sessions": True, "usage": True}
    assert sorted(name for name, p in _every_option() if "--no-attribution" in p.opts) == ["cache", "index"]


def test_every_command_that_renders_a_body_takes_the_same_adapter_option() -> None:
    found = {name: p for name, p in _every_option() if "--adapter" in p.opts}
    assert sorted(found) == RENDERING
    assert {(p.help, tuple(p.type.choices), p.default) for p in found.values()  # type: ignore[attr-defined]
            } == {(found["diff"].help, ("auto", "deepseek", "anthropic", "openai", "responses"), "auto")}


@pytest.mark.parametrize(("args", "old", "new"), [
    (["sessions", str(CHAT), "--json"], "--no-cost", "--no-accounting"),
    (["usage", str(SAMPLES / "sessions"), "--json"], "--no-breaks", "--no-accounting"),
    (["breaks", str(CHANGE), "--json"], "--cost", "--accounting")])
def test_each_older_spelling_reads_as_the_new_one(args: list[str], old: str, new: str) -> None:
    plain, with_new, with_old = _run(*args), _run(*args, new), _run(*args, old)
    assert with_old == with_new and with_new[1] != plain[1]
    variable = f"DSH_AUDIT_{args[0].upper()}_{old.removeprefix('--').replace('-', '_').upper()}"
    assert _run(*args, env={variable: "1"}) == with_new  # its environment variable too


def test_index_no_cache_is_no_accounting(tmp_path: Path) -> None:
    rows = []
    for flag in ("--no-cache", "--no-accounting"):
        db = tmp_path / f"{flag}.sqlite"
        code, out, _ = _run("index", str(CHAT), "--db", str(db), "--json", flag)
        summary = json.loads(out)
        rows.append((code, summary["indexed"], summary["seen"]))
    assert rows == [(0, 1, 1), (0, 1, 1)]


# -- one way to choose a listing's format and its pager (issue 14, session 35 tour F10) ------------

#: The commands that print a listing: each takes --format table|json|csv|markdown and --pager/--no-pager
#: (cli/_options.py listing_options), shown in its help.
LISTING = ["breaks", "cache", "check", "diff", "requests", "sessions", "stats", "usage", "validate"]
#: The commands that print one request or session, a screenful or more, but no table: --pager/--no-pager
#: (cli/_options.py pager_option), shown.
PAGED = ["explain", "render", "show"]
#: The commands that print no listing and never page: --pager/--no-pager accepted, hidden, doing nothing,
#: so that a script passing --no-pager to every command is not refused.
QUIET = ["index", "redact", "report", "watch"]


def test_every_command_is_a_listing_a_paged_or_a_quiet_one() -> None:
    assert sorted(LISTING + PAGED + QUIET) == sorted(cli.list_commands(click.Context(cli)))
    for name in LISTING:
        options = _options(name)
        assert "--format" in options and not options["--format"].hidden, name
        assert tuple(options["--format"].type.choices) == ("table", "json", "csv", "markdown"), name  # type: ignore[attr-defined]
        shared = (_options("requests")["--format"].help or "").split("; json is")[0]
        assert (options["--format"].help or "").startswith(shared + "; "), name  # one declaration, its own last words
    for name in LISTING + PAGED + QUIET:
        pager = _options(name)["--pager"]
        assert (pager.secondary_opts, pager.default, pager.hidden) == (["--no-pager"], True, name in QUIET), name
        assert "--format" not in _options(name) or name in LISTING, name


def _walk_args(name: str, tmp: Path) -> list[str]:
    """A quick run of command ``name`` over a sample (the corpus's a-chat for diff: it needs a capture)."""
    db = str(tmp / "walk.sqlite")
    return {"show": [str(CHAT), "1"], "render": [str(CHAT), "1"], "explain": [str(CHAT), "1"],
            "breaks": [str(CHANGE)], "watch": [str(tmp), "--exit-after", "0.1"],
            "diff": [str(LIVE / "a-chat")], "report": [str(CHAT), "-o", str(tmp / "r.html")],
            "redact": [str(CHAT), "-o", str(tmp / "r.jsonl"), "--salt", "s"], "index": [str(CHAT), "--db", db],
            "stats": ["--db", db]}.get(name, [str(CHAT)])


@needs_corpus
def test_a_command_that_prints_a_table_takes_format_and_pager(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk: every command run once; one that draws a table (print_table asks for the run's
    listing) must be a LISTING command; and --no-pager changes nothing on a QUIET one."""
    import dsh_audit.report._tables as tables

    asked: list[str] = []
    real = tables.current
    monkeypatch.setattr(tables, "current", lambda: asked.append("table") or real())
    drew = set()
    for name in cli.list_commands(click.Context(cli)):  # index before stats: the workflow order
        asked.clear()
        code = _run(name, *_walk_args(name, tmp_path))[0]
        assert code in (0, 1), name
        if asked:
            drew.add(name)
    assert drew <= set(LISTING) and drew >= set(LISTING) - {"validate"}  # validate: no finding, no table
    assert _run("validate", "--format", "csv", str(CHAT))[1] == "table,path,line,seq,rule,severity,message,hint\n"


@pytest.mark.parametrize("name", QUIET)
def test_a_quiet_command_takes_no_pager_and_changes_nothing(name: str, tmp_path: Path) -> None:
    said = []
    for flag in ((), ("--no-pager",), ("--pager",)):
        folder = tmp_path / str(len(said))
        folder.mkdir()
        code, out, err = _run(name, *_walk_args(name, folder), *flag)
        said.append((code, *(re.sub(r" in \d+\.\d s", "", text.replace(str(folder), "F")) for text in (out, err))))
    assert said[0][0] == 0 and said[0] == said[1] == said[2]


def test_a_session_named_by_id_gets_no_note_about_another_sessions_copies(
        monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes], tmp_path: Path) -> None:
    """Issue 14: ``cache ID`` said the duplicate-file note of another session of the home; a note
    about a session the user did not name is noise. The home itself (no PATH) still says it."""
    shutil.copytree(SAMPLES / "sessions", tmp_path / "sessions")
    tools = tmp_path / "sessions" / "--home-dev-projects-demo--" / "session-sample-tools"
    shutil.copy(SAMPLES / "tools" / "session.jsonl", tools / "session.jsonl")  # a plain copy beside the .zstd
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    code, out, err = _main(monkeypatch, capsysbinary, "cache", "session-sample-chat", "--json")
    assert (code, len(out.splitlines()), err) == (0, 1, "")
    code, out, err = _main(monkeypatch, capsysbinary, "cache", "--json")
    assert (code, err) == (0, f"note: {tools}: read session.jsonl.zstd (generation v0), the one DSH would read; "
                              "also present: session.jsonl\n")
