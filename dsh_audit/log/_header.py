"""The session header line: parse it and refuse it the way DSH does (spec §1.3).

Line 1 of a log is checked before any event: it must be JSON, carry a released format version that
agrees with the file name's generation, and have the fields ``Session.fromRestore`` needs (DSH's
``packages/core/session/src/index.ts``). :func:`parse_header` raises what DSH refuses outright and
returns the one check DSH makes later (the header's metadata) so the reader can rank it against
event failures.
"""

from __future__ import annotations

import codecs
import math
import ntpath
import os
import posixpath
import re
from typing import Any

from ..errors import DshAuditError, MalformedRecordError, UnreadableError, UnsupportedFormatError
from ._decode import Line
from ._format import classify_record, sniff_format
from ._json_line import MAX_DEPTH, NestingError, parse_json
from .._listing import listed
from .._show import cut, shown, typed
from ..jsjson import js_number
from ._shapes import is_safe_int
from ._types import SessionHeader
from ._versions import LATEST_VERSION, SUPPORTED_VERSIONS, canonical_generation

__all__ = ["BOM_HINT", "BOM_REFUSAL", "TOO_DEEP", "TOO_DEEP_HINT", "foreign_record", "foreign_refusal", "header_keys", "header_refusal",
           "is_fixture_token", "parse_header", "unknown_header_keys"]


TOO_DEEP = f"line nests JSON arrays or objects more than {MAX_DEPTH} levels deep; dsh-audit cannot process it"
TOO_DEEP_HINT = "DSH's JSON.parse may still load this log; dsh-audit's recursive serialisers stop here"
#: A header that starts with UTF-8's byte order mark (an editor's), which JSON.parse refuses: every
#: command and validate's DSH201 say it so.
BOM_REFUSAL = "header line is not valid JSON: it starts with a UTF-8 byte order mark, and DSH writes none"
BOM_HINT = "save the file without a byte order mark"
#: The commands that read another agent's session (Claude Code, Codex) through the importers, and
#: those that read DSH logs only (the events they check, attribute or rewrite).
_IMPORTING = ("sessions", "requests", "show", "render", "cache", "usage", "diff", "index")
_DSH_ONLY = ("validate", "breaks", "explain", "check", "report", "redact", "watch")


def foreign_refusal(kind: str) -> tuple[str, str]:
    """The message and hint of every refusal of another agent's session log (``kind``, the
    importer's name of its format), whichever command meets it: what the file is, the commands
    that import it and those that read DSH logs only.

    Example:
        >>> message, hint = foreign_refusal("codex")
        >>> message
        'this is a codex session, not a DSH log'
        >>> hint.split("; ")[0]
        'sessions, requests, show, render, cache, usage, diff and index import it'
        >>> hint.split("; ")[1]
        'validate, breaks, explain, check, report, redact and watch read DSH logs only'
    """
    return (f"this is a {kind} session, not a DSH log",
            f"{_listed(_IMPORTING)} import it; {_listed(_DSH_ONLY)} read DSH logs only")


def _listed(names: tuple[str, ...]) -> str:
    return f"{', '.join(names[:-1])} and {names[-1]}"


#: The remedy DSH's refusal of a newer version ends with: not quoted for a version dsh-audit reads
#: (:func:`_faulty_header`: a header of it refused for a field, which no upgrade mends).
_UPGRADE = " — upgrade the harness to open it"


def _version_refusal(header: dict[str, Any], version: Any, *, reads: int = LATEST_VERSION) -> str:
    """DSH's direction-aware refusal text (``sessionFormatVersionRefusal``), its id and version
    written as its template literal writes them (:func:`_js_string`), the id cut short; ``reads``
    is the newest version the reader knows.

    Example:
        >>> _version_refusal({"id": {"a": 1}, "version": 9.0}, 9.0)[:50]
        'session "[object Object]" uses log format v9, but '
    """
    sid = cut(_js_string(header["id"]) if "id" in header else "undefined")
    readable = "v0" if reads == 0 else f"v0-v{reads}"
    if isinstance(version, (int, float)) and version > reads:
        return (f'session "{sid}" uses log format v{_js_string(version)}, but this harness reads only {readable}: '
                f"the log was written by a newer harness{_UPGRADE}")
    return (f'session "{sid}" uses log format v{_js_string(version)}, older than the supported v0, '
            "and this build ships no upgrade path for it")


