"""One session log in, the rows the fleet index stores for it out (runs in worker processes).

:func:`audit_session` is the default per-session audit of ``dsh-audit index``: read and replay
the log once into a :class:`~dsh_audit.session.Session` (requests with their times), explain every
transition with :mod:`dsh_audit.attribution` and account for the prefix cache with
:mod:`dsh_audit.cache` over that same session (the defaults of ``dsh-audit cache``). An analysis
that fails leaves a note instead of losing the session's requests.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .._spool import RowSpool
from ..attribution import SessionAttribution, Transition, attribute_opened
from ..capture import capture_for, capture_state
from ..cache import (USAGE_BUCKETS, CacheVerdict, LedgerEntry, PriceBook, SessionCacheReport, Tokens, account_log,
                     cache_report, given_capture, given_usage, iso_utc, load_prices, session_ledger, usd_total)
from ..errors import DshAuditError
from ..log import SessionLog
from ..replay import Request
from ..session import (ATTACHMENTS_ENV, Failure, GroupResult, Headers, Session, SessionGroup, forced_adapter,
                       home_routes_key, open_group, routes_from)
from ..wire import PiRoutes
from ._rows import BreakRow, CostRow, RequestRow, SessionRecord

__all__ = ["audit_group", "audit_session", "options_key"]


@functools.lru_cache(maxsize=64)  # a request's row and its cost row ask for the same time's day
def _day(sent: float | None) -> str | None:
    text = None if sent is None else iso_utc(sent)
    return None if text is None else text[:10]


#: ``json.dumps(value, sort_keys=True)``'s encoder, made once (a request row has one such value).
_SORTED_JSON = json.JSONEncoder(sort_keys=True).encode


def _cost_row(path: str, session_id: str, entry: LedgerEntry) -> CostRow:
    tokens, cost = entry.tokens, entry.cost
    return CostRow(
        path=path, idx=entry.index, session_id=session_id, kind=entry.kind, turn=entry.turn, sent_at=entry.sent,
        day=_day(entry.sent), model=entry.model, provider=entry.provider, route=entry.route,
        billed_as=entry.billed_as, window=entry.window, tier=entry.tier,
        cache_miss_tokens=tokens.cache_miss if tokens else None, cache_read_tokens=tokens.cache_read if tokens else None,
        cache_write_tokens=tokens.cache_write if tokens else None, output_tokens=tokens.output if tokens else None,
        reasoning_tokens=tokens.reasoning if tokens else None,
        cost_cache_miss=cost.cache_miss if cost else None, cost_cache_read=cost.cache_read if cost else None,
        cost_cache_write=cost.cache_write if cost else None, cost_output=cost.output if cost else None,
        cost_total=cost.total if cost else None, no_cache_cost=entry.no_cache_cost,
        off_peak_cost=entry.off_peak_cost, classification=entry.classification, is_break=entry.is_break,
        # unknown (NULL) for a break whose cache reads were not logged, as unpriced: never 0
        lost_tokens=None if entry.lost_unknown else sum(entry.lost.values()),
        lost_cost=usd_total(entry.lost_cost.values()) if entry.billed_as is not None and not entry.lost_unknown
        else None,
        lost_cost_by_cause=_SORTED_JSON(entry.lost_cost), unpriced=entry.unpriced,
        rate_source=entry.rate_source, rate_effective=entry.rate_effective, rate_retrieved=entry.rate_retrieved)


@functools.cache
def code_fingerprint() -> str:
    """A fingerprint of this dsh-audit's own code and data (every ``.py`` and ``.json`` file of the
    package, by path and content): a record made by another build of dsh-audit may have been
    attributed, accounted or priced by other rules, even with the same price table.

    Example:
        >>> len(code_fingerprint()), code_fingerprint() == code_fingerprint()
        (16, True)
    """
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".json") and "__pycache__" not in p.parts):
        name = path.relative_to(root).as_posix().encode("utf-8", "surrogateescape")
        data = path.read_bytes()
        digest.update(b"%d:%s%d:" % (len(name), name, len(data)))
        digest.update(data)
    return digest.hexdigest()[:16]


def options_key(*, lenient: bool, max_version: int, attribution: bool, cache: bool, prices: PriceBook,
                routes: str | None = None, capture: str | None = None,
                zero_data_retention: bool | None = None, log: str | None = None) -> str:
    """The reading and analysis options a record was made with, the price table it was priced with,
    the route file (``routes``: a fingerprint of its text) its requests were routed by, the capture
    it was compared with (:func:`dsh_audit.capture.capture_state`: the one given for every log,
    ``capture``, or, for the log at ``log``, the one found beside it; by path, size and mtime_ns, or
    ``none``; ``ignored`` with ``--no-capture``), the OpenAI organization's Zero Data Retention
    status when stated, the wire format ``$DSH_AUDIT_ADAPTER`` forces on every request
    (:func:`~dsh_audit.session.forced_adapter`), the attachment store ``$DSH_AUDIT_ATTACHMENTS``
    names (``--attachments``), and the build of dsh-audit that made it
    (:func:`code_fingerprint`); a change re-indexes the file."""
    forced = forced_adapter()
    store = os.environ.get(ATTACHMENTS_ENV, "").strip()  # --attachments: another store renders images anew
    state = capture_state(log, capture)
    compared = log is not None or capture is not None or state == "ignored"  # found: known only with the log
    return (f"lenient={int(lenient)};max_version={max_version};attribution={int(attribution)};cache={int(cache)};"
            f"prices={prices.fingerprint}" + (f";routes={routes}" if routes is not None else "")
            + (f";adapter={forced}" if forced is not None else "")
            + (f";attachments={os.path.abspath(store)}" if store else "")
            + (f";capture={state}" if compared else "")
            + (f";zdr={int(zero_data_retention)}" if zero_data_retention is not None else "")
            + f";code={code_fingerprint()}")


# _request_row reads the four buckets by name, in this order
assert tuple(bucket for _, bucket in USAGE_BUCKETS) == ("cache_miss", "cache_read", "cache_write", "output")


def _request_row(path: str, request: Request, sent: float | None, entry: LedgerEntry,
                 verdict: CacheVerdict | None = None) -> RequestRow:
    """A request's row; its token columns are the tokens its ledger ``entry`` was priced from (its
    logged usage read by :func:`dsh_audit.cache.logged_tokens`, else the capture's), each one that
    holds no valid count NULL, never 0 nor a negative count: ``usage`` and ``stats`` sum them by
    one rule (:meth:`dsh_audit.cache.UsageRow.add`). With its cache ``verdict`` (when the cache was
    accounted), its cache columns are the verdict's, else its prompt and cache read are those
    tokens'."""
    tokens, unlogged = entry.tokens, entry.unlogged
    if tokens is None:
        inputs = read = write = output = None
    elif not unlogged:  # the common case: every count logged (USAGE_BUCKETS' buckets, in its order)
        inputs, read, write, output = tokens.cache_miss, tokens.cache_read, tokens.cache_write, tokens.output
    else:
        inputs, read, write, output = [None if name in unlogged else getattr(tokens, bucket)
                                       for name, bucket in USAGE_BUCKETS]
    config = (request.header or {}).get("config") or {}
    if verdict is None:
        prompt = None if inputs is None or read is None or write is None else inputs + read + write
        actual = read if prompt is not None else None
        expected = reusable = classification = cause = lost_tokens = lost_cost = lost = None
    else:
        prompt, actual, expected, reusable = verdict.prompt_tokens, verdict.actual, verdict.expected, verdict.potential
        classification, cause, lost_cost = verdict.classification, verdict.cause, verdict.lost_cost
        if verdict.lost_unknown:  # a break whose cache reads were not logged: what it lost is unknown (NULL)
            lost_tokens = lost = None
        else:
            lost_tokens, lost = sum(verdict.lost.values()), _SORTED_JSON(verdict.lost)
    return RequestRow(
        path=path, idx=request.index, session_id=request.session_id, kind=request.kind, turn=request.turn,
        step=request.step, attempt=request.attempt, model=config.get("model") or request.extra.get("model"),
        provider=config.get("provider"), input_tokens=inputs, cache_read_tokens=read, cache_write_tokens=write,
        output_tokens=output, message_count=request.message_count,
        messages_sha256=request.messages_sha256, sent_at=sent, day=_day(sent), prompt_tokens=prompt,
        actual_cache_read=actual, expected_cache_read=expected, reusable_cache_read=reusable,
        classification=classification, cause=cause,
        lost_tokens=lost_tokens, lost_cost=lost_cost, lost=lost)


