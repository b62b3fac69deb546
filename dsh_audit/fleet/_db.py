"""The fleet index file: its SQLite schema (a table per row type of :mod:`dsh_audit.fleet._rows`),
opening it with its schema version checked (and upgraded, for ``index``), a SQLite error on it
as one line, the check that its values are of the types ``index`` writes (:func:`check_values`),
and the index seen through a window of send times (:func:`window_views`, ``stats --since``).
Nothing here reads a log: ``stats`` opens the index with this module alone.

Tables (column names are the fields of :class:`SessionRecord`, :class:`RequestRow`,
:class:`CostRow` and :class:`BreakRow`): ``sessions`` keyed by the log's absolute path,
``requests`` and ``costs`` (the priced ledger) keyed by ``(path, idx)``, ``breaks`` keyed by
``(path, request)``, and ``meta`` (the schema version, the form text is stored in:
:func:`~dsh_audit.fleet._store.drop_ambiguous`, and the files of each price table a ledger was
priced with: :mod:`dsh_audit.fleet._price_meta`).

Schema versions: 1 had no ``costs`` table; 2 adds it; 3 adds its ``tier`` column; 4 stores what a
break whose cache reads were not logged lost as unknown (NULL ``lost_tokens``, ``lost_cost`` and
``lost`` in ``requests`` and ``breaks``, NULL ``lost_cost`` in ``costs``), where 3 stored 0; 5 adds
the ``requests`` column ``reusable_cache_read``, what a request's lost tokens are measured from
(issue 11: every lost figure beside its base).
``index`` upgrades a file of version 1 to 4 in place (a column a version lacks is added, NULL:
:func:`_add_columns`): from 1 or 2 the ``costs`` table is made anew, empty (a version-2 row cannot tell a base-rate request from one billed at a long-context
tier); the rows of such breaks are set unknown (:data:`_UNKNOWN_LOST`: a break row whose cache read
is NULL); and every stored log is marked changed, so each log given is read again and priced; a
log not given stays stored (without a ledger, from 1 or 2, until it is: ``stats`` counts it as
``sessions_unpriced``; without its reusable cache reads, from 1 to 4: ``stats`` sums them as
unknown, null). ``stats`` refuses a file of an older version until then. A file of a
newer version was written by a newer dsh-audit: both refuse it, with the advice to upgrade dsh-audit (deleting it would lose what it holds).
"""

from __future__ import annotations

import itertools
import math
import os
import shutil
import sqlite3
import tempfile
from urllib.parse import quote
from dataclasses import fields
from pathlib import Path

from .._paths import refuse_empty_paths
from ..errors import UsageError
from ..log import special_kind
from ._rows import BreakRow, CostRow, RequestRow, SessionRecord

__all__ = ["SCHEMA_VERSION", "SESSION_COLUMNS", "check_values", "connect_index", "index_error", "open_index",
           "window_views"]

SCHEMA_VERSION = 5
# The versions index_logs upgrades in place, each with the tables its upgrade makes anew (created
# empty); every stored session is then marked changed, so the next run reads each log given again.
_UPGRADES: dict[str, tuple[str, ...]] = {"1": ("costs",), "2": ("costs",), "3": (), "4": ()}
_BREAK_CLASSES = "('break_explained', 'break_unattributed', 'break_unexplained')"
# A stored request that is a break whose cache read was not logged (version 4 on: what it lost is
# unknown, NULL), of the ``requests`` row ``r``.
_UNKNOWN_BREAK = f"r.actual_cache_read IS NULL AND r.classification IN {_BREAK_CLASSES}"
#: What upgrading an index of version 1 to 3 does to the rows of a break whose cache reads were not
#: logged, which those versions stored as having lost 0: unknown (NULL), as version 4 writes them.
_UNKNOWN_LOST = (
    "UPDATE requests AS r SET lost_tokens = NULL, lost_cost = NULL, lost = NULL WHERE " + _UNKNOWN_BREAK,
    "UPDATE breaks SET lost_tokens = NULL, lost_cost = NULL WHERE EXISTS (SELECT 1 FROM requests AS r "
    f"WHERE r.path = breaks.path AND r.idx = breaks.request AND {_UNKNOWN_BREAK})",
    "UPDATE costs SET lost_tokens = NULL, lost_cost = NULL WHERE EXISTS (SELECT 1 FROM requests AS r "
    f"WHERE r.path = costs.path AND r.idx = costs.idx AND {_UNKNOWN_BREAK})",
)

