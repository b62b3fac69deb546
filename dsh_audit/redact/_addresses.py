"""IP addresses as a redaction finds and replaces them: where one stands in a text (IPv4, IPv6, percent-encoded:
:data:`ADDRESS_IN_TEXT`, :func:`in_decoded`; a host a URL parser reads as an IPv4 address written as numbers,
``0x7f000001``: :func:`numeric_ipv4`, :func:`in_form`) and the blocks its placeholder is moved into, which name no one's
machine (:func:`reserved_ipv4`, :func:`reserved_ipv6`), with the placeholders a host may take, best first
(:func:`name_draws`, :func:`ipv6_draws`: of which :meth:`._redactor.Redactor.distinct` gives the first no other
host was given, so two hosts never read as one; then every placeholder of a block in turn, :func:`every_ipv4`,
:func:`every_ipv6`, so none of a block goes unused). Pure functions of the salted draws they are given:
:mod:`._hosts` draws them and redacts hosts, URLs and headers with them.
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
import os
import re
from collections.abc import Callable, Iterator

from ._redactor import Every

__all__ = ["ADDRESS_IN_TEXT", "EMBEDDING", "IPV4_IN_TEXT", "QUAD", "every_ipv4", "every_ipv6", "in_decoded", "in_form",
           "ipv6", "ipv6_draws", "is_ipv6", "name_draws", "numeric_ipv4", "octets", "port", "reserved_ipv4",
           "reserved_ipv6", "reserved_quads", "shape"]

#: A dotted quad in a placeholder (its numbers made octets again: :func:`octets`). Every digit of these patterns is
#: an ASCII one (``[0-9]``, never ``\\d``, which matches ``١٠`` and ``１０`` too): no resolver reads an address in
#: other digits, so such text is text, redacted as text is (fuzz 24: ``int()`` of its placeholder crashed redact).
QUAD = re.compile(r"(?<![0-9A-Za-z.])[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?![0-9A-Za-z.])")
#: An IPv4 literal standing in any text (a query string, a header's free text): four numbers of 0-255 and
#: no more, not inside a longer dotted number or name (``1.2.3.4.5``, ``v1.2.3.4a`` are none); a
#: sentence's full stop after it does not hide it.
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|0?[0-9]?[0-9])"
IPV4_IN_TEXT = re.compile(rf"(?<![0-9A-Za-z.]){_OCTET}(?:\.{_OCTET}){{3}}(?![0-9A-Za-z]|\.[0-9A-Za-z])")
#: An IPv6 literal's candidate in any text: 2 to 8 groups of hex digits, the last may be an IPv4 address, not inside
#: a longer run of them (:func:`ipv6` keeps only what :mod:`ipaddress` reads), with its zone (``%eth0``, which
#: may name a machine): every character up to a blank or a delimiter (:data:`_ZONE_END`; a ``%`` escape in it is read decoded: :func:`._hosts._zone`), whatever it is
#: (fuzz 24: ``%café-alice``, a Cyrillic ``%аlice`` or a bidi control kept what followed ASCII); and either kind
#: of address, the IPv6 one's match named ``v6``.
_ZONE_END = r"""\s,;/?#\[\]()<>"'`{}|\\^&=@"""
_IPV6_IN_TEXT = (rf"(?<![0-9A-Za-z.:])(?:[0-9A-Fa-f]{{0,4}}:){{2,7}}(?:{_OCTET}(?:\.{_OCTET}){{3}}|[0-9A-Fa-f]{{0,4}})"
                 rf"(?:%[^{_ZONE_END}]+)?(?![0-9A-Za-z:]|\.[0-9A-Za-z])")
ADDRESS_IN_TEXT = re.compile(rf"(?P<v6>{_IPV6_IN_TEXT})|{IPV4_IN_TEXT.pattern}")
_DIGITS, _LOWER, _UPPER, _HEX = "0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdef"
_HEX_DIGITS = _DIGITS + _HEX
#: How many salted draws a host's placeholder takes in its first blocks (then as many in those an IPv4 one spills
#: into, or in each other form of an IPv6 one) before it is looked for in turn: :func:`name_draws`.
_REDRAWS = 32
#: A percent-encoded byte (its code captured, so ``split`` alternates text and codes).
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
#: The characters a replaced stretch of a percent-encoded text is written with as they are (RFC 3986's
#: unreserved ones), when its placeholder is not as long as it (:func:`in_decoded`); any other is encoded.
_UNRESERVED = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-._~")


