"""Issue 12 leftovers: a compaction summarised on another route, and the route file's profile settings.

1. A compaction whose ``compaction/summary`` names another provider than the header in force (DSH's
   configured ``summarizationProvider``; ``compaction-basic/src/summarizer.ts`` ``summarizeWithLlm``,
   spec §8.4) goes out by that provider's route, in that route's wire format.
2. ``reasoning``, ``cacheRetention``, ``thinkingBudgets`` and ``headers`` of a route
   (``providers.<id>`` in DSH's ``llm-pi-ai`` configuration) reach pi-ai on every call
   (``llm-pi-ai/src/adapter.ts`` ``profileOptions``, ``requestHeaders``); what the log records wins.

Corpus checks start from the real captures of ``corpus/live-pi`` and the real route files, with one
setting added: each body must equal the captured one changed exactly as pi-ai 0.82.1 changes it
(``api/anthropic-messages.js`` ``getCacheControl``, ``api/simple-options.js``
``adjustMaxTokensForThinking``, ``api/openai-completions.js`` ``buildParams``). Built sessions
(``LogBuilder``) check whole bodies written out by hand.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded
from dsh_audit.errors import RenderError, UsageError
from dsh_audit.jsjson import stringify
from dsh_audit.session import Session, open_session, route_renderer
from dsh_audit.testing import LogBuilder, ToolCall
from dsh_audit.wire import RouteProfile, load_routes

from _golden import CORPUS
from test_wire_switch import (ANTHROPIC_SYSTEM, ANTHROPIC_TOOLS, DEEPSEEK_TOOLS, EPHEMERAL, READ, SYSTEM,
                              claude_reply, deepseek_opening)

LIVE_PI = CORPUS / "live-pi"
corpus = pytest.mark.skipif(not LIVE_PI.is_dir(), reason="../shared/corpus/live-pi is absent")
INSTRUCTION = "Summarise."
LONG = {"type": "ephemeral", "ttl": "1h"}


def with_settings(tmp_path: Path, scenario: str, provider: str, settings: str) -> str:
    """The scenario's real route file with ``settings`` (YAML lines) added to ``provider``'s profile."""
    text = (LIVE_PI / scenario / "inputs" / "pi-ai-routes.patch.yml").read_text()
    anchor = f"      {provider}:\n"
    assert anchor in text
    indented = "".join(f"        {line}\n" for line in settings.splitlines())
    path = tmp_path / "routes.yml"
    path.write_text(text.replace(anchor, anchor + indented))
    return str(path)


def captured(scenario: str) -> tuple[Session, list[tuple[Any, dict[str, Any]]]]:
    """The scenario's session and (request, captured wire row) for every captured request."""
    root = LIVE_PI / scenario
    mapping = json.loads((root / "requests-map.json").read_text())
    rows = {row["seq"]: row for row in map(json.loads, (root / "wire.jsonl").read_text().splitlines())}
    session = open_session(LIVE_PI / mapping["log"])
    by_chunk = {(r.kind, r.first_chunk_seq): r for r in session.requests}
    pairs = [(by_chunk["loop", e["firstChunkSeq"]], rows[e["wireSeq"]]) for e in mapping["loop"]]
    pairs += [(by_chunk["title", e["titleRequestSeq"]], rows[e["wireSeq"]]) for e in mapping["title"]]
    assert len(pairs) == len(rows)
    return session, pairs


def rendered_with(scenario: str, routes: str) -> list[tuple[Any, str, str]]:
    """(request, our body, the captured body) for every captured request, rendered by its own
    route with the route file ``routes``."""
    session, pairs = captured(scenario)
    session.use_routes(load_routes(routes))
    run = route_renderer([session])
    return [(request, run(request, {}).decode(), row["body"]) for request, row in pairs]


# --- 2. profile settings on the real captures -----------------------------------------------------


