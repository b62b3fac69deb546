"""JSON output for ``--json``: one compact object per line, or pretty for ``show``.

Both are valid, lossless JSON whose text can reach a terminal or a log viewer: besides the C0
controls JSON itself escapes, every character a terminal or an editor would act on rather than
show (C1 controls such as the 8-bit CSI U+009B, bidi overrides and isolates, zero-width and other
format characters, line and paragraph separators, lone surrogates) is written as ``\\uXXXX``
(the same categories :func:`dsh_audit.report.terminal.terminal_text` escapes).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ..jsjson import stringify

__all__ = ["dumps_line", "dumps_pretty"]

#: Every non-ASCII code point of Unicode categories Cc, Cf, Cs, Zl, Zp (Python 3.11's database;
#: tests/test_hostile_text.py checks the class against ``unicodedata``).
_ACTIVE = re.compile(
    "[\x80-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u206f\ud800-\udfff\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U00013438"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]")


def _escape(match: re.Match[str]) -> str:
    return "".join(f"\\u{unit:04x}" for unit in _units(ord(match.group(0))))


def _units(code: int) -> tuple[int, ...]:
    """``code`` as UTF-16 code units (a JSON escape of an astral character is a surrogate pair)."""
    if code <= 0xFFFF:
        return (code,)
    code -= 0x10000
    return 0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)


def _inert(text: str) -> str:
    return text if text.isascii() else _ACTIVE.sub(_escape, text)


def dumps_line(value: Any) -> str:
    """Compact JSON (``JSON.stringify`` spelling: raw UTF-8), active characters escaped."""
    return _inert(stringify(value))


def dumps_pretty(value: Any) -> str:
    """Indented JSON for people, active characters escaped, so it stays inert and UTF-8; a
    number past the double range (a log's ``1e400`` parses as infinity) is ``null``, as
    ``JSON.stringify`` and :func:`dumps_line` write it."""
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)
    except ValueError:
        text = json.dumps(finite(value), indent=2, ensure_ascii=False, allow_nan=False)
    return _inert(text)


def finite(value: Any) -> Any:
    """``value`` with every infinite or NaN float replaced by None (the ``null`` JSON.stringify writes)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(item) for item in value]
    return value
