"""``run_check``: read, validate, replay, compare with captures, attribute, account, judge.

Each log is opened and decoded once: the validation rules see the lines of the session's own read
(``open_group(validate=True)``). Logs are read in groups of neighbours
(:func:`dsh_audit.session.family_groups`: a fork or subagent child's parent lies in its own group,
and is read from beside the child when it is not among the inputs, for comparison only); each
group is one task of :func:`dsh_audit.runner.iter_many` (worker processes with ``jobs``), and
every log in it is read once into a :class:`~dsh_audit.session.Session` that the capture diff
(``_compare``), attribution and cache accounting share. The price table is loaded once a run (:func:`run_check`)
and handed to every task; the caveats of its prices that a task met in a worker's copy come back
with the task's result into the run's table (:meth:`dsh_audit.cache.PriceBook.caveats_met`).
Inside a group, logs are judged in *rounds* in which every session id appears once (a scenario
folder may hold the same session twice: DSH's zstd log and a decompressed copy), so capture
alignment and attribution never see a session twice. Once every group is read, each fork child
among the logs is compared with its parent among them (DSH603) by validate's own pairing
(:func:`dsh_audit.validate.lineage_findings`, from the seed chains each log's read kept): check
finds what ``validate`` finds, however the logs were grouped. A run that cannot report DSH603 (one
log, or a policy that ignores it) keeps no chain and pairs no log (:func:`_wants_lineage`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from .._spool import RowSpool
from ..attribution import attribute_sessions
from ..cache import PriceBook, account_log, cache_report, load_prices
from ..capture import capture_for, captured_bodies
from ..errors import CaptureError, DshAuditError, MalformedRecordError, RenderError, UsageError
from ..importers import detect
from ..log import SessionLog, discover, foreign_refusal
from ..replay import Request
from ..runner import in_process
from ..session import (Activity, Bodies, Failure, RequestSpan, GroupResult, Session, open_group, rounds, routes_from,
                       route_warnings, run_groups, validating_headers)
from ..validate import Lineage, LineValidator, lineage_findings, select_rules
from ._compare import CaptureCompare
from ._findings import Judge, held_across, refused_rule, request_seq
from ._model import CheckResult, Finding, RequestOutline, RequestRecorder, SessionCheck
from ._policy import Policy
from ._rules import refusal_rules

__all__ = ["run_check"]

Progress = Callable[[int, int], None]


@dataclass
class _GroupCheck(GroupResult[SessionCheck]):
    """What checking one group of logs found: a check per log, and what spans the group (the
    caveats its prices met: :meth:`dsh_audit.cache.PriceBook.caveats_met`)."""

    loose: dict[tuple[str, int], Finding] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    torn: list[str] = field(default_factory=list)  # each capture's torn tail, dropped (load_capture)
    foreign: list[DshAuditError] = field(default_factory=list)  # each given log another agent's (_foreign)
    caveats: tuple[str, ...] = ()
    #: each given log's path and :class:`~dsh_audit.validate.Lineage` (when validated whole), for
    #: the run's fork-lineage check: read once the group is read, however it was read; empty
    #: when the run makes no such check (``check_group``'s ``lineage`` off)
    lineages: list[tuple[str, Lineage | None]] = field(default_factory=list)
    #: by capture found: the sessions it holds requests of (:attr:`CaptureCompare.held`), and by log:
    #: the capture found beside it that holds none of its requests (for :func:`_held_across`)
    held: dict[str, set[str]] = field(default_factory=dict)
    others: dict[str, str] = field(default_factory=dict)


class _Checker(CaptureCompare):
    def __init__(self, policy: Policy, *, capture: Path | None,
                 record: Callable[[], RequestRecorder] | None = None, lean: bool = False,
                 prices: PriceBook | None = None, zero_data_retention: bool | None = None,
                 routes: str | None = None) -> None:
        self.policy = policy
        self.prices = prices if prices is not None else load_prices()
        self.zero_data_retention = zero_data_retention  # the OpenAI organization's, when stated
        self.record = record  # makes what a log checked while it is replayed hands its requests to
        self.lean = lean  # a log checked while it is replayed keeps only what check's reports show
        self.judge = Judge(policy, routes=routes)
        super().__init__(capture)
        self.tees: dict[str, Any] = {}  # path -> what validates that log in its one read
        self.others: dict[str, str] = {}  # log path -> its found capture that holds none of its requests

    def attribute(self, group: list[Session], ancestors: list[Session],
                  rows: dict[str, list[Any]]) -> dict[str, tuple[Any, ...]]:
        ids = {s.id for s in group}
        sessions = [*group, *(a for a in ancestors if a.id not in ids)]
        bodies = {sid: captured_bodies(next(s for s in group if s.id == sid).requests,
                                       (row.pairing for row in mine)) for sid, mine in rows.items()}
        results = attribute_sessions(sessions, captures=bodies, adapter=self.policy.adapter)
        return {a.session_id: a.transitions for a in results if a.session_id in ids}

    def run_group(self, group: list[Session], ancestors: list[Session], *, outline: bool) -> list[SessionCheck]:
        rows, files, others = self.compare(group)
        captured = self.priced(group, rows, files)  # a capture prices the requests whose log holds no usage
        transitions = self.attribute(group, ancestors, rows)
        known = {s.id: s for s in (*group, *ancestors)}
        checks = []
        for session in group:
            mine = transitions.get(session.id, ())
            parent = None if session.imported else known.get(session.header.parent_session or "")
            cache = cache_report(session, attribution=list(mine), prices=self.prices,
                                 zero_data_retention=self.zero_data_retention, parent=parent,
                                 captured=captured.get(session.id))
            capture, other = files.get(session.id), others.get(session.id)
            unread = self.unread(other)  # its found capture cannot be read: said once, in its row and finding
            if other is not None and not unread:
                self.others[session.path] = os.fspath(other)
            first, last = session.span()
            unsent = [] if capture is not None else [
                (request, refusal) for request in session.requests
                if (refusal := session.bodies.header_refusal(request, session.route(request).adapter)) is not None]
            findings = self.judge.session(session.path, session.id, lines=session.lines,
                                          seqs={r.index: request_seq(r) for r in session.requests},
                                          rows=rows.get(session.id, []), transitions=mine, cache=cache,
                                          capture=capture, other=other, unread=unread,
                                          validation=_validation(session), unsent=unsent)
            requests = tuple(map(RequestOutline.of, session.requests)) if outline else tuple(session.requests)
            checks.append(SessionCheck(path=session.path, session_id=session.id,
                                       requests=requests, transitions=tuple(mine), cache=cache,
                                       captures=tuple(rows.get(session.id, ())),
                                       capture_path=str(capture) if capture else None, findings=tuple(findings),
                                       title=session.title, parent_id=session.header.parent_session,
                                       seed_length=session.header.seed_length, cwd=session.header.cwd,
                                       captured_usage=captured.get(session.id, {}),
                                       first_time=first, last_time=last,
                                       capture_refusal=self.refusal_of(other), capture_unreadable=unread))
        return checks

    def streamed(self, log: SessionLog, routes: str | None) -> tuple[SessionCheck, dict[str, tuple[str, ...]]]:
        """The check of a log that is no fork or subagent child and has no capture, made while it
        is replayed (:func:`dsh_audit.cache.account_log`): each request is attributed, accounted
        and outlined as it comes (and handed, with its transition, verdict and priced entry, to a
        new recorder when the checker has ``record``), and none is kept. The same check as
        :meth:`run_group` over the whole session, with :class:`RequestOutline` requests; and the
        route file's warnings."""
        record = None if self.record is None else self.record()
        activity = Activity(log.header)
        outlines = RowSpool(RequestOutline)
        transitions: list[Any] = []
        by_request: dict[int, Any] = {}  # each request's transition, as the whole session's lookup
        seqs: dict[int, int | None] = {}  # the seq of each break's request
        breaking: set[int] = set()
        sent = RequestSpan()  # the requests' span: Session.span's fallback
        config = routes_from(routes, log=log.path)
        headers = Bodies(config, images={})  # each request's header refusal (no body: no image is read)
        unsent: list[tuple[RequestOutline, RenderError]] = []  # the requests pi-ai sends nothing for: DSH815

        # check's reports and findings, and a page made as the log is read (it has the rest), read
        # back only the breaks, and of each only what lists it
        slim = self.lean or record is not None

        def transition(found: Any) -> None:
            if found.verdict == "break" or not slim:
                transitions.append(found.outline() if slim else found)
            if record is not None:
                by_request[found.request] = found
            if found.verdict == "break":
                breaking.add(found.request)

        def judged(request: Request, verdict: Any, entry: Any) -> None:
            outline = RequestOutline.of(request)
            outlines.append(outline)
            refusal = headers.header_refusal(request, entry.route)  # the route the request was judged by
            if refusal is not None:
                unsent.append((outline, refusal))
            if request.index in breaking:
                seqs[request.index] = request_seq(request)
            sent.add(request.time)
            if record is not None:
                record.add(request, by_request.pop(request.index, None), verdict, entry)

        tee = self.tees.get(log.path)
        checker = tee if isinstance(tee, LineValidator) else None  # replay folds into its rules' fold
        result = account_log(log, prices=self.prices, config=config, adapter=self.policy.adapter,
                             zero_data_retention=self.zero_data_retention,
                             keep=record is None and not self.lean,  # a page keeps what it shows
                             on_transition=transition, on_judged=judged, observe=activity.on_event,
                             fold=checker.shared_fold() if checker is not None else None,
                             own=False)  # a log's own warnings are check's findings (DSH103)
        found = checker.finish() if checker is not None and checker.complete else None
        item = result.items[0]
        if isinstance(item, Failure):
            return self.failed(replace(item, validation=None if found is None else tuple(found))), {}
        cache = item[0]
        mine = tuple(sorted(transitions, key=lambda t: t.request))  # attribution's order, as the whole session's
        findings = self.judge.session(log.path, log.header.id, lines=activity.lines, seqs=seqs, rows=(),
                                      transitions=mine, cache=cache, capture=None, other=None,
                                      validation=_validation_of(found), unsent=unsent)
        # Session.span: the log's own timestamps, else (none above 0) its requests' times
        first, last = (activity.first, activity.last) if activity.first is not None else (sent.first, sent.last)
        return SessionCheck(path=log.path, session_id=log.header.id, requests=outlines, transitions=mine,
                            cache=cache, findings=tuple(findings), title=activity.title,
                            parent_id=log.header.parent_session, seed_length=log.header.seed_length,
                            cwd=log.header.cwd, first_time=first, last_time=last, record=record), \
            result.route_warnings

    def failed(self, failure: Failure) -> SessionCheck:
        """The check of a log that could not be read. A log not a line of which could be
        read (a FIFO, a folder, a link loop or a dangling link, no permission) is refused alone,
        its error the finding (:attr:`SessionCheck.unreadable`): the other logs are still checked.
        A Codex rollout or Claude Code transcript every line of which is damaged is said as such
        by the reader (:func:`dsh_audit.log._header.damaged_header`)."""
        findings = self.judge.refusal(failure, validation=_unsaid(failure, self.policy))
        header = failure.header
        return SessionCheck(path=failure.path, session_id=failure.session_id, findings=tuple(findings),
                            error=str(failure.error), parent_id=header.parent_session if header else None,
                            seed_length=header.seed_length if header else None,
                            cwd=header.cwd if header else None,
                            unreadable=failure.validation is None and header is None)


