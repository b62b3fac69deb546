"""The values of the conformance checker: a rule of the catalogue and one finding."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["SEVERITIES", "Finding", "Rule", "Severity"]

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")


@dataclass(frozen=True, slots=True)
class Rule:
    """One conformance rule: a stable id, what it protects, how to fix a violation.

    Attributes:
        id: stable identifier (``DSH1xx`` physical and envelope, ``DSH2xx`` headers, ``DSH3xx``
            surface, ``DSH4xx`` turns/steps/tools/streams, ``DSH5xx`` refusals and versions,
            ``DSH6xx`` lineage, ``DSH7xx`` usage).
        severity: ``error`` when DSH refuses the log or a rebuilt request would be wrong,
            ``warning`` when the log loads but a writer did something DSH never does, ``info``
            for facts worth knowing (an in-memory upgrade, a crash-interrupted tail).
        name: short kebab-case name.
        summary: the one-line rationale.
        hint: how to fix a violation.
        example: a small log excerpt that violates the rule.
        refused_from: the format version from which DSH refuses a log that breaks the rule (a
            v2+ header's exact keys, v4's tool-call relationships): in a log of that version or
            newer a finding is an ``error``, in an older one ``severity`` (what rc.8 does with it).
    """

    id: str
    severity: Severity
    name: str
    summary: str
    hint: str
    example: str
    refused_from: int | None = None


@dataclass(frozen=True, slots=True)
class Finding:
    """One violation of one rule at one place of one log.

    ``line`` is the 1-based physical line of the decoded log (1 is the session header);
    ``seq`` is the event's seq when the finding belongs to an event. ``foreign`` names another
    agent's log format (``claude-code``, ``codex``) when the finding is the DSH202 of such a log's
    first line, which ``validate`` refuses as a whole (not part of the JSON or SARIF finding).
    ``lines`` is how many lines from ``line`` on hold this same fault (a run of junk records folded
    into one finding, so output stays bounded): every count of findings counts each of them.
    """

    rule: str
    severity: Severity
    message: str
    path: str
    line: int | None = None
    seq: int | None = None
    hint: str | None = None
    foreign: str | None = None
    lines: int = 1

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` object of this finding."""
        return {"rule": self.rule, "severity": self.severity, "message": self.message,
                "path": self.path, "line": self.line, "seq": self.seq, "hint": self.hint}

    def format(self) -> str:
        """``path:line: seq N: DSH301 error: message (hint)``."""
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        seq = "" if self.seq is None else f" seq {self.seq}:"
        hint = f" ({self.hint})" if self.hint else ""
        return f"{where}:{seq} {self.rule} {self.severity}: {self.message}{hint}"
