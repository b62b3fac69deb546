"""Drawing a laid-out table (:mod:`._tables` chooses its columns and widths): its title on a
heading line, its header, rows and captions, boxed or compact, or one block of ``column  value``
lines per row. The rows are written without rich's per-cell layout when rich would change nothing
in them (:func:`_draw_table`).

rich is imported when a table is drawn, not with this module.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ._cells import _PATH_WORD, _TABLE_WORD
from ._console import title_width
from ._fit_text import _UUID, _cut, cell_len, fit_lines
from ._safe_text import _CI_COMMANDS, _escape, stdout_text, terminal_text

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

# The narrowest value column of the one-record-per-block layout (a terminal narrower than that overflows).
_NARROWEST = 8

# A header may wrap at a space or after one of these (``turn/step/attempt``, ``off-peak``), never inside a word.
_HEADER_BREAKS = re.compile(r"(?<=[/-])(?=[^/-])")
# The end of a line rich drew, reversed: the spaces that pad a cell, header or caption to its column or
# to the table's width, among the escapes that open and close its styles on a terminal (a wrapped
# header's last line: each blank header cell its own bold run). Matched from the reversed line's
# start, in one pass (a pattern anchored at the line's end tries each space of a run: quadratic).
_TRAILING = re.compile(r"(?: |m[0-9;]*\[\x1b)*")
_STYLE = re.compile(r"\x1b\[[0-9;]*m")


def _print_heading(console: Console, text: str) -> None:
    """A table's title above it, never wrapped inside a word (a path split over lines reads as two
    names): on one line when it fits :func:`title_width` (always when that is None: piped with no
    ``COLUMNS``), else broken at its last two-space gap (``PATH  session ID``:
    :func:`dsh_audit.cli._output.session_title`): a path whole on its line (to be copied: a
    terminal narrower wraps it), any other line cut in its middle (:func:`middle_cut`) when still
    wider, but a line after the gap that holds a session id, which is cut at its end (what is
    left is a prefix `show` and `explain` take)."""
    from rich.cells import cell_len

    if not text:  # no title, no line (as rich's own title)
        return
    width = title_width()
    shown = stdout_text(terminal_text(text))
    if width is None or cell_len(shown) <= width:
        lines = [shown]
    else:
        head, gap, tail = shown.rpartition("  ")
        parts = (head, tail) if gap and head.strip() else (shown,)
        # a path stands whole on its line (a terminal narrower wraps it): cut, it could not be copied
        lines = [part if _is_path(part) else _cut(part, width, keep_end=at == 0 or not _UUID.search(part))
                 for at, part in enumerate(parts)]
    for line in lines:
        console.print(_heading(line), soft_wrap=True)


def _is_path(text: str) -> bool:
    """Whether a title's line is one path (:data:`_PATH_WORD`): shown whole, never cut."""
    return " " not in text.strip() and bool(_PATH_WORD.search(text.strip()))


def _heading(text: str) -> Text:
    """A title or caption: rich wraps it anywhere, so no ``::`` or ``##`` may start a wrapped line."""
    from rich.text import Text

    return Text(stdout_text(terminal_text(text)).replace("::", ":\\u003a").replace("##", "#\\u0023"))


def _overhead(count: int, *, compact: bool) -> int:
    """The cells a table's borders and padding take: ``| a | b |`` boxed, ``a  b`` compact."""
    return 2 * (count - 1) if compact else 3 * count + 1


def _header_pieces(header: str) -> list[tuple[str, str]]:
    """``header`` as (separator, piece) pairs, broken at spaces and after ``/`` or ``-``."""
    pieces: list[tuple[str, str]] = []
    for word in header.split():
        for at, piece in enumerate(_HEADER_BREAKS.split(word)):
            pieces.append(("" if at else " ", piece))
    return pieces


def _header_text(header: str, width: int) -> str:
    """``header`` wrapped to ``width`` at its break points (:func:`_header_pieces`), lines joined by newlines."""
    from rich.cells import cell_len

    lines: list[str] = []
    for separator, piece in _header_pieces(header):
        if lines and cell_len(lines[-1] + separator + piece) <= width:
            lines[-1] += separator + piece
        else:
            lines.append(piece)
    return "\n".join(lines)


