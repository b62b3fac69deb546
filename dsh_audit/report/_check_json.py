"""The JSON report of ``dsh-audit check``: a versioned object described by ``docs/report-schema.json``.

Version history (``schema_version``):

1. first version: ``tool``, ``passed``, ``policy``, ``counts``, ``sessions`` (per log: path,
   session id, capture, error, request count, capture verdicts, breaks, cache totals, findings)
   and ``findings`` (every finding, captures no log explains included), ``notes``; later, with
   the version unchanged (a new key): each session's ``cost`` (the priced ledger's summary that
   ``cache --json`` and check's Markdown show: what the session cost, with no cache, off-peak, and
   what its breaks cost); later still, ``caveats`` (what the price table could not know of
   those costs: a year its holiday list does not cover), beside ``notes``.
2. one JSON vocabulary with every command's ``--json`` (a key means one type everywhere): each
   session's list of break records is ``break_details`` (version 1 named it ``breaks``, the name
   every other command gives a count of breaks) and ``breaks`` is now that count. Later, with the
   version unchanged (new keys): ``not_checked`` (each log of another agent left out, ``{path,
   reason}``: the run exits 2 for them) and ``counts.logs_not_checked`` (named as the HTML
   page's ``logs_failed``: ``not_checked`` is the list), and each session's
   ``capture_unreadable`` (the capture found beside it cannot be read: why ``capture`` is null);
   later still, ``verdict`` (``PASSED``, ``FAILED`` or ``INCOMPLETE``, the word check's last line
   starts with: ``passed`` says only that no finding fails, while a log that could not be read, its
   ``DSH801`` passing with ``fail-on-refusal = false``, or one left out makes the run exit 2) and
   ``counts.logs_unreadable`` (those logs, present when there are some). Every count of findings
   counts each line of a folded run (its message says the run), as ``validate --json`` counts it.

``message_wording`` (an optional key, so the version is unchanged) numbers the words the findings'
messages say, which a baseline matches on (:mod:`dsh_audit.gate._baseline`): 2 since session 44
reworded a refused header's mistyped fields (``createdAt "x" is a string``, the value cut), named
its v2+ faults beside another, and had DSH810 say what the capture found holds from the whole run; a
report without it was written before, in wording 1, and a baseline read from it is matched with
those words taken out (:func:`~dsh_audit.gate._findings.reworded_free`).

A new optional key does not change the version; renaming or removing a key does: a reader of
version that does not know a key still reads every key it knows, and a report written before the
key existed is still a report of its version (the schema does not require it).

Numbers are spelt as every other command's ``--json`` spells them, ``JSON.stringify``'s way
(:func:`~dsh_audit.jsjson.js_number`: ``0.000023808``, ``0``), not Python's (``2.3808e-05``,
``0.0``): the report is :func:`~dsh_audit.report.dumps_pretty`'s indented text.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .._version import __version__
from ..gate import MESSAGE_WORDING
from ._json import dumps_pretty

__all__ = ["REPORT_SCHEMA_VERSION", "format_json", "report_object", "session_summary"]

REPORT_SCHEMA_VERSION = 2


def _breaks(check: Any) -> list[dict[str, Any]]:
    return [{"request": t.request, "previous": t.previous, "relation": t.relation, "cause": t.cause,
             "other_causes": list(t.other_causes), "fields": list(t.field_names),
             "evidence_seqs": list(t.evidence_seqs), "detail": t.detail}
            for t in check.transitions if t.verdict == "break"]


def _cache(check: Any) -> dict[str, Any] | None:
    report = check.cache
    if report is None:
        return None
    return {"prompt_tokens": report.known_sum(report.prompt_total),
            "actual_cache_read": report.known_sum(report.actual_total),
            "expected_cache_read": report.known_sum(report.expected_total),
            "actual_hit_ratio": report.ratio(report.actual_total),
            "expected_hit_ratio": report.ratio(report.expected_total),
            "classifications": report.classification_counts}


def _cost(check: Any) -> dict[str, Any] | None:
    """The session's priced ledger summary, the object check's Markdown shows (None: not priced)."""
    cost = getattr(check.cache, "cost", None) if check.cache is not None else None
    return cost if isinstance(cost, dict) else None


def session_summary(check: Any) -> dict[str, Any]:
    """The JSON object of one :class:`dsh_audit.gate.SessionCheck` (no message bodies)."""
    verdicts = Counter(row.verdict for row in check.captures if not row.pairing.retry)
    breaks = _breaks(check)
    return {
        "path": check.path,
        "session_id": check.session_id,
        "failed": check.failed,
        "error": check.error,
        "requests": len(check.requests),
        "capture": check.capture_path,
        "capture_unreadable": getattr(check, "capture_unreadable", False),
        "capture_verdicts": dict(sorted(verdicts.items())),
        "breaks": len(breaks),
        "break_details": breaks,
        "cache": _cache(check),
        "cost": _cost(check),
        "findings": [f.to_json() for f in check.findings],
    }


def _unread(result: Any) -> dict[str, int]:
    """``counts.logs_unreadable`` when logs could not be read (absent else, as in a report written
    before it existed)."""
    unread = len(result.unreadable)
    return {"logs_unreadable": unread} if unread else {}


def report_object(result: Any) -> dict[str, Any]:
    """The whole report as a JSON-ready dict (see ``docs/report-schema.json``)."""
    left = getattr(result, "not_checked", ())
    return {
        "schema_version": REPORT_SCHEMA_VERSION,
        "message_wording": MESSAGE_WORDING,
        "tool": {"name": "dsh-audit", "version": __version__},
        "passed": result.passed,
        "verdict": result.verdict,
        "policy": result.policy.to_json(),
        "counts": {**result.counts(), "sessions": len(result.sessions), "requests": result.request_count,
                   "logs_not_checked": len(left), **_unread(result)},
        "sessions": [session_summary(s) for s in result.sessions],
        "not_checked": [{"path": path, "reason": why} for path, why in left],
        "findings": [f.to_json() for f in result.findings],
        "notes": list(result.notes),
        "caveats": list(getattr(result, "caveats", ())),
    }


def format_json(result: Any) -> str:
    """The JSON report of a :class:`dsh_audit.gate.CheckResult`, indented, ending with a newline,
    its numbers spelt as every command's ``--json`` spells them (:func:`~dsh_audit.report.dumps_pretty`)."""
    return dumps_pretty(report_object(result)) + "\n"
