"""``check`` lists a refused log's fault once (session 43, issue 14).

A log DSH refuses is ``check``'s DSH801 (DSH refuses to load it) or DSH802 (replay's surface fold
refuses it). Beside it, check listed the validation finding of the same fault for most refusals: a
bad surfaceOp was DSH802 and DSH303, a bad message role DSH801 and DSH120, an unknown event type
DSH801 and DSH506, where validate lists DSH303, DSH120 or DSH506 once. Only refusals whose words the
gate's table knew and whose hint named the rule were said once (a seq gap, a mistyped header field,
a version against the file name); a surface refusal (DSH802) never was. Every refusal the reader and
replay raise is here, in a v0 log and a v4 log where the format can hold it, each a hand-written
line changed: check lists the fault once, as its refusal at validate's place, and every other
finding as validate lists it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard

from dsh_audit.gate import Policy, run_check
from dsh_audit.validate import validate

_V0 = """\
{"type":"session","version":0,"id":"s0","createdAt":1800000000000,"cwd":"/home/p/proj","delegationDepth":0}
{"type":"turn/start","seq":0,"time":1800000000000,"data":{"turn":1}}
{"type":"step/start","seq":1,"time":1800000000001,"data":{"turn":1,"step":1}}
{"type":"user/message","seq":2,"time":1800000000002,"data":{"id":"u1","role":"user","source":{"kind":"user"},\
"content":[{"type":"text","text":"hello"}]},"surfaceOp":"append"}
{"type":"request/header","seq":3,"time":1800000000003,"data":{"header":{"config":{"provider":"deepseek-official",\
"model":"deepseek-v4-flash","maxTokens":1000},"system":"sys"},"reason":"initial"}}
{"type":"assistant/chunk","seq":4,"time":1800000000004,"data":{"turn":1,"step":1,"chunk":{"type":"usage",\
"usage":{"inputTokens":100,"outputTokens":5,"cacheReadTokens":0}}}}
{"type":"assistant/chunk","seq":5,"time":1800000000005,"data":{"turn":1,"step":1,"chunk":{"type":"finish",\
"reason":{"kind":"stop"}}}}
{"type":"assistant/message","seq":6,"time":1800000000006,"data":{"turn":1,"step":1,"message":{"id":"a1",\
"role":"assistant","source":{"kind":"model","provider":"deepseek-official","model":"deepseek-v4-flash"},\
"content":[{"type":"text","text":"ok"}]},"usage":{"inputTokens":100,"outputTokens":5,"cacheReadTokens":0}},\
"surfaceOp":"append","sourceEventSeqs":[4,5]}
{"type":"step/end","seq":7,"time":1800000000007,"data":{"turn":1,"step":1}}
{"type":"turn/end","seq":8,"time":1800000000008,"data":{"turn":1,"reason":{"kind":"completed"}}}
"""
_V4 = """\
{"type":"session","version":4,"id":"s4","createdAt":1800000000000,"cwd":"/home/p/proj","isSeeded":false,\
"delegationDepth":0}
{"type":"turn/start","seq":0,"time":1800000000000,"data":{"turn":1}}
{"type":"step/start","seq":1,"time":1800000000001,"data":{"turn":1,"step":1}}
{"type":"user/message","seq":2,"time":1800000000002,"data":{"id":"u1","role":"user","source":{"kind":"user"},\
"content":[{"type":"text","text":"hello"}]},"surfaceOp":"append"}
{"type":"request/header","seq":3,"time":1800000000003,"data":{"header":{"config":{"provider":"deepseek-official",\
"model":"deepseek-v4-flash","maxTokens":1000}},"reason":"initial"}}
{"type":"assistant/attempt","seq":4,"time":1800000000005,"data":{"turn":1,"step":1,"stream":[{"type":"chunk",\
"time":1800000000004,"chunk":{"type":"usage","usage":{"inputTokens":100,"outputTokens":5,"cacheReadTokens":0}}},\
{"type":"chunk","time":1800000000005,"chunk":{"type":"finish","reason":{"kind":"stop"}}}]}}
{"type":"assistant/message","seq":5,"time":1800000000006,"data":{"turn":1,"step":1,"message":{"id":"a1",\
"role":"assistant","source":{"kind":"model","provider":"deepseek-official","model":"deepseek-v4-flash"},\
"content":[{"type":"text","text":"ok"}]},"usage":{"inputTokens":100,"outputTokens":5,"cacheReadTokens":0},\
"stream":[]},"surfaceOp":"append"}
{"type":"step/end","seq":6,"time":1800000000007,"data":{"turn":1,"step":1}}
{"type":"turn/end","seq":7,"time":1800000000008,"data":{"turn":1,"reason":{"kind":"completed"}}}
"""
#: The line (index) of each changed record: the header, turn/start, step/start, user/message, request/header,
#: assistant/message.
_AT = {"H": 0, "T": 1, "S": 2, "U": 3, "R": 4, "A": {"v0": 7, "v4": 6}}
_GONE = object()

Lines = list[Any]  # the header and events as dicts, a line written as it is as a str
Change = Callable[[Lines, str], None]


def _put(target: dict[str, Any], change: dict[str, Any]) -> None:
    for key, value in change.items():
        if value is _GONE:
            target.pop(key, None)
        else:
            target[key] = value


def _index(where: str, version: str) -> int:
    at = _AT[where]
    return at[version] if isinstance(at, dict) else at


def _header(**change: Any) -> Change:
    return lambda lines, _: _put(lines[0], change)


def _envelope(where: str, **change: Any) -> Change:
    return lambda lines, version: _put(lines[_index(where, version)], change)


def _message(where: str, **change: Any) -> Change:
    def apply(lines: Lines, version: str) -> None:
        event = lines[_index(where, version)]
        _put(event["data"] if event["type"] == "user/message" else event["data"]["message"], change)
    return apply


def _config(key: str, value: Any, *, header: bool = False) -> Change:
    def apply(lines: Lines, _: str) -> None:
        target = lines[_AT["R"]]["data"]["header"]
        _put(target if header else target["config"], {key: value})
    return apply


def _line(where: str, text: str) -> Change:
    def apply(lines: Lines, version: str) -> None:
        lines[_index(where, version)] = text
    return apply


def _after(where: str, etype: str, data: dict[str, Any], **envelope: Any) -> Change:
    """An event after ``where`` at the next seq (the seqs after it move one on); a replace's
    ``start``/``end`` of ``-1`` name the event before it, in v3+'s ``startSeq``/``endSeq`` in v4."""
    def apply(lines: Lines, version: str) -> None:
        at = _index(where, version)
        seq = lines[at]["seq"] + 1
        for later in lines[at + 1:]:
            later["seq"] += 1
            if "sourceEventSeqs" in later:
                later["sourceEventSeqs"] = [s + 1 for s in later["sourceEventSeqs"]]
        event = {"type": etype, "seq": seq, "time": lines[at]["time"], "data": json.loads(json.dumps(data)),
                 **json.loads(json.dumps(envelope).replace("-1", str(seq - 1)))}
        op = event.get("surfaceOp")
        if version == "v4" and isinstance(op, dict):
            event["surfaceOp"] = {"op": op["op"], "startSeq": op["start"], "endSeq": op["end"]}
        if version == "v4" and etype == "tool/result":  # v4 writes a tool result as a role tool message
            event["data"]["message"] = {"id": "t1", "role": "tool", "source": {"kind": "tool", "callId": "c1"},
                                        "toolCallId": "c1", "content": []}
        lines.insert(at + 1, event)
    return apply


