"""Redacting captured request bodies consistently with the redacted log (:mod:`._capture` rewrites the
records, sidecars and HAR entries around them).

A captured body is rewritten in place, string token by string token, so its layout, key order
and escaping stay what they were and a ``diff`` verdict (identical, equivalent, different, and
the first differing offset) is the same on the redacted pair as on the original pair. A string
at a JSON path where the body rendered from the original log holds the same string takes the
string the redacted log renders there: texts DSH joined into one wire string (several text
blocks of one message) stay consistent that way. Any other string (a capture that differs from
the log, a request no log explains) is redacted on its own, as the log's strings are. A body the
original log renders byte for byte is the redacted log's render. Images become the stand-ins the
redacted log names (:func:`stand_in_images`). String tokens are rewritten with
:func:`._json_text.reencode`, which keeps each character's escape form, so every length stays.

A string the capture holds as the rendered log does is the log's, counted there, not again; every
other string is counted (read with its object key, as the log's are).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from .._seq import common_length
from ..capture import CapturedRequest, align, last_user_text
from ..errors import DshAuditError
from ..log import parse_json
from ..session import Session, route_apis
from ..wire import images_in_body, key_type_of
from ._json_text import JsonPath, json_string, reencode, rewrite_keys, string_tokens
from ._keys import TOOL_NAME_KEYS
from ._redactor import Redactor
from ._response import WIRE_KEYS, below_content, wire_structural

__all__ = ["LogRedactor", "redact_body", "redacted_bodies", "stand_in_images"]

#: The longest text :class:`LogRedactor` remembers replacing: a text kept elsewhere is a structural
#: value (a mode, a status, an enum-like setting), short; a longer one is kept only in a ``--keep`` part.
_REMEMBERED = 64


@dataclass
class LogRedactor(Redactor):
    """A :class:`Redactor` that remembers the short texts the log replaced by their placeholders
    (:meth:`content`), while ``reading_log``: a captured string that the log both kept (a structural
    value, ``"mode": "workspace-write"``) and replaced (the same text as content, a tool schema's
    ``"enum": ["workspace-write"]``) is redacted by where it stands (:func:`_kept`), as the log
    redacted it there, not kept because it was kept elsewhere.

    Attributes:
        replaced: the texts of at most :data:`_REMEMBERED` characters the log replaced.
        reading_log: whether the log is being read (the capture's strings are not remembered).
    """

    replaced: set[str] = field(default_factory=set)
    reading_log: bool = True

    def content(self, text: str, key: str | None = None) -> str:
        new = super().content(text, key)
        if self.reading_log and new != text and len(text) <= _REMEMBERED:
            self.replaced.add(text)
        return new


def _strings(body: bytes | None) -> dict[JsonPath, str]:
    if body is None:
        return {}
    text = body.decode("utf-8", "surrogatepass")
    return {path: json_string(token) for _, _, token, path in string_tokens(text)}


def _member(path: JsonPath) -> str | None:
    """The object key a string at ``path`` is the value of (None for a list item or the top)."""
    return path[-1] if path and isinstance(path[-1], str) else None


def _structural(path: JsonPath, redactor: Redactor) -> bool:
    """Whether a string at ``path`` of a body is kept as the log's structural strings are (a model, a
    role, a type, an id; a tool name unless those go too): it stays itself, whatever the render holds
    there, so a body that differs from the render in one (another model) differs where it did. Only a
    key the wire formats use for no content counts, outside a tool's free-form input
    (:func:`._response.wire_structural`): ``"kind"``, ``"source"`` or ``"mode"`` in a tool call's
    ``input`` is the model's content."""
    key = _member(path)
    return wire_structural(path) and (redactor.tool_names or key not in TOOL_NAME_KEYS)


#: The top-level members of a wire body that hold a part ``--keep`` can keep: the tools, the system
#: prompt (Anthropic's ``system``, Google's ``systemInstruction``, OpenAI Responses' ``instructions``).
_KEPT_PARTS = {"tools": "tools", "system": "system", "systemInstruction": "system", "instructions": "system"}


