"""Capture loaders: each one sniffs its input and yields :class:`CapturedRequest` values.

Formats (``docs/capture-formats.md`` has the details):

- ``wire-jsonl``: the corpus ``wire.jsonl``, one JSON object per line with ``method``, ``path``,
  ``headers`` (object) and ``body`` (text) or ``body_base64``; ``body_sha256`` and
  ``body_bytes``, when present, are checked against the body.
- ``har``: HAR 1.2, ``log.entries[].request`` (``method``, ``url``, ``headers`` as a list of
  ``{name, value}``, ``postData.text``; ``postData.encoding: "base64"`` is honoured, and a
  gzip body (``Content-Encoding: gzip`` or ``postData.encoding`` naming gzip) is decompressed).
- ``body-folder``: a folder of raw JSON bodies, one request per ``*.json`` file in natural name
  order (``2.json`` before ``10.json``); an optional sidecar ``<stem>.meta.json`` gives
  ``method``, ``path``, ``time`` and ``headers`` for the body ``<stem>.json``.

A capture is read once, and not held: a ``wire.jsonl`` record's or body file's body is parsed as it
is read for what pairing needs (its kind, digest, size, model, route and session evidence), then
dropped; :attr:`CapturedRequest.body` reads it again (the record's line, by its offset, or the body
file) where a request is compared or rewritten, so memory grows with the largest body, not with
the capture. A HAR file is read entry by entry, and its bodies read again by the entry's offset.

A loader is registered in :data:`LOADERS` under its name; :func:`sniff_capture` asks each one in
turn whether it ``handles(path, first_bytes)`` the input, and :func:`load_capture` reads the file
from the handle it sniffed. A ``wire.jsonl`` of JSON objects none of which is a capture record
(one with ``method``, ``path``, ``body`` or ``body_base64``: a session log given as a capture) is
not a capture; the records that are none in a capture are said and skipped. A ``wire.jsonl`` that grows
(a proxy recording as a session runs) is read on from where a reading stopped by
:func:`read_capture_tail`, through the same parser, its records named and numbered as a whole read
names them. A file or folder that cannot be read
(no permission, not a regular file, too large for memory) is a one-line :class:`CaptureError`.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from ..errors import CaptureError
from ._har import har_handles, har_read
from ._jsonl import CaptureOffset, _Reach, jsonl_handles, jsonl_read
from ._reading import (Said, _FileBody, _handle, _headers_object, _Kept, _open, _parse_object, _Raw, _read_bytes,
                       _RecordBody, _text_value, _too_large)
from ._evidence import _facts_of
from ._types import CapturedRequest, _body_value, _classify_value

__all__ = ["LOADERS", "CaptureLoader", "CaptureRead", "load_capture", "read_capture", "read_capture_tail",
           "sniff_capture"]

_SNIFF_BYTES = 4096
_META_SUFFIX = ".meta.json"


@dataclass(frozen=True, slots=True)
class CaptureLoader:
    """A named capture format: a sniffing predicate and a reader of raw requests from the open
    file (None: a folder, or a file the reader opens), which records in its :class:`Said` (when
    given one) what it drops; without one that is malformed input, as any other bad record. Given a
    list, the reader appends each parsed record to it, its body removed (:class:`CaptureRead`)."""

    name: str
    handles: Callable[[Path, bytes], bool]
    read: Callable[[Path, BinaryIO | None, Said | None, list[Any] | None], Iterator[_Raw]]


@dataclass(frozen=True, slots=True)
class CaptureRead:
    """A capture read once (:func:`read_capture`): its format (a key of :data:`LOADERS`), its
    requests (as :func:`load_capture` returns them) and the parsed records they came from, each
    request body's value replaced by None (its key left where it stands): a ``wire.jsonl``'s
    objects, one per request; a HAR file's one document (each entry's ``request.postData.text``
    None); none for a body folder, whose files are its records. ``end``: where a reading on
    (:func:`read_capture_tail`) stopped, to read on from next; None for a whole read."""

    format: str
    requests: list[CapturedRequest]
    records: list[Any]
    end: CaptureOffset | None = None


# -- a folder of bodies ----------------------------------------------------------------------

def _natural_key(name: str) -> list[Any]:
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name)]


def _body_files(folder: Path) -> list[Path]:
    try:
        files = [p for p in folder.iterdir() if p.is_file() and p.suffix == ".json"
                 and not p.name.endswith(_META_SUFFIX)]
    except OSError as exc:
        raise CaptureError(f"cannot list the folder: {exc.strerror or exc}", path=str(folder),
                           hint="check the folder's permissions") from None
    return sorted(files, key=lambda p: _natural_key(p.name))


def _folder_handles(path: Path, first: bytes) -> bool:
    return path.is_dir() and bool(_body_files(path))


def _folder_meta(meta_file: Path) -> dict[str, Any]:
    if not meta_file.exists():
        return {}
    return _parse_object(_read_bytes(meta_file, "sidecar"), meta_file, None, invalid="sidecar is not valid JSON",
                         not_object="sidecar is not a JSON object",
                         hint='a sidecar is {"method": ..., "path": ..., "time": ..., "headers": {...}}')


def _folder_read(folder: Path, handle: BinaryIO | None, said: Said | None,
                 records: list[Any] | None = None) -> Iterator[_Raw]:
    for body_file in _body_files(folder):
        meta_file = body_file.with_name(body_file.stem + _META_SUFFIX)
        meta = _folder_meta(meta_file)
        headers = _headers_object(meta_file, "sidecar", meta.get("headers"))
        yield (str(meta.get("method") or "POST").upper(), str(meta.get("path") or ""), headers,
               _read_bytes(body_file, "body file"), _text_value(meta.get("time")), str(body_file), "",
               _FileBody(str(body_file)))



#: Every known capture format, asked in this order.
LOADERS: dict[str, CaptureLoader] = {
    loader.name: loader for loader in (
        CaptureLoader("har", har_handles, har_read),
        CaptureLoader("wire-jsonl", jsonl_handles, jsonl_read),
        CaptureLoader("body-folder", _folder_handles, _folder_read),
    )
}


def sniff_capture(path: str | os.PathLike[str], first_bytes: bytes) -> str | None:
    """The name of the capture format of ``path`` (a key of :data:`LOADERS`, the first, in their
    order, whose predicate handles it), given its first bytes (up to 4 KB; ``b""`` for a folder);
    None when no format handles it. The one sniff every reader of captures asks.

    Example:
        >>> sniff_capture("x.har", b'{"log": {"entries": []}}')  # doctest: +SKIP
        'har'
    """
    target = Path(path)
    return next((name for name, loader in LOADERS.items() if loader.handles(target, first_bytes)), None)


def _head(path: Path, handle: BinaryIO | None) -> bytes:
    """The first bytes of the open capture file ``handle`` (``b""`` for a folder), to sniff."""
    if handle is None:
        return b""
    try:
        head: bytes = handle.read(_SNIFF_BYTES)
    except OSError as exc:
        raise CaptureError(f"cannot read: {exc.strerror or exc}", path=str(path)) from None
    return head


def _loader_for(target: Path, format: str | None, first: bytes) -> CaptureLoader:
    """The loader named ``format``, else the one :func:`sniff_capture` names; a CaptureError if none."""
    name = format if format is not None else sniff_capture(target, first)
    if format is not None and format not in LOADERS:
        raise CaptureError(f"unknown capture format {format!r}", path=str(target),
                           hint="known formats: " + ", ".join(sorted(LOADERS)))
    if name is None:
        raise CaptureError("not a capture format dsh-audit knows", path=str(target),
                           hint="expected a wire.jsonl file, a HAR 1.2 file or a folder of *.json bodies")
    return LOADERS[name]


def load_capture(path: str | os.PathLike[str], *, format: str | None = None,
                 warnings: list[str] | None = None) -> list[CapturedRequest]:
    """Load every request of a capture file or folder, in the capture's order.

    Args:
        path: a ``wire.jsonl`` file, a HAR file, or a folder of JSON bodies.
        format: a name from :data:`LOADERS` to skip sniffing.
        warnings: where a torn tail is said (``wire.jsonl: torn tail: line 3 has no terminating
            newline (120 bytes ignored)``, as a log's torn tail is), and dropped: a last line with
            no newline that is not JSON, what a capture writer killed mid-write leaves. None: a
            caller that cannot say it, to whom a torn tail is malformed input (a CaptureError).

    Raises:
        CaptureError: the input is missing, of no known format, or malformed (the message names
            the file and the line or entry).

    Example:
        >>> captures = load_capture("wire.jsonl")  # doctest: +SKIP
        >>> [c.kind for c in captures][:3]  # doctest: +SKIP
        ['loop', 'title', 'loop']
    """
    return _read(Path(path), format, warnings, None)[1]


def read_capture(path: str | os.PathLike[str], *, format: str | None = None,
                 warnings: list[str] | None = None, keep: Callable[[Any], Any] | None = None) -> CaptureRead:
    """Load a capture as :func:`load_capture` does (the same arguments, errors and requests), with
    its format and parsed records (:class:`CaptureRead`), from its one read: for a tool that
    rewrites the capture record by record (``redact --capture``) without opening it again, or reads
    what each recorded response says (``--capture``'s usage). Given ``keep``, each record is kept as
    it makes it, as it is read (a ``wire.jsonl`` record's response usage, not the response).

    Example:
        >>> read = read_capture("wire.jsonl")  # doctest: +SKIP
        >>> read.format, len(read.records) == len(read.requests)  # doctest: +SKIP
        ('wire-jsonl', True)
    """
    records: list[Any] = [] if keep is None else _Kept(keep)
    said: list[str] = []
    name, captured = _read(Path(path), format, said if warnings is not None else None, records)
    if warnings is not None:
        warnings.extend(said)
    return CaptureRead(name, captured, records)


def read_capture_tail(path: str | os.PathLike[str], start: CaptureOffset, *, warnings: list[str] | None = None,
                      keep: Callable[[Any], Any] | None = None, handle: BinaryIO | None = None,
                      pending: bool = False) -> CaptureRead:
    """Read a growing ``wire.jsonl`` on from ``start``, as :func:`read_capture` reads it whole (its
    parser, records, errors, ``warnings`` and ``keep``): the records of its whole lines after
    ``start``, each named by its line in the file (``line 7``) and numbered by its place among all
    the file's records, its body read again from the file. A last line with no newline is one being
    written: it is left for the next reading, and not said. ``end`` says where the reading stopped
    (past the last whole line): pass it as ``start`` to read what is appended next.

    Args:
        path: a ``wire.jsonl`` file (no other format is read on: a HAR document is rewritten whole).
        start: where an earlier reading stopped (:attr:`CaptureRead.end`); ``CaptureOffset()``: the start.
        warnings: where the records that are no capture records are said (and skipped); None:
            such a record is a CaptureError.
        keep: what is kept of each record, as :func:`read_capture` keeps it.
        handle: ``path`` open already (binary, at any position), read through rather than opened
            again: a caller that looked at the file (its ``fstat``, the bytes before ``start``)
            reads the very file it looked at, not one put in its place since.
        pending: also read a last line with no newline that is a whole JSON record already (a
            writer that puts the newline before each record, or one between its two writes); ``end``
            stays before it, so the next reading reads it again, with the same position.

    Raises:
        CaptureError: the file is missing or unreadable, shorter than ``start`` or no line starts
            there (it was truncated or rewritten: read it whole), a line after it is malformed (the
            message names its line in the file), or, read from its start, it is of another format
            (a HAR document, read whole by :func:`read_capture`) or none.

    Example:
        >>> read = read_capture_tail("wire.jsonl", CaptureOffset())  # doctest: +SKIP
        >>> more = read_capture_tail("wire.jsonl", read.end)  # doctest: +SKIP
        >>> [c.locator for c in more.requests], more.end  # doctest: +SKIP
        (['line 3'], CaptureOffset(byte=2410, line=3, records=3))
    """
    target = Path(path)
    if handle is None and not target.exists():
        raise CaptureError("capture not found", path=str(target), hint="check the --capture path")
    records: list[Any] = [] if keep is None else _Kept(keep)
    said = None if warnings is None else Said()
    reach = _Reach(start, pending=pending)
    with ExitStack() as stack:
        lines = _handle(stack, target, handle)
        if not start.byte:
            _read_on_only_jsonl(target, _head(target, lines))
        captured = _captured(target, jsonl_read(target, lines, said, records, reach=reach), first=start.records)
        first = captured[0].reread if captured else None
        if isinstance(first, _RecordBody):
            first.file.keep(lines)  # the bodies are read again through this one open
    if said is not None:
        assert warnings is not None
        warnings.extend(said.skipped)
    return CaptureRead("wire-jsonl", captured, records, reach.offset())


def _read_on_only_jsonl(target: Path, head: bytes) -> None:
    """A CaptureError unless the file whose first bytes are ``head`` is a ``wire.jsonl`` (or holds
    nothing yet): no other format is read on (a HAR document is one JSON value, rewritten whole), and
    read as one it would be a misleading error at its line 1, or no request at all."""
    if not head.strip():
        return
    loader = _loader_for(target, None, head)
    if loader.name != "wire-jsonl":
        raise CaptureError(f"a {loader.name} capture is not read on from where a reading stopped", path=str(target),
                           hint="only a wire.jsonl grows record by record: read it whole (read_capture)")


def _read(target: Path, format: str | None, warnings: list[str] | None,
          records: list[Any] | None) -> tuple[str, list[CapturedRequest]]:
    """The format of the capture at ``target`` and its requests (:func:`load_capture`); its
    parsed records appended to ``records`` when given."""
    if not target.exists():
        raise CaptureError("capture not found", path=str(target), hint="check the --capture path")
    said = None if warnings is None else Said()
    with ExitStack() as stack:
        handle = None if target.is_dir() else stack.enter_context(_open(target, "capture file"))
        try:
            loader = _loader_for(target, format, _head(target, handle))
        except MemoryError:  # sniffing lists a body folder: one with too many files to hold
            raise _too_large(target) from None
        if handle is not None:
            handle.seek(0)
        captured = _captured(target, loader.read(target, handle, said, records))
        first = captured[0].reread if captured else None
        if handle is not None and isinstance(first, _RecordBody):
            first.file.keep(handle)  # the bodies are read again through this one open
    if said is not None:
        assert warnings is not None
        warnings.extend(f"{target}: {tail}" for tail in said.torn)
        warnings.extend(said.skipped)
    return loader.name, captured


def _request(position: int, raw: _Raw) -> CapturedRequest:
    """The request ``raw``, numbered ``position``: its body read once here for what pairing needs
    (kind, digest, :func:`._evidence._facts`), and held only when nothing reads it again."""
    method, url_path, headers, body, time, source, locator, reread = raw
    value = _body_value(body)
    return CapturedRequest(position, method, url_path, headers, None if reread is not None else body, time, source,
                           locator, _classify_value(headers, value), reread=reread,
                           digest=hashlib.sha256(body).digest(), size=len(body),
                           facts=_facts_of(url_path, headers, value), undone=getattr(body, "coding", None))


def _captured(target: Path, raws: Iterator[_Raw], *, first: int = 0) -> list[CapturedRequest]:
    """The requests of ``raws`` numbered in order from ``first``; a capture too large for memory,
    or a read that fails after the open, a one-line CaptureError."""
    captured = []
    try:
        for position, raw in enumerate(raws, start=first):
            captured.append(_request(position, raw))
    except MemoryError:
        captured.clear()
        raise _too_large(target) from None
    except OSError as exc:  # a read that fails after the open (an I/O error, a file gone)
        raise CaptureError(f"cannot read: {exc.strerror or exc}", path=str(exc.filename) if exc.filename else str(target)) from None
    return captured
