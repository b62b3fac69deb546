"""The forensics page of ``dsh-audit report``: one self-contained HTML file.

No network and no CDN: the CSS and the script are inline (:mod:`._html_assets`). Log text never
becomes markup: every value travels as JSON inside ``<script type="application/json">`` with
``<``, ``>`` and ``&`` written as ``\\u003c``, ``\\u003e``, ``\\u0026`` (so no ``</script>`` can
end the block), and the page script renders it with ``textContent`` only.

Size: each distinct message and header is stored once per session; a request lists its messages
as runs of message numbers, so the page grows with the distinct messages, not requests x messages (by
construction; not benchmarked).
The script draws the timeline a page of requests at a time and a request's messages only when
it is opened.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .._version import __version__
from ._html_assets import CSS, SCRIPT

__all__ = ["build_report_data", "format_html"]

_DIFF_LIMIT = 40


class _Table:
    """Distinct JSON values, each stored once: identity first, then the value's JSON text."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self.by_id: dict[int, int] = {}
        self.by_text: dict[str, int] = {}
        self.keep: list[Any] = []

    def add(self, value: Any) -> int:
        key = id(value)
        if key in self.by_id:
            return self.by_id[key]
        text = json.dumps(value, sort_keys=False, ensure_ascii=False, default=str)
        number = self.by_text.setdefault(text, len(self.values))
        if number == len(self.values):
            self.values.append(value)
        self.by_id[key] = number
        self.keep.append(value)  # holds the object so its id() is not reused
        return number


def _runs(numbers: Sequence[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for n in numbers:
        if runs and runs[-1][1] == n:
            runs[-1][1] = n + 1
        else:
            runs.append([n, n + 1])
    return runs


def _transition(t: Any) -> dict[str, Any] | None:
    if t is None:
        return None
    return {"verdict": t.verdict, "cause": t.cause, "other_causes": list(t.other_causes), "relation": t.relation,
            "previous": t.previous, "previous_session_id": t.previous_session_id,
            "fields": [f.to_json() for f in t.fields], "evidence": [e.to_json() for e in t.evidence],
            "context": [e.to_json() for e in t.context],
            "divergence": t.first_divergence.to_json() if t.first_divergence else None,
            "common_messages": t.common_messages, "detail": t.detail, "notes": list(t.notes)}


def _capture(row: Any) -> dict[str, Any] | None:
    if row is None:
        return None
    diff = row.diff
    return {"verdict": row.verdict, "where": row.capture.where() if row.capture is not None else None,
            "note": "; ".join(n for n in (row.pairing.note, row.note) if n) or None,
            "first_offset": diff.first_offset if diff else None,
            "expected_context": diff.expected_context if diff else None,
            "actual_context": diff.actual_context if diff else None,
            "equivalence": list(diff.equivalence) if diff else [],
            "differences": [{"path": d.path, "change": d.change, "summary": d.summary}
                            for d in (diff.differences[:_DIFF_LIMIT] if diff else ())],
            "more_differences": max(0, len(diff.differences) - _DIFF_LIMIT) if diff else 0}


def _request(r: Any, *, messages: _Table, headers: _Table, transition: Any, verdict: Any, row: Any,
             findings: Sequence[Any]) -> dict[str, Any]:
    usage = r.usage or r.message_usage
    return {
        "i": r.index, "kind": r.kind, "turn": r.turn, "step": r.step, "attempt": r.attempt,
        "seq": r.first_chunk_seq, "step_seq": r.step_start_seq,
        "h": None if r.header is None else headers.add(r.header), "hseq": r.header_seq, "hreason": r.header_reason,
        "m": _runs([messages.add(m) for m in r.messages]), "seqs": _runs(list(r.message_seqs)),
        "usage": usage, "finish": r.finish,
        "prompt": verdict.prompt_tokens if verdict else None, "counted": verdict.counted_tokens if verdict else None,
        "expected": verdict.expected if verdict else None, "actual": verdict.actual if verdict else None,
        "cls": verdict.classification if verdict else None, "ccause": verdict.cause if verdict else None,
        "t": _transition(transition), "cap": _capture(row), "f": [f.to_json() for f in findings],
    }


def _session(check: Any) -> dict[str, Any]:
    messages, headers = _Table(), _Table()
    transitions = {t.request: t for t in check.transitions}
    verdicts = {v.index: v for v in check.cache.verdicts} if check.cache is not None else {}
    rows: dict[int, Any] = {}
    for row in check.captures:
        if row.request is not None and not row.pairing.retry:
            rows.setdefault(row.request.index, row)
    requests = [_request(r, messages=messages, headers=headers, transition=transitions.get(r.index),
                         verdict=verdicts.get(r.index), row=rows.get(r.index), findings=check.request_findings(r.index))
                for r in check.requests]
    return {"path": check.path, "session_id": check.session_id, "capture": check.capture_path, "error": check.error,
            "failed": check.failed, "findings": [f.to_json() for f in check.log_findings],
            "messages": messages.values, "headers": headers.values, "requests": requests}


def build_report_data(result: Any) -> dict[str, Any]:
    """The JSON value the page script renders (sessions, requests, findings; no markup)."""
    return {"tool": f"dsh-audit {__version__}", "passed": result.passed, "counts": result.counts(),
            "policy": result.policy.source, "sessions": [_session(s) for s in result.sessions],
            "unattached": [f.to_json() for f in result.unattached]}


def _script_json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def format_html(result: Any, *, title: str = "dsh-audit report") -> str:
    """The self-contained HTML forensics page of a :class:`dsh_audit.gate.CheckResult`.

    ``title`` is the page title (escaped); the data is embedded as JSON and rendered by the
    inline script with ``textContent`` only.
    """
    safe_title = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{safe_title}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        "<header id=\"top\"><h1 id=\"title\"></h1><div id=\"summary\"></div></header>\n"
        "<nav id=\"sessions\" aria-label=\"sessions\"></nav>\n"
        "<main><section id=\"session\"><h2 id=\"session-title\"></h2><div id=\"session-info\"></div>"
        "<div id=\"legend\"></div><div id=\"pager\"></div><div id=\"timeline\" class=\"timeline\" role=\"list\"></div>"
        "<div id=\"log-findings\"></div></section>\n"
        "<section id=\"detail\" aria-live=\"polite\"><p class=\"muted\">Click a request or a break marker.</p>"
        "</section></main>\n"
        f"<script type=\"application/json\" id=\"dsh-data\">{_script_json(build_report_data(result))}</script>\n"
        f"<script>{SCRIPT}</script>\n</body>\n</html>\n"
    )
