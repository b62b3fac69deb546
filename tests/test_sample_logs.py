"""The committed sample logs: their exact requests, their freshness, and the writer's round trips."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

import dsh_audit
from dsh_audit.jsjson import stringify
from dsh_audit.testing import LogBuilder, ToolCall, encode_segment, pack_chunk_runs, project_key

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
CORPUS = ROOT.parent / "shared" / "corpus"
PROJECT = "--home-dev-projects-demo--"


def _load_script():
    spec = importlib.util.spec_from_file_location("make_sample_logs", ROOT / "scripts" / "make_sample_logs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("make_sample_logs", module)
    spec.loader.exec_module(module)
    return module


SCRIPT = _load_script()
SESSION_DIRS = {
    "chat": "session-sample-chat", "tools": "session-sample-tools", "change": "session-sample-change",
    "compaction": "session-sample-compaction", "resume": "session-sample-resume",
    "retry": "session-sample-retry", "fork-parent": "session-sample-fork-parent",
    "fork-child": "fork-child~003Areview",
}
# (kind, turn, step, attempt, header_reason, message_count) of every request, in order.
EXPECTED = {
    "chat": [("title", None, None, 1, None, 1), ("loop", 1, 1, 1, "initial", 2), ("loop", 2, 1, 1, "initial", 4)],
    "tools": [("loop", 1, 1, 1, "initial", 1), ("loop", 1, 2, 1, "initial", 3), ("loop", 1, 3, 1, "initial", 5),
              ("loop", 1, 4, 1, "initial", 8)],
    "change": [("loop", 1, 1, 1, "initial", 1), ("loop", 2, 1, 1, "change", 3), ("loop", 3, 1, 1, "change", 5),
               ("loop", 4, 1, 1, "change", 7), ("loop", 5, 1, 1, "change", 9)],
    "compaction": [("loop", 1, 1, 1, "initial", 1), ("loop", 1, 2, 1, "initial", 3),
                   ("compaction", 2, None, 1, "initial", 3), ("loop", 2, 1, 1, "initial", 3)],
    "resume": [("loop", 1, 1, 1, "initial", 1), ("loop", 2, 1, 1, "resume", 3), ("loop", 3, 1, 1, "resume", 5)],
    "retry": [("loop", 1, 1, 1, "initial", 1), ("loop", 1, 1, 2, "initial", 1), ("loop", 1, 2, 1, "initial", 3),
              ("loop", 1, 2, 2, "change", 3)],
    "fork-parent": [("loop", 1, 1, 1, "initial", 1), ("loop", 1, 2, 1, "initial", 3),
                    ("loop", 2, 1, 1, "initial", 5), ("loop", 2, 2, 1, "initial", 7)],
    "fork-child": [("loop", 2, 1, 1, "resume", 5)],
}


def sample_path(name: str) -> Path:
    return SAMPLES / "sessions" / PROJECT / SESSION_DIRS[name] / "session.jsonl.zstd"


def rows(path: Path, *, lenient: bool = False) -> list[tuple]:
    requests = dsh_audit.requests(dsh_audit.load(path, lenient=lenient))
    return [(r.kind, r.turn, r.step, r.attempt, r.header_reason, r.message_count) for r in requests]


def event_dicts(path: Path) -> list[dict]:
    out = []
    for e in dsh_audit.load(path).events():
        record = {"type": e.type, "seq": e.seq, "time": e.time, "data": e.data}
        if e.source_event_seqs is not None:
            record["sourceEventSeqs"] = e.source_event_seqs
        if e.surface_op is not None:
            record["surfaceOp"] = e.surface_op
        out.append(record)
    return out


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_requests(name: str) -> None:
    assert rows(sample_path(name)) == EXPECTED[name]


def test_plain_copies_match_their_zstd_logs() -> None:
    assert rows(SAMPLES / "chat" / "session.jsonl") == EXPECTED["chat"]
    assert rows(SAMPLES / "tools" / "session.jsonl") == EXPECTED["tools"]
    assert event_dicts(SAMPLES / "tools" / "session.jsonl") == event_dicts(sample_path("tools"))
    plain = (SAMPLES / "tools" / "session.jsonl").read_text().splitlines()
    assert not any('"type":"text-chunks"' in line or '-chunks","seq0"' in line for line in plain)
    assert any('"type":"reasoning-chunks"' in line for line in (SAMPLES / "chat" / "session.jsonl").read_text().splitlines())


def test_committed_samples_are_what_the_script_writes(tmp_path: Path) -> None:
    written = SCRIPT.write_samples(tmp_path)
    assert len(written) == 11
    for path in written:
        relative = path.relative_to(tmp_path)
        assert (SAMPLES / relative).read_bytes() == path.read_bytes(), relative
        assert path.stat().st_size < 20_000
    committed = sorted(p.relative_to(SAMPLES) for p in SAMPLES.rglob("*")
                       if p.is_file() and p.relative_to(SAMPLES).parts[0] != "generated")  # make_strategy_sample.py
    assert committed == sorted(p.relative_to(tmp_path) for p in written)


def test_sample_details() -> None:
    chat = dsh_audit.requests(dsh_audit.load(sample_path("chat")))
    assert chat[0].extra["messageSeqs"] == [4] and chat[0].messages[0]["source"]["plugin"] == "session-title"
    assert [m["role"] for m in chat[2].messages] == ["user", "user", "assistant", "user"]
    assert chat[2].messages[2]["content"][0]["type"] == "reasoning"
    retry = dsh_audit.requests(dsh_audit.load(sample_path("retry")))
    assert retry[0].finish == {"kind": "error", "failure": {"message": "provider answered HTTP 503", "code": "SERVER"}}
    assert retry[0].messages_sha256 == retry[1].messages_sha256
    assert retry[2].header["config"]["model"] == "deepseek-v4-flash"
    assert retry[3].header["config"]["model"] == "deepseek-v4-pro"
    compaction = dsh_audit.requests(dsh_audit.load(sample_path("compaction")))
    region = compaction[2]
    assert region.message_seqs == (4, 14, 33)
    assert "pruned" in region.messages[2]["content"][0]["content"][0]["text"]
    assert compaction[3].message_seqs == (36, 26, 39)
    assert compaction[3].messages[0]["source"]["plugin"] == "compact"
    change = dsh_audit.requests(dsh_audit.load(sample_path("change")))
    headers = [r.header for r in change]
    assert headers[1]["config"]["model"] == "deepseek-v4-pro" and headers[2]["config"]["reasoningEffort"] == "max"
    assert [t["name"] for t in headers[3]["tools"]] == ["read", "glob"] and "Plan mode" in headers[4]["system"]
    resume = dsh_audit.requests(dsh_audit.load(sample_path("resume")))
    assert [r.header["config"]["model"] for r in resume] == ["deepseek-v4-flash"] * 2 + ["deepseek-v4-pro"]
    child_log = dsh_audit.load(sample_path("fork-child"))
    child_log.close()
    assert (child_log.header.parent_session, child_log.header.seed_length, child_log.header.origin,
            child_log.header.delegation_depth) == ("session-sample-fork-parent", 28, "subagent", 1)


def test_cli_lists_every_sample() -> None:
    from click.testing import CliRunner

    from dsh_audit.cli import cli

    result = CliRunner().invoke(cli, ["requests", "--json", str(SAMPLES)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    lines = [line for line in lines if not line["session_id"].startswith("generated-sample")]  # sample_logs/generated
    # chat/session.jsonl holds the same lines as the chat session's DSH log: read once; the tools copy
    # is written unpacked (other lines, the same events: session 41): read once too
    assert len(lines) == sum(len(v) for v in EXPECTED.values())


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_writer_round_trips(name: str, tmp_path: Path) -> None:
    builder = SCRIPT.build_samples()[name]
    paths = {
        "packed": builder.write_jsonl(tmp_path / "packed.jsonl"),
        "unpacked": builder.write_jsonl(tmp_path / "unpacked.jsonl", packed=False),
        "zstd": builder.write_zstd(tmp_path / "log.jsonl.zstd"),
        "zstd-single": builder.write_zstd(tmp_path / "single.jsonl.zstd", frames="single"),
        "zstd-3": builder.write_zstd(tmp_path / "three.jsonl.zstd", frames=3, packed=False),
    }
    for label, path in paths.items():
        assert event_dicts(path) == builder.events, label
        assert rows(path) == EXPECTED[name], label
    shas = {label: [r.messages_sha256 for r in dsh_audit.requests(dsh_audit.load(p))] for label, p in paths.items()}
    assert len({tuple(v) for v in shas.values()}) == 1
    assert "".join(line + "\n" for line in builder.lines()) == paths["packed"].read_text()


def test_zstd_frames_follow_dsh_layout(tmp_path: Path) -> None:
    import zstandard

    builder = SCRIPT.build_samples()["resume"]
    data = builder.zstd_bytes()
    frames, offset = [], 0
    while offset < len(data):
        size = zstandard.frame_content_size(data[offset:])
        reader = zstandard.ZstdDecompressor().decompressobj()
        frame_len = _frame_length(data, offset)
        frames.append(reader.decompress(data[offset:offset + frame_len]))
        assert len(frames[-1]) == size
        assert zstandard.get_frame_parameters(data[offset:]).has_checksum
        offset += frame_len
    assert frames[0] == (stringify(builder.header_record) + "\n").encode()
    assert len(frames) == 1 + len(builder.batches())
    assert all(frame.endswith(b"\n") for frame in frames)


def _frame_length(data: bytes, offset: int) -> int:
    from dsh_audit.log._decode import _FrameReader
    import io

    frame = _FrameReader(io.BytesIO(data[offset:]), "x").next_frame()
    assert frame is not None and frame[1]
    return len(frame[0])


def test_builder_is_deterministic_and_guards_misuse() -> None:
    assert SCRIPT.chat().lines() == SCRIPT.chat().lines()
    b = LogBuilder()
    with pytest.raises(ValueError, match="no open turn"):
        b.start_step()
    b.start_turn("x")
    with pytest.raises(ValueError, match="no open step"):
        b.assistant("y")
    with pytest.raises(ValueError, match="still open"):
        b.start_turn("z")
    with pytest.raises(ValueError, match="close the open turn"):
        b.resume()
    with b.step():
        reply = b.assistant(tool_calls=[ToolCall("read", {"a": 1}, id="call_x")])
    assert reply.call_ids == ("call_x",)
    assert b.tool_result("call_x", "ok") == b.next_seq - 1
    assert b.event(b.next_seq - 2)["type"] == "tool/call"


def test_path_encoding() -> None:
    assert project_key("/home/dev/projects/demo") == PROJECT
    assert project_key("C:\\Users\\me") == "--C-Users-me--"
    assert project_key("/") == "--root--"
    assert project_key("/tmp/~x") == "--tmp-~007Ex--"
    assert encode_segment("fork-child:review") == "fork-child~003Areview"
    assert encode_segment("..") == "~002E~002E" and encode_segment("é") == "~00E9"
    assert encode_segment("\U0001F600") == "~D83D~DE00"


@pytest.mark.skipif(not (CORPUS / "live").is_dir(), reason="shared corpus not present")
def test_packing_reproduces_every_live_corpus_log_byte_for_byte() -> None:
    logs = sorted((CORPUS / "live").glob("*/session-logs/*.jsonl"))
    assert len(logs) >= 11
    for path in logs:
        text = "".join(stringify(r) + "\n" for r in pack_chunk_runs(event_dicts(path)))
        assert text == path.read_text(encoding="utf-8").split("\n", 1)[1], path.name


def test_header_reasons_follow_the_loop_rules() -> None:
    from dsh_audit.replay import header_equals

    b = LogBuilder(adapter_defaults={"maxTokens": True})
    b.start_turn("hi")
    b.start_step()
    first = b.header()
    assert first is not None and b.header() is None  # unchanged: nothing owed
    b.configure(adapter_defaults={})  # explicit <-> adapter default flip is a change
    flip = b.header()
    b.configure(tools=[{"name": "t", "description": "d", "parameters": {"type": "object", "properties": {}}}])
    tools = b.header()
    b.configure(tools=[{"name": "t", "parameters": {"type": "object", "properties": {}}, "description": "d"}])
    reorder = b.header()  # key order inside a schema counts
    b.assistant("ok")
    b.end_turn()
    b.resume()
    b.start_turn("again")
    b.start_step()
    resumed = b.header()  # same content, new loop instance
    events = b.events
    reasons = [events[s]["data"]["reason"] for s in (first, flip, tools, reorder, resumed)]
    assert reasons == ["initial", "change", "change", "change", "resume"]
    headers = [events[s]["data"]["header"] for s in (first, flip, tools, reorder, resumed)]
    assert [header_equals(a, b) for a, b in zip(headers, headers[1:])] == [False, False, False, True]
    assert headers[0] == {"config": {"provider": "deepseek-official", "model": "deepseek-v4-flash",
                                     "reasoningEffort": "high", "maxTokens": 65536},
                          "adapterDefaults": {"maxTokens": True}, "system": "You are a helpful coding agent."}


def test_request_context_is_written_only_when_it_changes() -> None:
    b = LogBuilder(context_window=None)
    with b.turn("hi"):
        with b.step():
            b.assistant("a")
            assert b.context() is None
            seq = b.context(context_window=4096)
            b.assistant("b")
    contexts = [e["data"] for e in b.events if e["type"] == "request/context"]
    assert contexts == [{"provider": "deepseek-official", "model": "deepseek-v4-flash"},
                        {"provider": "deepseek-official", "model": "deepseek-v4-flash", "contextWindow": 4096}]
    assert b.event(seq)["type"] == "request/context"
