"""What a command writes: a machine format to a file or to stdout (``-``, one option at most),
the help of every option that writes one, and how every table names a request's place and a session.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import click

from ..errors import UsageError
from ..report.terminal import Amount

__all__ = ["CAPTURED_MARK", "CAPTURED_NOTE", "COUNT_SHORT", "PLACE_COLUMN", "PLACE_LEGEND", "PLACE_SHORT", "STDOUT",
           "echo_written", "output_help", "session_heading", "place_text", "captured_count", "session_title",
           "stdout_target", "write_output"]

#: The output path that means stdout, for every option that writes a machine format to a file.
STDOUT = "-"


def echo_written(path: str, said: str, *, piped: bool = False) -> None:
    """``wrote PATH`` and ``said`` (what it holds) as :func:`~dsh_audit.cli._common.echo_wrote` says them,
    or, when stdout holds an output (``path`` is :data:`STDOUT`, said ``stdout``; or ``piped``: another
    output went there), in one line on stderr, where it cannot mix with that output."""
    from ._common import echo, echo_wrote

    if path == STDOUT or piped:
        echo(f"wrote {'stdout' if path == STDOUT else path}{said}", err=True)
    else:  # on a terminal, wrapped at spaces, the path whole
        echo_wrote(path, said)


#: The header of the column of :func:`place_text` in every table, its short header (a table's short
#: form, tried before a header wraps or a column is left out: ``turn/step/attempt`` is never split
#: over lines), and the caption that says what the short one means.
PLACE_COLUMN = "turn/step/attempt"
PLACE_SHORT = {PLACE_COLUMN: "t/s/a"}
PLACE_LEGEND = f"t/s/a: {PLACE_COLUMN}"
#: The short headers of the columns of a listing of sessions (``sessions``, ``check``): a table's
#: short form needs no legend for them (what they stand for is plain: the words a table shows
#: whenever it has the room).
COUNT_SHORT = {"requests": "reqs", "hit ratio": "hit"}
#: The mark of a count the capture gave (its log holds no usage: the provider's usage in the
#: captured response to its send), after the number as every table shows it (``175*``: `cache`'s
#: timeline, `requests`), each with a caption that says so.
CAPTURED_MARK = "*"
#: The caption under rows whose usage the capture gave (``requests``, ``watch``).
CAPTURED_NOTE = f"{CAPTURED_MARK}: the capture's usage (the log holds none), as usage prices the request"


def captured_count(count: int) -> Amount:
    """A count the capture gave (:data:`CAPTURED_MARK`): ``175*`` in a table, the number in CSV.

    Example:
        >>> captured_count(175).text
        '175*'
    """
    return Amount(count, f"{count}{CAPTURED_MARK}")


def place_text(turn: int | None, step: int | None, attempt: int | None) -> str:
    """Where a request was sent, as every table shows it: ``turn/step/attempt``; ``N/-`` for a
    compaction call (a turn, no step), ``-`` for a title call (neither).

    Example:
        >>> place_text(2, 1, 1), place_text(9, None, 1), place_text(None, None, None)
        ('2/1/1', '9/-', '-')
    """
    if turn is None:
        return "-"
    if step is None:
        return f"{turn}/-"
    return f"{turn}/{step}/{attempt}"


#: A width no heading line reaches: fit_lines then wraps none (a log's path stays whole, to be copied).
_UNWRAPPED = 1 << 30


def session_heading(path: str, session_id: str) -> list[str]:
    """The lines of a heading printed above one session's output (``cache``, ``breaks`` of a log
    with no break): :func:`session_title` broken into lines, each whole (a path is never folded: it
    is there to be copied), the id cut to one line (not 250 columns of it)."""
    from ..report.terminal import fit_lines, output_width, value_cut

    shown = value_cut(session_id, output_width() - len("session "))
    return fit_lines(session_title(path, shown, broken=True), _UNWRAPPED)


def session_title(path: str, session_id: str, *, broken: bool = False) -> str:
    """A heading naming a session log, ``PATH  session ID`` on one line when both fit the terminal
    (:func:`~dsh_audit.report.terminal.title_width`); else the path takes a line of its own, whole
    (never cut: a path is there to be copied; a terminal narrower than it wraps it), and
    ``session ID`` goes to the next (a table breaks its title there, never inside a word). Always
    on one line when piped with no ``COLUMNS``, and in CSV or Markdown. With ``broken`` (a heading
    printed as lines, not a table's title), the two lines are apart already."""
    from ..report.terminal import listing_format, terminal_text, title_width

    suffix = f"  session {terminal_text(session_id)}"
    width = title_width()
    shown = terminal_text(path)
    if listing_format() != "table" or width is None or len(shown) + len(suffix) <= width:
        return shown + suffix  # CSV, Markdown, a pipe, or room for both: one line
    return shown + ("\n" + suffix.lstrip() if broken else suffix)


def stdout_target(targets: Mapping[str, str | None]) -> str | None:
    """The one option of ``targets`` (the option as the user typed it, ``--sarif -`` or ``--json``
    -> path) that writes to stdout (``-``), or None.

    Raises:
        UsageError: several do: their outputs would be mixed (the message names them as typed).

    Example:
        >>> stdout_target({"--sarif -": "-", "--junit": "j.xml"})
        '--sarif -'
    """
    chosen = [name for name, path in targets.items() if path == STDOUT]
    if len(chosen) > 1:
        raise UsageError(f"only one output can go to stdout, not {', '.join(chosen)}", hint="give the others a FILE name")
    return chosen[0] if chosen else None


def write_output(path: str | None, data: str | bytes | Iterable[str], *, what: str) -> None:
    """Write a machine format to ``path``: stdout when it is ``-`` (bytes as they are, text as
    UTF-8), else the file, atomically (:func:`dsh_audit.log.write_atomic`); nothing when None."""
    if path is None:
        return
    if path != STDOUT:
        from ..log import write_atomic

        write_atomic(path, data, what=what)
        return
    if isinstance(data, bytes):
        click.echo(data, nl=False)  # bytes go to the binary stream untouched
    else:
        for piece in [data] if isinstance(data, str) else data:
            click.echo(piece.encode("utf-8", errors="backslashreplace"), nl=False)


def output_help(what: str) -> str:
    """The help of an option that writes ``what`` to a file: the same convention on every command."""
    return f"Write {what} to FILE; '-' writes it to stdout (and nothing else goes there)."
