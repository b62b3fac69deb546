"""One entry point for any agent's log: :func:`detect` names its format, :func:`load_foreign` imports it.

Detection is :func:`dsh_audit.log.detect_format` (content, never names), re-exported here as
:func:`detect`.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from ..errors import DamagedLogError, DshAuditError, UnsupportedFormatError
from ..log import detect_format as detect
from . import _claude_code, _codex
from ._claude_code import import_claude_code
from ._codex import import_codex
from ._model import ImportedSession

__all__ = ["FORMATS", "detect", "load_foreign", "no_importer", "unrecorded"]

#: Every format :func:`detect` can name; all but ``dsh`` have an importer.
FORMATS = ("claude-code", "codex", "dsh")

_IMPORTERS: dict[str, Callable[[str], ImportedSession]] = {"claude-code": import_claude_code, "codex": import_codex}
_UNRECORDED = {_claude_code.FORMAT: _claude_code.UNRECORDED, _codex.FORMAT: _codex.UNRECORDED}


def unrecorded(format: str) -> tuple[str, str] | None:
    """The agent that writes logs of ``format``, and what they do not record of the requests it
    sent; None for a format with no importer (``dsh``). A request imported from such a log holds
    the conversation, so ``render`` can write only what DSH would send for it, and says so.

    Example:
        >>> unrecorded("codex")[0], unrecorded("dsh")
        ('Codex', None)
    """
    return _UNRECORDED.get(format)


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


def no_importer(error: DshAuditError) -> DshAuditError:
    """The error to raise when a file's first line is no DSH session header (``error`` says why) and
    no importer recognised the file: a Codex rollout or Claude Code transcript whose every line is
    damaged, already named as such by the reader that sniffed it (:class:`~dsh_audit.errors.DamagedLogError`),
    kept as it is, never as a damaged DSH log; else ``error``, its hint saying also that no importer recognised the file.

    Example:
        >>> no_importer(DshAuditError("header line is not valid JSON", hint="this is not a DSH session log")).hint
        'this is not a DSH session log; nor is it a session the claude-code or codex importer recognises'
    """
    if isinstance(error, DamagedLogError):
        return error
    tried = f"a session the {' or '.join(sorted(_IMPORTERS))} importer recognises"
    error.hint = f"{error.hint}; nor is it {tried}" if error.hint else f"it is not {tried}"
    return error
