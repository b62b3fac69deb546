"""DSH's ``toPiContext`` (steps 1 and 2 of :mod:`dsh_audit.wire._piai`): a request's system prompt,
tools and messages as the pi-ai context DSH's adapter hands to pi-ai, replay state kept only for
the routes the adapter owns, and images through DSH's image path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._json import json_objects, json_type
from ..errors import RenderError
from ._images import has_image
from ._piai_facts import PI_MAX_REQUEST_IMAGE_BYTES, PiModel
from ._piai_images import image_messages, user_content
from ._piai_js import js_parse

__all__ = ["parse_arguments", "pi_assistant", "pi_context"]


def parse_arguments(raw: Any) -> dict[str, Any]:
    """DSH ``parseArguments``: the parsed object, or ``{}`` for anything else.

    Raises:
        RenderError: the arguments nest deeper than Python's parser goes (JavaScript's reads
            them; the body DSH sent holds them parsed, so it cannot be rebuilt).
    """
    try:
        parsed = js_parse(raw) if isinstance(raw, str) else None
    except ValueError:
        return {}
    except RecursionError:
        raise RenderError("a tool call's arguments nest JSON objects or arrays too deep for dsh-audit to parse; "
                          "DSH's JSON.parse reads them, so the body it sent cannot be rebuilt",
                          hint="the request is compared as log JSON where a view needs its prompt") from None
    return parsed if isinstance(parsed, dict) else {}


def _text(block: Mapping[str, Any]) -> str:
    """A block's ``text``; one that is not a string counts as no text, as on the DeepSeek route."""
    text = block.get("text")
    return text if isinstance(text, str) else ""


def _text_of(message: Mapping[str, Any]) -> str:
    return "".join(_text(b) for b in json_objects(message.get("content")) if b.get("type") == "text")


def _result_text(blocks: Any) -> str:
    parts = []
    for block in json_objects(blocks):
        if block.get("type") == "text":
            parts.append(_text(block))
        elif block.get("type") == "tool-result":
            parts.append(_result_text(block.get("content")))
    return "".join(parts)


_STOP_REASONS = ("stop", "length", "toolUse", "error", "aborted")
_PI_BLOCK = ("text", "reasoning", "tool-call")
_SIGNATURES = ("textSignature", "thinkingSignature", "thoughtSignature")


def _valid_envelope(message: Mapping[str, Any], source: Mapping[str, Any]) -> dict[str, Any] | None:
    state = source.get("replayState")
    response = state.get("response") if isinstance(state, dict) else None
    blocks = state.get("blocks") if isinstance(state, dict) else None
    if not isinstance(response, dict) or response.get("kind") != "pi-ai" or response.get("version") != 2:
        return None
    if any(not isinstance(response.get(k), str) or not response.get(k) for k in ("api", "provider", "model")):
        return None
    if response.get("stopReason") not in _STOP_REASONS or not isinstance(blocks, list):
        return None
    if any(k in response and not isinstance(response[k], str) for k in ("responseModel", "responseId")):
        return None
    if response["provider"] != source.get("provider") or response["model"] != source.get("model"):
        return None
    content = json_objects(message.get("content"))
    if len(blocks) != len(content):
        return None
    for block, replay in zip(content, blocks):
        if not isinstance(replay, dict) or replay.get("type") not in _PI_BLOCK or replay["type"] != block.get("type"):
            return None
        if any(k in replay and not isinstance(replay[k], str) for k in _SIGNATURES):
            return None
        if "redacted" in replay and not isinstance(replay["redacted"], bool):
            return None
    return state


def _pi_block(block: Mapping[str, Any], replay: Mapping[str, Any] | None) -> dict[str, Any] | None:
    kind = block.get("type")
    replay = replay or {}
    if kind == "text":
        out: dict[str, Any] = {"type": "text", "text": _text(block)}
        if "textSignature" in replay:
            out["textSignature"] = replay["textSignature"]
        return out
    if kind == "reasoning":
        out = {"type": "thinking", "thinking": _text(block)}
        for key in ("thinkingSignature", "redacted"):
            if key in replay:
                out[key] = replay[key]
        return out
    if kind == "tool-call":
        _require_text(block, "id", "a tool call's id")
        _require_text(block, "name", "a tool call's name")
        out = {"type": "toolCall", "id": block.get("id"), "name": block.get("name"),
               "arguments": parse_arguments(block.get("arguments"))}
        if "thoughtSignature" in replay:
            out["thoughtSignature"] = replay["thoughtSignature"]
        return out
    if kind == "image":
        raise RenderError("pi-ai cannot replay an assistant image", dsh_code="UNSUPPORTED_CONTENT")
    return None  # plugin block types are not representable in pi-ai


