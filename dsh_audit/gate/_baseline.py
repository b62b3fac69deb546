"""Accepting known findings: ``dsh-audit check --baseline FILE``, FILE a JSON report an earlier
``check --json-report FILE`` wrote (``docs/report-schema.json``).

A finding of this run that matches a finding of the baseline is *baselined*: it no longer fails
the gate (``fails`` false, ``baselined`` true), and the reports say so. Two findings match when
their keys (:func:`finding_key`) are equal: the rule id, the session id, the request index and
the seq (each as the finding has it, or none; a capture verdict's, one per request, without its
seq), and the message with the capture its session was compared with, the finding's log path, then the log's folder taken out, and the values of the
policy's it states (DSH831's bound: :func:`~dsh_audit.gate._findings.policy_free`). The key
leaves out the path, line and hint, so the same logs checked from another checkout or folder (a
capture given with ``--capture`` by another path included) match, and so do they under a looser
or tighter bound (a baseline written before the bound was left out of the key matches the same
way: the bound is taken out of its messages too), and so do the findings of a baseline written in
an earlier wording (its ``message_wording`` below this version's: the words dsh-audit has since
changed are taken out of its messages and the run's alike,
:func:`~dsh_audit.gate._findings.reworded_free`); any change to what the finding says of the log,
or where in the session it points, makes it new (a baseline of this wording is matched on the whole
message: a header fault added or a value changed since is new). Each baseline finding accepts one finding of the
run (the same finding twice in a run needs it twice in the baseline).

A baseline is read as every configuration file is (:func:`~dsh_audit._config_read.read_bytes`: a
regular file of at most 16 MiB: about 20,000 findings, each written twice in a report, under its
session and in the list of all) and parsed by orjson; one that does not fit in memory is one error
naming ``--baseline``, not a crash.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

import orjson

from .._config_read import ConfigFileError, read_bytes, read_json
from .._pyproject import said
from .._shell import shell_word
from ..errors import UsageError
from ..log import ensure_room
from ._findings import VERDICT_RULES, policy_free, reworded_free
from ._model import CheckResult, Finding

__all__ = ["MESSAGE_WORDING", "Baseline", "apply_baseline", "finding_key", "load_baseline"]

#: The wording of this version's finding messages, written as the JSON report's ``message_wording``
#: (docs/ci.md "Baseline"): a baseline without it, or below it, is matched with the reworded words
#: left out (:func:`finding_key`), one at it on the whole message; one above it (a newer
#: dsh-audit's) is refused, as a newer ``schema_version`` is.
MESSAGE_WORDING = 2

#: What a baseline finding is keyed by: rule, session id, request, seq, message without the log path
#: and the policy's values.
FindingKey = tuple[str, str | None, int | None, int | None, str]
_HINT = "write the baseline with `dsh-audit check PATHS --json-report FILE` and pass that FILE"
#: The same for the policy's baseline: a run that reads it cannot write it.
_CONFIGURED_HINT = ("write a new one with `dsh-audit check PATHS --no-baseline --json-report {}` (the policy's "
                    "[tool.dsh-audit.check] baseline)")
#: The file name docs/ci.md gives a baseline, which a hint offers when the policy names a folder.
_BASELINE_NAME = "dsh-baseline.json"
#: The hint of a baseline that does not fit in memory, given with --baseline or by the policy.
_MEMORY_HINT = "give --baseline a report of fewer findings, or run where more memory is allowed (ulimit -v)"
_CONFIGURED_MEMORY_HINT = ("check without the policy's baseline with --no-baseline, or give --baseline a report of "
                           "fewer findings")


#: What may stand before and after a path in a message besides whitespace (``str.isspace``), its
#: start or its end: a quote, a bracket, or the punctuation after it (``path: ...``, ``(path)``,
#: ``path, ...``).
_BEFORE, _AFTER = frozenset("'\"`(["), frozenset("'\"`)]:,;")


def _stands(text: str, at: int, end: int, *, whole: bool) -> bool:
    """Whether ``text[at:end]`` stands as a path: after the start, whitespace or one of
    :data:`_BEFORE`; with ``whole``, before the end, whitespace or one of :data:`_AFTER`."""
    if at and not (text[at - 1].isspace() or text[at - 1] in _BEFORE):
        return False
    return not whole or end == len(text) or text[end].isspace() or text[end] in _AFTER


def _placed(text: str, path: str, placeholder: str, *, whole: bool = True) -> str:
    """``text`` with each ``path`` that stands as a path (not inside another word: a capture
    named ``e`` is not taken out of "request") replaced by ``placeholder``; ``whole`` False: a
    prefix of a longer path (a folder with its separator). Found left to right, each after the
    last one replaced, by ``str.find`` (a baseline's many distinct paths compile no pattern).

    Example:
        >>> _placed("a/s.jsonl: x (a/s.jsonl) xa/s.jsonl a/s.jsonlx", "a/s.jsonl", "<log>")
        '<log>: x (<log>) xa/s.jsonl a/s.jsonlx'
    """
    if not path:
        return text
    pieces: list[str] = []
    start = done = 0
    while (at := text.find(path, start)) >= 0:
        end = at + len(path)
        if _stands(text, at, end, whole=whole):
            pieces += (text[done:at], placeholder)
            start = done = end
        else:
            start = at + 1
    return "".join(pieces) + text[done:] if pieces else text


def _without_path(message: str, path: str, capture: str | None = None) -> str:
    """``message`` with the ``capture`` path, the log ``path``, then its folder (followed by a
    separator), replaced by placeholders where they stand as paths.

    Example:
        >>> _without_path("a/b/s.jsonl vs a/b/wire.jsonl line 3", "a/b/s.jsonl")
        '<log> vs <dir>/wire.jsonl line 3'
        >>> _without_path("request 1 is different vs /c/wire.jsonl line 3", "a/b/s.jsonl", "/c/wire.jsonl")
        'request 1 is different vs <capture> line 3'
        >>> _without_path("request 1 is different vs e line 3", "s.jsonl", "e")
        'request 1 is different vs <capture> line 3'
    """
    text = _placed(message, capture, "<capture>") if capture else message
    if not path:
        return text
    text = _placed(text, path, "<log>")
    folder = os.path.dirname(path)
    # the folder with its separator: a short folder name ("a") is not taken out of other words
    return _placed(text, folder + os.sep, "<dir>" + os.sep, whole=False) if folder else text


def finding_key(rule: str, session_id: str | None, request: int | None, seq: int | None, message: str,
                path: str, capture: str | None = None, *, earlier: bool = False) -> FindingKey:
    """The key two findings match by (the module's docstring); ``capture``: the capture the
    finding's session was compared with, if any; ``earlier``: a key of a baseline written in an
    earlier wording (and of the run's findings it is matched with), the words since changed taken out.

    A capture verdict's finding (:data:`~dsh_audit.gate._findings.VERDICT_RULES`: one per request)
    is keyed by its request without its seq: the request says where it points, and its seq is
    only where the report locates it (a ``DSH815`` moved from the request's seq to its refusal's
    in session 39, and a baseline written before must still match it).

    Example:
        >>> finding_key("DSH821", "s", 2, 7, "x/s.jsonl: break", "x/s.jsonl")
        ('DSH821', 's', 2, 7, '<log>: break')
        >>> finding_key("DSH815", "s", 2, 12, "request 2 is unrendered", "x/s.jsonl")
        ('DSH815', 's', 2, None, 'request 2 is unrendered')
        >>> finding_key("DSH831", "s", None, None, "ratio 49.6% is below the policy bound 60.0% (7936 of 15996)", "")
        ('DSH831', 's', None, None, 'ratio 49.6% is below the policy bound (7936 of 15996)')
        >>> said = "corrupt session log: first line is not a session header of v4: id 1 is a number, not a string"
        >>> finding_key("DSH801", "s", None, 0, said, "", earlier=True)[4][63:]
        'id is a number, not a string'
    """
    placed = None if rule in VERDICT_RULES and request is not None else seq
    text = policy_free(rule, _without_path(message, path, capture))
    return rule, session_id, request, placed, reworded_free(rule, text) if earlier else text


@dataclass(frozen=True, slots=True)
class Baseline:
    """The findings of a baseline report, as keys, and the file they came from; ``earlier``: it
    was written in an earlier wording (:func:`finding_key`'s ``earlier``), so the run's findings
    are keyed as its are."""

    source: str
    keys: tuple[FindingKey, ...]
    earlier: bool = False


def _optional_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _key_of(item: Any, captures: dict[str, str], earlier: bool) -> FindingKey | None:
    """A report finding object's key, or None when it is no finding object; ``captures``: the
    capture each log path of the report was compared with; ``earlier``: :func:`finding_key`'s."""
    if not isinstance(item, dict) or not isinstance(item.get("rule"), str) or not isinstance(item.get("message"), str):
        return None
    session = item.get("session_id")
    given = item.get("path")
    path = given if isinstance(given, str) else ""
    return finding_key(item["rule"], session if isinstance(session, str) else None, _optional_int(item.get("request")),
                       _optional_int(item.get("seq")), item["message"], path, captures.get(path), earlier=earlier)


def _captures(sessions: Any) -> dict[str, str]:
    """The capture each session of a report was compared with, by log path (a session object of
    another shape is left out: its findings keep their capture's path in the key)."""
    if not isinstance(sessions, list):
        return {}
    return {item["path"]: item["capture"] for item in sessions
            if isinstance(item, dict) and isinstance(item.get("path"), str) and isinstance(item.get("capture"), str)}


def _missing_hint(path: str, *, configured: bool = False) -> str:
    """The hint of a baseline ``path`` that does not exist: the command that writes it (a run
    whose ``--json-report`` writes the missing baseline it is given checks without one), and, for
    the baseline the policy names (``configured``), the option that checks without it.

    Example:
        >>> _missing_hint("ci/b.json", configured=True)
        'write the first baseline with `dsh-audit check PATHS --json-report ci/b.json`, or check without it with --no-baseline'
    """
    command = f"dsh-audit check PATHS --json-report {shell_word(path)}"
    return f"write the first baseline with `{command}`" + (", or check without it with --no-baseline"
                                                          if configured else "")


def _folder_hint(path: str) -> str:
    """The hint of the policy's baseline that names the folder ``path``: a report is a file, so the
    command that writes a new one names a file in that folder (the one docs/ci.md names).

    Example:
        >>> _folder_hint("ci")
        "a folder is not a report file: write one with `dsh-audit check PATHS --no-baseline --json-report ci/dsh-baseline.json` and name that file in the policy's [tool.dsh-audit.check] baseline"
    """
    command = f"dsh-audit check PATHS --no-baseline --json-report {shell_word(os.path.join(path, _BASELINE_NAME))}"
    return f"a folder is not a report file: write one with `{command}` and name that file in the policy's " \
           "[tool.dsh-audit.check] baseline"


def _document(source: str) -> Any:
    """The JSON document of the baseline file ``source``, read as every configuration file is (a
    regular file of at most 16 MiB) and parsed by orjson; a text orjson refuses (a BOM, UTF-16,
    ``NaN``, a lone surrogate, a syntax error) is read by :func:`read_json`, which reads what
    Python's parser reads and says where it cannot.

    Raises:
        ConfigFileError: as :func:`read_json` raises it.
        MemoryError: its parse would not fit under the process's memory limit.
    """
    raw = read_bytes(source, what="baseline")
    ensure_room(raw)  # orjson crashes when it runs out of memory under a limit: a MemoryError instead
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        del raw
        return read_json(source, what="baseline")


#: The ``schema_version`` values of the check reports a baseline is read from (docs/ci.md, "JSON
#: report versions": 2 renamed each session's ``breaks`` list, which a baseline does not read).
_READ_VERSIONS = (1, 2)


def _version_word(version: object) -> str:
    """``version`` as a baseline's error names it: a small integer as written, a string quoted
    (:func:`~dsh_audit._pyproject.said`: its control characters escaped, cut when long), anything
    else by its JSON type alone (a float or a huge number would read as another).

    Example:
        >>> _version_word(3), _version_word("2"), _version_word(2.0), _version_word(10**400), _version_word(None)
        ('3', "a string ('2')", 'a fraction', 'a number past 64 bits', 'null')
    """
    if type(version) is int:
        return str(version) if version.bit_length() <= 64 else "a number past 64 bits"
    if isinstance(version, str):
        return f"a string ({said(version)})"
    names = {bool: "a boolean", float: "a fraction", list: "a list", dict: "an object"}
    return "null" if version is None else names.get(type(version), "a value")


def _unread_version(key: str, value: object, reads: tuple[int, ...]) -> str:
    """The sentence refusing a baseline whose ``key`` (``schema_version``, ``message_wording``)
    holds ``value``, none of the ``reads`` this dsh-audit reads; one above them: a newer dsh-audit
    wrote the baseline (the hint says how to write it anew).

    Example:
        >>> _unread_version("message_wording", 3, (1, 2)).split(": ")
        ["the baseline's message_wording is 3, written by a newer dsh-audit", 'this dsh-audit reads message_wording 1 and 2']
        >>> _unread_version("schema_version", "2", (1, 2, 3)).split(": ")[0]
        "the baseline's schema_version is a string ('2'), not a whole number"
    """
    listed = ", ".join(map(str, reads[:-1])) + f" and {reads[-1]}" if len(reads) > 1 else str(reads[0])
    why = (", not a whole number" if type(value) is not int
           else ", written by a newer dsh-audit" if value > max(reads) else "")
    return f"the baseline's {key} is {_version_word(value)}{why}: this dsh-audit reads {key} {listed}"


def _earlier(document: dict[str, Any], source: str, hint: str) -> bool:
    """Whether the baseline ``document`` was written in an earlier wording than this version's
    (its ``message_wording``, none before there was one: 1). A later one (a newer dsh-audit's) is
    refused, as a newer ``schema_version`` is: matched on whole messages, every finding it words
    anew would fail as new with no word of why.

    Raises:
        UsageError: its ``message_wording`` is not a whole number from 1 to :data:`MESSAGE_WORDING`.
    """
    wording = document.get("message_wording", 1)
    reads = tuple(range(1, MESSAGE_WORDING + 1))
    if type(wording) is not int or wording not in reads:
        raise UsageError(_unread_version("message_wording", wording, reads), path=source, hint=hint)
    return wording < MESSAGE_WORDING


def _parsed_baseline(source: str, hint: str) -> Baseline:
    """:func:`load_baseline` of ``source`` once the file is found; ``hint``: its errors' hint."""
    document = _document(source)
    findings = document.get("findings") if isinstance(document, dict) else None
    tool = document.get("tool") if isinstance(document, dict) else None
    if (not isinstance(findings, list) or not isinstance(tool, dict) or tool.get("name") != "dsh-audit"
            or "schema_version" not in document):
        raise UsageError("the baseline is not a JSON report of dsh-audit check", path=source, hint=hint)
    version = document["schema_version"]
    if type(version) is not int or version not in _READ_VERSIONS:
        raise UsageError(_unread_version("schema_version", version, _READ_VERSIONS), path=source, hint=hint)
    captures = _captures(document.get("sessions"))
    earlier = _earlier(document, source, hint)
    keys = [_key_of(item, captures, earlier) for item in findings]
    if any(key is None for key in keys):
        raise UsageError("the baseline is not a JSON report of dsh-audit check (a finding without rule or message)",
                         path=source, hint=hint)
    return Baseline(source=source, keys=tuple(key for key in keys if key is not None), earlier=earlier)


def load_baseline(path: str | os.PathLike[str], *, configured: bool = False) -> Baseline:
    """The baseline a JSON report of ``check`` at ``path`` holds; ``configured``: the policy names
    it (``[tool.dsh-audit.check] baseline``), so a hint names ``--no-baseline``, which checks
    without it.

    Raises:
        UsageError: the file is missing or unreadable, larger than 16 MiB, is not JSON, is not a
            check report, or does not fit in memory (one error, exit 2, its hint naming
            ``--json-report``: for a missing file, the command that writes it,
            :func:`_missing_hint`; for memory, ``--baseline``).
    """
    source = os.fspath(path)
    hint = _CONFIGURED_HINT.format(shell_word(source)) if configured else _HINT
    try:  # a regular file (a FIFO or device is refused unread), of at most 16 MiB
        return _parsed_baseline(source, hint)
    except ConfigFileError as exc:
        message = exc.message.replace("cannot open: ", "cannot read the baseline: ", 1)
        if exc.reason == "open" and not os.path.lexists(source):
            hint = _missing_hint(source, configured=configured)
        elif exc.reason == "open" and configured and os.path.isdir(source):
            hint = _folder_hint(source)
        raise UsageError(message, path=source, line=exc.line, hint=hint) from None
    except MemoryError:
        raise UsageError("the baseline does not fit in memory", path=source,
                         hint=_CONFIGURED_MEMORY_HINT if configured else _MEMORY_HINT) from None


def _key(finding: Finding, capture: str | None, earlier: bool) -> FindingKey:
    return finding_key(finding.rule, finding.session_id, finding.request, finding.seq, finding.message, finding.path,
                       capture, earlier=earlier)


def _mark(findings: Iterable[Finding], left: Counter[FindingKey], capture: str | None = None, *,
          earlier: bool) -> tuple[Finding, ...]:
    out = []
    for finding in findings:
        key = _key(finding, capture, earlier)
        if left[key] > 0:
            left[key] -= 1
            finding = replace(finding, fails=False, baselined=True)
        out.append(finding)
    return tuple(out)


def apply_baseline(result: CheckResult, baseline: Baseline) -> CheckResult:
    """``result`` with each finding the ``baseline`` holds marked baselined (not failing), and a
    note when baseline entries of the sessions checked no longer occur (``"N baseline entries
    no longer occur"``: entries, not lines, :meth:`~dsh_audit.gate.CheckResult.baseline_said`);
    those of sessions this run did not check (a narrower PATH or window) are not gone, and a
    second note counts them (``"N baseline entries are of sessions not checked"``)."""
    left: Counter[FindingKey] = Counter(baseline.keys)
    sessions = tuple(replace(check, findings=_mark(check.findings, left, check.capture_path, earlier=baseline.earlier))
                     for check in result.sessions)
    loose = _mark(result.unattached, left, earlier=baseline.earlier)
    marked = list(zip(result.unattached, loose))  # a log's unreadable capture's DSH802 is run-level: its row follows it
    sessions = tuple(replace(check, capture_refusal=next((new for old, new in marked if old == check.capture_refusal),
                                                         check.capture_refusal))
                     if check.capture_refusal is not None else check for check in sessions)
    checked = {check.session_id for check in result.sessions}
    unchecked = sum(n for key, n in left.items() if key[1] is not None and key[1] not in checked)
    gone = sum(left.values()) - unchecked
    marked_result = replace(result, sessions=sessions, findings=(*(f for s in sessions for f in s.findings), *loose),
                            baseline=baseline.source, baseline_gone=gone, baseline_unchecked=unchecked)
    return replace(marked_result, notes=(*result.notes, *marked_result.baseline_said()))
