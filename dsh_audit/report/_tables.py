"""A table fitted to the terminal: :func:`print_table` lays it out (which columns, how wide, boxed
or compact, in its short form or not) and :func:`rows_fit` says whether that layout keeps every row
on one line."""

from __future__ import annotations

import re
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from ._cells import NO_VALUE, _PATH_WORD, _TABLE_WORD, _numeric, _write_csv, _write_markdown, table_cell
from ._console import _start_pager, output_width, stdout_console
from ._fit_text import _CUT, _UUID, _cell_len, _fitting, _shared_lengths
from ._listing import Listing, current
from ._safe_text import stdout_text, terminal_text
from ._table_draw import _draw_records, _draw_table, _overhead

__all__ = ["About", "print_table", "rows_fit"]

# A path up to this long is never cut in a table; a longer one is cut in its middle (``…``) to fit.
_WHOLE_WORD = 24
# A column whose cells are all this short is not wrapped while leaving out a column can avoid it.
_ROOMY = 24

# What may stand around a path in a cell, as ``(sample_logs/tools/session.jsonl)`` beside an id: the
# word is still a path (cut in its middle to fit), never an id kept whole.
_BRACKETS = "()[]<>"

# A word that is not a path (a session id, a model name, a number) is kept whole in a table up to
# this length; a longer one is cut in its middle (``…``) to fit, never folded.
_WHOLE_ID = 64

#: The style of a run's first table, boxed (False) or compact (True), by its listing
#: (:func:`print_table`: the run's other tables take it).
_RUN_STYLES: weakref.WeakKeyDictionary[Listing, bool] = weakref.WeakKeyDictionary()


def print_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
                caption: str | None = None, droppable: Sequence[str] = (), short: Mapping[str, str] | None = None,
                ids: Sequence[str] = (), least: Mapping[str, int] | None = None,
                about: About | None = None, legend: str | None = None) -> None:
    """A table on stdout; every title, caption and cell is shown with :func:`table_cell`, no markup.

    Every line fits the terminal (piped output: ``COLUMNS``, else 200 columns; a terminal narrower
    than 40 columns gets lines of 40, which it wraps: :func:`output_width`), and no number or
    word is ever split over lines: a column of numbers (``13,613,605``, ``~146``, ``12.5%``,
    ``$0.0042``, ``-``) is right-aligned and at least as wide as its widest number, a text column
    at least as wide as its longest word (a path: up to ``_WHOLE_WORD`` characters; any other
    word, such as a session id or a model name, up to ``_WHOLE_ID``), and a header wraps only at
    a space, never inside a word (``turn/step/attempt`` stays whole: a layout that splits it is no
    layout); a date and time (``2027-01-15 08:00``) stays on one line. A
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
    layout above that fails, before it leaves out a column that has a value, and before a header
    of the long form wraps (each layout is tried first with every header on one line, then in
    the short form, then with headers wrapped between their words): its headers
    shortened and its ids cut at their end, no further than to each one's shortest unique prefix
    among the column's (of 16 characters at least, and through a UUID's first group, as
    :func:`short_ids` shows one) and a ``…`` (a prefix `show` and `explain` take), and only as far
    as the room needs. ``legend``: a caption said when the short form is drawn, what its
    shortened headers mean (``t/s/a: turn/step/attempt``).

    ``least``: the narrowest width of some columns (``{"title": 20}``), or of their widest cell when
    that is narrower: columns are left out before one of them is narrower, so that free text wraps
    between a few words, never a word a line (when no layout keeps it so: as narrow as it must).

    Inside :func:`listing` with ``csv`` or ``markdown``, the table is written in that format
    instead, every column kept (:func:`_write_csv`, :func:`_write_markdown`). A table ``about``
    one session log is written to CSV with its ``log`` path and its ``session`` id in columns of
    their own, after the ``table`` column (which then holds :attr:`About.table`, never the path
    nor the id), as `check` writes them.
    """
    given = [list(row) for row in rows]
    cells = [[table_cell(cell) for cell in row] for row in given]
    headers = [terminal_text(column) for column in columns]
    state = current()
    if state is not None and state.format == "csv":
        if about is not None:
            _write_csv(state, about.table, ["log", "session", *headers],
                       [[about.log, about.session, *row] for row in given])
        else:
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
    chosen = _layout(headers, cells, order, console.width, state, form=form, valued=len(empty),
                     least=_by_place(columns, least))
    if chosen is not None:
        note = _narrow_note([headers[at] for at in order[:chosen.drop] if at in empty],
                            [headers[at] for at in order[:chosen.drop] if at not in empty])
        shown = form.headers if chosen.short and form is not None else headers
        cut = form.floors if chosen.short and form is not None else {}
        _draw_table(console, title, [shown[at] for at in chosen.kept],
                    [[_id_cut(row[at], width) if at in cut else row[at]
                      for at, width in zip(chosen.kept, chosen.widths) if at < len(row)] for row in cells],
                    chosen.numeric, chosen.widths,
                    [text for text in (caption, legend if chosen.short else None, note) if text is not None],
                    compact=chosen.compact)
        if state is not None:
            _RUN_STYLES.setdefault(state, chosen.compact)
        return
    _draw_records(console, title, headers, cells, caption)


