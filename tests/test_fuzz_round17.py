"""Fuzz round 17 (issue 15, /tmp/fuzz17.md D1, D2, D4, D7, D8, D10).

D1: a ``*.jsonl`` log in a flat folder that cannot be opened (a FIFO, a dangling link, a symlink
loop, no read permission) was dropped by the folder search without a word: ``check`` passed, ``validate``
and ``sessions`` said nothing. It is a log whose reading is refused, as a ``session.jsonl`` in DSH's layout.

D2: ``validate`` given a log it may not read stopped with click's usage error: the log is read, and
its refusal said as for any log that cannot be opened.

D4: ``$DSH_AUDIT_ADAPTER`` forces a wire format; ``check``'s reports said ``adapter: auto``, and a
value naming no adapter was ignored in silence.

D7: ``redact --check`` compared only the digests of its manifest: a count of -1 or 10**400, format
version 99, a compression or tool no redaction writes passed.

D8: an importer's timestamp at the very end of year 9999 was rounded up out of it (no time shown,
yet sorted newest).

D10: a request INDEX is ASCII digits (``-١`` was read as -1).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from _cli import chat_log, invoke, short_salt

from dsh_audit.importers import record_span

DANGLING = "error: F/session-dangling.jsonl: cannot open: No such file or directory"
FIFO = "error: F/session-fifo.jsonl: is a FIFO, not a log file (hint: only regular files are read)"
LOOP = "error: F/session-loop.jsonl: cannot open: symlink loop"
DSH801_HINT = "(hint: run `dsh-audit validate` on the file for every problem with its line; restore the log from a copy)"


@pytest.fixture
def flat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``F/``, a flat folder of exports: one good log, a FIFO, a dangling link, a symlink loop (each
    named ``*.jsonl``) and a ``.jsonl`` file that is no log; the current folder is ``tmp_path``."""
    folder = tmp_path / "F"
    chat_log(folder / "session-good.jsonl", "s-good")
    os.mkfifo(folder / "session-fifo.jsonl")
    (folder / "session-dangling.jsonl").symlink_to(folder / "nowhere")
    (folder / "session-loop.jsonl").symlink_to("session-loop.jsonl")
    (folder / "notes.jsonl").write_text('{"note": "not a log"}\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return folder


# -- D1: a flat folder's log that cannot be opened is refused, never skipped ------------------------------

def test_check_fails_a_flat_folders_logs_that_cannot_be_opened(flat: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "check", "--no-baseline", "--format", "csv", "F")
    assert (code, out.splitlines(), err) == (2, [  # logs it cannot read: bad input (session 44)
        "table,status,log,session,requests,capture,breaks,hit ratio,cost,unpriced,findings",
        "dsh-audit check,FAIL,F/session-dangling.jsonl,-,0,none,0,,,,1",
        "dsh-audit check,FAIL,F/session-fifo.jsonl,-,0,none,0,,,,1",
        "dsh-audit check,ok,F/session-good.jsonl,s-good,1,none,0,,,1,1",
        "dsh-audit check,FAIL,F/session-loop.jsonl,-,0,none,0,,,,1"], [
        DANGLING, FIFO, LOOP,
        "F/session-dangling.jsonl: DSH801 error (fails the gate: fail-on-refusal): cannot open: No such file or "
        f"directory {DSH801_HINT}",
        "F/session-fifo.jsonl: DSH801 error (fails the gate: fail-on-refusal): is a FIFO, not a log file (hint: only "
        "regular files are read)",
        f"F/session-loop.jsonl: DSH801 error (fails the gate: fail-on-refusal): cannot open: symlink loop {DSH801_HINT}",
        "F/session-good.jsonl: DSH810 info: no capture given or found beside the log (wire.jsonl) (hint: pass "
        "--capture FILE, or put a wire.jsonl holding the log's requests beside it or up to four folders above it)",
        "FAILED: 4 log(s), 1 request(s), 3 error(s), 0 warning(s), 1 info, 3 failing (policy: defaults)"])


def test_validate_and_the_listings_name_a_flat_folders_logs_that_cannot_be_opened(
        flat: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert invoke(monkeypatch, capsys, "validate", "F") == (2, "", [DANGLING])
    code, out, err = invoke(monkeypatch, capsys, "sessions", "--format", "csv", "F")
    assert (code, out.splitlines()[1:], err) == (2, [
        '"1 session(s), newest first",2027-01-15 08:00,-,/home/dev/project,1,8,,0,,1,2027-01-15 08:00,v0,s-good'],
        [DANGLING, FIFO, LOOP])  # tokens, first activity, format; no totals row in CSV (the JSON's rows)
    code, out, err = invoke(monkeypatch, capsys, "requests", "--format", "csv", "F")
    assert (code, out.splitlines()[1:], err) == (2, [
        "requests,F/session-good.jsonl,s-good,0,1/1/1,loop,5 initial,1,,,8,stop"], [DANGLING, FIFO, LOOP])


def test_a_flat_folders_log_without_read_permission_fails_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    chat_log(tmp_path / "F" / "session-good.jsonl", "s-good")
    locked = chat_log(tmp_path / "F" / "session-noread.jsonl", "s-noread")
    locked.chmod(0)
    if os.access(locked, os.R_OK):  # root (DAC override) reads a file of mode 000
        pytest.skip("this user reads a file of mode 000")
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, "check", "--no-baseline", "--format", "csv", "F")
    assert (code, err[0], err[-1]) == (
        1, "error: F/session-noread.jsonl: cannot open: Permission denied",
        "FAILED: 2 log(s), 1 request(s), 1 error(s), 0 warning(s), 1 info, 1 failing (policy: defaults)")


# -- D2: a PATH the user may not read is read, not refused by click ------------------------------------------

def test_validate_reads_a_path_click_would_call_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """click.Path() checks os.access(R_OK) itself ("Path ... is not readable", exit 2, as a usage
    error); the log's own reading says why it cannot be read, in the words every log gets (as root,
    os.access is made to say no: the check is click's alone)."""
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-access")
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, *a, **k: False if os.fspath(path) == str(log)
                        else real(path, mode, *a, **k))
    code, out, err = invoke(monkeypatch, capsys, "validate", str(log))
    assert (code, out, err) == (0, "", ["0 error(s), 0 warning(s), 0 info in 1 file(s)"])


