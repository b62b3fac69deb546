"""Session 39 re-read (issue 11 leftovers, part A): the session ids a found capture's requests name
are read from their headers alone, record by record, never from a decoded body
(:func:`dsh_audit.capture._find._named_sessions`), with the decisions the whole load made."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from _golden import CORPUS
from dsh_audit.capture import _har, _jsonl, find_capture, load_capture
from dsh_audit.capture._find import _named_sessions

LIVE = CORPUS / "live"
HEADER = "x-deepseek-harness-session-id"
SESSION = "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd"  # live/b-tools
CAPTURES = sorted([*CORPUS.glob("live/*/wire.jsonl"), *CORPUS.glob("live-pi/*/wire.jsonl")])
needs_corpus = pytest.mark.skipif(not LIVE.is_dir(), reason="../shared/corpus is absent")


def _named(path: Path) -> frozenset[str] | None:
    info = path.stat()
    return _named_sessions.__wrapped__(str(path), info.st_size, info.st_mtime_ns)


def _record(session: str | None, **extra: object) -> dict[str, object]:
    headers = {} if session is None else {HEADER: session}
    return {"method": "POST", "path": "/chat/completions", "headers": headers, "body": "{}", **extra}


def _wire(path: Path, *records: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _har_text(*sessions: str | None) -> str:
    entries = [{"request": {"method": "POST", "url": "https://api.example.com/chat/completions",
                            "headers": [] if s is None else [{"name": "X-DeepSeek-Harness-Session-Id", "value": s}],
                            "postData": {"mimeType": "application/json", "text": "{}"}}} for s in sessions]
    return json.dumps({"log": {"version": "1.2", "entries": entries}})


@needs_corpus
def test_every_corpus_capture_names_the_sessions_its_loaded_requests_name() -> None:
    assert len(CAPTURES) == 11
    expected = {"a-chat": 1, "b-tools": 1, "c-change": 1, "d-resume": 1, "e-compaction": 1, "e2-autocompact": 1,
                "f-fork": 2, "g-subagent": 2, "h-headless": 1, "c1-anthropic-tools": None, "c3-openai-compat": None}
    for capture in CAPTURES:
        loaded = [request.session_id for request in load_capture(capture, warnings=[])]
        whole = None if None in loaded else frozenset(s for s in loaded if s is not None)
        named = _named(capture)
        assert named == whole, capture
        assert (None if named is None else len(named)) == expected[capture.parent.name], capture


def test_what_a_wire_jsonl_names(tmp_path: Path) -> None:
    assert _named(_wire(tmp_path / "a.jsonl", _record("s1"), _record("s2"), _record("s1"))) == {"s1", "s2"}
    assert _named(_wire(tmp_path / "b.jsonl")) == frozenset()  # no request: it holds none
    assert _named(_wire(tmp_path / "c.jsonl", _record("s1"), _record(None))) is None  # paired by route and order
    assert _named(_wire(tmp_path / "d.jsonl", {"seq": 1, "type": "session/start"})) is None  # a log, no capture
    assert _named(_wire(tmp_path / "e.jsonl", _record("s1"), {"seq": 1})) == {"s1"}  # a stray object: skipped
    assert _named(_wire(tmp_path / "e2.jsonl", {"seq": 1}, _record("s1"))) == {"s1"}  # before a record, too
    assert _named(_wire(tmp_path / "f.jsonl", _record("s1"), _record("s2", headers=[1]))) is None  # bad headers
    torn = _wire(tmp_path / "g.jsonl", _record("s1"))
    with torn.open("ab") as handle:
        handle.write(b'{"method": "PO')  # a writer killed mid-write: dropped, as its loader drops it
    assert _named(torn) == {"s1"}
    strays = _wire(tmp_path / "g2.jsonl", {"seq": 1})
    with strays.open("ab") as handle:
        handle.write(b'{"method": "PO')  # a torn tail dropped: no line left is a record, no capture
    assert _named(strays) is None
    garbage = tmp_path / "h.jsonl"
    garbage.write_bytes(b"garbage\n")
    assert _named(garbage) is None
    assert _named(tmp_path) is None  # not a regular file


def test_what_a_har_file_named_wire_jsonl_names(tmp_path: Path) -> None:
    path = tmp_path / "wire.jsonl"
    path.write_text(_har_text("s1", "s2"), encoding="utf-8")
    assert _named(path) == {"s1", "s2"}
    path.write_text(_har_text("s1", None), encoding="utf-8")
    assert _named(path) is None
    path.write_text(_har_text(), encoding="utf-8")
    assert _named(path) == frozenset()
    path.write_text(_har_text("s1")[:-2] + ', "entries": []}}', encoding="utf-8")  # entries twice
    assert _named(path) is None
    path.write_text(_har_text("s1")[:-3], encoding="utf-8")  # cut off after its entries
    assert _named(path) is None
    path.write_text(_har_text("s1").replace("}}]", "}}, 3]"), encoding="utf-8")  # an entry that is no object
    assert _named(path) is None


def test_no_body_is_decoded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> bytes:
        raise AssertionError("a body was decoded")

    monkeypatch.setattr(_jsonl, "_jsonl_body", refuse)
    monkeypatch.setattr(_har, "_har_body", refuse)
    assert _named(_wire(tmp_path / "a.jsonl", _record("s1"), _record("s2"))) == {"s1", "s2"}
    (tmp_path / "b.har").write_text(_har_text("s1"), encoding="utf-8")
    assert _named(tmp_path / "b.har") == {"s1"}


@needs_corpus
def test_a_nearer_capture_of_another_session_with_a_bad_body_is_passed_over(tmp_path: Path) -> None:
    """Its headers say whose requests it holds: a body its loader refuses (base64 that is none)
    does not make it this log's capture; the log's own, further up, is found."""
    log = Path(shutil.copy(LIVE / "b-tools" / "session-logs" / f"{SESSION}.jsonl", _wire(
        tmp_path / "d" / "wire.jsonl", _record("another", body=None, body_base64="@@@")).parent))
    ours = Path(shutil.copy(LIVE / "b-tools" / "wire.jsonl", tmp_path))
    assert find_capture(log) == ours
    _wire(tmp_path / "d" / "wire.jsonl", _record(SESSION, body=None, body_base64="@@@"))
    os.utime(tmp_path / "d" / "wire.jsonl", ns=(0, 10**9))  # read again: another size and mtime
    assert find_capture(log) == tmp_path / "d" / "wire.jsonl"  # it names this log's session: the nearest
