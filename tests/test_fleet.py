"""Many sessions: process pool order and errors, --since, the SQLite index and stats, the Dask engine."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.cache import usd_total
from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded
from dsh_audit.errors import UsageError, UnreadableError
from dsh_audit.fleet import (SCHEMA_VERSION, IndexSummary, SessionTaskError, index_logs, modified_since, parse_since,
                             run_many, select_logs)

from _copy_log import copy_as
from _pool_tasks import die, echo  # tasks run in spawned workers: top-level functions of a light module

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
LIVE = CORPUS / "live"
needs_corpus = pytest.mark.skipif(not LIVE.is_dir(), reason="../shared/corpus is absent")


class _Borrowed:
    """A process pool as ``runner/_pool.py`` uses it, lent from the module's (:func:`_pools_kept`):
    a run that ends with nothing in flight (done, or its consumer gone after the last result)
    leaves the workers running for the next; one stopped with work in flight (an interrupt, a dead
    worker) ends them as the runner means to, and the next run starts new ones."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.futures: list[Any] = []

    def submit(self, *args: Any, **kwargs: Any) -> Any:
        future = self.pool.submit(*args, **kwargs)
        self.futures.append(future)
        return future

    def _busy(self) -> bool:
        return not all(future.done() for future in self.futures)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        if cancel_futures and self._busy():
            self.pool.shutdown(wait=wait, cancel_futures=True)

    @property
    def _processes(self) -> Any:  # what the runner terminates when it stops early: only a busy pool's
        return self.pool._processes if self._busy() else {}


#: The module's process pools by their number of workers, lent to every run of a command with
#: ``--jobs 2`` and to the indexes made with ``jobs=2`` (:func:`_pools_kept`).
_POOLS: dict[int, Any] = {}


def _lend(max_workers: int, **options: Any) -> _Borrowed:
    """What ``ProcessPoolExecutor(...)`` gives the runner in :func:`_pools_kept`: the module's pool
    of that many workers, a new one when there is none yet or the last was broken or stopped."""
    from concurrent.futures.process import ProcessPoolExecutor  # the class itself, not what the block lends

    pool = _POOLS.get(max_workers)
    if pool is None or pool._broken or pool._shutdown_thread:
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        pool = _POOLS[max_workers] = ProcessPoolExecutor(max_workers, **options)
    return _Borrowed(pool)


@contextmanager
def _pools_kept() -> Iterator[None]:
    """Runs in the block borrow the module's process pool instead of starting their own: each
    spawned worker imports the package (about a quarter of a CPU second), most of the CPU time of
    the parallel runs below. The runner still makes and ends its pool as it would. The tests of
    the pool itself (order, a dead worker) and the Dask engine start their own."""
    import concurrent.futures

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(concurrent.futures, "ProcessPoolExecutor", _lend)
        yield


@pytest.fixture(scope="module", autouse=True)
def _end_pools() -> Iterator[None]:
    yield
    while _POOLS:
        _POOLS.popitem()[1].shutdown(wait=True, cancel_futures=True)


def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "argv", ["dsh-audit", *args])
    with _pools_kept() if {"--jobs", "-j"} & set(args) else nullcontext():
        code = run_guarded(cli)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


#: The serial runs' results by their arguments: a command over the same logs prints the same bytes
#: every time (the tests below compare them), so each is made once for the module and only read.
_SERIAL: dict[tuple[str, ...], tuple[int, str, str]] = {}


def run_serial(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
               *args: str) -> tuple[int, str, str]:
    """:func:`run`, once per arguments in this module."""
    if args not in _SERIAL:
        _SERIAL[args] = run(monkeypatch, capsys, *args)
    return _SERIAL[args]


def run_serial_and_parallel(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                            *args: str) -> tuple[int, str, str]:
    """Run the command alone and with ``--jobs 2``; both must print the same bytes and exit alike."""
    serial = run_serial(monkeypatch, capsys, *args)
    assert run(monkeypatch, capsys, *args, "--jobs", "2") == serial
    return serial


def test_run_many_keeps_input_order_and_every_error() -> None:
    paths = ["0", "1", "bad", "3", "4"]
    seen: list[tuple[int, int]] = []
    results = run_many(paths, partial(echo, fail="3"), jobs=2, progress=lambda d, t: seen.append((d, t)))
    assert [r.path for r in results] == paths
    assert [r.value for r in results] == ["done 0", "done 1", None, None, "done 4"]
    assert isinstance(results[2].error, UnreadableError)
    assert str(results[2].error) == "bad: not a log (hint: give a log)"
    assert isinstance(results[3].error, SessionTaskError)
    assert str(results[3].error).startswith("3: unexpected ValueError: boom at ")
    assert seen == [(1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]
    serial = run_many(paths, partial(echo, fail="3"), jobs=1)
    assert [(r.path, r.value, str(r.error)) for r in serial] == [(r.path, r.value, str(r.error)) for r in results]


def test_a_dead_worker_fails_only_the_logs_in_flight() -> None:
    paths = [str(n) for n in range(12)]
    results = run_many(paths, die, jobs=2)
    assert [r.path for r in results] == paths
    assert isinstance(results[0].error, SessionTaskError)
    assert "worker process died" in results[0].error.message
    assert [r.value for r in results[8:]] == ["8", "9", "10", "11"]  # submitted to a fresh pool


def test_bad_options_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="unknown engine 'spark'"):
        run_many(["a"], echo, engine="spark")
    with pytest.raises(UsageError, match="--scheduler needs --engine dask"):
        run_many(["a"], echo, scheduler="tcp://127.0.0.1:8786")
    with pytest.raises(UsageError, match="--engine dask needs --scheduler ADDRESS"):
        run_many(["a"], echo, engine="dask")


