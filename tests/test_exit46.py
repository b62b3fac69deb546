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
3. With ``fail-on-refusal = false`` ``check`` passed a refused log (exit 0) while ``report`` exited 1
   "whatever the policy", and both said ``check passed: no breaks`` of a folder whose only log DSH
   refused. ``report`` now exits 1 only when the refusal fails under the policy, and every verdict names
   a refusal the policy passes: ``1 refused log(s) passing by policy``.
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


#: The policy that passes a refusal; the refused header's DSH203, which would fail the gate in its stead, ignored.
PASSING = '[tool.dsh-audit]\nfail-on-refusal = false\nignore = ["DSH2"]\n'
CHANGE_AT = "root/a/session.jsonl.zstd"


def _page_data(path: str) -> dict[str, object]:
    page = Path(path).read_text(encoding="utf-8")
    found: dict[str, object] = json.loads(
        page.split('<script type="application/json" id="dsh-data">')[1].split("</script>")[0])
    return found


@pytest.mark.parametrize("with_change", [False, True], ids=["alone", "beside explained breaks"])
def test_a_refusal_the_policy_passes_is_named_and_exits_0(
        with_change: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """``fail-on-refusal = false``: check and report both exit 0, and every verdict names the refused
    log, never ``passed: no breaks`` over a log of which no request was replayed."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    (tmp_path / "root" / "b").mkdir(parents=True)
    _refused_header(tmp_path / BAD)
    if with_change:
        (tmp_path / "root" / "a").mkdir()
        shutil.copy(CHANGE, tmp_path / CHANGE_AT)
    Path("p.toml").write_text(PASSING, encoding="utf-8")
    said = ("4 explained break(s) \u00b7 " if with_change else "") + "1 refused log(s) passing by policy"
    logs, requests = (2, 5) if with_change else (1, 0)
    code, out, err = invoke(monkeypatch, capsys, "check", "root", "--policy", "p.toml", "--markdown", "m.md")
    assert (code, err, out.splitlines()[-1]) == (
        0, [], f"PASSED: {logs} log(s), {requests} request(s), 1 error(s), 0 warning(s), {int(with_change)} info, "
               "0 failing (policy: p.toml)")
    assert Path("m.md").read_text(encoding="utf-8").splitlines()[0] == f"## dsh-audit check: \u2705 passed: {said}"
    code, out, err = invoke(monkeypatch, capsys, "report", "root", "--policy", "p.toml", "-o", "r.html")
    assert (code, out, err) == (
        0, f"wrote r.html: {logs} log(s), {requests} request(s), check passed: {said}\n",
        [f"error: {BAD}:1: {REFUSED}"])
    data = _page_data("r.html")
    assert data["headline"] == {"state": "passed", "text": f"check passed: {said}"}
    verdicts = [(s["path"], s["verdict"]) for s in data["sessions"]]  # type: ignore[attr-defined]
    assert verdicts == [*([(CHANGE_AT, "passed: 4 explained break(s)")] if with_change else []),
                        (BAD, "passed: 1 refused log(s) passing by policy")]


def test_report_exits_0_when_only_another_finding_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The refusal passes, the header's DSH203 fails in its stead: check fails (1), report, which
    never gates on findings, exits 0, its verdict naming both."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "root" / "b").mkdir(parents=True)
    _refused_header(tmp_path / BAD)
    Path("p.toml").write_text("[tool.dsh-audit]\nfail-on-refusal = false\n", encoding="utf-8")
    said = "check failed: 1 validation finding(s) \u00b7 1 refused log(s) passing by policy"
    code, out, _ = invoke(monkeypatch, capsys, "check", "root", "--policy", "p.toml", "--format", "markdown")
    assert (code, out.splitlines()[0]) == (1, f"## dsh-audit check: \u274c {said.removeprefix('check ')}")
    code, out, err = invoke(monkeypatch, capsys, "report", "root", "--policy", "p.toml", "-o", "r.html")
    assert (code, out, err) == (0, f"wrote r.html: 1 log(s), 0 request(s), {said}\n", [f"error: {BAD}:1: {REFUSED}"])
    assert [s["verdict"] for s in _page_data("r.html")["sessions"]] == [  # type: ignore[attr-defined]
        "failed: 1 validation finding(s), 1 refused log(s) passing by policy"]
