"""The CLI's edge, which every command and the group itself use: the exit codes, the one way a line
reaches stdout or stderr (:func:`echo` and its ``error:``, ``warning:`` and ``note:`` forms: an error
one line always, a warning or a note wrapped at spaces on a terminal, one line piped), running
the group with every error converted to one line (:func:`run_guarded`), an stdout that cannot write
every character or whose reader goes away (:func:`discard_stdout_when_gone`). How an option's value
was given, and the line a usage error is said as: :mod:`dsh_audit.cli._given`.

``import dsh_audit.cli`` and ``--version`` load this module and no other of ``cli/``
(tests/test_layers.py): it imports no library code at import time.
"""

from __future__ import annotations

import codecs
import errno
import io
import os
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

import click

from ..errors import DshAuditError, InternalError, UsageError

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer

    from ..cache import PriceBook

__all__ = ["EXIT_BAD_INPUT", "EXIT_FINDINGS", "EXIT_INTERNAL", "EXIT_OK", "MESSAGE_MAX", "discard_stdout_when_gone",
           "echo", "echo_caveats", "echo_error", "echo_lines", "echo_note", "echo_price_warnings", "echo_status",
           "echo_warning", "echo_wrote", "escape_unencodable_stdout", "on_stdout_gone", "run_guarded", "silence_stdout",
           "warned_of"]

EXIT_OK, EXIT_FINDINGS, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

#: the longest message line on stderr: an error may quote an input (a 5,000-digit option value,
#: a log's text), and a message is for reading, not for carrying the input back
MESSAGE_MAX = 2000


def echo(text: object, *, err: bool = False) -> None:
    """One line on stdout (stderr with ``err``), shown with :func:`terminal_text`: text from a log
    never moves the cursor, never starts a CI workflow command, and stays on one line. A stderr
    line longer than :data:`MESSAGE_MAX` characters keeps its start and end, and says how much of
    its middle was cut."""
    from ..report.terminal import listing_line  # not at import: --version loads no library code

    if err:
        click.echo(_message(text), err=True)
        return
    line, err = listing_line(_shown(text))  # beside a CSV or Markdown listing (--format), as that shows it
    click.echo(line, err=err)


def _shown(text: object) -> str:
    from ..report.terminal import terminal_text  # not at import: --version loads no library code

    return terminal_text(text)


def _message(text: object) -> str:
    """A line for stderr (:func:`echo`): shown with :func:`terminal_text`, cut in its middle past
    :data:`MESSAGE_MAX` characters."""
    line = _shown(text)
    if len(line) > MESSAGE_MAX:
        keep = MESSAGE_MAX // 2
        line = f"{line[:keep]} [... {len(line) - 2 * keep:,} characters cut ...] {line[-keep:]}"
    return line


def echo_status(text: str) -> None:
    """A line on stderr that is no warning, note or error (``watch``'s first line and summary, each
    line of its legend, which ``watch`` folds to the listing's width itself), as a note is said
    (:func:`echo_note`): one line piped, wrapped at spaces on a terminal, a path never cut."""
    _echo_said(None, text)


def _echo_said(level: str | None, text: object) -> None:
    """``LEVEL: TEXT`` on stderr (a warning or a note; no level: ``TEXT``): one line when stderr is
    piped (scripts grep it), else wrapped to the terminal's width (:func:`_wrapped`). An error is
    one line always."""
    line = _message(f"{level}: {text}" if level else text)
    for part in _wrapped(line, _stderr_width()):
        click.echo(_shown(part), err=True)  # a wrapped line's start is a line's start too (``::error``)


def echo_fit(text: object) -> None:
    """One line on stdout (:func:`echo`), wrapped at spaces to the terminal's width when stdout is
    a terminal, as a note is (:func:`_wrapped`: a path never cut, whole on a line of its own when
    wider than it); piped, one line (scripts grep it)."""
    for part in _wrapped(str(text), _stderr_width(sys.stdout)):
        echo(part)


