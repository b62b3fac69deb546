"""A captured body as the capture's JSON text carries it, undone: the one decoder of a request's
body (a HAR entry's ``request.postData``, a ``wire.jsonl`` record's ``body_base64`` or ``body``:
:mod:`dsh_audit.capture`) and of a recorded response's (``response.content``, read for its usage by
:mod:`dsh_audit.cache`, redacted by :mod:`dsh_audit.redact`).

A body is text (its UTF-8 bytes), or base64 when its ``encoding`` names base64 (in any case: HAR 1.2
gives the name, not its spelling). Gzip data is inflated, every member of it, within the limits on
decoded size and expansion (:class:`dsh_audit.log.DecodeBudget`), when the body says it is gzip
(its ``encoding`` or its ``Content-Encoding`` header naming gzip: then a body not marked base64 is
tried as base64 too, the only way gzip data travels in a JSON string) or when base64 decodes to gzip data (no text body
starts with the gzip magic bytes).
A ``Content-Encoding`` naming several codings (``gzip, gzip``) is undone last one first, every layer
counted against the one body's limits (its decoded bytes, all layers', per byte of the body as
captured: each layer within its own ratio would let two 100x layers make 10,000x); ``deflate`` is
zlib data, or raw deflate as some clients send it, and is guessed from base64 by its zlib header as
gzip is by its magic (raw deflate has none); :func:`decoded_body` undoes data under a header naming
the other coding (gzip data under ``deflate``) by that magic too. A body already UTF-8 JSON text is kept as stored,
whatever coding it claims: HAR tools store the decoded text with the original headers; so is an
event stream's text (``data:``, ``event:``... lines: a streamed response stored decoded). A body whose
coding cannot be undone (a coding the standard library has no decoder for, ``br``; corrupt or cut-off
data; binary bytes that hold no data of the coding named) raises :class:`UndecodableBody`, which names
the coding and holds the body as captured: a reader keeps that and says so, a writer (``redact``)
replaces it whole (review B 45). Only a body past the decode limits (a bomb) or no base64 when it says
so is refused outright (a plain :class:`BodyDecodeError`). :func:`decoded_body` also says which
codings it undid, so that a writer (``redact``) can apply them again to the body it rewrote;
:func:`undo_codings` does the same for a body whose bytes its capture already holds apart from any
encoding (a ``wire.jsonl`` record's), by its header alone.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from dataclasses import dataclass
from typing import Any

from .errors import UnreadableError
from .log import DecodeBudget

__all__ = ["BodyDecodeError", "NotUndone", "UndecodableBody", "body_bytes", "content_encoding", "decoded_body",
           "decoded_stored", "is_gzip", "names_base64", "stored_bytes", "undo_codings"]

_GZIP_MAGIC = b"\x1f\x8b"
_PIECE = 1 << 20
#: The first input fed to a gzip member's inflater: an empty member is 20 bytes.
_FIRST_FEED = 64
#: zlib's ``wbits`` for each coding it undoes: gzip, zlib-wrapped deflate (RFC 1950), raw deflate.
_GZIP_BITS, _ZLIB_BITS, _RAW_BITS = 31, 15, -15
#: A coding's name as shown in an error (anything else in the header is not quoted: it is capture text).
_CODING_NAME = re.compile(r"[a-z0-9][a-z0-9._+-]{0,31}")
#: A JSON object's or array's start, past JSON's whitespace: no gzip, zlib or raw deflate data
#: starts so (``{``, ``[`` and whitespace are no zlib header) and ends as one (:func:`_json_shaped`).
_JSON_START = re.compile(rb"[ \t\r\n]*[{\[]")
_JSON_SPACE = b" \t\r\n"
#: How an event stream's text opens (a field name and its colon, or a comment's colon): no gzip or zlib
#: data starts so (their first bytes are 1f and x8), and UTF-8 text is checked too (:func:`_stored_decoded`).
_STREAM_START = re.compile(rb"[ \t\r\n]*(?:data|event|id|retry)?:")


class BodyDecodeError(ValueError):
    """A body that cannot be decoded: ``message`` (which quotes none of it) and a ``hint``."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint


