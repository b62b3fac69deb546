"""A generic SARIF 2.1.0 builder and the ``dsh-audit check`` and ``dsh-audit validate`` SARIF reports.

:func:`build_sarif` knows nothing of where findings come from: it takes rule descriptions and
finding-like values (``rule``, ``severity``, ``message``, ``path``, ``line``, ``seq``, ``hint``,
optionally ``session_id``, ``request``, ``fails``), so the validator's catalogue and the gate's
rules share one writer.

Results are located at the log file and line (``region.startLine``; ``endLine`` too for a folded run), except in a compressed log
(``.zstd``): its line numbers count lines of the decompressed text, which a SARIF viewer (GitHub
code scanning) would look for in the compressed bytes, so such a result names the file with no
region. Every result with a seq also has a logical location, the event (``seq N`` of the
session), which is where it points in either kind of log. A result's ``level`` is ``error``
when the finding fails the build (``fails``), whatever its rule's default severity, and at most
``warning`` when the policy lets it pass (``note`` for an ``info``): code scanning's ``error``
alerts are the ones that fail a check, as the gate does. A finding with no ``fails`` (``dsh-audit
validate``'s) has its severity's level; a rule's ``defaultConfiguration.level`` is its default
severity's. Paths
under ``base`` are URIs relative to ``%SRCROOT%`` (``uriBaseId``), which
``run.originalUriBaseIds`` resolves to ``base``. A check run against a baseline
(``check --baseline``) gives each result a ``baselineState`` (SARIF 2.1.0 §3.27.24):
``unchanged`` for a finding the baseline accepts (``baselined``), ``new`` for any other.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from .._version import __version__
from ._safe_text import terminal_text

__all__ = ["SARIF_SCHEMA", "SarifRule", "build_sarif", "format_sarif", "validation_sarif"]

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
#: The ``uriBaseId`` of a path under the run's base folder (resolved by ``originalUriBaseIds``).
SRCROOT = "%SRCROOT%"
#: Log files whose lines are those of decompressed text: their results carry no region.
_COMPRESSED = (".zstd", ".zst")


@dataclass(frozen=True, slots=True)
class SarifRule:
    """One ``reportingDescriptor``: id, kebab-case name, one-line summary, help text, level."""

    id: str
    name: str
    summary: str
    help: str
    severity: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "shortDescription": {"text": self.summary},
                "fullDescription": {"text": self.summary}, "help": {"text": self.help},
                "defaultConfiguration": {"level": _LEVEL.get(self.severity, "warning")}}


def _uri(path: str, base: str | None) -> str:
    """The artifact URI of ``path``: relative to ``base`` when it is under it, else an absolute
    ``file:///`` URI (a relative path that leaves ``base``, ``../f1/...``, too); with no ``base``,
    a relative path as it is.

    Example:
        >>> _uri("/work/p/logs/session.jsonl", "/work/p"), _uri("/work/f1/a b.jsonl", "/work/p")
        ('logs/session.jsonl', 'file:///work/f1/a%20b.jsonl')
    """
    if base is not None:
        absolute = Path(os.path.abspath(path))
        try:
            return quote(os.fsencode(absolute.relative_to(os.path.abspath(base)).as_posix()))
        except ValueError:
            return absolute.as_uri()
    if os.path.isabs(path):
        return Path(path).as_uri()
    return quote(os.fsencode(path.replace(os.sep, "/")))


def _relative(uri: str) -> bool:
    """Whether an artifact URI from :func:`_uri` is relative (not ``file:///``)."""
    return not uri.startswith("file:")


def _level(finding: Any) -> str:
    """A result's level: for a finding judged by a policy (it has ``fails``), ``error`` when it
    fails the build and at most ``warning`` when it does not (a ``note`` for an ``info``); else
    (``dsh-audit validate``'s findings) its severity's."""
    fails = getattr(finding, "fails", None)
    if fails is None:
        return _LEVEL.get(finding.severity, "warning")
    return "error" if fails else ("note" if finding.severity == "info" else "warning")


def _artifact(path: str, base: str | None) -> dict[str, Any]:
    """The ``artifactLocation`` of ``path``: relative to ``%SRCROOT%`` when it is under ``base``."""
    artifact: dict[str, Any] = {"uri": _uri(path, base)}
    if base is not None and _relative(artifact["uri"]):
        artifact["uriBaseId"] = SRCROOT
    return artifact


def _text(text: str) -> dict[str, str]:
    """A ``message`` object whose text a viewer shows: :func:`terminal_text`, as the terminal shows
    it. A JSON escape alone (``\\u001b``) would decode to the raw control in the viewer (GitHub code
    scanning), so a log's ESC, C1 or bidi character is shown as ``\\uXXXX`` text instead."""
    return {"text": terminal_text(text)}


def _notification(path: str, said: str, base: str | None) -> dict[str, Any]:
    """A ``toolExecutionNotification`` (SARIF 2.1.0 §3.20.21): an input the run left out (another
    agent's log) or tried and could not read, at its file, ``said`` its text (``not checked: ...``,
    ``could not be read: ...``): not a result, as nothing in it was analysed."""
    return {"level": "error", "message": _text(said),
            "locations": [{"physicalLocation": {"artifactLocation": _artifact(path, base)}}]}


def _region(line: int, lines: int) -> dict[str, int]:
    """The region of a finding on ``line`` and the ``lines`` - 1 after it holding the same fault (a
    folded run: :attr:`dsh_audit.validate.Finding.lines`), so a viewer marks every line of it.

    Example:
        >>> _region(3, 1), _region(4, 4)
        ({'startLine': 3}, {'startLine': 4, 'endLine': 7})
    """
    return {"startLine": line} if lines <= 1 else {"startLine": line, "endLine": line + lines - 1}


def _result(finding: Any, index: dict[str, int], base: str | None, baselined: bool) -> dict[str, Any]:
    location: dict[str, Any] = {"physicalLocation": {"artifactLocation": _artifact(finding.path, base)}}
    if finding.line is not None and not finding.path.lower().endswith(_COMPRESSED):
        location["physicalLocation"]["region"] = _region(finding.line, getattr(finding, "lines", 1))
    seq = getattr(finding, "seq", None)
    if seq is not None:
        session = getattr(finding, "session_id", None)
        location["logicalLocations"] = [{"name": f"seq {seq}", "kind": "object", "fullyQualifiedName":
                                         terminal_text(f"{session} seq {seq}") if session else f"seq {seq}"}]
    hint = getattr(finding, "hint", None)
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "level": _level(finding),
        "message": _text(finding.message + (f" (hint: {hint})" if hint else "")),
        "locations": [location],
    }
    if finding.rule in index:
        result["ruleIndex"] = index[finding.rule]
    if baselined:
        result["baselineState"] = "unchanged" if getattr(finding, "baselined", False) else "new"
    properties = {key: getattr(finding, key) for key in ("seq", "session_id", "request", "fails")
                  if getattr(finding, key, None) is not None}
    if properties:
        result["properties"] = properties
    return result


