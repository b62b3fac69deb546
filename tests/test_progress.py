"""The progress bar (issue 14): bytes of the logs, moving while one long log is read, drawn on an
interactive stderr only, after ``DSH_AUDIT_PROGRESS_DELAY`` seconds, and never changing stdout."""

from __future__ import annotations

import os
import re
import sys
from itertools import accumulate
from pathlib import Path

import pytest
import zstandard

from _terminal import DRAWING, run_dsh_audit
from dsh_audit.log import iter_lines, read_log, read_progress
from dsh_audit.runner import iter_many

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from generate import write_log  # noqa: E402  the benchmark generator: a long, valid session

MIB = 1 << 20


@pytest.fixture(scope="module")
def long_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated plain session of 1.2 MB: the reader reports its first MiB, then the rest."""
    path = tmp_path_factory.mktemp("long") / "session.jsonl"
    write_log(path, 1.2)
    return path


def _env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DSH_AUDIT_PROGRESS_DELAY"}
    return {**env, **values}


def test_a_single_log_draws_a_bar_of_bytes_on_a_terminal_and_stdout_stays_the_same(long_log: Path) -> None:
    size = long_log.stat().st_size
    assert MIB < size < 2 * MIB
    env = _env(DSH_AUDIT_PROGRESS_DELAY="0")
    piped = run_dsh_audit(["requests", str(long_log)], tty=False, env=env)
    assert piped[0] == 0 and piped[2] == b""  # no terminal: no bar
    code, out, err = run_dsh_audit(["requests", str(long_log)], tty=True, env=env)
    assert code == 0
    assert out == piped[1]
    frames = [DRAWING.sub(b"", frame).decode() for frame in err.split(b"\r")]
    shown = [frame for frame in frames if frame.strip()]
    assert shown[0] == "replaying   0/? bytes 0:00:00"  # at once (delay 0), before the total is known
    percents = [m.group(1) for m in (re.match(r"replaying +(\d+)% ", f) for f in shown) if m]
    assert list(dict.fromkeys(percents)) == ["0", f"{100 * MIB / size:.0f}", "100"]  # it moves within the log
    assert re.fullmatch(rf"replaying +100% {size / 1e6:.1f}/{size / 1e6:.1f} MB \d:\d\d:\d\d", shown[-1])
    assert err.endswith(b"\x1b[?25h\r\x1b[1A\x1b[2K")  # the cursor is back and the bar's line is cleared


@pytest.fixture
def quick_log(tmp_path: Path) -> Path:
    """A one-request log, read in far less than a second."""
    from dsh_audit.testing import LogBuilder

    b = LogBuilder(session_id="quick")
    with b.turn("hello"):
        with b.step():
            b.assistant("hi")
    return b.write_jsonl(tmp_path / "session.jsonl")


def test_a_quick_run_on_a_terminal_draws_nothing(quick_log: Path) -> None:
    code, out, err = run_dsh_audit(["requests", "--json", str(quick_log)], tty=True, env=_env())  # the default delay: 1 s
    assert (code, err, out.count(b"\n")) == (0, b"", 1)  # one request, no bar


def test_a_bad_delay_is_one_line_on_a_terminal(quick_log: Path) -> None:
    code, out, err = run_dsh_audit(["requests", str(quick_log)], tty=True, env=_env(DSH_AUDIT_PROGRESS_DELAY="soon"))
    assert (code, out) == (2, b"")
    assert err.decode().replace("\r\n", "\n") == (
        "error: DSH_AUDIT_PROGRESS_DELAY='soon' is not a number of seconds (hint: give the seconds of work "
        "before a progress bar appears, e.g. 0.5; 0 shows it at once)\n")


def test_the_read_hook_reports_every_byte_of_a_plain_log(long_log: Path) -> None:
    size = long_log.stat().st_size
    consumed: list[int] = []
    with read_progress(consumed.append):
        log = read_log(long_log)  # the header is read here: the log keeps this hook
    events = sum(1 for _ in log.events())  # read after the block
    log.close()
    assert events > 1000
    assert consumed == [MIB, size - MIB]


def test_the_read_hook_reports_every_byte_of_a_multi_frame_zstd_log(tmp_path: Path) -> None:
    """Frames of incompressible text: the compressed file is about as big as its text."""
    path = tmp_path / "session.jsonl.zstd"
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    frames = [compressor.compress(b'{"header": true}\n')]
    frames += [compressor.compress(b"".join(b'"%s"\n' % os.urandom(90).hex().encode() for _ in range(300)))
               for _ in range(120)]
    path.write_bytes(b"".join(frames))
    size = path.stat().st_size
    assert size > 3 * MIB
    consumed: list[int] = []
    torn: list[object] = []
    with read_progress(consumed.append), open(path, "rb") as stream:
        lines = sum(line.count for line in iter_lines(stream, str(path), torn))
    assert (lines, torn) == (1 + 120 * 300, [])
    assert list(accumulate(consumed))[-1] == size
    biggest = max(len(frame) for frame in frames)
    assert all(MIB <= step < MIB + biggest for step in consumed[:-1]) and 0 < consumed[-1] < MIB + biggest
    assert len(consumed) >= 4


def test_no_hook_no_report_and_the_hook_ends_with_its_block(long_log: Path) -> None:
    consumed: list[int] = []
    with read_progress(consumed.append):
        pass
    with read_log(long_log) as log:
        for _ in log.events():
            pass
    assert consumed == []


def _read_twice(path: str) -> int:
    """A task that reads its log twice, as a child's task reads its parent beside it."""
    total = 0
    for _ in range(2):
        with read_log(path) as log:
            total += sum(1 for _ in log.events())
    return total


def test_iter_many_counts_bytes_as_a_log_is_read_and_never_past_the_total(long_log: Path, tmp_path: Path) -> None:
    small = tmp_path / "small.jsonl"
    write_log(small, 0.2)
    sizes = long_log.stat().st_size, small.stat().st_size
    seen: list[tuple[int, int]] = []
    results = list(iter_many([str(long_log), str(small)], _read_twice, progress=lambda d, t: seen.append((d, t))))
    assert all(result.ok for result in results)
    total = sum(sizes)
    assert {t for _, t in seen} == {total}
    done = [d for d, _ in seen]
    assert done == sorted(done) and done[0] == 0 and done[-1] == total
    assert list(dict.fromkeys(done)) == [0, MIB, sizes[0], total]  # the second reads add nothing
