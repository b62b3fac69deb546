"""The terminal summary of a check's findings: the same finding of a log's requests said once.

A log whose requests all fail for one reason (a route the log does not describe leaves every
request unrendered, ``DSH815``) has one finding per request in every report, which tools need;
people need it once: ``<log>: DSH815 warning (fails the gate: capture-fail): 6 requests: #0, #1,
#2, #3, #4, #5 are unrendered: cannot render: ... (hint: ...)``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..diff import requests_said
from ._model import Finding

__all__ = ["FindingGroup", "group_findings"]

@dataclass(frozen=True, slots=True)
class FindingGroup:
    """Findings of one log that say the same of different requests (the same rule, verdict,
    :attr:`Finding.reason` and hint), in order; or one finding."""

    findings: tuple[Finding, ...]

    def format(self) -> str:
        """One finding as :meth:`Finding.format` says it; several as one line naming their requests.

        Example:
            >>> same = [Finding("DSH815", "warning", f"loop request {i} is unrendered: no facts", "a.jsonl",
            ...                 request=i, fails=True, hint="pass --routes FILE", reason="unrendered: no facts")
            ...         for i in (1, 3)]
            >>> FindingGroup(tuple(same)).format()
            'a.jsonl: DSH815 warning (fails the gate: capture-fail): 2 requests: #1, #3 are unrendered: no facts (hint: pass --routes FILE)'
        """
        first = self.findings[0]
        if len(self.findings) == 1:
            return first.format()
        shown = f" (hint: {first.hint})" if first.hint else ""
        said = requests_said([f.request for f in self.findings if f.request is not None], first.reason or "")
        return f"{first.path}: {first.verdict}: {said}{shown}"  # as diff says it under its table


def _key(finding: Finding) -> tuple[object, ...] | None:
    if finding.reason is None or finding.request is None:
        return None
    return (finding.path, finding.rule, finding.severity, finding.fails, finding.baselined, finding.hint,
            finding.reason)


def group_findings(findings: Iterable[Finding]) -> list[FindingGroup]:
    """``findings`` with those that say the same of several requests of one log (:attr:`Finding.reason`)
    gathered into one group, at the place of the first; the others one group each, in order.

    Example:
        >>> a = Finding("DSH815", "warning", "m0", "a.jsonl", request=0, reason="unrendered")
        >>> b = Finding("DSH810", "info", "no capture", "a.jsonl")
        >>> [len(g.findings) for g in group_findings([a, b, a])]
        [2, 1]
    """
    groups: list[list[Finding]] = []
    at: dict[tuple[object, ...], int] = {}
    for finding in findings:
        key = _key(finding)
        if key is not None and key in at:
            groups[at[key]].append(finding)
            continue
        if key is not None:
            at[key] = len(groups)
        groups.append([finding])
    return [FindingGroup(tuple(group)) for group in groups]
