"""Divergences a randomized differential against pi-ai 0.82.1's real ``streamSimple`` found (session 33).

Random DSH sessions (``dsh_audit.testing.LogBuilder`` and ``dsh_audit.strategies.sessions()``) over the
Anthropic, DeepSeek, OpenAI and OpenRouter catalog routes, every other catalog provider, and
hand-declared routes of the three APIs were rendered by dsh-audit and by pi-ai (Node, outside this
repository, as ``tests/data/piai_oracle/README.md`` describes). Each class found is pinned here or
by a recorded case (``copilot-dynamic-headers``); no test runs Node.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

import dsh_audit
from dsh_audit.errors import RenderError
from dsh_audit.jsjson import stringify
from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder, tool_schema
from dsh_audit.wire._anthropic import AnthropicRenderer
from dsh_audit.wire._openai import OpenAIRenderer
from dsh_audit.wire._piai_facts import PiModel
from dsh_audit.wire._responses import ResponsesRenderer

from test_routes46 import routes_as_given

READ = tool_schema("read", "Read a file.", {"path": {"type": "string"}})
ABSENT = object()


def _request(tmp_path: Path, provider: str, model: str, api: str, parameters: Any) -> Any:
    bare: dict[str, Any] = {"name": "bare", "description": "no schema"}
    if parameters is not ABSENT:
        bare["parameters"] = parameters
    b = LogBuilder(session_id="o-bare", provider=provider, model=model, system="Be brief.", tools=[READ, bare],
                   reasoning_effort="high", max_tokens=None, context_window=None)
    with b.turn("Hi."):
        with b.step():
            seq = b.assistant("Hello.").seq
            assert seq is not None
            b.event(seq)["data"]["message"]["source"]["replayState"] = {
                "response": {"kind": "pi-ai", "version": 2, "api": api, "provider": provider, "model": model,
                             "stopReason": "stop"}, "blocks": [{"type": "text"}]}
    return next(iter(dsh_audit.requests(dsh_audit.load(b.write_jsonl(tmp_path / "session.jsonl")))))


@pytest.mark.parametrize(("parameters", "shown"), [(ABSENT, "undefined"), (None, "null")])
def test_an_anthropic_tool_without_a_schema_is_refused_as_pi_ai_throws(parameters: Any, shown: str,
                                                                       tmp_path: Path) -> None:
    """anthropic-messages.js ``convertTools`` reads ``tool.parameters.properties`` of every tool:
    pi-ai throws ``TypeError: Cannot read properties of undefined (reading 'properties')`` (or of
    null) and sends nothing. dsh-audit rendered such a request with an empty schema."""
    request = _request(tmp_path, "anthropic", "claude-sonnet-4-5", "anthropic-messages", parameters)
    with pytest.raises(RenderError) as caught:
        AnthropicRenderer().render(request)
    assert (caught.value.dsh_code, caught.value.seq) == ("TypeError", request.header_seq)
    assert str(caught.value) == (
        f"<input> seq {request.header_seq}: the header's tool 'bare' has no parameters schema; pi-ai's Anthropic "
        f"adapter reads its properties and throws (TypeError: Cannot read properties of {shown}), so DSH could not "
        "have sent this request (hint: the log was edited or damaged; `dsh-audit validate` lists what else is wrong "
        "in it)")


_LOCAL = PiModel(provider="local-openai", id="local-coder", api="openai-completions",
                 base_url="http://127.0.0.1:18302/v1", context_window=262144, max_tokens=32768, reasoning=True,
                 thinking_level_map={"off": None, "minimal": None, "low": None, "medium": None, "high": "high"})
_GATEWAY = PiModel(provider="gw-resp", id="gw-model", api="openai-responses", base_url="https://gw.example.com/v1",
                   context_window=262144, max_tokens=32768, reasoning=True,
                   thinking_level_map={"off": None, "minimal": None, "low": None, "medium": None, "high": "high"})


@pytest.mark.parametrize(("parameters", "extra"), [(ABSENT, {}), (None, {"parameters": None})])
def test_the_openai_apis_send_a_tool_without_a_schema_as_pi_ai_does(parameters: Any, extra: dict[str, Any],
                                                                    tmp_path: Path) -> None:
    """The two OpenAI APIs copy ``tool.parameters`` as it is (absent stays absent, null is sent):
    pi-ai 0.82.1's own bodies for the same sessions end with these tools."""
    read = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    chat = _request(tmp_path / "chat", "local-openai", "local-coder", "openai-completions", parameters)
    body = OpenAIRenderer(models={("local-openai", "local-coder"): _LOCAL}).render(chat).body.decode()
    assert body.endswith(stringify({"tools": [
        {"type": "function", "function": {"name": "read", "description": "Read a file.", "parameters": read,
                                          "strict": False}},
        {"type": "function", "function": {"name": "bare", "description": "no schema", **extra, "strict": False}}],
        "reasoning_effort": "high"})[1:])
    responses = _request(tmp_path / "resp", "gw-resp", "gw-model", "openai-responses", parameters)
    body = ResponsesRenderer(models={("gw-resp", "gw-model"): _GATEWAY}).render(responses).body.decode()
    assert body.endswith(stringify({"tools": [
        {"type": "function", "name": "read", "description": "Read a file.", "parameters": read},
        {"type": "function", "name": "bare", "description": "no schema", **extra}],
        "reasoning": {"effort": "high", "summary": "auto"}, "include": ["reasoning.encrypted_content"]})[1:])


