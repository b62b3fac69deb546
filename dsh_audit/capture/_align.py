"""Aligning captured requests with the requests rebuilt from logs.

Rules, in order:

1. **Session.** A capture carrying ``x-deepseek-harness-session-id`` is matched only with
   requests of that session (DSH sends the header on every loop, title and compaction call of
   the DeepSeek adapter). A capture naming a session that none of the given logs holds is
   reported as ``foreign`` and never paired. A capture without it that carries one of the
   session ids pi-ai forwards (:data:`PIAI_SESSION_HEADERS`, a body ``prompt_cache_key``) whose
   value is the id of one of the given sessions is matched only with that session's requests; such
   a value naming no given session is no evidence (a deployment's profile headers can set these
   names), never ``foreign``.
2. **Kind.** Loop captures pair with loop requests, compaction with compaction, title with title;
   a capture of kind ``other`` (no body, not JSON, no ``messages``) is not an LLM call, never
   paired, unless DSH's session header names one of the given sessions and it is a POST to an
   endpoint :func:`capture_apis` knows (a ``GET /models`` is no LLM call): then it is that session's
   call whose body cannot be read, and it pairs, after that session's other captures, with the
   first of the session's requests still unpaired (in send order) whose route and model it fits;
   the note says why its body is no request body (:func:`unreadable_body`), and its verdict is
   ``different`` (it is never identical to a rebuilt body).
3. **Route.** A capture pairs only with a request whose route (:func:`log_routes`, or the
   ``routes`` given) speaks the wire API of the capture's endpoint (:func:`capture_apis`:
   ``…/messages`` is pi-ai ``anthropic-messages``, ``…/chat/completions`` DSH's native adapter or
   pi-ai ``openai-completions`` — only the native one when the DSH session header is there —,
   ``…/responses`` pi-ai ``openai-responses``; the body's shape when the path says nothing), and
   whose model is the body's ``model`` (both adapters send the log's model id as the wire model).
   A side whose route or model is unknown pairs with any, after every pairing both sides know.
4. **Order.** Within one session, kind, route and model, requests (in the order given) and
   captures (in capture order) are paired first to first. A lane whose route and model both sides
   know and that holds more requests than captures, or fewer, is paired by content instead
   (:func:`_by_content`): still in order, but each capture with the request whose new messages it
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
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import CaptureError
from ..log import Event, parse_json
from ..replay import Request
from ..session import RouteEvidence, request_model, request_provider, route_for
from ._loaders import _too_large
from ._types import CapturedRequest, unreadable_body

__all__ = ["PIAI_SESSION_HEADERS", "Pairing", "RouteApi", "align", "capture_apis", "log_routes", "too_large"]

_PAIRED_KINDS = ("loop", "compaction", "title")
#: Content pairing (:func:`_by_content`) reads a string new in more requests of a lane than this
#: only near the pairs the other strings give (it names too many requests to look at them all).
_COMMON = 32
#: How far from the request the first pass of :func:`_by_content` paired a capture with the second
#: pass looks.
_NEAR = 16

#: ``routes(request)``: the wire API of the route a request took (pi-ai's API name, or
#: ``deepseek-chat-completions`` for DSH's native adapter: :attr:`dsh_audit.session.Route.api`),
#: None when the route is unknown.
RouteApi = Callable[[Request], "str | None"]

_NATIVE = "deepseek-chat-completions"
_CHAT = frozenset({_NATIVE, "openai-completions"})
#: Path endings and the wire APIs that post there: the SDKs pi-ai 0.82.1 drives post to
#: ``{baseURL}/chat/completions``, ``{baseURL}/responses`` (``openai``) and
#: ``{baseURL}/v1/messages`` (``@anthropic-ai/sdk``); DSH's native adapter to
#: ``{baseURL}/chat/completions`` (``packages/llm/llm-deepseek/src/adapter.ts``).
_ENDPOINTS: tuple[tuple[str, frozenset[str]], ...] = (
    ("/chat/completions", _CHAT),
    ("/messages", frozenset({"anthropic-messages"})),
    ("/responses", frozenset({"openai-responses"})),
)
#: The headers pi-ai 0.82.1 sets to the ``sessionId`` DSH's pi-ai adapter passes it
#: (``packages/llm/llm-pi-ai/src/adapter.ts``: ``sessionId: String(options.sessionId)``), each
#: only on some routes: ``x-session-affinity`` (``anthropic-messages`` and ``openai-completions``
#: with the ``sendSessionAffinityHeaders`` compat flag), ``x-session-id`` (OpenRouter-style
#: affinity), ``session_id`` (OpenAI-style affinity) and ``x-client-request-id``
#: (``openai-completions`` with affinity, ``openai-responses`` always);
#: ``dist/api/openai-completions.js`` and ``openai-responses.js`` ``createClient``,
#: ``anthropic-messages.js`` ``createClient``. pi-ai also sends ``prompt_cache_key`` in the body
#: (``openai-responses`` unless the cache retention is ``none``; ``openai-completions`` for
#: ``api.openai.com`` or long retention), cut to :data:`PROMPT_CACHE_KEY_LENGTH` code points
#: (``openai-prompt-cache.js``). ``metadata.user_id`` is sent only when the caller passes
#: ``metadata``, which DSH's adapter never does: it is not session evidence.
PIAI_SESSION_HEADERS = ("x-session-affinity", "x-session-id", "session_id", "x-client-request-id")
PROMPT_CACHE_KEY_LENGTH = 64
_BODY_KEY = "prompt_cache_key"


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


@dataclass(frozen=True, slots=True)
class _Facts:
    """What a captured body says about its route and session."""

    apis: frozenset[str] | None
    model: str | None
    hints: tuple[tuple[str, str], ...]


def _body_apis(body: Mapping[str, Any]) -> frozenset[str] | None:
    """The wire APIs a body's shape allows, when the path says nothing (a body folder)."""
    if isinstance(body.get("input"), list) and not isinstance(body.get("messages"), list):
        return frozenset({"openai-responses"})
    if "system" in body:  # Anthropic Messages: the system prompt is top-level, never a message
        return frozenset({"anthropic-messages"})
    messages = body.get("messages")
    if isinstance(messages, list) and messages and isinstance(messages[0], dict) \
            and messages[0].get("role") in ("system", "developer"):
        return _CHAT
    return None


