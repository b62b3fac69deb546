"""The report page's pieces and its temporary file: a session's lists are written some 64 KiB at a
time (``_listed``), the spool is read back without seeking before every line (only after another
read or a write moved it) and has a large buffer, whose last texts a full disk refuses only when
the page is written: that is the same one-line error as a temporary file that cannot be made."""

from __future__ import annotations

import gc
import tempfile
from pathlib import Path
from typing import IO, Any

import pytest

from dsh_audit.report._html import _PIECE, _listed
from dsh_audit.report._html_texts import _Run, _Spool

from _cli import chat_log, invoke


def test_listed_joins_the_texts_with_commas_in_pieces_that_end_at_the_limit() -> None:
    texts = ["a" * 40000, "b" * 30000, "c", "d" * 70000, "e"]
    assert _PIECE == 65536
    assert list(_listed(texts)) == ["a" * 40000 + "," + "b" * 30000, ",c," + "d" * 70000, ",e"]
    assert list(_listed(["x", "y"])) == ["x,y"]
    assert list(_listed([])) == []


def test_interleaved_reads_and_a_later_write_each_read_their_own_lines() -> None:
    spool = _Spool()
    first = _Run(spool)
    for text in ("one", "two", "three"):
        first.add(text)
    a, b = iter(first), iter(first)
    assert [next(a), next(b), next(a), next(b)] == ["one", "one", "two", "two"]
    second = _Run(spool)  # the next page's run, written while a read of the first is half done
    second.add("four")
    second.add("five")
    assert [next(a), *a, *b] == ["three", "three"]
    assert list(second) == ["four", "five"]
    assert list(first) == ["one", "two", "three"]


def _full(*args: Any, **kwargs: Any) -> IO[bytes]:
    """A "temporary file" on a full disk: every write that reaches it is refused (ENOSPC)."""
    buffering: int = kwargs.get("buffering", -1)
    return open("/dev/full", "w+b", buffering=buffering)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_a_full_disk_refusing_the_buffered_texts_is_one_line_and_exit_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "alone" / "s" / "session.jsonl", "11111111-2222-3333-4444-555555555555")
    out = tmp_path / "page.html"
    monkeypatch.setattr(tempfile, "TemporaryFile", _full)
    code, stdout, err = invoke(monkeypatch, capsys, "report", str(log), "-o", str(out))
    gc.collect()  # the spool's file is closed (its buffer is dropped) without a word
    assert (code, stdout, out.exists()) == (2, "", False)
    assert err == [f"error: {tempfile.gettempdir()}: cannot write the page's temporary file: No space left on device "
                   "(hint: free space there, or point TMPDIR at a folder with room, and run report again)"]
    assert capsys.readouterr() == ("", "")