def in_decoded(text: str, redact: Callable[[str], str]) -> str:
    """``text`` redacted by ``redact`` as read with its percent-encoded bytes decoded (one character each, a
    byte past ASCII as the Latin-1 character of its code), each character that changes written back encoded as
    it was (``%31`` -> ``%3x``, in the case of its hex letters) or plain as it was, so an escape stays one;
    ``text`` itself when nothing changes. ``redact`` keeps the length (an address's placeholder, a zone's, is as
    long as it) and writes ASCII; when it does not keep it (an IPv4 address written as one number,
    :func:`numeric_ipv4`), what changed is written plain, encoded but for unreserved characters.

    Example:
        >>> in_decoded("%31%30%2E0.0.5/%C3%A9", lambda t: t.replace("10.0.0.5", "10.9.7.1").replace("\\xc3", "x"))
        '%31%30%2E9.7.1/%78%A9'
        >>> in_decoded("a%2Eb%2F", lambda t: t.replace("a.b", "abcd"))
        'abcd%2F'
    """
    if "%" not in text:
        return redact(text)
    pieces: list[str] = []  # the original text of each decoded character
    for at, part in enumerate(_ESCAPE.split(text)):
        pieces += ["%" + part] if at % 2 else list(part)
    decoded = "".join(chr(int(p[1:], 16)) if len(p) == 3 else p for p in pieces)
    out = redact(decoded)
    if out == decoded:
        return text
    if len(out) != len(decoded):
        head = len(os.path.commonprefix([decoded, out]))
        tail = min(len(os.path.commonprefix([decoded[::-1], out[::-1]])), len(decoded) - head, len(out) - head)
        middle = "".join(c if c in _UNRESERVED else "".join(f"%{b:02X}" for b in c.encode("utf-8"))
                         for c in out[head:len(out) - tail])
        return "".join(pieces[:head]) + middle + "".join(pieces[len(pieces) - tail:])
    return "".join(piece if new == old else (new if len(piece) == 1 else
                                             "%" + (f"{ord(new):02x}" if piece.islower() else f"{ord(new):02X}"))
                   for piece, old, new in zip(pieces, decoded, out))


#: A number of an IPv4 host as the WHATWG URL parser reads it: hexadecimal after ``0x``, octal after a ``0``,
#: else decimal.
_NUMBER = re.compile(r"(0[xX])([0-9A-Fa-f]*)|(0)([0-7]+)|([1-9][0-9]*|0)")


def numeric_ipv4(host: str) -> str | None:
    """The dotted quad of a host that the WHATWG URL parser reads as an IPv4 address though it is no dotted
    quad of decimals (``0x7f000001``, ``2130706433``, ``0177.0.0.1``, ``127.1``, ``10.0.0.5.``: one to four
    numbers, hexadecimal after ``0x``, octal after a ``0``, else decimal, the last holding the bytes the others
    leave), which its placeholder is drawn for (:func:`in_form` writes that back); None for any other host.

    Example:
        >>> [numeric_ipv4(h) for h in ("0x7f000001", "2130706433", "0177.0.0.1", "127.1", "10.0.0.5.", "1.2.3.4")]
        ['127.0.0.1', '127.0.0.1', '127.0.0.1', '127.0.0.1', '10.0.0.5', None]
    """
    forms = _forms(host)
    # no IPv4 number has more than 11 significant digits (10 decimal, 8 hexadecimal, 11 octal); longer
    # ones are no address, and int() refuses decimal strings past 4,300 digits
    if forms is None or QUAD.fullmatch(host) is not None or any(len(d.lstrip("0")) > 11 for _, d, _ in forms):
        return None
    numbers = [int(digits or "0", base) for _, digits, base in forms]
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    return str(ipaddress.IPv4Address(sum(n << 8 * (3 - at) for at, n in enumerate(numbers[:-1])) + numbers[-1]))


def _forms(host: str) -> list[tuple[str, str, int]] | None:
    """Each number of ``host`` (``.``-separated, one to four, a trailing dot dropped) as its prefix (``0x``,
    ``0``), digits and base; None when one is no number."""
    labels = (host[:-1] if host.endswith(".") else host).split(".")
    forms = []
    for m in map(_NUMBER.fullmatch, labels if len(labels) <= 4 else ()):
        if m is None:
            return None
        forms.append((m[1], m[2], 16) if m[1] else (m[3], m[4], 8) if m[3] else ("", m[5], 10))
    return forms or None


