"""``validate`` messages and hints say what is true, and one cause gives one finding.

Before (a CI user's report): DSH203 and DSH209 never mentioned ``--lenient``, which covers both;
DSH204 on a v5 log advised "a higher --max-version" although 4 is the highest; non-empty garbage
and a cut-off zstd frame were "empty file: no session header line" (DSH201); messages printed
Python's ``None`` ("open is turn None/step 1", "open turn is None", "got None"); one replaced
turn/start gave a warning for every later event of the turn; DSH103 and DSH407 had no line (no
SARIF region) although the torn line is known.
"""

from __future__ import annotations

import json
from pathlib import Path

import zstandard

from dsh_audit.validate import validate

from _cli import invoke
from test_bad_input import plain_lines, write

# line k of plain_lines(): 3 turn/start (seq 1), 5 step/start 1, 28 step/start 2 (seq 26),
# 44 step/start 3, 49 assistant/chunk seq 47, 79 turn/end.


def _validate(monkeypatch, capsys, *args: str) -> tuple[int, list[str], list[str]]:
    code, out, err = invoke(monkeypatch, capsys, "validate", *args)
    return code, out.splitlines(), err


def _ignorable(lines: list[str], number: int) -> None:
    """Turn physical line ``number`` into an unknown event type marked ignorable (readers skip it)."""
    value = json.loads(lines[number - 1])
    value["type"], value["ignorable"] = "acme/note", True
    lines[number - 1] = json.dumps(value)


def _header(lines: list[str], **changes: object) -> None:
    value = json.loads(lines[0])
    for key, change in changes.items():
        if change is None:
            del value[key]
        else:
            value[key] = change
    lines[0] = json.dumps(value)


