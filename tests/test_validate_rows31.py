"""Packed rows are checked without unpacking them, and the findings are exactly those of the rows
unpacked: each case below breaks a text row (line 12, five members) or a tool-call row (line 21,
six members) in its first, middle or last member or gap, its seq0 or time0, its keys.

Each case is checked as followed by a turn/end (the damage is an error) and as a tail (the
turn/end removed: one DSH106 warning), by :func:`validate` and by a :class:`LineValidator` fed by
the reader (``check`` and ``report``), whose own verdict must not change either. The expected
findings are those of the same log with every row :func:`expand_row` accepts written as its
events, one line each (the path that checks one event at a time), their lines mapped back; a few
cases are also pinned to the findings the validator that unpacked every row gave (before session
31), so that a fault of both paths fails too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.errors import DshAuditError
from dsh_audit.log import CHUNK_ROW_TYPES, RowError, expand_row, parse_json, read_log
from dsh_audit.testing import LogBuilder, ToolCall
from dsh_audit.validate import RULES, LineValidator, validate

Found = list[tuple[str, int | None, int | None, str]]

TEXT, TOOL = 12, 21  # the lines of the text row (5 members, key texts) and the tool-call row (6, args)
SAFE = 2**53 - 1


@cache
def _lines() -> tuple[str, ...]:
    return tuple(_base())


def _base() -> list[str]:
    """37 lines, one turn: reasoning and text rows, a tool call streamed as a row, a short text row."""
    b = LogBuilder(session_id="rows31")
    with b.turn("Hi"):
        with b.step():
            b.assistant("Hello there, friend!", reasoning="Greet back politely.", delta_size=4)
        with b.step():
            reply = b.assistant(tool_calls=[ToolCall("read", {"path": "a.txt"})], delta_size=4)
            b.tool_result(reply.call_ids[0], "contents")
        with b.step():
            b.assistant("Done.", delta_size=2)
    return b.lines()


def _row(number: int, change: Callable[[dict[str, Any]], None]) -> Callable[[list[str]], None]:
    def apply(lines: list[str]) -> None:
        value = json.loads(lines[number - 1])
        change(value)
        lines[number - 1] = json.dumps(value)
    return apply


def _data(number: int, key: str, value: Any) -> Callable[[list[str]], None]:
    def change(row: dict[str, Any]) -> None:
        row["data"][key] = value
    return _row(number, change)


def _envelope(number: int, key: str, value: Any) -> Callable[[list[str]], None]:
    def change(row: dict[str, Any]) -> None:
        row[key] = value
    return _row(number, change)


def _item(number: int, key: str, position: int, value: Any) -> Callable[[list[str]], None]:
    def change(row: dict[str, Any]) -> None:
        row["data"][key][position] = value
    return _row(number, change)


def _cases() -> dict[str, Callable[[list[str]], None]]:
    cases: dict[str, Callable[[list[str]], None]] = {}
    for name, number, key, size in (("text", TEXT, "texts", 5), ("tool", TOOL, "args", 6)):
        for where, member, gap in (("first", 0, 0), ("middle", size // 2, (size - 1) // 2), ("last", size - 1,
                                                                                             size - 2)):
            cases[f"{name}-member-number-{where}"] = _item(number, key, member, 5)
            cases[f"{name}-member-null-{where}"] = _item(number, key, member, None)
            cases[f"{name}-gap-float-{where}"] = _item(number, "dt", gap, 1.0)  # DSH reads it: float times
            cases[f"{name}-gap-fraction-{where}"] = _item(number, "dt", gap, 0.5)
            cases[f"{name}-gap-string-{where}"] = _item(number, "dt", gap, "1")
            cases[f"{name}-gap-unsafe-{where}"] = _item(number, "dt", gap, SAFE)
            cases[f"{name}-gap-bool-{where}"] = _item(number, "dt", gap, True)
        cases[f"{name}-seq0-float"] = _row(number, lambda row: row.update(seq0=row["seq0"] + 0.0))
        cases[f"{name}-seq0-gap"] = _row(number, lambda row: row.update(seq0=row["seq0"] + 1))
        cases[f"{name}-seq0-repeat"] = _row(number, lambda row: row.update(seq0=row["seq0"] - 1))
        cases[f"{name}-seq0-negative"] = _envelope(number, "seq0", -1)
        cases[f"{name}-seq0-string"] = _envelope(number, "seq0", "14")
        cases[f"{name}-seq0-unsafe-end"] = _envelope(number, "seq0", SAFE - 1)
        cases[f"{name}-time0-float"] = _row(number, lambda row: row.update(time0=row["time0"] + 0.0))
        cases[f"{name}-time0-fraction"] = _row(number, lambda row: row.update(time0=row["time0"] + 0.5))
        cases[f"{name}-time0-string"] = _row(number, lambda row: row.update(time0=str(row["time0"])))
        cases[f"{name}-time0-unsafe-end"] = _envelope(number, "time0", SAFE - 2)
        cases[f"{name}-times-back-to-safe"] = _row(number, lambda row: row.update(
            time0=-SAFE, data={**row["data"], "dt": [SAFE + 1] + row["data"]["dt"][1:]}))  # DSH reads it
        cases[f"{name}-gaps-short"] = _row(number, lambda row: row["data"]["dt"].pop())
        cases[f"{name}-gaps-long"] = _row(number, lambda row: row["data"]["dt"].append(1))
        cases[f"{name}-members-empty"] = _row(number, lambda row: row["data"].update(dt=[], **{
            "args" if row["type"] == "tool-call-chunks" else "texts": []}))
        cases[f"{name}-members-not-array"] = _data(number, key, "text")
        cases[f"{name}-gaps-not-array"] = _data(number, "dt", 1)
        cases[f"{name}-index-string"] = _data(number, "index", "1")
        cases[f"{name}-index-float"] = _data(number, "index", 1.0)
        cases[f"{name}-index-wrong"] = _data(number, "index", 7)
        cases[f"{name}-turn-wrong"] = _data(number, "turn", 2)
        cases[f"{name}-step-bool"] = _data(number, "step", True)
        cases[f"{name}-extra-data-key"] = _data(number, "extra", 1)
        cases[f"{name}-extra-envelope-key"] = _envelope(number, "extra", 1)
        cases[f"{name}-data-array"] = _envelope(number, "data", [])
        cases[f"{name}-one-member"] = _row(number, lambda row: row["data"].update(dt=[], **{
            "args" if row["type"] == "tool-call-chunks" else "texts": ["x"]}))
    cases["tool-id-number"] = _data(TOOL, "id", 5)
    cases["tool-name-null"] = _data(TOOL, "name", None)
    cases["tool-no-name"] = _row(TOOL, lambda row: row["data"].pop("name"))
    cases["text-unreadable-before"] = lambda lines: lines.__setitem__(TEXT - 2, "{oops")
    cases["text-type-reasoning"] = _envelope(TEXT, "type", "reasoning-chunks")
    return cases


CASES = _cases()


def _log(tmp_path: Path, case: str, tail: bool) -> Path:
    lines = list(_lines())
    CASES[case](lines)
    if tail:
        lines = lines[:-1]  # no turn/end: the damage is a crash-damaged tail
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _found(findings: list[Any], lines: list[int] | None = None) -> Found:
    """The findings' rule, line (``lines[n - 1]`` for line ``n`` when given), seq and message."""
    return [(f.rule, f.line if lines is None or f.line is None else lines[f.line - 1], f.seq, f.message)
            for f in findings]


