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
* ``actual``: the logged ``cacheReadTokens`` (``None`` when the usage is absent); when the log
  holds no usage for R and the captured response to its send does (``--capture``), the capture's
  cache read, with the capture's prompt (miss + read + write) as R's logged prompt size
  (:func:`~dsh_audit.cache._causes.judged_usage`): R is judged as any request whose log holds them.

The drop from ``potential`` to ``actual`` is then split, in order, into a prefix break
(``potential -> expected_any``), a cold cache (``-> expected``) and a miss (``-> actual``:
``write_not_landed`` when the source request was still in flight or too recent, else
``best_effort_miss``). A step counts only when it exceeds the rule's tolerance; the first step that
counts is the classification. See ``docs/cache-accounting.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..replay import Request, RequestTime
from ..session import Bodies, logged_cache_read
from ._breakpoints import breakpoint_levels, written_marks
from ._causes import attribution_causes, classify, judged_usage
from ._earlier import (_add_run, _Best, _chain, _drop_runs, _Level, _logged_prompt, _model, _nearest, _pool, _Pool,
                       _rounded, _Run, _runs, _Seen)
from ._ledger import Quoted, logged_tokens, lost_costs, priced_prompt, request_route_model
from ._money import Tokens
from ._prices import PriceBook, Quote, load_prices
from ._prompt import Prompt, prefix_tokens
from ._report import BREAKS, LOST_UNKNOWN, CacheTotals, CacheVerdict, SessionCacheReport
from ._request_rules import RequestRules
from ._rules import CacheRule, Retention
from ._tokens import TokenCounter, make_counter
from ._zdr import pyproject_zero_data_retention

__all__ = ["CacheAccount", "ParentRequest", "analyze_cache", "iter_cache_verdicts"]


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



