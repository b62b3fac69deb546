"""Review 42: a watch's capture reader (:class:`dsh_audit.watch._captured.CapturedUsage`) reads a
growing ``wire.jsonl`` on from where it stopped and aligns only its tail (it read the log and the
capture whole again for each new request: quadratic over a watched session), and tells a changed
capture by the one "file changed?" rule (:func:`dsh_audit._stamp.file_stamp`: its own size and
mtime missed a capture rewritten in place with the same size and mtime).

Real files, no mocks but a count of the log's reads: live/a-chat's log (title call #0, whose usage
DSH does not log; loops #1 and #2) and its wire.jsonl (records: loop #1, the title call, loop #2).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from dsh_audit.cache import Tokens
from dsh_audit.session import Session, read_session

CHAT = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "live" / "a-chat"
needs_corpus = pytest.mark.skipif(not (CHAT / "wire.jsonl").is_file(), reason="../shared/corpus is absent")


def _unlogged(line: bytes, *, every: bool = False) -> bytes:
    """A log line with no usage: loop #2 (``every``: each loop) then holds none, as a request at a
    torn tail (the usage chunk becomes another chunk, so that no seq is missing)."""
    event = json.loads(line)
    data = event.get("data") or {}
    turn = every or data.get("turn") == 2
    if event.get("type") == "assistant/chunk" and turn and data["chunk"].get("type") == "usage":
        data["chunk"] = {"type": "block-start", "index": 9, "blockType": "text"}
    elif event.get("type") == "assistant/message" and turn:
        data.pop("usage", None)
        data["message"].pop("usage", None)
    return json.dumps(event).encode() + b"\n"


def _session(log: Path) -> Session:
    session = read_session(log)
    assert isinstance(session, Session)
    return session


@needs_corpus
@pytest.mark.parametrize(("cut", "lead"), [(None, False), (700, False), (None, True)])
def test_a_capture_grown_by_appended_lines_prices_the_new_request(cut: int | None, lead: bool, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The log's turn 2 (loop #2, its usage not logged) and the capture's record of it are appended
    after the title call was priced: loop #2 is priced from the appended line alone (the log is read
    once, not again for the new request; before, it was read whole again with the capture). A record
    appended in two writes (``cut``: its first 700 bytes, no newline yet) is not read half: loop #2
    is unpriced until the line is whole, then priced from it, read on from where the reading stopped.
    A writer that puts the newline before each record (``lead``: the last line has none) is read on
    too, from before its last record (there was no tail: log and capture read whole per request).
    The capture is read whole once, by its reader (the watch read it all again to find a line end)."""
    import dsh_audit.watch._captured as captured

    lines = [_unlogged(line) for line in next((CHAT / "session-logs").glob("*.jsonl")).read_bytes().splitlines()]
    turn2 = next(i for i, line in enumerate(lines) if b'"turn/start"' in line and b'"turn": 2' in line)
    records = [b"\n" + line.rstrip(b"\n") if lead else line
               for line in (CHAT / "wire.jsonl").read_bytes().splitlines(keepends=True)]
    log, wire = tmp_path / "logs" / "session.jsonl", tmp_path / "wire.jsonl"
    log.parent.mkdir()
    log.write_bytes(b"".join(lines[:turn2]))
    wire.write_bytes(b"".join(records[:2]))
    reads: list[str] = []
    whole: list[str] = []

    def counted(path: str, **options: Any) -> Any:
        reads.append(path)
        return read_session(path, **options)

    def opened(path: str, *args: Any) -> Any:  # the watch's own opens: any read() with no size is a whole read
        handle = open(path, *args)
        read = handle.read

        def spied(*size: int) -> Any:
            whole.extend([] if size else [path])
            return read(*size)

        monkeypatch.setattr(handle, "read", spied, raising=False)
        return handle

    monkeypatch.setattr(captured, "read_session", counted)
    monkeypatch.setattr(captured, "open", opened, raising=False)
    usage = captured.CapturedUsage(str(log), None, lenient=False, max_version=4)
    title, first = _session(log).requests
    assert (usage(title), usage(first)) == (Tokens(140, output=5), None)
    pending = len(records[1]) - 1 if lead else 0  # the tail starts before a last line with no newline
    assert usage.tail is not None and (usage.tail.offset, usage.tail.line) == (
        len(b"".join(records[:2])) - pending, 2)
    with open(log, "ab") as handle:
        handle.write(b"".join(lines[turn2:]))
    second = _session(log).requests[2]
    assert second.usage is None and second.message_usage is None
    if cut is not None:
        with open(wire, "ab") as handle:
            handle.write(records[2][:cut])
        assert usage(second) is None
        assert usage.tail is not None and (usage.tail.offset, usage.tail.line) == (len(b"".join(records[:2])), 2)
    with open(wire, "ab") as handle:
        handle.write(records[2][cut or 0:])
    assert usage(second) == Tokens(91, cache_read=7936, output=18, reasoning=8)
    assert (reads, usage.reads, usage.tokens[0], whole) == (
        [str(log)], 2 if cut is None else 3, Tokens(140, output=5), [])
    pending = len(records[2]) - 1 if lead else 0
    assert usage.tail is not None and (usage.tail.offset, usage.tail.line) == (
        wire.stat().st_size - pending, 3)


