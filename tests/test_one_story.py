"""One story in every view: breaks, explain, cache, check, report, index and stats count the same
breaks, per log, over the whole corpus and the sample logs and over generated sessions (a break is
what attribution calls a break, an unexplained one what its cause says), and the regressions found
by running every view over logs beyond the corpus."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_audit.attribution import UNEXPLAINED_CAUSES, attribute_paths
from dsh_audit.cache import BREAKS, cache_group, cache_report
from dsh_audit.cli import cli
from dsh_audit.fleet import fleet_stats, index_logs
from dsh_audit.gate import Policy, run_check
from dsh_audit.log import discover
from dsh_audit.report import SessionPages, build_report_data
from dsh_audit.session import Failure, run_groups
from dsh_audit.strategies import sessions
from dsh_audit.testing import LogBuilder, ToolCall

from _cli import invoke
from _properties import examples, folder

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus"
needs_corpus = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")


@pytest.fixture(scope="module")
def logs() -> list[Path]:
    return discover([CORPUS, ROOT / "sample_logs"])


@pytest.fixture(scope="module")
def breaks(logs: list[Path]) -> dict[str, int]:
    """``dsh-audit breaks``: log path -> breaks attribution found (children with their parents)."""
    attributions, _ = attribute_paths(logs, lenient=True)
    return {a.path or "": sum(t.is_break for t in a.transitions) for a in attributions}


@pytest.fixture(scope="module")
def judged(logs: list[Path]) -> Result:
    """``dsh-audit cache --json --lenient`` over the corpus and the sample logs: a report per log
    it reads (``cache_group`` on each), made once for the tests below, which only read it."""
    return CliRunner().invoke(cli, ["cache", "--json", "--lenient", *(str(log) for log in logs)])


@needs_corpus
def test_cache_counts_the_breaks_attribution_finds(judged: Result, breaks: dict[str, int]) -> None:
    assert judged.exit_code in (0, 1), judged.output  # 1: an unexplained break; a crash lists no report
    counted = {r["path"]: r["breaks"] for r in map(json.loads, judged.stdout.splitlines())}
    assert counted == breaks
    assert sum(breaks.values()) == 50  # the corpus is full of header changes, compactions, forks


@needs_corpus
def test_check_and_index_count_the_same_breaks(logs: list[Path], breaks: dict[str, int], tmp_path: Path) -> None:
    result = run_check(logs, lenient=True)
    checked = {c.path: sum(t.is_break for t in c.transitions) for c in result.sessions if c.error is None}
    assert checked == breaks
    assert {c.path: c.cache.break_count for c in result.sessions if c.error is None} == breaks

    db = tmp_path / "index.sqlite"
    index_logs(logs, db, lenient=True)
    connection = sqlite3.connect(db)
    by_path = {str(Path(p).resolve()): p for p in breaks}
    table = Counter(by_path[p] for (p,) in connection.execute("SELECT path FROM breaks"))
    classified = Counter(by_path[p] for (p,) in connection.execute(
        f"SELECT path FROM requests WHERE classification IN {BREAKS!r}"))
    connection.close()
    expected = {p: n for p, n in breaks.items() if n}
    assert dict(table) == expected
    assert dict(classified) == expected
    totals = fleet_stats(db).totals
    assert totals["attribution_breaks"] == totals["cache_breaks"] == sum(breaks.values())


@needs_corpus
def test_breaks_cost_what_cache_judged_over_the_corpus(logs: list[Path], judged: Result) -> None:
    # 50, as every view counts them
    assert _breaks_cost_what_cache_judged(CliRunner(), logs, "--lenient", judged=judged) == 50


# -- every view over generated sessions -------------------------------------------------------------

_HOUR_MS = 3_600_000
_TOOLS = [{"type": "function", "function": {
    "name": "read", "description": "Read a file.",
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}}]
#: What a generated session gets after its drawn turns: the parts the strategies leave out.
_EXTRAS = ("title", "search", "idle-past-ttl", "idle-short", "retry-with-usage", "retry-without-usage",
           "no-usage", "partial-usage", "cache-reads", "switch-provider", "effort", "subagent")
GENERATED = sessions(turns=(1, 3), max_steps=3, retries=2, compactions=2, prunes=1, header_changes=3, resumes=1,
                     forks=1)


def _extend(builder: LogBuilder, extras: list[str], where: Path) -> list[Path]:
    """Play ``extras`` on a generated session's builder; returns the subagent logs written."""
    children: list[Path] = []
    for k, extra in enumerate(extras):
        if extra == "title":
            builder.title(f"Title {k}")
            continue
        if extra == "search":
            builder.append("web/deepseek-search-llm-request", {
                "endpoint": "https://api.deepseek.com/anthropic/v1/messages", "apiVersion": "2023-06-01",
                "body": {"model": "deepseek-chat", "max_tokens": 512,
                         "messages": [{"role": "user", "content": f"q{k}"}]}})
            continue
        if extra == "subagent":
            child = LogBuilder(session_id=f"{builder.session_id}-sub-{k}", parent_session=builder.session_id,
                               origin="subagent", delegation_depth=1, created_at=builder.clock.now)
            child.append("subagent/descriptor", {"version": 2, "mode": "continuable", "provider": "spawn",
                                                 "label": "sub", "agentProvider": "deepseek-official",
                                                 "agentModel": "deepseek-v4-flash"})
            child.end_seed()
            with child.turn("Count the bullets."):
                with child.step():
                    child.assistant("3", usage={"inputTokens": 900, "outputTokens": 1, "cacheReadTokens": 128})
            path = where / child.session_id / "session.jsonl"
            path.parent.mkdir(parents=True)
            child.write_jsonl(path, packed=False)
            children.append(path)
            continue
        if extra == "idle-past-ttl":
            builder.clock.now += 4 * _HOUR_MS  # past DeepSeek's 3 h TTL
        elif extra == "idle-short":
            builder.clock.now += 6 * 60_000  # past Anthropic's and OpenAI's 5 min, not DeepSeek's
        elif extra == "switch-provider":
            builder.configure(provider="anthropic", model="claude-sonnet-4-5")
        elif extra == "effort":
            builder.configure(reasoning_effort="max")
        usage: dict[str, int] | None = {"inputTokens": 2000 + 300 * k, "outputTokens": 5}
        if extra == "no-usage":
            usage = None
        elif extra == "partial-usage":
            usage = {"outputTokens": 5}
        elif extra == "cache-reads":
            usage = {"inputTokens": 700, "outputTokens": 5, "cacheReadTokens": 1280 + 128 * k}
        with builder.turn(f"Go on ({extra})."):
            with builder.step():
                if extra == "retry-with-usage":
                    builder.retry(usage={"inputTokens": 1500, "outputTokens": 0, "cacheReadTokens": 0})
                elif extra == "retry-without-usage":
                    builder.retry(partial_text="half an answer")
                builder.assistant(f"Done {k}.", usage=usage)
    return children


