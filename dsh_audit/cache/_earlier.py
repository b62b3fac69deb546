"""The earlier requests whose cache a request may read, and the one whose prompt shares the
longest prefix with it (:func:`_nearest`): what :mod:`._account` compares each request with.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..replay import Request, RequestTime
from .._usage_rule import NATIVE_DEEPSEEK, count_of, logged_counts, request_provider, usage_of
from ._prompt import Prompt
from ._rules import CacheRule

__all__: list[str] = []


def _logged_prompt(request: Request) -> int | None:
    """The prompt size ``request``'s logged usage holds (input + cache read + cache write), by the one
    count rule (:func:`~dsh_audit._usage_rule.logged_counts`); None when one of them holds no valid
    count: a damaged bucket is unknown, never a 0 that would make a partial sum look exact (the
    session's ``prompt_tokens`` leaves such a request out). DSH's native DeepSeek adapter's usage
    without ``cacheReadTokens`` splits nothing, but its ``inputTokens`` is the whole prompt."""
    counts = logged_counts(request)
    if counts is None:
        return None
    parts = (counts["inputTokens"], counts["cacheReadTokens"], counts["cacheWriteTokens"])
    usage = usage_of(request)
    if parts[:2] == (None, None) and request_provider(request) == NATIVE_DEEPSEEK \
            and isinstance(usage, dict) and "cacheReadTokens" not in usage:
        parts = (count_of(usage.get("inputTokens")), 0, parts[2])
    return None if None in parts else sum(v for v in parts if v is not None)


@dataclass
class _Seen:
    request: Request
    prompt: Prompt
    tokens: int
    family: str
    time: RequestTime | None
    size: int  # provider-scale prompt size: the logged prompt tokens when known, else ``tokens``
    ttl: float | None  # how long what it wrote or refreshed stays; None: it cached nothing
    logged: bool = False  # ``size`` is the logged prompt (the provider's own count)
    # A breakpoint-based request's breakpoints (prompt projection source -> segment count of each
    # prefix that ends at one, ascending -> its provider-scale tokens when measured, else None):
    # what it wrote, and what it read and so refreshed.
    marks: dict[str, dict[int, int | None]] | None = None


# A breakpoint level: tokens, whether they are measured (a logged prompt size), the request that
# wrote or refreshed the breakpoint, its segment count and the prompt projection it counts in.
_Level = tuple[int, bool, _Seen, int, str]


# Whose cached prompts a request may read: earlier requests to one server (the provider id: a DSH
# provider is one endpoint), of one model, in one wire format (the route's adapter: bodies of two
# formats are different bytes, no prefix of one is measured against the other).
_Pool = tuple[str | None, str, str | None]


def _pool(provider: str | None, rule: CacheRule, model: str | None) -> _Pool:
    return provider, rule.wire_adapter, model


def _chain(request: Request) -> str:
    return "title" if request.kind == "title" else "loop"


def _rounded(rule: CacheRule, model: str | None, tokens: int) -> int:
    if tokens < rule.min_tokens(model):
        return 0
    return tokens // rule.unit_tokens * rule.unit_tokens


def _model(request: Request) -> tuple[str | None, str | None]:
    config = (request.header or {}).get("config") or {}
    provider = config.get("provider") or request.extra.get("provider")
    model = config.get("model") or request.extra.get("model")
    # A title or compaction event's route is not validated by the reader: keep only strings.
    return (provider if isinstance(provider, str) else None), (model if isinstance(model, str) else None)


# The best earlier prompt to read from: ``((segments, characters, measured), seen, mine, theirs)``.
_Best = tuple[tuple[int, int, int], _Seen, Prompt, Prompt]
# Consecutive earlier requests whose prompts lie on the same track and so share one common prefix
# with any later prompt's: that key (source, track), and the requests. Their log-JSON projections'
# tracks are not part of it: a projection is built only when read (:attr:`Prompt.json`), beside
# a prompt of another source (:func:`_alike_runs`).
_Run = tuple[tuple[str, Any], list[_Seen]]


def _run_key(prompt: Prompt) -> tuple[str, Any]:
    return prompt.source, prompt.track


def _size(seen: _Seen) -> int:
    return seen.prompt.size


def _alike_runs(runs: Sequence[_Run], source: str) -> Iterator[tuple[bool, Any, list[_Seen]]]:
    """``runs`` latest first, as (whether their prompts are of ``source``, the track they lie on
    in the projection compared, their requests): a run of another source split into runs of its
    log-JSON projections' tracks (built now, oldest first, as they would have been request by
    request)."""
    for (their_source, their_track), seens in reversed(runs):
        if their_source == source:
            yield True, their_track, seens
            continue
        projected = _runs_by(seens, lambda seen: (seen.prompt.json or seen.prompt).track)
        for track, part in reversed(projected):
            yield False, track, part


def _runs_by(seens: list[_Seen], key: Callable[[_Seen], Any]) -> list[tuple[Any, list[_Seen]]]:
    """``seens`` in runs of consecutive requests of the same ``key`` (compared by identity)."""
    runs: list[tuple[Any, list[_Seen]]] = []
    for seen in seens:
        found = key(seen)
        if runs and runs[-1][0] is found:
            runs[-1][1].append(seen)
        else:
            runs.append((found, [seen]))
    return runs


def _runs(seen: Iterable[_Seen]) -> list[_Run]:
    """``seen`` (oldest first) in runs of the same key (:data:`_Run`)."""
    runs: list[_Run] = []
    for item in seen:
        _add_run(runs, item)
    return runs


def _add_run(runs: list[_Run], seen: _Seen) -> None:
    key = _run_key(seen.prompt)
    if runs and runs[-1][0] == key:  # tracks compare by identity
        runs[-1][1].append(seen)
    else:
        runs.append((key, [seen]))


def _drop_runs(runs: list[_Run], count: int) -> None:
    """Forget the ``count`` oldest requests of ``runs``."""
    while count > 0 and runs:
        first = runs[0][1]
        if len(first) <= count:
            count -= len(first)
            del runs[0]
        else:
            del first[:count]
            count = 0


def _nearest(prompt: Prompt, runs: Sequence[_Run], now: RequestTime | None, lag: float) -> dict[str, _Best]:
    """The earlier request whose prompt shares the longest prefix with ``prompt``, of the requests
    of ``runs`` (oldest first): any (``any``), within its TTL (``warm``), and readable by now
    (``landed``), each with the shared prefix and the two prompts compared (in one projection).

    The longest shared prefix wins; of equal ones, the best measured, then the latest: an earlier
    prompt that is the whole prefix with its size logged (the provider's own count), then part of
    one (this request's count, on its logged scale), then a whole prompt only counted here. A
    failed attempt without usage and its logged retry share a prompt: the attempt's own count is
    not the provider's scale and must not set the level.

    Most earlier requests lie on a few tracks (a fork per replace): a run's common prefix with this
    prompt is looked up once (:func:`~dsh_audit.cache._prefix.common_prefix`: its tracks' common
    prefix, or all of the shorter prompt's), and a request's is then the smaller of it and its
    size. Runs are read latest first, and one whose longest possible prefix is no longer than each
    level found so far is passed over whole: only a longer prefix can replace a later find. Within a
    run of this prompt's source, once each level found holds the run's common prefix, its requests
    longer than that prefix are passed over at once (by bisection: their sizes grew in run order).
    """
    found_any: _Best | None = None
    found_warm: _Best | None = None
    found_landed: _Best | None = None
    own: dict[Any, tuple[int, int]] = {}  # track -> its common prefix with this prompt's track
    other: dict[Any, tuple[int, int]] = {}  # ... with its log-JSON projection's track
    sent = now.sent if now is not None else None
    for alike, track, seens in _alike_runs(runs, prompt.source):
        mine, commons = (prompt, own) if alike else (prompt.json or prompt, other)
        whole = mine.size
        if alike and found_landed is not None:
            # none of the run shares more than its latest (largest) prompt, measured at best: passed
            # over as below, without comparing the tracks
            last = seens[-1].prompt.size
            if (last if last < whole else whole, 0, 2) <= found_landed[0]:
                continue
        if track is mine.track:
            chars = 0
        else:
            common = commons.get(track)
            if common is None:
                common = commons[track] = mine.track.common(track)
            if common[0] < whole:
                whole, chars = common
            else:
                chars = 0
        # No request of the run shares more than (whole, chars), measured at best: none can replace
        # what a later one found when that is as good. Each landed request is warm and each warm one
        # is any: the landed find is found last and is the least of the three, the one to beat.
        if found_landed is not None and (whole, chars, 2) <= found_landed[0]:
            continue
        at = len(seens)
        while at:  # latest first
            at -= 1
            seen = seens[at]
            if seen.ttl is None:
                continue  # it wrote nothing
            theirs = seen.prompt if alike else seen.prompt.json or seen.prompt
            size = theirs.size
            n = size if size < mine.size else mine.size
            if n <= whole:  # all of the shorter prompt, or of the run's common prefix
                # A run's prompts are its tracks' first segments as they grew: read latest first,
                # none shares more than this one could. When each level found holds that, none
                # of the rest can replace a find.
                if found_landed is not None and (n, 0, 2) <= found_landed[0]:
                    break
                shared = (n, 0, 2 if seen.logged and n == size else 0 if n == size else 1)
            else:
                shared = (whole, chars, 1)
                if found_landed is not None and alike and shared <= found_landed[0]:
                    # Nor can any earlier one of the run that is longer than the common prefix (it shares
                    # just as much): a run's own prompts grew in the order they were made, so those are
                    # the ones after the last of at most ``whole`` segments.
                    at = bisect_right(seens, whole, 0, at, key=_size)
                    continue
            # latest first: only a strictly better one replaces a find (of equals, the latest wins)
            entry = None
            if found_any is None or shared > found_any[0]:
                entry = found_any = (shared, seen, mine, theirs)
            elif found_landed is not None and shared <= found_landed[0]:
                continue  # nor a warm or landed find, which are no better than the landed one
            time = seen.time
            if sent is None or time is None:
                warm = landed = True
            else:
                warm = sent - time.sent <= seen.ttl
                landed = warm and time.done is not None and time.done <= sent and sent - time.sent >= lag
            if warm:
                if found_warm is None or shared > found_warm[0]:
                    entry = found_warm = entry or (shared, seen, mine, theirs)
                if landed and (found_landed is None or shared > found_landed[0]):
                    found_landed = entry or (shared, seen, mine, theirs)
    best: dict[str, _Best] = {}
    for name, value in (("any", found_any), ("warm", found_warm), ("landed", found_landed)):
        if value is not None:
            best[name] = value
    return best

