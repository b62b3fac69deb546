"""The call config DSH hands to pi-ai (DSH's side of ``llm-pi-ai/src/adapter.ts``, spec §8.2): the
model with the context window and cap the log shows, which effort reaches pi-ai and how pi-ai
clamps it, what the adapter refuses (:func:`request_call`), and a compaction call's instruction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..errors import RenderError
from ._piai_catalog import resolve_model
from ._piai_facts import PI_MAX_REQUEST_IMAGE_BYTES, THINKING_LEVELS, PiModel, RouteProfile

__all__ = ["PiCall", "clamp_level", "compaction_messages", "request_call"]

#: The end of the hint of a request the pi-ai adapter refuses: the option that renders it in
#: another wire format (``--adapter``, whose help lists the formats).
_FORCE = "force another wire format with --adapter"


def _logged_window(request: Any, model: PiModel) -> PiModel:
    """``model`` with the context window DSH logged for this call, when the log has one.

    DSH's pi-ai adapter writes ``request/context {provider, model, contextWindow}`` from the model
    pi-ai resolved for the call (``llm-pi-ai/src/adapter.ts``: ``contextWindow:
    resolvedModel.contextWindow``), so a route that overrides a catalog model's window (a 16000-token
    route) is visible in the log even without the route configuration. Only a context that names
    the same route and model counts. It wins over a route file (``--routes``): the logged value is
    what DSH used at the time, the route file is the configuration as it is now (the session
    reports a conflict, :func:`dsh_audit.session.window_conflicts`). A title call logs no context
    of its own, and a compaction summarised on another route (``summarizationProvider``) has only
    the loop's; the latest one of its own route before it is lent to it (``extra["routeContext"]``,
    :meth:`dsh_audit.session.RouteEvidence.lend_context`).
    """
    extra = getattr(request, "extra", None)
    for context in (getattr(request, "context", None),
                    extra.get("routeContext") if isinstance(extra, Mapping) else None):
        if not isinstance(context, Mapping):
            continue
        if context.get("provider") != model.provider or context.get("model") != model.id:
            continue  # a compaction summarised on another route: its own route's context, if lent
        window = context.get("contextWindow")
        if not isinstance(window, int) or isinstance(window, bool) or window <= 0 or window == model.context_window:
            return model
        return replace(model, context_window=window)
    return model


def _logged_cap(header: Mapping[str, Any], model: PiModel) -> PiModel:
    """``model`` with the output cap a route configured for it, when the header proves it.

    DSH materialises a call's ``maxTokens`` from the route only when the route's model entry names
    one (``llm-pi-ai/src/catalog.ts:875-881``: that value is both ``model.maxTokens`` and the
    ``configuredMaxTokens`` default, ``adapter.ts:268-275``), and then logs
    ``adapterDefaults.maxTokens: true`` (``llm/src/index.ts`` ``resolveCallFor``). Such a header's
    ``maxTokens`` is therefore the model's cap, which pi-ai's budget clamp reads
    (``simple-options.js:46``), for every call on the same route and model, even without the route
    configuration.
    """
    defaults, config = header.get("adapterDefaults"), header["config"]
    cap = config.get("maxTokens")
    if not isinstance(defaults, Mapping) or defaults.get("maxTokens") is not True \
            or not isinstance(cap, int) or isinstance(cap, bool) or cap <= 0 or cap == model.max_tokens \
            or config.get("provider") != model.provider or config.get("model") != model.id:
        return model
    return replace(model, max_tokens=cap)


@dataclass(frozen=True, slots=True)
class PiCall:
    """The stream options DSH passes to ``streamSimple`` (spec §8.2), for one request."""

    model: PiModel
    reasoning: str | None
    max_tokens: int | None
    temperature: float | None
    cache_retention: str
    session_id: str | None
    thinking_budgets: Mapping[str, int] | None
    headers: tuple[tuple[str, str], ...] = ()
    max_request_image_bytes: int = PI_MAX_REQUEST_IMAGE_BYTES


def request_call(request: Any, *, models: Mapping[tuple[str, str], PiModel] | None = None,
                 profile_reasoning: str | None = None, cache_retention: str | None = None,
                 thinking_budgets: Mapping[str, int] | None = None) -> PiCall:
    """Resolve the model and DSH's stream options for ``request`` (adapter.ts ``stream``).

    Each setting is taken, first match wins, from what the log records, then the caller's explicit
    choice (``profile_reasoning``, ``cache_retention``, ``thinking_budgets``), then the route
    file's profile (:attr:`PiModel.profile`), then pi-ai's default. The effort: the header's
    ``reasoningEffort``; for a title or compaction call (which names none, so DSH's
    ``resolveCallFor`` materialises the route's default) the default a header of the same route
    and model logged as ``adapterDefaults.reasoningEffort`` (``extra["routeDefaultEffort"]``, lent
    by :meth:`dsh_audit.session.RouteEvidence.lend_context`); then the profile's ``reasoning``.

    Raises:
        RenderError: ``stop`` is set (``UNSUPPORTED_OPTION``), or the effort is not one the
            model supports (``UNSUPPORTED_REASONING_EFFORT``), or the model is unknown.
    """
    header = request.header
    if not isinstance(header, Mapping) or not isinstance(header.get("config"), Mapping):
        raise RenderError("no request/header before this request, so there is no call config to render",
                          seq=request.first_chunk_seq)
    config: Mapping[str, Any] = header["config"]
    if request.kind == "compaction":
        # The summarizer builds its own options: the logged route and cap, no effort/temperature/stop.
        logged = request.extra
        config = {"provider": logged.get("provider") or config.get("provider"),
                  "model": logged.get("model") or config.get("model"),
                  **({"maxTokens": logged["maxTokens"]} if logged.get("maxTokens") is not None else {})}
    # A refusal is the header's (its config names the route and sets the option), or the request's
    # when no header of its own does (a title call's synthetic header): its seq; a command adds
    # the line.
    seq = request.config_seq
    try:
        resolved = resolve_model(config.get("provider"), config.get("model"), models)
    except RenderError as exc:
        exc.seq = seq if exc.seq is None else exc.seq
        raise
    model = _logged_cap(header, _logged_window(request, resolved))
    if config.get("stop") is not None:
        raise RenderError("llm-pi-ai does not support a stop option", dsh_code="UNSUPPORTED_OPTION", seq=seq,
                          hint=f"DSH's pi-ai adapter refuses it too; if DSH sent the request on another route, "
                               f"--routes FILE (DSH's llm-pi-ai route configuration) names its api, or {_FORCE}")
    profile = model.profile or RouteProfile()
    effort = config.get("reasoningEffort") or _logged_default_effort(request) or profile_reasoning \
        or profile.reasoning
    if effort is not None and effort not in model.supported_levels():
        raise RenderError(f"pi-ai model {model.provider}/{model.id} does not support reasoning effort "
                          f"{effort!r}", dsh_code="UNSUPPORTED_REASONING_EFFORT", seq=seq,
                          hint=f"DSH's pi-ai adapter refuses it too, unless the route offers the level: declare "
                               f"it in the model's reasoningEfforts (providers.{model.provider}.models[]"
                               f".reasoningEfforts) in the file given as --routes FILE, or {_FORCE}")
    # Loop, title and compaction calls all pass the session id (title-llm index.ts, summarizer.ts).
    session_id = request.session_id or None
    return PiCall(model=model, reasoning=None if effort in (None, "off") else effort,
                  max_tokens=config.get("maxTokens"), temperature=config.get("temperature"),
                  cache_retention=cache_retention or profile.cache_retention or "short", session_id=session_id,
                  thinking_budgets=thinking_budgets if thinking_budgets is not None else profile.thinking_budgets,
                  headers=profile.headers,
                  max_request_image_bytes=profile.max_request_image_bytes or PI_MAX_REQUEST_IMAGE_BYTES)


def clamp_level(model: PiModel, level: str) -> str:
    """pi-ai ``clampThinkingLevel`` (``models.js:404-422``), which ``streamSimple`` applies to the
    effort: the level when supported, else the nearest supported one, upwards first."""
    available = model.supported_levels()
    if level in available:
        return level
    if level not in THINKING_LEVELS:
        return available[0] if available else "off"
    index = THINKING_LEVELS.index(level)
    for candidate in (*THINKING_LEVELS[index:], *reversed(THINKING_LEVELS[:index])):
        if candidate in available:
            return candidate
    return available[0] if available else "off"


def _logged_default_effort(request: Any) -> str | None:
    """The route's default effort as the log shows it, for a call that names no effort."""
    if getattr(request, "kind", None) not in ("title", "compaction"):
        return None  # a loop header without an effort is one DSH resolved no default for
    extra = getattr(request, "extra", None)
    found = extra.get("routeDefaultEffort") if isinstance(extra, Mapping) else None
    return found if isinstance(found, str) else None


def compaction_messages(request: Any, instruction: str | None) -> tuple[dict[str, Any], ...]:
    """The instruction message a compaction call appends to its region (empty for other kinds).

    Raises:
        RenderError: a compaction request without the instruction text (it is not logged).
    """
    if request.kind != "compaction":
        return ()
    if instruction is None:
        raise RenderError("a compaction request ends with DSH's fixed compaction instruction, which the log "
                          "does not record", seq=request.first_chunk_seq,
                          hint="give --compaction-instruction FILE, DSH's compaction instruction text (diff and "
                               "check take it from the captured body; from Python: compaction_instruction=)")
    return ({"role": "user", "content": [{"type": "text", "text": instruction}], "source": {"kind": "user"}},)
