"""Session 38, fuzz round 20: price files and time options say what they mean.

- F3: two rates of one model (or two peak windows of one provider) with the same ``from`` are refused
  (file order would decide which is in force).
- F4: a ``billed_as`` loop is refused at load, naming file and keys; a loop-free chain of any length
  is followed to its rates (it was cut at 8 links and called a loop).
- F5: ``--since/--until`` read only the forms their help lists (a basic or week date was a midnight,
  not a day; digit strings were date-times; full-width digits were ages); the last microseconds of
  9999 stay in 9999.
- F8: ``usage`` over a window where the logs were active but sent no request says so in a note.
- pyproject.toml: a key of ``[tool.dsh-audit]`` that is no policy key is refused by every command,
  as an unknown key of ``[tool.dsh-audit.cache]`` is. Its price table is read once, by the one checked
  reader of ``[tool.dsh-audit]``, when a table is loaded and when a ledger's files are read again (session 40).
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import pytest
from _cli import invoke

from dsh_audit import _config_read
from dsh_audit.cache import load_price_files, load_prices
from dsh_audit.cli._when import parse_when, window_text
from dsh_audit.errors import UsageError

ROOT = Path(__file__).resolve().parent.parent
_HINT = "(hint: fix this key in the --prices file; the Price files section of docs/cache-accounting.md gives the shape)"
_RATE = 'cache_miss = 0.4\ncache_read = 0.04\noutput = 1.6\n'
_WHEN = ("(give a date (2026-11-01), today or yesterday (UTC days), a date-time (2026-11-01T08:30, or with an offset "
         "such as +01:00 or Z; UTC when none) or an age such as 90s, 30m, 12h, 7d or 2w)")


def _refusal(tmp_path: Path, text: str) -> str:
    path = tmp_path / "p.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        load_prices(path, search_from=tmp_path)
    return str(caught.value).replace(str(path), "P")


# -- F3: one from, two rates --------------------------------------------------------------------------------

def test_two_rates_of_one_model_from_one_moment_are_refused(tmp_path: Path) -> None:
    text = ('[[providers.local-openai.models.local-coder]]\nfrom = "2026-01-01"\n' + _RATE +
            '[[providers.local-openai.models.local-coder]]\nfrom = "2026-01-01T00:00:00Z"\n' + _RATE)
    assert _refusal(tmp_path, text) == (
        "P: price table key providers.local-openai.models.local-coder[1].from: a rate from 2026-01-01T00:00:00Z is "
        "already declared (providers.local-openai.models.local-coder[0]): give each a different from, or drop one "
        + _HINT)


def test_two_rates_with_no_from_are_refused(tmp_path: Path) -> None:
    text = ('[[providers.local-openai.models.local-coder]]\n' + _RATE) * 2
    assert _refusal(tmp_path, text) == (
        "P: price table key providers.local-openai.models.local-coder[1].from: a rate from any date on (no from) is "
        "already declared (providers.local-openai.models.local-coder[0]): give each a different from, or drop one "
        + _HINT)


def test_two_peak_windows_from_one_moment_are_refused(tmp_path: Path) -> None:
    window = ('[[providers.deepseek.windows]]\nfrom = "2026-11-30"\nutc_offset = "+08:00"\n'
              'peak_hours = ["09:00-10:00"]\n')
    assert _refusal(tmp_path, window + window) == (
        "P: price table key providers.deepseek.windows[1].from: a window from 2026-11-30T00:00:00Z is already declared "
        "(providers.deepseek.windows[0]): give each a different from, or drop one " + _HINT)


def test_rates_from_different_moments_still_load(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('[[providers.local-openai.models.local-coder]]\nfrom = "2026-01-01"\n' + _RATE +
                    '[[providers.local-openai.models.local-coder]]\nfrom = "2026-01-01T00:00:01Z"\n'
                    'cache_miss = 0.8\ncache_read = 0.08\noutput = 3.2\n', encoding="utf-8")
    book = load_prices(path, search_from=tmp_path)
    rates = [book.quote("local-openai", "local-coder", when) for when in (1767225600.0, 1767225601.0)]
    assert [q.rates.cache_miss for q in rates if not isinstance(q, str)] == [0.4, 0.8]


# -- F4: billed_as loops and chains -------------------------------------------------------------------------

def test_a_billed_as_loop_is_refused_at_load(tmp_path: Path) -> None:
    text = ('[providers.local-openai.models.local-coder]\nbilled_as = "b"\n'
            '[providers.local-openai.models.b]\nbilled_as = "local-coder"\n')
    assert _refusal(tmp_path, text) == (
        "P: price table key providers.local-openai.models.local-coder.billed_as: a billed_as loop: 'local-coder' -> "
        "'b' -> 'local-coder', with providers.local-openai.models.b.billed_as; no rate ends it, so no request of them "
        "could be priced: give one of them its rates " + _HINT)


def test_a_loop_from_a_date_on_names_its_keys_in_file_order(tmp_path: Path) -> None:
    # x leads into the loop without being in it; the loop is whole from 2026-06-01 on
    text = ('[[providers.local-openai.models.x]]\nbilled_as = "b"\n'
            '[[providers.local-openai.models.local-coder]]\nfrom = "2026-01-01"\nbilled_as = "b"\n'
            '[[providers.local-openai.models.b]]\n' + _RATE +
            '[[providers.local-openai.models.b]]\nfrom = "2026-06-01"\nbilled_as = "local-coder"\n')
    assert _refusal(tmp_path, text) == (
        "P: price table key providers.local-openai.models.local-coder[0].billed_as: a billed_as loop (in force from "
        "2026-06-01T00:00:00Z): 'local-coder' -> 'b' -> 'local-coder', with providers.local-openai.models.b[1]."
        "billed_as; no rate ends it, so no request of them could be priced: give one of them its rates " + _HINT)


def test_a_loop_through_the_packaged_aliases_names_the_key_of_this_file(tmp_path: Path) -> None:
    text = '[providers.deepseek.models.deepseek-flash]\nbilled_as = "deepseek-chat"\n'
    assert _refusal(tmp_path, text) == (
        "P: price table key providers.deepseek.models.deepseek-flash.billed_as: a billed_as loop (in force from "
        "2026-09-10T04:00:00Z): 'deepseek-flash' -> 'deepseek-chat' -> 'deepseek-v4-flash' -> 'deepseek-flash', with "
        "the aliases of an earlier price table; no rate ends it, so no request of them could be priced: give "
        "one of them its rates " + _HINT)


def test_aliases_that_never_loop_at_one_moment_load(tmp_path: Path) -> None:
    # b is an alias of local-coder until local-coder becomes an alias of b: never both at once
    path = tmp_path / "p.toml"
    path.write_text('[[providers.local-openai.models.local-coder]]\n' + _RATE +
                    '[[providers.local-openai.models.local-coder]]\nfrom = "2026-07-01"\nbilled_as = "b"\n'
                    '[[providers.local-openai.models.b]]\nbilled_as = "local-coder"\n'
                    '[[providers.local-openai.models.b]]\nfrom = "2026-06-01"\n'
                    'cache_miss = 0.8\ncache_read = 0.08\noutput = 3.2\n', encoding="utf-8")
    book = load_prices(path, search_from=tmp_path)
    quotes = [book.quote("local-openai", "b", when) for when in (1767225600.0, 1798761600.0)]  # 2026-01-01, 2027-01-01
    assert [(q.billed_as, q.rates.cache_miss) for q in quotes if not isinstance(q, str)] == \
        [("local-coder", 0.4), ("b", 0.8)]


def test_a_chain_of_ten_aliases_is_priced_at_its_end(tmp_path: Path) -> None:
    text = '[providers.local-openai.models.local-coder]\nbilled_as = "a1"\n'
    text += "".join(f'[providers.local-openai.models.a{i}]\nbilled_as = "a{i + 1}"\n' for i in range(1, 10))
    path = tmp_path / "p.toml"
    path.write_text(text + '[providers.local-openai.models.a10]\n' + _RATE, encoding="utf-8")
    quote = load_prices(path, search_from=tmp_path).quote("local-openai", "local-coder", 1796083200.0)
    assert not isinstance(quote, str)
    assert (quote.model, quote.billed_as, quote.rates.cache_miss) == ("local-coder", "a10", 0.4)


# -- F5: the forms of --since/--until -----------------------------------------------------------------------

@pytest.mark.parametrize(("text", "end", "moment"), [
    ("2026-11-01", False, 1793491200.0),
    ("2026-11-01", True, 1793577600.0),
    ("2026-11-01T08:30", True, 1793521800.0),
    ("2026-11-01T08:30Z", False, 1793521800.0),
    ("2026-11-01T08:30:15+01:00", False, 1793518215.0),
    ("2026-11-01T08:30:15.25-00:30", False, 1793523615.25),
    (" 2026-11-01 ", True, 1793577600.0),
    ("9999-12-31T23:59:59.999999Z", False, math.nextafter(253402300800.0, 0.0)),
    ("9999-12-31", True, 253402300800.0),
])
def test_the_documented_forms_are_read(text: str, end: bool, moment: float) -> None:
    assert parse_when(text, option="--until", end=end) == moment


@pytest.mark.parametrize("text", [
    "20261101", "2026-W45", "2026-W45-1", "2026-305", "2026-11", "2026-11-01 08:30", "2026-11-01t08:30",
    "2026-11-01T08", "2026-11-01T0830", "2026-11-01T08:30+0100", "2026-11-01T08:30:00.1234567890Z",
    "1" * 60, "２０２６-１１-０１", "１２d", "12d\u0661", "+2026-11-01", "2026-11-01T24:00",
])
def test_other_spellings_are_refused(text: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_when(text, option="--until", end=True)
    assert str(caught.value) == f"cannot read --until {text!r} (hint: {_WHEN[1:]}"


def test_a_long_unreadable_bound_is_quoted_in_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "usage", str(ROOT / "sample_logs" / "sessions"), "--until", "1" * 5000)
    assert (code, out, err) == (2, "", [
        f"error: Invalid value for '--until': cannot read --until '{'1' * 60}'... (5000 characters) {_WHEN} "
        "(hint: see `dsh-audit usage --help`)"])


def test_the_window_text_of_the_end_of_9999() -> None:
    assert window_text(math.nextafter(253402300800.0, 0.0), 253402300800.0) == \
        "--since 9999-12-31T23:59:59Z --until 10000-01-01T00:00:00Z (the end of 9999-12-31)"
    assert window_text(253402300800.0 + 1, None) == "--since 2.53402e+11 s after the epoch (outside the years 1-9999)"


# -- F8: usage over a window with activity but no request -----------------------------------------------------

@pytest.fixture
def late_end(tmp_path: Path) -> Path:
    """The tools sample, its requests sent at 2027-01-15T08:00Z and its turn ended an hour later."""
    lines = []
    for line in (ROOT / "sample_logs" / "tools" / "session.jsonl").read_text("utf-8").splitlines():
        event = json.loads(line)
        if "time" in event:
            event["time"] = 1_800_000_000_000 + (3_600_000 if event["type"] == "turn/end" else 0)
        lines.append(json.dumps(event))
    log = tmp_path / "session.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return log


_NONE_SENT = ("note: --since 2027-01-15T08:30:00Z: no request of the 1 log(s) active in that window was sent in it "
              "(by the logs' own timestamps): nothing to sum (widen or drop --since/--until)")


def test_usage_says_why_a_window_sums_to_nothing(late_end: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "usage", str(late_end), "--since", "2027-01-15T08:30", "--json")
    assert (code, err) == (0, [_NONE_SENT])
    assert json.loads(out)["totals"]["requests"] == 0
    code, out, err = invoke(monkeypatch, capsys, "usage", str(late_end), "--since", "2027-01-15T08:30",
                            "--format", "csv")
    assert (code, err) == (0, [_NONE_SENT])
    code, out, err = invoke(monkeypatch, capsys, "usage", str(late_end), "--since", "2027-01-15T07:30", "--json")
    assert (code, err, json.loads(out)["totals"]["requests"]) == (0, [], 4)  # requests in it: no note


def test_sessions_lists_a_session_active_in_the_window_whole(late_end: Path, monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(late_end), "--since", "2027-01-15T08:30", "--json")
    assert (code, err, [json.loads(line)["requests"] for line in out.splitlines()]) == (0, [], [4])
    code, out, err = invoke(monkeypatch, capsys, "sessions", str(late_end), "--since", "2027-01-15T09:30", "--json")
    assert (code, out, err) == (0, "", [
        "note: --since 2027-01-15T09:30:00Z: 1 of 1 log(s) with no activity in that window (by the logs' own "
        "timestamps) left out"])


# -- pyproject.toml: unknown keys at every level ----------------------------------------------------------

_MISPLACED = "unknown policy key 'baseline' (a key of [tool.dsh-audit.check])"


@pytest.mark.parametrize(("command", "text", "error"), [
    ("usage", "[tool.dsh-audit]\nbogus = 1\n", "unknown policy key 'bogus'"),
    ("sessions", "[tool.dsh-audit]\nrequire-captur = true\n",
     "unknown policy key 'require-captur' (did you mean 'require-capture'?)"),
    ("check", "[tool.dsh-audit]\nbogus = 1\n", "unknown policy key 'bogus'"),
    ("usage", '[tool.dsh-audit]\nbaseline = "b.json"\n', _MISPLACED),
    ("check", '[tool.dsh-audit]\nbaseline = "b.json"\n', _MISPLACED),
])
def test_an_unknown_key_of_the_tool_table_is_refused_by_every_command(
        command: str, text: str, error: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, command, str(ROOT / "sample_logs" / "sessions"))
    assert (code, out, err) == (2, "", [
        f"error: {tmp_path / 'pyproject.toml'}:2: {error} (hint: see the Policy section of docs/ci.md)"])


def test_the_policy_keys_are_still_read_beside_the_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.dsh-audit]\nrequire-capture = false\n[tool.dsh-audit.cache]\nopenai-zero-data-retention = true\n',
        encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "usage", str(ROOT / "sample_logs" / "sessions"), "--json")
    assert (code, err) == (0, [])
    assert json.loads(out)["totals"]["requests"] > 0


_PRICES_TABLE = '[tool.dsh-audit.prices.providers.deepseek.models."deepseek-v4-flash"]\n' + _RATE


@pytest.mark.parametrize(("text", "error"), [
    (_PRICES_TABLE, None),
    (_PRICES_TABLE + "[tool.dsh-audit.chekc]\n", "P:5: [tool.dsh-audit.chekc] is not a table dsh-audit reads (did you "
     "mean [tool.dsh-audit.check]?) (hint: dsh-audit reads [tool.dsh-audit.cache], [tool.dsh-audit.check] and "
     "[tool.dsh-audit.prices]; the policy keys go in [tool.dsh-audit] itself: see the Policy section of docs/ci.md)"),
    ("[tool.dsh_audit]\nignore = []\n",
     "P:1: [tool.dsh_audit] is not read: dsh-audit's table is [tool.dsh-audit] (hint: rename the table to [tool.dsh-audit])"),
    ("[tool.dsh-audit]\nprices = 'x'\n", "P:2: [tool.dsh-audit.prices] must be a table (hint: [tool.dsh-audit.prices]: a "
     "price table, as --prices FILE gives; see the Price files section of docs/cache-accounting.md)"),
], ids=["read-once", "unknown-table", "misspelt-tool-table", "prices-no-table"])
def test_the_pyproject_price_table_is_read_once_by_the_checked_reader(
        text: str, error: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "pyproject.toml"
    path.write_text(text, encoding="utf-8")
    old = time.time_ns() - 60 * 10**9  # past the 2 s a file just written is read again (dsh_audit._stamp)
    os.utime(path, ns=(old, old))
    reads: list[str] = []
    read = _config_read.read_bytes

    def counted(name: str, **options: object) -> bytes:
        reads.append(os.fspath(name))
        return read(name, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(_config_read, "read_bytes", counted)
    loads = (lambda: load_prices(search_from=tmp_path),  # a ledger's files are read again as they were loaded
             lambda: load_price_files(["packaged", f"{path} [tool.dsh-audit.prices]"]))
    if error is None:
        assert [load().files for load in loads] == [("packaged", f"{path} [tool.dsh-audit.prices]")] * 2
        assert reads == [str(path)]  # once for both: the checked table of this version of the file
        return
    for load in loads:
        with pytest.raises(UsageError) as caught:
            load()
        assert str(caught.value).replace(str(path), "P") == error
