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
once), or per serialised part (other bodies). A prompt therefore costs its new parts plus a
pointer per shared one, and two prompts compare at C speed on shared segments.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from itertools import accumulate, islice
from typing import Any

import orjson

from ..jsjson import stringify
from ..replay import MessageView, Request
from ..wire import PromptPieces, fold_text_block, without_cache_markers
from ._rules import CacheRule
from ._tokens import TokenCounter, make_counter

__all__ = ["Prompt", "PromptBuilder", "common_chars", "common_prefix", "prefix_tokens"]


@dataclass(frozen=True, slots=True)
class Prompt:
    """One request's prompt segments, their token counts, and where they came from.

    Attributes:
        segments: the segments in the rule's render order.
        source: ``wire:<adapter>`` or ``json``.
        json: the log-JSON projection of a wire-projected prompt, used to compare it with a
            request whose body could not be rendered (like is compared with like).
        cumulative: tokens of the first ``k + 1`` segments at ``k`` (empty when not counted).
        chain: a hash of the first ``k + 1`` segments at ``k`` (each link hashes the one before
            and its segment), so two prompts' common prefix is found by a binary search on their
            chains instead of comparing segments (empty when not built).
    """

    segments: tuple[str, ...]
    source: str
    json: Prompt | None = None
    cumulative: tuple[int, ...] = ()
    chain: tuple[int, ...] = ()

    @property
    def tokens(self) -> int:
        """Tokens of the whole prompt (0 when not counted)."""
        return self.cumulative[-1] if self.cumulative else 0

    def view(self, other: Prompt) -> tuple[Prompt, Prompt]:
        """``(self, other)`` in a common projection (both rendered, or both log JSON)."""
        if self.source == other.source:
            return self, other
        return self.json or self, other.json or other


