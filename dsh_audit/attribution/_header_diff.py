"""Field-by-field difference of two request headers, classified by cache effect (spec §9.7).

Prompt-affecting: ``provider`` and ``model`` (a new cache domain), ``reasoningEffort`` (the
thinking toggle and effort are part of what the provider renders; the spec calls it "ambiguous —
provider-template dependent", and provider-cache-rules.md §1 infers "prompt-affecting", so it is
treated as a break), ``system`` and ``tools``. Not prompt content: ``maxTokens``, ``temperature``,
``stop`` and the ``adapterDefaults`` markers (an explicit ↔ default flip with the same value sends
the same bytes), so a header change limited to them is cache-safe.
"""

from __future__ import annotations

import difflib
from typing import Any

from ..jsjson import stringify
from ._model import FieldChange

__all__ = ["diff_headers", "prompt_segment", "system_text", "PROMPT_CONFIG_FIELDS"]

PROMPT_CONFIG_FIELDS = ("provider", "model", "reasoningEffort")
_CONFIG_FIELDS = ("provider", "model", "reasoningEffort", "maxTokens", "temperature", "stop")
_MARKERS = ("reasoningEffort", "maxTokens")
_DIFF_LINES = 24
_LINE_CHARS = 200


def _same(a: Any, b: Any) -> bool:
    """JavaScript ``===`` on JSON values, as DSH's ``callConfigEquals`` compares config fields."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def _thinking(effort: Any) -> str | None:
    if effort is None:
        return None
    return "disabled" if effort == "off" else "enabled"


def _config_changes(a: dict[str, Any], b: dict[str, Any]) -> list[FieldChange]:
    out = []
    for name in _CONFIG_FIELDS:
        before, after = a.get(name), b.get(name)
        if name == "stop" and isinstance(before, list) and isinstance(after, list):
            equal = len(before) == len(after) and all(_same(x, y) for x, y in zip(before, after))
        else:
            equal = (before is None and after is None) or _same(before, after)
        if equal:
            continue
        detail = None
        if name == "reasoningEffort":
            detail = {"thinking": [_thinking(before), _thinking(after)]}
        out.append(FieldChange(name, before, after, name in PROMPT_CONFIG_FIELDS, detail))
    return out


def _marker_changes(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[FieldChange]:
    da, db = a or {}, b or {}
    out = []
    for marker in _MARKERS:
        before, after = da.get(marker) is True, db.get(marker) is True
        if before != after:
            out.append(FieldChange(f"adapterDefaults.{marker}", before, after, False))
    return out


def system_diff(before: str, after: str) -> list[str]:
    """A short unified line diff (no context lines), long lines and long diffs cut."""
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0))[2:]
    cut = [line if len(line) <= _LINE_CHARS else line[:_LINE_CHARS] + "…" for line in lines[:_DIFF_LINES]]
    if len(lines) > _DIFF_LINES:
        cut.append(f"… {len(lines) - _DIFF_LINES} more diff line(s)")
    return cut


def _name(tool: Any) -> Any:
    name = tool.get("name") if isinstance(tool, dict) else None
    return name if name is None or isinstance(name, (str, int, float)) else stringify(name)  # hashable


def _names(tools: Any) -> Any:
    if isinstance(tools, list):
        return [_name(t) for t in tools]
    return tools


def system_text(value: Any) -> str:
    """A header's system prompt as text (the log may hold any JSON value there)."""
    return value if isinstance(value, str) else "" if not value else stringify(value)


def _tools_change(a: Any, b: Any) -> FieldChange | None:
    if a is b:  # replay shares one tools list between the requests under one header
        return None
    ta, tb = a or [], b or []
    if not isinstance(ta, list) or not isinstance(tb, list):  # tokenised fixtures: "{{tools}}"; or damage
        return None if stringify(ta) == stringify(tb) else FieldChange("tools", ta, tb, True, {"tokenised": True})
    if len(ta) == len(tb) and all(stringify(x) == stringify(y) for x, y in zip(ta, tb)):
        return None
    na, nb = _names(ta), _names(tb)
    sa, sb = set(na), set(nb)
    common_a = [n for n in na if n in sb]
    common_b = [n for n in nb if n in sa]
    by_a = {_name(t): stringify(t) for t in ta if isinstance(t, dict)}
    by_b = {_name(t): stringify(t) for t in tb if isinstance(t, dict)}
    detail = {
        "added": [n for n in nb if n not in sa],
        "removed": [n for n in na if n not in sb],
        "reordered": common_a != common_b,
        "schema_changed": [n for n in common_b if by_a.get(n) != by_b.get(n)],
    }
    return FieldChange("tools", na, nb, True, detail)


def diff_headers(a: dict[str, Any] | None, b: dict[str, Any] | None) -> tuple[FieldChange, ...]:
    """Every field that differs between headers ``a`` and ``b``, in prompt order.

    Order: config fields, ``adapterDefaults`` markers, ``system``, ``tools``.

    Example:
        >>> [f.field for f in diff_headers({"config": {"provider": "p", "model": "a"}},
        ...                                {"config": {"provider": "p", "model": "b"}})]
        ['model']
    """
    a, b = a or {}, b or {}
    changes = _config_changes(a.get("config") or {}, b.get("config") or {})
    changes += _marker_changes(a.get("adapterDefaults"), b.get("adapterDefaults"))
    sys_a, sys_b = system_text(a.get("system")), system_text(b.get("system"))
    if sys_a != sys_b:
        changes.append(FieldChange("system", len(sys_a), len(sys_b), True, {"diff": system_diff(sys_a, sys_b)}))
    tools = _tools_change(a.get("tools"), b.get("tools"))
    if tools is not None:
        changes.append(tools)
    return tuple(changes)


def prompt_segment(changes: tuple[FieldChange, ...]) -> str | None:
    """The first prompt segment a header change touches: ``config``, ``system``, ``tools`` or None."""
    names = {c.field for c in changes if c.prompt_affecting}
    if names & set(PROMPT_CONFIG_FIELDS):
        return "config"
    for segment in ("system", "tools"):
        if segment in names:
            return segment
    return None
