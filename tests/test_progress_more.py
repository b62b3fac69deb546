"""The progress bar of the commands that read one log (issue 14): `show`, `render`, `explain`,
`diff --capture`, `redact` and `redact --check` draw it on an interactive stderr, over the bytes of
the log (and of the capture, for `diff`), also within one long log, and stdout is the same with
or without it. Before, none of them called a progress callback: 77 s of `redact` on a 20 MB log
showed nothing."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

import dsh_audit.attribution._attribute as attribute_module
from _cli import invoke, invoke_encoded
from _terminal import DRAWING, run_dsh_audit
from dsh_audit.cli._logs import log_progress
from dsh_audit.log import read_log
from dsh_audit.report import terminal
from dsh_audit.session import read_session
from dsh_audit.wire import make_renderer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from generate import write_log  # noqa: E402  the benchmark generator: a long, valid session

MIB = 1 << 20


def _run(args: list[str], *, tty: bool, cwd: Path) -> tuple[int, bytes, bytes]:
    """dsh-audit with stdout piped and stderr a pseudo-terminal (``tty``) or a pipe; the bar at once."""
    return run_dsh_audit(args, tty=tty, env={**os.environ, "DSH_AUDIT_PROGRESS_DELAY": "0"}, cwd=cwd)


def _frames(err: bytes) -> list[str]:
    """The bar's states as drawn, in order, each once, its elapsed time left out."""
    shown = [DRAWING.sub(b"", frame).decode() for frame in err.split(b"\r")]
    return list(dict.fromkeys(re.sub(r" \d+:\d\d:\d\d$", "", f) for f in shown if f.strip()))


