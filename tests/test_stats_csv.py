"""``dsh-audit stats`` in every format tells one story (issues 13 and 14).

- A table and Markdown show a cache-hit ratio as people read it (``48.0%``, ``n/a``); CSV carries
  the ratio itself, 0 to 1 with every digit, as ``--json`` does (never ``48.0%`` text), empty when
  there is none; the CSV header names the expected ratio ``expected hit ratio``.
- Tokens are plain integers and money the exact amount in CSV; ``$x`` / ``≥$x`` / ``$?`` in a table.
- The numbers of the table, Markdown, CSV and JSON are the same numbers, and equal what ``usage``
  and ``cache`` say of the same log (a built one; and the corpus, skipped when it is absent).
- What cache losses cost is summed exactly (not by SQLite's ``SUM``, which adds doubles one by one).

Fixture ``s-mixed`` (as in ``test_money_display.py``), at 2027-01-15 08:00 UTC (DeepSeek's peak:
cache miss $0.30, cache read $0.006, output $0.60 per million tokens): three deepseek-v4-flash
requests (the third after a system-prompt change, a break losing 1920 cached tokens), a title call
(no usage logged), then local-coder (no price) reading the whole new prefix from the cache: its
cost is unknown (``$?``), and what it lost, nothing, costs ``$0.0000`` (no request owes it).
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from _cli import invoke, mixed_home
from dsh_audit.cache import Costs

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live"
SCENARIOS = ("c-change", "f-fork", "g-subagent")
needs_corpus = pytest.mark.skipif(not all((CORPUS / s / "home" / "sessions").is_dir() for s in SCENARIOS),
                                  reason="../shared/corpus is absent")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return mixed_home(tmp_path, monkeypatch)


def _indexed(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *paths: str) -> None:
    code, _, err = invoke(monkeypatch, capsys, "index", "--db", "i.sqlite", *paths)
    assert code == 0, err


def _stats(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = invoke(monkeypatch, capsys, "stats", "--db", "i.sqlite", *args)
    assert code == 0, err
    return out


def _csv(out: str) -> list[list[str]]:
    return [row for row in csv.reader(io.StringIO(out)) if row]


def _lines(out: str) -> list[str]:
    return [line.rstrip() for line in out.splitlines()]


TABLE = """\
i.sqlite: fleet totals
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃ measure                      ┃ value                   ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━┩
│ sessions (refused)           │ 1 (0)                   │
│ requests (cache reads known) │ 5 (4)                   │
│ prompt tokens                │ 8268                    │
│ cache read actual / expected │ 3968 / 1920             │
│ hit ratio actual / expected  │ 48.0% / 23.2%           │
│ output tokens                │ 40                      │
│ breaks (attribution / cache) │ 2 / 2                   │
│ tokens lost                  │ 1920 (of 5888 reusable) │
│ cost lost (list prices)      │ $0.0006                 │
└──────────────────────────────┴─────────────────────────┘
cost (list prices, check your contract)
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┓
┃ measure                                        ┃ value                                         ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┩
│ requests (unpriced)                            │ 5 (2)                                         │
│ cost                                           │ ≥$0.0013                                      │
│ cache miss / cache read / cache write / output │ ≥$0.0013 / ≥$0.000012 / ≥$0.0000 / ≥$0.000036 │
│ with no cache                                  │ ≥$0.0019                                      │
│ all off-peak                                   │ ≥$0.0007                                      │
│ cache losses / of which breaks                 │ $0.0006 / $0.0006                             │
│ unpriced: no price for model 'local-coder'     │ 1                                             │
│ unpriced: usage not logged                     │ 1                                             │
└────────────────────────────────────────────────┴───────────────────────────────────────────────┘
≥$: a sum over the priced requests only; $?: no request priced
cost by model
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┓
┃ model                                        ┃ requests ┃ cache miss $ ┃ cache read $ ┃ cache write $ ┃   output $ ┃  total $ ┃ no cache $ ┃ off-peak $ ┃ breaks $ ┃ unpriced ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━┩
│ deepseek-flash (logged as deepseek-v4-flash) │        4 │     ≥$0.0013 │   ≥$0.000012 │      ≥$0.0000 │ ≥$0.000036 │ ≥$0.0013 │   ≥$0.0019 │   ≥$0.0007 │  $0.0006 │        1 │
│ local-coder                                  │        1 │           $? │           $? │            $? │         $? │       $? │         $? │         $? │  $0.0000 │        1 │
└──────────────────────────────────────────────┴──────────┴──────────────┴──────────────┴───────────────┴────────────┴──────────┴────────────┴────────────┴──────────┴──────────┘
what cache losses cost, by cause
┏━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━━━━━━━━━┓
┃ cause         ┃ reusable ┃ tokens lost ┃    cost ┃ of which breaks ┃
┡━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━━━━━━━━━┩
│ header_change │     1920 │        1920 │ $0.0006 │         $0.0006 │
└───────────────┴──────────┴─────────────┴─────────┴─────────────────┘
by model
┏━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━┓
┃ model                                        ┃ requests ┃ reads known ┃ prompt ┃ cache read ┃ hit ratio ┃ expected ┃ reusable ┃ lost tokens ┃  lost $ ┃
┡━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━┩
│ deepseek-flash (logged as deepseek-v4-flash) │        4 │           3 │   6120 │       1920 │     31.4% │    31.4% │     3840 │        1920 │ $0.0006 │
│ local-coder                                  │        1 │           1 │   2148 │       2048 │     95.3% │     0.0% │     2048 │           0 │ $0.0000 │
└──────────────────────────────────────────────┴──────────┴─────────────┴────────┴────────────┴───────────┴──────────┴──────────┴─────────────┴─────────┘
by day (UTC, request time)
┏━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━┓
┃ day        ┃ requests ┃ reads known ┃ prompt ┃ cache read ┃ hit ratio ┃ expected ┃ reusable ┃ lost tokens ┃  lost $ ┃
┡━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━┩
│ 2027-01-15 │        5 │           4 │   8268 │       3968 │     48.0% │    23.2% │     5888 │        1920 │ $0.0006 │
└────────────┴──────────┴─────────────┴────────┴────────────┴───────────┴──────────┴──────────┴─────────────┴─────────┘
breaks by cause
┏━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━┳━━━━━━━━━━━━━┓
┃ cause         ┃ cache breaks ┃ attribution breaks ┃ reusable ┃ tokens lost ┃
┡━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━╇━━━━━━━━━━━━━┩
│ header_change │            2 │                  2 │     1920 │        1920 │
└───────────────┴──────────────┴────────────────────┴──────────┴─────────────┘
"""

CSV = """\
table,measure,value
i.sqlite: fleet totals,sessions,1
i.sqlite: fleet totals,sessions refused,0
i.sqlite: fleet totals,requests,5
i.sqlite: fleet totals,requests with cache reads known,4
i.sqlite: fleet totals,prompt tokens,8268
i.sqlite: fleet totals,cache read actual,3968
i.sqlite: fleet totals,cache read expected,1920
i.sqlite: fleet totals,hit ratio actual,0.4799225931301403
i.sqlite: fleet totals,hit ratio expected,0.23222060957910015
i.sqlite: fleet totals,output tokens,40
i.sqlite: fleet totals,breaks (attribution),2
i.sqlite: fleet totals,breaks (cache),2
i.sqlite: fleet totals,tokens lost,1920
i.sqlite: fleet totals,reusable cache read,5888
i.sqlite: fleet totals,cost lost (list prices),0.00056448

