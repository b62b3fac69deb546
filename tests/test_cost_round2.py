"""Cost views, round 2 (issue 13; issue 11 item 3, one story in every view): what a break's lost
tokens cost when they were billed as cache writes, usage that lacks a count, a loss of no token
(0, not unknown), ``sessions``' price options, price-file keys the table does not know, and what
``usage --by request`` says of each request.

The rule for lost tokens (docs/cache-accounting.md, "What lost tokens cost"): a provider bills a
prompt as its cache read, then its cache write up to the last breakpoint, then the uncached rest as
input (spec ``provider-cache-rules.md`` §2), so a request's lost tokens were billed first as its
cache writes, up to the writes it logged, and the rest as misses, each at its rate minus the
cache-read rate.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from _cli import invoke
from dsh_audit.cache import Quote, Rates, usd_total
from dsh_audit.cache._ledger import lost_costs, lost_split
from dsh_audit.testing import LogBuilder

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
C1 = CORPUS / "live-pi" / "c1-anthropic-tools"
needs_c1 = pytest.mark.skipif(not C1.is_dir(), reason="../shared/corpus/live-pi is absent")
T0 = 1_800_000_000_000  # 2027-01-15 08:00 UTC: DeepSeek's peak window

#: c1's request 9 (switch to claude-sonnet-4-6): 8927 tokens lost, logged as 10 misses and 8917
#: writes, so 8917 lost tokens were writes and 10 misses. Per million tokens: miss $3, read $0.30,
#: 5-minute write $3.75, 1-hour write $6.
C1_LOST_5M = usd_total([8917 * 3.45 / 1e6, 10 * 2.7 / 1e6])  # 0.03079065
C1_LOST_1H = usd_total([8917 * 5.7 / 1e6, 10 * 2.7 / 1e6])  # 0.0508539
C1_LOST_AS_MISSES = 0.0241029  # 8927 x ($3 - $0.30): what the views said before the rule


def _json(out: str) -> Any:
    return json.loads(out)


def _csv(out: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(out)))


def _sonnet() -> Quote:
    rates = Rates(3.0, 0.3, 15.0, cache_write_5m=3.75, cache_write_1h=6.0)
    return Quote("anthropic", "claude-sonnet-4-6", "claude-sonnet-4-6", "standard", rates, rates, 1_000_000,
                 "example", "2026-12-06")


# -- 1. lost tokens billed as cache writes -------------------------------------------------------------


def test_lost_tokens_are_billed_as_writes_first_then_as_misses() -> None:
    assert [lost_split(*pair) for pair in ((8927, 8917), (8927, 0), (100, 250), (0, 50))] == [
        (8917, 10), (0, 8927), (100, 0), (0, 0)]
    quote = _sonnet()
    assert (C1_LOST_5M, C1_LOST_1H) == (0.03079065, 0.0508539)
    lost = {"header_change": 8927}
    assert lost_costs(lost, quote) == (C1_LOST_AS_MISSES, {"header_change": C1_LOST_AS_MISSES})  # no write: misses
    assert lost_costs(lost, quote, written=8917) == (C1_LOST_5M, {"header_change": C1_LOST_5M})
    assert lost_costs(lost, quote, written=8917, retention="1h") == (C1_LOST_1H, {"header_change": C1_LOST_1H})
    assert lost_costs(lost, quote, written=8917, retention="24h") == (C1_LOST_5M, {"header_change": C1_LOST_5M})
    # no 24h write rate: 5m


def _c1_routes(tmp_path: Path) -> Path:
    """c1's route file with ``cacheRetention: long`` (1-hour cache writes)."""
    text = (C1 / "inputs" / "pi-ai-routes.patch.yml").read_text()
    anchor = "      anthropic:\n"
    path = tmp_path / "long.yml"
    path.write_text(text.replace(anchor, anchor + "        cacheRetention: long\n"))
    return path


