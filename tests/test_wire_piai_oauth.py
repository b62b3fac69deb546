"""Anthropic OAuth keys on pi-ai routes (issue 12): pi-ai's Claude Code mode, byte for byte.

pi-ai 0.82.1 sends another body and other headers when its key is an Anthropic OAuth token
(``sk-ant-oat…``): the Claude Code identity block, Claude Code's tool names, Claude Code's betas,
``x-app: cli``, no session affinity. The log does not record the key, so a route file says it
(``dshAudit: {keyType: oauth}``); ``tests/data/piai_oracle/oauth`` holds pi-ai's own requests for
four sessions (recorded once; no test runs Node). A capture made with the other key type is
``different`` with a hint naming that setting (:func:`dsh_audit.wire._anthropic_oauth.key_type_conflict`).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.session import route_renderer
from dsh_audit.wire import make_renderer
from dsh_audit.wire._anthropic_oauth import (CLAUDE_CODE_IDENTITY, KeyedRouteProfile, claude_code_name,
                                             key_type_conflict, uses_oauth)
from dsh_audit.wire._piai_routes import parse_routes

from _cli import invoke
from test_routes46 import routes_as_given
from test_wire_piai_oracle import _diff, opened, options_for, pi_requests

ORACLE = Path(__file__).parent / "data" / "piai_oracle" / "oauth"
CASES = sorted(p.stem for p in ORACLE.glob("*.json"))
RUNTIME = "x-stainless-runtime-version"
IDENTITY = b'"system":[{"type":"text","text":"You are Claude Code, Anthropic\'s official CLI for Claude."'


def load(case: str) -> dict[str, Any]:
    return json.loads((ORACLE / f"{case}.json").read_text("utf-8"))


def test_the_oauth_set_is_whole() -> None:
    assert CASES == ["oauth-gateway", "oauth-retention-long", "oauth-retention-none", "oauth-tools"]
    records = [load(case) for case in CASES]
    assert [len(r["requests"]) for r in records] == [5, 5, 5, 7]
    assert {r["pi_ai"] for r in records} == {"0.82.1"}
    assert all(r["routes"] is not None for r in records)
    for record in records:
        assert {route["dshAudit"]["keyType"] for route in record["routes"]["providers"].values()} == {"oauth"}
        for q in record["requests"]:
            assert q["pi_ai_model"]["api"] == "anthropic-messages" and "apiKey" not in q["pi_ai_options"]
            assert IDENTITY in q["body"].encode("utf-8")
            assert dict(q["headers"])["x-app"] == "cli"


@pytest.mark.parametrize("case", CASES)
def test_every_oauth_request_is_pi_ais_byte_for_byte(case: str, tmp_path: Path) -> None:
    """Each body as ``render``, ``diff`` and ``check`` write it (the session's route), and the path
    and header set of the session's shared renderer."""
    record = load(case)
    session = opened(record, tmp_path)
    requests = pi_requests(session)
    assert [(r.index, r.kind) for r in requests] == [(q["index"], q["kind"]) for q in record["requests"]]
    run = route_renderer([session])
    renderer = session.bodies._renderer("anthropic")
    for request, expected in zip(requests, record["requests"]):
        ours, theirs = run(request, options_for(record, request)), expected["body"].encode("utf-8")
        assert ours == theirs, f"{case} request {request.index}: " + _diff(ours, theirs)
        wire = renderer.render(request, **options_for(record, request))
        assert (wire.method, wire.path, wire.body) == (expected["method"], expected["path"], theirs)
        assert [[k, v] for k, v in wire.headers if k != RUNTIME] == expected["headers"], request.index


def test_the_claude_code_names_and_headers_of_one_request(tmp_path: Path) -> None:
    """What the oracle bodies show, named: the identity first, renamed tools, Claude Code's headers."""
    record = load("oauth-tools")
    session = opened(record, tmp_path)
    request = pi_requests(session)[2]
    wire = session.bodies._renderer("anthropic").render(request)
    body = json.loads(wire.body)
    assert body["system"] == [
        {"type": "text", "text": CLAUDE_CODE_IDENTITY, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": "You are a helpful coding agent.", "cache_control": {"type": "ephemeral"}}]
    assert [t["name"] for t in body["tools"]] == ["Read", "Bash", "TodoWrite", "web_fetch", "Grep"]
    assert [b["name"] for m in body["messages"] if m["role"] == "assistant" for b in m["content"]
            if b["type"] == "tool_use"] == ["Read", "Bash", "TodoWrite", "web_fetch", "Grep"]
    headers = [(k, v) for k, v in wire.headers if k != RUNTIME]
    assert headers[-5:] == [
        ("anthropic-dangerous-direct-browser-access", "true"),
        ("anthropic-beta", "claude-code-20250219,oauth-2025-04-20,interleaved-thinking-2025-05-14"),
        ("user-agent", "deepseek-harness/0.1.0-rc.8 (+https://github.com/deepseek-ai/deepseek-harness)"),
        ("x-app", "cli"), ("content-type", "application/json")]
    assert not any(k in ("authorization", "x-api-key") for k, _ in headers)


@pytest.mark.parametrize("case", CASES)
def test_without_the_setting_every_body_is_the_api_key_one(case: str, tmp_path: Path) -> None:
    """The same route file without ``dshAudit`` renders pi-ai's API-key mode: no request matches."""
    record = copy.deepcopy(load(case))
    for route in record["routes"]["providers"].values():
        del route["dshAudit"]
    session = opened(record, tmp_path)
    run = route_renderer([session])
    for request, expected in zip(pi_requests(session), record["requests"]):
        ours = run(request, options_for(record, request))
        assert IDENTITY not in ours and ours != expected["body"].encode("utf-8")
        headers = dict(session.bodies._renderer("anthropic").render(request, **options_for(record, request)).headers)
        assert "x-app" not in headers and "oauth-2025-04-20" not in headers.get("anthropic-beta", "")


def test_the_route_setting_is_read_and_checked() -> None:
    routes = parse_routes({"providers": {"anthropic": {"dshAudit": {"keyType": "oauth"}, "reasoning": "low"},
                                         "github-copilot": {"dshAudit": {"keyType": "oauth"}},
                                         "openrouter": {"dshAudit": {"keyType": "api-key"}}}})
    claude = routes.models[("anthropic", "claude-sonnet-4-5")]
    assert claude.profile == KeyedRouteProfile(reasoning="low", key_type="oauth")
    assert uses_oauth(claude)
    # pi-ai builds GitHub Copilot's client before it looks at the key: never OAuth mode there
    assert not uses_oauth(routes.models[("github-copilot", "claude-sonnet-4.5")])
    assert not uses_oauth(routes.models[("openrouter", "anthropic/claude-sonnet-4.6")])
    assert parse_routes({"providers": {"anthropic": {"reasoning": "low"}}}).models[
        ("anthropic", "claude-sonnet-4-5")].profile.__class__.__name__ == "RouteProfile"


@pytest.mark.parametrize(("setting", "message"), [
    ({"keyType": "bearer"}, "route file: providers.anthropic.dshAudit.keyType: must be one of api-key, oauth "
                            "(the kind of key DSH gave pi-ai)"),
    ({"keytype": "oauth"}, "route file: providers.anthropic.dshAudit.keytype: is not a dsh-audit route setting "
                           "(known: keyType)"),
    ("oauth", "route file: providers.anthropic.dshAudit: must be a mapping of dsh-audit route settings (keyType)"),
])
def test_a_bad_setting_stops_render_naming_the_key(setting: Any, message: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    record = load("oauth-tools")
    log = tmp_path / "session.jsonl"
    log.write_text("".join(line + "\n" for line in record["log"]), "utf-8")
    routes = tmp_path / "routes.yml"
    routes.write_text(json.dumps({"providers": {"anthropic": {"dshAudit": setting}}}), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(routes))
    assert (code, out) == (2, "")
    assert err == [f"error: {routes}: {message} (hint: write the route's `dshAudit: {{keyType: oauth}}` or "
                   "`dshAudit: {keyType: api-key}` (docs/routes.md section 7.2) in the file given as --routes FILE)"]


def test_render_headers_shows_the_oauth_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    record = load("oauth-tools")
    log = tmp_path / "session.jsonl"
    log.write_text("".join(line + "\n" for line in record["log"]), "utf-8")
    routes = tmp_path / "routes.yml"
    routes.write_text("providers:\n  anthropic:\n    dshAudit:\n      keyType: oauth\n", "utf-8")
    code, out, _ = invoke(monkeypatch, capsys, "render", str(log), "3", "--routes", str(routes), "--headers")
    assert code == 0
    head, body = out.split("\n\n", 1)
    expected = record["requests"][3]
    assert (expected["kind"], body) == ("title", expected["body"])
    assert head.splitlines()[0] == "POST /v1/messages"
    assert [line.split(": ", 1) for line in head.splitlines()[1:] if not line.startswith(RUNTIME)] \
        == expected["headers"]


def test_claude_code_names() -> None:
    assert [claude_code_name(n) for n in ("read", "WRITE", "edit", "bash", "grep", "glob", "askuserquestion",
                                          "enterplanmode", "exitplanmode", "killshell", "notebookedit", "skill",
                                          "task", "taskoutput", "todowrite", "webfetch", "websearch")] == [
        "Read", "Write", "Edit", "Bash", "Grep", "Glob", "AskUserQuestion", "EnterPlanMode", "ExitPlanMode",
        "KillShell", "NotebookEdit", "Skill", "Task", "TaskOutput", "TodoWrite", "WebFetch", "WebSearch"]
    assert [claude_code_name(n) for n in ("web_fetch", "read_file", "todo_write", "")] == \
        ["web_fetch", "read_file", "todo_write", ""]


def test_a_capture_of_the_other_key_type_gets_a_hint_naming_the_setting() -> None:
    oauth = load("oauth-tools")["requests"][0]
    sent, headers = oauth["body"].encode("utf-8"), dict(oauth["headers"])
    api_key = sent.replace(IDENTITY[:-1] + b'","cache_control":{"type":"ephemeral"}},{"type":"text","text":"',
                           b'"system":[{"type":"text","text":"')
    assert IDENTITY not in api_key
    assert key_type_conflict(api_key, sent, headers) == (
        "the capture was sent with an Anthropic OAuth token (the Claude Code identity block, anthropic-beta "
        "oauth-2025-04-20), rendered for an API key: give --routes FILE the route's `dshAudit: {keyType: oauth}`")
    assert key_type_conflict(sent, api_key, {"anthropic-beta": "interleaved-thinking-2025-05-14"}) == (
        "the capture was sent with an Anthropic API key, rendered for an OAuth token: remove the route's "
        "`dshAudit: {keyType: oauth}` from --routes FILE")
    # the beta alone tells it (a capture whose body differs elsewhere too)
    assert key_type_conflict(api_key, api_key, {"anthropic-beta": "claude-code-20250219,oauth-2025-04-20"}) \
        is not None
    assert key_type_conflict(sent, sent, headers) is None
    assert key_type_conflict(api_key, api_key, {}) is None


@pytest.mark.parametrize("case", CASES)
def test_a_render_for_a_given_key_type_is_pi_ais(case: str, tmp_path: Path) -> None:
    """``key_type`` per request (what ``diff`` passes for a capture's key) and per renderer: the
    route file then needs no ``dshAudit``; the API-key bodies in between are unchanged."""
    record = copy.deepcopy(load(case))
    for route in record["routes"]["providers"].values():
        del route["dshAudit"]
    session = opened(record, tmp_path)
    run = route_renderer([session])
    models = routes_as_given(record["routes"]).models  # oauth-retention-long: a route file DSH refuses
    keyed = make_renderer("anthropic", models=models, key_type="oauth")
    for request, expected in zip(pi_requests(session), record["requests"]):
        theirs = expected["body"].encode("utf-8")
        options = options_for(record, request)
        assert run(request, {**options, "key_type": "oauth"}) == theirs
        assert IDENTITY not in run(request, options)
        assert keyed.render(request, **options).body == theirs
        assert run(request, {**options, "key_type": "api-key"}) == run(request, options)


def test_a_renderer_refuses_an_unknown_key_type() -> None:
    with pytest.raises(ValueError, match="key_type must be one of api-key, oauth, not 'bearer'"):
        make_renderer("anthropic", key_type="bearer")
