"""Session 38, small frictions from a new-user tour (items 8, 12 and 15 of its notes).

1. ``usage`` at 80 columns left out "requests" right after the empty columns: the count the "why is
   it expensive" journey reads (many requests, or a few large ones). Now the tokens go first (output,
   cache read, cache write, cache miss), then the what-ifs, and "requests" last (by request, where it
   is 1 in every row, with the what-ifs that repeat the cost). Session 40: the tokens that cost the
   least go first, and the costliest (where the money went) only after the what-ifs.
2. "off-peak" (what the requests would have cost all off-peak) was shown for Anthropic and OpenAI
   requests, which their providers bill at one rate all day: it only repeated the cost. Now it is
   ``n/a`` where no request was priced in a provider's peak window (DeepSeek's), its column is left
   out when no row has one, ``cache`` says no "all off-peak", and the JSON leaves
   ``off_peak_cost_usd`` out (never null: null is unknown). A sum over both kinds still counts what
   the others cost (off-peak they cost the same).
3. ``watch --on-break 'cat >> f; ...'``: the command runs without a shell, so every break failed
   with no word of why; the error now names the shell syntax and says ``sh -c '...'``.

The logs: the live-pi Claude session (corpus c1, Anthropic: no window) and the sample tools session
(DeepSeek, sent in the peak window), copied alone (no capture beside them).
"""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest
from _cli import invoke
from test_watch34 import _request

from dsh_audit.cache import usd_total
from dsh_audit.cli import _on_break

ROOT = Path(__file__).resolve().parent.parent
C1 = ROOT.parent / "shared" / "corpus" / "live-pi" / "c1-anthropic-tools" / "session-logs" / \
    "session-514c4bc2-e0ec-419e-84d4-2f666d536239.jsonl"
TOOLS = ROOT / "sample_logs" / "tools" / "session.jsonl"
needs_corpus = pytest.mark.skipif(not C1.is_file(), reason="the live-pi corpus is not present")
UNPRICED = ["warning: 1 request(s) unpriced: usage not logged"]


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    folder = tmp_path / "logs"
    folder.mkdir()
    shutil.copy(C1, folder / C1.name)
    shutil.copy(TOOLS, folder / "tools.jsonl")
    return folder


def _run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], columns: int,
         *args: str) -> tuple[int, list[str], list[str]]:
    monkeypatch.setenv("COLUMNS", str(columns))
    code, out, err = invoke(monkeypatch, capsys, *args)
    return code, [line.rstrip() for line in out.splitlines()], err


# -- 1. usage at 80 columns keeps "requests" and the money ----------------------------------------

#: The caption of every view of usage at 80 columns (the same two logs), up to its tokens' note.
_CAPTION_80 = [  # off-peak: the Claude session's requests at their cost, as the total counts them (session 43)
    '2 session(s); USD per 1,000,000 tokens from the price table (packaged); check',
    "your contract; off-peak: one-rate providers' requests at their cost; ≥$: a lower",
    'bound (unpriced requests left out), $?: no request priced; tokens: sums over the',
]
#: Its end in a view that shortens session ids (by session, turn, request), and in one that does not.
_IDS_80 = [
    '14 request(s) with usage logged (?: none logged); session ids: shortest unique',
    'prefix (--json for whole ids)',
]
_NO_IDS_80 = [
    '14 request(s) with usage logged (?: none logged)',
]
#: What a narrow terminal leaves out in most views.
_NARROW_80 = [  # "reusable" kept beside the lost tokens, before "no cache" (session 46)
    'narrow terminal: cache miss, output, cache read, off-peak, no cache not shown',
    '(widen it, or use --json)',
]

