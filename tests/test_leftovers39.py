"""Small leftovers of session 39: one decision, one place.

- A first line that is a whole record of another agent's log is refused by the reader and by
  ``validate`` through one function (:func:`dsh_audit.log.foreign_record`), in the same words.
- A spool imports ``tempfile`` only when it first goes to disk: a command whose output stays in
  memory does not pay for it at start-up.
- ``diff --json`` names where an unrendered request's refusal is (``seq``, ``line``: the names
  ``check``'s finding of it uses), and the text note under the table says it.
"""

from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from dsh_audit import _spool, log, validate
from dsh_audit._spool import LineSpool, RowSpool
from dsh_audit.cli import _diff
from dsh_audit.errors import MalformedRecordError
from dsh_audit.log import foreign_record, parse_json

from _cli import invoke
from _golden import CORPUS

DATA = Path(__file__).resolve().parent / "data" / "importers"
C3 = CORPUS / "live-pi" / "c3-openai-compat"


# -- another agent's whole first record: one decision for the reader and validate ------------------


@pytest.mark.parametrize("kind, path", [
    ("claude-code", DATA / "claude-code" / "7d3c6a52-1f0e-4c2b-9a8e-2b1f5c0d9e11.jsonl"),
    ("codex", DATA / "codex" / "rollout-2026-01-05T10-00-00-0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b.jsonl")])
def test_reader_and_validate_refuse_a_foreign_first_record_through_one_decision(kind: str, path: Path) -> None:
    first = parse_json(path.read_bytes().split(b"\n", 1)[0])
    decided = foreign_record(str(path), first)
    assert decided is not None
    assert (decided[0], decided[1].message, decided[1].line) == (kind, f"this is a {kind} session, not a DSH log", 1)
    with pytest.raises(MalformedRecordError) as refused:
        log.read_log(path)
    assert (refused.value.message, refused.value.hint, refused.value.line) == (
        decided[1].message, decided[1].hint, 1)
    findings = validate.validate(path)
    assert [(f.rule, f.message, f.hint, f.line) for f in findings] == [
        ("DSH202", decided[1].message, decided[1].hint, 1)]


@pytest.mark.parametrize("value", [
    {"type": "session", "id": "s1"},  # a DSH header (a damaged one is refused as such)
    {"type": "session"},  # no id: still no other agent's record
    {}, None, [1], {"type": "event_msg", "payload": {}},  # no record of any format (a Codex type, no timestamp)
])
def test_no_foreign_record_is_decided_for_a_dsh_header_or_json_that_is_no_record(value: object) -> None:
    assert foreign_record("s.jsonl", value) is None


# -- the spool imports tempfile only when it goes to disk ------------------------------------------


def test_a_spool_kept_in_memory_imports_no_tempfile() -> None:
    code = ("import sys\nfrom dataclasses import dataclass\nfrom dsh_audit._spool import LineSpool, RowSpool\n"
            "@dataclass(frozen=True)\nclass Row:\n    n: int\n"
            "s = LineSpool(); s.append('x'); assert list(s) == ['x']\n"
            "r = RowSpool(Row, [Row(1), Row(2)], batch=1); assert list(r) == [Row(1), Row(2)]\n"
            "print('tempfile' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "False\n", "")


@dataclass(frozen=True)
class _Row:
    n: int
    text: str


def test_a_spool_past_its_memory_goes_to_an_anonymous_file_and_reads_back_exactly(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_spool, "MEMORY_BYTES", 100)
    lines = LineSpool()
    said = [f"line {i} \u00e9\ud800" for i in range(9)]  # 13 bytes each with its line break
    for line in said[:7]:
        lines.append(line)
    assert isinstance(lines._file.file, io.BytesIO)  # 91 bytes
    lines.append(said[7])
    spilled = lines._file.file  # 104: past the memory, on disk
    assert not isinstance(spilled, io.BytesIO)
    lines.append(said[8])
    assert list(lines) == said and spilled.closed  # read once, then gone
    rows = RowSpool(_Row, batch=2)
    for i in range(40):
        rows.append(_Row(i, "\u00e9" * i))
    assert rows._file is not None and not isinstance(rows._file.file, io.BytesIO)
    assert list(rows) == [_Row(i, "\u00e9" * i) for i in range(40)] == list(rows)  # read as often as asked


# -- diff names the place of an unrendered request's refusal ---------------------------------------


@pytest.mark.skipif(not C3.is_dir(), reason="the live-pi corpus is not here")
def test_diff_json_rows_carry_the_refusals_seq_and_line_as_check_names_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (session_log,) = sorted((C3 / "session-logs").glob("*.jsonl"))
    shutil.copyfile(session_log, tmp_path / "s.jsonl")
    shutil.copyfile(C3 / "wire.jsonl", tmp_path / "wire.jsonl")
    monkeypatch.chdir(tmp_path)
    code, out, _ = invoke(monkeypatch, capsys, "diff", "s.jsonl", "--capture", "wire.jsonl", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    # the title call is refused at its own event (seq 12, line 14), the loop requests at their header (seq 10, line 12)
    assert code == 1 and [(r["index"], r["verdict"], r["seq"], r["line"]) for r in rows] == [
        (0, "unrendered", 12, 14)] + [(i, "unrendered", 10, 12) for i in range(1, 6)]
    code, out, _ = invoke(monkeypatch, capsys, "check", "s.jsonl", "--capture", "wire.jsonl", "--json-report", "-")
    assert code == 1 and [(f["request"], f["seq"], f["line"]) for f in json.loads(out)["findings"]] == [
        (r["index"], r["seq"], r["line"]) for r in rows]
    code, out, _ = invoke(monkeypatch, capsys, "diff", "s.jsonl", "--capture", "wire.jsonl")
    assert code == 1 and out.splitlines()[-3:] == [
        "  request #0 cannot be rendered at seq 12 (log line 14)",
        "  5 requests: #1, #2, #3, #4, #5 cannot be rendered at seq 10 (log line 12)",
        "6 request(s): 0 identical, 6 unrendered; 0 capture(s) unexplained, 0 foreign: FAILED"]


@pytest.mark.skipif(not C3.is_dir(), reason="the live-pi corpus is not here")
def test_a_rendered_row_names_no_refusal_place_and_one_place_is_said_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (session_log,) = sorted((C3 / "session-logs").glob("*.jsonl"))
    shutil.copyfile(session_log, tmp_path / "s.jsonl")
    shutil.copyfile(C3 / "wire.jsonl", tmp_path / "wire.jsonl")
    monkeypatch.chdir(tmp_path)
    routes = str(C3 / "inputs" / "pi-ai-routes.patch.yml")
    code, out, _ = invoke(monkeypatch, capsys, "diff", "s.jsonl", "--capture", "wire.jsonl", "--routes", routes,
                          "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 6 and {(r["verdict"] == "unrendered", r["seq"], r["line"]) for r in rows} == {
        (False, None, None)}
    # requests all refused at one event: the place said once, under the note
    compared = _diff._compare("wire.jsonl", ["s.jsonl"], adapter="auto", routes=None, lenient=False, max_version=4,
                              found=False)
    loops = [row for row in compared.rows if row.request is not None and row.request.kind == "loop"]
    notes, cells = _diff._table_notes(loops, 3)
    assert [note[1:] for note in notes] == [["  cannot be rendered at seq 10 (log line 12)"]]
    assert notes[0][0].startswith("note 3: 5 requests: #1, #2, #3, #4, #5 are unrendered: cannot render: ")
    assert cells == {i: "see note 3" for i in range(5)}