table,measure,value
"cost (list prices, check your contract)",requests,5
"cost (list prices, check your contract)",unpriced requests,2
"cost (list prices, check your contract)",cost,0.00130752
"cost (list prices, check your contract)",cache miss,0.00126
"cost (list prices, check your contract)",cache read,0.00001152
"cost (list prices, check your contract)",cache write,0
"cost (list prices, check your contract)",output,0.000036
"cost (list prices, check your contract)",with no cache,0.001872
"cost (list prices, check your contract)",all off-peak,0.00065376
"cost (list prices, check your contract)",cache losses,0.00056448
"cost (list prices, check your contract)",of which breaks,0.00056448
"cost (list prices, check your contract)",unpriced: no price for model 'local-coder',1
"cost (list prices, check your contract)",unpriced: usage not logged,1

table,model,logged models,requests,cache miss $,cache read $,cache write $,output $,total $,no cache $,off-peak $,breaks $,unpriced
cost by model,deepseek-flash,deepseek-v4-flash,4,0.00126,0.00001152,0,0.000036,0.00130752,0.001872,0.00065376,0.00056448,1
cost by model,local-coder,local-coder,1,,,,,,,,0,1

table,cause,reusable,tokens lost,cost,of which breaks
"what cache losses cost, by cause",header_change,1920,1920,0.00056448,0.00056448

