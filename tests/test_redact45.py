"""Session 45 (issue 15): redact reads a recorded response as every reader does, through the one decoder
(:func:`dsh_audit._body_decode.decoded_body`: base64, deflate, stacked codings, bodies stored decoded), so
no secret survives in a deflate- or stacked-coded body; a body sent coded (a ``wire.jsonl`` ``body_base64``)
is coded again as its kept ``Content-Encoding`` says; one whose coding cannot be undone is replaced whole by
one placeholder and said in the summary (review B 45); only a bomb is refused, nothing written. The
redacted pair still diffs.
"""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from test_redact33 import _inputs
from test_redact_body37 import BODY, KEY, SALT, _har

from dsh_audit._body_decode import body_bytes, content_encoding, decoded_body
from dsh_audit.capture import read_capture
from dsh_audit.redact import Placeholders, Redactor, redact
from dsh_audit.redact._capture import _har_part, _record, replaced_note
from dsh_audit.redact._notes import replaced_whole

#: A streamed response holding the key across two deltas, stored decoded as a HAR tool stores it.
STREAM = "".join(f"data: {json.dumps({'choices': [{'index': 0, 'delta': {'content': part}}]})}\n\n"
                 for part in ("Use " + KEY[:10], KEY[10:] + " now")) + "data: [DONE]\n\n"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _deflate(data: bytes) -> bytes:
    return zlib.compress(data, 0)  # stored blocks: the key lies in the coded bytes verbatim


#: (content.text, encoding, Content-Encoding) of each response planted with the key.
RESPONSES = [(_b64(_deflate(BODY.encode())), "base64", "deflate"),
             (_b64(_deflate(gzip.compress(BODY.encode(), mtime=0))), "base64", "gzip, deflate"),
             (_b64(_deflate(BODY.encode())), None, "deflate"),  # base64 unmarked: the only way coded data travels
             (BODY, None, "deflate"),  # identity: the header kept, the body stored decoded
             (BODY, None, "gzip, deflate"),
             (STREAM, None, "br")]  # an event stream stored decoded: no br decoder needed


def _content(text: str, encoding: str | None) -> dict[str, Any]:
    marked = {"encoding": encoding} if encoding else {}
    return {"size": len(BODY), "mimeType": "application/json", "text": text, **marked}


def test_a_secret_in_a_deflate_or_stacked_response_is_redacted_and_the_pair_still_diffs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log, har = _har(tmp_path, [(_content(text, encoding), [{"name": "Content-Encoding", "value": coding}])
                               for text, encoding, coding in RESPONSES])
    assert KEY.encode() in base64.b64decode(RESPONSES[0][0])  # planted where a scan of the stored text misses it
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl", salt=SALT, capture=har)
    assert result.mismatched == () and result.capture is not None
    assert result.secrets == {"openai_api_key": {"occurrences": len(RESPONSES), "distinct": 1}}  # each response's
    written = result.capture.read_bytes()
    assert KEY.encode() not in written
    bodies = []
    for entry in json.loads(written)["log"]["entries"]:
        response = entry["response"]
        content = response["content"]
        data = body_bytes(content["text"], encoding=content.get("encoding"),
                          content_coding=content_encoding(response["headers"]), field="content.text")
        assert KEY.encode() not in data
        bodies.append(data.decode("utf-8"))
    # written decoded as HAR 1.2 says, in its own encoding, the same text for the same body however it was coded
    assert bodies[:5] == [bodies[0]] * 5 and json.loads(bodies[0])["model"] == "deepseek-chat"
    assert bodies[5].startswith("data: {") and bodies[5].endswith("data: [DONE]\n\n")
    assert [entry["response"]["content"].get("encoding") for entry in json.loads(written)["log"]["entries"]] == [
        encoding for _, encoding, _ in RESPONSES]
    # diff reads the redacted pair as it reads the original one: each captured request identical
    runs = [invoke(monkeypatch, capsys, "diff", str(pair_log), "--capture", str(capture), "--format", "csv")
            for pair_log, capture in ((log, har), (tmp_path / "out" / "session.jsonl", result.capture))]
    assert runs[1] == (runs[0][0], runs[0][1].replace(str(log), str(tmp_path / "out" / "session.jsonl")), runs[0][2])
    assert runs[1][0] == 0 and [row.split(",")[6] for row in runs[1][1].splitlines()[1:]] == ["identical"] * 6


