"""The ``dask`` engine: the same per-session tasks on a Dask distributed cluster.

Needs the optional extra (``pip install 'dsh-audit[dask]'``) here, on the scheduler (it unpickles
the tasks) and on every worker, all of the same version, and the workers must see this machine's
files under the same absolute paths (a shared file system).

A task runs on a worker with this run's working directory as its own: a path given relative
(a log, ``--capture``, ``--routes``, ``--prices``, a policy file, a log's parent) opens the
file the user named, and the task sees every path exactly as it was given, so that what it
reports (a log's name, a finding's location, a JSON line's ``path``) is what a serial run
reports. A worker process runs the tasks of one working directory at a time; tasks of another
wait until those are done, and the worker's own directory is restored after each.

Every result is gathered and the client closed before the first is yielded: a consumer that
stops reading early (the first failing log of ``validate``) leaves nothing to shut down.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from ..errors import UnreadableError, UsageError

__all__ = ["DASK_INSTALL", "run_dask"]

DASK_INSTALL = "pip install 'dsh-audit[dask]'"

# Seconds the client may take to leave the scheduler once every result is in.
_CLOSE_TIMEOUT = 5


def _client_class() -> Any:
    try:
        from distributed import Client
    except ImportError as exc:
        raise UsageError("the dask engine needs the optional 'dask' extra (dask.distributed is not installed)",
                         hint=f"{DASK_INSTALL}, on this machine and on every worker") from exc
    return Client


def _current() -> str | None:
    """The working directory of this process, or None when it no longer exists."""
    try:
        return os.getcwd()
    except OSError:
        return None


class _Folder:
    """The working directory of a worker process, shared by its task threads: the tasks of one
    folder run together, a task of another folder waits until they are done."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._folder: str | None = None  # the folder the running tasks need
        self._users = 0
        self._home: str | None = None  # the worker's own directory, restored when they are done

    @contextmanager
    def inside(self, folder: str) -> Iterator[None]:
        """Run the block with ``folder`` as the working directory.

        Raises:
            UnreadableError: this machine has no such folder (not a shared file system).
        """
        with self._changed:
            while self._users and self._folder != folder:
                self._changed.wait()
            if not self._users:
                home = _current()
                if home != folder:
                    try:
                        os.chdir(folder)
                    except OSError as exc:
                        raise UnreadableError(
                            f"the Dask worker cannot use this run's working directory {folder}: "
                            f"{exc.strerror or exc}",
                            hint="the workers must see the files under the same paths: a shared file system",
                        ) from None
                self._home, self._folder = home, folder
            self._users += 1
        try:
            yield
        finally:
            with self._changed:
                self._users -= 1
                if not self._users:
                    if self._home is not None and self._home != folder:
                        try:
                            os.chdir(self._home)
                        except OSError:  # the worker's own folder went away meanwhile: stay here
                            pass
                    self._folder = None
                    self._changed.notify_all()


_FOLDER = _Folder()


def _in_folder(folder: str, task: Callable[[Any], Any], unit: Any) -> Any:
    """``task(unit)`` with ``folder`` (the client's working directory) as the working directory;
    runs on a worker."""
    with _FOLDER.inside(folder):
        return task(unit)


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
    folder = _current()  # None: this run's folder is gone, only absolute paths can be read anyway
    run = task if folder is None else partial(_in_folder, folder, task)
    try:
        client = client_class(scheduler, set_as_default=False, timeout="10s")
    except (OSError, TimeoutError) as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {scheduler}: {exc}",
                         hint="check the address and that `dask scheduler` is running") from exc
    try:
        results = _gather(client, paths, partial(guard, run), progress, lost)
    finally:
        _close(client)
    yield from results


def _close(client: Any) -> None:
    """Leave the scheduler; a client that cannot say goodbye in time is left behind, never waited on."""
    try:
        client.close(timeout=_CLOSE_TIMEOUT)
    except Exception:  # noqa: BLE001 - every result is in: a slow goodbye must not fail the run
        pass


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
