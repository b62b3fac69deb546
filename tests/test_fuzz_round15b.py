"""Fuzz round 15 (issues 14/15, /tmp/fuzz15/REPORT.md D2, D3, D6).

D3: a ``DSH_AUDIT_<COMMAND>_<OPTION>`` variable is its option's default: an option typed on the
command line wins over a variable of an option that asks for something else (it was an error naming
an option that was not on the command line); two such variables are an error naming both; an error
about a value read from a variable names the variable.

D2: redact's recipient commands name the bundle's files when pasted into bash: ``./`` before a path
starting with ``-``, ANSI-C quotes (``$'...'``) for a name a terminal line shows escaped.

D6: ``redact --check`` of a renamed bundle, or of one whose capture is a symbolic link out of its
folder, says so.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _cli import chat_log, invoke, short_salt

from dsh_audit._shell import shell_word

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
A_CHAT = CORPUS / "live" / "a-chat"
needs_corpus = pytest.mark.skipif(not A_CHAT.is_dir(), reason="../shared/corpus is absent")

#: The hint of two options that ask for two things, both read from variables.
VARIABLES_HINT = ("(hint: a DSH_AUDIT_<COMMAND>_<OPTION> variable is that option's default: unset one of them, or "
                  "give the option you mean on the command line)")


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A one-turn chat log, ``s/session.jsonl`` under the current folder (``tmp_path``), and an empty DSH home."""
    chat_log(tmp_path / "s" / "session.jsonl", "s-env")
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return "s/session.jsonl"


# -- D3: --json and --format ---------------------------------------------------------------------------

CSV_HEAD = "table,log,session,#,turn/step/attempt,kind,header,msgs,input,cache read,output,finish"


@pytest.mark.parametrize("variable", ["DSH_AUDIT_REQUESTS_JSON", "DSH_AUDIT_REQUESTS_AS_JSON"])
def test_a_typed_format_wins_over_the_json_variable(log: str, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str], variable: str) -> None:
    monkeypatch.setenv(variable, "1")  # the option's name, and the older spelling after its parameter
    code, out, err = invoke(monkeypatch, capsys, "requests", log, "--format", "csv")
    assert (code, out.splitlines()[0], err) == (0, CSV_HEAD, [])