def _parsed(capture: CapturedRequest) -> dict[str, Any]:
    try:
        value = parse_json(capture.body) if capture.body else None
    except (ValueError, UnicodeDecodeError):
        value = None
    return value if isinstance(value, dict) else {}


def capture_apis(capture: CapturedRequest, body: Mapping[str, Any] | None = None) -> frozenset[str] | None:
    """The wire APIs (route API names) that could have sent ``capture``: from its path's ending,
    else from its body's shape; narrowed to DSH's native adapter when it carries DSH's session
    header (only ``llm-deepseek`` sends it). None when neither tells.

    Example:
        >>> sent = CapturedRequest(0, "POST", "/v1/messages", {}, b"{}", None, "wire.jsonl", "line 1", "loop")
        >>> sorted(capture_apis(sent))
        ['anthropic-messages']
    """
    bare = capture.path.split("?", 1)[0].rstrip("/")
    apis = next((apis for ending, apis in _ENDPOINTS if bare.endswith(ending)), None)
    if apis is None:
        apis = _body_apis(body if body is not None else _parsed(capture))
    if apis is not None and capture.session_id is not None and _NATIVE in apis:
        return frozenset({_NATIVE})
    return apis


def _facts(capture: CapturedRequest) -> _Facts:
    body = _parsed(capture)
    model = body.get("model")
    hints = [(name, capture.headers[name]) for name in PIAI_SESSION_HEADERS if name in capture.headers]
    key = body.get(_BODY_KEY)
    if isinstance(key, str):
        hints.append((_BODY_KEY, key))
    return _Facts(capture_apis(capture, body), model if isinstance(model, str) else None, tuple(hints))


