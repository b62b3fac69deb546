"""Secrets that always go, even from the parts a redaction keeps: a small, documented pattern set.

No maintained detector fits: ``detect-secrets`` (the best-known pure-Python one) scans lines of
files through process-wide settings, reports values without their offsets and flags every
high-entropy id (message ids, call ids and digests fill a DSH log). These patterns are the
provider formats those tools also know (each with a prefix or a shape no id or digest has: a
bare hex hash, a UUID, a git SHA or base64 image data is no secret), plus ``Authorization``,
``Bearer`` and ``Cookie`` values, private key blocks and ``.env``-style assignments of names that
say key, token, secret or password, and the password of a URL (``postgres://admin:...@db``). A key of a
provider's prefix is found after anything but a letter or a digit (``MY_TOKEN_sk-...``: :data:`._patterns._AFTER`),
and a text that holds percent-encoded characters is read decoded too (``%3Dsk-...``: :func:`_search`).
Each match is replaced by a placeholder of the same lengths;
only the kind is ever reported. A pattern runs only on a text that holds one of its anchors
(:data:`._patterns.ANCHORS`, found at C speed), with the same matches as every pattern run on every text.

A private key block cut over several strings is joined by :mod:`._pem`; the patterns themselves are
:mod:`._patterns`' data.

Some values are secrets by the name they are found under alone, whatever their shape: a captured
HTTP header, cookie or query parameter named ``Authorization``, ``Cookie``, ``x-api-key``,
``api_key``, ``token``, ``password``... (:func:`header_kind`, :func:`credential_name`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from ._patterns import ANCHORS, KEYWORDS, PATTERNS

__all__ = ["SecretMatch", "context_key", "cookie_secret", "credential_name", "cut_secrets", "find_secrets",
           "header_kind", "private_key_closed", "scrub"]

_COMPILED = [(kind, re.compile(pattern, re.S if kind == "private_key" else 0)) for kind, pattern in PATTERNS.items()]

_GATED = [(kind, pattern, *ANCHORS[kind]) for kind, pattern in _COMPILED]
_GATED_KEYLESS = [gated for gated in _GATED if gated[0] != "private_key"]
# any anchor of a pattern that heeds case (the longest first)
_ANY_ANCHOR = re.compile("|".join(re.escape(anchor) for anchor in sorted(
    {anchor for anchors, before in ANCHORS.values() if before is not None for anchor in anchors},
    key=lambda anchor: (-len(anchor), anchor))))
# the characters other than ASCII ones that ``re`` reads as an ASCII letter when it ignores case (the
# Kelvin sign, a long s, a dotless i and a dotted capital I, whose lower case is two characters)
_FOLD = {0x212A: "k", 0x17F: "s", 0x131: "i", 0x130: "i"}

# What an object key must hold for a pattern to read its value as a secret beside it (``authorization``,
# ``cookie``, ``key_value``): a key without it gives its value no context (:func:`context_key`).
_CONTEXT_KEY = re.compile(r"(?i)authorization|cookie|" + KEYWORDS)

# A name that makes a value a secret by itself (a HAR query parameter, header or form field): the
# keywords above, or ``key``, ``auth``, ``sig``, ``signature``... as a whole word of it. (Not
# ``session``: ``x-deepseek-harness-session-id`` is no secret; a cookie's name is read by itself.)
_CREDENTIAL_NAME = re.compile(r"(?i)" + KEYWORDS + r"|authorization|signature|bearer|jwt|cookie"
                              r"|(?:^|[-_.])(?:key|auth|sig|csrf|xsrf)(?:$|[-_.])")
_SESSION_COOKIE = re.compile(r"(?i)sess|sid|auth|login|remember|identity")
_AUTHORIZATION_HEADER = re.compile(r"(?i)(?:proxy-)?authorization")
_COOKIE_HEADER = re.compile(r"(?i)(?:set-)?cookie2?")

# A percent-encoded ASCII character (``%3D``, ``%20``, ``%2F``): a URL's path or query string, a header value or a
# form body may hold a secret only decoded reads (``?next=https%3A%2F%2Fapi%3Fkey%3Dsk-...``, ``Bearer%20sk-...``,
# ``postgres%3A%2F%2Fadmin%3A...%40db``). A text is decoded again while it holds some (``%253D``), at most so often.
_PERCENT = re.compile(r"%[0-7][0-9A-Fa-f]")
_DECODINGS = 3


@dataclass(frozen=True, slots=True)
class SecretMatch:
    """One secret found in a text: its kind and its span (the value is never kept)."""

    kind: str
    start: int
    end: int


def find_secrets(text: str) -> Iterator[SecretMatch]:
    """Every secret in ``text``, in order, without overlaps (an earlier kind in
    :data:`SECRET_KINDS` wins a tie).

    A pattern is run only on a text that holds one of its anchors (:data:`._patterns.ANCHORS`, found with
    ``str.find`` at C speed), from where its first match can start at the earliest: the same
    matches as every pattern run on the whole text (:func:`_full_scan`), in a fraction of the time.

    Example:
        >>> [m.kind for m in find_secrets("export OPENAI_API_KEY=sk-abcdefghijklmnopqrstuvwx")]
        ['openai_api_key']
    """
    yield from _search(text, _gated)


def _gated(text: str, whole: bool) -> list[SecretMatch]:
    """:func:`_find` with every pattern (``whole``) or every pattern but the private key's."""
    return _find(text, _GATED if whole else _GATED_KEYLESS)


