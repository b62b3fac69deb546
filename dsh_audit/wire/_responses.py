"""pi-ai's OpenAI Responses rendering (``POST {baseURL}/responses``) of a DSH request.

Models pi-ai **0.82.1** ``api/openai-responses.js`` (``streamSimple`` :145-154, ``createClient``
:155-187, ``buildParams`` :188-247, ``getCompat`` :50-60) and ``api/openai-responses-shared.js``
(``convertResponsesMessages`` :61-253, ``convertResponsesTools`` :257-289, ``parseTextSignature``
:16-34, ``convertToolResultOutput`` :35-57) under ``openai`` 6.26.0, as DSH 0.1.0-rc.8's
``llm-pi-ai`` adapter drives it: pi-ai's catalog provider ``openai`` (``providers/data/openai.json``,
every model ``openai-responses``) and hand-declared routes with ``api: openai-responses`` (DSH
``llm-pi-ai/src/catalog.ts:303-311``). The shared context conversion lives in
:mod:`dsh_audit.wire._piai_context`, the estimate, clamp and ``transformMessages`` in
:mod:`dsh_audit.wire._piai_transform`, their assembly in :mod:`dsh_audit.wire._piai`.

Body, in key order: ``model``, ``input``, ``stream: true``, ``prompt_cache_key`` (the session id,
its first 64 code points, unless retention is ``none``; ``openai-prompt-cache.js:2-9``),
``prompt_cache_retention: "24h"`` (long retention where ``supportsLongCacheRetention``),
``prompt_cache_options: {mode: "explicit"}`` (retention ``none`` on a model with
``supportsExplicitPromptCacheMode``), ``store: false``, ``max_output_tokens`` (the clamped cap,
raised to 16: ``openai-responses.js:16``, :209-211), ``temperature``, ``tools`` (``{type:
"function", name, description, parameters}``, ``strict: false`` only where
``supportsStrictMode``), ``reasoning`` (``{effort, summary: "auto"}`` with an effort, and then
``include: ["reasoning.encrypted_content"]``; without one ``{effort: thinkingLevelMap.off ??
"none"}`` unless the map pins ``off``). DSH's ``streamSimple`` call passes no ``reasoningSummary``,
``serviceTier`` or ``toolChoice`` (``simple-options.js`` ``buildBaseOptions`` does not carry them),
so ``summary`` is always ``auto`` and ``service_tier``/``tool_choice`` never appear.

``input`` items: the system prompt as a ``developer`` (reasoning model, unless
``supportsDeveloperRole: false``) or ``system`` message with a string content; a user message as
``{role: "user", content: [input_text | input_image]}``; each assistant block as its own item: a
reasoning item replayed from the thinking signature (the Responses reasoning item pi-ai recorded,
``JSON.parse``d: same model only, others' thinking is text by then), an ``output_text`` message
(id and ``phase`` from the text signature, else ``msg_pi_<n>[_<k>]``; an id over 64 UTF-16 units
becomes ``msg_<shortHash>``), a ``function_call`` (``call_id``, and ``id`` when the item id is an
``fc_`` id of the same model); a tool result as a ``function_call_output`` (its text, or
``input_text``/``input_image`` items when it carries images for an image model). Tool-call ids of
another model are normalised (``normalizeToolCallId`` :73-87): each ``|`` part cleaned to
``[a-zA-Z0-9_-]``, cut to 64 and stripped of trailing ``_``, and for the ``openai``,
``openai-codex`` and ``opencode`` providers the item id of another provider or API becomes
``fc_<shortHash>``.

Headers: the SDK's (``accept``, ``x-stainless-*``), then pi-ai's session affinity
(``session_id`` and ``x-client-request-id``, or OpenRouter's ``x-session-id``; whenever a session id
is sent, :155-176), DSH's profile headers and ``user-agent``, ``content-type``.

Checked against pi-ai 0.82.1's own output for synthetic sessions (``tests/data/piai_oracle/resp-*``):
no capture of a real Responses request exists in the corpus. Not modelled (DSH never reaches
them): grammar (custom) tools and deferred tools (DSH's tools carry no ``constrainedSampling`` and
its tool results no ``addedToolNames``). GitHub Copilot's dynamic headers are
:func:`~dsh_audit.wire._piai.copilot_headers`, as on the other two APIs. xAI's extra
``include`` is followed but not checked by a recorded case.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import RenderError
from ..jsjson import stringify
from ._openai_messages import short_hash
from ._piai import CopilotHeaders, body_context
from ._piai_call import PiCall, clamp_level
from ._piai_facts import PiModel, timeout_header
from ._piai_js import clean_id, js_len, js_parse, sanitize_surrogates
from ._piai_models import PiRenderer, merge_profile_headers, user_agent
from ._piai_transform import transform_messages
from ._registry import register
from ._types import WireRequest

__all__ = ["ResponsesRenderer", "render_responses", "responses_body"]

#: pi-ai's ``OPENAI_TOOL_CALL_PROVIDERS`` (``openai-responses.js:14``): providers whose tool-call
#: ids keep a normalised Responses item id after ``|``.
_TOOL_CALL_PROVIDERS = frozenset({"openai", "openai-codex", "opencode"})
#: ``OPENAI_RESPONSES_MIN_OUTPUT_TOKENS`` (``openai-responses.js:16``).
MIN_OUTPUT_TOKENS = 16
_TRAILING_UNDERSCORES = re.compile("_+$")
_INCLUDE = ["reasoning.encrypted_content"]


def _compat(model: PiModel, name: str, default: Any) -> Any:
    """pi-ai ``getCompat`` (``openai-responses.js:50-60``): ``model.compat?.<name> ?? default``."""
    value = model.compat.get(name)
    return default if value is None else value


def _affinity_format(model: PiModel) -> str:
    """``sessionAffinityFormat``: the compat's, else OpenRouter's for an OpenRouter provider or URL
    (``detectSessionAffinityFormat``, :34-36), else OpenAI's."""
    detected = "openrouter" if model.provider == "openrouter" or "openrouter.ai" in model.base_url else "openai"
    return str(_compat(model, "sessionAffinityFormat", detected))


