"""How a message names some of many things: the first few, and how many more (a folder may hold
hundreds of logs, a note names a handful): one wording, written once, for every layer.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

__all__ = ["billed_model_text", "listed"]


def listed(items: Sequence[str], *, shown: int = 3) -> str:
    """The first ``shown`` of ``items``, comma-separated, then ``and K more`` for the rest (nothing
    more when all are shown); the caller quotes or formats each item first.

    Example:
        >>> listed(["a", "b", "c", "d", "e"]), listed(["a", "b"]), listed(["x.jsonl", "y.jsonl"], shown=1)
        ('a, b, c and 2 more', 'a, b', 'x.jsonl and 1 more')
    """
    more = len(items) - shown
    return ", ".join(items[:shown]) + (f" and {more} more" if more > 0 else "")


def billed_model_text(model: str, logged: Iterable[str]) -> str:
    """``model``, a model the price table bills, as a table shows it with the other names its
    requests ``logged`` (``usage --by model``, ``stats``' tables by model): ``also`` when some logged
    it, ``logged as`` when none did (an alias), so the cell stays short. Here, in a module of no layer, as ``stats`` (which must not import
    :mod:`dsh_audit.cache`: it reads no log), ``usage`` and the HTML report's totals name them alike.

    Example:
        >>> billed_model_text("claude-sonnet-4-5", ["claude-sonnet-4-5-20250929", "claude-sonnet-4-5"])
        'claude-sonnet-4-5 (also claude-sonnet-4-5-20250929)'
        >>> billed_model_text("deepseek-flash", ["deepseek-v4-flash"]), billed_model_text("x", ["x"])
        ('deepseek-flash (logged as deepseek-v4-flash)', 'x')
    """
    names = sorted(set(logged))
    others = [name for name in names if name != model]
    if not others:
        return model
    return f"{model} ({'also' if len(others) < len(names) else 'logged as'} {', '.join(others)})"
