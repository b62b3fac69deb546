"""Rule selection runs only the checks it needs, and finds exactly what every rule finds (issue 11,
session 32): ``validate --rule`` used to run every rule and filter. A validator now reads only the
header line when every rule it reports is the header's, admits no event when they are all the
physical pass's, and runs the trace and the compaction fold only for their own rules; so each
rule's breaking log is checked with that rule alone, and logs with many findings with each rule
alone and with each family.

Also: another agent's log is known from its DSH202 finding (``Finding.foreign``), so the CLI refuses
it without reading the file again; an event released after a damaged record is hashed for the
fork-lineage check as JSON.stringify writes it (no orjson call a huge event could crash).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from _cli import invoke
from _golden import CORPUS
from dsh_audit.cli import _validate as cli_validate
from dsh_audit.log import iter_lines
from dsh_audit.validate import RULES, Finding, LineValidator, select_rules, validate, validate_paths
from dsh_audit.validate._engine import SeedChain
from dsh_audit.validate._source import RawEvent
from test_validate import (BASE, CHILD, MUTATIONS, PARENT, PHYSICAL, _insert_line, _raw, dump, read, rules_of,
                           write)
from test_validate_compaction import COMPACTION, STREAM, read_v2

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")

DATA = Path(__file__).resolve().parent / "data" / "importers"
CLAUDE = DATA / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"

#: families that each need one check or a few: the header's, the physical pass's, the admission's,
#: the trace's, the compaction fold's, and the lineage rules (header, trace and cross-log)
FAMILIES = [["DSH20", "DSH21"], ["DSH101", "DSH104", "DSH105", "DSH106", "DSH107", "DSH108"], ["DSH5"],
            ["DSH30"], ["DSH4"], ["DSH7"], ["DSH32"], ["DSH6"], ["DSH1"], ["DSH2"], ["DSH3"]]


def _breaking(rule: str, tmp_path: Path) -> list[Path]:
    """The log (or the logs, child first) that breaks ``rule``, as the rule's own test builds it."""
    if rule in MUTATIONS:
        log = read(BASE)
        MUTATIONS[rule](log)
        return [write(tmp_path, log)]
    if rule in PHYSICAL:
        return [PHYSICAL[rule](tmp_path)]
    if rule in COMPACTION:
        source, mutate = COMPACTION[rule]
        log = read(source)
        mutate(log)
        return [write(tmp_path, log)]
    if rule in STREAM:
        log = read_v2()
        STREAM[rule](log)
        return [write(tmp_path, log, name="session.v2.jsonl")]
    header, events = read(CHILD)
    if rule == "DSH602":
        header["seedLength"] = 40
        return [write(tmp_path, (header, events))]
    assert rule == "DSH603"
    events[12]["time"] += 1
    return [write(tmp_path, (header, events)), PARENT]


def _validated(paths: list[Path], rules: list[str] | None = None, **options: Any) -> list[Finding]:
    if len(paths) > 1:
        return validate_paths(paths, rules=rules, **options)
    return validate(paths[0], rules=rules, **options)


def test_each_rule_alone_finds_what_every_rule_finds(tmp_path: Path) -> None:
    for number, rule in enumerate(sorted(RULES)):
        folder = tmp_path / str(number)
        folder.mkdir()
        paths = _breaking(rule, folder)
        options = {"max_version": 0} if rule == "DSH204" else {}
        every = _validated(paths, **options)
        alone = _validated(paths, [rule], **options)
        assert alone and alone == [f for f in every if f.rule == rule], rule


def _many_findings(tmp_path: Path) -> list[Path]:
    """Logs that break rules of every check at once: header, physical, admission, trace, compaction."""
    log = read(BASE)
    for rule in ("DSH215", "DSH110", "DSH301", "DSH503", "DSH704", "DSH402", "DSH601"):
        MUTATIONS[rule](log)
    log[1].pop(60)  # a seq gap
    text = write(tmp_path, log).read_text(encoding="utf-8")
    damaged = _raw(tmp_path, _insert_line(_insert_line(text, 40, "not json").decode(), 20, dump(
        {"type": "text-chunks", "seq0": 5, "time0": 1,
         "data": {"turn": 1, "step": 1, "index": 1, "dt": [0, 0], "texts": ["a", "b"]}})))  # a broken row
    source, mutate = COMPACTION["DSH321"]
    compacted = read(source)
    mutate(compacted)
    compacted[1][5]["meta"] = {}  # an admission rule
    compacted[1].pop()  # the turn/end: a trace rule
    compacted[0]["sandboxMode"] = "x"
    (tmp_path / "compaction").mkdir()
    return [damaged, write(tmp_path / "compaction", compacted)]


