"""Reading a log that is still being written: a header from any byte stream, and how much of a
growing file's bytes form complete records (whole lines, whole zstd frames).

A follower (``dsh-audit watch``) hands :func:`read_stream` a stream that releases only complete
units, as :func:`complete_length` measures them, so the decoder never sees a line or frame the
writer has not finished; what stays incomplete after the writer has gone is released at the end,
where the decoder reports it as the torn tail DSH would.
"""

from __future__ import annotations

import io

from ..errors import UnreadableError
from ._decode import ZSTD_MAGIC, _FrameReader

__all__ = ["complete_length", "is_zstd_head"]


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


