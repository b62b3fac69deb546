"""Ctrl-C pressed twice (fuzz round 16, D1): a second SIGINT, or the copy ``timeout`` or a CI runner
forwards to the process group, came while the first one's cleanup ran, or during the interpreter's
exit, and printed ``Exception ignored in: <function SessionLog.__del__ ...>`` and a traceback after
``aborted``. However many come and whenever they come, the run ends with exit 130 and ``aborted``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from _cli import sigint_as_a_terminal_gives_it

SCRIPT = Path(sys.executable).parent / "dsh-audit"
SAMPLE = Path(__file__).resolve().parents[1] / "sample_logs" / "tools" / "session.jsonl"
LOGS = 200  # a few seconds of `sessions` work: every interrupt below lands while it works

pytestmark = [pytest.mark.skipif(not SCRIPT.exists(), reason="needs the installed dsh-audit script"),
              pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="watches the run in Linux's /proc")]


@pytest.fixture(scope="module")
def many_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``LOGS`` copies of the sample tools session, each its own session id, in a project folder each
    (one project's logs are one unit of work: ``--jobs 2`` shares them out to workers)."""
    root = tmp_path_factory.mktemp("many")
    events = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines()]
    for number in range(LOGS):
        events[0]["id"] = f"s{number}"
        (root / f"p{number}" / "s").mkdir(parents=True)
        (root / f"p{number}" / "s" / "session.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return root


def _at_work(pid: int, root: Path, jobs: int) -> None:
    """Return once run ``pid`` is past its start-up (a Ctrl-C before is the interpreter's own):
    it has a worker (``--jobs 2``) or a log of ``root`` open (``--jobs 1``); at most 30 s."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if jobs > 1 and _children(pid) or jobs == 1 and _reads(pid, root):
            return
        time.sleep(0.002)


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue  # a process that has ended
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


def _reads(pid: int, root: Path) -> bool:
    try:
        return any(os.readlink(fd).startswith(str(root)) for fd in Path(f"/proc/{pid}/fd").iterdir())
    except OSError:  # a descriptor closed while listed
        return False


def _interrupt(pid: int) -> None:
    """What a terminal does: SIGINT to the whole process group (the run has maybe ended already)."""
    try:
        os.killpg(pid, signal.SIGINT)
    except ProcessLookupError:
        pass


def _run_interrupted(root: Path, jobs: int, second: str) -> tuple[int, str]:
    process = subprocess.Popen([str(SCRIPT), "sessions", str(root), "--jobs", str(jobs)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, start_new_session=True,
                               preexec_fn=sigint_as_a_terminal_gives_it)
    try:
        assert process.stderr is not None
        _at_work(process.pid, root, jobs)
        assert process.poll() is None
        _interrupt(process.pid)
        if second == "at once":  # timeout(1) or a CI runner forwarding the same Ctrl-C
            _interrupt(process.pid)
        elif second == "after aborted":  # pressed again once the first one is answered
            first = process.stderr.readline()
            while first == "\n":  # click's own line break before the word
                first = process.stderr.readline()
            _interrupt(process.pid)
            _, err = process.communicate(timeout=30)
            return process.returncode, first + err
        else:  # pressed again while the first one's cleanup runs (workers ending, logs closing)
            time.sleep(0.05)
            _interrupt(process.pid)
        _, err = process.communicate(timeout=30)
        return process.returncode, err
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


# Each run is mostly the CLI's start-up (about a second here): three runs, each moment once.
@pytest.mark.parametrize("jobs, moments", [(2, ("at once", "after aborted")), (1, ("50 ms later",))])
def test_two_ctrl_cs_end_in_aborted_and_130(many_logs: Path, jobs: int, moments: tuple[str, ...]) -> None:
    for second in moments:
        code, err = _run_interrupted(many_logs, jobs, second)
        assert "Traceback" not in err and "Exception ignored" not in err, (second, err)
        assert err.strip() == "aborted", (second, err)
        assert err.splitlines()[-1] == "aborted"
        assert code == 130, (second, err)


#: A Ctrl-C that lands while a finalizer runs (``__del__``): Python would print it and go on, the
#: interrupt lost; the CLI's handler raises it again in the main flow.
IN_FINALIZER = textwrap.dedent("""
    import os, signal
    from dsh_audit.cli import _FirstInterrupt

    class Closing:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(100_000):  # the handler runs in here
                pass

    interrupts, code = _FirstInterrupt(), 0
    try:
        interrupts.arm()
        Closing()
        for _ in range(10_000_000):  # raised again in here
            pass
        print("lost")
    except KeyboardInterrupt:
        print("raised again")
        os.kill(os.getpid(), signal.SIGINT)  # a second Ctrl-C: ignored
        code = 130
    finally:
        interrupts.finish()
    raise SystemExit(code)
""")


def test_a_ctrl_c_in_a_finalizer_is_not_lost() -> None:
    done = subprocess.run([sys.executable, "-c", IN_FINALIZER], capture_output=True, text=True, timeout=60,
                          preexec_fn=sigint_as_a_terminal_gives_it)
    assert (done.returncode, done.stdout, done.stderr) == (130, "raised again\n", "")
