"""Follow one session log: replay, attribution and cache verdicts fed from a growing file.

One pass over the log, kept alive while DSH appends to it: the decoder reads a
:class:`~dsh_audit.watch.TailStream`, replay and attribution hold only what their next step
needs (:func:`dsh_audit.attribution.attribute_log`), and each request is judged for the cache and
priced once its transition is known. Nothing is re-read.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator
from typing import BinaryIO, cast

from ..attribution import Transition, attribute_log
from ..cache import (CacheVerdict, LedgerEntry, LedgerTotals, ParentRequest, PriceBook, attribution_causes,
                     iter_cache_verdicts, load_prices, price_entry)
from ..errors import DshAuditError
from ..log import LATEST_VERSION, Event, read_stream
from ..replay import Request
from ..session import Bodies, RouteEvidence, Session, find_parent, open_session, request_route, window_conflicts
from ..wire import PiRoutes
from ._model import WatchItem, WatchNote, WatchRequest
from ._tail import LogReplaced, TailStream

__all__ = ["follow_log"]


class _Inbox:
    """An iterator that hands the cache judge exactly the request just put in."""

    def __init__(self) -> None:
        self.items: deque[Request] = deque()

    def __iter__(self) -> _Inbox:
        return self

    def __next__(self) -> Request:
        if not self.items:
            raise StopIteration
        return self.items.popleft()


def _describe(request: Request, transition: Transition | None, verdict: CacheVerdict, entry: LedgerEntry, *,
              path: str, session_id: str, title: str | None, history: bool) -> WatchRequest:
    sent = request.time.sent if request.time is not None else None
    loss = LedgerTotals.of([entry])  # what it lost and what that cost, by the one rule of every view
    is_break = transition is not None and transition.verdict == "break"
    return WatchRequest(
        seen=time.time(), path=path, session_id=session_id, title=title, index=request.index, kind=request.kind,
        turn=request.turn, step=request.step, attempt=request.attempt, model=verdict.model, sent=sent,
        prompt_tokens=verdict.prompt_tokens, expected=verdict.expected, actual=verdict.actual,
        potential=verdict.potential,
        classification=verdict.classification, cost=entry.cost.total if entry.cost else None,
        cost_buckets=entry.cost,
        verdict=transition.verdict if transition else None, cause=transition.cause if transition else None,
        relation=transition.relation if transition else None, previous=transition.previous if transition else None,
        fields=transition.field_names if transition else (), evidence_seqs=transition.evidence_seqs if transition else (),
        transition=transition.to_json() if is_break and transition is not None else None, history=history,
        lost_tokens=None if loss.lost_unknown else loss.lost_tokens, lost_cost=loss.known("lost"))


def follow_log(stream: TailStream, *, prices: PriceBook | None = None, lenient: bool = False,
               max_version: int | None = None, config: PiRoutes | None = None,
               zero_data_retention: bool | None = None) -> Iterator[WatchItem]:
    """Everything one followed log shows, as it is written: a ``started`` note once its header is
    read, a :class:`WatchRequest` per request, then notes for torn tails, a ``replaced`` note when
    the file was truncated or replaced (following it stops there: the caller starts again), or an
    ``error`` note when the log becomes unreadable (following it stops there; nothing is raised).

    A fork or subagent child's first loop request is compared with its parent's request, as
    ``dsh-audit breaks`` does over the folder: the parent log is found beside the child and read
    once, when that request is judged (by then the parent has written the seed or the spawn).

    Args:
        stream: the followed file; the iteration ends when it ends (the watch stopped).
        prices: the price table (default: :func:`dsh_audit.cache.load_prices`).
        lenient: header leniency (tokenised test fixtures).
        max_version: the newest log format version to read (default: every released one).
        config: a route configuration (``--routes``): routes, model facts and profiles (a cache
            retention changes a body's TTL and write rate) of hand-declared pi-ai providers; where
            the log contradicts it, a ``warning`` note once the log ends.

    A request whose first chunk lies within the bytes the log held when watching began
    (``stream.history``, complete lines and frames only) comes with ``history`` set, even when it
    is judged only once later bytes arrive.
    """
    path = stream.path
    prices = prices if prices is not None else load_prices()
    version = LATEST_VERSION if max_version is None else max_version
    try:
        log = read_stream(cast(BinaryIO, stream), path, lenient=lenient, max_version=version)
    except LogReplaced as exc:
        yield WatchNote(time.time(), path, "replaced", exc.message)
        return
    except DshAuditError as exc:
        yield WatchNote(time.time(), path, "error", str(exc))
        return
    sid = log.header.id
    yield WatchNote(time.time(), path, "started", f"following session {sid}", sid)
    title: list[str | None] = [None]
    pending: deque[Request] = deque()
    transitions: dict[int, Transition | None] = {}
    causes: dict[int, str] = {}
    bodies, routes = Bodies(config, log=path), RouteEvidence()
    declared = config.apis if config is not None else None
    inbox = _Inbox()
    parents: dict[int, ParentRequest] = {}  # a child's request -> the parent's request it continues
    opened: dict[str, Session] = {}  # the parent read for attribution, for the cache judge too
    judge = iter_cache_verdicts(inbox, causes=causes, bodies=bodies, prices=prices,
                                routes=lambda request: request_route(request, routes, declared=declared).adapter,
                                zero_data_retention=zero_data_retention, parents=parents)

    def parent(parent_id: str) -> Session | None:
        found = find_parent(path, parent_id)
        if found is None:
            return None
        watched = frozenset() if log.header.seed_length else frozenset({sid})  # a subagent: its spawn
        try:
            session = open_session(found, lenient=lenient, max_version=version, watch=watched, foreign=False)
        except DshAuditError:
            return None
        opened[session.id] = session
        return session

    def continued(transition: Transition) -> None:
        """The parent's request a child's request continues (the one its transition names), for
        the cache judge (as ``cache`` judges a child read with its parent)."""
        session = opened.pop(transition.previous_session_id or "", None)
        if session is None or transition.previous is None:
            return
        found = next((r for r in session.requests if r.index == transition.previous), None)
        if found is not None:
            parents[transition.request] = ParentRequest(found, session.times.get(found.index), session.bodies,
                                                        session.route(found).adapter)

    history_seq = [-1]  # the newest event seq the log held when watching began

    def observe(event: Event) -> None:
        if stream.in_history:  # read from what the log held when watching began
            history_seq[0] = max(history_seq[0], event.seq)
        if event.type == "session/title" and isinstance(event.data, dict) and isinstance(event.data.get("title"), str):
            title[0] = event.data["title"]

    last_title: list[int | None] = [None]

    def release(request: Request) -> None:
        """Drop the route context kept for a judged auxiliary call that nothing renders again: a
        compaction call at once, a title call once the next one is judged (its transition may
        render the one before it)."""
        if request.kind == "compaction":
            routes.release(request.first_chunk_seq)
        elif request.kind == "title":
            if last_title[0] is not None:
                routes.release(last_title[0])
            last_title[0] = request.first_chunk_seq

    def settled() -> Iterator[WatchItem]:
        while pending and pending[0].index in transitions:
            request = pending.popleft()
            transition = transitions.pop(request.index)
            inbox.items.append(request)
            verdict = next(judge)
            causes.pop(request.index, None)  # read only while its request is judged
            parents.pop(request.index, None)
            release(request)
            entry = price_entry(request, prices, verdict)
            yield _describe(request, transition, verdict, entry, path=path, session_id=sid, title=title[0],
                            history=request.first_chunk_seq <= history_seq[0])

    try:
        for transition in attribute_log(log, bodies=bodies, routes=routes, config=config, tap=pending.append,
                                        observe=observe, parent=parent):
            transitions[transition.request] = transition
            causes.update(attribution_causes([transition]))
            if transition.previous_session_id not in (None, sid):
                continued(transition)
            yield from settled()
        transitions.update((request.index, None) for request in pending)  # none should be left; never hang on one
        yield from settled()
    except LogReplaced as exc:
        yield WatchNote(time.time(), path, "replaced", exc.message, sid)
        return
    except DshAuditError as exc:
        yield WatchNote(time.time(), path, "error", str(exc), sid)
    finally:
        log.close()
    for warning in [*log.warnings, *(window_conflicts(routes, config) if config is not None else ())]:
        # a RouteNote (the home's route file, read by default) is a note, not a warning
        yield WatchNote(time.time(), path, getattr(warning, "level", "warning"), warning, sid)
