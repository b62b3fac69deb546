"""What every importer produces, and the helpers they share to build DSH-shaped requests.

An importer turns another agent's session log into :class:`dsh_audit.replay.Request` values whose
``messages`` follow DSH's message shape (spec §5: ``{id, role, content, source}`` with ``text``,
``reasoning``, ``tool-call``, ``tool-result`` and ``image`` blocks) and whose ``usage`` is a DSH
``TokenUsage`` (spec §5.6: disjoint buckets, ``inputTokens`` uncached). ``messages_sha256`` is the
hex SHA-256 of ``JSON.stringify(messages)``, the digest DSH requests carry, so prefix comparisons
work the same way on imported sessions. Every "seq" of an imported request is a 1-based line
number of the imported file.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, BinaryIO

from .._json import MAX_DEPTH, NestingError
from .._usage_rule import MAX_SAFE, count_of
from ..errors import UnreadableError
from ..jsjson import stringify_bytes
from ..log import parse_json
from ..replay import Request

if TYPE_CHECKING:
    from _hashlib import HASH

__all__ = ["NOT_LOGGED", "ImportedSession", "MessageDigest", "damaged_usage_note", "iso_seconds", "line_warning",
           "open_input", "read_jsonl", "token_count", "token_counts", "tool_result_message"]


@dataclass(frozen=True, slots=True)
class ImportedSession:
    """One foreign session log mapped onto dsh-audit's request model.

    Attributes:
        format: ``claude-code`` or ``codex``.
        session_id: the session's id as the format names it.
        requests: one :class:`Request` per model call, in the order the calls were made.
        notes: what this log cannot tell (missing system prompt, approximations taken), each once.
        path: the file read.
        warnings: damaged lines skipped while reading (``file:line: why``).
        cwd: the working directory the log records first, when it records one.
        created_at: the first record's time in milliseconds since the epoch, when known.
        title: the session's title as the agent names it (Claude Code: its ``/resume`` title),
            when the log records one; the :class:`~dsh_audit.session.Session`'s ``title``.
    """

    format: str
    session_id: str
    requests: tuple[Request, ...]
    notes: tuple[str, ...] = ()
    path: str = ""
    warnings: tuple[str, ...] = ()
    cwd: str | None = None
    created_at: int | None = None
    title: str | None = None

    def times(self) -> dict[int, tuple[float, float | None]]:
        """Request index -> ``(sent, answered)`` seconds since the epoch, from the records' timestamps.

        The shape of :class:`dsh_audit.replay.RequestTime`; requests without a send time are left out.
        """
        out: dict[int, tuple[float, float | None]] = {}
        for request in self.requests:
            time = request.extra.get("time") or {}
            if time.get("sent") is not None:
                out[request.index] = (time["sent"], time.get("done"))
        return out


def open_input(path: str | os.PathLike[str]) -> BinaryIO:
    """Open ``path`` to read bytes (the caller closes it).

    Raises:
        UnreadableError: the file cannot be opened.
    """
    name = os.fspath(path)
    try:
        return open(name, "rb")  # noqa: SIM115 - the caller's with closes it
    except OSError as exc:
        raise UnreadableError(f"cannot open: {exc.strerror}", path=name) from None


def line_warning(path: str, line: int, why: str) -> str:
    """The warning of line ``line`` of the imported file ``path``: ``file:line: why``, the one form
    of every importer's warning (a damaged line's, a damaged record's), which the CLI prints as is.

    Example:
        >>> line_warning("a.jsonl", 3, "not JSON, skipped")
        'a.jsonl:3: not JSON, skipped'
    """
    return f"{path}:{line}: {why}"


def read_jsonl(path: str | os.PathLike[str], warnings: list[str],
               damaged: list[int] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, record)`` for every JSON object line; damaged lines become warnings,
    and their numbers go to ``damaged`` too (when given).

    Raises:
        UnreadableError: the file cannot be opened, a line nests arrays or objects more than
            :data:`MAX_DEPTH` levels deep (valid JSON, refused as the DSH reader refuses it), or a
            line does not fit in the memory left under a limit.
    """
    name = os.fspath(path)
    with open_input(name) as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                value = parse_json(raw)
            except NestingError:
                raise UnreadableError(f"line nests JSON arrays or objects more than {MAX_DEPTH} levels deep; "
                                      "dsh-audit cannot process it", path=name, line=number,
                                      hint="the agent that wrote it may still read it; dsh-audit's recursive "
                                           "serialisers stop here") from None
            except MemoryError:
                raise UnreadableError("line does not fit in memory", path=name, line=number,
                                      hint="import the log where more memory is allowed (ulimit -v)") from None
            except ValueError:
                torn = not raw.endswith(b"\n")
                warnings.append(line_warning(name, number, f"{'torn last line' if torn else 'not JSON'}, skipped"))
            else:
                if isinstance(value, dict):
                    yield number, value
                    continue
                warnings.append(line_warning(name, number, "not a JSON object, skipped"))
            if damaged is not None:
                damaged.append(number)


#: The last float of seconds since the epoch a UTC time can be shown at: the one below
#: 10000-01-01T00:00:00Z, which no datetime holds (9999-12-31T23:59:59.999969Z).
_LAST = math.nextafter(datetime.max.replace(tzinfo=UTC).timestamp(), 0.0)


