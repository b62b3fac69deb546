"""One cost, every view: on every corpus log, what a session cost and what its breaks cost are the
same number in ``usage --json`` (whatever the grouping), ``cache --json``, check's Markdown summary,
check's JSON report and ``index`` + ``stats --json`` (issue 13, "one definition").

Money is USD as a float holding whole nano-dollars (``dsh_audit.cache.usd_cost``); every sum is
``usd_total``, so the comparisons below are exact (``==``), never approximate.
"""

from __future__ import annotations

import re
import sqlite3
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner

from dsh_audit.cache import Costs, usd_total
from dsh_audit.cli import cli
from dsh_audit.fleet import SCHEMA_VERSION, index_logs
from dsh_audit.gate import run_check
from dsh_audit.log import discover
from dsh_audit.report import format_markdown

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False, standalone_mode=False)
    return result.return_value, result.stdout, result.stderr


@pytest.fixture(scope="module")
def views(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every view, each run once (the packaged price table: cwd has none). Reading the logs is what
    takes time, so the whole corpus goes through ``cache``, ``usage --by model`` and ``index``, and
    the live runs (every model switch, peak window and break cause there is) through the other
    groupings and ``check``."""
    root, live = str(CORPUS), [str(CORPUS / "live"), str(CORPUS / "live-pi")]
    code, out, err = _run("cache", "--json", "--lenient", root)
    assert code in (0, 1, 2), err
    cache = {r["path"]: r for r in map(orjson.loads, out.splitlines())}
    usage = {"model": orjson.loads(_run("usage", "--json", "--lenient", "--by", "model", root)[1])}
    for by in ("session", "turn", "day"):
        usage[by] = orjson.loads(_run("usage", "--json", "--lenient", "--by", by, *live)[1])
    db = tmp_path_factory.mktemp("cost") / "index.sqlite"
    index_logs(discover([CORPUS]), db, lenient=True)
    code, out, err = _run("stats", "--db", str(db), "--json")
    assert code == 0, err
    return {"cache": cache, "usage": usage, "db": db, "stats": orjson.loads(out),
            "check": run_check(live, lenient=True)}


def _priced(cache: dict[str, Any], *under: str) -> list[dict[str, Any]]:
    folders = [str(CORPUS / u) + "/" for u in under]
    return [r["cost"] for p, r in cache.items() if r["cost"] is not None
            and (not folders or any(p.startswith(f) for f in folders))]


def _total(cost: dict[str, Any]) -> float:
    """A ledger summary's or usage row's priced total: null (no request priced) sums as nothing."""
    return float((cost["cost_usd"] or {}).get("total", 0.0))


def _amount(cost: dict[str, Any], key: str) -> float:
    """An amount of a summary or row by the Priced rule: owed only by the requests that have
    something to price in it (a break cost by the breaks that lost tokens), null only when none of
    those was priced or no request was (never a bare 0 for unknown)."""
    owed = {"break_cost_usd": "break", "lost_cost_usd": "lost"}.get(key)
    if key == "off_peak_cost_usd" and key not in cost:  # no peak window (session 38): off-peak it cost what it cost
        return _total(cost)
    if cost[key] is None:
        assert cost["cost_usd"] is None and cost["cost_complete"] is False or (
            owed is not None and cost.get(f"{owed}_unpriced", 1) >= cost.get(f"{owed}_requests", 1) > 0), key
    return float(cost[key] or 0.0)


def _tokens(row: dict[str, Any]) -> int:
    """A row's token total: null (no request of the row logged usage) sums as nothing."""
    return 0 if row["tokens"] is None else int(row["tokens"]["total"])


def _markdown_cost(cost: dict[str, Any]) -> str:
    """What check's Markdown shows for a ledger summary: ``≥$`` a lower bound, ``$?`` nothing priced."""
    unpriced = cost["unpriced_requests"]
    if cost["cost_usd"] is None:  # escaped as every other cell's $? (session 43)
        return f"\\$? ({unpriced} unpriced)"
    bound = "≥" if unpriced else ""
    breaks = cost["break_cost_usd"]  # a lower bound only when a break that lost tokens is unpriced
    shown = "$?" if breaks is None else ("≥" if cost["break_unpriced"] else "") + f"${breaks:.4f}"
    return (f"{bound}${_total(cost):.4f}" + (f" (breaks {shown})" if breaks or cost["break_unpriced"] else "")
            + (f" ({unpriced} unpriced)" if unpriced else ""))


def test_the_corpus_has_priced_sessions_with_breaks(views: dict[str, Any]) -> None:
    costs = _priced(views["cache"])
    assert sum(1 for c in costs if _total(c) > 0) >= 30
    assert sum(1 for c in costs if _amount(c, "break_cost_usd") > 0) >= 5
    assert {Path(p).parts[len(CORPUS.parts)] for p, r in views["cache"].items()
            if r["cost"] and _total(r["cost"])} == {"fixtures", "live", "live-pi"}


@pytest.mark.parametrize(("by", "under"), [("model", ()), ("session", ("live", "live-pi")),
                                         ("turn", ("live", "live-pi")), ("day", ("live", "live-pi"))])
def test_every_usage_grouping_sums_to_the_cache_total(views: dict[str, Any], by: str, under: tuple[str, ...]) -> None:
    costs = _priced(views["cache"], *under)
    table = views["usage"][by]
    total = usd_total(_total(c) for c in costs)
    breaks = usd_total(_amount(c, "break_cost_usd") for c in costs)
    assert total > 0.01 and breaks > 0.001
    assert table["sessions"] == len(costs)
    assert table["totals"]["cost_usd"]["total"] == usd_total(_total(r) for r in table["rows"]) == total
    assert table["totals"]["break_cost_usd"] == usd_total(_amount(r, "break_cost_usd") for r in table["rows"]) == breaks
    assert table["totals"]["tokens"]["total"] == sum(_tokens(r) for r in table["rows"]) == sum(
        _tokens(c) for c in costs)
    for bucket in ("cache_miss", "cache_read", "cache_write", "output"):
        assert table["totals"]["cost_usd"][bucket] == usd_total((c["cost_usd"] or {}).get(bucket, 0.0)
                                                                for c in costs), bucket
    for key in ("no_cache_cost_usd", "off_peak_cost_usd"):
        assert table["totals"][key] == usd_total(_amount(c, key) for c in costs), key
        # the rows add up to the total: a row of one-rate requests has its off-peak cost, its cost (session 43)
        assert table["totals"][key] == usd_total(r[key] or 0.0 for r in table["rows"]), key


def test_usage_by_session_is_each_sessions_cache_cost(views: dict[str, Any]) -> None:
    per_id: dict[str, list[dict[str, Any]]] = defaultdict(list)  # a log and its decompressed copy share an id
    for report in views["cache"].values():
        if report["cost"] is not None and report["cost"]["requests"] and not report["path"].startswith(
                str(CORPUS / "fixtures")):
            per_id[report["session_id"]].append(report["cost"])
    rows = {r["key"]: r for r in views["usage"]["session"]["rows"]}
    assert set(rows) == set(per_id) and len(rows) >= 10
    for session_id, costs in per_id.items():
        row = rows[session_id]
        if row["cost_usd"] is None:  # no request priced: unknown in both, never $0
            assert {c["cost_usd"] for c in costs} == {None} and row["cost_complete"] is False, session_id
            continue
        assert row["cost_usd"] == Costs.of_many(Costs(**{k: v for k, v in (c["cost_usd"] or {}).items()
                                                        if k != "total"}) for c in costs).to_json(), session_id
        for key in ("break_cost_usd", "no_cache_cost_usd", "off_peak_cost_usd"):
            assert _amount(row, key) == usd_total(_amount(c, key) for c in costs), (session_id, key)
        assert row["unpriced_requests"] == sum(c["unpriced_requests"] for c in costs), session_id


def test_cache_lost_cost_is_the_ledgers(views: dict[str, Any]) -> None:
    for path, report in views["cache"].items():
        cost = report["cost"]
        if cost is None:
            continue
        by_cause = cost["lost_cost_usd_by_cause"]
        assert (report["lost_cost_usd"] or 0.0) == usd_total(by_cause.values()), path
        breaks = [v["lost_cost_usd"] for v in report["timeline"] if v["classification"].startswith("break_")
                  and v["lost_cost_usd"] is not None]
        assert _amount(cost, "break_cost_usd") == usd_total(breaks), path


_ROW = re.compile(r"^\| \S+ \S+ \| (?P<log>.+?) \| .* \| (?P<cost>n/a|\\\$\? \(\d+ unpriced\)|≥?\$[0-9.]+"
                  r"(?: \(breaks (?:≥?\$[0-9.]+|\$\?)\))?(?: \(\d+ unpriced\))?) \| [^|]* \| [^|]* \| \d+ \|$")
#: (the two cells after the cost: the session with no cache, and off-peak)


def test_checks_markdown_shows_the_cache_cost(views: dict[str, Any]) -> None:
    result = views["check"]
    shown = {m["log"].replace("\\", ""): m["cost"] for line in format_markdown(result).splitlines()
             if (m := _ROW.match(line))}
    assert len(shown) == len(result.sessions) > 10
    compared = 0
    for check in result.sessions:
        report = views["cache"].get(check.path)
        if report is None or check.cache is None:
            continue
        assert check.cache.cost == report["cost"], check.path  # the object Markdown renders
        if check.path in shown and report["cost"] is not None:
            assert shown[check.path] == _markdown_cost(report["cost"]), check.path
            compared += 1
    assert compared >= 10


def test_checks_json_report_carries_the_cache_cost(views: dict[str, Any]) -> None:
    from dsh_audit.report import format_json

    result = views["check"]
    shown = {m["log"].replace("\\", ""): m["cost"] for line in format_markdown(result).splitlines()
             if (m := _ROW.match(line))}
    report = orjson.loads(format_json(result))
    assert len(report["sessions"]) == len(result.sessions) > 10
    compared = 0
    for session in report["sessions"]:
        cache = views["cache"].get(session["path"])
        if cache is None:
            continue
        assert session["cost"] == cache["cost"], session["path"]  # the ledger summary, key for key
        if session["cost"] is not None:
            assert shown[session["path"]] == _markdown_cost(session["cost"])
            compared += 1
    assert compared >= 10


def test_stats_on_the_index_equals_usage_and_cache(views: dict[str, Any]) -> None:
    stats, usage = views["stats"], views["usage"]
    cost = stats["cost"]
    total = usage["model"]["totals"]
    assert cost["cost_usd"] == total["cost_usd"]
    assert cost["tokens"] == total["tokens"] and cost["requests"] == total["requests"]
    for key in ("no_cache_cost_usd", "off_peak_cost_usd", "break_cost_usd", "lost_cost_usd"):
        assert cost[key] == total[key], key
    assert cost["unpriced"] == usage["model"]["unpriced"] and cost["sessions_unpriced"] == 0
    by_model = {r["key"]: r for r in usage["model"]["rows"]}
    assert {r["model"] or "unknown" for r in stats["cost_by_model"]} == set(by_model)
    # the token table by model has the same keys, and the names logged (session 43)
    assert {r["model"] or "unknown": r["logged_models"] for r in stats["by_model"]} == {
        k: r["logged_models"] for k, r in by_model.items()}
    # one row per model billed (deepseek-v4-flash from 2026-09-10 as deepseek-flash: session 43), the
    # names logged beside it; the rows add up to the total
    assert usd_total(r["off_peak_cost_usd"] or 0.0 for r in stats["cost_by_model"]) == cost["off_peak_cost_usd"]
    assert by_model["deepseek-flash"]["logged_models"] == by_model["deepseek-v4-flash"]["logged_models"] == [
        "deepseek-v4-flash"]
    for row in stats["cost_by_model"]:
        assert row["logged_models"] == by_model[row["model"] or "unknown"]["logged_models"], row["model"]
        assert row["cost_usd"] == by_model[row["model"] or "unknown"]["cost_usd"], row["model"]
        assert row["break_cost_usd"] == by_model[row["model"] or "unknown"]["break_cost_usd"], row["model"]
    causes: dict[str, list[float]] = defaultdict(list)
    for report in _priced(views["cache"]):
        for cause, value in report["lost_cost_usd_by_cause"].items():
            causes[cause].append(value)
    assert {r["cause"]: r["lost_cost_usd"] for r in stats["cost_by_cause"]} == {
        k: usd_total(v) for k, v in causes.items()}
    assert stats["totals"]["lost_cost_usd"] == usd_total(r["lost_cost_usd"] or 0.0 for r in views["cache"].values())


def test_index_costs_rows_per_session_equal_cache(views: dict[str, Any]) -> None:
    connection = sqlite3.connect(views["db"])
    rows: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for row in connection.execute("SELECT path, cost_total, is_break, lost_cost, billed_as, rate_source, "
                                  "rate_effective, unpriced FROM costs"):
        rows[row[0]].append(row)
    version = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    connection.close()
    assert version == (str(SCHEMA_VERSION),)
    for path, report in views["cache"].items():
        if report["cost"] is None:
            continue
        mine = rows[str(Path(path).resolve())]
        assert len(mine) == report["cost"]["requests"], path
        assert usd_total(r[1] for r in mine if r[1] is not None) == _total(report["cost"]), path
        assert usd_total(r[3] for r in mine if r[2] and r[3] is not None) == _amount(report["cost"], "break_cost_usd"), path
        for _, cost, _, _, billed_as, source, _, unpriced in mine:
            assert (cost is None) == (unpriced is not None) and (billed_as is None or source), path
