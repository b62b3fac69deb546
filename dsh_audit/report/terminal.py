"""Terminal rendering with rich: tables, warnings, progress. The only module that imports rich.

rich is imported when something is drawn, not with this module: a command that writes JSON, or
runs with stderr piped (no progress bar), never loads it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

__all__ = ["print_table", "progress", "progress_callback", "stderr_console", "stdout_console"]

T = TypeVar("T")


def stdout_console() -> Console:
    from rich.console import Console

    # Piped output keeps whole rows: rich would otherwise wrap at 80 columns.
    width = None if sys.stdout.isatty() else 200
    return Console(highlight=False, soft_wrap=False, width=width)


def stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def print_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
                caption: str | None = None) -> None:
    from rich.table import Table

    table = Table(title=title, caption=caption, title_justify="left", caption_justify="left")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(*("" if cell is None else str(cell) for cell in row))
    stdout_console().print(table)


def print_status(text: str, *, ok: bool) -> None:
    """One bold status line, green when ``ok`` else red (plain text when piped)."""
    stdout_console().print(text, style="bold green" if ok else "bold red", markup=False)


def _bar() -> Progress:
    """A transient progress bar on stderr: label, bar, done/total, elapsed time."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=stderr_console(), transient=True)


@contextmanager
def progress(items: Sequence[T], *, label: str) -> Iterator[Iterable[T]]:
    """Iterate ``items`` with a progress bar on an interactive stderr; silently otherwise."""
    if len(items) < 2 or not sys.stderr.isatty():
        yield items
        return
    bar = _bar()

    def run() -> Iterator[T]:
        task = bar.add_task(label, total=len(items))
        for item in items:
            yield item
            bar.advance(task)

    with bar:
        yield run()


@contextmanager
def progress_callback(total: int, *, label: str) -> Iterator[Callable[[int, int], None] | None]:
    """A ``report(done, total)`` callback drawing a bar on an interactive stderr; None otherwise.

    For work that finishes out of order (``dsh_audit.fleet.run_many``): the caller reports counts.
    """
    if total < 2 or not sys.stderr.isatty():
        yield None
        return
    bar = _bar()
    task = bar.add_task(label, total=total)

    def report(done: int, total: int) -> None:
        bar.update(task, completed=done, total=total)

    with bar:
        yield report
