"""Which routes share one pi-ai adapter, and so keep each other's replay state.

DSH strips an assistant message's replay state when its route is owned by another adapter than
the one serving the request (``llm/src/index.ts`` ``forAdapter``: ``this.adapters.get(source.provider)
?.adapter === adapter``). DSH's ``llm-pi-ai`` plugin builds one ``PiAiAdapter`` and registers it for
every route of its configuration (``llm-pi-ai/src/index.ts`` ``apply``: ``registerAdapter(routes,
adapter)``), and DSH's composition mounts one such plugin (``bundle/base/cordis.patch.yml``), so a
pi-ai envelope from any route is kept for a request on any other pi-ai route: the renderers'
default (``owned_routes=None``). ``owned_routes`` stated explicitly models an adapter that owns
only the routes named.

Kept or stripped, a message of another route is "not the same model" to pi-ai's
``transformMessages``, so the body differs only where the envelope carries what the foreign
conversion loses: its ``stopReason`` (an ``error`` or ``aborted`` turn is dropped) and a
``redacted`` thinking block (dropped; foreign, its text is sent). DSH 0.1.0-rc.8 writes no
assistant message for a failed attempt and an envelope only on pi-ai's ``done`` (``stop``,
``length``, ``toolUse``), so a real errored turn renders the same either way; an ``aborted``
envelope is one DSH's envelope check accepts (``replay.ts`` ``readReplayState``). Every body is
asserted whole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from dsh_audit.jsjson import stringify
from dsh_audit.session import Session, open_session
from dsh_audit.testing import LogBuilder
from dsh_audit.wire import load_routes, make_renderer

SYSTEM = "Be brief."
ROUTES = """- id: llm-pi-ai
  config:
    providers:
      gw-a:
        api: openai-completions
        baseURL: http://gateway-a/v1
        models:
          - id: coder-a
            contextWindow: 131072
            maxTokens: 8192
      gw-b:
        api: openai-completions
        baseURL: http://gateway-b/v1
        models:
          - id: coder-b
            contextWindow: 131072
            maxTokens: 8192