class UndecodableBody(BodyDecodeError):
    """A body whose ``coding`` cannot be undone (no decoder for it, corrupt or cut-off data): no bomb,
    so no reason to refuse the capture; ``stored`` is the body as captured (base64 undone, no coding),
    set by the decoder that gave up (:func:`_undone`), for a reader to keep and a writer to replace."""

    def __init__(self, message: str, hint: str, coding: str) -> None:
        super().__init__(message, hint)
        self.coding, self.stored = coding, b""


@dataclass(frozen=True, slots=True)
class NotUndone:
    """What a capture reader keeps, in place of a record's body, for a body it read as captured
    (:class:`UndecodableBody`): the ``coding`` not undone, no JSON value, for a writer (``redact``) to
    count the body it replaces whole."""

    coding: str


def is_gzip(data: bytes) -> bool:
    """Whether ``data`` starts as gzip data does (its magic, 1f 8b): the one test of it."""
    return data.startswith(_GZIP_MAGIC)


def names_base64(value: object) -> bool:
    """Whether an ``encoding`` value names base64, in any letter case (any other value: no)."""
    return isinstance(value, str) and "base64" in value.lower()


def content_encoding(headers: Any) -> Any:
    """A recorded message's ``Content-Encoding``: its headers an object of name to value (a
    ``wire.jsonl`` record's) or a list of ``{name, value}`` (HAR 1.2); None when it has none."""
    pairs = headers.items() if isinstance(headers, dict) else (
        (h.get("name"), h.get("value")) for h in headers if isinstance(h, dict)) if isinstance(headers, list) else ()
    return next((value for name, value in pairs if isinstance(name, str) and name.lower() == "content-encoding"), None)


def _budget(source: str) -> DecodeBudget:
    """The decode limits of one captured body, all its layers (module docstring)."""
    return DecodeBudget(source, what="body", codec="gzip")


def _gunzip(data: bytes, budget: DecodeBudget, captured: int = 0) -> bytes:
    """Gzip ``data`` inflated member after member, within the body's ``budget`` (one for all: a
    bomb of many members is counted as one of one; ``captured``: :func:`_inflate_member`). A gzip
    body is a series of members (RFC 1952 2.2), so a server inflates every one; bytes after the last
    that start no member are refused, not dropped: the body the server read is not the one the
    capture shows."""
    budget.codec = "gzip"
    view, at = memoryview(data), 0
    pieces: list[bytes] = []
    try:
        while at < len(data):
            if at and not data.startswith(_GZIP_MAGIC, at):
                raise UndecodableBody(
                    f"the gzip body has {len(data) - at} byte(s) after its gzip data that are not a gzip member",
                    "the capture appended bytes to the body: recapture, or give --capture another capture", "gzip")
            at = _inflate_member(view, at, budget, pieces, captured=captured)
    except zlib.error as exc:
        raise UndecodableBody(f"the gzip body is corrupt ({exc})",
                              "store the body as sent, or drop the gzip Content-Encoding", "gzip") from None
    except UnreadableError as exc:
        raise BodyDecodeError(f"the gzip body is {exc.message}", exc.hint or "") from None
    return b"".join(pieces)


