"""Each request's record on the forensics page (:mod:`._html`), encoded as the request comes:
:class:`SessionPage` (one log's), made by :class:`SessionPages` for the logs ``check`` reads as
it replays them; its texts are kept by :mod:`._html_texts`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any

from .._usage_rule import usage_of
from ..attribution import format_transition
from ..cache import BREAKS, iso_utc
from ..session import RequestSpan
from ._html_texts import _History, _Kept, _Messages, _Run, _script_json, _Spool, _Table, _Texts

__all__ = ["SessionPage", "SessionPages"]

_DIFF_LIMIT = 40


def _transition(t: Any) -> dict[str, Any] | None:
    """A transition's record; one that changed header fields has ``explain``, :func:`_field_lines`."""
    if t is None:
        return None
    return {"verdict": t.verdict, "cause": t.cause, "other_causes": list(t.other_causes), "relation": t.relation,
            "previous": t.previous, "previous_session_id": t.previous_session_id,
            "fields": [f.to_json() for f in t.fields], "evidence": [e.to_json() for e in t.evidence],
            "context": [e.to_json() for e in t.context],
            "divergence": t.first_divergence.to_json() if t.first_divergence else None,
            "common_messages": t.common_messages, "detail": t.detail, "notes": list(t.notes),
            **({"explain": _field_lines(t)} if t.fields else {})}


def _field_lines(t: Any) -> list[str]:
    """The lines ``dsh-audit explain`` says of a transition's changed header fields
    (:func:`dsh_audit.attribution.format_transition`'s ``fields:`` part): a field and its change,
    and for the system prompt the changed lines (``-old``, ``+new``), where the fields table shows
    only the lengths (``4141 → 4141``). The part is what the whole answer adds to the answer of the
    same transition with no field (evidence, context and notes, which the page shows apart, left
    out of both), so no log text in the answer can be taken for a section of it.

    Example:
        >>> from dsh_audit.attribution import FieldChange, Transition
        >>> change = FieldChange("system", 9, 9, True, {"diff": ["@@ -1 +1 @@", "-mode: a", "+mode: b"]})
        >>> _field_lines(Transition("s", 1, 0, "s", "step", "break", "header_change", fields=(change,)))
        ['  system: 9 → 9 chars (prompt)', '      @@ -1 +1 @@', '      -mode: a', '      +mode: b']
    """
    bare = replace(t, evidence=(), context=(), notes=())
    whole, without = format_transition(bare), format_transition(replace(bare, fields=()))
    if not whole.startswith(without):  # format_transition writes the fields after the rest: never here
        return []
    return whole[len(without):].split("\n")[2:]  # "", "fields:", then the fields' lines


def _capture(row: Any) -> dict[str, Any] | None:
    if row is None:
        return None
    diff = row.diff
    return {"verdict": row.verdict, "where": row.capture.where() if row.capture is not None else None,
            "note": "; ".join(n for n in (row.pairing.note, row.said) if n) or None,
            "first_offset": diff.first_offset if diff else None,
            "expected_context": diff.expected_context if diff else None,
            "actual_context": diff.actual_context if diff else None,
            "equivalence": list(diff.equivalence) if diff else [],
            "differences": [{"path": d.path, "change": d.change, "summary": d.summary}
                            for d in (diff.differences[:_DIFF_LIMIT] if diff else ())],
            "more_differences": max(0, len(diff.differences) - _DIFF_LIMIT) if diff else 0}


def _request(r: Any, history: dict[str, Any], *, headers: _Table, transition: Any, verdict: Any, row: Any,
             entry: Any) -> dict[str, Any]:
    """A request's record but its findings (``f``, the last key: :func:`_with_findings` adds it)."""
    usage = usage_of(r)  # the one the ledger prices (an attempt's empty usage too)
    return {
        "i": r.index, "kind": r.kind, "turn": r.turn, "step": r.step, "attempt": r.attempt,
        "seq": r.first_chunk_seq, "step_seq": r.step_start_seq,
        "h": None if r.header is None else headers.add(r.header), "hseq": r.header_seq, "hreason": r.header_reason,
        **history, "usage": usage, "finish": r.finish,
        "sent": iso_utc(r.time.sent) if r.time is not None else None,
        "prompt": verdict.prompt_tokens if verdict else None, "counted": verdict.counted_tokens if verdict else None,
        "expected": verdict.expected if verdict else None, "actual": verdict.actual if verdict else None,
        "cls": verdict.classification if verdict else None, "ccause": verdict.cause if verdict else None,
        "pot": verdict.potential if verdict else None, **_lost_keys(verdict),
        "model": entry.model, "window": entry.window, "billed": entry.billed_as, "unpriced": entry.unpriced,
        "cost": None if entry.cost is None else entry.cost.to_json(),
        "t": _transition(transition), "cap": _capture(row),
    }


