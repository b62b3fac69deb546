"""DeepSeek wire rendering: byte-identical to real captures and DSH goldens, plus the edge rules.

Corpus checks: every request DSH sent in ``live/*/wire.jsonl`` (loop, title and compaction) and
every golden ``requests[i].body`` (or ``body_error``) must come out of ``DeepSeekRenderer``
byte for byte (or as the matching refusal). Unit checks pin each rule of spec §8.1 on
hand-built requests with whole expected bodies.
"""

from __future__ import annotations

import json

import pytest

import dsh_audit
from dsh_audit.errors import RenderError, UsageError
from dsh_audit.replay import Digest, Request
from dsh_audit.wire import ADAPTERS, OFFLOADED_IMAGE_TEXT, DeepSeekRenderer, WireRequest, make_renderer, render, render_all

from _golden import CORPUS, golden_files, log_for

LIVE = CORPUS / "live"
SCENARIOS = sorted(p.name for p in LIVE.iterdir()) if LIVE.is_dir() else []
# Sent by the Node fetch stack or holding per-install facts, not by the adapter's header code.
TRANSPORT = {"host", "connection", "accept-language", "sec-fetch-mode", "accept-encoding", "content-length",
             "x-deepseek-harness-user-id"}
CAPTURE_KIND = {"loop": "conversation", "title": "title", "compaction": "compaction"}
corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")


def first_difference(ours: bytes, theirs: bytes) -> str:
    at = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    return (f"bodies differ at byte {at} (ours {len(ours)} bytes, theirs {len(theirs)}):\n"
            f"  ours:   {ours[max(0, at - 60):at + 60]!r}\n  theirs: {theirs[max(0, at - 60):at + 60]!r}")


def assert_same_body(ours: bytes, theirs: bytes) -> None:
    if ours != theirs:
        pytest.fail(first_difference(ours, theirs))


def captured_pairs(scenario):
    """(request, capture record) for every request of every log of a live scenario."""
    records = [json.loads(line) for line in (LIVE / scenario / "wire.jsonl").read_text().splitlines()]
    pairs = []
    for path in sorted((LIVE / scenario / "session-logs").glob("*.jsonl")):
        log = dsh_audit.load(path)
        requests = dsh_audit.requests(log)
        for kind, capture_kind in CAPTURE_KIND.items():
            ours = [r for r in requests if r.kind == kind]
            theirs = [w for w in records if w["kind"] == capture_kind
                      and w["headers"].get("x-deepseek-harness-session-id") == log.header.id]
            if len(ours) != len(theirs):
                # A retried HTTP error is one attempt per send in the log but may be captured
                # twice with one body: pair first attempts with deduplicated bodies instead.
                theirs = [w for i, w in enumerate(theirs) if i == 0 or w["body"] != theirs[i - 1]["body"]]
                ours = [r for r in ours if r.attempt == 1]
            assert len(ours) == len(theirs), f"{path.name} {kind}: {len(ours)} requests, {len(theirs)} captured"
            pairs.extend(zip(ours, theirs))
    return pairs


@corpus
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_captured_body_is_reproduced(scenario):
    renderer = DeepSeekRenderer()
    pairs = captured_pairs(scenario)
    assert any(r.kind == "loop" for r, _ in pairs)
    for request, record in pairs:
        options = {}
        if request.kind == "compaction":
            # The instruction is a DSH constant the log lacks; take it from the capture itself.
            options["compaction_instruction"] = json.loads(record["body"])["messages"][-1]["content"]
        wire = renderer.render(request, **options)
        assert_same_body(wire.body, record["body"].encode("utf-8"))
        sent = tuple((k, v) for k, v in record["headers"].items() if k not in TRANSPORT)
        assert wire.headers == sent


@corpus
def test_corpus_totals():
    pairs = [p for s in SCENARIOS for p in captured_pairs(s)]
    kinds = [r.kind for r, _ in pairs]
    assert (kinds.count("loop"), kinds.count("title"), kinds.count("compaction")) == (55, 9, 2)


GOLDENS = [g for g in golden_files() if json.loads(g.read_text()).get("requests")]