@needs_c1
@pytest.mark.parametrize("retention", ["5m", "1h"])
def test_c1_model_switch_break_costs_its_writes_in_every_view(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str],
                                                              retention: str) -> None:
    log = str(next((C1 / "session-logs").glob("*.jsonl")))
    routes = ["--routes", str(_c1_routes(tmp_path))] if retention == "1h" else []
    expected = C1_LOST_1H if retention == "1h" else C1_LOST_5M
    code, out, _ = invoke(monkeypatch, capsys, "usage", log, "--by", "request", "--json", *routes)
    row = _json(out)["rows"][9]
    assert code == 0 and (row["key"].endswith(" #9"), row["model"], row["tokens"]["cache_miss"],
                          row["tokens"]["cache_write"], row["lost_tokens"], row["lost_cost_usd"],
                          row["break_cost_usd"]) == (True, "claude-sonnet-4-6", 10, 8917, 8927, expected, expected)
    assert (row["cache_retention"], row["cache_write_rate"]) == (
        ("1h", "cache_write_1h") if retention == "1h" else (None, None))
    code, out, _ = invoke(monkeypatch, capsys, "cache", log, "--json", *routes)
    report = _json(out)
    # the ledger (usage, cache's cost object, stats, check) and the cache verdict (cache, report) agree
    assert (report["cost"]["break_cost_usd"], report["cost"]["lost_cost_usd_by_cause"]) == (
        expected, {"header_change": expected})
    assert (report["timeline"][9]["lost_cost_usd"], report["lost_cost_usd"]) == (expected, expected)
    code, out, _ = invoke(monkeypatch, capsys, "cache", log, *routes)
    assert f"cost lost ${expected:.4f}" in out and f"breaks cost ${expected:.4f}" in out


# -- 2. DeepSeek usage without cacheReadTokens; 11. malformed usage -----------------------------------


def _usage_log(folder: Path, provider: str, model: str, usages: list[dict[str, Any]]) -> Path:
    b = LogBuilder(session_id=f"usage-{provider}", created_at=T0, provider=provider, model=model, system="S" * 4000)
    for n, usage in enumerate(usages):
        with b.turn(f"turn {n}"), b.step():
            b.assistant(f"reply {n}", usage=usage)
    return b.write_jsonl(folder / provider / "session.jsonl", packed=False)


NO_READ = "cache reads not logged (deepseek-official logs cacheReadTokens only when the API reported them: " \
          "the prompt's split into hits and misses is unknown)"


def test_a_native_deepseek_usage_without_cache_reads_is_unpriced_never_all_misses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    usages = [{"inputTokens": 2000, "outputTokens": 10, "cacheReadTokens": 0},
              {"inputTokens": 2050, "outputTokens": 12}]  # DSH's mapUsage: inputTokens is the whole prompt
    log = _usage_log(tmp_path, "deepseek-official", "deepseek-v4-flash", usages)
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(log), "--by", "request", "--json")
    rows = _json(out)["rows"]
    assert code == 0
    # request 0: 2000 misses at $0.30, 10 outputs at $1.20 per million (flash, peak)
    assert [(r["cost_usd"] and r["cost_usd"]["total"], r["unpriced_requests"], r["usage_unlogged"],
             r["tokens"]["cache_miss"], r["tokens"]["cache_read"], r["tokens"]["output"]) for r in rows] == [
        (0.000612, 0, [], 2000, 0, 10), (None, 1, ["inputTokens", "cacheReadTokens"], 0, 0, 12)]
    table = _json(out)
    assert (table["totals"]["cost_usd"]["total"], table["totals"]["cost_complete"], table["unpriced"]) == (
        0.000612, False, {NO_READ: 1})
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--by", "request")
    assert "≥$0.0006" in out and "$0.0012" not in out  # a lower bound, never 4050 misses as exact
    assert err == [f"warning: 1 request(s) unpriced: {NO_READ}"]
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(log), "--json")
    report = _json(out)
    assert ([v["actual_cache_read"] for v in report["timeline"]], report["cost"]["unpriced_requests"]) == ([0, None], 1)


def test_a_pi_ai_usage_without_cache_reads_read_zero_and_is_priced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = _usage_log(tmp_path, "anthropic", "claude-sonnet-4-5", [{"inputTokens": 2000, "outputTokens": 10}])
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--json")
    total = _json(out)["totals"]
    # 2000 x $3 + 10 x $15 per million
    assert (code, err, total["cost_usd"]["total"], total["cost_complete"]) == (0, [], 0.00615, True)


