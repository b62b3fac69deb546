"""A record out of seq is said one way by requests, breaks and check (session 40, tour 2).

- The refusal is placed at the record's line and its own seq (``:8 seq 7``), not at the seq
  expected there; DSH's words (``seq gap in committed region at line N-1 (expected E, got S)``)
  are kept, and the hint names ``dsh-audit validate FILE`` and the rules it lists the fault by.
- A seq that is no integer (``"4"``) is said so, not only as ``(expected 4, got 4)``.
- ``check`` lists the fault once: the refusal (DSH801) whose hint names the validation rule, not
  that rule's finding again; with ``fail-on-refusal = false`` the validation finding stays, and
  fails the gate as it did.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _cli import invoke

CHAT = Path(__file__).resolve().parent.parent / "sample_logs" / "chat" / "session.jsonl"

_TAIL = ("no option skips a record out of seq before the last turn/end (--lenient adapts headers only; DSH refuses "
         "the log too): ")
GAP_HINT = _TAIL + ("seqs must run 0, 1, 2, … with no gap or repeat; `dsh-audit validate FILE` lists every seq out "
                    "of place (DSH107, DSH108)")
TYPE_HINT = _TAIL + ("write each seq as an integer, the record's place 0, 1, 2, …; `dsh-audit validate FILE` lists "
                     "every seq that is no integer (DSH111)")
GAP = "corrupt session log: seq gap in committed region at line"
COUNTED = '; "line {}" is DSH\'s count of event lines (the header is not one)'  # DSH's number, labelled


def _swapped(lines: list[str]) -> None:
    lines[7], lines[8] = lines[8], lines[7]  # request/header seq 6 and session/title-llm-request seq 7


def _seq(value: object, at: int = 5) -> Callable[[list[str]], None]:
    def change(lines: list[str]) -> None:
        record = json.loads(lines[at])
        if value is None:
            del record["seq"]
        else:
            record["seq"] = value
        lines[at] = json.dumps(record)
    return change


def _not_an_object(lines: list[str]) -> None:
    lines[5] = "[4]"


# name, change, the refusal's place and words, its hint, the validation finding check no longer lists
CASES = {
    "swap": (_swapped, "8 seq 7", f"{GAP} 7 (expected 6, got 7){COUNTED.format(7)}", GAP_HINT,
             "9: seq 6: DSH108 error (fails the gate: validation-fail-severity): seq 6 comes after seq 7 (line 8): the "
             "two events are written in each other's place (hint: write the events in seq order)"),
    "gap": (lambda lines: lines.pop(5), "6 seq 5", f"{GAP} 5 (expected 4, got 5){COUNTED.format(5)}", GAP_HINT,
            "6: seq 5: DSH107 error (fails the gate: validation-fail-severity): seq gap: expected 4, got 5 (hint: "
            "renumber the events 0, 1, 2, ... without gaps (packed rows count once per member))"),
    "string": (_seq("4"), "6 seq 4", f'{GAP} 5 (expected 4, got "4"): seq is a string, not an integer{COUNTED.format(5)}', TYPE_HINT,
               '6: seq 4: DSH111 error (fails the gate: validation-fail-severity): seq "4" is not a non-negative safe '
               "integer (hint: write Date.now() milliseconds and the position as integers)"),
    "null": (_seq(None), "6 seq 4", f"{GAP} 5 (expected 4, got undefined): the event has no seq{COUNTED.format(5)}", TYPE_HINT,
             "6: seq 4: DSH111 error (fails the gate: validation-fail-severity): event has no seq (hint: write "
             "Date.now() milliseconds and the position as integers)"),
    "boolean": (_seq(True), "6 seq 4", f"{GAP} 5 (expected 4, got true): seq is a boolean, not an integer{COUNTED.format(5)}",
                TYPE_HINT,
                "6: seq 4: DSH111 error (fails the gate: validation-fail-severity): seq true is not a non-negative safe "
                "integer (hint: write Date.now() milliseconds and the position as integers)"),
    "array": (_not_an_object, "6 seq 4", f"{GAP} 5 (expected 4, got undefined): the record is a JSON array{COUNTED.format(5)}",
              _TAIL + "write each event as a JSON object with its seq; `dsh-audit validate FILE` lists every record "
              "that is no event (DSH112)",
              "6: seq 4: DSH112 error (fails the gate: validation-fail-severity): event is not a JSON object (hint: "
              "data is always present (it may be {}))"),
}


def _log(tmp_path: Path, case: str) -> str:
    lines = CHAT.read_text("utf-8").splitlines()
    CASES[case][0](lines)
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return str(path)


@pytest.mark.parametrize("case", sorted(CASES))
def test_requests_breaks_and_check_say_the_fault_once_at_the_records_seq(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str) -> None:
    path = _log(tmp_path, case)
    _, where, message, hint, said = CASES[case]
    for command in ("requests", "breaks"):
        assert invoke(monkeypatch, capsys, command, path) == (
            2, "", [f"error: {path}:{where}: {message} (hint: {hint})"]), command
    code, out, err = invoke(monkeypatch, capsys, "check", path)
    line, seq = where.split(" seq ")
    assert (code, err, out.splitlines()[-2:]) == (1, [], [
        f"{path}:{line}: seq {seq}: DSH801 error (fails the gate: fail-on-refusal): {message} (hint: {hint})",
        "FAILED: 1 log(s), 0 request(s), 1 error(s), 0 warning(s), 0 info, 1 failing (policy: defaults)"])
    # the fault the refusal no longer says twice: validate's finding, listed when refusals pass the gate
    policy = tmp_path / "policy.toml"
    policy.write_text("[tool.dsh-audit]\nfail-on-refusal = false\n", "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", "--policy", str(policy), path)
    assert (code, err, out.splitlines()[-3:]) == (1, [], [  # the failing finding first (fix W)
        f"{path}:{said}", f"{path}:{line}: seq {seq}: DSH801 error: {message} (hint: {hint})",
        f"FAILED: 1 log(s), 0 request(s), 2 error(s), 0 warning(s), 0 info, 1 failing (policy: {policy})"])