def _break_row(path: str, transition: Transition, verdict: CacheVerdict | None) -> BreakRow:
    return BreakRow(
        path=path, request=transition.request, session_id=transition.session_id, previous=transition.previous,
        previous_session_id=transition.previous_session_id, relation=transition.relation, cause=transition.cause,
        other_causes=json.dumps(list(transition.other_causes)), fields=json.dumps(list(transition.field_names)),
        evidence_seqs=json.dumps(list(transition.evidence_seqs)), detail=transition.detail,
        classification=verdict.classification if verdict is not None else None,
        lost_tokens=sum(verdict.lost.values()) if verdict is not None and not verdict.lost_unknown else None,
        lost_cost=verdict.lost_cost if verdict is not None else None)


def _account(session: Session, transitions: list[Transition] | None, notes: list[str],
             prices: PriceBook, zero_data_retention: bool | None = None,
             parent: Session | None = None, captured: Mapping[int, Tokens] | None = None) -> SessionCacheReport | None:
    """The cache report, with the defaults of ``dsh-audit cache`` (``parent``: a child's parent
    log, read in this group; ``captured``: the usage of ``--capture``, :func:`cache_report`'s)."""
    try:
        return cache_report(session, attribution=transitions, prices=prices, zero_data_retention=zero_data_retention,
                            parent=parent, captured=captured)
    except DshAuditError as exc:  # keep the session's requests whatever happens
        notes.append(f"cache accounting failed: {exc}")
        return None