_TYPES = {"int": "INTEGER", "float": "REAL", "str": "TEXT", "bool": "INTEGER"}
_SESSION_SKIP = ("requests", "breaks", "costs", "notes")  # rows of other tables; notes are stored joined
SESSION_COLUMNS = tuple(f.name for f in fields(SessionRecord) if f.name not in _SESSION_SKIP)
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
    # index looks a session up by id to store it once (made in place in an index of this version)
    "CREATE INDEX IF NOT EXISTS sessions_id ON sessions (session_id)",
)


def connect_index(db: str | os.PathLike[str], *, create: bool = True) -> sqlite3.Connection:
    """Open (and with ``create`` make) the index at ``db``, checking its schema version. Without
    ``create`` the file is only read (SQLite's ``mode=ro``: nothing is written to it, nor beside
    it: :func:`_connect`), so ``stats`` answers from an index in a file or folder this user cannot
    write, and leaves its folder as it found it.

    Raises:
        UsageError: the file is not an index of this schema version, or is missing and
            ``create`` is false.
    """
    return open_index(db, create=create, upgrade=False)[0]


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


#: The hint of an index file that cannot be read: another file, never "delete" (it may hold rows
#: another program, or a ``-wal`` file beside a copy, can still give back).
_MOVE_HINT = "give another --db file (keep this one: it may hold data), and build it with `dsh-audit index PATH --db FILE`"


def _version_hint(stored: str) -> str:
    """What to do with an index of schema version ``stored``, which this dsh-audit cannot use as it
    is: upgrade an older one in place; read a newer one with the newer dsh-audit that wrote it.

    Example:
        >>> _version_hint("9")
        'it was written by a newer dsh-audit: upgrade dsh-audit (pip install -U dsh-audit) to read it'
    """
    if stored in _UPGRADES:
        return "run `dsh-audit index PATH --db FILE` on the logs to upgrade it in place"
    try:
        newer = int(stored) > SCHEMA_VERSION
    except ValueError:  # no number (or one too long to read): no version of dsh-audit wrote it
        newer = False
    if newer:
        return "it was written by a newer dsh-audit: upgrade dsh-audit (pip install -U dsh-audit) to read it"
    return _MOVE_HINT


class _IndexConnection(sqlite3.Connection):
    """A connection that writes the index (``index``): closing it leaves the file self-contained.
    Its rows are moved out of the ``-wal`` file into the file itself (a ``TRUNCATE`` checkpoint),
    so the one file can be copied, moved or read from a read-only folder alone; SQLite removes the
    ``-wal`` and ``-shm`` files as the last connection closes. While a reader (a ``stats`` run)
    holds the file they stay, the ``-wal`` empty (the checkpoint moved every row into the file
    itself): :func:`_connect` reads the file alone then; should the checkpoint itself fail, the
    rows stay in ``-wal``, which :func:`_connect` reads too. The file stays in WAL mode (leaving
    it would need every other connection gone, and the next writer would wait for none). Only an index :func:`_prepare`
    made or checked (``prepared``) is changed: another program's database is left as it was."""

    prepared = False

    def close(self) -> None:
        if not self.prepared:
            super().close()
            return
        try:
            self.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.Error:  # locked by a reader, or the connection was never an index: rows left in -wal
            pass
        super().close()


def _connect(location: str, *, read_only: bool) -> sqlite3.Connection:
    """A connection to the file ``location``; ``read_only``: opened with SQLite's ``mode=ro`` (a
    URI of its absolute path, every character that is not a plain path character %-escaped), and
    the folder left as it was found. A WAL index read that way makes ``-wal`` and ``-shm`` files
    beside it that a read-only connection cannot remove, so when no writer is at work (no ``-wal``
    file beside it, or an empty one: the index was closed, everything in the file itself) the file
    is read as ``immutable``: nothing is made beside it. While a ``-wal`` file holding rows is there
    (an ``index`` writing, or one that stopped) it is read through that file, as SQLite's readers
    do; in a folder this user cannot write (where SQLite cannot make its shared-memory file) the
    file and its ``-wal`` are read from a copy in a temporary folder (:func:`_read_copy`)."""
    if not read_only:
        return sqlite3.connect(location, factory=_IndexConnection)
    absolute = os.path.abspath(location)
    try:
        logged = os.path.getsize(absolute + "-wal") > 0
    except OSError:  # no -wal file: everything is in the file itself
        logged = False
    if logged and not os.access(os.path.dirname(absolute), os.W_OK):
        return _read_copy(absolute)
    return sqlite3.connect(_read_only_uri(absolute, immutable=not logged), uri=True)


