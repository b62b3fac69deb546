"""Reading a log that is still being written: a header from any byte stream, and how much of a
growing file's bytes form complete records (whole lines, whole zstd frames).

A follower (``dsh-audit watch``) hands :func:`read_stream` a stream that releases only complete
units, as :func:`complete_length` measures them, so the decoder never sees a line or frame the
writer has not finished; what stays incomplete after the writer has gone is released at the end,
where the decoder reports it as the torn tail DSH would.
"""

from __future__ import annotations

import io
from typing import BinaryIO

from ..errors import CorruptLogError, UnreadableError
from ._decode import ZSTD_MAGIC, TornTail, _FrameReader, iter_lines
from ._header import parse_header
from ._reader import _META, SessionLog
from ._types import KNOWN_EVENT_TYPES
from ._versions import LATEST_VERSION, known_types

__all__ = ["complete_length", "is_zstd_head", "read_stream"]


def complete_length(data: bytes, *, zstd: bool) -> int:
    """How many leading bytes of ``data`` (a log's unread bytes, starting at a record boundary)
    are complete records: whole lines for plain text, whole frames for zstd.

    Bytes that are not a frame at all are counted as complete, so the decoder reads them and
    reports the corruption itself rather than the follower waiting for them forever.

    Example:
        >>> complete_length(b'{"a":1}\\n{"b"', zstd=False)
        8
    """
    if not zstd:
        return data.rfind(b"\n") + 1
    frames = _FrameReader(io.BytesIO(data), "<follow>")
    done = 0
    try:
        while True:
            frame = frames.next_frame()
            if frame is None or not frame[1]:
                return done
            done = frames.offset
    except UnreadableError:
        return len(data)


def is_zstd_head(head: bytes) -> bool:
    """Whether a log's first bytes are a zstd frame (else it is plain text)."""
    return head[:4] == ZSTD_MAGIC


def read_stream(stream: BinaryIO, name: str, *, lenient: bool = False,
                max_version: int = LATEST_VERSION) -> SessionLog:
    """:func:`read_log` over an already open binary stream (``name`` is the path reported).

    The stream is read only as the events are iterated; a stream whose ``read`` blocks until the
    writer appends more makes :meth:`SessionLog.events` a live feed. The log closes the stream.
    """
    torn: list[TornTail] = []
    try:
        lines = iter_lines(stream, name, torn)
        first = next(lines, None)
        header, adaptations, meta_problem = parse_header(name, first, lenient=lenient, max_version=max_version)
    except BaseException:
        stream.close()
        raise
    log = SessionLog(path=name, header=header, lenient=lenient, adaptations=adaptations,
                     format_version=header.version, seed_length=header.seed_length,
                     _known=known_types(header.version, KNOWN_EVENT_TYPES),
                     _lines=lines, _stream=stream, _torn=torn)
    if meta_problem:
        log._offer(_META, -1, log._err(
            CorruptLogError, f'stored session "{header.id}" failed validation: {meta_problem}', line=1, seq=None,
            hint="tokenised test fixtures need --lenient"))
    return log
