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

from bisect import bisect_left
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, compress, count, islice
from operator import is_not
from typing import Any
from weakref import WeakKeyDictionary

import orjson

from .._json import rebuild_json
from .._seq import common_length
from ..jsjson import stringify, stringify_bytes
from ..log import ensure_room
from ..replay import MessageView, Request
from ..wire import PromptPieces, fold_text_block, without_cache_markers
from ._rules import CacheRule, body_object, key_objects
from ._tokens import TokenCounter, make_counter

__all__ = ["Prompt", "PromptBuilder", "common_chars", "common_prefix", "prefix_tokens", "retention_body"]


@dataclass(frozen=True, slots=True, eq=False)
class Prompt:
    """One request's prompt segments, their token counts, and where they came from.

    Consecutive prompts of one conversation share one growing list of segments (a *track*); a
    prompt is its track's first :attr:`size` segments. A track only grows, so a prompt never
    changes, and two prompts of one track share ``min(size)`` segments without comparing any.

    Attributes:
        segments: the segments in the rule's render order (read up to ``size``).
        source: ``wire:<adapter>`` or ``json``.
        json: the log-JSON projection of a wire-projected prompt, used to compare it with a
            request whose body could not be rendered (like is compared with like).
        cumulative: tokens of the first ``k + 1`` segments at ``k`` (empty when not counted).
        size: how many segments are this prompt's.
        track: the track the lists belong to (compared once with another track, then cached).
    """

    segments: list[str]
    source: str
    json: Prompt | None
    cumulative: list[int]
    size: int
    track: _Track

    @property
    def tokens(self) -> int:
        """Tokens of the whole prompt (0 when not counted)."""
        return self.cumulative[self.size - 1] if self.cumulative and self.size else 0

    def view(self, other: Prompt) -> tuple[Prompt, Prompt]:
        """``(self, other)`` in a common projection (both rendered, or both log JSON)."""
        if self.source == other.source:
            return self, other
        return self.json or self, other.json or other


def common_chars(a: str, b: str) -> int:
    """Length of the common leading substring of ``a`` and ``b``."""
    return common_length(a, b)


def common_prefix(a: Prompt, b: Prompt) -> tuple[int, int]:
    """``(whole segments, extra characters)`` that ``a`` and ``b`` share from the start."""
    n = min(a.size, b.size)
    if a.track is b.track:
        return n, 0
    whole, chars = a.track.common(b.track)
    return (n, 0) if whole >= n else (whole, chars)


def prefix_tokens(prompt: Prompt, shared: tuple[int, int], count: TokenCounter) -> int:
    """Tokens of the first ``shared`` segments/characters of ``prompt``."""
    whole, chars = shared
    if prompt.cumulative:
        total = prompt.cumulative[whole - 1] if whole else 0
    else:
        total = sum(count(s) for s in prompt.segments[:whole])
    if chars and whole < prompt.size:
        total += count.head(prompt.segments[whole], chars)
    return total


_Part = tuple[tuple[str, ...], tuple[int, ...]]  # segments and their token counts


class _Memo:
    """Values made for recently used parts, least recently used dropped past :attr:`LIMIT`
    characters of segments (weighed by size, not counted: a few huge tool results must not pin
    hundreds of megabytes, nor many small ones evict each other early).

    A prompt's message parts live in its track; this keeps what is made outside one (the head's
    parts, a title or compaction call's messages) for the next request that needs it, without
    growing with the log.
    """

    LIMIT = 4_000_000
    ENTRY = 64  # weight of an entry besides its text: many tiny parts must not grow without bound

    def __init__(self) -> None:
        self.old: dict[Hashable, tuple[Any, _Part, int]] = {}
        self.new: dict[Hashable, tuple[Any, _Part, int]] = {}
        self.weight = 0  # of ``old``

    def get(self, key: Hashable, owner: Any, make: Callable[[], _Part]) -> _Part:
        """The value for ``key`` (``owner`` is kept alive with it and must be the same object, or
        a tuple of the same objects)."""
        found = self.new.get(key)
        if found is None or not _same(found[0], owner):
            found = self.old.get(key)
            if found is None or not _same(found[0], owner):
                value = make()
                found = (owner, value, sum(map(len, value[0])) + self.ENTRY)
            self.new[key] = found
        return found[1]

    def roll(self) -> None:
        """End a request: what it used becomes the most recently used, and stays however large
        it is (that request's prompt holds it anyway: dropping a huge part would only make the
        next request serialise it again, a second copy of it)."""
        old, used = self.old, len(self.new)
        for key, entry in self.new.items():
            gone = old.pop(key, None)
            if gone is not None:
                self.weight -= gone[2]
            self.weight += entry[2]
        old.update(self.new)
        self.new = {}
        while self.weight > self.LIMIT and len(old) > used:
            self.weight -= old.pop(next(iter(old)))[2]




