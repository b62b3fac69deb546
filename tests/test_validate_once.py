"""One validation of each packed row for the reader and the validation rules that see its lines
(issue 11): ``check`` and ``report`` read a log once, the rules first (``read_log``'s ``tee``).
A row as DSH writes it is validated once, by the one row check of ``dsh_audit.log`` (session 32:
the rules' fast path no longer has a second copy of it): the rules read its first event, its
member count and its seqs without expanding it (``validate._source.packed_row``), and the reader
takes that check (``row_head``, or ``decode_record``, which builds the other events without
checking again). The findings and the events are those of two separate decodes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.log import RowError, read_log
from dsh_audit.log import _records
from dsh_audit.log._records import decode_record, row_head
from dsh_audit.testing import LogBuilder, ToolCall
from dsh_audit.validate import LineValidator, validate


def _builder() -> LogBuilder:
    """A turn whose reply streams a reasoning, a text and a named tool-call row (three members each
    at least), then a second turn with a text row."""
    b = LogBuilder(session_id="once")
    with b.turn("Hi"):
        with b.step():
            reply = b.assistant("Hello there, friend!", reasoning="Greet back politely.", delta_size=4,
                                tool_calls=[ToolCall("read", {"path": "a.txt"})])
            b.tool_result(reply.call_ids[0], "contents")
        with b.step():
            b.assistant("Done reading it.", delta_size=4)
    with b.turn("Again"):
        with b.step():
            b.assistant("Hello again!", delta_size=4)
    return b


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def _rows(lines: list[str]) -> int:
    return sum(json.loads(line).get("type", "").endswith("-chunks") for line in lines[1:])


@pytest.fixture()
def row_checks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times a packed row is validated (``_validate_row`` is what both consumers ran)."""
    calls: list[int] = []
    check = _records._validate_row

    def counted(row: dict[str, Any]) -> tuple[str, list[str], list[float]]:
        calls.append(row["seq0"])
        return check(row)
    monkeypatch.setattr(_records, "_validate_row", counted)
    return calls


def _events(path: Path, *, tee: LineValidator | None, collapse: bool) -> list[Any]:
    log = read_log(path, tee=tee)
    return list(log.events(collapse_rows=collapse))


@pytest.mark.parametrize("collapse", [True, False])
def test_each_row_is_validated_once_for_reader_and_rules(tmp_path: Path, row_checks: list[int],
                                                         collapse: bool) -> None:
    lines = _builder().lines()
    path = _write(tmp_path / "session.jsonl", lines)
    rows = _rows(lines)
    assert rows == 5  # reasoning, text and tool-call rows
    alone = _events(path, tee=None, collapse=collapse)
    assert len(row_checks) == rows
    row_checks.clear()
    expected = validate(path)
    assert expected == [] and len(row_checks) == rows  # the rules alone: once each too
    row_checks.clear()
    checker = LineValidator(path)
    teed = _events(path, tee=checker, collapse=collapse)
    assert len(row_checks) == rows  # not once for the rules and once more for the reader
    assert teed == alone
    assert checker.finish() == expected


def _break_turn(record: dict[str, Any]) -> None:
    record["data"]["turn"] = 7  # a row (or chunk) of a turn that is not open


