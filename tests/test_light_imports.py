"""``dsh-audit stats`` answers from the index alone, so it imports only the index's schema, its rows
and the money values it sums: none of the log pipeline (replay, wire, session, attribution,
capture, the ledger and price table) nor the process pool (issue 11: start-up cost); the price
table only to say the caveats of requests priced at the peak rate (issue 13).

Each check runs a fresh interpreter, so what the test process imported does not count.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from _cli import invoke
from dsh_audit.fleet import fleet_stats

ROOT = Path(__file__).resolve().parent.parent

#: What ``stats`` never needs: the pipeline that reads, replays, renders, attributes and prices logs,
#: the indexing half of ``fleet``, the ``usage`` command, and the third-party modules of other paths.
HEAVY = frozenset({
    "dsh_audit.replay", "dsh_audit.wire", "dsh_audit.session", "dsh_audit.attribution", "dsh_audit.capture",
    "dsh_audit.importers", "dsh_audit.validate", "dsh_audit.runner", "dsh_audit.gate", "dsh_audit.diff",
    "dsh_audit.fleet._audit", "dsh_audit.fleet._index", "dsh_audit.cache._ledger", "dsh_audit.cache._prices",
    "dsh_audit.cache._session", "dsh_audit.cache._account", "dsh_audit.cache._tokens", "dsh_audit.cli._usage",
    "dsh_audit.log._decode", "dsh_audit.log._reader", "zstandard",
    "deepdiff", "yaml", "tomllib", "multiprocessing", "concurrent.futures",
})
#: What the stats path is made of (the scan sees its imports at all).
LIGHT = frozenset({"dsh_audit.fleet._stats", "dsh_audit.fleet._db", "dsh_audit.fleet._rows", "dsh_audit.cache._money",
                   "dsh_audit.cache._sums"})

# Writes every module the run loaded to stderr at exit (``importlib.import_module``, which the
# packages' lazy names and the CLI's command table use, escapes ``-X importtime``).
_LIST_MODULES = ("import atexit, sys; atexit.register(lambda: sys.stderr.write("
                 "''.join(f'imported: {m}\\n' for m in sorted(sys.modules))))")


def _run(code: str, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``python -c CODE ARGS`` in a fresh interpreter: the result and every module it imported."""
    result = subprocess.run([sys.executable, "-c", f"{_LIST_MODULES}\n{code}", *args], capture_output=True,
                            text=True, cwd=ROOT, timeout=60)
    modules = {line.removeprefix("imported: ") for line in result.stderr.splitlines() if line.startswith("imported: ")}
    return result, modules


def test_the_heavy_list_names_modules_that_exist():
    """A misspelt name would make the absence checks below pass whatever is imported."""
    result, modules = _run("import dsh_audit.fleet._index, dsh_audit.cli._usage, dsh_audit.gate, dsh_audit.diff")
    assert result.returncode == 0, result.stderr[-2000:]
    assert sorted(m for m in HEAVY if m.startswith("dsh_audit") and m not in modules) == []


@pytest.mark.parametrize("code", ["import dsh_audit.fleet._stats", "from dsh_audit.fleet import fleet_stats",
                                  "import dsh_audit.cli._fleet"])
def test_the_stats_modules_import_no_pipeline(code):
    result, modules = _run(code)
    assert result.returncode == 0, result.stderr[-2000:]
    assert LIGHT <= modules
    assert sorted(HEAVY & modules) == []


def test_stats_command_imports_no_pipeline(tmp_path, monkeypatch, capsys):
    db = str(tmp_path / "index.sqlite")
    code, out, err = invoke(monkeypatch, capsys, "index", str(ROOT / "sample_logs"), "--db", db, "--json")
    summary = json.loads(out)
    # sample_logs holds the chat session as DSH keeps it and as a plain copy, and the tools session
    # packed and unpacked (the same events): each read once, with a note (session 41)
    assert (code, [line.split(",")[0] for line in err], summary["failure_details"], summary["skipped"]) == (
        0, [f"note: one session in two files under {ROOT / 'sample_logs'}/: read sessions"
            f"/--home-dev-projects-demo--/session-sample-{name}/session.jsonl.zstd" for name in ("chat", "tools")],
        [], 0)
    assert summary["indexed"] == summary["seen"] > 2
    result, modules = _run("import runpy; runpy.run_module('dsh_audit', run_name='__main__', alter_sys=True)",
                           "stats", "--db", db, "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout) == fleet_stats(db).to_json()
    assert LIGHT | {"dsh_audit.cli._fleet"} <= modules
    # the sample logs hold requests priced at the peak rate: their caveats need the price table that
    # priced them (issue 13); an index without one loads none (tests/test_stats_caveats34.py)
    priced = {"dsh_audit.cache._prices", "tomllib"}
    assert sorted((HEAVY - priced | {"rich"}) & modules) == []  # --json draws no table: not even rich
