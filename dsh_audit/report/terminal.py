"""Terminal rendering with rich: tables, warnings, progress. Only this module's parts import rich.

rich is imported when something is drawn, not with this module: a command that writes JSON, or
runs with stderr piped (no progress bar), never loads it.

Everything drawn here, and every line the CLI echoes, goes through :func:`terminal_text` first:
text from a log is data, never a terminal control sequence, rich markup or a CI workflow command.
Inside :func:`listing` (``--format``, ``--pager``: :mod:`dsh_audit.report._listing`) a table is
written as CSV or inert Markdown instead, or shown through a pager.

This module is the public face of its parts, private modules beside it, one job each:
:mod:`~dsh_audit.report._safe_text` (text shown inert), :mod:`~dsh_audit.report._console` (the
consoles, the width of stdout's lines, the pager, status lines), :mod:`~dsh_audit.report._fit_text`
(text cut or wrapped to a width, short session ids), :mod:`~dsh_audit.report._cells` (a table's
cells, and its CSV and Markdown forms), :mod:`~dsh_audit.report._tables` (a table's layout),
:mod:`~dsh_audit.report._table_draw` (drawing it) and :mod:`~dsh_audit.report._progress`
(progress bars).
"""

from __future__ import annotations

from ._cells import NO_VALUE, Amount, table_cell
from ._console import (listing_line, output_width, page_listing, print_status, stderr_console, stdout_console,
                       title_width)
from ._fit_text import cell_len, fit_lines, id_prefixes, long_words_cut, middle_cut, short_ids, value_cut
from ._listing import LISTING_FORMATS, listing, listing_format, paging
from ._progress import progress, progress_callback
from ._safe_text import markdown_text, stdout_text, terminal_text
from ._table_words import shown_chars
from ._tables import About, print_table, rows_fit, short_needed

__all__ = ["LISTING_FORMATS", "NO_VALUE", "About", "Amount", "cell_len", "fit_lines", "id_prefixes", "listing", "listing_format", "listing_line",
           "long_words_cut", "markdown_text", "middle_cut", "output_width", "page_listing", "paging", "print_status", "print_table", "progress",
           "progress_callback", "rows_fit", "short_ids", "short_needed", "shown_chars", "stderr_console", "stdout_console",
           "stdout_text", "table_cell", "terminal_text", "title_width", "value_cut"]