def _unsaid(failure: Failure, policy: Policy) -> Sequence[Any]:
    """The validation findings of a refused log but those that say its refusal's fault, by a rule
    of that fault (:func:`refusal_rules`): one fault, one finding, whether DSH refuses the log
    (``DSH801``) or replay's surface fold does (``DSH802``). They are the findings of those rules
    on the refusal's line (the reader refuses the first fault it meets, where validate finds it),
    else on the first line one of them is on (a header refused against the file name is a body
    record's DSH114). A finding that would fail the gate where the refusal does not (with
    ``fail-on-refusal`` off, or the refusal's rule ignored) is kept: the gate's verdict stays the same.

    Example:
        >>> from dsh_audit.errors import CorruptLogError
        >>> from dsh_audit.validate import Finding as Found
        >>> gap = CorruptLogError("corrupt session log: seq gap in committed region at line 2 (expected 3, got 4)",
        ...                       path="a.jsonl", line=3, seq=4,
        ...                       hint="...; `dsh-audit validate FILE` lists every seq out of place (DSH107, DSH108)")
        >>> found = (Found("DSH404", "warning", "m", "a.jsonl", line=3, seq=4),
        ...          Found("DSH108", "error", "m", "a.jsonl", line=4, seq=3))
        >>> [f.rule for f in _unsaid(Failure("a.jsonl", gap, validation=found), Policy())]
        ['DSH404']
        >>> [f.rule for f in _unsaid(Failure("a.jsonl", gap, validation=found), Policy(fail_on_refusal=False))]
        ['DSH404', 'DSH108']
    """
    found = failure.validation or ()
    error = failure.error
    rules = refusal_rules(error.message, error.hint)
    said = [f for f in found if f.rule in rules]
    if not said or policy.ignored(refused_rule(error)):
        return found
    here = any(f.line == error.line for f in said)  # the reader's line; else the fault's first (a body's DSH114)
    line = error.line if here else min((f.line for f in said), key=lambda n: n or 0)
    failing = not policy.fail_on_refusal  # then a finding that fails is kept as the one that fails the gate
    return [f for f in found if f.rule not in rules or f.line != line
            or (failing and policy.validation_fails(f.severity))]


