"""Header values as fetch sends them on pi-ai routes (fuzz round 35B, D1-D3).

pi-ai 0.82.1 hands DSH's route-profile headers and the session headers to the SDKs, which copy them
into a fetch ``Headers`` (``internal/headers.js`` ``buildHeaders``): ``Headers.append`` trims leading
and trailing HTTP whitespace (space, tab, CR, LF), throws on a CR, LF or NUL left inside or on a
character past U+00FF (no ByteString), and Node's fetch (undici) refuses any other control but tab;
the Anthropic SDK throws when the profile's ``x-api-key`` leaves no credential. The expected header
lists and refusals are pi-ai 0.82.1's own (Node, offline, against a local capture server, outside this
repository); no test runs Node.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.errors import RenderError, UsageError
from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder
from dsh_audit.wire import load_routes
from dsh_audit.wire._piai_routes import parse_routes

API = {"openai": "openai-responses", "deepseek": "openai-completions", "anthropic": "anthropic-messages"}
MODEL = {"openai": "gpt-5", "deepseek": "deepseek-v4-pro", "anthropic": "claude-sonnet-4-5"}
PLATFORM = [("x-stainless-os", "Linux"), ("x-stainless-arch", "x64"), ("x-stainless-runtime", "node"),
            ("x-stainless-runtime-version", "v24.19.0")]
OPENAI_SDK = [("accept", "application/json"), ("x-stainless-retry-count", "0"), ("x-stainless-lang", "js"),
              ("x-stainless-package-version", "6.26.0"), *PLATFORM]
TAIL = [("user-agent", "deepseek-harness/0.1.0-rc.8 (+https://github.com/deepseek-ai/deepseek-harness)"),
        ("content-type", "application/json")]
ROUTE_HINT = "(hint: see DSH's llm-pi-ai configuration: providers.<id>.api, baseURL, models)"


def _wire_headers(tmp_path: Path, provider: str, session_id: str, profile: dict[str, Any]) -> Any:
    """The headers of the first request of a one-turn session on ``provider``'s catalog route."""
    b = LogBuilder(session_id=session_id, provider=provider, model=MODEL[provider], reasoning_effort=None,
                   max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            seq = b.assistant("Hello.").seq
            # the replay envelope DSH writes for a pi-ai reply: it says the route is pi-ai's
            b.event(seq)["data"]["message"]["source"]["replayState"] = {"response": {
                "kind": "pi-ai", "version": 2, "api": API[provider], "provider": provider, "model": MODEL[provider],
                "stopReason": "stop"}, "blocks": [{"type": "text"}]}
    session = open_session(b.write_jsonl(tmp_path / "s.jsonl"))
    session.use_routes(parse_routes({"providers": {provider: profile}}))
    request = session.requests[0]
    return session.bodies._renderer(session.route(request).adapter).render(request).headers


def affinity(provider: str) -> dict[str, Any]:
    """Session affinity asked of the route (Responses sends its session headers without being asked)."""
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


NO_CREDENTIAL = ("is blank: on a route pi-ai sends through the Anthropic SDK it replaces the API key, and the SDK "
                 "throws 'Could not resolve authentication method' and sends nothing (hint: remove the header from "
                 "the route's headers, or give it the key, in the file given as --routes FILE (docs/routes.md "
                 "section 7.1))")


@pytest.mark.parametrize(("route", "message"), [
    # D2: the Anthropic SDK's validateHeaders finds no credential (x-api-key "" after trimming)
    ({"anthropic": {"headers": {"x-api-key": ""}}}, f"providers.anthropic.headers.x-api-key: {NO_CREDENTIAL}"),
    ({"anthropic": {"headers": {"X-Api-Key": " \t"}}}, f"providers.anthropic.headers.X-Api-Key: {NO_CREDENTIAL}"),
    ({"anthropic": {"headers": {"X-Api-Key": "", "authorization": " "}}},
     f"providers.anthropic.headers.X-Api-Key: {NO_CREDENTIAL}"),
    # pi-ai sends these: an authorization header resolves it, an OAuth key and the OpenAI SDK send x-api-key: ""
    ({"anthropic": {"headers": {"x-api-key": "", "Authorization": "Bearer t"}}}, None),
    ({"anthropic": {"headers": {"x-api-key": ""}, "dshAudit": {"keyType": "oauth"}}}, None),
    ({"openai": {"headers": {"x-api-key": " "}}}, None),
    ({"deepseek": {"headers": {"x-api-key": ""}}}, None),
    # a value fetch trims to a valid one is sent (" a\r\n" goes out as "a"); a control but tab is refused
    ({"openai": {"headers": {"X-Team": " a\r\n"}}}, None),
    ({"openai": {"headers": {"X-Team": "\x0ba"}}},
     "providers.openai.headers.X-Team: holds control character U+000B, which Node.js fetch (undici) refuses in a "
     f"header value {ROUTE_HINT}"),
])
def test_route_headers_pi_ai_cannot_send_are_refused_at_their_key(tmp_path: Path, route: dict[str, Any],
                                                                  message: str | None) -> None:
    path = tmp_path / "routes.yml"
    path.write_text(json.dumps({"providers": route}), "utf-8")
    if message is None:
        assert load_routes(path).source == str(path)
        return
    with pytest.raises(UsageError) as caught:
        load_routes(path)
    assert str(caught.value) == f"{path}: route file: {message}"
