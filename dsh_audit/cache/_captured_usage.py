"""The usage a capture holds: the provider's own token counts, read from each captured response, for
the requests whose log holds none (DSH logs no usage for a title call: ``live-pi/README.md``).

A captured response is what the capture recorded beside a request: a ``wire.jsonl`` record's
``response`` (a summary object with the provider's ``usage``, as the corpus's scripted server wrote
it, a JSON response body as an object, or the body text), a HAR entry's ``response.content.text``
(base64 when its ``encoding`` says so). A body text is a JSON document or a ``text/event-stream``
(SSE) whose ``data:`` events carry the usage: the last OpenAI / DeepSeek chunk with a ``usage``
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
with a count that is not a non-negative integer is none (:func:`~dsh_audit.cache._money.is_count`).
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..capture import CaptureRead, Pairing, align, read_capture
from ..errors import CaptureError
from ..log import parse_json
from ..session import Session, route_apis
from ._money import MAX_TOKENS, Tokens, is_count

__all__ = ["UNMATCHED", "UnusableUsage", "captured_tokens", "captured_usage", "damaged", "from_capture", "given_usage",
           "response_tokens", "usage_tokens"]

#: A line of an event stream, without what ends it (the SSE spec: CRLF, LF or CR); an empty one is none.
_LINE = re.compile(r"[^\r\n]+")
#: The SSE events of Anthropic's stream whose usage starts, and updates, the response's usage.
_START, _DELTA = "message_start", "message_delta"


@dataclass(frozen=True, slots=True)
class UnusableUsage(Tokens):
    """What a capture tells of a request it cannot price (all counts 0, never priced:
    :func:`dsh_audit.cache.entry_usage`): ``why`` it is unpriced, which every view says in place of
    "usage not logged" (:func:`damaged` a usage it holds, :data:`UNMATCHED` a capture that matched
    no request of the session)."""

    why: str = ""


#: Why a request whose log holds no usage is unpriced when ``--capture`` matched no request of its session.
UNMATCHED = "usage not logged; the capture matched no request of this session"


def from_capture(reason: str) -> bool:
    """Whether an unpriced ``reason`` is the capture's (:func:`damaged`, :data:`UNMATCHED`), not the log's.

    Example:
        >>> from_capture(UNMATCHED), from_capture(damaged("w.jsonl line 1", "input_tokens -10").why)
        (True, True)
        >>> from_capture("usage not logged")
        False
    """
    return reason == UNMATCHED or reason.startswith("the capture's usage is damaged (")


def damaged(where: str, reason: str) -> UnusableUsage:
    """The usage the capture's response at ``where`` (file and locator) reports, damaged for ``reason``."""
    return UnusableUsage(why=f"the capture's usage is damaged ({where + ': ' if where else ''}{reason})")


class _Damaged(ValueError):
    """A usage (or a stream of them) no provider writes: why, in words that quote no text of it."""

    @classmethod
    def of(cls, key: str, value: Any) -> Any:
        """Raise it for the field ``key`` holding ``value``, no count or object (typed to stand for one)."""
        raise cls(f"{key} {_shown(value)}")


def _shown(value: Any) -> str:
    """A damaged count in words: a number as JSON has it (a long one by its digits), any other value by its type."""
    if isinstance(value, bool) or value is None:
        return "null" if value is None else str(value).lower()
    if isinstance(value, int):
        return str(value) if abs(value) < 10**21 else f"a {len(str(abs(value)))}-digit integer"
    if isinstance(value, float):
        return repr(value)
    return "a string" if isinstance(value, str) else "a list" if isinstance(value, list) else "an object"


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key, 0)
    if not is_count(value):
        raise _Damaged(f"{key} {_shown(value)}" + (f" (past {MAX_TOKENS:,})" if isinstance(value, int)
                                                     and not isinstance(value, bool) and value > MAX_TOKENS else ""))
    return value


def _detail(usage: Mapping[str, Any], key: str, inner: str) -> int:
    """``usage[key][inner]``: 0 when absent."""
    details = usage.get(key)
    if details is None:
        return 0
    if not isinstance(details, dict):
        raise _Damaged(f"{key} {_shown(details)}")
    return _count(details, inner)


def _part(whole: int, part: int, names: str) -> int:
    """``whole`` less its ``part`` (``names``: the two, for the reason when the part is larger)."""
    if part > whole:
        raise _Damaged(f"{names.split()[1]} {part} > {names.split()[0]} {whole}")
    return whole - part


