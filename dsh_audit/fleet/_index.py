"""The fleet index: one SQLite file with a row per session, per request, per priced request and
per cache break (its tables and schema versions: :mod:`dsh_audit.fleet._db`).

Indexing is incremental: a file whose size, modification time, indexing options and price table
are those stored is skipped; a changed one has its rows replaced. A stored log under the
``roots`` indexed that is no longer on disk is removed, all its rows in one transaction; one
elsewhere stays (a disk that is not mounted now is no deleted log) until a log of its session
read in a later run takes its place.

A session is stored once: when a log read in a run holds a session id already stored from another
file that is still on disk and not among the logs of the run, the two files are compared as the
live commands choose one file among copies and generations (:func:`dsh_audit.log.discover`): the
one they would read is kept in the index, the other's rows removed (or never stored). Files that
hold different lines under one id (two sessions) are both kept; a fork or subagent child has its
own id, so it is never compared with its parent.
"""

from __future__ import annotations

import hashlib
import os
import re
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from functools import partial
from operator import attrgetter
from pathlib import Path
from typing import Any

from .._spool import RowSpool
from ..errors import DshAuditError
from ..log import ProtectedInputs, canonical_generation, discover
from ..runner import SessionTaskError, iter_many
from ..session import Failure, GroupResult, home_routes_key, routes_from, run_groups
from ..cache import PriceBook, load_prices
from ..capture import find_capture
from ._audit import audit_group, options_key
from ._db import SESSION_COLUMNS, index_error, open_index, record_prices
from ._rows import BreakRow, CostRow, RequestRow, SessionRecord

__all__ = ["IndexSummary", "index_logs"]


@dataclass(frozen=True, slots=True)
class IndexSummary:
    """What one ``index`` run did.

    Attributes:
        db: the index file.
        seen: logs given (after ``--since``): ``indexed + skipped + lost + len(copies)``.
        indexed: logs read and stored in this run, the :attr:`refused` ones included.
        skipped: unchanged logs left as stored, the ``refused_unchanged`` ones included.
        failed: ``(path, error message)`` of every log given that DSH would refuse or that could
            not be read, in input order: logs read in this run and stored with their error
            (:attr:`refused` of them), unchanged logs stored with one (``refused_unchanged``:
            their stored error said again, the file not read), both the logs ``stats`` counts as
            refused; and logs whose task failed (``lost``).
        lost: how many of ``failed`` were not stored (their task failed: the next run tries again).
        seconds: wall time of the run.
        upgraded_from: the schema version the file was upgraded from in this run, if it was.
        warnings: where a log read in this run contradicts the route file (``--routes``), once per
            session and route/model, as every command that takes the file warns.
        removed: the stored logs that were no longer on disk, removed from the index in this run
            (not among ``seen``), sorted.
        refused_unchanged: how many of ``skipped`` are stored with an error (in ``failed``).
        replaced: stored logs whose session a log read in this run holds as the file the live
            commands read (a compressed copy, a later generation, the DSH log of an export): their
            rows removed, the session stored once (not among ``seen``), in the order replaced.
        copies: logs given that hold a session the index already has from the file the live
            commands read (see ``replaced``): read, not stored (not among ``indexed``).
        notes: one line per log of ``replaced`` and ``copies``, naming both files; and, once each,
            which DSH home layers gave the logs' route configuration (a route warning whose level
            is a note: :class:`dsh_audit.session.RouteNote`), not among ``warnings``.
    """

    db: str
    seen: int
    indexed: int
    skipped: int
    failed: tuple[tuple[str, str], ...]
    lost: int
    seconds: float
    upgraded_from: int | None = None
    warnings: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    refused_unchanged: int = 0
    replaced: tuple[str, ...] = ()
    copies: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def refused(self) -> int:
        """How many of ``indexed`` are logs DSH would refuse, stored with their error."""
        return len(self.failed) - self.lost - self.refused_unchanged

    def to_json(self) -> dict[str, Any]:
        return {"db": self.db, "seen": self.seen, "indexed": self.indexed, "refused": self.refused,
                "skipped": self.skipped, "failed": [{"path": path, "error": error} for path, error in self.failed],
                "lost": self.lost, "removed": len(self.removed), "removed_paths": list(self.removed),
                "seconds": round(self.seconds, 3), "upgraded_from": self.upgraded_from,
                "warnings": list(self.warnings), "refused_unchanged": self.refused_unchanged,
                "replaced_paths": list(self.replaced), "copies": list(self.copies), "notes": list(self.notes)}


