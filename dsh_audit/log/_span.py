"""A log's own time span, read cheaply: its header, then only the end of the file.

``--since``/``--until`` select logs by the times they record (header ``createdAt``, event ``time``,
both Unix milliseconds), never by the file's mtime. Reading every event to learn them would read a
1 GB log twice (once to select it, once to use it), so :func:`time_span` reads the header line and
then only the last records:

- a plain ``.jsonl`` is read backwards from its end in growing blocks until a complete line with
  a time is found (a torn last line without its newline and lines that do not parse are skipped);
- a ``.jsonl.zstd`` log's frame and block headers are walked without decompressing anything
  (RFC 8878: a block header says how many bytes to skip), and only the last frame is decompressed,
  or the one before it when the last holds no timed line (DSH writes one frame per append batch).

Event times are not guaranteed to increase (``Date.now()`` at append time; spec §1.4, and DSH's own
fixtures scramble them), so the latest time is the largest of every event in the last batch that
holds one (the last frame with a timed line; for a plain log, every complete line read from the
end), and the earliest is the smallest of ``createdAt`` and the first timed event's batch. This
assumes that a log's times do not go back by more than one batch, which holds for logs DSH writes.
Anything unexpected (a frame header that cannot be parsed, a skippable frame, which DSH refuses,
no time found near either end) falls back to reading the whole log with :func:`read_log`.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import zstandard

from ..errors import DshAuditError, UnreadableError
from ._decode import _SKIPPABLE_HIGH, _SKIPPABLE_LOW, ZSTD_MAGIC, Line, _frame_header_size
from ._limits import DecodeBudget
from ._header import parse_header
from ._outputs import open_regular
from ._reader import read_log
from ._json_line import parse_json
from ._records import RowError, decode_record
from ._versions import LATEST_VERSION

__all__ = ["time_span"]

_BLOCK = 64 << 10  # the first backward read of a plain log; each further one is twice as large
_PIECE = 1 << 20  # decompressed text is read in pieces of this size
_FRAMES_BACK = 8  # frames decoded from the end before giving up on the cheap path
_LINES = 64  # untimed lines read from either end of a plain log before giving up on it


class _Fallback(Exception):
    """The cheap path met something it does not handle: read the whole log instead."""


@dataclass(frozen=True, slots=True)
class TailRead:
    """What the cheap path of :func:`time_span` found and how little it read.

    Attributes:
        span: earliest and latest time, in seconds since the epoch.
        decoded_from: the file offset the end of the log was read (plain) or decompressed (zstd) from.
        decoded: bytes of text read or decompressed from there.
    """

    span: tuple[float, float]
    decoded_from: int
    decoded: int


def _timed(when: Any) -> bool:
    return isinstance(when, (int, float)) and not isinstance(when, bool) and when > 0


def _line_times(raw: bytes) -> list[float]:
    """The times (ms) of the events one line stores (a packed row stores several); none when the
    line does not parse."""
    try:
        records = decode_record(parse_json(raw))
    except (ValueError, RowError):  # not JSON, not UTF-8, too deep (a ValueError), a bad row
        return []
    return [r["time"] for r in records if isinstance(r, dict) and _timed(r.get("time"))]


def _header(path: str, raw: bytes) -> float | None:
    """The header's ``createdAt`` in ms (None when it records none).

    Raises:
        DshAuditError: the line is not a DSH header (another agent's log): the full read decides.
    """
    header, _, _ = parse_header(path, Line(1, raw), lenient=True, max_version=LATEST_VERSION)
    created = header.created_at
    return created if _timed(created) else None


def full_time_span(path: str | os.PathLike[str]) -> tuple[float, float] | None:
    """The earliest and latest of a log's own timestamps, from every event (the reference that
    :func:`time_span` reads cheaply); None when the log cannot be read or records no time."""
    times: list[float] = []
    try:
        with read_log(path, lenient=True) as opened:
            created = opened.header.created_at
            if _timed(created):
                times.append(created / 1000)
            first = last = None
            for event in opened.events():
                when = event.time
                if _timed(when):
                    first = when if first is None else min(first, when)
                    last = when if last is None else max(last, when)
            times.extend(t / 1000 for t in (first, last) if t is not None)
    except DshAuditError:
        return None
    return (min(times), max(times)) if times else None


def time_span(path: str | os.PathLike[str]) -> tuple[float, float] | None:
    """The earliest and latest of a log's own timestamps, in seconds since the epoch, read from its
    header and its last records only (see the module docstring); None when the log cannot be read
    or records no time, as for a log that is not DSH's (Claude Code, Codex).

    Args:
        path: a ``session.jsonl`` or ``session.jsonl.zstd`` log.

    Example:
        >>> time_span("sample_logs/chat/session.jsonl")  # doctest: +SKIP
        (1800000000.0, 1800000000.044)
    """
    try:
        tail = read_tail(path)
    except (_Fallback, DshAuditError, OSError, zstandard.ZstdError):
        return full_time_span(path)
    return None if tail is None else tail.span


def read_tail(path: str | os.PathLike[str]) -> TailRead | None:
    """The cheap path of :func:`time_span`, with where it started reading; None when the first line
    is not a DSH header.

    Raises:
        _Fallback: the log needs the full read (an unexpected frame, no time near the end).
        DshAuditError: the file cannot be opened, or passes a decoded-size limit.
        OSError: the file cannot be read.
    """
    name = os.fspath(path)
    with open_regular(name) as stream:
        head = stream.read(4)
        stream.seek(0)
        size = os.fstat(stream.fileno()).st_size
        budget = DecodeBudget(name)
        if head == ZSTD_MAGIC:
            return _zstd_tail(stream, name, size, budget)
        return _plain_tail(stream, name, size, budget)


def _span(created: float | None, first: Iterable[float], last: Iterable[float]) -> tuple[float, float]:
    times = [t / 1000 for t in (*([] if created is None else [created]), *first, *last)]
    if not times:
        raise _Fallback("no time")
    return min(times), max(times)


# -- plain logs ---------------------------------------------------------------------------------


def _plain_tail(stream: BinaryIO, name: str, size: int, budget: DecodeBudget) -> TailRead | None:
    first_line = stream.readline(_BLOCK)
    while not first_line.endswith(b"\n") and len(first_line) < size:
        more = stream.readline(_BLOCK)  # a long header: read on, a block at a time
        if not more:
            break
        first_line += more
    if not first_line.endswith(b"\n"):
        return None  # no complete header line: the reader refuses it (the full read says None)
    budget.spend(len(first_line), None)
    try:
        created = _header(name, first_line[:-1])
    except DshAuditError:
        return None
    body = len(first_line)
    latest, start = _plain_latest(stream, body, size, budget)
    earliest = _plain_first(stream, body, budget)
    return TailRead(_span(created, earliest, latest), start, size - start)


def _plain_latest(stream: BinaryIO, body: int, size: int, budget: DecodeBudget) -> tuple[list[float], int]:
    """The times of every complete line in the bytes read back from the end until one has a time;
    and the offset read from."""
    end = size
    start = size
    block = _BLOCK
    data = b""
    while start > body:
        start = max(body, start - block)
        stream.seek(start)
        piece = stream.read(end - start)
        budget.spend(len(piece), None)
        data = piece + data
        end = start
        block *= 2
        cut = data.rfind(b"\n")  # text after the last newline is a torn line
        complete = data[:cut + 1] if cut >= 0 else b""
        # The first line read may have begun before ``start``: only lines after a newline are whole,
        # unless the read reached the header's end.
        lines = complete.split(b"\n")[:-1]
        if start > body:
            lines = lines[1:]
        times = [t for raw in lines if raw for t in _line_times(raw)]
        if times:
            return times, start
        if len(lines) > _LINES:
            raise _Fallback("no timed line near the end")
    return [], start


def _plain_first(stream: BinaryIO, body: int, budget: DecodeBudget) -> list[float]:
    """The times of the first timed line of the first few after the header (a fork's seeded
    events are older than its ``createdAt``; a header may record none)."""
    stream.seek(body)
    for _ in range(_LINES):
        raw = stream.readline()
        if not raw.endswith(b"\n"):
            break
        budget.spend(len(raw), None)
        times = _line_times(raw[:-1])
        if times:
            return times
    return []


# -- zstd logs ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Frame:
    offset: int
    end: int
    complete: bool


def _frames(stream: BinaryIO, size: int) -> list[_Frame]:
    """Every frame's offsets, from the frame and block headers alone (RFC 8878 §3.1.1): nothing is
    decompressed and block contents are skipped with a seek. The last frame may be cut off.

    Raises:
        _Fallback: bytes that are not a zstd data frame (a skippable frame, which DSH refuses, or
            corruption), or a reserved bit or block type.
    """
    frames: list[_Frame] = []
    offset = 0
    while offset < size:
        stream.seek(offset)
        magic = stream.read(4)
        if len(magic) == 4 and magic != ZSTD_MAGIC:
            (number,) = struct.unpack("<I", magic)
            raise _Fallback("skippable frame" if _SKIPPABLE_LOW <= number <= _SKIPPABLE_HIGH else "not a frame")
        end = _frame_end(stream, offset, size)
        frames.append(_Frame(offset, min(end, size), end <= size))
        offset = end
    return frames


def _frame_end(stream: BinaryIO, offset: int, size: int) -> int:
    """The offset just past the frame at ``offset`` (past ``size`` when the file cuts it off)."""
    descriptor = stream.read(1)
    if not descriptor:
        return size + 1
    fhd = descriptor[0]
    if fhd & 0x18:
        raise _Fallback("reserved frame-header bit")
    position = offset + 4 + _frame_header_size(fhd)
    while True:
        if position + 3 > size:
            return size + 1
        stream.seek(position)
        value = int.from_bytes(stream.read(3), "little")
        last, block_type, block_size = value & 1, (value >> 1) & 3, value >> 3
        if block_type == 3:
            raise _Fallback("reserved block type")
        position += 3 + (1 if block_type == 1 else block_size)  # an RLE block stores its one byte
        if last:
            break
    return position + (4 if fhd & 0x04 else 0)  # the content checksum


def _decoded_lines(stream: BinaryIO, frame: _Frame, budget: DecodeBudget, compressed: int) -> Iterator[bytes]:
    """The complete lines of one frame's text, decompressed in pieces; a frame cut off at end of
    file yields the lines it holds whole, and a frame that fails to decode yields nothing more."""
    stream.seek(frame.offset)
    data = stream.read(frame.end - frame.offset)
    reader = zstandard.ZstdDecompressor().stream_reader(data, read_size=_PIECE, read_across_frames=False)
    rest = b""
    try:
        while True:
            piece = reader.read(_PIECE)
            if not piece:
                break
            budget.spend(len(piece), compressed)
            lines = (rest + piece).split(b"\n")
            rest = lines.pop()
            yield from lines
    except zstandard.ZstdError:
        if frame.complete:
            raise _Fallback("corrupt frame") from None


def _frame_times(stream: BinaryIO, frame: _Frame, budget: DecodeBudget, compressed: int) -> list[float]:
    return [t for raw in _decoded_lines(stream, frame, budget, compressed) if raw for t in _line_times(raw)]


def _zstd_tail(stream: BinaryIO, name: str, size: int, budget: DecodeBudget) -> TailRead | None:
    frames = _frames(stream, size)
    if not frames[0].complete:
        return None  # a header frame cut off: the reader refuses the log
    header_lines = list(_decoded_lines(stream, frames[0], budget, frames[0].end))
    if len(header_lines) != 1:
        raise _Fallback("the first frame must hold the header line alone")
    try:
        created = _header(name, header_lines[0])
    except DshAuditError:
        return None
    events = frames[1:]
    latest: list[float] = []
    start, compressed = size, frames[0].end  # the expansion ratio is over every byte decompressed
    for frame in reversed(events[-_FRAMES_BACK:]):
        start = frame.offset
        compressed += frame.end - frame.offset
        latest = _frame_times(stream, frame, budget, compressed)
        if latest:
            break
    else:
        if len(events) > _FRAMES_BACK:
            raise _Fallback("no timed line in the last frames")
    decoded = budget.decoded
    earliest: list[float] = []
    if events:
        earliest = _frame_times(stream, events[0], budget, compressed + events[0].end - events[0].offset)
    return TailRead(_span(created, earliest, latest), start, decoded)
