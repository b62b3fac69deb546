"""Issue 12 leftovers: content pairing's second pass, cloudflare-ai-gateway's credential header, and
the route evidence a session already gathered.

Content pairing (``dsh_audit/capture/_align.py``, ``_by_content``) reads a string new in more than
32 requests of a lane (``_COMMON``) only in a second pass, and there only against the requests
within 16 places (``_NEAR``) of the one the first pass paired the capture with. The lanes here are
built so that each of those numbers decides the exact pairing: the requests are built directly
(no log), each its own session with one request, and no capture carries a session header, so the
lane is paired by order and content only. Each capture's body differs from the others only in a
``seed`` outside the conversation (identical consecutive bodies would be one send and its
resends).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke, short_salt

from dsh_audit.capture import CapturedRequest, align
from dsh_audit.capture._evidence import log_routes
from dsh_audit.replay import Digest, Request
from dsh_audit.testing import LogBuilder

from test_routes_round31 import envelope

MODEL = "deepseek-v4-pro"
API = "openai-completions"


def _request(index: int, prompt: str) -> Request:
    """The only request of session ``s{index}``: one user message."""
    messages = [{"role": "user", "content": prompt}]
    return Request(index=0, kind="loop", session_id=f"s{index}", turn=1, step=1, attempt=1,
                   step_start_seq=None, first_chunk_seq=0, header={"config": {"model": MODEL}}, header_seq=0,
                   header_reason=None, messages=messages, message_seqs=[0], digest=Digest("0"))


def _capture(position: int, prompt: str) -> CapturedRequest:
    body = json.dumps({"model": MODEL, "seed": position, "messages": [{"role": "user", "content": prompt}]})
    return CapturedRequest(position, "POST", "/v1/chat/completions", {}, body.encode(), None, "wire.jsonl",
                           f"line {position + 1}", "loop")


def _pairs(requests: list[Request], captures: list[CapturedRequest]) -> tuple[dict[int, int], list[int]]:
    """Request (by place) -> capture position, and the captures left over."""
    place = {id(r): n for n, r in enumerate(requests)}
    pairs = align(requests, captures, routes=lambda _r: API)
    paired = {place[id(p.request)]: p.capture.position for p in pairs if p.request is not None and p.capture}
    left = [p.capture.position for p in pairs if p.request is None and p.capture is not None]
    return paired, left


def _late_capture(shared: int) -> tuple[list[Request], list[CapturedRequest]]:
    """20 requests of their own text no capture holds, then ``shared`` requests all sending the
    same prompt, each captured: a capture started after the first 20 sends."""
    requests = [_request(n, f"own text {n}") for n in range(20)]
    requests += [_request(20 + n, "Hello, please help.") for n in range(shared)]
    return requests, [_capture(n, "Hello, please help.") for n in range(shared)]


def test_a_prompt_new_in_32_requests_is_evidence_across_the_whole_lane() -> None:
    # 32 requests bring the prompt (_COMMON): it is read in the first pass, for every pair the
    # lane's order allows: each capture pairs 20 places after its own position
    requests, captures = _late_capture(32)
    assert _pairs(requests, captures) == ({20 + n: n for n in range(32)}, [])


def test_a_prompt_new_in_33_requests_is_evidence_only_within_16_of_the_first_pass() -> None:
    # 33 requests bring it: the first pass has no evidence and pairs by order (capture n with
    # request n); the second pass reads the prompt only within 16 places (_NEAR) of that, so the
    # first 4 captures (whose requests are 20 places off) keep the order pairing and every later one
    # pairs 16 places after its own position, with the last 4 requests of the prompt left unpaired
    requests, captures = _late_capture(33)
    assert _pairs(requests, captures) == ({**{n: n for n in range(4)}, **{16 + n: n for n in range(4, 33)}}, [])


def test_a_body_missing_among_common_prompts_is_found_by_the_second_pass() -> None:
    # 80 requests alternating two prompts, each new in 40 of them, as the system text is in all 80:
    # no string is new in 32 or fewer, so the first pass has no evidence and pairs by order; the
    # second one, near it, finds that the 41st body (a first prompt) is the one missing, instead of
    # leaving the last request unpaired
    prompts = ["Read the file." if n % 2 == 0 else "Run the tests." for n in range(80)]
    requests = [Request(index=0, kind="loop", session_id=f"s{n}", turn=1, step=1, attempt=1, step_start_seq=None,
                        first_chunk_seq=0, header={"config": {"model": MODEL}}, header_seq=0, header_reason=None,
                        messages=[{"role": "system", "content": "You are terse."}, {"role": "user", "content": p}],
                        message_seqs=[0, 1], digest=Digest("0"))
                for n, p in enumerate(prompts)]
    sent = [n for n in range(80) if n != 40]
    captures = [CapturedRequest(position, "POST", "/v1/chat/completions", {}, json.dumps(
        {"model": MODEL, "seed": position, "messages": [{"role": "system", "content": "You are terse."},
                                                        {"role": "user", "content": prompts[n]}]}).encode(),
        None, "wire.jsonl", f"line {position + 1}", "loop") for position, n in enumerate(sent)]
    assert _pairs(requests, captures) == ({n: position for position, n in enumerate(sent)}, [])


# -- cloudflare-ai-gateway: the key travels in cf-aig-authorization, which is never shown -----------------
#
# pi-ai 0.82.1's cloudflare-ai-gateway auth resolves the key (DSH's ``apiKey`` option: ``dist/auth/
# resolve.js:25-33``) to the header ``cf-aig-authorization: Bearer KEY`` and sets ``Authorization`` and
# ``x-api-key`` to null (``dist/providers/cloudflare-auth.js:63-78``), so the SDKs send neither of their
# own; ``Models.applyAuth`` puts those headers before DSH's (``dist/models.js:254``: ``mergeHeaders(
# auth.headers, options.headers)``). A rendered request withholds credentials, so it shows none of the
# three; a route file's profile headers (where a hand-declared gateway route puts its gateway token) are
# withheld alike when they carry one.

GATEWAY_KEY = "cfut_GatewayToken0123456789abcdef"
ROUTE_KEY = "sk-proj-RouteFileKey0123456789abcdef"
ANTHROPIC_SDK = [
    "x-stainless-retry-count: 0", "x-stainless-timeout: 600", "x-stainless-lang: js",
    "x-stainless-package-version: 0.91.1", "x-stainless-os: Linux", "x-stainless-arch: x64",
    "x-stainless-runtime: node", "x-stainless-runtime-version: v24.19.0", "anthropic-version: 2023-06-01",
    "accept: application/json", "anthropic-dangerous-direct-browser-access: true",
    "anthropic-beta: interleaved-thinking-2025-05-14"]
AGENT = "user-agent: deepseek-harness/0.1.0-rc.8 (+https://github.com/deepseek-ai/deepseek-harness)"


def _gateway_log(folder: Path, provider: str, model: str, api: str) -> Path:
    b = LogBuilder(session_id="cf32", provider=provider, model=model, system="You are terse.",
                   reasoning_effort=None, max_tokens=1000, context_window=None)
    with b.turn("Question."), b.step():
        reply = b.assistant("Answer.")
        assert reply.seq is not None
        envelope(b, reply.seq, api, provider, model)
    return b.write_jsonl(folder / "s.jsonl")


def test_a_gateway_credential_in_the_route_file_is_never_rendered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = _gateway_log(tmp_path, "cloudflare-ai-gateway", "claude-sonnet-4-5", "anthropic-messages")
    routes = tmp_path / "routes.yaml"
    routes.write_text("providers:\n  cloudflare-ai-gateway:\n    headers:\n"
                      f"      cf-aig-authorization: Bearer {GATEWAY_KEY}\n      Authorization: Bearer {ROUTE_KEY}\n"
                      f"      x-api-key: {ROUTE_KEY}\n      X-Team: blue\n"
                      "    models:\n      - id: claude-sonnet-4-5\n", encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--headers", "--routes", str(routes))
    assert (code, err) == (0, [])
    assert out.split("\n\n", 1)[0].splitlines() == [
        "POST /v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/anthropic/v1/messages", *ANTHROPIC_SDK,
        "x-session-affinity: cf32", "x-team: blue", AGENT, "content-type: application/json"]
    assert GATEWAY_KEY not in out and ROUTE_KEY not in out


def test_a_hand_declared_gateway_route_renders_the_gateways_compat_and_withholds_its_token(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # dist/api/openai-completions.js:1112-1183 detectCompat: a gateway.ai.cloudflare.com host sends max_tokens,
    # no store, no reasoning_effort, no strict tools
    log = _gateway_log(tmp_path, "my-gateway", "kimi-k2", "openai-completions")
    routes = tmp_path / "routes.yaml"
    routes.write_text("providers:\n  my-gateway:\n    api: openai-completions\n"
                      "    baseURL: https://gateway.ai.cloudflare.com/v1/acc/gw/compat\n    apiKeyEnv: KEY\n"
                      f"    headers:\n      cf-aig-authorization: Bearer {GATEWAY_KEY}\n"
                      "    models:\n      - id: kimi-k2\n        contextWindow: 131072\n        maxTokens: 8192\n",
                      encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--headers", "--routes", str(routes))
    assert (code, err) == (0, [])
    head, body = out.split("\n\n", 1)
    assert head.splitlines()[0] == "POST /v1/acc/gw/compat/chat/completions"
    assert [line for line in head.splitlines() if not line.startswith("x-stainless-")][1:] == [
        "accept: application/json", AGENT, "content-type: application/json"]
    assert json.loads(body) == {
        "model": "kimi-k2", "messages": [{"role": "system", "content": "You are terse."},
                                         {"role": "user", "content": "Question."}],
        "stream": True, "stream_options": {"include_usage": True}, "max_tokens": 1000}
    assert GATEWAY_KEY not in out


def test_a_captured_gateway_credential_is_never_printed_and_redact_drops_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = _gateway_log(tmp_path, "cloudflare-ai-gateway", "claude-sonnet-4-5", "anthropic-messages")
    code, out, _ = invoke(monkeypatch, capsys, "render", str(log), "0")
    assert code == 0
    capture = tmp_path / "wire.jsonl"
    capture.write_text(json.dumps({
        "method": "POST", "path": "/v1/acc123/gw/anthropic/v1/messages",
        "headers": {"cf-aig-authorization": f"Bearer {GATEWAY_KEY}", "x-session-affinity": "cf32",
                    "content-type": "application/json"}, "body": out}) + "\n", encoding="utf-8")
    code, text, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(capture))
    assert (code, err, text.splitlines()[-1]) == (
        0, [], "1 request(s): 1 identical; 0 capture(s) unexplained, 0 foreign: OK")
    assert GATEWAY_KEY not in text
    redacted = tmp_path / "out" / "s.jsonl"
    redacted.parent.mkdir()
    code, text, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(redacted), "--salt", "s",
                             "--capture", str(capture))
    assert (code, err) == (0, [short_salt("s")])
    assert text.splitlines()[1] == f"wrote {tmp_path / 'out' / 'wire.jsonl'}: auth headers dropped: cf-aig-authorization"
    written = (tmp_path / "out" / "wire.jsonl").read_text("utf-8")
    assert json.loads(written)["headers"] == {"x-session-affinity": "cf32", "content-type": "application/json"}
    assert GATEWAY_KEY not in text + written + "".join(p.read_text("utf-8") for p in (tmp_path / "out").iterdir())


# -- log_routes: each logged message read once -------------------------------------------------------


def _envelope_reply(text: str, provider: str, api: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text,
            "source": {"kind": "model", "provider": provider, "model": "m",
                       "replayState": {"response": {"kind": "pi-ai", "version": 2, "api": api,
                                                    "provider": provider, "model": "m"}}}}


def _routed(session: str, provider: str, messages: list[dict[str, Any]], seqs: list[int]) -> Request:
    return Request(index=0, kind="loop", session_id=session, turn=1, step=1, attempt=1, step_start_seq=None,
                   first_chunk_seq=0, header={"config": {"provider": provider, "model": "m"}}, header_seq=0,
                   header_reason=None, messages=messages, message_seqs=seqs, digest=Digest("0"))


def test_log_routes_reads_a_resent_history_once_and_a_rewritten_one_again() -> None:
    # session a: the second request resends the first one's messages and a reply with the route's
    # envelope; the third starts over (a compaction's summary first, fewer messages than the second
    # sent), and its reply is the only message that shows the my-gateway route: read, it routes the
    # fourth request, but not session b's
    user = {"role": "user", "content": "Q."}
    summary = {"role": "user", "content": "Summary."}
    first = _routed("a", "my-proxy", [user], [1])
    second = _routed("a", "my-proxy", [user, _envelope_reply("A.", "my-proxy", "openai-completions"), user], [1, 2, 3])
    third = _routed("a", "my-proxy", [summary, _envelope_reply("B.", "my-gateway", "anthropic-messages")], [9, 10])
    fourth = _routed("a", "my-gateway", [summary], [9])
    other = _routed("b", "my-gateway", [user], [1])
    silent = _routed("c", "unseen", [user], [1])
    api = log_routes([first, second, third, fourth, other, silent])
    assert [api(r) for r in (first, second, third, fourth, other, silent)] == [
        "openai-completions", "openai-completions", "openai-completions", "anthropic-messages", None, None]
    # the envelope of session a says nothing of session b's requests; in b's own log it does
    other_b = _routed("b", "my-gateway", [user, _envelope_reply("C.", "my-gateway", "anthropic-messages")], [1, 2])
    assert log_routes([other, other_b])(other) == "anthropic-messages"
