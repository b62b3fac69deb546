"""pi-ai's OpenAI chat-completions rendering (``POST {baseURL}/chat/completions``) of a DSH request.

Models pi-ai **0.82.1** ``api/openai-completions.js`` (``streamSimple``, ``buildParams``,
``convertMessages``, ``convertTools``, ``detectCompat``/``getCompat``, ``createClient``) under
``openai`` 6.26.0, as DSH 0.1.0-rc.8's ``llm-pi-ai`` adapter drives it (spec §8.2, §8.3). The shared
context conversion lives in :mod:`dsh_audit.wire._piai_context`, ``transformMessages`` in
:mod:`dsh_audit.wire._piai_transform`, their assembly in :mod:`dsh_audit.wire._piai`.

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

from ..errors import RenderError
from ..jsjson import stringify
from ._piai import CopilotHeaders, body_context
from ._piai_call import PiCall, clamp_level
from ._piai_facts import PiModel
from ._piai_js import clean_id, js_blank, js_head, js_parse, js_truthy, sanitize_surrogates
from ._piai_models import PiRenderer, merge_profile_headers, user_agent
from ._piai_transform import transform_messages
from ._registry import register
from ._types import WireRequest

__all__ = ["OpenAIRenderer", "detect_compat", "openai_body", "render_openai", "short_hash"]


def detect_compat(model: PiModel) -> dict[str, Any]:
    """pi-ai ``getCompat``: switches detected from provider and URL, overridden by ``model.compat``."""
    p, url = model.provider, model.base_url
    zai = p in ("zai", "zai-coding-cn") or "api.z.ai" in url or "open.bigmodel.cn" in url
    together = p == "together" or "api.together.ai" in url or "api.together.xyz" in url
    moonshot = p in ("moonshotai", "moonshotai-cn") or "api.moonshot." in url
    openrouter = p == "openrouter" or "openrouter.ai" in url
    cf_workers = p == "cloudflare-workers-ai" or "api.cloudflare.com" in url
    cf_gateway = p == "cloudflare-ai-gateway" or "gateway.ai.cloudflare.com" in url
    nvidia = p == "nvidia" or "integrate.api.nvidia.com" in url
    ant_ling = p == "ant-ling" or "api.ant-ling.com" in url
    grok = p == "xai" or "api.x.ai" in url
    deepseek = p == "deepseek" or "deepseek.com" in url
    non_standard = (nvidia or p == "cerebras" or "cerebras.ai" in url or grok or together or "chutes.ai" in url
                    or "deepseek.com" in url or zai or moonshot or p == "opencode" or "opencode.ai" in url
                    or cf_workers or cf_gateway or ant_ling)
    use_max_tokens = "chutes.ai" in url or moonshot or cf_gateway or together or nvidia or ant_ling
    dev_role_router = openrouter and (model.id.startswith("anthropic/") or model.id.startswith("openai/"))
    thinking = ("deepseek" if deepseek else "zai" if zai else "together" if together else "ant-ling" if ant_ling
                else "openrouter" if openrouter else "openai")
    detected: dict[str, Any] = {
        "supportsStore": not non_standard,
        "supportsDeveloperRole": dev_role_router or (not non_standard and not openrouter),
        "supportsReasoningEffort": not (grok or zai or moonshot or together or cf_gateway or nvidia or ant_ling),
        "supportsUsageInStreaming": True,
        "maxTokensField": "max_tokens" if use_max_tokens else "max_completion_tokens",
        "requiresToolResultName": False,
        "requiresAssistantAfterToolResult": False,
        "requiresThinkingAsText": False,
        "requiresReasoningContentOnAssistantMessages": deepseek,
        "thinkingFormat": thinking,
        "chatTemplateKwargs": {},
        "zaiToolStream": False,
        "supportsStrictMode": not (moonshot or together or cf_gateway or nvidia),
        "cacheControlFormat": "anthropic" if p == "openrouter" and model.id.startswith("anthropic/") else None,
        "sendSessionAffinityHeaders": False,
        "sessionAffinityFormat": "openrouter" if openrouter else "openai",
        "supportsLongCacheRetention": not (together or cf_workers or cf_gateway or nvidia or ant_ling),
    }
    detected.update((k, v) for k, v in model.compat.items() if v is not None)
    return detected


def _base36(value: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, rest = divmod(value, 36)
        out = digits[rest] + out
        if not value:
            return out


def short_hash(text: str) -> str:
    """pi-ai ``shortHash``: two 32-bit multiplicative hashes over UTF-16 units, in base 36."""
    mask = 0xFFFFFFFF
    h1, h2 = 0xDEADBEEF, 0x41C6CE57
    units = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(units), 2):
        unit = units[i] | units[i + 1] << 8
        h1 = ((h1 ^ unit) * 2654435761) & mask
        h2 = ((h2 ^ unit) * 1597334677) & mask
    h1 = (((h1 ^ (h1 >> 16)) * 2246822507) & mask) ^ (((h2 ^ (h2 >> 13)) * 3266489909) & mask)
    h2 = (((h2 ^ (h2 >> 16)) * 2246822507) & mask) ^ (((h1 ^ (h1 >> 13)) * 3266489909) & mask)
    return _base36(h2) + _base36(h1)


def _normalize_id(call_id: str, model: PiModel, _message: Any) -> str:
    if "|" in call_id:
        head, _, tail = call_id.partition("|")
        call, item = clean_id(head), clean_id(tail)
        combined = f"{call}_{item}" if item else call
        if len(combined) <= 40:
            return combined
        digest = short_hash(call_id)[:8]
        return f"{call[:max(1, 40 - len(digest) - 1)]}_{digest}"
    # openai-completions.js convertMessages: the 40 are UTF-16 units (a cut may split an astral pair).
    return js_head(call_id, 40) if model.provider == "openai" else call_id


def _part(block: Mapping[str, Any]) -> dict[str, Any]:
    """A user content block as a chat-completions part: text, or an image as a ``data:`` URL."""
    if block["type"] == "text":
        return {"type": "text", "text": sanitize_surrogates(block["text"])}
    return {"type": "image_url", "image_url": {"url": f"data:{block['mimeType']};base64,{block['data']}"}}


def _assistant(msg: Mapping[str, Any], model: PiModel, compat: Mapping[str, Any]) -> dict[str, Any] | None:
    out: dict[str, Any] = {"role": "assistant", "content": "" if compat["requiresAssistantAfterToolResult"] else None}
    texts = [sanitize_surrogates(b["text"]) for b in msg["content"] if b["type"] == "text" and not js_blank(b["text"])]
    text = "".join(texts)
    thinking = [b for b in msg["content"] if b["type"] == "thinking" and not js_blank(b["thinking"])]
    if thinking and compat["requiresThinkingAsText"]:
        joined = "\n\n".join(sanitize_surrogates(b["thinking"]) for b in thinking)
        out["content"] = [{"type": "text", "text": joined}, *({"type": "text", "text": t} for t in texts)]
    else:
        if text:
            out["content"] = text
        signature = thinking[0].get("thinkingSignature") if thinking else None
        if model.provider == "opencode-go" and signature == "reasoning":
            signature = "reasoning_content"
        if signature:
            out[signature] = "\n".join(b["thinking"] for b in thinking)
    calls = [b for b in msg["content"] if b["type"] == "toolCall"]
    if calls:
        out["tool_calls"] = [{"id": c["id"], "type": "function",
                              "function": {"name": c["name"], "arguments": stringify(c["arguments"])}}
                             for c in calls]
        details = []
        for call in calls:  # openai-completions.js:912-919: JSON.parse each, then .filter(Boolean)
            if call.get("thoughtSignature"):
                try:
                    parsed = js_parse(call["thoughtSignature"])
                except ValueError:
                    parsed = None
                except RecursionError:  # V8 parses it, but JSON.stringify of the body then overflows
                    raise RenderError("a tool call's thought signature nests JSON objects or arrays too deep: "
                                      "pi-ai replays it parsed in reasoning_details, and JavaScript cannot "
                                      "serialise a body that deep, so DSH could not have sent this request",
                                      hint="the log was edited or damaged; `dsh-audit validate` lists what "
                                      "else is wrong in it") from None
                if js_truthy(parsed):
                    details.append(parsed)
        if details:
            out["reasoning_details"] = details
    if compat["requiresReasoningContentOnAssistantMessages"] and model.reasoning and "reasoning_content" not in out:
        out["reasoning_content"] = ""
    if not out["content"] and "tool_calls" not in out:
        return None
    return out


_FILLER = {"role": "assistant", "content": "I have processed the tool results."}


class _Converter:
    """``convertMessages``, one transformed message at a time (:class:`~dsh_audit.wire._piai.Sink`),
    without the system message: a run of tool results is closed (its images following it) by
    the next other message."""

    __slots__ = ("compat", "group", "images", "last_role", "model", "params")

    def __init__(self, model: PiModel) -> None:
        self.model = model
        self.compat: Mapping[str, Any] = detect_compat(model)
        self.params: list[dict[str, Any]] = []
        self.last_role: str | None = None
        self.group = False  # in a run of tool results
        self.images: list[dict[str, Any]] = []  # the run's images

    def add(self, msg: dict[str, Any]) -> None:
        compat = self.compat
        if msg["role"] == "toolResult":
            self.group = True
            text = "\n".join(b["text"] for b in msg["content"] if b["type"] == "text")
            found = [_part(b) for b in msg["content"] if b["type"] == "image"]
            entry = {"role": "tool", "content": sanitize_surrogates(text or ("(see attached image)" if found
                                                                             else "(no tool output)")),
                     "tool_call_id": msg["toolCallId"]}
            if compat["requiresToolResultName"] and msg.get("toolName"):
                entry["name"] = msg["toolName"]
            self.params.append(entry)
            if "image" in self.model.input:
                self.images = self.images + found
            return
        self._close()
        if compat["requiresAssistantAfterToolResult"] and self.last_role == "toolResult" and msg["role"] == "user":
            self.params.append(dict(_FILLER))
        if msg["role"] == "user":
            content = msg["content"]
            self.params.append({"role": "user", "content": [_part(b) for b in content] if isinstance(content, list)
                                else sanitize_surrogates(content)})  # a list: DSH's image path (never empty)
        else:
            converted = _assistant(msg, self.model, compat)
            if converted is None:
                return  # skipped messages leave last_role as it was
            self.params.append(converted)
        self.last_role = msg["role"]

    def _close(self) -> None:
        if not self.group:
            return
        self.group, self.last_role = False, "toolResult"
        if self.images:  # the run's images follow it in one user message
            if self.compat["requiresAssistantAfterToolResult"]:
                self.params.append(dict(_FILLER))
            self.params.append({"role": "user", "content": [
                {"type": "text", "text": "Attached image(s) from tool result:"}, *self.images]})
            self.last_role = "user"
        self.images = []

    def finish(self, extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
        end = _Converter.__new__(_Converter)
        end.model, end.compat, end.params = self.model, self.compat, list(self.params)
        end.last_role, end.group, end.images = self.last_role, self.group, self.images
        for msg in extra:
            end.add(msg)
        end._close()
        return end.params


def _system(context: Mapping[str, Any], model: PiModel, compat: Mapping[str, Any]) -> list[dict[str, Any]]:
    if not context.get("systemPrompt"):
        return []
    role = "developer" if model.reasoning and compat["supportsDeveloperRole"] else "system"
    return [{"role": role, "content": sanitize_surrogates(context["systemPrompt"])}]


def _convert_messages(context: Mapping[str, Any], model: PiModel, compat: Mapping[str, Any]) -> list[dict[str, Any]]:
    messages = transform_messages(context["messages"], model, _normalize_id)
    converter = _Converter(model)
    converter.compat = compat
    for msg in messages:
        converter.add(msg)
    return _system(context, model, compat) + converter.finish([])


def _tools(tools: list[dict[str, Any]], compat: Mapping[str, Any]) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        function: dict[str, Any] = {"name": tool["name"]}
        for key in ("description", "parameters"):  # written as they are: null stays, absent is dropped
            if key in tool:
                function[key] = tool[key]
        if compat["supportsStrictMode"] is not False:
            function["strict"] = False
        out.append({"type": "function", "function": function})
    return out


def _mapped(model: PiModel, level: str) -> Any:
    levels = model.thinking_level_map or {}
    return levels[level] if level in levels and levels[level] is not None else level


def _reasoning_fields(body: dict[str, Any], model: PiModel, compat: Mapping[str, Any], effort: str | None) -> None:
    fmt, levels = compat["thinkingFormat"], model.thinking_level_map or {}
    off_pinned = model.pins("off")
    if not model.reasoning:
        return
    if fmt == "zai":
        body["thinking"] = {"type": "enabled", "clear_thinking": False} if effort else {"type": "disabled"}
        if effort and compat["supportsReasoningEffort"]:
            value = levels.get(effort, effort)
            if isinstance(value, str):
                body["reasoning_effort"] = value
    elif fmt == "qwen":
        body["enable_thinking"] = bool(effort)
    elif fmt == "qwen-chat-template":
        body["chat_template_kwargs"] = {"enable_thinking": bool(effort), "preserve_thinking": True}
    elif fmt in ("deepseek", "together"):
        if fmt == "together":
            body["reasoning"] = {"enabled": bool(effort)}
        elif effort:
            body["thinking"] = {"type": "enabled"}
        elif not off_pinned:
            body["thinking"] = {"type": "disabled"}
        if effort and compat["supportsReasoningEffort"]:
            body["reasoning_effort"] = _mapped(model, effort)
    elif fmt == "openrouter":
        if effort:
            body["reasoning"] = {"effort": _mapped(model, effort)}
        elif not off_pinned:
            body["reasoning"] = {"effort": levels["off"] if levels.get("off") is not None else "none"}
    elif fmt == "ant-ling" and effort:
        # openai-completions.js:610: the only branch whose test names the effort, so without one
        # an ant-ling route falls through to the plain ``reasoning_effort`` ``off`` branch (:636).
        if isinstance(levels.get(effort), str):
            body["reasoning"] = {"effort": levels[effort]}
    elif fmt == "string-thinking":
        if effort:
            body["thinking"] = _mapped(model, effort)
        elif not off_pinned:
            body["thinking"] = levels["off"] if levels.get("off") is not None else "none"
    elif fmt == "chat-template":
        kwargs = _chat_template_kwargs(model, compat, effort)
        if kwargs:
            body["chat_template_kwargs"] = kwargs
    elif effort and compat["supportsReasoningEffort"]:
        body["reasoning_effort"] = _mapped(model, effort)
    elif not effort and compat["supportsReasoningEffort"] and isinstance(levels.get("off"), str):
        body["reasoning_effort"] = levels["off"]


def _chat_template_kwargs(model: PiModel, compat: Mapping[str, Any], effort: str | None) -> dict[str, Any]:
    """pi-ai ``buildChatTemplateKwargs``: each ``compat.chatTemplateKwargs`` entry, a plain value
    as it is; an object (``{$var: "thinking.enabled"}``, ``omitWhenOff``) resolved from the
    effort and ``thinkingLevelMap``, an unresolved one left out."""
    levels = model.thinking_level_map or {}
    kwargs: dict[str, Any] = {}
    declared = compat.get("chatTemplateKwargs")
    for key, value in (declared.items() if isinstance(declared, Mapping) else ()):
        if not isinstance(value, (Mapping, list)):
            kwargs[key] = value
            continue
        spec = value if isinstance(value, Mapping) else {}
        if not effort and spec.get("omitWhenOff"):
            continue
        if spec.get("$var") == "thinking.enabled":
            kwargs[key] = bool(effort)
            continue
        level = effort or "off"
        if level not in levels:
            if effort:
                kwargs[key] = effort
        elif isinstance(levels[level], str):
            kwargs[key] = levels[level]
    return kwargs


def _cache_control(compat: Mapping[str, Any], retention: str) -> dict[str, str] | None:
    """pi-ai ``getCompatCacheControl``: Anthropic-style markers for a ``cacheControlFormat:
    anthropic`` endpoint (OpenRouter ``anthropic/`` models, or a route that declares it)."""
    if compat["cacheControlFormat"] != "anthropic" or retention == "none":
        return None
    if retention == "long" and compat["supportsLongCacheRetention"]:
        return {"type": "ephemeral", "ttl": "1h"}
    return {"type": "ephemeral"}


def _mark_text(message: dict[str, Any], cache: dict[str, str]) -> dict[str, Any] | None:
    """``message`` with ``cache`` on its text, as a new message (the old one may be another
    request's too): a non-empty string becomes a one-block array, else the last text part of an
    array takes it; None when there is no text to mark."""
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return None
        return {**message, "content": [{"type": "text", "text": content, "cache_control": cache}]}
    parts: list[dict[str, Any]] = content if isinstance(content, list) else []
    for at in range(len(parts) - 1, -1, -1):
        if parts[at].get("type") == "text":
            return {**message, "content": [*parts[:at], {**parts[at], "cache_control": cache}, *parts[at + 1:]]}
    return None


def _apply_cache_control(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
                         cache: dict[str, str]) -> None:
    """pi-ai ``applyAnthropicCacheControl`` (``api/openai-completions.js``): the first system or
    developer message, the last tool, and the last user/assistant/tool message that has text
    (walking back past ones without). A marked message is replaced in ``messages`` by a marked
    copy."""
    at = next((i for i, m in enumerate(messages) if m["role"] in ("system", "developer")), None)
    if at is not None:
        messages[at] = _mark_text(messages[at], cache) or messages[at]
    if tools:
        tools[-1]["cache_control"] = cache
    for at in range(len(messages) - 1, -1, -1):
        if messages[at]["role"] in ("user", "assistant", "tool"):
            marked = _mark_text(messages[at], cache)
            if marked is not None:
                messages[at] = marked
                return


def _routing(body: dict[str, Any], model: PiModel) -> None:
    """pi-ai's provider-routing fields, read from the model's own ``compat``: OpenRouter's
    ``provider`` and the Vercel AI Gateway's ``providerOptions.gateway`` (``only``/``order``)."""
    openrouter = model.compat.get("openRouterRouting")
    if js_truthy(openrouter):
        body["provider"] = openrouter
    vercel = model.compat.get("vercelGatewayRouting")
    if isinstance(vercel, Mapping):
        gateway = {k: vercel[k] for k in ("only", "order") if js_truthy(vercel.get(k))}
        if gateway:
            body["providerOptions"] = {"gateway": gateway}


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
    headers = [("accept", "application/json"), ("x-stainless-retry-count", "0"), ("x-stainless-lang", "js"),
               ("x-stainless-package-version", "6.26.0"), *platform]
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
