"""The words every command says one session's copies in (:func:`copy_notes`): which file of a
session was read, which were left out and why, and the sessions whose files differ, each read
(``each listed``). :mod:`~dsh_audit.log._copies` decides which files those are; this module only
says it, the same way for discovery, a watch and the index.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import NamedTuple, TypeVar

__all__ = ["EVENTS", "LONGER", "MORE_EVENTS", "SAME", "Copy", "copy_notes", "through"]

SAME = "the same lines"
LONGER = "the other's lines and more"
#: Other lines, the same events: one session written with packed chunk rows and without (issue 15).
EVENTS = "the same events"
#: Other lines, the first events of the other's: an earlier export of a log written with packed
#: chunk rows, or without (review 41).
MORE_EVENTS = "the other's events and more"
_P = TypeVar("_P", str, Path)
#: One file left out: (the file read instead, the copy, :data:`SAME`, :data:`LONGER`,
#: :data:`EVENTS` or :data:`MORE_EVENTS`).
Copy = tuple[_P, _P, str]
#: What each reason says of a copy, as bits: it holds fewer (1), its lines are other (2).
_BITS = {SAME: 0, LONGER: 1, EVENTS: 2, MORE_EVENTS: 3}
_BY_BITS = {bits: why for why, bits in _BITS.items()}


class _Said(NamedTuple):
    """One session's note (:func:`copy_notes`), and what a note of several sessions takes of it:
    how many files the session is in, the reasons of its copies, the folder its files share (``""``: none
    said), the first file read and its first copy as the note names them."""

    files: int
    whys: tuple[str, ...]
    shared: str
    read: str
    copy: str
    text: str


def copy_notes(left: Sequence[Copy[_P]], *, files: int | None = None,
               listed: Mapping[str, Sequence[_P]] | None = None) -> list[str]:
    """The notes for the files left out, one per session: ``one session in N files [under
    SHARED/]: read READ, not COPY, COPY (WHY)[, not COPY (WHY)]`` (the copies of one reason
    together, each as the file read holds it: a copy of a copy that was itself left out for a
    longer file holds fewer lines than the file read; ``two files`` for two). Without ``files``
    (discovery), a session is the file read and its copies, or, for each session of ``listed``
    (its id: its files, each read, as :func:`~._copies.without_copies` gives them), those files and their
    copies, each file read its clause (``; read ...``); the notes of several sessions with copies
    left out for the same reasons are said once (:func:`_said_once`). With ``files`` (how many files
    the session is in: a caller that compares the files of one session), one note for all.
    Then, for each session of ``listed``, ``session ID is in N files, each listed: FILE, FILE``:
    the note ``sessions`` says of a session whose files differ, said by every command that reads
    them (counted twice). Every command says one session's copies in these words (fuzz round 23:
    one note per copy left out, "read A, not B" beside "read C, not A", and a watch's note again
    as each copy's id came).

    Example:
        >>> copy_notes([("r/a.jsonl", "r/b.jsonl", SAME), ("r/a.jsonl", "r/c.jsonl", LONGER)])
        ["one session in 3 files under r/: read a.jsonl, not b.jsonl (the same lines), not c.jsonl (the other's lines and more)"]
        >>> copy_notes([], listed={"session-x": ["a/session.jsonl", "b/x.jsonl"]})
        ['session session-x is in 2 files, each listed: a/session.jsonl, b/x.jsonl']
    """
    each: list[str] = [f"session {session} is in {len(paths)} files, each listed: "
                        f"{', '.join(os.fspath(path) for path in paths)}" for session, paths in (listed or {}).items()]
    if not left:
        return each
    final: dict[str, tuple[str, str]] = {}  # copy -> (the file read in the end, why as that file holds it)
    for read, copy, why in reversed(left):  # a file read at one step is left out at a later one
        at, more = final.get(os.fspath(read), (os.fspath(read), SAME))
        final[os.fspath(copy)] = (at, through(why, more))
    clauses: dict[str, dict[str, list[str]]] = {}  # each file read in the end: its copies by why
    for _read, copy, _why in left:
        at, why = final[os.fspath(copy)]
        clauses.setdefault(at, {}).setdefault(why, []).append(os.fspath(copy))
    clauses = {at: dict(sorted(whys.items(), key=lambda item: _why_order(item[0]))) for at, whys in clauses.items()}
    if files is not None:
        return [_said(files, list(clauses.items())).text, *each]
    home = {os.fspath(path): session for session, paths in (listed or {}).items() for path in paths}
    sessions: dict[tuple[bool, str], list[str]] = {}  # (listed, its id or the file read): the files read
    for at in clauses:
        sessions.setdefault((at in home, home.get(at, at)), []).append(at)
    said: list[_Said] = []
    for (by_id, key), reads in sessions.items():
        left_out = sum(len(copies) for read in reads for copies in clauses[read].values())
        said.append(_said((len((listed or {})[key]) if by_id else 1) + left_out, [(read, clauses[read]) for read in reads]))
    return [*_said_once(said), *each]


def _said(files: int, clauses: list[tuple[str, dict[str, list[str]]]]) -> _Said:
    """``one session in FILES [under SHARED/]: read R, not C, C (WHY)[, not ...][; read ...]`` of
    ``files`` (how many files the session is in): every path whole, the folder they all share
    said once (a DSH home's path and an export's beside it share all but their last few parts)."""
    named = [*(read for read, _ in clauses), *(copy for _, whys in clauses for copies in whys.values() for copy in copies)]
    try:
        shared = os.path.commonpath([os.path.dirname(name) for name in named])
    except ValueError:  # absolute and relative paths: nothing to say once
        shared = ""
    if shared in (os.curdir, os.sep):
        shared = ""

    def short(name: str) -> str:
        return os.path.relpath(name, shared) if shared else name

    text = "; ".join(f"read {short(read)}, " + ", ".join(f"not {', '.join(map(short, copies))} ({why})"
                                                         for why, copies in whys.items()) for read, whys in clauses)
    where = f" under {shared}{os.sep}" if shared else ""
    kinds = {why for _, whys in clauses for why in whys}
    first, whys = clauses[0]
    return _Said(files, tuple(sorted(kinds, key=_why_order)), shared, short(first),
                 short(next(iter(whys.values()))[0]), f"one session in {'two files' if files == 2 else f'{files} files'}"
                                                      f"{where}: {text}")


def through(why: str, more: str) -> str:
    """Why a copy left out for ``why`` is left out for the file read in the end, the file it was
    left out for being left out itself for ``more``: it holds fewer than that file when either
    step says so, and other lines when either does (:data:`_BITS`: a partial copy of an export of
    the same events holds :data:`MORE_EVENTS`); of another reason (a watch's), the last step's
    unless that says the same lines.

    Example:
        >>> through(LONGER, EVENTS), through(SAME, EVENTS), through(EVENTS, SAME)
        ("the other's events and more", 'the same events', 'the same events')
    """
    if why in _BITS and more in _BITS:
        return _BY_BITS[_BITS[why] | _BITS[more]]
    return why if more == SAME else more


def _why_order(why: str) -> tuple[int, str]:
    """The order a note says the reasons of copies in: :data:`SAME`, :data:`LONGER`,
    :data:`EVENTS`, :data:`MORE_EVENTS`, then others; whatever order the copies were found in (a
    watch compares them in two steps: fuzz round 24)."""
    return _BITS.get(why, len(_BITS)), why


def _said_once(said: list[_Said]) -> list[str]:
    """The notes of ``said``, those of several sessions whose copies were left out for the same
    reasons said once, in the place of the first: how many sessions in how many files, the first
    one's file read and a copy it skipped as an example, in one plain sentence (session 41: it
    ended with a parenthesis on how to list the others). A fleet of copies gives one note, not one
    a session."""
    kinds: dict[tuple[str, ...], list[_Said]] = {}
    for one in said:
        kinds.setdefault(one.whys, []).append(one)
    notes: list[str] = []
    for one in said:
        alike = kinds[one.whys]
        if len(alike) < 2:
            notes.append(one.text)
        elif alike[0] is one:
            head = f"{len(alike)} sessions found in two files each" if all(each.files == 2 for each in alike) else \
                f"{len(alike)} sessions found in {sum(each.files for each in alike)} files"
            where = f"under {one.shared}{os.sep}: " if one.shared else ""
            notes.append(f"{head} ({', or '.join(one.whys)}): each read once, from the file DSH reads; e.g. {where}"
                         f"read {one.read}, skipped {one.copy}")
    return notes
