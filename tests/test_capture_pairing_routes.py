"""Pairing captures that carry no DSH session header by the route each request took.

pi-ai sends no ``x-deepseek-harness-session-id`` (only DSH's native DeepSeek adapter does), so
such captures are paired by kind, route, model and order (``dsh_audit/capture/_align.py``). A
capture of ``POST /v1/messages`` pairs only with a request whose route is pi-ai
``anthropic-messages``; a ``/chat/completions`` capture with DSH's session header only with a
native DeepSeek request. Sessions are built with :class:`~dsh_audit.testing.LogBuilder`; the
captured bodies are the bodies each request's own route renders (what the wire tests check
against the corpus rules), written as a ``wire.jsonl`` in send order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from _cli import chat_log, invoke

from dsh_audit.capture import CapturedRequest, align, compare_capture, load_capture, session_captures
from dsh_audit.capture._evidence import PIAI_SESSION_HEADERS, capture_apis, log_routes
from dsh_audit.session import Session, open_session, route_renderer
from dsh_audit.testing import LogBuilder

from test_wire_switch import READ, SYSTEM, claude_reply, deepseek_claude_deepseek

SESSION_HEADER = "x-deepseek-harness-session-id"
BY_ORDER = "order (no session header)"
BY_HEADER = "session header and order"
ACROSS = "order by send time across sessions (no session header)"


def _sent(session: Session) -> list[tuple[Any, str, bytes]]:
    """(request, path, body) of every request, each rendered by its own route."""
    run = route_renderer([session])
    paths = {"deepseek": "/chat/completions", "anthropic": "/v1/messages"}
    return [(r, paths[str(session.route(r).adapter)], run(r, {})) for r in session.requests]


def _write(path: Path, records: Sequence[tuple[str, dict[str, str], bytes]]) -> Path:
    path.write_text("".join(json.dumps({"method": "POST", "path": p, "headers": h, "body": b.decode()}) + "\n"
                            for p, h, b in records))
    return path


def _headers(session: Session, path: str) -> dict[str, str]:
    """DSH's session header on what the native adapter sent, none on pi-ai's sends."""
    return {SESSION_HEADER: session.id} if path == "/chat/completions" else {}


def _rows(session: Session | Sequence[Session], wire: Path) -> list[tuple[Any, ...]]:
    sessions = [session] if isinstance(session, Session) else list(session)
    rows = compare_capture([r for s in sessions for r in s.requests], load_capture(wire),
                           render=route_renderer(sessions))
    return [(row.request.session_id if row.request else None, row.request.index if row.request else None,
             row.verdict, row.capture.position if row.capture else None, row.pairing.note) for row in rows]


def _switch(tmp_path: Path) -> tuple[Session, list[tuple[Any, str, bytes]]]:
    session = open_session(deepseek_claude_deepseek().write_jsonl(tmp_path / "session.jsonl"))
    return session, _sent(session)


# --- a session that switches DeepSeek -> Claude -> DeepSeek -------------------------------------


def test_a_provider_switch_pairs_each_capture_with_a_request_of_its_route(tmp_path: Path) -> None:
    session, sent = _switch(tmp_path)
    assert [path for _, path, _ in sent] == ["/chat/completions"] * 2 + ["/v1/messages"] * 2 + ["/chat/completions"]
    wire = _write(tmp_path / "wire.jsonl", [(p, _headers(session, p), b) for _, p, b in sent])
    # the header captures are the DeepSeek ones: they no longer pair with the Claude requests by order
    assert _rows(session, wire) == [
        ("switch-a", 0, "identical", 0, BY_HEADER), ("switch-a", 1, "identical", 1, BY_HEADER),
        ("switch-a", 2, "identical", 2, BY_ORDER), ("switch-a", 3, "identical", 3, BY_ORDER),
        ("switch-a", 4, "identical", 4, BY_HEADER)]


def test_a_missing_claude_body_leaves_every_other_pair_alone(tmp_path: Path) -> None:
    """The Claude lane has one body fewer than requests: its pairs are placed by content (each
    request's new messages), so the gap falls on the request whose body is missing."""
    session, sent = _switch(tmp_path)
    kept = [(p, _headers(session, p), b) for i, (_, p, b) in enumerate(sent) if i != 2]
    wire = _write(tmp_path / "wire.jsonl", kept)
    assert _rows(session, wire) == [
        ("switch-a", 0, "identical", 0, BY_HEADER), ("switch-a", 1, "identical", 1, BY_HEADER),
        ("switch-a", 2, "unmatched", None,
         "no captured loop send of this session left on its route (anthropic-messages, model claude-sonnet-4-5)"),
        ("switch-a", 3, "identical", 2, BY_ORDER),
        ("switch-a", 4, "identical", 3, BY_HEADER)]


def test_a_missing_deepseek_body_leaves_the_claude_pairs_alone(tmp_path: Path) -> None:
    session, sent = _switch(tmp_path)
    wire = _write(tmp_path / "wire.jsonl", [(p, _headers(session, p), b) for i, (_, p, b) in enumerate(sent) if i != 1])
    assert _rows(session, wire) == [
        ("switch-a", 0, "identical", 0, BY_HEADER),
        ("switch-a", 1, "unmatched", None,
         "no captured loop send of this session left on its route (deepseek-chat-completions, model deepseek-v4-pro)"),
        ("switch-a", 2, "identical", 1, BY_ORDER), ("switch-a", 3, "identical", 2, BY_ORDER),
        ("switch-a", 4, "identical", 3, BY_HEADER)]


def test_a_body_folder_without_sidecars_is_paired_by_body_shape(tmp_path: Path) -> None:
    session, sent = _switch(tmp_path)
    folder = tmp_path / "bodies"
    folder.mkdir()
    for number, (_, _, body) in enumerate(sent, start=1):
        (folder / f"{number}.json").write_bytes(body)
    assert [capture_apis(c) for c in load_capture(folder)] == [
        frozenset({"deepseek-chat-completions", "openai-completions"})] * 2 + [
        frozenset({"anthropic-messages"})] * 2 + [frozenset({"deepseek-chat-completions", "openai-completions"})]
    assert [(row[1], row[2], row[3]) for row in _rows(session, folder)] == [(i, "identical", i) for i in range(5)]


def test_the_cli_and_the_shared_bodies_pair_the_same_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    session, sent = _switch(tmp_path)
    wire = _write(tmp_path / "wire.jsonl", [(p, _headers(session, p), b) for _, p, b in sent])
    code, out, err = invoke(monkeypatch, capsys, "diff", str(tmp_path / "session.jsonl"), "--capture", str(wire),
                            "--json")
    assert (code, [(json.loads(line)["index"], json.loads(line)["verdict"]) for line in out.splitlines()], err) == (
        0, [(i, "identical") for i in range(5)], [])
    bodies, files = session_captures([session], wire)
    assert (bodies, files) == ({"switch-a": [b for _, _, b in sent]}, {"switch-a": wire})


# --- a capture whose endpoint matches no request ------------------------------------------------


def test_a_capture_of_another_endpoint_is_unexplained_not_a_false_difference(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    b = LogBuilder(session_id="ds-only", provider="deepseek-official", model="deepseek-v4-pro", system=SYSTEM,
                   tools=[READ], max_tokens=None)
    with b.turn("Hi."):
        with b.step():
            b.assistant("Hello.")
    session = open_session(b.write_jsonl(tmp_path / "session.jsonl"))
    (request, path, body), = _sent(session)
    stray = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 64,
                        "messages": [{"role": "user", "content": "Hi."}],
                        "system": "Search the web."}).encode()
    wire = _write(tmp_path / "wire.jsonl", [("/v1/messages", {}, stray), (path, {}, body)])  # no header on either
    note = "no rebuilt loop request left for POST /v1/messages, model claude-sonnet-4-5"
    assert _rows(session, wire) == [("ds-only", 0, "identical", 1, BY_ORDER), (None, None, "unmatched", 0, note)]
    code, out, _ = invoke(monkeypatch, capsys, "diff", str(tmp_path / "session.jsonl"), "--capture", str(wire),
                          "--json")
    assert (code, [(json.loads(line)["verdict"], json.loads(line)["note"]) for line in out.splitlines()]) == (
        1, [("identical", BY_ORDER), ("unmatched", note)])  # a loop capture no request explains fails the run


