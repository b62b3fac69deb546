"""Bad input through the CLI: one error line naming file, line and seq, exit 2, never a traceback.

Crash damage at the end of a log (a torn zstd frame, a line without its newline, a bad record or
seq gap after the last ``turn/end``) is DSH's torn tail: a warning, exit 0, complete records kept.
Every case is built from a sample log with :class:`dsh_audit.testing.LogBuilder` in ``tmp_path``.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

import dsh_audit
from dsh_audit.cli import cli
from dsh_audit.cli._common import run_guarded
from dsh_audit.errors import DshAuditError
from dsh_audit.jsjson import stringify
from dsh_audit.testing import LogBuilder
from dsh_audit.testing._storage import frames_bytes

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
import make_sample_logs  # noqa: E402

N_REQUESTS = 4  # the tools sample: one turn, four steps


def tools_builder() -> LogBuilder:
    return make_sample_logs.tools()


def plain_lines() -> list[str]:
    """The tools sample, one event per line: ``lines[k]`` holds seq ``k - 1``."""
    return tools_builder().lines(packed=False)


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], list[str]]:
    """Run ``dsh-audit requests --json ARGS`` in process; returns exit code, stdout rows, stderr lines."""
    monkeypatch.setattr(sys, "argv", ["dsh-audit", "requests", "--json", *args])
    code = run_guarded(cli)
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, [json.loads(line) for line in out.splitlines()], err.splitlines()


def assert_error(result: tuple[int, list, list[str]], path: Path, line: int | None, seq: int | None,
                 message: str) -> None:
    """Exit 2, nothing on stdout, exactly ``error: PATH[:LINE][ seq SEQ]: MESSAGE[ (hint: …)]``."""
    code, rows, err = result
    where = f"{path}" + (f":{line}" if line is not None else "") + (f" seq {seq}" if seq is not None else "")
    assert (code, rows, len(err)) == (2, [], 1), err
    assert re.fullmatch(re.escape(f"error: {where}: {message}") + r"( \(hint: .+\))?", err[0]), err[0]


def event_line(seq: int, etype: str, data: object, **extra: object) -> str:
    return stringify({"type": etype, "seq": seq, "time": 1_800_000_000_500 + seq, "data": data, **extra})


# -- torn tails: warning, exit 0, complete records kept ------------------------------------------


def test_torn_zstd_frame_keeps_the_complete_frames(tmp_path, monkeypatch, capsys):
    builder = tools_builder()
    data = builder.zstd_bytes()
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(data[:-7])  # the last batch (step 4 and turn/end) loses its checksum and a block's end
    code, rows, err = run(monkeypatch, capsys, str(path))
    frames = 1 + len(builder.batches())
    assert (code, len(rows)) == (0, N_REQUESTS - 1)
    assert [r["step"] for r in rows] == [1, 2, 3]
    assert len(err) == 1 and err[0].startswith(
        f"warning: {path}: torn tail: zstd frame {frames} is cut off at end of file (0 complete line(s) recovered")


def test_zstd_frame_missing_only_its_checksum_keeps_every_record(tmp_path, monkeypatch, capsys):
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(tools_builder().zstd_bytes()[:-2])
    code, rows, err = run(monkeypatch, capsys, str(path))
    assert (code, len(rows)) == (0, N_REQUESTS)
    assert len(err) == 1 and "cut off at end of file" in err[0] and "line(s) recovered from it" in err[0]


def test_truncated_last_line_is_a_torn_tail(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    path = tmp_path / "session.jsonl"
    path.write_bytes("".join(line + "\n" for line in lines).encode()[:-10])
    code, rows, err = run(monkeypatch, capsys, str(path))
    assert (code, len(rows)) == (0, N_REQUESTS)
    assert err == [f"warning: {path}: torn tail: line {len(lines)} has no terminating newline "
                   f"({len(lines[-1]) - 9} bytes ignored)"]


def _with_second_turn() -> list[str]:
    builder = tools_builder()
    builder.start_turn("One more thing.")
    builder.start_step()
    builder.user("first")
    builder.user("second")
    return builder.lines(packed=False)


def test_seq_gap_after_the_last_turn_end_is_a_torn_tail(tmp_path, monkeypatch, capsys):
    lines = _with_second_turn()
    del lines[-2]
    path = write(tmp_path / "session.jsonl", lines)
    code, rows, err = run(monkeypatch, capsys, str(path))
    last = len(lines)
    assert (code, len(rows)) == (0, N_REQUESTS)
    assert err == [f"warning: {path}:{last}: corrupt session log: seq gap in committed region at line {last - 1} "
                   f"(expected {last - 2}, got {last - 1}); \"line {last - 1}\" is DSH's count of event lines (the header is "
                   f"not one); no turn/end follows, so DSH treats the rest as a "
                   f"crash-damaged tail: 1 record(s) after seq {last - 3} ignored"]


def test_a_gap_at_the_first_event_says_so_not_seq_minus_one(tmp_path, monkeypatch, capsys):
    """DSH's blocked-log fixture: one event with seq 1 and no turn/end (lenient: a tail, dropped)."""
    header = json.loads(plain_lines()[0])
    event = {"seq": 1, "time": 1, "type": "turn/start", "data": {"turn": 1}}
    path = write(tmp_path / "session.jsonl", [json.dumps(header), json.dumps(event)])
    code, rows, err = run(monkeypatch, capsys, str(path))
    assert (code, rows) == (0, [])
    assert err == [f"warning: {path}:2: corrupt session log: seq gap in committed region at line 1 (expected 0, "
                   "got 1); \"line 1\" is DSH's count of event lines (the header is not one); no turn/end follows, so DSH treats the rest as a crash-damaged tail: 1 record(s) from "
                   "the first event on ignored"]


