"""Session header rules (DSH2xx, spec §1.3, §1.6, §1.7; format-versions §4).

DSH checks the version before anything else and refuses the rest of the header shape with one
message ("first line is not a session header"); here every field gets its own rule, and the
events are still checked afterwards with the shapes of the header's version.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import did_you_mean
from ..log import (BOM_HINT, BOM_REFUSAL, LATEST_VERSION, SUPPORTED_VERSIONS, Line, TornTail, canonical_generation, foreign_record,
                   header_keys, is_absolute_path, is_safe_int, parse_json, unknown_header_keys)
from .._listing import listed
from .._show import missing_or, shown
from ._model import Severity
from ._sink import Sink
from ._source import Fatal, _refuse_foreign, foreign_header, header_refused

__all__ = ["HeaderInfo", "check_header"]


@dataclass(frozen=True, slots=True)
class HeaderInfo:
    """What the event rules need from the header."""

    version: int
    session_id: str
    raw: dict[str, Any]

    @property
    def seed_length(self) -> int | None:
        seed = self.raw.get("seedLength")
        return int(seed) if is_safe_int(seed) and seed >= 0 else None


def _non_negative(value: Any) -> bool:
    return is_safe_int(value) and value >= 0


def check_header(line: Line | None, sink: Sink, *, lenient: bool, max_version: int,
                 torn: Sequence[TornTail] = ()) -> HeaderInfo:
    """Check the header line (None: the file holds no complete line, only ``torn`` bytes if any);
    raise Fatal when the log cannot be read at all."""
    if line is None:
        _no_line(sink, torn)
        raise Fatal
    try:
        value = parse_json(line.raw)
    except UnicodeDecodeError as exc:
        header_refused(sink, "DSH102", f"header line is not valid UTF-8 (byte {exc.start})")
        raise Fatal from None
    except ValueError:
        if line.raw.startswith(codecs.BOM_UTF8):  # an editor's or a Windows tool's: JSON.parse refuses it
            header_refused(sink, "DSH201", BOM_REFUSAL, hint=BOM_HINT)
        else:
            header_refused(sink, "DSH201", "header line is not valid JSON")
        raise Fatal from None
    if not isinstance(value, dict) or value.get("type") != "session":
        foreign = foreign_record(sink.path, value)
        if foreign is not None:  # another agent's log: one finding, not its records' field errors
            _refuse_foreign(sink, *foreign)  # as every reader refuses it
            raise Fatal
        if foreign_header(sink):  # JSON that is no record ({}, null) before another agent's records
            raise Fatal
        sink.add("DSH202", 'first line is not an object with type "session"', line=1)
        value = value if isinstance(value, dict) else {}
    version = _check_version(value, sink, lenient=lenient, max_version=max_version)
    sink.version = version
    _check_fields(value, sink, version=version, lenient=lenient)
    _check_keys(value, sink, version=version)
    sid: str = value["id"] if isinstance(value.get("id"), str) else "?"
    return HeaderInfo(version=version, session_id=sid, raw=value)


def _no_line(sink: Sink, torn: Sequence[TornTail]) -> None:
    """The file holds no complete line: empty (DSH201), a first zstd frame cut off with no line
    recovered from it (DSH103, a crash mid-write, and DSH201), or bytes with no newline at all
    (DSH101: not a DSH log, whose header is a whole line)."""
    if not torn:
        sink.add("DSH201", "empty file: no session header line", line=1)
        return
    tail = torn[0]
    if tail.reason.startswith("zstd frame"):
        sink.add("DSH103", str(tail), line=1)
        sink.add("DSH201", "no session header line: the file's first zstd frame is cut off and no complete line "
                 "was recovered from it", line=1)
        return
    sink.add("DSH101", f"no complete line: the file's {tail.dropped_bytes} bytes hold no newline, so there is no "
             "session header line (not a DSH log, or cut off inside its first line)", line=1)


def _check_version(value: dict[str, Any], sink: Sink, *, lenient: bool, max_version: int) -> int:
    """The version the body is read with: the header's, or with none that is a number or a released
    one, the file name's generation (``session.v4.jsonl``: 4; ``session.jsonl``: 0), so that a v4
    body is not checked against v0's vocabulary for a quoted or mistyped version."""
    version = value.get("version")
    name = os.path.basename(sink.path)
    generation = canonical_generation(name)
    if "version" not in value or not isinstance(version, (int, float)) or isinstance(version, bool):
        message = ("header has no version" if "version" not in value
                   else f"header version {shown(version)} is not a number")
        # --lenient fills a v0 log's missing version only, as the reader does (log._header._lenient_fills)
        severity: Severity | None = "warning" if lenient and "version" not in value and not generation else None
        if not generation or generation not in SUPPORTED_VERSIONS:  # session.jsonl, or no released name: v0
            sink.add("DSH203", message, line=1, severity=severity)
            return 0
        sink.add("DSH203", message, line=1, severity=severity,
                 hint=f'write "version": {generation}, a JSON number: the generation the file name {name} says '
                 f"(its body is checked as v{generation})")
        return generation
    if version > max_version:
        readable = "v0" if max_version == 0 else f"v0-v{max_version}"
        if version > LATEST_VERSION:
            sink.add("DSH204", f"log format v{version} is newer than this dsh-audit reads (v0-v{LATEST_VERSION}): "
                     "written by a newer harness", line=1)
        else:
            sink.add("DSH204", f"log format v{version} is newer than --max-version {max_version} reads "
                     f"({readable}); this dsh-audit reads up to v{LATEST_VERSION}", line=1)
        if version not in SUPPORTED_VERSIONS:
            raise Fatal  # no released shapes to check the events against
        return int(version)
    if version not in SUPPORTED_VERSIONS:
        sink.add("DSH205", f"log format v{version} is not a released version", line=1)
        return generation if generation is not None and generation in SUPPORTED_VERSIONS else 0  # as for none
    if generation is not None and generation != version:
        sink.add("DSH206", f"header says v{version} but the file name {name} "
                 f"is generation v{generation}", line=1)
    elif version == 1:  # (a v1 header in session.jsonl is DSH206's finding)
        sink.add("DSH217", "log format v1 was written only by development builds, never by a release: "
                 "DSH 0.1.0-rc.8 reads only v0 and refuses this log", line=1)
    return int(version)


