"""A captured body as the capture's JSON text carries it, undone: the one decoder of a request's
body (a HAR entry's ``request.postData``, :mod:`dsh_audit.capture`) and of a recorded response's
(``response.content``, read for its usage by :mod:`dsh_audit.cache`).

A body is text (its UTF-8 bytes), or base64 when its ``encoding`` names base64 (in any case: HAR 1.2
gives the name, not its spelling). Gzip data is inflated, within the limits on decoded size and
expansion (:class:`dsh_audit.log.DecodeBudget`), when the body says it is gzip (its ``encoding`` or
its ``Content-Encoding`` header naming gzip: then a body not marked base64 is tried as base64 too,
the only way gzip data travels in a JSON string) or when base64 decodes to gzip data (no text body
starts with the gzip magic bytes). A body that only claims gzip, stored already inflated, is kept.
"""

from __future__ import annotations

import base64
import binascii
import zlib
from typing import Any

from .errors import UnreadableError
from .log import DecodeBudget

__all__ = ["BodyDecodeError", "body_bytes", "content_encoding", "names_base64", "names_gzip"]

_GZIP_MAGIC = b"\x1f\x8b"
_PIECE = 1 << 20


class BodyDecodeError(ValueError):
    """A body that cannot be decoded: ``message`` (which quotes none of it) and a ``hint``."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


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
    """Gzip ``data`` inflated in pieces, within the decode limits."""
    budget = DecodeBudget(source, what="body", codec="gzip")
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
        raise BodyDecodeError(f"the gzip body is corrupt ({exc})",
                              "store the body as sent, or drop the gzip Content-Encoding") from None
    except UnreadableError as exc:
        raise BodyDecodeError(f"the gzip body is {exc.message}", exc.hint or "") from None
    if not inflater.eof:
        raise BodyDecodeError("the gzip body is cut off", "the capture lost the end of the body")
    return b"".join(pieces)


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
    # A tool that stored the body already inflated keeps the header: only gzip data is inflated.
    return _gunzip(body, source) if (gzip or coded) and body.startswith(_GZIP_MAGIC) else body