def _js_string(value: Any) -> str:
    """A JSON value as JavaScript's ``String`` (a template literal's ``${...}``) writes it, as DSH
    quotes a header's id and version: a number in JavaScript's spelling (``4.0`` is ``4``), an
    object ``[object Object]``, an array its items joined by commas (null an empty item).

    Example:
        >>> [_js_string(v) for v in ("s", 4.0, 1e21, float("inf"), True, None, {"a": 1}, [1, None, [2, {}]])]
        ['s', '4', '1e+21', 'Infinity', 'true', 'null', '[object Object]', '1,,2,[object Object]']
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or value is None:
        return "null" if value is None else str(value).lower()
    if isinstance(value, (int, float)):
        return ("Infinity" if value > 0 else "-Infinity") if math.isinf(value) else js_number(value)
    if isinstance(value, list):
        return ",".join("" if item is None else _js_string(item) for item in value)
    return "[object Object]"


def _newer_hint(version: float, max_version: int) -> str:
    """The hint of a log refused for its format version (DSH's words, :func:`_version_refusal`):
    what dsh-audit reads, and the --max-version that reads a version it knows."""
    if version in SUPPORTED_VERSIONS:
        return (f"--max-version {max_version} reads only {'v0' if max_version == 0 else f'v0-v{max_version}'}; "
                f"without it dsh-audit reads v0-v{LATEST_VERSION}")
    if version > LATEST_VERSION:
        return f"dsh-audit reads released formats v0-v{LATEST_VERSION}; a newer number comes from a fork or a newer DSH"
    return f"no DSH release writes log format v{_js_string(version)}: the header is damaged"


#: What :func:`_header_faults` says of a v0 header that ``--lenient`` reads (filling each with 0).
_LENIENT_FILLS = frozenset({"no version", "no delegationDepth"})


def _header_faults(value: Any) -> list[str]:
    """What keeps the first record ``value`` from being a session header of the version it says,
    for the message (empty: it is one). v1 keeps v0's header; v2+ replace ``seedLength`` with a
    required boolean ``isSeeded``.

    Example:
        >>> _header_faults({"type": "session", "version": 1, "id": "s", "createdAt": 0})
        ['no delegationDepth']
    """
    if not isinstance(value, dict) or value.get("type") != "session":
        return ['no type "session"']
    version: Any = value.get("version")
    faults = ([] if isinstance(version, (int, float)) and not isinstance(version, bool)
              else ["no version"] if version is None else [_mistyped(value, "version", "a number")])
    if not isinstance(value.get("id"), str):
        faults.append("no string id" if value.get("id") is None else _mistyped(value, "id", "a string"))
    for key in ("createdAt", "delegationDepth"):
        number = value.get(key)
        if not (is_safe_int(number) and number >= 0):
            faults.append(f"no {key}" if number is None else f"{key} is not a whole number of 0 or more"
                          if isinstance(number, (int, float)) and not isinstance(number, bool)
                          else _mistyped(value, key, "an integer"))
    if value.get("origin") not in (None, "subagent"):
        faults.append('origin is not "subagent"')
    if value.get("agentPreset") is not None and not isinstance(value.get("agentPreset"), str):
        faults.append(_mistyped(value, "agentPreset", "a string"))
    v2 = _v2_version(version)
    if v2 is not None:  # every fault named, whatever else is wrong
        if not isinstance(value.get("isSeeded"), bool):
            faults.append(f"no boolean isSeeded (v{v2})" if value.get("isSeeded") is None
                          else _mistyped(value, "isSeeded", f"a boolean (v{v2})"))
        if "seedLength" in value:
            faults.append(f"a seedLength (v0 and v1 only; v{v2} says isSeeded)")
        unknown = unknown_header_keys(value, v2)
        if unknown:
            faults.append(_unknown_fault(unknown, v2))
    return faults


#: The keys of a session header (dsh-format-versions.md §6.1, §6.3 "exact keys", §6.5 "no other
#: keys"): v0 and v1 say seedLength, v2+ isSeeded. One list, so that the reader's refusal of a v2+
#: header and validate's DSH218 cannot disagree on a key.
_COMMON_KEYS = ("type", "version", "id", "createdAt", "delegationDepth", "cwd", "parentSession", "origin",
                "agentPreset")
_V0_KEYS = frozenset((*_COMMON_KEYS, "seedLength"))
_V2_KEYS = frozenset((*_COMMON_KEYS, "isSeeded"))
#: Keys refused by name, not as unknown ones: the retired policy pair, and a v2+ seedLength.
_RULED_KEYS = frozenset({"sandboxMode", "approvalPolicy", "seedLength"})
#: How many unknown keys a refusal names before "and N more": a header of 20,000 keys is one line.
_KEYS_NAMED = 3


def _v2_version(version: Any) -> int | None:
    """A header's ``version`` (raw JSON) as an int when it is a number of 2 or more (a v2+ header's
    own faults are named whatever else is wrong; ``int()`` only of a finite number), else None."""
    numeric = isinstance(version, (int, float)) and not isinstance(version, bool) and math.isfinite(version)
    return int(version) if numeric and version >= 2 else None


def header_keys(version: int) -> frozenset[str]:
    """The keys a session header of format ``version`` holds."""
    return _V2_KEYS if version >= 2 else _V0_KEYS


def unknown_header_keys(header: dict[str, Any], version: int) -> list[str]:
    """The keys of ``header`` a header of ``version`` does not hold, in order, but for those refused
    by name (the retired policy pair, a v2+ seedLength). A v2+ reader refuses them; rc.8 drops them
    from a v0 header, so the reader checks only v2+ (validate's DSH218 warns of a v0/v1 one).

    Example:
        >>> unknown_header_keys({"type": "session", "orgin": "subagent", "isSeeded": True, "seedLength": 1}, 0)
        ['orgin', 'isSeeded']
        >>> unknown_header_keys({"type": "session", "orgin": "subagent", "isSeeded": True, "seedLength": 1}, 4)
        ['orgin']
    """
    known = header_keys(version)
    return [key for key in header if key not in known and key not in _RULED_KEYS]


def _unknown_fault(keys: list[str], version: int) -> str:
    """The fault of a v``version`` header's unknown ``keys``: the first few named, then how many more.

    Example:
        >>> _unknown_fault(["a", "b", "c", "d", "e"], 4)
        'unknown keys "a", "b", "c" and 2 more (a v4 header has exact keys)'
    """
    named = listed([f'"{cut(key)}"' for key in keys[:_KEYS_NAMED]] + keys[_KEYS_NAMED:], shown=_KEYS_NAMED)
    return f"unknown key{'s' if len(keys) > 1 else ''} {named} (a v{version} header has exact keys)"


#: The ``dsh-audit validate`` rule of each header field a fault of :func:`_mistyped` names.
_FIELD_RULES = {"type": "DSH202", "version": "DSH203", "id": "DSH207", "createdAt": "DSH208",
                "delegationDepth": "DSH209", "origin": "DSH210", "agentPreset": "DSH211", "isSeeded": "DSH216",
                "seedLength": "DSH216"}
#: The header field a fault of :func:`_header_faults` names ("no boolean isSeeded", "a seedLength ...").
_FAULT_FIELD = re.compile(r"(?:no (?:boolean |string )?|a )?(\w+)")
#: How much of a mistyped field's value a refusal shows (:func:`_mistyped`; validate's finding shows more).
_VALUE_ROOM = 20
#: A fault :func:`_mistyped` says, and the field it names.
_MISTYPED = re.compile(r"(\w+) .* is an? (?:string|number|boolean|array|object), not ")


def _mistyped(header: dict[str, Any], key: str, wanted: str) -> str:
    """The fault of header field ``key`` written as a JSON value of the wrong type: it names the
    type and shows the value (validate's finding shows it too; DSH's words say neither).

    Example:
        >>> _mistyped({"createdAt": "1796209334504"}, "createdAt", "an integer")
        'createdAt "1796209334504" is a string, not an integer'
        >>> _mistyped({"id": {"name": "standard", "tools": []}}, "id", "a string")
        'id {"name":"standard",… is an object, not a string'
    """
    text = shown(header[key])
    kind = typed(header[key]).removesuffix(" " + text)  # "a string": typed() names the type before the value
    return f"{key} {_cut_whole(text)} is {kind}, not {wanted}"


#: One character of a value's JSON text (:func:`~dsh_audit._show.shown`): itself, or its whole escape.
_JSON_CHAR = re.compile(r"\\u[0-9a-fA-F]{4}|\\.|.", re.S)


def _cut_whole(text: str) -> str:
    r"""JSON ``text`` cut to :data:`_VALUE_ROOM` characters as :func:`~dsh_audit._show.cut` cuts,
    but between whole characters: an escape (``\u001b``) is kept whole or left out, never cut.

    Example:
        >>> _cut_whole('"yes\\u001b]0;pwn\\u001b]1"'), _cut_whole('"abc"')
        ('"yes\\u001b]0;pwn…', '"abc"')
    """
    if len(text) <= _VALUE_ROOM:
        return text
    kept: list[str] = []
    room = _VALUE_ROOM - 1
    for char in _JSON_CHAR.findall(text):
        if len(char) > room:
            break
        kept.append(char)
        room -= len(char)
    return "".join(kept) + "…"


def _mistyped_refusal(value: Any, faults: list[str]) -> tuple[str, str] | None:
    """What the refusal of a header says after DSH's words, and its hint, when fields are written
    as values of the wrong type (:func:`_mistyped`); None when none is. The message names each
    field once, its value cut and the type it needs (the fix: not said again); the hint names every
    fault's rule (:func:`_fault_rules`): validate lists them all."""
    named = [fault for fault in faults if _MISTYPED.match(fault)]
    if not named:
        return None
    rules = ", ".join(_fault_rules(value, faults))
    return "; ".join(named), f"`dsh-audit validate FILE` lists every header field DSH refuses ({rules})"


def _faulty_header(value: Any, faults: list[str], *, lenient: bool, generation: int | None = None) -> tuple[str, str]:
    """The message and hint of a first line that is no session header: DSH's words, then what is
    wrong with it (:func:`_header_faults`), so that a writer can fix each field the message names;
    ``generation``, the file name's (:func:`_lenient_fills`).

    A header of a version dsh-audit reads (v1+) ends with DSH's v0-only release's refusal, in its
    words (the corpus goldens compare them: tests/_golden.py): it refuses it for its version
    (docs/fidelity.md), which is not what is wrong, so without its remedy ("upgrade the harness"):
    the header's fields, each named once before it, are the fault.

    Example:
        >>> header = {"type": "session", "version": 4, "id": "s", "createdAt": 0, "delegationDepth": 0}
        >>> message, hint = _faulty_header(header, _header_faults(header), lenient=False)
        >>> message.split("; ")[0]
        'corrupt session log: first line is not a session header of v4: no boolean isSeeded (v4)'
        >>> message.split("; ")[1][:48]
        'DSH 0.1.0-rc.8, which reads only v0, refuses it '
        >>> hint.split("; ")[1]
        '`dsh-audit validate FILE` lists every header field DSH refuses (DSH216)'
    """
    version: Any = value.get("version") if isinstance(value, dict) else None
    mistyped = _mistyped_refusal(value, faults)
    if isinstance(version, (int, float)) and not isinstance(version, bool) and version >= 1:
        rc8 = _version_refusal(value, version, reads=0).removesuffix(_UPGRADE)  # no upgrade mends a field
        message = (f"corrupt session log: first line is not a session header of v{_js_string(version)}: "
                   f"{'; '.join(faults)}; DSH 0.1.0-rc.8, which reads only v0, refuses it as: {rc8}")
        needs = ", a boolean isSeeded and no seedLength" if version >= 2 else ""
        hint = mistyped[1] if mistyped is not None else (
            f"a v{_js_string(version)} header needs type \"session\", version, a string id, integer createdAt and "
            f"delegationDepth{needs}; `dsh-audit validate FILE` lists every header field DSH refuses "
            f"({', '.join(_fault_rules(value, faults))})")
        if set(faults) & _LENIENT_FILLS:
            hint += "; --lenient fills a missing version/delegationDepth of a v0 header only"
        return message, hint
    message = f"corrupt session log: first line is not a session header: {'; '.join(faults)}"
    if mistyped is not None:
        return message, mistyped[1]
    if version is None and generation and value.get("type") == "session":  # session.vN.jsonl: --lenient fills no version (validate's DSH203 says so)
        return message, (f'write "version": {generation}, a JSON number: the generation the file name says; '
                         "--lenient fills a missing version of a v0 log (session.jsonl) only")
    if not lenient and version in (None, 0) and set(faults) <= _LENIENT_FILLS:
        # a tokenised test fixture's header, which DSH's golden oracle reads leniently
        return message, (f"write {' and '.join(f[3:] for f in faults)} (0 for a top-level session), or "
                         f"--lenient reads {'them' if len(faults) > 1 else 'it'} as 0, as DSH's test oracle does")
    return message, ("the header needs type \"session\", version, id, createdAt and delegationDepth (v2+: isSeeded); "
                     "--lenient fills a missing v0 version/delegationDepth")


def _fault_rules(value: Any, faults: list[str]) -> list[str]:
    """The ``dsh-audit validate`` rules of the header fields ``faults`` (:func:`_header_faults` of
    ``value``) name, once each, in order; DSH218 last, from ``value``'s keys (its fault comes last)."""
    named = (_FAULT_FIELD.match(fault) for fault in faults)
    rules = [_FIELD_RULES[m.group(1)] for m in named if m and m.group(1) in _FIELD_RULES]
    version = _v2_version(value.get("version") if isinstance(value, dict) else None)
    if version is not None and unknown_header_keys(value, version):
        rules.append("DSH218")
    return list(dict.fromkeys(rules))


def is_absolute_path(path: str) -> bool:
    r"""Whether ``path`` is absolute on the system DSH ran on: DSH checks ``cwd`` with Node's
    platform ``path.isAbsolute``, so a log recorded on Windows holds ``G:\...`` or
    ``\\server\share\...`` and one recorded on Linux or macOS ``/...``; the log does not say which.

    Example:
        >>> [is_absolute_path(p) for p in ("/home/dev", "G:\\work", "\\\\srv\\share\\x", "proj", "G:proj")]
        [True, True, True, False, False]
    """
    return posixpath.isabs(path) or ntpath.isabs(path)


def is_fixture_token(text: str) -> bool:
    """Whether a header's value is a snapshot fixture's token (``{{sessionId}}``): DSH's snapshot
    normaliser writes one into every fixture, so such a session id names no session, and files that
    share it are not copies of one.

    Example:
        >>> is_fixture_token("{{sessionId}}"), is_fixture_token("session-x"), is_fixture_token("{{")
        (True, False, False)
    """
    return text.startswith("{{") and text.endswith("}}")


def _meta_error(raw: dict[str, Any]) -> str | None:
    """DSH's session-header validation (``Session.fromRestore``)."""
    cwd = raw.get("cwd")
    if cwd is not None:
        if not isinstance(cwd, str):
            return "session header cwd must be a string"
        if not is_absolute_path(cwd):
            return f'session header cwd must be an absolute path, got "{cwd}"'
    if raw.get("parentSession") is not None and not isinstance(raw["parentSession"], str):
        return "session header parentSession must be a string"
    seed = raw.get("seedLength")
    if seed is not None and not (is_safe_int(seed) and seed >= 0):
        return "session header seedLength must be a non-negative safe integer"
    return None


def _lenient_meta(raw: dict[str, Any]) -> tuple[str | None, str | None]:
    """``--lenient``'s one rule for a header's metadata: a relative cwd (a tokenised fixture's) is
    set aside, the rest checked as DSH checks it. ``(cwd set aside, fault left)``, each None when
    there is none: the one answer of the refusal under ``--lenient``, of the hint that offers the
    option without it (:func:`lenient_mends`) and of the adaptation it reports.

    Example:
        >>> _lenient_meta({"cwd": "rel", "parentSession": 5}), _lenient_meta({"cwd": "/abs"})
        (('rel', 'session header parentSession must be a string'), (None, None))
    """
    cwd = raw.get("cwd")
    relative = cwd if isinstance(cwd, str) and not is_absolute_path(cwd) else None
    return relative, _meta_error(raw if relative is None else {**raw, "cwd": None})


def lenient_mends(raw: dict[str, Any]) -> bool:
    """Whether ``--lenient`` would accept this header's metadata: its only fault is a relative cwd
    (:func:`_lenient_meta`), so a hint may offer the option (re-read E, session 44: it was offered
    for a header whose parentSession --lenient then refused).

    Example:
        >>> lenient_mends({"cwd": "rel"}), lenient_mends({"cwd": "rel", "parentSession": 5})
        (True, False)
    """
    relative, fault = _lenient_meta(raw)
    return relative is not None and fault is None


def foreign_record(path: str, value: Any) -> tuple[str, MalformedRecordError] | None:
    """How every reader refuses the log at ``path`` whose first line, decoded to ``value``, is a
    whole record of another agent's session (Codex, Claude Code): ``(format, error)``, as
    :func:`header_refusal` gives it when that line is damaged; None when it is no such record (a
    DSH header, sound or not, or JSON that is no record of any format).

    Example:
        >>> kind, error = foreign_record("r.jsonl", {"type": "event_msg", "timestamp": "t", "payload": {}})
        >>> kind, error.message
        ('codex', 'this is a codex session, not a DSH log')
        >>> foreign_record("s.jsonl", {"type": "session", "id": "s1"}) is None
        True
    """
    kind = classify_record(value, first=True) if isinstance(value, dict) else None
    return None if kind in (None, "dsh") else (kind, _foreign_error(path, kind))


def _foreign_error(path: str, kind: str) -> MalformedRecordError:
    message, hint = foreign_refusal(kind)
    return MalformedRecordError(message, path=path, line=1, hint=hint)


def header_refusal(path: str) -> tuple[str | None, MalformedRecordError] | None:
    """How every reader refuses the log at ``path`` when its first line is no DSH header, as format
    detection tells the file (:func:`sniff_format`): ``(None, error)`` for a Codex rollout or Claude
    Code transcript every line of which is damaged (:class:`~dsh_audit.errors.DamagedLogError`);
    ``(format, error)`` for another agent's log whose first line alone is damaged, refused as that
    log is whole (an importing command then imports it); None for neither (a file that cannot be
    read again is neither): a damaged DSH header, refused as such.
    """
    try:
        sniffed = sniff_format(path)
    except (DshAuditError, OSError):
        return None
    if sniffed.damaged is not None:
        return None, sniffed.damaged
    if sniffed.format not in (None, "dsh"):
        return sniffed.format, _foreign_error(path, sniffed.format)
    return None


def damaged_header(path: str, error: MalformedRecordError) -> MalformedRecordError:
    """The refusal of a log whose first line is damaged (``error``, DSH's): :func:`header_refusal`'s,
    else ``error``."""
    refusal = header_refusal(path)
    return error if refusal is None else refusal[1]


def _lenient_fills(value: Any, generation: int | None) -> bool:
    """Whether ``--lenient`` fills the missing version and delegationDepth of header ``value`` with
    0, as DSH's test oracle does its tokenised v0 fixtures: a v0 header's only. A header with no
    version in a file named for a later generation (``session.v4.jsonl``) is not filled: 0 would
    contradict the name (spec §3.2), and validate checks it as the name's version, an error too."""
    return (isinstance(value, dict) and value.get("type") == "session" and value.get("version") in (None, 0)
            and not generation)


def parse_header(path: str, line: Line | None, *, lenient: bool,
                  max_version: int) -> tuple[SessionHeader, list[str], str | None]:
    """Return the header, lenient adaptations, and a deferred ``Session`` header error."""
    if line is None:
        raise UnreadableError("empty or header-less session log", path=path, line=1,
                              hint="a DSH log starts with a {\"type\":\"session\",...} header line")
    try:
        value = parse_json(line.raw)
    except UnicodeDecodeError as exc:  # a record that is no header, as one not JSON: another agent's may be damaged
        raise damaged_header(path, MalformedRecordError(f"header line is not valid UTF-8 (byte {exc.start})",
                                                        path=path, line=1, hint="this is not a DSH session log")) from None
    except NestingError:
        raise UnreadableError(TOO_DEEP, path=path, line=1, hint=TOO_DEEP_HINT) from None
    except ValueError:
        if line.raw.startswith(codecs.BOM_UTF8):  # an editor's UTF-8 byte order mark: JSON.parse refuses it too
            raise MalformedRecordError(f"corrupt session log: {BOM_REFUSAL}", path=path, line=1,
                                       hint=BOM_HINT) from None
        raise damaged_header(path, MalformedRecordError(
            "corrupt session log: header line is not valid JSON", path=path, line=1,
            hint="this is not a DSH session log, or its first line is damaged")) from None
    version: Any = value.get("version") if isinstance(value, dict) else None  # raw JSON
    numeric = isinstance(version, (int, float)) and not isinstance(version, bool)
    if numeric and version not in SUPPORTED_VERSIONS[: max_version + 1]:
        raise UnsupportedFormatError(_version_refusal(value, version, reads=max_version),
                                     path=path, line=1, hint=_newer_hint(version, max_version))
    generation = canonical_generation(os.path.basename(path))
    if numeric and generation is not None and generation != version:
        raise UnsupportedFormatError(
            f"header says log format v{_js_string(version)} but the file name {os.path.basename(path)} is generation "
            f"v{generation}", path=path, line=1,
            hint=("DSH opens a log only when the two agree: set the header's version to the version the body is "
                  "written in and name the file for it (session.jsonl for v0, session.vN.jsonl for vN); "
                  "`dsh-audit validate FILE` names the disagreement (DSH206), or the first record the header's "
                  "version does not fit (DSH114)"))
    adaptations: list[str] = []
    fills = lenient and _lenient_fills(value, generation)
    if fills:
        value = dict(value)
        for key in ("version", "delegationDepth"):
            if key not in value:
                value[key] = 0
                adaptations.append(f"{key} (absent) -> 0")
    faults = _header_faults(value)
    if faults:
        foreign = foreign_record(path, value)
        if foreign is not None:
            raise foreign[1]
        message, hint = _faulty_header(value, faults, lenient=lenient, generation=generation)
        raise MalformedRecordError(message, path=path, line=1, hint=hint)
    if "sandboxMode" in value or "approvalPolicy" in value:
        raise MalformedRecordError("session header uses retired policy baseline fields", path=path, line=1)
    relative, lenient_problem = _lenient_meta(value)
    meta_problem = lenient_problem if lenient else _meta_error(value)
    if lenient and relative is not None:  # every version: what --lenient let pass is said
        adaptations.append(f'cwd "{relative}" accepted as given (not absolute)')
    header = SessionHeader(
        id=value["id"], version=int(value["version"]), created_at=int(value["createdAt"]),
        cwd=value.get("cwd"), parent_session=value.get("parentSession"),
        seed_length=value.get("seedLength"), origin=value.get("origin"),
        delegation_depth=int(value["delegationDepth"]), agent_preset=value.get("agentPreset"),
        is_seeded=bool(value.get("isSeeded", value.get("seedLength") is not None)), raw=value,
    )
    return header, adaptations, meta_problem
