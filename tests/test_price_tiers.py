"""Long-context price tiers (request-wide, by the request's prompt tokens) and aliases of the price table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from dsh_audit.cache import Costs, Quote, cache_report, load_prices, session_ledger
from dsh_audit.cli import cli
from dsh_audit.testing import LogBuilder

SENT = 1796209398000  # 2026-12-02T11:03:18Z, in milliseconds


def _usage(miss: int, read: int, output: int) -> dict[str, int]:
    return {"inputTokens": miss, "outputTokens": output, "cacheReadTokens": read}


def _log(tmp_path: Path, model: str, *usages: dict[str, int], provider: str = "openai") -> Path:
    b = LogBuilder(session_id="tiers", created_at=SENT, provider=provider, model=model, system="S" * 4000)
    for i, usage in enumerate(usages):
        with b.turn(f"turn {i} " + "x" * 4000):
            with b.step():
                b.assistant(f"answer {i}", usage=usage)
        b.clock.now += 5000
    return b.write_jsonl(tmp_path / "session.jsonl")


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, standalone_mode=False)
    return result.return_value, result.stdout, result.stderr


def test_gpt_5_4_switches_the_whole_request_to_the_long_context_tier(tmp_path: Path) -> None:
    # 20,000 + 252,000 = 272,000 prompt tokens: not above the threshold, base rates $2.5 / $0.25 / $15;
    # 1,000 + 271,001 = 272,001: above it, every bucket at $5 / $0.5 / $22.5, cache reads included
    log = _log(tmp_path, "gpt-5.4", _usage(20_000, 252_000, 1_000), _usage(1_000, 271_001, 2_000))
    base, long = session_ledger(log, prices=load_prices(search_from="/")).entries
    assert (base.tier, base.cost) == (None, Costs(0.05, 0.063, 0.0, 0.015))
    assert (base.cost.total, base.no_cache_cost) == (0.128, 0.695)
    assert (long.tier, long.cost) == (272_000, Costs(0.005, 0.1355005, 0.0, 0.045))
    assert (long.cost.total, long.no_cache_cost, long.off_peak_cost) == (0.1855005, 1.405005, 0.1855005)
    assert long.billed_as == "gpt-5.4" and long.rate_source.startswith(
        "https://registry.npmjs.org/@earendil-works/pi-ai/-/pi-ai-0.82.1.tgz")
    assert base.rate_source.startswith("https://docs.rs/crate/adk-model/")
    assert (base.to_json()["tier"], long.to_json()["tier"]) == (None, 272_000)
    code, out, _ = _run("usage", str(log), "--json", "--no-breaks")
    assert code == 0 and orjson.loads(out)["totals"]["cost_usd"] == {
        "cache_miss": 0.055, "cache_read": 0.1985005, "cache_write": 0, "output": 0.06, "total": 0.3135005}


def test_gpt_5_5_tier_and_a_break_lost_at_the_tier_rate(tmp_path: Path) -> None:
    # two 280k-token requests and no cache read: the second one's lost tokens are priced at the
    # tier's miss - read difference ($10 - $1), not the base one ($5 - $0.5)
    log = _log(tmp_path, "gpt-5.5", _usage(280_000, 0, 1_000), _usage(281_000, 0, 2_000))
    book = load_prices(search_from="/")
    report = cache_report(log, prices=book, tokenizer="estimate")
    first, second = session_ledger(log, prices=book, cache=report).entries
    assert (first.tier, first.cost) == (272_000, Costs(2.8, 0.0, 0.0, 0.045))
    assert (second.tier, second.cost) == (272_000, Costs(2.81, 0.0, 0.0, 0.09))
    assert second.lost == {"best_effort_miss": 279_936}
    assert second.lost_cost == {"best_effort_miss": 2.519424}  # 279,936 x $9 / 1M
    assert report.verdicts[1].lost_cost == 2.519424  # what `cache` and the report show: the same tier


def test_quote_tier_is_chosen_by_prompt_tokens() -> None:
    book = load_prices(search_from="/")
    when = SENT / 1000
    at = {n: book.quote("openai", "gpt-5.4", when, prompt_tokens=n) for n in (None, 0, 272_000, 272_001)}
    assert all(isinstance(q, Quote) for q in at.values())
    assert [(q.tier, q.rates.cache_miss, q.rates.cache_read, q.rates.output) for q in at.values() if isinstance(q, Quote)] == [
        (None, 2.5, 0.25, 15.0), (None, 2.5, 0.25, 15.0), (None, 2.5, 0.25, 15.0), (272_000, 5.0, 0.5, 22.5)]
    mini = book.quote("openai", "gpt-5.4-mini", when, prompt_tokens=900_000)  # no tiers: base at any size
    assert isinstance(mini, Quote) and (mini.tier, mini.rates.cache_miss) == (None, 0.75)


def test_price_file_declares_tiers_the_highest_one_below_the_prompt_applies(tmp_path: Path) -> None:
    prices = tmp_path / "gateway.toml"
    prices.write_text(
        '[[providers.openai.models.house-model]]\ncache_miss = 1.0\ncache_read = 0.1\noutput = 2.0\n'
        'source = "our contract"\n'
        '[[providers.openai.models.house-model.tiers]]\nprompt_tokens_above = 5000\n'
        'cache_miss = 9.0\ncache_read = 0.9\noutput = 18.0\n'
        '[[providers.openai.models.house-model.tiers]]\nprompt_tokens_above = 1000\n'
        'cache_miss = 3.0\ncache_read = 0.3\noutput = 6.0\nsource = "our contract, long prompts"\n')
    log = _log(tmp_path, "house-model", _usage(400, 600, 10), _usage(100, 900, 10), _usage(1_000, 4_001, 10))
    ledger = session_ledger(log, prices=load_prices(prices, search_from="/"))
    assert [(e.tier, e.cost, e.rate_source) for e in ledger.entries] == [
        (None, Costs(0.0004, 0.00006, 0.0, 0.00002), "our contract"),
        (None, Costs(0.0001, 0.00009, 0.0, 0.00002), "our contract"),
        (5000, Costs(0.009, 0.0036009, 0.0, 0.00018), "our contract")]
    second = _log(tmp_path, "house-model", _usage(1_001, 0, 10))
    (entry,) = session_ledger(second, prices=load_prices(prices, search_from="/")).entries
    assert (entry.tier, entry.cost, entry.rate_source) == (
        1000, Costs(0.003003, 0.0, 0.0, 0.00006), "our contract, long prompts")


_RATE = {"cache_miss": 1, "cache_read": 0.1, "output": 2}


@pytest.mark.parametrize(("model", "key"), [
    ({**_RATE, "tiers": [{**_RATE, "prompt_tokens_above": "lots"}]}, "m.tiers[0].prompt_tokens_above"),
    ({**_RATE, "tiers": [{**_RATE, "prompt_tokens_above": -1}]}, "m.tiers[0].prompt_tokens_above"),
    ({**_RATE, "tiers": [{"prompt_tokens_above": 10, "cache_miss": 1, "cache_read": 0.1}]}, "m.tiers[0].output"),
    ({**_RATE, "tiers": [{**_RATE, "prompt_tokens_above": 10, "cache_read": "free"}]}, "m.tiers[0].cache_read"),
    ({**_RATE, "tiers": {"prompt_tokens_above": 10}}, "m.tiers"),
    ({**_RATE, "tiers": [{**_RATE, "prompt_tokens_above": 10}, {**_RATE, "prompt_tokens_above": 10}]},
     "m.tiers[1].prompt_tokens_above"),
    ({**_RATE, "off_peak": _RATE, "tiers": [{**_RATE, "prompt_tokens_above": 10}]}, "m.tiers[0].off_peak"),
    ({"billed_as": "gpt-5", "tiers": []}, "m.tiers"),
])
def test_bad_tier_is_one_line_naming_file_and_key_exit_2(tmp_path: Path, model: dict[str, Any], key: str) -> None:
    prices = tmp_path / "prices.json"
    prices.write_bytes(orjson.dumps({"providers": {"openai": {"models": {"m": model}}}}))
    log = _log(tmp_path, "gpt-5.4", _usage(10, 0, 1))
    code, out, err = _run("usage", str(log), "--prices", str(prices))
    lines = err.strip().splitlines()
    assert code == 2 and out == "" and len(lines) == 1, err
    assert str(prices) in lines[0] and f"providers.openai.models.{key}" in lines[0], err


@pytest.mark.parametrize(("provider", "model"), [
    # a longer name is another model, not a snapshot of the shorter one: o3-deep-research costs 5x o3
    ("openai", "o3-deep-research"),
    ("openai", "gpt-5-codex-mini"),  # no rate found; gpt-5-codex has its own
    ("openai", "gpt-4o-audio-preview"),
    ("openai", "gpt-4o-2024-08-06-ft"),
    ("anthropic", "claude-opus-4-1-preview"),
])
def test_other_model_with_a_listed_prefix_is_unpriced(tmp_path: Path, provider: str, model: str) -> None:
    log = _log(tmp_path, model, _usage(1_000, 1_000, 1_000), provider=provider)
    (entry,) = session_ledger(log, prices=load_prices(search_from="/")).entries
    assert (entry.billed_as, entry.cost, entry.unpriced) == (None, None, f"no price for model {model!r}")


@pytest.mark.parametrize(("provider", "model", "billed_as", "cost"), [
    # a dated snapshot is billed as its model: $15 / $1.5 / $75 (pi-ai lists the same rates for both ids)
    ("anthropic", "claude-opus-4-1-20250805", "claude-opus-4-1", Costs(0.015, 0.0015, 0.0, 0.075)),
    ("anthropic", "claude-haiku-4-5-20251001", "claude-haiku-4-5", Costs(0.001, 0.0001, 0.0, 0.005)),
    ("openai", "gpt-5-chat-latest", "gpt-5", Costs(0.00125, 0.000125, 0.0, 0.01)),
    ("openai", "gpt-4o-2024-08-06", "gpt-4o", Costs(0.0025, 0.00125, 0.0, 0.01)),
    # an id whose rates differ from its base model's has its own entry
    ("openai", "gpt-4o-2024-05-13", "gpt-4o-2024-05-13", Costs(0.005, 0.005, 0.0, 0.015)),
    ("anthropic", "claude-sonnet-5", "claude-sonnet-5", Costs(0.002, 0.0002, 0.0, 0.01)),
    ("openai", "gpt-5.4-nano", "gpt-5.4-nano", Costs(0.0002, 0.00002, 0.0, 0.00125)),
])
def test_alias_is_priced_as_its_model(tmp_path: Path, provider: str, model: str, billed_as: str, cost: Costs) -> None:
    log = _log(tmp_path, model, _usage(1_000, 1_000, 1_000), provider=provider)
    (entry,) = session_ledger(log, prices=load_prices(search_from="/")).entries
    assert (entry.billed_as, entry.tier, entry.cost, entry.unpriced) == (billed_as, None, cost, None)
