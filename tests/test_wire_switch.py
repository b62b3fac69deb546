"""Sessions that switch provider or model, and a small context window: whole bodies, per route.

Each session is built with :class:`~dsh_audit.testing.LogBuilder`, opened through the trunk
(:func:`dsh_audit.session.open_session`) and rendered through :func:`route_renderer`, so every
request goes out by the route its own header and the log's replay envelopes give it. Expected
bodies are written out by hand from the rules of ``corpus/live-pi/README.md`` ("What the captures
show"); the clamp numbers are computed here from pi-ai's estimate rule (characters / 4, rounded up
per message, plus the system prompt and the tools' JSON), not by the code under test.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from dsh_audit.jsjson import stringify
from dsh_audit.session import Session, open_session, route_renderer
from dsh_audit.testing import LogBuilder, ToolCall, tool_schema
from dsh_audit.testing._maintenance import CHECKPOINT_PREAMBLE

SYSTEM = "You are a helpful coding agent."
READ = tool_schema("read", "Read a file.", {"path": {"type": "string"}})
EPHEMERAL = {"type": "ephemeral"}
#: The Anthropic form of READ: schema rebuilt as {type, properties, required}, eager streaming,
#: and the tools' cache breakpoint on the last (only) tool.
ANTHROPIC_TOOLS = [{"name": "read", "description": "Read a file.", "eager_input_streaming": True,
                    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}},
                                     "required": ["path"]},
                    "cache_control": EPHEMERAL}]
ANTHROPIC_SYSTEM = [{"type": "text", "text": SYSTEM, "cache_control": EPHEMERAL}]
BUDGET_HIGH = {"type": "enabled", "budget_tokens": 16384, "display": "summarized"}
DEEPSEEK_TOOLS = [{"type": "function", "function": READ}]


def claude_reply(b: LogBuilder, model: str, signature: str, *args: Any, **kwargs: Any) -> Any:
    """An assistant reply through pi-ai's Anthropic route, with the replay envelope DSH writes on
    ``assistant/message.source`` (as in live-pi/c1: one entry per block, the thinking signature on
    the reasoning block)."""
    reply = b.assistant(*args, **kwargs)
    message = b.event(reply.seq)["data"]["message"]
    blocks = [{"type": "reasoning", "thinkingSignature": signature} if block["type"] == "reasoning"
              else {"type": block["type"]} for block in message["content"]]
    stop = "toolUse" if any(block["type"] == "tool-call" for block in message["content"]) else "stop"
    message["source"]["replayState"] = {
        "response": {"kind": "pi-ai", "version": 2, "api": "anthropic-messages", "provider": "anthropic",
                     "model": model, "responseId": f"msg_fake_{reply.seq}", "stopReason": stop},
        "blocks": blocks}
    return reply


def rendered(b: LogBuilder, tmp_path: Path, **options: Any) -> tuple[Session, list[tuple[Any, str, dict[str, Any]]]]:
    """(session, [(request, adapter, body)]) for every request, each through its own route."""
    session = open_session(b.write_jsonl(tmp_path / "session.jsonl"))
    run = route_renderer([session])
    out = []
    for request in session.requests:
        body = run(request, dict(options) if request.kind == "compaction" else {})
        out.append((request, session.route(request).adapter, body))
    return session, out


def same_bytes(body: bytes, expected: dict[str, Any]) -> None:
    assert body.decode() == stringify(expected), json.dumps(json.loads(body), indent=1)


# --- (a) DeepSeek -> Claude -> DeepSeek ------------------------------------------------------

DS_ARGS = '{"path": "notes.md"}'  # as a DeepSeek model streams it: spaces kept by the native adapter
CLAUDE_ARGS = '{"path":"b.txt"}'  # as DSH logs a pi-ai call: parsed and re-serialised, compact


def deepseek_opening(session_id: str) -> LogBuilder:
    """A session's first turn on native DeepSeek: a tool call, its result and the answer."""
    b = LogBuilder(session_id=session_id, provider="deepseek-official", model="deepseek-v4-pro", system=SYSTEM,
                   tools=[READ], reasoning_effort="high", max_tokens=None)
    with b.turn("Read notes.md."):
        with b.step():
            reply = b.assistant(None, reasoning="Read notes.md.",
                                tool_calls=[ToolCall("read", DS_ARGS, id="call_00_a1b2c3")])
            b.tool_result(reply.call_ids[0], "hi")
        with b.step():
            b.assistant("Notes say hi.", reasoning="Answer now.")
    return b


