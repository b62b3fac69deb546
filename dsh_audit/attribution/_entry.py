"""Attribution entry points that start from paths: whole folders at once, or one log streamed.

:func:`attribute_paths` discovers every log and attributes each one in its own task (worker
processes with ``jobs``), a fork or subagent child together with its parent (among the given logs,
or by default found beside the child), through :func:`~dsh_audit.attribution.attribute_sessions`.
:func:`iter_attribute` attributes one log while it is replayed, holding only what the next
comparison needs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from .._batch import SessionOutcome, replay_path
from ..errors import UnsupportedFormatError
from ..log import discover, read_log
from ..replay import Request, iter_requests
from ._attribute import _Attributor, _Session, attribute_sessions
from ._events import collect_evidence
from ._model import SessionAttribution, Transition
from ._related import _walk

__all__ = ["attribute_paths", "iter_attribute"]


@dataclass
class _Failed(SessionOutcome):
    """A log that could not be attributed: its error and the warnings its reader gave (picklable)."""

    read_warnings: tuple[str, ...] = ()

    @property
    def warnings(self) -> list[str]:
        return list(self.read_warnings)


def _replayed(path: str, *, lenient: bool, limit: dict[str, int]) -> SessionOutcome:
    outcome = replay_path(path, lenient=lenient, **limit)
    log = outcome.log  # an imported (Claude Code, Codex) log has no events to cite
    if outcome.error is None and log is not None and log.header.raw.get("type") == "imported":
        outcome.error = UnsupportedFormatError(f"a {log.header.raw.get('format')} log: break attribution needs the "
                                               "events of a DSH session log", path=outcome.path,
                                               hint="`dsh-audit requests` and `dsh-audit cache` read imported sessions")
    return outcome


def _attribute_task(path: str, *, related: dict[str, tuple[str, ...]], lenient: bool, limit: dict[str, int],
                    adapter: str | None) -> SessionAttribution | _Failed:
    """Attribute one log with its parent (a top-level function, so that worker processes can run it).

    ``related[path]`` lists, in discovery order, the log itself and every log holding its parent
    session; the parent is the last of them that replays, as when all logs are attributed together.
    """
    group = related.get(path, (path,))
    outcomes = {p: _replayed(p, lenient=lenient, limit=limit) for p in group}
    own = outcomes[path]
    if own.error is not None:
        return _Failed(own.path, error=own.error, read_warnings=tuple(own.warnings))
    usable = {p: (o.log, o.requests) for p in group if (o := outcomes[p]).error is None and o.log is not None}
    if path not in usable:
        return _Failed(own.path, error=UnsupportedFormatError("no session log to attribute", path=own.path))
    results = attribute_sessions(list(usable.values()), lenient=lenient, adapter=adapter)
    return results[list(usable).index(path)]


def attribute_paths(paths: Iterable[str | os.PathLike[str]], *, lenient: bool = False,
                    max_version: int | None = None, adapter: str | None = "deepseek",
                    ancestors: bool = True, jobs: int = 1, engine: str = "local", scheduler: str | None = None,
                    progress: Callable[[int, int], None] | None = None,
                    ) -> tuple[list[SessionAttribution], list[SessionOutcome]]:
    """Discover, replay and attribute every log under ``paths``, children with their parents.

    Each log is attributed in its own task (in worker processes with ``jobs``, see
    :func:`dsh_audit.fleet.iter_many`); a fork or subagent child's task also replays its parent,
    found among the given logs (by session id) or, with ``ancestors``, beside the child. The
    result is the same, in the same order, for every ``jobs``.

    Args:
        paths: log files or folders (see :func:`dsh_audit.log.discover`).
        lenient: header leniency (tokenised test fixtures).
        max_version: the newest log format version to read (None: every released one).
        adapter: see :func:`attribute_sessions`.
        ancestors: also read the parent log of each fork or subagent child when it lies beside the
            child, so the child's first request is compared with it; parents found this way are
            used for comparison only and get no attribution of their own.
        jobs: worker processes (1: this process; 0: every CPU).
        engine: ``local`` or ``dask``; scheduler: the Dask scheduler address.
        progress: called as ``progress(done, total)`` after each given log.

    Returns:
        The attributions of the given logs that replayed, and the outcomes of those that failed,
        each in the order discovered.

    Raises:
        UnreadableError: a path does not exist or holds no log. UsageError: bad ``jobs`` or ``engine``.
    """
    from ..fleet import iter_many  # late import: fleet is a layer above this package

    given = discover(list(paths))
    every, ids = _walk(given, ancestors=ancestors)
    holding: dict[str, list[str]] = {}
    for p in every:
        sid = ids[p][0]
        if sid is not None:
            holding.setdefault(sid, []).append(os.fspath(p))
    related: dict[str, tuple[str, ...]] = {}
    for p in given:
        parent = ids[p][1]
        if parent is not None and parent in holding:
            members = {os.fspath(p), *holding[parent]}
            related[os.fspath(p)] = tuple(os.fspath(q) for q in dict.fromkeys(every) if os.fspath(q) in members)
    limit = {} if max_version is None else {"max_version": max_version}
    task = partial(_attribute_task, related=related, lenient=lenient, limit=limit, adapter=adapter)
    mine: list[SessionAttribution] = []
    failed: list[SessionOutcome] = []
    for result in iter_many(given, task, jobs=jobs, engine=engine, scheduler=scheduler, progress=progress):
        if isinstance(result.value, SessionAttribution):
            mine.append(result.value)
        elif isinstance(result.value, _Failed):
            failed.append(result.value)
        else:
            assert result.error is not None
            failed.append(_Failed(result.path, error=result.error))
    return mine, failed


def _first_chunk_order(requests: Iterable[Request]) -> Iterator[Request]:
    """Reorder a replay stream into first-chunk order with a bounded buffer.

    Replay yields a step's loop attempts when the step ends and an auxiliary call (compaction,
    title) as soon as it is logged, so an auxiliary call made inside a step can come before that
    step's earlier attempts. Loop requests themselves arrive in order; an auxiliary call is held
    only until the next loop request shows where it belongs.
    """
    held: list[Request] = []
    for request in requests:
        if request.kind != "loop":
            held.append(request)
            continue
        ready = sorted((r for r in held if r.first_chunk_seq < request.first_chunk_seq), key=lambda r: r.first_chunk_seq)
        held = [r for r in held if r.first_chunk_seq >= request.first_chunk_seq]
        yield from ready
        yield request
    yield from sorted(held, key=lambda r: r.first_chunk_seq)


def iter_attribute(path: str | os.PathLike[str], *, lenient: bool = False, max_version: int | None = None,
                   adapter: str | None = "deepseek") -> Iterator[Transition]:
    """Attribute one log while it is replayed, in first-chunk order, with bounded memory.

    Holds the previous request of each conversation and the log's evidence events, never the
    whole request list, so a log of any length is attributed in memory bounded by its live
    surface. A fork or subagent child's first request is reported as ``first`` here (its parent is
    not read); use :func:`attribute_paths` to compare children with their parents.

    Example:
        >>> [t.cause for t in iter_attribute("session.jsonl") if t.verdict == "break"]  # doctest: +SKIP
        ['compaction']
    """
    options: dict[str, Any] = {"lenient": lenient}
    if max_version is not None:
        options["max_version"] = max_version
    log = read_log(path, **options)
    evidence = collect_evidence(read_log(path, **options))
    session = _Session(log.path, log.header, [], lenient=lenient, evidence=evidence)
    attributor = _Attributor([session], adapter=adapter)
    yield from attributor.walk(session, _first_chunk_order(iter_requests(log)))
