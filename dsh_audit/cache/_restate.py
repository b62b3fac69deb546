"""A request a watch judged without the capture's usage, judged again with it once the capture
reports it: as ``cache`` judges it, from the same cache state.

A request whose log holds no usage is judged at once (the judge goes on to the next request), and
may be priced from the capture only later: a proxy that writes the response late, a capture found
or repaired later. Its update then said the capture's price beside the verdict judged without it
(no prompt tokens, no cache reads, ``usage_unknown``: session 43, fuzz round 33), where ``cache``
and ``usage`` on the same finished log and capture state them. The cache state such a verdict is
judged from (each conversation's previous request, the recent requests of each cache) is what the
judge held just before it: :func:`restater` keeps a copy of it, taken then, a few lists of
references (a cache keeps at most its ``lookback`` requests), and judges the request with it once
the capture's usage comes. The earlier requests that state holds were judged without the capture's
usage too (their prompt size the estimate): each one judged again writes its provider-scale size
and breakpoints into what the judge remembered of it, which every later copy shares, so that the
requests judged again after it (in order) and those judged after that compare with it as ``cache``
does (review rA of session 44: b-tools #8 expected 8704 where ``cache`` said 8576). Requests judged
between its first judgement and that keep their verdicts: the judge has moved on.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from ..replay import Request, RequestTime
from ._account import CacheAccount, _Analyzer
from ._earlier import _Seen
from ._money import Tokens
from ._report import CacheVerdict

__all__ = ["restater"]


def restater(account: CacheAccount, request: Request) -> tuple[CacheVerdict, Callable[[Tokens], CacheVerdict]]:
    """``request`` judged by ``account`` (:meth:`CacheAccount.add`), and what judges it again from the
    capture's usage (its argument) with the cache state ``account`` held before it: its conversation's
    previous request, each cache's recent requests, the break cause and route attribution gave it (a
    title call's route is released once it is judged), the parent request a child's request continues.
    Call that once; it sets what ``account`` remembered of ``request`` to the capture's size."""
    judge = account.analyzer
    state = copy.copy(judge)
    adapter = judge.routes(request) if judge.routes is not None else None
    state.routes = lambda _: adapter
    times: dict[int, RequestTime] = {}
    captured: dict[int, Tokens] = {}
    state.times, state.captured = times, captured
    if judge.causes is not None:  # read while it is judged, then dropped (follow_log)
        state.causes = {request.index: judge.causes[request.index]} if request.index in judge.causes else {}
    state.last = dict(judge.last)
    state.by_route = {pool: list(seen) for pool, seen in judge.by_route.items()}
    state.runs = {pool: [(key, list(members)) for key, members in runs] for pool, runs in judge.runs.items()}
    parent = account.parents.get(request.index) if account.parents is not None else None
    verdict = account.add(request, request.time)
    kept = _remembered(judge, request)  # shared by the copies taken after it: found now, before the judge drops it

    def again(tokens: Tokens) -> CacheVerdict:
        if parent is not None:
            state.inherit(parent)
        captured[request.index] = tokens
        if request.time is not None:
            times[request.index] = request.time
        restated = state.verdict(request)
        fresh = _remembered(state, request)
        if kept is not None and fresh is not None:
            kept.size, kept.logged, kept.marks = fresh.size, fresh.logged, fresh.marks
        return restated

    return verdict, again


def _remembered(judge: _Analyzer, request: Request) -> _Seen | None:
    """What ``judge`` remembered of ``request``, just judged: the newest request of its cache."""
    return next((seen[-1] for seen in judge.by_route.values() if seen and seen[-1].request is request), None)
