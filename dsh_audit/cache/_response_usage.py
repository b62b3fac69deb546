"""The usage a captured response reports: the provider's own token counts, by its convention
(:mod:`dsh_audit.cache._captured_usage` prices from them the requests whose log holds none).

A captured response is what the capture recorded beside a request: a ``wire.jsonl`` record's
``response`` (a summary object with the provider's ``usage``, as the corpus's scripted server wrote
it, a JSON response body as an object, or the body text), a HAR entry's ``response.content.text``
(decoded as a request's body is: :mod:`dsh_audit._body_decode`, base64 and gzip; a response with an
error status reports none). A body text is a JSON document or a ``text/event-stream`` (SSE, read
by its spec: :func:`_events`) whose ``data:`` events carry the usage: the last OpenAI / DeepSeek chunk with a ``usage``
(``stream_options.include_usage``), Anthropic's ``message_start`` usage updated by each
``message_delta``'s, a Responses ``response.completed`` event's ``response.usage``.

Each provider's usage convention (spec ``provider-cache-rules.md``; spec ``dsh-log-format.md`` §5.6
for the buckets DSH's own ``TokenUsage`` keeps, which are disjoint) is read into :class:`Tokens`:

- DeepSeek: ``prompt_cache_hit_tokens`` are the cache reads and ``prompt_cache_miss_tokens`` the
  misses (one of them missing: ``prompt_tokens`` less the other);
- OpenAI chat completions: ``prompt_tokens`` holds the cached ``prompt_tokens_details.cached_tokens``;
- OpenAI Responses: ``input_tokens`` holds the cached ``input_tokens_details.cached_tokens``;
- Anthropic Messages: ``input_tokens``, ``cache_read_input_tokens`` and ``cache_creation_input_tokens``
  are reported apart (the input excludes both).

Output counts hold the reasoning tokens in every convention (``completion_tokens_details`` /
``output_tokens_details.reasoning_tokens`` are shown apart, as DSH's ``reasoningTokens``). A usage
with a count that is not a non-negative integer is none (:func:`~dsh_audit._usage_rule.is_count`),
and so is one holding the fields of two conventions (:func:`_one_convention`). A body text that is
neither JSON nor an event stream is damaged, not a response without usage.
"""


from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .._body_decode import BodyDecodeError, body_bytes, content_encoding
from .._json import MAX_DEPTH, depth_exceeds
from .._literals import literal_json
from ..log import parse_json
from .._usage_rule import MAX_TOKENS, count_of, js_integer
from ._money import Tokens
from ._price_files import _shown as _number_text

__all__ = ["UnusableUsage", "damaged", "response_tokens", "told", "usage_tokens"]

#: What ends a line of an event stream (the SSE spec: CRLF, LF or CR; U+2028 and U+0085 are text).
_LINE_END = re.compile(r"\r\n|\r|\n")
#: The SSE events of Anthropic's stream whose usage starts, and updates, the response's usage.
_START, _DELTA = "message_start", "message_delta"


@dataclass(frozen=True, slots=True)
class UnusableUsage(Tokens):
    """What a capture tells of a request it cannot price (all counts 0, never priced:
    :func:`dsh_audit.cache.entry_usage`): ``why`` it is unpriced, which every view says in place of
    "usage not logged" (:func:`damaged` a usage it holds, :data:`UNMATCHED` a capture that matched
    no request of the session)."""

    why: str = ""


def damaged(where: str, reason: str) -> UnusableUsage:
    """The usage the capture's response at ``where`` (file and locator) reports, damaged for ``reason``."""
    return UnusableUsage(why=f"the capture's usage is damaged ({where + ': ' if where else ''}{reason})")


class _Damaged(ValueError):
    """A usage (or a stream of them) no provider writes: why, in words that quote no text of it."""


