"""Routes, round 31: DSH's compat gate, catalog providers whose models speak several APIs, and
base URL placeholders.

- **Compat gate** (DSH ``llm-pi-ai/src/catalog.ts:235-320, 744-775, 903-911``): a route-level
  compat switch lands only on the models whose API's compat type declares it; a model's own switch
  of another API, and a route switch no model of the route can read, are refused.
- **Several APIs on one catalog route** (``fireworks``, ``github-copilot``, ``opencode``,
  ``cloudflare-ai-gateway``, ``xai``, ``opencode-go``): DSH gives each model its catalog entry's
  API (``catalog.ts:858``, ``request.api ?? base?.api ?? routeApi``), so the model id decides; only
  the model's own replay envelope (on its ``assistant/message`` or ``finish`` chunk) shows the API
  of a model pi-ai's catalog lacks, and without one the request is ``unrendered``.
- **Placeholders** in pi-ai's Cloudflare base URLs (``{CLOUDFLARE_ACCOUNT_ID}``) are filled by pi-ai
  from DSH's environment at send time (``dist/providers/cloudflare-stream.js:3-10``): the body does
  not depend on them, and the rendered path keeps them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _cli import invoke
from dsh_audit.session import open_session, route_for
from dsh_audit.testing import LogBuilder
from dsh_audit.wire import PIAI_CATALOG
from dsh_audit.wire._piai_routes import parse_routes

SYSTEM = "You are terse."
ROUTES_HINT = "(hint: see DSH's llm-pi-ai configuration: providers.<id>.api, baseURL, models)"


def envelope(b: LogBuilder, reply_seq: int, api: str, provider: str, model: str) -> None:
    """Put pi-ai's replay envelope on the ``assistant/message`` at ``reply_seq``."""
    message = b.event(reply_seq)["data"]["message"]
    message["source"]["replayState"] = {
        "response": {"kind": "pi-ai", "version": 2, "api": api, "provider": provider, "model": model,
                     "responseId": f"r_{reply_seq}", "stopReason": "stop"},
        "blocks": [{"type": block["type"]} for block in message["content"]]}


def session(path: Path, provider: str, turns: list[tuple[str, str | None]], *, temperature: float | None = None,
            failed: tuple[str, ...] = ()) -> Path:
    """One turn per (model, envelope api) on ``provider``; a None api writes no message envelope
    (so do not mix it with pi-ai turns). Then one failed attempt (no message) per model of ``failed``."""
    b = LogBuilder(session_id="r31", provider=provider, model=turns[0][0] if turns else failed[0], system=SYSTEM,
                   reasoning_effort=None, max_tokens=1000, context_window=None)
    b.configure(temperature=temperature)
    for index, (model, api) in enumerate(turns):
        b.configure(model=model)
        with b.turn(f"Question {index}."), b.step():
            reply = b.assistant(f"Answer {index}.")
            if api is not None and reply.seq is not None:
                envelope(b, reply.seq, api, provider, model)
    for model in failed:
        b.configure(model=model)
        with b.turn("One more."), b.step():
            b.retry(llm_retry=False)
    return b.write_jsonl(path)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def rendered(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], log: Path, index: int,
             *rest: str) -> dict[str, Any]:
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), str(index), *rest)
    assert (code, err) == (0, [])
    body: dict[str, Any] = json.loads(out)
    return body


# -- the compat gate -------------------------------------------------------------------------------

COPILOT = ("claude-sonnet-4.5", "gpt-4.1", "gpt-5.4")  # anthropic-messages, openai-completions, openai-responses


def copilot_routes(compat: str) -> str:
    return ("providers:\n  github-copilot:\n" + compat
            + "    models:\n" + "".join(f"      - id: {model}\n" for model in COPILOT))


