"""Redacting a ``wire.jsonl``, HAR or body-folder capture consistently with its redacted log.

A captured body is rewritten in place, string token by string token, so its layout, key order
and escaping stay what they were and a ``diff`` verdict (identical, equivalent, different, and
the first differing offset) is the same on the redacted pair as on the original pair. A string
at a JSON path where the body rendered from the original log holds the same string takes the
string the redacted log renders there: texts DSH joined into one wire string (several text
blocks of one message) stay consistent that way. Any other string (a capture that differs from
the log, a request no log explains) is redacted on its own, as the log's strings are.
Authorization-like headers (and HAR cookies) are dropped, from a body folder's ``*.meta.json``
sidecars too, and count as secrets by their names (:func:`._secrets.header_kind`: an
``Authorization``, ``Cookie``, ``Set-Cookie`` or ``x-api-key`` value is one whatever its shape; a
cookie when its name says session or credential); a HAR ``queryString`` or ``postData.params`` item
and a URL's query parameter whose name says credential (``api_key``, ``key``, ``token``, ``auth``...)
have their values replaced and counted the same way; responses go through :mod:`._response`.
The gateway's address (the ``host`` and ``x-forwarded-host`` headers, the host and port of a URL, a HAR
entry's ``serverIPAddress``; HTTP/2's ``:authority`` goes with the auth headers) is identifying: it
becomes a placeholder of the same length, the same one wherever it stands, in the bundle's route file
too; only a public vendor API's exact host stays (:mod:`._hosts`). Other headers stay (the SDK's
``x-stainless-*`` OS, runtime and version headers, ``user-agent``, ``content-type``): no verdict reads
them but DSH's session and compaction headers, which stay verbatim.
String tokens are rewritten with :func:`._json_text.reencode`, which keeps each character's
escape form, so every length stays.

Secrets are counted where they are redacted: a string the capture holds as the rendered log does
is the log's, counted there, not again; every other string (read with its object key, as the
log's are), a response, and a dropped header's or cookie's value count in the summary too.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._seq import common_length
from ..capture import CapturedRequest, align, last_user_text
from ..errors import CaptureError, DshAuditError
from ..log import parse_json
from ..report import dumps_line
from ..session import Session, route_apis
from ..wire import images_in_body
from ._json_text import JsonPath, json_string, reencode, rewrite_keys, string_tokens
from ._redactor import TOOL_NAME_KEYS, Redactor
from ._response import WIRE_KEYS, below_content, redact_content_text, redact_response, wire_structural
from ._hosts import HOST_HEADERS, host_value, redact_ascii, redact_host, redact_url
from ._secrets import cookie_secret, credential_name, header_kind

__all__ = ["HOST_HEADERS", "META_SUFFIX", "LogRedactor", "redact_ascii", "redact_body", "redact_body_folder",
           "redact_capture_lines", "redact_har", "redact_host", "redact_url", "redacted_bodies", "stand_in_images"]
# HOST_HEADERS, redact_ascii, redact_host and redact_url live in ._hosts; named here too, where they were

#: The name ending of a body folder's sidecar (``<stem>.meta.json`` beside ``<stem>.json``).
META_SUFFIX = ".meta.json"

_DROPPED_HEADER = re.compile(r"(?i)auth|cookie|api[-_]?key|token|secret|signature|password")
_SESSION_HEADER = "-session-id"  # ``x-deepseek-harness-session-id`` and the like: kept, no secret
_KEPT_FIELDS = frozenset({"seq", "time", "method", "path", "kind", "auth_present", "status", "url"})
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
                images: dict[str, str] | None = None) -> bytes:
    """One captured body, string values replaced in place; ``images``: the stand-in base64 of each
    image's base64 (:func:`stand_in_images`)."""
    try:
        text = body.decode("utf-8")
        parse_json(body)
    except (ValueError, UnicodeDecodeError):
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


def _render(session: Session, index: int, instruction: str | None, images: dict[str, bytes]) -> bytes | None:
    """The body ``session`` renders for its request ``index`` (None when it cannot), as ``diff`` renders
    it: a compaction with the captured ``instruction``, images with the captured ``images``."""
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
    try:
        return session.bodies.render(request, adapter, **options)
    except DshAuditError:
        return None


