"""The request headers of a pi-ai rendering and :class:`PiRenderer`, the render steps its renderers share.

pi-ai resolves a route/model to a ``Model`` (context window, output capability, reasoning levels,
compat switches, model headers) that DSH never logs: that record is
:class:`~dsh_audit.wire._piai_facts.PiModel` (a route's settings:
:class:`~dsh_audit.wire._piai_facts.RouteProfile`), pi-ai's catalog of them lives in
:mod:`dsh_audit.wire._piai_catalog`, and DSH's side of ``llm-pi-ai/src/adapter.ts`` (spec §8.2:
which effort reaches pi-ai, which cap, what the adapter refuses) in :mod:`dsh_audit.wire._piai_call`.
This module holds what a rendering adds to them: the headers pi-ai and its SDKs send
(:func:`merge_profile_headers`, :func:`credential_header`, :func:`user_agent`) and
:class:`PiRenderer`, which holds the route profile settings the pi-ai renderers take and the render
steps they share.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar
from urllib.parse import urlsplit

from ..errors import RenderError
from ..jsjson import stringify_bytes
from ._piai_call import PiCall, request_call
from ._piai_facts import PiModel
from ._types import WireRequest

__all__ = ["HARNESS_VERSION", "INVALID_HEADER_VALUE", "NOT_A_TOKEN", "ROUTE_HEADER_FILE", "SDK_PLATFORM", "PiRenderer",
           "credential_header", "header_value", "header_value_problem", "merge_profile_headers", "profile_header",
           "route_header_error", "route_header_problem", "user_agent"]

#: DSH release whose attribution ``user-agent`` the pi-ai renderers write unless told otherwise.
HARNESS_VERSION = "0.1.0-rc.8"
#: The Stainless platform headers of the captures (``x-stainless-os/arch/runtime/runtime-version``).
SDK_PLATFORM: tuple[tuple[str, str], ...] = (
    ("x-stainless-os", "Linux"), ("x-stainless-arch", "x64"), ("x-stainless-runtime", "node"),
    ("x-stainless-runtime-version", "v24.19.0"))
#: Where the hint of a route profile header's refusal (:func:`route_header_error`) says the header is, and
#: what marks such a hint: a header to fix where it is, not a route to declare. A view given no ``--routes``
#: names the DSH home's layers the header is in in its place (:func:`dsh_audit.session.routes_hint`).
ROUTE_HEADER_FILE = "the file given as --routes FILE"
#: pi-ai API -> the dsh-audit adapter that renders it (for a renderer's mismatch hint).
_API_ADAPTERS = {"anthropic-messages": "anthropic", "openai-completions": "openai", "openai-responses": "responses"}
#: How many header keys (call config, tools, dynamic headers) a renderer keeps the headers of: a session names few.
_KEPT_HEADERS = 8


def merge_profile_headers(headers: list[tuple[str, str]], call: PiCall, *, client: tuple[str, ...] = (),
                          dynamic: tuple[tuple[str, str], ...] = ()) -> list[tuple[str, str]]:
    """``headers`` (the SDK's, in wire order, ending with DSH's ``user-agent`` and
    ``content-type``) with the model's catalog ``headers`` (:attr:`._piai_facts.PiModel.headers`) and the route
    profile's ``headers`` (DSH ``requestHeaders``: deployment headers, attribution names removed,
    then the attribution) merged as pi-ai and its SDK merge them.

    ``client`` names the entries pi-ai itself puts in the SDK client's ``defaultHeaders`` object,
    which the model's headers and DSH's join: the model's first for the OpenAI APIs
    (``openai-completions.js`` and ``openai-responses.js`` ``createClient``: ``{...model.headers}``,
    then the session headers), after pi-ai's own for Anthropic (``anthropic-messages.js``
    ``createClient``: ``mergeHeaders({accept, ...}, sessionAffinityHeaders, model.headers,
    optionsHeaders)``), DSH's last. There a header of exactly the same name keeps its place and
    takes the later value (``Object.assign``); names differing in case are two entries. The SDK then
    builds the request's headers source by source (``internal/headers.js`` ``buildHeaders``: SDK
    defaults, then ``defaultHeaders``, then the body's ``content-type``), every name lower-cased,
    and each header a later entry sets is removed from its earlier place and appended: so a profile
    header that overrides an SDK header (``accept``, ``anthropic-version``, ``x-stainless-*``) moves
    to the profile's place, before ``user-agent``, and a model's ``User-Agent`` gives way to DSH's.
    Checked against pi-ai 0.82.1's own requests (``tests/data/piai_oracle``,
    ``tests/test_piai_catalog_all.py``).

    A credential header (:func:`credential_header`) a route file's profile or model names is
    withheld, as the SDK's own ``authorization`` and ``x-api-key`` are: a deployment authenticates
    a gateway there (``cf-aig-authorization`` for an authenticated Cloudflare AI Gateway, which a
    hand-declared route can set nowhere else), and a rendered request never shows a credential.

    ``dynamic`` are the headers pi-ai computes per request and lays right after the model's
    (GitHub Copilot's, :func:`dsh_audit.wire._piai.copilot_headers`): the Anthropic client's
    ``mergeHeaders(own, model.headers, dynamicHeaders, optionsHeaders)`` and the OpenAI clients'
    ``Object.assign({...model.headers}, copilotHeaders)`` before their session headers.

    Every value is the one ``Headers.append`` stores and fetch sends (:func:`header_value`: trimmed of
    HTTP whitespace); one fetch refuses (:func:`header_value_problem`) raises :class:`RenderError`,
    checked where the SDK appends it, so a session header a profile header of the same name replaces
    is not. Checked against pi-ai 0.82.1 with session ids and profile values that need trimming or
    hold a character past U+00FF.

    Raises:
        RenderError: a route profile header fetch refuses (:func:`route_header_problem`): DSH's schema
            takes any string there, so only the route's requests fail, as they are sent.
    """
    _check_route_headers(call)
    model_headers = call.model.headers
    if not call.headers and not model_headers and not dynamic:
        return _sent([(name, _appended(name, value, call)) for name, value in headers], call)
    values = dict(headers)
    last = ("user-agent", "content-type")
    sdk = [(name, value) for name, value in headers if name not in client and name not in last]
    own = [(name, values[name]) for name, _ in headers if name in client]
    merged: dict[str, str] = {}
    sources = (own, model_headers, dynamic) if call.model.api == "anthropic-messages" \
        else (model_headers, dynamic, own)
    for source in (*sources, call.headers, (("user-agent", values["user-agent"]),)):
        merged.update(source)
    out: dict[str, str] = {}
    for name, value in (*sdk, *merged.items(), ("content-type", values["content-type"])):
        out.pop(name.lower(), None)
        out[name.lower()] = _appended(name, value, call)
    return [(name, value) for name, value in _sent(list(out.items()), call) if not credential_header(name)]


#: HTTP whitespace (WHATWG fetch): what ``Headers.append`` strips from both ends of a value.
_HTTP_WHITESPACE = " \t\r\n"


def header_value(value: str) -> str:
    """``value`` as fetch's ``Headers.append`` keeps it: leading and trailing HTTP whitespace (space,
    tab, CR, LF) removed, the WHATWG fetch "normalize" step, so the value on the wire.

    Example:
        >>> header_value(" a b\\t\\r\\n"), header_value("\\x0ba\\x0b"), header_value("  ")
        ('a b', '\\x0ba\\x0b', '')
    """
    return value.strip(_HTTP_WHITESPACE)


#: :func:`header_value_problem`'s answers: what fetch's ``Headers.append`` refuses in a normalised value.
INVALID_HEADER_VALUE = "holds a CR, LF or NUL, which fetch refuses in a header value"
NOT_BYTE_STRING = "holds a character past U+00FF, which fetch cannot send"
#: what Node's fetch (undici's ``headerCharRegex``) refuses as it sends a request: a control character but tab
_UNDICI_REFUSED = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")


def header_value_problem(value: str) -> str | None:
    """Why Node's fetch throws on the normalised (:func:`header_value`) header ``value``, so that
    pi-ai sends nothing, or None: a character past U+00FF (:data:`NOT_BYTE_STRING`: webidl's ByteString
    conversion, "Cannot convert argument to a ByteString"), a CR, LF or NUL (:data:`INVALID_HEADER_VALUE`:
    ``Headers.append``, "is an invalid header value"), or another control character but tab (undici:
    "invalid ... header"). A route file's headers and a session id are checked with it alike.

    Example:
        >>> header_value_problem("s\\u00e9ssion\\x85\\tx"), header_value_problem("\\u4e2d")
        (None, 'holds a character past U+00FF, which fetch cannot send')
        >>> header_value_problem("a\\nb")
        'holds a CR, LF or NUL, which fetch refuses in a header value'
        >>> header_value_problem("a\\x1bb")
        'holds control character U+001B, which Node.js fetch (undici) refuses in a header value'
    """
    if any(ord(c) > 0xFF for c in value):
        return NOT_BYTE_STRING
    if any(c in value for c in "\r\n\0"):
        return INVALID_HEADER_VALUE
    control = _UNDICI_REFUSED.search(value)
    if control is None:
        return None
    return (f"holds control character U+{ord(control.group()):04X}, which Node.js fetch (undici) refuses in a "
            "header value")


#: An HTTP header name (RFC 9110 ``token``): what ``Headers.append`` takes as a name.
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: :func:`route_header_problem`'s answer for a name fetch refuses.
NOT_A_TOKEN = "is not an HTTP token, which fetch refuses as a header name"


def route_header_problem(name: str, value: str) -> str | None:
    """Why fetch throws on the route profile header ``name: value`` as the SDK appends it (a name that
    is no HTTP token, or :func:`header_value_problem` of the trimmed value), or None when it is sent.

    Example:
        >>> route_header_problem("X-Team", " a "), route_header_problem("x team", "a")
        (None, 'is not an HTTP token, which fetch refuses as a header name')
    """
    return NOT_A_TOKEN if not _TOKEN.fullmatch(name) else header_value_problem(header_value(value))


def route_header_error(call: PiCall, name: str, problem: str) -> RenderError:
    """The refusal of a request on ``call``'s route whose profile header ``name`` makes pi-ai send
    nothing (``problem``: why), naming the route file key; the renderer adds the request's seq."""
    route = call.model.provider
    return RenderError(f"pi-ai sends no request on route {route!r}: providers.{route}.headers.{name} {problem}",
                       hint=f"fix or remove the header under providers.{route}.headers in {ROUTE_HEADER_FILE} "
                            "(docs/routes.md section 7.1); the requests of other routes render")


