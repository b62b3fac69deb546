"""Storage records: JSON parsing as JavaScript does it, packed chunk rows, and DSH's shape checks.

Every check here returns a message string (the diagnostic DSH would give) or None; the reader
decides what a failure means for the whole log.
"""

from __future__ import annotations

import json
import secrets
from itertools import accumulate, count
from typing import Any, TypeGuard

import orjson

from .._json import MAX_DEPTH, NestingError, refuse_constant
from ..jsjson import fits_in_memory, memory_left, memory_limited
from ._types import CHUNK_ROW_TYPES

__all__ = [
    "LongStrings",
    "MAX_DEPTH",
    "NestingError",
    "RowError",
    "adapter_defaults_error",
    "ensure_room",
    "envelope_error",
    "expand_row",
    "message_shape_error",
    "parse_json",
]

MAX_SAFE = 2**53 - 1


class RowError(Exception):
    """A packed chunk row that fails DSH's strict row validation."""


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


# orjson 3.13.0 crashes the process (SIGSEGV) instead of raising MemoryError when an allocation
# fails while it parses, as it does under a memory limit (``ulimit -v`` RLIMIT_AS, ``ulimit -d``). Its peak
# address space, measured per input byte (VmPeak less VmSize before, on Linux x86-64): 13 for one long
# string, 22 for a body of 400,000 chat messages, 43 at most for arrays of tiny values (``[1,1,...]``,
# ``[[],[],...]``), where each ``{``, ``[``, ``,`` or ``:`` costs at most 73 bytes beyond 13 per byte.
_ROOM_CHECKED = 1 << 20  # a text longer than this is checked before orjson parses it
_ROOM_PER_BYTE = 16
_ROOM_PER_ITEM = 96  # per ``{``, ``[``, ``,`` and ``:`` of the JSON structure (not those inside strings)
_ITEMS = b"{[,:"
_COUNT_PIECE = 1 << 18  # bytes counted at once (the structure count holds about 12 times this)


def _item_bound(raw: bytes | bytearray | str) -> int:
    """How many ``{``, ``[``, ``,`` and ``:`` ``raw`` holds, those inside strings too: more than
    its structure has, counted at C speed (a piece at a time, not one pass per character)."""
    if isinstance(raw, str):
        return raw.count("{") + raw.count("[") + raw.count(",") + raw.count(":")
    return sum(len(piece) - len(piece.translate(None, _ITEMS))
               for piece in (raw[at:at + _COUNT_PIECE] for at in range(0, len(raw), _COUNT_PIECE)))


def _structure_count(raw: bytes | bytearray | str) -> int:
    """How many ``{``, ``[``, ``,`` and ``:`` of ``raw`` are JSON structure, outside strings: exact
    for valid JSON, and for invalid JSON up to where a parser stops (it reads strings as this does).

    A piece never ends inside a run of backslashes; in each, escaped backslashes and then escaped
    quotes are blanked out, so the quotes left bound the strings, and the text between them is
    counted at C speed.

    Example:
        >>> line = b'{"text": "a, b: [c]", "n": [1, 2]}'
        >>> _structure_count(line), _item_bound(line)
        (6, 9)
    """
    count = at = 0
    inside = 0  # 1 while the text read so far ends inside a string
    while at < len(raw):
        end = min(at + _COUNT_PIECE, len(raw))
        while end < len(raw) and raw[end - 1] in (0x5C, "\\"):
            window = raw[end:end + _COUNT_PIECE]
            rest = window.lstrip("\\") if isinstance(window, str) else window.lstrip(b"\\")
            end = min(end + len(window) - len(rest) + 1, len(raw))
        piece = raw[at:end]
        data = piece.encode("utf-8", "surrogatepass") if isinstance(piece, str) else piece
        if b"\\" in data:
            data = data.replace(b"\\\\", b"__").replace(b'\\"', b"__")
        segments = data.split(b'"')
        outside = b"".join(segments[inside::2])
        count += len(outside) - len(outside.translate(None, _ITEMS))
        inside ^= (len(segments) - 1) & 1
        at = end
    return count