# --- two sessions' pi-ai captures in one file ---------------------------------------------------


def _claude(session_id: str, created_at: int, prompts: Sequence[str], model: str = "claude-sonnet-4-5") -> LogBuilder:
    """A Claude session whose events are one second apart from ``created_at`` (ms)."""
    b = LogBuilder(session_id=session_id, provider="anthropic", model=model, system=SYSTEM, tools=[READ],
                   reasoning_effort="high", max_tokens=None, created_at=created_at, clock_step_ms=1000)
    for number, prompt in enumerate(prompts):
        with b.turn(prompt):
            with b.step():
                claude_reply(b, model, f"sig_{session_id}_{number}", f"Answer {number}.", reasoning="Think.")
    return b


def _two(tmp_path: Path, second_model: str = "claude-sonnet-4-5") -> tuple[list[Session], list[tuple[Any, str, bytes]]]:
    """Two Claude sessions run side by side (B starts half a second after A), and every request of
    both in the order they were sent."""
    sessions = [open_session(_claude("sess-a", 1_760_000_000_000, ["A one.", "A two."])
                             .write_jsonl(tmp_path / "a.jsonl")),
                open_session(_claude("sess-b", 1_760_000_000_500, ["B one.", "B two."], second_model)
                             .write_jsonl(tmp_path / "b.jsonl"))]
    sent = [item for s in sessions for item in _sent(s)]
    sent.sort(key=lambda item: item[0].time.sent)
    assert [(r.session_id, r.index) for r, _, _ in sent] == [("sess-a", 0), ("sess-b", 0), ("sess-a", 1), ("sess-b", 1)]
    return sessions, sent


