"""The gateway's address in a capture and a route file: which hosts stay, and the placeholder of the others.

A captured request names the host it went to: the ``host`` header (and a proxy's ``x-forwarded-host``,
``x-forwarded-server``, ``x-original-host``), a URL (a wire record's ``url``, a HAR ``url``, ``origin``,
``referer``, ``location``, a route file's ``baseURL``) and a HAR entry's ``serverIPAddress``; the
addresses it came from or through are in ``Via`` (each hop's host), RFC 7239's ``Forwarded`` (``for``,
``by``, ``host``) and the address lists proxies write (``x-forwarded-for``, ``x-real-ip``...:
:data:`ADDRESS_HEADERS`). A private gateway's or client's address identifies its owner: it becomes a
placeholder of the same length, the same one wherever it stands (:func:`redact_host`), a header's name
in any letter case; two different hosts never share one (:meth:`Redactor.distinct`: a draw another host was
given is drawn again, salted). The host of a public vendor API stays, so a reader sees the route: only a
host that is exactly one pi-ai's catalog names (:func:`._routes.public_hosts`: ``api.anthropic.com``,
``api.openai.com``, ``api.deepseek.com``, the Bedrock regions it lists...), in any letter case, with no port or
HTTPS's ``:443``. Anything else loses its address: a host under a vendor's domain (``gw.internal.anthropic.com``),
one that starts like a vendor's (``api.deepseek.com.corp.example``), a vendor's host on another port
(``api.openai.com:8443``: not the vendor's endpoint), a trailing dot, a character past ASCII (the Kelvin sign that
lower-cases to ``k``), punycode, an IP address.

A URL's authority is read as any parser may read it (:func:`._authority.authority`): after a web scheme's
slashes or backslashes, however many (WHATWG reads ``https:/host`` and ``https:\\\\host`` so),
tabs and line breaks skipped (both WHATWG and Python's ``urlsplit`` drop them), up to the first
``/``, ``?`` or ``#`` (a backslash does not end it: ``urlsplit`` reads what follows as host); with no
scheme, a ``host:port`` or a dotted host name that starts it (``gw.corp:8080/v1``, ``gw.corp/v1``). Its user
information (before the last ``@``) is replaced whatever the host, and its host and port as a host
header's are. An address stays one (a redacted ``[fd00::1]`` still parses, as ``urlsplit`` requires of a
bracketed host), and a port a port of as many digits, so ``urlsplit(url).port`` and a WHATWG parser read the
redacted URL; an address's placeholder names no one's machine (:mod:`._addresses`: RFC 5737's and RFC
3849's documentation blocks, ``[2a00:1450::1]`` -> ``[2001:db8::c7]``...); a loopback one stays one
(``127.0.0.1`` -> ``127.9.0.8``, ``::1``, ``::ffff:127.0.0.1`` -> ``::ffff:127.4.0.2``).

An address anywhere else, in a URL's path, query or fragment (``?ip=172.16.0.1``), in a kept header's free
text or a response header (:mod:`._capture`), plain or percent-encoded (``%31%30.0.0.1``), is replaced the
same way (:func:`redact_addresses`): the placeholder it has as a host, so one address reads as one wherever it
stands. A query parameter's value that is a URL or a ``host:port`` (``?next=http%3A%2F%2F10.1.2.3%2F``) is
read decoded and redacted as one (:func:`redact_query_value`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import unquote

from ._authority import DOTTED_NAME, SCHEME, WEB_SCHEMES, authority as _authority_span
from ._addresses import ESCAPE, bad_escape, escaped_address_char, in_decoded, in_form, name_draws, no_escape
from ._addresses import numeric_ipv4, port as _port, shape as _shape
from ._printable import printable_decoded
from ._ipv6 import ipv6_draws, is_ipv6
from ._redactor import Every, Redactor
from ._pseudonyms import draws as _draws, drawn as _drawn, redact_ascii, redrawn as _redrawn
from ._spans import address_spans, host_spans, replaced, written_spans
from ._routes import public_hosts
from ._secrets import credential_name

__all__ = ["ADDRESS_HEADERS", "HOST_HEADERS", "escapes_kept", "host_value", "is_public_host",
           "redact_addresses", "redact_host", "redact_query_value", "redact_url"]

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
_FORWARDED_HOST = re.compile(r'(?i)(?<![A-Za-z0-9_])(host|for|by)(\s*=\s*)(?:"((?:[^"\\]|\\.)*)("?)|([^;,"\s]+))')
#: A hop of a ``Via`` header (RFC 9110 §7.6.3): its protocol (kept) and the host, pseudonym or address that
#: received it (replaced; a hop of one word is that host); a comment after it is replaced letter by letter.
_VIA_HOP = re.compile(r"(^|,)(\s*)([^\s,()]+\s+)?([^\s,()]+)")
_COMMENT = re.compile(r"\(([^()]*)\)")
_LIST_ITEM = re.compile(r"[^,\s]+")
_QUERY_PARAMETER = re.compile(r"[?&]([^=&#\s]+)=([^&#\s]*)")
#: A public host as it may stand: ASCII letters, digits, dots and dashes, and at most HTTPS's own port.
_PUBLIC_FORM = re.compile(r"([A-Za-z0-9.-]+)(?::443)?")
#: A query parameter's value that is a ``host:port`` (redacted as a host): a dotted name whose last label starts
#: with a letter, an IPv4 address or a bracketed one (``12:30`` or ``name:1`` are none); and how many URLs deep,
#: one inside a query value of another, a URL's hosts are read (:func:`_query_value`).
_HOST_PORT = re.compile(rf"(?:{DOTTED_NAME}|[0-9]{{1,3}}(?:\.[0-9]{{1,3}}){{3}}"
                        r"|\[[0-9A-Fa-f:.%]*\]):[0-9]{1,5}")
_NESTED = 4


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
        return _forwarded_header(value, redactor)
    return None


def _node(item: str, redactor: Redactor) -> str:
    """An address of a list (a client's or a proxy's) replaced by :func:`redact_host`; RFC 7239's
    ``unknown``, which names no one, stays."""
    return item if item.lower() == "unknown" else redact_host(item, redactor)


def _forwarded_header(value: str, redactor: Redactor) -> str:
    """A ``Forwarded`` header with each node replaced (:func:`_forwarded`) and the addresses of the rest (an
    extension's parameter, ``x=10.0.0.9``) as in any text (:func:`redact_addresses`: fuzz 24 found them kept)."""
    out, at = [], 0
    for match in _FORWARDED_HOST.finditer(value):
        out += [redact_addresses(value[at:match.start()], redactor), _forwarded(match, redactor)]
        at = match.end()
    return "".join(out) + redact_addresses(value[at:], redactor)


def _forwarded(match: re.Match[str], redactor: Redactor) -> str:
    """A ``for``, ``by`` or ``host`` pair of ``Forwarded`` with its node replaced, quoted as it was."""
    name, equals, quoted, closing, token = match.groups()
    if token is not None:
        return f"{name}{equals}{_node(token, redactor)}"
    return f'{name}{equals}"{_node(quoted, redactor)}{closing}'


def _via(value: str, redactor: Redactor) -> str:
    """A ``Via`` header with each hop's host (or pseudonym) replaced by :func:`redact_host`, its protocol
    (``1.1``, ``HTTP/2``) kept and the text of its comments replaced (:func:`_comment`)."""
    value = _COMMENT.sub(lambda m: f"({_comment(m[1], redactor)})", value)
    return _VIA_HOP.sub(lambda m: m[1] + m[2] + (m[3] or "") + redact_host(m[4], redactor), value)


def _comment(text: str, redactor: Redactor) -> str:
    """A ``Via`` comment's text: each host in it (:func:`._spans.host_spans`) its placeholder, in a block naming no
    one's machine (fuzz 24), the rest :func:`redact_ascii`'s; read percent-decoded, each escape an escape still, but
    for hosts as written (:func:`_written_first`); printable however often decoded (:func:`printable_decoded`)."""
    host = functools.partial(redact_host, redactor=redactor)
    return printable_decoded(_written_first(text, host_spans, host, lambda plain: replaced(
        plain, host_spans(plain), host, lambda rest: redact_ascii(rest, redactor) if rest else "")))


def redact_host(host: str, redactor: Redactor) -> str:
    """The placeholder of a gateway's ``host[:port]`` (or IP address), as long as it: a name's letters for
    letters, digits for digits, its dots, colons and dashes kept; an IP address's one in a block that names no
    one's machine (an IPv6 one in a form of its length: ``fd00::1`` -> ``100::9c``; its zone :func:`_zone`'s).
    The same wherever it stands (a ``host`` header, a URL, a ``baseURL``; an address is a prefix of its
    ``host:port``, an IPv6 one of its bracketed form). A public vendor API's host (:func:`is_public_host`) stays.
    A host written percent-encoded (``%31%30%2E0.0.1``) is redacted as read decoded, each escape an escape still
    (:func:`._addresses.in_decoded`); one a URL parser reads as an IPv4 address though it is no dotted quad
    (``0x7f000001``, ``2130706433``, ``127.1``) is one (a loopback one stays one), written in its form.

    Example:
        >>> from dsh_audit.redact import Placeholders
        >>> r = Redactor(Placeholders(b"salt"))
        >>> a = redact_host("10.0.0.7:8080", r)
        >>> len(a), a.count("."), a == redact_host("10.0.0.7:8080", r) != "10.0.0.7:8080"
        (13, 3, True)
    """
    address, mark, zone = host.lstrip("[").partition("%")
    if is_ipv6(address) and not escaped_address_char(mark + zone):  # its zone's ``%25``: :func:`_zone`
        return _host(host, redactor)
    return in_decoded(host, lambda plain: _host(plain, redactor))


def _host(host: str, redactor: Redactor) -> str:
    """:func:`redact_host` of a host read as written (decoded already, or an IPv6 address whose zone
    :func:`_zone` decodes): an IPv4 address a URL parser reads in a number or more (``0x7f000001``,
    :func:`._addresses.numeric_ipv4`) takes its dotted quad's placeholder, written in its form, and the port
    that quad has."""
    if is_public_host(host):
        return host
    bracket = host.startswith("[")
    text = host[1:] if bracket else host  # drawn without its bracket: the bare address is its prefix
    port = _port_at(text, bracket=bracket)
    name = text[:len(text) if port is None else port - 1]
    name = name.split("]", 1)[0] if bracket else name  # the host, without its bracket or port
    quad = None if bracket else numeric_ipv4(name)  # its port takes the port's placeholder the address has
    if quad is not None:
        shaped = _host(quad + text[len(name):], redactor)
        return in_form(name, shaped[:len(quad)]) + shaped[len(quad):]
    address = name.split("%", 1)[0]
    literal = address.count(":") >= 2 and all(c in "0123456789abcdefABCDEF:." for c in address)
    hex_digits = len(address) if literal else 0  # an IPv6 literal: hex stays hex, so it still parses
    v6 = _ipv6_draws(address, redactor) if hex_digits else None
    key = name if v6 is None else address  # the placeholder of each is given to it alone (Redactor.distinct)
    shaped = redactor.distinct(key, *(v6 if v6 is not None else name_draws(
        name, lambda attempt: _redrawn(name, attempt, redactor), hex_digits=hex_digits, draws=_draws(name))))
    shaped = shaped if v6 is not None else escapes_kept([(name, shaped)])  # fuzz 30: ``:2a00::8b%eth1``, no ``%dc``
    if len(key) < len(text):  # an IPv6 address's zone (``%25eth0``) may name a machine: replaced
        zone = text[len(key):].split("]", 1)[0] if v6 is not None else ""  # its placeholder may be shorter (``%C3%A9``)
        shaped += _zone(zone, redactor) + _after(text[len(key) + len(zone):], port is not None, redactor)
    if port is not None:  # nor do two ports of one host
        shaped = redactor.distinct(text, (shaped[:port] + _port(_shape(text, _redrawn(text, n, redactor))[port:])
                                          for n in range(_draws(text))))
    return "[" * bracket + shaped


def _after(rest: str, port: bool, redactor: Redactor) -> str:
    """What follows a host's address and zone: its ``]`` and ``:``, kept, and a ``port``, which the port's own
    draw replaces (:func:`_host`); anything else after a bracket (``[fd00::1]x``) shaped by a draw of its own."""
    return rest if port else _shape(rest, _drawn(rest, redactor))


def _zone(zone: str, redactor: Redactor) -> str:
    """An IPv6 address's zone (``%eth0``, in a URL ``%25eth0``), its ``%`` kept, its name (``alice-laptop``)
    :func:`redact_ascii`'s placeholder, read decoded (:func:`._addresses.in_decoded`). Its ``%`` and the first two
    characters of that placeholder never read as an escape of a control or of a byte past ASCII (fuzz 27: ``%31``
    became ``%83``, no UTF-8): where they stood for one (``%12-x``, a Windows interface's number), that escape is
    written back an escape of its placeholder's character; elsewhere a hex letter of the placeholder is no hex one
    (:func:`._addresses.no_escape`)."""
    mark = 3 if zone.startswith("%25") and len(zone) > 3 else 1
    name = in_decoded(zone[mark:], lambda text: redact_ascii(text, redactor))
    if mark == 3 or not bad_escape(zone[:1] + name):
        return zone[:mark] + name
    if ESCAPE.match(zone):
        return in_decoded(zone, lambda text: redact_ascii(text, redactor))
    return zone[:1] + no_escape(name)


def redact_addresses(text: str, redactor: Redactor) -> str:
    """``text`` with each IP address in it replaced by :func:`redact_host`'s placeholder of that address (the
    one it has in a ``host`` header, a URL's host or ``x-forwarded-for``: as long as it, in a block that names
    no one's machine): an IPv4 or IPv6 literal (:func:`._spans.address_spans`; an IPv6 one that
    :mod:`ipaddress` reads, with a decimal digit: ``dead::beef`` or a time ``12:30:45`` are none), as written
    (``10.0.0.7%2Eab``: :func:`_written_first`) or percent-encoded (``%31%30.0.0.1``, ``fd00%3A%3A1``: each replaced
    character encoded as it was, :func:`._addresses.in_decoded`); every other character kept.

    Example:
        >>> from dsh_audit.redact import Placeholders
        >>> r = Redactor(Placeholders(b"salt"))
        >>> out = redact_addresses("from 172.16.0.1, [fd00::7]:80, not 1.2.3.4.5, 300.1.1.1 or 12:30:45.", r)
        >>> out == (f"from {redact_host('172.16.0.1', r)}, [{redact_host('fd00::7', r)}]:80, not 1.2.3.4.5, "
        ...         "300.1.1.1 or 12:30:45."), redact_addresses("%31%30.0.0.1", r)[:3]
        (True, '%31')
    """
    return _written_first(text, address_spans, lambda address: redact_host(address, redactor),
                          lambda plain: _plain_addresses(plain, redactor))


def _written_first(text: str, find: Callable[[str], Iterable[tuple[int, int]]], inside: Callable[[str], str],
                   rest: Callable[[str], str]) -> str:
    """``text`` redacted by ``rest`` (which finds and replaces its hosts itself), but for a percent-encoded one:
    first each host that stands in it as written (:func:`._spans.written_spans`: each IPv6 address whose zone is
    as written, ``fe80::1%café-alice``, and each host ``find`` finds) replaced by ``inside``, then each stretch
    between them by ``rest`` read decoded (:func:`._addresses.in_decoded`). Read decoded first, a zone whose name
    starts as an escape would (``%ca`` of ``%café``) was no zone, its name kept (fuzz 24), and an escape beside an
    address (``10.0.0.7%2Eab``: ``10.0.0.7.ab``) made it none (review 41). No new escape (:func:`escapes_kept`)."""
    if "%" not in text:
        return rest(text)
    cuts = [0, *(at for span in written_spans(text, find) for at in span), len(text)]
    return escapes_kept([(text[a:b], inside(text[a:b]) if n % 2 else in_decoded(text[a:b], lambda plain: escapes_kept(
        [(plain, rest(plain))]))) for n, (a, b) in enumerate(zip(cuts, cuts[1:]))])


def escapes_kept(pieces: Iterable[tuple[str, str]]) -> str:
    """Stretches of a text and what replaced each (``pieces``) joined, with no escape where the text had a bare ``%``
    (fuzz 28: a ``Via`` comment's ``%ZZ`` became ``%EA``, no UTF-8): a hex letter after it made a letter six on, or
    two digits the first a letter (:func:`._addresses.no_escape`); where a UTF-8 character's escapes became one, only a stretch's last ``%``."""
    text, out, marks = "", "", []
    for old, new in pieces:
        pairs = [[at for at, char in enumerate(part) if char == "%"] for part in (old, new)]
        same = len(pairs[0]) == len(pairs[1])
        marks += [(len(text) + i, len(out) + j) for i, j in zip(*(pairs if same else [p[-1:] for p in pairs]))
                  if same or len(old) - i == len(new) - j <= 2]
        text, out = text + old, out + new
    chars = list(out)  # two digits too: an IPv6 placeholder's layout is not its address's (``%2::17a``, review E)
    for at in (j + 1 for i, j in marks if not ESCAPE.match(text, i) and ESCAPE.match(out, j)):
        chars[at:at + 2] = no_escape(out[at:at + 2])
    return "".join(chars)


def _plain_addresses(text: str, redactor: Redactor) -> str:
    """``text`` (read as written: decoded already) with the addresses :func:`._spans.address_spans` finds replaced."""
    return replaced(text, address_spans(text), lambda address: _host(address, redactor))


def _ipv6_draws(address: str, redactor: Redactor) -> tuple[Iterator[str] | Every, ...] | None:
    """:func:`._ipv6.ipv6_draws` of an IPv6 address, its hex digits drawn with the salt from the whole
    address (:meth:`._plain.PlainPlaceholders.hex_digits`); None for no address."""
    return ipv6_draws(address, lambda n: redactor.placeholders.hex_digits(f"{n}#{address}", len(address)),
                      lambda quad: _host(quad, redactor))


def _port_at(text: str, *, bracket: bool) -> int | None:
    """Where the port of a ``host:port`` (``text``: a bracketed address without its ``[``) starts, or None
    when it has none (an IPv6 address alone has colons and no port)."""
    if bracket:
        end = text.find("]:")
        at = end + 2 if end >= 0 else -1
    else:
        at = text.find(":") + 1 if text.count(":") == 1 else -1
    return at if 0 < at < len(text) and text[at:].isdigit() and text[at:].isascii() else None


def redact_url(url: str, redactor: Redactor) -> str:
    """A captured URL (or request path), kept without its secrets: those of its shape (a provider key,
    ``?api_key=`` with a value of 4 characters or more) and the value of every query parameter whose
    name says credential (``?token=abc``: :func:`._secrets.credential_name`), whatever its length;
    its user information is replaced, and its host and port as :func:`redact_host` replaces them; an
    IP address anywhere else in it (its path, its fragment) as :func:`redact_addresses` replaces it, and a
    query parameter's value as :func:`redact_query_value` does.

    Example:
        >>> from dsh_audit.redact import Placeholders
        >>> r = Redactor(Placeholders(b"salt"))
        >>> redact_url("https://api.deepseek.com/v1/chat/completions", r)
        'https://api.deepseek.com/v1/chat/completions'
        >>> redact_url("https://api.deepseek.com.corp.example/v1", r).startswith("https://api.deepseek.com")
        False
    """
    return _url(url, redactor, nested=0)


def _url(url: str, redactor: Redactor, *, nested: int) -> str:
    """:func:`redact_url` of a URL standing ``nested`` query values deep (a nested one's secrets were found and
    counted in the URL it stands in, read decoded: not counted twice)."""
    kept = redactor.keep_text(url) if not nested else url
    for match in _QUERY_PARAMETER.finditer(url if not nested else ""):
        start, end = match.span(2)
        if start < end and kept[start:end] == url[start:end] and credential_name(unquote(match.group(1))):
            value = redactor.replace_named(match.group(2), unquote(match.group(1)), "url_parameter")
            kept = kept[:start] + value + kept[end:]
    span = _authority_span(url)
    if span is None or len(kept) != len(url):
        return _around(kept, redactor, nested=nested)
    start, end = span
    authority = url[start:end]
    user = authority.rfind("@") + 1  # the last @ ends the user information, for WHATWG and urlsplit alike
    redacted = redact_ascii(authority[:user], redactor) + redact_host(authority[user:], redactor)
    return _around(kept[:start], redactor, nested=nested) + redacted + _around(kept[end:], redactor, nested=nested)


def _around(text: str, redactor: Redactor, *, nested: int) -> str:
    """The text of a URL around its authority: each query parameter's value as :func:`redact_query_value`
    redacts it, the addresses of the rest as :func:`redact_addresses` does."""
    return replaced(text, (match.span(2) for match in _QUERY_PARAMETER.finditer(text)), lambda value: _query_value(
        value, redactor, nested=nested), lambda rest: redact_addresses(rest, redactor))


def redact_query_value(value: str, redactor: Redactor) -> str:
    """A URL query parameter's value (in a URL, a HAR ``queryString`` item) read percent-decoded: a URL of the
    web's schemes (``?next=http%3A%2F%2F10.1.2.3%2F``) or a ``host:port`` (``gw.corp%3A8080``) is redacted as
    :func:`redact_url` redacts a URL (its host, its own query...), any other value loses its IP addresses
    (:func:`redact_addresses`); each character replaced is written back encoded as it was.

    Example:
        >>> from dsh_audit.redact import Placeholders
        >>> r = Redactor(Placeholders(b"salt"))
        >>> redact_query_value("http%3A%2F%2F10.1.2.3%2F", r) == f"http%3A%2F%2F{redact_host('10.1.2.3', r)}%2F"
        True
    """
    return _query_value(value, redactor, nested=0)


def _query_value(value: str, redactor: Redactor, *, nested: int) -> str:
    """:func:`redact_query_value` of a value ``nested`` query values deep: past :data:`_NESTED`, only its
    addresses (a hostile URL may nest URLs without end). A value that is no URL has its addresses as written
    replaced first (:func:`_written_first`: ``?ip=10.0.0.7%2Eab`` kept it, review 41); a URL's are read decoded."""
    def url(plain: str) -> bool:
        scheme = SCHEME.match(plain)
        return nested < _NESTED and ((scheme is not None and scheme[1].lower() in WEB_SCHEMES)
                                     or _HOST_PORT.fullmatch(plain) is not None)

    def redact(plain: str) -> str:
        return _url(plain, redactor, nested=nested + 1) if url(plain) else _plain_addresses(plain, redactor)

    find: Callable[[str], Iterable[tuple[int, int]]] = address_spans
    find = (lambda _: ()) if "%" in value and url(unquote(value)) else find  # a URL's zones only
    return _written_first(value, find, lambda address: redact_host(address, redactor), redact)
