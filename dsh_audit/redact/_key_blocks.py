"""A private key block split over the strings of one record: each string's part of it goes, and the
block counts once, by its whole body (:class:`KeyBlocks`, the part of :class:`._redactor.Redactor` that
follows a block from string to string; :mod:`._pem` says what of each string is key body).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ._counting import SecretCounter, secret_digest
from ._keys import HEADER_KEYS, META_KEY, content_root, is_header, meta_of, structural
from ._pem import key_body, key_end, key_piece, key_start, private_key_cut, private_key_end, private_key_open, \
    split_private_key, split_tail

__all__ = ["KeyBlocks", "walk"]


@dataclass
class KeyBlocks(SecretCounter):
    """The private key block the strings of the record being read leave open, followed from string to
    string (:meth:`_split_key`)."""

    # a private key block an earlier string of the record being read left open, and whether it was counted
    _open_key: bool = False
    _key_counted: bool = False
    _tail: str = ""  # the joined end of the last strings of the record read, which may start a BEGIN line
    # the record being read (None outside :meth:`._redactor.Redactor.record`), its strings as
    # :meth:`._redactor.Redactor.string` reads them for a private key block (made when first needed), how
    # many it has read, the position of the string that ends the END line of the block open (None: not
    # known), and the last lookahead (from, stop, result)
    _record: Any = None
    _walked: list[str] | None = None
    _position: int = 0
    _key_end: int | None = None
    _ahead: tuple[int, int, int | None] = (-1, -1, None)
    # the body of the private key block open in the record being read, as its strings hold it (None: none),
    # whose distinct value is told by its whole body once it ends (:meth:`_finish_key`)
    _key_parts: list[str] | None = None

    def _split_key(self, text: str) -> tuple[int, int]:
        """The part of ``text`` that is the body of a private key block an earlier string of the record
        began (``start == end``: none): one the last string left open continues at the start of ``text``
        while it reads as key body (:func:`._pem.key_body`: a string of prose ends it), or, up to the
        string that ends its END line, as pieces of a key however short (:meth:`_ahead_end`); one whose
        BEGIN line the strings before started and ``text`` ends (:func:`._pem.split_private_key` on
        their joined end, :func:`._pem.split_tail`: a line cut over any number of strings) runs from
        there to its END line or the end of ``text``. That part counts as the block's when the block was
        not yet counted. Also notes whether ``text`` leaves a block open, and its end."""
        position = self._position
        self._position += 1
        start, end, still_open = self._continued(position, text)
        if end > start:
            self._count_part(text[start:end])
        if not still_open:
            self._finish_key()
        self._note_open(position, text, still_open)
        self._tail = split_tail(self._tail, text)
        return start, end

    def _continued(self, position: int, text: str) -> tuple[int, int, bool]:
        """The part of ``text`` (at ``position`` among the record's strings) that continues a block an
        earlier string began, and whether the block runs on past ``text`` (:meth:`_split_key`)."""
        # a piece of a block whose END line is ahead (:meth:`_ahead_end`): whole, or up to that line
        ahead = self._key_end if self._open_key else None
        if ahead is not None and position <= ahead:
            if position < ahead:  # before the string that ends the END line (a cut END line too)
                return 0, len(text), True
            return 0, private_key_end(text) or 0, False  # none: the line began in the strings before
        if self._open_key:
            body = key_body(text)
            if body is not None and (body[1] or text[:body[0]].strip()):
                return 0, body[0], not body[1]
            return 0, 0, False
        split = split_private_key(self._tail, text) if self._tail else None
        if split is None:
            return 0, 0, False
        start, end, closed = split
        self._finish_key()
        self._key_counted, self._key_parts = False, [] if self._record is not None else None
        self._key_end = self._ahead_end(position, text) if not closed and key_piece(text, start) else None
        return start, end, not closed

    def _count_part(self, part: str) -> None:
        """Count the block that ``part`` (of a string) continues, once: by its value when the record's
        strings are not followed (:meth:`_ahead_end`), else by its whole body when it ends (:meth:`_finish_key`)."""
        if self._key_parts is not None:
            self._key_parts.append(part)
        if not self._key_counted:
            if self._key_parts is None:
                self._tally((("private_key", secret_digest(part)),))
            else:  # its distinct value once its body is whole
                self.secrets["private_key"] += 1
                self._held = True
            self._key_counted = True

    def _note_open(self, position: int, text: str, still_open: bool) -> None:
        """Note whether ``text`` (at ``position``) leaves a block open: the one it continues
        (``still_open``), or one that begins in it after that."""
        opened = None if still_open else private_key_open(text)  # a block that begins after the one read
        cut = not still_open and private_key_cut(text)
        if opened is None and not cut:
            self._open_key = still_open
            return
        begun = key_start(text)
        begun = len(text) if begun is None else begun
        # the text's own match counts it when it holds some of its body (a cut one too: ``"...\nMIIE"``)
        self._open_key, self._key_counted = True, begun < len(text)
        self._key_end = self._ahead_end(position, text) if cut else None
        if self._record is not None:
            self._key_parts = [text[begun:]]
            if begun < len(text):
                self._hold = ("private_key", secret_digest(text[begun:]))

    def _finish_key(self) -> None:
        """End the private key block of the record that :meth:`_split_key` joined: when it was counted
        without its distinct value, add that of its whole body (as one string holding the block whole
        tells it: up to its END line, cut or not), so the same key whole and cut counts once."""
        if self._key_parts is not None and self._held:
            body = "".join(self._key_parts)
            end = body.find("-----")  # an END line cut over the strings before the one that ends it
            self.secret_values.setdefault("private_key", set()).add(secret_digest(body if end < 0 else body[:end]))
        self._key_parts, self._held, self._hold = None, False, None

    def _ahead_end(self, position: int, text: str) -> int | None:
        """The position (among the strings of the record :meth:`_split_key` reads) of the string that ends
        the END line of the private key block that ``text``, at ``position``, leaves open, when the strings
        before it read as pieces of a key (:func:`._pem.key_end`); None when they do not, or outside
        :meth:`record`. A block that opens among the strings an earlier lookahead read ends where it said,
        so each string of a record is read once however many blocks it holds."""
        if self._record is None:
            return None
        begun, stop, found = self._ahead
        if begun <= position < stop:
            return found
        if self._walked is None:
            self._walked = walk(self._record)
        strings = self._walked
        if position >= len(strings) or strings[position] is not text:  # not the record's own string
            return None
        read = [position]

        def after() -> Iterator[str]:
            for at in range(position + 1, len(strings)):
                read[0] = at
                yield strings[at]

        count = key_end(after(), split_tail("", text))
        found = None if count is None else position + count
        self._ahead = (position, read[0], found)
        return found


def walk(record: Any) -> list[str]:
    """The strings of ``record`` that :meth:`._redactor.Redactor.string` reads for a private key block
    (:meth:`KeyBlocks._split_key`: neither structural nor blank), in the order it reads them; a header's
    ``cwd`` string, read as a path, is none. A loop, not recursion: a record may nest 512 levels."""
    header = is_header(record)
    meta_data = meta_of(record)
    out: list[str] = []
    stack: list[tuple[Any, Any, bool]] = [(record, None, False)]
    while stack:
        value, key, content = stack.pop()
        if isinstance(value, str):
            if value.strip() and (content or not structural(key, value)):
                out.append(value)
        elif isinstance(value, dict):
            top = header and value is record  # the header line's own members: an unknown one is content
            meta = value is meta_data
            items = [(v, k, content or content_root(k, v) or (top and k not in HEADER_KEYS)
                      or (meta and k == META_KEY))
                     for k, v in value.items() if not (top and k == "cwd" and isinstance(v, str))]
            stack.extend(reversed(items))
        elif isinstance(value, list):
            stack.extend((v, key, content) for v in reversed(value))
    return out
