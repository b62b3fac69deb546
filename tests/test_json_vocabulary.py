"""One JSON vocabulary across commands (issue 14 §3): a key means one type in every command's JSON.

Every command with JSON output runs on ``sample_logs/`` (and on one live corpus session with its
capture, skipped when ``../shared/corpus`` is absent); every JSON object they print is walked and
each key's JSON types are recorded. A key has one type everywhere (null beside it allowed: a
value not known). A command's row of totals is ``totals`` (``usage``, ``stats``); ``total`` is
only ever the sum of the buckets beside it (a number). Counts keep the plain plural name as an integer (``requests``, ``breaks``); a
list of break records is ``break_details``; ``cost_usd`` is always the object of billing buckets
``{cache_miss, cache_read, cache_write, output, total}``.

One name per meaning (docs/ci.md, "JSON vocabulary"): no key of :data:`FORBIDDEN` (a synonym of a
name the vocabulary settled) appears in any command's JSON; every key is snake_case but the policy's
TOML keys ``check`` echoes and the log's own data; every instant is an ISO 8601 UTC string under a
key ending ``_at``, from a closed list that tells the log's times from this machine's clock.

Also: the version-1 check report (``breaks`` a list) is still read as a baseline, and ``check``'s
summary line wrapped on an 80-column terminal ends no line with a space.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dsh_audit.cli import cli
from dsh_audit.gate import load_baseline

from _golden import CORPUS
from _terminal import in_terminal

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
TOOLS = SAMPLES / "tools" / "session.jsonl"
LIVE = CORPUS / "live" / "c-change" / "session-logs" / "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824.jsonl"

#: Keys whose values are the log's own data (DSH's vocabulary, not dsh-audit's), of any JSON type:
#: neither they nor what is under them are recorded. ``header``/``messages``/``usage``/``message_usage``/
#: ``finish``/``context`` of a request are what the log holds; a break's ``evidence``/``context``
#: events carry their logged ``data``; a header field's ``before``/``after`` are logged values.
PAYLOAD = frozenset({"header", "messages", "usage", "message_usage", "finish", "data", "before", "after"})

#: Keys that genuinely mean different things in different commands, each with the types it may
#: take and why. Keep it short; every entry is a rename not yet made.
ALLOWED: dict[str, frozenset[str]] = {
    # Kept: check --json's `sessions` list is the documented stable interface of its report since
    # version 1 (docs/report-schema.json, docs/ci.md's jq examples, baselines read back by
    # `check --baseline`); everywhere else `sessions` is a count.
    "sessions": frozenset({"number", "array"}),
}

#: Keys a rename still to come will settle (none now).
PENDING: dict[str, frozenset[str]] = {}

#: Synonyms no command's JSON may use, each with the one name its meaning has (docs/ci.md, "JSON
#: vocabulary"). Most were once printed: ``stats --json``'s totals said ``input_tokens``,
#: ``cache_write_tokens`` and ``output_tokens``, ``sessions --json`` ``output_tokens``,
#: ``first_activity``/``last_activity`` and ``parent_session``, ``stats``' top sessions
#: ``last_request_at`` and ``break_unknown``, ``watch`` ``seen``/``sent`` in epoch seconds,
#: ``cache --json``'s timeline ``actual``, ``expected``, ``potential`` and ``lost_cost``.
FORBIDDEN: dict[str, str] = {
    "input_tokens": "tokens.cache_miss", "uncached_tokens": "tokens.cache_miss",
    "cache_miss_tokens": "tokens.cache_miss", "cache_read_tokens": "tokens.cache_read or actual_cache_read",
    "cache_write_tokens": "tokens.cache_write", "output_tokens": "tokens.output",
    "reasoning_tokens": "tokens.reasoning", "total_tokens": "tokens.total",
    "hit_ratio": "actual_hit_ratio", "cache_hit_ratio": "actual_hit_ratio",
    "break_unknown": "lost_unknown_requests", "unknown_breaks": "lost_unknown_requests",
    "first_activity": "first_activity_at", "last_activity": "last_activity_at",
    "last_request_at": "last_sent_at", "sent": "sent_at", "time": "sent_at or seen_at",
    "timestamp": "sent_at or seen_at", "parent_session": "parent_session_id", "parent": "parent_session_id",
    "id": "session_id",
    "actual": "actual_cache_read", "expected": "expected_cache_read", "potential": "reusable_cache_read",
    "lost_cost": "lost_cost_usd",
}

#: The instants of the JSON, each ending ``_at`` (ISO 8601 UTC strings): the log's own times, then
#: the one time read from this machine's clock. A new instant joins one of the two, and the docs.
LOG_TIMES = frozenset({"sent_at", "first_activity_at", "last_activity_at", "last_sent_at"})
CLOCK_TIMES = frozenset({"seen_at"})

#: Keys whose values are instants but keep another name: ``stats``' echo of its ``--since`` and
#: ``--until`` options, and the price table's own ``effective`` text (``rate_effective``).
INSTANT_EXCEPTIONS = frozenset({"since", "until", "rate_effective"})

#: Objects keyed by the data, not by dsh-audit's vocabulary: the policy as its TOML spells it
#: (kebab-case, docs/ci.md), a request's ``extra`` and ``context`` (DSH's camelCase), the counts of
#: unpriced requests by reason (``usage not logged``), a cache rule's minimum by model name
#: (``min_cacheable_tokens_by_model``: ``deepseek-v4-flash``).
DATA_KEYED = frozenset({"policy", "extra", "context", "unpriced", "min_cacheable_tokens_by_model"})

_INSTANT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z")
_SNAKE = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")


def _type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {dict: "object", list: "array", str: "string", type(None): "null"}[type(value)]


def _walk(value: Any, where: str, found: dict[str, dict[str, set[str]]]) -> None:
    if isinstance(value, list):
        for item in value:
            _walk(item, where + "[]", found)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key not in PAYLOAD:  # any JSON type: what the log holds
                found[key][_type(item)].add(f"{where}.{key}")
                _walk(item, f"{where}.{key}", found)


def _documents(output: str) -> Iterator[Any]:
    """The JSON documents of a command's stdout: one indented object, or one object a line."""
    try:
        yield json.loads(output)
    except ValueError:
        yield from (json.loads(line) for line in output.splitlines() if line.strip())


