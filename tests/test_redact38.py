"""Session 38: ``redact --capture wire.jsonl`` redacts a record's response object as a HAR response is
(:func:`dsh_audit.redact._response.redact_content`, one path for both): a HAR-style ``content`` whose
``text`` is base64 (gzip too) is decoded, its secrets go and count, its content takes the placeholders
the request side's same text takes, and it is written back in its encoding; a ``body`` or ``text``
string is redacted as a response body. Before, such a response was one opaque placeholder: its
secrets uncounted, and the usage it reports (which ``usage --capture`` prices a title call by) lost.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from _golden import CORPUS
from test_redact_body37 import BODY, KEY as PROJECT_KEY, REDACTED, SALT as SALT37, _b64, _gz

from dsh_audit._body_decode import body_bytes
from dsh_audit.redact import Placeholders, Redactor, redact
from dsh_audit.redact._response import redact_content, redact_response

SCENARIO = CORPUS / "live" / "a-chat"
SALT = "redact38"
KEY = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"  # a fake API key
BASIC = "Basic " + "dXNlcjpzM2NyZXQtcGFzc3dvcmQ="  # an Authorization value
PLANTED = f"Use {KEY} and send Authorization: {BASIC} with it"


def _response(usage: dict[str, Any], content: str, *, packed: bool = False) -> dict[str, Any]:
    """A recorded chat completion holding ``content`` and ``usage``, its body base64 as HAR 1.2 keeps it (``packed``:
    the gzip data it was sent as, under its ``Content-Encoding: gzip``)."""
    body = {"id": "chatcmpl-38", "object": "chat.completion", "model": "deepseek-v4-flash", "choices": [
        {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}], "usage": usage}
    data = json.dumps(body).encode()
    return {"status": 200, "headers": {"content-type": "application/json", **({"content-encoding": "gzip"} if packed
                                                                              else {})}, "content": {
        "size": len(json.dumps(body)), "mimeType": "application/json", "encoding": "base64",
        "text": _b64(_gz(data.decode()) if packed else data)}}


def _decoded(response: dict[str, Any]) -> Any:
    assert response["content"]["encoding"] == "base64"
    return json.loads(body_bytes(response["content"]["text"], encoding="base64"))


def _usage_numbers(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], log: Path,
                   capture: Path) -> list[dict[str, Any]]:
    code, out, err = invoke(monkeypatch, capsys, "usage", "--capture", str(capture), "--json", str(log))
    assert (code, err) == (0, ["note: 1 request(s) priced from the capture's usage (their log holds none)"])
    return [{k: row[k] for k in ("requests", "tokens", "usage_unknown_requests", "cost_usd")}
            for row in json.loads(out)["rows"]]


@pytest.mark.skipif(not SCENARIO.is_dir(), reason="../shared/corpus is absent")
def test_a_base64_wire_response_loses_its_secrets_and_keeps_its_usage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = next((SCENARIO / "session-logs").glob("*.jsonl"))
    records = [json.loads(line) for line in (SCENARIO / "wire.jsonl").read_text(encoding="utf-8").splitlines()]
    asked = json.loads(records[0]["body"])["messages"][-1]["content"]  # the user's words of the first request
    usages = [record["response"]["usage"] for record in records]
    for record, content in zip(records, [PLANTED, asked, "done"]):
        record["response"] = _response(record["response"]["usage"], content, packed=content == "done")
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl", salt=SALT, capture=wire)
    assert (result.mismatched, result.notes) == ((), ())
    assert result.secrets == {"openai_api_key": {"occurrences": 1, "distinct": 1},
                              "authorization": {"occurrences": 1, "distinct": 1}}
    assert result.capture is not None
    written = result.capture.read_text(encoding="utf-8")
    redacted = [json.loads(line) for line in written.splitlines()]
    bodies = [_decoded(record["response"]) for record in redacted]
    for secret in (KEY, BASIC.split()[1], "dXNlcjpzM2NyZXQ"):
        assert secret not in written and all(secret not in json.dumps(body) for body in bodies)
    # the structure, the structural strings and the usage stay; the content is a placeholder
    assert [b["usage"] for b in bodies] == usages
    assert [(b["model"], b["choices"][0]["message"]["role"]) for b in bodies] == [("deepseek-v4-flash", "assistant")] * 3
    contents = [b["choices"][0]["message"]["content"] for b in bodies]
    assert [len(c) for c in contents] == [len(PLANTED), len(asked), 4] and contents[2] != "done"
    # the same text as the request side's takes the same placeholder there
    assert contents[1] == json.loads(redacted[0]["body"])["messages"][-1]["content"] != asked
    assert [r["response"]["content"]["mimeType"] for r in redacted] == ["application/json"] * 3
    # review 40: a HAR-style content that held gzip data is written HTTP-decoded, as HAR 1.2 defines its text
    # (the header, kept, says how the response travelled), and keeps its usage
    assert [base64.b64decode(r["response"]["content"]["text"])[:1] for r in redacted] == [b"{"] * 3
    assert redacted[2]["response"]["headers"]["content-encoding"] == "gzip"
    code, _, err = invoke(monkeypatch, capsys, "redact", "--check", str(result.output))
    assert (code, err) == (0, [])
    expected = [{"requests": 3, "tokens": {"cache_miss": 8200, "cache_read": 7936, "cache_write": 0, "output": 52,
                                           "reasoning": 24, "total": 16188},
                 "usage_unknown_requests": 0,
                 "cost_usd": {"cache_miss": 0.00123, "cache_read": 0.000023808, "cache_write": 0, "output": 0.0000312,
                              "total": 0.001285008}}]
    assert _usage_numbers(monkeypatch, capsys, log, wire) == expected
    assert _usage_numbers(monkeypatch, capsys, result.output, result.capture) == expected


def test_a_wire_response_content_takes_the_har_path() -> None:
    """gzip inside base64 under the response's gzip header: inflated, redacted, written back base64 (HAR 1.2's
    ``content.text`` is the body HTTP-decoded)."""
    response = {"status": 200, "headers": {"Content-Encoding": "gzip"},
                "content": {"mimeType": "application/json", "encoding": "base64", "text": _b64(_gz(BODY))}}
    redactor = Redactor(Placeholders(SALT37))
    # its other members as before, every value of a record: a header's value a placeholder
    assert redact_response(response, redactor) == {**response, "headers": {"Content-Encoding": "LZnd"},
                                                   "content": {**response["content"], "text": _b64(REDACTED.encode())}}
    assert dict(redactor.secrets) == {"openai_api_key": 1}
    har = Redactor(Placeholders(SALT37))  # HAR's headers are a list: the same content
    assert redact_content(response["content"], [{"name": "content-encoding", "value": "gzip"}], har,
                          frozenset({"mimeType", "encoding"})) == {**response["content"], "text": _b64(REDACTED.encode())}
    assert PROJECT_KEY in BODY


@pytest.mark.parametrize("key", ["body", "text"])
def test_a_wire_response_body_string_is_redacted_as_a_body(key: str) -> None:
    redactor = Redactor(Placeholders(SALT37))
    assert redact_response({"status": 200, key: BODY}, redactor) == {"status": 200, key: REDACTED}
    assert dict(redactor.secrets) == {"openai_api_key": 1}


def test_a_summary_response_is_redacted_as_before() -> None:
    summary = {"script": {"text": "I am a coding agent."}, "usage": {"prompt_tokens": 140, "completion_tokens": 5}}
    redactor = Redactor(Placeholders(SALT37))
    assert redact_response(summary, redactor) == Redactor(Placeholders(SALT37)).value(summary, "response")
