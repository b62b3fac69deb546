"""Session 39 (fuzz 22): two different addresses or hosts never share a placeholder in one redaction.

The fuzz gave 30 addresses of one ``x-forwarded-for`` (``10.20.30.x``, ``172.16.1.x``) 19 to 24 placeholders: the
salted draw of a host is shaped (a digit for a digit, octets, a reserved block as long) and the shaping folds
draws together, most for addresses that share a head. The :class:`Redactor` now remembers the placeholder it
gave each host and address (:meth:`Redactor.distinct`): a draw another was given is drawn again (salted), in
another reserved block of the length once its first one is full (IPv4: ``0.0.0.0/8`` and ``240.0.0.0/4``;
IPv6: the other forms of ``100::/64`` and ``::/4``). The same address keeps one placeholder wherever it stands,
and a run of the same texts in the same order with the same salt gives the same placeholders.
"""

from __future__ import annotations

import ipaddress
import itertools
import json
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from _golden import CORPUS

from dsh_audit.redact import Placeholders, Redactor, redact
from dsh_audit.redact._ipv6 import ipv6
from dsh_audit.redact._hosts import host_value, redact_addresses, redact_host, redact_url
from dsh_audit.redact._pseudonyms import draws as _draws, redact_ascii

SALT = b"injective39"
A_CHAT = CORPUS / "live" / "a-chat"
#: Every block an IPv4 placeholder may lie in but loopback (a loopback address stays one).
IPV4_BLOCKS = [ipaddress.ip_network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "0.0.0.0/8",
                                                 "10.0.0.0/8", "192.168.0.0/16", "240.0.0.0/4")]
IPV6_BLOCKS = [ipaddress.ip_network(n) for n in ("2001:db8::/32", "100::/64", "::/4")]


def _ipv4s(count: int, seed: int) -> list[str]:
    """``count`` distinct IPv4 addresses of every length (7 to 15 characters), no loopback one."""
    draw, out = random.Random(seed), dict.fromkeys(f"10.20.30.{n}" for n in range(30, 60))  # the fuzz's
    while len(out) < count:
        quad = ".".join(str(draw.choice([draw.randrange(10), draw.randrange(10, 100), draw.randrange(100, 256)]))
                        for _ in range(4))
        if not quad.startswith("127."):
            out[quad] = None
    return list(out)


def _ipv6s(count: int, seed: int) -> list[str]:
    """``count`` distinct IPv6 addresses: many sharing a head (``fd00::1`` to ``fd00::95``), short ones, long
    ones compressed where zeros run, some ending in an IPv4 address; no loopback or unspecified one."""
    draw, out = random.Random(seed), dict.fromkeys(f"fd00::{n:x}" for n in range(1, 150))
    while len(out) < count:
        groups = [f"{draw.randrange(65536):x}" for _ in range(8)]
        start = draw.randrange(8)
        width = draw.randrange(0, 9 - start)
        address = str(ipaddress.IPv6Address(":".join(groups[:start] + ["0"] * width + groups[start + width:])))
        if draw.random() < 0.2:
            address = ":".join(groups[:6]) + ":" + ".".join(str(draw.randrange(256)) for _ in range(4))
        parsed = ipaddress.IPv6Address(address)
        if not (parsed.is_loopback or parsed.is_unspecified):
            out[address] = None
    return list(out)


def _placeholders(addresses: list[str]) -> list[str]:
    redactor = Redactor(Placeholders(SALT))
    return [redact_host(address, redactor) for address in addresses]


@pytest.mark.parametrize(("family", "blocks"), [(_ipv4s, IPV4_BLOCKS), (_ipv6s, IPV6_BLOCKS)], ids=["ipv4", "ipv6"])
def test_300_distinct_addresses_take_300_distinct_placeholders_as_long_in_reserved_blocks(
        family: object, blocks: list[ipaddress.IPv4Network | ipaddress.IPv6Network]) -> None:
    assert callable(family)
    addresses = family(300, 39)
    placeholders = _placeholders(addresses)
    assert (len(set(addresses)), len(set(placeholders))) == (300, 300)
    for address, placeholder in zip(addresses, placeholders):
        assert len(placeholder) == len(address), (address, placeholder)
        parsed = ipaddress.ip_address(placeholder)  # raises when it is no address
        assert any(parsed in block for block in blocks if block.version == parsed.version), (address, placeholder)
    assert _placeholders(addresses) == placeholders  # deterministic: a second run, the same salt and order