class _Analyzer:
    def __init__(self, *, times: Mapping[int, RequestTime], causes: dict[int, str] | None, unit: int | None,
                 tokenizer: str, bodies: Bodies | None, prices: PriceBook, lookback: int,
                 routes: Callable[[Request], str | None] | None, zero_data_retention: bool | None = None,
                 captured: Mapping[int, Tokens] | None = None) -> None:
        self.times, self.causes, self.prices, self.lookback, self.routes = times, causes, prices, lookback, routes
        # request index -> the capture's usage of the response to its send; a caller's own mapping,
        # empty too, is kept: a watch fills it as it goes (iter_cache_verdicts)
        self.captured = captured if captured is not None else {}
        self.lookup = RequestRules(unit=unit, tokenizer=tokenizer, bodies=bodies,
                                   zero_data_retention=zero_data_retention)
        self.last: dict[str, _Seen] = {}  # the latest request of each chain (loop, title)
        self.by_route: dict[_Pool, list[_Seen]] = {}  # recent requests per cache (:func:`_pool`)
        self.runs: dict[_Pool, list[_Run]] = {}  # the same, in runs (:func:`_nearest`)
        # the request last priced from its logged usage, that usage and its quote: what its ledger
        # entry is priced from too (:meth:`CacheAccount.quoted`), not read and quoted again
        self.quoted: tuple[Request, Quoted] | None = None

    def predecessor(self, request: Request) -> _Seen | None:
        """The conversation's previous request: the last title call for a title call, else the
        last loop or search request (a compaction call continues no conversation)."""
        return self.last.get(_chain(request))

    def inherit(self, parent: ParentRequest) -> None:
        """Take ``parent.request``, of another session, as the earlier request this session's next
        one continues and may read the cache of (:class:`ParentRequest`): it is compared with,
        never judged."""
        request, lookup = parent.request, self.lookup
        lookup.foreign[request.session_id] = parent.bodies if lookup.bodies is not None else None
        provider, model = _model(request)
        rule = lookup.rule(provider, model, parent.adapter)
        prompt = lookup.builder(rule).build(request)
        retention = lookup.retention(rule, request)
        logged = _logged_prompt(request)
        marks = written_marks(rule.breakpoints, rule, request, prompt, logged, lookup.body_source(request)) \
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
        rule = self.lookup.rule(provider, model, adapter)  # the model's own (breakpoint based?), over its route's body
        count = self.lookup.family(rule).count
        prompt = self.lookup.builder(rule).build(request)
        retention = self.lookup.retention(rule, request)
        ttl = rule.ttl_seconds if retention is None else retention.ttl_seconds
        stand_in = judged_usage(request, self.captured.get(request.index)) if self.captured else None
        logged = _logged_prompt(request) if stand_in is None else stand_in.prompt
        size = logged if logged is not None else prompt.tokens
        now = self.times.get(request.index)
        pool = _pool(provider, rule, model)
        same = self.by_route.setdefault(pool, [])
        runs = self.runs.setdefault(pool, [])
        marks, points = self._breakpoints(request, rule, model, prompt, same=same, logged=logged, size=size,
                                          now=now, count=count, ttl=ttl)
        best: dict[str, _Best] = {}
        if ttl is not None and marks is None:  # a request that caches nothing reads nothing
            candidates = same[-self.lookback:]
            best = _nearest(prompt, runs if len(candidates) == len(same) else _runs(candidates), now,
                            rule.write_lag_seconds)
        if marks is None:
            # a request found at several levels is one entry of ``best`` (:func:`_nearest`): measured once
            found_any, found_warm, found_landed = best.get("any"), best.get("warm"), best.get("landed")
            expected_any = _level(best, "any", rule, model, size=size, logged=logged, count=count)
            expected = expected_any if found_warm is found_any else \
                _level(best, "warm", rule, model, size=size, logged=logged, count=count)
            landed_level = expected if found_landed is found_warm else expected_any if found_landed is found_any \
                else _level(best, "landed", rule, model, size=size, logged=logged, count=count)
        else:
            expected_any, expected, landed_level = (points[name][0] if name in points else 0
                                                    for name in ("any", "warm", "landed"))
        origin = best["warm"][1] if "warm" in best else points["warm"][2] if "warm" in points else None
        pred = self.predecessor(request)
        potential = expected_any
        if pred is not None and pred.ttl is not None and ttl is not None:
            potential = max(potential, _rounded(rule, model, min(pred.size, size)))
        actual = logged_cache_read(request) if stand_in is None else stand_in.cache_read
        gap = (now.sent - pred.time.sent) if now and pred and pred.time else None
        classification, cause, lost = classify(
            self.causes, rule, model, size, pred, potential, expected_any, expected, landed_level, actual, request.index)
        rate, priced, unpriced = self._priced(request, now, lost, actual=actual, classification=classification,
                                           retention=retention, stand_in=stand_in)
        self._remember(request, _Seen(request, prompt, prompt.tokens, rule.family, now, size, ttl, logged is not None,
                                      marks), same, runs)
        return CacheVerdict(
            index=request.index, kind=request.kind, turn=request.turn, step=request.step, attempt=request.attempt,
            model=model, family=rule.family, prompt_tokens=logged, counted_tokens=prompt.tokens,
            potential=potential, expected_any=expected_any, expected=expected, actual=actual,
            classification=classification, cause=cause, source_index=origin.request.index if origin else None,
            gap_seconds=round(gap, 3) if gap is not None else None, lost=lost,
            lost_cost=priced[0] if priced else None, lost_cost_by_cause=priced[1] if priced else None,
            rate=rate,
            prompt_source=prompt.source, cache_retention=retention.name if retention else None,
            ttl_seconds=ttl if retention else None,
            unpriced=unpriced, usage_source="capture" if stand_in is not None else None)

    def _breakpoints(self, request: Request, rule: CacheRule, model: str | None, prompt: Prompt, *,
                     same: list[_Seen], logged: int | None, size: int, now: RequestTime | None,
                     count: TokenCounter, ttl: float | None) -> tuple[_Marks | None, dict[str, _Level]]:
        """A breakpoint-based request's breakpoints (what it writes, and what it reads and so
        refreshes) and the levels it reads at; None and no levels for any other request."""
        if not rule.breakpoint_based or rule.breakpoints is None:
            return None, {}
        points: dict[str, _Level] = {}
        marks = written_marks(rule.breakpoints, rule, request, prompt, logged, self.lookup.body_source(request))
        if ttl is not None:
            points = breakpoint_levels(rule, model, prompt, same, logged, size, now, count)
        if "warm" in points:  # a read refreshes the breakpoint it reads: this prompt holds it whole
            read, measured, _, point, projection = points["warm"]
            refreshed = marks.setdefault(projection, {})
            refreshed[point] = read if measured else refreshed.get(point)
            marks[projection] = dict(sorted(refreshed.items()))
        return marks, points

    def _priced(self, request: Request, now: RequestTime | None, lost: dict[str, int], *, actual: int | None,
                classification: str, retention: Retention | None, stand_in: Tokens | None = None
                ) -> tuple[Quote | None, tuple[float, dict[str, float]] | None, str | None]:
        """The rate the request's ``lost`` tokens are priced at (None: they are not), their cost in
        total and by cause, and why they have no cost (an unknown loss, a request with no rate);
        ``stand_in``: the capture's usage it is judged from (:func:`judged_usage`), which its
        ledger entry is priced from too."""
        billed, billed_model = request_route_model(request)
        usage, unlogged = logged_tokens(request) if stand_in is None else (stand_in, ())
        # at the rate its ledger entry is priced at: a tier prices the whole request
        price = self.prices.quote(billed, billed_model, now.sent if now else None,
                                  prompt_tokens=priced_prompt(usage, unlogged))
        self.quoted = (request, (usage, unlogged, price, billed, billed_model)) if stand_in is None else None
        # a break whose cache reads were not logged lost an unknown amount: no cost, never $0.
        # Priced here once: the request's ledger entry takes the cost (price_entry). Its lost
        # tokens were billed as its cache writes first (lost_split).
        lost_unknown = actual is None and classification in BREAKS
        rate = price if isinstance(price, Quote) and not lost_unknown else None
        priced = lost_costs(lost, rate, written=usage.cache_write if usage is not None else 0,
                            retention=retention.name if retention else None) if rate is not None else None
        return rate, priced, LOST_UNKNOWN if lost_unknown else price if isinstance(price, str) else None

    def _remember(self, request: Request, seen: _Seen, same: list[_Seen], runs: list[_Run]) -> None:
        """Keep ``seen`` as the latest request of its conversation and its cache (the last
        ``lookback`` of them)."""
        if request.kind != "compaction":
            self.last[_chain(request)] = seen
        same.append(seen)
        _add_run(runs, seen)
        kept = len(same)
        del same[:-self.lookback]
        _drop_runs(runs, kept - len(same))


