"""Cache retention from the wire truth: the rendered body's markers set the TTL and the write rate.

A route's ``cacheRetention`` (docs/routes.md section 7.1) reaches the pi-ai bodies: ``long`` puts
``"ttl":"1h"`` on every Anthropic ``cache_control`` marker and ``prompt_cache_retention: "24h"`` on
OpenAI bodies, ``none`` removes the markers. The cache accounting reads the retention from each
rendered body (``provider-cache-rules.md`` §2: 5 minutes, or 1 hour with ``ttl:"1h"``, writes at 2x
base for 1 h; §3: OpenAI's extended retention up to 24 hours): a 1-hour body is judged with a
3600 s TTL and its writes are priced at ``cache_write_1h``; a body with no marker caches nothing;
an OpenAI 24h body is judged with a 24 h TTL. Without bodies (``--no-wire``) nothing changes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from dsh_audit.cache import cache_report, load_prices, rule_for, session_ledger
from dsh_audit.cli import cli
from dsh_audit.session import Session, open_session
from dsh_audit.testing import LogBuilder
from dsh_audit.wire import load_routes

from _golden import CORPUS

T0 = 1796209398000  # 2026-12-02T11:03:18Z, in milliseconds
SYSTEM = "S" * 8000  # about 2,000 estimated tokens: above every minimum cacheable prefix used here
C1 = CORPUS / "live-pi" / "c1-anthropic-tools"
GATEWAY = ("providers:\n  local-openai:\n    api: openai-completions\n    baseURL: http://gateway/v1\n"
           "    models:\n      - id: local-coder\n        contextWindow: 131072\n        maxTokens: 8192\n")


def _envelope(b: LogBuilder, seq: int | None, api: str, provider: str, model: str) -> None:
    """pi-ai's replay envelope on an ``assistant/message`` (the route the answer came back by)."""
    assert seq is not None
    message = b.event(seq)["data"]["message"]
    message["source"]["replayState"] = {
        "response": {"kind": "pi-ai", "version": 2, "api": api, "provider": provider, "model": model,
                     "responseId": f"r-{seq}", "stopReason": "stop"},
        "blocks": [{"type": "text"}]}


def _claude(tmp_path: Path, reads: tuple[int, ...], gap_s: int = 600) -> Path:
    """Requests to claude-sonnet-4-5 ``gap_s`` apart, each reading ``reads[i]`` cached tokens
    (a request that reads none writes 2,000)."""
    b = LogBuilder(session_id="retention", created_at=T0, provider="anthropic", model="claude-sonnet-4-5",
                   system=SYSTEM)
    for i, read in enumerate(reads):
        with b.turn(f"turn {i}"):
            with b.step():
                usage = {"inputTokens": 20, "outputTokens": 10, "cacheReadTokens": read,
                         "cacheWriteTokens": 0 if read else 2000}
                reply = b.assistant(f"answer {i}", usage=usage)
                _envelope(b, reply.seq, "anthropic-messages", "anthropic", "claude-sonnet-4-5")
        b.clock.now += gap_s * 1000
    return b.write_jsonl(tmp_path / "claude.jsonl")


def _gateway(tmp_path: Path, gaps_s: tuple[int, ...]) -> Path:
    """Requests through a hand-declared openai-completions route, ``gaps_s`` apart, none reading."""
    b = LogBuilder(session_id="retention-openai", created_at=T0, provider="local-openai", model="local-coder",
                   system=SYSTEM, reasoning_effort=None)
    for i, gap in enumerate((*gaps_s, 0)):
        with b.turn(f"turn {i}"):
            with b.step():
                usage = {"inputTokens": 2020, "outputTokens": 10, "cacheReadTokens": 0}
                reply = b.assistant(f"answer {i}", usage=usage)
                _envelope(b, reply.seq, "openai-completions", "local-openai", "local-coder")
        b.clock.now += gap * 1000
    return b.write_jsonl(tmp_path / "gateway.jsonl")


