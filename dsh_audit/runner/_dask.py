"""The ``dask`` engine: the same per-session tasks on a Dask distributed cluster.

Needs the optional extra (``pip install 'dsh-audit[dask]'``) here and on every worker, and the
log paths must be readable by the workers under the same names (a shared file system; give
absolute paths when the workers run in another directory).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

from ..errors import UsageError

__all__ = ["DASK_INSTALL", "run_dask"]

DASK_INSTALL = "pip install 'dsh-audit[dask]'"


def _client_class() -> Any:
    try:
        from distributed import Client
    except ImportError as exc:
        raise UsageError("the dask engine needs the optional 'dask' extra (dask.distributed is not installed)",
                         hint=f"{DASK_INSTALL}, on this machine and on every worker") from exc
    return Client


def run_dask(paths: list[Any], task: Callable[[Any], Any], *, scheduler: str | None,
             progress: Callable[[int, int], None] | None, guard: Callable[..., Any],
             lost: Callable[[Any, str], Any]) -> Iterator[Any]:
    """Submit one guarded task per path to the cluster at ``scheduler``; yield results in input order.

    Raises:
        UsageError: no scheduler address, a missing extra, or a scheduler that cannot be reached.
    """
    if not scheduler:
        raise UsageError("--engine dask needs --scheduler ADDRESS",
                         hint="start one with `dask scheduler` and `dask worker ADDRESS`, then pass "
                              "--scheduler tcp://HOST:8786")
    client_class = _client_class()
    try:
        client = client_class(scheduler, set_as_default=False, timeout="10s")
    except (OSError, TimeoutError) as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {exc}",
                         hint="check the address and that `dask scheduler` is running") from exc
    with client:
        yield from _gather(client, paths, partial(guard, task), progress, lost)


def _gather(client: Any, paths: list[Any], call: Callable[[Any], Any],
            progress: Callable[[int, int], None] | None, lost: Callable[[Any, str], Any]) -> list[Any]:
    from distributed import as_completed

    if not paths:
        return []
    futures = client.map(call, paths, pure=False)
    position = {future.key: number for number, future in enumerate(futures)}
    results: list[Any] = [None] * len(paths)
    for finished, future in enumerate(as_completed(futures, loop=client.loop), 1):  # type: ignore[no-untyped-call]
        number = position[future.key]
        try:
            results[number] = future.result()
        except Exception as exc:  # noqa: BLE001 - a lost worker, a value that did not travel
            results[number] = lost(paths[number], f"the Dask cluster failed this log: {type(exc).__name__}: {exc}")
        if progress is not None:
            progress(finished, len(paths))
    return results
