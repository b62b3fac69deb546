"""The pi-ai renderers' folded conversion gives the bodies a fresh renderer gives; deep schemas.

A pi-ai renderer keeps the last loop request's conversion (DSH's context conversion, pi-ai's
``transformMessages`` and the adapter's ``convertMessages``) and each message's, so the next
request of the same fold generation converts only its new messages, and its body holds the
history's converted messages as the same objects (which the prompt-cache accounting reuses).
Here every request of sessions with prunes, a compaction, model and route switches, orphaned
calls and images is rendered by one renderer in log order, in reverse order and twice, and each
whole body is compared with a fresh renderer's. Speed lives in ``benchmarks/bench_piai.py``.

The depth checks: a DSH log whose tool schema nests 505 levels (inside the reader's 512) goes
through ``cache``, ``usage`` and ``redact`` on the Anthropic route without a recursion error.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import dsh_audit
from dsh_audit.cache._retention_body import LONG, blank_long, retention_body
from dsh_audit.cache._rule_data import rule_for
from dsh_audit.jsjson import stringify_bytes
from dsh_audit.testing import LogBuilder, ToolCall
from dsh_audit.wire import without_cache_markers
from dsh_audit.wire._anthropic import AnthropicRenderer
from dsh_audit.wire._openai import OpenAIRenderer
from dsh_audit.wire._piai_facts import PiModel

from _cli import invoke

INSTRUCTION = "Summarise the conversation so far."
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
TOOLS = [{"name": name, "description": f"The {name} tool.", "parameters": SCHEMA} for name in ("read", "bash")]
LOCAL = PiModel(provider="local-openai", id="local-coder", api="openai-completions",
                base_url="http://127.0.0.1:18302/v1", context_window=131072, max_tokens=8192, reasoning=True,
                thinking_level_map={"off": None, "high": "high"})
#: The same route with the compat switches whose conversion looks at neighbouring messages.
STRICT = PiModel(provider="local-openai", id="local-coder", api="openai-completions",
                 base_url="http://127.0.0.1:18302/v1", context_window=131072, max_tokens=8192, reasoning=True,
                 input=("text", "image"),
                 compat={"cacheControlFormat": "anthropic", "requiresAssistantAfterToolResult": True,
                         "requiresToolResultName": True, "requiresThinkingAsText": True})


def _envelope(b: LogBuilder, seq: int, api: str, provider: str, model: str, kinds: list[str]) -> None:
    """Give the assistant message at ``seq`` pi-ai's replay envelope (signed thinking)."""
    blocks = [{"type": k, "thinkingSignature": f"sig-{seq}"} if k == "reasoning" else {"type": k} for k in kinds]
    b.event(seq)["data"]["message"]["source"]["replayState"] = {
        "response": {"kind": "pi-ai", "version": 2, "api": api, "provider": provider, "model": model,
                     "stopReason": "toolUse" if "tool-call" in kinds else "stop"},
        "blocks": blocks}


def _turn(b: LogBuilder, n: int, api: str, provider: str, model: str, *, native: bool = True,
          calls: int = 1, answer: bool = True) -> list[int]:
    """One turn: a reply with reasoning, text and ``calls`` tool calls, their results, an answer.
    Returns the tool results' seqs."""
    results = []
    with b.turn(f"Turn {n}: look at the files." + (" " + "long " * 40 if n % 3 == 0 else "")):
        with b.step():
            reply = b.assistant(f"Reading {calls} files.", reasoning=f"I will read them ({n}).",
                                tool_calls=[ToolCall("read" if i % 2 == 0 else "bash", {"path": f"f{n}-{i}.py"})
                                            for i in range(calls)])
            if native:
                _envelope(b, reply.seq, api, provider, model, ["reasoning", "text", *["tool-call"] * calls])
            for i, call_id in enumerate(reply.call_ids):
                results.append(b.tool_result(call_id, f"contents of f{n}-{i}.py\n" + "x = 1\n" * (n + i),
                                             is_error=i == 1))
        if answer:
            with b.step():
                reply = b.assistant(f"Done with turn {n}.", reasoning="" if n % 2 else f"Summing up {n}.")
                if native:
                    _envelope(b, reply.seq, api, provider, model, ["reasoning", "text"] if n % 2 == 0 else
                              ["text"])
    return results


