"""``dsh-audit watch`` prices a request whose log holds no usage from the capture, as every other
view does (issue 13).

``usage``, ``cache``, ``sessions`` and ``requests`` price a title call (DSH logs no usage for it)
from the provider's usage in the captured response to its send: the ``wire.jsonl`` found beside
the log (live/a-chat: title call #0, 140 in / 5 out, $0.000024). The watch read no capture, so its
summary was ``usage --no-capture``'s ($0.001261008, 1 unpriced) where ``usage`` said
$0.001285008. Now it prices it by the same functions (``given_usage`` over ``given_capture``):
``"usage_source": "capture"`` on its line, and the summary is ``usage --json``'s totals exactly;
with no capture looked for (``--no-capture``'s setting) it is ``usage --no-capture``'s again. A
capture that does not report the request yet (a proxy that writes the response after DSH logged
it) shows it provisional, then as an update, priced, once it does.

Real file reading, no mocks: a copy of the corpus session and its capture.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke
from test_watch_fixes import SAFETY, _append

from dsh_audit.cache import Tokens
from dsh_audit.capture import NO_CAPTURE_ENV
from dsh_audit.watch import WatchItem, WatchNote, WatchRequest, WatchSummary, watch
from dsh_audit.watch._model import CaptureNote

CHAT = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live" / "a-chat"
TOOLS = CHAT.parent / "b-tools"
WATCH = ("--since", "100000d", "--idle-exit", "0.3", "--polling", "--json")
needs_corpus = pytest.mark.skipif(not (CHAT / "wire.jsonl").is_file(), reason="../shared/corpus is absent")
#: The title call's price from the capture's usage (140 cache-miss, 5 output tokens at peak).
TITLE = {"cache_miss": 0.000021, "cache_read": 0, "cache_write": 0, "output": 0.000003, "total": 0.000024}


def _copy(tmp_path: Path, *, records: slice = slice(None), source: Path = CHAT) -> Path:
    """a-chat's (``source``'s) log in ``tmp_path/chat/session-logs`` with (the ``records`` of) its
    wire.jsonl in ``tmp_path/chat``, where every view finds it; the logs' folder."""
    logs = tmp_path / "chat" / "session-logs"
    logs.mkdir(parents=True)
    for log in (source / "session-logs").glob("*.jsonl"):
        shutil.copyfile(log, logs / log.name)
    lines = (source / "wire.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "chat" / "wire.jsonl").write_bytes(b"".join(lines[records]))
    return logs


def _totals(summary: dict[str, Any]) -> tuple[Any, ...]:
    return summary["cost_usd"], summary["requests"], summary["unpriced_requests"], summary["cost_complete"]


@needs_corpus
@pytest.mark.parametrize("capture", [True, False], ids=["found", "no-capture"])
def test_the_summary_is_usage_totals_with_the_capture_and_without(capture: bool, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """A watch over a copy of a-chat: its summary is ``usage --json``'s totals exactly ($0.001285008,
    nothing unpriced: the title call priced from the wire.jsonl beside it, its line marked
    ``"usage_source": "capture"``); with no capture looked for, ``usage --no-capture``'s
    ($0.001261008, 1 unpriced; the title call's source null)."""
    logs = str(_copy(tmp_path))
    monkeypatch.chdir(tmp_path)
    if not capture:
        monkeypatch.setenv(NO_CAPTURE_ENV, "1")  # what --no-capture sets, for every command
    code, out, _ = invoke(monkeypatch, capsys, "watch", logs, *WATCH)
    assert code == 0
    lines = [json.loads(line) for line in out.splitlines()]
    requests = [line for line in lines if line["type"] == "request"]
    assert [(r["index"], r["usage_source"], r["provisional"]) for r in requests] == [
        (0, "capture" if capture else None, False), (1, "log", False), (2, "log", False)]
    assert requests[0]["cost_usd"] == (TITLE if capture else None)
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--json", logs, *(() if capture else ("--no-capture",)))
    assert code == 0
    totals = json.loads(out)["totals"]
    expected = {"cache_miss": 0.00123 if capture else 0.001209, "cache_read": 0.000023808, "cache_write": 0,
                "output": 0.0000312 if capture else 0.0000282, "total": 0.001285008 if capture else 0.001261008}
    assert _totals(lines[-1]) == _totals(totals) == (expected, 3, 0 if capture else 1, capture)


@needs_corpus
@pytest.mark.parametrize("mode", ["complete", "grows", "ends"])
def test_a_request_the_capture_reports_late_is_provisional_then_updated(mode: str, tmp_path: Path) -> None:
    """The capture holds a-chat's two loop requests, not yet the title call's. A log complete when
    the watch began (``complete``) is priced from the capture as it was then: the title call is
    unpriced, not provisional, and comes again, priced, once the capture changes (as the watch
    ends, as in ``ends``: its loop requests were judged together; it said $0.001261008,
    1 unpriced, as ``usage`` said when the watch began). Written after the watch began, the
    title call is shown provisional and unpriced; its record is written to the capture, and it
    comes again, as an update priced from it: as the log shows its next request (``grows``: before
    it, settled), or as the watch ends, before its summary (``ends``: not provisional either, fuzz
    round 28 D5: it only re-prices a request read before the end, and nothing follows it). The
    summary counts it once, priced: $0.001285008."""
    logs = _copy(tmp_path, records=slice(None, None, 2))  # records 1 and 3: not the title call's (2)
    title = (CHAT / "wire.jsonl").read_bytes().splitlines(keepends=True)[1]
    log = next(logs.glob("*.jsonl"))
    lines = log.read_bytes().splitlines(keepends=True)
    if mode != "complete":
        log.write_bytes(b"".join(lines[:13]))  # up to the title call's request: no request yet
    stop, items = threading.Event(), []
    for item in watch([logs], stop=stop, since=0, exit_after=SAFETY, poll=0.02, notifications=False):
        items.append(item)
        if isinstance(item, WatchNote) and item.level == "watching" and mode != "complete":
            _append(log, b"".join(lines[13:26] if mode == "grows" else lines[13:]))()
        if isinstance(item, WatchRequest) and item.index == (2 if mode == "ends" else 1):
            _append(logs.parent / "wire.jsonl", title)()
            if mode == "grows":
                _append(log, b"".join(lines[26:]))()
        if isinstance(item, WatchRequest) and item.index == 2:
            stop.set()
    shown = [(i.index, i.provisional, i.update, i.usage_source, i.cost) for i in items if isinstance(i, WatchRequest)]
    assert shown[0] == (0, mode != "complete", False, None, None), shown
    assert [index for index, *_ in shown] == {"complete": [0, 1, 2, 0], "grows": [0, 1, 0, 2], "ends": [0, 1, 2, 0]}[mode]
    assert shown[2 if mode == "grows" else 3] == (0, False, True, "capture", 0.000024), shown
    assert _judged(items) == [(0, 140, 0, 0, 0, "as_expected")]  # judged again with the capture's usage, as `cache` does
    summary = _summary(items)
    assert (summary["cost_usd"]["total"], summary["requests"], summary["unpriced_requests"]) == (0.001285008, 3, 0)


def _judged(items: list[WatchItem]) -> list[tuple[Any, ...]]:
    """Each update's index, prompt tokens, cache reads (actual, expected, reusable) and verdict."""
    return [(i.index, i.prompt_tokens, i.actual, i.expected, i.potential, i.classification) for i in items
            if isinstance(i, WatchRequest) and i.update]


def _summary(items: list[WatchItem]) -> dict[str, Any]:
    summary = WatchSummary()
    for item in items:
        summary.add(item)
    assert not [i for i in items if isinstance(i, WatchNote) and i.level == "error"]
    return summary.to_json()


def _has_capture_options() -> bool:
    from dsh_audit.cli._watch import watch_command

    return any(param.name == "capture" for param in watch_command.params)


@needs_corpus
@pytest.mark.skipif(not _has_capture_options(), reason="watch's --capture/--no-capture: /tmp/b41/watchcap/cli_watch.patch")
def test_the_lines_mark_the_capture_s_usage_and_say_so_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The title call's line marks its prompt tokens and cost ``*``, a caption in `requests`' words
    under it, once; --no-capture leaves it unpriced (``$?``, the total a lower bound), and
    --capture gives the capture back."""
    logs = str(_copy(tmp_path))
    monkeypatch.setenv("COLUMNS", "250")
    plain = WATCH[:-1]  # no --json
    code, out, err = invoke(monkeypatch, capsys, "watch", logs, *plain)
    assert code == 0
    title = out.splitlines()[0]
    assert "#0 title  deepseek-v4-flash  prompt 140*  cache 0 of 0 reusable (0 expected)  $0.000024*  as_expected" \
        in title
    assert err.count("*: the capture's usage (the log holds none), as usage prices the request") == 1
    assert err[-1] == "watched 1 session(s): 3 request(s), 0 break(s), $0.0013"
    code, out, err = invoke(monkeypatch, capsys, "watch", logs, *plain, "--no-capture")
    assert "prompt ?  cache ? of 0 reusable (0 expected)  $?  usage_unknown" in out.splitlines()[0]
    assert err[-1] == "watched 1 session(s): 3 request(s), 0 break(s), ≥$0.0013 (1 unpriced)"
    code, out, err = invoke(monkeypatch, capsys, "watch", logs, *plain, "--no-capture",
                            "--capture", str(tmp_path / "chat" / "wire.jsonl"))
    assert err[-1] == "watched 1 session(s): 3 request(s), 0 break(s), $0.0013"


RETRY = Path(__file__).resolve().parents[1] / "sample_logs" / "sessions" / "--home-dev-projects-demo--" / \
    "session-sample-retry" / "session.jsonl.zstd"


@needs_corpus
def test_a_failed_attempt_is_not_held_for_the_capture(tmp_path: Path) -> None:
    """session-sample-retry's attempts #0 and #2 failed (HTTP 503, a connection reset): no response
    of theirs will report usage, so, written after the watch began beside a capture (a-chat's, which
    matches none of its requests), they are shown unpriced at once, not provisional (they were held,
    and each wait read the log and the capture again)."""
    logs = _copy(tmp_path)
    for log in logs.glob("*.jsonl"):
        log.unlink()
    stop, items = threading.Event(), []
    for item in watch([logs], stop=stop, since=0, exit_after=SAFETY, poll=0.02, notifications=False):
        items.append(item)
        if isinstance(item, WatchNote) and item.level == "watching":
            shutil.copyfile(RETRY, logs / "session.jsonl.zstd")
        if isinstance(item, WatchRequest) and item.index == 3:
            stop.set()
    shown = [(i.index, i.provisional, i.update, i.usage_source) for i in items if isinstance(i, WatchRequest)]
    assert shown == [(0, False, False, None), (1, False, False, "log"), (2, False, False, None),
                     (3, False, False, "log")]


@needs_corpus
def test_a_capture_change_reads_the_capture_again_not_the_log(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The title call, which the capture does not report yet, asked for again once its record is
    written: the capture is read again and aligned with the session read before (the log is read
    once: a 30 MB log took 1.37 s a read, at each change of the capture)."""
    import dsh_audit.watch._captured as captured
    from dsh_audit.session import read_session

    logs = _copy(tmp_path, records=slice(None, None, 2))
    log = str(next(logs.glob("*.jsonl")))
    reads: list[str] = []

    def counted(path: str, **options: Any) -> Any:
        reads.append(path)
        return read_session(path, **options)

    monkeypatch.setattr(captured, "read_session", counted)
    usage = captured.CapturedUsage(log, None, lenient=False, max_version=4)
    session = read_session(log)
    assert not isinstance(session, Exception) and hasattr(session, "requests")
    title = session.requests[0]
    assert not isinstance(usage(title), Tokens)
    _append(logs.parent / "wire.jsonl", (CHAT / "wire.jsonl").read_bytes().splitlines(keepends=True)[1])()
    assert usage(title) == Tokens(140, output=5)
    assert (reads, usage.reads) == ([log], 2)


@needs_corpus
@pytest.mark.parametrize(("start", "empty"), [(26, False), (0, False), (13, False), (26, True)],
                         ids=["history", "complete", "title-later", "empty-wire"])
def test_a_capture_written_after_the_watch_began_prices_as_usage_does(start: int, empty: bool, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Fuzz round 27 W-A: no wire.jsonl beside the log when the watch began (its first ``start``
    lines, 0: the whole log; 13: not yet the title call's request), the rest written after it
    began, then the capture. The title call, judged with no capture there, is shown unpriced, not
    provisional; the capture is looked for again as the watch ends, and the title call comes again
    as an update priced from it, before the summary: the summary is ``usage --json``'s totals
    exactly ($0.001285008, nothing unpriced; it said $0.001261008, 1 unpriced). ``empty``: an empty
    wire.jsonl there when the watch began, filled after (fuzz 27 ``wireonly``): the title call it
    was silent on is looked at again as the capture changes, the same way. Its update is judged again
    with the capture's usage only in that case: judged while no capture was there, it keeps no copy of
    the cache judge's state (review rA of session 44: memory) and is priced only, ``usage_unknown``."""
    logs = _copy(tmp_path)
    wire = logs.parent / "wire.jsonl"
    records = wire.read_bytes()
    if empty:
        wire.write_bytes(b"")
    else:
        wire.unlink()
    log = next(logs.glob("*.jsonl"))
    lines = log.read_bytes().splitlines(keepends=True)
    if start:
        log.write_bytes(b"".join(lines[:start]))
    stop, items = threading.Event(), []
    for item in watch([logs], stop=stop, since=0, exit_after=SAFETY, poll=0.02, notifications=False):
        items.append(item)
        if isinstance(item, WatchNote) and item.level == "watching" and start:
            _append(log, b"".join(lines[start:]))()
        if isinstance(item, WatchRequest) and item.index == 2:
            wire.write_bytes(records)
            stop.set()
    shown = [(i.index, i.update, i.usage_source, i.cost) for i in items if isinstance(i, WatchRequest)]
    assert shown == [(0, False, None, None), (1, False, "log", 0.00121275), (2, False, "log", 0.000048258),
                     (0, True, "capture", 0.000024)], shown
    assert [i.history for i in items if isinstance(i, WatchRequest) and i.index == 0] == [start != 13] * 2
    assert [i.provisional for i in items if isinstance(i, WatchRequest)][:3] == [False, False, False]
    assert _judged(items) == [(0, 140, 0, 0, 0, "as_expected") if empty else (0, None, None, 0, 0, "usage_unknown")]
    code, out, _ = invoke(monkeypatch, capsys, "usage", "--json", str(logs))
    assert code == 0
    assert _totals(_summary(items)) == _totals(json.loads(out)["totals"])
    assert _totals(_summary(items))[1:] == (3, 0, True)


#: A record line that is not UTF-8: the capture cannot be read (``usage`` leaves a found one out
#: with a warning, and refuses a given one, exit 2).
NOT_UTF8 = b'{"method":"POST","path":"/x","body":"\xff\xfe"}\n'


@needs_corpus
@pytest.mark.parametrize("case", ["recorded-first", "found-unreadable", "given-unreadable", "given-repaired",
                                  "given-repaired-tools", "given-repaired-tools-bound"])
def test_a_capture_read_before_its_request_or_unreadable_prices_as_usage_does(
        case: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Fuzz round 31, a-chat with loop #2's usage not logged, its turn 2 written after the watch
    began. D1 (``recorded-first``): the wire.jsonl holds loop #2's record before loop #2 is judged
    (a proxy writes it before DSH logs the request's end): loop #2 is priced from it at once (it
    stayed provisional and unpriced: the tail aligned new requests only with new records), and the
    summary is ``usage --json``'s totals exactly ($0.001285008, nothing unpriced; it said
    $0.00123675, 1 unpriced). D2: a capture with a line that is not UTF-8 was dropped silently,
    #0 and #2 provisional for ever: found beside the log, it is said once as ``usage`` says it (a
    warning); given (``--capture``), as ``usage``'s error (which exits 2: the watch goes on, the
    error counted, as an unreadable capture); either way #0 and #2 are unpriced, not provisional, as
    ``usage`` prices them. Re-read E of session 43 (``given-repaired``): the given capture replaced by a
    whole one before the watch ends prices #0 and #2 (updates), a note says it was read again, and the
    summary said "1 unreadable capture(s)" still: now as a log read again. Session 43: those updates had
    a price but no tokens, ``usage_unknown``; now judged again with the capture's usage, as ``cache --json``
    judges them. Review rA of session 44 (``given-repaired-tools``: b-tools, no loop's usage logged, the
    whole log there when the watch began): each request judged again compared with the earlier ones'
    estimated sizes, #8 expected and reusable 8704 where ``cache --json`` says 8576. ``-bound``: with
    at most 8 waiting requests judged again, the oldest (#0) is priced only, its verdict kept."""
    from test_watch_captured42 import _unlogged

    tools = case.startswith("given-repaired-tools")
    if case.endswith("-bound"):
        monkeypatch.setattr("dsh_audit.watch._follow._RESTATERS", 8)
    logs = _copy(tmp_path, source=TOOLS if tools else CHAT)
    wire = logs.parent / "wire.jsonl"
    records = wire.read_bytes().splitlines(keepends=True)
    if case != "recorded-first":
        wire.write_bytes(b"".join(records[:2]) + NOT_UTF8 + b"".join(records[2:]))
    log = next(logs.glob("*.jsonl"))
    lines = [_unlogged(line, every=tools) for line in log.read_bytes().splitlines()]
    # the title call and loop #1 (history), the whole log, or no request yet
    start = next(i for i, line in enumerate(lines) if b'"turn/start"' in line and b'"turn": 2' in line) \
        if case == "recorded-first" else len(lines) if tools else 13
    log.write_bytes(b"".join(lines[:start]))
    given = str(wire) if case.startswith("given") else None
    stop, items = threading.Event(), []
    for item in watch([logs], stop=stop, since=0, exit_after=SAFETY, poll=0.02, notifications=False, capture=given):
        items.append(item)
        if item == items[-1] and (isinstance(item, WatchNote) and item.level == "watching" and start == 13
                                  or isinstance(item, WatchRequest) and item.index == 1 and start != 13):
            _append(log, b"".join(lines[start:]))()  # recorded-first: once the history's requests were judged
        if isinstance(item, WatchRequest) and item.index == (8 if tools else 2):
            if case.startswith("given-repaired"):  # the whole capture, read when the watch ends
                (logs.parent / "whole").write_bytes(b"".join(records))
                os.replace(logs.parent / "whole", wire)
            stop.set()
    shown = [(i.index, i.provisional, i.update, i.usage_source, i.cost) for i in items if isinstance(i, WatchRequest)]
    said = [(i.level, i.path, i.message) for i in items if isinstance(i, WatchNote) and i.level in ("warning", "error")]
    summary = WatchSummary()
    for item in items:
        summary.add(item)
    code, out, err = invoke(monkeypatch, capsys, "usage", "--json", str(logs))
    assert code == 0
    assert _totals(summary.to_json()) == _totals(json.loads(out)["totals"])  # given-repaired: the whole capture's
    if case.startswith("given-repaired"):
        code, out, _ = invoke(monkeypatch, capsys, "cache", "--json", str(logs))
        cached = [(r["index"], r["prompt_tokens"], r["actual_cache_read"], r["expected_cache_read"],
                   r["reusable_cache_read"], r["classification"])
                  for r in json.loads(out)["timeline"] if r.get("usage_source") == "capture"]
        first = (0, None, None, 0, 0, "usage_unknown") if case.endswith("-bound") else cached[0]  # as first judged
        assert _judged(items) == [first, *cached[1:]]
    if tools:
        assert (cached, summary.text()) == ([
            (0, 151, 0, 0, 0, "as_expected"), (1, 7980, 0, 0, 0, "as_expected"),
            (2, 8112, 7936, 7936, 7936, "as_expected"), (3, 8213, 8064, 8064, 8064, "as_expected"),
            (4, 8384, 8192, 8192, 8192, "as_expected"), (5, 8507, 8320, 8320, 8320, "as_expected"),
            (6, 8638, 8448, 8448, 8448, "as_expected"), (7, 8692, 8576, 8576, 8576, "as_expected"),
            (8, 8778, 8640, 8576, 8576, "as_expected")],
            "watched 1 session(s): 9 request(s), 0 break(s), $0.0017, 1 capture(s) unreadable for a while, read again")
        return
    if case == "given-repaired":
        assert (shown[3:], summary.errors, summary.to_json()["errors"], summary.text()) == (
            [(0, False, True, "capture", 0.000024), (2, False, True, "capture", 0.000048258)], 1, 1,
            "watched 1 session(s): 3 request(s), 0 break(s), $0.0013, 1 capture(s) unreadable for a while, read again")
        notes = [(i.level, i.path, i.message) for i in items if isinstance(i, CaptureNote) and i.level == "note"]
        assert notes == [("note", str(wire), f"{wire}: read again: the requests it reports are priced from it")]
        assert cached == [(0, 140, 0, 0, 0, "as_expected"), (2, 8027, 7936, 7936, 7936, "as_expected")]
        return
    if case == "recorded-first":
        assert shown == [(0, False, False, "capture", 0.000024), (1, False, False, "log", 0.00121275),
                         (2, False, False, "capture", 0.000048258)], shown
        assert (said, summary.to_json()["cost_usd"]["total"], summary.unpriced) == ([], 0.001285008, 0)
        return
    assert shown == [(0, False, False, None, None), (1, False, False, "log", 0.00121275),
                     (2, False, False, None, None)], shown
    assert (summary.to_json()["cost_usd"]["total"], summary.unpriced) == (0.00121275, 2)
    problem = f"{wire}: line 3: not valid UTF-8 (byte 37) (hint: a capture is UTF-8 text: the file is damaged, " \
              "or was saved in another encoding"
    left_out = "; found beside the log, it was left out: --capture FILE gives another, --no-capture ignores found ones)"
    if case == "found-unreadable":
        assert said == [("warning", str(log), problem + left_out)]
        assert err == [f"warning: {problem + left_out}"]  # usage --json says the same, once
        assert summary.errors == 0
        return
    assert said == [("error", str(wire), problem + ")")]
    assert (summary.errors, summary.text()) == (1, "watched 1 session(s): 3 request(s), 0 break(s), ≥$0.0012 "
                                                   "(2 unpriced), 1 unreadable capture(s)")  # not a log or folder
    code, out, err = invoke(monkeypatch, capsys, "usage", str(logs), "--capture", str(wire))
    assert (code, err[-1]) == (2, f"error: {problem})")


@needs_corpus
@pytest.mark.parametrize("given", [False, True], ids=["found", "given"])
def test_a_line_that_is_no_capture_record_is_said_once_as_usage_says_it(
        given: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 15: a-chat with no loop usage logged (every request priced from the capture), its
    wire.jsonl holding a JSON line that is no record (line 3) and one being written, whole JSON with
    no newline yet (line 4), when the title call is judged; line 5, another, is appended with loop
    #2's record. Each is said once, in ``usage``'s words (a warning naming the file and line),
    though the tail read on after the whole read starts before line 3 and reads line 4 until its
    newline comes: the whole read said none (its ``said`` dropped), nor did the tail's
    (``warnings=[]``). The prices are
    ``usage --json``'s totals on the finished files; given with ``--capture`` it is the same (a
    watch prices from the rest as ``usage`` prices; ``usage`` then refuses it, for its comparison)."""
    from test_watch_captured42 import _unlogged

    logs = _copy(tmp_path)
    wire = logs.parent / "wire.jsonl"
    records = wire.read_bytes().splitlines(keepends=True)  # loop #1's, the title call's, loop #2's
    wire.write_bytes(b"".join(records[:2]) + b'{"note": "proxy restarted"}\n{"seq": 9}')
    log = next(logs.glob("*.jsonl"))
    lines = [_unlogged(line, every=True) for line in log.read_bytes().splitlines()]
    log.write_bytes(b"".join(lines[:13]))  # no request yet
    stop, items = threading.Event(), []
    for item in watch([logs], stop=stop, since=0, exit_after=SAFETY, poll=0.02, notifications=False,
                      capture=str(wire) if given else None):
        items.append(item)
        if isinstance(item, WatchNote) and item.level == "watching":
            _append(log, b"".join(lines[13:26]))()  # the title call and loop #1
        if isinstance(item, WatchRequest) and item.index == 1:
            _append(wire, b'\n{"note": "again"}\n' + records[2])()  # line 4 ends; line 5; loop #2's record
            _append(log, b"".join(lines[26:]))()
        if isinstance(item, WatchRequest) and item.index == 2:
            stop.set()
    shown = [(i.index, i.provisional, i.usage_source, i.cost) for i in items if isinstance(i, WatchRequest)]
    said = [(i.level, i.path, i.message) for i in items if isinstance(i, WatchNote) and i.level in ("warning", "error")]
    skipped = [f"{wire}:{n}: not a capture record (no method, path, body or body_base64), skipped" for n in (3, 4, 5)]
    assert said == [("warning", str(log), text) for text in skipped]
    order = [f"#{i.index}" if isinstance(i, WatchRequest) else i.message.split(":")[1] for i in items
             if isinstance(i, WatchRequest) or i.level == "warning"]
    assert order == ["3", "4", "#0", "#1", "5", "#2"]  # each before the line it priced (or not) when read
    assert shown == [(0, False, "capture", 0.000024), (1, False, "capture", 0.00121275),
                     (2, False, "capture", 0.000048258)], shown
    code, out, err = invoke(monkeypatch, capsys, "usage", "--json", str(logs))
    assert (code, [line for line in err if line.startswith("warning: ")]) == (0, [f"warning: {t}" for t in skipped])
    assert _totals(_summary(items)) == _totals(json.loads(out)["totals"])
    assert _totals(_summary(items))[1:] == (3, 0, True)


@needs_corpus
@pytest.mark.parametrize("mode", ["json", "text"])
@pytest.mark.parametrize("given", [False, True], ids=["found-skipped", "given-unreadable"])
def test_what_a_capture_several_logs_share_cannot_read_is_said_once(
        mode: str, given: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 15: a-chat's and b-tools' logs in one folder, both priced from one capture (each has a
    title call, whose usage DSH does not log): a wire.jsonl beside them with a line that is no
    record, or one given with ``--capture`` that is not UTF-8. Each log said it: with ``--json``
    two warning lines, or two error lines and ``"errors": 2`` (text mode said it once: stderr says a
    line once per run). Now once per capture file in both modes, the summary's count the same."""
    logs = _copy(tmp_path)
    shutil.copyfile(next((CHAT.parent / "b-tools" / "session-logs").glob("*.jsonl")), logs / "b-tools.jsonl")
    wire = logs.parent / "wire.jsonl"
    records = wire.read_bytes().splitlines(keepends=True)
    wire.write_bytes(b"".join(records[:2]) + (NOT_UTF8 if given else b'{"note": 1}\n') + records[2])
    options = [*WATCH[:-1], *(["--json"] if mode == "json" else []), *(["--capture", str(wire)] if given else [])]
    code, out, err = invoke(monkeypatch, capsys, "watch", str(logs), *options)
    assert code == 0
    if given:
        text = f"{wire}: line 3: not valid UTF-8 (byte 37) (hint: a capture is UTF-8 text: the file is damaged, " \
               "or was saved in another encoding)"
        assert [line for line in err if line.startswith("error: ")] == [f"error: {text}"]
    else:
        text = f"{wire}:3: not a capture record (no method, path, body or body_base64), skipped"
        warned = [] if mode == "json" else [f"warning: {text}"]  # --json: in the stream only, as a log's
        assert [line for line in err if line.startswith("warning: ")] == warned
    if mode == "text":
        # the title calls: b-tools' is in no capture, a-chat's priced unless the capture is unreadable
        assert err[-1] == "watched 2 session(s): 12 request(s), 0 break(s), ≥$0.0029 " + \
            ("(2 unpriced), 1 unreadable capture(s)" if given else "(1 unpriced)"), err[-1]
        return
    lines = [json.loads(line) for line in out.splitlines()]
    said = [(line["type"], line["message"]) for line in lines if line["type"] in ("warning", "error")]
    assert said == [("error" if given else "warning", text)]
    assert (lines[-1]["sessions"], lines[-1]["errors"]) == (2, 1 if given else 0)


def test_a_capture_s_errors_count_once_by_path_and_are_said_again_after_it_was_read_again() -> None:
    """Re-read E of session 43: a --capture bad at line 3, then rewritten bad at line 2, said two error lines
    (each distinct message once), and the text summary counted 1 unreadable capture, --json's errors 2: now
    the capture once in both. Read again (a note), its errors are forgotten: a relapse is said again, and the
    summary says it unreadable again."""
    from dsh_audit.watch._watch import _told_before

    bad3, bad2 = (CaptureNote(0, "w.jsonl", "error", f"w.jsonl: line {n}: not valid UTF-8") for n in (3, 2))
    again = CaptureNote(0, "w.jsonl", "note", "w.jsonl: read again: the requests it reports are priced from it",
                        again=True)
    told: dict[tuple[str, str], str] = {}
    steps = [bad3, bad2, bad3, again, again, bad3, again]
    said = [item for item in steps if not _told_before(item, told)]
    assert said == [bad3, bad2, again, bad3, again]
    summary = WatchSummary()
    words = []
    for item in said:
        summary.add(item)
        words.append((summary.to_json()["errors"], summary.text().partition("$0.0000")[2]))
    assert words == [(1, ", 1 unreadable capture(s)"), (1, ", 1 unreadable capture(s)"),
                     (1, ", 1 capture(s) unreadable for a while, read again"), (1, ", 1 unreadable capture(s)"),
                     (1, ", 1 capture(s) unreadable for a while, read again")]


@needs_corpus
@pytest.mark.parametrize("mode", ["text", "json"])
def test_a_capture_broken_again_after_it_was_read_again_is_said_again_in_both_modes(
        mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """Fuzz round 33 D4: a --capture that is not UTF-8 while the title call and loop #1 are judged (an
    error), whole again (without loop #2's record) when loop #2 is judged (a note: read again), broken
    again as loop #2 waits for its record: --json said the error twice, as --help says, text mode once
    (stderr's said-once set was never told the capture was read again). Now twice in both."""
    import dsh_audit.cli._watch as cli_watch
    from test_watch_captured42 import _unlogged

    logs = _copy(tmp_path)
    wire = logs.parent / "wire.jsonl"
    records = wire.read_bytes().splitlines(keepends=True)
    bad = b"".join(records[:2]) + NOT_UTF8 + records[2]
    wire.write_bytes(bad)
    log = next(logs.glob("*.jsonl"))
    lines = [_unlogged(line, every=True) for line in log.read_bytes().splitlines()]
    log.write_bytes(b"".join(lines[:13]))  # no request yet

    def put(data: bytes) -> None:
        (logs.parent / "next").write_bytes(data)
        os.replace(logs.parent / "next", wire)

    def watched(*args: Any, **kwargs: Any) -> Any:
        for item in watch(*args, **kwargs):
            yield item
            if isinstance(item, WatchNote) and item.level == "watching":
                _append(log, b"".join(lines[13:26]))()  # the title call and loop #1, judged with it broken
            if isinstance(item, WatchRequest) and item.index == 1 and not item.update:
                put(b"".join(records[:2]))  # whole, without loop #2's record
                _append(log, b"".join(lines[26:]))()
            if isinstance(item, CaptureNote) and item.again:
                put(bad)  # read as loop #2 waits for its record

    monkeypatch.setattr(cli_watch, "watch", watched)
    options = [*WATCH[:-1], *(["--json"] if mode == "json" else []), "--capture", str(wire)]
    code, out, err = invoke(monkeypatch, capsys, "watch", str(logs), *options)
    text = f"{wire}: line 3: not valid UTF-8 (byte 37) (hint: a capture is UTF-8 text: the file is damaged, " \
           "or was saved in another encoding)"
    again = [] if mode == "json" else [f"note: {wire}: read again: the requests it reports are priced from it"]
    assert (code, [line for line in err if line.startswith(("error: ", "note: "))]) == (  # --json: the note in the stream
        0, [f"error: {text}", *again, f"error: {text}"])
    if mode == "json":
        said = [json.loads(line) for line in out.splitlines()]
        assert [line["message"] for line in said if line["type"] == "error"] == [text, text]
        assert said[-1]["errors"] == 1
    else:
        assert err[-1].endswith(", 1 unreadable capture(s)"), err[-1]