def test_malformed_usage_counts_alike_in_usage_and_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    usages = [{"inputTokens": 2000, "outputTokens": 10, "cacheReadTokens": 0},
              {"inputTokens": 100, "cacheReadTokens": 1920},  # no outputTokens
              {"inputTokens": -178, "outputTokens": 10, "cacheReadTokens": 1920},  # a negative count is none
              {"inputTokens": "306", "outputTokens": 10, "cacheReadTokens": 1920}]  # a string is none
    log = _usage_log(tmp_path, "deepseek-official", "deepseek-v4-flash", usages)
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--by", "request", "--json")
    table = _json(out)
    assert code == 0 and [(r["tokens"]["cache_miss"], r["tokens"]["cache_read"], r["tokens"]["output"],
                           r["usage_unlogged"], r["unpriced_requests"]) for r in table["rows"]] == [
        (2000, 0, 10, [], 0), (100, 1920, 0, ["outputTokens"], 1), (0, 1920, 10, ["inputTokens"], 1),
        (0, 1920, 10, ["inputTokens"], 1)]
    assert (table["totals"]["usage_unknown_requests"], table["totals"]["tokens"]["cache_read"]) == (0, 5760)
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log))
    assert err == ["warning: 2 request(s) unpriced: usage without a valid inputTokens",  # by reason
                   "warning: 1 request(s) unpriced: usage without a valid outputTokens"]
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(log), "--json")
    report = _json(out)
    # cache's reads and prompt total count the same requests, those whose prompt is known (a negative
    # or wrong-typed inputTokens is no count: never -178 in a prompt); the reads of the others are
    # counted apart, and with them make usage's
    assert (report["actual_cache_read"], report["prompt_tokens"], report["usage_known_without_prompt"],
            report["cache_read_without_prompt"]) == (1920, 2000 + 100 + 1920, 2, 3840)


# -- 4. a loss of no token is 0 ------------------------------------------------------------------------


def test_no_lost_token_is_zero_in_json_whatever_was_priced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    usages = [{"inputTokens": 2000, "outputTokens": 10, "cacheReadTokens": 0},
              {"inputTokens": 100, "outputTokens": 10, "cacheReadTokens": 1920}]
    log = _usage_log(tmp_path, "local-openai", "local-coder", usages)  # no price for local-coder
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(log), "--json")
    report = _json(out)
    assert (report["lost_cost_usd"], report["cost"]["break_cost_usd"], report["cost"]["cost_usd"],
            report["cost"]["unpriced_requests"]) == (0.0, 0.0, None, 2)
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(log))
    assert "cost lost $0.0000" in out and "breaks cost $0.0000" in out and "session cost $?" in out
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(log), "--json")
    total = _json(out)["totals"]
    assert (total["lost_cost_usd"], total["break_cost_usd"], total["cost_usd"]) == (0.0, 0.0, None)


# -- 3. the HTML report's break cost ---------------------------------------------------------------------


def _break_with_unpriced_title(folder: Path) -> Path:
    """A priced flash session with one header-change break (1920 tokens lost) and a title call
    that logged no usage (so one request is unpriced, but no break)."""
    b = LogBuilder(session_id="html-break", created_at=T0, model="deepseek-v4-flash", system="S" * 8000)
    for text, miss, read in (("one", 2000, 0), ("two", 100, 1920)):
        with b.turn(text), b.step():
            b.assistant(text, usage={"inputTokens": miss, "outputTokens": 10, "cacheReadTokens": read})
    b.title("A title")
    b.configure(system="T" * 8000)
    with b.turn("three"), b.step():
        b.assistant("three", usage={"inputTokens": 2100, "outputTokens": 10, "cacheReadTokens": 0})
    return b.write_jsonl(folder / "session.jsonl", packed=False)


def _no_break(folder: Path) -> Path:
    b = LogBuilder(session_id="html-calm", created_at=T0, model="deepseek-v4-flash", system="S" * 8000)
    for text, miss, read in (("one", 2000, 0), ("two", 100, 1920)):
        with b.turn(text), b.step():
            b.assistant(text, usage={"inputTokens": miss, "outputTokens": 10, "cacheReadTokens": read})
    return b.write_jsonl(folder / "session.jsonl", packed=False)


def _page_data(page: Path) -> dict[str, Any]:
    blob = re.search(r'<script type="application/json" id="dsh-data">(.*?)</script>', page.read_text(), re.S)
    assert blob is not None
    return dict(json.loads(blob.group(1)))


def _overview(browser: Any) -> dict[str, str]:
    from selenium.webdriver.common.by import By

    return {row.get_attribute("data-key"): row.find_element(By.TAG_NAME, "td").text
            for row in browser.find_elements(By.CSS_SELECTOR, "#overview tr[data-key]")
            if row.get_attribute("data-key") in ("cost", "break-cost", "no-cache")}