def _routes(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "routes.yml"
    path.write_text(text)
    return path


def _claude_routes(tmp_path: Path, retention: str | None) -> Path | None:
    if retention is None:
        return None
    return _routes(tmp_path, f"providers:\n  anthropic:\n    cacheRetention: {retention}\n")


def _session(log: Path, routes: Path | None) -> Session:
    session = open_session(log)
    if routes is not None:
        session.use_routes(load_routes(routes))
    return session


def _verdicts(log: Path, routes: Path | None, *, wire: bool = True) -> list[dict[str, Any]]:
    report = cache_report(_session(log, routes), prices=load_prices(search_from="/"), wire=wire)
    return [v.to_json() for v in report.verdicts]


def _pick(verdict: dict[str, Any], *keys: str) -> tuple[Any, ...]:
    return tuple(verdict.get(k, "absent") for k in keys)


KEYS = ("reusable_cache_read", "expected_cache_read", "actual_cache_read", "classification", "lost_tokens_by_cause",
        "source_index", "cache_retention", "ttl_seconds")


def test_a_ten_minute_gap_is_cold_by_default_and_warm_with_long_retention(tmp_path: Path) -> None:
    miss = _claude(tmp_path, (0, 0))
    # default (5 minutes): the prefix went cold; no retention field in the JSON
    assert [_pick(v, *KEYS) for v in _verdicts(miss, None)] == [
        (0, 0, 0, "as_expected", {}, None, "absent", "absent"),
        (2020, 0, 0, "cold_ttl", {"cold_ttl": 2020}, None, "absent", "absent")]
    # long: every breakpoint carries ttl 1h, so ten minutes later the prefix is still warm, and a
    # miss is a miss of a warm prefix, not a cold one
    long = _claude_routes(tmp_path, "long")
    assert [_pick(v, *KEYS) for v in _verdicts(miss, long)] == [
        (0, 0, 0, "as_expected", {}, None, "1h", 3600.0),
        (2020, 2020, 0, "best_effort_miss", {"best_effort_miss": 2020}, 0, "1h", 3600.0)]
    # the same gap with a logged hit: predicted only with the 1-hour TTL
    hit = _claude(tmp_path, (0, 2000))
    assert _pick(_verdicts(hit, None)[1], *KEYS) == (2020, 0, 2000, "as_expected", {}, None, "absent", "absent")
    second = _verdicts(hit, long)[1]
    assert second == {
        "index": 1, "kind": "loop", "turn": 2, "step": 1, "attempt": 1, "model": "claude-sonnet-4-5",
        "family": "anthropic", "prompt_tokens": 2020, "counted_tokens": second["counted_tokens"],
        "reusable_cache_read": 2020, "expected_any": 2020, "expected_cache_read": 2020, "actual_cache_read": 2000,
        "classification": "as_expected", "cause": None, "source_index": 0, "gap_seconds": 600.013,
        "lost_tokens": 0, "lost_tokens_by_cause": {}, "lost_cost_usd": 0.0, "prompt_source": "wire:anthropic",
        "cache_retention": "1h", "ttl_seconds": 3600.0}
    # an hour and more is cold even with long retention
    late = _claude(tmp_path, (0, 0), gap_s=3601)
    assert _pick(_verdicts(late, long)[1], *KEYS) == (2020, 0, 0, "cold_ttl", {"cold_ttl": 2020}, None, "1h", 3600.0)


def test_without_wire_bodies_nothing_changes(tmp_path: Path) -> None:
    miss = _claude(tmp_path, (0, 0))
    long = _claude_routes(tmp_path, "long")
    assert _verdicts(miss, long, wire=False) == _verdicts(miss, None, wire=False)
    assert [_pick(v, *KEYS) for v in _verdicts(miss, long, wire=False)][1] == (
        2020, 0, 0, "cold_ttl", {"cold_ttl": 2020}, None, "absent", "absent")


def test_a_long_retention_write_is_priced_at_the_one_hour_rate(tmp_path: Path) -> None:
    # claude-sonnet-4-5: writes $3.75 (5 m) and $6 (1 h) per million, input $3, output $15
    log = _claude(tmp_path, (0, 0))
    book = load_prices(search_from="/")
    costs = {}
    for retention in (None, "long"):
        session = _session(log, _claude_routes(tmp_path, retention))
        report = cache_report(session, prices=book)
        costs[retention] = session_ledger(session, prices=book, cache=report).entries
    default, long = costs[None][0], costs["long"][0]
    assert default.tokens is not None and default.tokens.cache_write == 2000
    assert default.cost is not None and default.cost.cache_write == 0.0075  # 2,000 x $3.75 / 1M
    assert long.cost is not None and long.cost.cache_write == 0.012  # 2,000 x $6 / 1M
    assert (long.cost.total, long.no_cache_cost, long.off_peak_cost) == (0.01221, 0.00621, 0.01221)
    assert (default.cache_retention, default.cache_write_rate) == (None, None)
    assert (long.cache_retention, long.cache_write_rate) == ("1h", "cache_write_1h")
    assert "cache_retention" not in default.to_json() and "cache_write_rate" not in default.to_json()
    assert {k: long.to_json()[k] for k in ("cache_retention", "cache_write_rate")} == {
        "cache_retention": "1h", "cache_write_rate": "cache_write_1h"}
    # the CLI (one streamed pass) says the same
    routes = _claude_routes(tmp_path, "long")
    result = CliRunner().invoke(cli, ["cache", str(log), "--json", "--routes", str(routes)], catch_exceptions=False,
                                standalone_mode=False)
    assert result.return_value == 0  # the command's own exit code (CliRunner's exit_code is 0 here)
    out = orjson.loads(result.stdout)
    assert out["cost"]["cost_usd"] == {"cache_miss": 0.00012, "cache_read": 0.0, "cache_write": 0.024,
                                       "output": 0.0003, "total": 0.02442}
    assert [(v["cache_retention"], v["ttl_seconds"], v["classification"]) for v in out["timeline"]] == [
        ("1h", 3600, "as_expected"), ("1h", 3600, "best_effort_miss")]


def test_a_body_with_no_marker_caches_nothing_and_expects_nothing(tmp_path: Path) -> None:
    log = _claude(tmp_path, (0, 0))
    none = _claude_routes(tmp_path, "none")
    assert [_pick(v, *KEYS) for v in _verdicts(log, none)] == [
        (0, 0, 0, "as_expected", {}, None, "none", None),
        (0, 0, 0, "as_expected", {}, None, "none", None)]
    short = _routes(tmp_path, "providers:\n  anthropic:\n    cacheRetention: short\n")
    assert _verdicts(log, short) == _verdicts(log, None)  # pi-ai's default: nothing to say


def test_openai_extended_retention_is_judged_with_a_24_hour_ttl(tmp_path: Path) -> None:
    # three requests: 10 minutes, then 25 hours apart; none reads the cache (1,920 = floor128(2,020))
    log = _gateway(tmp_path, (600, 25 * 3600))
    keys = ("prompt_source", "expected_cache_read", "classification", "lost_tokens_by_cause", "cache_retention",
            "ttl_seconds")
    assert [_pick(v, *keys) for v in _verdicts(log, _routes(tmp_path, GATEWAY))] == [
        ("wire:openai", 0, "as_expected", {}, "absent", "absent"),
        ("wire:openai", 0, "cold_ttl", {"cold_ttl": 1920}, "absent", "absent"),
        ("wire:openai", 0, "cold_ttl", {"cold_ttl": 1920}, "absent", "absent")]
    extended = _routes(tmp_path, GATEWAY.replace("    models:", "    cacheRetention: long\n    models:"))
    assert [_pick(v, *keys) for v in _verdicts(log, extended)] == [
        ("wire:openai", 0, "as_expected", {}, "24h", 86400.0),
        ("wire:openai", 1920, "best_effort_miss", {"best_effort_miss": 1920}, "24h", 86400.0),
        ("wire:openai", 0, "cold_ttl", {"cold_ttl": 1920}, "24h", 86400.0)]


def test_retention_is_read_from_the_body_markers_exactly() -> None:
    claude, openai = rule_for("anthropic", "claude-sonnet-4-5"), rule_for("openai", "gpt-5.4")

    def marked(*markers: str) -> bytes:
        blocks = ",".join('{"type":"text","text":"t","cache_control":' + m + "}" for m in markers)
        return b'{"system":[' + blocks.encode() + b'],"messages":[]}'

    assert claude.retention(marked('{"type":"ephemeral"}')) is None
    assert claude.retention(marked('{"type":"ephemeral","ttl":"5m"}')) is None
    assert claude.retention(marked('{"type":"ephemeral","ttl":"2d"}')) is None  # a TTL the rules do not list
    mixed = claude.retention(marked('{"type":"ephemeral","ttl":"1h"}', '{"type":"ephemeral"}'))
    assert mixed is not None and (mixed.name, mixed.ttl_seconds) == ("1h", 3600.0)
    # a marker written inside a string is text, not a marker
    quoted = b'{"messages":[{"role":"user","content":"\\"cache_control\\":{\\"ttl\\":\\"1h\\"}"}]}'
    bare = claude.retention(quoted)
    assert bare is not None and (bare.name, bare.ttl_seconds) == ("none", None)
    assert openai.retention(b'{"model":"m","stream":true,"prompt_cache_retention":"in_memory"}') is None
    extended = openai.retention(b'{"model":"m","stream":true,"prompt_cache_retention":"24h"}')
    assert extended is not None and (extended.name, extended.ttl_seconds) == ("24h", 86400.0)
    assert openai.retention(b'{"model":"m","messages":[]}') is None
    assert rule_for("deepseek", "deepseek-v4-pro").retention(marked('{"type":"ephemeral","ttl":"1h"}')) is None


@pytest.mark.skipif(not C1.is_dir(), reason="../shared/corpus/live-pi is absent")
def test_live_pi_claude_session_with_long_retention(tmp_path: Path) -> None:
    text = (C1 / "inputs" / "pi-ai-routes.patch.yml").read_text()
    anchor = "      anthropic:\n"
    routes = _routes(tmp_path, text.replace(anchor, anchor + "        cacheRetention: long\n"))
    log = next((C1 / "session-logs").glob("*.jsonl"))
    book = load_prices(search_from="/")
    ledgers = {}
    for name, path in (("default", None), ("long", routes)):
        session = _session(log, path)
        report = cache_report(session, prices=book)
        ledgers[name] = (report, session_ledger(session, prices=book, cache=report))
    (short, short_ledger), (long, long_ledger) = ledgers["default"], ledgers["long"]
    # the requests are seconds apart: the same verdicts, now marked 1h; the break at request 9 lost
    # 8927 tokens that were billed as its 8917 cache writes and 10 misses, so they cost the 1-hour
    # write rate now (docs/cache-accounting.md, "What lost tokens cost": writes first, then misses)
    lost_1h = {9: 0.0508539}  # 8917 x ($6 - $0.30) + 10 x ($3 - $0.30) per million; 5-minute: 0.03079065
    assert short.verdicts[9].lost_cost == 0.03079065
    assert [{**v.to_json(), "cache_retention": "1h", "ttl_seconds": 3600.0,
             **({"lost_cost_usd": lost_1h[v.index]} if v.index in lost_1h else {})} for v in short.verdicts] == \
        [v.to_json() for v in long.verdicts]
    writes = long_ledger.tokens.cache_write
    assert writes == short_ledger.tokens.cache_write == 18_490
    assert short_ledger.cost.cache_write == 0.0693375  # 18,490 x $3.75 / 1M
    assert long_ledger.cost.cache_write == 0.11094  # 18,490 x $6 / 1M
    assert {e.cache_write_rate for e in long_ledger.entries if e.cost is not None} == {"cache_write_1h"}


def test_usage_takes_the_route_file_and_prices_long_writes_as_cache_does(tmp_path: Path) -> None:
    """`usage --routes` prices a session as `cache --routes` does: two 2,000-token writes at the
    1-hour rate ($6/M); without the file, at the 5-minute rate ($3.75/M)."""
    log = _claude(tmp_path, (0, 0))
    routes = _claude_routes(tmp_path, "long")
    costs = {}
    for extra in ((), ("--routes", str(routes))):
        result = CliRunner().invoke(cli, ["usage", str(log), "--json", *extra], catch_exceptions=False,
                                    standalone_mode=False)
        assert result.return_value == 0, result.stderr
        costs[bool(extra)] = orjson.loads(result.stdout)["totals"]["cost_usd"]
    assert costs[True] == {"cache_miss": 0.00012, "cache_read": 0.0, "cache_write": 0.024, "output": 0.0003,
                           "total": 0.02442}
    assert costs[False]["cache_write"] == 0.015  # 4,000 x $3.75 / 1M


def test_index_takes_the_route_file_and_a_changed_file_reindexes(tmp_path: Path) -> None:
    """`index --routes` stores the costs `usage --routes` prices (1-hour writes), and a route file
    with other content re-indexes the log (it is part of the records' options)."""
    import sqlite3

    log = _claude(tmp_path, (0, 0))
    db = tmp_path / "audit.sqlite"

    def index(*extra: str) -> tuple[dict[str, Any], float]:
        result = CliRunner().invoke(cli, ["index", str(log), "--db", str(db), "--json", *extra],
                                    catch_exceptions=False, standalone_mode=False)
        assert result.return_value == 0, result.stderr
        with sqlite3.connect(db) as connection:
            (writes,) = connection.execute("select sum(cost_cache_write) from costs").fetchone()
        return orjson.loads(result.stdout), writes

    summary, writes = index("--routes", str(_claude_routes(tmp_path, "long")))
    assert (summary["indexed"], summary["skipped"], writes) == (1, 0, 0.024)  # 4,000 x $6 / 1M
    summary, writes = index("--routes", str(_claude_routes(tmp_path, "long")))
    assert (summary["indexed"], summary["skipped"]) == (0, 1)  # the same file: unchanged
    summary, writes = index("--routes", str(_claude_routes(tmp_path, "none")))
    assert (summary["indexed"], summary["skipped"]) == (1, 0)  # another file: read again
    summary, writes = index()
    assert (summary["indexed"], summary["skipped"], writes) == (1, 0, 0.015)  # no file: the 5-minute rate


def test_usage_refuses_a_bad_route_file_before_reading_a_log(tmp_path: Path) -> None:
    log = _claude(tmp_path, (0, 0))
    bad = _routes(tmp_path, "providers: [\n")
    result = CliRunner().invoke(cli, ["usage", str(log), "--routes", str(bad)], catch_exceptions=False,
                                standalone_mode=False)
    assert (result.return_value, result.stdout) == (2, "")
    assert result.stderr.startswith(f"error: {bad}: route file is not valid YAML at line 2") and \
        result.stderr.count("\n") == 1


def test_watch_takes_the_route_file(tmp_path: Path) -> None:
    """A followed log is judged and priced with the route file as `cache --routes` judges it: the
    second request, ten minutes on, is still warm with 1-hour retention (cold without the file),
    and its 2,000 written tokens cost the 1-hour rate."""
    import threading

    from dsh_audit.watch import TailStream, WatchRequest, follow_log

    log = _claude(tmp_path, (0, 0))
    long = load_routes(_claude_routes(tmp_path, "long"))
    seen = {}
    for config in (None, long):
        stop = threading.Event()
        stop.set()  # read what the file holds, then end
        items = follow_log(TailStream(str(log), stop=stop, settle=0.2, poll=0.01), config=config,
                           prices=load_prices(search_from="/"))
        seen[config is not None] = [(r.classification, r.cost) for r in items if isinstance(r, WatchRequest)]
    cache = CliRunner().invoke(cli, ["cache", str(log), "--json", "--routes", str(_claude_routes(tmp_path, "long"))])
    timeline = orjson.loads(cache.stdout)["timeline"]
    assert [c for c, _ in seen[True]] == [v["classification"] for v in timeline] == ["as_expected", "best_effort_miss"]
    assert [c for c, _ in seen[False]] == ["as_expected", "cold_ttl"]
    assert seen[True][1][1] - seen[False][1][1] == pytest.approx(2000 * (6 - 3.75) / 1e6)
