"""Compare two requests of one conversation and name what the log says happened between them.

The prompt is taken in provider prompt order: header segment (config, system, tools), then the
messages. The header difference comes from :func:`diff_headers`; the message relation from
per-message digests; the explanation from the evidence events logged between the two requests'
first chunks (spec §9.7 checklist):

* a surface replacement that shadowed a message of the previous prompt at the divergence:
  ``compaction`` (a ``compaction/summary`` checkpoint), ``prune`` (a ``compaction/prune`` and its
  ``tool/result`` rewrite) or ``plugin_replace`` (any other replace);
* a prompt-affecting header field: ``header_change``, or the boundary's own cause (``resume``,
  ``fork``, ``subagent``) when a new loop instance wrote the header;
* nothing logged: ``unexplained``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .._json import as_object
from ..jsjson import stringify
from ..replay import Request
from ..session import CONTEXT_TYPES, LogEvidence
from ._header_diff import diff_headers, prompt_segment, system_text
from ._model import Divergence, Evidence, FieldChange, Transition
from ._prefix import MessageDigests, common_prefix, lcp_bytes, messages_offset

__all__ = ["Pair", "compare"]

_BOUNDARY_CAUSES = ("resume", "fork", "subagent")
#: relation -> (cause, the record that logs the call's whole input) of auxiliary conversations
_AUX_INPUTS = {"title_call": ("title_input", "session/title-llm-request"),
               "search_call": ("search_input", "web/deepseek-search-llm-request")}


#: How much of a web search's query its evidence quotes.
_QUERY_CHARS = 200


def _aux_evidence(request: Request) -> dict[str, Any]:
    """What the evidence quotes of an auxiliary call's record: a title call's source messages, a
    web search's endpoint and query (the text of its last user message, clipped)."""
    if request.kind == "title":
        return {"messageSeqs": request.extra.get("messageSeqs")}
    if request.kind == "search":
        query = next((m.get("content") for m in reversed(request.messages)
                      if isinstance(m, dict) and m.get("role") == "user"), None)
        if not isinstance(query, str):  # content blocks: their text parts
            query = " ".join(b["text"] for b in query or () if isinstance(b, dict) and isinstance(b.get("text"), str))
        return {"endpoint": request.extra.get("endpoint"), "query": query[:_QUERY_CHARS]}
    return {}


@dataclass
class Pair:
    """What :func:`compare` needs besides the two requests.

    Attributes:
        relation: see :data:`dsh_audit.attribution.RELATIONS`.
        evidence: the evidence of the log holding ``cur``.
        low: evidence is read from seqs ``low < seq < cur.first_chunk_seq``.
        same_log: whether ``prev`` comes from the same log (then seqs identify messages).
        prev_session_id: the session of ``prev``.
        prefix_of_previous: the current prompt is expected to be a prefix of the previous one
            (a compaction call resends the head of the previous request).
        prev_header: header to compare instead of ``prev.header``.
        cur_header: header to compare instead of ``cur.header``.
        extra_evidence: evidence from elsewhere (the parent log's spawn record, the compaction
            call's own records).
        notes: remarks to carry into the transition.
    """

    relation: str
    evidence: LogEvidence
    low: int
    same_log: bool = True
    prev_session_id: str | None = None
    prefix_of_previous: bool = False
    prev_header: dict[str, Any] | None = None
    cur_header: dict[str, Any] | None = None
    extra_evidence: list[Evidence] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass
class _Replace:
    record: Evidence
    cause: str
    evidence: list[Evidence]
    positions: list[int]


def _classify_replace(record: Evidence, window: list[Evidence]) -> tuple[str, list[Evidence]]:
    given = record.data.get("sourceEventSeqs")
    sources = {s for s in given if isinstance(s, int)} if isinstance(given, list) else set()
    shadowed = record.data.get("shadowedSeqs") or []
    if record.type == "tool/result":
        for other in window:
            if other.type == "compaction/prune" and (other.seq == record.seq - 1 or
                                                     other.data.get("shadowedSeqs") == shadowed):
                return "prune", [other, record]
    summary = next((o for o in window if o.type == "compaction/summary" and o.seq in sources), None)
    source = as_object(record.data.get("source"))
    if summary is not None or (source.get("kind") == "plugin" and source.get("plugin") == "compact"):
        cid = summary.data.get("compactionId") if summary is not None else source.get("compactionId")
        group = [o for o in window if o.type.startswith("compaction/") and o.type != "compaction/prune"
                 and o.data.get("compactionId") == cid]
        return "compaction", sorted([*group, record], key=lambda e: e.seq)
    return "plugin_replace", [record]


