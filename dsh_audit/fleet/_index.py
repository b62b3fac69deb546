"""The fleet index: one SQLite file with a row per session, per request, per priced request and
per cache break.

Tables (column names are the fields of :class:`SessionRecord`, :class:`RequestRow`,
:class:`CostRow` and :class:`BreakRow`): ``sessions`` keyed by the log's absolute path,
``requests`` and ``costs`` (the priced ledger) keyed by ``(path, idx)``, ``breaks`` keyed by
``(path, request)``, and ``meta`` (the schema version). Indexing is incremental: a file whose
size, modification time, indexing options and price table are those stored is skipped; a changed
one has its rows replaced.

Schema versions: 1 had no ``costs`` table; 2 adds it; 3 adds its ``tier`` column. ``index``
upgrades a file of version 1 or 2 in place: the ``costs`` table is made anew, empty (a version-2
row cannot tell a base-rate request from one billed at a long-context tier), and every stored log
is marked changed, so each log given is read again and priced; a log not given stays stored
without a ledger until it is (``stats`` counts it as ``sessions_unpriced``). ``stats`` refuses a
file of an older version until then.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from functools import partial
from operator import attrgetter
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..log import ProtectedInputs, special_kind
from ..runner import SessionTaskError, iter_many
from ..session import Failure, GroupResult, routes_from, run_groups
from ..cache import PriceBook, load_prices
from ..capture import find_capture
from ._audit import BreakRow, CostRow, RequestRow, SessionRecord, audit_group, options_key

__all__ = ["SCHEMA_VERSION", "IndexSummary", "connect_index", "index_logs"]

SCHEMA_VERSION = 3
# The versions index_logs upgrades in place, each with the tables its upgrade makes anew (created
# empty); every stored session is then marked changed, so the next run reads each log given again.
_UPGRADES: dict[str, tuple[str, ...]] = {"1": ("costs",), "2": ("costs",)}

_TYPES = {"int": "INTEGER", "float": "REAL", "str": "TEXT", "bool": "INTEGER"}
_SESSION_SKIP = ("requests", "breaks", "costs", "notes")  # rows of other tables; notes are stored joined
_SESSION_COLUMNS = tuple(f.name for f in fields(SessionRecord) if f.name not in _SESSION_SKIP)
_KEYS = {"sessions": "path", "requests": "path, idx", "breaks": "path, request", "costs": "path, idx"}


def _column_type(annotation: str) -> str:
    return _TYPES.get(annotation.split(" ")[0].split("|")[0].strip(), "TEXT")


def _table_sql(name: str, cls: type, skip: tuple[str, ...] = ()) -> str:
    columns = [f"{f.name} {_column_type(str(f.type))}" for f in fields(cls) if f.name not in skip]
    if name == "sessions":
        columns.extend(["notes TEXT", "indexed_at REAL"])
    return f"CREATE TABLE IF NOT EXISTS {name} ({', '.join(columns)}, PRIMARY KEY ({_KEYS[name]}))"


_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)",
    _table_sql("sessions", SessionRecord, _SESSION_SKIP),
    _table_sql("requests", RequestRow),
    _table_sql("breaks", BreakRow),
    _table_sql("costs", CostRow),
    "CREATE INDEX IF NOT EXISTS requests_model ON requests (model)",
    "CREATE INDEX IF NOT EXISTS requests_day ON requests (day)",
    "CREATE INDEX IF NOT EXISTS costs_model ON costs (model)",
)


@dataclass(frozen=True, slots=True)
class IndexSummary:
    """What one ``index`` run did.

    Attributes:
        db: the index file.
        seen: logs given (after ``--since``).
        indexed: logs read and stored in this run (refused logs included).
        skipped: unchanged logs left as stored.
        failed: ``(path, error message)`` of every log that could not be read in this run, in
            input order: logs DSH would refuse (stored, with their error) and logs whose task
            failed (not stored, so the next run tries again).
        lost: how many of ``failed`` were not stored.
        seconds: wall time of the run.
        upgraded_from: the schema version the file was upgraded from in this run, if it was.
        warnings: where a log read in this run contradicts the route file (``--routes``), once per
            session and route/model, as every command that takes the file warns.
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

    def to_json(self) -> dict[str, Any]:
        return {"db": self.db, "seen": self.seen, "indexed": self.indexed, "skipped": self.skipped,
                "failed": [{"path": path, "error": error} for path, error in self.failed], "lost": self.lost,
                "seconds": round(self.seconds, 3), "upgraded_from": self.upgraded_from,
                "warnings": list(self.warnings)}