def test_report_break_cost_is_exact_when_only_a_request_without_a_break_is_unpriced(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], browser: Any) -> None:
    log, page = _break_with_unpriced_title(tmp_path / "b"), tmp_path / "b.html"
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(log), "--json")
    cost = _json(out)["cost"]
    # 1920 lost x ($0.30 - $0.006) per million
    assert (cost["break_cost_usd"], cost["break_unpriced"], cost["unpriced_requests"]) == (0.00056448, 0, 1)
    assert invoke(monkeypatch, capsys, "report", str(log), "-o", str(page))[0] in (0, 1)
    assert _page_data(page)["sessions"][0]["overview"]["cost"]["break_cost_usd"] == 0.00056448
    browser.get(page.as_uri())
    shown = _overview(browser)
    assert shown["break-cost"] == "$0.0006" and shown["cost"].startswith("≥$")  # the cost is a bound, the break's not


def test_report_break_cost_of_a_session_without_a_break_is_zero(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], browser: Any) -> None:
    log, page = _no_break(tmp_path / "c"), tmp_path / "c.html"
    assert invoke(monkeypatch, capsys, "report", str(log), "-o", str(page))[0] in (0, 1)
    browser.get(page.as_uri())
    # 2100 x $0.30 + 1920 x $0.006 + 20 x $1.20 per million; no cache: 4020 x $0.30 + 20 x $1.20
    assert _overview(browser) == {"cost": "$0.0007", "break-cost": "$0.0000", "no-cache": "$0.0012"}


# -- 5. sessions: --prices, --routes, one error, copies by path ----------------------------------------


def _demo_home(tmp_path: Path) -> Path:
    log = _no_break(tmp_path / "sessions" / "--p--" / "html-calm")
    return log


def test_sessions_takes_the_price_options_and_fails_as_usage_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = _demo_home(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(log), "--json")
    assert (code, err, _json(out)["cost_usd"]["total"]) == (0, [], 0.00066552)  # as above
    prices = tmp_path / "contract.json"
    prices.write_text(json.dumps({"providers": {"deepseek": {"models": {"deepseek-v4-flash": [
        {"from": "2026-01-01", "cache_miss": 1.0, "cache_read": 0.1, "output": 2.0}]}}}}))
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(log), "--json", "--prices", str(prices))
    # 2100 x $1 + 1920 x $0.10 + 20 x $2 per million (the file's rates have no peak window)
    assert (code, err, _json(out)["cost_usd"]["total"]) == (0, [], 0.002332)
    bad = tmp_path / "bad.json"
    bad.write_text('{"providers": {"deepseek": {"models": {"deepseek-v4-flash": [{"cache_miss": "cheap", '
                   '"cache_read": 0.1, "output": 2.0}]}}}}')
    for command in ("sessions", "usage", "cache"):
        code, out, err = invoke(monkeypatch, capsys, command, str(log), "--prices", str(bad))
        assert (code, out, err) == (2, "", [
            f"error: {bad}: price table key providers.deepseek.models.deepseek-v4-flash[0].cache_miss: \"cheap\" "
            "is not a rate (a number >= 0) (hint: fix this key in the --prices file; "
            "the Price files section of docs/cache-accounting.md gives the shape)"]), command
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(log), "--routes", str(tmp_path / "none.yml"))
    assert code == 2 and out == "" and len(err) == 1 and str(tmp_path / "none.yml") in err[0]
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.dsh-audit.prices.providers.deepseek.models]\n'
                                            'deepseek-v4-flash = [{from = "2026-01-01", cache_miss = "cheap", '
                                            'cache_read = 0.1, output = 4.0}]\n')
    monkeypatch.chdir(project)
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(log))
    assert (code, out, len(err), err[0].startswith(f"error: {project / 'pyproject.toml'} [tool.dsh-audit.prices]: "
                                                   "price table key")) == (2, "", 1, True)


def test_sessions_shows_the_path_of_each_copy_of_one_session(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    first = _no_break(tmp_path / "a")
    second = _break_with_unpriced_title(tmp_path / "b")
    text = second.read_text().replace("html-break", "html-calm")  # the same id, other lines
    second.write_text(text)
    monkeypatch.setenv("COLUMNS", "400")
    code, out, _ = invoke(monkeypatch, capsys, "sessions", str(tmp_path), "--format", "csv")
    ids = [row[-1] for row in _csv(out)[1:]]
    assert code == 0 and sorted(ids) == sorted([f"html-calm ({first})", f"html-calm ({second})"])


# -- 6, 10. price files ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("rate", "problem"), [
    ({"cache_wirte_5m": 3}, "providers.openai.models.local-coder[0].cache_wirte_5m: unknown key "
                            "(did you mean 'cache_write_5m'?); known: billed_as, cache_miss, cache_read, "
                            "cache_write_1h, cache_write_5m, corroborated, from, off_peak, output, retrieved, "
                            "source, tiers, verified"),
    ({"billed_as": "gpt-5.4"}, "providers.openai.models.local-coder[0].cache_miss: beside billed_as: an alias is "
                               "billed at its model's rates (remove it, or the billed_as)"),
])
def test_a_price_file_key_the_table_does_not_know_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str], rate: dict[str, Any],
                                                             problem: str) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps({"providers": {"openai": {"models": {"local-coder": [
        {"from": "2026-01-01", "cache_miss": 1, "cache_read": 0.1, "output": 4.0, **rate}]}}}}))
    log = _no_break(tmp_path / "s")
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--prices", str(path))
    assert (code, out, err) == (2, "", [f"error: {path}: price table key {problem} (hint: fix this key in "
                                        "the --prices file; "
                                        "the Price files section of docs/cache-accounting.md gives the shape)"])


