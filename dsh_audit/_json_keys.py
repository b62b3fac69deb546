"""An object's key written twice in a JSON document, refused at its second place
(:func:`loads_unique`), as TOML refuses it: a price table read as its TOML twin would be, where
Python's parser (as ``JSON.parse``) keeps the last one in silence, a rate written twice would be
read as the file's order decides.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ._pyproject import dotted_key

__all__ = ["loads_unique"]


class _DuplicateKey(ValueError):
    """An object's key written twice (:func:`_unique_pairs`), before its place is known."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The JSON object of ``pairs``; :class:`_DuplicateKey` when one key comes twice."""
    table = dict(pairs)
    if len(table) < len(pairs):
        raise _DuplicateKey
    return table


def loads_unique(raw: bytes, **options: Any) -> Any:
    """``json.loads(raw, **options)`` with an object's key written twice refused at its second
    place, as TOML refuses it, where Python's parser (as ``JSON.parse``) keeps the last one in
    silence. The parser gives no key a place: the text is searched for it (:func:`_first_duplicate`)
    once one is found.

    Raises:
        json.JSONDecodeError: ``duplicate key KEY`` at the second key (a ValueError without a
            place, should the search not find it).

    Example:
        >>> loads_unique(b'{"a": {"b": 1,\\n "b": 2}, "c": {"b": 3}}')
        Traceback (most recent call last):
        ...
        json.decoder.JSONDecodeError: duplicate key b: line 2 column 2 (char 16)
    """
    try:
        return json.loads(raw, object_pairs_hook=_unique_pairs, **options)
    except _DuplicateKey:
        text = raw.decode(json.detect_encoding(raw), "surrogatepass")  # as json.loads decodes it
        found = _first_duplicate(text)
        if found is None:  # pragma: no cover - the search finds what the parser found
            raise ValueError("duplicate key") from None
        raise json.JSONDecodeError(f"duplicate key {dotted_key(found[0])}", text, found[1]) from None


# a JSON string (a key when a colon follows it) or a brace outside one: all a key's place needs
_JSON_TOKEN = re.compile(r'"(?P<text>[^"\\]*(?:\\.[^"\\]*)*)"(?P<key>[ \t\n\r]*:)?|[{}]', re.S)


def _first_duplicate(text: str) -> tuple[str, int] | None:
    """The first key of the JSON ``text`` that its object writes a second time, and that second
    place's offset; None when there is none. Only a document the parser read up to that key is
    searched, so each string and brace is one: a string that a colon follows is a key."""
    keys: list[set[str]] = []
    for token in _JSON_TOKEN.finditer(text):
        if token.group() == "{":
            keys.append(set())
        elif token.group() == "}":
            if keys:
                keys.pop()
        elif token["key"] is not None and keys:
            written = token["text"]
            key = json.loads(f'"{written}"') if "\\" in written else written  # an escape: decoded as the parser does
            if key in keys[-1]:
                return key, token.start()
            keys[-1].add(key)
    return None