def ensure_room(raw: bytes | bytearray | str) -> None:
    """Raise MemoryError when parsing ``raw`` with orjson might not fit in the address space left.

    orjson segfaults when memory runs out (see above); this turns that into the MemoryError callers
    report as one line (a capture: "the capture does not fit in memory"). The check is
    :func:`dsh_audit.jsjson.fits_in_memory`, the one made before orjson writes anything large too:
    only a finite limit (RLIMIT_AS, ``ulimit -v``; RLIMIT_DATA, ``ulimit -d``) can be checked, and a
    text of 1 MiB or less, or a system without ``/proc/self/statm``, is not. A ``str`` counts as
    UTF-8 of 4 bytes a character unless it is ASCII.

    The need is bounded ever closer, each bound at most the one before, until one fits: every byte
    taken as structure (no count), then every ``{``, ``[``, ``,`` and ``:`` (a count at C speed,
    a fraction of the parse), then only those outside strings (slower on many short strings:
    made only when the others would refuse a text that may well fit, such as prose or code full of
    commas in a few long strings).

    Example:
        >>> ensure_room(b"{}")  # small: never checked
    """
    size = len(raw) if not isinstance(raw, str) or raw.isascii() else 4 * len(raw)
    if size <= _ROOM_CHECKED or not memory_limited():  # no limit: nothing to count (a count costs a parse)
        return
    need = 0
    for items in (size, _item_bound, _structure_count):  # size: every byte an item (each is one byte)
        need = _ROOM_PER_BYTE * size + _ROOM_PER_ITEM * (items if isinstance(items, int) else items(raw))
        if fits_in_memory(need):
            return
    left = memory_left() or 0
    raise MemoryError(f"parsing {size} bytes of JSON needs about {need >> 20} MiB of memory, "
                      f"{max(left, 0) >> 20} MiB are left under the limit")


def _parse_whole(raw: bytes | bytearray) -> Any:
    # refused before orjson might run out of memory (a crash), with room left to say so: parsing
    # with the standard library's parser instead leaves none for the work that follows
    ensure_room(raw)
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        text = raw.decode("utf-8")  # UnicodeDecodeError propagates: the caller reports it
        try:
            value = json.loads(text, parse_constant=refuse_constant, parse_int=_number_int)
        except RecursionError:
            raise NestingError(f"JSON nested more than {MAX_DEPTH} levels deep") from None
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and _depth_exceeds(value, MAX_DEPTH):
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


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether arrays/objects nest deeper than ``limit`` (iterative: no recursion to overflow)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


def is_safe_int(value: Any) -> TypeGuard[float]:
    if type(value) is int:  # the common case first (a bool is not one)
        return -MAX_SAFE <= value <= MAX_SAFE
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return value.is_integer() and abs(value) <= MAX_SAFE
    return isinstance(value, int) and abs(value) <= MAX_SAFE


def _exact_keys(record: dict[str, Any], keys: tuple[str, ...]) -> bool:
    return len(record) == len(keys) and all(k in record for k in keys)


def _row_members(tag: str, data: dict[str, Any], key: str) -> list[str]:
    if not all(isinstance(data.get(k), (int, float)) and not isinstance(data.get(k), bool)
               for k in ("turn", "step", "index")):
        raise RowError(f"malformed {tag} storage row: turn/step/index must be numbers")
    payload = data.get(key)
    if not isinstance(payload, list) or not payload or not set(map(type, payload)) <= {str}:
        raise RowError(f"malformed {tag} storage row: {key} must be a non-empty string array")
    dt = data.get("dt")
    if not isinstance(dt, list) or not (set(map(type, dt)) <= {int} or all(is_safe_int(g) for g in dt)):
        raise RowError(f"malformed {tag} storage row: dt must be an array of safe integers")
    if len(dt) != len(payload) - 1:
        raise RowError(f"malformed {tag} storage row: dt length {len(dt)} does not match {len(payload)} members")
    return payload


_TEXT_KEYS = frozenset({"turn", "step", "index", "dt", "texts"})
_CALL_KEYS = frozenset({"turn", "step", "index", "id", "dt", "args"})
_NAMED_CALL_KEYS = _CALL_KEYS | {"name"}

_Shape = tuple[str, list[str], list[float]]  # a valid row's tag, members and their times