@pytest.mark.parametrize("coding", ["deflate", "gzip, deflate", "deflate, gzip"])
def test_a_body_sent_coded_is_coded_again_without_its_secret(tmp_path: Path, coding: str) -> None:
    """A ``wire.jsonl`` response's ``body_base64`` is the bytes as sent: decoded, redacted, coded again."""
    log, wire = _inputs(tmp_path)
    data = BODY.encode()
    for layer in (item.strip() for item in coding.split(",")):
        data = gzip.compress(data, mtime=0) if layer == "gzip" else _deflate(data)
    record = json.loads(wire.read_text())
    record["response"] = {"status": 200, "headers": {"Content-Encoding": coding}, "body_base64": _b64(data)}
    wire.write_text(json.dumps(record) + "\n")
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl", salt=SALT, capture=wire)
    assert result.mismatched == () and result.capture is not None
    assert KEY.encode() not in result.capture.read_bytes()
    response = json.loads(result.capture.read_text())["response"]
    body, undone = decoded_body(response["body_base64"], encoding="base64", content_coding=coding)
    assert undone == tuple(item.strip() for item in coding.split(","))  # every layer coded again, in order
    assert KEY.encode() not in body and json.loads(body)["model"] == "deepseek-chat"
    sent = base64.b64decode(response["body_base64"])  # deflate written as HTTP names it: zlib data (RFC 1950),
    for layer in reversed(undone):  # which the standard library's strict readers undo (raw deflate they refuse)
        sent = gzip.decompress(sent) if layer == "gzip" else zlib.decompress(sent)
    assert sent == body


def _raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(0, zlib.DEFLATED, -15)  # raw deflate, stored blocks: no zlib header
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(("fmt", "text", "coding", "undone"), [
    ("har", _b64(b"\x1b\x10" + BODY.encode()), "br", "br"),
    ("har", _b64(b"\x28\xb5\x2f\xfd" + BODY.encode()), "zstd", "zstd"),
    ("har", _b64(b"\xff\x06sNaPpY" + BODY.encode()), "gzip, snappy", "snappy"),
    ("har", _b64(_deflate(BODY.encode())[:-9]), "deflate", "deflate"),
    ("har", _b64(_raw_deflate(BODY.encode())[:-9]), "deflate", "deflate"),  # no zlib header: refused, now whole too
    ("har", _b64(gzip.compress(BODY.encode(), 0, mtime=0)[:-9]), "gzip", "gzip"),
    ("wire", _b64(b"\x1b\x10" + BODY.encode()), "br", "br"),
], ids=["har-br", "har-zstd", "har-unknown", "har-cut-zlib", "har-cut-raw", "har-cut-gzip", "wire-br"])
def test_a_response_whose_coding_cannot_be_undone_is_replaced_whole_and_counted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], fmt: str, text: str,
        coding: str, undone: str) -> None:
    """Review B 45: redact wrote nothing (rc 2) where HEAD wrote the body as one placeholder, and a cut raw
    deflate body was a placeholder, uncounted, where a cut zlib one was refused. One rule now: the body
    is replaced whole (nothing of it survives), exit 0, and the summary says so (:func:`replaced_note`)."""
    assert KEY.encode() in base64.b64decode(text)  # the key lies in the coded bytes verbatim
    response: dict[str, Any]
    if fmt == "har":
        log, capture = _har(tmp_path, [(_content(text, "base64"), [{"name": "Content-Encoding", "value": coding}])])
        response = json.loads(capture.read_text())["log"]["entries"][0]["response"]
    else:
        log, capture = _inputs(tmp_path)
        record = json.loads(capture.read_text())
        record["response"] = response = {"headers": {"content-encoding": coding}, "body_base64": text}
        capture.write_text(json.dumps(record) + "\n")
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl", salt="s", capture=capture)  # no error: exit 0
    assert result.mismatched == () and result.capture is not None
    assert result.notes == (f"1 body replaced whole: its coding {undone} could not be undone",)  # the summary's
    written = {path: path.read_bytes() for path in (result.output, result.manifest, result.capture)}
    assert not any(KEY.encode() in data for data in written.values())
    # review E 45 #3: the bundle itself says a body was blanked (its recipient reads no note)
    assert json.loads(written[result.manifest])["replaced_whole"] == {"count": 1, "codings": [undone]}
    out = json.loads(written[result.capture])
    stored = (out["log"]["entries"][0]["response"]["content"]["text"] if fmt == "har"
              else out["response"]["body_base64"])
    placeholder = base64.b64decode(stored)  # one placeholder: no JSON layout, no structural string of the body kept
    assert KEY.encode() not in placeholder and b"deepseek-chat" not in placeholder and b"{" not in placeholder
    undecoded: list[str] = []
    redactor = Redactor(Placeholders(SALT))
    if fmt == "har":
        kept = _har_part(response, redactor, [], None, undecoded=undecoded)["content"]["text"]
    else:
        kept = _record({"response": response}, b"", redactor, [], undecoded=undecoded)["response"]["body_base64"]
    assert kept == _b64(Redactor(Placeholders(SALT)).content(text).encode()) and redactor.secrets == {}
    assert undecoded == [undone]
    assert replaced_note(undecoded) == f"1 body replaced whole: its coding {undone} could not be undone"


