"""A request's prompt as the provider caches it: ordered text segments, and common prefixes.

The provider caches its *rendered* prompt, whose template is not public. dsh-audit approximates it
with segments in the rule's ``render_order`` (prompt-affecting parameters, system, each tool, each
message), each segment the ``JSON.stringify`` of that part. When the session's wire renderer can
render the request, the parts come from the rendered body (so adapter transforms count); otherwise
from the request's header and messages. Two requests share a prefix as far as their segments are
equal, plus the common characters of the first differing segment.

Consecutive requests share almost all of their parts, so a part's segments and token counts are
made once and reused, as the same string objects, for as long as requests keep it: per message
object (log JSON), per message fragment of the DeepSeek renderer (which renders each message
once), or per serialised part (other bodies). A pi-ai renderer's body holds its history's converted
messages as the same objects request after request (only the last one, which carries the moving
cache marker, is new), so a loop request's prompt extends the last one's lists as the DeepSeek
renderer's does; an importer's requests (tuples of the same message objects) extend theirs too. A prompt therefore costs its new parts plus a
pointer per shared one, and two prompts compare at C speed on shared segments. A part is one
serialisation of its message: a DeepSeek fragment that is one message the rule keeps is its own
segment, and a body's message serialised to find its part is that part's segment (a huge message
costs one copy per projection, not several).
"""


from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from functools import partial
from typing import Any

import orjson

from ..jsjson import stringify, stringify_bytes
from ..log import ensure_room
from ..replay import MessageView, Request
from ..wire import PromptPieces, fold_text_block, without_cache_markers
from ._prompt import _flat, _Memo, _Messages, _Part, _same_start, _Track, Prompt
from ._retention_body import _long_strings, blank_long
from ._body_json import body_object
from ._rules import CacheRule
from ._tokens import TokenCounter, make_counter

__all__ = ["PromptBuilder"]


