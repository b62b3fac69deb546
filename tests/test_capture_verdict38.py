"""Issue 13 leftover (session 38): a request whose log holds no usage and whose captured response
(``--capture``) does is judged from the capture's usage as any other request (not ``usage_unknown``),
its verdict saying so (``usage_source``: the timeline's ``*``, CSV's "usage source", the JSON key);
a logged usage is never overridden by the capture's. Issue 11 leftover: a captured response body
is parsed once, whatever its numbers."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from _cli import invoke

from dsh_audit.cache import CacheTotals, CacheVerdict, SessionCacheReport, Tokens, response_tokens
from dsh_audit.cache import _response_usage
from dsh_audit.cache._causes import judged_usage
from dsh_audit.cache._response_usage import UnusableUsage
from dsh_audit.cli._cache import _CAPTURED_NOTE, _captured_note, _measured, _row

NATIVE = {"config": {"provider": "deepseek-official"}}


def _request(usage: dict[str, Any] | None, kind: str = "loop", header: dict[str, Any] | None = None) -> Any:
    return SimpleNamespace(usage=usage, message_usage=None, header=header or {}, kind=kind, extra={})


# -- which usage judges a request --------------------------------------------------------------------

def test_a_request_without_usage_is_judged_from_the_capture() -> None:
    captured = Tokens(1910, 6784, output=13, reasoning=6)
    assert judged_usage(_request(None), captured) == captured
    assert (captured.prompt, captured.cache_read) == (8694, 6784)  # the verdict's prompt_tokens and actual


@pytest.mark.parametrize(("request_", "captured"), [
    (_request({"inputTokens": 1910, "outputTokens": 13, "cacheReadTokens": 6784}), Tokens(8694, output=13)),  # differs
    (_request({"inputTokens": 1910, "outputTokens": 13, "cacheReadTokens": 6784}), Tokens(1910, 6784, output=13)),
    # DSH's native DeepSeek adapter logged no cache read: the log's usage still judges (usage_unknown)
    (_request({"inputTokens": 8694, "outputTokens": 13}, header=NATIVE), Tokens(1910, 6784, output=13)),
    (_request(None), UnusableUsage(why="the capture's usage is damaged (w: input_tokens -1)")),
    (_request(None), None),
])
def test_a_logged_usage_or_none_in_the_capture_judges_from_the_log(request_: Any, captured: Tokens | None) -> None:
    assert judged_usage(request_, captured) is None


# -- what a verdict judged from the capture says -----------------------------------------------------

def _verdict(**changes: Any) -> CacheVerdict:
    fields: dict[str, Any] = {
        "index": 4, "kind": "loop", "turn": 4, "step": 1, "attempt": 1, "model": "deepseek-v4-pro",
        "family": "deepseek", "prompt_tokens": 8694, "counted_tokens": 8699, "potential": 7936, "expected_any": 0,
        "expected": 0, "actual": 6784, "classification": "break_explained", "cause": "header_change",
        "source_index": 3, "gap_seconds": 0.053, "lost": {"header_change": 1152}, "lost_cost": 0.000734976,
        "prompt_source": "wire:deepseek", "usage_source": "capture"}
    fields.update(changes)
    return CacheVerdict(**fields)


def test_its_json_row_and_timeline_row_say_the_capture_gave_its_counts() -> None:
    verdict = _verdict()
    assert verdict.to_json() == {
        "index": 4, "kind": "loop", "turn": 4, "step": 1, "attempt": 1, "model": "deepseek-v4-pro",
        "family": "deepseek", "prompt_tokens": 8694, "counted_tokens": 8699, "reusable_cache_read": 7936,
        "expected_any": 0, "expected_cache_read": 0, "actual_cache_read": 6784, "classification": "break_explained",
        "cause": "header_change", "source_index": 3, "gap_seconds": 0.053, "lost_tokens": 1152,
        "lost_tokens_by_cause": {"header_change": 1152}, "lost_cost_usd": 0.000734976, "prompt_source": "wire:deepseek",
        "usage_source": "capture"}
    assert "usage_source" not in _verdict(usage_source=None).to_json()  # judged from its log: as before
    table = [getattr(cell, "text", cell) for cell in _row(verdict)]
    assert table == [4, "loop", "4/1/1", "8694*", 7936, 0, "6784*", "break_explained (header_change)", "1152"]
    csv = [getattr(cell, "value", cell) for cell in _row(verdict, csv=True)]
    assert csv == [4, "loop", "4/1/1", 8694, "", 7936, 0, 6784, "break_explained (header_change)", 1152, "capture"]
    logged = [getattr(cell, "value", cell) for cell in _row(_verdict(usage_source=None), csv=True)]
    assert logged[-1] == "log"
    assert _CAPTURED_NOTE == "*: the capture's usage (the log holds none), which priced the request and judged its cache"


def test_it_counts_in_every_sum_as_a_logged_one_and_apart() -> None:
    unknown = _verdict(index=0, kind="title", prompt_tokens=None, actual=None, classification="usage_unknown",
                       cause=None, lost={}, lost_cost=0.0, usage_source=None, potential=0)
    totals = CacheTotals.of([_verdict(), _verdict(usage_source=None, index=5), unknown])
    assert (totals.requests, totals.known, totals.from_capture, totals.actual_total, totals.prompt_total,
            totals.break_count, totals.lost_by_cause, totals.lost_cost) == (
        3, 2, 1, 13568, 17388, 2, {"header_change": 2304}, 0.001469952)
    report = SessionCacheReport("s.jsonl", "s", (), "", {}, True, totals=totals, captured_usage={4: Tokens(1910, 6784)})
    assert (report.captured_count, _measured(report)) == (1, "2 with cache reads and prompt logged (1 of them by "
                                                             "the capture, * below)")
    assert _captured_note(report) == _CAPTURED_NOTE
    # a report judged on the log alone (no judging from the capture), whose captured request priced it only
    priced = SessionCacheReport("s.jsonl", "s", (), "", {}, True, totals=CacheTotals.of([unknown]),
                                captured_usage={0: Tokens(10, cache_write=165, output=5)})
    assert _captured_note(priced) == "*: the capture's usage, which priced it (the log holds none: usage_unknown)"
    assert _captured_note(SessionCacheReport("s.jsonl", "s", (), "", {}, True, totals=totals)) == _CAPTURED_NOTE
    assert _captured_note(SessionCacheReport("s.jsonl", "s", (), "", {}, True, totals=CacheTotals())) is None


# -- a response body is parsed once ------------------------------------------------------------------

@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every parse of a response text: by :func:`dsh_audit.log.parse_json` or :func:`literal_json`."""
    calls: list[str] = []
    strict, literal = _response_usage.parse_json, _response_usage.literal_json
    monkeypatch.setattr(_response_usage, "parse_json", lambda raw: calls.append("parse_json") or strict(raw))
    monkeypatch.setattr(_response_usage, "literal_json", lambda raw: calls.append("literal_json") or literal(raw))
    return calls