def _run(args: list[str], env: dict[str, str]) -> str:
    result = CliRunner().invoke(cli, args, env=env, catch_exceptions=False)
    assert result.exit_code in (0, 1), (args, result.exit_code, result.output)
    assert result.stdout.strip(), args
    return result.stdout


def _commands(log: Path, folder: Path, db: Path, *, capture: bool) -> dict[str, list[str]]:
    """Every command with JSON output, on ``folder`` (and ``log``, one session of it)."""
    one = str(log)
    runs = {
        "sessions": ["sessions", str(folder), "--json"],
        "requests": ["requests", str(folder), "--json"],
        "show": ["show", one, "1", "--json"],
        "breaks": ["breaks", str(folder), "--json"],
        "breaks --all --accounting": ["breaks", str(folder), "--json", "--all", "--accounting"],
        "explain": ["explain", one, "2", "--json"],
        "cache": ["cache", str(folder), "--json"],
        "usage": ["usage", str(folder), "--json"],
        **{f"usage --by {by}": ["usage", str(folder), "--json", "--by", by] for by in ("turn", "day", "model", "request")},
        "validate": ["validate", str(folder), "--json"],
        "check": ["check", str(folder), "--json"],
        "index": ["index", str(folder), "--db", str(db), "--json"],
        "stats": ["stats", "--db", str(db), "--json"],
        "stats --sort cost": ["stats", "--db", str(db), "--json", "--sort", "cost", "--top", "3"],
        "watch": ["watch", str(folder), "--json", "--since", "2000-01-01", "--exit-after", "0", "--polling"],
    }
    if capture:
        runs["diff"] = ["diff", one, "--json"]
    return runs


def _html_data(folder: Path, out: Path, env: dict[str, str]) -> Any:
    CliRunner().invoke(cli, ["report", str(folder), "-o", str(out)], env=env, catch_exceptions=False)
    page = out.read_text("utf-8")
    blob = re.search(r'<script type="application/json" id="dsh-data">(.*?)</script>', page, re.S)
    assert blob is not None
    return json.loads(blob.group(1))