def _hinted(facts: _Facts, sessions: Collection[str], cuts: Mapping[str, str]) -> tuple[str, str] | None:
    """(session id, where) for the first pi-ai session id that names one of ``sessions`` (a
    header only by the whole id; ``prompt_cache_key`` also by one cut to
    :data:`PROMPT_CACHE_KEY_LENGTH` code points: ``cuts`` maps each cut to the first session, in
    the order given, that it is the cut of, :func:`_cuts`)."""
    for where, value in facts.hints:
        if where == _BODY_KEY and len(value) <= PROMPT_CACHE_KEY_LENGTH:
            found = cuts.get(value)  # a session id no longer than the cut is its own cut
        else:
            found = value if value in sessions else None
        if found is not None:
            return found, where
    return None


def _cuts(order: Iterable[str]) -> dict[str, str]:
    """Each session id cut to :data:`PROMPT_CACHE_KEY_LENGTH` code points -> the first of ``order``
    with that cut (for :func:`_hinted`)."""
    cuts: dict[str, str] = {}
    for sid in order:
        cuts.setdefault(sid[:PROMPT_CACHE_KEY_LENGTH], sid)
    return cuts


def log_routes(requests: Iterable[Request]) -> RouteApi:
    """The route API of each request (:data:`RouteApi`) as far as the requests themselves show it:
    the API the session's logged assistant messages show for the request's provider
    (:class:`dsh_audit.session.RouteEvidence`: pi-ai's replay envelope, or a native DeepSeek
    message), as :func:`dsh_audit.session.route_for` reads it (unknown when pi-ai's catalog
    contradicts it); None when no message shows it. Neither pi-ai's catalog nor DSH's defaults
    stand in for missing evidence: a route configuration can declare any provider id with another
    API (a hand-declared ``openai`` route speaking ``openai-completions``), and an unknown route
    pairs with any capture. A caller holding the sessions passes ``Session.route`` instead
    (:func:`dsh_audit.session.route_apis`, what every command passes): the evidence its one pass over
    the log collected, ``finish`` chunks and the route configuration included; this fallback, for
    requests without their session, reads each logged message once, at the first request that
    sends it (a request resending the previous one's messages has only its further ones read).

    Example:
        >>> log_routes([])(request) is None  # doctest: +SKIP
        True
    """
    evidence: dict[str, RouteEvidence] = {}
    seen: set[tuple[str, int]] = set()
    sent: dict[str, list[int]] = {}  # each session's previous request's message seqs
    for request in requests:
        sid, seqs = request.session_id, list(request.message_seqs)
        found = evidence.setdefault(sid, RouteEvidence())
        before = sent.get(sid, [])
        start = len(before) if seqs[:len(before)] == before else 0  # a resent prefix: every message seen
        sent[sid] = seqs
        for seq, message in zip(seqs[start:], request.messages[start:]):
            if (sid, seq) in seen:
                continue
            seen.add((sid, seq))
            if isinstance(message, dict) and message.get("role") == "assistant":
                found.on_event(Event(seq=seq, type="assistant/message", time=0, data={"message": message}, line=0))

    def api(request: Request) -> str | None:
        provider, found = request_provider(request), evidence.get(request.session_id)
        if provider is None or found is None or provider not in found.seen:
            return None
        # unknown when pi-ai's catalog contradicts the log; on a provider whose catalog models speak
        # several APIs the model decides (DSH llm-pi-ai catalog.ts:858)
        route = route_for(provider, found, model=request_model(request))
        return route.api if route.adapter is not None else None

    return api