table,model,logged models,requests,reads known,prompt,cache read,hit ratio,expected hit ratio,reusable,lost tokens,lost $
by model,deepseek-flash,deepseek-v4-flash,4,3,6120,1920,0.3137254901960784,0.3137254901960784,3840,1920,0.00056448
by model,local-coder,local-coder,1,1,2148,2048,0.9534450651769087,0,2048,0,0

table,day,requests,reads known,prompt,cache read,hit ratio,expected hit ratio,reusable,lost tokens,lost $
"by day (UTC, request time)",2027-01-15,5,4,8268,3968,0.4799225931301403,0.23222060957910015,5888,1920,0.00056448

table,cause,cache breaks,attribution breaks,reusable,tokens lost
breaks by cause,header_change,2,2,1920,1920

table,session,path,requests,reads known,prompt,cache read,hit ratio,expected hit ratio,reusable,lost tokens,lost $,cost,breaks $
sessions whose cache losses cost the most,s-mixed,{path},5,4,8268,3968,0.4799225931301403,0.23222060957910015,5888,1920,0.00056448,0.00130752,0.00056448

table,session,path,request,model,cause,reusable,lost tokens,lost $
costliest cache breaks,s-mixed,{path},2,deepseek-v4-flash,header_change,1920,1920,0.00056448
"""

MARKDOWN = r"""### i.sqlite: fleet totals

| measure | value |
| --- | --- |
| sessions (refused) | 1 (0) |
| requests (cache reads known) | 5 (4) |
| prompt tokens | 8268 |
| cache read actual / expected | 3968 / 1920 |
| hit ratio actual / expected | 48.0% / 23.2% |
| output tokens | 40 |
| breaks (attribution / cache) | 2 / 2 |
| tokens lost | 1920 (of 5888 reusable) |
| cost lost (list prices) | $0.0006 |

### cost (list prices, check your contract)

| measure | value |
| --- | --- |
| requests (unpriced) | 5 (2) |
| cost | ≥$0.0013 |
| cache miss / cache read / cache write / output | ≥$0.0013 / ≥$0.000012 / ≥$0.0000 / ≥$0.000036 |
| with no cache | ≥$0.0019 |
| all off-peak | ≥$0.0007 |
| cache losses / of which breaks | $0.0006 / $0.0006 |
| unpriced: no price for model 'local-coder' | 1 |
| unpriced: usage not logged | 1 |

≥\$: a sum over the priced requests only; \$?: no request priced

### cost by model

| model | requests | cache miss \$ | cache read \$ | cache write \$ | output \$ | total \$ | no cache \$ | off-peak \$ | breaks \$ | unpriced |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| deepseek-flash (logged as deepseek-v4-flash) | 4 | ≥$0.0013 | ≥$0.000012 | ≥$0.0000 | ≥$0.000036 | ≥$0.0013 | ≥$0.0019 | ≥$0.0007 | $0.0006 | 1 |
| local-coder | 1 | \$? | \$? | \$? | \$? | \$? | \$? | \$? | $0.0000 | 1 |

### what cache losses cost, by cause

| cause | reusable | tokens lost | cost | of which breaks |
| --- | ---: | ---: | ---: | ---: |
| header\_change | 1920 | 1920 | $0.0006 | $0.0006 |

### by model

| model | requests | reads known | prompt | cache read | hit ratio | expected | reusable | lost tokens | lost \$ |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| deepseek-flash (logged as deepseek-v4-flash) | 4 | 3 | 6120 | 1920 | 31.4% | 31.4% | 3840 | 1920 | $0.0006 |
| local-coder | 1 | 1 | 2148 | 2048 | 95.3% | 0.0% | 2048 | 0 | $0.0000 |

### by day (UTC, request time)

| day | requests | reads known | prompt | cache read | hit ratio | expected | reusable | lost tokens | lost \$ |
| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| 2027-01-15 | 5 | 4 | 8268 | 3968 | 48.0% | 23.2% | 5888 | 1920 | $0.0006 |