def in_form(host: str, quad: str) -> str:
    """``quad`` (the placeholder of :func:`numeric_ipv4` of ``host``) written as ``host`` is: as many numbers,
    each in its base and hex letter case, padded with zeros to its width when hex or octal, so it keeps its
    length where it can; ``host`` itself when it is a loopback address whose placeholder would not keep it.

    Example:
        >>> [in_form(h, "127.9.0.8") for h in ("0x7f000001", "2130706433", "0177.0.0.1", "127.1")]
        ['0x7f090008', '2131296264', '0177.9.0.8', '127.1']
        >>> in_form("0XA000001", "192.0.2.77"), in_form("10.0.0.5.", "10.9.0.9"), in_form("10.1", "10.9.0.9")
        ('0XC000024D', '10.9.0.9.', '10.589833')
    """
    forms = _forms(host) or []
    new = int(ipaddress.IPv4Address(quad))
    written = [(new >> 8 * (3 - at)) & 0xFF for at in range(len(forms) - 1)]
    written.append(new & (256 ** (5 - len(forms)) - 1))
    out = ".".join(prefix + _in_base(n, base, digits) for (prefix, digits, base), n in zip(forms, written))
    out += "." if host.endswith(".") else ""
    return host if len(out) != len(host) and quad.startswith("127.") else out


def _in_base(number: int, base: int, written: str) -> str:
    """``number`` in ``base`` as a number ``written`` so was: its hex letters in their case, as many digits
    (zeros before it) when hex or octal."""
    text = f"{number:x}" if base == 16 else f"{number:o}" if base == 8 else str(number)
    text = text.upper() if any(c.isupper() for c in written) else text
    return text.zfill(len(written)) if base != 10 else text


def shape(text: str, drawn: str, *, hex_digits: int = 0) -> str:
    """``text`` with each character replaced by one of its class picked by ``drawn`` (see
    :func:`._pseudonyms.redact_ascii`); the first ``hex_digits`` characters (an IPv6 address) take hex letters."""
    out = []
    for at, (c, d) in enumerate(zip(text, drawn)):
        letters = _HEX if at < hex_digits else _LOWER
        out.append(_DIGITS[ord(d) % 10] if c in _DIGITS else letters[ord(d) % len(letters)] if c in _LOWER
                   else letters[ord(d) % len(letters)].upper() if c in _UPPER
                   else c if c.isascii() and c.isprintable() else letters[ord(d) % len(letters)])
    return "".join(out)


def name_draws(name: str, draw: Callable[[int], str], *, hex_digits: int = 0,
               draws: int = 256) -> tuple[Iterator[str] | Every, ...]:
    """The placeholders a host ``name`` (no port; an IPv6 address that :mod:`ipaddress` reads is
    :func:`ipv6_draws`'s) may take, best first, in stages (:meth:`._redactor.Redactor.distinct`), from its
    salted draws ``draw(0)``, ``draw(1)``...: its characters shaped by each (:func:`shape`), numbers of dotted
    quads made octets in a block that names no one's machine (:func:`reserved_quads`). An IPv4 address but a
    loopback one: :data:`_REDRAWS` draws in its first blocks, then each address of them in turn
    (:func:`every_ipv4`, an :class:`._redactor.Every`: none of them goes unused), then as many draws and each
    address in the blocks it spills into, four stages; any other name: ``draws`` draws, one stage.

    Example:
        >>> first, block, spill, rest = name_draws("10.1.2.3", lambda n: "9876543210"[n % 10:] + "9876543210"[:n % 10])
        >>> [next(first) for _ in range(2)], next(spill), len(list(block.placeholders())), block.key
        (['10.0.2.4', '10.9.1.3'], '0.9.16.0', 1000, ('ipv4', 8, False))
    """
    def drawn(attempts: range) -> Iterator[str]:
        for attempt in attempts:
            shaped = octets(shape(name, draw(attempt), hex_digits=hex_digits))
            yield reserved_ipv4(shaped, spill=attempt >= _REDRAWS) if quad else reserved_quads(name, shaped)

    def every(spill: bool) -> Every:
        return Every(("ipv4", len(name), spill), lambda: every_ipv4(len(name), spill=spill))

    quad = QUAD.fullmatch(name) is not None and not name.startswith("127.")
    if not quad:
        return (drawn(range(draws)),)
    return drawn(range(_REDRAWS)), every(False), drawn(range(_REDRAWS, 2 * _REDRAWS)), every(True)


