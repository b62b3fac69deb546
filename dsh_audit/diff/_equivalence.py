"""Why two bodies of one JSON value differ byte for byte: key order, whitespace outside strings,
number spelling and string escaping, each with the paths where it happens.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ._describe import Describer
from ._model import Difference, Part, format_path
from ._structure import key_order

__all__ = ["equivalence"]

_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]|\s+|[^\s{}\[\]:,"]+', re.S)


def _raw_tree(text: str) -> tuple[Any, list[tuple[int, str]]]:
    """Parse JSON text keeping each leaf's spelling; also return (token index, whitespace) runs."""
    tokens: list[str] = []
    spaces: list[tuple[int, str]] = []
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if token.isspace():
            spaces.append((len(tokens), token))
        else:
            tokens.append(token)
    position = 0

    def value() -> Any:
        nonlocal position
        token = tokens[position]
        position += 1
        if token in ("{", "["):
            items: list[Any] = []
            closing = "}" if token == "{" else "]"
            while tokens[position] != closing:
                if token == "{":
                    key = tokens[position]
                    position += 2
                    items.append((key, value()))
                else:
                    items.append(value())
                if tokens[position] == ",":
                    position += 1
            position += 1
            return (token, items)
        return token

    return value(), spaces


def _spelling(describe: Describer, parts: list[Part], old: Any, new: Any) -> list[Difference]:
    """Leaves and keys spelled differently in two raw trees of JS-equal values."""
    found: list[Difference] = []
    if isinstance(old, tuple) and isinstance(new, tuple):
        if old[0] == "[":
            for index, (a, b) in enumerate(zip(old[1], new[1])):
                found.extend(_spelling(describe, parts + [index], a, b))
            return found
        theirs = {json.loads(key): (key, value) for key, value in new[1]}
        for key, value in old[1]:
            name = json.loads(key)
            other_key, other = theirs.get(name, (key, None))
            if other_key != key:
                found.append(Difference(format_path(parts + [name]), "string escaping",
                                        describe.line(parts + [name], "key escaped differently in the capture")))
            if other is not None:
                found.extend(_spelling(describe, parts + [name], value, other))
        return found
    if old != new:
        if old.startswith('"'):
            found.append(Difference(format_path(parts), "string escaping",
                                    describe.line(parts, "same string, escaped differently in the capture")))
        else:
            found.append(Difference(format_path(parts), "number spelling",
                                    describe.line(parts, f"same number spelled {old} expected, {new} in the capture")))
    return found


def equivalence(describe: Describer, expected: bytes, actual: bytes, old: Any, new: Any) -> list[Difference]:
    found = key_order(describe, [], old, new)
    old_raw, old_spaces = _raw_tree(expected.decode("utf-8"))
    new_raw, new_spaces = _raw_tree(actual.decode("utf-8"))
    if old_spaces != new_spaces:
        found.append(Difference("$", "whitespace", (
            f"body: whitespace outside strings differs ({sum(len(s) for _, s in old_spaces)} bytes expected, "
            f"{sum(len(s) for _, s in new_spaces)} in the capture)")))
    found.extend(_spelling(describe, [], old_raw, new_raw))
    return found
