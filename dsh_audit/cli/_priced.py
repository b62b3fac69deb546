"""The caveats of a run's prices: what the price table could not know of the requests it priced
(:meth:`dsh_audit.cache.PriceBook.caveats_met`: a year its holiday list does not cover), said
once per run by every command that prints costs.

A command loads its price table once and prices every log with it; a worker process prices with
its own copy, so :func:`run_priced` hands each group's caveats back with the group's result into the
command's table. The command then says them with :func:`dsh_audit.cli._common.echo_caveats`, and
what ``--capture`` did to its prices with :func:`capture_notes` (every view that prices).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from .._lazy import LazyModule
from ..session import Failure, GroupResult, run_groups
from ._common import echo_note, echo_warning

if TYPE_CHECKING:
    from .. import cache
    from ..cache import PriceBook

if not TYPE_CHECKING:  # read where a view prices: `breaks` alone loads no cache code (start-up, issue 11)
    cache = LazyModule("dsh_audit.cache")

__all__ = ["capture_notes", "echo_capture_use", "run_priced"]

T = TypeVar("T")


@dataclass
class _Priced(GroupResult[T]):
    """A group's result, with the caveats its prices met (in the process that ran it)."""

    caveats: tuple[str, ...] = ()


def _priced(paths: list[str], *, task: Callable[[list[str]], GroupResult[T]], prices: PriceBook) -> _Priced[T]:
    """``task``'s result for ``paths``, with the caveats ``prices`` met running it (``task`` prices
    with the same table: one pickled object in a worker, this process's own otherwise)."""
    met = len(prices.caveats_met())
    result = task(paths)
    return _Priced(result.items, result.orphans, result.ids, result.route_warnings,
                   caveats=tuple(prices.caveats_met()[met:]))


def run_priced(paths: Sequence[str | os.PathLike[str]], task: Callable[[list[str]], GroupResult[T]], *,
               prices: PriceBook, on_group: Callable[[GroupResult[T]], None] | None = None,
               **runs: Any) -> list[T | Failure]:
    """:func:`dsh_audit.session.run_groups` of ``task``, a task that prices its logs with ``prices``
    (and returns a plain :class:`~dsh_audit.session.GroupResult`); the caveats each group met,
    in a worker's copy of the table too, are added to ``prices``
    (:meth:`~dsh_audit.cache.PriceBook.add_caveats`) as the group's result comes in, before
    ``on_group`` sees it. ``runs``: ``jobs``, ``engine``, ``scheduler``, ``progress``."""

    def merge(result: GroupResult[T]) -> None:
        if isinstance(result, _Priced):
            prices.add_caveats(result.caveats)
        if on_group is not None:
            on_group(result)

    return run_groups(paths, partial(_priced, task=task, prices=prices), on_group=merge, **runs)


def capture_notes(from_capture: int, differs: int) -> list[str]:
    """What the capture's usage did to a run's prices, a note each, said alike by every view that
    prices (``usage``, ``cache``, ``check``, ``sessions``, ``report``): ``from_capture`` requests were
    priced from it (their log holds no usage), ``differs`` logged a usage it contradicts (the log's
    is kept). A usage it holds that is damaged, or a capture that matched no request of a session,
    is the unpriced reason of the requests it leaves unpriced
    (:class:`dsh_audit.cache.LedgerEntry`'s ``unpriced``).

    Example:
        >>> capture_notes(0, 0)
        []
        >>> capture_notes(1, 2)  # doctest: +NORMALIZE_WHITESPACE
        ["1 request(s) priced from the capture's usage (their log holds none)",
         "2 request(s) logged a usage the capture's contradicts: the log's is kept"]
    """
    notes = []
    if from_capture:
        notes.append(f"{from_capture} request(s) priced from the capture's usage (their log holds none)")
    if differs:
        notes.append(f"{differs} request(s) logged a usage the capture's contradicts: the log's is kept")
    return notes


def echo_capture_use(costs: Iterable[Mapping[str, Any] | None]) -> None:
    """Say what ``--capture`` did to the prices of a run's sessions (``costs``: each one's cost
    summary, :meth:`dsh_audit.cache.SessionLedger.summary`, None when unpriced), once after them:
    :func:`capture_notes` on stderr, and a warning for each unpriced reason that is the capture's
    (its usage damaged, or it matched no request of a session), which `usage` says with its other
    unpriced reasons."""
    from_capture = differs = 0
    unpriced: dict[str, int] = {}
    for cost in costs:
        if not cost:
            continue
        from_capture += cost.get("usage_from_capture_requests", 0)
        differs += cost.get("usage_differs_requests", 0)
        for reason, count in (cost.get("unpriced") or {}).items():
            if cache.from_capture(reason):
                unpriced[reason] = unpriced.get(reason, 0) + count
    for note in capture_notes(from_capture, differs):
        echo_note(note)
    for reason, count in unpriced.items():
        echo_warning(f"{count} request(s) unpriced: {reason}")
