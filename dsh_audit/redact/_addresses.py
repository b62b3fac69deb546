"""IP addresses as a redaction finds and replaces them: where one stands in a text (IPv4, IPv6, percent-encoded:
:data:`ADDRESS_IN_TEXT`, :func:`in_decoded`; a host a URL parser reads as an IPv4 address written as numbers,
``0x7f000001``: :func:`numeric_ipv4`, :func:`in_form`) and the blocks an IPv4 placeholder is moved into, which name no
one's machine (:func:`_reserved_ipv4`), with the placeholders a host may take, best first (:func:`name_draws`: of which
:meth:`._redactor.Redactor.distinct` gives the first no other host was given, so two hosts never read as one; then
every placeholder of a block in turn, :func:`_every_ipv4`, so none of a block goes unused); an IPv6 address's are
:mod:`._ipv6`'s. Pure functions of the salted draws they are given: :mod:`._hosts` draws them and redacts hosts, URLs
and headers with them.
"""

from __future__ import annotations

import functools
import ipaddress
import itertools
import os
import re
from collections.abc import Callable, Iterator

from ._redactor import Every

__all__ = ["ADDRESS_CHAR", "ADDRESS_IN_TEXT", "ESCAPE", "IPV4_ANYWHERE", "IPV4_IN_TEXT", "QUAD", "REDRAWS", "VERSION",
           "ZONE_END", "bad_escape", "escaped_address_char", "in_decoded", "in_form", "name_draws", "no_escape", "numeric_ipv4",
           "octets", "port", "shape"]

#: A dotted quad in a placeholder (its numbers made octets again: :func:`octets`). Every digit of these patterns is
#: an ASCII one (``[0-9]``, never ``\\d``, which matches ``١٠`` and ``１０`` too): no resolver reads an address in
#: other digits, so such text is text, redacted as text is (fuzz 24: ``int()`` of its placeholder crashed redact).
QUAD = re.compile(r"(?<![0-9A-Za-z.])[0-9]{1,3}(?:\.[0-9]{1,3}){3}(?![0-9A-Za-z.])")
#: An IPv4 literal standing in any text (a query string, a header's free text): four numbers of 0-255 and
#: no more, not inside a longer dotted number or name (``1.2.3.4.5``, ``v1.2.3.4a`` are none); a
#: sentence's full stop after it does not hide it.
_OCTET = r"(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|0?[0-9]?[0-9])"
IPV4_IN_TEXT = re.compile(rf"(?<![0-9A-Za-z.]){_OCTET}(?:\.{_OCTET}){{3}}(?![0-9A-Za-z]|\.[0-9A-Za-z])")
#: An IPv4 address with its port, wherever it stands: between letters, after a ``%``, before ``.label`` (a request
#: id's ``gw-10.77.66.55.ab``, ``x%ZZ10.77.66.55``; fuzz 27: each octet a short run, these kept every one), glued to
#: more digits, the leftmost reading first (issue 17: ``10.77.66.5510.77.66.55`` is two, whose ``5510`` was one run
#: replaced and the other octets kept), where a dotted quad is an address's leak whatever :data:`IPV4_IN_TEXT` would
#: say; but in a version (:data:`VERSION`), which :mod:`._request_ids` keeps.
IPV4_ANYWHERE = re.compile(rf"{_OCTET}(?:\.{_OCTET}){{3}}(?::[0-9]{{1,5}}(?![0-9]))?")
#: A version, a dotted number after a ``v`` that starts a word (``v1.2.3.4``, ``-V10.0.0.1.2``): no address
#: (issue 17), where :data:`IPV4_ANYWHERE` would read one; ``build-1.2.3.4`` is none, being what ``gw-10.77.66.55``
#: is (fuzz 24: a host's label, then its address).
VERSION = re.compile(r"(?<![0-9A-Za-z])[vV][0-9]+(?:\.[0-9]+)+")
#: An IPv6 literal's candidate in any text: 2 to 8 groups of hex digits, the last may be an IPv4 address, not inside
#: a longer run of them (:func:`._ipv6.is_ipv6` keeps only what :mod:`ipaddress` reads), with its zone (``%eth0``,
#: which may name a machine): every character up to a blank or a delimiter (:data:`ZONE_END`; a ``%`` escape in it
#: is read decoded: :func:`._hosts._zone`), whatever it is (fuzz 24: ``%café-alice``, a Cyrillic ``%аlice`` or a bidi
#: control kept what followed ASCII); and either kind of address, the IPv6 one's match named ``v6``.
_ZONE_END = r"""\s,;/?#\[\]()<>"'`{}|\\^&=@"""
#: A character that ends a zone (:data:`_ZONE_END`): an escape of one after an address is read decoded, no zone's
#: (:func:`._spans.address_spans`).
ZONE_END = re.compile(f"[{_ZONE_END}]")
#: A character that goes on an IPv6 address (a hex digit, a colon): an escape of one after an address continues it,
#: no zone's (fuzz 27: ``fe80::%31`` read a zone ``31``, whose placeholder ``%83`` decoded to no UTF-8).
ADDRESS_CHAR = re.compile("[0-9A-Fa-f:]")
_IPV6_IN_TEXT = (rf"(?<![0-9A-Za-z.:])(?:[0-9A-Fa-f]{{0,4}}:){{2,7}}(?:{_OCTET}(?:\.{_OCTET}){{3}}|[0-9A-Fa-f]{{0,4}})"
                 rf"(?:%[^{_ZONE_END}]+)?(?![0-9A-Za-z:]|\.[0-9A-Za-z])")
