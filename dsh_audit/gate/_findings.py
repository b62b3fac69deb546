"""Turning pipeline results into :class:`Finding` values and judging each with the policy."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from .._listing import listed
from .._shell import shell_word
from ..capture import Pairing, RequestDiff, captures_ignored
from ..session import EventLines, Failure, routes_hint
from ..errors import InputError, RenderError
from ..replay import Request
from ._model import Finding, Hint, SessionCheck
from ._policy import Policy
from ._rules import GATE_RULES, VALIDATE_COMMAND, GateRule

__all__ = ["DIFF_UNEXPLAINED", "FOREIGN_CAPTURE_HINT", "VALIDATE_COMMAND", "VERDICT_RULES", "Judge", "capture_holds",
           "diff_command", "foreign_capture_hint", "held_across", "policy_free", "refused_rule", "request_seq",
           "reworded_free", "rule_commands"]

_VERDICT_RULE = {"different": "DSH811", "equivalent": "DSH812", "unmatched": "DSH813", "unrendered": "DSH815"}
#: The rules of a capture verdict: one finding per request (a baseline keys them by request alone).
VERDICT_RULES = frozenset(_VERDICT_RULE.values())
#: What the ``dsh-audit diff`` command a capture finding's hint names shows of it.
_DIFF_PURPOSE = {"DSH811": "for the JSON paths that differ",
                 "DSH812": "for the spelling difference (key order, whitespace, numbers, escapes)",
                 "DSH813": "for the alignment (check that the capture covers the whole session)"}
#: The same for ``DSH814`` (a capture no log explains).
DIFF_UNEXPLAINED = "for the alignment (the log is missing events for a call that was sent)"
#: How a message states a value of the policy's own (``min-cache-hit-ratio``), followed by it as a
#: percentage: ``the policy bound 60.0%``. No other gate message states one: the others say what
#: the log and the capture hold (a break's cause, not the causes the policy allows).
_BOUND = "the policy bound"
_POLICY_VALUE = re.compile(re.escape(_BOUND) + r" \d+(?:\.\d+)?%")
#: The gate rules whose messages state a value of the policy's (:data:`_BOUND`).
_POLICY_VALUED = frozenset({"DSH831", "DSH832"})
#: A command a gate rule's own hint names (``run `dsh-audit cache` ...``): the rule's text, never a log's.
_NAMED = re.compile(r"`(dsh-audit [^`]*)`")
_RULE_COMMANDS = {rule.id: tuple(_NAMED.findall(rule.hint)) for rule in GATE_RULES.values()}


def rule_commands(rule: str) -> tuple[str, ...]:
    """The commands of ours a hint of a finding of ``rule`` names by the rule alone
    (:attr:`Finding.commands`): a gate rule's own hint's, ``dsh-audit validate FILE`` for a
    validation rule's. A hint written for one finding (a refusal's, :meth:`Judge.diff_hint`'s)
    names its own: :class:`Hint` carries them.

    Example:
        >>> rule_commands("DSH831"), rule_commands("DSH822"), rule_commands("DSH201")
        (('dsh-audit cache',), (), ('dsh-audit validate FILE',))
    """
    return _RULE_COMMANDS.get(rule, (VALIDATE_COMMAND,))


def policy_free(rule: str, message: str) -> str:
    """``message`` of a finding of ``rule`` without the values of the policy's it states (a
    bound), what a baseline matches on: loosening or tightening the bound leaves the finding the
    same finding (a looser policy can only remove failures). The message a report prints keeps them.

    Example:
        >>> policy_free("DSH831", "actual cache-hit ratio 49.6% is below the policy bound 60.0% (7936 of 15996)")
        'actual cache-hit ratio 49.6% is below the policy bound (7936 of 15996)'
        >>> policy_free("DSH822", "cause x (the policy bound 60.0%)")  # log text: only gate rules' own words
        'cause x (the policy bound 60.0%)'
    """
    return _POLICY_VALUE.sub(_BOUND, message) if rule in _POLICY_VALUED else message


#: A DSH801 of a first line that is no session header: its prefix, its faults, then (v1+) rc.8's words.
_HEADER_REFUSAL = re.compile(r"(corrupt session log: first line is not a session header(?: of v[^:]*)?: )(.*?)"
                             r"((?:; DSH 0\.1\.0-rc\.8, which reads only v0, refuses it as: .*)?)", re.S)
#: A header field written as a value of the wrong type, as session 43 said it (``createdAt is a
#: string "x", not ``) and as session 44 does (``createdAt "x" is a string, not ``, the value cut):
#: keyed without its value (now at most 20 characters: a value is no other fault).
_MISTYPED_FAULT = re.compile(r"(^|; )(version|id|createdAt|delegationDepth|agentPreset|isSeeded) "
                             r"(?:is (an? (?:string|number|boolean|array|object)) .*?|"
                             r".{1,20}? is (an? (?:string|number|boolean|array|object))), not ", re.S)
#: A v2+ header's own faults after another one: session 44 names them beside the others, session
#: 43 named them only alone (:func:`~dsh_audit.log._header._header_faults`).
_V2_FAULT = re.compile(r'; (?:no boolean isSeeded \(v\d+\)|isSeeded is an? \w+, not a boolean \(v\d+\)|'
                       r'a seedLength \(v0 and v1 only; v\d+ says isSeeded\)|'
                       r'unknown keys? ".*? \(a v\d+ header has exact keys\))')
#: What DSH810 adds of a found capture that holds none of the log's requests (:func:`capture_holds`),
#: which session 44 fills from every group of the run (:func:`held_across`).
_HOLDS = re.compile(r"(holds none of its requests) \((?:it holds |its \d+ captured request).*\)\Z", re.S)


def reworded_free(rule: str, message: str) -> str:
    """``message`` of a finding of ``rule`` without what dsh-audit reworded or added since a
    baseline of an earlier wording was written (what such a baseline matches on, its own findings'
    and the run's, :func:`policy_free` too): a refused header's mistyped fields without their
    values, and its v2+ faults named after another; DSH810's clause saying what a found capture
    holds instead. The finding says the same of the same log: only dsh-audit's words moved. Only
    there: it would also match a header fault added since, or another value, so a baseline of this
    wording (its report's ``message_wording``) keeps the whole message. A report prints it whole.

    Example:
        >>> at = "corrupt session log: first line is not a session header of v4: "
        >>> old, new = at + 'createdAt is a string "x", not an integer', at + 'createdAt "x" is a string, not an integer'
        >>> reworded_free("DSH801", old) == reworded_free("DSH801", new + "; no boolean isSeeded (v4)")
        True
        >>> reworded_free("DSH801", new)[63:]
        'createdAt is a string, not an integer'
        >>> reworded_free("DSH810", "no capture: the capture found beside the log (w) holds none of its requests "
        ...               "(it holds requests of session(s) s-b)")
        'no capture: the capture found beside the log (w) holds none of its requests'
    """
    if rule == "DSH810":
        return _HOLDS.sub(r"\1", message)
    header = _HEADER_REFUSAL.fullmatch(message) if rule == "DSH801" else None
    if header is None:
        return message
    faults = _MISTYPED_FAULT.sub(lambda m: f"{m[1]}{m[2]} is {m[3] or m[4]}, not ", header[2])
    return header[1] + _V2_FAULT.sub("", faults) + header[3]


def refused_rule(error: Exception) -> str:
    """The gate rule of a log's refusal ``error``: ``DSH801`` when DSH refuses to load the log
    (an :class:`~dsh_audit.errors.InputError`), ``DSH802`` when it loads but its requests cannot
    be rebuilt (replay's surface fold: a :class:`~dsh_audit.errors.ReplayError`, or another error)."""
    return "DSH801" if isinstance(error, InputError) else "DSH802"


def request_seq(request: Request) -> int | None:
    """The seq a finding about ``request`` points at: its first chunk's, else its step start's."""
    return request.first_chunk_seq if request.first_chunk_seq is not None else request.step_start_seq


def _place(row: Any, lines: EventLines) -> tuple[int | None, int | None]:
    """The seq and line a capture finding about ``row`` (a :class:`dsh_audit.capture.RequestDiff`)
    points at: an unrendered request's refusal's own (the header whose route has no facts, the
    message holding what cannot be sent: where ``render`` says it), else the request's
    (:func:`request_seq`); the line is the raiser's, else the one the log's read found the seq on."""
    seq = row.seq if row.verdict == "unrendered" else None
    if seq is None:
        seq = request_seq(row.request)
        return seq, lines.get(seq)
    return seq, row.line if row.line is not None else lines.get(seq)


def diff_command(log: str, capture: str | os.PathLike[str], *, adapter: str = "auto",
                 routes: str | None = None) -> str:
    """The ``dsh-audit diff`` command that shows a capture verdict of ``log`` row by row, as typed
    in bash or zsh from the folder check ran in, each path a :func:`~dsh_audit._shell.shell_word`
    (``./`` before a leading ``-``, ``$'...'`` for a name a terminal shows escaped): ``diff`` finds
    no capture by itself, so it names ``--capture`` (and the ``--adapter`` and ``--routes`` the gate
    rendered with).

    Example:
        >>> diff_command("logs/a b.jsonl", Path("logs/wire.jsonl"), routes="r.yml")
        "dsh-audit diff 'logs/a b.jsonl' --capture logs/wire.jsonl --routes r.yml"
        >>> diff_command("-a\\tb.jsonl", Path("wire.jsonl"), adapter="openai")
        "dsh-audit diff $'./-a\\\\x09b.jsonl' --capture wire.jsonl --adapter openai"
    """
    words = ["dsh-audit", "diff", shell_word(log), "--capture", shell_word(capture)]
    if adapter != "auto":
        words += ["--adapter", shell_word(adapter)]
    if routes is not None:
        words += ["--routes", shell_word(routes)]
    return " ".join(words)


def foreign_capture_hint(*, several: bool = False) -> str:
    """DSH810's hint for a log whose found capture holds none of its requests, which ``diff``'s
    error says too, of one log or (``several``) of several: one text, so the two cannot drift apart.

    Example:
        >>> foreign_capture_hint(several=True)
        "pass --capture FILE naming the logs' capture, or put the wire.jsonl holding their requests beside them or up to four folders above them"
    """
    log, its, it = ("logs'", "their", "them") if several else ("log's", "its", "it")
    return (f"pass --capture FILE naming the {log} capture, or put the wire.jsonl holding {its} requests "
            f"beside {it} or up to four folders above {it}")


#: :func:`foreign_capture_hint` of one log.
FOREIGN_CAPTURE_HINT = foreign_capture_hint()


def capture_holds(rows: Sequence[Any], held: set[str]) -> str:
    """What a capture found beside logs holds, said of a log it holds none of the requests of
    (``rows``: its comparison with them; ``held``: :func:`dsh_audit.capture.held_sessions`'): the
    sessions it holds requests of, else how many captured requests name no session (pi-ai's, paired
    with no request), else that it holds none. ``check``'s DSH810 and ``diff``'s note say it in one
    wording. Its ids are log text: every note, error and finding's view escapes it.

    Example:
        >>> from types import SimpleNamespace as R
        >>> capture_holds([], {"s-b", "s-a"}), capture_holds([R(capture=1), R(capture=None)], set())
        ('it holds requests of session(s) s-a, s-b', 'its 1 captured request(s) name no session')
        >>> capture_holds([], set())
        'it holds no captured request'
    """
    if held:
        return f"it holds requests of session(s) {listed(sorted(held))}"
    sends = sum(row.capture is not None for row in rows)
    return f"its {sends} captured request(s) name no session" if sends else "it holds no captured request"


def held_across(check: SessionCheck, capture: str, held: set[str]) -> SessionCheck:
    """``check``, a log whose found ``capture`` holds none of its requests, with its DSH810 naming
    ``held``: the sessions every comparison of the run found that capture holds requests of.

    check reads logs in groups of neighbours, each compared with the capture alone: a pi-ai capture
    (no session header) is held by the session its sends pair with, which another group's may be;
    ``diff`` compares every log beside the capture at once, and names that session. So both say it.
    """
    message = _no_capture(capture, holds=capture_holds((), held))[0]
    return replace(check, findings=tuple(replace(f, message=message) if f.rule == "DSH810" else f
                                         for f in check.findings))


def _no_capture(other: str | os.PathLike[str] | None = None, *, unread: bool = False,
                holds: str | None = None) -> tuple[str, str | None]:
    """DSH810's message and hint (None: the rule's) for a log compared with no capture:
    found ones ignored (``--no-capture``: a wire.jsonl put beside it would be ignored too), else
    the capture found beside it (``other``, as the log's comparison read it) cannot be read
    (``unread``: named so, its own DSH802 says why and fails; "none found" would be false) or
    holds none of its requests, and what it holds instead (``holds``: :func:`capture_holds`), as
    ``diff`` says it (another session's), else none given or found.

    Example:
        >>> _no_capture("w/wire.jsonl", holds="it holds no captured request")[0] in (
        ...     "no capture: the capture found beside the log (w/wire.jsonl) holds none of its requests "
        ...     "(it holds no captured request)", "no capture given, and captures found beside the log are "
        ...     "ignored (--no-capture)")
        True
        >>> _no_capture("w/wire.jsonl", unread=True)[0]
        'no capture compared: the capture found beside the log (w/wire.jsonl) cannot be read (DSH802)'
    """
    if captures_ignored():
        return ("no capture given, and captures found beside the log are ignored (--no-capture)",
                "pass --capture FILE; without --no-capture, a wire.jsonl beside the log or up to four folders above "
                "it is compared")
    if other is not None and unread:
        return (f"no capture compared: the capture found beside the log ({os.fspath(other)}) cannot be read (DSH802)",
                "repair or remove that file (its DSH802 says where it breaks), or pass --capture FILE")
    if other is not None:
        instead = "" if holds is None else f" ({holds})"
        return (f"no capture: the capture found beside the log ({os.fspath(other)}) holds none of its "
                f"requests{instead}", FOREIGN_CAPTURE_HINT)
    return "no capture given or found beside the log (wire.jsonl)", None


class Judge:
    """Builds findings for one policy: severity from the rule, ``fails`` from the policy, the hint
    the finding's own cause names (a render refusal's), else the rule's.

    ``routes`` is the route file check renders with (``--routes``): the ``dsh-audit diff``
    command a capture finding's hint names passes it too."""

    def __init__(self, policy: Policy, *, routes: str | None = None) -> None:
        self.policy = policy
        self.routes = routes
        #: by capture found (as compared): what it holds instead of the requests of the logs it holds
        #: none of (:func:`capture_holds`), which their DSH810 says (set by the comparison that read it)
        self.holds: dict[str, str] = {}

    def _fails(self, meta: GateRule, verdict: str | None) -> bool:
        """Whether a finding of ``meta`` fails: the rule's policy key decides."""
        p, key = self.policy, meta.policy
        if key == "fail-on-refusal":
            return p.fail_on_refusal
        if key == "require-capture":
            return p.require_capture
        if key == "capture-fail":
            return verdict in p.capture_fail
        if key == "fail-on-unexplained-break":
            return p.fail_on_unexplained_break
        return True  # allowed-break-causes, min-cache-hit-ratio: the finding exists only when the policy fails it

    def finding(self, rule: str, message: str, *, path: str, line: int | None = None, seq: int | None = None,
                session_id: str | None = None, request: int | None = None, verdict: str | None = None,
                hint: str | Hint | None = None, reason: str | None = None) -> Finding:
        """A finding of gate rule ``rule``; ``hint``, the finding's own (what its cause names; a
        :class:`Hint` with the commands of ours it names, a bare text none), wins over the rule's
        generic one (with :func:`rule_commands`): a finding shows one hint. ``reason``: :attr:`Finding.reason`."""
        meta = GATE_RULES[rule]
        own = hint if isinstance(hint, Hint) else Hint(hint or "")
        text, commands = own if own.text else (meta.hint, rule_commands(rule))
        return Finding(rule=rule, severity=meta.severity, message=message, path=path, line=line, seq=seq,
                       session_id=session_id, request=request, fails=self._fails(meta, verdict),
                       hint=text, reason=reason, commands=commands)

    def _validation(self, items: Sequence[Any], session_id: str | None) -> list[Finding]:
        return [Finding(rule=f.rule, severity=f.severity, message=f.message, path=f.path, line=f.line, seq=f.seq,
                        session_id=session_id, fails=self.policy.validation_fails(f.severity), hint=f.hint,
                        commands=rule_commands(f.rule) if f.hint else (), lines=f.lines)
                for f in items]

    def validation(self, items: Sequence[Any], session_id: str | None) -> list[Finding]:
        """Validation findings made apart from a log's read (a fork child's DSH603, found once its
        parent is read too), judged as those of its read are, the policy's ignored rules dropped."""
        return self._keep(self._validation(items, session_id))

    def _keep(self, findings: list[Finding]) -> list[Finding]:
        return [f for f in findings if not self.policy.ignored(f.rule)]

    def refusal(self, outcome: Failure, *, validation: Sequence[Any]) -> list[Finding]:
        """The findings of a log that could not be read or replayed, its error as the checker has
        it (a Codex rollout or Claude Code transcript every line of which is damaged is already
        named as such: :meth:`dsh_audit.gate._run._Checker.failed`)."""
        error = outcome.error
        rule = refused_rule(error)
        hint = Hint(error.hint, (VALIDATE_COMMAND,)) if error.hint else None  # dsh_audit.log's templates name it
        first = self.finding(rule, error.message, path=outcome.path, line=error.line, seq=error.seq,
                             session_id=outcome.session_id, hint=hint)
        return self._keep([first, *self._validation(validation, outcome.session_id)])

    def session(self, path: str, session_id: str, *, lines: EventLines, seqs: Mapping[int, int | None],
                rows: Sequence[Any], transitions: Sequence[Any], cache: Any, capture: Path | None,
                other: Path | None, validation: Sequence[Any], unread: bool = False,
                unsent: Sequence[tuple[Any, RenderError]] = ()) -> list[Finding]:
        """Every finding of one log that replayed: ``lines`` maps its events' seqs to lines (recorded
        in the session's one pass: no second read for a finding's line), ``seqs`` a request index to
        the seq of its first chunk or step start (at least for each break's request). With no
        ``capture``, ``other`` is the capture found beside the log that its comparison read and
        found to hold none of its requests, or (``unread``) could not read (its own DSH802 says why)
        (:meth:`dsh_audit.gate._compare.CaptureCompare.compare`'s others), None when none was found
        or found ones are ignored: what the comparison saw, not a second look for a capture.
        ``unsent``: with no capture, each request (or its outline) pi-ai sends nothing for because of its headers
        (:meth:`dsh_audit.session.Bodies.header_refusal`) and that refusal: unrendered, ``DSH815``,
        as a capture's comparison says it of the same request, so a log fails the gate alike with and
        without its capture (the log and the route configuration prove it: no capture is needed)."""
        out = self._validation(validation, session_id)
        if capture is None:
            message, hint = _no_capture(other, unread=unread,
                                        holds=None if other is None else self.holds.get(os.fspath(other)))
            out.append(self.finding("DSH810", message, path=path, session_id=session_id, hint=hint))
            out += self._captures(path, [RequestDiff.refused(Pairing(request, None), refusal)
                                         for request, refusal in unsent], lines, None)
        else:
            out += self._captures(path, rows, lines, capture)
        out += self._breaks(path, transitions, lines, seqs)
        out += self._cache(path, session_id, cache)
        return self._keep(out)

    def routes_hint(self, log: str, hint: str) -> str:
        """An unrendered request's hint that asks for ``--routes FILE`` (a route the log does not
        describe), as :func:`dsh_audit.session.routes_hint` completes it for ``render`` and ``diff``
        (a redacted bundle's route file, else the patch layer of the DSH home the log was recorded
        in; the manifest is read once while it stays the same, by that function). Any other hint,
        or one while check already renders with a ``--routes`` file, is left as it is; a route profile
        header's names the DSH home's layers it is in, as that function says it.

        Example:
            >>> judge = Judge(Policy())
            >>> judge.routes_hint("rec/sessions/p/s/session.jsonl", "pass --routes FILE (the route configuration)")
            'pass --routes FILE (the route configuration), or declare the route in rec/cordis.patch.yml (the patch layer of the DSH home the log was recorded in, read when no --routes is given)'
            >>> judge.routes_hint("logs/session.jsonl", "pass --routes FILE (the route configuration)")
            'pass --routes FILE (the route configuration), or record the log in a DSH home (<home>/sessions/...) and declare the route in <home>/cordis.patch.yml, read when no --routes is given'
        """
        if self.routes is not None or "--routes FILE" not in hint:
            return hint
        return routes_hint(log, hint)  # as render and diff say it (a bundle's route file too)

    def diff_hint(self, log: str, capture: str | os.PathLike[str], purpose: str) -> Hint:
        """The hint of a capture finding: the ``dsh-audit diff`` command that shows it, complete,
        which it names (a log's path in it is a quoted shell word that may hold backticks).

        Example:
            >>> Judge(Policy()).diff_hint("a`b.jsonl", "w.jsonl", "now")
            Hint(text="run `dsh-audit diff 'a`b.jsonl' --capture w.jsonl` now", commands=("dsh-audit diff 'a`b.jsonl' --capture w.jsonl",))
        """
        command = diff_command(log, capture, adapter=self.policy.adapter, routes=self.routes)
        return Hint(f"run `{command}` {purpose}", (command,))

    def _captures(self, path: str, rows: Sequence[Any], lines: EventLines, capture: Path | None) -> list[Finding]:
        out = []
        for row in rows:
            rule = _VERDICT_RULE.get(row.verdict)
            request = row.request
            if rule is None or request.kind not in self.policy.capture_kinds:
                continue
            seq, line = _place(row, lines)
            detail = ""
            if row.diff is not None and row.diff.first_offset is not None:
                paths = ", ".join(row.diff.paths[:3])
                detail = f" at byte {row.diff.first_offset}" + (f" ({paths})" if paths else "")
            where = f" vs {row.capture.where()}" if row.capture is not None else ""
            # an unrendered request's refusal hint (--routes FILE, --attachments DIR) is the finding's
            note, hint = row.note, row.hint
            if rule == "DSH815" and hint is not None:
                hint = self.routes_hint(path, hint)
            if row.verdict != "unrendered" and (row.verdict == "unmatched" or row.diff is None):
                # why alignment left the request alone (its route and model), as `diff` says it
                note = row.pairing.note
            if hint is None and rule in _DIFF_PURPOSE and capture is not None:
                hint = self.diff_hint(path, capture, _DIFF_PURPOSE[rule])
            text = f"{request.kind} request {request.index} is {row.verdict}{where}{detail}"
            said = f": {note}" if note else ""
            # the same verdict of other requests, for the same reason, is said with it on a terminal
            out.append(self.finding(rule, text + said, path=path, line=line, seq=seq,
                                    session_id=request.session_id, request=request.index, verdict=row.verdict,
                                    hint=hint, reason=None if detail else row.verdict + said))
        return out

    def _breaks(self, path: str, transitions: Sequence[Any], lines: EventLines,
                seqs: Mapping[int, int | None]) -> list[Finding]:
        out = []
        for t in transitions:
            if t.verdict != "break":
                continue
            unexplained = t.is_unexplained
            if not unexplained and t.cause in self.policy.allowed_break_causes:
                continue
            seq = t.evidence_seqs[0] if t.evidence_seqs else seqs.get(t.request)
            rule = "DSH821" if unexplained else "DSH822"
            text = (f"request {t.request} breaks the prefix cache of request {t.previous}: cause {t.cause}"
                    + (f" ({t.detail})" if t.detail else ""))
            out.append(self.finding(rule, text, path=path, line=lines.get(seq), seq=seq,
                                    session_id=t.session_id, request=t.request))
        return out

    def _cache(self, path: str, session_id: str, cache: Any) -> list[Finding]:
        bound = self.policy.min_cache_hit_ratio
        ratio = cache.ratio(cache.actual_total) if cache is not None else None
        if bound and ratio is None and cache is not None and cache.request_count:
            return [self.finding("DSH832", f"the cache-hit ratio cannot be measured (no usage in the log's "
                                 f"{cache.request_count} request(s)), so {_BOUND} {bound:.1%} was not "
                                 "checked", path=path, session_id=session_id)]
        if not bound or ratio is None or ratio >= bound:
            return []
        return [self.finding("DSH831", f"actual cache-hit ratio {ratio:.1%} is below {_BOUND} {bound:.1%} "
                             f"({cache.actual_total} of {cache.prompt_total} prompt tokens read from cache)",
                             path=path, session_id=session_id)]
