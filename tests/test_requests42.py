"""Session 42: `requests` says where a request's tokens come from by the ledger's one rule
(:func:`dsh_audit._usage_rule.logged_counts`), and reads a capture given with ``--capture`` once
per run, whatever the number of logs."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from _cli import invoke
from dsh_audit._usage_rule import MAX_TOKENS
from dsh_audit.testing import LogBuilder

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live"


def _damaged_log(tmp_path: Path, provider: str) -> Path:
    """A log of three requests on ``provider``'s route: one whose logged usage holds counts past
    :data:`MAX_TOKENS` only (no count: `usage` leaves it unpriced), one with a sound usage, one
    whose ``inputTokens`` is a string (its other counts are logged)."""
    b = LogBuilder(session_id=f"s-{provider}", provider=provider, model="m")
    past = MAX_TOKENS + 1
    with b.turn("Hi"), b.step():
        b.assistant("Hello", usage={"inputTokens": past, "cacheReadTokens": past})
    with b.turn("Again"), b.step():
        b.assistant("Yes", usage={"inputTokens": 5, "outputTokens": 2, "cacheReadTokens": 3})
    with b.turn("Once more"), b.step():  # a count written as a string: no count, the others are
        b.assistant("Yes", usage={"inputTokens": "5", "outputTokens": 2, "cacheReadTokens": 3})
    return b.write_jsonl(tmp_path / "session.jsonl")


@pytest.mark.parametrize("provider", ["deepseek-official", "anthropic"])
def test_requests_usage_source_is_usages_for_a_count_past_max_tokens(
        tmp_path: Path, provider: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: `requests --json` said "log" for the damaged usage (any integer >= 0 counted), where
    `usage --by request --json` said null (it refuses a count past MAX_TOKENS)."""
    log = str(_damaged_log(tmp_path, provider))
    code, out, _ = invoke(monkeypatch, capsys, "requests", log, "--json", "--no-capture")
    shown = [(r["index"], r["usage_source"]) for r in map(json.loads, out.splitlines())]
    assert code == 0
    _, out, _ = invoke(monkeypatch, capsys, "usage", log, "--by", "request", "--json", "--no-capture")
    priced = [(int(r["key"].rpartition("#")[2]), r["usage_source"]) for r in json.loads(out)["rows"]]
    assert shown == priced == [(0, None), (1, "log"), (2, "log")]


#: Runs ``dsh-audit ARGS`` (argv[2:]) in process and prints its exit code and how often it opened
#: the file argv[1]: in a subprocess, so that the audit hook does not outlive the test.
_COUNTER = textwrap.dedent("""
    import os, sys
    from click.testing import CliRunner
    from dsh_audit.cli import cli

    target = os.path.realpath(sys.argv[1])
    opened = []

    def hook(event, args):
        if event == "open" and isinstance(args[0], (str, bytes)) and os.path.realpath(os.fsdecode(args[0])) == target:
            opened.append(args[0])

    sys.addaudithook(hook)
    result = CliRunner().invoke(cli, sys.argv[2:])
    print(result.exit_code, len(opened))
""")


@pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
def test_requests_reads_a_given_capture_once_for_every_log() -> None:
    """Before: 4 opens for 3 logs (one to check it could be read, one for each log's view)."""
    capture = CORPUS / "a-chat" / "wire.jsonl"
    logs = [str(next((CORPUS / name / "session-logs").glob("*.jsonl"))) for name in ("a-chat", "b-tools", "c-change")]
    counted = subprocess.run([sys.executable, "-c", _COUNTER, str(capture), "requests", "--capture", str(capture),
                              "--json", *logs], capture_output=True, text=True, check=True, timeout=60)
    assert counted.stdout.split() == ["0", "1"]