def _insert(connection: sqlite3.Connection, table: str, cls: type, rows: Iterable[Any]) -> None:
    names = [f.name for f in fields(cls)]
    # a spool's rows are stored as their values, in the order of their fields: read back as they are
    values = rows.values() if isinstance(rows, RowSpool) and rows.row_type is cls else map(attrgetter(*names), rows)
    connection.executemany(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                           (tuple(map(_storable, row)) for row in values))


def _storable(value: Any) -> Any:
    """``value`` as SQLite can hold it: a lone surrogate (valid in a JSON log, and DSH writes what
    it is given) becomes its ``\\udXXX`` escape, since SQLite text must be UTF-8; an integer past
    SQLite's 64 bits (a logged count up to 2**64 - 1, or a sum of such counts) becomes the nearest
    double, the number JavaScript holds for it.

    Example:
        >>> _storable(2**63 - 1), _storable(2**64 - 1), _storable("\\ud800")
        (9223372036854775807, 1.8446744073709552e+19, '\\\\ud800')
    """
    if isinstance(value, str) and not value.isascii():  # ASCII text is UTF-8 already
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    elif isinstance(value, int) and not -(2**63) <= value < 2**63:
        return float(value)
    return value


def _remove(connection: sqlite3.Connection, stored: Sequence[str]) -> None:
    """Delete every row of the logs ``stored`` (paths as stored), of every table (inside the
    caller's transaction)."""
    for table in ("requests", "breaks", "costs", "sessions"):
        connection.executemany(f"DELETE FROM {table} WHERE path = ?", ((path,) for path in stored))


def _store(connection: sqlite3.Connection, record: SessionRecord, replaced: Sequence[str] = ()) -> None:
    """Store ``record``, all its rows in place of those stored for its path, and remove the rows of
    the stored logs ``replaced`` (as stored), in one transaction."""
    with connection:
        _remove(connection, [_storable(record.path), *replaced])
        values = [_storable(getattr(record, name)) for name in SESSION_COLUMNS]
        connection.execute(
            f"INSERT INTO sessions ({', '.join(SESSION_COLUMNS)}, notes, indexed_at) "
            f"VALUES ({', '.join('?' * (len(SESSION_COLUMNS) + 2))})",
            (*values, _storable("\n".join(record.notes)), time.time()))
        _insert(connection, "requests", RequestRow, record.requests)
        _insert(connection, "breaks", BreakRow, record.breaks)
        _insert(connection, "costs", CostRow, record.costs)


_ESCAPED = re.compile(r"\\u(d[89a-f][0-9a-f]{2})")


def _on_disk(stored: str) -> str | None:
    """The name of the log stored as ``stored`` on disk; None when it is gone: looking it up says
    no such file (or a file where a folder was). A log that cannot be looked at (no permission on
    a folder above it) is not gone; a name that held a lone surrogate (stored as its ``\\udXXX``
    escape, :func:`_storable`) is looked up unescaped too."""
    for name in dict.fromkeys((stored, _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), stored))):
        try:
            os.stat(name)
        except (FileNotFoundError, NotADirectoryError, ValueError):  # ValueError: no file can have that name
            continue
        except OSError:
            return name
        return name
    return None


