"""What wins when the log, the route file and the catalog disagree; titles on a small-window route;
whole bodies of an automatic compaction on Claude and of a DeepSeek -> OpenAI-compatible -> DeepSeek
switch.

Sessions are built with :class:`~dsh_audit.testing.LogBuilder` and rendered by their own routes;
expected bodies are written from the rules of ``corpus/live-pi/README.md`` (and pi-ai 0.82.1's
estimate: characters / 4 rounded up per message, plus the system prompt and the tools' JSON).
The rule for a conflict: the window ``request/context`` logged is what DSH used at the time; a
route file is the configuration as it is now. The log wins, and the conflict is reported.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from dsh_audit.cli import cli
from dsh_audit.jsjson import stringify
from dsh_audit.session import open_session, read_session, route_renderer, routes_from, window_conflicts
from dsh_audit.testing import LogBuilder, ToolCall
from dsh_audit.testing._maintenance import CHECKPOINT_PREAMBLE

from test_wire_switch import (ANTHROPIC_SYSTEM, ANTHROPIC_TOOLS, DEEPSEEK_TOOLS, DS_ARGS, EPHEMERAL, FIXED, READ, SYSTEM,
                              claude_reply, deepseek_opening, expected_caps, small_window, tokens)

TITLE_SYSTEM = "Reply with a short plain-text title for this coding session."


def bodies_of(session: Any, **options: Any) -> list[tuple[Any, bytes]]:
    run = route_renderer([session])
    return [(r, run(r, dict(options) if r.kind == "compaction" else {})) for r in session.requests]


def route_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "routes.yml"
    path.write_text(text)
    return str(path)


def caps(bodies: list[tuple[Any, bytes]]) -> list[tuple[str, int, dict[str, Any]]]:
    return [(r.kind, json.loads(b)["max_tokens"], json.loads(b)["thinking"]) for r, b in bodies
            if r.kind in ("loop", "compaction")]


CLAUDE_200K = ("config:\n  providers:\n    anthropic:\n      models:\n        - id: claude-sonnet-4-5\n"
               "          contextWindow: 200000\n")


# --- 1. a logged window against the route file --------------------------------------------------


def test_the_logged_window_wins_over_the_route_file_and_the_conflict_is_one_line(tmp_path: Path) -> None:
    b, estimates = small_window(16000)
    first_context = next(e["seq"] for e in b.events if e["type"] == "request/context")
    session = open_session(b.write_jsonl(tmp_path / "session.jsonl"))
    config = routes_from(route_file(tmp_path, CLAUDE_200K))
    assert config is not None and config.models["anthropic", "claude-sonnet-4-5"].context_window == 200000
    session.use_routes(config)
    assert caps(bodies_of(session, compaction_instruction="Summarise.")) == expected_caps(estimates, 16000)
    # once per session and route, naming both values and the route
    assert window_conflicts(session.routes, config) == [
        f"route anthropic/claude-sonnet-4-5: the log records contextWindow 16000 (request/context at seq "
        f"{first_context}), the route file (--routes) says 200000; requests that logged their window are rendered "
        "with the log's, the one DSH used"]
    assert session.warnings == window_conflicts(session.routes, config)  # what the CLI prints
    assert read_session(tmp_path / "session.jsonl", routes=route_file(tmp_path, CLAUDE_200K)).warnings == \
        session.warnings  # every command that takes --routes prints them (tests/test_route_warnings.py)


def test_the_route_file_window_applies_where_the_log_has_none_and_agreement_is_silent(tmp_path: Path) -> None:
    b, estimates = small_window(None)
    session = open_session(b.write_jsonl(tmp_path / "session.jsonl"))
    config = routes_from(route_file(tmp_path, CLAUDE_200K.replace("200000", "16000")))
    assert config is not None
    session.use_routes(config)
    assert caps(bodies_of(session, compaction_instruction="Summarise.")) == expected_caps(estimates, 16000)
    assert window_conflicts(session.routes, config) == []
    b16, _ = small_window(16000)
    logged = open_session(b16.write_jsonl(tmp_path / "logged.jsonl"))
    assert window_conflicts(logged.routes, config) == []


# --- 2. a title call takes its route's logged window ---------------------------------------------

PROMPT = "x" * 47300


def title_session(*, other_route: bool) -> LogBuilder:
    """A turn with one long prompt on a 16000-token route, then a title call on that route (or,
    with ``other_route``, on another model, whose window the log never recorded)."""
    b = LogBuilder(session_id="titled", provider="anthropic", model="claude-sonnet-4-5", system=SYSTEM,
                   tools=[READ], reasoning_effort="high", max_tokens=None, context_window=16000)
    if other_route:
        b.configure(model="claude-sonnet-4-6")
    with b.turn(PROMPT):
        with b.step():
            claude_reply(b, b.proposal["config"]["model"], "sig", "Many xs.")
        seq = b.title("Xs")
    # the title call goes to claude-sonnet-4-5 on the same provider (DSH's title route is its own setting)
    b.event(seq)["data"]["route"]["model"] = "claude-sonnet-4-5"
    return b


def title_text(b: LogBuilder) -> str:
    """The title prompt as DSH logged it (``session/title-llm-request``): the prompts with their seqs."""
    event = next(e for e in b.events if e["type"] == "session/title-llm-request")
    seq = event["data"]["messageSeqs"][0]
    text = "Title this session from these messages:\n" + stringify([{"seq": seq, "text": PROMPT}])
    assert event["data"]["messages"][0]["content"] == [{"type": "text", "text": text}]
    return text


def title_body(text: str, max_tokens: int) -> dict[str, Any]:
    return {"model": "claude-sonnet-4-5",
            "messages": [{"role": "user", "content": [{"type": "text", "text": text, "cache_control": EPHEMERAL}]}],
            "max_tokens": max_tokens, "stream": True,
            "system": [{"type": "text", "text": TITLE_SYSTEM, "cache_control": EPHEMERAL}],
            "thinking": {"type": "disabled"}}


def test_a_title_call_takes_the_window_its_route_logged_before_it(tmp_path: Path) -> None:
    b = title_session(other_route=False)
    text = title_text(b)
    room = 16000 - (tokens(TITLE_SYSTEM) + tokens(text)) - 4096
    assert 1 < room < 64  # the title's own cap (64) is clamped by the 16000-token window
    path = b.write_jsonl(tmp_path / "session.jsonl")
    session = open_session(path)
    title = next((r, body) for r, body in bodies_of(session) if r.kind == "title")
    assert title[1].decode() == stringify(title_body(text, room))
    # `render` reads the log as a stream and lends the same context
    index = title[0].index
    assert CliRunner().invoke(cli, ["render", str(path), str(index)]).stdout_bytes == title[1]


def test_a_title_on_a_route_with_no_logged_window_keeps_the_catalog_window(tmp_path: Path) -> None:
    b = title_session(other_route=True)
    session = open_session(b.write_jsonl(tmp_path / "session.jsonl"))
    title = next(body for r, body in bodies_of(session) if r.kind == "title")
    assert title.decode() == stringify(title_body(title_text(b), 64))  # 1,000,000-token catalog window: 64 stays


# --- 3a. an automatic compaction on Claude ------------------------------------------------------

RESULT = "x" * 16000  # 4000 tokens: enough that a 16000-token window clamps the summary call's 8192


def test_an_automatic_compaction_on_claude_and_the_request_after_it(tmp_path: Path) -> None:
    b = LogBuilder(session_id="auto", provider="anthropic", model="claude-sonnet-4-5", system=SYSTEM,
                   tools=[READ], reasoning_effort="high", max_tokens=None, context_window=16000)
    with b.turn("Read a."):
        with b.step():
            reply = claude_reply(b, "claude-sonnet-4-5", "sig1", None, reasoning="Read it.",
                                 tool_calls=[ToolCall("read", '{"path":"a"}', id="toolu_fake_1")])
            b.tool_result(reply.call_ids[0], RESULT)
        with b.step():
            claude_reply(b, "claude-sonnet-4-5", "sig2", "A is xs.", reasoning="Say it.")
    with b.turn("And b?"):
        b.compaction("Read a: xs.", keep=1)  # inside the turn, before its step: the automatic kind
        with b.step():
            claude_reply(b, "claude-sonnet-4-5", "sig3", "No b.")
    assert [e["data"]["turn"] for e in b.events if e["type"] == "compaction/start"] == [2]
    session = open_session(b.write_jsonl(tmp_path / "session.jsonl"))
    bodies = bodies_of(session, compaction_instruction="Summarise.")
    assert [r.kind for r, _ in bodies] == ["loop", "loop", "compaction", "loop"]

    before = FIXED + tokens("Read a.") + tokens("Read it." + "read" + '{"path":"a"}') + tokens(RESULT)
    summary_cap = min(8192, 16000 - (before + tokens("Summarise.")) - 4096)
    checkpoint = CHECKPOINT_PREAMBLE + "\n\n<compacted-summary>Read a: xs.</compacted-summary>"
    after = FIXED + tokens(checkpoint) + tokens("Say it." + "A is xs.") + tokens("And b?")
    loop_cap = 16000 - after - 4096
    assert summary_cap < 8192 and loop_cap < 64000

    call = {"type": "tool_use", "id": "toolu_fake_1", "name": "read", "input": {"path": "a"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_fake_1", "content": RESULT, "is_error": False}
    tail = {"system": ANTHROPIC_SYSTEM, "tools": ANTHROPIC_TOOLS}
    # The summary call: the compacted region (same model: thinking with its signature), DSH's
    # instruction as the last user message (breakpoint 3), the clamped 8192, thinking disabled.
    assert bodies[2][1].decode() == stringify({"model": "claude-sonnet-4-5", "messages": [
        {"role": "user", "content": "Read a."},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Read it.", "signature": "sig1"}, call]},
        {"role": "user", "content": [result]},
        {"role": "user", "content": [{"type": "text", "text": "Summarise.", "cache_control": EPHEMERAL}]}],
        "max_tokens": summary_cap, "stream": True, **tail, "thinking": {"type": "disabled"}})
    # The loop request after it: the checkpoint replaces the region, the kept answer keeps its signature.
    assert bodies[3][1].decode() == stringify({"model": "claude-sonnet-4-5", "messages": [
        {"role": "user", "content": checkpoint},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "Say it.", "signature": "sig2"},
                                          {"type": "text", "text": "A is xs."}]},
        {"role": "user", "content": [{"type": "text", "text": "And b?", "cache_control": EPHEMERAL}]}],
        "max_tokens": loop_cap, "stream": True, **tail,
        "thinking": {"type": "enabled", "budget_tokens": min(16384, max(0, loop_cap - 1024)) or 1024,
                     "display": "summarized"}})


# --- 3b. DeepSeek -> a hand-declared OpenAI-compatible route -> DeepSeek ------------------------

LOCAL_ROUTES = """- id: llm-pi-ai
  config:
    providers:
      local-openai:
        api: openai-completions
        baseURL: http://127.0.0.1:18302/v1
        models:
          - id: local-coder
            contextWindow: 131072
            maxTokens: 8192
            reasoningEfforts:
              off:
              high: high