def test_missing_version_and_depth_hint_at_lenient(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    _header(lines, version=None, delegationDepth=None)
    path = write(tmp_path / "session.jsonl", lines)
    code, out, err = _validate(monkeypatch, capsys, str(path))
    assert (code, out) == (1, [
        f"{path}:1: DSH203 error: header has no version (write version 0, as DSH 0.1.0-rc.8 does; --lenient "
        "reads a tokenised fixture's missing version as a warning)",
        f"{path}:1: DSH209 error: header has no delegationDepth (write 0 for a top-level session; --lenient reads "
        "a tokenised fixture's missing delegationDepth as a warning)"])
    code, out, err = _validate(monkeypatch, capsys, str(path), "--lenient")
    assert (code, [line.split(": ")[1] for line in out]) == (0, ["DSH203 warning", "DSH209 warning"])


V204_HINT = ("(read it with a harness that knows its version: this dsh-audit reads up to v4, so a newer log needs "
             "a newer dsh-audit; a --max-version below 4 refuses newer logs on purpose)")


def test_a_v5_log_needs_a_newer_dsh_audit(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    _header(lines, version=5)
    path = write(tmp_path / "session.jsonl", lines)
    code, out, err = _validate(monkeypatch, capsys, str(path))
    assert (code, out) == (1, [f"{path}:1: DSH204 error: log format v5 is newer than this dsh-audit reads (v0-v4): "
                               f"written by a newer harness {V204_HINT}"])


def test_a_log_above_max_version_says_so(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    _header(lines, version=1)
    path = write(tmp_path / "session.jsonl", lines)
    code, out, err = _validate(monkeypatch, capsys, str(path), "--max-version", "0")
    assert (code, out[0]) == (1, f"{path}:1: DSH204 error: log format v1 is newer than --max-version 0 reads (v0); "
                                 f"this dsh-audit reads up to v4 {V204_HINT}")


def test_bytes_without_a_newline_are_not_a_log(tmp_path, monkeypatch, capsys):
    path = tmp_path / "session.jsonl"
    path.write_bytes(bytes(range(11, 111)))  # 100 bytes, no newline
    code, out, err = _validate(monkeypatch, capsys, str(path))
    assert (code, out) == (1, [
        f"{path}:1: DSH101 error: no complete line: the file's 100 bytes hold no newline, so there is no session "
        "header line (not a DSH log, or cut off inside its first line) (restore the file from a copy; DSH writes "
        "independent zstd frames, the first holding only the header)"])


def test_a_cut_single_frame_is_a_torn_tail_and_no_header(tmp_path, monkeypatch, capsys):
    frame = zstandard.ZstdCompressor().compress("".join(line + "\n" for line in plain_lines()).encode())
    path = tmp_path / "session.jsonl.zstd"
    path.write_bytes(frame[:len(frame) // 2])
    code, out, err = _validate(monkeypatch, capsys, str(path))
    assert (code, out) == (1, [
        f"{path}:1: DSH103 warning: torn tail: zstd frame 1 is cut off at end of file (0 complete line(s) recovered "
        f"from it) ({len(frame) // 2} bytes ignored) (harmless after a crash; a writer must end every batch with a "
        "newline)",
        f"{path}:1: DSH201 error: no session header line: the file's first zstd frame is cut off and no complete "
        "line was recovered from it (start the file with {\"type\":\"session\",\"version\":0,...})"])


def test_an_empty_file_is_still_an_empty_file(tmp_path, monkeypatch, capsys):
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"")
    code, out, err = _validate(monkeypatch, capsys, str(path))
    assert (code, out) == (1, [f"{path}:1: DSH201 error: empty file: no session header line (start the file with "
                               '{"type":"session","version":0,...})'])


def test_a_skipped_turn_start_is_one_finding(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    _ignorable(lines, 3)
    path = write(tmp_path / "session.jsonl", lines)
    code, out, err = _validate(monkeypatch, capsys, str(path))
    assert (code, out) == (0, [
        f'{path}:3: seq 1: DSH507 info: unknown event type "acme/note" is marked ignorable and skipped '
        "(nothing to fix)",
        f"{path}:5: seq 3: DSH404 warning: step/start names turn 1 but no turn is open (write step/end before the "
        "next step/start)"])
    assert err == ["0 error(s), 1 warning(s), 1 info in 1 file(s): DSH404 x1, DSH507 x1"]


def test_a_skipped_step_start_is_one_finding(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    _ignorable(lines, 28)
    path = write(tmp_path / "session.jsonl", lines)
    code, out, err = _validate(monkeypatch, capsys, str(path))
    assert (code, out) == (0, [
        f'{path}:28: seq 26: DSH507 info: unknown event type "acme/note" is marked ignorable and skipped '
        "(nothing to fix)",
        f"{path}:29: seq 27: DSH405 warning: assistant/chunk names turn 1/step 2 but no step of turn 1 is open "
        "(write turn and step of the step they belong to)"])


def test_a_turn_end_with_no_open_turn_names_no_none(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    lines.append(lines[-1].replace('"seq": 77', '"seq": 78').replace('"seq":77', '"seq":78'))
    path = write(tmp_path / "session.jsonl", lines)
    code, out, err = _validate(monkeypatch, capsys, str(path), "--rule", "DSH4")
    assert (code, out) == (0, [f"{path}:80: seq 78: DSH402 warning: turn/end names turn 1 but no turn is open "
                               "(close the step and the turn before starting the next)"])


def test_torn_tail_and_open_tail_have_lines(tmp_path, monkeypatch, capsys):
    lines = plain_lines()
    text = "".join(line + "\n" for line in lines)
    path = tmp_path / "session.jsonl"
    path.write_text(text[:text.index(lines[49]) + 10], encoding="utf-8")  # line 50 cut after 10 bytes
    sarif = tmp_path / "v.sarif"
    code, out, err = _validate(monkeypatch, capsys, str(path), "--sarif", str(sarif))
    assert (code, out) == (0, [
        f"{path}:49: seq 47: DSH407 info: log ends inside open turn 1 (step 3 open) (nothing to fix for a crashed "
        "session)",
        f"{path}:50: DSH103 warning: torn tail: line 50 has no terminating newline (10 bytes ignored) (harmless "
        "after a crash; a writer must end every batch with a newline)"])
    results = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"]
    assert [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results] == [
        ("DSH407", 49), ("DSH103", 50)]


def test_damage_that_leaves_nothing_open_is_said_in_words(tmp_path):
    """No turn, step or block open: each message says so, none prints Python's None."""
    lines = plain_lines()
    _ignorable(lines, 3)   # no turn/start
    _ignorable(lines, 28)  # no step/start 2
    value = json.loads(lines[29])
    value["data"]["chunk"] = {"type": "text-delta", "index": 9, "text": "x"}  # no block 9
    lines[29] = json.dumps(value)
    del lines[60:]
    path = write(tmp_path / "session.jsonl", lines)
    assert [(f.rule, f.line, f.seq, f.message) for f in validate(path)] == [
        ("DSH507", 3, 1, 'unknown event type "acme/note" is marked ignorable and skipped'),
        ("DSH404", 5, 3, "step/start names turn 1 but no turn is open"),
        ("DSH507", 28, 26, 'unknown event type "acme/note" is marked ignorable and skipped'),
        ("DSH405", 29, 27, "assistant/chunk names turn 1/step 2 but no step of turn 1 is open"),
        ("DSH421", 30, 28, "text-delta at index 9 needs an open text block, but no block is open there"),
        ("DSH407", 60, 58, "log ends inside open turn 1 (step 3 open)")]
