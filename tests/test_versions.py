"""Every released format version (v0-v4) reads into the same requests as the v0 log it came from.

Real DSH v0 logs from the corpus (tools, header changes, compaction with prune, resume, fork
child) are written as v1-v4 with the adjacent migrations (dsh_audit.testing._migrate, from
dsh-format-versions.md §7) and read back.
"""

from __future__ import annotations

import json

import pytest
import zstandard

import dsh_audit
from dsh_audit.errors import MalformedRecordError, UnsupportedFormatError
from dsh_audit.log._records import decode_record
from dsh_audit.replay import replay
from dsh_audit.testing._migrate import migrate_events

from _golden import CORPUS

LIVE = CORPUS / "live"
SCENARIOS = {  # scenario -> what it exercises
    "b-tools": "tools", "c-change": "header changes", "e2-autocompact": "prune + compaction",
    "e-compaction": "manual compaction", "d-resume": "resume", "f-fork": "fork child",
}

pytestmark = pytest.mark.skipif(not LIVE.is_dir(), reason="../shared/corpus is absent")


def _raw(path):
    lines = path.read_bytes().splitlines()
    header = json.loads(lines[0])
    events = [e for line in lines[1:] for e in decode_record(json.loads(line))]
    return header, events


def _write(tmp_path, name, header, events):
    path = tmp_path / name
    path.write_text("".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n"
                            for r in [header, *events]))
    return path


def _shape(requests):
    return [(r.kind, r.turn, r.step, r.attempt, r.header, r.messages_sha256, r.message_count,
             r.usage, r.message_usage, r.finish) for r in requests]


def _logs(scenario):
    return sorted((LIVE / scenario / "session-logs").glob("*.jsonl"))


@pytest.mark.parametrize("version", [1, 2, 3, 4])
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_version_reads_into_same_requests(tmp_path, scenario, version):
    for source in _logs(scenario):
        header, events = _raw(source)
        expected = dsh_audit.requests(dsh_audit.load(source))
        new_header, new_events = migrate_events(header, events, version)
        name = "session.jsonl" if version == 0 else f"session.v{version}.jsonl"
        (tmp_path / header["id"]).mkdir()
        log = dsh_audit.load(_write(tmp_path / header["id"], name, new_header, new_events))
        got = dsh_audit.requests(log)
        assert log.format_version == version
        assert _shape(got) == _shape(expected), f"{source.name} as v{version}"
        assert len(got) > 0


def test_v2_chunks_are_gone_and_v4_results_are_tool_role(tmp_path):
    header, events = _raw(_logs("b-tools")[0])
    _, v2 = migrate_events(header, events, 2)
    assert not any(e["type"] == "assistant/chunk" for e in v2)
    _, v4 = migrate_events(header, events, 4)
    results = [e for e in v4 if e["type"] == "tool/result"]
    assert results and all(e["data"]["message"]["role"] == "tool" for e in results)
    assert any(e["type"] == "system/message" for e in v4)


def test_fork_child_seed_cut_from_inherited_end_seed(tmp_path):
    child = next(p for p in _logs("f-fork") if not p.name.startswith("session-"))
    header, events = _raw(child)
    assert header.get("seedLength")
    v4_header, v4_events = migrate_events(header, events, 4)
    assert v4_header["isSeeded"] is True and "seedLength" not in v4_header
    log = dsh_audit.load(_write(tmp_path, "session.v4.jsonl", v4_header, v4_events))
    requests = dsh_audit.requests(log)
    assert [r.kind for r in requests] == ["loop"]  # the copied parent steps are not the child's
    assert log.seed_length == next(e["seq"] for e in v4_events if e["type"] == "session/end-seed")


def test_folder_with_v0_and_v4_generations_reads_v4(tmp_path):
    source = _logs("b-tools")[0]
    header, events = _raw(source)
    folder = tmp_path / "sessions" / "--p--" / header["id"]
    folder.mkdir(parents=True)
    (folder / "session.jsonl.zstd").write_bytes(
        zstandard.ZstdCompressor().compress(source.read_bytes()))
    v4_header, v4_events = migrate_events(header, events, 4)
    _write(folder, "session.v4.jsonl", v4_header, v4_events)
    notes: list[str] = []
    found = dsh_audit.discover([tmp_path / "sessions"], notes=notes)
    assert [p.name for p in found] == ["session.v4.jsonl"]
    assert "read session.v4.jsonl (generation v4)" in notes[0] and "session.jsonl.zstd" in notes[0]


