"""Session 39 (issue 17 leftovers): what a redacted capture still told about its sender's network and requests.

1. An IPv6 address (a URL's ``[2a00:1450::1]``, a query string, a kept header's text, ``X-Forwarded-For``,
   ``Forwarded``'s ``for="[...]"``) takes a placeholder as long as it in RFC 3849's ``2001:db8::/32`` (shorter
   ones in RFC 6666's ``100::/64`` or the IETF's unassigned ``::/8``), the same for the same salt wherever it
   stands; ``::1`` stays, and an IPv4-mapped one (``::ffff:10.0.0.7``) keeps ``::ffff:`` before the IPv4
   address's own placeholder. A URL holding one still parses (its brackets and port kept).
2. A vendor's or a proxy's request id in a kept header (``x-request-id``, ``request-id``, ``cf-ray``,
   ``x-amzn-requestid``, ``apigw-requestid``, ``x-amzn-trace-id``...) becomes a pseudonym of its shape (its
   length, a hex run hex, the case of its letters, cf-ray's ``-SJC``); pi-ai's ``x-client-request-id``, which
   ``diff`` pairs by, stays.
3. A percent-encoded address (``%31%30.0.0.1``, ``gw.corp%3A8080``, a URL in a query value,
   ``?next=http%3A%2F%2F10.1.2.3%2F``) is found read decoded, and its placeholder written back encoded as it was.
"""

from __future__ import annotations

import ipaddress
import json
import random
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
from _cli import invoke
from _golden import CORPUS

from dsh_audit.redact import Placeholders, Redactor, check_bundle, redact
from dsh_audit.redact._ipv6 import reserved_ipv6
from dsh_audit.redact._capture import _har_headers, _headers
from dsh_audit.redact._hosts import host_value, redact_addresses, redact_host, redact_query_value, redact_url

SALT = "redact39"
A_CHAT = CORPUS / "live" / "a-chat"
C3 = CORPUS / "live-pi" / "c3-openai-compat"
needs_corpus = pytest.mark.skipif(not (A_CHAT.is_dir() and C3.is_dir()), reason="../shared/corpus is absent")
DOCUMENTATION, DISCARD, RESERVED = (ipaddress.ip_network(n) for n in ("2001:db8::/32", "100::/64", "::/8"))


def _redactor() -> Redactor:
    return Redactor(Placeholders(SALT.encode()))


# --- 1. IPv6 -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("host", "placeholder"), [
    ("2a00:1450:4001:82a::200e", "2001:db8::5412:411d:6324"),
    ("[2a00:1450::1]:443", "[2001:db8::1e]:868"),  # the bare address is the prefix of its bracketed form's
    ("2001:db8:85a3:8d3:1319:8a2e:370:7348", "2001:db8:f366:22a8:13fb:a791:082:9a4"),  # no "::": 8 groups
    ("fd00::1", "100::ee"),  # 7 characters: RFC 6666's discard-only block
    ("fe80::1%25eth0", "100::63%25yhx2"),  # its zone (an interface's name, a machine's...): its % kept
    ("[fe80::1%25alice-laptop]:80", "[100::63%25rpadc-fbfyrm]:63"),
    ("::1", "::1"), ("[::1]:8080", "[::1]:7790"),  # loopback stays loopback (its port drawn as an IPv4 one's)
    ("::ffff:10.0.0.7", "::ffff:10.1.0.9"), ("10.0.0.7", "10.1.0.9"),  # mapped: the IPv4 address's placeholder
    ("::ffff:127.0.0.1", "::ffff:127.0.1.8"),
])
def test_an_ipv6_host_takes_a_placeholder_in_a_block_that_names_no_one(host: str, placeholder: str) -> None:
    assert redact_host(host, _redactor()) == placeholder


