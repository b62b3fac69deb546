"""Terminal-safe text: every text :mod:`dsh_audit.report.terminal` draws, and every line the CLI
echoes, as inert text.

Text from a log is data, never a terminal control sequence, rich markup or a CI workflow command
(:func:`terminal_text`), nor Markdown markup (:func:`markdown_text`); it is measured as stdout
writes it (:func:`stdout_text`).
"""

from __future__ import annotations

import re
import sys
import unicodedata

__all__ = ["markdown_text", "stdout_text", "terminal_text"]

# Controls (C0, C1, DEL), format characters (bidi overrides and isolates, zero-width), lone
# surrogates, private-use and unassigned code points, line and paragraph separators.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
# A line GitHub Actions (and Azure Pipelines) reads as a command: ``::error ...``, ``##[error]``.
_CI_COMMANDS = ("::", "##[", "##vso[")


def _escape(char: str) -> str:
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8 (argv, a path: surrogateescape), as typed
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def terminal_text(text: object) -> str:
    """``text`` as one inert line for a terminal: the one escaping function of the CLI.

    Control characters (ESC, CSI and OSC introducers, C1, DEL, NUL, BEL, BS, CR, newlines), bidi
    overrides and isolates, other invisible format characters and lone surrogates are shown as
    ``\\uXXXX``, but a byte that was not UTF-8 (U+DC80 to U+DCFF: a command-line argument or a path
    decoded with surrogateescape) as ``\\xNN``, the byte as typed; a line that would start a CI workflow command (``::error``, ``##[``) has its
    first character escaped too. The result is plain text: print it without markup (rich
    :class:`~rich.text.Text`, ``markup=False``), as :mod:`dsh_audit.report.terminal` does.

    Example:
        >>> terminal_text("ok\\x1b]0;pwned\\x07\\u202e\\ud800\\n")
        'ok\\\\u001b]0;pwned\\\\u0007\\\\u202e\\\\ud800\\\\u000a'
        >>> terminal_text("::error::boom")
        '\\\\u003a:error::boom'
    """
    value = text if isinstance(text, str) else str(text)
    if not value.isprintable():
        value = "".join(_escape(ch) if ch != " " and unicodedata.category(ch) in _ESCAPED_CATEGORIES else ch
                        for ch in value)
    stripped = value.lstrip()
    if stripped.startswith(_CI_COMMANDS):
        cut = len(value) - len(stripped)
        value = value[:cut] + _escape(stripped[0]) + stripped[1:]
    return value


def stdout_text(text: str) -> str:
    """``text`` as stdout can write it: itself when stdout's encoding holds all of it (UTF-8
    always), else with each character it cannot hold as the JSON escape of its UTF-16 code units
    (``caf\\u00e9``, an astral character as its surrogate pair), as the CLI's stdout writes such a
    character (:func:`dsh_audit.cli.main`). A table or a folded line is measured on this text, so
    that what stdout writes takes the room it was given (``PYTHONIOENCODING=ascii``).

    Example:
        >>> stdout_text("plain ASCII")
        'plain ASCII'
    """
    if text.isascii():
        return text
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except UnicodeEncodeError:
        return "".join(ch if _encodes(ch, encoding) else _json_escape(ch) for ch in text)
    except LookupError:  # a stream that names no codec this interpreter has: nothing to measure by
        return text
    return text


def _encodes(char: str, encoding: str) -> bool:
    try:
        char.encode(encoding)
    except UnicodeEncodeError:
        return False
    return True


def _json_escape(char: str) -> str:
    """``char`` as the JSON escape of its UTF-16 code units: ``\\u00e9``, ``\\ud83d\\ude00``."""
    units = char.encode("utf-16-be", "surrogatepass")
    return "".join(f"\\u{units[at]:02x}{units[at + 1]:02x}" for at in range(0, len(units), 2))


# Characters Markdown (CommonMark, GitHub) may read as markup, each shown with a backslash.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~&])")
# A line start Markdown reads as a block that the escapes above leave: an ordered list item, a list
# item or rule (``-``, ``+``), a setext underline (``=``).
_MARKDOWN_BLOCK = re.compile(r"^(?:(\d+)([.)])|([-+=]))")


def markdown_text(text: object) -> str:
    """``text`` as inert Markdown: :func:`terminal_text`, every character Markdown may read as markup
    (``\\ ` * _ [ ] < > # | ~ &``) escaped with a backslash, and so is a line start that would begin
    a list, a rule or a heading (leading spaces, which would begin a code block, are dropped): a
    link, an image, HTML, emphasis or a table cell break in a log's text stays text.

    Example:
        >>> markdown_text("[x](javascript:alert(1)) <img src=x> | *a*")
        '\\\\[x\\\\](javascript:alert(1)) \\\\<img src=x\\\\> \\\\| \\\\*a\\\\*'
        >>> markdown_text("    - 1. item"), markdown_text("12) x")
        ('\\\\- 1. item', '12\\\\) x')
    """
    value = _markdown_inline(terminal_text(text).lstrip())
    return _MARKDOWN_BLOCK.sub(lambda m: f"{m[1]}\\{m[2]}" if m[1] else f"\\{m[3]}", value, count=1)


def _markdown_inline(text: str) -> str:
    """``text`` (already shown with :func:`terminal_text`) with Markdown's markup characters escaped."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)
