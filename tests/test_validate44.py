"""Session 44: validate for DSH port authors, over one hand-made log written as v0-v4.

Each case is a fault a port's writer makes (an unknown or misspelt header key, a v4 tool-call
relationship fault, a lineage hint, a quoted version, a turn/end refused for its reason) and the
exact findings (rule, severity, line, seq, message, hint) it gives in each version: what upstream
refuses from some version on is an error from that version, before it what rc.8 does with it.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from dsh_audit.testing._migrate import migrate_events
from dsh_audit.validate import RULES, validate
from dsh_audit.validate._header import _nearest

Log = tuple[dict[str, Any], list[dict[str, Any]]]

_SRC = {"kind": "model", "provider": "deepseek", "model": "deepseek-chat"}
_CALL = {"type": "tool-call", "id": "c1", "name": "bash", "arguments": '{"command":"ls"}'}


def _event(etype: str, data: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": etype, "time": 1800000000001, "data": data, **extra}


def _v0() -> Log:
    """A v0 log of one turn: a tool call and its result, then the answer."""
    header = {"type": "session", "version": 0, "id": "s44", "createdAt": 1800000000000, "cwd": "/w",
              "delegationDepth": 0}
    tool_result = {"id": "r1", "role": "user", "source": {"kind": "tool", "callId": "c1"},
                   "content": [{"type": "tool-result", "toolCallId": "c1", "content": [{"type": "text", "text": "a"}]}]}
    events = [
        _event("turn/start", {"turn": 1}),
        _event("request/header", {"header": {"config": {"provider": "deepseek", "model": "deepseek-chat"}},
                                   "reason": "initial"}),
        _event("user/message", {"id": "u1", "role": "user", "source": {"kind": "user"},
                                "content": [{"type": "text", "text": "hi"}]}, surfaceOp="append"),
        _event("step/start", {"turn": 1, "step": 1}),
        _event("assistant/message", {"turn": 1, "step": 1, "message": {"id": "m1", "role": "assistant",
                                                                       "content": [_CALL], "source": _SRC}},
               surfaceOp="append"),
        _event("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": '{"command":"ls"}'}),
        _event("tool/result", {"turn": 1, "step": 1, "message": tool_result}, surfaceOp="append",
               sourceEventSeqs=[5]),
        _event("step/end", {"turn": 1, "step": 1}),
        _event("step/start", {"turn": 1, "step": 2}),
        _event("assistant/message", {"turn": 1, "step": 2, "message": {
            "id": "m2", "role": "assistant", "content": [{"type": "text", "text": "done"}], "source": _SRC}},
               surfaceOp="append"),
        _event("step/end", {"turn": 1, "step": 2}),
        _event("turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
        _event("turn/start", {"turn": 2}),
        _event("turn/end", {"turn": 2, "reason": {"kind": "completed"}}),
    ]
    for seq, event in enumerate(events):
        event["seq"] = seq
    return header, events


def _write(tmp_path: Path, version: int, edit: Callable[[Log], None] | None = None) -> Path:
    """The hand-made log as ``version`` (``edit`` applied to the migrated log), in its file name."""
    header, events = migrate_events(*copy.deepcopy(_v0()), version) if version else copy.deepcopy(_v0())
    if edit is not None:
        edit((header, events))
    path = tmp_path / ("session.jsonl" if version == 0 else f"session.v{version}.jsonl")
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in [header, *events]))
    return path


def _typed(log: Log, etype: str, n: int = 0) -> dict[str, Any]:
    """The ``n``-th event of type ``etype``."""
    return [e for e in log[1] if e["type"] == etype][n]


def _header(**fields: Any) -> Callable[[Log], None]:
    return lambda log: log[0].update(fields)


def _quoted_version(log: Log) -> None:
    log[0]["version"] = str(log[0]["version"])


def _call_twice(log: Log) -> None:
    """A second tool/call of c1 right after the first: every later seq moves up one."""
    call = _typed(log, "tool/call")
    at = log[1].index(call)
    log[1].insert(at + 1, copy.deepcopy(call))
    for seq, event in enumerate(log[1]):
        event["seq"] = seq
    result = _typed(log, "tool/result")
    result["sourceEventSeqs"] = [call["seq"]]


def _wrong_call_id(log: Log) -> None:
    message = _typed(log, "tool/result")["data"]["message"]
    message["source"]["callId"] = "c9"
    for block in message["content"]:
        block["toolCallId"] = "c9"
    if "toolCallId" in message:
        message["toolCallId"] = "c9"


def _unstarted(log: Log) -> None:
    """The tool/call removed, its result kept as a plain one, citing nothing: the seqs close up."""
    log[1].remove(_typed(log, "tool/call"))
    for seq, event in enumerate(log[1]):
        event["seq"] = seq
    _typed(log, "tool/result").pop("sourceEventSeqs")


def _not_started(log: Log) -> None:
    """The tool/call removed and its result the TOOL_NOT_STARTED repair (a fork seed's)."""
    _unstarted(log)
    result = _typed(log, "tool/result")
    result["data"]["error"] = {"name": "ToolNotStarted", "code": "TOOL_NOT_STARTED"}
    message = result["data"]["message"]
    (message if "toolCallId" in message else message["content"][0])["isError"] = True


def _not_started_then_unlogged(log: Log) -> None:
    """The TOOL_NOT_STARTED repair of "c1" in step 1, then "c1" advertised again in step 2 with a plain
    result and no tool/call: the repair resolves its own step only (review B 45: ``not_started`` cleared)."""
    plain = copy.deepcopy(_typed(log, "tool/result"))
    _not_started(log)
    plain.pop("sourceEventSeqs")
    plain["data"]["step"], plain["data"]["message"]["id"] = 2, "r2"
    first, second = _typed(log, "assistant/message"), _typed(log, "assistant/message", 1)
    second["data"]["message"]["content"] = copy.deepcopy(first["data"]["message"]["content"])
    log[1].insert(log[1].index(second) + 1, plain)
    for seq, event in enumerate(log[1]):
        event["seq"] = seq


def _unadvertised(log: Log) -> None:
    _typed(log, "assistant/message")["data"]["message"]["content"] = [{"type": "text", "text": "x"}]


def _no_reason(log: Log) -> None:
    del _typed(log, "turn/end")["data"]["reason"]


def _seq(log_version: int, v0_seq: int) -> int:
    """An event's seq as the migration writes it (v3+ insert the system/message head after the first step/start)."""
    return v0_seq + (1 if log_version >= 3 and v0_seq > 3 else 0)


_HINT_KEY = "spell the key as its version does, or drop it"
_V2_LINEAGE = ("write parentSession, origin and delegationDepth together; a v2+ header says isSeeded, never "
               "seedLength")
_V0_LINEAGE = "write parentSession, seedLength, origin and delegationDepth together"


def _expected(case: str, v: int) -> list[tuple[str, str, int | None, int | None, str, str | None]]:
    """(rule, severity, line, seq, message, hint) of each finding of ``case`` in a v``v`` log."""
    refused = "error" if v >= 2 else "warning"  # a header key outside the version's
    v4 = "error" if v == 4 else "warning"  # a tool-call relationship fault
    name = "session.jsonl" if v == 0 else f"session.v{v}.jsonl"
    dev = [("DSH217", "info", 1, None, "log format v1 was written only by development builds, never by a release: "
            "DSH 0.1.0-rc.8 reads only v0 and refuses this log", None)] if v == 1 else []
    if case == "typo":
        return [*dev, ("DSH218", refused, 1, None,
                       f'header key "orgin" is not a v{v} header key (did you mean origin?)', _HINT_KEY)]
    if case == "manykeys":  # the first three alone (their near keys), the rest counted in one
        return [*dev, *[("DSH218", refused, 1, None, f'header key "k{i}" is not a v{v} header key', _HINT_KEY)
                        for i in range(3)],
                ("DSH218", refused, 1, None, f'header keys "k3", "k4", "k5" and 2 more are not v{v} header keys '
                 "either", _HINT_KEY)]
    if case == "isseeded":
        if v >= 2:  # its own key: nothing to say
            return [*dev]
        return [*dev, ("DSH218", "warning", 1, None, f'header key "isSeeded" is not a v{v} header key (isSeeded is '
                       "a v2+ key; a v0/v1 child writes seedLength)", _HINT_KEY)]
    if case == "lineage":
        return [*dev, ("DSH601", "warning", 1, None, "subagent header needs parentSession and delegationDepth >= 1 "
                       "(no parentSession, delegationDepth 0)", _V2_LINEAGE if v >= 2 else None)]
    if case == "quoted":
        hint = None if v == 0 else (f'write "version": {v}, a JSON number: the generation the file name {name} '
                                    f"says (its body is checked as v{v})")
        return [("DSH203", "error", 1, None, f'header version "{v}" is not a number', hint)]
    if case == "twice":
        return [*dev, ("DSH416", v4, _seq(v, 6) + 2, _seq(v, 6), 'tool/call "c1" starts again the call started at '
                       f"seq {_seq(v, 5)}: a call is started once", None)]
    if case == "wrongid":
        return [*dev, ("DSH410", v4, _seq(v, 6) + 2, _seq(v, 6), 'tool/result for "c9" with no prior tool/call in '
                       "this step", None),
                ("DSH412", v4, _seq(v, 7) + 2, _seq(v, 7), 'tool call "c1" of the step\'s assistant message has no '
                 "tool/result", None)]
    if case == "unreleased":  # the body read as the file name's version: no finding of another's vocabulary
        return [("DSH205", "error", 1, None, "log format v1.5 is not a released version", None)]
    if case == "notstarted":  # resolved without a start: v4 reads it, a warning in every version
        return [*dev, ("DSH411", "warning", _seq(v, 7) + 1, _seq(v, 7) - 1, 'tool call "c1" of the step\'s assistant '
                       "message has no tool/call", None)]
    if case == "notstarted-then-unlogged":  # the first step's repair resolves nothing in the second: an error in v4
        return [*_expected("notstarted", v),
                ("DSH410", v4, _seq(v, 9) + 2, _seq(v, 9), 'tool/result for "c1" with no prior tool/call in this step',
                 None),
                ("DSH411", v4, _seq(v, 10) + 2, _seq(v, 10), 'tool call "c1" of the step\'s assistant message has no '
                 "tool/call", None)]
    if case == "unstarted":  # any other result DSH refuses: it resolves nothing, an error in v4
        return [*dev, ("DSH410", v4, _seq(v, 6) + 1, _seq(v, 6) - 1, 'tool/result for "c1" with no prior tool/call '
                       "in this step", None),
                ("DSH411", v4, _seq(v, 7) + 1, _seq(v, 7) - 1, 'tool call "c1" of the step\'s assistant message has '
                 "no tool/call", None)]
    if case == "unadvertised":
        return [*dev, ("DSH414", v4, _seq(v, 5) + 2, _seq(v, 5), 'tool/call "c1" is not a tool-call block of the '
                       "step's assistant message", None)]
    if case == "oddreason":  # rc.8 passes any other kind through (coordinator.ts migrateLegacyTurnEndEvent)
        return [*dev]
    assert case == "noreason"
    return [*dev, ("DSH504", "error", _seq(v, 11) + 2, _seq(v, 11), 'session "s44" contains malformed '
                   f"pre-react-loop turn/end at seq {_seq(v, 11)}", "write the current shape")]


_CASES: dict[str, Callable[[Log], None]] = {
    "typo": _header(orgin="subagent"),
    "isseeded": _header(isSeeded=False),
    "manykeys": _header(**{f"k{i}": i for i in range(8)}),
    "lineage": _header(origin="subagent"),
    "quoted": _quoted_version,
    "twice": _call_twice,
    "wrongid": _wrong_call_id,
    "noreason": _no_reason,
    "unreleased": _header(version=1.5),
    "oddreason": lambda log: _typed(log, "turn/end")["data"].update(reason={"kind": "finished"}),
    "notstarted": _not_started,
    "notstarted-then-unlogged": _not_started_then_unlogged,
    "unstarted": _unstarted,
    "unadvertised": _unadvertised,
}


@pytest.mark.parametrize("version", range(5))
@pytest.mark.parametrize("case", [None, *_CASES])
def test_port_faults_by_version(tmp_path: Path, case: str | None, version: int) -> None:
    path = _write(tmp_path, version, _CASES[case] if case else None)
    got = [(f.rule, f.severity, f.line, f.seq, f.message, f.hint) for f in validate(path)]
    if case is None:
        assert [g for g in got if g[0] != "DSH217"] == []
        return
    want = [(r, s, ln, sq, m, h if h is not None else RULES[r].hint) for r, s, ln, sq, m, h in _expected(case, version)]
    assert got == want


# field: (the event it is set on, its rule whatever JSON type the value has; a null surfaceOp's rule)
_ENVELOPE = {"type": ("turn/start", "DSH112"), "seq": ("turn/start", "DSH111"), "time": ("turn/start", "DSH111"),
             "data": ("user/message", "DSH120"), "surfaceOp": ("user/message", "DSH303")}
_KINDS = {"object": {"a": 1}, "array": [1], "number": 1.5, "bool": True, "null": None}


@pytest.mark.parametrize("kind", sorted(_KINDS))
@pytest.mark.parametrize("field", sorted(_ENVELOPE))
def test_a_mistyped_record_field_is_a_finding_never_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str], field: str,
                                                            kind: str) -> None:
    """Re-read C, finding 1: a v2+ record whose "type" was an object crashed validate and check
    (exit 3, an unhashable type looked up among the body cues): each envelope field of each JSON
    type is one error finding on its line, in v0 and v4, and check fails the log (exit 1)."""
    etype, rule = _ENVELOPE[field]
    rule = "DSH302" if (field, kind) == ("surfaceOp", "null") else rule
    for version in (0, 4):
        path = _write(tmp_path, version, lambda log: _typed(log, etype).update({field: _KINDS[kind]}))
        line = 2 if etype == "turn/start" else 4
        got = [(f.rule, f.severity) for f in validate(path) if f.line == line]
        assert got == [(rule, "error")], version
        for command in ("validate", "check"):
            assert invoke(monkeypatch, capsys, command, str(path))[0] == 1, (version, command)