def _validation(session: Session) -> Sequence[Any]:
    """The validation findings of a log that was read, found in its one read
    (``open_group(validate=True)``)."""
    assert session.validation is not None, "a session read with validate=True has its findings"
    return session.validation


def _validation_of(found: Sequence[Any] | None) -> Sequence[Any]:
    assert found is not None, "a log that replayed was read to its end, so its validation is complete"
    return found


def _lineages(paths: Sequence[str | os.PathLike[str]], tees: dict[str, Any]) -> list[tuple[str, Lineage | None]]:
    """Each of ``paths`` with the :class:`~dsh_audit.validate.Lineage` its validator read (None
    when it saw no whole log: a file that could not be opened pairs with nothing, as in validate)."""
    out: list[tuple[str, Lineage | None]] = []
    for given in paths:
        path = os.fspath(given)
        tee = tees.get(path)
        out.append((path, Lineage.of(tee) if isinstance(tee, LineValidator) and tee.complete else None))
    return out


def _wants_lineage(policy: Policy, count: int) -> bool:
    """Whether a run over ``count`` logs keeps each log's seed chain and pairs fork children with
    their parents (DSH603): not for one log (no parent or child among the logs), nor when the
    policy ignores the rule (its findings would be dropped: the chains, 8 bytes an event, and the
    second read of a child whose seed differs would be spent for nothing).

    Example:
        >>> _wants_lineage(Policy(), 2), _wants_lineage(Policy(ignore=("DSH6",)), 2), _wants_lineage(Policy(), 1)
        (True, False, False)
    """
    return count > 1 and not policy.ignored("DSH603")


