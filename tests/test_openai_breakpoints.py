"""OpenAI GPT-5.6 and later: breakpoint-based prompt caching; and the organization's Zero Data Retention.

``provider-cache-rules.md`` §3, "GPT-5.6 and later (breakpoint-based)": "exact matching at eligible
cache breakpoints"; an implicit breakpoint at the latest user or tool message (plus explicit
``prompt_cache_breakpoint`` markers); no fallback to the longest unmarked prefix; a strict minimum of
1,024 tokens up to the breakpoint; reads consider the latest 50 breakpoints; ``ttl: "30m"``,
refreshed on reuse. So a 5.6+ request's expected read is the longest prefix, ending at a breakpoint
an earlier request wrote, that its prompt holds whole, in whole tokens (no 128-token increments):
in a growing conversation, the previous prompt exactly. Earlier models keep the common prefix
rounded down to 128 tokens.

§3 also: for models that support both retentions, OpenAI's default is ``24h`` for organizations
without Zero Data Retention and ``in_memory`` for ZDR ones. The log does not record the status: a
user states it with ``[tool.dsh-audit.cache] openai-zero-data-retention`` in the nearest
``pyproject.toml`` or ``--openai-zdr`` / ``--no-openai-zdr`` (the flag wins).

Sessions are built with :class:`~dsh_audit.testing.LogBuilder` on a hand-declared
``openai-completions`` route to api.openai.com, as DSH's pi-ai route sends them, and judged through
:func:`dsh_audit.cache.cache_report` or the ``cache`` command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from dsh_audit.cache import cache_report, load_prices, pyproject_zero_data_retention, rule_for
from dsh_audit.gate import load_policy
from dsh_audit.session import Session, open_session
from dsh_audit.testing import LogBuilder, ToolCall
from dsh_audit.wire import load_routes

from _cli import invoke

T0 = 1796209398000  # 2026-12-02T11:03:18Z, in milliseconds
MINUTE = 60
MODELS = ("gpt-5.4", "gpt-5.5", "gpt-5.6", "gpt-5.6-luna")
ROUTES = ("providers:\n  openai:\n    api: openai-completions\n    baseURL: https://api.openai.com/v1\n    models:\n"
          + "".join(f"      - id: {m}\n        contextWindow: 1000000\n        maxTokens: 128000\n" for m in MODELS))
KEYS = ("reusable_cache_read", "expected_any", "expected_cache_read", "actual_cache_read", "classification",
        "lost_tokens_by_cause", "cache_retention", "ttl_seconds", "source_index")
UNKNOWN = "in_memory_or_24h"


def _envelope(b: LogBuilder, seq: int | None, model: str) -> None:
    """pi-ai's replay envelope on an ``assistant/message``: the answer came back by openai-completions."""
    assert seq is not None
    message = b.event(seq)["data"]["message"]
    message["source"]["replayState"] = {
        "response": {"kind": "pi-ai", "version": 2, "api": "openai-completions", "provider": "openai",
                     "model": model, "responseId": f"r-{seq}", "stopReason": "stop"},
        "blocks": [{"type": "text"}]}


def _usage(prompt: int, read: int) -> dict[str, int]:
    return {"inputTokens": prompt - read, "outputTokens": 10, "cacheReadTokens": read}


def _routes(tmp_path: Path) -> Path:
    routes = tmp_path / "routes.yml"
    routes.write_text(ROUTES)
    return routes


def _open(tmp_path: Path, b: LogBuilder, name: str) -> Session:
    session = open_session(b.write_jsonl(tmp_path / f"{name}.jsonl"))
    session.use_routes(load_routes(_routes(tmp_path)))
    return session


def _chat(tmp_path: Path, model: str, prompts: tuple[int, ...], reads: tuple[int, ...],
          gaps_s: tuple[int, ...] = (), system: str = "S" * 8000) -> Session:
    """One turn per request, ``gaps_s`` apart (default one minute), each logging a ``prompts[i]``-token
    prompt that read ``reads[i]`` (the system prompt is about 2,000 estimated tokens)."""
    b = LogBuilder(session_id=f"bp-{model}", created_at=T0, provider="openai", model=model, system=system,
                   reasoning_effort=None)
    gaps = gaps_s or (MINUTE,) * (len(prompts) - 1)
    for i, (prompt, read, gap) in enumerate(zip(prompts, reads, (*gaps, 0))):
        with b.turn(f"turn {i}"):
            with b.step():
                _envelope(b, b.assistant(f"answer {i}", usage=_usage(prompt, read)).seq, model)
        b.clock.now += gap * 1000
    return _open(tmp_path, b, f"{model}-{len(prompts)}-{sum(prompts)}-{sum(gaps)}")