@needs_corpus
def test_a_capture_is_read_on_from_where_a_reading_stopped(tmp_path: Path) -> None:
    """read_capture_tail reads a growing wire.jsonl on from where the last reading stopped, by the
    parser of a whole read: a half-written last line is left (no warning) until it is whole; records
    are named by their line in the file and numbered among all its records; a bad appended line is
    an error at its line in the file (it was line 1 of a temporary file of the appended lines)."""
    from dsh_audit.capture import CaptureOffset, read_capture, read_capture_tail
    from dsh_audit.errors import CaptureError

    records = (CHAT / "wire.jsonl").read_bytes().splitlines(keepends=True)
    wire = tmp_path / "wire.jsonl"
    wire.write_bytes(records[0] + b"\n" + records[1][:300])
    said: list[str] = []
    first = read_capture_tail(wire, CaptureOffset(), warnings=said)
    assert ([c.locator for c in first.requests], first.end, said) == (
        ["line 1"], CaptureOffset(len(records[0]) + 1, 2, 1), [])
    with open(wire, "ab") as handle:
        handle.write(records[1][300:] + b'{"note": 1}\n' + records[2])
    more = read_capture_tail(wire, first.end, warnings=said)
    whole = read_capture(wire, warnings=[])
    assert [(c.position, c.locator, c.kind, c.body) for c in more.requests] == [
        (c.position, c.locator, c.kind, c.body) for c in whole.requests[1:]] == [
        (1, "line 3", "title", whole.requests[1].body), (2, "line 5", "loop", whole.requests[2].body)]
    assert (more.end, more.records == whole.records[1:]) == (CaptureOffset(wire.stat().st_size, 5, 3), True)
    assert said == [f"{wire}:4: not a capture record (no method, path, body or body_base64), skipped"]
    assert read_capture_tail(wire, more.end).requests == []
    with open(wire, "ab") as handle:
        handle.write(b"{oops\n")
    with pytest.raises(CaptureError) as caught:
        read_capture_tail(wire, more.end)
    assert str(caught.value) == (f"{wire}: line 6: not a JSON record (Expecting property name enclosed in "
                                 "double quotes: line 1 column 2 (char 1)) (hint: a wire.jsonl capture has one JSON "
                                 "object per line)")
    with pytest.raises(CaptureError) as caught:
        read_capture_tail(wire, CaptureOffset(5, 1, 1))
    assert str(caught.value) == (f"{wire}: cannot read on from byte 5: no line starts there (hint: read on from "
                                 "where a reading stopped (CaptureRead.end), or read it whole)")


@needs_corpus
def test_a_capture_is_read_on_through_its_open_from_a_pending_line_never_as_a_har(tmp_path: Path) -> None:
    """read_capture_tail reads through the open it is given (the file looked at, not the one put in
    its place since); with ``pending``, a last line with no newline that is a whole record is read,
    ``end`` left before it (read again next time: a writer that puts the newline first). A HAR
    file is refused, naming its format (it was read as a wire.jsonl: no request, or a bad line 1)."""
    from dsh_audit.capture import CaptureOffset, read_capture_tail
    from dsh_audit.errors import CaptureError

    records = (CHAT / "wire.jsonl").read_bytes().splitlines(keepends=True)
    wire, other = tmp_path / "wire.jsonl", tmp_path / "other.jsonl"
    wire.write_bytes(records[0] + records[1].rstrip(b"\n"))
    other.write_bytes(records[2])
    with open(wire, "rb") as handle:
        os.replace(other, wire)
        read = read_capture_tail(wire, CaptureOffset(), handle=handle, pending=True)
        assert ([(c.position, c.locator, c.kind) for c in read.requests], read.end) == (
            [(0, "line 1", "loop"), (1, "line 2", "title")], CaptureOffset(len(records[0]), 1, 1))
        assert read.requests[1].body == json.loads(records[1])["body"].encode()
    har = tmp_path / "capture.har"
    har.write_text(json.dumps({"log": {"version": "1.2", "entries": []}}), encoding="utf-8")
    with pytest.raises(CaptureError) as caught:
        read_capture_tail(har, CaptureOffset())
    assert str(caught.value) == (f"{har}: a har capture is not read on from where a reading stopped (hint: only a "
                                 "wire.jsonl grows record by record: read it whole (read_capture))")