_DAMAGED = "the log was edited or damaged; `dsh-audit validate` lists what else is wrong in it"


def _require_text(block: Mapping[str, Any], key: str, what: str) -> str:
    """pi-ai reads tool-call ids and names as strings (it normalises and measures them): another
    value throws inside the adapter, so DSH could not have sent the request."""
    value = block.get(key)
    if not isinstance(value, str):
        shown = "missing" if value is None and key not in block else f"a JSON {json_type(value)}"
        raise RenderError(f"{what} is {shown}, not a string; DSH's pi-ai adapter would throw on it",
                          hint=_DAMAGED)
    return value


def _tools(value: Any) -> list[Mapping[str, Any]]:
    """The header's tools as DSH's ``toPiContext`` maps them: a list of objects with string names."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise RenderError(f"the header's tools is a JSON {json_type(value)}, not a list; DSH's adapter fails on it "
                          "(TypeError: options.tools?.map is not a function)", dsh_code="TypeError", hint=_DAMAGED)
    for tool in value:
        if not isinstance(tool, Mapping):
            raise RenderError(f"a tool of the header is a JSON {json_type(tool)}, not an object; "
                              "DSH's pi-ai adapter would throw on it", hint=_DAMAGED)
        _require_text(tool, "name", "a tool's name")
    return value


def pi_assistant(message: Mapping[str, Any], *, owned: bool) -> dict[str, Any]:
    """DSH ``toPiAssistant``: native when the envelope is usable and owned, foreign otherwise."""
    source = message.get("source") or {}
    state = _valid_envelope(message, source) if owned and source.get("kind") == "model" else None
    blocks = json_objects(message.get("content"))
    replays = state["blocks"] if state else [None] * len(blocks)
    content = [b for b in (_pi_block(blk, rp) for blk, rp in zip(blocks, replays))
               if b is not None]
    if state is not None:
        response = state["response"]
        return {"role": "assistant", "content": content, "api": response["api"],
                "provider": response["provider"], "model": response["model"],
                "stopReason": response["stopReason"]}
    is_model = source.get("kind") == "model"
    return {"role": "assistant", "content": content, "api": "dsh-foreign",
            "provider": source.get("provider", "dsh-foreign") if is_model else "dsh-foreign",
            "model": source.get("model", "dsh-foreign") if is_model else "dsh-foreign",
            "stopReason": "toolUse" if any(b["type"] == "toolCall" for b in content) else "stop"}


def _at(exc: RenderError, seq: int | None) -> RenderError:
    if exc.seq is None:
        exc.seq = seq
    return exc


def _pi_message(message: Mapping[str, Any], owned: frozenset[str] | None, tool_names: dict[str, str],
                images: Mapping[str, bytes] | None, image_path: bool) -> list[dict[str, Any]]:
    """One DSH message as the pi-ai messages it becomes (``tool_names`` collects tool-call names).

    ``image_path``: the request holds an image, so DSH converts it with ``toPiContextWithImages``
    (user content and tool results through ``userContent``); the text-only path gives the same
    messages wherever there is no image.
    """
    role = message.get("role")
    if role == "system":
        return [{"role": "user", "content": _text_of(message)}]
    if role == "assistant":
        source = message.get("source") or {}
        assistant = pi_assistant(message, owned=owned is None or source.get("provider") in owned)
        tool_names.update((b["id"], b["name"]) for b in assistant["content"] if b["type"] == "toolCall")
        return [assistant]
    out: list[dict[str, Any]] = []
    blocks = json_objects(message.get("content"))
    results = [b for b in blocks if b.get("type") == "tool-result"]
    content = user_content([b for b in blocks if b.get("type") != "tool-result"], images) if image_path \
        else _text_of(message)
    if content or not results:
        out.append({"role": "user", "content": content})
    for result in results:
        call_id = _require_text(result, "toolCallId", "a tool result's toolCallId")
        inner = user_content(result.get("content"), images) if image_path else _result_text(result.get("content"))
        out.append({"role": "toolResult", "toolCallId": call_id, "toolName": tool_names.get(call_id, "unknown"),
                    "content": inner if isinstance(inner, list) else [{"type": "text", "text": inner or "(no output)"}],
                    "isError": False if result.get("isError") is None else result["isError"]})  # ``?? false``
    return out


def pi_context(request: Any, *, provider: str, owned_routes: frozenset[str] | None = None,
               extra_messages: tuple[Mapping[str, Any], ...] = (), model: PiModel | None = None,
               images: Mapping[str, bytes] | None = None,
               max_request_image_bytes: int | None = PI_MAX_REQUEST_IMAGE_BYTES,
               offloaded_image_text: str | None = None) -> dict[str, Any]:
    """DSH ``toPiContext`` over a request: ``{systemPrompt?, messages, tools?}``.

    A request with an image anywhere takes DSH's image path (``adapter.ts`` ``stream``,
    ``context.ts`` ``toPiContextWithImages``): ``model`` (when given) must take image input, only
    user messages may hold images, the oldest images beyond ``max_request_image_bytes`` become
    ``offloaded_image_text`` (default: DSH's ``OFFLOADED_IMAGE_TEXT``), and every other image
    becomes pi-ai ``ImageContent`` with the bytes of ``images`` (by ``attachmentId``; the log holds
    only the reference).

    ``owned_routes`` are the routes of the pi-ai adapter instance that serves ``provider``, the
    target route; assistant messages of other routes lose their replay state first (DSH
    ``forAdapter``, spec §8.0). None (the default): every route. DSH's ``llm-pi-ai`` plugin
    registers one adapter instance for all the routes of its configuration (``llm-pi-ai/src/index.ts``
    ``apply``: ``registerAdapter(routes, adapter)``) and DSH's composition mounts one such plugin,
    so every pi-ai replay envelope in a history is the target adapter's own; a message from the
    native DeepSeek adapter carries none and is foreign whatever this says. Kept or stripped,
    another route's message is another model to pi-ai; the body differs only on its redacted
    thinking (kept, pi-ai drops it; foreign, its text is sent) and on an envelope whose
    ``stopReason`` is ``error`` or ``aborted`` (kept, pi-ai drops the message; foreign, it is sent
    as a ``stop`` or ``toolUse`` turn). DSH's envelope check accepts those two, but DSH 0.1.0-rc.8
    writes an envelope only on pi-ai's ``done`` and no message for a failed attempt.
    """
    tool_names: dict[str, str] = {}
    messages: list[dict[str, Any]] = []
    seqs = getattr(request, "message_seqs", ())
    own_seq = getattr(request, "first_chunk_seq", None)  # an auxiliary call's event: its messages and header
    source = (*request.messages, *extra_messages)
    image_path = any(has_image(m.get("content")) for m in source)
    if image_path:
        try:
            source = image_messages(source, model, max_request_image_bytes, offloaded_image_text)
        except RenderError as exc:
            index = exc.seq if exc.seq is not None else 0
            exc.seq = None
            raise _at(exc, seqs[index] if index < len(seqs) else own_seq) from None
    for index, message in enumerate(source):
        try:
            messages += _pi_message(message, owned_routes, tool_names, images, image_path)
        except RenderError as exc:
            raise _at(exc, seqs[index] if index < len(seqs) else own_seq) from None
    context = _header_context(request)
    context["messages"] = messages
    if "tools" in context:  # pi-ai's key order: systemPrompt, messages, tools
        context["tools"] = context.pop("tools")
    return context


def _header_context(request: Any) -> dict[str, Any]:
    """``{systemPrompt?, tools?}`` of the request's header, as :func:`pi_context` maps them."""
    header = request.header or {}
    context: dict[str, Any] = {}
    try:
        system = header.get("system")
        if isinstance(system, str):
            context["systemPrompt"] = system
        elif system is not None and system not in (0, False):  # pi-ai skips a falsy prompt and
            raise RenderError(f"the system prompt is a JSON {json_type(system)}, not a string; "  # throws
                              "DSH's pi-ai adapter would throw on it", hint=_DAMAGED)  # on any other
        tools = [{k: v for k, v in (("name", t.get("name")), ("description", t.get("description")),
                                    ("parameters", t.get("parameters"))) if k in t}
                 for t in _tools(header.get("tools"))]
    except RenderError as exc:
        header_seq = getattr(request, "header_seq", None)
        raise _at(exc, getattr(request, "first_chunk_seq", None) if header_seq is None else header_seq) from None
    if tools:
        context["tools"] = tools
    return context
