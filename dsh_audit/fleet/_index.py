"""The fleet index: one SQLite file with a row per session, per request, per priced request and
per cache break (its tables and schema versions: :mod:`dsh_audit.fleet._db`).

Indexing is incremental: a file whose size, modification time, indexing options and price table
are those stored is skipped; a changed one has its rows replaced. A stored log under one of the
``roots`` indexed that is no longer on disk is removed, all its rows in one transaction.
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
from ..log import ProtectedInputs
from ..runner import SessionTaskError, iter_many
from ..session import Failure, GroupResult, home_routes_key, routes_from, run_groups
from ..cache import PriceBook, load_prices
from ..capture import find_capture
from ._audit import audit_group, options_key
from ._db import SESSION_COLUMNS, index_error, open_index
from ._rows import BreakRow, CostRow, RequestRow, SessionRecord

__all__ = ["IndexSummary", "index_logs"]


@dataclass(frozen=True, slots=True)
class IndexSummary:
    """What one ``index`` run did.

    Attributes:
        db: the index file.
        seen: logs given (after ``--since``): ``indexed + skipped + lost``.
        indexed: logs read and stored in this run, the :attr:`refused` ones included.
        skipped: unchanged logs left as stored.
        failed: ``(path, error message)`` of every log that could not be read in this run, in
            input order: logs DSH would refuse (stored, with their error: :attr:`refused` of them,
            the logs ``stats`` counts as refused) and logs whose task failed (``lost``).
        lost: how many of ``failed`` were not stored (their task failed: the next run tries again).
        seconds: wall time of the run.
        upgraded_from: the schema version the file was upgraded from in this run, if it was.
        warnings: where a log read in this run contradicts the route file (``--routes``), once per
            session and route/model, as every command that takes the file warns.
        removed: the stored logs under a root given (see :func:`index_logs`) that were no longer
            on disk, removed from the index in this run (not among ``seen``), sorted.
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

    @property
    def refused(self) -> int:
        """How many of ``indexed`` are logs DSH would refuse, stored with their error."""
        return len(self.failed) - self.lost

    def to_json(self) -> dict[str, Any]:
        return {"db": self.db, "seen": self.seen, "indexed": self.indexed, "refused": self.refused,
                "skipped": self.skipped, "failed": [{"path": path, "error": error} for path, error in self.failed],
                "lost": self.lost, "removed": len(self.removed), "removed_paths": list(self.removed),
                "seconds": round(self.seconds, 3), "upgraded_from": self.upgraded_from,
                "warnings": list(self.warnings)}


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


def _store(connection: sqlite3.Connection, record: SessionRecord) -> None:
    with connection:
        for table in ("requests", "breaks", "costs", "sessions"):
            connection.execute(f"DELETE FROM {table} WHERE path = ?", (_storable(record.path),))
        values = [_storable(getattr(record, name)) for name in SESSION_COLUMNS]
        connection.execute(
            f"INSERT INTO sessions ({', '.join(SESSION_COLUMNS)}, notes, indexed_at) "
            f"VALUES ({', '.join('?' * (len(SESSION_COLUMNS) + 2))})",
            (*values, _storable("\n".join(record.notes)), time.time()))
        _insert(connection, "requests", RequestRow, record.requests)
        _insert(connection, "breaks", BreakRow, record.breaks)
        _insert(connection, "costs", CostRow, record.costs)


_ESCAPED = re.compile(r"\\u(d[89a-f][0-9a-f]{2})")


def _gone(stored: str) -> bool:
    """Whether the log stored as ``stored`` is no longer on disk: looking it up says no such file
    (or a file where a folder was). A log that cannot be looked at (no permission on a folder
    above it) is not gone; nor is one whose name held a lone surrogate (stored as its ``\\udXXX``
    escape, :func:`_storable`) when the unescaped name is there."""
    for name in dict.fromkeys((stored, _ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), stored))):
        try:
            os.stat(name)
        except (FileNotFoundError, NotADirectoryError, ValueError):  # ValueError: no file can have that name
            continue
        except OSError:
            return False
        return False
    return True


def _under(path: str, roots: Sequence[str]) -> bool:
    """Whether ``path`` is one of ``roots`` or lies in one of them (a folder)."""
    return any(path == root or path.startswith(root if root.endswith(os.sep) else root + os.sep) for root in roots)


def _prune(connection: sqlite3.Connection, roots: Sequence[str], given: Sequence[str]) -> tuple[str, ...]:
    """Remove every stored log under one of ``roots`` (absolute, resolved, as stored) that is not
    among ``given`` (the logs of this run, there by definition) and is no longer on disk: all its
    rows, of every table, in one transaction that holds the index's write lock while each such
    log is looked up again (a concurrent ``index`` cannot store it in between). Returns their
    stored paths, sorted."""
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
        for table in ("requests", "breaks", "costs", "sessions"):
            connection.executemany(f"DELETE FROM {table} WHERE path = ?", ((path,) for path in gone))
    return tuple(gone)


def _stale(connection: sqlite3.Connection, paths: Sequence[str], options: Callable[[str], str]) -> list[str]:
    """The paths whose file differs from its stored row (or has none), ``options(path)`` the
    options its row must have been made with."""
    stored = {row[0]: row[1:] for row in connection.execute("SELECT path, size, mtime_ns, options FROM sessions")}
    stale: list[str] = []
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            stale.append(path)  # the audit reports why
            continue
        if stored.get(_storable(path)) != (stat.st_size, stat.st_mtime_ns, options(path)):
            stale.append(path)
    return stale


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
    failed: list[tuple[str, str]] = []
    warnings: list[str] = []
    lost = 0

    def keep_warnings(result: GroupResult[SessionRecord]) -> None:
        warnings.extend(warning for found in result.route_warnings.values() for warning in found)

    try:
        removed = _prune(connection, [_storable(os.path.realpath(root)) for root in roots],
                         [_storable(path) for path in paths])
        stale = _stale(connection, paths, options)
        runs: dict[str, Any] = {"jobs": jobs, "engine": engine, "scheduler": scheduler, "progress": progress}
        results = run_groups(stale, task, on_group=keep_warnings, **runs) if audit is None else \
            [r.value if r.value is not None else Failure(r.path, r.error or SessionTaskError("no record"))
             for r in iter_many(stale, audit, **runs)]
        for path, record in zip(stale, results):
            if isinstance(record, SessionRecord):
                _store(connection, record)
                if record.error is not None:
                    failed.append((path, record.error))
            else:
                failed.append((path, str(record.error)))
                lost += 1
    except sqlite3.DatabaseError as exc:  # tables of another layout under the same schema version
        raise index_error(exc, os.fspath(db), hint="delete the file and index again") from None
    finally:
        connection.close()
    return IndexSummary(db=os.fspath(db), seen=len(paths), indexed=len(stale) - lost, skipped=len(paths) - len(stale),
                        failed=tuple(failed), lost=lost, seconds=time.perf_counter() - started,
                        upgraded_from=upgraded, warnings=tuple(warnings), removed=removed)
