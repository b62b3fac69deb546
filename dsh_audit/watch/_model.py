"""What a watch reports: one :class:`WatchRequest` per new request, :class:`WatchNote` for what
happened to a log, and a :class:`WatchSummary` at the end."""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from ..cache import Costs, iso_utc, nanos_usd, usd_nanos

__all__ = ["CaptureNote", "WatchItem", "WatchNote", "WatchRequest", "WatchSummary", "clock_at"]


def clock_at(seconds: float) -> str | None:
    """A moment of this machine's clock (``seen``) as ISO 8601 UTC to the millisecond, the form of
    every other time in JSON (:func:`~dsh_audit.cache.iso_utc`) with the milliseconds a watch
    line's latency needs (floored: never later than the moment); None outside the years 1-9999.

    Example:
        >>> clock_at(1796212000.5), clock_at(1796212000.9999)
        ('2026-12-02T11:46:40.500Z', '2026-12-02T11:46:40.999Z')
    """
    millis = math.floor(seconds * 1000)
    whole = iso_utc(millis // 1000)
    return None if whole is None else f"{whole[:-1]}.{millis % 1000:03d}Z"


@dataclass(frozen=True, slots=True)
class WatchRequest:
    """One request of a followed session, judged the moment it was replayed.

    Attributes:
        seen: when the watch produced it (epoch seconds, wall clock).
        path, session_id, title: the session (``title`` once the log has named it).
        index, kind, turn, step, attempt, model: the request (``dsh-audit requests`` numbering).
        sent: its send time from the log (epoch seconds), None when unknown.
        prompt_tokens: the logged prompt size; ``expected`` and ``actual``: cache reads predicted
            and logged (``actual`` None while the usage is unknown); ``potential``: the reusable
            reads, what the conversation's previous request left in the cache, which ``lost_tokens``
            is measured from (``cache``'s "reusable"; None when not given).
        classification: the cache verdict (:data:`dsh_audit.cache.CLASSIFICATIONS`).
        cost: what the request cost in USD, None when the price table cannot price it;
            ``cost_buckets`` that cost by billing bucket (None when not given: JSON then gives
            the total alone).
        verdict, cause, relation, previous: the attribution transition (``break`` for a break).
        fields: the header fields that changed; evidence_seqs: the log events that prove it.
        transition: the whole transition as ``dsh-audit breaks --json`` prints it.
        history: produced while catching up with what was written before the watch began.
        lost_tokens, lost_cost: the cache reads it should have had and did not (every cause), and
            what they cost over cache reads at its rate, as ``breaks --cost`` and ``usage`` count
            them (0 and $0 when it lost none); None when not known (a break whose cache reads
            were not logged: both; a loss no rate prices: the cost).
        provisional: shown where the log's bytes stopped (a torn tail, the watch ending): what came
            after them (its usage record) may still be written; if the log grows, the request
            comes again with ``update`` set, once what it says differs. So is a request whose log
            holds no usage while the capture beside it does not report its usage yet: it comes
            again, priced, once the capture does (looked at as the log shows more, and as the
            watch ends).
        usage_source: where its tokens came from, as ``usage --by request --json`` says it: ``log``
            (its logged usage), ``capture`` (the log holds none: the provider's usage in the
            captured response to its send, ``--capture`` or the ``wire.jsonl`` found beside the
            log), None (neither).
        update: this request was shown before as ``provisional``; this takes that one's place
            (:class:`WatchSummary` counts it once).
    """

    seen: float
    path: str
    session_id: str
    title: str | None
    index: int
    kind: str
    turn: int | None
    step: int | None
    attempt: int
    model: str | None
    sent: float | None
    prompt_tokens: int | None
    expected: int | None
    actual: int | None
    classification: str | None
    cost: float | None
    verdict: str | None
    cause: str | None
    relation: str | None
    previous: int | None
    fields: tuple[str, ...] = ()
    evidence_seqs: tuple[int, ...] = ()
    transition: dict[str, Any] | None = field(default=None, repr=False)
    history: bool = False
    lost_tokens: int | None = 0
    lost_cost: float | None = 0.0
    provisional: bool = False
    update: bool = False
    cost_buckets: Costs | None = None
    potential: int | None = None
    usage_source: str | None = None

    @property
    def is_break(self) -> bool:
        return self.verdict == "break"

    @property
    def moment(self) -> float:
        """When it was sent by its log's own time (:attr:`sent`), else (a log that records none)
        when the watch saw it (:attr:`seen`): the one time a watch merges the logs' histories by
        and ends ``--until``'s window at."""
        return self.sent if self.sent is not None else self.seen

    def to_json(self) -> dict[str, Any]:
        """The request's JSON line: when the watch saw it by this machine's clock (``seen_at``,
        :func:`clock_at`) and when it was sent by the log's (``sent_at``, ISO 8601 UTC to the
        second as every command gives a log's times; null when unknown); ``cost_usd`` by billing
        bucket with its ``total``, as every command's ``--json`` gives a cost."""
        return {"type": "break" if self.is_break else "request", "seen_at": clock_at(self.seen), "path": self.path,
                "session_id": self.session_id, "title": self.title, "index": self.index, "kind": self.kind,
                "turn": self.turn, "step": self.step, "attempt": self.attempt, "model": self.model,
                "sent_at": iso_utc(self.sent), "prompt_tokens": self.prompt_tokens,
                "expected_cache_read": self.expected, "reusable_cache_read": self.potential,
                "actual_cache_read": self.actual, "classification": self.classification, "cost_usd": self._cost_json(),
                "lost_tokens": self.lost_tokens, "lost_cost_usd": self.lost_cost,
                "verdict": self.verdict, "cause": self.cause, "relation": self.relation, "previous": self.previous,
                "fields": list(self.fields), "evidence_seqs": list(self.evidence_seqs),
                "transition": self.transition, "history": self.history, "provisional": self.provisional,
                "update": self.update, "usage_source": self.usage_source}

    def _cost_json(self) -> dict[str, float] | None:
        """The request's cost as JSON: by bucket with its ``total``; the total alone when the
        buckets were not given; None when it was not priced."""
        if self.cost is None:
            return None
        return {**(self.cost_buckets.to_json() if self.cost_buckets is not None else {}), "total": self.cost}


@dataclass(frozen=True, slots=True)
class WatchNote:
    """Something that happened: ``watching`` (the first item: what is followed and how changes
    are noticed; ``path`` holds the watched paths), ``started`` (a new session is followed),
    ``replaced`` (the log was truncated or replaced: it is followed again from its first byte),
    ``note`` (one session is present as several files: which one is followed, as discovery's
    notes say it), ``warning`` (a torn tail, dropped records) or ``error`` (the log cannot be read any more, or
    ``path`` is a folder that cannot be listed; each is reported once and the watch goes on with
    the others)."""

    seen: float
    path: str
    level: str
    message: str
    session_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"type": self.level, "seen_at": clock_at(self.seen), "path": self.path,
                "session_id": self.session_id, "message": self.message}


