"""Session 46 (f3): ``check`` without a capture reports the requests pi-ai sends nothing for because of
their headers (a session id or route profile header fetch cannot send), as ``DSH815``, the finding a
capture's comparison gives them; and a pi-ai renderer builds a call config's headers once, every
request keeping its own refusal and its own bytes.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.errors import RenderError
from dsh_audit.gate import Policy, run_check
from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder
from dsh_audit.wire import make_renderer

from _cli import invoke

API = {"openai": "openai-responses", "deepseek": "openai-completions", "anthropic": "anthropic-messages"}
MODEL = {"openai": "gpt-5", "deepseek": "deepseek-v4-pro", "anthropic": "claude-sonnet-4-5"}
ADAPTER = {"openai": "responses", "deepseek": "openai", "anthropic": "anthropic"}
SESSION_HINT = ("DSH makes its own ASCII session ids, so the log's was edited: there is no pi-ai request to render; "
                "force another wire format with --adapter")
PAST_FF = "holds a character past U+00FF, which fetch cannot send"


def _log(path: Path, provider: str, session_id: str, *, turns: int = 2, resume: bool = False,
         temperature: float | None = None) -> Path:
    """A log of ``turns`` one-step turns on ``provider``'s catalog route (pi-ai's replay envelopes say
    so); ``resume`` writes a second, equal header before the second turn, ``temperature`` another one."""
    b = LogBuilder(session_id=session_id, provider=provider, model=MODEL[provider], reasoning_effort=None,
                   max_tokens=None, context_window=None)
    for turn in range(turns):
        if turn == 1 and resume:
            b.resume()
        if turn == 1 and temperature is not None:
            b.configure(temperature=temperature)
        with b.turn(f"Hi {turn}."):
            with b.step():
                seq = b.assistant("Hello.").seq
                b.event(seq)["data"]["message"]["source"]["replayState"] = {"response": {
                    "kind": "pi-ai", "version": 2, "api": API[provider], "provider": provider,
                    "model": MODEL[provider], "stopReason": "stop"}, "blocks": [{"type": "text"}]}
    path.parent.mkdir(parents=True, exist_ok=True)
    return b.write_jsonl(path)


def _said(result: Any) -> list[tuple[Any, ...]]:
    return [(f.rule, f.severity, f.fails, f.message, f.line, f.seq, f.request, f.hint, f.reason)
            for f in result.findings]


def test_check_without_a_capture_fails_a_session_id_pi_ai_cannot_send(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Responses sends the session id in ``session_id``: a log whose id is no ByteString had no request sent."""
    log = _log(tmp_path / "a" / "session.jsonl", "openai", "\u4e2d\u6587")
    code, out, err = invoke(monkeypatch, capsys, "check", str(log))
    assert (code, err) == (1, [])
    said = (f"{log}: DSH815 warning (fails the gate: capture-fail): 2 requests: #0, #1 are unrendered: cannot "
            f"render: pi-ai sends no request: its header session_id (the log's session id) {PAST_FF} "
            f"(hint: {SESSION_HINT})")
    lines = out.splitlines()
    assert said in lines
    assert lines[-1] == ("FAILED: 1 log(s), 2 request(s), 0 error(s), 2 warning(s), 1 info, 2 failing "
                         "(policy: defaults)")


def test_route_header_refusal_without_a_capture_is_each_request_s_dsh815(tmp_path: Path) -> None:
    """A route file's header fetch cannot send: each request of the route, at its header's seq and line."""
    log = _log(tmp_path / "b" / "session.jsonl", "anthropic", "s1")
    routes = tmp_path / "routes.json"
    routes.write_text(json.dumps({"providers": {"anthropic": {"headers": {"x-team": "a\nb"}}}}), "utf-8")
    message = ("cannot render: pi-ai sends no request on route 'anthropic': providers.anthropic.headers.x-team "
               "holds a CR, LF or NUL, which fetch refuses in a header value")
    hint = ("fix or remove the header under providers.anthropic.headers in the file given as --routes FILE "
            "(docs/routes.md section 7.1); the requests of other routes render")
    expected = [("DSH810", "info", False, "no capture given or found beside the log (wire.jsonl)", None, None, None,
                 "pass --capture FILE, or put a wire.jsonl holding the log's requests beside it or up to four "
                 "folders above it", None),
                *[("DSH815", "warning", True, f"loop request {i} is unrendered: {message}", 7, 5, i, hint,
                   f"unrendered: {message}") for i in (0, 1)]]
    whole = run_check([log], routes=routes)  # the session read whole
    streamed = run_check([log], routes=routes, outline=True, lean=True)  # checked while it is replayed
    assert _said(whole) == _said(streamed) == expected
    assert not whole.passed and not streamed.passed


def test_the_policy_judges_it_as_a_capture_s_unrendered_request(tmp_path: Path) -> None:
    """capture-fail decides, as with a capture: a policy that lets unrendered requests pass passes the log."""
    log = _log(tmp_path / "c" / "session.jsonl", "openai", "\u4e2d")
    policy = Policy(capture_fail=("different", "unmatched"))
    result = run_check([log], policy=policy, outline=True)
    assert [(f.rule, f.fails) for f in result.findings] == [("DSH810", False), ("DSH815", False), ("DSH815", False)]
    assert result.passed


