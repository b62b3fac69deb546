"""The values ``run_check`` returns: findings, one :class:`SessionCheck` per log, the result."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

from ..cache import Costs, Priced
from ._rules import policy_key

__all__ = ["CheckResult", "Finding", "Hint", "RequestOutline", "RequestRecorder", "SessionCheck", "tally"]


class Hint(NamedTuple):
    """A hint the gate writes and the commands of ours it names between backticks
    (:attr:`Finding.commands`), kept together from where it is written: a report then knows which
    spans are our commands without reading them back out of text that may hold a log's path."""

    text: str
    commands: tuple[str, ...] = ()


#: The rules of a refused log: DSH refuses it (``DSH801``), or it cannot be replayed (``DSH802``).
_REFUSAL_RULES = ("DSH801", "DSH802")


@dataclass(frozen=True, slots=True)
class Finding:
    """Anything the gate or a report shows: a rule, where it happened, and whether it fails.

    Attributes:
        rule: a validation rule id (``DSH1xx``-``DSH7xx``) or a gate rule id (``DSH8xx``).
        severity: ``error``, ``warning`` or ``info``.
        message: one sentence for people.
        path: the log file (for ``DSH814``, a capture no log explains: the capture file).
        line: 1-based physical line of the decoded log (1 is the session header), when known.
        seq: the event seq the finding points at, when known.
        session_id: the log's session, when it was read.
        request: the request index (``dsh-audit requests`` numbering), when the finding is about one.
        fails: whether the policy makes this finding fail the build.
        hint: how to fix it.
        baselined: the finding is one a baseline accepts (``check --baseline``): it does not fail.
        reason: for a finding about one request, what its message says that names no request (the
            verdict and why: ``unrendered: cannot render: ...``), by which the terminal summary
            groups the same finding of a log's requests on one line; None: it is never grouped.
            Not in the reports (each keeps one finding per request).
        commands: the commands of ours the hint names between backticks, set where the hint is
            written (:class:`Hint`): a report may show them as code, never any other text of the
            hint (a log's path in it, a folder named ``a `dsh-audit x` b``). Not in the JSON
            report (:meth:`to_json`).
        lines: how many lines from :attr:`line` on hold this same fault (a run of junk records that
            validation folds into one finding, :attr:`dsh_audit.validate.Finding.lines`, its message
            saying the run): every count of findings counts each of them, as ``validate`` counts
            them (:func:`tally`). Not in the JSON report (the schema has no such key; the message says it).
    """

    rule: str
    severity: str
    message: str
    path: str
    line: int | None = None
    seq: int | None = None
    session_id: str | None = None
    request: int | None = None
    fails: bool = False
    hint: str | None = None
    baselined: bool = False
    reason: str | None = None
    commands: tuple[str, ...] = ()
    lines: int = 1

    def to_json(self) -> dict[str, Any]:
        """The finding object of the JSON report (``docs/report-schema.json``; ``baselined`` only
        when true; never :attr:`reason` nor :attr:`commands`, which the schema does not hold)."""
        out: dict[str, Any] = {"rule": self.rule, "severity": self.severity, "message": self.message,
                               "path": self.path, "line": self.line, "seq": self.seq, "session_id": self.session_id,
                               "request": self.request, "fails": self.fails, "hint": self.hint}
        if self.baselined:
            out["baselined"] = True
        return out

    @property
    def verdict(self) -> str:
        """The rule and severity, and what the policy made of the finding: ``DSH815 warning (fails
        the gate: capture-fail)`` (the policy key that fails it: a severity is the rule's, the
        gate's fail is the policy's, docs/ci.md), ``DSH831 error baselined``, ``DSH810 info``."""
        mark = f" (fails the gate: {policy_key(self.rule)})" if self.fails else " baselined" if self.baselined else ""
        return f"{self.rule} {self.severity}{mark}"

    def format(self, *, hint: bool = True) -> str:
        """``path:line: seq N: request I: DSH811 error (fails the gate: capture-fail): message (hint:
        ...)`` (:attr:`verdict`; ``hint=False`` leaves out the hint, for a report that shows it apart).

        Example:
            >>> Finding("DSH810", "info", "no capture", "a.jsonl", hint="pass --capture").format()
            'a.jsonl: DSH810 info: no capture (hint: pass --capture)'
            >>> Finding("DSH815", "warning", "unrendered", "a.jsonl", fails=True).format()
            'a.jsonl: DSH815 warning (fails the gate: capture-fail): unrendered'
        """
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        seq = "" if self.seq is None else f" seq {self.seq}:"
        request = "" if self.request is None else f" request {self.request}:"
        shown = f" (hint: {self.hint})" if hint and self.hint else ""
        return f"{where}:{seq}{request} {self.verdict}: {self.message}{shown}"