def _positions(seqs: Sequence[int], wanted: list[int]) -> list[int]:
    """Where the ``wanted`` seqs are in ``seqs``, in order; a few are searched for at C speed (a
    prune shadows one node of a long history), many through one index."""
    if len(wanted) > 16:
        index = {seq: i for i, seq in enumerate(seqs)}
        return sorted(index[s] for s in wanted if s in index)
    found = []
    for seq in wanted:
        try:
            found.append(seqs.index(seq))
        except ValueError:
            pass
    return sorted(found)


def _replacements(window: list[Evidence], prev: Request) -> tuple[list[_Replace], list[_Replace]]:
    """Split the replacements in ``window`` into those touching ``prev``'s prompt and the rest."""
    records = [e for e in window if isinstance(e.data.get("surfaceOp"), dict)]
    if not records:
        return [], []
    touching: list[_Replace] = []
    other: list[_Replace] = []
    for record in records:
        cause, evidence = _classify_replace(record, window)
        shadowed = record.data.get("shadowedSeqs")
        positions = _positions(prev.message_seqs, [s for s in (shadowed if isinstance(shadowed, list) else [])
                                                   if isinstance(s, int)])
        (touching if positions else other).append(_Replace(record, cause, evidence, positions))
    return touching, other


def _header_offset(segment: str | None, prev_h: dict[str, Any], cur_h: dict[str, Any]) -> int | None:
    if segment == "system":
        return lcp_bytes(system_text(prev_h.get("system")).encode("utf-8", "surrogatepass"),
                         system_text(cur_h.get("system")).encode("utf-8", "surrogatepass"))
    if segment == "tools":
        return lcp_bytes(stringify(prev_h.get("tools") or []).encode("utf-8", "surrogatepass"),
                         stringify(cur_h.get("tools") or []).encode("utf-8", "surrogatepass"))
    return None


def _dedupe(items: list[str]) -> list[str]:
    out: list[str] = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def _boundary_evidence(pair: Pair, window: list[Evidence]) -> list[Evidence]:
    wanted = {"request/header", "session/end-seed"}
    if pair.relation == "retry":
        wanted |= {"llm/retry", "llm/retry-started", "assistant/chunk"}
    return [e for e in window if e.type in wanted]


def _detail(verdict: str, cause: str | None, relation: str, fields: tuple[FieldChange, ...], k: int,
            prev: Request, cur: Request) -> str:
    names = ", ".join(f.field for f in fields)
    if verdict == "extension":
        if relation == "compaction_call":
            return (f"the summary call resends the first {len(cur.messages)} of the previous request's "
                    f"{len(prev.messages)} messages (then DSH's fixed instruction, not logged): the prefix "
                    "reuse DSH intends")
        return f"appends {len(cur.messages) - len(prev.messages)} message(s) to the previous prompt"
    if verdict == "cache_safe_change":
        if cause == "retry":
            return "the same step retried with an identical prompt: expect a full cache hit"
        text = {"resume": "a new loop instance resumed the log", "fork": "the fork child continues the "
                "parent's prompt", "header_change": "the header changed"}.get(cause or "", "logged change")
        return f"{text}; " + (f"changed fields ({names}) are not prompt content" if names else
                              "the prompt prefix is intact")
    where = f"message {k}" if not any(f.prompt_affecting for f in fields) else prompt_segment(fields)
    return f"prompt changed at {where} ({cause}{': ' + names if names else ''})"


def _divergence(fields: tuple[FieldChange, ...], prev_h: dict[str, Any], cur_h: dict[str, Any], prev: Request,
                cur: Request, k: int, digests: MessageDigests) -> Divergence:
    segment = prompt_segment(fields)
    if segment is not None:
        return Divergence(segment, None, _header_offset(segment, prev_h, cur_h))
    return Divergence("messages", k, messages_offset(prev.messages, cur.messages, k, digests))


