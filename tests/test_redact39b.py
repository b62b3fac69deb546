"""Session 39, fuzz 23: what redact still broke or kept of a capture's hosts and recorded response bodies.

1. A host written percent-encoded (``http://%31%30%2E%30%2E%30%2E%35:8080``) lost its escapes: their hex digits
   were redacted as text (``%5H``, ``%3Z``). It is redacted as read decoded, the placeholder of the same host
   written plainly, each changed character re-encoded as it was, so every escape is an escape still.
2. A host a URL parser reads as an IPv4 address written as numbers (``0x7f000001``, ``2130706433``,
   ``0177.0.0.1``, ``127.1``) kept its digits. It takes its dotted quad's placeholder (a loopback one stays one),
   written in its form, as long as it where hex or octal padding or the block allows it.
3. A recorded response's ``body_base64`` became random base64 of its length, no longer JSON. It is decoded,
   redacted as the body it holds (as a ``body`` text is) and encoded again.
"""

from __future__ import annotations

import base64
import gzip
import ipaddress
import json
import re
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from dsh_audit.redact import Placeholders, Redactor
from dsh_audit.redact._addresses import in_decoded, in_form, numeric_ipv4
from dsh_audit.redact._capture import _record
from dsh_audit.redact._hosts import redact_host, redact_url
from dsh_audit.redact._response import gzip_bytes, redact_response

SALT = b"redact39b"
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


def _redactor() -> Redactor:
    return Redactor(Placeholders(SALT))


@pytest.mark.parametrize(("url", "redacted"), [
    ("http://%31%30%2E%30%2E%30%2E%35:8080/", "http://%31%30%2E%37%2E%35%2E%36:9709/"),  # the fuzz case
    ("http://10.0.0.5:8080/", "http://10.7.5.6:9709/"),  # the same host written plainly
    ("http://%31%30.0.0.5:8080/", "http://%31%30.7.5.6:9709/"),  # partly encoded
    ("http://gw/a/%31%30%2e0.0.5/b", "http://hf/a/%31%30%2e7.5.6/b"),  # in the path, lower-case hex kept
    ("http://gw/?ip=%31%30%2E0.0.5&h=fe80%3A%3A1%25eth0", "http://hf/?ip=%31%30%2E7.5.6&h=100:%3A%303%25lfz7"),
    ("http://%5Bfd00::1%5D:80/", "http://%5B100::e0%5D:96/"),  # encoded brackets: an IPv6 host still
    ("http://gw%2Ecorp/", "http://hf%2Eplfd/"),
    ("http://%C3%A9.corp/", "http://%74.qwey/"),  # a UTF-8 character: one letter, its escape (review 41)
    ("http://api.openai%2Ecom/", "http://api.openai%2Ecom/"),  # a vendor's host, decoded, stays
])
def test_a_percent_encoded_host_keeps_valid_escapes(url: str, redacted: str) -> None:
    assert redact_url(url, _redactor()) == redacted
    assert _BAD_ESCAPE.search(redacted) is None


def test_a_percent_encoded_host_reads_as_the_placeholder_of_the_plain_host() -> None:
    redactor = _redactor()
    for host in ("%31%30%2E%30%2E%30%2E%35:8080", "%67%77.corp", "10%2E0.0.5", "%5Bfd00::1%5D:80"):
        out = redact_host(host, redactor)
        assert (len(out), _BAD_ESCAPE.search(out), unquote(out)) == (len(host), None,
                                                                     redact_host(unquote(host), redactor))


def test_in_decoded_writes_a_placeholder_of_another_length_plainly_between_the_escapes_kept() -> None:
    assert in_decoded("a%2Eb%2F", lambda text: text.replace("a.b", "abcd")) == "abcd%2F"
    assert in_decoded("x%2F%31", lambda text: text.replace("/1", "/ 9")) == "x%2F%209"


@pytest.mark.parametrize(("url", "redacted"), [
    ("http://0x7f000001/", "http://0x7f060903/"),  # loopback: still 127.x, hex of its width
    ("http://2130706433:8080/", "http://2131101955:9905/"),  # and its port the port 127.0.0.1:8080 takes
    ("http://0177.0.0.1/", "http://0177.6.9.3/"),
    ("http://127.1/", "http://127.1/"),  # a loopback placeholder would not keep the length: as written
    ("http://0XA000001/", "http://0XA030506/"),  # upper-case hex kept
    ("http://167772165/", "http://168232198/"),  # 10.0.0.5 -> 10.7.5.6, as a dotted host
    ("http://10.0.0.5./", "http://10.7.5.6./"),  # a trailing dot
    ("http://10.1/", "http://10.197894/"),  # 10.0.0.1's placeholder, longer written so
    ("http://%30x7f000001/", "http://%30x7f060903/"),  # encoded, its escape kept
    ("http://gw/?next=http%3A%2F%2F0x0a000005%2F", "http://hf/?next=http%3A%2F%2F0x0a070506%2F"),  # nested
    ("http://08.0.0.1/", "http://10.6.2.1/"),  # no octal number: a dotted quad as before
])
def test_a_numeric_ipv4_host_is_redacted_as_the_address_it_reads_as(url: str, redacted: str) -> None:
    assert redact_url(url, _redactor()) == redacted