"""
LOCAL_ARGS = '{"path":"b.txt"}'


def local_reply(b: LogBuilder, *args: Any, **kwargs: Any) -> Any:
    """A reply through pi-ai's openai-completions route, with the envelope DSH writes (as in live-pi/c3)."""
    reply = b.assistant(*args, **kwargs)
    message = b.event(reply.seq)["data"]["message"]
    blocks = [{"type": "reasoning", "thinkingSignature": "reasoning_content"} if block["type"] == "reasoning"
              else {"type": block["type"]} for block in message["content"]]
    stop = "toolUse" if any(block["type"] == "tool-call" for block in message["content"]) else "stop"
    message["source"]["replayState"] = {
        "response": {"kind": "pi-ai", "version": 2, "api": "openai-completions", "provider": "local-openai",
                     "model": "local-coder", "responseId": f"fake-{reply.seq}", "stopReason": stop},
        "blocks": blocks}
    return reply


def test_deepseek_to_an_openai_compatible_route_and_back(tmp_path: Path) -> None:
    b = deepseek_opening("switch-c")
    b.configure(provider="local-openai", model="local-coder", max_tokens=8192)
    with b.turn("Now b.txt."):
        with b.step():
            reply = local_reply(b, None, reasoning="Local reads b.",
                                tool_calls=[ToolCall("read", LOCAL_ARGS, id="call_local_1")])
            b.tool_result(reply.call_ids[0], "bee")
        with b.step():
            local_reply(b, "B says bee.", reasoning="Done with b.")
    b.configure(provider="deepseek-official", model="deepseek-v4-pro", max_tokens=None)
    with b.turn("Thanks."):
        with b.step():
            b.assistant("You're welcome.")
    session = open_session(b.write_jsonl(tmp_path / "session.jsonl"))
    # the envelope tells the route; the model facts of a hand-declared route need its file
    assert session.route(session.requests[2]).because == "pi-ai's replay envelope at seq 49"
    session.use_routes(routes_from(route_file(tmp_path, LOCAL_ROUTES)))
    bodies = [(session.route(r).adapter, body) for r, body in bodies_of(session)]
    assert [adapter for adapter, _ in bodies] == ["deepseek", "deepseek", "openai", "openai", "deepseek"]

    def openai(messages: list[dict[str, Any]]) -> dict[str, Any]:
        # unknown URL: the system prompt as developer, the route's maxTokens as the cap, a bare
        # effort, strict: false on every tool, no prompt_cache_key
        return {"model": "local-coder", "messages": [{"role": "developer", "content": SYSTEM}, *messages],
                "stream": True, "stream_options": {"include_usage": True}, "store": False,
                "max_completion_tokens": 8192,
                "tools": [{"type": "function", "function": {**READ, "strict": False}}], "reasoning_effort": "high"}

    # DeepSeek history is foreign to local-coder: its reasoning becomes text in front of the answer,
    # the streamed arguments are parsed and re-serialised compact, the call_00_ id passes through.
    foreign = [
        {"role": "user", "content": "Read notes.md."},
        {"role": "assistant", "content": "Read notes.md.", "tool_calls": [
            {"id": "call_00_a1b2c3", "type": "function", "function": {"name": "read", "arguments": '{"path":"notes.md"}'}}]},
        {"role": "tool", "content": "hi", "tool_call_id": "call_00_a1b2c3"},
        {"role": "assistant", "content": "Answer now.Notes say hi."},
    ]
    assert bodies[2][1].decode() == stringify(openai([*foreign, {"role": "user", "content": "Now b.txt."}]))
    # its own turn: reasoning goes back as reasoning_content, a tool-call-only message has content null
    assert bodies[3][1].decode() == stringify(openai([
        *foreign, {"role": "user", "content": "Now b.txt."},
        {"role": "assistant", "content": None, "reasoning_content": "Local reads b.", "tool_calls": [
            {"id": "call_local_1", "type": "function", "function": {"name": "read", "arguments": LOCAL_ARGS}}]},
        {"role": "tool", "content": "bee", "tool_call_id": "call_local_1"}]))
    # back on DeepSeek: the pi-ai turns replayed natively, reasoning_content from their thinking,
    # pi-ai's compact arguments and ids kept
    assert bodies[4][1].decode() == stringify({
        "model": "deepseek-v4-pro", "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": "Read notes.md."},
            {"role": "assistant", "content": "", "reasoning_content": "Read notes.md.", "tool_calls": [
                {"id": "call_00_a1b2c3", "type": "function", "function": {"name": "read", "arguments": DS_ARGS}}]},
            {"role": "tool", "tool_call_id": "call_00_a1b2c3", "content": "hi"},
            {"role": "assistant", "content": "Notes say hi.", "reasoning_content": "Answer now."},
            {"role": "user", "content": "Now b.txt."},
            {"role": "assistant", "content": "", "reasoning_content": "Local reads b.", "tool_calls": [
                {"id": "call_local_1", "type": "function", "function": {"name": "read", "arguments": LOCAL_ARGS}}]},
            {"role": "tool", "tool_call_id": "call_local_1", "content": "bee"},
            {"role": "assistant", "content": "B says bee.", "reasoning_content": "Done with b."},
            {"role": "user", "content": "Thanks."}],
        "stream": True, "stream_options": {"include_usage": True}, "thinking": {"type": "enabled"},
        "reasoning_effort": "high", "tools": DEEPSEEK_TOOLS})


