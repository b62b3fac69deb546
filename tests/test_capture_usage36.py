"""Issue 13 leftover: a request whose log holds no usage (a title call) is priced from the provider's
usage in the captured response to its send (``dsh_audit/cache/_captured_usage.py``), each provider's
convention read (DeepSeek hits and misses, OpenAI cached inside the prompt, Anthropic's cache reads
and writes apart), from a summary object, a JSON body or an SSE stream; a logged usage is never
overridden (a capture that contradicts it is counted), and each entry says where its tokens came from.

The views (``usage``, ``cache``, ``sessions``, ``check``) reach it through ``cache_report`` and
``ledger_group`` with ``--capture``: ``tests/test_capture_usage36_views.py``.
"""

from __future__ import annotations

import base64
import glob
import json
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.cache import (Costs, Tokens, captured_usage, entry_usage, given_usage, response_tokens, session_ledger,
                             usage_table, usage_tokens)
from dsh_audit.cache._captured_usage import UnusableUsage
from dsh_audit.capture import TITLE_PREFIX
from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder
from dsh_audit.wire import render

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
SESSION = "session-capusage"


# -- each provider's convention ------------------------------------------------------------------

@pytest.mark.parametrize(("usage", "tokens"), [
    # DeepSeek: hits and misses apart (prompt_tokens = hit + miss), reasoning inside completion
    ({"prompt_tokens": 8027, "completion_tokens": 18, "prompt_tokens_details": {"cached_tokens": 7936},
      "completion_tokens_details": {"reasoning_tokens": 8}, "prompt_cache_hit_tokens": 7936,
      "prompt_cache_miss_tokens": 91}, Tokens(91, 7936, 0, 18, 8)),
    ({"prompt_tokens": 100, "completion_tokens": 1, "prompt_cache_miss_tokens": 30}, Tokens(30, 70, 0, 1)),
    ({"prompt_tokens": 100, "completion_tokens": 1, "prompt_cache_hit_tokens": 64}, Tokens(36, 64, 0, 1)),
    # OpenAI chat completions: the cached tokens are inside prompt_tokens
    ({"prompt_tokens": 2006, "completion_tokens": 300, "prompt_tokens_details": {"cached_tokens": 1920},
      "completion_tokens_details": {"reasoning_tokens": 256}}, Tokens(86, 1920, 0, 300, 256)),
    ({"prompt_tokens": 12, "completion_tokens": 3}, Tokens(12, 0, 0, 3)),
    # OpenAI Responses: the cached tokens are inside input_tokens
    ({"input_tokens": 5000, "input_tokens_details": {"cached_tokens": 4864}, "output_tokens": 40,
      "output_tokens_details": {"reasoning_tokens": 32}, "total_tokens": 5040}, Tokens(136, 4864, 0, 40, 32)),
    # Anthropic: input, cache reads and cache writes reported apart
    ({"input_tokens": 10, "cache_read_input_tokens": 7872, "cache_creation_input_tokens": 310, "output_tokens": 22},
     Tokens(10, 7872, 310, 22)),
    ({"input_tokens": 10, "output_tokens": 5}, Tokens(10, 0, 0, 5)),
])
def test_each_convention(usage: dict[str, Any], tokens: Tokens) -> None:
    assert usage_tokens(usage) == tokens


@pytest.mark.parametrize("usage", [
    {"prompt_tokens": 10, "completion_tokens": -1},  # a count that is none
    {"prompt_tokens": 10, "completion_tokens": 1, "prompt_tokens_details": {"cached_tokens": 11}},  # more cached
    {"input_tokens": 10, "output_tokens": 1, "cache_read_input_tokens": "9"},
    {"prompt_tokens": 10, "completion_tokens": 1, "prompt_cache_hit_tokens": 1.5},
    {"total_tokens": 10}, None, [], "usage",
])
def test_a_damaged_usage_is_none(usage: Any) -> None:
    assert usage_tokens(usage) is None


# -- the shapes a capture holds a response in ----------------------------------------------------

