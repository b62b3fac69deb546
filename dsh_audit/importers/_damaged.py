"""Another agent's log none of whose records can be read, named as what it is.

A Codex rollout or Claude Code transcript every line of which is damaged (cut short, not UTF-8,
not JSON) is recognised by no content rule (:func:`dsh_audit.log.detect_format` reads whole
records), so the DSH reader's "corrupt session log: header line is not valid JSON" would be all a
user hears of it: the wrong format, with no word of how much was lost. Its damaged lines still
begin as records of their format do (``{"timestamp":...,"type":"session_meta","payload":{...``):
the fields that lead a line, read up to where it breaks, are classified by the one content rule
(:func:`dsh_audit.log.classify_record`), and the error names the format, how many lines are
damaged and the first of them (:func:`every_record_damaged`). Every command that meets such a file
says so in these words (:func:`named_damaged`): ``requests`` as its error, ``check`` and ``validate``
as the message of their header finding.
"""

from __future__ import annotations

import json
import os
from typing import Any

from .._json import NestingError
from ..errors import DshAuditError, MalformedRecordError, UnreadableError
from ..log import classify_record, open_regular, parse_json

__all__ = ["damaged_foreign", "every_record_damaged", "named_damaged"]

#: Each format's log as named in an error, its agent, and where that agent keeps its logs.
_NAMES = {"codex": ("Codex rollout", "Codex", "~/.codex/sessions"),
          "claude-code": ("Claude Code transcript", "Claude Code", "~/.claude/projects")}

#: How many damaged lines are looked into for their format before giving up (once one is told, every
#: line is still read, to be counted).
_SNIFFED = 32

_DECODER = json.JSONDecoder()
_SPACE = " \t\r\n"


def every_record_damaged(fmt: str, path: str, *, lines: list[int], why: str,
                         records: str = "record", first: str = "") -> MalformedRecordError:
    """The error of a log of format ``fmt`` (``codex``, ``claude-code``) whose every one of its
    ``records`` (the kind an importer needs) is damaged: ``lines``, the damaged lines' numbers,
    each ``why`` (``not JSON``); ``first``, what more is known of the first (``(byte 7)``).

    Example:
        >>> print(every_record_damaged("codex", "r.jsonl", lines=[1, 2, 5], why="not JSON"))
        r.jsonl:1: every record of this Codex rollout is damaged: 3 line(s) not JSON, the first at line 1 (hint: nothing in it can be imported; read an intact copy of the rollout: Codex keeps them under ~/.codex/sessions)
    """
    name, agent, home = _NAMES[fmt]
    return MalformedRecordError(f"every {records} of this {name} is damaged: {len(lines)} line(s) {why}, the first at "
                                f"line {lines[0]}{first and ' ' + first}", path=path, line=lines[0],
                                hint=f"nothing in it can be imported; read an intact copy of the "
                                     f"{name.split()[-1]}: {agent} keeps them under {home}")


def named_damaged(error: DshAuditError) -> DshAuditError:
    """``error``, a refusal of a file's first line (not JSON, not UTF-8), or, when the file is a
    Codex rollout or Claude Code transcript every line of which is damaged, the error that says so
    (:func:`damaged_foreign`): what ``requests`` says of the file, and ``check`` and ``validate``.

    Example:
        >>> error = MalformedRecordError("corrupt session log: header line is not valid JSON", path="-", line=1)
        >>> named_damaged(error) is error  # no file of that name: nothing else is known of it
        True
    """
    if not isinstance(error, (MalformedRecordError, UnreadableError)) or error.line != 1 or not error.path:
        return error
    return damaged_foreign(error.path) or error


def damaged_foreign(path: str | os.PathLike[str]) -> DshAuditError | None:
    """The error naming the file at ``path`` as a Codex rollout or Claude Code transcript every line
    of which is damaged (not JSON, not UTF-8), told by the fields its damaged lines begin with; None
    when a line reads as a JSON value (the importer or the DSH reader says what is wrong then), when
    no damaged line begins as a record of a format, or when the file cannot be read again."""
    name = os.fspath(path)
    damaged: list[int] = []
    undecoded: dict[int, int] = {}  # a line not UTF-8 -> the offset of its first bad byte
    fmt: str | None = None
    try:
        with open_regular(name, what="log") as handle:
            for number, raw in enumerate(handle, start=1):
                if not raw.strip():
                    continue
                try:
                    parse_json(raw)
                except NestingError:
                    return None  # JSON, too deep to read: the importer's own error says so
                except ValueError as exc:  # UnicodeDecodeError among them
                    damaged.append(number)
                    if isinstance(exc, UnicodeDecodeError):
                        undecoded[number] = exc.start
                    if fmt is None:
                        fmt = classify_record(_leading_fields(raw.decode("utf-8", errors="replace")), first=False)
                    if fmt is None and len(damaged) >= _SNIFFED:
                        return None  # no line of a format: binary or another text, not read to its end
                    continue
                return None
    except (DshAuditError, OSError, MemoryError):
        return None
    if fmt not in _NAMES or not damaged:
        return None
    return every_record_damaged(fmt, name, lines=damaged, **_why(damaged, undecoded))


def _why(damaged: list[int], undecoded: dict[int, int]) -> dict[str, str]:
    """How the damaged lines are damaged, as :func:`every_record_damaged` says it: not JSON, not
    valid UTF-8 (the first line's first bad byte, as the DSH reader says it), or some of each.

    Example:
        >>> _why([1, 2], {}), _why([1, 2], {1: 7, 2: 0}), _why([1, 2], {1: 7})
        ({'why': 'not JSON'}, {'why': 'not valid UTF-8', 'first': '(byte 7)'}, {'why': 'not JSON or not valid UTF-8 (1 of them)', 'first': '(not valid UTF-8 (byte 7))'})
    """
    if not undecoded:
        return {"why": "not JSON"}
    byte = undecoded.get(damaged[0])
    if len(undecoded) == len(damaged):
        return {"why": "not valid UTF-8", "first": f"(byte {byte})"}
    return {"why": f"not JSON or not valid UTF-8 ({len(undecoded)} of them)",
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
