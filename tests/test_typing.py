"""Tripwire: the package type-checks under ``mypy --strict`` (STYLE.md), with the repo's config."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest
from _properties import FULL_RUN

api = pytest.importorskip("mypy.api", reason="mypy is in the test extra: pip install -e '.[test]'")

ROOT = Path(__file__).resolve().parent.parent


def test_package_passes_mypy_strict(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # [tool.mypy] in pyproject.toml is read from the working directory
    # mypy's own incremental cache, .mypy_cache (where `mypy --strict dsh_audit` keeps it): mypy
    # checks again every module whose source, dependencies or options changed, so the verdict is
    # a cold run's; a fresh clone (CI) has none and runs cold (about 10 s of CPU), a tree that
    # ran mypy before takes about 1 s. mypy writes each cache file atomically, so runs beside it
    # share it safely. DSH_AUDIT_SLOW=1 (and `pytest -m slow`) checks from a fresh cache.
    cache = tmp_path / "mypy" if FULL_RUN else ROOT / ".mypy_cache"
    # mypy raises the recursion limit (to 16384) and the garbage collector's thresholds for the whole
    # process and leaves them so; the tests after this one in the worker (it runs early: conftest.py,
    # LONGEST_FIRST) must get Python's own, or a JSON text nested 5,000 deep parses where it must fail
    limit, thresholds = sys.getrecursionlimit(), gc.get_threshold()
    try:
        stdout, stderr, status = api.run(["--strict", "--cache-dir", str(cache), "dsh_audit"])
    finally:
        sys.setrecursionlimit(limit)
        gc.set_threshold(*thresholds)
    output = stdout + stderr
    assert [line for line in output.splitlines() if ": error:" in line] == [], output
    assert status == 0, output
    assert output.startswith("Success: no issues found in "), output
