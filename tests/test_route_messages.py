"""The route messages say what is true and name only what the command takes (issue 12, a user
tester's findings): a catalog route's new model declared without a ``baseURL`` takes the catalog
provider's, as DSH resolves it; a window conflict names the file it came from (``--routes`` or the
DSH home's layer); every command that routes says once that it took the home's layers; a route
whose API has no renderer is called that, not "unknown"; the ``--adapter`` list is the option's;
``render``'s image hint offers no ``--capture``; a catalog model pi-ai lacks is called that; a
profile folder without ``package.json`` is named as such; ``sessions`` takes ``--profile`` and
``--routes`` and says the home's layers once, as a note (issue 14).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.errors import RenderError
from dsh_audit.session import open_session, route_renderer
from dsh_audit.testing import LogBuilder
from dsh_audit.wire import load_routes

from _cli import invoke

SYSTEM = "You are terse."
PNG_ID = "sha256:" + "ab" * 32
FUTURE = """providers:
  anthropic:
{base}    models:
      - id: claude-future-9
        contextWindow: 200000
        maxTokens: 32000
        reasoningEfforts:
          high: high
"""
LOCAL = """- id: llm-pi-ai
  config:
    providers:
      local-openai:
        api: openai-completions
        baseURL: http://127.0.0.1:8080/v1
        models:
          - id: local-coder
            contextWindow: {window}
            maxTokens: 8192
"""


def piai_reply(b: LogBuilder, api: str, provider: str, model: str, text: str) -> None:
    """An assistant reply through DSH's pi-ai adapter: the replay envelope on its source."""
    reply = b.assistant(text)
    message = b.event(reply.seq)["data"]["message"]
    message["source"]["replayState"] = {
        "response": {"kind": "pi-ai", "version": 2, "api": api, "provider": provider, "model": model,
                     "responseId": f"r_{reply.seq}", "stopReason": "stop"},
        "blocks": [{"type": block["type"]} for block in message["content"]]}


def one_turn(path: Path, provider: str, model: str, api: str | None, *, window: int | None = 1_000_000,
             prompt: Any = "Hi.") -> Path:
    """A one-turn session on ``provider``/``model`` (through pi-ai's ``api``; natively when None),
    written to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    b = LogBuilder(session_id="route-messages", provider=provider, model=model, system=SYSTEM,
                   reasoning_effort=None, max_tokens=1000, context_window=window)
    with b.turn(prompt):
        with b.step():
            if api is None:
                b.assistant("Hello.")
            else:
                piai_reply(b, api, provider, model, "Hello.")
    return b.write_jsonl(path)


def home_with_local(tmp_path: Path, window: int) -> tuple[Path, Path]:
    """A DSH home whose patch layer declares local-openai/local-coder with ``window``, holding a
    session on that route that logged a 131072-token window. Returns (the log, the layer)."""
    layer = tmp_path / "home" / "cordis.patch.yml"
    log = one_turn(tmp_path / "home" / "sessions" / "--proj--" / "s1" / "session.jsonl", "local-openai",
                   "local-coder", "openai-completions", window=131072)
    layer.write_text(LOCAL.format(window=window), encoding="utf-8")
    return log, layer


# --- 1. a catalog route's new model without a baseURL -------------------------------------------


def test_a_new_model_on_a_catalog_route_takes_the_catalog_providers_base_url(tmp_path, monkeypatch, capsys) -> None:
    """DSH ``catalog.ts`` ``resolveRouteModels``: ``request.baseURL ?? base?.baseUrl ?? providerBaseUrl``;
    pi-ai 0.82.1's ``anthropic`` provider has ``baseUrl: "https://api.anthropic.com"``."""
    log = one_turn(tmp_path / "future.jsonl", "anthropic", "claude-future-9", "anthropic-messages", window=200000)
    bare = tmp_path / "future.yml"
    bare.write_text(FUTURE.format(base=""), encoding="utf-8")
    explicit = tmp_path / "future4.yml"
    explicit.write_text(FUTURE.format(base="    baseURL: https://api.anthropic.com\n"), encoding="utf-8")
    assert load_routes(str(bare)).models["anthropic", "claude-future-9"].base_url == "https://api.anthropic.com"
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(bare), "--headers")
    assert (code, err) == (0, [])
    assert out.splitlines()[0] == "POST /v1/messages"
    assert json.loads(out.split("\n\n", 1)[1])["model"] == "claude-future-9"
    assert invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(explicit), "--headers") == \
        (code, out, err)


