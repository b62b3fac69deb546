"""Which agent wrote a log, told from its first records: DSH, Claude Code or Codex.

Formats are detected from content, never from names: a DSH log starts with a
``{"type":"session",...}`` header (or is a zstd frame); a Codex rollout line is
``{timestamp, type, payload}`` with ``type`` one of ``session_meta``, ``response_item``,
``turn_context``, ``event_msg``, ``compacted``; a Claude Code transcript record has a ``type``
such as ``user``, ``assistant``, ``system`` or ``summary`` next to ``sessionId``, ``uuid``,
``parentUuid`` or ``leafUuid``. :mod:`dsh_audit.importers` reads the foreign ones.

Damaged lines (cut short, not UTF-8, not JSON) are told too (:func:`sniff_format`): a damaged line
still begins as the records of its format do (``{"timestamp":...,"type":"session_meta","payload":{...``),
and the fields that lead it, read up to where it breaks, are classified by the same rule. So a
rollout whose first line alone is damaged is still a rollout (its importer reads it and says the
line is skipped), and one every line of which is damaged is named as what it is
(:func:`every_record_damaged`), never as a damaged DSH log. Only a bounded head of each line is
looked at (:data:`_HEAD` bytes; the rest of a longer line is skipped in pieces, never held), and
lines that begin as no format's records are given up on after ``max_records`` of them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any, BinaryIO, NamedTuple

from .._json import NestingError
from ..errors import DamagedLogError
from ._decode import ZSTD_MAGIC
from ._json_line import parse_json
from ._outputs import open_regular

__all__ = ["FormatSniff", "begins_as_header", "classify_record", "detect_format", "every_record_damaged",
           "sniff_format"]

_CODEX_TYPES = frozenset({"session_meta", "response_item", "turn_context", "event_msg", "compacted"})
_CLAUDE_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot", "attachment",
                           "progress", "queue-operation", "custom-title"})
_CLAUDE_KEYS = ("sessionId", "uuid", "parentUuid", "leafUuid", "messageId")
#: How much of one line is looked at: a longer line is told by the fields it begins with.
_HEAD = 1 << 20
#: Each foreign format's log as named in an error, its agent, and where that agent keeps its logs.
_NAMES = {"codex": ("Codex rollout", "Codex", "~/.codex/sessions"),
          "claude-code": ("Claude Code transcript", "Claude Code", "~/.claude/projects")}
_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


class FormatSniff(NamedTuple):
    """What :func:`sniff_format` told of a file: its ``format`` (None when no record says it), and
    ``damaged``, the error naming a Codex rollout or Claude Code transcript every line of which is
    damaged (then ``format`` is None: no record of it can be read)."""

    format: str | None
    damaged: DamagedLogError | None = None


def classify_record(record: dict[str, Any], *, first: bool) -> str | None:
    """Name the format one decoded record belongs to, or ``None`` when none fits.

    Args:
        record: one JSON object line of a log.
        first: whether it is the file's first record (only a first record can be a DSH header).

    Returns:
        ``"dsh"``, ``"claude-code"``, ``"codex"`` or ``None``.

    Example:
        >>> classify_record({"type": "session", "id": "s1", "version": 4}, first=True)
        'dsh'
        >>> classify_record({"timestamp": "2026-01-05T10:00:00Z", "type": "event_msg", "payload": {}}, first=False)
        'codex'
    """
    kind = record.get("type")
    if not isinstance(kind, str):
        return None
    if first and kind == "session" and "id" in record:
        return "dsh"
    if kind in _CODEX_TYPES and "payload" in record and "timestamp" in record:
        return "codex"
    if kind in _CLAUDE_TYPES and any(key in record for key in _CLAUDE_KEYS):
        return "claude-code"
    return None


def begins_as_header(head: bytes) -> bool:
    """Whether ``head``, the first bytes of a file (its first line, or as much of it as was read),
    begin as a DSH log: a zstd frame, or a first line whose top-level ``type`` is ``"session"``,
    read as :func:`_leading_fields` reads a line (any JSON whitespace, any key order, up to where
    the line breaks or ``head`` ends).

    Example:
        >>> begins_as_header(b'{"type": "session", "version": 4, "id": "s1"}\\n')
        True
        >>> begins_as_header(b'\\n {"version": 4,\\t"type" : "session"')
        True
        >>> begins_as_header(b'{"version":4, "type": "sess')
        False
    """
    if head[:4] == ZSTD_MAGIC:
        return True
    if b'"type":"session"' in head[:40]:  # compact, after a few bytes that are not JSON (a BOM): refused when read
        return True
    line = head.lstrip(_SPACE.encode()).split(b"\n", 1)[0]  # blank lines before it, as before
    return line.startswith(b"{") and _leading_fields(line.decode("utf-8", errors="replace")).get("type") == "session"


def detect_format(path: str | os.PathLike[str], *, max_records: int = 32) -> str | None:
    """Name the format of a log file from its first records, or ``None`` when none fits
    (:func:`sniff_format`'s ``format``).

    Args:
        path: the file.
        max_records: how many leading lines to look at before giving up.

    Returns:
        ``"dsh"``, ``"claude-code"``, ``"codex"`` or ``None``.

    Raises:
        UnreadableError: the file cannot be opened.

    Example:
        >>> detect_format("tests/data/importers/codex/rollout-2026-01-05T10-00-00-x.jsonl")  # doctest: +SKIP
        'codex'
    """
    return sniff_format(path, max_records=max_records).format


def sniff_format(path: str | os.PathLike[str], *, max_records: int = 32) -> FormatSniff:
    """Tell the format of a log file from its first records, damaged ones too.

    The first whole record a format's rule fits names the format (a damaged first line does not
    hide the rollout after it). While the lines read are all damaged and one of them begins as a
    Codex or Claude Code record, the file is read on (only each line's head) to its first whole
    record; when there is none, :attr:`FormatSniff.damaged` is the error naming the file as a log
    of that format every line of which is damaged, with how many and the first. Lines that begin as
    no format's records are given up on after ``max_records`` of them.

    Raises:
        UnreadableError: the file cannot be opened.

    Example:
        >>> sniff_format("sample_logs/chat/session.jsonl")
        FormatSniff(format='dsh', damaged=None)
    """
    name = os.fspath(path)
    looked = records = 0  # non-blank lines; lines that are (or may be) whole records
    first: int | None = None  # the first damaged line
    count = 0  # damaged lines
    byte: int | None = None  # the first bad byte of the first damaged line, when it is not UTF-8
    undecoded = 0  # damaged lines not UTF-8
    led: str | None = None  # the format the damaged lines begin as, while no record is read
    with open_regular(name) as handle:
        if handle.read(4) == ZSTD_MAGIC:
            return FormatSniff("dsh")
        handle.seek(0)
        for number, raw, whole in _heads(handle):
            if not raw.strip():
                continue
            looked += 1
            try:
                if not whole:  # not read to its end: told by the fields it begins with, damaged or not
                    found = classify_record(_leading_fields(raw.decode("utf-8", errors="replace")), first=False)
                    record: Any = None
                else:
                    record = parse_json(raw)  # as JSON.parse reads it: a lone surrogate escape is JSON
                    found = classify_record(record, first=records == 0) if isinstance(record, dict) else None
            except NestingError:  # JSON, too deep to read: a record no rule fits
                found = None
            except ValueError as exc:  # not JSON, not UTF-8 (UnicodeDecodeError is a ValueError)
                count += 1
                if first is None:
                    first = number
                    byte = exc.start if isinstance(exc, UnicodeDecodeError) else None
                undecoded += isinstance(exc, UnicodeDecodeError)
                if led is None and not records:
                    led = classify_record(_leading_fields(raw.decode("utf-8", errors="replace")), first=False)
                if led is None and looked >= max_records:
                    break
                continue
            if found is not None:
                return FormatSniff(found)
            records += 1
            led = None  # a record no rule fits: the damaged lines before it do not name the file
            if records >= max_records:
                break
        else:
            if led in _NAMES and first is not None and not records:
                return FormatSniff(None, every_record_damaged(led, name, lines=[first], count=count,
                                                              **_why(count, byte, undecoded)))
    return FormatSniff(None)


def every_record_damaged(fmt: str, path: str, *, lines: list[int], why: str, records: str = "record",
                         first: str = "", count: int | None = None) -> DamagedLogError:
    """The error of a log of format ``fmt`` (``codex``, ``claude-code``) every one of whose
    ``records`` (the kind an importer needs) is damaged: ``lines``, the damaged lines' numbers
    (or the first of them, with ``count``, how many), each ``why`` (``not JSON``); ``first``, what
    more is known of the first (``(byte 7)``).

    Example:
        >>> print(every_record_damaged("codex", "r.jsonl", lines=[1, 2, 5], why="not JSON"))
        r.jsonl:1: every record of this Codex rollout is damaged: 3 line(s) not JSON, the first at line 1 (hint: nothing in it can be imported; read an intact copy of the rollout: Codex keeps them under ~/.codex/sessions)
    """
    name, agent, home = _NAMES[fmt]
    many = len(lines) if count is None else count
    return DamagedLogError(f"every {records} of this {name} is damaged: {many} line(s) {why}, the first at "
                                f"line {lines[0]}{first and ' ' + first}", path=path, line=lines[0],
                                hint=f"nothing in it can be imported; read an intact copy of the "
                                     f"{name.split()[-1]}: {agent} keeps them under {home}")


def _heads(handle: BinaryIO) -> Iterator[tuple[int, bytes, bool]]:
    """``(number, head, whole)`` of each line: its first :data:`_HEAD` bytes, and whether they are
    all of it (the rest of a longer line is read past in pieces of that size, never held).

    Example:
        >>> import io
        >>> list(_heads(io.BytesIO(b'{"a":1}\\n\\nxy')))
        [(1, b'{"a":1}\\n', True), (2, b'\\n', True), (3, b'xy', True)]
    """
    number = 0
    while True:
        raw = handle.readline(_HEAD)
        if not raw:
            return
        number += 1
        whole = raw.endswith(b"\n") or len(raw) < _HEAD
        if not whole:
            while True:
                rest = handle.readline(_HEAD)
                if not rest or rest.endswith(b"\n"):
                    break
        yield number, raw, whole


def _why(count: int, byte: int | None, undecoded: int) -> dict[str, str]:
    """How ``count`` damaged lines are damaged, as :func:`every_record_damaged` says it: not JSON,
    not valid UTF-8 (``undecoded`` of them; ``byte``, the first bad byte of the first damaged line,
    as the DSH reader says it), or some of each.

    Example:
        >>> _why(2, None, 0), _why(2, 7, 2), _why(2, 7, 1)
        ({'why': 'not JSON'}, {'why': 'not valid UTF-8', 'first': '(byte 7)'}, {'why': 'not JSON or not valid UTF-8 (1 of them)', 'first': '(not valid UTF-8 (byte 7))'})
    """
    if not undecoded:
        return {"why": "not JSON"}
    if undecoded == count:
        return {"why": "not valid UTF-8", "first": f"(byte {byte})"}
    return {"why": f"not JSON or not valid UTF-8 ({undecoded} of them)",
            "first": "" if byte is None else f"(not valid UTF-8 (byte {byte}))"}


def _leading_fields(text: str) -> dict[str, Any]:
    """The top-level fields a damaged JSON object line begins with, read up to where it breaks: a
    field whose value is cut short is kept, as None (its key is all that can be told).

    Example:
        >>> _leading_fields('{"timestamp":"2026-01-05T10:00:00Z", "type":"event_msg","payload":{"type":"tok')
        {'timestamp': '2026-01-05T10:00:00Z', 'type': 'event_msg', 'payload': None}
        >>> _leading_fields('garbage'), _leading_fields('\\ufffd{"type": "user", "uuid"')
        ({}, {'type': 'user'})
    """
    fields: dict[str, Any] = {}
    at = text.find("{")
    if at < 0:
        return fields
    at += 1
    while True:
        at = _skip(text, at)
        try:
            key, at = _DECODER.raw_decode(text, at)
        except ValueError:
            return fields
        at = _skip(text, at)
        if not isinstance(key, str) or text[at:at + 1] != ":":
            return fields
        try:
            fields[key], at = _DECODER.raw_decode(text, _skip(text, at + 1))
        except (ValueError, RecursionError):
            fields[key] = None
            return fields
        at = _skip(text, at)
        if text[at:at + 1] != ",":
            return fields
        at += 1


def _skip(text: str, at: int) -> int:
    while at < len(text) and text[at] in _SPACE:
        at += 1
    return at
