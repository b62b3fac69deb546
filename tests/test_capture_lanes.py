"""A body missing in the middle of one route/model lane: the gap stays where it is.

Captures pair with requests by session evidence, route API, model and order
(``dsh_audit/capture/_align.py``). When a lane holds fewer captured bodies than requests (a
proxy that dropped one) or more (a send the log does not explain), order alone would shift every
later pair of the lane onto the wrong body: a string of false ``different``. The messages each
captured body sends say which request it is the send of; these tests remove or alter bodies of a
session that switches DeepSeek -> Claude -> DeepSeek and assert the verdict of every request.

The captured bodies are the bodies each request's own route renders, written as a ``wire.jsonl``
in send order: DSH's session header on the native DeepSeek sends, none on pi-ai's Claude sends.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

import pytest
from _cli import invoke

from dsh_audit.capture import compare_capture, load_capture
from dsh_audit.session import Session, open_session, route_renderer
from dsh_audit.testing import LogBuilder, ToolCall

from test_wire_switch import READ, SYSTEM, claude_reply

SESSION_HEADER = "x-deepseek-harness-session-id"
BY_HEADER = "session header and order"
BY_ORDER = "order (no session header)"
DS_LANE = "deepseek-chat-completions, model deepseek-v4-pro"
CLAUDE_LANE = "anthropic-messages, model claude-sonnet-4-5"
PATHS = {"deepseek": "/chat/completions", "anthropic": "/v1/messages"}
Row = tuple[int | None, str, int | None, str | None]


def _deepseek_turn(b: LogBuilder, number: int, files: Sequence[str]) -> None:
    """A native DeepSeek turn: one step per file read, then the answer."""
    with b.turn(f"Turn {number}: read {', '.join(files)}."):
        for k, name in enumerate(files):
            with b.step():
                reply = b.assistant(None, reasoning=f"Read {name}.",
                                    tool_calls=[ToolCall("read", json.dumps({"path": name}),
                                                         id=f"call_{number:02d}_{k}")])
                b.tool_result(reply.call_ids[0], f"contents of {name}")
        with b.step():
            b.assistant(f"Turn {number} done.", reasoning="Answer now.")


def _claude_turn(b: LogBuilder, number: int, files: Sequence[str]) -> None:
    """A Claude turn through pi-ai's Anthropic route: one step per file read, then the answer."""
    with b.turn(f"Turn {number}: read {', '.join(files)}."):
        for k, name in enumerate(files):
            with b.step():
                reply = claude_reply(b, "claude-sonnet-4-5", f"sig_{number}_{k}", f"Reading {name}.",
                                     reasoning=f"Claude reads {name}.",
                                     tool_calls=[ToolCall("read", json.dumps({"path": name}, separators=(",", ":")),
                                                          id=f"toolu_fake_{number}{k}")])
                b.tool_result(reply.call_ids[0], f"contents of {name}")
        with b.step():
            claude_reply(b, "claude-sonnet-4-5", f"sig_{number}_end", f"Turn {number} done.", reasoning="Done.")


def _session(tmp_path: Path) -> Session:
    """DeepSeek (requests 0-3) -> Claude (4-7) -> DeepSeek (8-10): lanes of 7 and 4 requests."""
    b = LogBuilder(session_id="lanes", provider="deepseek-official", model="deepseek-v4-pro", system=SYSTEM,
                   tools=[READ], reasoning_effort="high", max_tokens=None)
    _deepseek_turn(b, 1, ["a.txt", "b.txt", "c.txt"])
    b.configure(provider="anthropic", model="claude-sonnet-4-5")
    _claude_turn(b, 2, ["d.txt", "e.txt", "f.txt"])
    b.configure(provider="deepseek-official", model="deepseek-v4-pro")
    _deepseek_turn(b, 3, ["g.txt", "h.txt"])
    return open_session(b.write_jsonl(tmp_path / "session.jsonl"))


def _sends(session: Session) -> list[tuple[str, dict[str, str], bytes]]:
    """(path, headers, body) of every request as its own route sent it, in send order."""
    run = route_renderer([session])
    out = []
    for request in session.requests:
        path = PATHS[str(session.route(request).adapter)]
        out.append((path, {SESSION_HEADER: session.id} if path == "/chat/completions" else {}, run(request, {})))
    return out


