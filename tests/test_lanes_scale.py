"""Content pairing of a lane whose requests share their new strings (``dsh_audit/capture/_align.py``,
rule 4 of ``docs/capture-formats.md``).

``check`` over many logs with one capture and no session header puts every session's requests in
one lane. Their new content overlaps: each session's first request sends the same system text,
half of them the same first prompt, every second request the same follow-up, many replies the
same few words, so a request's new content may be nothing but strings a hundred other requests
also bring. Each capture holding such a string names every one of those requests: reading them all
made the pairing grow with the number of captures times the number of requests (an 8,000-request
lane took over a minute and 1.6 GB). These tests pin the exact pairs on such lanes, with bodies
missing and bodies no request explains; a correctness test, not a timed one.
"""

from __future__ import annotations

import json
from typing import Any

from dsh_audit.capture import CapturedRequest, align
from dsh_audit.replay import Digest, Request

MODEL = "deepseek-v4-pro"
API = "openai-completions"
SESSIONS = 240  # two requests each: 480 requests


def _requests() -> list[Request]:
    """Two requests per session, one session after another. Every first request sends the same
    system text; the even sessions' first prompt is the same, every 3rd session's first reply is
    "OK.", every second prompt is the same and the odd sessions' second reply is "Done.": the
    first request of every 6th session brings no string of its own."""
    found: list[Request] = []
    for s in range(SESSIONS):
        messages: list[dict[str, Any]] = [{"role": "system", "content": "You are terse."}]
        prompts = ("Hello, please help." if s % 2 == 0 else f"Question number {s}.", "Thanks, continue.")
        replies = ("OK." if s % 3 == 0 else f"Answer {s}.", "Done." if s % 2 else f"Done {s}.")
        for step, (prompt, reply) in enumerate(zip(prompts, replies)):
            messages = [*messages, {"role": "user", "content": prompt}]
            found.append(Request(index=step, kind="loop", session_id=f"session-{s}", turn=step + 1, step=1,
                                 attempt=1, step_start_seq=None, first_chunk_seq=0,
                                 header={"config": {"model": MODEL}}, header_seq=0, header_reason=None,
                                 messages=messages, message_seqs=list(range(len(messages))), digest=Digest("0")))
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


def test_the_shared_strings_are_new_in_many_requests() -> None:
    requests = _requests()
    texts = [m["content"] for r in requests for m in r.messages[-1:]]
    assert (len(requests), texts.count("Hello, please help."), texts.count("Thanks, continue.")) == (480, 120, 240)


def test_every_tenth_body_missing_leaves_exactly_those_requests_unpaired() -> None:
    requests = _requests()
    sent = [n for n in range(len(requests)) if n % 10 != 9]
    captures = [_sent(requests[n], position) for position, n in enumerate(sent)]
    paired, left = _pairs(requests, captures)
    assert paired == {n: position for position, n in enumerate(sent)}
    assert left == []


def test_sends_no_request_explains_between_shared_prompts_are_left_over() -> None:
    requests = _requests()
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
