"""Progress bars on an interactive stderr: over a list of items, or over the bytes of the logs read
(drawn once the work has lasted ``DSH_AUDIT_PROGRESS_DELAY`` seconds).

rich is imported when a bar is drawn, not with this module.
"""

from __future__ import annotations

import math
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, TypeVar

from ..errors import UsageError
from ._console import stderr_console
from ._listing import live, paging

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

__all__ = ["progress", "progress_callback"]

T = TypeVar("T")

# Seconds of work before a progress bar appears, unless DSH_AUDIT_PROGRESS_DELAY says otherwise.
_PROGRESS_DELAY = 1.0


def _bar(*, in_bytes: bool = False, share: bool = False) -> Progress:
    """A transient progress bar on stderr: label, bar, done/total (``in_bytes``: percentage and
    bytes; ``share``: the percentage alone, of a work whose units are not bytes read), elapsed time.

    What the command writes to stdout meanwhile goes around the bar when stdout is the terminal
    too, and straight to stdout when it is a pipe or a file (rich would draw it on stderr).
    """
    from rich.progress import (BarColumn, DownloadColumn, MofNCompleteColumn, Progress, ProgressColumn,
                               TaskProgressColumn, TextColumn, TimeElapsedColumn)

    done: list[ProgressColumn] = ([TaskProgressColumn()] if share else [TaskProgressColumn(), DownloadColumn()]
                                  if in_bytes else [MofNCompleteColumn()])
    return Progress(TextColumn("{task.description}"), BarColumn(), *done, TimeElapsedColumn(),
                    console=stderr_console(), transient=True, redirect_stdout=sys.stdout.isatty())


@contextmanager
def progress(items: Sequence[T], *, label: str) -> Iterator[Iterable[T]]:
    """Iterate ``items`` with a progress bar on an interactive stderr; silently otherwise."""
    if len(items) < 2 or not sys.stderr.isatty() or paging():
        yield items
        return
    bar = _bar()

    def run() -> Iterator[T]:
        task = bar.add_task(label, total=len(items))
        for item in items:
            yield item
            bar.advance(task)

    with bar, live(bar.stop):
        yield run()


def _progress_delay() -> float:
    """Seconds of work before a progress bar appears: ``DSH_AUDIT_PROGRESS_DELAY``, default 1.

    Raises:
        UsageError: the variable is set to something else than a number of seconds (0 or more).
    """
    text = os.environ.get("DSH_AUDIT_PROGRESS_DELAY", "").strip()
    if not text:
        return _PROGRESS_DELAY
    try:
        delay = float(text)
    except ValueError:
        delay = math.nan
    if not 0 <= delay < math.inf:
        raise UsageError(f"DSH_AUDIT_PROGRESS_DELAY={text!r} is not a number of seconds",
                         hint="give the seconds of work before a progress bar appears, e.g. 0.5; 0 shows it at once")
    return delay


class _DelayedBar:
    """A bar of bytes that a timer draws once the work has lasted ``delay`` seconds, unless it
    ended before; rich is imported then, so that a quick run pays nothing for it."""

    def __init__(self, label: str, delay: float, *, share: bool = False) -> None:
        self.label = label
        self.share = share  # the percentage alone, no byte figure (:func:`progress_callback`)
        self.lock = threading.Lock()
        self.bar: Progress | None = None
        self.task: TaskID | None = None
        self.closed = False
        self.done = 0
        self.total: int | None = None  # unknown until the first report
        self.percent = -1  # the whole percentage drawn last: a new one is drawn at once, at most 101 times
        self.timer = threading.Timer(delay, self.show)
        self.timer.daemon = True

    def open(self) -> None:
        if self.timer.interval <= 0:
            self.show()
        else:
            self.timer.start()

    def show(self) -> None:
        bar = _bar(in_bytes=True, share=self.share)
        with self.lock:
            if self.closed or self.bar is not None:
                return
            self.task = bar.add_task(self.label, total=self.total, completed=self.done)
            bar.start()
            self.bar = bar

    def report(self, done: int, total: int) -> None:
        with self.lock:
            self.done, self.total = done, total
            if self.bar is None or self.task is None or self.closed:
                return
            now = 100 * done // total if total else 0
            self.bar.update(self.task, completed=done, total=total, refresh=now != self.percent)
            self.percent = now

    def close(self) -> None:
        self.timer.cancel()
        with self.lock:
            self.closed = True
            if self.bar is not None:
                self.bar.stop()


@contextmanager
def progress_callback(total: int, *, label: str,
                      share: bool = False) -> Iterator[Callable[[int, int], None] | None]:
    """A ``report(done, total)`` callback drawing a bar on an interactive stderr; None otherwise.

    For :func:`dsh_audit.runner.iter_many`, which reports bytes of the logs (``done`` of
    ``total``), also while one long log is read. The bar shows the label, the percentage, the
    bytes done and in all, and the time elapsed; with ``share``, the percentage and the time alone:
    for a task whose reads are a share of its work (:func:`dsh_audit.log.read_share`), where the
    bytes reported are not the bytes read. It appears only once the work has lasted
    ``DSH_AUDIT_PROGRESS_DELAY`` seconds (default 1), so that a quick run draws nothing, and it
    is cleared when the block ends, however it ends.

    Args:
        total: the units of work; with none, no bar.
        label: what the bar says it is doing.
        share: show no byte figure, only the percentage of the work done.

    Raises:
        UsageError: a bad ``DSH_AUDIT_PROGRESS_DELAY`` (only read when stderr is a terminal).
    """
    if total < 1 or not sys.stderr.isatty() or paging():
        yield None
        return
    delayed = _DelayedBar(label, _progress_delay(), share=share)
    delayed.open()
    try:
        with live(delayed.close):
            yield delayed.report
    finally:
        delayed.close()
