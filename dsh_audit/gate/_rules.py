"""The gate's own rules: what ``dsh-audit check`` adds to the validation catalogue.

Validation findings keep their ``DSH1xx``-``DSH7xx`` ids (:data:`dsh_audit.validate.RULES`); the
gate's findings use ``DSH8xx``, which that catalogue leaves free. Ids are a contract: a rule keeps
its id forever.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["GATE_RULES", "GateRule", "policy_key", "refusal_rules"]


@dataclass(frozen=True, slots=True)
class GateRule:
    """One gate rule: stable id, default severity, short name, rationale and how to fix.

    Attributes:
        id: ``DSH8xx``.
        severity: ``error``, ``warning`` or ``info`` (whether it fails the build is the policy's
            decision, see :class:`dsh_audit.gate.Policy`).
        name: kebab-case name.
        summary: one sentence: what the finding means.
        hint: what to do about it, when the finding names nothing more precise (a finding's own
            hint, such as the render refusal's of a ``DSH815``, wins: :class:`Finding` has one).
        policy: the policy key that decides whether the finding fails the build.
    """

    id: str
    severity: str
    name: str
    summary: str
    hint: str
    policy: str


_ALL = (
    GateRule("DSH801", "error", "log-refused",
             "DSH refuses to load the log (unreadable, corrupt, unsupported version or shape).",
             "run `dsh-audit validate` on the file for every problem with its line; restore the log from a copy",
             "fail-on-refusal"),
    GateRule("DSH802", "error", "replay-inconsistent",
             "The log loads but its requests cannot be rebuilt (inconsistent surface or header fold).",
             "run `dsh-audit validate` for the rule that the log breaks", "fail-on-refusal"),
    GateRule("DSH810", "info", "capture-missing",
             "No capture of the sent requests was given or found beside the log, so bytes were not compared.",
             "pass --capture FILE, or put a wire.jsonl holding the log's requests beside it or up to four folders "
             "above it", "require-capture"),
    GateRule("DSH811", "error", "capture-different",
             "The captured body of a request is a different JSON value from the body rebuilt from the log.",
             "the log does not record what was sent: run `dsh-audit diff LOG --capture PATH` for the JSON paths",
             "capture-fail"),
    GateRule("DSH812", "warning", "capture-equivalent",
             "The captured body is the same JSON value in other bytes; a provider prefix cache breaks there.",
             "run `dsh-audit diff LOG --capture PATH` for the spelling difference (key order, whitespace, "
             "numbers, escapes)",
             "capture-fail"),
    GateRule("DSH813", "error", "capture-unmatched",
             "A request rebuilt from the log has no captured send.",
             "check that the capture covers the whole session; run `dsh-audit diff LOG --capture PATH` for the "
             "alignment",
             "capture-fail"),
    GateRule("DSH814", "error", "capture-unexplained",
             "A captured request of a checked session is explained by no request of its log.",
             "the log is missing events for a call that was sent; run `dsh-audit diff LOG --capture PATH`",
             "capture-fail"),
    GateRule("DSH815", "warning", "capture-unrendered",
             "A request paired with a capture could not be rendered to wire bytes.",
             "give what the message says rendering lacks: --routes FILE (or <home>/cordis.patch.yml in the DSH home "
             "the log was recorded in) for a route the log does not describe, --attachments DIR for a logged "
             "image's bytes, --adapter (or the policy key adapter) for an unknown route",
             "capture-fail"),
    GateRule("DSH821", "error", "break-unexplained",
             "The prompt prefix changed between two requests and no log event explains it.",
             "run `dsh-audit explain LOG INDEX`: a writer rewrote history without a surface replace",
             "fail-on-unexplained-break"),
    GateRule("DSH822", "error", "break-cause-not-allowed",
             "A prefix-cache break has a cause that the policy does not allow.",
             "add the cause to allowed-break-causes, or stop the behaviour that breaks the cache",
             "allowed-break-causes"),
    GateRule("DSH831", "error", "cache-hit-ratio-low",
             "The session's actual cache-hit ratio (cache reads / prompt tokens) is below the policy bound.",
             "run `dsh-audit cache` for the requests that missed and why", "min-cache-hit-ratio"),
    GateRule("DSH832", "warning", "cache-hit-ratio-unmeasured",
             "The policy bounds the cache-hit ratio, but the log's requests record no usage to measure it by.",
             "the bound was not checked for this log: record usage (DSH logs it per request), or drop "
             "min-cache-hit-ratio for such logs", "min-cache-hit-ratio"),
)

#: Every gate rule by id.
GATE_RULES: dict[str, GateRule] = {r.id: r for r in _ALL}


def policy_key(rule: str) -> str:
    """The policy key that decides whether a finding of ``rule`` fails the gate: a gate rule's own
    (:attr:`GateRule.policy`), ``validation-fail-severity`` for a validation rule.

    Example:
        >>> policy_key("DSH815"), policy_key("DSH201")
        ('capture-fail', 'validation-fail-severity')
    """
    gate = GATE_RULES.get(rule)
    return gate.policy if gate is not None else "validation-fail-severity"


#: DSH's words for a fault it refuses a log for (spec §1.3, §1.4), and the validation rules that
#: may name the same fault (:func:`refusal_rules`): those of them its hint names.
_REFUSAL_RULES = (
    ("corrupt session log: seq gap in committed region", frozenset({"DSH107", "DSH108", "DSH111", "DSH112"})),
    ("corrupt session log: first line is not a session header",
     frozenset({"DSH202", "DSH203", "DSH207", "DSH208", "DSH209", "DSH210", "DSH211", "DSH216"})),
    # the header's version against the file name's generation: validate names the pair (DSH206), or the body
    # record the header's version does not fit (DSH114) when the body agrees with the name
    ("header says log format v", frozenset({"DSH114", "DSH206"})),
)
#: A refusal said in a validation rule's own words, which is that rule's fault whatever its hint
#: names: a body record older than the header's version (``BodyMismatch.message`` of
#: ``dsh_audit.log._versions``, the reader's error and validate's DSH114 alike).
_OWN_WORDS = ((re.compile(r"header version \d+ does not fit this record: "), frozenset({"DSH114"})),)
_RULE_ID = re.compile(r"\bDSH\d{3}\b")


def refusal_rules(message: str, hint: str | None) -> frozenset[str]:
    """The validation rules whose findings say the fault a log is refused for, said as ``message``
    (DSH's words begin it) with ``hint``: those of that fault the hint names (it sends the reader
    to ``dsh-audit validate`` for them), or the rule whose own words the refusal is, so that a log
    check refuses lists the fault once, as its refusal (``DSH801``). None for another refusal, or one
    whose hint names no rule.

    Example:
        >>> sorted(refusal_rules("corrupt session log: seq gap in committed region at line 3 (expected 3, got 5)",
        ...                      "...; `dsh-audit validate FILE` lists every seq out of place (DSH107, DSH108)"))
        ['DSH107', 'DSH108']
        >>> refusal_rules("corrupt session log: first line is not a session header", "the header needs ...")
        frozenset()
        >>> refusal_rules("header version 4 does not fit this record: a packed text-chunks row is written ...", None)
        frozenset({'DSH114'})
    """
    own = next((rules for words, rules in _OWN_WORDS if words.match(message)), None)
    if own is not None:
        return own
    rules = next((rules for words, rules in _REFUSAL_RULES if message.startswith(words)), frozenset())
    return rules & frozenset(_RULE_ID.findall(hint or "")) if rules else rules