# --since -------------------------------------------------------------------------------------

def test_parse_since_ages_and_dates() -> None:
    now = 2_000_000_000.0
    assert parse_since("90s", now=now) == now - 90
    assert parse_since("30m", now=now) == now - 1800
    assert parse_since("12h", now=now) == now - 43200
    assert parse_since("7d", now=now) == now - 7 * 86400
    assert parse_since("2w", now=now) == now - 14 * 86400
    assert parse_since("2026-11-01T00:00:00+00:00") == 1_793_491_200.0
    assert parse_since("2026-11-01") == parse_since("2026-11-01T00:00") == 1_793_491_200.0  # UTC, as every --since
    assert parse_since("2026-11-01", end=True) == 1_793_491_200.0 + 86400  # --until: the whole day
    assert parse_since("yesterday", now=now) == 1_999_900_800.0  # the UTC day before now's, as a date
    with pytest.raises(UsageError, match=re.escape(
            "'20261101' is not a date or date-time (hint: give YYYY-MM-DD, today, yesterday or "
            "YYYY-MM-DDTHH:MM[:SS[.fff]] with Z or +HH:MM or neither (UTC when none))") + "$"):
        parse_since("20261101")  # another ISO spelling of a day would be a midnight, not the day


def _aged_logs(tmp_path: Path) -> tuple[Path, Path]:
    old, new = tmp_path / "old" / "session.jsonl", tmp_path / "new" / "session.jsonl"
    logs = sorted((LIVE / "a-chat" / "session-logs").glob("*.jsonl"))
    for target in (old, new):  # two sessions: a copy of one session is read once
        copy_as(logs[0], target, f"session-{target.parent.name}")
    month_ago = time.time() - 30 * 86400
    os.utime(old, (month_ago, month_ago))
    return old, new


def _dated_logs(folder: Path) -> tuple[Path, Path]:
    """Two logs whose own timestamps differ (2026-12-02 and 2027-01-15), the later one with the older mtime."""
    early, late = folder / "early" / "session.jsonl", folder / "late" / "session.jsonl"
    for source, target in ((sorted((LIVE / "a-chat" / "session-logs").glob("*.jsonl"))[0], early),
                           (SAMPLES / "chat" / "session.jsonl", late)):
        target.parent.mkdir(parents=True)
        shutil.copy(source, target)
    month_ago = time.time() - 30 * 86400
    os.utime(late, (month_ago, month_ago))  # the CLI reads the logs' own times, never the mtime
    return early, late


_LEFT_OUT = "1 of {} log(s) with no activity in that window (by the logs' own timestamps) left out\n"


@needs_corpus
def test_since_selects_by_modification_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    old, new = _aged_logs(tmp_path)
    assert modified_since([old, new], parse_since("7d")) == [new]
    assert modified_since([old, new], parse_since("60d")) == [old, new]
    notes: list[str] = []
    assert select_logs([tmp_path], since=parse_since("7d"), notes=notes) == [new]
    assert len(notes) == 1 and notes[0].endswith(": 1 of 2 log(s) modified earlier left out")
    early, late = _dated_logs(tmp_path / "dated")
    code, out, err = run(monkeypatch, capsys, "requests", "--json", "--since", "2027-01-01", str(tmp_path / "dated"))
    assert code == 0
    full = run(monkeypatch, capsys, "requests", "--json", str(late))[1]
    assert out == full and out.count("\n") == 3
    assert err == "note: --since 2027-01-01T00:00:00Z: " + _LEFT_OUT.format(2)
    code, out, err = run(monkeypatch, capsys, "requests", "--json", "--until", "2026-12-02", str(tmp_path / "dated"))
    assert (code, out) == (0, run(monkeypatch, capsys, "requests", "--json", str(early))[1])
    assert err == "note: --until 2026-12-03T00:00:00Z: " + _LEFT_OUT.format(2)
    code, _, err = run(monkeypatch, capsys, "requests", "--since", "last week", str(tmp_path))
    assert code == 2 and "Invalid value for '--since': cannot read --since 'last week'" in err


# Parallel output equals serial output ---------------------------------------------------------

