"""How a finding's message shows a value read from the log: as JSON, as the log spells it.

A message quotes what the writer wrote, so it speaks JSON, never Python: ``null``, ``true``,
``"x"`` and ``{"a":1}``, not ``None``, ``True``, ``'x'`` and ``{'a': 1}``. A field that is not
there at all is not a value: the message says the field is missing (``event has no time``).
The text is JSON (control characters escaped), so log text never becomes terminal control, and
is cut short (with ``…``) so that a huge value does not flood the report.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ._json import json_type
from .jsjson import js_number, stringify

__all__ = ["MISSING", "Opaque", "cut", "member", "missing_or", "named", "shown", "typed"]

#: the longest value text a message shows before cutting it short
_LONGEST = 200


class _Missing:
    """The type of :data:`MISSING`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


#: what :func:`member` gives for a member that is not there (never a JSON value)
MISSING: Final = _Missing()


@dataclass(frozen=True, slots=True)
class Opaque:
    """A JSON array or object used where an id or index is expected, kept as its JSON text (so it
    can be a dict key and is shown as the log spells it, never equal to a string value)."""

    text: str


def cut(text: str, *, longest: int = _LONGEST) -> str:
    """``text`` whole when it has at most ``longest`` characters, else its first ``longest - 1``
    and the ``…`` that says it was cut: the one cut of every message quoting what a user or a log
    wrote (:func:`shown`, ``dsh_audit._pyproject.said``), so a 10 KB value is no error line.

    Example:
        >>> cut("abc", longest=3), cut("abcd", longest=3)
        ('abc', 'ab…')
    """
    return text if len(text) <= longest else text[:longest - 1] + "…"


def shown(value: Any) -> str:
    """``value`` (parsed from the log) as JSON text, cut short after 200 characters.

    Integers are shown exactly as written (JavaScript would round one beyond 2**53); a number
    beyond the double range, which the log's JSON parser reads as infinity, as JavaScript reads
    it (``Infinity``).

    Example:
        >>> [shown(v) for v in (None, True, "x", 1.0, 2**53 + 1, [1, "a"], {"k": None}, float("-inf"))]
        ['null', 'true', '"x"', '1', '9007199254740993', '[1,"a"]', '{"k":null}', '-Infinity']
        >>> shown("\\x1b[31m"), shown(Opaque('{"a":1}')), len(shown("y" * 300))
        ('"\\\\u001b[31m"', '{"a":1}', 200)
    """
    if value is MISSING:
        return "(missing)"
    if isinstance(value, Opaque):
        text = value.text
    elif isinstance(value, bool) or value is None or isinstance(value, str):
        text = stringify(value)
    elif isinstance(value, int):
        text = str(value)
    elif isinstance(value, float):
        text = ("Infinity" if value > 0 else "-Infinity") if math.isinf(value) else js_number(value)
    else:
        try:
            text = stringify(value)
        except (TypeError, ValueError, RecursionError):  # not a parsed JSON value: never a crash
            text = f"<{type(value).__name__}>"
    return cut(text)


def typed(value: Any) -> str:
    """A JSON value where one of another type belongs, its type named and the value shown: the one
    wording of a warning or refusal that says what type a field is (``createdAt is a string
    "17"``), an importer's and a DSH header's alike.

    Example:
        >>> typed(5), typed([1]), typed(None), typed(True), typed({"a": 1})
        ('a number 5', 'an array [1]', 'null', 'a boolean true', 'an object {"a":1}')
    """
    if value is None:
        return "null"
    kind = json_type(value)
    return f"{'an' if kind[0] in 'ao' else 'a'} {kind} {shown(value)}"


def member(record: Any, key: str) -> Any:
    """Member ``key`` of ``record`` when it is an object holding it, else :data:`MISSING`."""
    return record[key] if isinstance(record, Mapping) and key in record else MISSING


def named(what: str, value: Any) -> str:
    """``turn 3``; what stands instead of a number in an untrusted field: ``no turn`` (missing),
    ``turn null``, ``turn "3"``.

    Example:
        >>> named("turn", 3), named("turn", MISSING), named("turn", None), named("turn", "3")
        ('turn 3', 'no turn', 'turn null', 'turn "3"')
    """
    if value is MISSING:
        return f"no {what}"
    return f"{what} {shown(value)}"


def missing_or(record: Any, key: str, complaint: str, *, owner: str, prefix: str = "") -> str:
    """``{owner} has no {key}`` when ``record`` lacks member ``key``, else
    ``{prefix}{key} {value as JSON} {complaint}``.

    Example:
        >>> missing_or({}, "time", "is not a safe integer", owner="event")
        'event has no time'
        >>> missing_or({"time": None}, "time", "is not a safe integer", owner="event")
        'time null is not a safe integer'
        >>> missing_or({"id": True}, "id", "is not a string", owner="header", prefix="header ")
        'header id true is not a string'
    """
    value = member(record, key)
    if value is MISSING:
        return f"{owner} has no {key}"
    return f"{prefix}{key} {shown(value)} {complaint}"
