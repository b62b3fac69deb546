"""Follow one session log: replay, attribution and cache verdicts fed from a growing file.

One pass over the log, kept alive while DSH appends to it: the decoder reads a
:class:`~dsh_audit.watch.TailStream`, replay and attribution hold only what their next step
needs (:func:`dsh_audit.attribution.attribute_log`), and each request is judged for the cache and
priced once its transition is known. Nothing is re-read, but for a request whose log holds no
usage when a capture is beside the log (or given): the log and the capture are read and aligned
once as the other views do, then a growing ``wire.jsonl`` is read on from where it stopped and only
its tail is aligned with the requests judged since; both are read whole again only when the capture
is replaced, truncated or rewritten (:mod:`dsh_audit.watch._captured`).
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import BinaryIO, cast

from ..attribution import Transition, attribute_log
from ..cache import (CacheAccount, CacheVerdict, LedgerEntry, LedgerTotals, ParentRequest, PriceBook, Tokens,
                     attribution_causes, entry_usage, load_prices, price_entry, restater)
from ..capture import captures_ignored
from ..errors import DshAuditError
from ..log import LATEST_VERSION, Event, read_stream
from ..replay import Request
from ..session import Bodies, RouteEvidence, Session, find_parent, open_session, request_route, window_conflicts
from ..wire import PiRoutes
from ._captured import CapturedUsage
from ._model import CaptureNote, WatchItem, WatchNote, WatchRequest
from ._tail import LogReplaced, TailStream

__all__ = ["follow_log"]


def _describe(request: Request, transition: Transition | None, verdict: CacheVerdict, entry: LedgerEntry, *,
              path: str, session_id: str, title: str | None, history: bool, awaited: bool = False) -> WatchRequest:
    """The request as a watch shows it; ``awaited``: its log holds no usage and the capture found
    beside it does not report it yet (it is shown ``provisional``, :class:`_Awaited`)."""
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
        lost_tokens=None if loss.lost_unknown else loss.lost_tokens, lost_cost=loss.known("lost"),
        usage_source=entry.usage_source, provisional=awaited)


#: How many times the capture may change (each change read again) while a request waits
#: for its usage: a response comes seconds after its request, and a capture that goes on without
#: it will not hold it (a title call's response may come after the next loop request's).
_LOOKS = 5


def _failed(request: Request) -> bool:
    """Whether ``request``'s attempt finished with an error or was aborted: no response of it
    reports usage, whatever capture comes."""
    finish = request.finish.get("kind") if isinstance(request.finish, dict) else None
    return finish in ("error", "aborted")


def _may_come(request: Request, history: bool) -> bool:
    """Whether the capture may still report ``request``'s usage later: a request that failed
    got no usage to report, and one the log held when watching began got its response before the
    watch (priced from the capture as it was then, or as it is when it is first found), but for a
    loop attempt still under way then (no finish logged: the log's tail)."""
    if _failed(request):
        return False
    return not history or (request.kind == "loop" and request.finish is None)


class _Awaited:
    """The requests shown whose log holds no usage while the capture beside it (or ``--capture``)
    did not report theirs yet, and still may (:func:`_may_come`): a proxy may write a response to
    wire.jsonl after DSH logged the request. Each is shown ``provisional`` (as one at a torn tail
    is), and comes again as an ``update``, priced, once the capture reports it: looked at whenever
    the log shows more and when the watch ends (before its summary), the capture read on (its
    appended lines, not the log: :class:`~dsh_audit.watch._captured.CapturedUsage`) only when its
    file changed (:func:`dsh_audit._stamp.file_stamp`), until
    it has changed :data:`_LOOKS` times without it (it skipped this one: it stays provisional and
    unpriced, and the capture is not read again for it). Its update is judged again with the
    capture's usage, from the cache state it was judged from first (:func:`restater`): its prompt
    tokens, cache reads, verdict and price as ``cache`` and ``usage`` state them (only its price
    changed: its tokens stayed unknown, its verdict ``usage_unknown``, session 43). The requests
    judged between its first judgement and that keep their verdicts; those judged after compare
    with its size from the capture. A restater keeps a copy of the judge's recent requests: one is
    made only when a capture was given or found (:meth:`restates`), and at most :data:`_RESTATERS`
    requests waiting at once keep one (the oldest beyond, and one judged before a capture was found,
    is priced only, its verdict kept, as before session 44).

    A request judged while no capture was there (none found beside the log, ``--capture``'s file
    not made yet) is shown unpriced, not provisional (most logs never get one), and kept
    (:attr:`unfound`, without its messages): a capture written later (a proxy started after the
    watch) is looked for where a capture is looked for anyway, as a request whose log holds no
    usage is judged, and when the watch ends (a few ``stat`` calls, never per line); once there,
    it prices each it reports, as an update, and the others wait for it as above (:func:`_may_come`;
    one the log held when watching began: priced from the capture as it was first found). One the
    log held when watching began that a capture there does not report (a proxy that writes its
    file late, an empty ``wire.jsonl`` at start) is kept the same way, until the capture changes
    once: priced then, as an update, when the capture reports it, else left unpriced. So is one
    judged or held while the capture cannot be read (:attr:`CapturedUsage.broken`, said once as
    ``usage`` says it): it is not awaited (it was shown provisional for ever, fuzz round 31), and is
    priced as an update if the capture is readable again within :data:`_LOOKS` changes."""

    def __init__(self, usage: CapturedUsage) -> None:
        self.usage = usage
        self.held: dict[int, _Wait] = {}  # each request held
        self.unfound: dict[int, _Wait] = {}  # each request judged before the capture reported it
        self.again: dict[int, _Wait] = {}  # those of both that hold a restater, oldest first (:data:`_RESTATERS`)

    def due(self) -> bool:
        """Whether a look may price something: a request held, or one judged before the capture
        that has been found since (an attribute test: no file is looked at)."""
        return bool(self.held) or (bool(self.unfound) and self.usage.mark is not None)

    def restates(self, request: Request, found: Tokens | None) -> bool:
        """Whether ``request`` is to be judged with a restater (:func:`restater`): it may be priced
        from the capture later (:func:`_awaitable`) and a capture was given or found (none is looked
        for with ``--no-capture``): with none, most logs never get one."""
        return (self.usage.capture is not None or self.usage.mark is not None) and _awaitable(request, found)

    def wait(self, request: Request, transition: Transition | None, verdict: CacheVerdict, again: _Again | None,
             history: bool, found: Tokens | None) -> bool:
        """Hold ``request`` when a capture is there and reports no usable usage of it (``found``: what
        it reported, None for nothing; one that matched no request of the session yet is held too);
        whether it was held. ``verdict``: as it was judged; ``again``: what judges it again once the
        capture reports it (None: it is priced only, its verdict kept)."""
        if not _awaitable(request, found):
            return False  # the log or the capture priced the request, or no response reports usage
        waiting = _Wait(request, transition, verdict, again, history, self.usage.reads)
        if self.usage.mark is None or self.usage.broken or not _may_come(request, history):
            # no capture yet, one that cannot be read (said: it is not awaited), or one silent on a
            # request answered before the watch: shown unpriced now, looked at again once the
            # capture is found or changes (:meth:`_found`)
            if not (self.usage.mark is None and self.usage.capture is None and captures_ignored()):
                self._keep(self.unfound, _slim(waiting))
            return False
        self._keep(self.held, waiting)
        return True

    def _keep(self, where: dict[int, _Wait], waiting: _Wait) -> None:
        """Keep ``waiting`` in ``where``; the oldest request beyond :data:`_RESTATERS` that holds a
        restater drops it (and its messages): it will be priced only."""
        where[waiting.request.index] = waiting
        if waiting.again is None:
            return
        self.again[waiting.request.index] = waiting
        while len(self.again) > _RESTATERS:
            oldest = self.again.pop(next(iter(self.again)))
            oldest.again = None
            _slim(oldest)

    def _drop(self, where: dict[int, _Wait], index: int) -> _Wait:
        """Take request ``index`` out of ``where`` (priced, given up, or moved)."""
        self.again.pop(index, None)
        return where.pop(index)

    def priced(self, prices: PriceBook, *, look: bool = False
               ) -> Iterator[tuple[Request, Transition | None, CacheVerdict, LedgerEntry, bool]]:
        """The requests held that the capture reports now, each with its new price; ``look``: the
        watch ends, a capture not found yet is looked for once more."""
        if self.unfound and (look or self.usage.mark is not None):
            yield from self._found(prices)
        for index, waiting in list(self.held.items()):
            tokens = self.usage(waiting.request)
            if entry_usage(waiting.request, tokens)[2] == "capture" and tokens is not None:
                yield _restated(self._drop(self.held, index), tokens, prices)
            elif self.usage.broken:  # it cannot be read now (said): priced once it is repaired (:meth:`_found`)
                del self.held[index]
                waiting.reads = self.usage.reads
                self.unfound[index] = _slim(waiting)
            elif self.usage.reads - waiting.reads >= _LOOKS:
                self._drop(self.held, index)  # the capture changed again and again without it: it will not come

    def _found(self, prices: PriceBook) -> Iterator[tuple[Request, Transition | None, CacheVerdict, LedgerEntry, bool]]:
        """The requests judged while no capture was there, or while it was silent on them, that the
        capture found or changed since reports, each with its price; the others it may still report
        are held (:meth:`wait`'s rule), the rest dropped. One the capture was not read again for
        (none found yet, its file unchanged: a ``stat``) stays, and so does one while the capture
        cannot be read, until it has changed :data:`_LOOKS` times (each change read it whole)."""
        for index, waiting in list(self.unfound.items()):
            request, reads = waiting.request, waiting.reads
            tokens = self.usage(request)
            if self.usage.mark is None:
                return  # still no capture: looked for once, not per request
            if self.usage.reads == reads or self.usage.broken and self.usage.reads - reads < _LOOKS:
                continue
            source = entry_usage(request, tokens)[2]
            if source == "capture" and tokens is not None:
                yield _restated(self._drop(self.unfound, index), tokens, prices)
            elif source is None and not self.usage.broken and _may_come(request, waiting.history):
                del self.unfound[index]
                waiting.reads = self.usage.reads
                self.held[index] = waiting
            else:
                self._drop(self.unfound, index)


#: What judges a request again with the capture's usage (:func:`restater`).
_Again = Callable[[Tokens], CacheVerdict]

#: The most waiting requests that hold a restater (:func:`restater`: a copy of the cache judge's
#: recent requests, 4-6 KB each kept alive, review rA of session 44): the oldest beyond it is priced
#: only, its verdict kept (a capture absent for hours leaves every request waiting).
_RESTATERS = 256


def _slim(waiting: _Wait) -> _Wait:
    """``waiting``, its request without its messages when it holds no restater (pricing reads none)."""
    if waiting.again is None:
        waiting.request = replace(waiting.request, messages=(), message_seqs=())
    return waiting


@dataclass(slots=True)
class _Wait:
    """A request waiting for the capture's usage: its transition, its verdict as first judged, what
    judges it again (None: it is priced only), ``history`` as shown, and how many times the capture
    had been read when it began to wait where it waits."""

    request: Request
    transition: Transition | None
    verdict: CacheVerdict
    again: _Again | None
    history: bool
    reads: int


def _awaitable(request: Request, found: Tokens | None) -> bool:
    """Whether ``request`` may be priced from the capture later: its log holds no usage, the
    capture reports none of it now (``found``) and a response of it may report some."""
    return entry_usage(request, found)[2] is None and not _failed(request)


def _restated(waiting: _Wait, tokens: Tokens, prices: PriceBook
              ) -> tuple[Request, Transition | None, CacheVerdict, LedgerEntry, bool]:
    """``waiting``'s request judged again (or its verdict kept: it holds no restater) and priced from
    the capture's usage ``tokens``."""
    request = waiting.request
    verdict = waiting.again(tokens) if waiting.again is not None else waiting.verdict
    return request, waiting.transition, verdict, price_entry(request, prices, verdict, captured=tokens), waiting.history


def follow_log(stream: TailStream, *, prices: PriceBook | None = None, lenient: bool = False,
               max_version: int | None = None, config: PiRoutes | None = None,
               zero_data_retention: bool | None = None,
               capture: str | os.PathLike[str] | None = None) -> Iterator[WatchItem]:
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
        capture: ``--capture``, for a request whose log holds no usage (None: the ``wire.jsonl``
            found beside the log, none with ``--no-capture``): priced from the capture's usage, as
            ``usage`` prices it (:class:`~dsh_audit.watch._captured.CapturedUsage`); one the
            capture does not report yet is ``provisional`` until it does (:class:`_Awaited`). Its
            cache is judged from the capture's usage too, as ``cache`` judges it.

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
    captured = CapturedUsage(path, capture, lenient=lenient, max_version=version)
    awaited = _Awaited(captured)
    parents: dict[int, ParentRequest] = {}  # a child's request -> the parent's request it continues
    opened: dict[str, Session] = {}  # the parent read for attribution, for the cache judge too
    live: dict[int, Tokens] = {}  # the capture's usage of the request being judged, read by the judge

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

    def updates(look: bool = False) -> Iterator[WatchItem]:
        """The requests shown provisional (or unpriced, no capture there yet) for want of the
        capture's usage that it reports now; ``look``: the watch ends (:meth:`_Awaited.priced`)."""
        for request, transition, verdict, entry, history in awaited.priced(prices, look=look):
            yield replace(_describe(request, transition, verdict, entry, path=path, session_id=sid, title=title[0],
                                    history=history), update=True)
        yield from said()

    def said() -> Iterator[WatchNote]:
        """What each reading of the capture could not read (:attr:`CapturedUsage.said`): a found
        one's warning, a given one's error, a line of either that is no record (a warning), said as
        ``usage`` says them, and a note when it is read again after a reading that could not read it;
        :func:`watch` says each distinct text once however many logs it prices and however often it is
        read, again after the capture was read again, and the note only after an error of it."""
        while captured.said:
            level, place, text = captured.said.pop(0)
            yield CaptureNote(time.time(), place, level, text, sid, again=level == "note")

    def settled() -> Iterator[WatchItem]:
        if pending and awaited.due():
            yield from updates()
        while pending and pending[0].index in transitions:
            request = pending.popleft()
            transition = transitions.pop(request.index)
            tokens = captured(request)
            if tokens is not None:
                live[request.index] = tokens  # judged from the capture's usage, as `cache` judges it
            again: _Again | None = None
            if awaited.restates(request, tokens):
                verdict, again = restater(account, request)
            else:
                verdict = account.add(request, request.time)
            live.clear()
            causes.pop(request.index, None)  # read only while its request is judged
            parents.pop(request.index, None)
            release(request)
            entry = price_entry(request, prices, verdict, captured=tokens)
            history = request.first_chunk_seq <= history_seq[0]
            held = awaited.wait(request, transition, verdict, again, history, tokens)
            yield from said()  # before the line it leaves unpriced
            yield _describe(request, transition, verdict, entry, path=path, session_id=sid, title=title[0],
                            history=history, awaited=held)

    try:
        # the cache judge, one request at a time (a pyproject.toml that states the Zero Data Retention
        # wrongly is this log's error); what it holds is copied for a request judged again (:func:`restater`)
        account = CacheAccount(causes=causes, bodies=bodies, prices=prices, keep=False, parents=parents,
                               routes=lambda request: request_route(request, routes, declared=declared).adapter,
                               zero_data_retention=zero_data_retention, captured=live)
        for transition in attribute_log(log, bodies=bodies, routes=routes, config=config, tap=pending.append,
                                        observe=observe, parent=parent):
            transitions[transition.request] = transition
            causes.update(attribution_causes([transition]))
            if transition.previous_session_id not in (None, sid):
                continued(transition)
            yield from settled()
        transitions.update((request.index, None) for request in pending)  # none should be left; never hang on one
        yield from settled()
        yield from updates(look=True)  # the watch ends: what the capture reports now, for the summary
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