@needs_corpus
@pytest.mark.parametrize("case", ["mtime put back", "just written", "a line half written"])
def test_a_capture_rewritten_in_place_with_its_size_and_mtime_is_read_again(case: str, tmp_path: Path) -> None:
    """The title call's usage rewritten in place (140 -> 150 prompt tokens: the same size), the
    file's mtime put back: its ctime tells the change (file_stamp), and the title call is priced
    from the new usage (its size and mtime said it was unchanged: 140 stayed). Also when it was
    written in file_stamp's last 2 s (``just written``: no stamp before or after, so it was read on
    from its end, forever stale) and with a next record half written (its size was compared with
    where the last whole line ends, not with the size seen: the rewrite read as an append)."""
    from dsh_audit.watch._captured import CapturedUsage

    log = tmp_path / "logs" / "session.jsonl"
    log.parent.mkdir()
    log.write_bytes(next((CHAT / "session-logs").glob("*.jsonl")).read_bytes())
    wire = tmp_path / "wire.jsonl"
    data = (CHAT / "wire.jsonl").read_bytes()
    wire.write_bytes(data + data.splitlines(keepends=True)[0][:200] if case == "a line half written" else data)
    # older than file_stamp's 2 s (its stamp is remembered), or within them, on its clock
    past = time.time_ns() - (1_000_000_000 if case == "just written" else 100_000_000_000)
    os.utime(wire, ns=(past, past))
    usage = CapturedUsage(str(log), None, lenient=False, max_version=4)
    title = _session(log).requests[0]
    assert usage(title) == Tokens(140, output=5)
    data = wire.read_bytes()
    changed = data.replace(b'"prompt_tokens": 140,', b'"prompt_tokens": 150,').replace(
        b'"prompt_cache_miss_tokens": 140}', b'"prompt_cache_miss_tokens": 150}')
    assert len(changed) == len(data) and changed != data
    with open(wire, "r+b") as handle:
        handle.write(changed)
    moved = past + (500_000_000 if case == "just written" else 0)
    os.utime(wire, ns=(moved, moved))
    assert usage(title) == Tokens(150, output=5)
    assert usage(title) == Tokens(150, output=5) and usage.reads == 2  # unchanged since: not read again


def test_a_found_capture_rewritten_in_place_names_its_new_sessions(tmp_path: Path) -> None:
    """Whether a found capture holds none of a log's requests is remembered by its file_stamp (it
    was by its size and mtime: a capture rewritten in place to name another session of the same
    length, its mtime put back, was still said to name the old one)."""
    from dsh_audit.capture._find import _holds_none

    wire = tmp_path / "wire.jsonl"
    record = {"method": "POST", "path": "/chat/completions", "body": "{}",
              "headers": {"x-deepseek-harness-session-id": "session-a"}}
    wire.write_text(json.dumps(record) + "\n", encoding="utf-8")
    past = time.time_ns() - 100_000_000_000
    os.utime(wire, ns=(past, past))
    assert (_holds_none(wire, "session-a"), _holds_none(wire, "session-b")) == (False, True)
    with open(wire, "r+b") as handle:
        handle.write(wire.read_bytes().replace(b"session-a", b"session-b"))
    os.utime(wire, ns=(past, past))
    assert (_holds_none(wire, "session-a"), _holds_none(wire, "session-b")) == (True, False)


AUTO = CHAT.parent / "e2-autocompact"