def _edited(tmp_path: Path, model: str, gaps_s: tuple[int, int, int] = (MINUTE, MINUTE, MINUTE)) -> Session:
    """Four requests ``gaps_s`` apart: 0 asks for a tool call (a 2,020-token prompt), 1 sends its
    result (3,120), 2 is the next turn (3,200); then the tool result is pruned (an edit in the
    middle, after request 0's prompt) and 3 is a last turn (3,000). Nothing is read."""
    b = LogBuilder(session_id=f"edit-{model}", created_at=T0, provider="openai", model=model, system="S" * 8000,
                   reasoning_effort=None)
    with b.turn("read the file"):
        with b.step():
            reply = b.assistant(tool_calls=[ToolCall("read", {"path": "a.txt"})], usage=_usage(2020, 0))
            _envelope(b, reply.seq, model)
        result = b.tool_result(reply.call_ids[0], "line of the file\n" * 240)
        b.clock.now += gaps_s[0] * 1000
        with b.step():
            _envelope(b, b.assistant("read it", usage=_usage(3120, 0)).seq, model)
    b.clock.now += gaps_s[1] * 1000
    with b.turn("and then?"):
        with b.step():
            _envelope(b, b.assistant("done", usage=_usage(3200, 0)).seq, model)
    b.prune(result)
    b.clock.now += gaps_s[2] * 1000
    with b.turn("once more"):
        with b.step():
            _envelope(b, b.assistant("again", usage=_usage(3000, 0)).seq, model)
    return _open(tmp_path, b, f"edit-{model}-{sum(gaps_s)}")


def _judged(session: Session, *, wire: bool = True) -> list[tuple[Any, ...]]:
    report = cache_report(session, prices=load_prices(search_from="/"), wire=wire)
    return [tuple(v.to_json().get(k, "absent") for k in KEYS) for v in report.verdicts]


def test_the_rule_picks_breakpoints_by_model_version() -> None:
    covered = ("gpt-5.6", "gpt-5.6-mini", "gpt-5.6-luna", "gpt-5.6-2026-06-01", "gpt-5.7", "gpt-5.10", "gpt-6",
               "gpt-6.1-pro")
    earlier = ("gpt-5.5", "gpt-5.5-pro", "gpt-5.5-2026-04-23", "gpt-5", "gpt-5-mini", "gpt-5.4", "gpt-4o", "gpt-4.1",
               "o3", "o4-mini", "local-coder", "gpt-realtime-2.1")
    assert [rule_for("openai", m).breakpoint_based for m in covered] == [True] * len(covered)
    assert [rule_for("openai", m).breakpoint_based for m in earlier] == [False] * len(earlier)
    rule = rule_for("openai", "gpt-5.6")
    assert (rule.family, rule.unit_tokens, rule.min_tokens("gpt-5.6"), rule.ttl_seconds) == ("openai", 1, 1024, 1800.0)
    bp = rule.breakpoints
    assert bp is not None
    assert (bp.lookback, bp.retention, bp.ttls, bp.marker, bp.implicit_roles) == (
        50, "30m", (("30m", 1800.0),), "prompt_cache_breakpoint", ("user", "tool"))
    # the earlier models' rule is what it was; other families have no breakpoints
    old = rule_for("openai", "gpt-5.5")
    assert (old.unit_tokens, old.min_tokens("gpt-5.5"), old.ttl_seconds, old.breakpoint_based) == (128, 1024, 300.0, False)
    assert rule_for("anthropic", "claude-sonnet-4-5").breakpoints is None
    assert rule_for("deepseek", "deepseek-v4-pro").breakpoints is None


def test_a_breakpoint_model_reads_its_retention_from_the_cache_options() -> None:
    rule = rule_for("openai", "gpt-5.6")
    thirty = ("30m", 1800.0)
    for body in (None, b'{"model":"gpt-5.6","messages":[]}', b'{"model":"gpt-5.6","prompt_cache_retention":"24h"}',
                 b'{"model":"gpt-5.6","prompt_cache_options":{"ttl":"30m"}}',
                 b'{"model":"gpt-5.6","prompt_cache_options":{"ttl":"7d"}}'):
        found = rule.retention(body, model="gpt-5.6")
        assert found is not None and (found.name, found.ttl_seconds) == thirty
    # {mode: explicit} (pi-ai's openai-responses with cacheRetention none) turns the implicit breakpoint off
    assert rule.implicit_breakpoint({"prompt_cache_options": {"mode": "explicit"}}) is False
    assert [rule.implicit_breakpoint(b) for b in (None, {}, {"prompt_cache_options": {"mode": "implicit"}})] == [
        True, True, True]


