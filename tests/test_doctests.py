"""The examples in docstrings run (from the repository root, where sample_logs/ lives)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODULES = ["dsh_audit", "dsh_audit.jsjson", "dsh_audit.replay._header", "dsh_audit.replay._derive",
           "dsh_audit.replay._surface", "dsh_audit.replay._message_view",
           "dsh_audit.replay._prefix_digest", "dsh_audit.replay._model", "dsh_audit.log._format", "dsh_audit.log._header",
           "dsh_audit._seq",
           "dsh_audit.wire._piai_js", "dsh_audit.cache._rules", "dsh_audit.cache._ledger", "dsh_audit.cache._money",
           "dsh_audit.cache._retention_body", "dsh_audit.cache._sums",
           "dsh_audit.cache._rule_data", "dsh_audit.cache._zdr", "dsh_audit.cache._body_json",
           "dsh_audit.session._route_notes",
           "dsh_audit.cache._tokens", "dsh_audit._json", "dsh_audit.wire._markers", "dsh_audit.report._safe_text",
           "dsh_audit.report._cells", "dsh_audit.report._fit_text", "dsh_audit.report._html_sessions",
           "dsh_audit.report._table_draw",
           "dsh_audit.cli._logs", "dsh_audit.cli._one_request", "dsh_audit.cli._output", "dsh_audit.cli._validate",
           "dsh_audit.cli._when"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name, monkeypatch):
    monkeypatch.chdir(ROOT)
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
