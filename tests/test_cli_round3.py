"""Round 3 of the CLI fixes for people (issue 14) and cost (issue 13): every usage error names its
command's help, `watch` resolves session references, `sessions` CSV carries the hit ratio, `cache`
lists sessions as `sessions` does and explains its columns and its two costs of lost tokens,
`usage` is a compact table at 80 columns, and a hit ratio counts reads and prompts over the same
requests."""

from __future__ import annotations

import csv
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from _cli import chat_log, invoke
from dsh_audit.cache import CacheTotals, CacheVerdict
from dsh_audit.cli import cli
from dsh_audit.testing import LogBuilder

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
LOG = CORPUS / "live" / "c-change" / "home" / "sessions" / "--home-dev-dsh-runs-a-c-change-ws--" / \
    "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824" / "session.jsonl.zstd"
needs_corpus = pytest.mark.skipif(not LOG.is_file(), reason="../shared/corpus is absent")
T0 = 1_800_000_000_000  # 2027-01-15 08:00 UTC
#: three requests: the last logged its cache reads and no inputTokens, so its prompt size is unknown
USAGES = [{"inputTokens": 2000, "outputTokens": 10, "cacheReadTokens": 0},
          {"inputTokens": 100, "outputTokens": 10, "cacheReadTokens": 1920},
          {"outputTokens": 10, "cacheReadTokens": 1920}]


def _usage_log(path: Path, session_id: str, usages: list[dict[str, Any]]) -> Path:
    b = LogBuilder(session_id=session_id, created_at=T0, provider="deepseek-official", model="deepseek-v4-flash",
                   system="S" * 4000)
    for n, usage in enumerate(usages):
        with b.turn(f"turn {n}"), b.step():
            b.assistant(f"reply {n}", usage=usage)
    return b.write_jsonl(path, packed=False)


def _piped(*args: str, columns: int = 200) -> tuple[int, str]:
    """The real CLI, stdout piped with COLUMNS set: exit code and stdout."""
    result = CliRunner().invoke(cli, list(args), env={"COLUMNS": str(columns)}, catch_exceptions=False)
    return result.exit_code, result.stdout


# -- 1. every usage error names its command's help --------------------------------------------------


@pytest.mark.parametrize(("args", "line"), [
    (["usage", "--prices"], "error: Option '--prices' requires an argument. (hint: see `dsh-audit usage --help`)"),
    (["cache", "x.jsonl", "--jobs"], "error: Option '--jobs' requires an argument. (hint: see `dsh-audit cache --help`)"),
    (["watch", "--settle"], "error: Option '--settle' requires an argument. (hint: see `dsh-audit watch --help`)"),
    (["requests", "--since"], "error: Option '--since' requires an argument. (hint: see `dsh-audit requests --help`)"),
    (["sessions", "--format"], "error: Option '--format' requires an argument. (hint: see `dsh-audit sessions --help`)"),
    (["explain", "latest", "0", "--routes"],
     "error: Option '--routes' requires an argument. (hint: see `dsh-audit explain --help`)"),
    (["cache", "--jobs", "x"],
     "error: Invalid value for '--jobs' / '-j': 'x' is not a valid integer range. (hint: see `dsh-audit cache --help`)"),
    (["--bogus"], "error: No such option '--bogus'. (hint: see `dsh-audit --help`)"),
])
def test_a_usage_error_names_the_commands_help(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                               args: list[str], line: str) -> None:
    assert invoke(monkeypatch, capsys, *args) == (2, "", [line])


# -- 2. watch resolves latest, an id and a prefix; an unknown one is a usage error --------------------


def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    log = chat_log(tmp_path / "home" / "sessions" / "--p--" / "session-abc123" / "session.jsonl", "session-abc123")
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    return log


@pytest.mark.parametrize("ref", ["latest", "session-abc123", "abc1"])
def test_watch_follows_the_session_a_reference_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str], ref: str) -> None:
    log = _home(tmp_path, monkeypatch)
    code, out, err = invoke(monkeypatch, capsys, "watch", ref, "--json", "--polling", "--exit-after", "0")
    lines = [json.loads(line) for line in out.splitlines()]
    assert (code, err) == (0, [])
    assert [(x["type"], x.get("path"), x.get("message")) for x in lines] == [
        ("watching", str(log), "following 1 log(s); changes are noticed by polling every 0.05-0.5 s "
                               "(notifications were turned off)"),
        ("started", str(log), "following session session-abc123"),
        ("summary", None, None)]