def test_a_hand_declared_route_still_needs_its_base_url(tmp_path, monkeypatch, capsys) -> None:
    log = one_turn(tmp_path / "local.jsonl", "local-openai", "local-coder", "openai-completions")
    routes = tmp_path / "local.yml"
    routes.write_text(LOCAL.format(window=131072).replace("        baseURL: http://127.0.0.1:8080/v1\n", ""),
                      encoding="utf-8")
    assert invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(routes)) == (2, "", [
        f"error: {routes}: route file: providers.local-openai.models[0]: needs a baseURL: the catalog does not "
        "describe this route (hint: see DSH's llm-pi-ai configuration: providers.<id>.api, baseURL, models)"])


# --- 8. a catalog route's model pi-ai's catalog lacks --------------------------------------------


def test_a_model_the_catalog_lacks_is_named_as_such(tmp_path, monkeypatch, capsys) -> None:
    log = one_turn(tmp_path / "future.jsonl", "anthropic", "claude-future-9", "anthropic-messages")
    assert invoke(monkeypatch, capsys, "render", str(log), "0") == (2, "", [
        f"error: {log}:7 seq 5: no pi-ai model facts for anthropic/claude-future-9: pi-ai 0.82.1's catalog has no such "
        "anthropic model, and the log does not record a model's facts (hint: declare the model with --routes FILE "
        "(DSH's llm-pi-ai route configuration: providers.anthropic.models, with its contextWindow, maxTokens and "
        "reasoningEfforts), or record the log in a DSH home (<home>/sessions/...) and declare the route in "
        "<home>/cordis.patch.yml, read when no --routes is given)"])


# --- 4. a known route with no wire format; the --adapter list ------------------------------------


def test_an_api_without_a_renderer_is_a_known_route_that_no_option_renders(tmp_path, monkeypatch, capsys) -> None:
    log = one_turn(tmp_path / "google.jsonl", "google", "gemini-2.5-pro", "google-generative-ai")
    seq = next(event["seq"] for event in map(json.loads, log.read_text("utf-8").splitlines()[1:])
               if event["type"] == "assistant/message")
    reason = (f"pi-ai's replay envelope at seq {seq}; dsh-audit renders no 'google-generative-ai' bodies (it renders "
              "anthropic-messages, openai-completions, openai-responses and DeepSeek chat completions)")
    assert invoke(monkeypatch, capsys, "render", str(log), "0") == (2, "", [
        f"error: {log}:7 seq 5: request 0 cannot be rendered: a known route with no wire format: {reason} (hint: "
        "no option renders it: DSH sent it in a format dsh-audit does not write, and --adapter would write another)"])
    session = open_session(log)
    assert session.route(session.requests[0]).no_wire_format
    with pytest.raises(RenderError) as caught:
        route_renderer([session])(session.requests[0], {})
    assert caught.value.message == f"a known route with no wire format: {reason}"


def test_an_unknown_route_offers_every_adapter(tmp_path, monkeypatch, capsys) -> None:
    log = one_turn(tmp_path / "gateway.jsonl", "my-gateway", "deepseek-v4-flash", "openai-completions")
    text = log.read_text("utf-8").replace('"replayState"', '"replay"')  # no envelope: no evidence
    log.write_text(text.replace('"provider":"my-gateway","model":"deepseek-v4-flash","replay',
                                '"provider":"deepseek-official","model":"deepseek-v4-flash","replay'), "utf-8")
    assert invoke(monkeypatch, capsys, "render", str(log), "0") == (2, "", [
        f"error: {log}:7 seq 5: request 0 cannot be rendered: unknown route: provider 'my-gateway': the log shows no "
        "message from its adapter; pass --routes FILE (DSH's llm-pi-ai route configuration) or --adapter (hint: "
        "pass --routes FILE with the route configuration DSH had, or force a wire format with --adapter "
        "deepseek|anthropic|openai|responses)"])


