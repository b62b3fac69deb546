"""Fuzz round 19 (D1-D4, D7): what a capture's recorded responses report is read by the capture's
format (a ``wire.jsonl`` record with a ``log`` field is a record), by one provider convention (a
usage mixing two is damaged), with its damaged numbers said as written, from bodies decoded as
the request side decodes them (base64 in any case, gzip inside base64, a BOM, SSE data lines
joined); a capture that is no UTF-8 text is refused in the log reader's words."""

from __future__ import annotations

import base64
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from _cli import invoke

from dsh_audit._body_decode import BodyDecodeError, body_bytes
from dsh_audit.cache import Tokens, keep_usage, response_tokens
from dsh_audit.cache._captured_usage import UnusableUsage, _Told
from dsh_audit.capture import load_capture, read_capture

A = Path("../shared/corpus/live/a-chat")
LOG = A / "session-logs"
SID = "session-2b096b61-0a34-4da6-abec-4e87161c2c0b"
needs_corpus = pytest.mark.skipif(not (A / "wire.jsonl").is_file(), reason="../shared/corpus/live is absent")
#: The title request's own usage (DeepSeek's), as the corpus records it: 140 misses, 5 out.
TITLE = {"prompt_tokens": 140, "completion_tokens": 5, "prompt_cache_hit_tokens": 0, "prompt_cache_miss_tokens": 140}
PRICED = f"usage by request,{SID} #0,1,140,0,0,0,0,0,5,0.000024,"  # reusable 0 after 140 (session 46)
NOTE = "note: 1 request(s) priced from the capture's usage (their log holds none)"


def _records() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (A / "wire.jsonl").read_text().splitlines()]


def _wire(tmp_path: Path, response: Any, **extra: Any) -> Path:
    """The corpus capture, the title request's (line 2) recorded response ``response``, its record given ``extra``."""
    records = _records()
    records[1] = {**records[1], **extra, "response": response}
    path = tmp_path / "wire.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _har(tmp_path: Path, response: dict[str, Any]) -> Path:
    """The corpus capture as a HAR file, the title request's (entries[1]) response ``response``."""
    entries = []
    for record in _records():
        entries.append({"startedDateTime": record["time"], "response": record["response"], "request": {
            "method": "POST", "url": "http://127.0.0.1:18090" + record["path"],
            "headers": [{"name": k, "value": v} for k, v in record["headers"].items()],
            "postData": {"mimeType": "application/json", "text": record["body"]}}})
    entries[1]["response"] = response
    path = tmp_path / "cap.har"
    path.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}))
    return path


def _usage(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], capture: Path
           ) -> tuple[int, str, list[str]]:
    """``usage --by request --format csv`` of the corpus log with ``capture``: exit code, the title
    request's row (up to its cost), stderr lines."""
    code, out, err = invoke(monkeypatch, capsys, "usage", str(LOG), "--capture", str(capture), "--by", "request",
                            "--format", "csv")
    row = next(line for line in out.splitlines() if line.startswith(f"usage by request,{SID} #0,"))
    return code, row, err


def _unpriced(why: str) -> list[str]:
    return [f"warning: 1 request(s) unpriced: the capture's usage is damaged (wire.jsonl line 2: {why})"]


# -- D1: a wire.jsonl record is told by the file's format ----------------------------------------

@needs_corpus
@pytest.mark.parametrize("log", [{}, {"entries": [{"response": {"usage": {"prompt_tokens": 999999,
                                                                          "completion_tokens": 5}}}]}])
def test_a_wire_record_with_a_log_field_is_priced_by_its_response(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], log: Any) -> None:
    capture = _wire(tmp_path, {"usage": TITLE}, log=log)
    code, row, err = _usage(monkeypatch, capsys, capture)
    assert (code, row.startswith(PRICED), err) == (0, True, [NOTE])
    read = read_capture(capture, keep=keep_usage)
    assert read.format == "wire-jsonl"
    assert [type(r) for r in read.records] == [_Told] * 3  # what is kept of each record: never the record
    assert read.records[1].told == Tokens(140, output=5)


@needs_corpus
def test_a_har_document_is_still_priced_by_its_entries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, row, err = _usage(monkeypatch, capsys, _har(tmp_path, {"status": 200, "usage": TITLE}))
    assert (code, row.startswith(PRICED), err) == (0, True, [NOTE])


# -- D2: a usage that mixes two conventions is damaged ---------------------------------------------

