"""Tour 38: a capture found beside a log is optional evidence that means what the same file given
with ``--capture`` means; a torn tail is never silent.

- A found ``wire.jsonl`` that cannot be read: ``check`` checks the log without it (its requests
  count) and makes the capture its finding (``DSH802`` at the capture), with one warning whose hint
  names ``--capture`` and ``--no-capture``; a capture given with ``--capture`` stays the run's error.
- ``--no-capture`` (``$DSH_AUDIT_NO_CAPTURE`` for the command): no capture is looked for.
- A torn tail is said once per log, in the words ``requests`` uses, by every command that reads it.

The damaged capture: the corpus ``b-tools`` session with one body of its ``wire.jsonl`` edited (its
``body_sha256`` no longer matches), beside a copy of the log.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _cli import invoke

from dsh_audit.capture import find_capture

ROOT = Path(__file__).resolve().parent.parent
LIVE = ROOT.parent / "shared" / "corpus" / "live"
CHANGE, TOOLS = LIVE / "c-change", LIVE / "b-tools"
needs_corpus = pytest.mark.skipif(not CHANGE.is_dir() or not TOOLS.is_dir(), reason="../shared/corpus is absent")
#: The warning of the damaged capture, found beside ``mut/session.jsonl`` and left out.
LEFT = ("mut/wire.jsonl: line 6: body does not match its body_sha256 (hint: the capture was edited or re-encoded; "
        "recapture or drop body_sha256; found beside the log, it was left out: --capture FILE gives another, "
        "--no-capture ignores found ones)")
#: The c-change log cut at 60,000 bytes: its line 32 torn.
TORN = "warning: torn.jsonl: torn tail: line 32 has no terminating newline (22664 bytes ignored)"


@pytest.fixture(autouse=True)
def _here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DSH_AUDIT_NO_CAPTURE", raising=False)


def _damaged(tmp_path: Path) -> None:
    """``mut/session.jsonl`` (b-tools) with its ``wire.jsonl`` beside it, line 6's body edited."""
    (tmp_path / "mut").mkdir()
    shutil.copy(next((TOOLS / "session-logs").glob("*.jsonl")), tmp_path / "mut" / "session.jsonl")
    lines = (TOOLS / "wire.jsonl").read_text("utf-8").splitlines(keepends=True)
    assert "You are an AI agent" in lines[5]
    lines[5] = lines[5].replace("You are an AI agent", "You are an XI agent", 1)
    (tmp_path / "mut" / "wire.jsonl").write_text("".join(lines), "utf-8")


def _torn(tmp_path: Path) -> None:
    """``torn.jsonl``: the c-change log's first 60,000 bytes (no capture beside it)."""
    (tmp_path / "torn.jsonl").write_bytes(next((CHANGE / "session-logs").glob("*.jsonl")).read_bytes()[:60000])


@needs_corpus
def test_check_checks_a_log_without_the_found_capture_it_cannot_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The log's 9 requests count (it was "requests 0, capture none"); the capture is the finding."""
    _damaged(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", "mut/session.jsonl", "--json")
    report = json.loads(out)
    assert (code, err) == (1, [f"warning: {LEFT}"])
    (session,) = report["sessions"]
    assert (session["error"], session["requests"], session["capture"], session["capture_verdicts"]) == (
        None, 9, None, {})
    message, hint = LEFT.removeprefix("mut/wire.jsonl: ").removesuffix(")").split(" (hint: ")
    assert [(f["rule"], f["path"], f["message"], f["hint"], f["fails"]) for f in report["findings"]
            if f["rule"] != "DSH810"] == [("DSH802", "mut/wire.jsonl", message, hint, True)]
    code, out, err = invoke(monkeypatch, capsys, "check", "mut/session.jsonl")
    assert (code, err) == (1, [f"warning: {LEFT}"])
    assert out.splitlines()[-1] == ("FAILED: 1 log(s), 9 request(s), 1 error(s), 0 warning(s), 1 info, 1 failing "
                                    "(policy: defaults)")


@needs_corpus
def test_a_damaged_capture_given_stays_the_runs_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    _damaged(tmp_path)
    error = ("error: mut/wire.jsonl: line 6: body does not match its body_sha256 (hint: the capture was edited or "
             "re-encoded; recapture or drop body_sha256)")
    assert invoke(monkeypatch, capsys, "check", "mut/session.jsonl", "--capture", "mut/wire.jsonl") == (2, "", [error])


def test_no_capture_is_found_while_the_no_capture_variable_is_set(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "wire.jsonl").write_text("", "utf-8")
    assert find_capture("s/session.jsonl") == Path("wire.jsonl")
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "0")  # 0: off, as a flag's variable reads it
    assert find_capture("s/session.jsonl") == Path("wire.jsonl")
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")
    assert find_capture("s/session.jsonl") is None


@needs_corpus
@pytest.mark.parametrize("args", [["show", "torn.jsonl", "1"], ["render", "torn.jsonl", "1"],
                                  ["requests", "torn.jsonl"], ["sessions", "torn.jsonl"]])
