"""A defect the review of session 31's commits found (a ``turn/start`` naming no turn made the next
``step/start`` a second, false finding), and the memory check made before orjson parses a large text."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from _cli import chat_log, invoke
from dsh_audit.log import ensure_room, parse_json
from dsh_audit.log import _json_room
from dsh_audit.testing import LogBuilder


def test_a_turn_start_without_its_turn_is_one_finding_not_two(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "s1")
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    for record in records:
        if record.get("type") == "turn/start":
            del record["data"]["turn"]
    log.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    code, out, err = invoke(monkeypatch, capsys, "validate", str(log))
    assert (code, out.splitlines(), err) == (0, [
        f"{log}:3: seq 1: DSH401 warning: turn/start has no turn field: the spec's turn/start data is {{turn}}, "
        'the turn\'s number (turn 1 is next) (write "turn": 1)'], ["0 error(s), 1 warning(s), 0 info in 1 file(s): "
                                                                  "DSH401 x1"])


def test_a_large_text_that_might_not_fit_is_refused_before_orjson_and_a_small_one_never_checked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    text = json.dumps({"content": "[1,1,1,1]" * (2 * 1024 * 1024 // 9), "n": 2 ** 70, "s": "\ud800"})
    raw = text.encode("utf-8", "surrogatepass")
    value = parse_json(raw)
    assert value["n"] == 2 ** 70 and value["s"] == "\ud800" and len(value["content"]) == 2097144
    monkeypatch.setattr(_json_room, "memory_limited", lambda: True)  # as under a tight ulimit -v
    monkeypatch.setattr(_json_room, "fits_in_memory", lambda need: False)
    with pytest.raises(MemoryError, match=r"^parsing 2097\d+ bytes of JSON needs about \d+ MiB of memory"):
        parse_json(raw)  # refused with room left to say so, never an orjson crash
    with pytest.raises(MemoryError):
        ensure_room(text)
    assert parse_json(orjson.dumps({"a": [1, 2]})) == {"a": [1, 2]}  # 1 MiB or less: never checked


def test_until_the_last_day_datetime_can_hold_is_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = chat_log(tmp_path / "s" / "session.jsonl", "s1")
    code, out, err = invoke(monkeypatch, capsys, "usage", str(log), "--until", "9999-12-31", "--json")
    assert (code, err) == (0, [])
    assert json.loads(out)["totals"]["requests"] == 1  # before: "cannot read --until '9999-12-31'", exit 2


def test_breaks_cost_counts_a_request_that_is_no_break_and_logged_no_reads_as_cache_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # request 1 logged no cache reads but is no break: cache counts no loss for it (only a break's
    # loss is unknown), so breaks --all --cost says 0 and its total is cache's "breaks cost" $0
    b = LogBuilder(session_id="s-u", created_at=1_800_000_000_000, model="deepseek-v4-flash", system="S" * 8000)
    with b.turn("one"), b.step():
        b.assistant("one", usage={"inputTokens": 2000, "outputTokens": 10, "cacheReadTokens": 0})
    with b.turn("two"), b.step():
        b.assistant("two", usage={"inputTokens": 2100, "outputTokens": 10})
    b.configure(system="T" * 8000)
    with b.turn("three"), b.step():
        b.assistant("three", usage={"inputTokens": 100, "outputTokens": 10, "cacheReadTokens": 0})
    log = b.write_jsonl(tmp_path / "s-u" / "session.jsonl", packed=False)
    code, out, err = invoke(monkeypatch, capsys, "breaks", str(log), "--all", "--cost", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert (code, err) == (0, [])
    assert [(r["request"], r["verdict"], r["lost_tokens"], r["lost_cost_usd"], r["unpriced_reason"]) for r in rows] == [
        (0, "first", 0, 0, None), (1, "extension", 0, 0, None), (2, "break", 0, 0, None)]


CHAT = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus" / "live" / "a-chat"


@pytest.mark.skipif(not CHAT.is_dir(), reason="../shared/corpus is absent")
def test_diff_drops_a_torn_last_capture_line_as_check_does(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    log = next(CHAT.glob("home/sessions/*/*/session.jsonl.zstd"))
    whole = (CHAT / "wire.jsonl").read_bytes()
    wire = tmp_path / "wire.jsonl"
    wire.write_bytes(whole[:-300])  # the last record cut mid-write, as a killed capture writer leaves it
    torn = len(whole.rstrip(b"\n").rsplit(b"\n", 1)[1]) + 1 - 300
    code, out, err = invoke(monkeypatch, capsys, "diff", str(log), "--capture", str(wire))
    assert (code, err) == (1, [f"warning: {wire}: torn tail: line 3 has no terminating newline ({torn} bytes ignored)"])
    assert out.splitlines()[-1] == "3 request(s): 2 identical, 1 unmatched; 0 capture(s) unexplained, 0 foreign: FAILED"
