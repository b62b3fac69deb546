"""Session 31, a CI engineer's tour of ``dsh-audit check`` over recorded sessions with captures:

1. a torn last line of a ``wire.jsonl`` (a capture writer killed mid-write) stopped the whole
   gate with exit 2 and no report; it is dropped with a warning in a log's torn-tail words, and
   a bad line elsewhere refuses the log it was found beside (session 34; it stopped the gate);
2. two reports given the same file (a path, a symlink, a hard link, GITHUB_STEP_SUMMARY) silently
   overwrote each other: refused, exit 2, naming both;
3. ``--sarif - --json`` named ``--json-report -``, an option not typed: options are named as typed;
4. the order of ``check``, ``requests`` and ``breaks`` is stated as it is (the file's mtime with no
   PATH, PATHS as given), the same words in README.md and in each help;
5. a 5,000-digit integer in a TOML price file is refused in the project's words, as in JSON;
6. docs/importers.md's examples are today's output.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import click
import pytest

from dsh_audit.capture import load_capture
from dsh_audit.cli import cli
from dsh_audit.errors import CaptureError

from _cli import chat_log, invoke

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
LIVE = CORPUS / "live"
needs_corpus = pytest.mark.skipif(not (LIVE / "a-chat").is_dir() or not (LIVE / "b-tools").is_dir(),
                                  reason="../shared/corpus is absent")
_RECORD = '{"method": "POST", "path": "/v1/chat", "headers": {}, "body": "{}"}\n'


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setenv("COLUMNS", "200")


# -- 1. a torn capture tail -----------------------------------------------------------------------

def test_a_torn_last_capture_line_is_dropped_with_the_log_torn_tail_words(tmp_path: Path) -> None:
    wire = tmp_path / "wire.jsonl"
    wire.write_text(_RECORD * 2 + '{"method": "POST", "body": "{\\"mod', "utf-8")
    warnings: list[str] = []
    assert [c.locator for c in load_capture(wire, warnings=warnings)] == ["line 1", "line 2"]
    assert warnings == [f"{wire}: torn tail: line 3 has no terminating newline (34 bytes ignored)"]
    # a caller that cannot say it keeps the strict reading: the torn line is malformed input
    with pytest.raises(CaptureError) as raised:
        load_capture(wire)
    assert str(raised.value).startswith(f"{wire}: line 3: not a JSON record (Unterminated string")


def test_a_whole_last_record_without_newline_is_kept_and_a_bad_middle_line_is_an_error(tmp_path: Path) -> None:
    whole = tmp_path / "whole.jsonl"
    whole.write_text(_RECORD + _RECORD.rstrip("\n"), "utf-8")
    warnings: list[str] = []
    assert [c.locator for c in load_capture(whole, warnings=warnings)] == ["line 1", "line 2"]
    assert warnings == []
    middle = tmp_path / "middle.jsonl"
    middle.write_text(_RECORD + "{oops\n" + _RECORD, "utf-8")
    with pytest.raises(CaptureError) as raised:
        load_capture(middle, warnings=warnings)
    assert str(raised.value) == (f"{middle}: line 2: not a JSON record (Expecting property name enclosed in double "
                                 "quotes: line 1 column 2 (char 1)) (hint: a wire.jsonl capture has one JSON object "
                                 "per line)")
    not_record = tmp_path / "list.jsonl"
    not_record.write_text(_RECORD + "[1]", "utf-8")  # JSON, no newline: a whole line that is no record
    with pytest.raises(CaptureError) as raised:
        load_capture(not_record, warnings=warnings)
    assert str(raised.value) == (f"{not_record}: line 2: record is not a JSON object (hint: a wire.jsonl capture "
                                 "has one JSON object per line)")


def _badcap(tmp_path: Path, tail: str | None = None) -> Path:
    """a-chat and b-tools under ``badcap/``, a-chat's capture cut 5,000 bytes short (its line 3
    torn), or with its line 2 replaced by ``tail``."""
    folder = tmp_path / "badcap"
    for name in ("a-chat", "b-tools"):
        shutil.copytree(LIVE / name, folder / name)
    wire = folder / "a-chat" / "wire.jsonl"
    data = (LIVE / "a-chat" / "wire.jsonl").read_bytes()
    if tail is None:
        wire.write_bytes(data[:-5000])
    else:
        lines = data.split(b"\n")
        wire.write_bytes(b"\n".join([lines[0], tail.encode(), *lines[2:]]))
    return folder


@needs_corpus
def test_check_over_a_torn_capture_still_judges_every_session_and_writes_its_reports(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _badcap(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", "badcap", "--sarif", "e3.sarif", "--format", "csv")
    warning = "warning: badcap/a-chat/wire.jsonl: torn tail: line 3 has no terminating newline (30225 bytes ignored)"
    assert code == 1
    assert [line for line in err if line.startswith("warning:")] == [warning]
    assert (tmp_path / "e3.sarif").is_file()
    rows = [line.split(",") for line in out.splitlines() if line.startswith("dsh-audit check,")]
    # a-chat's third request has no captured send now (DSH813); b-tools passes
    assert [(row[1], row[4], row[5]) for row in rows] == [("FAIL", "3", "2/3 identical"), ("ok", "9", "9/9 identical")]
    assert folder.is_dir()


@needs_corpus
def test_check_over_a_capture_with_a_bad_middle_line_refuses_its_log_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The capture is not what was sent: it is check's finding (``DSH802`` at the capture, failing:
    exit 1) and a warning, and the log it was found beside is checked without it (tour 38: its
    requests count), the other log is judged and the reports are written (session 34: it was exit 2
    with no report and no verdict for any log, fuzz round 14's D1)."""
    _badcap(tmp_path, tail="{oops")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", "badcap", "--sarif", "e3.sarif", "--format", "csv")
    assert code == 1
    said = ("badcap/a-chat/wire.jsonl: {}line 2: not a JSON record (Expecting property name enclosed in double quotes: "
            "line 1 column 2 (char 1)) (hint: a wire.jsonl capture has one JSON object per line; found beside the log, "
            "it was left out: --capture FILE gives another, --no-capture ignores found ones)")
    log = ("badcap/a-chat/home/sessions/--home-dev-dsh-runs-a-a-chat-ws--/session-2b096b61-0a34-4da6-abec-4e87161c2c0b/"
           "session.jsonl.zstd")
    # every finding the table counts is listed, the info one too: a-chat's log is read without a capture,
    # the failing finding first, the DSH810 naming the capture found as unreadable (fix W)
    assert [line for line in err if "wire.jsonl" in line] == [
        "warning: " + said.format(""),
        said.format("DSH802 error (fails the gate: fail-on-refusal): "),
        f"{log}: DSH810 info: no capture compared: the capture found beside the log (badcap/a-chat/wire.jsonl) "
        "cannot be read (DSH802) (hint: repair or remove that file (its DSH802 says where it breaks), or pass "
        "--capture FILE)"]
    rows = [line.split(",") for line in out.splitlines() if line.startswith("dsh-audit check,")]
    # issue 15: a-chat's row fails as the run does (exit 1), its capture found unreadable, not "ok" and "none"
    assert [(row[1], row[4], row[5]) for row in rows] == [("FAIL", "3", "unreadable"), ("ok", "9", "9/9 identical")]
    assert (tmp_path / "e3.sarif").is_file()