@pytest.mark.parametrize("fmt", ["wire", "har"])
def test_a_request_body_read_as_captured_is_replaced_whole_and_counted(tmp_path: Path, fmt: str) -> None:
    """A request body whose coding cannot be undone (a telemetry upload under ``br``) is read as captured
    (test_wire_capture45), redacted as one placeholder, and counted with the responses replaced whole."""
    sent = b"\x1b\x10" + BODY.encode()  # the key in the coded bytes verbatim
    log, capture = _har(tmp_path, [(_content(BODY, None), [])]) if fmt == "har" else _inputs(tmp_path)
    if fmt == "har":
        document = json.loads(capture.read_text())
        document["log"]["entries"].append({"request": {
            "method": "POST", "url": "https://api.example/v1/telemetry", "headers": [
                {"name": "Content-Encoding", "value": "br"}], "postData": {"text": _b64(sent), "encoding": "base64"}}})
        capture.write_text(json.dumps(document))
    else:
        capture.write_text(capture.read_text() + json.dumps({
            "method": "POST", "path": "/v1/telemetry", "headers": {"content-encoding": "br"},
            "body_base64": _b64(sent)}) + "\n")
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl", salt="s", capture=capture)
    assert result.mismatched == () and result.capture is not None
    assert not any(KEY.encode() in path.read_bytes() for path in (result.output, result.manifest, result.capture))
    assert json.loads(result.manifest.read_bytes())["replaced_whole"] == {"count": 1, "codings": ["br"]}
    records, undecoded = read_capture(capture).records, list[str]()
    if fmt == "har":
        for entry in records[0]["log"]["entries"]:
            _har_part(entry["request"], Redactor(Placeholders(SALT)), [], b"", undecoded=undecoded)
    else:
        for record in records:
            _record(record, b"", Redactor(Placeholders(SALT)), [], undecoded=undecoded)
    assert undecoded == ["br"]


def test_the_summary_names_each_coding_of_the_bodies_replaced_whole() -> None:
    assert replaced_note(["br", "deflate", "br"]) == (
        "3 bodies replaced whole: their codings br, deflate could not be undone")
    assert replaced_note(["zstd", "zstd"]) == "2 bodies replaced whole: their coding zstd could not be undone"
    # what the manifest records of them, read back from those words (one note per capture)
    assert replaced_whole([replaced_note(["br", "deflate", "br"]), "other note", replaced_note(["zstd"])]) == (
        4, ("br", "deflate", "zstd"))
    assert replaced_whole(["other note"]) == (0, ())


