"""One story in every view: breaks, cache, check, index and stats count the same breaks, per log,
over the whole corpus and the sample logs (a break is what attribution calls a break)."""

from __future__ import annotations

import sqlite3
from collections import Counter
from functools import partial
from pathlib import Path

import pytest

from dsh_audit.attribution import attribute_paths
from dsh_audit.cache import BREAKS, cache_group
from dsh_audit.fleet import fleet_stats, index_logs
from dsh_audit.gate import run_check
from dsh_audit.log import discover
from dsh_audit.session import Failure, run_groups

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


@needs_corpus
def test_cache_counts_the_breaks_attribution_finds(logs: list[Path], breaks: dict[str, int]) -> None:
    reports = run_groups(logs, partial(cache_group, lenient=True, tokenizer="estimate"))
    counted = {r.path: r.break_count for r in reports if not isinstance(r, Failure)}
    assert counted == breaks
    assert sum(breaks.values()) > 50  # the corpus is full of header changes, compactions, forks


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