# -- 2. two reports, one file ----------------------------------------------------------------------

def _same(first: str, second: str) -> str:
    return (f"error: {first} and {second} name the same file: one report would overwrite the other "
            "(hint: give each report its own FILE)")


def test_two_reports_naming_one_file_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    log = str(chat_log(tmp_path / "s" / "session.jsonl", "s"))
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "check", log, "--sarif", "same.out", "--junit", "same.out") == \
        (2, "", [_same("--junit same.out", "--sarif same.out")])
    assert not (tmp_path / "same.out").exists()
    (tmp_path / "same.out").write_text("earlier", "utf-8")
    (tmp_path / "link.out").symlink_to("same.out")
    os.link(tmp_path / "same.out", tmp_path / "hard.out")
    (tmp_path / "sub").mkdir()
    assert invoke(monkeypatch, capsys, "check", log, "--sarif", "same.out", "--json-report", "link.out") == \
        (2, "", [_same("--sarif same.out", "--json-report link.out")])
    code, out, err = invoke(monkeypatch, capsys, "check", log, "--json-report", "./sub/../hard.out", "--markdown",
                            "same.out")
    assert (code, out, err) == (2, "", [_same("--json-report ./sub/../hard.out", "--markdown same.out")])
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "link.out"))
    assert invoke(monkeypatch, capsys, "check", log, "--junit", "hard.out") == \
        (2, "", [_same("--junit hard.out", "GITHUB_STEP_SUMMARY")])
    assert (tmp_path / "same.out").read_text("utf-8") == "earlier"
    # --markdown naming the step summary's file is appended to once, as documented
    code, out, err = invoke(monkeypatch, capsys, "check", log, "--markdown", "same.out", "--sarif", "r.sarif")
    assert (code, err) == (0, ["note: --markdown same.out is GITHUB_STEP_SUMMARY: the summary is appended to it "
                               "once, after the earlier steps' summaries"])
    summary = (tmp_path / "same.out").read_text("utf-8")
    assert summary.startswith("earlier## dsh-audit check") and summary.count("## dsh-audit check") == 1