def echo_summary(text: str, *, err: bool = False) -> None:
    """A run's summary line (``diff``'s, ``validate``'s) on stdout (stderr with ``err``), wrapped at
    spaces as a table's caption is (:func:`~dsh_audit.report.terminal.fit_lines`: to the terminal's
    width, ``COLUMNS`` when piped; a word never cut), each line after the first indented two spaces.
    With ``err``, as a note is (:func:`echo_status`): wrapped at spaces on a terminal, one line piped."""
    if err:
        echo_status(text)
        return
    from ..report.terminal import fit_lines  # not at import: --version loads no library code

    for line in fit_lines(text):
        echo(line)


def echo_wrote(path: str, said: str) -> None:
    """``wrote PATH`` and ``said`` (what it holds: `` (format v0, plain): ...``, ``: 1 log(s) ...``)
    on stdout, wrapped at spaces on a terminal as :func:`echo_fit` wraps a line, but the path never
    split, not even at a space it holds: on the first line when it fits there, else whole on a line
    of its own, indented (a narrower terminal wraps it; copied, it is one path), as `check` prints a
    log's path under its table; the rest wrapped below it. Piped, one line."""
    from rich.cells import cell_len

    line = f"wrote {path}{said}"
    width = _stderr_width(sys.stdout)
    if width is None or " " not in path or cell_len(_shown(line)) <= width:
        echo_fit(line)  # one line, or a path with no space: one word, which echo_fit never splits
        return
    stuck, _, rest = said.partition(" ") if said.startswith(":") else ("", "", said.lstrip(" "))
    head = f"wrote {path}{stuck}"
    for part in [head] if cell_len(_shown(head)) <= width else ["wrote", f"  {path}{stuck}"]:
        echo(part)
    if rest:
        echo_fit(f"  {rest}")


def echo_command(said: str, command: str) -> None:
    """``SAID: COMMAND`` on stdout, or, wider than the terminal stdout is, ``SAID:`` and the command
    whole on a line of its own, indented: copied from the terminal, it still runs."""
    from rich.cells import cell_len

    width = _stderr_width(sys.stdout)
    line = f"{said}: {command}"
    for part in [line] if width is None or cell_len(line) <= width else [f"{said}:", f"  {command}"]:
        echo(part)


def _stderr_width(stream: TextIO | None = None) -> int | None:
    """The width of the terminal stderr (or ``stream``) is, None when it is not one (piped, a file)."""
    stream = sys.stderr if stream is None else stream
    try:
        if not stream.isatty():
            return None
        return os.get_terminal_size(stream.fileno()).columns or None
    except (AttributeError, OSError, ValueError):  # no stream, no file descriptor, or closed
        return None


def _wrapped(line: str, width: int | None) -> list[str]:
    """``line`` wrapped at spaces to ``width`` cells (None: whole), each line after the first
    indented two spaces; a word is never cut, a longer one (a path) stays whole on a line of its own.

    Example:
        >>> _wrapped("note: read /a/very/long/path/session.jsonl, not the copy", 16)
        ['note: read', '  /a/very/long/path/session.jsonl,', '  not the copy']
    """
    from rich.cells import cell_len

    if width is None or cell_len(line) <= width:
        return [line]
    lines: list[str] = []
    current = ""
    for piece in re.findall(r" *[^ ]+", line):
        if current.strip() and cell_len(current + piece) > width:
            lines.append(current)
            current = "  " + piece.lstrip(" ")
        else:
            current += piece
    return [*lines, current]


def echo_lines(text: str, *, err: bool = False) -> None:
    """Several lines (a library's ``format_*`` text), each shown with :func:`terminal_text`."""
    for line in text.removesuffix("\n").split("\n") if text else ():
        echo(line, err=err)


#: Whether this run has said an :class:`InternalError` (a dsh-audit bug in one log of many, the
#: others still reported): :func:`run_guarded` then exits 3 whatever the command returns.
_BUG_SAID: list[bool] = [False]


