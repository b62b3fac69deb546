"""The usage a capture holds, for the requests whose log holds none (DSH logs no usage for a title
call: ``live-pi/README.md``; a torn tail lost one), which prices them and judges their cache as a
logged usage would (:func:`dsh_audit.cache._causes.judged_usage`): each captured request's
recorded response read for its usage (:mod:`dsh_audit.cache._response_usage`), as the capture is
read, and the tokens of the response to each request's send, by the pairings of the capture with
the sessions' requests.

A captured response is what the capture recorded beside a request: a ``wire.jsonl`` record's
``response`` (a summary object with the provider's ``usage``, as the corpus's scripted server wrote
it, a JSON response body as an object, or the body text), a HAR entry's ``response.content.text``
(decoded as a request's body is).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..capture import AlignedCapture, CaptureRead, Pairing, align, align_capture, usage_capture
from ..errors import CaptureError
from ..session import Session, rounds, route_apis
from ._money import Tokens
from ._response_usage import UnusableUsage, damaged, told

__all__ = ["UNMATCHED", "UnusableUsage", "captured_tokens", "captured_usage", "from_capture", "given_capture",
           "given_usage", "keep_usage"]


#: Why a request whose log holds no usage is unpriced when ``--capture`` matched no request of its session.
UNMATCHED = "usage not logged; the capture matched no request of this session"


def from_capture(reason: str) -> bool:
    """Whether an unpriced ``reason`` is the capture's (:func:`damaged`, :data:`UNMATCHED`), not the log's.

    Example:
        >>> from_capture(UNMATCHED), from_capture(damaged("w.jsonl line 1", "input_tokens -10").why)
        (True, True)
        >>> from_capture("usage not logged")
        False
    """
    return reason == UNMATCHED or reason.startswith("the capture's usage is damaged (")


#: A HAR entry's locator (``entries[3]``), as the HAR loader names it.
_ENTRY = re.compile(r"entries\[(\d+)\]")


@dataclass(frozen=True, slots=True)
class _Told:
    """What pricing keeps of a capture record as it is read (:func:`keep_usage`): what its
    ``response`` tells (:func:`~dsh_audit.cache._response_usage.told`: a ``wire.jsonl`` record's),
    and, of a record holding a ``log`` object, what each of its ``log.entries``' responses tells, by
    entry number (``entries``: a HAR file's one document's). Which of them prices is the capture's
    format's to say (:func:`_told_by_send`), never the record's fields: a ``wire.jsonl`` record
    with a ``log`` field is priced by its ``response`` like any other."""

    told: Tokens | str | None = None
    entries: tuple[Tokens | str | None, ...] | None = None


def keep_usage(record: Any) -> _Told:
    """A capture record as pricing keeps it (:func:`dsh_audit.capture.read_capture`'s ``keep``): what
    its response tells, so no response body is held past its record's read or read twice."""
    if not isinstance(record, dict):
        return _Told()
    log = record.get("log")
    entries = log.get("entries") if isinstance(log, dict) else None
    return _Told(told(record.get("response")), None if not isinstance(entries, list) else tuple(
        told(entry.get("response")) if isinstance(entry, dict) else None for entry in entries))


def _told_by_send(read: CaptureRead) -> dict[tuple[str, str], Tokens]:
    """``(source, locator)`` of each captured request of ``read`` (read with :func:`keep_usage`) ->
    the tokens its recorded response reports (:func:`~dsh_audit.cache._response_usage.response_tokens`,
    a damaged usage named by file and locator); a request whose response reports none (a body
    folder records none) is absent."""
    found: dict[tuple[str, str], Tokens] = {}
    records = read.records
    document = records[0] if read.format == "har" and records and isinstance(records[0], _Told) else None
    entries = () if document is None else document.entries or ()
    for index, request in enumerate(read.requests):
        if document is not None:
            match = _ENTRY.fullmatch(request.locator)
            at = int(match.group(1)) if match else -1
            said = entries[at] if 0 <= at < len(entries) else None
        else:
            kept = records[index] if index < len(records) else None
            said = kept.told if isinstance(kept, _Told) else None
        where = f"{os.path.basename(request.source)} {request.locator}"
        tokens = damaged(where, said) if isinstance(said, str) else said
        if tokens is not None:
            found[(request.source, request.locator)] = tokens
    return found


def captured_tokens(pairings: Iterable[Pairing], told: Mapping[tuple[str, str], Tokens]
                    ) -> dict[tuple[str, int], Tokens]:
    """``(session id, request index)`` -> the tokens of the response to the request's send, for
    each request of ``pairings`` (:func:`dsh_audit.capture.align`'s) whose response reports usage
    (``told``: :func:`_told_by_send`): the first of its sends (a resend after a failed one too)
    whose does; else, when one's is damaged, the first such (an :class:`UnusableUsage` naming the
    file and locator)."""
    sends: dict[tuple[str, int], list[Tokens]] = {}
    for pairing in pairings:
        request, capture = pairing.request, pairing.capture
        if request is not None and capture is not None and \
                (tokens := told.get((capture.source, capture.locator))) is not None:
            sends.setdefault((request.session_id, request.index), []).append(tokens)
    return {key: next((t for t in found if not isinstance(t, UnusableUsage)), found[0])
            for key, found in sends.items()}


def captured_usage(sessions: Sequence[Session], capture: str | os.PathLike[str] | AlignedCapture | CaptureRead, *,
                   pairings: Iterable[Pairing] | None = None) -> dict[str, dict[int, Tokens]]:
    """Session id -> request index -> the tokens the capture's response to it reports
    (:func:`captured_tokens`), by the pairings of the capture with the requests of ``sessions``
    (a session read twice: its first copy). ``capture``: a capture file (read once with
    :func:`keep_usage` and aligned with ``sessions`` together, as every view aligns them:
    :func:`dsh_audit.capture.align_capture`), one read and aligned so already (:func:`given_capture`),
    or one read so whose ``pairings`` a view made (``check`` compares the capture first, and prices
    by its rows' pairings; without them, its requests are aligned here). Each request of a session
    the capture matched no request of is :data:`UNMATCHED` (an :class:`UnusableUsage`), so the views say so.

    Raises:
        CaptureError: the capture cannot be read.
    """
    first = _first_copies(sessions)
    if isinstance(capture, CaptureRead):
        read = capture
        pairs = list(pairings) if pairings is not None else \
            align([r for s in first for r in s.requests], read.requests, routes=route_apis(first))
    else:
        aligned = capture if isinstance(capture, AlignedCapture) else align_capture(first, capture, keep=keep_usage)
        read, pairs = aligned.read, list(aligned.pairs(first) if pairings is None else pairings)
    matched = {p.request.session_id for p in pairs if p.request is not None and p.capture is not None}
    by_session: dict[str, dict[int, Tokens]] = {
        s.id: {r.index: UnusableUsage(why=UNMATCHED) for r in s.requests} for s in first if s.id not in matched}
    for (sid, index), tokens in captured_tokens(pairs, _told_by_send(read)).items():
        by_session.setdefault(sid, {})[index] = tokens
    return by_session


def _first_copies(sessions: Sequence[Session]) -> list[Session]:
    """``sessions``, a session read twice (a zstd log and its copy) by its first copy only."""
    return rounds(sessions)[0] if sessions else []


def given_capture(sessions: Sequence[Session], capture: str | os.PathLike[str] | None) -> AlignedCapture | None:
    """The capture given with ``--capture`` (``capture``), else the one found beside ``sessions``
    (:func:`dsh_audit.capture.usage_capture`: found or given, it means the same), read once, each
    response's usage kept as it is read (:func:`keep_usage`), and aligned once with the requests of
    ``sessions`` (a session read twice: its first copy), for pricing (:func:`given_usage`) and attribution alike
    (:func:`dsh_audit.capture.session_captures`'s ``aligned``); None without one, or when it cannot
    be read (the views that compare it say why, as the log's error; a torn tail is said by them too).

    Example:
        >>> given_capture([], None) is None
        True
    """
    try:  # none given: the one found beside them (a found one that cannot be read: a warning, and None)
        return usage_capture(_first_copies(sessions), capture, keep=keep_usage)
    except CaptureError:
        return None


def given_usage(sessions: Sequence[Session], capture: str | os.PathLike[str] | AlignedCapture | None
                ) -> dict[str, dict[int, Tokens]]:
    """:func:`captured_usage` of the capture given with ``--capture`` (``capture``, or it read and
    aligned already: :func:`given_capture`), which prices the requests of ``sessions`` whose log
    holds no usage, and judges their cache; the capture found beside them
    alike, for the sessions it holds requests of; empty without one, or when it cannot be read (the views that compare it say why, as the log's error).

    Example:
        >>> given_usage([], None)
        {}
    """
    aligned = capture if isinstance(capture, AlignedCapture) else \
        given_capture(sessions, capture) if capture is not None else None  # found: given_capture(sessions, None)'s
    if aligned is None:
        return {}
    held = aligned.held  # a capture found beside logs is the capture of the sessions it holds requests of only
    return {sid: tokens for sid, tokens in captured_usage(sessions, aligned).items() if sid in held}
