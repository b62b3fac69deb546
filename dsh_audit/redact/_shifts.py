"""The classes a placeholder's bytes move in, and the shifts that move them (what
:mod:`._placeholder` describes: each UTF-8 byte shifted within the bytes UTF-8 allows at its place,
by a draw keyed with the bytes before it; separators and line breaks fixed).

The draws themselves come from the keyed hash state of :class:`._plain.PlainPlaceholders`: here are
the classes, the tables of what each draw makes of a byte, and the placeholder of one multi-byte
character (:func:`_char`) or of a run of ASCII bytes (:func:`_ascii_run`) after a hashed prefix.
"""

from __future__ import annotations

import re
import struct
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ..report import ACTIVE_TEXT

__all__ = ["LINE_BREAKS"]


def _ranges(*spans: tuple[int, int]) -> tuple[int, ...]:
    return tuple(c for lo, hi in spans for c in range(lo, hi + 1))


_ALNUM = _ranges((0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A))
_PUNCT = tuple(c for c in _ranges((0x20, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)) if c not in (0x22, 0x5C))
_QUOTE = tuple(b'"\\')  # escaped as two characters, and as four inside a JSON string inside JSON
_ESC = tuple(b"\b\f\n\r\t")  # two characters, and three inside a JSON string inside JSON
_CTL = tuple(c for c in range(0x20) if c not in _ESC)
_CONT = _ranges((0x80, 0xBF))
_ASCII: dict[int, tuple[int, ...]] = {c: members for members in (_ALNUM, _PUNCT, _QUOTE, _ESC, _CTL) for c in members}
_ASCII[0x7F] = (0x7F,)
#: DEL is one byte that ``JSON.stringify`` writes raw, as it writes punctuation: it gets the placeholder
#: ``~`` would get after the same prefix (every length kept), so no placeholder holds a DEL
_STAND_IN = {0x7F: 0x7E}
#: What blanks a text for Python's ``str.isspace`` or JavaScript's ``trim`` (pi-ai drops a text or thinking
#: block that ``trim()`` leaves empty; Python's set adds U+001C..U+001F and U+0085, JavaScript's U+FEFF).
_SPACES = frozenset("\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
                    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff")
_SPACE_BYTES = frozenset(c.encode("utf-8") for c in _SPACES)
# Before a text's first character that is not a space (:data:`_SPACES`): a space stays itself and any
# other ASCII character moves among the non-spaces of its class, so a text is blank after as before
_LEADING: dict[int, tuple[int, ...]] = {
    c: (c,) if chr(c) in _SPACES else tuple(m for m in members if chr(m) not in _SPACES)
    for c, members in _ASCII.items()}
# lead byte -> (its class of lead bytes, the class of the byte after it, given that byte), per UTF-8's
# rules, so that every output is valid UTF-8 (or a lone surrogate, as Python holds it) of the same width
# C2 leads U+0080..U+00BF alone: its C1 controls (U+0080..U+009F) are never drawn, so the byte after it moves
# among A0..BF (a placeholder of one of them keeps its lead byte, as one of U+0800..U+0FFF keeps E0)
_LEAD2 = _ranges((0xC3, 0xDF))
_C2_SECOND = _ranges((0xA0, 0xBF))
_LEAD3 = _ranges((0xE1, 0xEC), (0xEE, 0xEF))
_LEAD4 = _ranges((0xF1, 0xF3))
_ED_SECOND = (_ranges((0x80, 0x9F)), _ranges((0xA0, 0xAF)), _ranges((0xB0, 0xBF)))  # BMP, high, low surrogate
_E0_SECOND, _F0_SECOND, _F4_SECOND = _ranges((0xA0, 0xBF)), _ranges((0x90, 0xBF)), _ranges((0x80, 0x8F))


def _lead(byte: int) -> tuple[tuple[int, ...], int]:
    """The class of lead byte ``byte`` and the width of its character."""
    if byte in _LEAD2:
        return _LEAD2, 2
    if byte == 0xC2:
        return (byte,), 2
    if byte in _LEAD3:
        return _LEAD3, 3
    if byte in (0xE0, 0xED):
        return (byte,), 3
    if byte in _LEAD4:
        return _LEAD4, 4
    return (byte,), 4  # F0 and F4


def _second(lead: int, byte: int) -> tuple[int, ...]:
    """The class of the byte after lead byte ``lead`` (``byte``: that byte), a module constant."""
    if lead == 0xE0:
        return _E0_SECOND
    if lead == 0xC2:
        return _C2_SECOND
    if lead == 0xED:
        return next(c for c in _ED_SECOND if byte in c)
    if lead == 0xF0:
        return _F0_SECOND
    if lead == 0xF4:
        return _F4_SECOND
    return _CONT


#: A path's separators: never replaced nor produced (the other members of their class walk past
#: them), so a placeholder has its text's shape as a path, absolute or not on the platform that
#: wrote it (DSH212), wherever the text is.
_SEPARATORS = frozenset(b"/\\")
#: What Python's ``str.splitlines`` ends a line at (``\n``, ``\r`` and so ``\r\n``, ``\v``, ``\f``,
#: ``\x1c``-``\x1e``, U+0085, U+2028, U+2029): never replaced nor produced either, so a text keeps its
#: lines, and a line diff of two versions of a system prompt (``breaks``, ``explain``) keeps its hunks.
LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
#: The single bytes no placeholder replaces nor produces: separators and ASCII line breaks.
_FIXED = _SEPARATORS | frozenset(ord(c) for c in LINE_BREAKS if c < "\x80")
_WIDE_BREAKS = frozenset(c.encode("utf-8") for c in LINE_BREAKS if c >= "\x80")
_ASCII_BREAKS = frozenset(ord(c) for c in LINE_BREAKS if c < "\x80")


def _shift(byte: int, members: tuple[int, ...], draw: int, fixed: frozenset[int] = _FIXED) -> int:
    size = len(members)
    if size == 1 or byte in fixed:
        return byte
    step = 1 + draw % (size - 1)
    out = members[(members.index(byte) + step) % size]
    while out in fixed:  # cycle walking: a bijection of the class's other members
        out = members[(members.index(out) + step) % size]
    return out


def _shifts(byte: int, members: tuple[int, ...], fixed: frozenset[int] = _FIXED) -> tuple[int, ...] | None:
    """What :func:`_shift` makes of ``byte`` for each draw, by the draw modulo ``len(members) - 1`` (the
    only part of it :func:`_shift` reads); None when it leaves ``byte`` itself whatever the draw. Made
    once per byte and class, so a placeholder costs a hash and a lookup per byte (no search of its class).

    Example:
        >>> table = _shifts(ord("a"), _ALNUM)
        >>> [table[d % len(table)] == _shift(ord("a"), _ALNUM, d) for d in (0, 7, 60, 10**20)], _shifts(0x2F, _PUNCT)
        ([True, True, True, True], None)
    """
    if len(members) == 1 or byte in fixed:
        return None
    return tuple(_shift(byte, members, draw, fixed) for draw in range(len(members) - 1))


def _ascii_tables(fixed: frozenset[int]) -> tuple[tuple[tuple[int, ...] | None, ...], ...]:
    """:func:`_shifts` of every ASCII byte in its class (:data:`_ASCII`) and, before a text's first
    character that is no space, in its leading class (:data:`_LEADING`): ``[leading][byte]``."""
    return (tuple(_shifts(_STAND_IN.get(c, c), _ASCII[_STAND_IN.get(c, c)], fixed) for c in range(0x80)),
            tuple(_shifts(_STAND_IN.get(c, c), _LEADING[_STAND_IN.get(c, c)], fixed) for c in range(0x80)))


# ASCII bytes' shifts by whether line breaks stay (:meth:`._plain.PlainPlaceholders.plain` ``lines``), then
# [leading][byte]
_ASCII_SHIFTS = {True: _ascii_tables(_FIXED), False: _ascii_tables(_SEPARATORS)}
# The same, each as a table every byte has (a byte :func:`_shifts` leaves itself: only itself) and its length,
# for :func:`_ascii_run`: by whether line breaks stay
_RUN_TABLES = {lines: tuple((table or (c,)) for c, table in enumerate(tables[0]))
               for lines, tables in _ASCII_SHIFTS.items()}
_RUN_SIZES = {lines: tuple(map(len, tables)) for lines, tables in _RUN_TABLES.items()}
# A run of ASCII bytes (that are no line breaks, when those stay) that :func:`_ascii_run` draws at once
_RUNS = {True: re.compile(rb"[\x00-\x09\x0e-\x1b\x1f-\x7f]+"), False: re.compile(rb"[\x00-\x7f]+")}
_SINGLE_BYTES = tuple(bytes((c,)) for c in range(256))
_SHORT_RUN = 24  # a shorter run is drawn byte by byte (drawing at once costs more than it saves there)
_RUN_CHUNK = 1 << 16  # the bytes drawn per batch of digests (bounds the lists a long run makes)
# A multi-byte character's bytes' shifts (no byte of one is fixed), made when first needed: by the class
# (a module constant, so its id is stable) and the byte
_WIDE_SHIFTS: dict[tuple[int, int], tuple[int, ...]] = {}


def _class_members(pattern: str) -> Iterator[int]:
    """The code points of a regular expression that is one character class of characters and ranges."""
    body, at = pattern[1:-1], 0
    while at < len(body):
        if at + 2 < len(body) and body[at + 1] == "-":
            yield from range(ord(body[at]), ord(body[at + 2]) + 1)
            at += 3
        else:
            yield ord(body[at])
            at += 1


# A multi-byte character a terminal or an editor acts on rather than shows (C1 controls, bidi overrides and
# isolates, zero-width and other format characters, line and paragraph separators: the set every JSON output
# of dsh-audit escapes, :data:`dsh_audit.report._json.ACTIVE_TEXT`), but for a lone surrogate, which only a lone
# surrogate may stand for (its lengths)
_ACTING = frozenset(chr(c).encode() for c in _class_members(ACTIVE_TEXT.pattern)
                    if c >= 0x80 and not 0xD800 <= c <= 0xDFFF)


def _stand_in(char: bytes) -> bytes:
    """What the acting character ``char`` (:data:`_ACTING`) is drawn as: the next character after it, of its
    width and class of lead bytes, that acts not and is no space nor line break (sharing its first bytes,
    mostly all but the last, so a placeholder of it first differs from one of its neighbours where they did).

    Example:
        >>> [hex(ord(_stand_in(c.encode()).decode())) for c in ("\\x80", "\\x9f", "\\xad", "\\u202e", "\\U000e0041")]
        ['0xa1', '0xa1', '0xae', '0x2030', '0xe0080']
    """
    code, classes = ord(char.decode("utf-8")), _lead(char[0])
    while True:
        code += 1
        new = chr(code).encode("utf-8")
        if (_lead(new[0]) == classes and new not in _ACTING and chr(code) not in _SPACES
                and chr(code) not in LINE_BREAKS):
            return new


_STAND_INS = {char: _stand_in(char) for char in _ACTING}


def _shown(state: Any, char: bytes, avoid: frozenset[bytes]) -> bytes:
    """The placeholder of the multi-byte character ``char`` after the prefix hashed into ``state``
    (:func:`_char`) that is no character a terminal acts on (:data:`_ACTING`) nor one of ``avoid``: the
    class's cycle walked past them (a bijection of the rest of its class). A character that acts is first
    taken as its stand-in (:func:`_stand_in`), so it gets the placeholder that one gets there: no
    placeholder holds such a character, at the cost that it and its stand-in, after the same prefix, get the
    same one (texts that differ only there and at no later character of their line get equal placeholders).

    Example:
        >>> from dsh_audit.redact import Placeholders
        >>> state = Placeholders(b"salt")._hash.copy()
        >>> [_shown(state, c.encode(), frozenset()) in _ACTING for c in ("\\u202e", "\\x85", "\\u200b", "\\U000e0041")]
        [False, False, False, False]
        >>> _shown(state, "\\u202e".encode(), frozenset()) == _shown(state, "\\u2030".encode(), frozenset())
        True
    """
    if char in _ACTING:
        char = _STAND_INS[char]
    new = _char(state, char)
    while new in avoid or new in _ACTING:  # cycle walking
        new = _char(state, new)
    return new


#: A placeholder's C0 controls (its lengths need them elsewhere: one UTF-8 byte that ``JSON.stringify``
#: writes as six) as letters and digits, in a text no verdict measures (:func:`printable`)
_CONTROL_LETTERS = {c: _ALNUM[c] for c in range(0x20)} | {0x85: "N", 0x2028: "L", 0x2029: "P"}


def printable(placeholder: str) -> str:
    """``placeholder`` with each C0 control (line breaks and tabs too) and each other line break a
    whitespace-only segment kept (U+0085, U+2028, U+2029) as a letter or a digit: for a text whose
    lengths no verdict reads, a header's ``cwd``, which then holds no control character at all.

    Example:
        >>> printable("/a\\x1bb\\x07/\\n")
        '/aRb7/A'
    """
    return placeholder.translate(_CONTROL_LETTERS)


def printable_value(value: Any) -> Any:
    """``value`` (a redacted JSON value no verdict measures: a header's member DSH does not define)
    with each string, and each object key, :func:`printable`; a key that would then be another key
    of its object stays as it is.

    Example:
        >>> printable_value({"a\\x1b": ["x\\n", 1, {"b": "\\x07"}], "aR": None})
        {'a\\x1b': ['xA', 1, {'b': '7'}], 'aR': None}
    """
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, list):
        return [printable_value(item) for item in value]
    if not isinstance(value, dict):
        return value
    names = [printable(key) if isinstance(key, str) else key for key in value]
    taken = Counter(names)
    return {(new if taken[new] == 1 and (new == key or new not in value) else key): printable_value(item)
            for (key, item), new in zip(value.items(), names)}