class About(NamedTuple):
    """The session log a table lists (:func:`print_table`'s ``about``): in CSV, its ``log`` and
    ``session`` columns; ``table`` names the table in the ``table`` column instead (``requests``)."""

    log: str  # the log's path ("" when the table is about no log, as diff's captures no request explains)
    session: str  # its session id ("" likewise)
    table: str  # the table's name in CSV, which tells it from a run's other tables


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
    need = max([1, *_header_words(header)])
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


def _by_place(columns: Sequence[str], least: Mapping[str, int] | None) -> dict[int, int]:
    """:func:`print_table`'s ``least``, by the place of each column it names."""
    return {at: least[name] for at, name in enumerate(columns) if least and name in least}


def _layout(headers: Sequence[str], cells: Sequence[Sequence[str]], order: Sequence[int], width: int,
            state: Listing | None, *, form: _ShortForm | None = None, valued: int = 0,
            least: Mapping[int, int] | None = None) -> _Layout | None:
    """The first layout of :func:`print_table`'s order that fits ``width`` cells (the columns of
    ``order`` left out one by one), in the run's style (``state``: :data:`_RUN_STYLES`) when one
    of that style fits; None: none fits (one block per row). The table's short ``form``, if any,
    is tried after each layout that fails once the columns with no value (the first ``valued`` of
    ``order``) are left out: before a column that has a value is."""
    measured = _measure_columns(len(headers), cells)  # once: every layout tried reads it
    if least:  # the columns' narrowest widths (print_table), else, when no layout keeps them, without
        held = [column._replace(least=min(least.get(at, 0), column.widest)) for at, column in enumerate(measured)]
        return _first_layout(headers, held, order, width, state, form=form, valued=valued) or \
            _first_layout(headers, measured, order, width, state, form=form, valued=valued)
    return _first_layout(headers, measured, order, width, state, form=form, valued=valued)


def _first_layout(headers: Sequence[str], measured: Sequence[_Column], order: Sequence[int], width: int,
                  state: Listing | None, *, form: _ShortForm | None, valued: int) -> _Layout | None:
    """:func:`_layout` of columns ``measured``."""
    chosen = None if state is None else _RUN_STYLES.get(state)
    # One style per run: a table after the first takes the first one's style (boxed or compact)
    # whenever some layout of that style fits, leaving columns out for it as the first table would.
    for styles in ((True, False),) if chosen is None else ((chosen,), (not chosen,)):
        for squeezed, cut in ((False, False), (True, False), (True, True)):
            for drop in range(len(order) + 1):
                kept = [at for at in range(len(headers)) if at not in order[:drop]]
                for shape, whole in _shapes(form if drop >= valued else None):
                    found = _fitting_layout(headers if shape is None else shape.headers, measured, kept, width,
                                            styles, squeezed=squeezed, cut=cut, form=shape, whole=whole)
                    if found is not None:
                        return found._replace(drop=drop)
    return None


