"""Fuzz round 18 (D1, D5, D6, D9): a captured or logged usage no request can have is damaged,
never priced, and every view says where; a capture of another session says it matched none."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from _cli import invoke

from dsh_audit.cache import Tokens, response_tokens, usage_tokens
from dsh_audit.cache._captured_usage import UNMATCHED, UnusableUsage
from dsh_audit._usage_rule import MAX_TOKENS, is_count
from dsh_audit.capture import read_capture


def _sse(*events: dict[str, Any]) -> str:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events)


START = {"type": "message_start", "message": {"usage": {"input_tokens": 10, "output_tokens": 1}}}
DELTA = {"type": "message_delta", "usage": {"output_tokens": 7}}
C1 = Path("../shared/corpus/live-pi/c1-anthropic-tools")
LOG = next(iter(sorted((C1 / "session-logs").glob("*.jsonl"))), C1)
CHUNK = {"object": "chat.completion.chunk", "usage": {"prompt_tokens": 99999, "completion_tokens": 1}}


def test_the_bound_holds_any_real_count_and_refuses_10_18() -> None:
    assert (is_count(MAX_TOKENS), is_count(3_500_000), is_count(MAX_TOKENS + 1), is_count(10**18)) == (
        True, True, False, False)


@pytest.mark.parametrize(("response", "why"), [
    ({"usage": {"input_tokens": 10**18, "output_tokens": 5}}, "input_tokens 1000000000000000000 (past 1,000,000,000)"),
    ({"usage": {"input_tokens": -10, "output_tokens": 5}}, "input_tokens -10"),
    ({"usage": {"input_tokens": "10", "output_tokens": 5}}, "input_tokens a string"),
    ({"usage": {"input_tokens": True, "output_tokens": 5}}, "input_tokens true"),
    ({"usage": {"input_tokens": 10.5, "output_tokens": 5}}, "input_tokens 10.5"),  # 10.0 is 10: test_fuzz_round29b
    ({"usage": [10, 5]}, "usage a list"),
    ({"usage": {"prompt_tokens": 10, "completion_tokens": 1, "prompt_cache_hit_tokens": 500,
                "prompt_cache_miss_tokens": 500}},
     "prompt_cache_hit_tokens 500 + prompt_cache_miss_tokens 500 != prompt_tokens 10"),
    ({"usage": {"prompt_tokens": 10, "completion_tokens": 5, "completion_tokens_details": {"reasoning_tokens": -5}}},
     "reasoning_tokens -5"),
    ({"body": _sse(START, CHUNK, DELTA)}, "the stream mixes anthropic and chat events"),
    ({"body": _sse(START, START)}, "a second message_start"),
    ({"body": _sse(DELTA)}, "a message_delta before message_start"),
    ({"body": "data: {\"type\": NaN}\n\n"}, "an event's data is no JSON"),
])
def test_a_damaged_captured_usage_says_why_and_where(response: Any, why: str) -> None:
    told = response_tokens(response, "wire.jsonl line 1")
    assert told == UnusableUsage(why=f"the capture's usage is damaged (wire.jsonl line 1: {why})")
    assert usage_tokens(response.get("usage")) is None


def test_one_anthropic_stream_is_still_read() -> None:
    assert response_tokens({"body": _sse(START, DELTA) + "data: [DONE]\n\n"}) == Tokens(10, output=7)


@pytest.mark.skipif(not C1.is_dir(), reason="../shared/corpus/live-pi is absent")
def test_the_views_say_the_damage_and_the_unmatched_capture(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    first = json.loads((C1 / "wire.jsonl").read_text().splitlines()[0])
    first["response"] = {"usage": {"input_tokens": 10**18, "output_tokens": 5}}
    damaged = tmp_path / "wire.jsonl"
    damaged.write_text(json.dumps(first) + "\n")
    code, out, err = invoke(monkeypatch, capsys, "usage", "--capture", str(damaged), str(LOG))
    assert (code, err) == (0, ["warning: 1 request(s) unpriced: the capture's usage is damaged (wire.jsonl line 1: "
                               "input_tokens 1000000000000000000 (past 1,000,000,000))"])
    other = C1.parent / "c3-openai-compat" / "wire.jsonl"  # another session's capture
    code, out, err = invoke(monkeypatch, capsys, "usage", "--capture", str(other), str(LOG))
    assert (code, err) == (0, [f"warning: 1 request(s) unpriced: {UNMATCHED}"])


@pytest.mark.skipif(not C1.is_dir(), reason="../shared/corpus/live-pi is absent")
def test_a_logged_count_past_the_bound_is_damaged_and_named(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    text = LOG.read_text()
    old = '"usage":{"inputTokens":10,"outputTokens":23,"cacheWriteTokens":8019}'
    assert old in text
    log = tmp_path / "log-big18.jsonl"
    log.write_text(text.replace(old, old.replace(":10,", f":{10**18},"), 1))
    code, out, err = invoke(monkeypatch, capsys, "usage", "--format", "csv", str(log))
    assert (code, err) == (0, ["warning: 1 request(s) unpriced: the log's usage is damaged (request 1, seq 14: "
                               "inputTokens past 1,000,000,000 tokens)",
                               "warning: 1 request(s) unpriced: usage not logged"])


def test_the_capture_is_read_once_keeping_each_response_as_its_tokens(tmp_path: Path) -> None:
    record = {"method": "POST", "path": "/v1/messages", "headers": {}, "body": json.dumps({"model": "m", "messages": []}),
              "response": {"body": _sse(START, DELTA) + "x" * 1000}}
    wire = tmp_path / "wire.jsonl"
    wire.write_text(json.dumps(record) + "\n")
    read = read_capture(wire, warnings=[], keep=lambda r: sorted(r))
    assert (len(read.requests), read.records) == (1, [["body", "headers", "method", "path", "response"]])


@pytest.mark.skipif(not C1.is_dir(), reason="../shared/corpus/live-pi is absent")
def test_cache_says_what_the_capture_did_to_its_prices_as_usage_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (C1 / "wire.jsonl").read_text().splitlines()
    second = json.loads(lines[1])
    second["response"] = {"usage": {"input_tokens": 10, "cache_read_input_tokens": 0,
                                    "cache_creation_input_tokens": 999999, "output_tokens": 5000}}
    contra = tmp_path / "contra.jsonl"
    contra.write_text("\n".join([lines[0], json.dumps(second), *lines[2:]]) + "\n")
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", "--capture", str(contra), str(LOG))
    assert (code, err) == (0, ["note: 1 request(s) priced from the capture's usage (their log holds none)",
                               "note: 1 request(s) logged a usage the capture's contradicts: the log's is kept"])
    other = C1.parent / "c3-openai-compat" / "wire.jsonl"
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", "--capture", str(other), str(LOG))
    assert (code, err) == (0, [f"warning: 1 request(s) unpriced: {UNMATCHED}"])