@pytest.mark.parametrize("option", ["--policy", "--baseline"])
def test_check_reads_a_policy_or_baseline_click_would_call_unreadable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], option: str) -> None:
    chat_log(tmp_path / "s" / "session.jsonl", "s-access")
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, "check", "--json-report", "b.json", "s")[0] == 0
    Path("p.toml").write_text("min-cache-hit-ratio = 0\n", encoding="utf-8")
    given = "p.toml" if option == "--policy" else "b.json"
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, *a, **k: False if os.fspath(path) == given
                        else real(path, mode, *a, **k))
    code, out, err = invoke(monkeypatch, capsys, "check", option, given, "s")
    assert (code, err, out.splitlines()[-1].split(" (policy")[0]) == (
        0, [], "PASSED: 1 log(s), 1 request(s), 0 error(s), 0 warning(s), 1 info, 0 failing"
        + (", 1 baselined" if option == "--baseline" else ""))  # read: its finding accepted


# -- D4: $DSH_AUDIT_ADAPTER ------------------------------------------------------------------------------------

def _report_adapter(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, _, err = invoke(monkeypatch, capsys, "check", "--no-baseline", "--json-report", "r.json", "--format",
                          "csv", *args, "s")
    assert (code, err[-1].split(" (policy")[0]) == (
        0, "PASSED: 1 log(s), 1 request(s), 0 error(s), 0 warning(s), 1 info, 0 failing")
    adapter: str = json.loads(Path("r.json").read_text("utf-8"))["policy"]["adapter"]
    return adapter


def test_check_reports_the_adapter_the_environment_forces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    chat_log(tmp_path / "s" / "session.jsonl", "s-env")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_AUDIT_ADAPTER", "anthropic")
    assert _report_adapter(monkeypatch, capsys) == "anthropic"
    # over the policy's key, as --adapter (which sets the variable for its command) is
    Path("pyproject.toml").write_text('[tool.dsh-audit]\nadapter = "openai"\n', encoding="utf-8")
    assert _report_adapter(monkeypatch, capsys) == "anthropic"
    assert _report_adapter(monkeypatch, capsys, "--adapter", "responses") == "responses"
    monkeypatch.setenv("DSH_AUDIT_ADAPTER", "auto")  # forces none: the policy's key stands
    assert _report_adapter(monkeypatch, capsys) == "openai"


@pytest.mark.parametrize(("value", "shown"), [("bogus", "'bogus'"), ("Anthropic", "'Anthropic'"),
                                              (" openai", "' openai'"), ("x\x1b[31m", "'x\\x1b[31m'")])
def test_a_dsh_audit_adapter_naming_no_adapter_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], value: str,
                                                          shown: str) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-env")
    monkeypatch.setenv("DSH_AUDIT_ADAPTER", value)
    assert invoke(monkeypatch, capsys, "sessions", str(log)) == (2, "", [
        f"error: DSH_AUDIT_ADAPTER={shown} names no adapter: expected auto, deepseek, anthropic, openai, responses "
        "(hint: set it to one of them, or unset it to take each request's route from the log)"])


