"""Route messages name where the route facts came from, and an unknown ``--profile`` is refused.

When no ``--routes FILE`` is given, the route configuration is the one DSH composed under the DSH
home the log sits in (``cordis.patch.yml`` layers: the profile's, the home's). A message about a
route that configuration decides names the layer file, as the route warnings already do
(``dsh_audit/session/_routes.py`` ``_home_layers``), not ``--routes``, which the user never gave.
``--profile NAME`` names a profile of that home; one the home does not have is a usage error
(exit 2, one line naming the profile and the home), whether or not the home has layers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import invoke

from dsh_audit.log import Event
from dsh_audit.session import PROFILE_ENV, RouteEvidence, route_for
from dsh_audit.testing import LogBuilder
from dsh_audit.wire import PiRoutes

from test_wire_switch import READ, SYSTEM, claude_reply

#: What a route decided by a bare mapping or a --routes file says (unchanged).
OPTION = "the route configuration (--routes)"
ENVELOPE = "provider 'anthropic': pi-ai's replay envelope at seq 7 shows api 'anthropic-messages' but "
SETTLE = "; pass --routes FILE with the route configuration DSH had, or --adapter"
#: A home layer that routes the catalog provider ``anthropic`` through another API than the log shows.
CONTRADICTING_LAYER = """\
- id: llm-pi-ai
  config:
    providers:
      anthropic:
        api: openai-completions
        baseURL: http://127.0.0.1:18300/v1
        models:
          - id: claude-sonnet-4-5
            contextWindow: 200000
            maxTokens: 8192
"""
#: A home layer DSH reads without complaint (a hand-declared route no test log uses).
PLAIN_LAYER = """\
- id: llm-pi-ai
  config:
    providers:
      local-openai:
        api: openai-completions
        baseURL: http://127.0.0.1:18300/v1
        models:
          - id: local-coder
            contextWindow: 131072
            maxTokens: 8192
