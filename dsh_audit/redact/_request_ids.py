"""A vendor's, a gateway's or a tracer's id of one request (``x-request-id``, ``cf-ray``, ``x-amzn-trace-id``...),
which would let its vendor find the account that sent it, as a pseudonym of its shape (:func:`pseudonym`): the
hosts in it take their placeholders first (fuzz 24: ``gw-10.77.66.55-7f3a`` kept every octet, each run of 3
characters or fewer being kept), then each run of letters and digits its pseudonym. Letters and digits of any
script count (fuzz 25: ``хост-бд.внутр:5432``, ``١٠.٠.٠.٥:٨٠٨٠`` and ``１０.０.０.５`` kept their hosts): a host is
found in the text its digits and compatibility forms are folded to ASCII in (:func:`_folded`), and a run past ASCII
is replaced however short.
"""

from __future__ import annotations

import re
import unicodedata

from ._hosts import redact_host
from ._pseudonyms import redact_ascii
from ._redactor import Redactor
from ._spans import host_spans

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
#: text (:func:`_folded`), as :mod:`._spans` reads an ASCII one.
_ANY_NAME_PORT = re.compile(r"(?<![^\W_])(?<![.-])(?:[^\W_]|-)+(?:\.(?:[^\W_]|-)+)*\.[^\W\d_](?:[^\W_]|-)*"
                            r":[0-9]{1,5}(?![0-9])")


def pseudonym(value: str, redactor: Redactor) -> str:
    """The pseudonym of a request id: as long as it, its punctuation kept; each IP address in it, with its port,
    and each ``host:port`` the placeholder it has as a host (:func:`._hosts.redact_host`, :func:`._spans.host_spans`);
    each other run of letters and digits one of the same shape (a hex run hex digits, the case of its letters
    kept: :func:`._pseudonyms.redact_ascii`), the same for the same run wherever it stands, but a short run or a name
    (:data:`_ID_TOKEN`).

    Example:
        >>> from dsh_audit.redact import Placeholders
        >>> r = Redactor(Placeholders(b"salt"))
        >>> out = pseudonym("gw-10.77.66.55-7f3a;Self=172.16.9.8:443", r)
        >>> out == f"gw-{redact_host('10.77.66.55', r)}-{redact_ascii('7f3a', r, hex_id=True)};Self=" + \\
        ...     redact_host("172.16.9.8:443", r)
        True
    """
    out, at, folded = [], 0, _folded(value)
    for start, end in _hosts_in(folded):
        out += [_runs(value, at, start, redactor), redact_host(folded[start:end], redactor)]
        at = end
    return "".join(out) + _runs(value, at, len(value), redactor)


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


def _hosts_in(folded: str) -> list[tuple[int, int]]:
    """Where each host of a folded request id stands, in order and apart: an ASCII one (:func:`._spans.host_spans`),
    and a dotted name with a port in any script (:data:`_ANY_NAME_PORT`) none of them covers."""
    spans: list[tuple[int, int]] = []
    at = 0
    for start, end in sorted([*host_spans(folded), *(m.span() for m in _ANY_NAME_PORT.finditer(folded))]):
        if start >= at:
            spans.append((start, end))
            at = end
    return spans


def _runs(value: str, start: int, end: int, redactor: Redactor) -> str:
    """``value[start:end]``, a stretch of a request id, with each run of letters and digits replaced or kept
    (:func:`_token`), read in the whole ``value``: the ``=`` after a name counts when an address follows it."""
    out, at = [], start
    for match in _ID_TOKEN.finditer(value, start, end):
        out += [value[at:match.start()], _token(match, redactor)]
        at = match.end()
    return "".join(out) + value[at:end]


def _token(match: re.Match[str], redactor: Redactor) -> str:
    """A run of letters and digits of a request id (:data:`_ID_TOKEN`), replaced or kept: one past ASCII is
    replaced however short (``бд``), its digits ASCII digits (:func:`_folded`), its letters ASCII letters."""
    token, after = match[0], match.string[match.end():match.end() + 2]
    if token.isascii() and (len(token) <= 3 or token.isalpha() and after[:1] == "=" and after[1:] not in ("", "=")):
        return token
    token = _folded(token)
    return redact_ascii(token, redactor, hex_id=all(c in "0123456789abcdefABCDEF" for c in token))