def _kept(value: str, path: JsonPath, redactor: Redactor) -> bool:
    """Whether a string of a body that the render does not hold at its path stays itself: a structural
    value (:func:`_structural`), or a text the log kept, unless the log also replaced that very text
    (:attr:`LogRedactor.replaced`). Such a text is kept only where the log keeps it: under a structural
    key (a list item under its list's key, as the log reads one) or in a part kept with ``--keep``. So
    a body that cannot be rendered (a hand-declared pi-ai route without ``--routes``) is redacted as
    the log renders: a tool schema's ``"enum": ["workspace-write"]`` gets the placeholder the log's
    tool schema got, though ``"mode": "workspace-write"`` stayed."""
    if _structural(path, redactor):
        return True
    if value not in redactor.kept:
        return False
    if not isinstance(redactor, LogRedactor) or value not in redactor.replaced:
        return True
    key = next((step for step in reversed(path) if isinstance(step, str)), None)
    part = _KEPT_PARTS.get(path[0]) if path and isinstance(path[0], str) else None
    return ((key in WIRE_KEYS and not below_content(path) and (redactor.tool_names or key not in TOOL_NAME_KEYS))
            or (part is not None and part in redactor.keep))


def _diverging(value: str, before: str, after: str, redactor: Redactor, key: str | None) -> str:
    """A string that differs from the rendered ``before``: the redacted render ``after`` up to where
    they first differ, then the value's own placeholder, so the first difference stays where it was."""
    k = common_length(value, before)
    own = redactor.content(value, key)
    if k >= len(own) or len(after) != len(before):
        return own
    return after[:k] + redactor.placeholders.other_than(own[k], after[k] if k < len(after) else "") + own[k + 1:]


def stand_in_images(document: Any, redactor: Redactor) -> tuple[dict[str, str], dict[str, bytes], dict[str, bytes]]:
    """The images a parsed captured body carries (:func:`dsh_audit.wire.images_in_body`, every wire
    shape it knows), each replaced by the stand-in of its bytes (:meth:`Placeholders.image`, named as
    the redacted log names it: :meth:`Redactor.attachment`): the stand-in's base64 for each image's
    base64, and the bytes of the original and of the stand-in images by attachment name, to render
    the original and the redacted log with."""
    strings: dict[str, str] = {}
    before = images_in_body(document)
    after: dict[str, bytes] = {}
    for name, data in before.items():
        renamed = redactor.placeholders.image_id(name, len(data))
        if renamed is None:  # larger than any image DSH sends: no stand-in (its base64 goes as content)
            continue
        stand_in = redactor.placeholders.image(name, len(data))
        strings[base64.b64encode(data).decode("ascii")] = base64.b64encode(stand_in).decode("ascii")
        after[renamed] = stand_in
    return strings, before, after


def _image_string(value: str, images: dict[str, str]) -> str | None:
    """``value`` with the image base64 it is (or ends a ``data:`` URL with) replaced by its stand-in's
    (``images``: :func:`stand_in_images`); None when it holds none."""
    if value in images:
        return images[value]
    head, found, data = value.rpartition(";base64,")
    if found and head.startswith("data:") and data in images:
        return head + found + images[data]
    return None


def redact_body(body: bytes, redactor: Redactor, original: dict[JsonPath, str], redacted: dict[JsonPath, str],
                images: dict[str, str] | None = None, *, is_json: bool | None = None) -> bytes:
    """One captured body, string values replaced in place; ``images``: the stand-in base64 of each
    image's base64 (:func:`stand_in_images`); ``is_json``: whether the body is JSON, when the caller
    parsed it already (None: it is parsed here)."""
    try:
        text: str | None = body.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and is_json is None:
        is_json = _read(body) is not _NOT_JSON
    if text is None or not is_json:
        return redactor.content(body.decode("utf-8", "replace")).encode("utf-8", "surrogatepass")
    replaced = "".join(_pieces(text, redactor, original, redacted, images))
    del text  # a large body is held as few times at once as it can be
    return rewrite_keys(replaced, redactor.keys).encode("utf-8", "surrogatepass")