def _sse(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


START = {"type": "message_start", "message": {"usage": {"input_tokens": 140, "output_tokens": 1}}}


@pytest.mark.parametrize(("usage", "why"), [
    ({"prompt_tokens": 7, "completion_tokens": 5, "input_tokens": 140}, "prompt_tokens with input_tokens"),
    ({"input_tokens": 140, "output_tokens": 5, "prompt_cache_hit_tokens": 0},
     "prompt_cache_hit_tokens with input_tokens"),
    ({"input_tokens": 140, "output_tokens": 5, "cache_read_input_tokens": 3,
      "input_tokens_details": {"cached_tokens": 3}}, "cache_read_input_tokens with input_tokens_details"),
    ({"completion_tokens": 5, "output_tokens_details": {"reasoning_tokens": 1}},
     "completion_tokens with output_tokens_details"),
])
def test_a_usage_with_two_conventions_fields_is_damaged(usage: dict[str, Any], why: str) -> None:
    assert response_tokens({"usage": usage}, "w.jsonl line 1") == UnusableUsage(
        why=f"the capture's usage is damaged (w.jsonl line 1: the usage mixes conventions ({why}))")


def test_one_conventions_own_fields_still_price() -> None:
    deepseek = {**TITLE, "prompt_tokens_details": {"cached_tokens": 0}, "total_tokens": 145,
                "completion_tokens_details": {"reasoning_tokens": 2}}  # DeepSeek sends OpenAI's details too
    assert response_tokens({"usage": deepseek}) == Tokens(140, output=5, reasoning=2)
    assert response_tokens({"body": _sse(START, {"type": "message_delta", "usage": {"output_tokens": 5}})}) == \
        Tokens(140, output=5)


@needs_corpus
def test_a_delta_adding_another_conventions_field_is_damaged_in_every_view(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    body = _sse(START, {"type": "message_delta", "usage": {"output_tokens": 5, "prompt_tokens": 7}})
    code, row, err = _usage(monkeypatch, capsys, _wire(tmp_path, {"body": body}))
    unpriced = f"usage by request,{SID} #0,1,,,0,0,,,,,,,,,,,1,deepseek-v4-flash,"  # no count, no cost, no reusable
    assert (code, row.startswith(unpriced), err) == (
        0, True, _unpriced("the usage mixes conventions (prompt_tokens with input_tokens)"))


# -- D3: a count past a double is said as written ------------------------------------------------

@needs_corpus
@pytest.mark.parametrize(("literal", "shown"), [
    ("1" + "0" * 400, "a 401-digit number"), ("9" * 100_000, "a 100000-digit number"), ("1e400", "1e400"),
    ("-1E+400", "-1E+400"),
    # a count a double holds but past MAX_TOKENS: said as written, and why it is damaged
    ("12345678901234567890123", "12345678901234567890123 (past 1,000,000,000)"), ("1e20", "1e20 (past 1,000,000,000)"),
])
def test_a_count_past_a_double_is_said_as_written_never_inf(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], literal: str,
        shown: str) -> None:
    text = json.dumps({"usage": {**TITLE, "prompt_cache_miss_tokens": 0}}).replace(
        '"prompt_cache_miss_tokens": 0', f'"prompt_cache_miss_tokens": {literal}')
    capture = _wire(tmp_path, {"usage": TITLE})
    capture.write_text(capture.read_text().replace(json.dumps({"usage": TITLE}), text))
    code, row, err = _usage(monkeypatch, capsys, capture)
    assert (code, err) == (0, _unpriced(f"prompt_cache_miss_tokens {shown}"))
    # a body text says it alike (its events' and its document's numbers are parsed for the usage)
    assert response_tokens(text, "w").why == f"the capture's usage is damaged (w: prompt_cache_miss_tokens {shown})"
    assert response_tokens(f"data: {text}\n\n", "w").why == response_tokens(text, "w").why


def test_an_infinity_without_its_text_is_no_inf() -> None:
    assert response_tokens({"usage": {"input_tokens": float("inf"), "output_tokens": 1}}).why == (
        "the capture's usage is damaged (input_tokens a number past the double range)")


# -- D4: a response body is decoded as a request body is --------------------------------------------

def _gzip_b64(value: Any) -> str:
    return base64.b64encode(gzip.compress(json.dumps(value).encode(), mtime=0)).decode()


@needs_corpus
@pytest.mark.parametrize("response", [
    {"content": {"encoding": "base64", "text": _gzip_b64({"usage": TITLE})}},  # gzip inside base64, no header
    {"headers": {"Content-Encoding": "gzip"},
     "content": {"encoding": "base64", "text": _gzip_b64({"usage": TITLE})}},
    {"content": {"encoding": "BASE64", "text": base64.b64encode(json.dumps({"usage": TITLE}).encode()).decode()}},
    {"body": "\ufeffdata: " + json.dumps({"usage": TITLE}) + "\n\n"},  # a BOM before the first field
    {"body": "data: {\"choices\": [], \"usage\":\ndata: " + json.dumps(TITLE) + "}\n\n"},  # one event, two data lines
    {"body": "data:" + json.dumps({"usage": TITLE}) + "\r\n\r\ndata: [DONE]\r\n\r\n"},
    {"body": "\ufeff" + json.dumps({"usage": TITLE})},
])
def test_a_response_body_the_request_side_reads_is_priced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], response: Any) -> None:
    code, row, err = _usage(monkeypatch, capsys, _wire(tmp_path, response))
    assert (code, row.startswith(PRICED), err) == (0, True, [NOTE])


