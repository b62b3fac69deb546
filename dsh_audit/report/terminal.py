"""Terminal rendering with rich: tables, warnings, progress. The only module that imports rich.

rich is imported when something is drawn, not with this module: a command that writes JSON, or
runs with stderr piped (no progress bar), never loads it.

Everything drawn here, and every line the CLI echoes, goes through :func:`terminal_text` first:
text from a log is data, never a terminal control sequence, rich markup or a CI workflow command.
Inside :func:`listing` (``--format``, ``--pager``: :mod:`dsh_audit.report._listing`) a table is
written as CSV or inert Markdown instead, or shown through a pager.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
import sys
import threading
import unicodedata
import weakref
from decimal import Decimal
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from .._seq import common_length
from ..errors import UsageError
from ._listing import LISTING_FORMATS, Listing, current, listing, listing_format, live, paging, start_pager

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID
    from rich.table import Table
    from rich.text import Text

__all__ = ["LISTING_FORMATS", "NO_VALUE", "Amount", "fit_lines", "listing", "listing_format", "listing_line",
           "markdown_text", "middle_cut", "output_width", "page_listing", "print_status", "print_table", "progress",
           "progress_callback", "rows_fit", "short_ids", "stderr_console", "stdout_console", "stdout_text",
           "table_cell", "terminal_text", "title_width"]

T = TypeVar("T")

# A number as the CLI prints one: a count, an estimate (~146), a ratio, a price, a lower bound
# (≥$0.0076, ``\u2265$0.0076`` on a stdout that cannot write ≥), an index range; ``?`` and ``$?``
# a number not known.
_NUMBER = re.compile(r"^(?:~|≥|\\u2265)?[$+-]?\d[\d,._]*(%|s|ms|x)?$|^\$\?$")
#: A cell that says nothing: no value (empty, ``-``), an unknown count (``?``), or none (``n/a``).
NO_VALUE = frozenset({"", "-", "?", "n/a"})
# A path up to this long is never cut in a table; a longer one is cut in its middle (``…``) to fit.
_WHOLE_WORD = 24
# A column whose cells are all this short is not wrapped while leaving out a column can avoid it.
_ROOMY = 24
# What a table keeps on one line as if it were one word: a date and time (``2027-01-15 08:00``).
_TABLE_WORD = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d)?(?![\d:])|\S+")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)
# A word that is not a path (a session id, a model name, a number) is kept whole in a table up to
# this length; a longer one is cut in its middle (``…``) to fit, never folded.
_WHOLE_ID = 64
# A word read as a file path: absolute, home- or dot-relative, a drive or UNC path, three or more
# ``/`` (a model name has fewer: ``openrouter/anthropic/claude-sonnet-4``), or a log's file name.
_PATH_WORD = re.compile(r"^(?:~|\.{1,2})?/|^[A-Za-z]:[\\/]|^\\\\|(?:[^/]*/){3}|\.(?:jsonl|zstd|zst|json|har)$")
# The narrowest value column of the one-record-per-block layout (a terminal narrower than that overflows).
_NARROWEST = 8
# The narrowest width output is laid out for: the one-record-per-block layout of the widest header
# (``lost tokens (cost)``, 18 cells) beside a date and time (``2027-01-15 08:00:02``, 19) or a short
# session id (``session-86ef2d28``). A narrower terminal (``COLUMNS=1``) gets the lines of this
# width, and wraps them itself: a number, a date or an id is never cut to fit fewer columns.
_FLOOR_WIDTH = 40
# A header may wrap at a space or after one of these (``turn/step/try``, ``off-peak``), never inside a word.
_HEADER_BREAKS = re.compile(r"(?<=[/-])(?=[^/-])")
# A word too long for its line folds after one of the first group when it can (JSON, a path), else
# after one of the second (a dotted name, an id), else anywhere.
_FOLD_AFTER = (",/", ".-_")
# The marker of a text cut in the middle (:func:`middle_cut`).
_CUT = "…"
# Seconds of work before a progress bar appears, unless DSH_AUDIT_PROGRESS_DELAY says otherwise.
_PROGRESS_DELAY = 1.0

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


def stdout_text(text: str) -> str:
    """``text`` as stdout can write it: itself when stdout's encoding holds all of it (UTF-8
    always), else with each character it cannot hold as the JSON escape of its UTF-16 code units
    (``caf\\u00e9``, an astral character as its surrogate pair), as the CLI's stdout writes such a
    character (:func:`dsh_audit.cli.main`). A table or a folded line is measured on this text, so
    that what stdout writes takes the room it was given (``PYTHONIOENCODING=ascii``).

    Example:
        >>> stdout_text("plain ASCII")
        'plain ASCII'
    """
    if text.isascii():
        return text
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return "".join(ch if _encodes(ch, encoding) else _json_escape(ch) for ch in text)
    except LookupError:  # a stream that names no codec this interpreter has: nothing to measure by
        return text
    return text


def _encodes(char: str, encoding: str) -> bool:
    try:
        char.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def _json_escape(char: str) -> str:
    """``char`` as the JSON escape of its UTF-16 code units: ``\\u00e9``, ``\\ud83d\\ude00``."""
    units = char.encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{units[at]:02x}{units[at + 1]:02x}" for at in range(0, len(units), 2))


# A CSV text cell starting with one of these is a formula to a spreadsheet: it gets a leading apostrophe.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
# Characters Markdown (CommonMark, GitHub) may read as markup, each shown with a backslash.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~&])")
# A line start Markdown reads as a block that the escapes above leave: an ordered list item, a list
# item or rule (``-``, ``+``), a setext underline (``=``).
_MARKDOWN_BLOCK = re.compile(r"^(?:(\d+)([.)])|([-+=]))")


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


def markdown_text(text: object) -> str:
    """``text`` as inert Markdown: :func:`terminal_text`, every character Markdown may read as markup
    (``\\ ` * _ [ ] < > # | ~ &``) escaped with a backslash, and so is a line start that would begin
    a list, a rule or a heading (leading spaces, which would begin a code block, are dropped): a
    link, an image, HTML, emphasis or a table cell break in a log's text stays text.

    Example:
        >>> markdown_text("[x](javascript:alert(1)) <img src=x> | *a*")
        '\\\\[x\\\\](javascript:alert(1)) \\\\<img src=x\\\\> \\\\| \\\\*a\\\\*'
        >>> markdown_text("    - 1. item"), markdown_text("12) x")
        ('\\\\- 1. item', '12\\\\) x')
    """
    value = _markdown_inline(terminal_text(text).lstrip())
    return _MARKDOWN_BLOCK.sub(lambda m: f"{m[1]}\\{m[2]}" if m[1] else f"\\{m[3]}", value, count=1)


def _markdown_inline(text: str) -> str:
    """``text`` (already shown with :func:`terminal_text`) with Markdown's markup characters escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


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
            # rich exits 1 here; a reader that stopped early (``| head``) is the CLI's to handle
            # (exit 0, dsh_audit.cli), as for every other write to stdout.
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


def _print_heading(console: Console, text: str) -> None:
    """A table's title above it, never wrapped inside a word (a path split over lines reads as two
    names): on one line when it fits :func:`title_width` (always when that is None: piped with no
    ``COLUMNS``), else broken at its last two-space gap (``PATH  session ID``:
    :func:`dsh_audit.cli._common.session_title`), each line cut in its middle (:func:`middle_cut`)
    when still wider, but a line after the gap that holds a session id, which is cut at its end
    (what is left is a prefix `show` and `explain` take)."""
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
        lines = [_cut(part, width, keep_end=at == 0 or not _UUID.search(part)) for at, part in enumerate(parts)]
    for line in lines:
        console.print(_heading(line), soft_wrap=True)


def stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _heading(text: str) -> Text:
    """A title or caption: rich wraps it anywhere, so no ``::`` or ``##`` may start a wrapped line."""
    from rich.text import Text

    return Text(stdout_text(terminal_text(text)).replace("::", ":\\u003a").replace("##", "#\\u0023"))


class Amount(NamedTuple):
    """A number cell that people and a spreadsheet read differently: ``text`` as a table and
    Markdown show it (``$0.0002``, ``≥$0.0980``, ``$?``; a count, ``?`` when unknown), ``value``
    the exact number CSV writes (an amount in USD to the nano-dollar, as the JSON gives it; a count),
    None when unknown (CSV: an empty cell). The one way a command hands :func:`print_table` money or
    a count that may be unknown.

    Example:
        >>> Amount(0.00021, "$0.0002").csv, Amount(2.1e-05, "$0.000021").csv, Amount(None, "$?").csv
        ('0.00021', '0.000021', '')
    """

    value: float | int | None
    text: str

    @property
    def csv(self) -> str:
        """The value as CSV writes it: a plain decimal (never an exponent), empty when unknown."""
        value = self.value
        if value is None or isinstance(value, bool):
            return ""
        if isinstance(value, int):
            return str(value)
        text = format(Decimal(repr(value)), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text


def table_cell(value: object) -> str:
    """A table cell's text: :func:`terminal_text`, with None (no value) shown as ``-`` and an
    :class:`Amount` as its text."""
    if isinstance(value, Amount):
        return terminal_text(value.text)
    return "-" if value is None else terminal_text(value)


def _is_number(text: str) -> bool:
    return bool(_NUMBER.match(text)) or text in NO_VALUE


#: The style of a run's first table, boxed (False) or compact (True), by its listing
#: (:func:`print_table`: the run's other tables take it).
_RUN_STYLES: weakref.WeakKeyDictionary[Listing, bool] = weakref.WeakKeyDictionary()


def print_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
                caption: str | None = None, droppable: Sequence[str] = (), short: Mapping[str, str] | None = None,
                ids: Sequence[str] = ()) -> None:
    """A table on stdout; every title, caption and cell is shown with :func:`table_cell`, no markup.

    Every line fits the terminal (piped output: ``COLUMNS``, else 200 columns; a terminal narrower
    than 40 columns gets lines of 40, which it wraps: :func:`output_width`), and no number or
    word is ever split over lines: a column of numbers (``13,613,605``, ``~146``, ``12.5%``,
    ``$0.0042``, ``-``) is right-aligned and at least as wide as its widest number, a text column
    at least as wide as its longest word (a path: up to ``_WHOLE_WORD`` characters; any other
    word, such as a session id or a model name, up to ``_WHOLE_ID``), and a header wraps only at
    a space or after ``/`` or ``-``; a date and time (``2027-01-15 08:00``) stays on one line. A
    word longer than its column is cut in its middle with ``…``, never folded. The title is one
    line above the table (:func:`title_width`), never wrapped. Columns are left out one by one
    (the caption says which): first a column with no value in any row (every cell ``-``, ``?``,
    ``n/a`` or empty), then the ``droppable`` columns in that order. The first layout that fits is
    drawn: with all the columns, then with one left out, and so on, the boxed table with every
    cell on one line, the borderless compact one so, then the boxed and the compact table with
    only cells longer than ``_ROOMY`` wrapped; failing all that, the compact table with text
    wrapped down to its longest words, with as few columns left out as that needs; then so with
    words longer than ``_WHOLE_WORD`` cut; else one block of ``column value`` lines per row,
    every column kept. Inside :func:`listing`, a run's tables share one style: after the first
    (boxed or compact), only layouts of its style are tried, in that order (a boxed one squeezed
    and with words cut too, as a compact one is), so at a given width a run draws every table in
    the style of its first; the other style only when no layout of it fits at all (a table too
    wide to be drawn boxed even so).

    A table with a short form (``short``: a shorter header for some columns, as ``sessions`` says
    ``reqs`` for ``requests``; ``ids``: columns of session ids) tries it, compact first, after each
    layout above that fails, before it leaves out a column that has a value: its headers
    shortened and its ids cut at their end, no further than to each one's shortest unique prefix
    among the column's (of 16 characters at least, and through a UUID's first group, as
    :func:`short_ids` shows one) and a ``…`` (a prefix `show` and `explain` take), and only as far
    as the room needs.

    Inside :func:`listing` with ``csv`` or ``markdown``, the table is written in that format
    instead, every column kept (:func:`_write_csv`, :func:`_write_markdown`).
    """
    given = [list(row) for row in rows]
    cells = [[table_cell(cell) for cell in row] for row in given]
    headers = [terminal_text(column) for column in columns]
    state = current()
    if state is not None and state.format == "csv":
        _write_csv(state, terminal_text(title), headers, given)
        return
    _start_pager()
    if state is not None and state.format == "markdown":
        _write_markdown(state, title, headers, cells, caption)
        return
    # What stdout cannot write is escaped by it: measure the escapes, so that the columns line up.
    cells = [[stdout_text(text) for text in row] for row in cells]
    headers = [stdout_text(header) for header in headers]
    console = stdout_console()
    empty, order = _left_out_order(columns, cells, droppable)
    form = _short_form(columns, headers, cells, short=short, ids=ids)
    chosen = _layout(headers, cells, order, console.width, state, form=form, valued=len(empty))
    if chosen is not None:
        note = _narrow_note([headers[at] for at in order[:chosen.drop] if at in empty],
                            [headers[at] for at in order[:chosen.drop] if at not in empty])
        shown = form.headers if chosen.short and form is not None else headers
        cut = form.floors if chosen.short and form is not None else {}
        _draw_table(console, title, [shown[at] for at in chosen.kept],
                    [[_id_cut(row[at], width) if at in cut else row[at]
                      for at, width in zip(chosen.kept, chosen.widths) if at < len(row)] for row in cells],
                    chosen.numeric, chosen.widths, [text for text in (caption, note) if text is not None],
                    compact=chosen.compact)
        if state is not None:
            _RUN_STYLES.setdefault(state, chosen.compact)
        return
    _draw_records(console, title, headers, cells, caption)


class _Layout(NamedTuple):
    """The layout :func:`print_table` draws a table in (:func:`_layout`)."""

    kept: list[int]  # the columns shown, by their place among all the table's columns
    widths: list[int]  # each shown column's width
    numeric: list[bool]  # whether each shown column is one of numbers (right-aligned)
    compact: bool  # borderless (True) or boxed
    drop: int  # how many columns of the order of leaving out (:func:`_left_out_order`) are left out
    short: bool = False  # in the table's short form (:class:`_ShortForm`)


class _ShortForm(NamedTuple):
    """A table's short form (:func:`print_table`'s ``short`` and ``ids``, :func:`_short_form`)."""

    headers: list[str]  # every column's header, shortened where the table has a shorter one
    floors: dict[int, int]  # each column of ids (by place): the narrowest width its ids may be cut to


# An id of a table's short form is cut no shorter than this many characters (``session-86ef2d28``,
# which :func:`short_ids` shows), nor than through its UUID's first group: what is left names one
# session among all those `explain` looks an id up in, not only among a table's rows.
_SHORTEST_ID = 16
# One character of a cell as stdout writes it (:func:`stdout_text`): itself, or its escape (an astral
# character's is its two code units'): an id is cut between them, never inside an escape.
_SHOWN_CHAR = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|"
                         r"\\U[0-9a-fA-F]{8}|.", re.S)


def _short_form(columns: Sequence[str], headers: Sequence[str], cells: Sequence[Sequence[str]], *,
                short: Mapping[str, str] | None, ids: Sequence[str]) -> _ShortForm | None:
    """The short form of a table whose ``headers`` and ``cells`` are shown as stdout writes them;
    None: it has none."""
    if not short and not ids:
        return None
    shown = [stdout_text(terminal_text(short[column])) if short and column in short else header
             for column, header in zip(columns, headers)]
    floors = {at: _prefix_floor([row[at] for row in cells if at < len(row)], shown[at])
              for at, column in enumerate(columns) if column in ids}
    return _ShortForm(shown, floors)


def _prefix_floor(texts: Sequence[str], header: str) -> int:
    """The narrowest width a column of ids (``texts``, as stdout writes them) may be cut to at
    their end (:func:`_id_cut`): each id's shortest prefix no other id starts with (of at least
    ``_SHORTEST_ID`` characters, and through its UUID's first group), and the cut mark, or the
    whole id when that is no narrower; and its header's longest piece."""
    mark = _cell_len(stdout_text(_CUT))
    unique = sorted(set(texts))
    need = max([1, *(_cell_len(piece) for _, piece in _header_pieces(header))])
    for text, shared in zip(unique, _shared_lengths(unique)):
        found = _UUID.search(text)
        least = max(shared + 1, _SHORTEST_ID, found.start() + 8 if found else 0)
        length = 0
        prefix: list[str] = []
        for char in _SHOWN_CHAR.findall(text):  # whole characters, up to the least length
            if length >= least:
                break
            prefix.append(char)
            length += len(char)
        need = max(need, min(_cell_len(text), _cell_len("".join(prefix)) + mark))
    return need


def _shared_lengths(unique: Sequence[str]) -> list[int]:
    """For each of the sorted, distinct ``unique``, the most leading characters it shares with another."""
    # Sorted: the texts sharing the most leading characters with one are its neighbours.
    return [max((common_length(text, unique[near]) for near in (at - 1, at + 1) if 0 <= near < len(unique)), default=0)
            for at, text in enumerate(unique)]


def _id_cut(text: str, width: int) -> str:
    """An id (as stdout writes it) cut at its end to fit ``width`` cells, with a ``…``: its prefix."""
    if _cell_len(text) <= width:
        return text
    mark = stdout_text(_CUT)
    return "".join(_fitting(_SHOWN_CHAR.findall(text), width - _cell_len(mark))) + mark


def _left_out_order(columns: Sequence[str], cells: Sequence[Sequence[str]],
                    droppable: Sequence[str]) -> tuple[list[int], list[int]]:
    """The columns (by place) with no value in any row, and the order in which :func:`print_table`
    leaves columns out: those, then ``droppable``'s in its order."""
    empty = [at for at in range(len(columns))
             if cells and all(at >= len(row) or row[at] in NO_VALUE for row in cells)]
    return empty, [*empty, *(columns.index(c) for c in droppable if c in columns and columns.index(c) not in empty)]


def _layout(headers: Sequence[str], cells: Sequence[Sequence[str]], order: Sequence[int], width: int,
            state: Listing | None, *, form: _ShortForm | None = None, valued: int = 0) -> _Layout | None:
    """The first layout of :func:`print_table`'s order that fits ``width`` cells (the columns of
    ``order`` left out one by one), in the run's style (``state``: :data:`_RUN_STYLES`) when one
    of that style fits; None: none fits (one block per row). The table's short ``form``, if any,
    is tried after each layout that fails once the columns with no value (the first ``valued`` of
    ``order``) are left out: before a column that has a value is."""
    measured = _measure_columns(len(headers), cells)  # once: every layout tried reads it
    chosen = None if state is None else _RUN_STYLES.get(state)
    # One style per run: a table after the first takes the first one's style (boxed or compact)
    # whenever some layout of that style fits, leaving columns out for it as the first table would.
    for styles in ((True, False),) if chosen is None else ((chosen,), (not chosen,)):
        for squeezed, cut in ((False, False), (True, False), (True, True)):
            for drop in range(len(order) + 1):
                kept = [at for at in range(len(headers)) if at not in order[:drop]]
                for shape in (None, form) if form is not None and drop >= valued else (None,):
                    found = _fitting_layout(headers if shape is None else shape.headers, measured, kept, width,
                                            styles, squeezed=squeezed, cut=cut, form=shape)
                    if found is not None:
                        return found._replace(drop=drop)
    return None


def _fitting_layout(headers: Sequence[str], measured: Sequence[_Column], kept: list[int], width: int,
                    styles: Sequence[bool], *, squeezed: bool, cut: bool, form: _ShortForm | None) -> _Layout | None:
    """The layout of columns ``kept`` that fits ``width`` cells in one of ``styles``, each cell on
    one line or (``squeezed``) wrapped down to its words (``cut``: cut down to ``_WHOLE_WORD``),
    in a short ``form`` (its ids cut down to its floors, the compact style first); None: none."""
    shown_headers = [headers[at] for at in kept]
    shown_columns = [measured[at] for at in kept]
    floors = _floors(shown_headers, shown_columns, cut=cut)
    natural = _natural(shown_headers, shown_columns, floors)
    # A column is left out before a cell of up to _ROOMY cells is wrapped (a longer one wraps anyway).
    least = floors if squeezed else [max(floor, column.roomy) for floor, column in zip(floors, shown_columns)]
    for place, at in enumerate(kept):
        if form is not None and at in form.floors:
            natural[place] = least[place] = min(form.floors[at], natural[place])
    # Squeezed, the compact table leaves text the most room; a boxed table squeezed keeps a run's
    # boxed style (after its first table) before the other style is tried. A short form is there
    # to keep columns: the compact style, which leaves the most room, first.
    tries = ((least, True), (least, False)) if squeezed else (
        ((natural, True), (natural, False), (least, True), (least, False)) if form is not None else
        ((natural, False), (natural, True), (least, False), (least, True)))
    for needed, compact in tries:
        room = width - _overhead(len(kept), compact=compact)
        if compact in styles and sum(needed) <= room:
            return _Layout(kept, _widths(shown_headers, shown_columns, least, room),
                           [column.numeric for column in shown_columns], compact, 0, form is not None)
    return None


def rows_fit(columns: Sequence[str], rows: Iterable[Sequence[Any]], *, droppable: Sequence[str] = (),
             spare: Sequence[str] | None = None, wrapping: Sequence[str] = (), short: Mapping[str, str] | None = None,
             ids: Sequence[str] = ()) -> bool:
    """Whether :func:`print_table` (``columns``, ``rows``, ``droppable``, ``short``, ``ids``) would
    draw every row on one line on this terminal: the layout it picks (as it lays a table out:
    every header whole first, then its words, its columns narrowed widest first, in its short
    form before it leaves out a column with a value) leaves out no column but those with
    no value in any row and those of ``spare`` (default: all of ``droppable``), and gives every
    cell of each column it shows its whole width, but in those of ``spare`` (which could have
    gone) and ``wrapping`` (free text that may wrap). A command asks it before shortening session
    ids (:func:`short_ids`): a table that does not fit with whole ids shows them shortened before
    it wraps one or leaves out a column that says something.
    """
    headers = [stdout_text(terminal_text(column)) for column in columns]
    cells = [[stdout_text(table_cell(cell)) for cell in row] for row in rows]
    empty, order = _left_out_order(columns, cells, droppable)
    chosen = _layout(headers, cells, order, output_width(), current(),
                     form=_short_form(columns, headers, cells, short=short, ids=ids), valued=len(empty))
    if chosen is None:
        return False
    spared = set(droppable if spare is None else spare)
    if any(columns[at] not in spared for at in order[:chosen.drop] if at not in empty):
        return False
    return all(_cell_len(row[at]) <= width for at, width in zip(chosen.kept, chosen.widths)
               if columns[at] not in spared and columns[at] not in wrapping for row in cells if at < len(row))


def _narrow_note(empty: Sequence[str], dropped: Sequence[str]) -> str | None:
    """The caption naming the columns a narrow terminal left out, those with no value first."""
    names = ([f"{', '.join(empty)} (no values)"] if empty else []) + list(dropped)
    return f"narrow terminal: {', '.join(names)} not shown (widen it, or use --json)" if names else None


def _csv_cell(text: str) -> str:
    """A text cell as CSV shows it: a text a spreadsheet would read as a formula (``=``, ``+``,
    ``-``, ``@`` first) gets a leading apostrophe; a number (``-5``, ``+12%``) stays a number. Money
    is never read from text (a title that reads ``$5`` stays text): a command hands it over as an
    :class:`Amount`, which CSV writes exact.

    Example:
        >>> [_csv_cell(t) for t in ("$0.0111", "=SUM(A1)", "-5")]
        ['$0.0111', "'=SUM(A1)", '-5']
    """
    return "'" + text if text.startswith(_FORMULA_START) and not _is_number(text) else text


def _write_csv(state: Listing, title: str, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """One table as RFC 4180 CSV on stdout: a header row, then every row with every column, each
    row led by a ``table`` column holding the table's title (which session, which measure: a
    command may print several tables); a blank line before the second table of a run and each
    one after. An :class:`Amount` is its exact value (:attr:`Amount.csv`), any other cell its
    text (:func:`table_cell`, :func:`_csv_cell`)."""
    out = io.StringIO()
    if state.tables:
        out.write("\r\n")
    writer = csv.writer(out, lineterminator="\r\n")
    named = _csv_cell(title)
    writer.writerow(["table", *(_csv_cell(h) for h in headers)])
    writer.writerows([named, *(cell.csv if isinstance(cell, Amount) else _csv_cell(table_cell(cell))
                               for cell in row)] for row in rows)
    state.tables += 1
    sys.stdout.write(out.getvalue())
    sys.stdout.flush()


def _write_markdown(state: Listing, title: str, headers: Sequence[str], cells: Sequence[Sequence[str]],
                    caption: str | None) -> None:
    """One table as Markdown on stdout: a ``###`` heading, a GitHub pipe table (numbers
    right-aligned) and the caption as a paragraph; every text escaped (:func:`markdown_text`)."""
    numeric = [_numeric([row[at] for row in cells if at < len(row)]) for at in range(len(headers))]

    def line(texts: Sequence[str]) -> str:
        return "| " + " | ".join(texts) + " |"

    lines = [""] if state.written or state.tables else []
    lines += [f"### {markdown_text(title)}", "", line([_markdown_inline(h) for h in headers]),
              line(["---:" if number else "---" for number in numeric])]
    lines += [line([_markdown_inline(row[at]) if at < len(row) else "" for at in range(len(headers))]) for row in cells]
    if caption is not None:
        lines += ["", markdown_text(caption)]
    state.tables += 1
    state.written = True
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()


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


class _Column(NamedTuple):
    """What laying out a table needs to know of one column's cells (:func:`_measure_columns`)."""

    numeric: bool  # a column of numbers (:func:`_numeric`)
    widest: int  # its widest cell (0: no cell)
    roomy: int  # its widest cell of at most _ROOMY cells (0: none)
    longest_word: int  # its longest word (:data:`_TABLE_WORD`; 1: no word)
    longest_id: int  # its longest word that is not a path (:data:`_PATH_WORD`), of at most _WHOLE_ID cells (0: none)


def _measure_columns(count: int, cells: Sequence[Sequence[str]]) -> list[_Column]:
    """Each of ``count`` columns of ``cells`` measured, each cell and word once, for every layout
    :func:`print_table` tries (a row may have fewer cells than columns)."""
    columns: list[_Column] = []
    for at in range(count):
        texts = [row[at] for row in cells if at < len(row)]
        sizes = [_cell_len(text) for text in texts]
        words = [word for text in texts for word in _TABLE_WORD.findall(text)]
        word_sizes = [_cell_len(word) for word in words]
        columns.append(_Column(
            numeric=_numeric(texts), widest=max(sizes, default=0),
            roomy=max((size for size in sizes if size <= _ROOMY), default=0),
            longest_word=max(word_sizes, default=1),
            longest_id=max((size for word, size in zip(words, word_sizes)
                            if size <= _WHOLE_ID and not _PATH_WORD.search(word)), default=0)))
    return columns


def _cell_len(text: str) -> int:
    """``rich.cells.cell_len(text)``, at once for printable ASCII (one cell a character: rich's
    ``_SINGLE_CELL_UNICODE_RANGES`` start with U+0020 to U+007E)."""
    from rich.cells import cell_len

    return len(text) if text.isascii() and text.isprintable() else cell_len(text)


def _floors(headers: Sequence[str], columns: Sequence[_Column], *, cut: bool = False) -> list[int]:
    """Each column's narrowest width: its widest number, or its longest word up to ``_WHOLE_WORD``
    (a date and time is one word; one that is not a path (:data:`_PATH_WORD`), such as a session
    id or a model name, counts whole up to ``_WHOLE_ID``, unless ``cut``: then it may be cut in its
    middle down to ``_WHOLE_WORD`` too), and its header's longest piece."""
    floors: list[int] = []
    for header, column in zip(headers, columns):
        longest_id = 0 if cut else column.longest_id
        floor = column.longest_word if column.numeric else max(min(column.longest_word, _WHOLE_WORD), longest_id)
        floors.append(max([1, floor, *(_cell_len(piece) for _, piece in _header_pieces(header))]))
    return floors


def _natural(headers: Sequence[str], columns: Sequence[_Column], floors: Sequence[int]) -> list[int]:
    """Each column's width with every cell on one line and its header's words whole."""
    return [max([floors[at], *(_cell_len(w) for w in header.split()), column.widest])
            for at, (header, column) in enumerate(zip(headers, columns))]


def _numeric(shown: Sequence[str]) -> bool:
    """Whether a column holds numbers: each cell one or none, and one at least, or ``?`` (a number not known)."""
    return any(text not in NO_VALUE or text == "?" for text in shown) and all(_is_number(text) for text in shown)


def _widths(headers: Sequence[str], columns: Sequence[_Column], floors: Sequence[int], room: int) -> list[int]:
    """Column widths that fit ``room`` cells of text, narrowing the widest column first: first down
    to what keeps its header's words on one line and every word of its cells whole, then down to
    the latter, then down to its floor (:func:`_floors`, or wider: see :func:`print_table`; a
    floor that cuts long words in their middle cuts them only as far as the room needs)."""
    widths: list[int] = []
    titled: list[int] = []
    whole = [max(floor, uncut) for floor, uncut in zip(floors, _floors(headers, columns))]
    for at, (header, column) in enumerate(zip(headers, columns)):
        titled.append(max([whole[at], *(_cell_len(w) for w in header.split())]))
        widths.append(max([_cell_len(header), column.widest, floors[at]]))
    for floor_of in (titled, whole, floors):
        while sum(widths) > room:
            slack = [(widths[at] - floor_of[at], at) for at in range(len(widths)) if widths[at] > floor_of[at]]
            if not slack:
                break
            widths[max(slack)[1]] -= 1
    return widths


def _draw_table(console: Console, title: str, headers: Sequence[str], cells: Sequence[Sequence[str]],
                numeric: Sequence[bool], widths: Sequence[int], captions: Sequence[str], *, compact: bool) -> None:
    """A table (boxed, or ``compact``: no borders) with the given column widths; ``captions`` are
    lines under it.

    The same text as :func:`_draw_table_rich`, byte for byte, written faster when rich would
    wrap, fold, crop and style nothing in its rows (:func:`_plain_rows`): rich draws the table's
    frame (its top border, header, header rule, bottom border and captions, styled as on a
    terminal) as a table of no rows, and the rows are written between, as rich writes them. Else
    rich draws it all.
    """
    body = _plain_rows(console, cells, numeric, widths, compact=compact)
    if body is None or len(headers) != len(widths):
        _draw_table_rich(console, title, headers, cells, numeric, widths, captions, compact=compact)
        return
    # A table of no rows is the table's top (down to its header rule), then its bottom border (none
    # when compact) and its captions: its rows go between the two, and change neither. The widths
    # of its columns are fixed and fit (rich.table.Table._measure_column, _calculate_column_widths),
    # a row is drawn from its own cells (Table._render), the captions after the table
    # (Table.__rich_console__) at its width.
    frame = _captured(console, _table_frame(headers, numeric, widths, (), compact=compact))
    top = frame if compact else frame[:frame.rindex("\n", 0, len(frame) - 1) + 1]  # all but the bottom border
    if captions:
        frame = _captured(console, _table_frame(headers, numeric, widths, captions, compact=compact))
    if not frame.startswith(top):  # never (see above): rich draws it all
        _draw_table_rich(console, title, headers, cells, numeric, widths, captions, compact=compact)
        return
    _print_heading(console, title)
    _write(console, [top, *body, frame[len(top):]])


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

    table = _table_frame(headers, numeric, widths, captions, compact=compact)
    for row in cells:
        table.add_row(*(Text(text if number else _cell_text(text, width))
                        for text, width, number in zip(row, widths, numeric)))
    _print_heading(console, title)
    console.print(table)


def _table_frame(headers: Sequence[str], numeric: Sequence[bool], widths: Sequence[int], captions: Sequence[str],
                 *, compact: bool) -> Table:
    """The rich table of :func:`_draw_table`, its columns and captions, with no rows yet."""
    from rich import box
    from rich.table import Table
    from rich.text import Text

    style: dict[str, Any] = dict(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                                 collapse_padding=True) if compact else {}
    table = Table(caption=Text("\n").join(map(_heading, captions)) if captions else None,
                  caption_justify="left", **style)
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
            size = _cell_len(text)
            parts = [text] if size <= width or number else _cell_text(text, width).split("\n")
            cell: list[str] = []
            for part in parts:
                if part is not text:
                    size = _cell_len(part)
                if size > width or not part.isprintable() or "\ufe0f" in part:
                    return None
                if number:  # justify="right"
                    part = part.rstrip()
                    part = " " * (width - _cell_len(part)) + part
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
                  caption: str | None) -> None:
    """The narrowest layout: one block of ``column  value`` lines per row, blocks apart by a blank line."""
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
        for header, text in zip(headers, row):
            grid.add_row(Text(header), Text(_cell_text(text, value_width)))
    _print_heading(console, title)
    console.print(grid)
    if caption is not None:
        console.print(_heading(caption))


def output_width() -> int:
    """The width stdout's lines must fit: the terminal's, or ``COLUMNS`` (else 200) when piped, at
    least ``_FLOOR_WIDTH`` (40)."""
    return stdout_console().width


def middle_cut(text: str, width: int) -> str:
    """``text`` if it fits ``width`` cells, else its start and end around a ``…`` (a long path);
    shown as stdout can write it (:func:`stdout_text`), an escape never cut.

    Example:
        >>> middle_cut("/home/me/sessions/session-1/session.jsonl", 24)
        '/home/me/se…ession.jsonl'
    """
    return _cut(text, width, keep_end=True)


def _cut(text: str, width: int, *, keep_end: bool) -> str:
    """``text`` if it fits ``width`` cells, else its start (and, ``keep_end``, its end) around a
    ``…``: :func:`middle_cut` keeps a path's file name; cut at its end, an id keeps its prefix
    whole (its end no command takes). Shown as stdout can write it, an escape never cut.

    Example:
        >>> _cut("session-70444d8d-ee1d-43e9-8341-470b57f1019c", 20, keep_end=False)
        'session-70444d8d-ee…'
    """
    from rich.cells import cell_len, set_cell_size

    shown, cut = stdout_text(text), stdout_text(_CUT)
    if cell_len(shown) <= width:
        return shown
    room = max(width - cell_len(cut), 0)
    head, tail = (room // 2, room - room // 2) if keep_end else (room, 0)
    if shown == text and cut == _CUT:
        return set_cell_size(text, head) + _CUT + (_tail(text, tail) if tail else "")
    pieces = [stdout_text(char) for char in text]  # each character, or its escape: cut between them
    return "".join(_fitting(pieces, head)) + cut + "".join(reversed(_fitting(pieces[::-1], tail)))


def _fitting(pieces: Sequence[str], width: int) -> list[str]:
    """The first of ``pieces`` that fit ``width`` cells together."""
    from rich.cells import cell_len

    kept: list[str] = []
    used = 0
    for piece in pieces:
        used += cell_len(piece)
        if used > width:
            break
        kept.append(piece)
    return kept


def _tail(text: str, width: int) -> str:
    """The end of ``text`` that fits ``width`` cells."""
    from rich.cells import cell_len

    at = len(text)
    while at > 0 and cell_len(text[at - 1:]) <= width:
        at -= 1
    return text[at:]


def fit_lines(text: str, width: int | None = None, *, hanging: int = 2) -> list[str]:
    """``text``'s lines, each shown with :func:`terminal_text` (and as stdout can write it:
    :func:`stdout_text`) and wrapped at spaces to ``width`` (default :func:`output_width`), a
    wrapped line's rest indented ``hanging`` past its first line.

    A word longer than a line folds, after a ``,`` or ``/`` when it has one (JSON, a path),
    starting where the line's other words end.

    Example:
        >>> fit_lines("  tokens lost: header_change 11968; cost lost $0.0076", 30)
        ['  tokens lost: header_change', '    11968; cost lost $0.0076']
    """
    from rich.cells import cell_len

    room = output_width() if width is None else width
    lines: list[str] = []
    for raw in text.removesuffix("\n").split("\n") if text else ():
        line = stdout_text(terminal_text(raw))
        body = line.lstrip(" ")
        indent = line[:len(line) - len(body)]
        if cell_len(line) <= room or not body:
            lines.append(line)
            continue
        rest = indent + " " * hanging if cell_len(indent) + hanging <= room // 2 else ""
        current = indent
        for at, piece in enumerate(re.findall(r" *[^ ]+", body)):
            word = piece.lstrip(" ")
            # A word that fits a line of its own starts one; a longer one (JSON) folds from here,
            # when its first part (up to a "," or "/") fits here.
            head = re.match(r"[^,/]*[,/]?", piece)
            if at and cell_len(current + piece) > room and (
                    cell_len(rest + word) <= room or cell_len(current + (head[0] if head else piece)) > room):
                lines.append(current)
                current, piece = rest, word
            # At the start of a line: fold the word, looking at no more of it than a line can
            # show (a 1 MB word folds in linear time, not by re-measuring and copying its rest).
            window, at_char = 2 * room + 16, 0
            while True:
                head = piece[at_char:at_char + window]
                if at_char + window >= len(piece) and cell_len(current + head) <= room:
                    break
                cut = _fold_at(head, room - cell_len(current)) if cell_len(current + head) > room else len(head)
                lines.append(current + head[:cut])
                current, at_char = rest, at_char + cut
            current += piece[at_char:]
        lines.append(current)
    return lines


def _fold_at(word: str, room: int) -> int:
    """Where to cut ``word`` to fit ``room`` cells: after its last ``,`` or ``/`` that fits, else its
    last ``.``, ``-`` or ``_``, else at the room."""
    from rich.cells import cell_len

    low, high = 0, len(word)  # the longest prefix of at most room cells (prefix widths only grow)
    while low < high:
        middle = (low + high + 1) // 2
        if cell_len(word[:middle]) <= room:
            low = middle
        else:
            high = middle - 1
    fits = max(low, 1)
    for group in _FOLD_AFTER:
        soft = max(word.rfind(ch, 0, fits) for ch in group) + 1
        if soft > 0:
            return soft
    return fits


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


def _bar(*, in_bytes: bool = False) -> Progress:
    """A transient progress bar on stderr: label, bar, done/total (``in_bytes``: percentage and
    bytes), elapsed time.

    What the command writes to stdout meanwhile goes around the bar when stdout is the terminal
    too, and straight to stdout when it is a pipe or a file (rich would draw it on stderr).
    """
    from rich.progress import (BarColumn, DownloadColumn, MofNCompleteColumn, Progress, ProgressColumn,
                               TaskProgressColumn, TextColumn, TimeElapsedColumn)

    done: list[ProgressColumn] = [TaskProgressColumn(), DownloadColumn()] if in_bytes else [MofNCompleteColumn()]
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

    def __init__(self, label: str, delay: float) -> None:
        self.label = label
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
        bar = _bar(in_bytes=True)
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
def progress_callback(total: int, *, label: str) -> Iterator[Callable[[int, int], None] | None]:
    """A ``report(done, total)`` callback drawing a bar on an interactive stderr; None otherwise.

    For :func:`dsh_audit.runner.iter_many`, which reports bytes of the logs (``done`` of
    ``total``), also while one long log is read. The bar shows the label, the percentage, the
    bytes done and in all, and the time elapsed. It appears only once the work has lasted
    ``DSH_AUDIT_PROGRESS_DELAY`` seconds (default 1), so that a quick run draws nothing, and it
    is cleared when the block ends, however it ends.

    Args:
        total: the units of work; with none, no bar.
        label: what the bar says it is doing.

    Raises:
        UsageError: a bad ``DSH_AUDIT_PROGRESS_DELAY`` (only read when stderr is a terminal).
    """
    if total < 1 or not sys.stderr.isatty() or paging():
        yield None
        return
    delayed = _DelayedBar(label, _progress_delay())
    delayed.open()
    try:
        with live(delayed.close):
            yield delayed.report
    finally:
        delayed.close()


def short_ids(ids: Iterable[str]) -> dict[str, str]:
    """Each id holding a UUID cut to the shortest prefix no other of ``ids`` starts with, in whole
    groups of the UUID, at least its first (`show`, `explain` and `render` accept a unique prefix);
    other ids whole.

    Example:
        >>> ids = ["session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd", "session-86ef2d28-6e7b-43ae-ad66-0aa63a88c3dd",
        ...        "402a1ae8-7f85-40fc-b7cf-82cfc177dcd7", "session-sample-chat"]
        >>> [short_ids(ids)[i] for i in ids]
        ['session-86ef2d28-6e7a', 'session-86ef2d28-6e7b', '402a1ae8', 'session-sample-chat']
    """
    unique = sorted(set(ids))
    short: dict[str, str] = {}
    for whole, shared in zip(unique, _shared_lengths(unique)):
        found = _UUID.search(whole)
        if found is None:
            short[whole] = whole
            continue
        length = max(found.start() + 8, shared + 1)
        end = whole.find("-", length - 1)  # to the end of the UUID's group it cut into
        short[whole] = whole if end < 0 or end >= found.end() else whole[:max(end, length)]
    return short
