"""The Dask engine on a cluster that loses its workers (issue 15: no hang, session 41): the
scheduler stays up, the worker processes die (``os.kill``), and the run ends with one line naming
the scheduler, how many logs were done and what to do, exit 2, instead of waiting for a worker for
ever as Dask does; a task Dask gives up on (``KilledWorker``) ends it alike; a task that runs long
on a live worker is waited for; Ctrl-C still ends the run at once with ``aborted``, exit 130.

A real scheduler runs in this process (a ``LocalCluster`` of no worker of its own) and each worker
is a ``dask worker --no-nanny`` process of its own, so that killing it kills it for good (a nanny
would start another). The wait for a worker is cut from 30 s to a second or less (``NO_WORKER_SECONDS``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from _cli import chat_log, sigint_as_a_terminal_gives_it
from dsh_audit.errors import UsageError
from dsh_audit.runner import _dask, run_many

#: ``dsh-audit ARGS`` as a person runs it, the wait for a worker first cut to ``argv[1]`` seconds.
_CLI = ("import sys; from dsh_audit.runner import _dask; _dask.NO_WORKER_SECONDS = float(sys.argv.pop(1)); "
        "from dsh_audit.cli import main; main()")


@contextmanager
def _scheduler(*, allowed_failures: int = 3) -> Iterator[Any]:
    """A scheduler with no worker, in this process; ``allowed_failures`` is Dask's (3 by default):
    how many workers may die running a task before Dask gives up on it. Dask is imported here,
    not when the module is collected (a quarter second on every xdist worker)."""
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("distributed")
    with dask.config.set({"distributed.scheduler.allowed-failures": allowed_failures}), \
            distributed.LocalCluster(n_workers=0, processes=True, dashboard_address="127.0.0.1:0") as cluster:
        yield cluster


@contextmanager
def _worker(cluster: Any) -> Iterator[subprocess.Popen[bytes]]:
    """A worker process of one thread and no nanny, once the scheduler has it; killed at the end.
    It imports this module for the tasks below (a task is pickled by reference)."""
    here = str(Path(__file__).parent)
    process = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", cluster.scheduler_address,
                                "--no-nanny", "--nthreads", "1", "--no-dashboard"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [
                                   here, os.environ.get("PYTHONPATH")]))})
    try:
        _until(lambda: cluster.scheduler.workers, "the worker never joined the scheduler")
        yield process
    finally:
        process.kill()
        process.wait()


def _until(ready: Any, why: str, *, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(why)
        time.sleep(0.02)


def _task(unit: str) -> str:
    """``slow`` sleeps a second (twice the wait for a worker); ``block`` leaves a file beside it
    once it runs, then sleeps a minute (until its worker is killed)."""
    name = Path(unit).name
    if name == "slow":
        time.sleep(1)
    if name == "block":
        Path(unit + ".started").touch()
        time.sleep(60)
    return f"done {name}"


@pytest.mark.parametrize(("allowed_failures", "said"), [
    (3, "the Dask scheduler at {address} has had no worker for 0.5 s; the run stops with 1 of 2 logs done, their "
        "results dropped (hint: start workers with `dask worker {address}` and run again, or drop --engine dask to "
        "run here)"),
    (0, "the Dask cluster at {address} lost the workers running {block} and gave up on it (KilledWorker); the run "
        "stops with 1 of 2 logs done, their results dropped (hint: see the workers' logs for why they died, start "
        "others and run again, or drop --engine dask to run here)"),
], ids=["no-worker", "killed-worker"])
def test_a_run_whose_worker_dies_stops_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   allowed_failures: int, said: str) -> None:
    """The worker is killed while it runs ``block``, once ``slow`` (longer than the wait for a
    worker, on a live one: never stopped) is in: with Dask's default, ``block`` waits for a worker
    that never comes, and the run ends half a second later; with no failure allowed, Dask gives up on
    ``block`` at once."""
    monkeypatch.setattr(_dask, "NO_WORKER_SECONDS", 0.5)
    slow, block = str(tmp_path / "slow"), str(tmp_path / "block")
    some_done = threading.Event()
    outcome: list[object] = []

    def gather(address: str) -> None:  # in a thread: a run that waits for ever fails the test, not hangs it
        try:
            outcome.append(run_many([slow, block], _task, engine="dask", scheduler=address,
                                    progress=lambda done, total: some_done.set() if done else None))
        except Exception as exc:  # noqa: BLE001 - what the test looks at
            outcome.append(exc)

    with _scheduler(allowed_failures=allowed_failures) as cluster, _worker(cluster) as worker:
        runner = threading.Thread(target=gather, args=(cluster.scheduler_address,), daemon=True)
        runner.start()
        _until(lambda: some_done.is_set() and Path(block + ".started").exists(), "block never ran")
        os.kill(worker.pid, signal.SIGKILL)
        killed = time.monotonic()
        runner.join(10)
        took = time.monotonic() - killed
        assert [type(found) for found in outcome] == [UsageError]
        assert str(outcome[0]) == said.format(address=cluster.scheduler_address, block=block)
        assert took < 5 and (took >= 0.5 or not allowed_failures)


@pytest.fixture(scope="module")
def idle() -> Iterator[Any]:
    """A scheduler whose only worker was killed (``os.kill``): it stays up with no worker at all."""
    with _scheduler() as cluster:
        with _worker(cluster) as worker:
            os.kill(worker.pid, signal.SIGKILL)
            _until(lambda: not cluster.scheduler.workers, "the scheduler never saw its worker die")
        yield cluster


@pytest.fixture()
def two_logs(tmp_path: Path) -> list[str]:
    return [str(chat_log(tmp_path / name / "session.jsonl", f"session-{name}")) for name in ("one", "two")]


def _start(wait: float, *args: str, home: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", _CLI, str(wait), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=sigint_as_a_terminal_gives_it,
                            env={**os.environ, "COLUMNS": "200", "DSH_HOME": str(home / "no-home")})


def _end(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise
    return process.returncode, out, err


def test_the_command_on_a_cluster_without_workers_exits_2_in_one_line(idle: Any, two_logs: list[str],
                                                                     tmp_path: Path) -> None:
    address = idle.scheduler_address
    started = time.monotonic()
    process = _start(1, "requests", "--engine", "dask", "--scheduler", address, *two_logs, home=tmp_path)
    assert _end(process) == (2, "", f"error: the Dask scheduler at {address} has had no worker for 1 s; the run "
                                    "stops with 0 of 2 logs done, their results dropped (hint: start workers with "
                                    f"`dask worker {address}` and run again, or drop --engine dask to run here)\n")
    assert time.monotonic() - started < 10


def test_ctrl_c_while_waiting_for_a_worker_exits_130_in_one_line(idle: Any, two_logs: list[str],
                                                                 tmp_path: Path) -> None:
    _until(lambda: not idle.scheduler.tasks, "an earlier run left its tasks on the scheduler", seconds=5)
    process = _start(60, "requests", "--engine", "dask", "--scheduler", idle.scheduler_address, *two_logs,
                     home=tmp_path)
    try:
        _until(lambda: idle.scheduler.tasks, "the run never submitted its tasks")  # it waits for a worker now
    finally:
        os.killpg(process.pid, signal.SIGINT)  # what a terminal does
    interrupted = time.monotonic()
    assert _end(process) in ((130, "", "\naborted\n"), (130, "", "aborted\n"))  # click ends the ^C's line
    assert time.monotonic() - interrupted < 8  # the client's goodbye is bounded (5 s)
    _until(lambda: not idle.scheduler.tasks, "the interrupted run left its tasks on the scheduler", seconds=5)
