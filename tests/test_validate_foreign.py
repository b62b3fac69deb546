"""``validate`` on another agent's log (Claude Code, Codex): refused as `check` refuses it (exit 2,
saying what the file is and what reads it), not the DSH header-field errors its first record would
give (five errors and a warning before)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _cli import invoke

DATA = Path(__file__).resolve().parent / "data" / "importers"


@pytest.mark.parametrize("kind, log", [
    ("claude-code", DATA / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"),
    ("codex", DATA / "codex" / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl")])
def test_a_foreign_log_is_one_finding_naming_its_format(kind: str, log: Path, monkeypatch, capsys) -> None:
    code, out, err = invoke(monkeypatch, capsys, "validate", str(log))
    assert (code, out, err) == (
        2, "", [f"error: {log}:1: this is a {kind} session, not a DSH log (hint: sessions, requests, show, "
                "render, cache, usage, diff and index import it; validate, breaks, explain, check, report, redact "
                "and watch read DSH logs only)"])  # no "0 error(s) ... in 0 file(s)" summary: no file was validated