def test_future_version_refused_naming_it(tmp_path):
    path = _write(tmp_path, "log.jsonl", {"type": "session", "version": 5, "id": "s", "createdAt": 0,
                                           "isSeeded": False, "delegationDepth": 0}, [])
    with pytest.raises(UnsupportedFormatError, match=r"uses log format v5, but this harness reads only v0-v4"):
        dsh_audit.load(path)


def test_generation_name_must_match_header_version(tmp_path):
    path = _write(tmp_path, "session.v3.jsonl", {"type": "session", "version": 4, "id": "s", "createdAt": 0,
                                                  "isSeeded": False, "delegationDepth": 0}, [])
    with pytest.raises(UnsupportedFormatError) as refused:
        dsh_audit.load(path)
    # the hint names the fix validate's DSH114 names (the header's version), not a renamed file alone
    assert (refused.value.message, refused.value.hint) == (
        "header says log format v4 but the file name session.v3.jsonl is generation v3",
        "DSH opens a log only when the two agree: set the header's version to the version the body is written in "
        "and name the file for it (session.jsonl for v0, session.vN.jsonl for vN); `dsh-audit validate FILE` names "
        "the disagreement (DSH206), or the first record the header's version does not fit (DSH114)")


_NEWER = "the log was written by a newer harness — upgrade the harness to open it"
_READ = "the log was written by a newer harness"  # a version dsh-audit reads: no upgrade mends a field
_RC8 = "DSH 0.1.0-rc.8, which reads only v0, refuses it as: session"


@pytest.mark.parametrize(("name", "header", "said"), [
    ("x.jsonl", {"version": 4, "id": "x" * 5000},
     f'corrupt session log: first line is not a session header of v4: no boolean isSeeded (v4); {_RC8} '
     f'"{"x" * 199}…" uses log format v4, but this harness reads only v0: {_READ}'),
    ("x.jsonl", {"version": 4, "id": {"a": "\x1b]8;;http://e\x07"}},
     'corrupt session log: first line is not a session header of v4: id {"a":"\\u001b]8;;htt… is an object, not a '
     f'string; no boolean isSeeded (v4); {_RC8} "[object Object]" uses log format v4, but this harness reads only '
     f"v0: {_READ}"),  # session 44: every fault named, isSeeded's beside another's too
    ("x.jsonl", {"version": 4.0, "id": [1, None, ["b", {}]], "isSeeded": False},
     'corrupt session log: first line is not a session header of v4: id [1,null,["b",{}]] is an array, not a '
     f'string; {_RC8} "1,,b,[object Object]" uses log format v4, but this harness reads only v0: {_READ}'),
    ("x.jsonl", {"version": 9.0, "isSeeded": False},
     f'session "undefined" uses log format v9, but this harness reads only v0-v4: {_NEWER}'),
    ("session.v3.jsonl", {"version": 4.0, "id": "s", "isSeeded": False},
     "header says log format v4 but the file name session.v3.jsonl is generation v3"),
], ids=["long-id", "object-id", "array-id-float-version", "no-id", "float-generation"])
def test_a_header_refusal_writes_id_and_version_as_dsh_and_short(tmp_path, name, header, said):
    """Session 42: a header refusal quotes the id as DSH's template literal writes it (JavaScript's
    String: ``[object Object]``, an array joined by commas; ``undefined`` when absent), cut at 200
    characters, and the version as JavaScript spells it (``4.0`` is ``v4``, as the fault's ``(v4)``).
    It quoted a 5,000-character id whole, an object as a Python repr and ``v4.0``."""
    path = _write(tmp_path, name, {"type": "session", **header, "createdAt": 0, "delegationDepth": 0}, [])
    with pytest.raises((MalformedRecordError, UnsupportedFormatError)) as refused:
        dsh_audit.load(path)
    assert refused.value.message == said


def test_v2_header_needs_is_seeded(tmp_path):
    path = _write(tmp_path, "x.jsonl", {"type": "session", "version": 2, "id": "s", "createdAt": 0,
                                         "delegationDepth": 0}, [])
    with pytest.raises(MalformedRecordError, match="not a session header of v2: no boolean isSeeded"):
        dsh_audit.load(path)


def test_rc8_mode_refuses_v1_like_dsh(tmp_path):
    header, events = _raw(_logs("a-chat")[0])
    v1_header, v1_events = migrate_events(header, events, 1)
    path = _write(tmp_path, "x.jsonl", v1_header, v1_events)
    with pytest.raises(UnsupportedFormatError, match="reads only v0: the log was written by a newer harness"):
        dsh_audit.load(path, max_version=0)


