"""What a captured request and a rebuilt one say about the route, model and session that sent them:
the wire APIs a capture's endpoint or body allows (:func:`capture_apis`), the session ids pi-ai
forwards (:data:`PIAI_SESSION_HEADERS`), and the route API the requests' own logged messages show
(:func:`log_routes`). :mod:`._align`'s rules 1 and 3 pair by them.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from ..log import Event, parse_json
from ..replay import Request
from ..session import RouteEvidence, request_model, request_provider, route_for
from ._types import SESSION_HEADER, CapturedRequest, _Facts

__all__ = ["PIAI_SESSION_HEADERS", "RouteApi", "capture_apis", "log_routes"]

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
    return _apis(capture.path, capture.headers, lambda: body if body is not None else _parsed(capture))


def _apis(path: str, headers: Mapping[str, str], body: Callable[[], Mapping[str, Any]]) -> frozenset[str] | None:
    """:func:`capture_apis` of a request's path and headers, its body read (``body()``) only when
    the path says nothing."""
    bare = path.split("?", 1)[0].rstrip("/")
    apis = next((apis for ending, apis in _ENDPOINTS if bare.endswith(ending)), None)
    if apis is None:
        apis = _body_apis(body())
    if apis is not None and SESSION_HEADER in headers and _NATIVE in apis:
        return frozenset({_NATIVE})
    return apis


def _facts(capture: CapturedRequest) -> _Facts:
    """What ``capture`` says about its route and session: as its loader read them, else from its body."""
    return capture.facts if capture.facts is not None else _facts_of(capture.path, capture.headers,
                                                                      _parsed(capture))


def _facts_of(path: str, headers: Mapping[str, str], value: Any) -> _Facts:
    """:func:`_facts` of a request's path, headers and parsed body (``value``: any JSON value)."""
    body = value if isinstance(value, dict) else {}
    model = body.get("model")
    hints = [(name, headers[name]) for name in PIAI_SESSION_HEADERS if name in headers]
    key = body.get(_BODY_KEY)
    if isinstance(key, str):
        hints.append((_BODY_KEY, key))
    return _Facts(_apis(path, headers, lambda: body), model if isinstance(model, str) else None, tuple(hints))


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