@needs_corpus
@pytest.mark.parametrize("args", [["--json"], [], ["--json", "--lenient"]], ids=["json", "table", "lenient"])
def test_requests_jobs_output_is_byte_identical(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                                args: list[str]) -> None:
    root = str(LIVE if "--lenient" not in args else CORPUS)
    serial = run_serial_and_parallel(monkeypatch, capsys, "requests", *args, root)
    assert serial[0] == (0 if root == str(LIVE) else 2)
    if args == ["--json"]:
        assert serial[1].count("\n") == 66  # each session once: its export copy is not read again


def _dump(db: Path) -> dict[str, list[tuple]]:
    connection = sqlite3.connect(db)
    try:
        tables = {}
        for table in ("sessions", "requests", "breaks"):
            names = [r[1] for r in connection.execute(f"PRAGMA table_info({table})") if r[1] != "indexed_at"]
            tables[table] = sorted(connection.execute(f"SELECT {', '.join(names)} FROM {table}").fetchall(), key=repr)
        return tables
    finally:
        connection.close()


LiveIndex = tuple[IndexSummary, dict[str, list[tuple]]]


@pytest.fixture(scope="module")
def live_index(tmp_path_factory: pytest.TempPathFactory) -> LiveIndex:
    """The live runs indexed serially, once for the module: the summary and the tables (``_dump``)."""
    if not LIVE.is_dir():
        pytest.skip("../shared/corpus is absent")
    db = tmp_path_factory.mktemp("live") / "serial.sqlite"
    return index_logs(select_logs([LIVE]), db), _dump(db)


@needs_corpus
def test_index_jobs_contents_equal_serial(tmp_path: Path, live_index: LiveIndex) -> None:
    logs = select_logs([LIVE])
    serial, one = live_index
    with _pools_kept():
        parallel = index_logs(logs, tmp_path / "parallel.sqlite", jobs=2)
    assert (serial.indexed, serial.skipped, serial.failed) == (len(logs), 0, ())
    assert (parallel.indexed, parallel.skipped, parallel.failed) == (len(logs), 0, ())
    two = _dump(tmp_path / "parallel.sqlite")
    assert one == two
    assert (len(one["sessions"]), len(one["requests"])) == (len(logs), 66)
    assert len(one["breaks"]) > 0


# Index + stats against the per-session commands ----------------------------------------------

@pytest.fixture(scope="module")
def corpus_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is absent")
    db = tmp_path_factory.mktemp("fleet") / "corpus.sqlite"
    with _pools_kept():
        index_logs(select_logs([CORPUS]), db, lenient=True, jobs=2)
    return db


def _json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