# --- 3c. an envelope that contradicts the route -------------------------------------------------


def test_an_envelope_whose_api_contradicts_its_route_is_unrendered_naming_both(tmp_path: Path) -> None:
    b = LogBuilder(session_id="contra", provider="anthropic", model="claude-sonnet-4-5", system=SYSTEM,
                   tools=[READ], reasoning_effort="high", max_tokens=None)
    with b.turn("Hi."):
        with b.step():
            reply = claude_reply(b, "claude-sonnet-4-5", "sig", "Hello.")
            b.event(reply.seq)["data"]["message"]["source"]["replayState"]["response"]["api"] = "openai-completions"
        with b.step():
            claude_reply(b, "claude-sonnet-4-5", "sig2", "Again.")
    path = b.write_jsonl(tmp_path / "session.jsonl")
    reason = (f"provider 'anthropic': pi-ai's replay envelope at seq {reply.seq} shows api 'openai-completions' but "
              "pi-ai's catalog says 'anthropic-messages'; pass --routes FILE with the route configuration DSH had, "
              "or --adapter")
    session = open_session(path)
    assert [(route.adapter, route.because) for route in map(session.route, session.requests)] == [(None, reason)] * 2
    # the log wins over the catalog: no body is rendered against it; diff says so per request
    capture = tmp_path / "wire.jsonl"
    sent = stringify({"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": "Hi."}], "stream": True})
    capture.write_text(json.dumps({"seq": 1, "method": "POST", "path": "/v1/messages", "body": sent,
                                   "headers": {"x-deepseek-harness-session-id": "contra"}}) + "\n")
    result = CliRunner().invoke(cli, ["diff", str(path), "--capture", str(capture), "--json"], catch_exceptions=False)
    rows = [json.loads(line) for line in result.output.splitlines() if json.loads(line)["kind"] == "loop"]
    assert [(r["verdict"], r["note"]) for r in rows] == [
        ("unrendered", f"session header and order; cannot render: unknown route: {reason}"),
        ("unmatched", "no captured loop send of this session left")]
    render = CliRunner().invoke(cli, ["render", str(path), "0"])
    assert render.exit_code != 0 and render.exception is not None
    assert str(render.exception) == (f"{path}:7 seq 5: request 0 cannot be rendered: unknown route: {reason} "
                                     "(hint: pass --routes FILE with the route configuration DSH had, or force a "
                                     "wire format with --adapter deepseek|anthropic|openai|responses)")
    # a route file that agrees with the envelope settles it (it then supplies the model facts)
    agreeing = "- id: llm-pi-ai\n  config:\n    providers:\n      anthropic:\n        api: openai-completions\n" \
               "        baseURL: http://127.0.0.1:9/v1\n        models:\n          - id: claude-sonnet-4-5\n"
    session.use_routes(routes_from(route_file(tmp_path, agreeing)))
    assert [session.route(r).adapter for r in session.requests] == ["openai", "openai"]


