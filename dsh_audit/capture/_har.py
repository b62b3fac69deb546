"""The ``har`` capture format (HAR 1.2): ``log.entries[].request``, a gzip body decompressed."""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

from .._urls import url_problem
from ..errors import UnreadableError
from ..log import DecodeBudget
from ._reading import Said, _error, _handle, _header_values, _parse, _Raw, _read_all, _text_value

__all__ = ["har_handles", "har_read"]

_HAR_START = re.compile(rb'^\s*\{\s*"log"\s*:')
_GZIP_MAGIC = b"\x1f\x8b"
_PIECE = 1 << 20


def har_handles(path: Path, first: bytes) -> bool:
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


def har_read(path: Path, handle: BinaryIO | None, said: Said | None,
             records: list[Any] | None = None) -> Iterator[_Raw]:
    """Every entry's request of a HAR file; given ``records``, the parsed document is appended to
    it, each request's ``postData.text`` replaced by None once its body is read. A HAR file is one
    JSON document: its bodies are held (no reread: a body is not found again without parsing it whole)."""
    hint = "a HAR file is one JSON object {\"log\": {\"entries\": [...]}} (HAR 1.2)"
    with ExitStack() as stack:
        data = _read_all(path, _handle(stack, path, handle))
    document = _parse(data, path, None, invalid="not valid JSON", hint=hint)
    del data  # the document is what is read now: the file's bytes are not held beside it
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
        body = _har_body(path, where, request, headers)
        post = request.get("postData")
        if isinstance(post, dict) and "text" in post:
            post["text"] = None  # its bytes are the body: the text is not held beside them
        yield (str(request.get("method") or "POST").upper(), url_path, headers,
               body, _text_value(entry.get("startedDateTime")), str(path), where, None)
    if records is not None:
        records.append(document)
