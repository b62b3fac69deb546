"""Requests rendered as DSH's DeepSeek chat-completions adapter sends them (spec §8.1, §8.4).

Written from DSH 0.1.0-rc.8: ``packages/llm/llm-deepseek/src/serialize.ts`` (body, key order,
thinking resolution), ``adapter.ts`` (headers, ``resolveModel`` default effort),
``packages/llm/llm/src/attribution.ts`` (user agent) and ``packages/llm/llm/src/index.ts``
(``resolveCallFor``, which gives auxiliary calls the adapter's default effort).

A body is ``head + fragments + tail``: ``head`` holds the model; each DSH message becomes one
fragment (its wire messages, comma-joined) rendered once per message object and reused by every
later request; ``tail`` holds thinking, effort, the tools (rendered once per header object),
temperature, ``max_tokens`` and ``stop``. Rendering all requests of a log this way costs
O(log + output) instead of O(requests x surface) re-serialisation.

What each request kind takes from the log:

* ``loop``: everything from the header in force (``config``, ``system``, ``tools``).
* ``title``: the logged ``system``, messages and ``maxTokens``; thinking disabled, no effort.
* ``compaction``: the region messages plus DSH's fixed instruction (not logged: pass
  ``compaction_instruction``), the header's system and tools, the logged model and
  ``maxTokens``, no temperature or stop, and the adapter's *default* effort: ``compaction_effort``
  when given, else the header's effort when the header marks it as the adapter default, else
  what ``resolveModel`` publishes for the renderer's ``adapter_effort`` / ``adapter_thinking``
  (``high`` for an unconfigured deployment).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any, NamedTuple

from ..errors import RenderError
from ..jsjson import stringify
from ..replay import MessageView, Request
from ._deepseek_messages import image_path_messages, text_path_messages
from ._images import IMAGE_BYTES_HINT, has_image
from ._registry import register
from ._types import WireRequest

__all__ = ["DEFAULT_HARNESS_VERSION", "DEFAULT_MAX_REQUEST_IMAGE_BYTES", "DeepSeekRenderer", "PromptPieces"]

#: DSH release whose ``user-agent`` the renderer writes unless told otherwise.
DEFAULT_HARNESS_VERSION = "0.1.0-rc.8"
#: DSH's default bound on the base64 image payload of one request (20 MiB).
DEFAULT_MAX_REQUEST_IMAGE_BYTES = 20 * 1024 * 1024

_EFFORTS = ("off", "low", "high", "max")
_PATH = "/chat/completions"
_HOME = "https://github.com/deepseek-ai/deepseek-harness"
_STREAM = '],"stream":true,"stream_options":{"include_usage":true}'


class PromptPieces(NamedTuple):
    """A DeepSeek loop body before joining: ``{"model":M,"messages":[`` + system and fragments
    comma-joined + ``tail``."""

    system: str | None
    fragments: Sequence[str]  # one per message (a view of the renderer's growing list for loop requests)
    tail: str
    sizes: Sequence[int] = ()  # each fragment's UTF-8 size (-1: a lone surrogate, not sendable)


def utf8_size(text: str) -> int:
    """Bytes of ``text`` in UTF-8; -1 when it holds a lone surrogate (the body cannot be sent)."""
    if text.isascii():
        return len(text)
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return -1


class DeepSeekRenderer:
    """Render :class:`~dsh_audit.replay.Request` values to DeepSeek adapter wire requests.

    Keep one renderer for all requests of a log (or many logs): message and header fragments are
    cached by object identity, holding a reference so an identity is never reused.

    Args:
        version: DSH version written in ``user-agent``.
        user_id: the anonymous ``x-deepseek-harness-user-id``; omitted when ``None`` (not logged).
        adapter_effort: the deployment's configured default effort (``off|low|high|max``), used
            where a request carries none; ``None`` = not configured.
        adapter_thinking: the deployment's ``thinking`` setting (``enabled|disabled``) or ``None``.
        max_request_image_bytes: DSH's image payload bound, for requests with images.

    Example:
        >>> renderer = DeepSeekRenderer()
        >>> bodies = [renderer.render(r).body for r in requests if r.kind == "loop"]  # doctest: +SKIP
    """

    def __init__(self, *, version: str = DEFAULT_HARNESS_VERSION, user_id: str | None = None,
                 adapter_effort: str | None = None, adapter_thinking: str | None = None,
                 max_request_image_bytes: int | None = DEFAULT_MAX_REQUEST_IMAGE_BYTES) -> None:
        self.version = version
        self.user_id = user_id
        self.adapter_effort = adapter_effort
        self.adapter_thinking = adapter_thinking
        self.max_request_image_bytes = max_request_image_bytes
        self._messages: dict[int, tuple[Mapping[str, Any], str | None, int]] = {}
        # The last loop request's messages, their fragments and the fragments' UTF-8 sizes, for
        # the next one to extend.
        self._last: tuple[MessageView | None, list[str], list[int]] = (None, [], [])
        self._headers: dict[int, tuple[Mapping[str, Any], str | None, str | RenderError | None]] = {}

    # -- public -------------------------------------------------------------------------------

    def render(self, request: Request, *, compaction_instruction: str | None = None,
               compaction_effort: str | None = None, images: Mapping[str, bytes] | None = None,
               offloaded_image_text: str | None = None) -> WireRequest:
        """Render one request: the exact body bytes and headers DSH's DeepSeek adapter sends.

        Args:
            request: a request from :func:`dsh_audit.replay.replay`.
            compaction_instruction: DSH's compaction instruction text; required for ``compaction``.
            compaction_effort: the effort the adapter defaulted to for a compaction call.
            images: attachment bytes by ``attachmentId``; required when any message has an image.
            offloaded_image_text: the stand-in text of an image offloaded to fit the request image
                bound (default: DSH's own, ``OFFLOADED_IMAGE_TEXT``, shipped in ``wire/_images.py``).

        Raises:
            RenderError: the adapter would refuse the request (``dsh_code`` says with which code),
                or the log lacks a fact the body needs.
        """
        header = request.header
        if not isinstance(header, Mapping) or not isinstance(header.get("config"), Mapping):
            raise RenderError("no request/header before this request, so there is no call config to render",
                              seq=request.first_chunk_seq)
        config = header["config"]
        # DSH serialises the messages (refusing images) before it touches the tools.
        fragments = self._fragments(request, images, offloaded_image_text)
        system, tools = self._header_parts(header, request)
        if request.kind == "compaction":
            model, options, effort, purpose = self._compaction_call(request, config, compaction_effort)
            if compaction_instruction is None:
                raise RenderError("a compaction request ends with DSH's fixed compaction instruction, "
                                  "which the log does not record", seq=request.first_chunk_seq,
                                  hint="give --compaction-instruction FILE, DSH's compaction instruction text "
                                       "(diff and check take it from the captured body; from Python: "
                                       "compaction_instruction=)")
            fragments = [*fragments, stringify({"role": "user", "content": compaction_instruction})]
        elif request.kind == "title":
            model, options, effort, purpose = config.get("model"), config, None, "session-title"
            tools = None
        else:
            model, options, effort, purpose = config.get("model"), config, config.get("reasoningEffort"), None
            if "reasoningEffort" not in config:
                effort = self.adapter_effort
            elif effort not in _EFFORTS:
                raise RenderError(f"DeepSeek does not support reasoning effort {effort!r}",
                                  dsh_code="UNSUPPORTED_REASONING_EFFORT", seq=request.header_seq)
        parts = ['{"model":', stringify(model), ',"messages":[']
        parts.append(",".join(chain([system] if system is not None else [], fragments)))
        parts.append(_STREAM)
        parts.append(self._tail(options, effort, purpose, tools, request))
        body = "".join(parts).encode("utf-8")
        return WireRequest(adapter="deepseek", method="POST", path=_PATH,
                           headers=self.headers(request.session_id, compaction=request.kind == "compaction"),
                           body=body)

    def prompt_pieces(self, request: Request) -> PromptPieces | None:
        """The pieces a loop request's body is joined from, without joining them: the system
        fragment, one fragment per DSH message (the same string object for a message every time
        it is rendered, so a caller can memoise per fragment), and the body's tail after the
        messages. None for other kinds (their bodies differ in more than these pieces).

        Raises:
            RenderError: as :meth:`render` would for this request.
        """
        header = request.header
        if request.kind != "loop" or not isinstance(header, Mapping) or not isinstance(header.get("config"), Mapping):
            return None
        fragments = self._fragments(request, None, None)
        system, tools = self._header_parts(header, request)
        config = header["config"]
        effort = config.get("reasoningEffort") if "reasoningEffort" in config else self.adapter_effort
        if "reasoningEffort" in config and effort not in _EFFORTS:
            return None  # render() refuses it
        _, last_fragments, last_sizes = self._last
        if isinstance(fragments, MessageView) and \
                fragments.shared_prefix(MessageView(last_fragments, len(last_fragments))) == len(fragments):
            sizes: Sequence[int] = MessageView(last_sizes, len(fragments))  # measured once, with the fragment
        else:
            sizes = [utf8_size(f) for f in fragments]
        return PromptPieces(system, fragments, _STREAM + self._tail(config, effort, None, tools, request), sizes)

    def headers(self, session_id: str | None, *, compaction: bool = False) -> tuple[tuple[str, str], ...]:
        """The request headers in the adapter's order, without ``authorization``."""
        pairs = [("content-type", "application/json"), ("accept", "text/event-stream"),
                 ("user-agent", f"deepseek-harness/{self.version} (+{_HOME})")]
        if self.user_id is not None:
            pairs.append(("x-deepseek-harness-user-id", self.user_id))
        if session_id is not None:
            pairs.append(("x-deepseek-harness-session-id", session_id))
        if compaction:
            pairs.append(("x-deepseek-harness-compact", "1"))
        return tuple(pairs)

    # -- pieces -------------------------------------------------------------------------------

    def _header_parts(self, header: Mapping[str, Any], request: Request) -> tuple[str | None, str | None]:
        """The system fragment and the ``,"tools":[...]`` tail piece of a header (cached)."""
        cached = self._headers.get(id(header))
        if cached is None or cached[0] is not header:
            cached = (header, *_render_header(header, request.header_seq))
            self._headers[id(header)] = cached
        _, system, tools = cached
        if isinstance(tools, RenderError) and request.kind != "title":
            raise tools
        return system, tools if isinstance(tools, str) else None

    def _compaction_call(self, request: Request, config: Mapping[str, Any],
                         explicit: str | None) -> tuple[Any, dict[str, Any], str, None]:
        logged = request.extra
        model = logged.get("model") or config.get("model")
        options: dict[str, Any] = {}
        if logged.get("maxTokens") is not None:
            options["maxTokens"] = logged["maxTokens"]
        marks = request.header.get("adapterDefaults") if request.header else None
        if explicit is not None:
            effort = explicit
        elif isinstance(marks, Mapping) and marks.get("reasoningEffort") is True \
                and config.get("provider") == (logged.get("provider") or config.get("provider")) \
                and config.get("model") == model and config.get("reasoningEffort") in _EFFORTS:
            # the header's default is this adapter's only when the summary ran on the header's route
            effort = config["reasoningEffort"]
        elif self.adapter_thinking == "disabled":
            effort = "off"
        else:
            effort = self.adapter_effort if self.adapter_effort in ("off", "low", "max") else "high"
        return model, options, effort, None

    def _fragments(self, request: Request, images: Mapping[str, bytes] | None,
                   offloaded_image_text: str | None) -> Sequence[str]:
        messages = request.messages
        view = messages if isinstance(messages, MessageView) else None  # auxiliary calls: tuples
        loop = view is not None  # only loop requests move the state the next one extends
        last_view, last_fragments, last_sizes = self._last
        shared = view.shared_prefix(last_view) if view is not None else 0
        if view is not None and shared:
            # The same fold generation: the shared messages' fragments are the last request's,
            # and its fragment list grows with it (a request views its first entries).
            fragments, sizes, kept = last_fragments, last_sizes, self._messages
            spans = [(len(last_fragments), len(view), -1)]
        else:
            # A new generation keeps the previous one's message objects around the replaced
            # range: their fragments are copied; only messages new to it are looked up or
            # rendered. Memory stays bounded by the live surface, not the log.
            fragments, sizes, kept, spans, at = [], [], {}, [], 0
            runs = view.runs_from(last_view) if view is not None and last_view is not None else []
            for start, old_start, length in runs:
                spans += [(at, start, -1), (start, start + length, old_start)]
                at = start + length
            spans.append((at, len(messages), -1))
        cache = self._messages
        for start, stop, old_start in spans:
            if old_start >= 0:
                fragments += last_fragments[old_start:old_start + stop - start]
                sizes += last_sizes[old_start:old_start + stop - start]
                continue
            for message in messages[start:stop]:  # a slice: islice would walk the history from 0
                entry = cache.get(id(message))
                if entry is None or entry[0] is not message:
                    text = None if has_image(message.get("content")) else \
                        ",".join(stringify(m) for m in text_path_messages(message))
                    entry = (message, text, -1 if text is None else utf8_size(text))
                kept[id(message)] = entry
                if entry[1] is None:
                    if loop:
                        self._messages, self._last = kept, (None, [], [])
                    return self._image_fragments(request, images, offloaded_image_text)
                fragments.append(entry[1])
                sizes.append(entry[2])
        if loop:
            self._messages, self._last = kept, (view, fragments, sizes)
            return MessageView(fragments, len(messages))
        return fragments

    def _image_fragments(self, request: Request, images: Mapping[str, bytes] | None,
                         offloaded_image_text: str | None) -> list[str]:
        seq = next((s for m, s in zip(request.messages, request.message_seqs) if has_image(m.get("content"))),
                   request.first_chunk_seq)
        if images is None:
            raise RenderError("the request carries image content; its bytes live in DSH's attachment "
                              "store, not in the log", dsh_code="UNSUPPORTED_CONTENT", seq=seq,
                              hint=IMAGE_BYTES_HINT)
        try:
            wire = image_path_messages(request.messages, images,
                                       max_request_image_bytes=self.max_request_image_bytes,
                                       offloaded_image_text=offloaded_image_text)
        except RenderError as exc:
            exc.seq = exc.seq if exc.seq is not None else seq
            raise
        return [stringify(m) for m in wire]

    def _tail(self, options: Mapping[str, Any], effort: Any, purpose: str | None, tools: str | None,
              request: Request) -> str:
        thinking, wire_effort = self._thinking(effort, purpose, request)
        out = []
        if thinking is not None:
            out.append(',"thinking":{"type":' + stringify(thinking) + "}")
        if wire_effort is not None:
            out.append(',"reasoning_effort":' + stringify(wire_effort))
        if tools is not None:
            out.append(tools)
        for key, wire_key in (("temperature", "temperature"), ("maxTokens", "max_tokens"), ("stop", "stop")):
            if key in options:
                out.append(f',"{wire_key}":' + stringify(options[key]))
        out.append("}")
        return "".join(out)

    def _thinking(self, effort: Any, purpose: str | None, request: Request) -> tuple[str | None, str | None]:
        """DSH ``resolveThinking``: the ``thinking`` type and wire ``reasoning_effort``."""
        if purpose == "session-title":
            return "disabled", None
        if effort is not None and effort not in _EFFORTS:
            raise RenderError(f"DeepSeek does not support reasoning effort {effort!r}",
                              dsh_code="UNSUPPORTED_REASONING_EFFORT", seq=request.header_seq)
        if self.adapter_thinking == "disabled" and effort not in (None, "off"):
            raise RenderError(f"the DeepSeek deployment disables thinking but the request asks for effort "
                              f"{effort!r}", dsh_code="UNSUPPORTED_REASONING_EFFORT", seq=request.header_seq)
        if effort == "off":
            return "disabled", None
        if effort in ("low", "high", "max"):
            return "enabled", effort
        return self.adapter_thinking, None


def _render_header(header: Mapping[str, Any], seq: int | None) -> tuple[str | None, str | RenderError | None]:
    system = header.get("system")
    system_fragment = stringify({"role": "system", "content": system}) if "system" in header else None
    tools = header.get("tools")
    if tools is None:
        return system_fragment, None
    if not isinstance(tools, list):
        token = f" (the fixture token {tools!r})" if isinstance(tools, str) else ""
        return system_fragment, RenderError(
            f"the header's tools is not a list{token}; DSH's adapter fails on it "
            "(TypeError: options.tools?.map is not a function)", dsh_code="TypeError", seq=seq,
            hint="tokenised test fixtures cannot be rendered; use a log with real tool schemas")
    if not tools:
        return system_fragment, None
    wire = []
    for tool in tools:
        function: dict[str, Any] = {}
        for key in ("name", "description", "parameters"):
            if isinstance(tool, Mapping) and key in tool:
                function[key] = tool[key]
        wire.append({"type": "function", "function": function})
    return system_fragment, ',"tools":' + stringify(wire)


register("deepseek", DeepSeekRenderer)