def build_sarif(findings: Iterable[Any], *, rules: Sequence[SarifRule], tool_version: str,
                base: str | None = None, invocation_ok: bool | None = None,
                baselined: bool = False, not_checked: Sequence[tuple[str, str]] = (),
                unread: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    """A SARIF 2.1.0 log with one run: every rule in ``tool.driver.rules``, one result per finding.

    Args:
        findings: finding-like values (see the module docstring).
        rules: the rules to describe, in order (a finding of an undescribed rule has no ruleIndex).
        tool_version: ``tool.driver.version``.
        base: paths under this folder become URIs relative to ``%SRCROOT%`` (what code scanning
            expects), which ``originalUriBaseIds`` resolves to this folder.
        invocation_ok: when given, adds an ``invocations`` entry with ``executionSuccessful``.
        baselined: the findings were compared with a baseline: each result has a ``baselineState``
            (``unchanged`` for a finding whose ``baselined`` is true, else ``new``).
        not_checked: inputs left out, as ``(path, why)``: with ``invocation_ok``, each a
            notification of the invocation (``toolExecutionNotifications``), ``not checked: why``.
        unread: inputs tried that could not be read, as ``(path, why)``: with ``invocation_ok``,
            each such a notification too, ``could not be read: why``.

    Example:
        >>> build_sarif([], rules=[], tool_version="0.1.0")["version"]
        '2.1.0'
    """
    index = {rule.id: i for i, rule in enumerate(rules)}
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "dsh-audit", "version": tool_version,
                            "rules": [rule.to_json() for rule in rules]}},
        "results": [_result(f, index, base, baselined) for f in findings],
    }
    said = [*((path, f"not checked: {why}") for path, why in not_checked),
            *((path, f"could not be read: {why}") for path, why in unread)]
    notes = [_notification(path, text, base) for path, text in said] if invocation_ok is not None else []
    if base is not None and any("uriBaseId" in location["physicalLocation"]["artifactLocation"]
                                for said in (*run["results"], *notes) for location in said["locations"]):
        run["originalUriBaseIds"] = {SRCROOT: {"uri": Path(os.path.abspath(base)).as_uri().rstrip("/") + "/"}}
    if invocation_ok is not None:
        run["invocations"] = [{"executionSuccessful": invocation_ok, **({"toolExecutionNotifications": notes}
                                                                         if notes else {})}]
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def validation_rules() -> list[SarifRule]:
    """The validation catalogue (:data:`dsh_audit.validate.RULES`) as SARIF rules, by id."""
    from ..validate import RULES

    return [SarifRule(r.id, r.name, r.summary, f"{r.summary} Fix: {r.hint}. Example: {r.example}", r.severity)
            for r in (RULES[rid] for rid in sorted(RULES))]


