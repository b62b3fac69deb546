"""Session 45: a ``wire.jsonl`` request body is read through the one decoder of captured bodies
(:func:`dsh_audit._body_decode.undo_codings`), as a HAR ``postData`` and a recorded response are: a
``body_base64`` sent under ``deflate`` or ``gzip, deflate`` pairs and diffs as its plain twin (it was a
placeholder: only gzip was undone). redact takes its secret out and codes it again as it was sent, by the
coder its responses go through (``body_sha256``/``body_bytes`` of the bytes sent), so the redacted pair
diffs the same; a body whose coding cannot be undone is read as captured and said at its line (review B 45),
as a HAR entry's is; only a bomb is still one error at its line.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import zlib
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from dsh_audit._body_decode import undo_codings
from dsh_audit.capture import load_capture
from dsh_audit.errors import CaptureError
from dsh_audit.redact import redact
from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder

KEY = "sk-proj-" + "Q3vT8xLm2Rk9Wp4Zy7Hd" + "T3BlbkFJ" + "a1B2c3D4e5F6g7H8i9J0"  # a fake OpenAI project key
#: How each request of the log is sent: text, base64 alone, then coded (its ``Content-Encoding``).
SENT = [None, "", "deflate", "gzip, deflate"]


def _coded(body: bytes, coding: str) -> bytes:
    """``body`` with ``coding``'s layers applied in order; deflate stored (level 0): the key lies in its bytes."""
    for layer in filter(None, (item.strip() for item in coding.split(","))):
        body = gzip.compress(body, mtime=0) if layer == "gzip" else zlib.compress(body, 0)
    return body


def _record(seq: int, body: bytes, coding: str | None) -> dict[str, Any]:
    """A capture writer's record of ``body``: as text (``coding`` None), else its bytes as sent in
    ``body_base64``, their digest and size, ``coding`` its ``Content-Encoding`` when it names one."""
    record: dict[str, Any] = {"seq": seq, "method": "POST", "path": "/chat/completions",
                              "headers": {"content-type": "application/json"}}
    if coding is None:
        return {**record, "body": body.decode()}
    sent = _coded(body, coding)
    if coding:
        record["headers"]["content-encoding"] = coding
    return {**record, "body_base64": base64.b64encode(sent).decode(), "body_sha256": hashlib.sha256(sent).hexdigest(),
            "body_bytes": len(sent)}


def _pair(tmp_path: Path, sent: list[str | None]) -> tuple[Path, Path, Path]:
    """A four-request log planted with the key, and two captures of it: every body as text, and as ``sent``."""
    b = LogBuilder(session_id="s-wire45")
    for n in range(len(sent)):
        with b.turn(f"turn {n}: use {KEY} now"), b.step():
            b.assistant(f"ok {n}")
    log = tmp_path / "s" / "session.jsonl"
    log.parent.mkdir()
    log.write_text("".join(line + "\n" for line in b.lines(packed=False)), "utf-8")
    session = open_session(log)
    bodies = [session.bodies.render(request, session.route(request).adapter) for request in session.requests]
    plain, coded = tmp_path / "plain.jsonl", tmp_path / "s" / "wire.jsonl"
    for path, codings in ((plain, [None] * len(bodies)), (coded, sent)):
        path.write_text("".join(json.dumps(_record(seq, body, coding)) + "\n"
                                for seq, (body, coding) in enumerate(zip(bodies, codings))), "utf-8")
    return log, plain, coded


def test_coded_request_bodies_pair_diff_and_redact_as_plain_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    log, plain, coded = _pair(tmp_path, SENT)
    assert KEY.encode() in _coded(b"[" + KEY.encode() + b"]", "deflate")  # planted where a scan of the bytes finds it
    assert [(c.kind, c.body) for c in load_capture(coded)] == [(c.kind, c.body) for c in load_capture(plain)]
    runs = [invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(capture)) for capture in (plain, coded)]
    assert runs[1] == (runs[0][0], runs[0][1].replace(str(plain), str(coded)), runs[0][2])
    assert (runs[1][0], runs[1][2], runs[1][1].splitlines()[-1]) == (
        0, [], "4 request(s): 4 identical; 0 capture(s) unexplained, 0 foreign: OK")

    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl", salt=b"wire45", capture=coded)
    assert result.mismatched == () and result.capture is not None
    written = result.capture.read_bytes()
    assert KEY.encode() not in written and KEY.encode() not in (tmp_path / "out" / "session.jsonl").read_bytes()
    for record, coding in zip(map(json.loads, written.splitlines()), SENT):
        if coding is None:
            assert "body_base64" not in record and KEY not in record["body"]
            continue
        sent = base64.b64decode(record["body_base64"])
        body, undone = undo_codings(sent, record["headers"].get("content-encoding"))
        # coded again as it was sent, every layer in order, its digest and size those of the bytes sent
        assert (record["headers"].get("content-encoding", ""), undone) == (
            coding, tuple(item.strip() for item in coding.split(",") if item))
        assert (record["body_sha256"], record["body_bytes"]) == (hashlib.sha256(sent).hexdigest(), len(sent))
        assert KEY.encode() not in sent and KEY.encode() not in body and json.loads(body)["messages"]
    # diff reads the redacted pair as it read the original one
    red = invoke(monkeypatch, capsys, "diff", str(tmp_path / "out" / "session.jsonl"), "--capture", str(result.capture))
    assert red == (runs[1][0], runs[1][1].replace(str(log), str(tmp_path / "out" / "session.jsonl"))
                   .replace(str(coded), str(result.capture)), [])


