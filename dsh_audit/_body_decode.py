"""A captured body as the capture's JSON text carries it, undone: the one decoder of a request's
body (a HAR entry's ``request.postData``, :mod:`dsh_audit.capture`) and of a recorded response's
(``response.content``, read for its usage by :mod:`dsh_audit.cache`).

A body is text (its UTF-8 bytes), or base64 when its ``encoding`` names base64 (in any case: HAR 1.2
gives the name, not its spelling). Gzip data is inflated, every member of it, within the limits on
decoded size and expansion (:class:`dsh_audit.log.DecodeBudget`), when the body says it is gzip
(its ``encoding`` or its ``Content-Encoding`` header naming gzip: then a body not marked base64 is
tried as base64 too, the only way gzip data travels in a JSON string) or when base64 decodes to gzip data (no text body
starts with the gzip magic bytes). A body that only claims gzip, stored already inflated, is kept.
A ``Content-Encoding`` naming several codings (``gzip, gzip``) is undone last one first, each layer
within its own limits; ``deflate`` is zlib data, or raw deflate as some clients send it; a coding the
standard library has no decoder for (``br``) is refused in one line naming it (issue 15).
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from typing import Any

from .errors import UnreadableError
from .log import DecodeBudget

__all__ = ["BodyDecodeError", "body_bytes", "content_encoding", "inflated", "is_gzip", "names_base64", "names_gzip"]

_GZIP_MAGIC = b"\x1f\x8b"
_PIECE = 1 << 20
#: The first input fed to a gzip member's inflater: an empty member is 20 bytes.
_FIRST_FEED = 64
#: zlib's ``wbits`` for each coding it undoes: gzip, zlib-wrapped deflate (RFC 1950), raw deflate.
_GZIP_BITS, _ZLIB_BITS, _RAW_BITS = 31, 15, -15
#: A coding's name as shown in an error (anything else in the header is not quoted: it is capture text).
_CODING_NAME = re.compile(r"[a-z0-9][a-z0-9._+-]{0,31}")


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


def _inflate_member(data: memoryview, at: int, budget: DecodeBudget, pieces: list[bytes], wbits: int = _GZIP_BITS) -> int:
    """Inflate the gzip member (or, by ``wbits``, the deflate stream) that starts at ``data[at]`` onto
    ``pieces``; where it ends. Input is fed
    in pieces that start small and double, each at most twice what the member has read: zlib copies
    the input past a member's end, so a body of many tiny members stays linear, not quadratic. Output
    is counted a whole :data:`_PIECE` at a time (and at the member's end), as one member always was."""
    inflater = zlib.decompressobj(wbits=wbits)
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
            raise BodyDecodeError(f"the {budget.codec} body is cut off",
                                  "the capture lost the end of the body: recapture, or give --capture another capture")
    return at - len(inflater.unused_data)


def _inflate_deflate(data: bytes, source: str) -> bytes:
    """A ``deflate`` body undone, within the decode limits: zlib data (RFC 1950, as HTTP names it), or
    raw deflate (RFC 1951, which some clients send instead). Corrupt zlib data, or bytes after it, are
    refused, as for gzip; a body with no zlib header that is no whole raw deflate stream either is kept:
    it was stored already inflated (raw deflate has no magic bytes to tell it by)."""
    zlib_header = len(data) > 1 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0
    budget, pieces = DecodeBudget(source, what="body", codec="deflate"), list[bytes]()
    try:
        end = _inflate_member(memoryview(data), 0, budget, pieces, _ZLIB_BITS if zlib_header else _RAW_BITS)
    except UnreadableError as exc:  # past the limits: refused however the body is wrapped
        raise BodyDecodeError(f"the deflate body is {exc.message}", exc.hint or "") from None
    except BodyDecodeError:  # cut off
        if not zlib_header:
            return data
        raise
    except zlib.error as exc:
        if not zlib_header:
            return data
        raise BodyDecodeError(f"the deflate body is corrupt ({exc})",
                              "store the body as sent, or drop the deflate Content-Encoding") from None
    if end == len(data):
        return b"".join(pieces)
    if not zlib_header:
        return data
    raise BodyDecodeError(f"the deflate body has {len(data) - end} byte(s) after its deflate data",
                          "the capture appended bytes to the body: recapture, or give --capture another capture")


def _codings(value: object) -> list[str]:
    """The content codings a ``Content-Encoding`` value names, in the order they were applied
    (``identity`` and empty items left out; ``x-gzip`` is gzip, RFC 9110 8.4.1.3).

    Example:
        >>> _codings("gzip, GZIP"), _codings("identity"), _codings(None)
        (['gzip', 'gzip'], [], [])
    """
    if not isinstance(value, str):
        return []
    named = (item.strip().lower() for item in value.split(","))
    return ["gzip" if item == "x-gzip" else item for item in named if item not in ("", "identity")]


def _undo(body: bytes, coding: str, source: str) -> bytes:
    """``body`` with one content coding undone (:func:`_codings`); one no decoder here undoes refused."""
    if coding == "gzip":
        return inflated(body, source)
    if coding == "deflate":
        return _inflate_deflate(body, source)
    shown = coding if _CODING_NAME.fullmatch(coding) else "that is not a coding name"
    raise BodyDecodeError(f"the body's Content-Encoding {shown} cannot be decoded (dsh-audit decodes gzip and deflate)",
                          "store the body as sent before its Content-Encoding, or capture it with gzip")


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
               source: str = "", content_coding: object = None) -> bytes:
    """The bytes of a body the capture holds as ``text`` (the module docstring). ``encoding``: the
    body's declared encoding (HAR's ``encoding``); ``gzip``: whether its ``Content-Encoding`` names
    gzip; ``content_coding``: instead, the ``Content-Encoding`` value itself, every coding it names
    undone (:func:`_codings`); ``field``: the body's name in errors (``postData.text``); ``source``: its
    file, for the decode limits' refusal.

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
    layers = _codings(content_coding) or (["gzip"] if gzip or "gzip" in declared else [])
    gzip = bool(layers) and layers[-1] == "gzip"
    if gzip and not coded and not body.startswith(_GZIP_MAGIC):
        try:  # a gzip body can only travel in a JSON string as base64, whatever the encoding names
            decoded = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            decoded = b""
        body = decoded if decoded.startswith(_GZIP_MAGIC) else body
    for coding in reversed(layers):  # the last one applied first
        body = _undo(body, coding, source)
    return inflated(body, source) if coded and not layers else body
