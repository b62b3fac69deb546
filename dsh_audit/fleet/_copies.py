"""One session stored once: of two files holding one session id, the one the live commands read
(:func:`dsh_audit.log.discover`, by the one rule of copies, :func:`dsh_audit.log.without_copies`)
is kept in the index.
"""

from __future__ import annotations

import os
import sqlite3

from ..errors import DshAuditError
from ..log import MAX_COPIES, canonical_generation, discover, is_fixture_token
from ._rows import SessionRecord
from ._store import on_disk, storable

__all__ = ["one_session"]


def _read_by_live_commands(path: str, other: str) -> set[str]:
    """Which of two files holding one session id the live commands read (:func:`discover`, which
    compares copies by their lines, and one with packed chunk rows and one without by their
    events, prefers the file where DSH keeps it, and of a session folder's generations reads the
    highest): one of them, or both when neither holds the other's lines nor events (two
    sessions), or when either cannot be read now (its next run says why)."""
    folder = os.path.dirname(path)
    generations = folder == os.path.dirname(other) and all(
        canonical_generation(os.path.basename(name)) is not None for name in (path, other))
    try:  # a session folder's generations are told apart by DSH's choice of the folder's files
        found = {os.path.realpath(log) for log in discover([folder] if generations else [path, other])}
    except DshAuditError:
        return {path, other}
    return {name for name in (path, other) if os.path.realpath(name) in found} or {path, other}


def one_session(connection: sqlite3.Connection, record: SessionRecord,
                 given: set[str]) -> tuple[list[str], str | None]:
    """The stored logs that ``record`` (read in this run) replaces as the file of its session the
    live commands read, as stored; or the stored log that they read instead of ``record``'s file
    (``record`` is then not stored). Only stored logs of the same session id that are not among
    ``given`` (the logs of this run, which discovery compared already) are looked at."""
    sid = record.session_id
    if not sid or is_fixture_token(sid):  # no id, or a snapshot fixture's token
        return [], None
    mine = storable(record.path)
    others = [row[0] for row in connection.execute("SELECT path FROM sessions WHERE session_id = ? AND path != ?",
                                                   (storable(sid), mine))
              if isinstance(row[0], str) and row[0] not in given]
    if 1 + len(others) > MAX_COPIES:  # the session's files, ``record``'s among them, as discovery counts
        return [], None  # not copies of one session (snapshot fixtures share an id): none is compared
    replaced: list[str] = []
    for stored in others:
        name = on_disk(stored)
        read = {record.path} if name is None else _read_by_live_commands(record.path, name)
        if read == {record.path}:
            replaced.append(stored)
        elif name is not None and read == {name}:
            return [], stored
    return replaced, None
