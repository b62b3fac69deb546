"""``dsh-audit usage`` after a user tour (issue 13, "what a session cost").

- A log that cannot be read (a seq gap: exit 2; a bug reading it: exit 3) is left out of every
  sum, so the total is a lower bound: ``≥$`` in the table, ``cost_complete`` false and
  ``logs_failed`` in ``--json`` (the README: never an exact figure made of a guessed 0).
- A narrow terminal leaves out a column with no value in any row before any column that carries
  money: an Anthropic request's cache writes (most of its cost) and the what-ifs "no cache" and
  "off-peak" (the README's headline figures) go last; session ids are shortened before any
  column with a value is left out.
- A window with no request sums to 0 tokens, as it sums to $0.0000 (never ``?`` beside ``$0``).
- The warning for a model the price table does not know names the provider, and the
  ``--prices`` table that would price it does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import dsh_audit.cli._usage as usage_cli
from _cli import invoke, mixed_home
from dsh_audit.cache import ledger_group
from dsh_audit.testing import LogBuilder

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "live-pi"
C1 = CORPUS / "c1-anthropic-tools" / "session-logs"
C3 = CORPUS / "c3-openai-compat" / "session-logs"
needs_corpus = pytest.mark.skipif(not (C1.is_dir() and C3.is_dir()), reason="../shared/corpus is absent")

T0 = 1_796_112_000_000  # 2026-12-01T08:00:00Z (a year the packaged holidays cover)
UUID = "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd"


def _priced_log(path: Path, session_id: str, *, drop: int | None = None, then: str | None = None) -> Path:
    """Two deepseek-v4-flash requests, every usage count logged (every request priced); ``drop``:
    the index of a line left out (a seq gap, which makes the log unreadable); ``then``: a model a
    third request goes to."""
    b = LogBuilder(session_id=session_id, created_at=T0, model="deepseek-v4-flash", system="S" * 8000)
    for text, miss, read in (("one", 2000, 0), ("two", 100, 1920)):
        with b.turn(text), b.step():
            b.assistant(text, usage={"inputTokens": miss, "outputTokens": 10, "cacheReadTokens": read})
    if then is not None:
        b.configure(model=then)
        with b.turn("three"), b.step():
            b.assistant("three", usage={"inputTokens": 100, "outputTokens": 10, "cacheReadTokens": 2048})
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = b.lines(packed=False)
    path.write_text("".join(line + "\n" for at, line in enumerate(lines) if at != drop), encoding="utf-8")
    return path


@pytest.fixture
def failing_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A DSH home (the current folder, 80 columns) holding a priced log and one with a seq gap."""
    _priced_log(tmp_path / "sessions" / "--p--" / "s-good" / "session.jsonl", "s-good")
    _priced_log(tmp_path / "sessions" / "--p--" / "s-gap" / "session.jsonl", "s-gap", drop=3)
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _lines(out: str) -> list[str]:
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80
    return [line.rstrip() for line in lines]


def _gap_error(home: Path) -> str:
    return (f"error: {home}/sessions/--p--/s-gap/session.jsonl:4 seq 3: corrupt session log: seq gap in committed "
            "region at line 3 (expected 2, got 3); \"line 3\" is DSH's count of event lines (the header is not one) (hint: no option skips a record out of seq before the last turn/end "
            "(--lenient adapts headers only; DSH refuses the log too): seqs must run 0, 1, 2, … with no gap or "
            "repeat; `dsh-audit validate FILE` lists every seq out of place (DSH107, DSH108))")


# s-good alone: exact amounts (its peak-hour rates: 2100 misses, 1920 reads, 20 output)
GOOD = "s-good          2     2100    1920       0      20   $0.0007   $0.0012   $0.0003"
HEAD = ["usage by session",
        "                     cache   cache   cache",
        "session  requests     miss    read   write  output      cost  no cache  off-peak",
        "─" * 80]


