"""Session 42: fuzz 28's D1 and D2, a request id's or a ``Via`` comment's percent escapes read both ways.

D1: a request id kept an IPv4 address when a ``%`` stood before it: ``req-%41.77.66.55`` (as written the address,
decoded ``A.77.66.55``, each short run kept), ``req-123%35.77.66.55`` (decoded ``1235.77.66.55``), and an id whose
decoding holds an escape (``req-%2%32%30%34%2E...``, decoded ``req-%2204.248.247.75``). Neither the id as written
nor the id decoded (nor decoded twice) may hold an octet run of it now.

D2: a letter after a bare ``%`` could become a hex digit (a ``Via`` comment's ``%ZZ`` became ``%EA`` with salt s6,
which decodes to no UTF-8; a request id's ``x%gwcorp`` became ``x%ebibdw`` with s0): an escape only where the input
had one. Re-read E: two digits too (an IPv6 placeholder's layout is not its address's: ``E79%2::17A_``).

Fuzz 30b: R3, an id ``A:B`` of two addresses kept B's last octets (the first address's port ``10`` hid the quad
``10.77.66.55``); R1, an IPv6 zone with a UTF-8 character's escapes (``fe80::1%25eth0%C3%A9%25``) went on past its
end (a control or no UTF-8 decoded); R2, a ``Via`` hop that is no IPv6 address but holds ``%eth0`` became ``%fb..``.
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import pytest

from dsh_audit.redact import Placeholders, Redactor
from dsh_audit.redact._hosts import host_value
from dsh_audit.redact._request_ids import pseudonym

ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
IDS = ("req-%41.77.66.55", "req-%62.27.186.49", "req-%A1.77.66.55", "req-%C3%A1.77.66.55", "req-123%35.77.66.55",
       "req-%2%32%30%34%2E%32%34%38%2E%32%34%37%2E%37%35", "req-%2%382.3%34%2E%31%31%37%2E11%31",
       "%5A%3A:12%38.%370.%398.74", "x-%3A:12%38.%370.%398.74", "::bB12%37.46.41.35", "%3A:A65%2E59.93.56",
       "a.g:86.98.96.23", "req-%2fd5a:d3c8:8eab::49cd-x", "B%2:%3A%345CA", "172.16.9.8:10.77.66.55",
       "%0A172.16.9.8:10.77.66.55", "1.2.3.4:5.6.7.8:9.10.11.12", "req-%41.77.66.55:10.88.99.111")
TAILS = ("77.66.55", "27.186.49", "77.66.55", "77.66.55", "77.66.55", "248.247.75", "34.117.111", "70.98.74",
         "70.98.74", "46.41.35", "59.93.56", "98.96.23", "d3c8:8eab", "45CA", "77.66.55", "77.66.55", "5.6.7.8",
         "88.99.111")
ZONED = ("fe80::1%25e%E2%80%AEx%25", "fe80::1%25eth0%C3%A9%25")  # R1: a UTF-8 character's escapes one escape
ID_OUT = {
    b"s0": ["req-%3192.0.2.154", "req-%3198.51.100.8", "req-%3192.0.2.56", "req-%79%3192.0.2.56",
            "req-123%3203.0.113.8", "req-%2%32%30%319%38%2E%35%31%2E%31%30%30%2E%37%37",
            "req-%2%38203%2E%30%2E%31%31%33.4%32", "%65e%3A:20%33.%30.1%313.38", "x-%3A:20%33.%30.1%313.38",
            "::bB12%37.65.20.99", "%3A:A20%33.0.113.9", "a.g:192.0.2.125", "req-%32001:db8::ae6:bb0:bb-x",
            "B%h0%30%3A:ff",
            "192.0.2.80:192.0.2.219", "%6B192.0.2.80:192.0.2.219", "0.1.3.6:0.9.5.7:192.0.2.90",
            "req-%3192.0.2.154:198.51.100.9", "100::f6%25c%79p%25", "100::f6%25cod8%65%25"],
    b"s6": ["req-%3192.0.2.150", "req-%3198.51.100.5", "req-%3192.0.2.98", "req-%72%3192.0.2.98",
            "req-123%3203.0.113.6", "req-%2%32%30%319%38%2E%35%31%2E%31%30%30%2E%34%38",
            "req-%2%38203%2E%30%2E%31%31%33.9%30", "%32d%3A:19%38.%351.%3100.6", "x-%3A:19%38.%351.%3100.6",
            "::bB12%37.34.25.70", "%3A:A19%32.0.2.247", "a.g:192.0.2.250", "req-%32001:db8::75f:364:c7-x",
            "B%h0%30%3A:2f",
            "192.0.2.31:203.0.113.3", "%6B192.0.2.31:203.0.113.3", "0.8.5.2:0.6.0.2:192.0.2.19",
            "req-%3192.0.2.150:203.0.113.40", "100::b6%25n%74f%25", "100::b6%25nla1%78%25"],
    b"s23": ["req-%3192.0.2.110", "req-%3198.51.100.6", "req-%3192.0.2.25", "req-%6A%3192.0.2.25",
             "req-123%3192.0.2.167", "req-%2%32%30%320%33%2E%30%2E%31%31%33%2E%31%34%38",
             "req-%2%38203%2E%30%2E%31%31%33.9%36", "%395%3A:20%33.%30.1%313.46", "x-%3A:20%33.%30.1%313.46",
             "::bB12%37.13.56.30", "%3A:A19%32.0.2.165", "a.g:203.0.113.1", "req-%32001:db8::fed:7d3:29-x",
             "B%h0%30%3A:3b",
             "192.0.2.72:203.0.113.9", "%6B192.0.2.72:203.0.113.9", "0.1.8.9:0.8.7.1:192.0.2.21",
             "req-%3192.0.2.110:203.0.113.25", "100::c6%25a%74q%25", "100::c6%25afg2%71%25"]}


@pytest.mark.parametrize("salt", sorted(ID_OUT))
def test_a_request_id_keeps_no_octet_run_of_an_address_a_percent_stands_before_read_either_way(salt: bytes) -> None:
    r = Redactor(Placeholders(salt))
    out = [pseudonym(value, r) for value in (*IDS, *ZONED)]
    assert out == ID_OUT[salt]
    assert [unquote(written, errors="strict").isprintable() for written in out[len(IDS):]] == [True] * len(ZONED)
    for value, written, tail in zip(IDS, out, TAILS):
        readings = (written, unquote(written), unquote(unquote(written)))
        assert [reading for reading in readings if tail in reading] == []
        assert unquote(written, errors="strict").isprintable()  # decoded, UTF-8 (``%A1``'s input was not)
        assert len(ESCAPE.findall(written)) == len(ESCAPE.findall(value))


VIA = "1.1 gw (a%ZZb %ZZ10.1.2.3 %QQ %XY %GG)"
NO_ESCAPE = {  # HEAD: s6 "c%EAl", s2 "r%ABg", s0 "%eb.dniu" and "x%ebibdw", s23 "%ca.mcmw" and "x%camomj"
    b"s0": ["1.1 eb (y%IZz %XT53.2.5.2 %OA %AX %DW)", "1.1 eb (%kb.dniu:77 %uc)", "x%kbibdw", "x%kb.dniu:77",
            "E79%h00::3_", "req-%k4::", "x%0l::", "x%h92.0.2.47", "1.1 eb (S92%h00::3_ taf-%k4:: a%0l::)",
            "1.1 :4b52:8781:2355::9e%bvl4, 1.1 :ec20::9%lbs3, 1.0 :ed49::8%hez1"],
    b"s6": ["1.1 pf (c%KAl %UD23.9.8.2 %IE %IX %LC)", "1.1 pf (%pf.ebzq:32 %lv)", "x%pfnzqg", "x%pf.ebzq:32",
            "E79%h00::e_", "req-%9l::", "x%he::", "x%h92.0.2.24", "1.1 pf (D24%h00::e_ fol-%9l:: y%he::)",
            "1.1 :0a16:0010:4099::7e%vlj7, 1.1 :bb52::3%iau0, 1.0 :bc09::6%lbi8"],
    b"s2": ["1.1 xe (r%GBg %TS36.3.8.0 %EL %CI %EP)", "1.1 xe (%xe.emxp:29 %yk)", "x%xemvat", "x%xe.emxp:29",
            "E79%h00::d_", "req-%hc::", "x%0g::", "x%h92.0.2.71", "1.1 xe (L25%h00::d_ bga-%hc:: x%0g::)",
            "1.1 :5f99:9507:6286::7e%iwy6, 1.1 :fe25::1%jbb2, 1.0 :ff01::8%giw3"],
    b"s23": ["1.1 ca (w%NGe %XD88.3.9.9 %CM %ZZ %RZ)", "1.1 ca (%ia.mcmw:88 %gi)", "x%iamomj", "x%ia.mcmw:88",
             "E79%h00::b_", "req-%h8::", "x%l3::", "x%h92.0.2.51",
             "1.1 ca (X64%h00::b_ hny-%h8:: y%l3::)",
             "1.1 :2d41:7811:4744::7d%tbz8, 1.1 :ba90::5%tvk4, 1.0 :bb59::3%yoy8"]}


@pytest.mark.parametrize("salt", sorted(NO_ESCAPE))
def test_a_letter_after_a_bare_percent_never_becomes_an_escape_in_a_via_comment_or_a_request_id(salt: bytes) -> None:
    r = Redactor(Placeholders(salt))
    out = [host_value("via", VIA, r), host_value("via", "1.1 gw (%gw.corp:80 %zz)", r), pseudonym("x%gwcorp", r),
           pseudonym("x%gw.corp:80", r)]
    # re-read E: an address after a bare % whose placeholder has another layout (``2::17a`` -> ``100::8``) or first
    # two digits (``1.22.33.44`` -> ``192.0.2.47``) made a new escape, some a control decoded (``%10``): none now
    fresh = Redactor(Placeholders(salt))
    out += [pseudonym(value, fresh) for value in ("E79%2::17A_", "req-%::99", "x%::17", "x%1.22.33.44")]
    out.append(host_value("via", "1.1 gw (E79%2::17A_ req-%::99 x%::17)", fresh))
    out.append(host_value("via", "1.1 :2a00:1450:4001::8b%eth1, 1.1 :fd12::1%eth0, 1.0 :fe80::1%eth1", fresh))
    assert out == NO_ESCAPE[salt]
    assert [written for written in out if ESCAPE.search(written)] == []
    assert [unquote(written, errors="strict") for written in out] == out