def _read_only_uri(absolute: str, *, immutable: bool = False) -> str:
    """SQLite's read-only URI of the file ``absolute``: its file-system bytes percent-encoded, so
    that a name that is not UTF-8 (``bad\\xff/``, held as a surrogate escape) names the same file as
    it does to ``index`` (fuzz round 34B: ``quote`` of the str raised UnicodeEncodeError, exit 3)."""
    return f"file:{quote(os.fsencode(absolute))}?mode=ro{'&immutable=1' if immutable else ''}"


def _read_copy(absolute: str) -> sqlite3.Connection:
    """The index at ``absolute`` with the rows of its ``-wal`` file applied, in memory: both files
    copied to a temporary folder, read there (SQLite applies the ``-wal``), and the folder
    removed. Nothing is written beside ``absolute``.

    Raises:
        sqlite3.Error: as reading the copy raises it.
        UsageError: a file cannot be copied (the temporary folder is full or unwritable).
    """
    memory = sqlite3.connect(":memory:")
    try:
        with tempfile.TemporaryDirectory(prefix="dsh-audit-index-") as folder:
            copy = os.path.join(folder, "index.sqlite")
            shutil.copyfile(absolute, copy)
            shutil.copyfile(absolute + "-wal", copy + "-wal")
            source = sqlite3.connect(_read_only_uri(copy), uri=True)
            try:
                source.backup(memory)
            finally:
                source.close()
    except OSError as exc:
        memory.close()
        raise UsageError(f"its -wal file holds rows, and the index cannot be copied to a temporary folder to "
                         f"read them: {exc.strerror or exc}", path=absolute,
                         hint="run stats where the --db folder can be written, or set TMPDIR to a folder with "
                              "room") from None
    return memory


def _stored_version(connection: sqlite3.Connection, location: str, *, create: bool) -> str | None:
    """The schema version the index holds (None: a new file, or one that holds no row); a
    UsageError (the connection closed) for a database of another program, (without ``create``) an
    empty one, or one whose rows come with no schema version (its ``meta`` row deleted)."""
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "meta" not in tables and (tables or not create):
        connection.close()  # another program's database, or (for stats) an empty one: leave it alone
        raise UsageError("not a dsh-audit index: " + ("it holds other tables" if tables else "it is empty"),
                         path=location,
                         hint="give another --db file, or build one with `dsh-audit index PATH --db FILE`")
    row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() \
        if "meta" in tables else None
    quoted = ('"' + table.replace('"', '""') + '"' for table in sorted(tables))
    if row is None and any(connection.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is not None
                           for table in quoted):
        # rows, and no version that says what they are (the row deleted, or written by another
        # program): read as any version, they would be summed wrong; one that holds no row is new
        # (a first `index` run stopped before it wrote the version)
        connection.close()
        raise UsageError("not a dsh-audit index of a version this release reads: its meta table holds no "
                         "schema_version", path=location, hint=_MOVE_HINT)
    return None if row is None else str(row[0])


def _prepare(connection: sqlite3.Connection, stored: str | None) -> None:
    """Make (or upgrade, from a version of :data:`_UPGRADES`) the schema, in WAL mode, and record its version."""
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    for table in _UPGRADES.get(stored or "", ()):
        connection.execute(f"DROP TABLE IF EXISTS {table}")
    if stored in _UPGRADES:
        connection.execute("UPDATE sessions SET options = NULL")  # read every log given again
    for statement in _SCHEMA:
        connection.execute(statement)
    if stored in _UPGRADES:
        _add_columns(connection)
    for statement in _UNKNOWN_LOST if stored in _UPGRADES else ():
        connection.execute(statement)
    connection.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
    connection.commit()
    if isinstance(connection, _IndexConnection):
        connection.prepared = True  # closing it checkpoints the -wal file into the index


def _add_columns(connection: sqlite3.Connection) -> None:
    """Add to each table of an index being upgraded the columns of its row type it lacks (version 4's
    ``requests`` has no ``reusable_cache_read``), NULL in every stored row until its log is read
    again: a row of a log not given in the upgrading run keeps it unknown, never 0."""
    for table, cls in (("requests", RequestRow), ("breaks", BreakRow), ("costs", CostRow)):
        present = {str(row[1]) for row in connection.execute(f"PRAGMA table_info({table})")}
        for f in fields(cls):
            if f.name not in present:
                connection.execute(f"ALTER TABLE {table} ADD COLUMN {f.name} {_column_type(str(f.type))}")


#: A number per index made by this process (its temporary file's name).
_MADE = itertools.count()


