"""Each request's route (the adapter that sent it) comes from the log, in every view, with no flag."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from dsh_audit.cache import rule_for
from dsh_audit.cli import cli
from dsh_audit.gate import run_check
from dsh_audit.session import Route, RouteEvidence, open_session, route_for
from dsh_audit.testing import LogBuilder

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")
SCENARIOS = sorted(p for p in [*CORPUS.glob("live/*"), *CORPUS.glob("live-pi/*")] if (p / "wire.jsonl").is_file())


def test_route_decisions_and_their_reasons() -> None:
    evidence = RouteEvidence({"gateway": ("openai-completions", 40), "mine": ("deepseek-chat-completions", 9),
                              "vertex": ("google-vertex", 12)})
    assert route_for("gateway", evidence) == Route("gateway", "openai", "openai-completions",
                                                   "pi-ai's replay envelope at seq 40")
    assert route_for("mine", evidence) == Route("mine", "deepseek", "deepseek-chat-completions",
                                                "a native DeepSeek message at seq 9")
    assert route_for("deepseek-official").adapter == "deepseek"
    assert route_for("anthropic") == Route("anthropic", "anthropic", "anthropic-messages", "pi-ai's catalog")
    assert route_for("anthropic", forced="openai").adapter == "openai"
    assert route_for("gateway", evidence, declared={"gateway": "openai-completions"}) == Route(
        "gateway", "openai", "openai-completions", "the route configuration (--routes)")
    # a route file that contradicts what the log shows DSH sent settles nothing: unrendered, both named
    assert route_for("gateway", evidence, declared={"gateway": "anthropic-messages"}) == Route(
        "gateway", None, "openai-completions", "provider 'gateway': pi-ai's replay envelope at seq 40 shows api "
        "'openai-completions' but the route configuration (--routes) says 'anthropic-messages'; pass --routes FILE "
        "with the route configuration DSH had, or --adapter")
    vertex = route_for("vertex", evidence)
    assert vertex.adapter is None and "renders no 'google-vertex' bodies" in vertex.because
    unknown = route_for("my-gateway")
    assert unknown.adapter is None and "--routes FILE" in unknown.because and "--adapter" in unknown.because
    assert route_for(None).because == "the request names no provider (no request/header before it)"


@needs_corpus
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[f"{p.parent.name}/{p.name}" for p in SCENARIOS])
def test_diff_with_no_adapter_flag_calls_every_captured_body_identical(scenario: Path) -> None:
    # a pi-ai scenario's route configuration is given as DSH had it (--routes): the log does not
    # record a hand-declared route's model facts
    routes = scenario / "inputs" / "pi-ai-routes.patch.yml"
    result = CliRunner().invoke(cli, ["diff", str(scenario / "session-logs"), "--capture",
                                      str(scenario / "wire.jsonl"), "--json",
                                      *(["--routes", str(routes)] if routes.is_file() else [])],
                                catch_exceptions=False)
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert rows and {r["verdict"] for r in rows if r["kind"] in ("loop", "title")} == {"identical"}, rows


@needs_corpus
def test_a_catalog_route_needs_no_route_file_and_a_declared_one_says_it_does() -> None:
    for name, verdicts in (("c1-anthropic-tools", {"identical"}), ("c3-openai-compat", {"unrendered"})):
        scenario = CORPUS / "live-pi" / name
        result = CliRunner().invoke(cli, ["diff", str(scenario / "session-logs"), "--capture",
                                          str(scenario / "wire.jsonl"), "--json"], catch_exceptions=False)
        rows = [json.loads(line) for line in result.output.splitlines()]
        assert {r["verdict"] for r in rows} == verdicts
    assert [r["note"] for r in rows] == [
        "order (no session header); cannot render: no pi-ai model facts for local-openai/local-coder: a hand-declared route's models are "
        "described by DSH's route configuration, which the log does not record (hint: pass --routes FILE (DSH's "
        "llm-pi-ai route configuration), or record the log in a DSH home (<home>/sessions/...) and declare the route in "
        "<home>/cordis.patch.yml, read when no --routes is given)"] * len(rows)


@needs_corpus
def test_check_passes_on_the_pi_ai_routes_with_no_policy_given_the_route_file() -> None:
    result = run_check([CORPUS / "live-pi"], routes=CORPUS / "live-pi" / "c3-openai-compat" / "inputs" /
                       "pi-ai-routes.patch.yml")
    assert result.passed, [f.message for f in result.findings if f.fails]
    assert len(result.sessions) == 2  # each scenario's persisted zstd log (its decompressed copy is the same)
    assert {row.verdict for c in result.sessions for row in c.captures} == {"identical"}


@needs_corpus
def test_cache_rules_follow_the_route() -> None:
    log = next((CORPUS / "live-pi" / "c3-openai-compat" / "session-logs").glob("*.jsonl"))
    session = open_session(log)
    assert {session.route(r).adapter for r in session.requests} == {"openai"}
    result = CliRunner().invoke(cli, ["cache", "--json", str(log), "--routes", str(
        CORPUS / "live-pi" / "c3-openai-compat" / "inputs" / "pi-ai-routes.patch.yml")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert list(json.loads(result.stdout)["rules"]) == ["openai"]  # a 'local-openai' provider id
    # the wire.jsonl found beside the log prices its title call, as --capture with it would
    assert result.stderr == "note: 1 request(s) priced from the capture's usage (their log holds none)\n"


def test_the_server_that_caches_picks_the_rule_the_route_picks_the_body() -> None:
    """DeepSeek's own API through pi-ai's openai-completions route caches as DeepSeek does (and is
    priced as DeepSeek): its rule is DeepSeek's, measured over the route's body; a gateway of any
    other name speaking openai-completions takes OpenAI's; a route of a known provider keeps it."""
    deepseek = rule_for("deepseek", "deepseek-v4-pro", adapter="openai")
    assert (deepseek.family, deepseek.wire_adapter, deepseek.min_cacheable_tokens) == ("deepseek", "openai", 64)
    gateway = rule_for("local-openai", "local-coder", adapter="openai")
    assert (gateway.family, gateway.wire_adapter) == ("openai", "openai")
    assert (rule_for("openai", "gpt-5", adapter="responses").family,
            rule_for("openai", "gpt-5", adapter="responses").wire_adapter) == ("openai", "responses")
    assert rule_for("anthropic", "claude-sonnet-4-5", adapter="anthropic").family == "anthropic"
    assert rule_for("deepseek", "deepseek-v4-pro", adapter="deepseek").family == "deepseek"


