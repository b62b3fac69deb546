"""Two wordings from fuzz round 25.

1. A price file's error quoted a value in Python's spelling (``True``, ``nan``, ``inf``, ``'x'``,
   ``None``), which names nothing the user can find in the file: each value is now quoted as the
   file's language writes it (JSON's ``true``, ``NaN``, ``Infinity``, ``"x"``, ``null``; TOML's
   ``true``, ``nan``, ``inf``, inline tables and dates), a ``pyproject.toml``'s table as TOML.
2. Gzip data under a ``Content-Encoding`` naming ``br`` or ``deflate`` was said to have "no
   Content-Encoding: gzip" as if it had none: the note names the coding its header does give.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dsh_audit.cache import load_prices
from dsh_audit.capture._types import unreadable_body
from dsh_audit.errors import UsageError

_RATE = "providers.deepseek.models.m"
_WINDOW = "providers.deepseek.windows[0]"
_RATES_TOML = "[providers.deepseek.models.m]\ncache_read = 0.1\noutput = 2\n"
_WINDOW_TOML = '[[providers.deepseek.windows]]\npeak_hours = ["09:00-12:00"]\n'
_DAYS = "is not a list of mon, tue, wed, thu, fri, sat, sun"


def _rates_json(miss: str) -> str:
    rate = f'{{"cache_miss": {miss}, "cache_read": 0.1, "output": 2}}'
    return f'{{"providers": {{"deepseek": {{"models": {{"m": {rate}}}}}}}}}'


def _window_json(extra: str) -> str:
    return f'{{"providers": {{"deepseek": {{"windows": [{{"peak_hours": ["09:00-12:00"], {extra}}}]}}}}}}'


@pytest.mark.parametrize(("name", "text", "said"), [
    ("p.json", _rates_json("true"), f"{_RATE}.cache_miss: true is not a rate (a number >= 0)"),
    ("p.json", _rates_json("NaN"), f"{_RATE}.cache_miss: NaN is not a rate (a number >= 0)"),
    ("p.json", _rates_json("-Infinity"), f"{_RATE}.cache_miss: -Infinity is not a rate (a number >= 0)"),
    ("p.json", _rates_json("Infinity"), f"{_RATE}.cache_miss: Infinity is above 1e+09, not a price"),
    ("p.json", _rates_json('{"a": [false, null, "\\u001b"]}'),
     f'{_RATE}.cache_miss: {{"a": [false, null, "\\u001b"]}} is not a rate (a number >= 0)'),
    ("p.json", '{"schema": null, "providers": {}}',
     "schema: null is not 2, the price table schema this dsh-audit reads (leave it out, or write 2)"),
    ("p.json", '{"currency": "EUR", "providers": {}}',
     'currency: "EUR" is not the packaged table\'s "USD": every rate is read in USD (leave it out and give '
     'the rates in USD)'),
    ("p.json", _window_json('"days": ["fri", true]'), f'{_WINDOW}.days: ["fri", true] {_DAYS}'),
    ("p.json", _window_json('"holidays": ["2027-1-5"]'),
     f'{_WINDOW}.holidays[0]: "2027-1-5" is not YYYY-MM-DD (write "2027-01-05")'),
    ("p.toml", "[providers.deepseek.models.m]\ncache_miss = true\ncache_read = 0.1\noutput = 2\n",
     f"{_RATE}.cache_miss: true is not a rate (a number >= 0)"),
    ("p.toml", _RATES_TOML + "cache_miss = nan\n", f"{_RATE}.cache_miss: nan is not a rate (a number >= 0)"),
    ("p.toml", _RATES_TOML + "cache_miss = -inf\n", f"{_RATE}.cache_miss: -inf is not a rate (a number >= 0)"),
    ("p.toml", _RATES_TOML + "cache_miss = inf\n", f"{_RATE}.cache_miss: inf is above 1e+09, not a price"),
    ("p.toml", _WINDOW_TOML + 'utc_offset = {"a b" = true, c = 1979-05-27}\n',
     f'{_WINDOW}.utc_offset: {{"a b" = true, c = 1979-05-27}} is not +HH:MM (HH 00-23, MM 00-59)'),
    ("p.toml", _WINDOW_TOML + 'days = ["fri", false]\n', f'{_WINDOW}.days: ["fri", false] {_DAYS}'),
    ("p.toml", _WINDOW_TOML + "holidays = [2027-01-15T00:00:00]\n",
     f"{_WINDOW}.holidays[0]: 2027-01-15T00:00:00 is a date-time, not a YYYY-MM-DD date (write 2027-01-15)"),
])
def test_a_price_file_error_quotes_the_value_as_its_language_writes_it(tmp_path: Path, name: str, text: str,
                                                                       said: str) -> None:
    path = tmp_path / name
    path.write_text(text, "utf-8")
    with pytest.raises(UsageError) as caught:
        load_prices(path, search_from=tmp_path)
    assert str(caught.value) == (f"{path}: price table key {said} (hint: fix this key in the --prices file; "
                                 "the Price files section of docs/cache-accounting.md gives the shape)")


def test_a_pyproject_price_table_error_quotes_the_value_as_toml_writes_it(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[tool.dsh-audit.prices.providers.deepseek.models.m]\ncache_miss = true\ncache_read = nan\noutput = 2\n",
        "utf-8")
    with pytest.raises(UsageError) as caught:
        load_prices(search_from=tmp_path)
    assert str(caught.value) == (
        f"{tmp_path / 'pyproject.toml'}:2: [tool.dsh-audit.prices] price table key {_RATE}.cache_miss: true is not a "
        "rate (a number >= 0) (hint: fix this key under [tool.dsh-audit.prices] of this pyproject.toml, the nearest "
        "to the current folder; the Price files section of docs/cache-accounting.md gives the shape)")


_GZIP = b"\x1f\x8b\x08\x00\x00\x00\x00\x00"


@pytest.mark.parametrize(("headers", "note"), [
    ({"content-encoding": "br"}, "its Content-Encoding names br, not gzip"),
    ({"content-encoding": "deflate"}, "its Content-Encoding names deflate, not gzip"),
    ({"content-encoding": "deflate, br"}, "its Content-Encoding names deflate, br, not gzip"),
    ({"content-encoding": " "}, "its Content-Encoding is empty, not gzip"),
    ({"content-encoding": "br\x1b[2J"}, 'its Content-Encoding names "br\\u001b[2J", not gzip'),
    ({"content-encoding": "br,\tx"}, 'its Content-Encoding names "br,\\tx", not gzip'),
    ({"content-encoding": "b" * 41}, f'its Content-Encoding names "{"b" * 41}", not gzip'),
    ({"content-type": "application/json"}, "no Content-Encoding: gzip"),
    (None, "no Content-Encoding: gzip"),
])
def test_gzip_data_under_another_content_encoding_names_it(headers: dict[str, str] | None, note: str) -> None:
    assert unreadable_body(_GZIP, headers) == f"captured body is gzip data its headers do not name ({note})"
