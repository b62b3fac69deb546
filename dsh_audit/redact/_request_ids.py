"""A vendor's, a gateway's or a tracer's id of one request (``x-request-id``, ``cf-ray``, ``x-amzn-trace-id``...),
which would let its vendor find the account that sent it, as a pseudonym of its shape (:func:`pseudonym`): the
hosts in it take their placeholders first (fuzz 24: ``gw-10.77.66.55-7f3a`` kept every octet, each run of 3
characters or fewer being kept), then each run of letters and digits its pseudonym. Letters and digits of any
script count (fuzz 25: ``хост-бд.внутр:5432``, ``١٠.٠.٠.٥:٨٠٨٠`` and ``１０.０.０.５`` kept their hosts): a host is
found in the text its digits and compatibility forms are folded to ASCII in (:func:`_folded`), and a run past ASCII
is replaced however short, as is any character between runs that is no printable ASCII (fuzz 27: a bidi override,
a control: :func:`_between`). An id is read percent-decoded (issue 17: ``req-10%2E0%2E0%2E7`` kept its address, each
run of it 3 characters or fewer), each escape written back an escape (:func:`._addresses.in_decoded`), but for the
hosts that stand in it as written, found first (review 41: decoded, ``req-10.0.0.7%2Eab`` held no address and kept
it; ``fe80::1%12-x`` no zone, and kept its name): a UTF-8 character's escapes are one character
(``srv.%D0%B1%D0%B4.corp:5432``, ``caf%C3%A9``), so these rules read it and its escapes become one escape of its
placeholder, and any other escaped byte past ASCII is a letter replaced: what is decoded stays UTF-8. Neither the id
as written nor decoded holds an address (fuzz 28: ``req-%41.77.66.55`` kept it, decoded ``req-A.77.66.55``): a quad
that starts with an escape's digits is one (:func:`_straddled`), an escape its decoding holds is read (:func:`_read`),
and a bare ``%`` starts no escape (:func:`._hosts.escapes_kept`).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from urllib.parse import unquote

from ._addresses import ADDRESS_CHAR, ESCAPE, IPV4_ANYWHERE, VERSION, in_decoded
from ._printable import printable_decoded
from ._hosts import escapes_kept, redact_host
from ._ipv6 import is_ipv6
from ._pseudonyms import redact_ascii
from ._redactor import Redactor
from ._spans import address_spans, host_spans, name_port, written_spans

__all__ = ["REQUEST_ID_HEADER", "pseudonym"]

#: A header holding a vendor's, a gateway's or a tracer's id of one request (``x-request-id``, Anthropic's
#: ``request-id``, ``cf-ray``, ``x-amzn-requestid``, ``x-amz-request-id``, ``apigw-requestid``, ``x-amz-cf-id``,
#: ``x-amz-id-2``, ``x-amzn-trace-id``, ``x-b3-traceid``, ``traceparent``, ``x-correlation-id``, ``x-vercel-id``...).
REQUEST_ID_HEADER = re.compile(r"(?i)(?:^|[-_])(?:req(?:uest)?[-_]?id|ray|trace[-_]?id|traceparent|tracestate|"
                               r"correlation[-_]?id|amz-cf-id|amz-id-2|cloud-trace-context|vercel-id)$")
#: A run of letters and digits of a request id: replaced, but for a short one (cf-ray's colo ``SJC``, ``req`` of
#: ``req_...``, a version or a flag) and a name before ``=`` (``Root=`` of ``x-amzn-trace-id``).
_ID_TOKEN = re.compile(r"[^\W_]+")
#: A dotted host name with a port in any script (``хост-бд.внутр:5432``, ``srv.例え.jp:8080``), read in the folded
#: text (:func:`_folded`), as :mod:`._spans` reads an ASCII one: its labels letters and digits of any script.
_ANY_NAME_PORT = name_port(r"(?:[^\W_]|-)", r"[^\W\d_]")


def pseudonym(value: str, redactor: Redactor) -> str:
    """The pseudonym of a request id: as long as it, its punctuation kept; each IP address in it, with its port,
    and each ``host:port`` the placeholder it has as a host (:func:`._hosts.redact_host`, :func:`._spans.host_spans`);
    each other run of letters and digits one of the same shape (a hex run hex digits, the case of its letters
    kept: :func:`._pseudonyms.redact_ascii`), the same for the same run wherever it stands, but a short run or a name
    (:data:`_ID_TOKEN`). Read with its escapes decoded (``%2E``, ``%3A``, ``%5B``, a zone's ``%25``), each character
    replaced written back as an escape of its placeholder's (``req-10%2E0%2E0%2E7``: the address part's placeholder
    the one ``10.0.0.7`` has, its escapes kept where they stand), once the hosts as written took theirs
    (:func:`._spans.written_spans`: ``req-10.0.0.7%2Eab``).

    Example:
        >>> from dsh_audit.redact import Placeholders
        >>> r = Redactor(Placeholders(b"salt"))
        >>> out = pseudonym("gw-10.77.66.55-7f3a;Self=172.16.9.8:443", r)
        >>> out == f"gw-{redact_host('10.77.66.55', r)}-{redact_ascii('7f3a', r, hex_id=True)};Self=" + \\
        ...     redact_host("172.16.9.8:443", r)
        True
        >>> pseudonym("req-10%2E0%2E0%2E7", r) == "req-" + redact_host("10.0.0.7", r).replace(".", "%2E")
        True
    """
    return printable_decoded(_read(value, redactor, grow=True))


def _read(text: str, redactor: Redactor, *, after: str = "", grow: bool = False) -> str:
    """:func:`pseudonym` of ``text``, an id (``grow``) or a stretch of one read decoded, that ``after`` follows: the
    hosts that stand in it as written (:func:`_written`) their placeholders, each stretch between them read decoded
    as this reads the id, so an escape its decoding holds is read too (fuzz 28: ``%2%32%30%34%2E...`` decoded is
    ``%2204.248.247.75``, whose ``248``, ``247``, ``75`` were short runs, kept); no escape where it had a bare ``%``
    (:func:`._hosts.escapes_kept`)."""
    if "%" not in text or not grow and ESCAPE.search(text) is None:
        return escapes_kept([(text, _pseudonym(text, redactor, after))])
    pieces, at, folded = [], 0, _folded(text)
    for start, end, skip in _written(folded):
        host, read = folded[start:end], functools.partial(_read, redactor=redactor, after=text[start:end])
        placeholder = _straddling(host, skip, redactor, grow=grow) if skip in (1, 2) else redact_host(host, redactor)
        pieces += [(text[at:start], in_decoded(text[at:start], read)), (text[start:end], placeholder)]
        at = end
    read = functools.partial(_read, redactor=redactor, after=after)
    return escapes_kept([*pieces, (text[at:], in_decoded(text[at:], read))])


def _hosts(folded: str) -> list[tuple[int, int]]:
    """Where the hosts of a folded request id stand (:func:`_folded`): addresses and ``host:port`` of any script, and
    a dotted quad wherever it stands (:data:`._addresses.IPV4_ANYWHERE`: ``gw-10.77.66.55.ab``, ``10.77.66.5510``) but
    in a version (:data:`._addresses.VERSION`: ``v1.2.3.4``, issue 17); but a ``host:port``
    whose port is a quad's first number, which the quad is (fuzz 28: ``a.g:86.98.96.23`` kept ``98.96.23``), what
    stands before its ``:`` a host still when it is one (fuzz 30: ``172.16.9.8:10.77.66.55`` kept ``77.66.55``)."""
    versions = [m.span() for m in VERSION.finditer(folded)]
    spans = [span for span in host_spans(folded, _ANY_NAME_PORT, IPV4_ANYWHERE) if not _inside(span, versions)]
    for q0, q1 in _quads(folded):  # in order: a quad in the port of one in a third's port (``1.2.3.4:5.6.7.8:9...``)
        if any(start < q0 < end < q1 for start, end in spans):
            cut = [(start, q0 - 1) for start, end in spans if start < q0 < end and start < q0 - 1 and
                   _hosts(folded[start:q0 - 1]) == [(0, q0 - 1 - start)]]
            spans = [*(span for span in spans if not (span[0] < q1 and q0 < span[1])), *cut, (q0, q1)]
    return sorted(spans)


def _quads(text: str) -> list[tuple[int, int]]:
    """Where each dotted quad (with its port) of ``text`` stands, but a port that starts another quad, which that quad
    is (:data:`._addresses.IPV4_ANYWHERE` alone never finds it, its matches never overlapping)."""
    quads, at, versions = [], 0, [m.span() for m in VERSION.finditer(text)]
    while (quad := IPV4_ANYWHERE.search(text, at)) is not None:
        colon = quad.start() + quad[0].find(":")
        follows = colon >= quad.start() and IPV4_ANYWHERE.match(text, colon + 1) is not None
        span = (quad.start(), colon) if follows else quad.span()
        quads += [] if _inside(span, versions) else [span]
        at = colon + 1 if follows else quad.end()
    return quads


def _inside(span: tuple[int, int], versions: list[tuple[int, int]]) -> bool:
    """Whether a host's ``span`` starts in one of ``versions`` (:data:`._addresses.VERSION`: ``v1.2.3.4``, no
    address), after its ``v``."""
    return any(start < span[0] < end for start, end in versions)


def _written(folded: str) -> list[tuple[int, int, int]]:
    """Where the hosts of a folded, percent-encoded request id (or stretch) stand as written
    (:func:`._spans.written_spans`), each with 0; each dotted quad it holds read decoded that one of them cuts, with 3
    (:func:`_decoded_quads`: that host is cut, fuzz 28: ``::bB12%37.46.41.35`` as written holds ``::bB12`` and, the
    escape of a hex digit going on it, ``::bB127``, no address, while the quad lost only its first octet); and each
    address that starts with the digits of an escape (:func:`_straddled`: ``req-%10.77.66.55``: decoded, ``%10`` is a
    control, and ``77``, ``66``, ``55`` short runs, kept), its ``%`` with it, with 1 (both digits the address's) or 2
    (the second: :func:`_straddling`), where no quad read decoded stands (:func:`_around`)."""
    spans = [(start, _embedded(folded, start, end), 0) for start, end in written_spans(folded, _hosts)]
    for q0, q1 in _decoded_quads(folded):
        if any(start < q0 < stop < q1 or q0 < start < q1 < stop for start, stop, _ in spans):  # each cuts the other
            spans = [*_around(folded, spans, q0, q1), (q0, q1, 3)]
    for escape in ESCAPE.finditer(folded):
        at, found = escape.start(), _straddled(folded, escape)
        spans = spans if found is None else _around(folded, spans, at, found[0])
        if found is not None and not any(start < found[0] and at < stop for start, stop, _ in spans):
            spans.append((at, *found))
    return sorted(spans)


def _around(text: str, spans: list[tuple[int, int, int]], start: int, end: int) -> list[tuple[int, int, int]]:
    """``spans`` (of :func:`_written`, in ``text``) with each host as written that a quad at ``start:end`` cuts cut to
    what of it is a host still (``::bB12``), the rest read decoded as the text between hosts is (a number, ``4``, is a
    host a URL parser reads as an address, whose placeholder ``0.0.0.4`` is longer); one that holds it stays."""
    out = [span for span in spans if span[2] or span[1] <= start or end <= span[0] or span[0] <= start < end <= span[1]]
    for head, tail, _ in (span for span in spans if span not in out):
        out += [(a, b, 0) for a, b in ((head, min(tail, start)), (max(head, end), tail))
                if a < b and _hosts(unquote(text[a:b])) == [(0, len(unquote(text[a:b])))]]
    return out


def _straddled(text: str, escape: re.Match[str]) -> tuple[int, int] | None:
    """Where a dotted quad (with its port) or an IPv6 address ends that starts with the two digits of ``escape``, or
    with its second (read as written, the rest of it decoded: ``%10.77%2E66.55``, ``%A1.77.66.55``, ``%2fd5a::1``),
    and 1 or 2, where it starts; None when there is none, or when decoded the escape is a character that goes on the
    address, which is read decoded then: a hex digit or a colon on an IPv6 one (:func:`._spans.written_spans`), a
    digit on a quad but after a digit (fuzz 28: decoded, ``123%35.77.66.55`` is ``1235.77.66.55``)."""
    char, (rest, ends) = chr(int(escape[1], 16)), _decoded_from(text, escape.end(), 48)
    for skip in (0, 1):
        digits = escape[1][skip:]
        quad = _quad_end(digits + rest) if digits.isdigit() and not escape[1][:skip].isdigit() and (
            char not in "0123456789" or _after_digit(text, escape.start())) else None
        v6 = None if ADDRESS_CHAR.match(char) else next(
            (end for start, end in address_spans(digits + rest) if start == 0 and ":" in (digits + rest)[:end]), None)
        end = quad if quad is not None else v6
        if end is not None:
            return ([escape.end()] * len(digits) + ends)[end - 1], skip + 1
    return None


def _quad_end(text: str) -> int | None:
    """Where the dotted quad that starts ``text`` ends, with its port but one that starts another quad
    (:func:`_quads`); None when no quad starts it."""
    return next((end for start, end in _quads(text) if start == 0), None)


def _decoded_quads(text: str) -> list[tuple[int, int]]:
    """Where each dotted quad of ``text`` read decoded stands as written (fuzz 28: ``::A65%2E59.93.56`` as written
    holds ``::A65``, decoded ``65.59.93.56``, which took it over)."""
    decoded, ends = _decoded_from(text, 0, len(text))
    return [(([0] + ends)[start], ends[end - 1]) for start, end in _quads(decoded)]


def _embedded(text: str, start: int, end: int) -> int:
    """The end of a host as written (``text[start:end]``) that is an IPv6 address with the dotted quad that ends it,
    read decoded (``%3A:12%38.%370.98.74``: ``::128.70.98.74``, of which an escape of a digit cut ``.70.98.74``, its
    short runs kept); ``end`` for any other host."""
    host, (rest, ends) = unquote(text[start:end]), _decoded_from(text, end, 16)
    dotted = len(rest) - len(rest.lstrip("0123456789."))
    return next((ends[n - 1] for n in range(dotted, 0, -1) if ":" in host and is_ipv6(host + rest[:n])), end)


def _decoded_from(text: str, at: int, count: int) -> tuple[str, list[int]]:
    """Up to ``count`` characters of ``text`` from ``at``, each escape read as its character, and where each ends."""
    chars: list[str] = []
    ends: list[int] = []
    while at < len(text) and len(chars) < count:
        code = ESCAPE.match(text, at)
        chars.append(chr(int(code[1], 16)) if code is not None else text[at])
        at += 3 if code is not None else 1
        ends.append(at)
    return "".join(chars), ends


def _after_digit(text: str, at: int) -> bool:
    """Whether the character before ``at`` of ``text``, read decoded, is a decimal digit."""
    escape = ESCAPE.match(text, at - 3) if at >= 3 else None
    return (chr(int(escape[1], 16)) if escape is not None else text[at - 1:at]) in tuple("0123456789")


def _straddling(host: str, skip: int, redactor: Redactor, *, grow: bool) -> str:
    """A dotted quad or an IPv6 address that starts with the hex digits of an escape from the ``skip``-th on (``host``,
    that escape first: a span of :func:`_written`), the rest of it each character escaped where it was: in an id
    (``grow``), that escape one of its placeholder's first character, then the rest of the placeholder
    (``%3192.0.2.9``, one character longer when both digits went on it): decoded, that placeholder, no control, no
    byte past ASCII cut from its character (the rest of which, a stray byte, is replaced as a letter); as written, no
    octet of the address. In a stretch read decoded, whose length its escapes are written back by, that escape stays."""
    digits, rest = host[skip:3], host[3:]
    placeholder = redact_host(digits + unquote(rest), redactor)
    head = f"%{ord(placeholder[0]):02X}{placeholder[1:len(digits)]}" if grow else host[:3]
    return head + in_decoded(rest, lambda _: placeholder[len(digits):])


def _pseudonym(value: str, redactor: Redactor, after: str = "") -> str:
    """:func:`pseudonym` of a request id, or of a stretch of one that ``after`` follows (a host: a name before
    ``=`` is kept before it), read decoded."""
    out, at, folded = [], 0, _folded(value)
    for start, end in _hosts(folded):
        out += [_runs(value + after, at, start, redactor), redact_host(folded[start:end], redactor)]
        at = end
    return "".join(out) + _runs(value + after, at, len(value), redactor)


def _folded(value: str) -> str:
    """``value`` as long as it, each character that folds to one ASCII character as that one: a decimal digit of
    any script (``٥``) its digit, a compatibility form (``１``, ``．``) its NFKC one; so an address or a port
    written in them is found, and takes the placeholder its ASCII form has."""
    return "".join(_fold(c) for c in value) if not value.isascii() else value


def _fold(char: str) -> str:
    """One character of :func:`_folded`."""
    digit = unicodedata.decimal(char, None)
    if digit is not None:
        return str(digit)
    form = unicodedata.normalize("NFKC", char)
    return form if len(form) == 1 and form.isascii() and form.isprintable() else char


def _runs(value: str, start: int, end: int, redactor: Redactor) -> str:
    """``value[start:end]``, a stretch of a request id, with each run of letters and digits replaced or kept
    (:func:`_token`), read in the whole ``value``: the ``=`` after a name counts when an address follows it."""
    out, at = [], start
    for match in _ID_TOKEN.finditer(value, start, end):
        out += [_between(value[at:match.start()], redactor), _token(match, redactor)]
        at = match.end()
    return "".join(out) + _between(value[at:end], redactor)


def _between(text: str, redactor: Redactor) -> str:
    """The text between two runs of letters and digits of a request id: kept when it is printable ASCII
    (punctuation), else as a ``Via`` comment's text is (:func:`._pseudonyms.redact_ascii`: each other character a
    lowercase letter), so no bidi override, control or unassigned character, raw or decoded from its escapes, is
    kept (fuzz 27: ``%E2%80%AE10.1.2.3`` kept its U+202E; :func:`._addresses.in_decoded` writes its letter back as
    one escape)."""
    return text if text.isascii() and text.isprintable() else redact_ascii(text, redactor)


def _token(match: re.Match[str], redactor: Redactor) -> str:
    """A run of letters and digits of a request id (:data:`_ID_TOKEN`), replaced or kept: one past ASCII is
    replaced however short (``бд``), its digits ASCII digits (:func:`_folded`), its letters ASCII letters."""
    token, after = match[0], match.string[match.end():match.end() + 2]
    if token.isascii() and (len(token) <= 3 or token.isalpha() and after[:1] == "=" and after[1:] not in ("", "=")):
        return token
    token = _folded(token)
    return redact_ascii(token, redactor, hex_id=all(c in "0123456789abcdefABCDEF" for c in token))