def _shapes(form: _ShortForm | None) -> tuple[tuple[_ShortForm | None, bool], ...]:
    """The forms :func:`_first_layout` tries a table's columns in, each with whether its headers must
    stay on one line: a table with a short ``form`` is drawn in it before a header of its own wraps
    (``turn/step/attempt`` becomes ``t/s/a`` before ``cache read`` wraps), then with headers wrapped."""
    return ((None, False),) if form is None else ((None, True), (form, False), (None, False))


def _fitting_layout(headers: Sequence[str], measured: Sequence[_Column], kept: list[int], width: int,
                    styles: Sequence[bool], *, squeezed: bool, cut: bool, form: _ShortForm | None,
                    whole: bool = False) -> _Layout | None:
    """The layout of columns ``kept`` that fits ``width`` cells in one of ``styles``, each cell on
    one line or (``squeezed``) wrapped down to its words (``cut``: cut down to ``_WHOLE_WORD``),
    in a short ``form`` (its ids cut down to its floors, the compact style first), each header on
    one line when ``whole``; None: none."""
    shown_headers = [headers[at] for at in kept]
    shown_columns = [measured[at] for at in kept]
    floors = _floors(shown_headers, shown_columns, cut=cut)
    if whole:
        floors = [max(floor, _cell_len(header)) for floor, header in zip(floors, shown_headers)]
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


class _Column(NamedTuple):
    """What laying out a table needs to know of one column's cells (:func:`_measure_columns`)."""

    numeric: bool  # a column of numbers (:func:`_numeric`)
    widest: int  # its widest cell (0: no cell)
    roomy: int  # its widest cell of at most _ROOMY cells (0: none)
    longest_word: int  # its longest word (:data:`_TABLE_WORD`; 1: no word)
    longest_id: int  # its longest word that is not a path (:data:`_PATH_WORD`), of at most _WHOLE_ID cells (0: none)
    least: int = 0  # the narrowest width print_table's ``least`` gives it (0: none)


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
                            if size <= _WHOLE_ID and not _PATH_WORD.search(word.strip(_BRACKETS))), default=0)))
    return columns


def _floors(headers: Sequence[str], columns: Sequence[_Column], *, cut: bool = False) -> list[int]:
    """Each column's narrowest width: its widest number, or its longest word up to ``_WHOLE_WORD``
    (a date and time is one word; one that is not a path (:data:`_PATH_WORD`), such as a session
    id or a model name, counts whole up to ``_WHOLE_ID``, unless ``cut``: then it may be cut in its
    middle down to ``_WHOLE_WORD`` too), and its header's longest piece."""
    floors: list[int] = []
    for header, column in zip(headers, columns):
        longest_id = 0 if cut else column.longest_id
        floor = column.longest_word if column.numeric else max(min(column.longest_word, _WHOLE_WORD), longest_id)
        floors.append(max([1, floor, column.least, *_header_words(header)]))
    return floors


def _header_words(header: str) -> list[int]:
    """The width of each word of a column's header: a header wraps between its words, never inside
    one (``turn/step/attempt`` stays whole; a column is left out, or others wrap, before it splits)."""
    return [_cell_len(word) for word in header.split()]


def _natural(headers: Sequence[str], columns: Sequence[_Column], floors: Sequence[int]) -> list[int]:
    """Each column's width with every cell on one line and its header's words whole."""
    return [max([floors[at], *(_cell_len(w) for w in header.split()), column.widest])
            for at, (header, column) in enumerate(zip(headers, columns))]


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
