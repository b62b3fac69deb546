"""A redaction's output printable however many times it is percent-decoded (issue 17, session 43: once was;
``%2510.8.5.6`` decoded twice held U+0010): the escapes a decoding would make a control character of are broken
where they are written, the output's length kept."""

from __future__ import annotations

from urllib.parse import unquote

from ._addresses import _ESCAPES, ESCAPE, _characters, _encoded, _off_hex

__all__ = ["printable_decoded"]


def printable_decoded(text: str) -> str:
    """``text`` (a redaction's output, printable) printable however many times it is percent-decoded (issue 17: once
    was, ``%2510.8.5.6`` decoded twice held U+0010, ``%%3100::aa`` too): each escape some decoding makes whose
    character is no printable one is none, the hex digit as written that its first digit comes from a letter
    (:func:`_off_hex`: ``%25h0.8.5.6``) or, an escape of it, one of that letter (``%%6800::aa``: ``%31`` made that
    ``1``; an escape stays one), one at a time, the first first; ``text`` itself when every decoding is printable,
    as a redaction's mostly is.

    Example:
        >>> printable_decoded("%2510.8.5.6"), printable_decoded("%%3100::aa"), printable_decoded("%2541%25E2%2580%25AE")
        ('%25h0.8.5.6', '%%6800::aa', '%2541%25K2%2580%25AE')
    """
    while (found := _unprintable_escape(text)) is not None:
        at, escaped = found
        off = _off_hex(chr(int(text[at + 1:at + 3], 16)) if escaped else text[at])
        text = text[:at] + (_encoded(off, upper=not text[at:at + 3].islower()) if escaped else off) + \
            text[at + 3 if escaped else at + 1:]
    return text


def _unprintable_escape(text: str) -> tuple[int, bool] | None:
    """Where, as written, the first hex digit stands (with True: the escape that makes it) of the first escape that
    some decoding of ``text`` makes whose character (its UTF-8 bytes' escapes, :func:`_characters`) is no printable
    one; None when there is none. Each character of each decoding is tracked to where it stands as written: itself,
    the escape it is (decoded once), or where its escape's first digit does."""
    origin = [(at, False) for at in range(len(text))]
    once = True
    while ESCAPE.search(text) is not None:
        decoded: list[str] = []
        tracked: list[tuple[int, bool]] = []
        at = 0
        for n, part in enumerate(_ESCAPES.split(text)):
            for piece, _ in _characters(part) if n % 2 else ((part, ""),):
                char = unquote(piece) if n % 2 else piece
                if n % 2 and not char.isprintable():
                    return origin[at + 1]
                if n % 2:
                    tracked += [(origin[at][0], True) if once else origin[at + 1]] * len(char)
                else:
                    tracked += origin[at:at + len(piece)]
                decoded.append(char)
                at += len(piece)
        text, origin, once = "".join(decoded), tracked, False
    return None