def test_a_route_switch_lands_only_on_the_models_whose_api_takes_it() -> None:
    """DSH catalog.ts:751-755: a route-level switch the model's API does not declare is skipped;
    with nothing left for that model, its catalog entry's compat survives whole (``...base``)."""
    routes = parse_routes({"providers": {"github-copilot": {
        "compat": {"supportsStore": False, "supportsTemperature": False, "supportsStrictMode": False},
        "models": [{"id": model} for model in COPILOT]}}})
    compat = {model: dict(routes.models[("github-copilot", model)].compat) for model in COPILOT}
    catalog = {model: dict(PIAI_CATALOG[("github-copilot", model)].compat) for model in COPILOT}
    assert compat == {
        "claude-sonnet-4.5": {**catalog["claude-sonnet-4.5"], "supportsTemperature": False},
        "gpt-4.1": {**catalog["gpt-4.1"], "supportsStore": False, "supportsStrictMode": False},
        "gpt-5.4": {**catalog["gpt-5.4"], "supportsStrictMode": False},
    }
    # a switch only another API takes leaves the model as its catalog entry has it
    only_anthropic = parse_routes({"providers": {"github-copilot": {
        "compat": {"supportsTemperature": False}, "models": [{"id": model} for model in COPILOT]}}})
    assert [dict(only_anthropic.models[("github-copilot", m)].compat) for m in COPILOT[1:]] == \
        [catalog[m] for m in COPILOT[1:]]


