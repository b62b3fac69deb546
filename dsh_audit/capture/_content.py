"""Content pairing (:mod:`._align`'s rule 4): the requests and captures of one lane, when their
numbers differ, paired in order where the new messages of each request say its send is.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from typing import Any

from ..log import parse_json
from ..replay import Request
from ._evidence import _parsed
from ._monotone import _monotone
from ._types import CapturedRequest

__all__: list[str] = []

#: Content pairing (:func:`_by_content`) reads a string new in more requests of a lane than this
#: only near the pairs the other strings give (it names too many requests to look at them all).
_COMMON = 32
#: How far from the request the first pass of :func:`_by_content` paired a capture with the second
#: pass looks.
_NEAR = 16


#: A string as content pairing holds it: its hash (the strings of a lane's captures are not held,
#: only a number each; two strings of one hash, 1 in 2**64, would count as one).
_Text = int


def _content(messages: Any) -> frozenset[_Text]:
    """Every string a conversation's message contents hold (a string that is a JSON object or
    array, such as tool-call arguments, by the strings in it), by its hash (:data:`_Text`): the
    same text whichever adapter's form carries it (DSH's logged messages, a chat-completions,
    Anthropic or Responses body)."""
    found: set[_Text] = set()
    stack: list[Any] = [messages]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, str):
            if value[:1] in ("{", "[") and value[-1:] in ("}", "]"):
                try:
                    stack.append(parse_json(value.encode("utf-8")))
                    continue
                except (ValueError, UnicodeError):
                    pass
            found.add(hash(value))
    return frozenset(found)


def _request_content(messages: Sequence[Any]) -> frozenset[_Text]:
    """:func:`_content` of messages as DSH logged them: their ``content`` only (a message's id and
    source are DSH's bookkeeping, never sent)."""
    return _content([m.get("content") if isinstance(m, dict) else m for m in messages])


def _fresh(requests: Sequence[Request]) -> tuple[list[frozenset[_Text]], dict[int, int]]:
    """Each request's new content (what its messages hold that the previous request of its
    session did not), and the next request of its session, by place. A request whose messages
    begin with the previous one's has only its further messages read (a long session's requests
    each resend its whole history)."""
    fresh: list[frozenset[_Text]] = []
    previous: dict[str, tuple[list[Any], set[_Text]]] = {}
    following: dict[int, int] = {}
    last: dict[str, int] = {}
    for i, request in enumerate(requests):
        messages = list(request.messages)
        before = previous.get(request.session_id)
        if before is not None and messages[:len(before[0])] == before[0]:
            added = _request_content(messages[len(before[0]):])
            fresh.append(added - before[1])
            before[1].update(added)
            previous[request.session_id] = (messages, before[1])
        else:
            content = _request_content(messages)
            fresh.append(content - before[1] if before is not None else content)
            previous[request.session_id] = (messages, set(content))
        if request.session_id in last:
            following[last[request.session_id]] = i
        last[request.session_id] = i
    return fresh, following


def _capture_content(capture: CapturedRequest) -> frozenset[_Text]:
    """:func:`_content` of the conversation a captured body sends."""
    body = _parsed(capture)
    messages = body.get("messages")
    return _content(messages if isinstance(messages, list) else body.get("input"))


def _by_content(requests: Sequence[Request], captures: Sequence[CapturedRequest]) -> list[tuple[int, int]]:
    """Pair the requests and captures of one lane (each in order) when their numbers differ: as
    many pairs as the shorter side has, in order, the gaps where the messages say they are.

    A request's new content is what its messages hold that the previous request of its session
    in the lane did not (the new user text, the last reply, its tool results). How much of it a
    capture holds is measured against the most any capture it could pair with holds (a
    compaction's summary, for one, is not sent as DSH logged it); a request whose new content no
    such capture holds has no evidence for any. A capture is the send of a request when it holds
    that request's new content and not the next one's: so a body missing in the middle of the
    lane leaves its own request unpaired instead of shifting every later pair, and a body that
    differs from its request in some content still pairs with it. Where the content tells
    nothing, the earliest pairs win (the order pairing).

    The work stays within the size of the content: each capture's strings are looked up in an
    index of the requests' new content, and only the pairs whose score is not zero
    (:func:`_scores`) are kept for :func:`_monotone`. A string new in many requests (more than
    :data:`_COMMON`: a content part's type name such as ``text``, new in the first request of
    every session of a lane; a prompt or a short reply many sessions send alike) would name each
    of them to every capture that holds it: where a lane has such strings, the pairs are found
    twice, first without them, then with every string but each capture looking only at the
    requests within :data:`_NEAR` of the one the first pass gave it (:func:`_near_first`; further
    off, the first pass's scores stand). A lane without such strings is read once, every pair
    its order allows looked at; so is, in the second pass, a lane whose counts differ by at most 5
    (every request a capture can pair with is then within :data:`_NEAR` of the first pass's).

    Returns (request index, capture index) pairs.
    """
    fresh, following = _fresh(requests)
    contents = [_capture_content(capture) for capture in captures]
    spare = abs(len(requests) - len(captures))
    index: dict[_Text, list[int]] = {}  # string -> the requests it is new in, ascending
    for i, strings in enumerate(fresh):
        for text in strings:
            index.setdefault(text, []).append(i)
    window = [(j - spare, j + spare) for j in range(len(captures))]
    telling = {text: found for text, found in index.items() if len(found) <= _COMMON}
    cells = _scores(fresh, following, contents, telling, window)
    if len(telling) < len(index):
        first = _monotone_cells(len(requests), len(captures), cells)
        reach = _near_first(first, len(requests), window)
        near = _scores(fresh, following, contents, index, reach)
        cells = {(i, j): v for (i, j), v in cells.items() if not reach[j][0] <= i <= reach[j][1]}
        cells.update(near)
    return _monotone_cells(len(requests), len(captures), cells)


def _monotone_cells(requests: int, captures: int, cells: Mapping[tuple[int, int], int]) -> list[tuple[int, int]]:
    """:func:`_monotone` over the shorter side, of scores by (request, capture): (request index,
    capture index) pairs."""
    if requests >= captures:  # a column is a capture, a row a request
        return _monotone(requests, captures, {(j, i - j): v for (i, j), v in cells.items() if i >= j})
    return [(i, j) for j, i in _monotone(captures, requests,
                                         {(i, j - i): v for (i, j), v in cells.items() if j >= i})]


def _near_first(pairs: Sequence[tuple[int, int]], requests: int,
                window: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The requests each capture is looked at against in the second pass of :func:`_by_content`:
    those within :data:`_NEAR` of the request the first pass paired it with (a capture it left
    unpaired: of the one it paired the capture before with, else the first request), within the
    capture's ``window``."""
    paired = {j: i for i, j in pairs}
    reach: list[tuple[int, int]] = []
    centre = 0
    for j, (low, high) in enumerate(window):
        centre = paired.get(j, centre)
        reach.append((max(low, centre - _NEAR, 0), min(high, centre + _NEAR, requests - 1)))
    return reach


def _scores(fresh: Sequence[frozenset[_Text]], following: Mapping[int, int], contents: Sequence[frozenset[_Text]],
            index: Mapping[_Text, Sequence[int]], reach: Sequence[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """The scores of :func:`_by_content` that are not zero, by (request, capture), for the pairs
    in reach (capture j and the requests ``reach[j]``, at most those a capture can pair with in
    order: j-spare .. j+spare): how much of request i's new content capture j holds, of the most
    any capture in its reach holds, less the same share of the next request's new content, in
    millionths. ``contents``: each capture's strings (:func:`_capture_content`); ``index``: the
    strings read, each with the requests it is new in, ascending.

    A capture that holds all of a request's new content and all of the next one's holds the same
    share of both: that pair scores zero, and only the pairs around the last request a capture
    holds, or around content held in part, are looked at. Each string a capture holds is looked
    up in two indexes: the requests it is new in, and the requests whose next request it is new
    in, each cut to the capture's reach."""
    size = [0] * len(fresh)  # how many of each request's new strings are read
    before = {after: i for i, after in following.items()}
    previous: dict[_Text, Sequence[int]] = {}  # string -> the requests whose next request it is new in
    for text, found in index.items():
        for i in found:
            size[i] += 1
        earlier = sorted(before[i] for i in found if i in before)
        if earlier:
            previous[text] = earlier
    most = [0] * len(fresh)
    # per capture: (request, what it holds of the request's new content, of the next request's)
    near: list[list[tuple[int, int, int]]] = []
    for strings, (low, high) in zip(contents, reach):
        hits: dict[int, int] = {}
        ahead: dict[int, int] = {}
        for text in strings:
            for counts, found in ((hits, index.get(text, ())), (ahead, previous.get(text, ()))):
                for at in range(bisect_left(found, low), bisect_right(found, high)):
                    counts[found[at]] = counts.get(found[at], 0) + 1
        full: set[int] = set()
        for i, count in hits.items():
            most[i] = max(most[i], count)
            if count == size[i]:
                full.add(i)
        near.append([(i, hits.get(i, 0), ahead.get(i, 0)) for i in {*hits, *ahead}
                     if not (i in full and following.get(i) in full)])

    def share(i: int, count: int) -> float:
        return count / most[i] if most[i] else 0.0

    cells: dict[tuple[int, int], int] = {}
    for j, candidates in enumerate(near):
        for i, mine, next_ in candidates:
            value = round((share(i, mine) - (share(following[i], next_) if i in following else 0.0)) * 1_000_000)
            if value:
                cells[i, j] = value
    return cells