def port(digits: str) -> str:
    """``digits`` (a port's placeholder) as a port a URL parser takes: 1-65535, as many digits, no leading
    zero; ``digits`` itself when it is one already, or when no port has as many digits (a port of six
    digits or more was none before either)."""
    low, high = (1, 9) if len(digits) == 1 else (10 ** (len(digits) - 1), min(10 ** len(digits) - 1, 65535))
    number = int(digits)
    if len(digits) > 5 or low <= number <= high and (len(digits) == 1 or digits[0] != "0"):
        return digits
    return str(low + number % (high - low + 1))


def octets(text: str) -> str:
    """``text`` (a host's placeholder) with the numbers of each dotted quad made octets (0-255, no leading
    zero), as the original's were, so an IPv4 address (alone, or the end of an IPv6 one) is still one."""
    def octet(number: str) -> str:
        if len(number) > 1 and (number[0] == "0" or int(number) > 255):
            return "1" + number[1:]
        return number

    return QUAD.sub(lambda m: ".".join(octet(n) for n in m[0].split(".")), text)


#: RFC 5737's documentation blocks (TEST-NET-1, -2, -3), which name no machine: an IPv4 placeholder of 9 to
#: 14 characters lies in one of them (:func:`reserved_ipv4`).
_DOCUMENTATION = ("192.0.2.", "198.51.100.", "203.0.113.")
#: The blocks for the lengths no documentation address has: 7 characters, ``0.0.0.0/8`` ("this network",
#: RFC 6890: never forwarded); 8, ``10.0.0.0/8``; 15, ``192.168.0.0/16`` (private, RFC 1918: no one's
#: address on the Internet). Each with the widths of the octets drawn after it.
_OTHER_BLOCKS = {7: ("0.", (1, 1, 1)), 8: ("10.", (1, 1, 1)), 15: ("192.168.", (3, 3))}
#: Where a placeholder spills when its length's blocks above are full (:func:`reserved_ipv4` ``spill``):
#: ``0.0.0.0/8`` and RFC 1112's ``240.0.0.0/4`` (reserved, never routed; but its broadcast ``255.x``), their
#: three octets of any widths that make the length. A length of 7 has no other block: past its 1000
#: addresses (``0.d.d.d``), two addresses share a placeholder.
_SPILL = ("0.", *(f"{n}." for n in range(240, 255)))


@functools.lru_cache(maxsize=64)
def _blocks(width: int, *, spill: bool) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """The blocks of IPv4 addresses ``width`` characters long, each a prefix and the widths of its octets:
    the documentation blocks that fit, else the one of :data:`_OTHER_BLOCKS`; with ``spill`` those of
    :data:`_SPILL` (none of the former). Kept once made (every address of a length reads them)."""
    fitting = [prefix for prefix in _DOCUMENTATION if 1 <= width - len(prefix) <= 3]
    first: tuple[tuple[str, tuple[int, ...]], ...] = tuple((prefix, (width - len(prefix),)) for prefix in fitting)
    first = first or ((_OTHER_BLOCKS[width],) if width in _OTHER_BLOCKS else ())
    if not spill:
        return first
    return tuple((prefix, widths) for prefix in _SPILL for widths in itertools.product((1, 2, 3), repeat=3)
                 if len(prefix) + sum(widths) + 2 == width and (prefix, widths) not in first)


def _octet_range(width: int) -> tuple[int, int]:
    """The lowest and highest octet of ``width`` digits (no leading zero)."""
    return (0, 9) if width == 1 else (10 ** (width - 1), min(10 ** width - 1, 255))


def reserved_quads(text: str, shaped: str) -> str:
    """``shaped`` (the placeholder of ``text``, a host) with each dotted quad of ``text`` in it replaced
    by :func:`reserved_ipv4` of its placeholder; a loopback address (``127.x.x.x``) stays one, ``127.`` and
    the placeholder's other octets."""
    out, at = [], 0
    for match in QUAD.finditer(text):
        start, end = match.span()
        loopback = match[0].startswith("127.")
        quad = "127" + shaped[start + 3:end] if loopback else reserved_ipv4(shaped[start:end])
        out += [shaped[at:start], quad]
        at = end
    return "".join(out) + shaped[at:]


