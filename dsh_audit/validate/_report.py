"""Pure formatters for findings: text lines, a summary, JSON objects, SARIF 2.1.0."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ._catalogue import RULES
from ._model import Finding

__all__ = ["format_sarif", "format_summary", "format_text"]

_SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def format_text(findings: Sequence[Finding]) -> str:
    """One ``path:line: seq N: DSH301 error: message (hint)`` line per finding."""
    return "".join(f.format() + "\n" for f in findings)


def format_summary(findings: Sequence[Finding], *, files: int) -> str:
    """``N error(s), N warning(s), N info in F file(s)`` plus the rules that fired most."""
    counts = Counter(f.severity for f in findings)
    text = (f"{counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info "
            f"in {files} file(s)")
    by_rule = Counter(f.rule for f in findings)
    if by_rule:
        text += ": " + ", ".join(f"{rule} x{n}" for rule, n in sorted(by_rule.items()))
    return text


def _uri(path: str) -> str:
    if os.path.isabs(path):
        return Path(path).as_uri()
    return quote(path.replace(os.sep, "/"))


def _rule_json(rule_id: str) -> dict[str, Any]:
    rule = RULES[rule_id]
    return {
        "id": rule.id,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "help": {"text": f"{rule.summary} Fix: {rule.hint}. Example: {rule.example}"},
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
    }


def _result_json(finding: Finding, index: dict[str, int]) -> dict[str, Any]:
    location: dict[str, Any] = {"artifactLocation": {"uri": _uri(finding.path)}}
    if finding.line is not None:
        location["region"] = {"startLine": finding.line}
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": index[finding.rule],
        "level": _LEVEL[finding.severity],
        "message": {"text": finding.message + (f" ({finding.hint})" if finding.hint else "")},
        "locations": [{"physicalLocation": location}],
    }
    if finding.seq is not None:
        result["properties"] = {"seq": finding.seq}
    return result


def format_sarif(findings: Sequence[Finding], *, tool_version: str) -> dict[str, Any]:
    """A SARIF 2.1.0 log: every catalogue rule in ``tool.driver.rules``, one result per finding."""
    ids = sorted(RULES)
    index = {rule_id: i for i, rule_id in enumerate(ids)}
    return {
        "$schema": _SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "dsh-audit", "version": tool_version,
                                "rules": [_rule_json(rule_id) for rule_id in ids]}},
            "results": [_result_json(f, index) for f in findings],
        }],
    }
