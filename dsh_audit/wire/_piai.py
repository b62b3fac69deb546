"""What the two pi-ai renderers share: DSH's context conversion and pi-ai's pre-processing.

Model facts and DSH's call options live in :mod:`dsh_audit.wire._piai_models`.

Models pi-ai **0.82.1** (``@earendil-works/pi-ai``, the version DSH 0.1.0-rc.8 pins) as read from
its published ``dist/`` (``api/transform-messages.js``, ``api/simple-options.js``,
``utils/estimate.js``, ``utils/sanitize-unicode.js``), and DSH's side of the adapter
(``packages/llm/llm-pi-ai/src/context.ts``, ``replay.ts``, ``adapter.ts``; spec §8.0, §8.2).
Nothing here is pi-ai's code: the rules are restated and re-implemented in Python.

Steps shared by both wire formats, in the order DSH and pi-ai apply them:

1. **Replay-state ownership** (DSH ``forAdapter``, spec §8.0): an assistant message from a route
   the pi-ai adapter does not own loses its ``replayState``.
2. **Context conversion** (DSH ``toPiContext``): system prompt, tools ``{name, description,
   parameters}``, and messages. An assistant message with a valid pi-ai v2 envelope that matches
   its content block for block becomes a *native* pi-ai message (signatures restored); any other
   becomes *foreign* (``api: dsh-foreign``). Tool-call arguments are parsed with JavaScript
   ``JSON.parse`` semantics (integer-like keys first), malformed or non-object ones become ``{}``.
   A request with an image takes DSH's image path (``toPiContextWithImages``): the model must take
   images, the oldest images over the route's bound are offloaded, and user content and tool
   results with an image become text/``ImageContent`` lists, the bytes given by the caller (the
   log holds only the attachment reference).
3. **The output cap** (``buildBaseOptions``): ``min(requested or model.maxTokens,
   max(1, contextWindow - estimate - 4096))`` where ``estimate`` is pi-ai's character-count
   estimator (chars / 4, rounded up per message, plus system prompt and tools). DSH's
   historical messages carry zero usage, so the estimate is always the character count.
   ``contextWindow`` is the one DSH logged in ``request/context`` for this route and model (what
   pi-ai resolved at the time; a title call takes its route's latest), else the route file's,
   else pi-ai's catalog.
4. **transformMessages**: thinking of another model becomes text, redacted thinking of another
   model is dropped, tool-call ids are normalised per API, errored/aborted assistant turns are
   skipped and orphaned tool calls get a synthetic ``"No result provided"`` error result.

A renderer converts a loop request's messages incrementally (:func:`folded_request_context`):
steps 2 and 4 and the adapter's ``convertMessages`` are folded one DSH message at a time, each
message's conversion is made once per message object (what it takes from its context, the tool
names of earlier calls, is checked on reuse), and the only parts that depend on later messages
(the synthetic results of a trailing orphaned call, a trailing run of tool results, the last
message's cache marker) are made per request, without changing the fold; so a log renders in time
linear in its messages, and its bodies are those of a fresh conversion, byte for byte.

Verified against the captures in ``corpus/live-pi`` (c1: 10 loop + 1 title Anthropic bodies, c3:
5 loop + 1 title OpenAI bodies): native replay with signatures, foreign conversion of another
model's thinking, separate consecutive user messages, grouped tool results, the uncapped
``max_tokens`` (the clamp is computed but never binds there). The clamp itself, orphan results,
redacted thinking and id normalisation are not exercised by a capture; they are checked against
pi-ai 0.82.1's own output for synthetic sessions (``tests/data/piai_oracle``), which takes this
module's context conversion as its input.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from operator import is_
from typing import Any, Protocol

from .._json import json_objects, json_type, refuse_constant
from ..errors import RenderError
from ..jsjson import has_surrogate, stringify
from ..replay import MessageView
from ._images import has_image
from ._piai_images import image_messages, user_content
from ._piai_models import CONTEXT_SAFETY_TOKENS, PI_MAX_REQUEST_IMAGE_BYTES, PiCall, PiModel, compaction_messages

__all__ = [
    "CopilotHeaders",
    "body_context",
    "clamp_max_tokens",
    "clean_id",
    "copilot_headers",
    "Sink",
    "Transform",
    "estimate_context_tokens",
    "folded_request_context",
    "js_blank",
    "js_head",
    "js_len",
    "js_parse",
    "parse_arguments",
    "pi_assistant",
    "pi_context",
    "request_context",
    "sanitize_surrogates",
    "transform_messages",
]

# --- JavaScript string and JSON semantics -------------------------------------------------------

_LONE_SURROGATE = re.compile("[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]")
_ARRAY_INDEX = re.compile(r"^(0|[1-9][0-9]*)$")
_PIECE = 1 << 20  # characters of a text encoded at once by js_len


def js_len(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units (an astral character is two), counted at C
    speed: an ASCII text is its length, another its UTF-16 encoding, a piece at a time (a huge
    tool result is not copied whole, nor read a character at a time).

    Example:
        >>> js_len("abc"), js_len("é€"), js_len("a😀")
        (3, 2, 3)
    """
    if text.isascii():
        return len(text)
    return sum(len(text[at:at + _PIECE].encode("utf-16-le", "surrogatepass")) // 2
               for at in range(0, len(text), _PIECE))