def test_a_broken_packed_row_finds_what_its_unpacked_events_find(tmp_path: Path) -> None:
    b = _builder()
    packed, unpacked = (json.loads(json.dumps(b.records(packed=flag))) for flag in (True, False))
    row = next(r for r in packed if r.get("type") == "text-chunks")
    _break_turn(row)
    seqs = range(row["seq0"], row["seq0"] + len(row["data"]["texts"]))
    for record in unpacked:
        if record.get("type") == "assistant/chunk" and record["seq"] in seqs:
            _break_turn(record)
    found: dict[str, list[tuple[str, int | None, str]]] = {}
    for name, records in (("packed", packed), ("unpacked", unpacked)):
        path = _write(tmp_path / f"{name}.jsonl", [json.dumps(r) for r in [b.header_record, *records]])
        checker = LineValidator(path)
        list(read_log(path, tee=checker).events(collapse_rows=True))
        findings = checker.finish()
        assert findings == validate(path)
        found[name] = [(f.rule, f.seq, f.message) for f in findings]
    # the row's later chunks name the same wrong turn at the same unopened block: one cause, one finding each
    off_turn = "assistant/chunk names turn 7/step 1 but turn 1/step 1 is open"
    no_block = "text-delta at index 1 needs an open text block, but no block is open there"
    assert found["packed"] == [
        ("DSH405", 14, off_turn), ("DSH425", 14, "attempt starting at seq 7 has no finish chunk"),
        ("DSH421", 14, no_block),
        ("DSH425", 19, "attempt starting at seq 14 has no finish chunk"),
        ("DSH422", 26, "block-end index 0 has no open block"), ("DSH422", 27, "block-end index 1 has no open block"),
        ("DSH310", 31, "sourceEventSeqs [7..30] (24) are not the attempt's chunks [19..30] (12)")]
    assert found["packed"] == found["unpacked"]


def test_a_shared_row_goes_only_to_the_same_parsed_value(row_checks: list[int]) -> None:
    row = {"type": "text-chunks", "seq0": 4, "time0": 10,
           "data": {"turn": 1, "step": 1, "index": 0, "dt": [1, 2], "texts": ["a", "b", "c"]}}
    events = decode_record(row, share=True)
    assert [e["seq"] for e in events] == [4, 5, 6] and [e["time"] for e in events] == [10, 11, 13]
    assert decode_record(dict(row)) == events  # an equal row, not the same one: validated again
    assert len(row_checks) == 2
    head, count = row_head(row)  # the same row: taken, not validated again
    assert (head, count) == (events[0], 3) and head is events[0]
    assert len(row_checks) == 2
    assert decode_record(row) == events and len(row_checks) == 3  # taken once only
    decode_record(row, share=True)
    decode_record({"type": "turn/start", "seq": 7, "time": 14, "data": {"turn": 2}}, share=True)
    assert row_head(row) == (events[0], 3) and len(row_checks) == 5  # the next line forgot it
    bad = {**row, "seq0": -1}
    for _ in range(2):
        with pytest.raises(RowError, match="seq0 must be a non-negative safe integer"):
            decode_record(bad, share=True)
    with pytest.raises(RowError, match="seq0 must be a non-negative safe integer"):
        row_head(bad)


_MAX = 2**53 - 1


@pytest.mark.parametrize(("time0", "dt", "times"), [
    (10, [2, -1, 5], [10, 12, 11, 16]),  # gaps that go back: each time the one before plus its gap
    (_MAX - 5, [5, -10], [_MAX - 5, _MAX, _MAX - 10]),
    (_MAX, [], [_MAX]),
    (-_MAX, [0, 3], [-_MAX, -_MAX, 3 - _MAX]),
    (_MAX, [1], "member times must stay safe integers"),
    (-_MAX, [-1], "member times must stay safe integers"),
    (_MAX - 1, [0, 2, -5], "member times must stay safe integers"),  # past the bound, then back under it
    (-_MAX - 1, [], "time0 must be a safe integer"),
], ids=["back", "back-from-the-bound", "one-at-the-bound", "from-the-least", "past", "below", "past-then-back",
        "time0"])
def test_row_member_times_as_javascript_adds_them(time0: int, dt: list[int], times: list[int] | str) -> None:
    """A row's member times, each the one before plus its gap, all safe integers, whether its gaps
    go back (the full sum) or not (the reader's shortcut: time0 the least, the sum the last)."""
    row = {"type": "text-chunks", "seq0": 4, "time0": time0,
           "data": {"turn": 1, "step": 1, "index": 0, "dt": dt, "texts": ["x"] * (len(dt) + 1)}}
    if isinstance(times, str):
        for decode in (decode_record, row_head):
            with pytest.raises(RowError, match=f"^malformed text-chunks storage row: {times}$"):
                decode(dict(row))
        return
    assert [e["time"] for e in decode_record(dict(row))] == times
    assert row_head(dict(row)) == (decode_record(dict(row))[0], len(times))
