"""The priced ledger (``dsh_audit.cache`` prices, ledger, usage) and ``dsh-audit usage``."""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from dsh_audit.cache import (
    OFF_PEAK,
    PEAK,
    Costs,
    Quote,
    SessionLedger,
    Tokens,
    UsageRow,
    cache_report,
    given_capture,
    given_usage,
    load_prices,
    session_ledger,
    usage_table,
    usage_tables,
    usd_total,
)
from dsh_audit.cli import cli
from dsh_audit.log import discover
from dsh_audit.session import open_session, request_provider
from dsh_audit.testing import LogBuilder

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def _run(*args: str) -> tuple[int, str, str]:
    """Invoke the CLI: (exit code as the console entry returns it, stdout, stderr)."""
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, standalone_mode=False)
    return result.return_value, result.stdout, result.stderr


def _ms(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp() * 1000)


def _usage(miss: int, read: int, output: int, reasoning: int = 0) -> dict[str, int]:
    return {"inputTokens": miss, "outputTokens": output, "cacheReadTokens": read, "reasoningTokens": reasoning}


def _switching_log(tmp_path: Path) -> Path:
    """Wednesday 2026-12-02: flash off-peak at 00:59:59 UTC, flash at peak 01:00 UTC, then pro."""
    b = LogBuilder(session_id="session-cost", created_at=_ms("2026-12-02T00:59:59.900"),
                   provider="deepseek-official", model="deepseek-v4-flash")
    with b.turn("first"):
        with b.step():
            b.assistant("one", usage=_usage(8000, 0, 100, 40))
    b.clock.now = _ms("2026-12-02T01:00:00")
    with b.turn("second"):
        with b.step():
            b.assistant("two", usage=_usage(200, 7936, 50))
    b.configure(model="deepseek-v4-pro")
    with b.turn("third"):
        with b.step():
            b.assistant("three", usage=_usage(8300, 0, 20))
    return b.write_jsonl(tmp_path / "session.jsonl")


# --- the price table ---------------------------------------------------------------------------


def test_packaged_table_cites_every_rate_and_window() -> None:
    book = load_prices(search_from="/")
    assert set(book.providers) == {"deepseek", "anthropic", "openai"}
    for provider in book.providers.values():
        assert all(w.hours for w in provider.windows)
        for periods in provider.models.values():
            assert all(p.source.startswith("https://") and p.retrieved for p in periods)


def test_quote_by_model_date_window_and_alias() -> None:
    book = load_prices(search_from="/")
    peak = book.quote("deepseek-official", "deepseek-v4-pro", _ms("2026-12-02T01:00:00") / 1000)
    assert isinstance(peak, Quote) and (peak.window, peak.rates.cache_miss, peak.off_peak.cache_miss) == (PEAK, 1.32, 0.66)
    saturday = book.quote("deepseek-official", "deepseek-v4-pro", _ms("2026-12-05T02:00:00") / 1000)
    assert isinstance(saturday, Quote) and (saturday.window, saturday.rates.output) == (OFF_PEAK, 1.98)
    holiday = book.quote("deepseek", "deepseek-v4-pro", _ms("2026-10-01T02:00:00") / 1000)
    assert isinstance(holiday, Quote) and holiday.window == OFF_PEAK
    legacy = book.quote("deepseek", "deepseek-v4-flash", _ms("2026-12-02T12:00:00") / 1000)
    assert isinstance(legacy, Quote) and (legacy.billed_as, legacy.rates.cache_read) == ("deepseek-flash", 0.003)
    before = book.quote("deepseek", "deepseek-v4-flash", _ms("2026-08-01T02:00:00") / 1000)
    assert isinstance(before, Quote) and (before.window, before.rates.cache_miss) == ("standard", 0.14)
    alias = book.quote("deepseek", "deepseek-chat", _ms("2026-06-01T00:00:00") / 1000)
    assert isinstance(alias, Quote) and alias.billed_as == "deepseek-v4-flash"
    dated = book.quote("anthropic", "claude-sonnet-4-5-20250929", 1.8e9)
    assert isinstance(dated, Quote) and (dated.billed_as, dated.rates.cache_write) == ("claude-sonnet-4-5", 3.75)
    assert book.quote("local-openai", "local-coder", 1.8e9) == "no price for model 'local-coder'"
    assert book.quote("deepseek", "deepseek-v4-pro", None) == "no timestamp to date the rate"


