"""A v2-v4 header over an older body (session 40): DSH dispatches on the header's version alone
(dsh-format-versions.md §4), so it refuses such a log at its first record of the older layout;
every command says so once, naming the header (dsh_audit.log._versions.body_mismatch).
"""

from __future__ import annotations

import json

import pytest

from dsh_audit.log._versions import body_mismatch

_CHUNK = {"type": "assistant/chunk", "seq": 3, "time": 1, "data": {}}
_MESSAGE = {"type": "assistant/message", "seq": 4, "time": 1, "data": {"message": {}}, "surfaceOp": "append"}
_ROW = {"type": "tool-call-chunks", "seq0": 5, "time0": 1, "data": {}}
_HEADER = {"type": "request/header", "seq": 2, "time": 1, "data": {"header": {"system": "s"}}}
_REPLACE = {"type": "user/message", "seq": 6, "time": 1, "data": {},
            "surfaceOp": {"op": "replace", "start": 1, "end": 2}}
_RESULT = {"type": "tool/result", "seq": 7, "time": 1, "data": {"message": {"role": "user"}}}


@pytest.mark.parametrize(("record", "version", "said"), [
    (_CHUNK, 2, "header version 2 does not fit this record: an assistant/chunk event is written only by "
                "version 0 or 1 (v2+ keeps the chunks in data.stream)"),
    (_ROW, 4, "header version 4 does not fit this record: a packed tool-call-chunks row is written only by "
              "version 0 or 1 (v2+ writes one event per line)"),
    (_MESSAGE, 2, "header version 2 does not fit this record: an assistant/message without data.stream is "
                  "written only by version 0 or 1 (v2+ requires it)"),
    ({**_MESSAGE, "data": {"stream": []}, "sourceEventSeqs": [1]}, 3,
     "header version 3 does not fit this record: an assistant/message citing sourceEventSeqs is written only "
     "by version 0 or 1 (v2+ drops the chunk citations)"),
    (_HEADER, 3, "header version 3 does not fit this record: a request/header carrying header.system is "
                 "written only by version 0-2 (v3+ keeps the system prompt as system/message events)"),
    (_REPLACE, 4, "header version 4 does not fit this record: a user/message replace with start/end is "
                  "written only by version 0-2 (v3+ writes startSeq/endSeq)"),
    (_RESULT, 4, "header version 4 does not fit this record: a tool/result whose message has role user is "
                 "written only by version 0-3 (v4 writes tool results as role tool messages)"),
    ({"type": "user/message", "seq": 8, "time": 1, "data": {"source": {"kind": "plugin", "plugin": "goal"}}}, 4,
     "header version 4 does not fit this record: a user/message whose source kind is plugin is written only by "
     "version 0-3 (v4 names the producer as the kind)"),
    # each in its own versions fits
    (_CHUNK, 1, None), (_ROW, 0, None), (_MESSAGE, 1, None), (_HEADER, 2, None), (_REPLACE, 2, None),
    (_RESULT, 3, None), ({**_MESSAGE, "data": {"stream": []}}, 4, None), ([1], 4, None),
])
def test_body_mismatch_names_the_record_and_the_versions_that_write_it(record, version, said):
    found = body_mismatch(json.loads(json.dumps(record)), version)
    assert (found.message() if found else None) == said
    if found:
        assert found.hint() == (f"the header says version {version} but the body is written as version "
                                f"{found.written}: fix the header's version (and the file name's generation), "
                                f"or validate it with `dsh-audit validate FILE`")


# -- every command on a v0 body under a v2+ header (needs the reader and validate patches) ---------

from _cli import invoke  # noqa: E402
from _golden import CORPUS  # noqa: E402
from dsh_audit.log._records import decode_record  # noqa: E402
from dsh_audit.testing._migrate import migrate_events  # noqa: E402

_SOURCE = CORPUS / "live" / "b-tools" / "session-logs"


def _relabelled(tmp_path, version, body_version):
    """The b-tools log written as ``body_version``, its header saying ``version`` (v2+ fields)."""
    source = sorted(_SOURCE.glob("*.jsonl"))[0]
    lines = source.read_bytes().splitlines()
    header = json.loads(lines[0])
    if body_version:
        events = [e for line in lines[1:] for e in decode_record(json.loads(line))]
        header, events = migrate_events(header, events, body_version)
        body = [json.dumps(e, ensure_ascii=False, separators=(",", ":")).encode() for e in events]
    else:
        body = lines[1:]  # as stored: packed rows and all
    header = {k: v for k, v in header.items() if k != "seedLength"}
    header.update(version=version, isSeeded=False)
    path = tmp_path / f"session.v{version}.jsonl"
    path.write_bytes(b"\n".join([json.dumps(header).encode(), *body]) + b"\n")
    return path


_CASES = {  # (header version, body version): (line, seq, the record's words, the body's versions)
    (2, 0): (15, 13, "an assistant/chunk event is written only by version 0 or 1 (v2+ keeps the chunks in "
                     "data.stream)", "0 or 1"),
    (3, 0): (12, 10, "a request/header carrying header.system is written only by version 0-2 (v3+ keeps the "
                     "system prompt as system/message events)", "0-2"),
    (4, 3): (11, 9, "a user/message whose source kind is plugin is written only by version 0-3 (v4 names the "
                    "producer as the kind)", "0-3"),
}
_SKIP = pytest.mark.skipif(not _SOURCE.is_dir(), reason="../shared/corpus is absent")


@_SKIP
@pytest.mark.parametrize("case", sorted(_CASES))
def test_replaying_commands_refuse_the_log_naming_the_header(tmp_path, monkeypatch, capsys, case):
    path = _relabelled(tmp_path, *case)
    line, seq, words, written = _CASES[case]
    said = (f"error: {path}:{line} seq {seq}: header version {case[0]} does not fit this record: {words} (hint: "
            f"the header says version {case[0]} but the body is written as version {written}: fix the header's "
            f"version (and the file name's generation), or validate it with `dsh-audit validate FILE`)")
    for command in ("requests", "breaks", "cache"):
        assert invoke(monkeypatch, capsys, command, str(path)) == (2, "", [said]), command


@_SKIP
@pytest.mark.parametrize("case", sorted(_CASES))
def test_validate_says_it_once_instead_of_the_cascade(tmp_path, monkeypatch, capsys, case):
    path = _relabelled(tmp_path, *case)
    line, seq, words, _ = _CASES[case]
    finding = (f"{path}:{line}: seq {seq}: DSH114 error: header version {case[0]} does not fit this record: "
               f"{words} (fix the header's version (and the file name's generation) to the version the body "
               f"is written in)")
    summary = "1 error(s), 0 warning(s), 0 info in 1 file(s): DSH114 x1"
    assert invoke(monkeypatch, capsys, "validate", str(path)) == (1, finding + "\n", [summary])
    # ignoring the unknown-type rule no longer hides the mismatch (it found nothing before)
    assert invoke(monkeypatch, capsys, "validate", str(path), "--ignore", "DSH506") == (
        1, finding + "\n", [summary, "--ignore hid 0 finding(s)"])
    code, out, _ = invoke(monkeypatch, capsys, "check", str(path))  # the refusal, once (its DSH114 is the fault)
    assert code == 1 and f"{path}:{line}: seq {seq}: DSH801 error" in out and "DSH114" not in out \
        and "DSH506" not in out
