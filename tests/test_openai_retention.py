"""OpenAI's default prompt-cache retention: by model and by the organization's Zero Data Retention.

``provider-cache-rules.md`` §3: in-memory retention lasts "5 to 10 minutes of inactivity, up to a
maximum of one hour"; ``prompt_cache_retention: "24h"`` is extended retention on listed models;
gpt-5.5 and gpt-5.5-pro offer only ``24h``; for models that support both, the default is ``24h``
for organizations without Zero Data Retention (ZDR) and ``in_memory`` for ZDR organizations.
pi-ai's default ``cacheRetention: short`` sends no ``prompt_cache_retention`` (only a
``prompt_cache_key`` to api.openai.com), so a DSH request to OpenAI gets OpenAI's default.

The log does not record the organization's ZDR status, and the spec names no model that supports
both retentions (nor one that is in-memory only). So, for a body without the key:

* gpt-5.5 / gpt-5.5-pro: ``24h`` whatever the organization;
* any other OpenAI model: ``in_memory`` (300 s) for a ZDR organization; otherwise, or when not
  stated, unknown (``in_memory_or_24h``), judged with the 24 h TTL so that a miss inside it is a
  ``best_effort_miss`` (not ``cold_ttl``, not ``as_expected``); a model the rule lists as
  supporting both gets ``24h`` without ZDR;
* a model OpenAI does not serve (a gateway's ``local-coder``): the rule's 300 s, as before.

Sessions are built with :class:`~dsh_audit.testing.LogBuilder` on a hand-declared
``openai-completions`` route to api.openai.com and judged through :func:`dsh_audit.cache.cache_report`.
A stated ZDR status reaches the rules through ``rule_for(..., zero_data_retention=...)``; the
``stated`` fixture stands for a caller that knows it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

import dsh_audit.cache._request_rules as request_rules_module
from dsh_audit.cache import cache_report, load_prices, rule_for
from dsh_audit.session import Session, open_session
from dsh_audit.testing import LogBuilder
from dsh_audit.wire import load_routes

T0 = 1796209398000  # 2026-12-02T11:03:18Z, in milliseconds
SYSTEM = "S" * 8000  # about 2,000 estimated tokens: above OpenAI's 1,024-token minimum
MINUTE, HOUR = 60, 3600
ROUTES = ("providers:\n  openai:\n    api: openai-completions\n    baseURL: https://api.openai.com/v1\n    models:\n"
          + "".join(f"      - id: {m}\n        contextWindow: 400000\n        maxTokens: 128000\n"
                    for m in ("gpt-5.4", "gpt-5.5", "gpt-5.5-pro"))
          + "  local-openai:\n    api: openai-completions\n    baseURL: http://gateway/v1\n    models:\n"
            "      - id: local-coder\n        contextWindow: 131072\n        maxTokens: 8192\n")
KEYS = ("expected_cache_read", "actual_cache_read", "classification", "lost_tokens_by_cause", "cache_retention",
        "ttl_seconds")
UNKNOWN = "in_memory_or_24h"


def _session(tmp_path: Path, model: str, gaps_s: tuple[int, ...], reads: tuple[int, ...],
             provider: str = "openai") -> Session:
    """Requests to ``model`` ``gaps_s`` apart, each with a 2,020-token prompt reading ``reads[i]``."""
    b = LogBuilder(session_id=f"retention-{model}", created_at=T0, provider=provider, model=model,
                   system=SYSTEM, reasoning_effort=None)
    for i, (gap, read) in enumerate(zip((*gaps_s, 0), reads)):
        with b.turn(f"turn {i}"):
            with b.step():
                usage = {"inputTokens": 2020 - read, "outputTokens": 10, "cacheReadTokens": read}
                reply = b.assistant(f"answer {i}", usage=usage)
                assert reply.seq is not None
                message = b.event(reply.seq)["data"]["message"]
                message["source"]["replayState"] = {
                    "response": {"kind": "pi-ai", "version": 2, "api": "openai-completions", "provider": provider,
                                 "model": model, "responseId": f"r-{reply.seq}", "stopReason": "stop"},
                    "blocks": [{"type": "text"}]}
        b.clock.now += gap * 1000
    routes = tmp_path / "routes.yml"
    routes.write_text(ROUTES)
    session = open_session(b.write_jsonl(tmp_path / f"{model}-{len(reads)}-{sum(reads)}.jsonl"))
    session.use_routes(load_routes(routes))
    return session


def _judged(session: Session, *, wire: bool = True) -> list[tuple[Any, ...]]:
    report = cache_report(session, prices=load_prices(search_from="/"), wire=wire)
    return [tuple(v.to_json().get(k, "absent") for k in KEYS) for v in report.verdicts]


@pytest.fixture
def stated(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., None]]:
    """``stated(zdr, both=())``: judge as for an organization whose ZDR status is known, with the
    rule listing ``both`` as models that support both retentions (the spec lists none)."""

    def state(zdr: bool | None, both: tuple[str, ...] = ()) -> None:
        def chosen(*args: Any, **kwargs: Any) -> Any:
            rule = rule_for(*args, **kwargs, zero_data_retention=zdr)
            return dataclasses.replace(rule, both_models=both) if rule.family == "openai" else rule
        monkeypatch.setattr(request_rules_module, "rule_for", chosen)

    yield state


MISS_20M: tuple[Any, ...] = (0, 0, "cold_ttl", {"cold_ttl": 1920}, "absent", "absent")  # judged with 300 s
FIRST: tuple[Any, ...] = (0, 0, "as_expected", {}, "absent", "absent")


def test_the_body_sends_no_retention_so_openai_default_applies(tmp_path: Path) -> None:
    session = _session(tmp_path, "gpt-5.4", (20 * MINUTE,), (0, 0))
    body = orjson.loads(session.body(session.requests[1]) or b"null")
    assert body["prompt_cache_key"] == "retention-gpt-5.4"  # api.openai.com gets the session's key
    assert "prompt_cache_retention" not in body  # pi-ai's short retention names none


def test_unstated_zdr_a_twenty_minute_gap_is_a_best_effort_miss_not_cold(tmp_path: Path) -> None:
    # three requests: 20 minutes, then 25 hours apart; none reads (1,920 = floor128(2,020))
    miss = _session(tmp_path, "gpt-5.4", (20 * MINUTE, 25 * HOUR), (0, 0, 0))
    assert _judged(miss) == [
        (0, 0, "as_expected", {}, UNKNOWN, 86400.0),
        (1920, 0, "best_effort_miss", {"best_effort_miss": 1920}, UNKNOWN, 86400.0),
        (0, 0, "cold_ttl", {"cold_ttl": 1920}, UNKNOWN, 86400.0)]  # past 24 h: cold whatever the org
    # the same gap with a full read: expected, as the read shows
    hit = _session(tmp_path, "gpt-5.4", (20 * MINUTE,), (0, 1920))
    assert _judged(hit)[1] == (1920, 1920, "as_expected", {}, UNKNOWN, 86400.0)
    # inside five minutes both retentions are warm: a miss is a best-effort miss either way
    near = _session(tmp_path, "gpt-5.4", (2 * MINUTE,), (0, 0))
    assert _judged(near)[1] == (1920, 0, "best_effort_miss", {"best_effort_miss": 1920}, UNKNOWN, 86400.0)


def test_zdr_organization_gets_in_memory_for_a_model_that_is_not_24h_only(
        tmp_path: Path, stated: Callable[..., None]) -> None:
    stated(True, both=("gpt-5.4",))
    miss = _session(tmp_path, "gpt-5.4", (20 * MINUTE, 25 * HOUR), (0, 0, 0))
    assert _judged(miss) == [FIRST, MISS_20M, MISS_20M]
    hit = _session(tmp_path, "gpt-5.4", (20 * MINUTE,), (0, 1920))
    assert _judged(hit)[1] == (0, 1920, "as_expected", {}, "absent", "absent")  # read above a cold prediction
    near = _session(tmp_path, "gpt-5.4", (2 * MINUTE,), (0, 0))
    assert _judged(near)[1] == (1920, 0, "best_effort_miss", {"best_effort_miss": 1920}, "absent", "absent")


def test_non_zdr_organization_gets_24h_for_a_model_that_supports_both(
        tmp_path: Path, stated: Callable[..., None]) -> None:
    stated(False, both=("gpt-5.4",))
    miss = _session(tmp_path, "gpt-5.4", (20 * MINUTE, 25 * HOUR), (0, 0, 0))
    assert _judged(miss) == [
        (0, 0, "as_expected", {}, "24h", 86400.0),
        (1920, 0, "best_effort_miss", {"best_effort_miss": 1920}, "24h", 86400.0),
        (0, 0, "cold_ttl", {"cold_ttl": 1920}, "24h", 86400.0)]
    hit = _session(tmp_path, "gpt-5.4", (20 * MINUTE,), (0, 1920))
    assert _judged(hit)[1] == (1920, 1920, "as_expected", {}, "24h", 86400.0)


def test_non_zdr_organization_and_a_model_the_spec_does_not_list_stays_unknown(
        tmp_path: Path, stated: Callable[..., None]) -> None:
    stated(False)  # the packaged rule: the spec lists no model that supports both
    miss = _session(tmp_path, "gpt-5.4", (20 * MINUTE,), (0, 0))
    assert _judged(miss)[1] == (1920, 0, "best_effort_miss", {"best_effort_miss": 1920}, UNKNOWN, 86400.0)


@pytest.mark.parametrize("zdr", [None, True, False])
@pytest.mark.parametrize("model", ["gpt-5.5", "gpt-5.5-pro"])
def test_a_24h_only_model_is_judged_with_24_hours_whatever_the_organization(
        tmp_path: Path, stated: Callable[..., None], zdr: bool | None, model: str) -> None:
    stated(zdr)
    miss = _session(tmp_path, model, (20 * MINUTE, 25 * HOUR), (0, 0, 0))
    assert _judged(miss) == [
        (0, 0, "as_expected", {}, "24h", 86400.0),
        (1920, 0, "best_effort_miss", {"best_effort_miss": 1920}, "24h", 86400.0),
        (0, 0, "cold_ttl", {"cold_ttl": 1920}, "24h", 86400.0)]


@pytest.mark.parametrize("zdr", [None, True, False])
def test_a_gateway_model_keeps_the_five_minute_lower_bound(
        tmp_path: Path, stated: Callable[..., None], zdr: bool | None) -> None:
    stated(zdr, both=("gpt-5.4",))
    miss = _session(tmp_path, "local-coder", (20 * MINUTE,), (0, 0), provider="local-openai")
    assert _judged(miss) == [FIRST, MISS_20M]


def test_without_wire_bodies_the_model_decides(tmp_path: Path, stated: Callable[..., None]) -> None:
    # no body: whether the route asked for 24h is not known, so only what both answers agree on counts
    assert _judged(_session(tmp_path, "gpt-5.5", (20 * MINUTE,), (0, 0)), wire=False)[1] == (
        1920, 0, "best_effort_miss", {"best_effort_miss": 1920}, "24h", 86400.0)
    assert _judged(_session(tmp_path, "gpt-5.4", (20 * MINUTE,), (0, 0)), wire=False)[1] == (
        1920, 0, "best_effort_miss", {"best_effort_miss": 1920}, UNKNOWN, 86400.0)
    assert _judged(_session(tmp_path, "local-coder", (20 * MINUTE,), (0, 0), provider="local-openai"),
                   wire=False)[1] == MISS_20M
    stated(True)  # ZDR: in_memory by default, but a route's cacheRetention long would still ask for 24h
    assert _judged(_session(tmp_path, "gpt-5.4", (20 * MINUTE,), (0, 0)), wire=False)[1] == (
        1920, 0, "best_effort_miss", {"best_effort_miss": 1920}, UNKNOWN, 86400.0)


def test_the_rule_reads_the_default_exactly() -> None:
    rule = rule_for("openai", "gpt-5.4")
    assert (rule.only_24h_models, rule.both_models, rule.unknown_retention) == (
        ("gpt-5.5", "gpt-5.5-pro"), (), UNKNOWN)

    def named(body: bytes, zdr: bool | None = None) -> tuple[str, float | None] | None:
        found = rule.with_zero_data_retention(zdr).retention(body)
        return None if found is None else (found.name, found.ttl_seconds)

    for zdr in (None, True, False):
        assert named(b'{"model":"gpt-5.5","messages":[]}', zdr) == ("24h", 86400.0)
        assert named(b'{"model":"gpt-5.5-2026-04-23","messages":[]}', zdr) == ("24h", 86400.0)  # a snapshot
        assert named(b'{"model":"gpt-5.4","prompt_cache_retention":"24h"}', zdr) == ("24h", 86400.0)
        assert named(b'{"model":"gpt-5.4","prompt_cache_retention":"in_memory"}', zdr) is None
        assert named(b'{"model":"local-coder","messages":[]}', zdr) is None
    assert named(b'{"model":"gpt-5.4","messages":[]}') == (UNKNOWN, 86400.0)
    assert named(b'{"model":"gpt-5.4","messages":[]}', True) is None
    assert named(b'{"model":"gpt-5.4","messages":[]}', False) == (UNKNOWN, 86400.0)
    assert named(b'{"model":"gpt-5.5-mini","messages":[]}') == (UNKNOWN, 86400.0)  # not gpt-5.5 itself
    # a value the rule does not list is the model's default; a model id that is a JSON escape is read
    assert named(b'{"model":"gpt-5.5","prompt_cache_retention":"7d"}') == ("24h", 86400.0)
    assert named(b'{"model":"gpt\\u002d5.5","messages":[]}') == ("24h", 86400.0)
    both = dataclasses.replace(rule, both_models=("gpt-5.4",))
    assert both.with_zero_data_retention(False).retention(b'{"model":"gpt-5.4"}') == \
        both.default_retention("gpt-5.5")
    # the statement is only for rules with a retention default
    claude = rule_for("anthropic", "claude-sonnet-4-5", zero_data_retention=True)
    assert claude.zero_data_retention is None and rule_for("openai", "gpt-5.4", zero_data_retention=True) \
        .zero_data_retention is True
    assert [rule.default_retention(m) for m in rule.only_24h_models] == [rule.default_retention("gpt-5.5")] * 2
