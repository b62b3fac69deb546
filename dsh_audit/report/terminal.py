"""Terminal rendering with rich: tables, warnings, progress. The only module that imports rich.

rich is imported when something is drawn, not with this module: a command that writes JSON, or
runs with stderr piped (no progress bar), never loads it.

Everything drawn here, and every line the CLI echoes, goes through :func:`terminal_text` first:
text from a log is data, never a terminal control sequence, rich markup or a CI workflow command.
"""

from __future__ import annotations

import os
import re
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
           "table_cell", "terminal_text"]

T = TypeVar("T")

# A number as the CLI prints one: a count, an estimate (~146), a ratio, a price, an index range.
_NUMBER = re.compile(r"^[~$+-]?\d[\d,._]*(%|s|ms|x)?$")
_NO_NUMBER = frozenset({"", "-", "?", "n/a"})
# Words up to this length are never split in a table; a longer one (a path) folds.
_WHOLE_WORD = 24
# When even whole words do not fit, a text column may fold down to this width (numbers never do).
_NARROWEST = 8

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

    return Console(highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else _piped_width())


def _piped_width() -> int:
    """The width of piped output: ``COLUMNS`` when set, else 200 (whole rows, not rich's 80)."""
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else 200


def stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _heading(text: str) -> Text:
    """A title or caption: rich wraps it anywhere, so no ``::`` or ``##`` may start a wrapped line."""
    from rich.text import Text

    return Text(terminal_text(text).replace("::", ":\\u003a").replace("##", "#\\u0023"))


def table_cell(value: object) -> str:
    """A table cell's text: :func:`terminal_text`, with None (no value) shown as ``-``."""
    return "-" if value is None else terminal_text(value)


def _is_number(text: str) -> bool:
    return bool(_NUMBER.match(text)) or text in _NO_NUMBER


def print_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
                caption: str | None = None, droppable: Sequence[str] = ()) -> None:
    """A table on stdout; every title, caption and cell is shown with :func:`table_cell`, no markup.

    ``droppable`` names lesser columns left out, in that order, while the table would not fit the
    terminal with whole words; the caption says which were left out.

    A number is never split over lines: a column of numbers (``13,613,605``, ``~146``, ``12.5%``,
    ``$0.0042``, ``-``) is right-aligned and at least as wide as its widest number, and a text
    column is at least as wide as its longest word (up to ``_WHOLE_WORD`` characters, so a path
    folds); narrower columns wrap their headers and text. Piped output is as wide as ``COLUMNS``
    (else 200 columns).
    """
    from rich.table import Table
    from rich.text import Text

    cells = [[table_cell(cell) for cell in row] for row in rows]
    console = stdout_console()
    dropped = _dropped(columns, cells, droppable, console.width)
    if dropped:
        kept = [at for at, column in enumerate(columns) if column not in dropped]
        columns, cells = [columns[at] for at in kept], [[row[at] for at in kept if at < len(row)] for row in cells]
        note = f"narrow terminal: {', '.join(dropped)} not shown (widen it, or use --json)"
        caption = note if caption is None else f"{caption}\n{note}"
    headers = [terminal_text(column) for column in columns]
    numeric = [_numeric([row[at] for row in cells if at < len(row)]) for at in range(len(headers))]
    widths = _widths(headers, cells, numeric, console.width - 3 * len(headers) - 1)
    table = Table(title=_heading(title), caption=None if caption is None else _heading(caption),
                  title_justify="left", caption_justify="left")
    for header, width, is_number in zip(headers, widths, numeric):
        table.add_column(Text(header), overflow="fold", width=width, justify="right" if is_number else "left")
    for row in cells:
        table.add_row(*(Text(text) for text in row))
    console.print(table)


def _dropped(columns: Sequence[str], cells: Sequence[Sequence[str]], droppable: Sequence[str],
             width: int) -> list[str]:
    """The droppable columns to leave out so that every other column keeps its words whole."""
    from rich.cells import cell_len

    def floor(at: int) -> int:
        words = [cell_len(w) for row in cells if at < len(row) for w in row[at].split()]
        return max([1, *(min(n, _WHOLE_WORD) for n in words), *(cell_len(w) for w in columns[at].split())])

    floors = {column: floor(at) for at, column in enumerate(columns)}
    dropped: list[str] = []
    for column in [c for c in droppable if c in floors]:
        kept = [c for c in columns if c not in dropped]
        if sum(floors[c] for c in kept) + 3 * len(kept) + 1 <= width:
            break
        dropped.append(column)
    return dropped


def _numeric(shown: Sequence[str]) -> bool:
    return any(text not in _NO_NUMBER for text in shown) and all(_is_number(text) for text in shown)


def _widths(headers: Sequence[str], cells: Sequence[Sequence[str]], numeric: Sequence[bool], room: int) -> list[int]:
    """Column widths that fit ``room`` cells of text, narrowing the widest column first but never
    below its floor (its widest number, or its longest word up to ``_WHOLE_WORD``)."""
    from rich.cells import cell_len

    widths: list[int] = []
    floors: list[int] = []
    titled: list[int] = []  # the floor that also keeps the header's words whole
    for at, header in enumerate(headers):
        shown = [row[at] for row in cells if at < len(row)]
        longest_word = max((cell_len(w) for text in shown for w in text.split()), default=1)
        floors.append(max(1, longest_word if numeric[at] else min(longest_word, _WHOLE_WORD)))
        titled.append(max([floors[-1], *(cell_len(w) for w in header.split())]))
        widths.append(max([cell_len(header), *(cell_len(text) for text in shown), floors[-1]]))
    narrowest = [f if number else min(f, _NARROWEST) for f, number in zip(floors, numeric)]
    for floor_of in (titled, floors, narrowest):
        while sum(widths) > room:
            slack = [(widths[at] - floor_of[at], at) for at in range(len(widths)) if widths[at] > floor_of[at]]
            if not slack:
                break
            widths[max(slack)[1]] -= 1
    return widths


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