def _instruction(body: bytes) -> str | None:
    try:
        return last_user_text(parse_json(body))
    except (ValueError, UnicodeDecodeError):
        return None


def _dropped(name: str) -> bool:
    """Whether a header named ``name`` is dropped: an auth, cookie, API key or token header."""
    return ((_DROPPED_HEADER.search(name) is not None or header_kind(name) is not None)
            and not name.lower().endswith(_SESSION_HEADER))


def _drop(name: str, value: Any, redactor: Redactor, dropped: list[str]) -> None:
    """A dropped header: its name noted, its value counted as a secret by its name (its secrets when
    it holds some: :meth:`Redactor.named`)."""
    dropped.append(name.lower())
    if isinstance(value, str):
        kind = header_kind(name)
        if kind is None:
            redactor.count(value, name)
        else:
            redactor.named(value, name, kind)


def _headers(headers: Any, redactor: Redactor, dropped: list[str], size: int) -> Any:
    if not isinstance(headers, dict):
        return redactor.value(headers)
    kept = {}
    lengths = {}
    for name, value in headers.items():
        if _dropped(str(name)):
            _drop(str(name), value, redactor, dropped)
            continue
        if str(name).lower() == "content-length":
            lengths[name] = str(size) if isinstance(value, str) else size
        elif (host := host_value(str(name), value, redactor)) is not None:
            lengths[name] = host
        kept[name] = None if name in lengths else value
    # a kept part: values kept without their secrets, a secret in a header name replaced as in every key
    return {name: lengths.get(name, value) for name, value in redactor.value(kept, kept=True).items()}


def redacted_bodies(captures: list[CapturedRequest], original: Session, redacted: Session,
                    redactor: Redactor) -> list[bytes]:
    """The redacted body of each captured request, in capture order."""
    by_position: dict[int, int] = {}
    for pairing in align(original.requests, captures, routes=route_apis([original])):  # as diff pairs them
        if pairing.request is not None and pairing.capture is not None:
            by_position[pairing.capture.position] = original.requests.index(pairing.request)
    bodies: list[bytes] = []
    for position, capture in enumerate(captures):
        body = capture.body
        index = by_position.get(position)
        images, given, stand_ins = _images(body, redactor)
        before = after = None
        if index is not None:
            # only a compaction body is rendered with the instruction it holds (not the log: DSH's),
            # redacted and counted once here; another request's last user text is the log's, counted there
            instruction = _instruction(body) if original.requests[index].kind == "compaction" else None
            before = _render(original, index, instruction, given)
            after = _render(redacted, index, redactor.content(instruction) if instruction else None, stand_ins)
        if before is not None and before == body and after is not None:
            bodies.append(after)
        else:
            bodies.append(redact_body(body, redactor, _strings(before), _strings(after), images))
    return bodies


def _images(body: bytes, redactor: Redactor) -> tuple[dict[str, str], dict[str, bytes], dict[str, bytes]]:
    """:func:`stand_in_images` of a captured body (none when it holds no base64 data or is no JSON)."""
    if b"base64" not in body:
        return {}, {}, {}
    try:
        document = parse_json(body)
    except (ValueError, UnicodeDecodeError):
        return {}, {}, {}
    return stand_in_images(document, redactor)


def redact_capture_lines(lines: list[bytes], captures: list[CapturedRequest], original: Session, redacted: Session,
                         redactor: Redactor, *, path: str) -> tuple[list[bytes], list[str]]:
    """Every record of a ``wire.jsonl`` capture redacted; returns the lines and the dropped header names.

    ``captures`` are the loaded captured requests in file order (one per non-blank line).
    """
    records = [line for line in lines if line.strip()]
    if len(records) != len(captures):
        raise CaptureError("the capture changed while it was read", path=path)
    bodies = redacted_bodies(captures, original, redacted, redactor)
    out: list[bytes] = []
    dropped: list[str] = []
    for line, body in zip(records, bodies):
        record = _record(parse_json(line), body, redactor, dropped)
        out.append(dumps_line(record).encode("utf-8") + b"\n")  # a body's C1 or bidi character escaped, as in the log
    return out, sorted(set(dropped))


