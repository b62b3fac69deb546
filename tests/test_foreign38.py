"""Fuzz round 21, defects 3 and 10.

D3: a Codex rollout / Claude Code transcript whose first line is JSON but no record (``{}``,
``null``) is another agent's log to ``check`` and ``validate`` too (refused in one line naming its
format, exit 2), as the importing commands read it; not a corrupt DSH log or five header errors.
A DSH log whose first line is such JSON is still checked as a damaged DSH header.

D10: a folder walk takes a DSH log not named ``session.jsonl`` whose header is spaced JSON
(``{"type": "session", ...}``), as it is read when named.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import invoke
from dsh_audit.log import discover
from dsh_audit.log._format import begins_as_header
from dsh_audit.validate._catalogue import RULES
from dsh_audit.validate._sink import Sink
from dsh_audit.validate._source import foreign_header

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "importers"
CODEX = DATA / "codex" / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
CLAUDE = DATA / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"
SAMPLE = ROOT / "sample_logs" / "chat" / "session.jsonl"
HINT = ("sessions, requests, show, render, cache, usage, diff and index import it; validate, breaks, explain, check, "
        "report, redact and watch read DSH logs only")


def _odd_first(tmp_path: Path, source: Path, first: bytes, name: str = "log.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(first + b"\n" + source.read_bytes())
    return path


CASES = [("codex", CODEX, b"{}"), ("claude-code", CLAUDE, b"null"), ("codex", CODEX, b"[1, 2]"),
         ("claude-code", CLAUDE, b'{"type": "session"}')]


@pytest.mark.parametrize("kind, source, first", CASES)
def test_check_refuses_it_as_another_agents_log(kind: str, source: Path, first: bytes, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    log = _odd_first(tmp_path, source, first)
    assert invoke(monkeypatch, capsys, "check", str(log)) == (
        2, "", [f"error: {log}:1: this is a {kind} session, not a DSH log (hint: {HINT})"])


@pytest.mark.parametrize("kind, source, first", CASES)
def test_validate_records_one_dsh202_naming_the_format(kind: str, source: Path, first: bytes,
                                                       tmp_path: Path) -> None:
    log = _odd_first(tmp_path, source, first)
    sink = Sink(str(log), frozenset(RULES))
    assert foreign_header(sink) is True
    assert [(f.rule, f.line, f.message, f.hint, f.foreign) for f in sink.findings] == [
        ("DSH202", 1, f"this is a {kind} session, not a DSH log", HINT, kind)]


def test_validate_cli_refuses_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    log = _odd_first(tmp_path, CODEX, b"{}")
    assert invoke(monkeypatch, capsys, "validate", str(log)) == (
        2, "", [f"error: {log}:1: this is a codex session, not a DSH log (hint: {HINT})"])


def test_a_dsh_log_with_such_a_first_line_is_still_a_damaged_dsh_log(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    log = _odd_first(tmp_path, SAMPLE, b"{}")
    sink = Sink(str(log), frozenset(RULES))
    assert (foreign_header(sink), sink.findings) == (False, [])
    code, out, err = invoke(monkeypatch, capsys, "check", str(log))
    refusal = (f"{log}:1: DSH801 error (fails the gate: fail-on-refusal): corrupt session log: first line is not a "
               "session header")
    assert code == 1 and [line for line in [*out.splitlines(), *err] if line.startswith(refusal)] != []


def _spaced(tmp_path: Path, name: str, header: dict[str, object], **dumps: object) -> Path:
    lines = SAMPLE.read_bytes().split(b"\n", 1)
    path = tmp_path / name
    path.write_bytes(json.dumps(header, **dumps).encode() + b"\n" + lines[1])  # type: ignore[arg-type]
    return path


def _header() -> dict[str, object]:
    value = json.loads(SAMPLE.read_bytes().split(b"\n", 1)[0])
    assert isinstance(value, dict)
    return value


def test_a_folder_walk_takes_a_spaced_header(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    spaced = _spaced(tmp_path, "a-spaced.jsonl", _header())  # json.dumps: ", " and ": "
    # type after 200 bytes, tabs and newline-free indent; a session of its own (of one id, the same
    # header and events, the two would be one session read once: session 41)
    late = {"cwd": "/home/dev/" + "x" * 200, **_header(), "id": "session-late"}
    tabbed = _spaced(tmp_path, "b-late.jsonl", late, separators=(" ,\t", " :\t"))
    nested = tmp_path / "c-nested.jsonl"
    nested.write_text(json.dumps({"data": {"note": "x" * 40, "type": "session", "id": "s"}}) + "\n")
    assert discover([tmp_path]) == [spaced, tabbed]
    code, out, err = invoke(monkeypatch, capsys, "sessions", "--no-capture", "--json", str(tmp_path))
    assert code == 0
    assert [json.loads(row)["path"] for row in out.splitlines()] == [str(spaced), str(tabbed)]


@pytest.mark.parametrize("head, expected", [
    (b'{"type":"session","version":4', True),
    (b'\xef\xbb\xbf{"type":"session","version":4,"id":"s"}\n', True),  # taken, then refused when read
    (b'\n\n  {"version": 4,\t"type"\r: "session"', True),
    (b'{"type": "sess', False),
    (b'{"type": "session-x"}\n', False),
    (b'{"a": 1}\n{"type": "session"}\n', False),
    (b'null\n', False),
    (b'\x28\xb5\x2f\xfd\x00', True)])
def test_begins_as_header(head: bytes, expected: bool) -> None:
    assert begins_as_header(head) is expected