def _keyless(text: str, whole: bool) -> list[SecretMatch]:
    """:func:`_find` with every pattern but the private key's, whatever ``whole`` says (strings joined:
    :func:`cut_secrets`)."""
    return _find(text, _GATED_KEYLESS)


def _search(text: str, scan: Callable[[str, bool], list[SecretMatch]]) -> list[SecretMatch]:
    """The secrets ``scan`` finds in ``text`` (``scan(text, True)``), and those it finds in ``text`` with its
    percent-encoded characters decoded (``scan(decoded, False)``: no private key block, which no URL holds)
    that overlap none of them, each as the span of ``text`` that encodes it (:func:`_decode`): in order,
    without overlaps (a secret as written wins over one only decoding shows).

    Example:
        >>> text = "GET /cb?next=https%3A%2F%2Fapi.example.com%2Fv1%3Fkey%3Dsk-proj-Ab3dEf5hIj7lMn9pQr1tUv"
        >>> [(m.kind, text[m.start:m.end]) for m in _search(text, _gated)]
        [('openai_api_key', 'sk-proj-Ab3dEf5hIj7lMn9pQr1tUv')]
        >>> text = "dsn=postgres%3A%2F%2Fadmin%3AS3cr%2540tQ7%40db"
        >>> [(m.kind, text[m.start:m.end]) for m in _search(text, _gated)]
        [('url_credentials', 'S3cr%2540tQ7')]
    """
    found = scan(text, True)
    decoding = _decode(text)
    if decoding is None:
        return found
    decoded, levels = decoding
    starts = [match.start for match in found]
    extra = []
    for match in scan(decoded, False):
        start, end = _encoded(match.start, levels), _encoded(match.end, levels)
        at = bisect.bisect_left(starts, start)
        if not ((at < len(found) and found[at].start < end) or (at > 0 and found[at - 1].end > start)):
            extra.append(SecretMatch(match.kind, start, end))
    return sorted(found + extra, key=lambda match: match.start) if extra else found


def _decode(text: str) -> tuple[str, list[list[int]]] | None:
    """``text`` with each percent-encoded ASCII character decoded (``%3D`` is ``=``; what that makes is
    decoded again while it holds some, at most :data:`_DECODINGS` times), and for each decoding the
    positions of the characters it decoded, in what it made (:func:`_encoded`); None when ``text``
    holds none. (A character outside ASCII stays encoded: no secret's pattern reads one.)

    Example:
        >>> _decode("a%3Db%253Dc"), _decode("100% sure")
        (('a=b=c', [[1, 3], [3]]), None)
    """
    if "%" not in text or _PERCENT.search(text) is None:
        return None
    levels: list[list[int]] = []
    decoded = text
    for _ in range(_DECODINGS):
        pieces: list[str] = []
        positions: list[int] = []
        at = length = 0
        for match in _PERCENT.finditer(decoded):
            pieces.append(decoded[at:match.start()])
            length += match.start() - at
            positions.append(length)
            pieces.append(chr(int(match.group()[1:], 16)))
            length += 1
            at = match.end()
        if not positions:
            break
        pieces.append(decoded[at:])
        decoded = "".join(pieces)
        levels.append(positions)
    return decoded, levels


