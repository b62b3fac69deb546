"""The request header fold: DSH's canonical form and equality (spec §6.2)."""

from __future__ import annotations

from typing import Any

from ..jsjson import stringify

__all__ = ["call_config_equals", "canonical_header", "header_equals"]

_STRICT_FIELDS = ("provider", "model", "reasoningEffort", "temperature", "maxTokens")


def canonical_header(header: dict[str, Any]) -> dict[str, Any]:
    """Rebuild a header as ``config, adapterDefaults?, system?, tools?`` (DSH ``canonicalHeader``).

    ``adapterDefaults`` is kept only when a marker is true; an empty ``system`` string and an empty
    ``tools`` array are dropped; ``config`` passes through unchanged.

    Example:
        >>> canonical_header({"tools": [], "system": "", "config": {"provider": "p", "model": "m"},
        ...                   "adapterDefaults": {}})
        {'config': {'provider': 'p', 'model': 'm'}}
    """
    out: dict[str, Any] = {"config": header.get("config")}
    defaults = header.get("adapterDefaults")
    if isinstance(defaults, dict) and any(v is True for v in defaults.values()):
        out["adapterDefaults"] = defaults
    system = header.get("system")
    if system is not None and system != "":
        out["system"] = system
    tools = header.get("tools")
    if tools is not None and not (isinstance(tools, list) and not tools):
        out["tools"] = tools
    return out


def _strict_equal(a: Any, b: Any) -> bool:
    # JavaScript ===: no bool/int confusion, 1 === 1.0.
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return type(a) is type(b) and a == b or (
        isinstance(a, (int, float)) and isinstance(b, (int, float)) and a == b
    )


def call_config_equals(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """DSH ``callConfigEquals``: strict fields with ===, ``stop`` element by element."""
    if any(not _strict_equal(a.get(f), b.get(f)) for f in _STRICT_FIELDS):
        return False
    sa, sb = a.get("stop"), b.get("stop")
    if sa is None or sb is None:
        return sa is None and sb is None
    if not isinstance(sa, list) or not isinstance(sb, list):
        # DSH's typed config always holds a list; on any other value its `.every` would throw.
        # A log can hold anything: equal only when it is the same value.
        return type(sa) is type(sb) and sa == sb
    return len(sa) == len(sb) and all(_strict_equal(x, y) for x, y in zip(sa, sb))


def header_equals(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """DSH ``headerEquals`` over two headers (canonical or not).

    Tools compare pairwise by ``JSON.stringify``, so key order inside a schema counts; an absent
    ``tools`` equals ``[]``; moving a value between explicit and adapter default is a change.
    """
    if a is None or b is None:
        return a is b
    if not call_config_equals(a.get("config") or {}, b.get("config") or {}):
        return False
    da, db = a.get("adapterDefaults") or {}, b.get("adapterDefaults") or {}
    for marker in ("reasoningEffort", "maxTokens"):
        if (da.get(marker) is True) != (db.get(marker) is True):
            return False
    if (a.get("system") or None) != (b.get("system") or None):
        return False
    ta, tb = a.get("tools") or [], b.get("tools") or []
    if isinstance(ta, str) or isinstance(tb, str):  # tokenised fixtures: "{{tools}}"
        return ta == tb
    return len(ta) == len(tb) and all(stringify(x) == stringify(y) for x, y in zip(ta, tb))
