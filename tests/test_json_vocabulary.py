"""One JSON vocabulary across commands (issue 14 §3): a key means one type in every command's JSON.

Every command with JSON output runs on ``sample_logs/`` (and on one live corpus session with its
capture, skipped when ``../shared/corpus`` is absent); every JSON object they print is walked and
each key's JSON types are recorded. A key has one type everywhere (null beside it allowed: a
value not known). A command's row of totals is ``totals`` (``usage``, ``stats``); ``total`` is
only ever the sum of the buckets beside it (a number). Counts keep the plain plural name as an integer (``requests``, ``breaks``); a
list of break records is ``break_details``; ``cost_usd`` is always the object of billing buckets
``{cache_miss, cache_read, cache_write, output, total}``.

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
def samples_vocabulary(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, set[str]]]:
    """Every command's JSON on the sample logs, walked once for the tests that read it."""
    return _vocabulary(TOOLS, SAMPLES, tmp_path_factory.mktemp("vocabulary"), capture=False)


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
    status = lines.index("PASSED: 11 log(s), 39 request(s), 0 error(s), 0 warning(s), 11 info, 0 failing")
    assert lines[status:] == ["PASSED: 11 log(s), 39 request(s), 0 error(s), 0 warning(s), 11 info, 0 failing",
                              "(policy: defaults)"]


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