def test_a_route_file_that_sets_no_window_is_not_blamed_for_the_catalogs(tmp_path, monkeypatch, capsys):
    """A route file that only adds headers to the openai catalog route: the catalog's window
    (400,000) differs from the one the log records (12,000), but the file set none; no warning
    (before: 'the route file (--routes) says 400000'). A window the file sets is still compared."""
    from _cli import invoke

    case = json.loads((Path(__file__).parent / "data" / "piai_oracle" / "resp-images-offload.json").read_text("utf-8"))
    log = tmp_path / "session.jsonl"
    log.write_text("".join(line + "\n" for line in case["log"]), encoding="utf-8")
    routes = tmp_path / "routes.yml"
    routes.write_text("providers:\n  openai:\n    headers: {X-A: b}\n", encoding="utf-8")
    code, _, err = invoke(monkeypatch, capsys, "cache", str(log), "--routes", str(routes))
    assert [line for line in err if "contextWindow" in line] == []
    routes = tmp_path / "window.yml"  # another file: a route file is read once per process
    routes.write_text("providers:\n  openai:\n    modelOverrides: {gpt-5: {contextWindow: 300000}}\n", encoding="utf-8")
    code, _, err = invoke(monkeypatch, capsys, "cache", str(log), "--routes", str(routes))
    assert [line.split("; requests")[0] for line in err if "contextWindow" in line] == [
        "warning: route openai/gpt-5: the log records contextWindow 12000 (request/context at seq 6), the route "
        "file (--routes) says 300000"]
