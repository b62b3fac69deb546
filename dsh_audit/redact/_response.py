"""Redacting captured responses: JSON bodies in place, and streamed (SSE) bodies event by event.

No verdict reads a response, so a response only has to lose its content and secrets while staying
readable: a JSON response keeps its layout and structural strings (ids, roles, models, finish
reasons) and every other string becomes its placeholder (a secret in an object key is replaced in
place, as everywhere); a ``text/event-stream`` response keeps
its lines, ``event:``/``id:`` fields and ``[DONE]``, and the string values of each ``data:`` JSON
payload are redacted as one stream per JSON path (``choices.0.delta.content``, ``delta.text``,
...): secrets are looked for in the concatenation of a stream's deltas, so a key split across two
deltas is found and counted, and every delta gets its placeholder. Anything else is one content
string.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
import zlib
from collections.abc import Callable
from typing import Any

from .._body_decode import BodyDecodeError, body_bytes, content_encoding, is_gzip, names_base64, names_gzip
from ._json_text import JsonPath, json_string, reencode, rewrite_keys, string_tokens
from ._keys import STRUCTURAL_KEYS
from ._redactor import Redactor

__all__ = ["WIRE_KEYS", "below_content", "gzip_bytes", "held_gzip", "redact_content", "redact_content_text",
           "redact_response", "redact_response_text", "wire_structural"]

_SSE_FIELDS = ("data:", "event:", "id:", "retry:", ":")
_LINES = re.compile(r"[^\n]*\n|[^\n]+")


def _json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


#: The structural keys (:data:`._keys.STRUCTURAL_KEYS`) that the wire formats a captured body or
#: response is written in use for what is no content: types, ids, roles, models, tool names and call
#: ids, finish reasons, statuses, OpenAI Responses' message ``phase``, a tool choice, a reasoning
#: effort, Google's function-calling ``mode``, ``responseId`` and ``thoughtSignature``, an error's
#: ``code``, a tool schema's ``required`` property names. Every other structural key is a name of
#: DSH's log (``kind``, ``source``, ``target``, ``action``...): in a body, a string under it is content.
WIRE_KEYS = STRUCTURAL_KEYS & frozenset({
    "type", "id", "role", "model", "name", "tool_call_id", "tool_choice", "reasoning_effort", "finish_reason",
    "object", "status", "phase", "mode", "code", "responseId", "thoughtSignature", "required"})
#: The members of a wire body whose object value is free-form, the model's or a tool's: a tool call's
#: ``input`` (Anthropic, Bedrock) or ``arguments``, Google's ``functionCall.args``, a tool result's
#: ``details``; and Google's ``functionResponse.response``. No key below one is structural.
_CONTENT_ROOTS = frozenset({"input", "arguments", "args", "details"})
#: Where a JSON schema (a tool's parameters) names its properties: a property named ``input`` or
#: ``args`` there is a schema, whose ``type`` stays.
_SCHEMA_NAMES = frozenset({"properties", "patternProperties", "$defs", "definitions"})


def below_content(path: JsonPath) -> bool:
    """Whether ``path`` (of a body's string) runs through a free-form object (:data:`_CONTENT_ROOTS`):
    a member of one of those names whose value is an object (OpenAI Responses' top-level ``input`` is a
    list of items, whose types and roles stay), not a property a tool's JSON schema names so.

    Example:
        >>> below_content(("messages", 1, "content", 0, "input", "mode")), below_content(("input", 0, "role"))
        (True, False)
        >>> below_content(("tools", 0, "function", "parameters", "properties", "args", "type"))
        False
    """
    for at in range(len(path) - 1):
        step = path[at]
        if not isinstance(step, str) or not isinstance(path[at + 1], str):
            continue
        before = path[at - 1] if at else None
        if step in _CONTENT_ROOTS and before not in _SCHEMA_NAMES:
            return True
        if step == "response" and before == "functionResponse":
            return True
    return False


def wire_structural(path: JsonPath) -> bool:
    """Whether a string at ``path`` of a captured body or response is structural: the value of a member
    whose key the wire formats use for no content (:data:`WIRE_KEYS`), not below a free-form object
    (:func:`below_content`). Any other string is content, whatever its key.

    Example:
        >>> wire_structural(("model",)), wire_structural(("messages", 0, "kind"))
        (True, False)
        >>> wire_structural(("contents", 1, "parts", 0, "functionCall", "args", "type"))
        False
    """
    return bool(path) and path[-1] in WIRE_KEYS and not below_content(path)


def _rewrite(text: str, new: Callable[[str, JsonPath], str]) -> str:
    """JSON ``text`` with each string value replaced in place, in order, by ``new(value, path)``
    written in its original's escape forms (:func:`._json_text.reencode`): one read of the text."""
    out: list[str] = []
    last = 0
    for start, end, token, path in string_tokens(text):
        out.append(text[last:start])
        out.append(reencode(token, new(json_string(token), path)))
        last = end
    out.append(text[last:])
    return "".join(out)


def _json_response(text: str, redactor: Redactor) -> str:
    def new(value: str, path: JsonPath) -> str:
        key = path[-1] if path and isinstance(path[-1], str) else None
        return redactor.keep_text(value, key) if wire_structural(path) else redactor.content(value, key)

    return rewrite_keys(_rewrite(text, new), redactor.keys)


def _payload(line: str) -> int | None:
    """Where the JSON payload of an SSE ``data:`` line starts (after ``data:`` and one space), None when
    the line holds no JSON payload."""
    if not line.startswith("data:"):
        return None
    cut = 6 if line.startswith("data: ") else 5
    payload = line[cut:]
    return cut if payload.lstrip()[:1] in ("{", "[") and _json(payload) else None


def redact_sse(text: str, redactor: Redactor) -> str:
    """A ``text/event-stream`` body redacted: each stream of deltas (the string values found at one
    JSON path across the ``data:`` events) is scanned for secrets as one text. Each ``data:`` payload
    is parsed once."""
    lines = _LINES.findall(text)  # not str.splitlines: U+0085 and U+2028 are text inside a payload
    cuts = [_payload(line.rstrip("\r\n")) for line in lines]
    streams: dict[JsonPath, list[str]] = {}
    for line, cut in zip(lines, cuts):
        if cut is not None:
            for _, _, token, path in string_tokens(line.rstrip("\r\n")[cut:]):
                if not wire_structural(path):
                    streams.setdefault(path, []).append(json_string(token))
    placeholders = {path: iter(redactor.stream(values)) for path, values in streams.items()}

    def new(value: str, path: JsonPath) -> str:
        return redactor.keep_text(value) if wire_structural(path) else next(placeholders[path])

    out: list[str] = []
    for line, cut in zip(lines, cuts):
        body = line.rstrip("\r\n")
        ending = line[len(body):]
        if cut is not None:
            out.append(body[:cut] + rewrite_keys(_rewrite(body[cut:], new), redactor.keys) + ending)
        elif body.startswith("data:") and body[5:].strip() != "[DONE]":
            start = 6 if body.startswith("data: ") else 5
            out.append(body[:start] + redactor.content(body[start:]) + ending)
        elif body.startswith(_SSE_FIELDS) or not body.strip():
            out.append(redactor.keep_text(body) + ending)  # event names, ids, comments, blank lines
        else:
            out.append(redactor.content(body) + ending)
    return "".join(out)


def redact_response_text(text: str, redactor: Redactor) -> str:
    """A captured response body: an event stream, a JSON document, or one content string."""
    head = text.lstrip()
    is_json = head[:1] in ("{", "[") and _json(text)  # no event stream starts so: the text is parsed once
    if head.startswith(_SSE_FIELDS) and not is_json:
        return redact_sse(text, redactor)
    if is_json:
        return _json_response(text, redactor)
    return redactor.content(text)


#: The gzip header a redacted body is written with (RFC 1952): deflate, no name or comment, time 0, maximum
#: compression (``XFL`` 2), OS unknown (255): the same bytes on every machine and Python (``gzip.compress``
#: writes 255 on 3.10 and zlib's own OS byte from 3.11 on).
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"


def gzip_bytes(data: bytes) -> bytes:
    """``data`` compressed as gzip, the same bytes for the same data on every run (:data:`_GZIP_HEADER`).

    Example:
        >>> import gzip
        >>> packed = gzip_bytes(b'{"a": 1}')
        >>> gzip.decompress(packed), packed[:4], packed == gzip_bytes(b'{"a": 1}')
        (b'{"a": 1}', b'\\x1f\\x8b\\x08\\x00', True)
    """
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    body = deflate.compress(data) + deflate.flush()
    return _GZIP_HEADER + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def held_gzip(text: str, encoding: Any, *, gzip: bool) -> bool:
    """Whether a body stored as ``text``, which :func:`dsh_audit._body_decode.body_bytes` read with ``encoding``
    and ``gzip`` (its ``Content-Encoding`` names gzip), held gzip data that it inflated: base64 (marked so by
    ``encoding``, or unmarked under a gzip ``Content-Encoding`` or ``encoding``) whose bytes are gzip's. A body
    stored inflated under a gzip header held none.

    Example:
        >>> packed = base64.b64encode(gzip_bytes(b"{}")).decode()
        >>> held_gzip(packed, "base64", gzip=False), held_gzip(packed, None, gzip=True), held_gzip("{}", None, gzip=True)
        (True, True, False)
    """
    if names_base64(encoding):
        return _base64_gzip(text[:4])  # valid base64 whole: body_bytes read it
    return (gzip or names_gzip(encoding)) and _base64_gzip(text)


def _base64_gzip(text: str) -> bool:
    """Whether ``text`` is base64 whose bytes start as gzip's."""
    try:
        return is_gzip(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError):
        return False


def redact_content_text(text: str, encoding: Any, redactor: Redactor, *, gzip: bool = False,
                        sent: bool = False) -> str:
    """A HAR ``response.content.text`` redacted, decoded as every captured body is
    (:func:`dsh_audit._body_decode.body_bytes`: base64 when ``encoding`` names it in any case, gzip when
    ``encoding`` or the response's ``Content-Encoding`` (``gzip``) names it or base64 holds gzip data). The
    redacted text is written back base64-encoded when ``encoding`` names base64, as text otherwise, and
    inflated: HAR 1.2 defines ``content.text`` as the body HTTP-decoded ("decompressed & unchunked") before
    it is set, then base64-encoded or not, its headers telling how it travelled, so an inflated text under
    ``Content-Encoding: gzip`` is true, and one that held gzip data is written as HAR says. With ``sent`` (a
    ``wire.jsonl`` response's ``body_base64``: the bytes as they were sent), gzip data is compressed again
    (:func:`gzip_bytes`), so its kept ``Content-Encoding: gzip`` stays true (review 40: it was written
    inflated). A body that does not decode to UTF-8 text has no structure to keep: it is one content string,
    of the text as stored."""
    coded = names_base64(encoding)
    try:
        decoded = body_bytes(text, encoding=encoding, gzip=gzip, field="content.text").decode("utf-8")
    except (BodyDecodeError, UnicodeDecodeError):
        if not coded:
            return redact_response_text(text, redactor)
        return base64.b64encode(redactor.content(text).encode("utf-8", "surrogatepass")).decode("ascii")
    data = redact_response_text(decoded, redactor).encode("utf-8", "surrogatepass")
    if sent and held_gzip(text, encoding, gzip=gzip):  # gzip data travels in a JSON string as base64 only
        return base64.b64encode(gzip_bytes(data)).decode("ascii")
    return base64.b64encode(data).decode("ascii") if coded else data.decode("utf-8", "surrogatepass")


def redact_content(content: dict[str, Any], headers: Any, redactor: Redactor, kept: frozenset[str]) -> dict[str, Any]:
    """A recorded response's ``content`` object (HAR 1.2's ``{size, mimeType, text, encoding}``, which a
    ``wire.jsonl`` record's response may hold too): its ``text`` redacted as a body is
    (:func:`redact_content_text`: base64 and gzip decoded, gzip too when the response's ``headers``,
    an object or HAR's list, say ``Content-Encoding: gzip``), its members named in ``kept`` kept
    without their secrets, any other one content."""
    gzip = names_gzip(content_encoding(headers))
    return {k: redact_content_text(v, content.get("encoding"), redactor, gzip=gzip)
            if k == "text" and isinstance(v, str) else redactor.value(v, k, kept=k in kept) for k, v in content.items()}


#: The members of a ``wire.jsonl`` response's ``content`` object that say how its text is stored: kept.
_CONTENT_KEPT = frozenset({"size", "compression", "mimeType", "encoding"})


def _body_member(key: str, value: Any) -> bool:
    """Whether a member of a ``wire.jsonl`` response object holds its body: where the capture's usage
    reader finds it (:mod:`dsh_audit.cache._response_usage`), a HAR-style ``content`` object or a
    ``body`` or ``text`` string, or a ``body_base64`` string (a request record's name for a body stored
    as base64)."""
    return (key == "content" and isinstance(value, dict)) or (key in _BODY_KEYS and isinstance(value, str))


#: The members of a ``wire.jsonl`` response object that hold its body as a string (``body_base64``, the bytes as
#: sent, decoded, redacted and written back as base64 by :func:`redact_content_text`, gzip data as gzip data; the
#: others redacted as text).
_BODY_KEYS = frozenset({"body", "text", "body_base64"})


def redact_response(value: Any, redactor: Redactor, headers: Callable[[Any], Any] | None = None) -> Any:
    """The ``response`` field of a ``wire.jsonl`` record: a body text, or an object (a summary, or a
    recorded response). The body an object holds (:func:`_body_member`) is redacted as a body is, a
    HAR-style ``content`` as a HAR response's (:func:`redact_content`: written back in its encoding);
    its ``headers`` by ``headers`` (the capture's header rule, as a HAR response's: kept, auth headers
    and cookies dropped), when given; its other members as every value of a record."""
    if isinstance(value, str):
        return redact_response_text(value, redactor)
    if not isinstance(value, dict):
        return redactor.value(value, "response")
    headed = headers is not None and "headers" in value
    if not headed and not any(_body_member(k, v) for k, v in value.items()):
        return redactor.value(value, "response")
    out = redactor.value({k: None if _body_member(k, v) or (headed and k == "headers") else v
                          for k, v in value.items()}, "response")
    if headers is not None and headed:
        out["headers"] = headers(value["headers"])
    for key, body in value.items():
        if _body_member(key, body):
            out[key] = (redact_content_text(body, "base64", redactor, sent=True,
                                            gzip=names_gzip(content_encoding(value.get("headers"))))
                        if key == "body_base64" else redact_response_text(body, redactor) if isinstance(body, str)
                        else redact_content(body, value.get("headers"), redactor, _CONTENT_KEPT))
    return out
