"""Aligning captured requests with the requests rebuilt from logs.

Rules, in order:

1. **Session.** A capture carrying ``x-deepseek-harness-session-id`` is matched only with
   requests of that session (DSH sends the header on every loop, title and compaction call of
   the DeepSeek adapter). A capture naming a session that none of the given logs holds is
   reported as ``foreign`` and never paired. A capture without it that carries one of the
   session ids pi-ai forwards (:data:`._evidence.PIAI_SESSION_HEADERS`, a body ``prompt_cache_key``)
   whose value is the id of one of the given sessions is matched only with that session's requests;
   such a value naming no given session is no evidence (a deployment's profile headers can set these
   names), never ``foreign``.
2. **Kind.** Loop captures pair with loop requests, compaction with compaction, title with title;
   a capture of kind ``other`` (no body, not JSON, no ``messages``) is not an LLM call, never
   paired, unless DSH's session header names one of the given sessions and it is a POST to an
   endpoint :func:`._evidence.capture_apis` knows (a ``GET /models`` is no LLM call): then it is that session's
   call whose body cannot be read, and it pairs, after that session's other captures, with the
   first of the session's requests still unpaired (in send order) whose route and model it fits;
   the note says why its body is no request body (:func:`unreadable_body`), and its verdict is
   ``different`` (it is never identical to a rebuilt body).
3. **Route.** A capture pairs only with a request whose route (:func:`._evidence.log_routes`, or the
   ``routes`` given) speaks the wire API of the capture's endpoint (:func:`._evidence.capture_apis`:
   ``…/messages`` is pi-ai ``anthropic-messages``, ``…/chat/completions`` DSH's native adapter or
   pi-ai ``openai-completions`` — only the native one when the DSH session header is there —,
   ``…/responses`` pi-ai ``openai-responses``; the body's shape when the path says nothing), and
   whose model is the body's ``model`` (both adapters send the log's model id as the wire model).
   A side whose route or model is unknown pairs with any, after every pairing both sides know.
4. **Order.** Within one session, kind, route and model, requests (in the order given) and
   captures (in capture order) are paired first to first. A lane whose route and model both sides
   know and that holds more requests than captures, or fewer, is paired by content instead
   (:func:`._content._by_content`): still in order, but each capture with the request whose new messages it
   sends, so a body missing in the middle of the lane leaves only its own request unpaired.
5. **Retries.** Consecutive captures of one session and kind with identical bodies are one
   send and its resends. Consecutive rebuilt attempts of one step (``attempt`` 2, 3, ...) are
   one request and its retries. The n-th attempt pairs with the n-th identical send; sends
   beyond the last attempt (the adapter retried before anything reached the stream, so the log
   has no attempt for them) pair with the last attempt and are flagged ``retry``.
6. **No session evidence.** Captures with neither are paired last, by kind, route, model and
   order, with the requests still unpaired. Requests of several sessions are taken in the order
   they were sent (their logged send times, each session's own order kept), else in the order
   given; a pairing whose route and model lane holds requests of more than one session says so in
   its note, since only order tells those sessions apart.

Nothing is dropped: every request and every capture appears in exactly one :class:`Pairing`
(a resend appears in its own pairing with ``retry=True``), with the other side ``None`` when
unmatched and a ``note`` that says why.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import CaptureError
from ..replay import Request
from ..session import request_model
from ._content import _by_content
from ._evidence import RouteApi, _cuts, _facts, _fits, _hinted, log_routes
from ._reading import _too_large
from ._types import CapturedRequest, _Facts, unreadable_body

__all__ = ["Pairing", "align", "too_large"]

_PAIRED_KINDS = ("loop", "compaction", "title")


@dataclass(frozen=True, slots=True)
class Pairing:
    """One rebuilt request and the capture of its send; either side may be ``None``.

    Attributes:
        request: the rebuilt request, or None for a capture nothing explains.
        capture: the captured request, or None when no capture was found.
        retry: the capture is an identical resend of an earlier capture of the same request.
        note: why a side is missing, or what the pairing rests on.
    """

    request: Request | None
    capture: CapturedRequest | None
    retry: bool = False
    note: str | None = None


def _request_runs(requests: Sequence[Request]) -> list[list[Request]]:
    runs: list[list[Request]] = []
    for request in requests:
        previous = runs[-1][-1] if runs else None
        if (previous is not None and request.attempt > 1 and request.kind == previous.kind
                and (request.turn, request.step) == (previous.turn, previous.step)
                and request.session_id == previous.session_id):
            runs[-1].append(request)
        else:
            runs.append([request])
    return runs


def _capture_runs(captures: Sequence[CapturedRequest]) -> list[list[CapturedRequest]]:
    runs: list[list[CapturedRequest]] = []
    for capture in captures:
        if runs and runs[-1][-1].digest == capture.digest:  # the same bytes: their digests, not the bodies read again
            runs[-1].append(capture)
        else:
            runs.append([capture])
    return runs


def _matches(request_runs: Sequence[list[Request]], capture_runs: Sequence[list[CapturedRequest]],
             lanes: Mapping[int, tuple[str | None, str | None]], facts: Mapping[int, _Facts]) -> dict[int, int]:
    """Request run -> capture run: first every run whose route and model both sides know, in order
    within each lane (by content where the lane's counts differ: :func:`._content._by_content`); then the
    runs left, each taking the first capture run left that fits."""
    partner: dict[int, int] = {}
    taken: set[int] = set()
    queues: dict[tuple[str, str], list[int]] = {}
    for j, sends in enumerate(capture_runs):
        found = facts[id(sends[0])]
        if found.apis is not None and found.model is not None:
            for name in sorted(found.apis):
                queues.setdefault((name, found.model), []).append(j)
    cursors: dict[tuple[str, str], int] = {}
    by_lane: dict[tuple[str, str], list[int]] = {}
    for i, attempts in enumerate(request_runs):
        api, model = lanes[id(attempts[0])]
        if api is None or model is None or (api, model) not in queues:
            continue
        key = (api, model)
        by_lane.setdefault(key, []).append(i)
        queue, at = queues[key], cursors.get(key, 0)
        while at < len(queue) and queue[at] in taken:
            at += 1
        cursors[key] = at
        if at < len(queue):
            partner[i] = queue[at]
            taken.add(queue[at])
    for key, mine in by_lane.items():
        free = [j for j in queues[key] if j not in taken]
        if not free and all(i in partner for i in mine):
            continue  # as many sends as requests: order alone pairs them
        theirs = sorted({partner[i] for i in mine if i in partner} | set(free))
        for i in mine:
            taken.discard(partner.pop(i, -1))
        for at, j in _by_content([request_runs[i][0] for i in mine], [capture_runs[j][0] for j in theirs]):
            partner[mine[at]] = theirs[j]
            taken.add(theirs[j])
    # the capture runs left, by what their bodies say (route APIs, model), each group in order: a
    # request run takes the first of the heads of the groups that fit
    groups: dict[_Facts, list[int]] = {}
    for j, sends in enumerate(capture_runs):
        if j not in taken:
            found = facts[id(sends[0])]
            groups.setdefault(_Facts(found.apis, found.model, ()), []).append(j)
    heads = dict.fromkeys(groups, 0)
    for i, attempts in enumerate(request_runs):
        if i in partner:
            continue
        lane = lanes[id(attempts[0])]
        fitting = [group for group, at in heads.items()
                   if at < len(groups[group]) and _fits(lane, group, strict=False)]
        if fitting:
            first = min(fitting, key=lambda group: groups[group][heads[group]])
            partner[i] = groups[first][heads[first]]
            heads[first] += 1
    return partner


def _pair_runs(requests: Sequence[Request], captures: Sequence[CapturedRequest], *,
               lanes: Mapping[int, tuple[str | None, str | None]], facts: Mapping[int, _Facts],
               basis: Callable[[Request, CapturedRequest], str]) -> tuple[list[Pairing], list[CapturedRequest]]:
    """Pair requests and captures of one kind by route, model and order, retries folded; return
    the captures left, in capture order."""
    pairs: list[Pairing] = []
    request_runs, capture_runs = _request_runs(requests), _capture_runs(captures)
    partner = _matches(request_runs, capture_runs, lanes, facts)
    for i, attempts in enumerate(request_runs):
        if i not in partner:
            continue
        sends = capture_runs[partner[i]]
        for number, attempt in enumerate(attempts):
            if number < len(sends):
                pairs.append(Pairing(attempt, sends[number], note=basis(attempt, sends[number])))
            else:
                pairs.append(Pairing(attempt, None, note=f"retry attempt {attempt.attempt}: the capture "
                                     f"holds {len(sends)} send(s) of these bytes"))
        for send in sends[len(attempts):]:
            pairs.append(Pairing(attempts[-1], send, retry=True,
                                 note=f"identical resend of capture {sends[0].position}"))
    taken = set(partner.values())
    return pairs, [c for j, run in enumerate(capture_runs) if j not in taken for c in run]


def _in_send_order(requests: Sequence[Request]) -> tuple[list[Request], bool]:
    """Requests of several sessions in the order they were sent, each session's own order kept,
    and whether their logged send times decided it (else they stay in the order given)."""
    by_session: dict[str, list[Request]] = {}
    for request in requests:
        by_session.setdefault(request.session_id, []).append(request)
    if len(by_session) < 2 or any(r.time is None for r in requests):
        return list(requests), False
    return list(heapq.merge(*by_session.values(), key=lambda r: r.time.sent if r.time else 0.0)), True


def _where(facts: _Facts, capture: CapturedRequest) -> str:
    """The endpoint and model of a capture nothing explains, for its note."""
    parts = [f"{capture.method} {capture.path}" if capture.path else "an unknown endpoint"]
    if facts.model is not None:
        parts.append(f"model {facts.model}")
    return ", ".join(parts)


def align(requests: Sequence[Request], captures: Sequence[CapturedRequest], *,
          routes: RouteApi | None = None) -> list[Pairing]:
    """Pair every rebuilt request with its captured send (rules in the module docstring).

    Args:
        requests: rebuilt requests, from one or several logs.
        captures: a loaded capture.
        routes: the route API of each request (:data:`._evidence.RouteApi`): for an opened
            :class:`dsh_audit.session.Session`, ``session.route(r).api`` when that route's adapter
            is known, else None (what :func:`dsh_audit.capture.session_captures` passes; it also
            knows a ``--routes`` file); default :func:`._evidence.log_routes` of ``requests``.

    Returns pairings in the order of ``requests`` (a request's resends right after it), then
    the captures nothing explains, in capture order.

    Raises:
        CaptureError: the capture does not fit in memory (its bodies are parsed again here), as
            :func:`load_capture` says it.

    Example:
        >>> pairs = align(dsh_audit.requests(log), load_capture("wire.jsonl"))  # doctest: +SKIP
        >>> [(p.request.index, p.capture.position) for p in pairs if p.request and p.capture]  # doctest: +SKIP
        [(0, 1), (1, 0), (2, 2)]
    """
    try:
        return _align(requests, captures, routes=routes)
    except MemoryError:
        raise too_large(captures) from None


def too_large(captures: Sequence[CapturedRequest]) -> CaptureError:
    """The error of a capture that does not fit in memory, naming what it was loaded from as
    :func:`load_capture` does: the file, or the folder of a body folder's files (a body file has no
    locator), however many it holds.

    Example:
        >>> body = CapturedRequest(position=0, method="POST", path="/chat/completions", headers={},
        ...                        body=b"{}", time=None, source="bodies/1.json", locator="", kind="loop")
        >>> too_large([body]).path, too_large([]).path
        ('bodies', '.')
    """
    sources = sorted({str(Path(c.source).parent) if not c.locator else c.source for c in captures})
    return _too_large(Path(sources[0] if len(sources) == 1 else os.path.commonpath(sources) if sources else "."))


def _align(requests: Sequence[Request], captures: Sequence[CapturedRequest], *,
           routes: RouteApi | None) -> list[Pairing]:
    api_of = routes if routes is not None else log_routes(requests)
    order = list(dict.fromkeys(r.session_id for r in requests))
    sessions = set(order)
    lanes = {id(r): (api_of(r), request_model(r)) for r in requests if r.kind in _PAIRED_KINDS}
    facts = {id(c): _facts(c) for c in captures if c.kind in _PAIRED_KINDS}  # read when loaded: no body is read
    by_request: dict[int, list[Pairing]] = {}
    leftovers: list[Pairing] = []
    owner: dict[int, tuple[str, str]] = {}  # capture -> (its session, what says so)
    cuts = _cuts(order)
    unreadable: dict[str, list[CapturedRequest]] = {}  # a session's captures whose body is no request body
    for capture in captures:
        sid = capture.session_id
        if sid is not None and sid not in sessions:
            leftovers.append(Pairing(None, capture, note=f"foreign: session {sid} is not among the logs given"))
        elif capture.kind not in _PAIRED_KINDS:
            if sid is not None and capture.method == "POST" and _facts(capture).apis is not None:
                # DSH's header names the session, and it was sent where an LLM call is: an LLM
                # call of it, whatever its body holds
                unreadable.setdefault(sid, []).append(capture)
            else:  # a GET /models, or a POST to no endpoint an LLM call is sent to, or a body left coded
                undone = capture.undecoded_note()
                leftovers.append(Pairing(None, capture, note="not an LLM call (kind other)" if undone is None
                                         else f"foreign: {undone} (read as captured, kind other)"))
        elif sid is not None:
            owner[id(capture)] = (sid, "session header and order")
        elif (hinted := _hinted(facts[id(capture)], sessions, cuts)) is not None:
            owner[id(capture)] = (hinted[0], f"pi-ai session id ({hinted[1]}) and order")

    def pair(requests_in: list[Request], captures_in: list[CapturedRequest],
             basis: Callable[[Request, CapturedRequest], str]) -> list[CapturedRequest]:
        pairs, left = _pair_runs(requests_in, captures_in, lanes=lanes, facts=facts, basis=basis)
        for item in pairs:
            assert item.request is not None
            by_request.setdefault(id(item.request), []).append(item)
        return left

    # each session's requests and the captures it owns, by kind, each in the order given
    own_requests: dict[tuple[str, str], list[Request]] = {}
    for request in requests:
        own_requests.setdefault((request.session_id, request.kind), []).append(request)
    own_captures: dict[tuple[str, str], list[CapturedRequest]] = {}
    for capture in captures:
        if id(capture) in owner:
            own_captures.setdefault((owner[id(capture)][0], capture.kind), []).append(capture)
    for sid in order:
        for kind in _PAIRED_KINDS:
            mine, theirs = own_requests.get((sid, kind), []), own_captures.get((sid, kind), [])
            for capture in pair(mine, theirs, lambda _r, c: owner[id(c)][1]):
                leftovers.append(Pairing(None, capture, note=f"no rebuilt {kind} request of session {sid} left "
                                         f"for {_where(facts[id(capture)], capture)}"))
    for sid in order:
        unread = unreadable.get(sid)
        if not unread:
            continue
        # the session's requests no readable capture explains, in the order they were sent
        left = [r for kind in _PAIRED_KINDS for r in own_requests.get((sid, kind), [])]
        left.sort(key=lambda r: r.index)  # the log's order, as ``requests`` gave them
        if all(r.time is not None for r in left):
            left.sort(key=lambda r: r.time.sent if r.time else 0.0)
        for capture in unread:
            facts[id(capture)] = _facts(capture)
            why = capture.undecoded_note() or unreadable_body(capture.body, capture.headers)
            taker = next((r for r in left if id(r) not in by_request
                          and _fits(lanes[id(r)], facts[id(capture)], strict=False)), None)
            if taker is None:
                leftovers.append(Pairing(None, capture, note=f"no rebuilt request of session {sid} left for "
                                         f"{_where(facts[id(capture)], capture)}; {why}"))
            else:
                by_request[id(taker)] = [Pairing(taker, capture, note=f"session header and order; {why}")]
    unpaired = [r for r in requests if id(r) not in by_request]
    unlabelled = [c for c in captures if c.kind in _PAIRED_KINDS and c.session_id is None and id(c) not in owner]
    for kind in _PAIRED_KINDS:
        mine, timed = _in_send_order([r for r in unpaired if r.kind == kind])
        lane_sessions: dict[tuple[str | None, str | None], set[str]] = {}
        for request in mine:
            lane_sessions.setdefault(lanes[id(request)], set()).add(request.session_id)
        across = ("order by send time across sessions (no session header)" if timed
                  else "order across sessions as given (no session header)")

        def basis(request: Request, _capture: CapturedRequest) -> str:
            return across if len(lane_sessions[lanes[id(request)]]) > 1 else "order (no session header)"

        for capture in pair(mine, [c for c in unlabelled if c.kind == kind], basis):
            leftovers.append(Pairing(None, capture, note=f"no rebuilt {kind} request left for "
                                     f"{_where(facts[id(capture)], capture)}"))
    result: list[Pairing] = []
    for request in requests:
        result.extend(by_request.get(id(request)) or [Pairing(request, None, note=_missing(request, lanes))])
    result.extend(sorted(leftovers, key=lambda p: p.capture.position if p.capture else -1))
    return result


def _missing(request: Request, lanes: Mapping[int, tuple[str | None, str | None]]) -> str:
    """The note of a request no capture was paired with."""
    api, model = lanes.get(id(request), (None, None))
    route = f" on its route ({api}, model {model})" if api is not None and model is not None else ""
    return f"no captured {request.kind} send of this session left{route}"