def tally(findings: Iterable[Finding]) -> int:
    """How many findings ``findings`` are, as every count of check's says it: a folded run of junk
    lines (:attr:`Finding.lines`) counts each of its lines, as ``validate`` counts it (issue 15).

    Example:
        >>> tally([Finding("DSH111", "error", "m", "a.jsonl", lines=6), Finding("DSH810", "info", "m", "a.jsonl")])
        7
    """
    return sum(f.lines for f in findings)


#: The amounts check's reports show of a session's priced summary (``cache --json``'s ``cost``):
#: each one's key there, and the name of the counts of the requests that owe it (None: every
#: request owes it, as :class:`dsh_audit.cache.Priced` says).
_AMOUNTS = {"cost": ("cost_usd", None), "no_cache": ("no_cache_cost_usd", None),
            "off_peak": ("off_peak_cost_usd", None), "break": ("break_cost_usd", "break")}


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _applies(cost: Any, amount: str) -> bool:
    """Whether ``amount`` (a key of :data:`_AMOUNTS`) is in a session's priced summary ``cost`` (every
    one is since session 43: a one-rate provider's off-peak cost is its cost; a summary made before
    may lack ``off_peak_cost_usd``); True when the session was not priced (:func:`_owed` says so)."""
    return not isinstance(cost, dict) or _AMOUNTS[amount][0] in cost


def _owed(cost: Any, amount: str) -> Priced | None:
    """``amount`` (a key of :data:`_AMOUNTS`) of a session's priced summary ``cost``, as the sum of
    its priced requests by the one rule (:class:`~dsh_audit.cache.Priced`); None when the session was
    not priced (its log could not be read)."""
    if not isinstance(cost, dict):
        return None
    key, owing = _AMOUNTS[amount]
    value = cost.get(key)
    if isinstance(value, dict):  # the cost by bucket, and its total
        value = value.get("total")
    requests, unpriced = _count(cost.get("requests")), _count(cost.get("unpriced_requests"))
    owes = (requests, unpriced) if owing is None else (_count(cost.get(f"{owing}_requests")),
                                                       _count(cost.get(f"{owing}_unpriced")))
    usd = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
    return Priced(usd, requests, unpriced, *owes)


def _money(owed: Priced, *, bound: bool = False) -> tuple[float | None, str]:
    """An amount as JSON gives it (None: unknown) and as people read it, by the one rule
    (:attr:`Priced.known`, :meth:`Priced.shown`: ``$x``, ``≥$x``, ``$?``); ``bound``: a log the sum
    could not include (one that could not be read) makes a known amount a lower bound, as
    ``usage`` shows the total of such a run."""
    return owed.known, owed.shown(failed=bound)


@dataclass(frozen=True, slots=True)
class RequestOutline:
    """What a report says of a request without its messages (``run_check(outline=True)``): its
    index (``dsh-audit requests`` numbering), kind and place in the loop."""

    index: int
    kind: str
    session_id: str
    turn: int | None = None
    step: int | None = None
    attempt: int = 0

    @classmethod
    def of(cls, request: Any) -> RequestOutline:
        """The outline of a rebuilt :class:`dsh_audit.replay.Request`."""
        return cls(request.index, request.kind, request.session_id, request.turn, request.step, request.attempt)


class RequestRecorder(Protocol):
    """What a view makes of a log's requests while the log is checked as it is replayed
    (``run_check(record=...)``), one request at a time, in replay order (the HTML report's
    :class:`dsh_audit.report.SessionPage`, made by :class:`dsh_audit.report.SessionPages`)."""

    def add(self, request: Any, transition: Any, verdict: Any, entry: Any) -> None:
        """The next request (:class:`dsh_audit.replay.Request`), its attribution
        (:class:`dsh_audit.attribution.Transition`, or None), cache verdict and priced ledger
        entry (:func:`dsh_audit.cache.price_entry`)."""