@corpus
def test_long_cache_retention_puts_a_one_hour_ttl_on_every_anthropic_breakpoint(tmp_path: Path) -> None:
    bodies = rendered_with("c1-anthropic-tools", with_settings(tmp_path, "c1-anthropic-tools", "anthropic",
                                                               "cacheRetention: long"))
    assert len(bodies) == 11
    for _, ours, theirs in bodies:
        assert theirs.count('"cache_control":{"type":"ephemeral"}') in (2, 3)
        assert ours == theirs.replace('"cache_control":{"type":"ephemeral"}', '"cache_control":' + stringify(LONG))


@corpus
def test_thinking_budgets_change_the_budget_of_budget_thinking_only(tmp_path: Path) -> None:
    # claude-sonnet-4-5 at effort high: max_tokens min(64000 + 4000, 64000) = 64000, budget 4000;
    # claude-sonnet-4-6 thinks adaptively (no budget); the title has no effort.
    bodies = rendered_with("c1-anthropic-tools", with_settings(tmp_path, "c1-anthropic-tools", "anthropic",
                                                               "thinkingBudgets:\n  high: 4000\n  low: 10"))
    changed = 0
    for request, ours, theirs in bodies:
        expected = theirs.replace('"budget_tokens":16384', '"budget_tokens":4000')
        changed += expected != theirs
        assert ours == expected, request.index
    assert changed == 8


@corpus
def test_the_logged_effort_beats_the_profile_reasoning_which_reaches_the_title(tmp_path: Path) -> None:
    # Loop headers record effort high / max: those bodies stay the captured ones. The title names no
    # effort, so DSH sends the profile's (low): budget 2048, max_tokens min(64 + 2048, 64000) = 2112,
    # then budget min(2048, 2112 - 1024) = 1088 (simple-options.js adjustMaxTokensForThinking).
    bodies = rendered_with("c1-anthropic-tools", with_settings(tmp_path, "c1-anthropic-tools", "anthropic",
                                                               "reasoning: low"))
    for request, ours, theirs in bodies:
        if request.kind == "loop":
            assert ours == theirs
            continue
        title = json.loads(theirs)
        assert (title["max_tokens"], title["thinking"]) == (64, {"type": "disabled"})
        title.update(max_tokens=2112, thinking={"type": "enabled", "budget_tokens": 1088, "display": "summarized"})
        assert ours == stringify(title)


@corpus
def test_long_retention_and_reasoning_on_the_openai_compatible_route(tmp_path: Path) -> None:
    # openai-completions: long retention sends prompt_cache_key (the session id) and
    # prompt_cache_retention 24h after `stream`; the profile's reasoning reaches the title only.
    bodies = rendered_with("c3-openai-compat", with_settings(tmp_path, "c3-openai-compat", "local-openai",
                                                             "cacheRetention: long\nreasoning: high"))
    assert len(bodies) == 6
    key = '"stream":true,"prompt_cache_key":"session-e7611f7a-95b5-4af3-83c0-7c6d07d82016",' \
          '"prompt_cache_retention":"24h",'
    for request, ours, theirs in bodies:
        expected = theirs.replace('"stream":true,', key)
        if request.kind == "title":
            assert theirs.endswith('"max_completion_tokens":64}')
            expected = expected[:-1] + ',"reasoning_effort":"high"}'
        assert ours == expected, request.kind


