"""Turning pipeline results into :class:`Finding` values and judging each with the policy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..session import EventLines, Failure
from ..errors import InputError
from ..replay import Request
from ._model import Finding
from ._policy import Policy
from ._rules import GATE_RULES, GateRule

__all__ = ["Judge", "request_seq"]

_VERDICT_RULE = {"different": "DSH811", "equivalent": "DSH812", "unmatched": "DSH813", "unrendered": "DSH815"}


def request_seq(request: Request) -> int | None:
    """The seq a finding about ``request`` points at: its first chunk's, else its step start's."""
    return request.first_chunk_seq if request.first_chunk_seq is not None else request.step_start_seq


class Judge:
    """Builds findings for one policy: severity and hint from the rule, ``fails`` from the policy."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy

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
                session_id: str | None = None, request: int | None = None, verdict: str | None = None) -> Finding:
        meta = GATE_RULES[rule]
        return Finding(rule=rule, severity=meta.severity, message=message, path=path, line=line, seq=seq,
                       session_id=session_id, request=request, fails=self._fails(meta, verdict),
                       hint=meta.hint)

    def _validation(self, items: Sequence[Any], session_id: str | None) -> list[Finding]:
        return [Finding(rule=f.rule, severity=f.severity, message=f.message, path=f.path, line=f.line, seq=f.seq,
                        session_id=session_id, fails=self.policy.validation_fails(f.severity), hint=f.hint)
                for f in items]

    def _keep(self, findings: list[Finding]) -> list[Finding]:
        return [f for f in findings if not self.policy.ignored(f.rule)]

    def refusal(self, outcome: Failure, *, validation: Sequence[Any]) -> list[Finding]:
        """The findings of a log that could not be read or replayed."""
        error = outcome.error
        rule = "DSH801" if isinstance(error, InputError) else "DSH802"
        text = error.message + (f" (hint: {error.hint})" if error.hint else "")
        first = self.finding(rule, text, path=outcome.path, line=error.line, seq=error.seq,
                             session_id=outcome.session_id)
        return self._keep([first, *self._validation(validation, outcome.session_id)])

    def session(self, path: str, session_id: str, *, lines: EventLines, seqs: Mapping[int, int | None],
                rows: Sequence[Any], transitions: Sequence[Any], cache: Any, capture: Path | None,
                validation: Sequence[Any]) -> list[Finding]:
        """Every finding of one log that replayed: ``lines`` maps its events' seqs to lines (recorded
        in the session's one pass: no second read for a finding's line), ``seqs`` a request index to
        the seq of its first chunk or step start (at least for each break's request)."""
        out = self._validation(validation, session_id)
        if capture is None:
            out.append(self.finding("DSH810", "no capture given or found beside the log (wire.jsonl)",
                                    path=path, session_id=session_id))
        out += self._captures(path, rows, lines)
        out += self._breaks(path, transitions, lines, seqs)
        out += self._cache(path, session_id, cache)
        return self._keep(out)

    def _captures(self, path: str, rows: Sequence[Any], lines: EventLines) -> list[Finding]:
        out = []
        for row in rows:
            rule = _VERDICT_RULE.get(row.verdict)
            request = row.request
            if rule is None or request.kind not in self.policy.capture_kinds:
                continue
            seq = request_seq(request)
            detail = ""
            if row.diff is not None and row.diff.first_offset is not None:
                paths = ", ".join(row.diff.paths[:3])
                detail = f" at byte {row.diff.first_offset}" + (f" ({paths})" if paths else "")
            where = f" vs {row.capture.where()}" if row.capture is not None else ""
            note = f": {row.note}" if row.note else ""
            out.append(self.finding(rule, f"{request.kind} request {request.index} is {row.verdict}{where}{detail}{note}",
                                    path=path, line=lines.get(seq), seq=seq, session_id=request.session_id,
                                    request=request.index, verdict=row.verdict))
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
                                 f"{cache.request_count} request(s)), so the policy bound {bound:.1%} was not "
                                 "checked", path=path, session_id=session_id)]
        if not bound or ratio is None or ratio >= bound:
            return []
        return [self.finding("DSH831", f"actual cache-hit ratio {ratio:.1%} is below the policy bound {bound:.1%} "
                             f"({cache.actual_total} of {cache.prompt_total} prompt tokens read from cache)",
                             path=path, session_id=session_id)]