def _vocabulary(log: Path, folder: Path, tmp_path: Path, *, capture: bool) -> dict[str, dict[str, set[str]]]:
    env = {"DSH_HOME": str(tmp_path / "home"), "COLUMNS": "200"}
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for name, args in _commands(log, folder, tmp_path / "index.sqlite", capture=capture).items():
        for document in _documents(_run(args, env)):
            _walk(document, name, found)
    return found


def _conflicts(found: dict[str, dict[str, set[str]]]) -> dict[str, dict[str, list[str]]]:
    """The keys with more than one type besides null (those of :data:`ALLOWED` and :data:`PENDING`
    within their types),
    each type with a few places it was seen."""
    conflicts = {}
    for key, types in found.items():
        kinds = set(types) - {"null"}
        if len(kinds) > 1 and not kinds <= ALLOWED.get(key, PENDING.get(key, frozenset())):
            conflicts[key] = {kind: sorted(types[kind])[:3] for kind in sorted(types)}
    return conflicts


@pytest.fixture(scope="module")
def samples_documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Any]]:
    """Every command's JSON documents on the sample logs, by command, made once for the tests that read them."""
    tmp_path = tmp_path_factory.mktemp("vocabulary")
    env = {"DSH_HOME": str(tmp_path / "home"), "COLUMNS": "200"}
    return {name: list(_documents(_run(args, env)))
            for name, args in _commands(TOOLS, SAMPLES, tmp_path / "index.sqlite", capture=False).items()}


@pytest.fixture(scope="module")
def samples_vocabulary(samples_documents: dict[str, list[Any]]) -> dict[str, dict[str, set[str]]]:
    """Every command's JSON on the sample logs, walked once for the tests that read it."""
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for name, documents in samples_documents.items():
        for document in documents:
            _walk(document, name, found)
    return found


def test_one_type_per_key_across_commands_on_the_sample_logs(
        samples_vocabulary: dict[str, dict[str, set[str]]]) -> None:
    found = samples_vocabulary
    assert _conflicts(found) == {}
    # the shapes the vocabulary settles, seen where they used to differ
    assert {"sessions.cost_usd", "watch.cost_usd", "cache.cost.cost_usd", "check.sessions[].cost.cost_usd",
            "usage.totals.cost_usd"} <= found["cost_usd"]["object"]
    assert {"cache.breaks", "sessions.breaks", "watch.breaks", "check.sessions[].breaks"} <= found["breaks"]["number"]
    assert set(found["break_details"]) == {"array"}


def test_the_html_report_data_counts_breaks_and_lists_them_as_break_details(tmp_path: Path) -> None:
    """The page's embedded data (read by its script) names breaks as the commands do."""
    data = _html_data(SAMPLES / "sessions", tmp_path / "report.html", {"DSH_HOME": str(tmp_path)})
    overviews = {s["session_id"]: s["overview"] for s in data["sessions"]}
    change = overviews["session-sample-change"]
    assert change["breaks"] == len(change["break_details"]) == 4
    assert [b["cause"] for b in change["break_details"]] == ["header_change"] * 4
    assert all(isinstance(o["breaks"], int) and isinstance(o["break_details"], list) for o in overviews.values())


@pytest.mark.skipif(not LIVE.is_file(), reason="needs the DSH corpus (../shared/corpus)")
def test_one_type_per_key_on_a_live_session_with_its_capture(tmp_path: Path) -> None:
    folder = tmp_path / "live" / "session-logs"
    folder.mkdir(parents=True)
    shutil.copy(LIVE, folder / LIVE.name)
    shutil.copy(LIVE.parent.parent / "wire.jsonl", tmp_path / "live" / "wire.jsonl")  # found beside it
    found = _vocabulary(folder / LIVE.name, folder, tmp_path, capture=True)
    assert _conflicts(found) == {}
    assert _forbidden(found) == {}
    assert "diff" in {place.split(".")[0] for kinds in found.values() for places in kinds.values() for place in places}