# Event types DSH's generated KNOWN_SESSION_EVENT_TYPES adds per version over rc.8's 48 (sources in
# dsh_audit/log/_versions.py: harness-helmcode v2.md/v3.md, LunFengChen a077afb6 / 103e8703, 0217po 17a52a8f).
_V1_ADDED = ["model/selection", "session-log-deepseek/delivery-accepted", "subagent/model-selection-policy"]
_V2_ADDED = [*_V1_ADDED, "assistant/attempt", "feedback/message-delete", "feedback/message-put"]
_V3_ADDED = [*_V2_ADDED, "deliverables/presented", "image/offload", "subagent/catalog", "system/message",
             "tool/ptc-dispatch", "tool/ptc-dispatch-start", "workspace/changes"]
_V4_ADDED = [*_V3_ADDED, "developer/message", "subagent/catalog-unknown"]


def test_known_types_per_version_match_dsh_generated_lists():
    from dsh_audit.log._types import KNOWN_EVENT_TYPES
    from dsh_audit.log._versions import known_types

    rc8 = KNOWN_EVENT_TYPES
    assert known_types(0, rc8) == rc8 and len(rc8) == 48
    got = {v: known_types(v, rc8) for v in (1, 2, 3, 4)}
    assert sorted(got[1] - rc8) == sorted(_V1_ADDED) and got[1] >= rc8
    assert sorted(got[2] - rc8) == sorted(_V2_ADDED) and sorted(rc8 - got[2]) == ["assistant/chunk"]
    removed = ["assistant/chunk", "tool/code-dispatch", "tool/code-dispatch-start"]
    assert sorted(got[3] - rc8) == sorted(_V3_ADDED) and sorted(rc8 - got[3]) == removed
    assert sorted(got[4] - rc8) == sorted(_V4_ADDED) and sorted(rc8 - got[4]) == removed
    assert [len(got[v]) for v in (1, 2, 3, 4)] == [51, 53, 58, 60]


def _log_only_events(start, time):
    """One event of each log-only type v2-v4 added, with payloads shaped after DSH's catalogue."""
    payloads = [
        ("feedback/message-put", {"item": {"messageId": "m-1", "rating": "up", "category": "helpful"}}),
        ("feedback/message-delete", {"messageId": "m-1"}),
        ("deliverables/presented", {"turn": 1, "paths": ["/tmp/out.md"]}),
        ("subagent/catalog", {"version": 0, "childId": "child-1", "childCreatedAt": 1, "mode": "one-shot",
                              "label": "scan"}),
        ("subagent/catalog", {"version": 1, "childId": "child-2", "childCreatedAt": 2, "mode": "unknown"}),
        ("subagent/catalog-unknown", {"version": 0, "childId": "child-3", "childCreatedAt": 3, "mode": "unknown"}),
        ("tool/ptc-dispatch-start", {"turn": 1, "step": 1, "callId": "c-1", "dispatchId": "d-1", "name": "read"}),
        ("tool/ptc-dispatch", {"turn": 1, "step": 1, "callId": "c-1", "dispatchId": "d-1", "name": "read",
                               "error": {"name": "Error", "code": "EFAIL"}}),
        ("workspace/changes", {"turn": 1, "files": [{"path": "a.txt", "change": "modified"}]}),
    ]
    return [{"type": t, "seq": start + i, "time": time, "data": d} for i, (t, d) in enumerate(payloads)]


@pytest.mark.parametrize("scenario", ["b-tools", "e2-autocompact"])
def test_v4_log_with_every_new_log_only_type_reads_into_same_requests(tmp_path, scenario):
    source = _logs(scenario)[0]
    header, events = _raw(source)
    expected = dsh_audit.requests(dsh_audit.load(source))
    v4_header, v4_events = migrate_events(header, events, 4)
    extra = _log_only_events(len(v4_events), v4_events[-1]["time"])
    path = _write(tmp_path, "session.v4.jsonl", v4_header, [*v4_events, *extra])
    got = dsh_audit.requests(dsh_audit.load(path))
    assert _shape(got) == _shape(expected)
    assert {e["type"] for e in extra} <= set(_V4_ADDED)


def test_workspace_changes_known_from_v3_but_refused_in_v2(tmp_path):
    header, events = _raw(_logs("b-tools")[0])
    for version, refused in ((2, True), (3, False), (4, False)):
        new_header, new_events = migrate_events(header, events, version)
        extra = {"type": "workspace/changes", "seq": len(new_events), "time": new_events[-1]["time"],
                 "data": {"turn": 1, "files": []}}
        (tmp_path / str(version)).mkdir()
        path = _write(tmp_path / str(version), f"session.v{version}.jsonl", new_header, [*new_events, extra])
        if refused:
            with pytest.raises(UnsupportedFormatError, match=r'event type "workspace/changes" \(seq \d+\) unknown'):
                dsh_audit.requests(dsh_audit.load(path))
        else:
            assert len(dsh_audit.requests(dsh_audit.load(path))) > 0