def _plain_row(row: dict[str, Any]) -> _Shape | None:
    """:func:`_validate_row`'s result for a row as DSH writes it, found with a few type tests (the
    common case); None when the row is not plainly one, and the full check must say.

    Plainly one: exactly the keys type, seq0, time0 and data; ``int`` seq0 (not negative), time0,
    turn, step and index; string members (at least one), id and name; ``int`` gaps, one fewer
    than members; every member's seq and time a safe integer. Every row this accepts the full
    check accepts too, with the same members and times.
    """
    data = row.get("data")
    if len(row) != 4 or type(data) is not dict:
        return None
    seq0, time0 = row.get("seq0"), row.get("time0")
    if (type(seq0) is not int or type(time0) is not int or type(data.get("turn")) is not int
            or type(data.get("step")) is not int or type(data.get("index")) is not int):
        return None
    tag = row["type"]
    if tag == "tool-call-chunks":
        keys = data.keys()
        if type(data.get("id")) is not str or not (keys == _CALL_KEYS or (keys == _NAMED_CALL_KEYS
                                                                        and type(data["name"]) is str)):
            return None
        members = data["args"]
    elif len(data) == 5 and _TEXT_KEYS.issuperset(data):
        members = data["texts"]
    else:
        return None
    gaps = data["dt"]
    if (type(members) is not list or type(gaps) is not list or not members or len(gaps) != len(members) - 1
            or not set(map(type, members)) <= {str} or not set(map(type, gaps)) <= {int}
            or not 0 <= seq0 <= MAX_SAFE - len(members) + 1):
        return None
    times: list[float] = list(accumulate(gaps, initial=time0))  # as the full check adds them
    if max(times) > MAX_SAFE or min(times) < -MAX_SAFE:
        return None
    return tag, members, times


def _validate_row(row: dict[str, Any]) -> _Shape:
    """DSH's strict row validation; returns the tag, the members and their times.

    A row as DSH writes it passes :func:`_plain_row`'s few type tests; any other takes every
    check, which says what is wrong (the :class:`RowError`'s message).
    """
    plain = _plain_row(row)
    if plain is not None:
        return plain
    tag = row["type"]
    if not _exact_keys(row, ("type", "seq0", "time0", "data")):
        raise RowError(f"malformed {tag} storage row: envelope must be exactly {{type, seq0, time0, data}}")
    seq0, time0, data = row["seq0"], row["time0"], row["data"]
    if not is_safe_int(seq0) or seq0 < 0:
        raise RowError(f"malformed {tag} storage row: seq0 must be a non-negative safe integer")
    if not is_safe_int(time0):
        raise RowError(f"malformed {tag} storage row: time0 must be a safe integer")
    if not isinstance(data, dict):
        raise RowError(f"malformed {tag} storage row: data must be an object")
    if tag == "tool-call-chunks":
        with_name = _exact_keys(data, ("turn", "step", "index", "id", "name", "dt", "args"))
        if not with_name and not _exact_keys(data, ("turn", "step", "index", "id", "dt", "args")):
            raise RowError(f"malformed {tag} storage row: data must be exactly {{turn, step, index, id, name?, dt, args}}")
        if not isinstance(data["id"], str) or (with_name and not isinstance(data["name"], str)):
            raise RowError(f"malformed {tag} storage row: id (and name when present) must be strings")
        members = _row_members(tag, data, "args")
    else:
        if not _exact_keys(data, ("turn", "step", "index", "dt", "texts")):
            raise RowError(f"malformed {tag} storage row: data must be exactly {{turn, step, index, dt, texts}}")
        members = _row_members(tag, data, "texts")
    if not is_safe_int(seq0 + len(members) - 1):
        raise RowError(f"malformed {tag} storage row: member seqs must stay safe integers")
    times = list(accumulate(data["dt"], initial=time0))  # each the one before plus its gap, as JavaScript adds
    if max(times) > MAX_SAFE or min(times) < -MAX_SAFE:  # finite numbers: the same test as abs() of each
        raise RowError(f"malformed {tag} storage row: member times must stay safe integers")
    return tag, members, times