# -- 3. options named as typed --------------------------------------------------------------------

@pytest.mark.parametrize(("options", "message"), [
    (("--sarif", "-", "--json"), "only one output can go to stdout, not --sarif -, --json "
                                 "(hint: give the others a FILE name)"),
    (("--sarif", "-", "--format", "json"), "only one output can go to stdout, not --sarif -, --format json "
                                           "(hint: give the others a FILE name)"),
    (("--junit", "-", "--format", "markdown"), "only one output can go to stdout, not --junit -, --format markdown "
                                               "(hint: give the others a FILE name)"),
    (("--json", "--json-report", "r.json"), "--json prints on stdout the report --json-report r.json writes to a "
                                            "file (hint: give --json (stdout) or --json-report FILE, not both)"),
    (("--format", "json", "--json-report", "r.json"), "--format json prints on stdout the report --json-report "
                                                      "r.json writes to a file (hint: give --format json (stdout) or "
                                                      "--json-report FILE, not both)"),
])
def test_outputs_are_named_as_typed(options: tuple[str, ...], message: str, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = str(chat_log(tmp_path / "s" / "session.jsonl", "s"))
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "check", log, *options) == (2, "", [f"error: {message}"])


# -- 4. one order, stated as it is -----------------------------------------------------------------

#: The rule, in the words README.md and the helps of requests, breaks and check use.
RULE = ("newest first by the log file's modification time when no PATH is given (equal ones by path; ordering "
        "reads no log), else the PATHS in the order given, each one's logs by path")


def _words(text: str) -> str:
    return " ".join(text.split())


def test_the_order_is_stated_in_the_same_words_everywhere() -> None:
    readme = _words((ROOT / "README.md").read_text("utf-8"))
    assert _words("`requests`, `breaks`, `cache` and `check` (its table and every report of the run) by the log "
                  "file's modification time when no "
                  "PATH is given (equal ones by path; ordering reads no log), else the PATHS in the order given, "
                  "each one's logs by path: a folder's own logs first, then each subfolder's in turn, names in the "
                  "byte order of the file names") in readme
    assert "put the newest last activity first" not in readme
    for name in ("check", "requests", "breaks"):
        command = cli.get_command(click.Context(cli), name)
        assert command is not None
        help_text = _words(command.help or "")
        assert RULE in help_text, name
        assert "as `sessions` lists them" not in help_text and "as `sessions` does" not in help_text, name


def _two_sessions(tmp_path: Path) -> tuple[Path, Path]:
    """Under $DSH_HOME/sessions: ``s-new`` (log times in 2027) written before ``s-old`` (2026)."""
    root = tmp_path / "sessions" / "--p--"
    new = chat_log(root / "s-new" / "session.jsonl", "s-new")
    old = chat_log(root / "s-old" / "session.jsonl", "s-old")
    new.write_text(new.read_text("utf-8").replace("1800000000", "1830000000"), "utf-8")
    os.utime(new, (1577836800, 1577836800))  # touch -d 2020-01-01
    return new, old