_COPILOT_SDK = [("x-stainless-os", "Linux"), ("x-stainless-arch", "x64"), ("x-stainless-runtime", "node")]
_EDITOR = [("editor-version", "vscode/1.107.0"), ("editor-plugin-version", "copilot-chat/0.35.0"),
           ("copilot-integration-id", "vscode-chat")]
_AGENT = ("user-agent", "deepseek-harness/0.1.0-rc.8 (+https://github.com/deepseek-ai/deepseek-harness)")


def test_copilot_headers_take_a_profile_override_in_place_and_no_anthropic_affinity(tmp_path: Path) -> None:
    """The ``copilot-dynamic-headers`` session on a github-copilot route file that overrides
    ``X-Initiator`` (same spelling: ``Object.assign`` keeps its place) and asks for session affinity:
    the Anthropic client of github-copilot sends none (``anthropic-messages.js`` ``createClient``),
    the OpenAI client does. The header lists are pi-ai 0.82.1's own for this session."""
    record = json.loads((Path(__file__).parent / "data" / "piai_oracle" / "copilot-dynamic-headers.json")
                        .read_text("utf-8"))
    path = tmp_path / "session.jsonl"
    path.write_text("".join(line + "\n" for line in record["log"]), "utf-8")
    session = open_session(path)
    # sendSessionAffinityHeaders: withheld from DSH's route files (test_routes46.py), laid on the models
    session.use_routes(routes_as_given({"providers": {"github-copilot": {
        "compat": {"sendSessionAffinityHeaders": True}, "headers": {"X-Initiator": "mine", "x-b": "b"}}}}))
    images = {key: base64.b64decode(data) for key, data in record["images"].items()}
    wires = [session.bodies._renderer(session.route(r).adapter).render(r, images=images) for r in session.requests[:6]]
    stainless = [("x-stainless-retry-count", "0"), ("x-stainless-timeout", "600"), ("x-stainless-lang", "js"),
                 ("x-stainless-package-version", "0.91.1"), *_COPILOT_SDK]
    assert [h for h in wires[0].headers if h[0] != "x-stainless-runtime-version"] == [
        *stainless, ("anthropic-version", "2023-06-01"), ("accept", "application/json"),
        ("anthropic-dangerous-direct-browser-access", "true"),
        ("anthropic-beta", "fine-grained-tool-streaming-2025-05-14,interleaved-thinking-2025-05-14"), *_EDITOR,
        ("x-initiator", "mine"), ("openai-intent", "conversation-edits"), ("x-b", "b"), _AGENT,
        ("content-type", "application/json")]
    assert [h for h in wires[5].headers if h[0] != "x-stainless-runtime-version"] == [
        ("accept", "application/json"), ("x-stainless-retry-count", "0"), ("x-stainless-lang", "js"),
        ("x-stainless-package-version", "6.26.0"), *_COPILOT_SDK, *_EDITOR, ("x-initiator", "mine"),
        ("openai-intent", "conversation-edits"), ("copilot-vision-request", "true"), ("session_id", "o-copilot"),
        ("x-client-request-id", "o-copilot"), ("x-session-affinity", "o-copilot"), ("x-b", "b"), _AGENT,
        ("content-type", "application/json")]