def test_an_empty_dsh_audit_adapter_forces_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    chat_log(tmp_path / "s" / "session.jsonl", "s-env")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_AUDIT_ADAPTER", "")
    assert _report_adapter(monkeypatch, capsys) == "auto"


# -- D7: redact --check reads every field of its manifest --------------------------------------------------------

@pytest.fixture
def bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """``r.jsonl``, a redacted one-turn chat log, and its manifest, in the current folder."""
    log = chat_log(tmp_path / "in" / "session.jsonl", "s-bundle")
    monkeypatch.chdir(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", "r.jsonl", "--salt", "s17")
    assert (code, err) == (0, [short_salt("s17")])
    return tmp_path / "r.jsonl.manifest.json"


def _tamper(manifest: Path, change: str) -> None:
    data = json.loads(manifest.read_text("utf-8"))
    exec(change, {"m": data})  # noqa: S102 - the test's own statements
    manifest.write_text(json.dumps(data), "utf-8")


REFUSED = "error: r.jsonl.manifest.json: not a dsh-audit redaction manifest"
TAMPERED = (" (hint: the manifest was edited or damaged after `dsh-audit redact` wrote it: ask the sender for the "
            "bundle again, or redact the log again with `dsh-audit redact LOG -o FILE`)")


@pytest.mark.parametrize(("change", "why"), [
    ("m['verdicts']['requests']['count'] = -1", ": its requests verdicts' count is not a count from 0 to 9007199254740991"),
    ("m['verdicts']['requests']['count'] = 10**400",
     ": its requests verdicts' count is not a count from 0 to 9007199254740991"),
    ("m['verdicts']['cache']['count'] = True", ": its cache verdicts' count is not a count from 0 to 9007199254740991"),
    ("m['verdicts']['cache']['count'] = 1.0", ": its cache verdicts' count is not a count from 0 to 9007199254740991"),
    ("del m['verdicts']['breaks']['count']", ""),
    ("m['verdicts']['breaks']['digest'] = 7", ": a verdict digest is not a string"),
    ("m['format_version'] = 99", ": its format_version is none of the log formats 0-4"),
    ("m['format_version'] = '0'", ": its format_version is none of the log formats 0-4"),
    ("m['format_version'] = False", ": its format_version is none of the log formats 0-4"),
    ("m['compression'] = 'gzip'", ": its compression is neither zstd nor none"),
    ("m['tool'] = 'other'", ": its tool is not dsh-audit"),
    ("m['log'] = 'a/r.jsonl'", ": its log is not a file name"),
    ("m['log'] = 5", ": its log is not a file name"),
    ("del m['compression']", ""),
    ("m['unrendered'] = {'count': 5, 'requests': ['\\x1b[2J']}",
     ": its unrendered count is not the number of unrendered requests it lists"),
    ("m['unrendered'] = {'count': 1, 'requests': [0]}", ": it records unrendered requests but no diff verdicts"),
    ("m['unrendered'] = {'count': -1}", ": its unrendered count is not a count from 0 to 9007199254740991"),
])
def test_a_manifest_field_no_redaction_writes_is_refused(bundle: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str], change: str,
                                                         why: str) -> None:
    _tamper(bundle, change)
    assert invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl") == (2, "", [REFUSED + why + TAMPERED])