def test_the_fuzz_header_of_30_addresses_sharing_a_head_keeps_30() -> None:
    """The fuzz case: ``10.20.30.30`` to ``.59`` and ``172.16.1.30`` to ``.59`` in one ``x-forwarded-for``
    took 19-24 placeholders; each address also reads as itself in a URL, a port's host and free text."""
    redactor = Redactor(Placeholders(SALT))
    for head in ("10.20.30.", "172.16.1."):
        addresses = [f"{head}{n}" for n in range(30, 60)]
        value = host_value("X-Forwarded-For", ", ".join(addresses), redactor)
        assert value is not None
        placeholders = value.split(", ")
        assert len(set(placeholders)) == 30 and [len(p) for p in placeholders] == [len(a) for a in addresses]
        for address, placeholder in zip(addresses, placeholders):
            assert redact_host(f"{address}:8080", redactor).startswith(placeholder + ":")
            assert redact_url(f"http://{address}/v1", redactor) == f"http://{placeholder}/v1"
            assert redact_addresses(f"from {address}.", redactor) == f"from {placeholder}."


def test_host_names_and_names_that_differ_by_a_digit_take_distinct_placeholders() -> None:
    names = [f"gw{n}.corp" for n in range(300)] + [f"n{n:03d}" for n in range(300)] + ["a", "b", "c", "A1", "B2"]
    placeholders = _placeholders(names)
    assert len(set(placeholders)) == len(names) == 605
    assert [len(p) for p in placeholders] == [len(n) for n in names]
    assert all(p != n and p[:-1].islower() == n[:-1].islower() for p, n in zip(placeholders, names))


def test_an_ipv6_address_keeps_its_placeholder_in_brackets_with_a_port_or_a_zone() -> None:
    redactor = Redactor(Placeholders(SALT))
    bare = [redact_host(f"fd00::{n:x}", redactor) for n in range(1, 60)]
    assert len(set(bare)) == 59
    assert [redact_host(f"[fd00::{n:x}]:443", redactor)[1:].split("]")[0] for n in range(1, 60)] == bare
    zone = redact_ascii("eth0", redactor)  # a zone may name a machine: its name replaced, its % kept
    assert zone != "eth0" and len(zone) == 4
    assert [redact_host(f"fd00::{n:x}%eth0", redactor) for n in range(1, 60)] == [f"{b}%{zone}" for b in bare]
    assert [redact_host(f"[fd00::{n:x}%25eth0]", redactor) for n in range(1, 60)] == [f"[{b}%25{zone}]" for b in bare]


def test_the_1000_ipv4_addresses_of_7_characters_fill_their_block_and_the_1001st_shares() -> None:
    """A 7-character IPv4 address has no reserved block but ``0.d.d.d``: its 1000 addresses take 1000
    placeholders, and past them one is shared (said in :meth:`Redactor.distinct`). So do the IPv6 addresses of 3
    characters with the 15 of ``h::`` (review 40: ``0::``, the unspecified address ``::``, was one of 16, and
    random draws left one of them unused while another address shared)."""
    addresses = [".".join(map(str, q)) for q in itertools.product(range(1, 10), range(10), range(10), range(10))]
    placeholders = _placeholders(addresses[:1001])
    assert len(set(placeholders[:1000])) == 1000 and set(placeholders[:1000]) == {
        f"0.{b}.{c}.{d}" for b, c, d in itertools.product(range(10), repeat=3)}
    assert placeholders[1000] in placeholders[:1000]
    short = _placeholders([f"{h}::" for h in "123456789abcdef"] + ["::2"])
    assert set(short[:15]) == {f"{h}::" for h in "123456789abcdef"} and short[15] in short[:15]


@pytest.mark.skipif(not A_CHAT.is_dir(), reason="../shared/corpus is absent")
def test_a_redacted_capture_keeps_one_placeholder_per_forwarded_address(tmp_path: Path) -> None:
    addresses = [f"10.20.30.{n}" for n in range(30, 60)] + [f"172.16.1.{n}" for n in range(30, 60)]
    records = [json.loads(line) for line in (A_CHAT / "wire.jsonl").read_text("utf-8").splitlines()]
    for at, record in enumerate(records):  # each record lists them in another order
        record["headers"] = {**record["headers"], "x-forwarded-for": ", ".join(addresses[at:] + addresses[:at])}
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    log = next((A_CHAT / "session-logs").glob("*.jsonl"))
    result = redact(log, tmp_path / "out.jsonl", salt=SALT.decode(), capture=wire)
    assert result.capture is not None and result.mismatched == ()
    lists = [json.loads(line)["headers"]["x-forwarded-for"].split(", ")
             for line in result.capture.read_text("utf-8").splitlines()]
    pairs = {(a, p) for at, placeholders in enumerate(lists) for a, p in zip(addresses[at:] + addresses[:at],
                                                                               placeholders)}
    assert len(lists) == len(records) == 3 and len(pairs) == 60  # one placeholder an address, in every record
    assert len({p for _, p in pairs}) == 60 and not {a for a, _ in pairs} & {p for _, p in pairs}