@needs_corpus
def test_stats_totals_equal_summed_requests_and_cache(corpus_index: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_serial(monkeypatch, capsys, "requests", "--json", "--lenient", str(CORPUS))
    rows = _json_lines(out)
    refused = err.count("\nerror: ") + err.startswith("error: ")
    usage = [r["usage"] or r["message_usage"] or {} for r in rows]
    code, out, _ = run(monkeypatch, capsys, "cache", "--json", "--lenient", str(CORPUS))
    reports = _json_lines(out)
    code, out, _ = run(monkeypatch, capsys, "stats", "--db", str(corpus_index), "--json")
    assert code == 0
    stats = json.loads(out)
    totals = stats["totals"]
    assert totals["sessions"] == len(reports) + refused
    assert totals["sessions_refused"] == refused and refused > 0
    assert totals["requests"] == len(rows) == sum(r["requests"] for r in reports)
    # the logged reads are `actual_cache_read` (totals has no second field for them); the requests
    # whose log holds no usage (title calls) are priced from the wire.jsonl found beside their log,
    # as `cache` judges them (usage_source "capture"): the index's tokens are the logs' and theirs
    captured = [t for r in reports for t in r["timeline"] if t.get("usage_source") == "capture"]
    assert (len(captured), sum(t["prompt_tokens"] for t in captured), sum(t["actual_cache_read"] for t in captured)) \
        == (sum(r["cost"]["usage_from_capture_requests"] for r in reports if r["cost"]), 1604, 0) == (11, 1604, 0)
    from_capture = {"cache_miss": 1439, "cache_read": 0, "cache_write": 165, "output": 55}  # 1439 + 165 = 1604
    # the tokens are summed by usage's rule: a count a usage does not hold (DeepSeek's without
    # cacheReadTokens holds neither its reads nor its misses) is unknown, counted apart, never summed
    code, out, _ = run(monkeypatch, capsys, "usage", "--json", "--lenient", str(CORPUS))
    summed = json.loads(out)["totals"]
    assert {k: totals[k] for k in ("usage_unknown_requests", "tokens_unknown_requests")} == {
        k: summed[k] for k in ("usage_unknown_requests", "tokens_unknown_requests")}
    assert summed["usage_unknown_requests"] == 13 and summed["tokens_unknown_requests"] == {"cache_miss": 172,
                                                                                          "cache_read": 174}
    assert totals["tokens"] == {k: v for k, v in summed["tokens"].items() if k != "reasoning"} == {
        "cache_miss": 382115, "cache_read": 1164802, "cache_write": 18655, "output": 24197, "total": 1589769}
    assert totals["tokens"]["output"] == sum(u.get("outputTokens", 0) for u in usage) + from_capture["output"]
    assert totals["tokens"]["total"] == sum(totals["tokens"][k] for k in ("cache_miss", "cache_read", "cache_write",
                                                                            "output"))
    assert totals["actual_cache_read"] == totals["tokens"]["cache_read"]
    assert totals["usage_known"] == sum(r["usage_known"] for r in reports)
    # a log none of whose requests logged its cache read and prompt size sums nothing (null: unknown, never 0)
    assert sum(r["prompt_tokens"] is None for r in reports) == sum(not r["usage_known"] and r["requests"] > 0
                                                                   for r in reports) > 0
    assert totals["prompt_tokens"] == sum(r["prompt_tokens"] or 0 for r in reports)
    assert totals["actual_cache_read"] == sum(r["actual_cache_read"] or 0 for r in reports)
    assert totals["expected_cache_read"] == sum(r["expected_cache_read"] or 0 for r in reports)
    assert totals["actual_hit_ratio"] == totals["actual_cache_read"] / totals["prompt_tokens"]
    lost: Counter[str] = Counter()
    break_lost: Counter[str] = Counter()  # what the breaks lost, by cause (a break that went cold too: cold_ttl)
    breaks: Counter[str] = Counter()
    for report in reports:
        lost.update(report["lost_tokens_by_cause"])
        breaks.update(report["breaks_by_cause"])
        for row in report["timeline"]:
            if row["classification"] in ("break_explained", "break_unattributed", "break_unexplained"):
                break_lost.update(row["lost_tokens_by_cause"] or {})
    assert totals["lost_tokens"] == sum(lost.values()) > 0
    assert totals["cache_breaks"] == sum(breaks.values()) > 0
    assert totals["lost_cost_usd"] == usd_total(r["lost_cost_usd"] or 0 for r in reports)
    # every loss by cause in the cost by cause; the breaks' alone in the breaks by cause, as the report has them
    assert {c["cause"]: c["lost_tokens"] for c in stats["cost_by_cause"] if c["lost_tokens"]} == dict(lost)
    by_cause = {c["cause"]: c["lost_tokens"] for c in stats["by_cause"] if c["lost_tokens"]}
    assert by_cause == dict(break_lost) != dict(lost)
    assert {c["cause"]: c["cache_breaks"] for c in stats["by_cause"] if c["cache_breaks"]} == dict(breaks)
    # a log with no request/header (DSH's child.replay.jsonl fixture) has requests of no model
    by_model: Counter[str | None] = Counter(r["header"]["config"]["model"] if r["header"] else None for r in rows)
    # by the model the price table bills (session 43): each model logged in one row, each request once
    assert {name for m in stats["by_model"] for name in m["logged_models"]} == {m or "unknown" for m in by_model}
    assert sum(m["requests"] for m in stats["by_model"]) == sum(by_model.values())
    assert sum(d["requests"] for d in stats["by_day"]) == len(rows)
    # ranked by what the losses cost, not by tokens (which do not compare across providers)
    worst = max(reports, key=lambda r: r["lost_cost_usd"] or 0)
    assert stats["top_sessions"][0]["lost_cost_usd"] == worst["lost_cost_usd"] > 0
    assert stats["top_sessions"][0]["lost_tokens"] == sum(worst["lost_tokens_by_cause"].values())
    assert len(stats["top_sessions"]) == 10
    costs = [r["lost_cost_usd"] for r in stats["costliest_breaks"]]
    # priced above $0, costliest first; then unknown (null); then $0
    ranks = [(0, -cost) if cost else (1 if cost is None else 2, 0) for cost in costs]
    assert len(costs) == 10 and ranks == sorted(ranks) and costs[0] > 0


@needs_corpus
def test_breaks_table_matches_attribution(corpus_index: Path) -> None:
    connection = sqlite3.connect(corpus_index)
    # The session as DSH persisted it: its export in session-logs/ holds the same lines, so it is not read.
    path = next(str(p.resolve()) for p in (LIVE / "c-change" / "home").rglob("session.jsonl.zstd"))
    rows = connection.execute("SELECT request, previous, relation, cause, fields, evidence_seqs, classification, "
                              "lost_tokens FROM breaks WHERE path = ? ORDER BY request", (path,)).fetchall()
    connection.close()
    from dsh_audit.attribution import attribute

    expected = [t for t in attribute(path).transitions if t.is_break]
    assert [(r[0], r[1], r[2], r[3], json.loads(r[4]), json.loads(r[5])) for r in rows] == [
        (t.request, t.previous, t.relation, t.cause, list(t.field_names), list(t.evidence_seqs)) for t in expected]
    assert [r[6] for r in rows] == ["break_explained"] * 5  # one story: every attribution break
    assert [r[7] for r in rows] == [7936, 0, 1152, 0, 2880]


@needs_corpus
def test_stats_table_and_missing_index(corpus_index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(monkeypatch, capsys, "stats", "--db", str(corpus_index), "--top", "2")
    assert code == 0
    for title in ("fleet totals", "by model", "by day (UTC, request time)", "breaks by cause",
                  "sessions whose cache losses cost the most", "deepseek-v4-flash", "header_change"):
        assert title in out
    code, _, err = run(monkeypatch, capsys, "stats", "--db", str(tmp_path / "none.sqlite"))
    assert code == 2 and err.startswith("error: ") and "no such index" in err


# Incremental indexing ---------------------------------------------------------------------------

@needs_corpus
def test_incremental_index_skips_unchanged_and_replaces_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    chat = sorted((LIVE / "a-chat" / "session-logs").glob("*.jsonl"))[0]
    change = sorted((LIVE / "c-change" / "session-logs").glob("*.jsonl"))[0]
    root = tmp_path / "logs"
    for name, source in (("one", chat), ("two", chat), ("three", change)):  # three sessions: each its own id
        copy_as(source, root / name / "session.jsonl", f"session-{name}")
    (root / "broken").mkdir()
    (root / "broken" / "session.jsonl").write_text('{"type":"session","version":9}\n')
    db = str(tmp_path / "i.sqlite")
    code, out, err = run(monkeypatch, capsys, "index", str(root), "--db", db, "--json")
    first = json.loads(out)
    assert code == 2 and err.count("error: ") == 1 and "broken" in err
    assert (first["seen"], first["indexed"], first["skipped"], first["lost"]) == (4, 4, 0, 0)
    code, out, err = run(monkeypatch, capsys, "index", str(root), "--db", db, "--json", "-j", "2")
    second = json.loads(out)
    broken = str((root / "broken" / "session.jsonl").resolve())
    assert code == 2 and err.count("error: ") == 1 and "broken" in err  # a refused log: reported on every run
    assert (second["indexed"], second["skipped"], second["refused_unchanged"], second["refused"]) == (0, 4, 1, 0)
    assert second["failure_details"] == first["failure_details"] and [f["path"] for f in second["failure_details"]] == [broken]
    target = copy_as(change, root / "two" / "session.jsonl", "session-two")
    later = time.time() + 5
    os.utime(target, (later, later))
    code, out, _ = run(monkeypatch, capsys, "index", str(root), "--db", db, "--json")
    third = json.loads(out)
    assert (third["indexed"], third["skipped"]) == (1, 3)
    connection = sqlite3.connect(db)
    sessions = dict(connection.execute("SELECT path, request_count FROM sessions"))
    per_path = Counter(row[0] for row in connection.execute("SELECT path FROM requests"))
    error = connection.execute("SELECT error_code FROM sessions WHERE path LIKE '%broken%'").fetchone()
    connection.close()
    resolved = {name: str((root / name / "session.jsonl").resolve()) for name in ("one", "two", "three")}
    assert sessions[resolved["two"]] == sessions[resolved["three"]] == 8
    assert per_path[resolved["two"]] == 8 and per_path[resolved["one"]] == sessions[resolved["one"]] == 3
    assert error == ("unsupported",)
    code, out, _ = run(monkeypatch, capsys, "index", str(root), "--db", db, "--json", "--no-cache")
    assert json.loads(out)["indexed"] == 4  # other options: everything again


@needs_corpus
def test_a_version_1_index_is_upgraded_in_place_and_priced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", "1")  # the log alone, as pinned (a capture found prices: test_found38)
    chat = sorted((LIVE / "a-chat" / "session-logs").glob("*.jsonl"))[0]
    db = str(tmp_path / "old.sqlite")
    index_logs([chat], db)
    connection = sqlite3.connect(db)  # what dsh-audit 1 left: no costs table, version 1, options unpriced
    with connection:
        connection.execute("DROP TABLE costs")
        connection.execute("ALTER TABLE requests DROP COLUMN reusable_cache_read")  # schema 5's, added back
        connection.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
        connection.execute("UPDATE sessions SET options = 'lenient=0;max_version=4;attribution=1;cache=1'")
    connection.close()
    code, _, err = run(monkeypatch, capsys, "stats", "--db", db)
    assert code == 2 and err == (f"error: {db}: index schema version 1, this dsh-audit reads {SCHEMA_VERSION} "
                                 "(hint: run `dsh-audit index PATH --db FILE` on the logs to upgrade it in place)\n")
    code, out, err = run(monkeypatch, capsys, "index", str(chat), "--db", db, "--json")
    assert code == 0 and err == (f"note: {db}: index schema 1 upgraded to {SCHEMA_VERSION} in place; every log "
                                 "given was read again to store its priced ledger and reusable cache reads (a "
                                 "stored log not given has none until it is: stats counts them unknown)\n")
    assert (json.loads(out)["indexed"], json.loads(out)["upgraded_from"]) == (1, 1)
    code, out, _ = run(monkeypatch, capsys, "usage", str(chat), "--json")
    usage = json.loads(out)["totals"]
    code, out, _ = run(monkeypatch, capsys, "stats", "--db", db, "--json")
    cost = json.loads(out)["cost"]
    assert code == 0 and (cost["requests"], cost["cost_usd"], cost["unpriced"]) == (
        3, usage["cost_usd"], {"usage not logged": 1})
    code, out, _ = run(monkeypatch, capsys, "cache", str(chat), "--json")
    assert json.loads(run(monkeypatch, capsys, "stats", "--db", db, "--json")[1])["totals"]["reusable_cache_read"] \
        == json.loads(out)["reusable_cache_read"] is not None
    assert cost["cost_usd"]["total"] > 0
    code, out, _ = run(monkeypatch, capsys, "index", str(chat), "--db", db, "--json")
    assert (json.loads(out)["skipped"], json.loads(out)["upgraded_from"]) == (1, None)


@needs_corpus
def test_index_reprices_when_the_price_table_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    chat = sorted((LIVE / "a-chat" / "session-logs").glob("*.jsonl"))[0]
    db = str(tmp_path / "i.sqlite")
    prices = tmp_path / "gateway.toml"
    prices.write_text('[providers.deepseek.models.deepseek-v4-flash]\ncache_miss = 1.0\ncache_read = 0.5\n'
                      'output = 2.0\nsource = "our gateway"\n')
    assert run(monkeypatch, capsys, "index", str(chat), "--db", db)[0] == 0
    code, out, _ = run(monkeypatch, capsys, "index", str(chat), "--db", db, "--json", "--prices", str(prices))
    assert code == 0 and json.loads(out)["indexed"] == 1
    connection = sqlite3.connect(db)
    rows = connection.execute("SELECT cache_miss_tokens, cache_read_tokens, output_tokens, cost_total, rate_source "
                              "FROM costs WHERE cost_total IS NOT NULL ORDER BY idx").fetchall()
    connection.close()
    assert rows and all(source == "our gateway" for *_, source in rows)
    assert [cost for *_, cost, _ in rows] == [
        usd_total([miss * 1e-6, read * 0.5e-6, out * 2e-6]) for miss, read, out, _, _ in rows]
    prices.write_text('[providers.deepseek.models.deepseek-v4-flash]\ncache_miss = -1\ncache_read = 0\noutput = 1\n')
    code, _, err = run(monkeypatch, capsys, "index", str(chat), "--db", db, "--prices", str(prices))
    assert code == 2 and err.count("\n") == 1 and "providers.deepseek.models.deepseek-v4-flash.cache_miss" in err


# Dask engine against a real local cluster -------------------------------------------------------

@contextmanager
def _deadline(seconds: int, why: str) -> Iterator[None]:
    """Fail the test after ``seconds`` instead of waiting: a cluster whose worker processes died
    (seen on a loaded machine, session 41) leaves the run waiting for a worker for ever, as Dask
    means it to, and the suite's worker with it (``alarm``: the test runs in the main thread)."""
    def expire(_signal: int, _frame: Any) -> None:
        raise TimeoutError(why)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@needs_corpus
def test_dask_engine_matches_local(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str], live_index: LiveIndex) -> None:
    distributed = pytest.importorskip("distributed")
    serial = run_serial(monkeypatch, capsys, "requests", "--json", str(LIVE))
    with _deadline(180, "the Dask cluster lost its workers: a run waits for them for ever"), \
            distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     dashboard_address="127.0.0.1:0") as cluster:
        address = cluster.scheduler_address
        on_dask = run(monkeypatch, capsys, "requests", "--json", "--engine", "dask", "--scheduler", address, str(LIVE))
        results = run_many(["0", "bad", "2"], echo, engine="dask", scheduler=address)
        logs = select_logs([LIVE])
        summary = index_logs(logs, tmp_path / "dask.sqlite", engine="dask", scheduler=address)
    assert on_dask == serial
    assert [(r.value, type(r.error).__name__) for r in results] == [
        ("done 0", "NoneType"), (None, "UnreadableError"), ("done 2", "NoneType")]
    assert (summary.indexed, summary.failed) == (len(logs), ())
    assert _dump(tmp_path / "dask.sqlite") == live_index[1]