def test_two_sessions_without_session_evidence_pair_in_send_order_and_say_so(tmp_path: Path) -> None:
    sessions, sent = _two(tmp_path)
    wire = _write(tmp_path / "wire.jsonl", [(p, {}, b) for _, p, b in sent])
    assert _rows(sessions, wire) == [("sess-a", 0, "identical", 0, ACROSS), ("sess-a", 1, "identical", 2, ACROSS),
                                     ("sess-b", 0, "identical", 1, ACROSS), ("sess-b", 1, "identical", 3, ACROSS)]


def test_two_sessions_on_different_models_are_told_apart_by_the_body_model(tmp_path: Path) -> None:
    sessions, sent = _two(tmp_path, second_model="claude-sonnet-4-6")
    wire = _write(tmp_path / "wire.jsonl", [(p, {}, b) for _, p, b in sent])
    assert _rows(sessions, wire) == [("sess-a", 0, "identical", 0, BY_ORDER), ("sess-a", 1, "identical", 2, BY_ORDER),
                                     ("sess-b", 0, "identical", 1, BY_ORDER), ("sess-b", 1, "identical", 3, BY_ORDER)]


def test_a_pi_ai_session_header_pairs_like_dsh_s_header(tmp_path: Path) -> None:
    sessions, sent = _two(tmp_path)
    # the capture lists session B first: only the affinity header tells the sessions apart
    records = [(p, {"x-session-affinity": r.session_id}, b) for r, p, b in sent]
    wire = _write(tmp_path / "wire.jsonl", records[1::2] + records[0::2])
    note = "pi-ai session id (x-session-affinity) and order"
    assert _rows(sessions, wire) == [("sess-a", 0, "identical", 2, note), ("sess-a", 1, "identical", 3, note),
                                     ("sess-b", 0, "identical", 0, note), ("sess-b", 1, "identical", 1, note)]
    # a value naming no session given is no evidence (a profile header may set the name), not foreign
    other = _write(tmp_path / "other.jsonl", [(p, {"x-session-affinity": "team"}, b) for _, p, b in sent])
    assert [row[2:] for row in _rows(sessions, other)] == [("identical", 0, ACROSS), ("identical", 2, ACROSS),
                                                          ("identical", 1, ACROSS), ("identical", 3, ACROSS)]


# --- the rules, one by one -----------------------------------------------------------------------


def _capture(path: str, body: dict[str, Any], headers: dict[str, str] | None = None,
             position: int = 0) -> CapturedRequest:
    return CapturedRequest(position, "POST", path, headers or {}, json.dumps(body).encode(), None, "wire.jsonl",
                           f"line {position + 1}", "loop")


