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

import errno
import hashlib
import os
from functools import lru_cache
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import DshAuditError, MalformedRecordError, RenderError, UsageError
from ..importers import detect, load_foreign
from ..jsjson import stringify_bytes
from ..log import SUPPORTED_VERSIONS, Event, SessionHeader, SessionLog, open_regular, read_log
from ..replay import ReplayResult, Request, RequestTime, iter_requests
from ..validate import Finding as ValidationFinding
from ..validate import LineValidator
from ..wire import (DeepSeekRenderer, PiRoutes, PromptPieces, home_profiles, home_route_files, load_home_routes,
                    load_routes, make_renderer, render)
from ._attachments import ImageOverlay, attachment_store, attachment_warnings, dsh_homes_of
from ._evidence import EvidenceCollector, LogEvidence
from ._lines import EventLines
from ._route_evidence import RouteEvidence
from ._route_notes import window_conflicts
from ._routes import Route, request_provider, request_route

__all__ = ["HOME_PATCH", "PROFILE_ENV", "Activity", "Bodies", "Session", "home_routes_file", "home_routes_key",
           "open_foreign", "open_session", "route_renderer", "routes_from", "routes_hint"]

_LATEST = max(SUPPORTED_VERSIONS)
_KEPT_BODIES = 8  # per adapter: the current request, its predecessor and a few auxiliary calls