def reserved_ipv4(drawn: str, *, spill: bool = False) -> str:
    """An IPv4 address's placeholder (``drawn``: a dotted quad as long as it, picked by the salted draw)
    moved into a block that names no one's machine, as long as it: a documentation block when one
    fits (:data:`_DOCUMENTATION`), else the block of :data:`_OTHER_BLOCKS` for its length; with ``spill``
    (those are full) one of :data:`_SPILL` (of the former when none is as long). The same ``drawn`` gives the
    same address.

    Example:
        >>> [reserved_ipv4(q) for q in ("1.2.3.4", "12.3.4.5", "156.5.7.1", "197.0.1.14", "170.9.0.8", "156.57.61.100",
        ...                         "255.255.255.255")]
        ['0.4.3.2', '10.5.4.3', '192.0.2.1', '192.0.2.24', '192.0.2.8', '198.51.100.80', '192.168.139.184']
        >>> reserved_ipv4("12.3.4.5", spill=True), reserved_ipv4("1.2.3.4", spill=True)
        ('0.5.1.51', '0.4.3.2')
    """
    blocks = _blocks(len(drawn), spill=spill) or _blocks(len(drawn), spill=False)
    pick = int(drawn.replace(".", ""))
    prefix, widths = blocks[pick % len(blocks)]
    pick //= len(blocks)
    octets = []
    for width in widths:
        low, high = _octet_range(width)
        octets.append(str(low + pick % (high - low + 1)))
        pick //= high - low + 1
    return prefix + ".".join(octets)


def every_ipv4(width: int, *, spill: bool) -> Iterator[str]:
    """Every IPv4 address ``width`` characters long of the blocks :func:`reserved_ipv4` draws from first (with
    ``spill``: of those it spills into, none when it has none of that width), in turn: where a placeholder is
    looked for when no draw in them found one free.

    Example:
        >>> addresses = list(every_ipv4(7, spill=False))
        >>> addresses[0], addresses[-1], len(addresses), list(every_ipv4(7, spill=True))
        ('0.0.0.0', '0.9.9.9', 1000, [])
        >>> next(itertools.islice(every_ipv4(9, spill=True), 10, None)), next(every_ipv4(9, spill=False))
        ('0.0.0.110', '192.0.2.0')
    """
    for prefix, widths in _blocks(width, spill=spill):
        ranges = [range(low, high + 1) for low, high in map(_octet_range, widths)]
        for numbers in itertools.product(*ranges):
            yield prefix + ".".join(map(str, numbers))


#: The heads before an IPv4 address that ends an IPv6 one which only say how it is carried (RFC 4291's mapped
#: and compatible forms, RFC 6052's NAT64 prefixes, RFC 6145's translated form): kept, the IPv4 address taking
#: its own placeholder, so ``::ffff:10.0.0.7`` reads as ``10.0.0.7`` does.
EMBEDDING = frozenset({"::", "::ffff:", "::ffff:0:", "64:ff9b::", "64:ff9b:1::"})
#: The forms an IPv6 placeholder of a given length takes, the first that fits: a prefix, 0 or more groups of 1-4
#: hex digits within a range, each followed by ``:`` (a head before an IPv4 address) or joined by ``:``, and
#: a suffix. RFC 3849's documentation prefix ``2001:db8::/32`` (``0db8`` for one character more) for 11
#: characters or more; RFC 6666's discard-only ``100::/64`` for 6 to 10; ``::/4``, which the IETF keeps
#: reserved (``h::``, ``hh::``, ``hhh::``), for the shortest. No one's machine has one. A form of no hex digit
#: (``2001:db8::``, ``100::``) comes after the others: it holds a single address. The forms after the
#: first that fits hold the placeholders of addresses whose first one was taken (:func:`reserved_ipv6`
#: ``layout``): ``100::h:h``, ``0:hhhh::``, and ``hhh::``, in ``::/4``, all of which the IETF keeps reserved
#: (never ``hhhh::``).
_LAYOUTS = ((("2001:db8::", 0, 5, ""), ("2001:db8:", 6, 6, ""), ("2001:0db8:", 6, 6, ""), ("100::", 0, 1, ""),
             ("", 1, 1, "::"), ("100::", 2, 4, ""), ("0:", 1, 1, "::")),
            (("2001:db8::", 0, 3, ""), ("2001:0db8::", 0, 0, ""), ("2001:db8:", 4, 4, ""), ("2001:0db8:", 4, 4, ""),
             ("100::", 0, 1, ""), ("0:", 1, 1, "::"), ("", 1, 1, "::")))


