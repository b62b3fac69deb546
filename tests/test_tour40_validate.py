"""Session 40's tour of a DSH port author: gates keep their verdict on a closed pipe, and one fault
in a log is one finding.

Before: ``dsh-audit check LOG | head -1`` exited 0 on a failing run (the group turned a broken
pipe into exit 0), so a CI step under ``set -o pipefail`` passed a failing gate; a swapped
step/end and step/start gave a DSH403 at every later step; a turn written as ``"1"`` gave 14
warnings about nesting and none about its type; a missing turn/end said "expected turn 1, got
turn 2" of the right number; a refused packed row was followed by a DSH107 that advised
renumbering and a DSH310; a BOM was "header line is not valid JSON" alone; ``validate --sarif``
named paths unlike ``check --sarif`` (no ``%SRCROOT%``). Then (fuzz 25): a swapped pair still
gave a follow-on (DSH404 or DSH405: the event refused for its seq was not read as if mended); a
misnumbered turn/start (turn -1) or step/start made every event of its turn or step a DSH404/5; a
v2 header over a v0 body in session.jsonl added DSH206 and DSH216 to DSH114, each the same
mismatch; turn 2**60 was "a JSON number, not an integer".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from _cli import invoke
from _golden import CORPUS

BASE = CORPUS / "live/b-tools/session-logs/session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd.jsonl"
ROOT = Path(__file__).resolve().parent.parent


def _lines() -> list[str]:
    return BASE.read_text(encoding="utf-8").splitlines()


def _log(folder: Path, lines: list[str], *, name: str = "port.jsonl", prefix: str = "") -> Path:
    path = folder / name
    path.write_text(prefix + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def _edited(number: int, change: object) -> list[str]:
    """The b-tools log with physical line ``number`` (1: the header) changed by ``change(value)``."""
    lines = _lines()
    value = json.loads(lines[number - 1])
    change(value)  # type: ignore[operator]
    lines[number - 1] = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return lines


def _swapped(first: int = 32) -> list[str]:
    """Physical lines ``first`` and the one after it swapped (32: step/start of step 2, seq 34, before
    step/end of step 1, seq 33; 8: user/message seq 7 before step/start seq 6)."""
    lines = _lines()
    lines[first - 1], lines[first] = lines[first], lines[first - 1]
    return lines


def _without_turn_end() -> list[str]:
    """Turn 1's turn/end (seq 145, line 104) left out, the seqs after it renumbered: no gap."""
    lines = []
    for number, line in enumerate(_lines(), 1):
        if number == 104:
            continue
        value = json.loads(line)
        for key in ("seq", "seq0"):
            if number > 1 and isinstance(value.get(key), int) and value[key] > 145:
                value[key] -= 1
        if "sourceEventSeqs" in value:
            value["sourceEventSeqs"] = [s - 1 if s > 145 else s for s in value["sourceEventSeqs"]]
        lines.append(json.dumps(value, separators=(",", ":"), ensure_ascii=False))
    return lines


# -- 1. a closed stdout changes no exit code --------------------------------------------------------