### breaks by cause

| cause | cache breaks | attribution breaks | reusable | tokens lost |
| --- | ---: | ---: | ---: | ---: |
| header\_change | 2 | 2 | 1920 | 1920 |

### sessions whose cache losses cost the most

| session | path | requests | reads known | prompt | cache read | hit ratio | expected | reusable | lost tokens | lost \$ | cost | breaks \$ |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| s-mixed | {path} | 5 | 4 | 8268 | 3968 | 48.0% | 23.2% | 5888 | 1920 | $0.0006 | ≥$0.0013 | $0.0006 |

ranked by lost \$, costliest first (≥\$x by x); then lost \$? by lost tokens

### costliest cache breaks

| session | path | request | model | cause | reusable | lost tokens | lost \$ |
| --- | --- | ---: | --- | --- | ---: | ---: | ---: |
| s-mixed | {path} | 2 | deepseek-v4-flash | header\_change | 1920 | 1920 | $0.0006 |

ranked by lost \$, costliest first (≥\$x by x); then lost \$? by lost tokens; 1 break(s) that cost nothing (no token lost, or at $0) left out
"""


def test_the_table_is_for_people(home: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The whole table (the sessions table aside: its path column depends on the temporary path)."""
    _indexed(monkeypatch, capsys)
    out = _stats(monkeypatch, capsys)
    assert "\n".join(_lines(out)).split("\nsessions whose cache losses cost the most\n")[0] + "\n" == TABLE


