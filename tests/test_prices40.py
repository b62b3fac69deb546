"""Session 40: a price book is read once per process for the same files, and read again once one changed.

The library prices each log it is not given a table for with its own (every view of a session, each
ledger of a fleet): ``load_prices`` and ``load_price_files`` parse the packaged table and the user's
files once per version of them (keyed on the nearest ``pyproject.toml``'s resolved path and each
file's stamp), hand each caller a book of its own (its caveats its own), and never remember an error.
A file written in the last 2 s is read every time (a coarse clock could hide a same-size edit), so
each test here backdates what it writes.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from dsh_audit.cache import _prices, load_price_files, load_prices
from dsh_audit.errors import UsageError

_TABLE = '[providers.local-openai.models.local-coder]\ncache_miss = {}\ncache_read = 0.1\noutput = 2.0\n'
_PEAK_2028 = 1830481200.0  # 2028-01-03 03:00 UTC: a peak hour of a year the packaged holidays do not cover


def _written(path: Path, text: str, age: int = 60) -> Path:
    """``text`` written to ``path``, stamped ``age`` seconds ago (past the 2 s a fresh write is read again)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    then = time.time_ns() - age * 1_000_000_000
    os.utime(path, ns=(then, then))
    return path


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """The layers each parse of a price book read (by their names, as ``PriceBook.files`` gives them)."""
    found: list[tuple[str, ...]] = []
    layered = _prices._layered

    def counted(packaged: _prices._Packaged, layers: list[tuple[str, object, str]]) -> _prices.PriceBook:
        found.append(tuple(name for name, _, _ in layers))
        return layered(packaged, layers)

    monkeypatch.setattr(_prices, "_layered", counted)
    return found


def _miss(book: _prices.PriceBook) -> float:
    quote = book.quote("local-openai", "local-coder", 1796209398.0)
    assert not isinstance(quote, str)
    return quote.rates.cache_miss


def test_one_parse_per_version_of_the_files_and_a_book_of_its_own_each_call(
        tmp_path: Path, parses: list[tuple[str, ...]]) -> None:
    prices = _written(tmp_path / "p.toml", _TABLE.format("1.0"))
    books = [load_prices(prices, search_from=tmp_path) for _ in range(3)]
    assert [len(parses), [_miss(book) for book in books]] == [1, [1.0, 1.0, 1.0]]
    assert len({id(book) for book in books}) == 3 and books[0] == books[1]
    assert not isinstance(books[0].quote("deepseek-official", "deepseek-v4-pro", _PEAK_2028), str)
    assert [len(book.caveats_met()) for book in books] == [1, 0, 0]  # the caveats a book met are its own
    assert [_miss(load_price_files(books[0].files)), len(parses)] == [1.0, 2]  # the ledger's reader: one more
    assert [_miss(load_price_files(books[0].files)), len(parses)] == [1.0, 2]
    _written(prices, _TABLE.format("3.0"), age=30)  # the same size, another stamp: read again
    assert [_miss(load_prices(prices, search_from=tmp_path)), _miss(load_price_files(books[0].files))] == [3.0, 3.0]
    assert parses == [(str(prices),)] * 4
    _written(prices, _TABLE.format("5.0"), age=0)  # just written: read each time
    assert [_miss(load_prices(prices, search_from=tmp_path)) for _ in range(2)] == [5.0, 5.0]
    assert len(parses) == 6


def test_each_folder_gets_the_table_of_its_own_nearest_pyproject(tmp_path: Path, parses: list[tuple[str, ...]],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for name, rate in (("a", "1.0"), ("b", "2.0")):
        _written(tmp_path / name / "pyproject.toml",
                 _TABLE.replace("[providers.", "[tool.dsh-audit.prices.providers.").format(rate))
    for _ in range(2):
        for name, rate in (("a", 1.0), ("b", 2.0)):
            monkeypatch.chdir(tmp_path / name / ".")
            book = load_prices()
            assert (book.files, _miss(book)) == (("packaged", f"{tmp_path / name / 'pyproject.toml'} "
                                                               "[tool.dsh-audit.prices]"), rate)
    assert len(parses) == 2


@pytest.mark.parametrize("broken", ["--prices", "pyproject"])
def test_an_error_is_raised_by_every_call_never_remembered(broken: str, tmp_path: Path,
                                                           parses: list[tuple[str, ...]]) -> None:
    good = _TABLE.format("1.0")
    path = tmp_path / ("p.toml" if broken == "--prices" else "pyproject.toml")
    good = good if broken == "--prices" else good.replace("[providers.", "[tool.dsh-audit.prices.providers.")
    argument = path if broken == "--prices" else None
    _written(path, good)
    assert _miss(load_prices(argument, search_from=tmp_path)) == 1.0
    _written(path, good.replace("cache_miss = 1.0", "cache_miss =-1.0"), age=30)  # same size: a bad rate
    errors = []
    for _ in range(2):
        with pytest.raises(UsageError) as caught:
            load_prices(argument, search_from=tmp_path)
        errors.append(str(caught.value).replace(str(path), "P"))
    key = "providers.local-openai.models.local-coder.cache_miss"
    where = "P" if broken == "--prices" else "P [tool.dsh-audit.prices]"
    hint = ("fix this key in the --prices file" if broken == "--prices" else "fix this key under "
            "[tool.dsh-audit.prices] of this pyproject.toml, the nearest to the current folder")
    assert errors == [f"{where}: price table key {key}: -1.0 is not a rate (a number >= 0) (hint: {hint}; the Price "
                      "files section of docs/cache-accounting.md gives the shape)"] * 2
    _written(path, good, age=20)  # mended: read again
    assert _miss(load_prices(argument, search_from=tmp_path)) == 1.0
    assert len(parses) == 4  # each error raised by a parse of its own, never a remembered one
