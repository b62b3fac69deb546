"""Comparing two request bodies: a byte verdict, then a structural diff with JSON paths.

Verdicts:

- ``identical``: the same bytes.
- ``equivalent``: different bytes, the same JSON value as JavaScript sees it (numbers compare as
  doubles, so ``1.0`` equals ``1``; ``true`` never equals ``1``). The reasons are named:
  ``key order``, ``whitespace``, ``number spelling``, ``string escaping``, each with the paths
  where it happens. Equivalent bodies still differ byte for byte, so they do not share a
  provider's prefix cache past the first differing byte.
- ``different``: a different JSON value (or a body that is not JSON).

Structure: arrays are aligned by content (``difflib`` over each element's ``JSON.stringify``),
so a removed message is one ``removed`` difference, not a shift of every later message, and an
element found on both sides at other places is ``moved``. The aligned element pairs are compared
with deepdiff. deepdiff ignores object key order, so key order is checked separately and
reported as ``key order`` differences too.

Example:
    >>> diff_bodies(b'{"a":1}', b'{"a":1.0}').equivalence
    ('number spelling',)
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from typing import Any

from ._json import json_type
from .jsjson import stringify
from .log import parse_json

__all__ = ["BodyDiff", "Difference", "VERDICTS", "diff_bodies", "format_path"]

VERDICTS = ("identical", "equivalent", "different")
_EQUIVALENCE_ORDER = ("key order", "whitespace", "number spelling", "string escaping")
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]|\s+|[^\s{}\[\]:,"]+', re.S)
_IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
_MISSING = object()
_Part = str | int


@dataclass(frozen=True, slots=True)
class Difference:
    """One structural or spelling difference.

    Attributes:
        path: where, as a JSON path (``messages[5].content``, ``tools[3]``; ``$`` is the body).
        change: ``changed``, ``type``, ``added``, ``removed``, ``moved``, ``key order``,
            ``whitespace``, ``number spelling``, ``string escaping`` or ``not json``.
        summary: one line for people, e.g. ``message 5 (tool result for call_3): content 812
            chars shorter in the capture``.
    """

    path: str
    change: str
    summary: str


@dataclass(frozen=True, slots=True)
class BodyDiff:
    """The comparison of an expected (rebuilt) body with an actual (captured) one."""

    verdict: str
    expected_size: int
    actual_size: int
    first_offset: int | None
    expected_context: str | None
    actual_context: str | None
    equivalence: tuple[str, ...]
    differences: tuple[Difference, ...]

    @property
    def paths(self) -> list[str]:
        """Every difference's path, in report order."""
        return [d.path for d in self.differences]

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict, "expected_size": self.expected_size, "actual_size": self.actual_size,
            "first_offset": self.first_offset, "expected_context": self.expected_context,
            "actual_context": self.actual_context, "equivalence": list(self.equivalence),
            "paths": self.paths,
            "differences": [{"path": d.path, "change": d.change, "summary": d.summary} for d in self.differences],
        }


def format_path(parts: list[_Part] | tuple[_Part, ...]) -> str:
    """``["messages", 5, "content"]`` -> ``messages[5].content``; ``[]`` -> ``$``."""
    text = ""
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif _IDENT.match(part):
            text += f".{part}" if text else part
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return text or "$"


def _js_equal(x: Any, y: Any) -> bool:
    """Equality of two parsed JSON values as JavaScript values (numbers are doubles)."""
    if isinstance(x, bool) or isinstance(y, bool):
        return type(x) is type(y) and x == y
    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
        try:
            return float(x) == float(y)
        except OverflowError:
            return x == y
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(_js_equal(x[k], y[k]) for k in x)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(_js_equal(a, b) for a, b in zip(x, y))
    return type(x) is type(y) and x == y


class _Describer:
    """Turns a path into the one-line wording of a summary, reading roles and names from the bodies."""

    def __init__(self, expected: Any, actual: Any) -> None:
        self.expected, self.actual = expected, actual

    def _element(self, key: str, index: int, side: Any) -> Any:
        items = side.get(key) if isinstance(side, dict) else None
        return items[index] if isinstance(items, list) and 0 <= index < len(items) else None

    def where(self, parts: list[_Part], *, actual_side: bool = False) -> tuple[str, list[_Part]]:
        """(``message 5 (tool result for call_3)``, rest of the path) for a path."""
        if len(parts) >= 2 and isinstance(parts[1], int) and parts[0] in ("messages", "tools"):
            sides = (self.actual, self.expected) if actual_side else (self.expected, self.actual)
            item = next((x for x in (self._element(str(parts[0]), parts[1], s) for s in sides)
                         if isinstance(x, dict)), {})
            return self._describe(str(parts[0]), parts[1], item), parts[2:]
        return "body", parts

    @staticmethod
    def _describe(key: str, index: int, item: dict[str, Any]) -> str:
        if key == "tools":
            function = item.get("function") if isinstance(item.get("function"), dict) else item
            name = function.get("name") if isinstance(function, dict) else None
            return f"tool {index}" + (f" ({name})" if name else "")
        role = item.get("role")
        if role == "tool":
            return f"message {index} (tool result for {item.get('tool_call_id')})"
        if role == "system" and index == 0:
            return "message 0 (system prompt)"
        return f"message {index}" + (f" ({role})" if isinstance(role, str) else "")

    def line(self, parts: list[_Part], text: str, *, actual_side: bool = False) -> str:
        where, rest = self.where(parts, actual_side=actual_side)
        field = format_path(rest) if rest else ""
        return f"{where}: {field} {text}" if field else f"{where}: {text}"


