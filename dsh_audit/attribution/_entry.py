"""Attribution entry points that start from paths: whole folders at once, or one log streamed.

:func:`attribute_paths` discovers and replays every log (and, by default, the parents of fork and
subagent children found beside them) and attributes them together with
:func:`~dsh_audit.attribution.attribute_sessions`. :func:`iter_attribute` attributes one log while
it is replayed, holding only what the next comparison needs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .._batch import SessionOutcome, replay_path
from ..errors import UnsupportedFormatError
from ..log import discover, read_log
from ..replay import Request, iter_requests
from ._attribute import _Attributor, _Session, attribute_sessions
from ._events import collect_evidence
from ._model import SessionAttribution, Transition
from ._related import with_ancestors

__all__ = ["attribute_paths", "iter_attribute"]


def attribute_paths(paths: Iterable[str | os.PathLike[str]], *, lenient: bool = False,
                    max_version: int | None = None, adapter: str | None = "deepseek",
                    ancestors: bool = True) -> tuple[list[SessionAttribution], list[SessionOutcome]]:
    """Discover, replay and attribute every log under ``paths`` together.

    Args:
        paths: log files or folders (see :func:`dsh_audit.log.discover`).
        lenient: header leniency (tokenised test fixtures).
        max_version: the newest log format version to read (None: every released one).
        adapter: see :func:`attribute_sessions`.
        ancestors: also read the parent log of each fork or subagent child when it lies beside the
            child, so the child's first request is compared with it; parents found this way are
            used for comparison only and get no attribution of their own.

    Returns:
        The attributions of the given logs that replayed, and the outcomes of those that failed.
    """
    given = discover(list(paths))
    every = with_ancestors(given) if ancestors else given
    wanted = {p.resolve() for p in given}
    limit = {} if max_version is None else {"max_version": max_version}
    outcomes = [replay_path(p, lenient=lenient, **limit) for p in every]
    for o in outcomes:  # an imported (Claude Code, Codex) log has no events to cite
        if o.error is None and o.log is not None and o.log.header.raw.get("type") == "imported":
            o.error = UnsupportedFormatError(f"a {o.log.header.raw.get('format')} log: break attribution needs the "
                                             "events of a DSH session log", path=o.path,
                                             hint="`dsh-audit requests` and `dsh-audit cache` read imported sessions")
    good = [(o.log, o.requests) for o in outcomes if o.error is None and o.log is not None]
    results = attribute_sessions(good, lenient=lenient, adapter=adapter)
    mine = [a for a in results if a.path is not None and Path(a.path).resolve() in wanted]
    failed = [o for o in outcomes if o.error is not None and Path(o.path).resolve() in wanted]
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
