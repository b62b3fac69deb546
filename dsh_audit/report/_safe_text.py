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

__all__ = ["markdown_inline", "markdown_text", "stdout_text", "terminal_text"]

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


# Characters Markdown (CommonMark, GitHub) may read as markup, each shown with a backslash (the one
# set of every Markdown dsh-audit writes: a table, a heading, a listing line, check's summary); and a
# ``$`` that could close ``$...$`` math (a ``\\$`` GitHub shows as a dollar sign): one not followed by a
# digit, as a closing ``$`` never is (pandoc's tex_math_dollars, markdown-it-katex, GitLab: ``$20,000``
# is no math), so no ``$`` left bare closes any: an amount's (``$0.01``) stays, ``$?`` and ``lost $`` gain one.
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>#|~&]|\$(?!\d))")
# A line start Markdown reads as a block that the escapes above leave: an ordered list item, a list
# item or rule (``-``, ``+``), a setext underline (``=``).
_MARKDOWN_BLOCK = re.compile(r"^(?:(\d+)([.)])|([-+=]))")
# Text GitHub would make a link of however its markup characters are escaped. GFM's autolink
# extension (spec section "Autolinks (extension)", https://github.github.com/gfm/#autolinks-extension-)
# links an "extended www autolink" (``www.`` and a valid domain), an "extended url autolink"
# (``http://``, ``https://``; cmark-gfm also ``ftp://``), an "extended email autolink"
# (``a@b.c``) and ``mailto:``/``xmpp:`` ones, wherever they follow a line start, whitespace or
# ``* _ ~ (`` (so ``\(http://x.y\)`` links too). cmark-gfm (and GitHub's later pass, which
# mdast-util-gfm-autolink-literal describes) finds them in text nodes, after backslash escapes and
# character references are resolved: neither ``http\://`` nor ``http&#58;//`` stops them. A code
# span is no text node: its content is literal (CommonMark "Code spans"), and no autolink pass
# enters it. So text holding any of these is shown as a code span, whole.
_AUTOLINKABLE = re.compile(r"://|www\.|mailto:|xmpp:|@[^\s@]*\.", re.IGNORECASE)
_BACKTICKS = re.compile(r"`+")


def markdown_text(text: object) -> str:
    """``text`` as inert Markdown at a line's start (a heading's text, a caption, a listing line):
    :func:`markdown_inline`, leading spaces (which would begin a code block) dropped, and a line
    start that would begin a list, a rule or a heading escaped: a link, an image, HTML, emphasis or a
    table cell break in a log's text stays text.

    Example:
        >>> markdown_text("[x](javascript:alert(1)) <img src=x> | *a*")
        '\\\\[x\\\\](javascript:alert(1)) \\\\<img src=x\\\\> \\\\| \\\\*a\\\\*'
        >>> markdown_text("    - 1. item"), markdown_text("12) x")
        ('\\\\- 1. item', '12\\\\) x')
        >>> markdown_text("[click](http://evil.example.com/x)")
        '`[click](http://evil.example.com/x)`'
    """
    value = markdown_inline(terminal_text(text).lstrip())
    return _MARKDOWN_BLOCK.sub(lambda m: f"{m[1]}\\{m[2]}" if m[1] else f"\\{m[3]}", value, count=1)


def markdown_inline(text: object, *, cell: bool = False) -> str:
    """``text`` as inert Markdown inside a line (``cell``: a table cell's, where a ``|`` would end
    the cell): :func:`terminal_text`, and then every character Markdown may read as markup
    (``\\ ` * _ [ ] < > # | ~ &``, and a ``$`` that could close math, not an amount's) escaped with a
    backslash; or, when GitHub would make a link of the text even so (a URL, ``www.``, an email
    address: :data:`_AUTOLINKABLE`), the text as a code span, whose fence is one backtick longer
    than its longest run of backticks (a ``|`` in a cell's span still escaped: GFM's table reads
    ``\\|`` as a pipe of the cell, code span or not).

    Example:
        >>> markdown_inline("a_b <i>"), markdown_inline("p$x^2$q"), markdown_inline("$1+1=2$ for $0.01")
        ('a\\\\_b \\\\<i\\\\>', 'p\\\\$x^2\\\\$q', '$1+1=2\\\\$ for $0.01')
        >>> markdown_inline("see www.evil.example.com | `x`", cell=True)
        '`` see www.evil.example.com \\\\| `x` ``'
    """
    value = terminal_text(text)
    if not _AUTOLINKABLE.search(value):
        return _MARKDOWN_SPECIAL.sub(r"\\\1", value)
    fence = "`" * (1 + max((len(run) for run in _BACKTICKS.findall(value)), default=0))
    # a span's content that starts or ends with a backtick, or with a space at both ends (which
    # CommonMark strips once), is padded with a space each side
    pad = " " if value[:1] == "`" or value[-1:] == "`" or value[:1] == value[-1:] == " " else ""
    body = value.replace("|", "\\|") if cell else value
    return f"{fence}{pad}{body}{pad}{fence}"


def _markdown_inline(text: str) -> str:
    """A table cell's text as inert Markdown (:func:`markdown_inline` with ``cell``)."""
    return markdown_inline(text, cell=True)
