"""Which agent wrote a log, told from its first records, and one entry point for any of them.

Formats are detected from content, never from names: a DSH log starts with a
``{"type":"session",...}`` header (or is a zstd frame); a Codex rollout line is
``{timestamp, type, payload}`` with ``type`` one of ``session_meta``, ``response_item``,
``turn_context``, ``event_msg``, ``compacted``; a Claude Code transcript record has a ``type``
such as ``user``, ``assistant``, ``system`` or ``summary`` next to ``sessionId``, ``uuid``,
``parentUuid`` or ``leafUuid``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import orjson

from ..errors import UnsupportedFormatError
from ._claude_code import import_claude_code
from ._codex import import_codex
from ._model import ImportedSession, open_input

__all__ = ["FORMATS", "detect", "load_foreign"]

#: Every format :func:`detect` can name; all but ``dsh`` have an importer.
FORMATS = ("claude-code", "codex", "dsh")

_IMPORTERS: dict[str, Callable[[str], ImportedSession]] = {"claude-code": import_claude_code, "codex": import_codex}
_CODEX_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg", "compacted"})
_CLAUDE_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot", "attachment",
                           "progress", "queue-operation", "custom-title"})
_CLAUDE_KEYS = ("sessionId", "uuid", "parentUuid", "leafUuid", "messageId")
_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _classify(record: dict[str, Any], *, first: bool) -> str | None:
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


def detect(path: str | os.PathLike[str], *, max_records: int = 32) -> str | None:
    """Name the format of a log file from its first records, or ``None`` when none fits.

    Args:
        path: the file.
        max_records: how many leading JSON lines to look at before giving up.

    Returns:
        ``"dsh"``, ``"claude-code"``, ``"codex"`` or ``None``.

    Raises:
        UnreadableError: the file cannot be opened.

    Example:
        >>> detect("tests/data/importers/codex/rollout-2026-01-05T10-00-00-x.jsonl")  # doctest: +SKIP
        'codex'
    """
    with open_input(path) as handle:
        if handle.read(4) == _ZSTD_MAGIC:
            return "dsh"
        handle.seek(0)
        seen = 0
        for raw in handle:
            if not raw.strip():
                continue
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue
            if isinstance(record, dict):
                found = _classify(record, first=seen == 0)
                if found is not None:
                    return found
            seen += 1
            if seen >= max_records:
                break
    return None


def load_foreign(path: str | os.PathLike[str], *, format: str | None = None) -> ImportedSession:
    """Read another agent's session log into an :class:`ImportedSession`.

    Args:
        path: a Claude Code transcript or a Codex rollout.
        format: skip detection and read as ``claude-code`` or ``codex``.

    Raises:
        UnsupportedFormatError: the file is a DSH log or no importer recognises it.
        UnreadableError: the file cannot be opened.

    Example:
        >>> session = load_foreign("~/.codex/sessions/2026/01/05/rollout-x.jsonl")  # doctest: +SKIP
        >>> session.format, len(session.requests)  # doctest: +SKIP
        ('codex', 4)
    """
    name = os.fspath(path)
    chosen = format or detect(name)
    importer = _IMPORTERS.get(chosen or "")
    if importer is None:
        what = "a DSH session log" if chosen == "dsh" else "not a log format dsh-audit knows"
        raise UnsupportedFormatError(f"{what}; importers read {', '.join(sorted(_IMPORTERS))}", path=name,
                                     hint="read DSH logs with dsh_audit.load; pass format= to force an importer")
    return importer(name)