def _seq_repeat(lines: Lines, _: str) -> None:
    lines[_AT["S"]]["seq"] = 0


def _drop_step(lines: Lines, _: str) -> None:
    del lines[_AT["S"]]


_USER = {"id": "u9", "role": "user", "source": {"kind": "user"}, "content": [{"type": "text", "text": "x"}]}
_REPLACE = {"op": "replace", "start": -1, "end": -1}
_TOOL = {"turn": 1, "step": 1, "message": {"id": "t1", "role": "user", "source": {"kind": "tool", "callId": "c1"},
                                           "content": [{"type": "tool-result", "toolCallId": "c1", "content": []}]}}

#: Each refusal the reader or replay raises (the word before the dash: where it is raised), the
#: versions whose log it is made in, and the change to that log that makes it: a change or the
#: bytes of a whole file (``empty``, ``utf8:``, ``bom``, ``zstd:``, ``name``: the other generation's file name).
REFUSALS: dict[str, tuple[str, Change | str]] = {
    "decode-zstd-reserved-bit": ("v0", "zstd:reserved"),
    "decode-zstd-trailing-bytes": ("v0", "zstd:junk"),
    "decode-zstd-first-frame": ("v0", "zstd:first"),
    "header-empty": ("v0", "empty"),
    "header-not-utf8": ("v0 v4", "utf8:header"),
    "header-bom": ("v0 v4", "bom"),
    "header-not-json": ("v0 v4", _line("H", '{"type":"session",')),
    "header-too-deep": ("v0", _line("H", "[" * 600 + "]" * 600)),
    "header-version-newer": ("v0 v4", _header(version=9)),
    "header-version-unreleased": ("v0 v4", _header(version=1.5)),
    "header-version-vs-name": ("v0 v4", "name"),
    "header-no-type": ("v0 v4", _header(type="sess")),
    "header-version-string": ("v0 v4", _header(version="0")),
    "header-id-number": ("v0 v4", _header(id=7)),
    "header-createdAt-string": ("v0 v4", _header(createdAt="1")),
    "header-no-delegationDepth": ("v0 v4", _header(delegationDepth=_GONE)),
    "header-origin": ("v0 v4", _header(origin="x")),
    "header-agentPreset": ("v0 v4", _header(agentPreset={"a": 1})),
    "header-no-isSeeded": ("v4", _header(isSeeded=_GONE)),
    "header-retired-policy": ("v0 v4", _header(sandboxMode="x")),
    "header-cwd-relative": ("v0 v4", _header(cwd="rel/dir")),
    "header-parentSession": ("v0 v4", _header(parentSession=5)),
    "header-seedLength": ("v0", _header(seedLength=-1)),
    "scan-not-json": ("v0 v4", _line("S", "{bad")),
    "scan-not-utf8": ("v0 v4", "utf8:line"),
    "scan-too-deep": ("v0 v4", _line("S", "[" * 600 + "]" * 600)),
    "scan-row": ("v0", _line("U", '{"type":"text-chunks","seq0":2,"time0":1,"data":{"turn":1,"step":1,"index":0,'
                                  '"dt":[],"texts":[]}}')),
    "scan-seq-gap": ("v0 v4", _drop_step),
    "scan-seq-repeat": ("v0 v4", _seq_repeat),
    "scan-seq-string": ("v0 v4", _envelope("S", seq="1")),
    # an integer that is no position: validate's DSH111 as a string's, not a gap (fuzz 32's D1)
    "scan-seq-negative": ("v0 v4", _envelope("S", seq=-1)),
    "scan-seq-unsafe": ("v0 v4", _envelope("S", seq=2**53)),
    "scan-seq-unsafe-last": ("v0 v4", lambda lines, _: _put(lines[-1], {"seq": 2**60})),
    "scan-not-an-object": ("v0 v4", _line("S", "[1]")),
    "scan-body-older": ("v0", "older"),
    "retired-header-delta": ("v0 v4", _after("R", "request/header-delta", {"header": {}})),
    "retired-mode-set": ("v0 v4", _after("R", "mode/set", {"mode": "plan"})),
    # log text quoted mid-message (a session id, an event type) that spells another refusal's words
    "retired-mode-set-quoted-id": ("v0", lambda lines, v: (_header(id='a" uses log format v')(lines, v),
                                                           _after("R", "mode/set", {"mode": "plan"})(lines, v))),
    "event-unknown-type-quoted": ("v0", _after("R", '" uses log format v" contains malformed pre-react-loop x at seq 1',
                                               {})),
    "header-parentSession-quoted-id": ("v0", _header(id='x" failed validation: session header cwd x', parentSession=5)),
    "retired-fallback": ("v0 v4", lambda lines, _: _put(lines[_AT["R"]]["data"], {"reason": "fallback"})),
    "upgrade-legacy": ("v0 v4", lambda lines, _: _put(lines[_AT["T"]]["data"], {"trigger": 5})),
    "event-role": ("v0 v4", _message("U", role="system")),
    "event-content": ("v0 v4", _message("U", content="hi")),
    "event-no-id": ("v0 v4", _message("U", id=_GONE)),
    "event-model-source": ("v0 v4", _message("A", source={"kind": "user"})),
    "event-unknown-type": ("v0 v4", _after("R", "x/plugin", {})),
    "event-envelope-key": ("v0 v4", _envelope("S", meta=1)),
    "event-time-float": ("v0 v4", _envelope("S", time=1.5)),
    "event-ignorable": ("v0 v4", _envelope("S", ignorable=False)),
    "event-no-data": ("v0 v4", _envelope("S", data=_GONE)),
    "event-no-model": ("v0 v4", _config("model", _GONE)),
    "event-reasoningEffort": ("v0 v4", _config("reasoningEffort", "")),
    "event-adapterDefaults": ("v0 v4", _config("adapterDefaults", {"x": True}, header=True)),
    "surface-not-eligible": ("v0 v4", _envelope("T", surfaceOp="append")),
    "surface-no-surfaceOp": ("v0 v4", _envelope("U", surfaceOp=_GONE)),
    "surface-surfaceOp": ("v0 v4", _envelope("U", surfaceOp="add")),
    "surface-replace-shape": ("v0 v4", _after("U", "user/message", _USER, sourceEventSeqs=[-1],
                                              surfaceOp={"op": "replace", "start": "x", "end": -1})),
    "surface-replace-range": ("v0 v4", _after("U", "user/message", _USER, sourceEventSeqs=[-1],
                                              surfaceOp={"op": "replace", "start": 99, "end": -1})),
    "surface-replace-sources": ("v0 v4", _after("U", "user/message", _USER, sourceEventSeqs=[0], surfaceOp=_REPLACE)),
    "surface-tool-result": ("v0 v4", _after("U", "tool/result", _TOOL, sourceEventSeqs=[-1], surfaceOp=_REPLACE)),
    "surface-sources-type": ("v0 v4", _envelope("U", sourceEventSeqs=5)),
    "surface-sources-repeat": ("v0 v4", _after("U", "user/message", _USER, sourceEventSeqs=[-1, -1],
                                               surfaceOp=_REPLACE)),
    "surface-sources-later": ("v0 v4", _after("U", "user/message", _USER, sourceEventSeqs=[-1, 9],
                                              surfaceOp=_REPLACE)),
}