UNDONE = "cannot be decoded (dsh-audit decodes gzip and deflate)"


@pytest.mark.parametrize(("fmt", "coding", "sent", "said"), [
    ("wire", "br", b"\x1b\xff\xff\x7f{}", f"the body's Content-Encoding br {UNDONE}"),
    ("wire", "deflate, zstd", b"\x28\xb5\x2f\xfd{}",
     f"the body's Content-Encoding zstd {UNDONE}"),
    ("wire", "gzip, br", b"\x1b\x10br-bytes", f"the body's Content-Encoding br {UNDONE}"),
    ("wire", "gzip, deflate", zlib.compress(b"{}")[:-3], "the deflate body is cut off"),
    ("wire", "gzip", gzip.compress(b"{}", mtime=0)[:-3], "the gzip body is cut off"),
    ("har", "br", b"\x1b\xff\xff\x7f{}", f"the body's Content-Encoding br {UNDONE}"),
], ids=["br", "zstd", "gzip-br", "cut-deflate", "cut-gzip", "har-br"])
def test_a_request_body_whose_coding_cannot_be_undone_is_read_as_captured_and_said_at_its_line(
        tmp_path: Path, fmt: str, coding: str, sent: bytes, said: str) -> None:
    """Review B 45: one such record no longer makes the whole capture unreadable (HEAD read it as sent);
    it is read as captured, a warning naming its line and coding, and pairs as any unreadable body."""
    if fmt == "wire":
        capture, where = tmp_path / "wire.jsonl", "line 2"
        record = {"method": "POST", "path": "/v1/telemetry", "headers": {"Content-Encoding": coding},
                  "body_base64": base64.b64encode(sent).decode()}
        capture.write_text(json.dumps({"method": "GET", "path": "/models"}) + "\n" + json.dumps(record) + "\n")
    else:
        capture, where = tmp_path / "c.har", "entries[0]"
        capture.write_text(json.dumps({"log": {"entries": [{"request": {
            "method": "POST", "url": "https://api.example/v1/telemetry", "headers": [
                {"name": "Content-Encoding", "value": coding}],
            "postData": {"text": base64.b64encode(sent).decode(), "encoding": "base64"}}}]}}))
    warnings: list[str] = []
    captured = load_capture(capture, warnings=warnings)
    assert captured[-1].body == sent and captured[-1].kind == "other"  # read again from the file: the same bytes
    assert warnings == [f"{capture}: {where}: its body is read as captured, not decoded: {said}"]


def test_a_request_body_past_the_decode_limits_is_still_one_error_at_its_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_AUDIT_MAX_DECODED", "1K")
    wire = tmp_path / "wire.jsonl"
    wire.write_text(json.dumps({"method": "POST", "path": "/v1/x", "headers": {"Content-Encoding": "deflate"},
                                "body_base64": base64.b64encode(zlib.compress(b"0" * 4096)).decode()}) + "\n")
    with pytest.raises(CaptureError) as caught:
        load_capture(wire, warnings=[])
    assert str(caught.value) == (
        f"{wire}: line 1: the deflate body is refused: the decoded body passes the limit of 1 KiB of text "
        "(DSH_AUDIT_MAX_DECODED) (hint: if this is a real body, raise the limit: DSH_AUDIT_MAX_DECODED=2K (0: no "
        "limit); see docs/hostile-inputs.md)")


def test_a_body_that_decodes_to_binary_is_not_called_undone(tmp_path: Path) -> None:
    """The reader keeps the coding it could not undo; a gzip body that decodes to binary was undone
    (final re-read of session 45: decoding the decoded body again called it "gzip could not be undone")."""
    binary = bytes(range(256)) * 4
    records = [_record(1, binary, "gzip"), {**_record(2, b"{}", None), "headers": {"content-encoding": "br"}},
               {**_record(3, binary, ""), "path": "/v1/upload"}]
    records[1]["body"] = "\u00ff not brotli"
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    captured = load_capture(wire)
    assert [(c.kind, c.undecoded) for c in captured] == [("other", None), ("other", "br"), ("other", None)]
