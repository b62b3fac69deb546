"""Physical decoding: plain or multi-frame zstd bytes to complete lines, one at a time.

DSH writes each durable batch as one more independent zstd frame (spec §1.2). We walk the frame
headers ourselves so that a frame cut off at end of file (a torn tail: the process died mid-write)
is told apart from corruption inside a complete frame: the first keeps every complete line it can
decompress and is reported as a warning, the second is an error. In plain files a final line
without its newline is the torn tail.

Work is bounded by what a log holds, not by what a hostile file claims (``docs/hostile-inputs.md``):
a frame is decompressed as its blocks are read, in pieces of at most 1 MiB, and only a frame of
up to 32 MiB of text is held whole (so that a corrupt frame yields none of its lines); a run of
blank lines (lines of JSON whitespace alone, ``\r`` of a CRLF line end too: DSH's ``JSON.parse``
refuses each as it refuses an empty one) is found at C speed and handed on as one :class:`Line` with
a ``count``; a line split
across pieces is gathered in one buffer that becomes the line; and the decoded size and the zstd
expansion ratio have limits (:mod:`._limits`: environment variables ``DSH_AUDIT_MAX_DECODED`` and
``DSH_AUDIT_MAX_RATIO``) that turn a decompression bomb into a one-line refusal.

While :func:`~._progress.read_progress` is in effect, the reader reports the raw bytes of the file it has
consumed (compressed bytes for zstd), about once per MiB, for a progress bar.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, BinaryIO

import zstandard

from ..errors import UnreadableError
from ._limits import DecodeBudget
from ._progress import READ_HOOK, ConsumedBytes
from ._json_line import LongStrings, parse_json
from .._frozen import frozen_builder

__all__ = ["Line", "TornTail", "iter_lines", "is_zstd", "parse_line"]

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_SKIPPABLE_LOW, _SKIPPABLE_HIGH = 0x184D2A50, 0x184D2A5F
_READ = 1 << 20
_HOLD = 32 << 20  # a frame's text up to this size is verified whole before any of its lines is used
#: a run of blank lines: lines of JSON whitespace alone (space, tab, CR), which DSH takes as it takes an
#: empty line (``JSON.parse`` refuses each: an unparsable record), so each is one of the run
_BLANKS = re.compile(rb"[ \t\r\n]*\n")  # one repeat, no group: the regex engine keeps no state per line
_SPACES = re.compile(rb"[ \t\r]*")
_SPACE_BYTES = b" \t\r"
#: a run of lines no JSON value can be read from (``junk`` of :func:`iter_lines`): ASCII text whose first
#: byte after JSON whitespace opens no value (``{ [ " - 0-9 t f n``), which ``JSON.parse`` refuses as
#: every parser here does, with a ValueError (never a UnicodeDecodeError: ASCII)
_JUNK = re.compile(rb"[ \t\r]*[^ \t\r\n{\[\"\-0-9tfn\x80-\xff]")
#: where a run of junk lines ends: the newline before a line that may open a JSON value or is blank,
#: or a byte that is not ASCII (the line holding it is no junk line)
_JUNK_END = re.compile(rb"\n(?=[ \t\r]*[\n{\[\"\-0-9tfn])|[\x80-\xff]")


@dataclass(frozen=True, slots=True)
class Line:
    """One complete line of decoded text, without its newline.

    ``count`` is 1, except for a run of blank lines (of JSON whitespace alone, :data:`_BLANKS`): one
    ``Line`` with ``raw == b""`` stands for ``count`` consecutive blank lines, the first of them
    numbered ``number``. A line longer than a piece of the decoder carries ``strings``, for :func:`parse_json` to decode its long strings
    once for every consumer of the line.
    """

    number: int
    raw: bytes | bytearray  # a bytearray for a line joined from pieces (not copied once more)
    count: int = 1
    strings: LongStrings | None = field(default=None, compare=False, repr=False)


#: ``Line(...)``, made by plain assignment (:func:`~dsh_audit._frozen.frozen_builder`): a log has a line
#: per record, and a frozen dataclass's ``__init__`` costs a call per field.
_new_line = frozen_builder(Line)


#: the line :func:`parse_line` last parsed for a later consumer, and its value
_SHARED: tuple[Line | None, Any] = (None, None)


def parse_line(line: Line, *, share: bool = False) -> Any:
    """:func:`parse_json` of ``line``, parsed once for two consumers that read it in turn.

    A reader that tees its lines to a validator (``check``, ``report``) hands each line to the
    validator first, which parses it with ``share=True``; the reader's own parse of the same
    ``Line`` then takes that value (and forgets it) instead of parsing the line again. Both only
    read the value. Without a first consumer, this is :func:`parse_json`.

    Raises:
        ValueError, UnicodeDecodeError: as :func:`parse_json`.
    """
    global _SHARED
    found, value = _SHARED
    if found is line:
        _SHARED = (None, None)
        return value
    value = parse_json(line.raw, line.strings)
    if share:
        _SHARED = (line, value)
    return value


@dataclass(frozen=True, slots=True)
class TornTail:
    """What was left incomplete at the end of a file."""

    reason: str
    dropped_bytes: int

    def __str__(self) -> str:
        """The one wording of every view (a log's or a capture's warning, a DSH103 finding).

        Example:
            >>> str(TornTail("line 3 has no terminating newline", 120))
            'torn tail: line 3 has no terminating newline (120 bytes ignored)'
        """
        return f"torn tail: {self.reason} ({self.dropped_bytes} bytes ignored)"


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


#: :func:`_frame_header_size` of every frame-header descriptor byte, looked up once per frame
_HEADER_SIZES = tuple(_frame_header_size(fhd) for fhd in range(256))


class _FrameReader:
    """Reads whole zstd frames from a stream; a short read marks a torn frame."""

    def __init__(self, stream: BinaryIO, path: str) -> None:
        self.stream = stream
        self.path = path
        self.offset = 0
        self.complete = False  # whether the last frame read was whole

    def next_frame(self) -> tuple[bytes, bool] | None:
        """Return ``(frame_bytes, complete)``, or None at a clean end of file."""
        parts = list(self.frame_parts())
        return (b"".join(parts), self.complete) if parts else None

    def frame_parts(self) -> Iterator[bytes]:
        """Yield the next frame's bytes in parts as they are read (the header, then each block), none
        at a clean end of file; :attr:`complete` then says whether the whole frame was there."""
        self.complete = False
        start = self.offset
        read = self.stream.read  # each read counted into ``offset`` as it is made (a log has a frame per batch)
        magic = read(4)
        self.offset += len(magic)
        if not magic:
            return
        if len(magic) == 4 and magic != ZSTD_MAGIC:
            # DSH's frame scan accepts only zstd data frames: skippable frames are refused too.
            (number,) = struct.unpack("<I", magic)
            kind = "a skippable zstd frame, which DSH refuses" if _SKIPPABLE_LOW <= number <= _SKIPPABLE_HIGH \
                else f"not a zstd frame (bad magic {magic.hex()})"
            raise UnreadableError(
                f"bytes at offset {start} are {kind}",
                path=self.path,
                hint="the file is not a DSH zstd log, or it was damaged in the middle",
            )
        yield magic
        fhd = read(1)
        self.offset += len(fhd)
        if len(magic) < 4 or not fhd:
            return
        if fhd[0] & 0x18:
            raise UnreadableError(
                f"zstd frame at offset {start} sets a reserved frame-header bit",
                path=self.path,
                hint="the compressed data is corrupt",
            )
        checksum = (fhd[0] >> 2) & 1
        wanted = _HEADER_SIZES[fhd[0]] - 1
        rest = read(wanted)
        self.offset += len(rest)
        yield fhd + rest
        if len(rest) < wanted:
            return
        while True:
            block_header = read(3)
            self.offset += len(block_header)
            if len(block_header) < 3:
                yield block_header
                return
            value = int.from_bytes(block_header, "little")
            last, block_type, size = value & 1, (value >> 1) & 3, value >> 3
            body_size = 1 if block_type == 1 else size
            if block_type == 3:
                raise UnreadableError(
                    f"zstd frame at offset {start} has a reserved block type",
                    path=self.path,
                    hint="the compressed data is corrupt",
                )
            body = read(body_size)
            self.offset += len(body)
            yield block_header + body
            if len(body) < body_size:
                return
            if last:
                break
        if checksum:
            digest = read(4)
            self.offset += len(digest)
            yield digest
            if len(digest) < 4:
                return
        self.complete = True


def _zstd_chunks(stream: BinaryIO, path: str, torn: list[TornTail], budget: DecodeBudget,
                 consumed: ConsumedBytes | None) -> Iterator[bytes]:
    """Yield the decoded text in pieces; a frame cut off at end of file is the last one read, and
    what it left incomplete is recorded in ``torn``; each frame's bytes count as ``consumed`` once
    its text is handed on. A frame is decompressed as it is read, never held whole."""
    frames = _FrameReader(stream, path)
    context = zstandard.ZstdDecompressor()  # one context for every frame: a new one per frame costs more than a frame
    index = 0
    while True:
        start = frames.offset
        parts = frames.frame_parts()
        blocks = _frame_text(parts, context)
        piece = next(blocks, None)
        if piece is None:
            return
        index += 1
        held: list[bytes] = []  # the frame's text while it is small enough to be verified whole
        held_size = newlines = 0  # newlines: of the pieces no longer held, counted as they go
        last = b""
        try:
            for piece in blocks:
                budget.spend(len(piece), frames.offset)
                last = piece
                if held_size >= 0:
                    held.append(piece)
                    held_size += len(piece)
                    if held_size <= _HOLD:
                        continue
                    held_size = -1  # too big to hold: its lines are used as they come
                    newlines = sum(part.count(b"\n") for part in held)
                    yield from held
                    held.clear()
                    continue
                newlines += piece.count(b"\n")
                yield piece
        except zstandard.ZstdError as exc:
            for _ in parts:  # read the rest of the frame: is it complete (corrupt) or cut off?
                pass
            if frames.complete:
                raise UnreadableError(
                    f"zstd frame {index} (offset {start}) is corrupt: {exc}",
                    path=path,
                    hint="corruption inside a complete frame cannot be repaired; restore the file from a copy",
                ) from None
            if held_size >= 0:  # a cut-off frame that cannot be decoded recovers nothing
                held.clear()
                newlines = 0
        complete = frames.complete
        if index == 1 or not complete:  # only the header frame's and a torn frame's lines are counted
            newlines += sum(part.count(b"\n") for part in held)
        if index == 1 and complete and (newlines != 1 or not last.endswith(b"\n")):
            raise _header_frame_error(path)
        yield from held
        if consumed is not None:
            consumed.add(frames.offset - start)
        if not complete:
            # Only a partial last line of the recovered text is reported again by iter_lines.
            torn.append(TornTail(f"zstd frame {index} is cut off at end of file ({newlines} complete "
                                 f"line(s) recovered from it)", 0 if newlines else frames.offset - start))
            return


_BATCH = 8  # frame parts fed to the decompressor at once: at most 8 blocks of at most 128 KiB of text each


def _frame_text(parts: Iterator[bytes], context: zstandard.ZstdDecompressor) -> Iterator[bytes]:
    """Yield ``b""`` when a frame starts (nothing at a clean end of file), then its text in pieces
    of at most 1 MiB, decompressed as its blocks (``parts`` of :meth:`_FrameReader.frame_parts`)
    are read."""
    first = next(parts, None)
    if first is None:
        return
    yield b""
    decoder = context.decompressobj()
    batch = [first, *islice(parts, _BATCH - 1)]
    while batch:  # a part is read only once the batch before it is decompressed
        text = decoder.decompress(b"".join(batch))
        if text:
            yield text
        batch = list(islice(parts, _BATCH))


def _header_frame_error(path: str) -> UnreadableError:
    return UnreadableError(
        "the first zstd frame must hold exactly the header line",
        path=path,
        line=1,
        hint="DSH writes the header alone in frame 1; this file was not written by DSH",
    )


def _junk_end(chunk: bytes, start: int) -> int:
    """Where the run of junk lines (:data:`_JUNK`) at ``start`` of ``chunk`` ends (after the newline
    of its last complete line), found at C speed; ``start`` when the line there is none."""
    if _JUNK.match(chunk, start) is None:
        return start
    found = _JUNK_END.search(chunk, start)
    if found is None:
        return chunk.rfind(b"\n", start) + 1
    if chunk[found.start()] == 10:  # the newline ending the run
        return found.start() + 1
    return chunk.rfind(b"\n", start, found.start()) + 1 or start  # the line before the one not ASCII


def _plain_chunks(stream: BinaryIO, budget: DecodeBudget, consumed: ConsumedBytes | None) -> Iterator[bytes]:
    while True:
        chunk = stream.read(_READ)
        if not chunk:
            return
        budget.spend(len(chunk), None)
        if consumed is not None:
            consumed.add(len(chunk))
        yield chunk


def iter_lines(stream: BinaryIO, path: str, torn: list[TornTail], *, junk: bool = False) -> Iterator[Line]:
    """Yield every complete line; what a crash left incomplete is recorded in ``torn``.

    zstd rules (DSH's reader): the first frame holds exactly the header line; complete frames
    must end on a line boundary; from a frame cut off at end of file the complete lines are kept.
    A run of blank lines (JSON whitespace alone) comes as one ``Line`` whose ``count`` says how many
    (``raw`` empty). With ``junk``, so does a run of lines no JSON value can be read from
    (:data:`_JUNK`), after the first line: one ``Line`` whose ``raw`` is the run's first line and
    ``count`` how many there are (for a reader that takes each such line as unparsable, as DSH does,
    at C speed: ``x`` lines by the million). The file's bytes are reported to the hook of :func:`read_progress` in effect at the first line, if any.

    Raises:
        UnreadableError: corrupt zstd data, or a log past a limit of :func:`decode_limits`.
        UsageError: a limit set in the environment is not a number.
    """
    budget = DecodeBudget(path)
    head = stream.peek(4)[:4] if hasattr(stream, "peek") else b""
    zstd = is_zstd(head)
    hook = READ_HOOK.get()
    consumed = None if hook is None else ConsumedBytes(hook)
    chunks = _zstd_chunks(stream, path, torn, budget, consumed) if zstd else _plain_chunks(stream, budget, consumed)
    # The start of a line that continues in a later piece: one growing buffer that becomes the
    # line (a list of pieces joined would hold the line twice, and the allocator keeps the memory
    # of the freed pieces).
    parts: bytearray | None = None
    number = 0
    blank_first = blanks = 0  # a run of blank lines not yet handed on
    while True:
        try:
            chunk = next(chunks, None)
        except UnreadableError as exc:
            if exc.line is None:
                exc.line = number + 1  # the first line the corrupt frame would have held
            raise
        if chunk is None:
            if consumed is not None:
                consumed.flush()
            break
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            if newline == -1:
                break
            if parts is None and chunk[start] == 123 and not blanks:  # 123: "{": a record, whole in this piece
                number += 1
                yield _new_line(number, chunk[start:newline])
                start = newline + 1
                continue
            # A blank line (maybe begun in the piece before): the run it opens, found at C speed
            run = _BLANKS.match(chunk, start) if (newline == start or chunk[start] in _SPACE_BYTES) and (
                not parts or _SPACES.fullmatch(parts)) else None
            if run is not None:
                parts = None
                end = run.end()
                if not blanks:
                    blank_first = number + 1
                lines = chunk.count(b"\n", start, end)
                blanks += lines
                number += lines
                start = end
                continue
            if blanks:
                yield _new_line(blank_first, b"", blanks)
                blanks = 0
            if junk and not parts and number and chunk[start] != 123:  # 123: "{", every record's
                end = _junk_end(chunk, start)
                if end > start:
                    lines = chunk.count(b"\n", start, end)
                    yield _new_line(number + 1, chunk[start:chunk.find(b"\n", start)], lines)
                    number += lines
                    start = end
                    continue
            number += 1
            if parts is not None:
                parts += memoryview(chunk)[start:newline]
                line = _new_line(number, parts, 1, LongStrings())
                parts = None
                yield line
                del line  # the line is the consumer's alone while this generator waits
            else:
                yield _new_line(number, chunk[start:newline])
            start = newline + 1
        if start < len(chunk):
            if parts is None:
                parts = bytearray()
            parts += memoryview(chunk)[start:]
    if blanks:
        yield _new_line(blank_first, b"", blanks)
    if parts is not None:
        if zstd and not torn:
            raise UnreadableError(
                "a complete zstd frame ends inside a record",
                path=path,
                line=number + 1,
                hint="corruption inside a complete frame cannot be repaired",
            )
        torn.append(TornTail(f"line {number + 1} has no terminating newline", len(parts)))