def _text(lines: Lines) -> bytes:
    return "".join((line if isinstance(line, str) else json.dumps(line, separators=(",", ":"))) + "\n"
                   for line in lines).encode()


def _zstd(lines: Lines, how: str) -> bytes:
    """The log as DSH's zstd writes it (the header alone in frame 1), damaged as ``how`` says."""
    compress = zstandard.ZstdCompressor().compress
    head, body = _text(lines[:1]), _text(lines[1:])
    return {"reserved": compress(head) + b"\x28\xb5\x2f\xfd\x18" + bytes(20),  # a reserved frame-header bit
            "junk": compress(head) + compress(body) + b"JUNKJUNKJUNK",
            "first": compress(head + body)}[how]


def _write(folder: Path, case: str, version: str) -> Path:
    """The log of ``case`` in ``version``, in its own folder of ``folder``."""
    change = REFUSALS[case][1]
    lines: Lines = [json.loads(line) for line in (_V0 if version == "v0" else _V4).splitlines()]
    name = "session.jsonl" if version == "v0" else "session.v4.jsonl"
    if change == "name":
        name = "session.v4.jsonl" if version == "v0" else "session.jsonl"
    elif change == "older":  # a v0 body under a v4 header
        name, lines[0] = "session.v4.jsonl", {**lines[0], "version": 4, "isSeeded": False}
    elif callable(change):
        change(lines, version)
    data = _text(lines)
    if change == "empty":
        data = b""
    elif change == "bom":
        data = b"\xef\xbb\xbf" + data
    elif change == "utf8:header":
        data = data.replace(b'"id":"', b'"id":"\xff', 1)
    elif change == "utf8:line":
        data = data.replace(b'"step":1}', b'"step":1,"x":"\xff"}', 1)
    elif isinstance(change, str) and change.startswith("zstd:"):
        name, data = name + ".zstd", _zstd(lines, change[5:])
    path = folder / f"{case}-{version}" / name
    path.parent.mkdir()
    path.write_bytes(data)
    return path