def _encoded(index: int, levels: list[list[int]]) -> int:
    """Where the character at ``index`` of a text :func:`_decode` made starts in the text it decoded (or,
    ``index`` its length, where that text ends): each character it decoded was three.

    Example:
        >>> decoded, levels = _decode("a%3Db%253Dc")
        >>> [_encoded(index, levels) for index in range(len(decoded) + 1)]
        [0, 1, 4, 5, 10, 11]
    """
    for positions in reversed(levels):
        index += 2 * bisect.bisect_left(positions, index)
    return index


def _find(text: str, gated: list[tuple[str, re.Pattern[str], tuple[str, ...], int | None]]) -> list[SecretMatch]:
    """:func:`find_secrets` with the patterns of ``gated`` (all, or all but one kind)."""
    if len(text) < 8:
        return []
    assigns = ":" in text or "=" in text
    anchored = _ANY_ANCHOR.search(text) is not None  # one search for all: most texts hold none
    if not (assigns or anchored):
        return []
    folded = None
    runs: list[tuple[str, re.Pattern[str], int]] = []
    for kind, pattern, anchors, before in gated:
        if before is None:  # a pattern that ignores case, and needs a ``:`` or ``=``
            if not assigns:
                continue
            if folded is None:
                folded = _fold(text)
            if any(anchor in folded for anchor in anchors):
                runs.append((kind, pattern, 0))
            continue
        if not anchored:
            continue
        first = -1
        for anchor in anchors:
            at = text.find(anchor)
            if at >= 0 and (first < 0 or at < first):
                first = at
        if first >= 0:
            runs.append((kind, pattern, max(first - before, 0)))
    return _collect(text, runs)


def cut_secrets(texts: Sequence[str]) -> Iterator[tuple[SecretMatch, list[tuple[int, int, int]]]]:
    """Each secret other than a private key (whose blocks :func:`._pem.split_private_key` and
    :func:`._pem.key_end` join) that ``texts``, consecutive strings of one message or list read joined,
    hold cut over two or more of them (``"... sk-proj-Zq7Lm"``, ``"2Xv9Pw4Zq7Lm2Xv9 ..."``): its match in
    the joined text, and for each string it covers (in order) its index and the span of it there. A
    secret whole in one string is that string's own (:func:`find_secrets`). Each string is read once.

    Example:
        >>> [(m.kind, parts) for m, parts in cut_secrets(["use sk-proj-Zq7Lm2", "Xv9Pw4Zq7Lm2Xv9Pw4 now"])]
        [('openai_api_key', [(0, 4, 18), (1, 0, 18)])]
    """
    if len(texts) < 2:
        return
    starts = []
    at = 0
    for text in texts:
        starts.append(at)
        at += len(text)
    joined = "".join(texts)
    for match in _search(joined, _keyless):
        first = bisect.bisect_right(starts, match.start) - 1
        last = bisect.bisect_right(starts, match.end - 1) - 1
        if first == last:
            continue
        parts = []
        for n in range(first, last + 1):
            start, end = max(match.start - starts[n], 0), min(match.end - starts[n], len(texts[n]))
            if end > start:
                parts.append((n, start, end))
        yield match, parts


def _full_scan(text: str) -> list[SecretMatch]:
    """What :func:`find_secrets` finds, by every pattern run on the whole text (no anchors): what it
    must equal (the tests compare them)."""
    return _search(text, _every)


def _every(text: str, whole: bool) -> list[SecretMatch]:
    """Every pattern (but the private key's, unless ``whole``) run on the whole text."""
    if len(text) < 8:
        return []
    return _collect(text, [(kind, pattern, 0) for kind, pattern in _COMPILED if whole or kind != "private_key"])


