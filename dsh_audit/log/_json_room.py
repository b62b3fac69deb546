"""The memory check before orjson parses a large text: orjson cannot survive running out of memory."""

from __future__ import annotations

from ..jsjson import fits_in_memory, memory_left, memory_limited

__all__ = ["ensure_room"]


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