@corpus
@pytest.mark.parametrize("golden", GOLDENS, ids=[str(g.relative_to(CORPUS)) for g in GOLDENS])
def test_golden_bodies(golden):
    data = json.loads(golden.read_text())
    lenient = data.get("requests_basis") == "adapted-header"
    ours = [r for r in dsh_audit.requests(dsh_audit.load(log_for(golden), lenient=lenient))
            if r.kind == "loop" and r.attempt == 1]
    assert len(ours) == len(data["requests"])
    renderer = DeepSeekRenderer()
    for request, want in zip(ours, data["requests"]):
        if want["body"] is not None:
            wire = renderer.render(request)
            assert_same_body(wire.body, want["body"].encode("utf-8"))
            assert len(wire.body) == want["body_bytes"]
            continue
        with pytest.raises(RenderError) as caught:
            renderer.render(request)
        message = want["body_error"]["message"]
        if "tools?.map" in message:
            assert caught.value.dsh_code == "TypeError"
        elif "image content" in message:
            assert caught.value.dsh_code == "UNSUPPORTED_CONTENT"
        else:
            assert message == "no request/header before this step"
            assert caught.value.dsh_code is None and "no request/header" in caught.value.message


@corpus
def test_golden_totals():
    bodies = sum(1 for g in GOLDENS for r in json.loads(g.read_text())["requests"] if r["body"] is not None)
    assert bodies == 83


@corpus
def test_cached_renderer_equals_fresh_renderers():
    path = next((LIVE / "e2-autocompact" / "session-logs").glob("*.jsonl"))
    requests = [r for r in dsh_audit.requests(dsh_audit.load(path)) if r.kind != "compaction"]
    cached = [w.body for w in render_all(requests)]
    fresh = [DeepSeekRenderer().render(r).body for r in requests]
    assert cached == fresh and len(cached) == 13


# --- unit rules ---------------------------------------------------------------------------------

CONFIG = {"provider": "deepseek-official", "model": "deepseek-v4-flash", "reasoningEffort": "high",
          "maxTokens": 256000}