def _shown(value: Any) -> str:
    """A damaged count in words: a number as the file wrote it (as a price file's is said: a long
    integer by its digits; one past the double range by its text, :mod:`dsh_audit._literals`), any
    other value by its type."""
    if isinstance(value, bool) or value is None:
        return "null" if value is None else str(value).lower()
    if isinstance(value, (int, float)):
        if not math.isfinite(value) and not isinstance(getattr(value, "written", None), str):
            return "a number past the double range"  # its text not kept: never Python's "inf"
        return _number_text(value)
    return "a string" if isinstance(value, str) else "a list" if isinstance(value, list) else "an object"


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key, 0)
    count = count_of(value)  # 100.0 is 100, as the SDK's JSON.parse reads it
    if count is None:
        whole = js_integer(value)
        raise _Damaged(f"{key} {_shown(value)}" + (f" (past {MAX_TOKENS:,})" if whole is not None
                                                     and whole > MAX_TOKENS else ""))
    return count


def _detail(usage: Mapping[str, Any], key: str, inner: str) -> int:
    """``usage[key][inner]``: 0 when absent."""
    details = usage.get(key)
    if details is None:
        return 0
    if not isinstance(details, dict):
        raise _Damaged(f"{key} {_shown(details)}")
    return _count(details, inner)


def _part(whole: int, part: int, whole_name: str, part_name: str) -> int:
    """``whole`` less its ``part`` (their names: for the reason when the part is larger)."""
    if part > whole:
        raise _Damaged(f"{part_name} {part} > {whole_name} {whole}")
    return whole - part


def _deepseek(usage: Mapping[str, Any]) -> tuple[int, ...]:
    """DeepSeek's hits and misses, which add up to ``prompt_tokens``; one of them missing is
    ``prompt_tokens`` less the other."""
    prompt = _count(usage, "prompt_tokens")
    hit, miss = "prompt_cache_hit_tokens", "prompt_cache_miss_tokens"
    read = _count(usage, hit) if hit in usage else _part(prompt, _count(usage, miss), "prompt_tokens", miss)
    miss_count = _count(usage, miss) if miss in usage else _part(prompt, read, "prompt_tokens", hit)
    if "prompt_tokens" in usage and read + miss_count != prompt:
        raise _Damaged(f"{hit} {read} + {miss} {miss_count} != prompt_tokens {prompt}")
    return miss_count, read, 0, _count(usage, "completion_tokens"), _detail(usage, "completion_tokens_details",
                                                                             "reasoning_tokens")


def _included(usage: Mapping[str, Any], total: str, details: str, out: str, reasoning: str) -> tuple[int, ...]:
    """A usage whose input count ``total`` includes its cached tokens (``details.cached_tokens``)."""
    whole, read = _count(usage, total), _detail(usage, details, "cached_tokens")
    return _part(whole, read, total, "cached_tokens"), read, 0, _count(usage, out), _detail(usage, reasoning,
                                                                                               "reasoning_tokens")


def _anthropic(usage: Mapping[str, Any]) -> tuple[int, ...]:
    return (_count(usage, "input_tokens"), _count(usage, "cache_read_input_tokens"),
            _count(usage, "cache_creation_input_tokens"), _count(usage, "output_tokens"), 0)


#: The fields of the chat-completions conventions (OpenAI's; DeepSeek's adds its hits and misses), and
#: of the input/output ones (Anthropic's Messages and OpenAI's Responses share ``input_tokens`` and
#: ``output_tokens``); the fields of Anthropic's alone, and of Responses' alone.
_CHAT = ("prompt_tokens", "completion_tokens", "prompt_tokens_details", "completion_tokens_details",
         "prompt_cache_hit_tokens", "prompt_cache_miss_tokens")
_INPUT_OUTPUT = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
                 "input_tokens_details", "output_tokens_details")
_ANTHROPIC, _RESPONSES = _INPUT_OUTPUT[2:4], _INPUT_OUTPUT[4:]


def _one_convention(usage: Mapping[str, Any]) -> None:
    """Raise :class:`_Damaged` for a usage holding fields of two conventions (no provider writes
    one: read by either, the other's counts would be dropped), naming a field of each."""
    for one, other in ((_CHAT, _INPUT_OUTPUT), (_ANTHROPIC, _RESPONSES)):
        mine = next((key for key in one if key in usage), None)
        theirs = next((key for key in other if key in usage), None)
        if mine is not None and theirs is not None:
            raise _Damaged(f"the usage mixes conventions ({mine} with {theirs})")