@pytest.mark.parametrize("suffix", ["json", "toml"])
def test_a_rate_past_the_double_range_is_said_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str], suffix: str) -> None:
    path = tmp_path / f"prices.{suffix}"
    path.write_text('{"providers": {"openai": {"models": {"m": [{"from": "2026-01-01", "cache_miss": 1e400, '
                    '"cache_read": 0.1, "output": 4.0}]}}}}' if suffix == "json" else
                    '[providers.openai.models]\nm = [{from = "2026-01-01", cache_miss = 1e400, cache_read = 0.1, '
                    'output = 4.0}]\n')
    code, _, err = invoke(monkeypatch, capsys, "usage", str(_no_break(tmp_path / "s")), "--prices", str(path))
    assert (code, err) == (2, [f"error: {path}: price table key providers.openai.models.m[0].cache_miss: 1e400 is "
                               "above 1e+09, not a price (hint: fix this key in the --prices file; "
                               "the Price files section of docs/cache-accounting.md gives the shape)"])


# -- 7, 8, 9. what usage and cache say -------------------------------------------------------------------


def test_usage_help_says_lost_tokens_are_billed_as_writes_first(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--help")
    text = " ".join(out.split())
    assert code == 0 and "the part of them" not in text
    assert ("a provider that writes the cache bills a lost prefix as the request's cache writes (Anthropic: up to "
            "the writes it logged, at the write rate of its TTL, 5-minute or 1-hour; any rest as cache misses), one "
            "that bills no writes as cache misses (DeepSeek)") in text
    assert '"standard": the provider bills one rate all day' in text


def test_usage_by_request_says_what_each_request_was_priced_by(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    log = _no_break(tmp_path / "s")
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(log), "--by", "request", "--json")
    row = _json(out)["rows"][0]
    source = row["rate_source"]
    assert code == 0 and {k: row[k] for k in ("sent_at", "provider", "model", "window", "billed_as", "cache_retention",
                                              "cache_write_rate", "usage_unlogged")} == {
        "sent_at": "2027-01-15T08:00:00Z", "provider": "deepseek-official", "model": "deepseek-v4-flash",
        "window": "peak", "billed_as": "deepseek-flash", "cache_retention": None, "cache_write_rate": None,
        "usage_unlogged": []}
    assert isinstance(source, str) and source
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(log), "--by", "request", "--format", "csv")
    rows = _csv(out)
    assert rows[0][-7:] == ["model", "window", "sent", "billed as", "rate source", "cache retention", "write rate"]
    assert rows[1][-7:] == ["deepseek-v4-flash", "peak", "2027-01-15T08:00:00Z", "deepseek-flash", source, "", ""]
    assert rows[-1][-7:] == [""] * 7  # the total row
    monkeypatch.setenv("COLUMNS", "300")
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(log), "--by", "request")
    header = [cell.strip() for cell in out.splitlines()[2].split("┃")[1:-1]]
    assert header[-4:] == ["model", "window", "sent", "billed as"]


def test_cache_says_where_the_rates_came_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    log = _no_break(tmp_path / "s")
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(log))
    assert code == 0 and "(list prices, check your contract)" in out
    prices = tmp_path / "contract.json"
    prices.write_text(json.dumps({"providers": {"openai": {"models": {"m": {"cache_miss": 1.0, "cache_read": 0.1,
                                                                           "output": 2.0}}}}}))
    monkeypatch.setenv("COLUMNS", "400")
    code, out, _ = invoke(monkeypatch, capsys, "cache", str(log), "--prices", str(prices))
    assert code == 0 and f"(rates from {prices} over the packaged list prices)" in out
    assert "check your contract" not in out