def test_the_run_says_no_none_found_of_a_body_replaced_whole_unread(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Review E 45 #3: "secrets removed: none found" stood above the note though the body held a key."""
    log, capture = _inputs(tmp_path)
    record = json.loads(capture.read_text())
    record["response"] = {"headers": {"content-encoding": "br"}, "body_base64": _b64(b"\x1b\x10" + BODY.encode())}
    capture.write_text(json.dumps(record) + "\n")
    (tmp_path / "out").mkdir()
    code, out, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(tmp_path / "out" / "session.jsonl"),
                            "--capture", str(capture), "--salt", SALT)
    assert code == 0 and out.splitlines()[3] == (
        "secrets removed: none found in what could be read (1 body replaced whole, unread: see the note below)")
    assert err[:1] == ["note: 1 body replaced whole: its coding br could not be undone"]


def test_a_response_past_the_decode_limits_is_still_refused_and_nothing_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_MAX_RATIO", "10")
    bomb = _b64(zlib.compress(b"0" * (5 << 20)))  # past the ratio's floor (4 MiB), at about 1000x
    log, capture = _har(tmp_path, [(_content(bomb, "base64"), [{"name": "Content-Encoding", "value": "deflate"}])])
    (tmp_path / "out").mkdir()
    code, out, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(tmp_path / "out" / "session.jsonl"),
                            "--salt", "s", "--capture", str(capture))
    assert (code, out, err) == (2, "", [
        f"error: {capture}: entries[0]: cannot redact the response: the deflate body is refused as a decompression "
        "bomb: 5117 deflate bytes expand to more than 5242880 bytes, past the limit of 10x (DSH_AUDIT_MAX_RATIO) "
        "(hint: if this is a real body, raise the limit: DSH_AUDIT_MAX_RATIO=100 (0: no limit); see "
        "docs/hostile-inputs.md)"])
    assert list((tmp_path / "out").iterdir()) == []


def test_an_llm_request_whose_coding_cannot_be_undone_is_named_so_not_called_no_llm_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Review E 45 #2: the log's own request, captured under ``br`` (not undone), was "not an LLM call (kind
    other)" in diff's note and --json, "holds no LLM call ... give the capture of ...'s run" at its end, and
    redact's refusal counted it "not LLM call(s)" while the warning said the body was read as captured."""
    log, capture = _inputs(tmp_path)
    record = json.loads(capture.read_text())
    record["headers"]["content-encoding"] = "br"
    record["body_base64"] = _b64(b"\x1b\x10" + record.pop("body").encode())  # no brotli: cannot be undone
    capture.write_text(json.dumps(record) + "\n")
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(capture), "--json")
    assert code == 1 and [(row["verdict"], row["note"]) for row in map(json.loads, out.splitlines())][1:] == [
        ("foreign", "foreign: its body's coding br could not be undone (read as captured, kind other)")]
    assert err == [f"warning: {capture}: line 1: its body is read as captured, not decoded: the body's "
                   "Content-Encoding br cannot be decoded (dsh-audit decodes gzip and deflate)",
                   f"note: no request matched: {capture} holds no LLM call it could read: its body's coding br could "
                   "not be undone (read as captured; the warning at its line says what to store instead)"]
    (tmp_path / "out").mkdir()
    code, _, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(tmp_path / "out" / "session.jsonl"),
                          "--capture", str(capture), "--salt", SALT)
    assert code == 2 and err[-1] == (
        f"error: {capture}: none of the 1 captured request(s) is one of this log's (1 read as captured: its body's "
        "coding br could not be undone): the warning at its line says what to store instead (hint: pass the "
        "capture of this session (or --any-capture to redact it anyway))")
