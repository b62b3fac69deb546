"""Route facts the log proves on its own, and the Anthropic tool description as it is.

Whole bodies, each checked against DSH's conversion and pi-ai 0.82.1 run on the same session (a
read-only audit ran both under Node; the project never needs Node):

- a header with ``adapterDefaults.maxTokens: true`` got its ``maxTokens`` from the route's model
  entry, which DSH also made the model's cap (``llm-pi-ai/src/catalog.ts:875-881``,
  ``adapter.ts:268-275``); pi-ai's budget clamp reads that cap (``simple-options.js:46``), so the
  body is rebuilt right without the route file;
- ``anthropic-messages.js:1007`` writes a tool's ``description`` as it is: ``null`` stays.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dsh_audit
from dsh_audit.jsjson import stringify
from dsh_audit.testing import LogBuilder
from dsh_audit.wire._anthropic import AnthropicRenderer

SYSTEM = "Be brief."
EPHEMERAL = {"type": "ephemeral"}
MESSAGES = [{"role": "user", "content": [{"type": "text", "text": "Hi.", "cache_control": EPHEMERAL}]}]
SYSTEM_BLOCKS = [{"type": "text", "text": SYSTEM, "cache_control": EPHEMERAL}]


def first_request(tmp_path: Path, **options: Any) -> Any:
    b = LogBuilder(session_id="facts", provider="anthropic", model="claude-sonnet-4-5", system=SYSTEM,
                   context_window=None, **options)
    with b.turn("Hi."):
        with b.step():
            b.assistant("Hello.")
    return next(iter(dsh_audit.requests(dsh_audit.load(b.write_jsonl(tmp_path / "session.jsonl")))))


def test_a_route_configured_cap_is_read_from_the_header(tmp_path: Path) -> None:
    configured = first_request(tmp_path / "configured", reasoning_effort="high", max_tokens=8000,
                               adapter_defaults={"maxTokens": True})
    assert AnthropicRenderer().render(configured).body.decode() == stringify({
        "model": "claude-sonnet-4-5", "messages": MESSAGES, "max_tokens": 8000, "stream": True,
        "system": SYSTEM_BLOCKS, "thinking": {"type": "enabled", "budget_tokens": 6976, "display": "summarized"}})
    # The same maxTokens chosen for the call (no adapterDefaults marker) leaves the catalog's
    # 64000 cap: 8000 + the 16384 budget.
    chosen = first_request(tmp_path / "chosen", reasoning_effort="high", max_tokens=8000)
    assert AnthropicRenderer().render(chosen).body.decode() == stringify({
        "model": "claude-sonnet-4-5", "messages": MESSAGES, "max_tokens": 24384, "stream": True,
        "system": SYSTEM_BLOCKS, "thinking": {"type": "enabled", "budget_tokens": 16384, "display": "summarized"}})


def test_a_null_tool_description_is_sent_as_null(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    tools: list[dict[str, Any]] = [{"name": "nd", "description": None, "parameters": schema},
                                   {"name": "bare", "parameters": schema}]
    request = first_request(tmp_path, reasoning_effort=None, max_tokens=None, tools=tools)
    body = AnthropicRenderer().render(request).body.decode()
    assert body == stringify({
        "model": "claude-sonnet-4-5", "messages": MESSAGES, "max_tokens": 64000, "stream": True,
        "system": SYSTEM_BLOCKS,
        "tools": [{"name": "nd", "description": None, "eager_input_streaming": True, "input_schema": schema},
                  {"name": "bare", "eager_input_streaming": True, "input_schema": schema,
                   "cache_control": EPHEMERAL}],
        "thinking": {"type": "disabled"}})
