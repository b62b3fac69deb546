"""A table fitted to the terminal: :func:`print_table` lays it out (which columns, how wide, boxed
or compact, in its short form or not) and :func:`rows_fit` says whether that layout keeps every row
on one line."""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from ._cells import NO_VALUE, _PATH_WORD, _TABLE_WORD, _numeric, _write_csv, _write_markdown, table_cell
from ._console import _start_pager, output_width, stdout_console
from ._fit_text import cell_len
from ._listing import Listing, current
from ._safe_text import stdout_text, terminal_text
from ._table_draw import _draw_records, _draw_table, _overhead, _print_captions
from ._table_words import ShortForm, header_words, narrow_note, own_headers, short_form, with_words

__all__ = ["BOXED_FROM", "About", "print_table", "rows_fit", "short_needed"]

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

#: The one rule of a table's style, the same for every command: a terminal (or ``COLUMNS``) this
#: wide or wider draws a table boxed when the boxes cost it no column and no wrapped cell, else
#: compact; a narrower one draws it compact (rule-only, which leaves text the most room).
BOXED_FROM = 100

#: The style of a run's first table, boxed (False) or compact (True), by its listing
#: (:func:`print_table`: the run's other tables take it).
_RUN_STYLES: weakref.WeakKeyDictionary[Listing, bool] = weakref.WeakKeyDictionary()


