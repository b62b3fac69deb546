"""Where checks put what they find: rule selection, lenient downgrades, locations."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import UsageError
from ._catalogue import RULES
from ._model import Finding, Severity

__all__ = ["Sink", "select_rules"]


def select_rules(rules: Iterable[str] | None, ignore: Iterable[str] | None) -> frozenset[str]:
    """The rule ids to report: ``rules`` (default every rule) minus ``ignore``.

    An id may be a prefix (``DSH3`` selects every surface rule). Raises UsageError on an id
    that names no rule.
    """
    def expand(ids: Iterable[str]) -> set[str]:
        out: set[str] = set()
        for rid in ids:
            matched = {r for r in RULES if r.startswith(rid.upper())}
            if not matched:
                raise UsageError(f"unknown rule id {rid!r}",
                                 hint="rule ids look like DSH301; see docs/rules.md")
            out |= matched
        return out

    chosen = expand(rules) if rules else set(RULES)
    return frozenset(chosen - (expand(ignore) if ignore else set()))


class Sink:
    """Collects the findings of one log."""

    def __init__(self, path: str, selected: frozenset[str]) -> None:
        self.path = path
        self.selected = selected
        self.findings: list[Finding] = []

    def add(self, rule: str, message: str, *, line: int | None = None, seq: int | None = None,
            severity: Severity | None = None) -> None:
        """Record one finding of ``rule`` (its catalogue severity unless ``severity`` overrides)."""
        meta = RULES[rule]
        if rule not in self.selected:
            return
        self.findings.append(Finding(rule=rule, severity=severity or meta.severity, message=message,
                                     path=self.path, line=line, seq=seq, hint=meta.hint))