def test_a_numeric_ipv4_host_takes_its_dotted_quads_placeholder() -> None:
    redactor = _redactor()
    assert (redact_host("10.0.0.5", redactor), redact_host("127.0.0.1", redactor)) == ("10.7.5.6", "127.6.9.3")
    assert [numeric_ipv4(h) for h in ("0x7f000001", "2130706433", "0177.0.0.1", "127.1", "1.2.3.4", "gw", "1.2.3.4.5",
                                      "256.1", "0x")] == ["127.0.0.1"] * 4 + [None, None, None, None, "0.0.0.0"]
    assert in_form("0x7f000001", "127.6.9.3") == "0x7f060903"
    redacted = redact_url("http://0x7f000001/", redactor)
    assert ipaddress.IPv4Address(int(urlsplit(redacted).hostname or "", 16)).is_loopback


def _body(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


_DOCUMENT = json.dumps({"id": "chatcmpl-1", "choices": [{"message": {"content": "hello from 10.0.0.7"}}],
                        "usage": {"prompt_tokens": 5}})
_REDACTED = ('{"id": "chatcmpl-1", "choices": [{"message": {"content": "VmoKM$IkwW#z5_B=O E"}}], '
             '"usage": {"prompt_tokens": 5}}')


def test_a_base64_response_body_is_redacted_as_the_json_it_holds() -> None:
    out = redact_response({"body_base64": _body(_DOCUMENT)}, _redactor())
    assert out == {"body_base64": _body(_REDACTED)}
    assert redact_response({"body": _DOCUMENT}, _redactor()) == {"body": _REDACTED}  # as a text body is


def test_a_base64_response_body_in_gzip_is_written_back_in_gzip() -> None:
    """Review 40: it was written back inflated under its ``Content-Encoding: gzip``, which then lied."""
    zipped = base64.b64encode(gzip.compress(_DOCUMENT.encode("utf-8"), mtime=0)).decode("ascii")
    value = {"headers": {"Content-Encoding": "gzip"}, "body_base64": zipped}
    out = redact_response(value, _redactor(), lambda headers: headers)
    assert out == {"headers": {"Content-Encoding": "gzip"},
                   "body_base64": base64.b64encode(gzip_bytes(_REDACTED.encode())).decode("ascii")}
    assert gzip.decompress(base64.b64decode(out["body_base64"])).decode() == _REDACTED


@pytest.mark.parametrize(("body", "redacted"), [
    (_body("plain text"), "ZGlUc2kpd2psWg=="),  # text: a content placeholder of its length, base64
    ("not base64!", "YjJLQEZORDdlRl4="),  # no base64: its text's placeholder, base64 still
    (5, 5),
])
def test_a_base64_response_body_that_holds_no_json(body: Any, redacted: Any) -> None:
    assert redact_response({"body_base64": body}, _redactor()) == {"body_base64": redacted}
    if isinstance(redacted, str):
        assert len(base64.b64decode(redacted, validate=True)) in (10, 11)


def test_a_capture_records_response_body_base64_stays_json() -> None:
    record = {"method": "POST", "path": "/v1", "headers": {}, "body": "{}",
              "response": {"status": 200, "body_base64": _body(_DOCUMENT)}}
    out = _record(record, b"{}", _redactor(), [])
    assert out["response"] == {"status": 200, "body_base64": _body(_REDACTED)}
    assert json.loads(base64.b64decode(out["response"]["body_base64"]))["usage"] == {"prompt_tokens": 5}


def test_a_host_of_thousands_of_digits_is_a_name_not_a_number() -> None:
    # int() refuses a decimal string past 4,300 digits: redact ended "unexpected ValueError" (exit 3)
    redactor = Redactor(Placeholders(SALT))
    host = redact_host("9" * 5000, redactor)
    url = redact_url("http://" + "9" * 5000 + "/", redactor)
    assert len(host) == 5000 and host != "9" * 5000 and url == f"http://{host}/"