def _write(path: Path, records: Sequence[tuple[str, dict[str, str], bytes]]) -> Path:
    path.write_text("".join(json.dumps({"method": "POST", "path": p, "headers": h, "body": b.decode()}) + "\n"
                            for p, h, b in records))
    return path


def _rows(session: Session, wire: Path) -> list[Row]:
    rows = compare_capture(session.requests, load_capture(wire), render=route_renderer([session]))
    return [(row.request.index if row.request else None, row.verdict,
             row.capture.position if row.capture else None, row.pairing.note) for row in rows]


def _paired(index: int, position: int) -> Row:
    """Request ``index`` identical to the capture at ``position``, by the note of its lane."""
    return (index, "identical", position, BY_ORDER if 4 <= index <= 7 else BY_HEADER)


def _missing(index: int) -> Row:
    lane = CLAUDE_LANE if 4 <= index <= 7 else DS_LANE
    return (index, "unmatched", None, f"no captured loop send of this session left on its route ({lane})")


def _expected(dropped: Collection[int], different: Collection[int] = ()) -> list[Row]:
    """Every request paired with its own body (its position once ``dropped`` are gone)."""
    rows: list[Row] = []
    for index in range(11):
        if index in dropped:
            rows.append(_missing(index))
            continue
        row = _paired(index, index - sum(1 for d in dropped if d < index))
        rows.append((row[0], "different", row[2], row[3]) if index in different else row)
    return rows


@pytest.fixture
def session(tmp_path: Path) -> Session:
    found = _session(tmp_path)
    assert [(r.index, r.kind, str(found.route(r).adapter)) for r in found.requests] == (
        [(i, "loop", "deepseek") for i in range(4)] + [(i, "loop", "anthropic") for i in range(4, 8)]
        + [(i, "loop", "deepseek") for i in range(8, 11)])
    return found


def test_every_body_present_pairs_in_order(session: Session, tmp_path: Path) -> None:
    wire = _write(tmp_path / "wire.jsonl", _sends(session))
    assert _rows(session, wire) == _expected(set())


@pytest.mark.parametrize("dropped", [
    {5},  # the middle of the Claude lane (no session header: paired by route, model and order)
    {2},  # the middle of the DeepSeek lane, before the switch (session header)
    {9},  # the middle of the DeepSeek lane, after the switch
    {5, 6},  # two in a row
    {1, 9},  # two in one lane, on both sides of the other lane
    {2, 5},  # one in each lane
    {0, 10},  # the first and the last
    {4, 7},  # the first and the last of the Claude lane
    {3, 8},  # the DeepSeek answer before the switch and the first DeepSeek request after it
])
def test_a_missing_body_leaves_only_its_own_request_unmatched(session: Session, tmp_path: Path,
                                                               dropped: set[int]) -> None:
    sends = [send for i, send in enumerate(_sends(session)) if i not in dropped]
    assert _rows(session, _write(tmp_path / "wire.jsonl", sends)) == _expected(dropped)


def _altered(body: bytes, change: Callable[[dict[str, Any]], None]) -> bytes:
    value = json.loads(body)
    change(value)
    return json.dumps(value).encode()


def _last_tool_result(value: dict[str, Any]) -> None:
    """A tool result the log does not have (the Claude form: a user message of tool_result blocks)."""
    value["messages"][-1]["content"][0]["content"] = "contents the log does not record"


def _deepseek_tool_result(value: dict[str, Any]) -> None:
    value["messages"][-1]["content"] = "contents the log does not record"


@pytest.mark.parametrize(("dropped", "index", "change"), [
    ({5}, 6, _last_tool_result),  # a gap, then a body whose newest message differs
    ({5}, 7, lambda v: v.update(max_tokens=1)),  # a gap, then a body that differs outside the messages
    ({6}, 5, _last_tool_result),  # a differing body just before the gap
    ({1}, 2, _deepseek_tool_result),
    ({1}, 10, lambda v: v["messages"].insert(1, {"role": "user", "content": "injected"})),
])
def test_a_missing_body_and_a_different_body_each_keep_their_request(
        session: Session, tmp_path: Path, dropped: set[int], index: int,
        change: Callable[[dict[str, Any]], None]) -> None:
    sends = [(p, h, _altered(b, change) if i == index else b) for i, (p, h, b) in enumerate(_sends(session))
             if i not in dropped]
    assert _rows(session, _write(tmp_path / "wire.jsonl", sends)) == _expected(dropped, [index])


