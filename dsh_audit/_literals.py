"""Numbers no double holds exactly, as the file wrote them: :func:`dsh_audit.log.parse_json` reads
``1e400`` and a 401-digit integer as infinity, and an integer past 2**64 as the nearest double (as
``JSON.parse`` does), which an error must quote neither as ``inf`` nor as another number. Where
such a number is damaged input to describe (a captured usage's count), the text is parsed again
(:func:`literal_json`) into :class:`Written` numbers that keep their text (``written``, what
:mod:`dsh_audit.cache` describes them by). Only values read for a description hold them: orjson
serialises no float subclass.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ._json import refuse_constant

__all__ = ["Written", "holds_float", "inexact", "literal_json"]


#: The integers a double holds exactly: up to 2**53.
_EXACT = float(2**53)


class Written(float):
    """A JSON number no double holds exactly (infinity, or past 2**53), with its text (``written``)."""

    written: str

    def __new__(cls, text: str) -> Written:
        number = super().__new__(cls, text)
        number.written = text
        return number


def _integer(text: str) -> int | float:
    """An integer literal as :func:`dsh_audit.log.parse_json` reads it (an int up to 64 bits), its
    text kept when it reads one as a double."""
    if len(text) <= 20 and -(2**63) <= (value := int(text)) < 2**64:
        return value
    return Written(text)


def _decimal(text: str) -> float:
    number = float(text)
    return number if abs(number) < _EXACT else Written(text)


def literal_json(raw: bytes | str) -> Any:
    """``raw`` (JSON that :func:`dsh_audit.log.parse_json` read already) parsed again, each number
    it reads as a double no double holds exactly a :class:`Written`.

    Example:
        >>> value = literal_json(b'{"a": 1e400, "b": 12}')
        >>> value["a"].written, value["b"]
        ('1e400', 12)
    """
    text = raw.decode("utf-8", "surrogatepass") if isinstance(raw, bytes) else raw
    return json.loads(text, parse_int=_integer, parse_float=_decimal, parse_constant=refuse_constant)


def inexact(value: Any) -> bool:
    """Whether a parsed value holds anywhere a double no double holds exactly (infinity, a NaN, past
    2**53: what :func:`literal_json` keeps the text of)."""
    return holds_float(value, lambda item: not abs(item) < _EXACT)  # a NaN too


def holds_float(value: Any, test: Callable[[float], bool]) -> bool:
    """Whether a parsed JSON (or TOML) value holds anywhere a float that passes ``test``: in a loop,
    not recursion (the parsers read documents nested deeper than Python's stack).

    Example:
        >>> holds_float({"a": [1, {"b": 2.5}]}, lambda f: f > 2), holds_float([1, "2.5"], lambda f: True)
        (True, False)
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and test(item):
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False
