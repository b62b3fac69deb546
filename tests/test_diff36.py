"""``dsh-audit diff`` at 80 columns (tour 36 F1, issues 12 §2 and 14 §4): a refusal that leaves
requests unrendered is said once, under the table, as ``check`` says it (a path whole), each row
pointing at it; CSV and JSON keep the whole reason on every row."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from _cli import invoke
from dsh_audit.diff import requests_said

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
C3 = CORPUS / "live-pi" / "c3-openai-compat"
C3_LOG = ("c3/home/sessions/--home-dev-dsh-runs-c-c3-openai-compat-ws--/"
          "session-e7611f7a-95b5-4af3-83c0-7c6d07d82016/session.jsonl.zstd")
#: Why c3's requests are unrendered, and the hint naming the home's patch layer (PATH c3)
C3_SAID = ("cannot render: no pi-ai model facts for local-openai/local-coder: a hand-declared route's models are "
           "described by DSH's route configuration, which the log does not record (hint: pass --routes FILE (DSH's "
           "llm-pi-ai route configuration), or declare the route in c3/home/cordis.patch.yml (the patch layer of the "
           "DSH home the log was recorded in, read when no --routes is given))")
C3_TABLE = f"""\
{C3_LOG}
session session-e7611f7a-95b5-4af3-83c0-7c6d07d82016
#  kind   turn/step/attempt  verdict     first offset  capture     note
─────────────────────────────────────────────────────────────────────────────
0  title  -                  unrendered  -             1 (line 2)  see note 1
1  loop   1/1/1              unrendered  -             0 (line 1)  see note 1
2  loop   1/2/1              unrendered  -             2 (line 3)  see note 1
3  loop   1/3/1              unrendered  -             3 (line 4)  see note 1
4  loop   1/4/1              unrendered  -             4 (line 5)  see note 1
5  loop   2/1/1              unrendered  -             5 (line 6)  see note 1
note 1: 6 requests: #0, #1, #2, #3, #4, #5 are unrendered: cannot render: no
  pi-ai model facts for local-openai/local-coder: a hand-declared route's models
  are described by DSH's route configuration, which the log does not record
  (hint: pass --routes FILE (DSH's llm-pi-ai route configuration), or declare
  the route in c3/home/cordis.patch.yml (the patch layer of the DSH home the log
  was recorded in, read when no --routes is given))
  request #0 cannot be rendered at seq 12 (log line 14)
  5 requests: #1, #2, #3, #4, #5 cannot be rendered at seq 10 (log line 12)
6 request(s): 0 identical, 6 unrendered; 0 capture(s) unexplained, 0 foreign:
  FAILED
"""
C3_NOTES = [
    "note: one session in two files under c3/: read home/sessions/--home-dev-dsh-runs-c-c3-openai-compat-ws--/"
    "session-e7611f7a-95b5-4af3-83c0-7c6d07d82016/session.jsonl.zstd, not session-logs/"
    "session-e7611f7a-95b5-4af3-83c0-7c6d07d82016.jsonl (the same lines)",
    "note: capture c3/wire.jsonl found beside 1 log(s) (--capture FILE names another)"]

needs_corpus = pytest.mark.skipif(not C3.is_dir(), reason="the shared corpus is absent")


@pytest.fixture
def c3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The c3 scenario (a hand-declared route no pi-ai model describes) copied to ``c3``, the
    working folder, piped at 80 columns."""
    shutil.copytree(C3, tmp_path / "c3")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    return tmp_path / "c3"


@needs_corpus
def test_an_unrendered_refusal_is_one_note_under_the_table_with_its_path_whole(
        c3: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "diff", "c3")
    assert (code, out, err) == (1, C3_TABLE, C3_NOTES)  # was 96 lines: the reason in every row, its path cut


@needs_corpus
def test_check_says_the_same_refusal_in_the_same_words(
        c3: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("COLUMNS")  # piped: each finding on one line
    code, out, _ = invoke(monkeypatch, capsys, "check", "c3")
    assert code == 1
    said = "6 requests: #0, #1, #2, #3, #4, #5 are unrendered: " + C3_SAID
    assert f"{C3_LOG}: DSH815 warning (fails the gate: capture-fail): {said}" in out.splitlines()
    code, out, _ = invoke(monkeypatch, capsys, "diff", "c3")
    assert f"note 1: {said}" in out.splitlines()


@needs_corpus
def test_csv_and_json_keep_the_whole_reason_on_every_row(
        c3: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = invoke(monkeypatch, capsys, "diff", "c3", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 1 and [(r["#"], r["verdict"], r["note"]) for r in rows] == [
        (str(i), "unrendered", C3_SAID) for i in range(6)]
    assert "see note" not in out
    code, out, _ = invoke(monkeypatch, capsys, "diff", "c3", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 1 and len(rows) == 6 and "see note" not in out
    assert [r["note"] for r in rows] == [f"order (no session header); {C3_SAID}"] * 6


def test_requests_said_lists_twenty_and_counts_the_rest() -> None:
    assert requests_said([7], "unrendered: x") == "request #7 is unrendered: x"
    assert requests_said(list(range(23)), "unrendered") == (
        "23 requests: " + ", ".join(f"#{i}" for i in range(20)) + " and 3 more are unrendered")


# -- an empty window with many PATHS (fuzz 17 D9) ---------------------------------------------------

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
WINDOW = "--since 2030-01-01T00:00:00Z"


@pytest.mark.parametrize("command", ["diff", "check"])
def test_an_empty_window_counts_the_logs_under_many_paths_instead_of_naming_each(
        command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    paths = []
    for n in range(11):  # the samples are dated 2027-01-15
        shutil.copy(SAMPLES / ("chat" if n % 2 else "tools") / "session.jsonl", tmp_path / f"log{n:02}.jsonl")
        paths.append(f"log{n:02}.jsonl")
    code, out, err = invoke(monkeypatch, capsys, command, "--since", "2030-01-01", *paths)
    assert (code, out, err) == (2, "", [  # 11 files of 2 sessions: each session read once (any number of copies)
        "note: 2 sessions found in 11 files (the same lines): each read once, from the file DSH reads; e.g. read "
        "log00.jsonl, skipped log02.jsonl",
        f"note: {WINDOW}: 2 of 2 log(s) with no activity in that window (by the logs' own timestamps) left out",
        f"error: none of the 2 log(s) under PATHS has activity in {WINDOW} (by the logs' own timestamps) "
        "(hint: widen or drop --since/--until)"])  # was one line naming all 11 PATHS
    code, out, err = invoke(monkeypatch, capsys, command, "--since", "2030-01-01", "log00.jsonl")
    assert (code, err[1:]) == (2, [f"error: log00.jsonl: no session log has activity in {WINDOW} (by the logs' own "
                                   "timestamps) (hint: widen or drop --since/--until)"])  # one PATH names itself


# -- redact --capture of a body folder: one body held at a time (capture memory) -------------------


def _body_folder(folder: Path, wire: Path) -> list[str]:
    """The bodies of ``wire`` as a body folder, each with a sidecar holding an Authorization header."""
    from dsh_audit.capture import load_capture

    folder.mkdir()
    for i, capture in enumerate(load_capture(wire)):
        (folder / f"{i:03}.json").write_bytes(capture.body)
        meta = {"method": capture.method, "path": capture.path, "headers": {**capture.headers, "authorization": "Bearer x"}}
        (folder / f"{i:03}.meta.json").write_text(json.dumps(meta))
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.skipif(not (CORPUS / "live").is_dir(), reason="the shared corpus is absent")
def test_a_body_folder_is_written_body_by_body_with_the_same_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_audit.redact import _capture, _redact, redact

    case = CORPUS / "live" / "b-tools"
    log = next(case.glob("home/sessions/*/*/session.jsonl.zstd"))
    names = _body_folder(tmp_path / "bodies", case / "wire.jsonl")
    (tmp_path / "out").mkdir()
    made, written, held = [0], [0], []
    bodies = _capture.redacted_bodies

    def counted(*args: object) -> object:  # each redacted body made, and how many made are not yet written
        for body in bodies(*args):  # type: ignore[arg-type]
            made[0] += 1
            held.append(made[0] - written[0])
            yield body

    def write(folder: Path, name: str, body: bytes) -> None:
        written[0] += not name.endswith(".meta.json")
        (folder / name).write_bytes(body)

    monkeypatch.setattr(_capture, "redacted_bodies", counted)
    monkeypatch.setattr(_redact, "write_file", write)
    result = redact(log, tmp_path / "out" / "session.jsonl.zstd", salt="held", capture=tmp_path / "bodies")
    assert (made[0], written[0], max(held)) == (9, 9, 1)  # was 9 held before the first was written
    assert sorted(p.name for p in result.capture.iterdir()) == names
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "session.jsonl.zstd", "session.jsonl.zstd.bodies", "session.jsonl.zstd.manifest.json"]
    assert result.dropped_headers == ("authorization",) and result.mismatched == ()


@pytest.mark.skipif(not (CORPUS / "live").is_dir(), reason="the shared corpus is absent")
def test_a_body_folder_that_fails_half_way_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dsh_audit.errors import CaptureError
    from dsh_audit.redact import redact

    case = CORPUS / "live" / "b-tools"
    log = next(case.glob("home/sessions/*/*/session.jsonl.zstd"))
    _body_folder(tmp_path / "bodies", case / "wire.jsonl")
    (tmp_path / "out").mkdir()
    real = Path.read_bytes

    def torn(path: Path) -> bytes:  # the fifth sidecar changes under the redaction, after 4 bodies were written
        return b"[]" if path.name == "004.meta.json" else real(path)

    monkeypatch.setattr(Path, "read_bytes", torn)
    with pytest.raises(CaptureError, match="the capture changed while it was read"):
        redact(log, tmp_path / "out" / "session.jsonl.zstd", salt="torn", capture=tmp_path / "bodies")
    assert list((tmp_path / "out").iterdir()) == []  # no staged folder, no half of the bundle