def _anthropic_log(path: Path) -> Path:
    """Anthropic route: native and foreign replies, parallel calls, a prune, a title, a compaction,
    a model switch, a DeepSeek turn in between and a return to Anthropic."""
    api, provider = "anthropic-messages", "anthropic"
    b = LogBuilder(session_id="fold-anthropic", provider=provider, model="claude-sonnet-4-5",
                   system="You are careful.", tools=TOOLS)
    results = []
    for n in range(4):
        results += _turn(b, n, api, provider, "claude-sonnet-4-5", native=n != 1, calls=1 + n % 3)
    b.title("Reading files")
    b.prune(results[1])
    for n in range(4, 6):
        _turn(b, n, api, provider, "claude-sonnet-4-5", calls=2)
    b.compaction("The user had files read.", keep=2)
    _turn(b, 6, api, provider, "claude-sonnet-4-5")
    b.configure(model="claude-sonnet-4-6")
    _turn(b, 7, api, provider, "claude-sonnet-4-6", calls=2)
    b.configure(provider="deepseek", model="deepseek-chat")
    _turn(b, 8, api, provider, "deepseek-chat", native=False)
    b.configure(provider="anthropic", model="claude-sonnet-4-5")
    for n in range(9, 11):
        _turn(b, n, api, provider, "claude-sonnet-4-5", calls=3, answer=n == 10)
    return b.write_jsonl(path)


def _openai_log(path: Path) -> Path:
    api, provider = "openai-completions", "local-openai"
    b = LogBuilder(session_id="fold-openai", provider=provider, model="local-coder", system="Be brief.",
                   tools=TOOLS, context_window=131072)
    results = []
    for n in range(5):
        results += _turn(b, n, api, provider, "local-coder", native=n != 2, calls=1 + n % 3, answer=n != 3)
    b.prune(results[0])
    for n in range(5, 8):
        _turn(b, n, api, provider, "local-coder", calls=2)
    # The last tool result outlives its call: its toolName is "unknown" from here on.
    b.compaction("Files were read.", keep=2)
    _turn(b, 8, api, provider, "local-coder")
    return b.write_jsonl(path)


def _bodies(renderer: Any, requests: list[Any]) -> list[bytes]:
    return [renderer.render(r, compaction_instruction=INSTRUCTION).body for r in requests]


def _check_folded(make: Any, log: Path, kinds: dict[str, int]) -> None:
    requests = [r for r in dsh_audit.requests(dsh_audit.load(log))
                if (r.header or {}).get("config", {}).get("provider") != "deepseek"]
    assert {k: sum(r.kind == k for r in requests) for k in kinds} == kinds
    fresh = [make().render(r, compaction_instruction=INSTRUCTION).body for r in requests]
    shared = make()
    assert _bodies(shared, requests) == fresh  # in log order: each request extends the last
    assert _bodies(shared, requests) == fresh  # again: every request starts a new fold
    assert _bodies(shared, requests[::-1]) == fresh[::-1]
    mixed = make()  # two sessions' worth of requests interleaved
    assert [mixed.render(r, compaction_instruction=INSTRUCTION).body for pair in zip(requests, requests[1:])
            for r in pair] == [b for pair in zip(fresh, fresh[1:]) for b in pair]


def test_anthropic_bodies_are_a_fresh_renderers(tmp_path):
    log = _anthropic_log(tmp_path / "a.jsonl")
    _check_folded(AnthropicRenderer, log, {"loop": 19, "title": 1, "compaction": 1})
    _check_folded(lambda: AnthropicRenderer(cache_retention="long"), log, {"loop": 19, "title": 1, "compaction": 1})
    _check_folded(lambda: AnthropicRenderer(cache_retention="none"), log, {"loop": 19, "title": 1, "compaction": 1})
    _check_folded(lambda: AnthropicRenderer(owned_routes=frozenset({"deepseek"})), log,
                  {"loop": 19, "title": 1, "compaction": 1})


@pytest.mark.parametrize("model", [LOCAL, STRICT], ids=["local", "strict-compat"])
def test_openai_bodies_are_a_fresh_renderers(tmp_path, model):
    log = _openai_log(tmp_path / "o.jsonl")
    models = {("local-openai", "local-coder"): model}
    _check_folded(lambda: OpenAIRenderer(models=models), log, {"loop": 17, "compaction": 1})


