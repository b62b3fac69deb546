"""Issue 15, fuzz round 14 defect D1 (docs/hostile-inputs.md): a ``wire.jsonl`` found beside one log
that cannot be read (garbage, a FIFO, a link to a folder, a body of the wrong size, no permission)
made every log of its project folder fail in every view, the error said once per log. It was then
the error of the log it belongs to alone. Tour 38: a found capture is optional evidence, so every
view that describes logs warns once (naming --capture and --no-capture) and reports every log as
if it were not there (exit 0); ``check`` makes it its finding; ``diff``, which is asked to compare,
still refuses it.

The root: ``s1`` the sample change session (4 breaks, no capture), ``s2`` a one-turn chat whose
``wire.jsonl`` is bad, ``s3`` the sample tools session with a capture of exactly what it sent.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from _cli import chat_log, invoke

from dsh_audit.session import open_session, route_renderer

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"
CHANGE = SAMPLES / "sessions" / "--home-dev-projects-demo--" / "session-sample-change" / "session.jsonl.zstd"
WIRE = "root/proj/s2/wire.jsonl"
FOUND = "found beside the log, it is what the log is compared with: repair or remove it"
#: A view that goes on without a found capture it cannot read says so with this hint (tour 38).
LEFT = "found beside the log, it was left out: --capture FILE gives another, --no-capture ignores found ones"
BREAKS = [(1, "model"), (2, "reasoningEffort"), (3, "tools"), (4, "system")]  # s1's, each a header_change


def _garbage(wire: Path) -> None:
    wire.write_text("garbage\n", encoding="utf-8")


def _folder(wire: Path) -> None:
    (wire.parent.parent.parent.parent / "empty").mkdir()
    wire.symlink_to(wire.parent.parent.parent.parent / "empty")


def _body_size(wire: Path) -> None:
    record = {"method": "POST", "path": "/chat/completions", "headers": {}, "body": '{"messages":[]}', "body_bytes": 5}
    wire.write_text(json.dumps(record) + "\n", encoding="utf-8")


def _objects(wire: Path) -> None:
    """JSON objects none of which is a capture record (session 35, fuzz round 16 D5)."""
    wire.write_text('{"x": 1}\n{"y": [2]}\n', encoding="utf-8")


def _unreadable(wire: Path) -> None:
    _body_size(wire)
    wire.chmod(0)


#: Each bad capture: how it is made, and the error (the reason and the loader's hint) it is.
BAD: dict[str, tuple[Callable[[Path], None], str]] = {
    "garbage": (_garbage, "not a capture format dsh-audit knows (hint: expected a wire.jsonl file, a HAR 1.2 "
                          "file or a folder of *.json bodies"),
    "fifo": (os.mkfifo, "is a FIFO, not a capture file (hint: only regular files are read"),
    "folder": (_folder, "not a capture format dsh-audit knows (hint: expected a wire.jsonl file, a HAR 1.2 "
                        "file or a folder of *.json bodies"),
    "body size": (_body_size, "line 1: body is 15 bytes, body_bytes says 5 (hint: the capture was edited or "
                              "re-encoded; recapture or drop body_bytes"),
    "objects": (_objects, "line 1: not a capture: no line is a capture record (no method, path, body or "
                          "body_base64) (hint: pass --capture a wire.jsonl of request records (method, path, "
                          "headers, body), a HAR 1.2 file or a folder of *.json bodies"),
    "unreadable": (_unreadable, "cannot open: Permission denied (hint: check the file's permissions"),
}


def _error(kind: str, wire: str = WIRE) -> str:
    """The one error line of the bad capture ``kind``, its file named as ``wire``."""
    return f"{wire}: {BAD[kind][1]}; {FOUND})"


def _left(kind: str, wire: str = WIRE) -> str:
    """The one warning line of the bad capture ``kind`` left out by a view that goes on without it."""
    return f"{wire}: {BAD[kind][1]}; {LEFT})"


def _root(folder: Path, kind: str | None) -> None:
    """The three sessions under ``folder/root/proj``; ``kind`` None: s2 with no capture at all."""
    proj = folder / "root" / "proj"
    (proj / "s1").mkdir(parents=True)
    shutil.copy(CHANGE, proj / "s1")
    chat_log(proj / "s2" / "session.jsonl", "s2-chat")
    (proj / "s3").mkdir()
    shutil.copy(SAMPLES / "tools" / "session.jsonl", proj / "s3")
    session = open_session(proj / "s3" / "session.jsonl")
    render = route_renderer([session])
    (proj / "s3" / "wire.jsonl").write_text("".join(
        json.dumps({"method": "POST", "path": "/chat/completions",
                    "headers": {"x-deepseek-harness-session-id": session.id},
                    "body": render(request, {}).decode()}) + "\n" for request in session.requests), encoding="utf-8")
    if kind is not None:
        BAD[kind][0](proj / "s2" / "wire.jsonl")


@pytest.fixture(params=list(BAD))
def bad(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The root with s2's capture made bad, as the current folder; a run that hangs fails."""
    kind: str = request.param
    if kind == "unreadable" and os.geteuid() == 0:
        pytest.skip("root reads a file of mode 000 (the other kinds cover a capture that cannot be read)")
    _root(tmp_path, kind)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "200")

    def hung(_signal: int, _frame: FrameType | None) -> None:
        raise TimeoutError("a bad capture hung the run")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    yield kind
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