def profile_header(headers: tuple[tuple[str, str], ...], name: str) -> str | None:
    """What ``Headers.get(name)`` gives once the SDK has appended a profile's ``headers`` (one source):
    the trimmed values of every entry of that name in any case, joined by ``", "``; None when there is none.

    Example:
        >>> profile_header((("X-Api-Key", " "), ("x-team", "a")), "x-api-key"), profile_header((), "x-api-key")
        ('', None)
    """
    found = [header_value(value) for key, value in headers if key.lower() == name]
    return ", ".join(found) if found else None


#: What ``Headers.append`` itself throws on (the rest of :func:`header_value_problem`'s answers, undici's,
#: only as the request is sent, so not on a value a later source replaces).
_APPEND_REFUSED = (NOT_A_TOKEN, NOT_BYTE_STRING, INVALID_HEADER_VALUE)


def _check_route_headers(call: PiCall) -> None:
    """Refuse the request when ``Headers.append`` throws on a route profile header (:func:`route_header_problem`).

    DSH's ``config.ts`` takes any string as a header name or value (``z.dict(z.string())``) and pi-ai
    hands them to the SDK on every request of the route, so such a header fails each of the route's
    requests, and only those: the route file itself is read as DSH reads it. Every profile header is
    appended (only DSH's ``user-agent`` replaces one before), so each is checked as given; a control
    character undici refuses is checked on what is sent (:func:`_sent`): the body's ``content-type``
    replaces a profile's.
    """
    for name, value in call.headers:
        problem = route_header_problem(name, value)
        if problem in _APPEND_REFUSED:
            raise route_header_error(call, name, problem)