def _id_part(part: str) -> str:
    """``normalizeIdPart`` (``openai-responses-shared.js:64-68``): cleaned, cut to 64 (all ASCII by
    then), trailing underscores stripped."""
    return _TRAILING_UNDERSCORES.sub("", clean_id(part)[:64])


def _normalize_id(call_id: str, model: PiModel, message: Mapping[str, Any]) -> str:
    """``normalizeToolCallId`` (``openai-responses-shared.js:73-87``), which ``transformMessages``
    applies to another model's tool calls (``transform-messages.js:107-113``)."""
    if model.provider not in _TOOL_CALL_PROVIDERS or "|" not in call_id:
        return _id_part(call_id)
    parts = call_id.split("|")
    call, item = _id_part(parts[0]), parts[1]
    if message["provider"] != model.provider or message["api"] != model.api:
        normalized = f"fc_{short_hash(item)}"[:64]
    else:
        normalized = _id_part(item)
    if not normalized.startswith("fc_"):
        normalized = _id_part(f"fc_{normalized}")
    return f"{call}|{normalized}"


def _text_signature(signature: Any) -> tuple[str, str | None] | None:
    """``parseTextSignature`` (``openai-responses-shared.js:16-34``): the message id and phase a
    text block's signature names (a v1 JSON payload, else the whole text as a legacy id)."""
    if not isinstance(signature, str) or not signature:
        return None
    if signature.startswith("{"):
        try:
            parsed = js_parse(signature)
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, dict):
            version = parsed.get("v")
            if type(version) in (int, float) and version == 1 and isinstance(parsed.get("id"), str):
                phase = parsed.get("phase")
                return parsed["id"], phase if phase in ("commentary", "final_answer") else None
    return signature, None


def _image(block: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "input_image", "detail": "auto", "image_url": f"data:{block['mimeType']};base64,{block['data']}"}


def _tool_output(model: PiModel, content: list[dict[str, Any]]) -> Any:
    """``convertToolResultOutput`` (``openai-responses-shared.js:35-57``)."""
    text = "\n".join(b["text"] for b in content if b["type"] == "text")
    images = [b for b in content if b["type"] == "image"]
    if not images or "image" not in model.input:
        return sanitize_surrogates(text or ("(see attached image)" if images else "(no tool output)"))
    out: list[dict[str, Any]] = [{"type": "input_text", "text": sanitize_surrogates(text)}] if text else []
    return out + [_image(b) for b in images]