def test_with_no_path_check_orders_by_mtime_and_sessions_by_the_logs_own_times(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _two_sessions(tmp_path)
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    code, out, _ = invoke(monkeypatch, capsys, "sessions", "--format", "csv")
    # CSV holds the JSON's rows: no totals row (session 44, issue 14 B1: the table's and Markdown's alone)
    assert code == 0 and [row.split(",")[-1] for row in out.splitlines()[1:]] == ["s-new", "s-old"]
    code, out, _ = invoke(monkeypatch, capsys, "check", "--format", "csv")
    assert code == 0 and [row.split(",")[3] for row in out.splitlines() if row.startswith("dsh-audit check,")] == \
        ["s-old", "s-new"]
    code, out, _ = invoke(monkeypatch, capsys, "requests", "--format", "csv")
    assert code == 0 and list(dict.fromkeys(re.findall(r"/(s-\w+)/session\.jsonl", out))) == ["s-old", "s-new"]


# -- 5. a TOML integer past Python's digit limit ----------------------------------------------------

_TOML_RATE = "providers.deepseek.models.deepseek-v4-flash[0].cache_read"


@pytest.mark.parametrize(("value", "message"), [
    ("1" + "0" * 4999, f"price table key {_TOML_RATE}: a 5000-digit number is above 1e+09, not a price "
                       "(hint: fix this key in the --prices file; "
                       "the Price files section of docs/cache-accounting.md gives the shape)"),
    ("1_" + "0" * 5000, f"price table key {_TOML_RATE}: a 5001-digit number is above 1e+09, not a price "
                        "(hint: fix this key in the --prices file; "
                        "the Price files section of docs/cache-accounting.md gives the shape)"),
    ("1" + "0" * 4999 + '\nx = "', "price table is not valid TOML: Illegal character '\\n' (at line 5, column 6) "
                                   "(hint: give --prices a TOML price table; the Price files section of "
                                   "docs/cache-accounting.md gives the shape)"),
])
def test_a_toml_price_past_the_digit_limit_is_said_in_the_project_words(
        value: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    log = str(chat_log(tmp_path / "s" / "session.jsonl", "s"))
    prices = tmp_path / "big.toml"
    prices.write_text('[[providers.deepseek.models."deepseek-v4-flash"]]\ncache_miss = 1\noutput = 1\n'
                      f"cache_read = {value}\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "usage", log, "--prices", str(prices)) == \
        (2, "", [f"error: {prices}: {message}"])


# -- 6. docs/importers.md shows today's output --------------------------------------------------------

IMPORTERS = ROOT / "tests" / "data" / "importers"


def _console_blocks(text: str) -> dict[str, str]:
    """Each ``$ COLUMNS=N dsh-audit ...`` command of a console block, with the output under it."""
    found: dict[str, str] = {}
    for block in re.findall(r"```console\n(.*?)```\n", text, re.S):
        for command, output in re.findall(r"^\$ (COLUMNS=\d+ dsh-audit [^\n|]*)\n(.*?)(?=^\$ |\Z)", block, re.S | re.M):
            found[command] = output.rstrip("\n") + "\n"
    return found


def test_the_importers_doc_examples_are_todays_output(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # In process, from the folder the doc runs in, at its width: stdout is not a terminal there either.
    blocks = _console_blocks((ROOT / "docs" / "importers.md").read_text("utf-8"))
    assert len(blocks) == 2
    monkeypatch.chdir(IMPORTERS)
    for command, shown in blocks.items():
        columns, _, rest = command.partition(" dsh-audit ")
        monkeypatch.setenv("COLUMNS", columns.split("=")[1])
        code, out, _ = invoke(monkeypatch, capsys, *rest.split())
        assert (code, out.rstrip("\n") + "\n") == (0, shown), command
