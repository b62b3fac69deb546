"""Tripwire: the package type-checks under ``mypy --strict`` (STYLE.md), with the repo's config."""

from __future__ import annotations

from pathlib import Path

import pytest

api = pytest.importorskip("mypy.api", reason="mypy is in the test extra: pip install -e '.[test]'")

ROOT = Path(__file__).resolve().parent.parent


def test_package_passes_mypy_strict(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)  # [tool.mypy] in pyproject.toml is read from the working directory
    # A fresh cache: the run is what CI gets (cold, about 4 s on two cores) and shares no state.
    stdout, stderr, status = api.run(["--strict", "--cache-dir", str(tmp_path / "mypy"), "dsh_audit"])
    output = stdout + stderr
    assert [line for line in output.splitlines() if ": error:" in line] == [], output
    assert status == 0, output
    assert output.startswith("Success: no issues found in "), output