def _story(logs: list[Path], tmp: Path) -> dict[str, Counter[tuple[str, int, str]]]:
    """``(log, request, cause)`` of every break, as each view counts it (a log by its real path)."""
    real = os.path.realpath
    found: dict[str, Counter[tuple[str, int, str]]] = {}
    attributions, _ = attribute_paths(logs)
    found["breaks"] = Counter((real(a.path or ""), t.request, t.cause or "unexplained")
                              for a in attributions for t in a.transitions if t.is_break)
    reports = run_groups(logs, partial(cache_group, tokenizer="estimate"))
    found["cache"] = Counter((real(r.path), v.index, v.cause or "?") for r in reports if not isinstance(r, Failure)
                             for v in r.verdicts if v.classification in BREAKS)
    found["cache_by_cause"] = Counter((real(r.path), -1, cause) for r in reports if not isinstance(r, Failure)
                                      for cause, n in r.breaks_by_cause.items() for _ in range(n))
    checked = run_check(logs, outline=True)
    found["check"] = Counter((real(c.path), t.request, t.cause or "unexplained")
                             for c in checked.sessions for t in c.transitions if t.is_break)
    found["check_cache"] = Counter((real(c.path), v.index, v.cause or "?") for c in checked.sessions
                                   if c.cache is not None for v in c.cache.verdicts if v.classification in BREAKS)
    page = build_report_data(run_check(logs, record=SessionPages()))
    found["report"] = Counter((real(s["path"]), b["i"], b["cause"] or "unexplained")
                              for s in page["sessions"] for b in s["overview"]["break_details"])
    found["report_requests"] = Counter((real(s["path"]), r["i"], r["ccause"]) for s in page["sessions"]
                                       for r in s["requests"] if r["cls"] in BREAKS)
    db = tmp / "index.sqlite"
    index_logs(logs, db)
    connection = sqlite3.connect(db)
    try:
        found["index"] = Counter((real(p), i, c or "unexplained")
                                 for p, i, c in connection.execute("SELECT path, request, cause FROM breaks"))
        found["index_requests"] = Counter((real(p), i, c) for p, i, c in connection.execute(
            f"SELECT path, idx, cause FROM requests WHERE classification IN {BREAKS!r}"))
    finally:
        connection.close()
    stats = fleet_stats(db)
    found["stats"] = Counter({("", -1, c["cause"]): c["cache_breaks"] for c in stats.by_cause if c["cache_breaks"]})
    found["stats_attribution"] = Counter({("", -1, c["cause"]): c["attribution_breaks"] for c in stats.by_cause
                                          if c["attribution_breaks"]})
    assert stats.totals["attribution_breaks"] == stats.totals["cache_breaks"] == sum(found["breaks"].values())
    # unexplained breaks: one definition (Transition.is_unexplained) in every view that counts them
    unexplained = Counter(real(a.path or "") for a in attributions for t in a.transitions if t.is_unexplained)
    assert Counter(real(r.path) for r in reports if not isinstance(r, Failure)
                   for v in r.verdicts if v.classification == "break_unexplained") == unexplained
    assert +Counter({real(s["path"]): s["unexplained"] for s in page["sessions"]}) == unexplained
    # explain, one log at a time, on every break breaks lists
    runner = CliRunner()
    explained: Counter[tuple[str, int, str]] = Counter()
    for path, request, _ in found["breaks"]:
        result = runner.invoke(cli, ["explain", path, str(request), "--json"])
        transition = json.loads(result.output)
        assert transition["verdict"] == "break", (path, request, transition)
        explained[(path, request, transition["cause"] or "unexplained")] += 1
    found["explain"] = explained
    _breaks_cost_what_cache_judged(runner, logs)
    return found