def test_a_send_no_request_explains_in_the_middle_of_a_lane_is_left_over(session: Session,
                                                                       tmp_path: Path) -> None:
    sends = _sends(session)
    stray = _altered(sends[5][2], lambda v: v["messages"].append(
        {"role": "user", "content": "A prompt this session never logged."}))
    wire = _write(tmp_path / "wire.jsonl", [*sends[:6], (sends[5][0], {}, stray), *sends[6:]])
    later = [(i, "identical", i + 1 if i > 5 else i, BY_ORDER if 4 <= i <= 7 else BY_HEADER) for i in range(11)]
    assert _rows(session, wire) == [*later, (None, "unmatched", 6,
                                             "no rebuilt loop request left for POST /v1/messages, "
                                             "model claude-sonnet-4-5")]


def test_diff_reports_the_gap_and_nothing_else(session: Session, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    sends = [send for i, send in enumerate(_sends(session)) if i not in {2, 5}]
    wire = _write(tmp_path / "wire.jsonl", sends)
    code, out, err = invoke(monkeypatch, capsys, "diff", str(tmp_path / "session.jsonl"), "--capture", str(wire),
                            "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert (code, err) == (1, [])
    assert [(r["index"], r["verdict"], r["capture_position"]) for r in rows] == [
        (row[0], row[1], row[2]) for row in _expected({2, 5})]


# --- two sessions in one lane, no session evidence ----------------------------------------------

ACROSS = "order by send time across sessions (no session header)"


def _claude_session(tmp_path: Path, session_id: str, created_at: int) -> Session:
    """A Claude session of two turns of two steps each, its events one second apart."""
    b = LogBuilder(session_id=session_id, provider="anthropic", model="claude-sonnet-4-5", system=SYSTEM,
                   tools=[READ], reasoning_effort="high", max_tokens=None, created_at=created_at,
                   clock_step_ms=1000)
    _claude_turn(b, 1, [f"{session_id}-1.txt"])
    _claude_turn(b, 2, [f"{session_id}-2.txt"])
    return open_session(b.write_jsonl(tmp_path / f"{session_id}.jsonl"))


@pytest.mark.parametrize("dropped", [(), (1,), (2, 5), (0, 7)])
def test_two_sessions_sharing_a_lane_keep_their_pairs_around_a_gap(tmp_path: Path,
                                                                  dropped: tuple[int, ...]) -> None:
    sessions = [_claude_session(tmp_path, "sess-a", 1_760_000_000_000),
                _claude_session(tmp_path, "sess-b", 1_760_000_000_500)]
    run = route_renderer(sessions)
    sent = sorted(((r, run(r, {})) for s in sessions for r in s.requests),
                  key=lambda item: item[0].time.sent if item[0].time else 0.0)
    assert [(r.session_id, r.index) for r, _ in sent] == [
        (sid, i) for i in range(4) for sid in ("sess-a", "sess-b")]  # sent in turns, A then B
    wire = _write(tmp_path / "wire.jsonl", [("/v1/messages", {}, b) for k, (_, b) in enumerate(sent)
                                            if k not in dropped])
    rows = compare_capture([r for s in sessions for r in s.requests], load_capture(wire), render=run)
    place = {(r.session_id, r.index): k for k, (r, _) in enumerate(sent)}
    expected = []
    for s in sessions:
        for r in s.requests:
            k = place[(r.session_id, r.index)]
            expected.append((r.session_id, r.index, "unmatched", None,
                             f"no captured loop send of this session left on its route ({CLAUDE_LANE})")
                            if k in dropped else
                            (r.session_id, r.index, "identical", k - sum(1 for d in dropped if d < k), ACROSS))
    assert [(row.request.session_id if row.request else None, row.request.index if row.request else None,
             row.verdict, row.capture.position if row.capture else None, row.pairing.note) for row in rows] == expected