def test_dask_engine_without_the_extra_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(UsageError) as caught:
        run_many(["a"], echo, engine="dask", scheduler="tcp://127.0.0.1:8786")
    assert "optional 'dask' extra" in caught.value.message
    assert caught.value.hint == "pip install 'dsh-audit[dask]', on this machine and on every worker"


@needs_corpus
def test_cache_jobs_output_is_byte_identical(monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    serial = run_serial_and_parallel(monkeypatch, capsys, "cache", "--json", "--tokenizer", "estimate", str(LIVE))
    assert serial[0] == 0 and len(serial[1].splitlines()) == 11


# --jobs on validate and breaks: cross-log checks stay right --------------------------------------

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
FORK_LOGS = LIVE / "f-fork" / "session-logs"
FORK_CHILD = "402a1ae8-7f85-40fc-b7cf-82cfc177dcd7.jsonl"


@needs_corpus
@pytest.mark.parametrize("args", [[], ["--json"], ["--lenient", "--json"]], ids=["text", "json", "lenient"])
def test_validate_jobs_output_is_byte_identical(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                                args: list[str]) -> None:
    roots = [str(CORPUS)] if "--lenient" in args else [str(LIVE), str(SAMPLES)]
    serial = run_serial_and_parallel(monkeypatch, capsys, "validate", *args, *roots)
    if args == []:
        assert (*serial[:2], _copies_noted(serial[2])) == (
            0, "", (13, 0, "0 error(s), 0 warning(s), 0 info in 21 file(s)\n"))
    elif args == ["--json"]:
        assert (*serial[:2], _copies_noted(serial[2])) == (0, '{"type":"summary","passed":true,"counts":{"error":0,'
                                                                '"warning":0,"info":0},"files":21,"rules":{}}\n', (13, 0, ""))
    else:  # 582 findings (DSH's v1 acp-agent golden snapshots among them; identical snapshot fixtures of one
        # session id are read once, and a child.replay.jsonl whose header has spaces after its colons is
        # found by the folder walk, session 38) and the summary line
        assert serial[0] == 1 and serial[1].count("\n") == 583


@needs_corpus
def test_validate_jobs_checks_a_fork_child_against_its_parent(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    folder = tmp_path / "f-fork"
    shutil.copytree(FORK_LOGS, folder)
    child = folder / FORK_CHILD
    text = child.read_text(encoding="utf-8")
    assert text.count('"seq":12,"time":1796209397874,') == 1
    child.write_text(text.replace('"seq":12,"time":1796209397874,', '"seq":12,"time":1796209397875,'),
                     encoding="utf-8")
    serial = run_serial_and_parallel(monkeypatch, capsys, "validate", str(folder), str(SAMPLES))
    parent = folder / "session-ef87ee25-88b4-4f9c-a682-fd2071e3f0d6.jsonl"
    assert (*serial[:2], _copies_noted(serial[2])) == (
        1, f"{child}:14: seq 12: DSH603 error: seeded event 12 differs from the parent's ({parent} "
           "line 14) (copy the parent's events verbatim into the seed)\n",
        (2, 0, "1 error(s), 0 warning(s), 0 info in 12 file(s): DSH603 x1\n"))
    # Alone, the child has no parent to be compared with, in either mode.
    alone = run(monkeypatch, capsys, "validate", "--jobs", "2", str(child), str(SAMPLES))
    assert (*alone[:2], _copies_noted(alone[2])) == (0, "", (2, 0, "0 error(s), 0 warning(s), 0 info in 11 file(s)\n"))


def _copies_noted(err: str) -> tuple[int, int, str]:
    """How many sessions ``err``'s ``one session in N files`` notes start with (one note of several,
    since fuzz round 23 from every command), how many "session ID is in N files, each listed" notes it has (files of one session that differ, each read: every command
    says so since session 39), and the rest of it: each live scenario holds its session as DSH
    persisted it and as a decompressed export, read once."""
    every = err.splitlines(keepends=True)
    lines = [line for line in every if not re.fullmatch(r"note: session \S+ is in \d+ files, each listed: .+\n", line)]
    listed = len(every) - len(lines)
    grouped = re.match(r"note: (\d+) (?:sessions found in two files each|sessions found in \d+ files) "
                       r"\(the same lines\)", lines[0]) if lines else None
    # several: one note says how many (tests/test_tour36.py); then the notes of one session each
    count, rest = (int(grouped[1]), lines[1:]) if grouped is not None else (0, lines)
    notes = [line for line in rest if re.match(r"note: one session in (?:two|\d+) files under ", line)]
    # the same lines, or (session 41: sample_logs' session-sample-tools, packed and unpacked) the same events
    assert all(line.endswith((" (the same lines)\n", " (the same events)\n")) for line in notes)
    return count + len(notes), listed, "".join(line for line in rest if line not in notes)


def _relations(out: str) -> dict[str, int]:
    return dict(sorted(Counter(json.loads(line)["relation"] for line in out.splitlines()).items()))


@needs_corpus
@pytest.mark.parametrize("args", [[], ["--json", "--all"], ["--lenient", "--json", "--all"]],
                         ids=["table", "json", "lenient"])
def test_breaks_jobs_output_is_byte_identical(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                              args: list[str]) -> None:
    roots = [str(CORPUS)] if "--lenient" in args else [str(LIVE), str(SAMPLES)]
    serial = run_serial_and_parallel(monkeypatch, capsys, "breaks", *args, *roots)
    if args == []:
        # the table's line count depends on how long the paths are (rich wraps), so not asserted
        # exit 0: every break of the live runs and samples is explained (README's exit codes)
        assert (serial[0], _copies_noted(serial[2])) == (0, (13, 0, "")) and "header_change" in serial[1]
    elif args == ["--json", "--all"]:
        assert (serial[0], _copies_noted(serial[2])) == (0, (13, 0, ""))
        assert _relations(serial[1]) == {"compaction_call": 4, "first": 17, "fork": 3, "resume": 5, "retry": 3,
                                         "step": 58, "subagent": 1, "title_call": 10}
    else:
        copies, listed, rest = _copies_noted(serial[2])
        # 23: breaks says each log's own warnings too (tour 38: a crash-damaged tail of a fixture)
        # 15 sessions in 34 files (17 copies left out, 3 of them identical snapshot fixtures of one session
        # id, read once since session 38; one note since fuzz round 23);
        # 462: the spaced-header child.replay.jsonl fixture found by the folder walk (session 38);
        # 12 snapshot fixtures' session ids each in several fixtures that differ, each read (session 39)
        assert (serial[0], serial[1].count("\n"), copies, listed, rest.count("\n")) == (2, 462, 15, 12, 23)


@needs_corpus
def test_breaks_jobs_compare_a_child_with_a_given_or_missing_parent(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    logs = LIVE / "g-subagent" / "session-logs"
    parent = logs / "session-70444d8d-ee1d-43e9-8341-470b57f1019c.jsonl"
    child = tmp_path / "718aabf5-ac98-48d9-87ec-fa18653fd4d4.jsonl"
    shutil.copy(logs / child.name, child)  # away from its parent: only a given parent can be found
    for given, relations in (([str(child)], {"first": 1, "step": 1}),
                             ([str(child), str(parent)], {"first": 1, "step": 3, "subagent": 1, "title_call": 1}),
                             ([str(parent), str(child), str(SAMPLES)], None)):
        serial = run_serial_and_parallel(monkeypatch, capsys, "breaks", "--json", "--all", *given)
        first = json.loads(serial[1].splitlines()[0 if given[0] == str(child) else 4])
        assert first["session_id"] == "718aabf5-ac98-48d9-87ec-fa18653fd4d4"
        if relations is not None:
            assert _relations(serial[1]) == relations
        if given == [str(child)]:
            assert first["notes"] == ["parent session session-70444d8d-ee1d-43e9-8341-470b57f1019c is not among "
                                      "the given logs"]
        else:
            assert (first["relation"], first["previous"], first["cause"]) == ("subagent", 1, "subagent")


@needs_corpus
@pytest.mark.parametrize("command", ["validate", "breaks"])
def test_since_on_validate_and_breaks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str], command: str) -> None:
    old, new = _dated_logs(tmp_path)
    code, out, err = run(monkeypatch, capsys, command, "--json", "--all" if command == "breaks" else "--strict",
                         "--since", "2027-01-01", "-j", "2", str(tmp_path))
    alone = run(monkeypatch, capsys, command, "--json", "--all" if command == "breaks" else "--strict", str(new))
    assert (code, out) == alone[:2]
    assert err.startswith("note: --since 2027-01-01T00:00:00Z: " + _LEFT_OUT.format(2))
    assert str(old) not in out
    if command == "breaks":
        assert [json.loads(line)["request"] for line in out.splitlines()] == [0, 1, 2]
    # Nothing modified since: nothing to check, and no default sessions root is read instead; the
    # gate validate exits 2 then (README: Exit codes), breaks lists nothing.
    code, out, err = run(monkeypatch, capsys, command, "--since", "0s", str(old))
    if command == "validate":
        lines = err.splitlines()
        assert (code, out, len(lines)) == (2, "", 2) and lines[0].endswith(": " + _LEFT_OUT.format(1).strip())
        assert re.fullmatch(re.escape(f"error: {old}: no session log has activity in --since ") + r"\S+ "
                            + re.escape("(by the logs' own timestamps) (hint: widen or drop --since/--until)"),
                            lines[1]), lines[1]
    else:
        assert (code, out) == (0, "") and err.endswith(": " + _LEFT_OUT.format(1))


def test_another_build_of_dsh_audit_indexes_every_log_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """A record is skipped only when the same build made it: another one may attribute, account or
    price by other rules, with the same price table and options."""
    import dsh_audit.fleet._audit as audit

    logs = [str(p) for p in sorted((Path(__file__).resolve().parent.parent / "sample_logs").glob("*/session.jsonl"))]
    db = str(tmp_path / "index.sqlite")
    assert json.loads(run(monkeypatch, capsys, "index", *logs, "--db", db, "--json")[1])["indexed"] == len(logs)
    assert json.loads(run(monkeypatch, capsys, "index", *logs, "--db", db, "--json")[1])["skipped"] == len(logs)
    monkeypatch.setattr(audit, "code_fingerprint", lambda: "another-build")
    again = json.loads(run(monkeypatch, capsys, "index", *logs, "--db", db, "--json")[1])
    assert (again["indexed"], again["skipped"]) == (len(logs), 0)
    stored = {row[0] for row in sqlite3.connect(db).execute("SELECT options FROM sessions")}
    assert len(stored) == 1 and stored.pop().endswith(";code=another-build")
