"""Route configuration messages a user tour found (issues 12/14): reading the DSH home's route
layers is the normal case, said as a ``note:`` once per run, never a warning (a contradiction
between the log and the layer stays one); ``sessions`` says it once, without a log's path, and
lists it among each session's --json ``notes``; a ``DSH815`` whose render refusal asks for
``--routes FILE`` names the recorded home's ``cordis.patch.yml`` as the other way.
"""

from __future__ import annotations

import json
import pickle
import shutil
from pathlib import Path

import pytest

from dsh_audit.session import RouteEvidence, window_conflicts
from dsh_audit.testing import LogBuilder
from dsh_audit.wire import PiRoutes

from _cli import invoke

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
COMPAT = CORPUS / "live-pi" / "c3-openai-compat"
COMPAT_LOG = ("c3/home/sessions/--home-dev-dsh-runs-c-c3-openai-compat-ws--/"
              "session-e7611f7a-95b5-4af3-83c0-7c6d07d82016/session.jsonl.zstd")
LAYER = """- id: llm-pi-ai
  config:
    providers:
      local-openai:
        api: openai-completions
        baseURL: http://127.0.0.1:8080/v1
        models:
          - id: local-coder
            contextWindow: 131000
            maxTokens: 8192
"""
HOME_NOTE = "route configuration from {} (the llm-pi-ai row of DSH's home patch layer; --routes FILE overrides it)"
CONFLICT = ("route local-openai/local-coder: the log records contextWindow 131072 (request/context at seq 6), DSH's "
            "home patch layer {} says 131000; requests that logged their window are rendered with the log's, the "
            "one DSH used")


