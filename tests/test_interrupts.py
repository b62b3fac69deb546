"""Ctrl-C under --jobs 2 (issue 15): a terminal's SIGINT reaches the whole process group; the run
ends at once with exit 130 and one line, no worker traceback, no deadlock."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

GENERATE = Path(__file__).resolve().parents[1] / "benchmarks" / "generate.py"
# The installed console script, as a person runs it (see the report on ``python -m``).
SCRIPT = Path(sys.executable).parent / "dsh-audit"


@pytest.fixture(scope="module")
def long_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated 8 MB session (the benchmark generator): six copies take ``breaks --jobs 2``
    several seconds, so an interrupt lands while the workers work."""
    path = tmp_path_factory.mktemp("long") / "session.jsonl.zstd"
    subprocess.run([sys.executable, str(GENERATE), "--mb", "8", "-o", str(path)], check=True, capture_output=True)
    return path


@pytest.mark.skipif(not SCRIPT.exists(), reason="needs the installed dsh-audit script")
@pytest.mark.parametrize("delay", [0.4, 1.5])
def test_ctrl_c_with_two_jobs_exits_130_in_one_line(tmp_path: Path, long_log: Path, delay: float) -> None:
    for number in range(6):
        folder = tmp_path / f"s{number}"
        folder.mkdir()
        shutil.copy(long_log, folder / "session.jsonl.zstd")
    process = subprocess.Popen([str(SCRIPT), "breaks", str(tmp_path), "--jobs", "2"], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    time.sleep(delay)  # while workers start (0.4 s) and while they work (1.5 s); a whole run takes ~8 s
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
    with pytest.raises(ProcessLookupError):  # no worker left behind in the group
        os.killpg(process.pid, 0)