def test_two_ports_of_one_host_and_two_pseudonyms_never_share_a_placeholder() -> None:
    """A port (``gw:8080``, ``gw:8081``) and a pseudonym (a user's id, a request id: :func:`redact_ascii`) were
    shaped from the draw as a host was, and folded together the same way."""
    redactor = Redactor(Placeholders(SALT))
    hosts = [f"gw.corp:{port}" for port in range(8000, 8300)] + [f"10.0.0.1:{port}" for port in range(1, 10)]
    placeholders = [redact_host(host, redactor) for host in hosts]
    assert len(set(placeholders)) == 309 and {p.split(":")[0] for p in placeholders[300:]} == {
        redact_host("10.0.0.1", redactor)}
    assert sorted(p.split(":")[1] for p in placeholders[300:]) == [str(port) for port in range(1, 10)]
    users = [f"user-{n:04d}" for n in range(300)]
    ids = [f"{n:032x}" for n in range(300)]
    pseudonyms = [redact_ascii(u, redactor) for u in users]
    hexes = [redact_ascii(i, redactor, hex_id=True) for i in ids]
    assert (len(set(pseudonyms)), len(set(hexes))) == (300, 300)
    assert all(len(p) == 9 and p[:4].isalpha() and p[4] == "-" and p[5:].isdigit() for p in pseudonyms)
    assert all(len(h) == 32 and set(h) <= set("0123456789abcdef") for h in hexes)
    assert [redact_ascii(u, redactor) for u in users] == pseudonyms  # the same text: the same pseudonym


def test_a_shape_whose_draws_all_were_taken_is_not_drawn_again() -> None:
    """Texts that differ in one letter among a run of punctuation (``a-----``, ``b-----``...) have 26
    placeholders: past them each would read every draw, of its whole length, and a hostile log of many long
    ones would take minutes. Once one text's draws were all taken, the next of that shape reads its first."""
    redactor, read = Redactor(Placeholders(SALT)), []

    def draws(text: str) -> Iterator[str]:
        for _ in range(5):
            read.append(text)
            yield "x-----"

    assert [redactor.distinct(t, draws(t)) for t in ("a", "b", "c")] == ["x-----"] * 3
    assert read == ["a", "b", "b", "b", "b", "b", "c"]
    assert redactor.distinct("d", iter(["y-----", "z"])) == "y-----"  # its shape is spent: its first, unread
    # and a long text reads fewer draws: a few, whose every character is drawn
    assert [_draws("x" * n) for n in (0, 1, 7, 64, 100, 1000, 5000, 10 ** 6)] == [256, 256, 256, 256, 163, 16, 8, 8]
    long = [redact_ascii(c + "-" * 5000, redactor) for c in "abcdefghijklmnopqrstuvwxyzéèêë"]
    assert {len(p) for p in long} == {5001} and all(p.isascii() and p[1:] == "-" * 5000 for p in long)


# --- review 39 ----------------------------------------------------------------------------------------------