USAGE = '"usage": {"prompt_tokens": 140, "completion_tokens": 5, "prompt_cache_hit_tokens": 0, ' \
        '"prompt_cache_miss_tokens": %s}'


@pytest.mark.parametrize(("text", "told", "parsers"), [
    # a count past a double: said as written, from the one parse that keeps its text
    ("{" + USAGE % "1e400" + "}", "prompt_cache_miss_tokens 1e400", ["literal_json"]),
    ("{" + USAGE % "12345678901234567890123" + "}",
     "prompt_cache_miss_tokens 12345678901234567890123 (past 1,000,000,000)", ["literal_json"]),
    # a number past a double elsewhere: the usage is read from the same one parse
    ('{"created": 1e400, "id": 123456789012345678901, ' + USAGE % "140" + "}", Tokens(140, output=5),
     ["literal_json"]),
    ('{"id": "a3e5-1234567890123456", ' + USAGE % "140" + "}", Tokens(140, output=5), ["parse_json"]),
    ("{" + USAGE % "140" + "}", Tokens(140, output=5), ["parse_json"]),
    # an event stream: each event once
    ('data: {"choices": [], "created": 1.7e9}\n\ndata: {' + USAGE % "140" + "}\n\ndata: [DONE]\n\n",
     Tokens(140, output=5), ["literal_json", "parse_json"]),
])
def test_a_response_body_is_parsed_once(parses: list[str], text: str, told: Tokens | str, parsers: list[str]) -> None:
    found = response_tokens({"body": text}, "w")
    assert found == (told if isinstance(told, Tokens) else
                     UnusableUsage(why=f"the capture's usage is damaged (w: {told})"))
    assert parses == parsers


