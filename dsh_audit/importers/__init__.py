"""Other agents' session logs mapped onto dsh-audit's request model (Claude Code, Codex CLI).

Teams running several agents get the same audit (``requests``, ``cache``, ``breaks``) on every
session: :func:`detect` names a log's format from its content, :func:`load_foreign` imports a
Claude Code transcript or a Codex rollout as an :class:`ImportedSession` of
:class:`dsh_audit.replay.Request` values (:func:`dsh_audit.session.open_session` opens a log of
any format this way). docs/importers.md lists each format's field mapping and what it cannot tell.

Example:
    >>> from dsh_audit.importers import load_foreign
    >>> session = load_foreign("~/.claude/projects/p/0b9c.jsonl")  # doctest: +SKIP
    >>> session.format, [r.header["config"]["model"] for r in session.requests][:1]  # doctest: +SKIP
    ('claude-code', ['claude-sonnet-4-5-20250929'])
"""

from ._claude_code import import_claude_code
from ._codex import import_codex
from ._detect import FORMATS, detect, load_foreign, no_importer, unrecorded
from ._model import ImportedSession
from ._span import record_span

__all__ = [
    "FORMATS",
    "ImportedSession",
    "detect",
    "import_claude_code",
    "import_codex",
    "load_foreign",
    "no_importer",
    "record_span",
    "unrecorded",
]
