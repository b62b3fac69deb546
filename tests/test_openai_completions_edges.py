"""pi-ai ``openai-completions`` rules on values a log can hold but the corpus never shows.

Whole bodies, each checked against pi-ai 0.82.1 run on the same session (a read-only audit ran
its ``dist/`` under Node; the project never needs Node), the rule cited from that source:

- ``reasoning_details``: each tool call's ``thoughtSignature`` is ``JSON.parse``d and the list
  kept ``.filter(Boolean)`` (``openai-completions.js:912-919``): JavaScript truthiness, so ``{}``
  and ``[]`` stay and ``0`` goes;
- a tool's ``description`` is written as it is (``:1049``): ``null`` stays, only an absent key
  disappears from ``JSON.stringify``'s output;
- a signature nested deeper than Python parses is a render error, not a crash.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import dsh_audit
from dsh_audit.errors import RenderError
from dsh_audit.jsjson import stringify
from dsh_audit.testing import LogBuilder, ToolCall
from dsh_audit.wire._openai import OpenAIRenderer
from dsh_audit.wire._piai_facts import PiModel

SYSTEM = "Be brief."
CODER = PiModel(provider="gw", id="coder", api="openai-completions", base_url="http://gateway.local/v1",
                context_window=131072, max_tokens=8192, reasoning=False)
RENDERER = OpenAIRenderer(models={("gw", "coder"): CODER})
HEAD = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Run them."}]
TAIL = {"stream": True, "stream_options": {"include_usage": True}, "store": False, "max_completion_tokens": 8192}


def requests_of(b: LogBuilder, tmp_path: Path) -> list[Any]:
    return list(dsh_audit.requests(dsh_audit.load(b.write_jsonl(tmp_path / "session.jsonl"))))


def signed_calls(signatures: list[str]) -> tuple[LogBuilder, tuple[str, ...]]:
    """One step calling ``bash`` once per signature (pi-ai's envelope signs each tool call),
    then the step after the results."""
    b = LogBuilder(session_id="sig", provider="gw", model="coder", system=SYSTEM, reasoning_effort=None,
                   max_tokens=None, context_window=None)
    with b.turn("Run them."):
        with b.step():
            reply = b.assistant(None, tool_calls=[ToolCall("bash", {"n": i}) for i in range(len(signatures))])
            assert reply.seq is not None
            message = b.event(reply.seq)["data"]["message"]
            message["source"]["replayState"] = {
                "response": {"kind": "pi-ai", "version": 2, "api": "openai-completions", "provider": "gw",
                             "model": "coder", "responseId": "r-1", "stopReason": "toolUse"},
                "blocks": [{"type": "tool-call", "thoughtSignature": s} for s in signatures]}
        for call_id in reply.call_ids:
            b.tool_result(call_id, "ok")
        with b.step():
            b.assistant("Done.")
    return b, reply.call_ids


def test_reasoning_details_keep_javascript_truthy_values(tmp_path: Path) -> None:
    b, ids = signed_calls(["{}", "[]", "0", "{\"x\":1}", "not json"])
    second = requests_of(b, tmp_path)[1]
    calls = [{"id": call_id, "type": "function", "function": {"name": "bash", "arguments": f"{{\"n\":{i}}}"}}
             for i, call_id in enumerate(ids)]
    expected = {"model": "coder", "messages": [
        *HEAD,
        {"role": "assistant", "content": None, "tool_calls": calls, "reasoning_details": [{}, [], {"x": 1}]},
        *[{"role": "tool", "content": "ok", "tool_call_id": call_id} for call_id in ids]], **TAIL,
        "tools": []}  # tool history and no tools: pi-ai sends an empty list (openai-completions.js:550-552)
    assert RENDERER.render(second).body.decode() == stringify(expected)


def test_a_signature_too_deep_to_parse_is_a_render_error(tmp_path: Path) -> None:
    b, _ = signed_calls(["[" * 100_000 + "]" * 100_000])
    second = requests_of(b, tmp_path)[1]
    with pytest.raises(RenderError, match="thought signature nests JSON objects or arrays too deep"):
        RENDERER.render(second)


def test_a_null_tool_description_is_sent_as_null(tmp_path: Path) -> None:
    tools: list[dict[str, Any]] = [{"name": "nd", "description": None, "parameters": {"type": "object", "properties": {}}},
             {"name": "bare", "parameters": {"type": "object", "properties": {}}}]
    b = LogBuilder(session_id="nd", provider="gw", model="coder", system=SYSTEM, reasoning_effort=None,
                   max_tokens=None, context_window=None, tools=tools)
    with b.turn("Run them."):
        with b.step():
            b.assistant("Hello.")
    first = requests_of(b, tmp_path)[0]
    expected = {"model": "coder", "messages": HEAD, **TAIL, "tools": [
        {"type": "function", "function": {"name": "nd", "description": None,
                                          "parameters": {"type": "object", "properties": {}}, "strict": False}},
        {"type": "function", "function": {"name": "bare", "parameters": {"type": "object", "properties": {}},
                                          "strict": False}}]}
    assert RENDERER.render(first).body.decode() == stringify(expected)