#: Each view of usage at 80 columns (the same two logs).
USAGE_80 = {
    "session": [
        'usage by session',
        '                                       lost tokens     cache',
        'session            requests  reusable  (cost)          write      cost  unpriced',
        "─" * 80,
        'session-sample-t…         4       640                      0   $0.0003',
        'session-514c4bc2         11     77372  8927 ($0.0308)  18490  ≥$0.0935         1',
        'total                    15     78012  8927 ($0.0308)  18490  ≥$0.0938         1',
        *_CAPTION_80,
        *_IDS_80,
        *_NARROW_80,
    ],
    "day": [
        'usage by day',
        '                                                       cache',
        'day         requests  reusable  lost tokens (cost)     write      cost  unpriced',
        "─" * 80,
        '2026-12-02        11     77372  8927 ($0.0308)         18490  ≥$0.0935         1',
        '2027-01-15         4       640                             0   $0.0003',
        'total             15     78012  8927 ($0.0308)         18490  ≥$0.0938         1',
        *_CAPTION_80,
        *_NO_IDS_80,
        *_NARROW_80,
    ],
    "model": [
        # the model the price table bills; the name logged would wrap its key: the caption says it (session 43)
        'usage by model',
        '                                       lost tokens     cache',
        'model              requests  reusable  (cost)          write      cost  unpriced',
        "─" * 80,
        'claude-sonnet-4-5         9     59518                   9404  ≥$0.0562         1',
        'claude-sonnet-4-6         2     17854  8927 ($0.0308)   9086   $0.0373',
        'deepseek-flash            4       640                      0   $0.0003',
        'total                    15     78012  8927 ($0.0308)  18490  ≥$0.0938         1',
        *_CAPTION_80,
        '14 request(s) with usage logged (?: none logged); model as billed:',
        'deepseek-flash (logged as deepseek-v4-flash)',
        *_NARROW_80,
    ],
    "window": [
        'usage by window',
        '                                                       cache',
        'window    requests  reusable  lost tokens (cost)       write      cost  unpriced',
        "─" * 80,
        'peak             4       640                               0   $0.0003',
        'standard        11     77372  8927 ($0.0308)           18490  ≥$0.0935         1',
        'total           15     78012  8927 ($0.0308)           18490  ≥$0.0938         1',
        *_CAPTION_80,
        *_NO_IDS_80,
        *_NARROW_80,
    ],
    "turn": [
        'usage by turn',
        '                                    lost tokens        cache',
        'turn                      requests  (cost)             write      cost  unpriced',
        "─" * 80,
        'session-sample-t… turn 1         4                         0   $0.0003',
        'session-514c4bc2 turn -          1                         ?        $?         1',
        'session-514c4bc2 turn 1          6                      9120   $0.0493',
        'session-514c4bc2 turn 2          2                       284   $0.0069',
        'session-514c4bc2 turn 3          2  8927 ($0.0308)      9086   $0.0373',
        'total                           15  8927 ($0.0308)     18490  ≥$0.0938         1',
        *_CAPTION_80,
        *_IDS_80,
        'narrow terminal: cache miss, output, cache read, off-peak, no cache, reusable',
        'not shown (widen it, or use --json)',
    ],
    "request": [
        'usage by request',
        '                                                       cache',
        'request               reusable  lost tokens (cost)     write      cost  unpriced',
        "─" * 80,
        'session-sample-t… #0         0                             0   $0.0001',
        'session-sample-t… #1       128                             0   $0.0001',
        'session-sample-t… #2       256                             0   $0.0001',
        'session-sample-t… #3       256                             0   $0.0001',
        'session-514c4bc2 #0          ?                             ?        $?         1',
        'session-514c4bc2 #1          0                          8019   $0.0304',
        'session-514c4bc2 #2       8029                           310   $0.0039',
        'session-514c4bc2 #3       8192                           187   $0.0039',
        'session-514c4bc2 #4       8325                           258   $0.0037',
        'session-514c4bc2 #5       8524                           157   $0.0038',
        'session-514c4bc2 #6       8679                           189   $0.0037',
        'session-514c4bc2 #7       8839                           152   $0.0036',
        'session-514c4bc2 #8       8930                           132   $0.0033',
        'session-514c4bc2 #9       8927  8927 ($0.0308)          8917   $0.0337',
        'session-514c4bc2 #10      8927                           169   $0.0035',
        'total                    78012  8927 ($0.0308)         18490  ≥$0.0938         1',
        *_CAPTION_80,
        *_IDS_80,
        'narrow terminal: requests, cache miss, output, cache read, off-peak, no cache',
        'not shown (widen it, or use --json)',
    ],
}


