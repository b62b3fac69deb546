"""The rows of the fleet index file: storing a session's rows in place of its old ones, as SQLite
can hold their values; which stored logs are stale (and which only because dsh-audit changed), and
removing those no longer on disk.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from operator import attrgetter
from typing import Any

from .._spool import RowSpool
from ._db import SESSION_COLUMNS
from ._rows import BreakRow, CostRow, RequestRow, SessionRecord
from ._stored import storable, unstored

__all__ = ["Stale", "drop_ambiguous", "is_gone", "on_disk", "prune", "remove_rows", "stale_paths", "storable",
           "store_record", "unstored"]

def _insert(connection: sqlite3.Connection, table: str, cls: type, rows: Iterable[Any]) -> None:
    names = [f.name for f in fields(cls)]
    # a spool's rows are stored as their values, in the order of their fields: read back as they are
    values = rows.values() if isinstance(rows, RowSpool) and rows.row_type is cls else map(attrgetter(*names), rows)
    connection.executemany(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                           (tuple(map(storable, row)) for row in values))


def remove_rows(connection: sqlite3.Connection, stored: Sequence[str]) -> None:
    """Delete every row of the logs ``stored`` (paths as stored), of every table (inside the
    caller's transaction)."""
    for table in ("requests", "breaks", "costs", "sessions"):
        connection.executemany(f"DELETE FROM {table} WHERE path = ?", ((path,) for path in stored))


#: The ``meta`` key that says an index's text is stored as :func:`storable` stores it now, and the
#: form's name; its value is that name, then when the last row stored in it was stored (``indexed_at``).
_TEXT_KEY, _TEXT_FORM = "stored_text", "escaped-backslash"
#: A stored text holding a lone surrogate's escape, as SQLite's GLOB sees it.
_ESCAPE_GLOB = "*\\ud[89a-f][0-9a-f][0-9a-f]*"


def _stored_since(connection: sqlite3.Connection) -> float | None:
    """When the last row stored in this form was stored (:data:`_TEXT_KEY`); None: the index has
    no mark (an earlier dsh-audit made it), infinity: a mark without the time (session 44's first
    form: every row was checked then)."""
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (_TEXT_KEY,)).fetchone()
    if row is None or not str(row[0]).startswith(_TEXT_FORM):
        return None
    try:
        return float(str(row[0])[len(_TEXT_FORM):] or "inf")
    except ValueError:  # edited by hand: check every row again
        return None


def drop_ambiguous(connection: sqlite3.Connection) -> tuple[str, ...]:
    """Remove every stored log whose path or session id holds a ``\\udXXX`` escape as an earlier
    dsh-audit stored it (a lone surrogate's escape, its backslashes kept: the same text as the 7
    characters themselves, so which log a row is cannot be told); each is read again when it is
    given. Those of every row the first time, then of the rows stored after the last one this form
    stored: an earlier dsh-audit writing into the index since leaves the mark as it was (it would
    keep its rows, and a log of one of them would read as "one session in two files").
    Returns their stored paths, sorted (none in an index only this form wrote)."""
    since = _stored_since(connection)
    later = "" if since is None else " AND indexed_at > ?2"
    with connection:
        connection.execute("BEGIN IMMEDIATE")
        ambiguous = sorted(row[0] for row in connection.execute(
            f"SELECT path FROM sessions WHERE (path GLOB ?1 OR session_id GLOB ?1){later}",
            (_ESCAPE_GLOB,) if since is None else (_ESCAPE_GLOB, since)))
        remove_rows(connection, ambiguous)
        if since is None:  # every row left is of this form: the last one stored is the mark's
            last = connection.execute("SELECT COALESCE(MAX(indexed_at), 0.0) FROM sessions").fetchone()[0]
            connection.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_TEXT_KEY, f"{_TEXT_FORM} {last!r}"))
    return tuple(ambiguous)


def store_record(connection: sqlite3.Connection, record: SessionRecord, replaced: Sequence[str] = ()) -> None:
    """Store ``record``, all its rows in place of those stored for its path, and remove the rows of
    the stored logs ``replaced`` (as stored), in one transaction."""
    now = time.time()
    with connection:
        remove_rows(connection, [storable(record.path), *replaced])
        values = [storable(getattr(record, name)) for name in SESSION_COLUMNS]
        connection.execute(
            f"INSERT INTO sessions ({', '.join(SESSION_COLUMNS)}, notes, indexed_at) "
            f"VALUES ({', '.join('?' * (len(SESSION_COLUMNS) + 2))})",
            (*values, storable("\n".join(record.notes)), now))
        # the last row this form stored (drop_ambiguous): rows stored later were stored by another
        connection.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_TEXT_KEY, f"{_TEXT_FORM} {now!r}"))
        _insert(connection, "requests", RequestRow, record.requests)
        _insert(connection, "breaks", BreakRow, record.breaks)
        _insert(connection, "costs", CostRow, record.costs)