def _expanded(path: Path, tmp_path: Path) -> tuple[Path, list[int]]:
    """The log at ``path`` with every row :func:`expand_row` accepts written as its events, one line
    each (a broken row stays as it is), and for each line of it the line of ``path`` it comes from."""
    out: list[bytes] = []
    origin: list[int] = []
    for number, raw in enumerate(path.read_bytes().splitlines(), 1):
        try:
            value = parse_json(raw)
            row = number > 1 and isinstance(value, dict) and value.get("type") in CHUNK_ROW_TYPES
            events = expand_row(value) if row else None
        except (ValueError, RowError):  # not JSON, a broken row: the line as it is
            events = None
        lines = [json.dumps(event).encode() for event in events] if events else [raw]
        out += lines
        origin += [number] * len(lines)
    expanded = tmp_path / "expanded" / path.name
    expanded.parent.mkdir()
    expanded.write_bytes(b"".join(line + b"\n" for line in out))
    return expanded, origin


def _read(path: Path, tee: LineValidator | None) -> tuple[int, list[str], str | None]:
    """The reader's verdict: events read, its warnings, its error."""
    log = read_log(path, tee=tee)
    count = 0
    try:
        for _ in log.events(collapse_rows=True):
            count += 1
    except DshAuditError as exc:
        return count, log.warnings, str(exc)
    return count, log.warnings, None