def _seeded(checks: tuple[SessionCheck, ...], lineages: list[tuple[str, Lineage | None]], *, policy: Policy,
            jobs: int, engine: str, scheduler: str | None) -> tuple[SessionCheck, ...]:
    """``checks`` with each fork child's DSH603 findings (its seed differs from its parent's prefix),
    when both logs are among those checked: validate's pairing and comparison
    (:func:`~dsh_audit.validate.lineage_findings`), made once every group is read (a child and its
    parent given from two folders are read in two groups), judged as the other validation findings."""
    found = lineage_findings(lineages, select_rules(None, None), jobs=jobs, engine=engine, scheduler=scheduler)
    if not found:
        return checks
    judge = Judge(policy)
    return tuple(replace(c, findings=(*c.findings, *judge.validation(found[c.path], c.session_id)))
                 if c.path in found else c for c in checks)


def _foreign(failure: Failure) -> DshAuditError | None:
    """The refusal of a refused log that is another agent's (Claude Code, Codex), in the words every
    command refuses it (:func:`dsh_audit.log.foreign_refusal`): check reads DSH logs only. Its first
    line was refused, as damaged or as JSON that is no record (``{}``, ``null``: no DSH header
    either); the records after it tell the format (:func:`detect`). None when it is no such log."""
    error = failure.error
    if not (isinstance(error, MalformedRecordError) and error.line == 1):
        return None
    kind = detect(failure.path)
    if kind in (None, "dsh"):
        return None
    message, hint = foreign_refusal(kind)
    return MalformedRecordError(message, path=failure.path, line=1, hint=hint)