def test_a_growing_conversation_reads_the_previous_prompt_exactly(tmp_path: Path) -> None:
    prompts, reads = (2020, 2170, 2320, 2470), (0, 2020, 2170, 2320)
    session = _chat(tmp_path, "gpt-5.6", prompts, reads)
    body = orjson.loads(session.body(session.requests[1]) or b"null")
    assert body["model"] == "gpt-5.6" and body["prompt_cache_key"] == "bp-gpt-5.6"
    assert "prompt_cache_options" not in body and b"prompt_cache_breakpoint" not in (session.body(session.requests[1]) or b"")
    assert _judged(session) == [
        (0, 0, 0, 0, "as_expected", {}, "30m", 1800.0, None),
        (2020, 2020, 2020, 2020, "as_expected", {}, "30m", 1800.0, 0),
        (2170, 2170, 2170, 2170, "as_expected", {}, "30m", 1800.0, 1),
        (2320, 2320, 2320, 2320, "as_expected", {}, "30m", 1800.0, 2)]
    # a read 128-rounded, as earlier models report it, falls short of the breakpoint by more than nothing
    short = _chat(tmp_path, "gpt-5.6-luna", prompts, (0, 1920, 2048, 2304))
    assert _judged(short)[1:] == [
        (2020, 2020, 2020, 1920, "as_expected", {}, "30m", 1800.0, 0),  # within the 10 % tolerance
        (2170, 2170, 2170, 2048, "as_expected", {}, "30m", 1800.0, 1),
        (2320, 2320, 2320, 2304, "as_expected", {}, "30m", 1800.0, 2)]
    missed = _chat(tmp_path, "gpt-5.6", prompts, (0, 0, 2170, 0))
    assert [row[4:6] for row in _judged(missed)] == [
        ("as_expected", {}), ("best_effort_miss", {"best_effort_miss": 2020}), ("as_expected", {}),
        ("best_effort_miss", {"best_effort_miss": 2320})]
    # the rules the report names are the breakpoint model's
    report = cache_report(session, prices=load_prices(search_from="/"))
    assert {k: report.rules["openai"][k] for k in ("unit_tokens", "min_cacheable_tokens", "ttl_seconds",
                                                    "breakpoint_lookback")} == {
        "unit_tokens": 1, "min_cacheable_tokens": 1024, "ttl_seconds": 1800.0, "breakpoint_lookback": 50}


def test_gpt_5_5_keeps_128_token_increments(tmp_path: Path) -> None:
    session = _chat(tmp_path, "gpt-5.5", (2020, 2170, 2320, 2470), (0, 1920, 2048, 2304))
    assert _judged(session) == [
        (0, 0, 0, 0, "as_expected", {}, "24h", 86400.0, None),
        (1920, 1920, 1920, 1920, "as_expected", {}, "24h", 86400.0, 0),
        (2048, 2048, 2048, 2048, "as_expected", {}, "24h", 86400.0, 1),
        (2304, 2304, 2304, 2304, "as_expected", {}, "24h", 86400.0, 2)]
    assert "breakpoint_lookback" not in cache_report(session, prices=load_prices(search_from="/")).rules["openai"]


def test_an_edit_in_the_middle_reads_only_a_whole_earlier_breakpoint(tmp_path: Path) -> None:
    # the last request holds request 0's prompt (before the pruned result) whole, and no later one:
    # its expected read is that breakpoint's 2,020 tokens, not the longer common prefix
    judged = _judged(_edited(tmp_path, "gpt-5.6"))
    assert judged[:3] == [
        (0, 0, 0, 0, "as_expected", {}, "30m", 1800.0, None),
        (2020, 2020, 2020, 0, "best_effort_miss", {"best_effort_miss": 2020}, "30m", 1800.0, 0),
        (3120, 3120, 3120, 0, "best_effort_miss", {"best_effort_miss": 3120}, "30m", 1800.0, 1)]
    assert judged[3] == (3000, 2020, 2020, 0, "break_explained", {"prune": 980, "best_effort_miss": 2020},
                         "30m", 1800.0, 1)  # the latest request that measured it: request 1 read it whole
    # gpt-5.5 reads the common prefix, into the pruned tool result, rounded down to 128 tokens
    old = _judged(_edited(tmp_path, "gpt-5.5"))
    assert old[3] == (2944, 2816, 2816, 0, "break_explained", {"best_effort_miss": 2816}, "24h", 86400.0, 2)
    # a changed system prompt leaves no breakpoint whole: nothing is expected
    b = LogBuilder(session_id="system", created_at=T0, provider="openai", model="gpt-5.6", system="S" * 8000,
                   reasoning_effort=None)
    for i, system in enumerate(("S" * 8000, "T" + "S" * 7999)):
        b.configure(system=system)
        with b.turn(f"turn {i}"):
            with b.step():
                _envelope(b, b.assistant(f"answer {i}", usage=_usage(2020 + 150 * i, 0)).seq, "gpt-5.6")
        b.clock.now += MINUTE * 1000
    assert _judged(_open(tmp_path, b, "system"))[1] == (
        2020, 0, 0, 0, "break_explained", {"header_change": 2020}, "30m", 1800.0, None)


