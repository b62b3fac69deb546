"""Typed access to parsed JSON values, where the project's ``Any`` from JSON meets typed code."""

from __future__ import annotations

from typing import Any

__all__ = ["as_object"]


def as_object(value: Any) -> dict[str, Any]:
    """``value`` itself when it is a JSON object, else a new empty dict.

    For reading optional members of a payload whose shape the log does not guarantee: a
    non-object reads as having no members. The result is the input (not a copy); never mutate it.
    """
    return value if isinstance(value, dict) else {}