def _expand(row: dict[str, Any], shape: _Shape, limit: int | None = None) -> list[dict[str, Any]]:
    """The events of a validated row (its first ``limit`` only when given)."""
    tag, members, times = shape
    if limit is not None:
        members = members[:limit]
    data, seq0 = row["data"], row["seq0"]
    turn, step, index = data["turn"], data["step"], data["index"]
    # Each member's event with its chunk (the same keys in the same order for every member), in one
    # comprehension: a row holds dozens of members.
    if tag != "tool-call-chunks":
        kind = "text-delta" if tag == "text-chunks" else "reasoning-delta"
        return [{"type": "assistant/chunk", "seq": seq, "time": time,
                 "data": {"turn": turn, "step": step, "chunk": {"type": kind, "index": index, "text": member}}}
                for seq, time, member in zip(count(seq0), times, members)]
    ident = data["id"]
    if "name" not in data:
        return [{"type": "assistant/chunk", "seq": seq, "time": time,
                 "data": {"turn": turn, "step": step,
                          "chunk": {"type": "tool-call-delta", "index": index, "id": ident, "argumentsDelta": member}}}
                for seq, time, member in zip(count(seq0), times, members)]
    name = data["name"]
    return [{"type": "assistant/chunk", "seq": seq, "time": time,
             "data": {"turn": turn, "step": step, "chunk": {"type": "tool-call-delta", "index": index, "id": ident,
                                                            "name": name, "argumentsDelta": member}}}
            for seq, time, member in zip(count(seq0), times, members)]


def expand_row(row: dict[str, Any], *, limit: int | None = None, share: bool = False) -> list[dict[str, Any]]:
    """Validate a ``*-chunks`` row strictly and expand it to its ``assistant/chunk`` events (only
    the first ``limit`` of them when given: a reader that takes the others from the row itself).

    With ``share``, the row is validated once for two consumers, as :func:`decode_record` shares
    it: the next :func:`decode_record` or :func:`row_head` of the same object takes this
    validation (and the events built) instead of validating the row again.

    Raises:
        RowError: the row fails DSH's strict row validation (the whole row, whatever ``limit``).

    Example:
        >>> row = {"type": "text-chunks", "seq0": 4, "time0": 10,
        ...        "data": {"turn": 1, "step": 1, "index": 0, "dt": [2], "texts": ["a", "b"]}}
        >>> [(e["seq"], e["time"], e["data"]["chunk"]["text"]) for e in expand_row(row)]
        [(4, 10, 'a'), (5, 12, 'b')]
        >>> expand_row(row, limit=1) == expand_row(row)[:1]
        True
    """
    global _SHARED_ROW
    if share:
        _SHARED_ROW = _NOTHING_SHARED  # a row nobody took is not held while the next line is decoded
    shape = _validate_row(row)
    events = _expand(row, shape, limit)
    if share:
        _SHARED_ROW = (row, shape, events)
    return events


