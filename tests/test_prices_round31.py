"""An integer past Python's digit limit in a JSON price table is refused in the project's words
(fuzz round 11): ``int()`` refuses a literal of more than 4,300 digits, so a 5,000-digit rate was
"price table is not valid JSON: Exceeds the limit (4300 digits) for integer string conversion",
where a 401-digit one is "a 401-digit number is above 1e+09, not a price". ``JSON.parse`` reads it
(as infinity); the price loader now reads it so too and refuses it where it stands, by key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _cli import chat_log, invoke

HUGE = "1" + "0" * 4999  # 5,000 digits, past Python's 4,300
TABLE_HINT = ("(hint: fix this key in the --prices file; "
              "the Price files section of docs/cache-accounting.md gives the shape)")
FILE_HINT = ("(hint: give --prices a JSON price table (or a TOML one, named *.toml); "
             "the Price files section of docs/cache-accounting.md gives the shape)")
RATE = "providers.deepseek.models.deepseek-v4-flash[0].cache_miss"


def _usage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
           document: str) -> tuple[int, str, list[str], str]:
    """``usage --prices`` of a chat log with a price table holding ``document``; the table's path last."""
    prices = tmp_path / "prices.json"
    prices.write_text(document, encoding="utf-8")
    log = chat_log(tmp_path / "session.jsonl", "digits")
    return (*invoke(monkeypatch, capsys, "usage", str(log), "--prices", str(prices)), str(prices))


def _rates(cache_miss: str) -> str:
    return ('{"providers": {"deepseek": {"models": {"deepseek-v4-flash": [{"cache_miss": ' + cache_miss
            + ', "cache_read": 0.03, "output": 0.5}]}}}}')


@pytest.mark.parametrize("digits", [401, 4300, 4301, 5000, 100_000])
def test_a_rate_of_many_digits_is_not_a_price(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str], digits: int) -> None:
    """Below the digit limit and past it alike: one line, the key and the number's size."""
    code, out, err, prices = _usage(tmp_path, monkeypatch, capsys, _rates("9" * digits))
    assert (code, out, err) == (2, "", [
        f"error: {prices}: price table key {RATE}: a {digits}-digit number is above 1e+09, not a price {TABLE_HINT}"])


def test_a_huge_integer_beside_a_syntax_error_is_the_syntax_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A file that is not JSON after its huge integer: its syntax error, where it is, not Python's
    digit limit (which comes first in the file)."""
    document = _rates(HUGE)[:-1] + ",}"
    code, out, err, prices = _usage(tmp_path, monkeypatch, capsys, document)
    assert (code, out, err) == (2, "", [
        f"error: {prices}:1: price table is not valid JSON: Expecting property name enclosed in double quotes: "
        f"line 1 column {len(document)} (char {len(document) - 1}) {FILE_HINT}"])


def test_a_huge_integer_elsewhere_is_refused_by_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Not only as a rate: an unknown key holding one is an unknown key, ``per_tokens`` holding one
    is not the packaged unit (said by its size, as a rate's is)."""
    code, out, err, prices = _usage(tmp_path, monkeypatch, capsys, '{"providers": {}, "x": ' + HUGE + "}")
    assert (code, out, err) == (2, "", [
        f"error: {prices}: price table key x: unknown key; known: currency, gaps, note, per_tokens, providers, "
        f"schema {TABLE_HINT}"])
    code, out, err, prices = _usage(tmp_path, monkeypatch, capsys, json.dumps({"providers": {}})[:-1]
                                    + ', "per_tokens": ' + HUGE + "}")
    assert (code, out, err) == (2, "", [
        f"error: {prices}: price table key per_tokens: a 5000-digit number is not the packaged table's 1000000: every rate is read "
        f"per 1000000 tokens (leave it out and give the rates per 1000000 tokens) {TABLE_HINT}"])
