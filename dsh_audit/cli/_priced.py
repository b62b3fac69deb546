"""The caveats of a run's prices: what the price table could not know of the requests it priced
(:meth:`dsh_audit.cache.PriceBook.caveats_met`: a year its holiday list does not cover), said
once per run by every command that prints costs.

A command loads its price table once and prices every log with it; a worker process prices with
its own copy, so :func:`run_priced` hands each group's caveats back with the group's result into the
command's table. The command then says them with :func:`dsh_audit.cli._common.echo_caveats`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from ..session import Failure, GroupResult, run_groups

if TYPE_CHECKING:
    from ..cache import PriceBook

__all__ = ["run_priced"]

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
