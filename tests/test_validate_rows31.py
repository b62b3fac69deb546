"""Packed rows are checked without unpacking them, and the findings are exactly those of the rows
unpacked: each case below breaks a text row (line 12, five members) or a tool-call row (line 21,
six members) in its first, middle or last member or gap, its seq0 or time0, its keys; the expected
findings are those of the validator that unpacked every row (before session 31).

Each case is checked as followed by a turn/end (the damage is an error) and as a tail (the
turn/end removed: one DSH106 warning), by :func:`validate` and by a :class:`LineValidator` fed by
the reader (``check`` and ``report``), whose own verdict must not change either.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.errors import DshAuditError
from dsh_audit.log import read_log
from dsh_audit.testing import LogBuilder, ToolCall
from dsh_audit.validate import LineValidator, validate

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


def _found(findings: list[Any]) -> Found:
    return [(f.rule, f.line, f.seq, f.message) for f in findings]


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


@pytest.mark.parametrize("tail", [False, True], ids=["committed", "tail"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_rows_checked_packed_find_what_unpacked_rows_find(tmp_path: Path, case: str, tail: bool) -> None:
    path = _log(tmp_path, case, tail)
    found = _found(validate(path))
    assert found == EXPECTED[case, tail]
    teed = LineValidator(path)
    verdict = _read(path, teed)
    assert _found(teed.finish()) == found
    assert verdict == _read(path, None)  # the validator's fast path changes nothing the reader says


EXPECTED: dict[tuple[str, bool], Found] = {
    ('text-data-array', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: data must be an object'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-data-array', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: data must be an object (DSH105); no turn/end follows, so DSH '
            'treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-extra-data-key', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: data must be exactly {turn, step, index, dt, texts}'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-extra-data-key', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: data must be exactly {turn, step, index, dt, texts} (DSH105); no '
            'turn/end follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-extra-envelope-key', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: envelope must be exactly {type, seq0, time0, data}'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-extra-envelope-key', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: envelope must be exactly {type, seq0, time0, data} (DSH105); no '
            'turn/end follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-gap-bool-first', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-gap-bool-first', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-gap-bool-last', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-gap-bool-last', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-gap-bool-middle', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-gap-bool-middle', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-gap-float-first', False): [],
    ('text-gap-float-first', True): [
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('text-gap-float-last', False): [],
    ('text-gap-float-last', True): [
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('text-gap-float-middle', False): [],
    ('text-gap-float-middle', True): [
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('text-gap-fraction-first', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-gap-fraction-first', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-gap-fraction-last', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-gap-fraction-last', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-gap-fraction-middle', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-gap-fraction-middle', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-gap-string-first', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-gap-string-first', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-gap-string-last', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-gap-string-last', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-gap-string-middle', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-gap-string-middle', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-gap-unsafe-first', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: member times must stay safe integers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-gap-unsafe-first', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: member times must stay safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-gap-unsafe-last', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: member times must stay safe integers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-gap-unsafe-last', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: member times must stay safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-gap-unsafe-middle', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: member times must stay safe integers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-gap-unsafe-middle', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: member times must stay safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-gaps-long', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: dt length 5 does not match 5 members'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-gaps-long', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: dt length 5 does not match 5 members (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-gaps-not-array', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-gaps-not-array', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-gaps-short', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: dt length 3 does not match 5 members'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-gaps-short', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: dt length 3 does not match 5 members (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-index-float', False): [],
    ('text-index-float', True): [
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('text-index-string', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: turn/step/index must be numbers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-index-string', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: turn/step/index must be numbers (DSH105); no turn/end follows, so '
            'DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-index-wrong', False): [
        ('DSH421', 12, 14, 'text-delta at index 7 needs an open text block, but no block is open there'),
    ],
    ('text-index-wrong', True): [
        ('DSH421', 12, 14, 'text-delta at index 7 needs an open text block, but no block is open there'),
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('text-member-null-first', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: texts must be a non-empty string array'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-member-null-first', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: texts must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-member-null-last', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: texts must be a non-empty string array'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-member-null-last', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: texts must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-member-null-middle', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: texts must be a non-empty string array'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-member-null-middle', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: texts must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-member-number-first', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: texts must be a non-empty string array'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-member-number-first', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: texts must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-member-number-last', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: texts must be a non-empty string array'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-member-number-last', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: texts must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-member-number-middle', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: texts must be a non-empty string array'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-member-number-middle', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: texts must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-members-empty', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: texts must be a non-empty string array'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-members-empty', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: texts must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-members-not-array', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: texts must be a non-empty string array'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-members-not-array', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: texts must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-one-member', False): [
        ('DSH107', 13, 19, 'seq gap: expected 15, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (12): 15, 16, 17, 18 are not chunks "
            'of the attempt'),
    ],
    ('text-one-member', True): [
        ('DSH407', 12, 14, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 13, 19, 
            'seq gap: expected 15, got 19 (DSH107); no turn/end follows, so DSH treats it as a crash-damaged tail: '
            '31 record(s) from here on are ignored'),
    ],
    ('text-seq0-float', False): [],
    ('text-seq0-float', True): [
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('text-seq0-gap', False): [
        ('DSH107', 12, 15, 'seq gap: expected 14, got 15'),
        ('DSH108', 13, 19, 'seq 19 repeats or goes backwards (expected 20)'),
        ('DSH426', 16, 22, 'stop finish with 1 open block(s)'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (15): 14 is not a chunk of the "
            'attempt'),
    ],
    ('text-seq0-gap', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 15, 
            'seq gap: expected 14, got 15 (DSH107); no turn/end follows, so DSH treats it as a crash-damaged tail: '
            '36 record(s) from here on are ignored'),
    ],
    ('text-seq0-negative', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: seq0 must be a non-negative safe integer'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-seq0-negative', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: seq0 must be a non-negative safe integer (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-seq0-repeat', False): [
        ('DSH108', 12, 13, 'seq 13 repeats or goes backwards (expected 14)'),
        ('DSH107', 13, 19, 'seq gap: expected 18, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (15): 18 is not a chunk of the "
            'attempt'),
    ],
    ('text-seq0-repeat', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 13, 
            'seq 13 repeats or goes backwards (expected 14) (DSH108); no turn/end follows, so DSH treats it as a '
            'crash-damaged tail: 36 record(s) from here on are ignored'),
    ],
    ('text-seq0-string', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: seq0 must be a non-negative safe integer'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-seq0-string', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: seq0 must be a non-negative safe integer (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-seq0-unsafe-end', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: member seqs must stay safe integers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-seq0-unsafe-end', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: member seqs must stay safe integers (DSH105); no turn/end follows, '
            'so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-step-bool', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: turn/step/index must be numbers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-step-bool', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: turn/step/index must be numbers (DSH105); no turn/end follows, so '
            'DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-time0-float', False): [],
    ('text-time0-float', True): [
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('text-time0-fraction', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: time0 must be a safe integer'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-time0-fraction', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: time0 must be a safe integer (DSH105); no turn/end follows, so DSH '
            'treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-time0-string', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: time0 must be a safe integer'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-time0-string', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: time0 must be a safe integer (DSH105); no turn/end follows, so DSH '
            'treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-time0-unsafe-end', False): [
        ('DSH105', 12, 14, 'malformed text-chunks storage row: member times must stay safe integers'),
        ('DSH107', 13, 19, 'seq gap: expected 14, got 19'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (11): 14, 15, 16, 17, 18 are not "
            'chunks of the attempt'),
    ],
    ('text-time0-unsafe-end', True): [
        ('DSH407', 11, 13, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 12, 14, 
            'malformed text-chunks storage row: member times must stay safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 32 record(s) from here on are ignored'),
    ],
    ('text-times-back-to-safe', False): [],
    ('text-times-back-to-safe', True): [
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('text-turn-wrong', False): [
        ('DSH405', 12, 14, 'assistant/chunk names turn 2/step 1 but turn 1/step 1 is open'),
        ('DSH425', 12, 14, 'attempt starting at seq 7 has no finish chunk'),
        ('DSH421', 12, 14, 'text-delta at index 1 needs an open text block, but no block is open there'),
        ('DSH425', 13, 19, 'attempt starting at seq 14 has no finish chunk'),
        ('DSH422', 13, 19, 'block-end index 0 has no open block'),
        ('DSH422', 14, 20, 'block-end index 1 has no open block'),
        ('DSH310', 17, 23, "sourceEventSeqs [7..22] (16) are not the attempt's chunks [19,20,21,22]"),
    ],
    ('text-turn-wrong', True): [
        ('DSH405', 12, 14, 'assistant/chunk names turn 2/step 1 but turn 1/step 1 is open'),
        ('DSH425', 12, 14, 'attempt starting at seq 7 has no finish chunk'),
        ('DSH421', 12, 14, 'text-delta at index 1 needs an open text block, but no block is open there'),
        ('DSH425', 13, 19, 'attempt starting at seq 14 has no finish chunk'),
        ('DSH422', 13, 19, 'block-end index 0 has no open block'),
        ('DSH422', 14, 20, 'block-end index 1 has no open block'),
        ('DSH310', 17, 23, "sourceEventSeqs [7..22] (16) are not the attempt's chunks [19,20,21,22]"),
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('text-type-reasoning', False): [
        ('DSH421', 12, 14, 'reasoning-delta at index 1 needs an open reasoning block, but a text block is open there'),
    ],
    ('text-type-reasoning', True): [
        ('DSH421', 12, 14, 'reasoning-delta at index 1 needs an open reasoning block, but a text block is open there'),
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('text-unreadable-before', False): [
        ('DSH104', 11, 13, 'line is not valid JSON'),
        ('DSH107', 12, 14, 'seq gap: expected 13, got 14'),
        ('DSH421', 12, 14, 'text-delta at index 1 needs an open text block, but no block is open there'),
        ('DSH422', 14, 20, 'block-end index 1 has no open block'),
        ('DSH310', 17, 23, 
            "sourceEventSeqs [7..22] (16) are not the attempt's chunks [7..22] (15): 13 is not a chunk of the "
            'attempt'),
    ],
    ('text-unreadable-before', True): [
        ('DSH407', 10, 12, 'log ends inside open turn 1 (step 1 open)'),
        ('DSH106', 11, 13, 
            'line is not valid JSON (DSH104); no turn/end follows, so DSH treats it as a crash-damaged tail: 37 '
            'record(s) from here on are ignored'),
    ],
    ('tool-data-array', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: data must be an object'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-data-array', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: data must be an object (DSH105); no turn/end follows, so DSH '
            'treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-extra-data-key', False): [
        ('DSH105', 21, 27, 
            'malformed tool-call-chunks storage row: data must be exactly {turn, step, index, id, name?, dt, args}'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-extra-data-key', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: data must be exactly {turn, step, index, id, name?, dt, args} '
            '(DSH105); no turn/end follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on '
            'are ignored'),
    ],
    ('tool-extra-envelope-key', False): [
        ('DSH105', 21, 27,
         'malformed tool-call-chunks storage row: envelope must be exactly {type, seq0, time0, data}'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-extra-envelope-key', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: envelope must be exactly {type, seq0, time0, data} (DSH105); '
            'no turn/end follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-gap-bool-first', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-gap-bool-first', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-gap-bool-last', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-gap-bool-last', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-gap-bool-middle', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-gap-bool-middle', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-gap-float-first', False): [],
    ('tool-gap-float-first', True): [
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('tool-gap-float-last', False): [],
    ('tool-gap-float-last', True): [
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('tool-gap-float-middle', False): [],
    ('tool-gap-float-middle', True): [
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('tool-gap-fraction-first', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-gap-fraction-first', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-gap-fraction-last', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-gap-fraction-last', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-gap-fraction-middle', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-gap-fraction-middle', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-gap-string-first', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-gap-string-first', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-gap-string-last', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-gap-string-last', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-gap-string-middle', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-gap-string-middle', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-gap-unsafe-first', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: member times must stay safe integers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-gap-unsafe-first', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: member times must stay safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-gap-unsafe-last', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: member times must stay safe integers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-gap-unsafe-last', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: member times must stay safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-gap-unsafe-middle', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: member times must stay safe integers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-gap-unsafe-middle', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: member times must stay safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-gaps-long', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: dt length 6 does not match 6 members'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-gaps-long', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: dt length 6 does not match 6 members (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-gaps-not-array', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: dt must be an array of safe integers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-gaps-not-array', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: dt must be an array of safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-gaps-short', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: dt length 4 does not match 6 members'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-gaps-short', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: dt length 4 does not match 6 members (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-id-number', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: id (and name when present) must be strings'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-id-number', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: id (and name when present) must be strings (DSH105); no '
            'turn/end follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-index-float', False): [
        ('DSH421', 21, 27, 'tool-call-delta at index 1 needs an open tool-call block, but no block is open there'),
    ],
    ('tool-index-float', True): [
        ('DSH421', 21, 27, 'tool-call-delta at index 1 needs an open tool-call block, but no block is open there'),
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('tool-index-string', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: turn/step/index must be numbers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-index-string', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: turn/step/index must be numbers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-index-wrong', False): [
        ('DSH421', 21, 27, 'tool-call-delta at index 7 needs an open tool-call block, but no block is open there'),
    ],
    ('tool-index-wrong', True): [
        ('DSH421', 21, 27, 'tool-call-delta at index 7 needs an open tool-call block, but no block is open there'),
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('tool-member-null-first', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: args must be a non-empty string array'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-member-null-first', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: args must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-member-null-last', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: args must be a non-empty string array'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-member-null-last', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: args must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-member-null-middle', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: args must be a non-empty string array'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-member-null-middle', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: args must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-member-number-first', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: args must be a non-empty string array'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-member-number-first', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: args must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-member-number-last', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: args must be a non-empty string array'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-member-number-last', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: args must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-member-number-middle', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: args must be a non-empty string array'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-member-number-middle', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: args must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-members-empty', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: args must be a non-empty string array'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-members-empty', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: args must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-members-not-array', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: args must be a non-empty string array'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-members-not-array', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: args must be a non-empty string array (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-name-null', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: id (and name when present) must be strings'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-name-null', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: id (and name when present) must be strings (DSH105); no '
            'turn/end follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-no-name', False): [],
    ('tool-no-name', True): [
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('tool-one-member', False): [
        ('DSH107', 22, 33, 'seq gap: expected 28, got 33'),
        ('DSH310', 25, 36, 
            "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26..35] (5): 28, 29, 30, 31, 32 are not "
            'chunks of the attempt'),
    ],
    ('tool-one-member', True): [
        ('DSH407', 21, 27, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 22, 33, 
            'seq gap: expected 28, got 33 (DSH107); no turn/end follows, so DSH treats it as a crash-damaged tail: '
            '17 record(s) from here on are ignored'),
    ],
    ('tool-seq0-float', False): [],
    ('tool-seq0-float', True): [
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('tool-seq0-gap', False): [
        ('DSH107', 21, 28, 'seq gap: expected 27, got 28'),
        ('DSH108', 22, 33, 'seq 33 repeats or goes backwards (expected 34)'),
        ('DSH426', 24, 35, 'tool-calls finish with 1 open block(s)'),
        ('DSH310', 25, 36, 
            "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26..35] (9): 27 is not a chunk of the "
            'attempt'),
    ],
    ('tool-seq0-gap', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 28, 
            'seq gap: expected 27, got 28 (DSH107); no turn/end follows, so DSH treats it as a crash-damaged tail: '
            '23 record(s) from here on are ignored'),
    ],
    ('tool-seq0-negative', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: seq0 must be a non-negative safe integer'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-seq0-negative', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: seq0 must be a non-negative safe integer (DSH105); no '
            'turn/end follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-seq0-repeat', False): [
        ('DSH108', 21, 26, 'seq 26 repeats or goes backwards (expected 27)'),
        ('DSH107', 22, 33, 'seq gap: expected 32, got 33'),
        ('DSH310', 25, 36, 
            "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26..35] (9): 32 is not a chunk of the "
            'attempt'),
    ],
    ('tool-seq0-repeat', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 26, 
            'seq 26 repeats or goes backwards (expected 27) (DSH108); no turn/end follows, so DSH treats it as a '
            'crash-damaged tail: 23 record(s) from here on are ignored'),
    ],
    ('tool-seq0-string', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: seq0 must be a non-negative safe integer'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-seq0-string', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: seq0 must be a non-negative safe integer (DSH105); no '
            'turn/end follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-seq0-unsafe-end', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: member seqs must stay safe integers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-seq0-unsafe-end', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: member seqs must stay safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-step-bool', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: turn/step/index must be numbers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-step-bool', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: turn/step/index must be numbers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-time0-float', False): [],
    ('tool-time0-float', True): [
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('tool-time0-fraction', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: time0 must be a safe integer'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-time0-fraction', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: time0 must be a safe integer (DSH105); no turn/end follows, '
            'so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-time0-string', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: time0 must be a safe integer'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-time0-string', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: time0 must be a safe integer (DSH105); no turn/end follows, '
            'so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-time0-unsafe-end', False): [
        ('DSH105', 21, 27, 'malformed tool-call-chunks storage row: member times must stay safe integers'),
        ('DSH107', 22, 33, 'seq gap: expected 27, got 33'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [26,33,34,35]"),
    ],
    ('tool-time0-unsafe-end', True): [
        ('DSH407', 20, 26, 'log ends inside open turn 1 (step 2 open)'),
        ('DSH106', 21, 27, 
            'malformed tool-call-chunks storage row: member times must stay safe integers (DSH105); no turn/end '
            'follows, so DSH treats it as a crash-damaged tail: 18 record(s) from here on are ignored'),
    ],
    ('tool-times-back-to-safe', False): [],
    ('tool-times-back-to-safe', True): [
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
    ('tool-turn-wrong', False): [
        ('DSH405', 21, 27, 'assistant/chunk names turn 2/step 2 but turn 1/step 2 is open'),
        ('DSH425', 21, 27, 'attempt starting at seq 26 has no finish chunk'),
        ('DSH421', 21, 27, 'tool-call-delta at index 0 needs an open tool-call block, but no block is open there'),
        ('DSH425', 22, 33, 'attempt starting at seq 27 has no finish chunk'),
        ('DSH422', 22, 33, 'block-end index 0 has no open block'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [33,34,35]"),
    ],
    ('tool-turn-wrong', True): [
        ('DSH405', 21, 27, 'assistant/chunk names turn 2/step 2 but turn 1/step 2 is open'),
        ('DSH425', 21, 27, 'attempt starting at seq 26 has no finish chunk'),
        ('DSH421', 21, 27, 'tool-call-delta at index 0 needs an open tool-call block, but no block is open there'),
        ('DSH425', 22, 33, 'attempt starting at seq 27 has no finish chunk'),
        ('DSH422', 22, 33, 'block-end index 0 has no open block'),
        ('DSH310', 25, 36, "sourceEventSeqs [26..35] (10) are not the attempt's chunks [33,34,35]"),
        ('DSH407', 36, 49, 'log ends inside open turn 1'),
    ],
}
