"""Session 40, fuzz round 24: what redact still broke or kept of a capture's addresses.

1. An IPv4 address written in other digits (Arabic-Indic ``١٠.0.0.5``, full-width ``１０.0.0.5``) crashed redact (exit 3,
   ``int()`` of its placeholder's letters): no resolver reads it as an address, so it is text, redacted as text is.
2. A request id kept every octet of an address in it (``gw-10.77.66.55-7f3a``: a run of 3 characters or fewer stays):
   its addresses and ``host:port`` take their placeholders first.
9. An IPv6 zone kept what followed its ASCII start (``%café-alice``, a Cyrillic ``%аlice``, a bidi control).
And the \\d, \\w, \\s, \\b review: a ``Forwarded`` extension's address, a ``Via`` comment's, a key glued to CJK text.

The CLI test skips when ``../shared/corpus`` is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import invoke, short_salt
from _golden import CORPUS

from dsh_audit.redact import Placeholders, Redactor
from dsh_audit.redact._capture import _headers
from dsh_audit.redact._hosts import redact_addresses, redact_host, redact_url
from dsh_audit.redact._secrets import find_secrets

A_CHAT = CORPUS / "live" / "a-chat"
ARABIC, WIDE = "\u0661\u0660.0.0.5", "\uff11\uff10.0.0.5"  # ١٠.0.0.5, １０.0.0.5


def _redactor() -> Redactor:
    return Redactor(Placeholders(b"b40"))


# --- 1. other digits are text --------------------------------------------------------------------------------

OTHER_DIGITS = {"x-note": f"{ARABIC} {WIDE} fe80::\u0661\u0662", "host": f"{ARABIC}:8080",
                "x-forwarded-for": "\uff11\uff10.\uff10.\uff10.\uff15, 10.0.0.5",
                "referer": f"http://[fe80::\u0661]/a?ip={ARABIC}&up={ARABIC}%3A80"}


def test_an_address_in_other_digits_is_text_redacted_as_text_is() -> None:
    r = _redactor()
    assert _headers(OTHER_DIGITS, r, [], None) == {
        "x-note": f"{ARABIC} {WIDE} 100::6\u0661\u0662",  # a kept header's text stays; its ASCII address goes
        "host": "zh.2.1.8:5573", "x-forwarded-for": "zp.w.y.v, 10.1.9.8",  # a host's text: shaped, letters
        "referer": f"http://[qs14::q]/a?ip={ARABIC}&up={ARABIC}%3A80"}
    assert redact_url(f"http://{ARABIC}:8080/v1", r) == "http://zh.2.1.8:5573/v1"


# --- 2. a request id's addresses -----------------------------------------------------------------------------

REQUEST_IDS = {"x-request-id": "gw-10.77.66.55-7f3a",
               "x-amzn-trace-id": "Root=1-5759e988-bd862e3fe1be46a994272793;Self=192.168.7.9",
               "x-correlation-id": "gw.corp:8443/fd00::1:8080"}
RESPONSE_IDS = {"x-request-id": "172.16.9.8:443-abc", "cf-ray": "10.1.2.3-SJC"}


def test_a_request_id_s_addresses_take_their_placeholders_and_no_octet_stays() -> None:
    r = _redactor()
    request, response = _headers(REQUEST_IDS, r, [], None), _headers(RESPONSE_IDS, r, [], None)
    assert request == {"x-request-id": "gw-192.0.2.227-0b8e",
                       "x-amzn-trace-id": "Root=1-8428b406-cb485b0de0fd83b766919443;Self=192.0.2.245",
                       "x-correlation-id": "rb.aizr:5094/2001:db8::cf"}
    assert response == {"x-request-id": "192.0.2.59:578-abc", "cf-ray": "10.4.3.9-SJC"}
    # the placeholder each has as a host, wherever it stands
    assert [redact_host(h, r) for h in ("10.77.66.55", "192.168.7.9", "172.16.9.8:443", "10.1.2.3", "gw.corp:8443")] \
        == ["192.0.2.227", "192.0.2.245", "192.0.2.59:578", "10.4.3.9", "rb.aizr:5094"]
    text = json.dumps([request, response])
    assert [run for run in ("10.77", "77.66", "66.55", "192.168", "168.7", "7.9", "172.16", "16.9", "9.8", "1.2.3",
                            ":443", "gw.corp", "8443", "fd00") if run in text] == []


# --- 9. an IPv6 zone of any characters ----------------------------------------------------------------------

ESCAPED_ZONES = "[fe80::4%25e%2Fmallory]:9 fe80::4%25mal%3Blory fe80::4%25a%2Cb%3Fc%23d%20e%40f%5Dlory"
ZONES = "fe80::1%caf\u00e9-alice fe80::1%\u0430lice fe80::1%\u202eevil [fe80::1%eth0]:80 fe80::1%ab, fe80::1%25ab"


def test_an_ipv6_zone_loses_its_whole_name_whatever_its_characters() -> None:
    assert _headers({"x-note": ZONES}, _redactor(), [], None) == {
        "x-note": "100::53%nccc-jghxw 100::53%nbwat 100::53%vaxdp [100::53%pwt4]:80 100::53%lc, 100::53%25lc"}
    # an escape of an ASCII character after it is read decoded (a comma), one past ASCII (``%ca``) as a zone's name
    assert redact_addresses("fd00::1%2C10.0.0.1 fe80::1%cafe", _redactor()) == "100::f8%2C10.7.9.8 100::53%nccq"
    # a URL's ``%25`` zone ends at a delimiter as written: an escaped one (``%2F``, ``%3B``...) is part of its name
    # (review C of session 40: read decoded, it ended the zone and ``mallory`` was kept)
    zoned = redact_addresses(ESCAPED_ZONES, _redactor())
    assert zoned == "[100::18%25p%2Fgqbbgfh]:9 100::18%25ava%3Bzkaq 100::18%25l%2Ce%3Fz%23c%20y%40k%5Dkimt"
    assert "lory" not in zoned and "lory" not in _headers({"user-agent": ESCAPED_ZONES}, _redactor(), [], None)[
        "user-agent"]


# --- the review: every \d, \w, \s and \b of dsh_audit/redact -------------------------------------------------


def test_a_forwarded_extension_s_and_a_via_comment_s_addresses_take_placeholders_of_no_one_s_machine() -> None:
    r = _redactor()
    assert _headers({"forwarded": "for=10.0.0.1;x=10.0.0.9, \u00e9for=10.0.0.1", "via": "1.1 gw (from 10.0.0.2)"},
                    r, [], None) == {"forwarded": "for=10.7.9.8;x=10.5.9.8, \u00e9for=10.7.9.8",
                                     "via": "1.1 rb (qptt 10.8.9.8)"}


@pytest.mark.parametrize(("text", "kind"), [
    ("キーはsk-proj-abcdefghijklmnopqrstuvwxyz123456です", "openai_api_key"),
    ("はAKIAIOSFODNN7EXAMPLEです", "aws_access_key_id"),
    ("トークンはBearer abcdefghijklmnop1234です", "bearer_token"),
    ("設定authorization: Basic dXNlcjpwYXNzd29yZA==", "authorization"),
    ("\u00e9ghp_abcdefghijklmnopqrstuvwxyz0123456789", "github_token"),
    ("task-0123456789abcdef0123456789abcdef", None),  # glued to an ASCII word: part of a longer token still
])
def test_a_key_glued_to_text_of_another_script_is_found(text: str, kind: str | None) -> None:
    assert [found.kind for found in find_secrets(text)] == ([kind] if kind else [])


# --- the CLI: exit 0, and the written capture ------------------------------------------------------------------


@pytest.mark.skipif(not A_CHAT.is_dir(), reason="../shared/corpus is absent")
def test_redact_of_a_capture_with_every_finding_exits_0_and_keeps_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    records = [json.loads(line) for line in (A_CHAT / "wire.jsonl").read_text("utf-8").splitlines()]
    for record in records:
        record["headers"] = {**record["headers"], "x-note": f"{ARABIC} {ZONES}", **REQUEST_IDS}
        record["response"] = {**record["response"], "headers": RESPONSE_IDS}
    records[0]["url"] = f"http://{ARABIC}:8080/chat/completions"
    (tmp_path / "wire.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    log = next((A_CHAT / "session-logs").glob("*.jsonl"))
    code, _, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(tmp_path / "r.jsonl"), "--capture",
                          str(tmp_path / "wire.jsonl"), "--salt", "b40")
    assert (code, err) == (0, [short_salt("b40")])
    written = [json.loads(line) for line in (tmp_path / "r.jsonl.wire.jsonl").read_text("utf-8").splitlines()]
    assert written[0]["url"] == "http://zh.2.1.8:5573/chat/completions"
    assert {k: written[0]["headers"][k] for k in ("x-note", *REQUEST_IDS)} == {
        "x-note": f"{ARABIC} 100::53%nccc-jghxw 100::53%nbwat 100::53%vaxdp [100::53%pwt4]:80 100::53%lc, "
                  "100::53%25lc",
        "x-request-id": "gw-192.0.2.227-0b8e",
        "x-amzn-trace-id": "Root=1-8428b406-cb485b0de0fd83b766919443;Self=192.0.2.245",
        "x-correlation-id": "rb.aizr:5094/2001:db8::cf"}
    assert written[0]["response"]["headers"] == {"x-request-id": "192.0.2.59:578-abc", "cf-ray": "10.4.3.9-SJC"}
