"""How ``dsh-audit sessions``' table fits a terminal (:func:`narrowed`): what gives way while a row
does not fit on one line, each id whole (its shortest unique prefix instead), then "project" and
the headers' own words, then the title (wrapped, else cut at its end with "…"), a number column
last; and the captions that say so. The rows themselves: :mod:`dsh_audit.cli._sessions`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import cache, partial

from ..cache import SessionSummary
from ..report.terminal import (NO_VALUE, cell_len, id_prefixes, middle_cut, output_width, rows_fit, short_ids,
                               shown_chars, stdout_text, table_cell)
from ._output import COUNT_SHORT
from ._table_ids import id_caption, id_cell, id_names, widest

__all__ = ["COLUMNS", "DROPPABLE", "LESSER", "PROJECT_MIN", "TITLE_MIN", "WIDE_COLUMNS", "boxed_lesser", "empty_columns",
           "id_room", "id_text", "lesser_note", "narrowed", "short_headers", "whole_fit", "widened", "without"]

COLUMNS = ("when (UTC)", "title", "project", "requests", "hit ratio", "breaks", "cost", "id")
# Every column of a row (:func:`dsh_audit.cli._sessions._row`): COLUMNS and the lesser ones a terminal
# wide enough for every cell whole shows too (issue 14 B1), as Markdown always does.
WIDE_COLUMNS = ("when (UTC)", "title", "project", "requests", "tokens", "hit ratio", "breaks", "cost", "first (UTC)",
                "format", "id")
# The lesser columns, left out first, in this order, before any cell of COLUMNS is shortened (:func:`whole_fit`).
LESSER = ("format", "first (UTC)", "tokens")
_SHORT_NOTE = id_caption("id")
# The columns a narrow terminal leaves out, in this order, after those with no value in any row, when
# not even a title cut to _TITLE_CUT leaves room for every number (ids that cannot be shortened, a
# terminal narrower than 80 columns); else "project" alone (_KEPT_NUMBERS): a title gives way before a
# number does (:func:`narrowed`). The essential fields (the time, title, requests, breaks, cost and id)
# are never left out: a terminal with no room for them in a table shows a block of lines a row of them.
DROPPABLE = ("project", "hit ratio")
_KEPT_NUMBERS = ("project",)
# The narrowest "project" is shown when it is kept for ids shortened (:func:`narrowed`): a path is cut
# in its middle below its width, and this keeps its start and its end readable.
PROJECT_MIN = 20
# The title's narrowest width while it wraps between its words (its widest title, if narrower): in a
# narrower room it is cut at its end with "…" instead, on one line (never a word a line).
TITLE_MIN = 20
# The narrowest a title is cut to (with its "…") before a number column is left out for it.
_TITLE_CUT = 8
# The narrowest a title is cut to once "project" and "hit ratio" are out (:data:`DROPPABLE`): its header's
# width, the narrowest title column a table has; no room even so, and no table holds the essential
# fields (print_table draws a block of lines a row of them, where a title wraps between its words).
_TITLE_LEAST = len("title")
# How many terminal widths of a title's start are measured and cut (:func:`_bounded`): more than any room
# a layout tries can take (a title that fits is narrower than the terminal; one cut after a word keeps
# two thirds of its room at least).
_MEASURED_WIDTHS = 4
_CUT_NOTE = "title: cut to fit (--json for whole titles)"
# Both, as one line of 80 columns.
_SHORT_CUT_NOTE = id_caption("id", cut="title")


def id_text(summary: SessionSummary, *, copies: bool, names: dict[str, str] | None = None) -> str:
    """The id cell of ``summary``: its id (as ``names`` shows it: :func:`id_cell`), ``ID (PATH)``
    when the session is listed from several files (``copies``)."""
    shown = id_cell(summary.session_id, names)
    return f"{shown} ({summary.path})" if copies else shown


def id_room(rows: Sequence[tuple[object, ...]], listed: Sequence[SessionSummary], copies: set[str]) -> int:
    """The widest id of ``rows`` (the last cell, :func:`id_text`) as the table shows it, its
    `` (PATH)`` aside (a path is cut in its middle): print_table's ``least`` for the column, so
    that it is never cut. The id itself is measured, a `` (`` in it its own."""
    return widest(str(row[-1]).removesuffix(f" ({s.path})") if s.session_id in copies else row[-1]
                  for row, s in zip(rows, listed))


def without(rows: Sequence[tuple[object, ...]], left_out: Sequence[str]
            ) -> tuple[tuple[str, ...], list[tuple[object, ...]]]:
    """The columns of :data:`WIDE_COLUMNS` but ``left_out``, and ``rows`` (of every wide column) with those cells only."""
    kept = [at for at, column in enumerate(WIDE_COLUMNS) if column not in left_out]
    return tuple(WIDE_COLUMNS[at] for at in kept), [tuple(row[at] for at in kept) for row in rows]


def whole_fit(rows: Sequence[tuple[object, ...]]) -> bool:
    """Whether every cell of ``rows`` (of every wide column, the total's among them) but the
    :data:`LESSER` ones fits whole on one line on this terminal: the table then needs no
    shortening (:func:`narrowed`), print_table leaves out what it must of :data:`LESSER` alone. A
    title longer than the start :func:`_bounded` measures (zero-width marks: fuzz 33) is never
    whole: it is cut as :func:`narrowed` cuts it, never measured whole (200k marks: 27 s)."""
    longest = _MEASURED_WIDTHS * _MEASURED_WIDTHS * output_width()
    if any(isinstance(row[1], str) and len(row[1]) > longest for row in rows):
        return False
    return rows_fit(*without(rows, LESSER), spare=())


def boxed_lesser(rows: Sequence[tuple[object, ...]]) -> tuple[list[str], list[str]]:
    """The columns of :data:`WIDE_COLUMNS` left out of ``rows`` (every cell whole on its line:
    :func:`whole_fit`) so that a :data:`LESSER` one never costs the table its boxes, a style every
    other command keeps where its own columns fit boxed (session 44: sessions drew compact at 160
    columns, boxed at 100): in print_table's order, the columns with no value in any row, then
    :data:`LESSER`'s, as few as a boxed table needs for every cell and header whole on one line
    (the :data:`LESSER` ones and the empty ones apart, said in one caption: :func:`lesser_note`).
    None when it fits so with them all, or not even without them all (print_table lays it out)."""
    cells = [[stdout_text(table_cell(cell)) for cell in row] for row in rows]
    empty = _empty(cells)
    natural = {column: max([cell_len(column)] + [cell_len(row[at]) for row in cells])  # no header wrapped for one
               for at, column in enumerate(WIDE_COLUMNS)}
    order = [*empty, *(column for column in LESSER if column not in empty)]
    for count in range(len(order) + 1):
        kept = [width for column, width in natural.items() if column not in order[:count]]
        if sum(kept) + 3 * len(kept) + 1 <= output_width():  # "│ a │ b │": the boxes' borders and padding
            gone = order[:count]
            return [column for column in gone if column not in empty], [column for column in gone if column in empty]
    return [], []


def empty_columns(rows: Sequence[tuple[object, ...]]) -> list[str]:
    """The columns of :data:`WIDE_COLUMNS` with no value in any of ``rows`` (the total's among them),
    as print_table finds them: left out with the :data:`LESSER` ones, and named beside them."""
    return _empty([[stdout_text(table_cell(cell)) for cell in row] for row in rows])


def _empty(cells: Sequence[Sequence[str]]) -> list[str]:
    """The columns of :data:`WIDE_COLUMNS` whose every cell (as shown) is no value."""
    return [column for at, column in enumerate(WIDE_COLUMNS) if cells and all(row[at] in NO_VALUE for row in cells)]


def lesser_note(left_out: Sequence[str], empty: Sequence[str]) -> str:
    """The caption naming the columns :func:`boxed_lesser` left out, in print_table's words
    (its narrow-terminal caption: a table says it once)."""
    found = ([f"{', '.join(empty)} (no values)"] if empty else []) + list(left_out)
    return f"narrow terminal: {', '.join(found)} not shown (widen it, or use --json)"


def widened(rows: Sequence[tuple[object, ...]], wide: Sequence[tuple[object, ...]]) -> list[tuple[object, ...]]:
    """``rows`` (of :data:`COLUMNS`, as :func:`narrowed` shortened them) with the :data:`LESSER`
    cells of ``wide`` (the same rows, every wide column) back in their places: print_table leaves
    those columns out first, before any of the others (the caption names them, as every table's)."""
    places = [WIDE_COLUMNS.index(column) for column in COLUMNS]
    shown = []
    for row, whole in zip(rows, wide):
        cells = list(whole)
        for at, cell in zip(places, row):
            cells[at] = cell
        shown.append(tuple(cells))
    return shown


def narrowed(rows: list[tuple[object, ...]], listed: Sequence[SessionSummary], copies: set[str]
             ) -> tuple[list[tuple[object, ...]], tuple[str, ...], dict[str, int], list[str]]:
    """The table's rows on the terminal, the columns it may leave out (none: every header in its
    own words too, no :data:`COUNT_SHORT` form: :func:`short_headers`), the narrowest widths of its
    columns and the captions that say how cells were shortened. What gives way, in this order, while a row does not fit on
    one line: each id whole, when its shortest unique prefix (the one rule of :func:`id_prefixes`)
    leaves the room for "project" (:data:`PROJECT_MIN` columns of it at least) and every header's
    own words, as `check` shortens an id before a header (session 41: whole ids left "project"
    out from 120 to 140 columns); else "project" and those words ("reqs", "hit"), then each id
    whole, the title (wrapped between its words in a room of :data:`TITLE_MIN`
    columns or more, else cut at its end with "…", down to :data:`_TITLE_CUT`); a number column
    only when not even that leaves room for them all (then as print_table leaves columns out,
    :data:`DROPPABLE`). A terminal too narrow for any table (a block of lines a row) has a line's
    room for an id: only one holding a UUID is cut there, as every table cuts one (:func:`short_ids`)."""
    bound = _MEASURED_WIDTHS * output_width()
    measured = [_bounded(row[1], bound) for row in rows]  # escaped once: every width below is the shown text's
    titles, widths = [shown for shown, _ in measured], [width for _, width in measured]
    longest = max(widths)
    prefixed = cache(partial(_prefixed, rows, listed, copies))  # made once, when a layout first needs it
    kept = _kept(rows, prefixed, titles, widths, min(longest, TITLE_MIN))
    if kept is not None:  # "project" and the headers' own words kept, the ids whole or cut
        fitted, space, said = kept
        width = _project_room(fitted, titles, space)
        fitted = [(*row[:2], middle_cut(_shown(row[2]), width), *row[3:]) for row in fitted]
        return _titled(fitted, titles, space, said, (), bound)
    room = _title_room(rows, titles, widths, min(longest, TITLE_MIN))
    captions: list[str] = []
    if room is None:  # whole ids leave the title too little room: each id its shortest unique prefix
        whole = rows
        rows, captions = prefixed()
        room = _title_room(rows, titles, widths, min(longest, _TITLE_CUT))
        if room is None:  # no room for every number beside a title: the lesser ones out for it
            room = _title_room(rows, titles, widths, min(longest, _TITLE_LEAST), spare=DROPPABLE)
            if room is not None:
                return _titled(rows, titles, room, captions, DROPPABLE, bound)
        if room is None and not _tabled(rows):  # a block a row: an id has a line's room
            rows, captions = _with_ids(whole, listed, copies, id_names((s.session_id for s in listed), short_ids))
    if room is None:  # no table holds the essential fields: a block of lines a row, of them alone
        return rows, DROPPABLE, {"title": TITLE_MIN}, captions
    return _titled(rows, titles, room, captions, _KEPT_NUMBERS, bound)


def short_headers(droppable: tuple[str, ...]) -> dict[str, str] | None:
    """The short headers a table :func:`narrowed` laid out may use: none when it may leave out no
    column (it kept "project" and every header's own words), else :data:`COUNT_SHORT`."""
    return COUNT_SHORT if droppable else None


def _kept(rows: list[tuple[object, ...]], prefixed: Callable[[], tuple[list[tuple[object, ...]], list[str]]],
          titles: Sequence[str], widths: Sequence[int], least: int
          ) -> tuple[list[tuple[object, ...]], int, list[str]] | None:
    """The rows (each id whole, else its shortest unique prefix: ``prefixed()``, the rows and their
    caption as :func:`narrowed` made them), the title's room and the captions of a table that keeps
    "project" (:data:`PROJECT_MIN` columns of it at least) and every header's own words
    (:func:`_title_room`'s ``whole``); None when neither id leaves it."""
    room = _title_room(rows, titles, widths, least, whole=True)
    if room is not None:
        return rows, room, []
    cut, said = prefixed()
    room = _title_room(cut, titles, widths, least, whole=True) if said else None
    return None if room is None else (cut, room, said)


def _project_room(rows: Sequence[tuple[object, ...]], titles: Sequence[str], room: int) -> int:
    """The widest "project" (from :data:`PROJECT_MIN`, which :func:`_kept` found room for, up to
    its widest cell) that still fits every row on one line beside titles cut to ``room``, each
    header in its own words (halving the range: a narrower one never needs more room)."""
    def fits(width: int) -> bool:
        cut = [(row[0], _title_cut(title, room), middle_cut(_shown(row[2]), width), *row[3:])
               for row, title in zip(rows, titles)]
        return rows_fit(COLUMNS, cut, spare=())

    low, high = PROJECT_MIN, max(PROJECT_MIN, *(cell_len(_shown(row[2])) for row in rows))
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if fits(middle) else (low, middle - 1)
    return low


def _titled(rows: list[tuple[object, ...]], titles: Sequence[str], room: int, captions: list[str],
            droppable: tuple[str, ...], bound: int
            ) -> tuple[list[tuple[object, ...]], tuple[str, ...], dict[str, int], list[str]]:
    """The rows with each title in ``room`` columns: wrapped between its words (the whole title, its
    row's own) when that room is :data:`TITLE_MIN` or more, else cut at its end (:func:`_title_cut`,
    the caption saying so). ``titles`` are as :func:`_bounded` measured them (``bound``)."""
    cut = [_title_cut(title, room) for title in titles]
    shown = max(map(cell_len, cut))  # the title column's width (a title cut after a word: narrower)
    if shown >= TITLE_MIN and _words_fit(rows, titles, shown, bound):  # room to wrap each title between its words
        return rows, droppable, {"title": shown}, captions
    if cut != titles:
        captions = [_SHORT_CUT_NOTE] if captions else [_CUT_NOTE]
    return [(row[0], title, *row[2:]) for row, title in zip(rows, cut)], droppable, {"title": shown}, captions


def _tabled(rows: Sequence[tuple[object, ...]]) -> bool:
    """Whether ``rows`` are drawn as a table, leaving out what it must of "project" and
    :data:`DROPPABLE` and wrapping titles and paths (:func:`rows_fit`), not a block of lines a row."""
    return rows_fit(COLUMNS, rows, droppable=DROPPABLE, spare=DROPPABLE, wrapping=("title", "id"),
                    short=COUNT_SHORT, short_first=True)


def _prefixed(rows: Sequence[tuple[object, ...]], listed: Sequence[SessionSummary], copies: set[str]
              ) -> tuple[list[tuple[object, ...]], list[str]]:
    """``rows`` with each id its shortest unique prefix (:func:`id_prefixes`), and their caption:
    :func:`narrowed` makes them at most once (none while whole ids fit, as on a wide terminal)."""
    return _with_ids(rows, listed, copies, id_names((s.session_id for s in listed), id_prefixes))


def _with_ids(rows: Sequence[tuple[object, ...]], listed: Sequence[SessionSummary], copies: set[str],
              names: dict[str, str]) -> tuple[list[tuple[object, ...]], list[str]]:
    """``rows`` with each id as ``names`` shows it (``ID (PATH)`` for one of ``copies``), and the
    caption saying so when one is shortened."""
    shown = [(*row[:-1], id_text(s, copies=s.session_id in copies, names=names)) for row, s in zip(rows, listed)]
    return shown, [_SHORT_NOTE] if any(names[i] != i for i in names) else []


def _shown(title: object) -> str:
    """A title cell as a table measures it (:func:`table_cell`, as stdout can write it)."""
    return stdout_text(table_cell(title))


def _bounded(title: object, bound: int) -> tuple[str, int]:
    """A title cell as a table measures it (:func:`_shown`) and its width; of a title longer than
    ``bound`` characters, only a start wider than ``bound`` cells, its characters cut before
    escaping multiplies them (a newline is ``\\u000a``), an escape never split. No layout gives a
    title that much room: its cuts (:func:`_title_cut`) are the whole title's, and it never fits
    whole. A 1 MB title was escaped, then measured and cut at each width tried, 8-16 s for 200k
    newlines (fuzz 32's D4). The width is the whole title's (:func:`_rest_width`): the widths
    :func:`_title_room` tries, halving the range up to it, stay those tried before.

    Example:
        >>> _bounded("a\\nb", 80), _bounded("\\n" * 10**6, 80)[1]
        (('a\\\\u000ab', 8), 6000000)
    """
    if not isinstance(title, str):
        shown = _shown(title)
        return shown, cell_len(shown)
    size = bound
    while True:  # a start of zero-width characters (combining marks) is taken longer, up to a limit
        shown = _shown(title[:size])
        width = cell_len(shown)
        if size >= len(title) or width > bound or size >= _MEASURED_WIDTHS * bound:
            break
        size *= 2
    if not shown.strip():  # a CI command after spaces is escaped by the whole title: measured whole
        return shown, cell_len(_shown(title))
    if width <= bound < len(title) - size:  # zero-width characters past the limit (fuzz 33: 200k combining marks
        return shown + "…", width + 1  # hung every layout's measure): left out, said by the cut's mark
    return shown, width + _rest_width(title[size:])


def _rest_width(rest: str) -> int:
    """The cells ``rest``, a title's end after a start that holds more than spaces, takes as
    shown: each character's, counted once a kind (a title is escaped a character at a time, but
    for a CI command at its start). Rich measures an emoji's variation selector by the character
    before it: such a title may be a cell or two off, which moves only the widths tried
    (:func:`_title_room`), not whether one fits."""
    if rest.isascii() and rest.isprintable():
        return len(rest)
    from collections import Counter

    return sum(count * cell_len(_shown(char)) for char, count in Counter(rest).items())


def _words_fit(rows: Sequence[tuple[object, ...]], titles: Sequence[str], width: int, bound: int) -> bool:
    """Whether no word of a title (as shown) is wider than ``width``: a title wraps between its
    words, never inside one. A title :func:`_bounded` measured by its start (``titles``) is looked
    at whole only when the words of that start fit: a word past it may not."""
    def fit(shown: Iterable[str]) -> bool:
        return all(cell_len(word) <= width for title in shown for word in title.split())

    return fit(titles) and fit(_shown(row[1]) for row in rows if isinstance(row[1], str) and len(row[1]) > bound)


def _title_room(rows: Sequence[tuple[object, ...]], titles: Sequence[str], widths: Sequence[int], least: int, *,
                whole: bool = False, spare: tuple[str, ...] = _KEPT_NUMBERS) -> int | None:
    """The widest the titles of ``rows`` (``titles``, as shown) may be, cut with :func:`_title_cut` to a width from
    ``least`` up to the widest title, for every row to fit on one line with every column but
    "project" (:func:`rows_fit`): that width; None when not even ``least`` leaves that room.
    Halving the range (a title cut narrower never needs more room), first over a few rows that
    hold each column's widest cell and the longest titles (:func:`_probe`), then checked over
    every row (each look at every row measures them all). With ``whole``, "project" and every
    header's own words (no :data:`COUNT_SHORT` form) are kept too; else the columns of ``spare`` may go."""
    def fits(width: int, among: Sequence[int]) -> bool:
        cut = [(rows[k][0], _title_cut(titles[k], width), *rows[k][2:]) for k in among]
        if whole:  # "project" kept, PROJECT_MIN columns of it at least (a path is cut in its middle)
            kept = [(*row[:2], "x" * min(cell_len(_shown(row[2])), PROJECT_MIN), *row[3:]) for row in cut]
            return rows_fit(COLUMNS, kept, spare=())
        return rows_fit(COLUMNS, cut, droppable=spare, spare=spare, short=COUNT_SHORT, short_first=True)

    def widest_fit(low: int, high: int, among: Sequence[int]) -> int | None:
        if low > high or not fits(low, among):
            return None
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if fits(middle, among) else (low, middle - 1)
        return low

    every, probe = range(len(rows)), _probe(rows, titles, widths)
    high = max(least, max(widths))
    room = widest_fit(least, high, every) if len(probe) == len(rows) else widest_fit(least, high, probe)
    if room is not None and len(probe) < len(rows) and not fits(room, every):
        room = widest_fit(least, room - 1, every)  # a row the probe did not hold needs more room
    return room


def _probe(rows: Sequence[tuple[object, ...]], titles: Sequence[str], widths: Sequence[int]) -> list[int]:
    """A few of ``rows`` (their places) that lay a table out as all of them do, as far as the
    widths go: the one with each column's widest cell, the longest titles (the widest once cut),
    the longest title of up to 24 cells and the title with the longest word."""
    chosen = {max(range(len(rows)), key=lambda k: cell_len(_shown(rows[k][at])))
              for at in range(len(COLUMNS)) if at != 1}
    chosen.update(sorted(range(len(rows)), key=lambda k: -widths[k])[:8])
    chosen.add(max(range(len(rows)), key=lambda k: (widths[k] <= 24, widths[k])))
    chosen.add(max(range(len(rows)), key=lambda k: max(map(cell_len, titles[k].split()), default=0)))
    return sorted(chosen)


def _title_cut(title: str, width: int) -> str:
    """``title`` (as shown: escapes and all) if it fits ``width`` cells, else its start and a
    ``…`` in ``width`` cells, cut after a word when that keeps two thirds of the room, an escape never
    split.

    Example:
        >>> _title_cut("Count the bullet lines in the README", 20), _title_cut("Refactoring", 8)
        ('Count the bullet…', 'Refacto…')
    """
    if cell_len(title) <= width:
        return title
    mark = stdout_text("…")
    room = max(width - cell_len(mark), 0)
    head, used = "", 0
    if title.isascii() and title.isprintable() and "\\" not in title:  # a character a cell, no escape
        head = title[:room]
    else:
        for piece in shown_chars(title):
            used += cell_len(piece)
            if used > room:
                break
            head += piece
    at = head.rstrip().rfind(" ")
    if at >= room * 2 // 3:
        head = head[:at]
    return head.rstrip() + mark
