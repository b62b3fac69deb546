"""pi-ai rules the live-pi corpus does not show, second round: whole bodies for small sessions.

Each test builds a small DSH session with :class:`~dsh_audit.testing.LogBuilder`, renders it with
the pi-ai renderers and asserts the exact body bytes pi-ai 0.82.1 sends, the rule cited from its
published ``dist/`` (read, not run: the project never needs Node):

- the installed catalog (``providers/data/anthropic.json``, ``deepseek.json``, ``openrouter.json``)
  for models beyond the corpus's two: adaptive thinking with ``xhigh``, ``supportsTemperature:
  false``, a pinned ``off``, 200k-window budget models, DeepSeek's own route and OpenRouter's
  Anthropic-style cache markers;
- JavaScript's ``trim()`` (not Python's ``strip()``) deciding which blocks are empty;
- the ``ant-ling`` thinking format falling through to ``reasoning_effort`` without an effort;
- a redacted thinking block without a payload, and a tool result's ``isError ?? false``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dsh_audit
from dsh_audit.jsjson import stringify
from dsh_audit.testing import LogBuilder, ToolCall, tool_schema
from dsh_audit.wire._anthropic import AnthropicRenderer
from dsh_audit.wire._openai import OpenAIRenderer
from dsh_audit.wire._piai_facts import PiModel

SYSTEM = "Be brief."
EPHEMERAL = {"type": "ephemeral"}


def requests_of(b: LogBuilder, tmp_path: Path) -> list[Any]:
    return list(dsh_audit.requests(dsh_audit.load(b.write_jsonl(tmp_path / "session.jsonl"))))


def envelope(b: LogBuilder, seq: int, api: str, provider: str, model: str,
             blocks: list[dict[str, Any]] | None = None) -> None:
    """The pi-ai replay envelope DSH writes on ``assistant/message`` ``seq`` (one entry per block;
    a reasoning block signed ``sig`` unless ``blocks`` says otherwise)."""
    message = b.event(seq)["data"]["message"]
    if blocks is None:
        blocks = [{"type": "reasoning", "thinkingSignature": "sig"} if block["type"] == "reasoning"
                  else {"type": block["type"]} for block in message["content"]]
    message["source"]["replayState"] = {
        "response": {"kind": "pi-ai", "version": 2, "api": api, "provider": provider, "model": model,
                     "responseId": f"r-{seq}", "stopReason": "stop"},
        "blocks": blocks}


def one_turn(provider: str, model: str, effort: str | None, temperature: float | None = None) -> LogBuilder:
    b = LogBuilder(session_id="round2", provider=provider, model=model, system=SYSTEM, reasoning_effort=effort,
                   max_tokens=None, context_window=None)
    if temperature is not None:
        b.configure(temperature=temperature)
    with b.turn("Hi."):
        with b.step():
            b.assistant("Hello.")
    return b


# --- the installed catalog: models beyond the corpus's two --------------------------------------

_HI_MARKED = [{"role": "user", "content": [{"type": "text", "text": "Hi.", "cache_control": EPHEMERAL}]}]
_SYSTEM_MARKED = [{"type": "text", "text": SYSTEM, "cache_control": EPHEMERAL}]


def anthropic_body(model: str, max_tokens: int, **tail: Any) -> str:
    return stringify({"model": model, "messages": _HI_MARKED, "max_tokens": max_tokens, "stream": True,
                      "system": _SYSTEM_MARKED, **tail})


def test_catalog_claude_models_beyond_the_corpus(tmp_path: Path) -> None:
    """anthropic.json: opus-4-7 is adaptive with ``xhigh`` and ``supportsTemperature: false``
    (anthropic-messages.js:744 drops the temperature even with thinking disabled), haiku-4-5 is a
    budget model capped at 64000 (simple-options.js:46: ``min(cap + budget, model.maxTokens)``),
    fable-5 pins ``off`` to null (no ``thinking`` field at all, anthropic-messages.js:779), opus-4-6
    maps ``max``."""
    cases = [
        (("claude-opus-4-7", "xhigh", 0.5), anthropic_body(
            "claude-opus-4-7", 128000, thinking={"type": "adaptive", "display": "summarized"},
            output_config={"effort": "xhigh"})),
        (("claude-opus-4-7", None, 0.5), anthropic_body("claude-opus-4-7", 128000, thinking={"type": "disabled"})),
        (("claude-haiku-4-5", "medium", None), anthropic_body(
            "claude-haiku-4-5", 64000, thinking={"type": "enabled", "budget_tokens": 8192, "display": "summarized"})),
        (("claude-haiku-4-5", None, 0.5), anthropic_body(
            "claude-haiku-4-5", 64000, temperature=0.5, thinking={"type": "disabled"})),
        (("claude-fable-5", None, None), anthropic_body("claude-fable-5", 128000)),
        (("claude-opus-4-6", "max", None), anthropic_body(
            "claude-opus-4-6", 128000, thinking={"type": "adaptive", "display": "summarized"},
            output_config={"effort": "max"})),
        (("claude-opus-4-1", "high", None), anthropic_body(
            # 32000-token model: 32000 + 16384 capped to 32000, then the budget stays 16384
            "claude-opus-4-1", 32000, thinking={"type": "enabled", "budget_tokens": 16384, "display": "summarized"})),
    ]
    for index, ((model, effort, temperature), expected) in enumerate(cases):
        request = requests_of(one_turn("anthropic", model, effort, temperature), tmp_path / str(index))[0]
        assert AnthropicRenderer().render(request).body.decode() == expected, (model, effort)


def test_catalog_deepseek_route_over_openai_completions(tmp_path: Path) -> None:
    """deepseek.json: compat ``supportsStore/supportsDeveloperRole: false``, the ``deepseek``
    thinking format and ``reasoning_content`` on every assistant message
    (openai-completions.js:586-595, :924-928); a native DeepSeek turn before the switch is foreign
    (its reasoning becomes text, transform-messages.js:87), a pi-ai turn of the same model keeps its
    reasoning under the field its signature names (:869-875)."""
    b = LogBuilder(session_id="ds", provider="deepseek-official", model="deepseek-v4-pro", system=SYSTEM,
                   reasoning_effort="high", max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            b.assistant("Hello.", reasoning="Think.")
    b.configure(provider="deepseek")
    with b.turn("Again."):
        with b.step():
            seq = b.assistant("Fine.", reasoning="Ponder.").seq
            assert seq is not None
            envelope(b, seq, "openai-completions", "deepseek", "deepseek-v4-pro",
                     [{"type": "reasoning", "thinkingSignature": "reasoning_content"}, {"type": "text"}])
    with b.turn("Third."):
        with b.step():
            b.assistant("Done.")
    request = requests_of(b, tmp_path)[2]
    expected = {"model": "deepseek-v4-pro", "messages": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": "Think.Hello.", "reasoning_content": ""},
        {"role": "user", "content": "Again."},
        {"role": "assistant", "content": "Fine.", "reasoning_content": "Ponder."},
        {"role": "user", "content": "Third."}],
        "stream": True, "stream_options": {"include_usage": True}, "max_completion_tokens": 384000,
        "thinking": {"type": "enabled"}, "reasoning_effort": "high"}
    assert OpenAIRenderer().render(request).body.decode() == stringify(expected)


def test_catalog_openrouter_claude_gets_anthropic_cache_markers(tmp_path: Path) -> None:
    """openrouter.json ``anthropic/claude-sonnet-4.6``: ``cacheControlFormat: anthropic`` puts
    markers on the developer prompt, the last tool and the last text (openai-completions.js:691-757),
    the ``openrouter`` format sends ``reasoning.effort`` (:598-604)."""
    tool = tool_schema("read", "Read a file.", {"path": {"type": "string"}})
    b = LogBuilder(session_id="or", provider="openrouter", model="anthropic/claude-sonnet-4.6", system=SYSTEM,
                   tools=[tool], reasoning_effort="high", max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            b.assistant("Hello.")
    request = requests_of(b, tmp_path)[0]
    expected = {"model": "anthropic/claude-sonnet-4.6", "messages": [
        {"role": "developer", "content": [{"type": "text", "text": SYSTEM, "cache_control": EPHEMERAL}]},
        {"role": "user", "content": [{"type": "text", "text": "Hi.", "cache_control": EPHEMERAL}]}],
        "stream": True, "stream_options": {"include_usage": True}, "store": False, "max_completion_tokens": 128000,
        "tools": [{"type": "function", "function": {"name": "read", "description": "Read a file.",
                                                    "parameters": tool["parameters"], "strict": False},
                   "cache_control": EPHEMERAL}],
        "reasoning": {"effort": "high"}}
    assert OpenAIRenderer().render(request).body.decode() == stringify(expected)


# --- JavaScript's trim() decides which blocks are empty -----------------------------------------


def odd_space_session() -> LogBuilder:
    """A native DeepSeek turn whose reasoning is a lone U+FEFF (JavaScript whitespace, not Python's)
    and whose answer is U+001F (Python whitespace, not JavaScript's), then a prompt of U+0085."""
    b = LogBuilder(session_id="ws", provider="deepseek-official", model="deepseek-v4-pro", system=SYSTEM,
                   reasoning_effort=None, max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            b.assistant("\x1f", reasoning="\ufeff")
    return b


def test_blank_blocks_are_decided_by_javascript_trim_on_anthropic(tmp_path: Path) -> None:
    """transform-messages.js:83 drops the U+FEFF reasoning (``trim()`` empties it);
    anthropic-messages.js:882 keeps the U+001F text and :838 the U+0085 prompt."""
    b = odd_space_session()
    b.configure(provider="anthropic", model="claude-sonnet-4-5")
    with b.turn("\x85"):
        with b.step():
            b.assistant("Ok.")
    request = requests_of(b, tmp_path)[1]
    expected = {"model": "claude-sonnet-4-5", "messages": [
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": [{"type": "text", "text": "\x1f"}]},
        {"role": "user", "content": [{"type": "text", "text": "\x85", "cache_control": EPHEMERAL}]}],
        "max_tokens": 64000, "stream": True, "system": _SYSTEM_MARKED, "thinking": {"type": "disabled"}}
    assert AnthropicRenderer().render(request).body.decode() == stringify(expected)


GATEWAY = PiModel(provider="gw", id="coder", api="openai-completions", base_url="http://gateway.local/v1",
                  context_window=131072, max_tokens=8192, reasoning=True)


def test_blank_blocks_are_decided_by_javascript_trim_on_openai(tmp_path: Path) -> None:
    """openai-completions.js:842 keeps the U+001F text; the U+FEFF reasoning never reaches it."""
    b = odd_space_session()
    b.configure(provider="gw", model="coder")
    with b.turn("Next."):
        with b.step():
            b.assistant("Ok.")
    request = requests_of(b, tmp_path)[1]
    expected = {"model": "coder", "messages": [
        {"role": "developer", "content": SYSTEM}, {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": "\x1f"}, {"role": "user", "content": "Next."}],
        "stream": True, "stream_options": {"include_usage": True}, "store": False, "max_completion_tokens": 8192}
    body = OpenAIRenderer(models={("gw", "coder"): GATEWAY}).render(request).body.decode()
    assert body == stringify(expected)


# --- openai-completions thinking formats ---------------------------------------------------------


def test_ant_ling_format_without_an_effort_falls_through_to_reasoning_effort_off(tmp_path: Path) -> None:
    """openai-completions.js:610 tests the effort in the ``ant-ling`` branch itself, so a call
    without one reaches :636, which sends the ``off`` level's string as ``reasoning_effort``
    (a gateway declaring ``thinkingFormat: ant-ling`` keeps ``supportsReasoningEffort``)."""
    model = PiModel(provider="ling", id="ling-1", api="openai-completions", base_url="http://ling.local/v1",
                    context_window=131072, max_tokens=4096, reasoning=True,
                    thinking_level_map={"off": "none", "high": "deep"}, compat={"thinkingFormat": "ant-ling"})
    renderer = OpenAIRenderer(models={("ling", "ling-1"): model})
    base = {"model": "ling-1", "messages": [{"role": "developer", "content": SYSTEM},
                                            {"role": "user", "content": "Hi."}],
            "stream": True, "stream_options": {"include_usage": True}, "store": False, "max_completion_tokens": 4096}
    off = requests_of(one_turn("ling", "ling-1", None), tmp_path / "off")[0]
    high = requests_of(one_turn("ling", "ling-1", "high"), tmp_path / "high")[0]
    assert renderer.render(off).body.decode() == stringify({**base, "reasoning_effort": "none"})
    assert renderer.render(high).body.decode() == stringify({**base, "reasoning": {"effort": "deep"}})


# --- replay details -------------------------------------------------------------------------------


def redacted_session(is_error: Any, thinking: dict[str, Any]) -> tuple[LogBuilder, str]:
    """A Claude turn with a thinking block (its envelope entry ``thinking``), a tool call answered
    with ``is_error``, and the next step."""
    b = LogBuilder(session_id="red", provider="anthropic", model="claude-sonnet-4-5", system=SYSTEM,
                   reasoning_effort="high", max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            reply = b.assistant(None, reasoning="[Reasoning redacted]", tool_calls=[ToolCall("read", {"path": "a"})])
            assert reply.seq is not None
            envelope(b, reply.seq, "anthropic-messages", "anthropic", "claude-sonnet-4-5",
                     [thinking, {"type": "tool-call"}])
        b.tool_result(reply.call_ids[0], "A.", is_error=is_error)
        with b.step():
            b.assistant("Done.")
    return b, reply.call_ids[0]


def redacted_body(call_id: str, is_error: Any, thinking: dict[str, Any]) -> str:
    return stringify({"model": "claude-sonnet-4-5", "messages": [
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": [thinking,
                                          {"type": "tool_use", "id": call_id, "name": "read", "input": {"path": "a"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "A.",
                                      "is_error": is_error, "cache_control": EPHEMERAL}]}],
        "max_tokens": 64000, "stream": True, "system": _SYSTEM_MARKED,
        "thinking": {"type": "enabled", "budget_tokens": 16384, "display": "summarized"}})


def test_redacted_thinking_without_a_payload_sends_no_data_key(tmp_path: Path) -> None:
    """anthropic-messages.js:891-895 sends ``data: block.thinkingSignature``, which JSON drops when
    the envelope gives none (never ``null``)."""
    b, call_id = redacted_session(False, {"type": "reasoning", "redacted": True})
    request = requests_of(b, tmp_path)[1]
    expected = redacted_body(call_id, False, {"type": "redacted_thinking"})
    assert AnthropicRenderer().render(request).body.decode() == expected


def test_a_tool_results_is_error_is_kept_unless_absent(tmp_path: Path) -> None:
    """DSH ``isError: result.isError ?? false`` (llm-pi-ai ``context.ts``) keeps any logged value
    but null as it is, and anthropic-messages.js:822 passes it on: a damaged log's ``0`` stays 0."""
    b, call_id = redacted_session(0, {"type": "reasoning", "thinkingSignature": "sig"})
    request = requests_of(b, tmp_path)[1]
    signed = {"type": "thinking", "thinking": "[Reasoning redacted]", "signature": "sig"}
    assert AnthropicRenderer().render(request).body.decode() == redacted_body(call_id, 0, signed)
