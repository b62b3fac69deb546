"""The captured-request value and the rule that tells what kind of call a captured body is.

Kinds, decided from the request alone (the first rule that matches wins):

1. ``compaction``: the ``x-deepseek-harness-compact`` header is present (DSH's DeepSeek adapter
   sends ``1`` for ``purpose: 'compaction'``, ``packages/llm/llm-deepseek/README.md``), or the
   body's last message is a user message whose text opens with DSH's compaction instruction
   ("You are now acting as a compaction engine", ``packages/compaction/compaction-basic/src/
   summarizer.ts``) — the second test catches adapters that send no such header (pi-ai).
2. ``title``: the body has no tools (``tools`` absent or empty) and its system prompt opens with
   DSH's title prompt ("Create a concise title for an AI coding-assistant session",
   ``packages/session/session-title-llm/src/index.ts``). The system prompt is the first
   ``system``/``developer`` message, or a top-level ``system`` string or text-block list
   (Anthropic Messages). DeepSeek title calls also send ``thinking: {"type": "disabled"}``; that
   is not required, so other adapters' title calls are recognised too.
3. ``loop``: any other JSON object with a ``messages`` array.
4. ``other``: everything else (no body, not JSON, no ``messages``). Only a capture of kind ``other``
   that is a POST to an LLM endpoint carrying DSH's session header naming a given session is paired
   (it is that session's LLM call, whatever its body holds; :func:`unreadable_body` says why its
   body is no request body).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..log import parse_json

__all__ = ["CAPTURE_KINDS", "COMPACTION_PREFIX", "CapturedRequest", "TITLE_PREFIX", "classify",
           "last_user_text", "unreadable_body"]

CAPTURE_KINDS = ("loop", "compaction", "title", "other")
COMPACT_HEADER = "x-deepseek-harness-compact"
SESSION_HEADER = "x-deepseek-harness-session-id"
TITLE_PREFIX = "Create a concise title for an AI coding-assistant session"
COMPACTION_PREFIX = "You are now acting as a compaction engine"


@dataclass(frozen=True, slots=True)
class CapturedRequest:
    """One HTTP request as a capture recorded it.

    Attributes:
        position: 0-based place in the loaded capture (arrival order as the capture lists it).
        method: HTTP method, upper-case.
        path: request path (with query string, without scheme and host), ``""`` when unknown.
        headers: header names lower-cased; a repeated header keeps its last value.
        body: the exact body bytes.
        time: the capture's timestamp text, when it has one.
        source: the file the request came from (for a body folder, the body file).
        locator: where in ``source`` (``line 3``, ``entries[2]``; ``""`` for a body file).
        kind: ``loop``, ``compaction``, ``title`` or ``other`` (see the module docstring).
    """

    position: int
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    time: str | None
    source: str
    locator: str
    kind: str

    @property
    def session_id(self) -> str | None:
        """The ``x-deepseek-harness-session-id`` header, when the request carried one."""
        return self.headers.get(SESSION_HEADER)

    def where(self) -> str:
        """``file locator``, for messages and reports."""
        return f"{self.source} {self.locator}" if self.locator else self.source


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content
                       if isinstance(part, dict) and isinstance(part.get("text"), str))
    return ""


def _messages(body: Any) -> list[Any] | None:
    """A body's conversation: its ``messages`` (chat completions, Anthropic Messages), else a
    Responses body's ``input`` items (pi-ai ``openai-responses``: ``POST /responses``), else None."""
    if not isinstance(body, dict):
        return None
    for key in ("messages", "input"):
        found = body.get(key)
        if isinstance(found, list):
            return found
    return None


def _system_text(body: dict[str, Any]) -> str:
    if "system" in body:
        return _text_of(body["system"])
    messages = _messages(body)
    if isinstance(messages, list) and messages and isinstance(messages[0], dict):
        first = messages[0]
        if first.get("role") in ("system", "developer"):
            return _text_of(first.get("content"))
    return ""


def last_user_text(body: Any) -> str | None:
    """The text of the body's last message (a Responses body's last ``input`` item) when that
    message is a user message, else None."""
    messages = _messages(body)
    if not isinstance(messages, list) or not messages:
        return None
    last = messages[-1]
    if not isinstance(last, dict) or last.get("role") != "user":
        return None
    return _text_of(last.get("content"))


def classify(headers: dict[str, str], body: bytes) -> str:
    """The kind of a captured request (``loop``, ``compaction``, ``title``, ``other``).

    Example:
        >>> classify({}, b'{"messages":[{"role":"user","content":"hi"}]}')
        'loop'
        >>> classify({}, b'{"input":[{"role":"user","content":[{"type":"input_text","text":"hi"}]}]}')
        'loop'
    """
    try:
        value = parse_json(body) if body else None
    except (ValueError, UnicodeDecodeError):
        value = None
    if COMPACT_HEADER in headers:
        return "compaction"
    if not isinstance(value, dict) or _messages(value) is None:
        return "other"
    if (last_user_text(value) or "").startswith(COMPACTION_PREFIX):
        return "compaction"
    if not value.get("tools") and _system_text(value).startswith(TITLE_PREFIX):
        return "title"
    return "loop"


def unreadable_body(body: bytes) -> str:
    """Why ``body`` (of kind ``other``) is no request body: what a pairing of it says.

    Example:
        >>> unreadable_body(b"")
        'the captured request has no body'
        >>> unreadable_body(b"not json {")
        'captured body is not JSON: Expecting value: line 1 column 1 (char 0)'
        >>> unreadable_body(b"null"), unreadable_body(b'{"model": "m"}')
        ('captured body is JSON null, not a request object', 'captured body is a JSON object without messages')
    """
    if not body:
        return "the captured request has no body"
    try:
        value = parse_json(body)
    except (ValueError, UnicodeDecodeError) as exc:
        return f"captured body is not JSON: {exc}"
    if isinstance(value, dict):
        return "captured body is a JSON object without messages"
    kind = "JSON null" if value is None else "a JSON boolean" if isinstance(value, bool) else "a JSON number" \
        if isinstance(value, (int, float)) else "a JSON string" if isinstance(value, str) else "a JSON array"
    return f"captured body is {kind}, not a request object"