@needs_corpus
@pytest.mark.parametrize("by", list(USAGE_80))
def test_usage_at_80_columns_keeps_requests_and_the_money(monkeypatch, capsys, logs: Path, by: str) -> None:
    """Every grouping keeps "requests" (by request: 1 in every row, left out first), "lost tokens
    (cost)", "cost" and "unpriced"; the tokens go first, the cheapest first, but the costliest
    ("cache write", most of the Claude session's cost) only after off-peak and no cache (session 40:
    by turn, "no cache" is left out for it; by session the id's unique prefix leaves it room)."""
    code, lines, err = _run(monkeypatch, capsys, 80, "usage", "--by", by, str(logs))
    assert (code, err) == (0, UNPRICED)
    assert lines == USAGE_80[by]
    assert max(len(line) for line in lines) <= 80


@needs_corpus
def test_usage_at_200_columns_shows_every_column(monkeypatch, capsys, logs: Path) -> None:
    code, lines, err = _run(monkeypatch, capsys, 200, "usage", "--by", "session", str(logs))
    assert (code, err) == (0, UNPRICED)
    assert lines == [
        'usage by session',
        '┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┓',
        '┃ session                                      ┃ requests ┃ cache miss ┃ reusable ┃ lost tokens (cost) ┃ cache read ┃ cache write ┃ output ┃     cost ┃ no cache ┃ off-peak ┃ unpriced ┃',
        '┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━┩',
        '│ session-sample-tools                         │        4 │        748 │      640 │                    │        640 │           0 │     68 │  $0.0003 │  $0.0005 │  $0.0002 │          │',
        '│ session-514c4bc2-e0ec-419e-84d4-2f666d536239 │       11 │        100 │    77372 │ 8927 ($0.0308)     │      67968 │       18490 │    229 │ ≥$0.0935 │ ≥$0.2631 │ ≥$0.0935 │        1 │',
        '│ total                                        │       15 │        848 │    78012 │ 8927 ($0.0308)     │      68608 │       18490 │    297 │ ≥$0.0938 │ ≥$0.2636 │ ≥$0.0936 │        1 │',
        '└──────────────────────────────────────────────┴──────────┴────────────┴──────────┴────────────────────┴────────────┴─────────────┴────────┴──────────┴──────────┴──────────┴──────────┘',
        "2 session(s); USD per 1,000,000 tokens from the price table (packaged); check your contract; off-peak: one-rate providers' requests at their cost; ≥$: a lower bound (unpriced requests left out), $?:",
        'no request priced; tokens: sums over the 14 request(s) with usage logged (?: none logged)',
    ]
    code, lines, err = _run(monkeypatch, capsys, 200, "usage", "--by", "model", str(logs))
    assert (code, err) == (0, UNPRICED)
    assert lines == [
        'usage by model',
        '┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┓',
        '┃ model                                        ┃ requests ┃ cache miss ┃ reusable ┃ lost tokens (cost) ┃ cache read ┃ cache write ┃ output ┃     cost ┃ no cache ┃ off-peak ┃ unpriced ┃',
        '┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━┩',
        '│ claude-sonnet-4-5                            │        9 │         80 │    59518 │                    │      59072 │        9404 │    199 │ ≥$0.0562 │ ≥$0.2087 │ ≥$0.0562 │        1 │',
        '│ claude-sonnet-4-6                            │        2 │         20 │    17854 │ 8927 ($0.0308)     │       8896 │        9086 │     30 │  $0.0373 │  $0.0545 │  $0.0373 │          │',
        '│ deepseek-flash (logged as deepseek-v4-flash) │        4 │        748 │      640 │                    │        640 │           0 │     68 │  $0.0003 │  $0.0005 │  $0.0002 │          │',
        '│ total                                        │       15 │        848 │    78012 │ 8927 ($0.0308)     │      68608 │       18490 │    297 │ ≥$0.0938 │ ≥$0.2636 │ ≥$0.0936 │        1 │',
        '└──────────────────────────────────────────────┴──────────┴────────────┴──────────┴────────────────────┴────────────┴─────────────┴────────┴──────────┴──────────┴──────────┴──────────┘',
        "2 session(s); USD per 1,000,000 tokens from the price table (packaged); check your contract; off-peak: one-rate providers' requests at their cost; ≥$: a lower bound (unpriced requests left out), $?:",
        'no request priced; tokens: sums over the 14 request(s) with usage logged (?: none logged)',
    ]


