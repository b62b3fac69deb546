"""Header values as fetch sends them on pi-ai routes (fuzz round 35B, D1-D3).

pi-ai 0.82.1 hands DSH's route-profile headers and the session headers to the SDKs, which copy them
into a fetch ``Headers`` (``internal/headers.js`` ``buildHeaders``): ``Headers.append`` trims leading
and trailing HTTP whitespace (space, tab, CR, LF), throws on a CR, LF or NUL left inside or on a
character past U+00FF (no ByteString), and Node's fetch (undici) refuses any other control but tab;
the Anthropic SDK throws when the profile's ``x-api-key`` leaves no credential. DSH's configuration
takes any string as a header, so such a header refuses the requests of its route only (session 45's
oracle, D1-D6). The expected header lists and refusals are pi-ai 0.82.1's own (Node, offline, against a
local capture server, outside this repository); no test runs Node.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.errors import RenderError
from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder
from dsh_audit.wire import load_routes
from dsh_audit.wire._piai_routes import parse_routes

from test_routes46 import routes_as_given

API = {"openai": "openai-responses", "deepseek": "openai-completions", "anthropic": "anthropic-messages"}
MODEL = {"openai": "gpt-5", "deepseek": "deepseek-v4-pro", "anthropic": "claude-sonnet-4-5"}
PLATFORM = [("x-stainless-os", "Linux"), ("x-stainless-arch", "x64"), ("x-stainless-runtime", "node"),
            ("x-stainless-runtime-version", "v24.19.0")]
OPENAI_SDK = [("accept", "application/json"), ("x-stainless-retry-count", "0"), ("x-stainless-lang", "js"),
              ("x-stainless-package-version", "6.26.0"), *PLATFORM]
TAIL = [("user-agent", "deepseek-harness/0.1.0-rc.8 (+https://github.com/deepseek-ai/deepseek-harness)"),
        ("content-type", "application/json")]


def _piai_session(tmp_path: Path, provider: str, session_id: str) -> Any:
    """A one-turn session on ``provider``'s catalog route, opened."""
    b = LogBuilder(session_id=session_id, provider=provider, model=MODEL[provider], reasoning_effort=None,
                   max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            seq = b.assistant("Hello.").seq
            # the replay envelope DSH writes for a pi-ai reply: it says the route is pi-ai's
            b.event(seq)["data"]["message"]["source"]["replayState"] = {"response": {
                "kind": "pi-ai", "version": 2, "api": API[provider], "provider": provider, "model": MODEL[provider],
                "stopReason": "stop"}, "blocks": [{"type": "text"}]}
    return open_session(b.write_jsonl(tmp_path / "s.jsonl"))


def _wire_headers(tmp_path: Path, provider: str, session_id: str, profile: dict[str, Any]) -> Any:
    """The headers of the first request of a one-turn session on ``provider``'s catalog route."""
    session = _piai_session(tmp_path, provider, session_id)
    session.use_routes(routes_as_given({"providers": {provider: profile}}))
    request = session.requests[0]
    return session.bodies._renderer(session.route(request).adapter).render(request).headers


def affinity(provider: str) -> dict[str, Any]:
    """Session affinity asked of the route (Responses sends its session headers without being asked): a
    switch DSH withholds from route files (test_routes46.py), laid on the models as pi-ai's catalog entries
    carry it (``routes_as_given``)."""
    return {} if provider == "openai" else {"compat": {"sendSessionAffinityHeaders": True}}


@pytest.mark.parametrize(("provider", "headers"), [
    ("openai", [*OPENAI_SDK, ("session_id", "s1"), ("x-client-request-id", "s1"), ("x-team", "a b"), *TAIL]),
    ("deepseek", [*OPENAI_SDK, ("session_id", "s1"), ("x-client-request-id", "s1"), ("x-session-affinity", "s1"),
                  ("x-team", "a b"), *TAIL]),
    ("anthropic", [("x-stainless-retry-count", "0"), ("x-stainless-timeout", "600"), ("x-stainless-lang", "js"),
                   ("x-stainless-package-version", "0.91.1"), *PLATFORM, ("anthropic-version", "2023-06-01"),
                   ("accept", "application/json"), ("anthropic-dangerous-direct-browser-access", "true"),
                   ("anthropic-beta", "interleaved-thinking-2025-05-14"), ("x-session-affinity", "s1"),
                   ("x-team", "a b"), *TAIL]),
])
def test_profile_and_session_header_values_are_trimmed_as_fetch_trims_them(
        tmp_path: Path, provider: str, headers: list[tuple[str, str]]) -> None:
    """D1: ``{"X-Team": " a b\\t"}`` and the session id ``"\\t s1 \\r\\n"`` go out as ``a b`` and ``s1``."""
    profile = {**affinity(provider), "headers": {"X-Team": " a b\t"}}
    assert list(_wire_headers(tmp_path, provider, "\t s1 \r\n", profile)) == headers


SENDS_NOTHING = "<input> seq 5: pi-ai sends no request: its header {name} (the log's session id) {why} (hint: DSH " \
                "makes its own ASCII session ids, so the log's was edited: there is no pi-ai request to render; " \
                "force another wire format with --adapter)"
PAST_FF = "holds a character past U+00FF, which fetch cannot send"


@pytest.mark.parametrize(("provider", "session_id", "name", "why"), [
    # pi-ai: "Cannot convert argument to a ByteString because the character at index 0 has a value of 20013"
    ("openai", "\u4e2d\u6587", "session_id", PAST_FF),
    ("deepseek", "\u4e2d\u6587", "session_id", PAST_FF),
    ("anthropic", "\u4e2d\u6587", "x-session-affinity", PAST_FF),
    # pi-ai: 'Headers.append: "a\nb" is an invalid header value.'
    ("openai", "a\nb", "session_id", "holds a CR, LF or NUL, which fetch refuses in a header value"),
    # pi-ai: "Connection error." (undici: "invalid session_id header"); the request never reaches the server
    ("anthropic", "a\x7fb", "x-session-affinity",
     "holds control character U+007F, which Node.js fetch (undici) refuses in a header value"),
])
def test_a_session_id_fetch_cannot_send_refuses_the_request(tmp_path: Path, provider: str, session_id: str,
                                                           name: str, why: str) -> None:
    """D3: the session headers of Responses, and of Completions and Anthropic with affinity."""
    with pytest.raises(RenderError) as caught:
        _wire_headers(tmp_path, provider, session_id, affinity(provider))
    assert str(caught.value) == SENDS_NOTHING.format(name=name, why=why)


def test_a_latin1_session_id_is_sent_and_one_pi_ai_does_not_send_is_not_checked(tmp_path: Path) -> None:
    """``séssion`` is a ByteString (one byte per character on the wire); without affinity the Completions
    and Anthropic clients send no session header, so nothing refuses the id."""
    assert ("session_id", "s\u00e9ssion") in _wire_headers(tmp_path, "openai", "s\u00e9ssion", {})
    assert not any(value == "\u4e2d" for _, value in _wire_headers(tmp_path, "deepseek", "\u4e2d", {}))
    assert not any(value == "\u4e2d" for _, value in _wire_headers(tmp_path, "anthropic", "\u4e2d", {}))


def route_refusal(route: str, name: str, why: str) -> str:
    """The one line a request on ``route`` is refused with when its profile header ``name`` is one pi-ai
    cannot send (``why``), located at the request's header (seq 5)."""
    return (f"<input> seq 5: pi-ai sends no request on route {route!r}: providers.{route}.headers.{name} {why} "
            f"(hint: fix or remove the header under providers.{route}.headers in the file given as --routes FILE "
            "(docs/routes.md section 7.1); the requests of other routes render)")


NO_CREDENTIAL = ("is blank: it replaces the API key, and the Anthropic SDK throws 'Could not resolve authentication "
                 "method' and sends nothing")
UNDICI = "holds control character U+{:04X}, which Node.js fetch (undici) refuses in a header value"


@pytest.mark.parametrize(("provider", "headers", "name", "why"), [
    # D2: the Anthropic SDK's validateHeaders finds no credential (x-api-key "" after trimming)
    ("anthropic", {"x-api-key": ""}, "x-api-key", NO_CREDENTIAL),
    ("anthropic", {"X-Api-Key": " \t"}, "X-Api-Key", NO_CREDENTIAL),
    ("anthropic", {"X-Api-Key": "", "authorization": " "}, "X-Api-Key", NO_CREDENTIAL),
    # pi-ai: "Headers.append: ..." / "Cannot convert argument to a ByteString" / undici "Connection error."
    ("anthropic", {"x-team": "a\nb"}, "x-team", "holds a CR, LF or NUL, which fetch refuses in a header value"),
    ("deepseek", {"X A": "v"}, "X A", "is not an HTTP token, which fetch refuses as a header name"),
    ("openai", {"x-team": "\u4e2d"}, "x-team", PAST_FF),
    ("openai", {"X-Team": "\x0ba"}, "X-Team", UNDICI.format(0x0B)),
    ("anthropic", {"x-team": "a\x7fb"}, "x-team", UNDICI.format(0x7F)),
])
def test_a_route_header_pi_ai_cannot_send_refuses_the_route_s_requests(
        tmp_path: Path, provider: str, headers: dict[str, str], name: str, why: str) -> None:
    """D1, D4, D6: DSH's schema takes any string as a header, so the route file is read; each request on the
    route is refused (pi-ai 0.82.1 sent none), at the route's key."""
    path = tmp_path / "routes.yml"
    path.write_text(json.dumps({"providers": {provider: {"headers": headers}}}), "utf-8")
    assert load_routes(path).source == str(path)
    with pytest.raises(RenderError) as caught:
        _wire_headers(tmp_path, provider, "s1", {"headers": headers})
    assert str(caught.value) == route_refusal(provider, name, why)


@pytest.mark.parametrize(("provider", "headers", "sent"), [
    # D6 (cross-route): route openai's header is no ByteString; a request on anthropic is sent as usual
    ("anthropic", {"anthropic": {}, "openai": {"headers": {"x-team": "\u4e2d"}}}, []),
    # D5: DSH drops a profile user-agent whatever its value (adapter.ts:177-184) and sends its own
    ("anthropic", {"anthropic": {"headers": {"user-agent": "a\r\nb", "x-team": "t"}}}, [("x-team", "t")]),
    ("openai", {"openai": {"headers": {"User-Agent": "\u4e2d", "x-team": "t"}}}, [("x-team", "t")]),
    # pi-ai sends these: an authorization header resolves a blank key, an OAuth key and the OpenAI SDK send it
    ("anthropic", {"anthropic": {"headers": {"x-api-key": "", "Authorization": "Bearer t"}}}, []),
    ("anthropic", {"anthropic": {"headers": {"x-api-key": ""}, "dshAudit": {"keyType": "oauth"}}}, None),
    ("openai", {"openai": {"headers": {"x-api-key": " "}}}, []),
    # a value fetch trims to a valid one is sent (" a\r\n" goes out as "a"); the body's content-type replaces
    # a profile's before undici checks it
    ("openai", {"openai": {"headers": {"X-Team": " a\r\n"}}}, [("x-team", "a")]),
    ("openai", {"openai": {"headers": {"Content-Type": "a\x7f"}}}, []),
])
def test_requests_pi_ai_sends_render_beside_route_headers_it_cannot(
        tmp_path: Path, provider: str, headers: dict[str, Any], sent: list[tuple[str, str]] | None) -> None:
    """Whole header lists: the SDK's, the profile's ``sent`` (credentials withheld), DSH's ``user-agent``."""
    session = _piai_session(tmp_path, provider, "s1")
    session.use_routes(parse_routes({"providers": headers}))
    request = session.requests[0]
    got = list(session.bodies._renderer(session.route(request).adapter).render(request).headers)
    if sent is None:  # OAuth: Claude Code's identity, x-api-key withheld as every credential
        assert not any(name == "x-api-key" for name, _ in got)
        return
    sdk = OPENAI_SDK if provider == "openai" else ANTHROPIC_SDK
    assert got == [*sdk, *(SESSION if provider == "openai" else []), *sent, *TAIL]


ANTHROPIC_SDK = [("x-stainless-retry-count", "0"), ("x-stainless-timeout", "600"), ("x-stainless-lang", "js"),
                 ("x-stainless-package-version", "0.91.1"), *PLATFORM, ("anthropic-version", "2023-06-01"),
                 ("accept", "application/json"), ("anthropic-dangerous-direct-browser-access", "true"),
                 ("anthropic-beta", "interleaved-thinking-2025-05-14")]
SESSION = [("session_id", "s1"), ("x-client-request-id", "s1")]


def test_a_dropped_user_agent_is_noted_and_a_bad_header_refuses_no_route_file() -> None:
    """D5 and item 4: the note names the key; a route file DSH refuses is a ValueError, as documented."""
    routes = parse_routes({"providers": {"openai": {"headers": {"User-Agent": "\u4e2d"}}, "deepseek": {}}})
    assert routes.notes == ("providers.openai.headers.User-Agent: not sent: DSH drops a route's user-agent header "
                            "and sends its own attribution in its place (adapter.ts requestHeaders)",)
    with pytest.raises(ValueError, match=r"^providers\.openai\.headers: must map header names to string values$"):
        parse_routes({"providers": {"openai": {"headers": {"x-team": 1}}}})
