"""Fuzz round 26, ``watch``: a log rotated to ``.zstd`` (DSH's rotation: the plain log compressed
beside itself, then removed) printed and counted every request again and counted the removal as an
unreadable log (W1); a log truncated after its requests were shown made the summary say 0 requests
and $0 where a deleted log keeps its requests counted (W2). The corpus session is c-change (8
requests); the harness is test_watch_fixes's, the real file watching.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import zstandard
from test_watch_fixes import _append, _drive, _lines, _note, _request, _target, _watching, needs_corpus

from dsh_audit.cache import usd_total
from dsh_audit.watch import WatchItem, WatchNote, WatchRequest, WatchSummary


def _summary(items: list[WatchItem]) -> dict[str, object]:
    summary = WatchSummary()
    for item in items:
        summary.add(item)
    found = summary.to_json()
    return {**found, "cost_usd": found["cost_usd"]["total"] if found["cost_usd"] else None}


def _cost(items: list[WatchItem]) -> float:
    return usd_total(item.cost for item in items if isinstance(item, WatchRequest) and item.cost is not None)


@needs_corpus
def test_a_log_rotated_to_zstd_goes_on_where_it_stopped(tmp_path: Path) -> None:
    """60 lines before the watch, 40 more (requests 4-7 shown), then the log written as
    session.jsonl.zstd (a header frame, a body frame) and the plain log removed: one note says it
    was rotated, no request is printed again, no error, the summary counts 4 requests once."""
    lines, target = _lines(), _target(tmp_path)
    target.write_bytes(b"".join(lines[:60]))
    rotated = target.with_name("session.jsonl.zstd")

    def rotate() -> None:
        compress = zstandard.ZstdCompressor().compress
        staged = target.with_name("session.jsonl.zstd.tmp")
        staged.write_bytes(compress(lines[0]) + compress(b"".join(lines[1:])))
        os.replace(staged, rotated)
        target.unlink()

    items = _drive(tmp_path, [(_watching, _append(target, b"".join(lines[60:]))), (_request(7), rotate),
                              (_note("note", "rotated"), _settle)])
    shown = [item for item in items if isinstance(item, WatchRequest)]
    assert [(item.index, item.path) for item in shown] == [(index, str(target)) for index in range(4, 8)]
    assert [(item.level, item.path, item.message) for item in items if isinstance(item, WatchNote)
            and item.level in ("note", "error", "warning")] == [
        ("note", str(target), f"{target}: rotated to session.jsonl.zstd: read on from where this file stopped")]
    assert _summary(items) == {"type": "summary", "sessions": 1, "requests": 4, "breaks": 3,
                               "cost_usd": _cost(shown), "errors": 0, "unpriced_requests": 0,
                               "cost_complete": True}


def _settle() -> None:
    """Give the file that goes on a moment to read what it holds (it shows nothing again)."""
    time.sleep(1.0)


@needs_corpus
def test_what_a_truncated_log_showed_stays_counted(tmp_path: Path) -> None:
    """Requests 4-7 shown, then the log cut to its header: the summary still counts them (it said 0
    requests, $0); the log written whole again is read from its start, each request counted once:
    the session's own 8."""
    lines, target = _lines(), _target(tmp_path)
    target.write_bytes(b"".join(lines[:60]))

    def cut() -> None:
        with open(target, "r+b") as handle:
            handle.truncate(len(lines[0]))

    items = _drive(tmp_path, [(_watching, _append(target, b"".join(lines[60:]))), (_request(7), cut),
                              (_note("replaced"), lambda: None), (_note("started"), _append(target, b"".join(lines[1:]))),
                              (_request(7), lambda: None)])
    again = next(at for at, item in enumerate(items) if isinstance(item, WatchNote) and item.level == "started"
                 and at > next(at for at, item in enumerate(items) if isinstance(item, WatchNote)
                               and item.level == "replaced"))
    shown = [item for item in items[:again] if isinstance(item, WatchRequest)]
    assert [item.index for item in shown] == [4, 5, 6, 7]
    assert _summary(items[:again + 1]) == {"type": "summary", "sessions": 1, "requests": 4, "breaks": 3,
                                           "cost_usd": _cost(shown), "errors": 0, "unpriced_requests": 0,
                                           "cost_complete": True}
    read_again = [item for item in items[again:] if isinstance(item, WatchRequest)]
    assert [item.index for item in read_again] == list(range(8))
    assert _summary(items) == {"type": "summary", "sessions": 1, "requests": 8, "breaks": 5,
                               "cost_usd": 0.01107667, "errors": 0, "unpriced_requests": 1, "cost_complete": False}