def on_disk(stored: str) -> str | None:
    """The name of the log stored as ``stored`` (:func:`unstored`) on disk; None when it is gone:
    looking it up says no such file (or a file where a folder was). A log that cannot be looked at
    (no permission on a folder above it) is not gone."""
    name = unstored(stored)
    try:
        os.stat(name)
    except (FileNotFoundError, NotADirectoryError, ValueError):  # ValueError: no file can have that name
        return None
    except OSError:
        return name
    return name


def is_gone(stored: str) -> bool:
    """Whether the log stored as ``stored`` is no longer on disk (:func:`on_disk`)."""
    return on_disk(stored) is None


def _under(path: str, roots: Sequence[str]) -> bool:
    """Whether ``path`` is one of ``roots`` or lies in one of them (a folder)."""
    return any(path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep) for root in roots)


def prune(connection: sqlite3.Connection, roots: Sequence[str], given: Sequence[str]) -> tuple[str, ...]:
    """Remove every stored log under one of ``roots`` (absolute, resolved, as stored) that is not
    among ``given`` (the logs of this run, there by definition) and is no longer on disk: all its
    rows, of every table, in one transaction that holds the index's write lock while each such
    log is looked up again (a concurrent ``index`` cannot store it in between). Returns their
    stored paths, sorted. A log elsewhere is not looked at: a disk that is not mounted, or a
    folder on a slow network share, is no deleted log."""
    if not roots:
        return ()
    keep = set(given)
    candidates = [row[0] for row in connection.execute("SELECT path FROM sessions")
                  if isinstance(row[0], str) and row[0] not in keep and _under(row[0], roots)]
    missing = {path for path in candidates if is_gone(path)}
    if not missing:
        return ()
    with connection:
        connection.execute("BEGIN IMMEDIATE")
        gone = sorted(row[0] for row in connection.execute("SELECT path FROM sessions")
                      if row[0] in missing and is_gone(row[0]))
        remove_rows(connection, gone)
    return tuple(gone)


@dataclass(frozen=True, slots=True)
class Stale:
    """Which logs given to an ``index`` run are read again (:func:`stale_paths`).

    Attributes:
        paths: the logs whose file differs from its stored row, or that have none, in the order given.
        refused: the stored error of each other log (unchanged) that is stored with one (a log DSH
            would refuse), by path.
        rebuilt: those of ``paths`` whose file's size and mtime and whose options are those stored
            but for the build of dsh-audit that made the row (:func:`_other_build`): read again only
            because dsh-audit changed.
    """

    paths: tuple[str, ...]
    refused: dict[str, str]
    rebuilt: frozenset[str]


def _other_build(stored: object, now: str) -> bool:
    """Whether the options a row was ``stored`` with are ``now`` but for the build of dsh-audit
    (the last field, ``;code=``, of :func:`~dsh_audit.fleet._audit.options_key`).

    Example:
        >>> _other_build("cache=1;code=a", "cache=1;code=b"), _other_build("cache=0;code=a", "cache=1;code=b")
        (True, False)
    """
    if not isinstance(stored, str):
        return False
    (was, _, was_code), (wanted, _, code) = stored.rpartition(";code="), now.rpartition(";code=")
    return was == wanted and was_code != code


def stale_paths(connection: sqlite3.Connection, paths: Sequence[str], options: Callable[[str], str]) -> Stale:
    """Which of ``paths`` differ from their stored row (:class:`Stale`), ``options(path)`` the
    options a path's row must have been made with (called once per stored path: it may look for a
    capture and read a home's route layer)."""
    stored = {row[0]: row[1:] for row in
              connection.execute("SELECT path, size, mtime_ns, options, error FROM sessions")}
    stale: list[str] = []
    errors: dict[str, str] = {}
    rebuilt: set[str] = set()
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            stale.append(path)  # the audit reports why
            continue
        row = stored.get(storable(path))
        if row is None:
            stale.append(path)
            continue
        now = options(path)
        if row[:3] != (stat.st_size, stat.st_mtime_ns, now):
            stale.append(path)
            if row[:2] == (stat.st_size, stat.st_mtime_ns) and _other_build(row[2], now):
                rebuilt.add(path)
        elif row[3] is not None:
            errors[path] = str(row[3])
    return Stale(tuple(stale), errors, frozenset(rebuilt))