# --- the ledger --------------------------------------------------------------------------------


def test_session_switching_model_and_crossing_the_peak_boundary(tmp_path: Path) -> None:
    ledger = session_ledger(_switching_log(tmp_path), prices=load_prices(search_from="/"))
    first, second, third = (e for e in ledger.entries if e.kind == "loop")
    assert [(e.model, e.billed_as, e.window) for e in (first, second, third)] == [
        ("deepseek-v4-flash", "deepseek-flash", OFF_PEAK), ("deepseek-v4-flash", "deepseek-flash", PEAK),
        ("deepseek-v4-pro", "deepseek-v4-pro", PEAK)]
    assert first.tokens == Tokens(8000, 0, 0, 100, 40)
    assert first.cost == Costs(8000 * 0.15 / 1e6, 0.0, 0.0, 100 * 0.6 / 1e6)
    assert second.cost == Costs(200 * 0.3 / 1e6, 7936 * 0.006 / 1e6, 0.0, 50 * 1.2 / 1e6)
    assert second.no_cache_cost == pytest.approx(8136 * 0.3 / 1e6 + 50 * 1.2 / 1e6, rel=1e-12)
    assert second.off_peak_cost == pytest.approx(200 * 0.15 / 1e6 + 7936 * 0.003 / 1e6 + 50 * 0.6 / 1e6, rel=1e-12)
    assert third.cost == Costs(8300 * 1.32 / 1e6, 0.0, 0.0, 20 * 3.96 / 1e6)
    assert ledger.tokens == Tokens(16500, 7936, 0, 170, 40)
    assert ledger.cost.total == pytest.approx(sum(e.cost.total for e in (first, second, third)), rel=1e-12)


def test_break_cost_is_its_lost_tokens_at_its_requests_rate(tmp_path: Path) -> None:
    path = _switching_log(tmp_path)
    book = load_prices(search_from="/")
    report = cache_report(path, prices=book, tokenizer="estimate")
    ledger = session_ledger(path, prices=book, cache=report)
    for entry, verdict in zip(ledger.entries, report.verdicts):
        quote = book.quote(entry.provider, entry.model, entry.sent)
        assert entry.lost == verdict.lost
        if entry.lost and isinstance(quote, Quote):
            rate = quote.rates.cache_miss - quote.rates.cache_read
            assert verdict.lost_cost == _nano(sum(entry.lost.values()), rate) == usd_total(entry.lost_cost.values())
    assert report.cost == ledger.summary()


def _nano(tokens: int, rate: float) -> float:
    """Tokens x a rate per million, in decimal, rounded to the nano-dollar (the ledger's one representation)."""
    return float(round(Decimal(tokens) * Decimal(str(rate)) / 1_000_000, 9))


def _corpus_logs() -> list[Path]:
    if not CORPUS.is_dir():
        pytest.skip("corpus absent")
    return discover([CORPUS])