#: a breakpoint-based request's breakpoints: prompt projection -> segment count -> tokens (None: not measured)
_Marks = dict[str, dict[int, int | None]]


def _level(best: dict[str, _Best], name: str, rule: CacheRule, model: str | None, *, size: int,
           logged: int | None, count: TokenCounter) -> int:
    """The tokens the ``name`` match of ``best`` shares with the request (of ``size`` provider-scale
    tokens, ``logged`` when logged), rounded to the rule's unit; 0 without one."""
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


def analyze_cache(requests: Iterable[Request], *, times: Mapping[int, RequestTime] | None = None,
                  attribution: Iterable[Any] | None = None, unit: int | None = None,
                  tokenizer: str = "auto", wire: bool = True, bodies: Bodies | None = None,
                  prices: PriceBook | None = None,
                  price_note: str | None = None, lookback: int = 64,
                  routes: Callable[[Request], str | None] | None = None, path: str = "",
                  session_id: str = "", zero_data_retention: bool | None = None,
                  parents: Mapping[int, ParentRequest] | None = None,
                  captured: Mapping[int, Tokens] | None = None) -> SessionCacheReport:
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
        captured: request index -> the tokens the captured response to its send reports
            (:func:`dsh_audit.cache.captured_usage`): a request whose log holds no usage is judged
            from them (:func:`~dsh_audit.cache._causes.judged_usage`), as its ledger entry is priced.

    Example:
        >>> report = analyze_cache([])
        >>> report.actual_total, report.token_method in ("deepseek-v4-tokenizer", "estimate-utf8-bytes/4")
        (0, True)
    """
    account = CacheAccount(causes=attribution_causes(attribution) if attribution is not None else None, unit=unit,
                           tokenizer=tokenizer, bodies=(bodies or Bodies(log=path or None)) if wire else None, prices=prices,
                           price_note=price_note, lookback=lookback, routes=routes, path=path, session_id=session_id,
                           zero_data_retention=zero_data_retention, parents=parents, captured=captured)
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
    when each request is judged, as ``causes`` is; ``captured`` as :func:`analyze_cache`'s.

    Raises:
        UsageError: ``zero_data_retention`` is None and the nearest ``pyproject.toml`` states it
            wrongly (:func:`pyproject_zero_data_retention`)."""

    def __init__(self, *, causes: dict[int, str] | None, unit: int | None = None, tokenizer: str = "auto",
                 bodies: Bodies | None = None, prices: PriceBook | None = None, price_note: str | None = None,
                 lookback: int = 64, routes: Callable[[Request], str | None] | None = None, path: str = "",
                 session_id: str = "", keep: bool = True, zero_data_retention: bool | None = None,
                 parents: Mapping[int, ParentRequest] | None = None,
                 captured: Mapping[int, Tokens] | None = None) -> None:
        self.prices = prices if prices is not None else load_prices()
        self.note = self.prices.note if price_note is None else price_note
        self.causes, self.tokenizer, self.path, self.session_id = causes, tokenizer, path, session_id
        self.times: dict[int, RequestTime] = {}
        zdr = zero_data_retention if zero_data_retention is not None else pyproject_zero_data_retention()
        self.analyzer = _Analyzer(times=self.times, causes=causes, unit=unit, tokenizer=tokenizer, bodies=bodies,
                                  routes=routes, prices=self.prices, lookback=lookback, zero_data_retention=zdr,
                                  captured=captured)
        self.parents = parents
        self.verdicts: list[CacheVerdict] = []
        self.keep = keep  # the verdicts, for report(); a caller that takes each one needs none kept
        self.totals = CacheTotals()  # what report() sums up, kept or not

    def quoted(self, request: Request) -> Quoted | None:
        """The logged usage (:func:`logged_tokens`), quote, provider and model (:func:`request_route_model`)
        the verdict of ``request``, the request last judged, was priced at
        (:func:`~dsh_audit.cache.price_entry`'s ``quoted``: the ledger entry of a request judged with
        its send time prices it at them); None when it was judged from a captured usage, or is not
        the request last judged."""
        last = self.analyzer.quoted
        return last[1] if last is not None and last[0] is request else None

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
        families = self.analyzer.lookup.families
        methods = sorted({f.count.method for f in families.values()}) or \
            [make_counter("deepseek-v4", method=self.tokenizer).method]
        return SessionCacheReport(
            path=self.path, session_id=self.session_id, verdicts=tuple(self.verdicts),
            token_method=", ".join(methods),
            rules={name: f.rule.to_json() for name, f in families.items()},
            attribution=self.causes is not None, price_note=self.note or "", totals=self.totals)