def test_every_ipv6_placeholder_is_an_address_as_long_in_a_reserved_block() -> None:
    draw, redactor, again = random.Random(39), _redactor(), _redactor()
    for _ in range(300):
        groups = [f"{draw.randrange(65536):x}" for _ in range(8)]
        start = draw.randrange(8)
        width = draw.randrange(0, 9 - start)
        address = str(ipaddress.IPv6Address(":".join(groups[:start] + ["0"] * width + groups[start + width:])))
        if draw.random() < 0.2:  # six groups written out, and an IPv4 address
            address = ":".join(groups[:6]) + ":" + ".".join(str(draw.randrange(256)) for _ in range(4))
        if ipaddress.IPv6Address(address).is_loopback:
            continue
        placeholder = redact_host(address, redactor)
        parsed = ipaddress.IPv6Address(placeholder)  # raises when it is no address
        assert len(placeholder) == len(address) and placeholder == redact_host(address, again)
        if "." not in address:  # (a head before an IPv4 address: that address's own placeholder after it)
            first = DOCUMENTATION if len(address) >= 10 else DISCARD if len(address) >= 5 else RESERVED
            # or, its first draws given to other addresses (session 39), the discard block or the IETF's ::/4
            assert parsed in first or parsed in DISCARD or parsed in ipaddress.ip_network("::/4"), (address, parsed)
        url = f"http://[{address}]:8080/v1"
        assert urlsplit(redact_url(url, redactor)).hostname == placeholder.lower()


def test_every_width_of_an_address_or_a_head_has_a_reserved_form() -> None:
    for width in range(3, 40):
        address = ipaddress.IPv6Address(reserved_ipv6(width, "0123456789abcdef", head=False))
        assert address in (DOCUMENTATION if width >= 11 else DISCARD if width >= 6 else RESERVED), width
    for width in range(3, 31):
        head = reserved_ipv6(width, "fedcba9876543210", head=True)
        assert (len(head), head[-1]) == (width, ":")
        assert ipaddress.IPv6Address(head + "192.0.2.1") in (DOCUMENTATION if width >= 11 else DISCARD
                                                              if width in (7, 8, 9, 10) else RESERVED), width
    # review 40: drawn zeros never make ``0::`` (``::``, the unspecified address, which stays) or a ``::`` head
    zeros = [reserved_ipv6(w, "0" * 40, head=head, layout=n) + ("0.0.0.0" if head else "")
             for head, widths in ((False, range(3, 40)), (True, range(3, 31))) for w in widths for n in range(4)]
    assert 0 not in {int(ipaddress.IPv6Address(p)) for p in zeros} and zeros[:4] == ["1::"] * 4


def test_ipv6_addresses_in_text_urls_and_address_headers_take_the_same_placeholder() -> None:
    r = _redactor()
    text = "from 2a00:1450::1 and [fd00::1]:80 via ::ffff:10.0.0.7, not ::1, 12:30:45, dead::beef or 10.0.0.7."
    assert redact_addresses(text, r) == \
        "from 2001:db8::1e and [100::ee]:80 via ::ffff:10.1.0.9, not ::1, 12:30:45, dead::beef or 10.1.0.9."
    assert redact_url("https://[2a00:1450::1]:8443/v1?ip=2a00:1450::1&peer=[fd00::1]:80#::ffff:10.0.0.7", r) == \
        "https://[2001:db8::1e]:2907/v1?ip=2001:db8::1e&peer=[100::ee]:16#::ffff:10.1.0.9"
    assert host_value("X-Forwarded-For", "2a00:1450::1, ::ffff:10.0.0.7, unknown, 10.0.0.7", r) == \
        "2001:db8::1e, ::ffff:10.1.0.9, unknown, 10.1.0.9"
    assert host_value("Forwarded", 'for="[2a00:1450::1]:4711";by=[fd00::1];proto=https', r) == \
        'for="[2001:db8::1e]:8995";by=[100::ee];proto=https'


# --- 3. percent-encoded addresses ----------------------------------------------------------------------------