@needs_corpus
def test_usage_by_model_is_one_row_per_model_billed_and_the_rows_add_up(monkeypatch, capsys, logs: Path) -> None:
    """Session 43 (issues 13/14): a dated snapshot (Claude Code's claude-sonnet-4-5-20250929) is billed
    as claude-sonnet-4-5: one row, the other name beside it; the off-peak cells of the one-rate rows
    are their cost, so the CSV's rows add up to its total row."""
    shutil.copy(ROOT / "tests" / "data" / "importers" / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl",
                logs)
    code, lines, _ = _run(monkeypatch, capsys, 80, "usage", str(logs), "--by", "model", "--format", "csv")
    assert lines[0].split(",")[:4] == ["table", "model", "logged models", "requests"]
    assert (code, [line.split(",")[1:4] + line.split(",")[-3:] for line in lines[1:]]) == (0, [
        ["claude-sonnet-4-5", "claude-sonnet-4-5; claude-sonnet-4-5-20250929", "13", "0.22887", "0.0695871", "1"],
        ["claude-sonnet-4-6", "claude-sonnet-4-6", "2", "0.054456", "0.0372513", "0"],
        ["deepseek-flash", "deepseek-v4-flash", "4", "0.000498", "0.00015492", "0"],
        ["total", "", "19", "0.283824", "0.10699332", "1"]])
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(logs), "--by", "model", "--json")
    table = json.loads(out)
    assert [(r["key"], r["logged_models"]) for r in table["rows"]] == [
        ("claude-sonnet-4-5", ["claude-sonnet-4-5", "claude-sonnet-4-5-20250929"]),
        ("claude-sonnet-4-6", ["claude-sonnet-4-6"]), ("deepseek-flash", ["deepseek-v4-flash"])]
    assert usd_total(r["off_peak_cost_usd"] for r in table["rows"]) == table["totals"]["off_peak_cost_usd"] == 0.10699332


# -- 2. off-peak: a one-rate provider's requests at their cost, in every view (session 43, issue 13) --

@needs_corpus
def test_usage_of_a_claude_session_has_its_cost_off_peak(monkeypatch, capsys, logs: Path) -> None:
    log = str(logs / C1.name)
    code, lines, err = _run(monkeypatch, capsys, 200, "usage", log)
    assert (code, err) == (0, UNPRICED)
    assert lines[2] == ("┃ session                                      ┃ requests ┃ cache miss ┃ reusable ┃ lost tokens (cost) ┃ "
                        "cache read ┃ cache write ┃ output ┃     cost ┃ no cache ┃ off-peak ┃ unpriced ┃")
    code, out, err = invoke(monkeypatch, capsys, "usage", log, "--json")
    table = json.loads(out)
    assert [row["off_peak_cost_usd"] for row in (*table["rows"], table["totals"])] == [0.0934629] * 2
    assert (table["totals"]["cost_usd"]["total"], table["totals"]["no_cache_cost_usd"]) == (0.0934629, 0.263109)
    code, lines, err = _run(monkeypatch, capsys, 80, "usage", log, "--format", "csv")
    assert lines == [
        "table,session,requests,cache miss,reusable,lost tokens,lost cost,cache read,cache write,output,cost,"
        "cache miss cost,cache read cost,cache write cost,output cost,no cache,off-peak,unpriced",
        "usage by session,session-514c4bc2-e0ec-419e-84d4-2f666d536239,11,100,77372,8927,0.03079065,67968,18490,229,"
        "0.0934629,0.0003,0.0203904,0.0693375,0.003435,0.263109,0.0934629,1",
        "usage by session,total,11,100,77372,8927,0.03079065,67968,18490,229,0.0934629,0.0003,0.0203904,0.0693375,"
        "0.003435,0.263109,0.0934629,1"]


