"""Running one task per session log on many cores (a process pool) or a Dask cluster.

The unit of work is one log path; a task is a picklable top-level function (or a
``functools.partial`` of one) that takes the path and returns a small picklable value. Results
come back in the order of the paths given, never in completion order, so a parallel run prints
exactly what a serial run prints. An error in one session is kept in that session's
:class:`TaskResult`; it never stops the others and is never dropped.

Ctrl-C belongs to the parent: workers start with SIGINT blocked and then ignore it (a terminal
sends it to the whole process group), and when the parent stops early (an interrupt, an error,
a consumer that stops reading) it cancels what has not started and terminates the workers, so an
interrupted run ends at once with one line from the CLI, never with worker tracebacks.

Progress is counted in bytes of the log files (their size on disk, compressed for zstd): a unit
counts once it is done, and a unit read in this process counts its bytes as its reader consumes
them (:func:`dsh_audit.log.read_progress`), so that even one long log moves a progress bar.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..errors import DshAuditError, InternalError, UsageError
from ..log import read_progress

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

__all__ = ["ENGINES", "SessionTaskError", "TaskResult", "iter_many", "resolve_jobs", "run_many"]

T = TypeVar("T")
Progress = Callable[[int, int], None]

#: ``local``: a process pool on this machine; ``dask``: a Dask distributed cluster (extra ``dask``).
ENGINES = ("local", "dask")

# Paths in flight per worker: enough to keep workers busy, few enough to stream output early.
_WINDOW_PER_JOB = 4
# The longest a pool that is stopped (:func:`_stop`) is waited for, its workers and its manager thread together.
_JOIN_SECONDS = 5


class SessionTaskError(InternalError):
    """A task failed on one session for a reason other than the log (a bug, a dead worker)."""

    code = "task"


@dataclass(frozen=True, slots=True)
class TaskResult(Generic[T]):
    """What a task made of one session log.

    Attributes:
        path: the path the task was given, as given.
        value: the task's return value, or None when it failed.
        error: the error that stopped it: the library's own :class:`DshAuditError` for a log it
            cannot read, a :class:`SessionTaskError` for anything else.
    """

    path: str
    value: T | None = None
    error: DshAuditError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def _portable(error: DshAuditError) -> DshAuditError:
    """The error itself when it survives pickling, else a plain copy with the same text."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:  # noqa: BLE001 - any subclass that cannot travel is flattened
        return SessionTaskError(error.message, path=error.path, line=error.line, seq=error.seq, hint=error.hint)
    return error


Unit = Any  # one log path (str), or a tuple of log paths read together (a family group)


def _where(unit: Unit) -> str:
    return unit if isinstance(unit, str) else str(unit[0]) if unit else ""


def _unit(item: Any) -> Unit:
    if isinstance(item, (tuple, list)):
        return tuple(os.fspath(p) for p in item)
    return os.fspath(item)


def _guarded(task: Callable[[Any], T], unit: Unit) -> TaskResult[T]:
    """Run ``task`` on one unit, keeping any exception as its error (runs in workers)."""
    path = _where(unit)
    try:
        return TaskResult(path, task(unit))
    except DshAuditError as exc:
        return TaskResult(path, error=_portable(exc.located(path=path)))
    except Exception as exc:  # noqa: BLE001 - one broken session must not stop the fleet
        found = InternalError.unexpected(exc, path=path)
        return TaskResult(path, error=SessionTaskError(found.message, path=path, hint=found.hint))


def _lost(unit: Unit, why: str) -> TaskResult[Any]:
    path = _where(unit)
    return TaskResult(path, error=SessionTaskError(why, path=path,
                                                   hint="run this log alone (--jobs 1) to see what happens"))


def _size(unit: Unit) -> int:
    """The bytes of a unit's files on disk (a file that cannot be read counts 0: its task says why)."""
    size = 0
    for path in [unit] if isinstance(unit, str) else unit:
        try:
            size += os.path.getsize(path)
        except OSError:
            pass
    return size


