"""Ctrl-C under --jobs 2 (issue 15): a terminal's SIGINT reaches the whole process group; the run
ends at once with exit 130 and one line, no worker traceback, no deadlock."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import zstandard

from _cli import sigint_as_a_terminal_gives_it

GENERATE = Path(__file__).resolve().parents[1] / "benchmarks" / "generate.py"
# The installed console script, as a person runs it (see the report on ``python -m``).
SCRIPT = Path(sys.executable).parent / "dsh-audit"


@pytest.fixture(scope="module")
def long_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated 8 MB session (the benchmark generator): twelve sessions made of it take ``breaks --jobs 2``
    several seconds, so an interrupt lands while the workers work."""
    path = tmp_path_factory.mktemp("long") / "session.jsonl.zstd"
    subprocess.run([sys.executable, str(GENERATE), "--mb", "8", "-o", str(path)], check=True, capture_output=True)
    return path


def _wait_for_workers(pid: int) -> None:
    """Return once process ``pid`` has started a child (its first worker), or after 30 s. A fixed
    sleep does not do: on a loaded machine the parent may still be importing Python's ``site`` when
    it ends, and an interrupt there is the interpreter's own ("Fatal Python error"), before any code
    of dsh-audit runs."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not _children(pid):
        time.sleep(0.01)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux ``/proc``; none where there is no ``/proc``)."""
    return [number for number, state, parent, _ in _processes() if parent == pid and state != "Z"]


def _group(group: int) -> list[int]:
    """The live processes of process group ``group`` (a zombie has ended: only its exit status is left)."""
    return [number for number, state, _, pgrp in _processes() if pgrp == group and state != "Z"]


def _processes() -> list[tuple[int, str, int, int]]:
    """Every process as (pid, state, parent pid, process group), from Linux's ``/proc``."""
    found = []
    for entry in Path("/proc").glob("[0-9]*") if Path("/proc/self/stat").exists() else ():
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue  # not a process, or one that has ended
        found.append((int(entry.name), fields[0], int(fields[1]), int(fields[2])))
    return found