def _draw_table(console: Console, title: str, headers: Sequence[str], cells: Sequence[Sequence[str]],
                numeric: Sequence[bool], widths: Sequence[int], captions: Sequence[str], *, compact: bool) -> None:
    """A table (boxed, or ``compact``: no borders) with the given column widths; ``captions`` are
    lines under it.

    The same text as :func:`_draw_table_rich`, byte for byte, written faster when rich would
    wrap, fold, crop and style nothing in its rows (:func:`_plain_rows`): rich draws the table's
    frame (its top border, header, header rule and bottom border, styled as on a
    terminal) as a table of no rows, and the rows are written between, as rich writes them. Else
    rich draws it all.
    """
    body = _plain_rows(console, cells, numeric, widths, compact=compact)
    if body is None or len(headers) != len(widths):
        _draw_table_rich(console, title, headers, cells, numeric, widths, captions, compact=compact)
        return
    # A table of no rows is the table's top (down to its header rule), then its bottom border (none
    # when compact): its rows go between the two, and change neither. The widths
    # of its columns are fixed and fit (rich.table.Table._measure_column, _calculate_column_widths),
    # a row is drawn from its own cells (Table._render); the captions follow
    # (:func:`_print_captions`), at the terminal's width.
    frame = _captured(console, _table_frame(headers, numeric, widths, compact=compact))
    top = frame if compact else frame[:frame.rindex("\n", 0, len(frame) - 1) + 1]  # all but the bottom border
    _print_heading(console, title)
    _write(console, [_trimmed(top), *(_trimmed(line) for line in body), _trimmed(frame[len(top):])])
    _print_captions(console, captions)


def _print_captions(console: Console, captions: Sequence[str]) -> None:
    """A table's captions, each wrapped at the terminal's width (not the table's: a caption
    under a narrow table is no taller than it must be), at spaces (:func:`_heading`)."""
    if console.quiet or console.legacy_windows or console.is_jupyter:  # as _print_trimmed
        for caption in captions:
            console.print(_heading(caption))
        return
    with console.capture() as capture:
        for caption in captions:
            console.print(_heading(caption))
    _write(console, [_trimmed(capture.get())])


def _trimmed(text: str) -> str:
    """``text`` with no line ending in a space (:data:`_TRAILING`), the escapes among those spaces
    kept: each style it opens is closed."""
    return "\n".join(map(_line_trimmed, text.split("\n")))


def _line_trimmed(line: str) -> str:
    """``line`` with the spaces of its end left out, its style escapes kept (:func:`_trimmed`).

    Example:
        >>> _line_trimmed("\\x1b[1m hit\\x1b[0m\\x1b[1m \\x1b[0m  "), _line_trimmed("a b")
        ('\\x1b[1m hit\\x1b[0m\\x1b[1m\\x1b[0m', 'a b')
    """
    if not line.endswith((" ", "m")):
        return line
    end = _TRAILING.match(line[::-1])
    tail = end[0] if end else ""
    if " " not in tail:
        return line
    return line[:len(line) - len(tail)] + "".join(_STYLE.findall(tail[::-1]))


def _print_trimmed(console: Console, table: Table) -> None:
    """``console.print(table)``, no line ending in a space (:func:`_trimmed`); as rich prints it
    where it writes no plain text to a file (Jupyter, a legacy Windows console) or nothing (quiet)."""
    if console.quiet or console.legacy_windows or console.is_jupyter:
        console.print(table)
        return
    _write(console, [_trimmed(_captured(console, table))])


def _captured(console: Console, table: Table) -> str:
    """What ``console.print(table)`` would write."""
    with console.capture() as capture:
        console.print(table)
    return capture.get()


