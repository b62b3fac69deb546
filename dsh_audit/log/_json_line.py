"""JSON parsing as JavaScript does it, one line at a time, huge lines without a second copy."""

from __future__ import annotations

import json
import secrets
from typing import Any

import orjson

from .._json import MAX_DEPTH, NestingError, depth_exceeds, refuse_constant
from ._json_room import _ROOM_CHECKED, ensure_room

__all__ = ["LongStrings", "MAX_DEPTH", "NestingError", "parse_json"]


def _number_int(literal: str) -> int | float:
    """An integer literal as orjson reads it: an int from -2**63 to 2**64 - 1, else the nearest
    float, which past the largest double is infinity, as ``JSON.parse`` reads ``1`` and 400 zeros
    (a Python int of 400 digits in a token count overflowed the cost arithmetic).

    Example:
        >>> _number_int("18446744073709551615"), _number_int("18446744073709551616"), _number_int("1" + "0" * 400)
        (18446744073709551615, 1.8446744073709552e+19, inf)
    """
    if len(literal) <= 20:
        value = int(literal)
        if -(2**63) <= value < 2**64:
            return value
    return float(literal)  # no digit limit, unlike int()


class LongStrings:
    """The long string literals of one huge line, decoded once and shared by every parse of it.

    A line read by two consumers (the reader and the validation rules that see its lines) is
    parsed twice; with the same ``LongStrings`` the second parse reuses the first one's long
    strings (immutable ``str`` objects) instead of holding a second copy of them.
    """

    __slots__ = ("spans",)

    def __init__(self) -> None:
        #: ``(start, end, text)`` of each long literal; None until the line is first parsed
        self.spans: list[tuple[int, int, str]] | None = None


# A line longer than this has its long strings decoded one by one, not by one orjson call (which
# holds a copy of the whole input besides the line and the strings it makes).
_HUGE = 16 << 20
_LONG = 1 << 20  # a string literal longer than this is decoded on its own
_PIECE = 1 << 20  # long literals are checked and decoded in pieces of about this size


def parse_json(raw: bytes | bytearray, strings: LongStrings | None = None) -> Any:
    """Parse one line the way ``JSON.parse`` would (lone surrogates allowed; an integer past 64 bits
    is the nearest double, infinity past the largest, as orjson and ``JSON.parse`` read it).

    A line of more than 16 MiB costs memory for the line and for what it parses to, once: its
    long strings are decoded one by one (and shared through ``strings`` by every parse of the
    same line), the rest by one call, so that no whole second copy of the line is made.

    Raises ValueError on invalid JSON (``NaN`` and ``Infinity`` included, as in JavaScript),
    UnicodeDecodeError on bytes that are not UTF-8, and NestingError (a ValueError) on arrays or
    objects nested more than :data:`MAX_DEPTH` levels deep, which ``JSON.parse`` reads but the
    recursive Python code downstream (serialisers, differs) cannot.
    """
    if len(raw) > _HUGE:
        value = _parse_huge(raw, strings or LongStrings())
        if value is not _NOT_PARSED:
            return value
    return _parse_whole(raw)



def _parse_whole(raw: bytes | bytearray) -> Any:
    # refused before orjson might run out of memory (a crash), with room left to say so: parsing
    # with the standard library's parser instead leaves none for the work that follows (a short
    # line, as nearly every line is, is never checked: no call)
    if len(raw) > _ROOM_CHECKED:
        ensure_room(raw)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        text = raw.decode("utf-8")  # UnicodeDecodeError propagates: the caller reports it
        try:
            value = json.loads(text, parse_constant=refuse_constant, parse_int=_number_int)
        except RecursionError:
            raise NestingError(f"JSON nested more than {MAX_DEPTH} levels deep") from None
    # Nesting deeper than MAX_DEPTH takes more than MAX_DEPTH openers, each closed: a shorter line
    # is not counted (the counts cost a pass over the line each).
    if (len(raw) > 2 * MAX_DEPTH and raw.count(b"[") + raw.count(b"{") > MAX_DEPTH
            and depth_exceeds(value, MAX_DEPTH)):
        raise NestingError(f"JSON nested more than {MAX_DEPTH} levels deep")
    return value


_NOT_PARSED = object()