@pytest.mark.skipif(not SCRIPT.exists(), reason="needs the installed dsh-audit script")
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the workers in Linux's /proc")
@pytest.mark.parametrize("delay", [0.0, 0.5])
def test_ctrl_c_with_two_jobs_exits_130_in_one_line(tmp_path: Path, long_log: Path, delay: float) -> None:
    with long_log.open("rb") as raw:  # every frame: the generator writes one a turn
        text = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True).read()
    header, rest = text.split(b"\n", 1)
    assert b'"id":"session-bench-1"' in header  # the id is the header's: the rest is the same in every copy
    pack = zstandard.ZstdCompressor(level=1).compress  # the header alone in the first frame, as DSH writes it
    body = pack(rest)  # compressed once for the twelve copies
    for number in range(12):  # twelve sessions (copies of one session are read once)
        folder = tmp_path / f"p{number}" / "s"  # a project folder each: one project's logs are one unit of work
        folder.mkdir(parents=True)
        own = header.replace(b'"id":"session-bench-1"', b'"id":"session-bench-1-%d"' % number, 1)
        (folder / "session.jsonl.zstd").write_bytes(pack(own + b"\n") + body)
    process = subprocess.Popen([str(SCRIPT), "breaks", str(tmp_path), "--jobs", "2"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=sigint_as_a_terminal_gives_it)
    _wait_for_workers(process.pid)  # the parent is past its own start-up (a Ctrl-C before that is Python's)
    time.sleep(delay)  # as workers start (0 s) and while they work (0.5 s); a whole run takes ~3 s
    assert process.poll() is None
    os.killpg(process.pid, signal.SIGINT)  # what a terminal does: the parent and every worker
    start = time.monotonic()
    try:
        _, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        raise
    assert time.monotonic() - start < 10
    assert "Traceback" not in err
    assert err.strip() == "aborted"
    assert process.returncode == 130
    deadline = time.monotonic() + 5  # no worker left behind in the group (multiprocessing's resource
    while _group(process.pid) and time.monotonic() < deadline:  # tracker ends as its pipe closes)
        time.sleep(0.05)
    assert _group(process.pid) == []


def test_a_stopped_pool_leaves_no_manager_thread_for_the_exit() -> None:
    """The rare traceback after ``aborted`` (``OSError: handle is closed`` in ``threading._shutdown``):
    a pool stopped early left its manager thread closing its wake-up pipe while the interpreter's
    exit (``concurrent.futures.process._python_exit``) wrote to it. ``_stop`` returns once that
    thread has ended, so the exit finds only closed pipes and no thread to wake."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures import process as futures_process

    from dsh_audit.runner._pool import _stop, _worker_start

    pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_start)
    futures = [pool.submit(time.sleep, 30) for _ in range(3)]
    manager = pool._executor_manager_thread
    assert manager is not None and manager.is_alive()
    _stop(pool)
    assert not manager.is_alive()
    assert [wakeup._closed for thread, wakeup in futures_process._threads_wakeups.items() if thread is manager] \
        in ([], [True])
    assert all(future.done() for future in futures)


def test_a_stopped_pool_whose_manager_hangs_is_waited_for_a_bounded_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """A manager thread that does not end (stuck on a worker's pipe) must not hang the Ctrl-C that
    stops its pool: ``_stop`` waits until its one deadline (``_JOIN_SECONDS``), then returns."""
    import threading
    from types import SimpleNamespace

    from dsh_audit.runner import _pool

    release = threading.Event()
    manager = threading.Thread(target=release.wait, daemon=True)
    manager.start()
    pool = SimpleNamespace(_processes={}, _executor_manager_thread=manager, shutdown=lambda **_: None)
    monkeypatch.setattr(_pool, "_JOIN_SECONDS", 0.05)
    stopping = threading.Thread(target=_pool._stop, args=(pool,), daemon=True)  # an unbounded wait fails, not hangs
    began = time.monotonic()
    try:
        stopping.start()
        stopping.join(2)
        waited = time.monotonic() - began
        assert (stopping.is_alive(), manager.is_alive()) == (False, True) and waited >= 0.05
    finally:
        release.set()


def _ignore_sigterm_and_sleep(ready: Any) -> None:
    """A worker that outlives its terminate: SIGTERM ignored, then asleep until killed."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ready.set()
    time.sleep(60)


def test_a_stopped_pool_kills_the_workers_that_outlive_terminate_within_one_deadline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 40 B: a worker that ignores SIGTERM was never killed, and each was waited for
    ``_JOIN_SECONDS`` on its own (two of them and a hung manager: three times the bound). Now one
    deadline bounds the whole stop and a survivor of terminate is killed (SIGKILL) at its middle."""
    import multiprocessing
    import threading
    from types import SimpleNamespace

    from dsh_audit.runner import _pool

    context = multiprocessing.get_context("fork")
    readies = [context.Event() for _ in range(2)]
    workers = [context.Process(target=_ignore_sigterm_and_sleep, args=(ready,), daemon=True) for ready in readies]
    release = threading.Event()
    manager = threading.Thread(target=release.wait, daemon=True)
    manager.start()
    try:
        for worker in workers:
            worker.start()
        assert all(ready.wait(10) for ready in readies)
        pool = SimpleNamespace(_processes=dict(enumerate(workers)), _executor_manager_thread=manager,
                               shutdown=lambda **_: None)
        monkeypatch.setattr(_pool, "_JOIN_SECONDS", 0.4)
        began = time.monotonic()
        _pool._stop(pool)  # type: ignore[arg-type]
        waited = time.monotonic() - began
        assert [worker.exitcode for worker in workers] == [-signal.SIGKILL] * 2
        assert manager.is_alive() and 0.4 <= waited < 1.0, waited  # before: 0.4 per worker and the manager
    finally:
        release.set()
        for worker in workers:
            if worker.is_alive():
                worker.kill()


@pytest.fixture(scope="module")
def chunky_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample chat session cut inside its second answer, then 200,000 one-letter reasoning deltas
    (a 29 MB plain log, written in well under a second): reading the rest of it through the validation
    rules takes a second or more, so a Ctrl-C that reads on before it exits is seen."""
    sample = Path(__file__).resolve().parents[1] / "sample_logs" / "chat" / "session.jsonl"
    head = b"".join(sample.read_bytes().splitlines(keepends=True)[:28])  # up to seq 31, a reasoning block-start
    delta = (b'{"type":"assistant/chunk","seq":%d,"time":1800000000100,"data":{"turn":2,"step":1,'
             b'"chunk":{"type":"reasoning-delta","index":0,"text":"x"}}}\n')
    path = tmp_path_factory.mktemp("chunky") / "session.jsonl"
    path.write_bytes(head + b"".join(delta % seq for seq in range(32, 200_032)))
    return path


def _read_so_far(pid: int, path: Path) -> int:
    """How far process ``pid`` has read the file at ``path`` (its descriptor's offset; 0 when it has none open)."""
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            if os.readlink(fd) == str(path):
                return int((Path(f"/proc/{pid}/fdinfo") / fd.name).read_text().split()[1])
    except (OSError, ValueError, IndexError):  # a descriptor closed while listed, or the run has ended
        pass
    return 0


@pytest.mark.skipif(not SCRIPT.exists(), reason="needs the installed dsh-audit script")
@pytest.mark.skipif(not Path("/proc/self/fdinfo").exists(), reason="watches the read in Linux's /proc")
def test_ctrl_c_mid_read_does_not_read_the_rest_of_the_log(chunky_log: Path) -> None:
    """Tour of session 45: a Ctrl-C of ``check`` unwound through the reader's close, which fed the rest of
    the log to the validation rules first (4-15 s on a 40 MB log; here 5-13 s on a loaded machine before
    the fix). How far the run read is watched until it ends: however fast the machine, it stops reading
    at the Ctrl-C, never reads on to the end. The whole command's check (exit 130, one line, within 3 s):
    a Ctrl-C that lands in the reader's own read stopped at once before the fix too (review C of session
    45, F4: this passed 3 runs in 10 there); the test below lands it in the consumer every time."""
    process = subprocess.Popen([str(SCRIPT), "check", str(chunky_log.parent)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=sigint_as_a_terminal_gives_it)
    try:
        deadline = time.monotonic() + 30  # past the header's first 1 MB read: the events are being read
        while _read_so_far(process.pid, chunky_log) < 3 << 20 and time.monotonic() < deadline:
            time.sleep(0.002)
        assert process.poll() is None
        os.killpg(process.pid, signal.SIGINT)
        start = time.monotonic()
        furthest = 0
        while process.poll() is None and time.monotonic() - start < 30:
            furthest = max(furthest, _read_so_far(process.pid, chunky_log))
            time.sleep(0.002)
        _, err = process.communicate(timeout=30)
        assert time.monotonic() - start < 3
        assert furthest < chunky_log.stat().st_size // 2  # the read went no further than about the Ctrl-C's 3 MB
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert err.strip() == "aborted"
    assert process.returncode == 130


class _Counter:
    """A tee that counts the lines it is fed and notes the end of the file."""

    def __init__(self) -> None:
        self.lines, self.ended = 0, False

    def feed(self, line: object) -> bool:
        self.lines += 1
        return True

    def fail(self, error: object) -> None:
        self.ended = True

    def end(self, torn: object) -> None:
        self.ended = True


def test_ctrl_c_in_the_consumer_of_a_validated_read_leaves_the_rest_unread(chunky_log: Path) -> None:
    """Review C of session 45, F4: the Ctrl-C of the test above lands where the timing puts it, and one
    landing in the reader's own read never read on even before the fix (that test passed 3 runs in 10
    there). Here it lands in the consumer every time (the console script's handler, sent at the 1,000th
    event), where the generator is closed with nothing in hand as the consumer unwinds: before the fix
    its close fed the validation rules all 200,000 lines."""
    from dsh_audit.cli import _FirstInterrupt
    from dsh_audit.log import read_log

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    interrupts, tee = _FirstInterrupt(), _Counter()
    try:
        interrupts.arm()
        assert interrupts.armed
        with pytest.raises(KeyboardInterrupt), read_log(chunky_log, tee=tee) as log:
            for count, _ in enumerate(log.events()):
                if count == 1_000:
                    signal.raise_signal(signal.SIGINT)
    finally:
        interrupts.finish()
        signal.signal(signal.SIGINT, previous)
    assert (tee.lines, tee.ended) == (997, False)  # the header, and the lines of the first 1,001 events
