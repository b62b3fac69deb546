"""The ``wire-jsonl`` capture format: one JSON object per line, each a request record (``method``,
``path``, ``headers``, ``body`` or ``body_base64``, every coding its ``Content-Encoding`` names undone),
its body read again by the line's offset. A growing one is read on from where a reading stopped
(:class:`CaptureOffset`, :func:`dsh_audit.capture.read_capture_tail`)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .._body_decode import BodyDecodeError, NotUndone, UndecodableBody, content_encoding, undo_codings
from .._json import json_type
from .._literals import inexact, literal_json
from ..errors import CaptureError
from ..log import TornTail, parse_json
from ._har import _HAR_START, undecoded_note
from ._reading import (Said, UndoneBody, _CaptureFile, _error, _handle, _headers_object, _Kept, _parse_object, _Raw,
                       _RecordBody, _text_value)

__all__ = ["CaptureOffset", "jsonl_handles", "jsonl_read"]

#: The fields of a wire.jsonl record of which a capture record holds at least one.
_RECORD_KEYS = ("method", "path", "body", "body_base64")
NOT_A_CAPTURE_HINT = ("pass --capture a wire.jsonl of request records (method, path, headers, body), "
                      "a HAR 1.2 file or a folder of *.json bodies")


@dataclass(frozen=True, slots=True)
class CaptureOffset:
    """A place in a ``wire.jsonl`` between two whole lines, where a reading starts or stopped:
    ``byte``, its offset (where a writer appends the next record), with the ``line`` lines and the
    ``records`` capture records before it, so that what is read on from it is named and numbered as
    a whole read names it (``line 7``, :attr:`CapturedRequest.position`). ``CaptureOffset()`` is
    the start of the file.

    Example:
        >>> CaptureOffset(1200, line=3, records=2)
        CaptureOffset(byte=1200, line=3, records=2)
    """

    byte: int = 0
    line: int = 0
    records: int = 0


class _Reach:
    """Where a reading on from a :class:`CaptureOffset` has got to: past the last whole line read
    (``byte``, ``line``) and the capture records up to it (``records``). A line with no newline yet
    is one being written: the reading stops before it (:func:`_jsonl_lines`); with ``pending``, one
    that is a whole JSON value already (a writer that puts the newline before each record) is read
    too, and the reach left before it, to read it again next time."""

    __slots__ = ("byte", "line", "records", "pending")

    def __init__(self, start: CaptureOffset, *, pending: bool = False) -> None:
        self.byte, self.line, self.records, self.pending = start.byte, start.line, start.records, pending

    def offset(self) -> CaptureOffset:
        return CaptureOffset(self.byte, self.line, self.records)


def _seek_line(path: Path, handle: BinaryIO, byte: int) -> None:
    """Put ``handle`` at ``byte``, which must start a line of the file (past a newline, or 0): an
    offset past the end or inside a line is a CaptureError (the file was truncated or rewritten
    since the reading that stopped there), never records read from the middle of one."""
    size = os.fstat(handle.fileno()).st_size
    if not 0 <= byte <= size:
        raise CaptureError(f"cannot read on from byte {byte}: the file has {size} bytes", path=str(path),
                           hint="it was truncated or replaced since: read it whole again")
    if byte:
        handle.seek(byte - 1)
        if handle.read(1) != b"\n":
            raise CaptureError(f"cannot read on from byte {byte}: no line starts there", path=str(path),
                               hint="read on from where a reading stopped (CaptureRead.end), or read it whole")
    handle.seek(byte)


def jsonl_handles(path: Path, first: bytes) -> bool:
    stripped = first.lstrip()
    if path.is_file() and path.suffix == ".jsonl" and not stripped:
        return True  # a proxy that recorded nothing: a capture of no request, not an unknown format
    return path.is_file() and stripped.startswith(b"{") and not _HAR_START.match(first) and (
        b'"method"' in first or b'"body"' in first or path.suffix == ".jsonl")


_BASE64_ALPHABET = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")


def _base64_fault(text: str) -> str:
    """Where ``text``, which does not decode as base64, goes wrong, as a message says it: its first
    character out of the alphabet (counted from 0, as a message's ``(byte N)``), else its padding.

    Example:
        >>> _base64_fault("eyJh@@@"), _base64_fault("eyJ=hIjo"), _base64_fault("eyJhI")
        ('character 4', 'character 3', 'padding')
    """
    unpadded = text.rstrip("=")
    return next((f"character {at}" for at, char in enumerate(unpadded) if char not in _BASE64_ALPHABET), "padding")


def _jsonl_body(path: Path, where: str, record: dict[str, Any], said: Said | None = None
                ) -> tuple[bytes, tuple[str, ...] | NotUndone]:
    """A record's body decoded, and the codings undone to read it (:func:`_decoded`: one it cannot
    undo said in ``said``, and named instead)."""
    hint = "each record needs `body` (text) or `body_base64`"
    if isinstance(record.get("body_base64"), str):
        try:
            body = base64.b64decode(record["body_base64"], validate=True)
        except (binascii.Error, ValueError):  # Python's own text names no place: said as every message says it
            raise _error(path, where, f"body_base64 is not valid base64 ({_base64_fault(record['body_base64'])})",
                         "body_base64 holds standard base64 (A-Z, a-z, 0-9, + and /, padded with =): repair the "
                         "record, or give --capture another capture") from None
    elif isinstance(record.get("body"), str):
        try:
            body = record["body"].encode("utf-8")
        except UnicodeEncodeError:
            raise _error(path, where, "body text holds a lone surrogate, so it has no UTF-8 bytes",
                         "store such a body as body_base64") from None
    elif record.get("body") is None:
        body = b""
    else:
        raise _error(path, where, f"body is a JSON {json_type(record['body'])}, not text", hint)
    sha = record.get("body_sha256")
    if isinstance(sha, str) and hashlib.sha256(body).hexdigest() != sha.lower():
        raise _error(path, where, "body does not match its body_sha256",
                     "the capture was edited or re-encoded; recapture or drop body_sha256")
    size = record.get("body_bytes")
    if isinstance(size, int) and not isinstance(size, bool) and size != len(body):
        raise _error(path, where, f"body is {len(body)} bytes, body_bytes says {size}",
                     "the capture was edited or re-encoded; recapture or drop body_bytes")
    return _decoded(path, where, record, body, said)


def _decoded(path: Path, where: str, record: dict[str, Any], body: bytes, said: Said | None = None
             ) -> tuple[bytes, tuple[str, ...] | NotUndone]:
    """A record's body as the request meant it, and the codings undone, in the order they were applied:
    every coding its ``Content-Encoding`` names (gzip, deflate, stacked), undone by the one decoder a
    HAR ``postData`` and a recorded response go through too, within the same decode limits
    (:func:`dsh_audit._body_decode.undo_codings`: a body stored decoded under its header kept as it
    is), so a coded request pairs by its JSON; ``body_sha256`` and ``body_bytes`` are of the bytes as
    sent, checked before. A body whose coding cannot be undone (``br``, ``zstd``, corrupt or cut-off
    data) is read as captured, the coding named in place of the codings (:class:`NotUndone`), and said
    in ``said`` at its line (:func:`undecoded_note`): pairing shows the record as it shows any body it
    cannot read (foreign, or unreadable), the rest of the capture read as ever (review B 45); only a
    bomb (past the decode limits) is a CaptureError at its line, as a HAR entry's is."""
    try:
        return undo_codings(body, content_encoding(record.get("headers")), str(path))
    except UndecodableBody as exc:
        if said is not None:
            said.skipped.append(undecoded_note(path, where, exc))
        return exc.stored, NotUndone(exc.coding)
    except BodyDecodeError as exc:
        raise _error(path, where, exc.message, exc.hint) from None


