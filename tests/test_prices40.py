"""Session 40: a price book is read once per process for the same files, and read again once one changed.

The library prices each log it is not given a table for with its own (every view of a session, each
ledger of a fleet): ``load_prices`` and ``load_price_files`` parse the packaged table and the user's
files once per version of them (keyed on the nearest ``pyproject.toml``'s resolved path and each
file's stamp), hand each caller a book of its own (its caveats its own), and never remember an error.
A file written in the last 2 s is read every time (a coarse clock could hide a same-size edit), so
each test here backdates what it writes.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from dsh_audit._pyproject import checked_tool_table
from dsh_audit.cache import _prices, load_price_files, load_prices
from dsh_audit.errors import UsageError
from dsh_audit.session import _home_routes
from dsh_audit.session._home_routes import _bundle_route_file
from dsh_audit.wire._piai_yaml import _read_yaml

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
    # a pyproject.toml's table is placed at the line that writes the key, as its other errors are
    line = good.split("\n").index("cache_miss = 1.0") + 1
    where = "P:" if broken == "--prices" else f"P:{line}: [tool.dsh-audit.prices]"
    hint = ("fix this key in the --prices file" if broken == "--prices" else "fix this key under "
            "[tool.dsh-audit.prices] of this pyproject.toml, the nearest to the current folder")
    assert errors == [f"{where} price table key {key}: -1.0 is not a rate (a number >= 0) (hint: {hint}; the Price "
                      "files section of docs/cache-accounting.md gives the shape)"] * 2
    _written(path, good, age=20)  # mended: read again
    assert _miss(load_prices(argument, search_from=tmp_path)) == 1.0
    assert len(parses) == 4  # each error raised by a parse of its own, never a remembered one


def _replaced(path: Path, text: str) -> None:
    """``path`` replaced by a file of ``text`` (another inode) with the same size and times: what only
    the inode (or the change time) of :func:`dsh_audit._stamp.file_stamp` tells apart."""
    info = path.stat()
    spare = path.with_name(path.name + ".new")
    spare.write_text(text, encoding="utf-8")
    os.utime(spare, ns=(info.st_atime_ns, info.st_mtime_ns))
    os.replace(spare, path)
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (info.st_size, info.st_mtime_ns)


#: A cache keyed by a file: where its file lies, two versions of its text with what each reads as,
#: and the read.
_Reader = tuple[Path, list[tuple[str, object]], Callable[[], object]]


def _price_reader(tmp_path: Path) -> _Reader:
    path = tmp_path / "p.toml"
    return path, [(_TABLE.format(r), float(r)) for r in ("1.0", "3.0")], \
        lambda: _miss(load_prices(path, search_from=tmp_path))


def _yaml_reader(tmp_path: Path) -> _Reader:
    path = tmp_path / "r.yml"
    return path, [("a: 1\n", {"a": 1}), ("a: 2\n", {"a": 2})], lambda: _read_yaml(str(path), "hint")


def _pyproject_reader(tmp_path: Path) -> _Reader:
    path = tmp_path / "pyproject.toml"
    return path, [(f'[tool.dsh-audit]\nignore = ["{code}"]\n', {"ignore": [code]}) for code in ("DSH101", "DSH102")], \
        lambda: checked_tool_table(path)


def _manifest_reader(tmp_path: Path) -> _Reader:
    for name in ("a.yml", "b.yml"):
        (tmp_path / name).write_text("")
    log = tmp_path / "r.jsonl"
    return Path(f"{log}.manifest.json"), [(json.dumps({"tool": "dsh-audit", "route_file": name}), str(tmp_path / name))
                                          for name in ("a.yml", "b.yml")], lambda: _bundle_route_file(log)


@pytest.mark.parametrize("reader", [_price_reader, _yaml_reader, _pyproject_reader, _manifest_reader])
def test_every_cache_keyed_by_a_file_sees_it_replaced_at_the_same_size_and_time(
        reader: Callable[[Path], _Reader], tmp_path: Path) -> None:
    """The four per-process caches keyed by a file (price files, YAML route files, the nearest
    pyproject.toml, a bundle's manifest) share one stamp: size and times alone would keep the old value."""
    path, [(first, was), (second, now)], read = reader(tmp_path)
    _written(path, first)
    assert [read(), read()] == [was, was]
    _replaced(path, second)
    assert [read(), read()] == [now, now]


def test_a_log_with_no_manifest_costs_a_stat_and_sees_one_made_later(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 41: with no manifest, each row's hint opened it (and raised) again; now the stat says it is
    missing, which a manifest made later changes at once; a manifest written is read once."""
    opened: list[str] = []
    load = _home_routes.load_manifest
    monkeypatch.setattr(_home_routes, "load_manifest", lambda path: opened.append(path) or load(path))
    log, route = tmp_path / "s.jsonl", _written(tmp_path / "a.yml", "")
    assert [_bundle_route_file(log), _bundle_route_file(log), opened] == [None, None, []]
    manifest = _written(Path(f"{log}.manifest.json"), json.dumps({"tool": "dsh-audit", "route_file": "a.yml"}))
    assert [_bundle_route_file(log), _bundle_route_file(log), opened] == [str(route), str(route), [str(manifest)]]
