"""Issue 15, session 46: ``redact`` refuses a log the reader refuses before its first event (a header
DSH refuses: a relative cwd) before redacting a byte of it, as ``requests`` does: not after working
through the whole log (a 12.7 MB log took 5.6 s to reach its line-1 refusal). Measured by what the
redacting rewriter is handed, not by time."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_audit.errors import CorruptLogError
from dsh_audit.redact import _redact, redact
from dsh_audit.testing import LogBuilder
from _cli import invoke

REFUSAL = ('stored session "session-early" failed validation: session header cwd must be an absolute path, got '
           '"relative/ws" (hint: tokenised test fixtures need --lenient)')


def long_log(path: Path, cwd: str) -> Path:
    b = LogBuilder(session_id="session-early", cwd=cwd)
    for n in range(40):
        with b.turn(f"question {n} " + "x" * 2000), b.step():
            b.assistant(f"answer {n} " + "y" * 2000)
    path.write_text("".join(line + "\n" for line in b.lines(packed=False)), encoding="utf-8")
    return path


@pytest.fixture
def fed(monkeypatch) -> list[int]:
    """The bytes the redacting rewriter is handed, feed by feed (the real rewriter, watched)."""
    seen: list[int] = []
    feed = _redact.LogRewriter.feed

    def watched(self, data):  # type: ignore[no-untyped-def]
        seen.append(len(data))
        return feed(self, data)

    monkeypatch.setattr(_redact.LogRewriter, "feed", watched)
    return seen


def test_a_refused_header_is_refused_before_any_redaction(tmp_path, monkeypatch, capsys, fed):
    log = long_log(tmp_path / "s.jsonl", "relative/ws")
    out = tmp_path / "out" / "r.jsonl"
    out.parent.mkdir()
    result = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(out))
    assert result == (2, "", [f"error: {log}:1: {REFUSAL}"])
    assert fed == []
    assert list(out.parent.iterdir()) == []


def test_the_library_raises_the_reader_refusal_unredacted(tmp_path, fed):
    log = long_log(tmp_path / "s.jsonl", "relative/ws")
    with pytest.raises(CorruptLogError) as caught:
        redact(log, tmp_path / "r.jsonl", salt="a-long-enough-salt-for-tests")
    assert str(caught.value) == f"{log}:1: {REFUSAL}"
    assert fed == []


def test_a_damaged_first_record_is_refused_before_any_redaction(tmp_path, monkeypatch, capsys, fed):
    log = long_log(tmp_path / "s.jsonl", "/home/dev/ws")
    lines = log.read_bytes().split(b"\n")
    log.write_bytes(b"\n".join([lines[0], b"{not json", *lines[1:]]))
    code, out, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(tmp_path / "r.jsonl"))
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith(f"error: {log}:2 seq 0: corrupt session log: unparsable committed event (not valid JSON)")
    assert fed == []


def test_a_sound_log_is_still_read_once_whole(tmp_path, fed):
    log = long_log(tmp_path / "s.jsonl", "/home/dev/ws")
    result = redact(log, tmp_path / "r.jsonl", salt="a-long-enough-salt-for-tests")
    assert result.mismatched == ()
    assert sum(fed) == log.stat().st_size