def print_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
                caption: str | None = None, droppable: Sequence[str] = (), short: Mapping[str, str] | None = None,
                least: Mapping[str, int] | None = None, about: About | None = None, legend: str | None = None, short_first: bool = False,
                in_short: bool | None = None, ids: Sequence[str] = (), wrap_last: bool = False) -> None:
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
    drawn: with all the columns, then with one left out, and so on, with every cell on one line,
    then with only cells longer than ``_ROOMY`` wrapped; failing all that, with text wrapped down
    to its longest words, with as few columns left out as that needs; then so with words longer
    than ``_WHOLE_WORD`` cut; else one block of ``column value`` lines per row, every column kept.
    One rule of style for every command (:data:`BOXED_FROM`): on a terminal narrower than 100
    columns, the borderless compact table (boxed only when no compact layout fits at all); from
    100 columns, each layout above is tried boxed, then compact: boxed whenever the boxes cost no
    column and no wrapped cell. Inside :func:`listing`, a run's tables share the style of its first.

    A table with a short form (``short``: a shorter header for some columns, as ``sessions`` says
    ``reqs`` for ``requests``) tries it after each layout above that fails, before it leaves out
    a column that has a value, and before a header of the long form wraps (each layout is tried
    first with every header on one line, then in the short form, then with headers wrapped
    between their words). ``legend``: a caption said when the short form is drawn, what its
    shortened headers mean (``t/s/a: turn/step/attempt``). With ``short_first``, the short
    headers are the table's own (it is laid out as a table whose headers they are), and each
    column then shows its own words where the layout has room for them beside every other
    column's width (:func:`with_words`: ``sessions`` says ``requests`` where it has the room).

    ``in_short``: True, the table is laid out in its short form only; False, never in it (a command
    that prints several tables chooses once for them all, by :func:`short_needed`, so that a run
    never switches between ``turn/step/attempt`` and ``t/s/a``).

    ``least``: the narrowest width of some columns (``{"title": 20}``), or of their widest cell when
    that is narrower: columns are left out before one of them is narrower, so that free text wraps
    between a few words, never a word a line (when no layout keeps it so: as narrow as it must).

    ``wrap_last``: every column of the order of leaving out is left out before a cell wraps (and,
    in a block of lines a row, too), where a table otherwise keeps a column that wrapping its text
    makes room for: a narrower terminal then never shows a column a wider one left out (`cache`'s
    timeline: the caption naming them stays true from one width to the next).

    ``ids``: the columns of session ids (``session``), never cut: a cut id names no session, or
    another (`show` refuses it). Such a column is as wide as its longest word in every layout
    (columns are left out for it), and in a block of lines a row its id is wrapped whole, after
    a ``-`` (:func:`fit_lines`), never cut.

    Inside :func:`listing` with ``csv`` or ``markdown``, the table is written in that format
    instead, every column kept (:func:`_write_csv`, :func:`_write_markdown`). A table ``about``
    one session log is written to CSV with its ``log`` path and its ``session`` id in columns of
    their own, after the ``table`` column (which then holds :attr:`About.table`, never the path
    nor the id), as `check` writes them.
    """
    known = _MEASURED.pop(id(rows), None)
    if known is not None and known[0] is not rows:
        known = None
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
    cells = known[1] if known is not None else [[stdout_text(text) for text in row] for row in cells]
    words = [stdout_text(header) for header in headers]  # each column's own
    headers, short = own_headers(columns, words, short, short_first=short_first)
    console = stdout_console()
    empty, order = _left_out_order(columns, cells, droppable)
    form = short_form(columns, headers, short=short)
    chosen = _layout(headers, cells, order, console.width, state, form=form, valued=len(empty),
                     least=_by_place(columns, least), in_short=in_short,
                     measured=known[2] if known is not None else None, ids=_by_place(columns, dict.fromkeys(ids, 1)),
                     wrap_last=wrap_last)
    if chosen is not None:
        shown, widths = form.headers if chosen.short and form is not None else headers, chosen.widths
        if short_first:
            shown, widths = with_words(shown, words, chosen.kept, widths, compact=chosen.compact, width=console.width)
        # a caption is wrapped at the terminal's width (_print_captions)
        note = narrow_note(words, order[:chosen.drop], empty, width=console.width,
                           short=headers if short_first else None)
        _draw_table(console, title, [shown[at] for at in chosen.kept],
                    [[row[at] for at in chosen.kept if at < len(row)] for row in cells],
                    chosen.numeric, widths,
                    [text for text in (caption, legend if chosen.short else None, note) if text is not None],
                    compact=chosen.compact)
        if state is not None:
            _RUN_STYLES.setdefault(state, chosen.compact)
        return
    # wrap_last: the columns a wider layout left out stay out, and its captions are wrapped as a table's
    kept = [at for at in range(len(columns)) if not wrap_last or at not in order]
    _draw_records(console, title, [words[at] for at in kept],
                  [[row[at] for at in kept if at < len(row)] for row in cells], None if wrap_last else caption,
                  whole=[columns[at] in ids for at in kept])
    if wrap_last:
        note = narrow_note(words, order, empty, width=console.width)
        _print_captions(console, [text for text in (caption, note) if text is not None])


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
    short: bool = False  # in the table's short form (:class:`ShortForm`)


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
            state: Listing | None, *, form: ShortForm | None = None, valued: int = 0,
            least: Mapping[int, int] | None = None, in_short: bool | None = None,
            measured: list[_Column] | None = None, ids: Mapping[int, int] | None = None,
            wrap_last: bool = False) -> _Layout | None:
    """The first layout of :func:`print_table`'s order that fits ``width`` cells (the columns of
    ``order`` left out one by one), in the run's style (``state``: :data:`_RUN_STYLES`) when one
    of that style fits; None: none fits (one block per row). The table's short ``form``, if any,
    is tried after each layout that fails once the columns with no value (the first ``valued`` of
    ``order``) are left out: before a column that has a value is. ``wrap_last``: a cell wraps
    only once every column of ``order`` is left out, and so does a ``least`` column (print_table's)."""
    if measured is None:  # once: every layout tried reads it (short_needed's, when it measured these cells)
        measured = _measure_columns(len(headers), cells)
    if ids:  # a column of session ids: its longest word whole in every layout, however long (print_table's ``ids``)
        measured = [column._replace(whole=True, longest_id=_longest_id(cells, at)) if at in ids else column
                    for at, column in enumerate(measured)]
    tried = [measured]
    if least:  # the columns' narrowest widths (print_table), else, when no layout keeps them, without
        tried.insert(0, [column._replace(least=min(least.get(at, 0), column.widest))
                         for at, column in enumerate(measured)])
    chosen = None if state is None else _RUN_STYLES.get(state)
    # One style per run: a table after the first takes the first one's style (boxed or compact)
    # whenever some layout of that style fits, leaving columns out for it as the first table would.
    # The first: compact below BOXED_FROM columns; from it, boxed where a layout fits boxed, each
    # layout tried boxed, then compact before a column is left out or a cell wraps for the boxes.
    passes: tuple[tuple[bool, ...], ...] = (
        ((chosen,), (not chosen,)) if chosen is not None else
        ((True,), (False,)) if width < BOXED_FROM else ((False, True),))
    # A column's least width (a path kept whole) before the style: the other style before a path is cut.
    for at, columns in enumerate(tried):
        for styles in passes:
            found = _first_layout(headers, columns, order, width, styles, form=form, valued=valued, in_short=in_short,
                                  wrap_last=wrap_last, below_least=at > 0)
            if found is not None:
                return found
    return None


def _first_layout(headers: Sequence[str], measured: Sequence[_Column], order: Sequence[int], width: int,
                  styles: Sequence[bool], *, form: ShortForm | None, valued: int,
                  in_short: bool | None = None, wrap_last: bool = False, below_least: bool = False) -> _Layout | None:
    """:func:`_layout` of columns ``measured``, each layout tried in ``styles`` in order (compact
    True, boxed False; ``in_short``: :func:`print_table`'s). ``wrap_last`` (print_table's): a layout
    that wraps cells down to their words, or narrows a column below its ``least`` (``below_least``),
    is tried only with every column of ``order`` left out; and a column with no values is never kept
    for the short form ``in_short`` imposes (the table left it out for its long headers when wider)."""
    for squeezed, cut in ((False, False), (True, False), (True, True)):
        for drop in range(len(order) if wrap_last and (squeezed or below_least) else 0, len(order) + 1):
            if wrap_last and in_short and drop < valued:
                continue
            kept = [at for at in range(len(headers)) if at not in order[:drop]]
            for shape, whole in _shapes(form if drop >= valued or in_short else None, in_short):
                found = _fitting_layout(headers if shape is None else shape.headers, measured, kept, width,
                                        styles, squeezed=squeezed, cut=cut, form=shape, whole=whole)
                if found is not None:
                    return found._replace(drop=drop)
    return None


def _shapes(form: ShortForm | None, in_short: bool | None = None) -> tuple[tuple[ShortForm | None, bool], ...]:
    """The forms :func:`_first_layout` tries a table's columns in, each with whether its headers must
    stay on one line: a table with a short ``form`` is drawn in it before a header of its own wraps
    (``turn/step/attempt`` becomes ``t/s/a`` before ``cache read`` wraps), then with headers wrapped."""
    if form is None or in_short is False:
        return ((None, False),)
    return ((form, False),) if in_short else ((None, True), (form, False), (None, False))


def _fitting_layout(headers: Sequence[str], measured: Sequence[_Column], kept: list[int], width: int,
                    styles: Sequence[bool], *, squeezed: bool, cut: bool, form: ShortForm | None,
                    whole: bool = False) -> _Layout | None:
    """The layout of columns ``kept`` that fits ``width`` cells in one of ``styles``, each cell on
    one line or (``squeezed``) wrapped down to its words (``cut``: cut down to ``_WHOLE_WORD``),
    in a short ``form``, each header on one line when ``whole``; None: none."""
    shown_headers = [headers[at] for at in kept]
    shown_columns = [measured[at] for at in kept]
    floors = _floors(shown_headers, shown_columns, cut=cut)
    if whole:
        floors = [max(floor, cell_len(header)) for floor, header in zip(floors, shown_headers)]
    natural = _natural(shown_headers, shown_columns, floors)
    # A column is left out before a cell of up to _ROOMY cells is wrapped (a longer one wraps anyway).
    least = floors if squeezed else [max(floor, column.roomy) for floor, column in zip(floors, shown_columns)]
    # Each cell on one line first, then wrapped down to its words (a column of up to _ROOMY kept whole).
    tries = [(needed, style) for needed in ((least,) if squeezed else (natural, least)) for style in styles]
    for needed, compact in tries:
        room = width - _overhead(len(kept), compact=compact)
        if compact in styles and sum(needed) <= room:
            return _Layout(kept, _widths(shown_headers, shown_columns, least, room),
                           [column.numeric for column in shown_columns], compact, 0, form is not None)
    return None


def rows_fit(columns: Sequence[str], rows: Iterable[Sequence[Any]], *, droppable: Sequence[str] = (),
             spare: Sequence[str] | None = None, wrapping: Sequence[str] = (), short: Mapping[str, str] | None = None,
             short_first: bool = False) -> bool:
    """Whether :func:`print_table` (``columns``, ``rows``, ``droppable``, ``short``, ``short_first``)
    would draw every row on one line on this terminal: the layout it picks (as it lays a table out:
    every header whole first, then its words, its columns narrowed widest first, in its short
    form before it leaves out a column with a value) leaves out no column but those with
    no value in any row and those of ``spare`` (default: all of ``droppable``), and gives every
    cell of each column it shows its whole width, but in those of ``spare`` (which could have
    gone) and ``wrapping`` (free text that may wrap). A command asks it before shortening session
    ids (:func:`id_prefixes`): a table that does not fit with whole ids shows them shortened before
    it wraps one or leaves out a column that says something.
    """
    headers, short = own_headers(columns, [stdout_text(terminal_text(column)) for column in columns], short,
                                  short_first=short_first)  # its own words take no cell another column has
    cells = [[stdout_text(table_cell(cell)) for cell in row] for row in rows]
    empty, order = _left_out_order(columns, cells, droppable)
    chosen = _layout(headers, cells, order, output_width(), current(),
                     form=short_form(columns, headers, short=short), valued=len(empty))
    if chosen is None:
        return False
    spared = set(droppable if spare is None else spare)
    if any(columns[at] not in spared for at in order[:chosen.drop] if at not in empty):
        return False
    return all(cell_len(row[at]) <= width for at, width in zip(chosen.kept, chosen.widths)
               if columns[at] not in spared and columns[at] not in wrapping for row in cells if at < len(row))


def short_needed(columns: Sequence[str], rows: Iterable[Sequence[Any]], *, droppable: Sequence[str] = (),
                 short: Mapping[str, str] | None = None, least: Mapping[str, int] | None = None,
                 wrap_last: bool = False) -> bool:
    """Whether :func:`print_table` (``columns``, ``rows``, ``droppable``, ``short``, ``least``,
    ``wrap_last``) would draw the table in its short form on this terminal: a command printing
    several tables asks it of each, and draws them all in the short form when one needs it
    (``in_short``)."""
    headers = [stdout_text(terminal_text(column)) for column in columns]
    cells = [[stdout_text(table_cell(cell)) for cell in row] for row in rows]
    measured = _measure_columns(len(headers), cells)
    if isinstance(rows, list):  # print_table of these very rows takes the cells as measured here
        _MEASURED[id(rows)] = (rows, cells, measured)
    empty, order = _left_out_order(columns, cells, droppable)
    chosen = _layout(headers, cells, order, output_width(), current(),
                     form=short_form(columns, headers, short=short), valued=len(empty),
                     least=_by_place(columns, least), measured=measured, wrap_last=wrap_last)
    return chosen is not None and chosen.short


#: The cells :func:`short_needed` escaped and measured, by the identity of the rows list they are of
#: (held with them, so that the identity stays theirs): a command that asks it of each table and
#: then prints those very tables (``requests``) hands :func:`print_table` the same rows objects,
#: which takes them instead of escaping and measuring every cell once more. Taken once.
_MEASURED: dict[int, tuple[Any, list[list[str]], list["_Column"]]] = {}


class _Column(NamedTuple):
    """What laying out a table needs to know of one column's cells (:func:`_measure_columns`)."""

    numeric: bool  # a column of numbers (:func:`_numeric`)
    widest: int  # its widest cell (0: no cell)
    roomy: int  # its widest cell of at most _ROOMY cells (0: none)
    longest_word: int  # its longest word (:data:`_TABLE_WORD`; 1: no word)
    longest_id: int  # its longest word that is not a path (:data:`_PATH_WORD`), of at most _WHOLE_ID cells (0: none)
    least: int = 0  # the narrowest width print_table's ``least`` gives it (0: none)
    whole: bool = False  # a column of session ids (print_table's ``ids``): its longest id never cut (a path may be)


def _measure_columns(count: int, cells: Sequence[Sequence[str]]) -> list[_Column]:
    """Each of ``count`` columns of ``cells`` measured, each cell and word once, for every layout
    :func:`print_table` tries (a row may have fewer cells than columns)."""
    columns: list[_Column] = []
    for at in range(count):
        texts = [row[at] for row in cells if at < len(row)]
        sizes = [cell_len(text) for text in texts]
        words = [word for text in texts for word in _TABLE_WORD.findall(text)]
        word_sizes = [cell_len(word) for word in words]
        columns.append(_Column(
            numeric=_numeric(texts), widest=max(sizes, default=0),
            roomy=max((size for size in sizes if size <= _ROOMY), default=0),
            longest_word=max(word_sizes, default=1),
            longest_id=max((size for word, size in zip(words, word_sizes)
                            if size <= _WHOLE_ID and not _PATH_WORD.search(word.strip(_BRACKETS))), default=0)))
    return columns


def _longest_id(cells: Sequence[Sequence[str]], at: int) -> int:
    """The longest word of column ``at`` of ``cells`` that is not a path (a copy's `` (PATH)``),
    however long: a column of session ids keeps it whole (:func:`_layout`), where
    :attr:`_Column.longest_id` counts none past ``_WHOLE_ID`` (a model name may be cut)."""
    return max((cell_len(word) for row in cells if at < len(row) for word in _TABLE_WORD.findall(row[at])
                if not _PATH_WORD.search(word.strip(_BRACKETS))), default=0)


def _floors(headers: Sequence[str], columns: Sequence[_Column], *, cut: bool = False) -> list[int]:
    """Each column's narrowest width: its widest number, or its longest word up to ``_WHOLE_WORD``
    (a date and time is one word; one that is not a path (:data:`_PATH_WORD`), such as a session
    id or a model name, counts whole up to ``_WHOLE_ID``, unless ``cut``: then it may be cut in its
    middle down to ``_WHOLE_WORD`` too), and its header's longest piece."""
    floors: list[int] = []
    for header, column in zip(headers, columns):
        longest_id = 0 if cut and not column.whole else column.longest_id
        floor = column.longest_word if column.numeric else max(min(column.longest_word, _WHOLE_WORD), longest_id)
        floors.append(max([1, floor, column.least, *header_words(header)]))
    return floors


def _natural(headers: Sequence[str], columns: Sequence[_Column], floors: Sequence[int]) -> list[int]:
    """Each column's width with every cell on one line and its header's words whole."""
    return [max([floors[at], *(cell_len(w) for w in header.split()), column.widest])
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
        titled.append(max([whole[at], *(cell_len(w) for w in header.split())]))
        widths.append(max([cell_len(header), column.widest, floors[at]]))
    for floor_of in (titled, whole, floors):
        while sum(widths) > room:
            slack = [(widths[at] - floor_of[at], at) for at in range(len(widths)) if widths[at] > floor_of[at]]
            if not slack:
                break
            widths[max(slack)[1]] -= 1
    return widths