def _breaks_cost_what_cache_judged(runner: CliRunner, logs: list[Path], *options: str,
                                   judged: Result | None = None) -> int:
    """``breaks --json`` says what each break cost: the lost tokens of its request in ``cache
    --json``'s timeline (null, with why, when its cache reads were not logged) and their cost (the
    verdict's, $0 when it lost none), for every break ``breaks`` lists; returns how many it listed.
    ``judged``: that ``cache --json`` run over the same logs with the same options, when made already."""
    real = os.path.realpath
    argv = [*options, *(str(log) for log in logs)]
    if judged is None:
        judged = runner.invoke(cli, ["cache", "--json", *argv])
    verdicts = {(real(r["path"]), v["index"]): v for r in map(json.loads, judged.stdout.splitlines())
                for v in r["timeline"]}
    listed = runner.invoke(cli, ["breaks", "--json", "--cost", *argv])
    rows = list(map(json.loads, listed.stdout.splitlines()))
    # both ran to the end (a crash would list no row and pass the checks below): 1 is an unexplained break
    assert listed.exit_code == judged.exit_code in (0, 1), (judged.output, listed.output)
    assert len(rows) == sum(v["classification"] in BREAKS for v in verdicts.values())
    for row in rows:
        verdict = verdicts[(real(row["path"]), row["request"])]
        # a break whose cache reads were not logged lost an unknown amount in cache's timeline too
        assert (verdict["lost_tokens_by_cause"] is None) == (verdict["actual_cache_read"] is None), verdict
        lost = None if verdict["lost_tokens_by_cause"] is None else sum(verdict["lost_tokens_by_cause"].values())
        cost = verdict["lost_cost_usd"] if lost else None if lost is None else 0.0
        assert (row["lost_tokens"], row["lost_cost_usd"]) == (lost, cost), (row["path"], row["request"], verdict)
        assert lost is not None or verdict["lost_cost_usd"] is None, verdict
        assert (row["unpriced_reason"] is None) == (cost is not None), row
    return len(rows)