def test_csv_carries_numbers(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The whole CSV: a hit ratio is the ratio (0 to 1, every digit), tokens plain integers, money exact."""
    _indexed(monkeypatch, capsys)
    path = home / "sessions" / "--p--" / "s-mixed" / "session.jsonl"
    assert _stats(monkeypatch, capsys, "--format", "csv") == CSV.format(path=path).replace("\n", "\r\n")


def test_markdown_is_the_table(home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _indexed(monkeypatch, capsys)
    path = str(home / "sessions" / "--p--" / "s-mixed" / "session.jsonl").replace("_", "\\_")
    assert _stats(monkeypatch, capsys, "--format", "markdown") == MARKDOWN.format(path=path)


MEASURE_TABLES = ("i.sqlite: fleet totals", "cost (list prices, check your contract)")


def _value(text: str) -> Decimal | None:
    return None if text == "" else Decimal(text)


def _json_number(value: Any) -> Decimal | None:
    return None if value is None else Decimal(repr(value))


def _percent(ratio: float | None) -> str:
    return "n/a" if ratio is None else f"{ratio:.1%}"


def test_every_format_and_usage_and_cache_agree(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Each CSV number is the JSON's number, each table cell its text, and the totals are what
    ``usage`` and ``cache`` say of the same log."""
    _indexed(monkeypatch, capsys)
    stats = json.loads(_stats(monkeypatch, capsys, "--json"))
    rows = _csv(_stats(monkeypatch, capsys, "--format", "csv"))
    markdown = _stats(monkeypatch, capsys, "--format", "markdown").splitlines()
    measures = {r[1]: r[2] for r in rows if r[0] in MEASURE_TABLES}
    totals, cost = stats["totals"], stats["cost"]
    assert _value(measures["hit ratio actual"]) == _json_number(totals["actual_hit_ratio"])
    assert _value(measures["hit ratio expected"]) == _json_number(totals["expected_hit_ratio"])
    assert _value(measures["cost"]) == _json_number(cost["cost_usd"]["total"])
    assert _value(measures["cost lost (list prices)"]) == _json_number(totals["lost_cost_usd"])
    assert f"| hit ratio actual / expected | {_percent(totals['actual_hit_ratio'])} / " \
           f"{_percent(totals['expected_hit_ratio'])} |" in markdown
    assert f"| cost | ≥{Costs.text(cost['cost_usd']['total'])} |" in markdown
    header = next(r for r in rows if r[0] == "table" and r[1] == "model" and "hit ratio" in r)
    for row, model in zip([r for r in rows if r[0] == "by model"], stats["by_model"]):
        cells = dict(zip(header[1:], row[1:]))
        assert _value(cells["hit ratio"]) == _json_number(model["actual_hit_ratio"])
        assert _value(cells["expected hit ratio"]) == _json_number(model["expected_hit_ratio"])
        assert _value(cells["lost $"]) == _json_number(model["lost_cost_usd"])
        assert int(cells["prompt"]) == model["prompt_tokens"]
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--json")
    assert code == 0
    report = json.loads(out)
    assert (totals["actual_hit_ratio"], totals["expected_hit_ratio"], totals["lost_cost_usd"]) == (
        report["actual_hit_ratio"], report["expected_hit_ratio"], report["lost_cost_usd"])
    assert cost["cost_usd"] == report["cost"]["cost_usd"]
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--json")
    assert code == 0
    usage = json.loads(out)["totals"]
    assert (_value(measures["cost"]), _value(measures["with no cache"]), _value(measures["all off-peak"]),
            _value(measures["of which breaks"])) == (
        _json_number(usage["cost_usd"]["total"]), _json_number(usage["no_cache_cost_usd"]),
        _json_number(usage["off_peak_cost_usd"]), _json_number(usage["break_cost_usd"]))


def test_the_cost_of_cache_losses_is_summed_exactly(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """SQLite's SUM adds doubles one by one: $1e8 and three times $1e-7 come to $100000000.00000031.
    The losses are summed as every other amount (``usd_total``): $100000000.0000003 (an index
    edited to hold such amounts, which a fleet's many small losses drift as)."""
    _indexed(monkeypatch, capsys)
    with sqlite3.connect(home / "i.sqlite") as connection:
        for index, cost in enumerate((1e8, 1e-7, 1e-7, 1e-7)):
            connection.execute("UPDATE requests SET lost_cost = ?, lost_tokens = 1 WHERE idx = ?", (cost, index))
    connection.close()
    stats = json.loads(_stats(monkeypatch, capsys, "--json"))
    assert stats["totals"]["lost_cost_usd"] == 100000000.0000003
    assert stats["by_model"][0]["lost_cost_usd"] == 100000000.0000003  # deepseek-v4-flash
    assert [r[2] for r in _csv(_stats(monkeypatch, capsys, "--format", "csv"))
            if r[:2] == ["i.sqlite: fleet totals", "cost lost (list prices)"]] == ["100000000.0000003"]


@needs_corpus
def test_stats_on_corpus_logs_equals_usage_and_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """On real logs (a model switch, a fork, a subagent): stats' CSV numbers are ``usage``'s and
    ``cache``'s, exactly."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    roots = [str(CORPUS / s / "home" / "sessions") for s in SCENARIOS]
    _indexed(monkeypatch, capsys, *roots)
    rows = _csv(_stats(monkeypatch, capsys, "--format", "csv"))
    measures = {r[1]: r[2] for r in rows if r[0] in MEASURE_TABLES}
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--json", "--by", "model", *roots)
    assert code == 0
    usage = json.loads(out)
    assert measures["cost"] == "0.014743948"  # the title calls priced from the captures found (tour 38)
    assert _value(measures["cost"]) == _json_number(usage["totals"]["cost_usd"]["total"])
    assert _value(measures["all off-peak"]) == _json_number(usage["totals"]["off_peak_cost_usd"])
    by_model = {(r[1], r[2]): _value(r[8]) for r in rows if r[0] == "cost by model"}
    # one key each, usage's: the model billed, and the names logged in a column of their own as `usage --by model
    # --format csv` has them (session 43; a table's one cell "MODEL (logged as A)" is two columns in CSV)
    assert by_model == {(row["key"], "; ".join(row["logged_models"])): _json_number(
        (row["cost_usd"] or {}).get("total")) for row in usage["rows"]}
    assert {(r[1], r[2]) for r in rows if r[0] == "by model"} == set(by_model)
    assert ("deepseek-flash", "deepseek-v4-flash") in by_model
    code, out, _ = invoke(monkeypatch, capsys, "cache", "--json", *roots)
    assert code == 0
    reports = [json.loads(line) for line in out.splitlines()]
    prompt = sum(r["prompt_tokens"] for r in reports)
    read = sum(r["actual_cache_read"] for r in reports)
    assert (int(measures["prompt tokens"]), int(measures["cache read actual"])) == (prompt, read)
    assert _value(measures["hit ratio actual"]) == _json_number(read / prompt)