def test_typed_json_wins_over_the_format_variable(log: str, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    plain = invoke(monkeypatch, capsys, "requests", log, "--json")
    monkeypatch.setenv("DSH_AUDIT_REQUESTS_FORMAT", "csv")
    assert invoke(monkeypatch, capsys, "requests", log, "--json") == plain
    assert plain[0] == 0 and plain[1].startswith('{"path":"s/session.jsonl","index":0,')


def test_check_json_variable_gives_way_to_a_typed_csv(log: str, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The report's case: a CI job exports DSH_AUDIT_CHECK_JSON=1, one step asks for CSV."""
    monkeypatch.setenv("DSH_AUDIT_CHECK_JSON", "1")
    code, out, err = invoke(monkeypatch, capsys, "check", log, "--format", "csv")
    assert (code, out.splitlines()[0]) == (0, "table,status,log,session,requests,capture,breaks,hit ratio,cost,"
                                              "unpriced,findings")
    assert err[-1].startswith("PASSED: 1 log(s), 1 request(s)")  # with CSV the verdict goes to stderr


@pytest.mark.parametrize(("variables", "shown"), [
    ({"DSH_AUDIT_CHECK_JSON": "1", "DSH_AUDIT_CHECK_FORMAT": "csv"},
     "DSH_AUDIT_CHECK_JSON=1 and DSH_AUDIT_CHECK_FORMAT=csv"),
    ({"DSH_AUDIT_CHECK_AS_JSON": "yes", "DSH_AUDIT_CHECK_FORMAT": "markdown"},
     "DSH_AUDIT_CHECK_AS_JSON=yes and DSH_AUDIT_CHECK_FORMAT=markdown")])
def test_two_format_variables_that_differ_are_an_error_naming_both(
        log: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], variables: dict[str, str],
        shown: str) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    assert invoke(monkeypatch, capsys, "check", log) == (2, "", [
        f"error: {shown} ask for two formats {VARIABLES_HINT}"])


def test_typed_json_and_format_are_still_an_error_naming_the_options(
        log: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_REQUESTS_FORMAT", "markdown")  # typed ones win over it, and clash
    assert invoke(monkeypatch, capsys, "requests", log, "--json", "--format", "csv") == (2, "", [
        "error: --json and --format csv ask for two formats (hint: --json is --format json: give one of them)"])


# -- D3: --since and --until ---------------------------------------------------------------------------

LEFT_OUT = "note: {window}: 1 of 1 log(s) with no activity in that window (by the logs' own timestamps) left out"


@pytest.mark.parametrize(("variable", "typed", "window"), [
    (("DSH_AUDIT_USAGE_SINCE", "2030-01-01"), ("--until", "2020-01-01"), "--until 2020-01-02T00:00:00Z"),
    (("DSH_AUDIT_USAGE_UNTIL", "2020-01-01"), ("--since", "2030-01-01"), "--since 2030-01-01T00:00:00Z")])
def test_a_typed_bound_wins_over_a_variable_that_would_empty_the_window(
        log: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], variable: tuple[str, str],
        typed: tuple[str, str], window: str) -> None:
    """The variable's bound is dropped: the window is the typed one alone (the note names it)."""
    monkeypatch.setenv(*variable)
    code, out, err = invoke(monkeypatch, capsys, "usage", log, *typed, "--json")
    assert (code, err) == (0, [LEFT_OUT.format(window=window)])
    assert json.loads(out)["sessions"] == 0


def test_a_variable_bound_that_fits_the_typed_one_is_kept(log: str, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_USAGE_SINCE", "2030-01-01")
    code, _, err = invoke(monkeypatch, capsys, "usage", log, "--until", "2031-01-01", "--json")
    assert (code, err) == (0, [LEFT_OUT.format(window="--since 2030-01-01T00:00:00Z --until 2031-01-02T00:00:00Z")])


def test_two_bound_variables_that_empty_the_window_are_an_error_naming_both(
        log: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_USAGE_SINCE", "2030-01-01")
    monkeypatch.setenv("DSH_AUDIT_USAGE_UNTIL", "2020-01-01")
    assert invoke(monkeypatch, capsys, "usage", log) == (2, "", [
        "error: DSH_AUDIT_USAGE_SINCE=2030-01-01 must be before DSH_AUDIT_USAGE_UNTIL=2020-01-01: --since "
        f"2030-01-01T00:00:00Z --until 2020-01-02T00:00:00Z is an empty window {VARIABLES_HINT}"])


# -- D3: a bad value read from a variable --------------------------------------------------------------

@pytest.mark.parametrize(("command", "variable", "value", "message"), [
    ("check", "DSH_AUDIT_CHECK_FORMAT", "xml",
     "Invalid value for '--format': 'xml' is not one of 'table', 'json', 'csv', 'markdown'."),
    ("check", "DSH_AUDIT_CHECK_NO_BASELINE", "2",
     "Invalid value for '--no-baseline': '2' is not a valid boolean. Recognized values: , 0, 1, f, false, n, no, "
     "off, on, t, true, y, yes"),
    ("usage", "DSH_AUDIT_USAGE_SINCE", "soon",
     "Invalid value for '--since': cannot read --since 'soon' (give a date (2026-11-01), today or yesterday (UTC "
     "days), a date-time (2026-11-01T08:30, or with an offset such as +01:00 or Z; UTC when none) or an age such "
     "as 90s, 30m, 12h, 7d or 2w)"),
    ("requests", "DSH_AUDIT_REQUESTS_JOBS", "-3",
     "Invalid value for '--jobs' / '-j': -3 is not in the range x>=0.")])
def test_an_error_about_a_variables_value_names_the_variable(
        log: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str, variable: str,
        value: str, message: str) -> None:
    monkeypatch.setenv(variable, value)
    assert invoke(monkeypatch, capsys, command, log) == (2, "", [
        f"error: {variable}={value}: {message} (hint: see `dsh-audit {command} --help`)"])


def test_the_same_value_typed_names_only_the_option(log: str, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_CHECK_FORMAT", "csv")  # a good variable the typed option wins over
    assert invoke(monkeypatch, capsys, "check", log, "--format", "xml") == (2, "", [
        "error: Invalid value for '--format': 'xml' is not one of 'table', 'json', 'csv', 'markdown'. "
        "(hint: see `dsh-audit check --help`)"])


# -- D3: --baseline and --no-baseline ------------------------------------------------------------------

@pytest.mark.parametrize(("variable", "typed", "code", "verdict"), [
    (("DSH_AUDIT_CHECK_NO_BASELINE", "1"), ("--baseline", "b.json"), 0, "PASSED: {counts}, 0 failing, 2 baselined"),
    (("DSH_AUDIT_CHECK_BASELINE", "b.json"), ("--no-baseline",), 1, "FAILED: {counts}, 1 failing")])
def test_a_typed_baseline_option_wins_over_the_other_ones_variable(
        log: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], variable: tuple[str, str],
        typed: tuple[str, ...], code: int, verdict: str) -> None:
    Path("pyproject.toml").write_text("[tool.dsh-audit]\nmin-cache-hit-ratio = 0.99\n", "utf-8")  # DSH832 fails
    counts = "1 log(s), 1 request(s), 0 error(s), 1 warning(s), 1 info"
    first = invoke(monkeypatch, capsys, "check", log, "--json-report", "b.json")
    policy = f"(policy: {Path.cwd()}/pyproject.toml)"
    assert (first[0], first[1].splitlines()[-1]) == (1, f"FAILED: {counts}, 1 failing {policy}")
    monkeypatch.setenv(*variable)
    run = invoke(monkeypatch, capsys, "check", log, *typed)
    assert (run[0], run[1].splitlines()[-1], run[2]) == (
        code, f"{verdict.format(counts=counts)} {policy}", [])


def test_two_baseline_variables_are_an_error_naming_both(log: str, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_CHECK_BASELINE", "b.json")
    monkeypatch.setenv("DSH_AUDIT_CHECK_NO_BASELINE", "1")
    assert invoke(monkeypatch, capsys, "check", log) == (2, "", [
        "error: DSH_AUDIT_CHECK_BASELINE=b.json and DSH_AUDIT_CHECK_NO_BASELINE=1 ask for two things "
        f"{VARIABLES_HINT}"])


# -- D2: the recipient's commands ----------------------------------------------------------------------

WORDS = [
    ("shared.jsonl", "shared.jsonl"),
    ("out/a b.jsonl", "'out/a b.jsonl'"),
    ("-shared.jsonl", "./-shared.jsonl"),
    ("--json-report=x.jsonl", "./--json-report=x.jsonl"),
    ("/abs/-x.jsonl", "/abs/-x.jsonl"),
    ("q'uo\\te!.jsonl", "'q'\"'\"'uo\\te!.jsonl'"),
    ("tab\there.jsonl", "$'tab\\x09here.jsonl'"),
    ("new\nline.jsonl", "$'new\\x0aline.jsonl'"),
    ("cr\r.jsonl", "$'cr\\x0d.jsonl'"),
    ("esc\x1b]0;x\x07.jsonl", "$'esc\\x1b]0;x\\x07.jsonl'"),
    ("bidi\u202etxt.jsonl", "$'bidi\\xe2\\x80\\xaetxt.jsonl'"),
    ("zw\u200bsp.jsonl", "$'zw\\xe2\\x80\\x8bsp.jsonl'"),
    ("bad\udcff.jsonl", "$'bad\\xff.jsonl'"),  # a byte that is not UTF-8, as Python holds it
    ("-\t'\\!é.jsonl", "$'./-\\x09\\x27\\x5c\\x21é.jsonl'"),
]


@pytest.mark.parametrize(("name", "word"), WORDS)
def test_a_path_is_one_word_naming_exactly_that_file(name: str, word: str) -> None:
    assert shell_word(name) == word


@pytest.fixture
def achat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The a-chat session and its capture, copied into the current folder (``tmp_path``) as
    ``s.jsonl`` and ``wire.jsonl``."""
    if not A_CHAT.is_dir():
        pytest.skip("../shared/corpus is absent")
    shutil.copy(next((A_CHAT / "session-logs").glob("*.jsonl")), tmp_path / "s.jsonl")
    shutil.copy(A_CHAT / "wire.jsonl", tmp_path / "wire.jsonl")
    (tmp_path / "home").mkdir()
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


#: Output names the report found unpasteable, each with its printed word and its capture's.
HOSTILE = {"-shared.jsonl": ("./-shared.jsonl", "./-shared.jsonl.wire.jsonl"),
           "tab\there\u202e.jsonl": ("$'tab\\x09here\\xe2\\x80\\xae.jsonl'",
                                  "$'tab\\x09here\\xe2\\x80\\xae.jsonl.wire.jsonl'")}


@needs_corpus
@pytest.mark.parametrize("name", list(HOSTILE))
def test_redact_prints_commands_that_name_the_bundle(achat: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str], name: str) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "redact", "s.jsonl", "-o", name, "--salt", "s", "--capture",
                          "wire.jsonl")
    word, capture = HOSTILE[name]
    # session 42: wire.jsonl beside the output is the input, so the capture is OUTPUT.wire.jsonl, which the
    # views do not find: a last line names it for them
    assert (code, out.splitlines()[-3:]) == (0, [f"a recipient verifies it with: dsh-audit redact --check {word}",
                                                 f"and audits it with: dsh-audit check {word} --capture {capture}",
                                                 f"and prices it as the original with: --capture {capture} for each of "
                                                 "breaks --accounting, cache, explain, index, report, requests, "
                                                 "sessions, usage and watch (they do not find that capture by "
                                                 "themselves)"])


def _bash() -> str:
    found = shutil.which("bash")
    if found is None:
        pytest.skip("no bash")
    return found


def test_bash_reads_each_word_as_the_exact_name(tmp_path: Path) -> None:
    """Every name of the table above, printed as a word and read back by bash: its exact bytes."""
    names = [name for name, _ in WORDS]
    words = " ".join(shell_word(name) for name in names)
    said = subprocess.run([_bash(), "-c", f"printf '%s\\0' {words}"], capture_output=True, check=True, cwd=tmp_path)
    assert said.stdout.split(b"\0")[:-1] == [os.fsencode(f"./{name}" if name.startswith("-") else name)
                                             for name in names]


@needs_corpus
def test_the_printed_commands_run_in_bash_name_the_bundles_files(achat: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Each printed command, run by bash, passes the bundle's file names as its arguments, and the
    real ``dsh-audit redact --check`` it prints passes."""
    bash = _bash()
    name = "-a\tb\n\x1b\u202e\u200b'!.jsonl"
    code, out, _ = invoke(monkeypatch, capsys, "redact", "s.jsonl", "-o", name, "--salt", "s", "--capture",
                          "wire.jsonl")
    lines = out.splitlines()[-3:-1]  # the last names the capture for the views that price (session 42)
    assert code == 0 and all(line.isprintable() and line.isascii() for line in out.splitlines()[-3:])
    commands = [line.split(": ", 1)[1] for line in lines]
    echoed = "dsh-audit() { printf '%s\\0' \"$@\"; }; "
    said = [subprocess.run([bash, "-c", echoed + command], capture_output=True, check=True).stdout.split(b"\0")[:-1]
            for command in commands]
    own = os.fsencode(f"./{name}")
    assert said == [[b"redact", b"--check", own], [b"check", own, b"--capture", own + b".wire.jsonl"]]
    assert os.path.isfile(own) and os.path.isfile(own + b".wire.jsonl")
    executable = Path(sys.executable).parent / "dsh-audit"
    if not executable.is_file():
        pytest.skip("no dsh-audit console script beside this Python")
    env = {**os.environ, "PATH": f"{executable.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([bash, "-c", commands[0]], capture_output=True, env=env, cwd=achat)
    assert (done.returncode, done.stdout.decode("utf-8").splitlines()[-1]) == (
        0, "OK: every verdict of -a\\u0009b\\u000a\\u001b\\u202e\\u200b'!.jsonl matches its manifest")


# -- D6: redact --check of a renamed bundle, or of a capture that links out ------------------------------

@pytest.fixture
def bundle(achat: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """``A.jsonl``, the a-chat session redacted with its capture, in the current folder."""
    assert invoke(monkeypatch, capsys, "redact", "s.jsonl", "-o", "A.jsonl", "--salt", "s", "--capture",
                  "wire.jsonl")[0] == 0
    return achat


@needs_corpus
def test_a_renamed_bundle_names_the_capture_its_manifest_records(bundle: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    for suffix in ("", ".manifest.json", ".wire.jsonl"):
        os.rename(f"A.jsonl{suffix}", f"C.jsonl{suffix}")
    assert invoke(monkeypatch, capsys, "redact", "--check", "C.jsonl") == (2, "", [
        "error: C.jsonl.manifest.json: the manifest names the capture 'A.jsonl.wire.jsonl', which is missing, and "
        "'C.jsonl.wire.jsonl' is beside the log: was the bundle renamed from 'A.jsonl'? (hint: rename "
        "'C.jsonl.wire.jsonl' back to 'A.jsonl.wire.jsonl': the manifest records the name of each file of the "
        "bundle, and redact --check reads no other)"])
    os.rename("C.jsonl.wire.jsonl", "A.jsonl.wire.jsonl")  # as the hint says
    code, out, _ = invoke(monkeypatch, capsys, "redact", "--check", "C.jsonl")
    assert (code, out.splitlines()[-1]) == (0, "OK: every verdict of C.jsonl matches its manifest")


@needs_corpus
def test_a_missing_capture_with_no_renamed_one_is_still_not_found(bundle: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    os.remove("A.jsonl.wire.jsonl")
    assert invoke(monkeypatch, capsys, "redact", "--check", "A.jsonl") == (2, "", [
        f"error: {bundle / 'A.jsonl.wire.jsonl'}: capture not found (hint: the manifest's capture is the redacted "
        "capture `dsh-audit redact` wrote beside the log: restore it from the bundle)"])


@needs_corpus
def test_a_capture_that_links_out_of_the_folder_is_said_to(bundle: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    os.remove("A.jsonl.wire.jsonl")
    os.symlink("/dev/zero", "A.jsonl.wire.jsonl")
    assert invoke(monkeypatch, capsys, "redact", "--check", "A.jsonl") == (2, "", [
        "error: A.jsonl.manifest.json: the capture 'A.jsonl.wire.jsonl' is a symbolic link to '/dev/zero', outside "
        "the bundle's folder (hint: put the capture itself beside the log, not a link: the check of a bundle reads "
        "no file outside its folder)"])


@needs_corpus
def test_a_capture_under_a_folder_that_links_out_is_said_to(bundle: Path, tmp_path_factory: pytest.TempPathFactory,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    os.rename("A.jsonl.wire.jsonl", elsewhere / "w.jsonl")
    os.symlink(elsewhere, "sub")
    manifest = Path("A.jsonl.manifest.json")
    manifest.write_text(json.dumps({**json.loads(manifest.read_text("utf-8")), "capture": "sub/w.jsonl"}), "utf-8")
    assert invoke(monkeypatch, capsys, "redact", "--check", "A.jsonl") == (2, "", [
        f"error: A.jsonl.manifest.json: the capture 'sub/w.jsonl' leads outside the bundle's folder through a "
        f"symbolic link, to {str(Path(os.path.realpath(elsewhere)) / 'w.jsonl')!r} (hint: put the capture itself "
        "beside the log, not a link: the check of a bundle reads no file outside its folder)"])


@needs_corpus
def test_a_name_outside_the_folder_is_still_the_manifests(bundle: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    manifest = Path("A.jsonl.manifest.json")
    manifest.write_text(json.dumps({**json.loads(manifest.read_text("utf-8")), "capture": "../w.jsonl"}), "utf-8")
    assert invoke(monkeypatch, capsys, "redact", "--check", "A.jsonl") == (2, "", [
        "error: A.jsonl.manifest.json: the manifest names a capture outside the bundle's folder: '../w.jsonl' (hint: "
        "keep the redacted capture beside the redacted log (redact --capture-output into the folder of -o))"])