@corpus
def test_profile_headers_go_before_the_attribution_and_cannot_replace_it(tmp_path: Path) -> None:
    routes = with_settings(tmp_path, "c3-openai-compat", "local-openai",
                           "headers:\n  X-Gateway-Tenant: team-a\n  User-Agent: not-dsh\n  Accept: text/plain")
    log = LIVE_PI / "c3-openai-compat" / "session-logs" / "session-e7611f7a-95b5-4af3-83c0-7c6d07d82016.jsonl"
    plain = CliRunner().invoke(cli, ["render", str(log), "1", "--headers"] +
                               ["--routes", str(LIVE_PI / "c3-openai-compat" / "inputs" / "pi-ai-routes.patch.yml")])
    result = CliRunner().invoke(cli, ["render", str(log), "1", "--headers", "--routes", routes])
    assert (plain.exit_code, result.exit_code) == (0, 0), result.output
    head, body = result.output.split("\n\n", 1)
    plain_head, plain_body = plain.output.split("\n\n", 1)
    assert body == plain_body  # headers are not in the body
    assert head.splitlines() == [  # the dropped User-Agent is noted (stderr), whatever its value
        "warning: providers.local-openai.headers.User-Agent: not sent: DSH drops a route's user-agent header and "
        "sends its own attribution in its place (adapter.ts requestHeaders)",
        "POST /v1/chat/completions", "x-stainless-retry-count: 0", "x-stainless-lang: js",
        "x-stainless-package-version: 6.26.0", "x-stainless-os: Linux", "x-stainless-arch: x64",
        "x-stainless-runtime: node", "x-stainless-runtime-version: v24.19.0", "x-gateway-tenant: team-a",
        "accept: text/plain",
        "user-agent: deepseek-harness/0.1.0-rc.8 (+https://github.com/deepseek-ai/deepseek-harness)",
        "content-type: application/json"]
    assert plain_head.splitlines()[1] == "accept: application/json"


