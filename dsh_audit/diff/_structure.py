"""How two different JSON values differ: arrays aligned by content (``difflib`` over each
element's ``JSON.stringify``: a removed message is one ``removed`` difference, an element found on
both sides at other places is ``moved``), aligned pairs compared with deepdiff, and the objects whose
shared keys come in another order (deepdiff ignores key order).
"""

from __future__ import annotations

import difflib
from typing import Any

from .._json import json_type
from ..jsjson import stringify
from ._describe import Describer
from ._model import Difference, Part, format_path, js_equal

__all__ = ["key_order", "walk"]

def _short(value: Any) -> str:
    text = stringify(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _value_change(describe: Describer, parts: list[Part], old: Any, new: Any) -> Difference | None:
    path = format_path(parts)
    if js_equal(old, new):
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


def _deep(describe: Describer, prefix: list[Part], old: Any, new: Any) -> list[Difference]:
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


def walk(describe: Describer, parts: list[Part], old: Any, new: Any, *, top: bool) -> list[Difference]:
    if isinstance(old, dict) and isinstance(new, dict) and top:
        found: list[Difference] = []
        for key in old:
            if key not in new:
                found.append(Difference(format_path(parts + [key]), "removed",
                                        describe.line(parts + [key], "missing in the capture")))
            else:
                found.extend(walk(describe, parts + [key], old[key], new[key], top=False))
        for key in new:
            if key not in old:
                found.append(Difference(format_path(parts + [key]), "added",
                                        describe.line(parts + [key], "only in the capture", actual_side=True)))
        return found
    if isinstance(old, list) and isinstance(new, list):
        return _walk_list(describe, parts, old, new)
    return _deep(describe, parts, old, new)


def _walk_list(describe: Describer, parts: list[Part], old: list[Any], new: list[Any]) -> list[Difference]:
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


def key_order(describe: Describer, parts: list[Part], old: Any, new: Any) -> list[Difference]:
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
            found.extend(key_order(describe, parts + [key], old[key], new[key]))
    elif isinstance(old, list) and isinstance(new, list):
        for i, j in _aligned(_keys(old), _keys(new))[0]:
            found.extend(key_order(describe, parts + [i], old[i], new[j]))
    return found