def _readerless(folder: Path, *args: str) -> tuple[int, str]:
    """``dsh-audit ARGS`` in a process whose stdout is a pipe no program reads (its reader went
    away before the first line): the exit code and stderr."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "dsh_audit", *args], stdout=write_end, stderr=subprocess.PIPE,
                              cwd=folder, timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    finally:
        os.close(write_end)
    return done.returncode, done.stderr.decode()


def test_a_closed_stdout_keeps_the_gates_verdict(tmp_path: Path) -> None:
    failing = _log(tmp_path, _swapped(), name="swap.jsonl")
    runs = {"check fails": ("check", str(failing), "--sarif", "bp.sarif", "--jobs", "1"),
            "check passes": ("check", str(BASE), "--jobs", "1"),
            "validate fails": ("validate", str(failing)),
            "validate passes": ("validate", str(BASE)),
            # one that runs until stopped is stopped, as SIGTERM stops it (it ran on for ever)
            "watch stops": ("watch", str(ROOT / "sample_logs" / "sessions"), "--since", "10000d")}
    with ThreadPoolExecutor(len(runs)) as pool:
        done = dict(zip(runs, pool.map(lambda args: _readerless(tmp_path, *args), runs.values())))
    assert {name: code for name, (code, _) in done.items()} == {
        "check fails": 1, "check passes": 0, "validate fails": 1, "validate passes": 0, "watch stops": 0}
    for _, err in done.values():  # no traceback, no "Exception ignored ... BrokenPipeError" at exit
        assert "Traceback" not in err and "Exception" not in err and "Broken" not in err
    assert done["validate fails"][1] == "1 error(s), 0 warning(s), 0 info in 1 file(s): DSH108 x1\n"
    assert done["validate passes"][1] == "0 error(s), 0 warning(s), 0 info in 1 file(s)\n"
    assert json.loads((tmp_path / "bp.sarif").read_text(encoding="utf-8"))["runs"][0]["results"]  # the run went on
    assert done["watch stops"][1].endswith("watched 8 session(s): 28 request(s), 8 break(s), ≥$0.0029 (3 unpriced)\n")


# -- 2. one fault, one finding ---------------------------------------------------------------------------

def _validated(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, list[str]]:
    code, out, err = invoke(monkeypatch, capsys, "validate", str(path))
    return code, [line.removeprefix(f"{path}:") for line in out.splitlines()]


CASES = {
    "swapped step/end and step/start": (_swapped, "", 1, [  # read in seq order: no DSH404
        "33: seq 33: DSH108 error: seq 33 comes after seq 34 (line 32): the two events are written in each other's "
        "place (write the events in seq order)"]),
    "seq repeated": (lambda: _edited(33, lambda v: v.__setitem__("seq", 33)), "", 1, [  # no gap at the seq after it
        "33: seq 33: DSH108 error: seq 33 repeats or goes backwards (expected 34) (each event gets the next seq; a "
        "packed row's members take seq0, seq0+1, ...)",
        "35: seq 36: DSH405 warning: assistant/chunk names turn 1/step 2 but no step of turn 1 is open (write turn "
        "and step of the step they belong to)"]),
    "swapped step/start and user/message": (lambda: _swapped(8), "", 1, [  # no DSH405 at the step's chunks
        "9: seq 6: DSH108 error: seq 6 comes after seq 7 (line 8): the two events are written in each other's place "
        "(write the events in seq order)"]),
    "turn numbered -1": (lambda: _edited(6, lambda v: v["data"].__setitem__("turn", -1)), "", 0, [
        "6: seq 4: DSH401 warning: turn/start expected turn 1, got turn -1 (number each turn one above the "
        "previous)"]),
    "turn past 2**53": (lambda: _edited(6, lambda v: v["data"].__setitem__("turn", 2**60)), "", 0, [
        "6: seq 4: DSH401 warning: turn/start has turn 1152921504606846976, an integer past 2**53, not a safe "
        "integer, which DSH refuses: the spec's turn/start data is {turn}, the turn's number (turn 1 is next) "
        '(write "turn": 1)']),
    # DSH206 (the name is v0) and DSH216 (no isSeeded) would say again that the header is not v0
    "v2 header over a v0 body": (lambda: _edited(1, lambda v: v.__setitem__("version", 2)), "", 1, [
        "15: seq 13: DSH114 error: header version 2 does not fit this record: an assistant/chunk event is written "
        "only by version 0 or 1 (v2+ keeps the chunks in data.stream) (fix the header's version (and the file name's "
        "generation) to the version the body is written in)"]),
    # session 42: a v4 header over a v0 body kept DSH216 (a v0-2 record): the file name says v0, which owes no isSeeded
    "v4 header over a v0 body": (lambda: _edited(1, lambda v: v.__setitem__("version", 4)), "", 1, [
        "10: seq 8: DSH114 error: header version 4 does not fit this record: a user/message whose source kind is "
        "plugin is written only by version 0-3 (v4 names the producer as the kind) (fix the header's version (and "
        "the file name's generation) to the version the body is written in)"]),
    "turn written as a string": (lambda: _edited(6, lambda v: v["data"].__setitem__("turn", "1")), "", 0, [
        '6: seq 4: DSH401 warning: turn/start has turn "1", a JSON string, not an integer: the spec\'s turn/start '
        'data is {turn}, the turn\'s number (turn 1 is next) (write "turn": 1, a JSON number)']),
    "turn/end missing": (_without_turn_end, "", 0, [
        "105: seq 146: DSH402 warning: turn/start names turn 2 while turn 1 is still open: turn 1 was never ended "
        "(write turn/end of turn 1 before the next turn/start)"]),
    "bad packed row": (lambda: _edited(22, lambda v: v["data"].__setitem__("dt", [0, 0])), "", 1, [
        "22: seq 20: DSH105 error: malformed tool-call-chunks storage row: dt length 2 does not match 4 members (a "
        "row is exactly {type, seq0, time0, data} with dt one shorter than its members)"]),
    # its step/start alone: said once; its events and the steps after it name step 2, and are not
    "one step misnumbered": (lambda: _edited(33, lambda v: v["data"].__setitem__("step", 5)), "", 0, [
        "33: seq 34: DSH403 warning: step/start expected step 2 in turn 1, got step 5 (number each step one above "
        "the previous in its turn)"]),
    "byte order mark": (_lines, "\ufeff", 1, [
        "1: DSH201 error: header line is not valid JSON: it starts with a UTF-8 byte order mark, and DSH writes none "
        "(save the file without a byte order mark)"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_fault_is_one_finding(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str], case: str) -> None:
    make, prefix, code, lines = CASES[case]
    name = "session.jsonl" if case.startswith(("v2 header", "v4 header")) else "port.jsonl"  # v0's file name
    assert _validated(monkeypatch, capsys, _log(tmp_path, make(), prefix=prefix, name=name)) == (code, lines)


# -- 3. one SARIF rule for check and validate -----------------------------------------------------------

def test_validate_sarif_names_paths_as_check_sarif_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    log = _log(tmp_path, _swapped(), name="swap.jsonl")
    monkeypatch.chdir(tmp_path)

    def run(command: str) -> dict[str, object]:
        code, out, _ = invoke(monkeypatch, capsys, command, "swap.jsonl", "--sarif", "-")
        assert code == 1
        return json.loads(out)["runs"][0]  # type: ignore[no-any-return]

    validated, checked = run("validate"), run("check")
    base = {"%SRCROOT%": {"uri": tmp_path.resolve().as_uri() + "/"}}
    for run_, line in ((validated, 33), (checked, 32)):  # DSH108 of the swapped pair; DSH801 of DSH's refusal
        where = {"artifactLocation": {"uri": "swap.jsonl", "uriBaseId": "%SRCROOT%"}, "region": {"startLine": line}}
        assert run_["results"][0]["locations"][0]["physicalLocation"] == where  # type: ignore[index]
        assert (run_["originalUriBaseIds"], run_["invocations"]) == (base, [{"executionSuccessful": True}])
    assert log.exists()
