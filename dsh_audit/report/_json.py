"""JSON output for ``--json``: one compact object per line, or pretty for ``show``.

Both are valid, lossless JSON whose text can reach a terminal or a log viewer: besides the C0
controls JSON itself escapes, every character a terminal or an editor would act on rather than
show (DEL, C1 controls such as the 8-bit CSI U+009B, bidi overrides and isolates, zero-width and
other format characters, line and paragraph separators, lone surrogates) is written as
``\\uXXXX`` (the same categories :func:`dsh_audit.report.terminal.terminal_text` escapes).
"""

from __future__ import annotations

import math
import re
from typing import Any

import orjson

from ..jsjson import js_number, stringify

__all__ = ["ACTIVE_TEXT", "dumps_line", "dumps_line_with", "dumps_pretty"]

#: DEL and every non-ASCII code point of Unicode categories Cc, Cf, Cs, Zl, Zp (Python 3.11's
#: database; tests/test_hostile_text.py checks the class against ``unicodedata``).
ACTIVE_TEXT = re.compile(
    "[\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]")


def _escape(match: re.Match[str]) -> str:
    return "".join(f"\\u{unit:04x}" for unit in _units(ord(match.group(0))))


def _units(code: int) -> tuple[int, ...]:
    """``code`` as UTF-16 code units (a JSON escape of an astral character is a surrogate pair)."""
    if code <= 0xFFFF:
        return (code,)
    code -= 0x10000
    return 0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)


def _inert(text: str) -> str:
    return text if text.isascii() and "\x7f" not in text else ACTIVE_TEXT.sub(_escape, text)


def dumps_line(value: Any) -> str:
    """Compact JSON (``JSON.stringify`` spelling: raw UTF-8), active characters escaped."""
    return _inert(stringify(_whole_numbers(value)))


def dumps_line_with(value: dict[str, Any], key: str, text: str) -> str:
    """:func:`dumps_line` of ``value`` with ``value[key]`` (``key`` one of its keys) written as
    ``text``, its own :func:`dumps_line` made once by the caller: a large value many lines share
    (the header of each request of a step) is not written again for each.

    The same text :func:`dumps_line` writes: both write ``JSON.stringify``'s spelling of every
    value, whichever of :func:`~dsh_audit.jsjson.stringify`'s ways writes it, and escape each
    active character alone, so a member's text does not depend on its neighbours.

    Example:
        >>> shared = dumps_line({"ttl": 300.0})
        >>> dumps_line_with({"a": 1, "h": None, "b": [2.5]}, "h", shared)
        '{"a":1,"h":{"ttl":300},"b":[2.5]}'
    """
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    part = before
    for name, item in value.items():
        if name == key:
            part = after
        else:
            part[name] = item
    head = dumps_line(before)[:-1]  # "{" and the members before, if any
    tail = dumps_line(after)[1:]  # the members after, if any, and "}"
    return "".join((head, "," if before else "", _inert(_scalar(key)), ":", text, "," if after else "", tail))


_SAFE = 2**53
_NESTING = 32  # levels of objects and arrays looked into; a value nested deeper is left as it is


def _whole_numbers(value: Any) -> Any:
    """``value``, or a copy of it with each float that holds a whole number (a TTL of ``300.0``)
    as that ``int``, when that cannot change what :func:`~dsh_audit.jsjson.stringify` writes.

    ``JSON.stringify`` spells both alike (``300``); orjson, which ``stringify`` writes with first,
    spells the float ``300.0``, so a line holding one is written a value at a time in Python
    instead (a report line holds several). Only an object with such a float among its own members
    (a report row: a TTL, a cost of 0) is looked into, so a line without one costs nothing more;
    the copy is made only when every float in it is one orjson spells as ``JSON.stringify`` does
    once whole floats are integers (at least ``1e-4`` in size), so the two ways of writing it agree;
    anything else is left as it is.

    Example:
        >>> _whole_numbers({"ttl": 300.0, "gap": 1.5, "n": [2.0, True, -0.0]})
        {'ttl': 300, 'gap': 1.5, 'n': [2, True, 0]}
        >>> _whole_numbers({"ttl": 300.0, "cost": 9.15e-6})
        {'ttl': 300.0, 'cost': 9.15e-06}
    """
    if type(value) is not dict:
        return value
    for item in value.values():
        if type(item) is float and item.is_integer():
            converted = _whole(value, _NESTING)
            return value if converted is _UNSAFE else converted
    return value