@needs_corpus
def test_a_har_response_gzip_in_base64_is_priced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    response = {"status": 200, "headers": [{"name": "content-encoding", "value": "gzip"}],
                "content": {"encoding": "base64", "text": _gzip_b64({"usage": TITLE})}}
    code, row, err = _usage(monkeypatch, capsys, _har(tmp_path, response))
    assert (code, row.startswith(PRICED), err) == (0, True, [NOTE])


@needs_corpus
@pytest.mark.parametrize(("response", "why"), [
    ({"body": json.dumps({"usage": TITLE}) + " garbage"}, "the response body is neither JSON nor an event stream"),
    ({"body": "upstream error {"}, "the response body is neither JSON nor an event stream"),
    ({"content": {"encoding": "base64", "text": "not base64 ~"}}, "content.text is not base64"),
    ({"content": {"encoding": "base64", "text": base64.b64encode(b'{"a": "\xff"}').decode()}},
     "content.text is not valid UTF-8 (byte 7)"),
    ({"content": {"encoding": "base64", "text": base64.b64encode(b"\x1f\x8b\x08\x00").decode()}},
     "the gzip body is cut off"),
])
def test_a_body_that_cannot_be_read_says_why(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], response: Any,
        why: str) -> None:
    code, row, err = _usage(monkeypatch, capsys, _wire(tmp_path, response))
    assert (code, err) == (0, _unpriced(why))


def test_an_error_response_and_an_empty_body_report_no_usage() -> None:
    assert [response_tokens(r) for r in ({"status": 503, "body": "Service Unavailable"}, {"body": ""}, "",
                                         {"body": ": comment only\n\n"})] == [None] * 4


def test_the_request_side_decodes_with_the_same_decoder(tmp_path: Path) -> None:
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    packed = base64.b64encode(gzip.compress(body, mtime=0)).decode()
    assert body_bytes(packed, encoding="Base64") == body  # gzip inside base64, the encoding in any case
    entries = [{"request": {"method": "POST", "url": "http://h/chat/completions",
                            "postData": {"mimeType": "application/json", "encoding": encoding, "text": text}}}
               for encoding, text in (("BASE64", base64.b64encode(body).decode()), ("base64", packed))]
    (tmp_path / "c.har").write_text(json.dumps({"log": {"entries": entries}}))
    assert [c.body for c in load_capture(tmp_path / "c.har")] == [body, body]
    with pytest.raises(BodyDecodeError, match=r"^postData.text is not base64$"):
        body_bytes("~", encoding="base64", field="postData.text")


# -- D7: a capture that is no UTF-8 text -----------------------------------------------------------

@needs_corpus
def test_a_har_file_that_is_no_utf8_is_refused_by_its_byte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    har = _har(tmp_path, {"status": 200, "usage": TITLE})
    data = har.read_bytes()
    at = data.index(b"chat/completions")
    har.write_bytes(data[:at] + b"\xed\xa0\x80" + data[at:])  # a lone surrogate's CESU-8 bytes
    code, out, err = invoke(monkeypatch, capsys, "diff", str(LOG), "--capture", str(har))
    assert (code, err) == (2, [f"error: {har}: not valid UTF-8 (byte {at}) (hint: a capture is UTF-8 text: the "
                               "file is damaged, or was saved in another encoding)"])


@needs_corpus
def test_a_wire_line_that_is_no_utf8_is_refused_by_its_byte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    wire = _wire(tmp_path, {"usage": TITLE})
    lines = wire.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"POST"', b'"PO\xffST"')
    wire.write_bytes(b"".join(lines))
    code, out, err = invoke(monkeypatch, capsys, "diff", str(LOG), "--capture", str(wire))
    at = lines[2].index(b"\xff")
    assert (code, err) == (2, [f"error: {wire}: line 3: not valid UTF-8 (byte {at}) (hint: a capture is UTF-8 "
                               "text: the file is damaged, or was saved in another encoding)"])
