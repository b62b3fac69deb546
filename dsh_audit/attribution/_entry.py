"""Attribution entry points that start from paths: whole folders at once, or one log streamed.

:func:`attribute_paths` discovers every log and attributes each group of neighbouring logs in its
own task (worker processes with ``jobs``), a fork or subagent child together with its parent (among
the given logs, or by default found beside the child); each log is read once.
:func:`iter_attribute` attributes one log while it is replayed, holding only what the next
comparison needs.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from .. import capture as captures  # names resolved on first use: a log without a capture loads no loader
from ..capture import capture_for
from ..errors import CaptureError, DshAuditError, UnsupportedFormatError
from ..log import Event, SessionLog, discover, foreign_refusal, read_log
from ..replay import Request, SurfaceFold, iter_requests
from ..session import (
    Bodies,
    EvidenceCollector,
    Failure,
    GroupResult,
    Headers,
    LogEvidence,
    RouteEvidence,
    Session,
    SessionGroup,
    attachment_warnings,
    evidence_observer,
    open_group,
    rounds,
    routes_from,
    run_groups,
    window_conflicts,
)
from ._attribute import _Attributor, _Session, attribute_sessions
from ._model import SessionAttribution, Transition

if TYPE_CHECKING:
    from ..wire import PiRoutes

__all__ = ["attribute_group", "attribute_log", "attribute_opened", "attribute_paths", "iter_attribute",
           "refuse_imported"]


def refuse_imported(item: Session | Failure) -> Session | Failure:
    """An imported (Claude Code, Codex) log has no events to cite: a Failure for attribution (as
    :func:`attribute_group` gives it, for a view that attributes an opened group its own way)."""
    if isinstance(item, Session) and item.imported:
        message, hint = foreign_refusal(item.format)  # as every command refuses it
        return Failure(item.path, UnsupportedFormatError(message, path=item.path, line=1, hint=hint),
                       tuple(item.warnings), item.id)
    return item


def attribute_opened(group: SessionGroup, *, adapter: str | None = "auto",
                     capture: str | os.PathLike[str] | None = None) -> dict[str, SessionAttribution | Failure]:
    """Attribute every given DSH session of an opened group (each with the ancestors read beside
    it), in rounds in which a session id appears once: log path -> attribution.

    Each session is compared with what was sent as ``dsh-audit check`` compares it: ``capture``
    (``--capture``) for every log, else the ``wire.jsonl`` found beside each log
    (:func:`dsh_audit.capture.find_capture`); a transition whose captured bodies break the prefix
    where the log records nothing is then an ``unrecorded_mutation`` break. A log with no capture
    is attributed from the log alone. A log whose capture cannot be read is a :class:`Failure`
    holding that error (:func:`dsh_audit.capture.session_captures`); the other logs of the group,
    compared with other captures or none, are attributed as if it were not there.
    """
    found: dict[str, SessionAttribution | Failure] = {}
    for round_ in rounds([s for s in group.given if isinstance(s, Session) and not s.imported]):
        ids = {s.id for s in round_}
        usable = [*round_, *(a for a in group.ancestors if a.id not in ids and not a.imported)]
        failed: dict[str, CaptureError] = {}
        bodies, _ = captures.session_captures(round_, capture, failed=failed)
        found.update((a.path or "", a) for a in attribute_sessions(usable, captures=bodies, adapter=adapter)
                     if a.session_id in ids and a.session_id not in failed)
        found.update((s.path, Failure(s.path, failed[s.id], tuple(s.warnings), s.id, s.header, s.format_version))
                     for s in round_ if s.id in failed)
    return found


def attribute_group(paths: Sequence[str | os.PathLike[str]], *, lenient: bool = False, max_version: int = 4,
                    adapter: str | None = "auto", ancestors: bool = True, routes: str | None = None,
                    capture: str | os.PathLike[str] | None = None) -> GroupResult[SessionAttribution]:
    """Read ``paths`` together (each once, parents beside children too) and attribute every one;
    ``routes`` is a route configuration file (see :func:`dsh_audit.session.open_group`), ``capture``
    what was sent (see :func:`attribute_opened`). A log given alone that is no fork or subagent
    child and has no capture is attributed while it is replayed."""
    headers = Headers(lenient=lenient, max_version=max_version)
    log = headers.lone_root(paths) if capture_for(paths[0], capture) is None else None
    if log is not None:
        return _streamed(log, adapter=adapter, config=routes_from(routes, log=log.path))
    group = open_group(paths, lenient=lenient, max_version=max_version, ancestors=ancestors, routes=routes,
                       headers=headers)
    found = attribute_opened(group, adapter=adapter, capture=capture)
    items = [found[item.path] if isinstance(item, Session) and not item.imported else refuse_imported(item)
             for item in group.given]
    return GroupResult.of(group, items)  # type: ignore[arg-type]


def _streamed(log: SessionLog, *, adapter: str | None, config: PiRoutes | None) -> GroupResult[SessionAttribution]:
    """A log given alone that is no fork or subagent child (no parent to compare with) and has no
    capture (nothing sent to compare with), attributed while it is replayed (:func:`attribute_log`): no request is kept, only the previous one of each
    conversation, so memory stays bounded by the live surface. The same transitions as
    :func:`attribute_opened` (``tests/test_watch.py`` and ``tests/test_one_story.py`` check them
    against the whole-session path)."""
    path = log.path
    evidence = RouteEvidence()
    try:
        bodies = Bodies(config, log=path)
        found = sorted(attribute_log(log, adapter=adapter, bodies=bodies, routes=evidence, config=config),
                       key=lambda t: t.request)
    except DshAuditError as exc:  # DSH refuses the log: its Failure, as reading it whole gives
        return GroupResult([Failure(path, exc.located(path=path), tuple(log.warnings), log.header.id, log.header,
                                    log.format_version)])
    finally:
        log.close()
    warnings = tuple(log.warnings) + tuple(attachment_warnings(bodies.images)) + \
        (tuple(config.notes) + tuple(window_conflicts(evidence, config)) if config is not None else ())
    return GroupResult([SessionAttribution(log.header.id, path, tuple(found))], [], {log.header.id: path},
                       {path: warnings} if warnings else {})


def attribute_paths(paths: Iterable[str | os.PathLike[str]], *, lenient: bool = False,
                    max_version: int | None = None, adapter: str | None = "auto",
                    ancestors: bool = True, jobs: int = 1, engine: str = "local", scheduler: str | None = None,
                    progress: Callable[[int, int], None] | None = None, routes: str | None = None,
                    on_group: Callable[[GroupResult[SessionAttribution]], None] | None = None,
                    capture: str | os.PathLike[str] | None = None,
                    ) -> tuple[list[SessionAttribution], list[Failure]]:
    """Discover, read and attribute every log under ``paths``, children with their parents.

    Logs are read in groups of neighbours, each group one task (in worker processes with
    ``jobs``), every log read once (:func:`dsh_audit.session.run_groups`); a fork or subagent child
    is compared with its parent, found among the given logs or, with ``ancestors``, beside the
    child (such parents are read for comparison only). The result is the same, in the same order,
    for every ``jobs``.

    Args:
        paths: log files or folders (see :func:`dsh_audit.log.discover`).
        lenient: header leniency (tokenised test fixtures).
        max_version: the newest log format version to read (None: every released one).
        adapter: see :func:`attribute_sessions`.
        ancestors: also read the parent log of each fork or subagent child found beside it.
        jobs: worker processes (1: this process; 0: every CPU).
        engine: ``local`` or ``dask``; scheduler: the Dask scheduler address.
        progress: called as ``progress(done, total)`` after each group of logs.
        routes: a route configuration file (``--routes``) for requests whose route the log does not settle.
        on_group: sees each group's whole result, in this process, in order (its ``route_warnings``).
        capture: what was sent (wire.jsonl, HAR 1.2, a folder of bodies) for every log; None: the
            ``wire.jsonl`` found beside each log, as ``dsh-audit check`` finds it
            (:func:`dsh_audit.capture.find_capture`). See :func:`attribute_opened`.

    Returns:
        The attributions of the given logs that were read, and the failures of the others, each
        in the order discovered.

    Raises:
        UnreadableError: a path does not exist or holds no log. UsageError: bad ``jobs`` or ``engine``.
    """
    task = partial(attribute_group, lenient=lenient, max_version=4 if max_version is None else max_version,
                   adapter=adapter, ancestors=ancestors, routes=routes,
                   capture=os.fspath(capture) if capture is not None else None)
    ordered = run_groups(discover(list(paths)), task, jobs=jobs, engine=engine, scheduler=scheduler,
                         progress=progress, on_group=on_group)
    return ([a for a in ordered if isinstance(a, SessionAttribution)],
            [f for f in ordered if isinstance(f, Failure)])


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
                   adapter: str | None = "auto") -> Iterator[Transition]:
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
    yield from attribute_log(read_log(path, **options), adapter=adapter)


def attribute_log(log: SessionLog, *, adapter: str | None = "auto", bodies: Bodies | None = None,
                  routes: RouteEvidence | None = None, config: PiRoutes | None = None,
                  tap: Callable[[Request], None] | None = None,
                  observe: Callable[[Event], None] | None = None,
                  parent: Callable[[str], Session | None] | None = None,
                  fold: SurfaceFold | None = None) -> Iterator[Transition]:
    """:func:`iter_attribute` over an opened log (one from :func:`dsh_audit.log.read_stream` may
    still be growing: transitions come out as its requests are replayed).

    Args:
        log: the opened log; its events are read here, once.
        adapter: see :func:`attribute_sessions`.
        bodies: the rendered-body cache to share with other views (a cache verdict of the same
            requests), else a new one.
        routes: filled with the route evidence the log shows, for other views to share.
        config: a route configuration (``--routes``): its declared routes and model facts.
        tap: called with every request in replay (``index``) order as soon as it is replayed,
            before its transition is yielded.
        observe: called with every event as it is read (see :func:`dsh_audit.replay.iter_requests`).
        parent: for a fork or subagent child, called once with the parent's id when the child's
            first loop request is compared: the parent session (read then), or None (the request
            is then a ``first``, as without this).
        fold: the surface fold the validation rules of the same read share
            (:meth:`dsh_audit.validate.LineValidator.shared_fold`): replay folds the events into it,
            and the rules take them from it instead of admitting and folding them again.
    """
    evidence = LogEvidence(log.header.id)
    routes = routes if routes is not None else RouteEvidence()  # what the log has shown of each adapter so far
    session = _Session(log.path, log.header, [], lenient=log.lenient, evidence=evidence,
                       bodies=bodies if bodies is not None else Bodies(config, log=log.path), routes=routes,
                       declared=config.apis if config is not None else None, forget=True)
    attributor = _Attributor([session], adapter=adapter, parent=parent)
    observe_all = evidence_observer(EvidenceCollector(evidence, frozenset()), routes, observe)

    def tapped(requests: Iterable[Request]) -> Iterator[Request]:
        for request in requests:
            if tap is not None:
                tap(request)
            yield request

    requests = iter_requests(log, observe=observe_all, fold=fold)
    yield from attributor.walk(session, _first_chunk_order(tapped(requests)))
