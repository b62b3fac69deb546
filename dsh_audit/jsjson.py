"""JSON exactly as JavaScript's ``JSON.stringify`` writes it, and the digests built on it.

This is the one canonical JSON function of the project (spec §8.5). DSH, its adapters and the
provider SDKs all serialise with ``JSON.stringify``: no whitespace, object keys in insertion order,
non-ASCII written raw, only ``"``, ``\\`` and control characters escaped (``\\b \\f \\n \\r \\t``,
others as lower-case ``\\u00xx``), lone surrogates escaped as ``\\udxxx``, and numbers in
JavaScript's shortest round-trip spelling (``1e-7``, ``1e+21``, ``100`` for ``1e2``).

Contract, relied on by attribution and by ``messages_sha256``:

* ``stringify(value)`` is a pure function of the value and its key order;
* ``sha256_hex(value)`` is the hex SHA-256 of ``stringify(value)`` encoded as UTF-8 with lone
  surrogates kept as their escapes (they never reach the byte level unescaped).

Python values map as JSON values do: ``dict`` (keys must be ``str``), ``list``/``tuple``, ``str``,
``int``, ``float``, ``bool``, ``None``. Values JavaScript would drop (``undefined``) do not exist
in parsed JSON, so nothing is dropped here.

orjson 3.13.0 crashes the process (SIGSEGV) instead of raising MemoryError when an allocation fails,
as it does under a memory limit (``ulimit -v``, ``ulimit -d``). :func:`fits_in_memory` is the one
check made before orjson is given anything large, here (writing) and where JSON is parsed
(``dsh_audit.log``'s ``ensure_room``).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import sys
import time
from typing import Any

import orjson

if sys.platform != "win32":
    import resource

__all__ = ["fits_in_memory", "has_surrogate", "js_number", "memory_left", "memory_limited", "sha256_hex", "stringify",
           "stringify_bytes"]

_ESCAPES = {
    '"': '\\"',
    "\\": "\\\\",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
}
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')
_SURROGATE_PAIR = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_PIECE = 1 << 20  # characters of a long string checked for escapes at once
# A result at least this long is written again by the exact writer, which puts each string in
# it once (orjson's bytes and their decoding would be two copies of a huge record at once).
_HUGE = 16 << 20


_ROOM_CHECKED = 1 << 20  # orjson asking for no more than this is never checked


def memory_left() -> int | None:
    """Bytes left under the process's memory limits, the address space (RLIMIT_AS, against the
    mapped size) and the data segment (RLIMIT_DATA, against the data and stack size), whichever is
    less; None when neither is set, or when this system cannot tell (no ``/proc/self/statm``)."""
    if sys.platform == "win32":
        return None
    limits = [(resource.getrlimit(which)[0], field) for which, field in ((resource.RLIMIT_AS, 0),
                                                                          (resource.RLIMIT_DATA, 5))]
    limits = [(limit, field) for limit, field in limits if limit != resource.RLIM_INFINITY]
    if not limits:
        return None
    try:
        with open("/proc/self/statm", "rb") as statm:
            pages = [int(number) for number in statm.read().split()]
        return min(int(limit) - pages[field] * os.sysconf("SC_PAGE_SIZE") for limit, field in limits)
    except (OSError, ValueError, IndexError):
        return None


def fits_in_memory(need: int) -> bool:
    """Whether ``need`` more bytes of address space fit under the process's memory limits: the
    check made before orjson parses or writes anything large (it segfaults when memory runs out).

    Only a finite limit (RLIMIT_AS, ``ulimit -v``; RLIMIT_DATA, ``ulimit -d``) can be checked:
    without one the kernel's OOM killer acts, and no program can answer. A need of 1 MiB or less,
    or a system without ``/proc/self/statm``, always fits.

    Example:
        >>> fits_in_memory(4096)  # small: never checked
        True
    """
    if need <= _ROOM_CHECKED:
        return True
    left = memory_left()
    return left is None or need <= left


_LIMITS_FRESH = 0.5  # seconds a reading of whether a limit is set is used again
_limits_read: list[Any] = [-math.inf, False]  # when the limits were last read, and whether one is set


def memory_limited() -> bool:
    """Whether the process runs under a memory limit :func:`fits_in_memory` can check: read again
    at most every half second (two system calls would cost a third of a small value's writing), so
    a limit the process sets on itself is seen within that time."""
    if sys.platform == "win32":
        return False
    now = time.monotonic()
    if now - _limits_read[0] >= _LIMITS_FRESH:
        _limits_read[:] = [now, resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY
                           or resource.getrlimit(resource.RLIMIT_DATA)[0] != resource.RLIM_INFINITY]
    return bool(_limits_read[1])


# orjson.dumps grows one output buffer: each string asks for 8 bytes per byte of its UTF-8, each
# array 128 bytes per element, each object 256 per member, beyond what is written, and the buffer
# grows to the next power of two (peak address space measured on Linux x86-64: 13.3 bytes per
# character of a 40 MB ASCII string, 57 per emoji, 266 per element of [1, 1, ...]).
_WRITE_STRING = 8
_WRITE_ELEMENT = 128
_WRITE_MEMBER = 256
_WIDE = 4096  # a non-ASCII string longer than this has its UTF-8 width read from its storage


def _utf8_width(text: str) -> int:
    """The most UTF-8 bytes one character of ``text`` can take (1 for ASCII; 4 for a short text)."""
    if text.isascii():
        return 1
    if len(text) <= _WIDE:
        return 4
    per_char = sys.getsizeof(text) // len(text)  # CPython's 1, 2 or 4 bytes per character
    return 2 if per_char == 1 else 3 if per_char == 2 else 4


_SCALARS = frozenset((int, float, bool, type(None)))  # each written in at most 24 bytes


def _too_big_to_write(value: Any) -> int | None:
    """None when ``orjson.dumps(value)`` fits in the memory left under the limits, else about the
    most address space it would take (never less, per the figures above). The walk stops once
    the room left is passed (so a value holding itself ends too).

    It is the cost of writing under a limit (15 to 50 times orjson's own time, Python against C),
    so it asks as little as it can of each value: exact types first (subclasses are walked the same
    way), and for a number or a literal nothing but its 24 bytes (the need is checked again with the
    next string or container, and at the end). It cannot be skipped: a value of a few kilobytes that
    holds the same list many times over is gigabytes of JSON, and no faster measure of its size
    exists (``repr`` and :mod:`json`'s C writer take as long as this walk).

    Example:
        >>> _too_big_to_write({"a": ["b", 1, None]}) is None  # small: fits
        True
    """
    written = biggest = 0
    left: int | None = None
    stack = [value]
    pop, extend = stack.pop, stack.extend
    while stack:
        item = pop()
        kind = type(item)
        if kind in _SCALARS:
            written += 24
            continue
        if kind is str or isinstance(item, str):
            size = len(item) if item.isascii() else len(item) * _utf8_width(item)
            written += size + 2
            if _WRITE_STRING * size > biggest:
                biggest = _WRITE_STRING * size
        elif kind is dict or isinstance(item, dict):
            extend(item)
            extend(item.values())
            written += 2 * len(item) + 2
            if _WRITE_MEMBER * len(item) > biggest:
                biggest = _WRITE_MEMBER * len(item)
        elif kind is list or isinstance(item, (list, tuple)):
            extend(item)
            written += len(item) + 2
            if _WRITE_ELEMENT * len(item) > biggest:
                biggest = _WRITE_ELEMENT * len(item)
        else:
            written += 24  # not JSON: orjson refuses it
        if (written + biggest) * 9 // 4 > _ROOM_CHECKED:
            left = memory_left() if left is None else left
            if left is None:
                return None  # no limit this system can measure
            if (written + biggest) * 9 // 4 > left:
                return (written + biggest) * 9 // 4
    need = (written + biggest) * 9 // 4
    if need <= _ROOM_CHECKED:
        return None
    left = memory_left() if left is None else left
    return need if left is not None and need > left else None


def _dumps_piece(piece: str) -> bytes:
    """``orjson.dumps(piece)`` of a piece of a long string; MemoryError when it might not fit."""
    need = _too_big_to_write(piece) if memory_limited() else None
    if need is not None:
        raise MemoryError(f"writing {len(piece)} characters as JSON needs about {need >> 20} MiB of memory")
    return orjson.dumps(piece)


def _escape_char(match: re.Match[str]) -> str:
    ch = match.group(0)
    known = _ESCAPES.get(ch)
    if known is not None:
        return known
    return f"\\u{ord(ch):04x}"


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point (a lone half, or a pair written as two code
    points), found at C speed: ASCII has none, and UTF-8 refuses one, a piece at a time (a huge
    text is not copied whole).

    Example:
        >>> has_surrogate("é😀"), has_surrogate("a\\ud800")
        (False, True)
    """
    if text.isascii():
        return False
    for start in range(0, len(text), _PIECE):
        piece = text[start:start + _PIECE]
        if piece.isascii():
            continue
        try:
            piece.encode("utf-8")
        except UnicodeEncodeError:
            return True
    return False


def _plain(text: str) -> bool:
    """Whether ``text`` holds no character ``JSON.stringify`` escapes. A long text is checked in
    pieces by orjson, which escapes the same characters and refuses surrogates (the pattern alone
    reads about 60 MB/s), so no copy of it is made."""
    if len(text) < _PIECE:
        return _NEEDS_ESCAPE.search(text) is None
    if '"' in text or "\\" in text:
        return False
    for start in range(0, len(text), _PIECE):
        piece = text[start:start + _PIECE]
        try:
            written = len(_dumps_piece(piece))
        except orjson.JSONEncodeError:  # a surrogate
            return False
        if written != (len(piece) if piece.isascii() else len(piece.encode("utf-8"))) + 2:
            return False
    return True


def _quote_into(text: str, out: list[str]) -> None:
    """Append ``text`` as a JSON string: the quotes and the text itself when nothing needs an
    escape (the caller's join is then its only copy), else its escaped form."""
    out.append('"')
    if _plain(text):
        out.append(text)
    elif not has_surrogate(text):
        # orjson escapes what JSON.stringify escapes in a text without surrogates, each character
        # alone: written a piece at a time at C speed (not a Python call per escape).
        out.extend(_dumps_piece(text[start:start + _PIECE])[1:-1].decode("utf-8")
                   for start in range(0, len(text), _PIECE))
    else:
        if _SURROGATE_PAIR.search(text):
            # A well-formed pair written as two Python code points (json.loads of "\ud83d\ude00")
            # is one character to JavaScript: join it, and escape only the lone halves.
            text = _SURROGATE_PAIR.sub(
                lambda m: m.group(0).encode("utf-16", "surrogatepass").decode("utf-16"), text
            )
        out.append(_NEEDS_ESCAPE.sub(_escape_char, text))
    out.append('"')


def js_number(value: int | float) -> str:
    """Spell a number as JavaScript's ``Number.prototype.toString`` does.

    Example:
        >>> js_number(1.0), js_number(1e-7), js_number(1e21), js_number(0.1)
        ('1', '1e-7', '1e+21', '0.1')
    """
    if isinstance(value, bool):
        raise TypeError("booleans are not numbers here")
    if isinstance(value, int):
        if abs(value) <= 2**53:
            return str(value)
        try:
            value = float(value)  # JavaScript holds every number as a double: 2**53 + 1 prints 9007199254740992
        except OverflowError:
            return "null"  # beyond the largest double: Infinity, which JSON.stringify writes as null
    if math.isnan(value) or math.isinf(value):
        return "null"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits, _, exp_text = repr(abs(value)).partition("e")
    int_part, _, frac_part = digits.partition(".")
    frac_part = frac_part.rstrip("0")
    exponent = int(exp_text) if exp_text else 0
    # Normalise to a digit string d1d2...dk and n, the position of the decimal point.
    mantissa = (int_part + frac_part).lstrip("0")
    leading_zeros = len(int_part + frac_part) - len((int_part + frac_part).lstrip("0"))
    n = len(int_part) + exponent - leading_zeros
    mantissa = mantissa.rstrip("0") or "0"
    k = len(mantissa)
    if k <= n <= 21:
        return sign + mantissa + "0" * (n - k)
    if 0 < n <= 21:
        return sign + mantissa[:n] + "." + mantissa[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + mantissa
    e = n - 1
    exp_str = ("+" if e >= 0 else "-") + str(abs(e))
    if k == 1:
        return sign + mantissa + "e" + exp_str
    return sign + mantissa[0] + "." + mantissa[1:] + "e" + exp_str


def _write(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        _quote_into(value, out)
    elif isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        out.append("{")
        first = True
        for key, item in value.items():
            if not first:
                out.append(",")
            first = False
            _quote_into(key, out)
            out.append(":")
            _write(item, out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        if not value:
            out.append("[]")
            return
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _write(item, out)
        out.append("]")
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, (int, float)):
        out.append(js_number(value))
    else:
        raise TypeError(f"not a JSON value: {type(value).__name__}")


# orjson writes what JSON.stringify writes (same escapes, raw non-ASCII, shortest floats) except
# for integer-valued floats ("1.0", "1e+16".."1e+20"), floats from 1e-6 to 1e-5 (orjson "9.15e-6",
# JavaScript "0.00000915": it writes decimals down to 1e-6) and lone surrogates / ints beyond 2**53
# (it raises). Output that could hold such a float takes the exact path; a false alarm inside a
# string only costs speed.
_ORJSON_SUSPECT = re.compile(rb"\d\.0(?![0-9])|\d[eE]\+(?:1[6-9]|20)(?![0-9])|\d[eE]-6(?![0-9])")


def _fast(value: Any) -> bytes | None:
    """orjson's writing of ``value`` when it is JavaScript's; None when the exact writer must write
    it, as when orjson might not fit in the memory left under a limit (the exact writer allocates
    in Python, where running out is a MemoryError, not a crash)."""
    if memory_limited() and _too_big_to_write(value) is not None:
        return None
    try:
        data = orjson.dumps(value, option=orjson.OPT_STRICT_INTEGER)  # integers beyond 2**53 take the exact path
    except (TypeError, orjson.JSONEncodeError):
        return None
    if (b".0" in data or b"e+" in data or b"e-6" in data) and _ORJSON_SUSPECT.search(data):
        return None
    return data


def _exact(value: Any) -> str:
    out: list[str] = []
    _write(value, out)
    return "".join(out)


def stringify(value: Any) -> str:
    """Serialise ``value`` exactly as ``JSON.stringify(value)`` would.

    Example:
        >>> stringify({"b": 1, "a": ["é", 1.5, None]})
        '{"b":1,"a":["é",1.5,null]}'
    """
    data = _fast(value)
    if data is None or len(data) >= _HUGE:
        del data  # a huge result is not held twice
        return _exact(value)
    return data.decode("utf-8")


def stringify_bytes(value: Any) -> bytes:
    """``stringify(value)`` as the UTF-8 bytes a JavaScript runtime would send.

    The bytes are exactly their length, safe to keep: orjson's own result keeps the spare capacity
    of its output buffer (about 16 KB behind a 1.5 KB message), which a cache of them would hold;
    a result of 16 MiB or more is orjson's own (copying it would hold it twice).
    """
    data = _fast(value)
    if data is None:
        return _exact(value).encode("utf-8")
    # A huge result is kept as it is: a copy would hold it twice at once, and its spare capacity
    # is at most a few untouched pages.
    return data if len(data) >= _HUGE else bytes(memoryview(data))


def sha256_hex(value: Any) -> str:
    """Hex SHA-256 of ``JSON.stringify(value)`` in UTF-8 (the digest the DSH goldens use)."""
    return hashlib.sha256(stringify_bytes(value)).hexdigest()
