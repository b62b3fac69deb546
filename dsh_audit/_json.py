"""Typed access to parsed JSON values, where the project's ``Any`` from JSON meets typed code, and
the refusals every JSON reader of the project shares (``NaN``; nesting too deep for it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

__all__ = ["MAX_DEPTH", "NestingError", "as_object", "depth_exceeds", "json_objects", "json_type", "rebuild_json", "refuse_constant"]

#: Arrays and objects nested deeper than this in one JSON value are refused, as the DSH log reader
#: refuses them: ``JSON.parse`` reads them, the recursive code downstream (serialisers, differs) cannot.
MAX_DEPTH = 512


class NestingError(ValueError):
    """A JSON value nested deeper than :data:`MAX_DEPTH` levels: valid JSON dsh-audit cannot process."""


def refuse_constant(name: str) -> NoReturn:
    """The ``parse_constant`` of every :func:`json.loads` that reads JSON as ``JSON.parse`` does:
    ``NaN``, ``Infinity`` and ``-Infinity``, which Python's parser reads, are not JSON.

    Example:
        >>> import json
        >>> json.loads("[-Infinity]", parse_constant=refuse_constant)
        Traceback (most recent call last):
        ...
        ValueError: -Infinity is not JSON
    """
    raise ValueError(f"{name} is not JSON")


def as_object(value: Any) -> dict[str, Any]:
    """``value`` itself when it is a JSON object, else a new empty dict.

    For reading optional members of a payload whose shape the log does not guarantee: a
    non-object reads as having no members. The result is the input (not a copy); never mutate it.
    """
    return value if isinstance(value, dict) else {}


def json_objects(value: Any) -> list[Mapping[str, Any]]:
    """The objects among the elements of ``value`` when it is a JSON array, else none: a message's
    content blocks, where DSH's load checks only that ``content`` is an array.

    Example:
        >>> json_objects([{"type": "text"}, 5, None]), json_objects("text")
        ([{'type': 'text'}], [])
    """
    return [item for item in value if isinstance(item, Mapping)] if isinstance(value, list) else []


def json_type(value: Any) -> str:
    """The JSON type of a parsed value, as JavaScript names it (``null``, ``boolean``, ``number``,
    ``string``, ``array``, ``object``); another Python type by its own name.

    Example:
        >>> [json_type(v) for v in (None, True, 1.5, "x", [], {})]
        ['null', 'boolean', 'number', 'string', 'array', 'object']
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    names: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return names.get(type(value), type(value).__name__)


def rebuild_json(value: Any, *, drop_key: str | None = None, blank_from: int | None = None) -> Any:
    """A copy of the JSON value ``value`` without the object members named ``drop_key`` and with
    each string of ``blank_from`` characters or more written as ``""`` (a top-level string too).
    Walked with a stack, not recursion: a value nested as deep as the log reader allows (512
    levels) is no recursion error.

    Example:
        >>> rebuild_json({"a": [{"k": 1, "x": "long"}, "s"], "k": 2}, drop_key="k", blank_from=4)
        {'a': [{'x': ''}, 's']}
    """
    if isinstance(value, str):
        return "" if blank_from is not None and len(value) >= blank_from else value
    if not isinstance(value, (dict, list)):
        return value
    root: Any = {} if isinstance(value, dict) else []
    stack: list[tuple[Any, Any]] = [(value, root)]
    while stack:
        source, copy = stack.pop()
        into_object = copy.__class__ is dict
        pairs = source.items() if into_object else enumerate(source)
        for key, item in pairs:
            if into_object and key == drop_key:
                continue
            if isinstance(item, str):
                if blank_from is not None and len(item) >= blank_from:
                    item = ""
            elif isinstance(item, (dict, list)):
                child: Any = {} if isinstance(item, dict) else []
                stack.append((item, child))
                item = child
            if into_object:
                copy[key] = item
            else:
                copy.append(item)
    return root


def depth_exceeds(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether arrays and objects nest deeper than ``limit`` in a parsed JSON ``value``, an empty one
    counted too, as the parsers count it (in a loop: no recursion to overflow).

    Example:
        >>> depth_exceeds([[[]]], 2), depth_exceeds([[[]]], 3), depth_exceeds({"a": 1}, 1)
        (True, False, False)
    """
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False
