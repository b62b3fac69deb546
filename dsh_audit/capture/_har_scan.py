"""Where each entry of a HAR file lies, found in one pass over the file in pieces: a HAR file is one
JSON document, but its ``log.entries`` are read one at a time (:func:`har_entries`), so a reader
holds one entry, never the document (:mod:`._har`).

The scan follows the document's structure only (strings, their escaped backslashes and quotes
blanked, and the brackets and colons outside them); it does not check the JSON: each entry is parsed as it is found, and the
rest of the document (:func:`skeleton`) once the entries are passed over, so malformed JSON is
still a CaptureError (the document parsed whole then, for the error it always gave).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

__all__ = ["EntriesSpan", "har_entries"]

_PIECE = 1 << 20
#: What matters to the structure outside a string: a string's opening quote, a bracket, a colon.
_STRUCTURE = re.compile(rb'["{}\[\]:]')
#: The text between two structural tokens of the entries list: commas and white space, no scalar entry.
_BETWEEN = re.compile(rb'[\s,]*')
#: The longest key kept to be recognised (``log``, ``entries``): longer strings are no key wanted.
_KEY = 16


@dataclass
class EntriesSpan:
    """Where ``log.entries`` lies in the file (``start``: its ``[``; ``end``: after its ``]``; -1:
    not found whole, or a document the scan could not follow), and how many entries were found,
    up to the first that is no object (``scalar``: its index)."""

    start: int = -1
    end: int = -1
    scalar: int | None = None
    count: int = 0
    twice: bool = False  # a second ``entries`` list (JSON.parse keeps the last: the scan has read the first)

    @property
    def whole(self) -> bool:
        return 0 <= self.start < self.end and self.scalar is None


def _pieces(handle: BinaryIO) -> Iterator[tuple[bytes, bytes]]:
    """The file in pieces, each with its copy whose escaped backslashes and quotes are blanked (the
    same length: a quote left in it opens or closes a string); a piece never ends inside a run of
    backslashes (what ends one is kept for the next), so each escape is blanked whole."""
    carry = b""
    while True:
        read = handle.read(_PIECE)
        data = carry + read
        cut = len(data.rstrip(b"\\")) if read else len(data)
        carry = data[cut:]
        if cut:
            piece = data[:cut]
            yield piece, piece.replace(b"\\\\", b"__").replace(b'\\"', b"__")
        if not read:
            return


def har_entries(handle: BinaryIO, span: EntriesSpan) -> Iterator[tuple[int, bytes]]:
    """``(offset, bytes)`` of each object of the document's ``log.entries`` list, read from
    ``handle`` (at its start) in pieces, in order; ``span`` says, once the scan is over, where the
    list lay (``start`` -1: no such list found, or a document the scan could not follow) and the
    index of its first entry that is no object (the scan stops there)."""
    stack: list[bytes | None] = []  # the key each open container was the value of (None: an array item, the root)
    in_string, key = False, b""
    last: bytes | None = None  # the last string read, when short: the key a colon follows
    pending: bytes | None = None  # the key whose value opens next
    entry: list[bytes] | None = None  # the pieces of the entry being read
    entry_start = piece_start = 0
    offset = 0  # of the piece in the file
    for piece, clean in _pieces(handle):
        at = 0
        while at < len(piece):
            if in_string:
                end = clean.find(b'"', at)
                if len(key) <= _KEY:  # no more of a long string is copied than tells it no key
                    key += clean[at:min(end if end >= 0 else len(clean), at + _KEY + 1)]
                if end < 0:
                    break
                in_string, at = False, end + 1
                last, pending = (key if len(key) <= _KEY else None), None
                continue
            match = _STRUCTURE.search(clean, at)
            depth_entries = entry is None and span.end < 0 <= span.start and stack == [None, b"log", b"entries"]
            if depth_entries and not _BETWEEN.fullmatch(clean, at, match.start() if match else len(clean)):
                span.scalar = span.count
                return
            if match is None:
                break
            token, at = match.group(), match.end()
            if token == b'"':
                if depth_entries:
                    span.scalar = span.count
                    return
                in_string, key = True, b""
            elif token == b":":
                pending = last
            elif token in (b"{", b"["):
                if depth_entries:
                    entry, entry_start, piece_start = [], offset + match.start(), match.start()
                elif stack == [None, b"log"] and pending == b"entries" and token == b"[":
                    if span.start >= 0:
                        span.twice = True
                        return
                    span.start = offset + match.start()
                stack.append(pending)
                pending = None
            else:  # a closing bracket
                if not stack:  # more closed than opened: no JSON
                    span.start = -1
                    return
                stack.pop()
                if entry is not None and len(stack) == 3:
                    entry.append(piece[piece_start:at])
                    yield entry_start, b"".join(entry)
                    entry = None
                    span.count += 1
                elif span.end < 0 <= span.start and stack == [None, b"log"]:
                    span.end = offset + at
        if entry is not None:
            entry.append(piece[piece_start:])
            piece_start = 0
        offset += len(piece)
