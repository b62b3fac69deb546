"""JavaScript's string and JSON semantics, as pi-ai and DSH's adapter see them: a string's length in
UTF-16 code units (:func:`js_len`), its head (:func:`js_head`), ``trim`` (:func:`js_blank`),
``JSON.parse`` (:func:`js_parse`), truthiness (:func:`js_truthy`), and pi-ai's surrogate and id
clean-ups (:func:`sanitize_surrogates`, :func:`clean_id`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from .._json import refuse_constant
from ..jsjson import has_surrogate

__all__ = ["clean_id", "js_blank", "js_head", "js_len", "js_parse", "js_truthy", "sanitize_surrogates"]

_LONE_SURROGATE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
_ARRAY_INDEX = re.compile(r"^(0|[1-9][0-9]*)$")
_PIECE = 1 << 20  # characters of a text encoded at once by js_len


def js_len(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units (an astral character is two), counted at C
    speed: an ASCII text is its length, another its UTF-16 encoding, a piece at a time (a huge
    tool result is not copied whole, nor read a character at a time).

    Example:
        >>> js_len("abc"), js_len("é€"), js_len("a😀")
        (3, 2, 3)
    """
    if text.isascii():
        return len(text)
    return sum(len(text[at:at + _PIECE].encode("utf-16-le", "surrogatepass")) // 2
               for at in range(0, len(text), _PIECE))


def js_head(text: str, units: int) -> str:
    """``text.slice(0, units)`` in JavaScript: the first ``units`` UTF-16 code units, so a cut
    through an astral character keeps its high surrogate alone.

    Example:
        >>> js_head("ab", 5), js_head("a😀b", 2) == "a" + chr(0xD83D), js_head("a😀b", 3)
        ('ab', True, 'a😀')
    """
    if text.isascii() or js_len(text) <= units:
        return text[:units]
    return text.encode("utf-16-le", "surrogatepass")[:2 * units].decode("utf-16-le", "surrogatepass")


#: What JavaScript's ``String.prototype.trim`` removes (WhiteSpace and LineTerminator): Python's
#: ``str.strip()`` also removes U+001C..U+001F and U+0085, and keeps U+FEFF.
_JS_SPACE = "\t\n\v\f\r \xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"


def js_blank(text: str) -> bool:
    """``text.trim().length === 0`` in JavaScript, the test by which pi-ai drops an empty text or
    thinking block (``api/transform-messages.js:83``; ``api/anthropic-messages.js:838``, ``:866``,
    ``:882``, ``:899-900``; ``api/openai-completions.js:842``, ``:850``).

    Example:
        >>> js_blank(" \\n\\ufeff"), js_blank("\\x1f"), js_blank("\\x85")
        (True, False, False)
    """
    return not text.strip(_JS_SPACE)


def clean_id(text: str) -> str:
    """JavaScript's ``text.replace(/[^a-zA-Z0-9_-]/g, "_")``: per UTF-16 unit, so astral gives ``__``."""
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_-") else "_" * (1 + (ord(ch) > 0xFFFF))
                   for ch in text)


def sanitize_surrogates(text: str) -> str:
    """pi-ai ``sanitizeSurrogates``: drop unpaired UTF-16 surrogates; a text without any is
    returned as it is (the same object: a huge tool result is not copied), found at C speed."""
    return _LONE_SURROGATE.sub("", text) if has_surrogate(text) else text


def _js_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        obj[key] = value  # a repeated key keeps its first position and takes the last value
    index_keys = [k for k in obj if _ARRAY_INDEX.match(k) and int(k) < 2**32 - 1]
    if not index_keys:
        return obj
    # JavaScript enumerates array-index keys first, ascending, then the rest in insertion order.
    ordered = {k: obj[k] for k in sorted(index_keys, key=int)}
    ordered.update((k, v) for k, v in obj.items() if k not in ordered)
    return ordered


def _js_int(text: str) -> int | float:
    value = int(text)
    return value if abs(value) <= 2**53 else float(text)


def js_parse(text: str) -> Any:
    """``JSON.parse(text)`` as a JavaScript runtime sees it (key order, number precision; the
    ``NaN``, ``Infinity`` and ``-Infinity`` Python's parser accepts are refused, as JavaScript's).

    Raises:
        ValueError: the text is not JSON.
    """
    return json.loads(text, object_pairs_hook=_js_object, parse_int=_js_int, parse_constant=refuse_constant)


def js_truthy(value: Any) -> bool:
    """JavaScript's truthiness of a parsed JSON or YAML value: every object and array is true;
    ``0``, ``NaN``, ``""``, ``false`` and ``null`` are false.

    Example:
        >>> [js_truthy(v) for v in ({}, [], 0, float("nan"), "", None, "0")]
        [True, True, False, False, False, False, True]
    """
    if value is None or isinstance(value, (bool, int, float, str)):
        return bool(value) and not (isinstance(value, float) and math.isnan(value))
    return True