def common_chars(a: str, b: str) -> int:
    """Length of the common leading substring of ``a`` and ``b`` (binary search on slices)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def common_prefix(a: Prompt, b: Prompt) -> tuple[int, int]:
    """``(whole segments, extra characters)`` that ``a`` and ``b`` share from the start.

    A binary search on tuple slices: shared segments are usually the same objects, which compare
    by identity at C speed.
    """
    x, y = a.segments, b.segments
    n = min(len(x), len(y))
    if n and len(a.chain) == len(x) and len(b.chain) == len(y):
        return _chained_prefix(a, b, n)
    if x[:n] == y[:n]:
        return n, 0
    lo, hi = 0, n  # x[:lo] == y[:lo] and x[:hi] != y[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if x[lo:mid] == y[lo:mid]:
            lo = mid
        else:
            hi = mid
    return lo, common_chars(x[lo], y[lo])


def _chained_prefix(a: Prompt, b: Prompt, n: int) -> tuple[int, int]:
    x, y, ca, cb = a.segments, b.segments, a.chain, b.chain
    if ca[n - 1] == cb[n - 1] and x[n - 1] == y[n - 1]:
        return n, 0
    lo, hi = 0, n  # the first lo segments are shared, the first hi are not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ca[mid - 1] == cb[mid - 1]:
            lo = mid
        else:
            hi = mid
    return lo, common_chars(x[lo], y[lo])


def prefix_tokens(prompt: Prompt, shared: tuple[int, int], count: TokenCounter) -> int:
    """Tokens of the first ``shared`` segments/characters of ``prompt``."""
    whole, chars = shared
    if prompt.cumulative:
        total = prompt.cumulative[whole - 1] if whole else 0
    else:
        total = sum(count(s) for s in prompt.segments[:whole])
    if chars and whole < len(prompt.segments):
        total += count(prompt.segments[whole][:chars])
    return total


class _Memo:
    """Values made for the parts of the current and the previous request; older ones dropped."""

    def __init__(self) -> None:
        self.old: dict[Hashable, tuple[Any, Any]] = {}
        self.new: dict[Hashable, tuple[Any, Any]] = {}

    def get(self, key: Hashable, owner: Any, make: Callable[[], Any]) -> Any:
        """The value for ``key`` (``owner`` is kept alive with it and must be the same object)."""
        found = self.new.get(key)
        if found is None or found[0] is not owner:
            found = self.old.get(key)
            if found is None or found[0] is not owner:
                found = (owner, make())
            self.new[key] = found
        return found[1]

    def roll(self) -> None:
        """End a request: keep what it used. A much smaller request (a title call between loop
        steps) adds to what the previous ones left instead of evicting it."""
        if len(self.new) < len(self.old) // 2:
            self.old.update(self.new)
        else:
            self.old = self.new
        self.new = {}


_Part = tuple[tuple[str, ...], tuple[int, ...]]  # segments and their token counts


class PromptBuilder:
    """Builds :class:`Prompt` values for one session under one rule.

    Args:
        rule: the provider rule (render order, prompt parameters, reasoning rule).
        render: optional ``request -> body bytes`` (a wire renderer); ``None`` or a failure
            falls back to the request's own header and messages.
        pieces: optional ``request -> PromptPieces`` (the DeepSeek renderer's unjoined body),
            used before ``render``: it gives the same segments without joining or parsing a body.
        count: the token counter (default: the rule's tokenizer, estimated).
    """

    def __init__(self, rule: CacheRule, *, render: Callable[[Request], bytes | None] | None = None,
                 pieces: Callable[[Request], PromptPieces | None] | None = None,
                 count: TokenCounter | None = None) -> None:
        self.rule = rule
        self.render = render
        self.pieces = pieces
        self.count = count or make_counter(rule.tokenizer, method="estimate")
        self._memo = _Memo()
        # per projection: the last loop request's messages, segment offsets per message, segments, counts
        self._last: dict[str, tuple[MessageView, list[int], list[str], list[int], list[_Part]]] = {}
        # per projection: the last prompt's head segments and its hash chain
        self._chains: dict[str, tuple[tuple[str, ...], list[int]]] = {}

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
            rendered = self.render(request) if self.render is not None else None  # None: refused
            body = _object(rendered)
            if body is not None:
                return self._prompt(self._from_body(body), wire, fallback)
            return fallback
        finally:
            self._memo.roll()

    # -- parts ------------------------------------------------------------------------------

    def _part(self, key: Hashable, owner: Any, values: Callable[[], Iterable[Any]]) -> _Part:
        def make() -> _Part:
            segments = tuple(stringify(v) for v in values())
            return segments, tuple(self.count(s) for s in segments)
        result: _Part = self._memo.get(key, owner, make)
        return result

    def _text(self, key: Hashable, owner: Any, text: str) -> _Part:
        """A part that is already one segment (a JSON.stringify-exact fragment)."""
        result: _Part = self._memo.get(key, owner, lambda: ((text,), (self.count(text),)))
        return result

    def _prompt(self, parts: dict[str, Any], source: str, fallback: Prompt | None = None,
                key: str | None = None) -> Prompt:
        """Join parts in render order. ``parts["messages"]`` is already flat: ``(segments, counts,
        kept)``, its first ``kept`` segments the previous prompt's of projection ``key``, so the
        hash chain is extended, not rebuilt, while the head (everything before the messages) is
        unchanged."""
        head: list[str] = []
        counts: list[int] = []
        for name in self.rule.render_order:
            if name != "messages":
                for part_segments, part_counts in parts.get(name, ()):
                    head += part_segments
                    counts += part_counts
        message_segments, message_counts, kept = parts["messages"]
        segments = head + message_segments
        counts += message_counts
        if self.rule.render_order[-1] != "messages":  # messages in the middle: no chain to extend
            return Prompt(tuple(segments), source, fallback, tuple(accumulate(counts)))
        last = self._chains.get(key) if key is not None else None
        fixed = tuple(head)
        chain = last[1][:len(head) + kept] if last is not None and kept and last[0] == fixed else []
        link = chain[-1] if chain else 0
        for segment in segments[len(chain):]:
            link = hash((link, segment))
            chain.append(link)
        if key is not None:
            self._chains[key] = (fixed, chain)
        return Prompt(tuple(segments), source, fallback, tuple(accumulate(counts)), tuple(chain))

    def _messages(self, key: str, request: Request,
                  part_for: Callable[[int], _Part]) -> tuple[list[str], list[int], int]:
        """The flat message segments and counts of ``request``.

        When it and the previous request are views of one fold generation, the shared messages'
        segments are the previous request's (only the new messages are looked at); after a
        replace, each surviving message object reuses its segments. ``part_for(i)`` makes the
        part of message ``i``.
        """
        view = request.messages
        last = self._last.get(key)
        shared = view.shared_prefix(last[0]) if isinstance(view, MessageView) and last is not None else 0
        reuse: dict[int, tuple[Any, _Part]] = {}
        if last is not None and shared:
            _, offsets, segments, counts, parts = last
            cut = offsets[shared]
            offsets, segments, counts, parts = offsets[:shared + 1], segments[:cut], counts[:cut], parts[:shared]
        else:
            cut = 0
            if last is not None:  # a replace: the messages that survived keep their segments
                reuse = {id(m): (m, part) for m, part in zip(last[0], last[4])}
            offsets, segments, counts, parts = [0], [], [], []
        for i, message in enumerate(islice(view, shared, None), shared):
            found = reuse.get(id(message))
            part = found[1] if found is not None and found[0] is message else part_for(i)
            parts.append(part)
            segments += part[0]
            counts += part[1]
            offsets.append(len(segments))
        if isinstance(view, MessageView):
            self._last[key] = (view, offsets, segments, counts, parts)
        return segments, counts, cut

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
        top = _object(("{" + tail[tail.index("]") + 2:]).encode()) if "]" in tail else None
        parts = self._head(top or {}, tail)
        system = [] if pieces.system is None else [self._text(("system", pieces.system), None, pieces.system)]
        fragments = pieces.fragments

        def part_for(i: int) -> _Part:
            fragment = fragments[i]
            return self._part(id(fragment), fragment, lambda: self._wire_messages(orjson.loads(f"[{fragment}]")))

        return {**parts, "system": system, "messages": self._messages("wire", request, part_for)}

    def _from_body(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.rule.family == "anthropic":
            body = without_cache_markers(body)
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        system: list[Any] = []
        while messages and messages[0].get("role") in ("system", "developer"):
            system.append(messages.pop(0))
        if "system" in body:
            system.insert(0, body["system"])
        head = {k: v for k, v in body.items() if k not in ("messages", "system")}
        parts: dict[str, Any] = self._head(head, orjson.dumps(head))
        parts["system"] = [self._part(("system", orjson.dumps(system)), None, lambda: system)]
        flat_segments: list[str] = []
        flat_counts: list[int] = []
        for m in messages:
            part_segments, part_counts = self._part(orjson.dumps(m), None, lambda m=m: self._wire_messages([m]))  # type: ignore[misc]
            flat_segments += part_segments
            flat_counts += part_counts
        return {**parts, "messages": (flat_segments, flat_counts, 0)}

    def _from_request(self, request: Request) -> dict[str, Any]:
        header = request.header or {}
        config = header.get("config") or {}
        params = {"reasoningEffort": config.get("reasoningEffort")} if "reasoningEffort" in config else None
        system = header.get("system")
        tools = header.get("tools")
        tool_list = list(tools) if isinstance(tools, list) else ([tools] if tools is not None else [])
        strip = self.rule.strip_reasoning_without_tool_calls
        messages = request.messages
        return {
            "params": [self._part(("json-params", id(config)), config, lambda: [params] if params else [])],
            "system": [self._part(("json-system", id(header)), header,
                                  lambda: [system] if system is not None else [])],
            "tools": [self._part(("json-tools", id(header)), header, lambda: tool_list)],
            "messages": self._messages("json", request, lambda i: self._part(
                ("json", id(messages[i])), messages[i], lambda: [_drop_reasoning(messages[i]) if strip else messages[i]])),
        }


def _object(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = orjson.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _drop_reasoning(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return message
    if any(isinstance(b, dict) and b.get("type") == "tool-call" for b in content):
        return message
    return {**message, "content": [b for b in content if not (isinstance(b, dict) and b.get("type") == "reasoning")]}
