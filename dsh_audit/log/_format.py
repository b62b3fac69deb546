"""Which agent wrote a log, told from its first records: DSH, Claude Code or Codex.

Formats are detected from content, never from names: a DSH log starts with a
``{"type":"session",...}`` header (or is a zstd frame); a Codex rollout line is
``{timestamp, type, payload}`` with ``type`` one of ``session_meta``, ``response_item``,
``turn_context``, ``event_msg``, ``compacted``; a Claude Code transcript record has a ``type``
such as ``user``, ``assistant``, ``system`` or ``summary`` next to ``sessionId``, ``uuid``,
``parentUuid`` or ``leafUuid``. :mod:`dsh_audit.importers` reads the foreign ones.
"""

from __future__ import annotations

import os
from typing import Any

from ._outputs import open_regular
from ._json_line import parse_json

__all__ = ["classify_record", "detect_format"]

_CODEX_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg", "compacted"})
_CLAUDE_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot", "attachment",
                           "progress", "queue-operation", "custom-title"})
_CLAUDE_KEYS = ("sessionId", "uuid", "parentUuid", "leafUuid", "messageId")
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def classify_record(record: dict[str, Any], *, first: bool) -> str | None:
    """Name the format one decoded record belongs to, or ``None`` when none fits.

    Args:
        record: one JSON object line of a log.
        first: whether it is the file's first record (only a first record can be a DSH header).

    Returns:
        ``"dsh"``, ``"claude-code"``, ``"codex"`` or ``None``.

    Example:
        >>> classify_record({"type": "session", "id": "s1", "version": 4}, first=True)
        'dsh'
        >>> classify_record({"timestamp": "2026-01-05T10:00:00Z", "type": "event_msg", "payload": {}}, first=False)
        'codex'
    """
    kind = record.get("type")
    if not isinstance(kind, str):
        return None
    if first and kind == "session" and "id" in record:
        return "dsh"
    if kind in _CODEX_TYPES and "payload" in record and "timestamp" in record:
        return "codex"
    if kind in _CLAUDE_TYPES and any(key in record for key in _CLAUDE_KEYS):
        return "claude-code"
    return None


def detect_format(path: str | os.PathLike[str], *, max_records: int = 32) -> str | None:
    """Name the format of a log file from its first records, or ``None`` when none fits.

    Args:
        path: the file.
        max_records: how many leading JSON lines to look at before giving up.

    Returns:
        ``"dsh"``, ``"claude-code"``, ``"codex"`` or ``None``.

    Raises:
        UnreadableError: the file cannot be opened.

    Example:
        >>> detect_format("tests/data/importers/codex/rollout-2026-01-05T10-00-00-x.jsonl")  # doctest: +SKIP
        'codex'
    """
    name = os.fspath(path)
    with open_regular(name) as handle:
        if handle.read(4) == _ZSTD_MAGIC:
            return "dsh"
        handle.seek(0)
        seen = 0
        for raw in handle:
            if not raw.strip():
                continue
            try:
                record = parse_json(raw)  # as JSON.parse reads it: a lone surrogate escape is JSON
            except ValueError:  # not JSON, not UTF-8, nested too deeply
                continue
            if isinstance(record, dict):
                found = classify_record(record, first=seen == 0)
                if found is not None:
                    return found
            seen += 1
            if seen >= max_records:
                break
    return None