def test_watch_of_an_unknown_reference_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    _home(tmp_path, monkeypatch)
    assert invoke(monkeypatch, capsys, "watch", "zzz", "--exit-after", "0") == (2, "", [
        f"error: {tmp_path / 'home' / 'sessions'}: no session log, session id or id prefix 'zzz' here (hint: run "
        "`dsh-audit sessions` to see the ids, or pass a path)"])


def test_watch_still_waits_for_a_folder_that_does_not_exist_yet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    _home(tmp_path, monkeypatch)
    later = tmp_path / "later" / "sessions"
    code, out, err = invoke(monkeypatch, capsys, "watch", str(later), "--json", "--polling", "--exit-after", "0")
    lines = [json.loads(line) for line in out.splitlines()]
    assert (code, err) == (0, [])
    assert [(x["type"], x.get("path"), x.get("message")) for x in lines] == [
        ("watching", str(later), "following 0 log(s); changes are noticed by polling every 0.05-0.5 s "
                                 "(notifications were turned off)"),
        ("summary", None, None)]


# -- 3. sessions --format csv: the hit ratio itself -------------------------------------------------


def test_sessions_csv_carries_the_exact_hit_ratio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    log = _usage_log(tmp_path / "a" / "session.jsonl", "sess-a", USAGES)
    code, out, err = invoke(monkeypatch, capsys, "sessions", "--format", "csv", str(log))
    assert (code, err) == (0, [])
    assert list(csv.reader(io.StringIO(out))) == [
        ["table", "when (UTC)", "title", "project", "requests", "tokens", "hit ratio", "breaks", "cost", "unpriced",
         "first (UTC)", "format", "id"],
        ["1 session(s), newest first", "2027-01-15 08:00", "-", "/home/dev/project", "3", "5970", repr(1920 / 4020), "0",
         "0.00066552", "1", "2027-01-15 08:00", "v0", "sess-a"]]  # no totals row: CSV holds the JSON's rows (as `requests`)
    code, out, _ = invoke(monkeypatch, capsys, "sessions", "--no-cost", "--format", "csv", str(log))
    assert code == 0 and list(csv.reader(io.StringIO(out)))[1][6] == ""  # no accounting: no ratio, an empty cell


# -- 4. cache lists sessions as `sessions` does, PATHS given or not ----------------------------------


def test_cache_orders_the_logs_of_given_paths_by_path_and_the_home_newest_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home" / "sessions"
    older = chat_log(home / "f" / "a" / "session.jsonl", "session-a")
    newer = chat_log(home / "f" / "b" / "session.jsonl", "session-b")
    os.utime(older, (T0 / 1000 + 60, T0 / 1000 + 60))  # a's file written last
    os.utime(newer, (T0 / 1000, T0 / 1000))
    other = chat_log(home / "g" / "session.jsonl", "session-g")
    os.utime(other, (T0 / 1000 - 60, T0 / 1000 - 60))
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--json", str(home / "g"), str(home / "f"))
    assert code == 0
    # the PATHS in the order given, each one's logs by path: the same on every checkout
    assert [json.loads(line)["session_id"] for line in out.splitlines()] == ["session-g", "session-a", "session-b"]
    # no PATHS: the sessions root, newest first (as `sessions` lists them)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--json")
    assert code == 0 and [json.loads(line)["session_id"] for line in out.splitlines()] == [
        "session-a", "session-b", "session-g"]


# -- 5, 6. cache --help explains every column; the two costs of lost tokens say what they cover -------


def test_cache_help_explains_every_timeline_column_and_the_estimate_marker() -> None:
    code, out = _piped("cache", "--help")
    text = " ".join(out.split())
    assert code == 0
    assert ('Timeline columns: "#" the request\'s index; "kind" loop, title, compaction or search; "turn/step/attempt" '
            'where it was sent ("N/-": a compaction of turn N, "-": no turn; "t/s/a" on a narrow terminal); '
            '"prompt" the logged prompt tokens '
            '(input + cache read + cache write), or "~N" when the log has no prompt size for it: N is then '
            "dsh-audit's own estimate (--tokenizer), never counted in a sum (--format csv: an empty \"prompt\" and N "
            "in a \"prompt (estimated)\" column); \"reusable\" the cache reads the "
            "conversation's previous request left in the cache (what \"lost\" is measured from); \"expected\" the "
            "cache reads the provider's rules predict (a prefix still in its TTL, written, in whole cache units); "
            '"actual" the logged cache reads ("?": not logged, never 0); "classification" the verdict, with its '
            'cause in brackets; "lost" the reusable tokens that were not read (empty: none; "?" on a break whose '
            'cache reads were not logged: unknown). A narrow terminal leaves out "reusable", then "prompt", then '
            '"kind" (the caption names them) before a classification wraps or a request takes a block of lines. '
            'In --format csv every count is a plain number (a "lost" of none: 0) and an unknown one empty.') in text
    assert ('"cost lost" is what all of them cost over cache reads ("all causes: breaks and other '
            'shortfalls"); "breaks cost" is the part of it lost to breaks alone ("the part of the cost lost that '
            'breaks caused"), so never more') in text
    cli_doc = (Path(__file__).resolve().parent.parent / "docs" / "cli.md").read_text(encoding="utf-8")
    assert "Timeline columns:" in cli_doc and '"reusable" the cache reads' in " ".join(cli_doc.split())


