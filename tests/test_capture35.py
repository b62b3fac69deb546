"""Session 35: a capture read once hands back its records, and a comparison keeps few rendered bodies.

:func:`dsh_audit.capture.read_capture` returns what :func:`dsh_audit.capture.load_capture` returns with
the format it sniffed and each parsed record, its body value None (key order kept), so that ``redact
--capture`` rewrites the capture from that one read (``tests/test_redact35.py`` counts the opens).
:func:`dsh_audit.capture.compare_capture` keeps the last few rendered bodies only: a request's resends
follow it (:func:`dsh_audit.capture.align`), so each request is still rendered once.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest
from test_capture_diff import LIVE, golden_renderer, scenario_requests, wire_records, write_wire

from dsh_audit.capture import compare_capture, load_capture, read_capture


def test_a_wire_jsonl_read_hands_back_each_record_with_its_body_left_out(tmp_path: Path) -> None:
    records = [
        {"seq": 1, "method": "POST", "path": "/chat/completions", "headers": {"a": "b"}, "body": '{"x": 1}',
         "response": {"status": 200}},
        {"body_base64": base64.b64encode(b'{"y": 2}').decode(), "method": "POST", "path": "/v1/messages"},
        {"note": "no capture record"},
    ]
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(json.dumps(r) + "\n" for r in records) + "\n", encoding="utf-8")
    warnings: list[str] = []
    read = read_capture(wire, warnings=warnings)
    assert read.format == "wire-jsonl"
    assert read.requests == load_capture(wire, warnings=[])
    assert [c.body for c in read.requests] == [b'{"x": 1}', b'{"y": 2}']
    # the records that are requests only, in order, each key where it stood
    assert [list(r.items()) for r in read.records] == [
        [("seq", 1), ("method", "POST"), ("path", "/chat/completions"), ("headers", {"a": "b"}), ("body", None),
         ("response", {"status": 200})],
        [("body_base64", None), ("method", "POST"), ("path", "/v1/messages")],
    ]
    assert warnings == [f"{wire}:3: not a capture record (no method, path, body or body_base64), skipped"]


def test_a_har_read_hands_back_its_document_with_the_request_bodies_left_out(tmp_path: Path) -> None:
    entries = [{"startedDateTime": "t0", "request": {"method": "POST", "url": "https://h/chat/completions",
                                                     "headers": [{"name": "x", "value": "y"}],
                                                     "postData": {"mimeType": "application/json", "text": '{"a": 1}'}},
                "response": {"status": 200, "content": {"text": "ok"}}},
               {"request": {"method": "GET", "url": "https://h/models"}}]
    har = tmp_path / "capture.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}, "extra": 1}), encoding="utf-8")
    read = read_capture(har)
    assert read.format == "har"
    assert [(c.path, c.body) for c in read.requests] == [("/chat/completions", b'{"a": 1}'), ("/models", b"")]
    entries[0]["request"]["postData"]["text"] = None
    assert read.records == [{"log": {"version": "1.2", "entries": entries}, "extra": 1}]


def test_a_body_folder_read_has_no_records(tmp_path: Path) -> None:
    (tmp_path / "bodies").mkdir()
    (tmp_path / "bodies" / "1.json").write_bytes(b"{}")
    read = read_capture(tmp_path / "bodies")
    assert (read.format, [c.body for c in read.requests], read.records) == ("body-folder", [b"{}"], [])


@pytest.mark.skipif(not LIVE.is_dir(), reason="needs the live corpus")
def test_a_comparison_renders_each_request_once_and_keeps_four_bodies(tmp_path: Path) -> None:
    records = wire_records("b-tools")
    records.insert(4, dict(records[3]))  # loop step 1/3 resent: its rendered body is taken again
    captures = load_capture(write_wire(tmp_path / "w.jsonl", records))
    golden = golden_renderer("b-tools")
    returned: list[bytes] = []
    alive: list[int] = []

    def render(request, options):  # type: ignore[no-untyped-def]
        body = bytes(bytearray(golden(request, options)))  # a fresh object per call (a title's: RenderError)
        # a body still held by the comparison has a reference beyond this list's and getrefcount's own
        alive.append(sum(sys.getrefcount(returned[i]) > 2 for i in range(len(returned))))
        returned.append(body)
        return body

    rows = compare_capture(scenario_requests("b-tools"), captures, render=render)
    loops = [r for r in rows if r.kind == "loop"]
    assert [r.verdict for r in loops] == ["identical"] * 9 and [r.pairing.retry for r in loops].count(True) == 1
    assert len(returned) == 8  # eight loop requests, one of them sent twice: rendered once each
    assert alive == [0, 1, 2, 3, 4, 4, 4, 4]
