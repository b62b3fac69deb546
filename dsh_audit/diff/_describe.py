"""The one-line wording of a difference: where it is (``message 5 (tool result for call_3)``), read
from the roles and names of the bodies, and what the rest of its path is.
"""

from __future__ import annotations

from typing import Any

from ._model import Part, format_path

__all__ = ["Describer"]

class Describer:
    """Turns a path into the one-line wording of a summary, reading roles and names from the bodies."""

    def __init__(self, expected: Any, actual: Any) -> None:
        self.expected, self.actual = expected, actual

    def _element(self, key: str, index: int, side: Any) -> Any:
        items = side.get(key) if isinstance(side, dict) else None
        return items[index] if isinstance(items, list) and 0 <= index < len(items) else None

    def where(self, parts: list[Part], *, actual_side: bool = False) -> tuple[str, list[Part]]:
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

    def line(self, parts: list[Part], text: str, *, actual_side: bool = False) -> str:
        where, rest = self.where(parts, actual_side=actual_side)
        field = format_path(rest) if rest else ""
        return f"{where}: {field} {text}" if field else f"{where}: {text}"
