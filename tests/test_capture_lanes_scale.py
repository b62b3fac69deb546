"""Content pairing of a long lane pairs right (``dsh_audit/capture/_align.py``, rule 4).

A lane (one route API and model) spans every session given, so ``check`` over many logs with one
shared capture, or a capture started partway through a long session, holds a lane of thousands of
requests whose number of captured bodies differs. These tests pair such lanes and assert the exact
set of requests left unpaired and the exact capture of every other: a correctness test, not a timed
one (the quadratic pairing took about ten seconds on each of these lanes, its replacement about
one: too close on a loaded machine for a bound that never fails by chance). Content pairing used
to score every request against every capture within the count difference; it now looks each
capture's strings up in an index of the requests' new content. The requests are built directly
(no log), with the route and model every capture carries, and no session header: the lane is
paired by order and content only.
"""

from __future__ import annotations

import json
from typing import Any

from dsh_audit.capture import CapturedRequest, align
from dsh_audit.replay import Digest, Request

MODEL = "deepseek-v4-pro"
API = "openai-completions"
SESSIONS, STEPS = 400, 5  # 2000 requests: each session's requests send its growing conversation


def _requests(sessions: int) -> list[Request]:
    """``sessions`` sessions of :data:`STEPS` requests each, one after another, in one lane."""
    found: list[Request] = []
    for s in range(sessions):
        messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
        for step in range(STEPS):
            messages = [*messages, {"role": "user", "content": f"question {s}.{step}"}]
            found.append(Request(index=step, kind="loop", session_id=f"session-{s}", turn=step + 1, step=1,
                                 attempt=1, step_start_seq=None, first_chunk_seq=0,
                                 header={"config": {"model": MODEL}}, header_seq=0, header_reason=None,
                                 messages=messages, message_seqs=list(range(len(messages))), digest=Digest("0")))
            messages = [*messages, {"role": "assistant", "content": f"answer {s}.{step}"}]
    return found


def _capture(position: int, messages: list[dict[str, Any]]) -> CapturedRequest:
    body = json.dumps({"model": MODEL, "messages": messages}).encode()
    return CapturedRequest(position, "POST", "/v1/chat/completions", {}, body, None, "wire.jsonl",
                           f"line {position + 1}", "loop")


def _sent(request: Request, position: int) -> CapturedRequest:
    return _capture(position, [{"role": m["role"], "content": m["content"]} for m in request.messages])


def _pairs(requests: list[Request], captures: list[CapturedRequest]) -> tuple[dict[int, int], list[int]]:
    """Request (by place) -> capture position, and the captures left over."""
    place = {id(r): n for n, r in enumerate(requests)}
    pairs = align(requests, captures, routes=lambda _r: API)
    paired = {place[id(p.request)]: p.capture.position for p in pairs if p.request is not None and p.capture}
    left = [p.capture.position for p in pairs if p.request is None and p.capture is not None]
    return paired, left


def test_2000_requests_and_1000_captures_leave_exactly_the_missing_requests_unpaired() -> None:
    requests = _requests(SESSIONS)
    # the capture holds 1000 of the 2000 sends, unevenly: runs of bodies missing of every length
    sent = [n for n in range(len(requests)) if (n * 7919) % 13 < 6 or n % 10 == 0][:1000]
    assert len(sent) == 1000
    captures = [_sent(requests[n], position) for position, n in enumerate(sent)]
    paired, left = _pairs(requests, captures)
    assert paired == {n: position for position, n in enumerate(sent)}
    assert left == []


def test_1000_requests_and_2000_captures_leave_exactly_the_unexplained_sends_over() -> None:
    requests = _requests(SESSIONS // 2)
    # every request's send, and as many sends no request explains, in runs between them
    captures: list[CapturedRequest] = []
    mine: dict[int, int] = {}
    extra: list[int] = []
    for n, request in enumerate(requests):
        for k in range((n * 7919) % 3):
            extra.append(len(captures))
            captures.append(_capture(len(captures), [{"role": "user", "content": f"probe {n}.{k}"}]))
        mine[n] = len(captures)
        captures.append(_sent(request, len(captures)))
    while len(captures) < 2 * len(requests):
        extra.append(len(captures))
        captures.append(_capture(len(captures), [{"role": "user", "content": f"probe {len(captures)}"}]))
    assert (len(requests), len(captures)) == (1000, 2000)
    paired, left = _pairs(requests, captures)
    assert paired == mine
    assert left == extra