def test_corpus_ledger_tokens_equal_logged_usage_and_costs_are_tokens_times_rate() -> None:
    book = load_prices(search_from="/")
    priced = 0
    for path in _corpus_logs():
        try:
            session = open_session(path, lenient=True)
        except Exception:  # noqa: BLE001 - refused logs are other tests' business
            continue
        ledger = session_ledger(session, prices=book)
        logged = Tokens()
        for request, entry in zip(session.requests, ledger.entries):
            usage = request.usage if request.usage is not None else request.message_usage
            if not isinstance(usage, dict) or "inputTokens" not in usage:
                assert entry.tokens is None and entry.cost is None
                continue
            if "cacheReadTokens" not in usage and request_provider(request) == "deepseek-official":
                # DSH's native DeepSeek adapter logs the bucket only when the API reported it, and its
                # inputTokens is then the whole prompt: hits and misses unknown, the request unpriced
                # (docs/cache-accounting.md, "Unpriced requests": one rule with cache's logged_cache_read)
                expected = Tokens(0, 0, usage.get("cacheWriteTokens", 0), usage["outputTokens"],
                                  usage.get("reasoningTokens", 0))
                assert (entry.tokens, entry.cost, entry.unlogged) == (
                    expected, None, ("inputTokens", "cacheReadTokens")), (path, request.index)
                assert entry.unpriced is not None and (entry.billed_as is None or entry.unpriced.startswith(
                    "cache reads not logged")), (path, request.index)  # an unknown model says so first
                logged += expected
                continue
            expected = Tokens(usage["inputTokens"], usage.get("cacheReadTokens", 0), usage.get("cacheWriteTokens", 0),
                              usage["outputTokens"], usage.get("reasoningTokens", 0))
            assert entry.tokens == expected, (path, request.index)
            logged += expected
            quote = book.quote(entry.provider, entry.model, entry.sent)
            if isinstance(quote, Quote):
                r = quote.rates
                assert entry.cost == Costs(_nano(expected.cache_miss, r.cache_miss), _nano(expected.cache_read, r.cache_read),
                                           _nano(expected.cache_write, r.cache_write), _nano(expected.output, r.output))
                priced += 1
            else:
                assert entry.cost is None and entry.unpriced == quote
        assert ledger.tokens == logged
    assert priced > 100


def test_usage_by_day_json_totals_are_the_sum_of_the_session_ledgers() -> None:
    root = CORPUS / "live"
    if not root.is_dir():
        pytest.skip("corpus absent")
    code, out, err = _run("usage", str(root), "--by", "day", "--json", "--no-breaks")
    assert code == 0, err
    table = orjson.loads(out)
    book = load_prices()
    # each log's requests whose log holds no usage are priced from the wire.jsonl found beside it,
    # as the same file given with --capture prices them
    ledgers = [session_ledger(s, prices=book, captured=given_usage([s], given_capture([s], None)).get(s.id))
               for s in map(open_session, discover([root]))]
    assert sum(e.usage_source == "capture" for s in ledgers for e in s.entries) == 9
    cost = sum(s.cost.total for s in ledgers)
    tokens = sum((s.tokens for s in ledgers), Tokens())
    assert table["totals"]["tokens"] == tokens.to_json()
    assert table["totals"]["cost_usd"]["total"] == pytest.approx(cost, rel=1e-9)
    assert sum(r["cost_usd"]["total"] for r in table["rows"]) == pytest.approx(cost, rel=1e-9)
    assert table["totals"]["requests"] == sum(len(s.entries) for s in ledgers)
    by_model = usage_table(ledgers, by="model")
    assert by_model.total.tokens == tokens and by_model.total.cost.total == pytest.approx(cost, rel=1e-12)
    # one pass sums each request once and its rows and total take the sums: the same JSON, to the
    # byte, as a table of each grouping alone and as every request added one by one
    alone = [usage_table(ledgers, by=by).to_json() for by in ("model", "day", "request")]
    assert [t.to_json() for t in usage_tables(ledgers, by=("model", "day", "request"))] == alone
    one_by_one = UsageRow("total")
    for entry in (e for s in ledgers for e in s.entries):
        one_by_one.add(entry)
    assert by_model.total.to_json() == one_by_one.to_json() and by_model.total.totals.summary() == \
        one_by_one.totals.summary() and by_model.total.totals.causes() == one_by_one.totals.causes()
    assert alone[0]["totals"]["requests"] == 66 and len(alone[2]["rows"]) == 66


def test_a_fault_while_summing_lazy_totals_is_not_taken_for_a_missing_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """An AttributeError inside the sums would otherwise read "no attribute 'tokens'" (Python retries
    ``__getattr__`` with the property's name): it leaves as a RuntimeError naming the log and the fault."""
    from dsh_audit.cache import _ledger

    def broken(entries: object) -> None:
        raise AttributeError("'LedgerEntry' object has no attribute 'window'")

    monkeypatch.setattr(_ledger.LedgerTotals, "of", staticmethod(broken))
    ledger = SessionLedger(path="a.jsonl", session_id="s", entries=())
    for name in ("totals", "tokens", "cost"):
        with pytest.raises(RuntimeError) as caught:
            getattr(ledger, name)
        assert str(caught.value) == "summing the totals of a.jsonl failed: 'LedgerEntry' object has no attribute 'window'"
        assert isinstance(caught.value.__cause__, AttributeError)
    with pytest.raises(AttributeError, match="^'SessionLedger' object has no attribute 'tokenz'$"):
        getattr(ledger, "tokenz")


