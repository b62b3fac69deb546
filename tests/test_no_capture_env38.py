"""Fuzz round 21 (D2): ``$DSH_AUDIT_NO_CAPTURE`` is read as click reads the flag's own variable
(``$DSH_AUDIT_USAGE_NO_CAPTURE``...): ``no``, ``false``, ``off``, ``0`` or empty leave found captures
on, anything true turns them off; both variables give the same numbers for the same value."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _cli import invoke

ROOT = Path(__file__).resolve().parent.parent
CHANGE = ROOT.parent / "shared" / "corpus" / "live" / "c-change"
pytestmark = pytest.mark.skipif(not CHANGE.is_dir(), reason="../shared/corpus is absent")


def _priced(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], log: Path) -> tuple[int, str]:
    code, out, _ = invoke(monkeypatch, capsys, "usage", str(log), "--json")
    total = json.loads(out)["totals"]
    return code, f"{total['cost_usd']['total']} {total['unpriced_requests']}"


@pytest.mark.parametrize("value", ["", "no", "OFF", "1", "On"])
def test_both_variables_read_a_value_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str], value: str) -> None:
    shutil.copy(CHANGE / "wire.jsonl", tmp_path / "wire.jsonl")
    log = next((CHANGE / "home" / "sessions").rglob("session.jsonl.zstd"))
    shutil.copy(log, tmp_path / "session.jsonl.zstd")
    found = (0, "0.01109977 0")  # the title call priced from the capture found beside the log
    alone = (0, "0.01107667 1")  # the log alone: its title call unpriced
    expected = alone if value.strip().lower() in ("1", "yes", "true", "on") else found
    monkeypatch.setenv("DSH_AUDIT_NO_CAPTURE", value)
    assert _priced(monkeypatch, capsys, tmp_path / "session.jsonl.zstd") == expected
    monkeypatch.delenv("DSH_AUDIT_NO_CAPTURE")
    monkeypatch.setenv("DSH_AUDIT_USAGE_NO_CAPTURE", value)
    assert _priced(monkeypatch, capsys, tmp_path / "session.jsonl.zstd") == expected