def deepseek_claude_deepseek() -> LogBuilder:
    b = deepseek_opening("switch-a")
    b.configure(provider="anthropic", model="claude-sonnet-4-5")
    with b.turn("Now b.txt."):
        with b.step():
            reply = claude_reply(b, "claude-sonnet-4-5", "sig_claude_1", "Reading b.txt.",
                                 reasoning="Claude reads b.", tool_calls=[ToolCall("read", CLAUDE_ARGS,
                                                                                   id="toolu_fake_01")])
            b.tool_result(reply.call_ids[0], "bee")
        with b.step():
            claude_reply(b, "claude-sonnet-4-5", "sig_claude_2", "B says bee.", reasoning="Done with b.")
    b.configure(provider="deepseek-official", model="deepseek-v4-pro")
    with b.turn("Thanks."):
        with b.step():
            b.assistant("You're welcome.")
    return b


def test_deepseek_to_claude_and_back_renders_every_body_by_its_route(tmp_path: Path) -> None:
    _, bodies = rendered(deepseek_claude_deepseek(), tmp_path)
    loops = [(adapter, body) for request, adapter, body in bodies if request.kind == "loop"]
    assert [adapter for adapter, _ in loops] == ["deepseek", "deepseek", "anthropic", "anthropic", "deepseek"]

    ds_turn1 = [
        {"role": "user", "content": "Read notes.md."},
        {"role": "assistant", "content": "", "reasoning_content": "Read notes.md.",
         "tool_calls": [{"id": "call_00_a1b2c3", "type": "function",
                         "function": {"name": "read", "arguments": DS_ARGS}}]},
        {"role": "tool", "tool_call_id": "call_00_a1b2c3", "content": "hi"},
        {"role": "assistant", "content": "Notes say hi.", "reasoning_content": "Answer now."},
    ]

    def deepseek(messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {"model": "deepseek-v4-pro", "messages": [{"role": "system", "content": SYSTEM}, *messages],
                "stream": True, "stream_options": {"include_usage": True}, "thinking": {"type": "enabled"},
                "reasoning_effort": "high", "tools": DEEPSEEK_TOOLS}

    same_bytes(loops[0][1], deepseek(ds_turn1[:1]))
    same_bytes(loops[1][1], deepseek(ds_turn1[:3]))

    # Claude after DeepSeek: the foreign reasoning_content is a leading plain text block, the
    # call_00_ id passes through, the DeepSeek arguments are re-serialised compact as `input`.
    foreign = [
        {"role": "user", "content": "Read notes.md."},
        {"role": "assistant", "content": [
            {"type": "text", "text": "Read notes.md."},
            {"type": "tool_use", "id": "call_00_a1b2c3", "name": "read", "input": {"path": "notes.md"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_00_a1b2c3", "content": "hi",
                                      "is_error": False}]},
        {"role": "assistant", "content": [{"type": "text", "text": "Answer now."},
                                          {"type": "text", "text": "Notes say hi."}]},
    ]

    def anthropic(messages: list[dict[str, Any]]) -> dict[str, Any]:
        return {"model": "claude-sonnet-4-5", "messages": messages, "max_tokens": 64000, "stream": True,
                "system": ANTHROPIC_SYSTEM, "tools": ANTHROPIC_TOOLS, "thinking": BUDGET_HIGH}

    same_bytes(loops[2][1], anthropic([
        *foreign, {"role": "user", "content": [{"type": "text", "text": "Now b.txt.", "cache_control": EPHEMERAL}]}]))
    # Its own turn: the same model, so thinking goes back with its replayState signature.
    same_bytes(loops[3][1], anthropic([
        *foreign, {"role": "user", "content": "Now b.txt."},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Claude reads b.", "signature": "sig_claude_1"},
            {"type": "text", "text": "Reading b.txt."},
            {"type": "tool_use", "id": "toolu_fake_01", "name": "read", "input": {"path": "b.txt"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_fake_01", "content": "bee",
                                      "is_error": False, "cache_control": EPHEMERAL}]}]))

    # DeepSeek after Claude: reasoning_content from the thinking text, no signature anywhere,
    # toolu_ id and pi-ai's compact arguments kept.
    body = loops[4][1]
    assert b"sig_claude" not in body
    same_bytes(body, deepseek([
        *ds_turn1,
        {"role": "user", "content": "Now b.txt."},
        {"role": "assistant", "content": "Reading b.txt.", "reasoning_content": "Claude reads b.",
         "tool_calls": [{"id": "toolu_fake_01", "type": "function",
                         "function": {"name": "read", "arguments": CLAUDE_ARGS}}]},
        {"role": "tool", "tool_call_id": "toolu_fake_01", "content": "bee"},
        {"role": "assistant", "content": "B says bee.", "reasoning_content": "Done with b."},
        {"role": "user", "content": "Thanks."}]))


def test_a_tool_id_outside_the_anthropic_alphabet_is_rewritten_in_call_and_result(tmp_path: Path) -> None:
    b = LogBuilder(session_id="switch-ids", provider="deepseek-official", model="deepseek-v4-pro", system=SYSTEM,
                   tools=[READ], reasoning_effort="high", max_tokens=None)
    with b.turn("Go."):
        with b.step():
            reply = b.assistant(None, tool_calls=[ToolCall("read", DS_ARGS, id="call:7.x")])
            b.tool_result(reply.call_ids[0], "hi")
    b.configure(provider="anthropic", model="claude-sonnet-4-5")
    with b.turn("Next."):
        with b.step():
            claude_reply(b, "claude-sonnet-4-5", "sig", "Ok.")
    _, bodies = rendered(b, tmp_path)
    body = json.loads(next(body for request, adapter, body in bodies if adapter == "anthropic"))
    assert body["messages"][1]["content"] == [{"type": "tool_use", "id": "call_7_x", "name": "read",
                                               "input": {"path": "notes.md"}}]
    assert body["messages"][2]["content"][0]["tool_use_id"] == "call_7_x"


# --- (b) Claude 4.5 -> 4.6 on the same route --------------------------------------------------


def test_claude_45_to_46_turns_earlier_thinking_into_text(tmp_path: Path) -> None:
    b = LogBuilder(session_id="switch-b", provider="anthropic", model="claude-sonnet-4-5", system=SYSTEM,
                   tools=[READ], reasoning_effort="high", max_tokens=None)
    with b.turn("Read a.txt."):
        with b.step():
            reply = claude_reply(b, "claude-sonnet-4-5", "sig45", None, reasoning="Read a first.",
                                 tool_calls=[ToolCall("read", '{"path":"a.txt"}', id="toolu_fake_a")])
            b.tool_result(reply.call_ids[0], "aaa")
        with b.step():
            claude_reply(b, "claude-sonnet-4-5", "sig45b", "A says aaa.", reasoning="Report it.")
    b.configure(model="claude-sonnet-4-6", reasoning_effort="max")
    with b.turn("Again."):
        with b.step():
            reply = claude_reply(b, "claude-sonnet-4-6", "sig46", None, reasoning="Read again.",
                                 tool_calls=[ToolCall("read", '{"path":"a.txt"}', id="toolu_fake_b")])
            b.tool_result(reply.call_ids[0], "aaa")
        with b.step():
            claude_reply(b, "claude-sonnet-4-6", "sig46b", "Still aaa.")
    _, bodies = rendered(b, tmp_path)
    loops = [body for request, adapter, body in bodies if request.kind == "loop" and adapter == "anthropic"]
    assert len(loops) == 4

    user1 = {"role": "user", "content": "Read a.txt."}
    call_a = {"type": "tool_use", "id": "toolu_fake_a", "name": "read", "input": {"path": "a.txt"}}
    result_a = {"type": "tool_result", "tool_use_id": "toolu_fake_a", "content": "aaa", "is_error": False}
    tail = {"system": ANTHROPIC_SYSTEM, "tools": ANTHROPIC_TOOLS}

    # 4.5 history under 4.5: {type: thinking, thinking, signature} from replayState.
    same_bytes(loops[1], {"model": "claude-sonnet-4-5", "messages": [
        user1, {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Read a first.", "signature": "sig45"}, call_a]},
        {"role": "user", "content": [{**result_a, "cache_control": EPHEMERAL}]}],
        "max_tokens": 64000, "stream": True, **tail, "thinking": BUDGET_HIGH})

    # 4.5 history under 4.6: plain text blocks, no signature; 4.6's own turn keeps its signature.
    history45 = [user1, {"role": "assistant", "content": [{"type": "text", "text": "Read a first."}, call_a]},
                 {"role": "user", "content": [result_a]},
                 {"role": "assistant", "content": [{"type": "text", "text": "Report it."},
                                                   {"type": "text", "text": "A says aaa."}]}]
    adaptive = {"thinking": {"type": "adaptive", "display": "summarized"}, "output_config": {"effort": "max"}}
    same_bytes(loops[2], {"model": "claude-sonnet-4-6", "messages": [
        *history45, {"role": "user", "content": [{"type": "text", "text": "Again.", "cache_control": EPHEMERAL}]}],
        "max_tokens": 128000, "stream": True, **tail, **adaptive})
    same_bytes(loops[3], {"model": "claude-sonnet-4-6", "messages": [
        *history45, {"role": "user", "content": "Again."},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Read again.", "signature": "sig46"},
            {"type": "tool_use", "id": "toolu_fake_b", "name": "read", "input": {"path": "a.txt"}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_fake_b", "content": "aaa",
                                      "is_error": False, "cache_control": EPHEMERAL}]}],
        "max_tokens": 128000, "stream": True, **tail, **adaptive})
    assert b"sig45" not in loops[2] + loops[3]