def test_usage_since_until_on_the_logs_own_clock(tmp_path: Path) -> None:
    ledger = session_ledger(_switching_log(tmp_path), prices=load_prices(search_from="/"))
    path = str(tmp_path / "session.jsonl")
    table = orjson.loads(_run("usage", path, "--by", "window", "--json", "--no-breaks", "--since",
                              "2026-12-02T01:00:00Z")[1])
    assert [r["key"] for r in table["rows"]] == [PEAK] and table["totals"]["requests"] == 2
    none = usage_table([ledger], by="day", until=_ms("2026-12-02T00:00:00") / 1000)
    assert none.total.requests == 0
    whole = _run("usage", path, "--json", "--no-breaks", "--until", "2026-12-02")[1]
    assert orjson.loads(whole)["totals"]["requests"] == len(ledger.entries)
    import click  # --since is read by the option every command shares; the entry point exits 2 on it

    with pytest.raises(click.BadParameter, match="cannot read --since 'tomorrow'"):  # today, yesterday: read
        _run("usage", path, "--since", "tomorrow")


def test_usage_table_output_names_totals(tmp_path: Path) -> None:
    code, out, _ = _run("usage", str(_switching_log(tmp_path)), "--by", "model")
    assert code == 0 and "deepseek-v4-pro" in out and "total" in out


# --- bad price files ---------------------------------------------------------------------------


@pytest.mark.parametrize(("body", "key"), [
    ({"providers": {"deepseek": {"models": {"m": {"cache_miss": "cheap", "cache_read": 0, "output": 1}}}}},
     "providers.deepseek.models.m.cache_miss"),
    ({"providers": {"deepseek": {"models": {"m": {"cache_miss": 1, "cache_read": 0}}}}},
     "providers.deepseek.models.m.output"),
    ({"providers": {"deepseek": {"models": {"m": {"billed_as": "nope"}}}}},
     "providers.deepseek.models.m.billed_as"),
    ({"providers": {"deepseek": {"windows": [{"peak_hours": ["9-12"]}]}}},
     "providers.deepseek.windows[0].peak_hours[0]"),
    ({"providers": {"deepseek": {"windows": [{"from": "someday", "peak_hours": []}]}}},
     "providers.deepseek.windows[0].from"),
])
@pytest.mark.parametrize("command", ["usage", "cache"])
def test_bad_price_file_is_one_line_naming_file_and_key(tmp_path: Path, body: dict[str, Any], key: str,
                                                        command: str) -> None:
    prices = tmp_path / "prices.json"
    prices.write_bytes(orjson.dumps(body))
    log = _switching_log(tmp_path)
    code, _, err = _run(command, str(log), "--prices", str(prices))
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and str(prices) in lines[0] and key in lines[0], err


def test_pyproject_table_and_prices_file_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.dsh-audit.prices.providers.deepseek.models.deepseek-v4-pro]\n'
        'cache_miss = 1.0\ncache_read = 0.1\noutput = 2.0\nsource = "our contract"\n')
    log = _switching_log(tmp_path)
    book = load_prices(search_from=tmp_path)
    third = session_ledger(log, prices=book).entries[-1]
    assert third.cost == Costs(8300 * 1.0 / 1e6, 0.0, 0.0, 20 * 2.0 / 1e6) and third.rate_source == "our contract"
    override = tmp_path / "gateway.toml"
    override.write_text('[providers.deepseek.models.deepseek-v4-pro]\ncache_miss = 3.0\ncache_read = 0.3\n'
                        'output = 6.0\n')
    assert session_ledger(log, prices=load_prices(override, search_from=tmp_path)).entries[-1].cost == Costs(
        8300 * 3.0 / 1e6, 0.0, 0.0, 20 * 6.0 / 1e6)
    monkeypatch.chdir(tmp_path)
    out = _run("usage", str(log), "--json", "--no-breaks")[1]
    assert orjson.loads(out)["prices"]["price_files"][1].endswith("pyproject.toml [tool.dsh-audit.prices]")