def test_below_1024_tokens_up_to_the_breakpoint_nothing_is_read(tmp_path: Path) -> None:
    small = _chat(tmp_path, "gpt-5.6", (800, 950), (0, 0), system="S" * 2000)
    assert [row[:5] for row in _judged(small)] == [(0, 0, 0, 0, "below_minimum"), (0, 0, 0, 0, "below_minimum")]
    # a 1,023-token breakpoint is below the strict minimum; a 1,024-token one is read whole
    assert _judged(_chat(tmp_path, "gpt-5.6", (1023, 1100), (0, 0), system="S" * 3000))[1][:5] == (
        0, 0, 0, 0, "below_minimum")
    assert _judged(_chat(tmp_path, "gpt-5.6", (1024, 1100), (0, 1024), system="S" * 3000))[1][:5] == (
        1024, 1024, 1024, 1024, "as_expected")


def test_a_breakpoint_lives_thirty_minutes_refreshed_on_reuse(tmp_path: Path) -> None:
    cold = _chat(tmp_path, "gpt-5.6", (2020, 2170), (0, 0), gaps_s=(31 * MINUTE,))
    assert _judged(cold)[1] == (2020, 2020, 0, 0, "cold_ttl", {"cold_ttl": 2020}, "30m", 1800.0, None)
    warm = _chat(tmp_path, "gpt-5.6", (2020, 2170), (0, 2020), gaps_s=(29 * MINUTE,))
    assert _judged(warm)[1] == (2020, 2020, 2020, 2020, "as_expected", {}, "30m", 1800.0, 0)
    warm_miss = _chat(tmp_path, "gpt-5.6", (2020, 2170), (0, 0), gaps_s=(29 * MINUTE,))
    assert _judged(warm_miss)[1][4:6] == ("best_effort_miss", {"best_effort_miss": 2020})
    # request 0's breakpoint is 40 minutes old at the last request, but request 1 read it at 20 minutes
    refreshed = _judged(_edited(tmp_path, "gpt-5.6", gaps_s=(20 * MINUTE, 10, 20 * MINUTE - 10)))
    assert refreshed[3] == (3000, 2020, 2020, 0, "break_explained", {"prune": 980, "best_effort_miss": 2020},
                            "30m", 1800.0, 1)  # read, and so refreshed, by request 1
    # the same breakpoint unread for 31 minutes (request 1 at 31 minutes is already cold)
    unread = _judged(_edited(tmp_path, "gpt-5.6", gaps_s=(31 * MINUTE, 10, 10)))
    assert unread[1][:5] == (2020, 2020, 0, 0, "cold_ttl")
    assert unread[3][:3] == (3000, 2020, 0)


def test_without_wire_bodies_the_log_json_has_the_breakpoints(tmp_path: Path) -> None:
    session = _chat(tmp_path, "gpt-5.6", (2020, 2170, 2320), (0, 2020, 2170))
    assert [row[:5] for row in _judged(session, wire=False)] == [
        (0, 0, 0, 0, "as_expected"), (2020, 2020, 2020, 2020, "as_expected"), (2170, 2170, 2170, 2170, "as_expected")]


# -- Zero Data Retention -------------------------------------------------------------------------

GAP = 2 * 3600  # two hours: past in_memory, within 24h
NOT_STATED = (1920, 1920, 1920, 0, "best_effort_miss", {"best_effort_miss": 1920}, UNKNOWN, 86400.0, 0)
ZDR = (1920, 1920, 0, 0, "cold_ttl", {"cold_ttl": 1920}, "absent", "absent", None)


def _gpt_5_4(tmp_path: Path) -> tuple[Path, Path]:
    session = _chat(tmp_path, "gpt-5.4", (2020, 2020), (0, 0), gaps_s=(GAP,))
    return Path(session.path), _routes(tmp_path)


