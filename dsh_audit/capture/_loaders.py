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

A loader is registered in :data:`LOADERS` under its name; :func:`load_capture` asks each one in
turn whether it ``handles(path, first_bytes)`` the input. A file or folder that cannot be read
(no permission, not a regular file, too large for memory) is a one-line :class:`CaptureError`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .._urls import url_problem
from ..errors import CaptureError, UnreadableError
from ..log import DecodeBudget, TornTail, open_regular, parse_json
from ._types import CapturedRequest, classify

__all__ = ["LOADERS", "CaptureLoader", "load_capture"]

_SNIFF_BYTES = 4096
_HAR_START = re.compile(rb'^\s*\{\s*"log"\s*:')
_META_SUFFIX = ".meta.json"
_GZIP_MAGIC = b"\x1f\x8b"
_PIECE = 1 << 20

#: One raw request before numbering: method, path, headers, body, time, source file, locator.
_Raw = tuple[str, str, dict[str, str], bytes, str | None, str, str]


@dataclass(frozen=True, slots=True)
class CaptureLoader:
    """A named capture format: a sniffing predicate and a reader of raw requests, which records
    in its list (when given one) what a writer killed mid-write left incomplete at the end (a torn
    tail), dropped; without a list that is malformed input, as any other bad record."""

    name: str
    handles: Callable[[Path, bytes], bool]
    read: Callable[[Path, list[TornTail] | None], Iterator[_Raw]]


def _error(path: Path, where: str | None, message: str, hint: str) -> CaptureError:
    text = f"{where}: {message}" if where else message
    return CaptureError(text, path=str(path), hint=hint)


