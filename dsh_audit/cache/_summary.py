"""One row per session for people: its title, project, when it ran, what it cost.

:func:`summarize_session` condenses a read :class:`~dsh_audit.session.Session` (and, when there is
one, its :class:`SessionCacheReport`) into a :class:`SessionSummary`; :func:`summary_group` does it
for a group of neighbouring logs, each read once (a task of :func:`dsh_audit.session.run_groups`),
and :func:`newest_first` orders summaries the way ``dsh-audit sessions`` lists them.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._usage_rule import js_integer, usage_of
from ..errors import CaptureError, DshAuditError
from ..session import Failure, GroupResult, Session, open_group
from ._logged_usage import logged_tokens
from ._price_window import utc_moment
from ._prices import PriceBook
from ._report import SessionCacheReport
from ._session import accounted

__all__ = ["SessionSummary", "iso_utc", "newest_first", "summarize_session", "summary_group"]


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


def _logged_tokens(session: Session) -> dict[str, int] | None:
    """The session's logged tokens by bucket (:func:`logged_tokens`, the ledger's rule), as JSON;
    None when no request logged any."""
    counts = [tokens for r in session.requests if (tokens := logged_tokens(r)[0]) is not None]
    return sum(counts[1:], counts[0]).to_json() if counts else None


def _priced_tokens(session: Session, report: SessionCacheReport, tokens: Any) -> dict[str, int] | None:
    """The ledger's tokens by bucket (``tokens``, its summary's), or the logged ones without it; None
    (unknown, never 0) when the session has requests and none of their tokens is known, logged or
    captured, as ``stats --json``'s ``tokens`` (a sum of no request's usage is unknown)."""
    logged = _logged_tokens(session)
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
    first, last = session.span()
    header = session.header
    common: dict[str, Any] = {
        "path": session.path, "session_id": session.id, "title": session.title,
        "project": header.cwd if isinstance(header.cwd, str) else None, "first_activity": first,
        "last_activity": last, "format": session.format, "format_version": session.format_version,
        "requests": len(session.requests),
        "parent_session": header.parent_session or None, "relation": _relation(session), "notes": tuple(notes),
        "warnings": tuple(session.warnings)}
    if report is None:
        read = _logged(session, "cacheReadTokens")
        return SessionSummary(**common, cache_read_tokens=read, tokens=_logged_tokens(session))
    cost = report.cost["cost_usd"] if report.cost is not None else None
    unpriced = report.cost.get("unpriced_requests") if report.cost is not None else None
    tokens = report.cost.get("tokens") if report.cost is not None else None
    return SessionSummary(**common, prompt_tokens=report.known_sum(report.prompt_total),
                          cache_read_tokens=report.known_sum(report.actual_total),
                          tokens=_priced_tokens(session, report, tokens),
                          hit_ratio=report.ratio(report.actual_total),
                          breaks=None if session.imported else report.break_count,
                          cost_usd=cost["total"] if isinstance(cost, dict) else None,
                          cost_buckets=_buckets(cost),
                          unpriced=unpriced if isinstance(unpriced, int) else None, cost_summary=report.cost)


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
    group = open_group(paths, lenient=lenient, max_version=max_version, routes=routes)
    items: list[SessionSummary | Failure] = []
    if not accounting:
        items = [summarize_session(item) if isinstance(item, Session) else item for item in group.given]
        return GroupResult.of(group, items)
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


def newest_first(summaries: Iterable[SessionSummary]) -> list[SessionSummary]:
    """``summaries`` by last activity, newest first (sessions without timestamps last, by path)."""
    ordered = sorted(summaries, key=lambda s: s.path)
    return sorted(ordered, key=lambda s: -(s.last_activity if s.last_activity is not None else float("-inf")))