"""
#: Needs ``dsh_audit/session/_session.py`` to hand the session's route configuration itself, not
#: its ``apis`` mapping, to :func:`request_route` (``Session.route``), and ``routes_from`` to
#: refuse an unknown profile when the home has no layer: see the fix-lanes report.


def _claude_evidence() -> RouteEvidence:
    """A log's evidence: an ``anthropic`` message at seq 7 came through pi-ai's anthropic-messages."""
    evidence = RouteEvidence()
    message = {"role": "assistant", "content": [], "source": {
        "kind": "model", "provider": "anthropic", "model": "claude-sonnet-4-5",
        "replayState": {"response": {"kind": "pi-ai", "api": "anthropic-messages", "provider": "anthropic",
                                     "model": "claude-sonnet-4-5"}}}}
    evidence.on_event(Event(seq=7, type="assistant/message", time=0, data={"message": message}, line=8))
    return evidence


# --- route_for: the contradiction and the decision name their source ---------------------------


@pytest.mark.parametrize(("layers", "source"), [
    (("/h/cordis.patch.yml",), "DSH's home patch layer /h/cordis.patch.yml"),
    (("/h/profiles/web/cordis.patch.yml",), "DSH profile web's patch layer /h/profiles/web/cordis.patch.yml"),
    (("/h/profiles/web/cordis.patch.yml", "/h/cordis.patch.yml"),
     "the route configuration composed from /h/profiles/web/cordis.patch.yml + /h/cordis.patch.yml "
     "(DSH's layers under its home)"),
])
def test_a_contradiction_names_the_home_layer_it_came_from(layers: tuple[str, ...], source: str) -> None:
    home = PiRoutes({"anthropic": "openai-completions"}, {}, source=layers[-1], layers=layers)
    route = route_for("anthropic", _claude_evidence(), declared=home)
    assert (route.adapter, route.api, route.because) == (
        None, "anthropic-messages", f"{ENVELOPE}{source} says 'openai-completions'{SETTLE}")


def test_a_route_file_or_a_bare_mapping_still_names_the_option() -> None:
    file = PiRoutes({"anthropic": "openai-completions"}, {}, source="routes.yml")
    for declared in (file, {"anthropic": "openai-completions"}):
        assert route_for("anthropic", _claude_evidence(), declared=declared).because == (
            f"{ENVELOPE}{OPTION} says 'openai-completions'{SETTLE}")


def test_a_route_the_home_layer_declares_is_credited_to_it() -> None:
    home = PiRoutes({"local-openai": "openai-completions"}, {}, source="/h/cordis.patch.yml",
                    layers=("/h/cordis.patch.yml",))
    assert route_for("local-openai", declared=home) == route_for("local-openai", RouteEvidence(), declared=home)
    route = route_for("local-openai", declared=home)
    assert (route.adapter, route.api, route.because) == (
        "openai", "openai-completions", "DSH's home patch layer /h/cordis.patch.yml")
    file = PiRoutes({"local-openai": "openai-completions"}, {}, source="routes.yml")
    assert route_for("local-openai", declared=file).because == OPTION
    assert route_for("local-openai", declared={"local-openai": "openai-completions"}).because == OPTION
    # the catalog and the log still decide what the configuration does not declare
    assert route_for("anthropic", _claude_evidence(), declared=home).because == "pi-ai's replay envelope at seq 7"
    assert route_for("anthropic", declared=home).because == "pi-ai's catalog"


# --- the CLI -----------------------------------------------------------------------------------


def _home(tmp_path: Path, layer: str | None) -> tuple[Path, Path, Path]:
    """A DSH home holding one Claude session, its capture, and ``layer`` as its cordis.patch.yml."""
    home = tmp_path / "home"
    log = home / "sessions" / "project" / "s" / "session.jsonl"
    log.parent.mkdir(parents=True)
    b = LogBuilder(session_id="claude-home", provider="anthropic", model="claude-sonnet-4-5", system=SYSTEM,
                   tools=[READ], reasoning_effort="high", max_tokens=None)
    with b.turn("Hi."):
        with b.step():
            claude_reply(b, "claude-sonnet-4-5", "sig_1", "Hello.", reasoning="Greet.")
    b.write_jsonl(log)
    if layer is not None:
        (home / "cordis.patch.yml").write_text(layer)
    body = {"model": "claude-sonnet-4-5", "max_tokens": 64, "system": SYSTEM,
            "messages": [{"role": "user", "content": "Hi."}]}
    wire = tmp_path / "wire.jsonl"
    wire.write_text(json.dumps({"method": "POST", "path": "/v1/messages", "headers": {},
                                "body": json.dumps(body)}) + "\n")
    return home, log, wire


@pytest.mark.parametrize("layer", [
    PLAIN_LAYER,
    None,
])
def test_an_unknown_profile_is_a_usage_error_with_or_without_layers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], layer: str | None) -> None:
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    home, _, wire = _home(tmp_path, layer)
    code, out, err = invoke(monkeypatch, capsys, "diff", str(home / "sessions"), "--capture", str(wire),
                            "--profile", "nosuch", "--json")
    assert (code, out, err) == (2, "", [
        f"error: {home}: DSH profile 'nosuch' does not exist in this DSH home "
        "(hint: it has none: leave out --profile and $DSH_AUDIT_PROFILE)"])


def test_an_unknown_profile_names_the_home_s_profiles_without_layers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    home, _, wire = _home(tmp_path, None)
    (home / "profiles" / "web").mkdir(parents=True)
    (home / "profiles" / "web" / "package.json").write_text("{}")
    code, out, err = invoke(monkeypatch, capsys, "diff", str(home / "sessions"), "--capture", str(wire),
                            "--profile", "nosuch", "--json")
    assert (code, out, err) == (2, "", [
        f"error: {home}: DSH profile 'nosuch' does not exist in this DSH home (hint: its profiles: web)"])


def test_a_known_profile_without_layers_is_no_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    home, _, wire = _home(tmp_path, None)
    (home / "profiles" / "web").mkdir(parents=True)
    (home / "profiles" / "web" / "package.json").write_text("{}")
    code, out, err = invoke(monkeypatch, capsys, "diff", str(home / "sessions"), "--capture", str(wire),
                            "--profile", "web", "--json")
    assert (code, [json.loads(line)["verdict"] for line in out.splitlines()], err) == (1, ["different"], [])


def test_diff_names_the_home_layer_that_contradicts_the_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv(PROFILE_ENV, raising=False)
    home, log, wire = _home(tmp_path, CONTRADICTING_LAYER)
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(wire), "--json")
    layer = home / "cordis.patch.yml"
    seq = next(json.loads(line)["seq"] for line in log.read_text().splitlines()
               if json.loads(line).get("type") == "assistant/message")
    row, = [json.loads(line) for line in out.splitlines()]
    assert (code, row["verdict"], row["note"]) == (1, "unrendered", (
        "order (no session header); cannot render: unknown route: provider 'anthropic': pi-ai's replay envelope "
        f"at seq {seq} shows api 'anthropic-messages' but DSH's home patch layer {layer} says "
        f"'openai-completions'{SETTLE}"))
    assert err[0] == f"note: route configuration from {layer} (the llm-pi-ai row of DSH's home patch layer; " \
                     "--routes FILE overrides it)"