def test_bad_json_after_the_last_turn_end_is_a_torn_tail(tmp_path, monkeypatch, capsys):
    lines = [*_with_second_turn(), "{not json"]
    code, rows, err = run(monkeypatch, capsys, str(write(tmp_path / "session.jsonl", lines)))
    assert (code, len(rows), len(err)) == (0, N_REQUESTS, 1)
    assert "unparsable committed event" in err[0] and "crash-damaged tail: 1 record(s)" in err[0]


# -- corruption before a turn/end: exit 2 -------------------------------------------------------


def test_non_json_line_before_a_turn_end(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    lines[10] = "{not json"
    path = write(tmp_path / "session.jsonl", lines)
    assert_error(run(monkeypatch, capsys, str(path)), path, 11, 9,
                 "corrupt session log: unparsable committed event (not valid JSON)")


def test_seq_gap_before_a_turn_end(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    del lines[10]
    path = write(tmp_path / "session.jsonl", lines)
    assert_error(run(monkeypatch, capsys, str(path)), path, 11, 10,  # the record's own seq (session 40)
                 "corrupt session log: seq gap in committed region at line 10 (expected 9, got 10); \"line 10\" is DSH's "
                 "count of event lines (the header is not one)")


def test_duplicate_seq(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    lines.insert(11, lines[10])
    path = write(tmp_path / "session.jsonl", lines)
    assert_error(run(monkeypatch, capsys, str(path)), path, 12, 9,  # the record's own seq (session 40)
                 "corrupt session log: seq gap in committed region at line 11 (expected 10, got 9); \"line 11\" is DSH's "
                 "count of event lines (the header is not one)")


_SEED = "; `dsh-audit validate FILE` lists every surface fault ({}); DSH calls each event of the log it loads a seed event"


@pytest.mark.parametrize("op, said, hint", [
    ({"op": "replace", "start": 3, "end": 3}, "surface replace: start seq 3 not found in surface",  # a step/start
     "replace only nodes on the surface now, start not after end" + _SEED.format("DSH304, DSH305")),
    # session 42: a mistyped op was "invalid surfaceOp" with a hint about the surface, not the field
    ("add", 'session event "user/message" carries an invalid surfaceOp: surfaceOp is a string "add", not "append" '
            "or a replace", 'write surfaceOp "append" or {"op":"replace","start":SEQ,"end":SEQ}' + _SEED.format("DSH303")),
    # session 42: "invalid replace surfaceOp" said the replace was "not "append" or a replace"
    *[(op, 'session event "user/message" carries an invalid replace surfaceOp: surfaceOp ' + fault,
       'write a replace as {"op":"replace","start":SEQ,"end":SEQ}, those members only, start and end the seqs of '
       "surface nodes" + _SEED.format("DSH303")) for op, fault in [
        ({"op": "replace", "start": 3, "end": "x"},
         '{"op":"replace","start":3,"end":"x"} is a replace whose end is a string "x", not a seq'),
        ({"op": "replace", "end": 3}, '{"op":"replace","end":3} is a replace with no start'),
        ({"op": "replace", "start": 3, "end": 3, "at": 1},
         '{"op":"replace","start":3,"end":3,"at":1} is a replace with a member "at" besides op, start and end'),
        ({"op": "append"}, '{"op":"append"} has op "append", not "replace"')]],
])
def test_a_surface_op_dsh_refuses_names_the_fault_and_the_fix(tmp_path, monkeypatch, capsys, op, said, hint):
    lines = plain_lines()
    seq = len(lines) - 1
    message = {"content": [{"type": "text", "text": "summary"}], "source": {"kind": "user"}, "role": "user", "id": "m"}
    lines.append(event_line(seq, "user/message", message, sourceEventSeqs=[3], surfaceOp=op))
    lines.append(event_line(seq + 1, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}))
    path = write(tmp_path / "session.jsonl", lines)
    assert run(monkeypatch, capsys, str(path)) == (2, [], [
        f"error: {path}:{seq + 2} seq {seq}: invalid seed event at index {seq}: {said} (hint: {hint})"])


def test_replace_failure_does_not_hide_an_earlier_stage_refusal(tmp_path, monkeypatch, capsys):
    """After replay stops at a bad replace, the rest of the log is still scanned from the right seq."""
    lines = plain_lines()
    seq = len(lines) - 1
    message = {"content": [{"type": "text", "text": "x"}], "source": {"kind": "user"}, "role": "user", "id": "m"}
    lines.append(event_line(seq, "user/message", message, sourceEventSeqs=[3],
                            surfaceOp={"op": "replace", "start": 3, "end": 3}))
    lines.append(event_line(seq + 1, "plugin/thing", {}))
    path = write(tmp_path / "session.jsonl", lines)
    assert_error(run(monkeypatch, capsys, str(path)), path, seq + 3, seq + 1,
                 f'session "session-sample-tools" contains event type "plugin/thing" (seq {seq + 1}) '
                 "unknown to this harness and not marked ignorable")


def test_unknown_required_event_type_and_its_ignorable_twin(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    extra = {"type": "plugin/thing", "seq": 9, "time": 1, "data": {"a": 1}}
    unknown = [*lines[:10], stringify(extra), *(_shift(line, 1) for line in lines[10:])]
    path = write(tmp_path / "unknown.jsonl", unknown)
    assert_error(run(monkeypatch, capsys, str(path)), path, 11, 9,
                 'session "session-sample-tools" contains event type "plugin/thing" (seq 9) '
                 "unknown to this harness and not marked ignorable")
    unknown[10] = stringify({**extra, "ignorable": True})
    code, rows, err = run(monkeypatch, capsys, str(write(tmp_path / "ignorable.jsonl", unknown)))
    assert (code, len(rows), err) == (0, N_REQUESTS, [])


def _shift(line: str, by: int) -> str:
    """Move one plain event line ``by`` seqs later, with every seq it cites."""
    record = json.loads(line)
    record["seq"] += by
    if "sourceEventSeqs" in record:
        record["sourceEventSeqs"] = [s + by if s >= 9 else s for s in record["sourceEventSeqs"]]
    return stringify(record)


def test_empty_file(tmp_path, monkeypatch, capsys):
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"")
    assert_error(run(monkeypatch, capsys, str(path)), path, 1, None, "empty or header-less session log")


def test_binary_garbage(tmp_path, monkeypatch, capsys):
    path = tmp_path / "session.jsonl"
    path.write_bytes(bytes(range(256)) * 8)
    assert_error(run(monkeypatch, capsys, str(path)), path, 1, None,
                 "corrupt session log: header line is not valid JSON")


def test_folder_without_logs(tmp_path, monkeypatch, capsys):
    """Nothing to describe is no bad input (README: Exit codes): an empty listing, a note, exit 0."""
    (tmp_path / "notes.txt").write_text("no logs here")
    assert run(monkeypatch, capsys, str(tmp_path)) == \
        (0, [], [f"note: {tmp_path}: folder holds no DSH session log: nothing to list there"])


def test_log_that_is_not_utf8(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    raw = [line.encode() for line in lines]
    raw[5] = raw[5].replace(b"Look around", b"Look \xff\xfe around")  # seq 4: the prompt user/message
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in raw))
    start = raw[5].index(b"\xff")
    assert_error(run(monkeypatch, capsys, str(path)), path, 6, 4, f"line is not valid UTF-8 (byte {start})")


def test_zstd_corruption_inside_a_complete_frame(tmp_path, monkeypatch, capsys):
    builder = tools_builder()
    header_frame = _first_frame_size(builder)
    data = bytearray(builder.zstd_bytes(frames="single"))
    data[header_frame + 40] ^= 0x55
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(bytes(data))
    code, rows, err = run(monkeypatch, capsys, str(path))
    assert (code, rows, len(err)) == (2, [], 1)
    assert err[0].startswith(f"error: {path}:2: zstd frame 2 (offset {header_frame}) is corrupt: ")


def _first_frame_size(builder: LogBuilder) -> int:
    return len(frames_bytes(builder.header_record, []))  # the header alone: frame 1


# -- content DSH refuses ------------------------------------------------------------------------


def test_header_delta_event(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    lines[6] = event_line(5, "request/header-delta", {"delta": {"model": "x"}})  # replaces the header
    path = write(tmp_path / "session.jsonl", lines)
    assert_error(run(monkeypatch, capsys, str(path)), path, 7, 5,
                 'session "session-sample-tools" contains unsupported legacy request/header-delta event at seq 5')


def test_fallback_header_reason(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    assert '"type":"request/header","seq":5' in lines[6]
    lines[6] = lines[6].replace('"reason":"initial"', '"reason":"fallback"')
    path = write(tmp_path / "session.jsonl", lines)
    assert_error(run(monkeypatch, capsys, str(path)), path, 7, 5,
                 'session "session-sample-tools" contains unsupported legacy request/header reason "fallback" at seq 5')


def test_newer_format_version_is_refused_naming_it(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    lines[0] = lines[0].replace('"version":0', '"version":5')
    path = write(tmp_path / "v5.jsonl", lines)
    assert_error(run(monkeypatch, capsys, str(path)), path, 1, None,
                 'session "session-sample-tools" uses log format v5, but this harness reads only v0-v4: '
                 "the log was written by a newer harness — upgrade the harness to open it")
    lines[0] = lines[0].replace('"version":5', '"version":1')
    path = write(tmp_path / "v1.jsonl", lines)
    assert_error(run(monkeypatch, capsys, "--max-version", "0", str(path)), path, 1, None,
                 'session "session-sample-tools" uses log format v1, but this harness reads only v0: '
                 "the log was written by a newer harness — upgrade the harness to open it")


def test_missing_delegation_depth_is_refused_unless_lenient(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    lines[0] = lines[0].replace(',"delegationDepth":0', "")
    path = write(tmp_path / "session.jsonl", lines)
    result = run(monkeypatch, capsys, str(path))
    assert_error(result, path, 1, None, "corrupt session log: first line is not a session header: no delegationDepth")
    code, rows, err = run(monkeypatch, capsys, "--lenient", str(path))
    assert (code, len(rows), err) == (0, N_REQUESTS, [])


# -- end to end and robustness ------------------------------------------------------------------


@pytest.mark.parametrize("case", ["gap", "garbage"])
def test_subprocess_prints_one_line_and_no_traceback(tmp_path, case):
    lines = plain_lines()
    path = tmp_path / "session.jsonl"
    if case == "gap":
        del lines[10]
        write(path, lines)
    else:
        path.write_bytes(b"\x28\xb5\x2f\xfd" + bytes(range(200)))
    proc = subprocess.run([sys.executable, "-m", "dsh_audit", "requests", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith(f"error: {path}")
    assert "Traceback" not in proc.stderr


def _mutations(rng: random.Random, builder: LogBuilder, count: int) -> list[bytes]:
    out = []
    for _ in range(count):
        data = bytearray(builder.zstd_bytes() if rng.random() < 0.3 else builder.jsonl_bytes(packed=rng.random() < 0.5))
        for _ in range(rng.randint(1, 3)):
            pos = rng.randrange(len(data))
            choice = rng.random()
            if choice < 0.5:
                data[pos] = rng.randrange(256)
            elif choice < 0.75:
                del data[pos:pos + rng.randint(1, 40)]
            else:
                data[pos:pos] = bytes([rng.choice(b'{}[]",:0\n\xff')])
            if not data:
                break
        out.append(bytes(data))
    return out


def test_random_damage_raises_only_dsh_audit_errors(tmp_path):
    rng = random.Random(20261202)
    samples = make_sample_logs.build_samples()
    path = tmp_path / "damaged.jsonl"
    outcomes = {"ok": 0, "refused": 0}
    for builder in samples.values():
        for data in _mutations(rng, builder, 40):
            path.write_bytes(data)
            try:
                dsh_audit.requests(dsh_audit.load(path))
                outcomes["ok"] += 1
            except DshAuditError as exc:
                assert exc.path == str(path)
                outcomes["refused"] += 1
    assert outcomes["ok"] > 0 and outcomes["refused"] > 0


def test_odd_shapes_never_raise_a_bare_exception(tmp_path, monkeypatch, capsys):
    """Shapes that once escaped as TypeError/AttributeError: a list-valued ``type``, a ``step/start``
    whose data is not an object, malformed auxiliary-call payloads."""
    lines = plain_lines()
    odd = json.loads(lines[10])
    odd["type"] = ["text-chunks"]
    path = write(tmp_path / "type.jsonl", [*lines[:10], stringify(odd), *lines[11:]])
    assert_error(run(monkeypatch, capsys, str(path)), path, 11, 9, "seed event at index 9 has an invalid event envelope")

    lines = plain_lines()
    assert '"type":"step/start","seq":3' in lines[4]
    lines[4] = event_line(3, "step/start", True)
    code, rows, err = run(monkeypatch, capsys, str(write(tmp_path / "step.jsonl", lines)))
    assert (code, [r["step"] for r in rows], err) == (0, [2, 3, 4], [])

    chat = make_sample_logs.chat()
    records = [json.loads(line) for line in chat.lines(packed=False)]
    for record in records:
        if record["type"] == "session/title-llm-request":
            record["data"]["messages"] = 7
    code, rows, err = run(monkeypatch, capsys, str(write(tmp_path / "title.jsonl", [stringify(r) for r in records])))
    assert (code, [(r["kind"], r["message_count"]) for r in rows], err) == (0, [("title", 0), ("loop", 2), ("loop", 4)], [])

    records = [json.loads(line) for line in make_sample_logs.compaction().lines(packed=False)]
    for record in records:
        if record["type"] == "compaction/summary":
            record["data"]["shadowedSeqs"] = [4, [14], "x"]
    code, rows, err = run(monkeypatch, capsys, str(write(tmp_path / "summary.jsonl", [stringify(r) for r in records])))
    assert (code, [(r["kind"], r["message_count"]) for r in rows], err) == (
        0, [("loop", 1), ("loop", 3), ("compaction", 1), ("loop", 3)], [])


_ODD_VALUES = [None, "", "x", -1, 0, 7, 1.5, True, [], {}, [1], {"a": 1}, 2**60, "turn/end", "text-chunks",
               {"op": "replace", "start": 4, "end": 4}]


def _json_paths(value: object, prefix: tuple = ()):
    yield prefix
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield from _json_paths(item, (*prefix, key))


def test_random_wrong_values_raise_only_dsh_audit_errors(tmp_path):
    rng = random.Random(5)
    samples = list(make_sample_logs.build_samples().values())
    path = tmp_path / "odd.jsonl"
    for _ in range(400):
        lines = rng.choice(samples).lines(packed=rng.random() < 0.5)
        k = rng.randrange(len(lines))
        record = json.loads(lines[k])
        where = rng.choice([p for p in _json_paths(record) if p])
        target = record
        for key in where[:-1]:
            target = target[key]
        if isinstance(target, dict) and rng.random() < 0.2:
            del target[where[-1]]
        else:
            target[where[-1]] = rng.choice(_ODD_VALUES)
        lines[k] = stringify(record)
        write(path, lines)
        try:
            dsh_audit.requests(dsh_audit.load(path))
        except DshAuditError as exc:
            assert exc.path == str(path)


@pytest.mark.parametrize("cwd", ["G:\\Users\\dev\\proj", "G:/work", "\\\\server\\share\\proj", "/home/dev/proj"])
def test_a_log_recorded_on_windows_is_read_like_any_other(tmp_path, cwd):
    """DSH checks cwd with Node's platform path.isAbsolute: a Windows log holds a drive or UNC path."""
    from dsh_audit.testing import LogBuilder
    from dsh_audit.validate import validate

    builder = LogBuilder(session_id="s-win", cwd=cwd)
    with builder.turn("hi"):
        with builder.step():
            builder.assistant("Hello.")
    path = builder.write_jsonl(tmp_path / "session.jsonl")
    log = dsh_audit.load(path)
    assert (log.header.cwd, [r.kind for r in dsh_audit.requests(log)]) == (cwd, ["loop"])
    assert [f.rule for f in validate(path)] == []


@pytest.mark.parametrize("cwd", ["proj", "G:proj", "./x"])
def test_a_relative_cwd_is_still_refused(tmp_path, cwd):
    from dsh_audit.testing import LogBuilder

    builder = LogBuilder(session_id="s-rel", cwd=cwd)
    path = builder.write_jsonl(tmp_path / "session.jsonl")
    with pytest.raises(dsh_audit.DshAuditError, match="cwd must be an absolute path"):
        dsh_audit.requests(dsh_audit.load(path))