def _collect(text: str, runs: Iterable[tuple[str, re.Pattern[str], int]]) -> list[SecretMatch]:
    """The matches of each pattern of ``runs`` (a kind, its pattern and where to start it), in the
    order of :data:`SECRET_KINDS`, kept in text order and without overlaps (an earlier kind wins)."""
    # the matches kept so far, in order and without overlaps: a new one is checked against its two
    # neighbours only (not against every match: a text of many secrets, a long stream, stays linear)
    found: list[SecretMatch] = []
    starts: list[int] = []
    for kind, pattern, pos in runs:
        for match in pattern.finditer(text, pos):
            start, end = match.span("v") if "v" in pattern.groupindex and match.group("v") is not None else match.span()
            at = bisect.bisect_left(starts, start)
            overlaps = (at < len(found) and found[at].start < end) or (at > 0 and found[at - 1].end > start)
            if end > start and not overlaps:
                found.insert(at, SecretMatch(kind, start, end))
                starts.insert(at, start)
    return found


def _fold(text: str) -> str:
    """``text`` in lower case, each character a pattern that ignores case reads as an ASCII letter made
    that letter (``K``, the Kelvin sign, is a ``k`` to ``re``; so are ``ſ`` an ``s``, ``ı`` and ``İ`` an
    ``i``), so an anchor of such a pattern is in the folded text wherever the pattern can match.

    Example:
        >>> _fold("API_KEY"), _fold("\u212aey ſecret")
        ('api_key', 'key secret')
    """
    return text.lower() if text.isascii() else text.translate(_FOLD).lower()


def context_key(key: str) -> bool:
    """Whether an object key can make its value a secret (``"api_key": "..."``, ``"Authorization":
    "Bearer ..."``): only such a key's members are looked at as a whole (see
    :func:`dsh_audit.redact._json_secrets.context_secrets`).

    Example:
        >>> context_key("OPENAI_API_KEY"), context_key("Proxy-Authorization"), context_key("command")
        (True, True, False)
    """
    return _CONTEXT_KEY.search(key) is not None


def private_key_closed(text: str, match: SecretMatch) -> bool:
    """Whether ``match``, a ``private_key`` match in ``text``, ends at its ``-----END`` line (not at the
    end of the text): only the pattern's END alternative leaves the text there."""
    return match.kind == "private_key" and text.startswith("-----END", match.end)


def credential_name(name: str) -> bool:
    """Whether a value found under ``name`` (a query parameter, form field, cookie or header name) is
    a secret by that name alone, whatever its shape.

    Example:
        >>> [credential_name(n) for n in ("api_key", "key", "X-Goog-Api-Key", "sig", "page", "monkey", "session-id")]
        [True, True, True, True, False, False, False]
    """
    return _CREDENTIAL_NAME.search(name) is not None


def cookie_secret(name: str) -> bool:
    """Whether a cookie named ``name`` holds a secret by its name (a session, a login, a token).

    Example:
        >>> [cookie_secret(n) for n in ("sessionid", "JSESSIONID", "connect.sid", "auth_token", "theme")]
        [True, True, True, True, False]
    """
    return credential_name(name) or _SESSION_COOKIE.search(name) is not None


def header_kind(name: str) -> str | None:
    """The kind of secret an HTTP header's value is by its name alone (None: it says nothing):
    ``authorization`` (and ``Proxy-Authorization``), ``cookie`` (``Cookie``, ``Set-Cookie``), or
    ``key_value`` for another credential name (``x-api-key``, ``anthropic-api-key``, ``x-auth-token``...).

    Example:
        >>> [header_kind(n) for n in ("Authorization", "Set-Cookie", "x-api-key", "Content-Type")]
        ['authorization', 'cookie', 'key_value', None]
    """
    if _AUTHORIZATION_HEADER.fullmatch(name):
        return "authorization"
    if _COOKIE_HEADER.fullmatch(name):
        return "cookie"
    return "key_value" if credential_name(name) else None


def scrub(text: str, replace: Callable[[str], str], found: Callable[[str], None] | None = None) -> str:
    """``text`` with every secret replaced by ``replace(secret)``; ``found(kind)`` is told of each."""
    matches = list(find_secrets(text))
    if not matches:
        return text
    out, last = [], 0
    for match in matches:
        if found is not None:
            found(match.kind)
        out.append(text[last:match.start])
        out.append(replace(text[match.start:match.end]))
        last = match.end
    out.append(text[last:])
    return "".join(out)
