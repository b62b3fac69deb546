"""Rewriting a log file record by record as it is read, keeping its encoding: plain JSONL stays
JSONL, and multi-frame zstd stays multi-frame zstd with one output frame per input frame (so frame 1
still holds the header line alone, and batch boundaries stay where DSH put them).

The log is read once: :func:`teed` hands every byte the session reader reads to a
:class:`LogRewriter`, which decodes, redacts and writes as the bytes come. Memory is bounded by one
frame's redacted text (zstd) or one line (plain), never by the log; a zstd frame is decompressed in
slices under the reader's :class:`dsh_audit.log.DecodeBudget`, so a decompression bomb is refused,
not held.

Each record is written as ``JSON.stringify`` writes it, but with every character a terminal would act
on (DEL, C1 controls, bidi controls, lone surrogates...) as its ``\\uXXXX`` escape, as every JSON output
of dsh-audit is (:func:`dsh_audit.report.dumps_line`): the copy reads back to the same values.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, BinaryIO

import zstandard

from ..errors import UnreadableError
from ..log import DecodeBudget, parse_json
from ..report import dumps_line

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

__all__ = ["LogRewriter", "drain", "teed"]

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# Compressed bytes decompressed at a time: a zstd block expands at most 128 KiB from 4 bytes, so a
# slice cannot expand past 32 MiB before the decode budget is checked again.
_SLICE = 1 << 10


class LogRewriter:
    """Writes a log's bytes, fed in file order (:meth:`feed`), to ``out`` with every record passed
    through ``record``; :meth:`finish` at the end of the file.

    Example:
        >>> out = io.BytesIO()
        >>> rewriter = LogRewriter(out, lambda r: {**r, "n": 0}, path="log.jsonl")
        >>> for piece in (b'{"n": 1}\\n{"n', b'": 2}\\n{"n": 3}'):
        ...     rewriter.feed(piece)
        >>> rewriter.finish(), out.getvalue()
        (['file end: a last line without its newline (a torn tail) was left out'], b'{"n":0}\\n{"n":0}\\n')
    """

    def __init__(self, out: IO[bytes], record: Callable[[object], object], *, path: str) -> None:
        self._out, self._record, self._path = out, record, path
        self.notes: list[str] = []
        self.compressed = False
        self._head = b""  # the first bytes, until they tell zstd from plain text
        self._started = False
        self._damaged = 0
        self._partial: list[bytes] = []  # the start of a line that continues in a later piece
        self._error: UnreadableError | None = None
        # zstd: the frame being read, its number and its redacted lines so far
        self._compressor = zstandard.ZstdCompressor(level=3, write_checksum=True)
        self._context = zstandard.ZstdDecompressor()
        self._frame: zstandard.ZstdDecompressionObj | None = None
        self._number = 0
        self._lines: list[bytes] = []
        self._fed = 0
        self._budget: DecodeBudget | None = None

    def _redact(self, raw: bytes) -> bytes | None:
        try:
            value = parse_json(raw)
        except (ValueError, UnicodeDecodeError):
            self._damaged += 1
            return None
        # JSON.stringify's spelling, with what a terminal would act on (DEL, C1 controls, bidi
        # controls, lone surrogates...) as ``\\uXXXX``: the copy reads back to the same values, and
        # ``cat`` of it shows them inert (a placeholder of a two- or three-byte character may be one)
        return dumps_line(self._record(value)).encode("utf-8") + b"\n"

    def _text(self, text: bytes, emit: Callable[[bytes], object]) -> None:
        """Decoded ``text``: each line it completes is redacted and handed to ``emit``."""
        start = 0
        while True:
            newline = text.find(b"\n", start)
            if newline == -1:
                break
            if self._partial:
                self._partial.append(text[start:newline])
                raw = b"".join(self._partial)
                self._partial.clear()
            else:
                raw = text[start:newline]
            redacted = self._redact(raw)
            if redacted is not None:
                emit(redacted)
            start = newline + 1
        if start < len(text):
            self._partial.append(text[start:])

    def _torn(self, where: str) -> None:
        if any(self._partial):
            self.notes.append(f"{where}: a last line without its newline (a torn tail) was left out")
        self._partial.clear()

    def _end_frame(self) -> None:
        self._torn(f"frame {self._number}")
        self._out.write(self._compressor.compress(b"".join(self._lines)))
        self._lines.clear()
        self._frame = None

    def _zstd(self, data: bytes) -> None:
        if self._budget is None:
            self._budget = DecodeBudget(self._path)
        view = memoryview(data)
        while view:
            if self._frame is None:
                self._number += 1
                self._frame = self._context.decompressobj()
            piece = bytes(view[:_SLICE])
            self._fed += len(piece)
            try:
                text = self._frame.decompress(piece)
            except zstandard.ZstdError as exc:
                raise UnreadableError(f"zstd frame {self._number} is corrupt: {exc}", path=self._path) from None
            self._budget.spend(len(text), self._fed)
            self._text(text, self._lines.append)
            if not self._frame.eof:
                view = view[len(piece):]
                continue
            rest = self._frame.unused_data
            self._fed -= len(rest)
            self._end_frame()
            view = memoryview(rest + bytes(view[len(piece):]))

    def feed(self, data: bytes) -> None:
        """The next bytes of the file. A problem (corrupt zstd data, a decompression bomb) is kept
        for :meth:`finish` to raise: the session reader, reading the same bytes, reports its own first."""
        if self._error is not None or not data:
            return
        if not self._started:
            self._head += data
            if len(self._head) < len(_ZSTD_MAGIC):
                return
            data, self._head, self._started = self._head, b"", True
            self.compressed = data[:4] == _ZSTD_MAGIC
        try:
            if self.compressed:
                self._zstd(data)
            else:
                self._text(data, self._out.write)
        except UnreadableError as exc:
            self._error = exc

    def finish(self) -> list[str]:
        """The end of the file: write what is pending; returns notes on what could not be carried
        over (torn tails, damaged records).

        Raises:
            UnreadableError: a zstd frame is corrupt, or the log passes a decode limit.
        """
        if not self._started and self._head:
            data, self._head, self._started = self._head, b"", True
            self.compressed = False
            self.feed(data)
        if self._error is not None:
            raise self._error
        if self._frame is not None:
            self.notes.append(f"zstd frame {self._number} is cut off at end of file: its complete lines were kept")
            self._end_frame()
        elif not self.compressed:
            self._torn("file end")
        if self._damaged:
            self.notes.append(f"{self._damaged} damaged record(s) the reader skips were left out")
        return self.notes


class _Tee(io.RawIOBase):
    """The bytes of ``handle``, each handed to ``sink`` as it is read (``handle`` stays open)."""

    def __init__(self, handle: BinaryIO, sink: Callable[[bytes], None]) -> None:
        super().__init__()
        self._handle, self._sink = handle, sink

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        target = memoryview(buffer).cast("B")
        data = self._handle.read(len(target))
        target[:len(data)] = data
        if data:
            self._sink(data)
        return len(data)


def teed(handle: BinaryIO, sink: Callable[[bytes], None]) -> BinaryIO:
    """``handle`` as a buffered stream that hands every byte read from it to ``sink``, once and in
    order (peeked and buffered bytes included); closing it leaves ``handle`` open, for
    :func:`drain`."""
    return io.BufferedReader(_Tee(handle, sink))


def drain(handle: BinaryIO, sink: Callable[[bytes], None]) -> None:
    """Hand the rest of ``handle`` (what a reader that stopped early left unread) to ``sink``."""
    while data := handle.read(1 << 20):
        sink(data)
