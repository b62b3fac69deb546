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

import hashlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .._body_decode import is_gzip
from .._show import shown
from ..errors import CaptureError
from ..log import parse_json

__all__ = ["CAPTURE_KINDS", "COMPACTION_PREFIX", "CapturedRequest", "TITLE_PREFIX", "classify",
           "last_user_text", "unreadable_body"]

CAPTURE_KINDS = ("loop", "compaction", "title", "other")
COMPACT_HEADER = "x-deepseek-harness-compact"
SESSION_HEADER = "x-deepseek-harness-session-id"
TITLE_PREFIX = "Create a concise title for an AI coding-assistant session"
COMPACTION_PREFIX = "You are now acting as a compaction engine"


@dataclass(frozen=True, slots=True)
class _Facts:
    """What a captured body says about its route and session (:func:`._evidence._facts`)."""

    apis: frozenset[str] | None
    model: str | None
    hints: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True, init=False)
class CapturedRequest:
    """One HTTP request as a capture recorded it.

    A loaded ``wire.jsonl`` or body-folder capture holds no body: only where it is (``reread``),
    its digest and size, and what pairing reads of it (``facts``); :attr:`body` reads it again
    from the file, so a capture is never held whole in memory (a HAR file's bodies are held, as its
    one document is read whole).

    Attributes:
        position: 0-based place in the loaded capture (arrival order as the capture lists it).
        method: HTTP method, upper-case.
        path: request path (with query string, without scheme and host), ``""`` when unknown.
        headers: header names lower-cased; a repeated header keeps its last value.
        time: the capture's timestamp text, when it has one.
        source: the file the request came from (for a body folder, the body file).
        locator: where in ``source`` (``line 3``, ``entries[2]``; ``""`` for a body file).
        kind: ``loop``, ``compaction``, ``title`` or ``other`` (see the module docstring).
        digest: the SHA-256 digest of the body (equal bodies, equal digests).
        size: the body's length in bytes.
        held: the body, when it is held in memory (else None: ``reread`` reads it).
        reread: reads the body again from the capture (None when ``held``).
        facts: what the body says about its route and session, read when it was loaded (None:
            read from :attr:`body` when asked).
    """

    position: int
    method: str
    path: str
    headers: dict[str, str]
    time: str | None
    source: str
    locator: str
    kind: str
    digest: bytes
    size: int
    held: bytes | None = field(compare=False, repr=False)
    reread: Callable[[], bytes] | None = field(compare=False, repr=False)
    facts: _Facts | None = field(compare=False, repr=False)
    undone: str | None = field(default=None, compare=False, repr=False)

    def __init__(self, position: int, method: str, path: str, headers: dict[str, str], body: bytes | None,
                 time: str | None, source: str, locator: str, kind: str, *, reread: Callable[[], bytes] | None = None,
                 digest: bytes | None = None, size: int | None = None, facts: _Facts | None = None,
                 undone: str | None = None) -> None:
        if body is None and (reread is None or digest is None or size is None):
            raise ValueError("a captured request without its body needs reread, digest and size")
        for name, value in (("position", position), ("method", method), ("path", path), ("headers", headers),
                            ("time", time), ("source", source), ("locator", locator), ("kind", kind),
                            ("digest", hashlib.sha256(body).digest() if digest is None and body is not None
                             else digest),
                            ("size", len(body) if body is not None else size), ("held", body),
                            ("reread", None if body is not None else reread), ("facts", facts), ("undone", undone)):
            object.__setattr__(self, name, value)

    @property
    def body(self) -> bytes:
        """The exact body bytes (read again from the capture when not held).

        Raises:
            CaptureError: the capture can no longer be read, or its body changed since it was loaded.
        """
        if self.held is not None:
            return self.held
        assert self.reread is not None
        body = self.reread()
        if hashlib.sha256(body).digest() != self.digest:
            raise CaptureError(f"{self.locator + ': ' if self.locator else ''}the body changed since the capture "
                               "was read", path=self.source, hint="compare a capture no one is writing to")
        return body

    @property
    def session_id(self) -> str | None:
        """The ``x-deepseek-harness-session-id`` header, when the request carried one."""
        return self.headers.get(SESSION_HEADER)

    @property
    def named_session(self) -> str | None:
        """The session this send names: DSH's header (:attr:`session_id`), else the first session id
        pi-ai forwarded, as its loader read it (:attr:`facts`: a header of
        :data:`dsh_audit.capture.PIAI_SESSION_HEADERS`, or the body's ``prompt_cache_key``, which may
        be the id cut short); None when it names none. Only what ``diff`` and ``check`` say of a
        capture that matched nothing: never evidence that a capture is another session's (a value
        naming no given session is no evidence: docs/capture-formats.md), so
        :func:`dsh_audit.capture.held_sessions` reads DSH's header alone."""
        if self.session_id is not None:
            return self.session_id
        return self.facts.hints[0][1] if self.facts is not None and self.facts.hints else None

    @property
    def undecoded(self) -> str | None:
        """The coding its reader could not undo (``br``, corrupt or cut-off data), its body read as
        captured: why a send to an LLM endpoint is of kind ``other``, which a note names rather than
        call it no LLM call; None for any other body. Kept by the reader as it read the body
        (:attr:`undone`: decoding the decoded body again would call a gzip body that decodes to
        binary undone, final re-read of session 45)."""
        return self.undone if self.kind == "other" else None

    def undecoded_note(self) -> str | None:
        """What a note says of a body whose coding could not be undone (:attr:`undecoded`), in the one
        wording ``diff``'s row and closing notes and ``redact``'s refusal give it; None for any other."""
        coding = self.undecoded
        return None if coding is None else f"its body's coding {coding} could not be undone"

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
    return _classify_value(headers, _body_value(body))


