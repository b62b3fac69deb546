"""The pseudonym of a text (a user's id, a request id's run, a host's name or zone) in printable ASCII, as long as
it, drawn with the salt, which no other text of its kind was given (:func:`redact_ascii`); and the salted draws a
host's placeholder is shaped by (:func:`drawn`, :func:`redrawn`, :func:`draws`), which :mod:`._hosts` reads.
"""

from __future__ import annotations

from ._addresses import shape
from ._redactor import Redactor

__all__ = ["draws", "drawn", "redact_ascii", "redrawn"]

_DRAWS = 16384  # how many characters a port another port of its host took, or a pseudonym another took, is drawn


def redact_ascii(text: str, redactor: Redactor, *, hex_id: bool = False) -> str:
    """The placeholder of ``text`` in printable ASCII, as long as it in characters, the same
    wherever it stands: a digit for a digit, a letter for a letter (its case kept), printable
    ASCII punctuation and spaces kept, a lowercase letter for anything else (a character past
    ASCII, a control: a route file's header value holds none of them, and re-reads as written).
    With ``hex_id`` (``text`` is hex digits and dashes: a UUID), its letters are hex letters: the
    placeholder is a hex id of the same shape. Two texts (two users' ids) never share one.

    Example:
        >>> from dsh_audit.redact import Placeholders
        >>> r = Redactor(Placeholders(b"salt"))
        >>> a = redact_ascii("équipe café\\n", r)
        >>> len(a), a.isascii(), a.isprintable(), a == redact_ascii("équipe café\\n", r) != "équipe café\\n"
        (12, True, True, True)
        >>> u = redact_ascii("cfa76663-0228-491c-98ff-d93176390be7", r, hex_id=True)
        >>> len(u), u.count("-"), set(u) <= set("0123456789abcdef-"), u != "cfa76663-0228-491c-98ff-d93176390be7"
        (36, 4, True, True)
    """
    hex_digits = len(text) if hex_id else 0  # the first free of its draws (:meth:`Redactor.distinct`)
    return redactor.distinct(text, (shape(text, redrawn(text, n, redactor), hex_digits=hex_digits)
                                    for n in range(draws(text))), kind="hex" if hex_id else "ascii")


def draws(text: str) -> int:
    """How many salted draws of ``text`` are read for a placeholder: 256, down to 8 for a long one (slow)."""
    return max(8, min(256, _DRAWS // max(len(text), 1)))


def drawn(text: str, redactor: Redactor) -> str:
    """The salted, prefix-preserving draw of one character per character of ``text``."""
    out = redactor.placeholders.plain(text, lines=False)
    if len(out) != len(text):  # never so (one drawn character a character): letters of its draw then
        out = (out * (len(text) // max(len(out), 1) + 1))[:len(text)] if out else "x" * len(text)
    return out


def redrawn(text: str, attempt: int, redactor: Redactor) -> str:
    """The ``attempt``-th salted draw of ``text`` (the 0th :func:`drawn`'s; each other after a head of its own)."""
    head = f"#{attempt}#" if attempt else ""
    return drawn(head + text, redactor)[len(head):]
