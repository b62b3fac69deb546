"""Session 35: ``check`` over a log that cannot be read (issue 15) and a log whose requests all fail
for one reason (issue 14, F8).

1. A log not a line of which can be read (a FIFO, a symlink loop, a dangling link, no permission, a
   folder where the log was found) stopped ``check`` (exit 2, no report, its neighbours never
   checked). It is now that log's ``DSH801`` (``log-refused``, ``fail-on-refusal``) at its path in
   every report, its error said once on stderr, and every other log is checked; the run exits 2, as
   for a folder that cannot be read (session 44: bad input, not only a finding).
2. The same finding of a log's requests is one terminal line with a count; piped it stays whole,
   a terminal (or ``COLUMNS``) wraps it; a failing warning says which policy key fails it.
3. (Session 45, issue 15.) With ``fail-on-refusal = false`` such a log's DSH801 passes, and every
   report said PASSED (JUnit and SARIF green) while the run exited 2: each says INCOMPLETE now, and
   says the log could not be read (exit 2), as no failing finding says it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import Any
from pathlib import Path

import pytest
from _cli import invoke

from dsh_audit import gate
from dsh_audit.gate import Finding, FindingGroup, group_findings, policy_key, run_check

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
COMPAT = CORPUS / "live-pi" / "c3-openai-compat"
COMPAT_LOG = ("c3/home/sessions/--home-dev-dsh-runs-c-c3-openai-compat-ws--/"
              "session-e7611f7a-95b5-4af3-83c0-7c6d07d82016/session.jsonl.zstd")
BAD = "root/b/session.jsonl"
GOOD = "root/a/session.jsonl"
VALIDATE_HINT = "run `dsh-audit validate` on the file for every problem with its line; restore the log from a copy"


def _loop(path: Path) -> None:
    path.symlink_to(path.name)


def _dangling(path: Path) -> None:
    path.symlink_to(path.parent / "gone.jsonl")


def _no_permission(path: Path) -> None:
    shutil.copy(SAMPLES / "chat" / "session.jsonl", path)
    path.chmod(0)


#: Each log that cannot be read: how it is made, its message and hint.
UNREADABLE: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "fifo": (os.mkfifo, "is a FIFO, not a log file", "only regular files are read"),
    "loop": (_loop, "cannot open: symlink loop", VALIDATE_HINT),
    "dangling": (_dangling, "cannot open: No such file or directory", VALIDATE_HINT),
    "mode 000": (_no_permission, "cannot open: Permission denied", VALIDATE_HINT),
}


@pytest.fixture(params=list(UNREADABLE))
def unreadable(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """``root/a``: the sample chat; ``root/b/session.jsonl``: a log that cannot be read."""
    kind: str = request.param
    if kind == "mode 000" and os.geteuid() == 0:
        pytest.skip("root reads a file of mode 000 (the other kinds cover a log that cannot be read)")
    (tmp_path / "root" / "a").mkdir(parents=True)
    shutil.copy(SAMPLES / "chat" / "session.jsonl", tmp_path / GOOD)
    (tmp_path / "root" / "b").mkdir()
    UNREADABLE[kind][0](tmp_path / BAD)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    return kind


def test_check_reports_the_unreadable_log_and_checks_its_neighbour(
        unreadable: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _, message, hint = UNREADABLE[unreadable]
    said = message if hint == VALIDATE_HINT else f"{message} (hint: {hint})"  # the reader's own hint, if any
    code, out, err = invoke(monkeypatch, capsys, "check", "root", "--json-report", "r.json", "--junit", "j.xml",
                            "--sarif", "s.sarif", "--markdown", "m.md")
    assert (code, err) == (2, [f"error: {BAD}: {said}"])
    lines = out.splitlines()
    assert [line.split("│")[1:3] for line in lines if line.startswith("│")] == [
        [" ok     ", f" {GOOD} "], [" FAIL   ", f" {BAD} "]]
    assert lines[-3:] == [  # the failing finding first (fix W)
        f"{BAD}: DSH801 error (fails the gate: fail-on-refusal): {message} (hint: {hint})",
        f"{GOOD}: DSH810 info: no capture given or found beside the log (wire.jsonl) (hint: pass --capture FILE, or "
        "put a wire.jsonl holding the log's requests beside it or up to four folders above it)",
        "FAILED: 2 log(s), 3 request(s), 1 error(s), 0 warning(s), 1 info, 1 failing (policy: defaults)"]
    report = json.loads(Path("r.json").read_text(encoding="utf-8"))
    assert [(s["path"], s["session_id"], s["requests"], s["error"]) for s in report["sessions"]] == [
        (GOOD, "session-sample-chat", 3, None), (BAD, None, 0, f"{BAD}: {said}")]
    assert report["findings"][1] == {"rule": "DSH801", "severity": "error", "message": message, "path": BAD,
                                     "line": None, "seq": None, "session_id": None, "request": None, "fails": True,
                                     "hint": hint}
    assert (report["passed"], report["verdict"], report["counts"]) == (False, "FAILED", {
        "error": 1, "warning": 0, "info": 1, "failing": 1, "sessions": 2, "requests": 3, "logs_not_checked": 0,
        "logs_unreadable": 1})
    junit = Path("j.xml").read_text(encoding="utf-8")
    assert (f'  <testsuite name="{BAD}" file="{BAD}" tests="1" failures="1" errors="0" skipped="0" time="0">\n'
            f'    <testcase name="log" classname="dsh-audit.{BAD}" time="0">\n'
            f'      <failure message="DSH801: {message}" type="DSH801">{BAD}: DSH801 error (fails the gate: '
            f'fail-on-refusal): {message}\nhint: {hint}</failure>\n') in junit
    sarif = json.loads(Path("s.sarif").read_text(encoding="utf-8"))["runs"][0]
    assert sarif["invocations"][0]["executionSuccessful"] is False  # exit 2, whatever its DSH801's level
    results = sarif["results"]
    assert [(r["ruleId"], r["level"], r["message"]["text"], r["locations"][0]["physicalLocation"]["artifactLocation"]
             ["uri"]) for r in results] == [
        ("DSH810", "note", "no capture given or found beside the log (wire.jsonl) (hint: pass --capture FILE, or put "
                           "a wire.jsonl holding the log's requests beside it or up to four folders above it)", GOOD),
        ("DSH801", "error", f"{message} (hint: {hint})", BAD)]
    markdown = Path("m.md").read_text(encoding="utf-8")
    assert f"### Failing findings (1)\n\n- **DSH801** error: {message} — {BAD}\n  - hint: " in markdown
    _passing_refusal_is_incomplete(monkeypatch, capsys, message, said)


def _passing_refusal_is_incomplete(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                   message: str, said: str) -> None:
    """Issue 15 (session 45): with ``fail-on-refusal = false`` the run still exits 2 for the log it
    could not read, and said PASSED in every report (JUnit and SARIF all green): INCOMPLETE now."""
    Path("p.toml").write_text("[tool.dsh-audit]\nfail-on-refusal = false\n", encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "check", "root", "--policy", "p.toml", "--json-report", "r.json",
                            "--junit", "j.xml", "--sarif", "s.sarif", "--markdown", "m.md")
    assert (code, err) == (2, [f"error: {BAD}: {said}"])
    assert out.splitlines()[-1] == ("INCOMPLETE: 2 log(s), 3 request(s), 1 error(s), 0 warning(s), 1 info, 0 failing "
                                    "(policy: p.toml); 1 log(s) could not be read (exit 2)")
    # its own row passes nothing either (review A, session 45: it said ok / ✅ pass / passed: no breaks)
    rows = [line.split("│")[1:3] for line in out.splitlines() if line.startswith("│") and BAD in line]
    assert rows == [[" unread ", f" {BAD} "]]
    report = json.loads(Path("r.json").read_text(encoding="utf-8"))
    assert (report["passed"], report["verdict"], report["counts"]) == (True, "INCOMPLETE", {
        "error": 1, "warning": 0, "info": 1, "failing": 0, "sessions": 2, "requests": 3, "logs_not_checked": 0,
        "logs_unreadable": 1})
    junit = ET.parse("j.xml").getroot()
    assert (junit.get("tests"), junit.get("failures"), junit.get("errors")) == ("5", "0", "1")
    assert [(s.get("name"), s.get("errors"), [(e.get("type"), e.get("message")) for e in s.iter("error")])
            for s in junit] == [(f"{GOOD} (session-sample-chat)", "0", []), (BAD, "1", [("unreadable", said)])]
    schema = Path(__file__).resolve().parent / "data" / "junit.xsd"
    pytest.importorskip("xmlschema").XMLSchema(str(schema)).validate("j.xml")  # <error> before <system-out>
    [invocation] = json.loads(Path("s.sarif").read_text(encoding="utf-8"))["runs"][0]["invocations"]
    assert (invocation["executionSuccessful"], [(n["message"]["text"], n["locations"][0]["physicalLocation"]
            ["artifactLocation"]["uri"]) for n in invocation["toolExecutionNotifications"]]) == (
        False, [(f"could not be read: {said}", BAD)])
    markdown = Path("m.md").read_text(encoding="utf-8").splitlines()
    assert markdown[0] == (
        "## dsh-audit check: ⚠️ incomplete: no breaks; 1 log(s) could not be read (exit 2)")
    assert [line for line in markdown if BAD in line][0] == (
        f"| ⚠️ unread | {BAD} | - | 0 | none | 0 | n/a | n/a | n/a | n/a | 1 |")
    code, out, _ = invoke(monkeypatch, capsys, "report", "root", "--policy", "p.toml", "-o", "r.html")
    page = Path("r.html").read_text(encoding="utf-8")
    data = json.loads(page.split('<script type="application/json" id="dsh-data">')[1].split("</script>")[0])
    assert (code, out, data["headline"]) == (
        2, "wrote r.html: 2 log(s), 3 request(s), check incomplete: no breaks; 1 log(s) could not be read (exit 2)\n",
        {"state": "incomplete", "text": "check incomplete: no breaks; 1 log(s) could not be read (exit 2)"})
    assert [(s["path"], s["verdict"]) for s in data["sessions"]] == [
        (GOOD, "passed: no breaks"), (BAD, "incomplete: could not be read (exit 2)")]


_REFUSED = "is a FIFO, not a log file"


@pytest.mark.parametrize(("fails", "unreadable", "said"), [
    (True, True, ("FAIL", "❌ fail", "failed: 1 unreadable log(s)", "❌ failed: 1 unreadable log(s)",
                  "check failed: 1 unreadable log(s)")),
    (False, True, ("unread", "⚠️ unread", "incomplete: could not be read (exit 2)",
                   "⚠️ incomplete: no log read; 1 log(s) could not be read (exit 2)",
                   "check incomplete: no log read; 1 log(s) could not be read (exit 2)")),
    (False, False, ("ok", "✅ pass", "passed: no breaks", "✅ passed: no breaks", "check passed: no breaks")),
])
def test_each_view_says_a_lone_logs_status(fails: bool, unreadable: bool, said: tuple[str, ...]) -> None:
    """Review A (session 45): the log that could not be read, its refusal passing (the run
    INCOMPLETE, exit 2), said ``ok`` / ``✅ pass`` / ``passed: no breaks`` on its own row; alone, the
    Markdown heading added "the 0 checked log(s) passed" and the page "no breaks" of no log read.
    Its :attr:`SessionCheck.status`, in each view's words: table, CSV, Markdown row, HTML verdict,
    then the run's Markdown heading and HTML headline."""
    from dsh_audit.cli._check_table import _row
    from dsh_audit.gate import CheckResult, Policy, SessionCheck
    from dsh_audit.report import format_markdown
    from dsh_audit.report._html_sessions import _headline, _verdict

    refused = (Finding("DSH801", "error" if fails else "warning", _REFUSED, BAD, fails=fails),) if unreadable else ()
    check = SessionCheck(BAD, None, findings=refused, error=f"{BAD}: {_REFUSED}" if unreadable else None,
                         unreadable=unreadable)
    result = CheckResult((check,), refused, Policy())
    markdown = format_markdown(result).splitlines()
    row = next(line for line in markdown if f"| {BAD} |" in line)
    assert (_row(check)[0], _row(check, csv=True)[0], row.split(" | ")[0].removeprefix("| "), _verdict(check),
            markdown[0].removeprefix("## dsh-audit check: "), _headline(result)["text"]) == (
        said[0], said[0], *said[1:])


