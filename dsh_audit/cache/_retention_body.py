"""The bytes a cache rule reads a request's retention from (:func:`retention_body`): a rendered
body with its long strings blanked (:func:`blank_long`) and each message standing as its
``cache_control`` members, made from each message once.
"""

from __future__ import annotations

from typing import Any

import orjson

from .._json import rebuild_json
from ..jsjson import stringify_bytes
from ._prompt import _same_start
from ._body_json import key_objects

__all__ = ["LONG", "blank_long", "retention_body"]


LONG = 1 << 16  # characters of a string keyed by identity in a body value, not by its content


def _long_strings(value: Any, out: list[str]) -> None:
    """Append each string of ``value`` of :data:`LONG` characters or more, in writing order
    (walked with a stack: a value nested as deep as the log reader allows is no recursion error)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if len(item) >= LONG:
                out.append(item)
        elif isinstance(item, dict):
            stack.extend(reversed(item.values()))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def blank_long(value: Any) -> Any:
    """``value`` with each string of :data:`LONG` characters or more written as ``""`` (a copy of
    its structure; what ``JSON.stringify`` writes outside those strings is unchanged). Walked with
    a stack: a value nested as deep as the log reader allows is no recursion error.

    Example:
        >>> blank_long({"a": ["x" * LONG, 1], "b": "y"})
        {'a': ['', 1], 'b': 'y'}
    """
    return rebuild_json(value, blank_from=LONG)


class _Skeletons:
    """:func:`retention_body`'s stand-ins for body messages, by identity (each entry holds its
    message, so an id is not reused while it is here). Emptied whole past :attr:`LIMIT` (weighed by
    the bytes written to make them: a huge message must not be pinned for long). Shared by the
    process's threads (``watch`` follows each log in one): each state is one value, read and
    replaced whole."""

    LIMIT = 8_000_000
    ENTRY = 64

    def __init__(self) -> None:
        self.parts: dict[int, tuple[Any, bytes | None]] = {}
        self.weight = 0
        # the last body's messages and their stand-ins (held: their ids stay theirs)
        self.last: tuple[list[Any], list[bytes | None]] = ([], [])

    def all(self, messages: list[Any]) -> list[bytes | None]:
        """The stand-in of each of ``messages``: those the last list started with (the same
        objects, found at C speed) as they were, the rest looked up or made."""
        last, last_parts = self.last
        kept = _same_start(messages, last)
        parts = last_parts[:kept] + [self.get(m) for m in messages[kept:]]
        self.last = (messages, parts)
        return parts

    def get(self, message: Any) -> bytes | None:
        """The stand-in of ``message``; None when it does not parse alone (so neither does a body
        that holds it, nor may its stand-in)."""
        found = self.parts.get(id(message))
        if found is not None and found[0] is message:
            return found[1]
        if self.weight > self.LIMIT:
            self.parts, self.weight = {}, 0
        written = stringify_bytes(blank_long(message))
        try:
            orjson.loads(b'{"messages":[' + written + b"]}")  # at its depth in a body
            part: bytes | None = b"{" + b",".join(b'"cache_control":' + m for m, _ in key_objects(written, "cache_control")) + b"}"
        except ValueError:
            part = None
        self.parts[id(message)] = (message, part)
        self.weight += len(written) + self.ENTRY
        return part


_SKELETONS = _Skeletons()


def retention_body(body: dict[str, Any]) -> bytes:
    """Bytes :meth:`~dsh_audit.cache.CacheRule.retention` reads the same retention from as from
    ``stringify_bytes(blank_long(body))``, made from each message once: every message of a body
    that begins with ``model`` stands as an object of its ``cache_control`` members (the texts the
    rule parses, in order), the rest of the body as it is written. A rule reads markers wherever
    they are, and a retention key or cache options at the top level (a body that names one only
    inside a message reads as one that names none); a body that would not parse is written whole.

    Example:
        >>> retention_body({"model": "m", "messages": [{"role": "user", "content": [
        ...     {"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]}], "stream": True})
        b'{"model":"m","messages":[{"cache_control":{"type":"ephemeral"}}],"stream":true}'
    """
    messages = body.get("messages")
    if not isinstance(messages, list) or next(iter(body), None) != "model":
        return stringify_bytes(blank_long(body))
    parts = _SKELETONS.all(messages)
    if None in parts:
        return stringify_bytes(blank_long(body))
    members = [(stringify_bytes(k), None if k == "messages" else stringify_bytes(blank_long(v))) for k, v in body.items()]
    try:  # the rest of the body parses (each message was checked where it sits)
        orjson.loads(b"{" + b",".join(k + b":" + v for k, v in members if v is not None) + b"}")
    except ValueError:
        return stringify_bytes(blank_long(body))
    listed = b"[" + b",".join(parts) + b"]"  # type: ignore[arg-type]  # no None in parts
    written = b"{" + b",".join(k + b":" + (listed if v is None else v) for k, v in members) + b"}"
    return written