def _check_fields(value: dict[str, Any], sink: Sink, *, version: int, lenient: bool) -> None:
    def bad(rule: str, message: str, *, soft: bool = False) -> None:
        sink.add(rule, message, line=1, severity="warning" if soft and lenient else None)

    if not isinstance(value.get("id"), str):
        bad("DSH207", missing_or(value, "id", "is not a string", owner="header", prefix="header "))
    if not _non_negative(value.get("createdAt")):
        bad("DSH208", missing_or(value, "createdAt", "is not a non-negative safe integer",
                                 owner="header", prefix="header "))
    if "delegationDepth" not in value:
        bad("DSH209", "header has no delegationDepth", soft=version == 0)  # the reader fills a v0 header's only
    elif not _non_negative(value["delegationDepth"]):
        bad("DSH209", f"header delegationDepth {shown(value['delegationDepth'])} is not a non-negative safe integer")
    if value.get("origin") not in (None, "subagent"):
        bad("DSH210", f"header origin {shown(value['origin'])} is not \"subagent\"")
    if value.get("agentPreset") is not None and not isinstance(value["agentPreset"], str):
        bad("DSH211", f"header agentPreset {shown(value['agentPreset'])} is not a string")
    cwd = value.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        bad("DSH212", f"header cwd {shown(cwd)} is not a string")
    elif isinstance(cwd, str) and not is_absolute_path(cwd):
        bad("DSH212", f'header cwd must be an absolute path, got "{cwd}"', soft=True)
    if value.get("parentSession") is not None and not isinstance(value["parentSession"], str):
        bad("DSH213", f"header parentSession {shown(value['parentSession'])} is not a string")
    if value.get("seedLength") is not None and not _non_negative(value["seedLength"]):
        bad("DSH214", f"header seedLength {shown(value['seedLength'])} is not a non-negative safe integer")
    retired = [k for k in ("sandboxMode", "approvalPolicy") if k in value]
    if retired:
        bad("DSH215", f"header uses retired field(s) {', '.join(retired)}")
    if version >= 2 and (not isinstance(value.get("isSeeded"), bool) or "seedLength" in value):
        bad("DSH216", f"a v{version} header needs a boolean isSeeded and no seedLength")


#: How many unknown header keys get a DSH218 finding of their own; the rest share one, which names
#: a few and counts the others, as the reader's refusal does: a header of 20,000 keys is 4 findings,
#: one of 4 keys 4 too.
_KEYS_ALONE = 3


def _check_keys(value: dict[str, Any], sink: Sink, *, version: int) -> None:
    """DSH218 for each key the header's version does not know (the reader's list of keys,
    :func:`~dsh_audit.log.unknown_header_keys`; the retired sandboxMode and approvalPolicy are
    DSH215's, a v2+ seedLength DSH216's): a v2+ reader refuses it (the rule's severity by
    version); rc.8 drops it from a v0 header, and with it what it meant."""
    unknown = unknown_header_keys(value, version)
    alone = len(unknown) if len(unknown) <= _KEYS_ALONE + 1 else _KEYS_ALONE  # the rest: two or more
    for key in unknown[:alone]:
        sink.add("DSH218", f"header key {shown(key)} is not a v{version} header key{_nearest(key, version)}",
                 line=1)
    rest = unknown[alone:]
    if rest:
        named = listed([shown(key) for key in rest[:_KEYS_ALONE]] + rest[_KEYS_ALONE:], shown=_KEYS_ALONE)
        sink.add("DSH218", f"header keys {named} are not v{version} header keys either", line=1)


def _nearest(key: str, version: int) -> str:
    """What the unknown header ``key`` was probably meant as: a key of another version (isSeeded
    in a v0 header), or one of its own a letter or two away (``orgin``)."""
    if version < 2 and key == "isSeeded":
        return " (isSeeded is a v2+ key; a v0/v1 child writes seedLength)"
    return did_you_mean(key, header_keys(version), cutoff=0.8, shown=str)