def js_head(text: str, units: int) -> str:
    """``text.slice(0, units)`` in JavaScript: the first ``units`` UTF-16 code units, so a cut
    through an astral character keeps its high surrogate alone.

    Example:
        >>> js_head("ab", 5), js_head("a😀b", 2) == "a" + chr(0xD83D), js_head("a😀b", 3)
        ('ab', True, 'a😀')
    """
    if text.isascii() or js_len(text) <= units:
        return text[:units]
    return text.encode("utf-16-le", "surrogatepass")[:2 * units].decode("utf-16-le", "surrogatepass")


#: What JavaScript's ``String.prototype.trim`` removes (WhiteSpace and LineTerminator): Python's
#: ``str.strip()`` also removes U+001C..U+001F and U+0085, and keeps U+FEFF.
_JS_SPACE = "\t\n\v\f\r \xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000\ufeff"


def js_blank(text: str) -> bool:
    """``text.trim().length === 0`` in JavaScript, the test by which pi-ai drops an empty text or
    thinking block (``api/transform-messages.js:83``; ``api/anthropic-messages.js:838``, ``:866``,
    ``:882``, ``:899-900``; ``api/openai-completions.js:842``, ``:850``).

    Example:
        >>> js_blank(" \\n\\ufeff"), js_blank("\\x1f"), js_blank("\\x85")
        (True, False, False)
    """
    return not text.strip(_JS_SPACE)


def clean_id(text: str) -> str:
    """JavaScript's ``text.replace(/[^a-zA-Z0-9_-]/g, "_")``: per UTF-16 unit, so astral gives ``__``."""
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch in "_-") else "_" * (1 + (ord(ch) > 0xFFFF))
                   for ch in text)


def sanitize_surrogates(text: str) -> str:
    """pi-ai ``sanitizeSurrogates``: drop unpaired UTF-16 surrogates; a text without any is
    returned as it is (the same object: a huge tool result is not copied), found at C speed."""
    return _LONE_SURROGATE.sub("", text) if has_surrogate(text) else text


def _js_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        obj[key] = value  # a repeated key keeps its first position and takes the last value
    index_keys = [k for k in obj if _ARRAY_INDEX.match(k) and int(k) < 2**32 - 1]
    if not index_keys:
        return obj
    # JavaScript enumerates array-index keys first, ascending, then the rest in insertion order.
    ordered = {k: obj[k] for k in sorted(index_keys, key=int)}
    ordered.update((k, v) for k, v in obj.items() if k not in ordered)
    return ordered


def _js_int(text: str) -> int | float:
    value = int(text)
    return value if abs(value) <= 2**53 else float(text)


