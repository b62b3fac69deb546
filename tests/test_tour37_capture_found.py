"""Tour 37 item 1 (issue 14): a ``wire.jsonl`` found above the logs (not given with ``--capture``)
was compared with every session below it, so ``check``, ``diff`` and ``report`` failed each session
whose requests it does not hold (DSH813 "unmatched", "0/3 identical"). A capture found, not given,
is now the capture only of the sessions it holds requests of (:func:`dsh_audit.capture.held_sessions`);
for the others it is no capture (DSH810, which says the capture found holds none of their requests,
as ``diff`` does: fuzz round 28 D6), in every view alike. A capture
given with ``--capture`` is every log's, as before.

The home: the corpus's ``a-chat`` and ``c-change`` logs under one ``home/sessions``, with
``c-change``'s ``wire.jsonl`` at ``home/wire.jsonl``, three folders above each log (the tour's
``/tmp/tour37/home3``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _cli import invoke

from dsh_audit.capture import held_sessions

LIVE = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "live"
LIVE_PI = LIVE.parent / "live-pi"
needs_corpus = pytest.mark.skipif(not (LIVE / "c-change").is_dir(), reason="../shared/corpus is absent")

CHAT_ID = "session-2b096b61-0a34-4da6-abec-4e87161c2c0b"
CHANGE_ID = "session-da27503b-0c2b-4cbd-a3bf-da4c3c2f1824"
CHAT = f"home/sessions/--home-dev-dsh-runs-a-a-chat-ws--/{CHAT_ID}/session.jsonl.zstd"
CHANGE = f"home/sessions/--home-dev-dsh-runs-a-c-change-ws--/{CHANGE_ID}/session.jsonl.zstd"
WIRE = "home/wire.jsonl"
DSH810 = {"rule": "DSH810", "severity": "info",
          "message": f"no capture: the capture found beside the log ({WIRE}) holds none of its requests (it holds "
                     f"requests of session(s) {CHANGE_ID})",
          "path": CHAT, "line": None, "seq": None, "session_id": CHAT_ID, "request": None, "fails": False,
          "hint": "pass --capture FILE naming the log's capture, or put the wire.jsonl holding its requests beside "
                  "it or up to four folders above it"}


def _home(root: Path, scenarios: tuple[str, ...] = ("a-chat", "c-change"), *, wire: Path | None = None) -> None:
    """``root/home``: the sessions of ``scenarios`` under one ``sessions`` folder, and ``wire``
    (default: c-change's capture) at ``home/wire.jsonl``."""
    for scenario in scenarios:
        shutil.copytree(LIVE / scenario / "home" / "sessions", root / "home" / "sessions", dirs_exist_ok=True)
    shutil.copyfile(wire or LIVE / "c-change" / "wire.jsonl", root / WIRE)


@pytest.fixture
def home3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _home(tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path


def _check_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                *args: str) -> tuple[int, dict[str, object]]:
    code, out, _ = invoke(monkeypatch, capsys, "check", *args, "--json")
    return code, json.loads(out)


@needs_corpus
def test_check_a_found_capture_is_no_capture_of_a_session_it_holds_nothing_of(
        home3: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _check_json(monkeypatch, capsys, "home/sessions")
    assert code == 0
    sessions = report["sessions"]
    assert isinstance(sessions, list)
    assert [(s["path"], s["capture"], s["failed"]) for s in sessions] == [(CHAT, None, False), (CHANGE, WIRE, False)]
    assert report["findings"] == [DSH810]
    assert report["counts"] == {"error": 0, "warning": 0, "info": 1, "failing": 0, "sessions": 2, "requests": 11,
                                "logs_not_checked": 0}
    code, out, err = invoke(monkeypatch, capsys, "check", "home/sessions", "--format", "csv")
    assert code == 0
    rows = [line.split(",") for line in out.splitlines()]
    capture = rows[0].index("capture")
    assert [row[capture] for row in rows[1:]] == ["none", "8/8 identical"]


@needs_corpus
def test_check_the_same_capture_given_is_every_logs(home3: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    code, report = _check_json(monkeypatch, capsys, "home/sessions", "--capture", WIRE)
    assert code == 1
    sessions = report["sessions"]
    assert isinstance(sessions, list)
    assert [s["capture"] for s in sessions] == [WIRE, WIRE]
    findings = report["findings"]
    assert isinstance(findings, list)
    assert [(f["rule"], f["session_id"], f["request"]) for f in findings] == [
        ("DSH813", CHAT_ID, 0), ("DSH813", CHAT_ID, 1), ("DSH813", CHAT_ID, 2)]


@needs_corpus
def test_check_a_found_capture_missing_some_of_a_sessions_requests_still_fails_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    lines = (LIVE / "c-change" / "wire.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "part.jsonl").write_text("".join(lines[:6]), encoding="utf-8")  # requests 0-5 of 8 sent
    _home(tmp_path, wire=tmp_path / "part.jsonl")
    monkeypatch.chdir(tmp_path)
    code, report = _check_json(monkeypatch, capsys, "home/sessions")
    assert code == 1
    sessions = report["sessions"]
    assert isinstance(sessions, list)
    assert [s["capture"] for s in sessions] == [None, WIRE]
    findings = report["findings"]
    assert isinstance(findings, list)
    assert [(f["rule"], f["session_id"], f["request"]) for f in findings] == [
        ("DSH810", CHAT_ID, None), ("DSH813", CHANGE_ID, 6), ("DSH813", CHANGE_ID, 7)]


@needs_corpus
def test_check_a_found_capture_with_no_session_header_is_its_own_sessions(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """pi-ai sends no DSH session header: its capture is held by the session its sends pair with."""
    pi = LIVE_PI / "c1-anthropic-tools"
    shutil.copytree(pi / "home" / "sessions", tmp_path / "home" / "sessions")
    _home(tmp_path, ("a-chat",), wire=pi / "wire.jsonl")
    monkeypatch.chdir(tmp_path)
    code, report = _check_json(monkeypatch, capsys, "home/sessions")
    assert code == 0
    sessions = report["sessions"]
    assert isinstance(sessions, list)
    assert [(s["session_id"], s["capture"]) for s in sessions] == [
        (CHAT_ID, None), ("session-514c4bc2-e0ec-419e-84d4-2f666d536239", WIRE)]
    # pi-ai's sends name no session: the capture is held by the session they pair with, in another group
    # of logs than the chat's; check says so as diff does (session 44), not "its 11 captured request(s) name no
    # session"
    held = "holds none of its requests (it holds requests of session(s) session-514c4bc2-e0ec-419e-84d4-2f666d536239)"
    assert report["findings"] == [{**DSH810, "message": f"no capture: the capture found beside the log ({WIRE}) {held}"}]


@needs_corpus
def test_diff_compares_only_the_logs_a_found_capture_holds(home3: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "diff", "home/sessions")
    assert code == 0
    assert err == [
        f"note: {CHAT}: no capture: the capture found beside the log ({WIRE}) holds none of its requests (it holds "
        f"requests of session(s) {CHANGE_ID}); not compared (--capture FILE names one)",
        f"note: capture {WIRE} found beside 1 log(s) (--capture FILE names another)"]
    assert out.splitlines()[0] == f"{CHANGE}  session {CHANGE_ID}"
    assert out.splitlines()[-1] == "8 request(s): 8 identical; 0 capture(s) unexplained, 0 foreign: OK"
    code, out, err = invoke(monkeypatch, capsys, "diff", "home/sessions", "--json")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [(r["session_id"], r["verdict"]) for r in rows] == [(CHANGE_ID, "identical")] * 8
    code, out, err = invoke(monkeypatch, capsys, "diff", "home/sessions", "--capture", WIRE)  # given: every log's
    assert code == 1
    assert out.splitlines()[-1] == "11 request(s): 8 identical, 3 unmatched; 0 capture(s) unexplained, 0 foreign: FAILED"


#: diff's hint on logs the capture found beside them holds nothing of: check's DSH810 hint (one log).
_FOREIGN_HINT = DSH810["hint"]


@needs_corpus
def test_diff_says_whose_a_found_capture_is_when_it_compares_nothing(
        home3: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 15: ``diff`` of logs a found capture holds nothing of said "no capture given or found"
    after a note that it was found. The error now says what check's DSH810 says, and whose requests
    the capture holds (ids escaped), for one log and several; a capture that cannot be read names
    its logs: "cannot be read: <why>"."""
    send = json.loads((LIVE / "c-change" / "wire.jsonl").read_text(encoding="utf-8").splitlines()[0])
    send["headers"]["x-deepseek-harness-session-id"] = "s-\x1b[31mred\nx"
    (home3 / WIRE).write_text(json.dumps(send) + "\n", encoding="utf-8")
    assert invoke(monkeypatch, capsys, "diff", CHAT) == (2, "", [
        f"error: {CHAT}: no capture: the capture found beside the log ({WIRE}) holds none of its requests (it "
        r"holds requests of session(s) s-\u001b[31mred\u000ax): nothing compared (hint: " + f"{_FOREIGN_HINT})"])
    shutil.copyfile(LIVE / "b-tools" / "wire.jsonl", home3 / WIRE)
    assert invoke(monkeypatch, capsys, "diff", "home/sessions", "--jobs", "2") == (2, "", [
        f"error: home/sessions: 2 log(s) with no capture: the capture found beside each holds none of its requests "
        f"({WIRE}: it holds requests of session(s) session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd): nothing compared "
        f"({CHAT} and 1 more) (hint: pass --capture FILE naming the logs' capture, or put the wire.jsonl holding "
        "their requests beside them or up to four folders above them)"])
    (home3 / WIRE).write_text(f"{json.dumps(send)}\nnot json\n", encoding="utf-8")
    why = "line 2: not a JSON record (Expecting value: line 1 column 1 (char 0))"
    assert invoke(monkeypatch, capsys, "diff", "home/sessions") == (2, "", [
        f"error: {WIRE}: {why} (hint: a wire.jsonl capture has one JSON object per line; found beside the log, it is "
        "what the log is compared with: repair or remove it)",
        f"note: 2 log(s) with no capture compared: the capture found beside them ({WIRE}) cannot be read: {why} "
        f"({CHAT} and 1 more; --capture FILE names one)"])
    code, out, err = invoke(monkeypatch, capsys, "diff", CHANGE)
    assert (code, out, err[1:]) == (2, "", [
        f"note: {CHANGE}: no capture compared: the capture found beside the log ({WIRE}) cannot be read: {why} "
        "(--capture FILE names one)"])


@needs_corpus
def test_report_passes_the_sessions_a_found_capture_holds_nothing_of(
        home3: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = invoke(monkeypatch, capsys, "report", "home/sessions", "-o", "r.html")
    # the change session's title call is priced from the capture found beside it (its log holds no usage)
    assert (code, out, err) == (0, "wrote r.html: 2 log(s), 11 request(s), check passed: 5 explained break(s)\n",
                                ["note: 1 request(s) priced from the capture's usage (their log holds none)"])
    code, out, err = invoke(monkeypatch, capsys, "check", "home/sessions", "--json-report", "r.json")
    assert code == 0
    report = json.loads((home3 / "r.json").read_text(encoding="utf-8"))
    assert [(s["session_id"], s["capture"]) for s in report["sessions"]] == [(CHAT_ID, None), (CHANGE_ID, WIRE)]
    assert report["findings"] == [DSH810]


def test_held_sessions_names_the_sessions_a_capture_holds() -> None:
    """By the session header a captured request carries (paired or not), else by a pairing."""

    class Side:
        def __init__(self, session_id: str | None) -> None:
            self.session_id = session_id

    class Pair:
        def __init__(self, request: str | None, capture: Side | None) -> None:
            self.request = None if request is None else Side(request)
            self.capture = capture

    pairs = [Pair("a", None), Pair("b", Side(None)), Pair(None, Side("c")), Pair("d", Side("d")),
             Pair(None, Side(None))]
    assert held_sessions(pairs) == {"b", "c", "d"}  # type: ignore[arg-type]