def _no_version(log: Log) -> None:
    del log[0]["version"]


def test_many_unknown_keys_are_named_three_and_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Re-read C, finding 3: the reader named every unknown key (20,000 keys: check printed 1 MB)."""
    path = _write(tmp_path, 4, _header(**{f"k{i}": i for i in range(20000)}))
    assert invoke(monkeypatch, capsys, "requests", str(path)) == (2, "", [
        f"error: {path}:1: corrupt session log: first line is not a session header of v4: unknown keys \"k0\", "
        '"k1", "k2" and 19997 more (a v4 header has exact keys); DSH 0.1.0-rc.8, which reads only v0, refuses it '
        'as: session "s44" uses log format v4, but this harness reads only v0: the log was written by a newer '
        'harness (hint: a v4 header needs type "session", version, a string id, integer createdAt and '
        "delegationDepth, a boolean isSeeded and no seedLength; `dsh-audit validate FILE` lists every header field "
        "DSH refuses (DSH218); nor is it a session the claude-code or codex importer recognises)"])
    code, out, err = invoke(monkeypatch, capsys, "check", str(path))
    assert (code, err, len(out) < 2000) == (1, [], True)


_V4_NO_VERSION = ('write "version": 4, a JSON number: the generation the file name says; --lenient fills a missing '
                  "version of a v0 log (session.jsonl) only")


@pytest.mark.parametrize("lenient", [[], ["--lenient"]])
def test_a_versionless_header_is_read_alike_under_lenient(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str], lenient: list[str]) -> None:
    """Re-read C, finding 2: validate --lenient took session.v4.jsonl's version from its name (exit 0)
    while requests --lenient filled 0 and refused the v4 body; plain requests hinted --lenient. One
    rule now: --lenient fills a v0 log's missing version only, so both refuse and neither hints it."""
    path = _write(tmp_path, 4, _no_version)
    assert invoke(monkeypatch, capsys, "requests", *lenient, str(path)) == (2, "", [
        f"error: {path}:1: corrupt session log: first line is not a session header: no version (hint: "
        f"{_V4_NO_VERSION}; nor is it a session the claude-code or codex importer recognises)"])
    got = [(f.rule, f.severity, f.hint) for f in validate(path, lenient=bool(lenient))]
    assert got == [("DSH203", "error", 'write "version": 4, a JSON number: the generation the file name '
                    "session.v4.jsonl says (its body is checked as v4)")]
    v0 = _write(tmp_path, 0, _no_version)  # a v0 log: --lenient fills it, validate warns
    assert invoke(monkeypatch, capsys, "requests", "--json", *lenient, str(v0))[0] == (0 if lenient else 2)
    assert [(f.rule, f.severity) for f in validate(v0, lenient=bool(lenient))] == [
        ("DSH203", "warning" if lenient else "error")]