def _said(path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """What check (as the CLI runs it: the log checked as it is replayed) and validate find in
    the log at ``path``, each finding its rule, line and seq (check's DSH810, no capture, aside)."""
    checked = run_check([path], policy=Policy(), outline=True, lean=True).findings
    return ([(f.rule, f.line, f.seq) for f in checked if f.rule != "DSH810"],
            [(f.rule, f.line, f.seq) for f in validate(path)])


Found = list[tuple[Any, ...]]
#: Each refusal's findings in the v0 log (and the v4 log but where :data:`EXPECTED_V4` says), as
#: (check's, validate's): check's the refusal (DSH801, or DSH802 for the surface fold) at the place of
#: validate's finding of the fault, then every other finding validate lists. Before, check listed
#: validate's finding of the fault too in every row but a seq's (not a negative or unsafe integer's:
#: fuzz 32's D1), a header field's written as another JSON type (v0), one of a v4 header and the
#: version against the file name.
EXPECTED: dict[str, tuple[Found, Found]] = {
    "decode-zstd-reserved-bit": ([("DSH801", 2, None)], [("DSH101", 2, None)]),
    "decode-zstd-trailing-bytes": ([("DSH801", 11, None)], [("DSH101", 11, None)]),
    "decode-zstd-first-frame": ([("DSH801", 1, None)], [("DSH101", 1, None)]),
    "header-empty": ([("DSH801", 1, None)], [("DSH201", 1, None)]),
    "header-not-utf8": ([("DSH801", 1, None)], [("DSH102", 1, None)]),
    "header-bom": ([("DSH801", 1, None)], [("DSH201", 1, None)]),
    "header-not-json": ([("DSH801", 1, None)], [("DSH201", 1, None)]),
    "header-too-deep": ([("DSH801", 1, None)], [("DSH201", 1, None)]),
    "header-version-newer": ([("DSH801", 1, None)], [("DSH204", 1, None)]),
    "header-version-unreleased": ([("DSH801", 1, None)], [("DSH205", 1, None)]),
    "header-version-vs-name": ([("DSH801", 1, None)], [("DSH206", 1, None)]),
    "header-no-type": ([("DSH801", 1, None)], [("DSH202", 1, None)]),
    "header-version-string": ([("DSH801", 1, None)], [("DSH203", 1, None)]),
    "header-id-number": ([("DSH801", 1, None)], [("DSH207", 1, None)]),
    "header-createdAt-string": ([("DSH801", 1, None)], [("DSH208", 1, None)]),
    "header-no-delegationDepth": ([("DSH801", 1, None)], [("DSH209", 1, None)]),
    "header-origin": ([("DSH801", 1, None)], [("DSH210", 1, None)]),
    "header-agentPreset": ([("DSH801", 1, None)], [("DSH211", 1, None)]),
    "header-no-isSeeded": ([("DSH801", 1, None)], [("DSH216", 1, None)]),
    "header-retired-policy": ([("DSH801", 1, None)], [("DSH215", 1, None)]),
    "header-cwd-relative": ([("DSH801", 1, None)], [("DSH212", 1, None)]),
    "header-parentSession": ([("DSH801", 1, None)], [("DSH213", 1, None)]),
    "header-seedLength": ([("DSH801", 1, None), ("DSH601", 1, None)], [("DSH214", 1, None), ("DSH601", 1, None)]),
    "scan-not-json": ([("DSH801", 3, 1), ("DSH405", 6, 4)], [("DSH104", 3, 1), ("DSH405", 6, 4)]),
    "scan-not-utf8": ([("DSH801", 3, 1)], [("DSH102", 3, None)]),
    "scan-too-deep": ([("DSH801", 3, 1), ("DSH405", 6, 4)], [("DSH104", 3, 1), ("DSH405", 6, 4)]),
    "scan-row": ([("DSH801", 4, 2)], [("DSH105", 4, 2)]),
    "scan-seq-gap": ([("DSH801", 3, 2), ("DSH405", 5, 4)], [("DSH107", 3, 2), ("DSH405", 5, 4)]),
    "scan-seq-repeat": ([("DSH801", 3, 0), ("DSH405", 6, 4)], [("DSH108", 3, 0), ("DSH405", 6, 4)]),
    "scan-seq-string": ([("DSH801", 3, 1), ("DSH405", 6, 4)], [("DSH111", 3, 1), ("DSH405", 6, 4)]),
    "scan-seq-negative": ([("DSH801", 3, 1), ("DSH405", 6, 4)], [("DSH111", 3, 1), ("DSH405", 6, 4)]),
    "scan-seq-unsafe": ([("DSH801", 3, 1), ("DSH405", 6, 4)], [("DSH111", 3, 1), ("DSH405", 6, 4)]),
    "scan-seq-unsafe-last": ([("DSH801", 10, 8), ("DSH407", 9, 7)], [("DSH407", 9, 7), ("DSH111", 10, 8)]),
    "scan-not-an-object": ([("DSH801", 3, 1), ("DSH405", 6, 4)], [("DSH112", 3, 1), ("DSH405", 6, 4)]),
    "scan-body-older": ([("DSH801", 5, 3)], [("DSH114", 5, 3)]),
    "retired-header-delta": ([("DSH801", 6, 4)], [("DSH501", 6, 4)]),
    "retired-mode-set": ([("DSH801", 6, 4)], [("DSH502", 6, 4)]),
    "retired-mode-set-quoted-id": ([("DSH801", 6, 4)], [("DSH502", 6, 4)]),
    "event-unknown-type-quoted": ([("DSH801", 6, 4)], [("DSH506", 6, 4)]),
    "header-parentSession-quoted-id": ([("DSH801", 1, None)], [("DSH213", 1, None)]),
    "retired-fallback": ([("DSH801", 5, 3)], [("DSH503", 5, 3)]),
    "upgrade-legacy": ([("DSH801", 2, 0), ("DSH404", 3, 1)], [("DSH504", 2, 0), ("DSH404", 3, 1)]),
    "event-role": ([("DSH801", 4, 2)], [("DSH120", 4, 2)]),
    "event-content": ([("DSH801", 4, 2)], [("DSH120", 4, 2)]),
    "event-no-id": ([("DSH801", 4, 2)], [("DSH120", 4, 2)]),
    "event-model-source": ([("DSH801", 8, 6)], [("DSH120", 8, 6)]),
    "event-unknown-type": ([("DSH801", 6, 4)], [("DSH506", 6, 4)]),
    "event-envelope-key": ([("DSH801", 3, 1)], [("DSH110", 3, 1)]),
    "event-time-float": ([("DSH801", 3, 1)], [("DSH111", 3, 1)]),
    "event-ignorable": ([("DSH801", 3, 1)], [("DSH113", 3, 1)]),
    "event-no-data": ([("DSH801", 3, 1), ("DSH405", 6, 4)], [("DSH112", 3, 1), ("DSH405", 6, 4)]),
    "event-no-model": ([("DSH801", 5, 3)], [("DSH221", 5, 3)]),
    "event-reasoningEffort": ([("DSH801", 5, 3)], [("DSH222", 5, 3)]),
    "event-adapterDefaults": ([("DSH801", 5, 3)], [("DSH223", 5, 3)]),
    "surface-not-eligible": ([("DSH802", 2, 0)], [("DSH301", 2, 0)]),
    "surface-no-surfaceOp": ([("DSH802", 4, 2)], [("DSH302", 4, 2)]),
    "surface-surfaceOp": ([("DSH802", 4, 2)], [("DSH303", 4, 2)]),
    "surface-replace-shape": ([("DSH802", 5, 3)], [("DSH303", 5, 3)]),
    "surface-replace-range": ([("DSH802", 5, 3)], [("DSH304", 5, 3)]),
    "surface-replace-sources": ([("DSH802", 5, 3)], [("DSH305", 5, 3)]),
    "surface-tool-result": ([("DSH802", 5, 3)], [("DSH306", 5, 3)]),
    "surface-sources-type": ([("DSH802", 4, 2)], [("DSH307", 4, 2)]),
    "surface-sources-repeat": ([("DSH802", 5, 3)], [("DSH308", 5, 3)]),
    "surface-sources-later": ([("DSH802", 5, 3)], [("DSH309", 5, 3)]),
}
#: The v4 log's where it differs: the assistant message is a line earlier (v4 streams no chunks).
#: (validate reads the body of a header whose version is no released number as the file name's v4.)
EXPECTED_V4: dict[str, tuple[Found, Found]] = {
    "event-model-source": ([("DSH801", 7, 5)], [("DSH120", 7, 5)]),
    "scan-seq-unsafe-last": ([("DSH801", 9, 7), ("DSH407", 8, 6)], [("DSH407", 8, 6), ("DSH111", 9, 7)]),
}


@pytest.mark.parametrize("version", ["v0", "v4"])
def test_check_lists_each_refused_fault_once_where_validate_does(tmp_path: Path, version: str) -> None:
    cases = [case for case, (versions, _) in REFUSALS.items() if version in versions.split()]
    expected = {**EXPECTED, **(EXPECTED_V4 if version == "v4" else {})}
    assert {case: _said(_write(tmp_path, case, version)) for case in cases} == {case: expected[case] for case in cases}


def test_a_surface_refusal_that_fails_nothing_keeps_the_finding_that_fails(tmp_path: Path) -> None:
    """With ``fail-on-refusal`` off, DSH303 is kept beside the DSH802 that no longer fails the gate,
    as the finding that fails it; with DSH802 ignored, it is the fault's one finding."""
    log = _write(tmp_path, "surface-surfaceOp", "v0")
    found = [[(f.rule, f.line, f.fails) for f in run_check([log], policy=policy).findings if f.rule != "DSH810"]
             for policy in (Policy(fail_on_refusal=False), Policy(ignore=("DSH802",)))]
    assert found == [[("DSH802", 4, False), ("DSH303", 4, True)], [("DSH303", 4, True)]]
