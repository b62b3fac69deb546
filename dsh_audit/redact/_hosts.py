"""The gateway's address in a capture and a route file: which hosts stay, and the placeholder of the others.

A captured request names the host it went to: the ``host`` header (and a proxy's ``x-forwarded-host``,
``x-forwarded-server``, ``x-original-host``), a URL (a wire record's ``url``, a HAR ``url``, ``origin``,
``referer``, ``location``, a route file's ``baseURL``) and a HAR entry's ``serverIPAddress``; the
addresses it came from or through are in ``Via`` (each hop's host), RFC 7239's ``Forwarded`` (``for``,
``by``, ``host``) and the address lists proxies write (``x-forwarded-for``, ``x-real-ip``...:
:data:`ADDRESS_HEADERS`). A private gateway's or client's address identifies its owner: it becomes a
placeholder of the same length, the same one wherever it stands (:func:`redact_host`), a header's name
in any letter case. The host of a public vendor API
stays, so a reader sees the route: only a host that is exactly one pi-ai's catalog names
(:func:`._routes.public_hosts`: ``api.anthropic.com``, ``api.openai.com``, ``api.deepseek.com``, the
Bedrock regions it lists...), in any letter case, with no port or HTTPS's ``:443``. Anything else loses
its address: a host under a vendor's domain (``gw.internal.anthropic.com``), one that starts like a
vendor's (``api.deepseek.com.corp.example``), a vendor's host on another port (``api.openai.com:8443``:
not the vendor's endpoint), a trailing dot, a character past ASCII (the Kelvin sign that lower-cases to
``k``), punycode, an IP address.

A URL's authority is read as any parser may read it (:func:`_authority`): after a web scheme's
slashes or backslashes, however many (WHATWG reads ``https:/host`` and ``https:\\\\host`` so),
tabs and line breaks skipped (both WHATWG and Python's ``urlsplit`` drop them), up to the first
``/``, ``?`` or ``#`` (a backslash does not end it: ``urlsplit`` reads what follows as host); with no
scheme, a ``host:port`` or a dotted host name that starts it (``gw.corp:8080/v1``, ``gw.corp/v1``). Its user
information (before the last ``@``) is replaced whatever the host, and its host and port as a host
header's are. An address stays one: an IPv6 literal's hex digits stay hex digits (a redacted
``[fd00::1]`` still parses, as ``urlsplit`` requires of a bracketed host), the numbers of an IPv4
address (alone or ending an IPv6 one) stay octets, 0-255, and a port stays a port, 1-65535, of as many
digits (:func:`_octets`, :func:`_port`), so ``urlsplit(url).port`` and a WHATWG parser read the redacted URL.
And an IPv4 address's placeholder names no one's machine (:func:`_reserved`): it lies in one of RFC 5737's
documentation blocks (``192.0.2.x``, ``198.51.100.x``, ``203.0.113.x``) when one is as long, else in
``0.0.0.0/8`` (7 characters), ``10.0.0.0/8`` (8) or ``192.168.0.0/16`` (15); a loopback address stays a
loopback one (``127.0.0.1`` -> ``127.9.0.8``).

An IPv4 literal anywhere else, in a URL's path, query or fragment (``?ip=172.16.0.1``), in a kept header's
free text or a response header (:mod:`._capture`), is replaced the same way (:func:`redact_ipv4`): the
placeholder it has as a host, so one address reads as one wherever it stands.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import unquote

from ._redactor import Redactor
from ._routes import public_hosts
from ._secrets import credential_name

__all__ = ["ADDRESS_HEADERS", "HOST_HEADERS", "host_value", "is_public_host", "redact_ascii", "redact_host",
           "redact_ipv4", "redact_url"]

#: The headers that name the gateway's host (and port): replaced by :func:`redact_host`.
HOST_HEADERS = frozenset({"host", "x-forwarded-host", "x-forwarded-server", "x-original-host"})
#: The headers that list the addresses a request came from or through (the client's, each proxy's), separated
#: by commas: each item replaced by :func:`redact_host` (``unknown`` stays).
ADDRESS_HEADERS = frozenset({"x-forwarded-for", "x-real-ip", "x-client-ip", "true-client-ip", "cf-connecting-ip",
                             "x-originating-ip", "x-remote-ip", "x-remote-addr", "x-cluster-client-ip",
                             "fastly-client-ip", "client-ip", "x-envoy-external-address"})
#: The headers whose value is a URL (it may name the gateway): redacted as a captured URL is.
_URL_HEADERS = frozenset({"origin", "referer", "location", "content-location"})
#: The nodes RFC 7239's ``Forwarded`` header names: ``host=``, ``for=`` and ``by=``, a token or a quoted string
#: (its escapes kept), with the blanks some proxies write around ``=``.
_FORWARDED_HOST = re.compile(r'(?i)\b(host|for|by)(\s*=\s*)(?:"((?:[^"\\]|\\.)*)("?)|([^;,"\s]+))')
#: A hop of a ``Via`` header (RFC 9110 §7.6.3): its protocol (kept) and the host, pseudonym or address that
#: received it (replaced; a hop of one word is that host); a comment after it is replaced letter by letter.
_VIA_HOP = re.compile(r"(^|,)(\s*)([^\s,()]+\s+)?([^\s,()]+)")
_COMMENT = re.compile(r"\(([^()]*)\)")
_LIST_ITEM = re.compile(r"[^,\s]+")
_QUERY_PARAMETER = re.compile(r"[?&]([^=&#\s]+)=([^&#\s]*)")
_DIGITS, _LOWER, _UPPER, _HEX = "0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdef"
#: A public host as it may stand: ASCII letters, digits, dots and dashes, and at most HTTPS's own port.
_PUBLIC_FORM = re.compile(r"([A-Za-z0-9.-]+)(?::443)?")
#: A scheme (after what WHATWG strips first: C0 controls and spaces); the web's schemes take an authority
#: after any number of slashes or backslashes, the others only after ``//``.
_SCHEME = re.compile(r"[\x00-\x20]*([A-Za-z][A-Za-z0-9+.-]*):")
_WEB_SCHEMES = frozenset({"http", "https", "ws", "wss", "ftp"})
_DROPPED = "\t\n\r"  # removed from a URL before it is parsed (WHATWG, urlsplit)
#: A dotted quad in a placeholder (its numbers made octets again: :func:`_octets`).
_QUAD = re.compile(r"(?<![0-9A-Za-z.])\d{1,3}(?:\.\d{1,3}){3}(?![0-9A-Za-z.])")
#: An IPv4 literal standing in any text (a query string, a header's free text): four numbers of 0-255 and
#: no more, not inside a longer dotted number or name (``1.2.3.4.5``, ``v1.2.3.4a`` are none); a
#: sentence's full stop after it does not hide it.
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|0?\d?\d)"
_IPV4_IN_TEXT = re.compile(rf"(?<![0-9A-Za-z.]){_OCTET}(?:\.{_OCTET}){{3}}(?![0-9A-Za-z]|\.[0-9A-Za-z])")
#: An authority with no scheme before it, at the start of a URL (then its path, query or fragment, or the
#: end): a host (a name or a bracketed address) and a port, ``gw.corp:8080/v1``; or a host name of two labels
#: or more, the last one starting with a letter, or an IPv4 address, ``gw.corp/v1``.
_BARE_AUTHORITY = re.compile(r"(?:(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.%]*\]):\d+"
                             r"|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z][A-Za-z0-9-]*\.?"
                             r"|\d{1,3}(?:\.\d{1,3}){3})(?=[/?#]|$)")


def is_public_host(host: str) -> bool:
    """Whether ``host`` (a ``host[:port]`` as a header or a URL's authority holds it) is exactly a
    public vendor API's host: one pi-ai's catalog names, in any ASCII letter case, with no port or
    ``:443``. Nothing else is: no subdomain, suffix, trailing dot, other port, user information or
    character past ASCII.

    Example:
        >>> [is_public_host(h) for h in ("api.anthropic.com", "API.OpenAI.com:443", "api.openai.com:8443",
        ...                               "gw.internal.anthropic.com", "api.deepseek.com.corp.example")]
        [True, True, False, False, False]
    """
    match = _PUBLIC_FORM.fullmatch(host)
    return match is not None and match[1].lower() in public_hosts()


def host_value(name: str, value: Any, redactor: Redactor) -> str | None:
    """The redacted value of a header that names a host or an address (:data:`HOST_HEADERS`,
    :data:`ADDRESS_HEADERS`, ``Via``, ``Forwarded``, a URL-valued one), in any letter case, or None for any
    other header (or a value that is no string).

    Example:
        >>> from dsh_audit.redact import Placeholders
        >>> r = Redactor(Placeholders(b"salt"))
        >>> v = host_value("Forwarded", 'for = 10.1.2.3 ; host="gw.corp:8443";proto=http', r)
        >>> "10.1.2.3" in v or "gw.corp" in v, v.endswith(";proto=http"), host_value("accept", "*/*", r)
        (False, True, None)
        >>> host_value("Via", "1.1 gw.corp, HTTP/2 10.0.0.1:80", r)[:4], host_value("X-Real-IP", "unknown", r)
        ('1.1 ', 'unknown')
    """
    lowered = name.lower()
    if not isinstance(value, str):
        return None
    if lowered in HOST_HEADERS:
        return redact_host(value, redactor)
    if lowered in ADDRESS_HEADERS:
        return _LIST_ITEM.sub(lambda m: _node(m[0], redactor), value)
    if lowered in _URL_HEADERS:
        return redact_url(value, redactor)
    if lowered == "via":
        return _via(value, redactor)
    if lowered == "forwarded":
        return _FORWARDED_HOST.sub(lambda m: _forwarded(m, redactor), value)
    return None


def _node(item: str, redactor: Redactor) -> str:
    """An address of a list (a client's or a proxy's) replaced by :func:`redact_host`; RFC 7239's
    ``unknown``, which names no one, stays."""
    return item if item.lower() == "unknown" else redact_host(item, redactor)


def _forwarded(match: re.Match[str], redactor: Redactor) -> str:
    """A ``for``, ``by`` or ``host`` pair of ``Forwarded`` with its node replaced, quoted as it was."""
    name, equals, quoted, closing, token = match.groups()
    if token is not None:
        return f"{name}{equals}{_node(token, redactor)}"
    return f'{name}{equals}"{_node(quoted, redactor)}{closing}'


def _via(value: str, redactor: Redactor) -> str:
    """A ``Via`` header with each hop's host (or pseudonym) replaced by :func:`redact_host`, its protocol
    (``1.1``, ``HTTP/2``) kept and the text of its comments replaced by :func:`redact_ascii`."""
    value = _COMMENT.sub(lambda m: f"({redact_ascii(m[1], redactor)})", value)
    return _VIA_HOP.sub(lambda m: m[1] + m[2] + (m[3] or "") + redact_host(m[4], redactor), value)


def redact_host(host: str, redactor: Redactor) -> str:
    """The placeholder of a gateway's ``host[:port]`` (or IP address): as long as it, letters for letters
    and digits for digits, its dots, colons, brackets and dashes kept, and the same wherever it stands (a
    ``host`` header, a URL, a route file's ``baseURL``; an IP address is a prefix of its ``host:port``,
    an IPv6 address of its bracketed form). A public vendor API's host (:func:`is_public_host`) stays.

    Example:
        >>> from dsh_audit.redact import Placeholders
        >>> r = Redactor(Placeholders(b"salt"))
        >>> a = redact_host("10.0.0.7:8080", r)
        >>> len(a), a.count("."), a == redact_host("10.0.0.7:8080", r) != "10.0.0.7:8080"
        (13, 3, True)
    """
    if is_public_host(host):
        return host
    bracket = host.startswith("[")
    text = host[1:] if bracket else host  # drawn without its bracket: the bare address is its prefix
    address = text.split("]", 1)[0] if bracket else text
    hex_digits = 0
    if address.count(":") >= 2 and all(c in "0123456789abcdefABCDEF:." for c in address.split("%", 1)[0]):
        hex_digits = len(address.split("%", 1)[0])  # an IPv6 literal: hex stays hex, so it still parses
    shaped = _reserved_quads(text, _octets(_shape(text, _drawn(text, redactor), hex_digits=hex_digits)))
    port = _port_at(text, bracket=bracket)
    if port is not None:
        shaped = shaped[:port] + _port(shaped[port:])
    return "[" * bracket + shaped


def redact_ipv4(text: str, redactor: Redactor) -> str:
    """``text`` with each IPv4 literal in it (:data:`_IPV4_IN_TEXT`) replaced by :func:`redact_host`'s
    placeholder of that address: the one it has in a ``host`` header, a URL's host or ``x-forwarded-for``,
    as long as it, in a block that names no one's machine; every other character kept.

    Example:
        >>> from dsh_audit.redact import Placeholders
        >>> r = Redactor(Placeholders(b"salt"))
        >>> out = redact_ipv4("from 172.16.0.1, not 1.2.3.4.5 or 300.1.1.1.", r)
        >>> out == f"from {redact_host('172.16.0.1', r)}, not 1.2.3.4.5 or 300.1.1.1.", "172.16.0.1" in out
        (True, False)
    """
    return _IPV4_IN_TEXT.sub(lambda m: redact_host(m[0], redactor), text)


def _port_at(text: str, *, bracket: bool) -> int | None:
    """Where the port of a ``host:port`` (``text``: a bracketed address without its ``[``) starts, or None
    when it has none (an IPv6 address alone has colons and no port)."""
    if bracket:
        end = text.find("]:")
        at = end + 2 if end >= 0 else -1
    else:
        at = text.find(":") + 1 if text.count(":") == 1 else -1
    return at if 0 < at < len(text) and text[at:].isdigit() and text[at:].isascii() else None


def _port(digits: str) -> str:
    """``digits`` (a port's placeholder) as a port a URL parser takes: 1-65535, as many digits, no leading
    zero; ``digits`` itself when it is one already, or when no port has as many digits (a port of six
    digits or more was none before either)."""
    low, high = (1, 9) if len(digits) == 1 else (10 ** (len(digits) - 1), min(10 ** len(digits) - 1, 65535))
    number = int(digits)
    if len(digits) > 5 or low <= number <= high and (len(digits) == 1 or digits[0] != "0"):
        return digits
    return str(low + number % (high - low + 1))


def redact_ascii(text: str, redactor: Redactor, *, hex_id: bool = False) -> str:
    """The placeholder of ``text`` in printable ASCII, as long as it in characters, the same
    wherever it stands: a digit for a digit, a letter for a letter (its case kept), printable
    ASCII punctuation and spaces kept, a lowercase letter for anything else (a character past
    ASCII, a control: a route file's header value holds none of them, and re-reads as written).
    With ``hex_id`` (``text`` is hex digits and dashes: a UUID), its letters are hex letters: the
    placeholder is a hex id of the same shape.

    Example:
        >>> from dsh_audit.redact import Placeholders
        >>> r = Redactor(Placeholders(b"salt"))
        >>> a = redact_ascii("équipe café\\n", r)
        >>> len(a), a.isascii(), a.isprintable(), a == redact_ascii("équipe café\\n", r) != "équipe café\\n"
        (12, True, True, True)
        >>> u = redact_ascii("cfa76663-0228-491c-98ff-d93176390be7", r, hex_id=True)
        >>> len(u), u.count("-"), set(u) <= set("0123456789abcdef-"), u != "cfa76663-0228-491c-98ff-d93176390be7"
        (36, 4, True, True)
    """
    return _shape(text, _drawn(text, redactor), hex_digits=len(text) if hex_id else 0)


def _drawn(text: str, redactor: Redactor) -> str:
    """The salted, prefix-preserving draw of one character per character of ``text``."""
    drawn = redactor.placeholders.plain(text, lines=False)
    if len(drawn) != len(text):  # never so (one drawn character a character): letters of its draw then
        drawn = (drawn * (len(text) // max(len(drawn), 1) + 1))[:len(text)] if drawn else "x" * len(text)
    return drawn


def _shape(text: str, drawn: str, *, hex_digits: int = 0) -> str:
    """``text`` with each character replaced by one of its class picked by ``drawn`` (see
    :func:`redact_ascii`); the first ``hex_digits`` characters (an IPv6 address) take hex letters."""
    out = []
    for at, (c, d) in enumerate(zip(text, drawn)):
        letters = _HEX if at < hex_digits else _LOWER
        out.append(_DIGITS[ord(d) % 10] if c in _DIGITS else letters[ord(d) % len(letters)] if c in _LOWER
                   else letters[ord(d) % len(letters)].upper() if c in _UPPER
                   else c if c.isascii() and c.isprintable() else letters[ord(d) % len(letters)])
    return "".join(out)


def _octets(text: str) -> str:
    """``text`` (a host's placeholder) with the numbers of each dotted quad made octets (0-255, no leading
    zero), as the original's were, so an IPv4 address (alone, or the end of an IPv6 one) is still one."""
    def octet(number: str) -> str:
        if len(number) > 1 and (number[0] == "0" or int(number) > 255):
            return "1" + number[1:]
        return number

    return _QUAD.sub(lambda m: ".".join(octet(n) for n in m[0].split(".")), text)


#: RFC 5737's documentation blocks (TEST-NET-1, -2, -3), which name no machine: an IPv4 placeholder of 9 to
#: 14 characters lies in one of them (:func:`_reserved`).
_DOCUMENTATION = ("192.0.2.", "198.51.100.", "203.0.113.")
#: The blocks for the lengths no documentation address has: 7 characters, ``0.0.0.0/8`` ("this network",
#: RFC 6890: never forwarded); 8, ``10.0.0.0/8``; 15, ``192.168.0.0/16`` (private, RFC 1918: no one's
#: address on the Internet). Each with the widths of the octets drawn after it.
_OTHER_BLOCKS = {7: ("0.", (1, 1, 1)), 8: ("10.", (1, 1, 1)), 15: ("192.168.", (3, 3))}


def _reserved_quads(text: str, shaped: str) -> str:
    """``shaped`` (the placeholder of ``text``, a host) with each dotted quad of ``text`` in it replaced
    by :func:`_reserved` of its placeholder; a loopback address (``127.x.x.x``) stays one, ``127.`` and
    the placeholder's other octets."""
    out, at = [], 0
    for match in _QUAD.finditer(text):
        start, end = match.span()
        loopback = match[0].startswith("127.")
        quad = "127" + shaped[start + 3:end] if loopback else _reserved(shaped[start:end])
        out += [shaped[at:start], quad]
        at = end
    return "".join(out) + shaped[at:]


def _reserved(drawn: str) -> str:
    """An IPv4 address's placeholder (``drawn``: a dotted quad as long as it, picked by the salted draw)
    moved into a block that names no one's machine, as long as it: a documentation block when one
    fits (:data:`_DOCUMENTATION`), else the block of :data:`_OTHER_BLOCKS` for its length; the same
    ``drawn`` gives the same address.

    Example:
        >>> [_reserved(q) for q in ("1.2.3.4", "12.3.4.5", "156.5.7.1", "197.0.1.14", "170.9.0.8", "156.57.61.100",
        ...                         "255.255.255.255")]
        ['0.4.3.2', '10.5.4.3', '192.0.2.1', '192.0.2.24', '192.0.2.8', '198.51.100.80', '192.168.139.184']
    """
    pick = int(drawn.replace(".", ""))
    fits = [prefix for prefix in _DOCUMENTATION if 1 <= len(drawn) - len(prefix) <= 3]
    if fits:
        prefix = fits[pick % len(fits)]
        widths: tuple[int, ...] = (len(drawn) - len(prefix),)
        pick //= len(fits)
    else:
        prefix, widths = _OTHER_BLOCKS[len(drawn)]
    octets = []
    for width in widths:
        low, high = (0, 9) if width == 1 else (10 ** (width - 1), min(10 ** width - 1, 255))
        octets.append(str(low + pick % (high - low + 1)))
        pick //= high - low + 1
    return prefix + ".".join(octets)


def _authority(url: str) -> tuple[int, int] | None:
    """Where the authority (user information, host, port) of ``url`` stands, as WHATWG and Python's
    ``urlsplit`` may read it (see the module), or None when it has none (a path, ``mailto:``)."""
    at = [i for i, c in enumerate(url) if c not in _DROPPED]  # index in url of each character kept
    clean = "".join(url[i] for i in at)
    scheme = _SCHEME.match(clean)
    if scheme is not None and scheme[1].lower() in _WEB_SCHEMES:
        start = scheme.end()
        while start < len(clean) and clean[start] in "/\\":
            start += 1
    else:
        lead = len(clean) - len(clean.lstrip("".join(map(chr, range(33)))))
        bare = _BARE_AUTHORITY.match(clean, lead)
        if bare is not None:  # gw.corp:8080/v1, gw.corp/v1: a host with no scheme before it is still a host
            return at[lead], at[bare.end() - 1] + 1
        start = scheme.end() if scheme is not None else lead
        if clean[start:start + 2] != "//":
            return None
        start += 2
    end = start
    while end < len(clean) and clean[end] not in "/?#":
        end += 1
    return (at[start], at[end - 1] + 1) if end > start else None


def redact_url(url: str, redactor: Redactor) -> str:
    """A captured URL (or request path), kept without its secrets: those of its shape (a provider key,
    ``?api_key=`` with a value of 4 characters or more) and the value of every query parameter whose
    name says credential (``?token=abc``: :func:`._secrets.credential_name`), whatever its length;
    its user information is replaced, and its host and port as :func:`redact_host` replaces them; an
    IPv4 literal anywhere else in it (its path, a query parameter's value, its fragment) as
    :func:`redact_ipv4` replaces it.

    Example:
        >>> from dsh_audit.redact import Placeholders
        >>> r = Redactor(Placeholders(b"salt"))
        >>> redact_url("https://api.deepseek.com/v1/chat/completions", r)
        'https://api.deepseek.com/v1/chat/completions'
        >>> redact_url("https://api.deepseek.com.corp.example/v1", r).startswith("https://api.deepseek.com")
        False
    """
    kept = redactor.keep_text(url)
    for match in _QUERY_PARAMETER.finditer(url):
        start, end = match.span(2)
        if start < end and kept[start:end] == url[start:end] and credential_name(unquote(match.group(1))):
            value = redactor.replace_named(match.group(2), unquote(match.group(1)), "url_parameter")
            kept = kept[:start] + value + kept[end:]
    span = _authority(url)
    if span is None or len(kept) != len(url):
        return redact_ipv4(kept, redactor)
    start, end = span
    authority = url[start:end]
    user = authority.rfind("@") + 1  # the last @ ends the user information, for WHATWG and urlsplit alike
    redacted = redact_ascii(authority[:user], redactor) + redact_host(authority[user:], redactor)
    return redact_ipv4(kept[:start], redactor) + redacted + redact_ipv4(kept[end:], redactor)
