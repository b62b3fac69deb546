"""The verdicts a redaction must keep, reduced to content-free JSON and digested.

``requests``: each request's place (index, kind, turn/step/attempt, its seqs, header reason,
message count, usage, finish kind). ``breaks``: each transition's relation, verdict, causes,
changed header field names (with a system prompt's diff hunk headers, a tool list's change counts), evidence seqs and first divergence (segment, message, offsets).
``cache``: each request's classification, cause and token figures (tokens estimated from UTF-8
bytes, which a redaction keeps). ``diff``: each capture row's verdict, first differing offset,
equivalence kinds and difference paths, the captures paired with the requests as ``diff`` and
``check`` pair them (by each request's route API, with the session's route configuration:
:func:`dsh_audit.session.route_apis`). Nothing in them is text from the log.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from ..attribution import Transition, attribute, attribute_sessions
from ..cache import cache_report
from ..capture import CapturedRequest, compare_capture
from ..errors import DshAuditError
from ..jsjson import stringify
from ..session import Session, route_apis, route_renderer

__all__ = ["CATEGORIES", "digest", "session_verdicts"]

#: The verdict categories a manifest records, in order.
CATEGORIES = ("requests", "breaks", "cache", "diff")


def _requests(session: Session) -> list[Any]:
    rows = []
    for r in session.requests:
        finish = r.finish.get("kind") if isinstance(r.finish, dict) else None
        rows.append([r.index, r.kind, r.turn, r.step, r.attempt, r.step_start_seq, r.first_chunk_seq, r.header_seq,
                     r.header_reason, r.message_count, r.usage, r.message_usage, finish])
    return rows


def _transitions(session: Session, parent: Session | None) -> tuple[Transition, ...] | DshAuditError:
    """Every transition attribution finds in ``session`` (a child compared with ``parent`` when given),
    or the error it refuses the session with: attributed once, for the two verdicts that read it
    (``breaks`` reports the transitions, ``cache`` takes them as its evidence)."""
    try:
        return (attribute(session) if parent is None else attribute_sessions([session, parent])[0]).transitions
    except DshAuditError as exc:
        return exc


def _breaks(transitions: tuple[Transition, ...] | DshAuditError) -> list[Any]:
    if isinstance(transitions, DshAuditError):
        return [["error", transitions.code]]
    return [[t.request, t.previous, t.previous_session_id, t.kind, t.turn, t.step, t.attempt, t.relation,
             t.verdict, t.cause, list(t.other_causes), [[f.field, f.prompt_affecting, _shape(f.detail)] for f in t.fields],
             list(t.evidence_seqs), t.first_divergence.to_json() if t.first_divergence else None,
             t.common_messages] for t in transitions]


def _shape(detail: Any) -> Any:
    """What of a changed header field's detail a verdict keeps: a system prompt's line diff as its
    length and hunk headers (``@@ -3 +3 @@``: line numbers and counts, no text), a tool list's change
    as how many tools were added, removed or changed and whether they were reordered.

    Example:
        >>> _shape({"diff": ["@@ -3 +3 @@", "-a", "+b"]}), _shape({"added": ["x"], "removed": [], "reordered": False,
        ...                                                          "schema_changed": ["y", "z"]})
        ([3, ['@@ -3 +3 @@']], [1, 0, False, 2])
    """
    if not isinstance(detail, dict):
        return None
    diff = detail.get("diff")
    if isinstance(diff, list):
        return [len(diff), [line for line in diff if isinstance(line, str) and line.startswith("@@")]]
    if "added" in detail:
        return [len(detail.get("added") or ()), len(detail.get("removed") or ()), detail.get("reordered"),
                len(detail.get("schema_changed") or ())]
    return None


def _cache(session: Session, parent: Session | None, transitions: tuple[Transition, ...] | DshAuditError) -> list[Any]:
    """The cache verdicts, with the transitions ``breaks`` reports as evidence. Alone, a session whose
    attribution fails (or an imported one) is accounted with none, as :func:`dsh_audit.cache.cache_report`
    accounts it by default; a child whose attribution with its parent fails has no cache verdicts."""
    try:
        if parent is None:
            given = None if session.imported or isinstance(transitions, DshAuditError) else list(transitions)
            report = cache_report(session, tokenizer="estimate", attribution=given)
        elif isinstance(transitions, DshAuditError):
            return [["error", transitions.code]]
        else:  # the child's first request continues the parent's, as attribution pairs them
            report = cache_report(session, tokenizer="estimate", attribution=transitions, parent=parent)
    except DshAuditError as exc:
        return [["error", exc.code]]
    return [[v.index, v.kind, v.classification, v.cause, v.prompt_tokens, v.counted_tokens, v.potential,
             v.expected_any, v.expected, v.actual, v.source_index, dict(v.lost)] for v in report.verdicts]


def _diff(session: Session, captures: Sequence[CapturedRequest], unrendered: list[str] | None) -> list[Any]:
    # paired as diff and check pair them: by each request's route API (the session's --routes configuration)
    rows = compare_capture(session.requests, captures, render=route_renderer([session]),
                           routes=route_apis([session]))
    out = []
    for row in rows:
        if row.verdict == "unrendered" and unrendered is not None:
            unrendered.append(row.said or "cannot render")
        diff = row.diff
        out.append([None if row.request is None else row.request.index,
                    None if row.capture is None else row.capture.position, row.kind, row.verdict,
                    None if diff is None else diff.first_offset,
                    None if diff is None else list(diff.equivalence),
                    None if diff is None else [[d.path, d.change] for d in diff.differences]])
    return out


def session_verdicts(session: Session, captures: Sequence[CapturedRequest] | None = None, *,
                     unrendered: list[str] | None = None, parent: Session | None = None) -> dict[str, list[Any]]:
    """The content-free verdicts of ``session`` (and of its capture, when given), by category.

    ``unrendered``: when given, the reason of each captured request that could not be rendered
    (verdict ``unrendered``: its body was never compared) is appended to it, in diff order.
    ``parent``: the parent session of a fork or subagent child (read watching for the child's id),
    with which ``breaks`` and ``cache`` compare the child's first request, as they do with the
    parent beside the child.
    """
    transitions = _transitions(session, parent)
    verdicts = {"requests": _requests(session), "breaks": _breaks(transitions),
                "cache": _cache(session, parent, transitions)}
    if captures is not None:
        verdicts["diff"] = _diff(session, captures, unrendered)
    return verdicts


def digest(rows: list[Any]) -> str:
    """``sha256:`` of the canonical JSON of ``rows``."""
    return "sha256:" + hashlib.sha256(stringify(rows).encode("utf-8", "surrogatepass")).hexdigest()