def _same_stdout_with_a_bar(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Run ``args`` piped (in process, stdout and stderr files as a piped process has them:
    ``_cli.invoke_encoded``) and on a terminal (a process of its own): the same exit code and
    stdout, no bar when piped; the bar's frames on the terminal."""
    monkeypatch.chdir(cwd)
    code, out, err = invoke_encoded(monkeypatch, "utf-8", *args)
    assert err == b""
    shown = _run(args, tty=True, cwd=cwd)
    assert (shown[0], shown[1]) == (code, out)
    assert shown[2].endswith(b"\x1b[?25h\r\x1b[1A\x1b[2K")  # the cursor is back and the bar's line is cleared
    return _frames(shown[2])


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``s/session.jsonl``: a generated session of 51,014 bytes (8 requests), and ``s/wire.jsonl``:
    the bodies its loop requests sent, as `diff` reads them; ``alone/session.jsonl``, the same log
    with no capture near it."""
    root = tmp_path_factory.mktemp("progress")
    log = root / "s" / "session.jsonl"
    log.parent.mkdir()
    write_log(log, 0.05)
    session = read_session(log)
    renderer = make_renderer("deepseek")
    with open(root / "s" / "wire.jsonl", "w", encoding="utf-8") as out:
        for seq, request in enumerate(session.requests, 1):
            if request.kind == "loop":
                body = renderer.render(request).body.decode()
                out.write(json.dumps({"seq": seq, "method": "POST", "path": "/chat/completions", "kind": "conversation",
                                      "headers": {"x-deepseek-harness-session-id": session.id}, "body": body}) + "\n")
    (root / "alone").mkdir()  # the same log with no capture near it
    (root / "alone" / "session.jsonl").write_bytes(log.read_bytes())
    return root


def test_show_and_render_draw_a_bar_of_the_log_bytes(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert (folder / "s" / "session.jsonl").stat().st_size == 51014
    for command, index in (("show", "-1"), ("render", "1")):
        assert _same_stdout_with_a_bar([command, "s/session.jsonl", index], folder, monkeypatch) == [
            f"{command}   0/? bytes", f"{command}    0% 0.0/51.0 kB", f"{command}  100% 51.0/51.0 kB"], command
    # explain compares the wire.jsonl beside the log too: its bar counts that
    # (test_the_bar_counts_the_capture_found_beside_the_log, below)


def test_diff_moves_over_the_capture_the_log_and_each_request_compared(folder: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    capture = (folder / "s" / "wire.jsonl").stat().st_size
    frames = _same_stdout_with_a_bar(["diff", "s/session.jsonl", "--capture", "s/wire.jsonl"], folder, monkeypatch)
    total = 51014 + 2 * capture
    assert frames[:3] == ["diff   0/? bytes", f"diff    0% 0.0/{total / 1000:.1f} kB",
                          f"diff   {100 * capture // total}% {capture / 1000:.1f}/{total / 1000:.1f} kB"]
    assert frames[-1] == f"diff  100% {total / 1000:.1f}/{total / 1000:.1f} kB"
    percents = [int(m[1]) for m in (re.match(r"diff +(\d+)% ", f) for f in frames) if m]
    assert percents == sorted(percents) and len(percents) >= 6  # loading, reading, then request by request


def test_redact_counts_the_log_read_twice_and_check_once(folder: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`redact` reads the log (writing the copy as it reads), then the copy to compare verdicts."""
    out = tmp_path / "r.jsonl"
    # the log with no capture beside it: redact would say it left that capture out (a note)
    args = ["redact", "alone/session.jsonl", "-o", str(out), "--salt", "a long salt, 16+", "--force"]  # no warning
    assert _same_stdout_with_a_bar(args, folder, monkeypatch) == [
        "redacting   0/? bytes", "redacting    0% 0.0/102.0 kB", "redacting   50% 51.0/102.0 kB",
        "redacting  100% 102.0/102.0 kB"]
    assert _same_stdout_with_a_bar(["redact", "--check", str(out)], folder, monkeypatch) == [
        "checking   0/? bytes", "checking    0% 0.0/51.0 kB", "checking  100% 51.0/51.0 kB"]


def test_show_moves_within_one_long_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "session.jsonl"
    write_log(log, 1.2)
    size = log.stat().st_size
    assert MIB < size < 2 * MIB
    frames = _same_stdout_with_a_bar(["show", str(log), "0", "--compact"], tmp_path, monkeypatch)
    assert frames == ["show   0/? bytes", f"show    0% 0.0/{size / 1e6:.1f} MB",
                      f"show   {100 * MIB // size}% {MIB / 1e6:.1f}/{size / 1e6:.1f} MB",
                      f"show  100% {size / 1e6:.1f}/{size / 1e6:.1f} MB"]


def test_a_quick_show_on_a_terminal_draws_nothing_by_default(folder: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "DSH_AUDIT_PROGRESS_DELAY"}  # the default delay: 1 s
    code, _, written = run_dsh_audit(["show", "s/session.jsonl", "0", "--compact"], tty=True, env=env, cwd=folder)
    assert (code, written) == (0, b"")


def test_log_progress_never_passes_its_total_and_counts_other_work(monkeypatch, folder: Path) -> None:
    seen: list[tuple[int, int]] = []

    @contextmanager
    def recording(total: int, *, label: str) -> Iterator[object]:
        assert (total, label) == (2 * 51014 + 10, "testing")
        yield lambda done, whole: seen.append((done, whole))

    monkeypatch.setattr(terminal, "progress_callback", recording)
    log = folder / "s" / "session.jsonl"
    with log_progress([log], label="testing", passes=2, extra=10) as advance:
        for _ in range(3):  # one read more than the two passes counted
            with read_log(log) as opened:
                for _ in opened.events():
                    pass
        advance(10)
    total = 2 * 51014 + 10
    assert seen == [(0, total), (51014, total), (2 * 51014, total), (total, total), (total, total)]


def test_no_bar_and_no_callback_when_stderr_is_not_a_terminal(folder: Path) -> None:
    calls: list[int] = []
    with log_progress([folder / "s" / "session.jsonl"], label="x") as advance:
        advance(5)  # stderr is pytest's capture, not a terminal: nothing is drawn, nothing fails
        calls.append(5)
    assert calls == [5]


# -- explain with a capture: the bar counts the comparison, not only the log's bytes. Before, it
# stood at 100% once the log was read while the capture was still loaded and every pair of
# captured bodies compared (a generated 5 MB log with its 82 MB capture: 100% after 2 s of a
# 7.6 s run). Its work, as `diff --capture` weighs it: the log's bytes, then twice the capture's.

LOG_BYTES = 51014  # the generated session at scale 0.05 (8 requests)


def _kb(size: int) -> str:
    return f"{size / 1000:.1f}"


def _bar(done: int, total: int) -> str:
    return f"explain {100 * done / total:>4.0f}% {_kb(done)}/{_kb(total)} kB"  # rich rounds the percentage


def test_the_bar_counts_the_capture_found_beside_the_log(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["explain", "s/session.jsonl", "-1"]
    monkeypatch.chdir(folder)
    code, out, err = invoke_encoded(monkeypatch, "utf-8", *args)  # piped, in process
    assert (code, err) == (0, b"")  # piped: no bar
    shown = _run(args, tty=True, cwd=folder)
    assert (shown[0], shown[1]) == (code, out)  # the bar changes nothing on stdout
    assert shown[2].endswith(b"\x1b[?25h\r\x1b[1A\x1b[2K")  # the cursor is back and the bar's line is cleared
    total = LOG_BYTES + 2 * (folder / "s" / "wire.jsonl").stat().st_size
    assert (folder / "s" / "session.jsonl").stat().st_size == LOG_BYTES
    assert _frames(shown[2]) == ["explain   0/? bytes", _bar(0, total), _bar(LOG_BYTES, total), _bar(total, total)]


def test_the_bar_counts_a_capture_given_with_capture(folder: Path) -> None:
    capture = folder / "s" / "wire.jsonl"
    code, _, err = _run(["explain", "alone/session.jsonl", "-1", "--capture", str(capture)], tty=True, cwd=folder)
    total = LOG_BYTES + 2 * capture.stat().st_size
    assert (code, _frames(err)) == (0, ["explain   0/? bytes", _bar(0, total), _bar(LOG_BYTES, total),
                                        _bar(total, total)])


def test_without_a_capture_the_bar_is_the_log_bytes(folder: Path) -> None:
    code, _, err = _run(["explain", "alone/session.jsonl", "-1"], tty=True, cwd=folder)
    assert (code, _frames(err)) == (0, ["explain   0/? bytes", _bar(0, LOG_BYTES), _bar(LOG_BYTES, LOG_BYTES)])


def test_every_comparison_with_the_capture_runs_below_the_bar_total(
        folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """In process: each captured pair is compared while the bar reads less than its total, which
    it reaches once the comparison is done."""
    seen: list[tuple[int, int]] = []
    at_comparisons: list[tuple[int, int]] = []

    @contextmanager
    def recording(total: int, *, label: str) -> Iterator[Callable[[int, int], None]]:
        assert label == "explain"
        yield lambda done, whole: seen.append((done, whole))

    compare = attribute_module.captured_extends

    def watched(previous: bytes, current: bytes) -> Any:
        at_comparisons.append(seen[-1])
        return compare(previous, current)

    monkeypatch.setattr(terminal, "progress_callback", recording)
    monkeypatch.setattr(attribute_module, "captured_extends", watched)
    monkeypatch.chdir(folder)
    code, out, err = invoke(monkeypatch, capsys, "explain", "s/session.jsonl", "-1")
    assert (code, err) == (0, [])
    total = LOG_BYTES + 2 * (folder / "s" / "wire.jsonl").stat().st_size
    assert len(at_comparisons) >= 5  # the generated session's loop requests, pair by pair
    assert set(at_comparisons) == {(LOG_BYTES, total)}
    assert (seen[0], seen[-1]) == ((0, total), (total, total))