def _pieces(text: str, redactor: Redactor, original: dict[JsonPath, str], redacted: dict[JsonPath, str],
            images: dict[str, str] | None) -> Iterator[str]:
    """The pieces of :func:`redact_body`'s ``text`` with its string values replaced, in order (a
    generator: the strings of the last one are let go before the pieces are joined)."""
    moved = {value: redacted[p] for p, value in original.items() if p in redacted}
    last = 0
    for start, end, token, path in string_tokens(text):
        value = json_string(token)
        image = _image_string(value, images) if images else None
        if image is not None:  # image bytes: their stand-in's, as the redacted log names it
            new = image
        elif path in redacted and original.get(path) == value:
            new = redacted[path]
        elif _kept(value, path, redactor):  # kept where the render differs too
            new = redactor.keep_text(value, _member(path))
        elif value in moved:  # a string the render has elsewhere (reordered tools or messages)
            new = moved[value]
        elif path in redacted and isinstance(original.get(path), str):
            new = _diverging(value, original[path], redacted[path], redactor, _member(path))
        else:
            new = redactor.content(value, _member(path))
        yield text[last:start]
        yield reencode(token, new)
        last = end
    yield text[last:]


def _render(session: Session, index: int, instruction: str | None, images: dict[str, bytes],
            key_type: str) -> bytes | None:
    """The body ``session`` renders for its request ``index`` (None when it cannot), as ``diff`` renders
    it: a compaction with the captured ``instruction``, images with the captured ``images``, an
    Anthropic request for the captured body's ``key_type`` (an OAuth token's Claude Code identity)."""
    request = session.requests[index]
    adapter = session.route(request).adapter
    if adapter is None:
        return None
    options: dict[str, Any] = {}
    if request.kind == "compaction" and instruction:
        options["compaction_instruction"] = instruction
    if request.kind == "compaction" and not options:
        return None
    if images:
        options["images"] = images
    if adapter == "anthropic":
        options["key_type"] = key_type
    try:
        return session.bodies.render(request, adapter, **options)
    except DshAuditError:
        return None


#: What :func:`_read` returns for a captured body that is no JSON, and a body not read yet.
_NOT_JSON: Any = object()
_UNREAD: Any = object()


def _read(body: bytes) -> Any:
    """A captured body's JSON value (:data:`_NOT_JSON` when it is none)."""
    try:
        return parse_json(body)
    except (ValueError, UnicodeDecodeError):
        return _NOT_JSON


def redacted_bodies(captures: Sequence[CapturedRequest], original: Session, redacted: Session,
                    redactor: Redactor) -> Iterator[bytes]:
    """The redacted body of each captured request, in capture order, one at a time (a generator: a
    caller writes each before the next is made). Each body is parsed once at most (:func:`_redacted_body`)."""
    by_position: dict[int, int] = {}
    index_of = {id(request): index for index, request in enumerate(original.requests)}  # no scan a pairing
    for pairing in align(original.requests, captures, routes=route_apis([original])):  # as diff pairs them
        if pairing.request is not None and pairing.capture is not None:
            by_position[pairing.capture.position] = index_of[id(pairing.request)]
    for position, capture in enumerate(captures):
        yield _redacted_body(capture, by_position.get(position), original, redacted, redactor)


def _redacted_body(capture: CapturedRequest, index: int | None, original: Session, redacted: Session,
                   redactor: Redactor) -> bytes:
    """One captured body redacted: the redacted log's render of request ``index`` (None: no request)
    where the original's render is the body, else the body rewritten in place (:func:`redact_body`).

    The body is parsed once at most: for its images (when it holds base64 data) and a compaction's
    instruction, whether it is JSON then coming from that read; a body that needs neither is parsed
    only when it is not the render (by :func:`redact_body`), and not at all when it is."""
    body = capture.body
    compaction = index is not None and original.requests[index].kind == "compaction"
    document = _read(body) if compaction or b"base64" in body else _UNREAD
    is_json = None if document is _UNREAD else document is not _NOT_JSON
    images, given, stand_ins = stand_in_images(document, redactor) if is_json and b"base64" in body else ({}, {}, {})
    # only a compaction body is rendered with the instruction it holds (not the log: DSH's),
    # redacted and counted once here; another request's last user text is the log's, counted there
    instruction = last_user_text(document) if is_json and compaction else None
    del document  # the body's value let go before it is rendered and rewritten
    before = after = None
    if index is not None:
        key_type = key_type_of(body, capture.headers)  # as diff reads it: the body, and its anthropic-beta
        before = _render(original, index, instruction, given, key_type)
        after = _render(redacted, index, redactor.content(instruction) if instruction else None, stand_ins, key_type)
    if before is not None and before == body and after is not None:
        return after
    return redact_body(body, redactor, _strings(before), _strings(after), images, is_json=is_json)