def test_bodies_with_a_mixed_route_compat_are_the_ones_each_api_takes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A route file whose compat mixes an Anthropic switch and an OpenAI-completions one, on a
    route serving one model of each API: each body is the body of a route that set only the
    switches its API takes, and that differs from the plain catalog body exactly as pi-ai applies
    them (``anthropic-messages.js``: no ``temperature`` without ``supportsTemperature``;
    ``openai-completions.js``: no ``stream_options`` without ``supportsUsageInStreaming``)."""
    log = session(tmp_path / "s.jsonl", "github-copilot",
                  [(model, api) for model, api in zip(COPILOT, ("anthropic-messages", "openai-completions",
                                                                 "openai-responses"))], temperature=0.5)
    mixed = write(tmp_path / "mixed.yml", copilot_routes(
        "    compat:\n      supportsTemperature: false\n      supportsUsageInStreaming: false\n"))
    own = {0: write(tmp_path / "anthropic.yml", copilot_routes("    compat:\n      supportsTemperature: false\n")),
           1: write(tmp_path / "completions.yml",
                    copilot_routes("    compat:\n      supportsUsageInStreaming: false\n"))}
    plain = write(tmp_path / "plain.yml", copilot_routes(""))
    for index, alone in own.items():
        body = rendered(monkeypatch, capsys, log, index, "--routes", str(mixed))
        assert body == rendered(monkeypatch, capsys, log, index, "--routes", str(alone))
        catalog_body = rendered(monkeypatch, capsys, log, index, "--routes", str(plain))
        dropped = {0: "temperature", 1: "stream_options"}[index]
        assert {k: v for k, v in catalog_body.items() if k != dropped} == body
        assert (dropped, catalog_body[dropped]) == {0: ("temperature", 0.5),
                                                    1: ("stream_options", {"include_usage": True})}[index]
    # the Responses model takes neither switch: its body is the plain one
    assert rendered(monkeypatch, capsys, log, 2, "--routes", str(mixed)) == \
        rendered(monkeypatch, capsys, log, 2, "--routes", str(plain))


@pytest.mark.parametrize(("compat", "error"), [
    # vice versa: a model's own switch of another API is refused (catalog.ts:756-762)
    ("      - id: claude-sonnet-4.5\n        compat: {supportsStore: false}\n",
     "providers.github-copilot.models[0].compat.supportsStore: the model's api is 'anthropic-messages', which does "
     "not take it (DSH's compat gate): that switch exists on openai-completions, and 'anthropic-messages' offers "
     "supportsEagerToolInputStreaming, supportsLongCacheRetention, supportsCacheControlOnTools, supportsTemperature, "
     "forceAdaptiveThinking, allowEmptySignature, supportsStrictTools"),
    ("      - id: gpt-4.1\n        compat: {supportsTemperature: false}\n",
     "providers.github-copilot.models[0].compat.supportsTemperature: the model's api is 'openai-completions', which "
     "does not take it (DSH's compat gate): that switch exists on anthropic-messages, and 'openai-completions' offers "
     "supportsStore, supportsDeveloperRole, supportsReasoningEffort, supportsUsageInStreaming, maxTokensField, "
     "requiresToolResultName, requiresAssistantAfterToolResult, requiresThinkingAsText, "
     "requiresReasoningContentOnAssistantMessages, thinkingFormat, chatTemplateKwargs, supportsStrictMode, "
     "cacheControlFormat, supportsLongCacheRetention"),
])
def test_a_models_own_switch_of_another_api_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], compat: str,
        error: str) -> None:
    log = session(tmp_path / "s.jsonl", "github-copilot", [("gpt-4.1", "openai-completions")])
    routes = write(tmp_path / "r.yml", "providers:\n  github-copilot:\n    models:\n" + compat)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(routes))
    assert (code, out, err) == (2, "", [f"error: {routes}: route file: {error} {ROUTES_HINT}"])


@pytest.mark.parametrize(("route", "error"), [
    # an Anthropic route given an OpenAI-completions switch: no model reads it (catalog.ts:903-911)
    ("  anthropic:\n    compat: {supportsStore: false}\n    models:\n      - id: claude-sonnet-4-5\n",
     "providers.anthropic.compat.supportsStore: no model on the route speaks an api that takes it (it exists on "
     "openai-completions; the route's models speak anthropic-messages)"),
    # Anthropic's catalog repointed at openai-completions, given an Anthropic switch
    ("  anthropic:\n    api: openai-completions\n    compat: {supportsTemperature: false}\n"
     "    models:\n      - id: claude-sonnet-4-5\n",
     "providers.anthropic.compat.supportsTemperature: no model on the route speaks an api that takes it (it exists "
     "on anthropic-messages; the route's models speak openai-completions)"),
])
def test_a_route_switch_no_model_reads_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], route: str,
        error: str) -> None:
    log = session(tmp_path / "s.jsonl", "anthropic", [("claude-sonnet-4-5", "anthropic-messages")])
    routes = write(tmp_path / "r.yml", "providers:\n" + route)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(routes))
    assert (code, out, err) == (2, "", [f"error: {routes}: route file: {error} {ROUTES_HINT}"])


def test_an_empty_switch_is_not_configured_so_a_repointed_model_keeps_its_entrys_compat() -> None:
    """DSH ``configuredCompatEntries`` (catalog.ts:464-470) drops ``chatTemplateKwargs: {}``; with
    nothing configured, ``resolveModelCompat`` returns nothing and the entry's compat survives
    through ``...base`` even on an api repoint (catalog.ts:766, 888)."""
    entry = dict(PIAI_CATALOG[("anthropic", "claude-sonnet-4-5")].compat)
    assert entry  # the entry has compat to keep
    routes = parse_routes({"providers": {"anthropic": {
        "api": "openai-completions", "compat": {"chatTemplateKwargs": {}}, "models": [{"id": "claude-sonnet-4-5"}]}}})
    assert dict(routes.models[("anthropic", "claude-sonnet-4-5")].compat) == entry
    repointed = parse_routes({"providers": {"anthropic": {
        "api": "openai-completions", "compat": {"supportsStore": False}, "models": [{"id": "claude-sonnet-4-5"}]}}})
    assert dict(repointed.models[("anthropic", "claude-sonnet-4-5")].compat) == {"supportsStore": False}


# -- catalog routes whose models speak several APIs ------------------------------------------------

def test_the_model_id_decides_on_a_catalog_route_of_several_apis() -> None:
    """No envelope, no route file: each catalog model takes its own entry's API (catalog.ts:858)."""
    assert [(r.adapter, r.api, r.because) for r in (
        route_for("github-copilot", model="claude-sonnet-4.5"), route_for("github-copilot", model="gpt-4.1"),
        route_for("xai", model="grok-4.5"), route_for("fireworks", model="accounts/fireworks/models/glm-5p2"),
        route_for("opencode", model="gemini-3-flash"))] == [
        ("anthropic", "anthropic-messages", "pi-ai's catalog entry of github-copilot/claude-sonnet-4.5"),
        ("openai", "openai-completions", "pi-ai's catalog entry of github-copilot/gpt-4.1"),
        ("responses", "openai-responses", "pi-ai's catalog entry of xai/grok-4.5"),
        ("openai", "openai-completions", "pi-ai's catalog entry of fireworks/accounts/fireworks/models/glm-5p2"),
        (None, "google-generative-ai", "pi-ai's catalog entry of opencode/gemini-3-flash; dsh-audit renders no "
         "'google-generative-ai' bodies (it renders anthropic-messages, openai-completions, openai-responses and "
         "DeepSeek chat completions)")]


