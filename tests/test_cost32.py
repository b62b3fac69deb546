"""Issues 11 and 13, session 32: a price is resolved once per span of send times (effective dates
and peak windows still judged at each request's time), what a request lost is priced once (by its
cache verdict; the ledger takes it), ``breaks --cost`` accounts with ``cache``'s own functions, a
request that is no break and logged no cache read lost nothing in every view, and a cache marker
is parsed only once its size is checked against a memory limit."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

import dsh_audit.cache
from dsh_audit.cache import analyze_cache, cache_report, load_prices, price_entry
from dsh_audit.cache import _ledger
from dsh_audit.cache._body_json import key_objects
from dsh_audit.log import _json_room
from dsh_audit.session import open_session
from dsh_audit.testing import LogBuilder

_NOT_LOGGED = "cache reads not logged: what it lost of the cache is unknown"
_DAY = 1799971200.0  # 2027-01-15T00:00:00Z, a Friday: 08:00 at +08:00
_LOST = 0.00056448  # 1920 tokens x (0.3 - 0.006) USD per million: deepseek-v4-flash in DeepSeek's peak window


def _prices(tmp_path: Path) -> Path:
    """m-test: peak 09:00-12:00 at +08:00 on weekdays; its rates double at 2027-01-15T03:30:00Z."""
    off = {"cache_miss": 0.5, "cache_read": 0.05, "output": 1.0}
    doc = {"providers": {"deepseek": {
        "windows": [{"from": "2026-01-01T00:00:00Z", "utc_offset": "+08:00", "peak_hours": ["09:00-12:00"],
                     "days": ["mon", "tue", "wed", "thu", "fri"]}],
        "models": {"m-test": [
            {"from": "2026-01-01T00:00:00Z", "cache_miss": 1.0, "cache_read": 0.1, "output": 2.0, "off_peak": off},
            {"from": "2027-01-15T03:30:00Z", "cache_miss": 2.0, "cache_read": 0.2, "output": 4.0,
             "off_peak": {k: 2 * v for k, v in off.items()}}],
            "m-alias": {"billed_as": "m-test"}}}}}
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def test_a_memoised_price_still_follows_windows_and_rate_changes_at_each_send_time(tmp_path: Path) -> None:
    book = load_prices(_prices(tmp_path), search_from=tmp_path)
    times = [_DAY + 3599.0,  # 08:59:59 local: off-peak, first rate
             _DAY + 3600.0,  # 09:00: peak
             _DAY + 12599.9999,  # 11:29:59.9999 local, just before the rate change: peak, first rate
             _DAY + 12600.0,  # the rate change, in the peak window
             _DAY + 14400.0,  # 12:00 local: off-peak, second rate
             _DAY + 86400 + 5400.0,  # Saturday 09:30 local: off-peak all day
             _DAY + 3599.0]  # back before both: the memo must not answer for it
    quotes = [book.quote("deepseek-official", model, t) for t, model in zip(times, ["m-test", "m-alias"] * 4)]
    assert [(q.window, q.billed_as, q.rates.cache_miss, q.off_peak.cache_miss, q.effective)  # type: ignore[union-attr]
            for q in quotes] == [
        ("off-peak", "m-test", 0.5, 0.5, "2026-01-01T00:00:00Z"),
        ("peak", "m-test", 1.0, 0.5, "2026-01-01T00:00:00Z"),
        ("peak", "m-test", 1.0, 0.5, "2026-01-01T00:00:00Z"),
        ("peak", "m-test", 2.0, 1.0, "2027-01-15T03:30:00Z"),
        ("off-peak", "m-test", 1.0, 1.0, "2027-01-15T03:30:00Z"),
        ("off-peak", "m-test", 1.0, 1.0, "2027-01-15T03:30:00Z"),
        ("off-peak", "m-test", 0.5, 0.5, "2026-01-01T00:00:00Z")]
    assert [q.model for q in quotes] == ["m-test", "m-alias"] * 3 + ["m-test"]  # type: ignore[union-attr]
    # Every answer of the memoised book is a fresh book's (none memoised), edges to the microsecond.
    edges = [_DAY + 3600.0, _DAY + 12600.0, _DAY + 14400.0, _DAY + 57600.0, 1767225600.0]
    probes = [e + d for e in edges for d in (-1.0, -1e-3, -1e-6, -4e-7, 0.0, 4e-7, 1e-6, 1e-3, 1.0)]
    for when in probes + probes[::-1]:
        for model in ("m-test", "m-alias", "deepseek-v4-flash"):
            assert book.quote("deepseek-official", model, when) == \
                dataclasses.replace(book).quote("deepseek-official", model, when), (model, when)
            assert book.window("deepseek", when) == dataclasses.replace(book).window("deepseek", when)
    assert book.quote("deepseek-official", "m-test", None) == "no timestamp to date the rate"
    assert book.quote("deepseek-official", "nope", None) == "no price for model 'nope'"
    assert book.quote("deepseek-official", "m-test", 1767225599.0) == \
        "no rate for 'm-test' (provider deepseek) in force on 2025-12-31"


def _usage(miss: int, read: int | None) -> dict[str, int]:
    usage = {"inputTokens": miss, "outputTokens": 10}
    if read is not None:
        usage["cacheReadTokens"] = read
    return usage


def _log(path: Path, session_id: str, steps: list[tuple[str, int, int | None]], *, change_at: int) -> Path:
    """deepseek-v4-flash requests in DeepSeek's peak window; the system prompt changes before
    request ``change_at`` (a header_change break)."""
    b = LogBuilder(session_id=session_id, created_at=1_800_000_000_000, model="deepseek-v4-flash", system="S" * 8000)
    for i, (text, miss, read) in enumerate(steps):
        if i == change_at:
            b.configure(system="T" * 8000)
        with b.turn(text), b.step():
            b.assistant(text, usage=_usage(miss, read))
    return b.write_jsonl(path, packed=False)


_BREAK = [("one", 2000, 0), ("two", 100, 1920), ("three", 2100, 0)]


def test_what_a_request_lost_is_priced_once_by_its_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _log(tmp_path / "s-once" / "session.jsonl", "s-once", _BREAK, change_at=2)
    session = open_session(path)
    book = load_prices(search_from=tmp_path)
    report = cache_report(session, prices=book)
    verdict = report.verdicts[2]
    assert (verdict.classification, verdict.lost, verdict.lost_cost, verdict.lost_cost_by_cause) == (
        "break_explained", {"header_change": 1920}, _LOST, {"header_change": _LOST})
    assert report.cost["lost_cost_usd_by_cause"] == {"header_change": _LOST}
    request = session.requests[2]
    unjudged = analyze_cache(session.requests, prices=book).verdicts[2]  # no send times: the rate is undated
    assert (unjudged.lost, unjudged.lost_cost, unjudged.rate) == ({"unattributed": 1920}, None, None)

    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("priced again")

    monkeypatch.setattr(_ledger, "lost_costs", refuse)
    entry = price_entry(request, book, verdict)  # the verdict's price, taken as it is
    assert (entry.lost, entry.lost_cost, entry.window, entry.billed_as) == (
        {"header_change": 1920}, {"header_change": _LOST}, "peak", "deepseek-flash")
    with pytest.raises(AssertionError, match="priced again"):  # a verdict of another rate: priced here
        price_entry(request, book, unjudged)
    monkeypatch.undo()
    assert price_entry(request, book, unjudged).lost_cost == {"unattributed": _LOST}


def test_breaks_cost_accounts_with_the_cache_packages_functions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 cli80: Any) -> None:
    _log(tmp_path / "alone" / "s-alone" / "session.jsonl", "s-alone", _BREAK, change_at=2)
    for name in ("s-one", "s-two"):  # two logs of one folder: read together, as an opened group
        _log(tmp_path / "pair" / name / "session.jsonl", name, _BREAK, change_at=2)
    calls: list[str] = []
    for name in ("account_alone", "accounted"):
        real = getattr(dsh_audit.cache, name)

        def spy(*args: Any, _real: Any = real, _name: str = name, **kwargs: Any) -> Any:
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(dsh_audit.cache, name, spy)
    code, out, err = cli80("breaks", "--cost", "--json", "alone/s-alone/session.jsonl")
    assert (code, err, calls) == (0, [], ["account_alone"])
    assert [(r["request"], r["cause"], r["lost_tokens"], r["lost_cost_usd"], r["unpriced_reason"])
            for r in map(json.loads, out.splitlines())] == [(2, "header_change", 1920, _LOST, None)]
    calls.clear()
    code, out, err = cli80("breaks", "--cost", "--json", "pair/s-one/session.jsonl", "pair/s-two/session.jsonl")
    assert (code, err, calls) == (0, [], ["account_alone", "accounted"])  # not a lone log: the group's way
    assert [(r["session_id"], r["request"], r["lost_tokens"], r["lost_cost_usd"])
            for r in map(json.loads, out.splitlines())] == [("s-one", 2, 1920, _LOST), ("s-two", 2, 1920, _LOST)]


def test_a_request_that_is_no_break_and_logged_no_cache_read_lost_nothing_in_every_view(cli80: Any,
                                                                                        tmp_path: Path) -> None:
    steps = [("one", 2000, 0), ("two", 100, 1920), ("three", 2100, None), ("four", 100, 2048), ("five", 2300, None)]
    _log(tmp_path / "s-unlogged" / "session.jsonl", "s-unlogged", steps, change_at=4)
    code, out, err = cli80("cache", "--json", "s-unlogged/session.jsonl")
    report = json.loads(out)
    assert [(v["classification"], v["actual_cache_read"], v["lost_tokens"], v["lost_tokens_by_cause"],
             v["lost_cost_usd"]) for v in report["timeline"]] == [
        ("as_expected", 0, 0, {}, 0), ("as_expected", 1920, 0, {}, 0), ("usage_unknown", None, 0, {}, 0),
        ("as_expected", 2048, 0, {}, 0), ("break_explained", None, None, None, None)]
    assert (report["lost_tokens"], report["lost_tokens_by_cause"], report["lost_cost_usd"],
            report["lost_unknown_requests"], report["cost"]["lost_requests"], report["cost"]["lost_unknown_requests"]) == (0, {}, None, 1, 1, 1)
    code, out, err = cli80("breaks", "--cost", "--all", "--json", "s-unlogged/session.jsonl")
    assert [(r["request"], r["lost_tokens"], r["lost_cost_usd"], r["unpriced_reason"])
            for r in map(json.loads, out.splitlines())] == [
        (0, 0, 0, None), (1, 0, 0, None), (2, 0, 0, None), (3, 0, 0, None), (4, None, None, _NOT_LOGGED)]
    code, out, err = cli80("usage", "--by", "request", "--json", "s-unlogged/session.jsonl")
    rows = json.loads(out)["rows"]
    assert [(r["lost_tokens"], r["lost_cost_usd"], r["lost_unknown_requests"]) for r in rows] == [
        (0, 0, 0), (0, 0, 0), (0, 0, 0), (0, 0, 0), (0, None, 1)]


def test_a_cache_marker_is_parsed_only_once_its_size_fits_a_memory_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    body = b'{"system":[{"cache_control":{"type":"ephemeral","ttl":"1h"}}],"tools":[{"cache_control":{"x":["' + \
        b"a" * (2 << 20) + b'"]}}]}'
    assert [value for _, value in key_objects(body, "cache_control")] == [
        {"type": "ephemeral", "ttl": "1h"}, {"x": ["a" * (2 << 20)]}]
    monkeypatch.setattr(_json_room, "memory_limited", lambda: True)  # as under a tight ulimit -v
    monkeypatch.setattr(_json_room, "fits_in_memory", lambda need: False)
    found = key_objects(body, "cache_control")
    assert next(found)[1] == {"type": "ephemeral", "ttl": "1h"}  # 1 MiB or less: never counted
    with pytest.raises(MemoryError, match=r"^parsing 2097162 bytes of JSON needs about \d+ MiB of memory"):
        next(found)
