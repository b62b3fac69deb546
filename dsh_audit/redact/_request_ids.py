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
placeholder, and any other escaped byte past ASCII is a letter replaced: what is decoded stays UTF-8.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from urllib.parse import unquote

from ._addresses import ESCAPE, IPV4_ANYWHERE, in_decoded
from ._hosts import redact_host
from ._pseudonyms import redact_ascii
from ._redactor import Redactor
from ._spans import host_spans, name_port, written_spans

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
    if "%" not in value:
        return _pseudonym(value, redactor)
    out, at, folded = [], 0, _folded(value)
    for start, end, straddling in _written(folded):
        host = folded[start:end]
        out += [in_decoded(value[at:start], functools.partial(_pseudonym, redactor=redactor, after=value[start:end])),
                _straddling(host, redactor) if straddling else redact_host(host, redactor)]
        at = end
    return "".join(out) + in_decoded(value[at:], functools.partial(_pseudonym, redactor=redactor))


def _hosts(folded: str) -> list[tuple[int, int]]:
    """Where the hosts of a folded request id stand (:func:`_folded`): addresses and ``host:port`` of any script, and
    a dotted quad wherever it stands (:data:`._addresses.IPV4_ANYWHERE`: ``gw-10.77.66.55.ab``)."""
    return host_spans(folded, _ANY_NAME_PORT, IPV4_ANYWHERE)


def _written(folded: str) -> list[tuple[int, int, bool]]:
    """Where the hosts of a folded, percent-encoded request id stand as written (:func:`._spans.written_spans`),
    with each dotted quad whose first two digits are an escape's (``req-%10.77.66.55``: decoded, ``%10`` is a
    control, and ``77``, ``66``, ``55`` short runs, kept), its ``%`` with it (:func:`_straddling`), that one
    marked True."""
    spans = [(start, end, False) for start, end in written_spans(folded, _hosts)]
    for escape in ESCAPE.finditer(folded):
        end = _straddled(folded, escape)
        if end is not None and not any(start < end and escape.start() < stop for start, stop, _ in spans):
            spans.append((escape.start(), end, True))
    return sorted(spans)


def _straddled(text: str, escape: re.Match[str]) -> int | None:
    """Where a dotted quad (with its port) ends that starts with the two digits of ``escape`` (read as written, the
    rest of it decoded: ``%10.77%2E66.55``), when decoded that escape is no ASCII letter or digit, which would go on
    the quad (``%31%30.0.0.5`` is ``10.0.0.5``); else None."""
    byte = int(escape[1], 16)
    if not escape[1].isdigit() or byte < 0x80 and chr(byte).isalnum():
        return None
    chars, ends, at = [escape[1]], [escape.end()], escape.end()
    while at < len(text) and len(chars) < 22:  # no quad with its port is longer
        code = ESCAPE.match(text, at)
        char = chr(int(code[1], 16)) if code is not None else text[at]
        at += 3 if code is not None else 1
        chars.append(char)
        ends.append(at)
    quad = IPV4_ANYWHERE.match("".join(chars))
    return None if quad is None else ends[quad.end() - 2]


def _straddling(host: str, redactor: Redactor) -> str:
    """A dotted quad that starts with the two digits of an escape (``host``, that escape first: a span of
    :func:`_written`), as that ``%`` and an escape of its placeholder's first digit, then the rest of it, each
    character escaped where it was (``%3192.0.2.9``): decoded, that placeholder, no control; as written, no octet of
    the address."""
    decoded = host[1:3] + unquote(host[3:])  # digits, dots, a colon: ASCII
    placeholder = redact_host(decoded, redactor)
    return f"%{ord(placeholder[0]):02X}{placeholder[1]}" + in_decoded(host[3:], lambda _: placeholder[2:])


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
