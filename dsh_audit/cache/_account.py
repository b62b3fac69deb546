"""Expected versus actual cache reads per request, classified, with the tokens and cost lost.

For each request R, with the earlier requests of the same cache (the same provider id, model and
wire format: R's prompt is its own route's body, compared with bodies of that format only; a fork
or subagent child's first request also the parent's request it continues, :class:`ParentRequest`):

* ``expected_any``: the longest common prompt prefix with any earlier request, in tokens,
  rounded down to the rule's unit, 0 below its minimum;
* ``expected``: the same over earlier requests sent within the TTL (refreshed by each use): the
  rule's, or the one the request's rendered body asks for (:meth:`CacheRule.retention`: an
  Anthropic marker's ``ttl``, OpenAI's ``prompt_cache_retention``); a body that caches nothing
  (no Anthropic marker) reads nothing and leaves nothing to read;
* for a breakpoint-based model (OpenAI GPT-5.6 and later, :attr:`CacheRule.breakpoints`), the
  level is instead the longest prefix ending at a breakpoint an earlier request wrote (the
  implicit one after its latest user or tool message, and any explicit one) that R's prompt
  contains whole, in whole tokens, 0 below the minimum; reads consider the latest breakpoints
  only, and a request that reads a breakpoint within its TTL refreshes it;
* ``potential``: what the conversation's previous request (any model) left: the smaller of its
  prompt and R's, rounded; raised to ``expected_any`` when that is larger;
* ``actual``: the logged ``cacheReadTokens`` (``None`` when the usage is absent).

The drop from ``potential`` to ``actual`` is then split, in order, into a prefix break
(``potential -> expected_any``), a cold cache (``-> expected``) and a miss (``-> actual``:
``write_not_landed`` when the source request was still in flight or too recent, else
``best_effort_miss``). A step counts only when it exceeds the rule's tolerance; the first step that
counts is the classification. See ``docs/cache-accounting.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard

from ..attribution import UNEXPLAINED_CAUSES
from ..replay import Request, RequestTime
from ..session import Bodies, logged_cache_read
from ..wire import PromptPieces
from ._prefix import Prompt, PromptBuilder, common_prefix, prefix_tokens, retention_body
from ._report import BREAKS, LOST_UNKNOWN, CacheTotals, CacheVerdict, SessionCacheReport
from ._ledger import logged_tokens, lost_costs, priced_prompt, request_route_model
from ._money import is_count
from ._prices import PriceBook, Quote, load_prices
from ._rules import Breakpoints, CacheRule, body_object, Retention, pyproject_zero_data_retention, rule_for
from ._tokens import TokenCounter, make_counter

__all__ = ["CacheAccount", "ParentRequest", "analyze_cache", "attribution_causes", "iter_cache_verdicts"]

_UNEXPLAINED = frozenset(UNEXPLAINED_CAUSES)  # break_unexplained: attribution's one definition


def _logged_prompt(request: Request) -> int | None:
    usage = request.usage if request.usage is not None else request.message_usage
    tokens = usage.get("inputTokens") if isinstance(usage, dict) else None
    if usage is None or not is_count(tokens):
        return None
    extra = (usage.get("cacheReadTokens"), usage.get("cacheWriteTokens"))
    return tokens + sum(v for v in extra if is_count(v))  # a wrong-typed or negative bucket counts 0


def _field(item: Any, *names: str) -> Any:
    for name in names:
        value = item.get(name) if isinstance(item, Mapping) else getattr(item, name, None)
        if value is not None:
            return value
    return None


def attribution_causes(attribution: Iterable[Any]) -> dict[int, str]:
    """``request index -> cause`` of every break an attribution result reports.

    One definition of a break for every view: a transition whose ``verdict`` is ``break``
    (:attr:`dsh_audit.attribution.Transition.is_break`). Accepts :class:`~dsh_audit.attribution.Transition`
    values, or any objects or dicts with an index (``request``, ``index``, ``request_index``,
    ``later``), a ``verdict`` and a ``cause``; a break without a cause is ``unexplained``.
    """
    causes: dict[int, str] = {}
    for item in attribution:
        index = _field(item, "request", "index", "request_index", "later")
        if isinstance(index, Request):
            index = index.index
        if not isinstance(index, int):
            continue
        if str(_field(item, "verdict", "kind") or "").lower() != "break":
            continue
        cause = _field(item, "cause", "code")
        cause = getattr(cause, "value", cause)
        causes[index] = str(cause) if cause else "unexplained"
    return causes


@dataclass
class _Family:
    rule: CacheRule  # the first rule of the family seen (the report's)
    count: TokenCounter  # the family's tokenizer, shared by every route of the family


@dataclass(frozen=True)
class ParentRequest:
    """The request of another session (a fork or subagent child's parent) whose cache a
    session's first request may read: the one attribution compares it with (:attr:`Transition.previous
    <dsh_audit.attribution.Transition.previous>` of ``previous_session_id``).

    Attributes:
        request: the parent's request.
        time: its send/answer time (None: TTL and write lag are not judged against it).
        bodies: the parent session's rendered bodies (:attr:`dsh_audit.session.Session.bodies`).
        adapter: the adapter its route used (:meth:`dsh_audit.session.Session.route`).
    """

    request: Request
    time: RequestTime | None = None
    bodies: Bodies | None = None
    adapter: str | None = None


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


def _breakpoints(bp: Breakpoints, size: int, messages: Sequence[Any], implicit: bool) -> tuple[int, ...]:
    """Segment counts of the prefixes of a ``size``-segment prompt ending in ``messages`` (one
    segment each) that end at a breakpoint (:meth:`_Analyzer.marks`), ascending."""
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


def _model(request: Request) -> tuple[str | None, str | None]:
    config = (request.header or {}).get("config") or {}
    provider = config.get("provider") or request.extra.get("provider")
    model = config.get("model") or request.extra.get("model")
    # A title or compaction event's route is not validated by the reader: keep only strings.
    return (provider if isinstance(provider, str) else None), (model if isinstance(model, str) else None)


# The best earlier prompt to read from: ``((segments, characters, measured), seen, mine, theirs)``.
_Best = tuple[tuple[int, int, int], _Seen, Prompt, Prompt]
# Consecutive earlier requests whose prompts lie on the same tracks (a prompt's own, its log-JSON
# projection's) and so share one common prefix with any later prompt's: that key, and the requests.
_Run = tuple[tuple[str, Any, Any], list[_Seen]]


def _run_key(prompt: Prompt) -> tuple[str, Any, Any]:
    return prompt.source, prompt.track, (prompt.json or prompt).track


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
    level found so far is passed over whole: only a longer prefix can replace a later find.
    """
    found_any: _Best | None = None
    found_warm: _Best | None = None
    found_landed: _Best | None = None
    source, projected = prompt.source, prompt.json or prompt
    own: dict[Any, tuple[int, int]] = {}  # track -> its common prefix with this prompt's track
    other: dict[Any, tuple[int, int]] = {}  # ... with its log-JSON projection's track
    sent = now.sent if now is not None else None
    for (their_source, their_track, their_json), seens in reversed(runs):
        alike = their_source == source
        mine, commons, track = (prompt, own, their_track) if alike else (projected, other, their_json)
        whole = mine.size
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
        # what a later one found when that is as good.
        if found_landed is not None and found_warm is not None and found_any is not None:
            bound = (whole, chars, 2)
            if bound <= found_landed[0] and bound <= found_warm[0] and bound <= found_any[0]:
                continue
        for seen in reversed(seens):
            if seen.ttl is None:
                continue  # it wrote nothing
            theirs = seen.prompt if alike else seen.prompt.json or seen.prompt
            size = theirs.size
            n = size if size < mine.size else mine.size
            if n <= whole:  # all of the shorter prompt, or of the run's common prefix
                # A run's prompts are its tracks' first segments as they grew: read latest first,
                # none shares more than this one could. When each level found holds that, none
                # of the rest can replace a find.
                if found_landed is not None and found_warm is not None and found_any is not None:
                    bound = (n, 0, 2)
                    if bound <= found_landed[0] and bound <= found_warm[0] and bound <= found_any[0]:
                        break
                shared = (n, 0, 2 if seen.logged and n == size else 0 if n == size else 1)
            else:
                shared = (whole, chars, 1)
            time = seen.time
            if sent is None or time is None:
                warm = landed = True
            else:
                warm = sent - time.sent <= seen.ttl
                landed = warm and time.done is not None and time.done <= sent and sent - time.sent >= lag
            # latest first: only a strictly better one replaces a find (of equals, the latest wins)
            entry = None
            if found_any is None or shared > found_any[0]:
                entry = found_any = (shared, seen, mine, theirs)
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


class _Analyzer:
    def __init__(self, *, times: Mapping[int, RequestTime], causes: dict[int, str] | None, unit: int | None,
                 tokenizer: str, bodies: Bodies | None, prices: PriceBook, lookback: int,
                 routes: Callable[[Request], str | None] | None, zero_data_retention: bool | None = None) -> None:
        self.times, self.causes, self.unit, self.tokenizer = times, causes, unit, tokenizer
        self.zero_data_retention = zero_data_retention
        self.bodies, self.prices, self.lookback, self.routes = bodies, prices, lookback, routes
        self.families: dict[str, _Family] = {}
        self.builders: dict[tuple[str, str], PromptBuilder] = {}  # per (family, wire adapter)
        self.rules: dict[tuple[str | None, str | None, str | None], CacheRule] = {}
        self.last: dict[str, _Seen] = {}  # the latest request of each chain (loop, title)
        self.by_route: dict[_Pool, list[_Seen]] = {}  # recent requests per cache (:func:`_pool`)
        self.runs: dict[_Pool, list[_Run]] = {}  # the same, in runs (:func:`_nearest`)
        # Other sessions' requests this one's may read (a fork child's parent): their bodies.
        self.foreign: dict[str, Bodies | None] = {}

    def rule(self, provider: str | None, model: str | None, adapter: str | None) -> CacheRule:
        """The cache rule of a request of ``provider``/``model`` sent by ``adapter`` (its route's)."""
        rule = self.rules.get((provider, model, adapter))
        if rule is None:
            rule = self.rules[(provider, model, adapter)] = rule_for(
                provider, model, unit=self.unit, adapter=adapter).with_zero_data_retention(self.zero_data_retention)
        return rule

    def family(self, rule: CacheRule) -> _Family:
        """The rule's family: its token counter, and the first of its rules seen (the report's)."""
        found = self.families.get(rule.family)
        if found is None:
            found = self.families[rule.family] = _Family(rule, make_counter(rule.tokenizer, method=self.tokenizer))
        return found

    def body_source(self, request: Request) -> Bodies | None:
        """The rendered bodies ``request`` is read from: its own session's (another session's for
        a request of :meth:`inherit`)."""
        if request.session_id in self.foreign:
            return self.foreign[request.session_id]
        return self.bodies

    def builder(self, rule: CacheRule) -> PromptBuilder:
        """The prompt builder of a rule's wire format: one per family and adapter, so that each
        request's prompt is its own route's body (the session renders each body once per adapter)."""
        key = (rule.family, rule.wire_adapter)
        found = self.builders.get(key)
        if found is None:
            adapter, source = rule.wire_adapter, self.body_source
            wired = self.bodies is not None

            def render(request: Request) -> bytes | None:
                bodies = source(request)
                return None if bodies is None else bodies.body(request, adapter)

            def pieces(request: Request) -> PromptPieces | None:
                bodies = source(request)
                return None if bodies is None else bodies.pieces(request, adapter)

            def value(request: Request) -> dict[str, Any] | None:
                bodies = source(request)
                return None if bodies is None else bodies.value(request, adapter)

            found = self.builders[key] = PromptBuilder(
                rule, render=render if wired else None, pieces=pieces if wired else None,
                value=value if wired else None, count=self.family(rule).count)
        return found

    def predecessor(self, request: Request) -> _Seen | None:
        """The conversation's previous request: the last title call for a title call, else the
        last loop or search request (a compaction call continues no conversation)."""
        return self.last.get(_chain(request))

    def inherit(self, parent: ParentRequest) -> None:
        """Take ``parent.request``, of another session, as the earlier request this session's next
        one continues and may read the cache of (:class:`ParentRequest`): it is compared with,
        never judged."""
        request = parent.request
        self.foreign[request.session_id] = parent.bodies if self.bodies is not None else None
        provider, model = _model(request)
        rule = self.rule(provider, model, parent.adapter)
        prompt = self.builder(rule).build(request)
        retention = self.retention(rule, request)
        logged = _logged_prompt(request)
        marks = self.marks(rule.breakpoints, rule, request, prompt, logged) \
            if rule.breakpoint_based and rule.breakpoints is not None else None
        seen = _Seen(request, prompt, prompt.tokens, rule.family, parent.time,
                     logged if logged is not None else prompt.tokens,
                     rule.ttl_seconds if retention is None else retention.ttl_seconds, logged is not None, marks)
        self.last[_chain(request)] = seen
        pool = _pool(provider, rule, model)
        self.by_route.setdefault(pool, []).append(seen)
        _add_run(self.runs.setdefault(pool, []), seen)

    def verdict(self, request: Request) -> CacheVerdict:
        provider, model = _model(request)
        adapter = self.routes(request) if self.routes is not None else None
        rule = self.rule(provider, model, adapter)  # the model's own (breakpoint based?), over its route's body
        count = self.family(rule).count
        prompt = self.builder(rule).build(request)
        retention = self.retention(rule, request)
        ttl = rule.ttl_seconds if retention is None else retention.ttl_seconds
        tokens = prompt.tokens
        logged = _logged_prompt(request)
        size = logged if logged is not None else tokens
        now = self.times.get(request.index)
        best: dict[str, _Best] = {}
        same = self.by_route.setdefault(_pool(provider, rule, model), [])
        runs = self.runs.setdefault(_pool(provider, rule, model), [])
        marks: dict[str, dict[int, int | None]] | None = None
        points: dict[str, _Level] = {}
        if rule.breakpoint_based and rule.breakpoints is not None:
            marks = self.marks(rule.breakpoints, rule, request, prompt, logged)
            if ttl is not None:
                points = self.breakpoint_levels(rule, model, prompt, same, logged, size, now, count)
            if "warm" in points:  # a read refreshes the breakpoint it reads: this prompt holds it whole
                read, measured, _, point, projection = points["warm"]
                refreshed = marks.setdefault(projection, {})
                refreshed[point] = read if measured else refreshed.get(point)
                marks[projection] = dict(sorted(refreshed.items()))
        if ttl is not None and marks is None:  # a request that caches nothing reads nothing
            candidates = same[-self.lookback:]
            best = _nearest(prompt, runs if len(candidates) == len(same) else _runs(candidates), now,
                            rule.write_lag_seconds)

        def level(name: str) -> int:
            if name not in best:
                return 0
            found, seen, mine, theirs = best[name]
            shared = found[:2]
            if shared == (theirs.size, 0):
                raw = seen.size  # the whole earlier prompt: a request-boundary unit of known size
            else:
                own = mine.tokens
                raw = round(prefix_tokens(mine, shared, count) * (logged / own if logged and own else 1.0))
            return _rounded(rule, model, min(raw, size))

        if marks is None:
            expected_any, expected, landed_level = level("any"), level("warm"), level("landed")
        else:
            expected_any, expected, landed_level = (points[name][0] if name in points else 0
                                                    for name in ("any", "warm", "landed"))
        origin = best["warm"][1] if "warm" in best else points["warm"][2] if "warm" in points else None
        pred = self.predecessor(request)
        potential = expected_any
        if pred is not None and pred.ttl is not None and ttl is not None:
            potential = max(potential, _rounded(rule, model, min(pred.size, size)))
        actual = logged_cache_read(request)
        gap = (now.sent - pred.time.sent) if now and pred and pred.time else None
        classification, cause, lost = self.classify(
            rule, model, size, pred, potential, expected_any, expected, landed_level, actual, request.index)
        billed, billed_model = request_route_model(request)
        usage, unlogged = logged_tokens(request)
        # at the rate its ledger entry is priced at: a tier prices the whole request
        price = self.prices.quote(billed, billed_model, now.sent if now else None,
                                  prompt_tokens=priced_prompt(usage, unlogged))
        seen_now = _Seen(request, prompt, tokens, rule.family, now, size, ttl, logged is not None, marks)
        if request.kind != "compaction":
            self.last[_chain(request)] = seen_now
        same.append(seen_now)
        _add_run(runs, seen_now)
        kept = len(same)
        del same[:-self.lookback]
        _drop_runs(runs, kept - len(same))
        # a break whose cache reads were not logged lost an unknown amount: no cost, never $0.
        # Priced here once: the request's ledger entry takes the cost (price_entry). Its lost
        # tokens were billed as its cache writes first (lost_split).
        lost_unknown = actual is None and classification in BREAKS
        rate = price if isinstance(price, Quote) and not lost_unknown else None
        priced = lost_costs(lost, rate, written=usage.cache_write if usage is not None else 0,
                            retention=retention.name if retention else None) if rate is not None else None
        return CacheVerdict(
            index=request.index, kind=request.kind, turn=request.turn, step=request.step, attempt=request.attempt,
            model=model, family=rule.family, prompt_tokens=logged, counted_tokens=tokens,
            potential=potential, expected_any=expected_any, expected=expected, actual=actual,
            classification=classification, cause=cause, source_index=origin.request.index if origin else None,
            gap_seconds=round(gap, 3) if gap is not None else None, lost=lost,
            lost_cost=priced[0] if priced else None, lost_cost_by_cause=priced[1] if priced else None,
            rate=rate,
            prompt_source=prompt.source, cache_retention=retention.name if retention else None,
            ttl_seconds=ttl if retention else None,
            unpriced=LOST_UNKNOWN if lost_unknown else price if isinstance(price, str) else None)

    def marks(self, bp: Breakpoints, rule: CacheRule, request: Request, prompt: Prompt,
              logged: int | None) -> dict[str, dict[int, int | None]]:
        """The breakpoints a breakpoint-based request writes, per projection of its prompt: after its
        latest message of :attr:`Breakpoints.implicit_roles` (unless its body's cache options ask
        for explicit breakpoints only), and after each message with an explicit marker on one of
        its content blocks (at the end of that message: a prompt segment is a whole message).

        A projection's last segments are its messages, one each (the rendered body's after its
        leading system and developer messages, or the log's own); one that does not hold them
        so has no breakpoint. A breakpoint at the end of the prompt measures ``logged`` tokens."""
        bodies = self.body_source(request)
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

    def breakpoint_levels(self, rule: CacheRule, model: str | None, prompt: Prompt, same: list[_Seen],
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

    def retention(self, rule: CacheRule, request: Request) -> Retention | None:
        """The retention the request's rendered body asks for (None: the rule's ``ttl_seconds``).

        Without a body (no wire bodies, or one that cannot be rendered) an Anthropic request keeps
        its rule's TTL, and an OpenAI one gets what its model's default and a 24h request agree on
        (:meth:`CacheRule.retention`): OpenAI's default is not ``in_memory`` for every model.
        """
        if rule.retention_marker is None and rule.retention_key is None:
            return None
        body = None
        bodies = self.body_source(request)
        if bodies is not None:
            value = bodies.value(request, rule.wire_adapter)  # the body just built: kept
            if value is not None:
                # Its markers and retention key, written without its long texts (a huge tool result
                # is not written out to find them; nothing outside a string changes).
                return rule.retention(retention_body(value))
            body = bodies.body(request, rule.wire_adapter)
        return rule.retention(body, model=_model(request)[1])

    def break_cause(self, index: int) -> tuple[str, str] | None:
        """The break classification and cause of request ``index``; None when it is no break.

        With an attribution, a break is exactly what attribution says (one definition in every
        view); without one, a prefix drop the token model sees is an ``unattributed`` break.
        """
        if self.causes is None:
            return "break_unattributed", "unattributed"
        cause = self.causes.get(index)
        if cause is None:
            return None
        return ("break_unexplained" if cause in _UNEXPLAINED else "break_explained"), cause

    def classify(self, rule: CacheRule, model: str | None, tokens: int, pred: _Seen | None, potential: int,
                 expected_any: int, expected: int, landed: int, actual: int | None,
                 index: int) -> tuple[str, str | None, dict[str, int]]:
        known_break = self.break_cause(index) if self.causes is not None else None
        if actual is None:
            return (*known_break, {}) if known_break else ("usage_unknown", None, {})
        minimum = rule.min_tokens(model)
        if tokens < minimum or (pred is not None and min(pred.size, tokens) < minimum and potential == 0):
            return (*known_break, {}) if known_break else ("below_minimum", None, {})
        miss = "write_not_landed" if landed < expected - rule.tolerance(expected) else "best_effort_miss"
        steps = [("cold_ttl", "cold_ttl", expected), (miss, miss, actual)]
        breaking = self.break_cause(index)
        if breaking is not None:
            steps.insert(0, (*breaking, expected_any))
        remaining, first = potential, known_break
        lost: dict[str, int] = {}
        for classification, cause, target in steps:
            floor = max(target, actual)
            if remaining - floor > rule.tolerance(remaining):
                lost[cause] = lost.get(cause, 0) + remaining - floor
                first = first or (classification, cause)
            remaining = min(remaining, floor)
        if first is None:
            return "as_expected", None, {}
        return first[0], first[1], lost


def analyze_cache(requests: Iterable[Request], *, times: Mapping[int, RequestTime] | None = None,
                  attribution: Iterable[Any] | None = None, unit: int | None = None,
                  tokenizer: str = "auto", wire: bool = True, bodies: Bodies | None = None,
                  prices: PriceBook | None = None,
                  price_note: str | None = None, lookback: int = 64,
                  routes: Callable[[Request], str | None] | None = None, path: str = "",
                  session_id: str = "", zero_data_retention: bool | None = None,
                  parents: Mapping[int, ParentRequest] | None = None) -> SessionCacheReport:
    """Account for the prefix cache of one session's requests.

    Args:
        requests: the session's requests in order (:func:`dsh_audit.replay.replay`).
        times: request index -> send/answer times (:attr:`dsh_audit.session.Session.times`); without them TTL and
            write lag are not judged.
        attribution: break records (index, verdict, cause); ``None`` labels breaks ``unattributed``.
        unit: cache unit override for rules that allow it (DeepSeek: 128 default, 64 legacy).
        tokenizer: ``auto``, ``exact`` or ``estimate``.
        wire: compare rendered wire bodies when they can be rendered.
        bodies: the session's rendered bodies (:attr:`dsh_audit.session.Session.bodies`), shared
            with the other views; with ``wire`` and none given, bodies are rendered here.
        prices: the price table (default: :func:`dsh_audit.cache.load_prices`); a break's lost
            tokens are priced at its request's rate (model, date and peak window).
        lookback: how many earlier requests of the same model to compare with.
        routes: request -> the adapter its route used (:meth:`dsh_audit.session.Session.route`),
            which picks the provider's cache rule; without it the provider id and model decide.
        zero_data_retention: whether the organization has OpenAI Zero Data Retention, which
            decides OpenAI's default retention (:meth:`CacheRule.default_retention`); None: as
            the nearest ``pyproject.toml`` states it (:func:`pyproject_zero_data_retention`),
            else not stated.
        parents: request index -> the request of another session it continues (a fork or
            subagent child's first request: its parent's, :class:`ParentRequest`), compared with
            as the earlier request of its conversation and cache, never judged.

    Example:
        >>> report = analyze_cache([])
        >>> report.actual_total, report.token_method in ("deepseek-v4-tokenizer", "estimate-utf8-bytes/4")
        (0, True)
    """
    account = CacheAccount(causes=attribution_causes(attribution) if attribution is not None else None, unit=unit,
                           tokenizer=tokenizer, bodies=(bodies or Bodies(log=path or None)) if wire else None, prices=prices,
                           price_note=price_note, lookback=lookback, routes=routes, path=path, session_id=session_id,
                           zero_data_retention=zero_data_retention, parents=parents)
    given = times or {}
    for request in requests:
        account.add(request, given.get(request.index))
    return account.report()


class CacheAccount:
    """The cache accounting of one session, one request at a time, in replay order: the push form
    of :func:`analyze_cache` (which is this over a list), for a view that does not keep the
    session's requests. ``causes`` (request index -> break cause) is read when each request is
    judged, so a caller may fill it as attribution goes. Options as :func:`analyze_cache`;
    ``keep=False`` keeps no verdict (:meth:`report` then has none, and its totals). ``parents``
    (request index -> the other session's request it continues, :class:`ParentRequest`) is read
    when each request is judged, as ``causes`` is.

    Raises:
        UsageError: ``zero_data_retention`` is None and the nearest ``pyproject.toml`` states it
            wrongly (:func:`pyproject_zero_data_retention`)."""

    def __init__(self, *, causes: dict[int, str] | None, unit: int | None = None, tokenizer: str = "auto",
                 bodies: Bodies | None = None, prices: PriceBook | None = None, price_note: str | None = None,
                 lookback: int = 64, routes: Callable[[Request], str | None] | None = None, path: str = "",
                 session_id: str = "", keep: bool = True, zero_data_retention: bool | None = None,
                 parents: Mapping[int, ParentRequest] | None = None) -> None:
        self.prices = prices if prices is not None else load_prices()
        self.note = self.prices.note if price_note is None else price_note
        self.causes, self.tokenizer, self.path, self.session_id = causes, tokenizer, path, session_id
        self.times: dict[int, RequestTime] = {}
        zdr = zero_data_retention if zero_data_retention is not None else pyproject_zero_data_retention()
        self.analyzer = _Analyzer(times=self.times, causes=causes, unit=unit, tokenizer=tokenizer, bodies=bodies,
                                  routes=routes, prices=self.prices, lookback=lookback, zero_data_retention=zdr)
        self.parents = parents
        self.verdicts: list[CacheVerdict] = []
        self.keep = keep  # the verdicts, for report(); a caller that takes each one needs none kept
        self.totals = CacheTotals()  # what report() sums up, kept or not

    def add(self, request: Request, time: RequestTime | None) -> CacheVerdict:
        """Judge the next request (``time``: its send/answer time; None: TTL and write lag are not
        judged for it)."""
        if time is not None:
            self.times[request.index] = time
        parent = self.parents.get(request.index) if self.parents is not None else None
        if parent is not None:
            self.analyzer.inherit(parent)  # the earlier request this one continues, in another log
        verdict = self.analyzer.verdict(request)
        self.times.pop(request.index, None)  # only the request being judged is looked up
        if self.keep:
            self.verdicts.append(verdict)
        self.totals.add(verdict)
        return verdict

    def report(self) -> SessionCacheReport:
        """The session's cache report over every request added."""
        methods = sorted({f.count.method for f in self.analyzer.families.values()}) or \
            [make_counter("deepseek-v4", method=self.tokenizer).method]
        return SessionCacheReport(
            path=self.path, session_id=self.session_id, verdicts=tuple(self.verdicts),
            token_method=", ".join(methods),
            rules={name: f.rule.to_json() for name, f in self.analyzer.families.items()},
            attribution=self.causes is not None, price_note=self.note or "", totals=self.totals)


def iter_cache_verdicts(requests: Iterable[Request], *, causes: dict[int, str] | None, unit: int | None = None,
                        tokenizer: str = "auto", bodies: Bodies | None = None, prices: PriceBook | None = None,
                        lookback: int = 64, routes: Callable[[Request], str | None] | None = None,
                        zero_data_retention: bool | None = None,
                        parents: Mapping[int, ParentRequest] | None = None) -> Iterator[CacheVerdict]:
    """The cache verdict of each request as it arrives, for a session that is still running.

    The same verdicts :func:`analyze_cache` gives, one request at a time: ``causes`` (request
    index -> break cause, :func:`attribution_causes`) is read when each request is judged, so a
    caller may fill it as attribution goes, as long as a request's transition is in it before the
    request is handed over; so is ``parents`` (request index -> the parent session's request a
    fork or subagent child's request continues, :class:`ParentRequest`: the one its transition
    names). Send times are each request's own (:attr:`~dsh_audit.replay.Request.time`).
    """
    account = CacheAccount(causes=causes, unit=unit, tokenizer=tokenizer, bodies=bodies, prices=prices,
                           lookback=lookback, routes=routes, keep=False,  # a watch runs for hours
                           zero_data_retention=zero_data_retention, parents=parents)
    for request in requests:
        yield account.add(request, request.time)
