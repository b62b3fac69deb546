"""The breakpoints of a breakpoint-based model (OpenAI GPT-5.6 and later, :attr:`CacheRule.breakpoints`):
those each request writes (:func:`written_marks`), and the longest an earlier request wrote that a
prompt holds whole (:func:`breakpoint_levels`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..replay import Request, RequestTime
from ..session import Bodies
from ._earlier import _Level, _Seen
from ._prompt import Prompt, common_prefix, prefix_tokens
from ._body_json import body_object
from ._rules import Breakpoints, CacheRule
from ._tokens import TokenCounter

__all__: list[str] = []


def _breakpoints(bp: Breakpoints, size: int, messages: Sequence[Any], implicit: bool) -> tuple[int, ...]:
    """Segment counts of the prefixes of a ``size``-segment prompt ending in ``messages`` (one
    segment each) that end at a breakpoint (:func:`written_marks`), ascending."""
    if not messages or size < len(messages):
        return ()
    start = size - len(messages)
    points = {start + i + 1 for i, m in enumerate(messages) if _marked_once(m, bp.marker)}
    if implicit:
        last = next((i for i in range(len(messages) - 1, -1, -1)  # the latest: looked for from the end
                     if isinstance(messages[i], Mapping) and (messages[i].get("role") in bp.implicit_roles or (
                         "tool" in bp.implicit_roles and messages[i].get("type") == "function_call_output"))), None)
        if last is not None:
            points.add(start + last + 1)
    return tuple(sorted(points))


#: Whether a message carries an explicit breakpoint, by identity (each entry holds its message, so
#: an id is not reused while it is here): consecutive bodies share their history's message objects,
#: so each is looked at once, not once per request. Emptied whole past :data:`_MARKS_LIMIT` entries.
_MARKS: dict[int, tuple[Any, str, bool]] = {}
_MARKS_LIMIT = 8192


def _marked_once(message: Any, marker: str) -> bool:
    found = _MARKS.get(id(message))
    if found is not None and found[0] is message and found[1] == marker:
        return found[2]
    marked = _marked(message, marker)
    if len(_MARKS) >= _MARKS_LIMIT:
        _MARKS.clear()
    _MARKS[id(message)] = (message, marker, marked)
    return marked


def _marked(message: Any, marker: str) -> bool:
    """Whether a body message, or one of its content blocks, carries the explicit breakpoint key."""
    if not isinstance(message, Mapping):
        return False
    content = message.get("content")
    blocks = content if isinstance(content, list) else ()
    return marker in message or any(isinstance(b, Mapping) and marker in b for b in blocks)


def written_marks(bp: Breakpoints, rule: CacheRule, request: Request, prompt: Prompt,
                  logged: int | None, bodies: Bodies | None) -> dict[str, dict[int, int | None]]:
    """The breakpoints a breakpoint-based request writes, per projection of its prompt: after its
    latest message of :attr:`Breakpoints.implicit_roles` (unless its body's cache options ask
    for explicit breakpoints only), and after each message with an explicit marker on one of
    its content blocks (at the end of that message: a prompt segment is a whole message).

    A projection's last segments are its messages, one each (the rendered body's after its
    leading system and developer messages, or the log's own); one that does not hold them
    so has no breakpoint. A breakpoint at the end of the prompt measures ``logged`` tokens."""
    body = bodies.value(request, rule.wire_adapter) if bodies is not None else None
    if body is None and bodies is not None and prompt.source != "json":
        body = body_object(bodies.body(request, rule.wire_adapter))
    implicit = rule.implicit_breakpoint(body)
    found: dict[str, dict[int, int | None]] = {}
    for projection in (prompt, prompt.json):
        if projection is None:
            continue
        if projection.source == "json":
            messages: Sequence[Any] = request.messages
        else:
            items = (body or {}).get("messages") if "messages" in (body or {}) else (body or {}).get("input")
            messages = [m for m in items or [] if isinstance(m, dict)]  # a Responses body: its input
            while messages and messages[0].get("role") in ("system", "developer"):
                messages = messages[1:]
        found[projection.source] = {point: logged if point == projection.size else None
                                    for point in _breakpoints(bp, projection.size, messages, implicit)}
    return found


def breakpoint_levels(rule: CacheRule, model: str | None, prompt: Prompt, same: list[_Seen],
                      logged: int | None, size: int, now: RequestTime | None,
                      count: TokenCounter) -> dict[str, _Level]:
    """The longest breakpoint prefix an earlier request wrote that ``prompt`` holds whole, of
    the latest :attr:`Breakpoints.lookback` breakpoints, at least the minimum: any (``any``),
    within its TTL (``warm``), and readable by now (``landed``), with who wrote it.

    Of requests that hold the same breakpoint, the best measured wins, then the latest, as
    for the common prefix: one that measured it (its whole prompt with its size logged, or a
    read of it that was), then one that holds it inside (this request's count, on its logged
    scale), then a whole prompt only counted here."""
    bp = rule.breakpoints
    best: dict[str, tuple[tuple[int, int], _Seen, Prompt, Prompt]] = {}
    left = bp.lookback if bp is not None else 0
    for seen in reversed(same):
        if left <= 0:
            break
        if seen.ttl is None or not seen.marks:
            continue  # it wrote nothing
        mine, theirs = prompt.view(seen.prompt)
        written = list(seen.marks.get(theirs.source, {}).items())[-left:]
        left -= len(written)
        whole = common_prefix(mine, theirs)[0]
        held = [mark for mark in written if mark[0] <= whole]
        if not held:
            continue
        point, known = held[-1]  # the longest it holds whole: no fallback to a part of one
        measured = 2 if known is not None else 0 if point == theirs.size else 1
        warm = now is None or seen.time is None or now.sent - seen.time.sent <= seen.ttl
        landed = warm and (now is None or seen.time is None or (
            (seen.time.done is not None and seen.time.done <= now.sent)
            and now.sent - seen.time.sent >= rule.write_lag_seconds))
        for name, ok in (("any", True), ("warm", warm), ("landed", landed)):
            if ok and (name not in best or (point, measured) > best[name][0]):  # equal: the latest keeps it
                best[name] = ((point, measured), seen, mine, theirs)
    minimum = rule.min_tokens(model)
    levels: dict[str, _Level] = {}
    for name, ((point, measured), seen, mine, theirs) in best.items():
        known = seen.marks.get(theirs.source, {}).get(point) if seen.marks else None
        if known is not None:
            raw = known  # measured: the provider's own count
        elif point == theirs.size:
            raw = seen.size  # the whole earlier prompt, counted here
        else:
            own = mine.tokens
            raw = round(prefix_tokens(mine, (point, 0), count) * (logged / own if logged and own else 1.0))
        tokens = min(raw, size)
        if tokens >= minimum:  # a strict minimum up to the breakpoint
            levels[name] = (tokens, measured == 2 and tokens == raw, seen, point, mine.source)
    return levels