def connect_index(db: str | os.PathLike[str], *, create: bool = True) -> sqlite3.Connection:
    """Open (and with ``create`` make) the index at ``db``, checking its schema version.

    Raises:
        UsageError: the file is not an index of this schema version, or is missing and
            ``create`` is false.
    """
    return _open(db, create=create, upgrade=False)[0]


#: SQLite result codes that say the file could not be used now, not that it is no index
#: (``sqlite_errorname`` of the error; extended codes such as SQLITE_READONLY_DBMOVED start the same).
_NOT_NOW = (("SQLITE_BUSY", "the index is locked by another program",
             "wait until the other `dsh-audit index` (or program) holding --db is done, then run again"),
            ("SQLITE_LOCKED", "the index is locked by another program",
             "wait until the other `dsh-audit index` (or program) holding --db is done, then run again"),
            ("SQLITE_READONLY", "the index is read-only", "give a --db file this user can write"),
            ("SQLITE_CANTOPEN", "cannot open the index", "check the --db path and its folder's permissions"),
            ("SQLITE_PERM", "cannot open the index", "check the --db path and its folder's permissions"),
            ("SQLITE_IOERR", "cannot read or write the index", "check the disk and the --db path"),
            ("SQLITE_FULL", "the disk holding the index is full", "free space, or give --db a file on another disk"))


def index_error(exc: sqlite3.Error, location: str, *, hint: str) -> UsageError:
    """One line for a SQLite error on the index at ``location``: a lock, a read-only file or an
    unopenable path named as such (the file may be a sound index), anything else as "not a
    dsh-audit index" with ``hint``."""
    name = str(getattr(exc, "sqlite_errorname", ""))
    for code, what, why in _NOT_NOW:
        if name.startswith(code):
            return UsageError(f"{what}: {exc}", path=location, hint=why)
    return UsageError(f"not a dsh-audit index: {exc}", path=location, hint=hint)


def _open(db: str | os.PathLike[str], *, create: bool, upgrade: bool) -> tuple[sqlite3.Connection, int | None]:
    """:func:`connect_index`; with ``upgrade``, a file of an older schema version is upgraded in
    place, and the version it had is returned beside the connection."""
    location = os.fspath(db)
    kind = special_kind(location) if location else None
    if kind is not None:  # SQLite would write its journal beside it (as root: /dev/null-journal)
        raise UsageError(f"the index is {kind}, not a file", path=location, hint="give --db a file name")
    if not location or (not create and not Path(location).is_file()):
        raise UsageError("no such index", path=location, hint="build one with `dsh-audit index PATH --db FILE`")
    try:
        connection = sqlite3.connect(location)
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "meta" not in tables and (tables or not create):
            connection.close()  # another program's database, or (for stats) an empty one: leave it alone
            raise UsageError("not a dsh-audit index: " + ("it holds other tables" if tables else "it is empty"),
                             path=location, hint="give another --db file, or build one with `dsh-audit index`")
        row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() \
            if "meta" in tables else None
        stored = None if row is None else str(row[0])
        if stored is not None and stored != str(SCHEMA_VERSION) and not (upgrade and stored in _UPGRADES):
            connection.close()
            hint = ("run `dsh-audit index PATH --db FILE` on the logs to upgrade it in place"
                    if stored in _UPGRADES else "delete the file and index again")
            raise UsageError(f"index schema version {stored}, this dsh-audit reads {SCHEMA_VERSION}", path=location,
                             hint=hint)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        for table in _UPGRADES.get(stored or "", ()):
            connection.execute(f"DROP TABLE IF EXISTS {table}")
        if stored in _UPGRADES:
            connection.execute("UPDATE sessions SET options = NULL")  # read every log given again
        for statement in _SCHEMA:
            connection.execute(statement)
        connection.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        connection.commit()
    except sqlite3.DatabaseError as exc:
        raise index_error(exc, location, hint="give another --db file, or delete this one") from None
    return connection, None if stored in (None, str(SCHEMA_VERSION)) else int(str(stored))