def test_a_percent_encoded_address_is_found_and_its_placeholder_encoded_as_it_was() -> None:
    r = _redactor()
    assert redact_addresses("%31%30.0.0.7", r) == "%31%30.1.0.9"
    assert redact_addresses("%5B2a00%3a1450%3A%3A1%5D", r) == "%5B2001%3adb8:%3A%31e%5D"  # the case of each escape
    assert unquote(redact_addresses("%5B2a00%3a1450%3A%3A1%5D", r)) == "[2001:db8::1e]"
    assert redact_query_value("http%3A%2F%2F10.1.2.3%2Fcb", r) == "http%3A%2F%2F10.1.4.0%2Fcb"
    url = "/v1?next=http%3A%2F%2F10.1.2.3%2Fcb&a=%31%30.0.0.7&up=gw.corp%3A8080&v6=%5Bfd00%3A%3A1%5D%3A443&t=12:30"
    assert redact_url(url, r) == \
        "/v1?next=http%3A%2F%2F10.1.4.0%2Fcb&a=%31%30.1.0.9&up=af.uznq%3A7878&v6=%5B100:%3A%65e%5D%3A185&t=12:30"
    # a URL in a URL's query value: its host, and the address of its own query
    assert redact_url("/v1?n=http%3A%2F%2F%5B2a00%3A1450%3A%3A1%5D%3A8080%2Fx%3Fip%3D10.0.0.7", r) == \
        "/v1?n=http%3A%2F%2F%5B2001%3Adb8:%3A%31e%5D%3A2072%2Fx%3Fip%3D10.1.0.9"
    assert redact_url("/v1?q=%zz%2&t=100%25", r) == "/v1?q=%zz%2&t=100%25"  # no address, no change


def test_urls_nested_without_end_are_read_a_few_deep_and_never_crash() -> None:
    url = "http://10.0.0.7/" + "?u=http://10.0.0.7/" * 3000
    redacted = redact_url(url, _redactor())
    assert len(redacted) == len(url) and "10.0.0.7" not in redacted


# --- 2. request ids ------------------------------------------------------------------------------------------

HEADERS = {"x-request-id": "req_011CVaBcDeFgHiJkLmNoPqRs", "request-id": "req_011CVaBcDeFgHiJkLmNoPqRs",
           "CF-Ray": "8f3a2b1c4d5e6f70-SJC", "x-amzn-requestid": "c5b3e1f2-8a9d-4e7b-9c0a-1d2e3f4a5b6c",
           "apigw-requestid": "Bx1yZj8FoAMEbXw=",
           "x-amzn-trace-id": "Root=1-67891233-abcdef012345678912345678;Sampled=1",
           "x-client-request-id": "c5b3e1f2-8a9d-4e7b-9c0a-1d2e3f4a5b6c", "x-note": "from 2a00:1450::1",
           "content-type": "application/json"}
REDACTED = {"x-request-id": "req_989EMcLfXyXrVcPgSgCnHkFp", "request-id": "req_989EMcLfXyXrVcPgSgCnHkFp",
            "CF-Ray": "7b7f9d3b4a8b6c89-SJC", "x-amzn-requestid": "a0f1c2b0-7b9c-3b9c-8d1f-0d9d5d6f4b8a",
            "apigw-requestid": "Mo7qXj9ZtGIIwBa=",
            "x-amzn-trace-id": "Root=1-52979361-bcfcab937830327518002663;Sampled=1",  # names before = and 1-digit runs
            "x-client-request-id": "c5b3e1f2-8a9d-4e7b-9c0a-1d2e3f4a5b6c",  # pi-ai's session id: diff pairs by it
            "x-note": "from 2001:db8::1e", "content-type": "application/json"}


def test_request_ids_become_pseudonyms_of_their_shape_in_both_header_forms() -> None:
    assert _headers(HEADERS, _redactor(), [], None) == REDACTED
    assert _har_headers([{"name": k, "value": v} for k, v in HEADERS.items()], _redactor(), [], None) == \
        [{"name": k, "value": v} for k, v in REDACTED.items()]


# --- the bundles ---------------------------------------------------------------------------------------------

