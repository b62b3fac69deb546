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
    with pytest.raises(UnsupportedFormatError, match="file name session.v3.jsonl is generation v3"):
        dsh_audit.load(path)


def test_v2_header_needs_is_seeded(tmp_path):
    path = _write(tmp_path, "x.jsonl", {"type": "session", "version": 2, "id": "s", "createdAt": 0,
                                         "delegationDepth": 0}, [])
    with pytest.raises(MalformedRecordError, match="not a valid v2 header"):
        dsh_audit.load(path)


def test_rc8_mode_refuses_v1_like_dsh(tmp_path):
    header, events = _raw(_logs("a-chat")[0])
    v1_header, v1_events = migrate_events(header, events, 1)
    path = _write(tmp_path, "x.jsonl", v1_header, v1_events)
    with pytest.raises(UnsupportedFormatError, match="reads only v0: the log was written by a newer harness"):
        dsh_audit.load(path, max_version=0)
