"""Rewriting a log file record by record as it is read, in the encoding its output's name asks for
(:func:`name_compression`, as DSH reads a log's by its name), else in its own: multi-frame zstd
written zstd keeps one output frame per input frame (so frame 1 still holds the header line alone,
and batch boundaries stay where DSH put them); plain JSONL written zstd gets the header line alone in
frame 1, as DSH writes it, and the other lines in frames of up to 1 MiB; zstd written plain is its lines.

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
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, BinaryIO

import zstandard

from ..errors import UnreadableError
from ..log import DecodeBudget, parse_json, read_stream
from ..report import dumps_line

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

__all__ = ["LogRewriter", "drain", "name_compression", "refuse_early", "teed"]

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# Compressed bytes decompressed at a time: a zstd block expands at most 128 KiB from 4 bytes, so a
# slice cannot expand past 32 MiB before the decode budget is checked again.
_SLICE = 1 << 10
# Text of a plain log gathered into one zstd frame when it is written zstd (DSH reads frames of up to 32 MiB whole).
_FRAME = 1 << 20


def refuse_early(handle: BinaryIO, name: str, *, lenient: bool) -> None:
    """Raise now, before a byte of the log open at ``handle`` (at its start; ``name`` its path) is
    redacted, the refusal the reader gives ahead of its first event: a header DSH refuses (a relative
    cwd: refused once the whole log is read, as DSH refuses it, with no event handed out before), or a
    first record it cannot take. The same open file is read (never opened again, ``handle`` left where it
    is: :class:`_Beside`) at the reader's speed, to its first event or to that refusal, the error the
    redacting read would raise at its end (issue 15: a 12.7 MB log was redacted whole, 5.6 s, before
    its line-1 refusal). A sound log costs its first lines read twice, a refused one no redaction.

    Raises:
        DshAuditError: the reader's refusal.
    """
    with read_stream(io.BufferedReader(_Beside(handle.fileno())), name, lenient=lenient) as log:
        next(log.events(collapse_rows=True), None)


class _Beside(io.RawIOBase):
    """The open file ``fd`` read from its start with ``pread``: its own offset moves, not the
    descriptor's, which the redacting read then reads from where it is; closing it leaves ``fd`` open."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd, self._at = fd, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        view = memoryview(buffer).cast("B")
        data = os.pread(self._fd, len(view), self._at)
        view[:len(data)] = data
        self._at += len(data)
        return len(data)


def name_compression(path: Path) -> bool | None:
    """Whether a log written to ``path`` is zstd, read from its name as DSH reads a log's compression:
    ``.zstd`` zstd, ``.jsonl`` plain, and either in capitals too (review C of session 40: ``R.JSONL.ZSTD``
    was written plain, with no note); None for any other name (then the input's is kept).

    Example:
        >>> [name_compression(Path(n)) for n in ("a.jsonl.zstd", "x.log.zstd", "R.JSONL.ZSTD", "a.JSONL", "a.log")]
        [True, True, True, False, None]
    """
    name = path.name.lower()
    if name.endswith(".zstd"):
        return True
    return False if name.endswith(".jsonl") else None


class LogRewriter:
    """Writes a log's bytes, fed in file order (:meth:`feed`), to ``out`` with every record passed
    through ``record``, zstd when ``compress`` says so (None: when the input is); :meth:`finish` at
    the end of the file.

    Example:
        >>> out = io.BytesIO()
        >>> rewriter = LogRewriter(out, lambda r: {**r, "n": 0}, path="log.jsonl")
        >>> for piece in (b'{"n": 1}\\n{"n', b'": 2}\\n{"n": 3}'):
        ...     rewriter.feed(piece)
        >>> rewriter.finish(), out.getvalue()
        (['file end: a last line without its newline (a torn tail) was left out'], b'{"n":0}\\n{"n":0}\\n')
    """

    def __init__(self, out: IO[bytes], record: Callable[[object], object], *, path: str,
                 compress: bool | None = None) -> None:
        self._out, self._record, self._path = out, record, path
        self.notes: list[str] = []
        self.compressed = False  # whether the input is zstd
        self._compress = compress  # whether the output is: None, as the input
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
        self._gathered = 0  # a plain log written zstd: the bytes of the lines of the frame being gathered
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

    @property
    def written_compressed(self) -> bool:
        """Whether the copy is zstd: as its name asked (``compress``), else as the input is."""
        return self.compressed if self._compress is None else self._compress

    def _end_frame(self) -> None:
        self._torn(f"frame {self._number}")
        text = b"".join(self._lines)
        self._out.write(self._compressor.compress(text) if self.written_compressed else text)
        self._lines.clear()
        self._frame = None

    def _gather(self, line: bytes) -> None:
        """A line of a plain log written zstd: the first (the header) alone in frame 1, as DSH writes
        it, the others gathered into frames of up to :data:`_FRAME` bytes (memory stays one frame's)."""
        self._lines.append(line)
        self._gathered += len(line)
        if self._number == 0 or self._gathered >= _FRAME:
            self._flush_gathered()

    def _flush_gathered(self) -> None:
        if self._lines:
            self._number += 1
            self._out.write(self._compressor.compress(b"".join(self._lines)))
            self._lines.clear()
            self._gathered = 0

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
                self._text(data, self._gather if self.written_compressed else self._out.write)
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
            self._flush_gathered()
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