@pytest.mark.parametrize("provider", ["openai", "deepseek", "anthropic"])
def test_headers_pi_ai_sends_leave_check_as_it_was(tmp_path: Path, provider: str) -> None:
    """A Latin-1 session id is sent (and Completions and Anthropic send none without affinity): no DSH815."""
    log = _log(tmp_path / provider / "session.jsonl", provider, "s\u00e9ssion" if provider == "openai" else "\u4e2d")
    for outline in (False, True):
        assert [f.rule for f in run_check([log], outline=outline).findings] == ["DSH810"]


def test_a_refusal_kept_for_a_call_config_is_located_at_each_request_s_header(tmp_path: Path) -> None:
    """Two headers with one call config (a resume): the refusal is built once, each request's at its own seq."""
    session = open_session(_log(tmp_path / "s.jsonl", "openai", "a\nb", resume=True))
    renderer = session.bodies._renderer("responses")
    said = []
    for request in session.requests:
        with pytest.raises(RenderError) as caught:
            renderer.body_value(request)
        refusal = session.bodies.header_refusal(request, "openai-responses")  # a priced entry's route
        assert refusal is not None and str(refusal) == str(caught.value)
        said.append(str(caught.value))
    assert said == [f"<input> seq {seq}: pi-ai sends no request: its header session_id (the log's session id) holds "
                    f"a CR, LF or NUL, which fetch refuses in a header value (hint: {SESSION_HINT})" for seq in (5, 21)]
    assert len(renderer.state["headers"]) == 1  # one call config, one build


@pytest.mark.parametrize("provider", ["openai", "deepseek", "anthropic"])
def test_kept_headers_are_the_bytes_of_a_fresh_renderer(tmp_path: Path, provider: str) -> None:
    """One renderer for the whole log (headers kept per call config) writes what a new renderer per
    request writes, header for header and byte for byte, across a header change."""
    session = open_session(_log(tmp_path / "s.jsonl", provider, "s1", turns=3, temperature=0.5))
    shared = make_renderer(ADAPTER[provider])
    kept = [asdict(shared.render(request)) for request in session.requests]
    fresh = [asdict(make_renderer(ADAPTER[provider]).render(request)) for request in session.requests]
    assert kept == fresh and len(kept) == 3
    assert len(shared.state["headers"]) == 2  # the header change is another call config
    assert session.bodies.header_refusal(session.requests[0], ADAPTER[provider]) is None


def test_a_home_layer_s_header_refusal_names_that_layer_not_a_route_to_declare(tmp_path: Path) -> None:
    """With no --routes, a route header comes from the DSH home's layer the log sits in: the hint says to fix
    the header there, with and without a capture, and does not ask to declare the route (m3)."""
    home = tmp_path / "home"
    log = _log(home / "sessions" / "p" / "s1" / "session.jsonl", "anthropic", "s1")
    layer = home / "cordis.patch.yml"
    layer.write_text('- id: llm-pi-ai\n  config:\n    providers:\n      anthropic:\n        headers:\n'
                     '          x-team: "a\\nb"\n', "utf-8")
    bodies = tmp_path / "bodies"  # what pi-ai would send without the header: the capture's requests pair
    bodies.mkdir()
    for request in open_session(log).requests:
        (bodies / f"{request.index}.json").write_bytes(make_renderer("anthropic").render(request).body)
    message = ("cannot render: pi-ai sends no request on route 'anthropic': providers.anthropic.headers.x-team "
               "holds a CR, LF or NUL, which fetch refuses in a header value")
    hint = (f"fix or remove the header under providers.anthropic.headers in {layer}, the route configuration of the "
            "log's DSH home (docs/routes.md section 7.1); the requests of other routes render")
    for captures, where in ((None, ""), (bodies, " vs {}")):
        for outline in (False, True):
            result = run_check([log], captures=captures, outline=outline)
            assert [(f.rule, f.message, f.seq, f.hint) for f in result.findings if f.rule == "DSH815"] == [
                ("DSH815", f"loop request {i} is unrendered{where.format(bodies / f'{i}.json')}: {message}", 5, hint)
                for i in (0, 1)]


def test_each_request_s_refusal_keeps_its_seq_when_exceptions_copy_by_a_shared_dict(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Importing Dask's ``distributed`` installs tblib's exception pickling, whose copy of an exception
    shares its ``__dict__``: the kept refusal then took the first request's seq for every later one.
    Here that reduction is installed for RenderError alone, for this test."""
    import copyreg

    def sharing(state: dict[str, Any]) -> RenderError:
        made = RenderError.__new__(RenderError)
        made.__dict__ = state  # the copy and the original: one attribute dict
        return made

    def shared(exc: RenderError) -> tuple[Any, ...]:
        return (sharing, (exc.__dict__,))

    monkeypatch.setitem(copyreg.dispatch_table, RenderError, shared)
    session = open_session(_log(tmp_path / "s.jsonl", "openai", "a\nb", resume=True))
    renderer = session.bodies._renderer("responses")
    seqs = []
    for request in session.requests:
        with pytest.raises(RenderError) as caught:
            renderer.body_value(request)
        seqs.append(caught.value.seq)
    assert seqs == [5, 21]