def test_unknown_model_is_unpriced_never_free(tmp_path: Path) -> None:
    b = LogBuilder(created_at=_ms("2026-12-02T03:00:00"), provider="local-openai", model="local-coder")
    with b.turn("hi"):
        with b.step():
            b.assistant("hello", usage=_usage(100, 0, 5))
    ledger: SessionLedger = session_ledger(b.write_jsonl(tmp_path / "s.jsonl"), prices=load_prices(search_from="/"))
    entry = ledger.entries[-1]
    assert (entry.cost, entry.unpriced) == (None, "no price for model 'local-coder'")
    assert ledger.unpriced == {"no price for model 'local-coder'": 1} and ledger.tokens.total == 105


def test_packaged_rates_keep_the_ratios_the_spec_states() -> None:
    """provider-cache-rules.md: Anthropic writes 1.25x (5 m) / 2x (1 h) and reads 0.1x base (section 2);
    OpenAI reads 0.1x (sections 3-4); DeepSeek hit:miss between about 1:5 and 1:120 (section 4)."""
    book = load_prices(search_from="/")
    raw = orjson.loads((Path(__file__).resolve().parents[1] / "dsh_audit" / "cache" / "rules" / "prices.json").read_bytes())
    for name, periods in book.providers["anthropic"].models.items():
        for rates in (p.rates for p in periods if p.rates):
            assert (Decimal(str(rates.cache_write_5m)), Decimal(str(rates.cache_write_1h)), Decimal(str(rates.cache_read))) == (
                Decimal(str(rates.cache_miss)) * Decimal("1.25"), Decimal(str(rates.cache_miss)) * 2,
                Decimal(str(rates.cache_miss)) / 10), name
    for name, periods in raw["providers"]["openai"]["models"].items():
        # every rate (and long-context tier) says whether it is verified and which read ratio it has: the spec's 0.1x
        # (the GPT-5 family; 5.6+ also writes at 1.25x), or pi-ai's other ratio for an older model, or none
        for rate in (r for p in periods if "billed_as" not in p for r in (p, *p.get("tiers", []))):
            miss, read, verified = Decimal(str(rate["cache_miss"])), Decimal(str(rate["cache_read"])), rate["verified"]
            assert verified.startswith(("UNVERIFIED", "OpenAI's own model page")), name  # the Codex models' pages
            if "cache_read = 0.1 x" in verified:
                assert read * 10 == miss, name
                assert ("cache_write_5m" in rate) == ("1.25 x" in verified), name
                assert "cache_write_5m" not in rate or Decimal(str(rate["cache_write_5m"])) == miss * Decimal("1.25"), name
            elif "cacheRead 0" in verified:
                assert read == miss, name
            else:
                assert f"cache_read = {read / miss:g} x cache_miss, not the 0.1 x" in verified, name
    for name, periods in book.providers["deepseek"].models.items():
        for rates in (r for p in periods for r in (p.rates, p.off_peak) if r):
            assert 5 <= rates.cache_miss / rates.cache_read <= 120, name
    assert all(w["verified"].startswith("UNVERIFIED") for w in raw["providers"]["deepseek"]["windows"])


def test_usage_gives_the_base_of_its_lost_tokens(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Review C of session 45, F6: every lost figure beside its base. live c-change: lost 11968 of the 48256
    reusable cache reads of its requests whose reads were logged, as stats sums them; the page's totals by
    model and by day show the rows' figure (lostText); unknown (null) with --no-accounting."""
    from _cli import invoke
    from test_cache import CORPUS

    log = str(CORPUS / "live" / "c-change")
    code, out, _ = invoke(monkeypatch, capsys, "usage", log, "--json")
    assert code == 0
    answer = orjson.loads(out)
    assert [(r["reusable_cache_read"], r["lost_tokens"]) for r in [*answer["rows"], answer["totals"]]] == [
        (48256, 11968), (48256, 11968)]
    code, out, _ = invoke(monkeypatch, capsys, "usage", log, "--json", "--no-accounting")
    assert orjson.loads(out)["totals"]["reusable_cache_read"] is None
