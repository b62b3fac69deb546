"""What ``index`` and ``stats`` print says what it means (issues 13 and 14).

- The cost titles say where the rates came from: "list prices" only for the packaged table; rates
  from ``--prices`` or from pyproject.toml's ``[tool.dsh-audit.prices]`` are named, as ``cache``
  names them ("rates from FILE over the packaged list prices").
- A request whose model the index does not know is counted under one name in every table,
  ``unknown`` (as ``usage --by model`` names it), not ``-`` in one and ``?`` in another.
- ``index``'s summary line fits an 80-column terminal (COLUMNS when piped), folded at spaces.

Fixture ``s-mixed`` (as in ``test_stats_csv.py``): three deepseek-v4-flash requests (a break losing
1920 cached tokens), a title call (no usage), then local-coder (no price); the title call's model
is then cleared in the index (a request whose model is not known).
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from _cli import invoke, mixed_home

CONTRACT = ('{"providers": {"deepseek": {"models": {"deepseek-v4-flash": [{"from": "2026-01-01", "cache_miss": 1.0, '
            '"cache_read": 0.1, "output": 2.0, "source": "my contract"}]}}}}')


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return mixed_home(tmp_path, monkeypatch, columns=80)


def _forget_model(db: Path) -> None:
    with sqlite3.connect(db) as connection:
        for table in ("requests", "costs"):
            connection.execute(f"UPDATE {table} SET model = NULL WHERE idx = 3")
    connection.close()


RATES = "rates from HOME/contract.json over the packaged list prices"  # the index records it by absolute path


def test_stats_names_the_rates_and_one_unknown_model(home: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    (home / "contract.json").write_text(CONTRACT, encoding="utf-8")
    code, _, err = invoke(monkeypatch, capsys, "index", "--db", "a.sqlite", "--prices", "contract.json")
    assert (code, err) == (0, [])
    _forget_model(home / "a.sqlite")
    code, out, err = invoke(monkeypatch, capsys, "stats", "--db", "a.sqlite", "--format", "csv")
    assert (code, err) == (0, [])
    assert out.replace(str(home), "HOME").splitlines() == [
        "table,measure,value",
        "a.sqlite: fleet totals,sessions,1",
        "a.sqlite: fleet totals,sessions refused,0",
        "a.sqlite: fleet totals,requests,5",
        "a.sqlite: fleet totals,requests with cache reads known,4",
        "a.sqlite: fleet totals,prompt tokens,8268",
        "a.sqlite: fleet totals,cache read actual,3968",
        "a.sqlite: fleet totals,cache read expected,1920",
        "a.sqlite: fleet totals,hit ratio actual,0.4799225931301403",
        "a.sqlite: fleet totals,hit ratio expected,0.23222060957910015",
        "a.sqlite: fleet totals,output tokens,40",
        "a.sqlite: fleet totals,breaks (attribution),2",
        "a.sqlite: fleet totals,breaks (cache),2",
        "a.sqlite: fleet totals,tokens lost,1920",
        "a.sqlite: fleet totals,reusable cache read,5888",  # what it is measured from (issue 11 item 3)
        "a.sqlite: fleet totals,cost lost (rates from HOME/contract.json),0.001728",
        "",
        "table,measure,value",
        f"cost ({RATES}),requests,5",
        f"cost ({RATES}),unpriced requests,2",
        f"cost ({RATES}),cost,0.004452",
        f"cost ({RATES}),cache miss,0.0042",
        f"cost ({RATES}),cache read,0.000192",
        f"cost ({RATES}),cache write,0",
        f"cost ({RATES}),output,0.00006",
        f"cost ({RATES}),with no cache,0.00618",
        f"cost ({RATES}),all off-peak,0.004452",
        f"cost ({RATES}),cache losses,0.001728",
        f"cost ({RATES}),of which breaks,0.001728",
        f"cost ({RATES}),unpriced: no price for model 'local-coder',1",
        f"cost ({RATES}),unpriced: usage not logged,1",
        "",
        "table,model,logged models,requests,cache miss $,cache read $,cache write $,output $,total $,no cache $,"
        "off-peak $,breaks $,unpriced",
        # the request that logged no model, billed as deepseek-v4-flash, in its row (session 43: by model
        # billed), which names what its requests logged, in both tables by model
        "cost by model,deepseek-v4-flash,deepseek-v4-flash; unknown,4,0.0042,0.000192,0,0.00006,0.004452,0.00618,"
        "0.004452,0.001728,1",
        "cost by model,local-coder,local-coder,1,,,,,,,,0,1",
        "",
        "table,cause,reusable,tokens lost,cost,of which breaks",
        '"what cache losses cost, by cause",header_change,1920,1920,0.001728,0.001728',
        "",
        "table,model,logged models,requests,reads known,prompt,cache read,hit ratio,expected hit ratio,reusable,"
        "lost tokens,lost $",
        "by model,deepseek-v4-flash,deepseek-v4-flash; unknown,4,3,6120,1920,0.3137254901960784,0.3137254901960784,"
        "3840,1920,"
        "0.001728",
        "by model,local-coder,local-coder,1,1,2148,2048,0.9534450651769087,0,2048,0,0",
        "",
        "table,day,requests,reads known,prompt,cache read,hit ratio,expected hit ratio,reusable,lost tokens,lost $",
        '"by day (UTC, request time)",2027-01-15,5,4,8268,3968,0.4799225931301403,0.23222060957910015,5888,1920,'
        '0.001728',
        "",
        "table,cause,cache breaks,attribution breaks,reusable,tokens lost",
        "breaks by cause,header_change,2,2,1920,1920",
        "",
        "table,session,path,requests,reads known,prompt,cache read,hit ratio,expected hit ratio,reusable,lost tokens,"
        "lost $,cost,breaks $",
        "sessions whose cache losses cost the most,s-mixed,HOME/sessions/--p--/s-mixed/session.jsonl,5,4,8268,3968,"
        "0.4799225931301403,0.23222060957910015,5888,1920,0.001728,0.004452,0.001728",
        "",  # the costliest breaks of every session (issue 13); the unpriced one lost no token: left out (views33)
        "table,session,path,request,model,cause,reusable,lost tokens,lost $",
        "costliest cache breaks,s-mixed,HOME/sessions/--p--/s-mixed/session.jsonl,2,deepseek-v4-flash,header_change,"
        "1920,1920,0.001728"]
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", "a.sqlite", "--json")
    assert code == 0 and json.loads(out)["price_files"] == [["packaged", str(home / "contract.json")]]
    code, out, _ = invoke(monkeypatch, capsys, "stats", "--db", "a.sqlite")
    assert code == 0
    table = out.splitlines()
    monkeypatch.setenv("COLUMNS", "400")  # the rates' file is named by its absolute path: wide enough for one line
    code, wide, _ = invoke(monkeypatch, capsys, "stats", "--db", "a.sqlite")
    monkeypatch.delenv("COLUMNS")
    assert [line.split("│")[1:3] for line in wide.replace(str(home), "HOME").splitlines() if "cost lost" in line] == [
        [" cost lost (rates from HOME/contract.json) ", " $0.0017                 "]]
    assert f"cost ({RATES})" in wide.replace(str(home), "HOME").splitlines()
    rows = [line for line in table if "unknown" in line or line.startswith(("│ - ", "? ", "- ", "│ ? ", "deepseek"))]
    # below 100 columns, compact; the request with no model in its billed model's rows (session 43), the
    # caption naming what they logged where the keys would wrap
    assert rows == ["deepseek-v4-flash         4    ≥$0.0042  ≥$0.0045   ≥$0.0062   $0.0017         1",
                    "model as billed: deepseek-v4-flash (also unknown)",
                    "deepseek-v4-flash         4    6120     1920   31.4%      3840     1920  $0.0017",
                    "model as billed: deepseek-v4-flash (also unknown)"]


def test_stats_names_the_pyproject_rates_and_says_list_prices_for_the_packaged_table(
        home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = invoke(monkeypatch, capsys, "index", "--db", "list.sqlite")
    assert (code, err) == (0, [])
    (home / "pyproject.toml").write_text(
        "[tool.dsh-audit.prices.providers.deepseek.models]\n"
        'deepseek-v4-flash = [{from = "2026-01-01", cache_miss = 1.0, cache_read = 0.1, output = 2.0}]\n',
        encoding="utf-8")
    code, _, err = invoke(monkeypatch, capsys, "index", "--db", "p.sqlite")
    assert (code, err) == (0, [])
    label = f"{home}/pyproject.toml [tool.dsh-audit.prices]"
    monkeypatch.setenv("COLUMNS", "400")
    code, out, err = invoke(monkeypatch, capsys, "stats", "--db", "p.sqlite", "--format", "csv")
    assert (code, err) == (0, [])
    lines = out.splitlines()
    assert lines[15] == f"p.sqlite: fleet totals,cost lost (rates from {label}),0.001728"
    assert lines[18:20] == [f"cost (rates from {label} over the packaged list prices),requests,5",
                            f"cost (rates from {label} over the packaged list prices),unpriced requests,2"]
    code, out, err = invoke(monkeypatch, capsys, "stats", "--db", "list.sqlite", "--format", "csv")
    assert (code, err) == (0, [])
    lines = out.splitlines()
    assert lines[15] == "list.sqlite: fleet totals,cost lost (list prices),0.00056448"
    assert lines[18] == '"cost (list prices, check your contract)",requests,5'


def test_the_index_line_fits_80_columns(home: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    bad = home / "sessions" / "--p--" / "s-bad" / "session.jsonl"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"type":"nonsense"}\n', encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "index", "--db", "fleet-index.sqlite")
    assert code == 2 and len(err) == 1 and err[0].startswith(f"error: {bad}:1: corrupt session log")
    assert re.sub(r"in \d+\.\d s", "in 0.0 s", out).splitlines() == [
        "fleet-index.sqlite: indexed 2 (1 refused, stored with their error), skipped 0",
        "  unchanged, of 2 log(s) in 0.0 s"]
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = invoke(monkeypatch, capsys, "index", "--db", "fleet-index.sqlite")
    assert code == 2
    assert re.sub(r"in \d+\.\d s", "in 0.0 s", out).splitlines() == [
        "fleet-index.sqlite: indexed 0, skipped 2 unchanged (1 refused, reported again), of 2 log(s) in 0.0 s"]