ADDRESS_IN_TEXT = re.compile(rf"(?P<v6>{_IPV6_IN_TEXT})|{IPV4_IN_TEXT.pattern}")
_DIGITS, _LOWER, _UPPER, _HEX = "0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdef"
#: How many salted draws a host's placeholder takes in its first blocks (then as many in those an IPv4 one spills
#: into, or in each other form of an IPv6 one) before it is looked for in turn: :func:`name_draws`.
REDRAWS = 32
#: A percent-encoded byte (its code captured), and a run of them (the bytes of a UTF-8 character or more).
ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_ESCAPES = re.compile(r"((?:%[0-9A-Fa-f]{2})+)")
#: Where a percent-encoded byte past ASCII that is no part of a UTF-8 character is read, ``0x80`` to ``0xFF``: a
#: Cyrillic letter each (U+0400 to U+047F, none of them ASCII in any case or compatibility form), so that what
#: replaces a letter past ASCII replaces it too (review 41: ``caf%C3%A9`` lost ``%C3`` and kept a lone ``%A9``).
_STRAY = 0x400 - 0x80
#: The characters a replaced stretch of a percent-encoded text is written with as they are (RFC 3986's
#: unreserved ones), when its placeholder is not as long as it (:func:`in_decoded`); any other is encoded.
_UNRESERVED = frozenset("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-._~")


def in_decoded(text: str, redact: Callable[[str], str]) -> str:
    """``text`` redacted by ``redact`` as read with its percent-encoded bytes decoded (:func:`_characters`: a
    UTF-8 character's bytes one character, any other byte past ASCII a letter of its own), each character that
    changes written back encoded as it was (``%31`` -> ``%3x``, in the case of its hex letters; a character of
    several bytes, ``%D0%B1``, its placeholder's bytes: ``%78``) or plain as it was, so an escape stays one and
    what is decoded is UTF-8 still; ``text`` itself when nothing changes. ``redact`` keeps the length (an
    address's placeholder, a zone's, is as long as it) and writes ASCII; when it does not keep it (an IPv4
    address written as one number, :func:`numeric_ipv4`), what changed is written plain, encoded but for
    unreserved characters.

    Example:
        >>> in_decoded("%31%30%2E0.0.5/%C3%A9", lambda t: t.replace("10.0.0.5", "10.9.7.1").replace("\\xe9", "x"))
        '%31%30%2E9.7.1/%78'
        >>> in_decoded("a%2Eb%2F", lambda t: t.replace("a.b", "abcd")), in_decoded("%d0%b1", str.upper)
        ('abcd%2F', '%d0%91')
    """
    if "%" not in text:
        return redact(text)
    decoded = _ESCAPES.sub(_decoded, text)
    out = redact(decoded)
    if out == decoded:
        return text
    pieces: list[str] = []  # the original text of each decoded character
    for at, part in enumerate(_ESCAPES.split(text)):
        pieces += (piece for piece, _ in _characters(part)) if at % 2 else part
    if len(out) != len(decoded):
        head = len(os.path.commonprefix([decoded, out]))
        tail = min(len(os.path.commonprefix([decoded[::-1], out[::-1]])), len(decoded) - head, len(out) - head)
        middle = "".join(c if c in _UNRESERVED else _encoded(c, upper=True) for c in out[head:len(out) - tail])
        return "".join(pieces[:head]) + middle + "".join(pieces[len(pieces) - tail:])
    return "".join(piece if new == old else new if len(piece) == 1 else _encoded(new, upper=not piece.islower())
                   for piece, old, new in zip(pieces, decoded, out))


