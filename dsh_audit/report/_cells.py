"""A table's cells: what reads as a number or as one word, an :class:`Amount`, a cell's text, and a
table written as CSV or Markdown inside a :func:`~dsh_audit.report.terminal.listing` (``--format``)."""

from __future__ import annotations

import csv
import io
import re
import sys
from collections.abc import Sequence
from typing import NamedTuple

from ._listing import Listing
from ._safe_text import _markdown_inline, markdown_text, terminal_text

__all__ = ["NO_VALUE", "Amount", "table_cell"]

# A number as the CLI prints one: a count, an estimate (~146), a ratio, a price, a lower bound
# (≥$0.0076, ``\u2265$0.0076`` on a stdout that cannot write ≥), an index range, a count a capture
# gave (175*: `cache`'s timeline); ``?`` and ``$?`` a number not known.
_NUMBER = re.compile(r"^(?:~|≥|\\u2265)?[$+-]?\d[\d,._]*(%|s|ms|x|\*)?$|^\$\?$")
#: A cell that says nothing: no value (empty, ``-``), an unknown count (``?``), or none (``n/a``).
NO_VALUE = frozenset({"", "-", "?", "n/a"})

# What a table keeps on one line as if it were one word: a date and time (``2027-01-15 08:00``).
_TABLE_WORD = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d)?(?![\d:])|\S+")

# A word read as a file path: absolute, home- or dot-relative, a drive or UNC path, three or more
# ``/`` (a model name has fewer: ``openrouter/anthropic/claude-sonnet-4``), or a log's file name.
_PATH_WORD = re.compile(r"^(?:~|\.{1,2})?/|^[A-Za-z]:[\\/]|^\\\\|(?:[^/]*/){3}|\.(?:jsonl|zstd|zst|json|har)$")

# A CSV text cell starting with one of these is a formula to a spreadsheet: it gets a leading apostrophe.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


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

    @classmethod
    def tokens(cls, value: int | None, *, lacking: bool, logged: bool | None = None) -> int | Amount:
        """A token sum as ``usage``, ``requests`` and ``stats`` show it: the sum; when some request
        logged no count of its bucket (``lacking``), ``≥N`` (CSV: N), ``≥0`` too when another logged
        0; ``?`` (CSV: an empty cell) only when no request logged a valid count of it: ``value`` None,
        or ``lacking`` and ``logged`` False. A sum of 0 is no sign that none was logged: a caller says
        ``logged``; one that does not (None) has a sum of 0 that is ``lacking`` taken as none logged.

        Example:
            >>> Amount.tokens(7, lacking=False), Amount.tokens(7, lacking=True), Amount.tokens(None, lacking=True)
            (7, Amount(value=7, text='≥7'), Amount(value=None, text='?'))
            >>> Amount.tokens(0, lacking=True, logged=True), Amount.tokens(0, lacking=True, logged=False)
            (Amount(value=0, text='≥0'), Amount(value=None, text='?'))
        """
        if value is None or (lacking and not (bool(value) if logged is None else logged)):
            return cls(None, "?")
        return cls(value, f"≥{value}") if lacking else value

    @property
    def csv(self) -> str:
        """The value as CSV writes it: a plain decimal (never an exponent), empty when unknown."""
        value = self.value
        if value is None or isinstance(value, bool):
            return ""
        if isinstance(value, int):
            return str(value)
        from decimal import Decimal  # CSV of a float only (a table or `--json` never writes one)

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

    lines = [""] if state.written else []
    lines += [f"### {markdown_text(title)}", "", line([_markdown_inline(h) for h in headers]),
              line(["---:" if number else "---" for number in numeric])]
    lines += [line([_markdown_inline(row[at]) if at < len(row) else "" for at in range(len(headers))]) for row in cells]
    # a blank line ends the table: a line written after it (diff's "note 1: ...") would be a row of
    # it else (GFM: a table ends at a blank line or another block), a "|" in it a cell break
    lines += ["", markdown_text(caption)] if caption is not None else [""]
    state.tables += 1
    # the next block needs a blank line before it after a caption; that blank line already ended a
    # table without one (two between tables would be one too many)
    state.written = caption is not None
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()


def _numeric(shown: Sequence[str]) -> bool:
    """Whether a column holds numbers: each cell one or none, and one at least, or ``?`` (a number not known)."""
    return any(text not in NO_VALUE or text == "?" for text in shown) and all(_is_number(text) for text in shown)
