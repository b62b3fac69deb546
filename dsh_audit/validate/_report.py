"""Pure formatters for findings: text lines, a summary, SARIF 2.1.0."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from ..report._sarif import build_sarif, validation_rules
from ._model import Finding

__all__ = ["format_sarif", "format_summary", "format_text"]


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


def format_sarif(findings: Sequence[Finding], *, tool_version: str) -> dict[str, Any]:
    """A SARIF 2.1.0 log: every catalogue rule in ``tool.driver.rules``, one result per finding.

    Written by the shared :func:`dsh_audit.report.build_sarif`, as ``dsh-audit check``'s is.
    """
    return build_sarif(findings, rules=validation_rules(), tool_version=tool_version)
