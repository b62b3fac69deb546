"""Session 46 (m3b): one rule for the hint of a route profile header pi-ai cannot send, in every view that renders.

With no ``--routes``, the header is in the layers of the DSH home the log sits in: ``render``, ``diff`` and
``check`` all name those layers (:func:`dsh_audit.session.routes_hint`), not a route to declare; what marks
such a hint is :data:`dsh_audit.wire.ROUTE_HEADER_FILE`, which the refusal's hint is built from.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh_audit.session import open_session, routes_hint
from dsh_audit.wire import ROUTE_HEADER_FILE, make_renderer

from _cli import invoke
from test_check46 import _log

LOG = "home/sessions/p/s1/session.jsonl"
MESSAGE = ("pi-ai sends no request on route 'anthropic': providers.anthropic.headers.x-team holds a CR, LF or NUL, "
           "which fetch refuses in a header value")
GIVEN = ("fix or remove the header under providers.anthropic.headers in the file given as --routes FILE "
         "(docs/routes.md section 7.1); the requests of other routes render")


def _home(root: Path) -> Path:
    """A DSH home under ``root`` whose patch layer gives the anthropic route a header fetch refuses, with
    one log of two requests on it; the log's path as given (relative to ``root``)."""
    log = _log(root / LOG, "anthropic", "s1")
    (root / "home" / "cordis.patch.yml").write_text(
        '- id: llm-pi-ai\n  config:\n    providers:\n      anthropic:\n        headers:\n          x-team: "a\\nb"\n',
        "utf-8")
    return log


def _hint(layer: str) -> str:
    return (f"fix or remove the header under providers.anthropic.headers in {layer}, the route configuration of "
            "the log's DSH home (docs/routes.md section 7.1); the requests of other routes render")


def test_render_diff_and_check_name_the_home_layer_alike(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    log = _home(tmp_path)
    bodies = tmp_path / "bodies"  # what pi-ai would send without the header: the capture's requests pair
    bodies.mkdir()
    for request in open_session(log).requests:
        (bodies / f"{request.index}.json").write_bytes(make_renderer("anthropic").render(request).body)
    hint = _hint("home/cordis.patch.yml")  # as the log is given: relative
    note = f"note: route configuration from {tmp_path}/home/cordis.patch.yml (the llm-pi-ai row of DSH's home " \
           "patch layer; --routes FILE overrides it)"

    code, out, err = invoke(monkeypatch, capsys, "render", LOG, "0")
    assert (code, out, err) == (2, "", [note, f"error: {LOG}:7 seq 5: {MESSAGE} (hint: {hint})"])

    code, out, err = invoke(monkeypatch, capsys, "diff", LOG, "--capture", "bodies")
    assert (code, err) == (1, [note])
    said = f"note 1: 2 requests: #0, #1 are unrendered: cannot render: {MESSAGE} (hint: {hint})"
    assert said in out.splitlines()
    code, out, err = invoke(monkeypatch, capsys, "diff", LOG, "--capture", "bodies", "--format", "json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert (code, [(row["index"], row["note"]) for row in rows]) == (1, [
        (i, f"order (no session header); cannot render: {MESSAGE} (hint: {hint})") for i in (0, 1)])

    for capture in ((), ("--capture", "bodies")):
        code, out, err = invoke(monkeypatch, capsys, "check", LOG, *capture)
        assert code == 1
        assert (f"{LOG}: DSH815 warning (fails the gate: capture-fail): 2 requests: #0, #1 are unrendered: "
                f"cannot render: {MESSAGE} (hint: {hint})") in out.splitlines()


def test_a_log_given_whole_names_the_layer_whole(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = _home(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "1")
    assert (code, out, err[-1]) == (2, "", f"error: {log}:7 seq 5: {MESSAGE} "
                                           f"(hint: {_hint(str(tmp_path / 'home' / 'cordis.patch.yml'))})")


def test_with_routes_the_hint_names_the_file_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """--routes replaces the home's layers: the header is in that file, as the refusal says it."""
    log = _home(tmp_path)
    routes = tmp_path / "routes.json"
    routes.write_text(json.dumps({"providers": {"anthropic": {"headers": {"x-team": "a\nb"}}}}), "utf-8")
    code, out, err = invoke(monkeypatch, capsys, "render", str(log), "0", "--routes", str(routes))
    assert (code, out, err) == (2, "", [f"error: {log}:7 seq 5: {MESSAGE} (hint: {GIVEN})"])


def test_the_rule_is_the_wire_constant_and_one_function(tmp_path: Path) -> None:
    """The refusal's hint holds the constant; a log in no DSH home (no layers) keeps it as it is, and no
    route is offered to declare; a hint without it is a route's, which the home's patch layer settles."""
    assert ROUTE_HEADER_FILE in GIVEN
    assert routes_hint("logs/session.jsonl", GIVEN) == GIVEN
    log = _home(tmp_path)
    assert routes_hint(log, GIVEN) == _hint(str(tmp_path / "home" / "cordis.patch.yml"))
    assert routes_hint(log, "pass --routes FILE") == (
        f"pass --routes FILE, or declare the route in {tmp_path / 'home' / 'cordis.patch.yml'} (the patch layer of "
        "the DSH home the log was recorded in, read when no --routes is given)")