def audit_session(path: str | os.PathLike[str], *, lenient: bool = False, max_version: int = 4,
                  attribution: bool = True, cache: bool = True, prices: PriceBook | None = None) -> SessionRecord:
    """Read, replay and analyse one log into the rows of the fleet index; never raises for the log.

    Args:
        path: one ``session.jsonl[.zstd]`` file.
        lenient: accept headers DSH refuses only for their metadata (tokenised fixtures).
        max_version: the newest log format version to read.
        attribution: explain breaks with :mod:`dsh_audit.attribution` (when installed).
        cache: account for cache reads with :mod:`dsh_audit.cache` (when installed).
        prices: the price table every request is priced with (default
            :func:`dsh_audit.cache.load_prices`).

    Example:
        >>> record = audit_session("sample_logs/chat/session.jsonl")  # doctest: +SKIP
        >>> record.request_count, record.error  # doctest: +SKIP
        (3, None)
    """
    record = audit_group([path], lenient=lenient, max_version=max_version, attribution=attribution, cache=cache,
                         prices=prices).items[0]
    assert isinstance(record, SessionRecord), "a log that cannot be read is a record with its error"
    return record


def _base(path: str, *, lenient: bool, max_version: int, attribution: bool, cache: bool,
          prices: PriceBook, routes: str | None = None, capture: str | None = None,
          zero_data_retention: bool | None = None) -> dict[str, Any]:
    try:
        stat = Path(path).stat()
        size, mtime_ns = stat.st_size, stat.st_mtime_ns
    except OSError:  # a symlink loop, a dangling link, a file gone: reading it says why, for it alone
        size, mtime_ns = -1, -1
    return {"path": path, "size": size, "mtime_ns": mtime_ns,
            "options": options_key(lenient=lenient, max_version=max_version, attribution=attribution, cache=cache,
                                   prices=prices, routes=routes, capture=capture,
                                   zero_data_retention=zero_data_retention, log=path)}


