"""The words of a table (:mod:`._tables` lays it out): its short form (shorter headers), the
headers a table laid out in it shows where its layout has room for its own words, and the
caption that names the columns a narrow terminal left out."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from ._fit_text import cell_len
from ._safe_text import stdout_text, terminal_text
from ._table_draw import _overhead

__all__ = ["ShortForm", "header_words", "narrow_note", "own_headers", "short_form", "shown_chars", "with_words"]


class ShortForm(NamedTuple):
    """A table's short form (:func:`print_table`'s ``short``, :func:`short_form`)."""

    headers: list[str]  # every column's header, shortened where the table has a shorter one


# One character of a cell as stdout writes it (:func:`stdout_text`): itself, or its escape (an astral
# character's, or a byte that was not UTF-8, ``\\xNN``): a text is cut between them, never inside an escape.
_SHOWN_CHAR = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|"
                         r"\\U[0-9a-fA-F]{8}|\\x[0-9a-fA-F]{2}|.", re.S)


def shown_chars(text: str) -> list[str]:
    r"""``text`` (as stdout writes it) in its characters, each escape one piece: what a cut may fall between.

    Example:
        >>> shown_chars(r"a\U0001f600\ud83d\ude00\xffb")
        ['a', '\\U0001f600', '\\ud83d\\ude00', '\\xff', 'b']
    """
    return _SHOWN_CHAR.findall(text)


def short_form(columns: Sequence[str], headers: Sequence[str], *,
               short: Mapping[str, str] | None) -> ShortForm | None:
    """The short form of a table whose ``headers`` are shown as stdout writes them; None: it has none."""
    if not short:
        return None
    return ShortForm([stdout_text(terminal_text(short[column])) if column in short else header
                      for column, header in zip(columns, headers)])


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