def echo_error(error: DshAuditError | str) -> None:
    """``error: TEXT`` on stderr, once per command run (a capture several logs share that cannot be
    read is one error, not one per log); an :class:`InternalError` makes the run exit 3 (a bug)."""
    if isinstance(error, InternalError):
        _BUG_SAID[0] = True
    context = click.get_current_context(silent=True)
    if context is not None:
        said: set[str] = context.find_root().meta.setdefault("dsh_audit.errors_said", set())
        if str(error) in said:
            return
        said.add(str(error))
    echo(f"error: {error}", err=True)


def echo_warning(text: str) -> None:
    """``warning: TEXT`` on stderr, once per command run (a warning every log of a run shares is said
    once; outside a run every warning is printed). A line that travels with warnings but is a note
    (its ``level`` is ``"note"``: :class:`dsh_audit.session.RouteNote`, which layers of its DSH home
    gave a log's route configuration) is said as ``note: TEXT``, once per run as well. On a
    terminal, a line longer than it is wrapped at spaces (:func:`_echo_said`); piped, one line."""
    context = click.get_current_context(silent=True)
    if context is not None:
        said: set[str] = context.find_root().meta.setdefault("dsh_audit.warned", set())
        if text in said:
            return
        said.add(text)
    _echo_said(getattr(text, "level", "warning"), text)


def warned_of(text: str) -> bool:
    """Whether a warning this command run said (:func:`echo_warning`) holds ``text``: a hint said
    there is not said again."""
    context = click.get_current_context(silent=True)
    said: set[str] = context.find_root().meta.get("dsh_audit.warned", set()) if context is not None else set()
    return any(text in line for line in said)


def echo_note(text: str) -> None:
    """``note: TEXT`` on stderr, wrapped as a warning is (:func:`echo_warning`)."""
    _echo_said("note", text)


def echo_price_warnings(prices: PriceBook) -> None:
    """The warnings of the price files a run prices with (:attr:`PriceBook.warnings`: a provider
    whose rates a request through it is not priced from), each a ``warning:`` on stderr once per
    run (:func:`echo_warning`), in text and JSON modes alike: what a command that loads ``--prices``
    says, whether it prints costs (:func:`echo_caveats`) or stores them (``index``, ``watch``)."""
    for text in prices.warnings:
        echo_warning(text)


def echo_caveats(prices: PriceBook) -> None:
    """The warnings of the price files a run's costs were priced with (:func:`echo_price_warnings`:
    each a ``warning:``), then the caveats of the prices (:meth:`PriceBook.caveats_met`: a year the
    table's holiday list does not cover), each a ``note:`` (its ``level`` is ``"note"``), all on
    stderr once per run by :func:`echo_warning`, in text and JSON modes alike."""
    echo_price_warnings(prices)
    for text in prices.caveats_met():
        echo_warning(text)


#: click's error for a group or command called with no arguments and ``no_args_is_help`` (click 8.2+;
#: click 8.1 prints the help itself, on stdout, and exits 0): an empty tuple catches nothing
_NO_ARGS_IS_HELP: tuple[type[click.UsageError], ...] = tuple(
    getattr(click.exceptions, name) for name in ("NoArgsIsHelpError",) if hasattr(click.exceptions, name))


def run_guarded(command: click.Group) -> int:
    """Run the click group; a DshAuditError becomes one line on stderr and exit 2, a bug (an
    :class:`InternalError`, or any other exception) exit 3, also when the command went on past
    it to report the other logs (the README's exit codes)."""
    _BUG_SAID[0] = False
    _ON_GONE.clear()  # a run's own (an earlier run in this process left its own)
    code = _run_guarded(command)
    return EXIT_INTERNAL if _BUG_SAID[0] and code != 130 else code