def is_ipv6(text: str) -> bool:
    """Whether ``text`` is an IPv6 address :mod:`ipaddress` reads (no zone, no brackets).

    Example:
        >>> is_ipv6("fd00::1"), is_ipv6("::ffff:10.0.0.7"), is_ipv6("[fd00::1]"), is_ipv6("gw:1")
        (True, True, False, False)
    """
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _drawn_part(address: str) -> tuple[int, bool] | None:
    """The width of the part of an IPv6 ``address`` (not ``::`` or ``::1``) whose hex digits are drawn, and whether
    it is the head before an IPv4 address ending it (drawn with its ``:``): the whole address, that head, or None
    when that head is one of :data:`EMBEDDING`, kept."""
    if "." not in address:
        return len(address), False
    head = address[:address.rfind(":") + 1]
    return None if head.lower() in EMBEDDING else (len(head), True)


def ipv6(address: str, digits: str, ipv4: Callable[[str], str], *, layout: int = 0) -> str | None:
    """The placeholder of an IPv6 address (with no zone), as long as it, in a block that names no one's
    machine, its hex digits from ``digits`` and its form the ``layout``-th that fits (:func:`reserved_ipv6`);
    the loopback address ``::1`` and ``::`` stay (however written), and an IPv4 address ending it takes its
    placeholder ``ipv4``, after its head (kept when it is one of :data:`EMBEDDING`): ``::ffff:127.0.0.1`` is
    redacted as ``127.0.0.1`` is, a loopback address still (whatever :mod:`ipaddress` of the running Python
    calls it). None when ``address`` is no IPv6 address.

    Example:
        >>> [ipv6(a, "abcdef", lambda quad: "192.0.2.1") for a in ("2a00:1450::1", "::1", "::ffff:10.0.0.1", "gw")]
        ['2001:db8::ab', '::1', '::ffff:192.0.2.1', None]
    """
    try:
        if int(ipaddress.IPv6Address(address)) in (0, 1):
            return address
    except ValueError:
        return None
    part = _drawn_part(address)
    at = address.rfind(":") + 1 if "." in address else len(address)  # where its IPv4 address starts
    head = address[:at] if part is None else reserved_ipv6(part[0], digits, head=part[1], layout=layout)
    return head + (ipv4(address[at:]) if at < len(address) else "")


def ipv6_draws(address: str, draw: Callable[[int], str],
               ipv4: Callable[[str], str]) -> tuple[Iterator[str] | Every, ...] | None:
    """The placeholders an IPv6 ``address`` may take, best first, in eight stages
    (:meth:`._redactor.Redactor.distinct`), in each of four forms of :data:`_LAYOUTS` that fit: :data:`_REDRAWS`
    of :func:`ipv6` of its salted draws of hex digits ``draw(0)``, ``draw(1)``..., each drawn from the whole
    address (:meth:`._plain.PlainPlaceholders.hex_digits`: two addresses of one network collide no more than
    any two), then every placeholder of that form in turn (:func:`every_ipv6`, an :class:`._redactor.Every`:
    none goes unused); None when it is no IPv6 address.

    Example:
        >>> stages = ipv6_draws("fd00::1", lambda n: "0123456789"[n % 10:] + "0123456789", lambda quad: quad)
        >>> [next(stages[0]) for _ in range(2)], len(stages), ipv6_draws("gw:1", str, str)
        (['100::01', '100::12'], 8, None)
        >>> block = stages[1]
        >>> block.key, list(itertools.islice(block.placeholders(), 3))
        (('ipv6', 7, False, ('100::', 1, 2, ''), ''), ['100::00', '100::01', '100::02'])
    """
    if not is_ipv6(address):
        return None

    def drawn(layout: int) -> Iterator[str]:
        for attempt in range(layout * _REDRAWS, (layout + 1) * _REDRAWS):
            yield ipv6(address, draw(attempt), ipv4, layout=layout) or address

    def every(layout: int) -> Every:
        part = _drawn_part(address)
        tail = address[address.rfind(":") + 1:] if part is not None and part[1] else ""
        key = ("ipv6", *part, _form(*part, layout), tail) if part is not None else ("ipv6", address)
        return Every(key, lambda: every_ipv6(address, ipv4, layout=layout))

    return tuple(stage for layout in range(4) for stage in (drawn(layout), every(layout)))