def _parse_huge(raw: bytes | bytearray, strings: LongStrings) -> Any:
    """A huge line with its long literals decoded apart; ``_NOT_PARSED`` when the line holds
    none, or is not valid JSON (then the one-call path parses it and reports the error exactly).

    The rest of the line is parsed with each long literal replaced by a placeholder string that
    holds a random token (no log can spell it), and the placeholders are then swapped back. This
    equals parsing the whole line: a literal is taken out only when its text is a valid JSON
    string body, and the line outside the literals is kept byte for byte, so the parse of what
    remains succeeds only when the quotes that bound the literals are the ones JSON sees.
    """
    if strings.spans is None:
        strings.spans = []
        quotes = _string_quotes(raw)
        if quotes is None or len(quotes) % 2:
            return _NOT_PARSED
        spans = []
        for start, end in zip(quotes[::2], quotes[1::2]):
            if end - start > _LONG:
                text = _string_body(raw, start + 1, end)
                if text is None:
                    return _NOT_PARSED
                spans.append((start, end + 1, text))
        strings.spans = spans
    if not strings.spans:
        return _NOT_PARSED
    mark = f"\x00dsh-audit:{secrets.token_hex(8)}:"
    parts, at = [], 0
    for number, (start, end, _) in enumerate(strings.spans):
        parts += [raw[at:start], orjson.dumps(f"{mark}{number}")]
        at = end
    parts.append(raw[at:])
    try:
        value = _parse_whole(b"".join(parts))  # the depth of what remains is the depth of the line
    except ValueError:
        return _NOT_PARSED
    return _swap_back(value, mark, [text for _, _, text in strings.spans])


def _string_quotes(raw: bytes | bytearray) -> list[int] | None:
    """Where the unescaped double quotes of ``raw`` are (None: too many to be worth it).

    In JSON a quote is escaped exactly when an odd run of backslashes precedes it. The line is
    looked at in pieces that never end inside a run of backslashes, each with its escaped
    backslashes and then its escaped quotes blanked out (C speed), so only the quotes that open
    or close a string are left to find.
    """
    quotes: list[int] = []
    limit = len(raw) // 256 + 4096  # more quotes than this: mostly short strings, not worth it
    at = 0
    while at < len(raw):
        end = min(at + _PIECE, len(raw))
        while end < len(raw) and raw[end - 1] == 0x5C:  # a piece never ends inside a run of backslashes
            window = raw[end:end + _PIECE]
            end = min(end + len(window) - len(window.lstrip(b"\\")) + 1, len(raw))
        piece = raw[at:end]
        if b"\\" in piece:
            piece = piece.replace(b"\\\\", b"__").replace(b'\\"', b"__")
        found = piece.find(b'"')
        while found != -1:
            quotes.append(at + found)
            if len(quotes) > limit:
                return None
            found = piece.find(b'"', found + 1)
        at = end
    return quotes


def _string_body(raw: bytes | bytearray, start: int, end: int) -> str | None:
    """The text of the JSON string body ``raw[start:end]``, or None when it is not a valid one.

    Checked piece by piece by the same parser as every line; a body without escapes is then
    decoded straight from the line, one with escapes joined from its decoded pieces.
    """
    escapes = raw.find(b"\\", start, end) != -1
    pieces: list[str] = []
    at = start
    while at < end:
        cut = min(at + _PIECE, end)
        while cut < end and raw[cut] & 0xC0 == 0x80:  # not inside a UTF-8 sequence
            cut -= 1
        for _ in range(8):  # an escape is at most 6 bytes: one of 8 cuts ends on a whole one
            piece = _piece_text(memoryview(raw)[at:cut])
            if piece is not None or cut == end or cut - at <= 8:
                break
            cut -= 1
        if piece is None:
            return None
        if escapes:
            if pieces and piece and "\ud800" <= pieces[-1][-1:] <= "\udbff" and "\udc00" <= piece[0] <= "\udfff":
                # an escaped surrogate pair cut in two: JSON reads it as one character
                pair = pieces[-1][-1] + piece[0]
                pieces[-1] = pieces[-1][:-1] + pair.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
                piece = piece[1:]
            pieces.append(piece)
        at = cut
    if not escapes:
        return str(memoryview(raw)[start:end], "utf-8")
    return "".join(pieces)


def _piece_text(body: memoryview) -> str | None:
    """The text of a piece of a string body, or None when it is not a valid one on its own."""
    literal = b"".join((b'"', body, b'"'))
    ensure_room(literal)
    try:
        text = orjson.loads(literal)
    except orjson.JSONDecodeError:
        try:
            text = json.loads(literal.decode("utf-8"))  # lone surrogates, which orjson refuses
        except ValueError:
            return None
    return text if isinstance(text, str) else None


def _swap_back(value: Any, mark: str, texts: list[str]) -> Any:
    """``value`` with each placeholder string ``mark + number`` replaced by ``texts[number]``."""
    if isinstance(value, str):
        return texts[int(value[len(mark):])] if value.startswith(mark) else value
    stack = [value]
    while stack:
        item = stack.pop()
        children: list[tuple[Any, Any]]
        if isinstance(item, dict):
            if any(key.startswith(mark) for key in item):
                return _NOT_PARSED  # a megabyte-long key: not worth a second way to build objects
            children = list(item.items())
        else:
            children = list(enumerate(item))
        for key, child in children:
            if isinstance(child, str):
                if child.startswith(mark):
                    item[key] = texts[int(child[len(mark):])]
            elif isinstance(child, (dict, list)):
                stack.append(child)
    return value