def _string_count_log(tmp_path: Path) -> Path:
    """The tour's port mistake (/tmp/b42 tour finding 2): a usage chunk whose ``inputTokens`` is
    the JSON string ``"100"``, then a sound request of the same counts."""
    b = LogBuilder(session_id="s-str", model="deepseek-v4-flash")
    for text, tokens in (("Hi", "100"), ("Again", 100)):
        with b.turn(text), b.step():
            b.assistant(text, usage={"inputTokens": tokens, "outputTokens": 5, "cacheReadTokens": 0})
    return b.write_jsonl(tmp_path / "session.jsonl")


#: What each format shows of :func:`_string_count_log`, past its heading (``{log}``: its path).
_STRING_COUNT = {
    "table": ["#  turn/step/attempt  kind  header     msgs  input  cache read  output  finish",
              "─" * 78,
              "0  1/1/1              loop  5 initial     1      ?           0       5  stop",
              "1  2/1/1              loop  5 initial     3    100           0       5  stop",
              "   total                                      ≥100           0      10",
              "total: each count summed over the requests that logged it (?: not a count; ≥N: a",
              "lower bound, a logged usage lacks it)"],
    "csv": ["table,log,session,#,turn/step/attempt,kind,header,msgs,input,cache read,output,finish",
            "requests,{log},s-str,0,1/1/1,loop,5 initial,1,,0,5,stop",
            "requests,{log},s-str,1,2/1/1,loop,5 initial,3,100,0,5,stop"],
    "markdown": ["| \\# | turn/step/attempt | kind | header | msgs | input | cache read | output | finish |",
                 "| ---: | --- | --- | --- | ---: | ---: | ---: | ---: | --- |",
                 "| 0 | 1/1/1 | loop | 5 initial | 1 | ? | 0 | 5 | stop |",
                 "| 1 | 2/1/1 | loop | 5 initial | 3 | 100 | 0 | 5 | stop |",
                 "|  | total |  |  |  | ≥100 | 0 | 10 |  |", "",
                 "total: each count summed over the requests that logged it (?: not a count; ≥N: a lower bound, a "
                 "logged usage lacks it)"],
}


@pytest.mark.parametrize("shape", sorted(_STRING_COUNT))
def test_requests_shows_a_count_logged_as_a_string_as_unknown(
        tmp_path: Path, shape: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the table showed ``"100"`` as 100 and summed the input to 100 as if exact (no ``?``
    though its caption promised one); CSV left the cell empty, as `usage` leaves it uncounted."""
    log = str(_string_count_log(tmp_path))
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = invoke(monkeypatch, capsys, "requests", log, "--no-capture", "--format", shape)
    lines = out.splitlines()
    expected = [line.replace("{log}", log) for line in _STRING_COUNT[shape]]
    assert (code, err, lines[-len(expected):]) == (0, [], expected)


def _empty_attempt_usage_log(tmp_path: Path) -> Path:
    """Two requests of the same counts, the first's usage chunk ``{}`` (its ``assistant/message``
    keeps the counts: DSH704, the two differ): the attempt's own usage wins (spec §7.4)."""
    b = LogBuilder(session_id="s-empty", model="deepseek-v4-flash")
    for text in ("Hi", "Again"):
        with b.turn(text), b.step():
            b.assistant(text, usage={"inputTokens": 100, "outputTokens": 5, "cacheReadTokens": 0})
    log = b.write_jsonl(tmp_path / "session.jsonl")
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    chunk = next(r["data"]["chunk"] for r in records if r["type"] == "assistant/chunk"
                 and r["data"]["chunk"]["type"] == "usage")
    chunk["usage"] = {}
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return log


