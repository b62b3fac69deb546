"""The gate's own rules: what ``dsh-audit check`` adds to the validation catalogue.

Validation findings keep their ``DSH1xx``-``DSH7xx`` ids (:data:`dsh_audit.validate.RULES`); the
gate's findings use ``DSH8xx``, which that catalogue leaves free. Ids are a contract: a rule keeps
its id forever.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["GATE_RULES", "VALIDATE_COMMAND", "GateRule", "policy_key", "refusal_rules"]


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
             "A request paired with a capture could not be rendered to wire bytes; or, with no capture, pi-ai "
             "sends nothing for it (its session id or a header of its route is one fetch cannot send, which the log "
             "and the route configuration prove).",
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


#: The command a refusal's hint sends the reader to for the validation rules of its fault, which the
#: hint names after it (``dsh_audit.log``'s and ``dsh_audit.replay``'s templates end such a hint so:
#: ``...; `dsh-audit validate FILE` lists every seq out of place (DSH107, DSH108)``).
VALIDATE_COMMAND = "dsh-audit validate FILE"


def _words(*patterns: str) -> re.Pattern[str]:
    """One entry's DSH words, matched from the message's start to its end: where a refusal quotes
    log text (a session id, an event type), its fixed words close the message (no entry's words end
    open after a quote but where the quote closes the message), so the quoted text cannot make it
    another refusal: a session id holding ``" uses log format v`` leaves a mode/set refusal DSH502's."""
    return re.compile("|".join(f"(?:{p})" for p in patterns) + "$", re.DOTALL)


#: The header fields' rules, each of which a first line that is no session header may be refused for.
_HEADER_FIELD_RULES = frozenset({"DSH202", "DSH203", "DSH207", "DSH208", "DSH209", "DSH210", "DSH211", "DSH216",
                                 "DSH218"})
#: Every refusal the reader (``dsh_audit.log``) and replay's surface fold (``dsh_audit.replay``) raise,
#: by DSH's words (spec §1.3-§1.8), with the validation rules that may say the same fault
#: (:func:`refusal_rules`); the first entry whose words match is the refusal's. A refusal's hint
#: that names rules picks among them; one that names none leaves them all: at the refusal's place
#: validate lists only those the refusal says (one, or each field fault of a header it names).
_REFUSALS: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    # the decoder and its limits: the file is neither JSONL nor well-formed zstd
    (_words(r"bytes at offset \d+ are .*", r"zstd frame .*", r"the first zstd frame must hold exactly the header line",
            r"a complete zstd frame ends inside a record", r"refused: the decoded .*",
            r"refused as a decompression bomb: .*"), frozenset({"DSH101"})),
    # the header line
    (_words(r"empty or header-less session log", r"corrupt session log: header line is not valid JSON.*"),
     frozenset({"DSH201"})),
    (_words(r"(?:header )?line is not valid UTF-8 \(byte \d+\)"), frozenset({"DSH102"})),
    # a header as deep as a body line is the header's DSH201, a body line's DSH104: its line tells
    (_words(r"line nests JSON arrays or objects more than \d+ levels deep; dsh-audit cannot process it"),
     frozenset({"DSH201", "DSH104"})),
    # the header's version against the file name's generation: validate names the pair (DSH206), or the body
    # record the header's version does not fit (DSH114) when the body agrees with the name
    (_words(r"header says log format v.*"), frozenset({"DSH114", "DSH206"})),
    # no type "session": DSH's header check stops at it (no other field is said, though validate may list more)
    (_words(r'corrupt session log: first line is not a session header: no type "session"'), frozenset({"DSH202"})),
    (_words(r"corrupt session log: first line is not a session header.*"), _HEADER_FIELD_RULES),
    (_words(r"session header uses retired policy baseline fields"), frozenset({"DSH215"})),
    (_words(r'stored session ".*" failed validation: session header cwd must be a string',
            r'stored session ".*" failed validation: session header cwd must be an absolute path, got ".*"'),
     frozenset({"DSH212"})),
    (_words(r'stored session ".*" failed validation: session header parentSession must be a string'),
     frozenset({"DSH213"})),
    (_words(r'stored session ".*" failed validation: session header seedLength must be a non-negative safe integer'),
     frozenset({"DSH214"})),
    # the committed-region scan
    (_words(r"corrupt session log: seq gap in committed region .*"),
     frozenset({"DSH107", "DSH108", "DSH111", "DSH112"})),
    (_words(r"corrupt session log: unparsable committed event \(not valid JSON\)"), frozenset({"DSH104"})),
    (_words(r"corrupt session log: unparsable committed event \(malformed .*\)"), frozenset({"DSH105"})),
    # retired shapes, legacy upgrades, message shapes, unknown types, envelopes
    (_words(r'session ".*" contains unsupported legacy request/header-delta event at seq \d+'), frozenset({"DSH501"})),
    (_words(r'session ".*" contains unsupported legacy mode/set event at seq \d+'), frozenset({"DSH502"})),
    (_words(r'session ".*" contains unsupported legacy request/header reason "fallback" at seq \d+'),
     frozenset({"DSH503"})),
    (_words(r'session ".*" contains malformed pre-react-loop \S+ at seq \S+'), frozenset({"DSH504"})),
    (_words(r"session event at seq \d+ .*"), frozenset({"DSH120"})),
    (_words(r'session ".*" contains event type ".*" \(seq \d+\) unknown to this harness and not marked ignorable'),
     frozenset({"DSH506"})),
    # the header's version (``_version_refusal`` of ``dsh_audit.log._header``), by its fixed endings
    (_words(r'session ".*" uses log format v.*, but this harness reads only v0(?:-v\d+)?: '
            r"the log was written by a newer harness(?: — upgrade the harness to open it)?",
            r'session ".*" uses log format v.*, older than the supported v0, and this build ships no upgrade path '
            r"for it"), frozenset({"DSH204", "DSH205"})),
    (_words(r"seed event at index \d+ has an invalid event envelope"),
     frozenset({"DSH110", "DSH111", "DSH112", "DSH113"})),
    (_words(r"seed request/header at index \d+ lacks provider/model"), frozenset({"DSH221"})),
    (_words(r"seed request/header at index \d+ has an invalid reasoningEffort"), frozenset({"DSH222"})),
    (_words(r"seed request/header at index \d+ has invalid adapterDefaults"), frozenset({"DSH223"})),
    # replay's header fold (DSH802): a header DSH loads but cannot fold, so no later request is built
    (_words(r"request/header has (?:system|tools) null: DSH itself cannot build a request from this header .*"),
     frozenset({"DSH227"})),
    # replay's surface fold (DSH802): the faults of the fold's rules, not the trace's warnings (DSH310, DSH311)
    (_words(r"invalid seed event at index \d+: .*"), frozenset(f"DSH{n}" for n in range(301, 310))),
)
#: A refusal said in a validation rule's own words, which is that rule's fault whatever its hint
#: names: a body record older than the header's version (``BodyMismatch.message`` of
#: ``dsh_audit.log._versions``, the reader's error and validate's DSH114 alike).
_OWN_WORDS = ((re.compile(r"header version \d+ does not fit this record: "), frozenset({"DSH114"})),)
#: A rule a hint names, or a range of them (``DSH307-DSH309``).
_RULE_IDS = re.compile(r"\bDSH(\d{3})(?:-DSH(\d{3}))?\b")