@pytest.mark.parametrize(("path", "headers", "body", "apis"), [
    ("/v1/messages", {}, {}, {"anthropic-messages"}),
    ("/v1/messages?beta=true", {}, {}, {"anthropic-messages"}),
    ("/v1/chat/completions", {}, {}, {"openai-completions", "deepseek-chat-completions"}),
    ("/chat/completions", {SESSION_HEADER: "s"}, {}, {"deepseek-chat-completions"}),
    ("/v1/responses", {}, {}, {"openai-responses"}),
    ("", {}, {"input": []}, {"openai-responses"}),
    ("", {}, {"system": "x", "messages": []}, {"anthropic-messages"}),
    ("", {}, {"messages": [{"role": "developer", "content": "x"}]},
     {"openai-completions", "deepseek-chat-completions"}),
    ("", {}, {"messages": [{"role": "user", "content": "x"}]}, None),
    ("/v1/complete", {}, {"messages": []}, None),
])
def test_the_wire_apis_of_a_capture(path: str, headers: dict[str, str], body: dict[str, Any],
                                    apis: set[str] | None) -> None:
    found = capture_apis(_capture(path, body, headers))
    assert (set(found) if found is not None else None) == apis


def test_a_prompt_cache_key_cut_to_64_code_points_names_its_session(tmp_path: Path) -> None:
    long_id = "session-" + "é" * 70
    b = _claude(long_id, 1_760_000_000_000, ["Hi."])
    session = open_session(b.write_jsonl(tmp_path / "long.jsonl"))
    (request, _, body), = _sent(session)
    cut = _capture("/v1/messages", {**json.loads(body), "prompt_cache_key": long_id[:64]})
    pairs = align(session.requests, [cut])
    assert [(p.request is request, p.capture is cut, p.note) for p in pairs] == [
        (True, True, "pi-ai session id (prompt_cache_key) and order")]
    assert PIAI_SESSION_HEADERS == ("x-session-affinity", "x-session-id", "session_id", "x-client-request-id")


def test_the_routes_given_decide_over_the_log_and_an_unknown_route_pairs_with_any(tmp_path: Path) -> None:
    session, _ = _switch(tmp_path)
    loops = [r for r in session.requests if r.kind == "loop"]
    shown = log_routes(session.requests)  # what the assistant messages of the whole session show
    assert [shown(r) for r in loops] == (
        ["deepseek-chat-completions"] * 2 + ["anthropic-messages"] * 2 + ["deepseek-chat-completions"])
    sent = _capture("/v1/messages", {"model": "deepseek-v4-pro"})  # the right model on another endpoint
    assert [(p.request.index if p.request else None, p.capture is sent)
            for p in align(loops[:1], [sent], routes=shown)] == [(0, False), (None, True)]
    # the first request alone shows no message of its route: unknown, the capture may be its send
    # (no catalog or default is assumed; rendering then says what is unknown)
    assert log_routes(loops[:1])(loops[0]) is None
    assert [(p.request.index if p.request else None, p.capture is sent) for p in align(loops[:1], [sent])] == [
        (0, True)]
    # the routes given win over what the log shows
    assert [p.capture is sent for p in align(loops[:1], [sent], routes=lambda _r: "anthropic-messages")] == [True]


def test_an_empty_wire_jsonl_is_a_capture_of_no_request(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """A proxy that recorded nothing leaves an empty ``wire.jsonl``: a capture of no request. Found
    beside the log it holds none of the session's requests, so it is not the session's capture (DSH810,
    exit 0: a found capture belongs to the sessions it holds); given with ``--capture`` every request
    is unmatched (DSH813, exit 1); never "not a capture format" (exit 2)."""
    log = chat_log(tmp_path / "s" / "session.jsonl", "empty-capture")
    capture = tmp_path / "s" / "wire.jsonl"
    capture.write_bytes(b"\n")
    assert load_capture(capture) == []
    code, out, err = invoke(monkeypatch, capsys, "check", str(log))
    assert (code, out.splitlines()[-1]) == (
        0, "PASSED: 1 log(s), 1 request(s), 0 error(s), 0 warning(s), 1 info, 0 failing (policy: defaults)")
    assert "│ none    │" in out  # the capture column: none for this session
    code, out, err = invoke(monkeypatch, capsys, "check", str(log), "--capture", str(capture))
    assert code == 1
    assert [line.split(": ", 3)[-1] for line in out.splitlines() if "DSH813" in line] == [
        "DSH813 error (fails the gate: capture-fail): loop request 0 is unmatched: no captured loop send of this session left on its route "
        "(deepseek-chat-completions, model deepseek-v4-flash) (hint: run `dsh-audit diff "
        f"{log} --capture {capture}` for the alignment (check that the capture covers the "
        "whole session))"]
