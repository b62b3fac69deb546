"""What a log says about each provider's adapter (:class:`RouteEvidence`), collected during a
session's one pass: replay envelopes, logged context windows, and each title or compaction call's
own route context and default effort.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..log import Event

__all__ = ["RouteEvidence"]


@dataclass
class RouteEvidence:
    """What the log says about each provider's adapter, collected during the session's one pass.

    Besides the replay envelopes it keeps the context windows DSH logged (``request/context``
    ``{provider, model, contextWindow}``, written from the model pi-ai resolved for the call) and,
    for each title call and each compaction call, the latest context of the call's own route before
    it: DSH logs no ``request/context`` for either (a compaction's in-force context is the loop's,
    another route's when the summary ran on a configured ``summarizationProvider``), yet pi-ai
    resolved its model the same way, so the route's logged window is the one it used. For the same
    calls it keeps the route's default effort as the log shows it: a ``request/header`` of that
    route and model whose ``adapterDefaults.reasoningEffort`` marks ``reasoningEffort`` as the
    adapter's default (DSH's ``resolveCallFor`` materialises that same default for a call that
    names no effort; ``llm/src/index.ts``).
    """

    #: provider id -> (api, seq of the first message that shows it)
    seen: dict[str, tuple[str, int]] = field(default_factory=dict)
    #: (provider, model) -> (api, seq of the first message of that model that shows it): on a route
    #: whose models speak several APIs, one model's envelope says nothing of another's
    seen_models: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)
    #: as :attr:`seen` and :attr:`seen_models`, from ``finish`` chunks (used where no message shows
    #: the route: an attempt whose message is not, or not yet, in the log)
    finished: dict[str, tuple[str, int]] = field(default_factory=dict)
    finished_models: dict[tuple[str, str], tuple[str, int]] = field(default_factory=dict)
    #: (provider, model) -> {logged contextWindow: seq of the first request/context with it}
    windows: dict[tuple[str, str], dict[int, int]] = field(default_factory=dict)
    #: title or compaction call seq -> the latest request/context of its route before it
    aux_contexts: dict[int, dict[str, Any]] = field(default_factory=dict)
    #: title or compaction call seq -> the latest default effort a header of its route logged
    aux_efforts: dict[int, str] = field(default_factory=dict)
    #: every provider id a header, a title call or a compaction summary routed a call by
    providers: set[str] = field(default_factory=set)
    _latest: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict, repr=False)
    _defaults: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)

    #: the event types :meth:`on_event` reads, besides ``assistant/chunk`` (a ``finish``)
    TYPES: ClassVar[frozenset[str]] = frozenset({
        "request/context", "request/header", "session/title-llm-request", "compaction/summary", "assistant/message"})

    def on_event(self, event: Event) -> None:
        if not isinstance(event.data, dict):
            return
        if event.type == "request/context":
            self._on_context(event.seq, event.data)
        elif event.type == "request/header":
            self._on_header(event.data.get("header"))
        elif event.type == "session/title-llm-request":
            route = event.data.get("route")
            self._on_aux(event.seq, _route_key(route) if isinstance(route, dict) else None)
        elif event.type == "compaction/summary":
            self._on_aux(event.seq, _route_key(event.data))
        elif event.type == "assistant/message":
            self._on_message(event)
        elif event.type == "assistant/chunk":
            self._on_finish(event)

    def _on_header(self, header: Any) -> None:
        config = header.get("config") if isinstance(header, dict) else None
        marks = header.get("adapterDefaults") if isinstance(header, dict) else None
        key = _route_key(config) if isinstance(config, dict) else None
        provider = config.get("provider") if isinstance(config, dict) else None
        if isinstance(provider, str):
            self.providers.add(provider)
        effort = config.get("reasoningEffort") if isinstance(config, dict) else None
        if key is not None and isinstance(marks, dict) and marks.get("reasoningEffort") is True \
                and isinstance(effort, str):
            self._defaults[key] = effort

    def _on_aux(self, seq: int, key: tuple[str, str] | None) -> None:
        if key is None:
            return
        self.providers.add(key[0])
        if key in self._latest:
            self.aux_contexts[seq] = self._latest[key]
        if key in self._defaults:
            self.aux_efforts[seq] = self._defaults[key]

    def release(self, seq: int) -> None:
        """Drop what was kept for the title or compaction call at ``seq``: a streamed view calls
        this once no later rendering can lend it (a whole session keeps every call's)."""
        self.aux_contexts.pop(seq, None)
        self.aux_efforts.pop(seq, None)

    def _on_context(self, seq: int, data: dict[str, Any]) -> None:
        key = _route_key(data)
        if key is None:
            return
        self._latest[key] = data
        window = data.get("contextWindow")
        if isinstance(window, int) and not isinstance(window, bool) and window > 0:
            self.windows.setdefault(key, {}).setdefault(window, seq)

    def _on_message(self, event: Event) -> None:
        message = event.data.get("message")
        source = message.get("source") if isinstance(message, dict) else None
        if not isinstance(source, dict) or source.get("kind") != "model":
            return
        provider, model = source.get("provider"), source.get("model")
        if not isinstance(provider, str):
            return
        state = source.get("replayState")
        response = state.get("response") if isinstance(state, dict) else None
        if isinstance(response, dict) and response.get("kind") == "pi-ai":
            api = response.get("api")
            if isinstance(api, str):
                self._saw(provider, model, api, event.seq)
        elif state is None:
            self._saw(provider, model, "deepseek-chat-completions", event.seq)

    def _on_finish(self, event: Event) -> None:
        """A ``finish`` chunk with pi-ai's replay envelope (DSH ``llm-pi-ai/src/stream.ts``: the
        successful ``finish`` carries it, spec §8.2): the envelope names its route and model. A
        finish without one proves nothing (a native finish and a failed pi-ai attempt look alike)."""
        chunk = event.data.get("chunk")
        if not isinstance(chunk, dict) or chunk.get("type") != "finish":
            return
        state = chunk.get("replayState")
        response = state.get("response") if isinstance(state, dict) else None
        if not isinstance(response, dict) or response.get("kind") != "pi-ai":
            return
        provider, model, api = response.get("provider"), response.get("model"), response.get("api")
        if isinstance(provider, str) and isinstance(api, str):
            self.finished.setdefault(provider, (api, event.seq))
            if isinstance(model, str):
                self.finished_models.setdefault((provider, model), (api, event.seq))

    def _saw(self, provider: str, model: Any, api: str, seq: int) -> None:
        self.seen.setdefault(provider, (api, seq))
        if isinstance(model, str):
            self.seen_models.setdefault((provider, model), (api, seq))

    def shown(self, provider: str, model: str | None) -> tuple[tuple[str, int] | None, tuple[str, int] | None]:
        """What the log shows of ``provider``'s adapter: (the API shown for ``model`` itself, the
        API shown for the provider by any of its models), each as (api, seq) or None; a message
        wins over a ``finish`` chunk."""
        key = (provider, model) if model is not None else None
        own = (self.seen_models.get(key) or self.finished_models.get(key)) if key is not None else None
        return own, self.seen.get(provider) or self.finished.get(provider)

    def lend_context(self, request: Any) -> None:
        """Give a title or compaction call what the log shows of its own route before it: the
        context as ``extra["routeContext"]`` (what the pi-ai renderers read when the request's own
        ``context`` is missing or names another route) and the route's default effort as
        ``extra["routeDefaultEffort"]``."""
        kind = getattr(request, "kind", None)
        extra = getattr(request, "extra", None)
        if kind not in ("title", "compaction") or not isinstance(extra, dict):
            return
        seq = getattr(request, "first_chunk_seq", -1)
        found = self.aux_contexts.get(seq)
        if found is not None and "routeContext" not in extra and (kind == "compaction"
                                                                  or getattr(request, "context", None) is None):
            extra["routeContext"] = found
        effort = self.aux_efforts.get(seq)
        if effort is not None and "routeDefaultEffort" not in extra:
            extra["routeDefaultEffort"] = effort


def _route_key(data: Mapping[str, Any]) -> tuple[str, str] | None:
    provider, model = data.get("provider"), data.get("model")
    return (provider, model) if isinstance(provider, str) and isinstance(model, str) else None