class PromptBuilder:
    """Builds :class:`Prompt` values for one session under one rule.

    Args:
        rule: the provider rule (render order, prompt parameters, reasoning rule).
        render: optional ``request -> body bytes`` (a wire renderer); ``None`` or a failure
            falls back to the request's own header and messages.
        pieces: optional ``request -> PromptPieces`` (the DeepSeek renderer's unjoined body),
            used before ``render``: it gives the same segments without joining or parsing a body.
        value: optional ``request -> body`` as a JSON value (the pi-ai renderers' body before it
            is written), used before ``render``: the same parts without writing or parsing the
            body, its texts the log's own strings. Never changed here.
        count: the token counter (default: the rule's tokenizer, estimated).
    """

    def __init__(self, rule: CacheRule, *, render: Callable[[Request], bytes | None] | None = None,
                 pieces: Callable[[Request], PromptPieces | None] | None = None,
                 value: Callable[[Request], dict[str, Any] | None] | None = None,
                 count: TokenCounter | None = None) -> None:
        self.rule = rule
        self.render = render
        self.pieces = pieces
        self.value = value
        self.count = count or make_counter(rule.tokenizer, method="estimate")
        self._memo = _Memo()
        self._tracks: dict[str, _Track] = {}  # per projection: the last loop request's prompt lists
        self._tail: tuple[str, dict[str, Any] | None] | None = None  # the last DeepSeek tail, parsed (read only)

    def build(self, request: Request) -> Prompt:
        """The prompt of ``request``: its rendered body's when it can be rendered, with its
        log-JSON projection built only when read (:attr:`Prompt.json`); else the log JSON's."""
        try:
            wire = f"wire:{self.rule.wire_adapter}"
            got = self.pieces(request) if self.pieces is not None else None
            if got is not None:
                try:
                    return self._prompt(self._from_pieces(request, got), wire, partial(self._json, request),
                                        key="wire")
                except ValueError:  # a fragment orjson cannot parse (a lone surrogate), as a body below
                    return self._json(request)
            body = self.value(request) if self.value is not None else None
            if body is None:
                rendered = self.render(request) if self.render is not None else None  # None: refused
                body = body_object(rendered)
            if body is not None:
                # a loop request's body extends the last one's track; an auxiliary call's is its own
                return self._prompt(self._from_body(body), wire, partial(self._json, request),
                                    key="body" if request.kind == "loop" else None)
            return self._json(request)
        finally:
            self._memo.roll()

    def _json(self, request: Request) -> Prompt:
        """The log-JSON prompt of ``request``, on the log-JSON track: a later request's when read
        late (a track forks for an earlier request's messages as after a replace), so any order
        of reading gives the same prompts."""
        return self._prompt(self._from_request(request), "json", key="json")

    # -- parts ------------------------------------------------------------------------------

    def _part(self, key: Hashable, owner: Any, values: Callable[[], Iterable[Any]]) -> _Part:
        return self._memo.get(key, owner, lambda: self._counted(tuple(stringify(v) for v in values())))

    def _text(self, key: Hashable, owner: Any, text: str) -> _Part:
        """A part that is already one segment (a JSON.stringify-exact fragment)."""
        return self._memo.get(key, owner, lambda: self._counted((text,)))

    def _counted(self, segments: tuple[str, ...]) -> _Part:
        return segments, tuple(self.count(s) for s in segments)

    def _prompt(self, parts: dict[str, Any], source: str, fallback: Prompt | Callable[[], Prompt] | None = None,
                key: str | None = None) -> Prompt:
        """Join parts in render order. ``parts["messages"]`` is a :class:`_Messages` (a request's
        messages and how to make the part of each) or flat ``(segments, counts)``.

        A loop request whose messages extend the previous one's (one fold generation, the same
        head) extends the previous prompt's lists in place and views them: its cost is its new
        messages, not its history. Anything else builds new lists (after a replace, each
        surviving message object keeps its segments)."""
        head: list[str] = []
        head_counts: list[int] = []
        for name in self.rule.render_order:
            if name != "messages":
                for part_segments, part_counts in parts.get(name, ()):
                    head += part_segments
                    head_counts += part_counts
        messages = parts["messages"]
        if self.rule.render_order[-1] != "messages":  # messages in the middle: no track to extend
            flat, counts = _flat(messages)
            cut = self.rule.render_order.index("messages")
            before = sum(len(segs) for name in self.rule.render_order[:cut] for segs, _ in parts.get(name, ()))
            whole = _Track(tuple(head[:before] + flat + head[before:]), head_counts[:before] + counts + head_counts[before:])
            return whole.prompt(source, fallback)
        fixed = tuple(head)
        view = messages.view if isinstance(messages, _Messages) else None
        track = self._tracks.get(key) if key is not None else None
        if (isinstance(view, (MessageView, tuple)) and isinstance(messages, _Messages) and key is not None
                and track is not None and track.head == fixed):
            kept = view.common_items(track.view) if isinstance(view, MessageView) else _same_start(view, track.view)
            if kept == len(track.view) - 1 and kept < len(view) and messages.part_for(kept) == track.parts[kept]:
                # The last message is another object with the same segments (a pi-ai body's last
                # user message, which carried the moving cache marker there and none here).
                kept += 1
            if kept == len(track.view) <= len(view):
                track.extend(messages, kept)  # the same generation, grown: extend in place
            else:
                track = self._tracks[key] = track.fork(messages, kept)
            return track.prompt(source, fallback)
        track = _Track(fixed, head_counts)
        if isinstance(messages, _Messages):
            track.extend(messages, 0)
        else:
            track._add(*messages)
        if isinstance(view, (MessageView, tuple)) and key is not None:  # a tuple: an importer's request
            self._tracks[key] = track
        return track.prompt(source, fallback)

    def _messages(self, request: Request, part_for: Callable[[int], _Part]) -> _Messages:
        """The messages of ``request``; ``part_for(i)`` makes the part of message ``i``."""
        return _Messages(request.messages, part_for)

    def _params(self, source: dict[str, Any]) -> list[Any]:
        params = {k: source[k] for k in self.rule.prompt_params if k in source}
        return [params] if params else []

    def _head(self, top: dict[str, Any], key: Hashable) -> dict[str, list[_Part]]:
        """Parameters and tools of a body's top-level object."""
        tools = top.get("tools") or []
        return {"params": [self._part(("params", key), None, lambda: self._params(top))],
                "tools": [self._part(("tools", key), None, lambda: tools if isinstance(tools, list) else [tools])]}

    def _wire_messages(self, messages: list[Any]) -> list[Any]:
        out = [m for m in messages if isinstance(m, dict)]
        if self.rule.strip_reasoning_without_tool_calls:
            out = [{k: v for k, v in m.items() if k != "reasoning_content"}
                   if m.get("role") == "assistant" and not m.get("tool_calls") else m for m in out]
        if self.rule.family == "anthropic":
            out = [fold_text_block(m) for m in out]
        return out

    def _from_pieces(self, request: Request, pieces: PromptPieces) -> dict[str, Any]:
        # The DeepSeek body is '{"model":M,"messages":[' + system, fragments + tail: only the
        # tail (parameters and tools, the same for many requests) is parsed, once per value.
        tail = pieces.tail
        last = self._tail
        if last is not None and (last[0] is tail or last[0] == tail):
            top = last[1]  # the same parameters and tools as the last request's: parsed once
        else:
            top = body_object(("{" + tail[tail.index("]") + 2:]).encode()) if "]" in tail else None
            self._tail = (tail, top)
        parts = self._head(top or {}, tail)
        system = [] if pieces.system is None else [self._text(("system", pieces.system), None, pieces.system)]
        fragments = pieces.fragments

        def part_for(i: int) -> _Part:
            fragment = fragments[i]
            if self._as_is(fragment):
                return self._text(id(fragment), fragment, fragment)
            return self._part(id(fragment), fragment, lambda: self._wire_messages(_loads(f"[{fragment}]")))

        return {**parts, "system": system, "messages": self._messages(request, part_for)}

    def _as_is(self, fragment: str) -> bool:
        """Whether a DeepSeek message fragment is its own segment: one wire message (the renderer
        wrote it with ``JSON.stringify``, which the parse and re-serialisation would give back)
        that the rule leaves as it is, without a lone surrogate's escape (orjson refuses it, so
        the request is compared as log JSON). Read without parsing it: outside strings, where a
        quote is always escaped, a second message starts ``},{"role":``, and the keys the rule
        drops are ``"reasoning_content":``; a huge message is neither parsed nor copied."""
        if self.rule.family == "anthropic" or not fragment.startswith('{"role":') \
                or '},{"role":' in fragment or "\\ud" in fragment:
            return False
        return not (self.rule.strip_reasoning_without_tool_calls and fragment.startswith('{"role":"assistant"')
                    and '"reasoning_content":' in fragment)

    def _from_body(self, body: dict[str, Any]) -> dict[str, Any]:
        # Markers are dropped part by part (the Anthropic family), not from a copy of the whole
        # body: a message the previous request's body held as the same object keeps its part (a
        # pi-ai renderer's history is the same objects in every body, :func:`_prompt`'s track).
        strip = self.rule.family == "anthropic"
        key = "messages" if "messages" in body or "input" not in body else "input"  # a Responses body's items
        raw = body.get(key) or []
        # all dicts (a renderer's body): the list as it is, checked at C speed
        kept = raw if type(raw) is list and set(map(type, raw)) <= {dict} else [m for m in raw if isinstance(m, dict)]
        lead = 0
        while lead < len(kept) and kept[lead].get("role") in ("system", "developer"):
            lead += 1
        system: list[Any] = [without_cache_markers(m) if strip else m for m in kept[:lead]]
        messages = kept[lead:] if lead else kept
        if "system" in body:
            system.insert(0, without_cache_markers(body["system"]) if strip else body["system"])
        head = {k: without_cache_markers(v) if strip else v for k, v in body.items()
                if k not in (key, "system") and not (strip and k == "cache_control")}
        parts: dict[str, Any] = self._head(head, stringify_bytes(head))  # kept keys: exact-size bytes
        parts["system"] = [self._part(("system", stringify_bytes(system)), None, lambda: system)]
        view = MessageView(messages, len(messages))

        def part_for(i: int) -> _Part:
            m = without_cache_markers(messages[i]) if strip else messages[i]
            long: list[str] = []
            _long_strings(m, long)
            if long:
                # Keyed by its long strings' identity and the rest of it: a message that holds a
                # huge text (the log's own string, in a body value) is written once, not once per
                # request that repeats it.
                key: Hashable = ("long", stringify(blank_long(m)), tuple(map(id, long)))
                return self._memo.get(key, tuple(long), lambda: self._body_part(m, None))
            text = stringify(m)  # the key, and the segment of a message the rule keeps as it is
            return self._memo.get(text, None, lambda: self._body_part(m, text))

        return {**parts, "messages": _Messages(view, part_for, runs=False)}

    def _body_part(self, message: dict[str, Any], text: str | None) -> _Part:
        """The part of a rendered body's message whose ``JSON.stringify`` is ``text`` (None: not
        written yet): that text itself when the rule keeps the message as it is (one serialisation
        of it, not two)."""
        wire = self._wire_messages([message])
        if len(wire) == 1 and wire[0] is message:
            return self._counted((text if text is not None else stringify(message),))
        return self._counted(tuple(map(stringify, wire)))

    def _from_request(self, request: Request) -> dict[str, Any]:
        header = request.header or {}
        config = header.get("config") or {}
        params = {"reasoningEffort": config.get("reasoningEffort")} if "reasoningEffort" in config else None
        system = header.get("system")
        tools = header.get("tools")
        tool_list = list(tools) if isinstance(tools, list) else ([tools] if tools is not None else [])
        strip = self.rule.strip_reasoning_without_tool_calls
        messages = request.messages

        def part_for(i: int) -> _Part:
            message = messages[i]  # looked up once (a view's item is a Python call)
            return self._part(("json", id(message)), message, lambda: [_drop_reasoning(message) if strip else message])

        return {
            "params": [self._part(("json-params", id(config)), config, lambda: [params] if params else [])],
            "system": [self._part(("json-system", id(header)), header,
                                  lambda: [system] if system is not None else [])],
            "tools": [self._part(("json-tools", id(header)), header, lambda: tool_list)],
            "messages": self._messages(request, part_for),
        }


def _loads(text: str) -> Any:
    """``orjson.loads(text)``, checked first: a fragment is as long as its message (orjson crashes
    when it runs out of memory)."""
    ensure_room(text)
    return orjson.loads(text)




def _drop_reasoning(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return message
    if any(isinstance(b, dict) and b.get("type") == "tool-call" for b in content):
        return message
    return {**message, "content": [b for b in content if not (isinstance(b, dict) and b.get("type") == "reasoning")]}
