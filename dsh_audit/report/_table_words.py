"""The words of a table (:mod:`._tables` lays it out): its short form (shorter headers, ids cut to
their unique prefixes), the headers a table laid out in it shows where its layout has room for
its own words, and the caption that names the columns a narrow terminal left out."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ._fit_text import _CUT, _UUID, cell_len, _fitting, _shared_lengths
from ._safe_text import stdout_text, terminal_text
from ._table_draw import _overhead

__all__ = ["ShortForm", "header_words", "id_cut", "narrow_note", "own_headers", "short_form", "shown_chars",
           "with_words"]


class ShortForm(NamedTuple):
    """A table's short form (:func:`print_table`'s ``short`` and ``ids``, :func:`short_form`)."""

    headers: list[str]  # every column's header, shortened where the table has a shorter one
    floors: dict[int, int]  # each column of ids (by place): the narrowest width its ids may be cut to


# An id of a table's short form is cut no shorter than this many characters (``session-86ef2d28``,
# which :func:`short_ids` shows), nor than through its UUID's first group: what is left names one
# session among all those `explain` looks an id up in, not only among a table's rows.
_SHORTEST_ID = 16
# One character of a cell as stdout writes it (:func:`stdout_text`): itself, or its escape (an astral
# character's, or a byte that was not UTF-8, ``\\xNN``): an id is cut between them, never inside an escape.
_SHOWN_CHAR = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|"
                         r"\\U[0-9a-fA-F]{8}|\\x[0-9a-fA-F]{2}|.", re.S)


def shown_chars(text: str) -> list[str]:
    r"""``text`` (as stdout writes it) in its characters, each escape one piece: what a cut may fall between.

    Example:
        >>> shown_chars(r"a\U0001f600\ud83d\ude00\xffb")
        ['a', '\\U0001f600', '\\ud83d\\ude00', '\\xff', 'b']
    """
    return _SHOWN_CHAR.findall(text)


def short_form(columns: Sequence[str], headers: Sequence[str], cells: Sequence[Sequence[str]], *,
                short: Mapping[str, str] | None, ids: Sequence[str]) -> ShortForm | None:
    """The short form of a table whose ``headers`` and ``cells`` are shown as stdout writes them;
    None: it has none."""
    if not short and not ids:
        return None
    shown = [stdout_text(terminal_text(short[column])) if short and column in short else header
             for column, header in zip(columns, headers)]
    floors = {at: _prefix_floor([row[at] for row in cells if at < len(row)], shown[at])
              for at, column in enumerate(columns) if column in ids}
    return ShortForm(shown, floors)


def _prefix_floor(texts: Sequence[str], header: str) -> int:
    """The narrowest width a column of ids (``texts``, as stdout writes them) may be cut to at
    their end (:func:`id_cut`): each id's shortest prefix no other id starts with (of at least
    ``_SHORTEST_ID`` characters, and through its UUID's first group), and the cut mark, or the
    whole id when that is no narrower; and its header's longest piece."""
    mark = cell_len(stdout_text(_CUT))
    unique = sorted(set(texts))
    need = max([1, *header_words(header)])
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
        need = max(need, min(cell_len(text), cell_len("".join(prefix)) + mark))
    return need


def id_cut(text: str, width: int) -> str:
    """An id (as stdout writes it) cut at its end to fit ``width`` cells, with a ``…``: its prefix."""
    if cell_len(text) <= width:
        return text
    mark = stdout_text(_CUT)
    return "".join(_fitting(shown_chars(text), width - cell_len(mark))) + mark


def own_headers(columns: Sequence[str], headers: list[str], short: Mapping[str, str] | None, *,
                 short_first: bool) -> tuple[list[str], Mapping[str, str] | None]:
    """The headers a table is laid out with, and its short form: with ``short_first``, the short
    headers (as stdout writes them), and no further short form (:func:`~._tables.print_table`)."""
    if not short_first or not short:
        return headers, short
    return [stdout_text(terminal_text(short[column])) if column in short else header
            for column, header in zip(columns, headers)], None


def with_words(shown: Sequence[str], words: Sequence[str], kept: Sequence[int], widths: Sequence[int], *,
               compact: bool, width: int) -> tuple[list[str], list[int]]:
    """The headers and widths of a table laid out with its short headers (``shown``, by place;
    ``kept`` the places shown, ``widths`` theirs), each short header replaced by its own words
    (``words``, whole on one line), column by column in their order, where the table stays within
    ``width`` cells: the column widened for it, every other column as it was, so the layout (the
    columns kept, the style, how each cell wraps) is the one the short headers have.

    Example:
        >>> with_words(["n", "reqs"], ["n", "requests"], [0, 1], [3, 4], compact=True, width=13)
        (['n', 'requests'], [3, 8])
        >>> with_words(["n", "reqs"], ["n", "requests"], [0, 1], [3, 4], compact=True, width=12)
        (['n', 'reqs'], [3, 4])
    """
    headers, sized = list(shown), list(widths)
    room = width - _overhead(len(kept), compact=compact)
    for place, at in enumerate(kept):
        if words[at] == shown[at]:
            continue
        wider = max(sized[place], cell_len(words[at]))
        if sum(sized) - sized[place] + wider <= room:
            headers[at], sized[place] = words[at], wider
    return headers, sized


def narrow_note(headers: Sequence[str], left_out: Sequence[int], empty: Sequence[int], *, width: int,
                short: Sequence[str] | None = None) -> str | None:
    """The caption naming the columns a narrow terminal left out (``left_out``, by place), those
    with no value (``empty``) first; by the ``short`` headers the table was laid out with (its
    ``short_first`` form) when their own words make it wider than the terminal (``width``: rich
    wraps a caption there), so that it stays one line when it can."""
    note = None
    for names in (headers, short) if short is not None else (headers,):
        found = ([f"{', '.join(names[at] for at in left_out if at in empty)} (no values)"]
                 if any(at in empty for at in left_out) else []) + [names[at] for at in left_out if at not in empty]
        note = f"narrow terminal: {', '.join(found)} not shown (widen it, or use --json)" if found else None
        if note is None or cell_len(note) <= width:
            break
    return note


def header_words(header: str) -> list[int]:
    """The width of each word of a column's header: a header wraps between its words, never inside
    one (``turn/step/attempt`` stays whole; a column is left out, or others wrap, before it splits)."""
    return [cell_len(word) for word in header.split()]