def test_cost_usd_buckets_add_up_to_the_total_in_sessions_and_watch(tmp_path: Path) -> None:
    env = {"DSH_HOME": str(tmp_path), "COLUMNS": "200"}
    rows = [json.loads(line) for line in _run(["sessions", str(TOOLS), "--json"], env).splitlines()]
    assert [row["cost_usd"] for row in rows] == [
        {"cache_miss": 0.0002244, "cache_read": 0.00000384, "cache_write": 0, "output": 0.0000816, "total": 0.00030984}]
    cache = json.loads(_run(["cache", str(TOOLS), "--json"], env).splitlines()[0])
    assert rows[0]["cost_usd"] == cache["cost"]["cost_usd"]
    lines = [json.loads(line) for line in _run(["watch", str(TOOLS), "--json", "--since", "2000-01-01",
                                                "--exit-after", "0", "--polling"], env).splitlines()]
    assert lines[-1]["type"] == "summary"
    assert lines[-1]["cost_usd"] == cache["cost"]["cost_usd"]  # the buckets and their total
    priced = [line["cost_usd"] for line in lines if line["type"] == "request" and line["cost_usd"]]
    assert len(priced) == 4 and all(set(cost) == set(rows[0]["cost_usd"]) for cost in priced)


# A version-1 check report, exactly as check wrote it before break_details (one session, one break).
_OLD_REPORT = {
    "schema_version": 1, "tool": {"name": "dsh-audit", "version": "0.1.0"}, "passed": False,
    "policy": {"source": "defaults"}, "counts": {"error": 0, "warning": 0, "info": 1, "failing": 1, "sessions": 1,
                                                 "requests": 4},
    "sessions": [{"path": "logs/session.jsonl", "session_id": "s-1", "failed": True, "error": None, "requests": 4,
                  "capture": "logs/wire.jsonl", "capture_verdicts": {"identical": 4},
                  "breaks": [{"request": 2, "previous": 1, "relation": "step", "cause": None, "other_causes": [],
                              "fields": [], "evidence_seqs": [], "detail": "no log event explains it"}],
                  "cache": None, "cost": None,
                  "findings": [{"rule": "DSH821", "severity": "error", "session_id": "s-1", "request": 2,
                                "seq": None, "message": "unexplained break", "path": "logs/session.jsonl"}]}],
    "findings": [{"rule": "DSH821", "severity": "error", "session_id": "s-1", "request": 2, "seq": None,
                  "message": "unexplained break", "path": "logs/session.jsonl"}],
    "notes": [],
}


def test_a_version_1_report_with_a_breaks_list_is_still_read_as_a_baseline(tmp_path: Path) -> None:
    path = tmp_path / "old.json"
    path.write_text(json.dumps(_OLD_REPORT, indent=2), "utf-8")
    baseline = load_baseline(path)
    assert len(baseline.keys) == 1
    new = dict(_OLD_REPORT, schema_version=2, sessions=[
        {**_OLD_REPORT["sessions"][0], "breaks": 1, "break_details": _OLD_REPORT["sessions"][0]["breaks"]}])
    path.write_text(json.dumps(new, indent=2), "utf-8")
    assert load_baseline(path).keys == baseline.keys


def test_check_json_report_is_schema_version_2_with_break_details() -> None:
    result = CliRunner().invoke(cli, ["check", str(SAMPLES / "sessions"), "--json"], env={"COLUMNS": "200"},
                                catch_exceptions=False)
    report = json.loads(result.stdout)
    assert report["schema_version"] == 2
    change = next(s for s in report["sessions"] if s["session_id"] == "session-sample-change")
    assert change["breaks"] == len(change["break_details"]) == 4
    assert {b["cause"] for b in change["break_details"]} == {"header_change"}


