"""Conformance checking of DSH session logs: a rule catalogue with stable ids, every finding.

The reader (:func:`dsh_audit.load`) reproduces DSH's verdict and stops at the first refusal;
:func:`validate` is what a DSH port or a history-rewriting plugin runs in its CI: it collects every
violation, each tied to a rule of :data:`RULES` (``docs/rules.md``), with file, line, seq and a
fix hint. :class:`LineValidator` runs the same rules over lines another reader decodes (the
reader's ``tee``), so a command that reads a log anyway validates it without a second read.

Example:
    >>> from dsh_audit.validate import RULES, validate
    >>> RULES["DSH305"].name
    'replace-coverage'
    >>> findings = validate("sample_logs/chat/session.jsonl")  # doctest: +SKIP
"""

from ._catalogue import LENIENT_RULES, RULES
from ._engine import LineValidator, validate
from ._paths import Lineage, lineage_findings, validate_paths
from ._model import SEVERITIES, Finding, Rule, Severity
from ._report import format_summary, format_text
from ._sink import checked_rule_ids, select_rules

__all__ = [
    "Finding",
    "LENIENT_RULES",
    "LineValidator",
    "Lineage",
    "RULES",
    "Rule",
    "SEVERITIES",
    "Severity",
    "checked_rule_ids",
    "format_summary",
    "format_text",
    "lineage_findings",
    "select_rules",
    "validate",
    "validate_paths",
]
