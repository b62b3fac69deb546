"""Reading a compact JSON request body without parsing all of it: each ``key`` object
(:func:`key_objects`), the leading ``model`` (pi-ai writes it first), or the whole body as an object
(:func:`body_object`), each checked for room before orjson parses it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import orjson

from ..log import ensure_room

__all__ = ["body_object", "key_objects"]


#: A compact JSON body's leading ``"model"`` member (pi-ai writes it first), as a JSON string.
_LEADING_MODEL = re.compile(rb'\{"model":("[^"\\]*(?:\\.[^"\\]*)*")')


def _body_model(body: bytes) -> str | None:
    """The ``model`` of a body that starts with it (pi-ai's bodies do), without parsing the rest."""
    found = _LEADING_MODEL.match(body)
    if found is None:
        return None
    try:
        model = orjson.loads(found.group(1))
    except ValueError:
        return None
    return model if isinstance(model, str) else None


def key_objects(body: bytes, key: str) -> Iterator[tuple[bytes, dict[str, Any]]]:
    """Every ``key`` object of a compact JSON ``body``, as its text (from its ``{`` to the first
    ``}`` after it) and its value; ``b"{}"`` and ``{}`` for one that does not parse alone.

    Found by bytes, not by parsing the body: inside a JSON string a quote is escaped, so
    ``"key":{`` is a ``key`` member wherever it occurs; as :func:`dsh_audit.wire.without_cache_markers`
    drops every such member, every one counts, at any depth. Each search starts at the last
    one's end.

    A slice holds no ``}`` but its last, yet may be as long as the body (a member whose value
    runs on in strings and arrays): its size is checked before orjson parses it
    (:func:`dsh_audit.log.ensure_room`, as :func:`body_object` checks the body: orjson crashes
    when it runs out of memory under a limit; a ``MemoryError`` then says so in one line).

    Example:
        >>> [v for _, v in key_objects(b'{"a":{"cache_control":{"ttl":"1h"}},"cache_control":{"x":{}}}',
        ...                            "cache_control")]
        [{'ttl': '1h'}, {}]
    """
    opening = f'"{key}":{{'.encode()
    at = body.find(opening)
    while at >= 0:
        start = at + len(opening) - 1
        end = body.find(b"}", start)
        if end < 0:
            return
        text = body[start:end + 1]
        ensure_room(text)  # a memory limit that cannot hold its parse: MemoryError, never a crash
        try:
            value = orjson.loads(text)
        except ValueError:  # a nested object: no TTL field read
            text, value = b"{}", {}
        yield text, value
        at = body.find(opening, end)


def body_object(raw: bytes | None) -> dict[str, Any] | None:
    """The JSON object a request body holds; None for no body, a body that is not JSON or not an
    object. A rendered body is as long as the log's prompt: its size is checked first
    (:func:`dsh_audit.log.ensure_room`: orjson crashes when it runs out of memory under a limit).

    Example:
        >>> body_object(b'{"model": "m"}'), body_object(b"[1]"), body_object(b"{"), body_object(None)
        ({'model': 'm'}, None, None, None)
    """
    if raw is None:
        return None
    ensure_room(raw)
    try:
        value = orjson.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
