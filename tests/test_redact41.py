"""Session 41: issue 17's last part, an address percent-encoded inside a request id or a ``Via`` comment.

``req-10%2E0%2E0%2E7`` kept its address (each run of it, ``10``, ``2E0``, ``2E7``, is 3 characters or fewer), and a
run that held an escape (``3A8080``) was replaced as one, so ``%3A`` became ``%8D`` and ``%3D`` an invalid ``%8U``.
An id and a comment are now read decoded, each escape written back an escape where it stood.

Review 41: read decoded first, an escape beside an address hid it (``req-10.0.0.7%2Eab``: ``10.0.0.7.ab`` is no
address), a zone ``%12`` or ``%ab0`` was no zone and kept its name, and a UTF-8 character's escapes were read as
bytes, each replaced apart or kept (``caf%C3%A9`` became ``%6E%A9``, no UTF-8). The hosts as written are found first.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from dsh_audit.redact import Placeholders, Redactor
from dsh_audit.redact._capture import _headers
from dsh_audit.redact._hosts import host_value, redact_addresses, redact_host, redact_url
from dsh_audit.redact._request_ids import pseudonym

ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
HEADERS = {"x-request-id": "req-10%2E0%2E0%2E7", "cf-ray": "gw-10%2e0%2e0%2e7%3A8080-SJC",
           "traceparent": "00-%5Bfd00%3A%3A1%5D%3A443-01", "x-amzn-trace-id": "Root=fe80%3A%3A1%25eth0;Sampled=1",
           "request-id": "req_%41%42%43%44", "via": "1.1 gw.corp (10%2E0%2E0%2E2 alice)",
           # review 41
           "x-correlation-id": "req-10.0.0.7%2Eab", "x-amz-request-id": "req-%2E10.0.0.7",
           "x-b3-traceid": "req-fe80::1%12-x", "x-vercel-id": "req-fe80::1%ab0-x",
           "apigw-requestid": "srv.%D0%B1%D0%B4.corp:5432", "x-amz-cf-id": "req-%D9%A1%D9%A0.%D9%A0.%D9%A0.%D9%A5",
           "x-amzn-requestid": "req-caf%C3%A9-abc", "forwarded": "for=unknown;x=10.0.0.8%2Eab"}
#: Session 43: 10.0.0.8 was 10.0.0.9 until placeholders were keyed by scrypt, under which 10.0.0.7 becomes 10.0.0.9
#: (a planted original would then be found in the output by coincidence).
ISSUE17 = ("x-request-id", "cf-ray", "traceparent", "x-amzn-trace-id", "request-id", "via")
PLANTED = ("10.0.0.7", "10.0.0.2", "8080", "fd00", "fe80", "eth0", "ABCD", "alice", "gw.corp", "10.0.0.8", "%12",
           "%ab0", "srv", "бд", "corp", "5432", "١", "café")


def test_an_address_percent_encoded_in_a_request_id_or_a_via_comment_takes_its_placeholder() -> None:
    r = Redactor(Placeholders(b"b41"))
    out = _headers(HEADERS, r, [], None)
    assert out == {"x-request-id": "req-10%2E0%2E0%2E9", "cf-ray": "gw-10%2e0%2e0%2e9%3A1251-SJC",
                   "traceparent": "00-%5B100:%3A%630%5D%3A742-01",
                   "x-amzn-trace-id": "Root=100:%3A%65c%25ixp1;Sampled=1",
                   "request-id": "req_%45%41%41%41", "via": "1.1 ku.biqe (10%2E7%2E1%2E5 bvvzb)",
                   "x-correlation-id": "req-10.0.0.9%2Eab", "x-amz-request-id": "req-%2E10.0.0.9",
                   "x-b3-traceid": "req-100::ec%70-i", "x-vercel-id": "req-100::ec%eh2-f",
                   "apigw-requestid": "zbd.%62%6A.oyfq:9804", "x-amz-cf-id": "req-%31%30.%38.%30.%39",
                   "x-amzn-requestid": "req-gzr%6F-abc", "forwarded": "for=unknown;x=10.1.0.9%2Eab"}
    # read decoded, each address takes the placeholder it has as a host; the escapes stand where they stood
    assert [redact_host(h, r) for h in ("10.0.0.7", "10.0.0.7:8080", "[fd00::1]:443", "fe80::1%eth0", "10.0.0.2",
                                        "10.0.0.5", "10.0.0.8")] == [
        "10.0.0.9", "10.0.0.9:1251", "[100::c0]:742", "100::ec%ixp1", "10.7.1.5", "10.8.0.9", "10.1.0.9"]
    assert [unquote(out[k]) for k in ISSUE17[:-1]] == [pseudonym(unquote(HEADERS[k]), r) for k in ISSUE17[:-1]]
    assert unquote(out["via"]) == host_value("via", unquote(HEADERS["via"]), r)
    assert [[m.start() for m in ESCAPE.finditer(out[k])] for k in ISSUE17] == [
        [m.start() for m in ESCAPE.finditer(HEADERS[k])] for k in ISSUE17]
    decoded = unquote(" ".join(out.values()), errors="strict")  # UTF-8 still
    assert [p for p in PLANTED if p in decoded] == []


def test_an_address_an_escape_stands_beside_in_a_via_comment_or_any_text_takes_its_placeholder() -> None:
    r = Redactor(Placeholders(b"b41"))
    assert [host_value("via", "1.1 gw (10.0.0.7%2Eab)", r), redact_addresses("x 10.0.0.7%2Eab fe80::1%12-x", r),
            redact_url("http://gw/?ip=10.0.0.7%2Eab&h=%2E10.0.0.7", r)] == [
        "1.1 ku (10.0.0.9%2Ekq)", "x 10.0.0.9%2Eab 100::ec%70-i", "http://ku/?ip=10.0.0.9%2Eab&h=%2E10.0.0.9"]


# --- fuzz 27 (R1, R2): escapes around an address in a request id or a Via comment ------------------------------

FUZZ27 = {  # R1: escapes in an IPv6 address: read as a zone, its placeholder wrote %83, %00 (no UTF-8, a NUL)
    "fe80::%31": "100::e%63", "fe80::12%334:5678": "2001:db8%3A:60:8b",
    "%66%65%380::%312%334:%356%378": "%32%30%301:d%628%3A:6%30:%38b",
    # R2: a bare or odd escape touching the quad, or a label after it, kept every octet
    "%%10.77.66.55": "%%6892.0.2.183", "req-%10.77.66.55": "req-%3192.0.2.183",
    "gw-10.77.66.55.ab": "gw-192.0.2.183.ab", "gw-10.%37%37%2E%36%36%2e5%35%2Eab": "gw-192%2E%30%2E%32%2E%318%33%2Eab",
    "x%ZZ10.77.66.55": "x%ZZ192.0.2.183", "a%2G10.77.66.55": "a%2G192.0.2.183",
    "%10.77%2E%36%36%2e%35%35%": "%3192.0%2E%32%2E%31%38%33%", "req-10.77.66.55": "req-192.0.2.183"}
OCTET_RUNS = ("77.66.55", "10.77", "fe80", "1234", "5678", "12:34")


def _readable(text: str) -> str:
    """``text`` decoded, which must be UTF-8 with no control character."""
    decoded = unquote(text, errors="strict")
    assert decoded.isprintable(), decoded
    return decoded


def test_an_address_with_escapes_around_it_in_a_request_id_or_via_loses_every_octet_and_decodes_clean() -> None:
    r = Redactor(Placeholders(b"b41"))
    out = {value: pseudonym(value, r) for value in FUZZ27}
    assert out == FUZZ27
    assert redact_host("10.77.66.55", r) == "192.0.2.183" and redact_host("fe80::1234:5678", r) == "2001:db8::60:8b"
    assert [host_value("via", f"1.1 gw ({v})", r) for v in list(FUZZ27)[:3]] == [
        "1.1 ku (100::e%63)", "1.1 ku (2001:db8%3A:60:8b)", "1.1 ku (%32%30%301:d%628%3A:6%30:%38b)"]
    for value, written in out.items():  # an escape only where the input had one (a quad after %1 is one longer)
        spots = [[m.start() for m in ESCAPE.finditer(text)] for text in (value, written)]
        assert spots[0] == spots[1] or len(spots[0]) == len(spots[1]) and len(written) == len(value) + 1
        assert [run for run in OCTET_RUNS if run in written.lower() + _readable(written).lower()] == []
    # a zone's % never starts an escape of a control or a byte past ASCII: an escape where it had one, else none
    assert [redact_host(h, r) for h in ("fe80::1%s0-lan", "fe80::1%xa-lan", "fe80::1%60-x50", "fe80::1%12-x")] == [
        "100::ec%z9-uyw", "100::ec%kf-qwn", "100::ec%21-w76", "100::ec%70-i"]


#: What stands right before a planted quad (fuzz 28): a bare ``%`` (``%41.77.66.55``: as written ``41.77.66.55``,
#: decoded ``A.77.66.55``), one after a digit (``9%35.77.66.55``: decoded ``95.77.66.55``), one its decoding makes an
#: escape of (``%2%322.33.44.55``: decoded ``%222.33.44.55``), an escaped ``%`` (``%2522.33.44.55``).
PERCENT_BEFORE = ("", "%", "x%", "9%", "12%", "%2", "x%2", "%25", "%%")


@settings(max_examples=60, deadline=None, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=list(HealthCheck))
@given(st.lists(st.integers(20, 99).filter(lambda n: n != 51), min_size=4, max_size=4),
       st.text("%GZgw-x_.:abAB", max_size=4), st.sampled_from(PERCENT_BEFORE), st.text("%GZgw-x_.:abAB", max_size=4),
       st.lists(st.sampled_from(("", "upper", "lower")), min_size=30, max_size=30))
@example([41, 77, 66, 55], "req-", "%", "", [""] * 30).via("fuzz 28: a letter's escape")
@example([35, 77, 66, 55], "req-123", "%", "", [""] * 30).via("fuzz 28: a digit's escape after a digit")
@example([22, 33, 44, 55], "", "%2", "", [""] * 2 + ["upper"] + [""] * 27).via("fuzz 28: an escape decoded")
def test_a_request_id_never_keeps_a_planted_quad(numbers: list[int], before: str, percent: str, after: str,
                                                  escaped: list[str]) -> None:
    quad = ".".join(map(str, numbers))
    value = "".join(c if how == "" else f"%{ord(c):02X}" if how == "upper" else f"%{ord(c):02x}"
                    for c, how in zip(before + percent + quad + after, escaped + [""] * 40))
    written = pseudonym(value, Redactor(Placeholders(b"b41")))
    tail = quad.split(".", 1)[1]  # its last three octets: no placeholder holds two-digit ones
    assert tail not in written and tail not in unquote(written) and tail not in unquote(unquote(written))
    assert unquote(written, errors="strict").isprintable() or not unquote(value).isprintable()


# --- fuzz 27: a bidi override, a control or an unassigned character decoded in a request id -----------------------

UNREADABLE = {  # each such character, raw or escaped (its bytes one escape), a letter as in a Via comment
    "%E2%80%AE10.1.2.3": "%7410.6.3.0", "req-%E2%80%AEabc": "req-%76abc", "req-%e2%80%8bab": "req-%62ab",
    "req-%07x-abcd": "req-%74x-adcb", "x%00y": "x%75y", "a%C2%85b": "a%64b", "%CD%B8xx": "%6Dxx",
    "req-\u202eabc": "req-vabc", "req_%41-%2E~": "req_%41-%2E~"}


def test_a_request_id_keeps_no_bidi_control_or_unassigned_character_decoded_from_its_escapes() -> None:
    r = Redactor(Placeholders(b"b41"))
    assert {value: pseudonym(value, r) for value in UNREADABLE} == UNREADABLE
    assert host_value("via", "1.1 gw (%E2%80%AE10.1.2.3)", r) == "1.1 ku (%7410.6.3.0)"
    assert [_readable(pseudonym(value, r)) for value in list(UNREADABLE)[:3]] == ["t10.6.3.0", "req-vabc", "req-bab"]
