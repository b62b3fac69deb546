"""What every importer keeps while it reads one file, and the :class:`ImportedSession` it ends with.

Each importer (``_claude_code``, ``_codex``) reads its format its own way; they share where the
reading goes: the file's path, its damaged lines (``warnings``), what the format cannot tell
(``notes``, each once, in the order first said) and the digest of the messages of each request.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..replay import Request
from ._model import ImportedSession, MessageDigest, damaged_usage_note, line_warning

__all__ = ["ImporterBase"]


class ImporterBase:
    """The state every importer's reading shares, for one file of one format.

    Attributes:
        path: the file read.
        warnings: damaged lines skipped while reading (``file:line: why``).
        notes: what this log cannot tell, each once (a dict keeps the order they were first said).
        digest: the ``messages_sha256`` of each request's messages (:class:`MessageDigest`).
    """

    format = ""  # the format's name, as :attr:`ImportedSession.format` gives it

    def __init__(self, path: str, notes: Iterable[str]) -> None:
        self.path = path
        self.warnings: list[str] = []
        self.notes: dict[str, None] = dict.fromkeys(notes)
        self.digest = MessageDigest()

    def warn(self, line: int, why: str) -> None:
        """Warn of line ``line`` of the file read (:func:`~dsh_audit.importers._model.line_warning`):
        the one way an importer adds a warning, so every one names the file and line alike."""
        self.warnings.append(line_warning(self.path, line, why))

    def usage(self, line: int, parsed: tuple[dict[str, Any] | None, tuple[str, ...]]) -> dict[str, Any] | None:
        """The usage of a response read at ``line`` (``parsed``: the usage and its damaged fields);
        a usage with damaged counts is not logged, said in a warning naming the file and line."""
        usage, damaged = parsed
        if damaged:
            self.warn(line, damaged_usage_note(damaged))
        return usage

    def session(self, session_id: str, requests: tuple[Request, ...], *, cwd: str | None,
                created: float | None, title: str | None = None) -> ImportedSession:
        """The session read: ``created``, the first record's time in seconds, as milliseconds;
        ``title``, the one the log gives it (None: none)."""
        return ImportedSession(format=self.format, session_id=session_id, requests=requests,
                               notes=tuple(self.notes), path=self.path, warnings=tuple(self.warnings), cwd=cwd,
                               created_at=None if created is None else int(created * 1000), title=title)