def test_an_unknown_route_is_unrendered_with_its_reason_never_different(tmp_path: Path) -> None:
    builder = LogBuilder(session_id="s-route", provider="my-gateway")
    with builder.turn("hello"):
        with builder.step():
            builder.assistant("Hi.")
    path = builder.write_jsonl(tmp_path / "session.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for record in records:  # no message says which adapter served 'my-gateway'
        if record.get("type") == "assistant/message":
            record["data"]["message"]["source"] = {"kind": "model", "provider": "elsewhere", "model": "m"}
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    body = CliRunner().invoke(cli, ["render", str(path), "0", "--adapter", "deepseek"]).stdout_bytes
    assert body.startswith(b'{"model":')
    capture = tmp_path / "wire.jsonl"
    capture.write_text(json.dumps({"seq": 1, "method": "POST", "path": "/chat/completions", "body": body.decode(),
                                   "headers": {"x-deepseek-harness-session-id": "s-route"}}) + "\n")
    result = CliRunner().invoke(cli, ["diff", str(path), "--capture", str(capture), "--json"],
                                catch_exceptions=False)
    rows = [json.loads(line) for line in result.output.splitlines()]
    assert [(r["kind"], r["verdict"]) for r in rows] == [("loop", "unrendered")]
    assert "unknown route: provider 'my-gateway'" in rows[0]["note"] and "--routes FILE" in rows[0]["note"]
    forced = CliRunner().invoke(cli, ["diff", str(path), "--capture", str(capture), "--json", "--adapter", "deepseek"],
                                catch_exceptions=False)
    assert [json.loads(line)["verdict"] for line in forced.output.splitlines()] == ["identical"]
    render = CliRunner().invoke(cli, ["render", str(path), "0"])
    assert render.exit_code != 0 and "unknown route: provider 'my-gateway'" in str(render.exception)
