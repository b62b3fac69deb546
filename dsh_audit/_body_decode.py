"""A captured body as the capture's JSON text carries it, undone: the one decoder of a request's
body (a HAR entry's ``request.postData``, :mod:`dsh_audit.capture`) and of a recorded response's
(``response.content``, read for its usage by :mod:`dsh_audit.cache`).

A body is text (its UTF-8 bytes), or base64 when its ``encoding`` names base64 (in any case: HAR 1.2
gives the name, not its spelling). Gzip data is inflated, every member of it, within the limits on
decoded size and expansion (:class:`dsh_audit.log.DecodeBudget`), when the body says it is gzip
(its ``encoding`` or its ``Content-Encoding`` header naming gzip: then a body not marked base64 is
tried as base64 too, the only way gzip data travels in a JSON string) or when base64 decodes to gzip data (no text body
starts with the gzip magic bytes). A body that only claims gzip, stored already inflated, is kept.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from typing import Any

from .errors import UnreadableError
from .log import DecodeBudget

__all__ = ["BodyDecodeError", "body_bytes", "content_encoding", "inflated", "is_gzip", "names_base64", "names_gzip"]

_GZIP_MAGIC = b"\x1f\x8b"
_PIECE = 1 << 20
#: The first input fed to a gzip member's inflater: an empty member is 20 bytes.
_FIRST_FEED = 64


class BodyDecodeError(ValueError):
    """A body that cannot be decoded: ``message`` (which quotes none of it) and a ``hint``."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


def is_gzip(data: bytes) -> bool:
    """Whether ``data`` starts as gzip data does (its magic, 1f 8b): the one test of it."""
    return data.startswith(_GZIP_MAGIC)


def names_gzip(value: object) -> bool:
    """Whether an ``encoding`` or ``Content-Encoding`` value names gzip (any other value: no)."""
    return isinstance(value, str) and "gzip" in value.lower()


def names_base64(value: object) -> bool:
    """Whether an ``encoding`` value names base64, in any letter case (any other value: no)."""
    return isinstance(value, str) and "base64" in value.lower()


def content_encoding(headers: Any) -> Any:
    """A recorded message's ``Content-Encoding``: its headers an object of name to value (a
    ``wire.jsonl`` record's) or a list of ``{name, value}`` (HAR 1.2); None when it has none."""
    pairs = headers.items() if isinstance(headers, dict) else (
        (h.get("name"), h.get("value")) for h in headers if isinstance(h, dict)) if isinstance(headers, list) else ()
    return next((value for name, value in pairs if isinstance(name, str) and name.lower() == "content-encoding"), None)


def _gunzip(data: bytes, source: str) -> bytes:
    """Gzip ``data`` inflated member after member, within the decode limits (one budget for all:
    a bomb of many members is counted as one of one). A gzip body is a series of members (RFC 1952
    2.2), so a server inflates every one; bytes after the last that start no member are refused, not
    dropped: the body the server read is not the one the capture shows."""
    budget = DecodeBudget(source, what="body", codec="gzip")
    view, at = memoryview(data), 0
    pieces: list[bytes] = []
    try:
        while at < len(data):
            if at and not data.startswith(_GZIP_MAGIC, at):
                raise BodyDecodeError(
                    f"the gzip body has {len(data) - at} byte(s) after its gzip data that are not a gzip member",
                    "the capture appended bytes to the body: recapture, or give --capture another capture")
            at = _inflate_member(view, at, budget, pieces)
    except zlib.error as exc:
        raise BodyDecodeError(f"the gzip body is corrupt ({exc})",
                              "store the body as sent, or drop the gzip Content-Encoding") from None
    except UnreadableError as exc:
        raise BodyDecodeError(f"the gzip body is {exc.message}", exc.hint or "") from None
    return b"".join(pieces)


def _inflate_member(data: memoryview, at: int, budget: DecodeBudget, pieces: list[bytes]) -> int:
    """Inflate the gzip member that starts at ``data[at]`` onto ``pieces``; where it ends. Input is fed
    in pieces that start small and double, each at most twice what the member has read: zlib copies
    the input past a member's end, so a body of many tiny members stays linear, not quadratic. Output
    is counted a whole :data:`_PIECE` at a time (and at the member's end), as one member always was."""
    inflater = zlib.decompressobj(wbits=31)
    pending, feed, uncounted = b"", _FIRST_FEED, 0
    while not inflater.eof:
        if not pending and at < len(data):
            pending, at, feed = bytes(data[at:at + feed]), min(at + feed, len(data)), min(2 * feed, _PIECE)
        piece = inflater.decompress(pending, _PIECE - uncounted)
        pending = inflater.unconsumed_tail
        pieces.append(piece)
        uncounted += len(piece)
        if uncounted == _PIECE or inflater.eof:
            budget.spend(uncounted, at - len(pending))
            uncounted = 0
        elif not piece and not pending and at == len(data):
            raise BodyDecodeError("the gzip body is cut off",
                                  "the capture lost the end of the body: recapture, or give --capture another capture")
    return at - len(inflater.unused_data)


def inflated(body: bytes, source: str = "") -> bytes:
    """``body`` inflated when it is gzip data, within the decode limits; any other body as it is: a
    tool that stored the body already inflated keeps its ``Content-Encoding: gzip`` header, so a
    header alone never says the bytes are gzip. ``source``: the body's file, for the limits' refusal.

    Raises:
        BodyDecodeError: corrupt or cut-off gzip data, or past the decode limits.

    Example:
        >>> inflated(__import__("gzip").compress(b"{}", mtime=0)), inflated(b"{}")
        (b'{}', b'{}')
    """
    return _gunzip(body, source) if body.startswith(_GZIP_MAGIC) else body


def body_bytes(text: str, *, encoding: object = None, gzip: bool = False, field: str = "text",
               source: str = "") -> bytes:
    """The bytes of a body the capture holds as ``text`` (the module docstring). ``encoding``: the
    body's declared encoding (HAR's ``encoding``); ``gzip``: whether its ``Content-Encoding`` names
    gzip; ``field``: the body's name in errors (``postData.text``); ``source``: its file, for the
    decode limits' refusal.

    Raises:
        BodyDecodeError: not base64 when it says so, a lone surrogate (no UTF-8 bytes), corrupt or
            cut-off gzip data, or past the decode limits.

    Example:
        >>> body_bytes("eyJhIjoxfQ==", encoding="BASE64")
        b'{"a":1}'
        >>> body_bytes(base64.b64encode(__import__("gzip").compress(b"{}", mtime=0)).decode(), encoding="base64")
        b'{}'
    """
    declared = encoding.lower() if isinstance(encoding, str) else ""
    coded = names_base64(encoding)
    if coded:
        try:
            body = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise BodyDecodeError(f"{field} is not base64",
                                  "drop encoding or store the body base64-encoded") from None
    else:
        try:
            body = text.encode("utf-8")
        except UnicodeEncodeError:
            raise BodyDecodeError(f"{field} holds a lone surrogate, so it has no UTF-8 bytes",
                                  'store the body base64-encoded with "encoding": "base64"') from None
    gzip = gzip or "gzip" in declared
    if gzip and not coded and not body.startswith(_GZIP_MAGIC):
        try:  # a gzip body can only travel in a JSON string as base64, whatever the encoding names
            decoded = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            decoded = b""
        body = decoded if decoded.startswith(_GZIP_MAGIC) else body
    return inflated(body, source) if gzip or coded else body
