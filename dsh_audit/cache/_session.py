"""One session in, one :class:`SessionCacheReport` out: its requests, times and breaks, accounted."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from ..attribution import (SessionAttribution, Transition, attribute, attribute_log, attribute_opened,
                           attribute_sessions)
from ..capture import AlignedCapture, capture_for
from ..errors import DshAuditError
from ..log import Event, SessionLog
from ..replay import Request, SurfaceFold
from ..session import (Bodies, Failure, GroupResult, Headers, Route, RouteEvidence, Session, SessionGroup,
                       attachment_warnings, open_group, open_session, request_provider, request_route, routes_from,
                       window_conflicts)
from ..wire import PiRoutes
from ._account import CacheAccount, ParentRequest, analyze_cache
from ._captured_usage import given_capture, given_usage
from ._causes import attribution_causes
from ._report import CacheVerdict, SessionCacheReport
from ._ledger import LedgerEntry, LedgerTotals, SessionLedger, price_entry, session_ledger
from ._money import Tokens
from ._prices import PriceBook, load_prices

__all__ = ["account_alone", "account_log", "account_taken", "accounted", "cache_group", "cache_report", "ledger_group",
           "lone_roots", "session_transitions"]


def session_transitions(session: Session, parent: Session | None = None) -> list[Transition] | None:
    """Every transition attribution finds in ``session`` (a child compared with ``parent`` when
    given), or None when it has no DSH events to cite."""
    if session.imported:
        return None
    try:
        if parent is None or parent.imported:
            return list(attribute(session).transitions)
        return list(attribute_sessions([session, parent])[0].transitions)
    except DshAuditError:  # attribution is evidence for the cache report, which stands alone
        return None


def _parent_request(session: Session, parent: Session | None, transitions: Iterable[Any] | None,
                    *, wire: bool = True) -> tuple[dict[int, ParentRequest], list[str]]:
    """The request of ``parent`` whose cache a fork or subagent child ``session`` continues (by
    the index of the child's request that continues it), and what the report notes about it.

    It is the one attribution compares the child's first request with (a transition whose
    ``previous_session_id`` is the parent's: the parent's last loop request inside the fork's
    seed, or before it first mentions a subagent); without an attribution, a fork child's is
    found by the same rule (the parent's last loop request before ``seedLength``). A child whose
    parent log was not read continues no request: its note says so.
    """
    parent_id = None if session.imported else session.header.parent_session
    if not parent_id:
        return {}, []
    if parent is None or parent.id != parent_id:
        return {}, [f"parent session {parent_id} was not read: the first request is compared with no "
                      "earlier request (give the parent's log too, or keep it beside the child's)"]
    by_index = {r.index: r for r in parent.requests}
    found: Request | None = None
    relation, child = "fork", None
    for transition in transitions or ():
        previous, index = getattr(transition, "previous", None), getattr(transition, "request", None)
        if getattr(transition, "previous_session_id", None) == parent.id and isinstance(previous, int) \
                and isinstance(index, int):
            found, child = by_index.get(previous), index
            relation = str(getattr(transition, "relation", None) or relation)
            break
    seed = session.header.seed_length
    if found is None and transitions is None and seed:  # no attribution: a fork's rule, as attribution's
        loops = [r for r in parent.requests if r.kind == "loop" and r.first_chunk_seq < seed]
        mine = [r for r in session.requests if r.kind == "loop"]
        if loops and mine:
            found = max(loops, key=lambda r: r.first_chunk_seq)
            child = min(mine, key=lambda r: r.first_chunk_seq).index
    if found is None or child is None:
        why = "without attribution only a fork child is paired with its parent's request" \
            if transitions is None and not seed else "no request of this log continues one of its requests"
        return {}, [f"parent session {parent_id} was read, but {why}: none is compared with the parent's"]
    inherited = ParentRequest(found, parent.times.get(found.index), parent.bodies if wire else None,
                              parent.route(found).adapter)
    return {child: inherited}, [f"request {child} continues request {found.index} of parent session {parent.id} "
                                f"({relation}): its expected cache read is measured against that request "
                                "(its source_index)"]


def cache_report(source: Session | str | os.PathLike[str], *, lenient: bool = False, max_version: int | None = None,
                 attribution: Iterable[Any] | str | None = "auto", unit: int | None = None,
                 tokenizer: str = "auto", wire: bool = True, prices_path: str | None = None,
                 prices: PriceBook | None = None, zero_data_retention: bool | None = None,
                 parent: Session | None = None, captured: Mapping[int, Tokens] | None = None) -> SessionCacheReport:
    """Account for the prefix cache of one session.

    Args:
        source: a :class:`~dsh_audit.session.Session` (read once, shared with the other views) or a
            ``session.jsonl[.zstd]`` file (opened here).
        lenient: accept headers DSH refuses only for their metadata (tokenised fixtures).
        max_version: the newest log format version to read (default: every released one).
        attribution: ``"auto"`` (the session's own attribution), ``None`` (every break
            ``unattributed``) or an iterable of transitions.
        unit: DeepSeek cache unit override (default 128 from the rules data).
        tokenizer: ``auto``, ``exact`` or ``estimate``.
        wire: compare rendered wire bodies when possible (the session's bodies, rendered once).
        prices_path: a price file (JSON or TOML) over the packaged table and pyproject's
            ``[tool.dsh-audit.prices]`` (:func:`dsh_audit.cache.load_prices`).
        prices: a loaded price table (wins over ``prices_path``).
        zero_data_retention: the organization's OpenAI Zero Data Retention status (None: as the
            nearest ``pyproject.toml``'s ``[tool.dsh-audit.cache]`` states it, else not stated).
        parent: the parent session of a fork or subagent child, read in the same run: the child's
            first request is then judged against the parent's request it continues (the one
            attribution compares it with), as a next request of the same conversation. Without
            it the child's first request is compared with nothing, and the report notes that the
            parent was not read (a log is never opened here but ``source``).
        captured: request index -> the tokens the captured response to its send reports
            (:func:`dsh_audit.cache.captured_usage`), which price a request whose log holds no usage,
            and judge its cache (:func:`dsh_audit.cache.analyze_cache`'s ``captured``).

    Raises:
        DshAuditError: the log cannot be read or replayed.

    Example:
        >>> report = cache_report("session.jsonl")  # doctest: +SKIP
        >>> report.actual_total, report.expected_total  # doctest: +SKIP
        (67648, 67584)
    """
    if isinstance(source, Session):
        session = source
    else:
        options: dict[str, Any] = {"lenient": lenient}
        if max_version is not None:
            options["max_version"] = max_version
        session = open_session(source, **options)
    if prices is None:
        prices = load_prices(prices_path)
    given = session_transitions(session, parent) if attribution == "auto" else attribution
    if given is not None and not isinstance(given, list):
        given = list(given)  # read twice: the parent's request, then each break
    parents, notes = _parent_request(session, parent, given, wire=wire)
    report = analyze_cache(session.requests, times=session.times, attribution=given, unit=unit,
                           tokenizer=tokenizer, bodies=session.bodies if wire else None, wire=wire, prices=prices,
                           price_note=prices.note, routes=lambda request: session.route(request).adapter,
                           path=session.path, session_id=session.id, zero_data_retention=zero_data_retention,
                           parents=parents, captured=captured)
    ledger = session_ledger(session, prices=prices, cache=report, captured=captured)
    return replace(report, cost=ledger.summary(), imported=session.imported, notes=(*report.notes, *notes),
                   captured_usage=ledger.captured_usage)


def accounted(group: SessionGroup, *, attribution: bool = True, capture: str | os.PathLike[str] | None = None,
              found: Mapping[str, SessionAttribution | Failure] | None = None,
              captured: Mapping[str, Mapping[int, Tokens]] | None = None,
              aligned: AlignedCapture | None = None,
              **options: Any) -> Iterator[tuple[Session | Failure, SessionCacheReport | DshAuditError | None]]:
    """Each given log of an opened group with its cache report (``options`` as :func:`cache_report`;
    breaks attributed as ``dsh-audit breaks`` does, a child with its parent, each log compared with
    ``capture`` or the capture found beside it: :func:`dsh_audit.attribution.attribute_opened`):
    None for a log that could not be read (its :class:`Failure`), the error for one whose
    accounting failed (a bad ``--prices`` file or tokenizer choice, or a capture it is compared
    with that cannot be read: that log's alone), so each view decides what that log becomes. A fork
    or subagent child whose parent the group read is judged against the parent's request it
    continues (:func:`cache_report`'s ``parent``).

    ``found``: the group's attribution when the caller made it already (log path -> attribution or
    the :class:`Failure` of a log whose capture cannot be read,
    :func:`~dsh_audit.attribution.attribute_opened`'s), so it is not made twice (``dsh-audit breaks
    --cost`` lists it): then only the logs it holds are accounted, and each other log is given with
    None (an imported log, which attribution refuses).

    ``captured``: session id -> :func:`cache_report`'s ``captured`` (default: the usage of the
    capture given, :func:`dsh_audit.cache.given_usage`), which prices the requests whose log holds none.
    ``aligned``: that capture read and aligned once (:func:`dsh_audit.cache.given_capture`; default:
    here, when it is read), which both the pricing and the attribution take, so neither reads it again.
    """
    given_found = found is not None
    sessions = [item for item in group.given if isinstance(item, Session)]
    if aligned is None and (captured is None or (found is None and attribution)):
        aligned = given_capture(sessions, capture)
    captured = captured if captured is not None else given_usage(sessions, aligned)
    found = found if found is not None else \
        attribute_opened(group, capture=aligned or capture) if attribution else {}  # the one read and alignment
    by_id = {session.id: session for session in group.sessions}
    for item in group.given:
        if isinstance(item, Failure) or (given_found and item.path not in found):
            yield item, None
            continue
        given = found.get(item.path)
        if isinstance(given, Failure):  # a capture it is compared with cannot be read: this log's error
            yield item, given.error
            continue
        parent = None if item.imported or not item.header.parent_session else by_id.get(item.header.parent_session)
        try:
            yield item, cache_report(item, attribution=list(given.transitions) if given else None, parent=parent,
                                     captured=captured.get(item.id), **options)
        except DshAuditError as exc:
            yield item, exc


def cache_group(paths: Sequence[str | os.PathLike[str]], *, lenient: bool = False, max_version: int = 4,
                attribution: bool = True, unit: int | None = None, tokenizer: str = "auto", wire: bool = True,
                prices_path: str | None = None, prices: PriceBook | None = None,
                routes: str | None = None, capture: str | os.PathLike[str] | None = None,
                on_verdict: Callable[[str, CacheVerdict], None] | None = None,
                zero_data_retention: bool | None = None) -> GroupResult[SessionCacheReport]:
    """Cache reports of a group of neighbouring logs, each read once, a fork or subagent child
    attributed with its parent (so its breaks are those ``dsh-audit breaks`` lists), each log
    compared with ``capture`` (``--capture``) or the capture found beside it, as ``dsh-audit
    check`` compares it (:func:`dsh_audit.capture.find_capture`).

    A task of :func:`dsh_audit.session.run_groups`; options as :func:`cache_report`, with
    ``attribution`` False for every break ``unattributed``. With ``on_verdict`` (in this process),
    a log accounted while it is replayed hands it each verdict, with the log's path, as it is
    judged, and its report keeps none (only their totals); other logs' reports keep theirs.
    """
    headers = Headers(lenient=lenient, max_version=max_version)
    streamed = account_alone(paths, headers, prices=prices, prices_path=prices_path, routes=routes, unit=unit,
                             tokenizer=tokenizer, wire=wire, capture=capture, on_verdict=on_verdict,
                             zero_data_retention=zero_data_retention) if attribution else None
    if streamed is not None:
        return _pick(streamed, 0)
    group = open_group(paths, lenient=lenient, max_version=max_version, routes=routes, headers=headers)
    items: list[SessionCacheReport | Failure] = []
    for item, report in accounted(group, attribution=attribution, capture=capture, unit=unit, tokenizer=tokenizer,
                                  wire=wire, prices_path=prices_path, prices=prices,
                                  zero_data_retention=zero_data_retention):
        if isinstance(item, Failure):
            items.append(item)
        elif isinstance(report, DshAuditError):  # a bad --prices file or tokenizer choice: this log's error
            items.append(Failure(item.path, report, tuple(item.warnings), item.id))
        elif report is not None:
            items.append(report)
    return GroupResult.of(group, items)


def account_log(log: SessionLog, *, prices: PriceBook, config: PiRoutes | None = None, unit: int | None = None,
                tokenizer: str = "auto", wire: bool = True, adapter: str | None = "auto",
                on_transition: Callable[[Transition], None] | None = None,
                on_judged: Callable[[Request, CacheVerdict, LedgerEntry], None] | None = None,
                observe: Callable[[Event], None] | None = None, keep: bool = True,
                zero_data_retention: bool | None = None, fold: SurfaceFold | None = None,
                own: bool = True) -> GroupResult[tuple[SessionCacheReport, SessionLedger]]:
    """A log that is no fork or subagent child (:meth:`dsh_audit.session.Headers.lone_root`) and
    has no capture (its attribution reads the log alone), attributed and accounted while it is replayed: each request is judged once attribution has its
    transition (the transitions come in first-chunk order, requests are judged in replay order, as
    :func:`cache_report` judges them) and priced, and none is kept. The same report and ledger as
    :func:`cache_report` and :func:`session_ledger` over the whole session
    (``tests/test_attribution_stream.py`` compares them on every root corpus log); the log's
    :class:`Failure` when DSH refuses it. Options as :func:`cache_report`.

    ``adapter`` is attribution's (:func:`dsh_audit.attribution.attribute_log`). ``on_transition``
    sees each transition as attribution finds it; ``on_judged`` each request with its verdict and
    priced entry, in replay order, for a view that turns them into its own rows as they come
    (``dsh-audit index``, ``check``); ``observe`` every event as it is read. With ``keep=False``
    the report holds no verdict and the ledger no entry, only their totals (for a view that needs
    nothing else of them per request, or takes each one from ``on_judged``): nothing of a request
    outlives its turn. ``fold``: the validation rules' surface fold, which replay shares
    (:func:`dsh_audit.attribution.attribute_log`'s). ``own``: the log's own warnings (a torn tail,
    a dropped record) lead its :attr:`GroupResult.route_warnings`, as
    :func:`dsh_audit.session.route_warnings` gives them (``check``, whose findings they are, asks
    without). The log is closed at the end."""
    path, sid = log.path, log.header.id
    try:
        bodies, evidence = Bodies(config, log=path), RouteEvidence()
    except BaseException:  # a store that cannot be used ($DSH_AUDIT_ATTACHMENTS): the log is closed too
        log.close()
        raise
    declared = config  # its messages name the file a route came from
    causes: dict[int, str] = {}
    routed: dict[int, Route] = {}  # the request being judged -> its route: found once, for its verdict and entry
    account = CacheAccount(causes=causes, unit=unit, tokenizer=tokenizer, bodies=bodies if wire else None,
                           prices=prices, routes=lambda request: routed[request.index].adapter,
                           path=path, session_id=sid, keep=keep, zero_data_retention=zero_data_retention)
    entries: list[LedgerEntry] = []
    totals = LedgerTotals()
    pending: deque[Request] = deque()
    known: set[int] = set()
    providers: set[str | None] = set()  # what the requests were routed by: the route notes' (Session.route_conflicts)

    def judge(request: Request) -> None:
        route = routed[request.index] = request_route(request, evidence, declared=declared)
        providers.add(request_provider(request))
        try:
            verdict = account.add(request, request.time)
        finally:
            del routed[request.index]
        entry = price_entry(request, prices, verdict, sent=request.time.sent if request.time else None,
                            route=route.api or route.adapter, quoted=account.quoted(request))
        if keep:
            entries.append(entry)
        totals.add(entry)
        if on_judged is not None:
            on_judged(request, verdict, entry)

    try:
        for transition in attribute_log(log, adapter=adapter, bodies=bodies, routes=evidence, config=config,
                                        tap=pending.append, observe=observe, fold=fold):
            if on_transition is not None:
                on_transition(transition)
            causes.update(attribution_causes([transition]))
            known.add(transition.request)
            while pending and pending[0].index in known:
                known.discard(pending[0].index)
                judge(pending.popleft())
        while pending:
            judge(pending.popleft())
    except DshAuditError as exc:  # DSH refuses the log: its Failure, as reading it whole gives
        return GroupResult([Failure(path, exc.located(path=path), tuple(log.warnings), sid, log.header,
                                    log.format_version)])
    finally:
        log.close()
    ledger = SessionLedger(path, sid, tuple(entries), prices.to_json(), totals=totals)
    report = replace(account.report(), cost=ledger.summary())
    warnings = (tuple(log.warnings) if own else ()) + tuple(attachment_warnings(bodies.images)) + \
        (tuple(config.notes) + tuple(window_conflicts(evidence, config, providers=providers))
         if config is not None else ())
    return GroupResult([(report, ledger)], [], {sid: path}, {path: warnings} if warnings else {})


def account_alone(paths: Sequence[str | os.PathLike[str]], headers: Headers, *, prices: PriceBook | None,
                  prices_path: str | None = None, routes: str | None = None, unit: int | None = None,
                  tokenizer: str = "auto", wire: bool = True, capture: str | os.PathLike[str] | None = None,
                  on_verdict: Callable[[str, CacheVerdict], None] | None = None,
                  zero_data_retention: bool | None = None, keep: bool = True,
                  on_transition: Callable[[Transition], None] | None = None,
                  on_judged: Callable[[Request, CacheVerdict, LedgerEntry], None] | None = None,
                  observe: Callable[[Event], None] | None = None,
                  ) -> GroupResult[tuple[SessionCacheReport, SessionLedger]] | None:
    """:func:`account_log` for a group that is one log with no parent and no capture (``capture``
    given, or one found beside it) (its header read by ``headers``, then handed over); None for any
    other group (read whole, with ``headers``, and compared with its capture). A price table
    (``prices``, else loaded from ``prices_path``) or route file that cannot be read is the log's
    :class:`Failure`. ``keep``, ``on_transition``, ``on_judged`` and ``observe`` as :func:`account_log`'s;
    ``on_verdict`` hands each verdict over with the log's path, and keeps none (``on_judged`` is
    then not called)."""
    if capture_for(paths[0], capture) is not None:
        return None
    log = headers.lone_root(paths)
    if log is None:
        return None
    return account_taken(log, prices=prices, prices_path=prices_path, routes=routes, unit=unit, tokenizer=tokenizer,
                         wire=wire, on_verdict=on_verdict, zero_data_retention=zero_data_retention, keep=keep,
                         on_transition=on_transition, on_judged=on_judged, observe=observe)


def lone_roots(paths: Sequence[str | os.PathLike[str]], headers: Headers, *,
               capture: str | os.PathLike[str] | None = None) -> list[str]:
    """The logs of a group that :func:`account_taken` accounts as they are read, each alone, the same
    as reading the group whole would: DSH logs (their headers read by ``headers``, which keeps them)
    with no parent, whose session no log of the group names as its parent, given once and compared
    with no capture (``capture`` given, or one found beside it). None of them when a log of the group
    names a parent the group does not hold (reading it whole looks for that parent beside it, and
    for the parent's ancestors, which may be among them)."""
    names = [os.fspath(path) for path in paths]
    ids = [headers.ids(name) for name in names]
    given = {sid for sid, _parent in ids}
    parents = {parent for _sid, parent in ids if parent is not None}
    if not parents <= given:
        return []
    return [name for name, (sid, parent) in zip(names, ids)
            if parent is None and sid is not None and sid not in parents and names.count(name) == 1
            and isinstance(headers.get(name), SessionLog) and capture_for(name, capture) is None]


def account_taken(log: SessionLog, *, prices: PriceBook | None, prices_path: str | None = None,
                  routes: str | None = None, unit: int | None = None, tokenizer: str = "auto", wire: bool = True,
                  on_verdict: Callable[[str, CacheVerdict], None] | None = None,
                  zero_data_retention: bool | None = None, keep: bool = True,
                  on_transition: Callable[[Transition], None] | None = None,
                  on_judged: Callable[[Request, CacheVerdict, LedgerEntry], None] | None = None,
                  observe: Callable[[Event], None] | None = None,
                  ) -> GroupResult[tuple[SessionCacheReport, SessionLedger]]:
    """:func:`account_log` of a log handed over (:meth:`dsh_audit.session.Headers.take`: one of
    :func:`lone_roots`), its prices and routes loaded as :func:`account_alone` loads them (options as
    its); a price table or route file that cannot be read is the log's :class:`Failure`."""
    try:
        book = prices if prices is not None else load_prices(prices_path)
        config = routes_from(routes, log=log.path)
    except DshAuditError as exc:  # a bad --prices or --routes file: this log's error, as reading it whole gives
        log.close()
        return GroupResult([Failure(log.path, exc, tuple(log.warnings), log.header.id)])
    if on_verdict is not None:
        path, hand = log.path, on_verdict
        keep = False

        def on_judged(_request: Request, verdict: CacheVerdict, _entry: LedgerEntry) -> None:
            hand(path, verdict)

    return account_log(log, config=config, unit=unit, tokenizer=tokenizer, wire=wire, prices=book, keep=keep,
                       on_transition=on_transition, on_judged=on_judged, observe=observe,
                       zero_data_retention=zero_data_retention)


def _pick(result: GroupResult[tuple[SessionCacheReport, SessionLedger]], at: int) -> GroupResult[Any]:
    """The group's result with each item's report (``at`` 0) or ledger (1)."""
    items = [item if isinstance(item, Failure) else item[at] for item in result.items]
    return GroupResult(items, result.orphans, result.ids, result.route_warnings)


def ledger_group(paths: Sequence[str | os.PathLike[str]], *, prices: PriceBook, lenient: bool = False,
                 max_version: int = 4, breaks: bool = True, unit: int | None = None, tokenizer: str = "auto",
                 wire: bool = True, routes: str | None = None, capture: str | os.PathLike[str] | None = None,
                 zero_data_retention: bool | None = None) -> GroupResult[SessionLedger]:
    """Ledgers of a group of neighbouring logs (a task of :func:`dsh_audit.session.run_groups`),
    each read once; with ``breaks``, each request's cache verdict (a child attributed with its
    parent and compared with ``capture`` or the one found beside it, as ``cache`` does) prices what
    its breaks lost. ``routes``: a route configuration file, as for :func:`cache_group` (its
    retention changes a body's cache TTL and write rate); ``zero_data_retention`` as for :func:`cache_report`."""
    headers = Headers(lenient=lenient, max_version=max_version)
    streamed = account_alone(paths, headers, prices=prices, routes=routes, unit=unit, tokenizer=tokenizer,
                             wire=wire, capture=capture, zero_data_retention=zero_data_retention) if breaks else None
    if streamed is not None:
        return _pick(streamed, 1)
    group = open_group(paths, lenient=lenient, max_version=max_version, routes=routes, headers=headers)
    items: list[SessionLedger | Failure] = []
    sessions = [item for item in group.given if isinstance(item, Session)]
    aligned = given_capture(sessions, capture)  # read and aligned once: priced, and attributed with
    captured = given_usage(sessions, aligned)
    pairs = accounted(group, capture=capture, unit=unit, tokenizer=tokenizer, wire=wire, prices=prices,
                      zero_data_retention=zero_data_retention, captured=captured, aligned=aligned) if breaks else \
        ((item, None) for item in group.given)  # without breaks, no cache report is made
    for item, report in pairs:
        if isinstance(item, Failure):
            items.append(item)
            continue
        try:
            if isinstance(report, DshAuditError):
                raise report
            items.append(session_ledger(item, prices=prices, cache=report, captured=captured.get(item.id)))
        except DshAuditError as exc:
            items.append(Failure(item.path, exc, tuple(item.warnings), item.id))
    return GroupResult.of(group, items)