def _gone(stored: str) -> bool:
    """Whether the log stored as ``stored`` is no longer on disk (:func:`_on_disk`)."""
    return _on_disk(stored) is None


def _under(path: str, roots: Sequence[str]) -> bool:
    """Whether ``path`` is one of ``roots`` or lies in one of them (a folder)."""
    return any(path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep) for root in roots)


def _prune(connection: sqlite3.Connection, roots: Sequence[str], given: Sequence[str]) -> tuple[str, ...]:
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
    missing = {path for path in candidates if _gone(path)}
    if not missing:
        return ()
    with connection:
        connection.execute("BEGIN IMMEDIATE")
        gone = sorted(row[0] for row in connection.execute("SELECT path FROM sessions")
                      if row[0] in missing and _gone(row[0]))
        _remove(connection, gone)
    return tuple(gone)


def _stale(connection: sqlite3.Connection, paths: Sequence[str],
           options: Callable[[str], str]) -> tuple[list[str], dict[str, str]]:
    """The paths whose file differs from its stored row (or has none), ``options(path)`` the
    options its row must have been made with; and the stored error of each other path (unchanged)
    that is stored with one (a log DSH would refuse), by path."""
    stored = {row[0]: row[1:] for row in
              connection.execute("SELECT path, size, mtime_ns, options, error FROM sessions")}
    stale: list[str] = []
    errors: dict[str, str] = {}
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            stale.append(path)  # the audit reports why
            continue
        row = stored.get(_storable(path))
        if row is None or row[:3] != (stat.st_size, stat.st_mtime_ns, options(path)):
            stale.append(path)
        elif row[3] is not None:
            errors[path] = str(row[3])
    return stale, errors


#: More stored logs of one session id than this are not copies of one session (snapshot fixtures
#: share an id): none of them is compared, as the live commands leave more than a few uncompared.
_MAX_COPIES = 3


def _read_by_live_commands(path: str, other: str) -> set[str]:
    """Which of two files holding one session id the live commands read (:func:`discover`, which
    compares copies line by line, prefers the file where DSH keeps it, and of a session folder's
    generations reads the highest): one of them, or both when they hold different lines (two
    sessions), or when either cannot be read now (its next run says why)."""
    folder = os.path.dirname(path)
    generations = folder == os.path.dirname(other) and all(
        canonical_generation(os.path.basename(name)) is not None for name in (path, other))
    try:  # a session folder's generations are told apart by DSH's choice of the folder's files
        found = {os.path.realpath(log) for log in discover([folder] if generations else [path, other])}
    except DshAuditError:
        return {path, other}
    return {name for name in (path, other) if os.path.realpath(name) in found} or {path, other}


def _one_session(connection: sqlite3.Connection, record: SessionRecord,
                 given: set[str]) -> tuple[list[str], str | None]:
    """The stored logs that ``record`` (read in this run) replaces as the file of its session the
    live commands read, as stored; or the stored log that they read instead of ``record``'s file
    (``record`` is then not stored). Only stored logs of the same session id that are not among
    ``given`` (the logs of this run, which discovery compared already) are looked at."""
    sid = record.session_id
    if not sid or (sid.startswith("{{") and sid.endswith("}}")):  # no id, or a snapshot fixture's token
        return [], None
    mine = _storable(record.path)
    others = [row[0] for row in connection.execute("SELECT path FROM sessions WHERE session_id = ? AND path != ?",
                                                   (_storable(sid), mine))
              if isinstance(row[0], str) and row[0] not in given]
    if len(others) > _MAX_COPIES:
        return [], None
    replaced: list[str] = []
    for stored in others:
        name = _on_disk(stored)
        read = {record.path} if name is None else _read_by_live_commands(record.path, name)
        if read == {record.path}:
            replaced.append(stored)
        elif name is not None and read == {name}:
            return [], stored
    return replaced, None


