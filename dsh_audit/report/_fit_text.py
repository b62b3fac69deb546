"""Text fitted to a width: cut in its middle or at its end around a ``…``, its lines wrapped at
spaces, and session ids shortened to their shortest unique prefix (:func:`id_prefixes`, the one
way every table shortens one).

rich (its cell widths) is imported when text is measured, not with this module.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence

from .._seq import common_length
from ._console import output_width
from ._safe_text import _CI_COMMANDS, _escape, stdout_text, terminal_text

__all__ = ["cell_len", "fit_lines", "id_prefixes", "long_words_cut", "middle_cut", "short_ids", "value_cut"]

# A UUID, as a session id holds one (``session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd``).
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)

# A word too long for its line folds after one of the first group when it can (JSON, a path), else
# after one of the second (where a JSON key or object starts: its strings stay whole), else after one
# of the third (a dotted name, an id), else anywhere.
_FOLD_AFTER = (",/", ":{[", ".-_")
# How a word that is a path starts: never cut (:func:`long_words_cut`).
_PATH_STARTS = ("/", "./", "../", "~/")
# A word that is a TOML table's header (``[providers.local-openai.models.local-coder]``), the
# punctuation after it aside: never cut (:func:`long_words_cut`), up to this many characters (a
# 20,000-character model name in one is cut all the same: no one copies that by hand).
_TOML_KEY = re.compile(r"\[[^\[\] \n]+\][,.;:)]*")
_TOML_KEY_MOST = 512
# The marker of a text cut in the middle (:func:`middle_cut`).
_CUT = "…"
# A shortened id keeps at least this many characters of its name (past "session-"), as a UUID's
# keeps its first group: `show` looks a prefix up among every session of the home, not only those
# a table lists (:func:`id_prefixes`).
_ID_LEAST = 8


def _shared_lengths(unique: Sequence[str]) -> list[int]:
    """For each of the sorted, distinct ``unique``, the most leading characters it shares with a
    form another may be named by (:func:`dsh_audit.log.prefix_forms`: with or without its
    ``session-``): one more, and its prefix names it alone in `show`, `explain` and `requests`.

    Example:
        >>> _shared_lengths(["abcdefghij-2", "session-abcdefgh-1"])
        [8, 0]
    """
    from ..log import prefix_forms  # the reader's rule, loaded once ids are cut (not with this module)

    forms = sorted((form, owner) for owner, text in enumerate(unique) for form in prefix_forms(text))
    at = {(form, owner): place for place, (form, owner) in enumerate(forms)}
    # Sorted: the forms sharing the most leading characters with one are the nearest of another id.
    return [max((common_length(text, _nearest(forms, at[text, owner], owner, step)) for step in (-1, 1)))
            for owner, text in enumerate(unique)]


def _nearest(forms: Sequence[tuple[str, int]], place: int, owner: int, step: int) -> str:
    """The first form from ``place`` on, going ``step``, of an id other than ``owner`` ('' past the end)."""
    place += step
    while 0 <= place < len(forms) and forms[place][1] == owner:
        place += step
    return forms[place][0] if 0 <= place < len(forms) else ""


def cell_len(text: str) -> int:
    """``rich.cells.cell_len(text)``, at once for printable ASCII (one cell a character: rich's
    ``_SINGLE_CELL_UNICODE_RANGES`` start with U+0020 to U+007E)."""
    from rich.cells import cell_len as rich_cell_len

    return len(text) if text.isascii() and text.isprintable() else rich_cell_len(text)


def middle_cut(text: str, width: int) -> str:
    """``text`` if it fits ``width`` cells, else its start and end around a ``…`` (a long path);
    shown as stdout can write it (:func:`stdout_text`), an escape never cut.

    Example:
        >>> middle_cut("/home/me/sessions/session-1/session.jsonl", 24)
        '/home/me/se…ession.jsonl'
    """
    return _cut(text, width, keep_end=True)


def value_cut(text: object, width: int | None = None) -> str:
    """A log's value (a session id, a title, a model) where a person reads it outside a table's
    cell (a heading, a note, a warning): shown with :func:`terminal_text` and, when longer than
    ``width`` cells (default :func:`output_width`: one line of the terminal), cut at its end
    around a ``…``, so that a 20,000-character id is one line, not hundreds. Its end, not its
    middle: an id keeps its prefix, which `show`, `explain` and `render` take. ``--json`` and
    ``--format csv`` write the value whole.

    Example:
        >>> value_cut("session-" + "a" * 50, 20), value_cut("ok\\x1b", 20)
        ('session-aaaaaaaaaaa…', 'ok\\\\u001b')
    """
    return _cut(terminal_text(text), output_width() if width is None else width, keep_end=False)


def long_words_cut(text: str, width: int | None = None) -> str:
    """``text`` with each word (a run without spaces or newlines) longer than ``width`` cells
    (default :func:`output_width`) cut in its middle around a ``…`` (:func:`middle_cut`): a note
    quoting a log's value (a 20,000-character model name) is a line, not the hundreds that
    :func:`fit_lines` would fold it into. A word that starts as a path does (``/``, ``./``,
    ``~/``) stays whole: it is there to be copied; so does a TOML table's header (``[a.b]``, of up
    to :data:`_TOML_KEY_MOST` characters), a key a hint asks to write in a file. For a note or a
    warning, not a table's evidence.

    Example:
        >>> long_words_cut("model " + "m" * 30 + " in /" + "p" * 20, 12)
        'model mmmmm…mmmmmm in /pppppppppppppppppppp'
        >>> long_words_cut("a [providers.local-openai.models.local-coder] table", 12)
        'a [providers.local-openai.models.local-coder] table'
    """
    room = output_width() if width is None else width

    def cut(word: str) -> str:
        kept = word.startswith(_PATH_STARTS) or (len(word) <= _TOML_KEY_MOST and _TOML_KEY.fullmatch(word))
        return word if kept else middle_cut(word, room)

    return re.sub(r"[^ \n]{%d,}" % (room + 1), lambda word: cut(word[0]), text)


def _cut(text: str, width: int, *, keep_end: bool) -> str:
    """``text`` if it fits ``width`` cells, else its start (and, ``keep_end``, its end) around a
    ``…``: :func:`middle_cut` keeps a path's file name; cut at its end, an id keeps its prefix
    whole (its end no command takes). Shown as stdout can write it, an escape never cut.

    Example:
        >>> _cut("session-70444d8d-ee1d-43e9-8341-470b57f1019c", 20, keep_end=False)
        'session-70444d8d-ee…'
    """
    from rich.cells import cell_len, set_cell_size

    shown, cut = stdout_text(text), stdout_text(_CUT)
    if cell_len(shown) <= width:
        return shown
    room = max(width - cell_len(cut), 0)
    head, tail = (room // 2, room - room // 2) if keep_end else (room, 0)
    if shown == text and cut == _CUT:
        return set_cell_size(text, head) + _CUT + (_tail(text, tail) if tail else "")
    pieces = [stdout_text(char) for char in text]  # each character, or its escape: cut between them
    return "".join(_fitting(pieces, head)) + cut + "".join(reversed(_fitting(pieces[::-1], tail)))


def _fitting(pieces: Sequence[str], width: int) -> list[str]:
    """The first of ``pieces`` that fit ``width`` cells together."""
    from rich.cells import cell_len

    kept: list[str] = []
    used = 0
    for piece in pieces:
        used += cell_len(piece)
        if used > width:
            break
        kept.append(piece)
    return kept


def _tail(text: str, width: int) -> str:
    """The end of ``text`` that fits ``width`` cells."""
    from rich.cells import cell_len

    at = len(text)
    while at > 0 and cell_len(text[at - 1:]) <= width:
        at -= 1
    return text[at:]


def fit_lines(text: str, width: int | None = None, *, hanging: int = 2,
              whole: Collection[str] = ()) -> list[str]:
    """``text``'s lines, each shown with :func:`terminal_text` (and as stdout can write it:
    :func:`stdout_text`) and wrapped at spaces to ``width`` (default :func:`output_width`), a
    wrapped line's rest indented ``hanging`` past its first line.

    ``text`` is split at its newlines first: they are the caller's own line breaks, so a caller
    escapes any log text in it (:func:`terminal_text`, a newline as ``\\u000a``) before putting it
    there; else a log's newline would start a line of output. A wrapped line that would start a CI
    workflow command (``::error``) has it escaped, as :func:`terminal_text` does a line's start.

    A word longer than a line folds, after a ``,`` or ``/`` when it has one (JSON, a path), else
    after a ``:``, ``{`` or ``[`` (a JSON string is not split at its ``-``: :func:`_fold_at`),
    starting where the line's other words end; but a word of a backquoted command (a hint's
    `` `dsh-audit diff LOG --capture FILE` ``) never folds: too long, it stands whole on a line of
    its own, so that the command copied from the terminal still works. So does a word in ``whole``
    (the log paths a caller names: a path folded at its ``/`` is two lines once copied), the
    brackets and ``,:;`` around it aside; the terminal wraps it, and copies it whole.

    Example:
        >>> fit_lines("  tokens lost: header_change 11968; cost lost $0.0076", 30)
        ['  tokens lost: header_change', '    11968; cost lost $0.0076']
    """
    from rich.cells import cell_len

    room = output_width() if width is None else width
    lines: list[str] = []
    for raw in text.removesuffix("\n").split("\n") if text else ():
        line = stdout_text(terminal_text(raw))
        body = line.lstrip(" ")
        indent = line[:len(line) - len(body)]
        if cell_len(line) <= room or not body:
            lines.append(line)
            continue
        rest = indent + " " * hanging if cell_len(indent) + hanging <= room // 2 else ""
        current, quoted = indent, False
        for at, piece in enumerate(re.findall(r" *[^ ]+", body)):
            word = piece.lstrip(" ")
            unbroken = quoted or "`" in word or word.strip("(),:;") in whole
            quoted ^= word.count("`") % 2 == 1
            if unbroken:  # a command's word, a path: on this line, else whole on the next
                if at and cell_len(current + piece) > room:
                    lines.append(current)
                    current, piece = _ci_safe(rest, word)
                current += piece
                continue
            # A word that fits a line of its own starts one; a longer one (JSON) folds from here,
            # when its first part (up to a "," or "/") fits here.
            head = re.match(r"[^,/]*[,/]?", piece)
            if at and cell_len(current + piece) > room and (
                    cell_len(rest + word) <= room or cell_len(current + (head[0] if head else piece)) > room):
                lines.append(current)
                current, piece = rest, word
            # At the start of a line: fold the word, looking at no more of it than a line can
            # show (a 1 MB word folds in linear time, not by re-measuring and copying its rest).
            window, at_char = 2 * room + 16, 0
            while True:
                if not current.strip() and piece.startswith(_CI_COMMANDS, at_char):  # measured as it is shown
                    current, at_char = current + _escape(piece[at_char]), at_char + 1
                head = piece[at_char:at_char + window]
                if at_char + window >= len(piece) and cell_len(current + head) <= room:
                    break
                cut = _fold_at(head, room - cell_len(current)) if cell_len(current + head) > room else len(head)
                lines.append(current + head[:cut])
                current, at_char = rest, at_char + cut
            current += piece[at_char:]
        lines.append(current)
    return [terminal_text(line) for line in lines]  # escaped already: only a wrapped line's start changes


def _ci_safe(start: str, word: str) -> tuple[str, str]:
    """A wrapped line's ``start`` (its indent) and ``word``, its first, with the first character of
    a CI workflow command escaped (``\\u003a:error``, as :func:`terminal_text` shows it), so that the
    line is measured as it is shown, not 5 cells narrower.

    Example:
        >>> _ci_safe("  ", "::error"), _ci_safe("  ", "ok::")
        (('  \\\\u003a', ':error'), ('  ', 'ok::'))
    """
    if start.strip() or not word.startswith(_CI_COMMANDS):
        return start, word
    return start + _escape(word[0]), word[1:]


def _fold_at(word: str, room: int) -> int:
    """Where to cut ``word`` to fit ``room`` cells: after its last ``,`` or ``/`` that fits, else its
    last ``:``, ``{`` or ``[`` (a JSON value's string is not split at a ``-`` it holds), else its
    last ``.``, ``-`` or ``_``, else at the room.

    Example:
        >>> word = '"config":{"provider":"deepseek-official","model":"x"}'
        >>> word[:_fold_at(word, 30)]
        '"config":{"provider":'
    """
    from rich.cells import cell_len

    low, high = 0, len(word)  # the longest prefix of at most room cells (prefix widths only grow)
    while low < high:
        middle = (low + high + 1) // 2
        if cell_len(word[:middle]) <= room:
            low = middle
        else:
            high = middle - 1
    fits = max(low, 1)
    for group in _FOLD_AFTER:
        soft = max(word.rfind(ch, 0, fits) for ch in group) + 1
        if soft > 0:
            return soft
    return fits


def short_ids(ids: Iterable[str]) -> dict[str, str]:
    """Each id holding a UUID cut to the shortest prefix no other of ``ids`` starts with, in whole
    groups of the UUID, at least its first (`show`, `explain` and `render` accept a unique prefix);
    other ids whole.

    Example:
        >>> ids = ["session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd", "session-86ef2d28-6e7b-43ae-ad66-0aa63a88c3dd",
        ...        "402a1ae8-7f85-40fc-b7cf-82cfc177dcd7", "session-sample-chat"]
        >>> [short_ids(ids)[i] for i in ids]
        ['session-86ef2d28-6e7a', 'session-86ef2d28-6e7b', '402a1ae8', 'session-sample-chat']
    """
    unique = sorted(set(ids))
    return {whole: _uuid_cut(whole, shared + 1) for whole, shared in zip(unique, _shared_lengths(unique))}


def _uuid_cut(whole: str, length: int) -> str:
    """``whole`` cut at the end of a group of the UUID it holds, to ``length`` characters or more and
    at least its first group; whole when it holds none, or the cut would reach the UUID's end."""
    found = _UUID.search(whole)
    if found is None:
        return whole
    length = max(found.start() + 8, length)
    end = whole.find("-", length - 1)  # to the end of the UUID's group it cut into
    return whole if end < 0 or end >= found.end() else whole[:max(end, length)]


def id_prefixes(ids: Sequence[str], *, least: int = _ID_LEAST, mark: str | None = None) -> dict[str, str]:
    """Each of ``ids`` as a table too narrow for whole ids shows it (`sessions`, `check`, `usage`,
    `stats`): its shortest prefix no other of ``ids`` starts with, with or without its ``session-``
    (as `show` matches a prefix: :func:`_shared_lengths`), of at least ``least`` characters
    (:data:`_ID_LEAST`) past ``session-`` (a unique prefix is what `show`, `explain` and `render` take, the
    ``…`` too). One holding a UUID is cut at the end of a group (:func:`short_ids`:
    ``session-86ef2d28``, copied as it is); any other is cut where the rule says, marked ``…`` (it
    may end inside a word), and left whole when that is no narrower. Never cut in its middle: a
    middle cut names no session. On a stdout that cannot write ``…`` (``PYTHONIOENCODING=ascii``)
    the cut has no mark: its escape, ``\\u2026``, pasted into a shell unquoted would lose its
    backslash and name nothing, and `show` reads a backslash as a path's; the caption says the ids
    are prefixes. A text written elsewhere gives its own ``least`` and ``mark`` (the Markdown
    summary: more room, and ``…`` whatever stdout can write).

    Example:
        >>> names = id_prefixes(["session-sample-change", "session-sample-compaction", "fork-child:review",
        ...                      "session-86ef2d28-6e7a-43ae-ad66-0aa63a88c3dd"])
        >>> list(names.values())
        ['session-sample-ch…', 'session-sample-co…', 'fork-chi…', 'session-86ef2d28']
    """
    unique = sorted(set(ids))
    if mark is None:
        mark = _CUT if stdout_text(_CUT) == _CUT else ""
    names: dict[str, str] = {}
    for whole, shared in zip(unique, _shared_lengths(unique)):
        length = max(shared + 1, least + (len("session-") if whole.startswith("session-") else 0))
        uuid = _uuid_cut(whole, length)
        as_uuid = uuid != whole or length + len(mark) >= len(whole)  # a UUID's cut, or whole
        names[whole] = uuid if as_uuid else whole[:length] + mark
    return {whole: names[whole] for whole in ids}