def _fits(lane: tuple[str | None, str | None], facts: _Facts, *, strict: bool) -> bool:
    api, model = lane
    if strict:
        return (api is not None and model is not None and facts.apis is not None and api in facts.apis
                and model == facts.model)
    return ((api is None or facts.apis is None or api in facts.apis)
            and (model is None or facts.model is None or model == facts.model))


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
        if runs and runs[-1][-1].body == capture.body:
            runs[-1].append(capture)
        else:
            runs.append([capture])
    return runs


def _matches(request_runs: Sequence[list[Request]], capture_runs: Sequence[list[CapturedRequest]],
             lanes: Mapping[int, tuple[str | None, str | None]], facts: Mapping[int, _Facts]) -> dict[int, int]:
    """Request run -> capture run: first every run whose route and model both sides know, in order
    within each lane (by content where the lane's counts differ: :func:`_by_content`); then the
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


def _content(messages: Any) -> frozenset[str]:
    """Every string a conversation's message contents hold (a string that is a JSON object or
    array, such as tool-call arguments, by the strings in it): the same text whichever adapter's
    form carries it (DSH's logged messages, a chat-completions, Anthropic or Responses body)."""
    found: set[str] = set()
    stack: list[Any] = [messages]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str):
            if value[:1] in ("{", "[") and value[-1:] in ("}", "]"):
                try:
                    stack.append(parse_json(value.encode("utf-8")))
                    continue
                except (ValueError, UnicodeError):
                    pass
            found.add(value)
    return frozenset(found)


def _request_content(messages: Sequence[Any]) -> frozenset[str]:
    """:func:`_content` of messages as DSH logged them: their ``content`` only (a message's id and
    source are DSH's bookkeeping, never sent)."""
    return _content([m.get("content") if isinstance(m, dict) else m for m in messages])


def _fresh(requests: Sequence[Request]) -> tuple[list[frozenset[str]], dict[int, int]]:
    """Each request's new content (what its messages hold that the previous request of its
    session did not), and the next request of its session, by place. A request whose messages
    begin with the previous one's has only its further messages read (a long session's requests
    each resend its whole history)."""
    fresh: list[frozenset[str]] = []
    previous: dict[str, tuple[list[Any], set[str]]] = {}
    following: dict[int, int] = {}
    last: dict[str, int] = {}
    for i, request in enumerate(requests):
        messages = list(request.messages)
        before = previous.get(request.session_id)
        if before is not None and messages[:len(before[0])] == before[0]:
            added = _request_content(messages[len(before[0]):])
            fresh.append(added - before[1])
            before[1].update(added)
            previous[request.session_id] = (messages, before[1])
        else:
            content = _request_content(messages)
            fresh.append(content - before[1] if before is not None else content)
            previous[request.session_id] = (messages, set(content))
        if request.session_id in last:
            following[last[request.session_id]] = i
        last[request.session_id] = i
    return fresh, following


def _capture_content(capture: CapturedRequest) -> frozenset[str]:
    """:func:`_content` of the conversation a captured body sends."""
    body = _parsed(capture)
    messages = body.get("messages")
    return _content(messages if isinstance(messages, list) else body.get("input"))