def _held_across(checks: Iterable[SessionCheck], held: dict[str, set[str]],
                 others: dict[str, str]) -> tuple[SessionCheck, ...]:
    """``checks``, each DSH810 of a found capture that holds none of its log's requests naming the
    sessions the run's groups found that capture holds (:func:`~dsh_audit.gate._findings.held_across`)
    but its own: another log of its session id may be held (a twin), this one is not, so its own id
    is no other session; with none left, its group's message stands."""
    return tuple(held_across(c, others[c.path], sessions) if (sessions := _held_besides(c, held, others)) else c
                 for c in checks)


def _held_besides(check: SessionCheck, held: dict[str, set[str]], others: dict[str, str]) -> set[str]:
    """The sessions the capture found beside ``check``'s log holds requests of, its own left out."""
    return held.get(others.get(check.path, ""), set()) - {check.session_id}


def check_group(paths: Sequence[str | os.PathLike[str]], *, policy: Policy, prices: PriceBook,
                capture: str | None = None, lenient: bool = False, max_version: int = 4, routes: str | None = None,
                outline: bool = False, record: Callable[[], RequestRecorder] | None = None,
                lean: bool = False, zero_data_retention: bool | None = None, lineage: bool = False) -> _GroupCheck:
    """Check one group of neighbouring logs, each read once (a task of :func:`run_check`), priced
    with ``prices`` (the run's table, or a worker's copy of it: the caveats it met here come back in
    :attr:`_GroupCheck.caveats`); with ``outline`` or ``record``, a log that is no fork or subagent
    child and has no capture is checked while it is replayed (:meth:`_Checker.streamed`), its
    requests handed to a new ``record()``. With ``lineage``, each log's validation keeps its seed
    chain (:attr:`_GroupCheck.lineages`), as validate's does over several logs; without it, none
    is kept and the group's lineages are empty."""
    met = len(prices.caveats_met())
    checker = _Checker(policy, capture=Path(capture) if capture is not None else None, record=record,
                       lean=lean, prices=prices, zero_data_retention=zero_data_retention, routes=routes)
    headers = validating_headers(paths, lenient=lenient, max_version=max_version)
    checker.tees = dict(headers.tees)
    if lineage:  # each log's seed chain, for the fork-lineage check of the run (validate's: _seeded)
        for tee in checker.tees.values():
            tee.keep_chain()
    streams = outline or record is not None
    log = headers.lone_root(paths) if streams and capture_for(paths[0], checker.capture) is None else None
    if log is not None:
        with log:  # closed however the check ends
            check, warned = checker.streamed(log, routes)
        notes = [f"{path}: {warning}" for path, found in warned.items() for warning in found]
        ids = {check.session_id: check.path} if check.session_id is not None and check.error is None else {}
        return _GroupCheck([check], [], ids, warned, notes=notes, caveats=tuple(prices.caveats_met()[met:]),
                           lineages=_lineages(paths, checker.tees) if lineage else [])
    group = open_group(paths, lenient=lenient, max_version=max_version, foreign=False, routes=routes, validate=True,
                       headers=headers)
    checks: dict[str, SessionCheck] = {}
    foreign: list[DshAuditError] = []
    for item in group.given:
        if isinstance(item, Failure):
            foreign.extend(filter(None, [_foreign(item)]))
            checks[item.path] = checker.failed(item)
    for round_ in rounds([s for s in group.given if isinstance(s, Session)]):
        for check in checker.run_group(round_, group.ancestors, outline=outline):
            checks[check.path] = check
    ordered: list[SessionCheck | Failure] = [checks[os.fspath(p)] for p in paths]
    ids = {s.id: s.path for s in group.given if isinstance(s, Session)}
    warned = route_warnings(group, own=False)  # a log's own warnings are check's findings (DSH103)
    notes = [*checker.notes, *(f"{path}: {warning}" for path, found in warned.items() for warning in found)]
    return _GroupCheck(ordered, group.orphans, ids, warned, loose=checker.loose, notes=[*notes, *checker.torn],
                       foreign=foreign, torn=checker.torn, caveats=tuple(prices.caveats_met()[met:]),
                       lineages=_lineages(paths, checker.tees) if lineage else [], held=checker.held,
                       others=checker.others)