def test_history_messages_are_the_same_objects_in_consecutive_bodies(tmp_path):
    log = _anthropic_log(tmp_path / "a.jsonl")
    requests = [r for r in dsh_audit.requests(dsh_audit.load(log)) if r.kind == "loop"][:4]
    renderer = AnthropicRenderer()
    first, second = (renderer.body_value(r) for r in requests[2:4])
    assert len(first["messages"]) == 5 and len(second["messages"]) == 7
    # All but the last (which carries the moving cache marker) are the earlier body's own objects.
    assert [a is b for a, b in zip(first["messages"], second["messages"])] == [True] * 4 + [False]
    assert first["messages"][-1]["content"] == [{"type": "text", "text": "Turn 1: look at the files.",
                                                 "cache_control": {"type": "ephemeral"}}]
    assert second["messages"][4] == {"role": "user", "content": "Turn 1: look at the files."}  # never marked
    assert stringify_bytes(first) == AnthropicRenderer().render(requests[2]).body


def test_a_request_with_an_image_is_rendered_whole(tmp_path):
    b = LogBuilder(session_id="img", provider="anthropic", model="claude-sonnet-4-5", tools=TOOLS)
    _turn(b, 0, "anthropic-messages", "anthropic", "claude-sonnet-4-5")
    image = {"type": "image", "attachment": {"attachmentId": "a1", "mediaType": "image/png", "bytes": 4}}
    with b.turn([{"type": "text", "text": "Look:"}, image]):
        with b.step():
            b.assistant("A picture.")
    _turn(b, 2, "anthropic-messages", "anthropic", "claude-sonnet-4-5")
    requests = [r for r in dsh_audit.requests(dsh_audit.load(b.write_jsonl(tmp_path / "i.jsonl")))]
    images = {"a1": b"\x89PNG"}
    fresh = [AnthropicRenderer().render(r, images=images).body for r in requests]
    shared = AnthropicRenderer()
    assert [shared.render(r, images=images).body for r in requests] == fresh
    assert fresh[3].count(b'"type":"image"') == 1


def test_retention_body_reads_as_the_whole_body():
    rule = rule_for("anthropic", "claude-sonnet-4-5")
    openai = rule_for("openai", "gpt-4o")
    marked = {"type": "ephemeral", "ttl": "1h"}
    bodies = [
        {"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "x" * LONG,
                                                                  "cache_control": marked}]}], "stream": True},
        {"model": "m", "messages": [{"role": "user", "content": "hi"}], "system": [{"type": "text", "text": "s"}]},
        {"model": "m", "messages": [{"role": "assistant", "content": [{"type": "tool_use", "input": {
            "cache_control": {"a": {"b": 1}}, "prompt_cache_retention": "24h"}}]}]},
        {"model": "m", "messages": [{"role": "user", "content": "\ud800"}], "prompt_cache_retention": "24h"},
        {"model": "m", "messages": [], "prompt_cache_retention": "24h"},
        {"messages": [{"role": "user", "content": "hi", "cache_control": marked}], "model": "m"},
    ]
    for body in bodies:
        whole = stringify_bytes(blank_long(body))
        assert rule.retention(retention_body(body)) == rule.retention(whole)
        assert openai.retention(retention_body(body)) == openai.retention(whole)
    assert retention_body(bodies[0]) == b'{"model":"m","messages":[{"cache_control":{"type":"ephemeral","ttl":"1h"}}],' \
                                        b'"stream":true}'
    assert retention_body(bodies[3]) == stringify_bytes(bodies[3])  # a lone surrogate: written whole


# --- depth -----------------------------------------------------------------------------------

REPEATS = 252  # '{"type":"object","properties":{"x":' twice per repeat: the schema nests 505 levels


def _deep_log(path: Path) -> Path:
    deep = '{"type":"object","properties":{"x":' * REPEATS + '{"type":"string"}' + "}}" * REPEATS
    b = LogBuilder(session_id="deep", provider="anthropic", model="claude-sonnet-4-5",
                   tools=[{"name": "deep", "description": "d", "parameters": "DEEP-SCHEMA"}])
    for n in range(2):
        with b.turn(f"turn {n}"):
            with b.step():
                reply = b.assistant("x", tool_calls=[ToolCall("deep", {"x": 1})])
                b.tool_result(reply.call_ids[0], "ok")
    text = "".join(line + "\n" for line in b.lines(packed=False)).replace('"DEEP-SCHEMA"', deep)
    path.write_text(text, encoding="utf-8")
    return path


