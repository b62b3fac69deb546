"""`dsh-audit explain LOG N` with a capture (issue 14): its progress bar counts the comparison with
the capture, not only the log's bytes. Before, the bar stood at 100% once the log was read, while
the capture was still being loaded and every pair of captured bodies compared (on a generated
5 MB log with its 82 MB capture: 100% after 2 s of a 7.6 s run).

The bar's work, as `diff --capture` weighs it: the log's bytes, then twice the capture's (loading
it, then comparing each request's captured body with the one before). Without a capture the bar is
the log's bytes, as before.
"""

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

from _cli import invoke
from _terminal import DRAWING, run_dsh_audit
from dsh_audit.report import terminal
from dsh_audit.session import read_session
from dsh_audit.wire import make_renderer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from generate import write_log  # noqa: E402  the benchmark generator: a long, valid session

LOG_BYTES = 51014  # the generated session at scale 0.05 (8 requests)


def _frames(err: bytes) -> list[str]:
    """The bar's states as drawn, in order, each once, its elapsed time left out."""
    shown = [DRAWING.sub(b"", frame).decode() for frame in err.split(b"\r")]
    return list(dict.fromkeys(re.sub(r" \d+:\d\d:\d\d$", "", f) for f in shown if f.strip()))


def _run(args: list[str], *, tty: bool, cwd: Path) -> tuple[int, bytes, bytes]:
    return run_dsh_audit(args, tty=tty, env={**os.environ, "DSH_AUDIT_PROGRESS_DELAY": "0"}, cwd=cwd)


def _kb(size: int) -> str:
    return f"{size / 1000:.1f}"


def _bar(done: int, total: int) -> str:
    return f"explain {100 * done / total:>4.0f}% {_kb(done)}/{_kb(total)} kB"  # rich rounds the percentage


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``s/session.jsonl`` (a generated session) with ``s/wire.jsonl``, the bodies its loop requests
    sent, beside it; ``alone/session.jsonl``, the same log with no capture near it."""
    root = tmp_path_factory.mktemp("explain-progress")
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
    (root / "alone").mkdir()
    (root / "alone" / "session.jsonl").write_bytes(log.read_bytes())
    return root


def test_the_bar_counts_the_capture_found_beside_the_log(folder: Path) -> None:
    args = ["explain", "s/session.jsonl", "-1"]
    code, out, err = _run(args, tty=False, cwd=folder)
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
    import dsh_audit.attribution._attribute as attribute_module

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