def run_check(paths: Iterable[str | os.PathLike[str]], *, captures: str | os.PathLike[str] | None = None,
              policy: Policy | None = None, lenient: bool = False, max_version: int = 4,
              progress: Progress | None = None, jobs: int = 1, engine: str = "local",
              scheduler: str | None = None, routes: str | os.PathLike[str] | None = None,
              outline: bool = False, record: Callable[[], RequestRecorder] | None = None,
              lean: bool = False, prices_path: str | os.PathLike[str] | None = None,
              prices: PriceBook | None = None, zero_data_retention: bool | None = None,
              refused: list[DshAuditError] | None = None) -> CheckResult:
    """Check session logs the way a CI gate does: every finding, judged by ``policy``.

    Args:
        paths: log files or folders (see :func:`dsh_audit.log.discover`).
        captures: one capture (wire.jsonl, HAR, body folder) for every log; None looks for a
            ``wire.jsonl`` beside each log (:func:`dsh_audit.capture.find_capture`).
        policy: which findings fail (default :class:`Policy`, the strict defaults).
        lenient: accept headers DSH refuses only for their metadata (tokenised fixtures).
        max_version: the newest log format version to read.
        progress: called as ``progress(done, total)`` after each group of logs.
        jobs: worker processes (1: this process; 0: every CPU); the result is the same for every ``jobs``.
        engine: ``local`` or ``dask``; scheduler: the Dask scheduler address.
        routes: a route configuration file (``--routes``): DSH's llm-pi-ai routes, for requests
            whose route or model facts the log does not hold.
        outline: keep each request's :class:`RequestOutline` (what the JUnit, JSON, SARIF and
            Markdown reports show), not the request with its messages (the HTML report's); a log
            that is no fork or subagent child and has no capture is then checked as it is replayed,
            so memory does not grow with its requests.
        record: a view that is made of a log's requests as they are judged (the HTML report's
            :class:`dsh_audit.report.SessionPages`): a log that is no fork or subagent child and has
            no capture is then checked as it is replayed, when it is checked in this process (one
            log, or ``jobs`` 1, local engine); a new ``record()`` is handed each of its requests and
            kept as its :attr:`SessionCheck.record`, and its requests are outlines. Other logs keep
            their requests as ``outline`` says.
        lean: a log checked as it is replayed (with ``outline``) keeps only what the JUnit,
            JSON, SARIF and Markdown reports show: its cache report's totals, not a verdict per
            request (``cache.verdicts`` is empty; every sum, count and the cost are there), and of
            its transitions only the breaks.
        prices_path: a price file (``--prices``) over the packaged table and ``pyproject.toml``'s.
        prices: the price table itself, loaded once by the caller (then ``prices_path`` is not
            read; default: loaded here, once, from ``prices_path``). Every log is priced with it, and
            it holds, after the run, the caveats of those prices
            (:meth:`dsh_audit.cache.PriceBook.caveats_met`, those met in worker processes too),
            which the result's :attr:`CheckResult.caveats` are.
        zero_data_retention: the OpenAI organization's Zero Data Retention status (``--openai-zdr``;
            None: as the nearest ``pyproject.toml`` states it, else not stated).
        refused: where another agent's log (Claude Code, Codex) among the logs goes: its refusal
            is appended, the log is left out of the result (no :class:`SessionCheck`, no finding:
            it is no DSH log to judge), a note and :attr:`CheckResult.not_checked` say so, and the other
            logs are checked, as ``validate`` and ``breaks`` go on past it. None: the first one met is raised.

    Raises:
        UsageError: no log was found under ``paths``, or the route or price file cannot be used.
        CaptureError: the capture given (``captures``) cannot be read. A capture found beside a log
            that cannot be read is no error: it is the capture's DSH802 (the run's finding, and the
            log's :attr:`SessionCheck.capture_refusal`), and the log is checked without it.
        MalformedRecordError: a log is another agent's (Claude Code, Codex), and no ``refused``
            list takes it: check reads DSH logs only.

    Example:
        >>> result = run_check(["sample_logs/"])  # doctest: +SKIP
        >>> result.passed, len(result.sessions)  # doctest: +SKIP
        (True, 10)
    """
    policy = policy or Policy()
    notes: list[str] = []
    given = [os.fspath(p) for p in paths]
    logs = discover(given, notes=notes)
    discovered = tuple(notes)
    if not logs:
        raise UsageError("no session logs found", path=", ".join(given) or None,
                         hint="point at a session.jsonl[.zstd] file or a folder holding logs")
    if record is not None and not in_process(jobs, engine, len(logs)):
        record = None  # recorders stay in the process that made them (the HTML report's share files)
    book = prices if prices is not None else load_prices(prices_path)
    task = partial(check_group, policy=policy, capture=os.fspath(captures) if captures is not None else None,
                   lenient=lenient, max_version=max_version, routes=os.fspath(routes) if routes is not None else None,
                   outline=outline, record=record, lean=lean, prices=book, zero_data_retention=zero_data_retention,
                   lineage=(lineage := _wants_lineage(policy, len(logs))))
    loose: dict[tuple[str, int], Finding] = {}
    lineages: list[tuple[str, Lineage | None]] = []
    warnings: list[str] = []

    left: dict[str, str] = {}  # another agent's logs (Claude Code, Codex): not checked, each why
    held: dict[str, set[str]] = {}  # by capture found: the sessions any group found it holds requests of
    others: dict[str, str] = {}  # by log: its found capture that holds none of its requests

    def spans(result: GroupResult[SessionCheck]) -> None:
        assert isinstance(result, _GroupCheck)
        for error in result.foreign:
            if refused is None:
                raise error
            refused.append(error)
            left[str(error.path)] = f"{error.message} (hint: {error.hint})"
            notes.append(f"{error.path}: not checked: {left[str(error.path)]}")
        for key, finding in result.loose.items():
            loose.setdefault(key, finding)
        notes.extend(note for note in result.notes if note not in result.torn or note not in notes)
        warnings.extend(warning for found in result.route_warnings.values() for warning in found)
        warnings.extend(warning for warning in result.torn if warning not in warnings)  # a capture of several groups
        book.add_caveats(result.caveats)  # met by a worker's copy of the table (in this process: already there)
        lineages.extend(result.lineages)
        for capture, sessions in result.held.items():
            held.setdefault(capture, set()).update(sessions)
        others.update(result.others)

    checked = run_groups(logs, task, jobs=jobs, engine=engine, scheduler=scheduler, progress=progress,
                         on_group=spans)
    failed = next((c.error for c in checked if isinstance(c, Failure)), None)
    if failed is not None:
        raise failed  # a task that died (a bug or a lost worker), not a log's refusal
    ordered = _held_across((c for c in checked if isinstance(c, SessionCheck) and c.path not in left), held, others)
    if lineage:  # in the order the logs were found, as validate pairs them (a session id's first log stands for it)
        read = dict(lineages)
        ordered = _seeded(ordered, [(path, read.get(path)) for path in map(os.fspath, logs)], policy=policy,
                          jobs=jobs, engine=engine, scheduler=scheduler)
    findings = tuple(f for c in ordered for f in c.findings) + tuple(loose.values())
    return CheckResult(sessions=ordered, findings=findings, policy=policy, notes=tuple(notes), warnings=tuple(warnings),
                       discovered=discovered, caveats=tuple(map(str, book.caveats_met())), not_checked=tuple(left.items()))