def _is_record(record: dict[str, Any]) -> bool:
    """Whether a wire.jsonl object is a capture record: one holding a request's method, path or body."""
    return any(key in record for key in _RECORD_KEYS)


def _not_a_record(path: Path, number: int) -> str:
    return f"{path}:{number}: not a capture record (no method, path, body or body_base64), skipped"


_JSONL_HINT = "a wire.jsonl capture has one JSON object per line"


def _line_record(path: Path, where: str, line: bytes) -> dict[str, Any]:
    """A wire.jsonl line's JSON object, or a CaptureError."""
    return _parse_object(line, path, where, invalid="not a JSON record", not_object="record is not a JSON object",
                         hint=_JSONL_HINT)


def _jsonl_lines(path: Path, handle: BinaryIO, said: Said | None, reach: _Reach | None = None
                 ) -> Iterator[tuple[int, int, bytes, dict[str, Any]]]:
    """``(line number, offset, line, object)`` of every line of a wire.jsonl (where the line
    starts in the file, and its bytes); a torn last line is said and dropped. Given ``reach``, the
    lines from where it stands (``handle`` is there), and ``reach`` moved past each whole line: a
    last line with no newline is one being written, left for the next reading and not said (read,
    the reach not moved past it, when it is whole JSON and ``reach.pending``)."""
    offset = 0 if reach is None else reach.byte
    for number, line in enumerate(handle, start=1 if reach is None else reach.line + 1):
        start, offset = offset, offset + len(line)
        if reach is not None and line.endswith(b"\n"):
            reach.byte, reach.line = offset, number
        elif reach is not None and not (reach.pending and _whole_json(line)):
            return
        if not line.strip():
            continue
        where = f"line {number}"
        if said is not None and reach is None and not line.endswith(b"\n") and not _whole_json(line):
            said.torn.append(TornTail(f"line {number} has no terminating newline", len(line)))  # cut off mid-write
            return
        yield number, start, line, _line_record(path, where, line)