def _run_guarded(command: click.Group) -> int:
    try:
        result = command.main(standalone_mode=False)
    except DshAuditError as exc:
        echo_error(exc)
        return EXIT_INTERNAL if isinstance(exc, InternalError) else EXIT_BAD_INPUT
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        return 130
    except _NO_ARGS_IS_HELP as exc:
        # A group (or command) given nothing to do: its help, as --help prints it (the same text, on
        # stdout), not an error line; exit 2, a usage error, as click 8.2+ exits for it: nothing was
        # done, and 1 would say "findings" (git, given no command, also exits non-zero)
        if exc.ctx is not None:  # always set: click makes the error from the context
            click.echo(exc.ctx.get_help(), color=exc.ctx.color)
        return EXIT_BAD_INPUT
    except click.UsageError as exc:
        from ._given import usage_error_text  # here: --version loads no other module of cli/

        echo_error(usage_error_text(exc, command))
        return EXIT_BAD_INPUT
    except click.ClickException as exc:
        shown = io.StringIO()
        exc.show(file=shown)  # the message may quote an argument: escape it like log text
        echo_lines(shown.getvalue(), err=True)
        return EXIT_BAD_INPUT if exc.exit_code == 2 else exc.exit_code
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except BrokenPipeError as exc:
        # stdout's reader went away and the command stopped there: never in the console script
        # (:func:`discard_stdout_when_gone`), so a bug; its exit code is unknown, and a gate
        # (``check | head``) must not pass for it
        silence_stdout()
        return _unexpected(exc)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG and isinstance(exc.filename, str):  # a path given, not a bug
            echo_error(UsageError("file name too long", path=exc.filename, hint="name a shorter path"))
            return EXIT_BAD_INPUT
        return _unexpected(exc)
    except Exception as exc:  # noqa: BLE001 - a bug still ends in one line, never a traceback
        return _unexpected(exc)
    return result if isinstance(result, int) else EXIT_OK


def _unexpected(exc: Exception) -> int:
    """A bug: one line and exit 3 (the traceback with DSH_AUDIT_TRACEBACK set)."""
    if os.environ.get("DSH_AUDIT_TRACEBACK"):
        raise exc
    echo_error(InternalError.unexpected(exc))
    return EXIT_INTERNAL


#: The codecs that write every character: stdout in any of them needs no escapes.
_EVERY_CHARACTER = frozenset({"utf-8", "utf-16", "utf-32", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be",
                              "gb18030"})
_ESCAPES = "dsh-audit-escape"
#: ASCII under another name. click writes UTF-8 to a stream whose codec is named ``ascii`` (a
#: "misconfigured" one, to click) rather than through it, past its error handler: a stream
#: reconfigured to this codec is written to as it is, so every line takes the escapes.
_ASCII = "dsh_audit_ascii"


def _escape(exc: UnicodeError) -> tuple[str, int]:
    """A codec error handler: each character the codec cannot write as the JSON escape of its
    UTF-16 code units (``\\u00e9``; an astral character as its surrogate pair), which is also
    how a JSON line would spell it."""
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    units = exc.object[exc.start:exc.end].encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{units[i]:02x}{units[i + 1]:02x}" for i in range(0, len(units), 2)), exc.end


def _find_codec(name: str) -> codecs.CodecInfo | None:
    """A codec search function that knows :data:`_ASCII` only: the ``ascii`` codec by that name."""
    if name != _ASCII:
        return None
    ascii_codec = codecs.lookup("ascii")
    return codecs.CodecInfo(ascii_codec.encode, ascii_codec.decode, name=_ASCII,
                            incrementalencoder=ascii_codec.incrementalencoder,
                            incrementaldecoder=ascii_codec.incrementaldecoder,
                            streamreader=ascii_codec.streamreader, streamwriter=ascii_codec.streamwriter)


codecs.register_error(_ESCAPES, _escape)
codecs.register(_find_codec)


