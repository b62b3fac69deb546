"""A header field written as a value of the wrong type is named in the refusal (session 40, tour 2).

``requests`` and ``breaks`` said only DSH's "first line is not a session header" where validate
names the field (DSH203 ``version "0"``, DSH208 ``createdAt "1796209334504"``): the refusal now
names the field, its JSON type and value after DSH's words, and its hint the rule validate lists
it by; ``check`` lists the fault once, as the refusal (DSH801).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import invoke

CHAT = Path(__file__).resolve().parent.parent / "sample_logs" / "chat" / "session.jsonl"
NOT_HEADER = "corrupt session log: first line is not a session header"
VALIDATE = "`dsh-audit validate FILE` lists every header field DSH refuses"

# field, value, what the refusal says after DSH's words, its hint
CASES = {
    "version": ({"version": "0"}, 'version "0" is a string, not a number', f"{VALIDATE} (DSH203)"),
    "createdAt": ({"createdAt": "1796209334504"}, 'createdAt "1796209334504" is a string, not an integer',
                  f"{VALIDATE} (DSH208)"),
    "id-and-depth": ({"id": 7, "delegationDepth": [0]},
                     "id 7 is a number, not a string; delegationDepth [0] is an array, not an integer",
                     f"{VALIDATE} (DSH207, DSH209)"),
    # session 44: a value is cut (20 characters, the project's "…"), the field named once, the hint short
    "agentPreset": ({"agentPreset": {"name": "x\u001b[2J", "tools": ["read"]}},
                    'agentPreset {"name":"x\\u001b[2J… is an object, not a string', f"{VALIDATE} (DSH211)"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_mistyped_header_field_is_named_by_every_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str], case: str) -> None:
    change, fault, hint = CASES[case]
    lines = CHAT.read_text("utf-8").splitlines()
    lines[0] = json.dumps({**json.loads(lines[0]), **change})
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    for command in ("requests", "breaks"):
        assert invoke(monkeypatch, capsys, command, str(path)) == (2, "", [
            f"error: {path}:1: {NOT_HEADER}: {fault} (hint: {hint}; nor is it a session the claude-code or codex "
            "importer recognises)"]), command
    code, out, err = invoke(monkeypatch, capsys, "check", str(path))
    assert (code, err, out.splitlines()[-2:]) == (1, [], [
        f"{path}:1: DSH801 error (fails the gate: fail-on-refusal): {NOT_HEADER}: {fault} (hint: {hint})",
        "FAILED: 1 log(s), 0 request(s), 1 error(s), 0 warning(s), 0 info, 1 failing (policy: defaults)"])
