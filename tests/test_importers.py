"""Importers: Claude Code transcripts and Codex rollouts mapped onto requests, and format detection."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from dsh_audit.errors import MalformedRecordError, UnsupportedFormatError
from dsh_audit.session import Failure, Session, open_foreign, read_session
from dsh_audit.importers import (
    FORMATS,
    detect,
    import_claude_code,
    import_codex,
    load_foreign,
)

from _cli import invoke

DATA = Path(__file__).resolve().parent / "data" / "importers"
CLAUDE = DATA / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"
CODEX = DATA / "codex" / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl"
CC_SID = "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11"
CX_SID = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
SONNET = "claude-sonnet-4-5-20250929"


def _rows(session):
    return [(r.index, r.kind, r.session_id, r.turn, r.step, r.first_chunk_seq, r.step_start_seq, r.header_seq,
             r.header_reason, r.message_seqs, r.messages_sha256) for r in session.requests]


def _own_sha(messages) -> str:
    """JSON.stringify of these plain messages is json.dumps without spaces or ASCII escapes."""
    text = json.dumps(list(messages), separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _write(tmp_path: Path, name: str, records: list) -> Path:
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), "utf-8")
    return path


# -- detection -------------------------------------------------------------------------------------

def test_detect_names_each_format_from_content(tmp_path):
    assert FORMATS == ("claude-code", "codex", "dsh")
    assert detect(CLAUDE) == "claude-code"
    assert detect(CODEX) == "codex"
    dsh = _write(tmp_path, "anything.jsonl", [{"type": "session", "version": 0, "id": "s", "createdAt": 1,
                                               "delegationDepth": 0}])
    assert detect(dsh) == "dsh"
    zst = tmp_path / "x.bin"
    zst.write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 8)
    assert detect(zst) == "dsh"
    assert detect(_write(tmp_path, "other.jsonl", [{"type": "user", "text": "no ids"}, [1, 2], "not json"])) is None
    assert detect(_write(tmp_path, "empty.jsonl", [])) is None
    # a Codex file copied under a Claude-looking name is still Codex: names are never used
    renamed = tmp_path / f"{CC_SID}.jsonl"
    renamed.write_bytes(CODEX.read_bytes())
    assert detect(renamed) == "codex"


def test_load_foreign_refuses_dsh_and_unknown_logs(tmp_path):
    dsh = _write(tmp_path, "session.jsonl", [{"type": "session", "version": 0, "id": "s", "createdAt": 1}])
    with pytest.raises(UnsupportedFormatError, match="a DSH session log"):
        load_foreign(dsh)
    with pytest.raises(UnsupportedFormatError, match="not a log format"):
        load_foreign(_write(tmp_path, "x.jsonl", [{"a": 1}]))
    assert open_foreign(str(dsh)) is None
    assert load_foreign(CODEX, format="codex").format == "codex"


# -- Claude Code -----------------------------------------------------------------------------------

def test_claude_code_requests_exact():
    session = import_claude_code(CLAUDE)
    assert (session.format, session.session_id, session.cwd, session.created_at, session.warnings) == \
        ("claude-code", CC_SID, "/work/proj", 1767607200000, ())
    assert _rows(session) == [
        (0, "loop", CC_SID, 1, 1, 3, 2, 3, "initial", (2,),
         "324afefa0b870d819aea170d1a2913a94c0ed0429a97906d4f3de26e3a998ff1"),
        (1, "loop", CC_SID, 1, 2, 8, 6, 3, "initial", (2, 3, 6),
         "56b60e73d5b4b76284f69426da906bd219384dead3cbf6341c7f9fec3be56ea4"),
        (2, "loop", CC_SID, 1, 3, 10, 9, 3, "initial", (2, 3, 6, 8, 9),
         "4208a48b1a3256a8f3ba682b491d4450db473679320aee57847e5a2f2bb3c0c2"),
        (3, "loop", CC_SID, 2, 1, 14, 13, 3, "initial", (12, 13),
         "2f040651362c50107dee066636840aa77754d59250d960347c9adac5e6786cd8"),
    ]
    # the split response (three records, one message.id) is one request with the last record's usage
    assert [r.usage for r in session.requests] == [
        {"inputTokens": 12, "outputTokens": 85, "cacheReadTokens": 0, "cacheWriteTokens": 1500},
        {"inputTokens": 8, "outputTokens": 60, "cacheReadTokens": 1500, "cacheWriteTokens": 120},
        {"inputTokens": 4, "outputTokens": 30, "cacheReadTokens": 1620, "cacheWriteTokens": 90},
        {"inputTokens": 10, "outputTokens": 120, "cacheReadTokens": 0, "cacheWriteTokens": 400},
    ]
    assert [r.finish for r in session.requests] == [{"kind": "tool-calls"}, {"kind": "tool-calls"},
                                                    {"kind": "stop"}, {"kind": "stop"}]
    assert {json.dumps(r.header) for r in session.requests} == \
        {json.dumps({"config": {"provider": "anthropic", "model": SONNET}})}
    for request in session.requests:
        assert request.messages_sha256 == _own_sha(request.messages)
    # prompts extend each other until the compaction
    assert session.requests[1].messages[:1] == session.requests[0].messages
    assert session.requests[2].messages[:3] == session.requests[1].messages


def test_claude_code_messages_whole_body():
    request = import_claude_code(CLAUDE).requests[2]
    model = {"kind": "model", "provider": "anthropic", "model": SONNET}
    assert list(request.messages) == [
        {"id": "00000000-0000-4000-8000-000000000001", "role": "user",
         "content": [{"type": "text", "text": "Add a YAML config loader to app.py"}], "source": {"kind": "user"}},
        {"id": "00000000-0000-4000-8000-000000000002", "role": "assistant", "content": [
            {"type": "reasoning", "text": "I should read app.py before editing it."},
            {"type": "text", "text": "I'll look at app.py first."},
            {"type": "tool-call", "id": "toolu_01", "name": "Read", "arguments": '{"file_path":"/work/proj/app.py"}'},
        ], "source": model},
        {"id": "00000000-0000-4000-8000-000000000005", "role": "user", "content": [
            {"type": "tool-result", "toolCallId": "toolu_01",
             "content": [{"type": "text", "text": 'def main():\n    print("hi")\n'}]}],
         "source": {"kind": "tool", "callId": "toolu_01"}},
        {"id": "00000000-0000-4000-8000-000000000006", "role": "assistant", "content": [
            {"type": "text", "text": "Adding the loader."},
            {"type": "tool-call", "id": "toolu_02", "name": "Edit", "arguments": json.dumps(
                {"file_path": "/work/proj/app.py", "old_string": "def main():",
                 "new_string": "import yaml\n\ndef load_config(path):\n    with open(path) as f:\n"
                               "        return yaml.safe_load(f)\n\ndef main():"}, separators=(",", ":"))},
        ], "source": model},
        {"id": "00000000-0000-4000-8000-000000000007", "role": "user", "content": [
            {"type": "tool-result", "toolCallId": "toolu_02",
             "content": [{"type": "text", "text": "The file /work/proj/app.py has been updated."}]}],
         "source": {"kind": "tool", "callId": "toolu_02"}},
    ]


def test_claude_code_compaction_is_cited_with_its_boundary():
    session = import_claude_code(CLAUDE)
    after = session.requests[3]
    assert after.extra == {
        "format": "claude-code", "response_id": "msg_04D", "response_seqs": [14, 15], "request_id": "req_04D",
        "event": "compaction", "event_seq": 11, "compaction": {"trigger": "manual", "preTokens": 1744},
        "time": {"sent": 1767607560.0, "done": 1767607564.0},
    }
    assert [m["source"] for m in after.messages] == [{"kind": "plugin", "plugin": "compact"}, {"kind": "user"}]
    assert [r.extra.get("event") for r in session.requests] == [None, None, None, "compaction"]
    assert session.notes == (
        "claude-code logs no system prompt and no tool schemas: headers hold provider and model only",
        "claude-code messages are the conversation as logged (parentUuid chain), not the exact prompt sent: "
        "reminders, attachments and cache_control markers are not all logged",
        "claude-code does not log the summarisation call of a compaction; its boundary is cited on the next request",
    )
    assert session.times()[0] == (1767607200.0, 1767607203.9)


def _cc(uuid, parent, type_, message, **extra):
    return {"type": type_, "uuid": uuid, "parentUuid": parent, "sessionId": "s1", "isSidechain": False,
            "timestamp": "2026-01-01T00:00:00Z", "message": message, **extra}


def _reply(mid, content, model=SONNET, **usage):
    return {"id": mid, "role": "assistant", "model": model, "content": content, "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 2, **usage}}


def test_claude_code_sidechains_synthetic_snapshots_gaps_and_torn_lines(tmp_path):
    path = _write(tmp_path, "s1.jsonl", [
        _cc("u1", None, "user", {"role": "user", "content": "hi"}),
        _cc("a1", "u1", "assistant", _reply("m1", [{"type": "text", "text": "one"}])),
        # a cumulative snapshot of the same response: not duplicated
        _cc("a2", "a1", "assistant", _reply("m1", [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}])),
        _cc("x1", "a2", "assistant", _reply("m0", [{"type": "text", "text": "API Error"}], model="<synthetic>")),
        _cc("u2", "x1", "user", {"role": "user", "content": [{"type": "text", "text": "more"}]}),
        _cc("a3", "u2", "assistant", _reply("m2", [{"type": "text", "text": "ok"}])),
        _cc("t1", None, "user", {"role": "user", "content": "subtask"}, isSidechain=True, agentId="ab12"),
        _cc("t2", "t1", "assistant", _reply("m3", [{"type": "text", "text": "done"}]), isSidechain=True, agentId="ab12"),
        _cc("g1", "lost", "assistant", _reply("m4", [{"type": "text", "text": "orphan"}])),
        '{"type":"user","uuid":"torn"',
    ])
    path.write_bytes(path.read_bytes().rstrip(b"\n"))  # the last line was cut mid-write
    session = load_foreign(path)
    assert session.session_id == "s1"
    # one session id per file (every view names the session so); a sidechain's conversation in extra
    assert [(r.session_id, r.extra.get("conversation"), r.turn, r.step, len(r.messages))
            for r in session.requests] == [
        ("s1", None, 1, 1, 1), ("s1", None, 2, 1, 3), ("s1", "s1/agent-ab12", 1, 1, 1), ("s1", None, 2, 2, 0)]
    assert session.requests[1].messages[1]["content"] == [{"type": "text", "text": "one"},
                                                          {"type": "text", "text": "two"}]
    assert session.requests[1].message_seqs == (1, 2, 5)
    assert session.requests[0].usage == {"inputTokens": 1, "outputTokens": 2}
    assert session.warnings == (f"{path}:10: torn last line, skipped",)
    assert session.notes[2:] == (
        "1 synthetic assistant record(s) (model <synthetic>: API error texts, placeholders) are not model calls "
        "and are left out of prompts",
        "line 9: parent record lost is not in this file; the prompt starts after the gap",
    )


# -- Codex -----------------------------------------------------------------------------------------

def test_codex_requests_exact():
    session = import_codex(CODEX)
    assert (session.format, session.session_id, session.cwd, session.created_at, session.warnings) == \
        ("codex", CX_SID, "/work/proj", 1767607200000, ())
    assert _rows(session) == [
        (0, "loop", CX_SID, 1, 1, 8, 6, 4, "initial", (2, 3, 6),
         "cc279cfce0780c697db8c5cfb5b049ffa30f98e99fd8e08a60786a0f3e1e16d1"),
        (1, "loop", CX_SID, 1, 2, 13, 11, 4, "initial", (2, 3, 6, 8, 11),
         "c7b9c20ee480d5adbbb06a9e3c68024016843a198b1bf678fcaa2fb6c1937db3"),
        (2, "compaction", CX_SID, 1, 3, 16, 13, 4, "initial", (2, 3, 6, 8, 11, 13),
         "b3e19f475e2c5e4ab1274ed2d8d2787c51ff8d95e35c80d6dda4fb4f3641dbf3"),
        (3, "loop", CX_SID, 2, 1, 22, 20, 19, "change", (17, 17, 17, 17, 20),
         "5d585ec77f5ab0e053c225e4b0a81d807a2bbfb0c8d9978766f339b1d7ef4065"),
    ]
    # OpenAI input_tokens include the cached ones: inputTokens is the uncached rest
    assert [r.usage for r in session.requests] == [
        {"inputTokens": 3000, "outputTokens": 40, "cacheReadTokens": 0, "reasoningTokens": 20},
        {"inputTokens": 156, "outputTokens": 12, "cacheReadTokens": 2944, "reasoningTokens": 0},
        {"inputTokens": 256, "outputTokens": 100, "cacheReadTokens": 2944, "reasoningTokens": 0},
        {"inputTokens": 588, "outputTokens": 30, "cacheReadTokens": 512, "reasoningTokens": 10},
    ]
    assert [r.finish for r in session.requests] == [{"kind": "tool-calls"}, {"kind": "stop"}, None, {"kind": "stop"}]
    system = "You are Codex, a coding agent running in a terminal."
    assert [r.header for r in session.requests] == [
        {"config": {"provider": "openai", "model": "gpt-5-codex", "reasoningEffort": "medium"}, "system": system}] * 3 \
        + [{"config": {"provider": "openai", "model": "gpt-5-codex", "reasoningEffort": "high"}, "system": system}]
    assert [r.extra for r in session.requests] == [
        {"format": "codex", "response_seqs": [8, 9], "time": {"sent": 1767607201.03, "done": 1767607203.2},
         "token_count_seq": 10},
        {"format": "codex", "response_seqs": [13], "time": {"sent": 1767607203.41, "done": 1767607205.02},
         "token_count_seq": 15},
        {"format": "codex", "response_seqs": [], "time": {"sent": 1767607205.02, "done": 1767607320.0},
         "token_count_seq": 16},
        {"format": "codex", "response_seqs": [22, 23], "time": {"sent": 1767607380.02, "done": 1767607382.2},
         "token_count_seq": 24, "event": "compaction", "event_seq": 17},
    ]
    for request in session.requests:
        assert request.messages_sha256 == _own_sha(request.messages)
    assert session.requests[2].messages[:5] == session.requests[1].messages


def test_codex_messages_whole_body():
    request = import_codex(CODEX).requests[1]
    snapshot = {"kind": "plugin", "plugin": "codex", "form": "snapshot"}
    assert [m["source"] for m in request.messages[:3]] == [snapshot, snapshot, {"kind": "user"}]
    assert list(request.messages[2:]) == [
        {"id": "codex-6", "role": "user", "content": [{"type": "text", "text": "List the Python files."}],
         "source": {"kind": "user"}},
        {"id": "codex-8", "role": "assistant", "content": [
            {"type": "reasoning", "text": "**Listing files**", "encryptedContent": "gAAAAB-opaque-1"},
            {"type": "tool-call", "id": "call_01", "name": "shell",
             "arguments": '{"command":["bash","-lc","ls *.py"],"workdir":"/work/proj"}'}],
         "source": {"kind": "model", "provider": "openai", "model": "gpt-5-codex"}},
        {"id": "codex-11", "role": "user", "content": [{"type": "tool-result", "toolCallId": "call_01", "content": [
            {"type": "text", "text": '{"output":"app.py\\nutil.py\\n","metadata":{"exit_code":0,"duration_seconds":0.1}}'}]}],
         "source": {"kind": "tool", "callId": "call_01"}},
    ]
    after = import_codex(CODEX).requests[3]
    assert [(m["id"], m["source"].get("plugin")) for m in after.messages] == [
        ("codex-17", "codex"), ("codex-17.1", "codex"), ("codex-17.2", None), ("codex-17.3", "compact"),
        ("codex-20", None)]


def _cx(kind, payload, second=0):
    return {"timestamp": f"2026-01-01T00:00:{second:02d}.000Z", "type": kind, "payload": payload}


def _count(total_in, last_in, cached=0):
    usage = {"input_tokens": last_in, "cached_input_tokens": cached, "output_tokens": 1,
             "reasoning_output_tokens": 0, "total_tokens": last_in + 1}
    total = {**usage, "input_tokens": total_in, "total_tokens": total_in + 1}
    return _cx("event_msg", {"type": "token_count", "info": {"total_token_usage": total, "last_token_usage": usage}})


def test_codex_resume_compaction_without_history_and_unanswered_tail(tmp_path):
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
    answer = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}
    path = _write(tmp_path, "r.jsonl", [
        _cx("session_meta", {"id": "t1", "cwd": "/w", "model_provider": "azure"}),
        _cx("turn_context", {"model": "o4-mini", "cwd": "/w"}),
        _cx("response_item", user), _cx("event_msg", {"type": "user_message", "message": "go"}),
        _cx("response_item", answer), _count(10, 10),
        _count(20, 10),
        _cx("compacted", {"message": "summary text"}),
        _cx("session_meta", {"id": "t1", "cwd": "/w", "model_provider": "azure"}),
        _cx("response_item", user), _cx("response_item", answer),
    ])
    session = import_codex(path)
    assert [(r.kind, r.header_seq, r.header_reason, r.message_seqs, r.extra.get("event"), r.usage is None)
            for r in session.requests] == [
        ("loop", 2, "initial", (3,), None, False),
        ("compaction", 2, "initial", (3, 5), None, False),
        ("loop", 9, "resume", (3, 8, 10), "resume", True),
    ]
    assert session.requests[0].header == {"config": {"provider": "azure", "model": "o4-mini"}}
    assert session.requests[2].messages[1] == {"id": "codex-8", "role": "user", "source": {
        "kind": "plugin", "plugin": "compact"}, "content": [{"type": "text", "text": "summary text"}]}
    assert "a compacted record without replacement_history: the history after it is approximated as the " \
           "earlier user prompts plus the summary" in session.notes
    assert "the last response has no token_count: its request has no usage" in session.notes


# -- the session trunk ------------------------------------------------------------------------------

def test_a_foreign_log_opens_as_an_imported_session(tmp_path):
    session = read_session(CLAUDE, lenient=True, max_version=4)
    assert isinstance(session, Session) and session.id == CC_SID and session.imported
    assert [r.messages_sha256 for r in session.requests] == [r.messages_sha256 for r in load_foreign(CLAUDE).requests]
    assert session.header.raw == {"type": "imported", "format": "claude-code", "id": CC_SID}
    assert session.result.notes[0].startswith("claude-code logs no system prompt")
    assert session.result.skipped_steps == []
    missing = read_session(tmp_path / "missing.jsonl")
    assert isinstance(missing, Failure) and missing.error.code == "unreadable"


# -- through the CLI -------------------------------------------------------------------------------

@pytest.mark.parametrize("path", [CLAUDE, CODEX], ids=["claude-code", "codex"])
def test_requests_command_lists_imported_requests(path):
    from click.testing import CliRunner

    from dsh_audit.cli import cli

    result = CliRunner().invoke(cli, ["requests", "--json", str(path)], catch_exceptions=False,
                                standalone_mode=False)
    assert result.return_value == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert rows == [json.loads(json.dumps({"path": str(path), **r.summary(), "usage_source": "log"}))
                    for r in load_foreign(path).requests]
    assert len(rows) == 4


def test_claude_code_branching_prompts_match_a_full_walk(tmp_path):
    """Edits and "redo" branch the parentUuid tree; each prompt is still exactly its own chain."""
    import random

    rng = random.Random(7)
    records, parents = [], {}
    for n in range(300):
        kind = "user" if n % 2 == 0 else "assistant"
        pool = [r["uuid"] for r in records if r["type"] != kind]
        parent = None if not pool or rng.random() < 0.03 else rng.choice(pool[-6:] if rng.random() < 0.8 else pool)
        message = {"role": "user", "content": f"p{n}"} if kind == "user" else _reply(f"m{n}", [{"type": "text",
                                                                                                "text": f"r{n}"}])
        records.append(_cc(f"r{n}", parent, kind, message))
        parents[f"r{n}"] = parent
    session = load_foreign(_write(tmp_path, "s1.jsonl", records))
    assistants = [r for r in records if r["type"] == "assistant"]
    assert len(session.requests) == len(assistants)
    for request, record in zip(session.requests, assistants):
        expected, uuid = [], record["parentUuid"]
        while uuid is not None:
            expected.append(uuid)
            uuid = parents[uuid]
        assert [m["id"] for m in request.messages] == expected[::-1]
        assert request.messages_sha256 == _own_sha(request.messages)


def test_claude_code_records_copied_from_another_session_mark_a_resume(tmp_path):
    old = dict(_cc("a1", "u1", "assistant", _reply("m1", [{"type": "text", "text": "old"}])), sessionId="s0")
    path = _write(tmp_path, "s1.jsonl", [
        dict(_cc("u1", None, "user", {"role": "user", "content": "hi"}), sessionId="s0"), old,
        _cc("u2", "a1", "user", {"role": "user", "content": "again"}),
        _cc("a2", "u2", "assistant", _reply("m2", [{"type": "text", "text": "new"}])),
    ])
    session = load_foreign(path)
    assert [(r.extra.get("copied_from"), r.extra.get("event"), r.extra.get("event_seq"), r.message_seqs)
            for r in session.requests] == [("s0", None, None, (1,)), (None, "resume", 4, (1, 2, 3))]


def test_cache_report_reads_an_imported_session():
    from dsh_audit.cache import cache_report

    path = next((Path(__file__).parent / "data" / "importers" / "codex").glob("rollout-*.jsonl"))
    report = cache_report(path)
    assert report.session_id == "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    assert report.actual_total == 6400
    assert [(v.index, v.actual, v.classification) for v in report.verdicts] == [
        (0, 0, "as_expected"), (1, 2944, "as_expected"), (2, 2944, "as_expected"), (3, 512, "break_unattributed")]


def test_dsh_only_commands_name_the_foreign_format(monkeypatch, capsys):
    path = next((Path(__file__).parent / "data" / "importers" / "claude-code").glob("*.jsonl"))
    code, _, err = invoke(monkeypatch, capsys, "check", str(path))
    assert code == 2
    assert err[-1] == (
        f"error: {path}:1: this is a claude-code session, not a DSH log (hint: sessions, requests, show, render, "
        "cache, usage, diff and index import it; validate, breaks, explain, check, report, redact and watch read "
        "DSH logs only)")


def _cut(source: Path, target: Path) -> Path:
    """``source`` with every line cut to its first half: no line is JSON any more."""
    lines = source.read_text(encoding="utf-8").splitlines()
    target.write_text("".join(line[:len(line) // 2] + "\n" for line in lines), encoding="utf-8")
    return target


DAMAGED_HINT = "(hint: nothing in it can be imported; read an intact copy of the {}: {} keeps them under {})"


@pytest.mark.parametrize("args", [["requests"], ["sessions"], ["show", "0"], ["render", "0"]])
def test_a_codex_rollout_with_every_line_cut_is_named_with_its_damage(tmp_path, monkeypatch, capsys, args):
    """Issue 15: not "corrupt session log" (the DSH reader's words) but the Codex rollout it is,
    how many lines are damaged and the first."""
    path = _cut(CODEX, tmp_path / CODEX.name)
    assert invoke(monkeypatch, capsys, args[0], str(path), *args[1:]) == (2, "", [
        f"error: {path}:1: every record of this Codex rollout is damaged: 24 line(s) not JSON, the first at line 1 "
        + DAMAGED_HINT.format("rollout", "Codex", "~/.codex/sessions")])


def test_a_claude_code_transcript_with_every_line_cut_is_named_with_its_damage(tmp_path, monkeypatch, capsys):
    path = tmp_path / "t.jsonl"
    path.write_text("\n" + "".join(line[:len(line) // 2] + "\n" for line in CLAUDE.read_text("utf-8").splitlines()),
                    encoding="utf-8")
    assert invoke(monkeypatch, capsys, "requests", str(path)) == (2, "", [
        f"error: {path}:2: every record of this Claude Code transcript is damaged: 15 line(s) not JSON, the first at "
        "line 2 " + DAMAGED_HINT.format("transcript", "Claude Code", "~/.claude/projects")])


def test_a_codex_rollout_whose_every_record_lacks_a_payload_object_is_refused(tmp_path, monkeypatch, capsys):
    """Every line JSON and a Codex record, none with a payload object: an error, not an empty session."""
    records = [json.loads(line) for line in CODEX.read_text("utf-8").splitlines()]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps({**r, "payload": "damaged"}) + "\n" for r in records[:3]) + "[1]\n",
                    encoding="utf-8")
    message = (f"{path}:1: every record of this Codex rollout is damaged: 4 line(s) not a JSON object with a payload "
               "object, the first at line 1 " + DAMAGED_HINT.format("rollout", "Codex", "~/.codex/sessions"))
    with pytest.raises(MalformedRecordError) as caught:
        import_codex(path)
    assert (str(caught.value), caught.value.line) == (message, 1)
    assert invoke(monkeypatch, capsys, "requests", str(path)) == (2, "", [f"error: {message}"])


def test_a_rollout_with_one_whole_record_is_imported_with_warnings(tmp_path):
    """One readable record is enough: the damaged lines are warnings, as before."""
    lines = CODEX.read_text("utf-8").splitlines()
    path = tmp_path / "r.jsonl"
    path.write_text(lines[0] + "\n" + "".join(line[:20] + "\n" for line in lines[1:3]), encoding="utf-8")
    session = import_codex(path)
    assert (session.session_id, session.requests, session.warnings) == (
        CX_SID, (), (f"{path}:2: not JSON, skipped", f"{path}:3: not JSON, skipped"))


def test_a_claude_code_transcript_whose_every_turn_lacks_a_message_is_refused(tmp_path, monkeypatch, capsys):
    """Every user and assistant record without its message object (the summary line is whole): an
    error naming the damage, not an empty session."""
    records = [json.loads(line) for line in CLAUDE.read_text("utf-8").splitlines()]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps({**r, "message": "damaged"} if "message" in r else r) + "\n" for r in records),
                    encoding="utf-8")
    turns = sum(r.get("type") in ("user", "assistant") for r in records)
    message = (f"{path}:2: every user or assistant record of this Claude Code transcript is damaged: {turns} line(s) "
               "not a JSON object or with no message object, the first at line 2 "
               + DAMAGED_HINT.format("transcript", "Claude Code", "~/.claude/projects"))
    with pytest.raises(MalformedRecordError) as caught:
        import_claude_code(path)
    assert str(caught.value) == message
    assert invoke(monkeypatch, capsys, "requests", str(path)) == (2, "", [f"error: {message}"])
