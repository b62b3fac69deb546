"""Aligning captured requests with the requests rebuilt from logs.

Rules, in order:

1. **Session.** A capture carrying ``x-deepseek-harness-session-id`` is matched only with
   requests of that session (DSH sends the header on every loop, title and compaction call of
   the DeepSeek adapter). A capture naming a session that none of the given logs holds is
   reported as ``foreign`` and never paired.
2. **Kind.** Loop captures pair with loop requests, compaction with compaction, title with title;
   a capture of kind ``other`` is never paired.
3. **Order.** Within one session and kind, requests (in the order given) and captures (in capture
   order) are paired first to first.
4. **Retries.** Consecutive captures of one session and kind with identical bodies are one
   send and its resends. Consecutive rebuilt attempts of one step (``attempt`` 2, 3, ...) are
   one request and its retries. The n-th attempt pairs with the n-th identical send; sends
   beyond the last attempt (the adapter retried before anything reached the stream, so the log
   has no attempt for them) pair with the last attempt and are flagged ``retry``.
5. **No session header.** Captures without the header (pi-ai sends none) are paired last, by
   kind and order, with the requests still unpaired, across all sessions in the order given.

Nothing is dropped: every request and every capture appears in exactly one :class:`Pairing`
(a resend appears in its own pairing with ``retry=True``), with the other side ``None`` when
unmatched and a ``note`` that says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..replay import Request
from ._types import CapturedRequest

__all__ = ["Pairing", "align"]

_PAIRED_KINDS = ("loop", "compaction", "title")


@dataclass(frozen=True, slots=True)
class Pairing:
    """One rebuilt request and the capture of its send; either side may be ``None``.

    Attributes:
        request: the rebuilt request, or None for a capture nothing explains.
        capture: the captured request, or None when no capture was found.
        retry: the capture is an identical resend of an earlier capture of the same request.
        note: why a side is missing, or what the pairing rests on.
    """

    request: Request | None
    capture: CapturedRequest | None
    retry: bool = False
    note: str | None = None


def _request_runs(requests: Sequence[Request]) -> list[list[Request]]:
    runs: list[list[Request]] = []
    for request in requests:
        previous = runs[-1][-1] if runs else None
        if (previous is not None and request.attempt > 1 and request.kind == previous.kind
                and (request.turn, request.step) == (previous.turn, previous.step)):
            runs[-1].append(request)
        else:
            runs.append([request])
    return runs


def _capture_runs(captures: Sequence[CapturedRequest]) -> list[list[CapturedRequest]]:
    runs: list[list[CapturedRequest]] = []
    for capture in captures:
        if runs and runs[-1][-1].body == capture.body:
            runs[-1].append(capture)
        else:
            runs.append([capture])
    return runs


def _pair_runs(requests: Sequence[Request], captures: Sequence[CapturedRequest], *, basis: str,
               ) -> tuple[list[Pairing], list[CapturedRequest]]:
    """Pair requests and captures of one kind by order, retries folded; return the captures left."""
    pairs: list[Pairing] = []
    request_runs, capture_runs = _request_runs(requests), _capture_runs(captures)
    for attempts, sends in zip(request_runs, capture_runs):
        for number, attempt in enumerate(attempts):
            if number < len(sends):
                pairs.append(Pairing(attempt, sends[number], note=basis))
            else:
                pairs.append(Pairing(attempt, None, note=f"retry attempt {attempt.attempt}: the capture "
                                     f"holds {len(sends)} send(s) of these bytes"))
        for send in sends[len(attempts):]:
            pairs.append(Pairing(attempts[-1], send, retry=True,
                                 note=f"identical resend of capture {sends[0].position}"))
    return pairs, [c for run in capture_runs[len(request_runs):] for c in run]


def align(requests: Sequence[Request], captures: Sequence[CapturedRequest]) -> list[Pairing]:
    """Pair every rebuilt request with its captured send (rules in the module docstring).

    Returns pairings in the order of ``requests`` (a request's resends right after it), then
    the captures nothing explains, in capture order.

    Example:
        >>> pairs = align(dsh_audit.requests(log), load_capture("wire.jsonl"))  # doctest: +SKIP
        >>> [(p.request.index, p.capture.position) for p in pairs if p.request and p.capture]  # doctest: +SKIP
        [(0, 1), (1, 0), (2, 2)]
    """
    sessions = {r.session_id for r in requests}
    by_request: dict[int, list[Pairing]] = {}
    unpaired: list[Request] = list(requests)
    leftovers: list[Pairing] = []
    for capture in captures:
        sid = capture.session_id
        if capture.kind not in _PAIRED_KINDS:
            leftovers.append(Pairing(None, capture, note="not an LLM call (kind other)"))
        elif sid is not None and sid not in sessions:
            leftovers.append(Pairing(None, capture, note=f"foreign: session {sid} is not among the logs given"))

    def pair(requests_in: list[Request], captures_in: list[CapturedRequest], basis: str) -> list[CapturedRequest]:
        pairs, left = _pair_runs(requests_in, captures_in, basis=basis)
        for item in pairs:
            assert item.request is not None
            by_request.setdefault(id(item.request), []).append(item)
        return left

    unlabelled = [c for c in captures if c.kind in _PAIRED_KINDS and c.session_id is None]
    for sid in dict.fromkeys(r.session_id for r in requests):
        for kind in _PAIRED_KINDS:
            mine = [r for r in unpaired if r.session_id == sid and r.kind == kind]
            theirs = [c for c in captures if c.session_id == sid and c.kind == kind]
            for capture in pair(mine, theirs, "session header and order"):
                leftovers.append(Pairing(None, capture, note=f"no rebuilt {kind} request of session {sid} left"))
        unpaired = [r for r in unpaired if id(r) not in by_request]
    for kind in _PAIRED_KINDS:
        mine = [r for r in unpaired if r.kind == kind]
        theirs = [c for c in unlabelled if c.kind == kind]
        for capture in pair(mine, theirs, "order (no session header)"):
            leftovers.append(Pairing(None, capture, note=f"no rebuilt {kind} request left"))
    result: list[Pairing] = []
    for request in requests:
        result.extend(by_request.get(id(request))
                      or [Pairing(request, None, note=f"no captured {request.kind} send of this session left")])
    result.extend(sorted(leftovers, key=lambda p: p.capture.position if p.capture else -1))
    return result
