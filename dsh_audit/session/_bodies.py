"""Wire bodies of a session's requests, rendered once per adapter and shared by every view."""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .._lazy import LazyModule
from ..errors import DshAuditError, RenderError
from ..jsjson import stringify_bytes
from ..replay import Request
from ._attachments import ImageOverlay, attachment_store
from ._routes import ADAPTER_APIS

if TYPE_CHECKING:
    from .. import wire
    from ..wire import PiRoutes, PromptPieces
else:
    wire = LazyModule("dsh_audit.wire")  # loaded by the first body rendered (`requests` renders none)

__all__ = ["Bodies"]


_KEPT_BODIES = 8  # per adapter: the current request, its predecessor and a few auxiliary calls
_PI_ADAPTERS = frozenset(ADAPTER_APIS.values())  # the renderers of pi-ai's APIs, which a route file gives facts


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
            return bytes(wire.render(request, adapter=adapter, renderer_cache=cache, **options).body)
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
                    found = bytes(wire.render(request, adapter=adapter, renderer_cache=self._renderer_cache(adapter),
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
        return cache.get(adapter) or cache.setdefault(adapter, wire.make_renderer(adapter))

    def _renderer_cache(self, adapter: str) -> dict[str, Any]:
        cache = self._renderers.get(adapter)
        if cache is None:
            cache = self._renderers[adapter] = {}
            if self._routes is not None and adapter in _PI_ADAPTERS:
                cache[adapter] = wire.make_renderer(adapter, models=self._routes.models)  # the route file's facts
        return cache

    def header_refusal(self, request: Request, adapter: str | None) -> RenderError | None:
        """Why pi-ai sends no ``request`` for its headers alone (a session id or route profile header
        fetch cannot send, a blank ``x-api-key``), located at its header as rendering it says: the log
        and the route configuration prove it without a capture. ``adapter``: the request's renderer,
        or the pi-ai API its route speaks (as a priced entry names the route,
        :attr:`dsh_audit.cache.LedgerEntry.route`). None when the headers are sent, for a request no
        pi-ai renderer sends (another adapter, no known route, a web-search call), and for one refused
        before its headers (the pi-ai renderers' ``header_refusal``). Each call config's
        headers are built once, by the renderer every view of the session shares."""
        adapter = ADAPTER_APIS.get(adapter, adapter) if adapter is not None else None
        if adapter not in _PI_ADAPTERS or request.kind == "search":
            return None
        refusal: RenderError | None = self._renderer(adapter).header_refusal(request)
        return refusal

    def pieces(self, request: Request, adapter: str = "deepseek") -> PromptPieces | None:
        """The unjoined pieces of a DeepSeek loop body (:meth:`dsh_audit.wire.DeepSeekRenderer.prompt_pieces`),
        from the renderer every view shares; None for other adapters and kinds, or when the
        request cannot be rendered."""
        key = (adapter, id(request))
        found = self._pieces.get(key)
        if found is not None and found[0] is request:
            return found[1]
        renderer = self._renderer(adapter)
        if not isinstance(renderer, wire.DeepSeekRenderer):
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
