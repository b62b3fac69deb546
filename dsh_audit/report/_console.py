"""The consoles: stdout's (at the width its lines fit: the terminal's, or ``COLUMNS`` when piped,
never under a floor) and stderr's, the pager of a listing, and the lines a command writes beside
its tables.

rich is imported when a console is made, not with this module.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ._listing import current, listing_format, start_pager
from ._safe_text import markdown_text, stdout_text, terminal_text

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["listing_line", "output_width", "page_listing", "print_status", "stderr_console", "stdout_console",
           "title_width"]

# The narrowest width output is laid out for: the one-record-per-block layout of the widest header
# (``lost tokens (cost)``, 18 cells) beside a date and time (``2027-01-15 08:00:02``, 19) or a short
# session id (``session-86ef2d28``). A narrower terminal (``COLUMNS=1``) gets the lines of this
# width, and wraps them itself: a number, a date or an id is never cut to fit fewer columns.
_FLOOR_WIDTH = 40


def listing_line(line: str) -> tuple[str, bool]:
    """A line of text (shown with :func:`terminal_text`) that a command writes to stdout beside its
    tables, as this run's format shows it, and whether it goes to stderr instead: CSV keeps stdout
    for CSV, Markdown shows it as inert text (:func:`markdown_text`) ending in a line break."""
    state = current()
    if state is None or state.format in ("table", "json"):
        _start_pager()
        return line, False
    if state.format == "csv":
        return line, True
    _start_pager()
    state.written = True
    return (markdown_text(line) + "  ") if line.strip() else "", False


def page_listing() -> None:
    """Before a listing's output that is written whole rather than line by line (``check --format
    markdown``: the Markdown summary): start its pager when one is due, as its first line would."""
    _start_pager()


def _start_pager() -> None:
    """Before the first line of a listing: start its pager when one is due (:func:`listing`), at
    the terminal's width; a pager the user chose that cannot start is a warning."""
    why = start_pager(lambda: stdout_console().width)
    if why is not None:
        sys.stderr.write(terminal_text(f"warning: {why}; printing directly (hint: set DSH_AUDIT_PAGER or PAGER "
                                       "to a pager, or pass --no-pager)") + "\n")
        sys.stderr.flush()


def stdout_console() -> Console:
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            # rich exits 1 here. Under the console script rich never gets here: stdout drops what
            # is written once its reader is gone (``| head``) and the command keeps its exit code
            # (dsh_audit.cli._common.discard_stdout_when_gone). An unwrapped stdout's broken pipe
            # is raised to the caller instead (the CLI: a bug, exit 3), never a silent exit 1.
            raise BrokenPipeError

    state = current()
    if state is not None and state.width is not None:  # paging: the terminal's width, no colours
        width: int | None = state.width
    else:
        width = None if sys.stdout.isatty() else _piped_width()
    console = _Console(highlight=False, soft_wrap=False, width=width)
    if console.width < _FLOOR_WIDTH:  # a terminal (or COLUMNS) narrower than any layout: the floor's lines
        console.width = _FLOOR_WIDTH
    return console


def _piped_width() -> int:
    """The width of piped output: ``COLUMNS`` when set, else 200 (whole rows, not rich's 80)."""
    return _columns() or 200


def _columns() -> int | None:
    """``COLUMNS`` when it is set to a width, else None."""
    columns = os.environ.get("COLUMNS", "")
    return int(columns) if columns.isdigit() and int(columns) > 0 else None


def title_width() -> int | None:
    """The width a heading (a session log's path) is cut to: :func:`output_width` on a terminal,
    through a pager, or piped with ``COLUMNS`` set; None (the whole heading, never cut or wrapped)
    when stdout is a pipe or a file and ``COLUMNS`` is not set."""
    state = current()
    if (state is None or state.width is None) and not sys.stdout.isatty() and _columns() is None:
        return None
    return output_width()


def stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def output_width() -> int:
    """The width stdout's lines must fit: the terminal's, or ``COLUMNS`` (else 200) when piped, at
    least ``_FLOOR_WIDTH`` (40)."""
    return stdout_console().width


def print_status(text: str, *, ok: bool) -> None:
    """One bold status line, green when ``ok`` else red (plain text when piped); in a CSV listing
    on stderr, in a Markdown one in bold (:func:`listing`)."""
    line, err = listing_line(terminal_text(text))
    if err:
        sys.stderr.write(line + "\n")
    elif listing_format() == "markdown":
        sys.stdout.write(f"**{line.removesuffix('  ')}**\n")
    else:
        stdout_console().print(stdout_text(line), style="bold green" if ok else "bold red", markup=False,
                               emoji=False)