def _appended(name: str, value: str, call: PiCall) -> str:
    """``value`` as the SDK's ``Headers.append`` stores it (:func:`header_value`).

    Raises:
        RenderError: ``Headers.append`` throws on it and pi-ai sends nothing: only a session id can
            (a route profile's headers are checked first, :func:`_check_route_headers`); the renderer
            adds the request's seq.
    """
    sent = header_value(value)
    problem = header_value_problem(sent)
    if problem is not None and problem in _APPEND_REFUSED:
        raise _refusal(name, sent, problem, call)
    return sent


def _sent(headers: list[tuple[str, str]], call: PiCall) -> list[tuple[str, str]]:
    """``headers`` as fetch sends them: undici (Node's fetch) refuses the request when one holds a
    control character but tab (:func:`header_value_problem`), and pi-ai sends nothing.

    Raises:
        RenderError: such a value, from the session id or a route profile header.
    """
    for name, value in headers:
        problem = header_value_problem(value)
        if problem is not None:
            raise _refusal(name, value, problem, call)
    return headers


def _refusal(name: str, sent: str, problem: str, call: PiCall) -> RenderError:
    """The refusal of a request whose header ``name: sent`` fetch refuses (``problem``), naming where
    the value comes from: the log's session id or the route profile (the SDKs' own and the catalog's are sent)."""
    if call.session_id is not None and sent == header_value(call.session_id):
        return RenderError(f"pi-ai sends no request: its header {name} (the log's session id) {problem}",
                           hint="DSH makes its own ASCII session ids, so the log's was edited: there is no pi-ai "
                                "request to render; force another wire format with --adapter")
    key = next((key for key, _ in call.headers if key.lower() == name.lower()), None)
    if key is not None:
        return route_header_error(call, key, problem)
    return RenderError(f"pi-ai sends no request: its header {name} {problem}",
                       hint="fix the header's value in the route profile given to the renderer")