def test_cache_summary_counts_reads_and_prompts_over_the_same_requests_and_words_its_costs(tmp_path: Path) -> None:
    log = _usage_log(tmp_path / "a" / "session.jsonl", "sess-a", USAGES)
    code, out = _piped("cache", str(log))
    assert code == 0
    assert out.splitlines()[:9] == [
        f"{log}  session sess-a",
        "requests 3 (2 with cache reads and prompt logged; 1 more with cache reads (1920) but no prompt size, "
        "left out of the ratios); prompt tokens of those 4020",
        "cache read actual 1920 (47.8%) vs expected 1920 (47.8%)",  # 111.2% before: 3840 reads of 4020 tokens
        "breaks 0 by cause: none",
        "tokens lost (of 2944 reusable): none; cost lost $0.0000 (all causes: breaks and other "
        "shortfalls)",
        "session cost ≥$0.0007 (cache miss ≥$0.0006, cache read ≥$0.000012, cache write ≥$0.0000, output ≥$0.000024)",
        "with no cache ≥$0.0012; all off-peak ≥$0.0003; breaks cost $0.0000 (the part of the cost lost that breaks "
        "caused); 1 request(s) unpriced (≥$: a sum over the priced ones only) (list prices, check your",
        "  contract)",
        "tokens: estimate-utf8-bytes/4"]
    code, out = _piped("cache", "--json", str(log))
    report = json.loads(out)
    assert {k: report[k] for k in ("requests", "usage_known", "usage_known_without_prompt", "cache_read_without_prompt",
                                   "prompt_tokens", "actual_cache_read", "actual_hit_ratio", "reusable_cache_read")} == {
        "requests": 3, "usage_known": 2, "usage_known_without_prompt": 1, "cache_read_without_prompt": 1920,
        "prompt_tokens": 4020, "actual_cache_read": 1920, "actual_hit_ratio": 1920 / 4020, "reusable_cache_read": 2944}
    code, out = _piped("usage", "--json", str(log))
    # usage counts every logged read: cache's reads plus those it left out of the ratio
    assert json.loads(out)["totals"]["tokens"]["cache_read"] == 1920 + 1920


@needs_corpus
def test_cache_summary_of_a_session_with_breaks() -> None:
    code, out = _piped("cache", str(LOG), "--no-capture")  # the log alone (a capture found prices: test_found38)
    heading = f"{LOG}  session session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824"  # on one line when 200 columns hold it
    assert code == 0
    lines = out.splitlines()
    if len(heading) > 200:  # the path whole, the id under it (where the corpus's path is long)
        assert lines[:2] == heading.split("  ", 1)
        lines = lines[1:]
    assert lines[0] == heading if len(heading) <= 200 else True
    assert lines[1:8] == [
        "requests 8 (7 with cache reads and prompt logged); prompt tokens of those 57609",
        "cache read actual 36160 (62.8%) vs expected 17024 (29.6%)",
        "breaks 5 by cause: header_change 5",
        "tokens lost (of 48256 reusable): header_change 11968; cost lost $0.0076 (all causes: breaks "
        "and other shortfalls)",
        "session cost ≥$0.0111 (cache miss ≥$0.0101, cache read ≥$0.0008, cache write ≥$0.0000, output ≥$0.0002)",
        "with no cache ≥$0.0341; all off-peak ≥$0.0111; breaks cost $0.0076 (the part of the cost lost that breaks "
        "caused); 1 request(s) unpriced (≥$: a sum over the priced ones only) (list prices, check your",
        "  contract)"]


# -- 7. usage at 80 columns: a compact table that names what it left out -----------------------------


