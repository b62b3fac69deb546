"""The committed sample logs log usage as DSH's native DeepSeek adapter does, so they are priced.

DSH's ``mapUsage`` (``packages/llm/llm-deepseek/src/translate.ts:54-59``) logs ``inputTokens`` (the
cache misses), ``outputTokens``, ``cacheReadTokens`` and ``reasoningTokens`` whenever DeepSeek's API
reports them, and it always reports the cache hits (spec provider-cache-rules.md §1, "Usage fields").
A reply without ``cacheReadTokens`` on ``deepseek-official`` is unpriced (hits unknown), which made
every sample cost ``$?``. Title calls and failed attempts log no usage in DSH, so they stay unpriced.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import dsh_audit
from _cli import invoke

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
PROJECT = SAMPLES / "sessions" / "--home-dev-projects-demo--"
# every log scripts/make_sample_logs.py writes (sample_logs/generated is make_strategy_sample.py's)
LOGS = sorted(PROJECT.glob("*/session.jsonl.zstd")) + [SAMPLES / "chat" / "session.jsonl",
                                                        SAMPLES / "tools" / "session.jsonl"]
USAGE_KEYS = ["inputTokens", "outputTokens", "cacheReadTokens", "reasoningTokens"]  # mapUsage's order
# the loop requests that log no usage: attempts that failed (HTTP 503, a cut-off stream), as in DSH
FAILED = {"session-sample-retry": [0, 2]}


def _logged(request: dsh_audit.Request) -> dict[str, object] | None:
    return request.usage if request.usage is not None else request.message_usage


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.relative_to(SAMPLES).as_posix())
def test_every_answered_request_logs_its_cache_reads(path: Path) -> None:
    requests = dsh_audit.requests(dsh_audit.load(path))
    session = requests[0].session_id
    failed = [r.index for r in requests if r.kind == "loop" and _logged(r) is None]
    assert failed == FAILED.get(session, [])
    assert all(r.finish is not None and r.finish["kind"] == "error" for r in requests if r.index in failed)
    for request in requests:
        usage = _logged(request)
        if request.kind == "title" or request.index in failed:
            assert usage is None, (session, request.index)  # DSH logs no usage for these
            continue
        assert usage is not None and list(usage) == USAGE_KEYS, (session, request.index)
        assert all(isinstance(usage[key], int) and usage[key] >= 0 for key in USAGE_KEYS)
        assert usage["reasoningTokens"] <= usage["outputTokens"]  # reasoning is part of the output
        assert usage["cacheReadTokens"] % 64 == 0  # whole DeepSeek cache units


def test_cache_reads_are_what_the_rules_predict(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Each logged read is the expected one; every shortfall is one of the samples' intended breaks."""
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(SAMPLES / "sessions"), "--json", "--tokenizer", "estimate")
    reports = {r["session_id"]: r for r in map(json.loads, out.splitlines())}
    assert code == 0
    assert {sid: r["classifications"] for sid, r in reports.items()} == {
        "fork-child:review": {"as_expected": 1},
        "session-sample-change": {"as_expected": 1, "break_explained": 4},
        "session-sample-chat": {"as_expected": 2, "usage_unknown": 1},
        "session-sample-compaction": {"as_expected": 2, "break_explained": 2},
        "session-sample-fork-parent": {"as_expected": 4},
        "session-sample-resume": {"as_expected": 2, "break_explained": 1},
        "session-sample-retry": {"as_expected": 1, "break_explained": 1, "usage_unknown": 2},
        "session-sample-tools": {"as_expected": 4},
    }
    assert {sid: r["breaks_by_cause"] for sid, r in reports.items() if r["breaks_by_cause"]} == {
        "session-sample-change": {"header_change": 4}, "session-sample-compaction": {"compaction": 1, "prune": 1},
        "session-sample-resume": {"resume": 1}, "session-sample-retry": {"header_change": 1}}
    for report in reports.values():
        for entry in report["timeline"]:
            assert entry["actual_cache_read"] is None or entry["actual_cache_read"] == entry["expected_cache_read"], (
                report["session_id"], entry)


def test_usage_totals_are_priced(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "usage", str(SAMPLES / "sessions"), "--json")
    assert (code, err) == (0, [])  # --json: the unpriced counts are in the object, no warning
    result = json.loads(out)
    # unpriced: only the chat's title call and the retry's two failed attempts (no usage in DSH either)
    assert {row["key"]: row["unpriced_requests"] for row in result["rows"] if row["unpriced_requests"]} == {
        "session-sample-chat": 1, "session-sample-retry": 2}
    assert result["unpriced"] == {"usage not logged": 3}
    total = result["totals"]
    assert total["tokens"] == {"cache_miss": 4244, "cache_read": 2432, "cache_write": 0, "output": 211,
                               "reasoning": 49, "total": 6887}
    assert (total["requests"], total["usage_unknown_requests"], total["unpriced_requests"],
            total["cost_complete"]) == (28, 3, 3, False)
    assert total["cost_usd"] == {"cache_miss": 0.00257574, "cache_read": 0.000019456, "cache_write": 0,
                                 "output": 0.00030288, "total": 0.002898076}
    assert (total["no_cache_cost_usd"], total["off_peak_cost_usd"]) == (0.00373878, 0.001449038)
    assert (total["lost_tokens"], total["lost_cost_usd"], total["break_cost_usd"]) == (512, 0.00040192, 0.00040192)
