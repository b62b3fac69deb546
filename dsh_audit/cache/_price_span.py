"""Which rates price a model at a send time: a dated snapshot's name resolved to its listed model,
an alias (``billed_as``) followed to the model whose rates it bills, and the span of send times
those rates hold for, which :class:`~dsh_audit.cache._prices.PriceBook` keeps for the next request
(a session's requests run forward in time, mostly inside one period).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ._price_parser import _Period, _Provider
from ._price_window import _iso

__all__: list[str] = []

# the suffix of a dated snapshot of a listed model (Anthropic -20250929, OpenAI -2024-08-06): billed
# as that model. Any other suffix names another model (gpt-5-codex, o3-deep-research, gpt-4o-audio-preview:
# other rates or none listed), which stays unpriced rather than priced as the shorter name.
_SNAPSHOT = re.compile(r"-(?:\d{8}|\d{4}-\d\d-\d\d)$")


@dataclass(frozen=True, slots=True)
class _Span:
    """What a (provider, model) is priced from at send times ``start <= t < end``: the provider
    table and model name it is billed as (an alias resolved) and the period of rates in force,
    the same for every such time (no period of the alias chain begins or ends inside)."""

    start: float
    end: float
    table: str
    name: str
    period: _Period


def _listed(models: dict[str, list[_Period]], model: str) -> str | None:
    """The name ``models`` (a provider table's) lists ``model`` under: itself, or the model a dated
    snapshot of it names (``claude-sonnet-4-5-20250929`` is billed as ``claude-sonnet-4-5``)."""
    if model in models:
        return model
    match = _SNAPSHOT.search(model)
    return model[: match.start()] if match and model[: match.start()] in models else None


def _resolved(table: _Provider, table_name: str, name: str, model: str, when: float) -> _Span | str:
    """The :class:`_Span` of ``name`` (``model`` as ``table`` lists it) at ``when``, its aliases
    followed within ``table``, or why it is unpriced (no rate in force then)."""
    start, end = -math.inf, math.inf
    for _ in range(len(table.models)):  # a chain names each model once at most
        periods = table.models[name]
        count = sum(1 for p in periods if p.start <= when)  # sorted by start: those begun by then
        if not count:
            return f"no rate for {name!r} (provider {table_name}) in force on {_iso(when)[:10]}"
        period = periods[count - 1]
        start = max(start, period.start)
        if count < len(periods):
            end = min(end, periods[count].start)
        if period.billed_as is not None or period.rates is None:
            name = period.billed_as or name
            continue
        return _Span(start, end, table_name, name, period)
    return f"'billed_as' loops from {model!r}"  # refused at load (_Parser.check_references): never met
