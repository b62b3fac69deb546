"""Session 37: redact decodes captured bodies as every reader does (:func:`dsh_audit._body_decode.body_bytes`),
and a header's members DSH does not define hold clean text.

A HAR ``response.content.text`` is base64 when its ``encoding`` names base64 in any letter case, and
gzip when that base64 holds gzip data or the response's ``Content-Encoding`` says gzip: its secrets go
then too (before, ``BASE64`` and gzip bodies were one opaque content string, their secrets uncounted).
The redacted text is written back base64-encoded when ``encoding`` names base64, inflated either way,
as a redacted request body is: HAR 1.2 sets ``content.text`` to the body HTTP-decoded (review 40; a
``wire.jsonl`` ``body_base64``, the bytes as sent, is compressed again: ``test_redact39b``). Inputs redact
read before keep their written text exactly.
"""

from __future__ import annotations

import base64
import gzip
import zlib
import json
from pathlib import Path
from typing import Any

import pytest
from test_redact33 import _inputs

from dsh_audit._body_decode import body_bytes
from dsh_audit.capture import load_capture
from dsh_audit.redact import Placeholders, Redactor, check_bundle, redact
from dsh_audit.redact._response import gzip_bytes, redact_content_text

SALT = b"body37"
KEY = "sk-proj-" + "Q3vT8xLm2Rk9Wp4Zy7Hd" + "T3BlbkFJ" + "a1B2c3D4e5F6g7H8i9J0"  # a fake OpenAI project key
BODY = json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": "deepseek-chat", "choices": [
    {"index": 0, "message": {"role": "assistant", "content": "Use " + KEY + " now"}, "finish_reason": "stop"}]})
# BODY redacted (salt SALT): its structure and structural strings stay, the content is a placeholder
REDACTED = ('{"id": "chatcmpl-1", "object": "chat.completion", "model": "deepseek-chat", "choices": [{"index": 0, '
            '"message": {"role": "assistant", "content": "9dv^Di:rV3S(UiOV63kOIwE1FxGqdNSTQNuNEr4CpElNIOdA7d7PYnc'
            'Z1CU6)LcQ"}, "finish_reason": "stop"}]}')


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _gz(text: str) -> bytes:
    return gzip.compress(text.encode("utf-8"), mtime=0)


def _redacted(text: str, encoding: Any, *, gzip_header: bool = False) -> tuple[str, dict[str, int]]:
    redactor = Redactor(Placeholders(SALT))
    out = redact_content_text(text, encoding, redactor, coding="gzip" if gzip_header else None)
    return out, dict(redactor.secrets)


def test_a_plain_response_is_redacted_as_before() -> None:
    assert _redacted(BODY, None) == (REDACTED, {"openai_api_key": 1})
    assert _redacted(_b64(BODY.encode()), "base64") == (_b64(REDACTED.encode()), {"openai_api_key": 1})


@pytest.mark.parametrize("encoding", ["BASE64", "Base64"])
def test_a_base64_response_in_any_letter_case_loses_its_secret(encoding: str) -> None:
    out, secrets = _redacted(_b64(BODY.encode()), encoding)
    assert (out, secrets) == (_b64(REDACTED.encode()), {"openai_api_key": 1})
    assert KEY not in base64.b64decode(out).decode()


@pytest.mark.parametrize("encoding", ["base64", "BASE64"])
def test_gzip_inside_base64_is_inflated_redacted_and_written_back_inflated(encoding: str) -> None:
    out, secrets = _redacted(_b64(_gz(BODY)), encoding)
    assert (out, secrets) == (_b64(REDACTED.encode()), {"openai_api_key": 1})
    # as a reader reads it back under the same encoding and gzip header: the redacted text
    assert body_bytes(out, encoding=encoding, content_coding="gzip") == REDACTED.encode()
    # the bytes as sent (a wire.jsonl body_base64): gzip data again, as its Content-Encoding says (review 40)
    sent = redact_content_text(_b64(_gz(BODY)), encoding, Redactor(Placeholders(SALT)), sent=True)
    assert sent == _b64(gzip_bytes(REDACTED.encode())) and body_bytes(sent, encoding=encoding) == REDACTED.encode()
    plain = Redactor(Placeholders(SALT))  # a body sent plain stays plain under a gzip header
    sent = redact_content_text(_b64(BODY.encode()), encoding, plain, coding="gzip", sent=True)
    assert sent == _b64(REDACTED.encode())


