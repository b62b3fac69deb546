"""dsh-audit validate: compaction adjacency and brackets (DSH32x), v2+ stream grammar (DSH109, DSH42x).

Each mutation breaks exactly one rule of a real log: the manual ``/compact`` of ``live/e-compaction``,
the prune and automatic compaction of ``live/e2-autocompact``, and the ``live/b-tools`` log migrated
to format v2 (``dsh_audit.testing._migrate``), whose ``assistant/message.data.stream`` records are
then edited.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from _golden import CORPUS
from test_validate import BASE, Log, delete, insert, read, rules_of, write
from dsh_audit.testing._migrate import migrate_events
from dsh_audit.validate import RULES, validate

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")

MANUAL = CORPUS / "live/e-compaction/session-logs/session-d2f6dc6a-8ad3-463b-b796-9ade0a9053df.jsonl"
AUTO = CORPUS / "live/e2-autocompact/session-logs/session-43924f58-a531-4618-b61d-ea396e84040b.jsonl"
# MANUAL: 111 command/run, 112 compaction/start, 113 compaction/summary, 114 user/message replace,
# 115 compaction/end, 116 command/done. AUTO: 46 compaction/prune, 47 tool/result replace of 44.
_PLAN_OFF = {"type": "plan/mode", "time": 1, "data": {"active": False}}


def _insert(pos: int, event: dict[str, Any]) -> Callable[[Log], None]:
    """``insert`` that also renumbers replace ranges and compaction shadowed seqs."""
    def shift(seq: Any) -> Any:
        return seq + 1 if isinstance(seq, int) and seq >= pos else seq

    def mutate(log: Log) -> None:
        insert(log[1], pos, event)
        for e in log[1]:
            op, data = e.get("surfaceOp"), e["data"]
            if isinstance(op, dict):
                op["start"], op["end"] = shift(op["start"]), shift(op["end"])
            if "shadowedSeqs" in data:
                data["shadowedSeqs"] = [shift(s) for s in data["shadowedSeqs"]]
                rng = data["shadowedRange"]
                rng["start"], rng["end"] = shift(rng["start"]), shift(rng["end"])
    return mutate


def _drop_middle_shadowed(log: Log) -> None:
    seqs = log[1][113]["data"]["shadowedSeqs"]
    del seqs[len(seqs) // 2]


def _truncate_after(seq: int) -> Callable[[Log], None]:
    def mutate(log: Log) -> None:
        del log[1][seq + 1:]
    return mutate


def _owner(turn: Any) -> Callable[[Log], None]:
    def mutate(log: Log) -> None:
        log[1][112]["data"]["turn"] = turn
        log[1][115]["data"]["turn"] = turn
    return mutate


# rule -> (log, mutation that breaks that rule and no other)
COMPACTION: dict[str, tuple[Path, Callable[[Log], None]]] = {
    "DSH320": (MANUAL, _insert(114, _PLAN_OFF)),
    "DSH321": (MANUAL, _drop_middle_shadowed),
    "DSH322": (MANUAL, lambda log: log[1][114]["data"].update(source={"kind": "user"})),
    "DSH323": (AUTO, _insert(47, _PLAN_OFF)),
    "DSH324": (AUTO, lambda log: log[1][46]["data"].update(shadowedRange={"start": 29, "end": 29},
                                                           shadowedSeqs=[29])),
    "DSH325": (MANUAL, lambda log: delete(log[1], 112)),
    "DSH326": (MANUAL, _truncate_after(114)),
    "DSH327": (MANUAL, _owner(1)),
}


def test_compaction_logs_are_clean():
    assert validate(MANUAL) == []
    assert validate(AUTO) == []


@pytest.mark.parametrize("rule", sorted(COMPACTION))
def test_compaction_mutation_breaks_only_its_rule(rule, tmp_path):
    path, mutate = COMPACTION[rule]
    log = read(path)
    mutate(log)
    findings = validate(write(tmp_path, log))
    assert rules_of(findings) == {rule}
    assert {f.severity for f in findings} == {RULES[rule].severity}


def test_compaction_findings_text(tmp_path):
    log = read(MANUAL)
    log[1][113]["data"]["shadowedRange"] = {"start": 7, "end": 96}
    path = write(tmp_path, log)
    assert [(f.rule, f.seq, f.message) for f in validate(path)] == [
        ("DSH321", 113, 'shadowedRange {"start":7,"end":96} must be the first and last of a non-empty '
                        "shadowedSeqs [7,8,22,29,42,44,60,67,77,84,96,98]"),
        ("DSH321", 114, 'replace range {"start":7,"end":98} is not the compaction/summary shadowedRange '
                        '{"start":7,"end":96}')]


def test_bracket_overlap_and_orphan_checkpoint(tmp_path):
    log = read(MANUAL)
    _insert(113, {**copy.deepcopy(log[1][112]), "data": {"compactionId": "c2", "turn": None}})(log)
    findings = validate(write(tmp_path, log))
    assert [(f.rule, f.seq) for f in findings] == [("DSH325", 113), ("DSH325", 114), ("DSH325", 115),
                                                   ("DSH325", 116)]
    assert findings[0].message == ('compaction/start while compaction "87867474-e5f9-47cb-8936-12fb947893bb" '
                                   "(seq 112) has no compaction/end")


def test_prune_at_log_end(tmp_path):
    log = read(AUTO)
    del log[1][47:]
    assert [(f.rule, f.message) for f in validate(write(tmp_path, log))] == [
        ("DSH407", "log ends inside open turn 2"),
        ("DSH323", "the log ends right after the compaction/prune at seq 46; its surface replace is missing")]


def test_compaction_in_v4_log(tmp_path):
    header, events = migrate_events(*read(MANUAL), 4)
    assert validate(write(tmp_path, (header, events), name="session.v4.jsonl")) == []
    summary = next(e for e in events if e["type"] == "compaction/summary")
    replace = events[summary["seq"] + 1]
    assert replace["data"]["source"]["kind"] == "compact-checkpoint"
    replace["data"]["source"]["compactionId"] = "other"
    findings = validate(write(tmp_path, (header, events), name="session.v4.jsonl"))
    assert [(f.rule, f.seq) for f in findings] == [("DSH322", replace["seq"]), ("DSH325", replace["seq"])]


# -- v2+ streams ----------------------------------------------------------------------------------

V2_MESSAGE = 13  # assistant/message of turn 1 step 1 in the migrated b-tools log
# its stream: 0 block-start 0 (reasoning), 1-2 reasoning-delta 0, 3 block-start 1 (text), 4-5 text-delta 1,
# 6 block-start 2 (tool-call), 7-10 tool-call-delta 2, 11-13 block-end 0/1/2, 14 usage, 15 finish


def read_v2() -> Log:
    return migrate_events(*read(BASE), 2)


def _stream(log: Log) -> list[dict[str, Any]]:
    stream: list[dict[str, Any]] = log[1][V2_MESSAGE]["data"]["stream"]
    return stream


def _raw(chunk: dict[str, Any]) -> dict[str, Any]:
    return {"type": "chunk", "time": 1, "chunk": chunk}


def _put(pos: int, chunk: dict[str, Any]) -> Callable[[Log], None]:
    return lambda log: _stream(log).insert(pos, _raw(chunk))


def _drop(pos: int) -> Callable[[Log], None]:
    return lambda log: _stream(log).pop(pos)


def _repeat(pos: int) -> Callable[[Log], None]:
    return lambda log: _stream(log).insert(pos, copy.deepcopy(_stream(log)[pos]))


def _pack_text(log: Log) -> None:
    """Replace the two text deltas (records 4-5) by the packed run DSH writes for them."""
    stream = _stream(log)
    first, second = stream[4], stream[5]
    run = {"type": "text-chunks", "time0": first["time"], "index": 1, "dt": [second["time"] - first["time"]],
           "texts": [first["chunk"]["text"], second["chunk"]["text"]]}
    stream[4:6] = [run]


def _bad_run(log: Log) -> None:
    _pack_text(log)
    _stream(log)[4]["dt"] = []


# rule -> mutation of the v2 b-tools log that breaks that rule and no other.
STREAM: dict[str, Callable[[Log], None]] = {
    "DSH109": _bad_run,
    "DSH420": _put(1, {"type": "block-start", "index": 0, "blockType": "reasoning"}),
    "DSH421": _put(1, {"type": "text-delta", "index": 7, "text": "x"}),
    "DSH422": _put(1, {"type": "block-end", "index": 9, "block": {"type": "text", "text": ""}}),
    "DSH423": _repeat(14),
    "DSH424": lambda log: _stream(log).append(copy.deepcopy(_stream(log)[15])),
    "DSH425": _drop(15),
    "DSH426": _drop(13),
}


def test_v2_log_is_clean(tmp_path):
    log = read_v2()
    assert [r["type"] for r in _stream(log)] == ["chunk"] * 16
    assert validate(write(tmp_path, log, name="session.v2.jsonl")) == []
    _pack_text(log)
    assert validate(write(tmp_path, log, name="session.v2.jsonl")) == []


@pytest.mark.parametrize("rule", sorted(STREAM))
def test_v2_stream_mutation_breaks_only_its_rule(rule, tmp_path):
    log = read_v2()
    STREAM[rule](log)
    findings = validate(write(tmp_path, log, name="session.v2.jsonl"))
    assert rules_of(findings) == {rule}
    assert {f.seq for f in findings} == {V2_MESSAGE}


def test_v2_stream_record_messages(tmp_path):
    log = read_v2()
    _bad_run(log)
    stream = _stream(log)
    stream[0] = {**stream[0], "seq": 3}
    stream.append({"type": "usage-chunks"})
    findings = validate(write(tmp_path, log, name="session.v2.jsonl"))
    prefix = "assistant/message stream record"
    assert [(f.rule, f.message) for f in findings] == [
        ("DSH109", f"{prefix} 0: a raw record is exactly {{type, time, chunk}} with a safe-integer time and an "
                   "object chunk"),
        ("DSH421", "reasoning-delta at index 0 needs an open reasoning block, but no block is open there"),
        ("DSH109", f"{prefix} 4: malformed text-chunks stream record: dt length 0 does not match 2 members"),
        ("DSH422", "block-end index 0 has no open block"),
        ("DSH109", f'{prefix} 15: unsupported stream record type "usage-chunks"')]


def test_v2_attempt_records(tmp_path):
    log = read_v2()
    failed = {"type": "assistant/attempt", "time": 1, "data": {"turn": 1, "step": 1, "stream": [
        _raw({"type": "block-start", "index": 0, "blockType": "reasoning"}),
        _raw({"type": "finish", "reason": {"kind": "error"}})]}}
    insert(log[1], V2_MESSAGE, failed)
    assert validate(write(tmp_path, log, name="session.v2.jsonl")) == []
    log[1][V2_MESSAGE]["data"]["stream"][1]["chunk"]["reason"]["kind"] = "stop"
    assert [(f.rule, f.seq) for f in validate(write(tmp_path, log, name="session.v2.jsonl"))] == [
        ("DSH426", V2_MESSAGE), ("DSH424", V2_MESSAGE + 1)]
    del log[1][V2_MESSAGE]["data"]["stream"][1]
    log[1][V2_MESSAGE]["data"]["step"] = 2
    assert [(f.rule, f.seq) for f in validate(write(tmp_path, log, name="session.v2.jsonl"))] == [
        ("DSH405", V2_MESSAGE), ("DSH425", V2_MESSAGE)]  # the attempt record ends its unfinished stream


def test_end_seed_makes_an_unclosed_bracket_stale(tmp_path):
    log = read(MANUAL)
    _truncate_after(114)(log)
    log[1].append({"type": "session/end-seed", "seq": 115, "time": 1, "data": {}})
    assert validate(write(tmp_path, log)) == []
