"""``run_check``: read, validate, replay, compare with captures, attribute, account, judge.

One log is the unit of work. Logs are processed in *rounds* in which every session id appears
once (a scenario folder may hold the same session twice: DSH's zstd log and a decompressed copy),
so capture alignment and attribution never see a session twice; a fork or subagent child's
parent log is read from beside the child when it is not among the inputs (comparison only).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from .._batch import SessionOutcome, replay_path
from ..errors import InputError, UsageError
from ..log import discover, read_log
from ._findings import Judge
from ._inputs import find_capture
from ._model import CheckResult, Finding, SessionCheck
from ._policy import Policy

__all__ = ["run_check"]

Progress = Callable[[Sequence[Path], str], AbstractContextManager[Iterable[Path]]]
_LINE = re.compile(r"^line (\d+)$")


def _no_progress(items: Sequence[Path], label: str) -> AbstractContextManager[Iterable[Path]]:
    return nullcontext(items)


def _rounds(outcomes: Sequence[SessionOutcome]) -> list[list[SessionOutcome]]:
    rounds: list[list[SessionOutcome]] = []
    for outcome in outcomes:
        for group in rounds:
            if all(o.session_id != outcome.session_id for o in group):
                group.append(outcome)
                break
        else:
            rounds.append([outcome])
    return rounds


class _Checker:
    def __init__(self, policy: Policy, *, lenient: bool, max_version: int, capture: Path | None) -> None:
        self.policy = policy
        self.judge = Judge(policy)
        self.lenient, self.max_version, self.capture = lenient, max_version, capture
        self.captures: dict[Path, Any] = {}
        self.loose: dict[tuple[str, int], Finding] = {}
        self.notes: list[str] = []

    def load(self, path: Path) -> Any:
        from ..capture import load_capture  # the capture package is only needed with captures

        if path not in self.captures:
            self.captures[path] = load_capture(path)
        return self.captures[path]

    def capture_for(self, log: str) -> Path | None:
        if self.capture is not None:
            return self.capture
        found = find_capture(log)
        if found is not None:
            self.notes.append(f"{log}: capture {found}")
        return found

    def compare(self, group: list[SessionOutcome]) -> tuple[dict[str, list[Any]], dict[str, Path]]:
        """Capture rows per session id, and the capture file per session id."""
        from ..capture import compare_capture

        by_capture: dict[Path, list[SessionOutcome]] = {}
        for outcome in group:
            found = self.capture_for(outcome.path)
            if found is not None:
                by_capture.setdefault(found, []).append(outcome)
        rows: dict[str, list[Any]] = {}
        files: dict[str, Path] = {}
        for path, members in by_capture.items():
            requests = [r for o in members for r in o.requests]
            for row in compare_capture(requests, self.load(path), adapter=self.policy.adapter):
                if row.request is not None:
                    rows.setdefault(row.request.session_id, []).append(row)
                elif row.verdict == "unmatched":
                    self.unexplained(row)
            for o in members:
                files[o.session_id or ""] = path
        return rows, files

    def unexplained(self, row: Any) -> None:
        capture = row.capture
        match = _LINE.match(capture.locator or "")
        key = (capture.source, capture.position)
        if key not in self.loose and capture.kind in self.policy.capture_kinds:
            self.loose[key] = self.judge.finding(
                "DSH814", f"captured {capture.kind} request {capture.position} ({capture.where()}) is explained "
                f"by no request of the checked logs", path=capture.source,
                line=int(match.group(1)) if match else None, session_id=capture.session_id, verdict="unexplained")

    def attribute(self, group: list[SessionOutcome], rows: dict[str, list[Any]]) -> dict[str, tuple[Any, ...]]:
        from ..attribution import attribute_sessions, with_ancestors

        given = [Path(o.path) for o in group]
        extra = [replay_path(p, lenient=self.lenient, max_version=self.max_version)
                 for p in with_ancestors(given)[len(given):]]
        ids = {o.session_id for o in group}
        pairs = [(o.log, o.requests) for o in [*group, *(e for e in extra if e.session_id not in ids)]
                 if o.error is None and o.log is not None]
        bodies = {sid: _captured_bodies(next(o for o in group if o.session_id == sid).requests, mine)
                  for sid, mine in rows.items()}
        results = attribute_sessions(pairs, captures=bodies, lenient=self.lenient, adapter=self.policy.adapter)
        return {a.session_id: a.transitions for a in results if a.session_id in ids}

    def cache(self, outcome: SessionOutcome, transitions: tuple[Any, ...]) -> Any:
        from ..cache import cache_report

        return cache_report(outcome.path, lenient=self.lenient, max_version=self.max_version,
                            attribution=list(transitions))

    def run_group(self, group: list[SessionOutcome]) -> list[SessionCheck]:
        rows, files = self.compare(group)
        transitions = self.attribute(group, rows)
        checks = []
        for outcome in group:
            sid = outcome.session_id or ""
            mine = transitions.get(sid, ())
            cache = self.cache(outcome, mine)
            capture = files.get(sid)
            findings = self.judge.session(outcome, rows=rows.get(sid, []), transitions=mine, cache=cache,
                                          capture=capture, validation=self.validate(outcome.path))
            checks.append(SessionCheck(path=outcome.path, session_id=outcome.session_id,
                                       requests=tuple(outcome.requests), transitions=tuple(mine), cache=cache,
                                       captures=tuple(rows.get(sid, ())), capture_path=str(capture) if capture else None,
                                       findings=tuple(findings)))
        return checks

    def validate(self, path: str) -> list[Any]:
        from ..validate import validate

        return validate(path, lenient=self.lenient, max_version=self.max_version)

    def failed(self, outcome: SessionOutcome) -> SessionCheck:
        findings = self.judge.refusal(outcome, validation=self.validate(outcome.path))
        return SessionCheck(path=outcome.path, session_id=outcome.session_id, findings=tuple(findings),
                            error=str(outcome.error))


def _captured_bodies(requests: Sequence[Any], rows: Sequence[Any]) -> list[bytes | None]:
    first: dict[int, bytes] = {}
    for row in rows:
        if row.capture is not None and not row.pairing.retry and row.request.index not in first:
            first[row.request.index] = row.capture.body
    return [first.get(r.index) for r in requests]


def run_check(paths: Iterable[str | os.PathLike[str]], *, captures: str | os.PathLike[str] | None = None,
              policy: Policy | None = None, lenient: bool = False, max_version: int = 4,
              progress: Progress | None = None) -> CheckResult:
    """Check session logs the way a CI gate does: every finding, judged by ``policy``.

    Args:
        paths: log files or folders (see :func:`dsh_audit.log.discover`).
        captures: one capture (wire.jsonl, HAR, body folder) for every log; None looks for a
            ``wire.jsonl`` beside each log (:func:`dsh_audit.gate.find_capture`).
        policy: which findings fail (default :class:`Policy`, the strict defaults).
        lenient: accept headers DSH refuses only for their metadata (tokenised fixtures).
        max_version: the newest log format version to read.
        progress: ``progress(logs, label)`` returning a context manager that yields the logs to
            iterate (the CLI passes a terminal progress bar).

    Raises:
        UsageError: no log was found under ``paths``.
        CaptureError: a capture cannot be read.

    Example:
        >>> result = run_check(["sample_logs/"])  # doctest: +SKIP
        >>> result.passed, len(result.sessions)  # doctest: +SKIP
        (True, 10)
    """
    policy = policy or Policy()
    notes: list[str] = []
    given = [os.fspath(p) for p in paths]
    logs = discover(given, notes=notes)
    if not logs:
        raise UsageError("no session logs found", path=", ".join(given) or None,
                         hint="point at a session.jsonl[.zstd] file or a folder holding logs")
    checker = _Checker(policy, lenient=lenient, max_version=max_version,
                       capture=Path(captures) if captures is not None else None)
    with (progress or _no_progress)(logs, "checking") as items:
        outcomes = [replay_path(p, lenient=lenient, max_version=max_version) for p in items]
    good = [o for o in outcomes if o.error is None]
    checks: dict[str, SessionCheck] = {o.path: checker.failed(o) for o in outcomes if o.error is not None}
    for group in _rounds(good):
        for check in checker.run_group(group):
            checks[check.path] = check
    ordered = tuple(checks[o.path] for o in outcomes)
    findings = tuple(f for c in ordered for f in c.findings) + tuple(checker.loose.values())
    return CheckResult(sessions=ordered, findings=findings, policy=policy, notes=tuple(notes + checker.notes))


def seq_lines(path: str, *, lenient: bool = False) -> dict[int, int]:
    """``seq -> physical line`` of every event of a log (for locating findings)."""
    try:
        log = read_log(path, lenient=lenient)
        return {event.seq: event.line for event in log.events()}
    except InputError:
        return {}
