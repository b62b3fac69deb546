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

The shared-string lanes: ``check`` over many logs puts every session's requests in one lane, and
their new content overlaps (the same system text, half of them the same first prompt, replies of
the same few words), so a request's new content may be nothing but strings a hundred others also
bring; reading every request such a string names made the pairing grow with captures times
requests (an 8,000-request lane took over a minute and 1.6 GB).
"""

from __future__ import annotations

import json
from typing import Any

from dsh_audit.capture import CapturedRequest, align
from dsh_audit.replay import Digest, Request

MODEL = "deepseek-v4-pro"
API = "openai-completions"
SESSIONS, STEPS = 400, 5  # 2000 requests: each session's requests send its growing conversation
SHARED = 240  # sessions of two requests sharing their new strings: 480 requests


def _request(session: int, step: int, messages: list[dict[str, Any]]) -> Request:
    return Request(index=step, kind="loop", session_id=f"session-{session}", turn=step + 1, step=1, attempt=1,
                   step_start_seq=None, first_chunk_seq=0, header={"config": {"model": MODEL}}, header_seq=0,
                   header_reason=None, messages=messages, message_seqs=list(range(len(messages))),
                   digest=Digest("0"))


def _requests(sessions: int) -> list[Request]:
    """``sessions`` sessions of :data:`STEPS` requests each, one after another, in one lane."""
    found: list[Request] = []
    for s in range(sessions):
        messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
        for step in range(STEPS):
            messages = [*messages, {"role": "user", "content": f"question {s}.{step}"}]
            found.append(_request(s, step, messages))
            messages = [*messages, {"role": "assistant", "content": f"answer {s}.{step}"}]
    return found


def _shared_requests() -> list[Request]:
    """:data:`SHARED` sessions of two requests, one after another. Every first request sends the
    same system text; the even sessions' first prompt is the same, every 3rd session's first reply
    is "OK.", every second prompt is the same and the odd sessions' second reply is "Done.": the
    first request of every 6th session brings no string of its own."""
    found: list[Request] = []
    for s in range(SHARED):
        messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
        prompts = ("Hello, please help." if s % 2 == 0 else f"Question number {s}.", "Thanks, continue.")
        replies = ("OK." if s % 3 == 0 else f"Answer {s}.", "Done." if s % 2 else f"Done {s}.")
        for step, (prompt, reply) in enumerate(zip(prompts, replies)):
            messages = [*messages, {"role": "user", "content": prompt}]
            found.append(_request(s, step, messages))
            messages = [*messages, {"role": "assistant", "content": reply}]
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


def test_the_shared_strings_are_new_in_many_requests() -> None:
    requests = _shared_requests()
    texts = [m["content"] for r in requests for m in r.messages[-1:]]
    assert (len(requests), texts.count("Hello, please help."), texts.count("Thanks, continue.")) == (480, 120, 240)


def test_every_tenth_body_missing_leaves_exactly_those_requests_unpaired() -> None:
    requests = _shared_requests()
    sent = [n for n in range(len(requests)) if n % 10 != 9]
    captures = [_sent(requests[n], position) for position, n in enumerate(sent)]
    paired, left = _pairs(requests, captures)
    assert paired == {n: position for position, n in enumerate(sent)}
    assert left == []


def test_sends_no_request_explains_between_shared_prompts_are_left_over() -> None:
    requests = _shared_requests()
    captures: list[CapturedRequest] = []
    mine: dict[int, int] = {}
    extra: list[int] = []
    for n, request in enumerate(requests):
        if n % 8 == 5:  # a probe sending one of the shared prompts, as a session's first request does
            extra.append(len(captures))
            captures.append(_capture(len(captures), [{"role": "system", "content": "You are terse."},
                                                     {"role": "user", "content": f"probe {n}"}]))
        mine[n] = len(captures)
        captures.append(_sent(request, len(captures)))
    assert (len(requests), len(captures)) == (480, 540)
    paired, left = _pairs(requests, captures)
    assert paired == mine
    assert left == extra