def _classes(char: bytes) -> list[tuple[int, ...]]:
    """The class of each byte of the multi-byte character ``char`` (:func:`_lead`, :func:`_second`)."""
    lead, width = _lead(char[0])
    return [lead, _second(char[0], char[1])] + [_CONT] * (width - 2)


def _char(state: Any, char: bytes) -> bytes:
    """The placeholder of one multi-byte character ``char`` after the prefix hashed into ``state``: each
    byte shifted within the bytes UTF-8 allows at its place, by a draw keyed with the bytes before it
    (a bijection of the characters of its class, given ``state``)."""
    out = bytearray(char)
    hashed = state.copy()
    for at, members in enumerate(_classes(char)):
        if len(members) > 1:  # a lead byte alone in its class (E0, ED, F0, F4) stays, as _shift leaves it
            key = (id(members), char[at])
            table = _WIDE_SHIFTS.get(key)
            if table is None:
                table = _WIDE_SHIFTS[key] = _shifts(char[at], members, frozenset()) or (char[at],)
            out[at] = table[int.from_bytes(hashed.digest(), "big") % len(table)]  # digest() leaves the state
        hashed.update(char[at:at + 1])
    return bytes(out)


def _ascii_run(state: Any, data: bytes, start: int, stop: int, out: bytearray, lines: bool) -> None:
    """The placeholder of the run ``data[start:stop]`` (ASCII bytes, no line break when ``lines``, after
    the first character of its text that is no space) into ``out[start:stop]``, after the prefix hashed
    into ``state``, which it updates with the run: what :meth:`._plain.PlainPlaceholders._bytes` makes
    of it byte by byte (each byte's table read with the draw of the prefix before it), the per-byte
    work done in C as far as it goes. The digest of each prefix is still drawn (the scheme is per prefix), but from one
    state updated in place (``digest()`` leaves a state as it is), the draws unpacked in one call and the
    bytes looked up in one pass, a batch of bytes at a time.

    Example:
        >>> from dsh_audit.redact import Placeholders
        >>> p = Placeholders(b"salt")
        >>> state, out = p._hash.copy(), bytearray(b"???????")
        >>> _ascii_run(state, b"-xa/b c", 1, 7, out, True)
        >>> out[1:].decode() == p.plain("xa/b c"), out[:1], state.digest() == p._hash.copy().digest()
        (True, bytearray(b'?'), False)
    """
    tables, sizes = _RUN_TABLES[lines], _RUN_SIZES[lines]
    update, digest, single = state.update, state.digest, _SINGLE_BYTES.__getitem__
    for at in range(start, stop, _RUN_CHUNK):
        chunk = data[at:min(at + _RUN_CHUNK, stop)]
        digests = [digest()]  # of the prefix before each byte: updated with the byte before, then drawn
        digests += [digest() for byte in map(single, chunk[:-1]) if not update(byte)]
        update(chunk[-1:])
        draws = struct.unpack(f">{len(chunk)}Q", b"".join(digests))
        out[at:at + len(chunk)] = bytes([tables[byte][draw % sizes[byte]] for byte, draw in zip(chunk, draws)])