def escape_unencodable_stdout() -> None:
    """When stdout's encoding cannot write every character (``PYTHONIOENCODING=ascii``, a C locale
    with UTF-8 mode off), write the characters it cannot as JSON escapes (``caf\\u00e9``) instead
    of failing on the first log text outside it (exit 3); stderr likewise. UTF-8 output is left alone.

    Every line then takes the same escapes: a table's text (escaped before it is measured, by
    :func:`dsh_audit.report.terminal.stdout_text`, so that its columns line up), an echoed line,
    and a JSON line, which stays valid JSON of the same values (a ``\\uXXXX`` escape is one in a
    JSON string, the only place such a character can be). A machine format written whole to
    stdout (``report -o -``, ``check --format json``: :func:`write_output`) is UTF-8 bytes, as in a
    file.
    """
    for stream in (sys.stdout, sys.stderr):
        encoding = getattr(stream, "encoding", None)
        if not isinstance(stream, io.TextIOWrapper) or not encoding:
            continue
        try:
            name = codecs.lookup(encoding).name
        except LookupError:
            continue
        if name == "ascii":
            stream.reconfigure(encoding=_ASCII, errors=_ESCAPES)
        elif name not in _EVERY_CHARACTER:
            stream.reconfigure(errors=_ESCAPES)


def silence_stdout(fd: int | None = None) -> None:
    """After a reader closed stdout early (``| head``): point stdout's descriptor (``fd``, else
    ``sys.stdout``'s) at /dev/null, so that no later write or the interpreter's last flush fails
    again (Python's own advice: the note on SIGPIPE in the ``signal`` module's documentation)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno() if fd is None else fd)
    finally:
        os.close(devnull)


def _descriptor(stream: object) -> int | None:
    """The descriptor under ``stream``, or None (a test's capture has none)."""
    try:
        fd = stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):
        return None
    return fd if isinstance(fd, int) and fd >= 0 else None


class _ReaderGoneRaw(io.FileIO):
    """Stdout's descriptor, written as :class:`io.FileIO` writes it until its reader goes away
    (``| head -1``, a pager quit early); from then on what is written is dropped (the descriptor
    points at /dev/null), so that the command runs to its end and exits as it would have: a
    closed stdout never turns a failed ``check`` or ``validate`` into a pass, nor a pass into a
    failure. The descriptor is the process's own stdout (1), kept open: a pager is put behind it
    (:func:`dsh_audit.report._listing.start_pager`) and taken away again, and later writes reach
    the terminal again."""

    def write(self, data: ReadableBuffer, /) -> int:
        try:
            return super().write(data)
        except BrokenPipeError:
            silence_stdout(self.fileno())
            while _ON_GONE:
                _ON_GONE.pop()()
            return memoryview(data).nbytes  # counted as written: none is left to retry


#: What to do when stdout's reader goes away, besides dropping what is written from then on
#: (:func:`on_stdout_gone`); each is done once.
_ON_GONE: list[Callable[[], None]] = []


def on_stdout_gone(action: Callable[[], None]) -> None:
    """Do ``action`` when stdout's reader goes away: a command that runs until it is stopped
    (``watch``) is stopped then, as no line it prints can be read any more; every other command
    runs to its end."""
    _ON_GONE.append(action)


def discard_stdout_when_gone() -> Callable[[], None]:
    """Put :class:`_ReaderGoneRaw` under ``sys.stdout`` (the console script's first step), with the
    stream's own encoding, error handler and buffering; the result puts the former stream back.
    A stdout that is no descriptor (a test's capture) is left as it is: nothing can close it.

    Every command's output takes this one way, click's lines, rich's tables and a machine format
    written whole to ``-`` alike: none of them sees a BrokenPipeError, and the interpreter's last
    flush says nothing ("Exception ignored ...")."""
    former = sys.stdout
    fd = _descriptor(former)
    if not isinstance(former, io.TextIOWrapper) or fd is None:
        return lambda: None
    former.flush()
    raw = _ReaderGoneRaw(fd, "wb", closefd=False)
    # under ``python -u`` the text layer writes to the raw file itself
    buffer = io.BufferedWriter(raw) if isinstance(former.buffer, io.BufferedIOBase) else raw
    sys.stdout = io.TextIOWrapper(buffer, encoding=former.encoding, errors=former.errors,
                                  line_buffering=former.line_buffering, write_through=former.write_through)

    def restore() -> None:
        ours = sys.stdout
        sys.stdout = former
        ours.flush()
        _ON_GONE.clear()

    return restore