def _options(path: str, *, routes: str | None, given: bool, **options: Any) -> str:
    """The options the row of the log at ``path`` is made with (:func:`options_key`): the route
    file's fingerprint (``routes``) when one is ``given``, else that of the log's home patch layer
    (:func:`dsh_audit.session.home_routes_key`), as :func:`audit_group` keys its records."""
    return options_key(routes=routes if given else home_routes_key(path), **options)


def _fingerprint(routes: str | None) -> str | None:
    """A short hash of a route file's text (checked first: a bad file is one error before any log)."""
    if routes is None:
        return None
    routes_from(routes)
    return hashlib.sha256(Path(routes).read_bytes()).hexdigest()[:16]


def index_logs(logs: Sequence[str | os.PathLike[str]], db: str | os.PathLike[str], *, lenient: bool = False,
               max_version: int = 4, attribution: bool = True, cache: bool = True, jobs: int = 1,
               engine: str = "local", scheduler: str | None = None, prices: PriceBook | None = None,
               audit: Callable[[str], SessionRecord] | None = None,
               progress: Callable[[int, int], None] | None = None, routes: str | None = None,
               capture: str | os.PathLike[str] | None = None,
               zero_data_retention: bool | None = None,
               roots: Sequence[str | os.PathLike[str]] = ()) -> IndexSummary:
    """Add the logs to the index at ``db``, reading only those that changed since last time.

    Args:
        logs: session log files (see :func:`dsh_audit.log.discover`); stored by absolute path.
        db: the SQLite file, created when missing.
        lenient, max_version: how logs are read (see :func:`dsh_audit.log.read_log`).
        attribution, cache: run those analyses (a change of any option re-indexes every file).
        prices: the price table of the ``costs`` ledger (default :func:`dsh_audit.cache.load_prices`);
            another table re-prices every file.
        jobs, engine, scheduler, progress: see :func:`dsh_audit.fleet.run_many`.
        audit: a per-session audit (a picklable function of a path returning a
            :class:`SessionRecord`) replacing the default, :func:`audit_group` with the options above.
        routes: a route configuration file (``--routes``): routes and model facts of hand-declared
            pi-ai providers, and their profiles (a cache retention changes TTLs and write rates);
            another file (by content) re-indexes every log.
        capture: what was sent (wire.jsonl, HAR 1.2, a folder of bodies) for every log; None: the
            ``wire.jsonl`` found beside each log, as ``dsh-audit check`` finds it
            (:func:`dsh_audit.capture.find_capture`). Another ``capture`` (by path) re-indexes every log.
        zero_data_retention: the OpenAI organization's Zero Data Retention status (``--openai-zdr``;
            None: as the nearest ``pyproject.toml`` states it); another stated status re-indexes every log.
        roots: the files and folders ``logs`` were found under (``dsh-audit index PATHS``): every
            stored log that is one of them or lies in one, is not among ``logs`` and is no longer
            on disk is removed from the index (``removed``). A log that is there but left out (by
            ``--since``, say), or cannot be looked at, stays; so do the logs under other roots.

    A session is stored once: a log read in this run that holds a session stored from another
    file (not among ``logs``) replaces that file's rows when it is the file the live commands read
    or the other file is gone (``replaced``: a moved home), else it is not stored and any rows it
    had are removed (``copies``); see the module's docstring. A log given that is stored with an error (one DSH
    would refuse) is in ``failed`` on every run, read again or not.

    An index of an older schema version is upgraded in place (``upgraded_from`` says so).

    Raises:
        UsageError: the index file cannot be used (or is one of the logs, a file beside one, a
            capture or the route file), or a bad engine option.

    Example:
        >>> summary = index_logs(discover(["sessions/"]), "audit.sqlite", jobs=2)  # doctest: +SKIP
        >>> summary.indexed, summary.skipped  # doctest: +SKIP
        (12, 0)
    """
    started = time.perf_counter()
    book = prices if prices is not None else load_prices()
    routes_key = _fingerprint(routes)
    given = os.path.abspath(capture) if capture is not None else None
    # Without --routes, a log in a DSH home takes its routes from that home's patch layer
    # (routes_from): the layer's text is in the log's options, so an edit of it re-audits the log.
    options = partial(_options, lenient=lenient, max_version=max_version, attribution=attribution, cache=cache,
                      prices=book, routes=routes_key, given=routes is not None, capture=given,
                      zero_data_retention=zero_data_retention)
    task = partial(audit_group, lenient=lenient, max_version=max_version, attribution=attribution, cache=cache,
                   prices=book, routes=routes, routes_key=routes_key, capture=given,
                   zero_data_retention=zero_data_retention)
    if os.fspath(db):  # never the logs, the captures they are compared with, or the route file
        ProtectedInputs.of(logs, files=[capture, routes, *(find_capture(log) for log in logs)]).guard(db, what="index")
    paths = list(dict.fromkeys(os.path.realpath(p) for p in logs))  # a symlink loop stays as given
    connection, upgraded = open_index(db, create=True, upgrade=True)
    failed: dict[str, str] = {}
    warnings: list[str] = []
    replaced: list[str] = []
    copies: list[str] = []
    notes: list[str] = []
    lost = 0

    def keep_warnings(result: GroupResult[SessionRecord]) -> None:
        for found in result.route_warnings.values():
            for line in found:
                if getattr(line, "level", "warning") != "note":
                    warnings.append(line)
                elif line not in notes:  # the home's route layers (RouteNote): said once, as a note
                    notes.append(line)

    try:
        record_prices(connection, book.fingerprint, book.files)  # where its rates came from, for stats
        given_stored = {_storable(path) for path in paths}
        removed = _prune(connection, [_storable(os.path.realpath(root)) for root in roots], list(given_stored))
        stale, refused = _stale(connection, paths, options)
        runs: dict[str, Any] = {"jobs": jobs, "engine": engine, "scheduler": scheduler, "progress": progress}
        results = run_groups(stale, task, on_group=keep_warnings, **runs) if audit is None else \
            [r.value if r.value is not None else Failure(r.path, r.error or SessionTaskError("no record"))
             for r in iter_many(stale, audit, **runs)]
        for path, record in zip(stale, results):
            if isinstance(record, SessionRecord):
                superseded, instead = _one_session(connection, record, given_stored)
                if instead is not None:
                    with connection:  # rows it had from an earlier run, when it held other lines
                        _remove(connection, [_storable(path)])
                    copies.append(path)
                    notes.append(f"one session ({record.session_id}) in two files: the index keeps {instead}, "
                                 f"the file the other commands read; {path} not stored")
                    continue
                _store(connection, record, superseded)
                replaced.extend(superseded)
                notes.extend(f"one session ({record.session_id}) in two files: {path} replaces {old} in the "
                             "index, " + ("which is no longer there" if _gone(old) else "the file the other commands read")
                             for old in superseded)
                if record.error is not None:
                    failed[path] = record.error
            else:
                failed[path] = str(record.error)
                lost += 1
    except sqlite3.DatabaseError as exc:  # tables of another layout under the same schema version
        raise index_error(exc, os.fspath(db), hint="delete the file and index again") from None
    finally:
        connection.close()
    failed.update(refused)  # an unchanged refused log: its stored error said again, the file not read
    return IndexSummary(db=os.fspath(db), seen=len(paths), indexed=len(stale) - lost - len(copies),
                        skipped=len(paths) - len(stale),
                        failed=tuple((path, failed[path]) for path in paths if path in failed), lost=lost,
                        seconds=time.perf_counter() - started, upgraded_from=upgraded, warnings=tuple(warnings),
                        removed=removed, refused_unchanged=len(refused), replaced=tuple(replaced),
                        copies=tuple(copies), notes=tuple(notes))
