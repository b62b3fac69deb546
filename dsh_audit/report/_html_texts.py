"""The texts of the forensics page (:mod:`._html`) and where they are kept: script JSON that
cannot end a ``<script>`` block (:func:`_script_json`), the distinct headers (:class:`_Table`) and
messages (:class:`_Messages`) of a session each stored once, in memory (:class:`_Kept`) or in a
temporary file the pages of one report share (:class:`_Spool`, :class:`_Run`), and each request's
message list as a delta against its base request's (:class:`_History`).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import weakref
from collections.abc import Collection, Iterator, Sequence
from itertools import compress, count
from operator import is_not
from typing import IO, Any, Protocol

from ..errors import UsageError
from ..replay import MessageView
from ._json import finite

#: The buffer of a page's temporary file: a long session's texts are written and read back in a
#: few large system calls (the default 8 KiB makes one per message over that size).
_BUFFER = 1 << 20


#: The encoder ``json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str,
#: allow_nan=False)`` makes on every call, made once (a page encodes a few values per request).
_ENCODE = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), default=str, allow_nan=False).encode


def _script_json(value: Any) -> str:
    """JSON that cannot end a ``<script>`` block (``<``, ``>``, ``&`` escaped; ASCII only) and that
    ``JSON.parse`` reads: a number past the double range (a log's ``1e400``) is ``null``."""
    try:
        text = _ENCODE(value)
    except ValueError:
        text = _ENCODE(finite(value))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _seq_json(seq: Any) -> str:
    """:func:`_script_json` of a message's seq (an int, or None), without the encoder for the usual ones."""
    if seq is None:
        return "null"
    return int.__repr__(seq) if type(seq) is int else _script_json(seq)


class _Table:
    """Distinct JSON values (headers), each stored once: identity first, then the value's JSON text."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.by_id: dict[int, tuple[Any, int]] = {}
        self.by_text: dict[str, int] = {}

    def add(self, value: Any) -> int:
        known = self.by_id.get(id(value))
        if known is not None:
            return known[1]
        text = _script_json(value)
        number = self.by_text.setdefault(text, len(self.texts))
        if number == len(self.texts):
            self.texts.append(text)
        self.by_id[id(value)] = (value, number)  # holds the object so its id() is not reused
        return number


class _Texts(Protocol):
    """Where a session's page texts go, in order: :class:`_Kept` or :class:`_Run`."""

    def add(self, text: str) -> None: ...

    def __iter__(self) -> Iterator[str]: ...


class _Kept:
    """Texts kept in memory (a session whose requests are all in memory anyway)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def add(self, text: str) -> None:
        self.texts.append(text)

    def __iter__(self) -> Iterator[str]:
        return iter(self.texts)


class _Spool:
    """An anonymous temporary file of texts, one a line (script JSON is ASCII and holds no line
    break), made on the first text and gone when this is. The pages of one report share it
    (:class:`._html_page.SessionPages`): their logs are checked one after another, so each page's texts are
    one run of lines (:class:`_Run`). A file that cannot be made or written (no temporary folder,
    a full disk) is an error when the page is written, not the log's (it is being replayed)."""

    def __init__(self) -> None:
        self.file: IO[bytes] | None = None
        self.error: OSError | None = None
        self.writer: _Run | None = None
        self.at_end = True
        self.reader: object | None = None  # the read (:meth:`lines`) the file's position is at

    def write(self, run: _Run, text: str) -> None:
        try:
            if self.file is None:
                self.file = tempfile.TemporaryFile("w+b", buffering=_BUFFER)
                weakref.finalize(self, _close, self.file)
            if not self.at_end:
                self.file.seek(0, os.SEEK_END)
                self.at_end, self.reader = True, None
            if self.writer is not run:
                assert run.start < 0, "a page's texts are written in one run"
                self.writer, run.start = run, self.file.tell()
            self.file.write(text.encode("ascii") + b"\n")
        except OSError as exc:
            self.error = exc

    def lines(self, start: int, count: int) -> Iterator[str]:
        """``count`` lines from offset ``start``."""
        if self.file is not None and self.error is None:
            try:  # the texts still in the buffer (a full disk can refuse them only now)
                self.file.flush()
            except OSError as exc:
                self.error = exc
        if self.error is not None:
            raise UsageError(f"cannot write the page's temporary file: {self.error.strerror or self.error}",
                             path=tempfile.gettempdir(),
                             hint="free space there, or point TMPDIR at a folder with room, and run report again")
        if self.file is None:
            return
        read = object()  # this read: the file is sought again only after another read or a write moved it
        for _ in range(count):
            if self.reader is not read:
                self.file.seek(start)
                self.at_end, self.reader = False, read
            line = self.file.readline()
            start += len(line)
            yield line[:-1].decode("ascii")


def _close(file: IO[bytes]) -> None:
    """Close a spool's file; texts still in its buffer that a full disk refuses are dropped (the
    page's error, :meth:`_Spool.lines`, said so already), closing the file all the same."""
    try:
        file.close()
    except OSError:
        pass


class _Run:
    """One page's texts in a :class:`_Spool`: written in one run, read back as often as asked."""

    def __init__(self, spool: _Spool) -> None:
        self.spool = spool
        self.start = -1
        self.count = 0

    def add(self, text: str) -> None:
        if self.spool.error is None:
            self.spool.write(self, text)
        self.count += 1

    def __iter__(self) -> Iterator[str]:
        return self.spool.lines(self.start, self.count)


class _Messages:
    """A session's distinct messages, each stored once as its script JSON text, after its seq's
    (``texts``: ``"<seq> <message>"``, read back by :meth:`seqs` and :meth:`__iter__`).

    A message with a seq is keyed by that seq and checked by value (a replace re-derives the
    messages after it: new objects, same seq, same value); one without (title and search calls)
    by identity, then by ``(seq, text)`` (held as a 128-bit digest, so a spooled page keeps no
    text in memory). Two messages with equal text at different seqs stay two entries, so every
    entry has one seq. The seq and identity lookups only spare encoding a message again: they
    are dropped (:meth:`forget`) when the history is no longer an extension of the base's, so the
    messages of a history that was compacted or replaced are not kept alive.
    """

    def __init__(self, texts: _Texts) -> None:
        self.texts = texts
        self.count = 0
        self.by_seq: dict[int, list[tuple[Any, int]]] = {}
        self.by_id: dict[int, tuple[Any, int]] = {}
        self.by_text: dict[int | None, dict[bytes, int]] = {}  # by seq: a seq's texts

    def number(self, message: Any, seq: int | None) -> int:
        if seq is not None:
            for known, number in self.by_seq.get(seq, ()):
                if known is message or known == message:
                    return number
        else:
            found = self.by_id.get(id(message))
            if found is not None:
                return found[1]
        text = _script_json(message)
        key = hashlib.blake2b(f"{seq}:{text}".encode("ascii"), digest_size=16).digest()
        number = self.by_text.setdefault(seq, {}).setdefault(key, self.count)
        if number == self.count:
            self.texts.add(f"{_seq_json(seq)} {text}")
            self.count += 1
        if seq is not None:
            self.by_seq.setdefault(seq, []).append((message, number))
        else:
            self.by_id[id(message)] = (message, number)
        return number

    def seqs(self) -> Iterator[str]:
        """Each message's seq, as script JSON (``null``: none)."""
        for line in self.texts:
            yield line.partition(" ")[0]

    def __iter__(self) -> Iterator[str]:
        """Each message's script JSON."""
        for line in self.texts:
            yield line.partition(" ")[2]

    def forget(self, live: Collection[int]) -> None:
        """Drop the messages held for the seq and identity lookups (their numbers stay known by
        text), and the texts of seqs no longer ``live``: a message left out of a replaced or
        compacted history never comes back, so a long session keeps the texts of its surface only."""
        self.by_seq.clear()
        self.by_id.clear()
        by_text = self.by_text
        for seq in by_text.keys() - live:  # by_text is only looked up: its order does not matter
            if seq is not None:
                del by_text[seq]


class _History:
    """Encodes each request's message list as a delta against the previous loop request's.

    ``b`` is the base request's position in the session (-1: none), ``n`` the list's length,
    ``d`` the runs ``[position, [message numbers]]`` where it differs from the base (the rest of
    the first ``n`` positions are the base's); ``u`` marks a request that becomes the next base.
    Only the base's list of numbers is kept, so memory is linear in the session.
    """

    def __init__(self, messages: _Messages) -> None:
        self.messages = messages
        self.view: Sequence[Any] = ()
        self.numbers: list[int] = []
        self.base = -1

    def encode(self, position: int, request: Any) -> dict[str, Any]:
        listed: Sequence[Any] = request.messages
        seqs: Sequence[int] = request.message_seqs
        if len(seqs) != len(listed):
            seqs = ()
        base_view, base_numbers = self.view, self.numbers
        shared = listed.shared_prefix(base_view) if isinstance(listed, MessageView) else 0
        # The base's own objects at their own positions take its numbers and make no run: after a
        # replace (a new list, so nothing ``shared``) the leading ones are known from its lineage, and
        # the rest of the old positions are compared by identity at C speed, so only the other
        # messages (in position order, as they are numbered) are looked at one by one.
        same = shared
        if not shared and isinstance(listed, MessageView) and isinstance(base_view, MessageView):
            same = listed.common_items(base_view)
        items = listed[same:]
        old_view = base_view[same:]
        overlap = min(len(items), len(old_view))
        new_seqs = seqs[same:] if seqs else ()
        numbers: list[int] = base_numbers[shared:same + overlap]
        runs: list[list[Any]] = []
        number_of = self.messages.number
        for offset in (*compress(count(), map(is_not, items, old_view)), *range(overlap, len(items))):
            i = same + offset
            number = number_of(items[offset], new_seqs[offset] if new_seqs else None)
            if offset < overlap:
                numbers[i - shared] = number
                if base_numbers[i] == number:
                    continue
            else:
                numbers.append(number)
            if runs and runs[-1][0] + len(runs[-1][1]) == i:
                runs[-1][1].append(number)
            else:
                runs.append([i, [number]])
        encoded = {"b": self.base, "n": len(listed), "d": runs, "u": request.kind == "loop"}
        if request.kind == "loop":
            if shared < len(base_view):  # not an extension of the base: its older messages may be gone
                self.messages.forget(frozenset(seqs))
            del base_numbers[len(listed):]
            base_numbers[shared:] = numbers
            self.view, self.base = listed, position
        return encoded