def _inflate_member(data: memoryview, at: int, budget: DecodeBudget, pieces: list[bytes], wbits: int = _GZIP_BITS,
                    captured: int = 0) -> int:
    """Inflate the gzip member (or, by ``wbits``, the deflate stream) that starts at ``data[at]`` onto
    ``pieces``; where it ends. The ratio is of the captured bytes read so far: ``data``'s, or, when
    ``data`` is an inner layer (another layer's output), ``captured``, the whole body's size. Input is fed
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
            budget.spend(uncounted, captured or at - len(pending))
            uncounted = 0
        elif not piece and not pending and at == len(data):
            raise UndecodableBody(f"the {budget.codec} body is cut off", "the capture lost the end of the body: "
                                  "recapture, or give --capture another capture", budget.codec)
    return at - len(inflater.unused_data)


def _has_zlib_header(data: bytes) -> bool:
    """Whether ``data`` starts with a zlib header (RFC 1950: deflate, its check bits right)."""
    return len(data) > 1 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0


def _inflate_deflate(data: bytes, budget: DecodeBudget, captured: int = 0) -> bytes | None:
    """A ``deflate`` body undone, within the body's ``budget`` (``captured``: :func:`_inflate_member`):
    zlib data (RFC 1950, as HTTP names it), or raw deflate (RFC 1951, which some clients send instead).
    Corrupt zlib data, or bytes after it, are refused, as for gzip; a body with no zlib header that is
    no whole raw deflate stream either is kept (None), and what the try decoded is not counted: it was
    stored already inflated (raw deflate has no magic bytes to tell it by)."""
    zlib_header, spent = _has_zlib_header(data), budget.decoded
    budget.codec, pieces = "deflate", list[bytes]()
    try:
        end = _inflate_member(memoryview(data), 0, budget, pieces, _ZLIB_BITS if zlib_header else _RAW_BITS, captured)
    except UnreadableError as exc:  # past the limits: refused however the body is wrapped
        raise BodyDecodeError(f"the deflate body is {exc.message}", exc.hint or "") from None
    except UndecodableBody:  # cut off
        if not zlib_header:
            return _as_stored(budget, spent)
        raise
    except zlib.error as exc:
        if not zlib_header:
            return _as_stored(budget, spent)
        raise UndecodableBody(f"the deflate body is corrupt ({exc})",
                              "store the body as sent, or drop the deflate Content-Encoding", "deflate") from None
    if end == len(data):
        return b"".join(pieces)
    if not zlib_header:
        return _as_stored(budget, spent)
    raise UndecodableBody(f"the deflate body has {len(data) - end} byte(s) after its deflate data",
                          "the capture appended bytes to the body: recapture, or give --capture another capture",
                          "deflate")


def _as_stored(budget: DecodeBudget, spent: int) -> bytes | None:
    """None: the body is kept as stored (no raw deflate stream), ``budget`` back at ``spent``: a try is
    no body."""
    budget.decoded = spent
    return None


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


def _stored_decoded(body: bytes) -> bool:
    """Whether ``body`` is already what a request or a response carries, UTF-8 JSON text or an event
    stream's text (or nothing): kept as stored whatever coding its header names, as a HAR tool stores a
    body it decoded. Told by its shape (:func:`_json_shaped`, :data:`_STREAM_START`) and its UTF-8, not
    parsed: parsing it is the capture reader's.

    Example:
        >>> _stored_decoded(' {"a": "é"} '.encode()), _stored_decoded(b""), _stored_decoded(b"{\\x7f}")
        (True, True, True)
        >>> _stored_decoded('{"a": "é"}'.encode("latin-1")), _stored_decoded(b"\\x1f\\x8b{}")
        (False, False)
        >>> _stored_decoded(b'data: {"a": 1}\\n\\n'), _stored_decoded(b"\\x1f\\x8bdata:")
        (True, False)
    """
    if not body:
        return True
    if not _json_shaped(body) and _STREAM_START.match(body) is None:
        return False
    try:
        return body.isascii() or bool(body.decode("utf-8"))
    except UnicodeDecodeError:
        return False


def _json_shaped(body: bytes) -> bool:
    """Whether ``body`` starts and ends as a JSON object or array does, past JSON's whitespace; its
    end looked for in its last 4 KiB first (all whitespace: in a copy of it), in linear time."""
    if _JSON_START.match(body) is None:
        return False
    end = body[-4096:].rstrip(_JSON_SPACE) or body.rstrip(_JSON_SPACE)
    return end[-1:] in (b"}", b"]")


def _packed(data: bytes, coding: str) -> bool:
    """Whether ``data`` starts as data of ``coding`` does (gzip's magic, deflate's zlib header)."""
    return is_gzip(data) if coding == "gzip" else coding == "deflate" and _has_zlib_header(data)


def _shown(coding: str) -> str:
    """A coding's name as a message shows it (:data:`_CODING_NAME`: capture text is never quoted)."""
    return coding if _CODING_NAME.fullmatch(coding) else "that is not a coding name"


def _named(coding: str) -> str:
    """A coding's name as :attr:`UndecodableBody.coding` gives it to a summary (never capture text)."""
    return coding if _CODING_NAME.fullmatch(coding) else "(no coding name)"