_BASELINES: dict[tuple[str, ...], tuple[int, str, list[str]]] = {}


def _baseline(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
              tmp_path_factory: pytest.TempPathFactory, *args: str) -> tuple[int, str, list[str]]:
    """``dsh-audit ARGS`` over the same root with s2 given no capture: what the neighbours are
    reported as when the bad capture is not there (run once a module, from its own folder)."""
    if args not in _BASELINES:
        folder = tmp_path_factory.getbasetemp() / "capture-isolation-baseline"
        if not folder.exists():
            folder.mkdir()
            _root(folder, None)
        here = Path.cwd()
        os.chdir(folder)
        try:
            _BASELINES[args] = invoke(monkeypatch, capsys, *args)
        finally:
            os.chdir(here)
    return _BASELINES[args]


def _lines(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("cost", [[], ["--cost"]])
def test_breaks(bad: str, cost: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                tmp_path_factory: pytest.TempPathFactory) -> None:
    code, out, err = invoke(monkeypatch, capsys, "breaks", "root", "--json", *cost)
    assert (code, err) == (0, [f"warning: {_left(bad)}"])
    rows = _lines(out)
    assert [(r["path"], r["request"], r["cause"], r["fields"][0]["field"]) for r in rows] == [
        ("root/proj/s1/session.jsonl.zstd", n, "header_change", field) for n, field in BREAKS]
    assert out == _baseline(monkeypatch, capsys, tmp_path_factory, "breaks", "root", "--json", *cost)[1]


def test_breaks_table(bad: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "breaks", "root")
    assert (code, err) == (0, [f"warning: {_left(bad)}"])
    assert out.splitlines()[0] == "root/proj/s1/session.jsonl.zstd  session session-sample-change"
    assert [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│")] == ["1", "2", "3", "4"]


def test_cache(bad: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
               tmp_path_factory: pytest.TempPathFactory) -> None:
    code, out, err = invoke(monkeypatch, capsys, "cache", "root", "--json")
    assert (code, err) == (0, [f"warning: {_left(bad)}"])
    reports = _lines(out)
    assert [(r["path"], r["requests"], r["breaks"], r["breaks_by_cause"]) for r in reports] == [
        ("root/proj/s1/session.jsonl.zstd", 5, 4, {"header_change": 4}), ("root/proj/s2/session.jsonl", 1, 0, {}),
        ("root/proj/s3/session.jsonl", 4, 0, {})]
    _, whole, _ = _baseline(monkeypatch, capsys, tmp_path_factory, "cache", "root", "--json")
    assert reports == _lines(whole)


def test_usage(bad: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
               tmp_path_factory: pytest.TempPathFactory) -> None:
    code, out, err = invoke(monkeypatch, capsys, "usage", "root", "--json")
    assert (code, err) == (0, [f"warning: {_left(bad)}"])
    table = json.loads(out)
    assert (table["sessions"], table["logs_failed"]) == (3, 0)
    assert [(row["key"], row["requests"]) for row in table["rows"]] == [
        ("session-sample-tools", 4), ("session-sample-change", 5), ("s2-chat", 1)]
    _, whole, _ = _baseline(monkeypatch, capsys, tmp_path_factory, "usage", "root", "--json")
    assert out == whole


def test_sessions(bad: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                  tmp_path_factory: pytest.TempPathFactory) -> None:
    """``sessions`` lists the log the capture was found beside as one with none, the capture in its
    warnings (said once, naming the log, as sessions says a log's warnings)."""
    code, out, err = invoke(monkeypatch, capsys, "sessions", "root", "--json")
    assert (code, err) == (0, [f"warning: root/proj/s2/session.jsonl: {_left(bad)}"])
    rows = {row["path"]: row for row in _lines(out)}
    assert [(path, row["breaks"], row["requests"]) for path, row in sorted(rows.items())] == [
        ("root/proj/s1/session.jsonl.zstd", 4, 5), ("root/proj/s2/session.jsonl", 0, 1),
        ("root/proj/s3/session.jsonl", 0, 4)]
    assert (rows["root/proj/s2/session.jsonl"]["notes"], rows["root/proj/s2/session.jsonl"]["warnings"]) == (
        [], [_left(bad)])
    _, whole, _ = _baseline(monkeypatch, capsys, tmp_path_factory, "sessions", "root", "--json")
    before = {row["path"]: row for row in _lines(whole)}
    assert [rows[p] for p in ("root/proj/s1/session.jsonl.zstd", "root/proj/s3/session.jsonl")] == \
        [before[p] for p in ("root/proj/s1/session.jsonl.zstd", "root/proj/s3/session.jsonl")]


def test_index(bad: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "index", "root", "--db", "i.sqlite", "--json")
    left = _left(bad, str(tmp_path / WIRE))
    assert (code, err) == (0, [f"warning: {left}"])
    summary = json.loads(out)
    assert (summary["indexed"], summary["refused"], summary["failure_details"], summary["warnings"]) == (
        3, 0, [], [left])
    with sqlite3.connect("i.sqlite") as db:
        stored = db.execute("SELECT path, error, request_count FROM sessions ORDER BY path").fetchall()
        breaks = db.execute("SELECT path, request, cause FROM breaks ORDER BY path, request").fetchall()
    s1, s2, s3 = (str(tmp_path / f"root/proj/{name}") for name in ("s1/session.jsonl.zstd", "s2/session.jsonl",
                                                                     "s3/session.jsonl"))
    assert stored == [(s1, None, 5), (s2, None, 1), (s3, None, 4)]
    assert breaks == [(s1, n, "header_change") for n, _ in BREAKS]


def test_check(bad: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The capture is check's finding (``fail-on-refusal``: check fails, exit 1), at the capture,
    and its warning; the log is checked without it (tour 38: its request counts, as a log with no
    capture), the other logs are checked, s3 against its own capture."""
    code, out, err = invoke(monkeypatch, capsys, "check", "root", "--json")
    assert (code, err) == (1, [f"warning: {_left(bad)}"])
    report = json.loads(out)
    assert [(s["path"], s["error"], s["requests"], len(s["break_details"]), s["capture_verdicts"], s["failed"])
            for s in report["sessions"]] == [
        ("root/proj/s1/session.jsonl.zstd", None, 5, 4, {}, False), ("root/proj/s2/session.jsonl", None, 1, 0, {}, True),
        ("root/proj/s3/session.jsonl", None, 4, 0, {"identical": 4}, False)]  # issue 15: s2 fails as the run does
    message, hint = _left(bad).removeprefix(f"{WIRE}: ").removesuffix(")").split(" (hint: ")
    none = ("no capture given or found beside the log (wire.jsonl)",
            "pass --capture FILE, or put a wire.jsonl holding the log's requests beside it or up to four folders above it",
            False)
    assert [(f["rule"], f["path"], f["message"], f["hint"], f["fails"]) for f in report["findings"]] == [
        ("DSH810", "root/proj/s1/session.jsonl.zstd", *none),
        ("DSH810", "root/proj/s2/session.jsonl", f"no capture compared: the capture found beside the log ({WIRE}) "
         "cannot be read (DSH802)", "repair or remove that file (its DSH802 says where it breaks), or pass --capture "
         "FILE", False),  # fix W: not "none found"
        ("DSH802", WIRE, message, hint, True)]
    code, out, err = invoke(monkeypatch, capsys, "check", "root")
    assert (code, err) == (1, [f"warning: {_left(bad)}"])
    lines = out.splitlines()  # the finding's line, fit to COLUMNS=200 (wrapped at spaces), first (failing)
    assert [[cell.strip() for cell in line.split("│")[1:6]] for line in lines if line.startswith("│")] == [
        ["ok", "root/proj/s1/session.jsonl.zstd", "session-sample-change", "5", "none"],
        ["FAIL", "root/proj/s2/session.jsonl", "s2-chat", "1", "unreadable"],  # issue 15: as the run, not "ok"
        ["ok", "root/proj/s3/session.jsonl", "session-sample-tools", "4", "4/4 identical"]]
    at = next(n for n, line in enumerate(lines) if line.startswith(f"{WIRE}: "))
    end = next(n for n in range(at + 1, len(lines)) if not lines[n].startswith(" "))
    assert lines[end].startswith("root/proj/s1/session.jsonl.zstd: DSH810 info: ")
    assert " ".join(line.strip() for line in lines[at:end]) == (
        f"{WIRE}: DSH802 error (fails the gate: fail-on-refusal): {message} (hint: {hint})")


def test_report(bad: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A found capture is optional evidence: the page is written with every log's requests, the
    capture said in a warning (and on the page as check's finding), exit 0 (tour 38)."""
    code, out, err = invoke(monkeypatch, capsys, "report", "root", "-o", "r.html")
    assert (code, out, err) == (0, "wrote r.html: 3 log(s), 10 request(s), "
                                   "check failed: 1 unreadable capture(s) · 4 explained break(s)\n",
                                [f"warning: {_left(bad)}"])


def test_diff(bad: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The logs compared with other captures are compared; the bad one is said once (exit 2)."""
    code, out, err = invoke(monkeypatch, capsys, "diff", "root", "--json")
    assert (code, err) == (2, [
        "note: root/proj/s1/session.jsonl.zstd: no capture given or found beside the log (wire.jsonl): not compared",
        f"error: {_error(bad)}",
        _unread(bad),  # issue 15: its log named, not counted among the logs compared
        "note: capture root/proj/s3/wire.jsonl found beside 1 log(s) (--capture FILE names another)"])
    assert [(r["session_id"], r["index"], r["verdict"]) for r in _lines(out)] == [
        ("session-sample-tools", n, "identical") for n in range(4)]
    code, out, err = invoke(monkeypatch, capsys, "diff", "root/proj/s2")
    assert (code, out, err) == (2, "", [f"error: {_error(bad)}", _unread(bad)])  # nothing else to compare: no summary


def _unread(kind: str) -> str:
    """diff's note on s2, whose capture (bad ``kind``) cannot be read: check's DSH810 words, and why."""
    why = BAD[kind][1].split(" (hint: ")[0]
    return (f"note: root/proj/s2/session.jsonl: no capture compared: the capture found beside the log ({WIRE}) "
            f"cannot be read: {why} (--capture FILE names one)")


def test_a_capture_given_for_every_log_stays_the_runs_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """``check --capture`` names the capture of every log: one that cannot be read is bad input for
    the run (exit 2, no report), its hint the loader's own (the user named the file)."""
    _root(tmp_path, None)
    monkeypatch.chdir(tmp_path)
    _garbage(tmp_path / "g.jsonl")
    code, out, err = invoke(monkeypatch, capsys, "check", "root", "--capture", "g.jsonl")
    assert (code, out, err) == (2, "", ["error: g.jsonl: not a capture format dsh-audit knows (hint: expected a "
                                        "wire.jsonl file, a HAR 1.2 file or a folder of *.json bodies)"])