def local_session(path: Path, session_id: str) -> Path:
    """A one-turn session through DSH's pi-ai adapter on local-openai/local-coder (a hand-declared
    route), logging a 131072-token window, written to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    b = LogBuilder(session_id=session_id, provider="local-openai", model="local-coder", system="You are terse.",
                   reasoning_effort=None, max_tokens=1000, context_window=131072)
    with b.turn("Hi."):
        with b.step():
            reply = b.assistant("Hello.")
            message = b.event(reply.seq)["data"]["message"]
            message["source"]["replayState"] = {
                "response": {"kind": "pi-ai", "version": 2, "api": "openai-completions", "provider": "local-openai",
                             "model": "local-coder", "responseId": "r_1", "stopReason": "stop"},
                "blocks": [{"type": "text"}]}
    return b.write_jsonl(path)


def test_the_home_layer_line_is_a_note_and_survives_a_worker_process() -> None:
    home = PiRoutes({"local-openai": "openai-completions"}, {}, layers=("/h/cordis.patch.yml",))
    found = window_conflicts(RouteEvidence(providers={"local-openai"}), home)
    assert found == [HOME_NOTE.format("/h/cordis.patch.yml")]
    back = pickle.loads(pickle.dumps(found))  # --jobs N hands it back from a worker
    assert [getattr(line, "level", "warning") for line in (*found, *back)] == ["note", "note"]
    assert window_conflicts(RouteEvidence(providers={"deepseek-official"}), home) == []


def test_sessions_says_the_home_layer_once_as_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    layer = home / "cordis.patch.yml"
    one = local_session(home / "sessions" / "--proj--" / "s-a" / "session.jsonl", "s-a")
    two = local_session(home / "sessions" / "--proj--" / "s-b" / "session.jsonl", "s-b")
    layer.write_text(LAYER, encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(home / "sessions"), "--json", "--no-cost")
    # the note once, without a path; each log's contradiction of the layer stays a warning, with its path
    assert (code, err) == (0, [f"note: {HOME_NOTE.format(layer)}", f"warning: {one}: {CONFLICT.format(layer)}",
                               f"warning: {two}: {CONFLICT.format(layer)}"])
    assert sorted((row["session_id"], row["notes"], row["warnings"]) for row in map(json.loads, out.splitlines())) \
        == [(sid, [HOME_NOTE.format(layer)], [CONFLICT.format(layer)]) for sid in ("s-a", "s-b")]
    table = invoke(monkeypatch, capsys, "sessions", str(home / "sessions"), "--no-cost")
    assert (table[0], table[2]) == (0, err)
    given = tmp_path / "routes.yml"
    given.write_text(LAYER.replace("131000", "131072"), encoding="utf-8")
    code, _, err = invoke(monkeypatch, capsys, "sessions", str(home / "sessions"), "--no-cost", "--routes", str(given))
    assert (code, err) == (0, [])  # --routes overrides the layer: nothing to say


@pytest.mark.skipif(not COMPAT.is_dir(), reason="the live-pi corpus is not beside the project")
def test_check_names_the_recorded_homes_layer_beside_routes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(COMPAT / "home", tmp_path / "c3" / "home")
    shutil.copy(COMPAT / "wire.jsonl", tmp_path / "c3" / "wire.jsonl")
    monkeypatch.chdir(tmp_path)
    passed = "PASSED: 1 log(s), 6 request(s), 0 error(s), 0 warning(s), 0 info, 0 failing (policy: defaults)"
    # the wire.jsonl found beside the log prices the title call, whose usage the log lacks
    priced = "note: 1 request(s) priced from the capture's usage (their log holds none)"
    code, _, err = invoke(monkeypatch, capsys, "check", "c3", "--format", "csv")
    assert (code, len(err), err[0], err[1], err[-1]) == (1, 3, priced, (  # the 6 requests' findings on one line
        f"{COMPAT_LOG}: DSH815 warning (fails the gate: capture-fail): 6 requests: #0, #1, #2, #3, #4, #5 are "
        "unrendered: cannot render: no pi-ai model facts for local-openai/local-coder: a hand-declared route's models "
        "are described by DSH's route configuration, which the log does not record (hint: pass --routes FILE "
        "(DSH's llm-pi-ai route configuration), or declare the route in c3/home/cordis.patch.yml (the patch layer "
        "of the DSH home the log was recorded in, read when no --routes is given))"),
        "FAILED: 1 log(s), 6 request(s), 0 error(s), 6 warning(s), 0 info, 6 failing (policy: defaults)")
    routes = COMPAT / "inputs" / "pi-ai-routes.patch.yml"
    code, _, err = invoke(monkeypatch, capsys, "check", "c3", "--format", "csv", "--routes", str(routes))
    assert (code, err) == (0, [priced, passed])
    shutil.copy(routes, tmp_path / "c3" / "home" / "cordis.patch.yml")  # the recorded home's layer, no --routes
    code, _, err = invoke(monkeypatch, capsys, "check", "c3", "--format", "csv")
    assert (code, err) == (0, [f"note: {HOME_NOTE.format(tmp_path / 'c3' / 'home' / 'cordis.patch.yml')}", priced,
                               passed])


def test_watch_says_the_home_layer_as_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """watch --json tagged the line "warning" for each log (review of session 32); text says it once."""
    home = tmp_path / "home"
    layer = home / "cordis.patch.yml"
    for sid in ("s-a", "s-b"):
        local_session(home / "sessions" / "--proj--" / sid / "session.jsonl", sid)
    layer.write_text(LAYER.replace("131000", "131072"), encoding="utf-8")
    args = ("watch", str(home / "sessions"), "--since", "3650d", "--exit-after", "0.6", "--polling", "--rescan", "0.05")
    code, out, _ = invoke(monkeypatch, capsys, *args, "--json")
    said = [(line["type"], line.get("level")) for line in map(json.loads, out.splitlines())
            if "route configuration" in line.get("message", "")]
    assert code == 0 and said and {kind for kind, _ in said} == {"note"}
    code, _, err = invoke(monkeypatch, capsys, *args)
    assert (code, [line for line in err if "route configuration" in line]) == (0, [f"note: {HOME_NOTE.format(layer)}"])
