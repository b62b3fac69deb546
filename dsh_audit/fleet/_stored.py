"""How the fleet index stores text, and gives it back: a module of its own, so that ``stats``,
which shows stored paths and ids as they were given, imports it without the storing half of
:mod:`dsh_audit.fleet._store` (issue 11: start-up cost).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["shown", "storable", "unstored"]


def storable(value: Any) -> Any:
    """``value`` as SQLite can hold it: text holding a lone surrogate (valid in a JSON log, and DSH
    writes what it is given), which SQLite text cannot hold (it must be UTF-8), becomes its
    ``\\udXXX`` escape, its backslashes doubled first; so does text that holds such an escape as
    it is (``\\udcff``, 7 characters), so that no two texts are stored alike (a folder named with
    the byte 0xff, ``\\udcff`` to Python, and one named ``\\udcff``: two logs, two rows), and
    :func:`unstored` gives each back. Any other text (every UTF-8 path) is stored as it is. An
    integer past SQLite's 64 bits (a logged count up to 2**64 - 1, or a sum of such counts)
    becomes the nearest double, the number JavaScript holds for it.

    Example:
        >>> storable(2**63 - 1), storable(2**64 - 1), storable("a\\\\b\\ud800"), storable("a\\\\ud800")
        (9223372036854775807, 1.8446744073709552e+19, 'a\\\\\\\\b\\\\ud800', 'a\\\\\\\\ud800')
    """
    if isinstance(value, str) and not value.isascii():  # ASCII text is UTF-8 already
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.replace("\\", "\\\\").encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, str) and "\\u" in value and _ESCAPED.search(value):  # "in": the quick test
        return value.replace("\\", "\\\\")
    if isinstance(value, int) and not -(2**63) <= value < 2**63:
        return float(value)
    return value


#: The escape :func:`storable` writes for a lone surrogate; a stored text that holds it was escaped.
_ESCAPED = re.compile(r"\\u(d[89a-f][0-9a-f]{2})")
#: An escape of a stored text that :func:`storable` escaped: a doubled backslash, or a lone surrogate's.
_UNESCAPE = re.compile(r"\\(\\|u(d[89a-f][0-9a-f]{2}))")


def unstored(stored: str) -> str:
    """The text :func:`storable` stored as ``stored``.

    Example:
        >>> unstored(storable("a\\\\b\\ud800")) == "a\\\\b\\ud800", unstored("a\\\\\\\\ud800"), unstored("C:\\\\x")
        (True, 'a\\\\ud800', 'C:\\\\x')
    """
    if not _ESCAPED.search(stored):
        return stored
    return _UNESCAPE.sub(lambda m: "\\" if m.group(2) is None else chr(int(m.group(2), 16)), stored)


def shown(value: Any) -> Any:
    """A value of an index row as it was given, for a table or JSON to show: stored text
    :func:`unstored` (a folder named with the byte 0xff is ``\\udcff`` to Python again, which a JSON
    writer escapes; a backslash one backslash), anything else (a number, None) as it is.

    Example:
        >>> shown(storable("bs\\\\q\\udcff")) == "bs\\\\q\\udcff", shown(None), shown(3)
        (True, None, 3)
    """
    return unstored(value) if isinstance(value, str) else value