@dataclass(frozen=True, slots=True)
class _Messages:
    view: Sequence[Any]
    part_for: Callable[[int], _Part]
    runs: bool = True  # whether a fork looks for the previous track's runs after the shared start


def _flat(messages: _Messages | tuple[list[str], list[int]]) -> tuple[list[str], list[int]]:
    if not isinstance(messages, _Messages):
        return messages
    segments: list[str] = []
    counts: list[int] = []
    for i in range(len(messages.view)):
        part_segments, part_counts = messages.part_for(i)
        segments += part_segments
        counts += part_counts
    return segments, counts


class _Track:
    """A growing prompt: the head's segments, then each message's, with their token counts and
    running sums. Prompts are prefixes of it; its lists only grow.

    Where each message's segments start is not listed per message (a fork would shift every later
    one: a new int per message of the history after each prune). Nearly every part is one segment,
    so only the messages whose part is not are listed (:attr:`wide`), with the segments they add
    beyond one each, summed (:attr:`spread`); :meth:`_offset` reads a message's start from them.
    """

    __slots__ = ("__weakref__", "_common", "counts", "cumulative", "head", "parts", "segments", "spread", "view",
                 "wide")

    def __init__(self, head: tuple[str, ...], head_counts: list[int]) -> None:
        self.head = head
        self.segments: list[str] = list(head)
        self.counts: list[int] = list(head_counts)
        self.cumulative: list[int] = list(accumulate(head_counts))
        self.parts: list[_Part] = []  # one per message of view
        self.wide: list[int] = []  # the messages whose part is not one segment (ascending)
        self.spread: list[int] = []  # [j]: segments beyond one per part, summed over wide[:j + 1]
        self.view: Sequence[Any] = ()
        # Weak: a track must not keep alive every track it was ever compared with (and, through
        # theirs, every track of the log with all their messages).
        self._common: WeakKeyDictionary[_Track, tuple[int, int]] = WeakKeyDictionary()

    def common(self, other: _Track) -> tuple[int, int]:
        """``(segments, characters)`` this track and ``other`` share from the start, cached once
        they differ (a later append to either cannot change it then; until then, the characters
        are 0 and the segments all of the shorter one's, and the next call compares only the
        segments appended since)."""
        found = self._common.get(other)
        if found is not None and found[1] >= 0:
            return found
        # Until they differ, the segments both had when last compared are known to be shared
        # (tracks only grow): compare only what was appended since.
        start = found[0] if found is not None else 0
        mine, theirs = self.segments, other.segments
        whole = start + common_length(mine[start:], theirs[start:]) if start else common_length(mine, theirs)
        if whole >= min(len(mine), len(theirs)):
            self._common[other] = other._common[self] = (whole, -1)  # -1: no difference yet
            return whole, 0
        shared = (whole, common_chars(mine[whole], theirs[whole]))
        self._common[other] = shared
        other._common[self] = shared
        return shared

    def _offset(self, message: int) -> int:
        """Where message ``message``'s segments start (``len(parts)``: the end of the segments)."""
        j = bisect_left(self.wide, message)
        return len(self.head) + message + (self.spread[j - 1] if j else 0)

    def _add(self, segments: Sequence[str], counts: Sequence[int]) -> None:
        total = self.cumulative[-1] if self.cumulative else 0
        self.segments += segments
        self.counts += counts
        self.cumulative += islice(accumulate(counts, initial=total), 1, None)

    def extend(self, messages: _Messages, start: int, stop: int | None = None) -> None:
        """Add the parts of ``messages.view[start:stop]`` (made in order, added at once; those
        made before a part that fails are added all the same)."""
        made: list[_Part] = []
        try:
            for i in range(start, len(messages.view) if stop is None else stop):
                made.append(messages.part_for(i))
        finally:
            self._add_parts(made)
        self.view = messages.view

    def _add_parts(self, made: list[_Part]) -> None:
        if not made:
            return
        first = len(self.parts)
        segments: list[str] = []
        counts: list[int] = []
        for k, (part_segments, part_counts) in enumerate(made):
            if len(part_segments) != 1:
                self.wide.append(first + k)
                self.spread.append((self.spread[-1] if self.spread else 0) + len(part_segments) - 1)
            segments += part_segments
            counts += part_counts
        self.parts += made
        self._add(segments, counts)

    def _copy(self, source: _Track, start: int, stop: int) -> None:
        """Add ``source``'s messages ``start:stop`` as they are (a C-speed copy; only the few
        messages of more or fewer segments than one are renumbered)."""
        first, last = source._offset(start), source._offset(stop)
        low, high = bisect_left(source.wide, start), bisect_left(source.wide, stop)
        if low < high:
            before = (self.spread[-1] if self.spread else 0) - (source.spread[low - 1] if low else 0)
            self.wide += map((len(self.parts) - start).__add__, source.wide[low:high])
            self.spread += map(before.__add__, source.spread[low:high])
        self.parts += source.parts[start:stop]
        self._add(source.segments[first:last], source.counts[first:last])

    def fork(self, messages: _Messages, kept: int) -> _Track:
        """A new track for ``messages`` (after a replace), whose first ``kept`` messages are this
        track's: they are copied, and so is every later run of this track's message objects
        (what followed the replaced range, :meth:`MessageView.runs_from`); only the messages
        new to it get their parts made."""
        track = _Track.__new__(_Track)
        cut, wide = self._offset(kept), bisect_left(self.wide, kept)
        track.head, track._common, track.view = self.head, WeakKeyDictionary(), ()
        track.segments, track.counts, track.cumulative = self.segments[:cut], self.counts[:cut], self.cumulative[:cut]
        track.parts, track.wide, track.spread = self.parts[:kept], self.wide[:wide], self.spread[:wide]
        at = kept
        if isinstance(messages.view, MessageView) and messages.runs:
            for start, old_start, length in messages.view.runs_from(self.view):
                if start + length <= kept:
                    continue
                skip = max(kept - start, 0)
                track.extend(messages, at, start + skip)
                track._copy(self, old_start + skip, old_start + length)
                at = start + length
        track.extend(messages, at)
        return track

    def prompt(self, source: str, fallback: Prompt | None) -> Prompt:
        return Prompt(self.segments, source, fallback, self.cumulative, len(self.segments), self)


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
        try:
            fallback = self._prompt(self._from_request(request), "json", key="json")
            wire = f"wire:{self.rule.wire_adapter}"
            got = self.pieces(request) if self.pieces is not None else None
            if got is not None:
                try:
                    return self._prompt(self._from_pieces(request, got), wire, fallback, key="wire")
                except ValueError:  # a fragment orjson cannot parse (a lone surrogate), as a body below
                    return fallback
            body = self.value(request) if self.value is not None else None
            if body is None:
                rendered = self.render(request) if self.render is not None else None  # None: refused
                body = body_object(rendered)
            if body is not None:
                # a loop request's body extends the last one's track; an auxiliary call's is its own
                return self._prompt(self._from_body(body), wire, fallback, key="body" if request.kind == "loop" else None)
            return fallback
        finally:
            self._memo.roll()

    # -- parts ------------------------------------------------------------------------------

    def _part(self, key: Hashable, owner: Any, values: Callable[[], Iterable[Any]]) -> _Part:
        return self._memo.get(key, owner, lambda: self._counted(tuple(stringify(v) for v in values())))

    def _text(self, key: Hashable, owner: Any, text: str) -> _Part:
        """A part that is already one segment (a JSON.stringify-exact fragment)."""
        return self._memo.get(key, owner, lambda: self._counted((text,)))

    def _counted(self, segments: tuple[str, ...]) -> _Part:
        return segments, tuple(self.count(s) for s in segments)

    def _prompt(self, parts: dict[str, Any], source: str, fallback: Prompt | None = None,
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


def _same_start(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many leading items ``a`` and ``b`` share as the same objects (found at C speed)."""
    return next(compress(count(), map(is_not, a, b)), min(len(a), len(b)))


def _same(a: Any, b: Any) -> bool:
    """Whether ``a`` and ``b`` are one object, or tuples of the same objects (a key made of ids
    is only valid while the objects it names are alive and the same: the owner keeps them)."""
    if a is b:
        return True
    return type(a) is tuple and type(b) is tuple and len(a) == len(b) and all(x is y for x, y in zip(a, b))


LONG = 1 << 16  # characters of a string keyed by identity in a body value, not by its content


def _long_strings(value: Any, out: list[str]) -> None:
    """Append each string of ``value`` of :data:`LONG` characters or more, in writing order
    (walked with a stack: a value nested as deep as the log reader allows is no recursion error)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if len(item) >= LONG:
                out.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(item.values()))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def blank_long(value: Any) -> Any:
    """``value`` with each string of :data:`LONG` characters or more written as ``""`` (a copy of
    its structure; what ``JSON.stringify`` writes outside those strings is unchanged). Walked with
    a stack: a value nested as deep as the log reader allows is no recursion error.

    Example:
        >>> blank_long({"a": ["x" * LONG, 1], "b": "y"})
        {'a': ['', 1], 'b': 'y'}
    """
    return rebuild_json(value, blank_from=LONG)


class _Skeletons:
    """:func:`retention_body`'s stand-ins for body messages, by identity (each entry holds its
    message, so an id is not reused while it is here). Emptied whole past :attr:`LIMIT` (weighed by
    the bytes written to make them: a huge message must not be pinned for long). Shared by the
    process's threads (``watch`` follows each log in one): each state is one value, read and
    replaced whole."""

    LIMIT = 8_000_000
    ENTRY = 64

    def __init__(self) -> None:
        self.parts: dict[int, tuple[Any, bytes | None]] = {}
        self.weight = 0
        # the last body's messages and their stand-ins (held: their ids stay theirs)
        self.last: tuple[list[Any], list[bytes | None]] = ([], [])

    def all(self, messages: list[Any]) -> list[bytes | None]:
        """The stand-in of each of ``messages``: those the last list started with (the same
        objects, found at C speed) as they were, the rest looked up or made."""
        last, last_parts = self.last
        kept = _same_start(messages, last)
        parts = last_parts[:kept] + [self.get(m) for m in messages[kept:]]
        self.last = (messages, parts)
        return parts

    def get(self, message: Any) -> bytes | None:
        """The stand-in of ``message``; None when it does not parse alone (so neither does a body
        that holds it, nor may its stand-in)."""
        found = self.parts.get(id(message))
        if found is not None and found[0] is message:
            return found[1]
        if self.weight > self.LIMIT:
            self.parts, self.weight = {}, 0
        written = stringify_bytes(blank_long(message))
        try:
            orjson.loads(b'{"messages":[' + written + b"]}")  # at its depth in a body
            part: bytes | None = b"{" + b",".join(b'"cache_control":' + m for m, _ in key_objects(written, "cache_control")) + b"}"
        except ValueError:
            part = None
        self.parts[id(message)] = (message, part)
        self.weight += len(written) + self.ENTRY
        return part


_SKELETONS = _Skeletons()


def retention_body(body: dict[str, Any]) -> bytes:
    """Bytes :meth:`~dsh_audit.cache.CacheRule.retention` reads the same retention from as from
    ``stringify_bytes(blank_long(body))``, made from each message once: every message of a body
    that begins with ``model`` stands as an object of its ``cache_control`` members (the texts the
    rule parses, in order), the rest of the body as it is written. A rule reads markers wherever
    they are, and a retention key or cache options at the top level (a body that names one only
    inside a message reads as one that names none); a body that would not parse is written whole.

    Example:
        >>> retention_body({"model": "m", "messages": [{"role": "user", "content": [
        ...     {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}], "stream": True})
        b'{"model":"m","messages":[{"cache_control":{"type":"ephemeral"}}],"stream":true}'
    """
    messages = body.get("messages")
    if not isinstance(messages, list) or next(iter(body), None) != "model":
        return stringify_bytes(blank_long(body))
    parts = _SKELETONS.all(messages)
    if None in parts:
        return stringify_bytes(blank_long(body))
    members = [(stringify_bytes(k), None if k == "messages" else stringify_bytes(blank_long(v))) for k, v in body.items()]
    try:  # the rest of the body parses (each message was checked where it sits)
        orjson.loads(b"{" + b",".join(k + b":" + v for k, v in members if v is not None) + b"}")
    except ValueError:
        return stringify_bytes(blank_long(body))
    listed = b"[" + b",".join(parts) + b"]"  # type: ignore[arg-type]  # no None in parts
    written = b"{" + b",".join(k + b":" + (listed if v is None else v) for k, v in members) + b"}"
    return written


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