def _undo(body: bytes, coding: str, budget: DecodeBudget, captured: int) -> bytes | None:
    """``body`` with one content coding undone (:func:`_codings`) within the body's ``budget``
    (``captured``: :func:`_inflate_member`), or None when it holds no data of that coding (stored
    decoded); one no decoder here undoes is an :class:`UndecodableBody`."""
    if coding == "gzip":
        return _gunzip(body, budget, captured) if is_gzip(body) else None
    if coding == "deflate":
        return _inflate_deflate(body, budget, captured)
    raise UndecodableBody(f"the body's Content-Encoding {_shown(coding)} cannot be decoded (dsh-audit decodes "
                          "gzip and deflate)", "store the body as sent before its Content-Encoding, capture it "
                          "with gzip, or give --capture another capture", _named(coding))


def _by_magic(body: bytes, budget: DecodeBudget, captured: int) -> tuple[bytes, str] | None:
    """``body`` undone by what its bytes start with, gzip's magic or a zlib header, and that coding;
    None when they start with neither: what a header that names a coding whose data the body does not
    hold leaves (gzip data under ``deflate``), as :func:`decoded_body` guesses with no header at all,
    so that a lying header costs no secret its count (review B 45)."""
    coding, spent = "gzip" if is_gzip(body) else "deflate" if _has_zlib_header(body) else None, budget.decoded
    try:
        inner = None if coding is None else _undo(body, coding, budget, captured)
    except UndecodableBody:  # magic bytes by chance (text may start as a zlib header does): a try is no body
        inner = _as_stored(budget, spent)
    return None if inner is None or coding is None else (inner, coding)


def body_bytes(text: str, *, encoding: object = None, field: str = "text", source: str = "",
               content_coding: object = None) -> bytes:
    """The bytes of a body the capture holds as ``text`` (the module docstring). ``encoding``: the
    body's declared encoding (HAR's ``encoding``); ``content_coding``: the ``Content-Encoding`` value,
    every coding it names undone (:func:`_codings`); ``field``: the body's name in errors
    (``postData.text``); ``source``: its file, for the decode limits' refusal.

    Raises:
        BodyDecodeError: not base64 when it says so, a lone surrogate (no UTF-8 bytes), corrupt or
            cut-off gzip or deflate data, a coding no decoder here undoes, or past the decode limits.

    Example:
        >>> body_bytes("eyJhIjoxfQ==", encoding="BASE64")
        b'{"a":1}'
        >>> body_bytes(base64.b64encode(__import__("gzip").compress(b"{}", mtime=0)).decode(), encoding="base64")
        b'{}'
    """
    return decoded_body(text, encoding=encoding, field=field, source=source, content_coding=content_coding)[0]


def decoded_body(text: str, *, encoding: object = None, field: str = "text", source: str = "",
                 content_coding: object = None) -> tuple[bytes, tuple[str, ...]]:
    """:func:`body_bytes`' bytes, and the codings it undid in the order they were applied (``gzip``,
    ``deflate``): a layer its data did not hold (a body stored decoded) is not one of them. A writer
    that rewrote the body applies them again to send the same kind of bytes.

    Raises:
        BodyDecodeError: as :func:`body_bytes`.

    Example:
        >>> import zlib; packed = base64.b64encode(zlib.compress(b"[1]")).decode()
        >>> decoded_body(packed, content_coding="deflate"), decoded_body("[1]", content_coding="gzip, br")
        ((b'[1]', ('deflate',)), (b'[1]', ()))
    """
    return decoded_stored(stored_bytes(text, encoding=encoding, field=field), encoding=encoding, source=source,
                          content_coding=content_coding)


def stored_bytes(text: str, *, encoding: object = None, field: str = "text") -> bytes:
    """The bytes a capture's JSON string ``text`` holds of a body, no coding undone yet: base64 undone
    when ``encoding`` names it (:func:`names_base64`), else its UTF-8 bytes; the first step of
    :func:`decoded_body`, for a writer that keeps a text holding no such bytes as it is, so that the
    body is decoded once (:func:`decoded_stored` takes it from there).

    Raises:
        BodyDecodeError: not base64 when it says so, or a lone surrogate (no UTF-8 bytes); never an
            :class:`UndecodableBody`.

    Example:
        >>> stored_bytes("eyJhIjoxfQ==", encoding="base64"), stored_bytes("é")
        (b'{"a":1}', b'\\xc3\\xa9')
    """
    if names_base64(encoding):
        try:
            return base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise BodyDecodeError(f"{field} is not base64",
                                  "drop encoding or store the body base64-encoded") from None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise BodyDecodeError(f"{field} holds a lone surrogate, so it has no UTF-8 bytes",
                              'store the body base64-encoded with "encoding": "base64"') from None