#: What SQLite adds to an index's name for the files it keeps beside it; the longest is the journal
#: of a file not yet in WAL mode (a new one).
_LONGEST_SUFFIX = len("-journal")


def _refuse_long_name(location: str) -> None:
    """Refuse a new index whose file name leaves no room for the ``-journal`` SQLite names beside it
    (it would fail as "unable to open database file", which names no cause).

    Raises:
        UsageError: naming the limit and the longest name that fits.
    """
    folder, name = os.path.split(os.path.abspath(location))
    try:
        limit = os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):  # the folder does not exist (its own error follows), or no such limit
        return
    size = len(os.fsencode(name))
    if size + _LONGEST_SUFFIX > limit:
        raise UsageError(f"the index's file name is {size} bytes long: SQLite keeps a file named as it plus "
                         f"-journal beside it, past this file system's limit of {limit} bytes", path=location,
                         hint=f"give --db a file name of at most {limit - _LONGEST_SUFFIX} bytes")


def _make_new(location: str) -> None:
    """Put a new, empty index (its schema and version) at ``location``, which does not exist, in one
    step: made under a temporary name in the same folder, closed (self-contained) and linked into
    place, so a reader (``stats``) never finds a half-made file there. Should another program make
    ``location`` first, its file is kept and the temporary one removed.

    Raises:
        sqlite3.Error: the temporary file cannot be made (the folder is not writable).
    """
    folder = os.path.dirname(os.path.abspath(location))
    # a short name of its own (the index's name may be as long as the system allows, and SQLite
    # adds "-journal" to it): unique per process and call
    temporary = os.path.join(folder, f".dsh-audit-{os.getpid()}-{next(_MADE)}.new")
    try:
        connection = sqlite3.connect(temporary, factory=_IndexConnection)
        try:
            _prepare(connection, None)
        finally:
            connection.close()
        try:
            os.link(temporary, location)
        except FileExistsError:  # made by another program meanwhile: read as it is
            pass
        except OSError:  # a file system without hard links: moved in place (a rename is one step too)
            if not os.path.lexists(location):
                try:
                    os.replace(temporary, location)
                except OSError as exc:  # named as the user gave it, never by the temporary name
                    raise UsageError(f"cannot make the index: {exc.strerror or exc}", path=location,
                                     hint="check the --db path and its folder's permissions") from None
    finally:
        for leftover in (temporary, *(temporary + suffix for suffix in ("-wal", "-shm", "-journal"))):
            try:
                os.unlink(leftover)
            except OSError:
                pass


def open_index(db: str | os.PathLike[str], *, create: bool, upgrade: bool) -> tuple[sqlite3.Connection, int | None]:
    """:func:`connect_index`; with ``upgrade``, a file of an older schema version is upgraded in
    place, and the version it had is returned beside the connection. Neither ``create`` nor
    ``upgrade``: the file is opened read-only and nothing is written (``stats``)."""
    location = os.fspath(db)
    kind = special_kind(location) if location else None
    if kind is not None:  # SQLite would write its journal beside it (as root: /dev/null-journal)
        raise UsageError(f"the index is {kind}, not a file", path=location, hint="give --db a file name")
    refuse_empty_paths({"--db": location})
    if not create and not Path(location).is_file():
        raise UsageError("no such index", path=location, hint="build one with `dsh-audit index PATH --db FILE`")
    read_only = not create and not upgrade
    try:
        if create and not os.path.lexists(location):
            _refuse_long_name(location)
            _make_new(location)
        connection = _connect(location, read_only=read_only)
        stored = _stored_version(connection, location, create=create)
        if stored is not None and stored != str(SCHEMA_VERSION) and not (upgrade and stored in _UPGRADES):
            connection.close()
            hint = _version_hint(stored)
            raise UsageError(f"index schema version {stored}, this dsh-audit reads {SCHEMA_VERSION}", path=location,
                             hint=hint)
        if not read_only:
            _prepare(connection, stored)
    except sqlite3.DatabaseError as exc:
        raise index_error(exc, location, hint=_MOVE_HINT) from None
    return connection, None if stored in (None, str(SCHEMA_VERSION)) else int(str(stored))