def _run_base(base: str | None) -> str:
    """The folder the paths of a ``check`` or ``validate`` report are relative to (``%SRCROOT%``):
    ``base``, else the working folder, which is the checkout's root where CI runs the command
    (GitHub code scanning resolves a relative URI there). One rule for both reports: the same
    log is named the same way by either."""
    return os.getcwd() if base is None else base


def validation_sarif(findings: Sequence[Any], *, tool_version: str, base: str | None = None) -> dict[str, Any]:
    """The SARIF 2.1.0 log of :func:`dsh_audit.validate.validate` findings (``dsh-audit validate``).

    Every catalogue rule is in ``tool.driver.rules``, one result per finding; written by
    :func:`build_sarif` as ``dsh-audit check``'s report is (:func:`format_sarif`): paths under
    ``base`` (default: the working folder) relative to ``%SRCROOT%``, and an invocation that ran.
    """
    return build_sarif(findings, rules=validation_rules(), tool_version=tool_version, base=_run_base(base),
                       invocation_ok=True)


def _all_rules() -> list[SarifRule]:
    from ..gate import GATE_RULES

    return validation_rules() + [
        SarifRule(g.id, g.name, g.summary, f"{g.summary} Fix: {g.hint}. Policy key: {g.policy}.", g.severity)
        for g in (GATE_RULES[rid] for rid in sorted(GATE_RULES))]


def format_sarif(result: Any, *, base: str | None = None) -> str:
    """The SARIF 2.1.0 report of a :class:`dsh_audit.gate.CheckResult`, as JSON text.

    Every validation rule and gate rule is described (id, name, help text); each finding is a
    result at its log file and line, with ``seq``, ``session_id``, ``request`` and ``fails``
    as properties; with a baseline, its ``baselineState``. Paths under ``base`` (default: the
    working folder) are relative to ``%SRCROOT%``, as in :func:`validation_sarif`. Another agent's
    logs left out (:attr:`~dsh_audit.gate.CheckResult.not_checked`) are the invocation's
    ``toolExecutionNotifications``, each at its file, and its ``executionSuccessful`` is then false:
    the run exits 2 for them (SARIF: an exit code that denotes failure), however its findings judge;
    so are the logs that could not be read (:attr:`~dsh_audit.gate.CheckResult.unreadable`), each
    ``could not be read: why`` (the run tried it: not ``not checked``) and also its ``DSH801``
    result, which ``fail-on-refusal = false`` makes a warning.
    """
    from ._json import dumps_pretty

    unread = [(check.path, check.unread_why) for check in result.sessions if check.unread_why is not None]
    left = getattr(result, "not_checked", ())
    log = build_sarif(result.findings, rules=_all_rules(), tool_version=__version__, base=_run_base(base),
                      invocation_ok=not left and not unread, baselined=getattr(result, "baseline", None) is not None,
                      not_checked=left, unread=unread)
    return dumps_pretty(log) + "\n"