def _insert(connection: sqlite3.Connection, table: str, cls: type, rows: Iterable[Any]) -> None:
    names = [f.name for f in fields(cls)]
    values = attrgetter(*names)
    connection.executemany(f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))})",
                           (tuple(map(_storable, values(row))) for row in rows))


def _storable(value: Any) -> Any:
    """``value`` as SQLite can hold it: a lone surrogate (valid in a JSON log, and DSH writes what
    it is given) becomes its ``\\udXXX`` escape, since SQLite text must be UTF-8."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
    return value


def _store(connection: sqlite3.Connection, record: SessionRecord) -> None:
    with connection:
        for table in ("requests", "breaks", "costs", "sessions"):
            connection.execute(f"DELETE FROM {table} WHERE path = ?", (_storable(record.path),))
        values = [_storable(getattr(record, name)) for name in _SESSION_COLUMNS]
        connection.execute(
            f"INSERT INTO sessions ({', '.join(_SESSION_COLUMNS)}, notes, indexed_at) "
            f"VALUES ({', '.join('?' * (len(_SESSION_COLUMNS) + 2))})",
            (*values, _storable("\n".join(record.notes)), time.time()))
        _insert(connection, "requests", RequestRow, record.requests)
        _insert(connection, "breaks", BreakRow, record.breaks)
        _insert(connection, "costs", CostRow, record.costs)


def _stale(connection: sqlite3.Connection, paths: Sequence[str], options: str) -> list[str]:
    """The paths whose file differs from its stored row (or has none)."""
    stored = {row[0]: row[1:] for row in connection.execute("SELECT path, size, mtime_ns, options FROM sessions")}
    stale: list[str] = []
    for path in paths:
        try:
            stat = os.stat(path)
        except OSError:
            stale.append(path)  # the audit reports why
            continue
        if stored.get(_storable(path)) != (stat.st_size, stat.st_mtime_ns, options):
            stale.append(path)
    return stale


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
               capture: str | os.PathLike[str] | None = None) -> IndexSummary:
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
    options = options_key(lenient=lenient, max_version=max_version, attribution=attribution, cache=cache, prices=book,
                          routes=routes_key, capture=given)
    task = partial(audit_group, lenient=lenient, max_version=max_version, attribution=attribution, cache=cache,
                   prices=book, routes=routes, routes_key=routes_key, capture=given)
    if os.fspath(db):  # never the logs, the captures they are compared with, or the route file
        ProtectedInputs.of(logs, files=[capture, routes, *(find_capture(log) for log in logs)]).guard(db, what="index")
    paths = list(dict.fromkeys(str(Path(p).resolve()) for p in logs))
    connection, upgraded = _open(db, create=True, upgrade=True)
    failed: list[tuple[str, str]] = []
    warnings: list[str] = []
    lost = 0

    def keep_warnings(result: GroupResult[SessionRecord]) -> None:
        warnings.extend(warning for found in result.route_warnings.values() for warning in found)

    try:
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
                        upgraded_from=upgraded, warnings=tuple(warnings))