def iso_seconds(value: Any) -> float | None:
    """Seconds since the epoch of an ISO 8601 timestamp (``2026-01-02T03:04:05.678Z``), else None;
    None too for a time that falls outside the years 1-9999 in UTC (``9999-12-31T23:59:59-01:00``),
    which no date can show. A time in them is never rounded up out of them: the last microseconds
    of 9999 (whose nearest float is 10000-01-01T00:00:00Z) are the last float below.

    Example:
        >>> iso_seconds("2026-01-02T03:04:05.5Z"), iso_seconds("9999-12-31T23:59:59.999999Z") == _LAST
        (1767323045.5, True)
        >>> iso_seconds("9999-12-31T23:59:59-01:00"), iso_seconds("noon")
        (None, None)
    """
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC)
    except (ValueError, OverflowError, OSError):  # not a time; or none of the years 1-9999 in UTC
        return None
    return min(moment.timestamp(), _LAST)


def token_count(value: Any) -> int | None:
    """A logged token count as an int, or None when it is damaged: a bool, a string, a negative,
    fractional or non-finite number, or one above :data:`~dsh_audit._usage_rule.MAX_SAFE`
    (``1e400`` reads as infinity). An integral float (``1e3``, as another JSON writer may spell it)
    is its int. The project's one rule for a count (:func:`~dsh_audit._usage_rule.count_of`, bounded
    by a safe integer), the bound the Codex importer judges a cumulative total by (session 44: 2**53
    was a count here and none there).

    Example:
        >>> token_count(12), token_count(1e3), token_count(7.9), token_count(-1), token_count(True), token_count("5")
        (12, 1000, None, None, None, None)
        >>> token_count(2**53 - 1), token_count(2**53), token_count(float("inf"))
        (9007199254740991, None, None)
    """
    return count_of(value, most=MAX_SAFE)


def token_counts(raw: dict[str, Any], fields: tuple[str, ...]) -> tuple[dict[str, int], tuple[str, ...]]:
    """The :func:`token_count` of each of ``fields`` in a usage record ``raw`` (an absent one is 0),
    and the fields whose count is damaged.

    Example:
        >>> token_counts({"a": 5, "b": -1}, ("a", "b", "c"))
        ({'a': 5, 'c': 0}, ('b',))
    """
    counts: dict[str, int] = {}
    damaged: list[str] = []
    for name in fields:
        count = token_count(raw.get(name, 0))
        if count is None:
            damaged.append(name)
        else:
            counts[name] = count
    return counts, tuple(damaged)


#: What :func:`damaged_usage_note` says is done with the response's usage.
NOT_LOGGED = "this response's usage is treated as not logged"


def damaged_usage_note(fields: tuple[str, ...]) -> str:
    """Why a usage record holding damaged counts is warned of (:func:`line_warning` names its file
    and line): the response's usage is not logged.

    Example:
        >>> print(damaged_usage_note(("output_tokens",)))
        token count output_tokens is negative, not an integer or above 2**53 - 1: this response's usage is treated as not logged
    """
    names = ", ".join(fields)
    verb, being = ("count", "is") if len(fields) == 1 else ("counts", "are")
    return f"token {verb} {names} {being} negative, not an integer or above 2**53 - 1: {NOT_LOGGED}"


def tool_result_message(message_id: str, call_id: str, content: list[dict[str, Any]], *,
                        is_error: bool) -> dict[str, Any]:
    """A DSH ``ToolResultMessage``: a user message holding exactly one ``tool-result`` block."""
    block: dict[str, Any] = {"type": "tool-result", "toolCallId": call_id, "content": content}
    if is_error:
        block["isError"] = True
    return {"id": message_id, "role": "user", "content": [block], "source": {"kind": "tool", "callId": call_id}}


@dataclass
class MessageDigest:
    """``sha256(JSON.stringify(messages))`` with each message serialised once per import.

    Importers share message dicts between requests (a later request's prompt extends an earlier
    one). Fragments are cached by object identity and, when a request's messages extend the
    previous request's, hashing resumes from the previous state, so digesting every request costs
    about the total size of the log rather than its square.
    """

    _fragments: dict[int, tuple[dict[str, Any], bytes]] = field(default_factory=dict)
    _last: tuple[tuple[dict[str, Any], ...], HASH] | None = None

    def _fragment(self, message: dict[str, Any]) -> bytes:
        key = id(message)
        cached = self._fragments.get(key)
        if cached is None or cached[0] is not message:
            cached = (message, stringify_bytes(message))
            self._fragments[key] = cached
        return cached[1]

    def __call__(self, messages: tuple[dict[str, Any], ...]) -> str:
        start = 0
        if self._last is not None and len(self._last[0]) <= len(messages) and \
                messages[: len(self._last[0])] == self._last[0]:
            start, digest = len(self._last[0]), self._last[1].copy()
        else:
            digest = hashlib.sha256(b"[")
        for position in range(start, len(messages)):
            if position:
                digest.update(b",")
            digest.update(self._fragment(messages[position]))
        self._last = (messages, digest.copy())
        digest.update(b"]")
        return digest.hexdigest()