#: A header name that says its value is a credential: an authorization, an API key, a token, a secret,
#: a cookie, as a whole dash-, dot- or underscore-separated part of the name.
_CREDENTIAL_HEADER = re.compile(r"(?i)(?:^|[-_.])(?:auth|authorization|authentication|token|secret|password|"
                                r"api[-_]?key|access[-_]?key|subscription[-_]?key|functions[-_]key|cookie|"
                                r"signature)(?:$|[-_.])")


def credential_header(name: str) -> bool:
    """Whether a header named ``name`` carries a credential, so that a rendered request withholds
    it: the SDKs' ``authorization`` and ``x-api-key``; pi-ai 0.82.1's ``cf-aig-authorization``,
    the only header its ``cloudflare-ai-gateway`` auth sends the key in, with ``Authorization`` and
    ``x-api-key`` set to null so that the SDKs send neither (``dist/providers/cloudflare-auth.js:
    63-78``); a gateway's own (``x-portkey-api-key``, ``helicone-auth``, ``x-auth-token``).

    Example:
        >>> [credential_header(n) for n in ("Authorization", "cf-aig-authorization", "x-api-key",
        ...                                  "x-goog-api-key", "helicone-auth", "Cookie")]
        [True, True, True, True, True, True]
        >>> [credential_header(n) for n in ("api_key", "x_api_key", "X-Access_Key", "Ocp-Apim-Subscription-Key",
        ...                                  "x-functions-key", "authentication")]
        [True, True, True, True, True, True]
        >>> [credential_header(n) for n in ("x-session-affinity", "session_id", "anthropic-beta", "x-team",
        ...                                  "user-agent", "nvcf-poll-seconds")]
        [False, False, False, False, False, False]
    """
    return _CREDENTIAL_HEADER.search(name) is not None


def user_agent(version: str) -> str:
    """DSH's attribution ``user-agent`` (``packages/llm/llm/src/attribution.ts``)."""
    return f"deepseek-harness/{version} (+https://github.com/deepseek-ai/deepseek-harness)"


