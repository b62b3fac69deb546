"""``stats`` says the caveats of the prices of the ledgers it sums, as ``usage`` says them (issue 13).

A request of 2028 at a peak hour was priced by the weekday rule alone (the packaged DeepSeek
holiday list covers 2026 and 2027): ``stats`` finds the caveat again from the stored ``costs``
rows with the price table ``index`` priced them with (its files read again), says it once as a
``note:`` on stderr, in text and ``--json`` modes alike, and lists it as ``"caveats"`` in its
JSON; over ``--since/--until`` only for the requests sent in that window. A table whose files
cannot be read now, or that they no longer make, or that the index does not record, has caveats
no one knows: one note says so.
"""

from __future__ import annotations

import doctest
import importlib
import json
import sqlite3
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from _cli import invoke
from test_holidays33 import NOTE_2028, _log

from dsh_audit.fleet import fleet_stats

ROOT = Path(__file__).resolve().parent.parent
CAVEAT_2028 = NOTE_2028.removeprefix("note: ")


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A session of 2028 (Monday 2028-01-03, 11:00 in Beijing: peak by the weekday rule) and one
    of 2026 (Wednesday 2026-12-02, 11:00 in Beijing: peak, in a year the list covers)."""
    _log(tmp_path / "logs" / "a" / "session.jsonl", "s-2028", "2028-01-03T03:00:00")
    _log(tmp_path / "logs" / "b" / "session.jsonl", "s-2026", "2026-12-02T03:00:00")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path / "logs"


def _index(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> None:
    code, _, err = invoke(monkeypatch, capsys, "index", *args, "--db", "audit.sqlite")
    assert (code, err) == (0, [])


def _stats(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
           *args: str) -> tuple[list[str], list[str]]:
    """``stats --json ARGS``: its ``caveats`` and its stderr lines."""
    code, out, err = invoke(monkeypatch, capsys, "stats", "--db", "audit.sqlite", "--json", *args)
    assert code == 0
    return json.loads(out)["caveats"], err


def _windows(*holidays: str) -> dict[str, object]:
    """The packaged DeepSeek windows, the last with ``holidays`` added: a price document."""
    document = json.loads((resources.files("dsh_audit.cache") / "rules" / "prices.json").read_text("utf-8"))
    windows = document["providers"]["deepseek"]["windows"]
    windows[-1]["holidays"].extend(holidays)
    return {"providers": {"deepseek": {"windows": windows}}}


def test_a_2028_peak_request_says_the_caveat_a_2026_one_none(logs: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    _index(monkeypatch, capsys, str(logs / "b"))  # the 2026 session alone
    with sqlite3.connect("audit.sqlite") as connection:  # priced at the peak rate, in a year the list covers
        assert connection.execute("SELECT session_id, window FROM costs").fetchall() == [("s-2026", "peak")]
    connection.close()
    assert _stats(monkeypatch, capsys) == ([], [])
    assert fleet_stats("audit.sqlite").caveats == ()
    _index(monkeypatch, capsys, str(logs))
    assert _stats(monkeypatch, capsys) == ([CAVEAT_2028], [NOTE_2028])
    assert fleet_stats("audit.sqlite").caveats == (CAVEAT_2028,)
    code, out, err = invoke(monkeypatch, capsys, "stats", "--db", "audit.sqlite")  # the tables, then the note
    assert (code, err) == (0, [NOTE_2028]) and "holidays" not in out
    code, out, err = invoke(monkeypatch, capsys, "stats", "--db", "audit.sqlite", "--format", "csv")
    assert (code, err) == (0, [NOTE_2028]) and "holidays" not in out


def test_the_window_of_send_times_keeps_only_its_requests_caveats(logs: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    _index(monkeypatch, capsys, str(logs))
    assert _stats(monkeypatch, capsys, "--until", "2028-01-01") == ([], [])
    assert _stats(monkeypatch, capsys, "--since", "2028-01-03T03:00:01Z") == ([], [
        "note: --since 2028-01-03T03:00:01Z: no request of audit.sqlite was sent in that window (by the logs' own "
        "timestamps): nothing to rank (widen or drop --since/--until)"])
    assert _stats(monkeypatch, capsys, "--since", "2028-01-03") == ([CAVEAT_2028], [NOTE_2028])
    assert fleet_stats("audit.sqlite", until=1830000000.0).caveats == ()  # 2027-12-28


def test_a_price_file_is_read_again_and_one_that_cannot_be_says_so(logs: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """A --prices file listing 2028's New Year's Day: no caveat, nor once it changes back to a
    list without 2028 (then the table is another: its caveats unknown), nor once it is gone."""
    Path("p.json").write_text(json.dumps(_windows("2028-01-01")), "utf-8")
    _index(monkeypatch, capsys, str(logs), "--prices", "p.json")
    assert _stats(monkeypatch, capsys) == ([], [])
    Path("p.json").write_text(json.dumps(_windows()), "utf-8")
    p_json = Path("p.json").resolve()  # the index records a price file by its absolute path
    changed = (f"the price table from {p_json} over the packaged list prices is not the one `index` priced with any "
               "more (a file of it changed since): whether that one listed the holidays of the years of the "
               "requests it priced at the peak rate is unknown; index them again to price them with this one")
    assert _stats(monkeypatch, capsys) == ([changed], [f"note: {changed}"])
    Path("p.json").unlink()
    gone = (f"the price table from {p_json} over the packaged list prices cannot be read now ({p_json}: cannot open: "
            "No such file or directory): whether it lists the holidays of the years of the requests it priced at "
            "the peak rate is unknown; index them again to price them with a table that can be read")
    assert _stats(monkeypatch, capsys) == ([gone], [f"note: {gone}"])
    assert _stats(monkeypatch, capsys, "--until", "2026-12-01") == ([], [  # no request at all, none at the peak rate
        "note: --until 2026-12-02T00:00:00Z: no request of audit.sqlite was sent in that window (by the logs' own "
        "timestamps): nothing to rank (widen or drop --since/--until)"])


def test_a_pyproject_table_is_read_again_from_any_folder(logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """The index names the pyproject.toml it found by its whole path: read from another folder."""
    project = tmp_path / "project"
    project.mkdir()
    toml = project / "pyproject.toml"
    toml.write_text("[tool.dsh-audit.prices]\nproviders.deepseek.models.deepseek-v4-pro = "
                    '{cache_miss = 1.32, cache_read = 0.011, output = 2.64}\n', "utf-8")
    monkeypatch.chdir(project)
    code, _, err = invoke(monkeypatch, capsys, "index", str(logs), "--db", str(tmp_path / "audit.sqlite"))
    assert (code, err) == (0, [])
    monkeypatch.chdir(tmp_path)
    assert _stats(monkeypatch, capsys) == ([CAVEAT_2028], [NOTE_2028])
    toml.write_text("[project]\nname = 'x'\n", "utf-8")
    gone = (f"the price table from {toml} [tool.dsh-audit.prices] over the packaged list prices cannot be read now "
            f"({toml}: holds no [tool.dsh-audit.prices] table any more): whether it lists the holidays of the years "
            "of the requests it priced at the peak rate is unknown; index them again to price them with a table "
            "that can be read")
    assert _stats(monkeypatch, capsys) == ([gone], [f"note: {gone}"])


def test_a_table_the_index_does_not_record_says_so(logs: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _index(monkeypatch, capsys, str(logs))
    with sqlite3.connect("audit.sqlite") as connection:
        connection.execute("DELETE FROM meta WHERE key LIKE 'prices %'")  # as an older dsh-audit left it
    connection.close()
    unknown = ("the index does not record which price table priced some of its requests: whether it lists the "
               "holidays of the years of those it priced at the peak rate is unknown; index them again to record it")
    assert _stats(monkeypatch, capsys) == ([unknown], [f"note: {unknown}"])


def test_an_index_with_no_peak_request_loads_no_price_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Only a request priced at the peak rate can have a caveat: without one, ``stats`` stays as
    light as before (issue 11), in a fresh interpreter; with one, it loads the table once."""
    _log(tmp_path / "logs" / "c" / "session.jsonl", "s-night", "2028-01-03T13:00:00")  # 21:00 in Beijing
    monkeypatch.chdir(tmp_path)
    _index(monkeypatch, capsys, str(tmp_path / "logs"))
    code = ("import atexit, sys; atexit.register(lambda: sys.stderr.write(str(sorted(m for m in sys.modules "
            "if m.startswith('dsh_audit.cache.'))))); import runpy; "
            "runpy.run_module('dsh_audit', run_name='__main__', alter_sys=True)")
    result = subprocess.run([sys.executable, "-c", code, "stats", "--db", "audit.sqlite", "--json"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert (result.returncode, result.stderr) == (0, "['dsh_audit.cache._money', 'dsh_audit.cache._sums']")
    assert json.loads(result.stdout)["caveats"] == []


@pytest.mark.parametrize(("name", "examples"), [
    ("dsh_audit.cache._prices", 15), ("dsh_audit.cache._price_window", 8), ("dsh_audit.cache._price_files", 7),
    ("dsh_audit.cache._price_parser", 8), ("dsh_audit.fleet._caveats", 1), ("dsh_audit.fleet._db", 1),
    ("dsh_audit.fleet._price_meta", 9)])
def test_the_docstring_examples_of_the_price_and_caveat_modules_run(name: str, examples: int,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """``cache/_prices.py`` split by job (its 31 examples, each kept); tests/test_doctests.py does
    not list these modules."""
    monkeypatch.chdir(ROOT)
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert (result.failed, result.attempted) == (0, examples)
