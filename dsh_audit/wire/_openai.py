"""pi-ai's OpenAI chat-completions rendering (``POST {baseURL}/chat/completions``) of a DSH request.

Models pi-ai **0.82.1** ``api/openai-completions.js`` (``streamSimple``, ``buildParams``,
``convertMessages``, ``convertTools``, ``detectCompat``/``getCompat``, ``createClient``) under
``openai`` 6.26.0, as DSH 0.1.0-rc.8's ``llm-pi-ai`` adapter drives it (spec §8.2, §8.3). The shared
context conversion lives in :mod:`dsh_audit.wire._piai_context`, ``transformMessages`` in
:mod:`dsh_audit.wire._piai_transform`, their assembly in :mod:`dsh_audit.wire._piai`; this
endpoint's compat detection is in :mod:`dsh_audit.wire._openai_compat`, its ``convertMessages`` in
:mod:`dsh_audit.wire._openai_messages`, the other body fields in :mod:`dsh_audit.wire._openai_fields`.

Body, in key order: ``model``, ``messages``, ``stream: true``, ``prompt_cache_key`` /
``prompt_cache_retention`` (official OpenAI URL or long retention only), ``stream_options``,
``store: false`` (standard endpoints), ``max_completion_tokens`` or ``max_tokens``,
``temperature``, ``tools`` (``strict: false`` unless unsupported; ``[]`` when history has tool
calls but the request no tools), then the reasoning fields of the compat ``thinkingFormat``, then
the provider-routing fields (``provider``, ``providerOptions``). A ``cacheControlFormat:
anthropic`` endpoint also gets Anthropic-style ``cache_control`` on the system message, the last
tool and the last message with text.

Verified byte for byte against ``corpus/live-pi/c3-openai-compat`` (5 loop requests and the title
request, a hand-declared route at an unknown URL with no compat overrides): the compat detection for
an unknown URL (``developer`` role, ``store: false``, ``max_completion_tokens``, bare
``reasoning_effort``, no ``prompt_cache_key``), ``content: null`` on tool-call-only turns,
``reasoning_content`` named by the thinking signature, ``strict: false``, tool-message key order,
no ``reasoning_effort`` on the title, and the header set (credential withheld). Not captured but
checked against pi-ai 0.82.1's own output for synthetic sessions (``tests/data/piai_oracle``): every
``thinkingFormat`` branch, Anthropic-style ``cache_control``, ``|`` and over-long tool ids, URL
detection (OpenAI, DeepSeek, Moonshot, OpenRouter), session-affinity headers, the clamp, and the
``requiresAssistantAfterToolResult``/``requiresThinkingAsText``/``requiresToolResultName`` switches,
and images (``image_url`` parts; a tool group's images in a following user message;
``tests/data/piai_oracle/images``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._openai_compat import detect_compat
from ._openai_fields import _apply_cache_control, _cache_control, _reasoning_fields, _routing, _tools
from ._openai_messages import _convert_messages, _Converter, _normalize_id, _system
from ._piai import CopilotHeaders, body_context
from ._piai_call import PiCall, clamp_level
from ._piai_facts import timeout_header
from ._piai_models import PiRenderer, merge_profile_headers, user_agent
from ._registry import register
from ._types import WireRequest

__all__ = ["OpenAIRenderer", "openai_body", "render_openai"]


def openai_body(request: Any, call: PiCall, *, owned_routes: frozenset[str] | None = None,
                compaction_instruction: str | None = None, images: Mapping[str, bytes] | None = None,
                offloaded_image_text: str | None = None, state: dict[str, Any] | None = None) -> dict[str, Any]:
    """The request body as a JSON value (keys in wire order), before serialisation.

    ``state``: a renderer's own, kept between its requests: a loop request then converts only
    the messages its predecessor did not have (:func:`~dsh_audit.wire._piai.folded_request_context`),
    the same body either way."""
    model, compat = call.model, detect_compat(call.model)
    context, _, max_tokens, fold = body_context(
        state, request, call, owned_routes=owned_routes, normalize=_normalize_id, sink=_Converter,
        compaction_instruction=compaction_instruction, images=images, offloaded_image_text=offloaded_image_text)
    effort = clamp_level(model, call.reasoning) if call.reasoning else None
    effort = None if effort == "off" else effort
    retention = call.cache_retention
    long_ok = retention == "long" and compat["supportsLongCacheRetention"]
    messages = (_system(context, model, compat) + fold.sink.finish(fold.transform.tail())) if fold is not None \
        else _convert_messages(context, model, compat)
    body: dict[str, Any] = {"model": model.id, "messages": messages, "stream": True}
    if (("api.openai.com" in model.base_url and retention != "none") or long_ok) and call.session_id:
        body["prompt_cache_key"] = call.session_id[:64]
    if long_ok:
        body["prompt_cache_retention"] = "24h"
    if compat["supportsUsageInStreaming"] is not False:
        body["stream_options"] = {"include_usage": True}
    if compat["supportsStore"]:
        body["store"] = False
    if max_tokens:
        body["max_tokens" if compat["maxTokensField"] == "max_tokens" else "max_completion_tokens"] = max_tokens
    if call.temperature is not None:
        body["temperature"] = call.temperature
    if context.get("tools"):
        body["tools"] = _tools(context["tools"], compat)
        if compat["zaiToolStream"]:
            body["tool_stream"] = True
    elif fold.tool_traffic if fold is not None else any(
            m["role"] == "toolResult" or (m["role"] == "assistant" and any(b["type"] == "toolCall" for b in m["content"]))
            for m in context["messages"]):
        body["tools"] = []
    cache = _cache_control(compat, retention)
    if cache is not None:
        _apply_cache_control(body["messages"], body.get("tools"), cache)
    _reasoning_fields(body, model, compat, effort)
    _routing(body, model)
    return body


def _headers(call: PiCall, agent: str, platform: tuple[tuple[str, str], ...],
             dynamic: tuple[tuple[str, str], ...] = ()) -> tuple[tuple[str, str], ...]:
    compat = detect_compat(call.model)
    headers = [("accept", "application/json"), ("x-stainless-retry-count", "0"), *timeout_header(call.model.profile),
               ("x-stainless-lang", "js"), ("x-stainless-package-version", "6.26.0"), *platform]
    session = call.session_id if call.cache_retention != "none" else None
    if session and compat["sendSessionAffinityHeaders"]:
        if compat["sessionAffinityFormat"] == "openrouter":
            headers.append(("x-session-id", session))
        else:
            if compat["sessionAffinityFormat"] == "openai":
                headers.append(("session_id", session))
            headers += [("x-client-request-id", session), ("x-session-affinity", session)]
    headers += [("user-agent", agent), ("content-type", "application/json")]
    client = ("x-session-id", "session_id", "x-client-request-id", "x-session-affinity")
    return tuple(merge_profile_headers(headers, call, client=client, dynamic=dynamic))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class OpenAIRenderer(CopilotHeaders, PiRenderer):
    """Render :class:`~dsh_audit.replay.Request` values as pi-ai 0.82.1 sends OpenAI chat completions.

    Takes the settings of :class:`PiRenderer` (``thinking_budgets`` is accepted
    for symmetry: chat completions send no thinking budget).

    Example:
        >>> renderer = OpenAIRenderer()
        >>> bodies = [renderer.render(r).body for r in requests]  # doctest: +SKIP
    """

    adapter = "openai"
    api = "openai-completions"
    endpoint = "/chat/completions"
    other = ("anthropic-messages", "anthropic")

    def body(self, request: Any, call: PiCall, *, compaction_instruction: str | None,
             images: Mapping[str, bytes] | None = None, offloaded_image_text: str | None = None) -> dict[str, Any]:
        """See :func:`openai_body`."""
        return openai_body(request, call, owned_routes=self.owned_routes, compaction_instruction=compaction_instruction,
                           images=images, offloaded_image_text=offloaded_image_text, state=self.state)

    def headers(self, call: PiCall, body: Mapping[str, Any],
                dynamic: tuple[tuple[str, str], ...] = ()) -> tuple[tuple[str, str], ...]:
        """The OpenAI SDK's headers for this call (credential withheld)."""
        return _headers(call, user_agent(self.version), self.platform, dynamic)


def render_openai(request: Any, *, compaction_instruction: str | None = None, **options: Any) -> WireRequest:
    """Render one request as pi-ai 0.82.1 sends it to an OpenAI chat-completions endpoint.

    ``options`` are :class:`OpenAIRenderer` settings (``models``, ``profile_reasoning``, ...).

    Raises:
        RenderError: DSH would refuse the request, or the log lacks a fact the body needs.

    Example:
        >>> wire = render_openai(request)  # doctest: +SKIP
        >>> wire.path  # doctest: +SKIP
        '/v1/chat/completions'
    """
    return OpenAIRenderer(**options).render(request, compaction_instruction=compaction_instruction)


register("openai", OpenAIRenderer)