def test_the_parse_that_keeps_numbers_refuses_what_parse_json_refuses(parses: list[str]) -> None:
    """Nested past 512 levels, a NaN, a lone surrogate: no JSON, as :func:`dsh_audit.log.parse_json` says."""
    why = UnusableUsage(why="the capture's usage is damaged (w: the response body is neither JSON nor an event stream)")
    deep = '{"n": 1e5, "x": ' + "[" * 512 + "]" * 512 + ", " + USAGE % "140" + "}"
    assert response_tokens({"body": deep}, "w") == why
    assert response_tokens({"body": deep.replace("[" * 512, "[" * 511).replace("]" * 512, "]" * 511)},
                           "w") == Tokens(140, output=5)
    assert response_tokens({"body": '{"n": NaN, "x": 1e5, ' + USAGE % "140" + "}"}, "w") == why
    assert response_tokens({"body": '{"s": "\ud800", "x": 1e5, ' + USAGE % "140" + "}"}, "w") == why
    assert parses == ["literal_json"] * 3  # the lone surrogate: refused before any parse


# -- every view judges a request from the capture as any other (needs analyze_cache's ``captured``) --

CHANGE = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live" / "c-change"
needs_change = pytest.mark.skipif(not CHANGE.is_dir(), reason="../shared/corpus/live is absent")
#: The lines of the c-change log through request 4's usage chunk (turn 4, step 1: a header change
#: that lost 1152 of the 7936 reusable tokens): the log a crash left after that chunk, and before it.
_THROUGH_USAGE = 82


def _torn(tmp_path: Path, lines: int, name: str) -> Path:
    """The c-change log as a crash would leave it after its first ``lines`` lines (a torn tail DSH
    writes: the last request's usage chunk, which DSH writes just before ``finish``, not yet written)."""
    (log,) = (CHANGE / "session-logs").glob("*.jsonl")
    kept = log.read_text("utf-8").splitlines(keepends=True)[:lines]
    path = tmp_path / name / "session.jsonl"
    path.parent.mkdir()
    path.write_text("".join(kept), "utf-8")
    return path


def _cache_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *argv: str
                ) -> tuple[int, dict[str, Any], list[str]]:
    code, out, err = invoke(monkeypatch, capsys, "cache", "--json", *argv)
    return code, json.loads(out), err


@needs_change
def test_a_torn_request_is_judged_from_the_capture_as_its_logged_usage_judges_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    wire = str(CHANGE / "wire.jsonl")
    logged = _torn(tmp_path, _THROUGH_USAGE, "logged")
    torn = _torn(tmp_path, _THROUGH_USAGE - 1, "torn")
    code, report, err = _cache_json(monkeypatch, capsys, "--capture", wire, str(torn))
    assert (code, err) == (0, ["note: 2 request(s) priced from the capture's usage (their log holds none)"])
    assert [(v["index"], v["kind"], v["prompt_tokens"], v["reusable_cache_read"], v["expected_cache_read"],
             v["actual_cache_read"], v["classification"], v["cause"], v["lost_tokens_by_cause"], v["lost_cost_usd"],
             v.get("usage_source"))
            for v in report["timeline"]] == [
        (0, "title", 134, 0, 0, 0, "as_expected", None, {}, 0, "capture"),
        (1, "loop", 7963, 0, 0, 0, "as_expected", None, {}, 0, None),
        (2, "loop", 7993, 7936, 0, 0, "break_explained", "header_change", {"header_change": 7936}, 0.005063168, None),
        (3, "loop", 8039, 7936, 0, 7936, "break_explained", "header_change", {}, 0, None),
        (4, "loop", 8694, 7936, 0, 6784, "break_explained", "header_change", {"header_change": 1152}, 0.000734976,
         "capture")]
    totals = {key: report[key] for key in (
        "requests", "usage_known", "usage_known_without_prompt", "prompt_tokens", "actual_cache_read",
        "expected_cache_read", "actual_hit_ratio", "classifications", "breaks", "breaks_by_cause",
        "reusable_cache_read", "lost_tokens", "lost_tokens_by_cause", "lost_cost_usd", "lost_unknown_requests")}
    assert totals == {
        "requests": 5, "usage_known": 5, "usage_known_without_prompt": 0, "prompt_tokens": 32823,
        "actual_cache_read": 14720, "expected_cache_read": 0, "actual_hit_ratio": 14720 / 32823,
        "classifications": {"as_expected": 2, "break_explained": 3}, "breaks": 3,
        "breaks_by_cause": {"header_change": 3}, "reusable_cache_read": 23808, "lost_tokens": 9088,
        "lost_tokens_by_cause": {"header_change": 9088}, "lost_cost_usd": 0.005798144, "lost_unknown_requests": 0}
    assert (report["cost"]["break_cost_usd"], report["cost"]["usage_from_capture_requests"],
            report["cost"]["cost_usd"]["total"]) == (0.005798144, 2, 0.00823625)
    # the same story as the log that kept request 4's usage (which the capture agrees with)
    _, kept, _ = _cache_json(monkeypatch, capsys, "--capture", wire, str(logged))
    *same, judged = report["timeline"]
    assert [*same, {k: v for k, v in judged.items() if k != "usage_source"}] == kept["timeline"]
    assert {k: v for k, v in report.items() if k not in ("path", "timeline", "cost")} == {
        k: v for k, v in kept.items() if k not in ("path", "timeline", "cost")}
    assert {**report["cost"], "usage_from_capture_requests": 1} == kept["cost"]
    # without the capture the request is usage_unknown, and its break lost an unknown amount
    _, alone, _ = _cache_json(monkeypatch, capsys, str(torn))
    assert [(v["classification"], v["actual_cache_read"], v["lost_tokens_by_cause"]) for v in alone["timeline"][3:]] == [
        ("break_explained", 7936, {}), ("break_explained", None, None)]
    assert (alone["usage_known"], alone["lost_unknown_requests"]) == (3, 1)


