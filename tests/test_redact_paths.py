"""A placeholder keeps its text's shape as a path: ``/`` and ``\\`` stay where they are and appear
nowhere else, so a path that is absolute (or not) on the platform that wrote it stays so after
redaction, and ``validate`` gives the same rule results (issue 17's done-when). A reviewer found
``{{cwd}}`` (a tokenised fixture's relative cwd, DSH212) redacted to ``/+BJH$_``, an absolute path,
so the redacted log passed a rule the original fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_audit.redact import Placeholders
from dsh_audit.testing import LogBuilder

from _cli import invoke


def _separators(text: str) -> list[tuple[int, str]]:
    return [(i, c) for i, c in enumerate(text) if c in "/\\"]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), min_size=1, max_size=40),
       st.sampled_from([b"\x00", b"k", b"salt", b"\xff" * 8, b"a\x80b", b"0123456789abcdef"]))
def test_separators_stay_where_they_are_and_appear_nowhere_else(text: str, salt: bytes) -> None:
    placeholders = Placeholders(salt)
    for out in (placeholders.plain(text), placeholders.text(text), placeholders.plain(text, blank=True)):
        assert len(out) == len(text)
        assert _separators(out) == _separators(text)


def test_quotes_and_other_punctuation_still_move() -> None:
    out = Placeholders(b"salt").plain('a"b.c/d\\e{f}')
    assert (out[1], out[5], out[7]) == ('"', "/", "\\")  # '"' has no class-mate left once '\\' stays
    assert out[3] != "." and out[9] != "{"


@pytest.mark.parametrize("salt", ["salt32", "g", "h"])
def test_a_relative_cwd_stays_relative_and_validate_agrees(salt: str, tmp_path: Path, monkeypatch, capsys) -> None:
    b = LogBuilder(session_id="s-cwd", cwd="{{cwd}}")
    with b.turn("Hi"):
        with b.step():
            b.assistant("Hello")
    log = b.write_jsonl(tmp_path / "session.jsonl")
    out = tmp_path / "out" / "session.jsonl"
    out.parent.mkdir()
    code, _, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out), "--lenient", "--salt", salt)
    assert code == 0, err
    cwd = json.loads(out.read_text(encoding="utf-8").splitlines()[0])["cwd"]
    assert len(cwd) == 7 and "/" not in cwd and "\\" not in cwd
    original = invoke(monkeypatch, capsys, "validate", str(log))
    redacted = invoke(monkeypatch, capsys, "validate", str(out))
    summary = "1 error(s), 0 warning(s), 0 info in 1 file(s): DSH212 x1"
    assert (original[0], original[2][-1]) == (redacted[0], redacted[2][-1]) == (1, summary)
    assert [line.split(": ", 1)[1].split(", got ")[0] for line in (original[1], redacted[1])] == [
        "DSH212 error: header cwd must be an absolute path"] * 2