def every_ipv6(address: str, ipv4: Callable[[str], str], *, layout: int) -> Iterator[str]:
    """Every placeholder :func:`ipv6` gives ``address`` in its ``layout``-th form, in turn, its hex digits counted
    up from zeros (a form of 3 characters, ``h::``, holds 15: not ``0::``, below); ``address`` itself, once,
    when it stays (``::1``) or its head is kept (``::ffff:``, its IPv4 address's placeholder after it).

    Example:
        >>> list(itertools.islice(every_ipv6("2a00::1", str, layout=0), 3)), len(list(every_ipv6("1::", str, layout=0)))
        (['100::00', '100::01', '100::02'], 15)
    """
    part = _drawn_part(address)
    form = None if part is None or int(ipaddress.IPv6Address(address)) in (0, 1) else _form(*part, layout)
    count = 0 if form is None else form[2]
    seen = None
    for digits in itertools.product(_HEX_DIGITS, repeat=count):
        placeholder = ipv6(address, "".join(digits), ipv4, layout=layout) or address
        if placeholder != seen:  # all zeros is written as the next form (``0::`` as ``1::``): not twice in a row
            yield placeholder
        seen = placeholder


@functools.lru_cache(maxsize=512)
def _form(width: int, head: bool, layout: int) -> tuple[str, int, int, str] | None:
    """The ``layout``-th (modulo their number) of the forms of :data:`_LAYOUTS` an address of ``width`` characters
    (with ``head``, the head before an IPv4 address) fits: its prefix, its groups of hex digits, how many digits
    and its suffix. Kept once made (every draw of an address reads it)."""
    fits = []
    for prefix, fewest, most, suffix in _LAYOUTS[head]:
        for groups in range(fewest, most + 1):
            count = width - len(prefix) - len(suffix) - (groups if head and not suffix else max(groups - 1, 0))
            if groups <= count <= 4 * groups and (prefix or count < 4):  # ``hhhh::`` may be a global address
                fits.append((prefix, groups, count, suffix))
    fits.sort(key=lambda fit: fit[2] == 0)  # a form of no digit (``2001:db8::``) holds one address: last
    return fits[layout % len(fits)] if fits else None  # never None: every width an address can have has one


def reserved_ipv6(width: int, digits: str, *, head: bool, layout: int = 0) -> str:
    """An IPv6 address of ``width`` characters (3 to 39), or with ``head`` the part of one before an IPv4
    address (2 to 30, ending ``:``), in the ``layout``-th (modulo their number) of the forms of
    :data:`_LAYOUTS` it fits (:func:`_form`), its hex digits taken from ``digits`` in turn: the first, unless a
    placeholder of it was given to another address already (:func:`._hosts.redact_host`). A form whose prefix
    is zeros (``h::``, ``0:h::``) never takes only zeros: ``0::`` is ``::``, the unspecified address (which
    stays itself, as ``::ffff:`` heads do: review 40), so its last zero becomes the first other digit drawn.

    Example:
        >>> [reserved_ipv6(n, "0123456789abcdef", head=False) for n in (3, 7, 10, 16, 39)]
        ['1::', '100::01', '100::01:23', '2001:db8::012:34', '2001:0db8:0123:4567:89ab:cdef:0123:4567']
        >>> [reserved_ipv6(n, "abc", head=True) for n in (3, 6, 8, 12)]
        ['a::', '0:ab::', '100::ab:', '2001:db8::a:']
        >>> [reserved_ipv6(5, "abc", head=False, layout=n) for n in range(4)], reserved_ipv6(5, "000", head=False)
        (['abc::', '0:a::', '100::', 'abc::'], '001::')
    """
    form = _form(width, head, layout)
    if form is None:
        return digits[:width]  # never so: every width an address of the form can have fits one layout
    prefix, groups, count, suffix = form
    sizes = [count // groups + (i < count % groups) for i in range(groups)]
    hexes = (digits * (count // max(len(digits), 1) + 1))[:count]
    if not prefix.strip("0:") and not hexes.strip("0"):  # ``0::``, ``0:0::``: the unspecified address
        hexes = hexes[:-1] + next((d for d in digits if d != "0"), "1")
    parts = [hexes[sum(sizes[:i]):sum(sizes[:i + 1])] for i in range(groups)]
    return prefix + ("".join(p + ":" for p in parts) if head and not suffix else ":".join(parts)) + suffix