def _short(value: Any) -> str:
    text = stringify(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _value_change(describe: _Describer, parts: list[_Part], old: Any, new: Any) -> Difference | None:
    path = format_path(parts)
    if _js_equal(old, new):
        return None
    if isinstance(old, str) and isinstance(new, str):
        delta = len(new) - len(old)
        if delta:
            text = f"{abs(delta)} chars {'longer' if delta > 0 else 'shorter'} in the capture"
        else:
            first = next(i for i, (a, b) in enumerate(zip(old, new)) if a != b)
            text = f"differs from char {first} on (same length)"
        return Difference(path, "changed", describe.line(parts, text))
    if json_type(old) != json_type(new):
        return Difference(path, "type", describe.line(
            parts, f"is {json_type(old)} {_short(old)} expected, {json_type(new)} {_short(new)} in the capture"))
    return Difference(path, "changed", describe.line(parts, f"is {_short(old)} expected, {_short(new)} in the capture"))


def _deep(describe: _Describer, prefix: list[_Part], old: Any, new: Any) -> list[Difference]:
    """deepdiff on one aligned pair, its paths prefixed."""
    from deepdiff import DeepDiff  # here, not at the top: loading deepdiff costs more than most diffs

    found: list[Difference] = []
    tree = DeepDiff(old, new, view="tree", verbose_level=2)
    for report, levels in sorted(tree.items()):
        for level in levels:
            parts = prefix + list(level.path(output_format="list"))
            path = format_path(parts)
            if report in ("dictionary_item_added", "iterable_item_added"):
                found.append(Difference(path, "added", describe.line(parts, "only in the capture", actual_side=True)))
            elif report in ("dictionary_item_removed", "iterable_item_removed"):
                found.append(Difference(path, "removed", describe.line(parts, "missing in the capture")))
            elif report in ("values_changed", "type_changes"):
                change = _value_change(describe, parts, level.t1, level.t2)
                if change is not None:
                    found.append(change)
            else:
                found.append(Difference(path, "changed", describe.line(parts, report.replace("_", " "))))
    return sorted(found, key=lambda d: d.path)


def _keys(items: list[Any]) -> list[str]:
    """Each element's ``JSON.stringify``: what arrays are aligned and compared by."""
    return [stringify(x) for x in items]


def _aligned(old: list[str], new: list[str]) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Align two arrays by their elements' :func:`_keys`: (pairs to compare, removed indexes, added indexes)."""
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    pairs: list[tuple[int, int]] = []
    removed: list[int] = []
    added: list[int] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            pairs.extend((i1 + k, j1 + k) for k in range(i2 - i1))
            continue
        common = min(i2 - i1, j2 - j1) if tag == "replace" else 0
        pairs.extend((i1 + k, j1 + k) for k in range(common))
        removed.extend(range(i1 + common, i2))
        added.extend(range(j1 + common, j2))
    return pairs, removed, added


def _walk(describe: _Describer, parts: list[_Part], old: Any, new: Any, *, top: bool) -> list[Difference]:
    if isinstance(old, dict) and isinstance(new, dict) and top:
        found: list[Difference] = []
        for key in old:
            if key not in new:
                found.append(Difference(format_path(parts + [key]), "removed",
                                        describe.line(parts + [key], "missing in the capture")))
            else:
                found.extend(_walk(describe, parts + [key], old[key], new[key], top=False))
        for key in new:
            if key not in old:
                found.append(Difference(format_path(parts + [key]), "added",
                                        describe.line(parts + [key], "only in the capture", actual_side=True)))
        return found
    if isinstance(old, list) and isinstance(new, list):
        return _walk_list(describe, parts, old, new)
    return _deep(describe, parts, old, new)


def _walk_list(describe: _Describer, parts: list[_Part], old: list[Any], new: list[Any]) -> list[Difference]:
    found: list[Difference] = []
    old_keys, new_keys = _keys(old), _keys(new)
    pairs, removed, added = _aligned(old_keys, new_keys)
    for i, j in pairs:
        if old_keys[i] != new_keys[j]:
            found.extend(_deep(describe, parts + [i], old[i], new[j]))
    unmatched = {j: new_keys[j] for j in added}
    for i in removed:
        target = next((j for j, k in unmatched.items() if k == old_keys[i]), None)
        if target is not None:
            del unmatched[target]
            moved_to = format_path(parts + [target])
            found.append(Difference(format_path(parts + [i]), "moved",
                                    describe.line(parts + [i], f"moved to {moved_to} in the capture")))
        else:
            found.append(Difference(format_path(parts + [i]), "removed",
                                    describe.line(parts + [i], "missing in the capture")))
    for j in unmatched:
        found.append(Difference(format_path(parts + [j]), "added",
                                describe.line(parts + [j], "only in the capture", actual_side=True)))
    return found


def _key_order(describe: _Describer, parts: list[_Part], old: Any, new: Any) -> list[Difference]:
    """Objects present on both sides whose shared keys come in another order."""
    found: list[Difference] = []
    if isinstance(old, dict) and isinstance(new, dict):
        ours = [k for k in old if k in new]
        theirs = [k for k in new if k in old]
        if ours != theirs:
            first = next(n for n, (a, b) in enumerate(zip(ours, theirs)) if a != b)
            found.append(Difference(format_path(parts), "key order", describe.line(
                parts, f"keys in another order in the capture ({ours[first]!r} expected where the "
                       f"capture has {theirs[first]!r})")))
        for key in ours:
            found.extend(_key_order(describe, parts + [key], old[key], new[key]))
    elif isinstance(old, list) and isinstance(new, list):
        for i, j in _aligned(_keys(old), _keys(new))[0]:
            found.extend(_key_order(describe, parts + [i], old[i], new[j]))
    return found


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


def _spelling(describe: _Describer, parts: list[_Part], old: Any, new: Any) -> list[Difference]:
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


def _equivalence(describe: _Describer, expected: bytes, actual: bytes, old: Any, new: Any) -> list[Difference]:
    found = _key_order(describe, [], old, new)
    old_raw, old_spaces = _raw_tree(expected.decode("utf-8"))
    new_raw, new_spaces = _raw_tree(actual.decode("utf-8"))
    if old_spaces != new_spaces:
        found.append(Difference("$", "whitespace", (
            f"body: whitespace outside strings differs ({sum(len(s) for _, s in old_spaces)} bytes expected, "
            f"{sum(len(s) for _, s in new_spaces)} in the capture)")))
    found.extend(_spelling(describe, [], old_raw, new_raw))
    return found


def _context(data: bytes, offset: int, width: int) -> str:
    return data[max(0, offset - width): offset + width].decode("utf-8", errors="backslashreplace")


def _first_difference(a: bytes, b: bytes, piece: int = 1 << 16) -> int:
    """The offset of the first byte at which ``a`` and ``b`` differ (the shorter one's length when it
    is a prefix of the other), compared a piece at a time at C speed (a byte at a time in Python, two
    16 MiB bodies took seconds)."""
    size = min(len(a), len(b))
    start = 0
    while start < size and a[start:start + piece] == b[start:start + piece]:
        start += piece
    return next((i for i in range(start, min(start + piece, size)) if a[i] != b[i]), size)


def diff_bodies(expected: bytes, actual: bytes, *, context: int = 24) -> BodyDiff:
    """Compare a rebuilt body with a captured one.

    Args:
        expected: the body dsh-audit rebuilt.
        actual: the body the capture holds.
        context: bytes of context each side of the first differing byte.

    Example:
        >>> result = diff_bodies(b'{"messages":[{"content":"abc"}]}', b'{"messages":[{"content":"ab"}]}')
        >>> result.verdict, result.first_offset, result.paths
        ('different', 27, ['messages[0].content'])
    """
    if expected == actual:
        return BodyDiff("identical", len(expected), len(actual), None, None, None, (), ())
    offset = _first_difference(expected, actual)
    contexts = (_context(expected, offset, context), _context(actual, offset, context))
    try:
        old = parse_json(expected)
    except (ValueError, UnicodeDecodeError):
        return BodyDiff("different", len(expected), len(actual), offset, *contexts, (),
                        (Difference("$", "not json", "body: the expected body is not JSON"),))
    try:
        new = parse_json(actual)
    except (ValueError, UnicodeDecodeError):
        return BodyDiff("different", len(expected), len(actual), offset, *contexts, (),
                        (Difference("$", "not json", "body: the captured body is not JSON"),))
    describe = _Describer(old, new)
    if _js_equal(old, new):
        found = _equivalence(describe, expected, actual, old, new)
        kinds = tuple(k for k in _EQUIVALENCE_ORDER if any(d.change == k for d in found))
        return BodyDiff("equivalent", len(expected), len(actual), offset, *contexts, kinds, tuple(found))
    found = _walk(describe, [], old, new, top=True) + _key_order(describe, [], old, new)
    return BodyDiff("different", len(expected), len(actual), offset, *contexts, (), tuple(found))