BASH = {"name": "bash", "description": "Run a shell command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}
HEADER = {"config": CONFIG, "adapterDefaults": {"reasoningEffort": True, "maxTokens": True},
          "system": "You are DSH.", "tools": [BASH]}
STREAM = '"stream":true,"stream_options":{"include_usage":true}'
TOOLS = ('"tools":[{"type":"function","function":{"name":"bash","description":"Run a shell command",'
         '"parameters":{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}}}]')


def user(text):
    return {"role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}


def assistant(*blocks):
    return {"role": "assistant", "content": list(blocks), "source": {"kind": "model"}}


def result(call_id, *blocks):
    return {"role": "user", "content": [{"type": "tool-result", "toolCallId": call_id, "content": list(blocks)}],
            "source": {"kind": "tool", "callId": call_id}}


def text(value):
    return {"type": "text", "text": value}


def reasoning(value):
    return {"type": "reasoning", "text": value}


def request(messages, header=HEADER, *, kind="loop", extra=None):
    return Request(index=0, kind=kind, session_id="s-1", turn=1, step=1, attempt=1, step_start_seq=1,
                   first_chunk_seq=9, header=header, header_seq=2, header_reason="initial",
                   messages=tuple(messages), message_seqs=tuple(range(3, 3 + len(messages))),
                   digest=Digest(""), extra=extra or {})


def body(req, **options):
    return DeepSeekRenderer().render(req, **options).body_text


def test_spec_example_whole_body():
    call = {"type": "tool-call", "id": "call_1", "name": "bash", "arguments": '{"command":"ls"}'}
    req = request([user("List files"), assistant(reasoning("Need ls."), call), result("call_1", text("a.txt\nb.txt")),
                   assistant(reasoning("Done."), text("Two files.")), user("Thanks")])
    assert body(req) == (
        '{"model":"deepseek-v4-flash","messages":[{"role":"system","content":"You are DSH."},'
        '{"role":"user","content":"List files"},'
        '{"role":"assistant","content":"","reasoning_content":"Need ls.","tool_calls":[{"id":"call_1",'
        '"type":"function","function":{"name":"bash","arguments":"{\\"command\\":\\"ls\\"}"}}]},'
        '{"role":"tool","tool_call_id":"call_1","content":"a.txt\\nb.txt"},'
        '{"role":"assistant","content":"Two files.","reasoning_content":"Done."},'
        '{"role":"user","content":"Thanks"}],'
        f'{STREAM},"thinking":{{"type":"enabled"}},"reasoning_effort":"high",{TOOLS},"max_tokens":256000}}')


def messages_of(req, **options):
    return json.loads(body(req, **options))["messages"]


def test_assistant_content_is_empty_string_and_reasoning_only_when_non_empty():
    req = request([assistant(), assistant(reasoning("only thought")), assistant(text("a"), reasoning(""), text("b"))])
    assert messages_of(req)[1:] == [
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": "", "reasoning_content": "only thought"},
        {"role": "assistant", "content": "ab"},
    ]


def test_tool_results_user_text_and_dropped_blocks():
    mixed = {"role": "user", "source": {"kind": "user"}, "content": [
        text("see"), {"type": "plugin-thing", "x": 1},
        {"type": "tool-result", "toolCallId": "c1", "content": []},
        {"type": "tool-result", "toolCallId": "c2", "content": [text("x"), {"type": "tool-result", "toolCallId": "n",
                                                                            "content": [text("nested")]}]}]}
    empty = {"role": "user", "content": [], "source": {"kind": "user"}}
    req = request([mixed, result("c3"), empty])
    assert messages_of(req)[1:] == [
        {"role": "user", "content": "see"},
        {"role": "tool", "tool_call_id": "c1", "content": "(no output)"},
        {"role": "tool", "tool_call_id": "c2", "content": "x"},
        {"role": "tool", "tool_call_id": "c3", "content": "(no output)"},
        {"role": "user", "content": ""},
    ]


def test_temperature_max_tokens_stop_order_and_no_system_or_tools():
    header = {"config": {**CONFIG, "temperature": 0.5, "stop": ["END"]}}
    assert body(request([user("hi")], header)) == (
        f'{{"model":"deepseek-v4-flash","messages":[{{"role":"user","content":"hi"}}],{STREAM},'
        '"thinking":{"type":"enabled"},"reasoning_effort":"high","temperature":0.5,"max_tokens":256000,'
        '"stop":["END"]}')


@pytest.mark.parametrize("effort, tail", [
    ("off", '"thinking":{"type":"disabled"},'),
    ("low", '"thinking":{"type":"enabled"},"reasoning_effort":"low",'),
    ("max", '"thinking":{"type":"enabled"},"reasoning_effort":"max",'),
    (None, ""),
])
def test_effort_resolution(effort, tail):
    config = {k: v for k, v in CONFIG.items() if k != "reasoningEffort"}
    if effort is not None:
        config["reasoningEffort"] = effort
    assert body(request([user("hi")], {"config": config})) == (
        f'{{"model":"deepseek-v4-flash","messages":[{{"role":"user","content":"hi"}}],{STREAM},{tail}'
        '"max_tokens":256000}')


def test_adapter_defaults_apply_when_the_header_has_no_effort():
    header = {"config": {"provider": "p", "model": "m"}}
    got = DeepSeekRenderer(adapter_effort="low").render(request([user("hi")], header)).body_text
    assert got.endswith(f'{STREAM},"thinking":{{"type":"enabled"}},"reasoning_effort":"low"}}')
    got = DeepSeekRenderer(adapter_thinking="disabled").render(request([user("hi")], header)).body_text
    assert got.endswith(f'{STREAM},"thinking":{{"type":"disabled"}}}}')


def test_unsupported_efforts_are_refused():
    with pytest.raises(RenderError) as caught:
        body(request([user("hi")], {"config": {**CONFIG, "reasoningEffort": "medium"}}))
    assert caught.value.dsh_code == "UNSUPPORTED_REASONING_EFFORT" and caught.value.seq == 2
    with pytest.raises(RenderError) as caught:
        DeepSeekRenderer(adapter_thinking="disabled").render(request([user("hi")]))
    assert caught.value.dsh_code == "UNSUPPORTED_REASONING_EFFORT"


def test_title_has_thinking_disabled_and_no_effort_or_tools():
    header = {"config": {"provider": "deepseek-official", "model": "m", "maxTokens": 64}, "system": "Title it."}
    wire = DeepSeekRenderer().render(request([user("hello")], header, kind="title"))
    assert wire.body_text == ('{"model":"m","messages":[{"role":"system","content":"Title it."},'
                              f'{{"role":"user","content":"hello"}}],{STREAM},"thinking":{{"type":"disabled"}},'
                              '"max_tokens":64}')
    assert wire.header("x-deepseek-harness-compact") is None


def test_tokenised_tools_are_refused():
    with pytest.raises(RenderError) as caught:
        body(request([user("hi")], {**HEADER, "tools": "{{tools}}"}))
    assert caught.value.dsh_code == "TypeError" and "{{tools}}" in caught.value.message


def test_missing_header_is_refused():
    with pytest.raises(RenderError, match="no request/header"):
        body(request([user("hi")], None))


IMAGE = {"type": "image", "attachment": {"attachmentId": "sha256:ab", "mediaType": "image/png", "bytes": 3}}


def test_images_need_their_bytes():
    with pytest.raises(RenderError) as caught:
        body(request([user("hi"), {**user("look"), "content": [text("look"), IMAGE]}]))
    assert caught.value.dsh_code == "UNSUPPORTED_CONTENT" and caught.value.seq == 4
    with pytest.raises(RenderError, match="no bytes supplied"):
        body(request([{**user("look"), "content": [IMAGE]}]), images={})


def test_image_path_with_supplied_bytes():
    req = request([{**user("look"), "content": [text("look"), IMAGE]}, result("c1", IMAGE), assistant(text("ok"))],
                  {"config": CONFIG})
    url = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AQID"}}
    assert messages_of(req, images={"sha256:ab": b"\x01\x02\x03"}) == [
        {"role": "user", "content": [{"type": "text", "text": "look"}, url]},
        {"role": "tool", "tool_call_id": "c1", "content": "(see attached image)"},
        {"role": "user", "content": [{"type": "text", "text": "Attached image(s) from tool result:"}, url]},
        {"role": "assistant", "content": "ok"},
    ]
    default = DeepSeekRenderer(max_request_image_bytes=4).render(req, images={"sha256:ab": b"\x01\x02\x03"})
    assert json.loads(default.body)["messages"][0] == {"role": "user", "content": "look" + OFFLOADED_IMAGE_TEXT}
    offloaded = DeepSeekRenderer(max_request_image_bytes=4).render(
        req, images={"sha256:ab": b"\x01\x02\x03"}, offloaded_image_text="[gone]")
    assert json.loads(offloaded.body)["messages"][0] == {"role": "user", "content": "look[gone]"}


def compaction(header=HEADER, **extra):
    return request([user("hi"), assistant(text("yo"))], header, kind="compaction",
                   extra={"provider": "deepseek-official", "model": "deepseek-v4-flash", "maxTokens": 8192, **extra})


def test_compaction_needs_the_instruction_and_sends_the_compact_header():
    with pytest.raises(RenderError, match="compaction instruction"):
        body(compaction())
    wire = DeepSeekRenderer(version="9.9", user_id="u-1").render(
        compaction({**HEADER, "config": {**CONFIG, "reasoningEffort": "max", "temperature": 1}, "adapterDefaults":
                    {"maxTokens": True}}), compaction_instruction="Summarise.")
    assert wire.body_text == (
        '{"model":"deepseek-v4-flash","messages":[{"role":"system","content":"You are DSH."},'
        '{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},{"role":"user","content":"Summarise."}],'
        f'{STREAM},"thinking":{{"type":"enabled"}},"reasoning_effort":"high",{TOOLS},"max_tokens":8192}}')
    assert wire.headers == (
        ("content-type", "application/json"), ("accept", "text/event-stream"),
        ("user-agent", "deepseek-harness/9.9 (+https://github.com/deepseek-ai/deepseek-harness)"),
        ("x-deepseek-harness-user-id", "u-1"), ("x-deepseek-harness-session-id", "s-1"),
        ("x-deepseek-harness-compact", "1"))


@pytest.mark.parametrize("header_effort, marked, renderer, expected", [
    ("low", True, {}, "low"),              # the header shows the adapter default
    ("low", False, {}, "high"),            # an explicit choice is not the default
    ("low", False, {"adapter_effort": "max"}, "max"),
    ("low", False, {"adapter_thinking": "disabled"}, None),
])
def test_compaction_uses_the_adapter_default_effort(header_effort, marked, renderer, expected):
    header = {"config": {**CONFIG, "reasoningEffort": header_effort},
              "adapterDefaults": {"reasoningEffort": True} if marked else {"maxTokens": True}}
    got = json.loads(DeepSeekRenderer(**renderer).render(compaction(header), compaction_instruction="S").body)
    assert got.get("reasoning_effort") == expected
    assert got["thinking"] == {"type": "enabled" if expected else "disabled"}


def test_render_dispatch_and_registry():
    assert ADAPTERS["deepseek"] is DeepSeekRenderer
    cache = {}
    wire = render(request([user("hi")]), renderer_cache=cache)
    assert isinstance(wire, WireRequest) and isinstance(cache["deepseek"], DeepSeekRenderer)
    assert (wire.adapter, wire.method, wire.path) == ("deepseek", "POST", "/chat/completions")
    assert wire.header("Content-Type") == "application/json"
    with pytest.raises(UsageError, match="did you mean 'deepseek'"):
        make_renderer("deepseak")