def escaped_address_char(text: str, at: int = 0) -> bool:
    """Whether an escape of a character that goes on an IPv6 address (:data:`ADDRESS_CHAR`: a hex digit, a colon)
    stands at ``at`` of ``text`` (``fe80::%31`` is ``fe80::1``, no zone ``31``)."""
    escape = ESCAPE.match(text, at)
    return escape is not None and ADDRESS_CHAR.match(chr(int(escape[1], 16))) is not None


def bad_escape(text: str) -> bool:
    """Whether ``text`` starts with an escape of a control or of a byte past ASCII (what a zone's placeholder after
    its ``%`` must not read as: :func:`._hosts._zone`)."""
    escape = ESCAPE.match(text)
    return escape is not None and not 0x20 <= int(escape[1], 16) < 0x7F


def no_escape(name: str) -> str:
    """A placeholder whose first two characters are hex digits, where the text's were not: its first hex letter
    made a letter six on (``a`` -> ``g``), so that the ``%`` before it starts no escape; two decimal digits (an
    address whose placeholder has another layout: ``%2::17a`` -> ``%100::8``, review E) the first a letter past
    ``f`` (``1`` -> ``h``), though it reads as no address then: an escape the input never had may decode to a
    control character (``%10``).

    Example:
        >>> no_escape("ab::1"), no_escape("100::8")
        ('gb::1', 'h00::8')
    """
    at = next((at for at in (0, 1) if name[at] in "abcdefABCDEF"), None)
    return name[:at or 0] + _off_hex(name[at or 0]) + name[(at or 0) + 1:]


def _off_hex(char: str) -> str:
    """A hex digit made a letter that is none: a hex letter the letter six on (``a`` -> ``g``), a decimal digit a
    letter past ``f`` (``1`` -> ``h``)."""
    return chr(ord(char) + 6) if char in "abcdefABCDEF" else chr(ord("g") + int(char))


def _decoded(escapes: re.Match[str]) -> str:
    """The characters a run of escapes stands for (:func:`_characters`)."""
    data = bytes.fromhex(escapes[0].replace("%", ""))
    return data.decode("ascii") if data.isascii() else "".join(char for _, char in _characters(escapes[0]))


def _characters(escapes: str) -> Iterator[tuple[str, str]]:
    """Each character a run of escapes (``%D0%B1%41``) stands for, with its escapes: the bytes of a UTF-8 character
    one character (``б``, so a redaction's rules of any script read it), an ASCII byte its character, and any other
    byte past ASCII (:data:`_STRAY`) a letter of its own, which a rule that replaces letters replaces."""
    data = bytes.fromhex(escapes.replace("%", ""))
    if data.isascii():
        yield from ((escapes[3 * at:3 * at + 3], chr(byte)) for at, byte in enumerate(data))
        return
    at = 0
    while at < len(data):
        size = 1 if data[at] < 0xC2 else 2 if data[at] < 0xE0 else 3 if data[at] < 0xF0 else 4
        try:
            char = data[at:at + size].decode("utf-8")
        except UnicodeDecodeError:  # a stray byte: a continuation alone, a sequence cut short, an overlong one
            size, char = 1, chr(data[at] + _STRAY) if data[at] >= 0x80 else chr(data[at])
        yield escapes[3 * at:3 * (at + size)], char
        at += size