def _named(hint: str | None) -> frozenset[str]:
    """The validation rules ``hint`` names after its last `dsh-audit validate FILE` (our template's
    words, after any log text the hint quotes), a range each of its rules.

    Example:
        >>> sorted(_named("cite ...; `dsh-audit validate FILE` lists every surface fault (DSH307-DSH309); DSH ..."))
        ['DSH307', 'DSH308', 'DSH309']
        >>> _named('message.role "(DSH107)" is ...; `dsh-audit validate FILE` lists every problem (rule DSH120)')
        frozenset({'DSH120'})
        >>> _named("a writer can mark plugin events (DSH506)")
        frozenset()
    """
    command = f"`{VALIDATE_COMMAND}`"
    if not hint or command not in hint:
        return frozenset()
    tail = hint.rsplit(command, 1)[1]
    return frozenset(f"DSH{n}" for first, last in _RULE_IDS.findall(tail)
                     for n in range(int(first), int(last or first) + 1))


def refusal_rules(message: str, hint: str | None) -> frozenset[str]:
    """The validation rules whose findings say the fault a log is refused for, said as ``message``
    (DSH's words, :data:`_REFUSALS`) with ``hint``, so that a log check refuses lists the fault
    once, as its refusal (``DSH801``, ``DSH802``): the rule whose own words the refusal is, else
    those its words may mean that the hint names (it sends the reader to ``dsh-audit validate``
    for them), all of them when it names none. Empty for a refusal of no validation rule (a file
    that cannot be opened).

    Example:
        >>> sorted(refusal_rules("corrupt session log: seq gap in committed region at line 3 (expected 3, got 5)",
        ...                      "...; `dsh-audit validate FILE` lists every seq out of place (DSH107, DSH108)"))
        ['DSH107', 'DSH108']
        >>> sorted(refusal_rules("corrupt session log: first line is not a session header: no delegationDepth; "
        ...                      'origin is not "subagent"', "the header needs ..."))
        ['DSH202', 'DSH203', 'DSH207', 'DSH208', 'DSH209', 'DSH210', 'DSH211', 'DSH216', 'DSH218']
        >>> refusal_rules("header version 4 does not fit this record: a packed text-chunks row is written ...", None)
        frozenset({'DSH114'})
        >>> refusal_rules('session "s1" contains event type "x" (seq 4) unknown to this harness and not marked '
        ...               'ignorable', "a writer can mark plugin events ...")
        frozenset({'DSH506'})
        >>> refusal_rules("cannot open: Permission denied", None)
        frozenset()
    """
    own = next((rules for words, rules in _OWN_WORDS if words.match(message)), None)
    if own is not None:
        return own
    rules = next((rules for words, rules in _REFUSALS if words.match(message)), frozenset())
    named = _named(hint)
    return rules & named if named else rules
