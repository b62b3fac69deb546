"""Shell words: a path in a command dsh-audit prints for a user to paste (redact's recipient
commands, a gate finding's ``dsh-audit diff`` hint, a baseline's ``--json-report`` hint).

Every layer that prints such a command quotes its paths here, with :func:`shell_word`, so that the
pasted command names exactly the file meant: a path that would be read as an option, or that holds
a character a terminal line shows escaped, is written so that bash and zsh read back its bytes.
"""

from __future__ import annotations

import os
import shlex
import sys

__all__ = ["shell_word"]

#: What a word in ANSI-C quotes (``$'...'``) holds as escapes besides the characters a line cannot
#: show as they are: the quote and the escape character, and bash's history expansion character,
#: which an interactive bash would expand there.
_QUOTED_ESCAPES = frozenset("'\\!")


def shell_word(path: str | os.PathLike[str]) -> str:
    """``path`` as one word that, pasted into bash or zsh, names exactly that file from the current
    folder, and that prints as it is: every character of it printable (:meth:`str.isprintable`, so
    no terminal escaping, ``dsh_audit.report.terminal.terminal_text``, changes it) and one stdout's
    encoding holds.

    A relative path that starts with ``-`` takes ``./`` (else a command reads it as an option). A
    path that holds a control, bidi or zero-width character, a separator other than a space, a
    byte that is not UTF-8 (the lone surrogate :func:`os.fsdecode` holds it as) or, on a stdout
    that cannot write it, any character outside its encoding is given in ANSI-C quotes, each such
    character as the ``\\xHH`` escapes of its bytes on disk (:func:`os.fsencode`); else
    :func:`shlex.quote`.

    Example:
        >>> shell_word("-shared.jsonl"), shell_word("a b.jsonl"), shell_word("tab\\there!.jsonl")
        ('./-shared.jsonl', "'a b.jsonl'", "$'tab\\\\x09here\\\\x21.jsonl'")
        >>> shell_word("bidi\\u202e.jsonl"), shell_word(os.fsdecode(b"x\\xfe.jsonl"))
        ("$'bidi\\\\xe2\\\\x80\\\\xae.jsonl'", "$'x\\\\xfe.jsonl'")
    """
    word = os.fspath(path)
    if word.startswith("-"):
        word = f"./{word}"
    encoding = _stdout_encoding()
    if _shown(word, encoding):
        return shlex.quote(word)
    return "$'" + "".join(char if char not in _QUOTED_ESCAPES and _shown(char, encoding) else
                          "".join(f"\\x{byte:02x}" for byte in os.fsencode(char)) for char in word) + "'"


def _stdout_encoding() -> str:
    """The encoding stdout writes (UTF-8 when it names none)."""
    return getattr(sys.stdout, "encoding", None) or "utf-8"


def _shown(text: str, encoding: str) -> bool:
    """Whether ``text`` prints as it is: every character printable and one ``encoding`` holds (a
    codec this interpreter does not have holds all of them: nothing to judge by)."""
    if not text.isprintable():
        return False
    if text.isascii():
        return True
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return False
    except LookupError:
        return True
    return True
