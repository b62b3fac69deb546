"""``time_span``: a log's own time span from its header and its last records, equal to a full read,
and the ``--since/--until`` windows of ``check``, ``report`` and ``watch`` that use it."""

from __future__ import annotations

import json
import os
import shutil
import struct
import time
from pathlib import Path
from typing import Any

import pytest
import zstandard
from click.testing import CliRunner

from dsh_audit.cli import cli
from dsh_audit.log import time_span
from dsh_audit.log._span import _Fallback, full_time_span, read_tail

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"
CHAT = ROOT / "sample_logs" / "chat" / "session.jsonl"  # 2027-01-15T08:00:00Z in the log
EARLY = sorted((CORPUS / "live" / "a-chat" / "session-logs").glob("*.jsonl"))  # 2026-12-02
HEADER = {"type": "session", "version": 0, "id": "span-test", "createdAt": 1_000_000, "cwd": "/work",
          "delegationDepth": 0}


def _event(seq: int, when: int, text: str = "x") -> dict[str, Any]:
    return {"type": "user/message", "seq": seq, "time": when,
            "data": {"id": f"m{seq}", "role": "user", "content": [{"type": "text", "text": text}],
                     "source": {"kind": "human"}}}


def _lines(*records: dict[str, Any]) -> bytes:
    return b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records)


def _frame(data: bytes, *, content_size: bool = True) -> bytes:
    return zstandard.ZstdCompressor(write_checksum=True, write_content_size=content_size).compress(data)


def _hand_frame(head: bytes, run: int, tail: bytes) -> bytes:
    """A frame built by hand (no content size, no checksum): a raw block, an RLE block of ``run``
    bytes ``a`` and a last raw block."""
    def block(kind: int, size: int, *, last: bool = False) -> bytes:
        return (int(last) | kind << 1 | size << 3).to_bytes(3, "little")

    return (b"\x28\xb5\x2f\xfd" + bytes([0x00, 0x50]) + block(0, len(head)) + head + block(1, run) + b"a"
            + block(0, len(tail), last=True) + tail)


def _zstd_log(tmp_path: Path, *batches: bytes, name: str = "session.jsonl.zstd") -> Path:
    path = tmp_path / name
    path.write_bytes(_frame(_lines(HEADER)) + b"".join(batches))
    return path


def _check(path: Path) -> tuple[float, float] | None:
    span = time_span(path)
    assert span == full_time_span(path)
    return span


def test_multi_frame_zstd_decodes_only_the_last_frame(tmp_path: Path) -> None:
    pad_head = b'{"type":"user/message","seq":3,"time":1003000,"data":{"id":"m3","role":"user","content":[{"type":"text","text":"'
    pad_tail = b'"}],"source":{"kind":"human"}}}\n'
    hand = _hand_frame(pad_head, 100_000, pad_tail)
    assert zstandard.ZstdDecompressor().decompressobj().decompress(hand) == pad_head + b"a" * 100_000 + pad_tail
    first = _frame(_lines(_event(0, 1_000_500), _event(1, 1_001_000)))
    second = _frame(_lines(_event(2, 1_002_000)), content_size=False)
    last = _frame(_lines(_event(4, 1_005_000), _event(5, 1_004_000)))  # times need not increase
    for batches, latest in (((first, second, hand), 1003.0), ((first, second, hand, last), 1005.0)):
        path = _zstd_log(tmp_path, *batches)
        assert _check(path) == (1000.0, latest)
        tail = read_tail(path)
        assert tail is not None and tail.decoded_from == path.stat().st_size - len(batches[-1])
        assert tail.decoded < 100_000 or batches[-1] is hand


def test_a_frame_with_no_timed_line_steps_back_and_a_torn_frame_keeps_its_whole_lines(tmp_path: Path) -> None:
    first = _frame(_lines(_event(0, 1_001_000)))
    untimed = _frame(b'{"type":"agent/inbox/spliced","seq":1,"time":0,"data":{}}\nnot json\n')
    path = _zstd_log(tmp_path, first, untimed)
    assert _check(path) == (1000.0, 1001.0)
    assert read_tail(path).decoded_from == path.stat().st_size - len(untimed) - len(first)  # type: ignore[union-attr]
    torn = _frame(_lines(_event(1, 1_002_000)) + _lines(_event(2, 1_009_000)))
    path = _zstd_log(tmp_path, first, torn[:-10], name="torn.jsonl.zstd")
    assert _check(path) == (1000.0, 1001.0)  # the block holding both lines is cut off: none is whole


def test_a_skippable_frame_falls_back_to_the_full_read(tmp_path: Path) -> None:
    skippable = struct.pack("<II", 0x184D2A53, 4) + b"skip"
    path = _zstd_log(tmp_path, _frame(_lines(_event(0, 1_001_000))), skippable)
    with pytest.raises(_Fallback, match="skippable frame"):
        read_tail(path)
    assert _check(path) is None  # DSH refuses skippable frames: the log is kept, and the run says why