def _lost(verdict: Any) -> tuple[int | None, float | None, int]:
    """What a break's cache verdict says it lost: tokens, and their cost when the cache
    classifies the request as a break (else None); both None (unknown, never 0) for a break whose
    cache reads were not logged (:attr:`dsh_audit.cache.CacheVerdict.lost_unknown`); last the
    reusable cache reads the tokens are measured from (lost <= reusable - actual: the overview says
    them beside it, issue 11)."""
    if verdict.lost_unknown:
        return None, None, verdict.potential
    return (sum(verdict.lost.values()), verdict.lost_cost if verdict.classification in BREAKS else None,
            verdict.potential)


def _by_cause(verdict: Any) -> tuple[dict[str, int] | None, dict[str, float] | None]:
    """What a break lost to each cause and what that cost (``stats``' ``by_cause`` and
    ``cost_by_cause`` figures: a break that also went cold lost the rest to ``cold_ttl``, review C of
    session 45, F5); both None when its loss is unknown, the costs None when it is unpriced."""
    if verdict.lost_unknown:
        return None, None
    costs = verdict.lost_cost_by_cause
    return dict(verdict.lost), None if costs is None else dict(costs)


#: What the overview keeps of a break (:attr:`SessionPage.breaks`): :func:`_lost`'s tokens, cost and
#: reusable reads, then :func:`_by_cause`'s tokens and costs by cause.
BreakLoss = tuple[int | None, float | None, int, dict[str, int] | None, dict[str, float] | None]


def _break_lost(verdict: Any) -> BreakLoss:
    return (*_lost(verdict), *_by_cause(verdict))


def _lost_keys(verdict: Any) -> dict[str, Any]:
    lost, cost, _ = _lost(verdict) if verdict else (None, None, None)
    return {"lost": lost, "lcost": cost}


def _with_findings(record: str, findings: Sequence[Any]) -> str:
    """A request record's script JSON (:func:`_request`) with its findings as the last key, ``f``:
    the findings are known only once the whole log is read."""
    if not findings:  # most requests: no encoder for an empty list
        return record[:-1] + ',"f":[]}'
    return record[:-1] + ',"f":' + _script_json([f.to_json() for f in findings]) + "}"


class SessionPage:
    """A session's page data, built one request at a time in replay order: each request's record
    (its history as a delta, :class:`._html_texts._History`, its message texts numbered once, its transition,
    cache verdict and priced entry) is encoded as the request comes, and only what later requests
    need is kept (the base request's message numbers, the message keys, the headers table, the
    overview's counts). The texts (messages and records) are kept in memory, or with ``spool``
    (:class:`SessionPages`) written to its temporary files, so a log checked while it is replayed
    keeps no request and no text in memory.
    """

    def __init__(self, spool: SessionPages | None = None) -> None:
        self.messages = _Messages(_Kept() if spool is None else _Run(spool.messages))
        self.records: _Texts = _Kept() if spool is None else _Run(spool.records)
        self.headers = _Table()
        self.history = _History(self.messages)
        self.count = 0
        self.models: dict[str, None] = {}
        self.span = RequestSpan()  # the overview's first and last
        # what the overview says each break lost: tokens, their cost when the cache calls it a break, the reusable
        # reads, and what it lost to its own cause (:data:`BreakLoss`)
        self.breaks: dict[int, BreakLoss] = {}
        # each request's priced ledger entry, for the page's totals (:func:`._html._totals`): ``usage``
        # keeps them as its ledgers do, one small value a request, never the request
        self.entries: list[Any] = []

    def add(self, request: Any, transition: Any, verdict: Any, entry: Any, row: Any = None) -> None:
        """Encode the next request: its transition (None: none), cache verdict, priced entry
        (:func:`dsh_audit.cache.price_entry`) and capture pairing (None: not compared)."""
        record = _request(request, self.history.encode(self.count, request), headers=self.headers,
                          transition=transition, verdict=verdict, row=row, entry=entry)
        self.records.add(f"{request.index} {_script_json(record)}")
        self.count += 1
        self.entries.append(entry)
        if entry.model:
            self.models.setdefault(entry.model)
        self.span.add(request.time)
        if transition is not None and transition.verdict == "break" and verdict is not None:
            self.breaks[request.index] = _break_lost(verdict)

    def requests(self, about: Mapping[int, Sequence[Any]]) -> Iterator[str]:
        """The request records' script JSON, each with its findings (``about``: by request index,
        :meth:`dsh_audit.gate.SessionCheck.findings_by_request`)."""
        for line in self.records:
            index, _, record = line.partition(" ")
            yield _with_findings(record, about.get(int(index), ()))


class SessionPages:
    """The pages of one report's logs that are checked while they are replayed, one after another
    in this process (``run_check(record=SessionPages())``): each call makes the next log's
    :class:`SessionPage`, whose texts go to two temporary files all the pages share (two open
    files however many logs), deleted when the last page that uses them is."""

    def __init__(self) -> None:
        self.messages = _Spool()
        self.records = _Spool()

    def __call__(self) -> SessionPage:
        return SessionPage(self)