def test_a_manifest_of_another_compression_or_format_version_is_refused(
        bundle: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _tamper(bundle, "m['compression'] = 'zstd'")
    assert invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl") == (2, "", [
        "error: r.jsonl.manifest.json: the manifest records a log of format v0, zstd, and the log is format v0, "
        "plain (hint: check the log the manifest was written with: redact records the format version and "
        "compression of the copy it writes)"])
    _tamper(bundle, "m['compression'] = 'none'; m['format_version'] = 4")
    assert invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl")[2] == [
        "error: r.jsonl.manifest.json: the manifest records a log of format v4, plain, and the log is format v0, "
        "plain (hint: check the log the manifest was written with: redact records the format version and "
        "compression of the copy it writes)"]


def test_a_count_the_rows_disagree_with_is_a_mismatch(bundle: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl") == (0, (
        "requests: match (1 request(s))\nbreaks: match (1 request(s), 0 break(s))\ncache: match (1 request(s))\n"
        "OK: every verdict of r.jsonl matches its manifest\n"), [])
    _tamper(bundle, "m['verdicts']['requests']['count'] = 7")
    assert invoke(monkeypatch, capsys, "redact", "--check", "r.jsonl") == (1, (
        "requests: MISMATCH (1 request(s); the manifest records 7)\nbreaks: match (1 request(s), 0 break(s))\n"
        "cache: match (1 request(s))\nFAILED: requests verdicts differ from the manifest of r.jsonl\n"), [])


# -- D8: the last moment of year 9999 ---------------------------------------------------------------------------

@pytest.mark.parametrize(("last", "span_end"), [
    ("9999-12-31T23:59:59.999999Z", 253402300799.99997),  # rounded down into 9999, not up out of it
    ("9999-12-31T23:59:59.999984Z", 253402300799.99997),
    ("9999-12-31T23:59:59Z", 253402300799.0),
    ("9999-12-31T23:59:59-01:00", 1767607200.0),  # 10000-01-01T00:59:59Z: no time, the first one stands
    ("0001-01-01T00:00:00+01:00", 1767607200.0),  # year 0 in UTC: no time either
])
def test_an_importers_time_at_the_edge_of_the_calendar(tmp_path: Path, last: str, span_end: float) -> None:
    log = tmp_path / "rollout.jsonl"
    records = [{"timestamp": "2026-01-05T10:00:00Z", "type": "session_meta", "payload": {"id": "x"}},
               {"timestamp": last, "type": "event_msg", "payload": {"type": "token_count"}}]
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert record_span(log) == (1767607200.0, span_end)


def test_sessions_shows_the_last_moment_of_9999(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    source = Path(__file__).parent / "data" / "importers" / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"
    lines = source.read_text("utf-8").splitlines()
    last = json.loads(lines[-1])
    last["timestamp"] = "9999-12-31T23:59:59.999999Z"
    log = tmp_path / "cc.jsonl"
    log.write_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n", encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "sessions", "--json", str(log))
    row = json.loads(out)
    assert (code, err, row["first_activity_at"], row["last_activity_at"]) == (
        0, [], "2026-01-05T10:00:00Z", "9999-12-31T23:59:59Z")


# -- D10: INDEX ------------------------------------------------------------------------------------------------

def test_a_negative_index_of_other_digits_is_no_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """``-١`` (an Arabic-Indic one) was moved after ``--`` as a negative index and read as -1."""
    log = chat_log(tmp_path / "s" / "session.jsonl", "s-index")
    assert invoke(monkeypatch, capsys, "show", str(log), "-\u0661") == (
        2, "", ["error: No such option '-\u0661'. (hint: see `dsh-audit show --help`)"])
    code, out, _ = invoke(monkeypatch, capsys, "show", str(log), "-1")
    assert (code, json.loads(out)["index"]) == (0, 0)