def audit_group(paths: Sequence[str | os.PathLike[str]], *, lenient: bool = False, max_version: int = 4,
                attribution: bool = True, cache: bool = True, prices: PriceBook | None = None,
                routes: str | None = None, routes_key: str | None = None,
                capture: str | None = None, zero_data_retention: bool | None = None) -> GroupResult[SessionRecord]:
    """:func:`audit_session` for a group of neighbouring logs, each read once, a fork or subagent
    child attributed with its parent (a task of :func:`dsh_audit.session.run_groups`). ``routes``:
    a route configuration file (``--routes``), ``routes_key`` its fingerprint in the records'
    options (:func:`options_key`); ``zero_data_retention``: the OpenAI organization's status
    (``--openai-zdr``). Each log is compared with ``capture`` (``--capture``) or the
    capture found beside it, as ``dsh-audit check`` compares it
    (:func:`dsh_audit.attribution.attribute_opened`); a log with no capture that is no fork or
    subagent child is audited while it is replayed. A log that cannot be read (a symlink loop, a
    file gone), or whose capture cannot be read, is a record holding its error; the other logs of
    the group are audited.
    """
    names = [os.fspath(p) for p in paths]
    book = prices if prices is not None else load_prices()
    bases = [_base(n, lenient=lenient, max_version=max_version, attribution=attribution, cache=cache, prices=book,
                   routes=routes_key if routes is not None else home_routes_key(n), capture=capture,
                   zero_data_retention=zero_data_retention) for n in names]
    headers = Headers(lenient=lenient, max_version=max_version)
    alone = attribution and cache and capture_for(names[0], capture) is None
    log = headers.lone_root(names) if alone else None
    if log is not None:
        return _streamed(log, bases[0], prices=book, config=routes_from(routes, log=log.path),
                         zero_data_retention=zero_data_retention)
    group = open_group(names, lenient=lenient, max_version=max_version, routes=routes, headers=headers)
    records: list[SessionRecord | Failure] = list(_audited(group, *bases, attribution=attribution, cache=cache,
                                                           prices=book, capture=capture,
                                                           zero_data_retention=zero_data_retention))
    return GroupResult.of(group, records)


def _streamed(log: SessionLog, base: dict[str, Any], *, prices: PriceBook, config: PiRoutes | None,
              zero_data_retention: bool | None = None) -> GroupResult[SessionRecord]:
    """The record of a log that is no fork or subagent child, each request turned into its rows as
    it is replayed and accounted (:func:`dsh_audit.cache.account_log`), none kept: the same record
    as :func:`_record` over the whole session."""
    path, sid = base["path"], log.header.id
    rows, costs = RowSpool(RequestRow), RowSpool(CostRow)
    pending: dict[int, Transition] = {}  # a break whose request is not judged yet
    breaks: list[BreakRow] = []

    def transition(found: Transition) -> None:
        if found.is_break:
            pending[found.request] = found

    def row(request: Request, verdict: CacheVerdict, entry: LedgerEntry) -> None:
        rows.append(_request_row(path, request, request.time.sent if request.time else None, entry, verdict))
        costs.append(_cost_row(path, sid, entry))
        found = pending.pop(request.index, None)
        if found is not None:  # its row now, the transition (and the events it quotes) let go
            breaks.append(_break_row(path, found, verdict))

    result = account_log(log, prices=prices, config=config, on_transition=transition, on_judged=row,
                         keep=False,  # each request is turned into its rows as it is judged
                         zero_data_retention=zero_data_retention)
    item = result.items[0]
    if isinstance(item, Failure):
        return GroupResult([_failed(base, item)], result.orphans, result.ids, result.route_warnings)
    report = item[0]
    record = SessionRecord(
        **base, session_id=sid, parent_session=log.header.parent_session, format_version=log.format_version,
        event_count=log.event_count, request_count=len(rows),
        notes=(*log.warnings, *result.route_warnings.get(path, ())), attribution=True,
        cache=True, token_method=report.token_method, requests=rows,
        breaks=tuple(sorted([*breaks, *(_break_row(path, t, None) for t in pending.values())], key=lambda b: b.request)),
        costs=costs)
    return GroupResult([record], result.orphans, result.ids, result.route_warnings)