class _SignatureRefused(RenderError):
    """A refusal of a reasoning block's thinking signature that keeps the signature: the converter
    sees pi-ai's transformed messages, not the log's, so :func:`responses_body` places the refusal
    at the logged message that holds it (:func:`_holder_seq`), as every pi-ai render refusal is placed."""

    def __init__(self, message: str, *, signature: str = "", hint: str | None = None) -> None:
        # defaults: an exception is rebuilt from its message alone when it crosses a process pool
        # (pickle), then given its attributes back
        super().__init__(message, hint=hint)
        self.signature = signature


def _reasoning_item(signature: str) -> Any:
    try:
        return js_parse(signature)
    except ValueError:
        raise _SignatureRefused("a reasoning block's thinking signature is not JSON: pi-ai's openai-responses "
                                "conversion JSON.parses it to replay the reasoning item and throws, so DSH could "
                                "not have sent this request", signature=signature, hint="the log was edited or "
                                "damaged; `dsh-audit validate` lists what else is wrong in it") from None
    except RecursionError:  # JSON all the same: JavaScript's JSON.parse reads it (as parse_arguments says)
        raise _SignatureRefused("a reasoning block's thinking signature nests JSON objects or arrays too deep for "
                                "dsh-audit to parse; DSH's JSON.parse reads it, so the body it sent cannot be "
                                "rebuilt", signature=signature,
                                hint="the request is compared as log JSON where a view needs its prompt") from None


def _holder_seq(request: Any, signature: str) -> int | None:
    """The seq of the logged message of ``request`` whose pi-ai replay envelope holds the thinking
    ``signature`` (the very string the conversion was handed, else an equal one), else the request's
    own first chunk's, as :func:`~dsh_audit.wire._piai_context.pi_context` places a message it refuses.

    Example:
        >>> from types import SimpleNamespace
        >>> held = {"role": "assistant", "source": {"replayState": {"blocks": [{"thinkingSignature": "x"}]}}}
        >>> request = SimpleNamespace(messages=({"role": "user"}, held), message_seqs=(4, 9), first_chunk_seq=12)
        >>> _holder_seq(request, "x"), _holder_seq(request, "y")
        (9, 12)
    """
    pairs = list(zip(request.messages, getattr(request, "message_seqs", ())))
    for same in (operator.is_, operator.eq):
        for message, seq in pairs:
            source = message.get("source") if message.get("role") == "assistant" else None
            state = source.get("replayState") if isinstance(source, Mapping) else None
            blocks = state.get("blocks") if isinstance(state, Mapping) else None
            if isinstance(blocks, list) and any(isinstance(b, Mapping) and same(b.get("thinkingSignature"), signature)
                                                for b in blocks):
                return int(seq)
    return getattr(request, "first_chunk_seq", None)


class _Converter:
    """``convertResponsesMessages`` without the system message, one transformed message at a time
    (:class:`~dsh_audit.wire._piai.Sink`): every message converts on its own, and ``index`` is
    pi-ai's ``msgIndex`` (the fallback message ids), which a skipped message does not advance."""

    __slots__ = ("index", "items", "model")

    def __init__(self, model: PiModel) -> None:
        self.model = model
        self.items: list[Any] = []
        self.index = 0

    def add(self, msg: dict[str, Any]) -> None:
        self.index += self._convert(msg, self.items, self.index)

    def finish(self, extra: list[dict[str, Any]]) -> list[Any]:
        items, index = list(self.items), self.index
        for msg in extra:
            index += self._convert(msg, items, index)
        return items

    def _convert(self, msg: dict[str, Any], items: list[Any], index: int) -> int:
        """Append ``msg``'s items; 1 when pi-ai counts it (:250), 0 when it skips it (``continue``)."""
        model = self.model
        if msg["role"] == "user":
            content = msg["content"]
            if isinstance(content, str):
                text = sanitize_surrogates(content)
                items.append({"role": "user", "content": [{"type": "input_text", "text": text}]})
                return 1
            parts = [{"type": "input_text", "text": sanitize_surrogates(b["text"])} if b["type"] == "text"
                     else _image(b) for b in content]
            if not parts:
                return 0
            items.append({"role": "user", "content": parts})
            return 1
        if msg["role"] == "assistant":
            output = self._assistant(msg, index)
            if not output:
                return 0
            items.extend(output)
            return 1
        call_id = msg["toolCallId"].split("|")[0]
        output = _tool_output(model, msg["content"])
        items.append({"type": "function_call_output", "call_id": call_id, "output": output})
        return 1

    def _assistant(self, msg: dict[str, Any], index: int) -> list[Any]:
        model = self.model
        different = msg["model"] != model.id and msg["provider"] == model.provider and msg["api"] == model.api
        output: list[Any] = []
        texts = 0
        for block in msg["content"]:
            kind = block["type"]
            if kind == "thinking":
                if block.get("thinkingSignature"):
                    output.append(_reasoning_item(block["thinkingSignature"]))
            elif kind == "text":
                parsed = _text_signature(block.get("textSignature"))
                fallback = f"msg_pi_{index}" if texts == 0 else f"msg_pi_{index}_{texts}"
                texts += 1
                msg_id = parsed[0] if parsed else None
                if not msg_id:
                    msg_id = fallback
                elif js_len(msg_id) > 64:
                    msg_id = f"msg_{short_hash(msg_id)}"
                item: dict[str, Any] = {"type": "message", "role": "assistant", "content": [
                    {"type": "output_text", "text": sanitize_surrogates(block["text"]), "annotations": []}],
                    "status": "completed", "id": msg_id}
                if parsed and parsed[1] is not None:
                    item["phase"] = parsed[1]
                output.append(item)
            elif kind == "toolCall":
                parts = block["id"].split("|")
                item_id = parts[1] if len(parts) > 1 else None
                keep = item_id is not None and item_id.startswith("fc_") and not different
                call: dict[str, Any] = {"type": "function_call"}
                if keep:
                    call["id"] = item_id
                call.update(call_id=parts[0], name=block["name"], arguments=stringify(block["arguments"]))
                output.append(call)
        return output