@corpus
@pytest.mark.parametrize("setting, message", [
    ("cacheRetention: forever", "providers.local-openai.cacheRetention: must be one of none, short, long"),
    ("reasoning: extreme", "providers.local-openai.reasoning: is not a thinking level "
                           "(off, minimal, low, medium, high, xhigh, max)"),
    ("thinkingBudgets:\n  high: lots", "providers.local-openai.thinkingBudgets.high: must be a whole number of tokens"),
    ("headers:\n  X-A: [1]", "providers.local-openai.headers: must map header names to string values"),
    # config.ts ``timeoutMs: z.natural()``: a whole number of milliseconds, 0 or more
    ("timeoutMs: soon", "providers.local-openai.timeoutMs: must be a whole number of milliseconds"),
    ("timeoutMs: -1", "providers.local-openai.timeoutMs: must be a whole number of milliseconds"),
    ("timeoutMs: 1500.5", "providers.local-openai.timeoutMs: must be a whole number of milliseconds"),
])
def test_a_bad_profile_setting_is_a_one_line_usage_error(tmp_path: Path, setting: str, message: str,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    routes = with_settings(tmp_path, "c3-openai-compat", "local-openai", setting)
    with pytest.raises(UsageError) as caught:
        load_routes(routes)
    line = f"{routes}: route file: {message} (hint: see DSH's llm-pi-ai configuration: providers.<id>.api, " \
           "baseURL, models)"
    assert str(caught.value) == line
    log = LIVE_PI / "c3-openai-compat" / "session-logs"
    monkeypatch.setattr(sys, "argv", ["dsh-audit", "diff", str(log), "--capture",
                                      str(LIVE_PI / "c3-openai-compat" / "wire.jsonl"), "--routes", routes])
    code = run_guarded(cli)
    assert (code, capsys.readouterr()) == (2, ("", f"error: {line}\n"))


def test_the_route_file_profile_is_carried_by_each_model_of_its_route_only(tmp_path: Path) -> None:
    path = tmp_path / "routes.yml"
    path.write_text("providers:\n  anthropic:\n    cacheRetention: none\n    reasoning: 'off'\n"
                    "    thinkingBudgets: {high: 5, xhigh: 9}\n    headers: {user-agent: x, X-B: 'y'}\n"
                    "    timeoutMs: 120000.0\n"
                    "  local-openai:\n    api: openai-completions\n    baseURL: http://h/v1\n"
                    "    models: [{id: m}]\n")
    routes = load_routes(path)
    profile = RouteProfile(reasoning="off", cache_retention="none", thinking_budgets={"high": 5},
                           headers=(("X-B", "y"),), timeout_ms=120000)
    assert routes.models["anthropic", "claude-sonnet-4-5"].profile == profile
    assert routes.models["anthropic", "claude-sonnet-4-6"].profile == profile
    read = routes.models["anthropic", "claude-sonnet-4-5"].profile
    assert read is not None and type(read.timeout_ms) is int  # YAML's 120000.0 is one JavaScript number
    assert routes.models["local-openai", "m"].profile is None
    assert routes.notes == ("providers.anthropic.headers.user-agent: not sent: DSH drops a route's user-agent header "
                            "and sends its own attribution in its place (adapter.ts requestHeaders)",)


# --- 1. a compaction summarised on another route --------------------------------------------------


def summarised_on(b: LogBuilder, provider: str, model: str) -> int:
    """A manual compaction of the whole surface whose summary DSH ran on ``provider``/``model``
    (a configured summarizationProvider); returns the compaction/summary seq."""
    checkpoint = b.compaction("They read notes.")
    summary = b.event(checkpoint - 1)
    assert summary["type"] == "compaction/summary"
    summary["data"].update(provider=provider, model=model)
    return int(summary["seq"])


def compaction_wire(b: LogBuilder, tmp_path: Path, routes: str | None = None) -> tuple[Any, Any]:
    session = open_session(b.write_jsonl(tmp_path / "session.jsonl"))
    if routes is not None:
        session.use_routes(load_routes(routes))
    request = next(r for r in session.requests if r.kind == "compaction")
    route = session.route(request)
    return route, route_renderer([session])(request, {"compaction_instruction": INSTRUCTION})


#: deepseek_opening's turn as pi-ai's Anthropic route sees it (foreign history, spec §8.3)
FOREIGN_DS_TURN = [
    {"role": "user", "content": "Read notes.md."},
    {"role": "assistant", "content": [
        {"type": "text", "text": "Read notes.md."},
        {"type": "tool_use", "id": "call_00_a1b2c3", "name": "read", "input": {"path": "notes.md"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_00_a1b2c3", "content": "hi",
                                  "is_error": False}]},
    {"role": "assistant", "content": [{"type": "text", "text": "Answer now."},
                                      {"type": "text", "text": "Notes say hi."}]},
]


def test_a_deepseek_session_summarised_on_claude_goes_out_as_anthropic_messages(tmp_path: Path) -> None:
    b = deepseek_opening("summary-claude")
    summarised_on(b, "anthropic", "claude-sonnet-4-5")
    route, body = compaction_wire(b, tmp_path)
    assert (route.provider, route.adapter, route.because) == ("anthropic", "anthropic", "pi-ai's catalog")
    # the header's system and tools, the region as foreign history, DSH's cap 8192 under a 1M window,
    # no effort: explicit thinking disabled (live-pi README)
    assert body.decode() == stringify({
        "model": "claude-sonnet-4-5",
        "messages": [*FOREIGN_DS_TURN,
                     {"role": "user", "content": [{"type": "text", "text": INSTRUCTION, "cache_control": EPHEMERAL}]}],
        "max_tokens": 8192, "stream": True, "system": ANTHROPIC_SYSTEM, "tools": ANTHROPIC_TOOLS,
        "thinking": {"type": "disabled"}})


def test_a_claude_session_summarised_on_deepseek_goes_out_natively(tmp_path: Path) -> None:
    b = LogBuilder(session_id="summary-ds", provider="anthropic", model="claude-sonnet-4-5", system=SYSTEM,
                   tools=[READ], reasoning_effort="high", max_tokens=None)
    with b.turn("Read b.txt."):
        with b.step():
            reply = claude_reply(b, "claude-sonnet-4-5", "sig_1", "Reading.", reasoning="Claude reads b.",
                                 tool_calls=[ToolCall("read", '{"path":"b.txt"}', id="toolu_fake_01")])
            b.tool_result(reply.call_ids[0], "bee")
    summarised_on(b, "deepseek-official", "deepseek-v4-pro")
    route, body = compaction_wire(b, tmp_path)
    assert (route.provider, route.adapter, route.because) == ("deepseek-official", "deepseek",
                                                              "DSH's default DeepSeek provider")
    # The native adapter replays the Claude turn (thinking as reasoning_content, no signature, toolu_
    # id kept) and takes its own default effort: the header's is another route's (spec §8.4).
    assert body.decode() == stringify({
        "model": "deepseek-v4-pro",
        "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Read b.txt."},
                     {"role": "assistant", "content": "Reading.", "reasoning_content": "Claude reads b.",
                      "tool_calls": [{"id": "toolu_fake_01", "type": "function",
                                      "function": {"name": "read", "arguments": '{"path":"b.txt"}'}}]},
                     {"role": "tool", "tool_call_id": "toolu_fake_01", "content": "bee"},
                     {"role": "user", "content": INSTRUCTION}],
        "stream": True, "stream_options": {"include_usage": True}, "thinking": {"type": "enabled"},
        "reasoning_effort": "high", "tools": DEEPSEEK_TOOLS, "max_tokens": 8192})