def _sse(*events: tuple[str | None, Any]) -> str:
    return "".join((f"event: {name}\n" if name else "") + "data: "
                   + (data if isinstance(data, str) else json.dumps(data)) + "\n\n" for name, data in events)


OPENAI_STREAM = _sse((None, {"choices": [{"delta": {"content": "Hi\u2028there"}}]}),
                     (None, {"choices": [], "usage": {"prompt_tokens": 900, "completion_tokens": 7,
                                                      "prompt_tokens_details": {"cached_tokens": 768}}}),
                     (None, "[DONE]"))
ANTHROPIC_STREAM = _sse(
    ("message_start", {"type": "message_start", "message": {"id": "msg_1", "usage": {
        "input_tokens": 12, "cache_creation_input_tokens": 300, "cache_read_input_tokens": 4000, "output_tokens": 1}}}),
    ("content_block_delta", {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "x"}}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 41}}),
    ("message_stop", {"type": "message_stop"}))
RESPONSES_STREAM = _sse(
    ("response.created", {"type": "response.created", "response": {"id": "r", "usage": None}}),
    ("response.completed", {"type": "response.completed", "response": {"id": "r", "usage": {
        "input_tokens": 700, "input_tokens_details": {"cached_tokens": 512}, "output_tokens": 9,
        "output_tokens_details": {"reasoning_tokens": 0}}}}))


@pytest.mark.parametrize(("response", "tokens"), [
    # the corpus's summary object: the provider's usage beside the scripted reply
    ({"script": {"text": "Fake session title"}, "usage": {"input_tokens": 10, "cache_read_input_tokens": 0,
                                                         "cache_creation_input_tokens": 165, "output_tokens": 5}},
     Tokens(10, 0, 165, 5)),
    # a body text: a stream of each API (a U+2028 inside a payload does not end its line) or a JSON body
    (OPENAI_STREAM, Tokens(132, 768, 0, 7)),
    ({"status": 200, "body": ANTHROPIC_STREAM}, Tokens(12, 4000, 300, 41)),
    (RESPONSES_STREAM, Tokens(188, 512, 0, 9)),
    ('{"id": "chatcmpl-1", "usage": {"prompt_tokens": 40, "completion_tokens": 2, "prompt_cache_hit_tokens": 0, '
     '"prompt_cache_miss_tokens": 40}}', Tokens(40, 0, 0, 2)),
    # Anthropic's newer message_delta carries the whole usage again: its counts replace the start's
    (_sse(("message_start", {"type": "message_start", "message": {"usage": {"input_tokens": 3, "output_tokens": 1}}}),
          ("message_delta", {"type": "message_delta", "usage": {"input_tokens": 3, "cache_read_input_tokens": 9,
                                                                "output_tokens": 8}})), Tokens(3, 9, 0, 8)),
    # a HAR response, its content text plain or base64
    ({"status": 200, "content": {"mimeType": "text/event-stream", "text": OPENAI_STREAM}}, Tokens(132, 768, 0, 7)),
    ({"content": {"text": base64.b64encode(ANTHROPIC_STREAM.encode()).decode(), "encoding": "base64"}},
     Tokens(12, 4000, 300, 41)),
])
def test_response_shapes(response: Any, tokens: Tokens) -> None:
    assert response_tokens(response) == tokens


@pytest.mark.parametrize("response", [
    None, {}, {"script": {"text": "x"}}, {"error": {"message": "overloaded"}}, "", "data: [DONE]\n\n",
    _sse((None, {"choices": [{"delta": {"content": "no usage asked"}}]})),
    {"status": 503, "body": "Service Unavailable"},
])
def test_a_response_without_usage_prices_nothing(response: Any) -> None:
    assert response_tokens(response) is None


def test_a_body_that_is_no_base64_is_damaged_never_priced() -> None:
    assert response_tokens({"content": {"text": "not base64 ~", "encoding": "base64"}}) == UnusableUsage(
        why="the capture's usage is damaged (content.text is not base64)")