# --- 2 and 5. where the route configuration came from ---------------------------------------------


def test_render_names_the_home_layer_it_took_and_the_window_it_contradicts(tmp_path, monkeypatch, capsys) -> None:
    log, layer = home_with_local(tmp_path, 131000)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0")
    assert (code, err) == (0, [
        f"note: route configuration from {layer} (the llm-pi-ai row of DSH's home patch layer; --routes FILE "
        "overrides it)",
        "warning: route local-openai/local-coder: the log records contextWindow 131072 (request/context at seq 6), "
        f"DSH's home patch layer {layer} says 131000; requests that logged their window are rendered with the "
        "log's, the one DSH used"])
    routes = tmp_path / "routes.yml"
    routes.write_text(LOCAL.format(window=131000), encoding="utf-8")
    assert invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(routes)) == (0, out, [
        "warning: route local-openai/local-coder: the log records contextWindow 131072 (request/context at seq 6), "
        "the route file (--routes) says 131000; requests that logged their window are rendered with the log's, "
        "the one DSH used"])


def test_diff_names_the_home_layer_once(tmp_path, monkeypatch, capsys) -> None:
    log, layer = home_with_local(tmp_path, 131000)
    code, out, _ = invoke(monkeypatch, capsys, "render", str(log), "0")
    bodies = tmp_path / "bodies"
    bodies.mkdir()
    (bodies / "0.json").write_text(out, encoding="utf-8")
    code, _, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(bodies))
    assert [line for line in err if "route" in line] == [
        f"note: route configuration from {layer} (the llm-pi-ai row of DSH's home patch layer; --routes FILE "
        "overrides it)",
        "warning: route local-openai/local-coder: the log records contextWindow 131072 (request/context at seq 6), "
        f"DSH's home patch layer {layer} says 131000; requests that logged their window are rendered with the "
        "log's, the one DSH used"]


def test_a_home_layer_that_routes_no_request_of_the_log_is_not_named(tmp_path, monkeypatch, capsys) -> None:
    _, layer = home_with_local(tmp_path, 131072)
    log = one_turn(tmp_path / "home" / "sessions" / "--proj--" / "s2" / "session.jsonl", "deepseek-official",
                   "deepseek-v4-pro", None, window=None)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0")
    assert (code, err) == (0, [])
    assert json.loads(out)["model"] == "deepseek-v4-pro"


# --- 3. render's image hint -----------------------------------------------------------------------


def test_renders_image_hint_names_no_capture(tmp_path, monkeypatch, capsys) -> None:
    """render takes no --capture: its hint offers the attachment store alone (diff's keeps both)."""
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "nohome"))
    image = {"type": "image", "attachment": {"attachmentId": PNG_ID, "mediaType": "image/png", "bytes": 12,
                                             "width": 1, "height": 1}}
    log = one_turn(tmp_path / "pics.jsonl", "anthropic", "claude-sonnet-4-5", "anthropic-messages",
                   prompt=[{"type": "text", "text": "Look:"}, image])
    assert invoke(monkeypatch, capsys, "render", str(log), "0") == (2, "", [
        f"error: {log}:6 seq 4: the log holds only a reference to image {PNG_ID!r} (mediaType 'image/png', 12 bytes), "
        "not the bytes pi-ai sends as base64: DSH reads them from its attachment store (hint: read the bytes from "
        "DSH's attachment store with --attachments DIR (<DSH_HOME>/attachments/v1))"])
    store = tmp_path / "store" / "attachments" / "v1"
    (store / "objects").mkdir(parents=True)
    assert invoke(monkeypatch, capsys, "render", str(log), "0", "--attachments", str(store)) == (2, "", [
        f"error: {log}:6 seq 4: no bytes supplied for image attachment {PNG_ID!r} (hint: DSH's attachment store "
        f"{store} has no such object: point --attachments DIR at the store that has it)"])


