"""A price file nested deeper than Python's stack is one error line, never a traceback (fuzz
round 11: a value nested 340-990 levels deep raised RecursionError while looking for numbers
past the double range), and the value it quotes is cut."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsh_audit.testing import LogBuilder
from _cli import invoke

RATES = {"cache_miss": 0.3, "cache_read": 0.03, "output": 0.5}
HINT = ("(hint: fix this key in the --prices file; "
        "the Price files section of docs/cache-accounting.md gives the shape)")


def _log(tmp_path: Path) -> str:
    b = LogBuilder(session_id="deep")
    with b.turn("Hi"):
        with b.step():
            b.assistant("Hello")
    return str(b.write_jsonl(tmp_path / "session.jsonl"))


def _prices(tmp_path: Path, document: str) -> str:
    path = tmp_path / "prices.json"
    path.write_text(document, encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("depth", [400, 900])
def test_a_deep_unknown_member_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str], depth: int) -> None:
    table = json.dumps({"providers": {"deepseek": {"models": {"deepseek-v4-flash": [RATES]}}}})
    prices = _prices(tmp_path, table[:-1] + ', "x": ' + "[" * depth + "]" * depth + "}")
    assert invoke(monkeypatch, capsys, "usage", _log(tmp_path), "--prices", prices) == (2, "", [
        f"error: {prices}: price table key x: unknown key; known: currency, gaps, note, per_tokens, providers, "
        f"schema {HINT}"])


def test_a_deep_rate_is_quoted_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    prices = _prices(tmp_path, '{"providers": {"deepseek": {"models": {"deepseek-v4-flash": [{"cache_miss": '
                     + "[" * 500 + "]" * 500 + ', "cache_read": 0.03, "output": 0.5}]}}}}')
    assert invoke(monkeypatch, capsys, "usage", _log(tmp_path), "--prices", prices) == (2, "", [
        f"error: {prices}: price table key providers.deepseek.models.deepseek-v4-flash[0].cache_miss: "
        f"{'[' * 57}... is not a rate (a number >= 0) {HINT}"])