GATEWAY_TOOLS = [{"type": "function", "function": {**READ, "strict": False}}]


@corpus
def test_a_summary_on_a_hand_declared_route_needs_its_row_and_takes_its_profile(tmp_path: Path) -> None:
    b = deepseek_opening("summary-gateway")
    summarised_on(b, "local-openai", "local-coder")
    session = open_session(b.write_jsonl(tmp_path / "session.jsonl"))
    request = next(r for r in session.requests if r.kind == "compaction")
    # No message of local-openai in the log and no route file: unknown, never another route's format.
    because = ("provider 'local-openai': the log shows no message from its adapter; pass --routes FILE "
               "(DSH's llm-pi-ai route configuration) or --adapter")
    assert (session.route(request).adapter, session.route(request).because) == (None, because)
    with pytest.raises(RenderError) as caught:
        route_renderer([session])(request, {"compaction_instruction": INSTRUCTION})
    assert caught.value.message == f"unknown route: {because}"
    # Its route-file row settles it; the profile's reasoning is the effort of a call that names none.
    routes = with_settings(tmp_path, "c3-openai-compat", "local-openai", "reasoning: high")
    route, body = compaction_wire(b, tmp_path, routes)
    assert (route.adapter, route.because) == ("openai", "the route configuration (--routes)")
    assert body.decode() == stringify({
        "model": "local-coder",
        "messages": [{"role": "developer", "content": SYSTEM}, {"role": "user", "content": "Read notes.md."},
                     {"role": "assistant", "content": "Read notes.md.", "tool_calls": [
                         {"id": "call_00_a1b2c3", "type": "function",
                          "function": {"name": "read", "arguments": '{"path":"notes.md"}'}}]},
                     {"role": "tool", "content": "hi", "tool_call_id": "call_00_a1b2c3"},
                     {"role": "assistant", "content": "Answer now.Notes say hi."},
                     {"role": "user", "content": INSTRUCTION}],
        "stream": True, "stream_options": {"include_usage": True}, "store": False, "max_completion_tokens": 8192,
        "tools": GATEWAY_TOOLS, "reasoning_effort": "high"})


def gateway_reply(b: LogBuilder, text: str) -> None:
    """An answer through a hand-declared openai-completions route, with pi-ai's replay envelope."""
    reply = b.assistant(text)
    message = b.event(reply.seq)["data"]["message"]
    message["source"]["replayState"] = {
        "response": {"kind": "pi-ai", "version": 2, "api": "openai-completions", "provider": "local-openai",
                     "model": "local-coder", "responseId": f"chatcmpl-{reply.seq}", "stopReason": "stop"},
        "blocks": [{"type": "text"}]}