def _whole_json(line: bytes) -> bool:
    """Whether a last line with no newline is a whole JSON value (a record written whole), not the
    start of one being written."""
    try:
        parse_json(line)
    except (ValueError, UnicodeDecodeError):
        return False
    return True


def _line_body(path: Path, where: str, line: bytes) -> bytes:
    """The body of the record a wire.jsonl line holds (read again: :class:`._reading._RecordBody`)."""
    return _jsonl_body(path, where, _line_record(path, where, line))[0]


def _jsonl_records(path: Path, handle: BinaryIO, said: Said | None, reach: _Reach | None = None
                   ) -> Iterator[tuple[int, int, bytes, dict[str, Any]]]:
    """``(line number, offset, line, record)`` of every capture record of the wire.jsonl open in
    ``handle`` (:func:`_jsonl_lines`), by the one rule of what is a capture: an object that is no
    capture record (:func:`_is_record`) is said in ``said`` and skipped; once every line is read, a
    CaptureError at the first such line when no line is a record (a file of such objects alone is no
    capture) or, without ``said``, when there is one at all. Given ``reach`` (:func:`_jsonl_lines`),
    it counts the records before it (not one on a line with no newline), and those are records found."""
    first_bad: int | None = None
    found = reach is not None and reach.records > 0
    for number, offset, line, record in _jsonl_lines(path, handle, said, reach):
        if not _is_record(record):
            first_bad = number if first_bad is None else first_bad
            if said is not None:
                said.skipped.append(_not_a_record(path, number))
            continue
        found = True
        if reach is not None and line.endswith(b"\n"):
            reach.records += 1
        yield number, offset, line, record
    if first_bad is not None and not found:
        raise _error(path, f"line {first_bad}", "not a capture: no line is a capture record (no method, path, "
                     "body or body_base64)", NOT_A_CAPTURE_HINT)
    if first_bad is not None and said is None:
        raise _error(path, f"line {first_bad}", "not a capture record (no method, path, body or body_base64)",
                     NOT_A_CAPTURE_HINT)


def jsonl_read(path: Path, handle: BinaryIO | None, said: Said | None,
                records: list[Any] | None = None, *, reach: _Reach | None = None) -> Iterator[_Raw]:
    """Every record of a ``wire.jsonl``. A last line with no newline that is not JSON is the torn
    tail a capture writer killed mid-write leaves: it is recorded in ``said`` (in the words of a
    log's torn tail, :class:`dsh_audit.log.TornTail`) and dropped; a bad line anywhere else (and
    that one too when ``said`` is None), or a last line that is JSON but no record, is a CaptureError.
    An object that is no capture record is said in ``said`` and skipped (without ``said``, a
    CaptureError); a file of such objects alone is not a capture (:func:`_jsonl_records`). Given
    ``records``, each record is appended to it, its ``body`` and ``body_base64`` values None (a
    ``body_base64`` read with codings undone holds them instead, a tuple in the order they were applied,
    which no JSON value is, for redact to apply them again to the body it writes back; one read as
    captured, its coding not undone, a :class:`NotUndone`, for redact to count the body it replaces) (kept for a
    reader of responses, :class:`._reading._Kept`: a response's numbers no double holds exactly as
    written, :func:`dsh_audit._literals.literal_json`). Given ``reach``, the whole lines from where it
    stands (:func:`_seek_line`), ``reach`` moved past them (:func:`_jsonl_lines`)."""
    shared = _CaptureFile(str(path))  # what every body is read again from
    with ExitStack() as stack:
        lines = _handle(stack, path, handle)
        if reach is not None:
            _seek_line(path, lines, reach.byte)
        for number, offset, line, record in _jsonl_records(path, lines, said, reach):
            where = f"line {number}"
            headers = _headers_object(path, where, record.get("headers"))
            body, codings = _jsonl_body(path, where, record, said)
            if records is not None:
                kept = {key: None if key in ("body", "body_base64") else value for key, value in record.items()}
                stored = "body_base64" if isinstance(record.get("body_base64"), str) else "body"
                if isinstance(codings, NotUndone):
                    kept[stored] = codings  # read as captured: a writer replaces it whole, and counts it
                elif codings and stored == "body_base64":
                    kept["body_base64"] = codings  # sent coded, read decoded: a writer codes it again
                if isinstance(records, _Kept) and inexact(kept.get("response")):
                    kept["response"] = literal_json(line).get("response")  # its numbers as written, to say
                records.append(kept)
            yield (str(record.get("method") or "POST").upper(), str(record.get("path") or ""), headers,
                   UndoneBody(body, codings.coding) if isinstance(codings, NotUndone) else body,
                   _text_value(record.get("time")), str(path), where,
                   _RecordBody(shared, offset, len(line), where, _line_body))
