"""The examples in docstrings run (from the repository root, where sample_logs/ lives)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import dsh_audit

ROOT = Path(__file__).resolve().parent.parent
#: Every module of the package (``__main__`` runs the CLI when imported): a docstring example that
#: is wrong fails here, wherever it is written; a module without examples is passed over.
MODULES = ["dsh_audit", *sorted(info.name for info in pkgutil.walk_packages(dsh_audit.__path__, "dsh_audit.")
                              if not info.name.endswith(".__main__"))]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
