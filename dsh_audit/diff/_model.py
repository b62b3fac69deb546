"""What a body comparison finds: the verdicts, each :class:`Difference` and its JSON path, the
:class:`BodyDiff`; and equality of two parsed values as JavaScript sees them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

__all__ = ["VERDICTS", "BodyDiff", "Difference", "Part", "format_path", "js_equal"]

VERDICTS = ("identical", "equivalent", "different")
_IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")
Part = str | int


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


def format_path(parts: list[Part] | tuple[Part, ...]) -> str:
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


def js_equal(x: Any, y: Any) -> bool:
    """Equality of two parsed JSON values as JavaScript values (numbers are doubles)."""
    if isinstance(x, bool) or isinstance(y, bool):
        return type(x) is type(y) and x == y
    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
        try:
            return float(x) == float(y)
        except OverflowError:
            return x == y
    if isinstance(x, dict) and isinstance(y, dict):
        return x.keys() == y.keys() and all(js_equal(x[k], y[k]) for k in x)
    if isinstance(x, list) and isinstance(y, list):
        return len(x) == len(y) and all(js_equal(a, b) for a, b in zip(x, y))
    return type(x) is type(y) and x == y
