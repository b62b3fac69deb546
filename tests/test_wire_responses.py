"""pi-ai's ``openai-responses`` route (issue 12): whole bodies and headers, route choice, CLI.

Each body below restates a rule of pi-ai 0.82.1 ``api/openai-responses.js`` and
``api/openai-responses-shared.js`` (cited in :mod:`dsh_audit.wire._responses`); pi-ai's own bytes for
synthetic sessions are ``tests/data/piai_oracle/resp-*.json`` (``test_wire_piai_oracle.py``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.cache import rule_for
from dsh_audit.capture import COMPACTION_PREFIX, TITLE_PREFIX, classify
from dsh_audit.errors import RenderError
from dsh_audit.jsjson import stringify_bytes
from dsh_audit.session import open_session, route_for, route_renderer
from dsh_audit.testing import LogBuilder, ToolCall, tool_schema
from dsh_audit.wire import images_in_body, make_renderer
from dsh_audit.wire._piai_catalog import BUILTIN_MODELS
from dsh_audit.wire._piai_routes import parse_routes

from _cli import invoke

SYSTEM = "Sys."
READ = tool_schema("read", "Read a file.", {"path": {"type": "string"}})
READ_TOOL = {"type": "function", "name": "read", "description": "Read a file.",
             "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
             "strict": False}
AGENT = "deepseek-harness/0.1.0-rc.8 (+https://github.com/deepseek-ai/deepseek-harness)"
SDK = [("accept", "application/json"), ("x-stainless-retry-count", "0"), ("x-stainless-lang", "js"),
       ("x-stainless-package-version", "6.26.0"), ("x-stainless-os", "Linux"), ("x-stainless-arch", "x64"),
       ("x-stainless-runtime", "node"), ("x-stainless-runtime-version", "v24.19.0")]
HIGH = {"reasoning": {"effort": "high", "summary": "auto"}, "include": ["reasoning.encrypted_content"]}
RS1 = {"id": "rs_1", "type": "reasoning", "summary": [{"type": "summary_text", "text": "Look."}],
       "encrypted_content": "E1"}


def reply(b: LogBuilder, model: str, text: str | None = None, *, provider: str = "openai",
          api: str = "openai-responses", reasoning: str | None = None, thinking_signature: str | None = None,
          text_signature: str | None = None, tool_calls: list[ToolCall] | None = None,
          stop: str | None = None) -> Any:
    """An assistant reply through pi-ai with the replay envelope DSH writes (signatures per block)."""
    out = b.assistant(text, reasoning=reasoning, tool_calls=tool_calls or [])
    message = b.event(out.seq)["data"]["message"]
    blocks: list[dict[str, Any]] = []
    for block in message["content"]:
        entry = {"type": block["type"]}
        if block["type"] == "reasoning" and thinking_signature is not None:
            entry["thinkingSignature"] = thinking_signature
        if block["type"] == "text" and text_signature is not None:
            entry["textSignature"] = text_signature
        blocks.append(entry)
    calls = any(x["type"] == "tool-call" for x in message["content"])
    message["source"]["replayState"] = {
        "response": {"kind": "pi-ai", "version": 2, "api": api, "provider": provider, "model": model,
                     "responseId": f"resp_{out.seq}", "stopReason": stop or ("toolUse" if calls else "stop")},
        "blocks": blocks}
    return out


def session_of(b: LogBuilder, tmp_path: Path, routes: dict[str, Any] | None = None) -> Any:
    session = open_session(b.write_jsonl(tmp_path / "session.jsonl"))
    if routes is not None:
        session.use_routes(parse_routes(routes))
    return session


def renderer_for(routes: dict[str, Any] | None = None) -> Any:
    return make_renderer("responses", models=parse_routes(routes).models if routes else None)


def body_of(wire: Any) -> dict[str, Any]:
    """The body as a JSON value, after checking its bytes are that value written key by key."""
    value = json.loads(wire.body)
    assert wire.body == stringify_bytes(value)
    return value


def tool_session(tmp_path: Path) -> Any:
    b = LogBuilder(session_id="s-1", provider="openai", model="gpt-5", system=SYSTEM, tools=[READ],
                   reasoning_effort="high", max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            r = reply(b, "gpt-5", None, reasoning="Look.", thinking_signature=json.dumps(RS1),
                      tool_calls=[ToolCall("read", '{"path":"a"}', id="call_1|fc_1")])
            b.tool_result(r.call_ids[0], "A")
        with b.step():
            reply(b, "gpt-5", "Done.", text_signature='{"v":1,"id":"msg_1","phase":"final_answer"}')
    with b.turn("More."):
        with b.step():
            reply(b, "gpt-5", "Ok.")
    return session_of(b, tmp_path)


# --- bodies ---------------------------------------------------------------------------------------


def test_a_same_model_history_replays_reasoning_items_calls_and_messages(tmp_path: Path) -> None:
    session = tool_session(tmp_path)
    renderer = make_renderer("responses")
    wire = renderer.render(session.requests[-1])
    assert (wire.adapter, wire.method, wire.path) == ("responses", "POST", "/v1/responses")
    assert list(body_of(wire).items()) == list({
        "model": "gpt-5",
        "input": [
            {"role": "developer", "content": SYSTEM},
            {"role": "user", "content": [{"type": "input_text", "text": "Hi."}]},
            RS1,  # the thinking signature, JSON.parsed
            {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read",
             "arguments": '{"path":"a"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": "A"},
            {"type": "message", "role": "assistant",
             "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
             "status": "completed", "id": "msg_1", "phase": "final_answer"},
            {"role": "user", "content": [{"type": "input_text", "text": "More."}]}],
        "stream": True, "prompt_cache_key": "s-1", "store": False, "max_output_tokens": 128000,
        "tools": [READ_TOOL], **HIGH}.items())
    assert list(wire.headers) == [*SDK, ("session_id", "s-1"), ("x-client-request-id", "s-1"),
                                  ("user-agent", AGENT), ("content-type", "application/json")]
    # each request of the session through one renderer is the same as through a fresh one
    assert [renderer.render(r).body for r in session.requests] == \
        [make_renderer("responses").render(r).body for r in session.requests]


def test_text_signatures_name_the_message_item(tmp_path: Path) -> None:
    """``parseTextSignature``: a v1 payload's id and known phase, a legacy plain id, anything else's
    whole text as the id (over 64 UTF-16 units: ``msg_<shortHash>``), none: ``msg_pi_<index>``."""
    b = LogBuilder(session_id="s-2", provider="openai", model="gpt-5", system="", tools=[],
                   reasoning_effort=None, max_tokens=None, context_window=None)
    signatures = ['{"v":1,"id":"msg_a","phase":"commentary"}', '{"v":1,"id":"msg_b","phase":"other"}',
                  "msg_plain", '{"v":2,"id":"msg_c"}', None, "", "m" * 65]
    for at, signature in enumerate(signatures):
        with b.turn(f"q{at}"):
            with b.step():
                reply(b, "gpt-5", f"a{at}", text_signature=signature)
    with b.turn("end"):
        with b.step():
            reply(b, "gpt-5", "fin")
    session = session_of(b, tmp_path)
    body = body_of(make_renderer("responses").render(session.requests[-1]))
    messages = [item for item in body["input"] if item.get("type") == "message"]
    assert [(m["id"], m.get("phase")) for m in messages] == [
        ("msg_a", "commentary"), ("msg_b", None), ("msg_plain", None), ('{"v":2,"id":"msg_c"}', None),
        ("msg_pi_9", None), ("msg_pi_11", None), ("msg_4tg0y8defk0h", None)]
    assert body["input"][0] == {"role": "user", "content": [{"type": "input_text", "text": "q0"}]}  # no system
    assert "reasoning" not in body and "include" not in body  # no effort, and gpt-5 pins off


def test_no_effort_sends_the_off_level_unless_the_model_pins_it(tmp_path: Path) -> None:
    """``buildParams``: with no effort, ``reasoning.effort`` is ``thinkingLevelMap.off ?? "none"``,
    and nothing when the map sets ``off`` to null (gpt-5); a non-reasoning model sends none."""
    b = LogBuilder(session_id="s-3", provider="openai", model="gpt-5", system=SYSTEM, tools=[],
                   reasoning_effort=None, max_tokens=None, context_window=None)
    for model, effort in (("gpt-5", None), ("gpt-5.1", None), ("gpt-5.2", "xhigh"), ("gpt-5.6-sol", "max"),
                          ("gpt-4o", None), ("gpt-5", "minimal")):
        b.configure(model=model, reasoning_effort=effort)
        with b.turn(f"{model} {effort}"):
            with b.step():
                reply(b, model, "ok")
    session = session_of(b, tmp_path)
    renderer = make_renderer("responses")
    found = [{k: v for k, v in body_of(renderer.render(r)).items() if k in ("reasoning", "include")}
             for r in session.requests]
    assert found == [{}, {"reasoning": {"effort": "none"}},
                     {"reasoning": {"effort": "xhigh", "summary": "auto"}, "include": ["reasoning.encrypted_content"]},
                     {"reasoning": {"effort": "max", "summary": "auto"}, "include": ["reasoning.encrypted_content"]},
                     {}, {"reasoning": {"effort": "minimal", "summary": "auto"},
                          "include": ["reasoning.encrypted_content"]}]
    assert body_of(renderer.render(session.requests[4]))["input"][0] == {"role": "system", "content": SYSTEM}


def test_another_models_history_is_converted(tmp_path: Path) -> None:
    """Native DeepSeek history on gpt-5: reasoning becomes an assistant message, ids are cleaned
    per ``|`` part (cut to 64, trailing ``_`` stripped) and another provider's item id becomes
    ``fc_<shortHash>`` (the call keeps it: only another model of the same route loses its item ids);
    another model of the route keeps its calls without item ids and its reasoning as text."""
    b = LogBuilder(session_id="s-4", provider="deepseek-official", model="deepseek-v4-pro", system=SYSTEM,
                   tools=[READ], reasoning_effort="high", max_tokens=None, context_window=None)
    with b.turn("Go."):
        with b.step():
            r = b.assistant(None, reasoning="r", tool_calls=[
                ToolCall("read", '{"path":"a"}', id="call:1.a/b+c="),
                ToolCall("read", '{"path":"b"}', id="x" * 70),
                ToolCall("read", '{"path":"c"}', id="call_k|item+/=")])
            for cid in r.call_ids:
                b.tool_result(cid, "ok")
    b.configure(provider="openai", model="gpt-5.2")
    with b.turn("Next."):
        with b.step():
            r = reply(b, "gpt-5.2", "t", reasoning="mine", thinking_signature=json.dumps(RS1),
                      tool_calls=[ToolCall("read", '{"path":"d"}', id="call_d|fc_d")])
            b.tool_result(r.call_ids[0], "D")
    b.configure(model="gpt-5")
    with b.turn("Last."):
        with b.step():
            reply(b, "gpt-5", "fin")
    session = session_of(b, tmp_path)
    body = body_of(make_renderer("responses").render(session.requests[-1]))
    assert body["input"][2:] == [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "r", "annotations": []}],
         "status": "completed", "id": "msg_pi_1"},
        {"type": "function_call", "call_id": "call_1_a_b_c", "name": "read", "arguments": '{"path":"a"}'},
        {"type": "function_call", "call_id": "x" * 64, "name": "read", "arguments": '{"path":"b"}'},
        {"type": "function_call", "id": "fc_xfoazco3biir", "call_id": "call_k", "name": "read",
         "arguments": '{"path":"c"}'},
        {"type": "function_call_output", "call_id": "call_1_a_b_c", "output": "ok"},
        {"type": "function_call_output", "call_id": "x" * 64, "output": "ok"},
        {"type": "function_call_output", "call_id": "call_k", "output": "ok"},
        {"role": "user", "content": [{"type": "input_text", "text": "Next."}]},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "mine",
                                                               "annotations": []}],
         "status": "completed", "id": "msg_pi_6"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "t", "annotations": []}],
         "status": "completed", "id": "msg_pi_6_1"},
        {"type": "function_call", "call_id": "call_d", "name": "read", "arguments": '{"path":"d"}'},
        {"type": "function_call_output", "call_id": "call_d", "output": "D"},
        {"role": "user", "content": [{"type": "input_text", "text": "Last."}]}]


def test_the_output_cap_is_clamped_to_the_window_and_raised_to_16(tmp_path: Path) -> None:
    """``buildBaseOptions`` clamps the cap to the window less the estimate and 4096 (at least 1);
    ``buildParams`` raises it to 16 (``OPENAI_RESPONSES_MIN_OUTPUT_TOKENS``)."""
    b = LogBuilder(session_id="s-5", provider="openai", model="gpt-5.4", system=SYSTEM, tools=[],
                   reasoning_effort=None, max_tokens=None, context_window=4200)
    with b.turn("x" * 80):
        with b.step():
            reply(b, "gpt-5.4", "ok")
    b.configure(max_tokens=5)
    with b.turn("y"):
        with b.step():
            reply(b, "gpt-5.4", "ok")
    session = session_of(b, tmp_path)
    renderer = make_renderer("responses")
    caps = [body_of(renderer.render(r))["max_output_tokens"] for r in session.requests]
    assert caps == [4200 - 4096 - 1 - 20, 16]  # system 1 token, the prompt 20; a cap of 5 raised to 16


def test_retention_long_and_none(tmp_path: Path) -> None:
    """Long: ``prompt_cache_retention: "24h"`` (unless ``supportsLongCacheRetention: false``); none:
    no ``prompt_cache_key``, no session headers, and ``prompt_cache_options`` on a model with
    ``supportsExplicitPromptCacheMode`` (gpt-5.6). The key is the session id's first 64 code points.
    Such an id (past U+00FF) cannot go out in the session headers, so pi-ai sends such a request only
    without them (retention none): the other bodies are checked as built (``body``), and ``body_value``
    refuses them as ``render`` does."""
    session_id = "s" * 63 + "😀" + "tail"
    b = LogBuilder(session_id=session_id, provider="openai", model="gpt-5.6-sol", system=SYSTEM, tools=[],
                   reasoning_effort=None, max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            reply(b, "gpt-5.6-sol", "ok")
    request = session_of(b, tmp_path).requests[0]
    keys = ("prompt_cache_key", "prompt_cache_retention", "prompt_cache_options", "store")
    found = {}
    for retention in ("short", "long", "none"):
        renderer = make_renderer("responses", cache_retention=retention)
        body = renderer.body(request, renderer.call(request), compaction_instruction=None)
        found[retention] = [(k, v) for k, v in body.items() if k in keys]
    assert found == {
        "short": [("prompt_cache_key", "s" * 63 + "😀"), ("store", False)],
        "long": [("prompt_cache_key", "s" * 63 + "😀"), ("prompt_cache_retention", "24h"), ("store", False)],
        "none": [("prompt_cache_options", {"mode": "explicit"}), ("store", False)]}
    wire = make_renderer("responses", cache_retention="none").render(request)
    assert [k for k, _ in wire.headers if k in ("session_id", "x-client-request-id")] == []
    assert body_of(wire) == make_renderer("responses", cache_retention="none").body_value(request)
    for view in ("render", "body_value"):
        with pytest.raises(RenderError, match="^<input> seq 5: pi-ai sends no request: its header session_id "):
            getattr(make_renderer("responses", cache_retention="long"), view)(request)


def test_a_declared_route_with_compat_switches_and_profile_headers(tmp_path: Path) -> None:
    routes = {"providers": {"gw": {
        "api": "openai-responses", "baseURL": "https://gw.example.com/v1/", "cacheRetention": "long",
        "headers": {"X-Team": "t", "Accept": "text/plain", "session_id": "mine"},
        "compat": {"supportsDeveloperRole": False, "supportsStrictMode": True, "supportsLongCacheRetention": False},
        "models": [{"id": "m", "contextWindow": 64000, "maxTokens": 9000,
                    "reasoningEfforts": {"off": "none", "low": "lo", "high": "hi"}}]}}}
    b = LogBuilder(session_id="s-6", provider="gw", model="m", system=SYSTEM, tools=[READ, READ],
                   reasoning_effort="low", max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            reply(b, "m", "ok", provider="gw")
    session = session_of(b, tmp_path, routes)
    assert session.route(session.requests[0]).adapter == "responses"
    wire = renderer_for(routes).render(session.requests[0])
    assert wire.path == "/v1/responses"
    assert list(body_of(wire).items()) == list({
        "model": "m", "input": [{"role": "system", "content": SYSTEM},
                                {"role": "user", "content": [{"type": "input_text", "text": "Hi."}]}],
        "stream": True, "prompt_cache_key": "s-6", "store": False, "max_output_tokens": 9000,
        "tools": [READ_TOOL],  # one per name
        "reasoning": {"effort": "lo", "summary": "auto"}, "include": ["reasoning.encrypted_content"]}.items())
    # the profile's session_id takes pi-ai's place; accept moves to the profile's (Headers semantics)
    assert list(wire.headers) == [*SDK[1:], ("session_id", "mine"), ("x-client-request-id", "s-6"),
                                  ("x-team", "t"), ("accept", "text/plain"), ("user-agent", AGENT),
                                  ("content-type", "application/json")]


def test_an_openrouter_url_sends_its_session_header(tmp_path: Path) -> None:
    routes = {"providers": {"router": {"api": "openai-responses", "baseURL": "https://openrouter.ai/api/v1",
                                       "models": [{"id": "openai/gpt-x", "reasoningEfforts": False}]}}}
    b = LogBuilder(session_id="s-7", provider="router", model="openai/gpt-x", system=SYSTEM, tools=[],
                   reasoning_effort=None, max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            reply(b, "openai/gpt-x", "ok", provider="router")
    wire = renderer_for(routes).render(session_of(b, tmp_path, routes).requests[0])
    assert wire.path == "/api/v1/responses"
    assert [k for k, _ in wire.headers][len(SDK):] == ["x-session-id", "user-agent", "content-type"]


def test_tool_results_with_images_and_orphans(tmp_path: Path) -> None:
    """A tool result's images are ``input_image`` items in its output for an image model; an
    unanswered call gets pi-ai's ``No result provided``; an error turn is skipped."""
    png = bytes(range(12))
    key = "sha256:" + hashlib.sha256(png).hexdigest()
    picture = {"type": "image", "attachment": {"attachmentId": key, "mediaType": "image/png", "bytes": 12,
                                               "width": 1, "height": 1}}
    b = LogBuilder(session_id="s-8", provider="openai", model="gpt-5", system=SYSTEM, tools=[READ],
                   reasoning_effort=None, max_tokens=None, context_window=None)
    with b.turn("Look."):
        with b.step():
            reply(b, "gpt-5", "broken", stop="error")
        with b.step():
            r = reply(b, "gpt-5", None, tool_calls=[ToolCall("read", '{"path":"p"}', id="call_p|fc_p"),
                                                    ToolCall("read", '{"path":"q"}', id="call_q|fc_q")])
            b.tool_result(r.call_ids[0], [{"type": "text", "text": "p:"}, picture])
    with b.turn("Next."):
        with b.step():
            reply(b, "gpt-5", "ok")
    session = session_of(b, tmp_path)
    wire = make_renderer("responses").render(session.requests[-1], images={key: png})
    body = body_of(wire)
    assert body["input"][2:] == [
        {"type": "function_call", "id": "fc_p", "call_id": "call_p", "name": "read", "arguments": '{"path":"p"}'},
        {"type": "function_call", "id": "fc_q", "call_id": "call_q", "name": "read", "arguments": '{"path":"q"}'},
        {"type": "function_call_output", "call_id": "call_p", "output": [
            {"type": "input_text", "text": "p:"},
            {"type": "input_image", "detail": "auto", "image_url": "data:image/png;base64,AAECAwQFBgcICQoL"}]},
        {"type": "function_call_output", "call_id": "call_q", "output": "No result provided"},
        {"role": "user", "content": [{"type": "input_text", "text": "Next."}]}]
    assert images_in_body(body) == {key: png}