"""


def reply(b: LogBuilder, api: str, provider: str, model: str, text: str, *, stop: str = "stop",
          reasoning: str | None = None, redacted: bool = False) -> int:
    """An answer through pi-ai with the replay envelope DSH writes (one entry per block)."""
    found = b.assistant(text, reasoning=reasoning)
    assert found.seq is not None
    message = b.event(found.seq)["data"]["message"]
    blocks: list[dict[str, Any]] = [
        {"type": "reasoning", "thinkingSignature": "opaque-payload", **({"redacted": True} if redacted else {})}
        if block["type"] == "reasoning" else {"type": block["type"]} for block in message["content"]]
    message["source"]["replayState"] = {
        "response": {"kind": "pi-ai", "version": 2, "api": api, "provider": provider, "model": model,
                     "responseId": f"r-{found.seq}", "stopReason": stop},
        "blocks": blocks}
    return found.seq


def opened(b: LogBuilder, tmp_path: Path) -> Session:
    routes = tmp_path / "routes.yml"
    routes.write_text(ROUTES)
    session = open_session(b.write_jsonl(tmp_path / "session.jsonl"))
    session.use_routes(load_routes(routes))
    return session


def bodies(session: Session, index: int, tmp_path: Path) -> dict[str, str]:
    """Request ``index`` rendered as every command renders it (the session's shared bodies), and by
    renderers whose adapter owns every route (the default), or only the request's own route."""
    request = session.requests[index]
    assert session.route(request).adapter == "openai"
    models = load_routes(tmp_path / "routes.yml").models
    shared = session.body(request)
    assert shared is not None
    return {"command": shared.decode(),
            "shared": make_renderer("openai", models=models).render(request).body.decode(),
            "own route": make_renderer("openai", models=models, owned_routes=frozenset({"gw-b"}))
            .render(request).body.decode()}


def gateway_b(messages: list[dict[str, Any]]) -> str:
    """gw-b's body (an unknown URL, a model that does not reason): system role, the route's cap."""
    return stringify({"model": "coder-b", "messages": [{"role": "system", "content": SYSTEM}, *messages],
                      "stream": True, "stream_options": {"include_usage": True}, "store": False,
                      "max_completion_tokens": 8192})


def builder(session_id: str, provider: str = "gw-a", model: str = "coder-a") -> LogBuilder:
    return LogBuilder(session_id=session_id, provider=provider, model=model, system=SYSTEM,
                      reasoning_effort=None, max_tokens=None)


def then_on_gateway_b(b: LogBuilder, tmp_path: Path, answer: str) -> Session:
    """A second turn on gw-b after whatever ``b`` holds, and the session opened."""
    b.configure(provider="gw-b", model="coder-b")
    with b.turn("Second."):
        with b.step():
            reply(b, "openai-completions", "gw-b", "coder-b", answer)
    return opened(b, tmp_path)


def test_an_aborted_turn_on_another_route_of_the_adapter_is_dropped(tmp_path: Path) -> None:
    b = builder("owned-aborted")
    with b.turn("First."):
        with b.step():
            reply(b, "openai-completions", "gw-a", "coder-a", "Partial answer", stop="aborted")
    session = then_on_gateway_b(b, tmp_path, "Done.")
    # shared (DSH): the envelope is kept, its stopReason says aborted, pi-ai skips the message
    kept = gateway_b([{"role": "user", "content": "First."}, {"role": "user", "content": "Second."}])
    # owned by another adapter: stripped, the foreign message is a finished "stop" turn and is sent
    stripped = gateway_b([{"role": "user", "content": "First."}, {"role": "assistant", "content": "Partial answer"},
                          {"role": "user", "content": "Second."}])
    assert bodies(session, 1, tmp_path) == {"command": kept, "shared": kept, "own route": stripped}


def test_a_failed_attempt_leaves_nothing_to_own_so_both_agree(tmp_path: Path) -> None:
    b = builder("owned-failed")
    b.start_turn("First.")
    b.start_step()
    b.retry(code="PI_AI_ERROR", message="socket hang up", partial_text="Partial answer", llm_retry=False)
    b.end_turn({"kind": "error", "error": {"message": "socket hang up", "code": "PI_AI_ERROR"}})
    session = then_on_gateway_b(b, tmp_path, "Done.")
    # DSH writes no assistant/message for a failed attempt: its partial text is in no history
    expected = gateway_b([{"role": "user", "content": "First."}, {"role": "user", "content": "Second."}])
    assert bodies(session, 1, tmp_path) == {"command": expected, "shared": expected, "own route": expected}


def test_redacted_thinking_of_another_route_is_dropped_when_shared(tmp_path: Path) -> None:
    b = builder("owned-redacted", "anthropic", "claude-sonnet-4-5")
    with b.turn("First."):
        with b.step():
            # pi-ai's redacted_thinking block: text "[Reasoning redacted]", the payload as signature
            reply(b, "anthropic-messages", "anthropic", "claude-sonnet-4-5", "Done.",
                  reasoning="[Reasoning redacted]", redacted=True)
    session = then_on_gateway_b(b, tmp_path, "Fine.")
    assert session.route(session.requests[0]).adapter == "anthropic"
    # shared: the envelope marks the block redacted, and pi-ai drops redacted thinking of another model
    kept = gateway_b([{"role": "user", "content": "First."}, {"role": "assistant", "content": "Done."},
                      {"role": "user", "content": "Second."}])
    # stripped: the thinking is plain text to pi-ai, sent in front of the answer
    stripped = gateway_b([{"role": "user", "content": "First."},
                          {"role": "assistant", "content": "[Reasoning redacted]Done."},
                          {"role": "user", "content": "Second."}])
    assert bodies(session, 1, tmp_path) == {"command": kept, "shared": kept, "own route": stripped}


def test_an_envelope_of_another_route_changes_nothing_else(tmp_path: Path) -> None:
    b = builder("owned-plain")
    with b.turn("First."):
        with b.step():
            reply(b, "openai-completions", "gw-a", "coder-a", "Answer A.", reasoning="Think A.")
    session = then_on_gateway_b(b, tmp_path, "Answer B.")
    # another model's thinking is text either way (its signature is not replayed to coder-b)
    expected = gateway_b([{"role": "user", "content": "First."},
                          {"role": "assistant", "content": "Think A.Answer A."},
                          {"role": "user", "content": "Second."}])
    assert bodies(session, 1, tmp_path) == {"command": expected, "shared": expected, "own route": expected}