def _body_value(body: bytes) -> Any:
    """A body's JSON value, None when it has none (empty, not JSON)."""
    try:
        return parse_json(body) if body else None
    except (ValueError, UnicodeDecodeError):
        return None


def _classify_value(headers: dict[str, str], value: Any) -> str:
    """:func:`classify` of a body already parsed (:func:`_body_value`)."""
    if COMPACT_HEADER in headers:
        return "compaction"
    if not isinstance(value, dict) or _messages(value) is None:
        return "other"
    if (last_user_text(value) or "").startswith(COMPACTION_PREFIX):
        return "compaction"
    if not value.get("tools") and _system_text(value).startswith(TITLE_PREFIX):
        return "title"
    return "loop"


def unreadable_body(body: bytes, headers: Mapping[str, str] | None = None) -> str:
    """Why ``body`` (of kind ``other``) is no request body: what a pairing of it says; gzip data
    in the words of its ``headers`` (names lower-cased, :attr:`CapturedRequest.headers`): the
    ``Content-Encoding`` they give, which a reader took for no gzip (:func:`_not_gzip`).

    Example:
        >>> unreadable_body(b"")
        'the captured request has no body'
        >>> unreadable_body(b"not json {")
        'captured body is not JSON: Expecting value: line 1 column 1 (char 0)'
        >>> unreadable_body(b"null"), unreadable_body(b'{"model": "m"}')
        ('captured body is JSON null, not a request object', 'captured body is a JSON object without messages')
        >>> unreadable_body(b'{"a": "caf\\xe9"}')
        'captured body is not UTF-8 text (byte 0xe9 at offset 10)'
        >>> unreadable_body(b"\\x1f\\x8b\\x08")
        'captured body is gzip data its headers do not name (no Content-Encoding: gzip)'
        >>> unreadable_body(b"\\x1f\\x8b\\x08", {"content-encoding": "br"})
        'captured body is gzip data its headers do not name (its Content-Encoding names br, not gzip)'
    """
    if not body:
        return "the captured request has no body"
    if is_gzip(body):  # a request's codings are undone by its Content-Encoding alone (as a server reads it)
        coding = (headers or {}).get("content-encoding")
        if _names_gzip(coding):  # named, but not undone: corrupt, cut off, or under a coding not undone
            return "captured body is gzip data that could not be undone (the capture's warning at its line says why)"
        return f"captured body is gzip data its headers do not name ({_not_gzip(coding)})"
    try:
        value = parse_json(body)
    except UnicodeDecodeError as exc:  # said in dsh-audit's words: Python's codec text is no note
        return f"captured body is not UTF-8 text (byte 0x{body[exc.start]:02x} at offset {exc.start})"
    except ValueError as exc:
        return f"captured body is not JSON: {exc}"
    if isinstance(value, dict):
        return "captured body is a JSON object without messages"
    kind = "JSON null" if value is None else "a JSON boolean" if isinstance(value, bool) else "a JSON number" \
        if isinstance(value, (int, float)) else "a JSON string" if isinstance(value, str) else "a JSON array"
    return f"captured body is {kind}, not a request object"


#: A Content-Encoding a note names bare: HTTP tokens, listed (``br``, ``deflate, br``), up to 40
#: characters (no tab, no bracket: nothing a terminal or rich markup acts on).
_CODINGS = re.compile(r"(?=.{1,40}\Z)[A-Za-z0-9!#$%&'*+.^_`|~-]+(?: *, *[A-Za-z0-9!#$%&'*+.^_`|~-]+)*", re.ASCII)


def _names_gzip(coding: str | None) -> bool:
    """Whether a ``Content-Encoding`` value names gzip among its codings (``x-gzip`` too, any case).

    Example:
        >>> _names_gzip("gzip, br"), _names_gzip("X-GZIP"), _names_gzip("deflate"), _names_gzip(None)
        (True, True, False, False)
    """
    return coding is not None and any(item.strip().lower() in ("gzip", "x-gzip") for item in coding.split(","))


def _not_gzip(coding: str | None) -> str:
    """Why gzip data was not inflated, in the words of its ``Content-Encoding`` (None: no such
    header): the coding it names instead (bare when it is HTTP tokens, else as JSON quotes it, so
    that a capture's text never acts on a terminal).

    Example:
        >>> _not_gzip(None), _not_gzip("deflate, br")
        ('no Content-Encoding: gzip', 'its Content-Encoding names deflate, br, not gzip')
        >>> _not_gzip("")
        'its Content-Encoding is empty, not gzip'
        >>> _not_gzip("\\x1b[2J")
        'its Content-Encoding names "\\\\u001b[2J", not gzip'
    """
    if coding is None:
        return "no Content-Encoding: gzip"
    if not coding.strip():
        return "its Content-Encoding is empty, not gzip"
    named = coding.strip() if _CODINGS.fullmatch(coding.strip()) else shown(coding)
    return f"its Content-Encoding names {named}, not gzip"
