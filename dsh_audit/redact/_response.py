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

A recorded body is decoded as every reader decodes it (:func:`dsh_audit._body_decode.decoded_body`:
base64, and every coding its ``Content-Encoding`` names, gzip and deflate, stacked or not; a body stored
decoded under its header kept as it is). One whose coding cannot be undone (``br``, ``zstd``, damaged
or cut-off data, binary bytes of no coding its header names) is replaced whole by one placeholder:
nothing of it survives, its secrets cannot be found in it, and its coding is listed for the summary
(review B 45). Only a body past the decode limits (a bomb) raises
:class:`~dsh_audit._body_decode.BodyDecodeError`, refused by the capture's writer (:mod:`._capture`).
"""

from __future__ import annotations

import base64
import json
import re
import struct
import zlib
from collections.abc import Callable
from typing import Any

from .._body_decode import (BodyDecodeError, UndecodableBody, content_encoding, decoded_stored, names_base64,
                            stored_bytes)
from ._json_text import JsonPath, json_string, reencode, rewrite_keys, string_tokens
from ._keys import STRUCTURAL_KEYS
from ._redactor import Redactor

__all__ = ["WIRE_KEYS", "below_content", "encoded", "gzip_bytes", "redact_content", "redact_content_text",
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


def encoded(data: bytes, codings: tuple[str, ...]) -> bytes:
    """``data`` with ``codings`` applied in order (``gzip``: :func:`gzip_bytes`; ``deflate``: zlib data, as
    HTTP names it), the same bytes on every run: a redacted body sent again as its ``Content-Encoding``
    says it was (:func:`dsh_audit._body_decode.decoded_body` names the codings it undid).

    Example:
        >>> from dsh_audit._body_decode import decoded_body
        >>> sent = base64.b64encode(encoded(b"[1]", ("gzip", "deflate"))).decode()
        >>> decoded_body(sent, encoding="base64", content_coding="gzip, deflate")
        (b'[1]', ('gzip', 'deflate'))
    """
    for coding in codings:
        data = gzip_bytes(data) if coding == "gzip" else zlib.compress(data, 9)
    return data


def redact_content_text(text: str, encoding: Any, redactor: Redactor, *, coding: Any = None,
                        sent: bool = False, undecoded: list[str] | None = None) -> str:
    """A HAR ``response.content.text`` redacted, decoded as every captured body is
    (:func:`dsh_audit._body_decode.decoded_body`: base64 when ``encoding`` names it in any case, and every
    coding the response's ``Content-Encoding`` value ``coding`` names, gzip and deflate, stacked or not, or
    gzip when base64 holds gzip data). The redacted text is written back base64-encoded when ``encoding``
    names base64, as text otherwise, and decoded: HAR 1.2 defines ``content.text`` as the body HTTP-decoded
    ("decompressed & unchunked") before it is set, then base64-encoded or not, its headers telling how it
    travelled, so a decoded text under ``Content-Encoding: deflate`` is true. With ``sent`` (a ``wire.jsonl``
    response's ``body_base64``: the bytes as they were sent), the codings undone are applied again
    (:func:`encoded`), so its kept ``Content-Encoding`` stays true (review 40). A body that decodes to no
    UTF-8 text has no structure to keep: it is one content string, of the text as stored; so is a text
    that holds no coded data (no base64 though ``encoding`` says so, a lone surrogate:
    :func:`~dsh_audit._body_decode.stored_bytes` refuses it), its secrets found in it as it is. The text
    is decoded once (its stored bytes, then their codings: :func:`~dsh_audit._body_decode.decoded_stored`).
    A body whose coding cannot be undone (:class:`~dsh_audit._body_decode.UndecodableBody`) is replaced
    whole (:func:`_replaced_whole`), its coding appended to ``undecoded``, for the summary to say.

    Raises:
        BodyDecodeError: the body is past the decode limits (a bomb).
    """
    coded = names_base64(encoding)
    try:  # decoded once: the stored bytes are those the codings are undone from
        stored = stored_bytes(text, encoding=encoding, field="content.text")
    except BodyDecodeError:  # no coded data, only itself: no base64 though marked so, or a lone surrogate
        return _as_content(text, coded, redactor)
    try:
        data, codings = decoded_stored(stored, encoding=encoding, content_coding=coding)
    except UndecodableBody as exc:
        if undecoded is not None:
            undecoded.append(exc.coding)
        return _replaced_whole(text, coded, redactor)
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return _as_content(text, coded, redactor)
    redacted = redact_response_text(decoded, redactor).encode("utf-8", "surrogatepass")
    if sent:  # coded data travels in a JSON string as base64 only
        return base64.b64encode(encoded(redacted, codings)).decode("ascii")
    return base64.b64encode(redacted).decode("ascii") if coded else redacted.decode("utf-8", "surrogatepass")


def _replaced_whole(text: str, coded: bool, redactor: Redactor) -> str:
    """A body redact cannot read, its ``text`` as stored, as one placeholder (base64-encoded when
    ``coded``): no part of it, no JSON layout, survives (its secrets cannot be looked for in it)."""
    placeholder = redactor.content(text)
    return base64.b64encode(placeholder.encode("utf-8", "surrogatepass")).decode("ascii") if coded else placeholder


def _as_content(text: str, coded: bool, redactor: Redactor) -> str:
    """A body's ``text`` as stored redacted as one response text, base64-encoded when ``coded``."""
    if not coded:
        return redact_response_text(text, redactor)
    return base64.b64encode(redactor.content(text).encode("utf-8", "surrogatepass")).decode("ascii")


def redact_content(content: dict[str, Any], headers: Any, redactor: Redactor, kept: frozenset[str], *,
                   undecoded: list[str] | None = None) -> dict[str, Any]:
    """A recorded response's ``content`` object (HAR 1.2's ``{size, mimeType, text, encoding}``, which a
    ``wire.jsonl`` record's response may hold too): its ``text`` redacted as a body is
    (:func:`redact_content_text`: base64 and every coding the response's ``headers``, an object or HAR's
    list, name in ``Content-Encoding`` undone), its members named in ``kept`` kept without their secrets,
    any other one content; ``undecoded``: as :func:`redact_content_text` takes it.

    Raises:
        BodyDecodeError: as :func:`redact_content_text`.
    """
    coding = content_encoding(headers)
    return {k: redact_content_text(v, content.get("encoding"), redactor, coding=coding, undecoded=undecoded)
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
#: sent, decoded, redacted and written back as base64 by :func:`redact_content_text`, coded again as they were
#: sent; the others redacted as text).
_BODY_KEYS = frozenset({"body", "text", "body_base64"})


def redact_response(value: Any, redactor: Redactor, headers: Callable[[Any], Any] | None = None, *,
                    undecoded: list[str] | None = None) -> Any:
    """The ``response`` field of a ``wire.jsonl`` record: a body text, or an object (a summary, or a
    recorded response). The body an object holds (:func:`_body_member`) is redacted as a body is, a
    HAR-style ``content`` as a HAR response's (:func:`redact_content`: written back in its encoding);
    its ``headers`` by ``headers`` (the capture's header rule, as a HAR response's: kept, auth headers
    and cookies dropped), when given; its other members as every value of a record. ``undecoded``: as
    :func:`redact_content_text` takes it."""
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
            out[key] = (redact_content_text(body, "base64", redactor, sent=True, undecoded=undecoded,
                                            coding=content_encoding(value.get("headers")))
                        if key == "body_base64" else redact_response_text(body, redactor) if isinstance(body, str)
                        else redact_content(body, value.get("headers"), redactor, _CONTENT_KEPT, undecoded=undecoded))
    return out