# --- (c) a 16000-token context window --------------------------------------------------------


def tokens(text: str) -> int:
    """pi-ai's estimate of one message or prompt piece: characters / 4, rounded up."""
    return math.ceil(len(text) / 4)


#: The fixed part of every estimate: the system prompt and the tools as pi-ai's context holds them.
FIXED = tokens(SYSTEM) + tokens(json.dumps([READ], separators=(",", ":")))
RESULT = "x" * 6000  # each tool result: 1500 tokens


def small_window(context_window: int | None) -> tuple[LogBuilder, list[tuple[str, int]]]:
    """A claude-sonnet-4-5 session whose history grows by one read per step, then a compaction
    and a turn after it. Returns the builder and (kind, estimate) of each request, by hand."""
    b = LogBuilder(session_id="small", provider="anthropic", model="claude-sonnet-4-5", system=SYSTEM,
                   tools=[READ], reasoning_effort="high", max_tokens=None, context_window=context_window)
    estimates = []
    history = tokens("Read them all.")
    with b.turn("Read them all."):
        for step in range(8):
            with b.step():
                estimates.append(FIXED + history)
                name = f"f{step}.txt"
                args = '{"path":"' + name + '"}'
                reply = claude_reply(b, "claude-sonnet-4-5", f"sig{step}", None, reasoning="Next file.",
                                     tool_calls=[ToolCall("read", args, id=f"toolu_fake_{step}")])
                b.tool_result(reply.call_ids[0], RESULT)
            # the assistant message: thinking + tool name + arguments; then the tool result
            history += tokens("Next file." + "read" + args) + tokens(RESULT)
        with b.step():
            estimates.append(FIXED + history)
            claude_reply(b, "claude-sonnet-4-5", "sig-end", "All read.", reasoning="Sum up.")
        history += tokens("Sum up." + "All read.")
    compaction_estimate = FIXED + history + tokens("Summarise.")
    b.compaction("They are all x.")
    with b.turn("And now?"):
        with b.step():
            checkpoint = CHECKPOINT_PREAMBLE + "\n\n<compacted-summary>" + "They are all x." + "</compacted-summary>"
            estimates.append(FIXED + tokens(checkpoint) + tokens("And now?"))
            claude_reply(b, "claude-sonnet-4-5", "sig-after", "Nothing left.")
    return b, [*(("loop", e) for e in estimates[:-1]), ("compaction", compaction_estimate), ("loop", estimates[-1])]