# --- 6 and 7. profiles ------------------------------------------------------------------------


def profiled_home(tmp_path: Path, *, manifests: bool = True) -> Path:
    """A DSH home with profiles a and b whose patch layers give local-coder different windows, and
    a session on that route. Returns the log."""
    for name, window in (("a", 131072), ("b", 65536)):
        folder = tmp_path / "home" / "profiles" / name
        folder.mkdir(parents=True)
        (folder / "cordis.patch.yml").write_text(LOCAL.format(window=window), encoding="utf-8")
        if manifests:
            (folder / "package.json").write_text("{}\n", encoding="utf-8")
    return one_turn(tmp_path / "home" / "sessions" / "--proj--" / "s1" / "session.jsonl", "local-openai",
                    "local-coder", "openai-completions", window=131072)


def test_sessions_takes_a_profile_and_says_routes_overrides_it(tmp_path, monkeypatch, capsys) -> None:
    log = profiled_home(tmp_path)
    home = tmp_path / "home"
    code, _, err = invoke(monkeypatch, capsys, "sessions", str(log), "--json")
    assert (code, err) == (0, [
        f"warning: {log}: the profiles of DSH home {home} (a, b) compose different llm-pi-ai routes and the log does "
        "not record which one ran: the home's own layers only are read; name the DSH profile the session ran under "
        "(its dsh --profile NAME) with --profile NAME (or $DSH_AUDIT_PROFILE)"])
    code, _, err = invoke(monkeypatch, capsys, "sessions", str(log), "--json", "--profile", "a")
    assert (code, err) == (0, [
        f"note: route configuration from {home / 'profiles' / 'a' / 'cordis.patch.yml'} (the llm-pi-ai "
        "row of DSH profile a's patch layer; --routes FILE overrides it)"])  # once, as a note: every session of the home shares it
    code, _, err = invoke(monkeypatch, capsys, "sessions", str(log), "--json", "--profile", "b")
    assert (code, err) == (0, [
        f"note: route configuration from {home / 'profiles' / 'b' / 'cordis.patch.yml'} (the llm-pi-ai "
        "row of DSH profile b's patch layer; --routes FILE overrides it)",
        f"warning: {log}: route local-openai/local-coder: the log records contextWindow 131072 (request/context at "
        f"seq 6), DSH profile b's patch layer {home / 'profiles' / 'b' / 'cordis.patch.yml'} says 65536; requests "
        "that logged their window are rendered with the log's, the one DSH used"])


def test_a_profile_folder_without_package_json_is_named_as_such(tmp_path, monkeypatch, capsys) -> None:
    """DSH ``app-boot/src/profile.ts:376-384``: a profile is a folder with a package.json."""
    log = profiled_home(tmp_path, manifests=False)
    home = tmp_path / "home"
    assert invoke(monkeypatch, capsys, "render", str(log), "0", "--profile", "a") == (2, "", [
        f"error: {home}: DSH profile 'a' does not exist in this DSH home (hint: {home / 'profiles' / 'a'} is not a "
        "DSH profile: a profile is a folder with a package.json, and this one has none; the home has none: leave "
        "out --profile and $DSH_AUDIT_PROFILE)"])
    (home / "profiles" / "b" / "package.json").write_text("{}\n", encoding="utf-8")
    assert invoke(monkeypatch, capsys, "render", str(log), "0", "--profile", "a") == (2, "", [
        f"error: {home}: DSH profile 'a' does not exist in this DSH home (hint: {home / 'profiles' / 'a'} is not a "
        "DSH profile: a profile is a folder with a package.json, and this one has none; its profiles: b)"])