def _deepseek(usage: Mapping[str, Any]) -> tuple[int, ...]:
    """DeepSeek's hits and misses, which add up to ``prompt_tokens``; one of them missing is
    ``prompt_tokens`` less the other."""
    prompt = _count(usage, "prompt_tokens")
    hit, miss = "prompt_cache_hit_tokens", "prompt_cache_miss_tokens"
    read = _count(usage, hit) if hit in usage else _part(prompt, _count(usage, miss), f"prompt_tokens {miss}")
    miss_count = _count(usage, miss) if miss in usage else _part(prompt, read, f"prompt_tokens {hit}")
    if "prompt_tokens" in usage and read + miss_count != prompt:
        raise _Damaged(f"{hit} {read} + {miss} {miss_count} != prompt_tokens {prompt}")
    return miss_count, read, 0, _count(usage, "completion_tokens"), _detail(usage, "completion_tokens_details",
                                                                             "reasoning_tokens")


def _included(usage: Mapping[str, Any], total: str, details: str, out: str, reasoning: str) -> tuple[int, ...]:
    """A usage whose input count ``total`` includes its cached tokens (``details.cached_tokens``)."""
    whole, read = _count(usage, total), _detail(usage, details, "cached_tokens")
    return _part(whole, read, f"{total} cached_tokens"), read, 0, _count(usage, out), _detail(usage, reasoning,
                                                                                               "reasoning_tokens")


def _anthropic(usage: Mapping[str, Any]) -> tuple[int, ...]:
    return (_count(usage, "input_tokens"), _count(usage, "cache_read_input_tokens"),
            _count(usage, "cache_creation_input_tokens"), _count(usage, "output_tokens"), 0)


def _read_usage(usage: Any) -> Tokens | None:
    """:func:`usage_tokens`, raising :class:`_Damaged` for a usage with a damaged or contradicting count."""
    if not isinstance(usage, dict):
        return None
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
    :func:`~dsh_audit.cache._money.is_count`, parts larger than their whole, DeepSeek's hits and
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


def _parsed(text: str) -> Any:
    """``text`` as JSON (``JSON.parse``'s reading of its UTF-8 bytes: :func:`dsh_audit.log.parse_json`);
    ValueError if it is none."""
    try:
        return parse_json(text.encode("utf-8", "surrogatepass"))
    except UnicodeError as exc:
        raise ValueError(str(exc)) from None


def _convention(payload: Any) -> str:
    """The provider convention of a stream event that carries a usage: Anthropic's Messages events,
    a Responses event, else a chat-completions chunk (OpenAI's, DeepSeek's)."""
    kind = payload.get("type") if isinstance(payload, dict) else None
    if kind in (_START, _DELTA):
        return "anthropic"
    return "responses" if isinstance(kind, str) and kind.startswith("response.") else "chat"


def _sse_usage(text: str) -> Any:
    """The usage an event stream reports, read by its own provider's rules: Anthropic's one
    ``message_start`` usage updated field by field by each ``message_delta``'s, else the last event's
    that carries one. A stream whose usages follow two conventions, holds two ``message_start``
    or a ``message_delta`` before it, or an event whose data is no JSON (but ``[DONE]``) is damaged."""
    found: Any = None
    conventions: set[str] = set()
    for match in _LINE.finditer(text):  # not str.splitlines: U+2028 and U+0085 are text inside a payload
        line = match.group()  # one at a time: a long stream's lines are never all held
        if not line.startswith("data:") or line[5:].strip() == "[DONE]":
            continue
        try:
            payload = _parsed(line[5:].strip())
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


def _text_usage(text: str) -> Any:
    """The usage of a response body text: a JSON document, else an event stream (one that opens as a
    stream is not first parsed whole as JSON: a long one is not copied to fail)."""
    if _STREAM.match(text):
        return _sse_usage(text)
    try:
        return _found_usage(_parsed(text))
    except ValueError:
        return _sse_usage(text)


def _response_usage(response: Any) -> Tokens | None:
    """:func:`response_tokens`, raising :class:`_Damaged` for a damaged usage or body."""
    if isinstance(response, str):
        return _read_usage(_text_usage(response))
    if not isinstance(response, dict):
        return None
    usage = _found_usage(response)
    if usage is not None or response.get("usage") is not None:
        return _read_usage(usage if usage is not None else _Damaged.of("usage", response["usage"]))
    content = response.get("content")  # a HAR response
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        text = content["text"]
        if content.get("encoding") == "base64":
            try:
                text = base64.b64decode(text, validate=True).decode("utf-8")
            except (binascii.Error, ValueError):
                raise _Damaged("content.text is no base64 of UTF-8 text") from None
        return _read_usage(_text_usage(text))
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
    told = _told(response)
    return damaged(where, told) if isinstance(told, str) else told


def _told(response: Any) -> Tokens | str | None:
    """The tokens ``response`` reports, why its usage is damaged, or None (:func:`response_tokens`)."""
    try:
        return _response_usage(response)
    except _Damaged as exc:
        return str(exc)


#: A HAR entry's locator (``entries[3]``), as the HAR loader names it.
_ENTRY = re.compile(r"entries\[(\d+)\]")