def expected_caps(estimates: list[tuple[str, int]], window: int) -> list[tuple[str, int, dict[str, Any]]]:
    """(kind, max_tokens, thinking) by the README's rule: the cap is min(the uncapped value,
    window - estimate - 4096), at least 1; budget thinking then gets min(16384, max(0, cap - 1024))
    or 1024 when that is 0; the compaction call (DSH logs maxTokens 8192) has thinking disabled."""
    out = []
    for kind, estimate in estimates:
        room = max(1, window - estimate - 4096)
        if kind == "compaction":
            out.append(("compaction", min(8192, room), {"type": "disabled"}))
        else:
            cap = min(64000, room)
            budget = min(16384, max(0, cap - 1024)) or 1024
            out.append(("loop", cap, {"type": "enabled", "budget_tokens": budget, "display": "summarized"}))
    return out


def caps(bodies: list[tuple[Any, str, bytes]]) -> list[tuple[str, int, dict[str, Any]]]:
    return [(request.kind, json.loads(body)["max_tokens"], json.loads(body)["thinking"])
            for request, adapter, body in bodies if request.kind in ("loop", "compaction")]


def test_the_logged_context_window_clamps_max_tokens_and_the_budget(tmp_path: Path) -> None:
    b, estimates = small_window(16000)
    session, bodies = rendered(b, tmp_path, compaction_instruction="Summarise.")
    assert {adapter for _, adapter, _ in bodies} == {"anthropic"}
    expected = expected_caps(estimates, 16000)
    assert caps(bodies) == expected
    # The run goes through every regime of the rule: a shrinking cap, a budget above the cap,
    # a budget below Anthropic's minimum, the cap floored at 1 with budget 1024, and the logged
    # compaction maxTokens 8192 going out far smaller.
    numbers = [(cap, thinking.get("budget_tokens")) for _, cap, thinking in expected]
    assert numbers == [(11857, 10833), (10349, 9325), (8841, 7817), (7333, 6309), (5825, 4801), (4317, 3293),
                       (2809, 1785), (1301, 277), (1, 1024), (1, None), (11817, 10793)]
    assert numbers[0][0] > numbers[1][0] > numbers[2][0] > numbers[3][0]
    assert any(0 < budget < 1024 for cap, budget in numbers if budget)
    assert any(budget == 1024 and cap <= 1024 for cap, budget in numbers)
    assert expected[9][0] == "compaction" and numbers[9][0] < 8192
    # whole-body check of one clamped request: only max_tokens and the budget move
    first = json.loads(bodies[0][2])
    assert list(first) == ["model", "messages", "max_tokens", "stream", "system", "tools", "thinking"]
    assert first["messages"] == [{"role": "user", "content": [{"type": "text", "text": "Read them all.",
                                                               "cache_control": EPHEMERAL}]}]


