"""The ``har`` capture format (HAR 1.2): ``log.entries[].request``, a gzip body decompressed; read
entry by entry (:mod:`._har_scan`), each body read again by its entry's offset, as a ``wire.jsonl``
record's is by its line's."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from .._body_decode import BodyDecodeError, NotUndone, UndecodableBody, body_bytes
from .._json import json_type
from .._literals import inexact, literal_json
from .._urls import url_problem
from ..log import parse_json
from ._har_scan import EntriesSpan, har_entries
from ._reading import (Said, UndoneBody, _CaptureFile, _error, _handle, _header_values, _Kept, _parse, _Raw, _read_all,
                       _RecordBody, _text_value)

__all__ = ["har_handles", "har_read", "undecoded_note"]


_HAR_START = re.compile(rb'^\s*\{\s*"log"\s*:')


def har_handles(path: Path, first: bytes) -> bool:
    return path.is_file() and (bool(_HAR_START.match(first)) or path.suffix.lower() == ".har")


def _har_url_path(url: str) -> str:
    parts = urlsplit(url)
    if not parts.scheme and not parts.netloc:
        return url
    return parts.path + (f"?{parts.query}" if parts.query else "")


def undecoded_note(path: Path, where: str, exc: UndecodableBody) -> str:
    """What a reader says of a request body at ``where`` (``line 3``, ``entries[2]``) whose coding it
    could not undo: read as captured, never skipped in silence. ``exc``'s message quotes no capture text.

    Example:
        >>> undecoded_note(Path("w.jsonl"), "line 2", UndecodableBody("the gzip body is cut off", "", "gzip"))
        'w.jsonl: line 2: its body is read as captured, not decoded: the gzip body is cut off'
    """
    return f"{path}: {where}: its body is read as captured, not decoded: {exc.message}"


def _har_body(path: Path, where: str, request: dict[str, Any], headers: dict[str, str],
              said: Said | None = None) -> tuple[bytes, NotUndone | None]:
    """The request body: ``postData.text`` decoded as its encoding and Content-Encoding say, by the
    one decoder of captured bodies (:func:`dsh_audit._body_decode.body_bytes`); one whose coding
    cannot be undone read as captured, said in ``said`` and its coding named (else None), as a
    ``wire.jsonl`` record's (:func:`._jsonl._decoded`); only a bomb, or no base64 when it says so, is
    refused."""
    post = request.get("postData")
    if post is None:
        return b"", None
    if not isinstance(post, dict):
        raise _error(path, where, "request.postData is not an object", "HAR 1.2 postData is {mimeType, text}")
    text = post.get("text") or ""
    if not isinstance(text, str):
        raise _error(path, where, f"postData.text is a JSON {json_type(text)}, not text",
                     "HAR 1.2 postData.text is a string (base64 with \"encoding\": \"base64\")")
    try:
        return body_bytes(text, encoding=post.get("encoding"), content_coding=headers.get("content-encoding"),
                          field="postData.text", source=str(path)), None
    except UndecodableBody as exc:
        if said is not None:
            said.skipped.append(undecoded_note(path, where, exc))
        return exc.stored, NotUndone(exc.coding)
    except BodyDecodeError as exc:
        raise _error(path, where, exc.message, exc.hint) from None


def _har_headers(path: Path, where: str, value: Any) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, list) or not all(isinstance(h, dict) and "name" in h for h in value):
        raise _error(path, where, "request.headers is not a list of {name, value}",
                     "HAR 1.2 headers are [{\"name\": ..., \"value\": ...}]")
    return _header_values(path, where, ((h["name"], h.get("value", "")) for h in value),
                          "HAR 1.2 headers are [{\"name\": ..., \"value\": ...}]")


_HINT = "a HAR file is one JSON object {\"log\": {\"entries\": [...]}} (HAR 1.2)"


def _entry_request(path: Path, where: str, entry: Any) -> tuple[dict[str, Any], str, dict[str, str]]:
    """An entry's request object, its URL's path and its headers, or a CaptureError."""
    request = entry.get("request") if isinstance(entry, dict) else None
    if not isinstance(request, dict):
        raise _error(path, where, "entry has no request object", _HINT)
    url = str(request.get("url") or "")
    problem = url_problem(url)
    if problem is not None:
        raise _error(path, where, f"request.url is not a URL ({problem})", _HINT)
    return request, _har_url_path(url), _har_headers(path, where, request.get("headers"))


def _entry_body(path: Path, where: str, data: bytes) -> bytes:
    """The request body of the HAR entry ``data`` holds (read again: :class:`._reading._RecordBody`)."""
    entry = _parse(data, path, where, invalid="not valid JSON", hint=_HINT)
    request, _, headers = _entry_request(path, where, entry)
    return _har_body(path, where, request, headers)[0]


def _whole(path: Path, handle: BinaryIO) -> Any:
    """The document of a HAR file the scan did not read whole (:mod:`._har_scan`), parsed whole from
    its start: its error (no JSON, no ``log.entries`` list), or the document."""
    handle.seek(0)
    data = _read_all(path, handle)
    document = _parse(data, path, None, invalid="not valid JSON", hint=_HINT)
    del data  # the document is what is read now: the file's bytes are not held beside it
    log = document.get("log") if isinstance(document, dict) else None
    if not isinstance(log, dict) or not isinstance(log.get("entries"), list):
        raise _error(path, None, "no log.entries list", _HINT)
    return document


def _skeleton(path: Path, handle: BinaryIO, span: EntriesSpan) -> Any:
    """The document around its entries (their list left empty), parsed: the rest of the file is
    JSON too; None when it is not (:func:`_whole` says why)."""
    handle.seek(0)
    head = handle.read(span.start)
    handle.seek(span.end)
    try:
        return parse_json(head + b"[]" + _read_all(path, handle))
    except (ValueError, UnicodeDecodeError):
        return None


def _har_document(path: Path, handle: BinaryIO, span: EntriesSpan, *, say_why: bool) -> Any:
    """The document around the entries of the HAR file open in ``handle`` once the scan (``span``)
    has read every entry, parsed (:func:`_skeleton`); a CaptureError when it is no HAR document: an
    entry that is no object (at its index), ``log.entries`` given twice, or no ``log.entries`` list
    around them (with ``say_why``, the file parsed whole to say what is wrong, :func:`_whole`; a reader
    that drops the message does without that read)."""
    if span.scalar is not None:
        raise _error(path, f"entries[{span.scalar}]", "entry has no request object", _HINT)
    if span.twice:
        raise _error(path, None, "log.entries is given twice", "keep one entries list in the HAR file")
    document = _skeleton(path, handle, span) if span.whole else None
    log = document.get("log") if isinstance(document, dict) else None
    if not isinstance(log, dict) or not isinstance(log.get("entries"), list):
        if say_why:
            _whole(path, handle)  # raises: no JSON, or no log.entries list
        raise _error(path, None, "no log.entries list", _HINT)
    return document


def har_read(path: Path, handle: BinaryIO | None, said: Said | None,
             records: list[Any] | None = None) -> Iterator[_Raw]:
    """Every entry's request of a HAR file, each entry read and parsed alone (:mod:`._har_scan`), so
    no more than one entry's body is held; each body is read again by the entry's offset. Given
    ``records``, the parsed document is appended to it once every entry is read, each request's
    ``postData.text`` None (a :class:`~dsh_audit._body_decode.NotUndone` when its body was read as
    captured, :func:`_har_body`; its responses are kept). A document the scan cannot read entry by entry
    (malformed JSON, no ``log.entries`` list, an entry that is no object) is parsed whole: its
    error, as a HAR file's always was (an entry that is no object: an error at its index)."""
    shared = _CaptureFile(str(path))  # what every body is read again from
    with ExitStack() as stack:
        opened = _handle(stack, path, handle)
        span = EntriesSpan()
        entries: list[Any] = []
        for number, (offset, data) in enumerate(har_entries(opened, span)):
            where = f"entries[{number}]"
            try:
                entry = parse_json(data)
            except (ValueError, UnicodeDecodeError):
                _whole(path, opened)
                raise _error(path, where, "not valid JSON", _HINT) from None
            request, url_path, headers = _entry_request(path, where, entry)
            body, not_undone = _har_body(path, where, request, headers, said)
            post = request.get("postData")
            if isinstance(post, dict) and "text" in post:
                # its bytes are the body, read again by the entry's offset; one read as captured named so
                post["text"] = not_undone  # for redact to count the body it replaces whole
            if records is not None:
                if isinstance(records, _Kept) and inexact(entry.get("response")):
                    entry["response"] = literal_json(data).get("response")  # its numbers as written, to say
                entries.append(entry)
            yield (str(request.get("method") or "POST").upper(), url_path, headers,
                   body if not_undone is None else UndoneBody(body, not_undone.coding),
                   _text_value(entry.get("startedDateTime")), str(path), where,
                   _RecordBody(shared, offset, len(data), where, _entry_body))
            del body, entry, request, data
        document = _har_document(path, opened, span, say_why=True)
    if records is not None:
        document["log"]["entries"] = entries
        records.append(document)