@dataclass(frozen=True, slots=True)
class CaptureNote(WatchNote):
    """What a capture could not be read for, said as ``usage`` says it, each distinct text once in the
    whole watch (the text names the file; several logs it prices say it once) until the capture is read
    again: the ``error`` of a capture given with ``--capture`` that cannot be read (``path``: the capture),
    counted among the summary's errors once per capture file, not a log or folder (the log is followed, its
    requests unpriced); the ``warning`` of a found one left out, or of a line that is no capture
    record, skipped (``path``: the log it prices); and the ``note`` that a capture an error was said of is read
    again (``again``; ``path``: the capture), which the summary says as it says a log read again."""

    again: bool = False


WatchItem = WatchRequest | WatchNote

@dataclass(slots=True)
class WatchSummary:
    """What a watch saw, for its last line. ``cost`` is the sum over the priced requests only,
    exact to the nano-dollar (every sum :func:`~dsh_audit.cache.usd_total`, as ``cache`` and
    ``usage`` sum the same requests: the same number); ``unpriced`` counts the requests without a
    price, so the sum is a lower bound when some are unpriced and unknown when all are (the
    project's rule, :class:`~dsh_audit.cache.Costs`).

    Each request of a session at a path is counted once, as last read: a log followed again from
    its start (truncated, replaced or recreated) that holds the same session again replaces what
    each request it reads again counted (the same index), and what it no longer holds stays
    counted, as a deleted log's requests do (fuzz round 26: a log truncated after 9 requests were
    shown made the summary say 0 requests, $0); what it holds past them is counted as it comes.
    An ``update`` of a request shown as ``provisional`` takes the place of what that one counted.

    Example:
        >>> summary = WatchSummary()
        >>> def request(index: int) -> WatchRequest:
        ...     return WatchRequest(0, "s.jsonl", "s", None, index, "loop", 1, index, 1, None, None, None, None, None,
        ...                         None, 0.25, "break" if index else None, None, None, None)
        >>> for item in [WatchNote(0, "s.jsonl", "started", "", "s"), request(3), request(4),
        ...              WatchNote(0, "s.jsonl", "replaced", "", "s"), WatchNote(0, "s.jsonl", "started", "", "s"),
        ...              *map(request, range(6))]:
        ...     summary.add(item)
        >>> summary.to_json()["requests"], summary.breaks, summary.cost, summary.sessions
        (6, 5, 1.5, 1)
    """

    sessions: int = 0
    requests: int = 0
    breaks: int = 0
    cost: float = 0.0
    errors: int = 0
    unpriced: int = 0
    #: ``cost`` by billing bucket (a watch gives every priced request its buckets, ``watch/_follow.py``)
    costs: Costs = Costs()
    #: runs of the ``--on-break`` command that failed (set by the command): errors too
    failed_runs: int = 0
    ids: set[str] = field(default_factory=set, repr=False)  # a log followed again is one session
    # what was counted of each request of each (path, session), by its index: requests, breaks, cost,
    # unpriced, the cost's buckets
    reads: dict[tuple[str, str], dict[int, list[float]]] = field(default_factory=dict, repr=False)
    # the requests shown as provisional, by session and index: the path each was shown at and what
    # it counted (requests, breaks, cost, unpriced), for the update that takes its place
    provisional: dict[tuple[str, int], tuple[str, list[float]]] = field(default_factory=dict, repr=False)
    # each log or folder an error was said of: whether it was read fine since (a log replaced by a whole
    # one, a folder one of whose logs is followed), which the last line says apart from the unreadable
    failed: dict[str, bool] = field(default_factory=dict, repr=False)
    # each capture an error was said of (:class:`CaptureNote`): whether it was read again since (a note said
    # so), and how many such errors were said (however many, a capture is one of the summary's errors)
    captures: dict[str, bool] = field(default_factory=dict, repr=False)
    capture_errors: int = 0
    #: ``cost`` in whole nano-dollars, the running sum kept exact (``cost`` is read from it)
    _cost_nanos: int = field(default=0, init=False, repr=False)

    def __post_init__(self) -> None:
        self._cost_nanos = usd_nanos(self.cost)

    def add(self, item: WatchItem) -> None:
        if isinstance(item, WatchNote):
            if item.level == "started" and item.session_id not in self.ids:
                self.ids.add(item.session_id or item.path)
                self.sessions += 1
            if item.level == "started":
                for place in self.failed:
                    if item.path == place or item.path.startswith(place.rstrip(os.sep) + os.sep):
                        self.failed[place] = True
            elif isinstance(item, CaptureNote) and item.again and item.path in self.captures:
                self.captures[item.path] = True
            elif item.level == "error":
                self.errors += 1
                if isinstance(item, CaptureNote):
                    self.captures[item.path] = False
                    self.capture_errors += 1
                else:
                    self.failed[item.path] = False
            return
        key = (item.session_id, item.index)
        shown = self.provisional.get(key)
        if shown is not None and (item.update or shown[0] == item.path):
            del self.provisional[key]  # the update (or the same request read again) takes its place
            if item.update:
                self._uncount(shown[0], item.session_id, item.index)
        buckets = item.cost_buckets if item.cost is not None and item.cost_buckets is not None else Costs()
        alone = [1, int(item.is_break), 0.0 if item.cost is None else item.cost, int(item.cost is None),
                 buckets.cache_miss, buckets.cache_read, buckets.cache_write, buckets.output]
        self._uncount(item.path, item.session_id, item.index)  # read again from its start: counted once
        self.reads.setdefault((item.path, item.session_id), {})[item.index] = alone
        self._count(alone, 1)
        if item.provisional:
            self.provisional[key] = (item.path, alone)

    def _uncount(self, path: str, session: str, index: int) -> None:
        """Take away what request ``index`` of ``session`` counted when it was read at ``path``
        (nothing when it was not): it is counted again, as read now."""
        counted = self.reads.get((path, session), {}).pop(index, None)
        if counted is not None:
            self._count(counted, -1)

    def _count(self, counted: list[float], sign: int) -> None:
        """Add (``sign`` 1) or take away (-1) what some requests counted: requests, breaks, cost,
        unpriced, the cost's buckets (the amounts summed exactly: nothing left over by rounding)."""
        self.requests += sign * int(counted[0])
        self.breaks += sign * int(counted[1])
        self._cost_nanos += sign * usd_nanos(counted[2])
        self.cost = nanos_usd(self._cost_nanos)
        self.unpriced += sign * int(counted[3])
        miss, read, write, output = (sign * amount for amount in counted[4:8])
        self.costs = self.costs + Costs(miss, read, write, output)

    def _captures_text(self) -> str:
        """The summary's words for the captures an error was said of: unreadable at the end, and apart from
        them read again since, as logs are said; each capture once, however many errors it had."""
        again = sum(self.captures.values())
        unreadable = len(self.captures) - again
        return ((f", {unreadable} unreadable capture(s)" if unreadable else "")
                + (f", {again} capture(s) unreadable for a while, read again" if again else ""))

    def to_json(self) -> dict[str, Any]:
        """The summary's JSON line: ``cost_usd`` the sum over the priced requests by billing
        bucket, its ``total`` to the nano-dollar (never rounded further: ``cache --json`` gives the
        same number), null when none was priced (:meth:`Costs.known`), with ``unpriced_requests``
        and ``cost_complete``.

        Example:
            >>> fields = ("cost_usd", "unpriced_requests", "cost_complete")
            >>> summary = WatchSummary()
            >>> for index, (cost, buckets) in enumerate([(0.5, Costs(cache_miss=0.25, output=0.25)), (None, None)]):
            ...     summary.add(WatchRequest(0, "s.jsonl", "s", None, index, "loop", 1, 1, 1, None, None, None, None,
            ...                              None, None, cost, None, None, None, None, cost_buckets=buckets))
            >>> [summary.to_json()[k] for k in fields]
            [{'cache_miss': 0.25, 'cache_read': 0.0, 'cache_write': 0.0, 'output': 0.25, 'total': 0.5}, 1, False]
            >>> [WatchSummary(requests=2, unpriced=2).to_json()[k] for k in fields]
            [None, 2, False]
            >>> WatchSummary(requests=1, cost=2.1e-08).to_json()["cost_usd"]["total"]  # not 0.0
            2.1e-08
        """
        known = Costs.known(self.cost, requests=self.requests, unpriced=self.unpriced)
        return {"type": "summary", "sessions": self.sessions, "requests": self.requests, "breaks": self.breaks,
                "cost_usd": None if known is None else {**self.costs.to_json(), "total": known},
                "errors": self.errors - self.capture_errors + len(self.captures) + self.failed_runs,
                "unpriced_requests": self.unpriced,
                "cost_complete": not self.unpriced}

    def text(self) -> str:
        """The summary's last line: the cost ``≥$x`` when some requests are unpriced, ``$?`` when
        none was priced (:meth:`Costs.shown`), with how many were not; the logs and folders that
        could not be read at the end (an error said of each, none read since), and apart from them
        those that could not be read for a while and were read again (a log replaced by garbage,
        then by a whole log).

        Example:
            >>> WatchSummary(sessions=1, requests=2, cost=0.5, unpriced=1).text()
            'watched 1 session(s): 2 request(s), 0 break(s), ≥$0.5000 (1 unpriced)'
            >>> WatchSummary(sessions=1, requests=2, unpriced=2).text()
            'watched 1 session(s): 2 request(s), 0 break(s), $? (2 unpriced)'
            >>> summary = WatchSummary()
            >>> for note in [WatchNote(0, "a.jsonl", "error", ""), WatchNote(0, "a.jsonl", "started", "", "a"),
            ...              WatchNote(0, "b.jsonl", "error", "")]:
            ...     summary.add(note)
            >>> summary.text().partition("$0.0000, ")[2]
            '1 unreadable log(s) or folder(s), 1 log(s) or folder(s) unreadable for a while, read again'
        """
        again = sum(self.failed.values())
        unreadable = len(self.failed) - again if self.failed else self.errors - self.capture_errors
        return (f"watched {self.sessions} session(s): {self.requests} request(s), {self.breaks} break(s), "
                f"{Costs.shown(self.cost, requests=self.requests, unpriced=self.unpriced)}"
                + (f" ({self.unpriced} unpriced)" if self.unpriced else "")
                + (f", {unreadable} unreadable log(s) or folder(s)" if unreadable else "")
                + (f", {again} log(s) or folder(s) unreadable for a while, read again" if again else "")
                + self._captures_text()
                + (f", {self.failed_runs} failed --on-break run(s)" if self.failed_runs else ""))
