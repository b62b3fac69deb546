"""What new-user tour 16 (session 40) found, fixed.

3. A narrow terminal left out the columns that carry the money: for the live-pi Claude session
   (cache writes $0.0693 of ≥$0.0935) ``usage`` dropped "output, cache read, cache write" and
   ``stats``' "cost by model" dropped "cache write $" first. Now both leave out a column with no
   value first, then the token buckets that cost the least, then the what-ifs, and the costliest
   bucket last: where the money went stays in sight.
4. ``check`` at exactly 80 columns left out "capture" (81 showed "11/11 identical"): its short form
   now shortens "breaks" and "findings" too, before a column is left out.
6. ``check --markdown -`` (any report on stdout) printed no table, no finding and no verdict at all:
   a CI log had no PASSED/FAILED line. They now go to stderr.
15. docs/ci.md said every policy error names the key's dotted name; a key of ``[tool.dsh-audit]``
   itself is named by its policy key name, as every error about a policy key's value names it (the
   code's one rule): the doc now says so and shows the top-level typo's line as printed.

The HTML page at phone width (item 11): ``tests/test_html35.py``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

ROOT = Path(__file__).resolve().parent.parent
C1_DIR = ROOT.parent / "shared" / "corpus" / "live-pi" / "c1-anthropic-tools"
C1 = C1_DIR / "session-logs" / "session-514c4bc2-e0ec-419e-84d4-2f666d536239.jsonl"
TOOLS = ROOT / "sample_logs" / "tools" / "session.jsonl"
needs_corpus = pytest.mark.skipif(not C1.is_file() or not (C1_DIR / "wire.jsonl").is_file(),
                                  reason="the live-pi corpus is not present")
UNPRICED = "warning: 1 request(s) unpriced: usage not logged"


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


# -- 3. the money stays in sight at 80 columns ---------------------------------------------------

@needs_corpus
def test_usage_at_80_columns_keeps_the_cache_writes_that_carry_the_cost(tmp_path: Path, cli80: Any) -> None:
    shutil.copy(C1, tmp_path / C1.name)  # the log alone: its usage, no capture's
    code, out, err = cli80("usage", "--by", "session", C1.name)
    assert (code, err) == (0, [UNPRICED])
    assert _lines(out) == [
        'usage by session',
        '                                      lost tokens      cache',
        'session           requests  reusable  (cost)           write      cost  unpriced',
        "─" * 80,
        'session-514c4bc2        11     77372  8927 ($0.0308)   18490  ≥$0.0935         1',
        'total                   11     77372  8927 ($0.0308)   18490  ≥$0.0935         1',
        '1 session(s); USD per 1,000,000 tokens from the price table (packaged); check',
        'your contract; ≥$: a lower bound (unpriced requests left out), $?: no request',
        'priced; tokens: sums over the 10 request(s) with usage logged (?: none logged);',
        'session ids: shortest unique prefix (--json for whole ids)',
        'narrow terminal: off-peak, cache miss, output, cache read, no cache not shown',
        '(widen it, or use --json)',
    ]  # off-peak: the cost (Anthropic bills one rate all day, session 43)


@needs_corpus
def test_stats_cost_by_model_at_80_columns_keeps_the_cache_writes(tmp_path: Path, cli80: Any) -> None:
    """The Claude session and a DeepSeek one: the fleet's cache writes cost the most, its misses
    the least; the what-ifs go before the writes."""
    shutil.copy(C1, tmp_path / C1.name)
    shutil.copy(TOOLS, tmp_path / "tools.jsonl")
    assert cli80("index", "--db", "i.sqlite", ".")[0] == 0
    code, out, err = cli80("stats", "--db", "i.sqlite")
    assert (code, err) == (0, [])
    lines = _lines(out)
    start = lines.index("cost by model")
    assert lines[start:lines.index("what cache losses cost, by cause")] == [
        "cost by model",
        "                                  cache             no cache",
        "model              requests     write $   total $          $  breaks $  unpriced",
        "─" * 80,
        "claude-sonnet-4-5         9    ≥$0.0353  ≥$0.0562   ≥$0.2087   $0.0000         1",
        "claude-sonnet-4-6         2     $0.0341   $0.0373    $0.0545   $0.0308",
        "deepseek-flash            4     $0.0000   $0.0003    $0.0005   $0.0000",  # billed as (session 43)
        # the key with its logged name would wrap at 80 columns: the caption says it (session 43)
        "model as billed: deepseek-flash (logged as deepseek-v4-flash)",
        "narrow terminal: cache miss $, output $, cache read $, off-peak $ not shown",
        "(widen it, or use --json)"]


# -- 4, 6. check at 80 columns shows the capture; a report on stdout leaves the rest on stderr ----

_CHECK_80 = [
    "dsh-audit check",
    "status  session           reqs  capture          brks    hit     cost  finds",
    "─" * 76,
    "ok      session-514c4bc2    11  11/11 identical     1  78.4%  $0.0942      0",
    "session: shortest unique prefix of its id (--json for whole ids)",
    "log:",
    f"  {C1}",  # session 42: the lone path and the verdict's rest indented (only the verdict starts a line)
    "PASSED: 1 log(s), 11 request(s), 0 error(s), 0 warning(s), 0 info, 0 failing",
    "  (policy: defaults)"]
_NOTE = "note: 1 request(s) priced from the capture's usage (their log holds none)"


@needs_corpus
@pytest.mark.parametrize("report", [(), ("--markdown", "-"), ("--sarif", "-")])
def test_check_at_80_columns_shows_the_capture_and_a_report_on_stdout_keeps_the_verdict(
        report: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = invoke(monkeypatch, capsys, "check", str(C1), *report)
    assert code == 0
    if not report:
        assert (_lines(out), err) == (_CHECK_80, [_NOTE])
    else:  # the report alone on stdout; what check says for people on stderr, as a table
        assert err == [_NOTE, *_CHECK_80]
        heading = "## dsh-audit check: ✅ passed: 1 explained break(s)\n"  # the page's words (session 46)
        assert out.startswith(heading) if report[0] == "--markdown" else \
            json.loads(out)["version"] == "2.1.0"


# -- 15. docs/ci.md shows a top-level typo's error as printed ---------------------------------------

def test_docs_ci_shows_a_top_level_policy_typo_as_check_says_it(tmp_path: Path, cli80: Any) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.dsh-audit]\nrequire-capture = false\nmin-cache-hit-ration = 0.6\n",
                                             encoding="utf-8")
    code, out, err = cli80("check", str(TOOLS))
    assert (code, out) == (2, "")
    said = [line.replace(str(tmp_path), "/repo") for line in err]
    assert said == ["error: /repo/pyproject.toml:3: unknown policy key 'min-cache-hit-ration' (did you mean "
                    "'min-cache-hit-ratio'?) (hint: see the Policy section of docs/ci.md)"]
    assert said[0] in (ROOT / "docs" / "ci.md").read_text(encoding="utf-8").splitlines()


# -- 9. explain --json on a pi-ai Anthropic route: what the route sent, no DeepSeek "thinking" ------

@needs_corpus
def test_explain_json_of_an_effort_change_on_the_anthropic_route_says_what_it_sent(cli80: Any) -> None:
    code, out, err = cli80("explain", str(C1), "9", "--json")
    [effort] = [f for f in json.loads(out)["fields"] if f["field"] == "reasoningEffort"]
    assert (code, err, effort["changes"]) == (0, [], {"route": "anthropic", "wire": [
        {"path": "thinking", "before": {"type": "enabled", "budget_tokens": 16384, "display": "summarized"},
         "after": {"type": "adaptive", "display": "summarized"}},
        {"path": "output_config.effort", "after": "max"}]})