def row_head(row: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Validate a row like :func:`expand_row` but build only its first event; return it and the count.

    A row a first consumer already validated (:func:`decode_record` or :func:`expand_row` with
    ``share``) is not validated again: its first event and count are taken from that validation.
    """
    shared = _take_row(row)
    if shared is not None:
        shape, events = shared
        return events[0], len(shape[1])
    shape = _validate_row(row)
    return _expand(row, shape, 1)[0], len(shape[1])


#: the packed row a first consumer validated for a later one (:func:`decode_record` or
#: :func:`expand_row` with ``share``): the row, its shape and the events built of it (all, or the first)
_SHARED_ROW: tuple[Any, _Shape, list[dict[str, Any]]]
_NOTHING_SHARED: tuple[Any, _Shape, list[dict[str, Any]]] = (None, ("", [], []), [])
_SHARED_ROW = _NOTHING_SHARED


def _take_row(row: dict[str, Any]) -> tuple[_Shape, list[dict[str, Any]]] | None:
    """The shape of ``row`` and the events built of it when a first consumer kept them for this
    very object (and forget them)."""
    global _SHARED_ROW
    found, shape, events = _SHARED_ROW
    if found is not row:
        return None
    _SHARED_ROW = _NOTHING_SHARED
    return shape, events


def decode_record(value: Any, *, share: bool = False) -> list[Any]:
    """One parsed line to the events it stores (a row expands; anything else passes through).

    A row is validated and expanded once for two consumers that decode the same parsed value in
    turn (the validation rules, then the reader of ``check`` and ``report``; see
    :func:`~dsh_audit.log.parse_line`): the first decodes it with ``share=True`` (or expands it
    with :func:`expand_row`'s ``share``), and the next :func:`decode_record` or :func:`row_head`
    of the same object takes that validation and expansion (and forgets them) instead of
    validating the row again. Both only read the events. A row that fails validation is kept for
    nobody: the next consumer meets the same :class:`RowError`.
    """
    global _SHARED_ROW
    if share:
        _SHARED_ROW = _NOTHING_SHARED  # a row nobody took is not held while the next line is decoded
    if isinstance(value, dict) and isinstance(value.get("type"), str) and value["type"] in CHUNK_ROW_TYPES:
        shared = None if share else _take_row(value)
        if shared is None:
            return expand_row(value, share=share)
        shape, events = shared
        return events if len(events) == len(shape[1]) else _expand(value, shape)
    return [value]


_ENVELOPE_KEYS = frozenset({"type", "seq", "time", "data", "surfaceOp", "sourceEventSeqs", "ignorable"})


def _has_provider_model(value: Any) -> TypeGuard[dict[str, Any]]:
    return (isinstance(value, dict) and isinstance(value.get("provider"), str) and bool(value["provider"])
            and isinstance(value.get("model"), str) and bool(value["model"]))


def adapter_defaults_error(header: Any) -> str | None:
    """DSH's request/header check: provider/model, reasoningEffort, adapterDefaults markers."""
    config = header.get("config") if isinstance(header, dict) else None
    if not _has_provider_model(config):
        return "lacks provider/model"
    effort = config.get("reasoningEffort")
    if effort is not None and (not isinstance(effort, str) or not effort):
        return "has an invalid reasoningEffort"
    defaults = header.get("adapterDefaults")
    if defaults is None:
        return None
    if (not isinstance(defaults, dict)
            or any(k not in ("reasoningEffort", "maxTokens") for k in defaults)
            or any(v is not True for v in defaults.values())
            or (defaults.get("reasoningEffort") is True and "reasoningEffort" not in config)
            or (defaults.get("maxTokens") is True and "maxTokens" not in config)):
        return "has invalid adapterDefaults"
    return None


def message_shape_error(event: dict[str, Any]) -> str | None:
    """DSH's identified-message check for the three surface types (no subject prefix)."""
    etype = event.get("type")
    if etype not in ("user/message", "assistant/message", "tool/result"):
        return None
    data = event.get("data")
    message = data if etype == "user/message" else (data.get("message") if isinstance(data, dict) else None)
    if not isinstance(message, dict) or not isinstance(message.get("id"), str) or not message["id"]:
        return "lacks an identified message"
    role = "assistant" if etype == "assistant/message" else "user"
    if message.get("role") != role:
        return f'message must have role "{role}"'
    source = message.get("source")
    if not isinstance(source, dict) or not isinstance(source.get("kind"), str) or not source["kind"]:
        return "message has invalid source"
    if not isinstance(message.get("content"), list):
        return "message has invalid content"
    if etype == "assistant/message":
        if source["kind"] != "model" or not _has_provider_model(source):
            return "message must have model source"
        return None
    if etype != "tool/result":
        return None
    if source["kind"] != "tool" or not isinstance(source.get("callId"), str) or not source["callId"]:
        return "message must have tool source"
    content = message["content"]
    block = content[0] if content else None
    if (len(content) != 1 or not isinstance(block, dict) or block.get("type") != "tool-result"
            or not isinstance(block.get("content"), list)):
        return "message must contain one tool-result block"
    if block.get("toolCallId") != source["callId"]:
        return "message has mismatched tool call ids"
    return None


def envelope_error(event: Any) -> tuple[str, str] | None:
    """DSH's seed envelope check: ``(subject, problem)`` as in ``seed <subject> at index N <problem>``.

    Message shapes are :func:`message_shape_error`'s job; the reader runs it first, as DSH does.
    """
    if not isinstance(event, dict):
        return ("event", "has an invalid event envelope")
    if event.get("type") == "request/header-delta":
        return ("event", "uses unsupported legacy request/header-delta format")
    if any(k not in _ENVELOPE_KEYS for k in event):
        return ("event", "has an invalid event envelope")
    seq, time = event.get("seq"), event.get("time")
    if (not isinstance(event.get("type"), str) or not is_safe_int(seq) or seq < 0
            or not is_safe_int(time) or "data" not in event
            or ("ignorable" in event and event["ignorable"] is not True)):
        return ("event", "has an invalid event envelope")
    etype = event["type"]
    if etype == "request/header":
        data = event["data"]
        header = data.get("header") if isinstance(data, dict) else None
        problem = adapter_defaults_error(header if isinstance(header, dict) else {})
        if problem:
            return ("request/header", problem)
        if isinstance(data, dict) and data.get("reason") == "fallback":
            return ("event", 'uses unsupported legacy request/header reason "fallback"')
    return None
