"""Holidays in a price table's peak window (issue 13, prices as data).

A holiday is compared with a request's local date as ``date.isoformat()`` writes it, so one
written ``2027-1-15`` (which ``strptime("%Y-%m-%d")`` takes) never applied: it is refused, one
error naming the file and key. A window's holiday list covers the years its dates fall in: a
request of another year (DeepSeek's packaged list covers 2026 and 2027) is priced by the weekday rule
alone, and :meth:`PriceBook.caveats` says so of the requests priced at the peak rate, once per
provider table and year. JSON's ``NaN``,
``Infinity`` and ``-Infinity`` in a price file are refused wherever they stand, a rate by its key.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import pytest
from _cli import invoke

from dsh_audit.cache import load_prices, session_ledger
from dsh_audit.errors import UsageError
from dsh_audit.testing import LogBuilder

TABLE_HINT = ("(hint: fix this key in the --prices file; "
              "the Price files section of docs/cache-accounting.md gives the shape)")
WINDOW = "providers.deepseek.windows[0]"
#: The packaged DeepSeek window's holidays: 2026's and 2027's.
NOTE_2028 = ("the deepseek price table lists no holidays of 2028 (its holiday list covers 2026, 2027): requests of "
             "2028 are priced by the weekday rule alone, a public holiday at the peak rate; give the holidays of 2028 "
             'with --prices FILE (the "holidays" of the deepseek window)')


def _at(text: str) -> float:
    """Epoch seconds of an ISO date-time in UTC."""
    return datetime.fromisoformat(text + "+00:00").timestamp()


def _window(**fields: object) -> dict[str, object]:
    return {"from": "2026-01-01T00:00:00Z", "utc_offset": "+08:00", "peak_hours": ["09:00-18:00"], **fields}


def _refused(tmp_path: Path, name: str, text: str) -> str:
    """The one error ``load_prices`` gives for a price file ``name`` holding ``text``."""
    path = tmp_path / name
    path.write_text(text, "utf-8")
    with pytest.raises(UsageError) as caught:
        load_prices(path, search_from=tmp_path)
    return str(caught.value)


def test_a_holiday_is_refused_unless_written_in_full(tmp_path: Path) -> None:
    key = f"{WINDOW}.holidays"
    for holiday, said in (("2027-1-15", '"2027-1-15" is not YYYY-MM-DD (write "2027-01-15")'),
                          ("2027-01-5", '"2027-01-5" is not YYYY-MM-DD (write "2027-01-05")'),
                          ("27-1-1", '"27-1-1" is not YYYY-MM-DD (write "0027-01-01")'),
                          ("2027-02-30", '"2027-02-30" is not a real date'),
                          ("2027-2-30", '"2027-2-30" is not a real date'),
                          (" 2027-01-15", '" 2027-01-15" is not YYYY-MM-DD'),
                          ("2027-01-15\n", '"2027-01-15\\n" is not YYYY-MM-DD'),
                          ("２０２７-01-15", '"２０２７-01-15" is not YYYY-MM-DD'),
                          ("20270115", '"20270115" is not YYYY-MM-DD'),
                          (20270115, "20270115 is not YYYY-MM-DD")):
        document = {"providers": {"deepseek": {"windows": [_window(holidays=["2027-01-14", holiday])]}}}
        assert _refused(tmp_path, "p.json", json.dumps(document)) == \
            f"{tmp_path / 'p.json'}: price table key {key}[1]: {said} {TABLE_HINT}"
    # TOML: a date is its ISO text; a date-time or a time is no holiday
    head = '[[providers.deepseek.windows]]\nfrom = 2026-01-01T00:00:00Z\nutc_offset = "+08:00"\n' \
           'peak_hours = ["09:00-18:00"]\n'
    for holidays, said in (("2027-01-15T00:00:00",
                            "2027-01-15T00:00:00 is a date-time, not a YYYY-MM-DD date (write 2027-01-15)"),
                           ("2027-01-15T00:00:00Z",
                            "2027-01-15T00:00:00+00:00 is a date-time, not a YYYY-MM-DD date (write 2027-01-15)"),
                           ("00:00:00", "00:00:00 is a time, not a YYYY-MM-DD date")):
        assert _refused(tmp_path, "p.toml", head + f"holidays = [{holidays}]\n") == \
            f"{tmp_path / 'p.toml'}: price table key {key}[0]: {said} {TABLE_HINT}"
    (tmp_path / "p.toml").write_text(head + "holidays = [2027-01-15]\n", "utf-8")
    book = load_prices(tmp_path / "p.toml", search_from=tmp_path)
    # Friday 2027-01-15 at 11:00 at +08:00 is the holiday, off-peak; the Thursday before is peak
    assert [book.window("deepseek", _at(t)) for t in ("2027-01-15T03:00:00", "2027-01-14T03:00:00")] == \
        ["off-peak", "peak"]


def test_the_fuzz_case_is_one_error_on_the_command_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.json").write_text(json.dumps(
        {"providers": {"deepseek": {"windows": [_window(holidays=["2027-1-15"])]}}}), "utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "usage", "nothing-here", "--prices", "p.json")
    assert (code, out, err) == (2, "", [f'error: p.json: price table key {WINDOW}.holidays[0]: "2027-1-15" is not '
                                        f'YYYY-MM-DD (write "2027-01-15") {TABLE_HINT}'])


def test_a_year_the_holiday_list_does_not_cover_is_priced_by_the_weekday_rule_and_said(tmp_path: Path) -> None:
    """DeepSeek's packaged holidays are 2026's and 2027's: 2028-01-03 (a Monday, a working day or a
    holiday the table cannot know) at 03:00 UTC (11:00 at +08:00) is priced at the peak rate, and said."""
    times = ["2026-10-01T03:00:00",  # a packaged holiday: off-peak
             "2027-12-31T15:59:59",  # 23:59:59 at +08:00, still 2027: off-peak, known
             "2027-12-31T16:00:00",  # 2028-01-01 00:00 at +08:00: off-peak by the hour, nothing to say
             "2028-01-03T03:00:00",  # the tour's request: peak, said
             "2029-01-02T03:00:00",  # a Tuesday of 2029: peak, said once for 2029
             "2028-06-01T03:00:00"]  # 2028 again: said once
    b = LogBuilder(session_id="s-holidays", created_at=int(_at(times[0]) * 1000) - 100, model="deepseek-v4-pro")
    for k, at in enumerate(times):
        b.clock.now = int(_at(at) * 1000)
        with b.turn(f"t{k}"), b.step():
            b.assistant("a", usage={"inputTokens": 1_000_000, "outputTokens": 0, "cacheReadTokens": 0})
    log = b.write_jsonl(tmp_path / "session.jsonl", packed=False)
    book = load_prices(search_from=tmp_path)
    ledger = session_ledger(log, prices=book)
    # priced all the same: peak $1.32, off-peak $0.66 per million cache-miss tokens (deepseek-v4-pro)
    assert [(e.window, e.cost.total if e.cost else None) for e in ledger.entries] == [
        ("off-peak", 0.66), ("off-peak", 0.66), ("off-peak", 0.66), ("peak", 1.32), ("peak", 1.32), ("peak", 1.32)]
    assert book.caveats(ledger.entries) == [NOTE_2028, NOTE_2028.replace("2028", "2029")]
    # one request's caveat; none without a window (Anthropic), a price, a model or a time, nor
    # in the first DeepSeek window (2026-08-16 to 08-23: every day, no holiday list), nor in a
    # covered year, nor off-peak by the hour or the weekday (a holiday would change nothing)
    assert book.caveat("deepseek-official", "deepseek-v4-pro", _at("2028-01-03T03:00:00")) == NOTE_2028
    assert [book.caveat(provider, model, when) for provider, model, when in (
        ("anthropic", "claude-opus-5", _at("2028-01-03T03:00:00")),
        ("local-openai", "local-coder", _at("2028-01-03T03:00:00")),
        ("deepseek-official", None, _at("2028-01-03T03:00:00")),
        ("deepseek-official", "deepseek-v4-pro", None),
        ("deepseek-official", "deepseek-v4-pro", _at("2026-08-20T03:00:00")),
        ("deepseek-official", "deepseek-v4-pro", _at("2026-12-02T03:00:00")),
        ("deepseek-official", "deepseek-v4-pro", _at("2027-01-04T03:00:00")),  # a Monday of 2027: covered
        ("deepseek-official", "deepseek-v4-pro", _at("2027-12-31T16:00:00")),
        ("deepseek-official", "deepseek-v4-pro", _at("2028-01-01T03:00:00")),  # a Saturday
        ("deepseek-official", "deepseek-v4-pro", 1e16))] == [None] * 10  # 1e16 s: past year 9999
    assert book.caveat("deepseek-official", "deepseek-v4-pro", _at("2028-01-04T01:00:00")) == NOTE_2028


def test_holidays_given_with_prices_cover_their_years(tmp_path: Path) -> None:
    """A --prices window with 2027's New Year's Day: that day is off-peak and 2027 covered; 2028
    is said with both years named; a window without holidays (or an empty list) says nothing."""
    document = {"providers": {"deepseek": {"windows": [
        _window(**{"from": "2026-08-23T00:00:00Z", "days": ["mon", "tue", "wed", "thu", "fri"],
                   "holidays": ["2026-10-01", "2027-01-01"]})]}}}
    (tmp_path / "p.json").write_text(json.dumps(document), "utf-8")
    book = load_prices(tmp_path / "p.json", search_from=tmp_path)
    requests = [SimpleNamespace(provider="deepseek-official", model="deepseek-v4-flash", sent=_at(t))
                for t in ("2027-01-01T03:00:00", "2027-01-04T03:00:00", "2028-01-03T03:00:00")]
    assert [book.window("deepseek", r.sent) for r in requests] == ["off-peak", "peak", "peak"]
    assert book.caveats(requests) == [
        "the deepseek price table lists no holidays of 2028 (its holiday list covers 2026, 2027): requests of 2028 "
        "are priced by the weekday rule alone, a public holiday at the peak rate; give the holidays of 2028 with "
        '--prices FILE (the "holidays" of the deepseek window)']
    # the year is the window's own clock's: 11:00 UTC on 2026-12-31 is 01:00 on 2027-01-01 at +14:00
    (tmp_path / "p.json").write_text(json.dumps({"providers": {"deepseek": {"windows": [
        _window(utc_offset="+14:00", peak_hours=["00:00-12:00"], holidays=["2027-06-01"])]}}}), "utf-8")
    book = load_prices(tmp_path / "p.json", search_from=tmp_path)
    said = [book.caveat("deepseek-official", "deepseek-v4-flash", _at(t)) for t in (
        "2026-12-31T11:00:00", "2027-12-31T11:00:00", "2026-12-30T11:00:00", "2026-12-31T10:00:00")]
    assert said == [None, *(f"the deepseek price table lists no holidays of {year} (its holiday list covers 2027): "
                            f"requests of {year} are priced by the weekday rule alone, a public holiday at the peak "
                            f'rate; give the holidays of {year} with --prices FILE (the "holidays" of the deepseek '
                            "window)" for year in (2028, 2026)), None]  # 10:00 UTC: 00:00 local, in 2027
    no_holidays: tuple[dict[str, object], ...] = ({}, {"holidays": []})
    for fields in no_holidays:
        (tmp_path / "p.json").write_text(json.dumps({"providers": {"deepseek": {"windows": [_window(**fields)]}}}),
                                         "utf-8")
        assert load_prices(tmp_path / "p.json", search_from=tmp_path).caveats(requests) == []


def test_nan_and_infinity_in_a_json_price_file_are_refused_by_key(tmp_path: Path) -> None:
    """``JSON.parse`` refuses them; Python's parser reads them. A rate is refused as the number
    it reads as (fuzz round 11's messages); anywhere else the parser does not read (``gaps``, a
    ``source``), in its own spelling; the same past a 5,000-digit integer (the second parse)."""
    flash = "providers.deepseek.models.deepseek-v4-flash[0]"
    huge = "1" + "0" * 4999
    for text, said in (
            ('{"providers": {}, "gaps": ["a", NaN]}', "gaps[1]: NaN is not JSON"),
            ('{"providers": {}, "gaps": [[[-Infinity]]]}', "gaps[0][0][0]: -Infinity is not JSON"),
            ('{"providers": {"deepseek": {"models": {"deepseek-v4-flash": [{"cache_miss": 1, "cache_read": 0.1, '
             '"output": 2, "source": Infinity}]}}}}', f"{flash}.source: Infinity is not JSON"),
            ('{"providers": {"deepseek": {"models": {"deepseek-v4-flash": {"cache_miss": 1, "cache_read": 0.1, '
             '"output": 2, "verified": NaN}}}}}', "providers.deepseek.models.deepseek-v4-flash.verified: NaN is not "
                                                  "JSON"),
            ('{"providers": {"deepseek": {"windows": [{"peak_hours": [], "retrieved": NaN}]}}}',
             f"{WINDOW}.retrieved: NaN is not JSON"),
            (f'{{"providers": {{}}, "gaps": {huge}, "note": -Infinity}}', "note: -Infinity is not JSON"),
            (f'{{"providers": {{}}, "schema": {huge}, "note": -Infinity}}',
             "schema: a 5000-digit number is not 2, the price table schema this dsh-audit reads (leave it out, or "
             "write 2)"),
            ('{"providers": {"deepseek": {"models": {"deepseek-v4-flash": [{"cache_miss": -Infinity, '
             '"cache_read": 0.1, "output": 2}]}}}}', f"{flash}.cache_miss: -Infinity is not a rate (a number >= 0)"),
            ('{"providers": {"deepseek": {"windows": [{"peak_hours": [], "holidays": [NaN]}]}}}',
             f"{WINDOW}.holidays[0]: NaN is not YYYY-MM-DD")):
        assert _refused(tmp_path, "p.json", text) == f"{tmp_path / 'p.json'}: price table key {said} {TABLE_HINT}"
    # TOML has nan and inf: a rate refuses them by key, as before
    assert _refused(tmp_path, "p.toml", 'providers.deepseek.models.m.cache_miss = nan\n'
                                        'providers.deepseek.models.m.cache_read = 1\n'
                                        'providers.deepseek.models.m.output = 1\n') == \
        f"{tmp_path / 'p.toml'}: price table key providers.deepseek.models.m.cache_miss: nan is not a rate " \
        f"(a number >= 0) {TABLE_HINT}"