def gateway_session(defaults: dict[str, bool] | None) -> tuple[LogBuilder, int]:
    b = LogBuilder(session_id="gateway-defaults", provider="local-openai", model="local-coder", system=SYSTEM,
                   tools=[READ], reasoning_effort="high", max_tokens=None, adapter_defaults=defaults,
                   context_window=131072)
    with b.turn("Hello."):
        with b.step():
            gateway_reply(b, "Hi.")
    title = b.title("Greetings")
    b.compaction("They said hi.")
    return b, title


@corpus
def test_the_logged_default_effort_beats_the_route_file_for_title_and_compaction(tmp_path: Path) -> None:
    # The route file claims reasoning low, which local-coder does not offer (only off and high).
    routes = with_settings(tmp_path, "c3-openai-compat", "local-openai", "reasoning: low")
    # A header that names its effort itself says nothing of the route's default: the file's applies,
    # and DSH would refuse it.
    b, _ = gateway_session(None)
    session = open_session(b.write_jsonl(tmp_path / "explicit.jsonl"))
    session.use_routes(load_routes(routes))
    title = next(r for r in session.requests if r.kind == "title")
    with pytest.raises(RenderError) as caught:
        route_renderer([session])(title, {})
    assert (caught.value.message, caught.value.dsh_code) == (
        "pi-ai model local-openai/local-coder does not support reasoning effort 'low'", "UNSUPPORTED_REASONING_EFFORT")
    # A header whose adapterDefaults marks the effort shows the route's default as DSH resolved it
    # (high): the title and the compaction, which name no effort, were sent with it.
    b, title_seq = gateway_session({"reasoningEffort": True})
    session = open_session(b.write_jsonl(tmp_path / "defaults.jsonl"))
    session.use_routes(load_routes(routes))
    run = route_renderer([session])
    title = next(r for r in session.requests if r.kind == "title")
    prompt = b.event(title_seq)["data"]["messages"][0]["content"][0]["text"]
    stream = {"stream": True, "stream_options": {"include_usage": True}, "store": False}
    assert run(title, {}).decode() == stringify({
        "model": "local-coder",
        "messages": [{"role": "developer", "content": "Reply with a short plain-text title for this coding session."},
                     {"role": "user", "content": prompt}],
        **stream, "max_completion_tokens": 64, "reasoning_effort": "high"})
    compaction = next(r for r in session.requests if r.kind == "compaction")
    assert run(compaction, {"compaction_instruction": INSTRUCTION}).decode() == stringify({
        "model": "local-coder",
        "messages": [{"role": "developer", "content": SYSTEM}, {"role": "user", "content": "Hello."},
                     {"role": "assistant", "content": "Hi."}, {"role": "user", "content": INSTRUCTION}],
        **stream, "max_completion_tokens": 8192, "tools": GATEWAY_TOOLS, "reasoning_effort": "high"})


def test_no_retention_drops_every_anthropic_breakpoint(tmp_path: Path) -> None:
    b = deepseek_opening("no-retention")
    b.configure(provider="anthropic", model="claude-sonnet-4-5")
    with b.turn("Now b.txt."):
        with b.step():
            claude_reply(b, "claude-sonnet-4-5", "sig", "B.")
    routes = tmp_path / "routes.yml"
    routes.write_text("providers:\n  anthropic:\n    cacheRetention: none\n")
    session = open_session(b.write_jsonl(tmp_path / "session.jsonl"))
    session.use_routes(load_routes(routes))
    request = next(r for r in session.requests if session.route(r).adapter == "anthropic")
    # no cache_control anywhere, and the last user message keeps its plain string content
    assert route_renderer([session])(request, {}).decode() == stringify({
        "model": "claude-sonnet-4-5", "messages": [*FOREIGN_DS_TURN, {"role": "user", "content": "Now b.txt."}],
        "max_tokens": 64000, "stream": True, "system": [{"type": "text", "text": SYSTEM}],
        "tools": [{k: v for k, v in ANTHROPIC_TOOLS[0].items() if k != "cache_control"}],
        "thinking": {"type": "enabled", "budget_tokens": 16384, "display": "summarized"}})
