"""One row per session for people: its title, project, when it ran, what it cost.

:func:`summarize_session` condenses a read :class:`~dsh_audit.session.Session` (and, when there is
one, its :class:`SessionCacheReport`) into a :class:`SessionSummary`; :func:`summary_group` does it
for a group of neighbouring logs, each read once (a task of :func:`dsh_audit.session.run_groups`):
a log that is no fork or subagent child, nor parent of one, and has no capture in one pass, summarised
while it is accounted as ``cache`` accounts a lone log (:func:`~dsh_audit.cache.account_log`); and
:func:`newest_first` orders summaries the way ``dsh-audit sessions`` lists them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._usage_rule import js_integer, usage_of
from ..errors import CaptureError, DshAuditError
from ..log import SessionHeader, SessionLog, read_share
from ..replay import Request
from ..session import Activity, Failure, GroupResult, Headers, RequestSpan, Session, open_group
from ._ledger import LedgerEntry
from ._logged_usage import logged_tokens
from ._money import Tokens
from ._price_window import utc_moment
from ._prices import PriceBook
from ._report import CacheVerdict, SessionCacheReport
from ._session import account_taken, accounted, lone_roots

__all__ = ["SessionSummary", "iso_utc", "newest_first", "summarize_session", "summary_group"]

# The part of a session's work that reading its log is when it is read whole, then accounted (measured on
# long generated logs: reading a third, replaying and judging its requests the rest): the bytes of a group
# read whole count this share on a progress bar (dsh_audit.log.read_share), its row made the rest. A log
# accounted as it is read counts its bytes as they are read.
_READ_SHARE = 1 / 3


def iso_utc(seconds: float | None) -> str | None:
    """``seconds`` since the epoch as ISO 8601 in UTC to the second (``2026-11-01T09:30:00Z``);
    None for None and for a time outside the years 1-9999.

    Example:
        >>> iso_utc(1800000000.009)
        '2027-01-15T08:00:00Z'
    """
    moment = None if seconds is None else utc_moment(math.floor(seconds))
    # the year by hand: strftime's %Y does not pad years before 1000 on glibc ("1-01-01T...")
    if moment is None:
        return None
    return (f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T"  # not strftime: a call per field
            f"{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}Z")


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """What a person needs to recognise a session and judge it at a glance.

    Attributes:
        path: the log file read.
        session_id: the header's session id.
        title: the latest ``session/title`` of the log, or None.
        project: the header's ``cwd`` (the project the session ran in), or None.
        first_activity, last_activity: the log's earliest and latest own timestamps, in seconds
            since the epoch (header ``createdAt`` and event times; not the file's mtime);
            ``first_activity_at`` and ``last_activity_at`` in the JSON.
        format: ``dsh``, ``claude-code`` or ``codex``; ``format_version`` the DSH log version.
        requests: the LLM requests the log implies.
        prompt_tokens: the logged prompt of the requests whose usage was logged (from the cache
            report; None without one, and when none of them logged its cache read and prompt size:
            :meth:`~dsh_audit.cache.SessionCacheReport.known_sum`, as ``cache --json`` and
            ``stats --json`` give it; ``cache_read_tokens`` too).
        tokens: the tokens by billing bucket (``cache_miss``, ``cache_read``, ``cache_write``,
            ``output``, ``reasoning`` and their ``total``): the priced ledger's, as ``cache --json``
            gives them in ``cost.tokens``; without one, the sums of the requests' logged usage
            (:func:`~dsh_audit.cache._logged_usage.logged_tokens`); None when no request logged any.
        cache_read_tokens: logged prompt-cache reads; ``hit_ratio`` is their share of the prompt
            (in the JSON ``actual_cache_read`` and ``actual_hit_ratio``, as ``cache`` and ``stats`` name them).
        breaks: prefix-cache breaks; ``cost_usd`` the session's list-price cost (its total), and
            ``cost_buckets`` that cost by billing bucket (``cache_miss``, ``cache_read``,
            ``cache_write``, ``output``: what ``cache --json`` gives as ``cost.cost_usd``). All three are None
            when cache accounting did not run or failed (``notes`` says why); ``breaks`` is None
            for an imported log too (break attribution needs a DSH log: ``dsh-audit breaks``
            refuses it), ``cost_usd`` when no request could be priced.
        unpriced: the requests not priced (``cost_usd`` is then the sum over the others: a lower
            bound); None when cache accounting did not run.
        parent_session: the parent's id for a fork or subagent child (``parent_session_id`` in the
            JSON, as every other id of another session is named: ``previous_session_id``).
        relation: how a child continues its parent: ``fork`` (its header is seeded with the
            parent's events) or ``subagent``; None for a session with no parent.
        notes, warnings: what went wrong around the log (accounting) and in it (a torn tail).
        cost_summary: the summary of the ledger that priced the session
            (:meth:`~dsh_audit.cache.SessionLedger.summary`, as ``cache --json`` gives its ``cost``),
            which says what ``--capture`` did to its prices (:func:`dsh_audit.cli._priced.echo_capture_use`);
            None when cache accounting did not run. Not in the JSON (its numbers are above).
    """

    path: str
    session_id: str
    title: str | None
    project: str | None
    first_activity: float | None
    last_activity: float | None
    format: str
    format_version: int
    requests: int
    prompt_tokens: int | None = None
    tokens: dict[str, int] | None = None
    cache_read_tokens: int | None = None
    hit_ratio: float | None = None
    breaks: int | None = None
    cost_usd: float | None = None
    cost_buckets: tuple[tuple[str, float], ...] = ()
    unpriced: int | None = None
    parent_session: str | None = None
    relation: str | None = None
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    cost_summary: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The summary as one JSON object (the log's times as ISO 8601 UTC strings, ``first_activity_at``
        and ``last_activity_at``; ``cost_usd`` the cost by
        billing bucket with its ``total``, as every command's ``--json`` gives a cost, or null)."""
        return {"path": self.path, "session_id": self.session_id, "title": self.title, "project": self.project,
                "first_activity_at": iso_utc(self.first_activity), "last_activity_at": iso_utc(self.last_activity),
                "format": self.format, "format_version": self.format_version, "requests": self.requests,
                "prompt_tokens": self.prompt_tokens, "tokens": self.tokens,
                "actual_cache_read": self.cache_read_tokens, "actual_hit_ratio": self.hit_ratio, "breaks": self.breaks,
                "cost_usd": None if self.cost_usd is None else {**dict(self.cost_buckets), "total": self.cost_usd},
                "unpriced_requests": self.unpriced,
                "cost_complete": None if self.unpriced is None else not self.unpriced,
                "parent_session_id": self.parent_session, "relation": self.relation, "notes": list(self.notes),
                "warnings": list(self.warnings)}


def _logged(session: Session, key: str) -> int | None:
    values = [usage.get(key) for r in session.requests if isinstance(usage := usage_of(r), dict)]
    counted = [n for v in values if (n := js_integer(v)) is not None]  # 100.0 is 100, as DSH reads it
    return sum(counted) if counted else None


class _Requests:
    """What a summary takes of each request, folded as the requests come (:meth:`add`): how many came,
    their logged tokens by bucket summed (:func:`logged_tokens`, the ledger's rule) and their span
    (:class:`~dsh_audit.session.RequestSpan`: a log's span when its own timestamps say nothing, as
    :meth:`~dsh_audit.session.Session.span` takes it)."""

    __slots__ = ("requests", "span", "sum")

    def __init__(self, requests: Iterable[Request] = ()) -> None:
        self.sum: Tokens | None = None
        self.requests = 0
        self.span = RequestSpan()
        for request in requests:
            self.add(request)

    def add(self, request: Request) -> None:
        self.requests += 1
        self.span.add(request.time)
        tokens = logged_tokens(request)[0]
        if tokens is not None:
            self.sum = tokens if self.sum is None else self.sum + tokens

    def judged(self, request: Request, _verdict: CacheVerdict, _entry: LedgerEntry) -> None:
        """:meth:`add`, as :func:`~dsh_audit.cache.account_log`'s ``on_judged``."""
        self.add(request)

    def to_json(self) -> dict[str, int] | None:
        """The sum as JSON; None when no request logged any."""
        return None if self.sum is None else self.sum.to_json()


def _priced_tokens(logged: dict[str, int] | None, report: SessionCacheReport, tokens: Any) -> dict[str, int] | None:
    """The ledger's tokens by bucket (``tokens``, its summary's), or the ``logged`` ones without it; None
    (unknown, never 0) when the session has requests and none of their tokens is known, logged or
    captured, as ``stats --json``'s ``tokens`` (a sum of no request's usage is unknown)."""
    if logged is None and not report.captured_usage and report.request_count:
        return None
    return dict(tokens) if isinstance(tokens, dict) else logged


def _buckets(cost: Any) -> tuple[tuple[str, float], ...]:
    """The billing buckets of a ledger's ``cost_usd`` object (its ``total`` apart), in its order."""
    if not isinstance(cost, dict):
        return ()
    return tuple((key, value) for key, value in cost.items() if key != "total" and isinstance(value, (int, float)))


def _relation(session: Session) -> str | None:
    """``fork`` for a child whose header is seeded with its parent's events (``isSeeded``, or a
    v0/v1 ``seedLength``), ``subagent`` for another child; None for a session with no parent."""
    header = session.header
    if not header.parent_session:
        return None
    return "fork" if header.is_seeded else "subagent"


def summarize_session(session: Session, report: SessionCacheReport | None = None, *,
                      notes: Iterable[str] = ()) -> SessionSummary:
    """The summary of ``session``; tokens, hit ratio, breaks and cost from ``report`` when given.

    Example:
        >>> from dsh_audit.session import open_session
        >>> summary = summarize_session(open_session("sample_logs/chat/session.jsonl"))
        >>> summary.title, summary.requests
        ('Who are you', 3)
    """
    common = _of_log(session.path, session.header, title=session.title, span=session.span(), form=session.format,
                     version=session.format_version, requests=len(session.requests), relation=_relation(session),
                     notes=tuple(notes), warnings=tuple(session.warnings))
    logged = _Requests(session.requests).to_json()
    if report is None:
        read = _logged(session, "cacheReadTokens")
        return SessionSummary(**common, cache_read_tokens=read, tokens=logged)
    return _accounted_summary(common, report, logged, imported=session.imported)


def _of_log(path: str, header: SessionHeader, *, title: str | None, span: tuple[float | None, float | None],
            form: str, version: int, requests: int, relation: str | None, notes: tuple[str, ...] = (),
            warnings: tuple[str, ...] = ()) -> dict[str, Any]:
    """A summary's fields that come from the log (all but its accounting's), by name."""
    return {"path": path, "session_id": header.id, "title": title,
            "project": header.cwd if isinstance(header.cwd, str) else None, "first_activity": span[0],
            "last_activity": span[1], "format": form, "format_version": version, "requests": requests,
            "parent_session": header.parent_session or None, "relation": relation, "notes": notes,
            "warnings": warnings}


def _accounted_summary(common: dict[str, Any], report: SessionCacheReport, logged: dict[str, int] | None, *,
                       imported: bool) -> SessionSummary:
    """The summary of a session (``common``: its fields that come from the log) with the tokens, hit ratio,
    breaks and cost of its cache ``report``; ``logged``: its requests' logged tokens (:class:`_Requests`)."""
    cost = report.cost["cost_usd"] if report.cost is not None else None
    unpriced = report.cost.get("unpriced_requests") if report.cost is not None else None
    tokens = report.cost.get("tokens") if report.cost is not None else None
    return SessionSummary(**common, prompt_tokens=report.known_sum(report.prompt_total),
                          cache_read_tokens=report.known_sum(report.actual_total),
                          tokens=_priced_tokens(logged, report, tokens),
                          hit_ratio=report.ratio(report.actual_total),
                          breaks=None if imported else report.break_count,
                          cost_usd=cost["total"] if isinstance(cost, dict) else None,
                          cost_buckets=_buckets(cost),
                          unpriced=unpriced if isinstance(unpriced, int) else None, cost_summary=report.cost)


def _streamed(log: SessionLog, *, tokenizer: str, prices: PriceBook | None, routes: str | None,
              zero_data_retention: bool | None) -> GroupResult[SessionSummary]:
    """The summary of a log handed over, one of :func:`~dsh_audit.cache._session.lone_roots`, made while it is
    read and accounted in one pass (:func:`~dsh_audit.cache._session.account_taken`: its report holds no
    verdict, its ledger no entry); its title and span folded from the events as they are read
    (:class:`~dsh_audit.session.Activity`), its logged tokens from each request as it is judged. The
    summary :func:`summarize_session` makes of the log read whole and accounted."""
    activity, logged = Activity(log.header), _Requests()
    found = account_taken(log, prices=prices, routes=routes, tokenizer=tokenizer,
                          zero_data_retention=zero_data_retention, keep=False, on_judged=logged.judged,
                          observe=activity.on_event)
    items: list[SessionSummary | Failure] = []
    for item in found.items:
        if isinstance(item, Failure):
            items.append(item)
            continue
        report, _ledger = item
        # as Session.span: the log's own timestamps, else its requests' times
        span = (activity.first, activity.last) if activity.first is not None else (logged.span.first, logged.span.last)
        common = _of_log(log.path, log.header, title=activity.title, span=span, form="dsh", version=log.format_version,
                         requests=logged.requests, relation=None, warnings=found.route_warnings.get(log.path, ()))
        items.append(_accounted_summary(common, report, logged.to_json(), imported=False))
    return GroupResult(items, found.orphans, found.ids, found.route_warnings)


def _read_whole(paths: Sequence[str | os.PathLike[str]], headers: Headers, *, lenient: bool, max_version: int,
                tokenizer: str, prices: PriceBook | None, routes: str | None, capture: str | os.PathLike[str] | None,
                zero_data_retention: bool | None) -> GroupResult[SessionSummary]:
    """The summaries of logs read whole (their headers read by ``headers``), then accounted."""
    group = open_group(paths, lenient=lenient, max_version=max_version, routes=routes, headers=headers)
    items: list[SessionSummary | Failure] = []
    for item, report in accounted(group, tokenizer=tokenizer, prices=prices, capture=capture,
                                  zero_data_retention=zero_data_retention):
        if isinstance(item, Failure):
            items.append(item)
        elif isinstance(report, CaptureError) and capture is not None:  # the capture given: bad input, as in `cache`
            items.append(Failure(item.path, report, tuple(item.warnings), item.id))
        elif isinstance(report, DshAuditError):  # the session is still worth a row
            items.append(summarize_session(item, notes=[f"cache accounting failed: {report}"]))
        else:
            items.append(summarize_session(item, report))
    return GroupResult.of(group, items)


def summary_group(paths: Sequence[str | os.PathLike[str]], *, lenient: bool = False, max_version: int = 4,
                  accounting: bool = True, tokenizer: str = "auto", prices: PriceBook | None = None,
                  routes: str | None = None, capture: str | os.PathLike[str] | None = None,
                  zero_data_retention: bool | None = None) -> GroupResult[SessionSummary]:
    """Summaries of a group of neighbouring logs, each read once (a task of
    :func:`dsh_audit.session.run_groups`); with ``accounting``, hit ratio, breaks and cost come from
    the cache report ``dsh-audit cache`` would print (breaks attributed as ``dsh-audit breaks`` does),
    priced by ``prices`` (default: the packaged table and pyproject's), its routes from the route
    configuration file ``routes`` (``--routes``) as ``cache`` reads them, each log compared with
    ``capture`` (``--capture``) or the capture found beside it and OpenAI's retention judged with
    ``zero_data_retention`` (``--openai-zdr``), as ``cache`` does (:func:`~dsh_audit.cache.cache_group`).

    Never raises for a log: one that cannot be read is a :class:`~dsh_audit.session.Failure`, and
    so is each log of a group whose given ``capture`` cannot be read; another accounting failure (a
    capture found beside a log that cannot be read) leaves the session's row, with a note saying why.
    """
    if not accounting:
        group = open_group(paths, lenient=lenient, max_version=max_version, routes=routes)
        return GroupResult.of(group, [summarize_session(item) if isinstance(item, Session) else item
                                      for item in group.given])
    headers = Headers(lenient=lenient, max_version=max_version)
    options: dict[str, Any] = {"tokenizer": tokenizer, "prices": prices, "routes": routes,
                               "zero_data_retention": zero_data_retention}
    # a log keeps the read hook in effect when its header is read, so the share is set before: a log accounted
    # as it is read counts its bytes as read, one read whole a share of them (the rest when its row is made)
    with read_share(1) as share:
        alone: dict[str, GroupResult[SessionSummary]] = {}
        for path in lone_roots(paths, headers, capture=capture):
            if isinstance(log := headers.take(path), SessionLog):  # (each is)
                alone[path] = _streamed(log, **options)
        rest = [path for path in paths if os.fspath(path) not in alone]
        share.share = _READ_SHARE
        whole = _read_whole(rest, headers, lenient=lenient, max_version=max_version, capture=capture, **options) \
            if rest else None
    headers.close()
    if whole is None and len(alone) == 1:
        return next(iter(alone.values()))
    return _merged(paths, alone, whole)


def _merged(paths: Sequence[str | os.PathLike[str]], alone: dict[str, GroupResult[SessionSummary]],
            whole: GroupResult[SessionSummary] | None) -> GroupResult[SessionSummary]:
    """One result of a group's ``paths``, in their order: each log of ``alone`` its own, the others
    ``whole``'s (the logs read whole, in their order)."""
    rest = iter(whole.items if whole is not None else ())
    read: dict[str, list[str]] = {}  # a path read whole -> the ids whole's result gives it
    for sid, path in (whole.ids if whole is not None else {}).items():
        read.setdefault(path, []).append(sid)
    items: list[SessionSummary | Failure] = []
    ids: dict[str, str] = {}  # as GroupResult.of: a session id given twice, its last path
    warnings: dict[str, tuple[str, ...]] = {}
    for path in [os.fspath(path) for path in paths]:
        own = alone.get(path)
        if own is not None:
            items.append(own.items[0])
            ids.update(own.ids)
            warnings.update(own.route_warnings)
        elif whole is not None:
            items.append(next(rest))
            ids.update((sid, path) for sid in read.get(path, ()))
            if path in whole.route_warnings:
                warnings[path] = whole.route_warnings[path]
    return GroupResult(items, whole.orphans if whole is not None else [], ids, warnings)


def newest_first(summaries: Iterable[SessionSummary]) -> list[SessionSummary]:
    """``summaries`` by last activity, newest first (sessions without timestamps last, by path)."""
    ordered = sorted(summaries, key=lambda s: s.path)
    return sorted(ordered, key=lambda s: -(s.last_activity if s.last_activity is not None else float("-inf")))
