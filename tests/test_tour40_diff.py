"""``diff`` and ``watch`` as a new user met them (tour 40).

1. ``diff`` of a log with another session's capture said the same 5-line reason in every unmatched
   row and a 3-line one in every foreign row, the useful note (whose capture it is) last: each
   reason is now one numbered note under its table, as an unrendered request's refusal is, and
   that note comes first.
2. A redacted bundle's route file (which its manifest names) is named by the hint of ``render``,
   ``diff`` and ``check`` alike: one rule (``dsh_audit.session.routes_hint``).
3. An unrendered request "cannot be rendered at seq N": "refused" is what DSH does to a log
   (tests/test_diff36.py and tests/test_leftovers39.py pin the notes).
4. ``watch`` at 80 columns folds a line between fields, a label with its value, no field moved
   (review 40 B: the cost stays after the cache reads, where the legend says).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from _cli import invoke
from dsh_audit.cli._watch import _folded
from test_views33 import _request

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
C1_ID = "session-514c4bc2-e0ec-419e-84d4-2f666d536239"
C1_LOG = CORPUS / "live-pi" / "c1-anthropic-tools" / "session-logs" / f"{C1_ID}.jsonl"
C3 = CORPUS / "live-pi" / "c3-openai-compat"
OTHER_WIRE = CORPUS / "live" / "c-change" / "wire.jsonl"

needs_corpus = pytest.mark.skipif(not (C1_LOG.is_file() and C3.is_dir() and OTHER_WIRE.is_file()),
                                  reason="the shared corpus is absent")

OTHER_ID = "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824"
ROW = "{:>2}  {:<5}  {:<17}  unmatched  -             -        see note {}"
FOREIGN = "{:<5}  foreign  -             {} (line {})  see note 4"
OTHER_TABLE = "\n".join([
    f"c1.jsonl  session {C1_ID}",
    " #  kind   turn/step/attempt  verdict    first offset  capture  note",
    "─" * 74,
    *(ROW.format(i, kind, where, note) for i, kind, where, note in [
        (0, "title", "-", 1), (1, "loop", "1/1/1", 2), (2, "loop", "1/2/1", 2), (3, "loop", "1/3/1", 2),
        (4, "loop", "1/4/1", 2), (5, "loop", "1/5/1", 2), (6, "loop", "1/6/1", 2), (7, "loop", "2/1/1", 2),
        (8, "loop", "2/2/1", 2), (9, "loop", "3/1/1", 3), (10, "loop", "3/2/1", 3)]),
    "note 1: request #0 is unmatched: no captured title send of this session left on",
    "  its route (anthropic-messages, model claude-sonnet-4-5)",
    "note 2: 8 requests: #1, #2, #3, #4, #5, #6, #7, #8 are unmatched: no captured",
    "  loop send of this session left on its route (anthropic-messages, model",
    "  claude-sonnet-4-5)",
    "note 3: 2 requests: #9, #10 are unmatched: no captured loop send of this session",
    "  left on its route (anthropic-messages, model claude-sonnet-4-6)",
    "captures no request explains",
    "kind   verdict  first offset  capture     note",
    "─" * 52,
    *(FOREIGN.format("title" if at == 1 else "loop", at, at + 1) for at in range(8)),
    "note 4: 8 captures: 0, 1, 2, 3, 4, 5, 6, 7 are foreign: session",
    f"  {OTHER_ID} is not among the logs given",
    "11 request(s): 0 identical, 11 unmatched; 0 capture(s) unexplained, 8 foreign:",
    "  FAILED",
    ""])


@needs_corpus
def test_diff_with_another_sessions_capture_says_each_reason_once_and_whose_capture_first(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copyfile(C1_LOG, tmp_path / "c1.jsonl")
    shutil.copyfile(OTHER_WIRE, tmp_path / "other.jsonl")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = invoke(monkeypatch, capsys, "diff", "c1.jsonl", "--capture", "other.jsonl")
    # was 96 lines: each unmatched row's reason on 5 lines, each foreign row's on 3, this note last
    assert (code, out, err) == (1, OTHER_TABLE, [
        f"note: no request matched: other.jsonl holds sends of session(s) {OTHER_ID}, not {C1_ID}: give the capture "
        f"of its run with --capture FILE (or diff the log of {OTHER_ID})"])
    monkeypatch.setenv("COLUMNS", "200")  # CSV keeps each row's whole reason, as JSON does
    code, out, _ = invoke(monkeypatch, capsys, "diff", "c1.jsonl", "--capture", "other.jsonl", "--format", "csv")
    assert code == 1 and "see note" not in out and out.count("is not among the logs given") == 8


BUNDLE_HINT = ("pass --routes b.jsonl.routes.yml (DSH's llm-pi-ai route configuration), the redacted route file of "
               "this bundle (its manifest names it)")


@needs_corpus
def test_render_diff_and_check_name_a_bundles_route_file_alike(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (log,) = sorted((C3 / "session-logs").glob("*.jsonl"))
    shutil.copyfile(log, tmp_path / "b.jsonl")
    shutil.copyfile(C3 / "wire.jsonl", tmp_path / "b.jsonl.wire.jsonl")
    manifest = {"tool": "dsh-audit", "route_file": "b.jsonl.routes.yml"}  # as `redact --routes` writes it
    (tmp_path / "b.jsonl.manifest.json").write_text(json.dumps(manifest))
    (tmp_path / "b.jsonl.routes.yml").write_text("{}\n")  # named only when it is there (review 40 B)
    monkeypatch.chdir(tmp_path)
    code, out, _ = invoke(monkeypatch, capsys, "diff", "b.jsonl", "--capture", "b.jsonl.wire.jsonl", "--json")
    notes = {json.loads(line)["note"] for line in out.splitlines()}
    assert code == 1 and len(notes) == 1 and notes.pop().endswith(f"(hint: {BUNDLE_HINT})")
    code, _, _ = invoke(monkeypatch, capsys, "check", "b.jsonl", "--capture", "b.jsonl.wire.jsonl",
                        "--json-report", "report.json")
    hints = {f["hint"] for f in json.loads((tmp_path / "report.json").read_text())["findings"] if f["rule"] == "DSH815"}
    assert code == 1 and hints == {BUNDLE_HINT}
    code, _, err = invoke(monkeypatch, capsys, "render", "b.jsonl", "1")
    assert code == 2 and err[-1].endswith(f"(hint: {BUNDLE_HINT})")


def test_a_watch_break_folds_between_fields_none_moved() -> None:
    """Folded, a line keeps the legend's order: its cost after the cache reads (review 40 B)."""
    item = _request(fields=("model", "reasoningEffort", "system"), potential=8927)
    assert _folded(item, "session-514c4bc2", None, 80) == [
        "2026-12-02 11:23:45  session-514c4bc2  Fake session title  #9 t3/s1/a1",
        "  claude-sonnet-4-6  prompt 8927  cache 0 of 8927 reusable (0 expected)  $0.0337",
        "  break_explained  BREAK header_change lost 8927 ($0.0308)",
        "  fields model,reasoningEffort,system evidence seqs 179"]
    calm = _request(verdict=None, cause=None, classification="as_expected", lost_tokens=0, lost_cost=0.0,
                    potential=8029, actual=7872, expected=8029, cost=0.0039)
    assert _folded(calm, "session-514c4bc2", None, 80) == [
        "2026-12-02 11:23:45  session-514c4bc2  Fake session title  #9 t3/s1/a1",
        "  claude-sonnet-4-6  prompt 8927  cache 7872 of 8029 reusable (8029 expected)",
        "  $0.0039  as_expected"]
    # a line that fits is the line as it was; a title longer than a line wraps at its own spaces
    assert _folded(calm, "s", None, 400) == [
        "2026-12-02 11:23:45  s  Fake session title  #9 t3/s1/a1  claude-sonnet-4-6  prompt 8927  cache 7872 of "
        "8029 reusable (8029 expected)  $0.0039  as_expected"]
    long = _request(title="word " * 20 + "end", verdict=None, classification="as_expected", lost_tokens=0)
    assert _folded(long, "s", "fork", 60)[:3] == [
        "2026-12-02 11:23:45  s",
        "  └ fork word word word word word word word word word word",
        "  word word word word word word word word word word end"]
