"""Discovery's notes as a listing command says them (``selected_logs``, ``index``): the notes of
one session's copies come from discovery already said once for many sessions
(:func:`~dsh_audit.log.copy_notes`, the words of every command, ``check`` and ``watch`` too); only
its "each listed" notes are left to ``sessions``, which says them itself."""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["grouped_notes"]

#: Discovery's note of a session whose files differ, each read (``copy_notes(listed=...)``,
#: log/_copies.py), in the words ``sessions`` says it.
_LISTED = re.compile(r"session .+ is in \d+ files, each listed: .+", re.DOTALL)


def grouped_notes(notes: Iterable[str], *, listed: bool = True) -> list[str]:
    """``notes`` as they are (discovery says the copies of many sessions in one note: a fleet of
    copies gives one note, not one a session); but without ``listed``, discovery's "session ID is
    in N files, each listed" notes are left out (``sessions`` reads every log's header and says
    them itself, of every file it lists).

    Example:
        >>> grouped_notes(["x", "session s is in 2 files, each listed: a.jsonl, b.jsonl"], listed=False)
        ['x']
    """
    return [note for note in notes if listed or not _LISTED.fullmatch(note)]