class Bodies:
    """Wire bodies rendered once per adapter, through one renderer per adapter, the last few kept.

    Consecutive requests share most of their messages, so one renderer per adapter serialises each
    shared message fragment once; every view of a session (attribution, cache accounting, capture
    diff) asks here, so a request's body is rendered at most once per adapter. A renderer that
    builds its body as a JSON value (the pi-ai ones, ``body_value``) has that value kept, not its
    bytes: the value holds the log's own texts, so a huge message is not held again; its bytes
    are written when asked for (:meth:`render`) and not kept.

    An image's bytes come from :attr:`images` (default: the log's attachment store,
    :func:`dsh_audit.session.attachment_store`), the same for every body kept; a capture's bytes
    passed to :meth:`render` are looked up first.
    """

    def __init__(self, routes: PiRoutes | None = None, images: Mapping[str, bytes] | None = None, *,
                 log: str | os.PathLike[str] | None = None) -> None:
        """``routes``: a route configuration (``--routes``) whose model facts render the pi-ai
        routes. ``images``: the image bytes by ``attachmentId`` every body takes (a capture's,
        passed to :meth:`render`, win); default: the attachment store of the log at ``log``
        (:func:`dsh_audit.session.attachment_store`: ``--attachments``, the store of the DSH home
        the log sits in, else ``$DSH_HOME``'s), or none.

        Raises:
            UsageError: ``$DSH_AUDIT_ATTACHMENTS`` names a folder that holds no store.
        """
        self._renderers: dict[str, dict[str, Any]] = {}
        self._routes = routes
        self.images: Mapping[str, bytes] | None = images if images is not None else attachment_store(log)
        self._bodies: OrderedDict[tuple[str, int, str], bytes | dict[str, Any] | DshAuditError] = OrderedDict()
        # the last few requests' DeepSeek pieces (the request held: its id stays its own), so that
        # attribution and cache accounting of one request make them once
        self._pieces: OrderedDict[tuple[str, int], tuple[Request, PromptPieces | None]] = OrderedDict()

    def render(self, request: Request, adapter: str = "deepseek", **options: Any) -> bytes:
        """The wire body ``adapter`` sends for ``request``; ``options`` as :func:`dsh_audit.wire.render`
        (a body rendered with options is not kept).

        Raises:
            RenderError: the request cannot be rendered (a tokenised header, an image DSH refuses).
            UsageError: ``adapter`` names no renderer.
        """
        cache = self._renderer_cache(adapter)
        if options:
            if self.images is not None:  # a capture's images first, then the store's
                given = options.get("images")
                options["images"] = self.images if given is None else ImageOverlay(given, self.images)
            return bytes(render(request, adapter=adapter, renderer_cache=cache, **options).body)
        found = self._kept(request, adapter)
        return found if isinstance(found, bytes) else stringify_bytes(found)

    def value(self, request: Request, adapter: str) -> dict[str, Any] | None:
        """The body of a renderer that builds it as a JSON value (pi-ai's), kept as :meth:`render`
        keeps bodies and never to be changed; None for other renderers, or when the request
        cannot be rendered.

        Raises:
            UsageError: ``adapter`` names no renderer.
        """
        if not callable(getattr(self._renderer(adapter), "body_value", None)):
            return None
        try:
            found = self._kept(request, adapter)
        except DshAuditError as exc:
            if exc.code == "usage":
                raise
            return None
        return found if isinstance(found, dict) else None

    def _kept(self, request: Request, adapter: str) -> bytes | dict[str, Any]:
        key = (adapter, request.index, request.session_id)
        found = self._bodies.get(key)
        if found is None:
            renderer = self._renderer(adapter)
            images = {} if self.images is None else {"images": self.images}  # the same for every body kept
            try:
                if request.kind != "search" and callable(getattr(renderer, "body_value", None)):
                    found = renderer.body_value(request, **images)
                else:
                    found = bytes(render(request, adapter=adapter, renderer_cache=self._renderer_cache(adapter),
                                         **images).body)
            except DshAuditError as exc:
                if exc.code == "usage":
                    raise
                found = exc
            self._bodies[key] = found
            if len(self._bodies) > _KEPT_BODIES * max(1, len(self._renderers)):
                self._bodies.popitem(last=False)
        else:
            self._bodies.move_to_end(key)
        if isinstance(found, DshAuditError):
            raise found
        return found

    def _renderer(self, adapter: str) -> Any:
        cache = self._renderer_cache(adapter)
        return cache.get(adapter) or cache.setdefault(adapter, make_renderer(adapter))

    def _renderer_cache(self, adapter: str) -> dict[str, Any]:
        cache = self._renderers.get(adapter)
        if cache is None:
            cache = self._renderers[adapter] = {}
            if self._routes is not None and adapter in ("anthropic", "openai", "responses"):
                cache[adapter] = make_renderer(adapter, models=self._routes.models)  # the route file's facts
        return cache

    def pieces(self, request: Request, adapter: str = "deepseek") -> PromptPieces | None:
        """The unjoined pieces of a DeepSeek loop body (:meth:`dsh_audit.wire.DeepSeekRenderer.prompt_pieces`),
        from the renderer every view shares; None for other adapters and kinds, or when the
        request cannot be rendered."""
        key = (adapter, id(request))
        found = self._pieces.get(key)
        if found is not None and found[0] is request:
            return found[1]
        renderer = self._renderer(adapter)
        if not isinstance(renderer, DeepSeekRenderer):
            return None
        try:
            pieces = renderer.prompt_pieces(request)
        except DshAuditError:
            pieces = None
        self._pieces[key] = (request, pieces)
        if len(self._pieces) > _KEPT_BODIES:
            self._pieces.popitem(last=False)
        return pieces

    def body(self, request: Request, adapter: str = "deepseek") -> bytes | None:
        """:meth:`render`, or None when the request cannot be rendered."""
        try:
            return self.render(request, adapter)
        except DshAuditError as exc:
            if exc.code == "usage":
                raise
            return None


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
        title: the session's latest ``session/title`` (None when it has none).
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


#: DSH's home-level user patch layer, ``$DSH_HOME/cordis.patch.yml`` (``apps/cli/src/profile-boot.ts``
#: ``homePatchPath``; ``PROFILE_PATCH_FILENAME``, ``packages/boot/app-boot/src/profile.ts``).
HOME_PATCH = "cordis.patch.yml"
#: The environment variable naming the DSH profile the sessions ran under (a CLI ``--profile NAME``
#: would set it for the command, as ``--attachments`` sets its own, so worker processes see it).
PROFILE_ENV = "DSH_AUDIT_PROFILE"
#: The bytes of a home patch layer hashed into an index's options (a route file is read no further).
_HASHED = (1 << 20) + 1


def home_routes_file(log: str | os.PathLike[str]) -> str | None:
    """DSH's home patch layer (``<home>/cordis.patch.yml``) of the DSH home the log at ``log`` sits
    in (:func:`dsh_homes_of`), when there is one; it may hold no route configuration."""
    for home in dsh_homes_of(log):
        try:
            os.stat(home / HOME_PATCH)
        except OSError as exc:
            # DSH skips only a layer that is not there (loadOptionalPatches: ENOENT); any other
            # failure (a symlink loop, no permission) is this file's error, reported when it is read
            if exc.errno in (errno.ENOENT, errno.ENOTDIR):
                continue
        return str(home / HOME_PATCH)
    return None


