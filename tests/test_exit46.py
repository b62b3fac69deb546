"""Session 46 (issue 14): one exit-code rule for a log DSH refuses and one that cannot be read, and
the verdict in the page's honest words everywhere it is said.

1. ``check`` exited 1 on a log whose header DSH refuses (its DSH801, a finding) and ``report`` 2 on
   the same folder, while the README said 2 for both. The rule is docs/ci.md's: a log DSH refuses is a
   finding, exit 1 in ``check`` and ``report``; a log that cannot be opened or read at all (a FIFO) is
   bad input, exit 2 in both. Every other log is still checked, every report or page still written.
   Every verdict names the failing DSH801 as the exit code splits it (m19): ``1 refused log(s)`` for a
   log DSH refuses, ``1 unreadable log(s)`` for one that cannot be read; before, both were "unreadable".
2. ``check --format markdown`` headed ``✅ passed`` and ``report`` said ``check passed`` over explained
   breaks the page's headline names (``check passed: 4 explained break(s)``): both now say the page's
   words, made by one function (:func:`dsh_audit.report._html_sessions._headline`).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from _cli import invoke

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
CHANGE = SAMPLES / "sessions" / "--home-dev-projects-demo--" / "session-sample-change" / "session.jsonl.zstd"
BAD = "root/b/session.jsonl"
GOOD = "root/a/session.jsonl"
NO_CAPTURE = (f"{GOOD}: DSH810 info: no capture given or found beside the log (wire.jsonl) (hint: pass --capture FILE, "
              "or put a wire.jsonl holding the log's requests beside it or up to four folders above it)")
REFUSED = ('corrupt session log: first line is not a session header: version "x" is a string, not a number '
           "(hint: `dsh-audit validate FILE` lists every header field DSH refuses (DSH203))")
FIFO = "is a FIFO, not a log file (hint: only regular files are read)"


def _refused_header(path: Path) -> None:
    text = (SAMPLES / "chat" / "session.jsonl").read_text(encoding="utf-8")
    path.write_text(text.replace('"version":0', '"version":"x"', 1), encoding="utf-8")


#: Each kind of bad log: how it is made, check's exit code, its finding line, report's exit code and error line.
CASES = {
    "refused header": (_refused_header, 1, f"{BAD}:1: DSH801 error (fails the gate: fail-on-refusal): {REFUSED}",
                       1, f"error: {BAD}:1: {REFUSED}"),
    "fifo": (os.mkfifo, 2, f"{BAD}: DSH801 error (fails the gate: fail-on-refusal): {FIFO}",
             2, f"error: {BAD}: {FIFO}"),
}
#: What every verdict calls each kind's failing DSH801 (m19): a log DSH refuses is no log that cannot be read.
FAILED_AS = {"refused header": "1 refused log(s)", "fifo": "1 unreadable log(s)"}


@pytest.fixture(params=list(CASES))
def bad(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``root/a``: the sample chat; ``root/b/session.jsonl``: a log DSH refuses, or one that cannot be read."""
    kind: str = request.param
    (tmp_path / "root" / "a").mkdir(parents=True)
    shutil.copy(SAMPLES / "chat" / "session.jsonl", tmp_path / GOOD)
    (tmp_path / "root" / "b").mkdir()
    CASES[kind][0](tmp_path / BAD)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    return kind


def test_check_exits_1_for_a_refused_log_and_2_for_an_unreadable_one(
        bad: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _, code_wanted, finding, _, error = CASES[bad]
    code, out, err = invoke(monkeypatch, capsys, "check", "root", "--json-report", "r.json", "--markdown", "m.md")
    # the unreadable log's error is said once on stderr; the refused one is a finding like any other
    assert (code, err) == (code_wanted, [error] if code_wanted == 2 else [])
    assert out.splitlines()[-3:] == [
        finding, NO_CAPTURE,
        "FAILED: 2 log(s), 3 request(s), 1 error(s), 0 warning(s), 1 info, 1 failing (policy: defaults)"]
    report = json.loads(Path("r.json").read_text(encoding="utf-8"))
    # the JSON report counts only the log that cannot be read as unreadable (no key when none is)
    assert (report["verdict"], report["counts"].get("logs_unreadable")) == ("FAILED", 1 if code_wanted == 2 else None)
    # the Markdown heading names it as the page does: refused (a finding) or unreadable (exit 2)
    heading = Path("m.md").read_text(encoding="utf-8").splitlines()[0]
    assert heading == f"## dsh-audit check: \u274c failed: {FAILED_AS[bad]}"


def test_report_follows_the_same_split(bad: str, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    *_, code_wanted, error = CASES[bad]
    code, out, err = invoke(monkeypatch, capsys, "report", "root", "-o", "r.html")
    assert (code, out, err) == (
        code_wanted, f"wrote r.html: 2 log(s), 3 request(s), check failed: {FAILED_AS[bad]}\n", [error])
    page = Path("r.html").read_text(encoding="utf-8")  # still written, the log an error entry of it
    data = json.loads(page.split('<script type="application/json" id="dsh-data">')[1].split("</script>")[0])
    assert data["headline"] == {"state": "failed", "text": f"check failed: {FAILED_AS[bad]}"}
    # each log's entry says which it is: its verdict's words, and whether not a line of it could be read
    assert [(s["verdict"], s["unreadable"]) for s in data["sessions"]] == [
        ("passed: no breaks", False), (f"failed: {FAILED_AS[bad]}", code_wanted == 2)]


def test_a_clean_report_still_exits_0(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    """No log refused, none unreadable: 0, whatever else the page shows."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(SAMPLES / "chat" / "session.jsonl", tmp_path / "session.jsonl")
    code, out, err = invoke(monkeypatch, capsys, "report", "session.jsonl", "-o", "r.html")
    assert (code, out, err) == (0, "wrote r.html: 1 log(s), 3 request(s), check passed: no breaks\n", [])


def test_every_summary_says_the_pages_verdict_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A log with explained breaks: the Markdown heading, report's ``wrote`` line and the page's
    headline say the same words, never a bare ``passed`` over breaks."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(CHANGE, tmp_path / "session.jsonl.zstd")
    words = "check passed: 4 explained break(s)"
    code, out, _ = invoke(monkeypatch, capsys, "check", "session.jsonl.zstd", "--format", "markdown")
    assert (code, out.splitlines()[0]) == (0, "## dsh-audit check: ✅ passed: 4 explained break(s)")
    code, out, err = invoke(monkeypatch, capsys, "report", "session.jsonl.zstd", "-o", "r.html")
    assert (code, out, err) == (0, f"wrote r.html: 1 log(s), 5 request(s), {words}\n", [])
    page = Path("r.html").read_text(encoding="utf-8")
    data = json.loads(page.split('<script type="application/json" id="dsh-data">')[1].split("</script>")[0])
    assert data["headline"] == {"state": "passed", "text": words}
