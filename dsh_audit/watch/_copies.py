"""Which file of one session a watch follows when the session is present as several files: the
files the other commands read (:func:`~dsh_audit.log.discover`), and of files discovery does not
compare (their names say other sessions: two session folders of a home holding one session) the
one that holds the other's lines, compared line by line as discovery compares copies.
"""

from __future__ import annotations

import os
from collections.abc import Container
from pathlib import Path

from ..errors import DshAuditError
from ..log import discover, holds, in_layout

__all__ = ["differs_note", "one_each"]


def one_each(group: list[str], *, followed: Container[str] = ()) -> tuple[list[str], list[str]] | None:
    """Of the files of one session (in the order discovery lists them), those the other commands
    read (:func:`discover`, which compares them line by line) and its notes saying which file was
    read instead of which; None when one cannot be looked at now (decided at a later look). Files
    discovery does not compare, their names saying other sessions (two session folders of a home
    holding one session: a log replaced by a copy of another), are compared too (:func:`_by_lines`):
    no request is shown twice."""
    if len(group) == 1:
        return group, []
    notes: list[str] = []
    try:
        kept = {str(p) for p in discover(group, notes=notes, copies=True)}
    except DshAuditError:
        return None
    return _by_lines([p for p in group if p in kept], notes, followed), notes


#: The most files of one session compared line by line, as discovery compares at most so many:
#: more are not copies of one session (fixtures sharing an id).
_MAX_COPIES = 4


def _by_lines(kept: list[str], notes: list[str], followed: Container[str]) -> list[str]:
    """``kept`` (files of one session) with each session read once, as discovery compares copies:
    of two with the same lines the one followed (else the one where DSH keeps it, else the first),
    of two where one holds the other's lines and more the longer; a note for each file left out."""
    if not 1 < len(kept) <= _MAX_COPIES:
        return kept
    chosen: list[str] = []
    dropped: set[str] = set()
    for path in kept:
        for at, other in enumerate(chosen):
            relation = holds(Path(other), Path(path))
            if relation is None:
                continue
            if relation == -1 or (relation == 0 and _rank(path, followed) > _rank(other, followed)):
                chosen[at], path, other = path, other, path
            dropped.add(path)
            notes.append(_two_files(other, path, "the same lines" if relation == 0 else "the other's lines and more"))
            break
        else:
            chosen.append(path)
    return [p for p in kept if p not in dropped]


def _rank(path: str, followed: Container[str]) -> tuple[bool, bool]:
    return path in followed, in_layout(Path(path))


def _two_files(read: str, copy: str, why: str) -> str:
    """``one session in two files ...: read READ, not COPY (WHY)``: both paths whole, the folder
    they share said once, as discovery's notes say them."""
    try:
        shared = os.path.commonpath([os.path.dirname(read), os.path.dirname(copy)])
    except ValueError:  # one absolute, one relative: nothing to say once
        shared = ""
    if shared not in ("", os.curdir, os.sep):
        prefix = f"under {shared}{os.sep}: "
        read, copy = os.path.relpath(read, shared), os.path.relpath(copy, shared)
    else:
        prefix = ""
    return f"one session in two files {prefix}read {read}, not {copy} ({why})"


def differs_note(read: str, copy: str) -> str:
    """The note for a copy left out that stopped holding only the lines of the file read (it grew
    by other lines: garbage, another continuation): both paths whole, the folder they share said
    once, as discovery's notes say them."""
    return _two_files(read, copy, "it held the other's lines and now differs from them: it is not followed, "
                                  "so no request is shown twice")