PLANTED_REQUEST = {"x-forwarded-for": "2a00:1450:4001:82a::200e, ::ffff:172.16.9.9",
                   "forwarded": 'for="[2a00:1450:4001:82a::200e]:4711";proto=https',
                   "x-note": "relayed by fd12:3456:789a::1 for %31%37%32.16.9.9",
                   "referer": "http://gw.corp/cb?next=http%3A%2F%2F10.1.2.3%2F&up=gw-secret.corp%3A8080",
                   "x-request-id": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"}
PLANTED_RESPONSE = {"request-id": "req_011CVaBcDeFgHiJkLmNoPqRs", "cf-ray": "8f3a2b1c4d5e6f70-SJC",
                    "x-amzn-requestid": "c5b3e1f2-8a9d-4e7b-9c0a-1d2e3f4a5b6c", "apigw-requestid": "Bx1yZj8FoAMEbXw="}
LEAKS = ("2a00:1450", "172.16.9.9", "fd12:3456", "%31%37%32", "10.1.2.3", "gw-secret", "0f1e2d3c", "011CVaBcDe",
         "8f3a2b1c", "c5b3e1f2", "Bx1yZj8Fo")


def _planted(scenario: Path, folder: Path) -> Path:
    records = [json.loads(line) for line in (scenario / "wire.jsonl").read_text("utf-8").splitlines()]
    for record in records:
        record["headers"] = {**record["headers"], **PLANTED_REQUEST}
        record["response"] = {**record["response"],
                              "headers": {**PLANTED_RESPONSE, "content-type": "text/event-stream"}}
    wire = folder / "wire.jsonl"
    wire.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return wire


def _usage(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], log: Path, capture: Path) -> Any:
    code, out, err = invoke(monkeypatch, capsys, "usage", "--capture", str(capture), "--json", str(log))
    return code, [{k: v for k, v in row.items() if k != "path"} for row in json.loads(out)["rows"]], err


@needs_corpus
@pytest.mark.parametrize("scenario", [A_CHAT, C3], ids=["live", "live-pi"])
def test_a_redacted_bundle_keeps_no_address_nor_request_id_and_its_verdicts_and_usage(
        scenario: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = next((scenario / "session-logs").glob("*.jsonl"))
    wire = _planted(scenario, tmp_path)
    routes = scenario / "inputs" / "pi-ai-routes.patch.yml"
    (tmp_path / "out").mkdir()
    result = redact(log, tmp_path / "out" / "session.jsonl", salt=SALT, capture=wire,
                    routes=routes if routes.is_file() else None)
    assert (result.mismatched, result.unrendered) == ((), ())
    assert result.capture is not None
    written = result.capture.read_text("utf-8")
    assert [leak for leak in LEAKS if leak in written] == []
    r = _redactor()
    for line in written.splitlines():
        record = json.loads(line)
        assert {k: record["headers"][k] for k in PLANTED_REQUEST} == {
            "x-forwarded-for": "2001:db8::5412:411d:6324, ::ffff:192.0.2.95",
            "forwarded": 'for="[2001:db8::5412:411d:6324]:7085";proto=https',
            "x-note": "relayed by 2001:db8::df2:8f6 for %31%39%32.0.2.95",
            "referer": f"http://{redact_host('gw.corp', r)}/cb?next=http%3A%2F%2F10.1.4.0%2F&up="
                       f"{redact_host('gw-secret.corp:8080', r).replace(':', '%3A')}",
            "x-request-id": "9a1e5c3b-3e2f-5905-7179-b7e3a1d2d3a4"}
        assert record["response"]["headers"] == {
            "request-id": "req_989EMcLfXyXrVcPgSgCnHkFp", "cf-ray": "7b7f9d3b4a8b6c89-SJC",
            "x-amzn-requestid": "a0f1c2b0-7b9c-3b9c-8d1f-0d9d5d6f4b8a", "apigw-requestid": "Mo7qXj9ZtGIIwBa=",
            "content-type": "text/event-stream"}
    assert check_bundle(result.output).ok
    code, _, err = invoke(monkeypatch, capsys, "redact", "--check", str(result.output))
    routed = f"note: rendered with the bundle's redacted route configuration {result.output}.routes.yml"
    assert (code, err) == (0, [routed] if routes.is_file() else [])
    assert _usage(monkeypatch, capsys, result.output, result.capture) == _usage(monkeypatch, capsys, log, wire)
