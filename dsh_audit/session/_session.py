"""The trunk of every command: one session log, opened once and read in one pass.

:func:`open_session` opens a log through one registry of formats (DSH v0-v4 by the reader;
Claude Code and Codex through :mod:`dsh_audit.importers`, sniffed once when the first line is not
a DSH header) and reads it once: replay folds the events into requests (each carrying its send and
answer time) while an :class:`~dsh_audit.session.EvidenceCollector` keeps, from the same events,
what attribution quotes. Every view (attribution, cache accounting, diff, gate, report, index) is a
function over the resulting :class:`Session`; none of them opens the file again.

A request's wire body is rendered through the session (:meth:`Session.body`), once per adapter,
with one renderer per adapter shared by every view, so message fragments common to consecutive
requests are serialised once. The last few bodies are kept; memory stays bounded by the live
surface, not by the number of requests.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._lazy import LazyModule
from ..errors import DamagedLogError, DshAuditError, MalformedRecordError, RenderError, UsageError
from ..log import SUPPORTED_VERSIONS, Event, SessionHeader, SessionLog, read_log
from ..replay import ReplayResult, Request, RequestTime, iter_requests
from ._activity import Activity, RequestSpan
from ._attachments import attachment_warnings
from ._bodies import Bodies
from ._evidence import EvidenceCollector, LogEvidence
from ._lines import EventLines
from ._route_evidence import RouteEvidence
from ._route_notes import window_conflicts
from .._usage_rule import request_provider
from ._routes import Route, request_route

if TYPE_CHECKING:
    from .. import importers
    from .. import validate as rules
    from ..importers import ImportedSession
    from ..validate import Finding as ValidationFinding
    from ..validate import LineValidator
    from ..wire import PiRoutes
else:
    # a DSH log read without validation loads neither the validation rules nor the importers of
    # other agents' logs (start-up of `requests`, issue 11); the paths that use them import them here
    importers = LazyModule("dsh_audit.importers")
    rules = LazyModule("dsh_audit.validate")

__all__ = ["Session", "evidence_observer", "open_foreign", "open_session", "opened_log", "read_events", "route_apis", "route_renderer",
           "session_of", "validation", "validator"]

_LATEST = max(SUPPORTED_VERSIONS)


@dataclass(eq=False)
class Session:
    """One session log after its single read.

    Attributes:
        path: the file read.
        header: the session header (for an imported log, a synthetic one whose ``raw`` is
            ``{"type": "imported", "format": ...}``).
        format: ``dsh``, ``claude-code`` or ``codex``.
        format_version: the DSH log format version (0 for imported logs).
        lenient: whether header leniency was used.
        requests: every request, in replay order (``index`` order).
        result: replay's side findings (replacements, skipped steps, notes, event count).
        evidence: the events attribution quotes (empty for imported logs).
        warnings: torn tails, dropped damaged records, importer warnings.
        upgrades: the legacy and version upgrades applied, counted.
        title: the session's latest ``session/title`` (None when it has none); an imported log's,
            the title its agent gives it (:attr:`~dsh_audit.importers.ImportedSession.title`).
        first_time, last_time: the log's earliest and latest own timestamps (the header's
            ``createdAt`` and event times), in seconds since the epoch; None when unknown.
        validation: the findings of every validation rule (:func:`dsh_audit.validate.validate`'s,
            identical), found in the same pass when the log was opened with ``validate``; else None.
    """

    path: str
    header: SessionHeader
    format: str
    format_version: int
    lenient: bool
    requests: list[Request]
    result: ReplayResult
    evidence: LogEvidence
    warnings: list[str] = field(default_factory=list)
    upgrades: Counter[str] = field(default_factory=Counter)
    routes: RouteEvidence = field(default_factory=RouteEvidence)
    config: PiRoutes | None = field(default=None, repr=False)
    lines: EventLines = field(default_factory=lambda: EventLines(), repr=False)
    times_given: dict[int, RequestTime] | None = field(default=None, repr=False)
    bodies: Bodies = field(default_factory=Bodies, repr=False)
    title: str | None = None
    first_time: float | None = None
    last_time: float | None = None
    validation: list[ValidationFinding] | None = field(default=None, repr=False)

    @property
    def id(self) -> str:
        return self.header.id

    @property
    def session_id(self) -> str:
        return self.header.id

    @property
    def imported(self) -> bool:
        """Whether the log came through an importer (no DSH events to cite)."""
        return self.format != "dsh"

    @property
    def event_count(self) -> int:
        return self.result.event_count

    @property
    def times(self) -> dict[int, RequestTime]:
        """Request index -> when it was sent and answered (requests without times omitted)."""
        if self.times_given is not None:
            return self.times_given
        return {r.index: r.time for r in self.requests if r.time is not None}

    def span(self) -> tuple[float | None, float | None]:
        """The first and last of the log's own timestamps (seconds since the epoch): the header's
        ``createdAt`` and event times, or for an imported log its requests' send and answer
        times; ``(None, None)`` when it records none."""
        if self.first_time is not None:
            return self.first_time, self.last_time
        span = RequestSpan()
        for time in self.times.values():
            span.add(time)
        return span.first, span.last

    def loops(self) -> list[Request]:
        """The loop requests in first-chunk order."""
        return sorted((r for r in self.requests if r.kind == "loop"), key=lambda r: r.first_chunk_seq)

    def line_of(self, seq: int | None) -> int | None:
        """The physical line (1 is the header) of the event ``seq``, recorded in the one pass."""
        return self.lines.get(seq)

    def use_routes(self, routes: PiRoutes | None) -> None:
        """Take a route configuration (``--routes``): its declared routes decide requests' routes,
        and its model facts render them."""
        self.config = routes
        self.bodies = Bodies(routes, self.bodies.images)
        self.warnings.extend(self.route_conflicts())  # the log's own window wins over the file's

    def route_conflicts(self) -> list[str]:
        """Where this log contradicts the route configuration it took (``--routes``, or its DSH
        home's layers: :func:`routes_from`): one warning per route/model whose logged context
        window differs from the configuration's (the log's is used), naming where the configuration
        came from; first, when it is its DSH home's and routes a request of it, which files those
        are: a :class:`dsh_audit.session.RouteNote`, which every command says as a ``note:``, once a
        run, and JSON outputs list among notes (:func:`dsh_audit.session.window_conflicts`)."""
        found = attachment_warnings(self.bodies.images)
        if self.config is None:
            return found
        routed = {request_provider(r) for r in self.requests}
        return found + list(self.config.notes) + window_conflicts(self.routes, self.config, providers=routed)

    def route(self, request: Request, *, forced: str | None = None,
              declared: Mapping[str, str] | PiRoutes | None = None) -> Route:
        """The route ``request`` went out by: the adapter that sent it and why we know
        (:func:`dsh_audit.session.route_for` with this log's evidence and route configuration,
        whose messages name the file a route came from)."""
        return request_route(request, self.routes, forced=forced,
                             declared=declared if declared is not None else self.config)

    def body(self, request: Request, adapter: str | None = None) -> bytes | None:
        """The wire body ``adapter`` (default: the request's route) sends for ``request``, rendered
        once and shared by every view; None when it cannot be rendered or its route is unknown."""
        adapter = adapter or self.route(request).adapter
        return None if adapter is None else self.bodies.body(request, adapter)


def route_renderer(sessions: Iterable[Session], *, adapter: str = "auto",
                   declared: Mapping[str, str] | None = None) -> Callable[[Request, dict[str, Any]], bytes]:
    """``render(request, options) -> body`` for requests of ``sessions``, each through its own
    route (``adapter="auto"``) or the one forced, rendered once and shared with the other views.

    Raises (from the returned function):
        RenderError: the request's route is unknown (the reason names the option that settles it),
            or the adapter cannot render it.
    """
    by_id = {s.id: s for s in sessions}

    def run(request: Request, options: dict[str, Any]) -> bytes:
        session = by_id[request.session_id]
        route = session.route(request, forced=None if adapter == "auto" else adapter, declared=declared)
        if route.adapter is None:
            kind = "a known route with no wire format" if route.no_wire_format else "unknown route"
            # at the header whose config names the route (else the first chunk), as render says it
            seq = request.config_seq
            raise RenderError(f"{kind}: {route.because}", seq=seq)
        return session.bodies.render(request, route.adapter, **options)

    return run


def route_apis(sessions: Iterable[Session], *, adapter: str = "auto",
               declared: Mapping[str, str] | None = None) -> Callable[[Request], str | None]:
    """``api(request)``: the wire API of each request's route (as :func:`route_renderer` takes it),
    None when the route is unknown; capture pairing matches a captured send by it.

    Example:
        >>> route_apis([])  # doctest: +ELLIPSIS
        <function route_apis.<locals>.api at ...>
    """
    by_id = {s.id: s for s in sessions}

    def api(request: Request) -> str | None:
        route = by_id[request.session_id].route(request, forced=None if adapter == "auto" else adapter,
                                                 declared=declared)
        return route.api if route.adapter is not None else None

    return api


def load_foreign(path: str, *, format: str | None = None) -> ImportedSession:
    """:func:`dsh_audit.importers.load_foreign`, the importers loaded by the first foreign log read
    (a DSH log loads none of them)."""
    return importers.load_foreign(path, format=format)


def open_foreign(path: str, *, lenient: bool = False) -> Session | None:
    """Another agent's session (Claude Code, Codex) when an importer recognises the file."""
    chosen = importers.detect(path)
    if chosen in (None, "dsh"):
        return None
    imported = load_foreign(path, format=chosen)
    raw = {"type": "imported", "format": imported.format, "id": imported.session_id}
    header = SessionHeader(id=imported.session_id, version=0, created_at=imported.created_at or 0,
                           cwd=imported.cwd, raw=raw)
    times = {i: RequestTime(*t) for i, t in imported.times().items()}
    return Session(path=path, header=header, format=imported.format, format_version=0, lenient=lenient,
                   requests=list(imported.requests), result=ReplayResult(notes=list(imported.notes)),
                   evidence=LogEvidence(imported.session_id), warnings=list(imported.warnings), times_given=times,
                   title=imported.title)


def validator(path: str, *, lenient: bool, max_version: int) -> LineValidator:
    """The validation rules for the log at ``path``, to run in its one read (``read_log``'s ``tee``)."""
    return rules.LineValidator(path, lenient=lenient, max_version=max_version)


def validation(checker: LineValidator | None) -> list[ValidationFinding] | None:
    """The findings of ``checker`` once the read fed it the whole log; None without a checker, or
    when no line could be read (the file could not be opened: :func:`dsh_audit.validate.validate`
    raises that error)."""
    return checker.finish() if checker is not None and checker.complete else None


def open_session(source: str | os.PathLike[str] | SessionLog, *, lenient: bool = False,
                 max_version: int = _LATEST, watch: frozenset[str] = frozenset(),
                 foreign: bool = True, validate: bool = False) -> Session:
    """Open one log and read it once: requests, evidence, times and usage together.

    Args:
        source: a log file, or a :class:`SessionLog` whose header is read but whose events are not
            (a group opener reads every header first, then each log's events once).
        lenient: header leniency (tokenised test fixtures), see :func:`dsh_audit.log.read_log`.
        max_version: the newest DSH format version to read.
        watch: child session ids whose first mention in this log dates their spawn.
        foreign: also try the Claude Code and Codex importers when the file is not a DSH log.
        validate: also run every validation rule over the lines of the same read
            (:attr:`Session.validation`); ``source`` must then be a path.

    Raises:
        DshAuditError: the log cannot be read, or DSH would refuse it (the reader's own error).
        UsageError: ``validate`` with a :class:`SessionLog` (its lines are already being read).

    Example:
        >>> session = open_session("sample_logs/chat/session.jsonl")
        >>> [r.kind for r in session.requests]
        ['title', 'loop', 'loop']
    """
    if isinstance(source, SessionLog):
        if validate:
            raise UsageError("open_session(validate=True) needs a path, not an opened log",
                             hint="read_log(path, tee=LineValidator(path)) validates in the log's own read")
        return read_events(source, watch=watch)
    path = os.fspath(source)
    checker = validator(path, lenient=lenient, max_version=max_version) if validate else None
    return session_of(path, opened_log(path, lenient=lenient, max_version=max_version, checker=checker),
                      lenient=lenient, watch=watch, foreign=foreign, checker=checker)


def opened_log(path: str, *, lenient: bool, max_version: int,
               checker: LineValidator | None) -> SessionLog | DshAuditError:
    """The log at ``path`` with its header read and its events not yet (``checker`` fed the lines
    read), or the error that stopped its reading: :func:`session_of` says what that error means."""
    try:
        return read_log(path, lenient=lenient, max_version=max_version, tee=checker)
    except DshAuditError as exc:
        return exc


def _first_line(error: DshAuditError) -> bool:
    """Whether the reader refused the very first line (the file may be another agent's log)."""
    return isinstance(error, MalformedRecordError) and error.line == 1


def session_of(path: str, opened: SessionLog | DshAuditError, *, lenient: bool,
               watch: frozenset[str] = frozenset(), foreign: bool = True, checker: LineValidator | None = None,
               on_request: Callable[[Request], None] | None = None, keep: bool = True) -> Session:
    """The session of a log :func:`opened_log` opened: its events read once (:func:`read_events`),
    or, when its very first line was refused and ``foreign``, another agent's log an importer reads;
    with the findings of ``checker``, which the read fed.

    Raises:
        DshAuditError: the reader's error (with ``foreign``, the importers' when none reads the
            file), or the error that stopped reading the events.
    """
    if isinstance(opened, SessionLog):
        found = read_events(opened, watch=watch, on_request=on_request, keep=keep, checker=checker)
    elif (foreign and _first_line(opened) and not isinstance(opened, DamagedLogError)  # sniffed already: no importer
          and (imported := open_foreign(path, lenient=lenient)) is not None):
        found = imported
        if on_request is not None:
            for request in found.requests:
                on_request(request)
        if not keep:
            found.requests = []
    else:
        raise importers.no_importer(opened) if foreign and _first_line(opened) else opened
    found.validation = validation(checker)
    return found


def evidence_observer(collector: EvidenceCollector, routes: RouteEvidence,
                      every: Callable[[Event], None] | None = None) -> Callable[[Event], None]:
    """One ``observe`` (:func:`dsh_audit.replay.iter_requests`) that hands each event to the folds
    that read it: ``every`` (if given) every event; the evidence collector and the route evidence
    the types they dispatch on (their ``TYPES``), the collector also every event with a surface
    operation (and every event while it watches for mentions), and both a chunk only when it is a
    ``finish``: the only chunks either reads, and chunks are most of every log. Each fold ends as
    when it is handed every event."""
    on_collector, on_routes = collector.on_event, routes.on_event
    collector_types, route_types, watching = EvidenceCollector.TYPES, RouteEvidence.TYPES, bool(collector.watch)

    def observe(event: Event) -> None:
        if every is not None:
            every(event)
        etype = event.type
        if etype == "assistant/chunk":
            # a finish chunk: data["chunk"]["type"] == "finish" read in one go (JSON data: a subscript
            # of anything but an object with those keys raises, and is no finish)
            try:
                finish = event.data["chunk"]["type"] == "finish"
            except (KeyError, TypeError):
                finish = False
            if finish:
                on_collector(event)
                on_routes(event)
            elif watching or event.surface_op is not None:
                on_collector(event)
            return
        if watching or etype in collector_types or event.surface_op is not None:
            on_collector(event)
        if etype in route_types:
            on_routes(event)

    return observe


def read_events(log: SessionLog, *, watch: frozenset[str] = frozenset(),
                on_request: Callable[[Request], None] | None = None, keep: bool = True,
                checker: LineValidator | None = None) -> Session:
    """The :class:`Session` of a log whose header is read: its events, read once, then the log is
    closed (so a ``tee`` it was read with has seen the whole file).

    Args:
        log: the opened log.
        watch: child session ids whose first mention in this log dates their spawn.
        on_request: called with each request as soon as it is replayed (a view that needs each
            request once, in replay order, and keeps only what it makes of it).
        keep: keep the requests in :attr:`Session.requests`; without, the session holds none of
            them (nor their messages), so its memory stays bounded by the live surface.
        checker: the validation rules ``log`` is read with (``read_log``'s ``tee``), if any: replay
            folds into their surface fold, and they take the events it folded instead of admitting
            them again (:meth:`~dsh_audit.validate.LineValidator.shared_fold`).

    Raises:
        DshAuditError: DSH would refuse the log (the reader's own error, located at the log).
    """
    evidence = LogEvidence(log.header.id)
    collector = EvidenceCollector(evidence, watch)
    routes = RouteEvidence()
    activity = Activity(log.header)
    fold = checker.shared_fold() if checker is not None else None

    observe = evidence_observer(collector, routes, activity.on_event)

    result = ReplayResult()
    requests: list[Request] = []
    try:
        for request in iter_requests(log, result, observe=observe, fold=fold):
            if on_request is not None:
                on_request(request)
            if keep:
                requests.append(request)
    except DshAuditError as exc:
        raise exc.located(path=log.path) from None
    finally:
        log.close()
    return Session(path=log.path, header=log.header, format="dsh", format_version=log.format_version,
                   lenient=log.lenient, requests=requests, result=result, evidence=evidence, routes=routes,
                   warnings=list(log.warnings), upgrades=log.upgrades, title=activity.title,
                   first_time=activity.first, last_time=activity.last, lines=activity.lines,
                   bodies=Bodies(log=log.path))