class _Bytes:
    """A ``progress(done, total)`` callback fed in bytes: the size of every unit done, plus what
    the reader of the unit being read in this process has consumed of it.

    What a unit's reads count is capped at the unit's size, so a log read twice (a parent read
    beside each of its children) never takes the total past the end. Units of which no file is
    on disk (a task over other names) are counted one each instead.
    """

    def __init__(self, units: Sequence[Unit], progress: Progress) -> None:
        self.sizes = [_size(unit) for unit in units]
        self.in_bytes = any(self.sizes)
        if not self.in_bytes:
            self.sizes = [1] * len(units)
        self.total = sum(self.sizes)
        self.progress = progress
        self.finished = 0  # bytes of the units done
        self.current = -1  # the unit read in this process now, if any
        self.consumed = 0  # bytes of it its reader consumed so far

    def start(self) -> None:
        """Report the total before the first unit is done (a bar of bytes has nothing to show else)."""
        if self.in_bytes:
            self.progress(0, self.total)

    def reader(self, position: int) -> Callable[[int], None]:
        """The read hook of the unit at ``position``, which is read in this process from now on."""
        size = self.sizes[position] if self.in_bytes else 0
        self.current, self.consumed = position, 0

        def read(count: int) -> None:
            if self.current == position and self.consumed < size:
                self.consumed = min(self.consumed + count, size)
                self.progress(self.finished + self.consumed, self.total)

        return read

    def finish(self, position: int) -> None:
        """Count the unit at ``position`` as done."""
        if self.current == position:
            self.current, self.consumed = -1, 0
        self.finished += self.sizes[position]
        self.progress(self.finished + self.consumed, self.total)

    def scaled(self, done: int, total: int) -> None:
        """``done`` of ``total`` units, finished in any order (the dask engine), as a share of the bytes."""
        self.progress(self.total * done // total if total else 0, self.total)


def _worker_start() -> None:
    """Pool initializer: a worker ignores Ctrl-C (the parent cancels it), then takes signals again."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@contextmanager
def _sigint_blocked() -> Iterator[None]:
    """Hold SIGINT back while workers are started, so that none of them starts able to receive it.

    A worker inherits the blocked mask and ignores SIGINT before it unblocks it; the parent gets a
    Ctrl-C that came meanwhile as soon as the block ends, so no interrupt is lost.
    """
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _stop(pool: ProcessPoolExecutor) -> None:
    """End the pool now: cancel queued tasks, terminate the workers running others, kill those that
    outlive it, and wait for the pool's manager thread to close its pipes.

    The executor keeps no public list of its workers nor of its thread. Its ``shutdown(wait=False)``
    forgets the thread, so a ``shutdown(wait=True)`` after it waits for nothing: the thread would
    still be closing its wake-up pipe as the interpreter exits, while ``concurrent.futures`` writes
    to that pipe unlocked (``_python_exit``, CPython 3.11), now and then a traceback after the
    CLI's ``aborted`` ("OSError: handle is closed" in ``threading._shutdown``; issue 15).

    One deadline, :data:`_JOIN_SECONDS` from the call, bounds every wait here: the terminated
    workers have its first half to end, then any still alive is killed (SIGKILL, which it cannot
    ignore), and the killed workers and the manager thread share what is left. So ``_stop`` itself
    returns within :data:`_JOIN_SECONDS` whatever the workers do. What can still wait is the
    interpreter's exit: ``concurrent.futures`` registers ``_python_exit``, which joins every pool's
    manager thread with no timeout, so a manager thread that has not ended by the deadline (one
    blocked for good on a pipe) still holds the exit. Taking the thread out of the module's
    private ``_threads_wakeups`` would release it, but that is not a documented interface, so it
    is left as it is.
    """
    deadline = time.monotonic() + _JOIN_SECONDS
    workers = list((getattr(pool, "_processes", None) or {}).values())
    manager: threading.Thread | None = getattr(pool, "_executor_manager_thread", None)
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        if worker.is_alive():
            worker.terminate()
    for worker in workers:
        worker.join(_left(deadline - _JOIN_SECONDS / 2))
    for worker in workers:
        if worker.is_alive():  # it outlived its terminate (SIGTERM blocked or handled)
            worker.kill()
    for worker in workers:
        worker.join(_left(deadline))
    if manager is not None:
        manager.join(_left(deadline))  # quick: with its workers gone it closes the pool's queues and ends


def _left(deadline: float) -> float:
    """The seconds from now to ``deadline`` (a ``time.monotonic`` time), none once it has passed."""
    return max(0.0, deadline - time.monotonic())


def resolve_jobs(jobs: int) -> int:
    """``jobs`` itself, or every CPU of this machine for 0."""
    if jobs < 0:
        raise UsageError(f"--jobs must be 0 (every CPU) or more, not {jobs}")
    return jobs or os.cpu_count() or 1


def in_process(jobs: int, engine: str, units: int) -> bool:
    """Whether :func:`iter_many` runs ``units`` units of work in this process (then a task's result
    is never pickled, so it may hold an iterator that writes as it goes).

    Raises:
        UsageError: bad ``jobs``.
    """
    return engine != "dask" and (resolve_jobs(jobs) == 1 or units < 2)


def _local(paths: list[str], task: Callable[[str], T], jobs: int,
           progress: _Bytes | None) -> Iterator[TaskResult[T]]:
    """Process pool; yields in input order as soon as the head of the queue is done."""
    # Imported here, not at the top: one log runs in process (_serial), and a command on one log
    # should not pay for loading the process machinery.
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    total = len(paths)
    context = multiprocessing.get_context("spawn")  # no fork under a progress bar's thread
    done: dict[int, TaskResult[T]] = {}
    submitted = emitted = 0
    workers = min(jobs, total)
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_worker_start)
    running: dict[Future[TaskResult[T]], int] = {}
    finished_all = False
    try:
        while emitted < total:
            while submitted < total and submitted - emitted < jobs * _WINDOW_PER_JOB:
                try:
                    with _sigint_blocked():  # a submit may start a worker
                        running[pool.submit(_guarded, task, paths[submitted])] = submitted
                except BrokenProcessPool:
                    _stop(pool)
                    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=_worker_start)
                    continue
                submitted += 1
            ready, _ = wait(running, return_when=FIRST_COMPLETED) if running else (set(), set())
            for future in ready:
                position = running.pop(future)
                try:
                    done[position] = future.result()
                except BrokenProcessPool:
                    done[position] = _lost(paths[position], "a worker process died while this log (or "
                                                            "another read at the same time) was processed")
                except Exception as exc:  # noqa: BLE001 - e.g. a value that cannot be pickled back
                    done[position] = _lost(paths[position], f"the worker could not return its result: {exc}")
                if progress is not None:
                    progress.finish(position)
            while emitted in done:
                yield done.pop(emitted)
                emitted += 1
        finished_all = True
    finally:
        if finished_all:
            pool.shutdown(wait=True)
        else:  # interrupted, failed, or the consumer stopped reading: do not wait for the rest
            _stop(pool)


def _serial(paths: list[str], task: Callable[[str], T], progress: _Bytes | None) -> Iterator[TaskResult[T]]:
    """One unit after the other in this process; a unit is done once its consumer comes back (a
    streamed result reads its log while the consumer handles it) or lets go of the results."""
    for position, path in enumerate(paths):
        if progress is None:
            result = _guarded(task, path)
        else:
            with read_progress(progress.reader(position)):  # a streamed log keeps the hook it started with
                result = _guarded(task, path)
        try:
            yield result
        finally:
            if progress is not None:
                progress.finish(position)


UnitArg = str | os.PathLike[str] | Sequence[str | os.PathLike[str]]


def iter_many(paths: Iterable[UnitArg], task: Callable[[Any], T], *, jobs: int = 1,
              engine: str = "local", scheduler: str | None = None,
              progress: Progress | None = None) -> Iterator[TaskResult[T]]:
    """Like :func:`run_many`, yielding each result as soon as all results before it are done.

    A unit of work is one log path, or a sequence of paths read together by one task (a family
    group, :func:`dsh_audit.session.family_groups`); a result's ``path`` is the unit's first path.

    The ``dask`` engine gathers every result before it yields the first.
    """
    if engine not in ENGINES:
        raise UsageError(f"unknown engine {engine!r}", hint="use " + " or ".join(ENGINES))
    given = [_unit(p) for p in paths]
    if scheduler is not None and engine != "dask":
        raise UsageError("--scheduler needs --engine dask")
    serial = in_process(jobs, engine, len(given))  # bad jobs are refused before anything is reported
    counted = None if progress is None else _Bytes(given, progress)
    if counted is not None:
        counted.start()
    if engine == "dask":
        from ._dask import run_dask

        yield from run_dask(given, task, scheduler=scheduler, progress=None if counted is None else counted.scaled,
                            guard=_guarded, lost=_lost)
    elif serial:
        yield from _serial(given, task, counted)
    else:
        yield from _local(given, task, resolve_jobs(jobs), counted)


def run_many(paths: Sequence[UnitArg], task: Callable[[Any], T], *, jobs: int = 1,
             engine: str = "local", scheduler: str | None = None,
             progress: Progress | None = None) -> list[TaskResult[T]]:
    """Run ``task`` once per session log and return the results in the order of ``paths``.

    Args:
        paths: session log files (already discovered, see :func:`dsh_audit.log.discover`).
        task: a picklable top-level function of one path (bind options with
            ``functools.partial``); its return value must pickle too.
        jobs: worker processes for the local engine; 1 runs in this process, 0 uses every CPU.
        engine: ``local`` or ``dask``.
        scheduler: the Dask scheduler address (``tcp://host:8786``) for the ``dask`` engine.
        progress: called in this process as ``progress(done, total)`` in bytes of the logs (their
            size on disk): once at the start, after each unit, and, for a unit read in this
            process, about every MiB its reader consumes. ``done`` never passes ``total``. When
            no path is a file on disk, ``done`` and ``total`` count units, after each one.

    Returns:
        One :class:`TaskResult` per path, in the order given, failures included.

    Raises:
        UsageError: bad ``jobs``, ``engine`` or ``scheduler``, a missing ``dask`` extra, or an
            unreachable scheduler.

    Example:
        >>> from functools import partial
        >>> from dsh_audit.fleet import audit_session
        >>> task = partial(audit_session, cache=False)
        >>> results = run_many(["a.jsonl", "b.jsonl"], task, jobs=2)  # doctest: +SKIP
        >>> [(r.path, r.value.request_count) for r in results]  # doctest: +SKIP
        [('a.jsonl', 3), ('b.jsonl', 12)]
    """
    return list(iter_many(paths, task, jobs=jobs, engine=engine, scheduler=scheduler, progress=progress))
