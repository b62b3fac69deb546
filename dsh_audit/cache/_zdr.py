"""The organization's OpenAI Zero Data Retention status as the nearest ``pyproject.toml`` states it
(:func:`pyproject_zero_data_retention`).
"""

from __future__ import annotations

import json
import os
from typing import Any

from .._pyproject import checked_tool_table, find_pyproject, key_line, table_parts
from ..errors import UsageError

__all__ = ["pyproject_zero_data_retention"]

#: The table and key of ``pyproject.toml`` that state the organization's OpenAI Zero Data Retention.
_ZDR_NAME, ZDR_KEY = "tool.dsh-audit.cache", "openai-zero-data-retention"
ZDR_TABLE = f"[{_ZDR_NAME}]"


def pyproject_zero_data_retention(search_from: str | os.PathLike[str] | None = None) -> bool | None:
    """The organization's OpenAI Zero Data Retention status as the nearest ``pyproject.toml``
    (searched from ``search_from``, default the current folder; the search stops at the first one
    found) states it: ``openai-zero-data-retention = true|false`` in ``[tool.dsh-audit.cache]``;
    None when there is no such file, table or key.

    Raises:
        UsageError: the file cannot be read or is not TOML (worded as the ``pyproject.toml`` it
            is, as every command words it), the key is not a boolean, or ``[tool.dsh-audit]``
            holds a table or key no command reads (a misspelt
            ``openai-zero-data-retenton``, or ``[tool.dsh_audit]`` itself:
            :func:`~dsh_audit._pyproject.checked_tool_table`, worded as ``check``'s policy words it);
            the message names the file and the key.

    Example:
        >>> pyproject_zero_data_retention(search_from="/") in (None, True, False)
        True
    """
    candidate = find_pyproject(search_from)
    if candidate is None:
        return None
    path = str(candidate)
    table = checked_tool_table(path)  # a misspelt table or key would be ignored in silence
    cache = table.get("cache") if table is not None else None
    if cache is None:
        return None
    value = cache.get(ZDR_KEY)
    if value is None or isinstance(value, bool):
        return value
    raise UsageError(f"{ZDR_TABLE} {ZDR_KEY} must be true or false, not {_shown(value)}", path=path,
                     hint=f"write {ZDR_KEY} = true or false under {ZDR_TABLE}",
                     line=key_line(path, table_parts(_ZDR_NAME), ZDR_KEY, value))


def _shown(value: Any) -> str:
    """A TOML value, briefly and on one line (its text is the user's own file, never a log's)."""
    text = json.dumps(value, ensure_ascii=True, default=str)
    return text if len(text) <= 40 else text[:37] + "..."
