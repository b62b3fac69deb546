"""The CI gate: every check dsh-audit knows, run over session logs and judged by a policy.

:func:`run_check` reads and validates each log, rebuilds its requests, compares them with a
capture of what was sent (given, or a ``wire.jsonl`` found beside the log), attributes every
prefix-cache break and accounts for cache reads, and returns a :class:`CheckResult` whose
findings each say whether the :class:`Policy` fails the build. See ``docs/ci.md``.

Example:
    >>> from dsh_audit.gate import load_policy, run_check
    >>> result = run_check(["sample_logs/"], policy=load_policy())  # doctest: +SKIP
    >>> result.passed  # doctest: +SKIP
    True
"""

from ._baseline import MESSAGE_WORDING, Baseline, apply_baseline, load_baseline
from ._findings import FOREIGN_CAPTURE_HINT, capture_holds, foreign_capture_hint
from ._inputs import CAPTURE_NAME, CAPTURE_SEARCH_LEVELS, find_capture
from ._model import CheckResult, Finding, RequestOutline, RequestRecorder, SessionCheck, tally
from ._policy import CAPTURE_VERDICTS, Policy, find_pyproject, load_policy
from ._rules import GATE_RULES, GateRule, policy_key
from ._run import run_check
from ._summary import FindingGroup, group_findings

__all__ = [
    "Baseline",
    "CAPTURE_NAME",
    "CAPTURE_SEARCH_LEVELS",
    "CAPTURE_VERDICTS",
    "CheckResult",
    "FOREIGN_CAPTURE_HINT",
    "Finding",
    "FindingGroup",
    "GATE_RULES",
    "GateRule",
    "MESSAGE_WORDING",
    "Policy",
    "RequestOutline",
    "RequestRecorder",
    "SessionCheck",
    "apply_baseline",
    "capture_holds",
    "find_capture",
    "find_pyproject",
    "foreign_capture_hint",
    "group_findings",
    "load_baseline",
    "load_policy",
    "policy_key",
    "run_check",
    "tally",
]
