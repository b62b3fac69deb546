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
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from ..log import ProtectedInputs, special_kind
from ..runner import SessionTaskError, iter_many
from ..session import Failure, GroupResult, home_routes_key, routes_from, run_groups
from ..cache import PriceBook, load_prices
from ..capture import find_capture
from ._audit import audit_group, options_key
from ._copies import one_session
from ._db import index_error, open_index
from ._price_meta import record_prices
from ._rows import SessionRecord
from ._store import drop_ambiguous, is_gone, prune, remove_rows, stale_paths, storable, store_record

__all__ = ["IndexSummary", "index_logs"]


def _price_paths(files: tuple[str, ...]) -> tuple[str, ...]:
    """The files of a price table (:attr:`dsh_audit.cache.PriceBook.files`) by absolute path, as the
    index records them, so that ``stats`` reads them again from any folder: a ``--prices`` file by
    its path; a ``pyproject.toml``'s table, named ``PATH [tool.dsh-audit.prices]``, by its path
    before `` [tool.`` when that is a file (a ``--prices`` file of such a name is a file itself);
    the first, ``packaged``, as it is.

    Example:
        >>> _price_paths(("packaged", "/p/a/../mine.json", os.path.join(os.getcwd(), "x.json"))) == (
        ...     "packaged", "/p/mine.json", os.path.join(os.getcwd(), "x.json"))
        True
    """
    named = list(files[:1]) if files[:1] == ("packaged",) else []
    for name in files[len(named):]:
        head, mark, tail = name.partition(" [tool.")
        if mark and not os.path.isfile(name) and os.path.isfile(head):
            named.append(os.path.abspath(head) + mark + tail)
        else:
            named.append(os.path.abspath(name))
    return tuple(named)


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
            refused; and logs whose task failed or that are no file (a FIFO, a device: no
            session, refused or not), ``lost``.
        lost: how many of ``failed`` were not stored (their task failed, or they are no file:
            the next run tries again).
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
        rebuilt: how many of ``indexed`` were read again though their file is unchanged, because
            another build of dsh-audit stored them (:func:`~dsh_audit.fleet._audit.code_fingerprint`):
            an upgrade re-reads every log, and :attr:`rebuilt_note` says why (a log read again but
            not stored, ``lost`` or a copy, is not counted).
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
    rebuilt: int = 0

    @property
    def refused(self) -> int:
        """How many of ``indexed`` are logs DSH would refuse, stored with their error."""
        return len(self.failed) - self.lost - self.refused_unchanged

    @property
    def rebuilt_note(self) -> str | None:
        """Why the :attr:`rebuilt` logs were read again, one sentence (``index``'s summary line and
        :meth:`to_json`'s ``notes`` say it); None when there are none.

        Example:
            >>> IndexSummary(db="i.sqlite", seen=2, indexed=2, skipped=0, failed=(), lost=0, seconds=0.1,
            ...              rebuilt=2).rebuilt_note
            '2 log(s) re-read: dsh-audit changed since they were indexed'
        """
        return _REBUILT.format(self.rebuilt) if self.rebuilt else None

    def to_json(self) -> dict[str, Any]:
        # a list of records is ``*_details`` (``failed`` would read as a count, as ``refused`` is);
        # the logs removed are counted by ``removed_paths``' length (``removed`` is a tools change's list)
        note = self.rebuilt_note
        return {"db": self.db, "seen": self.seen, "indexed": self.indexed, "refused": self.refused,
                "rebuilt": self.rebuilt, "skipped": self.skipped,
                "failure_details": [{"path": path, "error": error} for path, error in self.failed],
                "lost": self.lost, "removed_paths": list(self.removed),
                "seconds": round(self.seconds, 3), "upgraded_from": self.upgraded_from,
                "warnings": list(self.warnings), "refused_unchanged": self.refused_unchanged,
                "replaced_paths": list(self.replaced), "copies": list(self.copies),
                "notes": [*self.notes, *((note,) if note else ())]}


#: Why logs whose files did not change were read again (:attr:`IndexSummary.rebuilt_note`).
_REBUILT = "{} log(s) re-read: dsh-audit changed since they were indexed"