def test_a_body_that_is_neither_json_nor_a_stream_is_damaged_never_priced() -> None:
    assert response_tokens("upstream error {") == UnusableUsage(
        why="the capture's usage is damaged (the response body is neither JSON nor an event stream)")


# -- a test-made log and its capture -------------------------------------------------------------

USAGE = {"inputTokens": 1000, "outputTokens": 100, "cacheReadTokens": 0}


def _log(tmp_path: Path) -> Path:
    """A DeepSeek session (DSH's native adapter): one loop request with usage, then a title call,
    whose log holds no usage."""
    builder = LogBuilder(session_id=SESSION)
    with builder.turn("Hi"):
        with builder.step():
            builder.assistant("Hello", usage=USAGE)
    builder.title("A title")
    return builder.write_jsonl(tmp_path / "session.jsonl", packed=False)


def _usage(miss: int, hit: int, output: int) -> dict[str, Any]:
    return {"prompt_tokens": miss + hit, "completion_tokens": output, "total_tokens": miss + hit + output,
            "prompt_tokens_details": {"cached_tokens": hit}, "prompt_cache_hit_tokens": hit,
            "prompt_cache_miss_tokens": miss}


def _capture(tmp_path: Path, log: Path, responses: dict[int, list[Any]]) -> Path:
    """A wire.jsonl of every request of ``log``, rendered, each sent once per response given for its
    index (an identical resend after the first), with that response; a title call's system prompt is
    DSH's (the builder's is not), which tells a capture's kind."""
    session = open_session(log)
    lines = []
    for request in session.requests:
        body = render(request).body.decode()
        if request.kind == "title":
            sent = json.loads(body)
            sent["messages"][0]["content"] = TITLE_PREFIX + "."
            body = json.dumps(sent)
        for response in responses[request.index]:
            lines.append(json.dumps({"method": "POST", "path": "/chat/completions", "body": body, "response": response,
                                     "headers": {"x-deepseek-harness-session-id": SESSION}}))
    wire = tmp_path / "wire.jsonl"
    wire.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return wire


def test_a_title_call_is_priced_from_the_capture_and_says_so(tmp_path: Path) -> None:
    log = _log(tmp_path)
    wire = _capture(tmp_path, log, {0: [{"usage": _usage(1000, 0, 100)}], 1: [{"usage": _usage(140, 0, 5)}]})
    session = open_session(log)
    assert [r.kind for r in session.requests] == ["loop", "title"]
    captured = captured_usage([session], wire)
    assert captured == {SESSION: {0: Tokens(1000, 0, 0, 100), 1: Tokens(140, 0, 0, 5)}}
    alone, priced = session_ledger(session), session_ledger(session, captured=captured[SESSION])
    assert [(e.usage_source, e.unpriced) for e in alone.entries] == [("log", None), (None, "usage not logged")]
    assert [(e.usage_source, e.tokens, e.unpriced, e.usage_differs) for e in priced.entries] == [
        ("log", Tokens(1000, 0, 0, 100), None, False), ("capture", Tokens(140, 0, 0, 5), None, False)]
    title = priced.entries[1]
    # deepseek-v4-flash at its peak rates (the builder's clock): 140 misses and 5 output tokens
    assert (title.window, title.cost, title.off_peak_cost, title.to_json()["usage_source"]) == (
        "peak", Costs(4.2e-05, 0.0, 0.0, 6e-06), 2.4e-05, "capture")
    summary = priced.summary()
    assert (summary["cost_complete"], summary["usage_from_capture_requests"], summary["usage_differs_requests"],
            summary["tokens"]["total"]) == (True, 1, 0, 1245)
    assert (alone.summary()["usage_from_capture_requests"], alone.summary()["cost_complete"]) == (0, False)
    table = usage_table([priced], by="request")
    assert [r.to_json(tier=True)["usage_source"] for r in table.rows] == ["log", "capture"]
    assert (table.total.usage_from_capture, table.total.usage_differs) == (1, 0)