def test_a_session_switching_models_on_github_copilot_takes_each_models_api(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """One envelope per model: every request goes out in its own model's format (the first
    model's envelope no longer decides for the provider)."""
    log = session(tmp_path / "s.jsonl", "github-copilot",
                  [("claude-sonnet-4.5", "anthropic-messages"), ("gpt-4.1", "openai-completions"),
                   ("gpt-5.4", "openai-responses"), ("claude-sonnet-4.5", "anthropic-messages")])
    s = open_session(log)
    assert [(s.route(r).adapter, s.route(r).because) for r in s.requests] == [
        ("anthropic", "pi-ai's replay envelope at seq 12"), ("openai", "pi-ai's replay envelope at seq 27"),
        ("responses", "pi-ai's replay envelope at seq 42"), ("anthropic", "pi-ai's replay envelope at seq 12")]
    paths = []
    for index in range(4):
        code, out, err = invoke(monkeypatch, capsys, "render", str(log), str(index), "--headers")
        assert (code, err) == (0, [])
        paths.append(out.splitlines()[0])
    assert paths == ["POST /v1/messages", "POST /chat/completions", "POST /responses", "POST /v1/messages"]


def test_a_model_pi_ai_lacks_is_settled_by_its_own_envelope_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``gpt-9`` is in no catalog: another model's envelope does not say which API it speaks, and
    its failed attempt (no message) is ``unrendered`` with the reason and both options; a
    catalog model's failed attempt is routed by its catalog entry."""
    log = session(tmp_path / "s.jsonl", "github-copilot", [("claude-sonnet-4.5", "anthropic-messages")],
                  failed=("gpt-9", "gpt-4.1"))
    s = open_session(log)
    assert [(r.index, (r.header or {})["config"]["model"]) for r in s.requests] == \
        [(0, "claude-sonnet-4.5"), (1, "gpt-9"), (2, "gpt-4.1")]
    reason = ("provider 'github-copilot': its pi-ai catalog models speak several APIs (anthropic-messages, "
              "openai-completions, openai-responses), pi-ai's catalog has no github-copilot model 'gpt-9', and the "
              "log shows no message of that model from its adapter (pi-ai's replay envelope at seq 12 is another "
              "model's); pass --routes FILE (DSH's llm-pi-ai route configuration) or --adapter")
    assert [(s.route(r).adapter, s.route(r).because) for r in s.requests] == [
        ("anthropic", "pi-ai's replay envelope at seq 12"), (None, reason),
        ("openai", "pi-ai's catalog entry of github-copilot/gpt-4.1")]
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "1")
    assert (code, out, err) == (2, "", [
        f"error: {log}:22 seq 20: request 1 cannot be rendered: unknown route: {reason} (hint: pass --routes FILE "
        "with the route configuration DSH had, or force a wire format with --adapter "
        "deepseek|anthropic|openai|responses)"])
    # diff: the other requests pair and match; this one is unrendered, never a false 'different'
    captured = []
    for index, path in ((0, "/v1/messages"), (1, "/chat/completions"), (2, "/chat/completions")):
        if index == 1:
            body = json.dumps({"model": "gpt-9", "messages": [{"role": "user", "content": "One more."}],
                               "stream": True})
        else:
            code, out, err = invoke(monkeypatch, capsys, "render", str(log), str(index), "--headers")
            body = out.split("\n\n", 1)[1].rstrip("\n")
        captured.append(json.dumps({"method": "POST", "path": path, "body": body}) + "\n")
    capture = write(tmp_path / "wire.jsonl", "".join(captured))
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(capture), "--json")
    verdicts = [json.loads(line) for line in out.splitlines()]
    assert (code, err) == (1, [])
    assert [(v["index"], v["verdict"], v["note"]) for v in verdicts] == [
        (0, "identical", "order (no session header)"),
        (1, "unrendered", f"order (no session header); cannot render: unknown route: {reason}"),
        (2, "identical", "order (no session header)")]
    # DSH refuses a model its catalog lacks on such a route unless the route names its api
    # (catalog.ts:858-862); a route file that does settles the request
    routes = write(tmp_path / "r.yml", "providers:\n  github-copilot:\n    models:\n      - id: claude-sonnet-4.5\n"
                   "      - id: gpt-9\n        contextWindow: 100000\n        maxTokens: 4000\n")
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "1", "--routes", str(routes))
    assert (code, err) == (2, [
        f"error: {routes}: route file: providers.github-copilot.models[1]: needs an api: the catalog does not describe "
        f"it, so set the route's api {ROUTES_HINT}"])
    # (a route with an api serves every model in it, so a session with Claude's envelope beside it
    # contradicts such a file; alone, gpt-9's request renders by it)
    alone = session(tmp_path / "alone.jsonl", "github-copilot", [], failed=("gpt-9",))
    routes = write(tmp_path / "r.yml", "providers:\n  github-copilot:\n    api: openai-responses\n    models:\n"
                   "      - id: gpt-9\n        contextWindow: 100000\n        maxTokens: 4000\n")
    code, out, err = invoke(monkeypatch, capsys, "render", str(alone), "0", "--routes", str(routes), "--headers")
    assert (code, err, out.splitlines()[0]) == (0, [], "POST /responses")