@needs_change
def test_the_table_marks_what_the_capture_gave_and_says_how_many(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    torn = _torn(tmp_path, _THROUGH_USAGE - 1, "torn")
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--capture", str(CHANGE / "wire.jsonl"), str(torn))
    lines = out.splitlines()
    assert code == 0
    assert lines[1] == "requests 5 (5 with cache reads and prompt logged (2 of them by the capture, * below)); " \
                       "prompt tokens of those 32823"
    assert [line.split("│")[4:9] for line in lines[lines.index("timeline") + 4:][:5]] == [
        ["   134* ", "        0 ", "        0 ", "     0* ", " as_expected                     "],
        ["   7963 ", "        0 ", "        0 ", "      0 ", " as_expected                     "],
        ["   7993 ", "     7936 ", "        0 ", "      0 ", " break_explained (header_change) "],
        ["   8039 ", "     7936 ", "        0 ", "   7936 ", " break_explained (header_change) "],
        ["  8694* ", "     7936 ", "        0 ", "  6784* ", " break_explained (header_change) "]]
    assert lines[-1] == _CAPTURED_NOTE


@needs_change
def test_a_logged_usage_the_capture_contradicts_is_judged_from_the_log(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The log wins (``usage_differs``): request 4 is judged from its logged 6784 cache reads, though the
    capture says 8000; the ledger counts the difference, and a note says so."""
    logged = _torn(tmp_path, _THROUGH_USAGE, "logged")
    records = [json.loads(line) for line in (CHANGE / "wire.jsonl").read_text("utf-8").splitlines()]
    usage = records[4]["response"]["usage"]
    assert usage["prompt_cache_hit_tokens"] == 6784
    usage.update(prompt_cache_hit_tokens=8000, prompt_cache_miss_tokens=694)
    usage["prompt_tokens_details"]["cached_tokens"] = 8000
    wire = tmp_path / "wire.jsonl"
    wire.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    code, report, err = _cache_json(monkeypatch, capsys, "--capture", str(wire), str(logged))
    assert (code, err) == (0, ["note: 1 request(s) priced from the capture's usage (their log holds none)",
                               "note: 1 request(s) logged a usage the capture's contradicts: the log's is kept"])
    row = report["timeline"][4]
    assert (row["actual_cache_read"], row["classification"], row["lost_tokens_by_cause"], "usage_source" in row) == (
        6784, "break_explained", {"header_change": 1152}, False)
    assert (report["cost"]["usage_differs_requests"], report["lost_tokens_by_cause"]) == (1, {"header_change": 9088})
