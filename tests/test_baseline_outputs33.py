"""No report of ``check`` or ``report`` is written over the baseline the run reads (fuzz round 14):
``--junit``, ``--sarif``, ``--markdown``, ``GITHUB_STEP_SUMMARY`` and ``report -o`` are refused
(exit 2, the baseline unchanged), whether the baseline is given with ``--baseline`` or named by the
policy; ``--json-report`` may still replace it (docs/ci.md: the next baseline)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from _cli import chat_log, invoke


@pytest.fixture
def gate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """A log in ``s/`` and its check's JSON report as ``b.json``, the current folder ``tmp_path``."""
    chat_log(tmp_path / "s" / "session.jsonl", "s-base")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    code, _, _ = invoke(monkeypatch, capsys, "check", "s", "--json-report", "b.json")
    assert code == 0
    return tmp_path


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(("args", "what"), [
    (["check", "s", "--baseline", "b.json", "--junit", "b.json"], "JUnit report"),
    (["check", "s", "--baseline", "b.json", "--sarif", "b.json"], "SARIF report"),
    (["check", "s", "--baseline", "b.json", "--markdown", "b.json"], "Markdown summary"),
    (["check", "s", "--policy", "p.toml", "--junit", "b.json"], "JUnit report"),
    (["report", "s", "--baseline", "b.json", "-o", "b.json"], "HTML report"),
    (["report", "s", "--policy", "p.toml", "-o", "b.json"], "HTML report")])
def test_a_report_over_the_baseline_is_refused(gate: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str], args: list[str], what: str) -> None:
    (gate / "p.toml").write_text('[check]\nbaseline = "b.json"\n', "utf-8")
    before = _digest(gate / "b.json")
    code, out, err = invoke(monkeypatch, capsys, *args)
    assert (code, out, len(err)) == (2, "", 1)
    assert err[0].startswith("error: ") and "would overwrite the input" in err[0] and "b.json" in err[0], err
    assert _digest(gate / "b.json") == before


def test_the_step_summary_over_the_baseline_is_refused_and_the_json_report_may_replace_it(
        gate: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    before = _digest(gate / "b.json")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(gate / "b.json"))
    code, out, err = invoke(monkeypatch, capsys, "check", "s", "--baseline", "b.json")
    assert (code, out, err) == (2, "", [f"error: {gate / 'b.json'}: the GITHUB_STEP_SUMMARY would overwrite the "
                                        "input b.json (hint: point GITHUB_STEP_SUMMARY at another file)"])
    assert _digest(gate / "b.json") == before
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    # the next baseline, written over the one the run read, and a run with it passes
    code, _, _ = invoke(monkeypatch, capsys, "check", "s", "--baseline", "b.json", "--json-report", "b.json")
    assert code == 0
    code, out, err = invoke(monkeypatch, capsys, "check", "s", "--baseline", "b.json")
    assert code == 0 and out.splitlines()[-1].startswith("PASSED")