def test_a_finish_chunks_envelope_settles_a_model_with_no_message(tmp_path: Path) -> None:
    """The successful ``finish`` carries the envelope too (DSH ``llm-pi-ai/src/stream.ts``, spec
    §8.2): a log cut before the attempt's ``assistant/message`` still shows the model's API."""
    b = LogBuilder(session_id="r31", provider="github-copilot", model="gpt-9", system=SYSTEM, reasoning_effort=None,
                   max_tokens=1000, context_window=None)
    with b.turn("Question."), b.step():
        reply = b.assistant("Answer.")
    finish = b.event(reply.chunk_seqs[-1])["data"]["chunk"]
    finish["replayState"] = {"response": {"kind": "pi-ai", "version": 2, "api": "openai-responses",
                                          "provider": "github-copilot", "model": "gpt-9"}, "blocks": []}
    lines = [line for line in b.lines(packed=False) if json.loads(line).get("seq", -1) < reply.seq]
    log = write(tmp_path / "s.jsonl", "".join(line + "\n" for line in lines))
    s = open_session(log)
    assert [(s.route(r).adapter, s.route(r).because) for r in s.requests] == \
        [("responses", f"pi-ai's replay envelope at seq {reply.chunk_seqs[-1]}")]


def test_an_envelope_contradicting_its_models_catalog_entry_is_unknown(tmp_path: Path) -> None:
    """The log says what DSH sent, the catalog entry another API: never a false ``different``."""
    log = session(tmp_path / "s.jsonl", "github-copilot", [("claude-sonnet-4.5", "openai-completions")])
    s = open_session(log)
    assert [(s.route(r).adapter, s.route(r).because) for r in s.requests] == [(None, (
        "provider 'github-copilot': pi-ai's replay envelope at seq 12 shows api 'openai-completions' but pi-ai's "
        "catalog says 'anthropic-messages'; pass --routes FILE with the route configuration DSH had, or --adapter"))]


# -- base URL placeholders -------------------------------------------------------------------------

@pytest.mark.parametrize(("provider", "model", "api", "path"), [
    ("cloudflare-ai-gateway", "claude-sonnet-4-5", "anthropic-messages",
     "POST /v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/anthropic/v1/messages"),
    ("cloudflare-ai-gateway", "gpt-5.4", "openai-responses",
     "POST /v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/openai/responses"),
    ("cloudflare-workers-ai", "@cf/moonshotai/kimi-k2.6", "openai-completions",
     "POST /client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai/v1/chat/completions"),
])
def test_a_placeholder_base_url_keeps_its_placeholder_and_the_body_pairs_with_the_real_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], provider: str,
        model: str, api: str, path: str) -> None:
    """pi-ai fills ``{CLOUDFLARE_ACCOUNT_ID}``/``{CLOUDFLARE_GATEWAY_ID}`` from DSH's environment
    when it sends (``cloudflare-auth.js:15-28``, ``cloudflare-stream.js:3-10``), which the log does
    not record: the path shows the placeholder, and a capture with the real ids is identical."""
    log = session(tmp_path / "s.jsonl", provider, [(model, api)])
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--headers")
    assert (code, err, out.splitlines()[0]) == (0, [], path)
    body = out.split("\n\n", 1)[1].rstrip("\n")
    real = path.split(" ", 1)[1].replace("{CLOUDFLARE_ACCOUNT_ID}", "acc123").replace("{CLOUDFLARE_GATEWAY_ID}", "gw")
    capture = write(tmp_path / "wire.jsonl", json.dumps({"method": "POST", "path": real, "body": body}) + "\n")
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(capture))
    assert (code, err, out.splitlines()[-1]) == (
        0, [], "1 request(s): 1 identical; 0 capture(s) unexplained, 0 foreign: OK")