def test_a_log_not_read_makes_the_total_a_lower_bound(failing_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "usage", "--json")
    found = json.loads(out)
    assert (code, err) == (2, [_gap_error(failing_home)])
    assert (found["sessions"], found["logs_failed"]) == (1, 1)
    row, total = found["rows"][0], found["totals"]
    assert (row["key"], row["cost_complete"], row["unpriced_requests"]) == ("s-good", True, 0)
    assert (total["cost_complete"], total["unpriced_requests"], total["cost_usd"]["total"]) == (
        False, 0, row["cost_usd"]["total"])
    code, out, err = invoke(monkeypatch, capsys, "usage")
    assert (code, err) == (2, [_gap_error(failing_home)])
    assert _lines(out) == [  # was "$0.0007" with no "≥" and nothing in the caption
        *HEAD,
        GOOD,
        "total           2     2100    1920       0      20  ≥$0.0007  ≥$0.0012  ≥$0.0003",
        "1 session(s); USD per 1,000,000 tokens from the price table (packaged); check",
        "your contract; 1 log(s) not read (error above): left out of every sum, the",
        "total's amounts are lower bounds (≥$)",
        # "reusable" with nothing lost beside it goes first (session 46)
        "narrow terminal: lost tokens (cost), unpriced (no values), reusable not shown",
        "(widen it, or use --json)"]
    # what each bucket cost is a lower bound too, by the same rule as the cost (UsageRow.shown)
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--format", "markdown")
    assert (code, out.splitlines()[-3]) == (2, "| total | 2 | 2100 | 1920 |  | 1920 | 0 | 20 | ≥$0.0007 | "
                                               "≥$0.0006 | ≥$0.000012 | ≥$0.0000 | ≥$0.000024 | ≥$0.0012 | ≥$0.0003 |  |")
    # every log read: exact, and logs_failed 0
    code, out, err = invoke(monkeypatch, capsys, "usage", "--json", "sessions/--p--/s-good")
    found = json.loads(out)
    assert (code, err, found["logs_failed"], found["totals"]["cost_complete"]) == (0, [], 0, True)


