"""Field-by-field difference of two request headers, classified by cache effect (spec §9.7).

Prompt-affecting: ``provider`` and ``model`` (a new cache domain), ``reasoningEffort`` (the
thinking toggle and effort are part of what the provider renders; the spec calls it "ambiguous —
provider-template dependent", and provider-cache-rules.md §1 infers "prompt-affecting", so it is
treated as a break), ``system`` and ``tools``. Not prompt content: ``maxTokens``, ``temperature``,
``stop`` and the ``adapterDefaults`` markers (an explicit ↔ default flip with the same value sends
the same bytes), so a header change limited to them is cache-safe.

What an effort change does on the wire depends on the route. :func:`diff_headers` sees headers
alone and gives ``reasoningEffort`` the detail ``thinking`` (``enabled``, or ``disabled`` for
``off``), which is what DSH's native DeepSeek adapter sends. Attribution, which knows each
request's route, calls :func:`on_route` to mark a change on any other route: there the detail says
what the two rendered (or captured) bodies' reasoning parameters are (:func:`wire_reasoning`), or
that they were not rendered (reasoning on or off as DSH asks), never DeepSeek's ``thinking``.
pi-ai 0.82.1 spells an effort per API and model: Anthropic Messages sends budget thinking
(``{"type":"enabled","budget_tokens":N}``) or, for a model whose compat ``forceAdaptiveThinking`` is
set (the 4.6 models), ``{"type":"adaptive"}`` plus ``output_config.effort``
(``dist/api/anthropic-messages.js`` ``streamSimple`` and the thinking block of its params); OpenAI
Chat Completions sends ``reasoning_effort`` or a compat dialect's own keys
(``dist/api/openai-completions.js``); OpenAI Responses ``reasoning.effort`` with ``include``
(``dist/api/openai-responses.js``).
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Sequence
from typing import Any

from ..jsjson import stringify
from ._model import FieldChange

__all__ = ["diff_headers", "on_route", "prompt_segment", "system_text", "wire_reasoning", "PROMPT_CONFIG_FIELDS",
           "REASONING_KEYS"]

PROMPT_CONFIG_FIELDS = ("provider", "model", "reasoningEffort")
_CONFIG_FIELDS = ("provider", "model", "reasoningEffort", "maxTokens", "temperature", "stop")
_MARKERS = ("reasoningEffort", "maxTokens")
_DIFF_LINES = 24
_LINE_CHARS = 200
#: The top-level body keys by which a route sends reasoning: pi-ai's Anthropic Messages thinking
#: block (``thinking``, ``output_config``), its Chat Completions dialects (``reasoning_effort``,
#: ``thinking``, ``enable_thinking``, ``chat_template_kwargs``, ``reasoning``) and Responses
#: (``reasoning``, ``include``); DeepSeek's own (``thinking``, ``reasoning_effort``).
REASONING_KEYS = frozenset({"thinking", "output_config", "reasoning_effort", "reasoning", "enable_thinking",
                            "chat_template_kwargs", "include"})


def _same(a: Any, b: Any) -> bool:
    """JavaScript ``===`` on JSON values, as DSH's ``callConfigEquals`` compares config fields."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and a == b


def _thinking(effort: Any) -> str | None:
    """DeepSeek's ``thinking.type`` for an effort (DSH's native adapter); other routes: see :func:`on_route`."""
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
    if a is b:  # replay shares one header between the requests it governs: nothing can differ
        return ()
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


def _member_wise(a: dict[str, Any], b: dict[str, Any], key: str) -> bool:
    """Whether the changed reasoning value ``key`` is told member by member: both objects with the
    same ``type`` (or none), or one absent and the other an object without ``type``. A tagged
    object whose tag changes (``thinking`` enabled → adaptive) is shown whole."""
    before, after = a.get(key), b.get(key)
    if isinstance(before, dict) and isinstance(after, dict):
        return stringify(before.get("type")) == stringify(after.get("type"))
    one = after if key not in a else before if key not in b else None
    return isinstance(one, dict) and "type" not in one


def _wire_change(path: str, a: dict[str, Any], b: dict[str, Any], key: str) -> dict[str, Any]:
    """``{"path", "before", "after"}`` of ``key`` in objects ``a`` and ``b``, a side left out where it is absent."""
    out: dict[str, Any] = {"path": path}
    if key in a:
        out["before"] = a[key]
    if key in b:
        out["after"] = b[key]
    return out


def _differs(a: dict[str, Any], b: dict[str, Any], key: str) -> bool:
    return (key in a) != (key in b) or stringify(a.get(key)) != stringify(b.get(key))


def wire_reasoning(prev_body: bytes, cur_body: bytes) -> list[dict[str, Any]] | None:
    """The reasoning parameters (:data:`REASONING_KEYS`) that differ between two wire bodies, in
    the current body's key order: ``{"path", "before", "after"}``, a side left out where the body
    has no such key. None when either body is not a JSON object.

    Example:
        >>> for change in wire_reasoning(b'{"thinking":{"type":"enabled","budget_tokens":16384}}',
        ...                              b'{"thinking":{"type":"adaptive"},"output_config":{"effort":"max"}}'):
        ...     print(change)
        {'path': 'thinking', 'before': {'type': 'enabled', 'budget_tokens': 16384}, 'after': {'type': 'adaptive'}}
        {'path': 'output_config.effort', 'after': 'max'}
    """
    try:
        a, b = json.loads(prev_body), json.loads(cur_body)
    except (ValueError, RecursionError):  # a body nested past the parser: nothing to compare
        return None
    if not isinstance(a, dict) or not isinstance(b, dict):
        return None
    out = []
    for key in [*b, *(k for k in a if k not in b)]:
        if key not in REASONING_KEYS or not _differs(a, b, key):
            continue
        if not _member_wise(a, b, key):
            out.append(_wire_change(key, a, b, key))
            continue
        ma, mb = a.get(key, {}), b.get(key, {})
        out.extend(_wire_change(f"{key}.{name}", ma, mb, name)
                   for name in [*mb, *(n for n in ma if n not in mb)] if _differs(ma, mb, name))
    return out


def on_route(changes: Sequence[FieldChange], routes: tuple[str | None, str | None],
             bodies: tuple[bytes, bytes] | None) -> tuple[FieldChange, ...]:
    """``changes`` with the ``reasoningEffort`` detail made true to the two requests' routes.

    Both on the native DeepSeek route (``deepseek``): unchanged, ``thinking`` is what is sent.
    Otherwise DeepSeek's ``thinking`` does not apply: the detail is ``route`` (the current
    request's adapter, None when the log does not tell) and, when both bodies are at hand,
    ``wire`` (:func:`wire_reasoning`: what the route sent), else ``reasoning``, ``on`` or ``off``
    as DSH asks (None: not set), as `explain` says it.

    Example:
        >>> [c] = diff_headers({"config": {"reasoningEffort": "high"}}, {"config": {"reasoningEffort": "off"}})
        >>> on_route([c], ("anthropic", "anthropic"), None)[0].detail
        {'route': 'anthropic', 'reasoning': ['on', 'off']}
    """
    if routes == ("deepseek", "deepseek"):
        return tuple(changes)
    out = []
    for change in changes:
        if change.field == "reasoningEffort" and change.detail is not None and "route" not in change.detail:
            wire = wire_reasoning(*bodies) if bodies is not None else None
            states = [{"enabled": "on", "disabled": "off"}.get(state) for state in change.detail["thinking"]]
            detail = {"route": routes[1], **({"reasoning": states} if wire is None else {"wire": wire})}
            change = dataclasses.replace(change, detail=detail)
        out.append(change)
    return tuple(out)