def _by_cause(found: Counter[tuple[str, int, str]]) -> Counter[str]:
    return Counter(cause for (_, _, cause), n in found.items() for _ in range(n))


@pytest.mark.slow  # 25 examples take ~5 s: the default run takes 12 (tests/README.md, slow property runs)
@settings(max_examples=examples(12, 25), suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(GENERATED, st.lists(st.sampled_from(_EXTRAS), max_size=4), st.booleans(), st.sampled_from([0, 2, 4]),
       st.booleans())
def test_every_view_tells_the_same_story_of_a_generated_session(session, extras, apart, version, compressed):
    """Breaks, explain, cache, check, report, index and stats list the same breaks with the same causes
    over a generated session (parent, fork children, a subagent), its retries with and without usage,
    title and search calls, idle gaps and provider switches, in format v0, v2 or v4, plain or zstd;
    given as one folder, or one log at a time."""
    with folder() as where:
        subagents = _extend(session.builder, extras, where)
        logs = [*session.write_all(where, version=version, compressed=compressed), *subagents]
        groups = [[log] for log in logs] if apart else [logs]
        for n, given in enumerate(groups):
            (where / f"db-{n}").mkdir()
            found = _story(given, where / f"db-{n}")
            breaks = found.pop("breaks")
            for view in ("cache", "check", "check_cache", "report", "report_requests", "index", "index_requests",
                         "explain"):
                assert found[view] == breaks, view
            causes = _by_cause(breaks)
            for view in ("cache_by_cause", "stats", "stats_attribution"):
                assert _by_cause(found[view]) == causes, view


# -- regressions: disagreements found by running every view over logs beyond the corpus -------------


def test_a_break_whose_cache_reads_were_not_logged_lost_an_unknown_amount_in_every_view(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """DSH's native DeepSeek adapter logged no cacheReadTokens for the break (request 2): `breaks
    --cost`, `explain`, `cache` (timeline, totals, ledger), `index`/`stats` and the report's data
    all say what it lost is unknown (null, $?), never 0, and count it."""
    b = LogBuilder(session_id="s-unknown", created_at=1_800_000_000_000, model="deepseek-v4-flash",
                   system="S" * 8000)
    with b.turn("one"), b.step():
        b.assistant("one", usage={"inputTokens": 2000, "outputTokens": 10, "cacheReadTokens": 0})
    with b.turn("two"), b.step():
        b.assistant("two", usage={"inputTokens": 100, "outputTokens": 10, "cacheReadTokens": 1920})
    b.configure(system="T" * 8000)
    with b.turn("three"), b.step():
        b.assistant("three", usage={"inputTokens": 2100, "outputTokens": 10})
    log = b.write_jsonl(tmp_path / "s-unknown" / "session.jsonl", packed=False)
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> tuple[int, str, list[str]]:
        return invoke(monkeypatch, capsys, *args)

    assert _breaks_cost_what_cache_judged(CliRunner(), [log]) == 1
    code, out, err = run("breaks", "--json", "--cost", str(log))
    (row,) = map(json.loads, out.splitlines())
    assert (code, err, row["request"], row["lost_tokens"], row["lost_cost_usd"]) == (0, [], 2, None, None)
    code, out, err = run("cache", "--json", str(log))
    report = json.loads(out)
    assert (code, err) == (0, [])
    assert [(v["index"], v["lost_tokens_by_cause"], v["lost_cost_usd"]) for v in report["timeline"]] == [
        (0, {}, 0), (1, {}, 0), (2, None, None)]
    assert (report["lost_tokens_by_cause"], report["lost_cost_usd"], report["lost_unknown_requests"]) == ({}, None, 1)
    cost = report["cost"]
    assert {k: cost[k] for k in ("break_cost_usd", "lost_requests", "lost_unpriced", "break_requests",
                                 "break_unpriced", "lost_unknown_requests")} == {
        "break_cost_usd": None, "lost_requests": 1, "lost_unpriced": 1, "break_requests": 1, "break_unpriced": 1,
        "lost_unknown_requests": 1}
    index_logs([log], tmp_path / "index.sqlite")
    stats = fleet_stats(tmp_path / "index.sqlite")
    assert (stats.totals["lost_tokens"], stats.totals["lost_cost_usd"], stats.totals["lost_unknown_requests"]) == (
        0, None, 1)
    assert (stats.cost["break_cost_usd"], stats.cost["lost_cost_usd"], stats.cost["break_requests"],
            stats.cost["break_unpriced"], stats.cost["lost_unknown_requests"]) == (None, None, 1, 1, 1)
    (top,) = stats.top_sessions
    assert (top["break_cost_usd"], top["lost_unknown_requests"]) == (None, 1)
    assert "break_unknown" not in top
    (session,) = build_report_data(run_check([log], record=SessionPages()))["sessions"]
    assert session["overview"]["break_details"] == [
        {"i": 2, "cause": "header_change", "lost": None, "cost": None, "pot": 1920, "fails": False}]


# -- regressions found by running every view over logs beyond the corpus ------------------------------


def test_a_retried_prompt_sets_the_expected_read_from_its_logged_retry(tmp_path: Path) -> None:
    """A failed attempt without usage and its retry send the same prompt; the next step extends the
    retry (attribution: extension of request 1). The expected read came from the failed attempt's own
    count (the first of equal prefixes), 384 instead of the retry's logged 5000, and the step read as
    ``cold_ttl`` milliseconds after the retry: explain and cache told two stories."""
    b = LogBuilder(session_id="retried", tools=_TOOLS)
    with b.turn("Read a.txt and tell me what it says. " * 40):
        with b.step():
            b.retry()  # no usage logged
            reply = b.assistant("Reading.", tool_calls=[ToolCall("read", {"path": "a.txt"})],
                                usage={"inputTokens": 5000, "outputTokens": 9, "cacheReadTokens": 0})
            b.tool_result(reply.call_ids[0], "hello")
        with b.step():
            b.assistant("It says hello.", usage={"inputTokens": 4100, "outputTokens": 5, "cacheReadTokens": 1024})
    log = b.write_jsonl(tmp_path / "retried" / "session.jsonl", packed=False)
    (attribution,), _ = attribute_paths([log])
    assert [(t.request, t.previous, t.relation, t.verdict) for t in attribution.transitions] == [
        (0, None, "first", "first"), (1, 0, "retry", "cache_safe_change"), (2, 1, "step", "extension")]
    report = cache_report(log, tokenizer="estimate")
    assert [(v.index, v.attempt, v.prompt_tokens, v.potential, v.expected_any, v.expected, v.actual, v.source_index,
             v.classification, v.lost) for v in report.verdicts] == [
        (0, 1, None, 0, 0, 0, None, None, "usage_unknown", {}),
        (1, 2, 5000, 384, 384, 384, 0, 0, "write_not_landed", {"write_not_landed": 384}),
        (2, 1, 5124, 4992, 4992, 4992, 1024, 1, "write_not_landed", {"write_not_landed": 3968}),
    ]


@needs_corpus
def test_an_unrecorded_mutation_is_unexplained_in_every_view(tmp_path: Path) -> None:
    """With a capture beside the log, check attributes with it: a dropped header change makes request 3
    an ``unrecorded_mutation`` break. cache (``break_unexplained``) and check (``DSH821``) called it
    unexplained, the report page counted it explained ("passed: 5 explained break(s)", unexplained 0)."""
    scenario = tmp_path / "c-change"
    shutil.copytree(CORPUS / "live" / "c-change" / "session-logs", scenario / "session-logs")
    shutil.copy(CORPUS / "live" / "c-change" / "wire.jsonl", scenario / "wire.jsonl")
    log = next((scenario / "session-logs").glob("*.jsonl"))
    lines = []
    for line in log.read_text().splitlines():
        if line.startswith('{"type":"request/header","seq":51,'):  # the effort change: DSH skips an ignorable event
            event = json.loads(line)
            line = json.dumps({"type": "x-test/dropped", "seq": 51, "time": event["time"], "data": {},
                               "ignorable": True}, separators=(",", ":"))
        lines.append(line)
    log.write_text("\n".join(lines) + "\n")

    policy = Policy(fail_on_unexplained_break=False, capture_fail=())
    result = run_check([scenario], policy=policy, record=SessionPages())
    (check,) = result.sessions
    assert [(t.request, t.cause, t.is_unexplained) for t in check.transitions if t.is_break] == [
        (2, "header_change", False), (3, "unrecorded_mutation", True), (4, "header_change", False),
        (6, "header_change", False), (7, "header_change", False)]
    assert "unrecorded_mutation" in UNEXPLAINED_CAUSES
    assert check.cache is not None
    assert check.cache.classification_counts["break_unexplained"] == 1
    assert [(f.rule, f.request, f.fails) for f in result.findings] == [
        ("DSH507", None, False), ("DSH811", 3, False), ("DSH821", 3, False)]
    (page,) = build_report_data(result)["sessions"]
    assert (page["unexplained"], page["verdict"]) == (
        1, "passed: 4 explained break(s), 1 unexplained break(s) the policy allows")


def _edited_capture(scenario: Path) -> Path:
    """``b-tools`` copied to ``scenario`` with one character of message 1 of the body on line 5 of
    its wire.jsonl changed (its ``body_sha256`` updated): what a proxy rewriting a request leaves."""
    shutil.copytree(CORPUS / "live" / "b-tools", scenario)
    capture = scenario / "wire.jsonl"
    lines = capture.read_text().splitlines()
    record = json.loads(lines[4])
    assert json.loads(record["body"])["messages"][1]["content"].startswith("Look at hello.txt ")
    record["body"] = record["body"].replace("Look at hello.txt ", "Look at hellO.txt ", 1)
    record["body_sha256"] = hashlib.sha256(record["body"].encode()).hexdigest()
    lines[4] = json.dumps(record)
    capture.write_text("\n".join(lines) + "\n")
    (log,) = (scenario / "session-logs").glob("*.jsonl")
    return log


def _breaks_listed(run: Callable[..., tuple[int, str, list[str]]], *argv: str) -> tuple[int, list[tuple[int, str]]]:
    code, out, _ = run("breaks", "--json", *argv)
    return code, [(t["request"], t["cause"]) for t in map(json.loads, out.splitlines())]


@needs_corpus
def test_a_capture_beside_the_log_tells_every_view_the_same_breaks(tmp_path: Path, monkeypatch, capsys) -> None:
    """check and report compared a log with the wire.jsonl found beside it and listed the requests
    whose captured bodies break the prefix where the log records nothing (``unrecorded_mutation``);
    breaks, explain, cache and index read the log alone and listed none. Every view now finds the
    same capture, or takes ``--capture``."""
    log = _edited_capture(tmp_path / "b-tools")
    run = partial(invoke, monkeypatch, capsys)
    expected = [(4, "unrecorded_mutation"), (5, "unrecorded_mutation")]
    assert _breaks_listed(run, str(log)) == (1, expected)

    explained = []
    for index in range(9):
        code, out, err = run("explain", str(log), str(index), "--json")
        assert (code, err) == (0, [])
        transition = json.loads(out)
        if transition["verdict"] == "break":
            explained.append((transition["request"], transition["cause"]))
    assert explained == expected

    code, out, err = run("cache", str(log), "--json")  # the capture found prices the title call, as given (tour 38)
    assert (code, err) == (1, ["note: 1 request(s) priced from the capture's usage (their log holds none)"])
    report = json.loads(out)
    assert [(v["index"], v["cause"]) for v in report["timeline"] if v["classification"] in BREAKS] == expected
    assert (report["breaks"], report["breaks_by_cause"]) == (2, {"unrecorded_mutation": 2})

    code, out, _ = run("check", str(log), "--json-report", "-")
    assert code == 1
    (checked,) = json.loads(out)["sessions"]
    assert checked["capture"] == str(tmp_path / "b-tools" / "wire.jsonl")
    assert [(b["request"], b["cause"]) for b in checked["break_details"]] == expected

    db = tmp_path / "index.sqlite"
    code, _, err = run("index", str(log), "--db", str(db))
    assert (code, err) == (0, [])
    connection = sqlite3.connect(db)
    try:
        assert connection.execute("SELECT request, cause FROM breaks ORDER BY request").fetchall() == expected
    finally:
        connection.close()

    page = tmp_path / "report.html"
    code, _, _ = run("report", str(log), "-o", str(page))
    assert code == 0
    blob = re.search(r'<script type="application/json" id="dsh-data">(.*?)</script>', page.read_text(), re.S)
    assert blob is not None
    (shown,) = json.loads(blob.group(1))["sessions"]
    assert [(b["i"], b["cause"]) for b in shown["overview"]["break_details"]] == expected


@needs_corpus
def test_breaks_takes_the_capture_it_is_given(tmp_path: Path, monkeypatch, capsys) -> None:
    """``breaks --capture`` compares every log with that capture, not the one beside it."""
    log = _edited_capture(tmp_path / "b-tools")
    run = partial(invoke, monkeypatch, capsys)
    edited = tmp_path / "b-tools" / "wire.jsonl"
    assert _breaks_listed(run, str(log), "--capture", str(CORPUS / "live" / "b-tools" / "wire.jsonl")) == (0, [])
    alone = tmp_path / "alone" / "session.jsonl"
    alone.parent.mkdir()
    shutil.copy(log, alone)
    assert _breaks_listed(run, str(alone)) == (0, [])
    assert _breaks_listed(run, str(alone), "--capture", str(edited)) == (
        1, [(4, "unrecorded_mutation"), (5, "unrecorded_mutation")])


@needs_corpus
def test_a_request_judged_from_the_capture_tells_every_view_the_same_story(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Session 38: a torn log (a crash before request 4's usage chunk) given ``--capture``: request 4
    is priced and judged from the captured response's usage (a break that lost 1152 tokens, not an
    unknown amount) in cache, breaks --cost, check, sessions, the report's data and index/stats alike."""
    (source,) = (CORPUS / "live" / "c-change" / "session-logs").glob("*.jsonl")
    log = tmp_path / "torn" / "session.jsonl"
    log.parent.mkdir()
    log.write_text("".join(source.read_text("utf-8").splitlines(keepends=True)[:81]), "utf-8")
    wire = str(CORPUS / "live" / "c-change" / "wire.jsonl")
    run = partial(invoke, monkeypatch, capsys)
    # breaks, cache reads and prompt tokens (hit ratio), tokens lost, what the breaks cost, what the session cost
    story = (3, 14720, 32823, 9088, 0.005798144, 0.00823625)

    code, out, _ = run("cache", "--json", "--capture", wire, str(log))
    report = json.loads(out)
    assert (code, report["breaks"], report["actual_cache_read"], report["prompt_tokens"],
            sum(report["lost_tokens_by_cause"].values()), report["cost"]["break_cost_usd"],
            report["cost"]["cost_usd"]["total"]) == (0, *story)
    assert [v["lost_tokens_by_cause"] for v in report["timeline"] if v["classification"] in BREAKS] == [
        {"header_change": 7936}, {}, {"header_change": 1152}]
    assert _breaks_cost_what_cache_judged(CliRunner(), [log], "--capture", wire) == 3

    code, out, _ = run("check", "--json-report", "-", "--capture", wire, str(log))
    (checked,) = json.loads(out)["sessions"]
    assert (checked["breaks"], checked["cache"]["actual_cache_read"], checked["cache"]["prompt_tokens"],
            sum(checked["cost"]["lost_tokens_by_cause"].values()), checked["cost"]["break_cost_usd"],
            checked["cost"]["cost_usd"]["total"]) == story
    code, out, _ = run("sessions", "--json", "--capture", wire, str(log))
    (row,) = map(json.loads, out.splitlines())
    assert (row["breaks"], row["actual_cache_read"], row["prompt_tokens"], row["cost_usd"]["total"]) == (
        story[0], story[1], story[2], story[5])

    (page,) = build_report_data(run_check([log], captures=wire, record=SessionPages()))["sessions"]
    assert [(b["i"], b["lost"], b["cost"]) for b in page["overview"]["break_details"]] == [
        (2, 7936, 0.005063168), (3, 0, 0), (4, 1152, 0.000734976)]

    db = tmp_path / "index.sqlite"
    index_logs([log], db, capture=wire)
    stats = fleet_stats(db)
    assert (stats.totals["cache_breaks"], stats.totals["actual_cache_read"], stats.totals["prompt_tokens"],
            stats.totals["lost_tokens"], stats.cost["break_cost_usd"], stats.cost["cost_usd"]["total"]) == story
    # the requests' tokens are the ledger's: the capture's for the requests it priced
    assert stats.totals["tokens"] == {k: v for k, v in stats.cost["tokens"].items() if k != "reasoning"} == {
        "cache_miss": 18103, "cache_read": 14720, "cache_write": 0, "output": 53, "total": 32876}


@needs_corpus
def test_every_lost_figure_stands_beside_its_base_in_every_view(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 11 item 3: every "lost" figure beside the figure it is measured from (lost = reusable -
    actual; c-change request 7: 7680 - 4800 = 2880, expected 512, so lost is not expected - actual),
    under cache --json's names, in explain, breaks --accounting, index (its requests row), stats and
    the report's data; and index takes --adapter, so stats agrees with cache under it (fuzz 35A D1, D2)."""
    home = str(CORPUS / "live" / "c-change" / "home")
    run = partial(invoke, monkeypatch, capsys)
    base = {"reusable_cache_read": 7680, "actual_cache_read": 4800, "lost_tokens": 2880}
    code, out, _ = run("cache", "--json", home)
    report = json.loads(out)
    assert {k: report["timeline"][7][k] for k in ("reusable_cache_read", "actual_cache_read", "expected_cache_read")} \
        == {"reusable_cache_read": 7680, "actual_cache_read": 4800, "expected_cache_read": 512}
    assert (report["reusable_cache_read"], sum(report["lost_tokens_by_cause"].values())) == (48256, 11968)

    code, out, _ = run("explain", home, "7", "--json")
    assert code == 0 and {k: json.loads(out)[k] for k in base} == base
    code, out, _ = run("explain", home, "7")
    assert "  cost: 2880 token(s) it should have read from the cache and did not (of 7680 reusable, read 4800) " \
           "(as `cache` counts them), $0.0018 over cache reads at its rate" in out
    code, out, _ = run("breaks", "--accounting", "--json", home)
    rows = {r["request"]: r for r in map(json.loads, out.splitlines())}
    assert {k: rows[7][k] for k in base} == base

    db = tmp_path / "index.sqlite"
    assert run("index", "--db", str(db), home)[0] == 0
    connection = sqlite3.connect(db)
    assert connection.execute("SELECT reusable_cache_read, actual_cache_read, lost_tokens FROM requests "
                              "WHERE idx = 7").fetchall() == [(7680, 4800, 2880)]
    connection.close()
    code, out, _ = run("stats", "--db", str(db), "--json")
    stats = json.loads(out)
    assert (stats["totals"]["reusable_cache_read"], stats["totals"]["lost_tokens"]) == (48256, 11968)
    assert [(b["request"], *(b[k] for k in base)) for b in stats["costliest_breaks"]] == [
        (2, 7936, 0, 7936), (7, 7680, 4800, 2880), (4, 7936, 6784, 1152)]
    assert [(c["cause"], c["reusable_cache_read"], c["lost_tokens"]) for c in stats["by_cause"]] == [
        ("header_change", 23552, 11968)]  # the reusable reads of the requests that lost to the cause

    data = build_report_data(run_check([home], record=SessionPages()))
    (page,) = data["sessions"]
    assert [(b["i"], b["pot"], b["lost"]) for b in page["overview"]["break_details"]] == [
        (2, 7936, 7936), (3, 7936, 0), (4, 7936, 1152), (6, 8192, 0), (7, 7680, 2880)]
    # by cause: the reusable reads of the breaks that lost tokens, as stats' by_cause sums them
    assert [(c["pot"], c["lost"]) for c in page["overview"]["break_summary"]] == [(23552, 11968)]
    assert data["totals"]["cache"]["reusable"] == 48256

    # D2: index --adapter, as cache takes it (expected 16896 under anthropic, 17024 by the log's routes)
    code, out, _ = run("cache", "--json", "--adapter", "anthropic", home)
    assert json.loads(out)["expected_cache_read"] == 16896
    code, out, _ = run("index", "--db", str(db), "--adapter", "anthropic", "--json", home)
    assert (code, json.loads(out)["indexed"]) == (0, 1)  # another adapter: read again
    code, out, _ = run("stats", "--db", str(db), "--json")
    assert json.loads(out)["totals"]["expected_cache_read"] == 16896
