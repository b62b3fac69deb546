"""Issue 15 (session 37): a Codex rollout or Claude Code transcript every line of which is damaged
is named as what it is by ``check`` and ``validate`` too, in the words ``requests`` says it (not as
a "corrupt session log"), keeping their rule ids and exit codes; a line damaged by a byte that is
not UTF-8 is said as the DSH reader says it ("not valid UTF-8 (byte N)"). The inputs are the real
importer fixtures with every line damaged."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from _cli import invoke

DATA = Path(__file__).parent / "data" / "importers"
CODEX = DATA / "codex" / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
CLAUDE = DATA / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"
CODEX_HINT = "nothing in it can be imported; read an intact copy of the rollout: Codex keeps them under ~/.codex/sessions"
CLAUDE_HINT = ("nothing in it can be imported; read an intact copy of the transcript: Claude Code keeps them under "
               "~/.claude/projects")


def _cut(number: int, line: bytes) -> bytes:
    return line[: len(line) // 2]  # a record cut short: not JSON


def _not_utf8(number: int, line: bytes) -> bytes:
    return line[:20] + b"\xff" + line[20:]  # byte 20 is no UTF-8 (inside the timestamp's value)


def _first_not_utf8(number: int, line: bytes) -> bytes:
    return _not_utf8(number, line) if number == 1 else _cut(number, line)


#: name -> (fixture, how each line is damaged, the rule validate and check find, message, hint)
CASES: dict[str, tuple[Path, Callable[[int, bytes], bytes], str, str, str]] = {
    "codex-cut": (CODEX, _cut, "DSH201", "every record of this Codex rollout is damaged: 24 line(s) not JSON, the "
                  "first at line 1", CODEX_HINT),
    "claude-cut": (CLAUDE, _cut, "DSH201", "every record of this Claude Code transcript is damaged: 15 line(s) not "
                   "JSON, the first at line 1", CLAUDE_HINT),
    "codex-utf8": (CODEX, _not_utf8, "DSH102", "every record of this Codex rollout is damaged: 24 line(s) not valid "
                   "UTF-8, the first at line 1 (byte 20)", CODEX_HINT),
    "codex-mixed": (CODEX, _first_not_utf8, "DSH102", "every record of this Codex rollout is damaged: 24 line(s) not "
                    "JSON or not valid UTF-8 (1 of them), the first at line 1 (not valid UTF-8 (byte 20))", CODEX_HINT),
}


def _damaged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str) -> str:
    source, damage, *_ = CASES[case]
    lines = source.read_bytes().splitlines()
    (tmp_path / source.name).write_bytes(b"".join(damage(n, line) + b"\n" for n, line in enumerate(lines, start=1)))
    monkeypatch.chdir(tmp_path)
    return source.name


@pytest.mark.parametrize("case", sorted(CASES))
def test_requests_names_the_damaged_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str], case: str) -> None:
    name = _damaged(tmp_path, monkeypatch, case)
    _, _, _, message, hint = CASES[case]
    assert invoke(monkeypatch, capsys, "requests", name) == (2, "", [f"error: {name}:1: {message} (hint: {hint})"])


@pytest.mark.parametrize("case", sorted(CASES))
def test_validate_names_the_damaged_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str], case: str) -> None:
    name = _damaged(tmp_path, monkeypatch, case)
    _, _, rule, message, hint = CASES[case]
    assert invoke(monkeypatch, capsys, "validate", name) == (1, f"{name}:1: {rule} error: {message} ({hint})\n",
                                                             [f"1 error(s), 0 warning(s), 0 info in 1 file(s): {rule} x1"])
    code, out, err = invoke(monkeypatch, capsys, "validate", "--json", name)
    assert (code, err) == (1, [])
    assert [json.loads(line) for line in out.splitlines()] == [
        {"rule": rule, "severity": "error", "message": message, "path": name, "line": 1, "seq": None, "hint": hint},
        {"type": "summary", "passed": False, "counts": {"error": 1, "warning": 0, "info": 0}, "files": 1,
         "rules": {rule: 1}}]


@pytest.mark.parametrize("case", sorted(CASES))
def test_check_names_the_damaged_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str], case: str) -> None:
    name = _damaged(tmp_path, monkeypatch, case)
    _, _, rule, message, hint = CASES[case]
    code, out, err = invoke(monkeypatch, capsys, "check", name)
    assert (code, err) == (1, [])
    assert out.splitlines()[-3:] == [
        f"{name}:1: DSH801 error (fails the gate: fail-on-refusal): {message} (hint: {hint})",
        f"{name}:1: {rule} error (fails the gate: validation-fail-severity): {message} (hint: {hint})",
        "FAILED: 1 log(s), 0 request(s), 2 error(s), 0 warning(s), 0 info, 2 failing (policy: defaults)"]
    code, out, err = invoke(monkeypatch, capsys, "check", "--json", name)
    assert (code, err) == (1, [])
    report = json.loads(out)
    found = [{"rule": r, "severity": "error", "message": message, "path": name, "line": 1, "seq": None,
              "session_id": None, "request": None, "fails": True, "hint": hint} for r in ("DSH801", rule)]
    assert (report["passed"], report["counts"]) == (False, {"error": 2, "warning": 0, "info": 0, "failing": 2,
                                                            "sessions": 1, "requests": 0, "logs_not_checked": 0})
    assert report["findings"] == found
    [session] = report["sessions"]
    assert (session["error"], session["findings"]) == (f"{name}:1: {message} (hint: {hint})", found)


def test_a_rollout_whose_first_line_alone_is_not_utf8_is_imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Its first line is skipped as a damaged record, as one cut short is: not refused as no DSH header."""
    lines = CODEX.read_bytes().splitlines()
    (tmp_path / CODEX.name).write_bytes(b"".join((_not_utf8(1, lines[0]), b"\n", *(l + b"\n" for l in lines[1:]))))
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "requests", CODEX.name)
    assert (code, err[0]) == (0, f"warning: {CODEX.name}:1: not JSON, skipped")
