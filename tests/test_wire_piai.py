"""pi-ai wire rendering (Anthropic Messages, OpenAI completions): byte-identical to the live-pi captures.

Corpus checks: every request of ``live-pi/*/wire.jsonl`` (paired with its log step through
``requests-map.json``) must come out of the pi-ai renderers byte for byte, headers included.
Variations of those requests (foreign history, a small context window, a compaction call) are
checked against bodies derived from the captures by the rule the README states. Unit checks pin
the JavaScript parsing, the estimator and the refusals.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest

import dsh_audit
from dsh_audit.errors import RenderError, UsageError
from dsh_audit.jsjson import stringify
from dsh_audit.wire import ADAPTERS, make_renderer
from dsh_audit.wire._anthropic import AnthropicRenderer, render_anthropic
from dsh_audit.wire._openai import OpenAIRenderer, render_openai
from dsh_audit.wire._openai_compat import detect_compat
from dsh_audit.wire._openai_messages import short_hash
from dsh_audit.wire._piai_context import pi_context
from dsh_audit.wire._piai_js import js_len, js_parse
from dsh_audit.wire._piai_transform import estimate_context_tokens, transform_messages
from dsh_audit.wire import PiRoutes, load_routes
from dsh_audit.wire._piai_catalog import BUILTIN_MODELS
from dsh_audit.wire._piai_facts import PiModel

from _golden import CORPUS

LIVE_PI = CORPUS / "live-pi"
TRANSPORT = {"host", "connection", "accept-language", "sec-fetch-mode", "accept-encoding", "content-length"}
corpus = pytest.mark.skipif(not LIVE_PI.is_dir(), reason="../shared/corpus/live-pi is absent")
SCENARIOS = {"c1-anthropic-tools": "anthropic", "c3-openai-compat": "openai"}
#: The hand-declared route of live-pi/c3-openai-compat/inputs/pi-ai-routes.patch.yml, resolved.
LOCAL = PiModel(provider="local-openai", id="local-coder", api="openai-completions",
                base_url="http://127.0.0.1:18302/v1", context_window=131072, max_tokens=8192, reasoning=True,
                thinking_level_map={"minimal": None, "low": None, "medium": None, "high": "high", "xhigh": None,
                                    "max": None})


def _routes(scenario: str) -> PiRoutes:
    return load_routes(LIVE_PI / scenario / "inputs" / "pi-ai-routes.patch.yml")


def _pairs(scenario: str) -> list[tuple[dict, object]]:
    """(captured row, rebuilt Request) for every captured request of a scenario."""
    root = LIVE_PI / scenario
    mapping = json.loads((root / "requests-map.json").read_text())
    rows = {row["seq"]: row for row in map(json.loads, (root / "wire.jsonl").read_text().splitlines())}
    requests = dsh_audit.requests(dsh_audit.load(CORPUS / "live-pi" / mapping["log"]))
    by_chunk = {(r.kind, r.first_chunk_seq): r for r in requests}
    pairs = [(rows[e["wireSeq"]], by_chunk["loop", e["firstChunkSeq"]]) for e in mapping["loop"]]
    pairs += [(rows[e["wireSeq"]], by_chunk["title", e["titleRequestSeq"]]) for e in mapping["title"]]
    assert len(pairs) == len(rows), "every captured request is paired"
    return pairs


def _diff(ours: bytes, theirs: bytes) -> str:
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    lo, hi = max(0, at - 80), at + 80
    return f"differ at byte {at}:\n ours   {ours[lo:hi]!r}\n theirs {theirs[lo:hi]!r}"


@corpus
@pytest.mark.parametrize("scenario, counts", [("c1-anthropic-tools", (10, 1)), ("c3-openai-compat", (5, 1))])
def test_every_captured_body_and_header_set_is_rebuilt_byte_for_byte(scenario, counts):
    renderer = make_renderer(SCENARIOS[scenario], models=_routes(scenario).models)
    pairs = _pairs(scenario)
    assert (sum(r.kind == "loop" for _, r in pairs), sum(r.kind == "title" for _, r in pairs)) == counts
    identical = 0
    for row, request in pairs:
        wire = renderer.render(request)
        theirs = row["body"].encode("utf-8")
        assert wire.body == theirs, f"wire seq {row['seq']} ({request.kind}): " + _diff(wire.body, theirs)
        assert len(wire.body) == row["body_bytes"]
        assert list(wire.headers) == [(k, v) for k, v in row["headers"].items() if k not in TRANSPORT]
        assert (wire.method, wire.path, wire.adapter) == (row["method"], row["path"], SCENARIOS[scenario])
        identical += 1
    assert identical == sum(counts)


def _foreign_anthropic(message: dict) -> dict:
    """README: without usable replay state every thinking block becomes a signature-less text block."""
    if message["role"] != "assistant":
        return message
    content = [{"type": "text", "text": b["thinking"]} if b["type"] == "thinking" else b for b in message["content"]]
    return {**message, "content": content}


def _foreign_openai(message: dict) -> dict:
    """pi-ai: foreign reasoning turns into text, joined in front of the answer, and has no field."""
    if message["role"] != "assistant" or "reasoning_content" not in message:
        return message
    out = {k: v for k, v in message.items() if k != "reasoning_content"}
    out["content"] = message["reasoning_content"] + (message["content"] or "")
    return out


@corpus
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_history_from_a_route_the_adapter_does_not_own_is_foreign(scenario):
    foreign = {"anthropic": _foreign_anthropic, "openai": _foreign_openai}[SCENARIOS[scenario]]
    renderer = make_renderer(SCENARIOS[scenario], owned_routes=frozenset(), models=_routes(scenario).models)
    changed = 0
    for row, request in _pairs(scenario):
        captured = json.loads(row["body"])
        expected = {**captured, "messages": [foreign(m) for m in captured["messages"]]}
        changed += expected != captured
        assert renderer.render(request).body.decode() == stringify(expected)
    # Requests with natively replayed reasoning: c1 #3-#9 and #11 (#10's sonnet-4-5 history is
    # already foreign to sonnet-4-6); c3 every loop request after the first.
    assert changed == {"c1-anthropic-tools": 8, "c3-openai-compat": 4}[scenario]


@corpus
def test_small_context_window_clamps_max_tokens_and_budget():
    pairs = _pairs("c1-anthropic-tools")
    small = {key: dataclasses.replace(model, context_window=16000) for key, model in BUILTIN_MODELS.items()}
    renderer = AnthropicRenderer(models=small)
    seen = []
    for row, request in pairs:
        captured = json.loads(row["body"])
        # the window the log records would win over the caller's facts: this stands for a log without one
        request = dataclasses.replace(request, context=None)
        body = json.loads(renderer.render(request).body)
        estimate = estimate_context_tokens(pi_context(request, provider="anthropic"))
        cap = 16000 - estimate - 4096
        expected = dict(captured, max_tokens=min(cap, captured["max_tokens"]))
        if captured["thinking"]["type"] == "enabled":
            expected["thinking"] = dict(captured["thinking"], budget_tokens=min(16384, max(0, cap - 1024)) or 1024)
        assert body == expected
        seen.append((request.kind, estimate, body["max_tokens"]))
    # The title prompt is system + one message: ceil(chars / 4) each, no tools.
    title = next(r for _, r in pairs if r.kind == "title")
    hand = math.ceil(js_len(title.header["system"]) / 4) + math.ceil(
        js_len(title.messages[0]["content"][0]["text"]) / 4)
    assert seen[-1] == ("title", hand, 64)
    assert [m for _, _, m in seen[:3]] == [4142, 4071, 4028]


@corpus
def test_compaction_call_appends_the_instruction_and_disables_thinking():
    row, loop = _pairs("c1-anthropic-tools")[3]
    request = dataclasses.replace(loop, kind="compaction", extra={
        "provider": "anthropic", "model": "claude-sonnet-4-5", "maxTokens": 8192})
    with pytest.raises(RenderError, match="compaction instruction"):
        render_anthropic(request)
    body = json.loads(render_anthropic(request, compaction_instruction="Summarise.").body)
    captured = json.loads(row["body"])
    messages = captured["messages"]
    del messages[-1]["content"][-1]["cache_control"]
    messages.append({"role": "user", "content": [
        {"type": "text", "text": "Summarise.", "cache_control": {"type": "ephemeral"}}]})
    assert body == {**captured, "messages": messages, "max_tokens": 8192, "thinking": {"type": "disabled"}}


@corpus
def test_refusals_carry_dsh_codes():
    _, request = _pairs("c1-anthropic-tools")[0]
    config = request.header["config"]
    with_stop = dataclasses.replace(request, header={**request.header, "config": {**config, "stop": ["x"]}})
    with pytest.raises(RenderError) as info:
        render_anthropic(with_stop)
    assert info.value.dsh_code == "UNSUPPORTED_OPTION"
    max_on_45 = dataclasses.replace(request, header={**request.header, "config": {**config, "reasoningEffort": "max"}})
    with pytest.raises(RenderError) as info:
        render_anthropic(max_on_45)
    assert info.value.dsh_code == "UNSUPPORTED_REASONING_EFFORT"
    unknown = dataclasses.replace(request, header={**request.header, "config": {**config, "model": "claude-x"}})
    with pytest.raises(RenderError, match="no pi-ai model facts for anthropic/claude-x"):
        render_anthropic(unknown)
    with pytest.raises(RenderError, match="not openai-completions"):
        render_openai(request)


def test_js_parse_orders_integer_keys_first_and_rounds_like_javascript():
    parsed = js_parse('{"b":1,"2":2,"1":1,"01":0,"a":[1.0,12345678901234567890,-0],"b":3}')
    assert stringify(parsed) == '{"1":1,"2":2,"b":3,"01":0,"a":[1,12345678901234567000,0]}'
    assert js_len("a\U0001f600") == 3


def test_registry_and_compat_detection():
    assert {"anthropic", "openai"} <= set(ADAPTERS)
    assert ADAPTERS["anthropic"] is AnthropicRenderer and ADAPTERS["openai"] is OpenAIRenderer
    local = LOCAL
    compat = detect_compat(local)
    assert (compat["supportsDeveloperRole"], compat["supportsStore"], compat["maxTokensField"],
            compat["thinkingFormat"]) == (True, True, "max_completion_tokens", "openai")
    deepseek = detect_compat(dataclasses.replace(local, provider="deepseek", base_url="https://api.deepseek.com"))
    assert (deepseek["supportsDeveloperRole"], deepseek["supportsStore"], deepseek["thinkingFormat"],
            deepseek["requiresReasoningContentOnAssistantMessages"]) == (False, False, "deepseek", True)


def test_corpus_path_is_relative_to_the_repository():
    assert CORPUS == Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"


# Expected values below were produced once by running pi-ai 0.82.1's own dist
# (``utils/hash.js``, ``api/transform-messages.js``, ``utils/estimate.js``) under Node; the
# project itself never needs Node.
def test_short_hash_matches_pi_ai():
    pipe_id = "call_abc|fc_0123456789abcdefghijklmnopqrstuvwxyz+/="
    assert [short_hash(s) for s in (pipe_id, "", "héllo😀")] == ["bn996y1fidf13", "k4n83c7h0j2b", "1olj6nu1frhbfw"]
    from dsh_audit.wire._openai_messages import _normalize_id
    local = LOCAL
    assert _normalize_id(pipe_id, local, None) == "call_abc_bn996y1f"
    assert _normalize_id("call|item.1", local, None) == "call_item_1"


SYNTHETIC = {
    "systemPrompt": "Sys é😀",
    "tools": [{"name": "t", "description": "d",
               "parameters": {"type": "object", "properties": {"a": {"type": "string"}}}}],
    "messages": [
        {"role": "user", "content": "hi 😀 there"},
        {"role": "assistant", "api": "anthropic-messages", "provider": "anthropic", "model": "claude-sonnet-4-5",
         "stopReason": "toolUse", "content": [
             {"type": "thinking", "thinking": "think", "thinkingSignature": "sig"},
             {"type": "thinking", "thinking": "  "},
             {"type": "thinking", "thinking": "red", "thinkingSignature": "x", "redacted": True},
             {"type": "text", "text": "ok"},
             {"type": "toolCall", "id": "id.1/é", "name": "t", "arguments": js_parse('{"2":1,"1":2,"b":"é"}'),
              "thoughtSignature": "ts"},
             {"type": "toolCall", "id": "id2", "name": "t", "arguments": {}}]},
        {"role": "toolResult", "toolCallId": "id.1/é", "toolName": "t", "content": [{"type": "text", "text": "res"}],
         "isError": False},
        {"role": "assistant", "api": "dsh-foreign", "provider": "x", "model": "y", "stopReason": "error",
         "content": [{"type": "text", "text": "bad"}]},
        {"role": "user", "content": "next"},
    ],
}


@pytest.mark.parametrize("provider, expected", [
    ("anthropic", '[{"role":"user","content":"hi 😀 there"},{"role":"assistant","api":"anthropic-messages",'
                  '"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse","content":[{"type":'
                  '"thinking","thinking":"think","thinkingSignature":"sig"},{"type":"thinking","thinking":"red",'
                  '"thinkingSignature":"x","redacted":true},{"type":"text","text":"ok"},{"type":"toolCall","id":'
                  '"id.1/é","name":"t","arguments":{"1":2,"2":1,"b":"é"},"thoughtSignature":"ts"},{"type":"toolCall",'
                  '"id":"id2","name":"t","arguments":{}}]},{"role":"toolResult","toolCallId":"id.1/é","toolName":"t",'
                  '"content":[{"type":"text","text":"res"}],"isError":false},{"role":"toolResult","toolCallId":"id2",'
                  '"toolName":"t","content":[{"type":"text","text":"No result provided"}],"isError":true},'
                  '{"role":"user","content":"next"}]'),
    ("other", '[{"role":"user","content":"hi 😀 there"},{"role":"assistant","api":"anthropic-messages",'
              '"provider":"anthropic","model":"claude-sonnet-4-5","stopReason":"toolUse","content":[{"type":"text",'
              '"text":"think"},{"type":"text","text":"ok"},{"type":"toolCall","id":"id_1__","name":"t","arguments":'
              '{"1":2,"2":1,"b":"é"}},{"type":"toolCall","id":"id2","name":"t","arguments":{}}]},{"role":'
              '"toolResult","toolCallId":"id_1__","toolName":"t","content":[{"type":"text","text":"res"}],'
              '"isError":false},{"role":"toolResult","toolCallId":"id2","toolName":"t","content":[{"type":"text",'
              '"text":"No result provided"}],"isError":true},{"role":"user","content":"next"}]'),
])
def test_transform_messages_and_estimate_match_pi_ai(provider, expected):
    from dsh_audit.wire._anthropic import _normalize_id
    model = dataclasses.replace(BUILTIN_MODELS["anthropic", "claude-sonnet-4-5"], provider=provider)
    assert stringify(transform_messages(SYNTHETIC["messages"], model, _normalize_id)) == expected
    assert estimate_context_tokens(SYNTHETIC) == 43


@corpus
def test_the_route_file_resolves_a_hand_declared_route_as_dsh_does():
    routes = _routes("c3-openai-compat")
    assert routes.models["local-openai", "local-coder"] == LOCAL
    assert dict(routes.apis) == {"anthropic": "anthropic-messages", "local-openai": "openai-completions"}
    # a catalog route keeps pi-ai's catalog facts; only the endpoint moves
    catalog = routes.models["anthropic", "claude-sonnet-4-6"]
    assert catalog == dataclasses.replace(BUILTIN_MODELS["anthropic", "claude-sonnet-4-6"],
                                          base_url="http://127.0.0.1:18302")


def test_without_the_route_file_a_hand_declared_model_is_not_guessed():
    request = dsh_audit.requests(dsh_audit.load(next((LIVE_PI / "c3-openai-compat" / "session-logs").glob("*.jsonl"))))[1] \
        if LIVE_PI.is_dir() else None
    if request is None:
        pytest.skip("../shared/corpus/live-pi is absent")
    with pytest.raises(RenderError, match="no pi-ai model facts for local-openai/local-coder") as caught:
        make_renderer("openai").render(request)
    assert caught.value.hint == "pass --routes FILE (DSH's llm-pi-ai route configuration)"


@pytest.mark.parametrize("text, message", [
    ("providers: [", "route file is not valid YAML at line 1"),
    ("providers:\n  gw:\n    api: smoke-signals\n    baseURL: http://x\n    models: [{id: m}]\n",
     "route file: providers.gw.api: unknown pi-ai api 'smoke-signals'"),
    ("providers:\n  gw:\n    baseURL: http://x\n    models: [{id: m}]\n",
     "route file: providers.gw.models[0]: needs an api"),
    ("providers:\n  gw:\n    api: openai-completions\n    baseURL: http://x\n    models:\n"
     "      - id: m\n        reasoningEfforts: {off: }\n", "offers no level beyond off"),
    ("providers:\n  gw:\n    api: openai-completions\n    baseURL: http://x\n    models:\n"
     "      - id: m\n        maxTokens: -3\n", "route file: providers.gw.models[0].maxTokens: must be a positive"),
    ("- id: agent-default-model\n", "route file: rows: no row with id 'llm-pi-ai'"),
])
def test_bad_route_files_are_one_line_errors_naming_the_key(tmp_path, text, message):
    path = tmp_path / "routes.yml"
    path.write_text(text)
    with pytest.raises(UsageError) as caught:
        load_routes(path)
    assert message in caught.value.message and caught.value.path == str(path)
    assert "\n" not in str(caught.value)


def test_js_len_counts_utf16_units_at_c_speed_across_its_pieces() -> None:
    """JavaScript's ``text.length``: an astral character is two units, a lone surrogate one, also
    where the text is measured a piece at a time (1 Mi characters)."""
    from dsh_audit.wire._piai_js import _PIECE, js_len

    def reference(text: str) -> int:
        return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)

    for text in ("", "abc", "é€", "a😀", "\ud800x", "x" * (_PIECE - 1) + "😀" + "\udc00" + "é",
                 "😀" * (_PIECE + 3)):
        assert js_len(text) == reference(text), text[:8]
    assert js_len("😀" * (_PIECE + 3)) == 2 * _PIECE + 6
