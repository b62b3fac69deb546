"""A Claude Code or Codex log named itself as a PATH but outside a ``--since/--until`` window
(session 43, re-read D, issue 14/15).

Every command that reads DSH logs only refuses such a file named as a PATH (exit 2). Outside the
window it was left out by the window as any log, which the window's note only counted: exit 0, the
file never named. A DSH log named as a PATH with no activity in the window is left out so too (the
note counts it, the other logs are read), so the foreign file follows that rule, and one more note
names it and says why it was not refused. A command that imports such a log (``sessions``) says
nothing more of it: to it, it is a log like any other.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from _cli import invoke

DATA = Path(__file__).resolve().parent / "data" / "importers"
SAMPLE = Path(__file__).resolve().parents[1] / "sample_logs" / "chat" / "session.jsonl"  # sent in 2027
WINDOW = "--since 2026-06-01T00:00:00Z"  # both foreign files are of 2026-01-05
COUNTED = f"note: {WINDOW}: 2 of 3 log(s) with no activity in that window (by the logs' own timestamps) left out"


@pytest.fixture
def named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current folder: a DSH log of 2027, a Claude Code transcript and a Codex rollout of 2026."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    shutil.copy(SAMPLE, tmp_path / "dsh.jsonl")
    shutil.copy(DATA / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl", tmp_path / "c.jsonl")
    shutil.copy(DATA / "codex" / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl",
                tmp_path / "x.jsonl")
    return tmp_path


@pytest.mark.parametrize(("command", "extra"), [
    ("check", ("--no-capture",)), ("breaks", ()), ("validate", ()), ("report", ("-o", "r.html")), ("sessions", ())])
def test_a_foreign_log_named_outside_the_window_is_left_out_and_said(
        named: Path, command: str, extra: tuple[str, ...], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = invoke(monkeypatch, capsys, command, "dsh.jsonl", "c.jsonl", "./x.jsonl", "--since", "2026-06-01",
                          *extra)
    said = [] if command == "sessions" else [
        f"note: {WINDOW}: 2 logs of another agent named as PATHS (c.jsonl, x.jsonl) are left out by the window as DSH "
        f"logs with no activity in it are (in the window, {command} refuses them: it reads DSH logs only)"]
    tally = ["0 error(s), 0 warning(s), 0 info in 1 file(s)"] if command == "validate" else []  # validate's, on stderr
    assert (code, err) == (0, [COUNTED, *said, *tally])
    code, _, err = invoke(monkeypatch, capsys, command, "c.jsonl", "dsh.jsonl", "--since", "2026-06-01", *extra)
    one = f"note: {WINDOW}: 1 of 2 log(s) with no activity in that window (by the logs' own timestamps) left out"
    said = [] if command == "sessions" else [
        f"note: {WINDOW}: c.jsonl, a claude-code session named as a PATH, is left out by the window as a DSH log with "
        f"no activity in it is (in the window, {command} refuses it: it reads DSH logs only)"]
    assert (code, err) == (0, [one, *said, *tally])


def test_a_foreign_log_named_alone_outside_the_window_checks_nothing(
        named: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """As a DSH log named alone outside the window: nothing to check, exit 2, no report; the note says why."""
    code, out, err = invoke(monkeypatch, capsys, "check", "c.jsonl", "--since", "2026-06-01", "--json-report", "o.json")
    assert (code, out, err) == (2, "", [
        f"note: {WINDOW}: 1 of 1 log(s) with no activity in that window (by the logs' own timestamps) left out",
        f"note: {WINDOW}: c.jsonl, a claude-code session named as a PATH, is left out by the window as a DSH log with "
        "no activity in it is (in the window, check refuses it: it reads DSH logs only)",
        f"error: c.jsonl: no session log has activity in {WINDOW} (by the logs' own timestamps) "
        "(hint: widen or drop --since/--until)"])
    assert not (named / "o.json").exists()