def test_v4_unknown_type_refused_unless_ignorable(tmp_path):
    header, events = _raw(_logs("b-tools")[0])
    v4_header, v4_events = migrate_events(header, events, 4)
    expected = _shape(dsh_audit.requests(dsh_audit.load(_logs("b-tools")[0])))
    extra = {"type": "acme/audit-note", "seq": len(v4_events), "time": 0, "data": {}}
    path = _write(tmp_path, "session.v4.jsonl", v4_header, [*v4_events, extra])
    with pytest.raises(UnsupportedFormatError, match='"acme/audit-note"'):
        dsh_audit.requests(dsh_audit.load(path))
    path = _write(tmp_path, "session.v4.jsonl", v4_header, [*v4_events, {**extra, "ignorable": True}])
    assert _shape(dsh_audit.requests(dsh_audit.load(path))) == expected


def test_v2_message_with_empty_stream_is_not_a_request(tmp_path):
    # v1->v2 gives `stream: []` to an assistant/message citing no chunk (a message no model call made):
    # like v0, it adds no attempt and its step stays "without recorded response".
    header, events = _raw(_logs("b-tools")[0])
    v0 = [dict(e) for e in events]
    step = next(e for e in v0 if e["type"] == "step/start")["data"]
    message = next(e for e in v0 if e["type"] == "assistant/message")
    tail_seq = v0[-1]["seq"]
    # a closing step whose assistant message cites no chunk (e.g. a synthesised closer)
    closer = [
        {"type": "turn/start", "seq": tail_seq + 1, "time": 1, "data": {"turn": step["turn"] + 99}},
        {"type": "step/start", "seq": tail_seq + 2, "time": 1, "data": {"turn": step["turn"] + 99, "step": 1}},
        {"type": "assistant/message", "seq": tail_seq + 3, "time": 1, "surfaceOp": "append",
         "data": {"turn": step["turn"] + 99, "step": 1,
                  "message": {**message["data"]["message"], "id": "closer",
                              "content": [{"type": "text", "text": "stopped"}]}}},
        {"type": "step/end", "seq": tail_seq + 4, "time": 1, "data": {"turn": step["turn"] + 99, "step": 1}},
        {"type": "turn/end", "seq": tail_seq + 5, "time": 1,
         "data": {"turn": step["turn"] + 99, "reason": {"kind": "completed"}}},
    ]
    v0_path = _write(tmp_path, "session.jsonl", header, [*v0, *closer])
    v0_log = dsh_audit.load(v0_path)
    expected, v0_result = replay(v0_log)
    v2_header, v2_events = migrate_events(header, [*v0, *closer], 2)
    closer_v2 = next(e for e in v2_events
                     if e["type"] == "assistant/message" and e["data"]["message"]["id"] == "closer")
    assert closer_v2["data"]["stream"] == []
    (tmp_path / "v2").mkdir()
    got, v2_result = replay(dsh_audit.load(_write(tmp_path / "v2", "session.v2.jsonl", v2_header, v2_events)))
    assert _shape(got) == _shape(expected)
    assert [s["turn"] for s in v2_result.skipped_steps] == [s["turn"] for s in v0_result.skipped_steps]
    assert step["turn"] + 99 in [s["turn"] for s in v2_result.skipped_steps]


def test_v4_source_kinds_back_to_v0():
    from dsh_audit.log._versions import to_v0_shapes

    def v0_source(source):
        event = {"type": "user/message", "seq": 3, "time": 0, "surfaceOp": "append",
                 "data": {"id": "u", "role": "user", "content": [], "source": source}}
        return to_v0_shapes(event, 4, [])["data"]["source"]

    # same-name producers come back as their plugin; rc.8's direct kinds stay direct (v3->v4 kept them)
    assert v0_source({"kind": "tool-jobs", "form": "notice"}) == {
        "kind": "plugin", "plugin": "tool-jobs", "form": "notice"}
    assert v0_source({"kind": "plan-mode"}) == {"kind": "plugin", "plugin": "plan-mode"}
    assert v0_source({"kind": "compact-checkpoint", "compactionId": "c"}) == {
        "kind": "plugin", "plugin": "compact", "compactionId": "c"}
    assert v0_source({"kind": "plugin:acme"}) == {"kind": "plugin", "plugin": "acme"}
    assert v0_source({"kind": "agent-instructions", "form": "instructions"}) == {
        "kind": "agent-instructions", "form": "instructions"}
    assert v0_source({"kind": "skill-invocation", "name": "x"}) == {"kind": "skill-invocation", "name": "x"}
