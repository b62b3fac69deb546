"""The forensics page of ``dsh-audit report``: one self-contained HTML file.

No network and no CDN: the CSS and the script are inline (:mod:`._html_assets`). Log text never
becomes markup: every value travels as JSON inside ``<script type="application/json">`` with
``<``, ``>`` and ``&`` written as ``\\u003c``, ``\\u003e``, ``\\u0026`` (so no ``</script>`` can
end the block), and the page script renders it with ``textContent`` only.

Size: each distinct message is stored once per session (keyed by the seq behind it, checked by
value; messages without a seq by identity, then by their JSON text). A request does not list its
messages: it names a base request (the previous agent-loop request, whose history it extends) and
the positions where its own list differs from the base's (appended messages, a pruned message
replaced in place), so the page grows with the distinct messages, not requests x history. The
script assembles a request's history only when the request is opened (or searched), and
:func:`iter_html` yields the page in pieces so the command writes it without building one string.

Cost comes from the cache ledger (:func:`dsh_audit.cache.price_entry` per request, the session's
``cost`` summary that ``cache --json`` prints), never recomputed here.

The session list of a multi-session page is ordered here (``order``: ``[position, depth]`` pairs):
failing sessions first, then those with unexplained breaks, then the rest, newest first within
each group, every fork or subagent child right under its parent (a family ranks by its worst
member, so a failing child is never buried). Nothing is read again (each log is read once, by
``check``): a child's parent is its header's ``parentSession`` (a fork: with ``seedLength``), the
parent attribution compares its first request with, and a log's first and last activity are its
own timestamps (:meth:`dsh_audit.session.Session.span`, the dates ``dsh-audit sessions`` shows).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from .._version import __version__
from ..cache import BREAKS, PriceBook, iso_utc, load_prices, price_entry
from ..replay import MessageView
from ._html_assets import CSS, SCRIPT

__all__ = ["build_report_data", "format_html", "iter_html"]

_DIFF_LIMIT = 40


def _script_json(value: Any) -> str:
    """JSON that cannot end a ``<script>`` block (``<``, ``>``, ``&`` escaped; ASCII only)."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class _Table:
    """Distinct JSON values (headers), each stored once: identity first, then the value's JSON text."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.by_id: dict[int, tuple[Any, int]] = {}
        self.by_text: dict[str, int] = {}

    def add(self, value: Any) -> int:
        known = self.by_id.get(id(value))
        if known is not None:
            return known[1]
        text = _script_json(value)
        number = self.by_text.setdefault(text, len(self.texts))
        if number == len(self.texts):
            self.texts.append(text)
        self.by_id[id(value)] = (value, number)  # holds the object so its id() is not reused
        return number


class _Messages:
    """A session's distinct messages, each stored once as its script JSON text.

    A message with a seq is keyed by that seq and checked by value (a replace re-derives the
    messages after it: new objects, same seq, same value); one without (title and search calls)
    by identity, then by ``(None, text)``. Two messages with equal text at different seqs stay two
    entries, so every entry has one seq.
    """

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.seqs: list[int | None] = []
        self.by_seq: dict[int, list[tuple[Any, int]]] = {}
        self.by_id: dict[int, tuple[Any, int]] = {}
        self.by_text: dict[tuple[int | None, str], int] = {}

    def number(self, message: Any, seq: int | None) -> int:
        if seq is not None:
            for known, number in self.by_seq.get(seq, ()):
                if known is message or known == message:
                    return number
        else:
            found = self.by_id.get(id(message))
            if found is not None:
                return found[1]
        text = _script_json(message)
        number = self.by_text.setdefault((seq, text), len(self.texts))
        if number == len(self.texts):
            self.texts.append(text)
            self.seqs.append(seq)
        if seq is not None:
            self.by_seq.setdefault(seq, []).append((message, number))
        else:
            self.by_id[id(message)] = (message, number)
        return number


class _History:
    """Encodes each request's message list as a delta against the previous loop request's.

    ``b`` is the base request's position in the session (-1: none), ``n`` the list's length,
    ``d`` the runs ``[position, [message numbers]]`` where it differs from the base (the rest of
    the first ``n`` positions are the base's); ``u`` marks a request that becomes the next base.
    Only the base's list of numbers is kept, so memory is linear in the session.
    """

    def __init__(self, messages: _Messages) -> None:
        self.messages = messages
        self.view: Sequence[Any] = ()
        self.numbers: list[int] = []
        self.base = -1

    def encode(self, position: int, request: Any) -> dict[str, Any]:
        listed: Sequence[Any] = request.messages
        seqs: Sequence[int] = request.message_seqs
        if len(seqs) != len(listed):
            seqs = ()
        base_view, base_numbers = self.view, self.numbers
        shared = listed.shared_prefix(base_view) if isinstance(listed, MessageView) else 0
        old_view = base_view[shared:]
        new_seqs = seqs[shared:] if seqs else ()
        numbers: list[int] = []
        runs: list[list[Any]] = []
        for offset, message in enumerate(listed[shared:]):
            i = shared + offset
            if offset < len(old_view) and message is old_view[offset]:
                number = base_numbers[i]
            else:
                number = self.messages.number(message, new_seqs[offset] if new_seqs else None)
            numbers.append(number)
            if i < len(base_numbers) and base_numbers[i] == number:
                continue
            if runs and runs[-1][0] + len(runs[-1][1]) == i:
                runs[-1][1].append(number)
            else:
                runs.append([i, [number]])
        encoded = {"b": self.base, "n": len(listed), "d": runs, "u": request.kind == "loop"}
        if request.kind == "loop":
            del base_numbers[len(listed):]
            base_numbers[shared:] = numbers
            self.view, self.base = listed, position
        return encoded


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


def _request(r: Any, history: dict[str, Any], *, headers: _Table, transition: Any, verdict: Any, row: Any,
             entry: Any, findings: Sequence[Any]) -> dict[str, Any]:
    usage = r.usage or r.message_usage
    return {
        "i": r.index, "kind": r.kind, "turn": r.turn, "step": r.step, "attempt": r.attempt,
        "seq": r.first_chunk_seq, "step_seq": r.step_start_seq,
        "h": None if r.header is None else headers.add(r.header), "hseq": r.header_seq, "hreason": r.header_reason,
        **history, "usage": usage, "finish": r.finish,
        "sent": iso_utc(r.time.sent) if r.time is not None else None,
        "prompt": verdict.prompt_tokens if verdict else None, "counted": verdict.counted_tokens if verdict else None,
        "expected": verdict.expected if verdict else None, "actual": verdict.actual if verdict else None,
        "cls": verdict.classification if verdict else None, "ccause": verdict.cause if verdict else None,
        "pot": verdict.potential if verdict else None, "lost": sum(verdict.lost.values()) if verdict else None,
        "lcost": verdict.lost_cost if verdict and verdict.classification in BREAKS else None,
        "model": entry.model, "window": entry.window, "billed": entry.billed_as, "unpriced": entry.unpriced,
        "cost": None if entry.cost is None else entry.cost.to_json(),
        "t": _transition(transition), "cap": _capture(row), "f": [f.to_json() for f in findings],
    }


def _overview(check: Any, requests: Sequence[Any], entries: Sequence[Any]) -> dict[str, Any]:
    """The session's summary: the same numbers as ``check``'s table and ``cache --json``."""
    report = check.cache
    verdicts = {v.index: v for v in report.verdicts} if report is not None else {}
    breaks: list[dict[str, Any]] = []
    for t in check.transitions:
        if t.verdict == "break":
            v = verdicts.get(t.request)
            breaks.append({"i": t.request, "cause": t.cause, "lost": sum(v.lost.values()) if v is not None else None,
                           "cost": v.lost_cost if v is not None and v.classification in BREAKS else None})
    causes: dict[str, int] = {}
    for b in breaks:
        causes[b["cause"] or "?"] = causes.get(b["cause"] or "?", 0) + 1
    sent = [r.time.sent for r in requests if r.time is not None]
    done = [r.time.done if r.time.done is not None else r.time.sent for r in requests if r.time is not None]
    return {"title": check.title,
            "models": list(dict.fromkeys(e.model for e in entries if e.model)),
            "requests": len(requests), "breaks": breaks, "breaks_by_cause": dict(sorted(causes.items())),
            "hit_ratio": report.ratio(report.actual_total) if report is not None else None,
            "prompt_tokens": report.prompt_total if report is not None else None,
            "cache_read": report.actual_total if report is not None else None,
            "cost": report.cost if report is not None else None,
            "first": iso_utc(min(sent)) if sent else None, "last": iso_utc(max(done)) if done else None}


#: Break causes ``dsh-audit breaks`` counts as unexplained (its ``--fail-on unexplained``).
_UNEXPLAINED = (None, "unexplained")


def _unexplained(check: Any) -> int:
    return sum(1 for t in check.transitions if t.verdict == "break" and t.cause in _UNEXPLAINED)


def _verdict(check: Any) -> str:
    """The session's verdict in words: ``failed: 2 failing finding(s)``, ``passed: 5 explained break(s)``."""
    if check.failed:
        return f"failed: {sum(1 for f in check.findings if f.fails)} failing finding(s)"
    unexplained = _unexplained(check)
    explained = sum(1 for t in check.transitions if t.verdict == "break") - unexplained
    parts = [f"{explained} explained break(s)"] if explained else []
    if unexplained:
        parts.append(f"{unexplained} unexplained break(s) the policy allows")
    return "passed: " + (", ".join(parts) or "no breaks")


def _family(check: Any) -> tuple[str, str, int | None] | None:
    """``(parent id, relation, seed)`` of a fork or subagent child: its header's ``parentSession``,
    a fork's ``seedLength`` (as attribution pairs its first request with the parent's)."""
    if check.parent_id is None:
        return None
    return (check.parent_id, "fork", check.seed_length) if check.seed_length else (check.parent_id, "subagent", None)


def _lineage(sessions: Sequence[Any]) -> list[dict[str, Any]]:
    """Each log's parent (``None`` for a root) and time span, from what ``check`` found (no file is read)."""
    first_at: dict[str, int] = {}
    for k, check in enumerate(sessions):
        if check.session_id is not None:
            first_at.setdefault(check.session_id, k)
    found: list[dict[str, Any]] = []
    for check in sessions:
        first, last = check.first_time, check.last_time
        related = _family(check)
        family = None
        if related is not None and related[0] != check.session_id:
            family = {"parent_id": related[0], "relation": related[1], "seed": related[2],
                      "parent": first_at.get(related[0])}
        found.append({"family": family, "first": first, "last": last})
    return found


def _order(sessions: Sequence[Any], lineage: Sequence[dict[str, Any]]) -> list[list[int]]:
    """The session list: ``[position, depth]`` pairs, failing-first, children under their parent."""
    count = len(sessions)
    parent = [(x["family"] or {}).get("parent") for x in lineage]
    children: list[list[int]] = [[] for _ in range(count)]
    for k, p in enumerate(parent):
        if p is not None:
            children[p].append(k)
    # Every log has at most one parent, so logs no root reaches lie on a cycle of parents (a
    # hostile header): the first of each such cycle becomes a root.
    reached = [False] * count
    roots: list[int] = []

    def reach(root: int) -> None:
        stack = [root]
        while stack:
            k = stack.pop()
            if not reached[k]:
                reached[k] = True
                stack.extend(children[k])

    for k in range(count):
        if parent[k] is None:
            roots.append(k)
            reach(k)
    for k in range(count):
        if not reached[k]:
            roots.append(k)
            reach(k)
    own = [0 if c.failed else 1 if _unexplained(c) else 2 for c in sessions]
    rank = own[:]
    ordered: list[int] = []  # parents before children
    seen = [False] * count
    stack = list(roots)
    while stack:
        k = stack.pop()
        if not seen[k]:
            seen[k] = True
            ordered.append(k)
            stack.extend(children[k])
    for k in reversed(ordered):  # a family ranks by its worst member
        for c in children[k]:
            if seen[c] and parent[c] == k:
                rank[k] = min(rank[k], rank[c])

    def key(k: int) -> tuple[int, float, str, int]:
        last = lineage[k]["last"]
        return rank[k], -(last if last is not None else float("-inf")), sessions[k].path, k

    out: list[list[int]] = []
    placed = [False] * count
    pending = [(k, 0) for k in sorted(roots, key=key, reverse=True)]
    while pending:
        k, depth = pending.pop()
        if placed[k]:
            continue
        placed[k] = True
        out.append([k, depth])
        pending.extend((c, depth + 1) for c in sorted(children[k], key=key, reverse=True) if not placed[c])
    return out


def _session_chunks(check: Any, prices: PriceBook, place: dict[str, Any]) -> Iterator[str]:
    messages, headers = _Messages(), _Table()
    history = _History(messages)
    transitions = {t.request: t for t in check.transitions}
    verdicts = {v.index: v for v in check.cache.verdicts} if check.cache is not None else {}
    rows: dict[int, Any] = {}
    for row in check.captures:
        if row.request is not None and not row.pairing.retry:
            rows.setdefault(row.request.index, row)
    requests: list[str] = []
    entries: list[Any] = []
    for position, r in enumerate(check.requests):
        verdict = verdicts.get(r.index)
        entry = price_entry(r, prices, verdict)
        entries.append(entry)
        requests.append(_script_json(_request(
            r, history.encode(position, r), headers=headers, transition=transitions.get(r.index), verdict=verdict,
            row=rows.get(r.index), entry=entry, findings=check.request_findings(r.index))))
    head = {"path": check.path, "session_id": check.session_id, "capture": check.capture_path, "error": check.error,
            "failed": check.failed, "findings": [f.to_json() for f in check.log_findings],
            "overview": _overview(check, check.requests, entries), "verdict": _verdict(check),
            "unexplained": _unexplained(check), "family": place["family"],
            "activity": [iso_utc(place["first"]), iso_utc(place["last"])], "mseq": messages.seqs}
    yield _script_json(head)[:-1] + ',"headers":[' + ",".join(headers.texts) + '],"messages":['
    for k, text in enumerate(messages.texts):
        yield ("," if k else "") + text
    yield '],"requests":['
    for k, text in enumerate(requests):
        yield ("," if k else "") + text
    yield "]}"


def _data_chunks(result: Any) -> Iterator[str]:
    prices = load_prices()
    lineage = _lineage(result.sessions)
    head = {"tool": f"dsh-audit {__version__}", "passed": result.passed, "counts": result.counts(),
            "policy": result.policy.source, "unattached": [f.to_json() for f in result.unattached],
            "order": _order(result.sessions, lineage)}
    yield _script_json(head)[:-1] + ',"sessions":['
    for k, check in enumerate(result.sessions):
        if k:
            yield ","
        yield from _session_chunks(check, prices, lineage[k])
    yield "]}"


def build_report_data(result: Any) -> dict[str, Any]:
    """The JSON value the page script renders (sessions, requests, findings; no markup)."""
    value: dict[str, Any] = json.loads("".join(_data_chunks(result)))
    return value


def iter_html(result: Any, *, title: str = "dsh-audit report") -> Iterator[str]:
    """The page of :func:`format_html` in pieces (each at most one session's message or request)."""
    safe_title = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    yield (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{safe_title}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        "<header id=\"top\"><h1 id=\"title\"></h1><div id=\"summary\"></div></header>\n"
        "<div id=\"search-bar\"><input id=\"search\" type=\"search\" placeholder=\"search sessions and messages\" "
        "aria-label=\"search the sessions and the requests' messages\" autocomplete=\"off\">"
        "<span id=\"search-count\" class=\"muted\"></span><span id=\"session-count\" class=\"muted\"></span></div>\n"
        "<nav id=\"sessions\" aria-label=\"sessions\" hidden></nav>\n"
        "<main><section id=\"session\"><h2 id=\"session-title\"></h2><div id=\"session-info\"></div>"
        "<div id=\"overview\"></div>"
        "<div id=\"legend\"></div><div id=\"pager\"></div><div id=\"timeline\" class=\"timeline\" role=\"list\"></div>"
        "<div id=\"log-findings\"></div></section>\n"
        "<section id=\"detail\" aria-live=\"polite\"><p class=\"muted\">Click a request or a break marker.</p>"
        "</section></main>\n"
        "<script type=\"application/json\" id=\"dsh-data\">"
    )
    yield from _data_chunks(result)
    yield f"</script>\n<script>{SCRIPT}</script>\n</body>\n</html>\n"


def format_html(result: Any, *, title: str = "dsh-audit report") -> str:
    """The self-contained HTML forensics page of a :class:`dsh_audit.gate.CheckResult`.

    ``title`` is the page title (escaped); the data is embedded as JSON and rendered by the
    inline script with ``textContent`` only. :func:`iter_html` gives the same page in pieces.
    """
    return "".join(iter_html(result, title=title))