@pytest.mark.parametrize("newline", [True, False])
def test_plain_log_with_a_torn_or_whole_last_line_and_a_huge_one(tmp_path: Path, newline: bool) -> None:
    path = tmp_path / "session.jsonl"
    body = _lines(HEADER, _event(0, 1_001_000), _event(1, 1_002_000, "y" * (1 << 20)))
    path.write_bytes(body + (b"" if newline else b'{"type":"user/message","seq":2,"time":1009000'))
    assert _check(path) == (1000.0, 1002.0)
    tail = read_tail(path)
    assert tail is not None and tail.decoded_from < len(body) - (1 << 20)  # read back past the 1 MB line
    assert tail.decoded_from > len(_lines(HEADER, _event(0, 1_001_000))) - (1 << 16)


def test_header_only_empty_and_foreign_logs(tmp_path: Path) -> None:
    only = tmp_path / "only.jsonl"
    only.write_bytes(_lines(HEADER))
    assert _check(only) == (1000.0, 1000.0)
    assert _check(_zstd_log(tmp_path)) == (1000.0, 1000.0)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert _check(empty) is None
    for foreign in (ROOT / "tests" / "data" / "importers").glob("*/*.jsonl"):
        assert _check(foreign) is None  # another agent's log: no DSH header, as the full read says
    fork = tmp_path / "fork.jsonl"  # a fork's seeded events are older than its header
    fork.write_bytes(_lines(HEADER, _event(0, 999_000), _event(1, 1_004_000)))
    assert _check(fork) == (999.0, 1004.0)


def _logs() -> list[Path]:
    roots = [ROOT / "sample_logs", CORPUS]
    return sorted(p for root in roots if root.is_dir() for p in root.rglob("*")
                  if p.is_file() and p.name.endswith((".jsonl", ".jsonl.zstd")))


def test_every_sample_and_corpus_log_has_its_full_read_span() -> None:
    compared = 0
    for path in _logs():
        full = full_time_span(path)
        if full is None:
            continue  # a log the reader refuses: time_span reports what its records say (module docstring)
        assert time_span(path) == full, path
        compared += 1
    assert compared >= 12


# -- check, report and watch select by the logs' own times ---------------------------------------


def _dated(tmp_path: Path) -> Path:
    if not EARLY:
        pytest.skip("the DSH corpus is not present")
    for source, name in ((EARLY[0], "early"), (CHAT, "late")):
        (tmp_path / "logs" / name).mkdir(parents=True)
        shutil.copy(source, tmp_path / "logs" / name / "session.jsonl")
    month_ago = time.time() - 30 * 86400
    os.utime(tmp_path / "logs" / "late" / "session.jsonl", (month_ago, month_ago))  # mtime is never read
    return tmp_path / "logs"


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, standalone_mode=False)
    return result.return_value, result.stdout, result.stderr


_NOTE = ("note: --since 2027-01-01T00:00:00Z: 1 of 2 log(s) with no activity in that window (by the logs' own "
         "timestamps) left out\n")


def test_check_and_report_since_leave_out_a_log_outside_the_window(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    logs = _dated(tmp_path)
    monkeypatch.chdir(tmp_path)
    late = str(logs / "late" / "session.jsonl")
    code, out, err = _run("check", str(logs), "--since", "2027-01-01", "--json-report", "-")
    # then check's table and verdict: on stderr beside a report on stdout (session 40)
    assert (code, err[:len(_NOTE)], err.count("note:")) == (0, _NOTE, 1)
    alone = _run("check", late, "--json-report", "-")
    assert alone[0] == 0 and json.loads(out)["sessions"] == json.loads(alone[1])["sessions"]
    assert [s["path"] for s in json.loads(out)["sessions"]] == [late]
    code, out, err = _run("report", str(logs), "--until", "2026-12-03", "-o", "page.html")
    assert (code, out) == (0, "wrote page.html: 1 log(s), 3 request(s), check passed: no breaks\n")
    assert err == ("note: --until 2026-12-04T00:00:00Z: 1 of 2 log(s) with no activity in that window (by the "
                   "logs' own timestamps) left out\n")
    assert "session-sample-chat" not in (tmp_path / "page.html").read_text(encoding="utf-8")


def test_check_with_no_log_in_the_window_is_one_error_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    from dsh_audit.cli._common import run_guarded

    logs = _dated(tmp_path)
    monkeypatch.setattr(sys, "argv", ["dsh-audit", "check", str(logs), "--since", "2030-01-01"])
    assert run_guarded(cli) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "note: --since 2030-01-01T00:00:00Z: 2 of 2 log(s) with no activity in that window (by the logs' own "
        f"timestamps) left out\nerror: {logs}: no session log has activity in --since 2030-01-01T00:00:00Z (by "
        "the logs' own timestamps) (hint: widen or drop --since/--until)\n")


def test_watch_since_replays_the_history_of_logs_active_by_their_own_times(tmp_path: Path) -> None:
    logs = _dated(tmp_path)
    code, out, _ = _run("watch", str(logs), "--json", "--since", "2027-01-01", "--exit-after", "0.3", "--polling")
    assert code == 0
    items = [json.loads(line) for line in out.splitlines()]
    replayed = [(x["session_id"], x["index"], x["history"]) for x in items if x["type"] in ("request", "break")]
    assert replayed == [("session-sample-chat", 0, True), ("session-sample-chat", 1, True),
                        ("session-sample-chat", 2, True)]  # the late log, though its file is a month old