def test_check_summary_wrapped_at_80_columns_ends_no_line_with_a_space(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["DSH_HOME"] = str(tmp_path)
    code, drawn, _ = in_terminal(["check", str(SAMPLES), "--no-pager"], columns=80, env=env, cwd=ROOT)
    assert code == 0
    lines = drawn.splitlines()
    status = lines.index("PASSED: 10 log(s), 35 request(s), 0 error(s), 0 warning(s), 10 info, 0 failing")
    assert lines[status:] == ["PASSED: 10 log(s), 35 request(s), 0 error(s), 0 warning(s), 10 info, 0 failing",
                              "  (policy: defaults)"]


def test_every_row_of_totals_is_totals_and_total_is_only_a_sum(
        tmp_path: Path, samples_vocabulary: dict[str, dict[str, set[str]]]) -> None:
    """Issue 14 leftover: `usage --json` named its row of totals `total`, where `stats --json` says
    `totals` and every cost or token object's `total` is the sum of its buckets (a number)."""
    found = samples_vocabulary
    assert set(found["total"]) == {"number"}
    assert set(found["totals"]) == {"object"}
    assert {place.split(".")[0] for place in found["totals"]["object"]} == {
        "usage", *(f"usage --by {by}" for by in ("turn", "day", "model", "request")), "stats", "stats --sort cost"}
    env = {"DSH_HOME": str(tmp_path / "home"), "COLUMNS": "200"}
    usage = json.loads(_run(["usage", str(TOOLS), "--json"], env))
    assert list(usage) == ["by", "sort", "sessions", "logs_failed", "rows", "totals", "unpriced", "prices"]
    assert usage["totals"]["requests"] == 4 and usage["totals"]["key"] == "total"


def test_a_request_row_says_index_and_a_row_about_a_request_says_request(
        samples_vocabulary: dict[str, dict[str, set[str]]]) -> None:
    """docs/ci.md "JSON report versions": a row that is a request gives its place as ``index``; a
    row about a request (a break, a finding, a usage row, a costly break) names it ``request``."""
    found = samples_vocabulary
    assert set(found["index"]) == {"number"} and set(found["request"]) <= {"number", "null"}
    assert found["index"]["number"] == {"cache.timeline[].index", "requests.index", "show.index", "watch.index"}
    assert found["request"]["number"] == {
        "breaks --all --accounting.request", "breaks.request", "check.sessions[].break_details[].request",
        "explain.request", "stats --sort cost.costliest_breaks[].request", "stats.costliest_breaks[].request",
        "usage --by request.rows[].request", "watch.transition.request"}


def _in_log_data(place: str) -> bool:
    return any(part.removesuffix("[]") in DATA_KEYED for part in place.split(".")[1:-1])


def _forbidden(found: dict[str, dict[str, set[str]]]) -> dict[str, tuple[str, list[str]]]:
    """The :data:`FORBIDDEN` keys printed, each with the name to use and a few places (the log's
    own data, under :data:`DATA_KEYED`, aside)."""
    hits = {}
    for key, instead in FORBIDDEN.items():
        places = sorted(p for kinds in found.get(key, {}).values() for p in kinds if not _in_log_data(p))
        if places:
            hits[key] = (instead, places[:3])
    return hits


def test_no_command_prints_a_forbidden_synonym_on_the_sample_logs(
        samples_vocabulary: dict[str, dict[str, set[str]]]) -> None:
    assert _forbidden(samples_vocabulary) == {}
    # the settled names, printed where the synonyms were
    found = samples_vocabulary
    assert {"stats.totals.tokens", "sessions.tokens", "cache.cost.tokens"} <= found["tokens"]["object"]
    assert {"stats.top_sessions[].lost_unknown_requests", "stats.totals.lost_unknown_requests"} <= \
        found["lost_unknown_requests"]["number"]
    assert set(found["parent_session_id"]) == {"null", "string"}
    # ``seen`` is index's count of the logs given, never watch's time
    assert found["seen"] == {"number": {"index.seen"}}
    # cache --json's timeline names its cache reads and what a break lost as watch and every total do
    assert found["actual_cache_read"]["number"] >= {"cache.timeline[].actual_cache_read", "watch.actual_cache_read"}
    assert found["expected_cache_read"]["number"] >= {"cache.timeline[].expected_cache_read",
                                                      "watch.expected_cache_read"}
    assert found["reusable_cache_read"]["number"] >= {"cache.timeline[].reusable_cache_read",
                                                      "watch.reusable_cache_read"}
    assert found["lost_cost_usd"]["number"] >= {"cache.timeline[].lost_cost_usd", "watch.lost_cost_usd"}


def test_a_cache_timeline_row_names_its_reads_and_loss_as_watch_does(tmp_path: Path) -> None:
    """``cache --json``'s timeline once said ``potential``, ``expected``, ``actual`` and
    ``lost_cost``; a row now has exactly these keys, in this order."""
    env = {"DSH_HOME": str(tmp_path), "COLUMNS": "200"}
    cache = json.loads(_run(["cache", str(TOOLS), "--json"], env).splitlines()[0])
    assert cache["timeline"][1] == {
        "index": 1, "kind": "loop", "turn": 1, "step": 2, "attempt": 1, "model": "deepseek-v4-flash",
        "family": "deepseek", "prompt_tokens": 292, "counted_tokens": 292, "reusable_cache_read": 128,
        "expected_any": 128, "expected_cache_read": 128, "actual_cache_read": 128, "classification": "as_expected",
        "cause": None, "source_index": 0, "gap_seconds": 0.02, "lost_tokens": 0, "lost_tokens_by_cause": {},
        "lost_cost_usd": 0, "prompt_source": "wire:deepseek"}
    assert list(cache["timeline"][1])[9:13] == [
        "reusable_cache_read", "expected_any", "expected_cache_read", "actual_cache_read"]
    # the session's sums beside it say the same names: the rows add up to them
    assert cache["actual_cache_read"] == sum(row["actual_cache_read"] for row in cache["timeline"]) == 640
    assert cache["expected_cache_read"] == sum(row["expected_cache_read"] for row in cache["timeline"]) == 640
    assert cache["reusable_cache_read"] == sum(row["reusable_cache_read"] for row in cache["timeline"]) == 640


def test_forbidden_synonyms_are_caught_where_they_would_be_printed() -> None:
    """The check itself can fail: a synonym anywhere is reported; the log's own data is not."""
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    _walk({"totals": {"input_tokens": 3}, "rows": [{"sent": 1.5}], "extra": {"time": {"sent": 2}}}, "x", found)
    assert _forbidden(found) == {"input_tokens": ("tokens.cache_miss", ["x.totals.input_tokens"]),
                                 "sent": ("sent_at", ["x.rows[].sent"])}


def test_every_key_is_snake_case_but_the_policy_and_the_log_data(
        samples_vocabulary: dict[str, dict[str, set[str]]]) -> None:
    """The policy ``check --json`` echoes keeps the TOML file's kebab-case keys (docs/ci.md:
    ``policy`` reads back as ``[tool.dsh-audit]``); nothing else does."""
    found = samples_vocabulary
    other = {key: sorted(p for kinds in found[key].values() for p in kinds if not _in_log_data(p))[:3]
             for key in found if not _SNAKE.fullmatch(key)}
    assert {key: places for key, places in other.items() if places} == {}
    kebab = {key for key in found if "-" in key  # a model's name keys a cache rule's minimum: data
             and any(".min_cacheable_tokens_by_model." not in p for kinds in found[key].values() for p in kinds)}
    assert kebab == {"fail-on-refusal", "validation-fail-severity", "capture-fail", "capture-kinds", "require-capture",
                     "fail-on-unexplained-break", "allowed-break-causes", "min-cache-hit-ratio"}
    assert {p for key in kebab for kinds in found[key].values() for p in kinds} == {f"check.policy.{k}" for k in kebab}


def _instants(value: Any, where: str, out: list[tuple[str, str]]) -> None:
    """Every (place, key) whose value is an ISO 8601 UTC instant string, outside the log's data."""
    if isinstance(value, list):
        for item in value:
            _instants(item, where + "[]", out)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key in PAYLOAD or key in DATA_KEYED:
                continue
            if isinstance(item, str) and _INSTANT.fullmatch(item):
                out.append((f"{where}.{key}", key))
            _instants(item, f"{where}.{key}", out)


def test_instants_are_iso_strings_named_at_and_say_whose_clock(samples_documents: dict[str, list[Any]]) -> None:
    """docs/ci.md "JSON vocabulary": an instant is an ISO 8601 UTC string under a key ending
    ``_at``; the log's times and this machine's (``seen_at``, watch) are told apart by name."""
    found: list[tuple[str, str]] = []
    for name, documents in samples_documents.items():
        for document in documents:
            _instants(document, name, found)
    keys = {key for _, key in found}
    assert {key for key in keys if not key.endswith("_at")} <= INSTANT_EXCEPTIONS, found
    assert keys - INSTANT_EXCEPTIONS == LOG_TIMES | CLOCK_TIMES
    assert not LOG_TIMES & CLOCK_TIMES
    seen = sorted({place for place, key in found if key in CLOCK_TIMES})
    assert seen == ["watch.seen_at"]  # the machine's clock: watch alone, to the millisecond
    watch = samples_documents["watch"]
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", line["seen_at"])
               for line in watch if "seen_at" in line)
    sent = [line["sent_at"] for line in watch if line["type"] in ("request", "break")]
    assert len(sent) == 35 and set(sent) == {"2027-01-15T08:00:00Z"}  # the log's time, to the second
