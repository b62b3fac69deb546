"""JSON string tokens in text, read and written back in their own forms: the one scanner of JSON
text's structure the redaction reads (:func:`string_tokens`), a token's value (:func:`json_string`),
a new value written in its original's escape forms (:func:`reencode`), and object keys renamed in
place (:func:`rewrite_keys`); a new value keeps every length of the JSON around it.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Callable, Iterator
from typing import Any, Literal, overload

from ..jsjson import stringify

__all__ = ["JsonPath", "json_string", "reencode", "rewrite_keys", "string_tokens"]

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
_SHORTEST_SECRET = 10  # a key token shorter than this (quotes included) holds no secret find_secrets reports


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


def _skeleton_only(text: str) -> bool:
    """Whether ``text`` holds words only inside JSON strings (structure, numbers and literals
    outside them), as JSON nested past the parser does.

    Example:
        >>> _skeleton_only('[[["a b", 1, -2.5e3, true]]]'), _skeleton_only("[[[secret words]]]")
        (True, False)
    """
    return _SKELETON.fullmatch(_LITERAL.sub("", _STRING.sub("", text))) is not None


def _json_text(text: str) -> bool:
    """Whether ``text`` is a JSON object or array (as :meth:`._placeholder.Placeholders.text` tells JSON text)."""
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