def test_a_lone_unreadable_log_is_checked_too(unreadable: str, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """One log, the group read as it is replayed otherwise: refused the same way."""
    _, message, hint = UNREADABLE[unreadable]
    code, out, err = invoke(monkeypatch, capsys, "check", BAD, "--json")
    assert (code, err) == (2, [f"error: {BAD}: {message}" + ("" if hint == VALIDATE_HINT else f" (hint: {hint})")])
    assert [(f["rule"], f["path"], f["fails"]) for f in json.loads(out)["findings"]] == [("DSH801", BAD, True)]


def test_a_folder_found_as_a_log_is_refused_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A log replaced by a folder after discovery found it (a race: discovery walks a folder
    named ``session.jsonl``) is refused like any log that cannot be read."""
    (tmp_path / "a").mkdir()
    shutil.copy(SAMPLES / "chat" / "session.jsonl", tmp_path / "a" / "session.jsonl")
    (tmp_path / "b" / "session.jsonl").mkdir(parents=True)
    logs = [tmp_path / "a" / "session.jsonl", tmp_path / "b" / "session.jsonl"]
    monkeypatch.setattr(gate._run, "discover", lambda paths, notes: logs)  # type: ignore[attr-defined]
    result = run_check([tmp_path], outline=True)
    assert [(s.session_id, s.unreadable, s.failed) for s in result.sessions] == [
        ("session-sample-chat", False, False), (None, True, True)]
    refused = result.sessions[1].findings
    assert [(f.rule, f.path, f.line, f.fails) for f in refused] == [("DSH801", str(logs[1]), None, True)]


def test_a_corrupt_log_is_not_said_on_stderr(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A log whose lines were read (here: a header that is not JSON) is refused as before: its
    findings, no error line (its validation findings name its lines)."""
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "session.jsonl").write_text("garbage\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    code, out, err = invoke(monkeypatch, capsys, "check", "b")
    assert (code, err) == (1, [])
    assert out.splitlines()[-2:] == [  # validate's DSH201 is the same fault: said once, as the refusal
        "b/session.jsonl:1: DSH801 error (fails the gate: fail-on-refusal): corrupt session log: header line is not "
        "valid JSON (hint: this is not a DSH session log, or its first line is damaged)",
        "FAILED: 1 log(s), 0 request(s), 1 error(s), 0 warning(s), 0 info, 1 failing (policy: defaults)"]


def _unrendered(index: int, *, reason: str = "unrendered: no facts", path: str = "a.jsonl") -> Finding:
    return Finding("DSH815", "warning", f"loop request {index} is unrendered vs w.jsonl line {index}: no facts", path,
                   line=10 + index, seq=index, request=index, fails=True, hint="pass --routes FILE", reason=reason)


def test_group_findings_gathers_the_same_finding_of_a_logs_requests() -> None:
    other = Finding("DSH810", "info", "no capture", "b.jsonl")
    found = [_unrendered(1), other, _unrendered(3), _unrendered(4, reason="unrendered: other"),
             _unrendered(5, path="c.jsonl"), _unrendered(6)]
    assert [g.format() for g in group_findings(found)] == [
        "a.jsonl: DSH815 warning (fails the gate: capture-fail): 3 requests: #1, #3, #6 are unrendered: no facts "
        "(hint: pass --routes FILE)",
        "b.jsonl: DSH810 info: no capture",
        "a.jsonl:14: seq 4: request 4: DSH815 warning (fails the gate: capture-fail): loop request 4 is unrendered "
        "vs w.jsonl line 4: no facts (hint: pass --routes FILE)",
        "c.jsonl:15: seq 5: request 5: DSH815 warning (fails the gate: capture-fail): loop request 5 is unrendered "
        "vs w.jsonl line 5: no facts (hint: pass --routes FILE)"]


def test_a_long_group_counts_the_requests_it_does_not_list() -> None:
    line = FindingGroup(tuple(_unrendered(i) for i in range(25))).format()
    assert line == ("a.jsonl: DSH815 warning (fails the gate: capture-fail): 25 requests: "
                    + ", ".join(f"#{i}" for i in range(20)) + " and 5 more are unrendered: no facts "
                    "(hint: pass --routes FILE)")


def test_a_finding_says_which_policy_key_fails_it() -> None:
    assert [policy_key(rule) for rule in ("DSH801", "DSH810", "DSH815", "DSH831", "DSH301")] == [
        "fail-on-refusal", "require-capture", "capture-fail", "min-cache-hit-ratio", "validation-fail-severity"]
    assert Finding("DSH831", "error", "low", "a.jsonl", baselined=True).format() == "a.jsonl: DSH831 error baselined: low"


GROUPED = (f"{COMPAT_LOG}: DSH815 warning (fails the gate: capture-fail): 6 requests: #0, #1, #2, #3, #4, #5 are "
           "unrendered: cannot render: no pi-ai model facts for local-openai/local-coder: a hand-declared route's "
           "models are described by DSH's route configuration, which the log does not record (hint: pass --routes "
           "FILE (DSH's llm-pi-ai route configuration), or declare the route in c3/home/cordis.patch.yml (the patch "
           "layer of the DSH home the log was recorded in, read when no --routes is given))")
FAILED = "FAILED: 1 log(s), 6 request(s), 0 error(s), 6 warning(s), 0 info, 6 failing (policy: defaults)"


@pytest.fixture()
def compat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if not COMPAT.is_dir():
        pytest.skip("the live-pi corpus is not beside the project")
    shutil.copytree(COMPAT / "home", tmp_path / "c3" / "home")
    shutil.copy(COMPAT / "wire.jsonl", tmp_path / "c3" / "wire.jsonl")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_unrendered_requests_are_one_line_piped(compat: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Piped with no ``COLUMNS``: the grouped line whole; every report keeps a finding per request.
    The wire.jsonl found beside the log prices its title call, whose usage the log lacks (as ``--capture``)."""
    code, out, err = invoke(monkeypatch, capsys, "check", "c3", "--format", "csv", "--json-report", "r.json")
    assert (code, err) == (1, ["note: 1 request(s) priced from the capture's usage (their log holds none)",
                               GROUPED, FAILED])
    findings = json.loads(Path("r.json").read_text(encoding="utf-8"))["findings"]
    assert [(f["rule"], f["request"], f["line"], f["seq"], f["fails"]) for f in findings] == [
        ("DSH815", 0, 14, 12, True), ("DSH815", 1, 12, 10, True), ("DSH815", 2, 12, 10, True),
        ("DSH815", 3, 12, 10, True), ("DSH815", 4, 12, 10, True), ("DSH815", 5, 12, 10, True)]
    assert findings[0]["message"].startswith("title request 0 is unrendered vs c3/wire.jsonl line 2: cannot render")


def test_unrendered_requests_wrap_to_columns(compat: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """Under the table, the grouped line fits the terminal (here ``COLUMNS``, as the table does);
    piped with no ``COLUMNS`` it is whole (a CI log's line per finding)."""
    monkeypatch.setenv("COLUMNS", "100")
    code, out, err = invoke(monkeypatch, capsys, "check", "c3")
    assert code == 1
    assert out.splitlines()[-7:] == [  # the log's path whole on a line of its own, never folded at a "/"
        f"{COMPAT_LOG}:",
        "  DSH815 warning (fails the gate: capture-fail): 6 requests: #0, #1, #2, #3, #4, #5 are unrendered:",
        "  cannot render: no pi-ai model facts for local-openai/local-coder: a hand-declared route's models",
        "  are described by DSH's route configuration, which the log does not record (hint: pass --routes",
        "  FILE (DSH's llm-pi-ai route configuration), or declare the route in c3/home/cordis.patch.yml (the",
        "  patch layer of the DSH home the log was recorded in, read when no --routes is given))", FAILED]
    monkeypatch.delenv("COLUMNS")
    code, out, err = invoke(monkeypatch, capsys, "check", "c3")
    assert (code, out.splitlines()[-2:]) == (1, [GROUPED, FAILED])


def test_report_writes_the_page_and_says_the_unreadable_log_once(
        unreadable: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """``report`` reads what ``check`` reads: the page is written with the refused log in it, its
    error said once (exit 2, as every describing command says an input it could not read)."""
    _, message, hint = UNREADABLE[unreadable]
    code, out, err = invoke(monkeypatch, capsys, "report", "root", "-o", "r.html")
    assert (code, out) == (2, "wrote r.html: 2 log(s), 3 request(s), check failed: 1 unreadable log(s)\n")
    assert err == [f"error: {BAD}: {message}" + ("" if hint == VALIDATE_HINT else f" (hint: {hint})")]


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("capsh") is None,
                    reason="needs root and capsh to drop the capabilities that read a file of mode 000")
def test_a_file_of_mode_000_read_without_the_capabilities_that_bypass_it(tmp_path: Path) -> None:
    """Root reads a file of mode 000; without ``cap_dac_override`` and ``cap_dac_read_search`` it
    cannot, as any other user: the log is refused alone."""
    (tmp_path / "root" / "a").mkdir(parents=True)
    shutil.copy(SAMPLES / "chat" / "session.jsonl", tmp_path / GOOD)
    (tmp_path / "root" / "b").mkdir()
    _no_permission(tmp_path / BAD)
    command = f"{shlex.quote(sys.executable)} -m dsh_audit check root --json-report r.json"
    done = subprocess.run(["capsh", "--drop=cap_dac_override,cap_dac_read_search", "--", "-c", command],
                          cwd=tmp_path, capture_output=True, text=True, check=False,
                          env={**os.environ, "DSH_HOME": str(tmp_path / "home"), "COLUMNS": "200"})
    assert (done.returncode, done.stderr) == (2, f"error: {BAD}: cannot open: Permission denied\n")
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert [(f["rule"], f["path"], f["message"], f["fails"]) for f in report["findings"]] == [
        ("DSH810", GOOD, "no capture given or found beside the log (wire.jsonl)", False),
        ("DSH801", BAD, "cannot open: Permission denied", True)]


FORK = CORPUS / "live" / "f-fork" / "session-logs"
FORK_CHILD = "402a1ae8-7f85-40fc-b7cf-82cfc177dcd7.jsonl"
FORK_PARENT = "session-ef87ee25-88b4-4f9c-a682-fd2071e3f0d6.jsonl"


@pytest.mark.skipif(not FORK.is_dir(), reason="../shared/corpus is absent")
@pytest.mark.parametrize("ignored", [False, True])
def test_a_policy_that_ignores_dsh603_keeps_no_seed_chain(ignored: bool, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Session 42: a fork child whose seed differs from its parent's prefix is DSH603, unless the
    policy ignores the rule: then no log keeps its seed chain and no child is paired, the run passing."""
    from dsh_audit.gate import _run

    (tmp_path / "p").mkdir()
    shutil.copy(FORK / FORK_CHILD, tmp_path / "p" / FORK_CHILD)
    parent = (FORK / FORK_PARENT).read_text("utf-8")  # its event 1 a millisecond later than the child's seed
    (tmp_path / "p" / FORK_PARENT).write_text(parent.replace('"seq":1,"time":1796209397804',
                                                             '"seq":1,"time":1796209397805', 1), "utf-8")
    (tmp_path / "pol.toml").write_text("[tool.dsh-audit]\n" + ('ignore = ["DSH603"]\n' if ignored else ""), "utf-8")
    monkeypatch.chdir(tmp_path)
    groups: list[Any] = []
    real, paired = _run.check_group, _run.lineage_findings
    monkeypatch.setattr(_run, "check_group", lambda *a, **k: groups.append(real(*a, **k)) or groups[-1])
    monkeypatch.setattr(_run, "lineage_findings", lambda *a, **k: groups.append("paired") or paired(*a, **k))
    code, _, err = invoke(monkeypatch, capsys, "check", "p", "--policy", "pol.toml", "--json-report", "r.json")
    findings = json.loads(Path("r.json").read_text("utf-8"))["findings"]
    child, parent_path = f"p/{FORK_CHILD}", f"p/{FORK_PARENT}"
    assert (code, err, [(f["rule"], f["path"], f["line"], f["fails"]) for f in findings]) == (
        (0, [], [("DSH810", child, None, False), ("DSH810", parent_path, None, False)]) if ignored else
        (1, [], [("DSH810", child, None, False), ("DSH603", child, 3, True), ("DSH810", parent_path, None, False)]))
    lineages = [[(path, lineage is not None and bool(lineage.chain)) for path, lineage in group.lineages]
                for group in groups if group != "paired"]
    assert lineages == ([[]] if ignored else [[(child, True), (parent_path, True)]])
    assert groups.count("paired") == (0 if ignored else 1)