@needs_corpus
def test_usage_json_has_off_peak_for_deepseek_and_the_mixed_total(monkeypatch, capsys, logs: Path) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(logs), "--json")
    table = json.loads(out)
    assert code == 0
    # the Claude session's requests cost off-peak what they cost, in its row as in the total (session 43):
    # the rows add up to it, 0.0934629 + 0.00015492
    assert [(row["key"], row.get("off_peak_cost_usd", "absent")) for row in table["rows"]] == [
        ("session-sample-tools", 0.00015492), ("session-514c4bc2-e0ec-419e-84d4-2f666d536239", 0.0934629)]
    assert table["totals"]["off_peak_cost_usd"] == 0.09361782
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(logs), "--json", "--by", "request")
    rows = json.loads(out)["rows"]
    assert [(row["window"], "off_peak_cost_usd" in row) for row in rows] == [
        ("peak", True)] * 4 + [("standard", True)] * 11  # #0: the unpriced title call ($?), the others their cost
    assert rows[4]["off_peak_cost_usd"] is None
    # a window split adds up to the whole (issue 13: the side of Claude's requests alone was null)
    halves = [json.loads(invoke(monkeypatch, capsys, "usage", str(logs), "--json", option, "2027-01-01")[1])["totals"]
              for option in ("--until", "--since")]
    assert [(half["requests"], half["off_peak_cost_usd"]) for half in halves] == [(11, 0.0934629), (4, 0.00015492)]
    assert usd_total(half["off_peak_cost_usd"] for half in halves) == table["totals"]["off_peak_cost_usd"]


@needs_corpus
def test_cache_says_all_off_peak_for_every_provider(monkeypatch, capsys, logs: Path) -> None:
    code, lines, _ = _run(monkeypatch, capsys, 240, "cache", str(logs / C1.name))
    assert lines[6] == ("with no cache ≥$0.2631; all off-peak ≥$0.0935; breaks cost $0.0308 (the part of the cost lost "
                        "that breaks caused); 1 request(s) unpriced (≥$: a sum over the priced ones only) (list prices, "
                        "check your contract)")
    code, lines, _ = _run(monkeypatch, capsys, 200, "cache", str(logs / "tools.jsonl"))
    assert lines[6] == ("with no cache $0.0005; all off-peak $0.0002; breaks cost $0.0000 (the part of the cost lost "
                        "that breaks caused) (list prices, check your contract)")
    costs = []
    for name in (C1.name, "tools.jsonl"):
        code, out, _ = invoke(monkeypatch, capsys, "cache", str(logs / name), "--json")
        costs.append(json.loads(out.splitlines()[0])["cost"])
    assert [cost.get("off_peak_cost_usd", "absent") for cost in costs] == [0.0934629, 0.00015492]


