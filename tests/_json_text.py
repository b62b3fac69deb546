"""Reading JSON that holds JSON: what a redaction test searches for surviving secrets."""

from __future__ import annotations

import json
from typing import Any


def all_strings(value: Any) -> list[str]:
    """Every string and key of ``value``, and those of JSON text inside a string, at any depth."""
    if isinstance(value, str):
        try:
            inner = json.loads(value)
        except ValueError:
            return [value]
        return [value, *all_strings(inner)]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *all_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in all_strings(v)]
    return []
