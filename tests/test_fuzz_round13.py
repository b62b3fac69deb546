"""Fuzz round 13 (issue 15): ``check --baseline`` and ``[tool.dsh-audit.check] baseline`` given
hostile files, the baselined findings in every report format over hostile log text, the
``GITHUB_STEP_SUMMARY`` target, ``usage --by window`` at the peak window's edges and with hostile
window tables, and capture headers of the wrong JSON type (docs/hostile-inputs.md, "Round 13").

The tests that pass keep an outcome that held. Each defect the round found is a strict xfail (its
reason says what is wrong and where the fix belongs): the lead flips it when the fix lands.
"""

from __future__ import annotations

import json
import os
import signal
import xml.dom.minidom
from datetime import datetime
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from _cli import chat_log, invoke

from dsh_audit.gate import Policy, run_check
from dsh_audit.report import build_report_data
from dsh_audit.testing import LogBuilder

ROOT = Path(__file__).resolve().parent.parent
A_CHAT = ROOT.parent / "shared" / "corpus" / "live" / "a-chat"
needs_corpus = pytest.mark.skipif(not A_CHAT.is_dir(), reason="../shared/corpus is absent")
HINT = "(hint: write the baseline with `dsh-audit check PATHS --json-report FILE` and pass that FILE)"
ESC = "x\x1b]0;PWN\x07\u202e\x9b<b>[red]\r\n::error::y\x7f&amp;]]>"
RAW = "\x1b\x07\x08\x9b\u202e\u2066\x00\r\x7f"  # none of these from a log may reach a report or a terminal
SUMMARY_LINE = "FAILED: 2 log(s), 2 request(s), 0 error(s), 0 warning(s), 2 info, 2 failing (policy: policy.toml)"


@pytest.fixture(autouse=True)
def _quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    monkeypatch.setenv("COLUMNS", "200")


def _clean(*texts: str) -> bool:
    """No raw control, C1, bidi, DEL or NUL character and no ``::`` line start in ``texts``."""
    return not any(c in text for text in texts for c in RAW) and not any(
        line.startswith("::") for text in texts for line in text.splitlines())


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """Two one-turn logs (``s-a`` and a session id of terminal escapes and markup) in ``logs/``,
    a policy whose DSH810 fails, and ``b.json``, the JSON report of a check of both (the cwd)."""
    chat_log(tmp_path / "logs" / "a.jsonl", "s-a")
    chat_log(tmp_path / "logs" / "b\x1b[31m.jsonl", "s-" + ESC)
    (tmp_path / "policy.toml").write_text("require-capture = true\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", "--json-report", "b.json")
    assert (code, out.splitlines()[-1]) == (1, SUMMARY_LINE)
    return json.loads((tmp_path / "b.json").read_text("utf-8"))  # type: ignore[no-any-return]


def _check(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, list[str]]:
    return invoke(monkeypatch, capsys, "check", "logs", "--policy", "policy.toml", *args)


# -- check --baseline: hostile baseline files ----------------------------------------------------

_REPORT = '{"schema_version": 1, "tool": {"name": "dsh-audit"}, '


