"""JSON output for ``--json``: one compact object per line, or pretty for ``show``."""

from __future__ import annotations

import json
import re
from typing import Any

from ..jsjson import stringify

__all__ = ["dumps_line", "dumps_pretty"]

_LONE = re.compile("[\ud800-\udfff]")


def dumps_line(value: Any) -> str:
    """Compact JSON (``JSON.stringify`` spelling: raw UTF-8, lone surrogates escaped)."""
    return stringify(value)


def dumps_pretty(value: Any) -> str:
    """Indented JSON for people; lone surrogates are written as escapes so output stays UTF-8."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    return _LONE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
