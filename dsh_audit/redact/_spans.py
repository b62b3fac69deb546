"""Where the addresses and hosts of a text stand (a header's free text, a request id): pure functions of the text,
which :mod:`._hosts` and :mod:`._request_ids` replace by their placeholders (:func:`replaced`).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Iterable, Iterator

from ._addresses import ADDRESS_CHAR, ADDRESS_IN_TEXT, ESCAPE, IPV4_IN_TEXT, ZONE_END, escaped_address_char
from ._authority import dotted_name
from ._ipv6 import is_ipv6

__all__ = ["address_spans", "host_spans", "name_port", "replaced", "written_spans"]

#: A port after an address (``:443``).
_PORT = re.compile(r":[0-9]{1,5}(?![0-9])")
#: The characters that stand around an address or in it (its brackets, its port's colon, its zone's ``%``):
#: :func:`_escapes_as_marks` reads an escape of one as it.
_MARKS = frozenset("[]:%")


def name_port(label: str = "[A-Za-z0-9-]", first: str = "[A-Za-z]") -> re.Pattern[str]:
    """A dotted host name with a port (``gw.corp:8443``: :func:`._authority.dotted_name` of ``label`` and ``first``,
    as :mod:`._hosts` reads a query value's ``host:port``), not inside a longer name: :data:`_NAME_PORT` in ASCII,
    :mod:`._request_ids`' in any script."""
    return re.compile(rf"(?<!{label})(?<!\.){dotted_name(label, first)}{_PORT.pattern}")


_NAME_PORT = name_port()


def _is_address(match: re.Match[str]) -> bool:
    """Whether a match of :data:`._addresses.ADDRESS_IN_TEXT` is an address: an IPv4 one, or an IPv6 one (its zone
    aside) that :mod:`ipaddress` reads, with a decimal digit (``dead::beef`` or a time ``12:30:45`` is none)."""
    address = match[0].split("%", 1)[0]
    return match["v6"] is None or any(c in "0123456789" for c in address) and is_ipv6(address)


def address_spans(text: str, *, zoned: bool = False, ports: bool = False) -> Iterator[tuple[int, int]]:
    """Where each address of ``text`` stands (:func:`_is_address`; of an IPv6 candidate that is none, its IPv4
    addresses), in order: with ``zoned`` only the IPv6 ones whose zone ends as written (:func:`_zone_as_written`);
    with ``ports`` with the port after an IPv4 address or a bracketed IPv6 one (and its brackets).

    Example:
        >>> text = "fe80::1%eth0 10.0.0.1:80 [fd00::1]:443 dead::beef"
        >>> [text[s:e] for s, e in address_spans(text, ports=True)], list(address_spans(text, zoned=True))
        (['fe80::1%eth0', '10.0.0.1:80', '[fd00::1]:443'], [(0, 12)])
    """
    for match in ADDRESS_IN_TEXT.finditer(text):
        start, end = match.span()
        if not _is_address(match):
            if not zoned:
                yield from (_with_port(text, start + m.start(), start + m.end(), ports)
                            for m in IPV4_IN_TEXT.finditer(match[0]))
        elif not zoned or _zone_as_written(match):
            bracket = match["v6"] is not None and text[start - 1:start] == "[" and text[end:end + 1] == "]"
            if match["v6"] is None or (ports and bracket):
                start, end = _with_port(text, start - bracket, end + bracket, ports)
            yield start, end


def _zone_as_written(match: re.Match[str]) -> bool:
    """Whether an IPv6 address :data:`._addresses.ADDRESS_IN_TEXT` found has a zone whose end stands as written:
    one whose ``%`` starts no escape of a character that ends a zone (:data:`._addresses.ZONE_END`): ``%eth0``,
    ``%café`` (whose ``%ca`` would decode to a byte past ASCII), a Windows interface's number (``%12``: read decoded,
    its name was kept, review 41), a URL's ``%25`` one (``%25e%2Fmallory``: read decoded, its ``%2F`` became a ``/``
    that ended the zone, and ``mallory`` was kept; :func:`._hosts._zone` decodes its name). Only ``%2C10.0.0.1`` (a
    comma) and the like are read decoded, and one of a character that goes on the address
    (:data:`._addresses.ADDRESS_CHAR`: ``fe80::%31`` is ``fe80::1``; fuzz 27: read as a zone ``31``, its
    placeholder ``%83`` was no UTF-8)."""
    at = match[0].find("%")
    escape = ESCAPE.match(match[0], at) if at >= 0 else None
    return match["v6"] is not None and at >= 0 and (escape is None or not _ends_zone(chr(int(escape[1], 16))))


def _ends_zone(char: str) -> bool:
    """Whether an escape of ``char`` after an IPv6 address is read decoded (:func:`_zone_as_written`)."""
    return ZONE_END.match(char) is not None or ADDRESS_CHAR.match(char) is not None


def written_spans(text: str, find: Callable[[str], Iterable[tuple[int, int]]]) -> list[tuple[int, int]]:
    """Where the hosts of a percent-encoded ``text`` stand as written, in order and apart, before the stretches
    between them are read decoded (:func:`._addresses.in_decoded`): each IPv6 address whose zone stands as written
    (:func:`address_spans` ``zoned``), and each host ``find`` finds in ``text`` read with each escape one character
    (:func:`_escapes_as_marks`), so that an escape beside an address neither hides it nor is part of it (review 41:
    decoded, ``10.0.0.7%2Eab`` and ``%2E10.0.0.7`` held no address, ``10.0.0.7.ab`` and ``.10.0.0.7``, and kept it);
    but an IPv6 one (or ``host:port``) with an escape of a hex digit or a colon beside it is that host with its
    escapes (:func:`_continued`), and none starts inside an escape (fuzz 27: ``fe80::%31``, ``%380::1``).

    Example:
        >>> text = "10.0.0.7%2Eab %2E10.0.0.8 10%2E0.0.9 fe80::1%12-x %5Bfd00::1%5D%3A443"
        >>> [text[s:e] for s, e in written_spans(text, lambda t: address_spans(t, ports=True))]
        ['10.0.0.7', '10.0.0.8', 'fe80::1%12-x', '%5Bfd00::1%5D%3A443']
    """
    view, marks = _escapes_as_marks(text)
    at = functools.partial(_written_at, marks)
    zoned = (span for span in address_spans(text, zoned=True) if not _inside_escape(text, span[0]))
    found = [*zoned, *(_continued(text, at(start), at(end)) if ":" in view[start:end] else (at(start), at(end))
                       for start, end in find(view))]
    return _apart(sorted(found, key=lambda span: (span[0], -span[1])))  # a zone as written, not its address alone


def _inside_escape(text: str, at: int) -> bool:
    """Whether the character at ``at`` of ``text`` is a hex digit of an escape (``%380::1``: its ``3`` and ``8``)."""
    return any(ESCAPE.match(text, at - back) is not None for back in (1, 2) if at >= back)


def _continued(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of a host as written with the escapes of hex digits and colons beside it (and the hex digits and
    colons beyond them): ``%66%65%380::%31`` is ``fe80::1`` written so, which the host it is read as takes the
    placeholder of (fuzz 27: ``0::`` replaced alone left ``%38`` before it, ``%3`` and a digit, a control byte)."""
    at = start
    while at >= 3 and escaped_address_char(text, at - 3) or (
            at < start and at >= 1 and ADDRESS_CHAR.match(text, at - 1) and not _inside_escape(text, at - 1)):
        at -= 3 if at >= 3 and escaped_address_char(text, at - 3) else 1
    new_end = end
    while escaped_address_char(text, new_end) or new_end > end and ADDRESS_CHAR.match(text, new_end):
        new_end += 3 if escaped_address_char(text, new_end) else 1
    return at, new_end


def _escapes_as_marks(text: str) -> tuple[str, list[int]]:
    """``text`` with each escape one character: what it stands for when that is one of the marks that stand around
    an address (:data:`_MARKS`: ``%5B``, ``%5D``, ``%3A``, a zone's ``%25``: ``[fd00::1]:443`` is one host), else a
    blank, which no host holds (``%2E`` beside an address: ``10.0.0.7 ab``); and where each escape stands in it."""
    marks = [escape.start() - 2 * count for count, escape in enumerate(ESCAPE.finditer(text))]
    return ESCAPE.sub(_mark, text), marks


def _mark(escape: re.Match[str]) -> str:
    """The character of :func:`_escapes_as_marks` an escape is."""
    char = chr(int(escape[1], 16))
    return char if char in _MARKS else " "


def _written_at(marks: list[int], at: int) -> int:
    """Where the character at ``at`` of :func:`_escapes_as_marks`' text (or its end) stands in the text as written,
    ``marks`` where its escapes stand: two characters further for each escape before it."""
    return at + 2 * bisect.bisect_left(marks, at)


def _apart(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` (sorted) but each that starts inside one kept before it (an address's name, a zone's address)."""
    kept: list[tuple[int, int]] = []
    for start, end in spans:
        if not kept or start >= kept[-1][1]:
            kept.append((start, end))
    return kept


def host_spans(text: str, *more: re.Pattern[str]) -> list[tuple[int, int]]:
    """Where each host of ``text`` stands, in order and apart: an IP address with its port (:func:`address_spans`)
    and a dotted host name with a port (``gw.corp:8443``), ASCII or of each of ``more`` (:func:`name_port`: a name
    of any script, whose match an address cuts short of an ASCII name it holds: ``fd00::1égw.corp:80``).

    Example:
        >>> text = "gw-10.7.6.5-7f3a;172.16.9.8:443;up=gw.corp:8080"
        >>> [text[s:e] for s, e in host_spans(text)]
        ['10.7.6.5', '172.16.9.8:443', 'gw.corp:8080']
    """
    names = (m.span() for pattern in (_NAME_PORT, *more) for m in pattern.finditer(text))
    return _apart(sorted([*address_spans(text, ports=True), *names]))  # a name inside an address's is no other host


def _with_port(text: str, start: int, end: int, ports: bool) -> tuple[int, int]:
    """The span of an address, with ``ports`` and the port after it (``:443``) its span too."""
    port = _PORT.match(text, end) if ports else None
    return start, end if port is None else port.end()


def replaced(text: str, spans: Iterable[tuple[int, int]], inside: Callable[[str], str],
             between: Callable[[str], str] = str) -> str:
    """``text`` with the stretch of each of ``spans`` (in order and apart: :func:`address_spans`, :func:`host_spans`)
    replaced by ``inside`` of it, and each stretch around them by ``between`` of it (kept, by default).

    Example:
        >>> replaced("a 10.0.0.1 b", address_spans("a 10.0.0.1 b"), str.upper, lambda t: t.replace("a", "x"))
        'x 10.0.0.1 b'
    """
    out, at = [], 0
    for start, end in spans:
        out += [between(text[at:start]), inside(text[start:end])]
        at = end
    return "".join(out) + between(text[at:])