@needs_corpus
def test_stats_shows_off_peak_for_every_model(monkeypatch, capsys, logs: Path,
                                                               tmp_path: Path) -> None:
    both, claude = str(tmp_path / "both.sqlite"), str(tmp_path / "claude.sqlite")
    assert invoke(monkeypatch, capsys, "index", "--db", both, str(logs))[0] == 0
    assert invoke(monkeypatch, capsys, "index", "--db", claude, str(logs / C1.name))[0] == 0
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", both, "--json")
    stats = json.loads(out)
    assert (stats["cost"]["off_peak_cost_usd"], [(r["model"], r.get("off_peak_cost_usd", "absent"))
                                                 for r in stats["cost_by_model"]]) == (
        0.09361782, [("claude-sonnet-4-5", 0.0562116), ("claude-sonnet-4-6", 0.0372513), ("deepseek-flash", 0.00015492)])
    # the rows add up to the fleet's (a one-rate model's at its cost, session 43), by the model billed
    assert usd_total(r["off_peak_cost_usd"] for r in stats["cost_by_model"]) == stats["cost"]["off_peak_cost_usd"]
    assert [r["logged_models"] for r in stats["cost_by_model"]] == [
        ["claude-sonnet-4-5"], ["claude-sonnet-4-6"], ["deepseek-v4-flash"]]
    # the token table by model has the same keys (session 43: it grouped by the model logged)
    assert [(r["model"], r["logged_models"], r["requests"]) for r in stats["by_model"]] == [
        ("claude-sonnet-4-5", ["claude-sonnet-4-5"], 9), ("claude-sonnet-4-6", ["claude-sonnet-4-6"], 2),
        ("deepseek-flash", ["deepseek-v4-flash"], 4)]
    code, lines, _ = _run(monkeypatch, capsys, 200, "stats", "--db", both)
    assert "│ all off-peak                                   │ ≥$0.0936                                  │" in lines
    by_model = lines[lines.index("cost by model"):lines.index("by day (UTC, request time)")]
    assert [line for line in by_model if line[:1] in "┃│"][:4] == [
        "┃ model                                        ┃ requests ┃ cache miss $ ┃ cache read $ ┃ cache write $ ┃ "
        "output $ ┃  total $ ┃ no cache $ ┃ off-peak $ ┃ breaks $ ┃ unpriced ┃",
        "│ claude-sonnet-4-5                            │        9 │     ≥$0.0002 │     ≥$0.0177 │      ≥$0.0353 │ "
        "≥$0.0030 │ ≥$0.0562 │   ≥$0.2087 │   ≥$0.0562 │  $0.0000 │        1 │",
        "│ claude-sonnet-4-6                            │        2 │      $0.0001 │      $0.0027 │       $0.0341 │ "
        " $0.0004 │  $0.0373 │    $0.0545 │    $0.0373 │  $0.0308 │          │",
        "│ deepseek-flash (logged as deepseek-v4-flash) │        4 │      $0.0002 │   $0.0000038 │       $0.0000 │ "
        " $0.0001 │  $0.0003 │    $0.0005 │    $0.0002 │  $0.0000 │          │"]
    # both tables by model: one key (the token table's row of the DeepSeek requests)
    assert [line for line in by_model if line.startswith("│ deepseek")] == [
        "│ deepseek-flash (logged as deepseek-v4-flash) │        4 │      $0.0002 │   $0.0000038 │       $0.0000 │ "
        " $0.0001 │  $0.0003 │    $0.0005 │    $0.0002 │  $0.0000 │          │",
        "│ deepseek-flash (logged as deepseek-v4-flash) │        4 │           4 │   1388 │        640 │     46.1% │ "
        "   46.1% │      640 │           0 │ $0.0000 │"]
    # at 160 columns the token table had the room for the logged names and the cost table not: neither has them
    # now, one key for both tables of a run (issue 13, D7), each caption naming them
    code, lines, _ = _run(monkeypatch, capsys, 160, "stats", "--db", both)
    assert [line.split("│")[1] for line in lines if line.startswith("│ deepseek")] == [" deepseek-flash    "] * 2
    assert lines.count("model as billed: deepseek-flash (logged as deepseek-v4-flash)") == 2
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", claude, "--json")
    stats = json.loads(out)
    assert [stats["cost"]["off_peak_cost_usd"], *(r["off_peak_cost_usd"] for r in stats["cost_by_model"])] == [
        0.0934629, 0.0562116, 0.0372513]
    code, lines, _ = _run(monkeypatch, capsys, 200, "stats", "--db", claude)
    assert code == 0 and [line.split("│")[1:3] for line in lines if "all off-peak" in line] == [
        [" all off-peak                                   ", " ≥$0.0935                                  "]]