_UNSAFE = object()


def _whole(value: Any, depth: int) -> Any:
    """:func:`_whole_numbers`' copy of ``value``; :data:`_UNSAFE` when it holds a float orjson
    may spell otherwise than ``JSON.stringify``, or is nested deeper than ``depth``."""
    kind = type(value)
    if kind is float:
        if value.is_integer():
            return int(value) if -_SAFE <= value <= _SAFE else _UNSAFE
        return value if 1e-4 <= abs(value) < 1e16 else _UNSAFE  # NaN compares false: unsafe
    if kind is dict or kind is list or kind is tuple:
        if not depth:
            return _UNSAFE
        items = value.values() if kind is dict else value
        out = []
        for item in items:
            made = _whole(item, depth - 1)
            if made is _UNSAFE:
                return _UNSAFE
            out.append(made)
        return dict(zip(value, out)) if kind is dict else out
    return value


def dumps_pretty(value: Any) -> str:
    """Indented JSON for people (two spaces a level, ``": "`` after a key, as ``json.dumps(value,
    indent=2)`` lays it out), active characters escaped, so it stays inert and UTF-8. Strings and
    numbers are written as :func:`dumps_line` and ``JSON.stringify`` write them (numbers by
    :func:`~dsh_audit.jsjson.js_number`: ``0.000023808``, ``300``, ``1e-7``; a number past the double
    range, such as a log's ``1e400``, is ``null``), so every ``--json`` spells a value one way.

    Example:
        >>> print(dumps_pretty({"ttl": 300.0, "cost": 2.3808e-05, "n": [], "s": "\\u202e"}))
        {
          "ttl": 300,
          "cost": 0.000023808,
          "n": [],
          "s": "\\u202e"
        }
    """
    out: list[str] = []
    _pretty(value, out, "\n")
    return _inert("".join(out))


def _pretty(value: Any, out: list[str], newline: str) -> None:
    """Append ``value`` indented, ``newline`` the line break and indent of its own level."""
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        inner = newline + "  "
        for i, (key, item) in enumerate(value.items()):
            out += ("{" if not i else ",", inner, _scalar(key if type(key) is str else _key(key)), ": ")
            _pretty(item, out, inner)
        out += (newline, "}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        inner = newline + "  "
        for i, item in enumerate(value):
            out += ("[" if not i else ",", inner)
            _pretty(item, out, inner)
        out += (newline, "]")
    else:
        out.append(_scalar(value))


#: A string shorter than this is written by orjson directly: it asks for at most 1 MiB, which is
#: never checked against a memory limit (:func:`~dsh_audit.jsjson.fits_in_memory`).
_SHORT = 1 << 16


def _scalar(value: Any) -> str:
    """A string, number or literal as :func:`~dsh_audit.jsjson.stringify` writes it, the common
    kinds without its checks: a short string as orjson writes it (it escapes what
    ``JSON.stringify`` escapes, and refuses a lone surrogate, which ``stringify`` escapes), a
    number by :func:`~dsh_audit.jsjson.js_number`."""
    kind = type(value)
    if kind is str and len(value) < _SHORT:
        try:
            return orjson.dumps(value).decode("utf-8")
        except orjson.JSONEncodeError:
            return stringify(value)
    if kind is int or kind is float:
        return js_number(value)
    if value is None or value is True or value is False:
        return "null" if value is None else "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return stringify(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _key(key: Any) -> str:
    """An object key as JSON text holds it: a number, ``true``, ``false`` or ``null`` as
    ``JSON.stringify`` writes it (``String(key)``)."""
    if key is None or isinstance(key, (bool, int, float)):
        return stringify(key)
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def finite(value: Any) -> Any:
    """``value`` with every infinite or NaN float replaced by None (the ``null`` JSON.stringify writes)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value