def _audited(group: SessionGroup, *bases: dict[str, Any], attribution: bool, cache: bool,
             prices: PriceBook, capture: str | None = None,
             zero_data_retention: bool | None = None) -> list[SessionRecord]:
    """The record of each given log: its error when it cannot be read, or when a capture it is
    compared with cannot be read (that log's alone: :func:`dsh_audit.attribution.attribute_opened`).
    The capture given (``capture``) is read and aligned once: attributed with, and it prices and
    judges a request whose log holds no usage, as ``cache --capture`` does (:func:`dsh_audit.cache.given_usage`)."""
    sessions = [item for item in group.given if isinstance(item, Session)]
    aligned = given_capture(sessions, capture)
    captured = given_usage(sessions, aligned)
    found = attribute_opened(group, capture=aligned or capture) if attribution else {}
    by_id = {session.id: session for session in group.sessions}
    records = []
    for base, item in zip(bases, group.given):
        if isinstance(item, Failure):
            records.append(_failed(base, item))
            continue
        attributed = found.get(item.path) if not item.imported else None
        if isinstance(attributed, Failure):
            records.append(_failed(base, attributed))
            continue
        records.append(_record(base, item, attributed, cache=cache, prices=prices,
                               zero_data_retention=zero_data_retention,
                               parent=None if item.imported else by_id.get(item.header.parent_session or ""),
                               captured=captured.get(item.id)))
    return records


def _failed(base: dict[str, Any], failure: Failure) -> SessionRecord:
    header = failure.header
    return SessionRecord(**base, session_id=failure.session_id, parent_session=header.parent_session if header else None,
                         format_version=failure.format_version, error=str(failure.error),
                         error_code=failure.error.code, notes=failure.warnings)


def _record(base: dict[str, Any], session: Session, attributed: SessionAttribution | None, *,
            cache: bool, prices: PriceBook, zero_data_retention: bool | None = None,
            parent: Session | None = None, captured: Mapping[int, Tokens] | None = None) -> SessionRecord:
    path = base["path"]
    notes = list(session.warnings)
    transitions = list(attributed.transitions) if attributed is not None else None
    report = _account(session, transitions, notes, prices, zero_data_retention, parent, captured) if cache else None
    ledger = session_ledger(session, prices=prices, cache=report, captured=captured)
    verdicts = {v.index: v for v in report.verdicts} if report is not None else {}
    times = session.times
    entries = {e.index: e for e in ledger.entries}
    rows = [_request_row(path, r, times[r.index].sent if r.index in times else None, entries[r.index],
                         verdicts.get(r.index)) for r in session.requests]
    breaks = [_break_row(path, t, verdicts.get(t.request)) for t in transitions or () if t.is_break]
    return SessionRecord(
        **base, session_id=session.id, parent_session=session.header.parent_session,
        format_version=session.format_version, event_count=session.event_count,
        request_count=len(session.requests), notes=tuple(notes), attribution=transitions is not None,
        cache=report is not None, token_method=report.token_method if report is not None else None,
        requests=tuple(rows), breaks=tuple(breaks),
        costs=tuple(_cost_row(path, session.id, e) for e in ledger.entries))
