"""The request header fold: DSH's canonical form and equality (spec §6.2)."""

from __future__ import annotations

import re
from typing import Any

from ..jsjson import stringify

__all__ = ["call_config_equals", "canonical_header", "header_equals", "unfoldable_field", "unfoldable_words"]

_STRICT_FIELDS = ("provider", "model", "reasoningEffort", "temperature", "maxTokens")


def canonical_header(header: dict[str, Any]) -> dict[str, Any]:
    """Rebuild a header as ``config, adapterDefaults?, system?, tools?`` (DSH ``canonicalHeader``).

    ``adapterDefaults`` is kept only when a marker is true; ``system`` and ``tools`` are kept only when
    JavaScript's ``.length > 0`` holds (:func:`_has_length`: an empty string or array, a number, a
    boolean, an object without a positive ``length`` are dropped); ``config`` passes through unchanged.

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
    if system is not None and _has_length(system):
        out["system"] = system
    tools = header.get("tools")
    if tools is not None and _has_length(tools):
        out["tools"] = tools
    return out


def unfoldable_field(header: dict[str, Any]) -> str | None:
    """``system`` or ``tools`` when the header holds it as null, else None.

    DSH's ``canonicalHeader`` reads ``.length`` of every present field (``!== undefined``): on null it
    throws a TypeError, so no request can be built from a prefix holding this header (DSH loads the log).
    :func:`canonical_header` drops the field instead; whoever builds a request asks this first.

    Example:
        >>> unfoldable_field({"config": {}, "system": "s", "tools": None}), unfoldable_field({"system": 0})
        ('tools', None)
    """
    return "system" if header.get("system", 0) is None else "tools" if header.get("tools", 0) is None else None


def unfoldable_words(field: str) -> str:
    """Why a header with ``field`` null builds no request, in the words the replay's refusal and
    validate's DSH227 share (:func:`unfoldable_field`)."""
    return (f"request/header has {field} null: DSH itself cannot build a request from this header (its "
            f"canonicalHeader reads {field}.length and throws)")


def _has_length(value: Any) -> bool:
    """JavaScript ``value.length > 0`` for a JSON value but null (which throws in DSH).

    A string or an array has a length; a number or a boolean has none (``undefined > 0`` is false);
    an object has its own ``length`` member, compared as JavaScript does (``{"length": "2"}`` is kept).

    Example:
        >>> [_has_length(v) for v in ("a", "", [0], [], 42, True, {}, {"length": 2}, {"length": "0x1"})]
        [True, False, True, False, False, False, False, True, True]
    """
    if isinstance(value, (str, list)):
        return len(value) > 0
    return isinstance(value, dict) and "length" in value and _js_positive(value["length"])


_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_DECIMAL = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)", re.ASCII)
_JS_RADIX = re.compile(r"0(?:[xX][0-9a-fA-F]+|[oO][0-7]+|[bB][01]+)", re.ASCII)


def _js_positive(value: Any) -> bool:
    """JavaScript ``value > 0`` for a JSON value: numbers as they are, null as 0, strings by
    StringToNumber, an array by its ``join(",")`` text, an object as "[object Object]" (NaN)."""
    if isinstance(value, (bool, int, float)):
        return value > 0
    if isinstance(value, list):  # two or more members join with a comma: never a number
        return len(value) == 1 and value[0] is not None and _js_positive(
            value[0] if not isinstance(value[0], bool) else "true")
    if not isinstance(value, str):
        return False
    text = value.strip(_JS_SPACE)
    if _JS_RADIX.fullmatch(text):
        return int(text[2:], {"x": 16, "o": 8, "b": 2}[text[1].lower()]) > 0
    if not _JS_DECIMAL.fullmatch(text):
        return False  # NaN, or "" (0)
    return float(text.replace("Infinity", "inf")) > 0


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
