"""Secrets that JSON text shows only across its strings: a value's beside its object key
(:func:`context_secrets`, :func:`_member_keys`), and a private key block whose BEGIN line, body or
END line runs over consecutive value strings (:func:`_split_keys`, :func:`_key_run`, with the END
line lookahead :class:`_KeyEnds` shares). :meth:`._placeholder.Placeholders.kept` replaces them.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator

from ..jsjson import stringify
from ._json_text import _char_starts
from ._pem import key_body, key_end, key_piece, private_key_cut, private_key_open, split_private_key, split_tail
from ._secrets import SecretMatch, context_key, find_secrets

__all__ = ["context_secrets"]

_BLANK = re.compile(r"\s|\\n|\\r")  # what a key body may hold that is no key (blank lines, ``\n`` escapes)
# What a JSON string token may end with (before its closing quote) when its value ends with a character of
# a BEGIN or END line: the character, or the last hex digit of a ``\\uXXXX`` escape of one
_LINE_END = frozenset("-ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 abcdef")


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
    strings) read as pieces of a key, however short (:func:`._pem.key_end`: chunks of a key); else
    the last of the value strings after it (blank strings skipped) that read as key body alone
    (:func:`key_body`); None when the string leaves none open, or the next value string is not key
    body (prose, a number: the block ends with its own string). ``opened``: the string leaves a block
    open whatever it reads as, its body starting there (its BEGIN line began in the strings before
    it). ``ends``: the lookahead of the text's other blocks, which it shares (each string read once).

    Example:
        >>> from dsh_audit.redact._json_text import _TOKEN
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
    """The END line lookahead (:func:`._pem.key_end`) of the private key blocks of one JSON text,
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
        string ``tokens[first]`` leaves open (``tail``: its :func:`._pem.split_tail`), when the value
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
    :func:`._pem.split_private_key` on the joined end of the strings before, :func:`._pem.split_tail`):
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
