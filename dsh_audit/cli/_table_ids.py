"""How a listing's table shows session ids, the one way of ``sessions``, ``check``, ``usage`` and
``stats``: the cell of a log with no id, each id as the rule of a narrow table shortens it
(:func:`~dsh_audit.report.terminal.id_prefixes`, else a block's :func:`~dsh_audit.report.terminal.short_ids`),
the caption that says so, and the room an id needs so that ``print_table`` leaves a column out
before it cuts one in its middle (a middle cut names no session: `show` refuses it).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from ..report.terminal import cell_len, stdout_text, table_cell

__all__ = ["NO_ID", "id_caption", "id_cell", "id_names", "widest"]

#: The cell of a log whose header names no session (a cell without a value, as every table shows one).
NO_ID = "-"


def id_names(ids: Iterable[str | None], rule: Callable[[Sequence[str]], Mapping[str, str]]) -> dict[str, str]:
    """Each id of ``ids`` as ``rule`` shortens it among the others, a missing or empty one left
    out (it shows :data:`NO_ID`, and is no prefix of another)."""
    return dict(rule([found for found in ids if found]))


def id_cell(session_id: str | None, names: Mapping[str, str] | None = None) -> str:
    """A session id's cell: as ``names`` (:func:`id_names`) shows it, else whole; :data:`NO_ID`
    when there is none.

    Example:
        >>> id_cell("session-abc", {"session-abc": "session-a…"}), id_cell("s-1"), id_cell("")
        ('session-a…', 's-1', '-')
    """
    if not session_id:
        return NO_ID
    return session_id if names is None else names.get(session_id, session_id)


def id_caption(column: str, *, whose: str = "", cut: str = "") -> str:
    """The caption of a table whose ``column`` shows each session id as its shortest unique prefix
    (``whose``: what the prefix is of, when the column is not named for the id; ``cut``: a column
    of free text cut to fit as well, said in the same line, which fits 80 columns).

    Example:
        >>> id_caption("id"), id_caption("session", whose="its id")
        ('id: shortest unique prefix (--json for whole ids)', 'session: shortest unique prefix of its id (--json for whole ids)')
        >>> id_caption("id", cut="title")
        'id: shortest unique prefix; title: cut to fit (--json for whole ids and titles)'
    """
    of = f" of {whose}" if whose else ""
    if cut:
        return f"{column}: shortest unique prefix{of}; {cut}: cut to fit (--json for whole ids and {cut}s)"
    return f"{column}: shortest unique prefix{of} (--json for whole ids)"


def widest(cells: Iterable[object]) -> int:
    """The widest of ``cells`` as a table shows them on stdout (:func:`table_cell`, then
    :func:`stdout_text`): print_table's ``least`` for an id's column (or a path's, which is never
    cut either), so that a column is left out before one is cut; 0 for no cell."""
    return max((cell_len(stdout_text(table_cell(cell))) for cell in cells), default=0)