def test_base_log_is_clean(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(_base()) + "\n", encoding="utf-8")
    assert validate(path) == []
    expanded, origin = _expanded(path, tmp_path)
    assert (len(origin), origin.count(TEXT), origin.count(TOOL)) == (52, 5, 6)  # every row written as its events
    assert validate(expanded) == []


#: the cases of rows DSH reads as they are (integral floats, a tool call without a name, times that
#: leave the safe range and come back): no finding when a turn/end follows
READ_BY_DSH = {f"{name}-{what}" for name in ("text", "tool") for what in (
    "gap-float-first", "gap-float-middle", "gap-float-last", "seq0-float", "time0-float", "times-back-to-safe")} | {
    "text-index-float", "tool-no-name"}

#: the physical pass's rules (and the header's): selected alone, no event is admitted
PHYSICAL = sorted(r for r in RULES if r[3] == "2" and r < "DSH218" or "DSH101" <= r <= "DSH108")


@pytest.mark.parametrize("tail", [False, True], ids=["committed", "tail"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_rows_checked_packed_find_what_unpacked_rows_find(tmp_path: Path, case: str, tail: bool) -> None:
    path = _log(tmp_path, case, tail)
    found = _found(validate(path))
    expanded, origin = _expanded(path, tmp_path)
    assert found == _found(validate(expanded), origin)
    if (case, tail) in PINNED:
        assert found == PINNED[case, tail]
    assert (found == []) == (not tail and case in READ_BY_DSH)  # neither path finds nothing at all
    teed = LineValidator(path)
    verdict = _read(path, teed)
    assert _found(teed.finish()) == found
    assert verdict == _read(path, None)  # the validator's fast path changes nothing the reader says
    assert _found(validate(path, rules=PHYSICAL)) == [f for f in found if f[0] in PHYSICAL]


# A few cases as the validator that unpacked every row found them (before session 31).
PINNED: dict[tuple[str, bool], Found] = {
    # (session 40: a refused record's lost seqs are no seq gap, and the chunks it held no other
    # finding: the DSH107, DSH310 and stream findings that followed it are gone)
    ("text-member-null-middle", False): [
        ("DSH105", 12, 14, "malformed text-chunks storage row: texts must be a non-empty string array")],
    ("text-member-null-middle", True): [
        ("DSH407", 11, 13, "log ends inside open turn 1 (step 1 open)"),
        ("DSH106", 12, 14, "malformed text-chunks storage row: texts must be a non-empty string array (DSH105); no "
         "turn/end follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored")],
    ("text-seq0-gap", False): [
        ("DSH107", 12, 15, "seq gap: expected 14, got 15"),
        ("DSH108", 13, 19, "seq 19 repeats or goes backwards (expected 20)"),
        ("DSH426", 16, 22, "stop finish with 1 open block(s)"),
        ("DSH310", 17, 23, "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (15): 14 is not a chunk "
         "of the attempt")],
    ("tool-seq0-repeat", True): [
        ("DSH407", 20, 26, "log ends inside open turn 1 (step 2 open)"),
        ("DSH106", 21, 26, "seq 26 repeats or goes backwards (expected 27) (DSH108); no turn/end follows, so DSH "
         "treats it as a crash-damaged tail: 23 record(s) from here on are ignored")],
    ("text-unreadable-before", False): [("DSH104", 11, 13, "line is not valid JSON")],
    ("tool-index-wrong", False): [
        ("DSH421", 21, 27, "tool-call-delta at index 7 needs an open tool-call block, but no block is open there")],
    ("tool-one-member", True): [
        ("DSH407", 21, 27, "log ends inside open turn 1 (step 2 open)"),
        ("DSH106", 22, 33, "seq gap: expected 28, got 33 (DSH107); no turn/end follows, so DSH treats it as a "
         "crash-damaged tail: 17 record(s) from here on are ignored")],
    ("tool-gap-float-first", False): [],  # DSH reads an integral float gap
    ("text-times-back-to-safe", False): [],
}