def compare(prev: Request, cur: Request, pair: Pair, digests: MessageDigests) -> Transition:
    """The :class:`Transition` from ``prev`` to ``cur``."""
    prev_h = pair.prev_header if pair.prev_header is not None else (prev.header or {})
    cur_h = pair.cur_header if pair.cur_header is not None else (cur.header or {})
    fields = diff_headers(prev_h, cur_h)
    prompt_fields = any(f.prompt_affecting for f in fields)
    k = common_prefix(prev.messages, cur.messages, digests,
                      prev_seqs=prev.message_seqs if pair.same_log else (),
                      cur_seqs=cur.message_seqs if pair.same_log else ())
    if pair.prefix_of_previous:
        # A compaction call resends the head of the previous prompt; its region may also hold the
        # reply to that request, so either prompt may be the longer: one must extend the other.
        messages_ok = k == min(len(cur.messages), len(prev.messages))
    else:
        messages_ok = k == len(prev.messages) and len(cur.messages) >= len(prev.messages)
    window = pair.evidence.between(pair.low, cur.first_chunk_seq)
    touching, other = _replacements(window, prev)
    notes = list(pair.notes)
    for rep in other:
        notes.append(f"{rep.cause} at seq {rep.record.seq} replaced seq(s) "
                     f"{rep.record.data.get('shadowedSeqs')} that request {prev.index} never sent: no cache effect")
    causes: list[str] = []
    evidence: list[Evidence] = []
    if prompt_fields:
        causes.append(pair.relation if pair.relation in _BOUNDARY_CAUSES else "header_change")
    if not messages_ok:
        explaining = [r for r in touching if r.positions[0] <= k <= r.positions[-1] + 1]
        if pair.relation == "subagent":
            causes.append("subagent")
        elif pair.relation in _AUX_INPUTS:
            # An auxiliary call's input is logged whole by its own record, which explains a new
            # one: DSH's all-prompts title provider sends every human prompt so far as one JSON
            # array, so each revision changes the input where the array grew (its README: cache
            # reuse "ends at the first changed JSON token"); each web search sends its own query.
            aux_cause, record = _AUX_INPUTS[pair.relation]
            causes.append(aux_cause)
            evidence.append(Evidence(cur.first_chunk_seq, record, _aux_evidence(cur)))
        elif explaining:
            causes.extend(r.cause for r in sorted(explaining, key=lambda r: r.positions[0]))
        else:
            causes.append("unexplained")
        for rep in explaining:
            evidence.extend(rep.evidence)
        causes.extend(r.cause for r in touching if r not in explaining)
    causes = _dedupe(causes)
    if causes:
        verdict, cause = "break", causes[0]
    elif pair.relation in ("retry", "resume", "fork"):
        verdict, cause = "cache_safe_change", pair.relation
    elif fields:
        verdict, cause = "cache_safe_change", "header_change"
    else:
        verdict, cause = "extension", None
    if verdict == "extension" and pair.relation != "compaction_call":  # an extension quotes no evidence
        evidence, extra = [], []
    else:
        for rep in touching:
            evidence.extend(e for e in rep.evidence if e not in evidence)
        evidence.extend(e for e in _boundary_evidence(pair, window) if e not in evidence)
        extra = list(pair.extra_evidence)
    divergence = None
    if verdict == "break":
        divergence = _divergence(fields, prev_h, cur_h, prev, cur, k, digests)
    context = [e for e in window if e.type in CONTEXT_TYPES] if verdict != "extension" else []
    context += [e for rep in other for e in rep.evidence if e not in context]
    return Transition(
        session_id=pair.evidence.session_id, request=cur.index, previous=prev.index,
        previous_session_id=pair.prev_session_id or pair.evidence.session_id, relation=pair.relation,
        verdict=verdict, cause=cause, other_causes=tuple(causes[1:]), fields=fields,
        evidence=tuple([*extra, *sorted(evidence, key=lambda e: e.seq)]),
        context=tuple(sorted(context, key=lambda e: e.seq)), first_divergence=divergence, common_messages=k,
        detail=_detail(verdict, cause, pair.relation, fields, k, prev, cur), notes=tuple(notes),
        kind=cur.kind, turn=cur.turn, step=cur.step, attempt=cur.attempt)