def js_parse(text: str) -> Any:
    """``JSON.parse(text)`` as a JavaScript runtime sees it (key order, number precision; the
    ``NaN``, ``Infinity`` and ``-Infinity`` Python's parser accepts are refused, as JavaScript's).

    Raises:
        ValueError: the text is not JSON.
    """
    return json.loads(text, object_pairs_hook=_js_object, parse_int=_js_int, parse_constant=refuse_constant)


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


# --- DSH toPiContext ----------------------------------------------------------------------------


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


def copilot_headers(request: Any, call: PiCall, *, owned_routes: frozenset[str] | None,
                    compaction_instruction: str | None, images: Mapping[str, bytes] | None,
                    offloaded_image_text: str | None) -> tuple[tuple[str, str], ...]:
    """GitHub Copilot's per-request headers, which pi-ai adds for the ``github-copilot`` provider on
    all three APIs (``api/github-copilot-headers.js`` ``buildCopilotDynamicHeaders``, called from
    each API's ``createClient``): ``X-Initiator`` (``agent`` when the Context's last message is not
    a user message, else ``user``), ``Openai-Intent: conversation-edits``, and
    ``Copilot-Vision-Request: true`` when a user message or tool result holds an image
    (``hasCopilotVisionInput``). Empty for every other provider."""
    if call.model.provider != "github-copilot":
        return ()
    context = pi_context(request, provider=call.model.provider, owned_routes=owned_routes,
                         extra_messages=compaction_messages(request, compaction_instruction), model=call.model,
                         images=images, max_request_image_bytes=call.max_request_image_bytes,
                         offloaded_image_text=offloaded_image_text)
    messages = context["messages"]
    out = [("X-Initiator", "agent" if messages and messages[-1]["role"] != "user" else "user"),
           ("Openai-Intent", "conversation-edits")]
    if any(m["role"] in ("user", "toolResult") and isinstance(m["content"], list)
           and any(b.get("type") == "image" for b in m["content"]) for m in messages):
        out.append(("Copilot-Vision-Request", "true"))
    return tuple(out)


class CopilotHeaders:
    """A pi-ai renderer's :meth:`~dsh_audit.wire.PiRenderer.dynamic_headers`: :func:`copilot_headers`."""

    __slots__ = ()
    owned_routes: frozenset[str] | None

    def dynamic_headers(self, request: Any, call: PiCall, *, compaction_instruction: str | None,
                        images: Mapping[str, bytes] | None, offloaded_image_text: str | None
                        ) -> tuple[tuple[str, str], ...]:
        return copilot_headers(request, call, owned_routes=self.owned_routes,
                               compaction_instruction=compaction_instruction, images=images,
                               offloaded_image_text=offloaded_image_text)


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


def request_context(request: Any, call: PiCall, *, owned_routes: frozenset[str] | None,
                    compaction_instruction: str | None, images: Mapping[str, bytes] | None = None,
                    offloaded_image_text: str | None = None) -> tuple[dict[str, Any], int, int]:
    """The pi-ai context of ``request``, its token estimate and the clamped output cap.

    Raises:
        RenderError: a compaction request without its instruction, an image DSH refuses or whose
            bytes are not in ``images``, or a value pi-ai reads as a string or a number that is not one.
    """
    model = call.model
    context = pi_context(request, provider=model.provider, owned_routes=owned_routes,
                         extra_messages=compaction_messages(request, compaction_instruction), model=model,
                         images=images, max_request_image_bytes=call.max_request_image_bytes,
                         offloaded_image_text=offloaded_image_text)
    estimate = estimate_context_tokens(context)
    return context, estimate, _output_cap(request, call, estimate)


def _output_cap(request: Any, call: PiCall, estimate: int) -> int:
    model = call.model
    cap = call.max_tokens if call.max_tokens is not None else model.max_tokens
    if isinstance(cap, bool) or not isinstance(cap, (int, float)):  # JavaScript's Math.min coerces it
        seq = getattr(request, "header_seq", None)
        raise RenderError(f"the call's maxTokens is a JSON {json_type(cap)}, not a number; dsh-audit cannot "
                          "work out the output cap pi-ai sends from it", hint=_DAMAGED,
                          seq=getattr(request, "first_chunk_seq", None) if seq is None else seq)
    return clamp_max_tokens(model, estimate, cap)