@needs_corpus
def test_check_markdown_gives_the_claude_session_its_cost_off_peak(monkeypatch, capsys, logs: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.chdir(logs.parent)
    code, _, _ = invoke(monkeypatch, capsys, "check", "logs", "--markdown", str(summary))
    assert code == 0
    assert [line for line in summary.read_text().splitlines() if line.startswith("| ")] == [
        "| status | log | session | requests | capture | breaks | hit ratio | cost | no cache | off-peak | findings |",
        "| ✅ pass | logs/session-514c4bc2-e0ec-419e-84d4-2f666d536239.jsonl | session-514c4bc2-e0ec-419e-84d4-2f666d536239 "
        "| 11 | none | 1 | 78.5% | ≥$0.0935 (breaks $0.0308) (1 unpriced) | ≥$0.2631 | ≥$0.0935 | 1 |",
        "| ✅ pass | logs/tools.jsonl | session-sample-tools | 4 | none | 0 | 46.1% | $0.0003 | $0.0005 | $0.0002 | 1 |",
        "| **total** | 2 log(s) | | 15 | | 1 | | ≥$0.0938 (breaks $0.0308) (1 unpriced) | ≥$0.2636 | ≥$0.0936 | 2 |"]
    # the Claude log alone: the same off-peak cell as among the others (issue 13: it was n/a)
    code, _, _ = invoke(monkeypatch, capsys, "check", "logs/" + C1.name, "--markdown", str(summary))
    assert [line.rsplit(" | ", 3)[1:] for line in summary.read_text().splitlines()
            if line.startswith(("| **total", "| ✅"))] == [["≥$0.2631", "≥$0.0935", "1 |"]] * 2


@needs_corpus
def test_the_report_page_has_an_off_peak_figure_for_a_claude_session(browser, logs: Path, tmp_path: Path,
                                                                       monkeypatch, capsys) -> None:
    from selenium.webdriver.common.by import By

    for name, figures in ((C1.name, ["all off-peak ≥$0.0935"]), ("tools.jsonl", ["all off-peak $0.0002"])):
        page = tmp_path / f"{name}.html"
        code, _, _ = invoke(monkeypatch, capsys, "report", str(logs / name), "-o", str(page))
        assert code == 0
        browser.get(page.as_uri())
        assert [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#overview tr[data-figure=off-peak]")] == figures


# -- 3. --on-break: a hint when the command holds shell syntax -------------------------------------

TAIL = "(run for the break at request #1 of session s; the watch goes on)"


@pytest.mark.parametrize(("command", "hint"), [
    (["false", ">>", "f;", "echo", "$HOME"],
     " (hint: --on-break runs CMD without a shell, so '>>', 'f;', '$HOME' reach false as words: "
     "give --on-break \"sh -c '...'\" to run it in a shell)"),
    (["false", "|", "tee", "x", "&&", "y"],
     " (hint: --on-break runs CMD without a shell, so '|', '&&' reach false as words: "
     "give --on-break \"sh -c '...'\" to run it in a shell)"),
    (["false", "a b;c", "--flag"], ""),  # a quoted word with a space: the user meant it as one
    (["sh", "-c", "cat > /dev/null; exit 1"], ""),  # a shell reads its own syntax
])
def test_a_failed_run_with_shell_syntax_says_sh_c(capsys, command: list[str], hint: str) -> None:
    hooks = _on_break._Hooks(command)
    hooks.start(_request(1, 1e-7, verdict="break"))
    hooks.wait(threading.Event())
    hooks.end()
    shown = " ".join(_on_break.shlex.quote(word) for word in command)
    assert (hooks.failures, capsys.readouterr().err.splitlines()) == (
        1, [f"error: --on-break {shown}: exited with status 1 {TAIL}{hint}"])
