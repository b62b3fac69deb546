"""``render`` and ``render_all``: dispatch requests to the registered adapter renderers."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..jsjson import stringify_bytes
from ..replay import Request
from ._registry import make_renderer
from ._types import Renderer, WireRequest

__all__ = ["render", "render_all", "search_wire"]


def search_wire(request: Request) -> WireRequest:
    """A web-search call: DSH logs its body literally, so its bytes are that body's JSON.

    The endpoint is the logged one (``path``); the search plugin's HTTP headers are not logged.
    """
    body = request.extra.get("body")
    endpoint = request.extra.get("endpoint")
    return WireRequest(adapter="deepseek-web-search", method="POST",
                       path=endpoint if isinstance(endpoint, str) else "",
                       headers=(("content-type", "application/json"),), body=stringify_bytes(body))


def render(request: Request, *, adapter: str = "deepseek",
           renderer_cache: dict[str, Renderer] | None = None, **options: Any) -> WireRequest:
    """Render one request as ``adapter`` sends it.

    Args:
        request: a request from :func:`dsh_audit.replay.replay`.
        adapter: a name in :data:`ADAPTERS`.
        renderer_cache: a dict kept across calls; the adapter's renderer is created in it once
            and reused, so fragments shared by consecutive requests render once. Put a
            configured renderer in it (``{"deepseek": DeepSeekRenderer(version=...)}``) to
            change renderer settings.
        **options: per-request options of that adapter's ``render`` (for DeepSeek:
            ``compaction_instruction``, ``compaction_effort``, ``images``, ``offloaded_image_text``).

    Raises:
        RenderError: the request cannot be rendered (see the adapter's renderer).
        UsageError: unknown adapter.

    Example:
        >>> cache = {}
        >>> bodies = [render(r, renderer_cache=cache).body for r in loop_requests]  # doctest: +SKIP
    """
    if request.kind == "search":
        return search_wire(request)
    cache = renderer_cache if renderer_cache is not None else {}
    renderer = cache.get(adapter)
    if renderer is None:
        renderer = cache[adapter] = make_renderer(adapter)
    return renderer.render(request, **options)


def render_all(requests: Iterable[Request], adapter: str = "deepseek", **options: Any) -> Iterator[WireRequest]:
    """Render every request in order through one shared renderer (O(log + output) in total).

    ``options`` are passed to each ``render`` call; errors propagate at the request that fails.
    """
    cache: dict[str, Renderer] = {}
    for request in requests:
        yield render(request, adapter=adapter, renderer_cache=cache, **options)
