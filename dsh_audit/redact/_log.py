"""Rewriting a log file record by record, keeping its encoding: plain JSONL stays JSONL, and
multi-frame zstd stays multi-frame zstd with one output frame per input frame (so frame 1 still
holds the header line alone, and batch boundaries stay where DSH put them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import IO

import zstandard

from ..errors import UnreadableError
from ..jsjson import stringify
from ..log import parse_json

__all__ = ["read_records", "rewrite_log"]

_ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _frames(data: bytes, path: str, notes: list[str]) -> Iterator[bytes]:
    """The decompressed text of each frame; a torn last frame yields what it recovered."""
    context = zstandard.ZstdDecompressor()
    number = 0
    while data:
        number += 1
        decompressor = context.decompressobj()
        try:
            text = decompressor.decompress(data)
        except zstandard.ZstdError as exc:
            raise UnreadableError(f"zstd frame {number} is corrupt: {exc}", path=path) from None
        if not decompressor.eof:
            notes.append(f"zstd frame {number} is cut off at end of file: its complete lines were kept")
            yield text
            return
        data = decompressor.unused_data
        yield text


def _lines(text: bytes, redact: Callable[[bytes], bytes | None], notes: list[str], where: str) -> bytes:
    out: list[bytes] = []
    lines = text.split(b"\n")
    if lines[-1]:
        notes.append(f"{where}: a last line without its newline (a torn tail) was left out")
    for raw in lines[:-1]:
        redacted = redact(raw)
        if redacted is not None:
            out.append(redacted + b"\n")
    return b"".join(out)


def read_records(data: bytes, *, path: str) -> Iterator[object]:
    """Every record :func:`rewrite_log` passes to its ``record`` callback, in the same order (a
    first pass over a log, to see what later records hold before rewriting earlier ones).

    Raises:
        UnreadableError: a zstd frame is corrupt.
    """
    texts = _frames(data, path, []) if data[:4] == _ZSTD_MAGIC else iter([data])
    for text in texts:
        for raw in text.split(b"\n")[:-1]:
            try:
                yield parse_json(raw)
            except (ValueError, UnicodeDecodeError):
                continue


def rewrite_log(data: bytes, out: IO[bytes], record: Callable[[object], object], *, path: str) -> list[str]:
    """Write ``data`` (a log file's bytes) to ``out`` with every record passed through ``record``.

    Returns notes on what could not be carried over (torn tails, damaged records).
    """
    notes: list[str] = []
    damaged = [0]

    def redact(raw: bytes) -> bytes | None:
        try:
            value = parse_json(raw)
        except (ValueError, UnicodeDecodeError):
            damaged[0] += 1
            return None
        return stringify(record(value)).encode("utf-8", "surrogatepass")

    if data[:4] == _ZSTD_MAGIC:
        compressor = zstandard.ZstdCompressor(level=3, write_checksum=True)
        for number, text in enumerate(_frames(data, path, notes), start=1):
            out.write(compressor.compress(_lines(text, redact, notes, f"frame {number}")))
    else:
        out.write(_lines(data, redact, notes, "file end"))
    if damaged[0]:
        notes.append(f"{damaged[0]} damaged record(s) the reader skips were left out")
    return notes