def _draw_table_rich(console: Console, title: str, headers: Sequence[str], cells: Sequence[Sequence[str]],
                     numeric: Sequence[bool], widths: Sequence[int], captions: Sequence[str], *,
                     compact: bool) -> None:
    """:func:`_draw_table` drawn by rich, cell by cell: a cell may wrap (:func:`_cell_text`)."""
    from rich.text import Text

    table = _table_frame(headers, numeric, widths, compact=compact)
    for row in cells:
        table.add_row(*(Text(text if number else _cell_text(text, width))
                        for text, width, number in zip(row, widths, numeric)))
    _print_heading(console, title)
    _print_trimmed(console, table)
    _print_captions(console, captions)


def _table_frame(headers: Sequence[str], numeric: Sequence[bool], widths: Sequence[int], *, compact: bool) -> Table:
    """The rich table of :func:`_draw_table`, its columns, with no rows yet (its captions follow it)."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    style: dict[str, Any] = dict(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                                 collapse_padding=True) if compact else {}
    table = Table(**style)
    for header, width, is_number in zip(headers, widths, numeric):
        table.add_column(Text(_header_text(header, width)), overflow="fold", width=width,
                         justify="right" if is_number else "left")
    return table


def _plain_rows(console: Console, cells: Sequence[Sequence[str]], numeric: Sequence[bool], widths: Sequence[int],
                *, compact: bool) -> list[str] | None:
    """The lines rich draws for the rows of :func:`_draw_table`, each ending in a newline; None
    when rich may draw them otherwise than this does, so that rich draws the table.

    This draws the rows as rich does (rich 15: rich/table.py, rich/padding.py, rich/text.py,
    rich/containers.py, rich/segment.py) when it can show that rich wraps, folds, crops and styles
    nothing in them:

    - the console writes plain text to a file: not Jupyter, not a legacy Windows console (drawn by
      Win32 calls), not quiet (nothing written), not recording;
    - the columns (one or more, each at least one cell wide) fit the console, so rich keeps their
      widths (``Table._calculate_column_widths`` narrows them only when they do not fit), and so do
      the lines (``Console.print`` crops none);
    - every row has a cell for each column, and each line of each cell (a text cell wrapped by
      :func:`_cell_text`, a number whole) is printable text (no tab, other space than `` ``,
      control or format character) without ``U+FE0F`` (whose width depends on the character
      before it), no wider than its column: ``Text.wrap`` (``divide_line``) breaks no line.

    A cell's line is then its text padded to the column's width (``Lines.justify``: ``left`` pads
    it on the right; ``right`` strips its trailing spaces, then pads it on the left), inside the
    column's padding (``Padding``, expanded to the column: one space each side when boxed;
    compact, with ``collapse_padding`` and no ``pad_edge``, one space after each column but the
    last: ``Table._get_cells``); a row is as many lines high as its highest cell, the others
    topped up with blank lines (``Segment.align_top``, a column's default ``vertical``); each line
    is its cells joined by the box's vertical line (a space when compact), inside its left and
    right edges when boxed (``Table._render``: the ``mid`` characters, the ``foot`` ones on the
    last row, of the box as the console shows it, ASCII on a stdout that is not UTF-8:
    ``Box.substitute``). Nothing in a row has a style, on a terminal too: the table, its rows,
    columns, cells and borders have none (only the header does), so rich writes each segment's
    text as it is (``Console._render_buffer``).
    """
    from rich import box

    count = len(widths)
    if (console.is_jupyter or console.legacy_windows or console.quiet or console.record or not count
            or len(numeric) < count or min(widths) < 1
            or sum(widths) + _overhead(count, compact=compact) > console.width):
        return None
    shown = (box.SIMPLE_HEAD if compact else box.HEAVY_HEAD).substitute(console.options, safe=console.safe_box)
    pads = [(0, 0 if at == count - 1 else 1) if compact else (1, 1) for at in range(count)]
    blanks = [" " * (width + left + right) for width, (left, right) in zip(widths, pads)]
    lines: list[str] = []
    for at, row in enumerate(cells):
        if len(row) < count:
            return None
        drawn: list[list[str]] = []
        for text, width, number, (left_pad, right_pad) in zip(row, widths, numeric, pads):
            size = cell_len(text)
            parts = [text] if size <= width or number else _cell_text(text, width).split("\n")
            cell: list[str] = []
            for part in parts:
                if part is not text:
                    size = cell_len(part)
                if size > width or not part.isprintable() or "\ufe0f" in part:
                    return None
                if number:  # justify="right"
                    part = part.rstrip()
                    part = " " * (width - cell_len(part)) + part
                else:
                    part += " " * (width - size)
                cell.append(" " * left_pad + part + " " * right_pad)
            drawn.append(cell)
        last = at == len(cells) - 1
        divider = shown.foot_vertical if last else shown.mid_vertical
        edge_left, edge_right = ("", "") if compact else (
            (shown.foot_left, shown.foot_right) if last else (shown.mid_left, shown.mid_right))
        for line in range(max(map(len, drawn))):
            pieces = [cell[line] if line < len(cell) else blank for cell, blank in zip(drawn, blanks)]
            lines.append(edge_left + divider.join(pieces) + edge_right + "\n")
    return lines


def _write(console: Console, texts: Sequence[str]) -> None:
    """``texts`` written to the console's file as ``Console.print`` writes what it drew
    (``Console._check_buffer``, ``_write_buffer``): at once and flushed, on Windows in pieces of
    at most 8192 characters (a whole number of lines); a reader gone is ``console.on_broken_pipe``."""
    out = console.file
    try:
        if sys.platform != "win32":
            out.write("".join(texts))
        else:
            batch: list[str] = []
            size = 0
            for line in "".join(texts).splitlines(True):
                if size + len(line) > 8192 and batch:
                    out.write("".join(batch))
                    batch.clear()
                    size = 0
                batch.append(line)
                size += len(line)
            if batch:
                out.write("".join(batch))
        out.flush()
    except BrokenPipeError:
        console.on_broken_pipe()


def _cell_text(text: str, width: int) -> str:
    """A text cell wrapped to ``width`` at spaces (a date and time kept on one line), a word too
    long for a line cut in its middle (:func:`middle_cut`), or at its end when it holds a session
    id and is no path (:func:`_cut`: what is left is a prefix `show` and `explain` take), never
    folded: a piece of an id or a path on a line of its own reads as another name.

    Example:
        >>> print(_cell_text("moved to /home/me/sessions/session-1/session.jsonl", 16))
        moved to
        /home/m…on.jsonl
        >>> print(_cell_text("1 (session-70444d8d-ee1d-43e9-8341-470b57f1019c)", 26))
        1
        (session-70444d8d-ee1d-43…
    """
    from rich.cells import cell_len

    if cell_len(text) <= width:
        return text
    lines: list[str] = []
    for word in _TABLE_WORD.findall(text):
        if word.startswith(_CI_COMMANDS):  # any word may start a line: none may start a CI command
            word = _escape(word[0]) + word[1:]
        if cell_len(word) > width:
            word = _cut(word, width, keep_end=not _UUID.search(word) or bool(_PATH_WORD.search(word)))
        if lines and cell_len(lines[-1]) + 1 + cell_len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return "\n".join(lines)


def _draw_records(console: Console, title: str, headers: Sequence[str], cells: Sequence[Sequence[str]],
                  caption: str | None, *, whole: Sequence[bool] = ()) -> None:
    """The narrowest layout: one block of ``column  value`` lines per row, blocks apart by a blank
    line; a value of a ``whole`` column (session ids) wrapped whole, after a ``-`` (:func:`fit_lines`),
    never cut: a cut id names no session."""
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text

    key_width = max((cell_len(h) for h in headers), default=1)
    grid = Table.grid(padding=(0, 2))
    value_width = max(console.width - key_width - 2, _NARROWEST)
    grid.add_column(no_wrap=True, width=key_width)
    grid.add_column(overflow="fold", width=value_width)
    for number, row in enumerate(cells):
        if number:
            grid.add_row("", "")
        for at, (header, text) in enumerate(zip(headers, row)):
            kept = at < len(whole) and whole[at]
            grid.add_row(Text(header), Text("\n".join(fit_lines(text, value_width, hanging=0)) if kept
                                            else _cell_text(text, value_width)))
    _print_heading(console, title)
    _print_trimmed(console, grid)
    if caption is not None:  # wrapped as a table's caption is: no folded line ends in its space
        _print_captions(console, [caption])