@dataclass(frozen=True, slots=True)
class _Kept:
    """What pricing keeps of a ``wire.jsonl`` record as it is read: what its response tells (:func:`_told`)."""

    told: Tokens | str | None


def _kept(record: Any) -> Any:
    """A capture record as :func:`captured_usage` keeps it (:func:`dsh_audit.capture.read_capture`'s
    ``keep``): a HAR file's one document whole (it is held whole as it is read), a ``wire.jsonl``
    record as what its response tells, so no response body is held or read twice."""
    if isinstance(record, dict) and isinstance(record.get("log"), dict):
        return record
    return _Kept(_told(record.get("response") if isinstance(record, dict) else None))


def _told_by_send(read: CaptureRead) -> dict[tuple[str, str], Tokens]:
    """``(source, locator)`` of each captured request of ``read`` -> the tokens its recorded response
    reports (:func:`response_tokens`, a damaged usage named by file and locator); a request whose
    response reports none (a body folder records none) is absent."""
    found: dict[tuple[str, str], Tokens] = {}
    document = read.records[0] if len(read.records) == 1 and isinstance(read.records[0], dict) else None
    entries = document.get("log", {}).get("entries") if document is not None else None
    for index, request in enumerate(read.requests):
        if entries is not None:
            match = _ENTRY.fullmatch(request.locator)
            at = int(match.group(1)) if match else -1
            entry = entries[at] if isinstance(entries, list) and 0 <= at < len(entries) else None
            told = _told(entry.get("response")) if isinstance(entry, dict) else None
        else:
            kept = read.records[index] if index < len(read.records) else None
            told = kept.told if isinstance(kept, _Kept) else None
        where = f"{os.path.basename(request.source)} {request.locator}"
        tokens = damaged(where, told) if isinstance(told, str) else told
        if tokens is not None:
            found[(request.source, request.locator)] = tokens
    return found


def captured_tokens(pairings: Iterable[Pairing], told: Mapping[tuple[str, str], Tokens]
                    ) -> dict[tuple[str, int], Tokens]:
    """``(session id, request index)`` -> the tokens of the response to the request's send, for
    each request of ``pairings`` (:func:`dsh_audit.capture.align`'s) whose response reports usage
    (``told``: :func:`_told_by_send`): the first of its sends (a resend after a failed one too)
    whose does; else, when one's is damaged, the first such (an :class:`UnusableUsage` naming the
    file and locator)."""
    sends: dict[tuple[str, int], list[Tokens]] = {}
    for pairing in pairings:
        request, capture = pairing.request, pairing.capture
        if request is not None and capture is not None and \
                (tokens := told.get((capture.source, capture.locator))) is not None:
            sends.setdefault((request.session_id, request.index), []).append(tokens)
    return {key: next((t for t in found if not isinstance(t, UnusableUsage)), found[0])
            for key, found in sends.items()}


def captured_usage(sessions: Sequence[Session], capture: str | os.PathLike[str]
                   ) -> dict[str, dict[int, Tokens]]:
    """Session id -> request index -> the tokens the capture's response to it reports
    (:func:`captured_tokens`), ``sessions`` aligned with the capture together, as every view aligns
    them (:func:`dsh_audit.capture.session_captures`). Each request of a session the capture
    matched no request of is :data:`UNMATCHED` (an :class:`UnusableUsage`), so the views say so.

    Raises:
        CaptureError: the capture cannot be read.
    """
    # one read: each response's usage kept as it is read; a torn tail is said by the views that compare
    read = read_capture(capture, warnings=[], keep=_kept)
    captures = read.requests
    sessions = list({s.id: s for s in reversed(sessions)}.values())[::-1]  # a session read twice: its first copy
    pairs = align([r for s in sessions for r in s.requests], captures, routes=route_apis(sessions))
    matched = {p.request.session_id for p in pairs if p.request is not None and p.capture is not None}
    by_session: dict[str, dict[int, Tokens]] = {
        s.id: {r.index: UnusableUsage(why=UNMATCHED) for r in s.requests} for s in sessions if s.id not in matched}
    for (sid, index), tokens in captured_tokens(pairs, _told_by_send(read)).items():
        by_session.setdefault(sid, {})[index] = tokens
    return by_session


def given_usage(sessions: Sequence[Session], capture: str | os.PathLike[str] | None) -> dict[str, dict[int, Tokens]]:
    """:func:`captured_usage` of the capture given with ``--capture`` (``capture``), which prices the
    requests of ``sessions`` whose log holds no usage; empty without one (a capture found beside a
    log is compared with it, and prices nothing), or when it cannot be read (the views that compare
    it say why, as the log's error).

    Example:
        >>> given_usage([], None)
        {}
    """
    if capture is None:
        return {}
    try:
        return captured_usage(sessions, capture)
    except CaptureError:
        return {}
