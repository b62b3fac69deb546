"""pi-ai 0.82.1's whole built-in catalog as package data (issue 12, Build 1): every provider DSH's
``llm-pi-ai`` serves as a catalog route, its model facts, its model headers, and a route switched
to another API keeping the catalog entry's compat as DSH's ``resolveModelCompat`` keeps it.

The expected bodies and headers are pi-ai 0.82.1's own: its ``streamSimple`` was run (Node, once,
offline, against a local capture server) on the same sessions with the catalog entry DSH lays under
each model (``llm-pi-ai/src/catalog.ts`` ``resolveRouteModels``: ``...base``) and DSH's
``user-agent`` as the options header; they are copied here as literals. The platform headers are
dsh-audit's defaults (``x-stainless-runtime-version``), the one value the capture machine set.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.testing import LogBuilder, tool_schema
from dsh_audit.wire._piai_catalog import (BUILTIN_MODELS, CATALOG_FILE, PIAI_CATALOG, catalog_api, catalog_base_url,
                                          catalog_models, catalog_source, resolve_model)
from dsh_audit.wire._piai_routes import parse_routes

from _cli import invoke

SYSTEM = "You are a helpful coding agent."
READ = tool_schema("read", "Read a file.", {"path": {"type": "string"}})
AGENT = "deepseek-harness/0.1.0-rc.8 (+https://github.com/deepseek-ai/deepseek-harness)"
STAINLESS_PLATFORM = [("x-stainless-os", "Linux"), ("x-stainless-arch", "x64"), ("x-stainless-runtime", "node"),
                      ("x-stainless-runtime-version", "v24.19.0")]
OPENAI_SDK = [("accept", "application/json"), ("x-stainless-retry-count", "0"), ("x-stainless-lang", "js"),
              ("x-stainless-package-version", "6.26.0"), *STAINLESS_PLATFORM]
ANTHROPIC_SDK = [("x-stainless-retry-count", "0"), ("x-stainless-timeout", "600"), ("x-stainless-lang", "js"),
                 ("x-stainless-package-version", "0.91.1"), *STAINLESS_PLATFORM, ("anthropic-version", "2023-06-01"),
                 ("accept", "application/json"), ("anthropic-dangerous-direct-browser-access", "true")]


#: A route's ``timeoutMs`` and the ``x-stainless-timeout`` both SDKs send for it (None: no header): JavaScript
#: divides doubles and spells the result its way (node: ``String(Math.trunc(1e24 / 1000))`` is ``1e+21``, and
#: 9007199254740993000 reads as the double 9007199254740993024).
TIMEOUTS = ((120000, "120"), (0, None), (999, "0"), (1500, "1"), (10**24, "1e+21"),
            (9007199254740993000, "9007199254740994"))


def timed(sdk: list[tuple[str, str]], seconds: str | None) -> list[tuple[str, str]]:
    """``sdk``'s headers with ``x-stainless-timeout: seconds`` right after ``x-stainless-retry-count``
    (None: without the header), as both SDKs write it for a request ``timeout`` (``buildHeaders``)."""
    rest = [header for header in sdk if header[0] != "x-stainless-timeout"]
    at = rest.index(("x-stainless-retry-count", "0")) + 1
    return [*rest[:at], *([("x-stainless-timeout", seconds)] if seconds is not None else []), *rest[at:]]


def pi_reply(b: LogBuilder, text: str, *, api: str, provider: str, model: str, reasoning: str | None = None,
             signature: str | None = None) -> None:
    """An assistant reply through pi-ai with the replay envelope DSH writes."""
    reply = b.assistant(text, reasoning=reasoning)
    message = b.event(reply.seq)["data"]["message"]
    blocks = [{"type": block["type"], **({"thinkingSignature": signature}
                                        if block["type"] == "reasoning" and signature else {})}
              for block in message["content"]]
    message["source"]["replayState"] = {
        "response": {"kind": "pi-ai", "version": 2, "api": api, "provider": provider, "model": model,
                     "responseId": f"msg_fake_{reply.seq}", "stopReason": "stop"}, "blocks": blocks}


def two_turns(tmp_path: Path, provider: str, model: str, api: str, *, effort: str | None = "high",
              reasoning: str | None = None, signature: str | None = None) -> Path:
    b = LogBuilder(session_id=f"a-{provider}", provider=provider, model=model, system=SYSTEM, tools=[READ],
                   reasoning_effort=effort, max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            pi_reply(b, "Hello.", api=api, provider=provider, model=model, reasoning=reasoning, signature=signature)
    with b.turn("Again."):
        with b.step():
            pi_reply(b, "Yes.", api=api, provider=provider, model=model)
    return b.write_jsonl(tmp_path / f"{provider}.jsonl")


def routes_file(tmp_path: Path, routes: dict[str, Any]) -> str:
    path = tmp_path / "routes.yml"
    path.write_text(json.dumps({"providers": routes}), "utf-8")  # JSON is YAML
    return str(path)


def rendered(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, list[str]]:
    code, out, err = invoke(monkeypatch, capsys, "render", *args)
    assert (code, err) == (0, [])
    return out, err


def header_lines(output: str) -> tuple[str, list[tuple[str, str]]]:
    head = output.split("\n\n", 1)[0].split("\n")
    pairs = [line.split(": ", 1) for line in head[1:]]
    return head[0], [(name, value) for name, value in pairs]


# --- a catalog route of any pi-ai provider ----------------------------------------------------------

ZAI_TOOLS = ('"tools":[{"type":"function","function":{"name":"read","description":"Read a file.","parameters":'
             '{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]},"strict":false}}],'
             '"tool_stream":true,"thinking":{"type":"enabled","clear_thinking":false}}')
ZAI_BODIES = [
    '{"model":"glm-5.1","messages":[{"role":"system","content":"You are a helpful coding agent."},{"role":"user",'
    '"content":"Hi."}],"stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":131072,'
    + ZAI_TOOLS,
    '{"model":"glm-5.1","messages":[{"role":"system","content":"You are a helpful coding agent."},{"role":"user",'
    '"content":"Hi."},{"role":"assistant","content":"Hello.","reasoning_content":"Think."},{"role":"user",'
    '"content":"Again."}],"stream":true,"stream_options":{"include_usage":true},"max_completion_tokens":131072,'
    + ZAI_TOOLS,
]


def test_a_zai_catalog_route_renders_the_body_pi_ai_sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """``providers: {zai: {apiKeyEnv}}`` serves pi-ai's zai catalog unchanged: its compat
    (``thinkingFormat: zai``, ``zaiToolStream``, no developer role) shapes the body."""
    log = two_turns(tmp_path, "zai", "glm-5.1", "openai-completions", reasoning="Think.", signature="reasoning_content")
    routes = routes_file(tmp_path, {"zai": {"apiKeyEnv": "ZAI_API_KEY"}})
    for index, body in enumerate(ZAI_BODIES):
        assert rendered(monkeypatch, capsys, str(log), str(index), "--routes", routes)[0] == body
    output, _ = rendered(monkeypatch, capsys, str(log), "0", "--routes", routes, "--headers")
    assert header_lines(output) == ("POST /api/coding/paas/v4/chat/completions",
                                    [*OPENAI_SDK, ("user-agent", AGENT), ("content-type", "application/json")])
    assert output.endswith("\n\n" + ZAI_BODIES[0])
    served = parse_routes({"providers": {"zai": {"apiKeyEnv": "ZAI_API_KEY"}}})
    assert dict(served.apis) == {"zai": "openai-completions"}
    assert sorted(m for _, m in served.models) == ["glm-4.5-air", "glm-4.7", "glm-5-turbo", "glm-5.1", "glm-5.2",
                                                   "glm-5v-turbo"]


def test_a_declared_model_of_a_catalog_route_lays_the_catalog_entry_under_it() -> None:
    """DSH ``resolveRouteModels``: a route that lists its models takes each one's catalog entry
    (compat, levels, headers, base URL) under the fields it declares."""
    routes = parse_routes({"providers": {"zai": {"models": [{"id": "glm-4.7", "contextWindow": 16000}]},
                                         "nvidia": {"models": [{"id": "meta/llama-3.3-70b-instruct"}]}}})
    glm = routes.models["zai", "glm-4.7"]
    assert (glm.api, glm.base_url, glm.context_window, glm.max_tokens, glm.reasoning, dict(glm.compat)) == (
        "openai-completions", "https://api.z.ai/api/coding/paas/v4", 16000, 131072, True,
        {"supportsStore": False, "supportsDeveloperRole": False, "supportsReasoningEffort": False,
         "thinkingFormat": "zai", "zaiToolStream": True})
    assert routes.models["nvidia", "meta/llama-3.3-70b-instruct"].headers == (("NVCF-POLL-SECONDS", "3600"),)
    # a model the catalog does not list falls back to the provider's own base URL (createProvider's baseUrl)
    other = parse_routes({"providers": {"zai": {"models": [{"id": "glm-9"}]}}}).models["zai", "glm-9"]
    assert (other.api, other.base_url, other.context_window, other.max_tokens, dict(other.compat)) == (
        "openai-completions", "https://api.z.ai/api/coding/paas/v4", 262144, 32768, {})


# --- model headers --------------------------------------------------------------------------------


@pytest.mark.parametrize(("provider", "model", "api", "effort", "profile", "path", "headers"), [
    # openai-completions.js createClient: {...model.headers, ...optionsHeaders}
    ("nvidia", "meta/llama-3.3-70b-instruct", "openai-completions", None, {}, "/v1/chat/completions",
     [*OPENAI_SDK, ("nvcf-poll-seconds", "3600"), ("user-agent", AGENT), ("content-type", "application/json")]),
    # a route header of another case replaces the model's and moves to the route header's place
    ("nvidia", "meta/llama-3.3-70b-instruct", "openai-completions", None,
     {"headers": {"x-team": "a", "nvcf-poll-seconds": "5"}}, "/v1/chat/completions",
     [*OPENAI_SDK, ("x-team", "a"), ("nvcf-poll-seconds", "5"), ("user-agent", AGENT),
      ("content-type", "application/json")]),
    # anthropic-messages.js createClient: mergeHeaders({accept, ...}, model.headers, optionsHeaders); the
    # model's User-Agent (KimiCLI/1.5) gives way to DSH's user-agent
    ("kimi-coding", "kimi-for-coding", "anthropic-messages", "high", {}, "/coding/v1/messages",
     [*ANTHROPIC_SDK, ("user-agent", AGENT), ("content-type", "application/json")]),
    ("kimi-coding", "k3", "anthropic-messages", "high", {"headers": {"X-Team": "a"}}, "/coding/v1/messages",
     [*ANTHROPIC_SDK, ("x-team", "a"), ("user-agent", AGENT), ("content-type", "application/json")]),
    # a route's timeoutMs is the SDK's request timeout: x-stainless-timeout trunc(ms / 1000), none for 0,
    # Anthropic's 600 included (pi-ai 0.82.1 with the real SDKs; no timeoutMs: the rows above)
    *[("nvidia", "meta/llama-3.3-70b-instruct", "openai-completions", None, {"timeoutMs": ms}, "/v1/chat/completions",
       [*timed(OPENAI_SDK, seconds), ("nvcf-poll-seconds", "3600"), ("user-agent", AGENT),
        ("content-type", "application/json")]) for ms, seconds in TIMEOUTS],
    *[("kimi-coding", "k3", "anthropic-messages", "high", {"timeoutMs": ms}, "/coding/v1/messages",
       [*timed(ANTHROPIC_SDK, seconds), ("user-agent", AGENT), ("content-type", "application/json")])
      for ms, seconds in TIMEOUTS],
    # openai-responses.js passes the same request options to the same SDK
    *[("openrouter", "deepseek/deepseek-v3.2", "openai-responses", None, {"api": "openai-responses", "timeoutMs": ms},
       "/api/v1/responses", [*timed(OPENAI_SDK, seconds), ("x-session-id", "a-openrouter"), ("user-agent", AGENT),
                             ("content-type", "application/json")]) for ms, seconds in TIMEOUTS],
])
def test_a_catalog_models_headers_reach_the_request_as_pi_ai_sends_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], provider: str,
        model: str, api: str, effort: str | None, profile: dict[str, Any], path: str,
        headers: list[tuple[str, str]]) -> None:
    log = two_turns(tmp_path, provider, model, api, effort=effort)
    routes = routes_file(tmp_path, {provider: {"apiKeyEnv": "KEY", **profile}})
    output, _ = rendered(monkeypatch, capsys, str(log), "0", "--routes", routes, "--headers")
    assert header_lines(output) == (f"POST {path}", headers)


def test_the_kimi_catalog_body_is_pi_ais(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """kimi-coding speaks anthropic-messages at its own base URL with its compat (adaptive thinking)."""
    log = two_turns(tmp_path, "kimi-coding", "k3", "anthropic-messages")
    routes = routes_file(tmp_path, {"kimi-coding": {"apiKeyEnv": "KEY"}})
    assert rendered(monkeypatch, capsys, str(log), "0", "--routes", routes)[0] == (
        '{"model":"k3","messages":[{"role":"user","content":[{"type":"text","text":"Hi.","cache_control":'
        '{"type":"ephemeral"}}]}],"max_tokens":131072,"stream":true,"system":[{"type":"text","text":'
        '"You are a helpful coding agent.","cache_control":{"type":"ephemeral"}}],"tools":[{"name":"read",'
        '"description":"Read a file.","eager_input_streaming":true,"input_schema":{"type":"object","properties":'
        '{"path":{"type":"string"}},"required":["path"]},"cache_control":{"type":"ephemeral"}}],'
        '"thinking":{"type":"adaptive","display":"summarized"},"output_config":{"effort":"high"}}')


# --- APIs with no wire format here -----------------------------------------------------------------


@pytest.mark.parametrize(("provider", "model", "api"), [
    ("amazon-bedrock", "amazon.nova-pro-v1:0", "bedrock-converse-stream"),
    ("google", "gemini-2.5-pro", "google-generative-ai"),
    # its catalog entries' baseUrl is empty (pi-ai resolves it from the environment); DSH keeps it (``??``)
    ("azure-openai-responses", "gpt-5", "azure-openai-responses"),
])
def test_a_catalog_route_in_a_format_dsh_audit_does_not_write_is_a_known_route_with_no_wire_format(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], provider: str,
        model: str, api: str) -> None:
    log = two_turns(tmp_path, provider, model, api, effort=None)
    routes = routes_file(tmp_path, {provider: {}})
    assert dict(parse_routes({"providers": {provider: {}}}).apis) == {provider: api}
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", routes)
    assert (code, out) == (2, "")
    assert err == [
        f"error: {log}:7 seq 5: request 0 cannot be rendered: a known route with no wire format: the route "
        f"configuration (--routes); dsh-audit renders no '{api}' bodies (it renders anthropic-messages, "
        "openai-completions, openai-responses and DeepSeek chat completions) (hint: no option renders it: DSH sent "
        "it in a format dsh-audit does not write, and --adapter would write another)"]
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", routes, "--adapter", "openai")
    assert (code, out) == (2, "")
    assert err == [f"error: {log}:7 seq 5: {provider}/{model} speaks {api}, not openai-completions (hint: a known "
                   f"route with no wire format: dsh-audit writes no {api} bodies, and no --adapter renders it)"]


# --- a catalog route switched to another API ---------------------------------------------------------

OR_RESPONSES_BODY = (
    '{"model":"deepseek/deepseek-v3.2","input":[{"role":"system","content":"You are a helpful coding agent."},'
    '{"role":"user","content":[{"type":"input_text","text":"Hi."}]}],"stream":true,"prompt_cache_key":"a-openrouter",'
    '"store":false,"max_output_tokens":65536,"tools":[{"type":"function","name":"read","description":"Read a file.",'
    '"parameters":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}}],'
    '"reasoning":{"effort":"high","summary":"auto"},"include":["reasoning.encrypted_content"]}')


def test_an_api_repoint_with_no_compat_configured_keeps_the_catalog_entrys_compat(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """DSH ``resolveModelCompat`` returns ``{}`` when no compat is configured, so the catalog entry's
    ``compat`` (``supportsDeveloperRole: false``) survives ``...base`` on an ``openai-responses``
    repoint: pi-ai sends the system prompt as ``system``, not ``developer``."""
    log = two_turns(tmp_path, "openrouter", "deepseek/deepseek-v3.2", "openai-responses")
    routes = routes_file(tmp_path, {"openrouter": {"api": "openai-responses"}})
    assert rendered(monkeypatch, capsys, str(log), "0", "--routes", routes)[0] == OR_RESPONSES_BODY


def test_an_api_repoint_with_compat_configured_starts_from_it_alone() -> None:
    def compat(route: dict[str, Any]) -> dict[str, Any]:
        return dict(parse_routes({"providers": {"openrouter": route}}).models["openrouter", "deepseek/deepseek-v3.2"]
                    .compat)
    catalog = {"supportsDeveloperRole": False, "thinkingFormat": "openrouter"}
    assert compat({"api": "openai-responses"}) == catalog
    assert compat({"api": "openai-responses", "compat": {"supportsStrictMode": True}}) == {"supportsStrictMode": True}
    assert compat({"compat": {"supportsStrictMode": True}}) == {**catalog, "supportsStrictMode": True}
    assert compat({"models": [{"id": "deepseek/deepseek-v3.2", "compat": {"maxTokensField": "max_tokens"}}]}) == {
        **catalog, "maxTokensField": "max_tokens"}


# --- the packaged data --------------------------------------------------------------------------------


def test_the_catalog_holds_every_provider_and_model_of_pi_ai_0_82_1() -> None:
    assert len(PIAI_CATALOG) == 1109
    providers = sorted({provider for provider, _ in PIAI_CATALOG})
    assert len(providers) == 37
    assert {provider: len(catalog_models(provider)) for provider in ("zai", "github-copilot", "amazon-bedrock",
                                                                     "vercel-ai-gateway", "openrouter")} == {
        "zai": 6, "github-copilot": 29, "amazon-bedrock": 114, "vercel-ai-gateway": 192, "openrouter": 276}
    assert len(BUILTIN_MODELS) == 331 and set(BUILTIN_MODELS) < set(PIAI_CATALOG)
    assert sum(1 for model in PIAI_CATALOG.values() if model.headers) == 51
    source = catalog_source()
    assert (source["package"], source["version"], source["tarball"], source["catalogGeneratedAt"]) == (
        "@earendil-works/pi-ai", "0.82.1", "https://registry.npmjs.org/@earendil-works/pi-ai/-/pi-ai-0.82.1.tgz",
        "2026-07-25T12:44:19.521Z")
    assert catalog_models("no-such-provider") == {} and ("zai", "nope") not in PIAI_CATALOG


@pytest.mark.parametrize(("key", "facts"), [
    # (api, baseUrl, contextWindow, maxTokens, reasoning, input, thinkingLevelMap, compat, headers): pi-ai's data
    (("zai", "glm-5.1"), ("openai-completions", "https://api.z.ai/api/coding/paas/v4", 200000, 131072, True,
                          ("text",), None, {"supportsStore": False, "supportsDeveloperRole": False,
                                            "supportsReasoningEffort": False, "thinkingFormat": "zai",
                                            "zaiToolStream": True}, ())),
    (("kimi-coding", "k3"), ("anthropic-messages", "https://api.kimi.com/coding", 1048576, 131072, True,
                             ("text", "image"), {"off": None, "minimal": None, "low": "low", "medium": None,
                                                 "high": "high", "xhigh": None, "max": "max"},
                             {"allowEmptySignature": True, "forceAdaptiveThinking": True},
                             (("User-Agent", "KimiCLI/1.5"),))),
    (("github-copilot", "claude-sonnet-4.5"), (
        "anthropic-messages", "https://api.individual.githubcopilot.com", 200000, 32000, True, ("text", "image"),
        None, {"supportsEagerToolInputStreaming": False},
        (("User-Agent", "GitHubCopilotChat/0.35.0"), ("Editor-Version", "vscode/1.107.0"),
         ("Editor-Plugin-Version", "copilot-chat/0.35.0"), ("Copilot-Integration-Id", "vscode-chat")))),
    (("amazon-bedrock", "amazon.nova-pro-v1:0"), ("bedrock-converse-stream",
                                                  "https://bedrock-runtime.us-east-1.amazonaws.com", 300000, 8192,
                                                  False, ("text", "image"), None, {}, ())),
    (("fireworks", "accounts/fireworks/models/kimi-k2p6"), (
        "anthropic-messages", "https://api.fireworks.ai/inference", 262000, 262000, True, ("text", "image"), None,
        {"sendSessionAffinityHeaders": True, "supportsEagerToolInputStreaming": False,
         "supportsCacheControlOnTools": False, "supportsLongCacheRetention": False}, ())),
    (("deepseek", "deepseek-v4-pro"), ("openai-completions", "https://api.deepseek.com", 1000000, 384000, True,
                                       ("text",), {"minimal": None, "low": None, "medium": None, "high": "high",
                                                   "max": "max"},
                                       {"supportsStore": False, "supportsDeveloperRole": False,
                                        "requiresReasoningContentOnAssistantMessages": True,
                                        "thinkingFormat": "deepseek"}, ())),
])
def test_sampled_entries_are_pi_ais_field_by_field(key: tuple[str, str], facts: tuple[Any, ...]) -> None:
    model = resolve_model(*key)
    assert model is PIAI_CATALOG[key]
    assert (model.provider, model.id) == key and model.profile is None
    assert (model.api, model.base_url, model.context_window, model.max_tokens, model.reasoning, model.input,
            None if model.thinking_level_map is None else dict(model.thinking_level_map), dict(model.compat),
            model.headers) == facts


def test_each_providers_own_base_url_and_api() -> None:
    """``createProvider({baseUrl})`` of ``dist/providers/<id>.js``; None where the factory names none."""
    assert [catalog_base_url(p) for p in ("zai", "kimi-coding", "fireworks", "openrouter", "amazon-bedrock",
                                          "opencode", "no-such-provider")] == [
        "https://api.z.ai/api/coding/paas/v4", "https://api.kimi.com/coding", "https://api.fireworks.ai/inference",
        "https://openrouter.ai/api/v1", None, None, None]
    assert [catalog_api(p) for p in ("zai", "kimi-coding", "google", "github-copilot", "no-such-provider")] == [
        "openai-completions", "anthropic-messages", "google-generative-ai", None, None]


def test_the_catalog_is_read_on_first_use_only() -> None:
    """Loading the CLI and the wire package reads no catalog; the first look-up reads it once."""
    script = ("import dsh_audit.cli, dsh_audit.wire, dsh_audit.session\n"
              "from dsh_audit.wire import _piai_catalog as m\n"
              "before = m._catalog.cache_info().currsize\n"
              "m.BUILTIN_MODELS.get(('anthropic', 'claude-opus-4-6')); m.PIAI_CATALOG.get(('zai', 'glm-5.1'))\n"
              "print(before, m._catalog.cache_info().misses, m.CATALOG_FILE)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                            cwd=Path(__file__).resolve().parent)
    assert result.stdout == f"0 1 {CATALOG_FILE}\n"