def _by_content(requests: Sequence[Request], captures: Sequence[CapturedRequest]) -> list[tuple[int, int]]:
    """Pair the requests and captures of one lane (each in order) when their numbers differ: as
    many pairs as the shorter side has, in order, the gaps where the messages say they are.

    A request's new content is what its messages hold that the previous request of its session
    in the lane did not (the new user text, the last reply, its tool results). How much of it a
    capture holds is measured against the most any capture it could pair with holds (a
    compaction's summary, for one, is not sent as DSH logged it); a request whose new content no
    such capture holds has no evidence for any. A capture is the send of a request when it holds
    that request's new content and not the next one's: so a body missing in the middle of the
    lane leaves its own request unpaired instead of shifting every later pair, and a body that
    differs from its request in some content still pairs with it. Where the content tells
    nothing, the earliest pairs win (the order pairing).

    The work stays within the size of the content: each capture's strings are looked up in an
    index of the requests' new content, and only the pairs whose score is not zero
    (:func:`_scores`) are kept for :func:`_monotone`. A string new in many requests (more than
    :data:`_COMMON`: a content part's type name such as ``text``, new in the first request of
    every session of a lane; a prompt or a short reply many sessions send alike) would name each
    of them to every capture that holds it: where a lane has such strings, the pairs are found
    twice, first without them, then with every string but each capture looking only at the
    requests within :data:`_NEAR` of the one the first pass gave it (:func:`_near_first`; further
    off, the first pass's scores stand). A lane without such strings is read once, every pair
    its order allows looked at; so is, in the second pass, a lane whose counts differ by at most 5
    (every request a capture can pair with is then within :data:`_NEAR` of the first pass's).

    Returns (request index, capture index) pairs.
    """
    fresh, following = _fresh(requests)
    contents = [_capture_content(capture) for capture in captures]
    spare = abs(len(requests) - len(captures))
    index: dict[str, list[int]] = {}  # string -> the requests it is new in, ascending
    for i, strings in enumerate(fresh):
        for text in strings:
            index.setdefault(text, []).append(i)
    window = [(j - spare, j + spare) for j in range(len(captures))]
    telling = {text: found for text, found in index.items() if len(found) <= _COMMON}
    cells = _scores(fresh, following, contents, telling, window)
    if len(telling) < len(index):
        first = _monotone_cells(len(requests), len(captures), cells)
        reach = _near_first(first, len(requests), window)
        near = _scores(fresh, following, contents, index, reach)
        cells = {(i, j): v for (i, j), v in cells.items() if not reach[j][0] <= i <= reach[j][1]}
        cells.update(near)
    return _monotone_cells(len(requests), len(captures), cells)


def _monotone_cells(requests: int, captures: int, cells: Mapping[tuple[int, int], int]) -> list[tuple[int, int]]:
    """:func:`_monotone` over the shorter side, of scores by (request, capture): (request index,
    capture index) pairs."""
    if requests >= captures:  # a column is a capture, a row a request
        return _monotone(requests, captures, {(j, i - j): v for (i, j), v in cells.items() if i >= j})
    return [(i, j) for j, i in _monotone(captures, requests,
                                         {(i, j - i): v for (i, j), v in cells.items() if j >= i})]