def test_title_and_compaction_calls(tmp_path: Path) -> None:
    b = LogBuilder(session_id="s-9", provider="openai", model="gpt-5", system=SYSTEM, tools=[READ],
                   reasoning_effort="high", max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            reply(b, "gpt-5", "Hello.")
    b.compaction("Summary.")
    b.title("Greeting")
    session = session_of(b, tmp_path)
    renderer = make_renderer("responses")
    compaction = next(r for r in session.requests if r.kind == "compaction")
    title = next(r for r in session.requests if r.kind == "title")
    body = body_of(renderer.render(compaction, compaction_instruction="Summarise."))
    assert body["input"][-1] == {"role": "user", "content": [{"type": "input_text", "text": "Summarise."}]}
    assert "reasoning" not in body and "tools" in body  # the summarizer names no effort; gpt-5 pins off
    body = body_of(renderer.render(title))
    assert [item.get("role") for item in body["input"]] == ["developer", "user"]
    assert (body["max_output_tokens"], "tools" in body, "reasoning" in body) == (64, False, False)
    with pytest.raises(RenderError, match="compaction instruction"):
        renderer.render(compaction)


def test_a_reasoning_signature_that_is_not_json_is_refused(tmp_path: Path) -> None:
    """pi-ai ``JSON.parse``s a same-model thinking signature and throws on anything else (NaN too):
    DSH could not have sent the request."""
    for signature in ("{bad", "NaN"):
        b = LogBuilder(session_id="s-10", provider="openai", model="gpt-5", system=SYSTEM, tools=[],
                       reasoning_effort=None, max_tokens=None, context_window=None)
        with b.turn("Hi."):
            with b.step():
                reply(b, "gpt-5", "x", reasoning="r", thinking_signature=signature)
        with b.turn("Again."):
            with b.step():
                reply(b, "gpt-5", "y")
        request = session_of(b, tmp_path).requests[-1]
        with pytest.raises(RenderError, match="thinking signature is not JSON"):
            make_renderer("responses").render(request)


def test_an_openai_completions_renderer_names_the_responses_adapter(tmp_path: Path) -> None:
    b = LogBuilder(session_id="s-11", provider="openai", model="gpt-5", system=SYSTEM, tools=[],
                   reasoning_effort=None, max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            reply(b, "gpt-5", "ok")
    with pytest.raises(RenderError) as caught:
        make_renderer("openai").render(session_of(b, tmp_path).requests[0])
    assert (str(caught.value.message), caught.value.hint) == (
        "openai/gpt-5 speaks openai-responses, not openai-completions",
        "render openai-responses routes with --adapter responses")


# --- routes, catalog, cache rules, captures ---------------------------------------------------------


def test_the_openai_catalog_route_and_declared_responses_routes_pick_the_renderer(tmp_path: Path) -> None:
    b = LogBuilder(session_id="s-12", provider="openai", model="gpt-5", system=SYSTEM, tools=[],
                   reasoning_effort=None, max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            reply(b, "gpt-5", "ok")
    session = session_of(b, tmp_path)
    route = session.route(session.requests[0])
    assert (route.adapter, route.api, route.because) == ("responses", "openai-responses",
                                                         "pi-ai's replay envelope at seq 12")
    assert (route_for("openai").adapter, route_for("openai").because) == ("responses", "pi-ai's catalog")
    assert route_for("gw", declared={"gw": "openai-responses"}).adapter == "responses"
    assert route_renderer([session])(session.requests[0], {}) == make_renderer("responses").render(
        session.requests[0]).body


def test_the_openai_catalog_holds_every_model_of_pi_ais_openai_json() -> None:
    """pi-ai 0.82.1 ``providers/data/openai.json``: 38 models, all ``openai-responses`` at
    ``https://api.openai.com/v1`` (the oracle cases compare 38 of them field by field)."""
    ours = {k[1]: m for k, m in BUILTIN_MODELS.items() if k[0] == "openai"}
    assert len(ours) == 38
    assert {(m.api, m.base_url) for m in ours.values()} == {("openai-responses", "https://api.openai.com/v1")}
    gpt56 = ours["gpt-5.6-sol"]
    assert (gpt56.context_window, gpt56.max_tokens, gpt56.supported_levels(), dict(gpt56.compat)) == (
        272000, 128000, ("off", "low", "medium", "high", "xhigh", "max"),
        {"supportsStrictMode": True, "supportsOpenAIGrammarTools": True, "supportsToolSearch": True,
         "supportsExplicitPromptCacheMode": True})


def test_responses_requests_take_openais_cache_rule_over_their_own_body() -> None:
    for provider, model in (("openai", "gpt-5"), ("gw", "m"), (None, None)):
        rule = rule_for(provider, model, adapter="responses")
        assert (rule.family, rule.wire_adapter) == ("openai", "responses")
    assert rule_for("openai", "gpt-5.6-sol", adapter="responses").breakpoint_based
    assert (rule_for("local", "x", adapter="openai").wire_adapter, rule_for("openai", "gpt-5").wire_adapter) == (
        "openai", "openai")


def test_a_captured_responses_body_is_classified_by_its_input() -> None:
    """A capture's ``POST /responses`` body is an LLM call like a chat-completions one: its
    ``input`` items are its messages (system text, last user text)."""
    def user(text: str) -> dict[str, Any]:
        return {"role": "user", "content": [{"type": "input_text", "text": text}]}

    title = {"model": "m", "input": [{"role": "developer", "content": TITLE_PREFIX + " from these."}, user("x")]}
    compaction = {"model": "m", "input": [user("x"), user(COMPACTION_PREFIX + ". Summarise.")], "tools": [READ_TOOL]}
    loop = {"model": "m", "input": [user("x")], "tools": [READ_TOOL]}
    assert [classify({}, json.dumps(v).encode()) for v in (loop, title, compaction, {"model": "m"},
                                                           {"input": "text"})] == [
        "loop", "title", "compaction", "other", "other"]


# --- the CLI picks the route ----------------------------------------------------------------------


def test_render_and_diff_pick_the_responses_route(tmp_path: Path, monkeypatch, capsys) -> None:
    session = tool_session(tmp_path)
    log = tmp_path / "session.jsonl"
    renderer = make_renderer("responses")
    bodies = [renderer.render(r).body for r in session.requests]
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "2")
    assert (code, out.encode("utf-8"), err) == (0, bodies[2], [])
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--headers")
    head, _, body = out.partition("\n\n")
    assert (code, body.encode("utf-8")) == (0, bodies[0])
    assert head.splitlines()[0] == "POST /v1/responses"
    capture = tmp_path / "wire.jsonl"
    capture.write_text("".join(json.dumps({"method": "POST", "path": "/v1/responses", "body": body.decode()}) + "\n"
                               for body in bodies), "utf-8")
    code, out, _ = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(capture), "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert [(r["index"], r["verdict"]) for r in rows] == [(0, "identical"), (1, "identical"), (2, "identical")]


def test_the_cache_accounting_counts_a_responses_bodys_input(tmp_path: Path, monkeypatch, capsys) -> None:
    """The prompt compared for a Responses request is its rendered body: its ``input`` items grow
    with the conversation, so each loop request's counted prompt is larger than the last."""
    tool_session(tmp_path)
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(tmp_path / "session.jsonl"), "--json")
    timeline = json.loads(out.splitlines()[0])["timeline"]
    assert code in (0, 1)
    assert {t["prompt_source"] for t in timeline} == {"wire:responses"}
    counted = [t["counted_tokens"] for t in timeline if t["kind"] == "loop"]
    assert counted == sorted(set(counted)) and len(counted) == 3


def test_diff_takes_a_declared_responses_routes_facts_from_routes(tmp_path: Path, monkeypatch, capsys) -> None:
    """``render`` builds its renderer with the route file's facts; ``diff`` (the session's shared
    renderers) must too."""
    routes = {"providers": {"gw": {"api": "openai-responses", "baseURL": "https://gw.example.com/v1",
                                   "models": [{"id": "m", "maxTokens": 900, "reasoningEfforts": False}]}}}
    (tmp_path / "routes.yml").write_text(json.dumps(routes), "utf-8")  # JSON is YAML
    b = LogBuilder(session_id="s-13", provider="gw", model="m", system=SYSTEM, tools=[],
                   reasoning_effort=None, max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            reply(b, "m", "ok", provider="gw")
    log = b.write_jsonl(tmp_path / "session.jsonl")
    body = renderer_for(routes).render(session_of(b, tmp_path, routes).requests[0]).body
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(tmp_path / "routes.yml"))
    assert (code, out.encode("utf-8"), err) == (0, body, [])
    capture = tmp_path / "wire.jsonl"
    capture.write_text(json.dumps({"method": "POST", "path": "/v1/responses", "body": body.decode()}) + "\n", "utf-8")
    code, out, _ = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(capture), "--routes",
                          str(tmp_path / "routes.yml"), "--json")
    assert (code, [json.loads(line)["verdict"] for line in out.splitlines()]) == (0, ["identical"])