def _read_usage(usage: Any) -> Tokens | None:
    """:func:`usage_tokens`, raising :class:`_Damaged` for a usage with a damaged or contradicting
    count, or fields of two conventions."""
    if not isinstance(usage, dict):
        return None
    _one_convention(usage)
    if "prompt_cache_hit_tokens" in usage or "prompt_cache_miss_tokens" in usage:
        counts = _deepseek(usage)
    elif "prompt_tokens" in usage:
        counts = _included(usage, "prompt_tokens", "prompt_tokens_details", "completion_tokens",
                           "completion_tokens_details")
    elif "input_tokens_details" in usage or "output_tokens_details" in usage:
        counts = _included(usage, "input_tokens", "input_tokens_details", "output_tokens", "output_tokens_details")
    elif "input_tokens" in usage:
        counts = _anthropic(usage)
    else:
        return None
    if counts[4] > counts[3]:
        raise _Damaged(f"reasoning_tokens {counts[4]} > output {counts[3]}")
    return Tokens(*counts)


def usage_tokens(usage: Any) -> Tokens | None:
    """A provider's ``usage`` object as tokens by bucket, by its convention (the module docstring),
    told by its fields; None when it is no usage or it is damaged (a count that is no
    :func:`~dsh_audit._usage_rule.is_count`, parts larger than their whole, DeepSeek's hits and
    misses not adding up to its ``prompt_tokens``).

    Example:
        >>> usage_tokens({"prompt_tokens": 8027, "completion_tokens": 18, "prompt_cache_hit_tokens": 7936,
        ...               "prompt_cache_miss_tokens": 91, "completion_tokens_details": {"reasoning_tokens": 8}})
        Tokens(cache_miss=91, cache_read=7936, cache_write=0, output=18, reasoning=8)
        >>> usage_tokens({"prompt_tokens": 100, "completion_tokens": 5, "prompt_tokens_details": {"cached_tokens": 64}})
        Tokens(cache_miss=36, cache_read=64, cache_write=0, output=5, reasoning=0)
        >>> usage_tokens({"input_tokens": 100, "output_tokens": 5, "input_tokens_details": {"cached_tokens": 60}})
        Tokens(cache_miss=40, cache_read=60, cache_write=0, output=5, reasoning=0)
        >>> usage_tokens({"input_tokens": 10, "cache_read_input_tokens": 7872, "cache_creation_input_tokens": 310,
        ...               "output_tokens": 22})
        Tokens(cache_miss=10, cache_read=7872, cache_write=310, output=22, reasoning=0)
        >>> usage_tokens({"input_tokens": -1, "output_tokens": 5}) is None
        True
    """
    try:
        return _read_usage(usage)
    except _Damaged:
        return None