def _near_first(pairs: Sequence[tuple[int, int]], requests: int,
                window: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The requests each capture is looked at against in the second pass of :func:`_by_content`:
    those within :data:`_NEAR` of the request the first pass paired it with (a capture it left
    unpaired: of the one it paired the capture before with, else the first request), within the
    capture's ``window``."""
    paired = {j: i for i, j in pairs}
    reach: list[tuple[int, int]] = []
    centre = 0
    for j, (low, high) in enumerate(window):
        centre = paired.get(j, centre)
        reach.append((max(low, centre - _NEAR, 0), min(high, centre + _NEAR, requests - 1)))
    return reach


def _scores(fresh: Sequence[frozenset[str]], following: Mapping[int, int], contents: Sequence[frozenset[str]],
            index: Mapping[str, Sequence[int]], reach: Sequence[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """The scores of :func:`_by_content` that are not zero, by (request, capture), for the pairs
    in reach (capture j and the requests ``reach[j]``, at most those a capture can pair with in
    order: j-spare .. j+spare): how much of request i's new content capture j holds, of the most
    any capture in its reach holds, less the same share of the next request's new content, in
    millionths. ``contents``: each capture's strings (:func:`_capture_content`); ``index``: the
    strings read, each with the requests it is new in, ascending.

    A capture that holds all of a request's new content and all of the next one's holds the same
    share of both: that pair scores zero, and only the pairs around the last request a capture
    holds, or around content held in part, are looked at. Each string a capture holds is looked
    up in two indexes: the requests it is new in, and the requests whose next request it is new
    in, each cut to the capture's reach."""
    size = [0] * len(fresh)  # how many of each request's new strings are read
    before = {after: i for i, after in following.items()}
    previous: dict[str, Sequence[int]] = {}  # string -> the requests whose next request it is new in
    for text, found in index.items():
        for i in found:
            size[i] += 1
        earlier = sorted(before[i] for i in found if i in before)
        if earlier:
            previous[text] = earlier
    most = [0] * len(fresh)
    # per capture: (request, what it holds of the request's new content, of the next request's)
    near: list[list[tuple[int, int, int]]] = []
    for strings, (low, high) in zip(contents, reach):
        hits: dict[int, int] = {}
        ahead: dict[int, int] = {}
        for text in strings:
            for counts, found in ((hits, index.get(text, ())), (ahead, previous.get(text, ()))):
                for at in range(bisect_left(found, low), bisect_right(found, high)):
                    counts[found[at]] = counts.get(found[at], 0) + 1
        full: set[int] = set()
        for i, count in hits.items():
            most[i] = max(most[i], count)
            if count == size[i]:
                full.add(i)
        near.append([(i, hits.get(i, 0), ahead.get(i, 0)) for i in {*hits, *ahead}
                     if not (i in full and following.get(i) in full)])

    def share(i: int, count: int) -> float:
        return count / most[i] if most[i] else 0.0

    cells: dict[tuple[int, int], int] = {}
    for j, candidates in enumerate(near):
        for i, mine, next_ in candidates:
            value = round((share(i, mine) - (share(following[i], next_) if i in following else 0.0)) * 1_000_000)
            if value:
                cells[i, j] = value
    return cells


#: Below every total (each score is at most two million in size, and a lane holds far fewer pairs).
_NONE = -(1 << 62)


@dataclass(frozen=True, slots=True)
class _Column:
    """One column's scores, as the pass back over the columns left them for the pass forward:
    ``gain``: ``score + best[k+1]`` at each scored offset; ``past``: the first offset after each
    scored one that is not scored."""

    scores: dict[int, int]
    gain: dict[int, int]
    past: dict[int, int]
    offsets: list[int]  # the scored offsets, ascending
    top: list[int]  # top[n]: the largest gain at offsets[n:]


def _monotone(rows: int, cols: int, cells: Mapping[tuple[int, int], int]) -> list[tuple[int, int]]:
    """Pair every column with a row (``cols <= rows``), both in order, for the largest total
    score; of equal totals, the one whose rows are earliest. ``cells``: the scores that are not
    zero, by (column k, offset s) for row k+s (``0 <= s <= rows - cols``). Returns (row, column)
    pairs.

    ``best[k][s]``, the largest total for columns k.. when column k may take rows k+s.., is
    ``max(score(k+s, k) + best[k+1][s], best[k][s+1])``: it never grows with s, and a column
    without a score leaves it as it is. So it is kept as a step function of s, changed by each
    scored column where its scores reach (at most two steps each, and the steps they cover), with
    what each column changed, to undo it on the pass forward that takes, column by column, the
    earliest row of an optimal pairing: the work is within the number of scores and of rows, each
    times a logarithm, however the scores spread (a table of ``best`` over the scored columns and
    the offsets around the scores, the other way, grows with their product: on a lane of 10,000
    requests and 5,155 captures it took 2.9 s where this takes 0.07 s).

    Example:
        >>> _monotone(4, 2, {(0, 1): 5, (1, 2): 3})  # column 0 takes row 1, column 1 row 3
        [(1, 0), (3, 1)]
        >>> _monotone(3, 2, {})  # no score: the earliest rows
        [(0, 0), (1, 1)]
    """
    spare = rows - cols
    by_column: dict[int, dict[int, int]] = {}
    for (k, s), value in cells.items():
        by_column.setdefault(k, {})[s] = value
    # best[k+1] now: values[n] at starts[n] <= s < starts[n+1]
    starts: list[int] = [0]
    values: list[int] = [0]
    changed: dict[int, list[tuple[int, int, list[int], list[int]]]] = {}
    columns: dict[int, _Column] = {}

    def value_at(s: int) -> int:
        return values[bisect_right(starts, s) - 1] if s <= spare else _NONE

    def assign(low: int, high: int, value: int, log: list[tuple[int, int, list[int], list[int]]]) -> None:
        """best[low..high] = value; what it replaced goes to ``log``."""
        b = bisect_right(starts, high + 1)
        a = bisect_left(starts, low, 0, b)
        new_starts, new_values = ([low, high + 1], [value, values[b - 1]]) if high < spare else ([low], [value])
        log.append((a, a + len(new_starts), starts[a:b], values[a:b]))
        starts[a:b], values[a:b] = new_starts, new_values

    for k in sorted(by_column, reverse=True):
        scores = by_column[k]
        down = sorted(scores, reverse=True)
        past: dict[int, int] = {}
        was: dict[int, int] = {}  # best[k+1] at each scored offset
        gain: dict[int, int] = {}
        beyond: dict[int, int] = {}  # best[k+1] at the first offset not scored
        for s in down:
            past[s] = past[s + 1] if s + 1 in scores else s + 1
            was[s] = value_at(s)
            gain[s] = scores[s] + was[s]
            beyond[s] = value_at(past[s])
        log: list[tuple[int, int, list[int], list[int]]] = []
        carry = _NONE
        for s, below in zip(down, [*down[1:], -1]):
            carry = max(carry, gain[s])
            here = max(carry, beyond[s])
            if here != was[s]:  # offsets down to s are as best[k+1] left them
                assign(s, s, here, log)
            # offsets below s down to the next scored one: best[k+1] raised to ``carry`` where lower
            # (a run of them ending at s-1, best[k+1] never growing with the offset)
            if below + 1 <= s - 1 and value_at(s - 1) < carry:
                lo, hi = bisect_right(starts, below + 1) - 1, bisect_right(starts, s - 1) - 1
                while lo < hi:
                    mid = (lo + hi) // 2
                    if values[mid] < carry:
                        hi = mid
                    else:
                        lo = mid + 1
                assign(max(below + 1, starts[lo]), s - 1, carry, log)
        changed[k] = log
        up = down[::-1]
        top = [_NONE] * (len(up) + 1)
        for n in range(len(up) - 1, -1, -1):
            top[n] = max(top[n + 1], gain[up[n]])
        columns[k] = _Column(scores, gain, past, up, top)
    pairs: list[tuple[int, int]] = []
    s = 0
    for k in range(cols):
        column = columns.get(k)
        if column is not None:
            for a, b, old_starts, old_values in reversed(changed[k]):
                starts[a:b], values[a:b] = old_starts, old_values  # best[k+1] again

            def best(x: int, column: _Column = column) -> int:
                """best[k][x]: the best of the first offset from x not scored and the scored ones."""
                at = bisect_left(column.offsets, x)
                return max(value_at(column.past.get(x, x)), column.top[at])

            while s < spare and column.scores.get(s, 0) + value_at(s) < best(s + 1):
                s += 1
        pairs.append((k + s, k))
    return pairs


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
        routes: the route API of each request (:data:`RouteApi`): for an opened
            :class:`dsh_audit.session.Session`, ``session.route(r).api`` when that route's adapter
            is known, else None (what :func:`dsh_audit.capture.session_captures` passes; it also
            knows a ``--routes`` file); default :func:`log_routes` of ``requests``.

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
    facts = {id(c): _facts(c) for c in captures if c.kind in _PAIRED_KINDS}
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
            if sid is not None and capture.method == "POST" and capture_apis(capture) is not None:
                # DSH's header names the session, and it was sent where an LLM call is: an LLM
                # call of it, whatever its body holds
                unreadable.setdefault(sid, []).append(capture)
            else:  # a GET /models, or a POST to no endpoint an LLM call is sent to
                leftovers.append(Pairing(None, capture, note="not an LLM call (kind other)"))
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
            why = unreadable_body(capture.body)
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
