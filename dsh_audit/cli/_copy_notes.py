"""Discovery's "one session in two files" notes, said once for every session of a kind when there
are several (``selected_logs``, ``index``): a fleet of copies gives one note, not one a session."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

__all__ = ["grouped_notes"]

#: Discovery's note of a session whose files differ, each read (``copy_notes(listed=...)``,
#: log/_copies.py), in the words ``sessions`` says it.
_LISTED = re.compile(r"session .+ is in \d+ files, each listed: .+", re.DOTALL)


def grouped_notes(notes: Iterable[str], *, listed: bool = True) -> list[str]:
    """``notes`` with discovery's "one session in two files" notes of one kind (the same lines, or
    one holding the other's and more) said once, in the place of the first, when there are several:
    how many sessions, the first one's two files as an example, and how to see the others' (no
    option lists them: a PATH of their own). One such note, and every other note, stays as it is;
    but without ``listed``, discovery's "session ID is in N files, each listed" notes are left out
    (``sessions`` reads every log's header and says them itself, of every file it lists).

    Example:
        >>> notes = [f"one session in two files under r/{n}/: read home/{n}.jsonl, not logs/{n}.jsonl (the same lines)"
        ...          for n in "ab"]
        >>> for note in grouped_notes(["x", *notes]):
        ...     print(note)
        x
        2 sessions found in two files each (the same lines): each read once, from the file DSH reads; e.g. under r/a/: read home/a.jsonl, not logs/a.jsonl (the others alike; the folder holding one session's two files as PATH names them)
    """
    from ..log import COPY_NOTE  # discovery's note for one file left out (log/_copies.py)

    matched = [(note, COPY_NOTE.fullmatch(note)) for note in notes if listed or not _LISTED.fullmatch(note)]
    kinds: dict[str, list[re.Match[str]]] = {}
    for _note, found in matched:
        if found is not None:
            kinds.setdefault(found["why"], []).append(found)
    grouped: list[str] = []
    for note, found in matched:
        alike = kinds.get(found["why"], []) if found is not None else []
        if len(alike) < 2:
            grouped.append(note)
        elif alike[0].string == note:
            first = alike[0]
            where = f"under {first['shared']}{os.sep}: " if first["shared"] else ""
            sessions = len({found["read"] for found in alike})
            head = f"{len(alike)} sessions found in two files each" if sessions == len(alike) else \
                f"{sessions} session(s) found in {sessions + len(alike)} files"
            grouped.append(f"{head} ({first['why']}): each read once, from "
                           f"the file DSH reads; e.g. {where}read {first['read']}, not {first['copy']} (the "
                           "others alike; the folder holding one session's two files as PATH names them)")
    return grouped
