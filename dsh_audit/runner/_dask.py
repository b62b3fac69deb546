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

A cluster that cannot finish the run ends it instead of leaving it waiting for ever (issue 15):
a scheduler that has had no worker for :data:`NO_WORKER_SECONDS` (Dask itself waits for one as
long as it takes), a task Dask gave up on after its workers died running it (``KilledWorker``),
or a scheduler that went away. The run stops with one :class:`~dsh_audit.errors.UsageError` naming
the scheduler and how many logs were done; their results are dropped, never half printed. A task
that runs long on a live worker is never stopped: only a cluster without workers is.
"""

from __future__ import annotations

import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

from ..errors import UnreadableError, UsageError

__all__ = ["DASK_INSTALL", "NO_WORKER_SECONDS", "run_dask"]

DASK_INSTALL = "pip install 'dsh-audit[dask]'"

# Seconds the client may take to leave the scheduler once every result is in.
_CLOSE_TIMEOUT = 5
# Seconds the scheduler may take to say how many workers it has.
_ANSWER_TIMEOUT = 5

#: Seconds the scheduler may have no worker at all, while results are awaited, before the run
#: gives up on it (a cluster whose workers died, or that never had one).
NO_WORKER_SECONDS = 30.0


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
        UsageError: no scheduler address, a missing extra, a scheduler that cannot be reached, or
            a cluster that cannot finish the run (no worker, a task Dask gave up on).
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
        results = _gather(client, paths, partial(guard, run), progress, lost, scheduler)
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
            progress: Callable[[int, int], None] | None, lost: Callable[[Any, str], Any],
            scheduler: str) -> list[Any]:
    """Every result, in input order; never waits long for one, so that a cluster left without
    workers is noticed (:class:`_Workers`) instead of waited on for ever.

    Raises:
        UsageError: the cluster cannot finish the run.
    """
    if not paths:
        return []
    futures = client.map(call, paths, pure=False)
    position = {future.key: number for number, future in enumerate(futures)}
    finished: queue.Queue[Any] = queue.Queue()  # its get wakes for a Ctrl-C in the main thread
    for future in futures:
        future.add_done_callback(finished.put)
    results: list[Any] = [None] * len(paths)
    workers = _Workers(client, scheduler)
    try:
        for count in range(1, len(paths) + 1):
            future = _next(finished, workers)
            number = position[future.key]
            results[number] = _result(future, paths[number], workers, lost)
            if progress is not None:
                progress(count, len(paths))
    except _Stop as stop:
        raise UsageError(f"{stop}; the run stops with {_done(paths, results)}, their results dropped",
                         hint=f"{stop.hint} and run again, or drop --engine dask to run here") from None
    return results


class _Stop(Exception):
    """The cluster cannot finish the run; :func:`_gather` says how far it got."""

    def __init__(self, what: str, *, hint: str) -> None:
        super().__init__(what)
        self.hint = hint


def _step() -> float:
    """Seconds to wait for a result before asking the scheduler for its workers again."""
    return min(1.0, NO_WORKER_SECONDS / 4)


def _next(finished: queue.Queue[Any], workers: _Workers) -> Any:
    """The next future done."""
    while True:
        try:
            return finished.get(timeout=_step())
        except queue.Empty:
            workers.check()


def _result(future: Any, unit: Any, workers: _Workers, lost: Callable[[Any, str], Any]) -> Any:
    """What a finished task returned, or its log's ``lost`` result when it did not travel back.

    Fetched a short while at a time: a result is read from the worker that holds it, and one lost
    with its worker is computed again, by a worker that may never come.

    Raises:
        _Stop: Dask gave up on the task (its workers died running it), or the scheduler dropped it.
    """
    from distributed import KilledWorker
    from distributed import TimeoutError as DaskTimeout

    from ._pool import _where

    while True:
        try:
            value = future.result(timeout=_step())
        except (TimeoutError, DaskTimeout):
            workers.check()
            continue
        except KilledWorker:
            raise _Stop(f"the Dask cluster at {workers.scheduler} lost the workers running {_where(unit)} and "
                        "gave up on it (KilledWorker)",
                        hint="see the workers' logs for why they died, start others") from None
        except Exception as exc:  # noqa: BLE001 - a value that did not travel, a scheduler that went away
            if future.cancelled():
                raise _Stop(f"the Dask scheduler at {workers.scheduler} dropped the run ({type(exc).__name__})",
                            hint=f"check that `dask scheduler` is running at {workers.scheduler}") from None
            return lost(unit, f"the Dask cluster failed this log: {type(exc).__name__}: {exc}")
        workers.seen()
        return value


class _Workers:
    """Whether the scheduler still has a worker: Dask waits for one for ever, a run does not."""

    def __init__(self, client: Any, scheduler: str) -> None:
        self.scheduler = scheduler
        self._client = client
        self._missing: float | None = None  # since when the scheduler has been seen with no worker

    def seen(self) -> None:
        """A result just came from a worker."""
        self._missing = None

    def check(self) -> None:
        """Ask the scheduler; a long-running task on a live worker passes, whatever its time, and
        so does a scheduler slow to answer (a busy one) until it has been silent as long.

        Raises:
            _Stop: no worker, or no answer, for :data:`NO_WORKER_SECONDS`.
        """
        try:
            alive = bool(self._client.nthreads(callback_timeout=_ANSWER_TIMEOUT))
            what, hint = "has had no worker", f"start workers with `dask worker {self.scheduler}`"
        except Exception as exc:  # noqa: BLE001 - a scheduler gone, or too busy to answer
            alive = False
            what = f"has not answered ({type(exc).__name__})"
            hint = f"check that `dask scheduler` is running at {self.scheduler}"
        now = time.monotonic()
        if alive or self._missing is None:
            self._missing = None if alive else now
        elif now - self._missing >= NO_WORKER_SECONDS:
            raise _Stop(f"the Dask scheduler at {self.scheduler} {what} for {NO_WORKER_SECONDS:g} s", hint=hint)


def _done(paths: list[Any], results: list[Any]) -> str:
    """``N of M logs done``, counting each log of a group read together."""
    def logs(unit: Any) -> int:
        return 1 if isinstance(unit, str) else len(unit)

    done = sum(logs(unit) for unit, result in zip(paths, results) if result is not None)
    return f"{done} of {sum(map(logs, paths))} logs done"