def test_a_route_file_context_window_clamps_when_the_log_has_none(tmp_path: Path) -> None:
    b, estimates = small_window(None)
    routes = tmp_path / "routes.yml"
    routes.write_text("- id: llm-pi-ai\n  config:\n    providers:\n      anthropic:\n        models:\n"
                      "          - id: claude-sonnet-4-5\n            contextWindow: 16000\n")
    session = open_session(b.write_jsonl(tmp_path / "session.jsonl"))
    from dsh_audit.session import routes_from
    session.use_routes(routes_from(str(routes)))
    run = route_renderer([session])
    bodies = [(r, "anthropic", run(r, {"compaction_instruction": "Summarise."} if r.kind == "compaction" else {}))
              for r in session.requests]
    assert caps(bodies) == expected_caps(estimates, 16000)


# --- attribution and cache rules across the switch --------------------------------------------


def test_a_provider_switch_is_an_attributed_break_and_the_cache_rules_follow_the_route(tmp_path: Path) -> None:
    from dsh_audit.attribution import attribute
    from dsh_audit.cache import cache_report

    session = open_session(deepseek_claude_deepseek().write_jsonl(tmp_path / "session.jsonl"))
    rows = [(t.verdict, t.cause, t.field_names) for t in attribute(session).transitions]
    # the header field that changed names the switch (issue 12: "or the header field that changed")
    assert rows == [("first", None, ()), ("extension", None, ()),
                    ("break", "header_change", ("provider", "model")), ("extension", None, ()),
                    ("break", "header_change", ("provider", "model"))]
    report = cache_report(session)
    assert set(report.rules) == {"deepseek", "anthropic"}
    assert [(v.family, v.prompt_source, v.cause) for v in report.verdicts] == [
        ("deepseek", "wire:deepseek", None), ("deepseek", "wire:deepseek", None),
        ("anthropic", "wire:anthropic", "header_change"), ("anthropic", "wire:anthropic", None),
        ("deepseek", "wire:deepseek", "header_change")]
    # back on DeepSeek, the cache it can hit is the last DeepSeek request's, not Claude's
    assert report.verdicts[4].source_index == 1
