"""Pure formatters for findings: text lines and a summary (SARIF: :func:`dsh_audit.report.validation_sarif`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ._model import Finding

__all__ = ["format_summary", "format_text"]


def format_text(findings: Sequence[Finding]) -> str:
    """One ``path:line: seq N: DSH301 error: message (hint)`` line per finding."""
    return "".join(f.format() + "\n" for f in findings)


def format_summary(findings: Sequence[Finding], *, files: int) -> str:
    """``N error(s), N warning(s), N info in F file(s)`` plus the rules that fired most."""
    counts: Counter[str] = Counter()
    by_rule: Counter[str] = Counter()
    for f in findings:  # a folded run's finding counts each of its lines (Finding.lines)
        counts[f.severity] += f.lines
        by_rule[f.rule] += f.lines
    text = (f"{counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} info "
            f"in {files} file(s)")
    if by_rule:
        text += ": " + ", ".join(f"{rule} x{n}" for rule, n in sorted(by_rule.items()))
    return text