def test_every_selection_finds_what_every_rule_finds_on_logs_of_many_findings(tmp_path: Path) -> None:
    damaged, compacted = _many_findings(tmp_path)
    for path, expected in ((damaged, {"DSH104", "DSH105", "DSH107", "DSH110", "DSH215", "DSH301", "DSH310",
                                      "DSH402", "DSH421", "DSH422", "DSH503", "DSH601", "DSH704"}),
                           (compacted, {"DSH110", "DSH215", "DSH321", "DSH407"})):
        every = validate(path)
        assert rules_of(every) == expected
        for rules in [[rule] for rule in sorted(RULES)] + FAMILIES:
            chosen = select_rules(rules, None)
            assert validate(path, rules=rules) == [f for f in every if f.rule in chosen], rules
        ignored = select_rules(None, ["DSH4", "DSH6"])
        assert validate(path, ignore=["DSH4", "DSH6"]) == [f for f in every if f.rule in ignored]


def test_header_rules_alone_read_the_header_line_only(tmp_path: Path) -> None:
    header = dump({**read(BASE)[0], "sandboxMode": "x"})
    path = _raw(tmp_path, header.encode() + b"\n\xff not even UTF-8\n")
    with path.open("rb") as stream:
        first = next(iter_lines(stream, str(path), []))
    checker = LineValidator(path, rules=["DSH20", "DSH21", "DSH601"])
    assert (checker.feed(first), checker.complete) == (False, True)  # the rest is not wanted
    assert [(f.rule, f.line) for f in checker.finish()] == [("DSH215", 1)]
    assert [(f.rule, f.line) for f in validate(path)] == [("DSH215", 1), ("DSH102", 2)]
    assert [(f.rule, f.line) for f in validate(path, rules=["DSH10"])] == [("DSH102", 2)]


def test_a_foreign_log_is_known_from_its_finding_not_read_again(tmp_path: Path, monkeypatch, capsys) -> None:
    log = tmp_path / "claude.jsonl"
    log.write_bytes(CLAUDE.read_bytes())
    (finding,) = validate(log)
    assert (finding.rule, finding.line, finding.foreign) == ("DSH202", 1, "claude-code")
    assert "foreign" not in finding.to_json()
    header, events = read(BASE)
    not_session = write(tmp_path, ({**header, "type": "sess"}, events))
    assert [(f.rule, f.foreign) for f in validate(not_session)] == [("DSH202", None)]  # a DSH log's DSH202
    checked = cli_validate.validate_paths

    def then_removed(paths: list[str], **options: Any) -> list[Finding]:
        found = checked(paths, **options)
        for path in paths:
            os.remove(path)  # what the command reads after validation would be missing now
        return found

    monkeypatch.setattr(cli_validate, "validate_paths", then_removed)
    code, out, err = invoke(monkeypatch, capsys, "validate", str(log), str(not_session), "--rule", "DSH207")
    assert (code, out) == (2, "")
    assert err == [f"error: {log}:1: {finding.message} (hint: {finding.hint})",
                   "0 error(s), 0 warning(s), 0 info in 1 file(s)"]  # the DSH log's DSH202 was not chosen


def _chain(events: list[tuple[int, dict[str, Any]]]) -> bytes:
    chain = SeedChain()
    for line, value in events:
        chain.add(RawEvent(line, value), None)  # released after its line: hashed as its JSON
    return bytes(chain.links)


def test_an_event_released_late_is_chained_as_json_stringify_writes_it() -> None:
    odd = {"type": "x", "seq": 0, "time": 1, "data": {"text": "\ud800", "big": 2**70, "one": 1.0, "inf": float("inf")}}
    same = {"type": "x", "seq": 0, "time": 1, "data": {"text": "\ud800", "big": 2**70, "one": 1, "inf": None}}
    other = {**odd, "data": {**odd["data"], "text": "\ud801"}}
    assert len(_chain([(3, odd)])) == 8
    assert _chain([(3, odd)]) == _chain([(5, same)])  # JSON.stringify writes both alike
    assert _chain([(3, odd)]) != _chain([(3, other)])


def test_a_late_released_seed_event_differing_from_the_parent_is_still_found(tmp_path: Path) -> None:
    header, events = read(CHILD)
    text = write(tmp_path, (header, events)).read_text(encoding="utf-8")
    damaged = _insert_line(text, 5, "not json")  # events 4.. are held, then released by the turn/end
    child = _raw(tmp_path, damaged)
    assert [(f.rule, f.seq) for f in validate_paths([child, PARENT])] == [("DSH104", 4)]
    changed = read(CHILD)
    changed[1][6]["time"] += 1
    (tmp_path / "changed").mkdir()
    text = write(tmp_path / "changed", changed).read_text(encoding="utf-8")
    child = _raw(tmp_path / "changed", _insert_line(text, 5, "not json"))
    assert [(f.rule, f.seq) for f in validate_paths([child, PARENT])] == [("DSH104", 4), ("DSH603", 6)]

