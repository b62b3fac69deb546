"""pi-ai's Anthropic Messages rendering (``POST {baseURL}/v1/messages``) of a DSH request.

Models pi-ai **0.82.1** ``api/anthropic-messages.js`` (``streamSimple``, ``buildParams``,
``convertMessages``, ``convertTools``, ``createClient``) under ``@anthropic-ai/sdk`` 0.91.1, as DSH
0.1.0-rc.8's ``llm-pi-ai`` adapter drives it (spec §8.2, §8.3). The shared context conversion lives
in :mod:`dsh_audit.wire._piai_context`, ``transformMessages`` in :mod:`dsh_audit.wire._piai_transform`,
their assembly in :mod:`dsh_audit.wire._piai`.

Body, in key order: ``model``, ``messages``, ``max_tokens``, ``stream: true``, then ``system``
(one text block), ``temperature`` (only without thinking), ``tools``, ``thinking``,
``output_config``. ``cache_control`` (``{"type": "ephemeral"}``, ``ttl: "1h"`` for long
retention) sits on the system block, the last tool and the last block of the last message when it
is a user message (a string content becomes a one-block array).

Verified byte for byte against ``corpus/live-pi/c1-anthropic-tools`` (10 loop requests and the
title request): header set and order (credential withheld), body key order, the three cache
breakpoints, schema rebuilt as ``{type, properties, required}`` with ``eager_input_streaming``,
budget thinking at effort ``high`` (``budget_tokens`` 16384, ``max_tokens`` 64000), adaptive
thinking with ``output_config.effort: max`` and no ``anthropic-beta``, ``thinking: disabled`` for
the title, native thinking replay with signatures, and another model's thinking as plain text.
Not captured but checked against pi-ai 0.82.1's own output for synthetic sessions
(``tests/data/piai_oracle``): the context clamp of ``max_tokens`` down to 1 and the budget's
``|| 1024``, custom thinking budgets, every effort, ``temperature``, long and no retention,
redacted thinking, tool-id normalisation, orphaned calls, skipped error turns, and hand-declared
routes with compat switches, and images in user messages and tool results
(``tests/data/piai_oracle/images``). An OAuth key's Claude Code identity, tool names and headers are
in :mod:`dsh_audit.wire._anthropic_oauth` (``tests/data/piai_oracle/oauth``). Not modelled: deferred
tools (DSH never sets ``addedToolNames``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..errors import RenderError
from ._anthropic_oauth import KEY_TYPES, keyed, oauth_betas, system_blocks, tool_namer, uses_oauth
from ._piai import CopilotHeaders, body_context
from ._piai_call import PiCall
from ._piai_facts import PiModel, timeout_header
from ._piai_js import clean_id, js_blank, sanitize_surrogates
from ._piai_models import PiRenderer, merge_profile_headers, profile_header, route_header_error, user_agent
from ._piai_transform import clamp_max_tokens, transform_messages
from ._registry import register
from ._types import WireRequest

__all__ = ["AnthropicRenderer", "anthropic_body", "render_anthropic"]

_DEFAULT_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384}
#: The request timeout ``messages.create`` sets when pi-ai passes none (``@anthropic-ai/sdk`` 0.91.1
#: ``resources/messages/messages.js:37``, a streamed call): ``x-stainless-timeout: 600``.
_SDK_TIMEOUT_MS = 600_000


def _compat(model: PiModel, name: str, default: bool) -> bool:
    value = model.compat.get(name)
    return default if value is None else bool(value)


def _cache_control(model: PiModel, retention: str) -> dict[str, str] | None:
    if retention == "none":
        return None
    if retention == "long" and _compat(model, "supportsLongCacheRetention", True):
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def _normalize_id(call_id: str, _model: PiModel, _message: Any) -> str:
    return clean_id(call_id)[:64]


def _assistant_blocks(content: list[dict[str, Any]], allow_empty_signature: bool,
                      tool_name: Callable[[str], str]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in content:
        kind = block["type"]
        if kind == "text":
            if not js_blank(block["text"]):
                blocks.append({"type": "text", "text": sanitize_surrogates(block["text"])})
        elif kind == "thinking":
            signature = block.get("thinkingSignature")
            if block.get("redacted"):
                # anthropic-messages.js:891-895: ``data`` is the signature, left out when it has none
                # (an envelope that marks a block redacted without one; JSON drops ``undefined``).
                blocks.append({"type": "redacted_thinking", **({} if signature is None else {"data": signature})})
                continue
            signed = isinstance(signature, str) and not js_blank(signature)
            if js_blank(block["thinking"]) and not signed:
                continue
            text = sanitize_surrogates(block["thinking"])
            if signed:
                blocks.append({"type": "thinking", "thinking": text, "signature": signature})
            elif allow_empty_signature:
                blocks.append({"type": "thinking", "thinking": text, "signature": ""})
            else:
                blocks.append({"type": "text", "text": text})
        elif kind == "toolCall":
            blocks.append({"type": "tool_use", "id": block["id"], "name": tool_name(block["name"]),
                           "input": block.get("arguments") if block.get("arguments") is not None else {}})
    return blocks


def _image(block: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": block["mimeType"], "data": block["data"]}}


def _blocks(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Text and image blocks in order (``convertMessages``' user branch, ``convertContentBlocks``)."""
    return [{"type": "text", "text": sanitize_surrogates(b["text"])} if b["type"] == "text" else _image(b)
            for b in content]