@pytest.mark.skipif(not (AUTO / "wire.jsonl").is_file(), reason="../shared/corpus is absent")
def test_a_compaction_call_the_capture_never_holds_leaves_the_tail_at_the_next_pairing(tmp_path: Path) -> None:
    """Issue 11: live/e2-autocompact (title #0, loops #1-#9, compaction #10, loops #11-#13), no loop
    usage logged (each is priced from the capture), its wire.jsonl without the compaction call's
    record (a capture that never holds one: sent on a route it does not see). The log and the
    capture grow request by request, as the watch judges them: each is priced as ``usage`` prices
    the finished log, and the compaction call leaves the tail as loop #11 is paired (its send came
    before #11's and was read with it), where it stayed for 256 more requests, aligned again each
    time; the tail ends holding each kind's last pairing only."""
    from dsh_audit.cache import given_capture, given_usage
    from dsh_audit.watch._captured import CapturedUsage

    lines = [_unlogged(line, every=True) for line in next((AUTO / "session-logs").glob("*.jsonl")).read_bytes()
             .splitlines()]
    records = [r for r in (AUTO / "wire.jsonl").read_bytes().splitlines(keepends=True) if b'"compaction"' not in r]
    log, wire = tmp_path / "logs" / "session.jsonl", tmp_path / "wire.jsonl"
    log.parent.mkdir()
    log.write_bytes(b"".join(lines))
    wire.write_bytes(b"".join(records))
    whole = _session(log)
    aligned = given_capture([whole], None)
    assert aligned is not None
    expected = given_usage([whole], aligned)[whole.id]
    sent = {p.request.index: p.capture.position for p in aligned.pairs([whole]) if p.request and p.capture}
    assert sorted(expected) == [i for i in range(14) if i != 10] and 10 not in sent  # only the log prices #10
    usage = CapturedUsage(str(log), None, lenient=False, max_version=4)
    ends = [n + 1 for n, line in enumerate(lines) if b'"assistant/message"' in line or b'"compaction/end"' in line]
    got: dict[int, Tokens | None] = {}
    window: dict[int, list[int]] = {}
    for end in ends:
        log.write_bytes(b"".join(lines[:end]))
        requests = _session(log).requests
        wire.write_bytes(b"".join(records[:max(sent.get(r.index, -1) for r in requests) + 1]))
        for request in requests[len(got):]:
            got[request.index] = usage(request)
            window[request.index] = [] if usage.tail is None else [r.index for r in usage.tail.requests]
    assert got == {i: expected.get(i) for i in range(14)}
    assert (window[10], window[11], window[13]) == ([0, 9, 10], [0, 11], [0, 13])


@needs_corpus
def test_a_capture_that_turns_unreadable_is_said_once_and_priced_again_once_repaired(tmp_path: Path) -> None:
    """Fuzz round 31 D2: a line that is not UTF-8 appended to the capture after the title call was
    priced from it. Loop #2 (its usage not logged) is unpriced, and the capture is said once as
    ``usage`` says a found one it leaves out (the watch fell back to whole reads, dropping the error:
    nothing said), not again as it grows still unreadable; a capture rewritten without the line
    prices loop #2 again (and a note says it is read again: the watch says it only after an error of it,
    :func:`~dsh_audit.watch._watch._told_before`, which says each text once per breakage)."""
    from dsh_audit.watch._captured import CapturedUsage

    lines = [_unlogged(line) for line in next((CHAT / "session-logs").glob("*.jsonl")).read_bytes().splitlines()]
    turn2 = next(i for i, line in enumerate(lines) if b'"turn/start"' in line and b'"turn": 2' in line)
    records = (CHAT / "wire.jsonl").read_bytes().splitlines(keepends=True)
    log, wire = tmp_path / "logs" / "session.jsonl", tmp_path / "wire.jsonl"
    log.parent.mkdir()
    log.write_bytes(b"".join(lines[:turn2]))
    wire.write_bytes(b"".join(records[:2]))
    usage = CapturedUsage(str(log), None, lenient=False, max_version=4)
    assert usage(_session(log).requests[0]) == Tokens(140, output=5)
    with open(log, "ab") as handle:
        handle.write(b"".join(lines[turn2:]))
    with open(wire, "ab") as handle:
        handle.write(b'{"method":"POST","path":"/x","body":"\xff\xfe"}\n')
    second = _session(log).requests[2]
    assert (usage(second), usage.broken) == (None, True)
    assert usage.said == [("warning", str(log), f"{wire}: line 3: not valid UTF-8 (byte 37) (hint: a capture is UTF-8 "
                           "text: the file is damaged, or was saved in another encoding; found beside the log, it was "
                           "left out: --capture FILE gives another, --no-capture ignores found ones)")]
    usage.said.clear()
    with open(wire, "ab") as handle:
        handle.write(records[2])
    assert (usage(second), usage.said) == (None, [])
    wire.write_bytes(b"".join(records))
    again = f"{wire}: read again: the requests it reports are priced from it"  # the watch says it after an error only
    assert (usage(second), usage.broken, usage.said) == (Tokens(91, cache_read=7936, output=18, reasoning=8), False,
                                                         [("note", str(wire), again)])