def _record(record: dict[str, Any], body: bytes, redactor: Redactor, dropped: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in record.items():
        if key == "body":
            result[key] = body.decode("utf-8", "surrogatepass")
        elif key == "body_base64":
            result[key] = base64.b64encode(body).decode("ascii")
        elif key == "body_sha256":
            result[key] = hashlib.sha256(body).hexdigest()
        elif key == "body_bytes":
            result[key] = len(body)
        elif key == "headers":
            result[key] = _headers(value, redactor, dropped, len(body))
        elif key == "response":
            result[key] = redact_response(value, redactor)
        elif key in ("url", "path") and isinstance(value, str):
            result[key] = redact_url(value, redactor)
        elif key in _KEPT_FIELDS:
            result[key] = redactor.value(value, key, kept=True)
        else:
            result[key] = redactor.value(value, key)
    return result


# -- a folder of bodies ---------------------------------------------------------------------------


def redact_body_folder(captures: list[CapturedRequest], original: Session, redacted: Session,
                       redactor: Redactor) -> tuple[dict[str, bytes], list[str]]:
    """Every body of a body-folder capture redacted (:func:`redacted_bodies`), and each body's
    ``*.meta.json`` sidecar with auth-like headers dropped and ``content-length`` recomputed.

    Returns the files to write by name (the input's names) and the dropped header names.

    Raises:
        CaptureError: a sidecar can no longer be read, or is no longer a JSON object.
    """
    bodies = redacted_bodies(captures, original, redacted, redactor)
    files: dict[str, bytes] = {}
    dropped: list[str] = []
    for capture, body in zip(captures, bodies):
        source = Path(capture.source)
        files[source.name] = body
        meta = source.with_name(source.stem + META_SUFFIX)
        if not meta.exists():
            continue
        try:
            record = parse_json(meta.read_bytes())
        except OSError as exc:
            raise CaptureError(f"cannot read: {exc.strerror or exc}", path=str(meta)) from None
        except (ValueError, UnicodeDecodeError):
            record = None
        if not isinstance(record, dict):
            raise CaptureError("the capture changed while it was read", path=str(meta))
        sidecar = _record(record, body, redactor, dropped)
        files[meta.name] = dumps_line(sidecar).encode("utf-8") + b"\n"
    return files, sorted(set(dropped))


# -- HAR 1.2 -------------------------------------------------------------------------------------

_HAR_KEPT = frozenset({"startedDateTime", "time", "timings", "serverIPAddress", "connection", "pageref", "method",
                       "httpVersion", "headersSize", "bodySize", "status", "statusText", "mimeType", "encoding",
                       "size", "compression", "version", "creator", "browser", "cache"})
_HAR_URLS = frozenset({"url", "redirectURL"})


def _har_headers(headers: Any, redactor: Redactor, dropped: list[str], size: int | None) -> Any:
    if not isinstance(headers, list):
        return redactor.value(headers)
    kept = []
    for header in headers:
        if not isinstance(header, dict):
            kept.append(redactor.value(header))
            continue
        name = str(header.get("name", ""))
        if _dropped(name):
            _drop(name, header.get("value"), redactor, dropped)
            continue
        fixed = size is not None and name.lower() == "content-length"
        value = header.get("value")
        host = None if fixed else host_value(name, value, redactor)
        entry = redactor.value({**header, "name": name, "value": None if fixed or host is not None else value},
                               kept=True)
        if fixed:
            entry["value"] = str(size)
        elif host is not None:
            entry["value"] = host
        kept.append(entry)
    return kept


def _named_items(items: Any, redactor: Redactor, *, kept: bool) -> Any:
    """A HAR ``queryString`` (``kept``) or ``postData.params`` list: each ``{"name", "value"}`` item whose
    name says credential (``api_key``, ``key``, ``token``, ``access_token``, ``password``, ``auth``...:
    :func:`._secrets.credential_name`) has its value replaced whole and counted as a ``url_parameter``
    secret, whatever its shape; the other items are kept without their secrets (``kept``) or content."""
    if not isinstance(items, list):
        return redactor.value(items, kept=kept)
    out = []
    for item in items:
        name = item.get("name") if isinstance(item, dict) else None
        value = item.get("value") if isinstance(item, dict) else None
        if not isinstance(name, str) or not isinstance(value, str) or not credential_name(name):
            out.append(redactor.value(item, kept=kept and isinstance(item, dict)))
            continue
        out.append({k: redactor.replace_named(v, name, "url_parameter") if k == "value"
                    else redactor.value(v, k, kept=kept)
                    for k, v in item.items()})
    return out


def _har_part(part: dict[str, Any], redactor: Redactor, dropped: list[str], body: bytes | None) -> dict[str, Any]:
    """A HAR request (``body`` is its redacted body) or response (``body`` None)."""
    out: dict[str, Any] = {}
    for key, value in part.items():
        if key == "headers":
            out[key] = _har_headers(value, redactor, dropped, None if body is None else len(body))
        elif key == "cookies":
            if value:
                dropped.append("cookies")
            for cookie in value if isinstance(value, list) else ():
                if isinstance(cookie, dict) and isinstance(cookie.get("value"), str):
                    name = str(cookie.get("name", ""))
                    if cookie_secret(name):  # they go; a session cookie counts by its name, others their secrets
                        redactor.named(cookie["value"], name, "cookie")
                    else:
                        redactor.count(cookie["value"], name)
            out[key] = []
        elif key == "postData" and isinstance(value, dict) and body is not None:
            encoded = (base64.b64encode(body).decode("ascii") if value.get("encoding") == "base64"
                       else body.decode("utf-8", "surrogatepass"))
            out[key] = {k: encoded if k == "text" else _named_items(v, redactor, kept=False) if k == "params"
                        else redactor.value(v, k, kept=k in _HAR_KEPT) for k, v in value.items()}
        elif key == "content" and isinstance(value, dict):
            out[key] = {k: redact_content_text(v, value.get("encoding"), redactor) if k == "text" and isinstance(v, str)
                        else redactor.value(v, k, kept=k in _HAR_KEPT) for k, v in value.items()}
        elif key == "queryString" and isinstance(value, list):
            out[key] = _named_items(value, redactor, kept=True)
        elif key == "bodySize" and body is not None and isinstance(value, int) and value >= 0:
            out[key] = len(body)
        elif key in _HAR_URLS and isinstance(value, str):
            out[key] = redact_url(value, redactor)
        else:
            out[key] = redactor.value(value, key, kept=key in _HAR_KEPT)
    return out


def redact_har(document: Any, captures: list[CapturedRequest], original: Session, redacted: Session,
               redactor: Redactor, *, path: str) -> tuple[bytes, list[str]]:
    """A HAR 1.2 capture redacted: request bodies as :func:`redacted_bodies` makes them, auth headers and
    cookies dropped, response bodies (streamed or not) redacted; returns the file and dropped header names."""
    entries = document["log"]["entries"]
    if len(entries) != len(captures):
        raise CaptureError("the capture changed while it was read", path=path)
    bodies = redacted_bodies(captures, original, redacted, redactor)
    dropped: list[str] = []
    out_entries = []
    for entry, body in zip(entries, bodies):
        out_entry: dict[str, Any] = {}
        for key, value in entry.items():
            if key in ("request", "response") and isinstance(value, dict):
                out_entry[key] = _har_part(value, redactor, dropped, body if key == "request" else None)
            elif key == "serverIPAddress" and isinstance(value, str):
                out_entry[key] = redact_host(value, redactor)
            else:
                out_entry[key] = redactor.value(value, key, kept=key in _HAR_KEPT)
        out_entries.append(out_entry)
    log = {k: out_entries if k == "entries" else redactor.value(v, k, kept=k in _HAR_KEPT)
           for k, v in document["log"].items()}
    result = {k: log if k == "log" else redactor.value(v, k) for k, v in document.items()}
    return dumps_line(result).encode("utf-8") + b"\n", sorted(set(dropped))