def _tool_result(msg: Mapping[str, Any]) -> dict[str, Any]:
    content: str | list[dict[str, Any]]
    if any(b["type"] == "image" for b in msg["content"]):
        content = _blocks(msg["content"])
        if not any(b["type"] == "text" for b in content):
            content.insert(0, {"type": "text", "text": "(see attached image)"})
    else:
        content = sanitize_surrogates("\n".join(b["text"] for b in msg["content"] if b["type"] == "text"))
    return {"type": "tool_result", "tool_use_id": msg["toolCallId"], "content": content, "is_error": msg["isError"]}


class _Converter:
    """``convertMessages``, one transformed message at a time (:class:`~dsh_audit.wire._piai.Sink`):
    consecutive tool results become one user message, closed by the next other message;
    ``tool_name`` names a ``tool_use`` block's tool (:func:`._anthropic_oauth.tool_namer`)."""

    __slots__ = ("allow_empty_signature", "group", "params", "tool_name")

    def __init__(self, allow_empty_signature: bool, tool_name: Callable[[str], str]) -> None:
        self.allow_empty_signature = allow_empty_signature
        self.tool_name = tool_name
        self.params: list[dict[str, Any]] = []
        self.group: list[dict[str, Any]] = []  # the open run of tool results

    def add(self, msg: dict[str, Any]) -> None:
        if msg["role"] == "toolResult":
            self.group.append(_tool_result(msg))
            return
        if self.group:
            self.params.append({"role": "user", "content": self.group})
            self.group = []
        if msg["role"] == "user":
            if isinstance(msg["content"], list):  # a user message with an image (DSH's image path)
                blocks = [b for b in _blocks(msg["content"]) if b["type"] != "text" or not js_blank(b["text"])]
                if blocks:
                    self.params.append({"role": "user", "content": blocks})
            elif not js_blank(msg["content"]):
                self.params.append({"role": "user", "content": sanitize_surrogates(msg["content"])})
        else:
            blocks = _assistant_blocks(msg["content"], self.allow_empty_signature, self.tool_name)
            if blocks:
                self.params.append({"role": "assistant", "content": blocks})

    def finish(self, extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
        group = self.group + [_tool_result(m) for m in extra]
        return (self.params + [{"role": "user", "content": group}]) if group else list(self.params)


def _new_converter(model: PiModel) -> _Converter:
    return _Converter(_compat(model, "allowEmptySignature", False), tool_namer(model))


def _mark_last(params: list[dict[str, Any]], cache: dict[str, str] | None) -> list[dict[str, Any]]:
    """``params`` with ``cache`` on the last block of the last message when it is a user message
    (a string content becomes a one-block array): a new last message, the others as they are."""
    if cache and params and params[-1]["role"] == "user":
        last = params[-1]
        content = last["content"]
        if isinstance(content, str):
            params[-1] = {**last, "content": [{"type": "text", "text": content, "cache_control": cache}]}
        elif content and content[-1]["type"] in ("text", "image", "tool_result"):
            params[-1] = {**last, "content": [*content[:-1], {**content[-1], "cache_control": cache}]}
    return params


def _convert_messages(messages: list[dict[str, Any]], cache: dict[str, str] | None,
                      converter: _Converter) -> list[dict[str, Any]]:
    for msg in messages:
        converter.add(msg)
    return _mark_last(converter.finish([]), cache)


def _convert_tools(tools: list[dict[str, Any]], model: PiModel, cache: dict[str, str] | None,
                   seq: int | None = None) -> list[dict[str, Any]]:
    unique: dict[str, dict[str, Any]] = {}
    tool_name = tool_namer(model)
    for tool in tools:
        # a repeated name keeps its first position, takes the last tool (``splitDeferredTools``: by
        # the name sent, so in OAuth mode ``read`` and ``Read`` are one tool)
        unique[tool_name(tool["name"])] = tool
    for tool in unique.values():
        if tool.get("parameters") is None:
            # anthropic-messages.js convertTools reads ``schema.properties`` of every tool it sends:
            # a tool without a schema (absent or null) is a TypeError before the request is sent
            shown = "null" if "parameters" in tool else "undefined"
            raise RenderError(f"the header's tool {tool['name']!r} has no parameters schema; pi-ai's Anthropic "
                              f"adapter reads its properties and throws (TypeError: Cannot read properties of "
                              f"{shown}), so DSH could not have sent this request", dsh_code="TypeError", seq=seq,
                              hint="the log was edited or damaged; `dsh-audit validate` lists what else is wrong in it")
    eager = _compat(model, "supportsEagerToolInputStreaming", True)
    tool_cache = cache if _compat(model, "supportsCacheControlOnTools", True) else None
    out = []
    for index, tool in enumerate(unique.values()):
        schema = tool.get("parameters")
        schema = schema if isinstance(schema, Mapping) else {}  # JavaScript reads no field of another value
        entry: dict[str, Any] = {"name": tool_name(tool["name"])}
        if "description" in tool:  # anthropic-messages.js:1007 writes it as it is: null stays
            entry["description"] = tool["description"]
        if eager:
            entry["eager_input_streaming"] = True
        entry["input_schema"] = {
            "type": "object",
            "properties": schema["properties"] if schema.get("properties") is not None else {},
            "required": schema["required"] if schema.get("required") is not None else [],
        }
        if tool_cache and index == len(unique) - 1:
            entry["cache_control"] = tool_cache
        out.append(entry)
    return out


def _effort(model: PiModel, level: str) -> str:
    mapped = (model.thinking_level_map or {}).get(level)
    if isinstance(mapped, str):
        return mapped
    return {"minimal": "low", "low": "low", "medium": "medium"}.get(level, "high")


def _thinking(call: PiCall, max_tokens: int, estimate: int) -> tuple[int, dict[str, Any] | None, str | None]:
    """``streamSimple``'s cap and thinking: (max_tokens, thinking, adaptive effort)."""
    model = call.model
    if call.reasoning is None:
        return max_tokens, ({"type": "disabled"} if model.reasoning and not model.pins("off") else None), None
    if model.compat.get("forceAdaptiveThinking") is True:
        if not model.reasoning:
            return max_tokens, None, None
        return max_tokens, {"type": "adaptive", "display": "summarized"}, _effort(model, call.reasoning)
    level = "high" if call.reasoning in ("xhigh", "max") else call.reasoning
    budgets = {**_DEFAULT_BUDGETS, **(call.thinking_budgets or {})}
    budget = budgets[level]
    capped = min(max_tokens + budget, model.max_tokens)
    if capped <= budget:
        budget = max(0, capped - 1024)
    capped = clamp_max_tokens(model, estimate, capped)
    budget = min(budget, max(0, capped - 1024))
    enabled = {"type": "enabled", "budget_tokens": budget or 1024, "display": "summarized"}
    return capped, enabled if model.reasoning else None, None


def anthropic_body(request: Any, call: PiCall, *, owned_routes: frozenset[str] | None = None,
                   compaction_instruction: str | None = None, images: Mapping[str, bytes] | None = None,
                   offloaded_image_text: str | None = None, state: dict[str, Any] | None = None) -> dict[str, Any]:
    """The request body as a JSON value (keys in wire order), before serialisation.

    ``state``: a renderer's own, kept between its requests: a loop request then converts only
    the messages its predecessor did not have (:func:`~dsh_audit.wire._piai.folded_request_context`),
    the same body either way."""
    model = call.model
    cache = _cache_control(model, call.cache_retention)
    context, estimate, base, fold = body_context(
        state, request, call, owned_routes=owned_routes, normalize=_normalize_id, sink=_new_converter,
        compaction_instruction=compaction_instruction, images=images, offloaded_image_text=offloaded_image_text)
    max_tokens, thinking, effort = _thinking(call, base, estimate)
    if fold is not None:
        messages = _mark_last(fold.sink.finish(fold.transform.tail()), cache)
    else:
        messages = _convert_messages(transform_messages(context["messages"], model, _normalize_id), cache,
                                     _new_converter(model))
    body: dict[str, Any] = {
        "model": model.id,
        "messages": messages,
        "max_tokens": max_tokens,
        "stream": True,
    }
    prompt = context.get("systemPrompt")
    system = system_blocks(sanitize_surrogates(prompt) if prompt else None, cache, oauth=uses_oauth(model))
    if system is not None:
        body["system"] = system
    enabled = thinking is not None and thinking["type"] != "disabled"
    if call.temperature is not None and not enabled and _compat(model, "supportsTemperature", True):
        body["temperature"] = call.temperature
    if context.get("tools"):
        seq = getattr(request, "header_seq", None)
        body["tools"] = _convert_tools(context["tools"], model, cache,
                                       getattr(request, "first_chunk_seq", None) if seq is None else seq)
    if thinking is not None:
        body["thinking"] = thinking
    if effort is not None:
        body["output_config"] = {"effort": effort}
    return body


def _check_api_key_header(call: PiCall) -> None:
    """Refuse a request whose route profile ``x-api-key`` fetch's ``Headers`` trims to nothing (``""``,
    ``" "``) with no profile ``authorization``: the header replaces the API key pi-ai gives the SDK, whose
    ``validateHeaders`` (``@anthropic-ai/sdk`` 0.91.1 ``client.js:106-118``) then finds no credential and
    throws, so pi-ai sends none of the route's requests. DSH's configuration takes the header, so the route
    file does too, and the requests of its other routes render."""
    if profile_header(call.headers, "x-api-key") != "" or profile_header(call.headers, "authorization"):
        return
    name = next(k for k, _ in call.headers if k.lower() == "x-api-key")
    raise route_header_error(call, name, "is blank: it replaces the API key, and the Anthropic SDK throws 'Could "
                             "not resolve authentication method' and sends nothing")


def _headers(call: PiCall, has_tools: bool, agent: str, platform: tuple[tuple[str, str], ...],
             dynamic: tuple[tuple[str, str], ...] = ()) -> tuple[tuple[str, str], ...]:
    model = call.model
    betas = []
    if has_tools and not _compat(model, "supportsEagerToolInputStreaming", True):
        betas.append("fine-grained-tool-streaming-2025-05-14")
    if model.compat.get("forceAdaptiveThinking") is not True:
        betas.append("interleaved-thinking-2025-05-14")
    headers = [("x-stainless-retry-count", "0"), *timeout_header(model.profile, _SDK_TIMEOUT_MS),
               ("x-stainless-lang", "js"), ("x-stainless-package-version", "0.91.1"), *platform,
               ("anthropic-version", "2023-06-01"), ("accept", "application/json"),
               ("anthropic-dangerous-direct-browser-access", "true")]
    if uses_oauth(model):
        # createClient's OAuth client: Claude Code's betas first, pi-ai's ``user-agent`` (whose value DSH's
        # replaces in place, ``Object.assign``) and ``x-app``; no session affinity
        headers += [("anthropic-beta", oauth_betas(betas)), ("user-agent", agent), ("x-app", "cli"),
                    ("content-type", "application/json")]
        return tuple(merge_profile_headers(headers, call, client=("accept", "anthropic-dangerous-direct-browser-access",
                                                                  "anthropic-beta", "user-agent", "x-app")))
    if betas:
        headers.append(("anthropic-beta", ",".join(betas)))
    if model.provider != "github-copilot":  # Copilot's client authenticates with its bearer token
        _check_api_key_header(call)
    # anthropic-messages.js createClient: the github-copilot client sends no session affinity
    if call.session_id and call.cache_retention != "none" and _compat(model, "sendSessionAffinityHeaders", False) \
            and model.provider != "github-copilot":
        headers.append(("x-session-affinity", call.session_id))
    headers += [("user-agent", agent), ("content-type", "application/json")]
    client = ("accept", "anthropic-dangerous-direct-browser-access", "anthropic-beta", "x-session-affinity")
    return tuple(merge_profile_headers(headers, call, client=client, dynamic=dynamic))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class AnthropicRenderer(CopilotHeaders, PiRenderer):
    """Render :class:`~dsh_audit.replay.Request` values as pi-ai 0.82.1 sends Anthropic Messages.

    Takes the settings of :class:`PiRenderer`, and ``key_type``: the kind of key DSH gave pi-ai
    (``oauth``, ``api-key``) on every route, winning over the route file's ``dshAudit.keyType``
    (default: the route file's, else ``api-key``).

    Example:
        >>> renderer = AnthropicRenderer()
        >>> bodies = [renderer.render(r).body for r in requests]  # doctest: +SKIP
    """

    adapter = "anthropic"
    api = "anthropic-messages"
    endpoint = "/v1/messages"
    other = ("openai-completions", "openai")

    key_type: str | None = None

    def __post_init__(self) -> None:
        if self.key_type is not None and self.key_type not in KEY_TYPES:
            raise ValueError(f"key_type must be one of {', '.join(KEY_TYPES)}, not {self.key_type!r}")

    def call(self, request: Any) -> PiCall:
        """DSH's stream options for ``request``, with this renderer's :attr:`key_type` when it has one."""
        call = PiRenderer.call(self, request)
        return call if self.key_type is None else keyed(call, self.key_type)

    def render(self, request: Any, *, key_type: str | None = None, compaction_instruction: str | None = None,
               images: Mapping[str, bytes] | None = None, offloaded_image_text: str | None = None) -> WireRequest:
        """:meth:`PiRenderer.render`; ``key_type`` renders this request for that kind of key (a capture's:
        ``diff`` takes it from the captured request), through a renderer kept for it."""
        options: dict[str, Any] = {"compaction_instruction": compaction_instruction, "images": images,
                                   "offloaded_image_text": offloaded_image_text}
        if key_type is None or key_type == self.key_type:
            return PiRenderer.render(self, request, **options)
        other = self.state.get(f"key_type:{key_type}")
        if other is None:
            other = self.state[f"key_type:{key_type}"] = replace(self, key_type=key_type)
        rendered: WireRequest = other.render(request, **options)
        return rendered

    def body(self, request: Any, call: PiCall, *, compaction_instruction: str | None,
             images: Mapping[str, bytes] | None = None, offloaded_image_text: str | None = None) -> dict[str, Any]:
        """See :func:`anthropic_body`."""
        return anthropic_body(request, call, owned_routes=self.owned_routes,
                              compaction_instruction=compaction_instruction, images=images,
                              offloaded_image_text=offloaded_image_text, state=self.state)

    def headers(self, call: PiCall, body: Mapping[str, Any],
                dynamic: tuple[tuple[str, str], ...] = ()) -> tuple[tuple[str, str], ...]:
        """The Anthropic SDK's headers for this call (credential withheld)."""
        return _headers(call, bool(body.get("tools")), user_agent(self.version), self.platform, dynamic)


def render_anthropic(request: Any, *, compaction_instruction: str | None = None, **options: Any) -> WireRequest:
    """Render one request as pi-ai 0.82.1 sends it to Anthropic Messages.

    ``options`` are :class:`AnthropicRenderer` settings (``models``, ``profile_reasoning``, ...).

    Raises:
        RenderError: DSH would refuse the request, or the log lacks a fact the body needs.

    Example:
        >>> wire = render_anthropic(request)  # doctest: +SKIP
        >>> wire.path, wire.body[:30]  # doctest: +SKIP
        ('/v1/messages', b'{"model":"claude-sonnet-4-5","')
    """
    return AnthropicRenderer(**options).render(request, compaction_instruction=compaction_instruction)


register("anthropic", AnthropicRenderer)
