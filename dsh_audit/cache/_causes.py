"""What a request's cache shortfall is classified as: the break causes an attribution reports
(:func:`attribution_causes`), the usage a request is judged from (:func:`judged_usage`: its log's,
else the capture's), and the split of the drop from ``potential`` to ``actual`` into a break, a
cold cache and a miss (:func:`classify`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..attribution import UNEXPLAINED_CAUSES
from ..replay import Request
from ._earlier import _Seen
from ._logged_usage import entry_usage
from ._money import Tokens
from ._rules import CacheRule

__all__ = ["attribution_causes", "judged_usage"]

_UNEXPLAINED = frozenset(UNEXPLAINED_CAUSES)  # break_unexplained: attribution's one definition


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


def judged_usage(request: Request, captured: Tokens | None) -> Tokens | None:
    """The usage ``request``'s cache is judged from in place of its log's: ``captured`` (the
    provider's usage in the captured response to its send, ``--capture``) when the log holds no
    usage for it, by the one rule that prices it from the capture
    (:func:`~dsh_audit.cache._logged_usage.entry_usage`'s ``capture``); None when the log's usage
    judges it (a logged usage is never overridden: one the capture contradicts is the log's, and
    the ledger says they differ), or nothing does (no capture, or one that is damaged or matched
    no request: :class:`~dsh_audit.cache._response_usage.UnusableUsage`). Its cache read is the
    request's ``actual``, its :attr:`Tokens.prompt` the prompt size (both buckets are the
    provider's: the log's ``cacheReadTokens`` and ``inputTokens`` + reads + writes).

    Example:
        >>> from types import SimpleNamespace as R
        >>> title = R(usage=None, message_usage=None, header={}, kind="title", extra={})
        >>> judged_usage(title, Tokens(140, 7936, output=5)).prompt
        8076
        >>> loop = R(usage={"inputTokens": 9, "outputTokens": 2}, message_usage=None, header={}, kind="loop", extra={})
        >>> judged_usage(loop, Tokens(140, output=5)) is None, judged_usage(title, None) is None
        (True, True)
    """
    tokens, _, source, _ = entry_usage(request, captured)
    return tokens if source == "capture" else None


def break_cause(causes: dict[int, str] | None, index: int) -> tuple[str, str] | None:
    """The break classification and cause of request ``index``; None when it is no break.

    With an attribution, a break is exactly what attribution says (one definition in every
    view); without one, a prefix drop the token model sees is an ``unattributed`` break.
    """
    if causes is None:
        return "break_unattributed", "unattributed"
    cause = causes.get(index)
    if cause is None:
        return None
    return ("break_unexplained" if cause in _UNEXPLAINED else "break_explained"), cause


def classify(causes: dict[int, str] | None, rule: CacheRule, model: str | None, tokens: int, pred: _Seen | None, potential: int,
             expected_any: int, expected: int, landed: int, actual: int | None,
             index: int) -> tuple[str, str | None, dict[str, int]]:
    known_break = break_cause(causes, index) if causes is not None else None
    if actual is None:
        return (*known_break, {}) if known_break else ("usage_unknown", None, {})
    minimum = rule.min_tokens(model)
    if tokens < minimum or (pred is not None and min(pred.size, tokens) < minimum and potential == 0):
        return (*known_break, {}) if known_break else ("below_minimum", None, {})
    miss = "write_not_landed" if landed < expected - rule.tolerance(expected) else "best_effort_miss"
    steps = [("cold_ttl", "cold_ttl", expected), (miss, miss, actual)]
    breaking = known_break if causes is not None else break_cause(causes, index)
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