def _cli_rows(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> list[tuple[Any, ...]]:
    code, out, err = invoke(monkeypatch, capsys, "cache", *args, "--json")
    assert (code, [line for line in err if not line.startswith("warning: ")]) == (0, [])
    return [tuple(v.get(k, "absent") for k in KEYS) for v in orjson.loads(out)["timeline"]]


def test_the_default_retention_follows_the_stated_zdr_status(tmp_path: Path) -> None:
    rule = rule_for("openai", "gpt-5.4")
    assert rule.default_retention("gpt-5.4") == rule.with_zero_data_retention(False).default_retention("gpt-5.4")
    unknown = rule.default_retention("gpt-5.4")
    assert unknown is not None and (unknown.name, unknown.ttl_seconds) == (UNKNOWN, 86400.0)
    assert rule.with_zero_data_retention(True).default_retention("gpt-5.4") is None  # in_memory: ttl_seconds 300


@pytest.mark.parametrize(("stated", "expected"), [
    (None, NOT_STATED), ("true", ZDR), ("false", NOT_STATED)])  # no ZDR: gpt-5.4 is not listed as "both"
def test_pyproject_states_zdr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                              stated: str | None, expected: tuple[Any, ...]) -> None:
    log, routes = _gpt_5_4(tmp_path)
    text = "[project]\nname = 'x'\n" + ("" if stated is None else
                                        f"\n[tool.dsh-audit.cache]\nopenai-zero-data-retention = {stated}\n")
    (tmp_path / "pyproject.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    assert pyproject_zero_data_retention() == {None: None, "true": True, "false": False}[stated]
    rows = _cli_rows(monkeypatch, capsys, str(log), "--routes", str(routes))
    assert rows == [(0, 0, 0, 0, "as_expected", {}) + rows[0][6:8] + (None,), expected]
    # the library reads it too (every command that judges the cache: check, index, usage, watch)
    assert _judged(_reopen(log, routes))[1] == expected
    # a gate policy ignores the sub-table ([tool.dsh-audit] keys are the gate's)
    assert load_policy(None, search_from=tmp_path).source == ("defaults" if stated is None else
                                                               str((tmp_path / "pyproject.toml").resolve()))


def _reopen(log: Path, routes: Path) -> Session:
    session = open_session(log)
    session.use_routes(load_routes(routes))
    return session


@pytest.mark.parametrize(("flag", "pyproject", "expected"), [
    ("--openai-zdr", None, ZDR), ("--no-openai-zdr", None, NOT_STATED),
    ("--openai-zdr", "false", ZDR), ("--no-openai-zdr", "true", NOT_STATED),
    ("--no-openai-zdr", '"yes"', NOT_STATED)])  # the flag wins; the file is not read then
def test_the_flag_states_zdr_and_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str], flag: str, pyproject: str | None,
                                      expected: tuple[Any, ...]) -> None:
    log, routes = _gpt_5_4(tmp_path)
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(f"[tool.dsh-audit.cache]\nopenai-zero-data-retention = {pyproject}\n")
    monkeypatch.chdir(tmp_path)
    assert _cli_rows(monkeypatch, capsys, str(log), "--routes", str(routes), flag)[1] == expected


@pytest.mark.parametrize(("value", "shown"), [('"yes"', '"yes"'), ("1", "1"), ("[true]", "[true]")])
def test_a_bad_pyproject_value_is_one_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str], value: str, shown: str) -> None:
    log, routes = _gpt_5_4(tmp_path)
    (tmp_path / "pyproject.toml").write_text(f"[tool.dsh-audit.cache]\nopenai-zero-data-retention = {value}\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "cache", str(log), "--routes", str(routes), "--json")
    path = (tmp_path / "pyproject.toml").resolve()
    assert (code, out, err) == (2, "", [
        f"error: {path}:2: [tool.dsh-audit.cache] openai-zero-data-retention must be true or false, not {shown} "
        "(hint: write openai-zero-data-retention = true or false under [tool.dsh-audit.cache])"])
    (tmp_path / "pyproject.toml").write_text("[tool.dsh-audit]\ncache = 3\n")
    code, out, err = invoke(monkeypatch, capsys, "cache", str(log), "--routes", str(routes), "--json")
    assert (code, out, err) == (2, "", [  # worded as check's policy words it
        f"error: {path}:2: [tool.dsh-audit.cache] must be a table (hint: [tool.dsh-audit.cache]: its one key is "
        "openai-zero-data-retention, as --openai-zdr / --no-openai-zdr say; see 'Stating the ZDR status' in "
        "docs/cache-accounting.md)"])