def test_gzip_base64_under_a_gzip_header_without_encoding_is_inflated() -> None:
    assert _redacted(_b64(_gz(BODY)), None, gzip_header=True) == (REDACTED, {"openai_api_key": 1})
    assert _redacted(BODY, None, gzip_header=True) == (REDACTED, {"openai_api_key": 1})  # stored inflated


def test_a_text_that_holds_no_coded_data_is_content_a_body_that_does_not_decode_is_replaced_whole() -> None:
    """Review B 45: a body whose coded data cannot be undone (gzip cut off) is one placeholder, its
    coding listed for the summary (test_redact45); a text no coding holds is content."""
    redactor = Redactor(Placeholders(SALT))
    assert _redacted("not base64 " + KEY, "BASE64") == (
        _b64(redactor.content("not base64 " + KEY).encode()), {"openai_api_key": 1})
    cut, undecoded = _b64(_gz(BODY)[:20]), list[str]()
    assert redact_content_text(cut, "base64", Redactor(Placeholders(SALT)), undecoded=undecoded) == _b64(
        Redactor(Placeholders(SALT)).content(cut).encode()) and undecoded == ["gzip"]
    assert _redacted("lone \ud800 " + KEY, None) == (Redactor(Placeholders(SALT)).content("lone \ud800 " + KEY),
                                                    {"openai_api_key": 1})


def _har(tmp_path: Path, responses: list[tuple[dict[str, Any], list[dict[str, str]]]],
         post_encoding: str | None = None) -> tuple[Path, Path]:
    log, wire = _inputs(tmp_path)
    body = load_capture(wire)[0].body
    post: dict[str, Any] = {"mimeType": "application/json", "text": body.decode()}
    if post_encoding is not None:
        post = {**post, "text": _b64(body), "encoding": post_encoding}
    har = tmp_path / "capture.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "creator": {"name": "proxy", "version": "1"}, "entries": [{
        "startedDateTime": "2026-12-06T10:00:00.000Z", "time": 5,
        "request": {"method": "POST", "url": "https://api.deepseek.com/chat/completions", "httpVersion": "HTTP/1.1",
                    "headers": [], "cookies": [], "queryString": [], "postData": post, "headersSize": -1,
                    "bodySize": len(body)},
        "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "headers": headers,
                     "cookies": [], "content": content, "redirectURL": "", "headersSize": -1, "bodySize": -1},
        "cache": {}, "timings": {"send": 1, "wait": 3, "receive": 1}} for content, headers in responses]}}))
    return log, har


def test_a_har_with_base64_and_gzip_responses_is_redacted(tmp_path: Path) -> None:
    gzip_header = [{"name": "Content-Encoding", "value": "gzip"}]
    contents = [({"size": len(BODY), "mimeType": "application/json", "text": _b64(BODY.encode()), "encoding": "BASE64"},
                 []),
                ({"size": len(BODY), "mimeType": "application/json", "text": _b64(_gz(BODY)), "encoding": "base64"},
                 gzip_header),
                ({"size": len(BODY), "mimeType": "application/json", "text": _b64(_gz(BODY))}, gzip_header)]
    # only the first entry's request is the log's: the others repeat it (a retry), responses all redacted
    log, har = _har(tmp_path, contents[:1])
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl", salt=SALT, capture=har)
    assert result.mismatched == () and result.capture is not None
    written = result.capture.read_text(encoding="utf-8")
    assert KEY not in written
    (entry,) = json.loads(written)["log"]["entries"]
    assert entry["response"]["content"]["encoding"] == "BASE64"
    text = base64.b64decode(entry["response"]["content"]["text"]).decode()
    assert json.loads(text)["choices"][0]["message"]["content"] != json.loads(BODY)["choices"][0]["message"]["content"]
    assert len(text) == len(BODY) and json.loads(text)["model"] == "deepseek-chat"
    assert check_bundle(tmp_path / "out" / "session.jsonl").ok
    # each way a response is stored redacts to the same text, written back as its encoding says
    texts = []
    for n, response in enumerate(contents):
        log, har = _har(tmp_path / str(n), [response])
        (tmp_path / str(n) / "out").mkdir()
        result = redact(log, tmp_path / str(n) / "out" / "session.jsonl", salt=SALT, capture=har)
        assert result.capture is not None
        (entry,) = json.loads(result.capture.read_text(encoding="utf-8"))["log"]["entries"]
        content = entry["response"]["content"]
        texts.append(base64.b64decode(content["text"]).decode() if "encoding" in content else content["text"])
        assert entry["response"]["headers"] == response[1]
    assert texts == [text] * 3