@dataclass(frozen=True, slots=True)
class SessionCheck:
    """Everything the gate learnt about one log, kept for the reports.

    Attributes:
        path: the log file.
        session_id: the session id, or None when the log could not be read.
        requests: the rebuilt requests (:class:`dsh_audit.replay.Request`), or with
            ``run_check(outline=True)`` their :class:`RequestOutline` (for a log checked as it is
            replayed, a :class:`~dsh_audit._spool.RowSpool`: a long log's outlines are not held
            in memory).
        transitions: attribution, one per request (:class:`dsh_audit.attribution.Transition`).
        cache: the cache accounting (:class:`dsh_audit.cache.SessionCacheReport`), or None.
        captures: capture pairings of this session's requests (:class:`dsh_audit.capture.RequestDiff`).
        capture_path: the capture compared with, or None.
        findings: this log's findings, in order.
        error: the reading or replay error text, when the log failed.
        title: the session's title as DSH logged it (``session/title``), or None.
        parent_id: a fork or subagent child's parent session (its header's ``parentSession``).
        seed_length: a fork child's seed length (its header's ``seedLength``): None for a subagent.
        cwd: the working directory its header names (``cwd``), or None.
        first_time, last_time: the log's own first and last timestamps
            (:meth:`dsh_audit.session.Session.span`, as ``dsh-audit sessions`` shows them).
        record: with ``run_check(record=...)``, the recorder that was handed the log's requests
            while it was replayed (then ``requests`` are outlines); None when the log was read whole.
        unreadable: not a line of the log could be read (a FIFO, a folder, a link loop or a
            dangling link, no permission): its refusal (``DSH801``, ``error``) is a reading error,
            which the CLI also says on stderr, as every command that reads logs says it.
        captured_usage: with ``--capture``, request index -> the tokens the captured response to its
            send reports (:func:`dsh_audit.cache.given_usage`), which price a request whose log holds
            no usage (the report prices its requests with them, as ``cache`` was).
        capture_refusal: the DSH802 of the capture found beside the log that cannot be read (at the
            capture, not the log: the run's finding, not among ``findings``), or None: the log is
            checked without it; when that finding fails the gate, so does the log (:attr:`failed`:
            its row said ``ok`` under ``FAILED`` and exit 1).
        capture_unreadable: the capture found beside the log cannot be read: the fact, whatever the
            policy made of its DSH802 (``ignore = ["DSH802"]`` drops :attr:`capture_refusal`, yet the
            log's DSH810 still says the capture cannot be read), which :attr:`capture_cell` says.
    """

    path: str
    session_id: str | None
    requests: Sequence[Any] = ()
    transitions: tuple[Any, ...] = ()
    cache: Any = None
    captures: tuple[Any, ...] = ()
    capture_path: str | None = None
    findings: tuple[Finding, ...] = ()
    error: str | None = None
    title: str | None = None
    parent_id: str | None = None
    seed_length: int | None = None
    cwd: str | None = None
    first_time: float | None = None
    last_time: float | None = None
    record: RequestRecorder | None = None
    unreadable: bool = False
    captured_usage: Mapping[int, Any] = field(default_factory=dict)
    capture_refusal: Finding | None = None
    capture_unreadable: bool = False

    @property
    def failed(self) -> bool:
        """A finding on the log fails the gate, or the capture found beside it does (:attr:`capture_refusal`)."""
        return any(f.fails for f in self.findings) or (self.capture_refusal is not None and self.capture_refusal.fails)

    @property
    def refusal_fails(self) -> bool:
        """The log was refused (DSH refuses it, or it cannot be replayed: its :attr:`error`) and its
        refusal fails the gate (its ``DSH801``/``DSH802`` finding ``fails``): the one rule by which
        ``report`` exits 1 and a verdict counts ``refused log(s)`` among what failed.

        Example:
            >>> passed = Finding("DSH801", "error", "m", "b.jsonl", fails=False)
            >>> refused = SessionCheck("b.jsonl", None, error="corrupt session log", findings=(passed,))
            >>> refused.refusal_fails, refused.refusal_passes
            (False, True)
        """
        return self.error is not None and any(f.fails and f.rule in _REFUSAL_RULES for f in self.findings)

    @property
    def refusal_passes(self) -> bool:
        """The log DSH refused has a refusal the policy passes (:attr:`refusal_fails` false:
        ``fail-on-refusal = false``, its rule ignored, or its finding baselined); one not a line of
        which could be read (:attr:`unreadable`) is not: its run is incomplete (exit 2), as every
        verdict says of it."""
        return self.error is not None and not self.unreadable and not self.refusal_fails

    @property
    def status(self) -> str:
        """The log's own state, which every view of it says in its words (check's table and CSV,
        the Markdown summary, the HTML page's session verdict): ``failed`` (:attr:`failed`), else
        ``unreadable`` when not a line of it could be read and its refusal fails nothing
        (``fail-on-refusal = false``, or its ``DSH801`` ignored: the run is INCOMPLETE, exit 2, so
        its row must not read as a pass), else ``ok``.

        Example:
            >>> refused = Finding("DSH801", "error", "m", "b.jsonl", fails=True)
            >>> [SessionCheck("b.jsonl", None, unreadable=True, findings=f).status for f in ((refused,), ())]
            ['failed', 'unreadable']
            >>> SessionCheck("a.jsonl", None).status
            'ok'
        """
        return "failed" if self.failed else "unreadable" if self.unreadable else "ok"

    @property
    def unread_why(self) -> str | None:
        """Why not a line of the log could be read (:attr:`unreadable`): its error without the path
        that starts it, for a report that names the path apart (a SARIF notification's location, a
        JUnit testsuite); None when the log was read.

        Example:
            >>> SessionCheck("b.jsonl", None, error="b.jsonl: is a FIFO, not a log file", unreadable=True).unread_why
            'is a FIFO, not a log file'
        """
        if not self.unreadable:
            return None
        return (self.error or "cannot be read").removeprefix(f"{self.path}: ")

    @property
    def capture_cell(self) -> str:
        """The log's capture as every listing's capture column says it (check's table and CSV, the
        Markdown summary): one rule, so no view says ``none`` where another says ``unreadable``:
        ``N/M identical`` of the requests compared (a retry's send aside), ``unreadable`` when the
        capture found beside it cannot be read (:attr:`capture_unreadable`, even when the policy
        ignores its DSH802: the row's DSH810 says so), else ``none``.

        Example:
            >>> SessionCheck("a.jsonl", None).capture_cell, SessionCheck("a.jsonl", None, capture_path="w").capture_cell
            ('none', '0/0 identical')
            >>> SessionCheck("a.jsonl", None, capture_unreadable=True).capture_cell
            'unreadable'
        """
        if self.capture_path is None:
            return "unreadable" if self.capture_unreadable else "none"
        rows = [r for r in self.captures if not r.pairing.retry]
        return f"{sum(r.verdict == 'identical' for r in rows)}/{len(rows)} identical"

    def amount(self, name: str = "cost") -> tuple[float | None, str] | None:
        """What the session cost (``name``: ``cost``, ``no_cache``, ``off_peak``, or ``break``, what
        its breaks cost), from its priced ledger summary (``cache.cost``): as JSON gives it (None:
        unknown) and as people read it (``$x``, ``≥$x`` when a request that owes it is unpriced,
        ``$?`` when none that owes it is priced); None when the session was not priced; ``(None, "n/a")``
        for an amount that does not apply (the off-peak cost of a session with no peak window).

        Example:
            >>> SessionCheck("a.jsonl", None).amount() is None
            True
        """
        cost = getattr(self.cache, "cost", None) if self.cache is not None else None
        if not _applies(cost, name):
            return None, Costs.NOT_APPLICABLE
        owed = _owed(cost, name)
        return None if owed is None else _money(owed)

    def findings_by_request(self) -> dict[int, list[Finding]]:
        """The findings about each request (by index), in order: grouped in one pass, so a report
        that lists every request of a long log does not scan the findings once per request."""
        about: dict[int, list[Finding]] = {}
        for finding in self.findings:
            if finding.request is not None:
                about.setdefault(finding.request, []).append(finding)
        return about

    @property
    def finding_count(self) -> int:
        """The log's findings as its row counts them (:func:`tally`: a folded run, each of its lines)."""
        return tally(self.findings)

    @property
    def log_findings(self) -> tuple[Finding, ...]:
        """The findings about the log as a whole (no request index)."""
        return tuple(f for f in self.findings if f.request is None)