@needs_corpus
def test_usage_of_many_sessions_at_80_columns_is_a_compact_table() -> None:
    code, out = _piped("usage", str(CORPUS / "live"), str(CORPUS / "live-pi"), "--no-capture", columns=80)
    assert code == 0  # the sessions newest first by their logs' last activity, as `sessions` lists them
    # "requests" kept (session 38: before, it went first, with off-peak); the tokens go before the money,
    # the cheapest first, the costliest (the Claude session's cache writes) after the what-ifs (session 40)
    assert [line.rstrip() for line in out.splitlines()] == [
        'usage by session',
        '                                      lost tokens      cache',
        'session           requests  reusable  (cost)           write      cost  unpriced',
        "─" * 80,
        'session-e7611f7a         6     33024                       0        $?         6',
        'session-514c4bc2        11     77372  8927 ($0.0308)   18490  ≥$0.0935         1',
        'session-ef87ee25         5     24064                       0  ≥$0.0014         1',
        '402a1ae8                 1      8064                       0   $0.0001',
        'session-70444d8d         4     16000                       0  ≥$0.0013         1',
        '718aabf5                 2     16256  4672 ($0.0007)       0   $0.0008',
        'session-43924f58        14    123008  3328 ($0.0005)       0  ≥$0.0061         1',
        'session-2d31cc1d         5     24192                       0  ≥$0.0014         1',
        'session-d2f6dc6a         9     83328                       0  ≥$0.0027         1',
        'session-3f28929d         6     32128  8064 ($0.0051)       0  ≥$0.0068         1',
        'session-da27503b         8     48256  11968 ($0.0076)      0  ≥$0.0111         1',
        'session-86ef2d28         9     58112                       0  ≥$0.0017         1',
        'session-2b096b61         3      7936                       0  ≥$0.0013         1',
        'total                   83    551740  36959 ($0.0447)  18490  ≥$0.1280        16',
        '13 session(s); USD per 1,000,000 tokens from the price table (packaged); check',
        "your contract; off-peak: one-rate providers' requests at their cost; ≥$: a lower",
        'bound (unpriced requests left out), $?: no request priced; tokens: sums over the',
        '72 request(s) with usage logged (?: none logged); session ids: shortest unique',
        'prefix (--json for whole ids)',
        'narrow terminal: off-peak, output, cache read, cache miss, no cache not shown',
        '(widen it, or use --json)',
    ]


@needs_corpus
def test_usage_by_request_at_80_columns_is_a_compact_table() -> None:
    code, out = _piped("usage", "--by", "request", str(LOG), "--no-capture", columns=80)
    assert code == 0
    assert [line.rstrip() for line in out.splitlines()] == [
        'usage by request',
        '                         cache',
        'request                   miss  reusable  lost tokens (cost)      cost  unpriced',
        "─" * 80,
        'session-da27503b #0          ?         ?                            $?         1',
        'session-da27503b #1       7963         0                       $0.0012',
        'session-da27503b #2       7993      7936  7936 ($0.0051)       $0.0053',
        'session-da27503b #3        103      7936                       $0.0003',
        'session-da27503b #4       1910      7936  1152 ($0.0007)       $0.0014',
        'session-da27503b #5        178      8576                       $0.0004',
        'session-da27503b #6        306      8192                       $0.0004',
        'session-da27503b #7       2996      7680  2880 ($0.0018)       $0.0021',
        'total                    21449     48256  11968 ($0.0076)     ≥$0.0111         1',
        '1 session(s); USD per 1,000,000 tokens from the price table (packaged); check',
        'your contract; ≥$: a lower bound (unpriced requests left out), $?: no request',
        'priced; tokens: sums over the 7 request(s) with usage logged (?: none logged);',
        'session ids: shortest unique prefix (--json for whole ids)',
        'narrow terminal: cache write, off-peak, requests, output, cache read, no cache',
        'not shown (widen it, or use --json)',
    ]


# -- 8. CacheTotals: reads and prompts over the same requests ----------------------------------------


def _verdict(index: int, prompt: int | None, actual: int | None, *, potential: int = 0,
             lost: dict[str, int] | None = None) -> CacheVerdict:
    return CacheVerdict(index=index, kind="loop", turn=index, step=1, attempt=1, model="m", family="deepseek",
                        prompt_tokens=prompt, counted_tokens=prompt or 100, potential=potential, expected_any=potential,
                        expected=potential, actual=actual, classification="as_expected", lost=lost or {})


def test_totals_leave_out_the_reads_of_a_prompt_of_unknown_size() -> None:
    totals = CacheTotals.of([_verdict(0, 1000, 0), _verdict(1, 1000, 900, potential=896),
                             _verdict(2, None, 5000, potential=896, lost={"best_effort_miss": 128}),
                             _verdict(3, None, None)])
    assert (totals.requests, totals.known, totals.actual_total, totals.prompt_total, totals.expected_total,
            totals.sizeless, totals.sizeless_read, totals.potential_total, totals.lost_by_cause) == (
        4, 2, 900, 2000, 896, 1, 5000, 1792, {"best_effort_miss": 128})
    assert re.fullmatch(r"0\.45", str(totals.actual_total / totals.prompt_total))  # never above 1
