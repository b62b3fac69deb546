"""``validate`` for the engineer of a third-party DSH port (session 31's user tour).

Before: messages showed Python (``time None is not a safe integer``, ``ignorable is False``,
``'x'``) where a field was missing, null or not a number; a step/start with no turn got the
nesting hint "write step/end before the next step/start"; a DSH310 over two equal-looking spans
(``[24..35] (12)`` against ``[24..35] (11)``) hid which seq differed; a v1 header over a v0 body
(which DSH 0.1.0-rc.8 refuses) and a tool/call whose arguments is an object validated clean;
``--ignore`` did not say what it hid; and a Claude Code or Codex file was a DSH202 error finding
(exit 1) where ``check`` refuses it with exit 2.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.testing import LogBuilder, ToolCall

from _cli import invoke

DATA = Path(__file__).resolve().parent / "data" / "importers"
CODEX = DATA / "codex" / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"

Records = list[dict[str, Any]]


def _records() -> Records:
    """A one-turn log, one record per line: line 1 the header, then seq N on line N + 2.

    seq 1 turn/start, 3 step/start 1, 7-18 the first attempt's chunks (17 usage), 19 its
    assistant/message (tool call c1), 20 tool/call, 21 tool/result, 22 step/end, 23 step/start 2,
    24-35 the second attempt's chunks (25-32 text deltas), 36 its assistant/message, 38 turn/end.
    """
    b = LogBuilder(session_id="s-tour")
    with b.turn("Hi"):
        with b.step():
            b.assistant("Hello there, this is a longer answer text",
                        tool_calls=[ToolCall("bash", {"command": "ls"}, id="c1")])
            b.tool_result("c1", "ok")
        with b.step():
            b.assistant("Done, all is well and fine here", delta_size=4)
    return [json.loads(line) for line in b.lines(packed=False)]


def _write(tmp_path: Path, change: Callable[[Records], None], name: str = "session.jsonl") -> Path:
    records = _records()
    change(records)
    path = tmp_path / name
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def _at(records: Records, seq: int) -> dict[str, Any]:
    return records[seq + 1]


def _validate(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
              *args: str) -> tuple[int, list[str], list[str]]:
    code, out, err = invoke(monkeypatch, capsys, "validate", *args)
    return code, out.splitlines(), err


def test_the_base_log_is_clean(tmp_path, monkeypatch, capsys):
    path = _write(tmp_path, lambda records: None)
    assert _validate(monkeypatch, capsys, str(path)) == (0, [], ["0 error(s), 0 warning(s), 0 info in 1 file(s)"])


# -- 1. values speak JSON; a missing field reads as missing -------------------------------------------


def test_missing_null_and_other_values_read_as_json(tmp_path, monkeypatch, capsys):
    def change(records: Records) -> None:
        del records[0]["createdAt"]
        records[0]["id"] = True
        del _at(records, 1)["time"]
        _at(records, 2)["time"] = None
        _at(records, 3)["time"] = "x"
        _at(records, 4)["ignorable"] = False
        for seq in (17, 19):  # the usage chunk and its message, alike (no DSH704)
            usage = _at(records, seq)["data"]["chunk"]["usage"] if seq == 17 else _at(records, seq)["data"]["usage"]
            del usage["outputTokens"]
            usage["inputTokens"] = None

    path = _write(tmp_path, change)
    code, out, err = _validate(monkeypatch, capsys, str(path))
    assert (code, out) == (1, [
        f"{path}:1: DSH207 error: header id true is not a string (write the session id as a string)",
        f"{path}:1: DSH208 error: header has no createdAt (write Date.now() at creation)",
        f"{path}:3: seq 1: DSH111 error: event has no time (write Date.now() milliseconds and the position as "
        "integers)",
        f"{path}:4: seq 2: DSH111 error: time null is not a safe integer (write Date.now() milliseconds and the "
        "position as integers)",
        f'{path}:5: seq 3: DSH111 error: time "x" is not a safe integer (write Date.now() milliseconds and the '
        "position as integers)",
        f"{path}:6: seq 4: DSH113 error: ignorable is false, not true (drop the key instead of writing false)",
        f"{path}:19: seq 17: DSH701 warning: usage inputTokens null is not a non-negative safe integer (≤ 2^53 − 1) (write the "
        "provider's counts as integers)",
        f"{path}:19: seq 17: DSH701 warning: usage has no outputTokens (write the provider's counts as integers)",
        f"{path}:21: seq 19: DSH701 warning: usage inputTokens null is not a non-negative safe integer (≤ 2^53 − 1) (write the "
        "provider's counts as integers)",
        f"{path}:21: seq 19: DSH701 warning: usage has no outputTokens (write the provider's counts as integers)"])


def test_a_tool_call_with_no_call_id_says_so(tmp_path, monkeypatch, capsys):
    path = _write(tmp_path, lambda records: _at(records, 20)["data"].pop("callId"))
    code, out, err = _validate(monkeypatch, capsys, str(path), "--rule", "DSH414")
    assert (code, out) == (0, [
        f"{path}:22: seq 20: DSH414 warning: tool/call has no callId, so it answers no tool-call block of the "
        "step's assistant message (log only calls the model made)"])


def test_call_ids_and_lineage_values_are_json(tmp_path, monkeypatch, capsys):
    def change(records: Records) -> None:
        _at(records, 20)["data"]["callId"] = ["c1"]
        records[0]["origin"] = "subagent"
        records[0]["delegationDepth"] = 1

    path = _write(tmp_path, change)
    code, out, err = _validate(monkeypatch, capsys, str(path), "--rule", "DSH414", "--rule", "DSH601")
    assert (code, out) == (0, [
        f"{path}:1: DSH601 warning: subagent header needs parentSession and delegationDepth >= 1 (no parentSession, "
        "delegationDepth 1) (write parentSession, seedLength, origin and delegationDepth together)",
        f'{path}:22: seq 20: DSH414 warning: tool/call ["c1"] is not a tool-call block of the step\'s assistant '
        "message (log only calls the model made)"])


# -- 2. a missing turn or step is a missing field, not a nesting error -------------------------------


def test_a_step_start_with_no_turn_says_the_field_is_missing(tmp_path, monkeypatch, capsys):
    path = _write(tmp_path, lambda records: _at(records, 23)["data"].pop("turn"))
    code, out, err = _validate(monkeypatch, capsys, str(path))
    assert (code, out) == (0, [
        f"{path}:25: seq 23: DSH404 warning: step/start has no turn field: the spec's step/start data is "
        '{turn, step}, naming the open turn 1 (write "turn": 1)'])


def test_a_step_start_with_no_step_and_a_turn_start_with_no_turn(tmp_path, monkeypatch, capsys):
    def change(records: Records) -> None:
        _at(records, 1)["data"].pop("turn")
        _at(records, 23)["data"].pop("step")

    path = _write(tmp_path, change)
    code, out, err = _validate(monkeypatch, capsys, str(path), "--rule", "DSH401", "--rule", "DSH403")
    assert (code, out) == (0, [
        f"{path}:3: seq 1: DSH401 warning: turn/start has no turn field: the spec's turn/start data is {{turn}}, "
        'the turn\'s number (turn 1 is next) (write "turn": 1)',
        f"{path}:25: seq 23: DSH403 warning: step/start has no step field: the spec's step/start data is "
        '{turn, step}, steps numbered from 1 in each turn (step 2 is next) (write "step": 2)'])


# -- 3. equal-looking spans name the seqs that differ ------------------------------------------------


def test_swapped_seqs_name_the_seq_the_spans_hide(tmp_path, monkeypatch, capsys):
    def change(records: Records) -> None:
        first, second = _at(records, 27), _at(records, 28)
        first["seq"], second["seq"] = 28, 27

    path = _write(tmp_path, change)
    code, out, err = _validate(monkeypatch, capsys, str(path))
    assert (code, out) == (1, [
        # (session 40: the swapped pair is one finding, not a gap and a repeat; and the chunk DSH refuses
        # for its seq is read in seq order, so no DSH310 says "27 is not a chunk of the attempt" of it:
        # the spans' hidden seq is tests/test_validate_rows31.py's and test_validate_fastpath.py's)
        f"{path}:30: seq 27: DSH108 error: seq 27 comes after seq 28 (line 29): the two events are written in each "
        "other's place (write the events in seq order)"])


# -- 4. what validate did not flag, and what --ignore hid ---------------------------------------------------------------------


def test_a_v1_header_over_a_v0_body_is_noted_with_max_version_0(tmp_path, monkeypatch, capsys):
    path = _write(tmp_path, lambda records: records[0].update(version=1), name="session.v1.jsonl")
    code, out, err = _validate(monkeypatch, capsys, str(path))
    assert (code, out, err) == (0, [
        f"{path}:1: DSH217 info: log format v1 was written only by development builds, never by a release: "
        "DSH 0.1.0-rc.8 reads only v0 and refuses this log (a log meant for DSH 0.1.0-rc.8 writes \"version\": 0; "
        "run validate --max-version 0 to check a log as rc.8 reads it)"],
        ["0 error(s), 0 warning(s), 1 info in 1 file(s): DSH217 x1"])
    code, out, err = _validate(monkeypatch, capsys, str(path), "--max-version", "0")
    assert (code, [line.split(": ")[1] for line in out]) == (1, ["DSH204 error"])


def test_tool_call_arguments_as_an_object_is_a_finding(tmp_path, monkeypatch, capsys):
    def change(records: Records) -> None:
        _at(records, 20)["data"]["arguments"] = {"command": "ls"}

    path = _write(tmp_path, change)
    code, out, err = _validate(monkeypatch, capsys, str(path), "--strict")
    assert (code, out) == (1, [
        f'{path}:22: seq 20: DSH415 warning: tool/call arguments is a JSON object, not a string: {{"command":"ls"}} '
        "(write arguments as the JSON text the model sent (JSON.stringify of an object), not the object)"])
    path = _write(tmp_path, lambda records: _at(records, 20)["data"].pop("arguments"))
    code, out, err = _validate(monkeypatch, capsys, str(path))
    assert (code, [line.split(": ", 1)[1] for line in out]) == (0, [
        "seq 20: DSH415 warning: tool/call has no arguments (write arguments as the JSON text the model sent "
        "(JSON.stringify of an object), not the object)"])


def _three_findings(records: Records) -> None:
    del _at(records, 1)["time"]  # DSH111 error
    _at(records, 20)["data"]["arguments"] = {}  # DSH415 warning
    _at(records, 5)["data"]["reason"] = "restart"  # DSH224 warning


def test_ignore_says_how_many_findings_it_hid(tmp_path, monkeypatch, capsys):
    path = _write(tmp_path, _three_findings)
    code, out, err = _validate(monkeypatch, capsys, str(path), "--ignore", "DSH4", "--ignore", "DSH111")
    assert (code, out, err) == (0, [
        f'{path}:7: seq 5: DSH224 warning: request/header reason "restart" is not initial, resume or change '
        "(write the reason the loop had)"],
        ["0 error(s), 1 warning(s), 0 info in 1 file(s): DSH224 x1", "--ignore hid 2 finding(s): DSH111 x1, DSH415 x1"])
    code, out, err = _validate(monkeypatch, capsys, str(path), "--json", "--rule", "DSH2", "--rule", "DSH4",
                               "--ignore", "DSH41")
    assert (code, [json.loads(line) for line in out], err) == (0, [
        {"rule": "DSH224", "severity": "warning", "message": 'request/header reason "restart" is not initial, resume '
         "or change", "path": str(path), "line": 7, "seq": 5, "hint": "write the reason the loop had"},
        {"type": "summary", "passed": True, "counts": {"error": 0, "warning": 1, "info": 0}, "files": 1,
         "rules": {"DSH224": 1}, "ignored": 1}], [])
    code, out, err = _validate(monkeypatch, capsys, str(path), "--rule", "DSH2", "--ignore", "DSH3")
    assert (code, len(out), err[1:]) == (0, 1, ["--ignore hid 0 finding(s)"])


def test_without_ignore_no_count_is_added(tmp_path, monkeypatch, capsys):
    path = _write(tmp_path, _three_findings)
    code, out, err = _validate(monkeypatch, capsys, str(path), "--json", "--rule", "DSH111")
    assert (code, json.loads(out[-1]), err) == (1, {
        "type": "summary", "passed": False, "counts": {"error": 1, "warning": 0, "info": 0}, "files": 1,
        "rules": {"DSH111": 1}}, [])


# -- 5. another agent's log is refused as check refuses it --------------------------------------------


@pytest.mark.parametrize("args", [[], ["--json"], ["--rule", "DSH4"], ["--ignore", "DSH2"]],
                         ids=["text", "json", "rule", "ignore"])
def test_a_codex_log_exits_2_naming_what_reads_it(args: list[str], tmp_path, monkeypatch, capsys):
    clean = _write(tmp_path, lambda records: None)
    code, out, err = invoke(monkeypatch, capsys, "validate", *args, str(clean), str(CODEX))
    refused = (f"error: {CODEX}:1: this is a codex session, not a DSH log (hint: sessions, requests, show, render, "
               "cache, usage, diff and index import it; validate, breaks, explain, check, report, redact and watch "
               "read DSH logs only)")
    # the refusal does not hide the other log's report: its summary (the clean log's), exit 2
    if args == ["--json"]:
        assert (code, [json.loads(line) for line in out.splitlines()], err) == (2, [
            {"type": "summary", "passed": False, "counts": {"error": 0, "warning": 0, "info": 0}, "files": 1,
             "rules": {}}], [refused])
    else:
        assert (code, out, err) == (2, "", [refused, "0 error(s), 0 warning(s), 0 info in 1 file(s)",
                                            *(["--ignore hid 0 finding(s)"] if "--ignore" in args else [])])
    code, out, err = invoke(monkeypatch, capsys, "check", str(CODEX))
    assert (code, out, len(err)) == (2, "", 1)  # check refuses it alike
    assert "this is a codex session, not a DSH log" in err[0]


def test_usage_counts_names_no_requirement_dsh_lacks():
    """Session 42: DSH701 was "usage-required", yet a log that logs no usage passes (DSH writes none
    when the provider reported none: ``usage?``); the rule checks the counts of a usage logged."""
    from dsh_audit.validate import RULES

    assert (RULES["DSH701"].name, RULES["DSH701"].summary) == (
        "usage-counts", "A logged usage is an object whose inputTokens and outputTokens are non-negative safe "
        "integers (≤ 2^53 − 1). A step or attempt may log none: DSH writes no usage when the provider reported none, "
        "so a missing usage is no finding (requests shows its counts as ?).")
