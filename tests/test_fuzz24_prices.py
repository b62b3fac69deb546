"""Fuzz round 24, price files and the nearest ``pyproject.toml``: a JSON price table that writes a
key twice is refused at the second one, as TOML refuses it (the last one won in silence); a broken
``pyproject.toml`` is named as the file it is (``pyproject.toml is not valid TOML``), never as a
price table it may not hold, by every command that reads it; a leading UTF-8 byte order mark is
refused by its name in a TOML file (tomllib said ``Invalid statement``) and in a JSON price table
alike (one was read past), as a ``pyproject.toml`` or policy file with one was refused already.
Round 25: a UTF-16 or UTF-32 JSON price table, read and applied, is refused as not UTF-8 text, as
its TOML twin is.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from _cli import chat_log, invoke
from dsh_audit._json_keys import loads_unique
from dsh_audit._config_read import ConfigFileError, read_json
from dsh_audit.cache import load_prices, pyproject_zero_data_retention
from test_prices_round31 import FILE_HINT, HUGE  # past Python's digit limit: the price reader parses it twice

BOM = b"\xef\xbb\xbf"
TOML_HINT = ("(hint: give --prices a TOML price table; the Price files section of docs/cache-accounting.md gives "
             "the shape)")
FOUND_HINT = ("(hint: fix or move this pyproject.toml (the nearest to the current folder): dsh-audit reads its "
              "[tool.dsh-audit] table)")
CHEAP = '{"cache_miss": 1, "cache_read": 0.1, "output": 2}'


def _usage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
           *args: str) -> tuple[int, str, list[str]]:
    """``usage`` of a one-turn chat log, in ``tmp_path`` (no pyproject.toml above it but one a test writes)."""
    log = chat_log(tmp_path / "logs" / "session.jsonl", "fuzz24")
    monkeypatch.chdir(tmp_path)
    return invoke(monkeypatch, capsys, "usage", str(log), *args)


@pytest.mark.parametrize(("document", "place"), [
    # p/p5.json of the round: the second model's rates won, the cost nine times the first's
    ('{"providers":{"deepseek":{"models":{"deepseek-v4-flash":' + CHEAP + ',\n  "deepseek-v4-flash":'
     '{"cache_miss":9,"cache_read":0.9,"output":9}}}}}', ("deepseek-v4-flash", 2, 3)),
    ('{"providers": {"deepseek": {"models": {"deepseek-v4-flash": {"cache_miss": 1, "cache_read": 0.1,\n'
     '"output": 2, "cache_read": 0.2}}}}}', ("cache_read", 2, 14)),
    ('{"note": "a",\n"per_tokens": 1000000, "note": "b", "providers": {}}', ("note", 2, 24)),
    ('{"providers": {}, "\\u0061 b": 1,\n "a b": 2}', ('"a b"', 2, 2)),  # an escape writes the same key
    # past the digit limit, the file is parsed again: a duplicate there is refused the same
    ('{"x": ' + HUGE + ',\n "providers": {"a": {}, "a": {}}}', ("a", 2, 25)),
], ids=["model", "rate", "top-level", "escaped", "past-the-digit-limit"])
def test_a_json_price_table_refuses_a_key_written_twice(tmp_path, monkeypatch, capsys, document, place):
    prices = tmp_path / "prices.json"
    prices.write_text(document, encoding="utf-8")
    key, line, column = place
    char = len("\n".join(document.split("\n")[:line - 1])) + column
    assert _usage(tmp_path, monkeypatch, capsys, "--prices", str(prices)) == (2, "", [
        f"error: {prices}:{line}: price table is not valid JSON: duplicate key {key}: line {line} column {column} "
        f"(char {char}) {FILE_HINT}"])


def test_read_json_keeps_the_last_key_unless_asked_and_a_key_may_recur_in_other_objects(tmp_path):
    path = tmp_path / "b.json"
    path.write_bytes(BOM + b'{"a": {"x": 1}, "b": {"x": 2}, "a": 3}')  # a baseline's reading: unchanged
    assert read_json(path, what="baseline") == {"a": 3, "b": {"x": 2}}
    with pytest.raises(ConfigFileError) as caught:
        read_json(path, what="price table", loads=loads_unique)
    assert (caught.value.reason, caught.value.line, caught.value.column, caught.value.message) == (
        "syntax", 1, 32, "price table is not valid JSON: duplicate key a: line 1 column 32 (char 31)")
    path.write_bytes(b'{"a": {"x": 1}, "b": {"x": 2}}')
    assert read_json(path, what="price table", loads=loads_unique, bom=False) == {"a": {"x": 1}, "b": {"x": 2}}


BROKEN = {  # the round's p/pp8 and p/pp7: no [tool.dsh-audit] table, or none that can be told
    "syntax": (b'[project]\nname = \n[tool.black]\n', ":2: pyproject.toml is not valid TOML: Invalid value "
               "(at line 2, column 8)"),
    "encoding": (b'[project]\nname="caf\xe9"\n', ":2: pyproject.toml is not UTF-8 text (byte 19)"),
    "bom": (BOM + b'[project]\nname = "x"\n', ":1: pyproject.toml starts with a UTF-8 byte order mark (BOM): "
            "save it without one"),
}


@pytest.mark.parametrize("command", ["usage", "sessions", "cache", "check"])
@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_a_broken_pyproject_is_named_as_itself_by_every_command(tmp_path, monkeypatch, capsys, command, broken):
    text, message = BROKEN[broken]
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_bytes(text)
    log = chat_log(tmp_path / "logs" / "session.jsonl", "fuzz24")
    monkeypatch.chdir(tmp_path)
    assert invoke(monkeypatch, capsys, command, str(log)) == (2, "", [f"error: {pyproject}{message} {FOUND_HINT}"])


@pytest.mark.parametrize("reader", [lambda folder: load_prices(search_from=folder),
                                    lambda folder: pyproject_zero_data_retention(folder)], ids=["prices", "zdr"])
def test_the_price_and_zdr_readers_word_a_broken_pyproject_alike(tmp_path: Path, reader: Callable[[Path], object]):
    (tmp_path / "pyproject.toml").write_bytes(BROKEN["syntax"][0])
    with pytest.raises(ConfigFileError) as caught:
        reader(tmp_path)
    assert str(caught.value) == f"{tmp_path / 'pyproject.toml'}{BROKEN['syntax'][1]} {FOUND_HINT}"


TOML_PRICES = b'[providers.deepseek.models]\n"deepseek-v4-flash" = ' + CHEAP.replace(":", " =").encode() + b"\n"
JSON_PRICES = json.dumps({"providers": {"deepseek": {"models": {"deepseek-v4-flash": json.loads(CHEAP)}}}}).encode()
BOM_SAID = ":1: price table starts with a UTF-8 byte order mark (BOM): save it without one"


def _wide(codec: str) -> Callable[[bytes], bytes]:
    return lambda text: text.decode("utf-8").encode(codec)


@pytest.mark.parametrize(("name", "text", "spoil", "said", "hint"), [
    # the round's p/p13.toml: "Invalid statement (at line 1, column 1)"
    ("prices.toml", TOML_PRICES, BOM.__add__, BOM_SAID, TOML_HINT),
    ("prices.json", JSON_PRICES, BOM.__add__, BOM_SAID, FILE_HINT),  # read past, where its TOML twin was refused
    # fuzz 25 pr/utf16.json, pr/utf16le.json: UTF-16 JSON (json.loads reads it) was applied, its TOML twin refused
    ("prices.toml", TOML_PRICES, _wide("utf-16"), ":1: price table is not UTF-8 text (byte 0)", TOML_HINT),
    ("prices.json", JSON_PRICES, _wide("utf-16"),
     ":1: price table is not UTF-8 text (UTF-16, by its first bytes): save it as UTF-8", FILE_HINT),
    ("prices.json", JSON_PRICES, _wide("utf-16-le"),
     ":1: price table is not UTF-8 text (UTF-16-LE, by its first bytes): save it as UTF-8", FILE_HINT),
    ("prices.json", JSON_PRICES, _wide("utf-32-be"),
     ":1: price table is not UTF-8 text (UTF-32-BE, by its first bytes): save it as UTF-8", FILE_HINT),
], ids=["toml-bom", "json-bom", "toml-utf16", "json-utf16", "json-utf16le", "json-utf32be"])
def test_a_price_table_that_is_not_utf8_is_refused_by_name(tmp_path, monkeypatch, capsys, name, text, spoil, said,
                                                           hint):
    prices = tmp_path / name
    prices.write_bytes(text)
    assert _usage(tmp_path, monkeypatch, capsys, "--prices", str(prices))[0] == 0  # the table is good without it
    prices.write_bytes(spoil(text))
    assert _usage(tmp_path, monkeypatch, capsys, "--prices", str(prices)) == (2, "", [
        f"error: {prices}{said} {hint}"])


def test_a_policy_file_with_a_bom_is_refused_by_name(tmp_path, monkeypatch, capsys):
    policy = tmp_path / "policy.toml"
    policy.write_bytes(BOM + b"ignore = []\n")
    log = chat_log(tmp_path / "logs" / "session.jsonl", "fuzz24")
    assert invoke(monkeypatch, capsys, "check", str(log), "--policy", str(policy)) == (2, "", [
        f"error: {policy}:1: policy file starts with a UTF-8 byte order mark (BOM): save it without one (hint: fix "
        "this file, or give another --policy FILE; see the Policy section of docs/ci.md)"])
