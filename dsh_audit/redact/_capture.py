"""Redacting a ``wire.jsonl`` capture consistently with its redacted log.

A captured body is rewritten in place, string token by string token, so its layout, key order
and escaping stay what they were and a ``diff`` verdict (identical, equivalent, different, and
the first differing offset) is the same on the redacted pair as on the original pair. A string
at a JSON path where the body rendered from the original log holds the same string takes the
string the redacted log renders there: texts DSH joined into one wire string (several text
blocks of one message) stay consistent that way. Any other string (a capture that differs from
the log, a request no log explains) is redacted on its own, as the log's strings are.
Authorization-like headers are dropped.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from typing import Any

from ..capture import align
from ..errors import CaptureError, DshAuditError
from ..jsjson import stringify
from ..log import parse_json
from ..session import Session
from ._redactor import STRUCTURAL_KEYS, Redactor

__all__ = ["redact_capture_lines", "string_tokens"]

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+|\s+', re.S)
_DROPPED_HEADER = re.compile(r"(?i)auth|cookie|api[-_]?key|token|secret|signature|password")
_KEPT_FIELDS = frozenset({"seq", "time", "method", "path", "kind", "auth_present", "status", "url"})

Path_ = tuple[Any, ...]


def string_tokens(text: str) -> Iterator[tuple[int, int, str, Path_]]:
    """``(start, end, token, path)`` of every string *value* token of JSON ``text``."""
    stack: list[list[Any]] = []  # [is_object, key_or_index, expecting_key]
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        head = token[0]
        if head == '"':
            if stack and stack[-1][0] and stack[-1][2]:
                stack[-1][1] = json.loads(token)
                stack[-1][2] = False
            else:
                yield match.start(), match.end(), token, tuple(frame[1] for frame in stack)
        elif head in "{[":
            stack.append([head == "{", None if head == "{" else 0, head == "{"])
        elif head in "}]":
            if stack:
                stack.pop()
        elif head == ",":
            if stack:
                if stack[-1][0]:
                    stack[-1][2] = True
                else:
                    stack[-1][1] += 1


def _strings(body: bytes | None) -> dict[Path_, str]:
    if body is None:
        return {}
    text = body.decode("utf-8", "surrogatepass")
    return {path: json.loads(token) for _, _, token, path in string_tokens(text)}


def _diverging(value: str, before: str, after: str, redactor: Redactor) -> str:
    """A string that differs from the rendered ``before``: the redacted render ``after`` up to where
    they first differ, then the value's own placeholder, so the first difference stays where it was."""
    k = next((i for i, (a, b) in enumerate(zip(value, before)) if a != b), min(len(value), len(before)))
    own = redactor.content(value)
    if k >= len(own) or len(after) != len(before):
        return own
    return after[:k] + redactor.placeholders.other_than(own[k], after[k] if k < len(after) else "") + own[k + 1:]


def _encode(token: str, value: str, new: str) -> str:
    return stringify(new) if stringify(value) == token else json.dumps(new)


def redact_body(body: bytes, redactor: Redactor, original: dict[Path_, str], redacted: dict[Path_, str]) -> bytes:
    """One captured body, string values replaced in place."""
    try:
        text = body.decode("utf-8")
        parse_json(body)
    except (ValueError, UnicodeDecodeError):
        return redactor.content(body.decode("utf-8", "replace")).encode("utf-8", "surrogatepass")
    moved = {value: redacted[p] for p, value in original.items() if p in redacted}
    out: list[str] = []
    last = 0
    for start, end, token, path in string_tokens(text):
        value = json.loads(token)
        if path in redacted and original.get(path) == value:
            new = redacted[path]
        elif value in moved:  # a string the render has elsewhere (reordered tools or messages)
            new = moved[value]
        elif path in redacted and isinstance(original.get(path), str):
            new = _diverging(value, original[path], redacted[path], redactor)
        elif value in redactor.kept or (path and path[-1] in STRUCTURAL_KEYS):
            new = redactor.keep_text(value)
        else:
            new = redactor.content(value)
        out.append(text[last:start])
        out.append(_encode(token, value, new))
        last = end
    out.append(text[last:])
    return "".join(out).encode("utf-8", "surrogatepass")


def _render(session: Session, index: int, instruction: str | None) -> bytes | None:
    request = session.requests[index]
    adapter = session.route(request).adapter
    if adapter is None:
        return None
    options = {"compaction_instruction": instruction} if request.kind == "compaction" and instruction else {}
    if request.kind == "compaction" and not options:
        return None
    try:
        return session.bodies.render(request, adapter, **options)
    except DshAuditError:
        return None


def _instruction(body: bytes) -> str | None:
    from ..capture import last_user_text

    try:
        return last_user_text(parse_json(body))
    except (ValueError, UnicodeDecodeError):
        return None


def _headers(headers: Any, redactor: Redactor, dropped: list[str], size: int) -> Any:
    if not isinstance(headers, dict):
        return redactor.value(headers)
    kept = {}
    for name, value in headers.items():
        if _DROPPED_HEADER.search(str(name)) and not str(name).lower().endswith("-session-id"):
            dropped.append(str(name).lower())
            continue
        if str(name).lower() == "content-length":
            kept[name] = str(size) if isinstance(value, str) else size
        else:
            kept[name] = redactor.keep_text(value) if isinstance(value, str) else value
    return kept


def redact_capture_lines(lines: list[bytes], captures: list[Any], original: Session, redacted: Session,
                         redactor: Redactor, *, path: str) -> tuple[list[bytes], list[str]]:
    """Every record of a ``wire.jsonl`` capture redacted; returns the lines and the dropped header names.

    ``captures`` are the loaded captured requests in file order (one per non-blank line).
    """
    by_position: dict[int, int] = {}
    for pairing in align(original.requests, captures):
        if pairing.request is not None and pairing.capture is not None:
            by_position[pairing.capture.position] = original.requests.index(pairing.request)
    records = [line for line in lines if line.strip()]
    if len(records) != len(captures):
        raise CaptureError("the capture changed while it was read", path=path)
    out: list[bytes] = []
    dropped: list[str] = []
    for position, line in enumerate(records):
        record = parse_json(line)
        body = captures[position].body
        index = by_position.get(position)
        before = after = None
        if index is not None:
            instruction = _instruction(body)
            before = _render(original, index, instruction)
            after = _render(redacted, index, redactor.content(instruction) if instruction else None)
        if before is not None and before == body and after is not None:
            new_body = after
        else:
            new_body = redact_body(body, redactor, _strings(before), _strings(after))
        out.append(stringify(_record(record, new_body, redactor, dropped)).encode("utf-8", "surrogatepass") + b"\n")
    return out, sorted(set(dropped))


def _record(record: dict[str, Any], body: bytes, redactor: Redactor, dropped: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in record.items():
        if key == "body":
            result[key] = body.decode("utf-8", "surrogatepass")
        elif key == "body_base64":
            import base64

            result[key] = base64.b64encode(body).decode("ascii")
        elif key == "body_sha256":
            result[key] = hashlib.sha256(body).hexdigest()
        elif key == "body_bytes":
            result[key] = len(body)
        elif key == "headers":
            result[key] = _headers(value, redactor, dropped, len(body))
        elif key in _KEPT_FIELDS:
            result[key] = redactor.value(value, key, kept=True)
        else:
            result[key] = redactor.value(value, key)
    return result