def test_a_base64_request_body_in_upper_case_is_written_back_base64(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    outs = []
    for name, encoding in (("a", None), ("b", "BASE64")):
        log, har = _har(tmp_path / name, [({"size": 0, "mimeType": "application/json"}, [])], post_encoding=encoding)
        (tmp_path / name / "out").mkdir()
        result = redact(log, tmp_path / name / "out" / "session.jsonl", salt=SALT, capture=har)
        assert result.mismatched == () and result.capture is not None
        (entry,) = json.loads(result.capture.read_text(encoding="utf-8"))["log"]["entries"]
        outs.append(entry["request"]["postData"])
        assert [c.body for c in load_capture(result.capture)] == [
            outs[-1]["text"].encode() if encoding is None else base64.b64decode(outs[-1]["text"])]
    assert outs[1] == {**outs[0], "text": _b64(outs[0]["text"].encode()), "encoding": "BASE64"}


# -- a header's members DSH does not define: no control character ---------------------------------

HEADER = {"type": "session", "version": 3, "id": "session-body37", "createdAt": 1, "cwd": "/tmp/x\x1b",
          "extra": {"note\x07": "a\x1bb\x07\n\u0085c", "list": ["\x01\x1f", 5, None, {"deep": "\t\u2028"}]},
          "label": "\x1b[2Jhi"}


def test_an_unknown_header_member_holds_no_control_character() -> None:
    out = Redactor(Placeholders(SALT)).record(HEADER)
    assert out == {"type": "session", "version": 3, "id": "session-body37", "createdAt": 1, "cwd": "/Y2G/c7",
                   "extra": {"note7": "FQdKANH", "list": ["QL", 5, None, {"deep": "9L"}]}, "label": "O<EIno"}
    unknown = json.dumps([out["extra"], out["label"]], ensure_ascii=False)
    assert [ch for ch in unknown if ch < " " or ch in "\x7f\x85\u2028\u2029"] == []


def test_a_printable_key_that_would_be_another_stays() -> None:
    out = Redactor(Placeholders(SALT)).record({**HEADER, "extra": {"a\x1b": "x", "aR": "y"}})
    assert list(out["extra"]) == ["a\x1b", "aR"]


@pytest.mark.parametrize(("packed", "coding", "sent", "written"), [
    (_gz(BODY), "deflate", False, _b64(REDACTED.encode())),
    (_gz(BODY), "deflate", True, _b64(gzip_bytes(REDACTED.encode()))),  # coded again as it was: gzip
    (zlib.compress(BODY.encode()), "gzip", False, _b64(REDACTED.encode())),
    (zlib.compress(BODY.encode()), "gzip", True, _b64(zlib.compress(REDACTED.encode(), 9))),
], ids=["gzip-as-deflate", "gzip-as-deflate-sent", "zlib-as-gzip", "zlib-as-gzip-sent"])
def test_data_under_a_header_that_names_another_coding_is_undone_by_its_magic(
        packed: bytes, coding: str, sent: bool, written: str) -> None:
    """Review B 45: the secret was uncounted ("none found") and the JSON lost when the header lied."""
    redactor, undecoded = Redactor(Placeholders(SALT)), list[str]()
    out = redact_content_text(_b64(packed), "base64", redactor, coding=coding, sent=sent, undecoded=undecoded)
    assert (out, dict(redactor.secrets), undecoded) == (written, {"openai_api_key": 1}, [])
