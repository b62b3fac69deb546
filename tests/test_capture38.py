"""Session 38: one reader reads a body again from its record in a capture file, a ``wire.jsonl`` line's
or a HAR entry's (:class:`dsh_audit.capture._reading._RecordBody`, handed the format's reader of one
record); the two near-identical classes it replaces are gone. The body read again is the body read
first, after the capture is pickled too (no descriptor goes along), and a record damaged since is
the format's one-line error at the record's locator.
"""

from __future__ import annotations

import base64
import gzip
import json
import pickle
from pathlib import Path

import pytest

from dsh_audit.capture import _har, _jsonl, _reading, load_capture
from dsh_audit.errors import CaptureError

BODIES = [b'{"model":"deepseek-chat","messages":[{"role":"user","content":"one"}]}',
          b'{"model":"deepseek-chat","messages":[{"role":"user","content":"two \xc3\xa9"}]}']
GZIPPED = gzip.compress(BODIES[1], mtime=0)


def _wire(tmp_path: Path) -> Path:
    """Two records: a text body, and a base64 one."""
    wire = tmp_path / "wire.jsonl"
    wire.write_text(json.dumps({"method": "POST", "path": "/chat/completions", "body": BODIES[0].decode()}) + "\n"
                    + json.dumps({"method": "POST", "path": "/chat/completions",
                                  "body_base64": base64.b64encode(BODIES[1]).decode()}) + "\n", encoding="utf-8")
    return wire


def _har_file(tmp_path: Path) -> Path:
    """Two entries: a text body, and a gzip one stored base64 under a gzip Content-Encoding."""
    har = tmp_path / "capture.har"
    posts = [({"mimeType": "application/json", "text": BODIES[0].decode()}, []),
             ({"mimeType": "application/json", "text": base64.b64encode(GZIPPED).decode(), "encoding": "base64"},
              [{"name": "Content-Encoding", "value": "gzip"}])]
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": [
        {"request": {"method": "POST", "url": "https://api.deepseek.com/chat/completions", "headers": headers,
                     "postData": post}} for post, headers in posts]}}), encoding="utf-8")
    return har


@pytest.mark.parametrize(("kind", "locators", "reader"), [
    ("wire-jsonl", ["line 1", "line 2"], _jsonl._line_body), ("har", ["entries[0]", "entries[1]"], _har._entry_body)])
def test_wire_and_har_bodies_are_read_again_by_one_reader(tmp_path: Path, kind: str, locators: list[str],
                                                          reader: object) -> None:
    capture = _wire(tmp_path) if kind == "wire-jsonl" else _har_file(tmp_path)
    loaded = load_capture(capture)
    assert [type(c.reread) for c in loaded] == [_reading._RecordBody] * 2
    assert [(c.locator, c.reread.where, c.reread.body) for c in loaded] == [  # type: ignore[union-attr]
        (locator, locator, reader) for locator in locators]
    assert [c.held for c in loaded] == [None, None]
    assert [c.body for c in loaded] == BODIES
    copies = pickle.loads(pickle.dumps(loaded))  # handed to another process: the file is opened again there
    assert [c.reread.file.fd for c in copies] == [None, None]
    assert [c.body for c in copies] == BODIES
    assert not hasattr(_jsonl, "_JsonlBody") and not hasattr(_har, "_HarBody")


@pytest.mark.parametrize(("kind", "message"), [
    ("wire-jsonl", "line 2: body_base64 is not valid base64 (character 0) (hint: body_base64 holds standard base64 "
                   "(A-Z, a-z, 0-9, + and /, padded with =): repair the record, or give --capture another capture)"),
    ("har", "entries[1]: postData.text is not base64 (hint: drop encoding or store the body base64-encoded)")])
def test_a_record_damaged_since_it_was_read_is_its_formats_error(tmp_path: Path, kind: str, message: str) -> None:
    capture = _wire(tmp_path) if kind == "wire-jsonl" else _har_file(tmp_path)
    loaded = load_capture(capture)
    coded = base64.b64encode(BODIES[1] if kind == "wire-jsonl" else GZIPPED)
    data = capture.read_bytes()
    capture.write_bytes(data.replace(coded, b"*" + coded[1:]))  # the same length: every record where it was
    assert loaded[0].body == BODIES[0]
    with pytest.raises(CaptureError) as caught:
        loaded[1].body
    assert str(caught.value) == f"{capture}: {message}"