def iter_cache_verdicts(requests: Iterable[Request], *, causes: dict[int, str] | None, unit: int | None = None,
                        tokenizer: str = "auto", bodies: Bodies | None = None, prices: PriceBook | None = None,
                        lookback: int = 64, routes: Callable[[Request], str | None] | None = None,
                        zero_data_retention: bool | None = None,
                        parents: Mapping[int, ParentRequest] | None = None,
                        captured: Mapping[int, Tokens] | None = None) -> Iterator[CacheVerdict]:
    """The cache verdict of each request as it arrives, for a session that is still running.

    The same verdicts :func:`analyze_cache` gives, one request at a time: ``causes`` (request
    index -> break cause, :func:`attribution_causes`) is read when each request is judged, so a
    caller may fill it as attribution goes, as long as a request's transition is in it before the
    request is handed over; so is ``parents`` (request index -> the parent session's request a
    fork or subagent child's request continues, :class:`ParentRequest`: the one its transition
    names); and ``captured`` (request index -> the capture's usage of a request whose log holds
    none, :func:`dsh_audit.cache.given_usage`'s: a watch puts a request's in before handing it
    over). Send times are each request's own (:attr:`~dsh_audit.replay.Request.time`).
    """
    account = CacheAccount(causes=causes, unit=unit, tokenizer=tokenizer, bodies=bodies, prices=prices,
                           lookback=lookback, routes=routes, keep=False,  # a watch runs for hours
                           zero_data_retention=zero_data_retention, parents=parents, captured=captured)
    for request in requests:
        yield account.add(request, request.time)