@pytest.mark.parametrize("meta", [{}, {"parentSession": []}, {"seedLength": -1}])
def test_lenient_accepts_a_relative_cwd_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str], meta: dict[str, Any]) -> None:
    """Re-read C, finding 5: --lenient dropped the header's whole metadata check when its first
    fault was a relative cwd, so a bad parentSession or seedLength after it was read silently."""
    path = _write(tmp_path, 0, _header(cwd="rel", **meta))
    code, out, err = invoke(monkeypatch, capsys, "requests", "--json", "--lenient", str(path))
    if not meta:
        assert (code, err) == (0, [])
        plain = invoke(monkeypatch, capsys, "requests", "--json", str(path))[2][0]
        assert plain.endswith('got "rel" (hint: tokenised test fixtures need --lenient)')
        return
    # re-read E: plain `requests` offers --lenient only when --lenient would accept the header
    plain = invoke(monkeypatch, capsys, "requests", "--json", str(path))[2][0]
    assert plain.endswith("(hint: `dsh-audit validate FILE` names the header field (DSH212-DSH214); --lenient "
                          "accepts only a relative cwd)")
    field = "parentSession must be a string" if "parentSession" in meta else "seedLength must be a non-negative safe integer"
    assert (code, out, err) == (2, "", [f'error: {path}:1: stored session "s44" failed validation: session header '
                                        f"{field} (hint: `dsh-audit validate FILE` names the header field "
                                        "(DSH212-DSH214); --lenient accepts only a relative cwd)"])