def test_a_logged_usage_is_kept_when_the_capture_contradicts_it(tmp_path: Path) -> None:
    log = _log(tmp_path)
    wire = _capture(tmp_path, log, {0: [{"usage": _usage(900, 100, 100)}], 1: [{"script": {}}]})
    session = open_session(log)
    ledger = session_ledger(session, captured=captured_usage([session], wire)[SESSION])
    assert [(e.usage_source, e.tokens, e.usage_differs, e.unpriced) for e in ledger.entries] == [
        ("log", Tokens(1000, 0, 0, 100), True, None), (None, None, False, "usage not logged")]
    assert ledger.entries[0].to_json()["usage_differs_from_capture"] is True
    assert "usage_differs_from_capture" not in ledger.entries[1].to_json()
    assert (ledger.summary()["usage_differs_requests"], ledger.summary()["usage_from_capture_requests"]) == (1, 0)


def test_a_resend_after_a_failed_send_prices_the_request(tmp_path: Path) -> None:
    log = _log(tmp_path)
    failed = {"status": 503, "body": "Service Unavailable"}
    wire = _capture(tmp_path, log, {0: [{"usage": _usage(1000, 0, 100)}], 1: [failed, {"usage": _usage(140, 0, 5)}]})
    session = open_session(log)
    assert captured_usage([session], wire)[SESSION][1] == Tokens(140, 0, 0, 5)


def test_a_har_capture_holds_its_responses_as_content_text(tmp_path: Path) -> None:
    log = _log(tmp_path)
    wire = _capture(tmp_path, log, {0: [{}], 1: [{}]})
    stream = _sse((None, {"choices": [], "usage": _usage(140, 0, 5)}), (None, "[DONE]"))
    entries = [{"startedDateTime": "2026-12-06T10:00:00Z", "request": {
        "method": "POST", "url": "https://api.deepseek.com/chat/completions",
        "headers": [{"name": k, "value": v} for k, v in record["headers"].items()],
        "postData": {"mimeType": "application/json", "text": record["body"]}},
        "response": {"status": 200, "content": {"mimeType": "text/event-stream", "text": stream}}}
        for record in map(json.loads, wire.read_text(encoding="utf-8").splitlines())]
    entries[0]["response"]["content"] = {"text": base64.b64encode(json.dumps({"usage": _usage(1000, 0, 100)}).encode())
                                         .decode(), "encoding": "base64", "mimeType": "application/json"}
    har = tmp_path / "capture.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": entries}}), encoding="utf-8")
    session = open_session(log)
    assert captured_usage([session], har) == {SESSION: {0: Tokens(1000, 0, 0, 100), 1: Tokens(140, 0, 0, 5)}}


def test_pricing_takes_the_pairings_it_is_given(tmp_path: Path) -> None:
    """``check`` prices by its comparison's pairings: the capture read once with ``keep_usage``, and
    the pairings handed over, price as the capture file aligned here does; pairings that pair
    nothing leave every request of the session unmatched."""
    from dsh_audit.cache._captured_usage import given_capture, keep_usage
    from dsh_audit.capture import align, read_capture
    log = _log(tmp_path)
    wire = _capture(tmp_path, log, {0: [{"usage": _usage(1000, 0, 100)}], 1: [{"usage": _usage(140, 0, 5)}]})
    session = open_session(log)
    read = read_capture(wire, warnings=[], keep=keep_usage)
    pairings = align(session.requests, read.requests)
    expected = {SESSION: {0: Tokens(1000, 0, 0, 100), 1: Tokens(140, 0, 0, 5)}}
    assert captured_usage([session], wire) == expected
    assert captured_usage([session], read, pairings=pairings) == expected
    aligned = given_capture([session], wire)
    assert aligned is not None and given_usage([session], aligned) == expected
    unmatched = captured_usage([session], read, pairings=[])
    assert {i: t.why for i, t in unmatched[SESSION].items()} == {  # type: ignore[attr-defined]
        0: "usage not logged; the capture matched no request of this session",
        1: "usage not logged; the capture matched no request of this session"}


