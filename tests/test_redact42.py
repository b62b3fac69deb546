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
    b"s0": ["req-%3192.0.2.215", "req-%3198.51.100.1", "req-%3192.0.2.24", "req-%71%3192.0.2.24",
            "req-123%3192.0.2.130", "req-%2%32%30%319%38%2E%35%31%2E%31%30%30%2E%35%38",
            "req-%2%38198%2E%35%31%2E%31%300.%38", "%30e%3A:19%38.%351.%3100.5", "x-%3A:19%38.%351.%3100.5",
            "::bB12%37.50.17.95", "%3A:A20%33.0.113.0", "a.g:203.0.113.8", "req-%32001:db8::1ba:4ea:e5-x",
            "B%h0%30%3A:d1",
            "192.0.2.21:203.0.113.7", "%6B192.0.2.21:203.0.113.7", "0.6.9.7:0.0.8.8:192.0.2.30",
            "req-%3192.0.2.215:203.0.113.15", "100::bf%25v%62y%25", "100::bf%25vpp0%7A%25"],
    b"s6": ["req-%3203.0.113.7", "req-%3203.0.113.54", "req-%3192.0.2.48", "req-%65%3192.0.2.48",
            "req-123%3192.0.2.159", "req-%2%32%30%319%38%2E%35%31%2E%31%30%30%2E%33%39",
            "req-%2%38198%2E%35%31%2E%31%300.%35", "%667%3A:19%38.%351.%3100.0", "x-%3A:19%38.%351.%3100.0",
            "::bB12%37.51.37.20", "%3A:A19%32.0.2.187", "a.g:192.0.2.109", "req-%32001:db8::7f2:343:19-x",
            "B%h0%30%3A:9e",
            "192.0.2.57:192.0.2.197", "%6B192.0.2.57:192.0.2.197", "0.2.0.2:0.5.6.1:192.0.2.64",
            "req-%3203.0.113.7:198.51.100.6", "100::fa%25d%72c%25", "100::fa%25dkc4%67%25"],
    b"s23": ["req-%3192.0.2.110", "req-%3203.0.113.37", "req-%3192.0.2.16", "req-%73%3192.0.2.16",
             "req-123%3192.0.2.232", "req-%2%32%30%320%33%2E%30%2E%31%31%33%2E%32%31%39",
             "req-%2%38198%2E%35%31%2E%31%300.%39", "%65a%3A:19%38.%351.%3100.8", "x-%3A:19%38.%351.%3100.8",
             "::bB12%37.10.44.29", "%3A:A20%33.0.113.3", "a.g:192.0.2.134", "req-%32001:db8::a1d:327:06-x",
             "B%h0%30%3A:d1",
             "192.0.2.74:203.0.113.4", "%6B192.0.2.74:203.0.113.4", "0.3.3.5:0.8.0.1:192.0.2.18",
             "req-%3192.0.2.110:198.51.100.7", "100::a5%25c%69a%25", "100::a5%25cxf7%75%25"]}


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
    b"s0": ["1.1 xw (l%JKb %ZO72.0.5.1 %KC %GH %ZN)", "1.1 xw (%xw.wtby:40 %lp)", "x%xwlrje", "x%xw.wtby:40",
            "E79%h00::9_", "req-%j2::", "x%g1::", "x%h92.0.2.59", "1.1 xw (P27%h00::9_ zjl-%j2:: e%g1::)",
            "1.1 :2f12:1903:2506::1a%rgy5, 1.1 :bf57::0%mdw7, 1.0 :ba24::3%pye1"],
    b"s6": ["1.1 fq (z%FWy %HF58.9.2.9 %AM %DY %JN)", "1.1 fq (%fq.jttt:17 %xn)", "x%fqgmwx", "x%fq.jttt:17",
            "E79%h00::1_", "req-%9i::", "x%7l::", "x%h92.0.2.33", "1.1 fq (W10%h00::1_ yzt-%9i:: k%7l::)",
            "1.1 :1a33:6847:4328::6e%ucf9, 1.1 :bd48::7%cud4, 1.0 :be31::2%boz6"],
    b"s2": ["1.1 ov (b%SOb %NK92.9.8.0 %XC %YF %PA)", "1.1 ov (%ov.nqwx:80 %ie)", "x%ovednn", "x%ov.nqwx:80",
            "E79%h00::0_", "req-%m9::", "x%3i::", "x%h92.0.2.58", "1.1 ov (C83%h00::0_ wlj-%m9:: e%3i::)",
            "1.1 :7d00:1347:4973::8a%gck0, 1.1 :eb61::2%wud6, 1.0 :ec29::5%nry4"],
    b"s23": ["1.1 ey (y%YLc %NB09.9.7.3 %JB %EM %CR)", "1.1 ey (%ey.fscy:71 %cg)", "x%eyjjdh", "x%ey.fscy:71",
             "E79%h00::a_", "req-%j9::", "x%lc::", "x%h92.0.2.90",
             "1.1 ey (Z58%h00::a_ xdv-%j9:: v%lc::)",
             "1.1 :1d99:3426:9778::5a%olf7, 1.1 :db24::6%iao2, 1.0 :dc10::9%tam7"]}


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