def test_requests_reads_the_usage_the_ledger_prices_for_an_empty_attempt_usage(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: the table read the step's message usage (``usage or message_usage``): 100 input and
    5 output for request 0, summed as exact (200, 10), while --json's usage_source (and `usage`)
    said null: the ledger prices the attempt's empty usage, no count. Now every view reads one."""
    log = str(_empty_attempt_usage_log(tmp_path))
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = invoke(monkeypatch, capsys, "requests", log, "--no-capture")
    assert (code, err, out.splitlines()[-6:]) == (0, [], [
        "#  turn/step/attempt  kind  header     msgs  input  cache read  output  finish",
        "─" * 78,
        "0  1/1/1              loop  5 initial     1      ?           ?       ?  stop",
        "1  2/1/1              loop  5 initial     3    100           0       5  stop",
        "   total                                       100           0       5",
        "total: each count summed over the requests that logged it (?: not logged)"])
    _, out, _ = invoke(monkeypatch, capsys, "requests", log, "--no-capture", "--json")
    shown = [r["usage_source"] for r in map(json.loads, out.splitlines())]
    _, out, _ = invoke(monkeypatch, capsys, "usage", log, "--by", "request", "--json", "--no-capture")
    priced = [(r["usage_source"], r["tokens"]) for r in json.loads(out)["rows"]]
    assert (shown, priced) == ([None, "log"], [(None, None), ("log", {
        "cache_miss": 100, "cache_read": 0, "cache_write": 0, "output": 5, "reasoning": 0, "total": 105})])


def _invalid_read_log(tmp_path: Path, provider: str) -> Path:
    """/tmp/b42 re-read D's smallest shape: requests whose logged ``cacheReadTokens`` is no count
    (2^53, past MAX_TOKENS; the string ``"8000"``; 1.5), a sound one (that writes the cache on a
    pi-ai route), and one that logged its output alone."""
    b = LogBuilder(session_id=f"s-{provider}", provider=provider,
                   model="deepseek-v4-flash" if provider == "deepseek-official" else "claude-sonnet-4-5")
    sound = {"inputTokens": 190, "outputTokens": 5, "cacheReadTokens": 8448}
    if provider != "deepseek-official":
        sound["cacheWriteTokens"] = 100
    for text, usage in (("a", {"cacheReadTokens": 2**53}), ("b", {"cacheReadTokens": "8000"}),
                        ("c", {"cacheReadTokens": 1.5}), ("d", sound), ("e", {"outputTokens": 10})):
        with b.turn(text), b.step():
            b.assistant(text, usage={"inputTokens": 100, "outputTokens": 5, **usage} if len(usage) == 1
                        and "cacheReadTokens" in usage else usage)
    return b.write_jsonl(tmp_path / "session.jsonl")


#: What each view makes of :func:`_invalid_read_log`: `requests --format csv`'s input, cache read,
#: cache write (on pi-ai alone, where one is logged) and output cells, the total row's, `usage`'s
#: unknown buckets by request, `cache --json`'s read, hit ratio and verdicts, `check`'s unpriced.
_INVALID_READ = {
    "deepseek-official": (
        [["", "", "5"], ["", "", "5"], ["", "", "5"], ["190", "8448", "5"], ["", "", "10"]],
        ["≥190", "≥8448", "30"],
        [{"cache_miss": 1, "cache_read": 1}] * 3 + [{}, {"cache_miss": 1, "cache_read": 1}],
        (8448, 8448 / 8638, ["usage_unknown"] * 3 + ["as_expected", "usage_unknown"]),
        {"the log's usage is damaged (request 0, seq 7: cacheReadTokens past 1,000,000,000 tokens)": 1,
         "usage without a valid inputTokens, cacheReadTokens": 2,
         "cache reads not logged (deepseek-official logs cacheReadTokens only when the API reported them: "
         "the prompt's split into hits and misses is unknown)": 1}),
    "anthropic": (
        [["100", "", "0", "5"], ["100", "", "0", "5"], ["100", "", "0", "5"], ["190", "8448", "100", "5"],
         ["", "", "0", "10"]],
        ["≥490", "≥8448", "100", "30"],
        [{"cache_read": 1}] * 3 + [{}, {"cache_miss": 1, "cache_read": 1}],
        (8448, 8448 / 8738, ["usage_unknown"] * 3 + ["below_minimum", "usage_unknown"]),
        {"the log's usage is damaged (request 0, seq 7: cacheReadTokens past 1,000,000,000 tokens)": 1,
         "usage without a valid cacheReadTokens": 2, "usage without a valid inputTokens, cacheReadTokens": 1}),
}


@pytest.mark.parametrize("provider", sorted(_INVALID_READ))
def test_a_cache_read_that_is_no_count_is_unknown_in_every_view(
        tmp_path: Path, provider: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Re-read D, before: `cache`, `check` (and `sessions`, the HTML page) took 2^53 as a cache read
    (hit ratio 1.0e12); on pi-ai "8000" and 1.5 read as a made-up 0 (priced, ``below_minimum``);
    native ones were "cache reads not logged"; `requests` summed the native input 100 (the whole
    prompt) to an exact 490 where `usage` gives ≥190, and showed ``?`` for a cache write `usage` counts 0."""
    cells, total, unknown, cache, unpriced = _INVALID_READ[provider]
    log = str(_invalid_read_log(tmp_path, provider))
    monkeypatch.setenv("COLUMNS", "120")
    _, out, _ = invoke(monkeypatch, capsys, "requests", log, "--no-capture", "--format", "csv")
    assert [line.split(",")[8:-1] for line in out.splitlines()[1:]] == cells
    _, out, _ = invoke(monkeypatch, capsys, "requests", log, "--no-capture")
    assert [cell for cell in next(line for line in out.splitlines() if "total" in line).split()
            if cell not in ("│", "total")] == total
    _, out, _ = invoke(monkeypatch, capsys, "usage", log, "--by", "request", "--json", "--no-capture")
    assert [row["tokens_unknown_requests"] for row in json.loads(out)["rows"]] == unknown
    _, out, _ = invoke(monkeypatch, capsys, "cache", log, "--json", "--no-capture")
    report = json.loads(out)
    assert (report["actual_cache_read"], report["actual_hit_ratio"],
            [t["classification"] for t in report["timeline"]]) == cache
    _, out, _ = invoke(monkeypatch, capsys, "check", log, "--json-report", "-", "--no-capture")
    assert json.loads(out)["sessions"][0]["cost"]["unpriced"] == unpriced


@pytest.mark.parametrize("provider", ["deepseek-official", "anthropic"])
def test_a_bucket_logged_as_null_is_no_count_never_a_zero(provider: str) -> None:
    """A ``null`` cache bucket is a logged value holding no count (validate: DSH702): unknown on
    every route, as 1.5 or "8000" is; only a bucket not written at all is pi-ai's 0 (fuzz 30a, U1)."""
    from types import SimpleNamespace

    from dsh_audit._usage_rule import logged_cache_read, logged_counts

    def request(usage: dict[str, Any]) -> Any:
        return SimpleNamespace(usage=usage, message_usage=None, header={"config": {"provider": provider}},
                               kind="loop", extra={})

    base = {"inputTokens": 1769, "outputTokens": 24}
    assert logged_cache_read(request({**base, "cacheReadTokens": None})) is None
    assert logged_counts(request({**base, "cacheReadTokens": 7, "cacheWriteTokens": None}))["cacheWriteTokens"] is None
    assert logged_counts(request({**base, "cacheReadTokens": 7}))["cacheWriteTokens"] == 0
    assert logged_cache_read(request(base)) == (None if provider == "deepseek-official" else 0)


@pytest.mark.parametrize("bucket", ["cacheReadTokens", "cacheWriteTokens"])
def test_a_damaged_bucket_leaves_the_timelines_prompt_unknown(
        tmp_path: Path, bucket: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Fuzz 30a U2, before: on a pi-ai route a bucket holding no count (1.5) counted 0 in the
    timeline's prompt_tokens (``inputTokens`` alone, 1769, shown as exact) where the session's
    prompt_tokens left the request out (a damaged write counted its 1897 in the session too, a
    ``write_not_landed`` break); now it is unknown, by the one count rule (its counted size judges it)."""
    b = LogBuilder(session_id="s-u2", provider="deepseek", model="deepseek-v4-flash")
    for text, damaged in (("a", {}), ("b", {bucket: 1.5})):
        with b.turn(text), b.step():
            b.assistant(text, usage={"inputTokens": 1769, "outputTokens": 24, "cacheReadTokens": 128, **damaged})
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(b.write_jsonl(tmp_path / "s.jsonl")), "--json",
                          "--no-capture")
    report = json.loads(out)
    assert (code, report["prompt_tokens"], report["usage_known"], report["usage_known_without_prompt"]) == (
        0, 1897, 1, 0 if bucket == "cacheReadTokens" else 1)
    assert [(t["prompt_tokens"], t["actual_cache_read"], t["classification"]) for t in report["timeline"]] == [
        (1897, 128, "as_expected"),
        (None, None, "usage_unknown") if bucket == "cacheReadTokens" else (None, 128, "below_minimum")]


def _native_split_log(tmp_path: Path) -> Path:
    """Issue 14/11: DSH's native DeepSeek adapter logged the usage of request 0 without
    ``cacheReadTokens`` (its ``inputTokens`` is then the whole prompt), request 2's cache read as a
    string; request 1 logged every count."""
    b = LogBuilder(session_id="s-split", model="deepseek-v4-flash")
    for text, usage in (("a", {"inputTokens": 100, "outputTokens": 5}),
                        ("b", {"inputTokens": 120, "outputTokens": 6, "cacheReadTokens": 90}),
                        ("c", {"inputTokens": 100, "outputTokens": 5, "cacheReadTokens": "8000"})):
        with b.turn(text), b.step():
            b.assistant(text, usage=usage)
    return b.write_jsonl(tmp_path / "session.jsonl")


def test_requests_caption_says_why_each_unknown_count_is_unknown(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: "?: not logged" for an input the log holds (100, the whole prompt: its cache reads
    were not logged, so the uncached part is unknown). Each ``?`` is where `usage --by request`
    counts none (its "usage_unlogged"), and --json keeps the log's own numbers, no derived one."""
    log = str(_native_split_log(tmp_path))
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = invoke(monkeypatch, capsys, "requests", log, "--no-capture")
    assert (code, err, out.splitlines()[-9:]) == (0, [], [
        "#  turn/step/attempt  kind  header     msgs  input  cache read  output  finish",
        "─" * 78,
        "0  1/1/1              loop  5 initial     1      ?           ?       5  stop",
        "1  2/1/1              loop  5 initial     3    120          90       6  stop",
        "2  3/1/1              loop  5 initial     5      ?           ?       5  stop",
        "   total                                      ≥120         ≥90      16",
        "total: each count summed over the requests that logged it (?: input: the whole",
        "prompt logged, its cache reads unknown; cache read: not logged, or not a count;",
        "≥N: a lower bound, a logged usage lacks it)"])
    _, out, _ = invoke(monkeypatch, capsys, "usage", log, "--by", "request", "--json", "--no-capture")
    assert [r["usage_unlogged"] for r in json.loads(out)["rows"]] == [["inputTokens", "cacheReadTokens"], [],
                                                                    ["inputTokens", "cacheReadTokens"]]
    _, out, _ = invoke(monkeypatch, capsys, "requests", log, "--no-capture", "--json")
    assert [(r["usage"], r["usage_source"]) for r in map(json.loads, out.splitlines())] == [
        ({"inputTokens": 100, "outputTokens": 5}, "log"),
        ({"inputTokens": 120, "outputTokens": 6, "cacheReadTokens": 90}, "log"),
        ({"inputTokens": 100, "outputTokens": 5, "cacheReadTokens": "8000"}, "log")]
    code, out, _ = invoke(monkeypatch, capsys, "requests", "--help")  # review 43 B6: it named 3 of the 5
    said = " ".join(out.split())
    assert (code, [why for why in ("not logged", "not a count", "an output below its own reasoningTokens",
                                   "whole prompt logged without its cache reads", "or left out, the request's usage "
                                   "holding no count of input, cache read or output") if why not in said]) == (0, [])