def _found_usage(value: Any) -> Any:
    """The usage object of a parsed response (a JSON body, an SSE payload, a summary object)."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("usage"), dict):
        return value["usage"]
    inner = value.get("response") if value.get("type") != _START else value.get("message")
    return inner.get("usage") if isinstance(inner, dict) and isinstance(inner.get("usage"), dict) else None


#: Where a JSON text may hold a number no double holds exactly (:func:`dsh_audit._literals.inexact`):
#: a value (after a colon, a bracket or a comma) of 16 digits or more before any point (2**53 has
#: 16), or written with an exponent. A text without one is parsed by :func:`dsh_audit.log.parse_json`
#: alone; one with one (or what looks so inside a string) by :func:`dsh_audit._literals.literal_json`
#: alone, whose numbers keep their text.
_MAY_BE_INEXACT = re.compile(r"[:\[,][ \t\r\n]*-?(?:[0-9]{16}|[0-9]+(?:\.[0-9]*)?[eE])")


def _parsed(text: str) -> Any:
    """``text`` as JSON (``JSON.parse``'s reading of its UTF-8 bytes: :func:`dsh_audit.log.parse_json`),
    parsed once: a text that may hold a number no double holds exactly (:data:`_MAY_BE_INEXACT`) by
    :func:`~dsh_audit._literals.literal_json`, so that a count past a double is said as written,
    by the same rules (no ``NaN``, no lone surrogate outside an escape, at most
    :data:`~dsh_audit._json.MAX_DEPTH` levels deep); ValueError if it is none."""
    try:
        raw = text.encode("utf-8")  # a lone surrogate is no UTF-8: parse_json refuses its bytes
    except UnicodeError as exc:
        raise ValueError(str(exc)) from None
    if _MAY_BE_INEXACT.search(text) is None:
        return parse_json(raw)
    try:
        value = literal_json(text)
    except RecursionError:
        raise ValueError(f"JSON nested more than {MAX_DEPTH} levels deep") from None
    if text.count("[") + text.count("{") > MAX_DEPTH and depth_exceeds(value, MAX_DEPTH):
        raise ValueError(f"JSON nested more than {MAX_DEPTH} levels deep")
    return value


def _convention(payload: Any) -> str:
    """The provider convention of a stream event that carries a usage: Anthropic's Messages events,
    a Responses event, else a chat-completions chunk (OpenAI's, DeepSeek's)."""
    kind = payload.get("type") if isinstance(payload, dict) else None
    if kind in (_START, _DELTA):
        return "anthropic"
    return "responses" if isinstance(kind, str) and kind.startswith("response.") else "chat"


def _events(text: str) -> Iterator[str]:
    """The data of each event of an event stream, by the SSE spec: a leading BOM dropped, lines
    ended by CRLF, LF or CR, the ``data`` fields of an event (one space after the colon dropped)
    joined by LF, dispatched at the empty line that ends it (the last, at the end of the text too: a
    capture may lose the stream's last empty line). One event is held at a time."""
    data: list[str] = []
    at, size = (1 if text.startswith("\ufeff") else 0), len(text)
    while at <= size:
        end = _LINE_END.search(text, at)
        line = text[at:end.start() if end else size]
        at = end.end() if end else size + 1
        if not line:
            if data:
                yield "\n".join(data)
            data = []
            continue
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)


def _sse_usage(text: str) -> Any:
    """The usage an event stream reports, read by its own provider's rules: Anthropic's one
    ``message_start`` usage updated field by field by each ``message_delta``'s, else the last event's
    that carries one. A stream whose usages follow two conventions (its events', or the fields a
    delta adds: :func:`_one_convention`), holds two ``message_start`` or a ``message_delta`` before
    it, or an event whose data is no JSON (but ``[DONE]``) is damaged."""
    found: Any = None
    conventions: set[str] = set()
    # Every event is parsed, not only those that could carry a usage: whether its data is JSON (the
    # rule above) is told only by parsing it, and no cheaper test is exact (a filter on its text,
    # such as holding "usage", would take a damaged event for one without a usage).
    for data in _events(text):
        if data.strip() == "[DONE]":
            continue
        try:
            payload = _parsed(data)
        except ValueError:
            raise _Damaged("an event's data is no JSON") from None
        usage = _found_usage(payload)
        if usage is None:
            continue
        conventions.add(_convention(payload))
        kind = payload.get("type")
        if len(conventions) > 1:
            raise _Damaged("the stream mixes " + " and ".join(sorted(conventions)) + " events")
        if kind == _START and found is not None:
            raise _Damaged(f"a second {_START}")
        if kind == _DELTA and found is None:
            raise _Damaged(f"a {_DELTA} before {_START}")
        found = {**found, **{k: v for k, v in usage.items() if v is not None}} if kind == _DELTA else dict(usage)
    return found


#: How an event stream opens (a field name and its colon, or a comment's colon), which no JSON document does.
_STREAM = re.compile(r"[ \t\r\n]*(?:data|event|id|retry)?:")
#: A line of an event stream anywhere in a text (a field's, or a comment's).
_STREAM_LINE = re.compile(r"(?:^|[\r\n])(?:data|event|id|retry)?:")


def _text_usage(text: str) -> Any:
    """The usage of a response body text (a leading BOM dropped, as the UTF-8 decoding a client
    reads a body with drops it): a JSON document, else an event stream (one that opens as a stream
    is not first parsed whole as JSON: a long one is not copied to fail). A text that is neither
    (no JSON, no line of a stream) is damaged; an empty one holds no usage."""
    text = text[1:] if text.startswith("\ufeff") else text
    if _STREAM.match(text):
        return _sse_usage(text)
    try:
        return _found_usage(_parsed(text))
    except ValueError:
        pass
    if text.strip() and not _STREAM_LINE.search(text):
        raise _Damaged("the response body is neither JSON nor an event stream")
    return _sse_usage(text)


def _content_text(response: Mapping[str, Any], content: Mapping[str, Any]) -> str:
    """A HAR-style ``response.content``'s body text, decoded as the request side decodes a body
    (:func:`dsh_audit._body_decode.body_bytes`: base64, every coding its ``Content-Encoding``
    names), then as UTF-8."""
    try:
        data = body_bytes(content["text"], encoding=content.get("encoding"),
                          content_coding=content_encoding(response.get("headers")), field="content.text")
        return data.decode("utf-8")
    except BodyDecodeError as exc:
        raise _Damaged(exc.message) from None
    except UnicodeDecodeError as exc:
        raise _Damaged(f"content.text is not valid UTF-8 (byte {exc.start})") from None


def _failed(response: Mapping[str, Any]) -> bool:
    """Whether a recorded response is an error's (HTTP status 400 and above), whose body reports no usage."""
    status = response.get("status")
    return isinstance(status, int) and not isinstance(status, bool) and status >= 400


def _response_usage(response: Any) -> Tokens | None:
    """:func:`response_tokens`, raising :class:`_Damaged` for a damaged usage or body."""
    if isinstance(response, str):
        return _read_usage(_text_usage(response))
    if not isinstance(response, dict):
        return None
    usage = _found_usage(response)
    if usage is None and response.get("usage") is not None:
        raise _Damaged(f"usage {_shown(response['usage'])}")  # a usage no object
    if usage is not None:
        return _read_usage(usage)
    if _failed(response):
        return None
    content = response.get("content")  # a HAR response
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return _read_usage(_text_usage(_content_text(response, content)))
    body = next((response[k] for k in ("body", "text") if isinstance(response.get(k), str)), None)
    return None if body is None else _read_usage(_text_usage(body))


def response_tokens(response: Any, where: str = "") -> Tokens | None:
    """The tokens a captured response reports (the module docstring), None when it reports none;
    a damaged one (:func:`usage_tokens`, :func:`_sse_usage`) is :func:`damaged` at ``where``.

    Example:
        >>> response_tokens({"script": {}, "usage": {"input_tokens": 10, "output_tokens": 5}})
        Tokens(cache_miss=10, cache_read=0, cache_write=0, output=5, reasoning=0)
        >>> stream = ('event: message_start\\ndata: {"type":"message_start","message":{"usage":{"input_tokens":3,'
        ...           '"cache_read_input_tokens":9,"output_tokens":1}}}\\n\\nevent: message_delta\\n'
        ...           'data: {"type":"message_delta","usage":{"output_tokens":7}}\\n\\n')
        >>> response_tokens({"body": stream})
        Tokens(cache_miss=3, cache_read=9, cache_write=0, output=7, reasoning=0)
        >>> response_tokens('data: {"choices":[]}\\n\\ndata: [DONE]\\n\\n') is None
        True
        >>> response_tokens({"usage": {"input_tokens": -10, "output_tokens": 5}}, "wire.jsonl line 1").why
        "the capture's usage is damaged (wire.jsonl line 1: input_tokens -10)"
    """
    found = told(response)
    return damaged(where, found) if isinstance(found, str) else found


def told(response: Any) -> Tokens | str | None:
    """The tokens ``response`` reports, why its usage is damaged, or None (:func:`response_tokens`)."""
    try:
        return _response_usage(response)
    except _Damaged as exc:
        return str(exc)
