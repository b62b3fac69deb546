"""Deterministic, salted, prefix-preserving placeholders that keep every length a break depends on.

A placeholder replaces each character of a text by another of the same *class*, so every UTF-8
byte length and every ``JSON.stringify`` escaped length stays: letters and digits among
themselves, other printable ASCII (space included) among itself, ``"`` and ``\\`` between
themselves, the five short-escaped controls among themselves (so a JSON text inside a JSON
string, such as tool arguments, keeps its length too), other controls among themselves, and two-, three- and
four-byte characters and each half of a lone surrogate within their own range.

Each UTF-8 byte is shifted, within the bytes UTF-8 allows at its place in its character, by a
non-zero amount drawn from a keyed BLAKE2b hash of the salt and the bytes *before* it
(prefix-preserving anonymisation, as Crypto-PAn does for IP addresses). So equal texts get equal
placeholders, two texts that share a prefix share the placeholder of that prefix and first
differ at exactly the byte where they did (break offsets stay; at the character, for the first
non-space multi-byte character of a text, whose placeholder may walk past the spaces of its class),
different texts always get different placeholders (each byte is a bijection given its prefix), and no
ASCII character is left in place but the spaces a text starts with, path separators and line breaks.
The prefix is that of the line: every line break (:data:`LINE_BREAKS`, as ``str.splitlines`` splits)
stays itself, no other character becomes one, and the hash starts again after it, so the lines two
versions of a system prompt share keep equal placeholders and a line diff of them its hunks. Without
the salt the shifts say nothing; with many texts, the first character of each line is a fixed
substitution (every line has the same, empty, prefix there), and equal lines show as equal.

Session ids (:meth:`Placeholders.keep_identifiers`: the log's own, its parent's, its children's) are
identifiers, not content: a text that holds one keeps it verbatim in place, its placeholder built
around it, so a parent's tool result that names its child's session still names it (``breaks`` dates
a subagent's spawn by that first mention). Only a string of the shape DSH gives a session id
(:data:`SESSION_ID`: a UUID, or 32 hex digits, after an optional prefix such as ``session-``) is one.

What is kept on purpose: whitespace-only texts (renderers drop them, so the verdict depends on
it), the spaces a content text starts with (so that a text is blank for JavaScript's ``trim`` and
Python's ``isspace`` exactly when its placeholder is: :meth:`Placeholders.plain` ``blank``) and JSON
structure inside texts that are JSON objects or arrays (keys, numbers, literals and
layout stay; string values are replaced), so tool arguments still parse to objects of the same
shape. An object key that holds a secret is the exception: the secret in it is replaced in place
(:meth:`Placeholders.keys`, :func:`rewrite_keys`), keeping the key's lengths and the object's keys
distinct.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
import struct
from array import array
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal, overload

from ..jsjson import stringify
from ._secrets import (SecretMatch, context_key, find_secrets, key_body, key_end, key_piece, private_key_closed,
                       private_key_cut, private_key_open, scrub, split_private_key, split_tail)

__all__ = ["IMAGE_LIMIT", "JsonPath", "LINE_BREAKS", "Placeholders", "SESSION_ID", "context_secrets", "json_string",
           "reencode", "rewrite_keys", "string_tokens"]


def _ranges(*spans: tuple[int, int]) -> tuple[int, ...]:
    return tuple(c for lo, hi in spans for c in range(lo, hi + 1))


_ALNUM = _ranges((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A))
_PUNCT = tuple(c for c in _ranges((0x20, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)) if c not in (0x22, 0x5C))
_QUOTE = tuple(b'"\\')  # escaped as two characters, and as four inside a JSON string inside JSON
_ESC = tuple(b"\b\f\n\r\t")  # two characters, and three inside a JSON string inside JSON
_CTL = tuple(c for c in range(0x20) if c not in _ESC)
_CONT = _ranges((0x80, 0xBF))
_ASCII: dict[int, tuple[int, ...]] = {c: members for members in (_ALNUM, _PUNCT, _QUOTE, _ESC, _CTL) for c in members}
_ASCII[0x7F] = (0x7F,)
#: What blanks a text for Python's ``str.isspace`` or JavaScript's ``trim`` (pi-ai drops a text or thinking
#: block that ``trim()`` leaves empty; Python's set adds U+001C..U+001F and U+0085, JavaScript's U+FEFF).
_SPACES = frozenset("\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")
# Before a text's first character that is not a space (:data:`_SPACES`): a space stays itself and any
# other ASCII character moves among the non-spaces of its class, so a text is blank after as before
_LEADING: dict[int, tuple[int, ...]] = {
    c: (c,) if chr(c) in _SPACES else tuple(m for m in members if chr(m) not in _SPACES)
    for c, members in _ASCII.items()}
# lead byte -> (its class of lead bytes, the class of the byte after it, given that byte), per UTF-8's
# rules, so that every output is valid UTF-8 (or a lone surrogate, as Python holds it) of the same width
_LEAD2 = _ranges((0xC2, 0xDF))
_LEAD3 = _ranges((0xE1, 0xEC), (0xEE, 0xEF))
_LEAD4 = _ranges((0xF1, 0xF3))
_ED_SECOND = (_ranges((0x80, 0x9F)), _ranges((0xA0, 0xAF)), _ranges((0xB0, 0xBF)))  # BMP, high, low surrogate
_E0_SECOND, _F0_SECOND, _F4_SECOND = _ranges((0xA0, 0xBF)), _ranges((0x90, 0xBF)), _ranges((0x80, 0x8F))


_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[^"]+|"', re.S)  # a lone " (not in JSON) too
_SHORT = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_HEX = re.compile(r"[0-9a-fA-F]{4}")
#: The JSON string scanner :func:`json.loads` reads a string token with (typeshed does not declare it).
_SCANSTRING: Callable[[str, int], tuple[str, int]] = getattr(json.decoder, "scanstring")
#: Where a string sits in a JSON document: object keys (as read) and array indexes from the top.
JsonPath = tuple[Any, ...]
#: The string and structure tokens of JSON text, what :func:`string_tokens` reads (the colons, numbers,
#: literals and spaces between hold no ``"``, ``,`` nor bracket: they are skipped in C).
_JSON_TOKEN = re.compile(r'("[^"\\]*(?:\\.[^"\\]*)*")|([{\[])|([}\]])|,', re.S)  # a string, an opening, a closing
_KEY_MEMO = 4096  # the object keys :func:`string_tokens` remembers reading, per text (a body repeats its keys)
#: What JSON text holds outside its strings and literals: structure and numbers (no content
#: words); each checked in one linear pass (:func:`_skeleton_only`).
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_LITERAL = re.compile(r"true|false|null")
_SKELETON = re.compile(r"[\s{}\[\]:,0-9eE+.-]*")
_BLANK = re.compile(r"\s|\\n|\\r")  # what a key body may hold that is no key (blank lines, ``\n`` escapes)
_SHORTEST_SECRET = 10  # a key token shorter than this (quotes included) holds no secret find_secrets reports
# What a JSON string token may end with (before its closing quote) when its value ends with a character of
# a BEGIN or END line: the character, or the last hex digit of a ``\\uXXXX`` escape of one
_LINE_END = frozenset("-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 abcdef")


#: The largest image given a stand-in (32 MiB, as dsh-audit reads DSH's attachment store: DSH admits 3.5 MiB
#: by default and never sends an image whose base64 passes 20 MiB); a larger one keeps its name.
IMAGE_LIMIT = 32 << 20
_MEMO_IMAGES = 4096


def _lead(byte: int) -> tuple[tuple[int, ...], int]:
    """The class of lead byte ``byte`` and the width of its character."""
    if byte in _LEAD2:
        return _LEAD2, 2
    if byte in _LEAD3:
        return _LEAD3, 3
    if byte in (0xE0, 0xED):
        return (byte,), 3
    if byte in _LEAD4:
        return _LEAD4, 4
    return (byte,), 4  # F0 and F4


def _second(lead: int, byte: int) -> tuple[int, ...]:
    """The class of the byte after lead byte ``lead`` (``byte``: that byte), a module constant."""
    if lead == 0xE0:
        return _E0_SECOND
    if lead == 0xED:
        return next(c for c in _ED_SECOND if byte in c)
    if lead == 0xF0:
        return _F0_SECOND
    if lead == 0xF4:
        return _F4_SECOND
    return _CONT


def _unicode_escape(code: int, like: str) -> str:
    """``\\uXXXX`` of ``code`` in the hex case of the original escape ``like``."""
    digits = f"{code:04x}"
    return "\\u" + (digits.upper() if any(c in "ABCDEF" for c in like) else digits)


def json_string(token: str) -> str:
    """The value of the JSON string token ``token`` (a whole token, as the token patterns here match one)
    as :func:`json.loads` reads it (the same scanner, and errors), without its per-call overhead.

    Example:
        >>> token = r'"a\\u00e9\\/"'
        >>> json_string(token), json_string(token) == json.loads(token)
        ('aé/', True)
    """
    return _SCANSTRING(token, 1)[0]


def reencode(token: str, new: str) -> str:
    """The JSON string token of ``new`` written the way ``token`` (a JSON string token whose value
    has a placeholder ``new``) is written: each character raw, as a short escape or as a
    ``\\uXXXX`` escape (a surrogate pair as two) where the original character was. Its length, and
    so every offset and token estimate of the JSON around it, stays. When a form cannot hold the
    new character (a ``\\/`` escape), the token is written as ``JSON.stringify`` writes it."""
    if "\\" not in token:  # every character raw (what the loop below makes of it)
        return '"' + new + '"' if len(new) == len(token) - 2 else stringify(new)
    out = ['"']
    at, size = 0, len(new)  # the next character of ``new`` to write
    i, end = 1, len(token) - 1
    try:
        while i < end:
            escape = token.find("\\", i, end)
            if escape != i:  # a run of raw characters: as many of ``new``, raw
                stop = end if escape < 0 else escape
                if at + stop - i > size:
                    return stringify(new)
                out.append(new[at:at + stop - i])
                at += stop - i
                i = stop
                continue
            if at >= size:
                return stringify(new)
            form = token[i + 1]
            if form != "u":
                short = _SHORT.get(new[at])
                at += 1
                if short is None:
                    return stringify(new)
                out.append(short)
                i += 2
                continue
            code = int(token[i + 2:i + 6], 16)
            low = token[i + 8:i + 12] if token[i + 6:i + 8] == "\\u" and _HEX.fullmatch(token[i + 8:i + 12]) else ""
            value = ord(new[at])
            at += 1
            if 0xD800 <= code < 0xDC00 and low and 0xDC00 <= int(low, 16) < 0xE000:  # one character, two escapes
                if value <= 0xFFFF:
                    return stringify(new)
                value -= 0x10000
                out.append(_unicode_escape(0xD800 + (value >> 10), token[i + 2:i + 6])
                           + _unicode_escape(0xDC00 + (value & 0x3FF), low))
                i += 12
            else:
                if value > 0xFFFF:
                    return stringify(new)
                out.append(_unicode_escape(value, token[i + 2:i + 6]))
                i += 6
    except (ValueError, IndexError):
        return stringify(new)
    if at < size:
        return stringify(new)
    out.append('"')
    return "".join(out)


def _char_starts(token: str) -> list[int]:
    """Where each character of the value of the JSON string token ``token`` starts in it (a surrogate
    pair written as two ``\\uXXXX`` escapes is one character, as :func:`json.loads` reads it).

    Example:
        >>> _char_starts(json.dumps("a\\n\\u00e9\\U0001F600b"))
        [1, 2, 4, 10, 22]
    """
    starts: list[int] = []
    i, end = 1, len(token) - 1
    while i < end:
        starts.append(i)
        if token[i] != "\\":
            i += 1
        elif token[i + 1] != "u":
            i += 2
        elif (0xD800 <= int(token[i + 2:i + 6], 16) < 0xDC00 and token[i + 6:i + 8] == "\\u"
              and _HEX.fullmatch(token[i + 8:i + 12]) and 0xDC00 <= int(token[i + 8:i + 12], 16) < 0xE000):
            i += 12  # one character, two escapes
        else:
            i += 6
    return starts


def context_secrets(key: str, value: str) -> list[SecretMatch]:
    """The secrets of ``value`` that show only beside its object key ``key`` (a value under
    ``"api_key"``, ``"password"``, ``"Authorization"``...), as spans of ``value``. They are looked for
    in the member as ``JSON.stringify`` writes it (``"key": "value"``), so they do not depend on how
    the member was written: a key spelled with ``\\uXXXX`` escapes, a member of a log record (an
    object, not text) and one of JSON text are read alike. The secrets ``value`` holds alone are
    left to it (none of the spans overlaps one).

    Example:
        >>> [(m.kind, m.start, m.end) for m in context_secrets("Authorization", "Bearer abc123def456")]
        [('authorization', 0, 19)]
        >>> context_secrets("command", "Bearer abc123def456"), context_secrets("password", "sk-ant-api03-" + "x" * 20)
        ([], [])
    """
    if len(value) < 4 or not context_key(key):
        return []
    head = stringify(key) + ": "
    token = stringify(value)
    starts = _char_starts(token)
    if len(starts) != len(value):
        return []
    own = [(m.start, m.end) for m in find_secrets(value)]
    base = len(head)
    found: list[SecretMatch] = []
    for match in find_secrets(head + token):
        if match.start <= base:  # not inside the value's string
            continue
        start = bisect.bisect_right(starts, match.start - base) - 1
        end = min(bisect.bisect_left(starts, match.end - base), len(value))
        if start < end and not any(s < end and start < e for s, e in own):
            found.append(SecretMatch(match.kind, start, end))
    return found


def _key_run(tokens: list[re.Match[str]], first: int, *, opened: int | None = None,
             ends: _KeyEnds | None = None) -> int | None:
    """Where (in ``tokens``, ``_TOKEN``'s) the private key block that the JSON string ``tokens[first]``
    leaves open (:func:`private_key_open`, as the string reads) ends: the value string that ends its
    END line, when the value strings up to that line (object keys skipped; the line whole or cut over
    strings) read as pieces of a key, however short (:func:`._secrets.key_end`: chunks of a key); else
    the last of the value strings after it (blank strings skipped) that read as key body alone
    (:func:`key_body`); None when the string leaves none open, or the next value string is not key
    body (prose, a number: the block ends with its own string). ``opened``: the string leaves a block
    open whatever it reads as, its body starting there (its BEGIN line began in the strings before
    it). ``ends``: the lookahead of the text's other blocks, which it shares (each string read once).

    Example:
        >>> lines = ["-----BEGIN EC PRIVATE KEY-----", "MHcCAQEEIO1x", "", "oAoGCCqGSM49", "thanks"]
        >>> tokens = list(_TOKEN.finditer(json.dumps(lines)))
        >>> [m.group(0) for m in tokens][_key_run(tokens, 1)]
        '"oAoGCCqGSM49"'
        >>> chunks = ["-----BEGIN EC PRIVATE KEY-----", "MH", "cC", "-----END EC PRIV", "ATE KEY-----", "thanks"]
        >>> tokens = list(_TOKEN.finditer(json.dumps(chunks)))
        >>> [m.group(0) for m in tokens][_key_run(tokens, 1)]
        '"ATE KEY-----"'
    """
    try:
        value = json.loads(tokens[first].group(0))
    except ValueError:
        return None
    if not isinstance(value, str):
        return None
    if private_key_cut(value) if opened is None else key_piece(value, opened):
        last = (ends or _KeyEnds(tokens)).after(first, split_tail("", value))
        if last is not None:
            return last
    if opened is None and private_key_open(value) is None:
        return None
    last = None
    for k, token in _value_strings(tokens, first + 1):
        if token is None:
            break
        try:
            value = json.loads(token)
        except ValueError:
            break
        body = key_body(value) if isinstance(value, str) else None
        if body is None:
            break
        length, closed = body
        if closed or _BLANK.sub("", value[:length]):
            last = k
        if closed:
            break
    return last


class _KeyEnds:
    """The END line lookahead (:func:`._secrets.key_end`) of the private key blocks of one JSON text,
    remembered: a block that opens among the strings an earlier block's lookahead read ends where that
    lookahead said (the strings between are the same, and no END line starts before its BEGIN line
    ends), so each string of the text is read once however many blocks it holds (a text of many cut
    BEGIN lines and no END line stays linear)."""

    def __init__(self, tokens: list[re.Match[str]]) -> None:
        self.tokens = tokens
        self._from = self._stop = -1
        self._last: int | None = None

    def after(self, first: int, tail: str) -> int | None:
        """The index (in the tokens) of the value string that ends the END line of a block that the
        string ``tokens[first]`` leaves open (``tail``: its :func:`._secrets.split_tail`), when the value
        strings before that line read as pieces of a key; None when they do not."""
        if self._from <= first < self._stop:
            return self._last
        read: list[int] = []

        def values() -> Iterator[str]:
            for k, token in _value_strings(self.tokens, first + 1):
                if token is None:
                    return
                try:
                    value = json.loads(token)
                except ValueError:
                    return
                read[:] = [k]
                yield value

        count = key_end(values(), tail)
        self._from, self._stop = first, read[0] if read else first
        self._last = read[0] if count is not None else None
        return self._last


def _free(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    """Whether the span ``start:end`` overlaps none of ``taken`` (spans in order, no two overlapping).

    Example:
        >>> _free([(0, 4), (10, 12)], 4, 10), _free([(0, 4), (10, 12)], 3, 5), _free([(0, 4), (10, 12)], 11, 20)
        (True, False, False)
    """
    at = bisect.bisect_left(taken, (end,))  # the spans that start before ``end``; the last ends last
    return at == 0 or taken[at - 1][1] <= start


class _Overlaps:
    """Which of ``spans`` overlap each of a series of ranges of a text asked in order (each range
    starting where or after the one before ended, as :meth:`Placeholders._strings` reads the pieces of a
    text): a sweep, so each span is looked at when the ranges reach it and dropped once they pass it,
    and a text of many strings and many secrets is read in linear time, not each string against every
    span.

    Example:
        >>> sweep = _Overlaps([(5, 9), (0, 2), (1, 30)])
        >>> sweep.between(0, 3), sweep.between(3, 6), sweep.between(10, 12), sweep.between(40, 41)
        ([1, 2], [0, 2], [2], [])
    """

    def __init__(self, spans: list[tuple[int, int]]) -> None:
        self._spans = spans
        self._order = sorted(range(len(spans)), key=lambda n: spans[n][0])
        self._next = 0
        self._active: list[int] = []

    def between(self, start: int, end: int) -> list[int]:
        """The numbers of the spans that overlap ``start:end`` (or hold the point ``start`` when the
        range is empty), in order."""
        spans, order = self._spans, self._order
        while self._next < len(order) and spans[order[self._next]][0] < end:
            self._active.append(order[self._next])
            self._next += 1
        self._active = [n for n in self._active if spans[n][1] > start]
        return sorted(n for n in self._active if spans[n][0] < end)


def _value_strings(tokens: list[re.Match[str]], start: int = 0) -> Iterator[tuple[int, str | None]]:
    """From ``start``, each JSON string token that is a value, not an object key, with its index;
    ``(index, None)`` for a piece between strings that is not JSON punctuation (which parts them)."""
    for k in range(start, len(tokens)):
        token = tokens[k].group(0)
        if len(token) < 2 or token[0] != '"':
            if token.strip(" \t\r\n,:[]{}"):
                yield k, None
            continue
        if k + 1 < len(tokens) and tokens[k + 1].group(0).lstrip()[:1] == ":":  # an object key
            continue
        yield k, token


def _split_keys(tokens: list[re.Match[str]], ends: _KeyEnds | None = None) -> list[tuple[int, int, bool]]:
    """Each private key block of a JSON text (``tokens``: ``_TOKEN``'s) whose BEGIN line runs across
    consecutive value strings, two or more, with only JSON punctuation between them
    (``["-----BEGIN RSA PRIV", "ATE KEY-----\\n..."]``, ``["-----BEG", "IN RSA PRIV", "ATE KEY-----"]``:
    :func:`._secrets.split_private_key` on the joined end of the strings before, :func:`._secrets.split_tail`):
    where its body starts and ends in the text (up to its END line, or when the string that ends the BEGIN
    line leaves it open, over the value strings after it that read as key body or as pieces of one up to
    its END line: :func:`_key_run`), and whether it runs over more strings than that one. Each string is
    decoded only when a BEGIN line can run into it or out of it (its last character may be one of such a
    line), so the work stays that of reading the text once."""
    found: list[tuple[int, int, bool]] = []
    tail = ""
    for k, token in _value_strings(tokens):
        if token is None:
            tail = ""
            continue
        if not tail and len(token) > 2 and token[-2] not in _LINE_END:  # no BEGIN line runs out of or into it
            continue
        match = tokens[k]
        try:
            value = json.loads(token)
        except ValueError:
            tail = ""
            continue
        split = split_private_key(tail, value) if tail else None
        tail = split_tail(tail, value)
        if split is None:
            continue
        start, end, closed = split
        starts = _char_starts(token)
        if len(starts) != len(value):
            continue
        last = None if closed else _key_run(tokens, k, opened=start, ends=ends)
        raw_end = tokens[last].end() - 1 if last is not None else match.start() + (
            starts[end] if end < len(starts) else len(token) - 1)
        found.append((match.start() + (starts[start] if start < len(starts) else len(token) - 1), raw_end,
                      last is not None))
    return found


def _member_keys(text: str, tokens: list[re.Match[str]]) -> dict[int, str]:
    """Where each string token of ``text`` that is the value of an object member under a key that can
    make it a secret (:func:`context_key`) starts, and that key (as read). ``tokens``: ``_TOKEN``'s."""
    if not context_key(text) and "\\u" not in text:  # no such key, as written or as an escape may write it
        return {}
    members: dict[int, str] = {}
    for first, colon, second in zip(tokens, tokens[1:], tokens[2:]):
        name, between, value = first.group(0), colon.group(0), second.group(0)
        if len(name) > 1 and name[0] == '"' and between.strip() == ":" and len(value) > 1 and value[0] == '"':
            try:
                key = json.loads(name)
            except ValueError:
                continue
            if isinstance(key, str) and context_key(key):
                members[second.start()] = key
    return members


def _skeleton_only(text: str) -> bool:
    """Whether ``text`` holds words only inside JSON strings (structure, numbers and literals
    outside them), as JSON nested past the parser does.

    Example:
        >>> _skeleton_only('[[["a b", 1, -2.5e3, true]]]'), _skeleton_only("[[[secret words]]]")
        (True, False)
    """
    return _SKELETON.fullmatch(_LITERAL.sub("", _STRING.sub("", text))) is not None


def _json_text(text: str) -> bool:
    """Whether ``text`` is a JSON object or array (as :meth:`Placeholders.text` tells JSON text)."""
    if text.lstrip()[:1] not in ("{", "["):
        return False
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


@overload
def string_tokens(text: str, *, keys: Literal[False] = False) -> Iterator[tuple[int, int, str, JsonPath]]: ...


@overload
def string_tokens(text: str, *, keys: Literal[True]) -> Iterator[tuple[int, int, str, int]]: ...


def string_tokens(text: str, *, keys: bool = False) -> Iterator[tuple[int, int, str, Any]]:
    """The string tokens of JSON ``text`` in order, as ``(start, end, token, where)``: each string
    *value*, ``where`` its path (:data:`JsonPath`); with ``keys``, each object key instead, ``where``
    the number of the object it belongs to (from 1, in the order the objects open; keys are not read
    then). The one scanner of JSON text's structure here: :func:`rewrite_keys` takes its keys, the
    redaction of captured bodies and responses (``._capture``, ``._response``) its values.

    Example:
        >>> text = '{"a": ["x", {"b": "y"}], "c": "z"}'
        >>> [(token, path) for _, _, token, path in string_tokens(text)]
        [('"x"', ('a', 0)), ('"y"', ('a', 1, 'b')), ('"z"', ('c',))]
        >>> [(token, number) for _, _, token, number in string_tokens(text, keys=True)]
        [('"a"', 1), ('"b"', 2), ('"c"', 1)]
    """
    steps: list[Any] = []  # per open container, outermost first: its key (as read) or index, the path
    outer: list[tuple[bool, int]] = []  # per open container but the innermost: its ``expecting``, ``number``
    expecting = False  # whether a key comes next in the innermost container
    number = -1  # its number (an array's 0; -1 outside any container)
    read: dict[str, str] = {}
    objects = 0
    for match in _JSON_TOKEN.finditer(text):  # only strings and structure change the state
        kind = match.lastindex
        if kind == 1:
            if not expecting:  # a value
                if not keys:
                    yield match.start(), match.end(), match.group(1), tuple(steps)
                continue
            expecting = False
            if keys:
                yield match.start(), match.end(), match.group(1), number
                continue
            token = match.group(1)
            key = read.get(token)
            if key is None:
                key = json_string(token)
                if len(read) < _KEY_MEMO:
                    read[token] = key
            steps[-1] = key
        elif kind == 2:
            outer.append((expecting, number))
            if text[match.start()] == "{":
                objects += 1
                number, expecting = objects, True
                steps.append(None)
            else:
                number, expecting = 0, False
                steps.append(0)
        elif kind == 3:
            if outer:
                expecting, number = outer.pop()
                steps.pop()
        elif number > 0:  # a comma in an object
            expecting = True
        elif number == 0:  # in an array
            steps[-1] += 1


def rewrite_keys(text: str, keys: Callable[[list[str]], dict[str, str]]) -> str:
    """JSON ``text`` with object keys renamed in place: ``keys`` is given the keys of each object
    that has a key long enough to hold a secret, and returns the new name of each key it renames.
    A new key is written in its original's escape forms (:func:`reencode`), so lengths stay.

    Example:
        >>> rename = lambda names: {"long-key-c": "long-key-d"} if "long-key-c" in names else {}
        >>> rewrite_keys('{"a": {"b": 1, "long-key-c": 2}}', rename)
        '{"a": {"b": 1, "long-key-d": 2}}'
    """
    # the keys as three flat arrays (a body of many objects holds many keys), and the objects with a key
    # long enough to hold a secret (a key no shorter than that as read is no shorter as written)
    starts, ends, numbers = array("q"), array("q"), array("q")
    long: set[int] = set()
    for start, end, _, number in string_tokens(text, keys=True):
        starts.append(start)
        ends.append(end)
        numbers.append(number)
        if end - start >= _SHORTEST_SECRET:
            long.add(number)
    if not long:
        return text
    names: dict[int, list[str]] = {}
    read: dict[str, str] = {}  # each key token read once (a body repeats its keys)
    for start, end, number in zip(starts, ends, numbers):
        if number in long:
            token = text[start:end]
            name = read.get(token)
            if name is None:
                name = read[token] = json_string(token)
            names.setdefault(number, []).append(name)
    renames = {number: keys(found) for number, found in names.items()
               if any(len(name) >= _SHORTEST_SECRET - 2 for name in found)}
    renames = {number: renamed for number, renamed in renames.items() if renamed}
    out: list[str] = []
    last = 0
    for start, end, number in zip(starts, ends, numbers):
        renamed = renames.get(number)
        new = None if renamed is None else renamed.get(json_string(text[start:end]))
        if new is not None:
            out.append(text[last:start])
            out.append(reencode(text[start:end], new))
            last = end
    out.append(text[last:])
    return "".join(out)


#: A path's separators: never replaced nor produced (the other members of their class walk past
#: them), so a placeholder has its text's shape as a path, absolute or not on the platform that
#: wrote it (DSH212), wherever the text is.
_SEPARATORS = frozenset(b"/\\")
#: What Python's ``str.splitlines`` ends a line at (``\n``, ``\r`` and so ``\r\n``, ``\v``, ``\f``,
#: ``\x1c``-``\x1e``, U+0085, U+2028, U+2029): never replaced nor produced either, so a text keeps its
#: lines, and a line diff of two versions of a system prompt (``breaks``, ``explain``) keeps its hunks.
LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
#: The single bytes no placeholder replaces nor produces: separators and ASCII line breaks.
_FIXED = _SEPARATORS | frozenset(ord(c) for c in LINE_BREAKS if c < "\x80")
_WIDE_BREAKS = frozenset(c.encode("utf-8") for c in LINE_BREAKS if c >= "\x80")
_ASCII_BREAKS = frozenset(ord(c) for c in LINE_BREAKS if c < "\x80")
#: The shape of a session id DSH writes (:meth:`Placeholders.keep_identifiers` keeps no other string): a
#: UUID (a subagent child, ``packages/subagent/subagent/src/continuation.ts:415``; an ACP session,
#: ``packages/acp/acp/src/index.ts:311``), or one after a prefix ending in ``-`` (``session-<uuid>``,
#: ``packages/bundle/headless/src/index.ts:112``; ``<agent>-session-<uuid>``,
#: ``packages/core/agent-loop/src/index.ts:358``), or 32 hex digits after one (``session-<hex>``,
#: ``packages/subagent/subagent-dsh-sdk/src/run.ts:165``). No text of words is one.
SESSION_ID = re.compile(r"(?:[A-Za-z0-9._]{1,64}-){0,4}(?:[0-9A-Fa-f]{8}(?:-[0-9A-Fa-f]{4}){3}-[0-9A-Fa-f]{12}"
                        r"|[0-9A-Fa-f]{32})")


def _shift(byte: int, members: tuple[int, ...], draw: int, fixed: frozenset[int] = _FIXED) -> int:
    size = len(members)
    if size == 1 or byte in fixed:
        return byte
    step = 1 + draw % (size - 1)
    out = members[(members.index(byte) + step) % size]
    while out in fixed:  # cycle walking: a bijection of the class's other members
        out = members[(members.index(out) + step) % size]
    return out


def _shifts(byte: int, members: tuple[int, ...], fixed: frozenset[int] = _FIXED) -> tuple[int, ...] | None:
    """What :func:`_shift` makes of ``byte`` for each draw, by the draw modulo ``len(members) - 1`` (the
    only part of it :func:`_shift` reads); None when it leaves ``byte`` itself whatever the draw. Made
    once per byte and class, so a placeholder costs a hash and a lookup per byte (no search of its class).

    Example:
        >>> table = _shifts(ord("a"), _ALNUM)
        >>> [table[d % len(table)] == _shift(ord("a"), _ALNUM, d) for d in (0, 7, 60, 10**20)], _shifts(0x2F, _PUNCT)
        ([True, True, True, True], None)
    """
    if len(members) == 1 or byte in fixed:
        return None
    return tuple(_shift(byte, members, draw, fixed) for draw in range(len(members) - 1))


def _ascii_tables(fixed: frozenset[int]) -> tuple[tuple[tuple[int, ...] | None, ...], ...]:
    """:func:`_shifts` of every ASCII byte in its class (:data:`_ASCII`) and, before a text's first
    character that is no space, in its leading class (:data:`_LEADING`): ``[leading][byte]``."""
    return (tuple(_shifts(c, _ASCII[c], fixed) for c in range(0x80)),
            tuple(_shifts(c, _LEADING[c], fixed) for c in range(0x80)))


# ASCII bytes' shifts by whether line breaks stay (:meth:`Placeholders.plain` ``lines``), then [leading][byte]
_ASCII_SHIFTS = {True: _ascii_tables(_FIXED), False: _ascii_tables(_SEPARATORS)}
# The same, each as a table every byte has (a byte :func:`_shifts` leaves itself: only itself) and its length,
# for :func:`_ascii_run`: by whether line breaks stay
_RUN_TABLES = {lines: tuple((table or (c,)) for c, table in enumerate(tables[0]))
               for lines, tables in _ASCII_SHIFTS.items()}
_RUN_SIZES = {lines: tuple(map(len, tables)) for lines, tables in _RUN_TABLES.items()}
# A run of ASCII bytes (that are no line breaks, when those stay) that :func:`_ascii_run` draws at once
_RUNS = {True: re.compile(rb"[\x00-\x09\x0e-\x1b\x1f-\x7f]+"), False: re.compile(rb"[\x00-\x7f]+")}
_SINGLE_BYTES = tuple(bytes((c,)) for c in range(256))
_SHORT_RUN = 24  # a shorter run is drawn byte by byte (drawing at once costs more than it saves there)
_RUN_CHUNK = 1 << 16  # the bytes drawn per batch of digests (bounds the lists a long run makes)
# A multi-byte character's bytes' shifts (no byte of one is fixed), made when first needed: by the class
# (a module constant, so its id is stable) and the byte
_WIDE_SHIFTS: dict[tuple[int, int], tuple[int, ...]] = {}


def _classes(char: bytes) -> list[tuple[int, ...]]:
    """The class of each byte of the multi-byte character ``char`` (:func:`_lead`, :func:`_second`)."""
    lead, width = _lead(char[0])
    return [lead, _second(char[0], char[1])] + [_CONT] * (width - 2)


def _char(state: Any, char: bytes) -> bytes:
    """The placeholder of one multi-byte character ``char`` after the prefix hashed into ``state``: each
    byte shifted within the bytes UTF-8 allows at its place, by a draw keyed with the bytes before it
    (a bijection of the characters of its class, given ``state``)."""
    out = bytearray(char)
    hashed = state.copy()
    for at, members in enumerate(_classes(char)):
        if len(members) > 1:  # a lead byte alone in its class (E0, ED, F0, F4) stays, as _shift leaves it
            key = (id(members), char[at])
            table = _WIDE_SHIFTS.get(key)
            if table is None:
                table = _WIDE_SHIFTS[key] = _shifts(char[at], members, frozenset()) or (char[at],)
            out[at] = table[int.from_bytes(hashed.digest(), "big") % len(table)]  # digest() leaves the state
        hashed.update(char[at:at + 1])
    return bytes(out)


def _ascii_run(state: Any, data: bytes, start: int, stop: int, out: bytearray, lines: bool) -> None:
    """The placeholder of the run ``data[start:stop]`` (ASCII bytes, no line break when ``lines``, after
    the first character of its text that is no space) into ``out[start:stop]``, after the prefix hashed
    into ``state``, which it updates with the run: what :meth:`Placeholders._bytes` makes of it byte by
    byte (each byte's table read with the draw of the prefix before it), the per-byte work done in C as
    far as it goes. The digest of each prefix is still drawn (the scheme is per prefix), but from one
    state updated in place (``digest()`` leaves a state as it is), the draws unpacked in one call and the
    bytes looked up in one pass, a batch of bytes at a time.

    Example:
        >>> p = Placeholders(b"salt")
        >>> state, out = p._hash.copy(), bytearray(b"???????")
        >>> _ascii_run(state, b"-xa/b c", 1, 7, out, True)
        >>> out[1:].decode() == p.plain("xa/b c"), out[:1], state.digest() == p._hash.copy().digest()
        (True, bytearray(b'?'), False)
    """
    tables, sizes = _RUN_TABLES[lines], _RUN_SIZES[lines]
    update, digest, single = state.update, state.digest, _SINGLE_BYTES.__getitem__
    for at in range(start, stop, _RUN_CHUNK):
        chunk = data[at:min(at + _RUN_CHUNK, stop)]
        digests = [digest()]  # of the prefix before each byte: updated with the byte before, then drawn
        digests += [digest() for byte in map(single, chunk[:-1]) if not update(byte)]
        update(chunk[-1:])
        draws = struct.unpack(f">{len(chunk)}Q", b"".join(digests))
        out[at:at + len(chunk)] = bytes([tables[byte][draw % sizes[byte]] for byte, draw in zip(chunk, draws)])


class Placeholders:
    """Placeholders for one redaction: one salt.

    Example:
        >>> p = Placeholders(b"salt")
        >>> a, b = p.text("hello world"), p.text("hello there")
        >>> a == p.text("hello world"), len(a.encode()) == 11, a[:6] == b[:6], a[6] != b[6]
        (True, True, True, True)
    """

    def __init__(self, salt: bytes) -> None:
        if not salt:
            raise ValueError("the salt must not be empty")
        self._hash = hashlib.blake2b(b"dsh-audit redact v1", key=hashlib.sha256(salt).digest(), digest_size=8)
        self._image_key = hashlib.sha256(b"dsh-audit redact image\0" + salt).digest()
        self._memo: dict[str, str] = {}
        self._short: dict[str, str] = {}  # the same for texts of at most 32 characters (a body repeats its roles)
        self._identifiers: re.Pattern[str] | None = None
        self._shortest = 0
        self._image_ids: dict[tuple[str, int], str] = {}

    def image(self, attachment: str, size: int) -> bytes:
        """The stand-in bytes of the image a log names ``attachment`` (``sha256:<hex>``), ``size`` bytes
        long: keyed pseudo-random bytes drawn from the salt and the name (SHAKE256), so the log's
        reference and a captured body's bytes of one image get the same stand-in (:meth:`image_id`
        names it), and its base64 keeps its length.

        Example:
            >>> p = Placeholders(b"salt")
            >>> image = p.image("sha256:ab", 70)
            >>> len(image), image == p.image("sha256:ab", 70) != p.image("sha256:ac", 70)
            (70, True)
        """
        return hashlib.shake_256(self._image_key + attachment.encode("utf-8", "surrogatepass")).digest(size)

    def image_id(self, attachment: str, size: int) -> str | None:
        """The attachment name of the stand-in of the image named ``attachment`` (:meth:`image`): as DSH
        names an image, ``sha256:`` and the hex SHA-256 of its bytes; None for an image larger than any
        DSH sends (:data:`IMAGE_LIMIT`), which gets no stand-in."""
        if not 0 <= size <= IMAGE_LIMIT:
            return None
        memo = (attachment, size)
        found = self._image_ids.get(memo)
        if found is None:
            found = "sha256:" + hashlib.sha256(self.image(attachment, size)).hexdigest()
            if len(self._image_ids) > _MEMO_IMAGES:
                self._image_ids.clear()
            self._image_ids[memo] = found
        return found

    def plain(self, text: str, *, blank: bool = False, lines: bool = True) -> str:
        """The class-preserving, prefix-preserving placeholder of ``text`` (no JSON awareness).

        With ``blank`` (a content text: :meth:`text`), whether the text is blank (only spaces, for
        Python's ``str.isspace`` and for JavaScript's ``trim``, by which pi-ai drops a text or thinking
        block) stays too: up to the text's first character that is no space (:data:`_SPACES`), spaces
        stay themselves and other characters move among the non-spaces of their class (a multi-byte
        one walks its class's cycle past the spaces), so the placeholder's first non-space is where
        the text's was, and a text of spaces stays one. (A secret replaced inside a kept text holds
        letters or digits, which never become spaces: it needs no ``blank``.)

        Example:
            >>> p = Placeholders(b"salt")
            >>> [p.plain(t, blank=True).isspace() for t in ("!", "\\ufeff!", " x")]
            [False, False, False]
            >>> p.plain("\\ufeff\\u3000", blank=True), p.plain("\\ufeff\\u3000") != "\\ufeff\\u3000"
            ('\\ufeff\\u3000', True)

        With ``lines`` (all but a streamed delta's), each line break (:data:`LINE_BREAKS`) stays and the
        hash starts again after it, so equal lines get equal placeholders:

            >>> two = p.plain("same\\nold\\nsame"), p.plain("same\\nnew\\nsame")
            >>> [t.split("\\n") for t in two][0][::2] == [t.split("\\n") for t in two][1][::2], two[0] != two[1]
            (True, True)
        """
        if not text or text.isspace():
            return text
        data = text.encode("utf-8", "surrogatepass")
        out = bytearray(data)  # a byte no placeholder replaces (a separator, a line break) stays as it is
        state, leading, at, done = self._hash.copy(), blank, 0, 0  # leading: no character but spaces so far
        if self._identifiers is not None and len(text) >= self._shortest:
            for match in self._identifiers.finditer(text):  # an identifier stays itself, the placeholder around it
                start = at + len(text[done:match.start()].encode("utf-8", "surrogatepass"))
                state, leading = self._bytes(data, at, start, out, state, leading, lines)
                end = start + len(match.group(0).encode("utf-8", "surrogatepass"))
                out[start:end] = data[start:end]
                state.update(data[start:end])
                leading = False
                at, done = end, match.end()
        self._bytes(data, at, len(data), out, state, leading, lines)
        return out.decode("utf-8", "surrogatepass")

    def _bytes(self, data: bytes, i: int, stop: int, out: bytearray, state: Any, leading: bool,
               lines: bool) -> tuple[Any, bool]:
        """The placeholder of ``data[i:stop]`` into ``out`` (:meth:`plain`), after the bytes hashed into
        ``state`` (since the last line break); the state and ``leading`` after it. Each line break stays
        and starts the hash again (a line's placeholder depends on that line alone, so the lines two
        versions of a text share keep their placeholders, and a line diff its hunks); without ``lines``
        (a streamed delta) a line break is hidden among its class as every other character."""
        breaks, wide = (_ASCII_BREAKS, _WIDE_BREAKS) if lines else (frozenset(), frozenset())
        shifts, first_shifts = _ASCII_SHIFTS[lines]
        from_bytes = int.from_bytes
        runs, short = _RUNS[lines], 0  # short: where a run of ASCII bytes too short to draw at once ends
        while i < stop:
            byte = data[i]
            if byte < 0x80 and not leading and i >= short:  # a run of ASCII bytes at once, as below byte by byte
                run = runs.match(data, i, stop)
                end = i if run is None else run.end()
                if end - i >= _SHORT_RUN:
                    _ascii_run(state, data, i, end, out, lines)
                    i = end
                    continue
                short = end
            if byte < 0x80:
                # as _shift(byte, its class, the draw) makes it, by table; the draw's hash is made only
                # when it is read (``out`` holds each byte a table leaves as it is)
                table = first_shifts[byte] if leading else shifts[byte]
                if table is not None:
                    out[i] = table[from_bytes(state.digest(), "big") % len(table)]  # digest() leaves the state
                leading = leading and chr(byte) in _SPACES
                if byte in breaks:
                    state = self._hash.copy()
                else:
                    state.update(data[i:i + 1])
                i += 1
                continue
            char = data[i:i + _lead(byte)[1]]
            if char in wide:
                out[i:i + len(char)] = char
                state = self._hash.copy()
                i += len(char)
                continue
            if not leading:
                new = _char(state, char)
                while new in wide:  # cycle walking: a bijection of the rest of its class
                    new = _char(state, new)
            elif char.decode("utf-8", "surrogatepass") in _SPACES:
                new = char
            else:
                leading = False
                new = _char(state, char)
                while new.decode("utf-8", "surrogatepass") in _SPACES:  # cycle walking: a bijection of the rest
                    new = _char(state, new)
            out[i:i + len(char)] = new
            state.update(char)
            i += len(char)
        return state, leading

    def keep_identifiers(self, identifiers: Iterable[str]) -> None:
        """Keep each of ``identifiers`` (session ids) verbatim wherever a text holds it: the placeholder
        is built around it (:meth:`plain`), so a parent's tool result that names its child's session
        id names it after as before. A string not of the shape of a session id (:data:`SESSION_ID`) is
        not kept: it could be content. Call before the first placeholder; a call replaces the ids of
        the one before.

        Example:
            >>> p = Placeholders(b"salt")
            >>> p.keep_identifiers(["session-0b6f6a0e-4f2c-4a55-9d3e-2b1c5f7e8a90", "Project Nightingale"])
            >>> p.plain("see session-0b6f6a0e-4f2c-4a55-9d3e-2b1c5f7e8a90")[4:]
            'session-0b6f6a0e-4f2c-4a55-9d3e-2b1c5f7e8a90'
            >>> "Nightingale" in p.plain("Project Nightingale")
            False
        """
        found = sorted({i for i in identifiers if SESSION_ID.fullmatch(i)}, key=lambda i: (-len(i), i))
        self._identifiers = re.compile("|".join(map(re.escape, found))) if found else None
        self._shortest = min(map(len, found)) if found else 0
        self._memo.clear()
        self._short.clear()

    @staticmethod
    def other_than(ch: str, taken: str) -> str:
        """``ch``, or when it equals ``taken`` the next character of its class (same lengths)."""
        if ch != taken:
            return ch
        code = ord(ch)
        if code < 0x80:
            members = _ASCII[code]
            if code in _FIXED:
                return ch  # no other member may stand for a separator; taken ones are told apart elsewhere
            out = members[(members.index(code) + 1) % len(members)]
            while out in _FIXED:
                out = members[(members.index(out) + 1) % len(members)]
            return chr(out)
        data = bytearray(ch.encode("utf-8", "surrogatepass"))
        data[-1] = 0x80 + (data[-1] - 0x80 + 1) % 0x40
        return data.decode("utf-8", "surrogatepass")

    def keys(self, names: Iterable[str]) -> dict[str, str]:
        """The new name of each key of one object that holds a secret (other keys stay): the key
        with each secret in it replaced by its placeholder, of the same lengths. The new names are
        distinct from each other and from the keys that stay, whatever the order of ``names``.

        Example:
            >>> p = Placeholders(b"salt")
            >>> renamed = p.keys(["env", "sk-ant-api03-abcdefghijklmnopqrstuv"])
            >>> list(renamed), len(renamed["sk-ant-api03-abcdefghijklmnopqrstuv"])
            (['sk-ant-api03-abcdefghijklmnopqrstuv'], 35)
        """
        unique = set(names)
        spans = {name: [(m.start, m.end) for m in find_secrets(name)] for name in unique}
        taken = {name for name in unique if not spans[name]}
        renamed: dict[str, str] = {}
        for name in sorted(unique - taken):
            new = scrub(name, self.plain)
            start, end = spans[name][-1]
            new = self._distinct(new, start, end, taken)
            taken.add(new)
            renamed[name] = new
        return renamed

    def _distinct(self, new: str, start: int, end: int, taken: set[str]) -> str:
        """``new``, or when another key already has that name, ``new`` with characters of its secret
        span ``start:end`` moved on within their class (lengths kept) until no key has it."""
        candidate = new
        for i in range(end - 1, start - 1, -1):
            candidate = new
            for _ in range(len(_ALNUM)):
                if candidate not in taken:
                    return candidate
                candidate = candidate[:i] + self.other_than(candidate[i], candidate[i]) + candidate[i + 1:]
        return candidate

    def kept(self, text: str, found: Callable[[str, str], None] | None = None, *, key: str | None = None) -> str:
        """A kept text (``--keep``, structural strings): ``text`` with each secret in it replaced by its
        :meth:`plain` placeholder, every other character kept; ``found(kind, secret)`` is told of each.

        Each JSON string in the text (all of JSON object or array text, or a quoted string of other
        text that reads as one) is read as :meth:`json` reads a value: its secrets are looked for in
        the string as read (escapes decoded, so a secret written with ``\\uXXXX`` or ``\\/`` escapes is
        found; JSON text inside it is read the same way, at any depth), replaced there, and the string
        written back in its original's escape forms (:func:`reencode`; a character written ``\\/``
        stays ``/``), so every length stays and the JSON stays valid. A secret found only with what
        surrounds a string (``"api_key": "..."``, an ``Authorization`` header) is replaced inside the
        string, the rest as written. In JSON object or array text a secret inside an object key is
        replaced as every key is (:func:`rewrite_keys` with :meth:`keys`), so the object's keys stay
        distinct whatever their order. How a string is read depends on the string alone, not on what
        follows it, so two texts that share a prefix keep sharing it up to the string where they part.

        A string that is the value of an object member (of the JSON, or of a record: ``key``) is also read
        with its key, as :func:`context_secrets` reads it, so a key written ``"Author\\u0069zation"`` gives
        its value the same context as ``"Authorization"``. A private key block that starts inside a JSON
        string ends with that string, unless its ``-----END`` line is in a later string (a key written as
        an array of lines): then every string up to that line goes, and the JSON between them stays.
        Without an END line, a block its string leaves open (:func:`._secrets.private_key_open`) goes on
        over the value strings after it that read as key body (:func:`._secrets.key_body`), up to the
        first that does not (prose stays), and counts once. A BEGIN line cut over any number of
        consecutive value strings (:func:`_split_keys`) opens a block in the string that ends it, and a
        block whose next strings read as pieces of a key, however short, up to an END line (whole or cut
        over strings: :func:`._secrets.key_end`) takes them all; each string is read once (:class:`_KeyEnds`).

        Example:
            >>> p = Placeholders(b"salt")
            >>> text = '{"sk-ant-api03-abcdefghijklmnopqrstuv": 1, "env": 2}'
            >>> kept = p.kept(text)
            >>> kept.endswith('": 1, "env": 2}'), len(kept) == len(text), "abcdefghijklmn" in kept
            (True, True, False)
            >>> nested = json.dumps({"args": json.dumps({"token": "abc\\u00e9defgh", "n": 1})})
            >>> print(nested)
            {"args": "{\\"token\\": \\"abc\\\\u00e9defgh\\", \\"n\\": 1}"}
            >>> print(p.kept(nested))
            {"args": "{\\"token\\": \\"ISx\\\\u046awGzmN\\", \\"n\\": 1}"}
        """
        return self._kept(text, found, (), key)[0]

    def _kept(self, text: str, found: Callable[[str, str], None] | None,
              around: Iterable[tuple[int, int, int]], key: str | None = None) -> tuple[str, set[int]]:
        """:meth:`kept` of ``text`` (the value of a member under ``key``, when given), also replacing each
        span of ``around`` (number, start, end: a secret found in the text around ``text``) that overlaps
        none of the secrets in ``text`` itself; and the numbers of the spans of ``around`` it replaced."""
        matches = list(find_secrets(text))
        if key is not None:
            matches += context_secrets(key, text)  # none overlaps a secret of the text alone
        # a private key block whose BEGIN line runs across two strings of the text: its body goes as one
        # that starts in the second string (over the strings after it, to its END line or the last string
        # of key body, as ``runs`` says)
        tokens = list(_TOKEN.finditer(text)) if '"' in text else []
        runs: dict[int, int] = {}
        ends = _KeyEnds(tokens)  # the END line lookahead of every block of the text, each string read once
        taken = sorted((m.start, m.end) for m in matches)  # no two overlap
        for start, end, run in _split_keys(tokens, ends) if "-" in text else ():  # a piece holds one of its dashes
            if start < end and _free(taken, start, end):
                if run:
                    runs[len(matches)] = end
                matches.append(SecretMatch("private_key", start, end))
                bisect.insort(taken, (start, end))
        spans = [(m.start, m.end) for m in matches]
        outer: list[int] = []  # spans[len(matches) + i] is the span of around numbered outer[i]
        for n, start, end in around:
            if start < end and _free(taken, start, end):
                spans.append((start, end))
                outer.append(n)
        if not spans and '"' not in text:
            return text, set()
        # A secret found starting inside a JSON string ends with it (a private key block without its
        # end line runs on to the end of the text as written, but only to the end of its string as read;
        # one whose header ends its string, at the closing quote, is then empty), but for a private key
        # block whose END line is in a later string: it covers those strings, not the JSON between them
        # (counted once: by its first string, when that holds more than the header, as read)
        strings = [(m.start(), m.end()) for m in tokens if len(m.group(0)) > 1 and m.group(0)[0] == '"']
        firsts = [start for start, _ in strings]
        across: set[int] = set()
        silent: set[int] = set()
        # A block without its END line that its string leaves open (:func:`private_key_open`) goes on
        # over the value strings after it that read as key body (a truncated key as an array of lines)
        positions = [k for k, m in enumerate(tokens) if len(m.group(0)) > 1 and m.group(0)[0] == '"']
        for i, (start, end) in enumerate(spans):
            if i in runs:  # its strings go, not the JSON between them
                across.add(i)
                continue
            at = bisect.bisect_right(firsts, start) - 1
            if at >= 0 and start <= strings[at][1] - 1:
                last = None
                if end > strings[at][1] - 1 and i < len(matches) and private_key_closed(text, matches[i]):
                    across.add(i)
                    if start < strings[at][1] - 1:
                        silent.add(i)
                elif end > strings[at][1] - 1 and i < len(matches) and matches[i].kind == "private_key":
                    last = _key_run(tokens, positions[at], ends=ends)
                if last is not None:
                    spans[i] = (start, tokens[last].end() - 1)
                    matches[i] = SecretMatch(matches[i].kind, matches[i].start, tokens[last].end() - 1)
                    across.add(i)
                    if start < strings[at][1] - 1:
                        silent.add(i)
                elif i not in across:
                    spans[i] = (start, min(end, strings[at][1] - 1))
        members = _member_keys(text, tokens)
        used: set[int] = set()

        def raw(start: int, piece: str) -> str:
            """``piece`` (at ``start`` in ``text``, not a JSON string) with every span in it replaced as written."""
            end = start + len(piece)
            cuts = sorted((max(spans[n][0], start), min(spans[n][1], end), n) for n in overlaps.between(start, end)
                          if n not in across)
            if not cuts:
                return piece
            out: list[str] = []
            last = start
            for s, e, n in cuts:
                used.add(n)
                s = max(s, last)  # spans from around may overlap by a character
                if s < e:
                    out.append(text[last:s])
                    out.append(self.plain(text[s:e]))
                    last = e
            out.append(text[last:end])
            return "".join(out)

        def string(start: int, token: str) -> str:
            """A JSON string token at ``start`` in ``text``, its secrets (and those of ``spans`` inside
            it) replaced in the string as read, written back in its forms."""
            try:
                value = json.loads(token)
            except ValueError:  # quotes that do not hold a JSON string: the text inside as written
                return '"' + raw(start + 1, token[1:-1]) + '"'
            end = start + len(token) - 1  # the closing quote
            inside = [(n, max(spans[n][0], start + 1) - start, min(spans[n][1], end) - start)
                      for n in overlaps.between(start + 1, end)]
            starts = _char_starts(token) if inside or "\\/" in token else []
            if len(starts) == len(value):  # in the string as read, each span growing to whole characters
                inside = [(n, bisect.bisect_right(starts, s) - 1, bisect.bisect_left(starts, e)) for n, s, e in inside]
            else:
                inside = [(n, 0, len(value)) for n, _, _ in inside]
            new, hits = self._kept(value, found, inside, members.get(start))
            used.update(hits)
            if new == value:
                return token
            if "\\/" in token and len(new) == len(starts):
                new = "".join("/" if token[at:at + 2] == "\\/" else ch for at, ch in zip(starts, new))
            return reencode(token, new)

        overlaps = _Overlaps(spans)  # the pieces of the text are read in order: each span is looked at once
        keys = _json_text(text)  # JSON text keeps its structure and keys (but for secrets): only its strings change
        out = self._strings(text, string, found, keys=keys, other=None if keys else raw)
        if found is not None:
            for n in sorted(used):
                if n < len(matches) and n not in silent:
                    found(matches[n].kind, text[matches[n].start:matches[n].end])
        return out, {outer[n - len(matches)] for n in used if n >= len(matches)}

    def text(self, text: str, *, blank: bool = True) -> str:
        """The placeholder of ``text``: :meth:`json` for JSON object or array text, else :meth:`plain`,
        blank exactly when ``text`` is (``blank``; a streamed delta, which no verdict reads, needs not
        be: its leading space is hidden among punctuation as every other)."""
        if not blank:
            done = self.json(text, blank=False) if text.lstrip()[:1] in ("{", "[") else None
            return self.plain(text, lines=False) if done is None else done
        memo = self._memo if len(text) > 32 else self._short
        found = memo.get(text)
        if found is not None:
            return found
        stripped = text.lstrip()
        result = self.json(text) if stripped[:1] in ("{", "[") else None
        if result is None:
            result = self.plain(text, blank=True)
        if len(memo) > 50_000:
            memo.clear()
        memo[text] = result
        return result

    def json(self, text: str, *, blank: bool = True) -> str | None:
        """``text`` with every string *value* of the JSON it holds replaced in place (keys, numbers,
        literals and layout kept, but a secret in a key is replaced: :meth:`keys`); None when
        ``text`` is not JSON. ``blank``: as :meth:`text`'s."""
        try:
            json.loads(text)
        except RecursionError:  # nested past the parser: still JSON when only strings hold words
            if not _skeleton_only(text):
                return None
        except ValueError:
            return None
        return self._strings(text, lambda start, token: reencode(token, self.text(json.loads(token), blank=blank)))

    def _strings(self, text: str, value: Callable[[int, str], str], found: Callable[[str, str], None] | None = None,
                 *, keys: bool = True, other: Callable[[int, str], str] | None = None) -> str:
        """``text`` with each JSON string token that is not an object key replaced by
        ``value(start, token)`` (``start``: where the token starts in ``text``) and, when ``other`` is
        given, each other piece by ``other(start, piece)``. With ``keys`` (``text`` is JSON), keys,
        numbers, literals and layout are kept but for a key that holds a secret: it is renamed as
        every key is (:func:`rewrite_keys` with :meth:`keys`), and ``found`` is told of each such
        secret. Without, a key is a string as any other."""
        out: list[str] = []
        tokens = list(_TOKEN.finditer(text))
        secret_key = False
        for i, match in enumerate(tokens):
            token = match.group(0)
            if len(token) < 2 or token[0] != '"':
                out.append(other(match.start(), token) if other is not None and token != '"' else token)
            elif not keys or not (i + 1 < len(tokens) and tokens[i + 1].group(0).lstrip().startswith(":")):
                out.append(value(match.start(), token))
            else:
                out.append(token)
                if len(token) >= _SHORTEST_SECRET and (found is not None or not secret_key):
                    name = json.loads(token)
                    for secret in find_secrets(name):
                        secret_key = True
                        if found is None:
                            break
                        found(secret.kind, name[secret.start:secret.end])
        redacted = "".join(out)
        return rewrite_keys(redacted, self.keys) if secret_key else redacted