def _parse(raw: bytes, path: Path, where: str | None, *, invalid: str, hint: str) -> Any:
    """``raw`` as JSON, or a CaptureError saying ``invalid`` and why."""
    try:
        return parse_json(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise _error(path, where, f"{invalid} ({exc})", hint) from None


def _parse_object(raw: bytes, path: Path, where: str | None, *, invalid: str, not_object: str,
                  hint: str) -> dict[str, Any]:
    """``raw`` as a JSON object, or a CaptureError saying ``invalid`` or ``not_object``."""
    value = _parse(raw, path, where, invalid=invalid, hint=hint)
    if not isinstance(value, dict):
        raise _error(path, where, not_object, hint)
    return value


def _open(path: Path, what: str) -> Any:
    """``path`` opened for reading (a regular file only), or a CaptureError naming why not."""
    try:
        return open_regular(path, what=what)
    except UnreadableError as exc:
        raise CaptureError(exc.message, path=str(path), hint=exc.hint or "check the file's permissions") from None


def _read_bytes(path: Path, what: str) -> bytes:
    """Every byte of the file ``path``, or a CaptureError (unreadable). A file too large for
    memory raises MemoryError, which :func:`load_capture` says of the capture the user named (a body
    folder, not its body file)."""
    with _open(path, what) as handle:
        try:
            data: bytes = handle.read()
        except OSError as exc:
            raise CaptureError(f"cannot read: {exc.strerror or exc}", path=str(path)) from None
    return data


def _too_large(path: Path) -> CaptureError:
    """The error of a capture that does not fit in memory; ``path`` is the capture as the user gave
    it (a file, or a body folder)."""
    return CaptureError("the capture does not fit in memory", path=str(path),
                        hint="compare a smaller capture, e.g. one session's requests")


def _text_value(value: Any) -> str | None:
    return None if value is None else str(value)


# -- wire.jsonl ------------------------------------------------------------------------------

def _jsonl_handles(path: Path, first: bytes) -> bool:
    stripped = first.lstrip()
    if path.is_file() and path.suffix == ".jsonl" and not stripped:
        return True  # a proxy that recorded nothing: a capture of no request, not an unknown format
    return path.is_file() and stripped.startswith(b"{") and not _HAR_START.match(first) and (
        b'"method"' in first or b'"body"' in first or path.suffix == ".jsonl")


def _jsonl_body(path: Path, where: str, record: dict[str, Any]) -> bytes:
    hint = "each record needs `body` (text) or `body_base64`"
    if isinstance(record.get("body_base64"), str):
        try:
            body = base64.b64decode(record["body_base64"], validate=True)
        except (binascii.Error, ValueError) as exc:
            raise _error(path, where, f"body_base64 is not base64 ({exc})", hint) from None
    elif isinstance(record.get("body"), str):
        try:
            body = record["body"].encode("utf-8")
        except UnicodeEncodeError:
            raise _error(path, where, "body text holds a lone surrogate, so it has no UTF-8 bytes",
                         "store such a body as body_base64") from None
    elif record.get("body") is None:
        body = b""
    else:
        raise _error(path, where, f"body is a {type(record['body']).__name__}, not text", hint)
    sha = record.get("body_sha256")
    if isinstance(sha, str) and hashlib.sha256(body).hexdigest() != sha.lower():
        raise _error(path, where, "body does not match its body_sha256",
                     "the capture was edited or re-encoded; recapture or drop body_sha256")
    size = record.get("body_bytes")
    if isinstance(size, int) and not isinstance(size, bool) and size != len(body):
        raise _error(path, where, f"body is {len(body)} bytes, body_bytes says {size}",
                     "the capture was edited or re-encoded; recapture or drop body_bytes")
    return body


def _headers_object(path: Path, where: str, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _error(path, where, "headers must be an object of name to value",
                     'write headers as {"content-type": "application/json", ...}')
    return _header_values(path, where, value.items(), 'write headers as {"content-type": "application/json", ...}')


def _header_values(path: Path, where: str, pairs: Iterable[tuple[Any, Any]], hint: str) -> dict[str, str]:
    """Header ``pairs`` as lower-cased names to text values: a null value is no header, a number is
    its JSON digits; any other value that is no string (a list, an object, true) is a CaptureError
    naming the header, never a Python repr taken for its value."""
    headers: dict[str, str] = {}
    for name, value in pairs:
        if value is None:
            continue
        if not isinstance(name, str):
            raise _error(path, where, "a header name is not a string", hint)
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            shown = json.dumps(name[:80], ensure_ascii=True)
            raise _error(path, where, f"header {shown} has a value that is not a string", hint)
        headers[name.lower()] = value if isinstance(value, str) else json.dumps(value)
    return headers


def _jsonl_read(path: Path, torn: list[TornTail] | None) -> Iterator[_Raw]:
    """Every record of a ``wire.jsonl``. A last line with no newline that is not JSON is the torn
    tail a capture writer killed mid-write leaves: it is recorded in ``torn`` (in the words of a
    log's torn tail, :class:`dsh_audit.log.TornTail`) and dropped; a bad line anywhere else (and
    that one too when ``torn`` is None), or a last line that is JSON but no record, is a CaptureError."""
    hint = "a wire.jsonl capture has one JSON object per line"
    with _open(path, "capture file") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            where = f"line {number}"
            if torn is not None and not line.endswith(b"\n"):  # the last line: cut off unless it is a whole record
                try:
                    parse_json(line)
                except (ValueError, UnicodeDecodeError):
                    torn.append(TornTail(f"line {number} has no terminating newline", len(line)))
                    return
            record = _parse_object(line, path, where, invalid="not a JSON record",
                                   not_object="record is not a JSON object", hint=hint)
            headers = _headers_object(path, where, record.get("headers"))
            yield (str(record.get("method") or "POST").upper(), str(record.get("path") or ""), headers,
                   _jsonl_body(path, where, record), _text_value(record.get("time")), str(path), where)


# -- HAR 1.2 ---------------------------------------------------------------------------------

def _har_handles(path: Path, first: bytes) -> bool:
    return path.is_file() and (bool(_HAR_START.match(first)) or path.suffix.lower() == ".har")


def _har_url_path(url: str) -> str:
    parts = urlsplit(url)
    if not parts.scheme and not parts.netloc:
        return url
    return parts.path + (f"?{parts.query}" if parts.query else "")


def _gunzip(path: Path, where: str, data: bytes) -> bytes:
    """A gzip body decompressed in pieces, within the limits on decoded size and expansion."""
    budget = DecodeBudget(str(path), what="body", codec="gzip")
    inflater = zlib.decompressobj(wbits=31)
    pieces: list[bytes] = []
    tail = data
    try:
        while not inflater.eof:
            piece = inflater.decompress(tail, _PIECE)
            tail = inflater.unconsumed_tail
            if not piece and not tail:
                break
            budget.spend(len(piece), len(data) - len(tail))
            pieces.append(piece)
    except zlib.error as exc:
        raise _error(path, where, f"the gzip body is corrupt ({exc})",
                     "store the body as sent, or drop the gzip Content-Encoding") from None
    except UnreadableError as exc:
        raise _error(path, where, f"the gzip body is {exc.message}", exc.hint or "") from None
    if not inflater.eof:
        raise _error(path, where, "the gzip body is cut off", "the capture lost the end of the body")
    return b"".join(pieces)


def _har_body(path: Path, where: str, request: dict[str, Any], headers: dict[str, str]) -> bytes:
    """The request body: postData.text, base64-decoded and gunzipped as its encoding says."""
    body = _har_post_data(path, where, request)
    post = request.get("postData")
    declared = str(post.get("encoding") or "") if isinstance(post, dict) else ""
    gzip = "gzip" in declared.lower() or "gzip" in headers.get("content-encoding", "").lower()
    if gzip and not body.startswith(_GZIP_MAGIC) and "base64" not in declared.lower():
        # A gzip body can only travel in a JSON string as base64, whatever the encoding names.
        try:
            decoded = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            decoded = b""
        if decoded.startswith(_GZIP_MAGIC):
            body = decoded
    # A tool that stored the body already decompressed keeps the header: only gzip data is inflated.
    return _gunzip(path, where, body) if gzip and body.startswith(_GZIP_MAGIC) else body


def _har_post_data(path: Path, where: str, request: dict[str, Any]) -> bytes:
    post = request.get("postData")
    if post is None:
        return b""
    if not isinstance(post, dict):
        raise _error(path, where, "request.postData is not an object", "HAR 1.2 postData is {mimeType, text}")
    text = post.get("text") or ""
    if not isinstance(text, str):
        raise _error(path, where, f"postData.text is a {type(text).__name__}, not text",
                     "HAR 1.2 postData.text is a string (base64 with \"encoding\": \"base64\")")
    if "base64" in str(post.get("encoding") or "").lower():
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise _error(path, where, f"postData.text is not base64 ({exc})",
                         "drop encoding or store the body base64-encoded") from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise _error(path, where, "postData.text holds a lone surrogate, so it has no UTF-8 bytes",
                     'store the body base64-encoded with "encoding": "base64"') from None


def _har_headers(path: Path, where: str, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, list) or not all(isinstance(h, dict) and "name" in h for h in value):
        raise _error(path, where, "request.headers is not a list of {name, value}",
                     "HAR 1.2 headers are [{\"name\": ..., \"value\": ...}]")
    return _header_values(path, where, ((h["name"], h.get("value", "")) for h in value),
                          "HAR 1.2 headers are [{\"name\": ..., \"value\": ...}]")


def _har_read(path: Path, torn: list[TornTail] | None) -> Iterator[_Raw]:
    hint = "a HAR file is one JSON object {\"log\": {\"entries\": [...]}} (HAR 1.2)"
    document = _parse(_read_bytes(path, "capture file"), path, None, invalid="not valid JSON", hint=hint)
    log = document.get("log") if isinstance(document, dict) else None
    entries = log.get("entries") if isinstance(log, dict) else None
    if not isinstance(entries, list):
        raise _error(path, None, "no log.entries list", hint)
    for number, entry in enumerate(entries):
        where = f"entries[{number}]"
        request = entry.get("request") if isinstance(entry, dict) else None
        if not isinstance(request, dict):
            raise _error(path, where, "entry has no request object", hint)
        url = str(request.get("url") or "")
        problem = url_problem(url)
        if problem is not None:
            raise _error(path, where, f"request.url is not a URL ({problem})", hint)
        url_path = _har_url_path(url)
        headers = _har_headers(path, where, request.get("headers"))
        yield (str(request.get("method") or "POST").upper(), url_path, headers,
               _har_body(path, where, request, headers), _text_value(entry.get("startedDateTime")), str(path), where)


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


def _folder_read(folder: Path, torn: list[TornTail] | None) -> Iterator[_Raw]:
    for body_file in _body_files(folder):
        meta_file = body_file.with_name(body_file.stem + _META_SUFFIX)
        meta = _folder_meta(meta_file)
        headers = _headers_object(meta_file, "sidecar", meta.get("headers"))
        yield (str(meta.get("method") or "POST").upper(), str(meta.get("path") or ""), headers,
               _read_bytes(body_file, "body file"), _text_value(meta.get("time")), str(body_file), "")


#: Every known capture format, asked in this order.
LOADERS: dict[str, CaptureLoader] = {
    loader.name: loader for loader in (
        CaptureLoader("har", _har_handles, _har_read),
        CaptureLoader("wire-jsonl", _jsonl_handles, _jsonl_read),
        CaptureLoader("body-folder", _folder_handles, _folder_read),
    )
}


def _first_bytes(path: Path) -> bytes:
    if path.is_dir():
        return b""
    with _open(path, "capture file") as handle:
        try:
            head: bytes = handle.read(_SNIFF_BYTES)
        except OSError as exc:
            raise CaptureError(f"cannot read: {exc.strerror or exc}", path=str(path)) from None
    return head


def _loader_for(target: Path, format: str | None) -> CaptureLoader:
    """The loader named ``format``, else the first that handles ``target``; a CaptureError if none."""
    if format is not None:
        loader = LOADERS.get(format)
        if loader is None:
            raise CaptureError(f"unknown capture format {format!r}", path=str(target),
                               hint="known formats: " + ", ".join(sorted(LOADERS)))
        return loader
    first = _first_bytes(target)
    found = next((item for item in LOADERS.values() if item.handles(target, first)), None)
    if found is None:
        raise CaptureError("not a capture format dsh-audit knows", path=str(target),
                           hint="expected a wire.jsonl file, a HAR 1.2 file or a folder of *.json bodies")
    return found


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
    target = Path(path)
    if not target.exists():
        raise CaptureError("capture not found", path=str(target), hint="check the --capture path")
    try:
        loader = _loader_for(target, format)
    except MemoryError:  # sniffing lists a body folder: one with too many files to hold
        raise _too_large(target) from None
    captured = []
    torn: list[TornTail] = []
    raws = loader.read(target, None if warnings is None else torn)
    try:
        for position, (method, url_path, headers, body, time, source, locator) in enumerate(raws):
            captured.append(CapturedRequest(position=position, method=method, path=url_path, headers=headers,
                                            body=body, time=time, source=source, locator=locator,
                                            kind=classify(headers, body)))
    except MemoryError:
        captured.clear()
        raise _too_large(target) from None
    except OSError as exc:  # a read that fails after the open (an I/O error, a file gone)
        raise CaptureError(f"cannot read: {exc.strerror or exc}", path=str(exc.filename) if exc.filename else str(target)) from None
    for tail in torn:
        assert warnings is not None
        warnings.append(f"{target}: {tail}")
    return captured
