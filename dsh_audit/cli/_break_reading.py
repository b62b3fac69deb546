"""``breaks`` and ``explain``'s reading: each log attributed, with ``cache``'s verdicts when priced."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._lazy import LazyModule
from ..attribution import SessionAttribution, Transition, attribute_opened, attribute_paths, refuse_imported
from ..errors import DshAuditError
from ..log import discover
from ..session import Failure, GroupResult, Headers, Session, open_group
from ._break_loss import _Lost
from ._common import echo_caveats, echo_warning
from ._priced import run_priced

if TYPE_CHECKING:
    from .. import cache
    from ..cache import CacheVerdict, PriceBook


if not TYPE_CHECKING:
    # read only where a view needs cache accounting (``breaks --accounting``, ``explain``): ``breaks``
    # alone loads none (start-up, issue 11)
    cache = LazyModule("dsh_audit.cache")


@dataclass(frozen=True, slots=True)
class _Attributed:
    """One log's attribution, with the cache verdict ``dsh-audit cache`` gives each request it lists
    (its request index -> verdict), made in the same read; ``missing``: why a request has none (its
    cache was not accounted)."""

    attribution: SessionAttribution
    verdicts: dict[int, CacheVerdict] = field(default_factory=dict)
    missing: str | None = None

    def lost(self, t: Transition) -> _Lost:
        return _Lost.of(self.verdicts.get(t.request), self.missing)


def _account_group(paths: Sequence[str | os.PathLike[str]], *, lenient: bool, max_version: int, routes: str | None,
                   capture: str | None, prices: PriceBook, zero_data_retention: bool | None,
                   every: bool) -> GroupResult[_Attributed]:
    """Attribute a group of neighbouring logs as ``breaks`` always did (:func:`dsh_audit.attribution.attribute_group`:
    each log read once, a child with its parent, compared with its capture) and account each one's
    prefix cache on the same read by ``cache``'s own functions: :func:`dsh_audit.cache.account_alone`
    for a log read while it is replayed, else :func:`dsh_audit.cache.accounted` over the opened
    group and the transitions just found. The verdicts are ``cache``'s, not a second reckoning.
    Keeps the verdicts of the breaks (``every``: of every request). A task of
    :func:`dsh_audit.session.run_groups`."""
    headers = Headers(lenient=lenient, max_version=max_version)
    transitions: list[Transition] = []
    listed: set[int] = set()
    verdicts: dict[int, CacheVerdict] = {}

    def transition(found: Transition) -> None:
        transitions.append(found)
        if every or found.is_break:
            listed.add(found.request)

    def judged(_request: Any, verdict: CacheVerdict, _entry: Any) -> None:
        if verdict.index in listed:  # a request is judged once its transition is known
            verdicts[verdict.index] = verdict

    streamed = cache.account_alone(paths, headers, prices=prices, routes=routes, capture=capture,
                                   zero_data_retention=zero_data_retention, keep=False,
                                   on_transition=transition, on_judged=judged)
    if streamed is not None:  # a log given alone that is no fork or subagent child and has no capture
        first = streamed.items[0]
        one = first if isinstance(first, Failure) else _Attributed(
            SessionAttribution(first[0].session_id, first[0].path, tuple(sorted(transitions, key=lambda t: t.request))),
            verdicts)
        return GroupResult([one], streamed.orphans, streamed.ids, streamed.route_warnings)
    group = open_group(paths, lenient=lenient, max_version=max_version, routes=routes, headers=headers)
    # --capture read and aligned once: attributed with, and pricing and judging a request whose log holds no usage
    aligned = cache.given_capture([item for item in group.given if isinstance(item, Session)], capture)
    found = attribute_opened(group, capture=aligned or capture)  # a capture that cannot be read: its logs' Failure
    items: list[_Attributed | Failure] = []
    for item, report in cache.accounted(group, found=found, prices=prices, zero_data_retention=zero_data_retention,
                                        capture=capture, aligned=aligned):
        attribution = found.get(item.path) if isinstance(item, Session) and not item.imported else None
        if not isinstance(attribution, SessionAttribution):  # unread, imported, or its capture unreadable
            refused = attribution if isinstance(attribution, Failure) else refuse_imported(item)
            items.append(refused)  # type: ignore[arg-type]
            continue
        if isinstance(report, DshAuditError):  # the breaks stand without it
            items.append(_Attributed(attribution, missing=f"its cache was not accounted: {report.message}"))
            continue
        shown = {t.request for t in attribution.transitions if every or t.is_break}
        judged_here = report.verdicts if report is not None else ()
        items.append(_Attributed(attribution, {v.index: v for v in judged_here if v.index in shown}))
    return GroupResult.of(group, items)


def _attribute(logs: Sequence[Path | str], *, lenient: bool, max_version: int, routes: str | None,
               capture: str | None, prices: PriceBook | None, zero_data_retention: bool | None = None,
               every: bool = False, jobs: int = 1, engine: str = "local", scheduler: str | None = None,
               progress: Callable[[int, int], None] | None = None) -> tuple[list[_Attributed], list[Failure]]:
    """Every log attributed as :func:`dsh_audit.attribution.attribute_paths` attributes it, with the
    cache verdicts of the requests listed (:func:`_account_group`; ``prices`` None: none, the
    attribution alone, as ``breaks`` without --accounting reads it), each log's route-file warnings
    printed once (before its results: they say which window the bodies were rendered with), and
    then the caveats of the prices (:func:`echo_caveats`)."""
    warnings: dict[str, tuple[str, ...]] = {}

    def keep_warnings(result: GroupResult[Any]) -> None:
        warnings.update(result.route_warnings)

    if prices is None:
        found, failures = attribute_paths(logs, lenient=lenient, max_version=max_version, jobs=jobs, engine=engine,
                                          scheduler=scheduler, progress=progress, routes=routes,
                                          on_group=keep_warnings, capture=capture)
        attributed = [_Attributed(attribution) for attribution in found]
    else:
        task = partial(_account_group, lenient=lenient, max_version=max_version, routes=routes,
                       capture=os.fspath(capture) if capture is not None else None, prices=prices,
                       zero_data_retention=zero_data_retention, every=every)
        ordered = run_priced(discover(list(logs)), task, prices=prices, jobs=jobs, engine=engine,
                             scheduler=scheduler, progress=progress, on_group=keep_warnings)
        attributed = [a for a in ordered if isinstance(a, _Attributed)]
        failures = [f for f in ordered if isinstance(f, Failure)]
    for path in logs:
        for warning in warnings.get(os.fspath(path), ()):
            echo_warning(warning)
    if prices is not None:
        echo_caveats(prices)
    return attributed, failures