def test_only_the_unspecified_and_loopback_ipv6_addresses_stay_whatever_ipaddress_calls_loopback(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Python 3.13's ``ipaddress`` calls ``::ffff:127.0.0.1`` loopback, 3.11's does not: the rule read it, so a
    bundle depended on the Python that wrote it. Only ``::`` and ``::1`` stay (however written); a mapped
    address takes its IPv4 address's placeholder, a loopback one a loopback one, on any Python (here one that
    calls every address loopback and unspecified)."""
    monkeypatch.setattr(ipaddress.IPv6Address, "is_loopback", property(lambda self: True))
    monkeypatch.setattr(ipaddress.IPv6Address, "is_unspecified", property(lambda self: True))
    kept = ("::", "::1", "0:0::0:1", "::0.0.0.1", "0::0.0.0.0")
    assert [ipv6(a, "abcdef", lambda quad: f"<{quad}>") for a in (*kept, "::ffff:127.0.0.1", "::127.0.0.1")] == \
        [*kept, "::ffff:<127.0.0.1>", "::<127.0.0.1>"]
    redactor = Redactor(Placeholders(SALT))
    loopback = redact_host("127.0.0.1", redactor)
    assert loopback.startswith("127.") and loopback != "127.0.0.1"
    assert redact_host("::ffff:127.0.0.1", redactor) == "::ffff:" + loopback
    assert redact_host("[::ffff:127.0.0.1]:8080", redactor)[:len(loopback) + 10] == f"[::ffff:{loopback}]:"


@pytest.mark.parametrize("network", [
    [f"2a00:1450:4001:82a::{n:x}" for n in random.Random(1).sample(range(1 << 16), 50)],
    [f"fd00::{n:x}" for n in random.Random(2).sample(range(1 << 12, 1 << 16), 50)],  # 10 characters
    [f"fe80::1{n:03x}:{n * 7919 % 65536:x}" for n in range(50)],
])
def test_an_address_takes_the_same_placeholder_alone_or_after_the_others_of_its_network(network: list[str]) -> None:
    """Review 39: the draws of the addresses of one network shared their first digits (a prefix-preserving
    draw), so they collided on their first draw and the placeholder of each depended on the addresses given one
    before it: ``fd00::2`` alone and after ``fd00::1`` differed. Each draw now depends on the whole address."""
    together = Redactor(Placeholders(SALT))
    among = [redact_host(a, together) for a in network]
    assert [redact_host(a, Redactor(Placeholders(SALT))) for a in network] == among
    assert len(set(among)) == 50 and all(ipaddress.IPv6Address(p) in IPV6_BLOCKS[0] or
                                         ipaddress.IPv6Address(p) in IPV6_BLOCKS[1] for p in among)
    assert [len(p) for p in among] == [len(a) for a in network]


def test_an_ipv6_zone_keeps_its_percent_and_loses_its_name() -> None:
    """Review 39: session 39 kept a zone verbatim (``[fe80::1%25alice-laptop]:80``), which may name a machine."""
    redactor = Redactor(Placeholders(SALT))
    bare = redact_host("fe80::1", redactor)
    name = redact_ascii("alice-laptop", redactor)
    assert (name[5], name != "alice-laptop", len(name)) == ("-", True, 12)
    assert redact_host("[fe80::1%25alice-laptop]:80", redactor)[:len(bare) + 18] == f"[{bare}%25{name}]:"
    assert redact_host("fe80::1%alice-laptop", redactor) == f"{bare}%{name}"
    assert redact_host("fe80::1%25", redactor) == f"{bare}%{redact_ascii('25', redactor)}"  # a zone named 25
    assert redact_host("fe80::1%25%61", redactor) == f"{bare}%25%{ord(redact_ascii('a', redactor)):02x}"
    # in any text too (a path, a header's free text), plain or percent-encoded, as in a host
    assert redact_addresses("via [fe80::1%25alice-laptop]:80 and fe80::1%alice-laptop.", redactor) == \
        f"via [{bare}%25{name}]:80 and {bare}%{name}."
    assert redact_url("https://gw/p/fe80::1%25alice-laptop?at=fe80%3A%3A1%25alice-laptop", redactor).count(name) == 2


class _Counting(Placeholders):
    """Placeholders that count the salted draws made of them."""

    def __init__(self, salt: bytes) -> None:
        super().__init__(salt)
        self.draws = 0

    def plain(self, text: str, *, blank: bool = False, lines: bool = True) -> str:
        self.draws += 1
        return super().plain(text, blank=blank, lines=lines)

    def hex_digits(self, text: str, count: int) -> str:
        self.draws += 1
        return super().hex_digits(text, count)


def test_the_addresses_after_a_full_block_draw_once_not_past_its_taken_draws() -> None:
    """Review 39: once the 156 documentation addresses of 14 characters were taken, each new address read its 32
    taken draws first (and an IPv6 one of 10 characters 32 to 128): 8,000 took 20 s. A stage of draws a text
    found all taken is not read again for the texts of its shape: the others draw about once each."""
    draw = random.Random(39)
    quads = list(dict.fromkeys(f"10.{draw.randrange(100, 256)}.{draw.randrange(100, 256)}.{draw.randrange(100, 256)}"
                               for _ in range(3000)))
    ipv6s = list(dict.fromkeys(f"fd00::{draw.randrange(1 << 12, 1 << 16):x}" for _ in range(3000)))
    outs = []
    for addresses in (quads, ipv6s):
        placeholders = _Counting(SALT)
        redactor = Redactor(placeholders)
        out = [redact_host(a, redactor) for a in addresses]
        outs.append(out)
        assert len(set(out)) == len(addresses) and {len(p) for p in out} == {len(addresses[0])}
        assert placeholders.draws < 1.2 * len(addresses) + 200, placeholders.draws
    # review 40: the block's last free addresses are given too, before any spills (11 of 156 went unused)
    assert {p for p in outs[0] if p.startswith("198.51.100.")} == {f"198.51.100.{n}" for n in range(100, 256)}
