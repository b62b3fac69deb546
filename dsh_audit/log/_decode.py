"""Physical decoding: plain or multi-frame zstd bytes to complete lines, one at a time.

DSH writes each durable batch as one more independent zstd frame (spec §1.2). We walk the frame
headers ourselves so that a frame cut off at end of file (a torn tail: the process died mid-write)
is told apart from corruption inside a complete frame: the first keeps every complete line it can
decompress and is reported as a warning, the second is an error. In plain files a final line
without its newline is the torn tail. Only one frame and one partial line are held at a time.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

import zstandard

from ..errors import UnreadableError

__all__ = ["Line", "TornTail", "iter_lines", "is_zstd"]

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_SKIPPABLE_LOW, _SKIPPABLE_HIGH = 0x184D2A50, 0x184D2A5F
_READ = 1 << 20


@dataclass(frozen=True, slots=True)
class Line:
    """One complete line of decoded text, without its newline."""

    number: int
    raw: bytes


@dataclass(frozen=True, slots=True)
class TornTail:
    """What was left incomplete at the end of a file."""

    reason: str
    dropped_bytes: int


def is_zstd(head: bytes) -> bool:
    return head[:4] == ZSTD_MAGIC


def _frame_header_size(fhd: int) -> int:
    single_segment = (fhd >> 5) & 1
    fcs_flag = fhd >> 6
    dict_flag = fhd & 3
    size = 1 + (0 if single_segment else 1)
    size += (0, 1, 2, 4)[dict_flag]
    size += (1 if single_segment else 0, 2, 4, 8)[fcs_flag]
    return size


class _FrameReader:
    """Reads whole zstd frames from a stream; a short read marks a torn frame."""

    def __init__(self, stream: BinaryIO, path: str) -> None:
        self.stream = stream
        self.path = path
        self.offset = 0

    def _read(self, n: int) -> bytes:
        data = self.stream.read(n)
        self.offset += len(data)
        return data

    def next_frame(self) -> tuple[bytes, bool] | None:
        """Return ``(frame_bytes, complete)``, or None at a clean end of file."""
        start = self.offset
        magic = self._read(4)
        if not magic:
            return None
        if len(magic) < 4:
            return magic, False
        if magic != ZSTD_MAGIC:
            # DSH's frame scan accepts only zstd data frames: skippable frames are refused too.
            (number,) = struct.unpack("<I", magic)
            kind = "a skippable zstd frame, which DSH refuses" if _SKIPPABLE_LOW <= number <= _SKIPPABLE_HIGH \
                else f"not a zstd frame (bad magic {magic.hex()})"
            raise UnreadableError(
                f"bytes at offset {start} are {kind}",
                path=self.path,
                hint="the file is not a DSH zstd log, or it was damaged in the middle",
            )
        parts = [magic]
        fhd = self._read(1)
        parts.append(fhd)
        if not fhd:
            return b"".join(parts), False
        if fhd[0] & 0x18:
            raise UnreadableError(
                f"zstd frame at offset {start} sets a reserved frame-header bit",
                path=self.path,
                hint="the compressed data is corrupt",
            )
        checksum = (fhd[0] >> 2) & 1
        rest = self._read(_frame_header_size(fhd[0]) - 1)
        parts.append(rest)
        if len(rest) < _frame_header_size(fhd[0]) - 1:
            return b"".join(parts), False
        while True:
            block_header = self._read(3)
            parts.append(block_header)
            if len(block_header) < 3:
                return b"".join(parts), False
            value = int.from_bytes(block_header, "little")
            last, block_type, size = value & 1, (value >> 1) & 3, value >> 3
            body_size = 1 if block_type == 1 else size
            if block_type == 3:
                raise UnreadableError(
                    f"zstd frame at offset {start} has a reserved block type",
                    path=self.path,
                    hint="the compressed data is corrupt",
                )
            body = self._read(body_size)
            parts.append(body)
            if len(body) < body_size:
                return b"".join(parts), False
            if last:
                break
        if checksum:
            digest = self._read(4)
            parts.append(digest)
            if len(digest) < 4:
                return b"".join(parts), False
        return b"".join(parts), True


def _zstd_chunks(stream: BinaryIO, path: str) -> Iterator[tuple[bytes, bool, int, int]]:
    """Yield ``(plaintext, complete, frame_number, compressed_size)``; a torn frame is always the last."""
    frames = _FrameReader(stream, path)
    context = zstandard.ZstdDecompressor()  # one context for every frame: a new one per frame costs more than a frame
    index = 0
    while True:
        frame = frames.next_frame()
        if frame is None:
            return
        data, complete = frame
        index += 1
        if not data:
            continue
        decompressor = context.decompressobj()
        if complete:
            try:
                yield decompressor.decompress(data), True, index, len(data)
            except zstandard.ZstdError as exc:
                raise UnreadableError(
                    f"zstd frame {index} (offset {frames.offset - len(data)}) is corrupt: {exc}",
                    path=path,
                    hint="corruption inside a complete frame cannot be repaired; restore the file from a copy",
                ) from None
            continue
        try:
            partial = decompressor.decompress(data)
        except zstandard.ZstdError:
            partial = b""
        yield partial, False, index, len(data)
        return


def _plain_chunks(stream: BinaryIO) -> Iterator[tuple[bytes, bool, int, int]]:
    while True:
        chunk = stream.read(_READ)
        if not chunk:
            return
        yield chunk, True, 0, len(chunk)


def iter_lines(stream: BinaryIO, path: str, torn: list[TornTail]) -> Iterator[Line]:
    """Yield every complete line; what a crash left incomplete is recorded in ``torn``.

    zstd rules (DSH's reader): the first frame holds exactly the header line; complete frames
    must end on a line boundary; from a frame cut off at end of file the complete lines are kept.
    """
    head = stream.peek(4)[:4] if hasattr(stream, "peek") else b""
    zstd = is_zstd(head)
    chunks = _zstd_chunks(stream, path) if zstd else _plain_chunks(stream)
    pending = b""
    number = 0
    while True:
        try:
            item = next(chunks, None)
        except UnreadableError as exc:
            if exc.line is None:
                exc.line = number + 1  # the first line the corrupt frame would have held
            raise
        if item is None:
            break
        chunk, complete, frame, size = item
        if zstd and frame == 1 and complete and chunk.count(b"\n") != 1 or (
            zstd and frame == 1 and complete and not chunk.endswith(b"\n")
        ):
            raise UnreadableError(
                "the first zstd frame must hold exactly the header line",
                path=path,
                line=1,
                hint="DSH writes the header alone in frame 1; this file was not written by DSH",
            )
        if zstd and not complete:
            # Only a partial last line of the recovered text is reported again below.
            recovered = chunk.count(b"\n")
            torn.append(TornTail(f"zstd frame {frame} is cut off at end of file ({recovered} complete "
                                 f"line(s) recovered from it)", 0 if recovered else size))
        if pending:
            chunk = pending + chunk
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline == -1:
                break
            number += 1
            yield Line(number, chunk[start:newline])
            start = newline + 1
        pending = chunk[start:]
    if pending:
        if zstd and not torn:
            raise UnreadableError(
                "a complete zstd frame ends inside a record",
                path=path,
                line=number + 1,
                hint="corruption inside a complete frame cannot be repaired",
            )
        torn.append(TornTail(f"line {number + 1} has no terminating newline", len(pending)))