def decoded_stored(body: bytes, *, encoding: object = None, source: str = "",
                   content_coding: object = None) -> tuple[bytes, tuple[str, ...]]:
    """:func:`decoded_body` of a body whose :func:`stored_bytes` are ``body`` (``encoding``: the one they
    were read with).

    Raises:
        BodyDecodeError: as :func:`body_bytes`, but for what :func:`stored_bytes` raises.
    """
    declared = encoding.lower() if isinstance(encoding, str) else ""
    coded = names_base64(encoding)
    layers = _codings(content_coding) or (["gzip"] if "gzip" in declared or coded and is_gzip(body) else [])
    if layers and not coded and not _packed(body, layers[-1]):
        try:  # packed data can only travel in a JSON string as base64, whatever the encoding names
            decoded = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            decoded = b""
        body = decoded if _packed(decoded, layers[-1]) else body
    return _undone(body, layers, source, guess=True)


def undo_codings(body: bytes, content_coding: object, source: str = "") -> tuple[bytes, tuple[str, ...]]:
    """The bytes of a body as sent (a ``wire.jsonl`` record's ``body_base64`` or ``body``, already
    bytes) with every coding its ``Content-Encoding`` value names undone, as :func:`decoded_body`
    undoes them, and the codings undone in the order they were applied; no coding guessed from the
    bytes: a server reads a request by its header alone. ``source``: its file, for the limits' refusal.

    Raises:
        BodyDecodeError: as :func:`body_bytes`.

    Example:
        >>> import gzip; undo_codings(zlib.compress(gzip.compress(b"[1]", mtime=0)), "gzip, deflate")
        (b'[1]', ('gzip', 'deflate'))
        >>> undo_codings(b"[1]", "br"), undo_codings(gzip.compress(b"[1]"), None)[1]
        ((b'[1]', ()), ())
    """
    return _undone(body, _codings(content_coding), source)


def _undone(body: bytes, layers: list[str], source: str, *, guess: bool = False) -> tuple[bytes, tuple[str, ...]]:
    """``body`` with its ``layers`` undone, the last applied first, within one budget: each layer's
    output counted against the body's size as captured (module docstring); a layer's output already
    JSON or event-stream text is the body (:func:`_stored_decoded`). Also the layers undone, in the
    order they were applied (:func:`decoded_body`). With ``guess``, a layer whose data is absent is
    undone by the bytes' magic (:func:`_by_magic`), named by the coding it was.

    Raises:
        UndecodableBody: a layer cannot be undone, or one whose data is absent leaves bytes that are no
            text (:func:`_no_text`); ``stored`` is ``body`` as given.
        BodyDecodeError: past the decode limits.
    """
    try:
        return _layers_undone(body, layers, source, guess)
    except UndecodableBody as exc:
        exc.stored = body
        raise


def _layers_undone(body: bytes, layers: list[str], source: str, guess: bool) -> tuple[bytes, tuple[str, ...]]:
    """:func:`_undone`'s work, ``body`` as it is given back by any failure left to it."""
    budget, captured = _budget(source), len(body)
    undone: list[str] = []
    absent: str | None = None
    for depth, coding in enumerate(reversed(layers)):
        if _stored_decoded(body):
            break
        inner = _undo(body, coding, budget, captured if depth else 0)
        guessed = _by_magic(body, budget, captured if depth else 0) if inner is None and guess else None
        if guessed is not None:
            inner, coding = guessed
        if inner is None:
            absent = absent or coding
            continue
        body = inner
        undone.insert(0, coding)
    if absent is not None and _no_text(body):
        raise UndecodableBody(f"the body's Content-Encoding names {_shown(absent)}, but it holds no {_shown(absent)} "
                              "data and no text", "store the body as sent, or drop the Content-Encoding it does not "
                              "have", _named(absent))
    return body, tuple(undone)


def _no_text(body: bytes) -> bool:
    """Whether ``body`` is no UTF-8 text: bytes left coded, of a coding named but not recognised (a cut
    raw deflate stream: no magic bytes tell it), that no reader can take for a body stored decoded."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False
