"""What the two pi-ai renderers share: DSH's context conversion and pi-ai's pre-processing.

Model facts live in :mod:`dsh_audit.wire._piai_facts` and :mod:`dsh_audit.wire._piai_catalog`, DSH's
call options in :mod:`dsh_audit.wire._piai_call`; JavaScript's string and JSON semantics in
:mod:`dsh_audit.wire._piai_js`; steps 1 and 2 below in :mod:`dsh_audit.wire._piai_context`, steps 3
and 4 in :mod:`dsh_audit.wire._piai_transform`. This module assembles a request's context from them
(:func:`request_context`, the fold of :func:`folded_request_context`, GitHub Copilot's headers).

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
pi-ai 0.82.1's own output for synthetic sessions (``tests/data/piai_oracle``), which takes
dsh-audit's context conversion as its input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from operator import is_
from typing import Any, Protocol

from .._json import json_type
from ..errors import RenderError
from ..replay import MessageView
from ._images import has_image
from ._piai_call import PiCall, compaction_messages
from ._piai_context import _DAMAGED, _header_context, _pi_message, pi_context
from ._piai_facts import PiModel
from ._piai_transform import Transform, _head_tokens, _message_tokens, clamp_max_tokens, estimate_context_tokens

__all__ = ["CopilotHeaders", "Sink", "body_context", "copilot_headers", "folded_request_context", "request_context"]


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


# --- one conversation's requests, folded message by message --------------------------------------


class Sink(Protocol):
    """An adapter's ``convertMessages``, one transformed message at a time."""

    def add(self, msg: dict[str, Any]) -> None:
        """Convert ``msg``, the next message :class:`._piai_transform.Transform` settled."""

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
    """:func:`._piai_context._pi_message` of a text-only message, made once per message object: a pure function of
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