def routes_hint(log: str | os.PathLike[str], hint: str) -> str:
    """A render refusal's ``hint`` that asks for ``--routes FILE`` (a route the log does not
    describe), with the other place a route configuration is read from when no ``--routes`` is
    given: the patch layer of the DSH home the log was recorded in (``<home>/cordis.patch.yml``,
    named when the log sits in one). Any other hint is left as it is. Every view that renders
    (``render``, ``diff``, ``check``) says it so, when it was not given ``--routes``.

    Example:
        >>> routes_hint("rec/sessions/p/s/session.jsonl", "pass --routes FILE (the route configuration)")
        'pass --routes FILE (the route configuration), or declare the route in rec/cordis.patch.yml (the patch layer of the DSH home the log was recorded in, read when no --routes is given)'
        >>> routes_hint("logs/session.jsonl", "pass --routes FILE (the route configuration)")
        'pass --routes FILE (the route configuration), or record the log in a DSH home (<home>/sessions/...) and declare the route in <home>/cordis.patch.yml, read when no --routes is given'
    """
    if "--routes FILE" not in hint:
        return hint
    homes = dsh_homes_of(log)
    if not homes:
        return (f"{hint}, or record the log in a DSH home (<home>/sessions/...) and declare the route in "
                f"<home>/{HOME_PATCH}, read when no --routes is given")
    layer = os.path.join(os.path.relpath(homes[0]) if not os.path.isabs(log) else homes[0], HOME_PATCH)
    return (f"{hint}, or declare the route in {layer} (the patch layer of the DSH home the log was recorded "
            "in, read when no --routes is given)")


def home_routes_key(log: str | os.PathLike[str]) -> str | None:
    """A short hash of the text of the log's home patch layer (:func:`home_routes_file`), which an
    index keeps with the log's row so that an edit of it re-audits the log; None without one."""
    digest = hashlib.sha256(os.environ.get(PROFILE_ENV, "").strip().encode("utf-8", "surrogatepass") + b"\0")
    profile = os.environ.get(PROFILE_ENV, "").strip() or None
    files = [path for home in dsh_homes_of(log) for path in home_route_files(home, profile=profile)]
    if not files:
        return None
    for path in files:
        digest.update(path.encode("utf-8", "surrogatepass") + b"\0")
        try:
            with open_regular(path, what="route file") as handle:
                digest.update(handle.read(_HASHED))
        except (OSError, DshAuditError):  # reading it for the audit reports why
            digest.update(b"unreadable")
    return "home:" + digest.hexdigest()[:16]


def routes_from(path: str | None, *, log: str | os.PathLike[str] | None = None,
                profile: str | None = None) -> PiRoutes | None:
    """The route configuration at ``path`` (``--routes``; read once per process); without one, the
    one DSH composed under the DSH home the log at ``log`` sits in (:func:`dsh_audit.wire.load_home_routes`:
    the profile's patch layer, the home's, then the settings document's ``llm-pi-ai`` section),
    ``profile`` naming the profile the session ran under (the log does not record it); else None.
    Re-read when one of those files changes (:func:`dsh_audit.wire.home_route_files`).

    Raises:
        UsageError: a file cannot be read or declares a route DSH would refuse.
    """
    if path is not None:
        return _route_file(path)
    if profile is None:
        profile = os.environ.get(PROFILE_ENV, "").strip() or None  # --profile sets it for the command
    for home in dsh_homes_of(log) if log is not None else ():
        files = home_route_files(home, profile=profile)
        if files or (profile is None and home_profiles(home)):  # too many profiles to read: say so
            return _home_routes(os.fspath(home), profile, tuple((f, _stamp(f)) for f in files))
        if profile is not None:  # no layer to read: a profile the home does not have is refused all the same
            load_home_routes(home, profile=profile)
    return None


def _stamp(path: str) -> tuple[int, int]:
    try:
        info = os.stat(path)
    except OSError:
        return (-1, -1)
    return (info.st_mtime_ns, info.st_size)


@lru_cache(maxsize=8)
def _home_routes(home: str, profile: str | None, files: tuple[tuple[str, tuple[int, int]], ...]) -> PiRoutes | None:
    return load_home_routes(home, profile=profile)