def _system(context: Mapping[str, Any], model: PiModel) -> list[dict[str, Any]]:
    """The system prompt's item (``openai-responses-shared.js:89-97``): pi-ai reads
    ``supportsDeveloperRole`` from the model's own compat (``!== false``)."""
    if not context.get("systemPrompt"):
        return []
    role = "developer" if model.reasoning and model.compat.get("supportsDeveloperRole") is not False else "system"
    return [{"role": role, "content": sanitize_surrogates(context["systemPrompt"])}]


def _tools(tools: list[Mapping[str, Any]], model: PiModel) -> list[dict[str, Any]]:
    """``splitDeferredTools`` (``utils/deferred-tools.js:3-8``: one tool per name, the first one's
    place and the last one's definition) then ``convertResponsesTools`` (:257-289)."""
    unique: dict[str, Mapping[str, Any]] = {}
    for tool in tools:
        unique[tool["name"]] = tool
    strict = bool(_compat(model, "supportsStrictMode", False))
    out = []
    for tool in unique.values():
        entry: dict[str, Any] = {"type": "function", "name": tool["name"]}
        for key in ("description", "parameters"):
            if key in tool:
                entry[key] = tool[key]
        if strict:
            entry["strict"] = False
        out.append(entry)
    return out


def _reasoning(body: dict[str, Any], model: PiModel, effort: str | None) -> None:
    """``buildParams``'s reasoning fields (``openai-responses.js:227-245``)."""
    if not model.reasoning:
        return
    levels = model.thinking_level_map or {}
    if effort:
        mapped = levels.get(effort)
        body["reasoning"] = {"effort": effort if mapped is None else mapped, "summary": "auto"}
        body["include"] = list(_INCLUDE)
    elif model.provider != "github-copilot" and not model.pins("off"):
        off = levels.get("off")
        body["reasoning"] = {"effort": "none" if off is None else off}
    if model.provider == "xai":
        body["include"] = list(_INCLUDE)