def _own_refusal(refusal: RenderError) -> RenderError:
    """A new refusal of ``refusal``'s class, message and fields, in an attribute dict of its own, so that
    setting its seq leaves ``refusal`` as it was. Not ``copy.copy``: that goes through the exception's
    reduction, which a library may replace for every exception class loaded (tblib's ``pickling_support.
    install()``, which importing Dask's ``distributed`` runs) with one whose copy shares the original's
    ``__dict__``, so that a kept refusal would take the first request's seq for every later request.

    Example:
        >>> kept = RenderError("no", hint="h", dsh_code="X")
        >>> own = _own_refusal(kept)
        >>> own.seq = 5
        >>> (str(own), own.dsh_code, type(own) is RenderError), (kept.seq, str(kept))
        (('<input> seq 5: no (hint: h)', 'X', True), (None, 'no (hint: h)'))
    """
    own = type(refusal).__new__(type(refusal), *refusal.args)
    own.__dict__.update(vars(refusal))
    return own


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class PiRenderer:
    """What the pi-ai renderers share: the route profile's settings and the render steps.

    A subclass names its pi-ai API, endpoint and adapter, and builds the body and the headers.
    The three profile settings, when given, win over the route file's (:class:`._piai_facts.RouteProfile`
    on each model); what the log records wins over both (:func:`._piai_call.request_call`).

    Args:
        models: extra :class:`._piai_facts.PiModel` facts by ``(route, model id)``; built-ins cover the corpus.
        owned_routes: the routes of the pi-ai adapter that serves the request (default: every route,
            as DSH's one ``llm-pi-ai`` adapter serves them all; see :func:`._piai_context.pi_context`).
        profile_reasoning: the route profile's ``reasoning``, used when a request names no effort
            (default: the route file's, :class:`~dsh_audit.wire.RouteProfile`).
        cache_retention: the profile's ``cacheRetention`` (``short``, ``long``, ``none``; default:
            the route file's, else ``short``).
        thinking_budgets: the profile's ``thinkingBudgets`` by level (default: the route file's).
        version: DSH version written in ``user-agent``.
        platform: the SDK's ``x-stainless-os/arch/runtime/runtime-version`` headers.
    """

    adapter: ClassVar[str]
    api: ClassVar[str]
    endpoint: ClassVar[str]
    other: ClassVar[tuple[str, str]]  # the other pi-ai API and its adapter (no longer read: the hint names the
    # request's own API's adapter, or says no wire format has one)

    models: Mapping[tuple[str, str], PiModel] | None = None
    owned_routes: frozenset[str] | None = None
    profile_reasoning: str | None = None
    cache_retention: str | None = None
    thinking_budgets: Mapping[str, int] | None = None
    version: str = HARNESS_VERSION
    platform: tuple[tuple[str, str], ...] = SDK_PLATFORM
    #: what the renderer keeps between requests: the last loop request's folded conversion and
    #: each message's (see :func:`dsh_audit.wire._piai.folded_request_context`)
    state: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def call(self, request: Any) -> PiCall:
        """DSH's stream options for ``request`` under this renderer's profile."""
        return request_call(request, models=self.models, profile_reasoning=self.profile_reasoning,
                            cache_retention=self.cache_retention, thinking_budgets=self.thinking_budgets)

    def body(self, request: Any, call: PiCall, *, compaction_instruction: str | None,
             images: Mapping[str, bytes] | None = None, offloaded_image_text: str | None = None) -> dict[str, Any]:
        """The request body as a JSON value (keys in wire order)."""
        raise NotImplementedError

    def headers(self, call: PiCall, body: Mapping[str, Any],
                dynamic: tuple[tuple[str, str], ...] = ()) -> tuple[tuple[str, str], ...]:
        """The request headers in wire order (credential withheld); ``dynamic``: the ones pi-ai
        computes from the request's context (:meth:`dynamic_headers`)."""
        raise NotImplementedError

    def dynamic_headers(self, request: Any, call: PiCall, *, compaction_instruction: str | None,
                        images: Mapping[str, bytes] | None, offloaded_image_text: str | None
                        ) -> tuple[tuple[str, str], ...]:
        """The headers pi-ai derives from the request's context, in its order (none here)."""
        return ()

    def _checked_call(self, request: Any) -> PiCall:
        call = self.call(request)
        if call.model.api != self.api:
            adapter = _API_ADAPTERS.get(call.model.api)
            # a catalog model may speak an API no renderer here writes (bedrock-converse-stream, ...)
            hint = f"render {call.model.api} routes with --adapter {adapter}" if adapter is not None else \
                f"a known route with no wire format: dsh-audit writes no {call.model.api} bodies, and no " \
                "--adapter renders it"
            seq = request.config_seq
            raise RenderError(f"{call.model.provider}/{call.model.id} speaks {call.model.api}, not {self.api}",
                              hint=hint, seq=seq)  # located as every render refusal: the header it is about
        return call

    def body_value(self, request: Any, *, compaction_instruction: str | None = None,
                   images: Mapping[str, bytes] | None = None,
                   offloaded_image_text: str | None = None) -> dict[str, Any]:
        """The body :meth:`render` serialises, as a JSON value (keys in wire order): its texts are
        the log's own string objects, so a view that reads its parts (the prompt-cache accounting)
        neither parses the body back nor holds a second copy of a huge message.

        Raises:
            RenderError: as :meth:`render`: a request whose headers pi-ai cannot send has no body either.
        """
        call = self._checked_call(request)
        body = self.body(request, call, compaction_instruction=compaction_instruction, images=images,
                         offloaded_image_text=offloaded_image_text)
        self._wire_headers(request, call, body, compaction_instruction=compaction_instruction, images=images,
                           offloaded_image_text=offloaded_image_text)
        return body

    def _wire_headers(self, request: Any, call: PiCall, body: Mapping[str, Any], *, compaction_instruction: str | None,
                      images: Mapping[str, bytes] | None, offloaded_image_text: str | None
                      ) -> tuple[tuple[str, str], ...]:
        """The request's headers (:meth:`headers`), a refusal located at the request's header: fetch throws on
        one (the session id, a route profile header) or the SDK does (a blank ``x-api-key``), and pi-ai sends
        nothing, so that every view of the request (its body alone too) refuses it alike.

        The headers are a function of the call (:class:`PiCall`: the route's model, profile headers and
        cache retention, the session id), of the :meth:`dynamic_headers` and, of the body, of whether it
        has tools (Anthropic's beta): the last :data:`_KEPT_HEADERS` such keys keep their headers, or
        their refusal, in :attr:`state`, so a session's requests on one route build them once, and every
        request still gets its own refusal, at its own header."""
        dynamic = self.dynamic_headers(request, call, compaction_instruction=compaction_instruction, images=images,
                                       offloaded_image_text=offloaded_image_text)
        return self._kept_headers(request, call, bool(body.get("tools")), dynamic)

    def _kept_headers(self, request: Any, call: PiCall, tools: bool,
                      dynamic: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        """:meth:`_wire_headers` once its key is known (``tools``: whether the body has tools)."""
        kept: list[tuple[PiCall, bool, tuple[tuple[str, str], ...], Any]] = self.state.setdefault("headers", [])
        found = next((entry[3] for entry in kept if (entry[0] is call or entry[0] == call) and entry[1] == tools
                      and entry[2] == dynamic), None)
        if found is None:
            try:
                found = self.headers(call, {"tools": tools}, dynamic)  # all of the body they read
            except RenderError as exc:
                found = _own_refusal(exc)  # as raised, before any request's seq is put on it
            kept.insert(0, (call, tools, dynamic, found))
            del kept[_KEPT_HEADERS:]
        if isinstance(found, RenderError):
            refusal = _own_refusal(found)  # each request's own, at its header
            refusal.seq = request.config_seq if refusal.seq is None else refusal.seq
            raise refusal
        headers: tuple[tuple[str, str], ...] = found
        return headers

    def header_refusal(self, request: Any) -> RenderError | None:
        """Why pi-ai sends no ``request`` for its headers alone, located at its header (what :meth:`render`
        raises there), or None when they are sent or the request is refused before them (its route's model
        speaks another API, an effort the model lacks: rendering says so). It needs no body: whether the
        headers are refused depends on the call alone (Copilot's and Anthropic's beta values are fixed
        words, and a profile header replaces them, not the other way round), so a log proves it without
        its capture."""
        try:
            call = self._checked_call(request)
        except RenderError:
            return None
        try:
            self._kept_headers(request, call, False, ())  # no context: a refusal is the call's alone
        except RenderError as exc:
            return exc
        return None

    def render(self, request: Any, *, compaction_instruction: str | None = None,
               images: Mapping[str, bytes] | None = None, offloaded_image_text: str | None = None) -> WireRequest:
        """Render one request: exact body bytes and headers (credential withheld).

        Args:
            request: a request on a route of this renderer's pi-ai API (:attr:`api`).
            compaction_instruction: DSH's compaction instruction text; required for ``compaction``.
            images: attachment bytes by ``attachmentId``; required when a message holds an image
                (the log records only its reference).
            offloaded_image_text: DSH's stand-in text, needed only when images exceed the route's
                ``maxRequestImageBytes``.

        Raises:
            RenderError: DSH would refuse the request (``dsh_code``), or the log lacks a fact.
        """
        call = self._checked_call(request)
        body = self.body(request, call, compaction_instruction=compaction_instruction, images=images,
                         offloaded_image_text=offloaded_image_text)
        prefix = urlsplit(call.model.base_url).path.rstrip("/")
        headers = self._wire_headers(request, call, body, compaction_instruction=compaction_instruction,
                                     images=images, offloaded_image_text=offloaded_image_text)
        return WireRequest(adapter=self.adapter, method="POST", path=prefix + self.endpoint,
                           headers=headers, body=stringify_bytes(body))