@lru_cache(maxsize=8)
def _route_file(path: str) -> PiRoutes:
    return load_routes(path)


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
            raise RenderError(f"{kind}: {route.because}", seq=request.first_chunk_seq)
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


def open_foreign(path: str, *, lenient: bool = False) -> Session | None:
    """Another agent's session (Claude Code, Codex) when an importer recognises the file."""
    chosen = detect(path)
    if chosen in (None, "dsh"):
        return None
    imported = load_foreign(path, format=chosen)
    raw = {"type": "imported", "format": imported.format, "id": imported.session_id}
    header = SessionHeader(id=imported.session_id, version=0, created_at=imported.created_at or 0,
                           cwd=imported.cwd, raw=raw)
    times = {i: RequestTime(*t) for i, t in imported.times().items()}
    return Session(path=path, header=header, format=imported.format, format_version=0, lenient=lenient,
                   requests=list(imported.requests), result=ReplayResult(notes=list(imported.notes)),
                   evidence=LogEvidence(imported.session_id), warnings=list(imported.warnings), times_given=times)


def validator(path: str, *, lenient: bool, max_version: int) -> LineValidator:
    """The validation rules for the log at ``path``, to run in its one read (``read_log``'s ``tee``)."""
    return LineValidator(path, lenient=lenient, max_version=max_version)


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
    try:
        log = read_log(path, lenient=lenient, max_version=max_version, tee=checker)
    except MalformedRecordError as exc:
        found = open_foreign(path, lenient=lenient) if foreign and exc.line == 1 else None
        if found is None:
            raise
        found.validation = validation(checker)
        return found
    session = read_events(log, watch=watch)
    session.validation = validation(checker)
    return session


def read_events(log: SessionLog, *, watch: frozenset[str] = frozenset(),
                on_request: Callable[[Request], None] | None = None, keep: bool = True) -> Session:
    """The :class:`Session` of a log whose header is read: its events, read once, then the log is
    closed (so a ``tee`` it was read with has seen the whole file).

    Args:
        log: the opened log.
        watch: child session ids whose first mention in this log dates their spawn.
        on_request: called with each request as soon as it is replayed (a view that needs each
            request once, in replay order, and keeps only what it makes of it).
        keep: keep the requests in :attr:`Session.requests`; without, the session holds none of
            them (nor their messages), so its memory stays bounded by the live surface.

    Raises:
        DshAuditError: DSH would refuse the log (the reader's own error, located at the log).
    """
    evidence = LogEvidence(log.header.id)
    collector = EvidenceCollector(evidence, watch)
    routes = RouteEvidence()
    activity = Activity(log.header)

    def observe(event: Event) -> None:
        collector.on_event(event)
        routes.on_event(event)
        activity.on_event(event)

    result = ReplayResult()
    requests: list[Request] = []
    try:
        for request in iter_requests(log, result, observe=observe):
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


class RequestSpan:
    """The first send and the last answer (else send) of requests, folded as they come: the span
    of a log whose own timestamps say nothing (:meth:`Session.span`)."""

    def __init__(self) -> None:
        self.first: float | None = None
        self.last: float | None = None

    def add(self, time: RequestTime | None) -> None:
        if time is None:
            return
        done = time.done if time.done is not None else time.sent
        self.first = time.sent if self.first is None else min(self.first, time.sent)
        self.last = done if self.last is None else max(self.last, done)


class Activity:
    """The session's title, the span of its own timestamps and each event's line, folded from the
    events of its one pass (:meth:`on_event`: an ``observe`` of :func:`dsh_audit.replay.iter_requests`)."""

    def __init__(self, header: SessionHeader) -> None:
        self.lines = EventLines()
        created = header.created_at / 1000 if isinstance(header.created_at, (int, float)) and header.created_at > 0 else None
        self.first: float | None = created
        self.last: float | None = created
        self.title: str | None = None

    def on_event(self, event: Event) -> None:
        self.lines.add(event.seq, event.line)
        if isinstance(event.time, (int, float)) and not isinstance(event.time, bool) and event.time > 0:
            when = event.time / 1000
            self.first = when if self.first is None else min(self.first, when)
            self.last = when if self.last is None else max(self.last, when)
        if event.type == "session/title" and isinstance(event.data, dict):
            title = event.data.get("title")
            if isinstance(title, str) and title:
                self.title = title