#: The SQLite storage classes each declared column type may hold (``NULL`` in all of them).
_STORED = {"TEXT": ("text",), "INTEGER": ("integer", "real"), "REAL": ("real", "integer")}
#: The largest number a column may hold: far past any count or cost, and summed over any number of
#: rows still a finite double. Money is summed exactly, in whole nano-dollars (``cache/_money.py``:
#: ``usd_nanos`` of each amount, added as integers, read once by ``nanos_usd``: ``usd_total``), an
#: integer that never overflows but reads back as a float only below 1.8e308 USD: amounts of 1e308 would not.
_MAX_REAL = 1e200
#: The JSON columns ``stats`` sums the values of (``json_each``): objects of numbers.
_JSON_NUMBERS = (("requests", "lost"), ("costs", "lost_cost_by_cause"))


def check_values(connection: sqlite3.Connection, location: str) -> None:
    """Refuse an index whose columns hold values of a type ``index`` never writes (a BLOB where
    text belongs, text where a count belongs, an infinite cost, a JSON cause map that is not
    numbers): the file was edited or damaged, and its sums would mean nothing. One scan per table.

    Raises:
        UsageError: naming the first such table and column.
    """
    bad: tuple[str, str] | None = None
    for table in ("sessions", "requests", "breaks", "costs"):
        columns = [(str(row[1]), str(row[2]).upper()) for row in connection.execute(f"PRAGMA table_info({table})")]
        tests = []
        for name, declared in columns:
            kinds = ", ".join(f"'{kind}'" for kind in _STORED.get(declared, ()))
            if kinds:
                bound = f" AND abs(\"{name}\") <= {_MAX_REAL}" if declared != "TEXT" else ""
                tests.append((name, f"(\"{name}\" IS NULL OR (typeof(\"{name}\") IN ({kinds}){bound}))"))
        if not tests:
            continue
        which = " ".join(f"WHEN NOT {test} THEN {index}" for index, (_, test) in enumerate(tests))
        sound = " AND ".join(test for _, test in tests)
        row = connection.execute(f"SELECT CASE {which} END FROM {table} WHERE NOT ({sound}) LIMIT 1").fetchone()
        if row is not None:
            bad = (table, tests[row[0]][0])
            break
    for table, column in () if bad else _JSON_NUMBERS:
        row = connection.execute(f"SELECT 1 FROM {table} WHERE json_type({column}) IS NOT 'object' "
                                 f"AND {column} IS NOT NULL LIMIT 1").fetchone() or connection.execute(
            f"SELECT 1 FROM {table}, json_each({table}.{column}) AS item WHERE {table}.{column} IS NOT NULL "
            f"AND (item.type NOT IN ('integer', 'real') OR abs(item.value) > {_MAX_REAL}) LIMIT 1").fetchone()
        if row is not None:
            bad = (table, column)
            break
    if bad is not None:
        raise UsageError(f"not a dsh-audit index: column {bad[0]}.{bad[1]} holds a value of a type or size "
                         "`dsh-audit index` never writes (the file was edited or damaged)", path=location,
                         hint=_MOVE_HINT)


def window_views(connection: sqlite3.Connection, since: float | None, until: float | None) -> None:
    """Make the index seen through ``connection`` hold only what was sent in ``[since, until)``
    (epoch seconds), as ``dsh-audit usage --since/--until`` sums requests: temporary views named as
    the tables, which SQLite reads before the file's own (its ``temp`` schema comes first), keep the
    ``requests`` and ``costs`` rows sent in the window (one with no send time is left out), the
    attribution ``breaks`` of those requests, and the ``sessions`` with one of them, or refused
    (stored with their error: their times were never read). Nothing is written to the file.

    Raises:
        UsageError: a bound is not a finite number.
    """
    if since is None and until is None:
        return
    if not all(math.isfinite(moment) for moment in (since, until) if moment is not None):
        raise UsageError("the --since/--until window is not a finite time", hint="give a date, or an age such as 7d")
    sent = " AND ".join(f"sent_at {op} {float(moment)!r}" for op, moment in ((">=", since), ("<", until))
                        if moment is not None)  # a float's repr is an SQL number: views take no parameters
    for statement in (
            f"CREATE TEMP VIEW requests AS SELECT * FROM main.requests WHERE {sent}",
            f"CREATE TEMP VIEW costs AS SELECT * FROM main.costs WHERE {sent}",
            "CREATE TEMP VIEW breaks AS SELECT * FROM main.breaks AS b WHERE EXISTS (SELECT 1 FROM temp.requests "
            "AS r WHERE r.path = b.path AND r.idx = b.request)",
            "CREATE TEMP VIEW sessions AS SELECT * FROM main.sessions AS s WHERE s.error IS NOT NULL OR EXISTS "
            "(SELECT 1 FROM temp.requests AS r WHERE r.path = s.path)"):
        connection.execute(statement)