def _depth(value: Any) -> int:
    depth, level = 0, [value]
    while level:
        depth += 1
        level = [v for item in level if isinstance(item, (dict, list))
                 for v in (item.values() if isinstance(item, dict) else item)]
    return depth - 1  # the last level holds no container


def test_deep_tool_schema_is_walked_without_recursion(tmp_path):
    log = _deep_log(tmp_path / "deep.jsonl")
    header = next(json.loads(line) for line in log.read_text().splitlines() if '"request/header"' in line)
    assert _depth(header["data"]["header"]["tools"][0]["parameters"]) == 505
    body = AnthropicRenderer().body_value(dsh_audit.requests(dsh_audit.load(log))[1])
    written = stringify_bytes(body)
    assert written.count(b',"cache_control":{"type":"ephemeral"}') == 3
    assert stringify_bytes(without_cache_markers(body)) == written.replace(b',"cache_control":{"type":"ephemeral"}', b"")
    assert stringify_bytes(blank_long(body)) == written
    rule = rule_for("anthropic", "claude-sonnet-4-5")
    assert rule.retention(retention_body(body)) == rule.retention(written)


def test_deep_tool_schema_passes_cache_usage_and_redact(tmp_path, monkeypatch, capsys):
    log = _deep_log(tmp_path / "deep.jsonl")
    code, out, err = invoke(monkeypatch, capsys, "cache", str(log), "--json")
    assert (code, err) == (0, [])
    timeline = [{k: row[k] for k in ("index", "prompt_tokens", "counted_tokens", "classification", "prompt_source")}
                for row in json.loads(out)["timeline"]]
    assert timeline == [
        {"index": 0, "prompt_tokens": 132, "counted_tokens": 2402, "classification": "below_minimum",
         "prompt_source": "wire:anthropic"},
        {"index": 1, "prompt_tokens": 324, "counted_tokens": 2480, "classification": "below_minimum",
         "prompt_source": "wire:anthropic"}]
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--json")
    assert (code, err) == (0, [])
    assert json.loads(out)["totals"]["tokens"] == {"cache_miss": 456, "cache_read": 0, "cache_write": 0, "output": 62,
                                                  "reasoning": 0, "total": 518}
    copy = tmp_path / "redacted.jsonl"
    code, out, err = invoke(monkeypatch, capsys, "redact", str(log), "-o", str(copy))
    assert code == 0 and "Traceback" not in out
    code, out, err = invoke(monkeypatch, capsys, "redact", "--check", str(copy))
    assert code == 0


def test_tool_call_arguments_too_deep_to_parse_are_refused_not_a_crash(tmp_path, monkeypatch, capsys):
    b = LogBuilder(session_id="args", provider="anthropic", model="claude-sonnet-4-5")
    for n in range(2):
        with b.turn(f"turn {n}"):
            with b.step():
                reply = b.assistant("x", tool_calls=[ToolCall("read", {"x": "ARGS"})])
                b.tool_result(reply.call_ids[0], "ok")
    deep = '{\\"a\\":' * 1200 + "1" + "}" * 1200  # a JSON string in the log: the reader's limit is not met
    text = "".join(line + "\n" for line in b.lines(packed=False)).replace('{\\"x\\": \\"ARGS\\"}', deep)
    log = tmp_path / "args.jsonl"
    log.write_text(text, encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "cache", str(log), "--json")
    assert (code, err) == (0, [])
    assert [row["prompt_source"] for row in json.loads(out)["timeline"]] == ["wire:anthropic", "json"]
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "1", "--adapter", "anthropic")
    assert (code, out) == (2, "")
    assert err == [f"error: {log}:18 seq 16: a tool call's arguments nest JSON objects or arrays too deep for "
                   "dsh-audit to parse; DSH's JSON.parse reads them, so the body it sent cannot be rebuilt (hint: "
                   "the request is compared as log JSON where a view needs its prompt)"]