def test_no_capture_given_prices_nothing_and_an_unreadable_one_neither(tmp_path: Path) -> None:
    session = open_session(_log(tmp_path))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"method": "POST", "body": "{}", "body_bytes": 3}\n', encoding="utf-8")
    assert (given_usage([session], None), given_usage([session], bad)) == ({}, {})


def test_entry_usage_reads_the_log_first() -> None:
    from types import SimpleNamespace as R
    damaged = R(usage={"inputTokens": -1, "outputTokens": "x"}, message_usage=None, header={}, kind="title", extra={})
    # a usage with no valid count is none logged: the capture's prices it
    assert entry_usage(damaged, Tokens(5, output=1)) == (Tokens(5, output=1), (), "capture", False)
    assert entry_usage(damaged) == (None, (), None, False)


# -- the corpus ----------------------------------------------------------------------------------

def _scenario(folder: Path) -> tuple[list[Any], dict[str, dict[int, Tokens]]]:
    sessions = [open_session(p) for p in sorted(glob.glob(str(folder / "home/sessions/**/session.jsonl.zstd"),
                                                          recursive=True))]
    return sessions, captured_usage(sessions, folder / "wire.jsonl")


@needs_corpus
@pytest.mark.parametrize("scenario", sorted(p.parent.name for p in CORPUS.glob("live*/*/wire.jsonl")))
def test_every_corpus_capture_agrees_with_its_logs_and_prices_their_titles(scenario: str) -> None:
    folder = next(p.parent for p in CORPUS.glob(f"live*/{scenario}/wire.jsonl"))
    sessions, captured = _scenario(folder)
    records = [json.loads(line) for line in (folder / "wire.jsonl").read_text(encoding="utf-8").splitlines()]
    # every captured response's usage reaches the request it answers, and agrees with what its log holds
    assert sum(map(len, captured.values())) == len(records)
    for session in sessions:
        ledger = session_ledger(session, captured=captured.get(session.id, {}))
        sources = [e.usage_source for e in ledger.entries]
        assert not any(e.usage_differs for e in ledger.entries), session.path
        assert sources == ["capture" if r.usage is None and r.message_usage is None else "log"
                           for r in session.requests], session.path
        assert [e.kind for e in ledger.entries if e.usage_source == "capture"] == (
            ["title"] if not session.header.parent_session else [])
        assert "usage not logged" not in ledger.unpriced


@needs_corpus
def test_live_pi_exact_numbers() -> None:
    sessions, captured = _scenario(CORPUS / "live-pi" / "c1-anthropic-tools")
    (session,) = sessions
    before, after = session_ledger(session), session_ledger(session, captured=captured[session.id])
    title = after.entries[0]
    # the title call's response: input 10, cache writes 165, output 5, at claude-sonnet-4-5's rates
    # ($3 input, $3.75 5-minute writes, $15 output per million)
    assert (title.kind, title.usage_source, title.tokens, title.cost and title.cost.to_json()) == (
        "title", "capture", Tokens(10, 0, 165, 5),
        {"cache_miss": 3e-05, "cache_read": 0.0, "cache_write": 0.00061875, "output": 7.5e-05, "total": 0.00072375})
    assert (before.summary()["cost_usd"]["total"], before.summary()["cost_complete"]) == (0.0934629, False)
    assert (after.summary()["cost_usd"]["total"], after.summary()["cost_complete"]) == (0.09418665, True)
    assert after.tokens == Tokens(110, 67968, 18655, 234)
    sessions, captured = _scenario(CORPUS / "live-pi" / "c3-openai-compat")
    (session,) = sessions
    ledger = session_ledger(session, captured=captured[session.id])
    # the OpenAI-compatible route's responses count DeepSeek's way; the model has no price: unpriced for it
    assert [(e.usage_source, e.tokens) for e in ledger.entries[:2]] == [
        ("capture", Tokens(152, 0, 0, 5)), ("log", Tokens(8078, 0, 0, 17))]
    assert (ledger.unpriced, ledger.tokens) == ({"no price for model 'local-coder'": 6}, Tokens(8769, 33024, 0, 114))
