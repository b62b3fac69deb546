"""Where the addresses and hosts of a text stand (a header's free text, a request id): pure functions of the text,
which :mod:`._hosts` and :mod:`._request_ids` replace by their placeholders.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ._addresses import ADDRESS_IN_TEXT, IPV4_IN_TEXT, is_ipv6

__all__ = ["address_spans", "host_spans", "is_address"]

#: A port after an address (``:443``), and a dotted host name with one (``gw.corp:8443``: its last label starts with
#: a letter, as :mod:`._hosts` reads a query value's ``host:port``).
_PORT = re.compile(r":[0-9]{1,5}(?![0-9])")
_ASCII_ESCAPE = re.compile(r"%[0-7][0-9A-Fa-f]")
_NAME_PORT = re.compile(r"(?<![A-Za-z0-9.-])[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z][A-Za-z0-9-]*:[0-9]{1,5}(?![0-9])")


def is_address(match: re.Match[str]) -> bool:
    """Whether a match of :data:`._addresses.ADDRESS_IN_TEXT` is an address: an IPv4 one, or an IPv6 one (its zone
    aside) that :mod:`ipaddress` reads, with a decimal digit (``dead::beef`` or a time ``12:30:45`` is none)."""
    address = match[0].split("%", 1)[0]
    return match["v6"] is None or any(c in "0123456789" for c in address) and is_ipv6(address)


def address_spans(text: str, *, zoned: bool = False, ports: bool = False) -> Iterator[tuple[int, int]]:
    """Where each address of ``text`` stands (:func:`is_address`; of an IPv6 candidate that is none, its IPv4
    addresses), in order: with ``zoned`` only the IPv6 ones whose zone ends as written (:func:`_zone_as_written`);
    with ``ports`` with the port after an IPv4 address or a bracketed IPv6 one (and its brackets).

    Example:
        >>> text = "fe80::1%eth0 10.0.0.1:80 [fd00::1]:443 dead::beef"
        >>> [text[s:e] for s, e in address_spans(text, ports=True)], list(address_spans(text, zoned=True))
        (['fe80::1%eth0', '10.0.0.1:80', '[fd00::1]:443'], [(0, 12)])
    """
    for match in ADDRESS_IN_TEXT.finditer(text):
        start, end = match.span()
        if not is_address(match):
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
    one that is no escape of an ASCII character (``%eth0``, ``%café``, whose ``%ca`` would decode to a byte past
    ASCII), or a URL's ``%25`` one (``%25e%2Fmallory``: read decoded, its ``%2F`` became a ``/`` that ended the zone,
    and ``mallory`` was kept; :func:`._hosts._zone` decodes its name). Only ``%2C10.0.0.1`` (a comma) and the like
    are read decoded."""
    at = match[0].find("%")
    return match["v6"] is not None and at >= 0 and (_ASCII_ESCAPE.match(match[0], at) is None
                                                    or match[0].startswith("%25", at))


def host_spans(text: str) -> list[tuple[int, int]]:
    """Where each host of ``text`` stands, in order and apart: an IP address with its port (:func:`address_spans`)
    and a dotted host name with a port (``gw.corp:8443``).

    Example:
        >>> text = "gw-10.7.6.5-7f3a;172.16.9.8:443;up=gw.corp:8080"
        >>> [text[s:e] for s, e in host_spans(text)]
        ['10.7.6.5', '172.16.9.8:443', 'gw.corp:8080']
    """
    spans, at = [], 0
    for start, end in sorted([*address_spans(text, ports=True), *(m.span() for m in _NAME_PORT.finditer(text))]):
        if start >= at:  # a name's span inside an address's is no other host
            spans.append((start, end))
            at = end
    return spans


def _with_port(text: str, start: int, end: int, ports: bool) -> tuple[int, int]:
    """The span of an address, with ``ports`` and the port after it (``:443``) its span too."""
    port = _PORT.match(text, end) if ports else None
    return start, end if port is None else port.end()