@dataclass(frozen=True, slots=True)
class CheckResult:
    """The outcome of :func:`dsh_audit.gate.run_check`.

    Attributes:
        sessions: one :class:`SessionCheck` per log, in discovery order.
        findings: every finding (sessions' findings plus captures no log explains).
        policy: the :class:`dsh_audit.gate.Policy` applied.
        notes: remarks about inputs (which capture was found for which log, discovery notes, where
            a log contradicts the route file: ``"<log>: route ...: the log records contextWindow ..."``).
        warnings: the route file's warnings, one per session and route/model whose logged context
            window it contradicts (the text of those notes without the log's path; the CLI prints them).
        discovered: discovery's notes among ``notes`` (which file of a session was read: a copy not
            read again, the generation DSH reads), which the CLI prints.
        baseline: the baseline file applied (``--baseline``), or None.
        baseline_gone: baseline entries of the sessions checked that no longer occur (entries, not
            lines: :meth:`baseline_said`).
        baseline_unchecked: baseline entries of sessions this run did not check.
        caveats: what the price table could not know of the costs the reports show (the holiday
            caveats the run's prices met: :meth:`dsh_audit.cache.PriceBook.caveats_met`).
        not_checked: each log of another agent (Claude Code, Codex) found in a folder and left out
            (``run_check(refused=...)``), as ``(path, why)``: the run exits 2 for them though every
            finding may pass, so every report names them (:meth:`not_checked_said`).
    """

    sessions: tuple[SessionCheck, ...]
    findings: tuple[Finding, ...]
    policy: Any
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    discovered: tuple[str, ...] = ()
    baseline: str | None = None
    baseline_gone: int = 0
    baseline_unchecked: int = 0
    caveats: tuple[str, ...] = ()
    not_checked: tuple[tuple[str, str], ...] = ()

    @property
    def passed(self) -> bool:
        """True when no finding fails the policy."""
        return not any(f.fails for f in self.findings)

    @property
    def unreadable(self) -> tuple[str, ...]:
        """The logs not a line of which could be read (:attr:`SessionCheck.unreadable`: a FIFO, a
        link loop, no permission): bad input, as a folder that cannot be read is, so ``check`` exits
        2 for them (issue 15), though each is its row's ``DSH801`` and every report is written.

        Example:
            >>> logs = (SessionCheck("a.jsonl", None), SessionCheck("b.jsonl", None, unreadable=True))
            >>> CheckResult(logs, (), None).unreadable
            ('b.jsonl',)
        """
        return tuple(check.path for check in self.sessions if check.unreadable)

    @property
    def unread_passing(self) -> tuple[str, ...]:
        """The logs of :attr:`unreadable` that fail nothing (``fail-on-refusal = false``, or their
        ``DSH801`` ignored): the run exits 2 for them, yet no failing finding says so, which every
        verdict then does (:meth:`not_checked_said`). One whose refusal fails is a failing finding.

        Example:
            >>> refused = Finding("DSH801", "error", "m", "b.jsonl", fails=True)
            >>> logs = (SessionCheck("a.jsonl", None, unreadable=True),
            ...         SessionCheck("b.jsonl", None, unreadable=True, findings=(refused,)))
            >>> CheckResult(logs, (), None).unread_passing
            ('a.jsonl',)
        """
        return tuple(check.path for check in self.sessions if check.status == "unreadable")

    @property
    def verdict(self) -> str:
        """The verdict's word: ``FAILED`` when a finding fails, else ``INCOMPLETE`` when logs were
        left out (:attr:`not_checked`) or could not be read (:attr:`unreadable`, their ``DSH801``
        passing with ``fail-on-refusal = false``): the run exits 2, so no report may read as a
        clean pass; else ``PASSED``.

        Example:
            >>> two = CheckResult((), (), None, not_checked=(("c.jsonl", "this is a codex session"),) * 2)
            >>> unread = CheckResult((SessionCheck("b.jsonl", None, unreadable=True),), (), None)
            >>> CheckResult((), (), None).verdict, two.verdict, unread.verdict
            ('PASSED', 'INCOMPLETE', 'INCOMPLETE')
        """
        return "FAILED" if not self.passed else "INCOMPLETE" if self.not_checked or self.unreadable else "PASSED"

    def not_checked_said(self) -> str:
        """What a verdict adds for the logs left out (:attr:`not_checked`) and those that could not
        be read whose refusal fails nothing (:attr:`unread_passing`), for which the run exits 2 and
        no failing finding speaks, in one wording for the text verdict, the Markdown summary's
        heading and the HTML page's headline: nothing when none.

        Example:
            >>> two = CheckResult((), (), None, not_checked=(("c.jsonl", "this is a codex session"),) * 2)
            >>> CheckResult((), (), None).not_checked_said(), two.not_checked_said()
            ('', '; 2 log(s) of another agent not checked (exit 2)')
        """
        return f"; {self.not_checked_clause()}" if self.not_checked or self.unread_passing else ""

    def not_checked_clause(self) -> str:
        """The logs left out (:attr:`not_checked`) and those that could not be read whose refusal
        fails nothing (:attr:`unread_passing`) as a clause of its own, for a verdict that says them first (the
        Markdown summary's ``⚠️ incomplete: ...``): :meth:`not_checked_said`'s words.

        Example:
            >>> CheckResult((), (), None, not_checked=(("c.jsonl", "a codex session"),)).not_checked_clause()
            '1 log(s) of another agent not checked (exit 2)'
            >>> CheckResult((SessionCheck("b.jsonl", None, unreadable=True),), (), None).not_checked_clause()
            '1 log(s) could not be read (exit 2)'
        """
        left = [f"{len(self.not_checked)} log(s) of another agent not checked (exit 2)"] if self.not_checked else []
        unread = len(self.unread_passing)
        return "; ".join([*left, *([f"{unread} log(s) could not be read (exit 2)"] if unread else [])])

    def baseline_said(self) -> tuple[str, ...]:
        """The notes of the baseline applied (:attr:`baseline_gone`, :attr:`baseline_unchecked`), in
        one wording for stderr, the JSON report's ``notes`` and the Markdown summary. They count
        baseline entries, not lines as ``N baselined`` does (:func:`tally`): the baseline keeps a
        folded run of junk lines as one finding with no count of its lines, so a run of 6 lines
        is 6 baselined but 1 entry gone.

        Example:
            >>> CheckResult((), (), None, baseline_gone=1, baseline_unchecked=4).baseline_said()
            ('1 baseline entry no longer occurs', '4 baseline entries are of sessions not checked')
            >>> CheckResult((), (), None, baseline_gone=2, baseline_unchecked=1).baseline_said()
            ('2 baseline entries no longer occur', '1 baseline entry is of a session not checked')
        """
        gone, unchecked = self.baseline_gone, self.baseline_unchecked
        return (*(["1 baseline entry no longer occurs" if gone == 1 else
                   f"{gone} baseline entries no longer occur"] if gone else []),
                *(["1 baseline entry is of a session not checked" if unchecked == 1 else
                   f"{unchecked} baseline entries are of sessions not checked"] if unchecked else []))

    @property
    def unattached(self) -> tuple[Finding, ...]:
        """Findings of no checked log (``DSH814``: captures no log explains)."""
        return self.findings[sum(len(s.findings) for s in self.sessions):]

    @property
    def finding_count(self) -> int:
        """Every finding of the run as the totals count them (:func:`tally`: a folded run, each of its lines)."""
        return tally(self.findings)

    @property
    def failing(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.fails)

    @property
    def request_count(self) -> int:
        return sum(len(s.requests) for s in self.sessions)

    @property
    def baselined(self) -> tuple[Finding, ...]:
        """The findings the baseline accepts (``check --baseline``)."""
        return tuple(f for f in self.findings if f.baselined)

    def total(self, name: str = "cost") -> tuple[float | None, str]:
        """What the sessions cost together (``name`` as :meth:`SessionCheck.amount` takes it): the
        sum over every priced request of every log, as JSON gives it and as people read it; a
        lower bound (``≥$x``) when a log could not be read (it is in no sum, as ``usage`` reads none of it).

        Example:
            >>> CheckResult(sessions=(), findings=(), policy=None).total()
            (0.0, '$0.0000')
        """
        costs = [getattr(s.cache, "cost", None) for s in self.sessions]
        priced = [cost for cost in costs if isinstance(cost, dict)]
        if priced and not any(_applies(cost, name) for cost in priced):  # no session had a peak window
            return None, Costs.NOT_APPLICABLE
        # a session with no peak window would have cost off-peak what it cost (as usage sums it)
        owed = [o for o in (_owed(cost, name if _applies(cost, name) else "cost") for cost in costs) if o is not None]
        return _money(Priced.of_many(owed), bound=any(s.error is not None for s in self.sessions))

    def counts(self) -> dict[str, int]:
        """Findings by severity plus ``failing``: ``{"error": 1, "warning": 0, "info": 2, "failing": 1}``
        (and ``baselined`` when a baseline was applied), a folded run counting each of its lines
        (:func:`tally`), as ``validate`` counts it.

        Example:
            >>> run = Finding("DSH111", "error", "m", "a.jsonl", fails=True, lines=6)
            >>> CheckResult((), (run, Finding("DSH810", "info", "m", "a.jsonl")), None).counts()
            {'error': 6, 'warning': 0, 'info': 1, 'failing': 6}
        """
        by: Counter[str] = Counter()
        for f in self.findings:
            by[f.severity] += f.lines
        out = {"error": by["error"], "warning": by["warning"], "info": by["info"], "failing": tally(self.failing)}
        if self.baseline is not None:
            out["baselined"] = tally(self.baselined)
        return out