def test_a_torn_tail_is_said_once(args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    _torn(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, *args)
    assert (code, err) == (0, [TORN])


@needs_corpus
def test_diff_says_a_torn_tail_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    _torn(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, "diff", "torn.jsonl", "--capture", str(CHANGE / "wire.jsonl"))
    assert [line for line in err if "torn" in line] == [TORN]


# -- with the edits to the files of other layers (found.patch): found or given, one meaning ---------

def _beside(tmp_path: Path) -> None:
    """``c/session.jsonl`` (c-change) with its ``wire.jsonl`` one folder up: found, as DSH's layout has it."""
    (tmp_path / "c").mkdir()
    shutil.copy(next((CHANGE / "session-logs").glob("*.jsonl")), tmp_path / "c" / "session.jsonl")
    shutil.copy(CHANGE / "wire.jsonl", tmp_path / "wire.jsonl")


NOTE = "note: 1 request(s) priced from the capture's usage (their log holds none)"


@needs_corpus
def test_a_found_capture_prices_as_the_same_file_given(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The title call, whose usage DSH does not log, is priced from the capture found beside the
    log as from the same file given: every view prints the same, byte for byte."""
    _beside(tmp_path)
    for args in (["cache", "--json"], ["usage", "--json"], ["sessions", "--json"], ["check"],
                 ["breaks", "--cost", "--json"]):
        found = invoke(monkeypatch, capsys, *args, "c/session.jsonl")
        given = invoke(monkeypatch, capsys, *args, "c/session.jsonl", "--capture", "wire.jsonl")
        assert found == given, args
    found_report, given_report = (json.loads(invoke(monkeypatch, capsys, "check", "--json", "c/session.jsonl", *more)[1])
                                  for more in ([], ["--capture", "wire.jsonl"]))
    assert (found_report.pop("notes"), given_report.pop("notes")) == (["c/session.jsonl: capture wire.jsonl"], [])
    assert found_report == given_report  # which capture was found is a note; the rest is the same
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", "c/session.jsonl")
    cost = json.loads(out)["cost"]
    assert (code, err) == (0, [NOTE])
    assert (cost["cost_usd"]["total"], cost["usage_from_capture_requests"], cost["unpriced_requests"],
            cost["cost_complete"]) == (0.01109977, 1, 0, True)
    code, out, err = invoke(monkeypatch, capsys, "check", "c/session.jsonl")
    assert (code, err) == (0, [NOTE])
    row = next(line for line in out.splitlines() if line.startswith("│ ok")).split("│")
    assert row[4:7] + row[8:9] == ["        8 ", " 8/8 identical ", "      5 ", " $0.0111 "]  # was ≥$0.0111
    assert out.splitlines()[-1] == ("PASSED: 1 log(s), 8 request(s), 0 error(s), 0 warning(s), 0 info, 0 failing "
                                    "(policy: defaults)")
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", "--no-capture", "c/session.jsonl")
    assert (code, err, json.loads(out)["cost"]["unpriced_requests"]) == (0, [], 1)


@needs_corpus
@pytest.mark.parametrize("args", [["breaks"], ["breaks", "--cost"], ["cache"], ["usage"], ["usage", "--by", "request"],
                                  ["index", "--db", "i.sqlite"]])
def test_every_command_says_a_torn_tail_once(args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    _torn(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, *args, "torn.jsonl")
    assert [line for line in err if "torn" in line] == [TORN.replace("torn.jsonl", str(tmp_path / "torn.jsonl"))
                                                        if args[0] == "index" else TORN]
    assert code == 0


@needs_corpus
def test_explain_says_a_torn_tail_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    _torn(tmp_path)
    code, _, err = invoke(monkeypatch, capsys, "explain", "torn.jsonl", "1")
    assert (code, err) == (0, [TORN])
    code, _, err = invoke(monkeypatch, capsys, "breaks", "torn.jsonl")
    assert (code, err) == (0, [TORN])


@needs_corpus
@pytest.mark.parametrize("command", ["breaks", "cache", "usage"])
def test_a_found_capture_that_cannot_be_read_is_left_out_with_a_warning(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 0 and the output of the log read alone (``--no-capture``, which says nothing), one
    warning naming the capture's file and line; given with ``--capture``, it is the error (exit 2)."""
    _damaged(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, command, "--json", "mut/session.jsonl")
    assert (code, err) == (0, [f"warning: {LEFT}"])
    assert invoke(monkeypatch, capsys, command, "--json", "--no-capture", "mut/session.jsonl") == (0, out, [])
    monkeypatch.setenv(f"DSH_AUDIT_{command.upper()}_NO_CAPTURE", "1")  # the option's own variable
    assert invoke(monkeypatch, capsys, command, "--json", "mut/session.jsonl") == (0, out, [])
    monkeypatch.delenv(f"DSH_AUDIT_{command.upper()}_NO_CAPTURE")
    code, out, err = invoke(monkeypatch, capsys, command, "--json", "mut/session.jsonl", "--capture", "mut/wire.jsonl")
    assert (code, err) == (2, ["error: mut/wire.jsonl: line 6: body does not match its body_sha256 (hint: the capture "
                               "was edited or re-encoded; recapture or drop body_sha256)"])


@needs_corpus
def test_check_with_no_capture_reads_the_log_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _damaged(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", "mut/session.jsonl", "--no-capture", "--json")
    report = json.loads(out)
    assert (code, err) == (0, [])
    assert [(f["rule"], f["path"]) for f in report["findings"]] == [("DSH810", "mut/session.jsonl")]
    assert report["sessions"][0]["requests"] == 9


@needs_corpus
def test_check_makes_a_torn_tail_its_finding_not_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    _torn(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", "torn.jsonl", "--json")
    assert (code, [line for line in err if "torn" in line]) == (0, [])
    assert [(f["rule"], f["message"]) for f in json.loads(out)["findings"] if f["rule"] == "DSH103"] == [
        ("DSH103", "torn tail: line 32 has no terminating newline (22664 bytes ignored)")]