# --- one conversation's requests, folded message by message --------------------------------------


class Sink(Protocol):
    """An adapter's ``convertMessages``, one transformed message at a time."""

    def add(self, msg: dict[str, Any]) -> None:
        """Convert ``msg``, the next message :class:`Transform` settled."""

    def finish(self, extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The converted messages of the list so far followed by ``extra`` (its tail), without
        changing the state: a new list, whose converted messages are shared with later ones."""


class _Fold:
    """A loop request's messages through DSH's conversion, pi-ai's estimate, ``transformMessages``
    and the adapter's conversion, folded one DSH message at a time: the next request of the same
    fold generation (whose messages extend these) adds only its new messages."""

    __slots__ = ("fed", "image", "key", "sink", "tokens", "tool_names", "tool_traffic", "transform", "view")

    def __init__(self, key: tuple[Any, ...], transform: Transform, sink: Sink) -> None:
        self.key = key
        self.view: Sequence[Any] | None = None  # the messages folded (kept: their ids stay theirs)
        self.tool_names: dict[str, str] = {}
        self.tokens = 0  # estimate of the context messages
        self.tool_traffic = False  # a tool result, or an assistant tool call, among them
        self.transform, self.sink = transform, sink
        self.fed = 0  # of transform.result, given to sink
        self.image = False  # a message holds an image: DSH's image path, never folded

    def add(self, pi: dict[str, Any]) -> None:
        self.tokens += _message_tokens(pi)
        if not self.tool_traffic:
            self.tool_traffic = pi["role"] == "toolResult" or (
                pi["role"] == "assistant" and any(b["type"] == "toolCall" for b in pi["content"]))
        self.transform.add(pi)
        result = self.transform.result
        while self.fed < len(result):
            self.sink.add(result[self.fed])
            self.fed += 1


def _extends(messages: Sequence[Any], folded: Sequence[Any]) -> bool:
    """Whether ``messages`` start with the ``folded`` message objects: one fold generation's views
    know it at once, other sequences (an importer's tuples) compare identities at C speed."""
    if len(messages) < len(folded):
        return False
    if isinstance(messages, MessageView):
        return messages.shared_prefix(folded) == len(folded)
    return not isinstance(folded, MessageView) and all(map(is_, folded, messages))


_Converted = tuple[Mapping[str, Any], list[dict[str, Any]], tuple[tuple[str, str], ...]]


def _converted(message: Mapping[str, Any], owned: frozenset[str] | None, tool_names: dict[str, str],
               cache: dict[int, _Converted], old: dict[int, _Converted]) -> list[dict[str, Any]]:
    """:func:`_pi_message` of a text-only message, made once per message object: a pure function of
    the message and ``owned``, but for the ``toolName`` of its tool results (what the history's
    calls named), checked on reuse. The entry holds the message, so its id is not reused."""
    entry = cache.get(id(message))
    if entry is None or entry[0] is not message:
        entry = old.get(id(message))
    if entry is not None and entry[0] is message \
            and all(tool_names.get(call_id, "unknown") == name for call_id, name in entry[2]):
        for pi in entry[1]:
            if pi["role"] == "assistant":
                tool_names.update((b["id"], b["name"]) for b in pi["content"] if b["type"] == "toolCall")
    else:
        out = _pi_message(message, owned, tool_names, None, False)
        entry = (message, out, tuple((m["toolCallId"], m["toolName"]) for m in out if m["role"] == "toolResult"))
    cache[id(message)] = entry
    return entry[1]


def body_context(state: dict[str, Any] | None, request: Any, call: PiCall, *, owned_routes: frozenset[str] | None,
                 normalize: Any, sink: Callable[[PiModel], Sink], compaction_instruction: str | None,
                 images: Mapping[str, bytes] | None, offloaded_image_text: str | None,
                 ) -> tuple[dict[str, Any], int, int, _Fold | None]:
    """What a renderer builds a body from: :func:`folded_request_context` when the renderer keeps
    ``state`` and the request can be folded, else :func:`request_context` with no fold."""
    folded = None if state is None else folded_request_context(state, request, call, owned_routes=owned_routes,
                                                               normalize=normalize, sink=sink)
    if folded is not None:
        return folded
    context, estimate, base = request_context(request, call, owned_routes=owned_routes,
                                              compaction_instruction=compaction_instruction, images=images,
                                              offloaded_image_text=offloaded_image_text)
    return context, estimate, base, None


def folded_request_context(state: dict[str, Any], request: Any, call: PiCall, *, owned_routes: frozenset[str] | None,
                           normalize: Any, sink: Callable[[PiModel], Sink]) -> tuple[dict[str, Any], int, int, _Fold] | None:
    """:func:`request_context` of a loop request, its messages folded (``state``: the renderer's,
    kept between requests): the header's context without messages, the estimate, the output cap
    and the fold, whose ``sink.finish(transform.tail())`` is the adapter's messages.

    Each message's conversion is made once per message object and each request adds only the
    messages its predecessor in the same fold generation did not have, so rendering a log is
    linear in its messages, not in requests x history; the converted messages of the history are
    the same objects in every request's body. None when the request is not a text-only loop
    request, or when anything fails: the caller then renders it with :func:`request_context`
    (which raises what DSH's adapter would, in its order).
    """
    messages = request.messages
    if getattr(request, "kind", None) != "loop" or not isinstance(messages, (MessageView, tuple)):
        return None
    key = (owned_routes, call.model, normalize, sink)
    fold: _Fold | None = state.get("fold")
    cache: dict[int, _Converted] = state.setdefault("messages", {})
    old: dict[int, _Converted] = {}
    try:
        if fold is None or fold.key != key or fold.view is None or not _extends(messages, fold.view):
            # A new fold generation (or another model): start again, each surviving message's
            # conversion reused; the cache keeps the messages of this generation only.
            fold, start, old, cache = _Fold(key, Transform(call.model, normalize), sink(call.model)), 0, cache, {}
            state["fold"], state["messages"] = None, cache
        else:
            start = len(fold.view)
        if not fold.image:
            for message in messages[start:]:
                if has_image(message.get("content")):
                    fold.image = True
                    break
                for pi in _converted(message, owned_routes, fold.tool_names, cache, old):
                    fold.add(pi)
        fold.view = messages
        state["fold"] = fold
        if fold.image:
            return None
        context = _header_context(request)
        estimate = fold.tokens + _head_tokens(context)
        return context, estimate, _output_cap(request, call, estimate), fold
    except Exception:  # noqa: BLE001 - the plain rendering raises it again (or DSH's error before it)
        state["fold"] = None
        return None


# --- pi-ai estimateContextTokens and the output cap ---------------------------------------------


def _message_tokens(message: Mapping[str, Any]) -> int:
    content = message["content"]
    if message["role"] in ("user", "toolResult"):
        chars = js_len(content) if isinstance(content, str) else sum(
            js_len(b["text"]) if b["type"] == "text" else 4800 for b in content)
        return math.ceil(chars / 4)
    chars = 0
    for block in content:
        if block["type"] == "text":
            chars += js_len(block["text"])
        elif block["type"] == "thinking":
            chars += js_len(block["thinking"])
        else:
            chars += js_len(block["name"]) + js_len(stringify(block["arguments"]))
    return math.ceil(chars / 4)


def estimate_context_tokens(context: Mapping[str, Any]) -> int:
    """pi-ai ``estimateContextTokens`` for a DSH-built context (historical usage is always zero)."""
    return sum(_message_tokens(m) for m in context["messages"]) + _head_tokens(context)


def _head_tokens(context: Mapping[str, Any]) -> int:
    """The system prompt's and the tools' share of :func:`estimate_context_tokens`."""
    tokens = 0
    system = context.get("systemPrompt")
    if system:
        tokens += math.ceil(js_len(system) / 4)
    if context.get("tools"):
        tokens += math.ceil(js_len(stringify(context["tools"])) / 4)
    return tokens


def clamp_max_tokens(model: PiModel, estimate: int, max_tokens: int) -> int:
    """pi-ai ``clampMaxTokensToContext`` given the context estimate."""
    if model.context_window <= 0:
        return max(1, max_tokens)
    return min(max_tokens, max(1, model.context_window - estimate - CONTEXT_SAFETY_TOKENS))


# --- pi-ai transformMessages --------------------------------------------------------------------


def _transform_block(block: dict[str, Any], same: bool, normalize: Any, model: PiModel,
                     ids: dict[str, str], message: Mapping[str, Any]) -> list[dict[str, Any]]:
    kind = block["type"]
    if kind == "thinking":
        if block.get("redacted"):
            return [block] if same else []
        if same and block.get("thinkingSignature"):
            return [block]
        if js_blank(block["thinking"]):
            return []
        return [block] if same else [{"type": "text", "text": block["thinking"]}]
    if kind == "text":
        return [block] if same else [{"type": "text", "text": block["text"]}]
    if kind == "toolCall":
        call = block
        if not same and "thoughtSignature" in call:
            call = {k: v for k, v in call.items() if k != "thoughtSignature"}
        if not same and normalize is not None:
            new_id = normalize(call["id"], model, message)
            if new_id != call["id"]:
                ids[call["id"]] = new_id
                call = {**call, "id": new_id}
        return [call]
    return [block]


class Transform:
    """pi-ai ``transformMessages``, one context message at a time.

    :meth:`add` each message in order; :attr:`result` holds the messages settled so far, and
    :meth:`tail` the synthetic results the end of the list adds for orphaned tool calls, without
    changing the state (so a later request of the same conversation can add its new messages).
    Both passes of pi-ai's function look only backwards except that orphan check, so the messages
    settled for a list are those settled for any list it starts.
    """

    __slots__ = ("ids", "model", "normalize", "pending", "result", "seen")

    def __init__(self, model: PiModel, normalize: Any = None) -> None:
        self.model, self.normalize = model, normalize
        self.ids: dict[str, str] = {}
        self.result: list[dict[str, Any]] = []
        self.pending: list[dict[str, Any]] = []
        self.seen: set[str] = set()

    def add(self, msg: dict[str, Any]) -> None:
        """Transform ``msg`` (the first pass) and settle it (the second)."""
        model = self.model
        if msg["role"] == "toolResult":
            new_id = self.ids.get(msg["toolCallId"])
            if new_id and new_id != msg["toolCallId"]:
                msg = {**msg, "toolCallId": new_id}
        elif msg["role"] == "assistant":
            same = (msg["provider"], msg["api"], msg["model"]) == (model.provider, model.api, model.id)
            content = [out for b in msg["content"]
                       for out in _transform_block(b, same, self.normalize, model, self.ids, msg)]
            msg = {**msg, "content": content}
        if msg["role"] == "assistant":
            self._flush()
            if msg["stopReason"] in ("error", "aborted"):
                return
            calls = [b for b in msg["content"] if b["type"] == "toolCall"]
            if calls:
                self.pending, self.seen = calls, set()
            self.result.append(msg)
        elif msg["role"] == "toolResult":
            self.seen.add(msg["toolCallId"])
            self.result.append(msg)
        else:
            self._flush()
            self.result.append(msg)

    def tail(self) -> list[dict[str, Any]]:
        """The ``"No result provided"`` results the list's end adds for the pending calls."""
        return [{"role": "toolResult", "toolCallId": call["id"], "toolName": call["name"],
                 "content": [{"type": "text", "text": "No result provided"}], "isError": True}
                for call in self.pending if call["id"] not in self.seen]

    def _flush(self) -> None:
        self.result += self.tail()
        self.pending, self.seen = [], set()


def transform_messages(messages: list[dict[str, Any]], model: PiModel, normalize: Any = None) -> list[dict[str, Any]]:
    """pi-ai ``transformMessages``. Its downgrade of images for a model without image input
    (``downgradeUnsupportedImages``) never acts on a DSH request: DSH's adapter refuses such a
    request before pi-ai sees it (:func:`pi_context`)."""
    transform = Transform(model, normalize)
    for msg in messages:
        transform.add(msg)
    return transform.result + transform.tail()
