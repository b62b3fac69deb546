"""Terminal rendering with rich: tables, warnings, progress. The only module that imports rich.

rich is imported when something is drawn, not with this module: a command that writes JSON, or
runs with stderr piped (no progress bar), never loads it.

Everything drawn here, and every line the CLI echoes, goes through :func:`terminal_text` first:
text from a log is data, never a terminal control sequence, rich markup or a CI workflow command.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text
    from rich.progress import Progress

__all__ = ["print_status", "print_table", "progress", "progress_callback", "stderr_console", "stdout_console",
           "terminal_text"]

T = TypeVar("T")

# Controls (C0, C1, DEL), format characters (bidi overrides and isolates, zero-width), lone
# surrogates, private-use and unassigned code points, line and paragraph separators.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# A line GitHub Actions (and Azure Pipelines) reads as a command: ``::error ...``, ``##[error]``.
_CI_COMMANDS = ("::", "##[", "##vso[")


def _escape(char: str) -> str:
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def terminal_text(text: object) -> str:
    """``text`` as one inert line for a terminal: the one escaping function of the CLI.

    Control characters (ESC, CSI and OSC introducers, C1, DEL, NUL, BEL, BS, CR, newlines), bidi
    overrides and isolates, other invisible format characters and lone surrogates are shown as
    ``\\uXXXX``; a line that would start a CI workflow command (``::error``, ``##[``) has its
    first character escaped too. The result is plain text: print it without markup (rich
    :class:`~rich.text.Text`, ``markup=False``), as this module does.

    Example:
        >>> terminal_text("ok\\x1b]0;pwned\\x07\\u202e\\ud800\\n")
        'ok\\\\u001b]0;pwned\\\\u0007\\\\u202e\\\\ud800\\\\u000a'
        >>> terminal_text("::error::boom")
        '\\\\u003a:error::boom'
    """
    value = text if isinstance(text, str) else str(text)
    if not value.isprintable():
        value = "".join(_escape(ch) if ch != " " and unicodedata.category(ch) in _ESCAPED_CATEGORIES else ch
                        for ch in value)
    stripped = value.lstrip()
    if stripped.startswith(_CI_COMMANDS):
        cut = len(value) - len(stripped)
        value = value[:cut] + _escape(stripped[0]) + stripped[1:]
    return value


def stdout_console() -> Console:
    from rich.console import Console

    # Piped output keeps whole rows: rich would otherwise wrap at 80 columns.
    width = None if sys.stdout.isatty() else 200
    return Console(highlight=False, soft_wrap=False, width=width)


def stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _heading(text: str) -> Text:
    """A title or caption: rich wraps it anywhere, so no ``::`` or ``##`` may start a wrapped line."""
    from rich.text import Text

    return Text(terminal_text(text).replace("::", ":\\u003a").replace("##", "#\\u0023"))


def print_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
                caption: str | None = None) -> None:
    """A table on stdout; every title, caption and cell is shown with :func:`terminal_text`, no markup."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=_heading(title), caption=None if caption is None else _heading(caption),
                  title_justify="left", caption_justify="left")
    for column in columns:
        table.add_column(Text(terminal_text(column)), overflow="fold")
    for row in rows:
        table.add_row(*(Text("" if cell is None else terminal_text(cell)) for cell in row))
    stdout_console().print(table)


def print_status(text: str, *, ok: bool) -> None:
    """One bold status line, green when ``ok`` else red (plain text when piped)."""
    stdout_console().print(terminal_text(text), style="bold green" if ok else "bold red", markup=False, emoji=False)


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