def test_hostile_baselines_are_one_error_line_before_any_log_is_read(
        gate: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    deep = ": baseline nests arrays or tables too deeply"
    cases: list[tuple[bytes, str]] = [
        (b"[" * 100_000 + b"]" * 100_000, deep),  # nested past the parser
        (b'{"a":' * 3000 + b"1" + b"}" * 3000, deep),
        (b"", ":1: baseline is not valid JSON: Expecting value: line 1 column 1 (char 0)"),
        (b'{"x": "\xe9"}', ": baseline is not UTF-8 text (byte 7)"),
        (b"[]", ": the baseline is not a JSON report of dsh-audit check"),
        ((_REPORT + '"findings": {}}').encode(), ": the baseline is not a JSON report of dsh-audit check"),
        (b'{"schema_version": 1, "tool": "dsh-audit", "findings": []}',
         ": the baseline is not a JSON report of dsh-audit check"),
        # a duplicate key: the last one is read (as JSON.parse reads it)
        ((_REPORT + '"findings": [], "findings": "x"}').encode(), ": the baseline is not a JSON report of dsh-audit check"),
        ((_REPORT + '"findings": [{"rule": "DSH810", "message": 5}]}').encode(),
         ": the baseline is not a JSON report of dsh-audit check (a finding without rule or message)"),
        ((_REPORT + '"findings": [null]}').encode(),
         ": the baseline is not a JSON report of dsh-audit check (a finding without rule or message)"),
    ]
    for k, (data, said) in enumerate(cases):
        (tmp_path / f"bad{k}.json").write_bytes(data)
        code, out, err = _check(monkeypatch, capsys, "--baseline", f"bad{k}.json", "--sarif", "r.sarif")
        assert (k, code, out, err) == (k, 2, "", [f"error: bad{k}.json{said} {HINT}"])
    # a BOM before the report (a Windows editor's) is read past, as JSON parsers may
    (tmp_path / "bom.json").write_bytes(b"\xef\xbb\xbf" + json.dumps(gate).encode())
    assert _check(monkeypatch, capsys, "--baseline", "bom.json")[0] == 0
    assert not (tmp_path / "r.sarif").exists()


def test_baseline_findings_of_the_wrong_shape_accept_nothing_they_do_not_match(
        gate: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Key fields of the wrong type are none, a lone surrogate or an escape in the rule is text: such
    a finding matches none of the run's, and each that no longer occurs is counted, not dropped."""
    first, second = gate["findings"]
    assert first["session_id"] == "s-a" and second["session_id"] == "s-" + ESC
    text = json.dumps(dict(gate, findings=[
        first,  # accepted
        dict(second, message=second["message"] + "\ud800"),
        dict(second, rule="\x1b]0;PWN\x07\u202e"),
        dict(second, request=True, seq="7"),  # read as none: the finding has none, so it matches
        dict(first, session_id=["s-a"]),  # read as none: s-a's finding has one, so it does not
    ]))
    (tmp_path / "odd.json").write_text(text, "utf-8")
    code, out, err = _check(monkeypatch, capsys, "--baseline", "odd.json")
    assert code == 0
    assert out.splitlines()[-1] == ("PASSED: 2 log(s), 2 request(s), 0 error(s), 0 warning(s), 2 info, 0 failing, "
                                    "2 baselined (policy: policy.toml)")
    assert err == ["note: 3 baseline entries no longer occur"]


def test_baselined_findings_keep_hostile_log_text_inert_in_every_report(
        gate: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _check(monkeypatch, capsys, "--baseline", "b.json", "--junit", "r.xml", "--sarif", "r.sarif",
                            "--markdown", "r.md", "--json-report", "r.json")
    assert code == 0
    assert out.splitlines()[-1].endswith("0 failing, 2 baselined (policy: policy.toml)")
    junit, markdown = (tmp_path / "r.xml").read_text("utf-8"), (tmp_path / "r.md").read_text("utf-8")
    sarif, report = (tmp_path / "r.sarif").read_text("utf-8"), (tmp_path / "r.json").read_text("utf-8")
    assert _clean(out, "\n".join(err), junit, markdown, sarif, report)
    xml.dom.minidom.parseString(junit.encode("utf-8"))
    assert junit.count("<failure ") == 0 and junit.count("DSH810 info baselined") == 2
    assert markdown.count("- **DSH810** info (baselined):") == 2 and "<b>" not in markdown
    results = json.loads(sarif)["runs"][0]["results"]
    assert [(r["properties"]["session_id"], r["baselineState"]) for r in results] == [
        ("s-a", "unchanged"), ("s-" + ESC, "unchanged")]
    assert [(f["session_id"], f["fails"], f["baselined"]) for f in json.loads(report)["findings"]] == [
        ("s-a", False, True), ("s-" + ESC, False, True)]


def test_the_policy_baseline_of_a_hostile_name_is_one_error(
        gate: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # at the line that writes it, the table named as the file names it (a plain policy's [check])
    must = ("[check] key 'baseline' must be a file name (hint: a JSON report written by "
            "`dsh-audit check --json-report FILE`)")
    cases = [("[]", f"p.toml:3: {must}"), ("{a = 1}", f"p.toml:3: {must}"), ('""', f"p.toml:3: {must}"),
             ("5", f"p.toml:3: {must}"), ("1e400", f"p.toml:3: {must}"),
             # the policy's baseline: its hint writes the first one (a missing file) or a new one
             (r'"\u001b]0;PWN\u0007\u202e.json"',
              r"./\u001b]0;PWN\u0007\u202e.json: cannot read the baseline: No such file or directory (hint: write the "
              r"first baseline with `dsh-audit check PATHS --json-report $'./\x1b]0;PWN\x07\xe2\x80\xae.json'`, "
              "or check without it with --no-baseline)"),  # a pasteable word (dsh_audit._shell.shell_word)
             ('"."', "./.: is a folder, not a baseline (hint: a folder is not a report file: write one with "
                     "`dsh-audit check PATHS --no-baseline --json-report ././dsh-baseline.json` and name that file in "
                     "the policy's [tool.dsh-audit.check] baseline)"),
             (r'"\ud800"', "p.toml:3: policy file is not valid TOML: Escaped character is not a Unicode scalar value "
                           "(at line 3, column 19) (hint: fix this file, or give another --policy FILE; see the Policy "
                           "section of docs/ci.md)")]
    for value, said in cases:
        (tmp_path / "p.toml").write_text(f"require-capture = true\n[check]\nbaseline = {value}\n", "utf-8")
        code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--policy", "./p.toml" if "./" in said else "p.toml")
        assert (value, code, out, err) == (value, 2, "", [f"error: {said}"])


def test_a_baseline_holding_a_5000_digit_number_is_one_error(
        gate: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "big.json").write_text(_REPORT + '"findings": [], "n": ' + "9" * 5000 + "}", "utf-8")
    code, out, err = _check(monkeypatch, capsys, "--baseline", "big.json")
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith("error: big.json") and "bug" not in err[0]


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_a_baseline_that_is_a_device_is_refused_unread(
        gate: dict[str, Any], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _check(monkeypatch, capsys, "--baseline", "/dev/null")
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith("error: /dev/null: is a character device")


def test_a_policy_baseline_holding_a_nul_is_one_error(
        gate: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.toml").write_text('require-capture = true\n[check]\nbaseline = "a\\u0000b"\n', "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", "logs", "--policy", "p.toml")
    assert (code, out, len(err)) == (2, "", 1)
    assert "NUL" in err[0] and "bug" not in err[0]


# -- GITHUB_STEP_SUMMARY -------------------------------------------------------------------------

def test_a_step_summary_that_cannot_be_appended_to_is_one_warning(
        gate: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "dangling").symlink_to(tmp_path / "missing" / "x")
    # a folder, a missing folder or a dangling link: one line naming GITHUB_STEP_SUMMARY (a warning, or an
    # error before any log is read: log/_outputs.py is being changed to say so as this round ends)
    for target in (tmp_path, tmp_path / "dangling", tmp_path / "no" / "such" / "folder"):
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(target))
        code, out, err = _check(monkeypatch, capsys)
        assert len(err) == 1 and "GITHUB_STEP_SUMMARY" in err[0], (target, err)
        assert (code, err[0].split(":")[0]) in ((1, "warning"), (2, "error")), (target, code, err)
    if os.path.exists("/dev/full"):  # a write that fails is a warning: the verdict stands
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", "/dev/full")
        assert _check(monkeypatch, capsys)[::2] == (1, [
            "warning: cannot append to GITHUB_STEP_SUMMARY (/dev/full): No space left on device"])
    # a name of escapes is a file like any other; the summary appended to it holds them escaped
    odd = tmp_path / "\x1b]0;x\x07sum.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(odd))
    code, out, err = _check(monkeypatch, capsys)
    assert (code, err) == (1, [])
    assert _clean(odd.read_text("utf-8")) and odd.read_text("utf-8").startswith(
        "## dsh-audit check: ❌ failed: 2 log(s) with no capture\n")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", "logs/a.jsonl")
    assert _check(monkeypatch, capsys)[::2] == (2, [
        "error: logs/a.jsonl: the GITHUB_STEP_SUMMARY would overwrite the input logs/a.jsonl "
        "(hint: point GITHUB_STEP_SUMMARY at another file)"])


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not hasattr(signal, "setitimer"), reason="needs FIFOs and timers")
def test_a_step_summary_fifo_nobody_reads_is_not_waited_on(
        gate: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "summary.fifo"
    os.mkfifo(fifo)
    readers: list[int] = []

    def unblock(signum: int, frame: FrameType | None) -> None:
        # check waited 1 s to open the FIFO: give it a reader, so the test ends (the open is retried)
        readers.append(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))

    previous = signal.signal(signal.SIGALRM, unblock)
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(fifo))
        code, out, err = _check(monkeypatch, capsys)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        for fd in readers:
            os.close(fd)
    assert readers == [], "check waited on a FIFO that no program reads"
    assert code == 1 and len(err) == 1 and err[0].startswith("warning: cannot append to GITHUB_STEP_SUMMARY")


# -- usage --by window: the peak window's edges and hostile window tables ------------------------

#: The caveat of a price layer whose holidays are 2027's, for a 2026 request at the peak rate.
UNSURE_2026 = ("the deepseek price table lists no holidays of 2026 (its holiday list covers 2027): requests of 2026 "
               "are priced by the weekday rule alone, a public holiday at the peak rate; give the holidays of 2026 "
               'with --prices FILE (the "holidays" of the deepseek window)')


def _ms(text: str) -> int:
    return int(datetime.fromisoformat(text).timestamp() * 1000)


@pytest.fixture
def windowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """DeepSeek requests one second either side of the packaged peak window's edges (09:00-12:00 and
    14:00-18:00 at +08:00, Monday to Friday from 2026-08-23): Friday 2027-01-15 00:59:59 UTC,
    01:00:01, 03:59:59, 04:00:01, 09:59:59, 10:00:01, Saturday 01:00:01, and Sunday 2026-08-23
    01:00:01 (the first day of the weekday-only window)."""
    times = ["2027-01-15T00:59:59", "2027-01-15T01:00:01", "2027-01-15T03:59:59", "2027-01-15T04:00:01",
             "2027-01-15T09:59:59", "2027-01-15T10:00:01", "2027-01-16T01:00:01", "2026-08-23T01:00:01"]
    b = LogBuilder(session_id="s-w", created_at=_ms(times[0] + "+00:00") - 100, model="deepseek-v4-flash")
    for k, at in enumerate(times):
        b.clock.now = _ms(at + "+00:00")  # the request is sent a few ms later, in the same second
        with b.turn(f"t{k}"), b.step():
            b.assistant("a", usage={"inputTokens": 1000, "outputTokens": 10, "cacheReadTokens": 0})
    b.write_jsonl(tmp_path / "log" / "session.jsonl", packed=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _windows(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str,
             notes: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    code, out, err = invoke(monkeypatch, capsys, "usage", "log", "--by", "request", "--json", *args)
    assert (code, err) == (0, [f"note: {note}" for note in notes])
    return [(row["sent_at"], row["window"]) for row in json.loads(out)["rows"]]


def test_the_peak_window_edges_are_half_open_at_the_window_offset(
        windowed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert _windows(monkeypatch, capsys) == [
        ("2027-01-15T00:59:59Z", "off-peak"), ("2027-01-15T01:00:01Z", "peak"), ("2027-01-15T03:59:59Z", "peak"),
        ("2027-01-15T04:00:01Z", "off-peak"), ("2027-01-15T09:59:59Z", "peak"), ("2027-01-15T10:00:01Z", "off-peak"),
        ("2027-01-16T01:00:01Z", "off-peak"), ("2026-08-23T01:00:01Z", "off-peak")]
    # a window table laid over the packaged one: a holiday, no days, a window from year 1 at +14:00
    # (before the epoch by more than the offset), and one that starts past year 9999 in UTC
    for window, expected in (({"holidays": ["2027-01-15"]}, "off-peak"), ({"days": []}, "off-peak"),
                             ({"peak_hours": ["00:00-24:00"]}, "peak"),
                             ({"from": "0001-01-01T00:00:00+14:00"}, "peak"),
                             ({"from": "9999-12-31T23:59:59-14:00"}, None)):
        body = {"from": "2026-01-01T00:00:00Z", "utc_offset": "+08:00", "peak_hours": ["09:00-18:00"], **window}
        (windowed / "p.json").write_text(json.dumps({"providers": {"deepseek": {"windows": [body]}}}), "utf-8")
        # a holiday list of 2027 alone leaves the 2026 request at 09:00:01 (every day peak) unsure
        notes = (UNSURE_2026,) if "holidays" in window else ()
        rows = _windows(monkeypatch, capsys, "--prices", "p.json", notes=notes)
        # None: the layer's window is not yet in force, the packaged one is replaced: one rate all day
        assert (window, rows[1][1]) == (window, expected or "standard")


def test_a_window_table_of_the_wrong_shape_is_one_error_naming_its_key(
        windowed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    key = "providers.deepseek.windows[0]"
    tail = ("(hint: fix this key in the --prices file; "
            "the Price files section of docs/cache-accounting.md gives the shape)")
    for window, said in (({"holidays": [" 2027-01-15"]}, f'{key}.holidays[0]: " 2027-01-15" is not YYYY-MM-DD'),
                         ({"peak_hours": ["00:00-24:59"]},
                          f'{key}.peak_hours[0]: "00:00-24:59" is not HH:MM-HH:MM (start before end)'),
                         ({"days": ["fri", "Fri"]}, f'{key}.days: ["fri", "Fri"] is not a list of mon, tue, wed, '
                                                    "thu, fri, sat, sun")):
        body = {"from": "2026-01-01T00:00:00Z", "utc_offset": "+08:00", "peak_hours": ["09:00-18:00"], **window}
        (windowed / "p.json").write_text(json.dumps({"providers": {"deepseek": {"windows": [body]}}}), "utf-8")
        code, out, err = invoke(monkeypatch, capsys, "usage", "log", "--by", "window", "--prices", "p.json")
        assert (code, out, err) == (2, "", [f"error: p.json: price table key {said} {tail}"])


def test_a_holiday_written_without_leading_zeros_is_refused_or_kept(
        windowed: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    body = {"from": "2026-01-01T00:00:00Z", "utc_offset": "+08:00", "peak_hours": ["09:00-18:00"],
            "holidays": ["2027-1-15"]}
    (windowed / "p.json").write_text(json.dumps({"providers": {"deepseek": {"windows": [body]}}}), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "usage", "log", "--by", "request", "--json", "--prices", "p.json")
    if code == 2:  # refused, naming the key
        assert len(err) == 1 and "holidays[0]" in err[0]
    else:  # or read as the date it names
        assert (code, json.loads(out)["rows"][1]["window"]) == (0, "off-peak")


# -- capture headers of the wrong JSON type ------------------------------------------------------

@needs_corpus
def test_a_session_header_of_the_wrong_json_type_is_not_a_python_repr(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = next((A_CHAT / "session-logs").glob("*.jsonl"))
    records = [json.loads(line) for line in (A_CHAT / "wire.jsonl").read_text("utf-8").splitlines()]
    sid = records[0]["headers"]["x-deepseek-harness-session-id"]
    for value in (None, [sid]):
        for record in records:
            record["headers"]["x-deepseek-harness-session-id"] = value
        (tmp_path / "wire.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
        code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(tmp_path / "wire.jsonl"))
        assert "session None" not in out and "['" not in out
        assert code in (0, 1, 2) and (code != 2 or (len(err) == 1 and "line 1" in err[0]))


# -- a wire.jsonl beside the log that is not a file ----------------------------------------------

@needs_corpus
def test_a_broken_capture_beside_the_log_is_not_replaced_by_one_above(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "up" / "scen").mkdir(parents=True)
    (tmp_path / "up" / "wire.jsonl").write_bytes((A_CHAT / "wire.jsonl").read_bytes())
    log = next((A_CHAT / "session-logs").glob("*.jsonl"))
    (tmp_path / "up" / "scen" / log.name).write_bytes(log.read_bytes())
    (tmp_path / "up" / "scen" / "wire.jsonl").symlink_to(tmp_path / "gone.jsonl")  # moved away: dangling
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "diff", f"up/scen/{log.name}")
    assert "up/wire.jsonl" not in out + "\n".join(err)
    # exit 2: the capture's error, then (session 43) the note naming the log left uncompared, both of that capture
    assert code in (0, 1, 2) and (code != 2 or (len(err) == 2 and err[0].startswith("error: up/scen/wire.jsonl: ")
                                                and "(up/scen/wire.jsonl) cannot be read" in err[1]))


# -- the HTML report's session links ---------------------------------------------------------------

def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def test_a_log_whose_id_no_url_holds_has_a_link_no_other_log_takes(tmp_path: Path) -> None:
    first = chat_log(tmp_path / "a" / "session.jsonl", "session-1")
    second = chat_log(tmp_path / "b" / "session.jsonl", "SURROGATE")
    second.write_text(second.read_text("utf-8").replace('"SURROGATE"', '"s-\\ud800"'), "utf-8")
    sessions = build_report_data(run_check([str(first), str(second)], policy=Policy()))["sessions"]
    assert [s["session_id"] for s in sessions] == ["session-1", "s-\ud800"]
    # the fragment each log's link opens: its anchor, or #session-K where no URL can hold the anchor
    links = [s["anchor"] if _encodable(s["anchor"]) else f"session-{k}" for k, s in enumerate(sessions)]
    taken = [{s["anchor"], s["session_id"]} for s in sessions]
    assert all(links[k] not in taken[j] for k in range(len(links)) for j in range(len(taken)) if j != k)
