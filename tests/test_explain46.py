"""Session 46 (issue 15): why ``explain`` does not count a drop in cache reads as lost
(``uncounted_reason`` in ``explain --json``, the words of its ``cost:`` line): ``tolerance``, the one
reason. A prompt under the provider's minimum cacheable size has nothing reusable (every reusable
level is cut to the prompt's own size and is 0 below the minimum), so ``explain`` of such a request
says nothing was dropped, and no reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import invoke

from dsh_audit.cache import CacheVerdict
from dsh_audit.cli._break_loss import _Lost
from dsh_audit.testing import LogBuilder


def _verdict(classification: str, *, potential: int, actual: int) -> CacheVerdict:
    return CacheVerdict(index=1, kind="loop", turn=2, step=1, attempt=1, model="gpt-4o", family="openai",
                        prompt_tokens=900, counted_tokens=900, potential=potential, expected_any=0, expected=0,
                        actual=actual, classification=classification, lost={}, lost_cost=0.0)


def test_any_other_drop_not_counted_is_within_the_tolerance() -> None:
    lost = _Lost.of(_verdict("as_expected", potential=1024, actual=960))
    assert (lost.uncounted, lost.uncounted_reason) == (64, "tolerance")
    assert lost.sentence() == ("  cost: $0 (of 1024 reusable, read 960: 64 within the rule's tolerance, not "
                               "counted as lost) (as `cache` counts them)")
    assert _Lost.of(_verdict("below_minimum", potential=0, actual=0)).to_json()["uncounted_reason"] is None
    # whatever the verdict's class, a drop not counted is within the tolerance
    assert _Lost.of(_verdict("below_minimum", potential=1024, actual=0)).uncounted_reason == "tolerance"


def test_explain_of_a_prompt_under_the_minimum_counts_nothing_dropped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """gpt-4o caches from 1024 tokens: a follow-up prompt of 900 after one of 2000 is below_minimum in
    ``cache`` with nothing reusable, and ``explain`` says no drop (0 uncounted, no reason)."""
    b = LogBuilder(session_id="s-min46", created_at=1_800_000_000_000, provider="openai", model="gpt-4o",
                   system="S" * 6000)
    with b.turn("one"), b.step():
        b.assistant("one", usage={"inputTokens": 2000, "outputTokens": 10, "cacheReadTokens": 0})
    with b.turn("two"), b.step():
        b.assistant("two", usage={"inputTokens": 900, "outputTokens": 10, "cacheReadTokens": 0})
    log = b.write_jsonl(tmp_path / "s-min46" / "session.jsonl", packed=False)
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", str(log))
    (report,) = map(json.loads, out.splitlines())
    assert (code, err) == (0, [])
    assert [(v["index"], v["classification"], v["reusable_cache_read"], v["actual_cache_read"])
            for v in report["timeline"]] == [(0, "as_expected", 0, 0), (1, "below_minimum", 0, 0)]
    code, out, err = invoke(monkeypatch, capsys, "explain", str(log), "1", "--json")
    answer = json.loads(out)
    assert (code, err) == (0, [])
    assert [answer[key] for key in ("verdict", "reusable_cache_read", "actual_cache_read", "uncounted_tokens",
                                    "uncounted_reason", "lost_tokens")] == ["extension", 0, 0, 0, None, 0]