def _encoded(char: str, *, upper: bool) -> str:
    """``char`` percent-encoded, its UTF-8 bytes each an escape, in upper or lower case hex."""
    return "".join(f"%{b:02X}" if upper else f"%{b:02x}" for b in char.encode("utf-8"))


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
    :func:`._ipv6.ipv6_draws`'s) may take, best first, in stages (:meth:`._redactor.Redactor.distinct`), from its
    salted draws ``draw(0)``, ``draw(1)``...: its characters shaped by each (:func:`shape`), numbers of dotted
    quads made octets in a block that names no one's machine (:func:`_reserved_quads`). An IPv4 address but a
    loopback one: :data:`REDRAWS` draws in its first blocks, then each address of them in turn
    (:func:`_every_ipv4`, an :class:`._redactor.Every`: none of them goes unused), then as many draws and each
    address in the blocks it spills into, four stages; any other name: ``draws`` draws, one stage.

    Example:
        >>> first, block, spill, rest = name_draws("10.1.2.3", lambda n: "9876543210"[n % 10:] + "9876543210"[:n % 10])
        >>> [next(first) for _ in range(2)], next(spill), len(list(block.placeholders())), block.key
        (['10.0.2.4', '10.9.1.3'], '0.9.16.0', 1000, ('ipv4', 8, False))
    """
    def drawn(attempts: range) -> Iterator[str]:
        for attempt in attempts:
            shaped = octets(shape(name, draw(attempt), hex_digits=hex_digits))
            yield _reserved_ipv4(shaped, spill=attempt >= REDRAWS) if quad else _reserved_quads(name, shaped)

    def every(spill: bool) -> Every:
        return Every(("ipv4", len(name), spill), lambda: _every_ipv4(len(name), spill=spill))

    quad = QUAD.fullmatch(name) is not None and not name.startswith("127.")
    if not quad:
        return (drawn(range(draws)),)
    return drawn(range(REDRAWS)), every(False), drawn(range(REDRAWS, 2 * REDRAWS)), every(True)


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
#: 14 characters lies in one of them (:func:`_reserved_ipv4`).
_DOCUMENTATION = ("192.0.2.", "198.51.100.", "203.0.113.")
#: The blocks for the lengths no documentation address has: 7 characters, ``0.0.0.0/8`` ("this network",
#: RFC 6890: never forwarded); 8, ``10.0.0.0/8``; 15, ``192.168.0.0/16`` (private, RFC 1918: no one's
#: address on the Internet). Each with the widths of the octets drawn after it.
_OTHER_BLOCKS = {7: ("0.", (1, 1, 1)), 8: ("10.", (1, 1, 1)), 15: ("192.168.", (3, 3))}
#: Where a placeholder spills when its length's blocks above are full (:func:`_reserved_ipv4` ``spill``):
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


def _reserved_quads(text: str, shaped: str) -> str:
    """``shaped`` (the placeholder of ``text``, a host) with each dotted quad of ``text`` in it replaced
    by :func:`_reserved_ipv4` of its placeholder; a loopback address (``127.x.x.x``) stays one, ``127.`` and
    the placeholder's other octets."""
    out, at = [], 0
    for match in QUAD.finditer(text):
        start, end = match.span()
        loopback = match[0].startswith("127.")
        quad = "127" + shaped[start + 3:end] if loopback else _reserved_ipv4(shaped[start:end])
        out += [shaped[at:start], quad]
        at = end
    return "".join(out) + shaped[at:]


def _reserved_ipv4(drawn: str, *, spill: bool = False) -> str:
    """An IPv4 address's placeholder (``drawn``: a dotted quad as long as it, picked by the salted draw)
    moved into a block that names no one's machine, as long as it: a documentation block when one
    fits (:data:`_DOCUMENTATION`), else the block of :data:`_OTHER_BLOCKS` for its length; with ``spill``
    (those are full) one of :data:`_SPILL` (of the former when none is as long). The same ``drawn`` gives the
    same address.

    Example:
        >>> [_reserved_ipv4(q) for q in ("1.2.3.4", "12.3.4.5", "156.5.7.1", "197.0.1.14", "170.9.0.8", "156.57.61.100",
        ...                         "255.255.255.255")]
        ['0.4.3.2', '10.5.4.3', '192.0.2.1', '192.0.2.24', '192.0.2.8', '198.51.100.80', '192.168.139.184']
        >>> _reserved_ipv4("12.3.4.5", spill=True), _reserved_ipv4("1.2.3.4", spill=True)
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


def _every_ipv4(width: int, *, spill: bool) -> Iterator[str]:
    """Every IPv4 address ``width`` characters long of the blocks :func:`_reserved_ipv4` draws from first (with
    ``spill``: of those it spills into, none when it has none of that width), in turn: where a placeholder is
    looked for when no draw in them found one free.

    Example:
        >>> addresses = list(_every_ipv4(7, spill=False))
        >>> addresses[0], addresses[-1], len(addresses), list(_every_ipv4(7, spill=True))
        ('0.0.0.0', '0.9.9.9', 1000, [])
        >>> next(itertools.islice(_every_ipv4(9, spill=True), 10, None)), next(_every_ipv4(9, spill=False))
        ('0.0.0.110', '192.0.2.0')
    """
    for prefix, widths in _blocks(width, spill=spill):
        ranges = [range(low, high + 1) for low, high in map(_octet_range, widths)]
        for numbers in itertools.product(*ranges):
            yield prefix + ".".join(map(str, numbers))