def _options(path: str, *, routes: str | None, given: bool, **options: Any) -> str:
    """The options the row of the log at ``path`` is made with (:func:`options_key`): the route
    file's fingerprint (``routes``) when one is ``given``, else that of the log's home patch layer
    (:func:`dsh_audit.session.home_routes_key`), as :func:`audit_group` keys its records."""
    return options_key(routes=routes if given else home_routes_key(path), log=path, **options)


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
        ProtectedInputs.of(logs, files=[capture, routes, *(find_capture(log) for log in logs)]).guard(
            db, what="index", hint="give --db another path")
    paths = list(dict.fromkeys(os.path.realpath(p) for p in logs))  # a symlink loop stays as given
    connection, upgraded = open_index(db, create=True, upgrade=True)
    failed: dict[str, str] = {}
    warnings: list[str] = []
    replaced: list[str] = []
    copies: list[str] = []
    notes: list[str] = []
    lost = rebuilt = 0

    def keep_warnings(result: GroupResult[SessionRecord]) -> None:
        for found in result.route_warnings.values():
            for line in found:
                if getattr(line, "level", "warning") != "note":
                    warnings.append(line)
                elif line not in notes:  # the home's route layers (RouteNote): said once, as a note
                    notes.append(line)

    try:
        record_prices(connection, book.fingerprint, _price_paths(book.files))  # where its rates came from, for stats
        dropped = drop_ambiguous(connection)
        if dropped:
            notes.append(f"{len(dropped)} stored log(s) whose path or session id holds a \\udXXX escape dropped: an "
                         "earlier dsh-audit stored it ambiguously; each is read again when given")
        given_stored = {storable(path) for path in paths}
        removed = prune(connection, [storable(os.path.realpath(root)) for root in roots], list(given_stored))
        stale = stale_paths(connection, paths, options)
        runs: dict[str, Any] = {"jobs": jobs, "engine": engine, "scheduler": scheduler, "progress": progress}
        results = run_groups(stale.paths, task, on_group=keep_warnings, **runs) if audit is None else \
            [r.value if r.value is not None else Failure(r.path, r.error or SessionTaskError("no record"))
             for r in iter_many(stale.paths, audit, **runs)]
        for path, record in zip(stale.paths, results):
            if isinstance(record, SessionRecord) and record.error is not None and special_kind(path):
                # a FIFO, a device: no log, never a refused session; said, not stored, as a lost task
                with connection:  # rows an earlier run stored of it
                    remove_rows(connection, [storable(path)])
                failed[path] = record.error
                lost += 1
            elif isinstance(record, SessionRecord):
                superseded, instead = one_session(connection, record, given_stored)
                if instead is not None:
                    with connection:  # rows it had from an earlier run, when it held other lines
                        remove_rows(connection, [storable(path)])
                    copies.append(path)
                    notes.append(f"one session ({record.session_id}) in two files: the index keeps {instead}, "
                                 f"the file the other commands read; {path} not stored")
                    continue
                store_record(connection, record, superseded)
                rebuilt += path in stale.rebuilt  # stored (refused or not): counted once its rows are in
                replaced.extend(superseded)
                notes.extend(f"one session ({record.session_id}) in two files: {path} replaces {old} in the "
                             "index, " + ("which is no longer there" if is_gone(old) else "the file the other commands read")
                             for old in superseded)
                if record.error is not None:
                    failed[path] = record.error
            else:
                failed[path] = str(record.error)
                lost += 1
    except sqlite3.DatabaseError as exc:  # tables of another layout under the same schema version
        raise index_error(exc, os.fspath(db), hint="give another --db file (keep this one: it may hold data), and build it with `dsh-audit index PATH --db FILE`") from None
    finally:
        connection.close()
    failed.update(stale.refused)  # an unchanged refused log: its stored error said again, the file not read
    return IndexSummary(db=os.fspath(db), seen=len(paths), indexed=len(stale.paths) - lost - len(copies),
                        skipped=len(paths) - len(stale.paths),
                        failed=tuple((path, failed[path]) for path in paths if path in failed), lost=lost,
                        seconds=time.perf_counter() - started, upgraded_from=upgraded, warnings=tuple(warnings),
                        removed=removed, refused_unchanged=len(stale.refused), replaced=tuple(replaced),
                        copies=tuple(copies), notes=tuple(notes), rebuilt=rebuilt)
