"""The values a cache analysis returns: one :class:`CacheVerdict` per request, one
:class:`SessionCacheReport` per session, with totals, ratios and losses per cause."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._frozen import fast_frozen_init
from ._money import Priced, Tokens, usd_nanos
from ._rule_data import load_rules

if TYPE_CHECKING:
    from ._prices import Quote

__all__ = ["BREAKS", "CLASSIFICATIONS", "CacheTotals", "CacheVerdict", "SessionCacheReport"]

#: Every classification a verdict can carry (see docs/cache-accounting.md).
CLASSIFICATIONS = (
    "as_expected",
    "below_minimum",
    "best_effort_miss",
    "break_explained",
    "break_unattributed",
    "break_unexplained",
    "cold_ttl",
    "usage_unknown",
    "write_not_landed",
)
#: The model a verdict of no model is listed under in :attr:`CacheTotals.minimums_by_model`.
NO_MODEL = "no model"
#: The classifications that are breaks.
BREAKS = ("break_explained", "break_unattributed", "break_unexplained")
#: Why what a break lost is unknown (:attr:`CacheVerdict.lost_unknown`): the words of ``breaks``
#: and ``explain``, and the verdict's ``unpriced``.
LOST_UNKNOWN = "cache reads not logged: what it lost of the cache is unknown"


@fast_frozen_init  # one is made per request
@dataclass(frozen=True, slots=True)
class CacheVerdict:
    """Expected versus actual cache reads of one request.

    Its JSON (:meth:`to_json`, an entry of ``cache --json``'s ``timeline``) names ``potential``,
    ``expected``, ``actual`` and ``lost_cost`` as every command's JSON does:
    ``reusable_cache_read``, ``expected_cache_read``, ``actual_cache_read`` and ``lost_cost_usd``
    (``docs/ci.md``, "JSON vocabulary"), and ``lost`` as ``lost_tokens_by_cause`` beside its sum
    ``lost_tokens`` (both null when what it lost is unknown); the other keys are the attributes' names.

    Attributes:
        index, kind, turn, step, attempt, model: the request (see :class:`dsh_audit.replay.Request`).
        family: the provider rule applied (``deepseek``, ``anthropic``, ``openai``).
        prompt_tokens: the logged prompt size (input + cache read + cache write), ``None`` if unknown.
        counted_tokens: dsh-audit's count of the request's prompt segments.
        potential: cache reads had the conversation's previous request's prefix been kept.
        expected_any: expected reads ignoring TTL; ``expected``: within TTL (the prediction).
        actual: logged ``cacheReadTokens``; ``None`` means usage unknown, never 0. With
            ``usage_source`` ``capture`` (``--capture``: the log holds no usage for the request,
            the provider's usage in the captured response to its send does:
            :func:`~dsh_audit.cache._causes.judged_usage`), ``actual`` and ``prompt_tokens`` are the
            capture's, and the request is judged from them as any other (in the JSON
            ``"usage_source": "capture"``, absent for a request judged from its log or not judged).
        classification: one of :data:`CLASSIFICATIONS`; ``cause``: the break cause or miss reason.
        source_index: the earlier request that left the expected prefix; ``gap_seconds``: time
            since the conversation's previous request.
        lost: tokens that were billed as misses, per cause; ``lost_cost``: their cost (USD) at the
            request's rate (cache-miss minus cache-read), None when the request is unpriced, and
            ``unpriced`` then why (the price table's reason: an unknown model, no rate in force
            on its date; not in the JSON of ``cache``'s timeline, whose ``lost_cost_usd`` is null).
            A break whose cache reads were not logged lost an unknown amount
            (:attr:`lost_unknown`): ``lost`` is empty (null in the JSON), ``lost_cost`` None and
            ``unpriced`` :data:`LOST_UNKNOWN`, never 0. A request that is no break whose cache
            reads were not logged (``usage_unknown``) lost nothing: no shortfall of a read can
            be measured, so ``lost`` is empty, not unknown (``docs/cache-accounting.md``).
        lost_cost_by_cause: ``lost_cost`` per cause (the causes add up to it; None with it);
            ``rate``: the quote both were priced at (None: unpriced). Neither is in the JSON: the
            request's ledger entry takes them (:func:`dsh_audit.cache.price_entry`).
        prompt_source: ``wire:<adapter>`` when the rendered body was compared, else ``json``.
        cache_retention: the retention the request's rendered body asks for when it is not its
            rule's default (:class:`dsh_audit.cache.Retention`: ``1h``, ``24h`` or ``none``), with the
            ``ttl_seconds`` it was judged with (None: it caches nothing); both None otherwise, and
            then absent from the JSON.
    """

    index: int
    kind: str
    turn: int | None
    step: int | None
    attempt: int
    model: str | None
    family: str
    prompt_tokens: int | None
    counted_tokens: int
    potential: int
    expected_any: int
    expected: int
    actual: int | None
    classification: str
    cause: str | None = None
    source_index: int | None = None
    gap_seconds: float | None = None
    lost: dict[str, int] = field(default_factory=dict)
    lost_cost: float | None = None
    prompt_source: str = "json"
    cache_retention: str | None = None
    ttl_seconds: float | None = None
    unpriced: str | None = None
    lost_cost_by_cause: dict[str, float] | None = None
    rate: Quote | None = field(default=None, compare=False, repr=False)
    usage_source: str | None = None

    @property
    def lost_unknown(self) -> bool:
        """Whether what the request lost of the cache is unknown: a break whose cache reads were
        not logged (``actual`` None), which lost an unknown amount, never 0."""
        return self.actual is None and self.classification in BREAKS

    def to_json(self) -> dict[str, Any]:
        retention = {} if self.cache_retention is None else {"cache_retention": self.cache_retention,
                                                             "ttl_seconds": self.ttl_seconds}
        return {"index": self.index, "kind": self.kind, "turn": self.turn, "step": self.step,
                "attempt": self.attempt, "model": self.model, "family": self.family,
                "prompt_tokens": self.prompt_tokens, "counted_tokens": self.counted_tokens,
                "reusable_cache_read": self.potential, "expected_any": self.expected_any,
                "expected_cache_read": self.expected, "actual_cache_read": self.actual,
                "classification": self.classification, "cause": self.cause,
                "source_index": self.source_index, "gap_seconds": self.gap_seconds,
                "lost_tokens": None if self.lost_unknown else sum(self.lost.values()),
                "lost_tokens_by_cause": None if self.lost_unknown else dict(self.lost),
                "lost_cost_usd": self.lost_cost, "prompt_source": self.prompt_source, **retention,
                **({"usage_source": "capture"} if self.usage_source == "capture" else {})}


class CacheTotals:
    """The sums and counts of a session's verdicts, added to one verdict at a time: what every
    view shows of a session besides its timeline, without keeping the verdicts.

    The sums a hit ratio is made of (``actual_total``, ``expected_total``, ``prompt_total``) are
    over the same requests, the ``known`` ones: those whose cache read and prompt size were both
    logged, so that a ratio (reads over prompt tokens) never passes 100 % by counting reads of
    prompts it does not count. A request whose cache read was logged and prompt size was not (a
    usage without a valid ``inputTokens``) is left out of them and counted apart: ``sizeless``
    requests, ``sizeless_read`` cache-read tokens. The tokens lost (by cause) and the reusable
    reads they are measured from (``potential_total``) count every request whose cache read was
    logged, as the ledger prices the losses; a request whose log holds no usage and whose cache read
    and prompt size the capture gave (:attr:`CacheVerdict.usage_source` ``capture``) counts as a
    logged one, in every sum, and apart in ``from_capture``. A break whose cache reads were not logged lost an
    unknown amount (:attr:`CacheVerdict.lost_unknown`): it is counted apart (``lost_unknown``)
    and owes an unknown cost, so :attr:`lost_cost` is then a lower bound, or None when no request
    that lost tokens is known (:class:`~dsh_audit.cache._money.Priced`).

    Example:
        >>> totals = CacheTotals()
        >>> totals.requests, totals.break_count, totals.lost_cost, totals.lost_unknown
        (0, 0, None, 0)
    """

    __slots__ = ("_classes", "_lost", "_lost_cause", "actual_total", "break_count", "expected_total", "from_capture",
                 "known", "lost_unknown", "potential_total", "prompt_total", "requests", "sizeless", "sizeless_read",
                 "_causes", "_minimums")

    def __init__(self) -> None:
        self.requests = 0
        self.known = 0  # verdicts whose cache read and prompt size were logged: what a hit ratio is measured over
        self.actual_total = 0  # over the known ones
        self.expected_total = 0  # over the known ones
        self.prompt_total = 0  # over the known ones
        self.potential_total = 0  # over the known and the sizeless ones (as the lost tokens)
        self.sizeless = 0  # cache read logged, prompt size not: left out of the actual, expected and prompt sums
        self.sizeless_read = 0  # their cache reads
        self.break_count = 0
        self.lost_unknown = 0  # breaks whose cache reads were not logged: what they lost is unknown
        self.from_capture = 0  # verdicts judged from the capture's usage (the log holds none): counted as the others
        self._classes: Counter[str] = Counter()
        self._causes: Counter[str] = Counter()
        self._lost_cause: Counter[str] = Counter()
        # what the lost tokens cost, by the one rule for unpriced requests (:class:`Priced`), summed in
        # place as Priced.add sums it: [nano-dollars, requests, unpriced, owing, owing_unpriced] (:attr:`_priced_lost`)
        self._lost = [0, 0, 0, 0, 0]
        self._minimums: dict[str, dict[str, int]] = {}  # family -> model -> its minimum cacheable prefix

    def _add_minimum(self, verdict: CacheVerdict) -> None:
        """Note the minimum cacheable prefix ``verdict``'s model was judged with (:attr:`minimums_by_model`), once
        a model: the packaged rule of its family as it judges that model (a breakpoint-based one its own)."""
        models = self._minimums.setdefault(verdict.family, {})
        model = verdict.model or NO_MODEL
        if model not in models:
            rule = next((r for r in load_rules() if r.family == verdict.family), None)
            if rule is not None:
                models[model] = rule.for_model(verdict.model).min_tokens(verdict.model)

    def add(self, verdict: CacheVerdict) -> None:
        self.requests += 1
        self.from_capture += verdict.usage_source == "capture"
        self._add_minimum(verdict)
        if verdict.actual is not None and verdict.prompt_tokens is None:
            # a read of a prompt of unknown size: beside the prompts it would be a share of nothing
            self.sizeless += 1
            self.sizeless_read += verdict.actual
            self.potential_total += verdict.potential
        elif verdict.actual is not None:
            self.known += 1
            self.actual_total += verdict.actual
            self.expected_total += verdict.expected
            self.prompt_total += verdict.prompt_tokens or 0
            self.potential_total += verdict.potential
        self._classes[verdict.classification] += 1
        if verdict.classification in BREAKS:
            self.break_count += 1
            self._causes[verdict.cause or "?"] += 1
        if verdict.lost:  # most requests lost nothing
            self._lost_cause.update(verdict.lost)
        unknown = verdict.lost_unknown
        self.lost_unknown += unknown
        # owed only by a request that lost tokens (or may have: a break whose reads were not
        # logged, whose amount is unknown); priced when its rate is known
        cost = None if unknown else verdict.lost_cost
        sums = self._lost
        sums[1] += 1
        if cost is None:
            sums[2] += 1
        else:
            sums[0] += usd_nanos(cost)
        if unknown or (any(verdict.lost.values()) if verdict.lost else False):
            sums[3] += 1
            sums[4] += cost is None

    @classmethod
    def of(cls, verdicts: Iterable[CacheVerdict]) -> CacheTotals:
        totals = cls()
        for verdict in verdicts:
            totals.add(verdict)
        return totals

    @staticmethod
    def known_of(tokens: int, *, requests: int, known: int) -> int | None:
        """``tokens``, a sum over the ``known`` of ``requests`` requests (those that logged their
        cache read and prompt size: the prompt, actual and expected reads), as JSON gives it by
        ``usage``'s rule of a token sum, as ``stats`` has it (``dsh_audit.fleet._measures.measures``):
        None (unknown, never 0) when there are requests and none of them is known (no usage logged,
        or one without them); a sum of no request at all is 0.

        Example:
            >>> [CacheTotals.known_of(0, requests=r, known=k) for r, k in ((0, 0), (2, 0), (2, 1))]
            [0, None, 0]
        """
        return None if requests and not known else tokens

    def known_sum(self, tokens: int) -> int | None:
        """``tokens``, one of this session's sums over its known requests (:attr:`actual_total`,
        :attr:`expected_total`, :attr:`prompt_total`), by :meth:`known_of`."""
        return self.known_of(tokens, requests=self.requests, known=self.known)

    @property
    def classification_counts(self) -> dict[str, int]:
        return dict(sorted(self._classes.items()))

    @property
    def minimums_by_model(self) -> dict[str, dict[str, int]]:
        """Provider family -> each model its requests used (:data:`NO_MODEL` for none), in the order they first
        did -> the minimum cacheable prefix it was judged with (``claude-opus-4-5``: 4096, where the family's
        rule says 1024): what ``cache`` shows, as text and JSON, where the models of a family differ."""
        return {family: dict(models) for family, models in self._minimums.items() if models}

    @property
    def breaks_by_cause(self) -> dict[str, int]:
        return dict(sorted(self._causes.items()))

    @property
    def lost_by_cause(self) -> dict[str, int]:
        return dict(sorted(self._lost_cause.items()))

    @property
    def lost_cost(self) -> float | None:
        """What the lost tokens cost: None when no request that lost tokens was priced
        (:class:`~dsh_audit.cache._money.Priced`) or there is no request at all (nothing was
        accounted), else the sum over the priced ones: 0 when no request lost a token, whatever
        their prices."""
        lost = self._priced_lost
        known = lost.known if lost.requests else None
        return None if known is None else known + 0  # no -0.0

    @property
    def lost_owing(self) -> tuple[int, int]:
        """The requests that owe what the lost tokens cost (they lost tokens, or are a break whose
        loss is unknown), and how many of them have no known cost for it (:class:`Priced`)."""
        return self._lost[3], self._lost[4]

    @property
    def _priced_lost(self) -> Priced:
        """What the lost tokens cost, as its :class:`Priced` sum."""
        nanos, requests, unpriced, owing, owing_unpriced = self._lost
        return Priced(0.0, requests, unpriced, owing, owing_unpriced, nanos)


@dataclass(frozen=True, slots=True)
class SessionCacheReport:
    """Cache accounting for one session log.

    Attributes:
        path, session_id: the log.
        verdicts: one per request, in request order; empty when the report was made without
            keeping them (``totals`` then holds what they add up to).
        token_method: how tokens were counted (``deepseek-v4-tokenizer`` or ``estimate-utf8-bytes/4``).
        rules: the provider rules applied (``family -> rule summary``).
        attribution: ``True`` when break causes came from an attribution result.
        price_note: the "check your contract" note of the price table.
        cost: what the session cost (:meth:`dsh_audit.cache.SessionLedger.summary`), when priced.
        imported: the log is an imported one (Claude Code, Codex): break attribution needs a DSH
            log, so its break count is not applicable (None in the JSON, not 0).
        totals: the verdicts' sums and counts (made from ``verdicts`` when not given).
        captured_usage: request index -> the tokens that priced it, from the captured response to
            its send (``--capture``: its log holds no usage; the ledger's ``usage_source``
            ``capture``), which ``cache``'s timeline shows marked; its verdict is judged from
            them too (:attr:`CacheVerdict.usage_source`). Not in the JSON, whose ``cost`` counts
            them (``usage_from_capture_requests``), as its timeline marks their verdicts.
    """

    path: str
    session_id: str
    verdicts: tuple[CacheVerdict, ...]
    token_method: str
    rules: dict[str, dict[str, Any]]
    attribution: bool
    price_note: str = ""
    notes: tuple[str, ...] = ()
    cost: dict[str, Any] | None = None
    imported: bool = False
    totals: CacheTotals = field(default=None, compare=False, repr=False)  # type: ignore[assignment]
    captured_usage: dict[int, Tokens] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.totals is None:
            object.__setattr__(self, "totals", CacheTotals.of(self.verdicts))

    @property
    def request_count(self) -> int:
        return self.totals.requests

    @property
    def known_count(self) -> int:
        """Requests whose cache read and prompt size were logged (the requests a hit ratio and every
        token sum is measured over: :class:`CacheTotals`)."""
        return self.totals.known

    @property
    def sizeless_count(self) -> int:
        """Requests whose cache read was logged and prompt size was not: left out of the token sums."""
        return self.totals.sizeless

    @property
    def sizeless_read(self) -> int:
        """The cache reads of the :attr:`sizeless_count` requests (left out of :attr:`actual_total`)."""
        return self.totals.sizeless_read

    @property
    def known(self) -> tuple[CacheVerdict, ...]:
        """Verdicts whose cache read and prompt size were logged (empty when the verdicts were not kept)."""
        return tuple(v for v in self.verdicts if v.actual is not None and v.prompt_tokens is not None)

    @property
    def captured_count(self) -> int:
        """Requests judged from the capture's usage (their log holds none): in :attr:`known_count`
        and every sum, as logged ones are."""
        return self.totals.from_capture

    @property
    def actual_total(self) -> int:
        """Logged cache reads over the requests with known usage and prompt size (comparable to ``prompt_total``)."""
        return self.totals.actual_total

    @property
    def expected_total(self) -> int:
        """Expected reads over the requests with known usage (comparable to ``actual_total``)."""
        return self.totals.expected_total

    @property
    def prompt_total(self) -> int:
        return self.totals.prompt_total

    def ratio(self, tokens: int) -> float | None:
        total = self.prompt_total
        return tokens / total if total else None

    def known_sum(self, tokens: int) -> int | None:
        """``tokens`` (:attr:`prompt_total`, :attr:`actual_total` or :attr:`expected_total`) as every
        view gives it: None (unknown, never 0) when no request logged its cache read and prompt
        size (:meth:`CacheTotals.known_sum`, ``stats``' rule)."""
        return self.totals.known_sum(tokens)

    @property
    def classification_counts(self) -> dict[str, int]:
        return self.totals.classification_counts

    @property
    def break_count(self) -> int:
        """Requests classified as a break (with an attribution: exactly the breaks it found)."""
        return self.totals.break_count

    @property
    def potential_total(self) -> int:
        """Reusable cache reads over the requests whose cache read was logged: what ``lost`` is
        measured from (the sizeless ones included, as their losses are)."""
        return self.totals.potential_total

    @property
    def reusable_known(self) -> int | None:
        """:attr:`potential_total` as every view gives it: None (unknown, never 0) when the session has
        requests and none of them logged its cache read (``stats``' rule: review C of session 45, F7)."""
        return CacheTotals.known_of(self.potential_total, requests=self.totals.requests,
                                    known=self.totals.known + self.totals.sizeless)

    @property
    def breaks_by_cause(self) -> dict[str, int]:
        return self.totals.breaks_by_cause

    @property
    def lost_by_cause(self) -> dict[str, int]:
        return self.totals.lost_by_cause

    @property
    def lost_cost(self) -> float | None:
        """What the lost tokens cost (:attr:`CacheTotals.lost_cost`): a lower bound when
        :attr:`lost_unknown` breaks lost an unknown amount, None when only they owe it."""
        return self.totals.lost_cost

    @property
    def lost_unknown(self) -> int:
        """The breaks whose cache reads were not logged: what they lost is unknown, never 0."""
        return self.totals.lost_unknown

    @property
    def rules_json(self) -> dict[str, dict[str, Any]]:
        """:attr:`rules` as ``--json`` gives them: each with ``min_cacheable_tokens_by_model``, the minimum each
        model of its requests was judged with (:attr:`CacheTotals.minimums_by_model`; ``min_cacheable_tokens`` is
        the family's default, which a model of it may not have)."""
        minimums = self.totals.minimums_by_model
        return {family: {**rule, "min_cacheable_tokens_by_model": minimums.get(family, {})}
                for family, rule in self.rules.items()}

    def to_json(self, *, timeline: bool = True) -> dict[str, Any]:
        """The ``dsh-audit cache --json`` object for this session (without its last key,
        ``timeline``, when ``timeline`` is False: a writer that streams it appends it);
        ``prompt_tokens``, ``actual_cache_read`` and ``expected_cache_read`` null when no request
        logged its cache read and prompt size (:meth:`known_sum`), as ``stats --json`` has them."""
        found = {
            "path": self.path, "session_id": self.session_id, "requests": self.request_count,
            "usage_known": self.known_count, "usage_known_without_prompt": self.sizeless_count,
            "cache_read_without_prompt": self.sizeless_read, "token_method": self.token_method,
            "rules": self.rules_json,
            "attribution": self.attribution, "prompt_tokens": self.known_sum(self.prompt_total),
            "actual_cache_read": self.known_sum(self.actual_total),
            "expected_cache_read": self.known_sum(self.expected_total),
            "actual_hit_ratio": self.ratio(self.actual_total), "expected_hit_ratio": self.ratio(self.expected_total),
            "classifications": self.classification_counts, "breaks": None if self.imported else self.break_count,
            "breaks_by_cause": None if self.imported else self.breaks_by_cause,
            "reusable_cache_read": self.reusable_known,
            "lost_tokens": sum(self.lost_by_cause.values()),  # the known losses, as usage's (lost_unknown_requests)
            "lost_tokens_by_cause": self.lost_by_cause, "lost_cost_usd": self.lost_cost,
            "lost_unknown_requests": self.lost_unknown, "price_note": self.price_note, "notes": list(self.notes),
            "cost": self.cost,
        }
        if timeline:
            found["timeline"] = [v.to_json() for v in self.verdicts]
        return found