def responses_body(request: Any, call: PiCall, *, owned_routes: frozenset[str] | None = None,
                   compaction_instruction: str | None = None, images: Mapping[str, bytes] | None = None,
                   offloaded_image_text: str | None = None, state: dict[str, Any] | None = None) -> dict[str, Any]:
    """The request body as a JSON value (keys in wire order), before serialisation.

    ``state``: a renderer's own, kept between its requests (as :func:`~dsh_audit.wire._openai.openai_body`).

    Raises:
        RenderError: as :func:`~dsh_audit.wire._piai.request_context`, or a same-model reasoning
            block whose signature is not JSON (pi-ai throws on it).
    """
    model = call.model
    context, _, max_tokens, fold = body_context(
        state, request, call, owned_routes=owned_routes, normalize=_normalize_id, sink=_Converter,
        compaction_instruction=compaction_instruction, images=images, offloaded_image_text=offloaded_image_text)
    try:
        if fold is not None:
            items = fold.sink.finish(fold.transform.tail())
        else:
            converter = _Converter(model)
            items = converter.finish(transform_messages(context["messages"], model, _normalize_id))
    except _SignatureRefused as exc:  # at the logged message holding the block, as render and check say it
        exc.seq = _holder_seq(request, exc.signature) if exc.seq is None else exc.seq
        raise
    effort = clamp_level(model, call.reasoning) if call.reasoning else None
    effort = None if effort == "off" else effort
    retention = call.cache_retention
    body: dict[str, Any] = {"model": model.id, "input": _system(context, model) + items, "stream": True}
    if retention != "none" and call.session_id is not None:
        body["prompt_cache_key"] = call.session_id[:64]  # Array.from: code points (openai-prompt-cache.js:5)
    if retention == "long" and _compat(model, "supportsLongCacheRetention", True):
        body["prompt_cache_retention"] = "24h"
    if retention == "none" and _compat(model, "supportsExplicitPromptCacheMode", False):
        body["prompt_cache_options"] = {"mode": "explicit"}
    body["store"] = False
    if max_tokens:
        body["max_output_tokens"] = max(max_tokens, MIN_OUTPUT_TOKENS)
    if call.temperature is not None:
        body["temperature"] = call.temperature
    if context.get("tools"):
        body["tools"] = _tools(context["tools"], model)
    _reasoning(body, model, effort)
    return body


def _headers(call: PiCall, agent: str, platform: tuple[tuple[str, str], ...],
             dynamic: tuple[tuple[str, str], ...] = ()) -> tuple[tuple[str, str], ...]:
    """The OpenAI SDK's headers with pi-ai's ``defaultHeaders`` (``createClient``, :155-187)."""
    headers = [("accept", "application/json"), ("x-stainless-retry-count", "0"), *timeout_header(call.model.profile),
               ("x-stainless-lang", "js"), ("x-stainless-package-version", "6.26.0"), *platform]
    session = call.session_id if call.cache_retention != "none" else None
    if session:
        if _affinity_format(call.model) == "openrouter":
            headers.append(("x-session-id", session))
        else:
            if _affinity_format(call.model) == "openai":
                headers.append(("session_id", session))
            headers.append(("x-client-request-id", session))
    headers += [("user-agent", agent), ("content-type", "application/json")]
    return tuple(merge_profile_headers(headers, call, client=("x-session-id", "session_id", "x-client-request-id"),
                                       dynamic=dynamic))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class ResponsesRenderer(CopilotHeaders, PiRenderer):
    """Render :class:`~dsh_audit.replay.Request` values as pi-ai 0.82.1 sends OpenAI Responses.

    Takes the settings of :class:`PiRenderer` (``thinking_budgets`` is accepted for symmetry: the
    Responses API takes no thinking budget).

    Example:
        >>> renderer = ResponsesRenderer()
        >>> bodies = [renderer.render(r).body for r in requests]  # doctest: +SKIP
    """

    adapter = "responses"
    api = "openai-responses"
    endpoint = "/responses"
    other = ("openai-completions", "openai")

    def body(self, request: Any, call: PiCall, *, compaction_instruction: str | None,
             images: Mapping[str, bytes] | None = None, offloaded_image_text: str | None = None) -> dict[str, Any]:
        """See :func:`responses_body`."""
        return responses_body(request, call, owned_routes=self.owned_routes,
                              compaction_instruction=compaction_instruction, images=images,
                              offloaded_image_text=offloaded_image_text, state=self.state)

    def headers(self, call: PiCall, body: Mapping[str, Any],
                dynamic: tuple[tuple[str, str], ...] = ()) -> tuple[tuple[str, str], ...]:
        """The OpenAI SDK's headers for this call (credential withheld)."""
        return _headers(call, user_agent(self.version), self.platform, dynamic)


def render_responses(request: Any, *, compaction_instruction: str | None = None, **options: Any) -> WireRequest:
    """Render one request as pi-ai 0.82.1 sends it to an OpenAI Responses endpoint.

    ``options`` are :class:`ResponsesRenderer` settings (``models``, ``profile_reasoning``, ...).

    Raises:
        RenderError: DSH would refuse the request, or the log lacks a fact the body needs.

    Example:
        >>> wire = render_responses(request)  # doctest: +SKIP
        >>> wire.path  # doctest: +SKIP
        '/v1/responses'
    """
    return ResponsesRenderer(**options).render(request, compaction_instruction=compaction_instruction)


register("responses", ResponsesRenderer)