def test_a_bug_reading_a_log_makes_the_total_a_lower_bound(failing_home: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    (failing_home / "sessions" / "--p--" / "s-gap" / "session.jsonl").unlink()
    _priced_log(failing_home / "sessions" / "--q--" / "s-bug" / "session.jsonl", "s-bug")
    real = ledger_group

    def buggy(paths: Any, **kwargs: Any) -> Any:
        if any("s-bug" in str(path) for path in paths):
            raise RuntimeError("a bug")
        return real(paths, **kwargs)

    monkeypatch.setattr(usage_cli, "ledger_group", buggy)
    code, out, err = invoke(monkeypatch, capsys, "usage", "--json")
    found = json.loads(out)
    assert code == 3 and len(err) == 1 and err[0].startswith("error: ") and "a bug" in err[0], err
    assert (found["sessions"], found["logs_failed"], found["totals"]["cost_complete"]) == (1, 1, False)
    code, out, err = invoke(monkeypatch, capsys, "usage")
    assert code == 3
    assert _lines(out)[:7] == [
        *HEAD,
        GOOD,
        "total           2     2100    1920       0      20  ≥$0.0007  ≥$0.0012  ≥$0.0003",
        "1 session(s); USD per 1,000,000 tokens from the price table (packaged); check"]


def test_an_empty_window_sums_to_zero_tokens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    mixed_home(tmp_path, monkeypatch, columns=80)
    note = ("note: --since 2028-01-01T00:00:00Z: 1 of 1 log(s) with no activity in that window (by the logs' own "
            "timestamps) left out")
    code, out, err = invoke(monkeypatch, capsys, "usage", "--since", "2028-01-01")
    assert (code, err) == (0, [note])
    assert _lines(out) == [  # was "? ? ? ? $0.0000": tokens unknown beside $0
        "usage by session",
        "                     cache    cache   cache",
        "session  requests     miss     read   write  output     cost  no cache  off-peak",
        "─" * 80,
        "total           0        0        0       0       0  $0.0000   $0.0000   $0.0000",
        "0 session(s); USD per 1,000,000 tokens from the price table (packaged); check",
        "your contract",
        # "reusable" with nothing lost beside it goes first (session 46)
        "narrow terminal: lost tokens (cost), unpriced (no values), reusable not shown",
        "(widen it, or use --json)"]
    code, out, err = invoke(monkeypatch, capsys, "usage", "--since", "2028-01-01", "--json")
    total = json.loads(out)["totals"]
    assert (code, total["requests"], total["usage_unknown_requests"], total["cost_complete"]) == (0, 0, 0, True)
    assert total["tokens"] == {"cache_miss": 0, "cache_read": 0, "cache_write": 0, "output": 0, "reasoning": 0,
                               "total": 0}
    assert total["cost_usd"]["total"] == 0


def test_a_narrow_table_shortens_ids_before_it_leaves_out_a_column(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    b = LogBuilder(session_id=UUID, created_at=T0, model="deepseek-v4-flash")
    with b.turn("Hi"), b.step():
        b.assistant("Hello", usage={"inputTokens": 131, "outputTokens": 8, "cacheReadTokens": 0})
    b.write_jsonl(tmp_path / "sessions" / "--p--" / UUID / "session.jsonl", packed=False)
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = invoke(monkeypatch, capsys, "usage", "latest")
    assert (code, err) == (0, [])
    assert _lines(out) == [  # was the whole 44-character id, and "requests" left out for it
        "usage by session",
        "session           requests  cache miss  output       cost   no cache   off-peak",
        "─" * 79,
        "session-86ef2d28         1         131       8  $0.000049  $0.000049  $0.000024",
        "total                    1         131       8  $0.000049  $0.000049  $0.000024",
        "1 session(s); USD per 1,000,000 tokens from the price table (packaged); check",
        "your contract; session ids: shortest unique prefix (--json for whole ids)",
        "narrow terminal: lost tokens (cost), unpriced (no values), reusable, cache read,",
        "cache write not shown (widen it, or use --json)"]


def test_a_narrow_deepseek_table_leaves_out_the_empty_columns_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    mixed_home(tmp_path, monkeypatch, columns=80)
    code, out, err = invoke(monkeypatch, capsys, "usage", "--by", "request")
    assert code == 0
    # cache write (0 in every row) goes first, then requests (no money), then the tokens, the
    # cheapest first (session 40), the misses, which cost the most, last; the what-ifs stay (was:
    # cache write, off-peak, no cache, output left out); "reusable", what the lost tokens are measured
    # from, stays beside them after off-peak goes (session 46)
    assert _lines(out) == [
        "usage by request",
        "                cache            lost tokens",
        "request          miss  reusable  (cost)                 cost  no cache  unpriced",
        "─" * 80,
        "s-mixed #0       2000         0                      $0.0006   $0.0006",
        "s-mixed #1        100      1920                      $0.0001   $0.0006",
        "s-mixed #2       2100      1920  1920 ($0.0006)      $0.0006   $0.0006",
        "s-mixed #3          ?         ?                           $?        $?         1",
        "s-mixed #4        100      2048                           $?        $?         1",
        "total            4300      5888  1920 ($0.0006)     ≥$0.0013  ≥$0.0019         2",
        "1 session(s); USD per 1,000,000 tokens from the price table (packaged); check",
        "your contract; ≥$: a lower bound (unpriced requests left out), $?: no request",
        "priced; tokens: sums over the 4 request(s) with usage logged (?: none logged)",
        "narrow terminal: cache write, requests, cache read, output, off-peak not shown",
        "(widen it, or use --json)"]


def test_the_unpriced_warning_names_the_provider_and_the_prices_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    _priced_log(tmp_path / "sessions" / "--p--" / "s-local" / "session.jsonl", "s-local", then="local-coder")
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "usage")
    assert (code, err) == (0, [  # was "no price for model 'local-coder'": which provider's table?
        "warning: 1 request(s) unpriced: no price for model 'local-coder' (provider deepseek-official: give "
        "--prices FILE a [providers.deepseek.models.local-coder] table of cache_miss, cache_read and "
        "output rates)"])
    # the table the warning names prices it
    prices = tmp_path / "contract.toml"
    prices.write_text("[providers.deepseek.models.local-coder]\ncache_miss = 1.0\ncache_read = 0.1\n"
                      "output = 2.0\n", encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "usage", "--prices", str(prices))
    assert (code, err) == (0, [])
    code, out, err = invoke(monkeypatch, capsys, "usage", "--json", "--prices", str(prices))
    total = json.loads(out)["totals"]
    assert (code, json.loads(out)["unpriced"], total["cost_complete"]) == (0, {}, True)


@needs_corpus
def test_an_anthropic_fleet_keeps_its_cache_writes_and_what_ifs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the log alone, as pinned (a capture found prices: test_found38)
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = invoke(monkeypatch, capsys, "usage", "--by", "request", str(C1), str(C3))
    assert (code, err) == (0, [
        "warning: 6 request(s) unpriced: no price for model 'local-coder' (provider local-openai: give --prices "
        "FILE a [providers.local-openai.models.local-coder] table of cache_miss, cache_read and output rates)",
        "warning: 1 request(s) unpriced: usage not logged"])
    # Before: "cache write" left out first (request #1: miss 10, read 0, cost $0.0304), then
    # "off-peak" and "no cache". Now "requests" (1 in every row) goes first, then the tokens that
    # cost the least (session 40: the misses, priced $0.0003, then output and cache read); the
    # writes stay. No off-peak column at all (session 38): Anthropic and this route bill one
    # rate all day, no request was priced in a peak window. The
    # sessions are newest first by their logs' last activity, as `sessions` lists them (c3 ran last).
    assert _lines(out) == [
        "usage by request",
        "                                                       cache",
        "request               reusable  lost tokens (cost)     write      cost  unpriced",
        "─" * 80,
        "session-e7611f7a #0          ?                             ?        $?         1",
        "session-e7611f7a #1          0                             0        $?         1",
        "session-e7611f7a #2       8064                             0        $?         1",
        "session-e7611f7a #3       8192                             0        $?         1",
        "session-e7611f7a #4       8320                             0        $?         1",
        "session-e7611f7a #5       8448                             0        $?         1",
        "session-514c4bc2 #0          ?                             ?        $?         1",
        "session-514c4bc2 #1          0                          8019   $0.0304",
        "session-514c4bc2 #2       8029                           310   $0.0039",
        "session-514c4bc2 #3       8192                           187   $0.0039",
        "session-514c4bc2 #4       8325                           258   $0.0037",
        "session-514c4bc2 #5       8524                           157   $0.0038",
        "session-514c4bc2 #6       8679                           189   $0.0037",
        "session-514c4bc2 #7       8839                           152   $0.0036",
        "session-514c4bc2 #8       8930                           132   $0.0033",
        "session-514c4bc2 #9       8927  8927 ($0.0308)          8917   $0.0337",
        "session-514c4bc2 #10      8927                           169   $0.0035",
        "total                   110396  8927 ($0.0308)         18490  ≥$0.0935         7",
        "2 session(s); USD per 1,000,000 tokens from the price table (packaged); check",
        "your contract; ≥$: a lower bound (unpriced requests left out), $?: no request",
        "priced; tokens: sums over the 15 request(s) with usage logged (?: none logged);",
        "session ids: shortest unique prefix (--json for whole ids)",
        "narrow terminal: off-peak, requests, cache miss, output, cache read, no cache",
        "not shown (widen it, or use --json)"]  # off-peak: the cost in every row (one rate all day, session 43)
    # "reusable" (what the lost tokens are measured from) kept beside them before "no cache" (session 46)
    monkeypatch.setenv("COLUMNS", "100")  # off-peak (the cost), requests and the cheapest tokens left out
    code, out, err = invoke(monkeypatch, capsys, "usage", "--by", "request", str(C1), str(C3))
    assert out.splitlines()[2].rstrip() == ("request               reusable  (cost)             read  write  output"
                                            "      cost  no cache  unpriced")
    assert out.splitlines()[-1].rstrip() == ("narrow terminal: off-peak, requests, cache miss not shown (widen it, or "
                                             "use --json)")