#: Re-read E, findings 1 and 3: a header, turn/start seq 0, five ``{}`` lines, turn/end seq 1.
_BRACE5 = ('{"type":"session","version":0,"id":"s","createdAt":1800000000000,"cwd":"/x","delegationDepth":0}\n'
           '{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\n' + "{}\n" * 5 +
           '{"type":"turn/end","seq":1,"time":1,"data":{"turn":1,"reason":"done"}}\n')


def test_a_folded_run_loses_no_line_to_check_or_sarif(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The refusal's line (3) stays a finding alone, so ``check`` dropping it as the refusal's twin
    keeps lines 4-7 (they were folded into it and lost); SARIF marks the folded run's every line."""
    path = tmp_path / "session.jsonl"
    path.write_text(_BRACE5)
    from dsh_audit.cli import _logs
    guarded: list[tuple[str, ...]] = []  # review B 45: the logs found again only to guard a --sarif output
    monkeypatch.setattr(_logs, "evidence_logs", lambda paths: guarded.append(tuple(paths)) or [path])
    code, out, _err = invoke(monkeypatch, capsys, "validate", "--json", str(path))
    found = [json.loads(line) for line in out.splitlines()[:-1]]
    assert code == 1 and guarded == []
    assert [(f["rule"], f["line"], f["seq"], f["message"]) for f in found] == [
        ("DSH407", 2, 0, "log ends inside open turn 1"), ("DSH111", 3, 1, "event has no seq"),
        ("DSH111", 4, 2, "event has no seq (and so do the 3 line(s) after it)"),
        ("DSH108", 8, 1, "seq 1 repeats or goes backwards (expected 6)")]
    assert json.loads(out.splitlines()[-1]) == {  # every line counted, as before the fold
        "type": "summary", "passed": False, "counts": {"error": 6, "warning": 0, "info": 1}, "files": 1,
        "rules": {"DSH108": 1, "DSH111": 5, "DSH407": 1}}
    sarif = tmp_path / "out.sarif"
    assert invoke(monkeypatch, capsys, "validate", "--sarif", str(sarif), str(path))[0] == 1 and guarded == [
        (str(path),)]
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    assert [r["locations"][0]["physicalLocation"]["region"] for r in results] == [
        {"startLine": 2}, {"startLine": 3}, {"startLine": 4, "endLine": 7}, {"startLine": 8}]
    code, out, _err = invoke(monkeypatch, capsys, "check", "--json-report", "-", str(path))
    report = json.loads(out)
    assert [(f["rule"], f["line"], f["seq"]) for s in report["sessions"] for f in s["findings"]] == [
        ("DSH801", 3, 1), ("DSH407", 2, 0), ("DSH111", 4, 2), ("DSH108", 8, 1)]


def _tool_table(name: str) -> str:
    from dsh_audit._pyproject import tool_table
    from dsh_audit.errors import UsageError
    try:
        return repr(tool_table({"tool": {name: {}}}, source="p"))
    except UsageError as exc:
        return exc.message


def _rule(wanted: str) -> str:
    from dsh_audit.errors import UsageError
    from dsh_audit.validate import select_rules
    with pytest.raises(UsageError) as caught:
        select_rules([wanted], None)
    return caught.value.message


@pytest.mark.parametrize(("ask", "word", "said"), [
    # [tool.*] at 0.75: "dsh-aux" scores 0.75, "dsh-aud-xx" 0.737 (difflib's default cutoff, 0.6, would name it)
    (_tool_table, "dsh-aux", "[tool.dsh-aux] is not read: dsh-audit's table is [tool.dsh-audit]"),
    (_tool_table, "dsh-aud-xx", "None"),
    # a header key at 0.8: "orig" scores 0.8 against origin, "createdXY" 0.778 against createdAt
    (lambda word: _nearest(word, 4), "orig", " (did you mean origin?)"),
    (lambda word: _nearest(word, 4), "createdXY", ""),
    # a rule id at 0.9: "DSH4110" scores 0.923 against DSH411, "DSH41100" 0.857
    (_rule, "DSH4110", "--rule: 'DSH4110' is not a rule id (did you mean 'DSH411'?)"),
    (_rule, "DSH41100", "--rule: 'DSH41100' is not a rule id"),
], ids=["tool-0.75-above", "tool-0.75-below", "header-0.8-above", "header-0.8-below", "rule-0.9-above",
        "rule-0.9-below"])
def test_each_did_you_mean_cutoff_is_pinned_by_a_word_on_either_side(ask: Callable[[str], str], word: str,
                                                                      said: str) -> None:
    """Review B 45: ``closest`` ignoring its ``cutoff`` (always 0.6) passed every test."""
    assert ask(word) == said
