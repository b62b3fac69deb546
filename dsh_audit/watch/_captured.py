"""The capture's usage for a followed log's requests whose log holds none (a title call: DSH logs no
usage for it; a request shown at a torn tail), so that a watch prices them as ``usage``, ``cache``,
``sessions`` and ``requests`` do: by the one function they share
(:func:`dsh_audit.cache.given_usage` over :func:`dsh_audit.cache.given_capture`: ``--capture``, else
the ``wire.jsonl`` found beside the log, none with ``--no-capture``).

The capture is read only when a request whose log holds no usage is judged. The first time, the
log and the capture are read whole and aligned, as ``requests`` aligns them. After that, a
``wire.jsonl`` that grows is read from where its last reading stopped
(:func:`dsh_audit.capture.read_capture_tail`), and only its tail is aligned (:class:`_Tail`): the
requests the watch judged since (each request goes through :meth:`CapturedUsage.__call__`, in
order) with the captured sends not paired yet, each lane's last pairing kept so that a resend of it
folds as every view folds it. Re-reading and re-aligning the whole log and capture for each new
request made a watched session quadratic (400 requests: 0.6 s a request, review 42). Both are read
whole again when the capture is no ``wire.jsonl`` (a HAR document is rewritten whole), or when the
``wire.jsonl`` was replaced (another inode), truncated, or changed without growing past the size it
had when it was read last: its size, mtime and ctime as ``stat`` gives them, even in the 2 s after a
write in which :func:`dsh_audit._stamp.file_stamp` gives none (then it is looked at again each time,
its tail read on). A writer is taken to append only: a rewrite that also grows is told only when the
last bytes read (:data:`_EDGE`) changed (a digest of all the bytes read would cost a read of them at
each look: 100 ms for 100 MB, against about 1 ms a look), and one that keeps the size, mtime and ctime
(within one tick of the file system's clock) is not told. A writer that puts the newline before each
record (none after the last) is read on from before its last record, read again each time until
a newline ends its line. A watch that follows no log beside a capture only looks for one (a
few ``stat`` calls per such request).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, BinaryIO

from .._stamp import MISSING, Stamp, file_stamp, stat_stamp
from ..cache import Tokens, captured_usage, entry_usage, given_usage, keep_usage
from ..capture import (AlignedCapture, CapturedRequest, CaptureOffset, CaptureRead, Pairing, align, capture_for,
                       read_capture_tail, usage_capture)
from ..errors import CaptureError, DshAuditError
from ..session import Session, read_session, route_apis

if TYPE_CHECKING:
    from ..replay import Request

__all__ = ["CapturedUsage"]

#: The most requests a tail keeps unpaired: one the capture skipped is given up after this many
#: more, so a long watch holds a bounded tail (most leave it sooner: :func:`_pending`).
_KEPT = 256
#: The most captured sends a tail keeps unpaired (their bodies held): one no request explains is
#: given up after this many more.
_SENDS = 64
#: How many bytes before a tail's read end are compared to tell an append from a rewrite.
_EDGE = 64
_PAIRED_KINDS = ("loop", "compaction", "title")
#: The kinds of call DSH sends one at a time in a session: a compaction call holds the session
#: (loop runs wait for it) and each loop request waits for the one before; a title call runs beside
#: the first turn, so its send can come before or after theirs.
_IN_TURN = ("loop", "compaction")


@dataclass(slots=True)
class _Tail:
    """Where the last reading of a ``wire.jsonl`` stopped (``offset``, just past its last whole line,
    line ``line``, ``position`` records; ``edge``: the bytes before ``offset``; ``seen``: the file's
    :func:`~dsh_audit._stamp.stat_stamp` before that reading) and what the next alignment starts from: the requests judged
    since and those not paired yet (``requests``), the captured sends not paired yet (``captures``,
    with what pricing keeps of each record, ``records``); each lane's last pairing is among them.
    ``apis``: the route API of each request kept, worked out once (:func:`_routes`)."""

    path: str
    seen: Stamp
    offset: int
    edge: bytes
    line: int
    position: int
    requests: list[Request] = field(default_factory=list)
    captures: list[CapturedRequest] = field(default_factory=list)
    records: list[Any] = field(default_factory=list)
    apis: dict[int, str | None] = field(default_factory=dict)


class CapturedUsage:
    """The tokens the capture reports for the requests of one followed log (``path``) whose log
    holds no usage (:meth:`__call__`). ``capture``: ``--capture`` (None: the ``wire.jsonl`` found
    beside the log, as every view finds it); ``lenient`` and ``max_version`` read the log as the
    watch does."""

    def __init__(self, path: str, capture: str | os.PathLike[str] | None, *, lenient: bool,
                 max_version: int) -> None:
        self.path, self.capture, self.lenient, self.max_version = path, capture, lenient, max_version
        self.mark: tuple[str, Stamp | None] | None = None  # the capture file read last, by its file_stamp
        self.held = 0  # how many requests the log held when it was read last, or the watch judged since
        self.session: Session | None = None  # the log as read last (read again when the capture is replaced)
        self.tokens: dict[int, Tokens] = {}
        self.reads = 0  # how many times the capture was read (for how long a request waits for it)
        self.tail: _Tail | None = None  # where a growing wire.jsonl is read on from; None: read whole
        self.fresh = False  # requests were judged since the last alignment
        self.broken = False  # the capture could not be read when it was read whole last
        # what each reading could not read (and that one read it again after), to be said: level, path,
        # text; said again at each reading: the watch says each once per breakage (:func:`watch`)
        self.said: list[tuple[str, str, str]] = []

    def __call__(self, request: Request) -> Tokens | None:
        """The capture's tokens for ``request`` when its log holds no usage and the capture reports
        some (None otherwise: a logged usage is never replaced, :func:`~dsh_audit.cache.entry_usage`);
        what :func:`~dsh_audit.cache.given_usage` gives, an
        :class:`~dsh_audit.cache.UnusableUsage` too (a damaged usage, a capture that matched no
        request of the session), which prices nothing and says why, as in ``usage``."""
        self._note(request)
        if entry_usage(request)[2] is not None:  # the log holds its usage, whole or in part
            return None
        found = capture_for(self.path, self.capture)
        if found is None:
            return None
        stamp = file_stamp(found, missing=True)
        if stamp == MISSING:
            return None
        mark = (os.fspath(found), stamp)
        if self.session is None or self.fresh or stamp is None or mark != self.mark:
            # a capture whose stamp changed (known before and now: one written in the last 2 s has
            # none, and tells nothing) was rewritten in place unless bytes were appended
            last = self.mark
            rewritten = last is not None and (last[0] != mark[0] or None not in (last[1], stamp) and last[1] != stamp)
            changed = self.session is None or self.fresh or last is None or rewritten
            self.mark = mark
            if self._look() or changed:  # counted when it told something new (_Awaited waits so many)
                self.reads += 1
        return self.tokens.get(request.index)

    def _note(self, request: Request) -> None:
        """Keep ``request``, judged after the log was read, for the next alignment: every request,
        its usage logged or not, takes its place in its lane's order. A tail that holds too many
        unpaired ones drops the oldest (a send the capture skipped)."""
        if self.session is None or request.index < self.held:
            return
        self.held, self.fresh = request.index + 1, True
        if self.tail is not None and request.kind in _PAIRED_KINDS:  # no other kind is paired
            self.tail.requests.append(request)
            del self.tail.requests[:-_KEPT]

    def _look(self) -> bool:
        """Read what the capture holds now: its tail when it only grew, else the log and it whole;
        whether it told anything new. A capture read whole that is no tail (a HAR document) is read
        again and aligned with the session read last when only it changed (the log is read again
        for a request it did not hold)."""
        tail, fresh, self.fresh, told = self.tail, self.fresh, False, self.tokens
        if self.session is not None and tail is not None:
            grown = None if self.mark is None or tail.path != self.mark[0] else self._tail_read(tail, fresh)
            if grown is not None:  # None: another capture is found now, or this one cannot be read on
                return grown
        elif self.session is not None and not fresh:
            self._align(self.session)
            return self.tokens != told
        self._read()
        return self.tokens != told

    def _read(self) -> None:
        """Align the capture with the session as its log holds it now, as ``requests`` does for one
        log (the same two functions): the tokens of each request the capture reports."""
        try:
            session = read_session(self.path, lenient=self.lenient, max_version=self.max_version)
        except DshAuditError:
            session = None
        self.tail = None
        if not isinstance(session, Session):
            self.tokens, self.held, self.session = {}, 0, None
            return
        self.held, self.session = len(session.requests), session
        self._align(session)

    def _align(self, session: Session) -> None:
        """Read the capture whole and align it with ``session`` (its log as read last). The file is
        looked at before it is read: a change made while it is read is told at the next look."""
        seen = None if self.mark is None else _seen_at(self.mark[0])
        aligned = self._given(session)
        self.tokens = given_usage([session], aligned).get(session.id, {})
        self.tail = None if aligned is None or seen is None else _tail_of(aligned, session, seen)

    def _given(self, session: Session) -> AlignedCapture | None:
        """What :func:`~dsh_audit.cache.given_capture` gives for ``session`` (the capture read and
        aligned with it, None when there is none or it cannot be read), with what it could not read
        kept to be said (:attr:`said`), as ``usage`` says it: a found capture's warning
        (:func:`~dsh_audit.capture.usage_capture` adds it to the log's warnings, which a watch
        printed when it read the log, not after), a given one's error (``usage`` then reads no log
        and exits 2; a watch says it, as it says a log it cannot read, and goes on: the log is
        followed, its requests unpriced while the capture cannot be read). ``given_capture`` drops
        the error (fuzz round 31: a watch said nothing, and waited for the capture's usage). A line
        that is no capture record, skipped, is a warning too, as ``usage`` says it of a found
        capture (issue 15; of a given one ``usage`` makes it an error, its comparison of bodies
        reading the capture strictly: a watch compares none, and prices from the rest as ``usage``
        does); a torn last line is not said (a record being written: read when it is whole). A capture
        read after a reading that could not read it is said to be read again (a ``note``: the watch
        says it when it said an error of it, which the summary counts as logs read again are: re-read E
        of session 43, the capture was counted unreadable to the end)."""
        before = len(session.warnings)
        try:
            aligned = usage_capture([session], self.capture, keep=keep_usage)
        except CaptureError as exc:
            aligned = None
            self._say("error", exc.path or os.fspath(self.capture or ""), str(exc))
        for warning in session.warnings[before:]:
            self._say("warning", self.path, str(warning))
        torn = f"{aligned.path}: torn tail: " if aligned is not None else ""
        for text in aligned.said if aligned is not None else ():
            if not text.startswith(torn):  # a record being written as it was read: no warning, read on later
                self._say("warning", self.path, text)
        if aligned is not None and self.broken:
            place = os.fspath(aligned.path)
            self._say("note", place, f"{place}: read again: the requests it reports are priced from it")
        self.broken = aligned is None
        return aligned

    def _say(self, level: str, path: str, text: str) -> None:
        """Keep ``text`` to be said (:attr:`said`)."""
        self.said.append((level, path, text))

    def _tail_read(self, tail: _Tail, fresh: bool) -> bool | None:
        """Read the records appended to the capture since ``tail`` and align them with the requests
        of the tail; whether there were any; None when it cannot be read on (replaced, truncated,
        changed without growing, a bad line: it is read whole). With none appended, the requests
        judged since (``fresh``) are aligned with the sends the tail holds unpaired: a proxy writes
        a response's record before DSH logs its request's end (5-10 ms in the corpus), so the send
        a request is judged after is most often read already (fuzz round 31: a session's last
        such requests were never priced)."""
        start = tail.position
        skipped: list[str] = []
        new = _appended(tail, skipped)
        for text in skipped:  # a line that is no capture record, said as `usage` says it
            self._say("warning", self.path, text)
        if new is None:
            return None
        captures, records = new
        if not captures and not (fresh and tail.captures):
            return False
        session = self.session
        assert session is not None
        if captures:  # one read before its newline came is read again
            held = [(c, r) for c, r in zip(tail.captures, tail.records) if c.position < start]
            tail.captures = [capture for capture, _ in held] + captures
            tail.records = [record for _, record in held] + records
        shell = replace(session, requests=tail.requests)
        pairs = align(tail.requests, tail.captures, routes=_routes(tail, shell))
        read = CaptureRead("wire-jsonl", tail.captures, tail.records)
        paired = {p.request.index for p in pairs if p.request is not None and p.capture is not None}
        for index, tokens in captured_usage([shell], read, pairings=pairs).get(session.id, {}).items():
            if index in paired:  # the session is the capture's: a tail that matched none is not "unmatched"
                self.tokens[index] = tokens
        _settle(tail, pairs, session.id)
        return True


def _tail_of(aligned: AlignedCapture, session: Session, seen: Stamp) -> _Tail | None:
    """Where a whole read of a ``wire.jsonl`` that holds ``session``'s requests stopped (``seen``:
    the file's :func:`~dsh_audit._stamp.stat_stamp` before it), and what it left unpaired (:func:`_settle`); None for any
    other capture (read whole each time). A last record whose line has no newline yet (a writer
    that puts it before each record) is read again by the tail, which starts before it."""
    read, path = aligned.read, os.fspath(aligned.path)
    last = read.requests[-1] if read.requests else None
    line = None if last is None else _line_number(last.locator)
    span = None if last is None else _span(last)
    if read.format != "wire-jsonl" or session.id not in aligned.held or line is None or span is None:
        return None
    edge = _edge_at(path, span[1], seen)
    ended = edge is not None and edge.endswith(b"\n")
    place = (span[1], line, len(read.requests)) if ended else (span[0], line - 1, len(read.requests) - 1)
    if not ended:
        edge = _edge_at(path, span[0], seen)
    if edge is None:
        return None
    tail = _Tail(path, seen, place[0], edge, place[1], place[2], list(session.requests), list(read.requests),
                 list(read.records))
    _settle(tail, aligned.pairs([session]), session.id)
    return tail


def _line_number(locator: str) -> int | None:
    """The line number of a ``wire.jsonl`` record's locator (``line 3``), None for another."""
    word, _, number = locator.partition(" ")
    return int(number) if word == "line" and number.isdigit() else None


def _span(captured: CapturedRequest) -> tuple[int, int] | None:
    """Where a ``wire.jsonl`` record's line starts and ends in its file (its newline included when
    it has one), as its reader found it to read its body again from; None for another record."""
    offset, length = getattr(captured.reread, "offset", None), getattr(captured.reread, "length", None)
    return (offset, offset + length) if isinstance(offset, int) and isinstance(length, int) else None


def _seen_at(path: str) -> Stamp | None:
    """:func:`~dsh_audit._stamp.stat_stamp` of the file at ``path``, None when it cannot be looked at."""
    try:
        return stat_stamp(os.stat(path))
    except (OSError, ValueError):
        return None


def _edge(handle: BinaryIO, offset: int) -> bytes | None:
    """The :data:`_EDGE` bytes of the open file before ``offset``, None when it is shorter."""
    start = max(0, offset - _EDGE)
    edge = os.pread(handle.fileno(), offset - start, start) if offset > start else b""
    return edge if len(edge) == offset - start else None


def _edge_at(path: str, offset: int, seen: Stamp) -> bytes | None:
    """:func:`_edge` of the file at ``path``, None when it is not the file ``seen`` (another inode)
    or cannot be read."""
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            return _edge(handle, offset) if (info.st_ino, info.st_dev) == seen[3:] else None
    except OSError:
        return None


def _appended(tail: _Tail, skipped: list[str]) -> tuple[list[CapturedRequest], list[Any]] | None:
    """The captured requests of the whole lines appended to ``tail``'s file since it was read (and
    what pricing keeps of each record), read by the capture's own reader from where the last
    reading stopped (:func:`dsh_audit.capture.read_capture_tail`: a last line with no newline is
    read once it is whole JSON, and again next time), each named and numbered as a whole read names
    it, ``tail`` moved past them; none when the file is as it was (:func:`~dsh_audit._stamp.stat_stamp`); None when it is
    not only appended to (replaced, changed without growing past its size seen last, the bytes
    before the read end changed) or a line is malformed. A line that is JSON but no capture record
    is skipped and said in ``skipped`` (``wire.jsonl:7: not a capture record ..., skipped``, as a
    whole read says it). It is looked at and read through one open: what is read is what was
    looked at."""
    try:
        with open(tail.path, "rb") as handle:
            return _read_on(tail, handle, skipped)
    except OSError:
        return None


def _read_on(tail: _Tail, handle: BinaryIO, skipped: list[str]) -> tuple[list[CapturedRequest], list[Any]] | None:
    """:func:`_appended` through the open ``handle`` of ``tail``'s file."""
    seen = stat_stamp(os.fstat(handle.fileno()))
    if seen == tail.seen:
        return [], []
    if seen[3:] != tail.seen[3:] or seen[0] <= tail.seen[0] or _edge(handle, tail.offset) != tail.edge:
        return None
    try:
        read = read_capture_tail(tail.path, CaptureOffset(tail.offset, tail.line, tail.position), warnings=skipped,
                                 keep=keep_usage, handle=handle, pending=True)
    except (DshAuditError, OSError, ValueError, MemoryError):
        return None
    assert read.end is not None
    edge = _edge(handle, read.end.byte)
    if edge is None:
        return None
    tail.seen, tail.edge = seen, edge
    tail.offset, tail.line, tail.position = read.end.byte, read.end.line, read.end.records
    return read.requests, list(read.records)


def _routes(tail: _Tail, shell: Session) -> Callable[[Request], str | None]:
    """The route API of each request of ``tail`` (what :func:`dsh_audit.session.route_apis` of
    ``shell``, the session read last, gives), each worked out once: a request that stays unpaired
    is aligned again with every new record, and its route cost more than the rest of the alignment
    (1600 requests: 77 compaction calls the capture never records, kept before :func:`_pending`
    let them go: 2.8 s of 5.3 s)."""
    api = route_apis([shell])

    def known(request: Request) -> str | None:
        if request.index not in tail.apis:
            tail.apis[request.index] = api(request)
        return tail.apis[request.index]

    return known


def _settle(tail: _Tail, pairs: Sequence[Pairing], session: str) -> None:
    """Keep in ``tail`` what the next alignment needs of ``pairs``: each lane's (kind's) last paired
    request with its sends (a resend of it then folds with it, as a whole alignment folds it), the
    requests after it not paired yet (:func:`_pending`), and the sends of this session (or naming
    none) not paired."""
    last: dict[str, int] = {}
    for pair in pairs:
        if pair.request is not None and pair.capture is not None:
            last[pair.request.kind] = max(last.get(pair.request.kind, -1), pair.request.index)
    anchors = set(last.values())
    requests: dict[int, Request] = {}
    kept: dict[int, CapturedRequest] = {}
    for pair in pairs:
        request, capture = pair.request, pair.capture
        if request is not None and (request.index in anchors or capture is None and _pending(request, last)):
            requests[request.index] = request
        if capture is not None and (request is not None and request.index in anchors or request is None and
                                    capture.kind in _PAIRED_KINDS and capture.session_id in (None, session)):
            kept[capture.position] = capture
    records = dict(zip((c.position for c in tail.captures), tail.records))
    tail.requests = [requests[i] for i in sorted(requests)][-_KEPT:]
    tail.apis = {r.index: tail.apis[r.index] for r in tail.requests if r.index in tail.apis}
    tail.captures = [kept[p] for p in sorted(kept)][-_SENDS:]
    tail.records = [records.get(c.position) for c in tail.captures]


def _pending(request: Request, last: dict[str, int]) -> bool:
    """Whether an unpaired ``request`` may still be paired with a send read later, ``last`` the
    last paired request of each kind: not when a later one of its kind is paired (a ``wire.jsonl``
    holds the sends in the order they came), nor, for a loop or compaction call, when a later one
    of either is (:data:`_IN_TURN`: its send, if the capture holds it, came before that one's, and
    was read with it). A compaction call the capture never holds (sent on a route it does not see)
    then leaves the tail at the next pairing, not :data:`_KEPT` requests later: each alignment
    aligned them all again (3,200 requests: about 150 of them; the time's exponent 1.5 to 1.6)."""
    if request.kind not in _PAIRED_KINDS or request.index <= last.get(request.kind, -1):
        return False
    return request.kind not in _IN_TURN or all(request.index > last.get(kind, -1) for kind in _IN_TURN)
